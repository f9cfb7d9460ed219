//! `bench pingpong`: core-to-core cache-line round trips, as a matrix over
//! CPU pairs (ccbench's load-from-modified: Trigonakis et al., SOSP 2013).
//!
//! Two threads pinned to CPUs a and b share one padded line. The initiator
//! stores an odd value and spins until it reads the next even one; the
//! responder spins until it reads the odd value and stores the even one. A
//! round trip is therefore two transfers of a modified line between the
//! cores plus the loads that miss on it. The number of round trips per run is
//! calibrated to last `--duration`.

use std::sync::atomic::{AtomicU64, Ordering};

use atomlab_core::{Metric, Record, Source, Unit};
use atomlab_prims::CachePadded;

use super::Progress;
use crate::clock;
use crate::harness::SpinBarrier;
use crate::plan::{BenchError, Plan, Scenario, TableKind};
use atomlab_thread as affinity;

/// The one variant: load from a line the other core has modified.
pub const VARIANT: &str = "load-from-modified";

/// The scenario.
pub struct Pingpong;

impl Scenario for Pingpong {
    fn name(&self) -> &'static str {
        "pingpong"
    }

    fn variants(&self) -> Vec<&'static str> {
        vec![VARIANT]
    }

    fn table(&self) -> TableKind {
        TableKind::RoundTrip
    }

    /// None: no offered rates.
    fn fields(&self) -> &'static [crate::options::Field] {
        &[]
    }

    fn splits_threads(&self) -> bool {
        false
    }

    /// One cell per pair of allowed CPUs, or one unpinned pair.
    fn cells(&self, plan: &Plan) -> usize {
        let n = affinity::allowed_cpus().len();
        if plan.pin && n > 1 {
            n * (n - 1) / 2
        } else {
            1
        }
    }

    fn run(
        &self,
        plan: &Plan,
        _pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        run(plan, progress)
    }
}

/// Runs the pair matrix of `plan`: all pairs of allowed CPUs (a < b), or,
/// with `--pin none`, one unpinned pair.
fn run(plan: &Plan, progress: Progress<'_>) -> Result<Vec<Record>, BenchError> {
    let cpus = affinity::allowed_cpus();
    let pairs: Vec<(Option<usize>, Option<usize>)> = if plan.pin {
        if cpus.len() < 2 {
            return Err(BenchError::Unavailable(
                "pingpong needs two CPUs and this process may use one".into(),
            ));
        }
        let mut v = Vec::new();
        for (i, &a) in cpus.iter().enumerate() {
            for &b in &cpus[i + 1..] {
                v.push((Some(a), Some(b)));
            }
        }
        v
    } else {
        vec![(None, None)]
    };
    let mut records = Vec::new();
    for (a, b) in pairs {
        let label = |c: Option<usize>| c.map_or("any".to_string(), |c| c.to_string());
        progress(atomlab_core::progress::Event::Step(&format!(
            "bench pingpong cpu {} <-> cpu {} ({} x {:.2}s)",
            label(a),
            label(b),
            plan.runs,
            plan.duration.as_secs_f64()
        )));
        records.push(pair(plan, a, b).map_err(|e| super::cell_failed(plan, VARIANT, e))?);
    }
    Ok(records)
}

/// The record of the pair `a`, `b`, or why its two threads could not
/// both start (nothing measured then).
fn pair(
    plan: &Plan,
    a: Option<usize>,
    b: Option<usize>,
) -> Result<Record, atomlab_thread::SpawnError> {
    let line = CachePadded::new(AtomicU64::new(0));
    let barrier = SpinBarrier::new(3);
    let trips = CachePadded::new(AtomicU64::new(1000));
    let mut ns = Vec::new();
    let mut ticks = Vec::new();
    // The lower of the two threads' CPU shares in each run, in per cent.
    let mut cpu = Vec::new();
    std::thread::scope(|s| -> Result<(), atomlab_thread::SpawnError> {
        let (line, barrier, trips) = (&line, &barrier, &trips);
        let total_runs = plan.runs + 1;
        // The two wait for each other at the barrier: neither runs until
        // both have started.
        let mut group = atomlab_thread::Group::new(s, 2, atomlab_thread::DEFAULT_STACK)?;
        let initiator = group.spawn("1 of 2 (the initiator)".into(), move || {
            if let Some(c) = a {
                let _ = affinity::pin_current_thread(c);
            }
            let mut out = Vec::new();
            for run in 0..total_runs {
                barrier.wait();
                // ORDERING: Relaxed: the count was published by the barrier.
                let n = trips.load(Ordering::Relaxed);
                let c0 = clock::thread_cpu_ns();
                let (t0, r0) = (clock::monotonic_ns(), clock::ref_ticks());
                for i in 0..n {
                    // ORDERING: Release/Acquire so each side's write is seen as
                    // a message, as a real hand-off would use; on x86 these
                    // are plain movs, on aarch64 stlr/ldar.
                    line.store(2 * i + 1, Ordering::Release);
                    while line.load(Ordering::Acquire) != 2 * i + 2 {
                        std::hint::spin_loop();
                    }
                }
                let (t1, r1) = (clock::monotonic_ns(), clock::ref_ticks());
                let share =
                    clock::thread_cpu_ns().saturating_sub(c0) as f64 / (t1 - t0).max(1) as f64;
                out.push((n, t1 - t0, r1.wrapping_sub(r0), share));
                if run == 0 {
                    // Calibrate from the warm-up: enough round trips to fill
                    // --duration. The barrier publishes the count.
                    let per_trip = ((t1 - t0) as f64 / n as f64).max(1.0);
                    let want = (plan.duration.as_nanos() as f64 / per_trip) as u64;
                    // ORDERING: Relaxed: published by the barrier below.
                    trips.store(want.clamp(1000, 1_000_000_000), Ordering::Relaxed);
                }
                barrier.wait();
            }
            out
        })?;
        let responder = group.spawn("2 of 2 (the responder)".into(), move || {
            if let Some(c) = b {
                let _ = affinity::pin_current_thread(c);
            }
            let mut shares = Vec::new();
            for _ in 0..total_runs {
                barrier.wait();
                // ORDERING: Relaxed: published by the barrier.
                let n = trips.load(Ordering::Relaxed);
                let (c0, t0) = (clock::thread_cpu_ns(), clock::monotonic_ns());
                for i in 0..n {
                    // ORDERING: pairs with the initiator's Release store.
                    while line.load(Ordering::Acquire) != 2 * i + 1 {
                        std::hint::spin_loop();
                    }
                    // ORDERING: Release: the reply the initiator acquires.
                    line.store(2 * i + 2, Ordering::Release);
                }
                let wall = clock::monotonic_ns().saturating_sub(t0).max(1);
                shares.push(clock::thread_cpu_ns().saturating_sub(c0) as f64 / wall as f64);
                barrier.wait();
            }
            shares
        })?;
        group.open();
        for _ in 0..total_runs {
            // ORDERING: Relaxed: published to both threads by the barrier.
            line.store(0, Ordering::Relaxed);
            barrier.wait();
            barrier.wait();
        }
        let samples = initiator.join().unwrap_or_default();
        let replies = responder.join().unwrap_or_default();
        for ((n, dt, dr, share), other) in samples.into_iter().zip(replies).skip(1) {
            ns.push(dt as f64 / n as f64);
            ticks.push(dr as f64 / n as f64);
            cpu.push(share.min(other) * 100.0);
        }
        Ok(())
    })?;
    let mut r = Record::new("bench", "pingpong", VARIANT);
    r.param("cpu_a", a.map_or(serde_json::Value::Null, |c| c.into()))
        .param("cpu_b", b.map_or(serde_json::Value::Null, |c| c.into()))
        .param("threads", 2)
        .param("duration_s", plan.duration.as_secs_f64())
        .param("runs", plan.runs)
        .param("pin", plan.pin);
    r.metrics.push(Metric::new(
        "ns_per_roundtrip",
        Unit::NanosPerOp,
        Source::ClockGettime,
        ns,
    ));
    if let Some(src) = clock::ref_source() {
        r.metrics.push(Metric::new(
            "ref_cycles_per_roundtrip",
            Unit::RefCyclesPerOp,
            src,
            ticks,
        ));
    }
    // Both threads spin: a round trip taken while either was off its CPU
    // is other work's time slice, not the line's travel (1.15-2.4 us
    // round trips were `ok`, with no CPU figure recorded).
    let lowest = atomlab_core::Summary::of(&cpu).map(|s| s.median);
    r.metrics.push(Metric::new(
        "cpu_utilisation",
        Unit::Percent,
        Source::Rusage,
        cpu,
    ));
    if let Some(share) = lowest.filter(|s| *s < super::CPU_SHARE_NEEDED * 100.0) {
        r.flag(
            atomlab_core::FlagKind::OffCpu,
            Some("ns_per_roundtrip"),
            format!(
                "a side had {share:.0}% of a CPU while timed (median of the runs), spinning: other work's time slices are in the round trips; see `atomlab machine` for the load"
            ),
        );
    }
    Ok(r)
}
