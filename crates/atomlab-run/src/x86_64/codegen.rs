//! Thread code for x86-64: each lowered [`Instr`] of an X86 test (or of a C
//! test compiled by atomlab-model's C11→x86 mapping) becomes the one x86
//! instruction it stands for, as litmus7 emits it in its C harness's inline
//! assembly: a plain `MOV` for loads and stores, `MFENCE`, `XCHG`,
//! `LOCK XADD`/`CMPXCHG`/`ADD`… for the locked ones.
//!
//! The generated function follows the System V AMD64 calling convention
//! with one argument, the instance frame (see [`crate::frame`]), in RDI:
//!
//! ```text
//! prologue: push the callee-saved registers the thread uses
//!           load each used location's address and each used test register
//!           from the frame into its machine register
//! body:     the test's instructions, on those registers
//! epilogue: store the test registers back into the frame, pop, RET
//! ```
//!
//! Test registers and location addresses live in machine registers for the
//! whole body, so between the test's own memory accesses there are only
//! register operations, as in litmus7. RAX and R11 are scratch (RAX is
//! CMPXCHG's implicit operand); unused pool registers are extra scratch.
//! A backward branch first decrements the frame's loop budget and leaves
//! through the epilogue when it reaches zero, so every loop is bounded.
//!
//! The skeleton (allocation, frame, label loop, loop budget) is
//! `crate::generator`'s; this module is its x86-64 `Target`: the
//! registers, the instructions above (encoded by [`super::encode`], after
//! the Intel SDM) and the x86-only rules (spilling beyond the pool, the
//! address check for registers never written).

use std::collections::BTreeSet;

use atomlab_litmus::{BinOp, CasExpected, Expr, Fence, Instr, RmwOp, Thread, Value};

use super::encode::{Alu, Asm, Cond, Gpr, Rel32};
use crate::addresses::refuse_unless;
use crate::buffer::Label;
use crate::frame::FrameLayout;
use crate::generator::{self, Basic, Cas, Gen, Names, Rmw, StoreEx, Target};
use crate::Unencodable;

/// The x86-64 [`Target`].
pub(crate) struct X86;

type G<'a> = Gen<'a, X86>;

/// Registers test values may live in: every GPR but RSP, RDI (the frame),
/// RAX and R11 (scratch).
const POOL: [Gpr; 12] = [
    Gpr::RBX,
    Gpr::RBP,
    Gpr::R12,
    Gpr::R13,
    Gpr::R14,
    Gpr::R15,
    Gpr::RSI,
    Gpr::RDX,
    Gpr::RCX,
    Gpr::R8,
    Gpr::R9,
    Gpr::R10,
];

/// Callee-saved registers of the System V AMD64 ABI among [`POOL`].
const CALLEE_SAVED: [Gpr; 6] = [Gpr::RBX, Gpr::RBP, Gpr::R12, Gpr::R13, Gpr::R14, Gpr::R15];

const FRAME: Gpr = Gpr::RDI;

/// Registers the code writes.
fn written(th: &Thread) -> BTreeSet<usize> {
    let mut w = BTreeSet::new();
    for i in &th.code {
        match i {
            Instr::Load { dst: Some(r), .. }
            | Instr::Rmw { dst: Some(r), .. }
            | Instr::Cas {
                result: Some(r), ..
            }
            | Instr::StoreExclusive {
                status: Some(r), ..
            }
            | Instr::Assign { dst: r, .. }
            | Instr::Select { dst: r, .. } => {
                w.insert(*r);
            }
            _ => {}
        }
        if let Instr::Cas {
            expected: CasExpected::Reg(r),
            ..
        } = i
        {
            w.insert(*r);
        }
    }
    w
}

/// Every memory access must reach one of the instance's locations: its
/// address is a location, or a register that starts as a location's
/// address and that the thread never writes. Anything else could point
/// outside the instance (a crash, or a write into another's memory), so it
/// is refused before any code runs.
fn check_fixed_addresses(th: &Thread) -> Result<(), Unencodable> {
    let w = written(th);
    // The value the harness loads into the register (Thread::init_value),
    // not any of the values the test lists for it.
    let fixed = |r: usize| !w.contains(&r) && matches!(th.init_value(r), Value::Loc(_));
    let reaches = |_, a: &Expr| match a {
        Expr::Const(Value::Loc(_)) => true,
        Expr::Reg(r) => fixed(*r),
        _ => false,
    };
    refuse_unless(
        th,
        reaches,
        "a computed expression",
        "which is not always a location's address (only [loc] and registers initialised to a location and never written are run)",
    )
}

/// Generates the machine code of `th` for frames laid out as `layout`,
/// with `spacing` loads of the thread's own frame
/// after each memory access ([`crate::PrepareOptions::spacing`]).
pub(crate) fn thread_code_spaced(
    th: &Thread,
    layout: &FrameLayout,
    spacing: u32,
) -> Result<Vec<u8>, Unencodable> {
    generator::thread_code::<X86>(th, layout, spacing)
}

impl Target for X86 {
    type Reg = Gpr;
    type Fixup = Rel32;

    const NAMES: Names = Names::new("x86-64", "an x86 instruction", "C11->x86");
    const FRAME: Gpr = FRAME;
    /// The loop budget is counted down in the frame.
    const BUDGET: Option<Gpr> = None;
    const ZERO: Option<Gpr> = None;
    /// RAX (CMPXCHG's implicit operand) and R11.
    const SCRATCH: &'static [Gpr] = &[Gpr::RAX, Gpr::R11];
    const SPILLS: bool = true;

    fn pool() -> Vec<Gpr> {
        POOL.to_vec()
    }

    fn callee_saved(r: Gpr) -> bool {
        CALLEE_SAVED.contains(&r)
    }

    /// Every unused pool register: the prologue pushes the callee-saved
    /// ones among the scratch registers too.
    fn spare_scratch(_r: Gpr) -> bool {
        true
    }

    fn check_addresses(th: &Thread) -> Result<(), Unencodable> {
        check_fixed_addresses(th)
    }

    /// The callee-saved registers in use as test registers, locations or
    /// scratch, in [`CALLEE_SAVED`]'s order.
    fn saved(g: &G<'_>) -> Vec<Gpr> {
        let in_use: Vec<Gpr> = g.regs.iter().chain(&g.locs).flatten().copied().collect();
        CALLEE_SAVED
            .iter()
            .copied()
            .filter(|r| in_use.contains(r) || g.scratch.contains(r))
            .collect()
    }

    /// Saves by `PUSH`, restores by `POP` in reverse.
    fn emit(asm: &mut Asm, b: Basic<'_, Gpr>) {
        match b {
            Basic::Saved { regs, save: true } => regs.iter().for_each(|r| asm.push(*r)),
            Basic::Saved { regs, save: false } => regs.iter().rev().for_each(|r| asm.pop(*r)),
            Basic::Load { dst, base, off } => asm.load(dst, base, off),
            Basic::Store { src, base, off } => asm.store(base, off, src),
            Basic::Mov { dst, src } => asm.mov(dst, src),
            Basic::Imm { dst, imm } => asm.mov_imm(dst, imm),
            Basic::Ret => asm.ret(),
        }
    }

    /// `DEC QWORD [RDI+budget]; JE end`.
    fn count_down(asm: &mut Asm, layout: &FrameLayout, end: Label) {
        asm.dec_mem(FRAME, layout.budget_offset());
        asm.jcc(Cond::Eq, end);
    }

    fn branch(g: &mut G<'_>, cond: Option<&Expr>, label: Label) -> Result<(), Unencodable> {
        match cond {
            None => g.asm.jmp(label),
            Some(c) => {
                let r = g.operand(c, &[])?;
                g.asm.test(r, r);
                g.asm.jcc(Cond::Ne, label);
            }
        }
        Ok(())
    }

    fn eval_op(g: &mut G<'_>, e: &Expr, dst: Gpr, avoid: &[Gpr]) -> Result<(), Unencodable> {
        match e {
            Expr::Not(a) => {
                g.eval(a, dst, avoid)?;
                g.asm.test(dst, dst);
                g.asm.set(Cond::Eq, dst);
                Ok(())
            }
            Expr::Bin(op, a, b) => {
                g.eval(a, dst, avoid)?;
                let mut avoid2 = avoid.to_vec();
                avoid2.push(dst);
                // Shifts by a constant take an immediate.
                if let Some((left, n)) = g.const_shift(*op, b, "shift by")? {
                    if left {
                        g.asm.shl_imm(dst, n);
                    } else {
                        g.asm.shr_imm(dst, n);
                    }
                    return Ok(());
                }
                let src = g.operand(b, &avoid2)?;
                g.bin(*op, dst, src, &avoid2)
            }
            _ => g.eval(e, dst, avoid),
        }
    }

    /// A constant straight into a test register in a machine register;
    /// anything else evaluated aside (the expression may read `dst`),
    /// then written.
    fn assign(g: &mut G<'_>, dst: usize, expr: &Expr) -> Result<(), Unencodable> {
        match (expr, g.regs.get(dst).copied().flatten()) {
            (Expr::Const(Value::Int(i)), Some(d)) => g.asm.mov_imm(d, *i),
            _ => {
                let s = g.free(&[])?;
                g.eval(expr, s, &[])?;
                g.write(dst, s)?;
            }
        }
        Ok(())
    }

    fn store_exclusive(g: &mut G<'_>, _: &StoreEx<'_>) -> Result<(), Unencodable> {
        Err(g.err("a store-exclusive (an Arm instruction, not x86)"))
    }

    fn rmw(g: &mut G<'_>, rmw: &Rmw<'_>) -> Result<(), Unencodable> {
        let a = g.operand(rmw.addr, &[Gpr::RAX])?;
        let write_back = |g: &mut G<'_>| -> Result<(), Unencodable> {
            if let Some(d) = rmw.dst {
                g.write(d, Gpr::RAX)?;
            }
            Ok(())
        };
        match rmw.op {
            // RISC-V's amomax/amomin: x86 has no such locked instruction,
            // and a CAS loop would not be the test's one instruction.
            RmwOp::Max | RmwOp::Min | RmwOp::Umax | RmwOp::Umin => {
                return Err(g.err(format!(
                    "an atomic {:?}: x86-64 has no single instruction for it",
                    rmw.op
                )));
            }
            RmwOp::Xchg => {
                g.eval(rmw.operand, Gpr::RAX, &[a])?;
                g.asm.xchg_mem(a, 0, Gpr::RAX);
                write_back(g)?;
            }
            RmwOp::Add | RmwOp::Sub => {
                g.eval(rmw.operand, Gpr::RAX, &[a])?;
                if rmw.op == RmwOp::Sub {
                    g.asm.neg(Gpr::RAX);
                }
                g.asm.lock_xadd(a, 0, Gpr::RAX);
                write_back(g)?;
            }
            RmwOp::Or | RmwOp::And | RmwOp::Xor | RmwOp::Clr => {
                let alu = match rmw.op {
                    RmwOp::Or => Alu::Or,
                    RmwOp::Xor => Alu::Xor,
                    _ => Alu::And,
                };
                let mut o = g.operand(rmw.operand, &[Gpr::RAX, a])?;
                if rmw.op == RmwOp::Clr {
                    let t = g.free(&[Gpr::RAX, a, o])?;
                    g.asm.mov(t, o);
                    g.asm.not(t);
                    o = t;
                }
                if rmw.dst.is_none() {
                    // No old value wanted: one `LOCK op [a], o`.
                    g.asm.lock_alu_mem(alu, a, 0, o);
                    return Ok(());
                }
                // The old value is wanted: a CMPXCHG loop. It ends because
                // each failure means another thread wrote the location, and
                // a test's threads write finitely often.
                let t = g.free(&[Gpr::RAX, a, o])?;
                g.asm.load(Gpr::RAX, a, 0);
                let again = g.asm.label();
                g.asm.bind(again);
                g.asm.mov(t, Gpr::RAX);
                g.asm.alu(alu, t, o);
                g.asm.lock_cmpxchg(a, 0, t);
                g.asm.jcc(Cond::Ne, again);
                write_back(g)?;
            }
        }
        Ok(())
    }

    fn cas(g: &mut G<'_>, cas: &Cas<'_>) -> Result<(), Unencodable> {
        let a = g.operand(cas.addr, &[Gpr::RAX])?;
        let d = g.operand(cas.desired, &[Gpr::RAX, a])?;
        // C's `expected` pointer: read plainly before, written with the
        // old value after a failure.
        let mem = g.expected(cas.expected, Gpr::RAX, &[a, d])?;
        // Flags from CMPXCHG survive the MOVs below (MOV does not write them).
        g.asm.lock_cmpxchg(a, 0, d);
        if let CasExpected::Reg(r) = cas.expected {
            g.write(*r, Gpr::RAX)?;
        }
        if let Some(m) = mem {
            let ok = g.asm.label();
            g.asm.jcc(Cond::Eq, ok);
            g.asm.store(m, 0, Gpr::RAX);
            g.asm.bind(ok);
        }
        if let Some(res) = cas.result {
            // SETcc, MOVZX and the write-back leave the flags alone.
            let s = g.free(&[Gpr::RAX])?;
            g.asm.set(Cond::Eq, s);
            g.write(res, s)?;
        }
        Ok(())
    }

    fn instr(g: &mut G<'_>, ins: &Instr) -> Result<(), Unencodable> {
        match ins {
            Instr::Load { dst, addr, .. } => {
                let a = g.operand(addr, &[])?;
                match dst.and_then(|r| g.regs.get(r).copied().flatten()) {
                    Some(d) => g.asm.load(d, a, 0),
                    None => {
                        let d = g.free(&[a])?;
                        g.asm.load(d, a, 0);
                        if let Some(r) = dst {
                            g.write(*r, d)?;
                        }
                    }
                }
            }
            Instr::Store { addr, value, .. } => {
                let a = g.operand(addr, &[])?;
                match value {
                    Expr::Const(Value::Int(i)) if i32::try_from(*i).is_ok() => {
                        g.asm.store_imm(a, 0, *i as i32)
                    }
                    _ => {
                        let v = g.operand(value, &[a])?;
                        g.asm.store(a, 0, v);
                    }
                }
            }
            Instr::Select { dst, cond, a, b } => {
                let s = g.free(&[])?;
                g.eval(b, s, &[])?;
                let va = g.operand(a, &[s])?;
                let c = g.operand(cond, &[s, va])?;
                g.asm.test(c, c);
                g.asm.cmov(Cond::Ne, s, va);
                g.write(*dst, s)?;
            }
            _ => return Err(g.err("an instruction the x86-64 code generator does not know")),
        }
        Ok(())
    }

    fn fence(g: &mut G<'_>, f: &Fence) -> Result<bool, Unencodable> {
        match f {
            Fence::Mfence => g.asm.mfence(),
            Fence::Lfence => g.asm.lfence(),
            Fence::Sfence => g.asm.sfence(),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

impl G<'_> {
    fn bin(&mut self, op: BinOp, dst: Gpr, src: Gpr, avoid: &[Gpr]) -> Result<(), Unencodable> {
        let cmp = |g: &mut Self, c: Cond| {
            g.asm.alu(Alu::Cmp, dst, src);
            g.asm.set(c, dst);
        };
        match op {
            BinOp::Add => self.asm.alu(Alu::Add, dst, src),
            BinOp::Sub => self.asm.alu(Alu::Sub, dst, src),
            BinOp::Xor => self.asm.alu(Alu::Xor, dst, src),
            BinOp::And => self.asm.alu(Alu::And, dst, src),
            BinOp::Or => self.asm.alu(Alu::Or, dst, src),
            BinOp::Mul => self.asm.imul(dst, src),
            BinOp::AndNot => {
                let mut av = avoid.to_vec();
                av.push(src);
                let t = self.free(&av)?;
                self.asm.mov(t, src);
                self.asm.not(t);
                self.asm.alu(Alu::And, dst, t);
            }
            BinOp::Shl | BinOp::Shr => {
                return Err(
                    self.err("a shift by a register (only shifts by a constant are encoded)")
                )
            }
            BinOp::Eq
            | BinOp::Ne
            | BinOp::Lt
            | BinOp::Le
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::Ult
            | BinOp::Ule
            | BinOp::Ugt
            | BinOp::Uge => {
                if let Some(c) = Cond::of(op) {
                    cmp(self, c);
                }
            }
            BinOp::LogAnd | BinOp::LogOr => {
                let mut av = avoid.to_vec();
                av.push(src);
                let t = self.free(&av)?;
                self.asm.test(dst, dst);
                self.asm.set(Cond::Ne, dst);
                self.asm.test(src, src);
                self.asm.set(Cond::Ne, t);
                let alu = if op == BinOp::LogAnd {
                    Alu::And
                } else {
                    Alu::Or
                };
                self.asm.alu(alu, dst, t);
            }
        }
        Ok(())
    }
}
