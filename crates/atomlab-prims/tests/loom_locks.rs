//! loom model tests: every correct lock of atomlab-prims excludes and orders
//! its critical sections under every interleaving (and every weak-memory
//! outcome loom models) up to the preemption bound.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p atomlab-prims --test loom_locks --release`
#![cfg(loom)]

use atomlab_prims::lock::*;
use loom::cell::UnsafeCell;
use loom::sync::Arc;

struct Shared<L> {
    lock: L,
    // loom's UnsafeCell checks that every access is ordered by happens-before:
    // a lock whose release does not synchronise with the next acquire is
    // reported as a data race here, not only as a lost update.
    value: UnsafeCell<u32>,
}

// SAFETY: `value` is only accessed with `lock` held.
unsafe impl<L: Sync> Sync for Shared<L> {}

fn two_threads_increment<L: RawLock + 'static>() {
    loom::model(|| {
        let s = Arc::new(Shared {
            lock: L::new(),
            value: UnsafeCell::new(0),
        });
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                loom::thread::spawn(move || {
                    let _g = s.lock.lock();
                    // SAFETY: the lock is held.
                    s.value.with_mut(|v| unsafe { *v += 1 });
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let _g = s.lock.lock();
        // SAFETY: the lock is held and both writers have joined.
        let v = s.value.with(|v| unsafe { *v });
        assert_eq!(v, 2);
    });
}

#[test]
fn tas() {
    two_threads_increment::<TasLock>();
}

#[test]
fn ttas() {
    two_threads_increment::<TtasLock>();
}

#[test]
fn ticket() {
    two_threads_increment::<TicketLock>();
}

#[test]
fn mcs() {
    two_threads_increment::<McsLock>();
}

#[test]
fn runtime_store_release() {
    two_threads_increment::<RuntimeStoreReleaseLock>();
}

#[test]
fn runtime_fence_relaxed() {
    two_threads_increment::<RuntimeFenceRelaxedLock>();
}

/// A lock released by a relaxed store (the Crystal runtime's original bug):
/// loom must report the critical sections as unordered. This keeps the tests
/// above honest: the checker does find a missing release.
struct RelaxedUnlockLock(loom::sync::atomic::AtomicBool);

struct RelaxedGuard<'a>(&'a RelaxedUnlockLock);

impl RawLock for RelaxedUnlockLock {
    const NAME: &'static str = "broken-relaxed-unlock";
    type Guard<'a> = RelaxedGuard<'a>;
    fn new() -> Self {
        RelaxedUnlockLock(loom::sync::atomic::AtomicBool::new(false))
    }
    fn lock(&self) -> RelaxedGuard<'_> {
        use std::sync::atomic::Ordering;
        // ORDERING: Acquire, as a correct lock; the bug is in the unlock.
        while self
            .0
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            loom::thread::yield_now();
        }
        RelaxedGuard(self)
    }
}

impl Drop for RelaxedGuard<'_> {
    fn drop(&mut self) {
        // ORDERING: BROKEN on purpose: Relaxed publishes nothing, so the next
        // holder's critical section is not ordered after ours.
        self.0 .0.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
#[should_panic(expected = "Causality violation")]
fn loom_catches_a_relaxed_unlock() {
    two_threads_increment::<RelaxedUnlockLock>();
}
