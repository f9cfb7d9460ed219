//! Every scenario through the library with short runs: correct variants
//! pass, the broken variants that no CPU can hide are caught, and a broken
//! variant is never judged PASS.

use atomlab_core::Verdict;
use atomlab_stress::{Plan, Request};

/// One run at a time: parallel tests would compete for the CPUs.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run(
    scenario: &str,
    variants: &[&str],
    ops: u64,
    jitter: bool,
) -> Vec<atomlab_stress::VariantRun> {
    let req = Request {
        scenario: scenario.into(),
        variants: variants.iter().map(|v| v.to_string()).collect(),
        ops: Some(ops),
        seed: Some(11),
        jitter,
        ..Default::default()
    };
    let cpus = atomlab_thread::allowed_cpus();
    let plan = Plan::from_request(&req, &cpus).expect("valid plan");
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    atomlab_stress::run(&plan, &mut |_| {}).expect("the threads start")
}

#[test]
fn every_correct_variant_passes_a_short_run() {
    for (scenario, ops) in [
        ("mutex", 20_000),
        ("peterson", 20_000),
        ("dekker", 20_000),
        ("refcount", 50_000),
        ("spsc", 50_000),
        ("seqlock", 20_000),
    ] {
        for o in run(scenario, &["correct"], ops, true) {
            assert_eq!(
                o.verdict,
                Verdict::Pass,
                "{scenario} {}: {:?}",
                o.variant,
                o.first
            );
            assert!(o.ops >= ops, "{scenario} {}", o.variant);
            assert!(o.violations.is_empty());
        }
    }
}

#[test]
fn broken_variants_are_never_a_bare_pass() {
    for scenario in ["mutex", "peterson", "dekker", "refcount", "spsc", "seqlock"] {
        for o in run(scenario, &["broken"], 2_000, false) {
            assert!(o.variant.starts_with("broken-"));
            assert_ne!(o.verdict, Verdict::Pass, "{scenario} {}", o.variant);
            assert!(!o.reason.is_empty());
        }
    }
}

#[test]
fn racy_test_and_set_and_refcount_are_caught() {
    if atomlab_thread::allowed_cpus().len() < 2 {
        eprintln!("one CPU: races need two; skipping the catch test");
        return;
    }
    // A race is caught by chance: on a busy machine the two threads may
    // seldom overlap. Up to five attempts, the later ones with jitter; a
    // detector that never catches still fails the test.
    for (scenario, variant) in [
        ("mutex", "broken-tas-not-atomic"),
        ("refcount", "broken-racy-dec"),
    ] {
        let mut reasons = Vec::new();
        let caught = (0..5).any(|attempt| {
            let o = &run(scenario, &[variant], 100_000, attempt > 0)[0];
            if o.verdict == Verdict::Fail {
                assert!(
                    o.first.is_some(),
                    "{variant}: a FAIL names its first violation"
                );
                return true;
            }
            reasons.push(o.reason.clone());
            false
        });
        assert!(caught, "{variant} not caught in 5 attempts: {reasons:?}");
    }
}
