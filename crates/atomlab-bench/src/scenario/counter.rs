//! `bench counter`: increments of a shared line (`--contention shared`) or of
//! one padded line per thread (`private`), per variant and ordering.

use std::sync::atomic::{AtomicU64, Ordering};

use atomlab_core::Record;
use atomlab_prims::counter::{self, CounterVariant};
use atomlab_prims::CachePadded;

use super::{announce, cell_record, cell_spec, sanity, Progress};
use crate::harness::run_cell;
use crate::plan::{ordering_name, BenchError, Contention, Plan, Scenario};

/// Binds `$O` to a constant ordering matching `$ord`, so the hot loop is
/// compiled for that ordering (no run-time dispatch per operation).
macro_rules! with_ordering {
    ($ord:expr, $O:ident => $body:expr) => {
        match $ord {
            Ordering::Relaxed => {
                const $O: Ordering = Ordering::Relaxed;
                $body
            }
            Ordering::Acquire => {
                const $O: Ordering = Ordering::Acquire;
                $body
            }
            Ordering::Release => {
                const $O: Ordering = Ordering::Release;
                $body
            }
            Ordering::AcqRel => {
                const $O: Ordering = Ordering::AcqRel;
                $body
            }
            _ => {
                const $O: Ordering = Ordering::SeqCst;
                $body
            }
        }
    };
}

/// The scenario.
pub struct Counter;

impl Scenario for Counter {
    fn name(&self) -> &'static str {
        "counter"
    }

    fn variants(&self) -> Vec<&'static str> {
        CounterVariant::ALL.map(|v| v.name()).to_vec()
    }

    fn unavailable(&self, variant: &str) -> Option<String> {
        variant
            .parse::<CounterVariant>()
            .ok()
            .and_then(|v| v.available().err())
            .map(|e| e.to_string())
    }

    fn takes_orderings(&self) -> bool {
        true
    }

    fn implausible(&self, _plan: &Plan, _serial_ns: f64, ns_per_op: f64) -> Option<String> {
        crate::plausible::thread_rmw_implausible(ns_per_op)
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

/// Runs the counter cells of `plan`.
fn run(plan: &Plan, pmu: bool, progress: Progress<'_>) -> Result<Vec<Record>, BenchError> {
    let mut records = Vec::new();
    for variant in &plan.variants {
        let v: CounterVariant = variant
            .parse()
            .map_err(|_| BenchError::Unavailable(format!("unknown counter variant {variant}")))?;
        v.available()
            .map_err(|e| BenchError::Unavailable(e.to_string()))?;
        for &ord in &plan.orderings {
            for &threads in &plan.threads {
                announce(
                    progress,
                    plan,
                    &format!("{variant}/{}", ordering_name(ord)),
                    threads,
                );
                let mut rec = cell(plan, v, ord, threads, pmu)?;
                rec.param("ordering", ordering_name(ord));
                records.push(rec);
            }
        }
    }
    Ok(records)
}

fn cell(
    plan: &Plan,
    v: CounterVariant,
    ord: Ordering,
    threads: usize,
    pmu: bool,
) -> Result<Record, BenchError> {
    let lines: Vec<CachePadded<AtomicU64>> = (0..threads)
        .map(|_| CachePadded::new(AtomicU64::new(0)))
        .collect();
    let line = |t: usize| -> &AtomicU64 {
        match plan.contention {
            Contention::Shared => &lines[0],
            Contention::Private => &lines[t],
        }
    };
    let spec = cell_spec(plan, threads, pmu);
    // ORDERING: Relaxed resets and reads: the harness's barriers order them
    // against the workers' increments.
    let reset = || lines.iter().for_each(|l| l.store(0, Ordering::Relaxed));
    let check = |ops: u64| {
        let total: u64 = lines.iter().map(|l| l.load(Ordering::Relaxed)).sum();
        if total == ops {
            Ok(())
        } else {
            Err(format!(
                "the counters hold {total} but {ops} increments were counted"
            ))
        }
    };
    let out = with_ordering!(ord, O => match v {
        CounterVariant::FetchAdd => run_cell(&spec, |t| { let c = line(t); move || { counter::fetch_add(c, O); } }, reset, check),
        CounterVariant::CasLoop => run_cell(&spec, |t| { let c = line(t); move || { counter::cas_loop_add(c, O); } }, reset, check),
        #[cfg(target_arch = "aarch64")]
        CounterVariant::LlSc => run_cell(&spec, |t| { let c = line(t); move || { counter::llsc_add(c, O); } }, reset, check),
        #[cfg(target_arch = "aarch64")]
        // SAFETY: `available()` confirmed FEAT_LSE above.
        CounterVariant::Lse => run_cell(&spec, |t| { let c = line(t); move || { unsafe { counter::lse_add(c, O); } } }, reset, check),
        #[cfg(not(target_arch = "aarch64"))]
        CounterVariant::LlSc | CounterVariant::Lse => Err(format!("{} is aarch64 assembly", v.name())),
    })
    .map_err(|reason| sanity(plan, v.name(), reason))?;
    Ok(cell_record(plan, v.name(), threads, &out))
}
