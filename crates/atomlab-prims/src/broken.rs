//! Deliberately broken locks and reference counts, so that `atomlab stress`
//! can show its detectors catch real bugs (and loom can show the same bugs
//! without depending on this CPU).
//!
//! Each one is a correct primitive with one thing removed, and says exactly
//! what that breaks:
//! - [`BrokenRelaxedUnlockLock`]: the Crystal runtime's Mutex before
//!   crystal-lang/crystal#13050 (the 002 case): unlock by a relaxed store
//!   ("lazy set") with no barrier. x86-TSO makes every store a release, so
//!   only a weakly ordered CPU (Arm, RISC-V) or the compiler can break it.
//! - [`BrokenTasNotAtomicLock`]: test-and-set written as a plain load and a
//!   separate store, so two threads can both see "free" and both take it.
//!   Broken on every CPU.
//! - [`BrokenRelaxedAcquireLock`]: an atomic swap to take the lock, but
//!   Relaxed, so the critical section is not ordered after the previous
//!   holder's (x86's locked swap is a full barrier and hides it).
//! - [`BrokenRacyRefcount`]: a decrement as a load and a store: decrements
//!   are lost, so an object is freed twice or never.
//! - [`BrokenRelaxedRefcount`]: `fetch_sub(Relaxed)` and no acquire fence on
//!   reaching zero, so the freeing thread may not see other holders' uses
//!   (the reason std's `Arc::drop` has its `Acquire` fence).

use crate::lock::{test_and_set, RawLock};
use crate::sync::{spin_hint, AtomicBool, AtomicI32, Ordering};

/// Names of the broken locks, in the order tables list them.
pub const BROKEN_LOCK_NAMES: [&str; 3] = [
    BrokenRelaxedUnlockLock::NAME,
    BrokenTasNotAtomicLock::NAME,
    BrokenRelaxedAcquireLock::NAME,
];

/// The 002 bug: taken with an acquiring swap, released by a relaxed store.
#[derive(Debug)]
pub struct BrokenRelaxedUnlockLock {
    locked: AtomicBool,
}

/// Guard of a [`BrokenRelaxedUnlockLock`].
pub struct BrokenRelaxedUnlockGuard<'a>(&'a BrokenRelaxedUnlockLock);

impl RawLock for BrokenRelaxedUnlockLock {
    const NAME: &'static str = "broken-relaxed-unlock";
    type Guard<'a> = BrokenRelaxedUnlockGuard<'a>;

    fn new() -> Self {
        BrokenRelaxedUnlockLock {
            locked: AtomicBool::new(false),
        }
    }

    #[inline]
    fn lock(&self) -> BrokenRelaxedUnlockGuard<'_> {
        // ORDERING: SeqCst as the Crystal runtime's swap; the bug is in unlock.
        while test_and_set(&self.locked, Ordering::SeqCst) {
            spin_hint();
        }
        BrokenRelaxedUnlockGuard(self)
    }
}

impl Drop for BrokenRelaxedUnlockGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // ORDERING: BROKEN on purpose (crystal#13050's "lazy set"): a Relaxed
        // store releases nothing, so the critical section's stores may become
        // visible after the lock looks free, and the next holder can read
        // stale data and lose updates (Arm, RISC-V; not x86-TSO).
        self.0.locked.store(false, Ordering::Relaxed);
    }
}

/// Test-and-set without the atomic RMW: a load, then a store.
#[derive(Debug)]
pub struct BrokenTasNotAtomicLock {
    locked: AtomicBool,
}

/// Guard of a [`BrokenTasNotAtomicLock`].
pub struct BrokenTasNotAtomicGuard<'a>(&'a BrokenTasNotAtomicLock);

impl RawLock for BrokenTasNotAtomicLock {
    const NAME: &'static str = "broken-tas-not-atomic";
    type Guard<'a> = BrokenTasNotAtomicGuard<'a>;

    fn new() -> Self {
        BrokenTasNotAtomicLock {
            locked: AtomicBool::new(false),
        }
    }

    #[inline]
    fn lock(&self) -> BrokenTasNotAtomicGuard<'_> {
        // ORDERING: Acquire pairs with unlock's Release, as a correct lock's
        // would. BROKEN on purpose: the test and the set are two accesses, so
        // another thread can take the lock between them and both hold it.
        while self.locked.load(Ordering::Acquire) {
            spin_hint();
        }
        // ORDERING: Relaxed: the store only claims the flag (and not atomically).
        self.locked.store(true, Ordering::Relaxed);
        BrokenTasNotAtomicGuard(self)
    }
}

impl Drop for BrokenTasNotAtomicGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // ORDERING: Release publishes the critical section (correct part).
        self.0.locked.store(false, Ordering::Release);
    }
}

/// An atomic swap takes the lock, but with Relaxed ordering.
#[derive(Debug)]
pub struct BrokenRelaxedAcquireLock {
    locked: AtomicBool,
}

/// Guard of a [`BrokenRelaxedAcquireLock`].
pub struct BrokenRelaxedAcquireGuard<'a>(&'a BrokenRelaxedAcquireLock);

impl RawLock for BrokenRelaxedAcquireLock {
    const NAME: &'static str = "broken-relaxed-acquire";
    type Guard<'a> = BrokenRelaxedAcquireGuard<'a>;

    fn new() -> Self {
        BrokenRelaxedAcquireLock {
            locked: AtomicBool::new(false),
        }
    }

    #[inline]
    fn lock(&self) -> BrokenRelaxedAcquireGuard<'_> {
        // ORDERING: BROKEN on purpose: a Relaxed swap is atomic (exclusion
        // holds) but acquires nothing, so our critical section's loads may be
        // satisfied before the previous holder's stores are visible (Arm,
        // RISC-V; x86's `xchg` is a full barrier and hides it).
        while test_and_set(&self.locked, Ordering::Relaxed) {
            spin_hint();
        }
        BrokenRelaxedAcquireGuard(self)
    }
}

impl Drop for BrokenRelaxedAcquireGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // ORDERING: Release, as a correct lock; the bug is in lock.
        self.0.locked.store(false, Ordering::Release);
    }
}

/// Calls `$body` with `$L` bound to the broken lock named `$name`;
/// `Some(result)`, or `None` for another name (see `with_lock!`).
#[macro_export]
macro_rules! with_broken_lock {
    ($name:expr, $L:ident => $body:expr) => {{
        use $crate::broken::*;
        match $name {
            "broken-relaxed-unlock" => {
                type $L = BrokenRelaxedUnlockLock;
                Some($body)
            }
            "broken-tas-not-atomic" => {
                type $L = BrokenTasNotAtomicLock;
                Some($body)
            }
            "broken-relaxed-acquire" => {
                type $L = BrokenRelaxedAcquireLock;
                Some($body)
            }
            _ => None,
        }
    }};
}

/// A reference count whose decrement is a load and a store.
#[derive(Debug)]
pub struct BrokenRacyRefcount {
    count: AtomicI32,
}

impl BrokenRacyRefcount {
    /// A count starting at `n`.
    pub fn new(n: i32) -> Self {
        BrokenRacyRefcount {
            count: AtomicI32::new(n),
        }
    }

    /// Takes a reference (a correct atomic increment).
    #[inline(always)]
    pub fn inc(&self) {
        // ORDERING: the caller holds a reference; nothing to publish (Arc::clone).
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Drops a reference; true when it was the last one.
    #[inline(always)]
    pub fn dec_and_test(&self) -> bool {
        // ORDERING: Acquire/Release as a correct count would order the object's
        // uses. BROKEN on purpose: the read and the write are two accesses, so
        // two holders can both read 2 and both write 1 (a lost decrement: the
        // object leaks), or another holder's increment is overwritten (freed
        // while still referenced).
        let old = self.count.load(Ordering::Acquire);
        // ORDERING: Release, see above; the non-atomicity is the bug.
        self.count.store(old - 1, Ordering::Release);
        old == 1
    }

    /// The current count (a snapshot).
    pub fn get(&self) -> i32 {
        // ORDERING: a snapshot for reporting; orders nothing.
        self.count.load(Ordering::Relaxed)
    }
}

/// A reference count whose last decrement does not acquire.
#[derive(Debug)]
pub struct BrokenRelaxedRefcount {
    count: AtomicI32,
}

impl BrokenRelaxedRefcount {
    /// A count starting at `n`.
    pub fn new(n: i32) -> Self {
        BrokenRelaxedRefcount {
            count: AtomicI32::new(n),
        }
    }

    /// Takes a reference.
    #[inline(always)]
    pub fn inc(&self) {
        // ORDERING: the caller holds a reference; nothing to publish (Arc::clone).
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Drops a reference; true when it was the last one.
    #[inline(always)]
    pub fn dec_and_test(&self) -> bool {
        // ORDERING: BROKEN on purpose: Relaxed, and no Acquire fence on
        // reaching zero, so the other holders' uses of the object do not
        // happen before the free that follows (a use-after-free on Arm or
        // RISC-V; x86's `lock xadd` is a full barrier and hides it).
        self.count.fetch_sub(1, Ordering::Relaxed) == 1
    }

    /// The current count (a snapshot).
    pub fn get(&self) -> i32 {
        // ORDERING: a snapshot for reporting; orders nothing.
        self.count.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn broken_locks_still_lock_when_alone() {
        for name in BROKEN_LOCK_NAMES {
            let ok = with_broken_lock!(name, L => {
                let l = L::new();
                drop(l.lock());
                drop(l.lock());
                true
            });
            assert_eq!(ok, Some(true), "{name}");
        }
        assert!(with_broken_lock!("tas", L => L::NAME).is_none());
    }

    #[test]
    fn broken_refcounts_count_when_alone() {
        let r = BrokenRacyRefcount::new(1);
        r.inc();
        assert!(!r.dec_and_test());
        assert!(r.dec_and_test());
        let r = BrokenRelaxedRefcount::new(2);
        assert!(!r.dec_and_test());
        assert!(r.dec_and_test());
        assert_eq!(r.get(), 0);
    }
}
