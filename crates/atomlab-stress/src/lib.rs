//! `atomlab stress`: correctness torture with honest verdicts.
//!
//! Each scenario hammers one primitive of `atomlab-prims` from many threads
//! and checks invariants that a correct primitive can never break: lost
//! updates and two threads in one critical section (`mutex`, `peterson`,
//! `dekker`), items out of order or torn (`spsc`), torn snapshots
//! (`seqlock`), objects released twice, used after release or never
//! (`refcount`). Deliberately broken variants (`broken-…`) sit beside the
//! correct ones so that the detectors can be seen to work; they run only
//! when asked for.
//!
//! Verdicts ([`outcome::VariantRun`]): `FAIL` when a violation was seen,
//! `PASS` for a correct variant with none in the stated number of
//! operations, and `NOT_OBSERVED`, with the reason, for a broken variant
//! that this run did not catch (x86-TSO hides most missing-barrier bugs;
//! the loom tests in `atomlab-prims/tests/loom_stress.rs` show every one).
//!
//! Dependencies: `libc` (thread placement and the per-thread CPU clock
//! behind the `parallelism` figure) and `thiserror`; the seeded generator
//! for jitter and payloads is a dozen lines of xorshift ([`rng`]).
//!
//! Limitations: a stress run samples interleavings, it does not enumerate
//! them; `PASS` means "not seen in N operations on this machine", and the
//! seed fixes the jitter and payloads but not the OS's scheduling, so a
//! replay reproduces the conditions, not the exact interleaving.
#![warn(unreachable_pub)]
#![deny(missing_docs)]

pub mod detect;
mod judge;
mod outcome;
pub mod plan;
pub use atomlab_plugin as plugin;
pub mod registry;
pub mod rng;
mod scenario;

pub use outcome::{exit_status, VariantRun};
pub use plan::{Field, Pin, Plan, Request, Scenario, StressError};
pub use registry::{all, find};

/// What a child started by [`run_records`] is to run: the seed and the
/// variant, from [`plugin::isolate::child_request`]'s words.
pub fn child_part(words: &str) -> Option<(u64, &str)> {
    let (seed, variant) = words.split_once(':')?;
    Some((seed.parse().ok()?, variant))
}

/// How long `atomlab stress` (and `atomlab suite`) waits for an isolated
/// variant's child past the plan's time limit before judging it hung
/// ([`run_records`]' `grace`).
pub const GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs every variant of `plan` into records and the exit status their
/// verdicts give, as [`run`] and [`exit_status`] do, except that a
/// variant its scenario [isolates](Scenario::isolated) runs in a child
/// process ([`plugin::isolate`]): the child's records are taken as they
/// are, and a child killed by a signal, or still running `grace` after
/// the plan's time limit, gives a FAIL record that says so. A variant
/// whose threads cannot all start ends the run with its error.
pub fn run_records(
    plan: &Plan,
    expect_fail: bool,
    grace: std::time::Duration,
    progress: atomlab_core::progress::Sink<'_>,
) -> Result<(Vec<atomlab_core::Record>, atomlab_core::ExitStatus), StressError> {
    use atomlab_core::progress::Event;
    use atomlab_core::ExitStatus;
    use plugin::isolate::{run_child, signal_words, End};
    let mut records = Vec::new();
    let mut outcomes = Vec::new();
    let mut child_failed = false;
    progress(Event::Begin {
        total: plan.variants.len(),
        what: "variants",
    });
    for &variant in &plan.variants {
        let mut one = plan.clone();
        one.variants = vec![variant];
        if !plan.scenario.isolated(variant) {
            for o in run(&one, progress)? {
                records.push(o.record(plan));
                outcomes.push(o);
            }
            continue;
        }
        progress(Event::Step(&format!(
            "stress {} {variant}: in a child process",
            plan.scenario.name()
        )));
        let bound = std::time::Duration::from_secs_f64(plan.time_limit) + grace;
        // The child takes the parent's seed, so that both replay alike.
        let why = match run_child(&format!("{}:{variant}", plan.seed), bound) {
            Ok(End::Done(recs, code)) => {
                child_failed |= code != 0;
                records.extend(recs);
                continue;
            }
            Ok(End::Crashed(sig)) => {
                let (name, words, hint) = signal_words(sig);
                let hint = plan
                    .scenario
                    .crash_hint(variant, sig)
                    .unwrap_or_else(|| hint.to_string());
                format!("crashed: {name} ({words}) while running it: {hint}")
            }
            Ok(End::Hung(s)) => format!(
                "hung: no result for {s} s (the time limit is {} s, and a {} call that never returns cannot see it): killed",
                plan.time_limit,
                plan.scenario.plugs().map_or("plugin", |p| p.kind().noun())
            ),
            Ok(End::NoRecords(code)) => plugin::isolate::exited_words(code),
            Err(e) => format!("could not start a child process to run it: {e}"),
        };
        let det = detect::Detector::new();
        let mut o = VariantRun::judge(plan, variant, 0, 0.0, &det, vec![]);
        o.verdict = atomlab_core::Verdict::Fail;
        o.reason = why;
        let mut r = o.record(plan);
        // No figures: the run did not finish.
        r.metrics.clear();
        r.flag(
            if o.reason.starts_with("hung") {
                atomlab_core::FlagKind::Hung
            } else if o.reason.starts_with("exited") {
                atomlab_core::FlagKind::Exited
            } else {
                atomlab_core::FlagKind::Crashed
            },
            None,
            o.reason.clone(),
        );
        records.push(r);
        outcomes.push(o);
    }
    let mut status = exit_status(&outcomes, expect_fail);
    if child_failed && status == ExitStatus::Ok {
        status = ExitStatus::VerdictFailed;
    }
    progress(Event::End);
    Ok((records, status))
}

/// Runs every variant of `plan`, each a step of `progress`;
/// a variant whose threads cannot all start ends the run with its error.
pub fn run(
    plan: &Plan,
    progress: atomlab_core::progress::Sink<'_>,
) -> Result<Vec<VariantRun>, StressError> {
    let mut out = Vec::new();
    for &variant in &plan.variants {
        progress(atomlab_core::progress::Event::Step(&format!(
            "stress {} {variant}: {} {} on {} threads, seed {}{}",
            plan.scenario.name(),
            plan.ops,
            plan.scenario.ops_unit(),
            plan.threads,
            plan.seed,
            if plan.jitter { ", jitter" } else { "" }
        )));
        // The plan only holds names from the scenario's own list.
        if let Some(o) = plan.scenario.run(plan, variant)? {
            out.push(o);
        }
    }
    Ok(out)
}
