//! `bench lock`: each lock of `atomlab-prims` around a critical section that
//! increments a counter it protects and does `--cs-work N` units of dependent
//! arithmetic (a multiply-add through `black_box`, a few cycles each).
//!
//! Two modes:
//! - timed (default): every thread locks and unlocks for `--duration`; one
//!   lock for all (`--contention shared`) or one per thread (`private`, the
//!   uncontended cost);
//! - fixed work (`--increments N --tasks T`, the shape of the Crystal mutex
//!   thread: 1,000,000 increments split over 20 tasks): the T tasks are taken
//!   from a queue by `--threads` workers (default: one per CPU), each task
//!   doing N/T increments, and the record is the time to finish them all.
//!
//! After every run the protected counter must equal the number of critical
//! sections executed; a lock that loses an update is reported, not timed.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

use atomlab_core::{Metric, Record, Source, Unit};
use atomlab_prims::lock::RawLock;
use atomlab_prims::{with_lock, CachePadded};

use super::{announce, cell_record, cell_spec, sanity, Progress};
use crate::affinity;
use crate::clock;
use crate::harness::{run_cell, SpinBarrier};
use crate::plan::{BenchError, Contention, Plan};

/// A lock and the data it protects.
pub struct Guarded<L> {
    lock: L,
    value: UnsafeCell<u64>,
}

// SAFETY: `value` is only accessed while `lock` is held, or by the
// coordinator while no worker runs (between the harness's barriers).
unsafe impl<L: RawLock> Sync for Guarded<L> {}

impl<L: RawLock> Guarded<L> {
    fn new() -> Self {
        Guarded {
            lock: L::new(),
            value: UnsafeCell::new(0),
        }
    }

    /// One critical section: lock, increment, `work` units, unlock.
    #[inline(always)]
    fn section(&self, work: u32) {
        let _g = self.lock.lock();
        // SAFETY: the lock is held.
        unsafe { *self.value.get() += 1 };
        cs_work(work);
    }

    fn take(&self) -> u64 {
        let _g = self.lock.lock();
        // SAFETY: the lock is held.
        unsafe { std::mem::replace(&mut *self.value.get(), 0) }
    }
}

/// `n` units of dependent arithmetic the compiler cannot remove.
#[inline(always)]
pub fn cs_work(n: u32) {
    let mut x = 1u64;
    for _ in 0..n {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    std::hint::black_box(x);
}

/// Runs the lock cells of `plan`.
pub fn run(plan: &Plan, pmu: bool, progress: Progress<'_>) -> Result<Vec<Record>, BenchError> {
    let mut records = Vec::new();
    for variant in &plan.variants {
        if let Some((increments, tasks)) = plan.fixed_work {
            let workers = if plan.threads_explicit {
                plan.threads.clone()
            } else {
                vec![affinity::allowed_cpus().len()]
            };
            for w in workers {
                progress(&format!(
                    "bench lock {variant}: {increments} increments in {tasks} tasks on {w} workers ({} runs)",
                    plan.runs
                ));
                let rec = with_lock!(variant.as_str(), L => fixed_work::<L>(plan, variant, increments, tasks, w))
                    .ok_or_else(|| BenchError::Unavailable(format!("unknown lock {variant}")))??;
                records.push(rec);
            }
        } else {
            for &threads in &plan.threads {
                announce(progress, plan, variant, threads);
                let mut rec = with_lock!(variant.as_str(), L => timed::<L>(plan, variant, threads, pmu))
                    .ok_or_else(|| BenchError::Unavailable(format!("unknown lock {variant}")))??;
                rec.param("cs_work", plan.cs_work);
                records.push(rec);
            }
        }
    }
    Ok(records)
}

fn timed<L: RawLock>(
    plan: &Plan,
    variant: &str,
    threads: usize,
    pmu: bool,
) -> Result<Record, BenchError> {
    let n = match plan.contention {
        Contention::Shared => 1,
        Contention::Private => threads,
    };
    let locks: Vec<CachePadded<Guarded<L>>> =
        (0..n).map(|_| CachePadded::new(Guarded::new())).collect();
    let work = plan.cs_work;
    let out = run_cell(
        &cell_spec(plan, threads, pmu),
        |t| {
            let g = &locks[if n == 1 { 0 } else { t }];
            move || g.section(work)
        },
        || locks.iter().for_each(|l| {
            l.take();
        }),
        |ops| {
            let held: u64 = locks.iter().map(|l| l.take()).sum();
            if held == ops {
                Ok(())
            } else {
                Err(format!(
                    "lost updates: {ops} critical sections ran but the protected counter reads {held}"
                ))
            }
        },
    )
    .map_err(|reason| sanity(plan, variant, reason))?;
    Ok(cell_record(plan, variant, threads, &out))
}

fn fixed_work<L: RawLock>(
    plan: &Plan,
    variant: &str,
    increments: u64,
    tasks: u64,
    workers: usize,
) -> Result<Record, BenchError> {
    let guarded = Guarded::<L>::new();
    let cpus = affinity::allowed_cpus();
    let mut seconds = Vec::new();
    let per_task = increments / tasks;
    let remainder = increments % tasks;
    for run in 0..=plan.runs {
        let next_task = AtomicU64::new(0);
        let barrier = SpinBarrier::new(workers + 1);
        let (t0, t1) = std::thread::scope(|s| {
            for w in 0..workers {
                let (guarded, next_task, barrier, cpus) = (&guarded, &next_task, &barrier, &cpus);
                s.spawn(move || {
                    if plan.pin {
                        let _ = affinity::pin_current_thread(cpus[w % cpus.len()]);
                    }
                    barrier.wait();
                    loop {
                        // ORDERING: Relaxed: the task index only partitions work;
                        // the data is protected by the lock under test.
                        let task = next_task.fetch_add(1, Ordering::Relaxed);
                        if task >= tasks {
                            break;
                        }
                        let n = per_task + u64::from(task < remainder);
                        for _ in 0..n {
                            guarded.section(plan.cs_work);
                        }
                    }
                    barrier.wait();
                });
            }
            barrier.wait();
            let t0 = clock::monotonic_ns();
            barrier.wait();
            (t0, clock::monotonic_ns())
        });
        let held = guarded.take();
        if held != increments {
            return Err(sanity(
                plan,
                variant,
                format!("lost updates: expected {increments}, the protected counter reads {held}"),
            ));
        }
        if run > 0 {
            seconds.push((t1 - t0) as f64 / 1e9);
        }
    }
    let mut r = Record::new("bench", "lock", variant);
    r.param("mode", "fixed-work")
        .param("increments", increments)
        .param("tasks", tasks)
        .param("workers", workers)
        .param("threads", workers)
        .param("cs_work", plan.cs_work)
        .param("runs", plan.runs)
        .param("pin", plan.pin);
    let ops: Vec<f64> = seconds.iter().map(|s| increments as f64 / s).collect();
    let ns: Vec<f64> = seconds
        .iter()
        .map(|s| s * 1e9 / increments as f64)
        .collect();
    r.metrics.push(Metric::new(
        "seconds",
        Unit::Seconds,
        Source::ClockGettime,
        seconds,
    ));
    r.metrics.push(Metric::new(
        "ops_per_sec",
        Unit::OpsPerSecond,
        Source::ClockGettime,
        ops,
    ));
    r.metrics.push(Metric::new(
        "ns_per_op",
        Unit::NanosPerOp,
        Source::ClockGettime,
        ns,
    ));
    r.notes.push(format!(
        "all {increments} increments of every run were found in the protected counter"
    ));
    Ok(r)
}
