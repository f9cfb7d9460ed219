//! `bench seqlock`: what a sequence lock's read side costs, for each of
//! the correct readers of `atomlab_prims::seqlock` (H.-J. Boehm, "Can
//! seqlocks get along with programming language memory models?", MSPC
//! 2012): `fenced-reader` (relaxed data loads, one acquire fence before
//! the re-check: Linux's `smp_rmb()`) and `acquire-data-reader` (an
//! acquire load per data word, no fence). On x86-64 both are plain loads;
//! on AArch64 the first is one `DMB ISHLD`, the second an `LDAR` (or
//! `LDAPR`) per word, which is the choice this measures.
//!
//! Each operation is one read of the lock's four words and its count,
//! with no writer, so no read is retried: the read side's own cost, on
//! one lock every thread reads (`shared`: the readers share its lines) or
//! one each (`private`). What a writer costs the readers is `stress
//! seqlock`'s business (it checks the snapshots too).

use atomlab_core::Record;
use atomlab_prims::seqlock::{AcquireDataReader, FencedReader, SeqLock, SeqlockReader, WORDS};
use atomlab_prims::CachePadded;

use super::{announce, cell_failed, cell_record, cell_spec, Progress};
use crate::harness::run_cell;
use crate::options::{Contention, Field};
use crate::plan::{BenchError, Plan, Scenario};

/// The scenario.
pub struct Seqlock;

impl Scenario for Seqlock {
    fn name(&self) -> &'static str {
        "seqlock"
    }

    /// The correct readers only: a broken one's cost says nothing.
    fn variants(&self) -> Vec<&'static str> {
        vec![FencedReader::NAME, AcquireDataReader::NAME]
    }

    /// None: no offered rates.
    fn fields(&self) -> &'static [Field] {
        &[]
    }

    fn run(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        let mut records = Vec::new();
        for variant in &plan.variants {
            match variant.as_str() {
                FencedReader::NAME => run::<FencedReader>(plan, pmu, progress, &mut records)?,
                AcquireDataReader::NAME => {
                    run::<AcquireDataReader>(plan, pmu, progress, &mut records)?
                }
                other => {
                    return Err(BenchError::Unavailable(format!(
                        "unknown seqlock reader {other}"
                    )))
                }
            }
        }
        Ok(records)
    }
}

/// Runs the cells of reader `R`, one per thread count.
fn run<R: SeqlockReader>(
    plan: &Plan,
    pmu: bool,
    progress: Progress<'_>,
    records: &mut Vec<Record>,
) -> Result<(), BenchError> {
    for &threads in &plan.threads {
        announce(progress, plan, R::NAME, threads);
        let locks: Vec<CachePadded<SeqLock<R>>> = (0..threads)
            .map(|_| CachePadded::new(SeqLock::new([1; WORDS])))
            .collect();
        let out = run_cell(
            &cell_spec(plan, threads, pmu),
            |t| {
                let lock = &locks[match plan.contention {
                    Contention::Shared => 0,
                    Contention::Private => t,
                }];
                move || {
                    // No writer: every attempt stands; black_box keeps the
                    // snapshot's loads.
                    std::hint::black_box(lock.try_read());
                }
            },
            || {},
            |_| Ok(()),
        )
        .map_err(|reason| cell_failed(plan, R::NAME, reason))?;
        records.push(cell_record(plan, R::NAME, threads, &out));
    }
    Ok(())
}
