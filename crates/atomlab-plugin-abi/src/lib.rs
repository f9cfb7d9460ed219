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

/// The `extern "C"` functions [`export_plugin!`] puts in the description,
/// one instance per type: a lock's here, the other kinds' in `spsc`,
/// `refcount` and `op`; `free` drops an object of any kind.
pub mod shims {
    use super::*;
    use std::ffi::c_int;

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

    /// `free_` of any kind: drops the box.
    ///
    /// # Safety
    /// `p` comes from the `new_` of the same `T` (a `Box<T>`), is freed
    /// once, when no thread uses it any more.
    pub unsafe extern "C" fn free<T>(p: *mut c_void) {
        // SAFETY: made by Box::into_raw in a `new_` of T, freed once.
        drop(unsafe { Box::from_raw(p.cast::<T>()) })
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

    /// The `struct atomlab_spsc` of `Q`.
    pub const fn spsc_fns<Q: Spsc>() -> abi::SpscFns {
        abi::SpscFns {
            new: Some(spsc::new::<Q>),
            push: Some(spsc::push::<Q>),
            pop: Some(spsc::pop::<Q>),
            free: Some(free::<Q>),
        }
    }

    /// The `struct atomlab_refcount` of `R`.
    pub const fn refcount_fns<R: Refcount>() -> abi::RefcountFns {
        abi::RefcountFns {
            new: Some(refcount::new::<R>),
            get: Some(refcount::get::<R>),
            put: Some(refcount::put::<R>),
            free: Some(free::<R>),
        }
    }

    /// The `struct atomlab_op` of `O`.
    pub const fn op_fns<O: Op>() -> abi::OpFns {
        abi::OpFns {
            new: Some(op::new::<O>),
            op: Some(op::op::<O>),
            read: if O::HAS_READ {
                Some(op::read::<O>)
            } else {
                None
            },
            free: Some(free::<O>),
        }
    }

    /// A queue's functions.
    pub mod spsc {
        use super::*;

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
    }

    /// A reference count's functions.
    pub mod refcount {
        use super::*;

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
    }

    /// An operation's functions.
    pub mod op {
        use super::*;

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
    }
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
/// A kind it does not know is a compile error that names the four:
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
                    kind: $crate::__atomlab_kind!($kind),
                    u: $crate::__atomlab_fns!($kind, $ty),
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

/// For [`export_plugin!`] only: `enum atomlab_kind` of a kind's keyword.
#[doc(hidden)]
#[macro_export]
macro_rules! __atomlab_kind {
    (lock) => {
        $crate::abi::KIND_LOCK
    };
    (spsc) => {
        $crate::abi::KIND_SPSC
    };
    (refcount) => {
        $crate::abi::KIND_REFCOUNT
    };
    (op) => {
        $crate::abi::KIND_OP
    };
    ($other:ident) => {
        compile_error!(concat!(
            "export_plugin!: unknown kind `",
            stringify!($other),
            "`; write lock, spsc, refcount or op before the variant's name"
        ))
    };
}

/// For [`export_plugin!`] only: the union member of a kind's keyword.
#[doc(hidden)]
#[macro_export]
macro_rules! __atomlab_fns {
    (lock, $ty:ty) => {
        $crate::abi::VariantFns {
            lock: $crate::shims::lock_fns::<$ty>(),
        }
    };
    (spsc, $ty:ty) => {
        $crate::abi::VariantFns {
            spsc: $crate::shims::spsc_fns::<$ty>(),
        }
    };
    (refcount, $ty:ty) => {
        $crate::abi::VariantFns {
            refcount: $crate::shims::refcount_fns::<$ty>(),
        }
    };
    (op, $ty:ty) => {
        $crate::abi::VariantFns {
            op: $crate::shims::op_fns::<$ty>(),
        }
    };
    // The unknown kind is reported once, by __atomlab_kind!.
    ($other:ident, $ty:ty) => {
        $crate::abi::VariantFns {
            lock: $crate::abi::LockFns {
                new: None,
                lock: None,
                unlock: None,
                try_lock: None,
                free: None,
            },
        }
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
