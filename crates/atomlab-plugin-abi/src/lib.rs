//! atomlab-plugin-abi: write an atomlab plugin in Rust. One job: the C
//! ABI of `include/atomlab.h` as Rust types ([`abi`]), one trait per kind
//! of variant ([`Lock`], [`Spsc`], [`Refcount`], [`Op`]), and
//! [`export_plugin!`], which exports Rust types implementing them from a
//! `cdylib` as the header's `atomlab_plugin` entry point
//! ([`export_locks!`] is its shorthand for locks only).
//!
//! ```ignore
//! // Cargo.toml: [lib] crate-type = ["cdylib"]
//! //             [dependencies] atomlab-plugin-abi = { path = ".../crates/atomlab-plugin-abi" }
//! use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
//! use atomlab_plugin_abi::{export_plugin, Lock, Op};
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
//!
//! pub struct Add(AtomicU64);
//! impl Op for Add {
//!     const HAS_READ: bool = true;
//!     fn new() -> Self { Add(AtomicU64::new(0)) }
//!     // ORDERING: Relaxed: a statistics counter; only the total matters.
//!     fn op(&self) { self.0.fetch_add(1, Ordering::Relaxed); }
//!     // ORDERING: Relaxed: read after atomlab's threads have stopped.
//!     fn read(&self) -> u64 { self.0.load(Ordering::Relaxed) }
//! }
//!
//! export_plugin!("my-plugin", lock "rust-tas" => Tas, op "rust-add" => Add);
//! ```
//!
//! `cargo build --release` then gives `target/release/libNAME.so` for
//! `--plugin` of `atomlab bench lock|spsc|refcount|counter` and `atomlab
//! stress mutex|spsc|refcount`; the repository's examples are
//! `examples/rust_locks.rs`, `examples/rust_spsc.rs`,
//! `examples/rust_refcount.rs` and `examples/rust_ops.rs`.
//!
//! The crate has no dependencies, so a plugin carries none of atomlab's
//! loader. It owns [`abi`], which the loader (crate `atomlab-plugin`)
//! depends on and re-exports, so the two cannot disagree about the layout.
//!
//! Limitations: a panic in a plugin's function cannot unwind into atomlab
//! (the functions are `extern "C"`): Rust aborts the process, which atomlab
//! reports as that variant crashed (SIGABRT). `new` must not fail: an
//! allocation failure aborts, as `Box::new` does.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

use std::ffi::c_void;

pub mod abi;
pub mod lock;
pub mod op;
pub mod refcount;
pub mod spsc;

pub use lock::Lock;
pub use op::Op;
pub use refcount::Refcount;
pub use spsc::Spsc;

/// `free_` of any kind: drops the box.
///
/// # Safety
/// `p` comes from the `new_` of the same `T` (a `Box<T>`), is freed
/// once, when no thread uses it any more.
#[doc(hidden)]
pub unsafe extern "C" fn free<T>(p: *mut c_void) {
    // SAFETY: made by Box::into_raw in a `new_` of T, freed once.
    drop(unsafe { Box::from_raw(p.cast::<T>()) })
}

/// For [`export_plugin!`] only: a value that may live in a `static`
/// although it holds raw pointers (the description is read-only after
/// load and its pointers point to `'static` data). Wrapping anything else
/// in it is unsound.
#[doc(hidden)]
#[repr(transparent)]
pub struct Shared<T>(pub T);

// SAFETY: only ever made by `export_plugin!` around read-only data whose
// pointers are to statics and string literals.
unsafe impl<T> Sync for Shared<T> {}

/// Exports Rust types as an atomlab plugin: `export_plugin!("library
/// name", KIND "variant-name" => Type, …)` defines the entry point
/// `atomlab_plugin` of `include/atomlab.h` (ABI version
/// [`abi::ABI_VERSION`]) describing one variant per `Type`, where `KIND`
/// is `lock` (`Type:` [`Lock`]), `spsc` ([`Spsc`]), `refcount`
/// ([`Refcount`]) or `op` ([`Op`]). One library may mix kinds: each
/// subcommand takes the variants of its kind. Use it once, in a `cdylib`.
///
/// ```ignore
/// export_plugin!("my-plugin", spsc "my-ring" => Ring, refcount "my-count" => Count);
/// ```
///
/// `KIND` is the name of one of this crate's kind modules ([`lock`],
/// [`spsc`], [`refcount`], [`op`]: each holds its trait, its `KIND` and
/// its `variant_fns`), so a kind it does not know is a compile error
/// naming the module it looked for:
///
/// ```compile_fail
/// struct Q;
/// atomlab_plugin_abi::export_plugin!("p", queue "q" => Q);
/// ```
#[macro_export]
macro_rules! export_plugin {
    ($plugin:literal, $($kind:ident $name:literal => $ty:ty),+ $(,)?) => {
        /// The entry point of include/atomlab.h: what this plugin provides.
        // Reached by its symbol name (dlsym), never by a Rust path.
        #[allow(unreachable_pub)]
        #[unsafe(no_mangle)]
        pub extern "C" fn atomlab_plugin() -> *const $crate::abi::Descriptor {
            use $crate::abi as __abi;
            static VARIANTS: $crate::Shared<[__abi::Variant; [$($name),+].len()]> =
                $crate::Shared([$(__abi::Variant {
                    name: concat!($name, "\0").as_ptr().cast(),
                    kind: $crate::$kind::KIND,
                    u: $crate::$kind::variant_fns::<$ty>(),
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

/// Exports Rust locks as an atomlab plugin: `export_locks!("library
/// name", "variant-name" => Type, …)` is [`export_plugin!`] with every
/// variant a `lock` (`Type:` [`Lock`]). Use it once, in a `cdylib`.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use atomlab_plugin_abi::{abi, export_locks, Lock};
///
/// struct Tas(AtomicBool);
/// impl Lock for Tas {
///     fn new() -> Self { Tas(AtomicBool::new(false)) }
///     // ORDERING: Acquire pairs with unlock's Release.
///     fn lock(&self) { while self.0.swap(true, Ordering::Acquire) {} }
///     // ORDERING: Release publishes the critical section.
///     fn unlock(&self) { self.0.store(false, Ordering::Release) }
/// }
/// export_locks!("my-locks", "tas" => Tas, "tas-again" => Tas);
///
/// // What atomlab reads.
/// // SAFETY: the entry point just defined.
/// let d = unsafe { &*atomlab_plugin() };
/// assert_eq!(d.n_variants, 2);
/// // SAFETY: two entries.
/// let v = unsafe { &*d.variants.add(1) };
/// assert_eq!(v.kind, abi::KIND_LOCK);
/// // SAFETY: a lock variant; try_lock was not implemented.
/// assert!(unsafe { v.u.lock }.try_lock.is_none());
/// ```
#[macro_export]
macro_rules! export_locks {
    ($plugin:literal, $($name:literal => $ty:ty),+ $(,)?) => {
        $crate::export_plugin!($plugin, $(lock $name => $ty),+);
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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

    /// A one-slot "queue", single-threaded: enough to see the shims pass
    /// items and emptiness through.
    struct Slot(Cell<u64>);
    // SAFETY: the test uses it from one thread only.
    unsafe impl Sync for Slot {}
    impl Spsc for Slot {
        fn new(_capacity: usize) -> Self {
            Slot(Cell::new(0))
        }
        unsafe fn push(&self, item: u64) -> bool {
            self.0.get() == 0 && {
                self.0.set(item);
                true
            }
        }
        unsafe fn pop(&self) -> Option<u64> {
            Some(self.0.replace(0)).filter(|v| *v != 0)
        }
    }

    struct Count(AtomicU64);
    impl Refcount for Count {
        fn new() -> Self {
            Count(AtomicU64::new(1))
        }
        fn get(&self) {
            // ORDERING: SeqCst: a test, ordering is not under test.
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn put(&self) -> bool {
            // ORDERING: as get.
            self.0.fetch_sub(1, Ordering::SeqCst) == 1
        }
    }

    struct Add(AtomicU64);
    impl Op for Add {
        const HAS_READ: bool = true;
        fn new() -> Self {
            Add(AtomicU64::new(0))
        }
        fn op(&self) {
            // ORDERING: as Count::get.
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn read(&self) -> u64 {
            // ORDERING: as Count::get.
            self.0.load(Ordering::SeqCst)
        }
    }

    /// Without read(): the header's `read` is NULL.
    struct Nop;
    impl Op for Nop {
        fn new() -> Self {
            Nop
        }
        fn op(&self) {}
    }

    export_plugin!(
        "test-plugin",
        lock "t-tas" => Tas,
        spsc "t-slot" => Slot,
        refcount "t-count" => Count,
        op "t-add" => Add,
        op "t-nop" => Nop,
    );

    /// The exported description reads as the loader reads it, with every
    /// kind's functions in its member of the union, and they work.
    #[test]
    fn the_macro_describes_and_runs_variants_of_every_kind() {
        // SAFETY: the entry point the macro defined, called as atomlab does.
        let d = unsafe { &*atomlab_plugin() };
        assert_eq!(d.abi_version, abi::ABI_VERSION);
        assert_eq!(d.n_variants, 5);
        // SAFETY: `n_variants` entries.
        let vs = unsafe { std::slice::from_raw_parts(d.variants, d.n_variants) };
        // SAFETY: NUL-terminated literals.
        let name = |p| unsafe { std::ffi::CStr::from_ptr(p) }.to_str().unwrap();
        assert_eq!(name(d.name), "test-plugin");
        let names: Vec<&str> = vs.iter().map(|v| name(v.name)).collect();
        assert_eq!(names, ["t-tas", "t-slot", "t-count", "t-add", "t-nop"]);
        let kinds: Vec<u32> = vs.iter().map(|v| v.kind).collect();
        use abi::{KIND_LOCK, KIND_OP, KIND_REFCOUNT, KIND_SPSC};
        assert_eq!(
            kinds,
            [KIND_LOCK, KIND_SPSC, KIND_REFCOUNT, KIND_OP, KIND_OP]
        );

        // SAFETY: each union member read is the one its variant's kind
        // names, and each object is made by its new_, used from this one
        // thread and freed once, as the header says.
        unsafe {
            let f = vs[0].u.lock;
            let p = (f.new.unwrap())();
            (f.lock.unwrap())(p);
            assert_eq!((f.try_lock.unwrap())(p), 0);
            (f.unlock.unwrap())(p);
            assert_eq!((f.try_lock.unwrap())(p), 1);
            (f.unlock.unwrap())(p);
            (f.free.unwrap())(p);

            let f = vs[1].u.spsc;
            let q = (f.new.unwrap())(1);
            let mut item = 0u64;
            assert_eq!((f.pop.unwrap())(q, &mut item), 0);
            assert_eq!((f.push.unwrap())(q, 42), 1);
            assert_eq!((f.push.unwrap())(q, 43), 0, "full");
            assert_eq!((f.pop.unwrap())(q, &mut item), 1);
            assert_eq!(item, 42);
            (f.free.unwrap())(q);

            let f = vs[2].u.refcount;
            let c = (f.new.unwrap())();
            (f.get.unwrap())(c);
            assert_eq!((f.put.unwrap())(c), 0);
            assert_eq!((f.put.unwrap())(c), 1, "the last");
            (f.free.unwrap())(c);

            let f = vs[3].u.op;
            let o = (f.new.unwrap())();
            (f.op.unwrap())(o);
            (f.op.unwrap())(o);
            assert_eq!((f.read.unwrap())(o), 2);
            (f.free.unwrap())(o);
            assert!(vs[4].u.op.read.is_none());
        }
    }
}
