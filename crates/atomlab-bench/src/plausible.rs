//! Guards against figures that cannot be true.
//!
//! A benchmark harness can be fooled: a clock read late by a descheduled
//! thread, a window that never opened, threads that never overlapped. The
//! checks here compare each figure with what this machine can physically do
//! and mark the record (an [`atomlab_core::FlagKind`]) instead of letting a
//! wrong number pass as data.
//!
//! The physical floor is the latency of one atomic read-modify-write whose
//! result the next one needs, measured once per process on a private cache
//! line ([`rmw_floor_ns`]): a lock hand-off needs at least one such RMW (the
//! acquire reads the lock word it swaps), and critical sections of one lock
//! never overlap, so a fixed number of locked increments cannot finish
//! faster than that many RMWs in a row. Half the measured latency is the
//! threshold, so a quiet machine's jitter never trips it. Throughput of
//! independent RMWs (a counter whose result is unused) can beat the
//! latency on CPUs that pipeline far atomics, so timed counters are held to
//! a quarter of it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use crate::clock;

/// The latency of one dependent atomic read-modify-write on this machine,
/// in ns: the fastest of 25 batches of 2,000. A batch's time is the lesser
/// of its wall time and the thread's CPU time, and the floor is the
/// minimum over batches: a batch the scheduler interrupted cannot raise
/// it, even on a loaded machine where every batch is interrupted (a
/// raised floor would flag honest runs as too fast: two CLI tests under
/// qemu-riscv64 beside other test processes lost a run that way).
pub(crate) fn rmw_floor_ns() -> f64 {
    static FLOOR: OnceLock<f64> = OnceLock::new();
    *FLOOR.get_or_init(|| {
        let cell = AtomicU64::new(0);
        let mut best = f64::INFINITY;
        let mut x = 0u64;
        for _ in 0..25 {
            let (t0, c0) = (clock::monotonic_ns(), clock::thread_cpu_ns());
            for _ in 0..2_000 {
                // ORDERING: SeqCst, as a lock's acquiring swap is at least
                // AcqRel; the returned value feeds the next operation so each
                // waits for the one before (the count stays below 2^63, so the
                // operand is always 1, which the compiler cannot know).
                x = cell.fetch_add((x >> 63) | 1, Ordering::SeqCst);
            }
            let wall = clock::monotonic_ns().saturating_sub(t0);
            let cpu = clock::thread_cpu_ns().saturating_sub(c0);
            // A CPU clock that reads 0 (not provided) does not count.
            let took = if cpu > 0 { wall.min(cpu) } else { wall };
            best = best.min(took as f64 / 2_000.0);
        }
        std::hint::black_box(x);
        best
    })
}

/// Why `ns_per_serial_op` (wall time over operations that cannot overlap,
/// such as the critical sections of one lock) is impossible, if it is.
pub(crate) fn serial_rmw_implausible(ns_per_serial_op: f64) -> Option<String> {
    implausible_below(
        ns_per_serial_op,
        0.5,
        "locked operation that must run one after another",
    )
}

/// Why `ns_per_op` (one thread's time per atomic read-modify-write) is
/// impossible, if it is.
pub(crate) fn thread_rmw_implausible(ns_per_op: f64) -> Option<String> {
    implausible_below(ns_per_op, 0.25, "atomic read-modify-write of one thread")
}

fn implausible_below(ns: f64, factor: f64, what: &str) -> Option<String> {
    if !ns.is_finite() || ns <= 0.0 {
        return Some(format!("{ns} ns per {what} is not a time"));
    }
    let floor = rmw_floor_ns();
    (ns < floor * factor).then(|| {
        format!(
            "{ns:.3} ns per {what} is faster than this machine can do one ({floor:.2} ns measured for a dependent atomic RMW; threshold {:.2} ns): the timing is wrong, not the lock",
            floor * factor
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_a_real_time() {
        let f = rmw_floor_ns();
        // One RMW takes at least a cycle of a 10 GHz clock and, even under
        // emulation, less than 10 µs.
        assert!(f > 0.1 && f < 10_000.0, "floor {f} ns");
    }

    #[test]
    fn the_issue_9_figure_is_caught() {
        // 0.75 ns per locked increment was printed on a 2.4 GHz EPYC whose
        // dependent lock xadd takes about 3 ns.
        if rmw_floor_ns() > 2.0 {
            assert!(serial_rmw_implausible(0.75).is_some());
        }
        assert!(serial_rmw_implausible(rmw_floor_ns() * 0.3).is_some());
        assert!(serial_rmw_implausible(0.0).is_some());
        assert!(serial_rmw_implausible(f64::NAN).is_some());
        assert!(serial_rmw_implausible(rmw_floor_ns() * 3.0).is_none());
        assert!(thread_rmw_implausible(rmw_floor_ns()).is_none());
    }
}
