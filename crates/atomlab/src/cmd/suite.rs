//! `atomlab suite`: the main job, a quick tour of this machine with short
//! runs of every capability, printed as one summary per capability. Each
//! capability contributes a list of steps; a step's records join the report.

use atomlab_bench::{Plan, Request};
use atomlab_core::{ExitStatus, Machine, Record, Report};

use crate::cli::SuiteArgs;
use crate::cmd::bench::{probe_pmu, run_plan};
use crate::render;

/// The bench part of the tour: the 003 shape (refcounts and raw atomics,
/// uncontended and contended), counters, the locks of 002 (timed and in its
/// fixed-work shape), fences and the core-to-core round trip.
fn bench_steps(cpus: usize) -> Vec<Request> {
    let short = |scenario: &str| Request {
        scenario: scenario.into(),
        duration: Some(0.1),
        warmup: Some(0.05),
        runs: Some(3),
        pin: true,
        ..Default::default()
    };
    let all_threads = atomlab_bench::plan::default_threads(cpus);
    vec![
        Request {
            variants: vec!["fetch_add".into(), "cas_loop".into()],
            contention: Some("private".into()),
            threads: vec![1],
            ..short("counter")
        },
        Request {
            variants: vec!["fetch_add".into(), "cas_loop".into()],
            threads: all_threads.clone(),
            ..short("counter")
        },
        Request {
            variants: vec![
                "atomic-inc".into(),
                "refcount-inc".into(),
                "refcount-inc-call".into(),
            ],
            contention: Some("private".into()),
            threads: vec![1],
            ..short("refcount")
        },
        Request {
            variants: vec![
                "atomic-inc".into(),
                "refcount-inc".into(),
                "refcount-inc-call".into(),
            ],
            threads: all_threads,
            ..short("refcount")
        },
        Request {
            threads: vec![cpus],
            cs_work: Some(10),
            ..short("lock")
        },
        Request {
            increments: Some(1_000_000),
            tasks: Some(20),
            ..short("lock")
        },
        Request {
            variants: vec!["all".into()],
            threads: vec![1],
            contention: Some("private".into()),
            ..short("fence")
        },
        Request {
            pin: cpus > 1,
            ..short("pingpong")
        },
    ]
}

/// The stress part of the tour: every correct variant in a short run, and
/// the broken variants that any multi-core machine can expose (test-and-set
/// from a load and a store, Peterson and Dekker without the fence, a racy
/// refcount decrement), which must be caught. A few seconds in all; the
/// status is 1 when a correct variant failed.
fn stress_pass(records: &mut Vec<Record>) -> anyhow::Result<ExitStatus> {
    use atomlab_stress::Request as StressRequest;
    let cpus = atomlab_stress::affinity::allowed_cpus();
    let step = |scenario: &str, variants: &[&str], ops: u64, jitter: bool| StressRequest {
        scenario: scenario.into(),
        variants: variants.iter().map(|v| v.to_string()).collect(),
        ops: Some(ops),
        jitter,
        ..Default::default()
    };
    let steps = [
        step(
            "mutex",
            &["correct", "broken-tas-not-atomic"],
            50_000,
            false,
        ),
        step("peterson", &["all"], 200_000, false),
        step("dekker", &["all"], 200_000, false),
        step("spsc", &["correct"], 200_000, false),
        step("seqlock", &["correct"], 100_000, false),
        step("refcount", &["correct", "broken-racy-dec"], 100_000, false),
    ];
    let mut status = ExitStatus::Ok;
    for req in steps {
        let plan = atomlab_stress::Plan::from_request(&req, &cpus)?;
        let (recs, st) = crate::cmd::stress::run_plan(&plan, false);
        if st != ExitStatus::Ok {
            status = st;
        }
        records.extend(recs);
    }
    Ok(status)
}

pub fn run(args: SuiteArgs) -> anyhow::Result<ExitStatus> {
    let mut machine = Machine::detect();
    eprintln!(
        "atomlab suite: a quick tour of this machine ({} CPUs, {})",
        machine.cpus, machine.cpu_model
    );
    if machine.emulated {
        eprintln!("atomlab: note: running under emulation (qemu-user): timings are not meaningful");
    }
    let pmu = probe_pmu(&mut machine);
    let mut records: Vec<Record> = Vec::new();
    for req in bench_steps(machine.cpus) {
        let plan = Plan::from_request(&req, machine.cpus)?;
        records.extend(run_plan(&plan, pmu, |_| Ok(()))?);
    }
    let stress_status = stress_pass(&mut records)?;
    eprintln!("  check: built-in litmus tests (case 004 among them) under every model");
    if args.json {
        records.extend(crate::cmd::check::suite_pass(false)?);
    }
    let report = Report::new(machine, records);
    if args.json {
        render::json(&report)?;
    } else {
        render::machine_table(&report.machine)?;
        // bench's tables read every record; give them only bench's.
        let bench_only = Report {
            records: report
                .records
                .iter()
                .filter(|r| r.capability == "bench")
                .cloned()
                .collect(),
            ..report.clone()
        };
        render::bench_tables(&bench_only)?;
        crate::cmd::stress::tables(&report.records)?;
        crate::cmd::check::suite_pass(true)?;
    }
    Ok(stress_status)
}
