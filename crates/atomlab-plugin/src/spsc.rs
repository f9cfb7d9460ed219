//! A plugin's single-producer single-consumer queue (`struct
//! atomlab_spsc`) behind safe handles: [`SpscVariant::make`] gives a
//! [`Producer`] and a [`Consumer`], each movable to one thread and not
//! shareable (`Send`, not `Sync`, methods on `&mut self`), so that the
//! header's contract (push from one thread, pop from one other) holds by
//! construction, as in rtrb's split ring. Items are nonzero 64-bit words.

use std::ffi::c_void;
use std::sync::Arc;

use crate::abi::{SpscFns, VariantFns};
use crate::library::Library;
use crate::variant::{present, Kind, KindFns, PluginVariant};

/// One queue variant of a loaded plugin.
pub type SpscVariant = PluginVariant<SpscFns>;

impl Kind {
    /// `ATOMLAB_KIND_SPSC`, named as the enum's variant it once was.
    #[allow(non_upper_case_globals)]
    pub const Spsc: Kind = Kind::of(crate::abi::KIND_SPSC);
}

impl KindFns for SpscFns {
    const KIND: Kind = Kind::Spsc;

    unsafe fn from_union(u: &VariantFns) -> SpscFns {
        // SAFETY: the caller checked that the kind is spsc.
        unsafe { u.spsc }
    }

    fn audited(&self) -> Vec<(&'static str, *const c_void)> {
        present([
            ("push", self.push.map(|f| f as *const c_void)),
            ("pop", self.pop.map(|f| f as *const c_void)),
        ])
    }
}

/// The queue both ends share; freed with the plugin's `free_` when both
/// ends are dropped.
struct Queue {
    ptr: *mut c_void,
    fns: SpscFns,
    _lib: Arc<Library>,
}

// SAFETY: the queue object is made to be used by two threads at once
// (a producer and a consumer): the header's contract. Each end is held by
// one thread, and the ends' methods take `&mut self`.
unsafe impl Send for Queue {}
// SAFETY: as above.
unsafe impl Sync for Queue {}

impl Drop for Queue {
    fn drop(&mut self) {
        if let Some(free) = self.fns.free {
            // SAFETY: made by `new_`, freed once, when neither end is
            // left (both held an Arc).
            unsafe { free(self.ptr) }
        }
    }
}

/// The producer's end: only it pushes.
pub struct Producer(Arc<Queue>);
/// The consumer's end: only it pops.
pub struct Consumer(Arc<Queue>);

impl SpscVariant {
    /// A new empty queue of at least `capacity` items from the plugin's
    /// `new_`, as its two ends, or why not.
    pub fn make(&self, capacity: usize) -> Result<(Producer, Consumer), String> {
        let new = self.fns.new.ok_or("no new_ function")?;
        // SAFETY: `new_` of a plugin checked at load; the library stays
        // loaded while `lib` is held.
        let p = unsafe { new(capacity) };
        if p.is_null() {
            return Err(format!("{}: new_({capacity}) returned NULL", self.name));
        }
        let q = Arc::new(Queue {
            ptr: p,
            fns: self.fns,
            _lib: self.lib.clone(),
        });
        Ok((Producer(q.clone()), Consumer(q)))
    }
}

impl Producer {
    /// Enqueues `item` (nonzero); false when the queue is full.
    #[inline]
    pub fn push(&mut self, item: u64) -> bool {
        debug_assert!(item != 0, "the ABI's items are nonzero");
        match self.0.fns.push {
            // SAFETY: the queue is live (held by this Arc) and only this
            // end pushes.
            Some(push) => unsafe { push(self.0.ptr, item) != 0 },
            None => false,
        }
    }
}

impl Consumer {
    /// Takes the oldest item, if there is one.
    #[inline]
    pub fn pop(&mut self) -> Option<u64> {
        let pop = self.0.fns.pop?;
        let mut item = 0u64;
        // SAFETY: the queue is live and only this end pops; `item` is a
        // valid place for one u64.
        (unsafe { pop(self.0.ptr, &mut item) } != 0).then_some(item)
    }
}
