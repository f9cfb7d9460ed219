//! Clocks: the CPU's constant-rate reference counter and the OS clocks.
//!
//! The reference counter is the time-stamp counter on x86-64 (`rdtsc`, Intel
//! SDM Vol. 3B §18.17: invariant TSC, constant rate whatever the core clock)
//! and the generic timer's virtual count on aarch64 (`CNTVCT_EL0`, Arm ARM
//! D11: typically 24–100 MHz, far coarser than the core clock). Neither counts
//! core cycles: figures from them are labelled reference cycles, and only the
//! PMU's `cycles` event gives core cycles.

use atomlab_core::Source;

/// Reads the reference counter, or 0 where there is none.
#[inline(always)]
pub fn ref_ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc is available on every x86-64 CPU and has no side effects.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let t: u64;
        // SAFETY: CNTVCT_EL0 is readable from EL0 on Linux (CNTKCTL_EL1.EL0VCTEN).
        unsafe { core::arch::asm!("mrs {t}, cntvct_el0", t = out(reg) t, options(nomem, nostack)) };
        t
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        0
    }
}

/// The reference counter's source label, `None` where there is none.
pub fn ref_source() -> Option<Source> {
    if cfg!(target_arch = "x86_64") {
        Some(Source::Tsc)
    } else if cfg!(target_arch = "aarch64") {
        Some(Source::Cntvct)
    } else {
        None
    }
}

/// Human name of the reference counter.
pub fn ref_name() -> &'static str {
    if cfg!(target_arch = "x86_64") {
        "TSC"
    } else if cfg!(target_arch = "aarch64") {
        "CNTVCT"
    } else {
        "none"
    }
}

fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the kernel to fill.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `CLOCK_MONOTONIC` in nanoseconds.
#[inline]
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CPU time consumed by the calling thread, in nanoseconds.
#[inline]
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_advance() {
        let (t0, r0, c0) = (monotonic_ns(), ref_ticks(), thread_cpu_ns());
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        assert!(monotonic_ns() > t0);
        assert!(thread_cpu_ns() > c0);
        if ref_source().is_some() {
            assert!(ref_ticks() > r0);
        }
        std::hint::black_box(x);
    }
}
