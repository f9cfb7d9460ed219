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
mod lifter;
pub mod riscv64;
mod state;
pub mod x86_64;

use atomlab_audit::Arch;

pub use lifter::{Lifted, Lifter, Refusal};
pub use state::{Locations, Registers, OBJECT};

/// The lifter for files of `arch`, if verify lifts it.
pub fn lifter(arch: Arch) -> Option<&'static dyn Lifter> {
    match arch {
        Arch::Aarch64 => Some(&aarch64::Aarch64),
        Arch::Riscv64 => Some(&riscv64::Riscv64),
        Arch::X86_64 => Some(&x86_64::X86_64),
    }
}
