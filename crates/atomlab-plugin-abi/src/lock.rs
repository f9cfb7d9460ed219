//! A lock plugin in Rust: the [`Lock`] trait, and the `struct atomlab_lock`
//! of `extern "C"` functions [`export_plugin!`](crate::export_plugin)
//! describes a type implementing it with.

use std::ffi::{c_int, c_void};

use crate::abi;

/// A mutual-exclusion lock, as `struct atomlab_lock` asks: atomlab makes
/// one with [`Lock::new`], calls [`Lock::lock`] and [`Lock::unlock`] from
/// many threads, and drops it when no thread uses it any more.
pub trait Lock: Send + Sync + Sized + 'static {
    /// Whether [`Lock::try_lock`] is implemented (otherwise the header's
    /// `try_lock` is NULL).
    const HAS_TRY_LOCK: bool = false;
    /// An unlocked lock.
    fn new() -> Self;
    /// Returns when the calling thread holds the lock.
    fn lock(&self);
    /// Releases the lock; called only by the thread holding it.
    fn unlock(&self);
    /// Takes the lock if it is free; `true` when it did. Set
    /// [`Lock::HAS_TRY_LOCK`] when implementing it.
    fn try_lock(&self) -> bool {
        false
    }
}

/// `ATOMLAB_KIND_LOCK`: the `kind` [`export_plugin!`](crate::export_plugin) gives a
/// `lock` variant.
pub const KIND: u32 = abi::KIND_LOCK;

/// The union member [`export_plugin!`](crate::export_plugin) gives a `lock` variant of `L`.
pub const fn variant_fns<L: Lock>() -> abi::VariantFns {
    abi::VariantFns { lock: fns::<L>() }
}

/// The `struct atomlab_lock` of `L`.
pub const fn fns<L: Lock>() -> abi::LockFns {
    abi::LockFns {
        new: Some(new::<L>),
        lock: Some(lock::<L>),
        unlock: Some(unlock::<L>),
        try_lock: if L::HAS_TRY_LOCK {
            Some(try_lock::<L>)
        } else {
            None
        },
        free: Some(crate::free::<L>),
    }
}

/// `new_`: a boxed `L`.
pub extern "C" fn new<L: Lock>() -> *mut c_void {
    Box::into_raw(Box::new(L::new())).cast()
}

/// `lock`.
///
/// # Safety
/// `p` comes from [`new`] of the same `L` and is not freed yet.
pub unsafe extern "C" fn lock<L: Lock>(p: *mut c_void) {
    // SAFETY: the caller's contract (the header's: a lock made by new_).
    unsafe { &*p.cast::<L>() }.lock()
}

/// `unlock`.
///
/// # Safety
/// As [`lock`]; the calling thread holds the lock.
pub unsafe extern "C" fn unlock<L: Lock>(p: *mut c_void) {
    // SAFETY: as in `lock`.
    unsafe { &*p.cast::<L>() }.unlock()
}

/// `try_lock`.
///
/// # Safety
/// As [`lock`].
pub unsafe extern "C" fn try_lock<L: Lock>(p: *mut c_void) -> c_int {
    // SAFETY: as in `lock`.
    c_int::from(unsafe { &*p.cast::<L>() }.try_lock())
}
