//! An atomlab plugin in Rust: a reference count ordered as the Linux
//! kernel's `refcount_t` (include/linux/refcount.h: `__refcount_add` and
//! `__refcount_sub_and_test`), exported with `export_plugin!` from this
//! `cdylib`: a Relaxed increment, a Release decrement with an Acquire
//! fence after the last (the kernel's `smp_acquire__after_ctrl_dep`), and
//! the kernel's saturation: a count that would overflow, or that is
//! taken from zero (a use after free), sticks at `SATURATED` instead of
//! wrapping, so it is never freed early (leaked instead). The Rust twin
//! of `crates/atomlab/tests/plugins/refcount.c`.
//!
//! ```text
//! cargo build --release -p atomlab-plugin-abi --example rust_refcount
//! atomlab bench refcount --plugin target/release/examples/librust_refcount.so
//! atomlab stress refcount --plugin target/release/examples/librust_refcount.so
//! ```

use std::sync::atomic::{fence, AtomicI32, Ordering};

use atomlab_plugin_abi::{export_plugin, Refcount};

/// `REFCOUNT_SATURATED`: halfway into the negatives, so that racing
/// increments and decrements after saturating stay negative.
const SATURATED: i32 = i32::MIN / 2;

/// A count in the kernel's `refcount_t` representation.
pub struct KernelRefcount(AtomicI32);

impl KernelRefcount {
    /// The kernel's `refcount_warn_saturate`, without the warning.
    #[cold]
    fn saturate(&self) {
        // ORDERING: Relaxed, as the kernel's refcount_set: saturation
        // orders nothing; it only keeps the object from being freed.
        self.0.store(SATURATED, Ordering::Relaxed);
    }
}

impl Refcount for KernelRefcount {
    fn new() -> Self {
        KernelRefcount(AtomicI32::new(1))
    }

    fn get(&self) {
        // ORDERING: Relaxed (refcount_inc): a new reference is made from
        // one the caller holds, which already orders its uses.
        let old = self.0.fetch_add(1, Ordering::Relaxed);
        if old <= 0 || old == i32::MAX {
            self.saturate();
        }
    }

    fn put(&self) -> bool {
        // ORDERING: Release (refcount_dec_and_test): this holder's uses of
        // the object happen before the last put's caller frees it.
        let old = self.0.fetch_sub(1, Ordering::Release);
        if old == 1 {
            // ORDERING: Acquire fence (smp_acquire__after_ctrl_dep): the
            // freer sees every other holder's uses, pairing with their
            // Release decrements.
            fence(Ordering::Acquire);
            return true;
        }
        if old <= 0 {
            self.saturate();
        }
        false
    }
}

export_plugin!("rust-refcounts", refcount "rust-refcount" => KernelRefcount);
