//! Which combinations of the threads' runs can make an execution, found by
//! growing one execution graph at a time, as GenMC does (Kokologiannakis,
//! Raad and Vafeiadis, "Model checking for weakly consistent libraries",
//! PLDI 2019; Kokologiannakis and Vafeiadis, "GenMC: A Model Checker for
//! Weak Memory Models", CAV 2021), instead of descending the product of
//! the threads' runs ([`crate::combine`]).
//!
//! Each thread's runs form a trie of their events. The graph holds a
//! prefix of one run per thread; the lowest-numbered thread that can go on
//! adds its next event:
//! - a read takes its value from a write already in the graph (or the
//!   initial value) that some run of the thread reads there; or it waits
//!   (*pending*), and the thread stops until a write added later gives it
//!   its value;
//! - a write (or the write of a read-modify-write) may give its value to
//!   each pending read of its location that some run reads it in: each
//!   such read is given it or left waiting, both searched;
//! - a fence, or a choice of the code that reads nothing (a store-exclusive
//!   that fails), is one step of its own.
//!
//! Which write a read takes its value from is not fixed here: the graph is
//! each thread's place in its trie and which threads wait, and the
//! reads-from and coherence orders are searched when it is judged. After
//! each read or pending read given a value, the threads' prefixes are
//! judged by the models' monotone axioms ([`crate::combine::Probe`]), and a
//! graph that no model allows is not grown further; a graph met again by
//! another order of the same steps is not searched again. A graph in which
//! every thread has ended gives the combinations of runs its leaves hold
//! (runs with the same events may end with different registers), each
//! judged whole by the same code as [`crate::combine::each`]'s; one whose
//! threads all wait is dropped.
//!
//! This finds every combination that has an allowed execution in which
//! `po ∪ rf` is acyclic: add that execution's events in the order above,
//! each read taking its source when the source is in the graph and waiting
//! for it otherwise; no read waits for ever (that would take a thread
//! waiting on a write that comes after a read of another waiting thread,
//! round to itself: a cycle of `po ∪ rf`), and every graph on the way is
//! part of the execution, so no model's monotone axiom cuts it. So it
//! applies only where no allowed execution has such a cycle: under `sc`,
//! `x86tso` (which keep reads before later writes) and `rc11` (whose
//! `no-thin-air` axiom forbids them), and under `aarch64` and `riscv` when
//! every read of every run is kept before each later write of its run
//! ([`applies`]: through a chain of dependencies, same-location writes,
//! acquire reads, release writes and barriers, [`orders`]), since then
//! such a cycle would be one of the model's ordered-before (Arm) or of
//! preserved program order and global memory order (RISC-V), which their
//! axioms forbid; and under `lkmm` when every access is marked and every
//! read is kept before each later write by linux-kernel.cat's preserved
//! program order ([`orders_lkmm`]: dependencies, the same location,
//! acquire and release, fully ordered RMWs, locks, `smp_mb`, `smp_rmb`,
//! `smp_wmb`, `synchronize_rcu`), since then such a cycle would be one of
//! happens-before (`ppo | rfe` between marked accesses), which its
//! `happens-before` axiom forbids. Elsewhere (a load-buffering shape, C11's
//! relaxed accesses, plain accesses under LKMM, whose load buffering
//! herd7 shows with thin-air values) [`crate::combine::each`] searches
//! instead.
//!
//! A combination is handed on once; threads that are copies of one
//! ([`crate::combine::symmetric_groups`]) hand on one ordering of their
//! runs, counted for all of them, as `combine.rs` does.

use std::collections::HashSet;
use std::time::Instant;

use atomlab_litmus::{BarrierKind, Fence, LkAccess, LkFence};

use crate::combine::{once_per_copy, orderings, step, Flow, Prefix, Probe};
use crate::interp::{Kind, Runs, Trace, TraceEvent};
use crate::CheckError;

/// Below about this many combinations of the threads' runs, the search
/// over their product (combine.rs), with its cuts, finds them sooner than
/// growing graphs does: on verify's aarch64 clients (release build,
/// 2026-12-06), 3 threads of a TTAS lock with 2 sections each (57 runs a
/// thread, about 31,000 combinations) take 0.05 s that way and 0.25 s
/// grown; the kernel's MCS lock (125 runs, 325,000) 0.07 s against 0.02 s,
/// 3 sections of a TAS lock (1,122 runs, 2.4 x 10^8) 8 s against 2.2 s.
pub(crate) const ABOVE: f64 = 100_000.0;

/// Whether `model` orders event `m` of a run (`events`) before the later
/// event `e` in every execution, by one of its rules that a chain of them
/// keeps (Arm's ordered-before is transitive; RISC-V's global memory order
/// is a total order that respects each preserved-program-order edge): a
/// dependency (address to any access, data and control to a write), the
/// same location to a write (Arm's lmws, RISC-V's rule 1), a read-modify-
/// write's pair, an acquire read before anything, anything before a
/// release write, Arm's release before acquire, and barriers, as events
/// of the chain ordered after what they order before and before what
/// they order after (a DMB orders its kinds of access on both sides, a
/// RISC-V `fence pred,succ` its predecessor and successor sets;
/// `fence.tso`, which orders loads before anything and stores before
/// stores, is taken as ordering only loads, which loses nothing needed
/// here and adds nothing wrong).
fn orders(model: &str, events: &[TraceEvent], m: usize, e: usize) -> bool {
    let (a, b) = (&events[m], &events[e]);
    let arm = model == "aarch64";
    let access = |x: &TraceEvent| !matches!(x.kind, Kind::Fence(_));
    let on = |deps: u64| m < 64 && deps & (1u64 << m) != 0;
    if access(a) && access(b) {
        let dep = reads(a) && (on(b.addr.dep) || (writes(b) && on(b.data.dep | b.ctrl.dep)));
        return dep
            || (writes(b) && a.loc == b.loc)
            || b.rmw_read.map(usize::from) == Some(m)
            || (reads(a) && (a.annot.acquire || (arm && a.annot.acquire_pc)))
            || (writes(b) && b.annot.release)
            || (arm && a.annot.release && b.annot.acquire);
    }
    // (before, after): which accesses a barrier orders on each side.
    let sides = |f: &TraceEvent| -> Option<((bool, bool), (bool, bool))> {
        match f.kind {
            Kind::Fence(Fence::Dmb(_, o)) if arm => Some(match o.kind {
                BarrierKind::Full => ((true, true), (true, true)),
                BarrierKind::Ld => ((true, false), (true, true)),
                BarrierKind::St => ((false, true), (false, true)),
            }),
            Kind::Fence(Fence::RiscV { pred, succ }) if model == "riscv" => {
                Some(((pred.r, pred.w), (succ.r, succ.w)))
            }
            Kind::Fence(Fence::Tso) if model == "riscv" => Some(((true, false), (true, true))),
            _ => None,
        }
    };
    let kind = |x: &TraceEvent| (reads(x), writes(x));
    let meets = |(r, w): (bool, bool), (xr, xw): (bool, bool)| (r && xr) || (w && xw);
    match (access(a), access(b)) {
        (true, false) => sides(b).is_some_and(|(before, _)| meets(before, kind(a))),
        (false, true) => sides(a).is_some_and(|(_, after)| meets(after, kind(b))),
        _ => false,
    }
}

/// Whether the Linux-kernel model orders event `m` of a run (`events`)
/// before the later event `e` by its preserved program order (`ppo` of
/// linux-kernel.cat, which happens-before contains between marked
/// accesses), by the rules a chain of them keeps: a dependency (address to
/// any access, data and control to a write: `to-r`, `rwdep`), the same
/// location to a write (`overwrite & int`, which a read-modify-write's
/// pair is too), an acquire read (`smp_load_acquire`, a successful
/// `_acquire` RMW's read, a lock's LKR: lock.cat's `Acquire`) before
/// anything (`acq-po`), anything before a release write (`po-rel`, an
/// unlock), a fully ordered RMW's events (the bell's `Mb` tag) like
/// `smp_mb()` on both sides, and the barriers `smp_mb()` (everything),
/// `smp_rmb()` (reads but non-returning RMWs' on both sides),
/// `smp_wmb()` (writes on both sides) and `synchronize_rcu()` (a strong
/// fence: everything), as events of the chain ordered after what they
/// order before and before what they order after. Every other barrier
/// (`smp_mb__after_atomic` and its kin, which order only beside an RMW,
/// SRCU's grace periods) orders nothing here: fewer orders only make the
/// search apply to fewer tests. The caller checks that every access is
/// marked: happens-before relates marked accesses only.
fn orders_lkmm(events: &[TraceEvent], m: usize, e: usize) -> bool {
    let (a, b) = (&events[m], &events[e]);
    let access = |x: &TraceEvent| !matches!(x.kind, Kind::Fence(_));
    let on = |deps: u64| m < 64 && deps & (1u64 << m) != 0;
    // Not the read of a failed RMW (the bell's `FailedRMW`, which no
    // ordering tag covers): an access of no RMW, a pair's write, or the
    // read a later write of the run names as its pair's.
    let succeeds = |i: usize| {
        let x = &events[i];
        !x.annot.lk_rmw
            || x.rmw_read.is_some()
            || events[i + 1..]
                .iter()
                .any(|y| y.rmw_read.map(usize::from) == Some(i))
    };
    let tag = |x: &TraceEvent| x.annot.lk;
    let fully_ordered =
        |x: &TraceEvent, i: usize| tag(x) == LkAccess::Mb && x.annot.lk_rmw && succeeds(i);
    if access(a) && access(b) {
        let dep = reads(a) && (on(b.addr.dep) || (writes(b) && on(b.data.dep | b.ctrl.dep)));
        let acquire = a.kind == Kind::Read
            && (tag(a) == LkAccess::LockRead || (tag(a) == LkAccess::Acquire && succeeds(m)));
        let release = b.kind == Kind::Write
            && (tag(b) == LkAccess::Unlock || (tag(b) == LkAccess::Release && succeeds(e)));
        return dep
            || (writes(b) && a.loc == b.loc)
            || acquire
            || release
            || fully_ordered(a, m)
            || fully_ordered(b, e);
    }
    // Which accesses a barrier orders (the same on both sides here).
    let ordered = |f: &TraceEvent, x: &TraceEvent| match f.kind {
        Kind::Fence(Fence::Linux(LkFence::Mb | LkFence::SyncRcu)) => true,
        Kind::Fence(Fence::Linux(LkFence::Rmb)) => {
            x.kind == Kind::Read && tag(x) != LkAccess::Noreturn
        }
        Kind::Fence(Fence::Linux(LkFence::Wmb)) => x.kind == Kind::Write,
        _ => false,
    };
    match (access(a), access(b)) {
        (true, false) => ordered(b, a),
        (false, true) => ordered(a, b),
        _ => false,
    }
}

/// Whether `model` keeps every read of the run `events` before each later
/// write of it, through chains of [`orders`] ([`orders_lkmm`] for the
/// Linux-kernel model, whose accesses must all be marked).
fn keeps_reads_before_writes(model: &str, events: &[TraceEvent]) -> bool {
    match model {
        // TSO keeps a read before every later write; rc11 forbids po ∪ rf
        // cycles outright.
        "sc" | "x86tso" | "rc11" => return true,
        "aarch64" | "riscv" => {}
        "lkmm" => {
            let marked = |x: &TraceEvent| {
                matches!(x.kind, Kind::Fence(_)) || x.annot.lk != LkAccess::None || x.annot.lk_rmw
            };
            if !events.iter().all(marked) {
                return false;
            }
        }
        _ => return false,
    }
    let n = events.len().min(64);
    // before[e]: the events (bit per event) ordered before e.
    let mut before = vec![0u64; n];
    for e in 0..n {
        for m in 0..e {
            let ordered = match model {
                "lkmm" => orders_lkmm(events, m, e),
                _ => orders(model, events, m, e),
            };
            if ordered {
                before[e] |= before[m] | 1 << m;
            }
        }
        if writes(&events[e]) {
            let earlier_reads = (0..e)
                .filter(|&r| reads(&events[r]))
                .fold(0u64, |acc, r| acc | 1 << r);
            if earlier_reads & !before[e] != 0 {
                return false;
            }
        }
    }
    events.len() <= 64
}

fn reads(e: &TraceEvent) -> bool {
    matches!(e.kind, Kind::Read | Kind::Update)
}

fn writes(e: &TraceEvent) -> bool {
    matches!(e.kind, Kind::Write | Kind::Update)
}

/// Whether this search finds every combination with an allowed execution
/// under each of `models` (built-in models, by name) for runs `traces`:
/// see the module's docs. Runs that take the same path (the same
/// instructions, so the same dependencies) are looked at once.
pub(crate) fn applies(models: &[&str], traces: &[Runs]) -> bool {
    let mut seen: Vec<*const Vec<Trace>> = Vec::new();
    for runs in traces {
        let p = std::rc::Rc::as_ptr(runs);
        if seen.contains(&p) {
            continue;
        }
        seen.push(p);
        let mut paths: HashSet<Vec<(usize, usize)>> = HashSet::new();
        // The path being looked up, allocated again only when it is new.
        let mut path: Vec<(usize, usize)> = Vec::new();
        for run in runs.iter() {
            path.clear();
            path.extend(run.events.iter().map(|e| (e.pc, e.instance)));
            if paths.contains(&path) {
                continue;
            }
            paths.insert(path.clone());
            if !models
                .iter()
                .all(|m| keeps_reads_before_writes(m, &run.events))
            {
                return false;
            }
        }
    }
    true
}

/// What tells two events of runs apart in the trie: equal keys after equal
/// prefixes are equal events (the rest of an event follows from them).
fn key(e: &TraceEvent) -> (u8, usize, i64, i64, usize, usize) {
    let kind = match e.kind {
        Kind::Read => 0,
        Kind::Write => 1,
        Kind::Update => 2,
        Kind::Fence(_) => 3,
    };
    (kind, e.loc, e.rval, e.wval, e.pc, e.instance)
}

/// A node of a thread's trie: the runs `runs[lo..hi]`, which share their
/// first `depth` events.
struct Node {
    lo: usize,
    hi: usize,
    depth: usize,
    children: Vec<usize>,
}

/// One thread's runs as a trie of their events.
struct Trie<'a> {
    runs: &'a [Trace],
    nodes: Vec<Node>,
}

impl<'a> Trie<'a> {
    /// The trie of `runs`, in the order the interpreter found them: depth
    /// first, so that the runs sharing a prefix are next to each other and
    /// a node's children are its runs' consecutive stretches of one next
    /// event. (Were two stretches of one event apart, they would be two
    /// children with the same event: searched twice, nothing lost.)
    fn build(runs: &'a [Trace]) -> Trie<'a> {
        let mut trie = Trie {
            runs,
            nodes: Vec::new(),
        };
        trie.grow(0, runs.len(), 0);
        trie
    }

    fn events(&self, k: usize) -> &'a [TraceEvent] {
        &self.runs[k].events
    }

    /// Adds the node of runs `runs[lo..hi]` sharing `depth` events, and
    /// its subtrie; returns its index.
    fn grow(&mut self, lo: usize, hi: usize, depth: usize) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node {
            lo,
            hi,
            depth,
            children: Vec::new(),
        });
        // Each stretch of runs that end here is a leaf of its own (unless
        // they are all there is, when this node is that leaf).
        if (lo..hi).all(|k| self.events(k).len() == depth) {
            return id;
        }
        let mut children = Vec::new();
        let mut a = lo;
        while a < hi {
            let k = self.events(a).get(depth).map(key);
            let mut b = a + 1;
            while b < hi && self.events(b).get(depth).map(key) == k {
                b += 1;
            }
            children.push(match k {
                None => {
                    self.nodes.push(Node {
                        lo: a,
                        hi: b,
                        depth,
                        children: Vec::new(),
                    });
                    self.nodes.len() - 1
                }
                Some(_) => self.grow(a, b, depth + 1),
            });
            a = b;
        }
        self.nodes[id].children = children;
        id
    }
}

/// The search.
struct Grow<'t, 'a, 'p> {
    /// Each thread's trie (copies of one thread share it).
    tries: Vec<&'t Trie<'a>>,
    init: &'t [i64],
    /// Each thread's node: its events in the graph are the node's runs'
    /// first `depth`.
    cur: Vec<usize>,
    /// Threads whose next event is a read waiting for a write.
    pending: Vec<bool>,
    groups: &'t [Vec<usize>],
    probe: Option<&'t mut Probe<'p>>,
    /// The combinations handed on, each thread's run by its index.
    found: HashSet<Vec<usize>>,
    /// The graphs searched: each thread's node and whether it waits.
    seen: HashSet<(Vec<usize>, Vec<bool>)>,
    deadline: Option<Instant>,
    steps: u64,
}

/// Calls `visit` with every combination of one run per thread that an
/// execution without a `po ∪ rf` cycle can take (see the module's docs;
/// the caller checks [`applies`]), until it says stop. `groups` and the
/// weights as [`crate::combine::each`]'s; `probe` judges the threads'
/// prefixes.
pub(crate) fn each(
    traces: &[Runs],
    init: &[i64],
    probe: Option<&mut Probe<'_>>,
    groups: &[Vec<usize>],
    deadline: Option<Instant>,
    mut visit: impl FnMut(&[&Trace], u64) -> Result<Flow, CheckError>,
) -> Result<(), CheckError> {
    if traces.iter().any(|t| t.is_empty()) {
        return Ok(());
    }
    // Copies of one thread share one trie.
    let (distinct, trie_of) = once_per_copy(traces, Trie::build);
    let mut search = Grow {
        tries: trie_of.iter().map(|&d| &distinct[d]).collect(),
        init,
        cur: vec![0; traces.len()],
        pending: vec![false; traces.len()],
        groups,
        probe,
        found: HashSet::new(),
        seen: HashSet::new(),
        deadline,
        steps: 0,
    };
    search.go(&mut visit).map(|_| ())
}

impl<'a> Grow<'_, 'a, '_> {
    fn node(&self, t: usize) -> &Node {
        &self.tries[t].nodes[self.cur[t]]
    }

    /// The events of thread `t` in the graph.
    fn prefix(&self, t: usize) -> &'a [TraceEvent] {
        let n = self.node(t);
        &self.tries[t].events(n.lo)[..n.depth]
    }

    /// The event that taking child `c` adds to thread `t` (`None` for the
    /// leaf of runs that end where others go on).
    fn added(&self, t: usize, c: usize) -> Option<&'a TraceEvent> {
        let trie = self.tries[t];
        let (here, child) = (self.node(t), &trie.nodes[c]);
        (child.depth > here.depth).then(|| &trie.events(child.lo)[here.depth])
    }

    /// Whether a write in the graph (or the initial state) gives `loc` the
    /// value `val`. Which one does not matter here: the graphs differ only
    /// in their reads-from, which the probe and the judge of a
    /// combination search themselves.
    fn written(&self, loc: usize, val: i64) -> bool {
        self.init.get(loc) == Some(&val)
            || (0..self.cur.len())
                .flat_map(|t| self.prefix(t))
                .any(|e| writes(e) && e.loc == loc && e.wval == val)
    }

    /// Whether some model may allow an execution that extends the graph.
    fn consistent(&mut self) -> Result<bool, CheckError> {
        let Some(probe) = self.probe.as_mut() else {
            return Ok(true);
        };
        let prefixes: Vec<Prefix<'_>> = (0..self.cur.len())
            .map(|t| {
                let n = &self.tries[t].nodes[self.cur[t]];
                let events = &self.tries[t].events(n.lo)[..n.depth];
                // Every read in the graph has its source there.
                let settled = events
                    .iter()
                    .enumerate()
                    .take(64)
                    .filter(|(_, e)| reads(e))
                    .fold(0u64, |a, (k, _)| a | 1 << k);
                Prefix {
                    events,
                    settled,
                    later: Vec::new(),
                }
            })
            .collect();
        probe(&prefixes)
    }

    fn go(
        &mut self,
        visit: &mut impl FnMut(&[&Trace], u64) -> Result<Flow, CheckError>,
    ) -> Result<Flow, CheckError> {
        step(&mut self.steps, self.deadline)?;
        // The threads' places and which wait decide all that can follow:
        // a graph met again by another order of the same steps is not
        // searched again.
        if !self.seen.insert((self.cur.clone(), self.pending.clone())) {
            return Ok(Flow::Go);
        }
        let n = self.cur.len();
        let Some(t) = (0..n).find(|&t| !self.pending[t] && !self.node(t).children.is_empty())
        else {
            if self.pending.iter().any(|&p| p) {
                return Ok(Flow::Go); // every thread left waits: no execution
            }
            return self.complete(visit);
        };
        let here = self.cur[t];
        let depth = self.node(t).depth;
        let children = self.tries[t].nodes[here].children.clone();
        let mut a_read = false;
        for c in children {
            let flow = match self.added(t, c) {
                None => {
                    self.cur[t] = c;
                    self.go(visit)?
                }
                Some(e) if reads(e) => {
                    a_read = true;
                    self.cur[t] = c;
                    if self.written(e.loc, e.rval) && self.consistent()? {
                        let wrote = if writes(e) {
                            vec![(t, depth)]
                        } else {
                            Vec::new()
                        };
                        self.settle(wrote, visit)?
                    } else {
                        Flow::Go
                    }
                }
                Some(e) => {
                    self.cur[t] = c;
                    if writes(e) {
                        self.settle(vec![(t, depth)], visit)?
                    } else {
                        self.go(visit)?
                    }
                }
            };
            self.cur[t] = here;
            if let Flow::Stop = flow {
                return Ok(Flow::Stop);
            }
        }
        if a_read {
            // Or the read waits for a write added later.
            self.pending[t] = true;
            let flow = self.go(visit)?;
            self.pending[t] = false;
            return Ok(flow);
        }
        Ok(Flow::Go)
    }

    /// Offers each write of `wrote` (just added) to the pending reads of
    /// its location that some run reads its value in, then goes on.
    fn settle(
        &mut self,
        mut wrote: Vec<(usize, usize)>,
        visit: &mut impl FnMut(&[&Trace], u64) -> Result<Flow, CheckError>,
    ) -> Result<Flow, CheckError> {
        let Some((w, k)) = wrote.pop() else {
            return self.go(visit);
        };
        let e = &self.prefix(w)[k];
        let (loc, val) = (e.loc, e.wval);
        let mut waiting: Vec<(usize, Vec<usize>)> = Vec::new();
        for t in (0..self.cur.len()).filter(|&t| self.pending[t] && t != w) {
            let fits: Vec<usize> = self
                .node(t)
                .children
                .iter()
                .copied()
                .filter(|&c| {
                    self.added(t, c)
                        .is_some_and(|r| reads(r) && r.loc == loc && r.rval == val)
                })
                .collect();
            if !fits.is_empty() {
                waiting.push((t, fits));
            }
        }
        self.give(&waiting, 0, wrote, visit)
    }

    /// Gives the write to each of `waiting[i..]` or not, both searched.
    fn give(
        &mut self,
        waiting: &[(usize, Vec<usize>)],
        i: usize,
        wrote: Vec<(usize, usize)>,
        visit: &mut impl FnMut(&[&Trace], u64) -> Result<Flow, CheckError>,
    ) -> Result<Flow, CheckError> {
        let Some((t, fits)) = waiting.get(i) else {
            return self.settle(wrote, visit);
        };
        let t = *t;
        if let Flow::Stop = self.give(waiting, i + 1, wrote.clone(), visit)? {
            return Ok(Flow::Stop);
        }
        let (here, depth) = (self.cur[t], self.node(t).depth);
        for &c in fits {
            let rmw = self.added(t, c).is_some_and(writes);
            self.cur[t] = c;
            self.pending[t] = false;
            let flow = if self.consistent()? {
                let mut more = wrote.clone();
                if rmw {
                    more.push((t, depth));
                }
                self.give(waiting, i + 1, more, visit)?
            } else {
                Flow::Go
            };
            self.pending[t] = true;
            self.cur[t] = here;
            if let Flow::Stop = flow {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Go)
    }

    /// Every thread has ended: hands on each combination of the runs its
    /// leaves hold (runs with the same events may end with different
    /// registers), once each, in the order a group of copies takes (runs
    /// by index), with the number of orderings it stands for.
    fn complete(
        &mut self,
        visit: &mut impl FnMut(&[&Trace], u64) -> Result<Flow, CheckError>,
    ) -> Result<Flow, CheckError> {
        let ranges: Vec<(usize, usize)> = (0..self.cur.len())
            .map(|t| (self.node(t).lo, self.node(t).hi))
            .collect();
        let mut pick: Vec<usize> = ranges.iter().map(|r| r.0).collect();
        loop {
            // The group's runs in order: one ordering stands for all.
            let mut at = pick.clone();
            for g in self.groups {
                let mut runs: Vec<usize> = g.iter().map(|&t| at[t]).collect();
                runs.sort_unstable();
                for (&t, r) in g.iter().zip(runs) {
                    at[t] = r;
                }
            }
            let weight = orderings(self.groups, &at);
            if self.found.insert(at.clone()) {
                let chosen: Vec<&Trace> = at
                    .iter()
                    .enumerate()
                    .map(|(t, &k)| &self.tries[t].runs[k])
                    .collect();
                if let Flow::Stop = visit(&chosen, weight)? {
                    return Ok(Flow::Stop);
                }
            }
            // The next combination, as an odometer.
            let mut t = 0;
            loop {
                if t == pick.len() {
                    return Ok(Flow::Go);
                }
                pick[t] += 1;
                if pick[t] < ranges[t].1 {
                    break;
                }
                pick[t] = ranges[t].0;
                t += 1;
            }
        }
    }
}
