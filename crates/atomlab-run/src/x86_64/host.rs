//! What running generated code needs of an x86-64 host: the time-stamp
//! counter (RDTSC, Intel SDM Vol. 2B), the System V ABI's entry, and
//! nothing for new code (x86 keeps instruction fetch coherent with stores
//! to the same linear addresses: SDM Vol. 3A, 11.6 "Self-modifying code";
//! the page is mapped executable by another thread before this one runs
//! it, and `mprotect` serialises).

use std::io;

/// A thread's generated function: one pointer (RDI) to its frame.
pub(crate) type ThreadFn = extern "sysv64" fn(*mut u64);

/// The time-stamp counter.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    // SAFETY: RDTSC has no memory effects; every x86-64 CPU has it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// The counter's frequency, when it is not the TSC that the harness's
/// delays are written in: none here.
pub(crate) fn timer_hz() -> Option<u64> {
    None
}

/// Makes `len` bytes of new code at `p` fetchable by every thread:
/// nothing to do on x86-64.
pub(crate) fn sync_code(_p: *const u8, _len: usize) -> io::Result<()> {
    Ok(())
}

/// Before running code another thread wrote: nothing on x86-64.
#[inline(always)]
pub(crate) fn before_new_code() {}

/// A full fence as litmus7's `mbar()` writes it on x86-64: MFENCE (Intel
/// SDM Vol. 2B). Rust's `fence(SeqCst)` is a locked OR to the stack
/// there (`lock orl $0,-0x40(%rsp)`): as strong for ordinary memory, but
/// not the same wait, and how long the thread that raised a start flag
/// waits before its test decides how far ahead of the others it starts.
#[inline(always)]
pub(crate) fn full_fence() {
    // SAFETY: MFENCE has no operands; the asm's default memory clobber
    // keeps the compiler from moving accesses across it.
    unsafe { core::arch::asm!("mfence", options(nostack, preserves_flags)) };
}

/// Whether this CPU has the Linux hwcap `hwcap`: none of the AArch64
/// features `run` asks about exists here.
pub(crate) fn has(_hwcap: &str) -> bool {
    false
}
