//! AArch64 atomics and barriers by inline assembly, following the Arm
//! Architecture Reference Manual (DDI 0487): LDXR/STXR and their
//! acquire/release forms (C6.2 "Load/Store Exclusive"), the FEAT_LSE atomic
//! memory operations (LDADD with A/L/AL suffixes), and DMB with its domain and
//! type options (B2.3 "Ordering requirements").
//!
//! The LSE functions must only run where the CPU has FEAT_LSE: [`has_lse`] says so, and callers
//! check it before choosing them (an LSE instruction on an ARMv8.0 CPU such as
//! the Cortex-A53 raises SIGILL).

use core::arch::asm;
use std::sync::atomic::AtomicU64;

/// True when the CPU implements FEAT_LSE (ARMv8.1 atomics), from `AT_HWCAP`.
pub fn has_lse() -> bool {
    std::arch::is_aarch64_feature_detected!("lse")
}

macro_rules! llsc_add {
    ($(#[$doc:meta])* $name:ident, $ld:literal, $st:literal) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name(a: &AtomicU64, v: u64) -> u64 {
            let old: u64;
            // SAFETY: `a` is a valid, aligned 8-byte atomic; the exclusive pair
            // retries until the store-exclusive succeeds, so the update is atomic.
            unsafe {
                asm!(
                    "2:",
                    concat!($ld, " {old}, [{ptr}]"),
                    "add {new}, {old}, {v}",
                    concat!($st, " {fail:w}, {new}, [{ptr}]"),
                    "cbnz {fail:w}, 2b",
                    ptr = in(reg) a.as_ptr(),
                    v = in(reg) v,
                    old = out(reg) old,
                    new = out(reg) _,
                    fail = out(reg) _,
                    options(nostack),
                );
            }
            old
        }
    };
}

llsc_add!(
    /// `ldxr`/`stxr` loop: no ordering (C11 relaxed).
    llsc_fetch_add_relaxed, "ldxr", "stxr"
);
llsc_add!(
    /// `ldaxr`/`stxr` loop: acquire.
    llsc_fetch_add_acquire, "ldaxr", "stxr"
);
llsc_add!(
    /// `ldxr`/`stlxr` loop: release.
    llsc_fetch_add_release, "ldxr", "stlxr"
);
llsc_add!(
    /// `ldaxr`/`stlxr` loop: acquire and release, what compilers emit for
    /// a seq_cst RMW without LSE.
    llsc_fetch_add_acq_rel, "ldaxr", "stlxr"
);

macro_rules! lse_add {
    ($(#[$doc:meta])* $name:ident, $insn:literal) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The CPU must implement FEAT_LSE ([`has_lse`]); otherwise SIGILL.
        #[inline(always)]
        pub unsafe fn $name(a: &AtomicU64, v: u64) -> u64 {
            let old: u64;
            // SAFETY: `a` is a valid, aligned 8-byte atomic; the caller
            // guarantees FEAT_LSE. `.arch_extension lse` lets the assembler
            // accept the instruction inline (no call, unlike a
            // `target_feature` function), so it is measured like the LL/SC loop.
            unsafe {
                asm!(
                    ".arch_extension lse",
                    concat!($insn, " {v}, {old}, [{ptr}]"),
                    ptr = in(reg) a.as_ptr(),
                    v = in(reg) v,
                    old = out(reg) old,
                    options(nostack),
                );
            }
            old
        }
    };
}

lse_add!(
    /// `ldadd`: no ordering.
    lse_fetch_add_relaxed, "ldadd"
);
lse_add!(
    /// `ldadda`: acquire.
    lse_fetch_add_acquire, "ldadda"
);
lse_add!(
    /// `ldaddl`: release.
    lse_fetch_add_release, "ldaddl"
);
lse_add!(
    /// `ldaddal`: acquire and release (a seq_cst RMW with LSE).
    lse_fetch_add_acq_rel, "ldaddal"
);

/// `dmb ish`: full barrier, inner shareable domain (Linux `smp_mb()`).
#[inline(always)]
pub fn dmb_ish() {
    // SAFETY: a barrier touches no memory the program owns.
    unsafe { asm!("dmb ish", options(nostack, preserves_flags)) }
}

/// `dmb ishld`: orders earlier loads before later loads and stores
/// (Linux `smp_rmb()`; C11 acquire fence).
#[inline(always)]
pub fn dmb_ishld() {
    // SAFETY: a barrier touches no memory the program owns.
    unsafe { asm!("dmb ishld", options(nostack, preserves_flags)) }
}

/// `dmb ishst`: orders earlier stores before later stores (Linux `smp_wmb()`).
#[inline(always)]
pub fn dmb_ishst() {
    // SAFETY: a barrier touches no memory the program owns.
    unsafe { asm!("dmb ishst", options(nostack, preserves_flags)) }
}
