//! Printing a [`Test`] back as a herd7 litmus file in its architecture's
//! assembly, the inverse of the parsers: the AArch64 printer
//! ([`crate::print_aarch64`]) beside asm.rs, the RISC-V one
//! ([`crate::print_riscv`]) beside riscv.rs. The format is herd7's, as the
//! herdtools7 manual documents it ("herd7: the litmus format"): a header
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

use std::collections::BTreeMap;

use crate::ast::*;

/// Why a test cannot be printed in its dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintError {
    /// The test's name.
    pub test: String,
    /// The dialect.
    pub arch: &'static str,
    /// The thread.
    pub thread: usize,
    /// The index of the instruction in the thread's lowered code.
    pub index: usize,
    /// The instruction, as the debugger prints it.
    pub instr: String,
    /// Why.
    pub message: String,
}

impl std::fmt::Display for PrintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.instr.is_empty() {
            write!(
                f,
                "{}: cannot print {}: {}",
                self.test, self.arch, self.message
            )
        } else {
            write!(
                f,
                "{}: cannot print P{} instruction {} ({}) as {}: {}",
                self.test, self.thread, self.index, self.instr, self.arch, self.message
            )
        }
    }
}

impl std::error::Error for PrintError {}

/// Prints `test` as a herd7 litmus file of its architecture (AArch64 or
/// RISCV); other architectures are an error.
pub fn print(test: &Test) -> Result<String, PrintError> {
    match test.arch {
        Arch::AArch64 => crate::print_aarch64::print(test),
        Arch::RiscV => crate::print_riscv::print(test),
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

/// A name herd7 reads as an identifier: letters, digits and `_`, not
/// starting with a digit (`lock+4` becomes `lock_4`).
pub(crate) fn identifier(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.insert(0, 'v');
    }
    out
}

/// Location names as identifiers, distinct.
pub(crate) fn location_names(test: &Test) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for l in &test.locations {
        let base = identifier(l);
        let mut n = base.clone();
        let mut k = 1;
        while names.contains(&n) {
            n = format!("{base}_{k}");
            k += 1;
        }
        names.push(n);
    }
    names
}

/// One thread's printed code and what it needs.
pub(crate) struct Printed {
    /// The instruction lines (labels as `L0_3:` lines).
    pub lines: Vec<String>,
    /// Initial register values, by printed register name.
    pub init: Vec<(String, Value)>,
    /// The printed name of each of the thread's registers.
    pub names: Vec<String>,
}

/// What a dialect's thread printer gets: the thread, and a way to fail.
pub(crate) struct Ctx<'t> {
    pub test: &'t Test,
    pub thread: usize,
    pub index: usize,
    pub arch: &'static str,
}

impl Ctx<'_> {
    /// The error for the current instruction.
    pub(crate) fn err(&self, message: impl Into<String>) -> PrintError {
        let code = &self.test.threads[self.thread].code;
        PrintError {
            test: self.test.name.clone(),
            arch: self.arch,
            thread: self.thread,
            index: self.index,
            instr: code
                .get(self.index)
                .map_or_else(String::new, |i| format!("{i:?}")),
            message: message.into(),
        }
    }
}

/// The locations a thread's code names as constants, in order of first use.
pub(crate) fn constant_locations(code: &[Instr]) -> Vec<LocId> {
    fn walk(e: &Expr, out: &mut Vec<LocId>) {
        match e {
            Expr::Const(Value::Loc(l)) => {
                if !out.contains(l) {
                    out.push(*l)
                }
            }
            Expr::Const(_) | Expr::Reg(_) => {}
            Expr::Not(a) => walk(a, out),
            Expr::Bin(_, a, b) => {
                walk(a, out);
                walk(b, out);
            }
        }
    }
    let mut out = Vec::new();
    for i in code {
        match i {
            Instr::Load { addr, .. } | Instr::SyncSrcu { addr } => walk(addr, &mut out),
            Instr::Store { addr, value, .. } | Instr::StoreExclusive { addr, value, .. } => {
                walk(addr, &mut out);
                walk(value, &mut out);
            }
            Instr::Rmw { addr, operand, .. } => {
                walk(addr, &mut out);
                walk(operand, &mut out);
            }
            Instr::Cas {
                addr,
                expected,
                desired,
                ..
            } => {
                walk(addr, &mut out);
                if let CasExpected::Value(e) | CasExpected::Mem(e) = expected {
                    walk(e, &mut out);
                }
                walk(desired, &mut out);
            }
            Instr::Assign { expr, .. } => walk(expr, &mut out),
            Instr::Select { cond, a, b, .. } => {
                walk(cond, &mut out);
                walk(a, &mut out);
                walk(b, &mut out);
            }
            Instr::Branch { cond: Some(c), .. } => walk(c, &mut out),
            Instr::Branch { cond: None, .. } | Instr::Fence(_) => {}
        }
    }
    out
}

/// The branch targets of a thread's code, each with its label
/// (`L{thread}_{index}`: herd7 wants labels distinct across threads).
pub(crate) fn labels(thread: usize, code: &[Instr]) -> BTreeMap<usize, String> {
    code.iter()
        .filter_map(|i| match i {
            Instr::Branch { target, .. } => Some((*target, format!("L{thread}_{target}"))),
            _ => None,
        })
        .collect()
}

/// The whole file from the threads' printed code.
pub(crate) fn assemble(test: &Test, threads: Vec<Printed>) -> String {
    let locs = location_names(test);
    // The condition, filter and values in the printed names: the test
    // with its registers and locations renamed prints them as herd7 does.
    let mut named = test.clone();
    named.locations = locs.clone();
    for (t, p) in named.threads.iter_mut().zip(&threads) {
        t.regs = p.names.clone();
    }
    let value = |v: Value| named.value_name(v);
    let mut out = String::new();
    out.push_str(&format!(
        "{} {}\n",
        test.arch.name(),
        identifier(&test.name)
    ));
    out.push_str(&format!(
        "\"{}\"\n",
        test.file.replace(['"', '\n'], " ").trim()
    ));
    let mut init: Vec<String> = Vec::new();
    let initial: BTreeMap<LocId, Value> = test.init.iter().copied().collect();
    for (l, name) in locs.iter().enumerate() {
        init.push(format!(
            "{name}={}",
            value(initial.get(&l).copied().unwrap_or(Value::Int(0)))
        ));
    }
    for (t, p) in threads.iter().enumerate() {
        for (r, v) in &p.init {
            init.push(format!("{t}:{r}={}", value(*v)));
        }
    }
    out.push_str("{\n");
    for i in &init {
        out.push_str(&format!(" {i};\n"));
    }
    out.push_str("}\n");
    let rows = threads.iter().map(|p| p.lines.len()).max().unwrap_or(0);
    let mut cols: Vec<Vec<String>> = threads
        .iter()
        .enumerate()
        .map(|(t, p)| {
            let mut c = vec![format!("P{t}")];
            c.extend(p.lines.iter().cloned());
            c.resize(rows + 1, String::new());
            c
        })
        .collect();
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| c.iter().map(String::len).max().unwrap_or(0))
        .collect();
    for row in 0..=rows {
        let cells: Vec<String> = cols
            .iter_mut()
            .zip(&widths)
            .map(|(c, w)| format!(" {:w$} ", std::mem::take(&mut c[row]), w = *w))
            .collect();
        out.push_str(&cells.join("|"));
        out.push_str(";\n");
    }
    if let Some(f) = &test.filter {
        out.push_str(&format!("filter {}\n", named.prop_text(f)));
    }
    out.push_str(&named.condition_text());
    out.push('\n');
    out
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
