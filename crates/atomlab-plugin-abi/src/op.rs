//! An operation plugin in Rust: the [`Op`] trait, and the `struct
//! atomlab_op` of `extern "C"` functions
//! [`export_plugin!`](crate::export_plugin) describes a type implementing
//! it with.

use std::ffi::c_void;

use crate::abi;

/// One operation on shared state, as `struct atomlab_op` asks: every
/// thread of `atomlab bench counter` calls [`Op::op`] on one state made by
/// [`Op::new`] (or each on its own with `--contention private`). With
/// [`Op::HAS_READ`], [`Op::read`] says how many times `op` was called,
/// which atomlab checks after every run. The operation fixes its own
/// orderings: `--ordering` does not apply to it.
pub trait Op: Send + Sync + Sized + 'static {
    /// Whether [`Op::read`] is implemented (otherwise the header's `read`
    /// is NULL and the count is not checked).
    const HAS_READ: bool = false;
    /// New state.
    fn new() -> Self;
    /// The operation under test.
    fn op(&self);
    /// How many times [`Op::op`] was called since [`Op::new`]; called
    /// after every thread has stopped. Set [`Op::HAS_READ`] when
    /// implementing it.
    fn read(&self) -> u64 {
        0
    }
}

/// `ATOMLAB_KIND_OP`: the `kind` [`export_plugin!`](crate::export_plugin) gives a
/// `op` variant.
pub const KIND: u32 = abi::KIND_OP;

/// The union member [`export_plugin!`](crate::export_plugin) gives a `op` variant of `O`.
pub const fn variant_fns<O: Op>() -> abi::VariantFns {
    abi::VariantFns { op: fns::<O>() }
}

/// The `struct atomlab_op` of `O`.
pub const fn fns<O: Op>() -> abi::OpFns {
    abi::OpFns {
        new: Some(new::<O>),
        op: Some(op::<O>),
        read: if O::HAS_READ { Some(read::<O>) } else { None },
        free: Some(crate::free::<O>),
    }
}

/// `new_`: boxed state.
pub extern "C" fn new<O: Op>() -> *mut c_void {
    Box::into_raw(Box::new(O::new())).cast()
}

/// `op`.
///
/// # Safety
/// `p` comes from [`new`] of the same `O` and is not freed yet.
pub unsafe extern "C" fn op<O: Op>(p: *mut c_void) {
    // SAFETY: the caller's contract (the header's: state made by
    // new_, freed only after every thread is done with it).
    unsafe { &*p.cast::<O>() }.op()
}

/// `read`.
///
/// # Safety
/// As [`op()`].
pub unsafe extern "C" fn read<O: Op>(p: *mut c_void) -> u64 {
    // SAFETY: as in `op`.
    unsafe { &*p.cast::<O>() }.read()
}
