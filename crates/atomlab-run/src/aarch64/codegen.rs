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

use atomlab_litmus::{
    Annot, Barrier, BinOp, CasExpected, Expr, Fence, Instr, RmwOp, Thread, Value,
};

use super::encode::{barrier_crm, Asm, AtomicOp, Cond, Op, Size, X};
use crate::buffer::Label;
use crate::addresses::check_addresses;
use crate::frame::FrameLayout;
use crate::mentions::used;
use crate::Unencodable;

const FRAME: X = X(0);
const BUDGET: X = X(1);
/// Registers test values and location addresses may live in.
const POOL: [X; 24] = [
    X(2),
    X(3),
    X(4),
    X(5),
    X(6),
    X(7),
    X(8),
    X(9),
    X(10),
    X(11),
    X(12),
    X(13),
    X(14),
    X(15),
    X(19),
    X(20),
    X(21),
    X(22),
    X(23),
    X(24),
    X(25),
    X(26),
    X(27),
    X(28),
];
/// Intra-procedure-call scratch registers (nothing is called).
const SCRATCH: [X; 2] = [X(16), X(17)];

fn callee_saved(r: X) -> bool {
    (19..=28).contains(&r.0)
}

/// The architecture feature an instruction needs beyond Armv8.0, by its
/// Arm ARM name and the name Linux's hwcaps (and atomlab-core's machine
/// fingerprint) give it: FEAT_LSE for the atomics and CAS, FEAT_LRCPC for
/// LDAPR.
pub fn feature_needed(i: &Instr) -> Option<(&'static str, &'static str)> {
    match i {
        Instr::Rmw { .. } | Instr::Cas { .. } => Some(("FEAT_LSE", "lse")),
        Instr::Load { annot, .. } if annot.acquire_pc && !annot.exclusive => {
            Some(("FEAT_LRCPC", "rcpc"))
        }
        _ => None,
    }
}

struct Gen<'a> {
    asm: Asm,
    thread: &'a Thread,
    regs: Vec<Option<X>>,
    locs: Vec<Option<X>>,
    /// Scratch registers: X16, X17, then unused pool registers.
    scratch: Vec<X>,
    labels: Vec<Label>,
    at: usize,
}

/// Generates the machine code of `th` for frames laid out as `layout`.
pub fn thread_code(th: &Thread, layout: &FrameLayout) -> Result<Vec<u8>, Unencodable> {
    let err = |index: usize, what: String| Unencodable {
        thread: th.id,
        index,
        what,
    };
    check_addresses(th)?;
    let (used_regs, used_locs) = used(th);
    if let Some(&l) = used_locs.iter().find(|&&l| l >= layout.locations) {
        return Err(err(
            0,
            format!("location number {l} is not declared by the test"),
        ));
    }
    if let Some(&r) = used_regs.iter().find(|&&r| r >= th.regs.len()) {
        return Err(err(
            0,
            format!("register number {r} is not declared by the thread"),
        ));
    }
    if used_locs.len() + used_regs.len() > POOL.len() {
        return Err(err(
            0,
            format!(
                "a thread that uses {} registers and locations; the AArch64 code generator keeps at most {} in machine registers",
                used_locs.len() + used_regs.len(),
                POOL.len()
            ),
        ));
    }
    if layout.budget_offset() > 8 * 4095 {
        return Err(err(0, "a frame too large for LDR's offset".into()));
    }
    let mut pool = POOL.iter().copied();
    let mut locs = vec![None; layout.locations];
    for &l in &used_locs {
        locs[l] = pool.next();
    }
    let mut regs = vec![None; th.regs.len()];
    for &r in &used_regs {
        regs[r] = pool.next();
    }
    // Unused pool registers are extra scratch, but only caller-saved
    // ones: the prologue saves just the callee-saved registers assigned.
    let mut scratch = SCRATCH.to_vec();
    scratch.extend(pool.filter(|r| !callee_saved(*r)));
    let mut asm = Asm::new();
    let labels = (0..=th.code.len()).map(|_| asm.label()).collect();
    let mut g = Gen {
        asm,
        thread: th,
        regs,
        locs,
        scratch,
        labels,
        at: 0,
    };
    g.generate(layout)?;
    g.asm
        .finish()
        .ok_or_else(|| err(th.code.len(), "a branch target outside the thread".into()))
}

impl Gen<'_> {
    fn err(&self, what: impl Into<String>) -> Unencodable {
        Unencodable {
            thread: self.thread.id,
            index: self.at,
            what: what.into(),
        }
    }

    fn generate(&mut self, layout: &FrameLayout) -> Result<(), Unencodable> {
        // Callee-saved registers in use (as test registers, locations or
        // scratch), saved in a 16-byte aligned stack area.
        let saved: Vec<X> = self
            .regs
            .iter()
            .chain(&self.locs)
            .flatten()
            .copied()
            .filter(|r| callee_saved(*r))
            .collect();
        let area = (saved.len() * 8).next_multiple_of(16) as u32;
        let off = |x: i32| x as u32;
        if !saved.is_empty() {
            self.asm.sub_imm(X::SP, X::SP, area);
            for (k, r) in saved.iter().enumerate() {
                self.asm.str_imm(Size::X, *r, X::SP, 8 * k as u32);
            }
        }
        for (l, m) in self.locs.clone().iter().enumerate() {
            if let Some(m) = m {
                self.asm
                    .ldr_imm(Size::X, *m, FRAME, off(layout.loc_offset(l)));
            }
        }
        for (r, m) in self.regs.clone().iter().enumerate() {
            if let Some(m) = m {
                self.asm
                    .ldr_imm(Size::X, *m, FRAME, off(layout.reg_offset(r)));
            }
        }
        self.asm
            .ldr_imm(Size::X, BUDGET, FRAME, off(layout.budget_offset()));
        for i in 0..self.thread.code.len() {
            self.at = i;
            let l = self.labels[i];
            self.asm.bind(l);
            let ins = self.thread.code[i].clone();
            self.instr(&ins)?;
        }
        self.at = self.thread.code.len();
        let end = self.labels[self.thread.code.len()];
        self.asm.bind(end);
        for (r, m) in self.regs.clone().iter().enumerate() {
            if let Some(m) = m {
                self.asm
                    .str_imm(Size::X, *m, FRAME, off(layout.reg_offset(r)));
            }
        }
        self.asm
            .str_imm(Size::X, BUDGET, FRAME, off(layout.budget_offset()));
        if !saved.is_empty() {
            for (k, r) in saved.iter().enumerate() {
                self.asm.ldr_imm(Size::X, *r, X::SP, 8 * k as u32);
            }
            self.asm.add_imm(X::SP, X::SP, area);
        }
        self.asm.ret();
        Ok(())
    }

    fn free(&self, avoid: &[X]) -> Result<X, Unencodable> {
        self.scratch
            .iter()
            .copied()
            .find(|r| !avoid.contains(r))
            .ok_or_else(|| self.err("the expression needs more scratch registers than are free"))
    }

    fn reg(&self, r: usize) -> Result<X, Unencodable> {
        self.regs
            .get(r)
            .copied()
            .flatten()
            .ok_or_else(|| self.err(format!("register number {r} has no machine register")))
    }

    /// The register holding `e` (a test register, a location's address,
    /// XZR for 0), or `e` evaluated into a scratch register not in `avoid`.
    fn operand(&mut self, e: &Expr, avoid: &[X]) -> Result<X, Unencodable> {
        match e {
            Expr::Reg(r) => self.reg(*r),
            Expr::Const(Value::Int(0)) => Ok(X::ZR),
            Expr::Const(Value::Loc(l)) => self
                .locs
                .get(*l)
                .copied()
                .flatten()
                .ok_or_else(|| self.err(format!("location number {l} has no machine register"))),
            _ => {
                let s = self.free(avoid)?;
                self.eval(e, s, avoid)?;
                Ok(s)
            }
        }
    }

    /// Sets the flags for a comparison `cond` and returns the condition
    /// under which it holds; `None` when `cond` is not a comparison.
    fn compare(&mut self, cond: &Expr, avoid: &[X]) -> Result<Option<Cond>, Unencodable> {
        let Expr::Bin(op, a, b) = cond else {
            return Ok(None);
        };
        let c = match op {
            BinOp::Eq => Cond::Eq,
            BinOp::Ne => Cond::Ne,
            BinOp::Lt => Cond::Lt,
            BinOp::Le => Cond::Le,
            BinOp::Gt => Cond::Gt,
            BinOp::Ge => Cond::Ge,
            BinOp::Ult => Cond::Lo,
            BinOp::Ule => Cond::Ls,
            BinOp::Ugt => Cond::Hi,
            BinOp::Uge => Cond::Hs,
            _ => return Ok(None),
        };
        let x = self.operand(a, avoid)?;
        let mut av = avoid.to_vec();
        av.push(x);
        match &**b {
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

    /// Evaluates `e` into `dst`, using scratch registers not in `avoid`.
    fn eval(&mut self, e: &Expr, dst: X, avoid: &[X]) -> Result<(), Unencodable> {
        let mut av = avoid.to_vec();
        av.push(dst);
        match e {
            Expr::Const(Value::Int(i)) => self.asm.mov_imm(dst, *i),
            Expr::Const(Value::Loc(_)) | Expr::Reg(_) => {
                let src = self.operand(e, avoid)?;
                if src != dst {
                    self.asm.mov(dst, src);
                }
            }
            Expr::Not(a) => {
                let x = self.operand(a, avoid)?;
                self.asm.subs_imm(X::ZR, x, 0);
                self.asm.cset(dst, Cond::Eq);
            }
            Expr::Bin(op, a, b) => {
                if let Some(c) = self.compare(e, avoid)? {
                    self.asm.cset(dst, c);
                    return Ok(());
                }
                // Shifts by a constant take an immediate.
                if let (BinOp::Shl | BinOp::Shr, Expr::Const(Value::Int(n))) = (op, &**b) {
                    let n = u32::try_from(*n)
                        .ok()
                        .filter(|n| *n < 64)
                        .ok_or_else(|| self.err(format!("a shift by {n}")))?;
                    let x = self.operand(a, avoid)?;
                    if *op == BinOp::Shl {
                        self.asm.lsl_imm(dst, x, n);
                    } else {
                        self.asm.lsr_imm(dst, x, n);
                    }
                    return Ok(());
                }
                if let (BinOp::LogAnd | BinOp::LogOr, _) = (op, ()) {
                    let x = self.operand(a, avoid)?;
                    self.asm.subs_imm(X::ZR, x, 0);
                    self.asm.cset(dst, Cond::Ne);
                    let t = self.free(&av)?;
                    let mut av2 = av.clone();
                    av2.push(t);
                    let y = self.operand(b, &av2)?;
                    self.asm.subs_imm(X::ZR, y, 0);
                    self.asm.cset(t, Cond::Ne);
                    let o = if *op == BinOp::LogAnd {
                        Op::And
                    } else {
                        Op::Orr
                    };
                    self.asm.op(o, dst, dst, t);
                    return Ok(());
                }
                let x = self.operand(a, avoid)?;
                let mut av2 = av.clone();
                av2.push(x);
                let y = self.operand(b, &av2)?;
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
                    _ => return Err(self.err(format!("the operator {op:?}"))),
                };
                self.asm.op(o, dst, x, y);
            }
        }
        Ok(())
    }

    /// The address register of a plain access, and an index register when
    /// the address is `base + index` (a register-offset `LDR`/`STR`).
    fn address(&mut self, addr: &Expr, avoid: &[X]) -> Result<(X, Option<X>), Unencodable> {
        if let Expr::Bin(BinOp::Add, a, b) = addr {
            if matches!(**a, Expr::Reg(_) | Expr::Const(Value::Loc(_))) {
                let base = self.operand(a, avoid)?;
                let mut av = avoid.to_vec();
                av.push(base);
                let index = self.operand(b, &av)?;
                return Ok((base, Some(index)));
            }
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

    fn dst(&self, r: Option<usize>) -> Result<X, Unencodable> {
        match r {
            None => Ok(X::ZR),
            Some(r) => self.reg(r),
        }
    }

    fn instr(&mut self, ins: &Instr) -> Result<(), Unencodable> {
        match ins {
            Instr::Load { dst, addr, annot } => {
                let d = self.dst(*dst)?;
                if annot.exclusive {
                    let a = self.address_reg(addr, &[])?;
                    self.asm.ldxr(Size::X, annot.acquire, d, a);
                } else if annot.acquire {
                    let a = self.address_reg(addr, &[])?;
                    self.asm.ldar(Size::X, d, a);
                } else if annot.acquire_pc {
                    let a = self.address_reg(addr, &[])?;
                    self.asm.ldapr(Size::X, d, a);
                } else {
                    match self.address(addr, &[])? {
                        (b, None) => {
                            self.asm.ldr_imm(Size::X, d, b, 0);
                        }
                        (b, Some(i)) => self.asm.ldr_reg(Size::X, d, b, i),
                    }
                }
            }
            Instr::Store { addr, value, annot } => {
                if annot.exclusive {
                    return Err(self.err("an exclusive store without a status register"));
                }
                if annot.release {
                    let a = self.address_reg(addr, &[])?;
                    let v = self.operand(value, &[a])?;
                    self.asm.stlr(Size::X, v, a);
                } else {
                    let (b, i) = self.address(addr, &[])?;
                    let mut av = vec![b];
                    av.extend(i);
                    let v = self.operand(value, &av)?;
                    match i {
                        None => {
                            self.asm.str_imm(Size::X, v, b, 0);
                        }
                        Some(i) => self.asm.str_reg(Size::X, v, b, i),
                    }
                }
            }
            Instr::StoreExclusive {
                status,
                addr,
                value,
                annot,
            } => {
                let a = self.address_reg(addr, &[])?;
                let v = self.operand(value, &[a])?;
                let s = self.dst(*status)?;
                if s != X::ZR && (s == a || s == v) {
                    return Err(self.err(
                        "a store-exclusive whose status register is also its value or address (CONSTRAINED UNPREDICTABLE in the Arm ARM)",
                    ));
                }
                self.asm.stxr(Size::X, annot.release, s, v, a);
            }
            Instr::Rmw {
                dst,
                addr,
                op,
                operand,
                read,
                write,
                ..
            } => self.rmw(*dst, addr, *op, operand, read, write)?,
            Instr::Cas {
                result,
                addr,
                expected,
                desired,
                read,
                write,
                ..
            } => self.cas(*result, addr, expected, desired, read, write)?,
            Instr::Fence(Fence::Dmb(kind, opt)) => {
                let crm = barrier_crm(opt.name)
                    .ok_or_else(|| self.err(format!("the barrier option {}", opt.name)))?;
                match kind {
                    Barrier::Dmb => self.asm.dmb(crm),
                    Barrier::Dsb => self.asm.dsb(crm),
                }
            }
            Instr::Fence(Fence::Isb) => self.asm.isb(),
            Instr::Fence(f) => {
                return Err(self.err(format!(
                    "the fence {f} (not an AArch64 instruction; C fences go through the C11->AArch64 mapping first)"
                )))
            }
            Instr::SyncSrcu { .. } => {
                return Err(self.err("synchronize_srcu (a Linux-kernel primitive, not an AArch64 instruction)"))
            }
            Instr::Assign { dst, expr } => {
                let d = self.reg(*dst)?;
                match expr {
                    Expr::Const(Value::Int(i)) => self.asm.mov_imm(d, *i),
                    Expr::Reg(_) | Expr::Const(Value::Loc(_)) => {
                        let s = self.operand(expr, &[])?;
                        if s != d {
                            self.asm.mov(d, s);
                        }
                    }
                    // Evaluated aside, then moved: the expression may read
                    // `dst` in a part evaluated after `dst` is written.
                    _ if reads(expr, *dst) => {
                        let s = self.free(&[])?;
                        self.eval(expr, s, &[])?;
                        self.asm.mov(d, s);
                    }
                    _ => self.eval(expr, d, &[])?,
                }
            }
            Instr::Select { dst, cond, a, b } => {
                let d = self.reg(*dst)?;
                let va = self.operand(a, &[])?;
                let vb = self.operand(b, &[va])?;
                let c = match self.compare(cond, &[va, vb])? {
                    Some(c) => c,
                    None => {
                        let x = self.operand(cond, &[va, vb])?;
                        self.asm.subs_imm(X::ZR, x, 0);
                        Cond::Ne
                    }
                };
                self.asm.csel(d, va, vb, c);
            }
            Instr::Branch { cond, target } => {
                let Some(&label) = self.labels.get(*target) else {
                    return Err(self.err(format!(
                        "a branch to instruction {target}, outside the thread"
                    )));
                };
                let end = self.labels[self.thread.code.len()];
                if *target <= self.at {
                    // A backward branch: bounded by the loop budget.
                    self.asm.subs_imm(BUDGET, BUDGET, 1);
                    self.asm.b_cond(Cond::Eq, end);
                }
                match cond {
                    None => self.asm.b(label),
                    // CBZ / CBNZ.
                    Some(Expr::Bin(op @ (BinOp::Eq | BinOp::Ne), x, z))
                        if **z == Expr::int(0) =>
                    {
                        let r = self.operand(x, &[])?;
                        if *op == BinOp::Eq {
                            self.asm.cbz(r, label);
                        } else {
                            self.asm.cbnz(r, label);
                        }
                    }
                    Some(c) => match self.compare(c, &[])? {
                        Some(cc) => self.asm.b_cond(cc, label),
                        None => {
                            let r = self.operand(c, &[])?;
                            self.asm.cbnz(r, label);
                        }
                    },
                }
            }
        }
        Ok(())
    }

    fn rmw(
        &mut self,
        dst: Option<usize>,
        addr: &Expr,
        op: RmwOp,
        operand: &Expr,
        read: &Annot,
        write: &Annot,
    ) -> Result<(), Unencodable> {
        let a = self.address_reg(addr, &[])?;
        let mut s = self.operand(operand, &[a])?;
        let atomic = match op {
            RmwOp::Xchg => AtomicOp::Swp,
            RmwOp::Add => AtomicOp::Add,
            RmwOp::Or => AtomicOp::Set,
            RmwOp::Xor => AtomicOp::Eor,
            RmwOp::Clr => AtomicOp::Clr,
            RmwOp::Max => AtomicOp::Smax,
            RmwOp::Min => AtomicOp::Smin,
            RmwOp::Umax => AtomicOp::Umax,
            RmwOp::Umin => AtomicOp::Umin,
            // old - v is LDADD of -v; old & v is LDCLR of !v (what
            // compilers emit for fetch_sub and fetch_and with LSE).
            RmwOp::Sub | RmwOp::And => {
                let t = self.free(&[a, s])?;
                if op == RmwOp::Sub {
                    self.asm.neg(t, s);
                    s = t;
                    AtomicOp::Add
                } else {
                    self.asm.mvn(t, s);
                    s = t;
                    AtomicOp::Clr
                }
            }
        };
        let d = self.dst(dst)?;
        self.asm
            .atomic(Size::X, atomic, read.acquire, write.release, s, d, a);
        Ok(())
    }

    fn cas(
        &mut self,
        result: Option<usize>,
        addr: &Expr,
        expected: &CasExpected,
        desired: &Expr,
        read: &Annot,
        write: &Annot,
    ) -> Result<(), Unencodable> {
        let a = self.address_reg(addr, &[])?;
        let d = self.operand(desired, &[a])?;
        match expected {
            // Arm's CAS Rs, Rt, [Xn] as written (Rs = XZR for `CAS WZR`).
            CasExpected::Reg(r) if result.is_none() => {
                let s = self.reg(*r)?;
                self.asm.cas(Size::X, read.acquire, write.release, s, d, a);
            }
            CasExpected::Value(Expr::Const(Value::Int(0))) if result.is_none() => {
                self.asm
                    .cas(Size::X, read.acquire, write.release, X::ZR, d, a);
            }
            _ => {
                // C's compare-exchange: the expected value into a scratch
                // register (CAS overwrites it with the old value), kept in
                // another to compare after.
                let old = self.free(&[a, d])?;
                let want = self.free(&[a, d, old])?;
                let mut mem = None;
                match expected {
                    CasExpected::Reg(r) => {
                        let r = self.reg(*r)?;
                        self.asm.mov(want, r);
                    }
                    CasExpected::Value(e) => self.eval(e, want, &[a, d, old])?,
                    CasExpected::Mem(e) => {
                        let m = self.operand(e, &[a, d, old, want])?;
                        self.asm.ldr_imm(Size::X, want, m, 0);
                        mem = Some(m);
                    }
                }
                self.asm.mov(old, want);
                self.asm
                    .cas(Size::X, read.acquire, write.release, old, d, a);
                if let CasExpected::Reg(r) = expected {
                    let r = self.reg(*r)?;
                    self.asm.mov(r, old);
                }
                self.asm.cmp(old, want);
                if let Some(res) = result {
                    let r = self.reg(res)?;
                    self.asm.cset(r, Cond::Eq);
                }
                if let Some(m) = mem {
                    // CSET leaves the flags alone.
                    let ok = self.asm.label();
                    self.asm.b_cond(Cond::Eq, ok);
                    self.asm.str_imm(Size::X, old, m, 0);
                    self.asm.bind(ok);
                }
            }
        }
        Ok(())
    }
}

/// Whether `e` reads test register `r`.
fn reads(e: &Expr, r: usize) -> bool {
    match e {
        Expr::Reg(x) => *x == r,
        Expr::Const(_) => false,
        Expr::Not(a) => reads(a, r),
        Expr::Bin(_, a, b) => reads(a, r) || reads(b, r),
    }
}
