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
//!
//! Users' locks (plugins, `include/atomlab.h`) run beside the built-in
//! ones through [`super::plugged::WithPlugins`]: the same cells, the same
//! checks, the same records, with the plugin file and its SHA-256 in the
//! parameters.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

use atomlab_core::{FlagKind, Metric, Record, Source, Unit};
use atomlab_plugin::abi::LockFns;
use atomlab_plugin::{LockInstance, LockVariant};
use atomlab_prims::lock::{RawLock, LOCK_NAMES};
use atomlab_prims::{with_lock, CachePadded};

use super::plugged::Pluggable;
use super::{announce, cell_failed, cell_record, cell_spec, Progress};
use crate::harness::{run_cell, run_fixed_work};
use crate::options::{Contention, Field, FixedWork};
use crate::plan::{BenchError, Plan, Scenario};
use atomlab_thread as affinity;

/// What a critical section needs of a lock: run a closure with it held.
/// The built-in locks ([`RawLock`], monomorphised as before) and a
/// plugin's ([`Plugged`], through its function pointers).
pub trait Hold: Send + Sync {
    /// Runs `f` with the lock held.
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R;
}

impl<L: RawLock> Hold for L {
    #[inline(always)]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        let _g = self.lock();
        f()
    }
}

/// A plugin's lock (a type of this crate, so that it cannot be a
/// [`RawLock`] and its [`Hold`] cannot clash with theirs).
pub struct Plugged(LockInstance);

impl Hold for Plugged {
    #[inline(always)]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        self.0.with(f)
    }
}

/// A plugin's lock entered through its `try_lock`, retried until it
/// succeeds: the row `NAME:try_lock` beside `NAME`, so that a `try_lock`
/// is measured and its lost updates caught like `lock`'s.
pub struct TryPlugged(LockInstance);

impl Hold for TryPlugged {
    #[inline(always)]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        let mut f = Some(f);
        loop {
            if let Some(Some(r)) = self.0.try_with(|| f.take().map(|f| f())) {
                return r;
            }
            std::hint::spin_loop();
        }
    }
}

/// A lock and the data it protects.
pub struct Guarded<L> {
    lock: L,
    value: UnsafeCell<u64>,
}

// SAFETY: `value` is only accessed while `lock` is held, or by the
// coordinator while no worker runs (between the harness's barriers).
unsafe impl<L: Hold> Sync for Guarded<L> {}

impl<L: Hold> Guarded<L> {
    fn new(lock: L) -> Self {
        Guarded {
            lock,
            value: UnsafeCell::new(0),
        }
    }

    /// One critical section: lock, increment, `work` units, unlock.
    #[inline(always)]
    fn section(&self, work: u32) {
        self.lock.hold(|| {
            // SAFETY: the lock is held.
            unsafe { *self.value.get() += 1 };
            cs_work(work);
        })
    }

    fn take(&self) -> u64 {
        // SAFETY: the lock is held.
        self.lock
            .hold(|| unsafe { std::mem::replace(&mut *self.value.get(), 0) })
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

/// The scenario.
#[derive(Clone, Copy)]
pub struct Lock;

impl Scenario for Lock {
    fn name(&self) -> &'static str {
        "lock"
    }

    fn plugs(&self) -> Option<&'static dyn crate::plan::Plugs> {
        Some(&crate::scenario::plugged::Door(Lock))
    }

    fn fields(&self) -> &'static [Field] {
        &[
            Field::Rates,
            Field::CsWork,
            Field::Increments,
            Field::Tasks,
            Field::ViaAbi,
        ]
    }

    fn variants(&self) -> Vec<&'static str> {
        LOCK_NAMES.to_vec()
    }

    /// One shared lock serialises the operations: its wall time per
    /// operation cannot beat one RMW; private locks, per thread.
    fn implausible(&self, plan: &Plan, serial_ns: f64, ns_per_op: f64) -> Option<String> {
        if plan.contention == Contention::Shared {
            crate::plausible::serial_rmw_implausible(serial_ns)
        } else {
            crate::plausible::thread_rmw_implausible(ns_per_op)
        }
    }

    fn run(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        run(plan, pmu, progress, &[])
    }
}

/// Users' locks beside the built-in ones ([`super::plugged::WithPlugins`]).
impl Pluggable for Lock {
    type Fns = LockFns;

    fn run_with(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
        plugins: &[LockVariant],
    ) -> Result<Vec<Record>, BenchError> {
        run(plan, pmu, progress, plugins)
    }

    /// `abi-noop`, one thread, beside a timed run: a lock and unlock
    /// that do nothing, through the ABI's function pointers, so that a
    /// plugin's ns/op is read beside what its two calls cost here.
    fn abi_baseline(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        super::plugged::abi_noop_row(plan, progress, "lock and unlock that do nothing", |one| {
            let noop = atomlab_plugin::lock::abi_noop()
                .map_err(|why| cell_failed(one, atomlab_plugin::lock::ABI_NOOP, why))?;
            let mut rec = timed(one, &noop.name, 1, pmu, || make(one, &noop))?;
            rec.param("cs_work", one.cs_work);
            Ok(rec)
        })
    }

    fn cell_params(&self, cell: &Plan, r: &mut Record) {
        match cell.threads[..] {
            [t] => r.param("threads", t),
            _ => {
                let threads: Vec<String> = cell.threads.iter().map(|t| t.to_string()).collect();
                r.param("threads", threads.join(","))
            }
        };
        r.param("contention", cell.contention.name())
            .param("cs_work", cell.cs_work);
        if let Some(FixedWork { increments, tasks }) = cell.fixed_work {
            r.param("mode", "fixed-work")
                .param("increments", increments)
                .param("tasks", tasks);
        }
        if let Some(rate) = cell.rates.first().copied().flatten() {
            r.param("mode", "fixed-rate").param("rate_offered", rate);
        }
    }
}

/// A new lock of a plugin, or the cell's error.
fn make(plan: &Plan, p: &LockVariant) -> Result<Plugged, BenchError> {
    p.make()
        .map(Plugged)
        .map_err(|why| cell_failed(plan, &p.name, why))
}

/// Runs the lock cells of `plan`; a variant named by one of `plugins` is
/// that plugin's.
fn run(
    plan: &Plan,
    pmu: bool,
    progress: Progress<'_>,
    plugins: &[LockVariant],
) -> Result<Vec<Record>, BenchError> {
    let mut records = Vec::new();
    for variant in &plan.variants {
        // `--via-abi`: a built-in lock called through the ABI's function
        // pointers, a row `NAME@abi` that compares like with a plugin's.
        let via = match plugins.iter().any(|p| p.name == *variant) {
            false if plan.via_abi => Some(
                with_lock!(variant.as_str(), L => via_abi::<L>(variant))
                    .ok_or_else(|| BenchError::Unavailable(format!("unknown lock {variant}")))?
                    .map_err(|why| cell_failed(plan, variant, why))?,
            ),
            _ => None,
        };
        if let Some(FixedWork { increments, tasks }) = plan.fixed_work {
            let workers = if plan.threads_explicit {
                plan.threads.clone()
            } else {
                vec![affinity::allowed_cpus().len()]
            };
            for w in workers {
                progress(atomlab_core::progress::Event::Step(&format!(
                    "bench lock {variant}: {increments} increments in {tasks} tasks on {w} workers ({} runs)",
                    plan.runs
                )));
                let rec = match plugins.iter().find(|p| p.name == *variant) {
                    Some(p) => {
                        let mut rec = fixed_work_with(plan, variant, increments, tasks, w, make(plan, p)?, || {})?;
                        p.tag(&mut rec);
                        rec
                    }
                    None => match &via {
                        Some(v) => {
                            let mut rec = fixed_work_with(plan, &v.name, increments, tasks, w, make(plan, v)?, || {})?;
                            abi_entry(&mut rec, variant);
                            rec
                        }
                        None => with_lock!(variant.as_str(), L => fixed_work::<L>(plan, variant, increments, tasks, w))
                            .ok_or_else(|| BenchError::Unavailable(format!("unknown lock {variant}")))??,
                    },
                };
                records.push(rec);
            }
        } else {
            for &threads in &plan.threads {
                announce(progress, plan, variant, threads);
                let mut rec = match plugins.iter().find(|p| p.name == *variant) {
                    Some(p) => {
                        let mut rec = timed(plan, variant, threads, pmu, || make(plan, p))?;
                        p.tag(&mut rec);
                        if p.has_try_lock() {
                            rec.param("entry", "lock");
                            let name = format!("{variant}:try_lock");
                            let mut tried = match timed(plan, &name, threads, pmu, || {
                                make(plan, p).map(|Plugged(l)| TryPlugged(l))
                            }) {
                                Ok(r) => r,
                                // A try_lock that lets updates be lost is
                                // this row's FAIL, not the end of the run.
                                Err(BenchError::Sanity { reason, .. }) => {
                                    let mut r = Record::new("bench", "lock", &name);
                                    r.param("threads", threads)
                                        .param("contention", plan.contention.name());
                                    r.verdict = Some(atomlab_core::Verdict::Fail);
                                    r.flag(atomlab_core::FlagKind::Incorrect, None, reason);
                                    r
                                }
                                Err(e) => return Err(e),
                            };
                            p.tag(&mut tried);
                            tried.param("entry", "try_lock").param("cs_work", plan.cs_work);
                            tried.notes.push(format!(
                                "{name}: every critical section entered with the plugin's try_lock, retried until it succeeds"
                            ));
                            rec.param("cs_work", plan.cs_work);
                            records.push(rec);
                            rec = tried;
                        }
                        rec
                    }
                    None => match &via {
                        Some(v) => {
                            announce(progress, plan, &v.name, threads);
                            let mut rec = timed(plan, &v.name, threads, pmu, || make(plan, v))?;
                            abi_entry(&mut rec, variant);
                            rec
                        }
                        None => with_lock!(variant.as_str(), L => timed(plan, variant, threads, pmu, || Ok(L::new())))
                            .ok_or_else(|| BenchError::Unavailable(format!("unknown lock {variant}")))??,
                    },
                };
                rec.param("cs_work", plan.cs_work);
                records.push(rec);
            }
        }
    }
    Ok(records)
}

/// The parameters and note of a built-in lock's `NAME@abi` row.
fn abi_entry(rec: &mut Record, variant: &str) {
    rec.param("entry", "abi").param("built_in", variant);
    rec.notes.push(format!(
        "{variant}@abi: atomlab's {variant} lock called through the plugin ABI's function pointers (new_, lock, unlock, free_), as a plugin's lock is called: compare it with plugins, and with {variant} to see what the two indirect calls cost here"
    ));
}

/// A built-in lock behind the plugin ABI: the object holds the lock and
/// its current holder's guard, so that `lock` and `unlock` are two C
/// calls as a plugin's are (include/atomlab.h's `struct atomlab_lock`).
struct AbiLock<L: RawLock + 'static> {
    lock: L,
    /// The holder's guard: written after `lock` returns and taken before
    /// it is released, so only the holder ever touches it.
    held: UnsafeCell<Option<L::Guard<'static>>>,
}

extern "C" fn abi_new<L: RawLock + 'static>() -> *mut std::ffi::c_void {
    // Padded: the lock word alone on its cache line, as a plugin's.
    let boxed = Box::new(CachePadded::new(AbiLock::<L> {
        lock: L::new(),
        held: UnsafeCell::new(None),
    }));
    Box::into_raw(boxed).cast()
}

/// The object `abi_new::<L>` made.
///
/// # Safety
/// `p` came from `abi_new::<L>` and is not yet freed.
unsafe fn abi_object<'a, L: RawLock + 'static>(p: *mut std::ffi::c_void) -> &'a AbiLock<L> {
    // SAFETY: the caller's contract.
    unsafe { &*p.cast::<CachePadded<AbiLock<L>>>() }
}

extern "C" fn abi_lock<L: RawLock + 'static>(p: *mut std::ffi::c_void) {
    // SAFETY: the ABI's contract: `p` came from `new_` and is not freed
    // while threads lock it.
    let a = unsafe { abi_object::<L>(p) };
    let guard = a.lock.lock();
    // SAFETY: the guard borrows `a.lock`, which lives in its box until
    // `free_`; the guard is dropped by `unlock`, before that.
    let lasting: L::Guard<'static> = unsafe { std::mem::transmute_copy(&guard) };
    std::mem::forget(guard);
    // SAFETY: this thread holds the lock, and only the holder touches
    // `held`.
    unsafe { *a.held.get() = Some(lasting) };
}

extern "C" fn abi_unlock<L: RawLock + 'static>(p: *mut std::ffi::c_void) {
    // SAFETY: as in `abi_lock`.
    let a = unsafe { abi_object::<L>(p) };
    // SAFETY: the caller holds the lock (the ABI's contract), so the
    // guard in `held` is its own; dropping it releases the lock.
    drop(unsafe { (*a.held.get()).take() });
}

extern "C" fn abi_free<L: RawLock + 'static>(p: *mut std::ffi::c_void) {
    // SAFETY: made by `abi_new::<L>`, freed once, unlocked.
    drop(unsafe { Box::from_raw(p.cast::<CachePadded<AbiLock<L>>>()) });
}

/// The built-in lock `L` as a plugin variant named `NAME@abi`.
fn via_abi<L: RawLock + 'static>(variant: &str) -> Result<LockVariant, String> {
    atomlab_plugin::lock::built_in(
        &format!("{variant}@abi"),
        LockFns {
            new: Some(abi_new::<L>),
            lock: Some(abi_lock::<L>),
            unlock: Some(abi_unlock::<L>),
            try_lock: None,
            free: Some(abi_free::<L>),
        },
    )
}

/// A timed cell; `new_lock` makes each lock.
fn timed<L: Hold>(
    plan: &Plan,
    variant: &str,
    threads: usize,
    pmu: bool,
    new_lock: impl Fn() -> Result<L, BenchError>,
) -> Result<Record, BenchError> {
    let n = match plan.contention {
        Contention::Shared => 1,
        Contention::Private => threads,
    };
    let locks: Vec<CachePadded<Guarded<L>>> = (0..n)
        .map(|_| Ok(CachePadded::new(Guarded::new(new_lock()?))))
        .collect::<Result<_, BenchError>>()?;
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
    .map_err(|reason| cell_failed(plan, variant, reason))?;
    Ok(cell_record(plan, variant, threads, &out))
}

fn fixed_work<L: RawLock>(
    plan: &Plan,
    variant: &str,
    increments: u64,
    tasks: u64,
    workers: usize,
) -> Result<Record, BenchError> {
    fixed_work_with(plan, variant, increments, tasks, workers, L::new(), || {})
}

/// The fixed-work cell on `lock`; `coordinator` runs on the calling thread
/// while the workers work (tests make it sleep, as a descheduled thread
/// would).
pub(crate) fn fixed_work_with<L: Hold>(
    plan: &Plan,
    variant: &str,
    increments: u64,
    tasks: u64,
    workers: usize,
    lock: L,
    coordinator: impl Fn(),
) -> Result<Record, BenchError> {
    let guarded = Guarded::new(lock);
    let per_task = increments / tasks;
    let remainder = increments % tasks;
    let mut seconds = Vec::new();
    let mut parallelism = Vec::new();
    let mut excluded = Vec::new();
    for run in 0..=plan.runs {
        let next_task = AtomicU64::new(0);
        // Each worker times itself from its release to its last increment:
        // the run is the first start to the last end (see `FixedRun`).
        let timed = run_fixed_work(
            workers,
            plan.pin,
            |_| loop {
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
            },
            &coordinator,
        )
        .map_err(|e| cell_failed(plan, variant, e))?;
        let held = guarded.take();
        if held != increments {
            return Err(cell_failed(
                plan,
                variant,
                format!("lost updates: expected {increments}, the protected counter reads {held}"),
            ));
        }
        if run == 0 {
            continue; // warm-up
        }
        let wall = timed.wall_ns();
        match crate::plausible::serial_rmw_implausible(wall as f64 / increments as f64) {
            Some(why) => excluded.push(format!("run {run}: {why}")),
            None => {
                seconds.push(wall as f64 / 1e9);
                parallelism.push(timed.parallelism());
            }
        }
    }
    let mut r = Record::new("bench", "lock", variant);
    r.param("mode", "fixed-work")
        .param("increments", increments)
        .param("tasks", tasks)
        .param("workers", workers)
        .param("threads", workers)
        .param("contention", "shared")
        .param("cs_work", plan.cs_work)
        .param("runs", plan.runs)
        .param("pin", plan.pin);
    if !excluded.is_empty() {
        let kind = if seconds.is_empty() {
            FlagKind::Implausible
        } else {
            FlagKind::RunsExcluded
        };
        r.flag(
            kind,
            Some("seconds"),
            format!(
                "{} of {} runs left out of every figure: {}",
                excluded.len(),
                plan.runs,
                excluded.join("; ")
            ),
        );
    }
    // ops/s: increments over the wall time; ns/op: the wall time per
    // increment (the lock serialises them, so this is the time between two
    // critical sections' starts, whatever the number of workers).
    let ops: Vec<f64> = seconds.iter().map(|s| increments as f64 / s).collect();
    let ns: Vec<f64> = seconds
        .iter()
        .map(|s| s * 1e9 / increments as f64)
        .collect();
    super::flag_overlap(&mut r, plan, workers, &parallelism, &[]);
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
    // No off-CPU check here (unlike the timed cells): in a KVM guest a
    // waiter of a backoff lock (tas, ttas: PAUSE bursts, then yield)
    // loses its vCPU to the hypervisor on a quiet machine (41-68 % of a
    // CPU measured, ticket and mcs 100 %), so its share says nothing of
    // other work; the workers' overlap is checked by flag_overlap above.
    r.metrics.push(Metric::new(
        "parallelism",
        Unit::Ratio,
        Source::Rusage,
        parallelism,
    ));
    r.notes.push(format!(
        "all {increments} increments of every run were found in the protected counter"
    ));
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Request;
    use atomlab_prims::lock::TtasLock;

    /// Issue 9: `bench lock --increments 1000000 --tasks 20` printed 0.0007 s
    /// (0.75 ns per locked increment) when the coordinating thread was
    /// descheduled right after releasing the workers, because it started the
    /// clock then. With a coordinator that sleeps through the work, the old
    /// code measured about nothing; the run must still take at least the
    /// machine's serial RMW time per increment.
    #[test]
    fn a_late_coordinator_does_not_shorten_the_run() {
        let plan = Plan::from_request(
            &Request {
                scenario: "lock".into(),
                increments: Some(200_000),
                tasks: Some(20),
                runs: Some(2),
                ..Default::default()
            },
            2,
        )
        .unwrap();
        let r = fixed_work_with(&plan, "ttas", 200_000, 20, 2, TtasLock::new(), || {
            std::thread::sleep(std::time::Duration::from_millis(100))
        })
        .unwrap();
        let s = r.metric("seconds").unwrap();
        assert_eq!(s.samples.len(), 2, "{:?}", r.flags);
        let floor = crate::plausible::rmw_floor_ns() * 0.5 * 200_000.0 / 1e9;
        for &sec in &s.samples {
            assert!(sec >= floor, "{sec} s for 200,000 locked increments");
        }
        // ns/op and ops/s describe the same runs.
        let ns = r.metric("ns_per_op").unwrap().samples.clone();
        let ops = r.metric("ops_per_sec").unwrap().samples.clone();
        for (n, o) in ns.iter().zip(&ops) {
            assert!((n * o / 1e9 - 1.0).abs() < 1e-9);
        }
    }
}
