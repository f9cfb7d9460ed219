//! What the detectors saw: violations counted by kind, and the first one
//! kept in full (which thread, which operation, how long into the run).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A kind of violation: something a correct primitive can never produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A lock lost increments of the counter it protects.
    LostUpdate,
    /// Two threads inside one critical section.
    MutualExclusion,
    /// The buffer appended to under the lock was overwritten or lost items.
    BufferCorruption,
    /// A queue item arrived out of order (lost, duplicated or stale).
    OutOfOrder,
    /// A queue item's payload did not match its checksum.
    CorruptPayload,
    /// A seqlock reader accepted a torn snapshot.
    TornRead,
    /// A seqlock reader accepted a snapshot older than one it had seen.
    WentBackwards,
    /// An object was released twice.
    DoubleRelease,
    /// An object was used after its release.
    UseAfterRelease,
    /// An object was released while a reference to it was still held.
    EarlyRelease,
    /// An object was never released although every reference was dropped.
    NeverReleased,
    /// A saturating count wrapped, or a saturated object was released.
    SaturationBroken,
    /// A sleeping consumer was not woken for an item whose producer had
    /// already decided not to ring (the doorbell's store-buffering outcome).
    LostWakeup,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 13] = [
        Kind::LostUpdate,
        Kind::MutualExclusion,
        Kind::BufferCorruption,
        Kind::OutOfOrder,
        Kind::CorruptPayload,
        Kind::TornRead,
        Kind::WentBackwards,
        Kind::DoubleRelease,
        Kind::UseAfterRelease,
        Kind::EarlyRelease,
        Kind::NeverReleased,
        Kind::SaturationBroken,
        Kind::LostWakeup,
    ];

    /// The snake_case name used in records.
    pub fn name(self) -> &'static str {
        match self {
            Kind::LostUpdate => "lost_update",
            Kind::MutualExclusion => "mutual_exclusion",
            Kind::BufferCorruption => "buffer_corruption",
            Kind::OutOfOrder => "out_of_order",
            Kind::CorruptPayload => "corrupt_payload",
            Kind::TornRead => "torn_read",
            Kind::WentBackwards => "went_backwards",
            Kind::DoubleRelease => "double_release",
            Kind::UseAfterRelease => "use_after_release",
            Kind::EarlyRelease => "early_release",
            Kind::NeverReleased => "never_released",
            Kind::SaturationBroken => "saturation_broken",
            Kind::LostWakeup => "lost_wakeup",
        }
    }

    fn index(self) -> usize {
        Kind::ALL.iter().position(|k| *k == self).unwrap_or(0)
    }
}

/// The first violation of a run, in detail.
#[derive(Debug, Clone)]
pub struct Violation {
    /// Its kind.
    pub kind: Kind,
    /// What was seen, in words.
    pub detail: String,
    /// Time from the start of the run.
    pub after: Duration,
}

/// Shared by the threads of one run.
#[derive(Debug)]
pub struct Detector {
    start: Mutex<Instant>,
    counts: [AtomicU64; 13],
    seen: AtomicBool,
    first: Mutex<Option<Violation>>,
    cpu_ns: AtomicU64,
    stop: AtomicBool,
    clock_started: AtomicBool,
}

impl Default for Detector {
    fn default() -> Self {
        Self::new()
    }
}

impl Detector {
    /// A detector whose clock starts now.
    pub fn new() -> Self {
        Detector {
            start: Mutex::new(Instant::now()),
            counts: Default::default(),
            seen: AtomicBool::new(false),
            first: Mutex::new(None),
            cpu_ns: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            clock_started: AtomicBool::new(false),
        }
    }

    /// Starts the clock when the threads are first released; later phases
    /// of the same run (a second set of threads) keep the first start.
    pub fn restart(&self) {
        // ORDERING: Relaxed: only the coordinating thread calls this.
        if !self.clock_started.swap(true, Ordering::Relaxed) {
            *self.start.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        }
    }

    /// Records `n` violations of `kind`; `detail` is only built for the
    /// first violation of the run.
    #[cold]
    #[inline(never)]
    pub fn report(&self, kind: Kind, n: u64, detail: impl FnOnce() -> String) {
        let after = self
            .start
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed();
        // ORDERING: Relaxed: counters read after the threads are joined.
        self.counts[kind.index()].fetch_add(n, Ordering::Relaxed);
        // ORDERING: Relaxed: only picks which thread records the first
        // violation; the Mutex orders the record itself.
        if !self.seen.swap(true, Ordering::Relaxed) {
            let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
            if first.is_none() {
                *first = Some(Violation {
                    kind,
                    detail: detail(),
                    after,
                });
            }
        }
    }

    /// Asks the workers to stop at their next operation (`--timeout`).
    pub fn request_stop(&self) {
        // ORDERING: Relaxed: a request; the workers' results are read after join.
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether the run was asked to stop.
    #[inline(always)]
    pub fn stopping(&self) -> bool {
        // ORDERING: Relaxed: a request (see `request_stop`).
        self.stop.load(Ordering::Relaxed)
    }

    /// Adds a worker's CPU time during the run.
    pub fn add_cpu_ns(&self, ns: u64) {
        // ORDERING: Relaxed: a sum read after the threads are joined.
        self.cpu_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// The workers' CPU time during the run, in seconds.
    pub fn cpu_seconds(&self) -> f64 {
        // ORDERING: read after the threads are joined (join synchronises).
        self.cpu_ns.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// Violations by kind (only kinds seen).
    pub fn counts(&self) -> Vec<(Kind, u64)> {
        Kind::ALL
            .iter()
            // ORDERING: read after the threads are joined (join synchronises).
            .map(|&k| (k, self.counts[k.index()].load(Ordering::Relaxed)))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// The first violation, if any.
    pub fn first(&self) -> Option<Violation> {
        self.first.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_keeps_the_first() {
        let d = Detector::new();
        assert!(d.counts().is_empty() && d.first().is_none());
        d.report(Kind::TornRead, 1, || "first".into());
        d.report(Kind::LostUpdate, 5, || {
            unreachable!("only the first is built")
        });
        assert_eq!(d.counts(), vec![(Kind::LostUpdate, 5), (Kind::TornRead, 1)]);
        let f = d.first().unwrap();
        assert_eq!((f.kind, f.detail.as_str()), (Kind::TornRead, "first"));
    }
}
