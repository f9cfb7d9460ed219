//! loom model tests of the reference counts: the holder that drops the last
//! reference frees the object, and every other holder's use of it happens
//! before the free (the Release decrement / Acquire-on-zero pairing); a
//! reference is never taken from 0 by `inc_not_zero`.
//!
//! Run: `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p atomlab-prims --test loom_refcount --release`
#![cfg(loom)]

use atomlab_prims::refcount::{RawRefcount, SaturatingRefcount};
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;

trait Count: Send + Sync + 'static {
    fn with(n: i32) -> Self;
    fn get_ref(&self);
    fn put(&self) -> bool;
}

impl Count for RawRefcount {
    fn with(n: i32) -> Self {
        RawRefcount::new(n)
    }
    fn get_ref(&self) {
        self.inc()
    }
    fn put(&self) -> bool {
        self.dec_and_test()
    }
}

impl Count for SaturatingRefcount {
    fn with(n: i32) -> Self {
        SaturatingRefcount::new(n)
    }
    fn get_ref(&self) {
        self.inc()
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

// SAFETY: `data` is written by holders before their release decrement and
// read-written by the single freeing thread; loom checks exactly that.
unsafe impl<C: Sync> Sync for Object<C> {}

fn last_put_frees_after_all_uses<C: Count>() {
    loom::model(|| {
        let obj = Arc::new(Object {
            refs: C::with(1),
            data: UnsafeCell::new(0),
            frees: AtomicUsize::new(0),
        });
        obj.refs.get_ref(); // a reference for the second thread
        let release = |o: &Object<C>| {
            if o.refs.put() {
                // "Free": a write that must not race with any holder's use.
                // SAFETY: last reference; loom reports a race if not ordered.
                o.data.with_mut(|d| unsafe { *d = u32::MAX });
                // ORDERING: a test counter, read after join.
                o.frees.fetch_add(1, Ordering::Relaxed);
            }
        };
        let other = obj.clone();
        let t = loom::thread::spawn(move || {
            // A use of the object while holding a reference.
            // SAFETY: only the two holders touch `data` before the free, and
            // they use `with` (reads); loom checks the free against them.
            other.data.with(|d| unsafe { assert_ne!(*d, u32::MAX) });
            release(&other);
        });
        // SAFETY: as above.
        obj.data.with(|d| unsafe { assert_ne!(*d, u32::MAX) });
        release(&obj);
        t.join().unwrap();
        assert_eq!(obj.frees.load(Ordering::Relaxed), 1, "freed exactly once");
    });
}

#[test]
fn raw_refcount() {
    last_put_frees_after_all_uses::<RawRefcount>();
}

#[test]
fn saturating_refcount() {
    last_put_frees_after_all_uses::<SaturatingRefcount>();
}

#[test]
fn inc_not_zero_never_revives() {
    loom::model(|| {
        let r = Arc::new(SaturatingRefcount::new(1));
        let frees = Arc::new(AtomicUsize::new(0));
        let (r2, frees2) = (r.clone(), frees.clone());
        let t = loom::thread::spawn(move || {
            // A lookup racing with the final put: it may take a reference only
            // while the object is alive, and then owes a put of its own.
            if r2.inc_not_zero() && r2.dec_and_test() {
                // ORDERING: a test counter, read after join.
                frees2.fetch_add(1, Ordering::Relaxed);
            }
        });
        if r.dec_and_test() {
            frees.fetch_add(1, Ordering::Relaxed);
        }
        t.join().unwrap();
        assert_eq!(frees.load(Ordering::Relaxed), 1, "exactly one put frees");
        assert_eq!(r.get(), 0, "nothing revived the object");
    });
}
