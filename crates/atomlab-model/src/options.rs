//! How to run a check: the options [`crate::check_test`] takes, and which
//! engine builds the executions (the enumeration of `check.rs` and
//! `exec.rs`, or the exploration of `explore.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::mapping::AcquireLoad;

/// How to run a check.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Give up (TIMEOUT) after this instant.
    pub deadline: Option<Instant>,
    /// Running counts of the search, for progress lines on long checks
    /// (shared by the caller, who reads them while the check runs).
    pub progress: Option<std::sync::Arc<SearchProgress>>,
    /// Explain every forbidden outcome.
    pub explain: bool,
    /// Produce Graphviz graphs.
    pub graphs: bool,
    /// How C11 acquire loads compile to AArch64.
    pub acquire: AcquireLoad,
    /// Which exploration builds the executions.
    pub engine: Engine,
    /// Search without pruning: no partial executions judged, and every
    /// combination of the threads' runs visited (not only those whose
    /// values can be read, `combine.rs`), to measure what pruning saves:
    /// the verdicts are the same, only `candidates` and the time grow.
    pub unpruned: bool,
    /// How loops in thread code are bounded: `None` (every litmus test)
    /// runs each path up to the step bound as before; `Some` applies the
    /// spin-assume rule and an unroll bound ([`LoopRule`]), for code lifted
    /// from a binary (`atomlab verify`).
    pub loops: Option<LoopRule>,
    /// Stop as soon as the test's condition is decided for every model (an
    /// allowed execution satisfies an `exists` or `~exists`, or one
    /// violates a `forall`): herd7's `-speedcheck fast`. The result then
    /// holds the final states found so far, not all of them, and its
    /// witness is the first execution that decided; `candidates` counts the
    /// executions examined until then; an observation other than Never is
    /// Sometimes (whether every execution satisfies the condition is not
    /// known). For a checker that wants one
    /// counterexample (`atomlab verify`'s FAIL), as GenMC stops at the
    /// first error.
    pub stop_at_first: bool,
    /// Search one of the combinations of runs that swapping
    /// interchangeable threads relates (threads with the same code,
    /// registers and initial values that neither the condition, the
    /// `locations` nor the filter tells apart), counting it once for each:
    /// the same states and verdicts, counts multiplied back, the other
    /// combinations' time saved. `atomlab verify`'s clients run N copies
    /// of one thread. Off for `check`, whose witnesses and explanations
    /// name threads.
    pub symmetry: bool,
    /// Probe the threads' shared prefixes at every step of the search over
    /// combinations of runs, not only where many combinations remain
    /// (`combine.rs`): the same answers, more time; for tests of the probe.
    pub probe_all: bool,
    /// Judge every execution with `u128` words, as those of more than 64
    /// events are (rel.rs): the same answers, more time; for tests that
    /// hold the wide path to the narrow one.
    pub wide_words: bool,
    /// Judge executions of at most 32 events with `u64` words rather than
    /// `u32` ones (rel.rs): the same answers, more time; for tests that
    /// hold the narrow path to the usual one.
    pub no_narrow_words: bool,
    /// Where to find the combinations of the threads' runs by growing one
    /// execution graph at a time (`grow.rs`, as GenMC does), where that
    /// finds them all (no allowed execution with a `po ∪ rf` cycle) and
    /// they are many (over `grow.rs`'s `ABOVE`), rather than by searching
    /// their product (`combine.rs`): the same answers either way.
    pub grow: Grow,
    /// With `grow` other than [`Grow::Never`]: grow graphs wherever that
    /// finds every combination,
    /// however few the combinations (`grow.rs`'s `ABOVE`); for tests that
    /// hold the growing to the product search.
    pub grow_all: bool,
}

/// Where growing graphs replaces the search over the product of the
/// threads' runs ([`CheckOptions::grow`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Grow {
    /// Never: the product is searched (the default; tests hold growing
    /// to it).
    #[default]
    Never,
    /// Where a model raises flags (the Linux-kernel model): the product
    /// search judges no prefix there (combine.rs's probe), while grown
    /// graphs are probed, which is what answers issue 37's seqlocks (SEQLOCK-4
    /// 56-67 s to 0.4-0.6 s). Not elsewhere: on C11 tests growing was
    /// slower (WWWR-5 16.3 s against 19.3 s, STORES4x3 0.31 against 0.45
    /// s, 2026-12-07), and the ISA tests' product search probes already.
    /// What `atomlab check` does.
    WhereFlagged,
    /// Wherever it applies: `atomlab verify`'s lifted code, whose runs are
    /// many and few of them combine (its 3-thread locks).
    Always,
}

/// Spin loops and the unroll bound, for code with loops (`atomlab verify`).
///
/// Spin-assume, as GenMC does it (Kokologiannakis and Vafeiadis, "GenMC: A
/// Model Checker for Weak Memory Models", CAV 2021, and Kokologiannakis,
/// Raad and Vafeiadis, "Effective lock handling in stateless model
/// checking", OOPSLA 2019): a path that jumps back to an instruction it
/// ran before, having written nothing since (only reads, fences, failed
/// store-exclusives, and read-modify-writes that wrote back the value they
/// read, as a TAS that finds the lock taken), repeats an iteration that
/// changed nothing another thread can see. Such a path is dropped: the
/// run in which the loop's read returns the value that leaves the loop is
/// explored anyway, so no final state a safety property can see is lost,
/// and a spin loop no longer makes every test exceed the step bound.
/// Any other backward jump counts an iteration of that loop; a path past
/// `unroll` iterations of one loop stops the check with
/// [`crate::CheckError::TooBig`] (the caller's BOUND), never a PASS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopRule {
    /// Iterations of one loop (that writes) allowed on one path.
    pub unroll: usize,
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

/// How far a check has gone, counted as it runs: a caller shares one with
/// [`CheckOptions::progress`] and reads it from another thread for its
/// progress line. Each count says where a long check spends its time.
#[derive(Debug, Default)]
pub struct SearchProgress {
    /// The threads' runs enumerated: paths through one thread's code with
    /// the values its reads may take (`interp.rs`); a check's first
    /// seconds can go there.
    pub runs: AtomicU64,
    /// Combinations of the threads' runs searched, each an execution
    /// skeleton (`combine.rs`): verify's lock clients spend most of their
    /// time on combinations that never become a candidate.
    pub combinations: AtomicU64,
    /// Candidate executions explored, added to every 64.
    pub executions: AtomicU64,
}

impl SearchProgress {
    /// Adds `n` to `count` (one of this struct's fields).
    pub(crate) fn add(count: &AtomicU64, n: u64) {
        // ORDERING: Relaxed: progress counts only; nothing is published
        // through them, and the reader wants a recent value, not an order.
        count.fetch_add(n, Ordering::Relaxed);
    }

    /// The three counts as they are now: (runs, combinations, executions).
    pub fn now(&self) -> (u64, u64, u64) {
        // ORDERING: Relaxed: see `add`.
        (
            self.runs.load(Ordering::Relaxed),
            self.combinations.load(Ordering::Relaxed),
            self.executions.load(Ordering::Relaxed),
        )
    }
}
