//! Candidate executions: events, program order, dependencies (fixed by the
//! threads' traces) and the communication relations reads-from and
//! coherence order (chosen), with from-reads derived, as in Alglave,
//! Maranget and Tautschnig, "Herding cats" (TOPLAS 2014), section 4.
//!
//! Enumeration uses the structure of the problem instead of blind search:
//! reads-from and coherence are chosen *per location*, and a per-location
//! choice is kept only if it is coherent on its own (SC per location:
//! `acyclic po-loc | rf | co | fr`) and respects RMW atomicity; every model
//! here implies both, so inconsistent partial executions die before any
//! cross-location combination is formed.

use atomlab_litmus::{Annot, BarrierKind, Fence, LkAccess, LkFence, MemOrder, Test};

use crate::interp::{Kind, Trace};
use crate::rel::{full_set, members, Bits, Rel, MAX_WIDE_EVENTS};
use crate::CheckError;

/// One event of a candidate execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The thread, or `None` for an initial write.
    pub thread: Option<usize>,
    /// What it does.
    pub kind: Kind,
    /// The location (memory events only).
    pub loc: Option<usize>,
    /// Value read.
    pub rval: i64,
    /// Value written.
    pub wval: i64,
    /// Annotations.
    pub annot: Annot,
    /// Dynamic instruction within its thread.
    pub instance: usize,
    /// The instruction's index in its thread's code (0 for initial writes).
    pub pc: usize,
}

/// Named sets of events, as herd's cat files name them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sets<S: Bits = u64> {
    /// Reads (including single-event RMWs).
    pub r: S,
    /// Writes (including initial writes and single-event RMWs).
    pub w: S,
    /// Fences.
    pub f: S,
    /// Memory events.
    pub m: S,
    /// Initial writes.
    pub iw: S,
    /// Single events that read and write (herd's C `RMW`).
    pub upd: S,
    /// C11 atomic accesses (herd's `A`).
    pub atomic: S,
    /// C11 orders: relaxed.
    pub rlx: S,
    /// consume.
    pub con: S,
    /// acquire.
    pub acq: S,
    /// release.
    pub rel: S,
    /// acq_rel.
    pub acq_rel: S,
    /// seq_cst.
    pub sc: S,
    /// Arm acquire (`A`).
    pub arm_a: S,
    /// Arm RCpc acquire (`Q`).
    pub arm_q: S,
    /// Arm release (`L`).
    pub arm_l: S,
    /// Arm atomics without a result register.
    pub noret: S,
    /// x86 locked accesses.
    pub locked: S,
    /// MFENCE.
    pub mfence: S,
    /// DMB/DSB full.
    pub dmb_full: S,
    /// DMB/DSB LD.
    pub dmb_ld: S,
    /// DMB/DSB ST.
    pub dmb_st: S,
    /// ISB.
    pub isb: S,
    /// RISC-V `fence pred,succ` and `fence.tso`.
    pub rv_fence: S,
    /// Exclusive accesses (Arm LDXR/STXR, RISC-V LR/SC).
    pub excl: S,
    /// Initial writes of the locations a final state reports (the test's
    /// condition and `locations`): herd7 keeps a final write (`FW`) only
    /// for these, and the LKMM's `lock-final` flag reads it.
    pub observed_iw: S,
}

/// The parts of a candidate execution fixed by the threads' traces.
#[derive(Debug, Clone)]
pub struct Skeleton<S: Bits = u64> {
    /// Number of events.
    pub n: usize,
    /// The events: initial writes first, then each thread's in order.
    pub events: Vec<Event>,
    /// Named sets.
    pub sets: Sets<S>,
    /// Program order.
    pub po: Rel<S>,
    /// Same location (memory events, reflexive).
    pub loc: Rel<S>,
    /// Same thread.
    pub int: Rel<S>,
    /// Different threads.
    pub ext: Rel<S>,
    /// Read and write of one atomic pair.
    pub rmw: Rel<S>,
    /// The pairs of `rmw` made by one atomic instruction (not LDXR/STXR).
    pub amo: Rel<S>,
    /// Address dependencies.
    pub addr: Rel<S>,
    /// Data dependencies.
    pub data: Rel<S>,
    /// Control dependencies.
    pub ctrl: Rel<S>,
    /// Arm pick dependencies (address, data, control), minus same instance.
    pub pick_addr: Rel<S>,
    /// Pick data dependencies.
    pub pick_data: Rel<S>,
    /// Pick control dependencies.
    pub pick_ctrl: Rel<S>,
    /// Local memory read successor (a write, then a po-later read of the
    /// same location with no write between).
    pub lmrs: Rel<S>,
    /// Events of one dynamic instruction.
    pub same_instance: Rel<S>,
    /// The initial write of each location.
    pub init_of: Vec<usize>,
    /// Final register values, per thread.
    pub regs: Vec<Vec<i64>>,
    /// Relations the models derive from the skeleton alone, kept.
    pub memo: Memo<S>,
}

/// What `aarch64.cat`'s axioms read that the skeleton alone fixes
/// (computed in [`crate::models::aarch64`], kept in [`Memo`]).
#[derive(Clone)]
pub(crate) struct ArmFixed<S: Bits = u64> {
    /// `(lob | pick-dep; lob; [W])+`.
    pub(crate) local: Rel<S>,
    /// `[R]; (po-loc | rmw); [W]` (coRW1's fixed half).
    pub(crate) rw_before: Rel<S>,
    /// `[W]; po-loc; [W]` and `[W]; po-loc; [R]` (coWW's and coWR's).
    pub(crate) ww: Rel<S>,
    pub(crate) wr: Rel<S>,
    /// `[R]; po-loc; [R]` (hazard-ordered-before's).
    pub(crate) rr: Rel<S>,
}

impl<S: Bits> std::fmt::Debug for ArmFixed<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArmFixed").finish_non_exhaustive()
    }
}

/// Relations a model derives from a skeleton alone (its program order,
/// dependencies and barriers, not its reads-from or coherence), computed
/// at the skeleton's first judgement and kept: a skeleton is judged once
/// per candidate execution, and the exploring engine judges its partial
/// executions too (for `verify`'s 3-thread ticket lock, aarch64's
/// locally-ordered-before was three fifths of the time).
#[derive(Debug, Clone, Default)]
pub struct Memo<S: Bits = u64> {
    /// `aarch64`'s `(lob | pick-dep; lob; [W])+` and the fixed halves of
    /// its internal-visibility axioms ([`crate::models::aarch64`]).
    arm_fixed: std::sync::OnceLock<ArmFixed<S>>,
    /// `riscv`'s fixed preserved program order and the fixed halves of
    /// its rules 2, 12 and 3 ([`crate::models::riscv`]).
    riscv_ppo: std::sync::OnceLock<[Rel<S>; 4]>,
    /// `lkmm`'s event sets and the relations of linux-kernel.cat that do
    /// not read rf or co ([`crate::models::lkmm`]'s own type, which this
    /// file does not name: models import this file, not the reverse).
    lkmm_fixed: std::sync::OnceLock<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
}

impl<S: Bits> Memo<S> {
    /// `aarch64`'s fixed relations, computed by `f` the first time.
    pub(crate) fn arm_fixed(&self, f: impl FnOnce() -> ArmFixed<S>) -> &ArmFixed<S> {
        self.arm_fixed.get_or_init(f)
    }

    /// `lkmm`'s fixed sets and relations, computed by `f` the first time
    /// (one type per word `S`: only lkmm.rs calls this).
    pub(crate) fn lkmm_fixed<T: std::any::Any + Send + Sync>(&self, f: impl FnOnce() -> T) -> &T {
        self.lkmm_fixed
            .get_or_init(|| std::sync::Arc::new(f()))
            .downcast_ref()
            .expect("Memo::lkmm_fixed is only filled by lkmm.rs, with one type per word")
    }

    /// `riscv`'s fixed parts of ppo, computed by `f` the first time.
    pub(crate) fn riscv_ppo(&self, f: impl FnOnce() -> [Rel<S>; 4]) -> [Rel<S>; 4] {
        *self.riscv_ppo.get_or_init(f)
    }
}

/// A candidate execution: a skeleton plus reads-from and coherence.
#[derive(Debug, Clone)]
pub struct Execution<'s, S: Bits = u64> {
    /// The fixed part.
    pub s: &'s Skeleton<S>,
    /// Reads-from.
    pub rf: Rel<S>,
    /// Coherence order (transitive).
    pub co: Rel<S>,
    /// From-reads: `(rf^-1; co) \ id`.
    pub fr: Rel<S>,
    /// The co-last write of each location.
    pub last: Vec<usize>,
}

fn order_set<S: Bits>(sets: &mut Sets<S>, i: usize, o: MemOrder) {
    let b = S::bit(i);
    match o {
        MemOrder::Na => {}
        MemOrder::Relaxed => sets.rlx |= b,
        MemOrder::Consume => sets.con |= b,
        MemOrder::Acquire => sets.acq |= b,
        MemOrder::Release => sets.rel |= b,
        MemOrder::AcqRel => sets.acq_rel |= b,
        MemOrder::SeqCst => sets.sc |= b,
    }
}

/// The locations whose final values `test`'s final state reports (its
/// condition's and `locations`), one bit each, for [`Skeleton::build`]:
/// worked out once per test, not per skeleton.
pub(crate) fn observed_locations(test: &Test) -> u128 {
    test.state_vars().iter().fold(0, |acc, v| match v {
        // Past MAX_WIDE_EVENTS locations no skeleton is built (TooBig).
        atomlab_litmus::StateVar::Loc(l) if *l < MAX_WIDE_EVENTS => acc | 1 << l,
        _ => acc,
    })
}

impl<S: Bits> Skeleton<S> {
    /// Builds the skeleton for one trace per thread. `observed` has bit
    /// `l` for each location the final state reports ([`observed_locations`]).
    pub(crate) fn build(
        test: &Test,
        init_values: &[i64],
        traces: &[&Trace],
        observed: u128,
    ) -> Result<Skeleton<S>, CheckError> {
        let nl = test.locations.len();
        let total = events_of(nl, traces)?;
        assert!(
            total <= S::EVENTS,
            "a skeleton of {total} events is built with a word of {}",
            S::EVENTS
        );
        let n = total;
        let mut events = Vec::with_capacity(n);
        let mut sets = Sets::default();
        for (l, v) in init_values.iter().enumerate() {
            events.push(Event {
                thread: None,
                kind: Kind::Write,
                loc: Some(l),
                rval: 0,
                wval: *v,
                annot: Annot::default(),
                instance: 0,
                pc: 0,
            });
            sets.iw |= S::bit(l);
        }
        let mut s = Skeleton {
            n,
            events: Vec::new(),
            sets,
            po: Rel::empty(n),
            loc: Rel::empty(n),
            int: Rel::empty(n),
            ext: Rel::empty(n),
            rmw: Rel::empty(n),
            amo: Rel::empty(n),
            addr: Rel::empty(n),
            data: Rel::empty(n),
            ctrl: Rel::empty(n),
            pick_addr: Rel::empty(n),
            pick_data: Rel::empty(n),
            pick_ctrl: Rel::empty(n),
            lmrs: Rel::empty(n),
            same_instance: Rel::empty(n),
            init_of: (0..nl).collect(),
            regs: traces.iter().map(|t| t.regs.clone()).collect(),
            memo: Memo::default(),
        };
        let mut thread_sets: Vec<S> = Vec::new();
        let mut base = nl;
        for (t, tr) in traces.iter().enumerate() {
            let mut tset = S::ZERO;
            let shift = |taint: u64| -> S { S::from_u64(taint) << base };
            for (k, e) in tr.events.iter().enumerate() {
                let g = base + k;
                tset |= S::bit(g);
                events.push(Event {
                    thread: Some(t),
                    kind: e.kind,
                    loc: match e.kind {
                        // synchronize_srcu's event is at its srcu_struct.
                        Kind::Fence(Fence::Linux(LkFence::SyncSrcu)) => Some(e.loc),
                        Kind::Fence(_) => None,
                        _ => Some(e.loc),
                    },
                    rval: e.rval,
                    wval: e.wval,
                    annot: e.annot,
                    instance: e.instance,
                    pc: e.pc,
                });
                let b = S::bit(g);
                match e.kind {
                    Kind::Read => s.sets.r |= b,
                    Kind::Write => s.sets.w |= b,
                    Kind::Update => {
                        s.sets.r |= b;
                        s.sets.w |= b;
                        s.sets.upd |= b;
                    }
                    Kind::Fence(f) => {
                        s.sets.f |= b;
                        match f {
                            Fence::C(o) => order_set(&mut s.sets, g, o),
                            Fence::Mfence => s.sets.mfence |= b,
                            Fence::Lfence | Fence::Sfence => {}
                            Fence::Dmb(_, o) => match o.kind {
                                BarrierKind::Full => s.sets.dmb_full |= b,
                                BarrierKind::Ld => s.sets.dmb_ld |= b,
                                BarrierKind::St => s.sets.dmb_st |= b,
                            },
                            Fence::Isb => s.sets.isb |= b,
                            // The RISC-V model reads each fence's sets off its event.
                            Fence::RiscV { .. } | Fence::Tso => s.sets.rv_fence |= b,
                            // The LKMM reads each barrier's kind off its event.
                            Fence::Linux(_) => {}
                        }
                    }
                }
                if !matches!(e.kind, Kind::Fence(_)) {
                    if let Some(o) = e.annot.order {
                        order_set(&mut s.sets, g, o);
                        if o != MemOrder::Na {
                            s.sets.atomic |= b;
                        }
                    }
                    if e.annot.acquire {
                        s.sets.arm_a |= b;
                    }
                    if e.annot.acquire_pc {
                        s.sets.arm_q |= b;
                    }
                    if e.annot.release {
                        s.sets.arm_l |= b;
                    }
                    if e.annot.noret {
                        s.sets.noret |= b;
                    }
                    if e.annot.locked {
                        s.sets.locked |= b;
                    }
                    if e.annot.exclusive {
                        s.sets.excl |= b;
                    }
                }
                for j in members(shift(e.addr.dep)) {
                    s.addr.add(j, g);
                }
                for j in members(shift(e.data.dep)) {
                    s.data.add(j, g);
                }
                for j in members(shift(e.ctrl.dep)) {
                    s.ctrl.add(j, g);
                }
                for j in members(shift(e.addr.pick)) {
                    s.pick_addr.add(j, g);
                }
                for j in members(shift(e.data.pick)) {
                    s.pick_data.add(j, g);
                }
                for j in members(shift(e.ctrl.pick)) {
                    s.pick_ctrl.add(j, g);
                }
                if let Some(r) = e.rmw_read.map(usize::from) {
                    s.rmw.add(base + r, g);
                    if e.amo {
                        s.amo.add(base + r, g);
                    }
                }
            }
            // Program order, same instance, lmrs.
            let len = tr.events.len();
            for i in 0..len {
                // po: the thread's events after this one.
                s.po.add_row(base + i, tset & !full_set::<S>(base + i + 1));
                for j in 0..len {
                    if tr.events[i].instance == tr.events[j].instance {
                        s.same_instance.add(base + i, base + j);
                    }
                }
                let e = &tr.events[i];
                if matches!(e.kind, Kind::Read | Kind::Update) {
                    let src = (0..i).rev().find(|&k| {
                        matches!(tr.events[k].kind, Kind::Write | Kind::Update)
                            && tr.events[k].loc == e.loc
                    });
                    if let Some(k) = src {
                        s.lmrs.add(base + k, base + i);
                    }
                }
            }
            thread_sets.push(tset);
            base += len;
        }
        s.sets.w |= s.sets.iw;
        s.sets.m = s.sets.r | s.sets.w;
        for l in members(observed) {
            s.sets.observed_iw |= S::bit(s.init_of[l]);
        }
        s.sets.atomic &= s.sets.m;
        // Same-instance pairs are not dependencies (herd: `& ~same-instance`).
        s.pick_addr = s.pick_addr - s.same_instance;
        s.pick_data = s.pick_data - s.same_instance;
        s.pick_ctrl = s.pick_ctrl - s.same_instance;
        s.addr = s.addr - s.same_instance;
        s.data = s.data - s.same_instance;
        s.ctrl = s.ctrl - s.same_instance;
        // Same location, same thread (the initial writes count as one
        // thread) and different threads, a row at a time.
        let mut at: Vec<S> = vec![S::ZERO; nl];
        for (i, e) in events.iter().enumerate() {
            if let Some(l) = e.loc {
                if l >= at.len() {
                    at.resize(l + 1, S::ZERO);
                }
                at[l] |= S::bit(i);
            }
        }
        for (i, e) in events.iter().enumerate() {
            if let Some(l) = e.loc {
                s.loc.add_row(i, at[l]);
            }
            let same = match e.thread {
                Some(t) => thread_sets[t],
                None => s.sets.iw,
            };
            s.int.add_row(i, same);
            s.ext.add_row(i, full_set::<S>(n) & !same);
        }
        s.events = events;
        Ok(s)
    }

    /// `po & loc`.
    pub fn po_loc(&self) -> Rel<S> {
        self.po & self.loc
    }

    /// A short label for event `i`, such as `Rx=1`, `Wy=2[rel]`, `dmb.ld`.
    pub fn label(&self, test: &Test, i: usize) -> String {
        let e = &self.events[i];
        let loc = |l: Option<usize>| l.map(|l| test.locations[l].clone()).unwrap_or_default();
        let v = |x: i64| test.value_name(crate::interp::decode(x, test.locations.len()));
        let mut ann = String::new();
        if let Some(o) = e.annot.order {
            if o != MemOrder::Na || e.thread.is_some() {
                ann = o.short().to_string();
            }
        }
        for (flag, name) in [
            (e.annot.acquire, "A"),
            (e.annot.acquire_pc, "Q"),
            (e.annot.release, "L"),
            (e.annot.exclusive, "X"),
            (e.annot.locked, "lock"),
            (e.annot.lk != LkAccess::None, e.annot.lk.name()),
        ] {
            if flag {
                if !ann.is_empty() {
                    ann.push(',');
                }
                ann.push_str(name);
            }
        }
        let ann = if ann.is_empty() {
            ann
        } else {
            format!("[{ann}]")
        };
        match e.kind {
            Kind::Read => format!("R{}={}{}", loc(e.loc), v(e.rval), ann),
            Kind::Write if e.thread.is_none() => format!("Winit {}={}", loc(e.loc), v(e.wval)),
            Kind::Write => format!("W{}={}{}", loc(e.loc), v(e.wval), ann),
            Kind::Update => format!("RMW{}={}->{}{}", loc(e.loc), v(e.rval), v(e.wval), ann),
            Kind::Fence(f) => f.to_string(),
        }
    }
}

/// How many events an execution of `traces` has: an initial write per
/// location and the traces' events. Past [`MAX_WIDE_EVENTS`], none is built.
pub(crate) fn events_of(nl: usize, traces: &[&Trace]) -> Result<usize, CheckError> {
    let total = nl + traces.iter().map(|t| t.events.len()).sum::<usize>();
    if total > MAX_WIDE_EVENTS {
        return Err(CheckError::TooBig(format!(
            "an execution has {total} events; the checker's bound is {MAX_WIDE_EVENTS}"
        )));
    }
    Ok(total)
}

/// One coherent choice of reads-from and coherence for one location.
#[derive(Debug, Clone)]
pub(crate) struct LocChoice {
    /// `(write, read)` pairs.
    pub rf: Vec<(usize, usize)>,
    /// The coherence order, initial write first.
    pub co: Vec<usize>,
}

/// Work done so far, checked against a deadline and a bound so that huge
/// tests end with TIMEOUT or a bound error instead of hanging.
pub(crate) struct Budget {
    /// Give up after this instant.
    pub deadline: Option<std::time::Instant>,
    /// Steps taken.
    pub steps: u64,
    /// Most coherent choices kept for one location.
    pub max_choices: usize,
}

impl Budget {
    fn tick(&mut self) -> Result<(), CheckError> {
        self.steps += 1;
        if self.steps & 1023 == 0 {
            if let Some(d) = self.deadline {
                if std::time::Instant::now() > d {
                    return Err(CheckError::Timeout);
                }
            }
        }
        Ok(())
    }
}

/// Every coherent, atomic choice of rf and co for location `l`. Coherence
/// orders are generated as linear extensions of program order (coWW), and
/// each is paired with every value-matching reads-from that passes
/// SC-per-location and atomicity.
pub(crate) fn loc_choices<S: Bits>(
    s: &Skeleton<S>,
    l: usize,
    budget: &mut Budget,
) -> Result<Vec<LocChoice>, CheckError> {
    let init = s.init_of[l];
    let here: S = (0..s.n)
        .filter(|&i| s.events[i].loc == Some(l))
        .fold(S::ZERO, |a, i| a | S::bit(i));
    let writes: Vec<usize> = members(here & s.sets.w & !s.sets.iw).collect();
    let reads: Vec<usize> = members(here & s.sets.r).collect();
    let po_loc = s.po_loc();
    let mut out = Vec::new();
    let mut order = Vec::with_capacity(writes.len() + 1);
    order.push(init);
    extensions(
        s,
        &writes,
        0,
        &mut order,
        budget,
        &mut |co_list: &[usize], budget: &mut Budget| {
            let mut pos = [usize::MAX; MAX_WIDE_EVENTS];
            for (k, &w) in co_list.iter().enumerate() {
                pos[w] = k;
            }
            let mut co = Rel::empty(s.n);
            for (a, &x) in co_list.iter().enumerate() {
                for &y in &co_list[a + 1..] {
                    co.add(x, y);
                }
            }
            // SC per location is checked on `po-loc | co` plus each
            // choice's rf and fr, added row by row below.
            let fixed = po_loc | co;
            let cands: Vec<Vec<usize>> = reads
                .iter()
                .map(|&r| {
                    co_list
                        .iter()
                        .copied()
                        .filter(|&w| {
                            w != r && s.events[w].wval == s.events[r].rval && !s.po.has(r, w)
                        })
                        .collect()
                })
                .collect();
            if cands.iter().any(|c| c.is_empty()) {
                return Ok(());
            }
            let mut choice = vec![0usize; reads.len()];
            loop {
                budget.tick()?;
                // po-loc | co | rf | fr, where fr = (rf^-1; co) \ id: a
                // read's fr successors are its source's co successors.
                let mut com = fixed;
                let mut ok = true;
                for (k, &r) in reads.iter().enumerate() {
                    let w = cands[k][choice[k]];
                    com.add(w, r);
                    com.add_row(r, co.row(w) & !S::bit(r));
                    // Atomicity of a single-event RMW: reads its co-predecessor.
                    if s.sets.upd.has(r) && pos[w] + 1 != pos[r] {
                        ok = false;
                    }
                    // Atomicity of a pair: no other thread's write in between.
                    if ok {
                        for wr in members(s.rmw.row(r)) {
                            if pos[wr] <= pos[w] {
                                ok = false;
                                break;
                            }
                            for &mid in &co_list[pos[w] + 1..pos[wr]] {
                                if s.ext.has(mid, wr) {
                                    ok = false;
                                }
                            }
                        }
                    }
                    if !ok {
                        break;
                    }
                }
                if ok && com.acyclic() {
                    if out.len() >= budget.max_choices {
                        return Err(CheckError::TooBig(format!(
                            "more than {} coherent reads-from/coherence choices for one location",
                            budget.max_choices
                        )));
                    }
                    out.push(LocChoice {
                        rf: reads
                            .iter()
                            .enumerate()
                            .map(|(k, &r)| (cands[k][choice[k]], r))
                            .collect(),
                        co: co_list.to_vec(),
                    });
                }
                // Next rf combination (odometer).
                let mut k = 0;
                loop {
                    if k == reads.len() {
                        return Ok(());
                    }
                    choice[k] += 1;
                    if choice[k] < cands[k].len() {
                        break;
                    }
                    choice[k] = 0;
                    k += 1;
                }
            }
        },
    )?;
    Ok(out)
}

type Visit<'a> = dyn FnMut(&[usize], &mut Budget) -> Result<(), CheckError> + 'a;

/// Calls `f` on every order of `writes` (after the prefix in `order`) that
/// extends program order.
fn extensions<S: Bits>(
    s: &Skeleton<S>,
    writes: &[usize],
    placed: u128,
    order: &mut Vec<usize>,
    budget: &mut Budget,
    f: &mut Visit<'_>,
) -> Result<(), CheckError> {
    if order.len() == writes.len() + 1 {
        return f(order, budget);
    }
    for (i, &w) in writes.iter().enumerate() {
        if placed >> i & 1 == 1 {
            continue;
        }
        // Every po-earlier write to the location must already be placed.
        let blocked = writes
            .iter()
            .enumerate()
            .any(|(j, &v)| placed >> j & 1 == 0 && j != i && s.po.has(v, w));
        if blocked {
            continue;
        }
        budget.tick()?;
        order.push(w);
        extensions(s, writes, placed | 1 << i, order, budget, f)?;
        order.pop();
    }
    Ok(())
}

impl<'s, S: Bits> Execution<'s, S> {
    /// The execution made of one choice per location.
    pub(crate) fn from_choices(s: &'s Skeleton<S>, choices: &[&LocChoice]) -> Execution<'s, S> {
        let mut rf = Rel::empty(s.n);
        let mut co = Rel::empty(s.n);
        let mut last = Vec::with_capacity(choices.len());
        for c in choices {
            for &(w, r) in &c.rf {
                rf.add(w, r);
            }
            for (a, &x) in c.co.iter().enumerate() {
                for &y in &c.co[a + 1..] {
                    co.add(x, y);
                }
            }
            last.push(*c.co.last().unwrap_or(&0));
        }
        // fr = (rf^-1; co) \ id: each read's fr successors are its
        // source's co successors (a read has one source).
        let mut fr = Rel::empty(s.n);
        for c in choices {
            for &(w, r) in &c.rf {
                fr.add_row(r, co.row(w) & !S::bit(r));
            }
        }
        Execution {
            s,
            rf,
            co,
            fr,
            last,
        }
    }

    /// `rf & ext`.
    pub fn rfe(&self) -> Rel<S> {
        self.rf & self.s.ext
    }
    /// `rf & int`.
    pub fn rfi(&self) -> Rel<S> {
        self.rf & self.s.int
    }
    /// `co & ext`.
    pub fn coe(&self) -> Rel<S> {
        self.co & self.s.ext
    }
    /// `co & int`.
    pub fn coi(&self) -> Rel<S> {
        self.co & self.s.int
    }
    /// `fr & ext`.
    pub fn fre(&self) -> Rel<S> {
        self.fr & self.s.ext
    }
    /// `fr & int`.
    pub fn fri(&self) -> Rel<S> {
        self.fr & self.s.int
    }
}
