//! atomlab-plugin-abi: write an atomlab plugin in Rust. One job: the C
//! ABI of `include/atomlab.h` as Rust types ([`abi`]), a [`Lock`] trait,
//! and [`export_locks!`], which exports Rust types implementing it from a
//! `cdylib` as the header's `atomlab_plugin` entry point.
//!
//! ```ignore
//! // Cargo.toml: [lib] crate-type = ["cdylib"]
//! //             [dependencies] atomlab-plugin-abi = { path = ".../crates/atomlab-plugin-abi" }
//! use std::sync::atomic::{AtomicBool, Ordering};
//! use atomlab_plugin_abi::{export_locks, Lock};
//!
//! pub struct Tas(AtomicBool);
//! impl Lock for Tas {
//!     fn new() -> Self { Tas(AtomicBool::new(false)) }
//!     fn lock(&self) {
//!         // ORDERING: acquire pairs with unlock's release.
//!         while self.0.swap(true, Ordering::Acquire) { std::hint::spin_loop() }
//!     }
//!     // ORDERING: release publishes the critical section.
//!     fn unlock(&self) { self.0.store(false, Ordering::Release) }
//! }
//! export_locks!("my-locks", "rust-tas" => Tas);
//! ```
//!
//! `cargo build --release` then gives `target/release/libNAME.so` for
//! `atomlab bench lock --plugin` and `atomlab stress mutex --plugin`; the
//! repository's example is `examples/rust_locks.rs`.
//!
//! The crate has no dependencies, so a plugin carries none of atomlab's
//! loader. [`abi`] is the very file the loader (crate `atomlab-plugin`)
//! compiles, so the two cannot disagree about the layout.
//!
//! Limitations: a panic in a plugin's function cannot unwind into atomlab
//! (the functions are `extern "C"`): Rust aborts the process, which atomlab
//! reports as that variant crashed (SIGABRT). `new` must not fail: an
//! allocation failure aborts, as `Box::new` does.
#![deny(missing_docs)]

use std::ffi::c_void;

#[path = "../../atomlab-plugin/src/abi.rs"]
pub mod abi;

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

/// The `extern "C"` functions [`export_locks!`] puts in the description,
/// one instance per lock type.
pub mod shims {
    use super::*;

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
    pub unsafe extern "C" fn try_lock<L: Lock>(p: *mut c_void) -> std::ffi::c_int {
        // SAFETY: as in `lock`.
        std::ffi::c_int::from(unsafe { &*p.cast::<L>() }.try_lock())
    }

    /// `free_`: drops the box.
    ///
    /// # Safety
    /// As [`lock`], once, when no thread uses the lock any more.
    pub unsafe extern "C" fn free<L: Lock>(p: *mut c_void) {
        // SAFETY: made by Box::into_raw in `new`, freed once.
        drop(unsafe { Box::from_raw(p.cast::<L>()) })
    }

    /// The `struct atomlab_lock` of `L`.
    pub const fn lock_fns<L: Lock>() -> abi::LockFns {
        abi::LockFns {
            new: Some(new::<L>),
            lock: Some(lock::<L>),
            unlock: Some(unlock::<L>),
            try_lock: if L::HAS_TRY_LOCK {
                Some(try_lock::<L>)
            } else {
                None
            },
            free: Some(free::<L>),
        }
    }
}

/// For [`export_locks!`] only: a value that may live in a `static`
/// although it holds raw pointers (the description is read-only after
/// load and its pointers point to `'static` data). Wrapping anything else
/// in it is unsound.
#[doc(hidden)]
#[repr(transparent)]
pub struct Shared<T>(pub T);

// SAFETY: only ever made by `export_locks!` around read-only data whose
// pointers are to statics and string literals.
unsafe impl<T> Sync for Shared<T> {}

/// Exports Rust locks as an atomlab plugin: `export_locks!("library
/// name", "variant-name" => Type, …)` defines the entry point
/// `atomlab_plugin` of `include/atomlab.h` (ABI version
/// [`abi::ABI_VERSION`]) describing one lock variant per `Type:`
/// [`Lock`]. Use it once, in a `cdylib`.
#[macro_export]
macro_rules! export_locks {
    ($plugin:literal, $($name:literal => $ty:ty),+ $(,)?) => {
        /// The entry point of include/atomlab.h: what this plugin provides.
        #[unsafe(no_mangle)]
        pub extern "C" fn atomlab_plugin() -> *const $crate::abi::Descriptor {
            use $crate::abi as __abi;
            static VARIANTS: $crate::Shared<[__abi::Variant; [$($name),+].len()]> =
                $crate::Shared([$(__abi::Variant {
                    name: concat!($name, "\0").as_ptr().cast(),
                    kind: __abi::KIND_LOCK,
                    u: __abi::VariantFns { lock: $crate::shims::lock_fns::<$ty>() },
                }),+]);
            static PLUGIN: $crate::Shared<__abi::Descriptor> = $crate::Shared(__abi::Descriptor {
                abi_version: __abi::ABI_VERSION,
                name: concat!($plugin, "\0").as_ptr().cast(),
                n_variants: [$($name),+].len(),
                variants: &VARIANTS as *const _ as *const __abi::Variant,
            });
            &PLUGIN.0
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    struct Tas(AtomicBool);
    impl Lock for Tas {
        const HAS_TRY_LOCK: bool = true;
        fn new() -> Self {
            Tas(AtomicBool::new(false))
        }
        fn lock(&self) {
            // ORDERING: acquire pairs with unlock's release.
            while self.0.swap(true, Ordering::Acquire) {}
        }
        fn unlock(&self) {
            // ORDERING: release publishes the critical section.
            self.0.store(false, Ordering::Release)
        }
        fn try_lock(&self) -> bool {
            // ORDERING: as lock.
            !self.0.swap(true, Ordering::Acquire)
        }
    }

    export_locks!("test-locks", "t-tas" => Tas, "t-tas2" => Tas);

    /// The exported description reads as the loader reads it, and its
    /// functions work.
    #[test]
    fn the_macro_describes_and_runs_the_locks() {
        // SAFETY: the entry point the macro defined, called as atomlab does.
        let d = unsafe { &*atomlab_plugin() };
        assert_eq!(d.abi_version, abi::ABI_VERSION);
        assert_eq!(d.n_variants, 2);
        // SAFETY: `n_variants` entries.
        let vs = unsafe { std::slice::from_raw_parts(d.variants, d.n_variants) };
        // SAFETY: NUL-terminated literals.
        let name = |p| unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap();
        assert_eq!(name(d.name), "test-locks");
        assert_eq!(name(vs[1].name), "t-tas2");
        assert_eq!(vs[0].kind, abi::KIND_LOCK);
        // SAFETY: the kind is lock.
        let f = unsafe { vs[0].u.lock };
        // SAFETY: a lock from new_, used and freed as the header says.
        unsafe {
            let p = (f.new.unwrap())();
            (f.lock.unwrap())(p);
            assert_eq!((f.try_lock.unwrap())(p), 0);
            (f.unlock.unwrap())(p);
            assert_eq!((f.try_lock.unwrap())(p), 1);
            (f.unlock.unwrap())(p);
            (f.free.unwrap())(p);
        }
    }
}
