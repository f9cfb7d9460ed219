//! `bench fence`: the cost of each fence after a relaxed store to the
//! thread's line (`private`) or a shared one (`shared`). A fence's cost
//! depends on what is in flight: a full fence must drain the store buffer, so
//! a store before it is what makes the difference visible (`none` is the
//! baseline of the store alone).

use std::sync::atomic::{AtomicU64, Ordering};

use atomlab_core::Record;
use atomlab_prims::fence::{execute, FenceVariant};
use atomlab_prims::CachePadded;

use super::{announce, cell_failed, cell_record, cell_spec, Progress};
use crate::harness::run_cell;
use crate::options::Contention;
use crate::plan::{BenchError, Plan, Scenario};

/// The scenario.
pub struct Fence;

impl Scenario for Fence {
    fn name(&self) -> &'static str {
        "fence"
    }

    fn variants(&self) -> Vec<&'static str> {
        FenceVariant::ALL.map(|v| v.name()).to_vec()
    }

    fn unavailable(&self, variant: &str) -> Option<String> {
        variant
            .parse::<FenceVariant>()
            .ok()
            .filter(|v| !v.runs_here())
            .map(|v| {
                format!(
                    "fence {} is {} only; this is {}",
                    v.name(),
                    v.arch().unwrap_or("?"),
                    std::env::consts::ARCH
                )
            })
    }

    /// None: no offered rates.
    fn fields(&self) -> &'static [crate::options::Field] {
        &[]
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

/// Runs the fence cells of `plan`.
fn run(plan: &Plan, pmu: bool, progress: Progress<'_>) -> Result<Vec<Record>, BenchError> {
    let mut records = Vec::new();
    for variant in &plan.variants {
        let v: FenceVariant = variant
            .parse()
            .map_err(|_| BenchError::Unavailable(format!("unknown fence {variant}")))?;
        for &threads in &plan.threads {
            announce(progress, plan, variant, threads);
            let lines: Vec<CachePadded<AtomicU64>> = (0..threads)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect();
            let out = run_cell(
                &cell_spec(plan, threads, pmu),
                |t| {
                    let line = &lines[match plan.contention {
                        Contention::Shared => 0,
                        Contention::Private => t,
                    }];
                    let mut i = 0u64;
                    move || {
                        i = i.wrapping_add(1);
                        // ORDERING: Relaxed: the store only gives the fence
                        // something to order; the fence is what is measured.
                        line.store(i, Ordering::Relaxed);
                        execute(v);
                    }
                },
                || {},
                |_| Ok(()),
            )
            .map_err(|reason| cell_failed(plan, variant, reason))?;
            records.push(cell_record(plan, variant, threads, &out));
        }
    }
    Ok(records)
}
