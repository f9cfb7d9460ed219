//! A reference-count plugin in Rust: the [`Refcount`] trait, and the
//! `struct atomlab_refcount` of `extern "C"` functions
//! [`export_plugin!`](crate::export_plugin) describes a type implementing
//! it with.

use std::ffi::{c_int, c_void};

use crate::abi;

/// A reference count, as `struct atomlab_refcount` asks: [`Refcount::new`]
/// makes an object holding one reference; any thread that holds one calls
/// [`Refcount::get`] and [`Refcount::put`], at the same time as others.
/// atomlab owns the object: it drops it once, when no thread uses it any
/// more, whether or not a `put` said "last" (so a count that says it too
/// early is reported, not a crash on freed memory): `put` must not free
/// anything.
pub trait Refcount: Send + Sync + Sized + 'static {
    /// An object holding one reference.
    fn new() -> Self;
    /// Takes one more reference; the caller holds one.
    fn get(&self);
    /// Drops the caller's reference; `true` exactly when it was the last.
    fn put(&self) -> bool;
}

/// `ATOMLAB_KIND_REFCOUNT`: the `kind` [`export_plugin!`](crate::export_plugin) gives a
/// `refcount` variant.
pub const KIND: u32 = abi::KIND_REFCOUNT;

/// The union member [`export_plugin!`](crate::export_plugin) gives a `refcount` variant of `R`.
pub const fn variant_fns<R: Refcount>() -> abi::VariantFns {
    abi::VariantFns {
        refcount: fns::<R>(),
    }
}

/// The `struct atomlab_refcount` of `R`.
pub const fn fns<R: Refcount>() -> abi::RefcountFns {
    abi::RefcountFns {
        new: Some(new::<R>),
        get: Some(get::<R>),
        put: Some(put::<R>),
        free: Some(crate::free::<R>),
    }
}

/// `new_`: a boxed `R` holding one reference.
pub extern "C" fn new<R: Refcount>() -> *mut c_void {
    Box::into_raw(Box::new(R::new())).cast()
}

/// `get`.
///
/// # Safety
/// `p` comes from [`new`] of the same `R` and is not freed yet.
pub unsafe extern "C" fn get<R: Refcount>(p: *mut c_void) {
    // SAFETY: the caller's contract (the header's: an object made
    // by new_, freed only after every thread is done with it).
    unsafe { &*p.cast::<R>() }.get()
}

/// `put`.
///
/// # Safety
/// As [`get`].
pub unsafe extern "C" fn put<R: Refcount>(p: *mut c_void) -> c_int {
    // SAFETY: as in `get`.
    c_int::from(unsafe { &*p.cast::<R>() }.put())
}
