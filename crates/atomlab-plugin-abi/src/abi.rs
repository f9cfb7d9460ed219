//! The C ABI of `include/atomlab.h`, version [`ABI_VERSION`], as
//! `#[repr(C)]` types. A nullable C function pointer is an
//! `Option<unsafe extern "C" fn …>` (the null-pointer optimisation the
//! Rust reference guarantees for `Option` of a function pointer).

use std::ffi::{c_char, c_int, c_void};

/// `ATOMLAB_PLUGIN_ABI_VERSION`: the newest version this atomlab runs.
pub const ABI_VERSION: u32 = 1;

/// `ATOMLAB_PLUGIN_ENTRY`, NUL-terminated for `dlsym`.
pub const ENTRY: &[u8] = b"atomlab_plugin\0";

/// `ATOMLAB_KIND_LOCK`.
pub const KIND_LOCK: u32 = 1;
/// `ATOMLAB_KIND_SPSC`.
pub const KIND_SPSC: u32 = 2;
/// `ATOMLAB_KIND_REFCOUNT`.
pub const KIND_REFCOUNT: u32 = 3;
/// `ATOMLAB_KIND_OP`.
pub const KIND_OP: u32 = 4;

/// One kind of variant as include/atomlab.h defines it: its `enum
/// atomlab_kind` value, its name (`ATOMLAB_KIND_<NAME>`, its member of
/// `union u` and its word on the command line), what one variant of it is
/// for people, and the members of its struct of functions, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindDef {
    /// Its `enum atomlab_kind` value.
    pub value: u32,
    /// `lock`, `spsc`, `refcount`, `op`.
    pub name: &'static str,
    /// What one variant is, for people ("a built-in lock").
    pub noun: &'static str,
    /// Its struct's members, in order (`new_`, `lock`, …): each a
    /// nullable function pointer, one word.
    pub members: &'static [&'static str],
    /// The members the header says may be NULL (`try_lock`, `read`);
    /// the loader refuses a variant with any other member NULL.
    pub optional: &'static [&'static str],
}

/// The one list of kinds: the loader's `Kind`, verify's reader of a
/// description from the file and the header's layout test all read it
/// (tests/header_layout.rs compiles each member name against the header).
pub const KINDS: [KindDef; 4] = [
    KindDef {
        value: KIND_LOCK,
        name: "lock",
        noun: "lock",
        members: &["new_", "lock", "unlock", "try_lock", "free_"],
        optional: &["try_lock"],
    },
    KindDef {
        value: KIND_SPSC,
        name: "spsc",
        noun: "queue",
        members: &["new_", "push", "pop", "free_"],
        optional: &[],
    },
    KindDef {
        value: KIND_REFCOUNT,
        name: "refcount",
        noun: "reference count",
        members: &["new_", "get", "put", "free_"],
        optional: &[],
    },
    KindDef {
        value: KIND_OP,
        name: "op",
        noun: "operation",
        members: &["new_", "op", "read", "free_"],
        optional: &["read"],
    },
];

/// A function with no argument returning an object.
pub type NewFn = Option<unsafe extern "C" fn() -> *mut c_void>;
/// A function taking the object.
pub type ObjFn = Option<unsafe extern "C" fn(*mut c_void)>;
/// A function taking the object and returning a C truth value.
pub type ObjIntFn = Option<unsafe extern "C" fn(*mut c_void) -> c_int>;

/// `struct atomlab_lock`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct LockFns {
    /// `new_`.
    pub new: NewFn,
    /// `lock`.
    pub lock: ObjFn,
    /// `unlock`.
    pub unlock: ObjFn,
    /// `try_lock` (may be null).
    pub try_lock: ObjIntFn,
    /// `free_`.
    pub free: ObjFn,
}

/// `struct atomlab_spsc`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct SpscFns {
    /// `new_(capacity)`.
    pub new: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    /// `push`.
    pub push: Option<unsafe extern "C" fn(*mut c_void, u64) -> c_int>,
    /// `pop`.
    pub pop: Option<unsafe extern "C" fn(*mut c_void, *mut u64) -> c_int>,
    /// `free_`.
    pub free: ObjFn,
}

/// `struct atomlab_refcount`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RefcountFns {
    /// `new_`.
    pub new: NewFn,
    /// `get`.
    pub get: ObjFn,
    /// `put`: nonzero when that was the last reference.
    pub put: ObjIntFn,
    /// `free_`.
    pub free: ObjFn,
}

/// `struct atomlab_op`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct OpFns {
    /// `new_`.
    pub new: NewFn,
    /// `op`.
    pub op: ObjFn,
    /// `read` (may be null).
    pub read: Option<unsafe extern "C" fn(*mut c_void) -> u64>,
    /// `free_`.
    pub free: ObjFn,
}

/// The union in `struct atomlab_variant`: every member is a struct of
/// nullable function pointers, one word each, at offset 0, so a kind's
/// members are the union's first words ([`VariantFns::words`]).
#[repr(C)]
#[derive(Clone, Copy)]
pub union VariantFns {
    /// `u.lock`.
    pub lock: LockFns,
    /// `u.spsc`.
    pub spsc: SpscFns,
    /// `u.refcount`.
    pub refcount: RefcountFns,
    /// `u.op`.
    pub op: OpFns,
}

/// The most members a kind has: the union's size in words.
pub const MAX_MEMBERS: usize = 5;

impl VariantFns {
    /// The first `n` words of the union: the members of a kind with `n`
    /// members, in order, each NULL or a function.
    ///
    /// # Safety
    /// `n` is at most the member count of the kind whose member of the
    /// union was written (those words are initialised); it is also at
    /// most [`MAX_MEMBERS`] (checked).
    pub unsafe fn words(&self, n: usize) -> &[*const c_void] {
        assert!(n <= MAX_MEMBERS, "a kind has at most {MAX_MEMBERS} members");
        // SAFETY: every member of the union is a `#[repr(C)]` struct of
        // `Option<extern "C" fn>`s, each one pointer wide with None as
        // NULL (the null-pointer optimisation), starting at offset 0; the
        // caller vouches that the first `n` were written.
        unsafe { std::slice::from_raw_parts((self as *const Self).cast::<*const c_void>(), n) }
    }
}

/// `struct atomlab_variant`.
#[repr(C)]
pub struct Variant {
    /// `name`.
    pub name: *const c_char,
    /// `kind` (`enum atomlab_kind`).
    pub kind: u32,
    /// `u`.
    pub u: VariantFns,
}

/// `struct atomlab_plugin`.
#[repr(C)]
pub struct Descriptor {
    /// `abi_version`.
    pub abi_version: u32,
    /// `name`.
    pub name: *const c_char,
    /// `n_variants`.
    pub n_variants: usize,
    /// `variants`.
    pub variants: *const Variant,
}

/// The entry point's type.
pub type EntryFn = unsafe extern "C" fn() -> *const Descriptor;

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout a C compiler gives the header's structs on LP64
    /// targets (every pointer 8 bytes): five pointers for the largest
    /// member of the union.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn layout_matches_the_header_on_lp64() {
        assert_eq!(std::mem::size_of::<LockFns>(), 40);
        assert_eq!(std::mem::size_of::<VariantFns>(), 40);
        assert_eq!(std::mem::size_of::<Variant>(), 56);
        assert_eq!(std::mem::offset_of!(Variant, u), 16);
        assert_eq!(std::mem::size_of::<Descriptor>(), 32);
    }

    /// [`VariantFns::words`] reads the union as words: it is
    /// [`MAX_MEMBERS`] pointers, and every kind's optional members are
    /// its members.
    #[test]
    fn the_union_is_its_largest_kinds_words() {
        assert_eq!(
            std::mem::size_of::<VariantFns>(),
            MAX_MEMBERS * std::mem::size_of::<*const c_void>()
        );
        assert_eq!(
            KINDS.iter().map(|k| k.members.len()).max(),
            Some(MAX_MEMBERS)
        );
        for k in KINDS {
            assert!(
                k.optional.iter().all(|m| k.members.contains(m)),
                "{}",
                k.name
            );
        }
    }
}
