//! Hardware counters attached to the server under load: 001 counted failed
//! store-exclusives in nginx (`perf record -e r6e`) to show its LL/SC loops
//! spinning; `atomlab load --events r6e --server-pid PID` counts them over
//! the measured window, per request.
//!
//! Every thread of every process in the server's tree (the roots and their
//! descendants, from /proc) gets one counter per event, attached by thread
//! id with `inherit`, so threads and workers created during the window are
//! counted too (as `perf stat -p PID` does). Counts are summed over the
//! threads, each scaled for multiplexing. User space only, like `bench`'s
//! counters. Where the kernel refuses (no PMU in a VM,
//! `perf_event_paranoid`, another user's process) the record says why.

use atomlab_pmu::{explain_open_error, Counter, EventSpec};

/// The counters of one run.
pub(crate) struct ServerCounters {
    /// Per event: its counters (one per thread attached).
    counters: Vec<(EventSpec, Vec<Counter>)>,
    /// Per event that could not be attached to any thread: why.
    pub refused: Vec<(String, String)>,
    /// Threads attached to.
    pub threads: usize,
}

/// One event's total over the window.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EventTotal {
    /// The event as named.
    pub name: String,
    /// Summed over the threads, scaled for multiplexing.
    pub count: f64,
    /// Whether any counter had to be scaled.
    pub multiplexed: bool,
}

/// The thread ids of `pid` (from /proc/PID/task), or just `pid`.
fn threads_of(pid: i32) -> Vec<i32> {
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
                .collect()
        })
        .unwrap_or_default();
    if tids.is_empty() {
        tids.push(pid);
    }
    tids
}

impl ServerCounters {
    /// Attaches `events` to every thread of `roots` and their descendants,
    /// disabled.
    pub(crate) fn attach(events: &[EventSpec], roots: &[i32]) -> ServerCounters {
        let tids: Vec<i32> = crate::server::tree(roots)
            .into_iter()
            .flat_map(threads_of)
            .collect();
        let mut counters = Vec::new();
        let mut refused = Vec::new();
        for e in events {
            let mut opened = Vec::new();
            let mut first_error = None;
            for &tid in &tids {
                match Counter::attach(e, tid) {
                    Ok(c) => opened.push(c),
                    Err(err) => {
                        first_error.get_or_insert(err);
                    }
                }
            }
            if opened.is_empty() {
                let why = first_error
                    .map(|err| explain_open_error(&err))
                    .unwrap_or_else(|| "the server has no threads to attach to".into());
                refused.push((e.name.clone(), why));
            } else {
                counters.push((e.clone(), opened));
            }
        }
        ServerCounters {
            counters,
            refused,
            threads: tids.len(),
        }
    }

    /// Zeroes and starts every counter.
    pub(crate) fn start(&self) {
        for (_, cs) in &self.counters {
            for c in cs {
                let _ = c.start();
            }
        }
    }

    /// Stops every counter and sums each event over the threads.
    pub(crate) fn stop(&self) -> Vec<EventTotal> {
        self.counters
            .iter()
            .map(|(e, cs)| {
                let mut t = EventTotal {
                    name: e.name.clone(),
                    count: 0.0,
                    multiplexed: false,
                };
                for r in cs.iter().filter_map(|c| c.stop().ok()) {
                    t.multiplexed |= r.multiplexed();
                    t.count += r.scaled().unwrap_or(0.0);
                }
                t
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attaching_to_a_living_process_counts_or_says_why() {
        // This test process, with a thread that works during the window.
        let events = [EventSpec::instructions()];
        let c = ServerCounters::attach(&events, &[std::process::id() as i32]);
        assert!(c.threads >= 1);
        c.start();
        let busy = std::thread::spawn(|| (0..2_000_000u64).map(std::hint::black_box).sum::<u64>());
        busy.join().unwrap();
        let totals = c.stop();
        match (totals.first(), c.refused.first()) {
            // A PMU: the thread was created after attaching, so inherit
            // must have counted it.
            (Some(t), None) => assert!(t.count > 1e6, "{t:?}"),
            // No PMU (this VM): refused with a reason, nothing counted.
            (None, Some((name, why))) => {
                assert_eq!(name, "instructions");
                assert!(!why.is_empty());
            }
            other => panic!("counted and refused at once: {other:?}"),
        }
    }

    #[test]
    fn a_process_that_is_gone_is_refused_not_a_panic() {
        let c = ServerCounters::attach(&[EventSpec::cycles()], &[i32::MAX]);
        assert_eq!(c.refused.len(), 1);
        assert!(c.stop().is_empty());
    }
}
