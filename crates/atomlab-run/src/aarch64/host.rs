//! What running generated code needs of an AArch64 host: the generic
//! timer's virtual count (CNTVCT_EL0) and frequency (CNTFRQ_EL0), the
//! AAPCS64 entry, cache maintenance for new code and the ISB each thread
//! issues before running it (Arm ARM DDI 0487, B2.4.4 "Concurrent
//! modification and execution of instructions": the sequence given
//! there), and the hwcaps of FEAT_LSE and FEAT_LRCPC.

use std::io;

/// A thread's generated function: one pointer (X0) to its frame.
pub(crate) type ThreadFn = extern "C" fn(*mut u64);

/// The generic timer's virtual count.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    let t: u64;
    // SAFETY: reading the virtual counter has no side effects; Linux lets
    // EL0 read CNTVCT_EL0.
    unsafe { core::arch::asm!("mrs {}, cntvct_el0", out(reg) t, options(nomem, nostack)) };
    t
}

/// The generic timer's frequency, CNTFRQ_EL0.
pub(crate) fn timer_hz() -> Option<u64> {
    let f: u64;
    // SAFETY: reading CNTFRQ_EL0 has no side effects; EL0 may read it.
    unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) f, options(nomem, nostack)) };
    Some(f)
}

/// Cleans `len` bytes at `p` from the data cache to the point of
/// unification and invalidates them in the instruction cache, for every
/// core of the inner-shareable domain (DC CVAU, DSB ISH, IC IVAU, DSB ISH),
/// with the line sizes CTR_EL0 gives (Linux lets EL0 read it).
pub(crate) fn sync_code(p: *const u8, len: usize) -> io::Result<()> {
    let ctr: u64;
    // SAFETY: reading CTR_EL0 has no side effects; Linux allows it at EL0
    // (SCTLR_EL1.UCT, or it emulates the read).
    unsafe { core::arch::asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
    let dline = 4usize << ((ctr >> 16) & 15);
    let iline = 4usize << (ctr & 15);
    let (start, end) = (p as usize, p as usize + len);
    let mut a = start & !(dline - 1);
    while a < end {
        // SAFETY: `a` is within (the cache line of) the caller's readable
        // mapping; DC CVAU only writes dirty lines back.
        unsafe { core::arch::asm!("dc cvau, {}", in(reg) a, options(nostack)) };
        a += dline;
    }
    // SAFETY: a barrier, no operands.
    unsafe { core::arch::asm!("dsb ish", options(nostack)) };
    let mut a = start & !(iline - 1);
    while a < end {
        // SAFETY: as above; IC IVAU only invalidates instruction cache lines.
        unsafe { core::arch::asm!("ic ivau, {}", in(reg) a, options(nostack)) };
        a += iline;
    }
    // SAFETY: barriers, no operands.
    unsafe { core::arch::asm!("dsb ish", "isb", options(nostack)) };
    Ok(())
}

/// Before running code another thread wrote: a context synchronisation
/// event (ISB), the last step of the Arm ARM's sequence.
#[inline(always)]
pub(crate) fn before_new_code() {
    // SAFETY: ISB has no operands and no memory effects.
    unsafe { core::arch::asm!("isb", options(nostack)) };
}

/// A full fence as litmus7's `mbar()` writes it on AArch64: DMB ISH (what
/// Rust's `fence(SeqCst)` is too; written out beside x86-64's MFENCE).
#[inline(always)]
pub(crate) fn full_fence() {
    // SAFETY: DMB ISH has no operands; the asm's default memory clobber
    // keeps the compiler from moving accesses across it.
    unsafe { core::arch::asm!("dmb ish", options(nostack, preserves_flags)) };
}

/// Whether this CPU has the feature Linux's hwcaps call `hwcap` (`lse`,
/// `rcpc`).
pub(crate) fn has(hwcap: &str) -> bool {
    match hwcap {
        "lse" => std::arch::is_aarch64_feature_detected!("lse"),
        "rcpc" => std::arch::is_aarch64_feature_detected!("rcpc"),
        _ => false,
    }
}
