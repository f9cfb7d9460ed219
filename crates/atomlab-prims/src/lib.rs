//! The primitives atomlab measures (`atomlab bench`) and tortures
//! (`atomlab stress`): counters, reference counts, locks and fences, each in
//! the variants that the cases behind atomlab compared.
//!
//! Every atomic operation carries an `// ORDERING:` comment naming what it
//! pairs with or why `Relaxed` is enough. Deliberately broken variants (used by
//! `stress` to show its detectors work) are named `Broken…` and say exactly
//! what they break.
//!
//! The atomics come through a private shim (`sync`) that swaps in loom's
//! model-checked types under `RUSTFLAGS="--cfg loom"`, as crossbeam and rtrb
//! do; `tests/loom_*.rs` explore every interleaving of the correct locks and
//! refcounts under a preemption bound.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod arch;
pub mod broken;
pub mod counter;
pub mod doorbell;
pub mod fence;
pub mod lock;
mod pad;
pub mod refcount;
pub mod seqlock;
pub mod spsc;
mod sync;
pub mod two_thread;

pub use pad::CachePadded;
