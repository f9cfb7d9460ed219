//! What lifting builds beside the code: each thread's registers by name
//! ([`Registers`]) and the test's shared locations ([`Locations`]): the
//! fields of the objects the client passes and of the heap's regions
//! ([`Heap`]; what allocation and `free` do is in heap.rs).

use std::collections::HashMap;

use atomlab_litmus::{LocId, Reg};

/// The value the object's address register holds in the checker (a
/// stand-in: addresses are resolved to fields when code is lifted), kept
/// nonzero for NULL tests.
pub const OBJECT: i64 = 0x1000;

/// The registers of one thread of the test being built, by name.
#[derive(Debug, Default)]
pub struct Registers {
    /// Names, by [`Reg`].
    pub names: Vec<String>,
    /// Pointer arguments besides the object, for the next function
    /// lifted: (argument number, object it points to at offset 0), as
    /// pop's `uint64_t *item` points to the consumer's item. A lifter
    /// resolves accesses through them to that object's fields.
    pub pointers: Vec<(usize, usize)>,
}

impl Registers {
    /// The register called `name`, added on first use.
    pub fn get(&mut self, name: &str) -> Reg {
        if let Some(r) = self.names.iter().position(|n| n == name) {
            return r;
        }
        self.names.push(name.to_string());
        self.names.len() - 1
    }
}

/// The shared locations of the test being built: one per field (object,
/// byte offset) that some lifted access touches, with its width.
#[derive(Debug, Default)]
pub struct Locations {
    /// Names, by [`LocId`] (`lock`, `lock+4`, `data`).
    pub names: Vec<String>,
    /// (object, offset) → location and access width in bytes.
    fields: HashMap<(usize, i64), (LocId, u8)>,
    /// Object names, by object index.
    pub objects: Vec<String>,
    /// Objects whose address the client passes as a plain integer that
    /// stands for it ([`OBJECT`] for the object argument):
    /// an address computed from it with an index is compared against
    /// that integer plus each offset the index can give.
    pub stand_ins: Vec<(usize, i64)>,
    /// Regions from the allocator (heap.rs).
    pub heap: Heap,
}

impl Locations {
    /// A new object called `name`; returns its index.
    pub fn object(&mut self, name: &str) -> usize {
        self.objects.push(name.to_string());
        self.objects.len() - 1
    }

    /// The integer the client passes for object `obj`'s address, if any.
    pub fn stand_in(&self, obj: usize) -> Option<i64> {
        self.stand_ins.iter().find(|s| s.0 == obj).map(|s| s.1)
    }

    /// The locations of object `obj`'s fields, by offset.
    pub fn fields_of(&self, obj: usize) -> Vec<LocId> {
        self.fields_with(obj).into_iter().map(|f| f.1).collect()
    }

    /// Object `obj`'s fields: (offset, location, width), by offset.
    pub fn fields_with(&self, obj: usize) -> Vec<(i64, LocId, u8)> {
        let mut f: Vec<(i64, LocId, u8)> = self
            .fields
            .iter()
            .filter(|((o, _), _)| *o == obj)
            .map(|((_, off), (l, w))| (*off, *l, *w))
            .collect();
        f.sort_unstable();
        f
    }

    /// A plain location that is not part of an object (the client's data).
    pub fn plain(&mut self, name: &str) -> LocId {
        self.names.push(name.to_string());
        self.names.len() - 1
    }

    /// The location of `width` bytes at `offset` in object `obj`. Two
    /// accesses to one field must have one width, and fields must not
    /// overlap: the models have no mixed-size semantics.
    pub fn field(&mut self, obj: usize, offset: i64, width: u8) -> Result<LocId, String> {
        if let Some(&(l, w)) = self.fields.get(&(obj, offset)) {
            if w != width {
                return Err(format!(
                    "accesses {} with {w}-byte and {width}-byte accesses (mixed sizes are not modelled)",
                    self.names[l]
                ));
            }
            return Ok(l);
        }
        for (&(o, off), &(l, w)) in &self.fields {
            if o == obj && offset < off + i64::from(w) && off < offset + i64::from(width) {
                return Err(format!(
                    "accesses {width} bytes at offset {offset}, overlapping {} ({w} bytes): mixed sizes are not modelled",
                    self.names[l]
                ));
            }
        }
        let base = &self.objects[obj];
        let name = if offset == 0 {
            base.clone()
        } else {
            format!("{base}+{offset}")
        };
        self.names.push(name);
        let l = self.names.len() - 1;
        self.fields.insert((obj, offset), (l, width));
        Ok(l)
    }
}

/// Which allocation a region stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionKey {
    /// The call instruction's address.
    pub site: u64,
    /// The client thread.
    pub thread: usize,
    /// The client's call of a plugin function, counted per thread.
    pub call: usize,
    /// `malloc`, `calloc` or `aligned_alloc`.
    pub allocator: String,
}

/// One region.
#[derive(Debug, Clone)]
pub struct Region {
    /// What it stands for.
    pub key: RegionKey,
    /// Its object in [`Locations`].
    pub obj: usize,
    /// Its address.
    pub base: i64,
}

/// The regions of the test being built, and where the client is.
#[derive(Debug, Default)]
pub struct Heap {
    /// The thread being built.
    pub thread: usize,
    /// Its current call of a plugin function.
    pub call: usize,
    /// Every region so far.
    pub regions: Vec<Region>,
    /// The regions are all known (the second pass of a client's build):
    /// an access through a loaded pointer may select among them.
    pub complete: bool,
    /// Some access went through a pointer loaded from memory.
    pub dynamic: bool,
    /// The fields (offset, width) accesses through loaded pointers asked
    /// for in the first pass, for [`super::heap::layout`].
    pub selected: Vec<(i64, u8)>,
    /// Allocator calls are followed (the client's functions); when not,
    /// the lifter refuses them, as `new_`'s reading needs
    /// (`crate::initial`).
    pub follow: bool,
    /// `free` may be given the client's object (its `free_`).
    pub object_freeable: bool,
    /// The location an access through a pointer to no region reaches.
    pub(super) wild: Option<LocId>,
    /// The size of the file's TLS block.
    pub tls_size: u64,
}
