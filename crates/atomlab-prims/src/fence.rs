//! Fences: the C11/Rust fences and, per ISA, the barrier instructions they
//! map to (x86-64: Intel SDM; aarch64: Arm ARM B2.3, with the
//! `smp_mb`/`smp_rmb`/`smp_wmb` mapping of the Linux kernel's
//! Documentation/memory-barriers.txt).

use crate::sync::Ordering;

/// A fence to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceVariant {
    /// No fence: the baseline the others are compared with.
    None,
    /// `compiler_fence(SeqCst)`: stops compiler reordering, emits nothing.
    Compiler,
    /// `fence(Acquire)`: nothing on x86-64, `dmb ishld` on aarch64.
    Acquire,
    /// `fence(Release)`: nothing on x86-64, `dmb ish` on aarch64.
    Release,
    /// `fence(SeqCst)`: on x86-64 LLVM emits `lock or [rsp], 0` (older
    /// compilers `mfence`), `dmb ish` on aarch64.
    SeqCst,
    /// x86-64 `mfence`.
    Mfence,
    /// x86-64 `lfence`.
    Lfence,
    /// x86-64 `sfence`.
    Sfence,
    /// x86-64 `lock or [rsp], 0` (Linux `smp_mb()`).
    LockedOr,
    /// aarch64 `dmb ish`.
    DmbIsh,
    /// aarch64 `dmb ishld`.
    DmbIshld,
    /// aarch64 `dmb ishst`.
    DmbIshst,
}

impl FenceVariant {
    /// Every variant, portable ones first.
    pub const ALL: [FenceVariant; 12] = [
        FenceVariant::None,
        FenceVariant::Compiler,
        FenceVariant::Acquire,
        FenceVariant::Release,
        FenceVariant::SeqCst,
        FenceVariant::Mfence,
        FenceVariant::Lfence,
        FenceVariant::Sfence,
        FenceVariant::LockedOr,
        FenceVariant::DmbIsh,
        FenceVariant::DmbIshld,
        FenceVariant::DmbIshst,
    ];

    /// The name used on the command line and in records.
    pub fn name(self) -> &'static str {
        match self {
            FenceVariant::None => "none",
            FenceVariant::Compiler => "compiler",
            FenceVariant::Acquire => "acquire",
            FenceVariant::Release => "release",
            FenceVariant::SeqCst => "seq_cst",
            FenceVariant::Mfence => "mfence",
            FenceVariant::Lfence => "lfence",
            FenceVariant::Sfence => "sfence",
            FenceVariant::LockedOr => "lock_or",
            FenceVariant::DmbIsh => "dmb_ish",
            FenceVariant::DmbIshld => "dmb_ishld",
            FenceVariant::DmbIshst => "dmb_ishst",
        }
    }

    /// The ISA the variant needs, if it is not portable.
    pub fn arch(self) -> Option<&'static str> {
        match self {
            FenceVariant::Mfence
            | FenceVariant::Lfence
            | FenceVariant::Sfence
            | FenceVariant::LockedOr => Some("x86_64"),
            FenceVariant::DmbIsh | FenceVariant::DmbIshld | FenceVariant::DmbIshst => {
                Some("aarch64")
            }
            _ => None,
        }
    }

    /// True when this build can execute the variant.
    pub fn runs_here(self) -> bool {
        self.arch().is_none_or(|a| a == std::env::consts::ARCH)
    }
}

impl std::str::FromStr for FenceVariant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        FenceVariant::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| s.to_string())
    }
}

/// Executes fence `v`. Variants for another ISA do nothing; check
/// [`FenceVariant::runs_here`] first.
#[inline(always)]
pub fn execute(v: FenceVariant) {
    match v {
        FenceVariant::None => {}
        // ORDERING: each arm is the fence being measured.
        FenceVariant::Compiler => std::sync::atomic::compiler_fence(Ordering::SeqCst),
        FenceVariant::Acquire => crate::sync::fence(Ordering::Acquire),
        FenceVariant::Release => crate::sync::fence(Ordering::Release),
        FenceVariant::SeqCst => crate::sync::fence(Ordering::SeqCst),
        #[cfg(target_arch = "x86_64")]
        FenceVariant::Mfence => crate::arch::x86_64::mfence(),
        #[cfg(target_arch = "x86_64")]
        FenceVariant::Lfence => crate::arch::x86_64::lfence(),
        #[cfg(target_arch = "x86_64")]
        FenceVariant::Sfence => crate::arch::x86_64::sfence(),
        #[cfg(target_arch = "x86_64")]
        FenceVariant::LockedOr => crate::arch::x86_64::locked_or_stack(),
        #[cfg(target_arch = "aarch64")]
        FenceVariant::DmbIsh => crate::arch::aarch64::dmb_ish(),
        #[cfg(target_arch = "aarch64")]
        FenceVariant::DmbIshld => crate::arch::aarch64::dmb_ishld(),
        #[cfg(target_arch = "aarch64")]
        FenceVariant::DmbIshst => crate::arch::aarch64::dmb_ishst(),
        #[allow(unreachable_patterns)]
        _ => {}
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_variant_that_runs_here_executes() {
        for v in FenceVariant::ALL {
            assert_eq!(v.name().parse::<FenceVariant>(), Ok(v));
            if v.runs_here() {
                execute(v);
            }
        }
        assert!(FenceVariant::SeqCst.runs_here());
        assert_eq!(
            FenceVariant::Mfence.runs_here(),
            cfg!(target_arch = "x86_64")
        );
    }
}
