//! A plugin's reference count (`struct atomlab_refcount`) behind a safe
//! handle: [`RefcountVariant::make`] gives a [`RefcountInstance`] holding
//! one reference, whose `get` and `put` any thread may call. atomlab owns
//! the object's lifetime: the plugin's `free_` is called once, when the
//! instance is dropped, after every thread has stopped using it, whether
//! or not a `put` said it was the last (a broken count's "last" must not
//! free memory that other threads still use: the stress test reports that
//! as a violation instead of crashing on it).

use std::ffi::c_void;
use std::sync::Arc;

use crate::abi::{RefcountFns, VariantFns};
use crate::library::Library;
use crate::variant::{present, Kind, KindFns, PluginVariant};

/// One reference-count variant of a loaded plugin.
pub type RefcountVariant = PluginVariant<RefcountFns>;

impl Kind {
    /// `ATOMLAB_KIND_REFCOUNT`, named as the enum's variant it once was.
    #[allow(non_upper_case_globals)]
    pub const Refcount: Kind = Kind::of(crate::abi::KIND_REFCOUNT);
}

impl KindFns for RefcountFns {
    const KIND: Kind = Kind::Refcount;

    unsafe fn from_union(u: &VariantFns) -> RefcountFns {
        // SAFETY: the caller checked that the kind is refcount.
        unsafe { u.refcount }
    }

    fn audited(&self) -> Vec<(&'static str, *const c_void)> {
        present([
            ("get", self.get.map(|f| f as *const c_void)),
            ("put", self.put.map(|f| f as *const c_void)),
        ])
    }
}

/// A count whose `get` does nothing and whose `put` never says "last",
/// called through the ABI's function pointers exactly as a plugin's are:
/// what the two indirect calls cost here, measured beside the plugin in
/// the same run.
pub fn abi_noop() -> Result<RefcountVariant, String> {
    use crate::variant::{noop_free, noop_new, noop_obj};
    extern "C" fn never_last(_: *mut c_void) -> std::ffi::c_int {
        0
    }
    crate::variant::built_in(
        crate::variant::ABI_NOOP,
        RefcountFns {
            new: Some(noop_new),
            get: Some(noop_obj),
            put: Some(never_last),
            free: Some(noop_free),
        },
    )
}

impl RefcountVariant {
    /// A new object with one reference from the plugin's `new_`, or why not.
    pub fn make(&self) -> Result<RefcountInstance, String> {
        let new = self.fns.new.ok_or("no new_ function")?;
        // SAFETY: `new_` of a plugin checked at load; the library stays
        // loaded while `lib` is held.
        let p = unsafe { new() };
        if p.is_null() {
            return Err(format!("{}: new_() returned NULL", self.name));
        }
        Ok(RefcountInstance {
            ptr: p,
            fns: self.fns,
            _lib: self.lib.clone(),
        })
    }
}

/// One counted object made by a plugin; freed with its `free_` on drop.
pub struct RefcountInstance {
    ptr: *mut c_void,
    fns: RefcountFns,
    _lib: Arc<Library>,
}

// SAFETY: the header's contract: `get` and `put` are called from many
// threads on one object, which is what a reference count is for.
unsafe impl Send for RefcountInstance {}
// SAFETY: as above.
unsafe impl Sync for RefcountInstance {}

impl RefcountInstance {
    /// Takes a reference.
    #[inline]
    pub fn get(&self) {
        if let Some(get) = self.fns.get {
            // SAFETY: the object lives until `self` is dropped.
            unsafe { get(self.ptr) }
        }
    }

    /// Drops a reference; true when the plugin says it was the last.
    #[inline]
    pub fn put(&self) -> bool {
        match self.fns.put {
            // SAFETY: as in `get`.
            Some(put) => unsafe { put(self.ptr) != 0 },
            None => false,
        }
    }
}

impl Drop for RefcountInstance {
    fn drop(&mut self) {
        if let Some(free) = self.fns.free {
            // SAFETY: made by `new_`, freed once; no `get` or `put` runs
            // (they borrow `self`).
            unsafe { free(self.ptr) }
        }
    }
}
