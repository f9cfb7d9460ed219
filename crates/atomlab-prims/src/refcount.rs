//! Reference counts: a raw atomic count and a checked, saturating one with the
//! semantics of the Linux kernel's `refcount_t`.
//!
//! [`SaturatingRefcount`] follows `include/linux/refcount.h` and
//! `lib/refcount.c` as rewritten by Will Deacon in v5.5: the count is an `int`;
//! an increment is a plain `fetch_add` followed by a check of the old value;
//! any result at or past `INT_MAX`, an increment from 0, or a decrement below
//! 0 pins the count at `REFCOUNT_SATURATED` (`INT_MIN / 2`) and warns once, so
//! a bug leaks the object instead of freeing it while it is in use.
//! [`SaturatingRefcount::inc_cmpxchg`] is the earlier compare-exchange form
//! (v4.11, 2017) that the LKML thread measured (~31 cycles called, ~23
//! inlined, against ~15 for `lock incl`).
//!
//! Each operation exists inlined (the methods, `#[inline(always)]`) and
//! called (the [`called`] functions, `#[inline(never)]`), because the call
//! itself is part of what that thread measured.

use std::sync::atomic::AtomicBool as StdAtomicBool;

use crate::sync::{fence, AtomicI32, Ordering};

/// The value a saturated count is pinned to, as in Linux (`INT_MIN / 2`):
/// far from both 0 and overflow, so racing increments and decrements cannot
/// bring it back to 0.
pub const REFCOUNT_SATURATED: i32 = i32::MIN / 2;

/// The refcount misuses Linux warns about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saturation {
    /// An increment overflowed: "saturated; leaking memory".
    AddOverflow,
    /// An increment found 0: "addition on 0; use-after-free".
    AddOnZero,
    /// A decrement went below 0: "underflow; use-after-free".
    Underflow,
    /// `dec` (not `dec_and_test`) reached 0: "decrement hit 0; leaking memory".
    DecrementHitZero,
}

impl Saturation {
    const ALL: [Saturation; 4] = [
        Saturation::AddOverflow,
        Saturation::AddOnZero,
        Saturation::Underflow,
        Saturation::DecrementHitZero,
    ];

    /// Linux's warning text.
    pub fn message(self) -> &'static str {
        match self {
            Saturation::AddOverflow => "refcount_t: saturated; leaking memory.",
            Saturation::AddOnZero => "refcount_t: addition on 0; use-after-free.",
            Saturation::Underflow => "refcount_t: underflow; use-after-free.",
            Saturation::DecrementHitZero => "refcount_t: decrement hit 0; leaking memory.",
        }
    }

    fn index(self) -> usize {
        Saturation::ALL.iter().position(|s| *s == self).unwrap_or(0)
    }
}

// Diagnostics, not synchronisation: plain std atomics even under loom.
static WARNED: [StdAtomicBool; 4] = [
    StdAtomicBool::new(false),
    StdAtomicBool::new(false),
    StdAtomicBool::new(false),
    StdAtomicBool::new(false),
];

/// Whether the warning for `kind` has fired in this process.
pub fn warned(kind: Saturation) -> bool {
    // ORDERING: a diagnostic flag read after the fact; no data depends on it.
    WARNED[kind.index()].load(Ordering::Relaxed)
}

#[cold]
#[inline(never)]
fn warn_saturate(count: &AtomicI32, kind: Saturation) {
    // ORDERING: as Linux's refcount_set(): the value only needs to be pinned;
    // no other memory is published by saturating.
    count.store(REFCOUNT_SATURATED, Ordering::Relaxed);
    // ORDERING: only decides which thread prints; Relaxed is enough (WARN_ONCE).
    if !WARNED[kind.index()].swap(true, Ordering::Relaxed) {
        eprintln!("atomlab-prims: {} (warned once)", kind.message());
    }
}

/// A raw atomic reference count (`atomic_t` with `atomic_inc` /
/// `atomic_dec_and_test`): no checks, wraps on overflow.
#[derive(Debug)]
pub struct RawRefcount {
    count: AtomicI32,
}

impl RawRefcount {
    /// A count starting at `n`.
    pub fn new(n: i32) -> Self {
        RawRefcount {
            count: AtomicI32::new(n),
        }
    }

    /// `refcount_set`: overwrites the count (only while no one else uses it).
    pub fn set(&self, n: i32) {
        // ORDERING: Relaxed as Linux's refcount_set(); whoever hands the
        // object to other threads publishes it.
        self.count.store(n, Ordering::Relaxed);
    }

    /// Takes a reference.
    #[inline(always)]
    pub fn inc(&self) {
        // ORDERING: the caller already holds a reference, so the object is
        // alive and nothing needs publishing (the reasoning of std's Arc::clone).
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Drops a reference; true when it was the last one.
    #[inline(always)]
    pub fn dec_and_test(&self) -> bool {
        // ORDERING: Release so every use of the object by this holder happens
        // before the final decrement that lets another thread free it.
        if self.count.fetch_sub(1, Ordering::Release) == 1 {
            // ORDERING: Acquire pairs with the other holders' Release decrements,
            // so the freeing thread sees all their uses completed (Arc::drop).
            fence(Ordering::Acquire);
            return true;
        }
        false
    }

    /// The current count (racy by nature; for reports and tests).
    pub fn get(&self) -> i32 {
        // ORDERING: a snapshot for reporting; orders nothing.
        self.count.load(Ordering::Relaxed)
    }
}

/// A checked, saturating reference count with Linux `refcount_t` semantics.
#[derive(Debug)]
pub struct SaturatingRefcount {
    count: AtomicI32,
}

impl SaturatingRefcount {
    /// A count starting at `n`.
    pub fn new(n: i32) -> Self {
        SaturatingRefcount {
            count: AtomicI32::new(n),
        }
    }

    /// `refcount_set`: overwrites the count (only while no one else uses it).
    pub fn set(&self, n: i32) {
        // ORDERING: Relaxed as Linux's refcount_set(); whoever hands the
        // object to other threads publishes it.
        self.count.store(n, Ordering::Relaxed);
    }

    /// The current count (racy by nature; for reports and tests).
    pub fn get(&self) -> i32 {
        // ORDERING: a snapshot for reporting; orders nothing.
        self.count.load(Ordering::Relaxed)
    }

    /// True once the count has been pinned at [`REFCOUNT_SATURATED`].
    pub fn is_saturated(&self) -> bool {
        self.get() < 0
    }

    /// `refcount_inc`: takes a reference; saturates (never wraps) on overflow
    /// and on an increment from 0.
    #[inline(always)]
    pub fn inc(&self) {
        // ORDERING: as Linux's atomic_fetch_add_relaxed: the caller holds a
        // reference, so there is nothing to publish or acquire.
        let old = self.count.fetch_add(1, Ordering::Relaxed);
        if old == 0 {
            warn_saturate(&self.count, Saturation::AddOnZero);
        } else if old < 0 || old.wrapping_add(1) < 0 {
            warn_saturate(&self.count, Saturation::AddOverflow);
        }
    }

    /// The v4.11 `refcount_inc`: a compare-exchange loop that refuses to move
    /// from 0 and stops at saturation instead of adding past it.
    #[inline(always)]
    pub fn inc_cmpxchg(&self) {
        // ORDERING: Relaxed read, revalidated by the CAS.
        let mut old = self.count.load(Ordering::Relaxed);
        loop {
            if old == 0 {
                warn_saturate(&self.count, Saturation::AddOnZero);
                return;
            }
            if old < 0 {
                return; // already saturated: stays pinned
            }
            let new = old.wrapping_add(1);
            let new = if new < 0 { REFCOUNT_SATURATED } else { new };
            // ORDERING: Relaxed as atomic_try_cmpxchg_relaxed in v4.11: taking
            // a reference while holding one orders nothing.
            match self
                .count
                .compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    if new == REFCOUNT_SATURATED {
                        warn_saturate(&self.count, Saturation::AddOverflow);
                    }
                    return;
                }
                Err(now) => old = now,
            }
        }
    }

    /// `refcount_inc_not_zero`: takes a reference unless the count is 0 (the
    /// object is being freed); false then. Saturates on overflow.
    #[inline(always)]
    pub fn inc_not_zero(&self) -> bool {
        // ORDERING: Relaxed read, revalidated by the CAS.
        let mut old = self.count.load(Ordering::Relaxed);
        loop {
            if old == 0 {
                return false;
            }
            // ORDERING: Relaxed as Linux (v6.6): the caller guarantees the
            // object's memory is stable (RCU or a lookup lock); the successful
            // CAS's control dependency orders later stores.
            match self.count.compare_exchange_weak(
                old,
                old.wrapping_add(1),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(now) => old = now,
            }
        }
        if old < 0 || old.wrapping_add(1) < 0 {
            warn_saturate(&self.count, Saturation::AddOverflow);
        }
        true
    }

    /// `refcount_dec_and_test`: drops a reference; true when it was the last
    /// one and the caller must free the object. Saturates on underflow.
    #[inline(always)]
    pub fn dec_and_test(&self) -> bool {
        // ORDERING: Release so this holder's uses of the object happen before
        // the decrement that lets another thread free it.
        let old = self.count.fetch_sub(1, Ordering::Release);
        if old == 1 {
            // ORDERING: Acquire on reaching zero (Linux smp_acquire__after_ctrl_dep),
            // pairing with every other holder's Release decrement.
            fence(Ordering::Acquire);
            return true;
        }
        if old <= 0 || old.wrapping_sub(1) < 0 {
            warn_saturate(&self.count, Saturation::Underflow);
        }
        false
    }

    /// `refcount_dec`: drops a reference that must not be the last one;
    /// reaching 0 here is a leak and saturates.
    #[inline(always)]
    pub fn dec(&self) {
        if self.dec_and_test() {
            warn_saturate(&self.count, Saturation::DecrementHitZero);
        }
    }
}

/// The same operations as calls (`#[inline(never)]`), as the kernel's
/// out-of-line `refcount_inc()` was in the LKML measurements.
pub mod called {
    use super::{RawRefcount, SaturatingRefcount};

    /// [`RawRefcount::inc`] as a call.
    #[inline(never)]
    pub fn raw_inc(r: &RawRefcount) {
        r.inc()
    }

    /// [`RawRefcount::dec_and_test`] as a call.
    #[inline(never)]
    pub fn raw_dec_and_test(r: &RawRefcount) -> bool {
        r.dec_and_test()
    }

    /// [`SaturatingRefcount::inc`] as a call.
    #[inline(never)]
    pub fn saturating_inc(r: &SaturatingRefcount) {
        r.inc()
    }

    /// [`SaturatingRefcount::inc_cmpxchg`] as a call.
    #[inline(never)]
    pub fn saturating_inc_cmpxchg(r: &SaturatingRefcount) {
        r.inc_cmpxchg()
    }

    /// [`SaturatingRefcount::inc_not_zero`] as a call.
    #[inline(never)]
    pub fn saturating_inc_not_zero(r: &SaturatingRefcount) -> bool {
        r.inc_not_zero()
    }

    /// [`SaturatingRefcount::dec_and_test`] as a call.
    #[inline(never)]
    pub fn saturating_dec_and_test(r: &SaturatingRefcount) -> bool {
        r.dec_and_test()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn ordinary_life() {
        let r = SaturatingRefcount::new(1);
        r.inc();
        assert_eq!(r.get(), 2);
        assert!(!r.dec_and_test());
        assert!(r.dec_and_test());
        assert_eq!(r.get(), 0);
        assert!(!r.inc_not_zero(), "inc_not_zero must refuse a dead object");
        assert_eq!(r.get(), 0, "a refused inc_not_zero leaves 0 alone");
    }

    #[test]
    fn overflow_saturates_never_wraps() {
        let r = SaturatingRefcount::new(i32::MAX);
        r.inc();
        assert_eq!(r.get(), REFCOUNT_SATURATED);
        assert!(warned(Saturation::AddOverflow));
        // Once saturated, nothing brings it back toward 0.
        for _ in 0..1000 {
            assert!(!r.dec_and_test());
            r.inc();
        }
        assert_eq!(r.get(), REFCOUNT_SATURATED);
    }

    #[test]
    fn overflow_edges_of_each_increment() {
        let r = SaturatingRefcount::new(i32::MAX - 1);
        r.inc();
        assert_eq!(r.get(), i32::MAX, "the last representable value is fine");
        let r = SaturatingRefcount::new(i32::MAX - 1);
        r.inc_cmpxchg();
        assert_eq!(r.get(), i32::MAX);
        r.inc_cmpxchg();
        assert_eq!(r.get(), REFCOUNT_SATURATED);
        let r = SaturatingRefcount::new(i32::MAX);
        assert!(r.inc_not_zero());
        assert_eq!(r.get(), REFCOUNT_SATURATED);
    }

    #[test]
    fn increment_from_zero_is_use_after_free() {
        let r = SaturatingRefcount::new(0);
        r.inc();
        assert_eq!(r.get(), REFCOUNT_SATURATED);
        assert!(warned(Saturation::AddOnZero));
        let r = SaturatingRefcount::new(0);
        r.inc_cmpxchg();
        assert_eq!(r.get(), REFCOUNT_SATURATED);
    }

    #[test]
    fn underflow_saturates() {
        let r = SaturatingRefcount::new(0);
        assert!(!r.dec_and_test());
        assert_eq!(r.get(), REFCOUNT_SATURATED);
        assert!(warned(Saturation::Underflow));
    }

    #[test]
    fn dec_to_zero_is_a_leak() {
        let r = SaturatingRefcount::new(1);
        r.dec();
        assert_eq!(r.get(), REFCOUNT_SATURATED);
        assert!(warned(Saturation::DecrementHitZero));
    }

    #[test]
    fn raw_wraps_where_saturating_does_not() {
        let raw = RawRefcount::new(i32::MAX);
        raw.inc();
        assert_eq!(raw.get(), i32::MIN);
        let raw = RawRefcount::new(1);
        assert!(called::raw_dec_and_test(&raw));
    }

    #[test]
    fn called_forms_behave_as_inlined() {
        let r = SaturatingRefcount::new(1);
        called::saturating_inc(&r);
        called::saturating_inc_cmpxchg(&r);
        assert!(called::saturating_inc_not_zero(&r));
        assert_eq!(r.get(), 4);
        for _ in 0..3 {
            assert!(!called::saturating_dec_and_test(&r));
        }
        assert!(called::saturating_dec_and_test(&r));
    }

    #[test]
    fn concurrent_get_put_returns_to_one() {
        let r = SaturatingRefcount::new(1);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..50_000 {
                        r.inc();
                        assert!(!r.dec_and_test());
                    }
                });
            }
        });
        assert_eq!(r.get(), 1);
    }
}
