//! `run_calls`: one set of threads runs every call of a test's runs,
//! whatever setting each call asks for (the tuner's calls, issue 38). One
//! test in this binary, so that the process's thread count is the
//! harness's own.

use std::path::Path;
use std::time::Duration;

use atomlab_run::{prepare, run_calls, Layout, Plan, RunBarrier, RunOptions, SyncMode};

/// Threads of this process now.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Threads of this process once those that have ended are gone: a scoped
/// thread counts as done when its closure returns, a moment before the
/// system removes it.
fn threads_settled(want: usize) -> usize {
    for _ in 0..200 {
        if threads() == want {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    threads()
}

#[test]
fn one_set_of_threads_runs_every_call_in_any_setting() {
    // A C test: it runs on every host, through the host's C11 mapping
    // (the cross-test runs this under qemu-user on aarch64 and riscv64).
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../atomlab-model/tests/litmus/c/SB+rel-acq.litmus");
    let test = atomlab_litmus::parse_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let program = prepare(&test).unwrap_or_else(|e| panic!("{e}"));
    let base = RunOptions {
        size: 200,
        ..RunOptions::default()
    };
    let settings = [
        base.clone(),
        RunOptions {
            layout: Layout::Packed,
            run_barrier: RunBarrier::Spin,
            ..base.clone()
        },
        RunOptions {
            sync: SyncMode::Leader,
            ..base.clone()
        },
        RunOptions {
            sync: SyncMode::Timebase,
            timebase_delay: None,
            ..base.clone()
        },
    ];
    let plans: Vec<Plan<'_>> = settings
        .iter()
        .map(|opts| Plan {
            program: &program,
            opts,
        })
        .collect();
    // A hang is this test's failure: it says so and ends the process.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watched = done.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(120));
        if !watched.load(std::sync::atomic::Ordering::SeqCst) {
            eprintln!("run_calls hung: a call never ended");
            std::process::abort();
        }
    });
    // Read here: inside the body this thread is pinned to one CPU.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let before = threads();
    let during = run_calls(&plans, |calls| {
        // The test's second thread exists for the whole body.
        let during = threads();
        for (n, k) in [0, 1, 2, 3, 1, 0, 3, 2].into_iter().enumerate() {
            let runs = 3 + n;
            let r = calls.call(k, runs, n as u64, None)?;
            assert_eq!(r.runs_done, runs, "call {n} of setting {k}");
            assert!(!r.timed_out);
            assert_eq!(r.instances() + r.filtered, (runs * 200) as u64);
            // Read before the threads were pinned: a pinned owner's own
            // set is one CPU, and a setting laid out after it took two
            // threads on two CPUs for threads sharing one (its spinners
            // yielded the CPU, and SB's runs took 50-100 ms, not 1).
            assert_eq!(r.shared_cpus.is_some(), cpus < 2, "call {n}: {cpus} CPUs");
            assert_eq!(threads(), during, "call {n} started threads of its own");
        }
        // The same setting many times in a row: each call ends where its
        // threads can tell it from the next (a flag cleared by the next call
        // was missed by a thread not yet woken, which then waited for ever
        // for a run nobody started).
        for n in 0..300 {
            let k = if n < 200 { 0 } else { 1 };
            let r = calls.call(k, 1, n, None)?;
            assert_eq!(r.runs_done, 1, "call {n} in a row of setting {k}");
        }
        // A call whose time is up runs nothing; the next has its own.
        let r = calls.call(1, 5, 9, Some(Duration::ZERO))?;
        assert!(r.timed_out && r.runs_done == 0, "{r:?}");
        let r = calls.call(1, 5, 9, None)?;
        assert!(!r.timed_out && r.runs_done == 5, "{r:?}");
        Ok(during)
    })
    .unwrap();
    assert_eq!(during, before + 1, "the test's P1 on a thread of its own");
    assert_eq!(
        threads_settled(before),
        before,
        "the thread ended with the body"
    );

    // A body that panics still ends the threads (nothing waits for ever),
    // and the panic reaches the caller.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_calls(&plans, |calls| -> Result<(), atomlab_run::RunError> {
            calls.call(2, 2, 1, None)?;
            panic!("the body gave up");
        })
    }));
    assert!(caught.is_err());
    assert_eq!(
        threads_settled(before),
        before,
        "the thread ended after the panic"
    );

    // A setting the plans do not have is an error, not a panic.
    let err = run_calls(&plans, |calls| calls.call(plans.len(), 1, 1, None)).unwrap_err();
    assert!(err.to_string().contains("no setting"), "{err}");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
}
