//! Thread code for AArch64: each lowered [`Instr`] of an AArch64 test (or
//! of a C test compiled by atomlab-model's C11→AArch64 mapping) becomes
//! the A64 instruction it stands for, the access kind read from its
//! [`Annot`]: `LDR`/`LDAR`/`LDAPR`/`LDXR`/`LDAXR`, `STR`/`STLR`,
//! `STXR`/`STLXR`, the LSE `SWP`/`LD<op>`/`CAS` with `A` and `L` as
//! annotated, `DMB`/`DSB` with the test's option, `ISB`.
//!
//! The generated function follows the AAPCS64 with one argument, the
//! instance frame (see [`crate::frame`]), in X0:
//!
//! ```text
//! prologue: save the callee-saved registers used (X19-X28) on the stack,
//!           load each used location's address, each used test register
//!           and the loop budget from the frame into machine registers
//! body:     the test's instructions, on those registers
//! epilogue: store the test registers and the budget back, restore, RET
//! ```
//!
//! Nothing but the test's own accesses touches memory in the body, so no
//! other access sits between a load-exclusive and its store-exclusive. The
//! loop budget lives in X1: a backward branch first does `SUBS X1, X1, #1;
//! B.EQ end`, so every loop is bounded.
//!
//! Where the lowered form lost the exact spelling, the code keeps what the
//! models judge: accesses are 64-bit (atomlab-litmus reads W registers as
//! X, and models no mixed sizes); `[Xn, Wm, SXTW]` becomes `[Xn, Xm]` (the
//! same address dependency); `CMP` + `B.cond` is kept as a copy of the two
//! operands and a `CMP` + `B.cond` at the branch (the same control
//! dependency).
//!
//! The skeleton (allocation, frame, label loop, loop budget) is
//! `crate::generator`'s; this module is its AArch64 `Target`: the
//! registers and the instructions above, encoded by [`super::encode`]
//! after the Arm ARM.

use atomlab_litmus::{Barrier, BinOp, CasExpected, Expr, Fence, Instr, RmwOp, Thread, Value};

use super::encode::{barrier_crm, Asm, AtomicOp, Branch, Cond, Op, Size, X};
use crate::buffer::Label;
use crate::frame::FrameLayout;
use crate::generator::{self, stack_area, Basic, Cas, Gen, Names, Rmw, StoreEx, Target};
use crate::Unencodable;

/// The AArch64 [`Target`].
pub(crate) struct A64;

type G<'a> = Gen<'a, A64>;

/// X1: the loop budget.
const BUDGET: X = X(1);

/// The architecture feature an instruction needs beyond Armv8.0, by its
/// Arm ARM name and the name Linux's hwcaps (and atomlab-core's machine
/// fingerprint) give it: FEAT_LSE for the atomics and CAS, FEAT_LRCPC for
/// LDAPR.
pub(crate) fn feature_needed(i: &Instr) -> Option<(&'static str, &'static str)> {
    match i {
        Instr::Rmw { .. } | Instr::Cas { .. } => Some(("FEAT_LSE", "lse")),
        Instr::Load { annot, .. } if annot.acquire_pc && !annot.exclusive => {
            Some(("FEAT_LRCPC", "rcpc"))
        }
        _ => None,
    }
}

/// The LSE instruction for a read-modify-write, where there is one: not
/// for `old - v` (LDADD of `-v`) and `old & v` (LDCLR of `!v`), what
/// compilers emit for fetch_sub and fetch_and with LSE.
fn lse(op: RmwOp) -> Option<AtomicOp> {
    Some(match op {
        RmwOp::Xchg => AtomicOp::Swp,
        RmwOp::Add => AtomicOp::Add,
        RmwOp::Or => AtomicOp::Set,
        RmwOp::Xor => AtomicOp::Eor,
        RmwOp::Clr => AtomicOp::Clr,
        RmwOp::Max => AtomicOp::Smax,
        RmwOp::Min => AtomicOp::Smin,
        RmwOp::Umax => AtomicOp::Umax,
        RmwOp::Umin => AtomicOp::Umin,
        RmwOp::Sub | RmwOp::And => return None,
    })
}

/// Generates the machine code of `th` for frames laid out as `layout`,
/// with `spacing` loads of the thread's own frame
/// after each memory access ([`crate::PrepareOptions::spacing`]).
pub(crate) fn thread_code_spaced(
    th: &Thread,
    layout: &FrameLayout,
    spacing: u32,
) -> Result<Vec<u8>, Unencodable> {
    generator::thread_code::<A64>(th, layout, spacing)
}

/// `SUB`/`ADD SP, SP, #n` for the saved-register area.
fn grow(asm: &mut Asm, bytes: i64) {
    if bytes < 0 {
        asm.sub_imm(X::SP, X::SP, bytes.unsigned_abs() as u32);
    } else {
        asm.add_imm(X::SP, X::SP, bytes as u32);
    }
}

impl Target for A64 {
    type Reg = X;
    type Fixup = Branch;

    const NAMES: Names = Names::new("AArch64", "an AArch64 instruction", "C11->AArch64");
    const FRAME: X = X(0);
    const BUDGET: Option<X> = Some(BUDGET);
    const ZERO: Option<X> = Some(X::ZR);
    /// Intra-procedure-call scratch registers (nothing is called).
    const SCRATCH: &'static [X] = &[X(16), X(17)];
    /// LDR's unsigned offset is 12 bits, scaled by 8.
    const FRAME_REACH: Option<(i32, &'static str)> =
        Some((8 * 4095, "a frame too large for LDR's offset"));

    /// X2-X15, then X19-X28 (callee-saved, saved by the prologue when
    /// used); X16 and X17 are scratch, X18 is the platform's.
    fn pool() -> Vec<X> {
        (2..=15).chain(19..=28).map(X).collect()
    }

    fn callee_saved(r: X) -> bool {
        (19..=28).contains(&r.0)
    }
    fn emit(asm: &mut Asm, b: Basic<'_, X>) {
        match b {
            Basic::Saved { regs, save } => stack_area::<A64>(asm, (regs, save), X::SP, grow),
            Basic::Load { dst, base, off } => {
                asm.ldr_imm(Size::D, dst, base, off as u32);
            }
            Basic::Store { src, base, off } => {
                asm.str_imm(Size::D, src, base, off as u32);
            }
            Basic::Mov { dst, src } => asm.mov(dst, src),
            Basic::Imm { dst, imm } => asm.mov_imm(dst, imm),
            Basic::Ret => asm.ret(),
        }
    }

    /// `SUBS X1, X1, #1; B.EQ end`.
    fn count_down(asm: &mut Asm, _layout: &FrameLayout, end: Label) {
        asm.subs_imm(BUDGET, BUDGET, 1);
        asm.b_cond(Cond::Eq, end);
    }

    fn branch(g: &mut G<'_>, cond: Option<&Expr>, label: Label) -> Result<(), Unencodable> {
        match cond {
            None => g.asm.b(label),
            // CBZ / CBNZ.
            Some(Expr::Bin(op @ (BinOp::Eq | BinOp::Ne), x, z)) if **z == Expr::int(0) => {
                let r = g.operand(x, &[])?;
                if *op == BinOp::Eq {
                    g.asm.cbz(r, label);
                } else {
                    g.asm.cbnz(r, label);
                }
            }
            Some(c) => match g.compare(c, &[])? {
                Some(cc) => g.asm.b_cond(cc, label),
                None => {
                    let r = g.operand(c, &[])?;
                    g.asm.cbnz(r, label);
                }
            },
        }
        Ok(())
    }

    fn eval_op(g: &mut G<'_>, e: &Expr, dst: X, avoid: &[X]) -> Result<(), Unencodable> {
        match e {
            Expr::Not(a) => {
                let x = g.operand(a, avoid)?;
                g.asm.subs_imm(X::ZR, x, 0);
                g.asm.cset(dst, Cond::Eq);
            }
            Expr::Bin(op, a, b) => {
                let (op, a, b): (BinOp, &Expr, &Expr) = (*op, a, b);
                let mut av = avoid.to_vec();
                av.push(dst);
                if let Some(c) = g.compare_ops(op, a, b, avoid)? {
                    g.asm.cset(dst, c);
                    return Ok(());
                }
                // Shifts by a constant take an immediate.
                if g.shift_by_constant((op, a, b), dst, avoid, [Asm::lsl_imm, Asm::lsr_imm])? {
                    return Ok(());
                }
                if let BinOp::LogAnd | BinOp::LogOr = op {
                    // Each side compared with zero (CSET NE), then AND/ORR.
                    let x = g.operand(a, avoid)?;
                    g.asm.subs_imm(X::ZR, x, 0);
                    g.asm.cset(dst, Cond::Ne);
                    let t = g.free(&av)?;
                    let mut av2 = av.clone();
                    av2.push(t);
                    let y = g.operand(b, &av2)?;
                    g.asm.subs_imm(X::ZR, y, 0);
                    g.asm.cset(t, Cond::Ne);
                    let o = if op == BinOp::LogAnd {
                        Op::And
                    } else {
                        Op::Orr
                    };
                    g.asm.op(o, dst, dst, t);
                    return Ok(());
                }
                let x = g.operand(a, avoid)?;
                let mut av2 = av.clone();
                av2.push(x);
                let y = g.operand(b, &av2)?;
                let o = match op {
                    BinOp::Add => Op::Add,
                    BinOp::Sub => Op::Sub,
                    BinOp::Mul => Op::Mul,
                    BinOp::Xor => Op::Eor,
                    BinOp::And => Op::And,
                    BinOp::Or => Op::Orr,
                    BinOp::AndNot => Op::Bic,
                    BinOp::Shl => Op::Lslv,
                    BinOp::Shr => Op::Lsrv,
                    _ => return Err(g.err(format!("the operator {op:?}"))),
                };
                g.asm.op(o, dst, x, y);
            }
            _ => g.eval(e, dst, avoid)?,
        }
        Ok(())
    }

    fn store_exclusive(g: &mut G<'_>, sx: &StoreEx<'_>) -> Result<(), Unencodable> {
        let a = g.address_reg(sx.addr, &[])?;
        let v = g.operand(sx.value, &[a])?;
        let s = g.dst(sx.status)?;
        if s != X::ZR && (s == a || s == v) {
            return Err(g.err(
                "a store-exclusive whose status register is also its value or address (CONSTRAINED UNPREDICTABLE in the Arm ARM)",
            ));
        }
        g.asm.stxr(Size::D, sx.annot.release, s, v, a);
        Ok(())
    }

    fn rmw(g: &mut G<'_>, rmw: &Rmw<'_>) -> Result<(), Unencodable> {
        let a = g.address_reg(rmw.addr, &[])?;
        let (atomic, s) = g.single_atomic(rmw, a, lse, [Asm::neg, Asm::mvn])?;
        let d = g.dst(rmw.dst)?;
        let (acquire, release) = (rmw.read.acquire, rmw.write.release);
        g.asm.atomic(Size::D, atomic, acquire, release, s, d, a);
        Ok(())
    }

    fn cas(g: &mut G<'_>, cas: &Cas<'_>) -> Result<(), Unencodable> {
        let a = g.address_reg(cas.addr, &[])?;
        let d = g.operand(cas.desired, &[a])?;
        match cas.expected {
            // Arm's CAS Rs, Rt, [Xn] as written (Rs = XZR for `CAS WZR`).
            CasExpected::Reg(r) if cas.result.is_none() => {
                let s = g.reg(*r)?;
                g.asm
                    .cas(Size::D, cas.read.acquire, cas.write.release, s, d, a);
            }
            CasExpected::Value(Expr::Const(Value::Int(0))) if cas.result.is_none() => {
                g.asm
                    .cas(Size::D, cas.read.acquire, cas.write.release, X::ZR, d, a);
            }
            _ => {
                // C's compare-exchange: the expected value into a scratch
                // register (CAS overwrites it with the old value), kept in
                // another to compare after.
                let old = g.free(&[a, d])?;
                let want = g.free(&[a, d, old])?;
                let mem = g.expected(cas.expected, want, &[a, d, old])?;
                g.asm.mov(old, want);
                g.asm
                    .cas(Size::D, cas.read.acquire, cas.write.release, old, d, a);
                if let CasExpected::Reg(r) = cas.expected {
                    let r = g.reg(*r)?;
                    g.asm.mov(r, old);
                }
                g.asm.cmp(old, want);
                if let Some(res) = cas.result {
                    let r = g.reg(res)?;
                    g.asm.cset(r, Cond::Eq);
                }
                if let Some(m) = mem {
                    // CSET leaves the flags alone.
                    let ok = g.asm.label();
                    g.asm.b_cond(Cond::Eq, ok);
                    g.asm.str_imm(Size::D, old, m, 0);
                    g.asm.bind(ok);
                }
            }
        }
        Ok(())
    }

    fn instr(g: &mut G<'_>, ins: &Instr) -> Result<(), Unencodable> {
        match ins {
            Instr::Load { dst, addr, annot } => {
                let d = g.dst(*dst)?;
                if annot.exclusive {
                    let a = g.address_reg(addr, &[])?;
                    g.asm.ldxr(Size::D, annot.acquire, d, a);
                } else if annot.acquire {
                    let a = g.address_reg(addr, &[])?;
                    g.asm.ldar(Size::D, d, a);
                } else if annot.acquire_pc {
                    let a = g.address_reg(addr, &[])?;
                    g.asm.ldapr(Size::D, d, a);
                } else {
                    match g.address(addr, &[])? {
                        (b, None) => {
                            g.asm.ldr_imm(Size::D, d, b, 0);
                        }
                        (b, Some(i)) => g.asm.ldr_reg(Size::D, d, b, i),
                    }
                }
            }
            Instr::Store { addr, value, annot } => {
                if annot.exclusive {
                    return Err(g.err("an exclusive store without a status register"));
                }
                if annot.release {
                    let a = g.address_reg(addr, &[])?;
                    let v = g.operand(value, &[a])?;
                    g.asm.stlr(Size::D, v, a);
                } else {
                    let (b, i) = g.address(addr, &[])?;
                    let mut av = vec![b];
                    av.extend(i);
                    let v = g.operand(value, &av)?;
                    match i {
                        None => {
                            g.asm.str_imm(Size::D, v, b, 0);
                        }
                        Some(i) => g.asm.str_reg(Size::D, v, b, i),
                    }
                }
            }
            Instr::Select { dst, cond, a, b } => {
                let d = g.reg(*dst)?;
                let va = g.operand(a, &[])?;
                let vb = g.operand(b, &[va])?;
                let c = match g.compare(cond, &[va, vb])? {
                    Some(c) => c,
                    None => {
                        let x = g.operand(cond, &[va, vb])?;
                        g.asm.subs_imm(X::ZR, x, 0);
                        Cond::Ne
                    }
                };
                g.asm.csel(d, va, vb, c);
            }
            _ => return Err(g.err("an instruction the AArch64 code generator does not know")),
        }
        Ok(())
    }

    fn fence(g: &mut G<'_>, f: &Fence) -> Result<bool, Unencodable> {
        match f {
            Fence::Dmb(kind, opt) => {
                let crm = barrier_crm(opt.name())
                    .ok_or_else(|| g.err(format!("the barrier option {}", opt.name())))?;
                match kind {
                    Barrier::Dmb => g.asm.dmb(crm),
                    Barrier::Dsb => g.asm.dsb(crm),
                }
            }
            Fence::Isb => g.asm.isb(),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

impl G<'_> {
    /// Sets the flags for a comparison `cond` and returns the condition
    /// under which it holds; `None` when `cond` is not a comparison.
    fn compare(&mut self, cond: &Expr, avoid: &[X]) -> Result<Option<Cond>, Unencodable> {
        let Expr::Bin(op, a, b) = cond else {
            return Ok(None);
        };
        self.compare_ops(*op, a, b, avoid)
    }

    /// [`Self::compare`] of `a op b`.
    fn compare_ops(
        &mut self,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        avoid: &[X],
    ) -> Result<Option<Cond>, Unencodable> {
        let Some(c) = Cond::of(op) else {
            return Ok(None);
        };
        let x = self.operand(a, avoid)?;
        let mut av = avoid.to_vec();
        av.push(x);
        match b {
            Expr::Const(Value::Int(i)) if (0..4096).contains(i) => {
                self.asm.subs_imm(X::ZR, x, *i as u32);
            }
            _ => {
                let y = self.operand(b, &av)?;
                self.asm.cmp(x, y);
            }
        }
        Ok(Some(c))
    }

    /// The address register of a plain access, and an index register when
    /// the address is `base + index` (a register-offset `LDR`/`STR`).
    fn address(&mut self, addr: &Expr, avoid: &[X]) -> Result<(X, Option<X>), Unencodable> {
        if let Some((base, index)) = self.base_index(addr, avoid)? {
            return Ok((base, Some(index)));
        }
        Ok((self.operand(addr, avoid)?, None))
    }

    /// The address in one register, for the forms without a register
    /// offset (`LDAR`, exclusives, atomics): `base + index` is added into
    /// a scratch register (keeping the address dependency).
    fn address_reg(&mut self, addr: &Expr, avoid: &[X]) -> Result<X, Unencodable> {
        match self.address(addr, avoid)? {
            (b, None) => Ok(b),
            (b, Some(i)) => {
                let mut av = avoid.to_vec();
                av.extend([b, i]);
                let s = self.free(&av)?;
                self.asm.op(Op::Add, s, b, i);
                Ok(s)
            }
        }
    }
}
