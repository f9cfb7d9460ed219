//! The scenarios, one module each, and what they share: thread placement,
//! a start barrier, and the critical section that the lock scenarios check.

pub mod mutex;
pub mod refcount;
pub mod seqlock;
pub mod spsc;
pub mod two_thread;

use std::sync::Barrier;
use std::time::Instant;

use crate::detect::Detector;
use crate::plan::Plan;

/// Puts the calling thread `t` where the plan says.
pub(crate) fn place(plan: &Plan, t: usize) {
    if let Some(cpu) = plan.pin.cpu_for(t, &plan.cpus) {
        // A refused pin (a cgroup without that CPU) leaves the thread where
        // the scheduler puts it; the plan's CPUs come from our own affinity.
        let _ = crate::affinity::pin_current_thread(cpu);
    }
}

/// Runs `body(t)` on `n` threads released together; returns their results
/// and the wall time from release to the last join, in seconds. The
/// detector's clock starts at the release.
pub(crate) fn run_threads<T: Send>(
    plan: &Plan,
    n: usize,
    det: &Detector,
    body: impl Fn(usize) -> T + Sync,
) -> (Vec<T>, f64) {
    let barrier = Barrier::new(n + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|t| {
                let (barrier, body) = (&barrier, &body);
                s.spawn(move || {
                    place(plan, t);
                    barrier.wait();
                    body(t)
                })
            })
            .collect();
        det.restart();
        barrier.wait();
        let t0 = Instant::now();
        let out = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect();
        (out, t0.elapsed().as_secs_f64())
    })
}

/// Notes every run of `plan` carries.
pub(crate) fn common_notes(plan: &Plan) -> Vec<String> {
    let mut notes = Vec::new();
    if plan.threads > plan.cpus.len() {
        notes.push(format!(
            "{} threads on {} CPUs: oversubscribed on purpose (preemption inside a critical section widens races; spinning waiters slow down)",
            plan.threads,
            plan.cpus.len()
        ));
    }
    if plan.pin == crate::plan::Pin::Same {
        notes.push("--pin same: every thread on one CPU, so only preemption interleaves them and store buffering cannot show".into());
    }
    notes
}

/// Spins, then yields, for waits on another thread that may share our CPU.
pub(crate) struct Patience(u32);

impl Patience {
    pub(crate) fn new() -> Self {
        Patience(0)
    }

    #[inline(always)]
    pub(crate) fn wait(&mut self) {
        if self.0 < 128 {
            self.0 += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}
