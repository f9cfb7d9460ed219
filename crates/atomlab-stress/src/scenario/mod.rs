//! The scenarios, one module each, and what they share: how their threads
//! start ([`atomlab_thread::Group`]: none runs until all have started, so
//! one the system refuses strands none at the start line), thread
//! placement, a start barrier, and the critical section that the lock
//! scenarios check.

pub(crate) mod mutex;
pub(crate) mod plugged;
pub(crate) mod refcount;
pub(crate) mod seqlock;
pub(crate) mod spsc;
pub(crate) mod two_thread;

/// Every scenario, in the order the command line lists them
/// ([`crate::registry::all`]). A new scenario is a module above and a line
/// here: help, completions, man pages and validation read this list.
pub(crate) const ALL: &[&dyn crate::plan::Scenario] = &[
    &mutex::Mutex,
    &two_thread::Peterson,
    &two_thread::Dekker,
    &refcount::Refcount,
    &spsc::Spsc,
    &seqlock::Seqlock,
];

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use crate::detect::Detector;
use crate::plan::{Plan, StressError};

/// Puts the calling thread `t` where the plan says.
pub(crate) fn place(plan: &Plan, t: usize) {
    if let Some(cpu) = plan.pin.cpu_for(t, &plan.cpus) {
        // A refused pin (a cgroup without that CPU) leaves the thread where
        // the scheduler puts it; the plan's CPUs come from our own affinity.
        let _ = atomlab_thread::pin_current_thread(cpu);
    }
}

/// A start line the threads spin at, so that they are all running when it
/// opens (a futex barrier wakes them one by one, tens of microseconds apart,
/// long enough for a fast thread to finish a short run alone).
pub(crate) struct StartLine {
    ready: AtomicUsize,
    go: AtomicBool,
}

impl StartLine {
    pub(crate) fn new() -> Self {
        StartLine {
            ready: AtomicUsize::new(0),
            go: AtomicBool::new(false),
        }
    }

    /// A worker: checks in and spins until the line opens.
    pub(crate) fn wait(&self) {
        // ORDERING: Release/Acquire pair the check-in with `open`'s wait;
        // nothing else is published through the start line.
        self.ready.fetch_add(1, Ordering::Release);
        let mut p = Patience::new();
        // ORDERING: Acquire pairs with the Release store in `open`.
        while !self.go.load(Ordering::Acquire) {
            p.wait();
        }
    }

    /// The coordinator: waits until `n` workers are spinning, then opens;
    /// returns the time of opening.
    pub(crate) fn open(&self, n: usize) -> Instant {
        let mut p = Patience::new();
        // ORDERING: Acquire pairs with the workers' check-in.
        while self.ready.load(Ordering::Acquire) < n {
            p.wait();
        }
        let t0 = Instant::now();
        // ORDERING: Release pairs with the workers' Acquire spin.
        self.go.store(true, Ordering::Release);
        t0
    }
}

/// Starts `n` threads for `variant` as one group, each running
/// `body(t)`; or the variant's error when they cannot all start.
pub(crate) fn start_group<'scope, 'env, T: Send + 'scope>(
    s: &'scope std::thread::Scope<'scope, 'env>,
    plan: &Plan,
    variant: &'static str,
    n: usize,
    body: impl Fn(usize) -> T + Send + Sync + 'scope,
) -> Result<Vec<atomlab_thread::Member<'scope, T>>, StressError> {
    let not_started = |why| StressError::Threads {
        scenario: plan.scenario.name(),
        variant,
        why,
    };
    let mut group =
        atomlab_thread::Group::new(s, n, atomlab_thread::DEFAULT_STACK).map_err(not_started)?;
    let body = std::sync::Arc::new(body);
    let members = (0..n)
        .map(|t| {
            let body = std::sync::Arc::clone(&body);
            group
                .spawn(format!("{} of {n}", t + 1), move || body(t))
                .map_err(not_started)
        })
        .collect::<Result<Vec<_>, _>>()?;
    group.open();
    Ok(members)
}

/// Runs `body(t)` on `n` threads released together; returns their results
/// and the wall time from release to the last join, in seconds, or the
/// variant's error when the threads cannot all start. The detector's clock
/// starts at the release.
pub(crate) fn run_threads<T: Send>(
    plan: &Plan,
    variant: &'static str,
    n: usize,
    det: &Detector,
    body: impl Fn(usize) -> T + Sync,
) -> Result<(Vec<T>, f64), StressError> {
    let line = StartLine::new();
    std::thread::scope(|s| {
        let (line, body) = (&line, &body);
        let handles = start_group(s, plan, variant, n, move |t| {
            place(plan, t);
            line.wait();
            let cpu0 = atomlab_thread::thread_cpu_ns();
            let out = body(t);
            let end = Instant::now();
            det.add_cpu_ns(atomlab_thread::thread_cpu_ns().saturating_sub(cpu0));
            (out, end)
        })?;
        det.restart();
        let t0 = line.open(n);
        watch(plan, det, t0, || handles.iter().all(|h| h.is_finished()));
        let mut last = t0;
        let out = handles
            .into_iter()
            .map(|h| {
                let (out, end) = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
                last = last.max(end);
                out
            })
            .collect();
        // Wall time ends when the last worker does, not when the watcher,
        // which polls every 2 ms, notices.
        Ok((out, last.duration_since(t0).as_secs_f64()))
    })
}

/// Waits until `done()` or the plan's time limit, then asks the workers to
/// stop (they check between operations).
pub(crate) fn watch(plan: &Plan, det: &Detector, t0: Instant, done: impl Fn() -> bool) {
    let limit = std::time::Duration::from_secs_f64(plan.time_limit);
    while !done() {
        if t0.elapsed() >= limit {
            det.request_stop();
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
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
