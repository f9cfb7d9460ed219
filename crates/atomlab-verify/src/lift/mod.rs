//! Machine code to the checker's instructions ([`atomlab_litmus::Instr`]):
//! a plugin function and everything it calls inside the file, inlined,
//! with every memory operand resolved to a field of the object the
//! function is given (one location per field), of an object a pointer
//! argument points to ([`Registers::pointers`]), or to one of a few
//! fields picked by a masked register index ([`index`]).
//!
//! Three instruction sets are lifted: AArch64 ([`aarch64`]), RV64
//! ([`riscv64`]) and x86-64 ([`x86_64`]). The lowering of each instruction
//! mirrors atomlab-litmus's parser of the same dialect
//! (`dialect/{aarch64,riscv,x86_64}.rs`), so lifted code means what the
//! same instruction written in a litmus test means, and each
//! architecture's own model (`aarch64`, `riscv`, `x86tso`) judges it as it
//! judges that test.

pub mod aarch64;
mod flow;
pub mod heap;
pub mod index;
pub mod riscv64;
pub mod x86_64;

use std::collections::HashMap;

use atomlab_audit::{Arch, PluginFile};
use atomlab_litmus::{Instr, LocId, Reg};

/// What a lift gives: the code (branch targets relative to its start; a
/// target of `code.len()` ends it) and whether it read the LSE flag.
#[derive(Debug, Clone)]
pub struct Lifted {
    /// The instructions.
    pub code: Vec<Instr>,
    /// For each instruction of `code`, the address in the file of the
    /// machine instruction it was lifted from.
    pub origins: Vec<u64>,
    /// Whether an outline-atomics helper chose between LSE and LL/SC.
    pub reads_lse_flag: bool,
}

/// One lifter per architecture: the register that holds a function's
/// first argument, the litmus dialect the lifted code is judged in, and
/// the lift itself. The one list of lifted architectures is [`lifter`].
pub trait Lifter {
    /// The register name of the first integer argument (`X0`, `a0`, `rdi`).
    fn first_argument(&self) -> &'static str;
    /// The register name of the second integer argument (`X1`, `a1`,
    /// `rsi`): push's item, pop's item pointer.
    fn second_argument(&self) -> &'static str;
    /// The register name an integer result is returned in (`X0`, `a0`,
    /// `rax`).
    fn result(&self) -> &'static str;
    /// The litmus architecture whose models judge the lifted code.
    fn litmus_arch(&self) -> atomlab_litmus::Arch;
    /// The machine instruction at `addr`, as a disassembler prints it.
    fn disassemble(&self, file: &PluginFile<'_>, addr: u64) -> Option<String>;
    /// The architecture's full barrier and its mnemonic (`--advise` tries
    /// adding it); `None`: not offered.
    fn full_barrier(&self) -> Option<(atomlab_litmus::Fence, &'static str)> {
        None
    }
    /// The acquire (or release) form of the disassembled `instruction`
    /// (`ldxr w1, [x0]` → `ldaxr`), for advice; `None` when there is none
    /// or it is not known.
    fn ordered_form(&self, instruction: &str, acquire: bool) -> Option<String> {
        let _ = (instruction, acquire);
        None
    }
    /// Lifts the function at `entry`, its first argument holding object
    /// `obj`'s address; `lse` chooses outline atomics' path (aarch64 only).
    fn lift(
        &self,
        file: &PluginFile<'_>,
        entry: u64,
        obj: usize,
        lse: bool,
        regs: &mut Registers,
        locs: &mut Locations,
    ) -> Result<Lifted, Refusal>;
}

/// The lifter for files of `arch`, if verify lifts it.
pub fn lifter(arch: Arch) -> Option<&'static dyn Lifter> {
    match arch {
        Arch::Aarch64 => Some(&aarch64::Aarch64),
        Arch::Riscv64 => Some(&riscv64::Riscv64),
        Arch::X86_64 => Some(&x86_64::X86_64),
    }
}

/// Why a function cannot be lifted: the instruction or call, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// Its address in the file.
    pub addr: u64,
    /// Where that is, by symbol (`tas_lock+0x8`).
    pub place: String,
    /// What it is and why it stops verify.
    pub what: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {:#x} ({})", self.what, self.addr, self.place)
    }
}

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
    /// stands for it ([`crate::client::OBJECT`] for the object argument):
    /// an address computed from it with an index is compared against
    /// that integer plus each offset the index can give.
    pub stand_ins: Vec<(usize, i64)>,
    /// Regions from the allocator ([`heap`]).
    pub heap: heap::Heap,
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
