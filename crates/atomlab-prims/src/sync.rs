//! The atomics the primitives are built from: `core`'s normally, loom's under
//! `--cfg loom` so the same source is model-checked.

#[cfg(loom)]
pub use loom::sync::atomic::{
    fence, AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize,
};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize,
};

pub(crate) use std::sync::atomic::Ordering;

/// A busy-wait hint; under loom, a yield so the model checker can schedule
/// the thread that will release us (a spin loop is otherwise an infinite path).
#[inline(always)]
pub(crate) fn spin_hint() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::hint::spin_loop();
}

/// Gives up the CPU (oversubscribed spinners); a model-checker yield under loom.
#[inline]
pub(crate) fn yield_now() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}
