//! The code generator every backend shares: from a thread's lowered
//! [`Instr`]s to one function of machine code over the instance frame
//! (see [`crate::frame`]). What is the same on every ISA is here, once:
//!
//! - register allocation: every location the thread mentions gets a
//!   machine register for its address, then its test registers (on x86-64,
//!   those beyond the pool stay in the frame: spilled); unused pool
//!   registers are extra scratch;
//! - the frame: save the callee-saved registers used, load the location
//!   addresses and test registers (and, where it lives in a register, the
//!   loop budget) from the frame, run the body, store the test registers
//!   and the budget back, restore, return;
//! - the label loop: one label per instruction and one after the last, so
//!   a branch to instruction `i` jumps to its label and the end is the
//!   epilogue;
//! - the loop budget: a backward branch first counts the budget down and
//!   leaves through the epilogue when it reaches zero, so every loop is
//!   bounded;
//! - operands and expressions: a test register, a location's address, the
//!   zero register for 0 where the ISA has one, or an expression evaluated
//!   into a scratch register; fences and Linux-kernel primitives foreign to
//!   the ISA are refused with the same words everywhere.
//!
//! What differs is a [`Target`]: the registers (by each ISA's calling
//! convention: the System V AMD64 ABI, the AAPCS64, the RISC-V psABI), how
//! to load, store, move and branch, the fences, and the lowering of the
//! instructions with an ISA's own spelling (loads and stores with their
//! access kind, exclusives, read-modify-writes, compare-exchange, select).
//! The backends' module docs say which manual each follows (the Intel SDM,
//! the Arm ARM, the RISC-V ISA manual) and why each instruction is the one
//! the test stands for.

use atomlab_litmus::{Annot, BinOp, CasExpected, Expr, Fence, Instr, RmwOp, Thread, Value};

use crate::buffer::{Buffer, Fixup, Label};
use crate::frame::FrameLayout;
use crate::mentions::used;
use crate::Unencodable;

/// An encoder's buffer, as a target's code generator writes it.
pub(crate) type Asm<T> = Buffer<<T as Target>::Fixup>;

/// An encoder's `op dst, src` on two registers (`NEG`, `MVN`, `SNEZ`…).
pub(crate) type RegOp<T> = fn(&mut Asm<T>, <T as Target>::Reg, <T as Target>::Reg);

/// An encoder's `op dst, src, #n` (a shift by an immediate).
pub(crate) type ImmOp<T> = fn(&mut Asm<T>, <T as Target>::Reg, <T as Target>::Reg, u32);

/// A base and an index register.
pub(crate) type BaseIndex<T> = (<T as Target>::Reg, <T as Target>::Reg);

/// How errors name an ISA.
pub(crate) struct Names {
    /// The code generator's ("AArch64").
    isa: &'static str,
    /// An instruction of it ("an AArch64 instruction").
    instruction: &'static str,
    /// The C11 mapping a C test goes through to it ("C11->AArch64").
    mapping: &'static str,
}

impl Names {
    /// The ISA's name, one of its instructions, its C11 mapping.
    pub(crate) const fn new(
        isa: &'static str,
        instruction: &'static str,
        mapping: &'static str,
    ) -> Names {
        Names {
            isa,
            instruction,
            mapping,
        }
    }
}

/// What one ISA's code generator says about itself.
pub(crate) trait Target: Sized {
    /// A machine register.
    type Reg: Copy + Eq + 'static;
    /// What its code is made of and how its branches hold an offset.
    type Fixup: Fixup;

    /// How errors name the ISA.
    const NAMES: Names;
    /// Why [`Buffer::finish`] can fail on this ISA.
    const UNRESOLVED: &'static str = "a branch target outside the thread";
    /// The register holding the frame's address (the first argument).
    const FRAME: Self::Reg;
    /// The register the loop budget lives in, or `None` where it is
    /// counted down in the frame.
    const BUDGET: Option<Self::Reg>;
    /// The register that reads as zero, if the ISA has one.
    const ZERO: Option<Self::Reg>;
    /// Registers kept for scratch.
    const SCRATCH: &'static [Self::Reg];
    /// Whether test registers beyond the pool stay in the frame (keeping
    /// two pool registers as scratch for them) instead of being refused.
    const SPILLS: bool = false;
    /// The largest frame offset the frame loads reach, and the error for
    /// a frame beyond it; `None` when they reach any.
    const FRAME_REACH: Option<(i32, &'static str)> = None;

    /// Registers test values and location addresses may live in, in the
    /// order they are given out.
    fn pool() -> Vec<Self::Reg>;
    /// Whether the calling convention has the callee keep `r`.
    fn callee_saved(r: Self::Reg) -> bool;

    /// Whether an unused pool register may serve as scratch: by default
    /// only caller-saved ones, as the prologue saves just the callee-saved
    /// registers assigned.
    fn spare_scratch(r: Self::Reg) -> bool {
        !Self::callee_saved(r)
    }

    /// Refuses a thread with a memory access that may reach outside the
    /// instance (see [`crate::addresses`]).
    fn check_addresses(th: &Thread) -> Result<(), Unencodable> {
        crate::addresses::check_addresses(th)
    }

    /// Emits one of the instructions the skeleton itself needs.
    fn emit(asm: &mut Asm<Self>, b: Basic<'_, Self::Reg>);

    /// The callee-saved registers to save, in their order.
    fn saved(g: &Gen<'_, Self>) -> Vec<Self::Reg> {
        g.regs
            .iter()
            .chain(&g.locs)
            .flatten()
            .copied()
            .filter(|r| Self::callee_saved(*r))
            .collect()
    }

    /// Counts the loop budget down by one and branches to `end` when it
    /// reaches zero.
    fn count_down(asm: &mut Asm<Self>, layout: &FrameLayout, end: Label);
    /// Branches to `label`, always (`cond` is `None`) or when `cond` is
    /// not zero.
    fn branch(g: &mut Gen<'_, Self>, cond: Option<&Expr>, label: Label) -> Result<(), Unencodable>;
    /// Emits the fence; `false` when it is not one of this ISA's.
    fn fence(g: &mut Gen<'_, Self>, f: &Fence) -> Result<bool, Unencodable>;
    /// Evaluates `!a` (logical not) or `a op b` into `dst`, using scratch
    /// registers not in `avoid` (constants and registers are the
    /// generator's own).
    fn eval_op(
        g: &mut Gen<'_, Self>,
        e: &Expr,
        dst: Self::Reg,
        avoid: &[Self::Reg],
    ) -> Result<(), Unencodable>;

    /// `dst = expr`: a constant or a copy directly, an expression that
    /// reads `dst` evaluated aside then moved (it may read `dst` in a part
    /// evaluated after `dst` is written), any other into `dst`.
    fn assign(g: &mut Gen<'_, Self>, dst: usize, expr: &Expr) -> Result<(), Unencodable> {
        let d = g.reg(dst)?;
        match expr {
            Expr::Const(Value::Int(i)) => mov_imm::<Self>(&mut g.asm, d, *i),
            Expr::Reg(_) | Expr::Const(Value::Loc(_)) => {
                let s = g.operand(expr, &[])?;
                if s != d {
                    mov::<Self>(&mut g.asm, d, s);
                }
            }
            _ if reads(expr, dst) => {
                let s = g.free(&[])?;
                g.eval(expr, s, &[])?;
                mov::<Self>(&mut g.asm, d, s);
            }
            _ => g.eval(expr, d, &[])?,
        }
        Ok(())
    }

    /// A store-exclusive (store-conditional).
    fn store_exclusive(g: &mut Gen<'_, Self>, sx: &StoreEx<'_>) -> Result<(), Unencodable>;
    /// A read-modify-write.
    fn rmw(g: &mut Gen<'_, Self>, r: &Rmw<'_>) -> Result<(), Unencodable>;
    /// A compare-exchange.
    fn cas(g: &mut Gen<'_, Self>, r: &Cas<'_>) -> Result<(), Unencodable>;

    /// The other instructions with this ISA's own spelling: loads,
    /// stores, selects.
    fn instr(g: &mut Gen<'_, Self>, ins: &Instr) -> Result<(), Unencodable>;
}

/// A store-exclusive's parts ([`Instr::StoreExclusive`]).
#[derive(Clone, Copy)]
pub(crate) struct StoreEx<'i> {
    pub(crate) status: Option<usize>,
    pub(crate) addr: &'i Expr,
    pub(crate) value: &'i Expr,
    pub(crate) annot: &'i Annot,
}

/// A read-modify-write's parts ([`Instr::Rmw`]).
#[derive(Clone, Copy)]
pub(crate) struct Rmw<'i> {
    pub(crate) dst: Option<usize>,
    pub(crate) addr: &'i Expr,
    pub(crate) op: RmwOp,
    pub(crate) operand: &'i Expr,
    pub(crate) read: &'i Annot,
    pub(crate) write: &'i Annot,
    /// A C read-modify-write not mapped to the ISA.
    pub(crate) single: bool,
}

/// A compare-exchange's parts ([`Instr::Cas`]).
#[derive(Clone, Copy)]
pub(crate) struct Cas<'i> {
    pub(crate) result: Option<usize>,
    pub(crate) addr: &'i Expr,
    pub(crate) expected: &'i CasExpected,
    pub(crate) desired: &'i Expr,
    pub(crate) read: &'i Annot,
    pub(crate) write: &'i Annot,
    /// The failure order's read.
    pub(crate) fail: &'i Annot,
}

/// One thread's code generation in progress.
pub(crate) struct Gen<'a, T: Target> {
    pub(crate) asm: Asm<T>,
    pub(crate) thread: &'a Thread,
    pub(crate) layout: &'a FrameLayout,
    /// Machine register of each test register, if it has one.
    pub(crate) regs: Vec<Option<T::Reg>>,
    /// Machine register holding each location's address, if used.
    pub(crate) locs: Vec<Option<T::Reg>>,
    /// Scratch registers: the target's, then unused pool registers.
    pub(crate) scratch: Vec<T::Reg>,
    /// One per instruction, and one for the end (the epilogue).
    labels: Vec<Label>,
    /// The instruction being generated, for errors.
    pub(crate) at: usize,
    /// Loads of the thread's own frame after each memory access
    /// ([`crate::PrepareOptions::spacing`]).
    spacing: u32,
}

/// Generates the machine code of `th` for frames laid out as `layout`,
/// with `spacing` loads of the thread's own frame after each of its
/// memory accesses (none in a thread with store-exclusives: a memory
/// access between the exclusive pair may clear the monitor).
pub(crate) fn thread_code<T: Target>(
    th: &Thread,
    layout: &FrameLayout,
    spacing: u32,
) -> Result<Vec<u8>, Unencodable> {
    let err = |index: usize, what: String| Unencodable {
        thread: th.id,
        index,
        what,
    };
    T::check_addresses(th)?;
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
    let pool_regs = T::pool();
    let pool = pool_regs.len();
    let used_total = used_locs.len() + used_regs.len();
    // Location addresses first (every access needs one), then test
    // registers.
    let in_regs = if T::SPILLS {
        // Registers beyond the pool stay in the frame (spilled), keeping
        // two pool registers as scratch for spilled operands.
        if used_locs.len() > pool - 2 {
            return Err(err(
                0,
                format!(
                    "a thread that uses {} locations; the {} code generator keeps at most {} location addresses in machine registers",
                    used_locs.len(),
                    T::NAMES.isa,
                    pool - 2
                ),
            ));
        }
        if used_total > pool {
            pool - 2 - used_locs.len()
        } else {
            used_regs.len()
        }
    } else {
        if used_total > pool {
            return Err(err(
                0,
                format!(
                    "a thread that uses {used_total} registers and locations; the {} code generator keeps at most {pool} in machine registers",
                    T::NAMES.isa,
                ),
            ));
        }
        used_regs.len()
    };
    if let Some((reach, what)) = T::FRAME_REACH {
        if layout.budget_offset() > reach {
            return Err(err(0, what.into()));
        }
    }
    let mut free = pool_regs.into_iter();
    let mut locs = vec![None; layout.locations];
    for &l in &used_locs {
        locs[l] = free.next();
    }
    let mut regs = vec![None; th.regs.len()];
    for &r in used_regs.iter().take(in_regs) {
        regs[r] = free.next();
    }
    let mut scratch = T::SCRATCH.to_vec();
    scratch.extend(free.filter(|r| T::spare_scratch(*r)));
    let mut asm = Asm::<T>::new();
    let labels = (0..=th.code.len()).map(|_| asm.label()).collect();
    let mut g = Gen::<T> {
        asm,
        thread: th,
        layout,
        regs,
        locs,
        scratch,
        labels,
        at: 0,
        spacing: if th
            .code
            .iter()
            .any(|i| matches!(i, Instr::StoreExclusive { .. }))
        {
            0
        } else {
            spacing
        },
    };
    g.generate()?;
    g.asm
        .finish()
        .ok_or_else(|| err(th.code.len(), T::UNRESOLVED.into()))
}

impl<T: Target> Gen<'_, T> {
    /// An error at the instruction being generated.
    pub(crate) fn err(&self, what: impl Into<String>) -> Unencodable {
        Unencodable {
            thread: self.thread.id,
            index: self.at,
            what: what.into(),
        }
    }

    fn generate(&mut self) -> Result<(), Unencodable> {
        let saved = T::saved(self);
        let frame = T::FRAME;
        let layout = self.layout;
        T::emit(
            &mut self.asm,
            Basic::Saved {
                regs: &saved,
                save: true,
            },
        );
        for (l, m) in self.locs.iter().enumerate() {
            if let Some(m) = m {
                load::<T>(&mut self.asm, *m, frame, layout.loc_offset(l));
            }
        }
        for (r, m) in self.regs.iter().enumerate() {
            if let Some(m) = m {
                load::<T>(&mut self.asm, *m, frame, layout.reg_offset(r));
            }
        }
        if let Some(b) = T::BUDGET {
            load::<T>(&mut self.asm, b, frame, layout.budget_offset());
        }
        let code = &self.thread.code;
        for (i, ins) in code.iter().enumerate() {
            self.at = i;
            self.asm.bind(self.labels[i]);
            self.instr(ins)?;
            // Spacing (issue 38): loads of the thread's own frame word
            // after an access, the kind of stack traffic a C compiler puts
            // between a thread's accesses, which moves the access's timing
            // against the other threads'. They read thread-private memory
            // into a scratch register, dead between instructions, so they
            // change no value and no ordering the models see.
            if self.spacing > 0
                && matches!(
                    ins,
                    Instr::Load { .. }
                        | Instr::Store { .. }
                        | Instr::Rmw { .. }
                        | Instr::Cas { .. }
                )
            {
                let scratch = self.scratch[0];
                for _ in 0..self.spacing {
                    load::<T>(&mut self.asm, scratch, frame, layout.budget_offset());
                }
            }
        }
        self.at = code.len();
        self.asm.bind(self.labels[code.len()]);
        for (r, m) in self.regs.iter().enumerate() {
            if let Some(m) = m {
                store::<T>(&mut self.asm, *m, frame, layout.reg_offset(r));
            }
        }
        if let Some(b) = T::BUDGET {
            store::<T>(&mut self.asm, b, frame, layout.budget_offset());
        }
        T::emit(
            &mut self.asm,
            Basic::Saved {
                regs: &saved,
                save: false,
            },
        );
        T::emit(&mut self.asm, Basic::Ret);
        Ok(())
    }

    fn instr(&mut self, ins: &Instr) -> Result<(), Unencodable> {
        match ins {
            Instr::Branch { cond, target } => {
                let Some(&label) = self.labels.get(*target) else {
                    return Err(self.err(format!(
                        "a branch to instruction {target}, outside the thread"
                    )));
                };
                if *target <= self.at {
                    // A backward branch: bounded by the loop budget.
                    let end = self.labels[self.thread.code.len()];
                    T::count_down(&mut self.asm, self.layout, end);
                }
                T::branch(self, cond.as_ref(), label)
            }
            Instr::Fence(f) => {
                if T::fence(self, f)? {
                    return Ok(());
                }
                Err(self.err(format!(
                    "the fence {f} (not {}; C fences go through the {} mapping first)",
                    T::NAMES.instruction,
                    T::NAMES.mapping
                )))
            }
            Instr::SyncSrcu { .. } => Err(self.err(format!(
                "synchronize_srcu (a Linux-kernel primitive, not {})",
                T::NAMES.instruction
            ))),
            Instr::Assign { dst, expr } => T::assign(self, *dst, expr),
            Instr::StoreExclusive {
                status,
                addr,
                value,
                annot,
            } => T::store_exclusive(
                self,
                &StoreEx {
                    status: *status,
                    addr,
                    value,
                    annot,
                },
            ),
            Instr::Rmw {
                dst,
                addr,
                op,
                operand,
                read,
                write,
                single,
            } => T::rmw(
                self,
                &Rmw {
                    dst: *dst,
                    addr,
                    op: *op,
                    operand,
                    read,
                    write,
                    single: *single,
                },
            ),
            Instr::Cas {
                result,
                addr,
                expected,
                desired,
                read,
                write,
                fail,
                ..
            } => T::cas(
                self,
                &Cas {
                    result: *result,
                    addr,
                    expected,
                    desired,
                    read,
                    write,
                    fail,
                },
            ),
            _ => T::instr(self, ins),
        }
    }

    /// A scratch register not in `avoid`.
    pub(crate) fn free(&self, avoid: &[T::Reg]) -> Result<T::Reg, Unencodable> {
        self.scratch
            .iter()
            .copied()
            .find(|r| !avoid.contains(r))
            .ok_or_else(|| self.err("the expression needs more scratch registers than are free"))
    }

    /// The machine register of test register `r`.
    pub(crate) fn reg(&self, r: usize) -> Result<T::Reg, Unencodable> {
        self.regs
            .get(r)
            .copied()
            .flatten()
            .ok_or_else(|| self.err(format!("register number {r} has no machine register")))
    }

    /// The register written for an optional destination: its machine
    /// register, or the zero register (the value is dropped).
    pub(crate) fn dst(&self, r: Option<usize>) -> Result<T::Reg, Unencodable> {
        match (r, T::ZERO) {
            (Some(r), _) => self.reg(r),
            (None, Some(z)) => Ok(z),
            (None, None) => Err(self.err("a dropped result (no zero register)")),
        }
    }

    /// Where test register `r` lives: its machine register, or `None`
    /// when it stays in its frame slot (spilled); an error when the
    /// thread does not declare it.
    fn declared(&self, r: usize) -> Result<Option<T::Reg>, Unencodable> {
        self.regs
            .get(r)
            .copied()
            .ok_or_else(|| self.err(format!("register number {r} is not declared")))
    }

    /// The machine register holding test register `r`, or `r` loaded from
    /// its frame slot into a scratch register not in `avoid` (spilled).
    pub(crate) fn read(&mut self, r: usize, avoid: &[T::Reg]) -> Result<T::Reg, Unencodable> {
        match self.declared(r)? {
            Some(g) => Ok(g),
            None => {
                let s = self.free(avoid)?;
                load::<T>(&mut self.asm, s, T::FRAME, self.layout.reg_offset(r));
                Ok(s)
            }
        }
    }

    /// Sets test register `r` to `src` (a move, or a store to its slot).
    pub(crate) fn write(&mut self, r: usize, src: T::Reg) -> Result<(), Unencodable> {
        match self.declared(r)? {
            Some(g) if g == src => {}
            Some(g) => mov::<T>(&mut self.asm, g, src),
            None => store::<T>(&mut self.asm, src, T::FRAME, self.layout.reg_offset(r)),
        }
        Ok(())
    }

    /// The register already holding `e` (a test register, a location's
    /// address, the zero register for 0), or `e` evaluated into a scratch
    /// register not in `avoid`.
    pub(crate) fn operand(&mut self, e: &Expr, avoid: &[T::Reg]) -> Result<T::Reg, Unencodable> {
        match (e, T::ZERO) {
            (Expr::Reg(r), _) => self.read(*r, avoid),
            (Expr::Const(Value::Int(0)), Some(z)) => Ok(z),
            (Expr::Const(Value::Loc(l)), _) => self
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
    pub(crate) fn eval(
        &mut self,
        e: &Expr,
        dst: T::Reg,
        avoid: &[T::Reg],
    ) -> Result<(), Unencodable> {
        match e {
            Expr::Const(Value::Int(i)) => mov_imm::<T>(&mut self.asm, dst, *i),
            Expr::Const(Value::Loc(_)) | Expr::Reg(_) => {
                let src = self.operand(e, avoid)?;
                if src != dst {
                    mov::<T>(&mut self.asm, dst, src);
                }
            }
            Expr::Not(_) | Expr::Bin(..) => T::eval_op(self, e, dst, avoid)?,
            // Symbols are atomlab check's results, never a test's constants.
            Expr::Const(Value::Sym(n)) => {
                return Err(self.err(format!("the unsolved value S{n} as a constant")))
            }
        }
        Ok(())
    }

    /// A compare-exchange's expected value into `into`, using scratch
    /// registers not in `avoid`: a register's value, an expression's, or
    /// (C's `expected` pointer) the value at an address, read plainly
    /// before; that address's register is returned, for writing the old
    /// value back after a failure.
    pub(crate) fn expected(
        &mut self,
        expected: &CasExpected,
        into: T::Reg,
        avoid: &[T::Reg],
    ) -> Result<Option<T::Reg>, Unencodable> {
        let mut av = avoid.to_vec();
        av.push(into);
        match expected {
            CasExpected::Reg(r) => {
                let r = self.read(*r, &av)?;
                mov::<T>(&mut self.asm, into, r);
                Ok(None)
            }
            CasExpected::Value(e) => {
                self.eval(e, into, avoid)?;
                Ok(None)
            }
            CasExpected::Mem(e) => {
                let m = self.operand(e, &av)?;
                load::<T>(&mut self.asm, into, m, 0);
                Ok(Some(m))
            }
        }
    }

    /// For a shift by a constant (`a << n`, `a >> n`): whether it shifts
    /// left, and `n`; `None` for any other operation. `what` names a shift
    /// by an amount outside 0..64 in the error.
    pub(crate) fn const_shift(
        &self,
        op: BinOp,
        b: &Expr,
        what: &str,
    ) -> Result<Option<(bool, u8)>, Unencodable> {
        let (BinOp::Shl | BinOp::Shr, Expr::Const(Value::Int(n))) = (op, b) else {
            return Ok(None);
        };
        let n = u8::try_from(*n)
            .ok()
            .filter(|n| *n < 64)
            .ok_or_else(|| self.err(format!("{what} {n}")))?;
        Ok(Some((op == BinOp::Shl, n)))
    }
}

impl<T: Target> Gen<'_, T> {
    /// For a shift by a constant (`a << n`, `a >> n`) into `dst`: the
    /// ISA's `[left, right]` shift by an immediate, and `true`; `false`
    /// for any other expression.
    pub(crate) fn shift_by_constant(
        &mut self,
        (op, a, b): (BinOp, &Expr, &Expr),
        dst: T::Reg,
        avoid: &[T::Reg],
        [left, right]: [ImmOp<T>; 2],
    ) -> Result<bool, Unencodable> {
        let Some((shl, n)) = self.const_shift(op, b, "a shift by")? else {
            return Ok(false);
        };
        let x = self.operand(a, avoid)?;
        let shift = if shl { left } else { right };
        shift(&mut self.asm, dst, x, n.into());
        Ok(true)
    }

    /// A `base + index` address (a location or a register holding one,
    /// plus a register: an address dependency): the two registers; `None`
    /// for any other address.
    pub(crate) fn base_index(
        &mut self,
        addr: &Expr,
        avoid: &[T::Reg],
    ) -> Result<Option<BaseIndex<T>>, Unencodable> {
        let Expr::Bin(BinOp::Add, a, b) = addr else {
            return Ok(None);
        };
        if !matches!(**a, Expr::Reg(_) | Expr::Const(Value::Loc(_))) {
            return Ok(None);
        }
        let base = self.operand(a, avoid)?;
        let mut av = avoid.to_vec();
        av.push(base);
        let index = self.operand(b, &av)?;
        Ok(Some((base, index)))
    }

    /// A read-modify-write as one atomic instruction (LSE's `LD<op>` and
    /// `SWP`, the A extension's `AMO<op>`), at address `a`: the ISA's
    /// instruction and the register of its operand. `native(op)` is the
    /// ISA's instruction for `op` where it has one; `old - v` runs as an
    /// add of `-v`, and `old & v` and `old & !v` as whichever of the two
    /// the ISA has, on `!v` (what compilers emit for fetch_sub and
    /// fetch_and). `negate` and `invert` write `-v` and `!v`.
    pub(crate) fn single_atomic<A>(
        &mut self,
        rmw: &Rmw<'_>,
        a: T::Reg,
        native: fn(RmwOp) -> Option<A>,
        [negate, invert]: [RegOp<T>; 2],
    ) -> Result<(A, T::Reg), Unencodable> {
        let s = self.operand(rmw.operand, &[a])?;
        if let Some(op) = native(rmw.op) {
            return Ok((op, s));
        }
        let (op, how) = match rmw.op {
            RmwOp::Sub => (RmwOp::Add, negate),
            RmwOp::And => (RmwOp::Clr, invert),
            RmwOp::Clr => (RmwOp::And, invert),
            op => return Err(self.err(format!("an atomic {op:?}"))),
        };
        let Some(op) = native(op) else {
            return Err(self.err(format!("an atomic {:?}", rmw.op)));
        };
        let t = self.free(&[a, s])?;
        how(&mut self.asm, t, s);
        Ok((op, t))
    }
}

/// Whether `e` reads test register `r`.
pub(crate) fn reads(e: &Expr, r: usize) -> bool {
    match e {
        Expr::Reg(x) => *x == r,
        Expr::Const(_) => false,
        Expr::Not(a) => reads(a, r),
        Expr::Bin(_, a, b) => reads(a, r) || reads(b, r),
    }
}

/// Saves (`save`) or restores `saved` in a stack area of whole 16-byte
/// units (the AAPCS64 and the RISC-V psABI keep the stack pointer 16-byte
/// aligned), at `8 * k` from the stack pointer `sp`; `grow(asm, bytes)`
/// moves the stack pointer by `bytes` (negative: down).
pub(crate) fn stack_area<T: Target>(
    asm: &mut Asm<T>,
    (saved, save): (&[T::Reg], bool),
    sp: T::Reg,
    grow: fn(&mut Asm<T>, i64),
) {
    if saved.is_empty() {
        return;
    }
    let area = (saved.len() * 8).next_multiple_of(16) as i64;
    if save {
        grow(asm, -area);
    }
    for (k, r) in saved.iter().enumerate() {
        let off = 8 * k as i32;
        if save {
            store::<T>(asm, *r, sp, off);
        } else {
            load::<T>(asm, *r, sp, off);
        }
    }
    if !save {
        grow(asm, area);
    }
}

/// The instructions the skeleton emits itself, each ISA its own way.
pub(crate) enum Basic<'s, R> {
    /// Saves the callee-saved registers used (`save`, the prologue's
    /// start) or restores them (the epilogue's end, before the return).
    Saved { regs: &'s [R], save: bool },
    /// A 64-bit load of `dst` from `base + off`.
    Load { dst: R, base: R, off: i32 },
    /// A 64-bit store of `src` to `base + off`.
    Store { src: R, base: R, off: i32 },
    /// `dst = src`.
    Mov { dst: R, src: R },
    /// `dst = imm`.
    Imm { dst: R, imm: i64 },
    /// The return.
    Ret,
}

fn load<T: Target>(asm: &mut Asm<T>, dst: T::Reg, base: T::Reg, off: i32) {
    T::emit(asm, Basic::Load { dst, base, off });
}

fn store<T: Target>(asm: &mut Asm<T>, src: T::Reg, base: T::Reg, off: i32) {
    T::emit(asm, Basic::Store { src, base, off });
}

pub(crate) fn mov<T: Target>(asm: &mut Asm<T>, dst: T::Reg, src: T::Reg) {
    T::emit(asm, Basic::Mov { dst, src });
}

fn mov_imm<T: Target>(asm: &mut Asm<T>, dst: T::Reg, imm: i64) {
    T::emit(asm, Basic::Imm { dst, imm });
}

impl<T: Target> Gen<'_, T> {
    /// `a && b` or `a || b` into `dst`: each side made 0 or 1 by
    /// `nonzero(asm, into, x)`, then combined by `both(asm, and, dst, t)`
    /// (`dst = dst & t` or `dst | t`).
    pub(crate) fn logical(
        &mut self,
        and: bool,
        (a, b): (&Expr, &Expr),
        dst: T::Reg,
        avoid: &[T::Reg],
        nonzero: RegOp<T>,
        both: fn(&mut Asm<T>, bool, T::Reg, T::Reg),
    ) -> Result<(), Unencodable> {
        let x = self.operand(a, avoid)?;
        nonzero(&mut self.asm, dst, x);
        let mut av = avoid.to_vec();
        av.push(dst);
        let t = self.free(&av)?;
        av.push(t);
        let y = self.operand(b, &av)?;
        nonzero(&mut self.asm, t, y);
        both(&mut self.asm, and, dst, t);
        Ok(())
    }
}
