//! How to run a check: the options [`crate::check_test`] takes, and which
//! engine builds the executions (the enumeration of `check.rs` and
//! `exec.rs`, or the exploration of `explore.rs`).

use std::time::Instant;

use crate::mapping::AcquireLoad;

/// How to run a check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Give up (TIMEOUT) after this instant.
    pub deadline: Option<Instant>,
    /// A running count of candidate executions explored, added to every 64
    /// candidates, for progress lines on long tests (shared by the caller).
    pub explored: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Explain every forbidden outcome.
    pub explain: bool,
    /// Produce Graphviz graphs.
    pub graphs: bool,
    /// How C11 acquire loads compile to AArch64.
    pub acquire: AcquireLoad,
    /// Which exploration builds the executions.
    pub engine: Engine,
    /// Explore without judging partial executions (no pruning), to measure
    /// what pruning saves: the verdicts are the same, only `candidates`
    /// and the time grow.
    pub unpruned: bool,
}

/// Which exploration builds a test's executions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Engine {
    /// [`Engine::Explore`] for built-in models without explanations,
    /// [`Engine::Enumerate`] otherwise.
    #[default]
    Auto,
    /// Every candidate execution (the reference engine, `exec.rs`).
    Enumerate,
    /// Incremental exploration with pruning (`explore.rs`).
    Explore,
}

impl Engine {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Auto => "auto",
            Engine::Enumerate => "enumerate",
            Engine::Explore => "explore",
        }
    }
}
