//! Did a metric change between two sets of runs? The statistics behind
//! `atomlab compare`, in the manner of benchstat and hyperfine. Std-only.
//!
//! [`mann_whitney_u`]: two-sided Mann–Whitney U test (Mann & Whitney 1947),
//! exact or normal-approximated by scipy 1.17's `method="auto"` rule.
//! [`hodges_lehmann`]: the shift estimate (Hodges & Lehmann 1963) with Moses'
//! distribution-free interval (Hollander & Wolfe, ch. 4), reporting the
//! confidence it achieves. [`bootstrap_relative_change`]: seeded percentile
//! bootstrap (Efron 1979) of the relative change of medians.
#![deny(missing_docs)]

mod mwu;
mod shift;

pub use mwu::{exact_critical_u, mann_whitney_u, MannWhitney};
pub use shift::{bootstrap_relative_change, hodges_lehmann, HodgesLehmann, Interval};

/// How a p-value or an interval index was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PMethod {
    /// From the exact distribution of U.
    Exact,
    /// From U's normal approximation.
    Normal,
}

/// Median of `x` (mean of the middle two for an even count); `None` when `x`
/// is empty or holds a NaN or an infinity.
pub fn median(x: &[f64]) -> Option<f64> {
    if !finite_nonempty(x) {
        return None;
    }
    let mut s = x.to_vec();
    s.sort_unstable_by(f64::total_cmp);
    Some(median_sorted(&s))
}

/// `x` lies in (0, 1) (false for NaN).
fn open_unit(x: f64) -> bool {
    x > 0.0 && x < 1.0
}

fn finite_nonempty(x: &[f64]) -> bool {
    !x.is_empty() && x.iter().all(|v| v.is_finite())
}

/// Median of sorted, non-empty `s`.
fn median_sorted(s: &[f64]) -> f64 {
    let mid = s.len() / 2;
    if s.len() % 2 == 1 {
        s[mid]
    } else {
        // Halve first: the sum of two large finite values could overflow.
        s[mid - 1] / 2.0 + s[mid] / 2.0
    }
}
