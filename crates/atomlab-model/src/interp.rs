//! Runs each thread's code on its own, with every value a read might return,
//! to get the thread's possible *traces*: its memory events (with concrete
//! locations and values) and the dependencies between them.
//!
//! The values a read may return are those some write could store, found by a
//! fixpoint over all threads (herd7 does the same by solving value equations
//! after choosing reads-from). Dependencies are tracked as *taints*: the set
//! of the thread's reads each register value derives from, both through
//! registers and through memory (a read of a location written earlier by the
//! same thread inherits that write's taint: Arm's "local memory read
//! successor", aarch64deps.cat `lmrs`). Arm's "pick" dependencies (through a
//! CSEL condition or a CAS comparison) are kept in a second, wider taint.
//!
//! How far a branch's control dependency reaches depends on the language.
//! In an ISA a conditional branch orders every po-later event (herd7's
//! modelUtils.ml `ctrl_one`: from the branch commit along `po`). In herd7's
//! C semantics (CSem.ml, `C.If`: the condition is bound with `>>>>` to a
//! `choiceT` between the two branches, and the code after the `if` is
//! sequenced after the choice) the control relation only reaches the
//! events *inside* the branches, not those after they join: a compiler may
//! merge a store both paths execute and hoist it above the test. So a C
//! test's `ctrl` stops at the `if`'s join point (see [`ctrl_joins`]). A
//! register written inside a branch still carries the branch's control to
//! a later condition that reads it (modelUtils.ml `ddplus`: `dd_inside`,
//! which includes register reads-from, alternated with `control` out of
//! loads), though not to data or address dependencies: [`State::reg_ctl`].
//! A C11 test compiled to an ISA by [`crate::mapping`] keeps the ISA rule;
//! that module's documentation says why.

use std::collections::BTreeSet;

use atomlab_litmus::{
    Annot, Arch, BinOp, CasExpected, Expr, Fence, Instr, LkAccess, LkFence, RmwOp, Test, Thread,
    Value,
};

use crate::CheckError;

/// Base of the integers that stand for location addresses.
pub(crate) const LOC_BASE: i64 = 0x4000_0000_0000;
/// Distance between two locations' addresses.
pub(crate) const LOC_STRIDE: i64 = 0x1_0000;

/// The integer that stands for `v`.
pub(crate) fn encode(v: Value) -> i64 {
    match v {
        Value::Int(i) => i,
        Value::Loc(l) => LOC_BASE + l as i64 * LOC_STRIDE,
        // Only results carry symbols (never a test's constants): a value no
        // program computes, should one ever reach here.
        Value::Sym(n) => i64::MIN + n as i64,
    }
}

/// The test-level value an integer stands for.
pub(crate) fn decode(v: i64, nlocs: usize) -> Value {
    if v >= LOC_BASE && (v - LOC_BASE) % LOC_STRIDE == 0 {
        let l = ((v - LOC_BASE) / LOC_STRIDE) as usize;
        if l < nlocs {
            return Value::Loc(l);
        }
    }
    Value::Int(v)
}

/// Which of a thread's events a value derives from (bit `i` = the thread's
/// `i`-th event): `dep` for true data flow, `pick` adding Arm's pick edges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Taint {
    /// Register and memory data flow.
    pub dep: u64,
    /// `dep` plus conditions of selects and CAS comparisons.
    pub pick: u64,
}

impl Taint {
    fn union(self, o: Taint) -> Taint {
        Taint {
            dep: self.dep | o.dep,
            pick: self.pick | o.pick,
        }
    }
    fn of(i: usize) -> Taint {
        Taint {
            dep: 1 << i,
            pick: 1 << i,
        }
    }
    /// The taint as a pick-only dependency.
    fn as_pick(self) -> Taint {
        Taint {
            dep: 0,
            pick: self.dep | self.pick,
        }
    }
}

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A read.
    Read,
    /// A write.
    Write,
    /// One event that reads and writes (herd's C read-modify-writes).
    Update,
    /// A fence or barrier.
    Fence(Fence),
}

/// One event of a thread trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TraceEvent {
    /// What it does.
    pub kind: Kind,
    /// The location accessed (none for fences).
    pub loc: usize,
    /// The value read.
    pub rval: i64,
    /// The value written.
    pub wval: i64,
    /// Access annotations.
    pub annot: Annot,
    /// Which dynamic instruction produced it (events of one instruction share it).
    pub instance: usize,
    /// The index of that instruction in its thread's code (for tools that
    /// map events back to their source, as `verify` does to machine code).
    pub pc: usize,
    /// Taint of its address.
    pub addr: Taint,
    /// Taint of the value it writes.
    pub data: Taint,
    /// Taint of the branch conditions before it.
    pub ctrl: Taint,
    /// For the write of an RMW pair: its read ([`EventIndex`]).
    pub rmw_read: Option<EventIndex>,
    /// Whether the RMW pair is a single atomic instruction (not LDXR/STXR).
    pub amo: bool,
    /// For a write: the read of this thread whose value it stores unchanged
    /// (through register copies only), for the thin-air analysis
    /// ([`crate::thin`]).
    pub copy_of: Option<EventIndex>,
    /// herd7's variable (numbered within the thread) of the value read, for
    /// a read, or of the value written, for a write whose value is a
    /// register's, when the thread is numbered ([`crate::herd_path::Numbering`]);
    /// 0 otherwise.
    pub hvar: u32,
}

/// An event's index in its run, as an event refers to another: a byte, since
/// a run has at most [`MAX_RUN_EVENTS`] events (runs are kept by the thousand,
/// and each event's two references were 32 bytes as `Option<usize>`).
pub(crate) type EventIndex = u8;

/// The most events one run of a thread may have.
/// (Not `graph::MAX_EVENTS`, the events of a whole execution a word holds.)
pub(crate) const MAX_RUN_EVENTS: usize = 60;

/// `i` as an [`EventIndex`]: `i` indexes a run's events, which
/// [`Interp::push`] keeps below [`MAX_RUN_EVENTS`].
fn event_index(i: usize) -> EventIndex {
    debug_assert!(i < MAX_RUN_EVENTS);
    i as EventIndex
}

/// One way a thread can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trace {
    /// Its events in program order.
    pub events: Vec<TraceEvent>,
    /// Final register values.
    pub regs: Vec<i64>,
    /// Per register: the read whose value it holds unchanged at the end.
    pub reg_src: Vec<Option<usize>>,
    /// Per register: the reads its final value depends on (bit per event).
    pub reg_dep: Vec<u64>,
    /// The reads whose values a branch condition tests (bit per event).
    pub tested: u64,
    /// herd7's count of the thread's fresh variables, when followed
    /// ([`crate::herd_path::Numbering`]).
    pub herd_total: Option<u32>,
    /// herd7's register-pass equations along this run (thread-numbered
    /// variables: a register read's, the one its register held).
    pub herd_unions: Vec<(u32, u32)>,
}

impl Trace {
    /// A run's first events, as a run of their own (no registers): what
    /// the runs below a node of the combination search share, followed by
    /// a plain write of each of `later`'s (location, value) pairs (with no
    /// dependencies, each an instruction of its own).
    pub(crate) fn prefix(events: &[TraceEvent], later: &[(usize, i64)]) -> Trace {
        let mut events = events.to_vec();
        let next = events.iter().map(|e| e.instance + 1).max().unwrap_or(0);
        for (k, &(loc, wval)) in later.iter().enumerate() {
            events.push(TraceEvent {
                kind: Kind::Write,
                loc,
                rval: 0,
                wval,
                annot: Annot::default(),
                instance: next + k,
                pc: usize::MAX,
                addr: Taint::default(),
                data: Taint::default(),
                ctrl: Taint::default(),
                rmw_read: None,
                amo: false,
                copy_of: None,
                hvar: 0,
            });
        }
        Trace {
            events,
            regs: Vec::new(),
            reg_src: Vec::new(),
            reg_dep: Vec::new(),
            tested: 0,
            herd_total: None,
            herd_unions: Vec::new(),
        }
    }
}

struct State {
    pc: usize,
    regs: Vec<(i64, Taint)>,
    ctrl: Taint,
    events: Vec<TraceEvent>,
    last_write: Vec<Option<Taint>>,
    own: Vec<Option<i64>>,
    monitor: Option<(usize, usize)>,
    instance: usize,
    /// The index of the instruction being run (each event's `pc`).
    here: usize,
    steps: usize,
    /// Open `if`s (structured control only): the join point of each and
    /// the control taint to restore there, innermost last.
    scopes: Vec<(usize, Taint)>,
    /// Per register (structured control only): the reads whose values the
    /// branches it was written under depend on, through the registers its
    /// value came from (herd7's `ddplus`). Joins a later branch condition
    /// reading the register, not data or address dependencies.
    reg_ctl: Vec<u64>,
    /// Loop rule only ([`crate::LoopRule`]): per instruction, how many
    /// events the path had when it last ran it (`usize::MAX`: never).
    seen_at: Vec<usize>,
    /// Loop rule only: iterations of each loop that wrote, by the index of
    /// the instruction it jumps back to.
    iterations: Vec<u32>,
    /// Per register: the read whose value it holds unchanged.
    reg_src: Vec<Option<usize>>,
    /// Reads a branch condition tested.
    tested: u64,
    /// herd7's variable numbers along this path (structured C only).
    herd: Option<crate::herd_path::HerdPath>,
    /// The path's writes so far, numbered by [`Interp::writes`].
    writes: Vec<u32>,
}

impl State {
    /// A copy for another branch of the path, whose events have room for
    /// `room` (at least one more): a path is copied at each read's values
    /// and pushes its next events at once, and a copy sized to its length
    /// reallocated on each (a sixth of `verify`'s time on a 3-thread
    /// seqlock client went to those); the copy ends as a run kept to the
    /// end, so room beyond its length is memory held for nothing.
    fn fork(&self, room: usize) -> State {
        let mut events = Vec::with_capacity(room.max(self.events.len() + 1));
        events.extend_from_slice(&self.events);
        State {
            pc: self.pc,
            regs: self.regs.clone(),
            ctrl: self.ctrl,
            events,
            last_write: self.last_write.clone(),
            own: self.own.clone(),
            monitor: self.monitor,
            instance: self.instance,
            here: self.here,
            steps: self.steps,
            scopes: self.scopes.clone(),
            reg_ctl: self.reg_ctl.clone(),
            seen_at: self.seen_at.clone(),
            iterations: self.iterations.clone(),
            reg_src: self.reg_src.clone(),
            tested: self.tested,
            herd: self.herd.clone(),
            writes: self.writes.clone(),
        }
    }
}

/// Instruction steps allowed on one path (loops are not unrolled further).
const MAX_STEPS: usize = 2000;

/// Possible runs (traces) kept for all the threads of a test together,
/// each about a kilobyte: a budget the threads share rather than a bound
/// per thread, so that one thread with many reads (a reader of four loads
/// of a location eight writes may give has 9^4 runs, 21^4 with twenty) is
/// not stopped while the others have a run or two. The old bound of 20,000
/// per thread allowed as much memory with ten threads.
pub(crate) const MAX_TRACES: usize = 200_000;

pub(crate) struct Interp<'t> {
    pub test: &'t Test,
    /// Initial value of each location.
    pub init: Vec<i64>,
    /// Values other threads may write, per location, in increasing order.
    pub others: Vec<Vec<i64>>,
    pub max_traces: usize,
    /// Give up (TIMEOUT) after this instant.
    pub deadline: Option<std::time::Instant>,
    /// Instructions interpreted, for the deadline checks.
    pub ticks: std::cell::Cell<u64>,
    /// The caller's progress counts ([`crate::CheckOptions::progress`]):
    /// each run enumerated is counted.
    pub progress: Option<std::sync::Arc<crate::SearchProgress>>,
    /// A read carries the dependencies of the thread's last write to its
    /// location. Off for Linux-kernel tests: linux-kernel.bell carries
    /// dependencies through memory only along `data; rfi` (carry-dep),
    /// which the lkmm model computes from the execution's rf.
    pub forward: bool,
    /// C's structured control (herd7's CSem.ml): a branch's `ctrl` covers
    /// the events before its join point only. Off for ISA code, including
    /// a C test compiled by [`crate::mapping`].
    pub structured: bool,
    /// Spin-assume and the unroll bound, for lifted code; `None` for litmus
    /// tests (whose loops run to [`MAX_STEPS`] as they always have).
    pub loops: Option<crate::LoopRule>,
    /// The writes of the thread's runs, for the value search. A path that
    /// spin-assume drops counts as well: its writes seed the search though
    /// the path ends nowhere, so that two threads that wait for each
    /// other's writes (a producer that waits for the consumer to free a
    /// slot, which waits for the item) find the values that let each go on.
    pub writes: std::cell::RefCell<WriteLog>,
    /// The events of the longest run so far: the room a
    /// copied path is given ([`State::fork`]).
    pub room: std::cell::Cell<usize>,
}

/// A write of a path and what its value was computed from, flat:
/// `[location, value written, (location, value)…]`, a pair for each read
/// its value or existence is tainted by through data, a select or a CAS
/// comparison (a read-modify-write's write counts its own read).
pub(crate) type Derivation = [i64];

/// The writes the runs of one thread make, for the value search
/// ([`ValueChains`]): each distinct [`Derivation`] once, in the order the
/// depth-first search met it (a path's writes in program order), rather
/// than every run's writes again: the 7,125 runs of a 3-thread seqlock
/// client write the same few dozen things, and deriving and chaining each
/// run's writes took a third of `verify`'s time.
#[derive(Default)]
pub(crate) struct WriteLog {
    /// Distinct derivation -> its number.
    index: std::collections::HashMap<Box<Derivation>, u32>,
    /// The derivations by number, and whether a run that counts (complete,
    /// or dropped by spin-assume) made it.
    list: Vec<(Box<Derivation>, bool)>,
    /// Per counted run: the locations it writes, sorted, each list once.
    locs: std::collections::HashSet<Vec<usize>>,
    /// The most writes a complete run makes.
    most: usize,
    /// Scratch for the derivation being looked up.
    scratch: Vec<i64>,
}

impl WriteLog {
    /// The number of the write `events[i]`'s derivation.
    fn number(&mut self, events: &[TraceEvent], i: usize) -> u32 {
        let e = &events[i];
        let mut from = e.data.pick;
        if let Some(r) = e.rmw_read {
            from |= 1 << r;
        }
        if e.kind == Kind::Update {
            from |= 1 << i;
        }
        let mut key = std::mem::take(&mut self.scratch);
        key.clear();
        key.extend([e.loc as i64, e.wval]);
        for r in crate::rel::members(from).filter_map(|j| events.get(j)) {
            if matches!(r.kind, Kind::Read | Kind::Update) {
                key.extend([r.loc as i64, r.rval]);
            }
        }
        let n = match self.index.get(key.as_slice()) {
            Some(&n) => n,
            None => {
                let n = self.list.len() as u32;
                self.index.insert(key.clone().into_boxed_slice(), n);
                self.list.push((key.clone().into_boxed_slice(), false));
                n
            }
        };
        self.scratch = key;
        n
    }

    /// A run that counts made the writes `numbers` (in program order);
    /// `complete` when it ran to its end.
    fn ran(&mut self, numbers: &[u32], complete: bool) {
        let mut locs: Vec<usize> = numbers
            .iter()
            .map(|&n| {
                let d = &mut self.list[n as usize];
                d.1 = true;
                d.0[0] as usize
            })
            .collect();
        locs.sort_unstable();
        if complete {
            self.most = self.most.max(locs.len());
        }
        self.locs.insert(locs);
    }
}

/// What one thread's runs of a round wrote ([`WriteLog`], its counted
/// derivations only).
#[derive(Default)]
struct Written {
    derivations: Vec<Box<Derivation>>,
    locs: Vec<Vec<usize>>,
    /// The most writes a complete run makes.
    most: usize,
}

impl From<WriteLog> for Written {
    fn from(log: WriteLog) -> Written {
        Written {
            derivations: log.list.into_iter().filter(|d| d.1).map(|d| d.0).collect(),
            locs: log.locs.into_iter().collect(),
            most: log.most,
        }
    }
}

impl State {
    /// herd7's variables for evaluating `e` on this path ([`crate::thin`]).
    fn herd_walk(&mut self, e: &Expr) -> u32 {
        self.herd.as_mut().map_or(0, |h| h.walk(e))
    }
}

impl Interp<'_> {
    fn loc_of(&self, addr: i64, t: &Thread) -> Result<usize, CheckError> {
        match decode(addr, self.test.locations.len()) {
            Value::Loc(l) => Ok(l),
            Value::Int(i) => Err(CheckError::Semantics(format!(
                "thread P{} accesses address {i}, which is not a location",
                t.id
            ))),
            Value::Sym(n) => Err(CheckError::Semantics(format!(
                "thread P{} accesses the unsolved address S{n}",
                t.id
            ))),
        }
    }

    fn eval(&self, e: &Expr, st: &State) -> (i64, Taint) {
        match e {
            Expr::Const(v) => (encode(*v), Taint::default()),
            Expr::Reg(r) => st.regs[*r],
            Expr::Not(a) => {
                let (v, t) = self.eval(a, st);
                ((v == 0) as i64, t)
            }
            Expr::Bin(op, a, b) => {
                let (x, ta) = self.eval(a, st);
                let (y, tb) = self.eval(b, st);
                (binop(*op, x, y), ta.union(tb))
            }
        }
    }

    /// All traces of thread `t`.
    pub(crate) fn traces(&self, t: &Thread) -> Result<Vec<Trace>, CheckError> {
        let mut regs = vec![(0i64, Taint::default()); t.regs.len()];
        for (r, v) in &t.init {
            regs[*r] = (encode(*v), Taint::default());
        }
        let st = State {
            pc: 0,
            regs,
            ctrl: Taint::default(),
            events: Vec::new(),
            last_write: vec![None; self.test.locations.len()],
            own: vec![None; self.test.locations.len()],
            monitor: None,
            instance: 0,
            here: 0,
            steps: 0,
            scopes: Vec::new(),
            reg_ctl: vec![0; t.regs.len()],
            seen_at: if self.loops.is_some() {
                vec![usize::MAX; t.code.len()]
            } else {
                Vec::new()
            },
            iterations: if self.loops.is_some() {
                vec![0; t.code.len()]
            } else {
                Vec::new()
            },
            reg_src: vec![None; t.regs.len()],
            tested: 0,
            herd: if self.structured {
                crate::herd_path::Numbering::of(t)
                    .map(|n| crate::herd_path::HerdPath::new(n, t.regs.len()))
            } else {
                None
            },
            writes: Vec::new(),
        };
        let joins = if self.structured {
            ctrl_joins(&t.code)
        } else {
            Vec::new()
        };
        let mut out = Vec::new();
        self.run(t, &joins, st, &mut out)?;
        Ok(out)
    }

    /// The reads the branch conditions over `e`'s registers' writes depend
    /// on ([`State::reg_ctl`]).
    fn regs_ctl(e: &Expr, st: &State) -> u64 {
        match e {
            Expr::Const(_) => 0,
            Expr::Reg(r) => st.reg_ctl[*r],
            Expr::Not(a) => Self::regs_ctl(a, st),
            Expr::Bin(_, a, b) => Self::regs_ctl(a, st) | Self::regs_ctl(b, st),
        }
    }

    /// Structured control, before `instr` runs: the registers it writes
    /// take the current control and, for a computed value, what the
    /// registers it reads carry. A memory read starts afresh (herd7's
    /// `dd_inside` does not cross memory events).
    fn note_reg_ctl(st: &mut State, instr: &Instr) {
        let ctrl = st.ctrl.dep | st.ctrl.pick;
        let (dst, from) = match instr {
            Instr::Assign { dst, expr } => (Some(*dst), Self::regs_ctl(expr, st)),
            Instr::Select { dst, cond, a, b } => (
                Some(*dst),
                Self::regs_ctl(cond, st) | Self::regs_ctl(a, st) | Self::regs_ctl(b, st),
            ),
            Instr::Load { dst, .. } | Instr::Rmw { dst, .. } => (*dst, 0),
            Instr::StoreExclusive { status, .. } => (*status, 0),
            Instr::Cas {
                result, expected, ..
            } => {
                if let Some(r) = result {
                    st.reg_ctl[*r] = ctrl;
                }
                match expected {
                    CasExpected::Reg(r) => (Some(*r), st.reg_ctl[*r]),
                    _ => (None, 0),
                }
            }
            Instr::Store { .. }
            | Instr::Fence(_)
            | Instr::SyncSrcu { .. }
            | Instr::Branch { .. } => (None, 0),
        };
        if let Some(d) = dst {
            st.reg_ctl[d] = ctrl | from;
        }
    }

    fn push(&self, st: &mut State, mut ev: TraceEvent) -> Result<usize, CheckError> {
        if st.events.len() >= MAX_RUN_EVENTS {
            return Err(CheckError::TooBig(format!(
                "a thread has more than {MAX_RUN_EVENTS} memory events"
            )));
        }
        ev.ctrl = st.ctrl;
        ev.pc = st.here;
        let write = matches!(ev.kind, Kind::Write | Kind::Update);
        st.events.push(ev);
        let i = st.events.len() - 1;
        if write {
            let n = self.writes.borrow_mut().number(&st.events, i);
            st.writes.push(n);
        }
        Ok(i)
    }

    /// The values a read of `loc` may return, by coherence: the thread's own
    /// last write to `loc` (or the initial value if it wrote none), or any
    /// value another thread may write there.
    fn domain(&self, st: &State, loc: usize) -> Vec<i64> {
        let d = &self.others[loc];
        let own = st.own[loc].unwrap_or(self.init[loc]);
        let mut out = Vec::with_capacity(d.len() + 1);
        // In increasing order, as a set would give them (the order traces
        // are found in).
        let at = d.partition_point(|&v| v < own);
        out.extend_from_slice(&d[..at]);
        if d.get(at) != Some(&own) {
            out.push(own);
        }
        out.extend_from_slice(&d[at..]);
        out
    }

    fn read_taint(&self, st: &State, i: usize, loc: usize) -> Taint {
        if !self.forward {
            return Taint::of(i);
        }
        let fwd = st.last_write[loc].unwrap_or_default();
        Taint::of(i).union(fwd)
    }

    #[allow(clippy::too_many_arguments)]
    fn ev(
        kind: Kind,
        loc: usize,
        rval: i64,
        wval: i64,
        annot: Annot,
        instance: usize,
        addr: Taint,
        data: Taint,
    ) -> TraceEvent {
        TraceEvent {
            kind,
            loc,
            rval,
            wval,
            annot,
            instance,
            addr,
            data,
            ctrl: Taint::default(),
            rmw_read: None,
            amo: false,
            pc: 0,
            copy_of: None,
            hvar: 0,
        }
    }

    fn run(
        &self,
        t: &Thread,
        joins: &[usize],
        mut st: State,
        out: &mut Vec<Trace>,
    ) -> Result<(), CheckError> {
        loop {
            self.ticks.set(self.ticks.get() + 1);
            if self.ticks.get() & 1023 == 0 {
                if let Some(d) = self.deadline {
                    if std::time::Instant::now() > d {
                        return Err(CheckError::Timeout);
                    }
                }
            }
            if out.len() > self.max_traces {
                return Err(CheckError::TooBig(format!(
                    "thread P{} has more than {} possible runs (the threads of a test may have {MAX_TRACES} together)",
                    t.id, self.max_traces
                )));
            }
            // Leaving an `if` (structured control): the branches' control
            // ends where they join.
            while let Some(&(join, saved)) = st.scopes.last() {
                if join != st.pc {
                    break;
                }
                st.ctrl = saved;
                st.scopes.pop();
            }
            if let Some(h) = st.herd.as_mut() {
                h.at(st.pc);
            }
            let Some(instr) = t.code.get(st.pc) else {
                let herd_total = st.herd.as_ref().map(|h| h.total());
                let herd_unions = st
                    .herd
                    .as_ref()
                    .map(|h| h.unions().to_vec())
                    .unwrap_or_default();
                if let Some(p) = &self.progress {
                    crate::SearchProgress::add(&p.runs, 1);
                }
                self.writes.borrow_mut().ran(&st.writes, true);
                self.room.set(self.room.get().max(st.events.len()));
                out.push(Trace {
                    events: st.events,
                    regs: st.regs.iter().map(|r| r.0).collect(),
                    reg_src: st.reg_src,
                    reg_dep: st.regs.iter().map(|r| r.1.dep).collect(),
                    tested: st.tested,
                    herd_total,
                    herd_unions,
                });
                return Ok(());
            };
            st.steps += 1;
            if st.steps > MAX_STEPS {
                return Err(CheckError::TooBig(format!(
                    "thread P{} runs more than {MAX_STEPS} instructions (a loop?)",
                    t.id
                )));
            }
            if let Some(rule) = self.loops {
                let here = st.pc;
                let before = st.seen_at[here];
                if before != usize::MAX {
                    // Back at an instruction this path ran: one iteration
                    // of a loop since, made of the events from `before`.
                    if st.events[before..]
                        .iter()
                        .all(|e| no_visible_effect(&st.events, e))
                    {
                        // Spin-assume: the iteration changed nothing. What
                        // the path wrote before it still seeds the values.
                        self.writes.borrow_mut().ran(&st.writes, false);
                        return Ok(());
                    }
                    st.iterations[here] += 1;
                    if st.iterations[here] as usize > rule.unroll {
                        return Err(CheckError::TooBig(format!(
                            "thread P{} goes around a loop that writes more than {} times (--unroll)",
                            t.id, rule.unroll
                        )));
                    }
                }
                st.seen_at[here] = st.events.len();
            }
            st.instance += 1;
            let inst = st.instance;
            if self.structured {
                Self::note_reg_ctl(&mut st, instr);
            }
            let here = st.pc;
            st.here = here;
            st.pc += 1;
            // Registers an RMW or CAS writes hold no plain copy of a read
            // (for the thin-air analysis; loads and assignments set theirs).
            match instr {
                Instr::Rmw { dst: Some(d), .. }
                | Instr::StoreExclusive {
                    status: Some(d), ..
                } => st.reg_src[*d] = None,
                Instr::Cas {
                    result, expected, ..
                } => {
                    if let Some(d) = result {
                        st.reg_src[*d] = None;
                    }
                    if let CasExpected::Reg(d) = expected {
                        st.reg_src[*d] = None;
                    }
                }
                _ => {}
            }
            match instr {
                Instr::Assign { dst, expr } => {
                    st.regs[*dst] = self.eval(expr, &st);
                    let v = st.herd_walk(expr);
                    if let Some(h) = st.herd.as_mut() {
                        h.set_reg(*dst, v);
                    }
                    st.reg_src[*dst] = match expr {
                        Expr::Reg(r) => st.reg_src[*r],
                        _ => None,
                    };
                }
                Instr::Select { dst, cond, a, b } => {
                    st.reg_src[*dst] = None;
                    let (c, tc) = self.eval(cond, &st);
                    let (v, tv) = if c != 0 {
                        self.eval(a, &st)
                    } else {
                        self.eval(b, &st)
                    };
                    st.regs[*dst] = (v, tv.union(tc.as_pick()));
                }
                Instr::Branch { cond, target } => {
                    let take = match cond {
                        None => true,
                        Some(c) => {
                            let (v, mut tc) = self.eval(c, &st);
                            if self.structured {
                                // Structured: the control holds until the
                                // join point, and includes the branches
                                // the condition's registers were written
                                // under.
                                if let Some(&join) = joins.get(here).filter(|&&j| j != usize::MAX) {
                                    st.scopes.push((join, st.ctrl));
                                }
                                let carried = Self::regs_ctl(c, &st);
                                tc.dep |= carried;
                                tc.pick |= carried;
                            }
                            st.ctrl = st.ctrl.union(tc);
                            // The values a condition tests (a thin-air
                            // value tested drops the execution, as in herd7).
                            st.tested |= tc.dep;
                            if let Some(h) = st.herd.as_mut() {
                                // The branch jumps to the else-block when
                                // the `if`'s condition is false.
                                h.branch(here, instr, v == 0);
                            }
                            v != 0
                        }
                    };
                    if take {
                        st.pc = *target;
                    }
                }
                Instr::Fence(f) => {
                    let e = Self::ev(
                        Kind::Fence(*f),
                        0,
                        0,
                        0,
                        Annot::default(),
                        inst,
                        Taint::default(),
                        Taint::default(),
                    );
                    self.push(&mut st, e)?;
                }
                Instr::SyncSrcu { addr } => {
                    // A fence event that keeps its location: the LKMM
                    // relates grace periods to read-side critical sections
                    // of the same srcu_struct (`& loc`).
                    let (a, ta) = self.eval(addr, &st);
                    let loc = self.loc_of(a, t)?;
                    let e = Self::ev(
                        Kind::Fence(Fence::Linux(LkFence::SyncSrcu)),
                        loc,
                        0,
                        0,
                        Annot::default(),
                        inst,
                        ta,
                        Taint::default(),
                    );
                    self.push(&mut st, e)?;
                }
                Instr::Load { dst, addr, annot } => {
                    let (a, ta) = self.eval(addr, &st);
                    let loc = self.loc_of(a, t)?;
                    st.herd_walk(addr);
                    let mut read = |mut s: State, v: i64| -> Result<(), CheckError> {
                        let i = self.push(
                            &mut s,
                            Self::ev(Kind::Read, loc, v, 0, *annot, inst, ta, Taint::default()),
                        )?;
                        // The read's own variable, then its register's.
                        if let Some(h) = s.herd.as_mut() {
                            s.events[i].hvar = h.load(*dst);
                        }
                        if let Some(d) = dst {
                            s.reg_src[*d] = Some(i);
                        }
                        if annot.exclusive {
                            s.monitor = Some((i, loc));
                        }
                        if let Some(d) = dst {
                            s.regs[*d] = (v, self.read_taint(&s, i, loc));
                        }
                        self.run(t, joins, s, out)
                    };
                    // One run per value; the last one takes the state
                    // itself instead of a copy.
                    let values = self.domain(&st, loc);
                    if let Some((&last, others)) = values.split_last() {
                        for &v in others {
                            read(st.fork(self.room.get()), v)?;
                        }
                        read(st, last)?;
                    }
                    return Ok(());
                }
                Instr::Store { addr, value, annot } => {
                    let (a, ta) = self.eval(addr, &st);
                    let loc = self.loc_of(a, t)?;
                    let (v, tv) = self.eval(value, &st);
                    st.herd_walk(addr);
                    let value_var = st.herd_walk(value);
                    let mut w = Self::ev(Kind::Write, loc, 0, v, *annot, inst, ta, tv);
                    w.hvar = value_var;
                    w.copy_of = match value {
                        Expr::Reg(r) => st.reg_src[*r].map(event_index),
                        _ => None,
                    };
                    self.push(&mut st, w)?;
                    st.last_write[loc] = Some(ta.union(tv));
                    st.own[loc] = Some(v);
                }
                Instr::StoreExclusive {
                    status,
                    addr,
                    value,
                    annot,
                } => {
                    let (a, ta) = self.eval(addr, &st);
                    let loc = self.loc_of(a, t)?;
                    let (v, tv) = self.eval(value, &st);
                    let monitor = st.monitor.take();
                    // Failure: no write, status 1.
                    let mut s = st.fork(self.room.get());
                    if let Some(r) = status {
                        s.regs[*r] = (1, Taint::default());
                    }
                    self.run(t, joins, s, out)?;
                    if let Some((ri, mloc)) = monitor {
                        if mloc == loc {
                            let mut e = Self::ev(Kind::Write, loc, 0, v, *annot, inst, ta, tv);
                            e.rmw_read = Some(event_index(ri));
                            let wi = self.push(&mut st, e)?;
                            st.last_write[loc] = Some(ta.union(tv));
                            st.own[loc] = Some(v);
                            if let Some(r) = status {
                                // RVWMO's syntactic dependencies start at an
                                // SC's destination register too (spec 17.1,
                                // "Syntactic Dependencies"): a branch on the
                                // success code orders the SC's store before
                                // later stores (ppo rule 11).
                                let dep = if self.test.arch == Arch::RiscV {
                                    Taint::of(wi)
                                } else {
                                    Taint::default()
                                };
                                st.regs[*r] = (0, dep);
                            }
                            continue;
                        }
                    }
                    return Ok(());
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
                    let (a, ta) = self.eval(addr, &st);
                    let loc = self.loc_of(a, t)?;
                    let (x, tx) = self.eval(operand, &st);
                    for &v in &self.domain(&st, loc) {
                        // A Linux lock acquisition waits for the lock to
                        // be free: only runs whose read returns 0 exist.
                        if read.lk == LkAccess::LockRead && v != 0 {
                            continue;
                        }
                        let mut s = st.fork(self.room.get());
                        if read.unless == Some(v) {
                            // atomic_add_unless that finds `u`: a failed
                            // RMW, one read and no write.
                            let i = self.push(
                                &mut s,
                                Self::ev(Kind::Read, loc, v, 0, *read, inst, ta, Taint::default()),
                            )?;
                            if let Some(d) = dst {
                                s.regs[*d] = (v, self.read_taint(&s, i, loc));
                            }
                            self.run(t, joins, s, out)?;
                            continue;
                        }
                        let nv = rmw_apply(*op, v, x);
                        let i = if *single {
                            let mut ann = *read;
                            ann.noret |= write.noret;
                            self.push(
                                &mut s,
                                Self::ev(Kind::Update, loc, v, nv, ann, inst, ta, tx),
                            )?
                        } else {
                            let r = self.push(
                                &mut s,
                                Self::ev(Kind::Read, loc, v, 0, *read, inst, ta, Taint::default()),
                            )?;
                            let mut w = Self::ev(Kind::Write, loc, 0, nv, *write, inst, ta, tx);
                            w.rmw_read = Some(event_index(r));
                            w.amo = true;
                            self.push(&mut s, w)?;
                            r
                        };
                        let rt = self.read_taint(&s, i, loc);
                        s.last_write[loc] = Some(ta.union(tx));
                        s.own[loc] = Some(nv);
                        if let Some(d) = dst {
                            s.regs[*d] = (v, rt);
                        }
                        self.run(t, joins, s, out)?;
                    }
                    return Ok(());
                }
                Instr::Cas {
                    result,
                    addr,
                    expected,
                    desired,
                    read,
                    write,
                    fail,
                    weak,
                    single,
                } => {
                    let (a, ta) = self.eval(addr, &st);
                    let loc = self.loc_of(a, t)?;
                    let (d, td) = self.eval(desired, &st);
                    // The expected value: a register, a constant, or a plain read.
                    let mut branches: Vec<(State, i64, Taint, Option<usize>)> = Vec::new();
                    match expected {
                        CasExpected::Reg(r) => {
                            let (e, te) = st.regs[*r];
                            branches.push((st.fork(self.room.get()), e, te, None));
                        }
                        CasExpected::Value(x) => {
                            let (e, te) = self.eval(x, &st);
                            branches.push((st.fork(self.room.get()), e, te, None));
                        }
                        CasExpected::Mem(x) => {
                            let (ea, tea) = self.eval(x, &st);
                            let eloc = self.loc_of(ea, t)?;
                            for &v in &self.domain(&st, eloc) {
                                let mut s = st.fork(self.room.get());
                                let i = self.push(
                                    &mut s,
                                    Self::ev(
                                        Kind::Read,
                                        eloc,
                                        v,
                                        0,
                                        Annot::c(atomlab_litmus::MemOrder::Na),
                                        inst,
                                        tea,
                                        Taint::default(),
                                    ),
                                )?;
                                let te = self.read_taint(&s, i, eloc);
                                branches.push((s, v, te, Some(eloc)));
                            }
                        }
                    }
                    for (s0, e, te, eloc) in branches {
                        // Success: read the expected value, write the desired one.
                        if self.domain(&s0, loc).contains(&e) {
                            let mut s = s0.fork(self.room.get());
                            let rt = if *single {
                                let i = self.push(
                                    &mut s,
                                    Self::ev(Kind::Update, loc, e, d, *read, inst, ta, td),
                                )?;
                                self.read_taint(&s, i, loc)
                            } else {
                                let r = self.push(
                                    &mut s,
                                    Self::ev(
                                        Kind::Read,
                                        loc,
                                        e,
                                        0,
                                        *read,
                                        inst,
                                        ta,
                                        Taint::default(),
                                    ),
                                )?;
                                let rt = self.read_taint(&s, r, loc);
                                // The write happens because the comparison
                                // succeeded: a pick dependency on the read and
                                // on the expected value (aarch64deps.cat).
                                let mut data = td;
                                data.pick |= te.dep | te.pick | 1 << r;
                                let mut w =
                                    Self::ev(Kind::Write, loc, 0, d, *write, inst, ta, data);
                                w.rmw_read = Some(event_index(r));
                                w.amo = true;
                                self.push(&mut s, w)?;
                                rt
                            };
                            let wt = s.events.last().map(|w| w.data).unwrap_or(td);
                            s.last_write[loc] = Some(ta.union(wt));
                            s.own[loc] = Some(d);
                            if let Some(r) = result {
                                s.regs[*r] = (1, Taint::default());
                            }
                            if let CasExpected::Reg(r) = expected {
                                // A Linux cmpxchg returns the value it read
                                // (herd7's C semantics): one candidate.
                                // herd7 (event.ml, aarch64_cas) offers two
                                // ways for a successful CAS to write Rs: from
                                // Rs itself, under the comparison's control
                                // (`DataFromRRs`), or from the memory read
                                // (`DataFromRx`). Both are candidates.
                                if read.lk == LkAccess::None {
                                    let mut s2 = s.fork(self.room.get());
                                    s2.regs[*r] = (
                                        e,
                                        Taint {
                                            dep: te.dep,
                                            pick: te.pick | te.dep | rt.dep | rt.pick,
                                        },
                                    );
                                    self.run(t, joins, s2, out)?;
                                }
                                s.regs[*r] = (e, rt);
                            }
                            self.run(t, joins, s, out)?;
                        }
                        // Failure: read some other value.
                        for &v in &self.domain(&s0, loc) {
                            if v == e && !*weak {
                                continue;
                            }
                            let mut s = s0.fork(self.room.get());
                            let i = self.push(
                                &mut s,
                                Self::ev(Kind::Read, loc, v, 0, *fail, inst, ta, Taint::default()),
                            )?;
                            let rt = self.read_taint(&s, i, loc);
                            match expected {
                                CasExpected::Reg(r) => s.regs[*r] = (v, rt),
                                CasExpected::Value(_) => {}
                                CasExpected::Mem(_) => {
                                    let eloc = eloc.unwrap_or(loc);
                                    self.push(
                                        &mut s,
                                        Self::ev(
                                            Kind::Write,
                                            eloc,
                                            0,
                                            v,
                                            Annot::c(atomlab_litmus::MemOrder::Na),
                                            inst,
                                            Taint::default(),
                                            rt,
                                        ),
                                    )?;
                                    s.last_write[eloc] = Some(rt);
                                    s.own[eloc] = Some(v);
                                }
                            }
                            if let Some(r) = result {
                                s.regs[*r] = (0, Taint::default());
                            }
                            self.run(t, joins, s, out)?;
                        }
                    }
                    return Ok(());
                }
            }
        }
    }
}

/// Whether an event of a loop iteration leaves memory as it found it, for
/// spin-assume ([`crate::LoopRule`]): a read, a fence, or the write of a
/// read-modify-write (AMO or exclusive pair) that stores the value its
/// read returned. A failed store-exclusive has no event at all.
fn no_visible_effect(events: &[TraceEvent], e: &TraceEvent) -> bool {
    match e.kind {
        Kind::Read | Kind::Fence(_) => true,
        Kind::Update => e.rval == e.wval,
        Kind::Write => e
            .rmw_read
            .and_then(|r| events.get(usize::from(r)))
            .is_some_and(|r| r.rval == e.wval),
    }
}

/// For each instruction of a thread's structured (C) code, the join point
/// of a conditional branch there: its immediate post-dominator, the first
/// instruction past it that no jump from the branch onwards skips (the end
/// of the code when none). The C front end lowers `if` to forward jumps
/// only; code with a backward jump gets no join points (`usize::MAX`,
/// never reached), so its control reaches every later event, as before.
pub(crate) fn ctrl_joins(code: &[Instr]) -> Vec<usize> {
    let mut joins = vec![usize::MAX; code.len()];
    for (b, ins) in code.iter().enumerate() {
        let Instr::Branch {
            cond: Some(_),
            target,
        } = ins
        else {
            continue;
        };
        if *target <= b {
            continue;
        }
        let mut join = (*target).min(code.len());
        let mut i = b + 1;
        let mut backward = false;
        while i < join {
            if let Instr::Branch { target, .. } = &code[i] {
                backward |= *target <= i;
                join = join.max((*target).min(code.len()));
            }
            i += 1;
        }
        if !backward {
            joins[b] = join;
        }
    }
    joins
}

fn binop(op: BinOp, x: i64, y: i64) -> i64 {
    match op {
        BinOp::Add => x.wrapping_add(y),
        BinOp::Sub => x.wrapping_sub(y),
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Xor => x ^ y,
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::AndNot => x & !y,
        BinOp::Shl => x.wrapping_shl(y as u32),
        BinOp::Shr => ((x as u64).wrapping_shr(y as u32)) as i64,
        BinOp::Eq => (x == y) as i64,
        BinOp::Ne => (x != y) as i64,
        BinOp::Lt => (x < y) as i64,
        BinOp::Le => (x <= y) as i64,
        BinOp::Gt => (x > y) as i64,
        BinOp::Ge => (x >= y) as i64,
        BinOp::Ult => ((x as u64) < (y as u64)) as i64,
        BinOp::Ule => ((x as u64) <= (y as u64)) as i64,
        BinOp::Ugt => ((x as u64) > (y as u64)) as i64,
        BinOp::Uge => ((x as u64) >= (y as u64)) as i64,
        BinOp::LogAnd => (x != 0 && y != 0) as i64,
        BinOp::LogOr => (x != 0 || y != 0) as i64,
    }
}

fn rmw_apply(op: RmwOp, old: i64, x: i64) -> i64 {
    match op {
        RmwOp::Xchg => x,
        RmwOp::Add => old.wrapping_add(x),
        RmwOp::Sub => old.wrapping_sub(x),
        RmwOp::Or => old | x,
        RmwOp::And => old & x,
        RmwOp::Xor => old ^ x,
        RmwOp::Clr => old & !x,
        RmwOp::Max => old.max(x),
        RmwOp::Min => old.min(x),
        RmwOp::Umax => (old as u64).max(x as u64) as i64,
        RmwOp::Umin => (old as u64).min(x as u64) as i64,
    }
}

/// The constants thread `t` stores to a fixed location on some path of
/// its code, whatever the values it reads: every read is unknown, both
/// branches of an `if` on an unknown value are followed, and a store of a
/// value computed from constants only (a literal, or a register given a
/// constant on that path) seeds the values of its location.
///
/// herd7 runs both branches of every `if` and solves the values after
/// choosing reads-from (CSem.ml, `C.If`), so a write inside a branch that
/// only a value that write itself justifies can open still takes part: in
/// `P0: if (READ_ONCE(*z) == 1) *x = 2;  P1: if (READ_ONCE(*x)) WRITE_ONCE(*z, 1);`
/// herd7's LKMM allows both reads to see the other thread's write (the
/// plain write is outside `hb`, the outcome a data race). Likewise a
/// constant chosen in an `if` and stored after the join (`r1 = 1; if
/// (READ_ONCE(*x) == 0) r1 = 0; WRITE_ONCE(*y, r1);`) is a constant on
/// each path, no data dependency on the read (issue 37). A fixpoint
/// started from the initial values alone never reaches such values, so
/// these stores seed it. A value only makes a read's candidate; the
/// execution still needs a write of it to read from, and the model judges
/// the cycle. Paths are followed per path, not merged: a constant that
/// every path overwrites before the store (`r0 = 1; if (r2 != 1) r0 = 0;
/// else r0 = r2;`) is no seed, as a value herd7 would leave unsolved
/// must not become a concrete one here.
fn constant_writes(t: &Thread, nlocs: usize) -> Vec<(usize, i64)> {
    let regs: Vec<Option<i64>> = (0..t.regs.len())
        .map(|r| Some(encode(t.init_value(r))))
        .collect();
    let mut out = BTreeSet::new();
    let mut budget = SEED_STEPS;
    seed_path(t, 0, regs, nlocs, &mut out, &mut budget);
    out.into_iter().collect()
}

/// Instruction steps [`constant_writes`] takes over all the paths of a
/// thread: past them it keeps the seeds found so far (fewer values, as
/// before the seeds existed, never a wrong one).
const SEED_STEPS: usize = 100_000;

/// One path of [`constant_writes`] from `pc`, with each register's value
/// when known (`None`: it depends on a read).
fn seed_path(
    t: &Thread,
    mut pc: usize,
    mut regs: Vec<Option<i64>>,
    nlocs: usize,
    out: &mut BTreeSet<(usize, i64)>,
    budget: &mut usize,
) {
    fn eval(e: &Expr, regs: &[Option<i64>]) -> Option<i64> {
        match e {
            Expr::Const(v) => Some(encode(*v)),
            Expr::Reg(r) => regs.get(*r).copied().flatten(),
            Expr::Not(a) => eval(a, regs).map(|v| (v == 0) as i64),
            Expr::Bin(op, a, b) => Some(binop(*op, eval(a, regs)?, eval(b, regs)?)),
        }
    }
    /// A write of `value` to `addr`, when both are known, as a seed.
    fn seed_write(
        addr: &Expr,
        value: &Expr,
        regs: &[Option<i64>],
        nlocs: usize,
        out: &mut BTreeSet<(usize, i64)>,
    ) {
        if let (Some(a), Some(v)) = (eval(addr, regs), eval(value, regs)) {
            if let Value::Loc(l) = decode(a, nlocs) {
                out.insert((l, v));
            }
        }
    }
    while let Some(i) = t.code.get(pc) {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        pc += 1;
        match i {
            Instr::Assign { dst, expr } => regs[*dst] = eval(expr, &regs),
            Instr::Select { dst, cond, a, b } => {
                regs[*dst] = match eval(cond, &regs) {
                    Some(0) => eval(b, &regs),
                    Some(_) => eval(a, &regs),
                    None => None,
                }
            }
            Instr::Branch { cond, target } => match cond.as_ref().map(|c| eval(c, &regs)) {
                None => pc = *target,
                Some(Some(0)) => {}
                Some(Some(_)) => pc = *target,
                Some(None) => {
                    // Unknown: the jump here, the fall-through below.
                    seed_path(t, *target, regs.clone(), nlocs, out, budget);
                }
            },
            Instr::Store { addr, value, .. } => {
                seed_write(addr, value, &regs, nlocs, out);
            }
            // An exchange of a known value (`spin_lock`'s xchg of 1,
            // `xchg(x, 2)`) writes it whatever it reads, as a store does:
            // seeding it saves every lock test the round that would find it.
            Instr::Rmw {
                dst,
                addr,
                op: RmwOp::Xchg,
                operand,
                ..
            } => {
                seed_write(addr, operand, &regs, nlocs, out);
                if let Some(d) = dst {
                    regs[*d] = None;
                }
            }
            Instr::Load { dst, .. } | Instr::Rmw { dst, .. } => {
                if let Some(d) = dst {
                    regs[*d] = None;
                }
            }
            Instr::StoreExclusive { status, .. } => {
                if let Some(d) = status {
                    regs[*d] = None;
                }
            }
            Instr::Cas {
                result,
                expected,
                addr,
                desired,
                ..
            } => {
                // A successful compare-and-swap writes its desired value,
                // known here when it is a constant (`spin_trylock`'s 1).
                seed_write(addr, desired, &regs, nlocs, out);
                if let Some(d) = result {
                    regs[*d] = None;
                }
                if let CasExpected::Reg(r) = expected {
                    regs[*r] = None;
                }
            }
            Instr::Fence(_) | Instr::SyncSrcu { .. } => {}
        }
    }
}

/// What a thread was asked in a round of [`explore`] (the values the
/// others may write, per location), its runs and what they wrote.
type LastRuns = (Vec<Vec<i64>>, Vec<Trace>, Written);

/// One thread's runs. Threads that are copies of one share its runs
/// rather than a copy each: the 3-thread seqlock client's 7,125 runs per
/// thread, copied for two twins, were a fifth of its time in page faults
/// and copying.
pub(crate) type Runs = std::rc::Rc<Vec<Trace>>;

/// The value domain of each location and each thread's traces.
pub(crate) type Explored = (Vec<BTreeSet<i64>>, Vec<Runs>);

/// The values each thread may write, kept to the chains of writes an
/// execution can hold. A written value is computed from the reads its
/// write is tainted by ([`Derivation`]); its chain depth is 1 for a value
/// computed from initial values only, else 1 + the largest depth of the
/// values read. In an execution, a value at depth k needs k distinct
/// writes, each to a location whose reads taint writes of the next
/// (`feeds`, followed back from the value's location: its ancestors), so
/// k is at most the writes an execution can make to those ancestors: the
/// sum over threads of the most any path of the thread makes. A value
/// deeper than that bound for its location is written by no execution
/// and is not given to reads. Without it a counter that threads
/// increment (a seqlock's sequence) takes every value up to the writes
/// of the whole test, whatever location they go to, and each read of it
/// multiplies the runs by them.
///
/// Sound as the value search is: the writes of a chain are distinct
/// because values grow from the initial ones round by round (no value
/// justifies itself: the search never made thin-air values); a read that
/// only decides whether a write happens (a branch) adds nothing to the
/// write's depth, and the rounds go on finding such writes as before;
/// the depth kept for a value is the least of the paths found, and the
/// bound only grows with the paths, so a value held back is looked at
/// again each round (the search ends when neither the admitted values
/// nor any depth change).
struct ValueChains {
    /// Least chain depth found per location: (value, depth), sorted by
    /// value (a location holds at most 64 values: a sorted vector is
    /// searched faster than a hash of the pair, and allocates once).
    depth: Vec<Vec<(i64, u32)>>,
    /// Values each thread's paths write, per location (sorted sets).
    produced: Vec<Vec<Vec<i64>>>,
    /// feeds[l]: locations whose reads taint a write to `l` (sorted).
    feeds: Vec<Vec<usize>>,
    /// Per thread: the locations written by each path (sorted, once each
    /// list), for the most writes a path makes to a set of locations.
    paths: Vec<BTreeSet<Vec<usize>>>,
    changed: bool,
}

/// Adds `v` to the sorted set `set`.
fn insert_sorted<T: Ord + Copy>(set: &mut Vec<T>, v: T) {
    if let Err(i) = set.binary_search(&v) {
        set.insert(i, v);
    }
}

impl ValueChains {
    fn new(nl: usize, nt: usize) -> ValueChains {
        ValueChains {
            depth: vec![Vec::new(); nl],
            produced: vec![vec![Vec::new(); nl]; nt],
            feeds: vec![Vec::new(); nl],
            paths: vec![BTreeSet::new(); nt],
            changed: false,
        }
    }

    /// The least depth found for value `v` of location `l`.
    fn depth_of(&self, l: usize, v: i64) -> Option<u32> {
        let d = &self.depth[l];
        d.binary_search_by_key(&v, |e| e.0).ok().map(|i| d[i].1)
    }

    /// Lowers the depth of `v` at `l` to `d` (a first depth counts as
    /// lowered); true when it did.
    fn lower(&mut self, l: usize, v: i64, d: u32) -> bool {
        let ds = &mut self.depth[l];
        match ds.binary_search_by_key(&v, |e| e.0) {
            Ok(i) if ds[i].1 <= d => false,
            Ok(i) => {
                ds[i].1 = d;
                true
            }
            Err(i) => {
                ds.insert(i, (v, d));
                true
            }
        }
    }

    /// A value thread `t` may write whatever its reads return (a
    /// Linux-kernel test's constant stores): always admitted.
    fn seed(&mut self, t: usize, l: usize, v: i64) {
        insert_sorted(&mut self.produced[t][l], v);
        self.lower(l, v, 0);
    }

    /// What thread `t`'s runs wrote: each write (its paths' writes in
    /// program order), then the locations each path writes.
    fn paths(&mut self, t: usize, written: &Written, init: &[i64]) {
        for w in &written.derivations {
            let (l, v) = (w[0] as usize, w[1]);
            let mut d = 0u32;
            for source in w[2..].chunks_exact(2) {
                let (m, x) = (source[0] as usize, source[1]);
                insert_sorted(&mut self.feeds[l], m);
                // An initial value is at depth 0; an unknown one (never
                // expected) counts as 0 too, which only admits more.
                let dm = if x == init[m] {
                    0
                } else {
                    self.depth_of(m, x).unwrap_or(0)
                };
                d = d.max(dm);
            }
            if self.lower(l, v, d + 1) {
                self.changed = true;
            }
            insert_sorted(&mut self.produced[t][l], v);
        }
        for locs in &written.locs {
            if !self.paths[t].contains(locs) {
                self.paths[t].insert(locs.clone());
            }
        }
    }

    /// Whether a depth changed since the last call.
    fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// The values each thread may write that the chain bound admits
    /// (sorted sets, per thread and location).
    fn admitted(&self) -> Vec<Vec<Vec<i64>>> {
        let nl = self.feeds.len();
        // One ancestor set and one stack for every location.
        let mut anc = vec![false; nl];
        let mut stack = Vec::with_capacity(nl);
        let bound: Vec<u32> = (0..nl)
            .map(|l| {
                // l's ancestors through `feeds`, l included.
                anc.fill(false);
                anc[l] = true;
                stack.push(l);
                while let Some(x) = stack.pop() {
                    for &m in &self.feeds[x] {
                        if !anc[m] {
                            anc[m] = true;
                            stack.push(m);
                        }
                    }
                }
                let writes: usize = self
                    .paths
                    .iter()
                    .map(|ps| {
                        ps.iter()
                            .map(|p| p.iter().filter(|&&m| anc[m]).count())
                            .max()
                            .unwrap_or(0)
                    })
                    .sum();
                // One more than the bound, a margin the argument above
                // does not need.
                u32::try_from(writes).unwrap_or(u32::MAX).saturating_add(1)
            })
            .collect();
        self.produced
            .iter()
            .map(|per_loc| {
                per_loc
                    .iter()
                    .enumerate()
                    .map(|(l, vs)| {
                        vs.iter()
                            .copied()
                            .filter(|&v| self.depth_of(l, v).is_some_and(|d| d <= bound[l]))
                            .collect()
                    })
                    .collect()
            })
            .collect()
    }
}

/// Values each location may hold: the initial value and everything any
/// thread may write, to a fixpoint. Returns the traces of the last round.
/// `structured`: C's control dependencies, which stop where an `if`'s
/// branches join (for a C test judged as C, not as compiled code).
/// `linux`: the test is read as Linux-kernel C (dependencies are not
/// forwarded through memory, constant stores seed the values).
/// `opts` gives the deadline, the loop rule and the progress counts.
pub(crate) fn explore(
    test: &Test,
    opts: &crate::CheckOptions,
    structured: bool,
    linux: bool,
) -> Result<Explored, CheckError> {
    let (deadline, loops) = (opts.deadline, opts.loops);
    let nl = test.locations.len();
    let nt = test.threads.len();
    let mut init = vec![0i64; nl];
    for (l, v) in &test.init {
        init[*l] = encode(*v);
    }
    // written[t][l]: values thread t may write to l.
    // (Sorted sets: at most 64 values a location.)
    let mut written: Vec<Vec<Vec<i64>>> = vec![vec![Vec::new(); nl]; nt];
    if linux {
        for (ti, t) in test.threads.iter().enumerate() {
            for (l, v) in constant_writes(t, nl) {
                insert_sorted(&mut written[ti][l], v);
            }
        }
    }
    // A value at chain depth k (written from a value read at depth k-1)
    // is found by round k; no execution has more writes than `depth`.
    let mut depth = 1usize;
    let mut chains = ValueChains::new(nl, nt);
    for (ti, w) in written.iter().enumerate() {
        for (l, vs) in w.iter().enumerate() {
            for &v in vs {
                chains.seed(ti, l, v);
            }
        }
    }
    // The last round's runs of each thread that enumerated its own, with
    // what it was asked and what its runs wrote: a thread asked the same
    // values again has the same runs (they depend on its code, its initial
    // values and the values the others may write only), so they are taken
    // over rather than enumerated again.
    let mut last: Vec<Option<LastRuns>> = Vec::new();
    for round in 0..64 {
        let mut all: Vec<Vec<Trace>> = Vec::new();
        // copy_of[t]: the earlier thread whose runs thread t shares (its
        // `all` entry stays empty, and at the end it shares the source's
        // [`Runs`]: copying 7,000 runs per twin per round took a seventh
        // of verify's time, and once at the end a fifth), and what each
        // enumerated thread's runs wrote, found once for all its twins.
        let mut copy_of: Vec<Option<usize>> = Vec::with_capacity(nt);
        let mut derived: Vec<Written> = Vec::with_capacity(nt);
        // Runs kept so far this round, against MAX_TRACES.
        let mut kept = 0usize;
        // Per thread this round: the values the others may write (per
        // location).
        let mut asked: Vec<Vec<Vec<i64>>> = Vec::with_capacity(nt);
        for (ti, t) in test.threads.iter().enumerate() {
            let others: Vec<Vec<i64>> = (0..nl)
                .map(|l| {
                    let mut v: Vec<i64> = (0..nt)
                        .filter(|&u| u != ti)
                        .flat_map(|u| written[u][l].iter().copied())
                        .collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .collect();
            // A thread with an earlier one's code, registers and initial
            // values, reading what the same values may give, has the same
            // runs (verify's clients run N copies of one thread): they are
            // shared, not enumerated again, unless they exceed the bound
            // left (enumerating then reports it; the bound still counts a
            // twin's runs, as it did when they were copied).
            let twin = (0..ti).find(|&u| {
                let (a, b) = (&test.threads[u], t);
                a.code == b.code && a.regs == b.regs && a.init == b.init && asked[u] == others
            });
            // (The first such thread was enumerated: a copy's own source
            // would have matched first.)
            let twin = twin
                .map(|u| copy_of[u].unwrap_or(u))
                .filter(|&u| all[u].len() <= MAX_TRACES.saturating_sub(kept));
            if let Some(u) = twin {
                kept += all[u].len();
                chains.paths(ti, &derived[u], &init);
                all.push(Vec::new());
                copy_of.push(Some(u));
                derived.push(Written::default());
                asked.push(others);
                continue;
            }
            // Asked as last round, within the bound left: last round's runs.
            let reuse = last
                .get_mut(ti)
                .and_then(Option::take)
                .filter(|(asked_then, runs, _)| {
                    *asked_then == others && runs.len() <= MAX_TRACES.saturating_sub(kept)
                })
                .map(|(_, runs, wrote)| (runs, wrote));
            let (traces, ds) = match reuse {
                Some(taken) => taken,
                None => {
                    let interp = Interp {
                        test,
                        init: init.clone(),
                        others: others.clone(),
                        max_traces: MAX_TRACES.saturating_sub(kept),
                        deadline,
                        ticks: std::cell::Cell::new(0),
                        progress: opts.progress.clone(),
                        forward: !linux,
                        structured,
                        loops,
                        writes: Default::default(),
                        room: std::cell::Cell::new(0),
                    };
                    let traces = interp.traces(t)?;
                    (traces, Written::from(interp.writes.take()))
                }
            };
            kept += traces.len();
            chains.paths(ti, &ds, &init);
            all.push(traces);
            copy_of.push(None);
            derived.push(ds);
            asked.push(others);
        }
        let mut next = chains.admitted();
        // Values unchanged but chain depths lowered: another round would
        // enumerate the very same runs (its threads are asked the same
        // values), so only the depths are worked out again, from the
        // paths this round found, in the order it found them, until they
        // settle: what that round would do, without running the code.
        while next == written && chains.take_changed() {
            for (ti, source) in copy_of.iter().enumerate() {
                chains.paths(ti, &derived[source.unwrap_or(ti)], &init);
            }
            next = chains.admitted();
        }
        let grown = next != written || chains.take_changed();
        written = next;
        // Distinct values, however many threads may write each.
        // (No more than their sum, which is all a small test needs.)
        let distinct = |l: usize| {
            let sum: usize = written.iter().map(|w| w[l].len()).sum();
            if sum <= 64 {
                return sum;
            }
            let mut all: Vec<i64> = written.iter().flat_map(|w| w[l].iter().copied()).collect();
            all.sort_unstable();
            all.dedup();
            all.len()
        };
        if let Some(l) = (0..nl).find(|&l| distinct(l) > 64) {
            let mut seen: Vec<i64> = written.iter().flat_map(|w| w[l].iter().copied()).collect();
            seen.sort_unstable();
            seen.dedup();
            let shown: Vec<String> = seen
                .iter()
                .take(8)
                .map(|&v| test.value_name(decode(v, nl)))
                .collect();
            return Err(CheckError::TooBig(format!(
                "location {} may hold more than 64 different values ({}, …)",
                test.locations[l],
                shown.join(", ")
            )));
        }
        let writes: usize = (0..nt).map(|t| derived[copy_of[t].unwrap_or(t)].most).sum();
        depth = depth.max(writes + 1);
        if !grown || round > depth {
            let values = (0..nl)
                .map(|l| {
                    let mut v: BTreeSet<i64> =
                        written.iter().flat_map(|w| w[l].iter().copied()).collect();
                    v.insert(init[l]);
                    v
                })
                .collect();
            // A twin's source is an earlier thread, shared by then.
            let mut shared: Vec<Runs> = Vec::with_capacity(nt);
            for (t, runs) in all.into_iter().enumerate() {
                shared.push(match copy_of[t] {
                    Some(u) => std::rc::Rc::clone(&shared[u]),
                    None => std::rc::Rc::new(runs),
                });
            }
            return Ok((values, shared));
        }
        // What each thread that enumerated its runs was asked, for the
        // next round (a twin's runs are its source's).
        last = all
            .into_iter()
            .zip(derived)
            .zip(asked)
            .zip(&copy_of)
            .map(|(((runs, wrote), asked), twin)| twin.is_none().then_some((asked, runs, wrote)))
            .collect();
    }
    Err(CheckError::TooBig(
        "the values written do not reach a fixpoint in 64 rounds".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchanges_and_compare_and_swaps_of_constants_are_seeded() {
        // What a Linux-kernel thread may write whatever it reads: the
        // stores of constants, and (since they write the same value
        // whatever they read) a lock's xchg of 1, an xchg of a constant
        // and a trylock's or cmpxchg's new value; not an add's result.
        let t = atomlab_litmus::parse(
            "t.litmus",
            "C t\n{}\nP0(int *x, int *y, int *z, int *w, spinlock_t *s)\n{\n\
               int r0; int r1; int r2;\n\
               spin_lock(s);\n\
               r0 = xchg(y, 2);\n\
               r1 = cmpxchg(z, 0, 3);\n\
               r2 = atomic_fetch_add(5, w);\n\
               spin_unlock(s);\n\
               WRITE_ONCE(*x, 1);\n}\nexists (0:r0=0)\n",
        )
        .unwrap();
        let loc = |n: &str| t.locations.iter().position(|l| l == n).unwrap();
        let seeds = constant_writes(&t.threads[0], t.locations.len());
        let want: BTreeSet<(usize, i64)> = [
            (loc("s"), 1),
            (loc("s"), 0),
            (loc("y"), 2),
            (loc("z"), 3),
            (loc("x"), 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(seeds.into_iter().collect::<BTreeSet<_>>(), want);
    }

    fn values(src: &str) -> (Test, Vec<BTreeSet<i64>>) {
        let t = atomlab_litmus::parse("t.litmus", src).unwrap();
        let (values, _) = explore(&t, &crate::CheckOptions::default(), true, false).unwrap();
        (t, values)
    }

    fn of(t: &Test, vals: &[BTreeSet<i64>], loc: &str) -> Vec<i64> {
        let l = t.locations.iter().position(|n| n == loc).unwrap();
        vals[l].iter().copied().collect()
    }

    #[test]
    fn a_counter_takes_only_the_values_its_own_increments_make() {
        // Each thread increments x once and writes w three times: x's
        // chain holds x's two writes (plus the bound's margin), not the
        // test's eight.
        let thread = |p: usize, w: [i64; 3]| {
            let mut body = format!(
                "P{p} (atomic_int* x, atomic_int* w) {{\n\
                   int r0 = atomic_load_explicit(x, memory_order_relaxed);\n\
                   atomic_store_explicit(x, r0 + 1, memory_order_relaxed);\n"
            );
            for v in w {
                body += &format!("atomic_store_explicit(w, {v}, memory_order_relaxed);\n");
            }
            body + "}\n"
        };
        let (t, v) = values(&format!(
            "C counter\n{{ x=0; w=0; }}\n{}{}exists (x=2)\n",
            thread(0, [1, 2, 3]),
            thread(1, [4, 5, 6])
        ));
        assert_eq!(of(&t, &v, "x"), [0, 1, 2, 3]);
        assert_eq!(of(&t, &v, "w"), [0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn values_made_through_other_locations_and_behind_branches_are_kept() {
        // x -> y -> x: a chain through two locations; z = 2 only once P0
        // has read x = 2, which P1 writes from y.
        let (t, v) = values(
            "C chain\n{ x=0; y=0; z=0; }\n\
             P0 (atomic_int* x, atomic_int* y, atomic_int* z) {\n\
               int r0 = atomic_load_explicit(x, memory_order_relaxed);\n\
               atomic_store_explicit(y, r0 + 1, memory_order_relaxed);\n\
               int r1 = atomic_load_explicit(x, memory_order_relaxed);\n\
               if (r1 == 2) { atomic_store_explicit(z, 2, memory_order_relaxed); }\n\
             }\n\
             P1 (atomic_int* x, atomic_int* y) {\n\
               int r0 = atomic_load_explicit(y, memory_order_relaxed);\n\
               atomic_store_explicit(x, r0 + 1, memory_order_relaxed);\n\
             }\n\
             exists (z=2)\n",
        );
        assert!(of(&t, &v, "x").contains(&2), "{:?}", of(&t, &v, "x"));
        assert!(of(&t, &v, "y").contains(&3), "{:?}", of(&t, &v, "y"));
        assert_eq!(of(&t, &v, "z"), [0, 2]);
    }
}
