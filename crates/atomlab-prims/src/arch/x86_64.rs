//! x86-64 fences (Intel SDM Vol. 2A/2B: MFENCE, LFENCE, SFENCE; Vol. 3A §9.2
//! on the memory-ordering model) and the locked no-op that compilers use as a
//! cheaper full barrier.

use core::arch::asm;

/// `mfence`: orders all earlier loads and stores before all later ones.
#[inline(always)]
pub(crate) fn mfence() {
    // SAFETY: a fence touches no memory the program owns.
    unsafe { asm!("mfence", options(nostack, preserves_flags)) }
}

/// `lfence`: serialises instruction dispatch; orders loads (rarely needed for
/// ordering on x86-TSO, used as a speculation barrier).
#[inline(always)]
pub(crate) fn lfence() {
    // SAFETY: a fence touches no memory the program owns.
    unsafe { asm!("lfence", options(nostack, preserves_flags)) }
}

/// `sfence`: orders stores (only matters for non-temporal stores on x86-TSO).
#[inline(always)]
pub(crate) fn sfence() {
    // SAFETY: a fence touches no memory the program owns.
    unsafe { asm!("sfence", options(nostack, preserves_flags)) }
}

/// `lock or qword ptr [rsp], 0`: a locked read-modify-write of the stack top,
/// a full barrier that is cheaper than `mfence` on many cores (what GCC and
/// the Linux kernel's `smp_mb()` use on x86-64).
#[inline(always)]
pub(crate) fn locked_or_stack() {
    // SAFETY: or-ing zero into the word at the stack pointer leaves it unchanged;
    // the red zone below rsp is untouched.
    unsafe { asm!("lock or qword ptr [rsp], 0", options(preserves_flags)) }
}
