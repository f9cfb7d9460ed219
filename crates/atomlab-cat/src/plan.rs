//! The evaluation plan a cat model compiles to: a table of relation and set
//! operations over the execution's base relations (shared subexpressions
//! appear once), least fixpoints for `let rec`, and the model's checks, each
//! with the operations it needs that earlier checks have not computed.
//! Evaluating one execution runs the checks in order and stops at the first
//! one that forbids it.

use std::cell::RefCell;
use std::collections::HashMap;

use atomlab_litmus::{Fence, LkAccess, RvAccesses};
use atomlab_model::graph::{
    full_set, members, shortest_cycle, Event, Execution, Kind, Rel, Set, Skeleton, MAX_EVENTS,
};
use atomlab_model::models::{Judgement, Model, Violation};

use crate::syntax::{CheckKind, Level};

/// Whether a node is a set of events or a relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Ty {
    /// A set of events.
    Set,
    /// A relation.
    Rel,
}

/// What the engine's executions give the model (herd's predefined names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Base {
    R,
    W,
    M,
    F,
    Iw,
    Fw,
    Universe,
    Upd,
    Atomic,
    Rlx,
    Con,
    Acq,
    Release,
    AcqRel,
    Sc,
    ArmA,
    ArmQ,
    ArmL,
    NoRet,
    Locked,
    Mfence,
    DmbFull,
    DmbLd,
    DmbSt,
    Isb,
    /// RISC-V `fence pred,succ`: bit 0 pred r, 1 pred w, 2 succ r, 3 succ w
    /// (herd's `Fence.r.rw` and the like).
    RvFence(u8),
    /// RISC-V `fence.tso`.
    RvTso,
    /// Exclusive accesses (Arm LDXR/STXR, RISC-V LR/SC).
    Excl,
    /// RISC-V AMO instructions' events (herd's `AMO`): both ends of `amo`.
    RvAmo,
    Po,
    Rf,
    Co,
    Fr,
    Rmw,
    Amo,
    Addr,
    Data,
    Ctrl,
    Loc,
    Int,
    Ext,
    Id,
    SameInstance,
    /// herd's register-level events, rebuilt from the engine's dependencies (see [`Regs`]).
    RfReg,
    /// Events carrying the bell tag `Plan::tags[i]` (a Linux-kernel
    /// annotation, compared without case: bell tag `'ONCE` is `READ_ONCE`'s
    /// `once`, `'rcu-lock` is `rcu_read_lock()`'s fence).
    LkTag(u16),
    /// herd's lock events (lock.cat's LKR, LKW, UL, LF, RL, RU and LK).
    Lock(LockEvents),
    /// Events of Linux atomic read-modify-writes (herd's `RMW` for C,
    /// failed ones included).
    LkRmw,
    /// The engine's reads-from, lock reads included (herd's `rf` leaves
    /// them to lock.cat, which generates them with `with … from cross`).
    EngineRf,
    /// The engine's coherence order, lock writes included.
    EngineCo,
    IicoData,
    IicoCtrl,
    Rreg,
    DataRegs,
    Bcc,
}

impl Base {
    pub(crate) fn ty(self) -> Ty {
        use Base::*;
        match self {
            Po | Rf | Co | Fr | Rmw | Amo | Addr | Data | Ctrl | Loc | Int | Ext | Id
            | SameInstance | RfReg | IicoData | IicoCtrl | EngineRf | EngineCo => Ty::Rel,
            _ => Ty::Set,
        }
    }
}

/// herd's sets of lock events (herd's `CAction.arch_sets` for C).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum LockEvents {
    /// `LKR`: the read of `spin_lock()` or of a successful `spin_trylock()`.
    Lkr,
    /// `LKW`: the write of a lock acquisition.
    Lkw,
    /// `UL`: `spin_unlock()`.
    Ul,
    /// `LF`: a failed `spin_trylock()`.
    Lf,
    /// `RL`: `spin_is_locked()` returning true.
    Rl,
    /// `RU`: `spin_is_locked()` returning false.
    Ru,
    /// `LK`: LKR and LKW.
    Lk,
}

/// The events of `x` that are herd's lock events of kind `k`.
fn lock_events(x: &Execution<'_>, k: LockEvents) -> Set {
    let mut s = 0;
    for (i, e) in x.s.events.iter().enumerate() {
        let hit = match (k, e.annot.lk) {
            (LockEvents::Lkr, LkAccess::LockRead)
            | (LockEvents::Lkw, LkAccess::LockWrite)
            | (LockEvents::Ul, LkAccess::Unlock)
            | (LockEvents::Lf, LkAccess::LockFail)
            | (LockEvents::Lk, LkAccess::LockRead | LkAccess::LockWrite) => true,
            (LockEvents::Rl, LkAccess::IsLocked) => e.rval != 0,
            (LockEvents::Ru, LkAccess::IsLocked) => e.rval == 0,
            _ => false,
        };
        if hit {
            s |= 1 << i;
        }
    }
    s
}

/// Every lock event of `x`: herd's memory events (`M`, `R`, `W`, `rf`,
/// `co`, `rmw`) leave them out, as herd does (lock.cat adds them back).
fn all_lock_events(x: &Execution<'_>) -> Set {
    let mut s = 0;
    for (i, e) in x.s.events.iter().enumerate() {
        if matches!(
            e.annot.lk,
            LkAccess::LockRead
                | LkAccess::LockWrite
                | LkAccess::Unlock
                | LkAccess::LockFail
                | LkAccess::IsLocked
        ) {
            s |= 1 << i;
        }
    }
    s
}

/// The Linux-kernel annotation name of event `e` (an access's tag or a
/// fence's), as linux-kernel.def spells it without case.
fn lk_tag_name(e: &Event) -> Option<&'static str> {
    match e.kind {
        Kind::Fence(Fence::Linux(f)) => Some(f.name()),
        Kind::Fence(_) => None,
        _ if e.thread.is_some() && e.annot.lk != LkAccess::None => Some(e.annot.lk.name()),
        _ => None,
    }
}

/// `r` without the pairs touching `out`.
fn without(r: Rel, out: Set) -> Rel {
    let keep = !out;
    r.dom(keep).rng(keep)
}

/// Unary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Un {
    Compl,
    Inv,
    Plus,
    Star,
    Opt,
    IdOf,
    Domain,
    Range,
    /// herd's `different-values(r)`: the pairs of `r` whose events' values
    /// (read or written) differ.
    DifferentValues,
}

/// Binary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Bin {
    Union,
    Inter,
    Diff,
    Seq,
    Cross,
}

/// One node of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    Base(Base),
    Empty(Ty),
    Un(Un, u32),
    Bin(Bin, u32, u32),
    /// Variable `index` of fixpoint `fix`.
    FixVar(u32, u32),
    /// Runs fixpoint `fix` (its value is unused).
    Fix(u32),
    /// Result `index` of the fixpoint run by node `fix_node`.
    FixOut(u32, u32),
    /// The one event `{e}` of union `k` (set by [`Op::Each`]).
    EachVar(u32),
    /// Union `k`: the union over `e` in a set of a relation depending on `{e}`.
    Each(u32),
}

/// A union over the events of a set (`map f S` for herd's `cross`): the
/// body is evaluated once per event, with [`Op::EachVar`] holding it.
#[derive(Debug, Clone, Default)]
pub(crate) struct EachUnion {
    pub var: u32,
    pub set: u32,
    pub body: u32,
    /// Nodes depending on the variable, in evaluation order.
    pub inner: Vec<u32>,
    /// Nodes the inner ones need that do not depend on it.
    pub outer: Vec<u32>,
}

/// A `let rec` over relations: least fixpoint from the empty relations.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fixpoint {
    pub vars: Vec<u32>,
    pub bodies: Vec<u32>,
    /// Nodes depending on the variables, in evaluation order.
    pub inner: Vec<u32>,
    /// Nodes the inner ones need that do not depend on the variables.
    pub outer: Vec<u32>,
    /// For each body, the inner nodes it needs, in evaluation order.
    pub per_body: Vec<Vec<u32>>,
}

/// One check of the model.
#[derive(Debug, Clone)]
pub(crate) struct Check {
    pub level: Level,
    pub kind: CheckKind,
    pub negated: bool,
    /// `None`: the checked expression is empty whatever the execution.
    pub node: Option<u32>,
    pub name: &'static str,
    /// Nodes to evaluate before this check (not evaluated by earlier ones).
    pub schedule: Vec<u32>,
}

/// The plan builder and, once finished, the plan.
#[derive(Debug, Default, Clone)]
pub(crate) struct Plan {
    pub ops: Vec<Op>,
    pub tys: Vec<Ty>,
    index: HashMap<Op, u32>,
    pub fixes: Vec<Fixpoint>,
    pub eaches: Vec<EachUnion>,
    pub checks: Vec<Check>,
    /// Bell tags, lowercased, indexed by [`Base::LkTag`].
    pub tags: Vec<String>,
    /// The model uses register-level events (herd's `rf-reg`, `iico_data`…).
    pub uses_regs: bool,
    /// Identifies the plan's scratch space.
    pub id: u64,
    /// Nodes whose value depends only on the execution's skeleton (its
    /// events, program order and dependencies), not on reads-from or
    /// coherence: computed once per skeleton.
    pub skeleton_only: Vec<bool>,
    /// The base nodes among them: when their values are unchanged, so is
    /// every skeleton-only node.
    pub skeleton_bases: Vec<u32>,
}

impl Plan {
    /// The node for `op` (shared with any equal node made before).
    pub(crate) fn node(&mut self, op: Op, ty: Ty) -> u32 {
        if let Some(&id) = self.index.get(&op) {
            return id;
        }
        let id = self.ops.len() as u32;
        self.ops.push(op);
        self.tys.push(ty);
        // Fixpoint variables are distinct even when equal in shape.
        self.index.insert(op, id);
        id
    }

    fn deps(&self, id: u32) -> Vec<u32> {
        match self.ops[id as usize] {
            Op::Base(_) | Op::Empty(_) | Op::FixVar(..) | Op::EachVar(_) => Vec::new(),
            Op::Un(_, a) => vec![a],
            Op::Bin(_, a, b) => vec![a, b],
            Op::Fix(k) => self.fixes[k as usize].outer.clone(),
            Op::FixOut(f, _) => vec![f],
            Op::Each(k) => {
                let u = &self.eaches[k as usize];
                let mut d = u.outer.clone();
                d.push(u.set);
                d
            }
        }
    }

    /// Closes fixpoint `k` once its variables and bodies are built: finds the
    /// nodes inside the loop and those it needs from outside.
    pub(crate) fn close_fix(&mut self, k: usize) {
        let (inner, outer) = self.loop_nodes(&self.fixes[k].vars, &self.fixes[k].bodies);
        let per_body = self.fixes[k]
            .bodies
            .iter()
            .map(|&b| self.loop_nodes(&self.fixes[k].vars, &[b]).0)
            .collect();
        self.fixes[k].per_body = per_body;
        self.fixes[k].inner = inner;
        self.fixes[k].outer = outer;
    }

    /// Closes union `k` once its body is built.
    pub(crate) fn close_each(&mut self, k: usize) {
        let u = &self.eaches[k];
        let (inner, outer) = self.loop_nodes(&[u.var], &[u.body]);
        self.eaches[k].inner = inner;
        self.eaches[k].outer = outer;
    }

    /// The nodes that depend on `vars` and that `bodies` need (inner, in
    /// evaluation order), and the others they need (outer).
    fn loop_nodes(&self, vars: &[u32], bodies: &[u32]) -> (Vec<u32>, Vec<u32>) {
        let first = *vars.iter().min().unwrap_or(&0) as usize;
        let mut dependent = vec![false; self.ops.len()];
        for &v in vars {
            dependent[v as usize] = true;
        }
        for id in first..self.ops.len() {
            if !dependent[id] && self.deps(id as u32).iter().any(|&d| dependent[d as usize]) {
                dependent[id] = true;
            }
        }
        let mut needed = vec![false; self.ops.len()];
        let mut stack: Vec<u32> = bodies.to_vec();
        let mut outer = Vec::new();
        while let Some(id) = stack.pop() {
            if needed[id as usize] {
                continue;
            }
            needed[id as usize] = true;
            if !dependent[id as usize] {
                outer.push(id);
                continue;
            }
            stack.extend(self.deps(id));
        }
        let inner: Vec<u32> = (0..self.ops.len() as u32)
            .filter(|&i| needed[i as usize] && dependent[i as usize])
            .filter(|&i| !matches!(self.ops[i as usize], Op::FixVar(..) | Op::EachVar(_)))
            .collect();
        outer.sort_unstable();
        (inner, outer)
    }

    /// Orders the checks (forbidding ones first: flags only matter for
    /// allowed executions) and computes each one's schedule.
    pub(crate) fn finish(&mut self) {
        // ORDERING: Relaxed: only distinctness of the ids matters.
        self.id = NEXT_PLAN_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut only = vec![false; self.ops.len()];
        for i in 0..self.ops.len() {
            only[i] = match self.ops[i] {
                Op::Base(
                    Base::Rf
                    | Base::Co
                    | Base::Fr
                    | Base::Fw
                    | Base::EngineRf
                    | Base::EngineCo
                    // RL and RU differ by the value read.
                    | Base::Lock(LockEvents::Rl | LockEvents::Ru),
                ) => false,
                // The values of events differ between executions.
                Op::Un(Un::DifferentValues, _) => false,
                Op::Base(_) | Op::Empty(_) | Op::FixVar(..) | Op::EachVar(_) => true,
                Op::Un(_, a) => only[a as usize],
                Op::Bin(_, a, b) => only[a as usize] && only[b as usize],
                Op::Fix(k) => {
                    let f = &self.fixes[k as usize];
                    f.outer.iter().chain(&f.inner).all(|&j| only[j as usize])
                }
                Op::FixOut(f, _) => only[f as usize],
                Op::Each(k) => {
                    let u = &self.eaches[k as usize];
                    only[u.set as usize] && u.outer.iter().chain(&u.inner).all(|&j| only[j as usize])
                }
            };
        }
        self.skeleton_bases = (0..self.ops.len() as u32)
            .filter(|&i| only[i as usize] && matches!(self.ops[i as usize], Op::Base(_)))
            .collect();
        self.skeleton_only = only;
        self.checks.sort_by_key(|c| match c.level {
            Level::Forbid => 0,
            Level::Undefined => 1,
            Level::Flag | Level::Assert => 2,
        });
        let mut done = vec![false; self.ops.len()];
        for c in 0..self.checks.len() {
            let mut sched = Vec::new();
            if let Some(n) = self.checks[c].node {
                let mut stack = vec![n];
                while let Some(id) = stack.pop() {
                    if done[id as usize] {
                        continue;
                    }
                    done[id as usize] = true;
                    sched.push(id);
                    stack.extend(self.deps(id));
                }
            }
            sched.sort_unstable();
            self.checks[c].schedule = sched;
        }
    }
}

/// Per-thread scratch space for node values, reused across executions.
#[derive(Default)]
struct Scratch {
    sets: Vec<Set>,
    rels: Vec<Rel>,
    /// Which skeleton-only nodes hold their value for the current skeleton.
    valid: Vec<bool>,
}

thread_local! {
    /// One scratch per plan (by [`Plan::id`]), so that models judged in
    /// turn on one thread keep their skeleton-only values.
    static SCRATCH: RefCell<HashMap<u64, Scratch>> = RefCell::new(HashMap::new());
}

/// Distinct plan ids for the scratch table.
static NEXT_PLAN_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// herd's register-level events for a model that computes dependencies
/// itself (herd7's aarch64deps.cat): one virtual event per dependency kind
/// of each read, appended after the execution's events, so that
/// `[R]; rf-reg; [ADDR]; iico_data` gives back the engine's `addr`,
/// `[R]; rf-reg; [DATA]; iico_data` its `data`, `[R]; rf-reg; [BCC]; po` its
/// `ctrl`, and the pick dependencies go through an `iico_ctrl` step (a
/// conditional select) first.
pub(crate) struct Regs {
    n: usize,
    rf_reg: Rel,
    iico_data: Rel,
    iico_ctrl: Rel,
    rreg: Set,
    data: Set,
    bcc: Set,
    po: Rel,
}

/// A relation over more events (the new ones unrelated).
fn widen(r: &Rel, n: usize) -> Rel {
    let mut w = Rel::empty(n);
    for i in 0..r.n() {
        for j in members(r.row(i)) {
            w.add(i, j);
        }
    }
    w
}

impl Regs {
    /// `None` when the virtual events do not fit in an execution's bound.
    fn build(s: &Skeleton) -> Option<Regs> {
        let n0 = s.n;
        // (source read, kind: 0 addr, 1 data, 2 ctrl, targets, through a pick)
        let mut deps: Vec<(usize, u8, Set, bool)> = Vec::new();
        for r in 0..n0 {
            let (a, d, c) = (s.addr.row(r), s.data.row(r), s.ctrl.row(r));
            for (k, t) in [(0u8, a), (1, d), (2, c)] {
                if t != 0 {
                    deps.push((r, k, t, false));
                }
            }
            let picks = [
                (0u8, s.pick_addr.row(r) & !a),
                (1, s.pick_data.row(r) & !d),
                (2, s.pick_ctrl.row(r) & !c),
            ];
            for (k, t) in picks {
                if t != 0 {
                    deps.push((r, k, t, true));
                }
            }
        }
        let picked: Set = deps
            .iter()
            .filter(|d| d.3)
            .fold(0, |acc, d| acc | 1u64 << d.0);
        let n = n0 + deps.len() + picked.count_ones() as usize;
        if n > MAX_EVENTS {
            return None;
        }
        let mut g = Regs {
            n,
            rf_reg: Rel::empty(n),
            iico_data: Rel::empty(n),
            iico_ctrl: Rel::empty(n),
            rreg: 0,
            data: 0,
            bcc: 0,
            po: Rel::empty(n),
        };
        let mut next = n0;
        // The register read of each conditional select, one per read.
        let mut select = [usize::MAX; MAX_EVENTS];
        for r in members(picked) {
            select[r] = next;
            g.rf_reg.add(r, next);
            g.rreg |= 1 << next;
            next += 1;
        }
        for (r, k, targets, pick) in deps {
            let v = next;
            next += 1;
            if pick {
                g.iico_ctrl.add(select[r], v);
            } else {
                g.rf_reg.add(r, v);
            }
            for t in members(targets) {
                if k == 2 {
                    g.po.add(v, t);
                } else {
                    g.iico_data.add(v, t);
                }
            }
            match k {
                0 => g.rreg |= 1 << v,
                1 => {
                    g.rreg |= 1 << v;
                    g.data |= 1 << v;
                }
                _ => g.bcc |= 1 << v,
            }
        }
        Some(g)
    }
}

/// One execution as the plan sees it.
struct Ctx<'c, 'x> {
    x: &'c Execution<'x>,
    /// Events, with the virtual register events if any.
    n: usize,
    regs: Option<Regs>,
    /// The plan's bell tags.
    tags: &'c [String],
}

/// The [`Base::RvFence`] bits of `fence pred,succ`.
pub(crate) fn rv_fence_bits(pred: RvAccesses, succ: RvAccesses) -> u8 {
    u8::from(pred.r) | u8::from(pred.w) << 1 | u8::from(succ.r) << 2 | u8::from(succ.w) << 3
}

fn base_value(b: Base, cx: &Ctx<'_, '_>) -> (Set, Option<Rel>) {
    let x = cx.x;
    let s = x.s;
    let st = &s.sets;
    let n = cx.n;
    let set = |v: Set| (v, None);
    let rel = |r: Rel| {
        if cx.regs.is_some() {
            (0, Some(widen(&r, n)))
        } else {
            (0, Some(r))
        }
    };
    let reg =
        |f: &dyn Fn(&Regs) -> Rel| (0, Some(cx.regs.as_ref().map(f).unwrap_or(Rel::empty(n))));
    let regset = |f: &dyn Fn(&Regs) -> Set| (cx.regs.as_ref().map(f).unwrap_or(0), None);
    // herd's memory events leave lock events out (lock.cat adds them).
    let locks = all_lock_events(x);
    match b {
        Base::R => set(st.r & !locks),
        Base::W => set(st.w & !locks),
        Base::M => set(st.m & !locks),
        Base::F => set(st.f),
        Base::Iw => set(st.iw),
        // herd's final writes: the co-last write of each location the final
        // state reports, a lock's own write included (herd7 flags lock.cat's
        // `lock-final` for an observed spinlock, never for an srcu_struct
        // the condition does not name; the Linux golden tests hold both).
        Base::Fw => set(x
            .last
            .iter()
            .enumerate()
            .filter(|&(l, _)| st.observed_iw >> s.init_of[l] & 1 == 1)
            .fold(0, |a, (_, &e)| a | 1u64 << e)),
        Base::Universe => set(full_set(n)),
        Base::Upd => set(st.upd),
        Base::Atomic => set(st.atomic),
        Base::Rlx => set(st.rlx),
        Base::Con => set(st.con),
        Base::Acq => set(st.acq),
        Base::Release => set(st.rel),
        Base::AcqRel => set(st.acq_rel),
        Base::Sc => set(st.sc),
        Base::ArmA => set(st.arm_a),
        Base::ArmQ => set(st.arm_q),
        Base::ArmL => set(st.arm_l),
        Base::NoRet => set(st.noret),
        Base::Locked => set(st.locked),
        Base::Mfence => set(st.mfence),
        Base::DmbFull => set(st.dmb_full),
        Base::DmbLd => set(st.dmb_ld),
        Base::DmbSt => set(st.dmb_st),
        Base::Isb => set(st.isb),
        Base::RvFence(bits) => set(s
            .events
            .iter()
            .enumerate()
            .fold(0, |a, (i, e)| match e.kind {
                Kind::Fence(Fence::RiscV { pred, succ }) if rv_fence_bits(pred, succ) == bits => {
                    a | 1u64 << i
                }
                _ => a,
            })),
        Base::RvTso => set(s.events.iter().enumerate().fold(0, |a, (i, e)| {
            if matches!(e.kind, Kind::Fence(Fence::Tso)) {
                a | 1u64 << i
            } else {
                a
            }
        })),
        Base::RvAmo => set(s.amo.domain() | s.amo.range()),
        Base::Excl => set(st.excl),
        Base::Po => match &cx.regs {
            Some(g) => (0, Some(widen(&s.po, n) | g.po)),
            None => (0, Some(s.po)),
        },
        Base::Rf => rel(without(x.rf, locks)),
        Base::Co => rel(without(x.co, locks)),
        Base::Fr => rel(without(x.fr, locks)),
        Base::Rmw => rel(without(s.rmw, locks)),
        Base::EngineRf => rel(x.rf),
        Base::EngineCo => rel(x.co),
        Base::Lock(k) => set(lock_events(x, k)),
        Base::LkRmw => {
            set(s.events.iter().enumerate().fold(
                0,
                |a, (i, e)| {
                    if e.annot.lk_rmw {
                        a | 1u64 << i
                    } else {
                        a
                    }
                },
            ))
        }
        Base::LkTag(t) => {
            let tag = cx.tags.get(t as usize).map(String::as_str).unwrap_or("");
            set(s.events.iter().enumerate().fold(0, |a, (i, e)| {
                if lk_tag_name(e).is_some_and(|n| n.eq_ignore_ascii_case(tag)) {
                    a | 1u64 << i
                } else {
                    a
                }
            }))
        }
        Base::Amo => rel(s.amo),
        Base::Addr => rel(s.addr),
        Base::Data => rel(s.data),
        Base::Ctrl => rel(s.ctrl),
        Base::Loc => rel(s.loc),
        Base::Int => rel(s.int),
        Base::Ext => rel(s.ext),
        Base::Id => (0, Some(Rel::id(n, full_set(n)))),
        Base::SameInstance => rel(s.same_instance),
        Base::RfReg => reg(&|g| g.rf_reg),
        Base::IicoData => reg(&|g| g.iico_data),
        Base::IicoCtrl => reg(&|g| g.iico_ctrl),
        Base::Rreg => regset(&|g| g.rreg),
        Base::DataRegs => regset(&|g| g.data),
        Base::Bcc => regset(&|g| g.bcc),
    }
}

/// Most rounds a fixpoint may take (each round adds a pair, or it is done).
const MAX_ROUNDS: usize = 64 * 64 + 1;

impl Plan {
    fn eval(&self, id: u32, cx: &Ctx<'_, '_>, sc: &mut Scratch) {
        let n = cx.n;
        let i = id as usize;
        let ty = self.tys[i];
        match self.ops[i] {
            Op::Base(b) => {
                let (s, r) = base_value(b, cx);
                sc.sets[i] = s;
                if let Some(r) = r {
                    sc.rels[i] = r;
                }
            }
            Op::Empty(_) => {
                sc.sets[i] = 0;
                sc.rels[i] = Rel::empty(n);
            }
            Op::Un(op, a) => {
                let a = a as usize;
                match (op, ty) {
                    (Un::Compl, Ty::Set) => sc.sets[i] = !sc.sets[a] & full_set::<Set>(n),
                    (Un::Compl, Ty::Rel) => sc.rels[i] = sc.rels[a].complement(),
                    (Un::Inv, _) => sc.rels[i] = sc.rels[a].inv(),
                    (Un::Plus, _) => sc.rels[i] = sc.rels[a].plus(),
                    (Un::Star, _) => sc.rels[i] = sc.rels[a].star(),
                    (Un::Opt, _) => sc.rels[i] = sc.rels[a].opt(),
                    (Un::IdOf, _) => sc.rels[i] = Rel::id(n, sc.sets[a]),
                    (Un::Domain, _) => sc.sets[i] = sc.rels[a].domain(),
                    (Un::Range, _) => sc.sets[i] = sc.rels[a].range(),
                    (Un::DifferentValues, _) => {
                        let evs = &cx.x.s.events;
                        let value = |k: usize| match evs.get(k).map(|e| (e.kind, e)) {
                            Some((Kind::Read, e)) => Some(e.rval),
                            Some((Kind::Write | Kind::Update, e)) => Some(e.wval),
                            _ => None,
                        };
                        let mut out = Rel::empty(n);
                        for p in 0..n {
                            for q in members(sc.rels[a].row(p)) {
                                if value(p) != value(q) {
                                    out.add(p, q);
                                }
                            }
                        }
                        sc.rels[i] = out;
                    }
                }
            }
            Op::Bin(op, a, b) => {
                let (a, b) = (a as usize, b as usize);
                match (op, ty) {
                    (Bin::Union, Ty::Set) => sc.sets[i] = sc.sets[a] | sc.sets[b],
                    (Bin::Inter, Ty::Set) => sc.sets[i] = sc.sets[a] & sc.sets[b],
                    (Bin::Diff, Ty::Set) => sc.sets[i] = sc.sets[a] & !sc.sets[b],
                    (Bin::Union, Ty::Rel) => sc.rels[i] = sc.rels[a] | sc.rels[b],
                    (Bin::Inter, Ty::Rel) => sc.rels[i] = sc.rels[a] & sc.rels[b],
                    (Bin::Diff, Ty::Rel) => sc.rels[i] = sc.rels[a] - sc.rels[b],
                    (Bin::Seq, _) => sc.rels[i] = sc.rels[a].seq(&sc.rels[b]),
                    (Bin::Cross, _) => sc.rels[i] = Rel::cross(n, sc.sets[a], sc.sets[b]),
                }
            }
            Op::FixVar(..) | Op::EachVar(_) => {}
            Op::Each(k) => {
                let u = &self.eaches[k as usize];
                let mut union = Rel::empty(n);
                for e in members(sc.sets[u.set as usize]) {
                    sc.sets[u.var as usize] = 1u64 << e;
                    for &j in &u.inner {
                        self.eval(j, cx, sc);
                    }
                    union = union | sc.rels[u.body as usize];
                }
                sc.rels[i] = union;
            }
            Op::Fix(k) => {
                let fx = &self.fixes[k as usize];
                for &v in &fx.vars {
                    sc.rels[v as usize] = Rel::empty(n);
                    sc.sets[v as usize] = 0;
                }
                // herd's fixpoint (lib/interpreter.ml, fix_step): each
                // round evaluates the bindings in order, each seeing the
                // ones before it at their new values, until a round changes
                // nothing. Non-monotone definitions (the bell's rcu-rscs)
                // depend on that order.
                for _ in 0..MAX_ROUNDS {
                    let mut changed = false;
                    for ((&v, &b), nodes) in fx.vars.iter().zip(&fx.bodies).zip(&fx.per_body) {
                        for &j in nodes {
                            self.eval(j, cx, sc);
                        }
                        let (v, b) = (v as usize, b as usize);
                        let same = match self.tys[v] {
                            Ty::Set => sc.sets[v] == sc.sets[b],
                            Ty::Rel => sc.rels[v] == sc.rels[b],
                        };
                        if !same {
                            changed = true;
                            sc.sets[v] = sc.sets[b];
                            sc.rels[v] = sc.rels[b];
                        }
                    }
                    if !changed {
                        break;
                    }
                }
            }
            Op::FixOut(f, k) => {
                let Op::Fix(fk) = self.ops[f as usize] else {
                    return;
                };
                let v = self.fixes[fk as usize].vars[k as usize] as usize;
                sc.sets[i] = sc.sets[v];
                sc.rels[i] = sc.rels[v];
            }
        }
    }

    fn holds(&self, c: &Check, sc: &Scratch) -> bool {
        let v = match c.node {
            None => true,
            Some(id) => {
                let i = id as usize;
                match (c.kind, self.tys[i]) {
                    (CheckKind::Acyclic, _) => sc.rels[i].acyclic(),
                    (CheckKind::Irreflexive, _) => sc.rels[i].irreflexive(),
                    (CheckKind::Empty, Ty::Set) => sc.sets[i] == 0,
                    (CheckKind::Empty, Ty::Rel) => sc.rels[i].is_empty(),
                }
            }
        };
        v != c.negated
    }

    fn violation(&self, c: &Check, sc: &Scratch, explain: bool, n: usize) -> Violation {
        let mut v = Violation {
            axiom: c.name,
            cycle: Vec::new(),
            edges: Vec::new(),
        };
        if !explain || c.negated {
            return v;
        }
        if let Some(id) = c.node {
            let i = id as usize;
            match c.kind {
                CheckKind::Acyclic => {
                    v.cycle = shortest_cycle(&sc.rels[i], full_set(n)).unwrap_or_default();
                }
                CheckKind::Irreflexive => {
                    let p = sc.rels[i].reflexive_points();
                    if p != 0 {
                        v.cycle = vec![p.trailing_zeros() as usize];
                    }
                }
                CheckKind::Empty => {}
            }
            v.edges = v.cycle.iter().map(|_| c.name.to_string()).collect();
        }
        v
    }
}

/// A model given as a cat file, compiled: judges executions as
/// [`atomlab_model::models::Model`].
pub struct CatModel {
    pub(crate) name: &'static str,
    pub(crate) plan: Plan,
}

impl std::fmt::Debug for CatModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatModel")
            .field("name", &self.name)
            .field("nodes", &self.plan.ops.len())
            .field("checks", &self.plan.checks.len())
            .finish()
    }
}

impl CatModel {
    /// How many operations the plan has (shared subexpressions counted once).
    pub fn nodes(&self) -> usize {
        self.plan.ops.len()
    }

    /// The names of the checks, in evaluation order.
    pub fn checks(&self) -> Vec<&'static str> {
        self.plan.checks.iter().map(|c| c.name).collect()
    }

    /// Judges one execution, also returning the names of the `flag` checks it raises.
    pub fn judge_flags(&self, x: &Execution<'_>, explain: bool) -> (Judgement, Vec<&'static str>) {
        SCRATCH.with(|cell| {
            let mut table = cell.borrow_mut();
            let sc = table.entry(self.plan.id).or_default();
            let len = self.plan.ops.len();
            let regs = if self.plan.uses_regs {
                match Regs::build(x.s) {
                    Some(g) => Some(g),
                    None => {
                        return (
                            Judgement::Unjudged(
                                "the execution and the register events this model reads exceed 64 events",
                            ),
                            Vec::new(),
                        );
                    }
                }
            } else {
                None
            };
            let cx = Ctx {
                x,
                n: regs.as_ref().map_or(x.s.n, |g| g.n),
                regs,
                tags: &self.plan.tags,
            };
            let n = cx.n;
            if sc.sets.len() < len {
                sc.sets.resize(len, 0);
                sc.rels.resize(len, Rel::empty(n));
                sc.valid.resize(len, false);
            }
            // A new skeleton (any skeleton-only base changed) invalidates
            // every skeleton-only value.
            let mut same = true;
            for &b in &self.plan.skeleton_bases {
                let i = b as usize;
                let (old_s, old_r) = (sc.sets[i], sc.rels[i]);
                let was = sc.valid[i];
                self.plan.eval(b, &cx, sc);
                if !was || old_s != sc.sets[i] || old_r != sc.rels[i] {
                    same = false;
                }
            }
            if !same {
                sc.valid.iter_mut().for_each(|v| *v = false);
                for &b in &self.plan.skeleton_bases {
                    sc.valid[b as usize] = true;
                }
            }
            let mut racy = false;
            let mut flags = Vec::new();
            for c in &self.plan.checks {
                for &id in &c.schedule {
                    let i = id as usize;
                    if self.plan.skeleton_only[i] {
                        if sc.valid[i] {
                            continue;
                        }
                        sc.valid[i] = true;
                    }
                    self.plan.eval(id, &cx, sc);
                }
                let holds = self.plan.holds(c, sc);
                // herd raises a flag when its check holds (`flag ~empty dr`).
                if c.level == Level::Flag {
                    if holds {
                        flags.push(c.name);
                    }
                    continue;
                }
                if holds {
                    continue;
                }
                match c.level {
                    Level::Forbid => {
                        return (
                            Judgement::Forbidden(self.plan.violation(c, sc, explain, n)),
                            flags,
                        )
                    }
                    Level::Undefined => racy = true,
                    Level::Flag | Level::Assert => {}
                }
            }
            (Judgement::Allowed { racy }, flags)
        })
    }
}

impl Model for CatModel {
    fn name(&self) -> &'static str {
        self.name
    }

    fn judge(&self, x: &Execution<'_>, explain: bool) -> Judgement {
        self.judge_flags(x, explain).0
    }

    fn judge_flagged(&self, x: &Execution<'_>, explain: bool) -> (Judgement, Vec<&'static str>) {
        self.judge_flags(x, explain)
    }

    /// The engine then refuses a test whose allowed executions have a cycle
    /// of reads-from and data dependencies (values out of thin air), as it
    /// does under `c11`, instead of printing values it cannot determine; a
    /// model that forbids such cycles never triggers it.
    fn allows_thin_air(&self) -> bool {
        true
    }
}
