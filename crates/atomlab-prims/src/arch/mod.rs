//! Per-ISA instructions by inline assembly: the ones a compiler will not pick
//! for you on demand (an LL/SC loop on a CPU with LSE, a specific `dmb`
//! option, `lfence`).

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;
