//! A plugin's operation on shared state (`struct atomlab_op`) behind a
//! safe handle: [`OpVariant::make`] gives an [`OpInstance`] whose `op`
//! every thread calls; `read`, when the plugin has one, returns how many
//! operations the state has seen, which the benchmark checks against the
//! calls it made.

use std::ffi::c_void;
use std::sync::Arc;

use crate::abi::{OpFns, VariantFns};
use crate::library::Library;
use crate::variant::{present, Kind, KindFns, PluginVariant};

/// One operation variant of a loaded plugin.
pub type OpVariant = PluginVariant<OpFns>;

impl Kind {
    /// `ATOMLAB_KIND_OP`, named as the enum's variant it once was.
    #[allow(non_upper_case_globals)]
    pub const Op: Kind = Kind::of(crate::abi::KIND_OP);
}

impl KindFns for OpFns {
    const KIND: Kind = Kind::Op;

    unsafe fn from_union(u: &VariantFns) -> OpFns {
        // SAFETY: the caller checked that the kind is op.
        unsafe { u.op }
    }

    /// The operation only: `read` runs once, after the threads stop.
    fn audited(&self) -> Vec<(&'static str, *const c_void)> {
        present([("op", self.op.map(|f| f as *const c_void))])
    }
}

/// An operation that does nothing and has no `read`, called through the
/// ABI's function pointer exactly as a plugin's is: what one indirect call
/// costs here, measured beside the plugin in the same run.
pub fn abi_noop() -> Result<OpVariant, String> {
    use crate::variant::{noop_free, noop_new, noop_obj};
    crate::variant::built_in(
        crate::variant::ABI_NOOP,
        OpFns {
            new: Some(noop_new),
            op: Some(noop_obj),
            read: None,
            free: Some(noop_free),
        },
    )
}

impl OpVariant {
    /// New state from the plugin's `new_`, or why not.
    pub fn make(&self) -> Result<OpInstance, String> {
        let new = self.fns.new.ok_or("no new_ function")?;
        // SAFETY: `new_` of a plugin checked at load; the library stays
        // loaded while `lib` is held.
        let p = unsafe { new() };
        if p.is_null() {
            return Err(format!("{}: new_() returned NULL", self.name));
        }
        Ok(OpInstance {
            ptr: p,
            fns: self.fns,
            _lib: self.lib.clone(),
        })
    }
}

/// One state made by a plugin; freed with its `free_` on drop.
pub struct OpInstance {
    ptr: *mut c_void,
    fns: OpFns,
    _lib: Arc<Library>,
}

// SAFETY: the header's contract: `op` is called from many threads on one
// state, which is the operation under test.
unsafe impl Send for OpInstance {}
// SAFETY: as above.
unsafe impl Sync for OpInstance {}

impl OpInstance {
    /// One operation.
    #[inline]
    pub fn op(&self) {
        if let Some(op) = self.fns.op {
            // SAFETY: the state lives until `self` is dropped.
            unsafe { op(self.ptr) }
        }
    }

    /// The operations the state has seen, if the plugin can say.
    pub fn read(&self) -> Option<u64> {
        let read = self.fns.read?;
        // SAFETY: as in `op`.
        Some(unsafe { read(self.ptr) })
    }
}

impl Drop for OpInstance {
    fn drop(&mut self) {
        if let Some(free) = self.fns.free {
            // SAFETY: made by `new_`, freed once; no `op` runs (it borrows
            // `self`).
            unsafe { free(self.ptr) }
        }
    }
}
