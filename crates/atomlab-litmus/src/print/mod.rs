//! Printing a [`Test`] back as a herd7 litmus file in its architecture's
//! assembly, the inverse of the parsers: one printer per dialect
//! (`print/aarch64.rs`, `print/riscv.rs`) over the pieces they share
//! (`print/frame.rs`). The format is herd7's, as the herdtools7 manual
//! documents it ("herd7: the litmus format"): a header
//! line `AArch64 NAME`, a doc string, the initial state (`{ x=0;
//! 0:X1=x; }`), one column of instructions per thread, then `filter` and
//! the final condition.
//!
//! A test's thread code is lowered ([`Instr`]): its expressions are
//! compiled back into instructions over scratch registers, so that what
//! is printed is what the parser of the same dialect reads back as an
//! equivalent program (the same accesses, annotations, values and
//! dependencies through registers), and what herd7 reads as that program
//! too. The printed subset is the one both read: `atomlab check` parses
//! every file printed here (tests in this module and in atomlab's
//! verify_litmus.rs), herd7 7.58 the lock and queue ones recorded under
//! atomlab's tests/fixtures/verify_litmus.
//!
//! What cannot be printed (a C test, a multiplication, an operation the
//! ISA lacks, more registers than the ISA has) is a [`PrintError`] naming
//! the thread and instruction, never a different test.

mod aarch64;
mod frame;
mod riscv;

use crate::ast::*;

pub use frame::PrintError;

/// Prints `test` as a herd7 litmus file of its architecture (AArch64 or
/// RISCV); other architectures are an error.
pub fn print(test: &Test) -> Result<String, PrintError> {
    match test.arch {
        Arch::AArch64 => aarch64::print(test),
        Arch::RiscV => riscv::print(test),
        other => Err(PrintError {
            test: test.name.clone(),
            arch: other.name(),
            thread: 0,
            index: 0,
            instr: String::new(),
            message: "only AArch64 and RISCV tests are printed (herd7's X86_64 and C printers are not written yet)".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::*;
    use crate::parse;

    /// The memory events of a test's threads, in order, with their
    /// annotations and location names: what printing must keep.
    fn accesses(t: &Test) -> Vec<Vec<String>> {
        let loc = |e: &Expr, t: &Test, th: &Thread| -> String {
            // The location an address names: a constant, a register
            // holding one from the start, or either plus a dependency.
            fn find(e: &Expr, t: &Test, th: &Thread) -> Option<String> {
                match e {
                    Expr::Const(Value::Loc(l)) => Some(t.locations[*l].clone()),
                    Expr::Reg(r) => match th.init_value(*r) {
                        Value::Loc(l) => Some(t.locations[l].clone()),
                        _ => None,
                    },
                    Expr::Bin(BinOp::Add, a, b) => find(a, t, th).or_else(|| find(b, t, th)),
                    _ => None,
                }
            }
            find(e, t, th).unwrap_or_else(|| "?".into())
        };
        t.threads
            .iter()
            .map(|th| {
                th.code
                    .iter()
                    .filter_map(|i| match i {
                        Instr::Load { addr, annot, .. } => Some(format!(
                            "R {} acq={} q={} x={}",
                            loc(addr, t, th),
                            annot.acquire,
                            annot.acquire_pc,
                            annot.exclusive
                        )),
                        Instr::Store { addr, annot, .. } => {
                            Some(format!("W {} rel={}", loc(addr, t, th), annot.release))
                        }
                        Instr::StoreExclusive { addr, annot, .. } => {
                            Some(format!("WX {} rel={}", loc(addr, t, th), annot.release))
                        }
                        Instr::Rmw {
                            addr,
                            op,
                            read,
                            write,
                            ..
                        } => Some(format!(
                            "RMW {op:?} {} {} {}",
                            loc(addr, t, th),
                            read.acquire,
                            write.release
                        )),
                        Instr::Cas {
                            addr, read, write, ..
                        } => Some(format!(
                            "CAS {} {} {}",
                            loc(addr, t, th),
                            read.acquire,
                            write.release
                        )),
                        Instr::Fence(f) => Some(f.to_string()),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }

    fn round_trip(src: &str) -> String {
        let t = parse("in.litmus", src).expect("the source parses");
        let printed = super::print(&t).expect("the test prints");
        let back = parse("out.litmus", &printed)
            .unwrap_or_else(|e| panic!("the printed test parses back: {e}\n{printed}"));
        assert_eq!(accesses(&t), accesses(&back), "{printed}");
        assert_eq!(t.condition_text(), back.condition_text(), "{printed}");
        printed
    }

    #[test]
    fn aarch64_accesses_barriers_and_branches_survive_printing() {
        let p = round_trip(
            "AArch64 T\n{ x=0; y=0; 0:X1=x; 0:X3=y; 1:X1=y; 1:X3=x; }\n\
             P0                | P1 ;\n\
             MOV W0,#1         | LDAR W0,[X1] ;\n\
             STR W0,[X1]       | EOR W4,W0,W0 ;\n\
             DMB ISHST         | LDR W2,[X3,X4] ;\n\
             L0:               | CBNZ W0,L1 ;\n\
             LDAXR W5,[X3]     | LDAPR W6,[X3] ;\n\
             STLXR W6,W0,[X3]  | L1: ;\n\
             CBNZ W6,L9        | SWPAL W0,W7,[X1] ;\n\
             L9:               | CASA X8,X0,[X1] ;\n\
             LDADDL W0,W9,[X1] | DMB ISHLD ;\n\
             CMP W9,#2         | ;\n\
             B.HI L0           | ;\n\
             exists (1:X0=1 /\\ 1:X2=0)\n",
        );
        assert!(p.contains("LDR X2,[X7,X4]") || p.contains(",X4]"), "{p}");
        assert!(p.contains("B.HI L0_"), "{p}");
    }

    #[test]
    fn riscv_accesses_fences_and_amos_survive_printing() {
        let p = round_trip(
            "RISCV T\n{ x=0; y=0; 0:x5=x; 0:x6=y; 1:x5=y; 1:x6=x; }\n\
             P0              | P1 ;\n\
             li x7,1         | lw x7,0(x5) ;\n\
             sw x7,0(x5)     | xor x8,x7,x7 ;\n\
             fence rw,w      | add x9,x6,x8 ;\n\
             sw x7,0(x6)     | lw x10,0(x9) ;\n\
             lr.w.aq x11,0(x5) | amoswap.w.aqrl x12,x7,0(x6) ;\n\
             sc.w.rl x13,x7,0(x5) | fence.tso ;\n\
             bne x13,x0,L0   | ;\n\
             L0:             | ;\n\
             exists (1:x7=1 /\\ 1:x10=0)\n",
        );
        assert!(p.contains("lr.w.aq"), "{p}");
    }

    #[test]
    fn a_location_chosen_by_an_index_prints_as_a_csel_chain_herd7_reads() {
        // What the lifter makes of a ring's slot: `(X1 & 0) + (X1 == 1) * y
        // + (X1 == 2) * z`, a dependency on X1 and one of two locations.
        let mut t = parse(
            "in.litmus",
            "AArch64 T\n{ y=0; z=0; 0:X1=1; }\n P0 ;\n MOV X0,#1 ;\nexists (y=1)\n",
        )
        .unwrap();
        let loc = |n: &str| t.locations.iter().position(|l| l == n).unwrap();
        let (y, z) = (loc("y"), loc("z"));
        let pick = |v: i64, l: usize| {
            Expr::bin(
                BinOp::Mul,
                Expr::bin(BinOp::Eq, Expr::Reg(1), Expr::int(v)),
                Expr::Const(Value::Loc(l)),
            )
        };
        let dep = Expr::bin(BinOp::And, Expr::Reg(1), Expr::int(0));
        let addr = Expr::bin(
            BinOp::Add,
            Expr::bin(BinOp::Add, dep, pick(1, y)),
            pick(2, z),
        );
        t.threads[0].code.push(Instr::Store {
            addr,
            value: Expr::Reg(0),
            annot: Annot::default(),
        });
        let p = super::print(&t).unwrap();
        // herd7 refuses AND on a location and an address that may be 0.
        assert!(p.contains("EOR "), "{p}");
        assert!(!p.contains(",#0 "), "{p}");
        let csel: Vec<&str> = p.lines().filter(|l| l.contains("CSEL ")).collect();
        assert_eq!(csel.len(), 1, "{p}");
        assert!(!csel[0].contains("XZR"), "{p}");
        assert!(!p.contains("MUL"), "{p}");
        let back = parse("out.litmus", &p).unwrap_or_else(|e| panic!("{e}\n{p}"));
        assert!(back.threads[0].code.len() > 1, "{p}");
    }

    #[test]
    fn a_c_test_is_refused_by_name() {
        let t = parse(
            "c.litmus",
            "C T\n{}\nP0 (atomic_int* x) { atomic_store(x, 1); }\nexists (x=1)\n",
        )
        .unwrap();
        let e = super::print(&t).unwrap_err();
        assert!(e.to_string().contains("only AArch64 and RISCV"), "{e}");
    }
}
