//! loom model tests of the primitives `atomlab stress` tortures: every
//! correct variant passes under every interleaving loom explores (up to the
//! preemption bound), and every `broken-…` variant is shown to fail, so the
//! stress verdicts do not rest on this CPU alone.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p atomlab-prims --test loom_stress --release`
//!
//! How loom sees each bug: a missing release or acquire leaves two accesses
//! to a `loom::cell::UnsafeCell` unordered ("Causality violation"); a lock
//! that lets two threads in makes their cell accesses concurrent (the same
//! report); a lost decrement shows as an object freed zero times. loom does
//! not model load buffering, but the SPSC ring's slots are cells under loom,
//! so 004's acquire-fence dequeue shows as the race it is in C11.
#![cfg(loom)]

use atomlab_prims::broken::*;
use atomlab_prims::lock::RawLock;
use atomlab_prims::seqlock::{
    AcquireDataReader, BrokenReaderNoFence, FencedReader, SeqLock, SeqlockReader, WORDS,
};
use atomlab_prims::spsc::*;
use atomlab_prims::two_thread::*;
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;

// ---- locks ----------------------------------------------------------------

struct Guarded<L> {
    lock: L,
    value: UnsafeCell<u32>,
}

// SAFETY: `value` is only accessed with `lock` held; loom checks it.
unsafe impl<L: Sync> Sync for Guarded<L> {}

fn lock_two_increments<L: RawLock + 'static>() {
    loom::model(|| {
        let s = Arc::new(Guarded {
            lock: L::new(),
            value: UnsafeCell::new(0),
        });
        let t = {
            let s = s.clone();
            loom::thread::spawn(move || {
                let _g = s.lock.lock();
                // SAFETY: the lock is held (loom checks that it excludes).
                s.value.with_mut(|v| unsafe { *v += 1 });
            })
        };
        {
            let _g = s.lock.lock();
            // SAFETY: as above.
            s.value.with_mut(|v| unsafe { *v += 1 });
        }
        t.join().unwrap();
        // SAFETY: both writers have joined.
        assert_eq!(s.value.with(|v| unsafe { *v }), 2, "lost update");
    });
}

#[test]
#[should_panic(expected = "Causality violation")]
fn broken_relaxed_unlock_is_caught() {
    lock_two_increments::<BrokenRelaxedUnlockLock>();
}

#[test]
#[should_panic(expected = "Causality violation")]
fn broken_tas_not_atomic_is_caught() {
    lock_two_increments::<BrokenTasNotAtomicLock>();
}

#[test]
#[should_panic(expected = "Causality violation")]
fn broken_relaxed_acquire_is_caught() {
    lock_two_increments::<BrokenRelaxedAcquireLock>();
}

// ---- two-thread locks -----------------------------------------------------

struct Pair<L> {
    lock: L,
    value: UnsafeCell<u32>,
}

// SAFETY: `value` is only accessed between lock and unlock; loom checks it.
unsafe impl<L: Sync> Sync for Pair<L> {}

fn pair_increments<L: TwoThreadLock + 'static>() {
    loom::model(|| {
        let s = Arc::new(Pair {
            lock: L::new(),
            value: UnsafeCell::new(0),
        });
        let section = |s: &Pair<L>, me: usize| {
            s.lock.lock(me);
            // SAFETY: the lock is held by `me` (loom checks that it excludes).
            s.value.with_mut(|v| unsafe { *v += 1 });
            s.lock.unlock(me);
        };
        let t = {
            let s = s.clone();
            loom::thread::spawn(move || section(&s, 1))
        };
        section(&s, 0);
        t.join().unwrap();
        // SAFETY: both threads have finished.
        assert_eq!(s.value.with(|v| unsafe { *v }), 2, "lost update");
    });
}

#[test]
fn peterson_fence_excludes() {
    pair_increments::<PetersonFence>();
}

#[test]
fn dekker_fence_excludes() {
    pair_increments::<DekkerFence>();
}

#[test]
#[should_panic(expected = "Causality violation")]
fn broken_peterson_nofence_is_caught() {
    pair_increments::<BrokenPetersonNoFence>();
}

#[test]
#[should_panic(expected = "Causality violation")]
fn broken_dekker_nofence_is_caught() {
    pair_increments::<BrokenDekkerNoFence>();
}

// ---- SPSC ring ------------------------------------------------------------

/// Three items through a two-slot ring, so the producer overwrites a slot
/// the consumer has read; the consumer checks order and checksums.
fn spsc_three_items<V: SpscBarriers>() {
    loom::model(|| {
        let ring = Arc::new(SpscRing::<V>::new(2));
        let producer = {
            let ring = ring.clone();
            loom::thread::spawn(move || {
                for i in 1..=3u64 {
                    while !ring.try_push((i, i * 31)) {
                        loom::thread::yield_now();
                    }
                }
            })
        };
        for i in 1..=3u64 {
            let item = loop {
                if let Some(item) = ring.try_pop() {
                    break item;
                }
                loom::thread::yield_now();
            };
            assert_eq!(item, (i, i * 31), "item out of order or torn");
        }
        producer.join().unwrap();
    });
}

#[test]
fn spsc_c11_acq_rel() {
    spsc_three_items::<C11AcqRel>();
}

#[test]
fn spsc_fences() {
    spsc_three_items::<Fences>();
}

#[test]
fn spsc_seq_cst() {
    spsc_three_items::<SeqCst>();
}

#[test]
#[should_panic(expected = "Causality violation")]
fn spsc_broken_relaxed_publish_is_caught() {
    spsc_three_items::<BrokenRelaxedPublish>();
}

#[test]
#[should_panic(expected = "Causality violation")]
fn spsc_broken_acquire_fence_dequeue_is_caught() {
    spsc_three_items::<BrokenAcquireFenceDequeue>();
}

// ---- seqlock --------------------------------------------------------------

/// One write racing one read: an accepted snapshot is never torn.
fn seqlock_never_torn<R: SeqlockReader>() {
    loom::model(|| {
        let s = Arc::new(SeqLock::<R>::new([0; WORDS]));
        let w = {
            let s = s.clone();
            loom::thread::spawn(move || s.write([1; WORDS]))
        };
        if let Some(v) = s.try_read() {
            assert!(v.iter().all(|&x| x == v[0]), "torn read accepted: {v:?}");
        }
        w.join().unwrap();
    });
}

#[test]
fn seqlock_fenced_reader() {
    seqlock_never_torn::<FencedReader>();
}

#[test]
fn seqlock_acquire_data_reader() {
    seqlock_never_torn::<AcquireDataReader>();
}

#[test]
#[should_panic(expected = "torn read accepted")]
fn seqlock_broken_reader_is_caught() {
    seqlock_never_torn::<BrokenReaderNoFence>();
}

// ---- broken refcounts -----------------------------------------------------

trait Count: Send + Sync + 'static {
    fn with(n: i32) -> Self;
    fn put(&self) -> bool;
}

impl Count for BrokenRacyRefcount {
    fn with(n: i32) -> Self {
        BrokenRacyRefcount::new(n)
    }
    fn put(&self) -> bool {
        self.dec_and_test()
    }
}

impl Count for BrokenRelaxedRefcount {
    fn with(n: i32) -> Self {
        BrokenRelaxedRefcount::new(n)
    }
    fn put(&self) -> bool {
        self.dec_and_test()
    }
}

struct Object<C> {
    refs: C,
    data: UnsafeCell<u32>,
    frees: AtomicUsize,
}

// SAFETY: holders read `data`; the single freeing thread writes it; loom
// checks that ordering.
unsafe impl<C: Sync> Sync for Object<C> {}

/// Two holders use the object and drop their references; the last frees it.
fn two_holders<C: Count>() {
    loom::model(|| {
        let obj = Arc::new(Object {
            refs: C::with(2),
            data: UnsafeCell::new(0),
            frees: AtomicUsize::new(0),
        });
        let release = |o: &Object<C>| {
            // SAFETY: a use while holding a reference (a read).
            o.data
                .with(|d| unsafe { assert_ne!(*d, u32::MAX, "use after free") });
            if o.refs.put() {
                // SAFETY: the last reference; loom reports it if unordered.
                o.data.with_mut(|d| unsafe { *d = u32::MAX });
                // ORDERING: a test counter, read after join.
                o.frees.fetch_add(1, Ordering::Relaxed);
            }
        };
        let t = {
            let o = obj.clone();
            loom::thread::spawn(move || release(&o))
        };
        release(&obj);
        t.join().unwrap();
        assert_eq!(obj.frees.load(Ordering::Relaxed), 1, "freed exactly once");
    });
}

#[test]
#[should_panic(expected = "freed exactly once")]
fn broken_racy_refcount_is_caught() {
    two_holders::<BrokenRacyRefcount>();
}

#[test]
#[should_panic(expected = "Causality violation")]
fn broken_relaxed_refcount_is_caught() {
    two_holders::<BrokenRelaxedRefcount>();
}
