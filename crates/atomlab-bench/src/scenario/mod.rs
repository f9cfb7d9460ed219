//! The scenarios: each turns primitives into per-thread operations, runs them
//! through the harness, and converts the samples into records. Each module
//! implements [`crate::plan::Scenario`] and has its line in `ALL`.

pub mod counter;
pub mod fence;
pub mod lock;
pub mod pingpong;
pub mod plugged;
pub mod refcount;
pub mod seqlock;
pub mod spsc;

/// Every scenario, in the order the command line lists them
/// ([`crate::registry::all`]). A new scenario is a module above and a line
/// here: help, completions, man pages and validation read this list.
pub(crate) const ALL: &[&dyn crate::plan::Scenario] = &[
    &counter::Counter,
    &refcount::Refcount,
    &lock::Lock,
    &fence::Fence,
    &pingpong::Pingpong,
    &spsc::Spsc,
    &seqlock::Seqlock,
];

use atomlab_core::{FlagKind, Metric, Record, Source, Unit};

use crate::clock;
use crate::harness::{CellError, CellOutcome, CellSpec, RunSample};
use crate::options::Contention;
use crate::plan::{BenchError, Plan};
use hdrhistogram::Histogram;

pub use crate::plan::Progress;

/// Runs every cell of `plan`. `pmu` says whether hardware counters work
/// here (probe them once with [`crate::pmu::probe`]).
pub fn run(plan: &Plan, pmu: bool, progress: Progress<'_>) -> Result<Vec<Record>, BenchError> {
    if plan.ring.waits.len() > 1 {
        // One way of waiting at a time: the scenario reads `wait`.
        let mut records = Vec::new();
        for &wait in &plan.ring.waits {
            let mut p = plan.clone();
            p.ring.wait = wait;
            p.ring.waits = vec![wait];
            records.extend(run(&p, pmu, progress)?);
        }
        return Ok(records);
    }
    if plan.rates.len() > 1 && !plan.scenario.runs_every_rate() {
        // One offered rate at a time: the harness reads the first.
        let mut records = Vec::new();
        for &rate in &plan.rates {
            let mut p = plan.clone();
            p.rates = vec![rate];
            records.extend(run(&p, pmu, progress)?);
        }
        return Ok(records);
    }
    plan.scenario.run(plan, pmu, progress)
}

/// The harness settings for one cell of `plan` with `threads` workers.
pub(crate) fn cell_spec(plan: &Plan, threads: usize, pmu: bool) -> CellSpec {
    CellSpec {
        threads,
        duration: plan.duration,
        warmup: plan.warmup,
        runs: plan.runs,
        pin: plan.pin,
        events: plan.events.clone(),
        pmu,
        rate: plan.rates.first().copied().flatten(),
    }
}

/// Builds the record of one cell from the harness's samples.
pub(crate) fn cell_record(plan: &Plan, variant: &str, threads: usize, out: &CellOutcome) -> Record {
    let mut r = Record::new("bench", plan.scenario.name(), variant);
    r.param("threads", threads)
        .param("contention", plan.contention.name())
        .param("duration_s", plan.duration.as_secs_f64())
        .param("warmup_s", plan.warmup.as_secs_f64())
        .param("runs", plan.runs)
        .param("pin", plan.pin)
        .param("batch", out.batch.clone())
        .param(
            "pinned_cpus",
            out.pinned
                .iter()
                .map(|p| p.map_or(serde_json::Value::Null, |c| c.into()))
                .collect::<Vec<_>>(),
        );

    let rate = plan.rates.first().copied().flatten();
    if let Some(rate) = rate {
        r.param("mode", "fixed-rate").param("rate_offered", rate);
    }
    // Runs whose timing cannot be trusted are flagged and left out of every
    // figure: a window that never opened, or a time per operation faster
    // than this machine's atomic RMW (see `crate::plausible`). At a fixed
    // rate the time per operation is the schedule's, so only the first
    // applies.
    let mut kept: Vec<&RunSample> = Vec::new();
    let mut implausible = Vec::new();
    for (i, run) in out.runs.iter().enumerate() {
        let (ops, wall) = (run.total_ops(), run.wall_ns());
        if ops == 0 || wall == 0 {
            implausible.push(format!(
                "run {}: {ops} operations in {wall} ns: no measurement",
                i + 1
            ));
            continue;
        }
        let ns_per_op = threads as f64 * wall as f64 / ops as f64;
        let why = plan
            .scenario
            .implausible(plan, wall as f64 / ops as f64, ns_per_op);
        let why = if rate.is_some() { None } else { why };
        match why {
            Some(why) => implausible.push(format!("run {}: {why}", i + 1)),
            None => kept.push(run),
        }
    }
    if !implausible.is_empty() {
        let kind = if kept.is_empty() {
            FlagKind::Implausible
        } else {
            FlagKind::RunsExcluded
        };
        r.flag(
            kind,
            Some("ns_per_op"),
            format!(
                "{} of {} runs left out of every figure: {}",
                implausible.len(),
                out.runs.len(),
                implausible.join("; ")
            ),
        );
    }
    if let Some(rate) = rate {
        rate_metrics(&mut r, plan, threads, &kept, rate);
    } else {
        flat_out_metrics(&mut r, plan, threads, &kept);
    }
    pmu_metrics(&mut r, out, &kept);
    r
}

/// The figures of a fixed-rate cell: the achieved rate (flagged when below
/// 99% of the offered one), the CPU the threads used, the share of it spent
/// in operations, and the latency from each operation's due time.
fn rate_metrics(r: &mut Record, plan: &Plan, threads: usize, kept: &[&RunSample], offered: f64) {
    let per_run = |f: &dyn Fn(&RunSample) -> Option<f64>| -> Vec<f64> {
        kept.iter().filter_map(|run| f(run)).collect()
    };
    let tpn = clock::sched_ticks_per_ns();
    let seconds = plan.duration.as_secs_f64();
    // Operations over the schedule's length: at most the offered rate.
    let achieved = per_run(&|run| Some(run.total_ops() as f64 / seconds));
    push_rate_achieved(r, offered, achieved, "ops");
    let skipped: u64 = kept
        .iter()
        .flat_map(|run| &run.threads)
        .filter_map(|t| t.scheduled.as_ref())
        .map(|s| s.skipped_at_end)
        .sum();
    if skipped > 0 {
        r.notes.push(format!(
            "fixed rate: {skipped} operations were due while a thread was off the CPU across the schedule's end; they count as not achieved"
        ));
    }
    r.metrics.push(Metric::new(
        "cpu_utilisation",
        Unit::Percent,
        Source::Rusage,
        per_run(&|run| {
            let w = run.wall_ns();
            (w > 0).then(|| run.cpu_ns() as f64 * 100.0 / (threads as f64 * w as f64))
        }),
    ));
    fn sched(run: &RunSample) -> Vec<&crate::harness::Scheduled> {
        run.threads
            .iter()
            .filter_map(|t| t.scheduled.as_ref())
            .collect()
    }
    let tick_src = clock::ref_source().unwrap_or(Source::ClockGettime);
    r.metrics.push(Metric::new(
        "busy",
        Unit::Percent,
        tick_src.clone(),
        per_run(&|run| {
            let w = run.wall_ns() as f64 * tpn * threads as f64;
            let busy: u64 = sched(run).iter().map(|s| s.busy_ticks).sum();
            (w > 0.0).then(|| busy as f64 * 100.0 / w)
        }),
    ));
    // A run whose every operation began and ended within one tick (an
    // emulator's coarse counter, as under qemu-aarch64 -cpu max) timed nothing: no
    // op_ns from it, rather than a cost of 0 ns.
    let op_ns = per_run(&|run| {
        let busy: u64 = sched(run).iter().map(|s| s.busy_ticks).sum();
        (run.total_ops() > 0 && busy > 0).then(|| busy as f64 / tpn / run.total_ops() as f64)
    });
    if op_ns.is_empty() {
        r.notes.push(format!(
            "op_ns not given: every operation began and ended within one tick of the clock ({:.1} ns), too short for it to time",
            1.0 / tpn
        ));
    } else {
        r.metrics.push(Metric::new(
            "op_ns",
            Unit::NanosPerOp,
            tick_src.clone(),
            op_ns,
        ));
    }
    let merged: Vec<Option<Histogram<u64>>> = kept
        .iter()
        .map(|run| {
            let mut all = sched(run).first()?.latency.clone();
            for s in sched(run).iter().skip(1) {
                all.add(&s.latency).ok()?;
            }
            Some(all)
        })
        .collect();
    push_latency_metrics(r, &tick_src, tpn, merged.iter().map(Option::as_ref));
    r.metrics.push(Metric::new(
        "schedule_lag_max_ns",
        Unit::NanosPerOp,
        tick_src,
        per_run(&|run| {
            let lag = sched(run).iter().map(|s| s.max_lag_ticks).max()?;
            Some(lag as f64 / tpn)
        }),
    ));
    r.notes.push(format!(
        "fixed rate: each thread runs its share of the offered rate on a schedule, sleeping while its next operation is over {us} µs away and spinning closer to it; cpu % is the threads' CPU time over their wall time (near 100% when a thread's operations are under {us} µs apart: read busy % then), busy % the share of their time inside operations; latency runs from each operation's due time to its end (coordinated omission corrected)",
        us = clock::SLEEP_MIN_NS / 1000.0
    ));
}

/// Pushes `latency_p50_ns`, `latency_p99_ns`, `latency_p999_ns` and
/// `latency_max_ns`, one sample per run, from each run's histogram of
/// latencies in `source` ticks (`tpn` ticks per ns). A run without a
/// histogram, or with an empty one, gives no sample.
pub(crate) fn push_latency_metrics<'h>(
    r: &mut Record,
    source: &Source,
    tpn: f64,
    per_run: impl Iterator<Item = Option<&'h Histogram<u64>>> + Clone,
) {
    for (name, q) in [
        ("latency_p50_ns", Some(0.5)),
        ("latency_p99_ns", Some(0.99)),
        ("latency_p999_ns", Some(0.999)),
        ("latency_max_ns", None),
    ] {
        let v = per_run
            .clone()
            .filter_map(|h| {
                let h = h.filter(|h| !h.is_empty())?;
                let ticks = match q {
                    Some(q) => h.value_at_quantile(q),
                    None => h.max(),
                };
                Some(ticks as f64 / tpn)
            })
            .collect();
        r.metrics
            .push(Metric::new(name, Unit::NanosPerOp, source.clone(), v));
    }
}

/// Records `rate_achieved` (one sample per run) and flags the record
/// `rate_not_sustained` when any run fell below 99 % of `offered` (or no run
/// counted): a rate that was not sustained is never reported as met.
pub(crate) fn push_rate_achieved(r: &mut Record, offered: f64, achieved: Vec<f64>, what: &str) {
    let short: Vec<String> = achieved
        .iter()
        .enumerate()
        .filter(|(_, &a)| a < 0.99 * offered)
        .map(|(i, a)| format!("run {}: {:.0}/s", i + 1, a))
        .collect();
    if !short.is_empty() || achieved.is_empty() {
        r.flag(
            FlagKind::RateNotSustained,
            Some("rate_achieved"),
            format!(
                "offered {offered:.0} {what}/s; achieved below 99% of it in {} of {} runs: {}",
                short.len(),
                achieved.len(),
                short.join("; ")
            ),
        );
    }
    r.metrics.push(Metric::new(
        "rate_achieved",
        Unit::OpsPerSecond,
        Source::ClockGettime,
        achieved,
    ));
}

/// The figures of a flat-out cell: throughput, time per operation, CPU,
/// and whether the threads contended as asked.
fn flat_out_metrics(r: &mut Record, plan: &Plan, threads: usize, kept: &[&RunSample]) {
    let per_run = |f: &dyn Fn(&RunSample) -> Option<f64>| -> Vec<f64> {
        kept.iter().filter_map(|run| f(run)).collect()
    };
    // ops/s: all threads' operations over the run's wall time. ns/op: the
    // time one thread spends per operation, threads x wall / operations;
    // the two are consistent by construction (ns/op = threads x 1e9 / ops/s).
    let ops_per_sec = per_run(&|run| Some(run.total_ops() as f64 * 1e9 / run.wall_ns() as f64));
    let ns_per_op =
        per_run(&|run| Some(threads as f64 * run.wall_ns() as f64 / run.total_ops() as f64));
    r.metrics.push(Metric::new(
        "ops_per_sec",
        Unit::OpsPerSecond,
        Source::ClockGettime,
        ops_per_sec,
    ));
    r.metrics.push(Metric::new(
        "ns_per_op",
        Unit::NanosPerOp,
        Source::ClockGettime,
        ns_per_op,
    ));
    if let Some(src) = clock::ref_source() {
        // The reference counter's rate over the threads' windows, times the
        // same per-thread time per operation as ns/op.
        let ref_per_op = per_run(&|run| {
            let ticks: u64 = run.threads.iter().map(|t| t.ref_ticks).sum();
            let ns: u64 = run.threads.iter().map(|t| t.elapsed_ns).sum();
            (ns > 0).then(|| {
                ticks as f64 / ns as f64 * threads as f64 * run.wall_ns() as f64
                    / run.total_ops() as f64
            })
        });
        r.metrics.push(Metric::new(
            "ref_cycles_per_op",
            Unit::RefCyclesPerOp,
            src,
            ref_per_op,
        ));
        let ghz = per_run(&|run| {
            let t = run.threads.first()?;
            (t.elapsed_ns > 0).then(|| t.ref_ticks as f64 / t.elapsed_ns as f64)
        });
        if let Some(s) = atomlab_core::Summary::of(&ghz) {
            r.notes.push(format!(
                "{} runs at {:.3} GHz: ref_cycles_per_op counts its ticks, not core cycles",
                clock::ref_name(),
                s.median
            ));
        }
    }
    let cpu =
        per_run(&|run| Some(run.cpu_ns() as f64 * 100.0 / (threads as f64 * run.wall_ns() as f64)));
    r.metrics.push(Metric::new(
        "cpu_utilisation",
        Unit::Percent,
        Source::Rusage,
        cpu,
    ));
    let parallelism = per_run(&|run| Some(run.parallelism()));
    let fairness = per_run(&|run| {
        let max = run.threads.iter().map(|t| t.ops).max()?;
        let min = run.threads.iter().map(|t| t.ops).min()?;
        (max > 0).then(|| min as f64 / max as f64)
    });
    flag_overlap(r, plan, threads, &parallelism, &fairness);
    flag_off_cpu(r, threads, kept);
    r.metrics.push(Metric::new(
        "parallelism",
        Unit::Ratio,
        Source::Rusage,
        parallelism,
    ));
    r.metrics.push(Metric::new(
        "fairness",
        Unit::Ratio,
        Source::Derived,
        fairness,
    ));
}

/// Hardware counters per operation, where they were counted.
fn pmu_metrics(r: &mut Record, out: &CellOutcome, kept: &[&RunSample]) {
    let per_run = |f: &dyn Fn(&RunSample) -> Option<f64>| -> Vec<f64> {
        kept.iter().filter_map(|run| f(run)).collect()
    };
    let multiplexed = std::cell::Cell::new(false);
    for (i, event) in out.events.iter().enumerate() {
        let per_op = per_run(&|run| {
            let mut count = 0.0;
            let mut ops = 0u64;
            for t in &run.threads {
                let reading = t.pmu.get(i).copied().flatten()?;
                multiplexed.set(multiplexed.get() | reading.multiplexed());
                count += reading.scaled()?;
                ops += t.ops;
            }
            (ops > 0).then(|| count / ops as f64)
        });
        if per_op.is_empty() {
            continue;
        }
        let (name, unit) = match event.name.as_str() {
            "cycles" => ("cycles_per_op".to_string(), Unit::CoreCyclesPerOp),
            "instructions" => ("instructions_per_op".to_string(), Unit::InstructionsPerOp),
            other => (format!("event:{other}"), Unit::EventsPerOp),
        };
        r.metrics.push(Metric::new(
            name,
            unit,
            Source::Pmu(event.name.clone()),
            per_op,
        ));
    }
    if multiplexed.get() {
        r.notes
            .push("PMU multiplexed: counts scaled by time_enabled/time_running".into());
    }
    for (event, why) in &out.event_errors {
        r.notes.push(format!("event {event} not counted: {why}"));
    }
}

/// Flags a cell whose threads did not contend as asked: more threads than
/// CPUs (time-sliced: at most one per CPU ran at once), threads that ran
/// one at a time (parallelism near 1: another process held the CPUs, or
/// waiters slept), or a thread that did no operation in a run.
pub(crate) fn flag_overlap(
    r: &mut Record,
    plan: &Plan,
    threads: usize,
    parallelism: &[f64],
    fairness: &[f64],
) {
    if threads < 2 || plan.contention != Contention::Shared {
        return;
    }
    let cpus = atomlab_thread::allowed_cpus().len().max(1);
    let mut why = Vec::new();
    if threads > cpus {
        why.push(format!(
            "{threads} threads on {cpus} CPUs: time-sliced, at most {cpus} ran at once"
        ));
    }
    let median = |v: &[f64]| atomlab_core::Summary::of(v).map(|s| s.median);
    if let Some(p) = median(parallelism) {
        if p < 1.25 && threads.min(cpus) >= 2 {
            why.push(format!(
                "the threads ran one at a time (parallelism {p:.2} of {}: another process held the CPUs, or waiters slept)",
                threads.min(cpus)
            ));
        }
    }
    let starved = fairness.iter().filter(|&&f| f == 0.0).count();
    if starved > 0 {
        why.push(format!(
            "a thread did no operation in {starved} of {} runs",
            fairness.len()
        ));
    }
    if !why.is_empty() {
        r.flag(FlagKind::NotContended, None, why.join("; "));
    }
}

/// A thread with this share of a CPU or more over its window counts as
/// having had one (the harness's own stop check and the kernel's ticks
/// take a little).
pub(crate) const CPU_SHARE_NEEDED: f64 = 0.9;

/// Voluntary context switches in a window above which a thread is taken
/// to sleep by design (a futex wait, a yielding waiter that slept): its
/// lower CPU share is then the algorithm's, not other work's.
const SLEEPS_BY_DESIGN: u64 = 2;

/// Flags a cell whose threads were off their CPUs while timed, without
/// sleeping themselves: the median over runs of the lowest CPU share
/// (CPU time over window) among threads that did not sleep by design is
/// below [`CPU_SHARE_NEEDED`]. One thread or many, shared or private:
/// other processes' time slices are in the figure (5.66, 4.17 and
/// 2.95 ns at 37, 50 and 67 % of a CPU were all `ok` before, ns × share
/// staying near 2 ns). Cells of more threads than CPUs are time-sliced
/// by design and flagged by [`flag_overlap`] instead.
pub(crate) fn flag_off_cpu(r: &mut Record, threads: usize, runs: &[&RunSample]) {
    let cpus = atomlab_thread::allowed_cpus().len().max(1);
    if threads > cpus {
        return;
    }
    let lowest: Vec<f64> = runs
        .iter()
        .filter_map(|run| {
            run.threads
                .iter()
                .filter(|t| t.voluntary_switches <= SLEEPS_BY_DESIGN && t.elapsed_ns > 0)
                .map(|t| t.cpu_ns as f64 / t.elapsed_ns as f64)
                .reduce(f64::min)
        })
        .collect();
    let Some(share) = atomlab_core::Summary::of(&lowest).map(|s| s.median) else {
        return;
    };
    if share < CPU_SHARE_NEEDED {
        let ns = r.metric("ns_per_op").and_then(|m| m.median());
        r.flag(
            FlagKind::OffCpu,
            Some("ns_per_op"),
            format!(
                "a measured thread had {:.0}% of a CPU while timed (median of the runs; it did not sleep by itself): other work's time slices are in the figure{}; see `atomlab machine` for the load, and measure on a quiet machine",
                share * 100.0,
                ns.map_or(String::new(), |ns| format!(
                    " (ns/op x CPU share = {:.3} ns, what the code itself took)",
                    ns * share
                ))
            ),
        );
    }
}

/// Labels a progress line for a cell.
pub(crate) fn announce(progress: Progress<'_>, plan: &Plan, variant: &str, threads: usize) {
    let rate = match plan.rates.first().copied().flatten() {
        Some(r) => format!(" rate={r}"),
        None => String::new(),
    };
    progress(atomlab_core::progress::Event::Step(&format!(
        "bench {} {} threads={}{rate} contention={} ({} x {:.2}s)",
        plan.scenario.name(),
        variant,
        threads,
        plan.contention.name(),
        plan.runs,
        plan.duration.as_secs_f64()
    )));
}

/// Maps a cell's failure (a failed sanity check, threads that could not
/// all start) into the error the caller reports.
pub(crate) fn cell_failed(plan: &Plan, variant: &str, why: impl Into<CellError>) -> BenchError {
    let (scenario, variant) = (plan.scenario.name(), variant.to_string());
    match why.into() {
        CellError::Sanity(reason) => BenchError::Sanity {
            scenario,
            variant,
            reason,
        },
        CellError::Threads(why) => BenchError::Threads {
            scenario,
            variant,
            why,
        },
    }
}
