//! herd's litmus dialects, one file each: C (with the Linux kernel's
//! primitives), AArch64, X86, X86_64 and RISCV. The assembly dialects'
//! threads come as one table ([`table`]) whose cells each dialect lowers,
//! with the operand helpers they share ([`operand`]).

pub(crate) mod aarch64;
pub(crate) mod c;
mod operand;
pub(crate) mod riscv;
pub(crate) mod table;
pub(crate) mod x86;
pub(crate) mod x86_64;
