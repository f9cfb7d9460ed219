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
//! Verdicts ([`outcome::Outcome`]): `FAIL` when a violation was seen,
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
#![deny(missing_docs)]

pub mod detect;
pub mod judge;
pub mod outcome;
pub mod plan;
pub use atomlab_plugin as plugin;
pub mod registry;
pub mod rng;
pub mod scenario;

pub use outcome::{exit_status, Outcome};
pub use plan::{Field, Pin, Plan, Request, Scenario, StressError};
pub use registry::{all, find};

/// Runs every variant of `plan`, reporting progress lines to `progress`.
pub fn run(plan: &Plan, progress: &mut dyn FnMut(&str)) -> Vec<Outcome> {
    let mut out = Vec::new();
    for &variant in &plan.variants {
        progress(&format!(
            "stress {} {variant}: {} {} on {} threads, seed {}{}",
            plan.scenario.name(),
            plan.ops,
            plan.scenario.ops_unit(),
            plan.threads,
            plan.seed,
            if plan.jitter { ", jitter" } else { "" }
        ));
        // The plan only holds names from the scenario's own list.
        if let Some(o) = plan.scenario.run(plan, variant) {
            out.push(o);
        }
    }
    out
}
