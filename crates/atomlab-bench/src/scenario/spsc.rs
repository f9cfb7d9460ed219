//! `bench spsc`: a single-producer single-consumer ring, flat out or at a
//! fixed offered rate, with each side's CPU time and, at a fixed rate, the
//! latency of every item from enqueue to dequeue. This is 004's question
//! (what does each barrier choice cost in CPU at the same offered load?)
//! asked of atomlab-prims' [`SpscRing`] variants, with `rtrb` and
//! crossbeam's `ArrayQueue` as reference rows.
//!
//! How it measures (one run):
//! - Two threads, producer and consumer, pinned to two CPUs
//!   (`cross-core`) or both to one (`same-core`), released together by a
//!   spin barrier.
//! - Flat out: the producer pushes sequence numbers as fast as the ring
//!   takes them for `--duration`, then raises a done flag; the consumer pops
//!   until the flag is up and the ring is empty. items/s is items over the
//!   producer's window (a consumer that cannot keep up fills the ring and
//!   stalls the producer; the drain after the window is at most one ring).
//! - Fixed rate: item k is due at `t0 + k / rate` on the reference counter
//!   (TSC on x86-64, CNTVCT on aarch64; `CLOCK_MONOTONIC` elsewhere), or with
//!   `--batch N` at the due time of the first item of its group of N. The
//!   producer waits (spin or yield; with `--wait notify` it sleeps while the
//!   next item is over 200 µs away, then spins) until an item is due,
//!   then pushes it carrying the counter's value at that moment; an item
//!   that finds the ring full keeps retrying with its first stamp, and a
//!   producer that falls behind pushes the overdue items back to back (the
//!   schedule is kept, not stretched). Items due after `--duration` are not
//!   offered. The achieved rate is items over the schedule's length; below
//!   99% of the offered rate the record is flagged `rate_not_sustained`.
//!   `schedule_lag_max_ns` is the latest an item was pushed after it was
//!   due (the producer was descheduled, or the ring was full).
//! - Latency: the consumer reads the counter after each successful pop and
//!   records now minus the item's stamp in an HdrHistogram (3 significant
//!   digits; G. Tene's HdrHistogram, via the `hdrhistogram` crate); p50,
//!   p99, p99.9 and max per run. The stamp is the push attempt's time, not
//!   the item's due time, so a producer that fell behind does not add its
//!   lateness to the latency (coordinated omission, in Tene's words):
//!   `schedule_lag_max_ns` reports that lateness separately.
//! - CPU: each side's `CLOCK_THREAD_CPUTIME_ID` over its own window. A
//!   thread that spins or yields while waiting is on the CPU all the time,
//!   so this is near 100% for both: it is what a polling design costs. The
//!   busy share (`producer_busy`, `consumer_busy`, fixed rate only) is the
//!   counter ticks spent in push calls (failed ones included, the waits
//!   between them not) and successful pops over the window, leaving out a
//!   bracket longer than 20 µs (the thread was descheduled inside it):
//!   what an event-driven design (004's PDs, which sleep when idle) would
//!   spend on the queue. The counter reads around each operation are
//!   included; `--variant schedule-only` keeps the schedule and stamps with
//!   no queue at all, so its busy share is the overhead to subtract.
//!
//! - `--wait notify`: the consumer sleeps on a futex when the ring is empty
//!   and the producer rings [`Doorbell`] after each batch (and before
//!   waiting on a full ring), making the wake call only when the consumer
//!   said it sleeps; `notifications_per_item` counts those calls.
//!
//! What it cannot see: the consumer's histogram recording and counter reads
//! are in its CPU time; the reference counter is not serialising, so a busy
//! share brackets an operation only approximately; CNTVCT is coarse
//! (tens of ns per tick), so latencies on aarch64 are quantised to it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use atomlab_core::{FlagKind, Metric, Record, Source, Unit};
use atomlab_plugin::abi::SpscFns;
use atomlab_plugin::SpscVariant;
use atomlab_prims::doorbell::Doorbell;
use atomlab_prims::spsc::{SpscBarriers, SpscRing, SPSC_NAMES};
use atomlab_prims::{with_spsc, CachePadded};
use hdrhistogram::Histogram;

use super::plugged::Pluggable;
use super::Progress;
use crate::clock;
use crate::harness::SpinBarrier;
use crate::options::{Field, Placement, WaitMode};
use crate::plan::{BenchError, Plan, Scenario, TableKind};
use crate::pmu::{self, EventSpec, Reading};
use atomlab_thread as affinity;

/// The `rtrb` crate's ring (a reference row).
pub const RTRB: &str = "rtrb";
/// crossbeam-queue's bounded MPMC `ArrayQueue` used by one producer and one
/// consumer (a reference row).
pub const CROSSBEAM: &str = "crossbeam-array-queue";
/// The schedule and the stamps with no queue: the measurement's overhead.
pub const SCHEDULE_ONLY: &str = "schedule-only";

/// The variant names: the correct barrier variants of atomlab-prims' ring
/// (the broken ones belong to `stress spsc`), the reference rows, and the
/// empty schedule.
pub fn variant_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = SPSC_NAMES
        .into_iter()
        .filter(|n| with_spsc!(*n, V => V::CORRECT) == Some(true))
        .collect();
    v.extend([RTRB, CROSSBEAM, SCHEDULE_ONLY]);
    v
}

use clock::{busy_bracket, sched_now as now, sched_ticks_per_ns as ticks_per_ns};

/// One wait for room in the ring (or, in spin and yield modes, for an item).
#[inline(always)]
fn wait(mode: WaitMode) {
    match mode {
        WaitMode::Spin => std::hint::spin_loop(),
        // A notify-mode producer facing a full ring yields: the consumer is
        // awake (it was rung for the items that filled it).
        WaitMode::Yield | WaitMode::Notify => std::thread::yield_now(),
    }
}

/// The consumer's end of a queue: what the measured loop calls.
trait ConsumerEnd: Send {
    /// Takes the oldest item.
    fn pop(&mut self) -> Option<u64>;
    /// Whether an item is ready, without taking it: the check a notify-mode
    /// consumer makes after announcing that it is going to sleep.
    fn has_item(&mut self) -> bool;
}

/// atomlab-prims' ring, in one barrier variant.
struct RingEnd<'a, V>(&'a SpscRing<V>);

impl<V: SpscBarriers> ConsumerEnd for RingEnd<'_, V> {
    fn pop(&mut self) -> Option<u64> {
        self.0.try_pop().map(|x| x.0)
    }
    fn has_item(&mut self) -> bool {
        self.0.consumer_has_item()
    }
}

struct RtrbEnd(rtrb::Consumer<u64>);

impl ConsumerEnd for RtrbEnd {
    fn pop(&mut self) -> Option<u64> {
        self.0.pop().ok()
    }
    fn has_item(&mut self) -> bool {
        !self.0.is_empty()
    }
}

struct CrossbeamEnd<'a>(&'a crossbeam_queue::ArrayQueue<u64>);

impl ConsumerEnd for CrossbeamEnd<'_> {
    fn pop(&mut self) -> Option<u64> {
        self.0.pop()
    }
    fn has_item(&mut self) -> bool {
        !self.0.is_empty()
    }
}

/// `schedule-only`'s consumer: there is no queue.
struct NoQueue;

impl ConsumerEnd for NoQueue {
    fn pop(&mut self) -> Option<u64> {
        None
    }
    fn has_item(&mut self) -> bool {
        false
    }
}

/// A plugin's queue (include/atomlab.h's `spsc` kind). Its items are
/// nonzero, so item `v` travels as `v + 1`. The ABI has no peek: a notify
/// consumer's "is an item ready?" pops it into `stash`, and the next
/// `pop` returns it (its latency then ends at that check, a few
/// instructions before the pop it stands for).
struct PluginEnd {
    end: atomlab_plugin::spsc::Consumer,
    stash: Option<u64>,
}

impl ConsumerEnd for PluginEnd {
    fn pop(&mut self) -> Option<u64> {
        // A plugin that returns the reserved 0 gives u64::MAX, which the
        // run's order check reports.
        self.stash
            .take()
            .or_else(|| self.end.pop())
            .map(|v| v.wrapping_sub(1))
    }
    fn has_item(&mut self) -> bool {
        if self.stash.is_none() {
            self.stash = self.end.pop();
        }
        self.stash.is_some()
    }
}

/// One side's figures for one run.
#[derive(Debug, Default, Clone)]
struct Side {
    items: u64,
    start_ns: u64,
    end_ns: u64,
    cpu_ns: u64,
    /// Ticks spent in queue operations (fixed rate only).
    busy_ticks: u64,
    /// Producer at a fixed rate: the most ticks an item was pushed after
    /// it was due (descheduling, a full ring, or a slow push).
    max_lag_ticks: u64,
    /// Notify mode: the producer's wake system calls, or the consumer's
    /// sleeps (wait system calls).
    notifications: u64,
    /// PMU readings over the side's window, in the order of the cell's
    /// events; `None` where a counter could not be opened or read.
    pmu: Vec<Option<Reading>>,
}

/// One side's hardware counters, opened by the side's own thread (a
/// per-thread perf event counts the thread that opened it).
struct SideCounters(Vec<Option<pmu::Counter>>);

impl SideCounters {
    /// Opens `events`; the reasons for those that fail go to `errors`.
    fn open(events: &[EventSpec], errors: Option<&Mutex<Vec<(String, String)>>>) -> Self {
        SideCounters(
            events
                .iter()
                .map(|e| match pmu::Counter::open(e) {
                    Ok(c) => Some(c),
                    Err(err) => {
                        if let Some(errors) = errors {
                            errors
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push((e.name.clone(), pmu::explain_open_error(&err)));
                        }
                        None
                    }
                })
                .collect(),
        )
    }
    fn start(&self) {
        for c in self.0.iter().flatten() {
            let _ = c.start();
        }
    }
    fn stop(&self) -> Vec<Option<Reading>> {
        self.0
            .iter()
            .map(|c| c.as_ref().and_then(|c| c.stop().ok()))
            .collect()
    }
}

impl Side {
    fn wall_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }
}

/// One run's figures.
#[derive(Debug)]
struct RunOut {
    producer: Side,
    consumer: Side,
    /// Enqueue-to-dequeue latency in ticks (fixed rate only).
    latency: Option<Histogram<u64>>,
    /// Why the consumer's view is wrong, if it is.
    sanity: Option<String>,
}

impl RunOut {
    /// The producer's window: the schedule's length when it kept up. The
    /// consumer's drain after it is bounded by the ring's capacity; a
    /// consumer that falls behind fills the ring and stalls the producer,
    /// which shows here.
    fn wall_ns(&self) -> u64 {
        self.producer.wall_ns()
    }
}

/// The queue as the producer's push (false when full) and the consumer's
/// end. `None` for the consumer means there is no queue (`schedule-only`):
/// the consumer does nothing.
struct Run<'a, P, C> {
    plan: &'a Plan,
    /// Hardware events each side counts (empty without a PMU).
    events: &'a [EventSpec],
    /// Where the reasons for events that could not be opened go.
    event_errors: &'a Mutex<Vec<(String, String)>>,
    cpus: (Option<usize>, Option<usize>),
    push: P,
    pop: Option<C>,
}

impl<P, C> Run<'_, P, C>
where
    P: FnMut(u64) -> bool + Send,
    C: ConsumerEnd,
{
    /// Runs for `seconds`, the calling thread the producer; or why the
    /// consumer's thread could not start (nothing run then).
    fn go(self, seconds: f64) -> Result<RunOut, atomlab_thread::SpawnError> {
        let Run {
            plan,
            events,
            event_errors,
            cpus,
            mut push,
            pop,
        } = self;
        let barrier = SpinBarrier::new(2);
        let done = CachePadded::new(AtomicBool::new(false));
        let rate = plan.rates.first().copied().flatten();
        let mode = plan.ring.wait;
        let tpn = ticks_per_ns();
        let has_queue = pop.is_some();
        let notify = mode == WaitMode::Notify;
        let batch = plan.ring.batch.max(1) as u64;
        let bell = Doorbell::new();
        std::thread::scope(|s| {
            let (barrier, done, bell) = (&barrier, &done, &bell);
            // One thread, but through the group all the same: it starts
            // (or not) before either side waits at the barrier.
            let mut group = atomlab_thread::Group::new(s, 1, atomlab_thread::DEFAULT_STACK)?;
            let consumer = group.spawn("1 of 1 (the consumer)".into(), move || {
                if let Some(c) = cpus.1 {
                    let _ = affinity::pin_current_thread(c);
                }
                let counters = SideCounters::open(events, None);
                barrier.wait();
                counters.start();
                let cpu0 = clock::thread_cpu_ns();
                let start_ns = clock::monotonic_ns();
                let mut side = Side {
                    start_ns,
                    ..Side::default()
                };
                let mut sanity = None;
                let mut hist = None;
                if let Some(mut pop) = pop {
                    let mut last = 0u64;
                    let mut check = |v: u64, items: u64| {
                        // Flat out the items are 0, 1, 2…; at a rate, stamps
                        // that never decrease (one clock, one producer).
                        let ok = if rate.is_some() { v >= last } else { v == items };
                        if !ok && sanity.is_none() {
                            sanity = Some(if rate.is_some() {
                                // At a rate the items are clock stamps,
                                // not numbers: say them as such.
                                format!(
                                    "item {items} came out stamped {v} ticks, before the item ahead of it ({last} ticks): the ring reordered or duplicated items"
                                )
                            } else {
                                format!(
                                    "item {items} came out as item {v} after item {last}: the ring lost, duplicated or reordered items"
                                )
                            });
                        }
                        last = v;
                    };
                    // No item and no stop flag: spin, yield, or (notify)
                    // announce a sleep, re-check, and sleep until rung.
                    let idle = |pop: &mut C, side: &mut Side| {
                        if notify {
                            // ORDERING: Acquire, as the stop checks below.
                            let slept = bell
                                .sleep_unless(|| pop.has_item() || done.load(Ordering::Acquire));
                            side.notifications += u64::from(slept);
                        } else {
                            wait(mode)
                        }
                    };
                    if rate.is_some() {
                        let mut h = Histogram::<u64>::new_with_bounds(1, 1 << 45, 3)
                            .expect("valid histogram bounds");
                        loop {
                            let a = now();
                            match pop.pop() {
                                Some(v) => {
                                    let b = now();
                                    side.busy_ticks += busy_bracket(a, b, tpn);
                                    h.saturating_record(b.saturating_sub(v).max(1));
                                    check(v, side.items);
                                    side.items += 1;
                                }
                                // ORDERING: Acquire pairs with the producer's
                                // Release store of `done`: every push happened
                                // before it, so the pop below sees them all.
                                None if done.load(Ordering::Acquire) => match pop.pop() {
                                    Some(v) => {
                                        let b = now();
                                        h.saturating_record(b.saturating_sub(v).max(1));
                                        check(v, side.items);
                                        side.items += 1;
                                    }
                                    None => break,
                                },
                                None => idle(&mut pop, &mut side),
                            }
                        }
                        hist = Some(h);
                    } else {
                        loop {
                            match pop.pop() {
                                Some(v) => {
                                    check(v, side.items);
                                    side.items += 1;
                                }
                                // ORDERING: as above.
                                None if done.load(Ordering::Acquire) => match pop.pop() {
                                    Some(v) => {
                                        check(v, side.items);
                                        side.items += 1;
                                    }
                                    None => break,
                                },
                                None => idle(&mut pop, &mut side),
                            }
                        }
                    }
                }
                side.end_ns = clock::monotonic_ns();
                side.cpu_ns = clock::thread_cpu_ns().saturating_sub(cpu0);
                side.pmu = counters.stop();
                (side, hist, sanity)
            })?;
            group.open();
            if let Some(c) = cpus.0 {
                let _ = affinity::pin_current_thread(c);
            }
            let counters = SideCounters::open(events, Some(event_errors));
            barrier.wait();
            counters.start();
            let cpu0 = clock::thread_cpu_ns();
            let start_ns = clock::monotonic_ns();
            let mut p = Side {
                start_ns,
                ..Side::default()
            };
            let t0 = now();
            let span = (seconds * 1e9 * tpn) as u64;
            match rate {
                Some(rate) => {
                    let period = tpn * 1e9 / rate;
                    loop {
                        // A batch's items are due together.
                        let due = t0 + ((p.items / batch * batch) as f64 * period) as u64;
                        if due.wrapping_sub(t0) >= span {
                            break;
                        }
                        let mut t = now();
                        if t.wrapping_sub(t0) >= span {
                            // Behind schedule at the end: what was not
                            // pushed by now was not achieved.
                            break;
                        }
                        if mode == WaitMode::Yield {
                            while t < due {
                                std::thread::yield_now();
                                t = now();
                            }
                        } else {
                            // Notify sleeps while the next item is far off.
                            t = clock::wait_until(due, tpn, notify);
                        }
                        p.max_lag_ticks = p.max_lag_ticks.max(t.saturating_sub(due));
                        loop {
                            let a = now();
                            let ok = push(t);
                            // The ring's fence and any wake are part of the
                            // push's cost in notify mode: once per batch, and
                            // before waiting on a full ring (whose consumer
                            // may be asleep mid-batch).
                            if notify && (!ok || (p.items + 1).is_multiple_of(batch)) {
                                p.notifications += u64::from(bell.ring());
                            }
                            p.busy_ticks += busy_bracket(a, now(), tpn);
                            if ok {
                                break;
                            }
                            wait(mode);
                        }
                        p.items += 1;
                    }
                }
                None => {
                    // Check the clock every 256 items, so the flat-out loop
                    // is the queue's, not the clock's.
                    'run: loop {
                        for _ in 0..256 {
                            while !push(p.items) {
                                if notify {
                                    p.notifications += u64::from(bell.ring());
                                }
                                wait(mode);
                            }
                            if notify && (p.items + 1).is_multiple_of(batch) {
                                p.notifications += u64::from(bell.ring());
                            }
                            p.items += 1;
                        }
                        if now().wrapping_sub(t0) >= span {
                            break 'run;
                        }
                    }
                }
            }
            p.end_ns = clock::monotonic_ns();
            p.cpu_ns = clock::thread_cpu_ns().saturating_sub(cpu0);
            p.pmu = counters.stop();
            // ORDERING: Release: every push above happens before the
            // consumer's Acquire load that sees the flag.
            done.store(true, Ordering::Release);
            if notify {
                // The stop flag is news too: a sleeping consumer must see it.
                bell.ring();
            }
            let (c, latency, mut sanity) = consumer.join().unwrap_or_else(|_| {
                (
                    Side::default(),
                    None,
                    Some("the consumer panicked".to_string()),
                )
            });
            if sanity.is_none() && has_queue && c.items != p.items {
                sanity = Some(format!("{} items pushed, {} popped", p.items, c.items));
            }
            Ok(RunOut {
                producer: p,
                consumer: c,
                latency,
                sanity,
            })
        })
    }
}

/// The scenario.
#[derive(Clone, Copy)]
pub struct Spsc;

impl Scenario for Spsc {
    fn name(&self) -> &'static str {
        "spsc"
    }

    fn plugs(&self) -> Option<&'static dyn crate::plan::Plugs> {
        Some(&crate::scenario::plugged::Door(Spsc))
    }

    fn variants(&self) -> Vec<&'static str> {
        variant_names()
    }

    fn table(&self) -> TableKind {
        TableKind::Queue
    }

    fn fields(&self) -> &'static [Field] {
        &[
            Field::Rates,
            Field::Placement,
            Field::Capacity,
            Field::Batch,
            Field::Wait,
        ]
    }

    fn splits_threads(&self) -> bool {
        false
    }

    fn runs_every_rate(&self) -> bool {
        true
    }

    fn check(&self, plan: &Plan, cpus: usize) -> Result<(), BenchError> {
        if plan.ring.placement == Placement::CrossCore && cpus < 2 {
            return Err(BenchError::CrossCoreNeedsTwoCpus);
        }
        Ok(())
    }

    fn run(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        run(plan, pmu, progress)
    }
}

/// Users' queues beside the built-in ones ([`super::plugged::WithPlugins`]).
impl Pluggable for Spsc {
    type Fns = SpscFns;

    fn run_with(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
        plugins: &[SpscVariant],
    ) -> Result<Vec<Record>, BenchError> {
        run_plugged(plan, pmu, progress, plugins)
    }

    fn cell_params(&self, cell: &Plan, r: &mut Record) {
        ring_params(cell, r);
    }
}

/// Runs every cell of `plan` (one variant, one rate each after
/// [`Plan::split_cells`]; here any number).
/// `pmu` says whether hardware counters work here: each side then counts
/// cycles, instructions and the plan's `--events`.
fn run(plan: &Plan, pmu: bool, progress: Progress<'_>) -> Result<Vec<Record>, BenchError> {
    run_plugged(plan, pmu, progress, &[])
}

/// [`run`], where a variant named by one of `plugins` is that plugin's
/// queue.
fn run_plugged(
    plan: &Plan,
    pmu: bool,
    progress: Progress<'_>,
    plugins: &[SpscVariant],
) -> Result<Vec<Record>, BenchError> {
    let mut events = Vec::new();
    if pmu {
        events.push(EventSpec::cycles());
        events.push(EventSpec::instructions());
        for e in &plan.events {
            if !events.contains(e) {
                events.push(e.clone());
            }
        }
    }
    let mut records = Vec::new();
    for v in &plan.variants {
        for &rate in &plan.rates {
            let mut cell = plan.clone();
            cell.rates = vec![rate];
            progress(atomlab_core::progress::Event::Step(&format!(
                "bench spsc {} placement={} rate={} capacity={} batch={} wait={} ({} x {:.2}s)",
                v,
                plan.ring.placement.name(),
                rate.map_or("max".to_string(), |r| format!("{r}")),
                plan.ring.capacity,
                plan.ring.batch,
                plan.ring.wait.name(),
                plan.runs,
                plan.duration.as_secs_f64()
            )));
            let plugin = plugins.iter().find(|p| p.name == *v);
            let mut rec = one_cell(&cell, v, plugin, &events)?;
            if let Some(p) = plugin {
                p.tag(&mut rec);
            }
            records.push(rec);
        }
    }
    Ok(records)
}

fn one_cell(
    plan: &Plan,
    variant: &str,
    plugin: Option<&SpscVariant>,
    events: &[EventSpec],
) -> Result<Record, BenchError> {
    let event_errors = Mutex::new(Vec::new());
    let allowed = affinity::allowed_cpus();
    let cpus = if !plan.pin {
        (None, None)
    } else {
        match plan.ring.placement {
            Placement::CrossCore => (allowed.first().copied(), allowed.get(1).copied()),
            Placement::SameCore => (allowed.first().copied(), allowed.first().copied()),
        }
    };
    let mut outs = Vec::new();
    for i in 0..=plan.runs {
        let seconds = if i == 0 {
            plan.warmup.as_secs_f64()
        } else {
            plan.duration.as_secs_f64()
        };
        if i == 0 && seconds == 0.0 {
            continue;
        }
        let out = one_run(plan, variant, plugin, cpus, seconds, events, &event_errors)?;
        // The calling thread was the producer: give it back its CPUs.
        let _ = affinity::set_current_thread_cpus(&allowed);
        if let Some(why) = &out.sanity {
            return Err(super::cell_failed(plan, variant, why.clone()));
        }
        if i > 0 {
            outs.push(out);
        }
    }
    let mut errors = event_errors.into_inner().unwrap_or_else(|e| e.into_inner());
    errors.sort();
    errors.dedup();
    Ok(record(plan, variant, cpus, &outs, events, &errors))
}

fn one_run(
    plan: &Plan,
    variant: &str,
    plugin: Option<&SpscVariant>,
    cpus: (Option<usize>, Option<usize>),
    seconds: f64,
    events: &[EventSpec],
    event_errors: &Mutex<Vec<(String, String)>>,
) -> Result<RunOut, BenchError> {
    let cap = plan.ring.capacity;
    if let Some(p) = plugin {
        let (mut producer, consumer) = p
            .make(cap)
            .map_err(|why| super::cell_failed(plan, variant, why))?;
        return Run {
            plan,
            events,
            event_errors,
            cpus,
            push: move |v: u64| producer.push(v + 1),
            pop: Some(PluginEnd {
                end: consumer,
                stash: None,
            }),
        }
        .go(seconds)
        .map_err(|e| super::cell_failed(plan, variant, e));
    }
    if let Some(out) = with_spsc!(variant, V => {
        let ring = SpscRing::<V>::new(cap);
        let q = &ring;
        Run {
            plan,
            events,
            event_errors,
            cpus,
            push: move |v: u64| q.try_push((v, 0)),
            pop: Some(RingEnd(q)),
        }
        .go(seconds)
    }) {
        return out.map_err(|e| super::cell_failed(plan, variant, e));
    }
    let out = match variant {
        RTRB => {
            let (mut p, c) = rtrb::RingBuffer::<u64>::new(cap);
            Run {
                plan,
                events,
                event_errors,
                cpus,
                push: move |v| p.push(v).is_ok(),
                pop: Some(RtrbEnd(c)),
            }
            .go(seconds)
        }
        CROSSBEAM => {
            let q = crossbeam_queue::ArrayQueue::<u64>::new(cap);
            let q = &q;
            Run {
                plan,
                events,
                event_errors,
                cpus,
                push: move |v| q.push(v).is_ok(),
                pop: Some(CrossbeamEnd(q)),
            }
            .go(seconds)
        }
        SCHEDULE_ONLY => Run {
            plan,
            events,
            event_errors,
            cpus,
            push: |v: u64| std::hint::black_box(v) == v,
            pop: None::<NoQueue>,
        }
        .go(seconds),
        other => {
            return Err(BenchError::UnknownVariant {
                scenario: "spsc",
                name: atomlab_core::text::shown(other, 64),
                valid: variant_names(),
            })
        }
    };
    out.map_err(|e| super::cell_failed(plan, variant, e))
}

/// The parameters of a queue cell: what shapes the measurement.
fn ring_params(plan: &Plan, r: &mut Record) {
    let rate = plan.rates.first().copied().flatten();
    r.param("threads", 2)
        .param(
            "load",
            if rate.is_some() {
                "fixed-rate"
            } else {
                "flat-out"
            },
        )
        .param(
            "rate_offered",
            rate.map_or(serde_json::Value::Null, |r| r.into()),
        )
        .param("placement", plan.ring.placement.name())
        .param("capacity", plan.ring.capacity)
        // Not `batch`: that names the harness's calibrated batch, which
        // compare leaves out of matching; this one shapes the measurement.
        .param("items_per_batch", plan.ring.batch)
        .param("wait", plan.ring.wait.name())
        .param("duration_s", plan.duration.as_secs_f64())
        .param("warmup_s", plan.warmup.as_secs_f64())
        .param("runs", plan.runs)
        .param("pin", plan.pin);
}

fn record(
    plan: &Plan,
    variant: &str,
    cpus: (Option<usize>, Option<usize>),
    outs: &[RunOut],
    events: &[EventSpec],
    event_errors: &[(String, String)],
) -> Record {
    let rate = plan.rates.first().copied().flatten();
    let no_queue = variant == SCHEDULE_ONLY;
    let mut r = Record::new("bench", "spsc", variant);
    let cpu = |c: Option<usize>| c.map_or(serde_json::Value::Null, |c| c.into());
    ring_params(plan, &mut r);
    r.param("producer_cpu", cpu(cpus.0))
        .param("consumer_cpu", cpu(cpus.1));
    // The producer's count is the offered-and-taken count; with a queue the
    // consumer popped the same number (checked per run).
    let items = |o: &RunOut| o.producer.items as f64;
    let per_run =
        |f: &dyn Fn(&RunOut) -> Option<f64>| -> Vec<f64> { outs.iter().filter_map(f).collect() };
    let items_per_sec = per_run(&|o| {
        let w = o.wall_ns();
        (w > 0).then(|| items(o) * 1e9 / w as f64)
    });
    r.metrics.push(Metric::new(
        "items_per_sec",
        Unit::OpsPerSecond,
        Source::ClockGettime,
        items_per_sec.clone(),
    ));
    // The cost per item flat out; at a fixed rate wall / items is only
    // 1 / rate (push_ns and pop_ns say what an item costs there).
    if rate.is_none() {
        r.metrics.push(Metric::new(
            "ns_per_item",
            Unit::NanosPerOp,
            Source::ClockGettime,
            per_run(&|o| (o.producer.items > 0).then(|| o.wall_ns() as f64 / items(o))),
        ));
    }
    let pct = |part: u64, whole: u64| (whole > 0).then(|| part as f64 * 100.0 / whole as f64);
    r.metrics.push(Metric::new(
        "producer_cpu",
        Unit::Percent,
        Source::Rusage,
        per_run(&|o| pct(o.producer.cpu_ns, o.producer.wall_ns())),
    ));
    if !no_queue {
        r.metrics.push(Metric::new(
            "consumer_cpu",
            Unit::Percent,
            Source::Rusage,
            per_run(&|o| pct(o.consumer.cpu_ns, o.consumer.wall_ns())),
        ));
    }
    // Flat out with spinning ends, both sides should hold their CPUs: a
    // side that did not is other work's time slices in the figure (327k
    // items/s at 17 % of a CPU was called `ok`).
    if rate.is_none() && plan.ring.wait == WaitMode::Spin && !no_queue {
        let lowest = per_run(&|o| {
            let p = pct(o.producer.cpu_ns, o.producer.wall_ns())?;
            let c = pct(o.consumer.cpu_ns, o.consumer.wall_ns())?;
            Some(p.min(c))
        });
        if let Some(s) = atomlab_core::Summary::of(&lowest) {
            if s.median < super::CPU_SHARE_NEEDED * 100.0
                && plan.ring.placement == Placement::CrossCore
            {
                r.flag(
                    FlagKind::OffCpu,
                    Some("items_per_sec"),
                    format!(
                        "a side of the queue had {:.0}% of a CPU while timed (median of the runs), spinning: other work's time slices are in the figure; see `atomlab machine` for the load",
                        s.median
                    ),
                );
            }
        }
    }
    if plan.ring.wait == WaitMode::Notify && !no_queue {
        let per_item = |n: u64, items: u64| (items > 0).then(|| n as f64 / items as f64);
        r.metrics.push(Metric::new(
            "notifications_per_item",
            Unit::EventsPerOp,
            Source::Derived,
            per_run(&|o| per_item(o.producer.notifications, o.producer.items)),
        ));
        r.metrics.push(Metric::new(
            "consumer_sleeps_per_item",
            Unit::EventsPerOp,
            Source::Derived,
            per_run(&|o| per_item(o.consumer.notifications, o.consumer.items)),
        ));
        r.notes.push(
            "spsc --wait notify: the consumer sleeps on a futex when the ring is empty; notifications_per_item counts the producer's wake calls (made only when the consumer said it was sleeping), and each push pays one SeqCst fence for that check".into(),
        );
    }
    let tick_src = clock::ref_source().unwrap_or(Source::ClockGettime);
    if let Some(offered) = rate {
        let tpn = ticks_per_ns();
        let busy = |s: &Side| {
            let w = s.wall_ns() as f64 * tpn;
            (w > 0.0).then(|| s.busy_ticks as f64 * 100.0 / w)
        };
        r.metrics.push(Metric::new(
            "producer_busy",
            Unit::Percent,
            tick_src.clone(),
            per_run(&|o| busy(&o.producer)),
        ));
        // The busy share per item: what one push (or pop) cost, in ns,
        // counter reads included (schedule-only's push_ns is their cost).
        let per_item =
            |s: &Side, items: u64| (items > 0).then(|| s.busy_ticks as f64 / tpn / items as f64);
        r.metrics.push(Metric::new(
            "push_ns",
            Unit::NanosPerOp,
            tick_src.clone(),
            per_run(&|o| per_item(&o.producer, o.producer.items)),
        ));
        if !no_queue {
            r.metrics.push(Metric::new(
                "consumer_busy",
                Unit::Percent,
                tick_src.clone(),
                per_run(&|o| busy(&o.consumer)),
            ));
            r.metrics.push(Metric::new(
                "pop_ns",
                Unit::NanosPerOp,
                tick_src.clone(),
                per_run(&|o| per_item(&o.consumer, o.consumer.items)),
            ));
            super::push_latency_metrics(
                &mut r,
                &tick_src,
                tpn,
                outs.iter().map(|o| o.latency.as_ref()),
            );
        }
        r.metrics.push(Metric::new(
            "schedule_lag_max_ns",
            Unit::NanosPerOp,
            tick_src.clone(),
            per_run(&|o| Some(o.producer.max_lag_ticks as f64 / tpn)),
        ));
        // Items pushed over the schedule's length: the producer offers only
        // items due within it and stops at its end, so this is at most the
        // offered rate, and a deschedule after the last push (which
        // lengthens the measured window) does not count against it.
        let achieved: Vec<f64> = outs
            .iter()
            .map(|o| o.producer.items as f64 / plan.duration.as_secs_f64())
            .collect();
        super::push_rate_achieved(&mut r, offered, achieved, "items");
        r.notes.push(format!(
            "spsc latency: enqueue to dequeue on the {} ({:.3} ticks/ns), HdrHistogram with 3 significant digits; busy % = ticks in queue operations over the window (subtract schedule-only's)",
            if clock::ref_source().is_some() { clock::ref_name() } else { "monotonic clock" },
            tpn
        ));
    }
    // Hardware counters per item, per side.
    let multiplexed = std::cell::Cell::new(false);
    for (i, e) in events.iter().enumerate() {
        let (suffix, unit) = match e.name.as_str() {
            "cycles" => ("cycles_per_item".to_string(), Unit::CoreCyclesPerOp),
            "instructions" => ("instructions_per_item".to_string(), Unit::InstructionsPerOp),
            other => (format!("event:{other}"), Unit::EventsPerOp),
        };
        for (side, pick) in [
            (
                "producer",
                (|o: &RunOut| &o.producer) as fn(&RunOut) -> &Side,
            ),
            ("consumer", |o: &RunOut| &o.consumer),
        ] {
            if side == "consumer" && no_queue {
                continue;
            }
            let v = per_run(&|o| {
                let s = pick(o);
                let reading = s.pmu.get(i).copied().flatten()?;
                multiplexed.set(multiplexed.get() | reading.multiplexed());
                let count = reading.scaled()?;
                (s.items > 0).then(|| count / s.items as f64)
            });
            if !v.is_empty() {
                r.metrics.push(Metric::new(
                    format!("{side}_{suffix}"),
                    unit,
                    Source::Pmu(e.name.clone()),
                    v,
                ));
            }
        }
    }
    if multiplexed.get() {
        r.notes
            .push("PMU multiplexed: counts scaled by time_enabled/time_running".into());
    }
    for (event, why) in event_errors {
        r.notes.push(format!("event {event} not counted: {why}"));
    }
    // A waiting thread spins or yields, so it is on the CPU unless another
    // process took it: a low CPU % means the figures are the scheduler's.
    let on_cpu: Vec<f64> = ["producer_cpu", "consumer_cpu"]
        .iter()
        .filter_map(|m| r.metric(m).and_then(|m| m.median()))
        .collect();
    if let Some(low) = on_cpu.iter().copied().reduce(f64::min) {
        if low < 90.0 {
            r.notes.push(
                "spsc: where a side's cpu % is below 90, other processes held its CPU, so that row's rates and latencies include their time slices".into(),
            );
        }
    }
    if plan.ring.wait == WaitMode::Spin || plan.ring.wait == WaitMode::Yield {
        r.notes.push(
            "spsc cpu %: thread CPU time over wall time; a thread that spins or yields while it waits is on the CPU throughout, so it reads near 100%".into(),
        );
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Request;
    use atomlab_core::FlagKind;

    fn plan(variant: &str, rate: &str, seconds: f64) -> Plan {
        let req = Request {
            scenario: "spsc".into(),
            variants: vec![variant.into()],
            rates: vec![rate.into()],
            duration: Some(seconds),
            warmup: Some(0.05),
            runs: Some(1),
            pin: true,
            ..Default::default()
        };
        let cpus = affinity::allowed_cpus().len();
        let mut p = Plan::from_request(&req, cpus.max(2)).unwrap();
        if cpus < 2 {
            p.ring.placement = Placement::SameCore;
            p.ring.wait = WaitMode::Yield;
        }
        p
    }

    fn median(r: &Record, m: &str) -> f64 {
        r.metric(m).and_then(|m| m.median()).unwrap_or(f64::NAN)
    }

    #[test]
    fn every_variant_moves_items_flat_out() {
        for v in variant_names() {
            let p = plan(v, "max", 0.02);
            let recs = run(&p, false, &mut |_| {}).unwrap();
            assert_eq!(recs.len(), 1);
            assert!(median(&recs[0], "items_per_sec") > 1000.0, "{v}");
            assert!(!recs[0].flagged(FlagKind::RateNotSustained));
        }
    }

    #[test]
    fn an_easy_rate_is_met_within_one_percent() {
        // The machine may be shared: another process can take the CPU for
        // long enough near a run's end that the producer cannot catch up.
        // Every attempt must be honest: flagged exactly when below 99%, and
        // a shortfall must show as schedule lag at least as long as the
        // missing items' time. One of five attempts must meet the rate,
        // unless every attempt's shortfall is such a deschedule.
        let mut seen = Vec::new();
        for _ in 0..5 {
            let p = plan("c11-acq-rel", "100k", 0.3);
            let r = run(&p, false, &mut |_| {}).unwrap().remove(0);
            // At a rate, wall / items is 1 / rate, not a cost per item:
            // no ns_per_item (it showed 10.0k in the flat-out column).
            assert!(r.metric("ns_per_item").is_none(), "{:?}", r.metrics);
            let achieved = median(&r, "rate_achieved");
            assert_eq!(
                r.flagged(FlagKind::RateNotSustained),
                achieved < 0.99e5,
                "{achieved}: {:?}",
                r.flags
            );
            assert!(
                achieved <= 1.01e5,
                "a schedule cannot be beaten: {achieved}"
            );
            let p50 = median(&r, "latency_p50_ns");
            assert!(p50 > 0.0 && p50 <= median(&r, "latency_max_ns"), "{p50}");
            assert!(median(&r, "consumer_busy") < 100.0);
            assert!(median(&r, "push_ns") > 0.0 && median(&r, "pop_ns") > 0.0);
            if (achieved - 1e5).abs() < 1e3 {
                return;
            }
            // A spinning producer is off its CPU only when descheduled.
            let missing_ns = (1e5 - achieved) * 0.3 / 1e5 * 1e9;
            let off_cpu_ns = (100.0 - median(&r, "producer_cpu")) / 100.0 * 0.3e9;
            let lag = median(&r, "schedule_lag_max_ns");
            seen.push((achieved, lag));
            assert!(
                off_cpu_ns * 1.2 + 1e6 >= missing_ns,
                "achieved {achieved}/s with no deschedule to explain it (off CPU {off_cpu_ns} ns, {missing_ns} ns missing)"
            );
        }
        eprintln!(
            "note: 100k items/s missed in 5 attempts, each explained by a deschedule: {seen:?}"
        );
    }

    fn notify_plan(variant: &str, rate: &str, seconds: f64) -> Plan {
        let mut p = plan(variant, rate, seconds);
        p.ring.wait = WaitMode::Notify;
        p
    }

    #[test]
    fn notify_mode_moves_every_item_flat_out() {
        // A lost wake-up would hang the consumer (and this test) or lose
        // items (the per-run sanity check fails the cell).
        for v in variant_names() {
            let r = &run(&notify_plan(v, "max", 0.02), false, &mut |_| {}).unwrap()[0];
            assert!(median(r, "items_per_sec") > 1000.0, "{v}");
            if v != SCHEDULE_ONLY {
                assert!(median(r, "notifications_per_item") <= 1.0, "{v}");
            }
        }
    }

    #[test]
    fn a_batch_is_rung_for_once() {
        // Flat out with batches of 32: at most one wake call per batch.
        let mut p = notify_plan("fences", "max", 0.02);
        p.ring.batch = 32;
        let r = &run(&p, false, &mut |_| {}).unwrap()[0];
        let n = median(r, "notifications_per_item");
        assert!(n <= 1.0 / 32.0 + 1e-9, "{n}");
        // At a low rate every batch finds the consumer asleep.
        let mut p = notify_plan("fences", "4k", 0.2);
        p.ring.batch = 8;
        let r = &run(&p, false, &mut |_| {}).unwrap()[0];
        // (A loaded machine may miss the rate; the flag must say so.)
        let achieved = median(r, "rate_achieved");
        let offered = r.parameters["rate_offered"].as_f64().unwrap();
        assert_eq!(
            r.flagged(FlagKind::RateNotSustained),
            achieved < 0.99 * offered
        );
        let n = median(r, "notifications_per_item");
        assert!(n > 0.5 / 8.0 && n <= 1.0 / 8.0 + 1e-9, "{n}");
    }

    #[test]
    fn a_notified_consumer_sleeps_at_a_low_rate() {
        // 2k items/s: 500 µs between items, so the consumer empties the ring
        // and sleeps before each one, and the producer sleeps too.
        let r = &run(&notify_plan("c11-acq-rel", "2k", 0.3), false, &mut |_| {}).unwrap()[0];
        // (A loaded machine may miss the rate; the flag must say so.)
        let achieved = median(r, "rate_achieved");
        let offered = r.parameters["rate_offered"].as_f64().unwrap();
        assert_eq!(
            r.flagged(FlagKind::RateNotSustained),
            achieved < 0.99 * offered
        );
        // A wake for many items: most on a quiet machine; on a loaded one a
        // producer that fell behind pushes several items per wake. Under
        // qemu-user (cross-test) a wake takes longer than the 500 µs
        // between items, so the consumer finds many each time: seen at
        // 0.06 wakes per item on cortex-a53. There only the upper bound,
        // which no timing can break, is checked.
        let n = median(r, "notifications_per_item");
        assert!(n > 0.0 && n <= 1.0, "wakes per item: {n}");
        if atomlab_core::Machine::detect().emulated {
            eprintln!("emulated: {n} wakes per item, the lower bound is not checked");
        } else {
            assert!(n > 0.15, "wakes per item: {n}");
            assert!(median(r, "consumer_sleeps_per_item") > 0.15);
        }
        // Sleeping threads are off the CPU: far below a spinner's ~100%.
        assert!(
            median(r, "consumer_cpu") < 50.0,
            "{}",
            median(r, "consumer_cpu")
        );
        assert!(
            median(r, "producer_cpu") < 60.0,
            "{}",
            median(r, "producer_cpu")
        );
        let p50 = median(r, "latency_p50_ns");
        assert!(p50 > 0.0 && p50 < 1e8, "{p50}");
    }

    #[test]
    fn pmu_readings_become_per_side_per_item_figures() {
        // This VM has no PMU, so the counting path is tested with readings
        // as the kernel returns them: 1000 items, the producer's stall
        // counter multiplexed half the time.
        let p = plan("fences", "max", 0.01);
        let events = vec![
            EventSpec::cycles(),
            EventSpec::parse_for("stall_backend", std::env::consts::ARCH).unwrap(),
        ];
        let side = |cycles: u64, stalls: Reading| Side {
            items: 1000,
            start_ns: 0,
            end_ns: 1_000_000,
            pmu: vec![
                Some(Reading {
                    value: cycles,
                    time_enabled: 10,
                    time_running: 10,
                }),
                Some(stalls),
            ],
            ..Side::default()
        };
        let out = RunOut {
            producer: side(
                50_000,
                Reading {
                    value: 3_000,
                    time_enabled: 10,
                    time_running: 5,
                },
            ),
            consumer: side(80_000, Reading::default()),
            latency: None,
            sanity: None,
        };
        let errors = vec![("r1234".to_string(), "not supported".to_string())];
        let r = record(&p, "fences", (None, None), &[out], &events, &errors);
        assert_eq!(median(&r, "producer_cycles_per_item"), 50.0);
        assert_eq!(median(&r, "consumer_cycles_per_item"), 80.0);
        // Scaled for multiplexing: 3000 x 10/5 over 1000 items.
        assert_eq!(median(&r, "producer_event:stall_backend"), 6.0);
        // A counter that never ran gives no figure, not zero.
        assert!(r.metric("consumer_event:stall_backend").is_none());
        assert!(r.notes.iter().any(|n| n.contains("multiplexed")));
        assert!(r.notes.iter().any(|n| n.contains("r1234 not counted")));
    }

    #[test]
    fn an_absurd_rate_is_reported_as_not_sustained() {
        let p = plan("rtrb", "10G", 0.05);
        let r = &run(&p, false, &mut |_| {}).unwrap()[0];
        assert!(r.flagged(FlagKind::RateNotSustained), "{:?}", r.flags);
        assert!(median(r, "rate_achieved") < 0.99e10);
    }
}
