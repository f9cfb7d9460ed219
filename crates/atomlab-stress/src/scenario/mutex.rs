//! `stress mutex`: the 002 shape. T tasks (default 20) share N increments
//! (default 1,000,000) and are taken from a queue by W workers (default one
//! per CPU). Every increment is a critical section that
//! - counts itself in an occupancy counter that must read exactly one
//!   (mutual exclusion),
//! - increments a counter with a relaxed load and a separate relaxed store,
//!   which only the lock makes atomic (lost updates: expected minus final),
//! - appends a tagged item to a shared ring buffer and reads it back
//!   (buffer corruption), and the buffer's length must end at N.
//!
//! Users' locks (plugins, `include/atomlab.h`) run the same test beside the
//! built-in ones through [`atomlab_plugin::WithPlugins`], judged as
//! correct variants.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use atomlab_plugin::abi::LockFns;
use atomlab_plugin::{LockInstance, LockVariant};
use atomlab_prims::broken::BROKEN_LOCK_NAMES;
use atomlab_prims::lock::{RawLock, LOCK_NAMES};
use atomlab_prims::{with_broken_lock, with_lock, CachePadded};

use super::plugged::{cannot_make, Pluggable};
use super::{common_notes, run_threads};
use crate::detect::{Detector, Kind};
use crate::outcome::VariantRun;
use crate::plan::{Plan, Scenario, StressError};
use crate::rng::{jitter, XorShift};

/// Slots of the shared buffer (a power of two): small, so that overlapping
/// sections write the same slots.
const BUF: usize = 1024;

/// The data a lock protects, with its detectors.
pub(crate) struct Protected {
    occupancy: CachePadded<AtomicU32>,
    counter: CachePadded<AtomicU64>,
    len: CachePadded<AtomicU64>,
    buf: Box<[AtomicU64]>,
}

impl Protected {
    pub(crate) fn new() -> Self {
        Protected {
            occupancy: CachePadded::new(AtomicU32::new(0)),
            counter: CachePadded::new(AtomicU64::new(0)),
            len: CachePadded::new(AtomicU64::new(0)),
            buf: (0..BUF).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// One critical section by thread `who`, its `op`-th; call with the lock held.
    #[inline(always)]
    pub(crate) fn section(
        &self,
        det: &Detector,
        who: usize,
        op: u64,
        rng: &mut XorShift,
        jit: bool,
    ) {
        // ORDERING: Relaxed: an RMW always reads the latest value, so an
        // overlap of two sections is seen whatever the lock orders.
        let inside = self.occupancy.fetch_add(1, Ordering::Relaxed);
        if inside != 0 {
            det.report(Kind::MutualExclusion, 1, || {
                format!("thread {who} entered critical section {op} while {inside} other thread(s) were inside")
            });
        }
        // ORDERING: Relaxed on purpose: the load and the store are separate,
        // and only the lock under test orders them with other sections.
        let c = self.counter.load(Ordering::Relaxed);
        jitter(rng, jit);
        // ORDERING: as above.
        self.counter.store(c + 1, Ordering::Relaxed);
        // ORDERING: Relaxed, ordered by the lock under test, as the counter.
        let n = self.len.load(Ordering::Relaxed);
        let tag = ((who as u64) << 40 | (op & ((1 << 40) - 1))) + 1;
        let slot = &self.buf[n as usize & (BUF - 1)];
        // ORDERING: as above.
        slot.store(tag, Ordering::Relaxed);
        // ORDERING: as above.
        self.len.store(n + 1, Ordering::Relaxed);
        // ORDERING: as above; within the section nobody else may write it.
        let back = slot.load(Ordering::Relaxed);
        if back != tag {
            det.report(Kind::BufferCorruption, 1, || {
                format!(
                    "thread {who} appended item {n} in section {op}; the slot then held thread {}'s item",
                    (back.wrapping_sub(1)) >> 40
                )
            });
        }
        // ORDERING: Relaxed, as the fetch_add above.
        self.occupancy.fetch_sub(1, Ordering::Relaxed);
    }

    /// After the threads have joined: the counter and the buffer's length
    /// must both equal the number of sections run.
    pub(crate) fn finish(&self, det: &Detector, expected: u64) {
        // ORDERING: after join, which synchronises with every worker.
        let count = self.counter.load(Ordering::Relaxed);
        if count != expected {
            det.report(Kind::LostUpdate, expected.abs_diff(count), || {
                format!(
                    "expected {expected} increments, the protected counter reads {count} ({} lost)",
                    expected as i128 - count as i128
                )
            });
        }
        // ORDERING: as above.
        let len = self.len.load(Ordering::Relaxed);
        if len != expected {
            det.report(Kind::BufferCorruption, expected.abs_diff(len), || {
                format!("expected {expected} appends, the buffer's length reads {len}")
            });
        }
    }
}

/// The scenario.
#[derive(Clone, Copy)]
pub(crate) struct Mutex;

impl Scenario for Mutex {
    fn name(&self) -> &'static str {
        "mutex"
    }

    fn plugs(&self) -> Option<&'static dyn crate::plan::Plugs> {
        Some(&crate::scenario::plugged::Door(Mutex))
    }

    fn thread_roles(&self) -> &'static str {
        "workers"
    }

    /// The locks of `bench lock`, then the broken ones.
    fn variants(&self) -> Vec<&'static str> {
        LOCK_NAMES
            .iter()
            .chain(&BROKEN_LOCK_NAMES)
            .copied()
            .collect()
    }

    fn ops_unit(&self) -> &'static str {
        "critical sections"
    }

    /// 002: 1,000,000 increments.
    fn default_ops(&self) -> u64 {
        1_000_000
    }

    fn takes_tasks(&self) -> bool {
        true
    }

    /// Runs `variant` (a lock of `bench lock`, or a broken one).
    fn run(&self, plan: &Plan, variant: &'static str) -> Result<Option<VariantRun>, StressError> {
        with_lock!(variant, L => run_lock(plan, variant, L::new()))
            .or_else(|| with_broken_lock!(variant, L => run_lock(plan, variant, L::new())))
            .transpose()
    }
}

/// Users' locks beside the built-in ones ([`atomlab_plugin::WithPlugins`]).
impl Pluggable for Mutex {
    type Fns = LockFns;

    fn run_plugin(
        &self,
        plan: &Plan,
        variant: &'static str,
        p: &LockVariant,
    ) -> Result<VariantRun, StressError> {
        match p.make() {
            Ok(lock) => run_lock(plan, variant, Plugged(lock)),
            Err(why) => Ok(cannot_make(plan, variant, why)),
        }
    }
}

/// What the test needs of a lock: run a closure with it held. The
/// built-in locks ([`RawLock`]) and a plugin's ([`Plugged`]).
pub(crate) trait Hold: Send + Sync {
    /// Runs `f` with the lock held.
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R;

    /// Runs `f` with the lock held for the `k`-th section of a task: as
    /// [`Hold::hold`], except where the lock has a second way in (a
    /// plugin's `try_lock`), which then takes every other section.
    #[inline(always)]
    fn hold_section<R>(&self, k: u64, f: impl FnOnce() -> R) -> R {
        let _ = k;
        self.hold(f)
    }

    /// What [`Hold::hold_section`] mixes in, for the notes.
    fn mixed(&self) -> Option<&'static str> {
        None
    }
}

impl<L: RawLock> Hold for L {
    #[inline(always)]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        let _g = self.lock();
        f()
    }
}

/// A plugin's lock (a type of this crate, so that its [`Hold`] cannot
/// clash with a [`RawLock`]'s).
pub(crate) struct Plugged(LockInstance);

impl Hold for Plugged {
    #[inline(always)]
    fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        self.0.with(f)
    }

    /// Odd sections through `try_lock`, retried until it takes the lock:
    /// a `try_lock` that says yes without taking it lets two threads into
    /// the section, which the detectors see.
    #[inline(always)]
    fn hold_section<R>(&self, k: u64, f: impl FnOnce() -> R) -> R {
        if k & 1 == 0 || !self.0.has_try_lock() {
            return self.0.with(f);
        }
        let mut f = Some(f);
        loop {
            if let Some(Some(r)) = self.0.try_with(|| f.take().map(|f| f())) {
                return r;
            }
            std::hint::spin_loop();
        }
    }

    fn mixed(&self) -> Option<&'static str> {
        self.0
            .has_try_lock()
            .then_some("every other critical section is entered with try_lock (retried until it succeeds), the others with lock")
    }
}

struct Shared<L> {
    lock: L,
    data: Protected,
}

fn run_lock<L: Hold>(
    plan: &Plan,
    variant: &'static str,
    lock: L,
) -> Result<VariantRun, StressError> {
    let s = Shared {
        lock,
        data: Protected::new(),
    };
    let det = Detector::new();
    let next_task = AtomicU64::new(0);
    let (tasks, ops) = (plan.tasks, plan.ops);
    let (per_task, remainder) = (ops / tasks, ops % tasks);
    let (done, seconds) = run_threads(plan, variant, plan.threads, &det, |w| {
        let mut rng = XorShift::new(plan.seed, w as u64);
        let mut done = 0u64;
        'tasks: loop {
            // ORDERING: Relaxed: the task index only partitions the work.
            let task = next_task.fetch_add(1, Ordering::Relaxed);
            if task >= tasks {
                break;
            }
            let n = per_task + u64::from(task < remainder);
            for k in 0..n {
                if det.stopping() {
                    break 'tasks;
                }
                s.lock.hold_section(k, || {
                    s.data
                        .section(&det, w, task * (per_task + 1) + k, &mut rng, plan.jitter)
                });
                jitter(&mut rng, plan.jitter);
                done += 1;
            }
        }
        done
    })?;
    let done: u64 = done.iter().sum();
    s.data.finish(&det, done);
    let mut notes = common_notes(plan);
    notes.push(format!(
        "{ops} increments in {tasks} tasks on {} workers",
        plan.threads
    ));
    if let Some(how) = s.lock.mixed() {
        notes.push(how.to_string());
    }
    Ok(VariantRun::judge(plan, variant, done, seconds, &det, notes))
}
