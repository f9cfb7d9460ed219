//! `atomlab suite`, callable from Rust: a quick tour of this machine with
//! short runs of every capability. One job: the suite's contents (which
//! bench and stress steps, which litmus tests) and running them in order
//! through the capability crates' batch calls (atomlab-bench's
//! [`atomlab_bench::batch`], [`atomlab_stress::run_records`],
//! [`atomlab_check::builtin_suite`], atomlab-run's [`atomlab_run::batch`]),
//! giving back their records and the exit status their verdicts give.
//! Printing is the caller's (the tables are atomlab-report's
//! `suite_view`).
//!
//! ```no_run
//! let mut machine = atomlab_core::Machine::detect();
//! machine.pmu.available = atomlab_bench::pmu::probe().is_ok();
//! let suite = atomlab_suite::run(&machine, &mut |_| {}).unwrap();
//! println!("{} records, exit {}", suite.records.len(), suite.status.code());
//! ```
//!
//! Dependencies: the capability crates it runs, `atomlab-thread` (the CPUs
//! stress may use) and `thiserror`.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

use atomlab_bench::{BenchError, Contention, Request as BenchRequest};
use atomlab_core::{ExitStatus, Machine, Record, Verdict};
use atomlab_run::batch::Ran;
use atomlab_stress::{Request as StressRequest, StressError};

/// What the suite runs on a machine of a given CPU count: its bench and
/// stress steps, in order. The check and run parts are atomlab-model's
/// built-in litmus tests.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The bench steps, one request each.
    pub bench: Vec<BenchRequest>,
    /// The stress steps, one request each.
    pub stress: Vec<StressRequest>,
}

/// The suite's plan for a machine of `cpus` CPUs.
pub fn plan(cpus: usize) -> Plan {
    Plan {
        bench: bench_steps(cpus),
        stress: stress_steps(),
    }
}

/// What the suite reports as it goes.
#[derive(Debug)]
pub enum Event<'a> {
    /// Where its steps have got to: each bench and stress step's batch and
    /// the parts of the tour ([`atomlab_core::progress`]).
    Progress(atomlab_core::progress::Event<'a>),
    /// A test of the run part ran; its [`Ran::forbidden`] states are the
    /// ones to say at once.
    Ran(&'a Ran),
}

/// The suite's result: every capability's records, in the order they ran,
/// and the exit status their verdicts give.
#[derive(Debug)]
pub struct Suite {
    /// bench, stress, check and run records.
    pub records: Vec<Record>,
    /// 1 when a correct stress variant failed or a model forbids a state
    /// the CPU showed; 0 otherwise.
    pub status: ExitStatus,
}

/// Why the suite did not run to the end: a step its library refused.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bench step's plan or run failed.
    #[error(transparent)]
    Bench(#[from] BenchError),
    /// A stress step's plan was refused.
    #[error(transparent)]
    Stress(#[from] StressError),
}

/// Runs the suite on `machine` (its CPU count, whether hardware counters
/// work and whether the CPU is emulated say what runs and how): bench,
/// stress, check, then run, reporting through `progress`.
pub fn run(
    machine: &Machine,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<Suite, Error> {
    use atomlab_core::progress::Event::Part;
    let plan = plan(machine.cpus);
    let mut records: Vec<Record> = Vec::new();
    for req in &plan.bench {
        let plan = atomlab_bench::Plan::from_request(req, machine.cpus)?;
        records.extend(atomlab_bench::batch::run::<BenchError>(
            &plan,
            machine.pmu.available,
            None,
            &mut |e| progress(Event::Progress(e)),
            |_| Ok(()),
        )?);
    }
    let stress_status = stress_pass(&plan.stress, &mut records, progress)?;
    progress(Event::Progress(Part(
        "check: built-in litmus tests (case 004 among them) under every model",
    )));
    records.extend(atomlab_check::builtin_suite());
    progress(Event::Progress(Part(if machine.emulated {
        "run: not on an emulated CPU (its histograms would show the emulator)"
    } else {
        "run: the same tests on this CPU, briefly (50 x 1000 instances each)"
    })));
    let run_status = run_pass(&mut records, machine.emulated, progress);
    let status = if stress_status != ExitStatus::Ok {
        stress_status
    } else {
        run_status
    };
    Ok(Suite { records, status })
}

/// The bench part of the tour: the 003 shape (refcounts and raw atomics,
/// uncontended and contended), counters, the locks of 002 (timed and in its
/// fixed-work shape), fences and the core-to-core round trip.
fn bench_steps(cpus: usize) -> Vec<BenchRequest> {
    let short = |scenario: &str| BenchRequest {
        scenario: scenario.into(),
        duration: Some(0.1),
        warmup: Some(0.05),
        runs: Some(3),
        pin: true,
        ..Default::default()
    };
    let all_threads = atomlab_bench::plan::default_threads(cpus);
    vec![
        BenchRequest {
            variants: vec!["fetch_add".into(), "cas_loop".into()],
            contention: Some(Contention::Private),
            threads: vec![1],
            ..short("counter")
        },
        BenchRequest {
            variants: vec!["fetch_add".into(), "cas_loop".into()],
            threads: all_threads.clone(),
            ..short("counter")
        },
        BenchRequest {
            variants: vec![
                "atomic-inc".into(),
                "refcount-inc".into(),
                "refcount-inc-call".into(),
            ],
            contention: Some(Contention::Private),
            threads: vec![1],
            ..short("refcount")
        },
        BenchRequest {
            variants: vec![
                "atomic-inc".into(),
                "refcount-inc".into(),
                "refcount-inc-call".into(),
            ],
            threads: all_threads,
            ..short("refcount")
        },
        BenchRequest {
            threads: vec![cpus],
            cs_work: Some(10),
            ..short("lock")
        },
        BenchRequest {
            increments: Some(1_000_000),
            tasks: Some(20),
            ..short("lock")
        },
        BenchRequest {
            variants: vec!["all".into()],
            threads: vec![1],
            contention: Some(Contention::Private),
            ..short("fence")
        },
        BenchRequest {
            pin: cpus > 1,
            ..short("pingpong")
        },
    ]
}

/// The stress part of the tour: every correct variant in a short run, and
/// the broken variants that any multi-core machine can expose (test-and-set
/// from a load and a store, Peterson and Dekker without the fence, a racy
/// refcount decrement), which must be caught. A few seconds in all.
fn stress_steps() -> Vec<StressRequest> {
    let step = |scenario: &str, variants: &[&str], ops: u64, jitter: bool| StressRequest {
        scenario: scenario.into(),
        variants: variants.iter().map(|v| v.to_string()).collect(),
        ops: Some(ops),
        jitter,
        ..Default::default()
    };
    vec![
        step(
            "mutex",
            &["correct", "broken-tas-not-atomic"],
            50_000,
            false,
        ),
        step("peterson", &["all"], 200_000, false),
        step("dekker", &["all"], 200_000, false),
        step(
            "spsc",
            &["c11-acq-rel", "fences", "seq_cst"],
            200_000,
            false,
        ),
        // The sleeping consumer: each item is a sleep and a wake-up (tens
        // of µs), so fewer items, and its fence-less doorbell, which x86
        // catches losing wake-ups.
        step(
            "spsc",
            &["c11-acq-rel+notify", "broken-doorbell-no-fence"],
            5_000,
            false,
        ),
        step("seqlock", &["correct"], 100_000, false),
        step("refcount", &["correct", "broken-racy-dec"], 100_000, false),
    ]
}

/// Runs the stress steps; the status is 1 when a correct variant failed.
fn stress_pass(
    steps: &[StressRequest],
    records: &mut Vec<Record>,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> Result<ExitStatus, StressError> {
    let cpus = atomlab_thread::allowed_cpus();
    let mut status = ExitStatus::Ok;
    for req in steps {
        let plan = atomlab_stress::Plan::from_request(req, &cpus)?;
        let (recs, st) =
            atomlab_stress::run_records(&plan, false, atomlab_stress::GRACE, &mut |e| {
                progress(Event::Progress(e))
            })?;
        if st != ExitStatus::Ok {
            status = st;
        }
        records.extend(recs);
    }
    Ok(status)
}

/// Where the built-in tests' texts live in the source tree, for replay
/// lines (`atomlab_model::builtin` includes them from there).
const BUILTIN_DIR: &str = "crates/atomlab-model/tests/litmus/c";

/// The run part of the tour: each built-in litmus test (the ones `check`
/// judges) run briefly on this CPU, beside its models' verdicts, through
/// `atomlab run`'s code (a `run` record each). A test this host's code
/// generator refuses gets a record without a verdict that says why ("not
/// run"), never a failure. Status 1 when a model forbids an observed state;
/// a TIMEOUT (a loaded machine) is shown, not failed: the tour is short.
/// Under emulation nothing runs: the histogram would show the emulator's
/// ordering, not a CPU's (qemu-user on x86-64 lets an STLR pass a later
/// LDAR, which Arm forbids), so every test says why it was not run.
fn run_pass(
    records: &mut Vec<Record>,
    emulated: bool,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> ExitStatus {
    use atomlab_run::batch::{self, BatchOptions};
    use atomlab_run::{Affinity, RunOptions};
    let opts = BatchOptions {
        run: RunOptions {
            size: 1000,
            runs: 50,
            affinity: Affinity::Spread,
            // A guard only: a test takes tens of milliseconds here. 1 s was
            // too short for IRIW's four threads on two CPUs while other builds
            // ran (load 8: no run finished, a TIMEOUT with no instances).
            timeout: Some(std::time::Duration::from_secs(5)),
            ..RunOptions::default()
        },
        ..BatchOptions::default()
    };
    let mut status = ExitStatus::Ok;
    for test in atomlab_model::suite_tests::suite() {
        let refused = |reason: String| batch::not_run(&test, &reason);
        if emulated {
            records.push(refused(
                "the CPU is emulated (qemu-user): its histogram would show the emulator, not a CPU; `atomlab run FILE` runs it anyway".into(),
            ));
            continue;
        }
        let program = match atomlab_run::prepare_with(&test, &opts.prepare) {
            Ok(p) => p,
            Err(e) => {
                records.push(refused(batch::refusal(&e)));
                continue;
            }
        };
        let replay = batch::replay_line(&format!("{BUILTIN_DIR}/{}", test.file), &opts);
        match batch::run_test(&program, &opts, replay) {
            Ok(ran) => {
                progress(Event::Ran(&ran));
                let rec = ran.record();
                if rec.verdict == Some(Verdict::Fail) {
                    status = ExitStatus::VerdictFailed;
                }
                records.push(rec);
            }
            // The OS refused threads or memory: said, not failed.
            Err(e) => records.push(refused(e.to_string())),
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plan follows the CPU count: the contended counter and refcount
    /// steps go up the default thread counts, the timed lock runs one
    /// thread per CPU, and pingpong pins only with two CPUs or more.
    #[test]
    fn the_plan_follows_the_cpu_count() {
        for cpus in [1, 2, 8] {
            let p = plan(cpus);
            let scenarios: Vec<&str> = p.bench.iter().map(|r| r.scenario.as_str()).collect();
            assert_eq!(
                scenarios,
                [
                    "counter", "counter", "refcount", "refcount", "lock", "lock", "fence",
                    "pingpong"
                ]
            );
            let threads = atomlab_bench::plan::default_threads(cpus);
            assert_eq!(p.bench[1].threads, threads);
            assert_eq!(p.bench[3].threads, threads);
            assert_eq!(p.bench[4].threads, vec![cpus]);
            assert_eq!(p.bench[7].pin, cpus > 1);
            // Every step is one the bench and stress libraries accept here.
            for req in &p.bench {
                atomlab_bench::Plan::from_request(req, cpus).unwrap();
            }
            let allowed: Vec<usize> = (0..cpus).collect();
            for req in &p.stress {
                atomlab_stress::Plan::from_request(req, &allowed).unwrap();
            }
        }
        let two = plan(2);
        let stress: Vec<&str> = two.stress.iter().map(|r| r.scenario.as_str()).collect();
        assert_eq!(
            stress,
            ["mutex", "peterson", "dekker", "spsc", "spsc", "seqlock", "refcount"]
        );
    }

    /// Under emulation no test runs, each says why, and nothing fails.
    #[test]
    fn an_emulated_cpu_runs_nothing() {
        let mut recs = Vec::new();
        let mut ran = 0;
        let status = run_pass(&mut recs, true, &mut |e| {
            if let Event::Ran(_) = e {
                ran += 1
            }
        });
        assert_eq!(status, ExitStatus::Ok);
        assert_eq!(ran, 0);
        assert_eq!(recs.len(), atomlab_model::suite_tests::suite().len());
        for r in &recs {
            assert_eq!(r.capability, "run");
            assert!(r.verdict.is_none());
            let why = r.parameters["not_run"].as_str().unwrap();
            assert!(why.contains("the CPU is emulated (qemu-user)"), "{why}");
        }
    }
}
