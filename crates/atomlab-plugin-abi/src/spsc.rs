//! A queue plugin in Rust: the [`Spsc`] trait, and the `struct atomlab_spsc`
//! of `extern "C"` functions [`export_plugin!`](crate::export_plugin)
//! describes a type implementing it with.

use std::ffi::{c_int, c_void};

use crate::abi;

/// A single-producer single-consumer queue of nonzero 64-bit items, as
/// `struct atomlab_spsc` asks: atomlab makes one with [`Spsc::new`], then
/// one thread (the producer) calls [`Spsc::push`] while one other thread
/// (the consumer) calls [`Spsc::pop`], and drops it when neither does any
/// more. Every item pushed must come out of `pop` once, in order, with
/// its bits: `atomlab stress spsc` checks every one.
///
/// `push` and `pop` are `unsafe` to call because a queue may rely on that
/// contract (a Lamport ring's slots are written by the producer alone, so
/// they need no atomic read-modify-write); an implementation is then
/// `Sync` by an `unsafe impl` that says so.
pub trait Spsc: Send + Sync + Sized + 'static {
    /// An empty queue holding at least `capacity` items.
    fn new(capacity: usize) -> Self;
    /// Enqueues `item` (nonzero); `false` when the queue is full.
    ///
    /// # Safety
    /// Called by one thread only (the producer), never at the same time
    /// as another `push` on this queue.
    unsafe fn push(&self, item: u64) -> bool;
    /// The oldest item, or `None` when the queue is empty.
    ///
    /// # Safety
    /// Called by one thread only (the consumer), never at the same time
    /// as another `pop` on this queue.
    unsafe fn pop(&self) -> Option<u64>;
}

/// `ATOMLAB_KIND_SPSC`: the `kind` [`export_plugin!`](crate::export_plugin) gives a
/// `spsc` variant.
pub const KIND: u32 = abi::KIND_SPSC;

/// The union member [`export_plugin!`](crate::export_plugin) gives a `spsc` variant of `Q`.
pub const fn variant_fns<Q: Spsc>() -> abi::VariantFns {
    abi::VariantFns { spsc: fns::<Q>() }
}

/// The `struct atomlab_spsc` of `Q`.
pub const fn fns<Q: Spsc>() -> abi::SpscFns {
    abi::SpscFns {
        new: Some(new::<Q>),
        push: Some(push::<Q>),
        pop: Some(pop::<Q>),
        free: Some(crate::free::<Q>),
    }
}

/// `new_(capacity)`: a boxed `Q`.
pub extern "C" fn new<Q: Spsc>(capacity: usize) -> *mut c_void {
    Box::into_raw(Box::new(Q::new(capacity))).cast()
}

/// `push`.
///
/// # Safety
/// `p` comes from [`new`] of the same `Q` and is not freed yet;
/// only one thread pushes.
pub unsafe extern "C" fn push<Q: Spsc>(p: *mut c_void, item: u64) -> c_int {
    // SAFETY: the caller's contract (the header's: a queue made by
    // new_, pushed to by one producer thread).
    c_int::from(unsafe { (*p.cast::<Q>()).push(item) })
}

/// `pop`.
///
/// # Safety
/// As [`push`], for the one consumer thread; `item` points to a
/// writable `u64`.
pub unsafe extern "C" fn pop<Q: Spsc>(p: *mut c_void, item: *mut u64) -> c_int {
    // SAFETY: as in `push`, for the one consumer thread.
    match unsafe { (*p.cast::<Q>()).pop() } {
        Some(v) => {
            // SAFETY: the caller passes a writable u64.
            unsafe { item.write(v) };
            1
        }
        None => 0,
    }
}
