//! A scenario written outside the crate goes through the same plan, run
//! and record as the built-in ones: the door a user's own scenario will
//! come in by (the registry lists the built-in ones; this one is passed
//! to `Plan::new` directly).

use std::sync::atomic::{AtomicU64, Ordering};

use atomlab_core::Verdict;
use atomlab_stress::detect::{Detector, Kind};
use atomlab_stress::plan::Threads;
use atomlab_stress::{Plan, Request, Scenario, StressError, VariantRun};

/// Two threads add to one counter: with `fetch_add`, or (broken) with a
/// separate load and store, which may lose updates.
struct Tally;

impl Scenario for Tally {
    fn name(&self) -> &'static str {
        "tally"
    }
    fn variants(&self) -> Vec<&'static str> {
        vec!["fetch-add", "broken-load-store"]
    }
    fn ops_unit(&self) -> &'static str {
        "increments"
    }
    fn default_ops(&self) -> u64 {
        10_000
    }
    fn threads(&self) -> Threads {
        Threads::Exactly(2)
    }
    fn run(&self, plan: &Plan, variant: &'static str) -> Result<Option<VariantRun>, StressError> {
        let atomic = match variant {
            "fetch-add" => true,
            "broken-load-store" => false,
            _ => return Ok(None),
        };
        let counter = AtomicU64::new(0);
        let det = Detector::new();
        let t0 = std::time::Instant::now();
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..plan.ops / 2 {
                        if atomic {
                            // ORDERING: Relaxed: only the final sum is read, after join.
                            counter.fetch_add(1, Ordering::Relaxed);
                        } else {
                            // ORDERING: Relaxed on purpose: the broken variant.
                            let c = counter.load(Ordering::Relaxed);
                            // ORDERING: as above.
                            counter.store(c + 1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        let done = plan.ops / 2 * 2;
        // ORDERING: after join, which synchronises with both threads.
        let sum = counter.load(Ordering::Relaxed);
        if sum != done {
            det.report(Kind::LostUpdate, done - sum, || format!("{sum} of {done}"));
        }
        let secs = t0.elapsed().as_secs_f64();
        Ok(Some(VariantRun::judge(
            plan,
            variant,
            done,
            secs,
            &det,
            vec![],
        )))
    }
}

static TALLY: Tally = Tally;

#[test]
fn a_scenario_from_outside_the_crate_plans_runs_and_records() {
    let req = Request {
        variants: vec!["all".into()],
        ops: Some(20_000),
        seed: Some(3),
        ..Default::default()
    };
    let plan = Plan::new(&TALLY, &req, &[0, 1]).expect("valid plan");
    assert_eq!(plan.variants, ["fetch-add", "broken-load-store"]);
    assert_eq!(plan.threads, 2);
    let outcomes = atomlab_stress::run(&plan, &mut |_| {}).expect("the threads start");
    assert_eq!(outcomes.len(), 2);
    assert_eq!(
        outcomes[0].verdict,
        Verdict::Pass,
        "{:?}",
        outcomes[0].first
    );
    assert_ne!(outcomes[1].verdict, Verdict::Pass);
    let r = outcomes[0].record(&plan);
    assert_eq!(
        (r.scenario.as_str(), r.variant.as_str()),
        ("tally", "fetch-add")
    );
    assert!(outcomes[0]
        .replay
        .starts_with("atomlab stress tally --variant fetch-add --threads 2"));
    // Its own rules hold: exactly two threads.
    let bad = Request {
        threads: Some(3),
        ..req
    };
    let e = Plan::new(&TALLY, &bad, &[0, 1]).unwrap_err().to_string();
    assert!(e.contains("tally runs exactly 2 threads"), "{e}");
}
