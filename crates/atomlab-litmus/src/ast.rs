//! The parsed test. Every architecture's thread code is lowered to one small
//! instruction set ([`Instr`]) over registers and expressions, so the checker
//! has a single interpreter; what an instruction *was* (a C11 memory order, an
//! Arm acquire, an x86 lock prefix) survives as an [`Annot`] on its accesses.

use std::fmt;
use std::fmt::Write as _;

/// The architecture a test is written for (the first word of the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    /// herd's C dialect (C11 atomics).
    C,
    /// x86 assembly (Intel syntax as herd writes it).
    X86,
    /// x86-64 assembly (AT&T syntax, herd's X86_64).
    X86_64,
    /// AArch64 assembly.
    AArch64,
    /// RISC-V assembly (RV64, herd's RISCV).
    RiscV,
}

impl Arch {
    /// herd's name for the architecture.
    pub fn name(self) -> &'static str {
        match self {
            Arch::C => "C",
            Arch::X86 => "X86",
            Arch::X86_64 => "X86_64",
            Arch::AArch64 => "AArch64",
            Arch::RiscV => "RISCV",
        }
    }
}

/// Index of a shared memory location in [`Test::locations`].
pub type LocId = usize;
/// Index of a register in [`Thread::regs`].
pub type Reg = usize;

/// A value in a test: an integer or the address of a location.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    /// A plain integer.
    Int(i64),
    /// The address of a location (`0:X1=x`).
    Loc(LocId),
    /// A value the checker leaves unsolved, as herd7 prints it (`S8`): under
    /// `lkmm`, the value of a load-buffering cycle of plain copies (out of
    /// thin air), numbered as herd7 numbers its symbolic variables. Only
    /// results carry it; no test's text or initial state does.
    Sym(u32),
}

/// C11 memory orders, plus `Na` for plain (non-atomic) accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemOrder {
    /// A plain access (`*x = 1`): not atomic.
    Na,
    /// `memory_order_relaxed`.
    Relaxed,
    /// `memory_order_consume`.
    Consume,
    /// `memory_order_acquire`.
    Acquire,
    /// `memory_order_release`.
    Release,
    /// `memory_order_acq_rel`.
    AcqRel,
    /// `memory_order_seq_cst`.
    SeqCst,
}

impl MemOrder {
    /// The short name used in event labels.
    pub fn short(self) -> &'static str {
        match self {
            MemOrder::Na => "na",
            MemOrder::Relaxed => "rlx",
            MemOrder::Consume => "con",
            MemOrder::Acquire => "acq",
            MemOrder::Release => "rel",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::SeqCst => "sc",
        }
    }
}

/// What kind of access an event is, beyond read/write: the C11 order, the
/// Arm acquire/release flavours, x86 locking, exclusives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Annot {
    /// The C11 order (C tests only).
    pub order: Option<MemOrder>,
    /// Arm acquire (LDAR, LDAXR, …A): herd's set `A`.
    pub acquire: bool,
    /// Arm RCpc acquire (LDAPR): herd's set `Q`.
    pub acquire_pc: bool,
    /// Arm release (STLR, STLXR, …L): herd's set `L`.
    pub release: bool,
    /// x86 locked access (LOCK prefix, XCHG with memory).
    pub locked: bool,
    /// Arm exclusive (LDXR/STXR).
    pub exclusive: bool,
    /// Arm atomic whose result register is the zero register (STADD…).
    pub noret: bool,
    /// Access width in bytes where the instruction fixes it (RISC-V `lw`:
    /// 4), 0 where it does not; a location accessed with two widths needs
    /// mixed-size semantics, which the checker refuses.
    pub width: u8,
    /// The Linux-kernel annotation (linux-kernel.bell's `Accesses` and
    /// lock.cat's lock events); [`LkAccess::None`] outside the Linux dialect
    /// and on plain accesses.
    pub lk: LkAccess,
    /// The event belongs to a Linux atomic read-modify-write instruction
    /// (herd's set `RMW`, failed ones included).
    pub lk_rmw: bool,
    /// `atomic_add_unless(v, a, u)`: the RMW writes only when the value it
    /// reads differs from `u`; otherwise it is a failed RMW (one read).
    pub unless: Option<i64>,
}

/// What a Linux-kernel access is, as linux-kernel.def tags it: herd's
/// `ONCE`, `ACQUIRE`, `RELEASE`, `MB`, `NORETURN` and lock.cat's lock events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LkAccess {
    /// Not a Linux-kernel marked access (plain, or another dialect).
    #[default]
    None,
    /// `READ_ONCE`, `WRITE_ONCE`, `rcu_dereference`, `_relaxed` RMWs, and
    /// the read of a failed compare-exchange.
    Once,
    /// `smp_load_acquire`, `_acquire` RMWs.
    Acquire,
    /// `smp_store_release`, `rcu_assign_pointer`, `_release` RMWs.
    Release,
    /// Fully ordered RMWs (`xchg`, `cmpxchg`, `atomic_*_return`…).
    Mb,
    /// The read of a non-returning atomic (`atomic_inc`…).
    Noreturn,
    /// The read of a `spin_lock` or successful `spin_trylock` (LKR).
    LockRead,
    /// The write of a lock acquisition (LKW).
    LockWrite,
    /// `spin_unlock` (UL).
    Unlock,
    /// The read of a failed `spin_trylock` (LF).
    LockFail,
    /// `spin_is_locked`'s read: RU when it reads 0 (unlocked), RL otherwise.
    IsLocked,
    /// `srcu_read_lock(s)` and `srcu_down_read(s)`: a read of the
    /// srcu_struct `*s` whose value is the index (linux-kernel.def's
    /// `__load{srcu-lock}`; the bell's `Srcu-lock`).
    SrcuLock,
    /// `srcu_read_unlock(s, idx)` and `srcu_up_read(s, idx)`: a write of
    /// `idx` to `*s` (`__store{srcu-unlock}`; the bell's `Srcu-unlock`).
    SrcuUnlock,
}

impl Annot {
    /// A C11 access with the given order.
    pub fn c(order: MemOrder) -> Annot {
        Annot {
            order: Some(order),
            ..Annot::default()
        }
    }
}

/// Barriers and fences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fence {
    /// `atomic_thread_fence(order)`.
    C(MemOrder),
    /// x86 MFENCE.
    Mfence,
    /// x86 LFENCE.
    Lfence,
    /// x86 SFENCE.
    Sfence,
    /// Arm DMB/DSB with its option, as written (`SY`, `ISHLD`…).
    Dmb(Barrier, BarrierOpt),
    /// Arm ISB.
    Isb,
    /// RISC-V `fence pred,succ`: which accesses before it are ordered with
    /// which after it.
    RiscV {
        /// The predecessor set.
        pred: RvAccesses,
        /// The successor set.
        succ: RvAccesses,
    },
    /// RISC-V `fence.tso`: orders loads with later accesses and stores with
    /// later stores.
    Tso,
    /// A Linux-kernel barrier (linux-kernel.bell's `Barriers`).
    Linux(LkFence),
}

impl LkAccess {
    /// herd's name of the tag (lock.cat's for lock events), for labels.
    pub fn name(self) -> &'static str {
        match self {
            LkAccess::None => "",
            LkAccess::Once => "once",
            LkAccess::Acquire => "acquire",
            LkAccess::Release => "release",
            LkAccess::Mb => "mb",
            LkAccess::Noreturn => "noreturn",
            LkAccess::LockRead => "LKR",
            LkAccess::LockWrite => "LKW",
            LkAccess::Unlock => "UL",
            LkAccess::LockFail => "LF",
            LkAccess::IsLocked => "islocked",
            LkAccess::SrcuLock => "srcu-lock",
            LkAccess::SrcuUnlock => "srcu-unlock",
        }
    }
}

/// Linux-kernel barriers, as linux-kernel.def lowers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LkFence {
    /// `smp_mb()`.
    Mb,
    /// `smp_rmb()`.
    Rmb,
    /// `smp_wmb()`.
    Wmb,
    /// `barrier()`.
    Barrier,
    /// `rcu_read_lock()`.
    RcuLock,
    /// `rcu_read_unlock()`.
    RcuUnlock,
    /// `synchronize_rcu()`.
    SyncRcu,
    /// `smp_mb__before_atomic()`.
    BeforeAtomic,
    /// `smp_mb__after_atomic()`.
    AfterAtomic,
    /// `smp_mb__after_spinlock()`.
    AfterSpinlock,
    /// `smp_mb__after_unlock_lock()`.
    AfterUnlockLock,
    /// `smp_mb__after_srcu_read_unlock()`.
    AfterSrcuReadUnlock,
    /// `synchronize_srcu(s)`: an SRCU grace period. Unlike the other
    /// barriers its event has a location, the srcu_struct (herd's
    /// `__srcu{sync-srcu}(s)`); the parser emits it as [`Instr::SyncSrcu`].
    SyncSrcu,
}

impl LkFence {
    /// herd's name of the barrier.
    pub fn name(self) -> &'static str {
        match self {
            LkFence::Mb => "mb",
            LkFence::Rmb => "rmb",
            LkFence::Wmb => "wmb",
            LkFence::Barrier => "barrier",
            LkFence::RcuLock => "rcu-lock",
            LkFence::RcuUnlock => "rcu-unlock",
            LkFence::SyncRcu => "sync-rcu",
            LkFence::BeforeAtomic => "before-atomic",
            LkFence::AfterAtomic => "after-atomic",
            LkFence::AfterSpinlock => "after-spinlock",
            LkFence::AfterUnlockLock => "after-unlock-lock",
            LkFence::AfterSrcuReadUnlock => "after-srcu-read-unlock",
            LkFence::SyncSrcu => "sync-srcu",
        }
    }
}

/// The memory-access part of a RISC-V fence's predecessor or successor set
/// (`r`, `w`, `rw`; the device bits `i` and `o` order nothing here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RvAccesses {
    /// `r`: loads.
    pub r: bool,
    /// `w`: stores.
    pub w: bool,
}

impl RvAccesses {
    /// `rw`.
    pub const RW: RvAccesses = RvAccesses { r: true, w: true };
    /// `r`.
    pub const R: RvAccesses = RvAccesses { r: true, w: false };
    /// `w`.
    pub const W: RvAccesses = RvAccesses { r: false, w: true };

    fn name(self) -> &'static str {
        match (self.r, self.w) {
            (true, true) => "rw",
            (true, false) => "r",
            (false, true) => "w",
            (false, false) => "0",
        }
    }
}

/// DMB or DSB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Barrier {
    /// Data memory barrier.
    Dmb,
    /// Data synchronisation barrier (ordered like a DMB for memory accesses).
    Dsb,
}

/// What a DMB/DSB orders: everything, loads, or stores, and its domain as
/// written. Two bytes: every event of a checked run carries its fence kind,
/// and a name held as a string made each event 24 bytes larger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BarrierOpt {
    /// Full, load or store barrier.
    pub kind: BarrierKind,
    /// The option as written: its index in [`BarrierOpt::OPTIONS`].
    option: u8,
}

impl BarrierOpt {
    /// The options of DMB and DSB (Arm ARM C6.2.81, "DMB"), with their class.
    const OPTIONS: [(&'static str, BarrierKind); 12] = [
        ("SY", BarrierKind::Full),
        ("ISH", BarrierKind::Full),
        ("OSH", BarrierKind::Full),
        ("NSH", BarrierKind::Full),
        ("LD", BarrierKind::Ld),
        ("ISHLD", BarrierKind::Ld),
        ("OSHLD", BarrierKind::Ld),
        ("NSHLD", BarrierKind::Ld),
        ("ST", BarrierKind::St),
        ("ISHST", BarrierKind::St),
        ("OSHST", BarrierKind::St),
        ("NSHST", BarrierKind::St),
    ];
    /// `ISH`: the inner-shareable full barrier compilers emit.
    pub const ISH: BarrierOpt = BarrierOpt {
        kind: BarrierKind::Full,
        option: 1,
    };
    /// `ISHLD`.
    pub const ISHLD: BarrierOpt = BarrierOpt {
        kind: BarrierKind::Ld,
        option: 5,
    };
    /// `ISHST`.
    pub const ISHST: BarrierOpt = BarrierOpt {
        kind: BarrierKind::St,
        option: 9,
    };

    /// The option named `name` (any case), if A64 has it.
    pub fn parse(name: &str) -> Option<BarrierOpt> {
        let i = Self::OPTIONS
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))?;
        Some(BarrierOpt {
            kind: Self::OPTIONS[i].1,
            option: i as u8,
        })
    }

    /// The option as written (`SY`, `ISH`, `OSHLD`…), upper case.
    pub fn name(self) -> &'static str {
        Self::OPTIONS[usize::from(self.option)].0
    }
}

/// The class of a DMB/DSB option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    /// SY, ISH, OSH, NSH.
    Full,
    /// LD, ISHLD, OSHLD, NSHLD.
    Ld,
    /// ST, ISHST, OSHST, NSHST.
    St,
}

impl fmt::Display for Fence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fence::C(o) => write!(f, "F{}", o.short()),
            Fence::Mfence => f.write_str("MFENCE"),
            Fence::Lfence => f.write_str("LFENCE"),
            Fence::Sfence => f.write_str("SFENCE"),
            Fence::Dmb(Barrier::Dmb, o) => write!(f, "dmb.{}", o.name().to_ascii_lowercase()),
            Fence::Dmb(Barrier::Dsb, o) => write!(f, "dsb.{}", o.name().to_ascii_lowercase()),
            Fence::Isb => f.write_str("isb"),
            Fence::RiscV { pred, succ } => write!(f, "fence.{}.{}", pred.name(), succ.name()),
            Fence::Tso => f.write_str("fence.tso"),
            Fence::Linux(k) => write!(f, "F[{}]", k.name()),
        }
    }
}

/// Binary operators of expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `^`
    Xor,
    /// `&`
    And,
    /// `|`
    Or,
    /// `&` with the second operand complemented (Arm BIC, LDCLR).
    AndNot,
    /// `<<`
    Shl,
    /// logical `>>`
    Shr,
    /// `==` (1 or 0)
    Eq,
    /// `!=`
    Ne,
    /// signed `<`
    Lt,
    /// signed `<=`
    Le,
    /// signed `>`
    Gt,
    /// signed `>=`
    Ge,
    /// unsigned `<`
    Ult,
    /// unsigned `<=`
    Ule,
    /// unsigned `>`
    Ugt,
    /// unsigned `>=`
    Uge,
    /// C `&&`
    LogAnd,
    /// C `||`
    LogOr,
}

/// An expression over registers and constants. Memory is never read inside
/// an expression: the parser lowers each access to its own instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// A constant.
    Const(Value),
    /// The current value of a register.
    Reg(Reg),
    /// Logical negation (`!e`: 1 if e is 0).
    Not(Box<Expr>),
    /// A binary operation.
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

impl Expr {
    /// The integer constant `v`.
    pub fn int(v: i64) -> Expr {
        Expr::Const(Value::Int(v))
    }
    /// `op(a, b)`.
    pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }
}

/// The operation of a read-modify-write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RmwOp {
    /// Exchange: the new value is the operand.
    Xchg,
    /// `old + operand`
    Add,
    /// `old - operand`
    Sub,
    /// `old | operand`
    Or,
    /// `old & operand`
    And,
    /// `old ^ operand`
    Xor,
    /// `old & !operand` (Arm LDCLR)
    Clr,
    /// Signed maximum (RISC-V `amomax`).
    Max,
    /// Signed minimum (`amomin`).
    Min,
    /// Unsigned maximum (`amomaxu`).
    Umax,
    /// Unsigned minimum (`amominu`).
    Umin,
}

/// Where a compare-and-swap finds the value it expects, and where the old
/// value goes when the comparison fails.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CasExpected {
    /// In a register that receives the old value (Arm `CAS Rs`, x86 `EAX`).
    Reg(Reg),
    /// A value that is compared but receives nothing (Arm `CAS WZR, …`).
    Value(Expr),
    /// In memory, at this address (C's `expected` pointer): read plainly, and
    /// written with the old value on failure.
    Mem(Expr),
}

/// One instruction of the lowered thread code.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Instr {
    /// Read memory at `addr` into `dst` (discarded when `None`).
    Load {
        /// Destination register.
        dst: Option<Reg>,
        /// Address expression.
        addr: Expr,
        /// Access kind.
        annot: Annot,
    },
    /// Write `value` to memory at `addr`.
    Store {
        /// Address expression.
        addr: Expr,
        /// Value expression.
        value: Expr,
        /// Access kind.
        annot: Annot,
    },
    /// Store-exclusive: writes and sets `status` to 0 when paired with the
    /// preceding load-exclusive, or writes nothing and sets it to 1.
    StoreExclusive {
        /// Status register.
        status: Option<Reg>,
        /// Address expression.
        addr: Expr,
        /// Value expression.
        value: Expr,
        /// Access kind.
        annot: Annot,
    },
    /// Atomic read-modify-write: `dst := old; mem := op(old, operand)`.
    Rmw {
        /// Receives the old value.
        dst: Option<Reg>,
        /// Address expression.
        addr: Expr,
        /// The operation.
        op: RmwOp,
        /// The operand.
        operand: Expr,
        /// Annotation of the read (or of the single event).
        read: Annot,
        /// Annotation of the write.
        write: Annot,
        /// One event that both reads and writes (herd's C), or a read and a
        /// write linked by `rmw` (the ISAs).
        single: bool,
    },
    /// Compare-and-swap.
    Cas {
        /// C's boolean result (1 on success).
        result: Option<Reg>,
        /// Address expression.
        addr: Expr,
        /// The expected value's home.
        expected: CasExpected,
        /// The value written on success.
        desired: Expr,
        /// Annotation of the read (or single event) on success.
        read: Annot,
        /// Annotation of the write on success.
        write: Annot,
        /// Annotation of the read on failure.
        fail: Annot,
        /// A weak CAS may fail even when the values are equal.
        weak: bool,
        /// One event on success (herd's C) or a read/write pair.
        single: bool,
    },
    /// A barrier or fence.
    Fence(Fence),
    /// `synchronize_srcu(addr)`: a Linux SRCU grace period for the
    /// srcu_struct at `addr`, one event that has a location but neither
    /// reads nor writes it (herd's `SRCU` event tagged `sync-srcu`).
    SyncSrcu {
        /// Address of the srcu_struct.
        addr: Expr,
    },
    /// `dst := expr`.
    Assign {
        /// Destination register.
        dst: Reg,
        /// The value.
        expr: Expr,
    },
    /// `dst := cond != 0 ? a : b`, with the condition a *pick* (not data)
    /// dependency, as Arm's CSEL.
    Select {
        /// Destination register.
        dst: Reg,
        /// The condition.
        cond: Expr,
        /// Value when the condition holds.
        a: Expr,
        /// Value otherwise.
        b: Expr,
    },
    /// Jump to instruction `target` when `cond` is non-zero (always when `None`).
    Branch {
        /// The condition, `None` for an unconditional jump.
        cond: Option<Expr>,
        /// Index of the target instruction in the thread's code.
        target: usize,
    },
}

/// A thread of the test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    /// Its number (`P0` is 0).
    pub id: usize,
    /// Register names, canonical (`X0` for `W0`, `EAX`, `r0`); hidden
    /// temporaries start with `%`.
    pub regs: Vec<String>,
    /// Initial register values (others start at 0).
    pub init: Vec<(Reg, Value)>,
    /// The lowered code.
    pub code: Vec<Instr>,
}

impl Thread {
    /// The index of a register by name.
    pub fn reg(&self, name: &str) -> Option<Reg> {
        self.regs.iter().position(|r| r == name)
    }

    /// The value register `r` starts with: its entry in [`Thread::init`]
    /// (the last one, should a hand-built thread list it twice: the value a
    /// harness writing the list in order would leave), 0 otherwise. The
    /// parser refuses a register initialised twice.
    pub fn init_value(&self, r: Reg) -> Value {
        self.init
            .iter()
            .rev()
            .find(|(x, _)| *x == r)
            .map(|(_, v)| *v)
            .unwrap_or(Value::Int(0))
    }
}

/// A thing whose final value a condition or `locations` asks about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StateVar {
    /// `T:reg`.
    Reg {
        /// Thread number.
        thread: usize,
        /// Register index in that thread.
        reg: Reg,
    },
    /// `[x]` or `x`.
    Loc(LocId),
}

/// Comparison in an atom of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `=`
    Eq,
    /// `!=`
    Ne,
}

/// A proposition over the final state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Prop {
    /// Always holds.
    True,
    /// Never holds.
    False,
    /// `var = value` or `var != value`.
    Atom(StateVar, CmpOp, Value),
    /// `var = var` or `var != var` (`0:r1=1:r1`).
    Same(StateVar, CmpOp, StateVar),
    /// `~p`
    Not(Box<Prop>),
    /// `p /\ q /\ …`: a chain side by side, not nested, so that a walk
    /// of the tree goes as deep as the condition nests, however long its
    /// chains (two terms or more).
    And(Vec<Prop>),
    /// `p \/ q \/ …`, as [`Prop::And`].
    Or(Vec<Prop>),
}

impl Prop {
    /// Evaluates the proposition; `get` gives the final value of a variable.
    pub fn eval(&self, get: &dyn Fn(&StateVar) -> Value) -> bool {
        match self {
            Prop::True => true,
            Prop::False => false,
            Prop::Atom(v, CmpOp::Eq, x) => get(v) == *x,
            Prop::Atom(v, CmpOp::Ne, x) => get(v) != *x,
            Prop::Same(v, CmpOp::Eq, w) => get(v) == get(w),
            Prop::Same(v, CmpOp::Ne, w) => get(v) != get(w),
            Prop::Not(p) => !p.eval(get),
            Prop::And(ps) => ps.iter().all(|p| p.eval(get)),
            Prop::Or(ps) => ps.iter().any(|p| p.eval(get)),
        }
    }

    /// Every variable the proposition mentions, in order of appearance.
    pub fn vars(&self, out: &mut Vec<StateVar>) {
        match self {
            Prop::True | Prop::False => {}
            Prop::Atom(v, _, _) => {
                if !out.contains(v) {
                    out.push(v.clone())
                }
            }
            Prop::Same(v, _, w) => {
                for x in [v, w] {
                    if !out.contains(x) {
                        out.push(x.clone())
                    }
                }
            }
            Prop::Not(p) => p.vars(out),
            Prop::And(ps) | Prop::Or(ps) => {
                for p in ps {
                    p.vars(out);
                }
            }
        }
    }
}

/// The quantifier of the final condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantifier {
    /// `exists p`: herd's "Allowed" test.
    Exists,
    /// `~exists p`: herd's "Forbidden" test.
    NotExists,
    /// `forall p`: herd's "Required" test.
    Forall,
}

impl Quantifier {
    /// herd's word for the test kind.
    pub fn kind(self) -> &'static str {
        match self {
            Quantifier::Exists => "Allowed",
            Quantifier::NotExists => "Forbidden",
            Quantifier::Forall => "Required",
        }
    }
}

/// The final condition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Condition {
    /// exists, ~exists or forall.
    pub quantifier: Quantifier,
    /// The proposition.
    pub prop: Prop,
}

/// A parsed litmus test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Test {
    /// The file it came from.
    pub file: String,
    /// Its architecture.
    pub arch: Arch,
    /// Its name (second word of the first line).
    pub name: String,
    /// Shared locations, by [`LocId`].
    pub locations: Vec<String>,
    /// Initial values of locations (others start at 0).
    pub init: Vec<(LocId, Value)>,
    /// The threads.
    pub threads: Vec<Thread>,
    /// Extra variables to report (`locations [...]`).
    pub observed: Vec<StateVar>,
    /// `filter p`: executions where p fails are discarded.
    pub filter: Option<Prop>,
    /// The final condition.
    pub condition: Condition,
}

impl Test {
    /// Whether the test is in the Linux-kernel C dialect (some access
    /// carries a Linux annotation or some barrier is a Linux one).
    pub fn is_linux(&self) -> bool {
        let lk = |a: &Annot| a.lk != LkAccess::None;
        self.arch == Arch::C
            && self.threads.iter().flat_map(|t| &t.code).any(|i| match i {
                Instr::Load { annot, .. }
                | Instr::Store { annot, .. }
                | Instr::StoreExclusive { annot, .. } => lk(annot),
                Instr::Rmw { read, .. } | Instr::Cas { read, .. } => lk(read),
                Instr::Fence(Fence::Linux(_)) | Instr::SyncSrcu { .. } => true,
                _ => false,
            })
    }

    /// Whether the test is C with plain accesses only (`*x = 1`, `r0 =
    /// *y`): no C11 atomic or fence and no Linux-kernel primitive. Such a
    /// test reads the same in both C dialects; herd7 judges it under
    /// whatever model it is given, so `lkmm` judges it too, as Linux-kernel
    /// C (issue 37).
    pub fn is_plain_c(&self) -> bool {
        let plain =
            |a: &Annot| a.lk == LkAccess::None && matches!(a.order, None | Some(MemOrder::Na));
        self.arch == Arch::C
            && self.threads.iter().flat_map(|t| &t.code).all(|i| match i {
                Instr::Load { annot, .. }
                | Instr::Store { annot, .. }
                | Instr::StoreExclusive { annot, .. } => plain(annot),
                Instr::Rmw { .. }
                | Instr::Cas { .. }
                | Instr::Fence(_)
                | Instr::SyncSrcu { .. } => false,
                Instr::Assign { .. } | Instr::Select { .. } | Instr::Branch { .. } => true,
            })
    }

    /// The variables a final state lists: the condition's, then `locations`.
    pub fn state_vars(&self) -> Vec<StateVar> {
        let mut v = Vec::new();
        self.condition.prop.vars(&mut v);
        for o in &self.observed {
            if !v.contains(o) {
                v.push(o.clone());
            }
        }
        v
    }

    /// herd's name for a state variable: `1:r0`, `1:X2`, `[x]`.
    pub fn var_name(&self, v: &StateVar) -> String {
        let mut s = String::new();
        self.write_var(&mut s, v);
        s
    }

    fn write_var(&self, out: &mut String, v: &StateVar) {
        match v {
            StateVar::Reg { thread, reg } => {
                push_decimal(out, *thread as i64);
                out.push(':');
                out.push_str(&self.threads[*thread].regs[*reg]);
            }
            StateVar::Loc(l) => {
                out.push('[');
                out.push_str(&self.locations[*l]);
                out.push(']');
            }
        }
    }

    /// herd's rendering of a value.
    pub fn value_name(&self, v: Value) -> String {
        let mut s = String::new();
        self.write_value(&mut s, v);
        s
    }

    fn write_value(&self, out: &mut String, v: Value) {
        match v {
            Value::Int(i) => push_decimal(out, i),
            Value::Loc(l) => out.push_str(&self.locations[l]),
            Value::Sym(n) => {
                let _ = write!(out, "S{n}");
            }
        }
    }

    /// The condition as herd prints it on its `Condition` line.
    pub fn condition_text(&self) -> String {
        let q = match self.condition.quantifier {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "~exists",
            Quantifier::Forall => "forall",
        };
        // One buffer for the whole line: a `check` run prints it for
        // every test and stores it with every record.
        let mut out = String::with_capacity(64);
        out.push_str(q);
        out.push(' ');
        self.write_prop(&mut out, &self.condition.prop, true);
        out
    }

    /// A proposition (a `filter`'s) as herd prints a condition's.
    pub fn prop_text(&self, p: &Prop) -> String {
        let mut out = String::with_capacity(64);
        self.write_prop(&mut out, p, true);
        out
    }

    /// The terms of a chain, with those of the chains of the same kind
    /// nested in it (`(a \/ b) \/ c` is printed `a \/ b \/ c`).
    fn flatten<'p>(&self, p: &'p Prop, and: bool, out: &mut Vec<&'p Prop>) {
        match p {
            Prop::And(ps) if and => ps.iter().for_each(|q| self.flatten(q, and, out)),
            Prop::Or(ps) if !and => ps.iter().for_each(|q| self.flatten(q, and, out)),
            _ => out.push(p),
        }
    }

    /// Writes `p` as herd prints it: parenthesised, conjunctions and
    /// disjunctions flattened, an equation at the top in parentheses.
    fn write_prop(&self, out: &mut String, p: &Prop, top: bool) {
        match p {
            // herd7 parenthesises a constant alone: `forall (true)`.
            Prop::True | Prop::False => {
                let word = if matches!(p, Prop::True) {
                    "true"
                } else {
                    "false"
                };
                if top {
                    out.push('(');
                }
                out.push_str(word);
                if top {
                    out.push(')');
                }
            }
            Prop::Atom(v, CmpOp::Eq, x) => {
                if top {
                    out.push('(');
                }
                self.write_var(out, v);
                out.push('=');
                self.write_value(out, *x);
                if top {
                    out.push(')');
                }
            }
            Prop::Atom(v, CmpOp::Ne, x) => {
                out.push_str("(not (");
                self.write_var(out, v);
                out.push('=');
                self.write_value(out, *x);
                out.push_str("))");
            }
            Prop::Same(v, CmpOp::Eq, w) => {
                if top {
                    out.push('(');
                }
                self.write_var(out, v);
                out.push('=');
                self.write_var(out, w);
                if top {
                    out.push(')');
                }
            }
            Prop::Same(v, CmpOp::Ne, w) => {
                out.push_str("(not (");
                self.write_var(out, v);
                out.push('=');
                self.write_var(out, w);
                out.push_str("))");
            }
            Prop::Not(q) => {
                out.push_str("(not (");
                self.write_prop(out, q, false);
                out.push_str("))");
            }
            Prop::And(..) | Prop::Or(..) => {
                let is_and = matches!(p, Prop::And(..));
                let mut items = Vec::new();
                self.flatten(p, is_and, &mut items);
                let sep = if is_and { " /\\ " } else { " \\/ " };
                out.push('(');
                for (k, q) in items.iter().enumerate() {
                    if k > 0 {
                        out.push_str(sep);
                    }
                    self.write_prop(out, q, false);
                }
                out.push(')');
            }
        }
    }
}

/// `n` in decimal at the end of `out`, without the formatting machinery
/// (a check prints a test's condition three times: its record, its table
/// row and its herd7 log; and its counts in the log).
pub fn push_decimal(out: &mut String, n: i64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut m = n.unsigned_abs();
    loop {
        i -= 1;
        digits[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        out.push('-');
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&digits[i..]).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::push_decimal;

    #[test]
    fn decimals_are_written_as_format_writes_them() {
        for n in [0, 7, -7, 10, 123_456, -1_000, i64::MAX, i64::MIN] {
            let mut s = String::from("x=");
            push_decimal(&mut s, n);
            assert_eq!(s, format!("x={n}"));
        }
    }
}
