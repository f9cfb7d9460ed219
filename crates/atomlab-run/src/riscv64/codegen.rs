//! Thread code for RV64: each lowered [`Instr`] of a RISCV test (or of a
//! C test compiled by atomlab-model's C11→RISC-V mapping, the spec's
//! Table A.6) becomes the RV64GC instruction it stands for: `LD`/`SD`,
//! `LR.D`/`SC.D` and `AMO<op>.D` with `aq`/`rl` as annotated, `FENCE
//! pred,succ` with the test's sets, `FENCE.TSO`.
//!
//! The generated function follows the RISC-V psABI (LP64) with one
//! argument, the instance frame (see [`crate::frame`]), in `a0`:
//!
//! ```text
//! prologue: save the callee-saved registers used (s0-s11) on the stack,
//!           load each used location's address, each used test register
//!           and the loop budget from the frame into machine registers
//! body:     the test's instructions, on those registers
//! epilogue: store the test registers and the budget back, restore, RET
//! ```
//!
//! Nothing but the test's own accesses touches memory in the body, so no
//! other access sits between an `LR` and its `SC` (an access there could
//! clear the reservation). The loop budget lives in `a1`: a backward
//! branch first does `ADDI a1, a1, -1; BEQ a1, x0, end`, so every loop is
//! bounded.
//!
//! Where the lowered form lost the exact spelling, the code keeps what the
//! models judge: accesses are 64-bit (`lw`, `amoadd.w` run as `ld`,
//! `amoadd.d`: atomlab-litmus's values are 64-bit and it models no mixed
//! sizes; see `Gen::width`); an address `rs1 + rs2` (a location
//! plus a register known to be zero) is added into a scratch register and
//! accessed at offset 0 (the same address dependency: RVWMO's syntactic
//! dependencies go through `ADD`); `diy7`'s `lw.aq`/`sw.rl` arrive already
//! as the fenced sequences herd reads them as.

use atomlab_litmus::{Annot, BinOp, CasExpected, Expr, Fence, Instr, RmwOp, Thread, Value};

use super::encode::{Amo, Asm, Cond, Op, OpImm, Set, Width, R};
use crate::buffer::Label;
use crate::addresses::check_addresses;
use crate::frame::FrameLayout;
use crate::mentions::used;
use crate::Unencodable;

/// `a0`: the frame pointer argument.
const FRAME: R = R(10);
/// `a1`: the loop budget.
const BUDGET: R = R(11);
/// Registers test values and location addresses may live in: `a2`-`a7`,
/// `t0`-`t3` (caller-saved), then `s0`, `s1`, `s2`-`s11` (callee-saved,
/// saved by the prologue when used). `ra`, `sp`, `gp` and `tp` are never
/// touched (`gp` and `tp` belong to the runtime).
const POOL: [R; 22] = [
    R(12),
    R(13),
    R(14),
    R(15),
    R(16),
    R(17),
    R(5),
    R(6),
    R(7),
    R(28),
    R(8),
    R(9),
    R(18),
    R(19),
    R(20),
    R(21),
    R(22),
    R(23),
    R(24),
    R(25),
    R(26),
    R(27),
];
/// `t4`-`t6`: scratch (RISC-V computes comparisons into registers, and a
/// compare-exchange needs three at once).
const SCRATCH: [R; 3] = [R(29), R(30), R(31)];

fn callee_saved(r: R) -> bool {
    matches!(r.0, 8 | 9 | 18..=27)
}

fn set(a: atomlab_litmus::RvAccesses) -> Set {
    Set {
        i: false,
        o: false,
        r: a.r,
        w: a.w,
    }
}

struct Gen<'a> {
    asm: Asm,
    thread: &'a Thread,
    regs: Vec<Option<R>>,
    locs: Vec<Option<R>>,
    /// Scratch registers: t4-t6, then unused caller-saved pool registers.
    scratch: Vec<R>,
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
                "a thread that uses {} registers and locations; the RISC-V code generator keeps at most {} in machine registers",
                used_locs.len() + used_regs.len(),
                POOL.len()
            ),
        ));
    }
    // LD/SD take a 12-bit signed offset from a0.
    if layout.budget_offset() > 2047 {
        return Err(err(0, "a frame too large for LD's 12-bit offset".into()));
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
    g.asm.finish().ok_or_else(|| {
        err(
            th.code.len(),
            "a branch beyond the reach of B-type offsets (4 KiB)".into(),
        )
    })
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
        // Callee-saved registers in use, saved in a 16-byte aligned stack
        // area (the psABI keeps sp 16-byte aligned).
        let saved: Vec<R> = self
            .regs
            .iter()
            .chain(&self.locs)
            .flatten()
            .copied()
            .filter(|r| callee_saved(*r))
            .collect();
        let area = (saved.len() * 8).next_multiple_of(16) as i64;
        if !saved.is_empty() {
            self.asm.addi(R::SP, R::SP, -area);
            for (k, r) in saved.iter().enumerate() {
                self.asm.store(Width::D, *r, R::SP, 8 * k as i32);
            }
        }
        for (l, m) in self.locs.clone().iter().enumerate() {
            if let Some(m) = m {
                self.asm.load(Width::D, *m, FRAME, layout.loc_offset(l));
            }
        }
        for (r, m) in self.regs.clone().iter().enumerate() {
            if let Some(m) = m {
                self.asm.load(Width::D, *m, FRAME, layout.reg_offset(r));
            }
        }
        self.asm
            .load(Width::D, BUDGET, FRAME, layout.budget_offset());
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
                self.asm.store(Width::D, *m, FRAME, layout.reg_offset(r));
            }
        }
        self.asm
            .store(Width::D, BUDGET, FRAME, layout.budget_offset());
        if !saved.is_empty() {
            for (k, r) in saved.iter().enumerate() {
                self.asm.load(Width::D, *r, R::SP, 8 * k as i32);
            }
            self.asm.addi(R::SP, R::SP, area);
        }
        self.asm.ret();
        Ok(())
    }

    fn free(&self, avoid: &[R]) -> Result<R, Unencodable> {
        self.scratch
            .iter()
            .copied()
            .find(|r| !avoid.contains(r))
            .ok_or_else(|| self.err("the expression needs more scratch registers than are free"))
    }

    fn reg(&self, r: usize) -> Result<R, Unencodable> {
        self.regs
            .get(r)
            .copied()
            .flatten()
            .ok_or_else(|| self.err(format!("register number {r} has no machine register")))
    }

    /// The register holding `e` (a test register, a location's address,
    /// `x0` for 0), or `e` evaluated into a scratch register not in
    /// `avoid`.
    fn operand(&mut self, e: &Expr, avoid: &[R]) -> Result<R, Unencodable> {
        match e {
            Expr::Reg(r) => self.reg(*r),
            Expr::Const(Value::Int(0)) => Ok(R::ZERO),
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

    /// `dst = (x op y)` for a comparison: `SLT`/`SLTU` (operands swapped
    /// for `>` and `<=`, the result flipped by `XORI 1` for `<=` and `>=`),
    /// `XOR` then `SLTIU 1` / `SLTU x0` for `==` / `!=`. `false` when `op`
    /// is not a comparison.
    fn compare_into(&mut self, op: BinOp, x: R, y: R, dst: R) -> bool {
        let (o, swap, flip) = match op {
            BinOp::Eq | BinOp::Ne => {
                self.asm.op(Op::Xor, dst, x, y);
                if op == BinOp::Eq {
                    self.asm.op_imm(OpImm::Sltiu, dst, dst, 1);
                } else {
                    self.asm.op(Op::Sltu, dst, R::ZERO, dst);
                }
                return true;
            }
            BinOp::Lt => (Op::Slt, false, false),
            BinOp::Gt => (Op::Slt, true, false),
            BinOp::Le => (Op::Slt, true, true),
            BinOp::Ge => (Op::Slt, false, true),
            BinOp::Ult => (Op::Sltu, false, false),
            BinOp::Ugt => (Op::Sltu, true, false),
            BinOp::Ule => (Op::Sltu, true, true),
            BinOp::Uge => (Op::Sltu, false, true),
            _ => return false,
        };
        let (a, b) = if swap { (y, x) } else { (x, y) };
        self.asm.op(o, dst, a, b);
        if flip {
            self.asm.op_imm(OpImm::Xori, dst, dst, 1);
        }
        true
    }

    /// Evaluates `e` into `dst`, using scratch registers not in `avoid`.
    fn eval(&mut self, e: &Expr, dst: R, avoid: &[R]) -> Result<(), Unencodable> {
        let mut av = avoid.to_vec();
        av.push(dst);
        match e {
            Expr::Const(Value::Int(i)) => self.asm.li(dst, *i),
            Expr::Const(Value::Loc(_)) | Expr::Reg(_) => {
                let src = self.operand(e, avoid)?;
                if src != dst {
                    self.asm.mv(dst, src);
                }
            }
            Expr::Not(a) => {
                // Logical not: SEQZ.
                let x = self.operand(a, avoid)?;
                self.asm.op_imm(OpImm::Sltiu, dst, x, 1);
            }
            Expr::Bin(op, a, b) => {
                // Shifts by a constant take an immediate.
                if let (BinOp::Shl | BinOp::Shr, Expr::Const(Value::Int(n))) = (op, &**b) {
                    let n = u32::try_from(*n)
                        .ok()
                        .filter(|n| *n < 64)
                        .ok_or_else(|| self.err(format!("a shift by {n}")))?;
                    let x = self.operand(a, avoid)?;
                    if *op == BinOp::Shl {
                        self.asm.slli(dst, x, n);
                    } else {
                        self.asm.srli(dst, x, n);
                    }
                    return Ok(());
                }
                // ADDI/ANDI/ORI/XORI with a 12-bit constant (`addi`,
                // `xori` as the test wrote them).
                if let (
                    BinOp::Add | BinOp::And | BinOp::Or | BinOp::Xor,
                    Expr::Const(Value::Int(n)),
                ) = (op, &**b)
                {
                    if (-2048..2048).contains(n) {
                        let x = self.operand(a, avoid)?;
                        let o = match op {
                            BinOp::Add => OpImm::Addi,
                            BinOp::And => OpImm::Andi,
                            BinOp::Or => OpImm::Ori,
                            _ => OpImm::Xori,
                        };
                        self.asm.op_imm(o, dst, x, *n);
                        return Ok(());
                    }
                }
                if let BinOp::LogAnd | BinOp::LogOr = op {
                    // SNEZ of each side, then AND/OR.
                    let x = self.operand(a, avoid)?;
                    self.asm.op(Op::Sltu, dst, R::ZERO, x);
                    let t = self.free(&av)?;
                    let mut av2 = av.clone();
                    av2.push(t);
                    let y = self.operand(b, &av2)?;
                    self.asm.op(Op::Sltu, t, R::ZERO, y);
                    let o = if *op == BinOp::LogAnd {
                        Op::And
                    } else {
                        Op::Or
                    };
                    self.asm.op(o, dst, dst, t);
                    return Ok(());
                }
                let x = self.operand(a, avoid)?;
                let mut av2 = av.clone();
                av2.push(x);
                let y = self.operand(b, &av2)?;
                if self.compare_into(*op, x, y, dst) {
                    return Ok(());
                }
                let o = match op {
                    BinOp::Add => Op::Add,
                    BinOp::Sub => Op::Sub,
                    BinOp::Mul => Op::Mul,
                    BinOp::Xor => Op::Xor,
                    BinOp::And => Op::And,
                    BinOp::Or => Op::Or,
                    BinOp::Shl => Op::Sll,
                    BinOp::Shr => Op::Srl,
                    BinOp::AndNot => {
                        // x & !y: NOT y aside (dst may be x), then AND.
                        let mut av3 = av2.clone();
                        av3.push(y);
                        let t = self.free(&av3)?;
                        self.asm.op_imm(OpImm::Xori, t, y, -1);
                        self.asm.op(Op::And, dst, x, t);
                        return Ok(());
                    }
                    _ => return Err(self.err(format!("the operator {op:?}"))),
                };
                self.asm.op(o, dst, x, y);
            }
        }
        Ok(())
    }

    /// The address in one register: RV64 accesses take `offset(rs1)`
    /// only, so `base + index` is added into a scratch register (keeping
    /// the address dependency: `ADD` carries RVWMO's syntactic
    /// dependency).
    fn address(&mut self, addr: &Expr, avoid: &[R]) -> Result<R, Unencodable> {
        if let Expr::Bin(BinOp::Add, a, b) = addr {
            if matches!(**a, Expr::Reg(_) | Expr::Const(Value::Loc(_))) {
                let base = self.operand(a, avoid)?;
                let mut av = avoid.to_vec();
                av.push(base);
                let index = self.operand(b, &av)?;
                if index == R::ZERO {
                    return Ok(base);
                }
                av.push(index);
                let s = self.free(&av)?;
                self.asm.op(Op::Add, s, base, index);
                return Ok(s);
            }
        }
        self.operand(addr, avoid)
    }

    fn dst(&self, r: Option<usize>) -> Result<R, Unencodable> {
        match r {
            None => Ok(R::ZERO),
            Some(r) => self.reg(r),
        }
    }

    /// The width every access runs at: 64 bits. atomlab-litmus keeps a
    /// `lw`'s width only so the checker can refuse mixed sizes; its values
    /// are 64-bit, and the models judge a `.w` AMO on a location holding -3
    /// as a 64-bit one. A 32-bit AMOMAX on the low half would leave the
    /// upper half's sign bits beside the new value (a final state the
    /// model never has), so, as the AArch64 backend runs W-register tests
    /// with X registers, every access here is `LD`/`SD`/`.D` (RVWMO orders
    /// aligned accesses of any size alike).
    fn width(&self, a: &Annot) -> Result<Width, Unencodable> {
        match a.width {
            0 | 1 | 2 | 4 | 8 => Ok(Width::D),
            n => Err(self.err(format!("an access of {n} bytes"))),
        }
    }

    fn instr(&mut self, ins: &Instr) -> Result<(), Unencodable> {
        match ins {
            Instr::Load { dst, addr, annot } => {
                if annot.acquire_pc || annot.locked {
                    return Err(self.err("an Arm or x86 access kind (not a RISC-V load)"));
                }
                let d = self.dst(*dst)?;
                let a = self.address(addr, &[])?;
                if annot.exclusive {
                    // LR with the test's aq/rl bits (herd keeps them on the
                    // read event; RVWMO orders by them, ppo rules 5-7).
                    let w = self.width(annot)?;
                    self.asm.lr(w, annot.acquire, annot.release, d, a);
                } else if annot.acquire || annot.release {
                    // RV64 has no plain load-acquire: atomlab-litmus lowers
                    // diy7's `lw.aq` to `lw; fence r,rw` already, so an
                    // annotated plain load comes from another ISA.
                    return Err(self.err(
                        "a load-acquire outside LR (RISC-V has none; write `l; fence r,rw`)",
                    ));
                } else {
                    let w = self.width(annot)?;
                    self.asm.load(w, d, a, 0);
                }
            }
            Instr::Store { addr, value, annot } => {
                if annot.exclusive {
                    return Err(self.err("an exclusive store without a status register"));
                }
                if annot.acquire || annot.release || annot.acquire_pc || annot.locked {
                    // As for loads: `sw.rl` arrives as `fence rw,w; sw`.
                    return Err(self.err(
                        "a store-release outside SC (RISC-V has none; write `fence rw,w; s`)",
                    ));
                }
                let w = self.width(annot)?;
                let a = self.address(addr, &[])?;
                let v = self.operand(value, &[a])?;
                self.asm.store(w, v, a, 0);
            }
            Instr::StoreExclusive {
                status,
                addr,
                value,
                annot,
            } => {
                let w = self.width(annot)?;
                let a = self.address(addr, &[])?;
                let v = self.operand(value, &[a])?;
                let s = self.dst(*status)?;
                // SC with the test's aq/rl bits; rd gets 0 on success, a
                // non-zero code on failure (the model's 1: RISC-V tests
                // compare the status with zero).
                self.asm.sc(w, annot.acquire, annot.release, s, v, a);
            }
            Instr::Rmw {
                dst,
                addr,
                op,
                operand,
                read,
                write,
                single,
            } => {
                if *single {
                    return Err(self.err("a C read-modify-write not mapped to RISC-V"));
                }
                self.rmw(*dst, addr, *op, operand, read, write)?
            }
            Instr::Cas {
                result,
                addr,
                expected,
                desired,
                read,
                write,
                fail,
                ..
            } => self.cas(*result, addr, expected, desired, read, write, fail)?,
            // The test's FENCE pred,succ as written (I/O bits are not
            // modelled and never set by the lowering).
            Instr::Fence(Fence::RiscV { pred, succ }) => self.asm.fence(set(*pred), set(*succ)),
            // FENCE.TSO: fm=1000, rw,rw; RVWMO reads it as ordering
            // R->RW and W->W (spec 2.7), as the model does.
            Instr::Fence(Fence::Tso) => self.asm.fence_tso(),
            Instr::Fence(f) => {
                return Err(self.err(format!(
                    "the fence {f} (not a RISC-V instruction; C fences go through the C11->RISC-V mapping first)"
                )))
            }
            Instr::SyncSrcu { .. } => {
                return Err(self.err(
                    "synchronize_srcu (a Linux-kernel primitive, not a RISC-V instruction)",
                ))
            }
            Instr::Assign { dst, expr } => {
                let d = self.reg(*dst)?;
                match expr {
                    Expr::Const(Value::Int(i)) => self.asm.li(d, *i),
                    Expr::Reg(_) | Expr::Const(Value::Loc(_)) => {
                        let s = self.operand(expr, &[])?;
                        if s != d {
                            self.asm.mv(d, s);
                        }
                    }
                    // Evaluated aside, then moved: the expression may read
                    // `dst` in a part evaluated after `dst` is written.
                    _ if reads(expr, *dst) => {
                        let s = self.free(&[])?;
                        self.eval(expr, s, &[])?;
                        self.asm.mv(d, s);
                    }
                    _ => self.eval(expr, d, &[])?,
                }
            }
            Instr::Select { dst, cond, a, b } => {
                // dst = b ^ ((a ^ b) & -(cond != 0)): branch-free, so the
                // result depends on the condition, a and b by data (as
                // Arm's CSEL, which the models read Select as), where a
                // branch would leave only a control dependency, which
                // RVWMO does not keep for later loads.
                let d = self.reg(*dst)?;
                let va = self.operand(a, &[])?;
                let vb = self.operand(b, &[va])?;
                let m = self.free(&[va, vb])?;
                self.eval(cond, m, &[va, vb])?;
                self.asm.op(Op::Sltu, m, R::ZERO, m);
                self.asm.op(Op::Sub, m, R::ZERO, m);
                let t = self.free(&[va, vb, m])?;
                self.asm.op(Op::Xor, t, va, vb);
                self.asm.op(Op::And, t, t, m);
                self.asm.op(Op::Xor, d, vb, t);
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
                    self.asm.addi(BUDGET, BUDGET, -1);
                    self.asm.branch(Cond::Eq, BUDGET, R::ZERO, end);
                }
                match cond {
                    None => self.asm.j(label),
                    // A comparison is the branch's own (the same control
                    // dependency as the test's `bne x5,x6`): operands
                    // swapped for `>` and `<=`.
                    Some(Expr::Bin(op, x, y)) if branch_cond(*op).is_some() => {
                        let (c, swap) = branch_cond(*op).unwrap_or((Cond::Ne, false));
                        let rx = self.operand(x, &[])?;
                        let ry = self.operand(y, &[rx])?;
                        let (r1, r2) = if swap { (ry, rx) } else { (rx, ry) };
                        self.asm.branch(c, r1, r2, label);
                    }
                    Some(c) => {
                        let r = self.operand(c, &[])?;
                        self.asm.branch(Cond::Ne, r, R::ZERO, label);
                    }
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
        let w = self.width(read)?;
        // The AMO's aq bit is its read's acquire and rl its write's
        // release (herd7's RISCVSem); `.aqrl` makes both events both,
        // which the lowering marks as a releasing read and an acquiring
        // write. Any other mix has no encoding.
        let (aq, rl) = (read.acquire, write.release);
        if (read.release || write.acquire) && !(aq && rl && read.release && write.acquire) {
            return Err(
                self.err("an AMO whose read releases or whose write acquires without being .aqrl")
            );
        }
        let a = self.address(addr, &[])?;
        let mut s = self.operand(operand, &[a])?;
        let amo = match op {
            RmwOp::Xchg => Amo::Swap,
            RmwOp::Add => Amo::Add,
            RmwOp::And => Amo::And,
            RmwOp::Or => Amo::Or,
            RmwOp::Xor => Amo::Xor,
            RmwOp::Max => Amo::Max,
            RmwOp::Min => Amo::Min,
            RmwOp::Umax => Amo::Maxu,
            RmwOp::Umin => Amo::Minu,
            // old - v is AMOADD of -v; old & !v is AMOAND of !v (what
            // compilers emit for fetch_sub; the mapping's "fetch_sub as
            // an add").
            RmwOp::Sub | RmwOp::Clr => {
                let t = self.free(&[a, s])?;
                if op == RmwOp::Sub {
                    self.asm.op(Op::Sub, t, R::ZERO, s);
                    s = t;
                    Amo::Add
                } else {
                    self.asm.op_imm(OpImm::Xori, t, s, -1);
                    s = t;
                    Amo::And
                }
            }
        };
        let d = self.dst(dst)?;
        self.asm.amo(amo, w, aq, rl, d, s, a);
        Ok(())
    }

    /// A compare-exchange as the spec's Table A.6 writes it:
    ///
    /// ```text
    /// retry: lr.d{.aq|.aqrl} old, (a)
    ///        bne  old, want, done
    ///        sc.d{.rl} st, desired, (a)
    ///        bnez st, retry          (a strong CAS only)
    /// done:
    /// ```
    ///
    /// The retry loop is the spec's constrained LR/SC loop (chapter 8.3:
    /// four base instructions, only a backward branch to the LR), which
    /// the spec guarantees eventually succeeds, so it takes no loop
    /// budget. A weak CAS retries too: it may fail spuriously but need
    /// not (as Arm's CAS, which never does), and a spurious failure would
    /// have to be told from a real one for the result.
    #[allow(clippy::too_many_arguments)]
    fn cas(
        &mut self,
        result: Option<usize>,
        addr: &Expr,
        expected: &CasExpected,
        desired: &Expr,
        read: &Annot,
        write: &Annot,
        fail: &Annot,
    ) -> Result<(), Unencodable> {
        let w = self.width(read)?;
        let a = self.address(addr, &[])?;
        let d = self.operand(desired, &[a])?;
        let old = self.free(&[a, d])?;
        let want = self.free(&[a, d, old])?;
        let mut mem = None;
        match expected {
            CasExpected::Reg(r) => {
                let r = self.reg(*r)?;
                self.asm.mv(want, r);
            }
            CasExpected::Value(e) => self.eval(e, want, &[a, d, old])?,
            CasExpected::Mem(e) => {
                let m = self.operand(e, &[a, d, old, want])?;
                self.asm.load(Width::D, want, m, 0);
                mem = Some(m);
            }
        }
        let mut av = vec![a, d, old, want];
        av.extend(mem);
        let st = self.free(&av)?;
        // One LR serves success and failure: its bits are the join of the
        // two orders' (the mapping gives lr.aq / lr.aqrl for the success
        // order and the model judges a failed CAS by the failure order's
        // LR), so the hardware is never weaker than either judgement.
        let (aq, rl) = (read.acquire || fail.acquire, read.release || fail.release);
        let retry = self.asm.label();
        let done = self.asm.label();
        self.asm.bind(retry);
        self.asm.lr(w, aq, rl, old, a);
        self.asm.branch(Cond::Ne, old, want, done);
        self.asm.sc(w, write.acquire, write.release, st, d, a);
        self.asm.branch(Cond::Ne, st, R::ZERO, retry);
        self.asm.bind(done);
        self.finish_cas(result, expected, old, want, mem)
    }

    /// After a CAS: the boolean result (`old == want`), the old value into
    /// the expected register, or into the expected location on failure.
    fn finish_cas(
        &mut self,
        result: Option<usize>,
        expected: &CasExpected,
        old: R,
        want: R,
        mem: Option<R>,
    ) -> Result<(), Unencodable> {
        if let CasExpected::Reg(r) = expected {
            let r = self.reg(*r)?;
            self.asm.mv(r, old);
        }
        if let Some(m) = mem {
            let ok = self.asm.label();
            self.asm.branch(Cond::Eq, old, want, ok);
            self.asm.store(Width::D, old, m, 0);
            self.asm.bind(ok);
        }
        if let Some(res) = result {
            let r = self.reg(res)?;
            self.compare_into(BinOp::Eq, old, want, r);
        }
        Ok(())
    }
}

/// The branch instruction for a comparison, and whether its operands are
/// swapped (`a > b` is `b < a`, `a <= b` is `b >= a`).
fn branch_cond(op: BinOp) -> Option<(Cond, bool)> {
    Some(match op {
        BinOp::Eq => (Cond::Eq, false),
        BinOp::Ne => (Cond::Ne, false),
        BinOp::Lt => (Cond::Lt, false),
        BinOp::Ge => (Cond::Ge, false),
        BinOp::Gt => (Cond::Lt, true),
        BinOp::Le => (Cond::Ge, true),
        BinOp::Ult => (Cond::Ltu, false),
        BinOp::Uge => (Cond::Geu, false),
        BinOp::Ugt => (Cond::Ltu, true),
        BinOp::Ule => (Cond::Geu, true),
        _ => return None,
    })
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
