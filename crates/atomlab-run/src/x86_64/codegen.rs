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

use std::collections::BTreeSet;

use atomlab_litmus::{BinOp, CasExpected, Expr, Fence, Instr, RmwOp, Thread, Value};

use super::encode::{Alu, Asm, Cond, Gpr};
use crate::buffer::Label;
use crate::frame::FrameLayout;
use crate::mentions::used;
use crate::Unencodable;

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

struct Gen<'a> {
    asm: Asm,
    thread: &'a Thread,
    layout: &'a FrameLayout,
    /// Machine register of each test register, if used.
    regs: Vec<Option<Gpr>>,
    /// Machine register holding each location's address, if used.
    locs: Vec<Option<Gpr>>,
    /// Scratch registers, RAX first.
    scratch: Vec<Gpr>,
    labels: Vec<Label>,
    /// The instruction being generated, for errors.
    at: usize,
}

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
fn check_addresses(th: &Thread) -> Result<(), Unencodable> {
    let w = written(th);
    // The value the harness loads into the register (Thread::init_value),
    // not any of the values the test lists for it.
    let fixed = |r: usize| !w.contains(&r) && matches!(th.init_value(r), Value::Loc(_));
    for (index, i) in th.code.iter().enumerate() {
        let mut addrs: Vec<&Expr> = Vec::new();
        match i {
            Instr::Load { addr, .. }
            | Instr::Store { addr, .. }
            | Instr::StoreExclusive { addr, .. }
            | Instr::Rmw { addr, .. } => addrs.push(addr),
            Instr::Cas { addr, expected, .. } => {
                addrs.push(addr);
                if let CasExpected::Mem(e) = expected {
                    addrs.push(e);
                }
            }
            _ => {}
        }
        for a in addrs {
            let ok = match a {
                Expr::Const(Value::Loc(_)) => true,
                Expr::Reg(r) => fixed(*r),
                _ => false,
            };
            if !ok {
                let name = match a {
                    Expr::Reg(r) => th.regs.get(*r).cloned().unwrap_or_default(),
                    _ => "a computed expression".into(),
                };
                return Err(Unencodable {
                    thread: th.id,
                    index,
                    what: format!(
                        "a memory access through {name}, which is not always a location's address (only [loc] and registers initialised to a location and never written are run)"
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Generates the machine code of `th` for frames laid out as `layout`.
pub fn thread_code(th: &Thread, layout: &FrameLayout) -> Result<Vec<u8>, Unencodable> {
    check_addresses(th)?;
    let (used_regs, used_locs) = used(th);
    // Location addresses first (every access needs one), then test
    // registers; registers beyond the pool stay in the frame (spilled),
    // keeping two pool registers as scratch for spilled operands.
    if used_locs.len() > POOL.len() - 2 {
        return Err(Unencodable {
            thread: th.id,
            index: 0,
            what: format!(
                "a thread that uses {} locations; the x86-64 code generator keeps at most {} location addresses in machine registers",
                used_locs.len(),
                POOL.len() - 2
            ),
        });
    }
    let mut pool = POOL.iter().copied();
    let mut locs = vec![None; layout.locations];
    for &l in &used_locs {
        if l >= locs.len() {
            return Err(Unencodable {
                thread: th.id,
                index: 0,
                what: format!("location number {l} is not declared by the test"),
            });
        }
        locs[l] = pool.next();
    }
    let spill = used_locs.len() + used_regs.len() > POOL.len();
    let in_regs = if spill {
        POOL.len() - 2 - used_locs.len()
    } else {
        used_regs.len()
    };
    let mut regs = vec![None; th.regs.len()];
    for (k, &r) in used_regs.iter().enumerate() {
        if r >= regs.len() {
            return Err(Unencodable {
                thread: th.id,
                index: 0,
                what: format!("register number {r} is not declared by the thread"),
            });
        }
        if k < in_regs {
            regs[r] = pool.next();
        }
    }
    let mut scratch = vec![Gpr::RAX, Gpr::R11];
    scratch.extend(pool);
    let mut asm = Asm::new();
    let labels: Vec<Label> = (0..=th.code.len()).map(|_| asm.label()).collect();
    let mut g = Gen {
        asm,
        thread: th,
        layout,
        regs,
        locs,
        scratch,
        labels,
        at: 0,
    };
    g.generate()?;
    g.asm.finish().ok_or(Unencodable {
        thread: th.id,
        index: th.code.len(),
        what: "a branch target outside the thread".into(),
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

    fn saved(&self) -> Vec<Gpr> {
        let in_use: Vec<Gpr> = self
            .regs
            .iter()
            .chain(&self.locs)
            .flatten()
            .copied()
            .collect();
        CALLEE_SAVED
            .iter()
            .copied()
            .filter(|r| in_use.contains(r) || self.scratch.contains(r))
            .collect()
    }

    fn generate(&mut self) -> Result<(), Unencodable> {
        let saved = self.saved();
        for &r in &saved {
            self.asm.push(r);
        }
        for (l, m) in self.locs.clone().iter().enumerate() {
            if let Some(m) = m {
                self.asm.load(*m, FRAME, self.layout.loc_offset(l));
            }
        }
        for (r, m) in self.regs.clone().iter().enumerate() {
            if let Some(m) = m {
                self.asm.load(*m, FRAME, self.layout.reg_offset(r));
            }
        }
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
                self.asm.store(FRAME, self.layout.reg_offset(r), *m);
            }
        }
        for &r in saved.iter().rev() {
            self.asm.pop(r);
        }
        self.asm.ret();
        Ok(())
    }

    /// The machine register holding test register `r`, or `r` loaded from
    /// its frame slot into a scratch register not in `avoid`.
    fn read(&mut self, r: usize, avoid: &[Gpr]) -> Result<Gpr, Unencodable> {
        if r >= self.regs.len() {
            return Err(self.err(format!("register number {r} is not declared")));
        }
        match self.regs[r] {
            Some(g) => Ok(g),
            None => {
                let s = self.free(avoid)?;
                self.asm.load(s, FRAME, self.layout.reg_offset(r));
                Ok(s)
            }
        }
    }

    /// Sets test register `r` to `src` (a move, or a store to its slot).
    fn write(&mut self, r: usize, src: Gpr) -> Result<(), Unencodable> {
        if r >= self.regs.len() {
            return Err(self.err(format!("register number {r} is not declared")));
        }
        match self.regs[r] {
            Some(g) if g == src => {}
            Some(g) => self.asm.mov(g, src),
            None => self.asm.store(FRAME, self.layout.reg_offset(r), src),
        }
        Ok(())
    }

    /// A scratch register not in `avoid`.
    fn free(&self, avoid: &[Gpr]) -> Result<Gpr, Unencodable> {
        self.scratch
            .iter()
            .copied()
            .find(|r| !avoid.contains(r))
            .ok_or_else(|| self.err("the expression needs more scratch registers than are free"))
    }

    /// The register already holding `e` (a test register or a location's
    /// address), or `e` evaluated into a scratch register not in `avoid`.
    fn operand(&mut self, e: &Expr, avoid: &[Gpr]) -> Result<Gpr, Unencodable> {
        match e {
            Expr::Reg(r) => self.read(*r, avoid),
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

    /// Evaluates `e` into `dst`, using scratch registers not in `avoid`.
    fn eval(&mut self, e: &Expr, dst: Gpr, avoid: &[Gpr]) -> Result<(), Unencodable> {
        match e {
            Expr::Const(Value::Int(i)) => self.asm.mov_imm(dst, *i),
            Expr::Const(Value::Loc(_)) | Expr::Reg(_) => {
                let src = self.operand(e, avoid)?;
                if src != dst {
                    self.asm.mov(dst, src);
                }
            }
            Expr::Not(a) => {
                self.eval(a, dst, avoid)?;
                self.asm.test(dst, dst);
                self.asm.set(Cond::E, dst);
            }
            Expr::Bin(op, a, b) => {
                self.eval(a, dst, avoid)?;
                let mut avoid2 = avoid.to_vec();
                avoid2.push(dst);
                // Shifts by a constant take an immediate.
                if let (BinOp::Shl | BinOp::Shr, Expr::Const(Value::Int(n))) = (op, &**b) {
                    let n = u8::try_from(*n)
                        .ok()
                        .filter(|n| *n < 64)
                        .ok_or_else(|| self.err(format!("shift by {n}")))?;
                    if *op == BinOp::Shl {
                        self.asm.shl_imm(dst, n);
                    } else {
                        self.asm.shr_imm(dst, n);
                    }
                    return Ok(());
                }
                let src = self.operand(b, &avoid2)?;
                self.bin(*op, dst, src, &avoid2)?;
            }
        }
        Ok(())
    }

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
            BinOp::Eq => cmp(self, Cond::E),
            BinOp::Ne => cmp(self, Cond::Ne),
            BinOp::Lt => cmp(self, Cond::L),
            BinOp::Le => cmp(self, Cond::Le),
            BinOp::Gt => cmp(self, Cond::G),
            BinOp::Ge => cmp(self, Cond::Ge),
            BinOp::Ult => cmp(self, Cond::B),
            BinOp::Ule => cmp(self, Cond::Be),
            BinOp::Ugt => cmp(self, Cond::A),
            BinOp::Uge => cmp(self, Cond::Ae),
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

    fn instr(&mut self, ins: &Instr) -> Result<(), Unencodable> {
        match ins {
            Instr::Load { dst, addr, .. } => {
                let a = self.operand(addr, &[])?;
                match dst.and_then(|r| self.regs.get(r).copied().flatten()) {
                    Some(d) => self.asm.load(d, a, 0),
                    None => {
                        let d = self.free(&[a])?;
                        self.asm.load(d, a, 0);
                        if let Some(r) = dst {
                            self.write(*r, d)?;
                        }
                    }
                }
            }
            Instr::Store { addr, value, .. } => {
                let a = self.operand(addr, &[])?;
                match value {
                    Expr::Const(Value::Int(i)) if i32::try_from(*i).is_ok() => {
                        self.asm.store_imm(a, 0, *i as i32)
                    }
                    _ => {
                        let v = self.operand(value, &[a])?;
                        self.asm.store(a, 0, v);
                    }
                }
            }
            Instr::Rmw {
                dst,
                addr,
                op,
                operand,
                ..
            } => self.rmw(*dst, addr, *op, operand)?,
            Instr::Cas {
                result,
                addr,
                expected,
                desired,
                ..
            } => self.cas(*result, addr, expected, desired)?,
            Instr::Fence(Fence::Mfence) => self.asm.mfence(),
            Instr::Fence(Fence::Lfence) => self.asm.lfence(),
            Instr::Fence(Fence::Sfence) => self.asm.sfence(),
            Instr::Fence(f) => {
                return Err(self.err(format!(
                    "the fence {f} (not an x86 instruction; C fences go through the C11->x86 mapping first)"
                )))
            }
            Instr::SyncSrcu { .. } => {
                return Err(self.err("synchronize_srcu (a Linux-kernel primitive, not an x86 instruction)"))
            }
            Instr::StoreExclusive { .. } => {
                return Err(self.err("a store-exclusive (an Arm instruction, not x86)"))
            }
            Instr::Assign { dst, expr } => {
                match (expr, self.regs.get(*dst).copied().flatten()) {
                    (Expr::Const(Value::Int(i)), Some(d)) => self.asm.mov_imm(d, *i),
                    _ => {
                        // Evaluate aside: the expression may read `dst`.
                        let s = self.free(&[])?;
                        self.eval(expr, s, &[])?;
                        self.write(*dst, s)?;
                    }
                }
            }
            Instr::Select { dst, cond, a, b } => {
                let s = self.free(&[])?;
                self.eval(b, s, &[])?;
                let va = self.operand(a, &[s])?;
                let c = self.operand(cond, &[s, va])?;
                self.asm.test(c, c);
                self.asm.cmov(Cond::Ne, s, va);
                self.write(*dst, s)?;
            }
            Instr::Branch { cond, target } => {
                let Some(&label) = self.labels.get(*target) else {
                    return Err(self.err(format!("a branch to instruction {target}, outside the thread")));
                };
                let end = self.labels[self.thread.code.len()];
                if *target <= self.at {
                    // A backward branch: bounded by the frame's loop budget.
                    self.asm.dec_mem(FRAME, self.layout.budget_offset());
                    self.asm.jcc(Cond::E, end);
                }
                match cond {
                    None => self.asm.jmp(label),
                    Some(c) => {
                        let r = self.operand(c, &[])?;
                        self.asm.test(r, r);
                        self.asm.jcc(Cond::Ne, label);
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
    ) -> Result<(), Unencodable> {
        let a = self.operand(addr, &[Gpr::RAX])?;
        let write_back = |g: &mut Self| -> Result<(), Unencodable> {
            if let Some(d) = dst {
                g.write(d, Gpr::RAX)?;
            }
            Ok(())
        };
        match op {
            // RISC-V's amomax/amomin: x86 has no such locked instruction,
            // and a CAS loop would not be the test's one instruction.
            RmwOp::Max | RmwOp::Min | RmwOp::Umax | RmwOp::Umin => {
                return Err(self.err(format!(
                    "an atomic {op:?}: x86-64 has no single instruction for it"
                )));
            }
            RmwOp::Xchg => {
                self.eval(operand, Gpr::RAX, &[a])?;
                self.asm.xchg_mem(a, 0, Gpr::RAX);
                write_back(self)?;
            }
            RmwOp::Add | RmwOp::Sub => {
                self.eval(operand, Gpr::RAX, &[a])?;
                if op == RmwOp::Sub {
                    self.asm.neg(Gpr::RAX);
                }
                self.asm.lock_xadd(a, 0, Gpr::RAX);
                write_back(self)?;
            }
            RmwOp::Or | RmwOp::And | RmwOp::Xor | RmwOp::Clr => {
                let alu = match op {
                    RmwOp::Or => Alu::Or,
                    RmwOp::Xor => Alu::Xor,
                    _ => Alu::And,
                };
                let mut o = self.operand(operand, &[Gpr::RAX, a])?;
                if op == RmwOp::Clr {
                    let t = self.free(&[Gpr::RAX, a, o])?;
                    self.asm.mov(t, o);
                    self.asm.not(t);
                    o = t;
                }
                if dst.is_none() {
                    // No old value wanted: one `LOCK op [a], o`.
                    self.asm.lock_alu_mem(alu, a, 0, o);
                    return Ok(());
                }
                // The old value is wanted: a CMPXCHG loop. It ends because
                // each failure means another thread wrote the location, and
                // a test's threads write finitely often.
                let t = self.free(&[Gpr::RAX, a, o])?;
                self.asm.load(Gpr::RAX, a, 0);
                let again = self.asm.label();
                self.asm.bind(again);
                self.asm.mov(t, Gpr::RAX);
                self.asm.alu(alu, t, o);
                self.asm.lock_cmpxchg(a, 0, t);
                self.asm.jcc(Cond::Ne, again);
                write_back(self)?;
            }
        }
        Ok(())
    }

    fn cas(
        &mut self,
        result: Option<usize>,
        addr: &Expr,
        expected: &CasExpected,
        desired: &Expr,
    ) -> Result<(), Unencodable> {
        let a = self.operand(addr, &[Gpr::RAX])?;
        let d = self.operand(desired, &[Gpr::RAX, a])?;
        let mut mem = None;
        match expected {
            CasExpected::Reg(r) => {
                let r = self.read(*r, &[Gpr::RAX, a, d])?;
                self.asm.mov(Gpr::RAX, r);
            }
            CasExpected::Value(e) => self.eval(e, Gpr::RAX, &[a, d])?,
            CasExpected::Mem(e) => {
                // C's `expected` pointer: read plainly before, written with
                // the old value after a failure.
                let m = self.operand(e, &[Gpr::RAX, a, d])?;
                self.asm.load(Gpr::RAX, m, 0);
                mem = Some(m);
            }
        }
        // Flags from CMPXCHG survive the MOVs below (MOV does not write them).
        self.asm.lock_cmpxchg(a, 0, d);
        if let CasExpected::Reg(r) = expected {
            self.write(*r, Gpr::RAX)?;
        }
        if let Some(m) = mem {
            let ok = self.asm.label();
            self.asm.jcc(Cond::E, ok);
            self.asm.store(m, 0, Gpr::RAX);
            self.asm.bind(ok);
        }
        if let Some(res) = result {
            // SETcc, MOVZX and the write-back leave the flags alone.
            let s = self.free(&[Gpr::RAX])?;
            self.asm.set(Cond::E, s);
            self.write(res, s)?;
        }
        Ok(())
    }
}
