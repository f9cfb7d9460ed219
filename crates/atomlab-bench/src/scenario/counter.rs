//! `bench counter`: increments of a shared line (`--contention shared`) or of
//! one padded line per thread (`private`), per variant and ordering.
//!
//! Users' operations (plugins, `include/atomlab.h`'s `op` kind) run beside
//! them: every thread calls the plugin's `op` on one state (`shared`) or
//! its own (`private`), once per thread count (a plugin fixes its own
//! orderings); where the plugin has `read`, the state must have counted
//! every call, as the built-in counters must.

use std::sync::atomic::{AtomicU64, Ordering};

use atomlab_core::Record;
use atomlab_plugin::abi::OpFns;
use atomlab_plugin::OpVariant;
use atomlab_prims::counter::{self, CounterVariant};
use atomlab_prims::CachePadded;

use super::plugged::{variant_records, Objects, Pluggable};
use super::{announce, cell_failed, cell_record, cell_spec, Progress};
use crate::harness::run_cell;
use crate::options::{Contention, Field};
use crate::plan::{ordering_name, BenchError, Plan, Scenario};

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
#[derive(Clone, Copy)]
pub struct Counter;

impl Scenario for Counter {
    fn name(&self) -> &'static str {
        "counter"
    }

    fn plugs(&self) -> Option<&'static dyn crate::plan::Plugs> {
        Some(&crate::scenario::plugged::Door(Counter))
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

    fn fields(&self) -> &'static [Field] {
        &[Field::Orderings, Field::Rates]
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
        self.run_with(plan, pmu, progress, &[])
    }
}

/// Users' operations beside the built-in counters
/// ([`super::plugged::WithPlugins`]).
impl Pluggable for Counter {
    type Fns = OpFns;

    /// Runs the counter cells of `plan`; a variant named by one of `plugins`
    /// is that plugin's operation.
    fn run_with(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
        plugins: &[OpVariant],
    ) -> Result<Vec<Record>, BenchError> {
        let plugin = |p: &OpVariant, threads| plugin_cell(plan, p, threads, pmu);
        variant_records(plan, plugins, progress, plugin, |variant, progress| {
            let v: CounterVariant = variant.parse().map_err(|_| {
                BenchError::Unavailable(format!("unknown counter variant {variant}"))
            })?;
            v.available()
                .map_err(|e| BenchError::Unavailable(e.to_string()))?;
            let mut records = Vec::new();
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
            Ok(records)
        })
    }

    /// `abi-noop`: an `op` that does nothing, through the ABI's pointer.
    fn abi_baseline(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        super::plugged::abi_noop_row(plan, progress, "an op that does nothing", |one| {
            let noop = atomlab_plugin::op::abi_noop()
                .map_err(|why| super::cell_failed(one, atomlab_plugin::lock::ABI_NOOP, why))?;
            plugin_cell(one, &noop, 1, pmu)
        })
    }
}

/// A plugin's operation: each thread calls `op` on the shared state, or on
/// its own with `--contention private`. With `read`, the states must have
/// counted every call (as a counter: a lost update is the cell's error).
fn plugin_cell(
    plan: &Plan,
    p: &OpVariant,
    threads: usize,
    pmu: bool,
) -> Result<Record, BenchError> {
    let states = Objects::new(plan, &p.name, threads, || p.make())?;
    // What `read` said before the run: the state is the plugin's, and has
    // no reset.
    let read = || -> Option<u64> {
        states
            .iter()
            .map(|s| s.read())
            .try_fold(0u64, |a, r| Some(a.wrapping_add(r?)))
    };
    let before = std::sync::Mutex::new(None);
    let out = run_cell(
        &cell_spec(plan, threads, pmu),
        |t| {
            let s = states.of(t);
            move || s.op()
        },
        || *before.lock().unwrap_or_else(|e| e.into_inner()) = read(),
        |ops| {
            let before = *before.lock().unwrap_or_else(|e| e.into_inner());
            match (before, read()) {
                (Some(b), Some(a)) if a.wrapping_sub(b) != ops => Err(format!(
                    "the plugin's read() counted {} operations but {ops} were made: lost updates",
                    a.wrapping_sub(b)
                )),
                _ => Ok(()),
            }
        },
    )
    .map_err(|reason| cell_failed(plan, &p.name, reason))?;
    let mut r = cell_record(plan, &p.name, threads, &out);
    r.notes.push(if read().is_some() {
        // Per cell: a cell of more threads may lose updates, and its
        // "incorrect" must not sit beside an unqualified "counted every".
        format!(
            "plugin {}: with {threads} thread(s), its read() counted every operation of every run",
            p.name
        )
    } else {
        format!(
            "plugin {}: it has no read(), so its operations were not counted",
            p.name
        )
    });
    if states.per_thread() {
        r.notes.push("--contention private: each thread's state comes from the plugin's new_, which may put two on one cache line (allocate 64-byte aligned states to measure the uncontended cost)".into());
    }
    Ok(r)
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
        CounterVariant::LlSc | CounterVariant::Lse => Err(format!("{} is aarch64 assembly", v.name()).into()),
    })
    .map_err(|reason| cell_failed(plan, v.name(), reason))?;
    Ok(cell_record(plan, v.name(), threads, &out))
}
