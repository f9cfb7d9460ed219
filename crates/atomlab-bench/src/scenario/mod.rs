//! The scenarios: each turns primitives into per-thread operations, runs them
//! through the harness, and converts the samples into records.

pub mod counter;
pub mod fence;
pub mod lock;
pub mod pingpong;
pub mod refcount;

use atomlab_core::{Metric, Record, Source, Unit};

use crate::clock;
use crate::harness::{CellOutcome, CellSpec};
use crate::plan::{BenchError, Plan, Scenario};

/// Where progress lines go (stderr in the CLI, nowhere in tests).
pub type Progress<'a> = &'a mut dyn FnMut(&str);

/// Runs every cell of `plan`. `pmu` says whether hardware counters work
/// here (probe them once with [`crate::pmu::probe`]).
pub fn run(plan: &Plan, pmu: bool, progress: Progress<'_>) -> Result<Vec<Record>, BenchError> {
    match plan.scenario {
        Scenario::Counter => counter::run(plan, pmu, progress),
        Scenario::Refcount => refcount::run(plan, pmu, progress),
        Scenario::Lock => lock::run(plan, pmu, progress),
        Scenario::Fence => fence::run(plan, pmu, progress),
        Scenario::Pingpong => pingpong::run(plan, progress),
    }
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

    let per_run = |f: &dyn Fn(&crate::harness::RunSample) -> Option<f64>| -> Vec<f64> {
        out.runs.iter().filter_map(f).collect()
    };
    let ops_per_sec = per_run(&|run| {
        Some(
            run.threads
                .iter()
                .filter(|t| t.elapsed_ns > 0)
                .map(|t| t.ops as f64 * 1e9 / t.elapsed_ns as f64)
                .sum(),
        )
    });
    let ns_per_op = per_run(&|run| {
        let v: Vec<f64> = run
            .threads
            .iter()
            .filter(|t| t.ops > 0)
            .map(|t| t.elapsed_ns as f64 / t.ops as f64)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    });
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
        let ref_per_op = per_run(&|run| {
            let v: Vec<f64> = run
                .threads
                .iter()
                .filter(|t| t.ops > 0)
                .map(|t| t.ref_ticks as f64 / t.ops as f64)
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
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
    let cpu = per_run(&|run| {
        let wall: u64 = run.threads.iter().map(|t| t.elapsed_ns).sum();
        let cpu: u64 = run.threads.iter().map(|t| t.cpu_ns).sum();
        (wall > 0).then(|| cpu as f64 * 100.0 / wall as f64)
    });
    r.metrics.push(Metric::new(
        "cpu_utilisation",
        Unit::Percent,
        Source::Rusage,
        cpu,
    ));
    let fairness = per_run(&|run| {
        let max = run.threads.iter().map(|t| t.ops).max()?;
        let min = run.threads.iter().map(|t| t.ops).min()?;
        (max > 0).then(|| min as f64 / max as f64)
    });
    r.metrics.push(Metric::new(
        "fairness",
        Unit::Ratio,
        Source::Derived,
        fairness,
    ));

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
    r
}

/// Labels a progress line for a cell.
pub(crate) fn announce(progress: Progress<'_>, plan: &Plan, variant: &str, threads: usize) {
    progress(&format!(
        "bench {} {} threads={} contention={} ({} x {:.2}s)",
        plan.scenario.name(),
        variant,
        threads,
        plan.contention.name(),
        plan.runs,
        plan.duration.as_secs_f64()
    ));
}

/// Maps a sanity failure into the error the caller reports.
pub(crate) fn sanity(plan: &Plan, variant: &str, reason: String) -> BenchError {
    BenchError::Sanity {
        scenario: plan.scenario.name(),
        variant: variant.to_string(),
        reason,
    }
}
