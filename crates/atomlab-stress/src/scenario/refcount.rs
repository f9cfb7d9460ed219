//! `stress refcount`: objects shared by every thread through a reference
//! count. Each object starts with one reference per thread; each thread
//! takes and drops extra references while holding its own (using the
//! object each time), then drops its own; whoever drops the last one
//! releases the object. Detectors, with generation tags and poisoning
//! rather than real frees (no undefined behaviour even when broken):
//! - released twice (a release counter per object),
//! - used after release (the releaser poisons the object and clears its
//!   generation tag; every use checks both),
//! - released while a reference is still held (an extra reference's drop
//!   returned "last"),
//! - never released although every reference was dropped (a lost decrement).
//!
//! All threads meet at each object before hammering it, so that the
//! operations on one object really overlap. Objects come in batches of 1024
//! (a barrier between batches), so memory
//! stays small for any `--ops`. Then, for saturating counts, a saturation
//! storm: every thread increments a count near `i32::MAX` and decrements it
//! again; it must end pinned at `REFCOUNT_SATURATED` and never reach zero.
//!
//! Users' counts (plugins, `include/atomlab.h`'s `refcount` kind) run the
//! same test through [`atomlab_plugin::WithPlugins`]: each object is the
//! plugin's `new_` (one reference) and `get`s up to one per thread; its
//! `free_` is called once, when the batch is dropped after every thread is
//! done with it, so a count that says "last" too early is reported (early
//! release, use after release), never a crash on freed memory.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use atomlab_plugin::abi::RefcountFns;
use atomlab_plugin::{RefcountInstance, RefcountVariant};
use atomlab_prims::broken::{BrokenRacyRefcount, BrokenRelaxedRefcount};
use atomlab_prims::refcount::{RawRefcount, SaturatingRefcount, REFCOUNT_SATURATED};

use super::plugged::{cannot_make, Pluggable};
use super::{common_notes, run_threads, Patience};
use crate::detect::{Detector, Kind};
use crate::outcome::VariantRun;
use crate::plan::{Plan, Scenario, StressError, Threads};
use crate::rng::{jitter, XorShift};

/// The variants, correct first.
pub(crate) const REFCOUNT_NAMES: [&str; 5] = [
    "saturating",
    "saturating-cmpxchg",
    "raw",
    "broken-racy-dec",
    "broken-relaxed-dec",
];

/// Extra references each thread takes and drops per object.
const ROUNDS: u64 = 16;
/// Objects per batch.
const BATCH: u64 = 1024;
/// Increments (then decrements) per thread in the saturation storm.
const STORM: i32 = 20_000;

/// A reference count as the scenario drives it.
trait Count: Send + Sync {
    const SATURATES: bool;
    /// Why there is no saturation storm, for a count that does not saturate.
    const NO_STORM: &'static str = "no saturation storm: this count does not saturate by design (a raw atomic_t wraps; see `bench refcount` for the cost of checking)";
    fn get_ref(&self);
    fn put(&self) -> bool;
    /// The count, where it can be read.
    fn value(&self) -> Option<i32>;
}

impl Count for SaturatingRefcount {
    const SATURATES: bool = true;
    fn get_ref(&self) {
        self.inc()
    }
    fn put(&self) -> bool {
        self.dec_and_test()
    }
    fn value(&self) -> Option<i32> {
        Some(self.get())
    }
}

/// The v4.11 compare-exchange increment.
struct Cmpxchg(SaturatingRefcount);

impl Count for Cmpxchg {
    const SATURATES: bool = true;
    fn get_ref(&self) {
        self.0.inc_cmpxchg()
    }
    fn put(&self) -> bool {
        self.0.dec_and_test()
    }
    fn value(&self) -> Option<i32> {
        Some(self.0.get())
    }
}

/// A plugin's count (include/atomlab.h's `refcount` kind). Its object is
/// freed with the plugin's `free_` when the batch it belongs to is dropped,
/// after every thread is done with it, whatever its puts said.
struct PluginCount(RefcountInstance);

impl PluginCount {
    /// An object of `p` with `n` references: `new_`'s one, then `get`s.
    fn with(p: &RefcountVariant, n: i32) -> Result<PluginCount, String> {
        let c = PluginCount(p.make()?);
        for _ in 1..n {
            c.0.get();
        }
        Ok(c)
    }
}

impl Count for PluginCount {
    const SATURATES: bool = false;
    const NO_STORM: &'static str =
        "no saturation storm: the plugin ABI does not say whether a count saturates, and cannot read one";
    fn get_ref(&self) {
        self.0.get()
    }
    fn put(&self) -> bool {
        self.0.put()
    }
    fn value(&self) -> Option<i32> {
        None
    }
}

macro_rules! plain_count {
    ($t:ty) => {
        impl Count for $t {
            const SATURATES: bool = false;
            fn get_ref(&self) {
                self.inc()
            }
            fn put(&self) -> bool {
                self.dec_and_test()
            }
            fn value(&self) -> Option<i32> {
                Some(self.get())
            }
        }
    };
}
plain_count!(RawRefcount);
plain_count!(BrokenRacyRefcount);
plain_count!(BrokenRelaxedRefcount);

/// The scenario.
#[derive(Clone, Copy)]
pub(crate) struct Refcount;

impl Scenario for Refcount {
    fn name(&self) -> &'static str {
        "refcount"
    }

    fn plugs(&self) -> Option<&'static dyn crate::plan::Plugs> {
        Some(&crate::scenario::plugged::Door(Refcount))
    }

    fn thread_roles(&self) -> &'static str {
        "holders"
    }

    fn variants(&self) -> Vec<&'static str> {
        REFCOUNT_NAMES.to_vec()
    }

    fn ops_unit(&self) -> &'static str {
        "reference operations"
    }

    fn default_ops(&self) -> u64 {
        4_000_000
    }

    /// One holder works, but the default makes the counts contended.
    fn threads(&self) -> Threads {
        Threads::AtLeast {
            min: 1,
            why: "",
            default_min: 2,
        }
    }

    /// Runs a refcount variant.
    fn run(&self, plan: &Plan, variant: &'static str) -> Result<Option<VariantRun>, StressError> {
        // The built-in counts are made without fail.
        fn ok<C>(f: fn(i32) -> C) -> impl Fn(i32) -> Result<C, String> + Sync {
            move |n| Ok(f(n))
        }
        let o = match variant {
            "saturating" => run_count(plan, variant, ok(SaturatingRefcount::new)),
            "saturating-cmpxchg" => {
                run_count(plan, variant, ok(|n| Cmpxchg(SaturatingRefcount::new(n))))
            }
            "raw" => run_count(plan, variant, ok(RawRefcount::new)),
            "broken-racy-dec" => run_count(plan, variant, ok(BrokenRacyRefcount::new)),
            "broken-relaxed-dec" => run_count(plan, variant, ok(BrokenRelaxedRefcount::new)),
            _ => return Ok(None),
        };
        o.map(Some)
    }
}

/// Users' counts beside the built-in ones ([`atomlab_plugin::WithPlugins`]).
impl Pluggable for Refcount {
    type Fns = RefcountFns;

    fn run_plugin(
        &self,
        plan: &Plan,
        variant: &'static str,
        p: &RefcountVariant,
    ) -> Result<VariantRun, StressError> {
        run_count(plan, variant, |n| PluginCount::with(p, n))
    }
}

struct Object<C> {
    refs: C,
    tag: AtomicU64,
    poisoned: AtomicBool,
    releases: AtomicU32,
    /// Threads that have reached this object: each waits for all, so that
    /// every object is hammered by all threads at once.
    arrived: AtomicU32,
}

impl<C: Count> Object<C> {
    /// A use of the object by a reference holder.
    #[inline(always)]
    fn touch(&self, det: &Detector, who: usize, tag: u64) {
        // ORDERING: Relaxed: a correct count orders every use before the
        // release (Release decrements, Acquire on zero); these loads only
        // look for the poison a premature release leaves.
        let poisoned = self.poisoned.load(Ordering::Relaxed);
        // ORDERING: as above.
        let now = self.tag.load(Ordering::Relaxed);
        if poisoned || now != tag {
            det.report(Kind::UseAfterRelease, 1, || {
                format!("thread {who} used object {tag} after its release (poisoned {poisoned}, tag now {now})")
            });
        }
    }

    #[inline(always)]
    fn release(&self, det: &Detector, who: usize, tag: u64) {
        // ORDERING: Relaxed: an RMW sees every earlier release.
        let before = self.releases.fetch_add(1, Ordering::Relaxed);
        if before != 0 {
            det.report(Kind::DoubleRelease, 1, || {
                format!("thread {who} released object {tag}, already released {before} time(s)")
            });
        }
        // ORDERING: Relaxed: poisoning, read by `touch` (see there).
        self.tag.store(0, Ordering::Relaxed);
        // ORDERING: as above.
        self.poisoned.store(true, Ordering::Relaxed);
    }
}

/// Runs the test on counts made by `make(n)` (a count of `n` references);
/// the first error `make` gave is the variant's FAIL, threads that cannot
/// all start the error.
fn run_count<C: Count>(
    plan: &Plan,
    variant: &'static str,
    make: impl Fn(i32) -> Result<C, String> + Sync,
) -> Result<VariantRun, StressError> {
    let det = Detector::new();
    let threads = plan.threads;
    let per_object = threads as u64 * (2 * ROUNDS + 1);
    let objects = plan.ops.div_ceil(per_object);
    let batches = objects.div_ceil(BATCH);
    let current: Mutex<Arc<Vec<Object<C>>>> = Mutex::new(Arc::new(Vec::new()));
    let barrier = std::sync::Barrier::new(threads + 1);
    let make_batch = |b: u64| -> Result<Arc<Vec<Object<C>>>, String> {
        let n = BATCH.min(objects - b * BATCH);
        Ok(Arc::new(
            (0..n)
                .map(|i| {
                    Ok(Object {
                        refs: make(threads as i32)?,
                        tag: AtomicU64::new(b * BATCH + i + 1),
                        poisoned: AtomicBool::new(false),
                        releases: AtomicU32::new(0),
                        arrived: AtomicU32::new(0),
                    })
                })
                .collect::<Result<_, String>>()?,
        ))
    };
    let mut failed = None;
    let mut seconds = 0.0;
    let mut objects_done = 0u64;
    std::thread::scope(|s| -> Result<(), StressError> {
        let (current, barrier, det) = (&current, &barrier, &det);
        let workers = super::start_group(s, plan, variant, threads, move |t| {
            super::place(plan, t);
            let mut rng = XorShift::new(plan.seed, t as u64);
            let cpu0 = atomlab_thread::thread_cpu_ns();
            for _ in 0..batches {
                barrier.wait();
                let batch = current.lock().unwrap_or_else(|e| e.into_inner()).clone();
                if batch.is_empty() {
                    // The time limit: the coordinator sends no more.
                    barrier.wait();
                    break;
                }
                for o in batch.iter() {
                    // ORDERING: Relaxed: the tag is immutable until release.
                    let tag = o.tag.load(Ordering::Relaxed);
                    let tag = if tag == 0 { u64::MAX } else { tag };
                    o.touch(det, t, tag);
                    // ORDERING: Relaxed: a rendezvous for timing only;
                    // the count under test orders the object.
                    o.arrived.fetch_add(1, Ordering::Relaxed);
                    let mut p = Patience::new();
                    // ORDERING: as above.
                    while o.arrived.load(Ordering::Relaxed) < threads as u32 {
                        p.wait();
                    }
                    for _ in 0..ROUNDS {
                        o.refs.get_ref();
                        o.touch(det, t, tag);
                        jitter(&mut rng, plan.jitter);
                        if o.refs.put() {
                            det.report(Kind::EarlyRelease, 1, || {
                                        format!("thread {t} dropped an extra reference to object {tag} and was told it was the last, while its own reference was still held")
                                    });
                            o.release(det, t, tag);
                        }
                    }
                    if o.refs.put() {
                        o.release(det, t, tag);
                    }
                }
                barrier.wait();
            }
            det.add_cpu_ns(atomlab_thread::thread_cpu_ns().saturating_sub(cpu0));
        })?;
        det.restart();
        let t0 = std::time::Instant::now();
        for b in 0..batches {
            // Past the time limit, the remaining batches are empty.
            let batch = if t0.elapsed().as_secs_f64() >= plan.time_limit {
                det.request_stop();
                Arc::new(Vec::new())
            } else {
                // A count that cannot be made ends the run like the time
                // limit, and the run is that error.
                make_batch(b).unwrap_or_else(|why| {
                    failed = Some(why);
                    Arc::new(Vec::new())
                })
            };
            objects_done += batch.len() as u64;
            let last = batch.is_empty();
            *current.lock().unwrap_or_else(|e| e.into_inner()) = batch;
            barrier.wait();
            barrier.wait();
            if last {
                break;
            }
            let batch = current.lock().unwrap_or_else(|e| e.into_inner()).clone();
            for (i, o) in batch.iter().enumerate() {
                // ORDERING: after the barrier, which orders every worker's
                // release before this check.
                if o.releases.load(Ordering::Relaxed) == 0 {
                    let tag = b * BATCH + i as u64 + 1;
                    let left = o.refs.value().map_or_else(
                        || "unknown: a plugin's count cannot be read".to_string(),
                        |v| v.to_string(),
                    );
                    det.report(Kind::NeverReleased, 1, || {
                        format!("object {tag} was never released although all {threads} threads dropped every reference (count left at {left})")
                    });
                }
            }
        }
        seconds = t0.elapsed().as_secs_f64();
        for w in workers {
            if let Err(e) = w.join() {
                std::panic::resume_unwind(e);
            }
        }
        Ok(())
    })?;
    let mut ops = objects_done * per_object;
    let mut notes = common_notes(plan);
    notes.push(format!(
        "{objects_done} objects, each shared by {threads} threads taking and dropping {ROUNDS} extra references"
    ));
    if C::SATURATES && !det.stopping() {
        use atomlab_prims::refcount::{warned, Saturation};
        if !warned(Saturation::AddOverflow) || !warned(Saturation::Underflow) {
            // The primitive warns once per process, as the kernel's
            // WARN_ONCE does; say before it speaks that here it is expected.
            eprintln!(
                "  saturation storm: the 'refcount_t: saturated' and 'underflow' warnings below are expected: they are the count saturating instead of wrapping, which this test checks"
            );
        }
        let count = match make(i32::MAX - 1000) {
            Ok(c) => c,
            Err(why) => return Ok(cannot_make(plan, variant, why)),
        };
        let (storm_ops, storm_seconds) = storm(plan, variant, &det, count)?;
        ops += storm_ops;
        seconds += storm_seconds;
        notes.push(format!(
            "saturation storm: {threads} threads x {STORM} increments then decrements from i32::MAX - 1000; the count must stay pinned at REFCOUNT_SATURATED"
        ));
    } else if det.stopping() {
        notes.push("no saturation storm: the run reached its time limit first".into());
    } else {
        notes.push(C::NO_STORM.into());
    }
    if let Some(why) = failed {
        return Ok(cannot_make(plan, variant, why));
    }
    Ok(VariantRun::judge(plan, variant, ops, seconds, &det, notes))
}

/// Hammers a count near overflow; it must saturate, never wrap or reach 0.
fn storm<C: Count>(
    plan: &Plan,
    variant: &'static str,
    det: &Detector,
    count: C,
) -> Result<(u64, f64), StressError> {
    let (_, seconds) = run_threads(plan, variant, plan.threads, det, |t| {
        for _ in 0..STORM {
            count.get_ref();
        }
        for _ in 0..STORM {
            if count.put() {
                let v = count.value().unwrap_or_default();
                det.report(Kind::SaturationBroken, 1, || {
                    format!("thread {t}'s decrement of a count pushed past i32::MAX reported the last reference (count now {v})")
                });
            }
        }
    })?;
    let end = count.value().unwrap_or(REFCOUNT_SATURATED);
    let slack = i64::from(STORM) * 2 * plan.threads as i64;
    if (i64::from(end) - i64::from(REFCOUNT_SATURATED)).abs() > slack {
        det.report(Kind::SaturationBroken, 1, || {
            format!("after the storm the count reads {end}, not pinned near REFCOUNT_SATURATED ({REFCOUNT_SATURATED}): it wrapped")
        });
    }
    Ok((2 * STORM as u64 * plan.threads as u64, seconds))
}
