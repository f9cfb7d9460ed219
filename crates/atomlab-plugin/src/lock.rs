//! A plugin's lock (`struct atomlab_lock`) behind a safe handle: a
//! [`LockVariant`] makes [`LockInstance`]s, and an instance runs a closure
//! with the lock held ([`LockInstance::with`]), unlocking even if the
//! closure panics, so that `unlock` is only ever called by the holder.

use std::ffi::c_void;
use std::sync::Arc;

use crate::abi::{LockFns, VariantFns};
use crate::library::Library;
use crate::variant::{present, Kind, KindFns, PluginVariant};

pub use crate::variant::{variant_names, NameClash};

/// One lock variant of a loaded plugin.
pub type LockVariant = PluginVariant<LockFns>;

impl Kind {
    /// `ATOMLAB_KIND_LOCK`, named as the enum's variant it once was.
    #[allow(non_upper_case_globals)]
    pub const Lock: Kind = Kind::of(crate::abi::KIND_LOCK);
}

impl KindFns for LockFns {
    const KIND: Kind = Kind::Lock;

    unsafe fn from_union(u: &VariantFns) -> LockFns {
        // SAFETY: the caller checked that the kind is lock.
        unsafe { u.lock }
    }

    fn audited(&self) -> Vec<(&'static str, *const c_void)> {
        present([
            ("lock", self.lock.map(|f| f as *const c_void)),
            ("unlock", self.unlock.map(|f| f as *const c_void)),
            ("try_lock", self.try_lock.map(|f| f as *const c_void)),
        ])
    }
}

pub use crate::variant::ABI_NOOP;

/// A lock whose `lock` and `unlock` do nothing, called through the ABI's
/// function pointers exactly as a plugin's are: its time per operation is
/// what the two indirect calls cost on this machine, measured beside the
/// plugin in the same run (a built-in lock through these calls would pay
/// the same).
pub fn abi_noop() -> Result<LockVariant, String> {
    use crate::variant::{noop_free, noop_new, noop_obj};
    built_in(
        ABI_NOOP,
        LockFns {
            new: Some(noop_new),
            lock: Some(noop_obj),
            unlock: Some(noop_obj),
            try_lock: None,
            free: Some(noop_free),
        },
    )
}

/// A lock of atomlab's own, called through `fns` exactly as a plugin's
/// functions are (`bench lock --via-abi`, [`abi_noop`]).
pub fn built_in(name: &str, fns: LockFns) -> Result<LockVariant, String> {
    crate::variant::built_in(name, fns)
}

impl LockVariant {
    /// Whether the plugin provides `try_lock` (`bench lock` then measures
    /// it too, `stress mutex` enters every other section with it).
    pub fn has_try_lock(&self) -> bool {
        self.fns.try_lock.is_some()
    }

    /// A new unlocked lock from the plugin's `new_`, or why not.
    pub fn make(&self) -> Result<LockInstance, String> {
        let new = self.fns.new.ok_or("no new_ function")?;
        // SAFETY: `new_` of a plugin checked at load; the library stays
        // loaded while `lib` is held.
        let p = unsafe { new() };
        if p.is_null() {
            return Err(format!("{}: new_() returned NULL", self.name));
        }
        Ok(LockInstance {
            ptr: p,
            fns: self.fns,
            _lib: self.lib.clone(),
        })
    }
}

/// One lock made by a plugin; freed with the plugin's `free_` on drop.
pub struct LockInstance {
    ptr: *mut c_void,
    fns: LockFns,
    _lib: Arc<Library>,
}

// SAFETY: the header's contract: `lock`/`unlock` are called from many
// threads on one object, which is what a lock is for.
unsafe impl Send for LockInstance {}
// SAFETY: as above.
unsafe impl Sync for LockInstance {}

/// Unlocks on drop (the closure in [`LockInstance::with`] may panic).
struct Held<'a>(&'a LockInstance);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(unlock) = self.0.fns.unlock {
            // SAFETY: this thread holds the lock (Held is made only after
            // `lock` returned).
            unsafe { unlock(self.0.ptr) }
        }
    }
}

impl LockInstance {
    /// Runs `f` with the lock held.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        if let Some(lock) = self.fns.lock {
            // SAFETY: the object came from this plugin's `new_` and is not
            // freed while `self` lives.
            unsafe { lock(self.ptr) };
        }
        let _held = Held(self);
        f()
    }

    /// Whether the plugin provides `try_lock`.
    pub fn has_try_lock(&self) -> bool {
        self.fns.try_lock.is_some()
    }

    /// Runs `f` if the plugin's `try_lock` took the lock; `None` if it did
    /// not, or the plugin has no `try_lock`.
    pub fn try_with<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
        let try_lock = self.fns.try_lock?;
        // SAFETY: as in `with`.
        if unsafe { try_lock(self.ptr) } == 0 {
            return None;
        }
        let _held = Held(self);
        Some(f())
    }
}

impl Drop for LockInstance {
    fn drop(&mut self) {
        if let Some(free) = self.fns.free {
            // SAFETY: made by `new_`, freed once, unlocked (every `with`
            // has returned: they borrow `self`).
            unsafe { free(self.ptr) }
        }
    }
}
