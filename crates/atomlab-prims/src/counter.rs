//! Shared counters: the simplest atomic read-modify-write, in the ways a
//! compiler or a programmer can express it.
//!
//! - [`CounterVariant::FetchAdd`]: `fetch_add`, which the compiler lowers to
//!   `lock xadd`/`lock add` on x86-64, to an outline helper or `ldadd*` or an
//!   LL/SC loop on aarch64 depending on target features, to `amoadd` on RISC-V.
//! - [`CounterVariant::CasLoop`]: a load then a `compare_exchange_weak` retry
//!   loop, the shape of every RMW that hardware has no single instruction for.
//! - [`CounterVariant::LlSc`] and [`CounterVariant::Lse`] (aarch64 only): the
//!   two ways an Arm CPU can do it, by inline assembly, so both can be measured
//!   on one CPU whatever the compiler chose (the LL/SC vs LSE comparison of
//!   the Crystal mutex thread and the nginx rebuild).

use crate::sync::{AtomicU64, Ordering};

/// How a counter is incremented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterVariant {
    /// `AtomicU64::fetch_add`.
    FetchAdd,
    /// Load, then `compare_exchange_weak` until it succeeds.
    CasLoop,
    /// aarch64 `ldxr`/`stxr` loop (with `a`/`l` forms per ordering).
    LlSc,
    /// aarch64 FEAT_LSE `ldadd` (with `a`/`l`/`al` forms per ordering).
    Lse,
}

/// Why a variant cannot run on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

impl CounterVariant {
    /// Every variant, in the order tables list them.
    pub const ALL: [CounterVariant; 4] = [
        CounterVariant::FetchAdd,
        CounterVariant::CasLoop,
        CounterVariant::LlSc,
        CounterVariant::Lse,
    ];

    /// The name used on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            CounterVariant::FetchAdd => "fetch_add",
            CounterVariant::CasLoop => "cas_loop",
            CounterVariant::LlSc => "llsc",
            CounterVariant::Lse => "lse",
        }
    }

    /// Whether this CPU can run the variant, and if not why.
    pub fn available(self) -> Result<(), Unavailable> {
        match self {
            CounterVariant::FetchAdd | CounterVariant::CasLoop => Ok(()),
            CounterVariant::LlSc => {
                if cfg!(target_arch = "aarch64") {
                    Ok(())
                } else {
                    Err(Unavailable(format!(
                        "variant llsc is aarch64 LDXR/STXR assembly; this is {}",
                        std::env::consts::ARCH
                    )))
                }
            }
            CounterVariant::Lse => {
                #[cfg(target_arch = "aarch64")]
                {
                    if crate::arch::aarch64::has_lse() {
                        Ok(())
                    } else {
                        Err(Unavailable(
                            "variant lse needs FEAT_LSE (ARMv8.1 atomics) and this CPU does not \
                             report it (AT_HWCAP); it would die with SIGILL. Use llsc or fetch_add."
                                .into(),
                        ))
                    }
                }
                #[cfg(not(target_arch = "aarch64"))]
                {
                    Err(Unavailable(format!(
                        "variant lse is aarch64 LDADD assembly; this is {}",
                        std::env::consts::ARCH
                    )))
                }
            }
        }
    }

    /// The explicit aarch64 variant this CPU would pick at run time: LSE where
    /// FEAT_LSE exists, LL/SC otherwise (what outline atomics do per call).
    pub fn native_explicit() -> Option<CounterVariant> {
        #[cfg(target_arch = "aarch64")]
        {
            Some(if crate::arch::aarch64::has_lse() {
                CounterVariant::Lse
            } else {
                CounterVariant::LlSc
            })
        }
        #[cfg(not(target_arch = "aarch64"))]
        {
            None
        }
    }
}

impl std::str::FromStr for CounterVariant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        CounterVariant::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| s.to_string())
    }
}

/// `fetch_add(1, order)`; returns the previous value.
#[inline(always)]
pub fn fetch_add(c: &AtomicU64, order: Ordering) -> u64 {
    // ORDERING: the caller's choice; the measurement is of that ordering.
    c.fetch_add(1, order)
}

/// A compare-exchange retry loop adding 1; returns the previous value.
#[inline(always)]
pub fn cas_loop_add(c: &AtomicU64, order: Ordering) -> u64 {
    // ORDERING: Relaxed for the first read: the CAS below revalidates it.
    let mut old = c.load(Ordering::Relaxed);
    loop {
        // ORDERING: success takes the caller's ordering; failure only re-reads
        // the value for the next attempt, so Relaxed suffices.
        match c.compare_exchange_weak(old, old.wrapping_add(1), order, Ordering::Relaxed) {
            Ok(prev) => return prev,
            Err(now) => old = now,
        }
    }
}

/// The LL/SC loop with the exclusive pair matching `order`.
#[cfg(all(target_arch = "aarch64", not(loom)))]
#[inline(always)]
pub fn llsc_add(c: &AtomicU64, order: Ordering) -> u64 {
    use crate::arch::aarch64 as a;
    // ORDERING: ldxr/stxr for Relaxed, ldaxr for Acquire, stlxr for Release,
    // both for AcqRel and SeqCst (the mapping of Arm's C/C++ ABI).
    match order {
        Ordering::Relaxed => a::llsc_fetch_add_relaxed(c, 1),
        Ordering::Acquire => a::llsc_fetch_add_acquire(c, 1),
        Ordering::Release => a::llsc_fetch_add_release(c, 1),
        _ => a::llsc_fetch_add_acq_rel(c, 1),
    }
}

/// The LSE `ldadd` with the suffix matching `order`.
///
/// # Safety
/// The CPU must implement FEAT_LSE (check [`CounterVariant::available`]).
#[cfg(all(target_arch = "aarch64", not(loom)))]
#[inline(always)]
pub unsafe fn lse_add(c: &AtomicU64, order: Ordering) -> u64 {
    use crate::arch::aarch64 as a;
    // SAFETY: forwarded from this function's contract.
    // ORDERING: ldadd for Relaxed, ldadda Acquire, ldaddl Release, ldaddal for
    // AcqRel and SeqCst (Arm's C/C++ ABI mapping).
    unsafe {
        match order {
            Ordering::Relaxed => a::lse_fetch_add_relaxed(c, 1),
            Ordering::Acquire => a::lse_fetch_add_acquire(c, 1),
            Ordering::Release => a::lse_fetch_add_release(c, 1),
            _ => a::lse_fetch_add_acq_rel(c, 1),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for v in CounterVariant::ALL {
            assert_eq!(v.name().parse::<CounterVariant>(), Ok(v));
        }
        assert!("ldadd".parse::<CounterVariant>().is_err());
    }

    #[test]
    fn portable_variants_count_exactly() {
        let c = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..10_000 {
                        fetch_add(&c, Ordering::Relaxed);
                        cas_loop_add(&c, Ordering::AcqRel);
                    }
                });
            }
        });
        assert_eq!(c.load(Ordering::Relaxed), 40_000);
    }

    #[test]
    fn arch_variants_are_refused_or_count() {
        #[cfg(not(target_arch = "aarch64"))]
        {
            assert!(CounterVariant::LlSc.available().is_err());
            assert!(CounterVariant::Lse.available().is_err());
            assert_eq!(CounterVariant::native_explicit(), None);
        }
        #[cfg(target_arch = "aarch64")]
        {
            let c = AtomicU64::new(0);
            for o in [
                Ordering::Relaxed,
                Ordering::Acquire,
                Ordering::Release,
                Ordering::SeqCst,
            ] {
                assert_eq!(llsc_add(&c, o), c.load(Ordering::Relaxed) - 1);
            }
            assert_eq!(c.load(Ordering::Relaxed), 4);
            if CounterVariant::Lse.available().is_ok() {
                for o in [
                    Ordering::Relaxed,
                    Ordering::Acquire,
                    Ordering::Release,
                    Ordering::SeqCst,
                ] {
                    // SAFETY: FEAT_LSE checked just above.
                    unsafe { lse_add(&c, o) };
                }
                assert_eq!(c.load(Ordering::Relaxed), 8);
            }
        }
    }
}
