//! `atomlab bench`: what a memory-ordering choice costs on this machine.
//!
//! The crate has two layers. `harness` runs one operation on N threads and
//! measures it (see its docs for how, and for what it cannot see); the
//! [`scenario`] modules turn the primitives of `atomlab-prims` into
//! operations and the harness's samples into [`atomlab_core::Record`]s.
//! [`plan`] says what a scenario is and validates a request into a
//! [`plan::Plan`] (the options only some scenarios take are [`options`]), with errors that list the valid choices; [`registry`]
//! lists the scenarios.
//!
//! Figures and where they come from: ops/s and ns/op from
//! `CLOCK_MONOTONIC` (ops/s: every thread's operations over the run's wall
//! time, from the first thread's start to the last one's end; ns/op: the
//! time one thread spends per operation, threads × wall time over
//! operations, so ns/op = threads × 10⁹ / ops/s in every cell); reference cycles per op from the TSC (x86-64) or
//! CNTVCT (aarch64), never called core cycles; core cycles, instructions and
//! requested events from `perf_event_open` when the kernel allows it; CPU
//! utilisation from each thread's `CLOCK_THREAD_CPUTIME_ID`; fairness as the
//! fewest over the most operations done by one thread. The method follows
//! ccbench (Trigonakis, David, Guerraoui, "Everything you always wanted to
//! know about synchronization but were afraid to ask", SOSP 2013) for the
//! cache-line round trips, and hyperfine for repeated runs with a warm-up.
#![warn(unreachable_pub)]
#![deny(missing_docs)]

pub mod batch;
mod clock;
mod harness;
pub mod options;
pub mod plan;
mod plausible;
pub use atomlab_plugin as plugin;
pub use atomlab_pmu as pmu;
pub mod registry;
pub mod scenario;

pub use options::{Contention, Field, FixedWork, Placement, Ring, WaitMode};
pub use plan::{BenchError, Plan, Request, Scenario, TableKind};
pub use registry::{all, find};
pub use scenario::run;
