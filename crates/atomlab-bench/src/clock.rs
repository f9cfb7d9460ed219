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
pub(crate) fn ref_ticks() -> u64 {
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
pub(crate) fn ref_source() -> Option<Source> {
    if cfg!(target_arch = "x86_64") {
        Some(Source::Tsc)
    } else if cfg!(target_arch = "aarch64") {
        Some(Source::Cntvct)
    } else {
        None
    }
}

/// Human name of the reference counter.
pub(crate) fn ref_name() -> &'static str {
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
pub(crate) fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Voluntary context switches of the calling thread so far
/// (`getrusage(RUSAGE_THREAD)`'s `ru_nvcsw`, getrusage(2)): the times it
/// gave up its CPU itself (a futex wait, a sleep), as opposed to being
/// preempted. 0 where it cannot be read.
pub(crate) fn thread_voluntary_switches() -> u64 {
    // SAFETY: getrusage writes a plain struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage struct of this thread's stack.
    let ok = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) } == 0;
    if ok {
        u.ru_nvcsw.max(0) as u64
    } else {
        0
    }
}

/// CPU time consumed by the calling thread, in nanoseconds.
#[inline]
pub(crate) fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The clock fixed-rate schedules and latency stamps use: the reference
/// counter where there is one, else `CLOCK_MONOTONIC` in ns.
#[inline(always)]
pub(crate) fn sched_now() -> u64 {
    if ref_source().is_some() {
        ref_ticks()
    } else {
        monotonic_ns()
    }
}

/// Ticks of [`sched_now`] per nanosecond, measured once per process over 20 ms.
pub(crate) fn sched_ticks_per_ns() -> f64 {
    static RATE: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *RATE.get_or_init(|| {
        if ref_source().is_none() {
            return 1.0;
        }
        let (t0, n0) = (sched_now(), monotonic_ns());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (t1, n1) = (sched_now(), monotonic_ns());
        let r = t1.wrapping_sub(t0) as f64 / (n1 - n0).max(1) as f64;
        if r.is_finite() && r > 0.0 {
            r
        } else {
            1.0
        }
    })
}

/// Brackets around one operation longer than this held a deschedule, not
/// the operation's work.
pub(crate) const BRACKET_MAX_NS: f64 = 20_000.0;

/// Ticks from `a` to `b` as work, or 0 when the bracket is longer than
/// [`BRACKET_MAX_NS`] (the thread was descheduled inside it).
#[inline(always)]
pub(crate) fn busy_bracket(a: u64, b: u64, ticks_per_ns: f64) -> u64 {
    let d = b.wrapping_sub(a);
    if (d as f64) < BRACKET_MAX_NS * ticks_per_ns {
        d
    } else {
        0
    }
}

/// A schedule's waits sleep until this long before the deadline, then spin,
/// when the deadline is further than [`SLEEP_MIN_NS`] away: timer slack and
/// wake-up latency are tens of µs, so the spin absorbs them.
pub(crate) const SLEEP_MARGIN_NS: f64 = 100_000.0;
/// Closer than this to its deadline a schedule spins (no sleeping in the hot
/// loop at high rates).
pub(crate) const SLEEP_MIN_NS: f64 = 200_000.0;

/// Waits until [`sched_now`] reaches `due`: sleeps first when `may_sleep`
/// and the deadline is far, then spins. Returns the time it saw last.
#[inline]
pub(crate) fn wait_until(due: u64, ticks_per_ns: f64, may_sleep: bool) -> u64 {
    let mut t = sched_now();
    if may_sleep && (due.saturating_sub(t) as f64) > SLEEP_MIN_NS * ticks_per_ns {
        let ns = due.saturating_sub(t) as f64 / ticks_per_ns - SLEEP_MARGIN_NS;
        std::thread::sleep(std::time::Duration::from_nanos(ns as u64));
        t = sched_now();
    }
    while t < due {
        std::hint::spin_loop();
        t = sched_now();
    }
    t
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
