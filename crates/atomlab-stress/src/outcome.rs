//! One variant's result: what ran, what the detectors saw, and the verdict,
//! with the reason when a broken variant was not caught (judged in
//! [`crate::judge`]), and the exit status a set of them gives.

use atomlab_core::{ExitStatus, Verdict};

use crate::detect::{Kind, Violation};

/// One variant's judged run: what ran, what the detectors saw, the verdict.
#[derive(Debug, Clone)]
pub struct VariantRun {
    /// The variant.
    pub variant: &'static str,
    /// Whether it is meant to be correct.
    pub correct: bool,
    /// Operations done.
    pub ops: u64,
    /// Wall time of the run, seconds.
    pub seconds: f64,
    /// Violations by kind (only kinds seen).
    pub violations: Vec<(Kind, u64)>,
    /// The first violation in detail.
    pub first: Option<Violation>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why (always present: what was shown, or why nothing was).
    pub reason: String,
    /// Other things the reader must see.
    pub notes: Vec<String>,
    /// The command that replays the run.
    pub replay: String,
    /// The workers' CPU time over the wall time: how many of them really ran
    /// at once, on average (spinning counts as running).
    pub parallelism: Option<f64>,
}

impl VariantRun {
    /// Total violations.
    pub fn total_violations(&self) -> u64 {
        self.violations.iter().map(|(_, n)| n).sum()
    }
}

/// The exit status for a set of outcomes: 1 when a variant meant to be
/// correct failed or timed out undecided; with `expect_fail`, 1 unless
/// every variant was caught (for CI jobs that check the detectors).
pub fn exit_status(outcomes: &[VariantRun], expect_fail: bool) -> ExitStatus {
    let bad = if expect_fail {
        outcomes.iter().any(|o| o.verdict != Verdict::Fail)
    } else {
        outcomes
            .iter()
            .any(|o| o.correct && matches!(o.verdict, Verdict::Fail | Verdict::Timeout))
    };
    if bad {
        ExitStatus::VerdictFailed
    } else {
        ExitStatus::Ok
    }
}
