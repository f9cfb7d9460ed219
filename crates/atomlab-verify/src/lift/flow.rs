//! The part of lifting that does not depend on the instruction set, for
//! the riscv64 and x86-64 lifters: follow a function from its entry along
//! every path with calls into the file inlined (each inlined copy is its
//! own node, keyed by the call context), run the forward analysis to a
//! fixpoint over that graph, then lower every node with its final state
//! and lay the nodes out as one block of [`Instr`]s whose jumps are
//! indices. It is the same two-phase scheme as the aarch64 lifter's
//! (aarch64.rs, `lift`), behind a trait so that each instruction set only
//! says what one instruction does.

use std::collections::{HashMap, VecDeque};

use atomlab_audit::PluginFile;
use atomlab_litmus::{Expr, Instr};

use super::index::Span;
use super::lifter::Refusal;
use super::state::Locations;

/// Calls nested deeper than this are refused (recursion, or more code
/// than a lock needs).
pub(crate) const MAX_DEPTH: usize = 8;
/// Instructions (counted once per inlined copy) one function may lift to.
pub(crate) const MAX_NODES: usize = 4096;

/// A call context: the return addresses and callee entries of the calls
/// being inlined, innermost last.
pub(crate) type Ctx = Vec<(u64, u64)>;

/// Where control goes: an instruction in a context, or the end of the
/// lifted function.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    Node(Ctx, u64),
    Exit,
}

/// One lowered instruction: a checker instruction or a jump to a node.
pub(crate) enum Low {
    I(Instr),
    Jump(Option<Expr>, Target),
}

/// The result of one instruction: its lowering, the state after it, and
/// where control goes when no jump is taken (`None`: nowhere).
pub(crate) struct Step<S> {
    pub low: Vec<Low>,
    pub out: S,
    pub next: Option<Target>,
}

/// What an instruction set's lifter provides to [`run`].
pub(crate) trait Machine {
    /// The analysis state at an instruction.
    type State: Clone + PartialEq;
    /// The state where two paths meet.
    fn join(a: &Self::State, b: &Self::State) -> Self::State;
    /// One instruction at `pc` in context `ctx`, entered with `st`.
    /// `locs` is `None` during the analysis (no location is allocated
    /// before the states are final).
    fn step(
        &mut self,
        ctx: &Ctx,
        pc: u64,
        st: &Self::State,
        locs: Option<&mut Locations>,
    ) -> Result<Step<Self::State>, Refusal>;
    /// The file, for refusals.
    fn file(&self) -> &PluginFile<'_>;
}

/// A refusal at `addr` in `file`.
pub(crate) fn refusal(file: &PluginFile<'_>, addr: u64, what: String) -> Refusal {
    Refusal {
        addr,
        place: file.describe(addr),
        what,
    }
}

/// Where a function returns to from context `ctx`.
pub(crate) fn ret(ctx: &Ctx) -> Target {
    match ctx.split_last() {
        Some((&(back, _), rest)) => Target::Node(rest.to_vec(), back),
        None => Target::Exit,
    }
}

/// A call's target with a PLT stub of a function this file defines
/// replaced by its definition (a `-fPIC` call to an exported function
/// goes through the PLT; the dynamic linker binds it to this file's own
/// unless the program interposes one, which verify does not model).
pub(crate) fn resolve(file: &PluginFile<'_>, target: u64) -> u64 {
    file.import_at(target)
        .and_then(|name| file.symbol(name))
        .filter(|own| file.code_at(*own).is_some())
        .unwrap_or(target)
}

/// A direct call (`tail`: a jump that leaves the function) from `pc` to
/// `target`, returning to `back`: inlined when the target is code of the
/// file; a function of another library is refused by name (only
/// `sched_yield`, which gives up the CPU and changes no memory another
/// thread sees, is followed, as nothing).
pub(crate) fn call(
    file: &PluginFile<'_>,
    root: u64,
    ctx: &Ctx,
    pc: u64,
    back: u64,
    target: u64,
    tail: bool,
) -> Result<Target, Refusal> {
    let target = resolve(file, target);
    if let Some(name) = file.import_at(target) {
        if name == "sched_yield" {
            return Ok(if tail {
                ret(ctx)
            } else {
                Target::Node(ctx.clone(), back)
            });
        }
        return Err(refusal(
            file,
            pc,
            format!("calls {name}, a function of another library, which verify cannot follow"),
        ));
    }
    if file.code_at(target).is_none() {
        return Err(refusal(
            file,
            pc,
            format!("jumps to {target:#x}, outside the file's code"),
        ));
    }
    if tail {
        return Ok(Target::Node(ctx.clone(), target));
    }
    if ctx.len() >= MAX_DEPTH || ctx.iter().any(|c| c.1 == target) || target == root {
        return Err(refusal(
            file,
            pc,
            format!(
                "calls {} recursively or nested deeper than {MAX_DEPTH}",
                file.describe(target)
            ),
        ));
    }
    let mut c = ctx.clone();
    c.push((back, target));
    Ok(Target::Node(c, target))
}

/// The fixpoint of the analysis from `entry`: the nodes in the order
/// first reached, the state at each, and the states in which the
/// function returns.
#[allow(clippy::type_complexity)]
fn analyse<M: Machine>(
    m: &mut M,
    entry: u64,
    start: M::State,
) -> Result<
    (
        Vec<(Ctx, u64)>,
        HashMap<(Ctx, u64), M::State>,
        Vec<M::State>,
    ),
    Refusal,
> {
    let mut order: Vec<(Ctx, u64)> = Vec::new();
    let mut states: HashMap<(Ctx, u64), M::State> = HashMap::new();
    let mut exits: Vec<M::State> = Vec::new();
    let mut work: VecDeque<(Ctx, u64)> = VecDeque::new();
    let first = (Vec::new(), entry);
    states.insert(first.clone(), start);
    order.push(first.clone());
    work.push_back(first);
    let mut rounds = 0usize;
    while let Some(key) = work.pop_front() {
        rounds += 1;
        if rounds > 16 * MAX_NODES {
            return Err(refusal(
                m.file(),
                entry,
                "the analysis of this function does not settle".into(),
            ));
        }
        let st = states[&key].clone();
        let step = m.step(&key.0, key.1, &st, None)?;
        let mut targets: Vec<Target> = step
            .low
            .iter()
            .filter_map(|lw| match lw {
                Low::Jump(_, t) => Some(t.clone()),
                Low::I(_) => None,
            })
            .collect();
        targets.extend(step.next.clone());
        for t in targets {
            let Target::Node(c, pc) = t else {
                exits.push(step.out.clone());
                continue;
            };
            let k = (c, pc);
            match states.get(&k) {
                Some(old) => {
                    let j = M::join(old, &step.out);
                    if &j != old {
                        states.insert(k.clone(), j);
                        work.push_back(k);
                    }
                }
                None => {
                    if order.len() >= MAX_NODES {
                        return Err(refusal(
                            m.file(),
                            pc,
                            format!(
                                "more than {MAX_NODES} instructions to follow from this function"
                            ),
                        ));
                    }
                    states.insert(k.clone(), step.out.clone());
                    order.push(k.clone());
                    work.push_back(k);
                }
            }
        }
    }
    Ok((order, states, exits))
}

/// The states in which the function at `entry` returns (the analysis
/// alone: nothing is lowered): what `atomlab_plugin()` returns is read
/// from them.
pub(crate) fn exit_states<M: Machine>(
    m: &mut M,
    entry: u64,
    start: M::State,
) -> Result<Vec<M::State>, Refusal> {
    Ok(analyse(m, entry, start)?.2)
}

/// Lifts the function at `entry`, entered with state `start`: the
/// fixpoint of the analysis, then the lowering of every node reached.
pub(crate) fn run<M: Machine>(
    m: &mut M,
    entry: u64,
    start: M::State,
    locs: &mut Locations,
) -> Result<(Vec<Instr>, Vec<u64>), Refusal> {
    // Phase 1: the states at every node, to a fixpoint.
    let (order, states, _) = analyse(m, entry, start)?;
    // Phase 2: lower each node with its final state.
    let mut blocks: Vec<Vec<Low>> = Vec::with_capacity(order.len());
    for (i, key) in order.iter().enumerate() {
        let step = m.step(&key.0, key.1, &states[key], Some(&mut *locs))?;
        let mut low = step.low;
        if let Some(next) = step.next {
            let falls = match (&next, order.get(i + 1)) {
                (Target::Node(c, pc), Some(k)) => k.0 == *c && k.1 == *pc,
                _ => false,
            };
            if !falls {
                low.push(Low::Jump(None, next));
            }
        }
        blocks.push(low);
    }
    let mut start_of: HashMap<(Ctx, u64), usize> = HashMap::new();
    let mut at = 0usize;
    for (key, b) in order.iter().zip(&blocks) {
        start_of.insert(key.clone(), at);
        at += b.len();
    }
    let end = at;
    let mut code = Vec::with_capacity(end);
    // The machine instruction each lifted one came from.
    let mut origins = Vec::with_capacity(end);
    for (key, b) in order.iter().zip(blocks) {
        for lw in b {
            origins.push(key.1);
            code.push(match lw {
                Low::I(i) => i,
                Low::Jump(cond, t) => Instr::Branch {
                    cond,
                    target: match t {
                        Target::Exit => end,
                        Target::Node(c, pc) => start_of.get(&(c, pc)).copied().unwrap_or(end),
                    },
                },
            });
        }
    }
    Ok((code, origins))
}

/// What a register (or stack slot) holds, as far as the analysis knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Abs {
    Unknown,
    Int(i64),
    /// An address in the file (AUIPC, RIP-relative LEA).
    File(u64),
    /// Object `.0`'s address plus `.1`.
    Obj(usize, i64),
    /// The stack pointer on entry plus `.0`.
    Stack(i64),
    /// An integer known to be one of a few values (a masked index).
    Idx(Span),
    /// Object `.0`'s address plus one of the span's offsets (a ring's
    /// slot address computed into a register).
    ObjIdx(usize, Span),
    /// The memory the allocator call at `.0` returned (or this thread's
    /// TLS block, [`super::heap::TLS`]) plus `.1`: an address that may
    /// be stored ([`super::heap`]).
    Heap(u64, i64),
    /// A doubleword loaded from memory (a pointer the analysis cannot
    /// follow statically) plus `.0`, for the layout of the field an
    /// access through it reaches ([`super::heap::select`]'s `field`):
    /// `addi a0, a0, 8; amoswap.w.rl zero, a1, (a0)` reaches offset 8
    /// (AMOs and LR/SC take no offset). Otherwise as [`Abs::Unknown`].
    Loaded(i64),
}

impl Abs {
    /// The value ANDed with the constant `m`: an unknown integer masked to
    /// a few values becomes an index (`t & (N - 1)`).
    pub(crate) fn masked(self, m: i64) -> Abs {
        match self {
            Abs::Int(v) => Abs::Int(v & m),
            Abs::Idx(s) if s.within(m) && m & (m.wrapping_add(1)) == 0 => self,
            Abs::Unknown | Abs::Loaded(_) | Abs::Idx(_) => {
                Span::masked(m).map_or(Abs::Unknown, Abs::Idx)
            }
            _ => Abs::Unknown,
        }
    }

    /// The value shifted left by `s` bits (an index scaled to bytes).
    pub(crate) fn shl(self, s: i64) -> Abs {
        match self {
            Abs::Int(v) => Abs::Int(v.wrapping_shl(s as u32)),
            Abs::Idx(span) if (0..64).contains(&s) => {
                span.shifted(s as u32).map_or(Abs::Unknown, Abs::Idx)
            }
            _ => Abs::Unknown,
        }
    }

    /// The sum of two registers when one is an object's address and the
    /// other an index: the object at one of a few offsets.
    pub(crate) fn add_index(self, o: Abs) -> Abs {
        match (self, o) {
            (Abs::Obj(obj, off), Abs::Idx(s)) | (Abs::Idx(s), Abs::Obj(obj, off)) => {
                Abs::ObjIdx(obj, s.plus(off))
            }
            _ => Abs::Unknown,
        }
    }

    pub(crate) fn join(self, o: Abs) -> Abs {
        if self == o {
            self
        } else {
            Abs::Unknown
        }
    }

    pub(crate) fn plus(self, c: i64) -> Abs {
        match self {
            Abs::Int(v) => Abs::Int(v.wrapping_add(c)),
            Abs::File(a) => Abs::File(a.wrapping_add(c as u64)),
            Abs::Obj(o, off) => Abs::Obj(o, off.wrapping_add(c)),
            Abs::Stack(off) => Abs::Stack(off.wrapping_add(c)),
            Abs::Idx(s) => Abs::Idx(s.plus(c)),
            Abs::ObjIdx(o, s) => Abs::ObjIdx(o, s.plus(c)),
            Abs::Heap(site, off) => Abs::Heap(site, off.wrapping_add(c)),
            Abs::Loaded(off) => Abs::Loaded(off.wrapping_add(c)),
            Abs::Unknown => Abs::Unknown,
        }
    }

    /// Whether the value is an address (storing one to shared memory
    /// would make a linked structure, which is not modelled).
    pub(crate) fn is_address(self) -> bool {
        matches!(
            self,
            Abs::Obj(..) | Abs::ObjIdx(..) | Abs::Stack(_) | Abs::File(_)
        )
    }
}

/// Joins two stack maps: a slot known on both paths keeps the join.
pub(crate) fn join_stack(
    a: &std::collections::BTreeMap<i64, Abs>,
    b: &std::collections::BTreeMap<i64, Abs>,
) -> std::collections::BTreeMap<i64, Abs> {
    a.iter()
        .filter_map(|(k, v)| b.get(k).map(|w| (*k, v.join(*w))))
        .collect()
}

/// `e` cut to `width` bytes (zero-extended).
pub(crate) fn narrow(e: Expr, width: u8) -> Expr {
    use atomlab_litmus::BinOp;
    match width {
        1 => Expr::bin(BinOp::And, e, Expr::int(0xff)),
        2 => Expr::bin(BinOp::And, e, Expr::int(0xffff)),
        4 => Expr::bin(BinOp::And, e, Expr::int(0xffff_ffff)),
        _ => e,
    }
}

/// The value `v` cut to `width` bytes (zero-extended).
pub(crate) fn narrow_int(v: i64, width: u8) -> i64 {
    match width {
        1 => v & 0xff,
        2 => v & 0xffff,
        4 => v & 0xffff_ffff,
        _ => v,
    }
}

/// `v` sign-extended from `bits`.
pub(crate) fn sext_int(v: i64, bits: u32) -> i64 {
    let sh = 64 - bits;
    v.wrapping_shl(sh).wrapping_shr(sh)
}

/// `e` sign-extended from `width` bytes: `((e & m) ^ s) - s`, `s` its
/// sign bit.
pub(crate) fn sext(e: Expr, width: u8) -> Expr {
    use atomlab_litmus::BinOp;
    if width >= 8 {
        return e;
    }
    let s = 1i64 << (8 * u32::from(width) - 1);
    Expr::bin(
        BinOp::Sub,
        Expr::bin(BinOp::Xor, narrow(e, width), Expr::int(s)),
        Expr::int(s),
    )
}
