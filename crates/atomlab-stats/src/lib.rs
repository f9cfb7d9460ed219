//! Did a metric change between two sets of runs? The statistics behind
//! `atomlab compare`, in the manner of benchstat and hyperfine.
//!
//! Input is one value per run (e.g. ns/op of each of 5 runs before, `a`, and
//! 5 after, `b`). [`compare`] reports the medians, the relative change of the
//! medians, a confidence interval for it, a Mann–Whitney p-value and a
//! [`Difference`]. The pieces are public too: [`median`], [`mann_whitney_u`],
//! [`exact_critical_u`], [`hodges_lehmann`], [`bootstrap_relative_change`].
//! Everything is std-only and deterministic (the bootstrap is seeded).
//! A sample that is empty or holds a NaN or an infinity gives `None`, never a
//! panic.
//!
//! ```
//! use atomlab_stats::{compare, regression_beyond, Direction, Settings, Difference};
//!
//! let before = [101.2, 100.8, 101.0, 100.9, 101.1]; // ns/op, 5 runs
//! let after = [104.1, 103.8, 104.3, 104.0, 103.9];
//! let c = compare(&before, &after, Direction::LowerIsBetter, Settings::default()).unwrap();
//! assert_eq!(c.verdict, Difference::Worse); // +3 %, p = 0.0079 (exact)
//! assert!(c.ci_low > 0.02 && c.ci_high < 0.04);
//! assert!(regression_beyond(&c, 0.02)); // a CI gate at 2 % fails
//! ```
//!
//! # What each statistic assumes
//!
//! All of them assume the runs are **independent** draws (no warm-up trend, no
//! run influencing the next) and say nothing about effects that move every run
//! of both samples alike.
//!
//! * **Mann–Whitney U** (Mann & Whitney 1947), two-sided. Null hypothesis: both
//!   samples come from the same distribution. `u_a` counts the pairs with
//!   `a_i > b_j`, a tie counting 1/2. The p-value is **exact** (the U
//!   distribution counted over all `C(n_a + n_b, n_a)` equally likely
//!   arrangements) when `min(n_a, n_b) <= 8` and no value occurs twice in the
//!   pooled sample, which is scipy 1.17's `method="auto"` rule; otherwise it is
//!   the **normal approximation** with tie correction and continuity correction,
//!   as scipy's `method="asymptotic"` (also when the exact table would be too
//!   big: `n_a·n_b > 250 000` or `C(n_a + n_b, n_a) > 2¹²⁵`). Ties get
//!   mid-ranks; the exact distribution assumes continuous data, which is why
//!   ties switch to the approximation.
//!   The smallest exact two-sided p is `2 / C(n_a + n_b, n_a)`: **0.1 for
//!   3 vs 3 runs**, 0.057 for 3 vs 4, 0.029 for 4 vs 4, **0.0079 for 5 vs 5**.
//!   So with `alpha = 0.05` a 3-vs-3 comparison can never be significant: use
//!   at least 5 runs a side.
//! * **Hodges–Lehmann shift** (Hodges & Lehmann 1963): the median of all
//!   `n_a·n_b` differences `b_j − a_i`, with **Moses' distribution-free
//!   interval** (Hollander & Wolfe, *Nonparametric Statistical Methods*, ch. 4):
//!   order statistics of those differences picked with the exact U
//!   distribution (the normal approximation when it cannot be tabulated). It
//!   assumes the **shift model**: `b` is distributed as `a + Δ` for continuous
//!   distributions, the same shape and spread. Ties make the stated coverage
//!   approximate. When the requested confidence is unattainable (3 vs 3 runs
//!   reach at most 90 %), the full range of differences is returned and
//!   [`Interval::confidence`] says what it achieves.
//! * **Bootstrap** (Efron 1979): a percentile interval of
//!   `(median(b) − median(a)) / |median(a)|` over resamples drawn with
//!   replacement. It assumes each sample represents its distribution well,
//!   which a handful of runs does not: with few runs its intervals are too
//!   narrow. [`compare`] uses it only as a fallback (below). Each
//!   resample's median is drawn directly as an order statistic of the
//!   sorted sample (its rank is Beta distributed), which has exactly the
//!   brute-force bootstrap's distribution at the cost of one sort, so a
//!   million samples a side cost well under a second
//!   ([`bootstrap_relative_change`]).
//!
//! # The comparison
//!
//! [`compare`] reports `median_a`, `median_b`, `change = (median_b −
//! median_a) / |median_a|` (a fraction; `None` when `median_a == 0`), the
//! Mann–Whitney `p_value`, and `[ci_low, ci_high]`, an interval for the
//! relative change. When every value is positive (a time, a rate, a
//! throughput: every metric atomlab compares) it is on the **ratio
//! scale**: Moses' interval for the Hodges–Lehmann shift of the
//! logarithms, `[exp(low) − 1, exp(high) − 1]` ([`CiMethod::LogRatio`]),
//! whose shift model is `b = a·r`; it can never fall below −100 % (a
//! latency cannot fall by more than all of it), as criterion's and
//! benchstat's ratios cannot. Otherwise it is **Moses' interval for the
//! Hodges–Lehmann shift divided by `|median_a|`**
//! ([`CiMethod::HodgesLehmann`]), which treats `median_a` as known. When `n_a·n_b > 1 000 000` (too many pairwise differences to hold)
//! it falls back to the **percentile bootstrap** ([`CiMethod::Bootstrap`],
//! `Settings::resamples` rounds seeded with `Settings::seed`).
//! `ci_confidence` is the interval's achieved confidence.
//!
//! ## Verdict rules
//!
//! With `t = Settings::threshold`, tried in this order:
//!
//! 1. **Better / Worse** when the change is *significant and large*.
//!    Significant means: `p_value < alpha`, the interval reaches the requested
//!    `Settings::confidence`, and it lies wholly on one side of zero
//!    (`ci_low > 0` or `ci_high < 0`). Large means: `change` is on that same
//!    side with `|change| > t`. (The confidence condition matters with ties:
//!    scipy's normal approximation gives p = 0.047 for `[1, 1, 1]` vs
//!    `[2, 2, 2]`, though no arrangement of 3 vs 3 runs is rarer than 1 in
//!    10 two-sided.) An increase is `Better` for
//!    [`Direction::HigherIsBetter`] and `Worse` for
//!    [`Direction::LowerIsBetter`]; a decrease the other way round.
//! 2. **TooFewRuns** when the interval's achieved confidence is below
//!    `Settings::confidence`: too few runs for any interval to reach it
//!    (3 vs 3 reach 90 % at best; [`runs_needed`] says how many it takes),
//!    whatever the noise.
//! 3. **TooNoisy** when the data cannot support a "no change" claim: the
//!    interval is wider than `2·t` (no interval that wide fits inside
//!    `[−t, t]`, so a change of `t` either way cannot be ruled out).
//! 4. **NoChange** otherwise: not significant, or significant but not beyond
//!    `t`, and measured precisely enough.
//!
//! **Many comparisons.** [`compare`] judges one metric with its own
//! p-value. When many are judged at once (`atomlab compare` judges every
//! metric of every matched record), [`holm`] adjusts the p-values
//! (Holm–Bonferroni) and [`Comparison::judge`] applies the same rules with
//! the adjusted one, so the chance of any false "better" or "worse" among
//! them stays at most `alpha`; [`ab`] does this, and also leaves tail
//! percentiles with too few samples under them unjudged.
//!
//! [`regression_beyond`] is the CI gate: true when the comparison is
//! significant (as in rule 1) on the worse side and the change in the worse
//! direction exceeds the gate's own threshold.
//!
//! # Sources
//!
//! * H. B. Mann, D. R. Whitney (1947), "On a test of whether one of two random
//!   variables is stochastically larger than the other", *Ann. Math. Statist.*
//!   18(1), 50–60.
//! * J. L. Hodges, E. L. Lehmann (1963), "Estimates of location based on rank
//!   tests", *Ann. Math. Statist.* 34(2), 598–611.
//! * M. Hollander, D. A. Wolfe (and E. Chicken), *Nonparametric Statistical
//!   Methods*, Wiley, chapter 4: the two-sample shift estimate and Moses'
//!   interval, with the large-sample index used here.
//! * S. Holm (1979), "A simple sequentially rejective multiple test
//!   procedure", *Scand. J. Statist.* 6(2), 65–70; R's `p.adjust(p,
//!   "holm")` for the adjusted p-values' form.
//! * H. A. David, H. N. Nagaraja (2003), *Order Statistics*, 3rd ed., Wiley,
//!   §2.1 (uniform order statistics are Beta distributed); G. Marsaglia,
//!   W. W. Tsang (2000), "A simple method for generating gamma variables",
//!   *ACM TOMS* 26(3), for the Beta draws.
//! * B. Efron (1979), "Bootstrap methods: another look at the jackknife",
//!   *Ann. Statist.* 7(1), 1–26; Efron & Tibshirani (1993), *An Introduction to
//!   the Bootstrap*, for the percentile interval.
//! * scipy.stats.mannwhitneyu (scipy 1.17.1) for the method choice and the
//!   normal approximation's exact form.
//!
//! # Limitations
//!
//! * Runs must be independent. Drift (thermal, frequency scaling, a noisy
//!   neighbour) within a session violates that and no statistic here detects
//!   it; interleave `a` and `b` runs where possible.
//! * The tests detect a shift. A change of spread or shape with the same median
//!   may go unnoticed, and the Hodges–Lehmann interval is only meaningful under
//!   the shift model.
//! * The relative interval divides by `median_a` as if it were exact; its
//!   uncertainty is ignored.
//! * Ties (e.g. coarse timer resolution) force the normal approximation, which
//!   is poor for very small samples, and make the interval's coverage
//!   approximate.
//! * Few runs cap what can be shown: the smallest exact p is `2 / C(n_a + n_b,
//!   n_a)`, so 3 vs 3 and 3 vs 4 can never be significant at `alpha = 0.05`,
//!   and 3 vs 3 is always `TooNoisy` at 95 %. Use 5 or more runs a side.
//! * The bootstrap fallback (huge samples only) has the percentile bootstrap's
//!   usual slight undercoverage. [`compare`]'s p-value is for one metric;
//!   across many, use [`holm`] (as [`ab`] does), which controls the
//!   family-wise error under any dependence but costs power: with `m`
//!   metrics the smallest p must be below `alpha/m`.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod mwu;
mod shift;

pub mod draw;

pub use mwu::{exact_critical_u, mann_whitney_u, MannWhitney};
pub mod ab;
pub mod interleave;
pub use shift::{bootstrap_relative_change, hodges_lehmann, HodgesLehmann, Interval};

/// Above this many pairwise differences, [`compare`] uses the bootstrap
/// instead of the Hodges–Lehmann interval (8 MB of differences).
const MAX_HL_PAIRS: usize = 1_000_000;

/// Which way is good for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// E.g. throughput, ops/s.
    HigherIsBetter,
    /// E.g. latency, ns/op.
    LowerIsBetter,
}

/// How a p-value or an interval index was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PMethod {
    /// From the exact distribution of U.
    Exact,
    /// From U's normal approximation.
    Normal,
}

/// Which interval [`Comparison::ci_low`]/[`Comparison::ci_high`] are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CiMethod {
    /// Moses' interval for the Hodges–Lehmann shift of the samples'
    /// logarithms, as a ratio less one (`exp(shift) − 1`): used when every
    /// value is positive (times, rates, throughput), so that the interval
    /// is on the ratio scale and never below −100 %.
    LogRatio,
    /// Moses' interval for the Hodges–Lehmann shift, divided by `|median_a|`
    /// (samples with a zero or a negative value).
    HodgesLehmann,
    /// Percentile bootstrap of the relative change of medians.
    Bootstrap,
}

/// What [`compare`] says of the difference between two samples; the rules
/// are in the crate documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Difference {
    /// Significantly better by more than the threshold.
    Better,
    /// Significantly worse by more than the threshold.
    Worse,
    /// No change beyond the threshold, measured precisely enough to say so.
    NoChange,
    /// The runs vary too much to tell: the interval is wider than twice
    /// the threshold.
    TooNoisy,
    /// Too few runs for the interval to reach the requested confidence
    /// ([`runs_needed`] says how many it takes), whatever their noise.
    TooFewRuns,
}

impl Difference {
    /// Its words in a table: `better`, `worse`, `no change`, `too noisy`.
    pub fn as_str(self) -> &'static str {
        match self {
            Difference::Better => "better",
            Difference::Worse => "worse",
            Difference::NoChange => "no change",
            Difference::TooNoisy => "too noisy",
            Difference::TooFewRuns => "too few runs",
        }
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Knobs of [`compare`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Smallest relative change that matters, as a fraction (0.01 = 1 %).
    pub threshold: f64,
    /// Requested confidence of the interval.
    pub confidence: f64,
    /// Bootstrap resamples (used only by the bootstrap fallback).
    pub resamples: usize,
    /// Bootstrap seed.
    pub seed: u64,
    /// Significance level for the Mann–Whitney p-value.
    pub alpha: f64,
}

impl Default for Settings {
    /// Threshold 1 %, confidence 95 %, 10 000 resamples, seed 0, alpha 0.05.
    fn default() -> Self {
        Settings {
            threshold: 0.01,
            confidence: 0.95,
            resamples: 10_000,
            seed: 0,
            alpha: 0.05,
        }
    }
}

/// Result of [`compare`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// Number of runs in `a`.
    pub n_a: usize,
    /// Number of runs in `b`.
    pub n_b: usize,
    /// Median of `a` (before).
    pub median_a: f64,
    /// Median of `b` (after).
    pub median_b: f64,
    /// `(median_b − median_a) / |median_a|`, a fraction.
    pub change: f64,
    /// Lower end of the interval for `change`.
    pub ci_low: f64,
    /// Upper end of the interval for `change`.
    pub ci_high: f64,
    /// Achieved confidence of the interval.
    pub ci_confidence: f64,
    /// How the interval was computed.
    pub ci_method: CiMethod,
    /// Two-sided Mann–Whitney p-value.
    pub p_value: f64,
    /// The p-value the verdict was judged with: `p_value` from [`compare`],
    /// an adjusted one after [`Comparison::judge`] (e.g. [`holm`]'s).
    pub p_judged: f64,
    /// How the p-value was computed.
    pub p_method: PMethod,
    /// The metric's good direction, as given.
    pub direction: Direction,
    /// `p_value < alpha`, the interval reaches the requested confidence and
    /// excludes zero.
    pub significant: bool,
    /// The verdict.
    pub verdict: Difference,
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

/// Compares runs `a` (before) with runs `b` (after); see the crate
/// documentation for what is computed and the verdict rules. `None` when a
/// sample is empty or non-finite, `median_a == 0`, `threshold` is negative
/// or not finite, `confidence` or `alpha` lies outside (0, 1), or the
/// bootstrap fallback is needed with `resamples == 0`.
pub fn compare(
    a: &[f64],
    b: &[f64],
    direction: Direction,
    settings: Settings,
) -> Option<Comparison> {
    let Settings {
        threshold,
        confidence,
        resamples,
        seed,
        alpha,
    } = settings;
    let threshold_ok = threshold.is_finite() && threshold >= 0.0;
    if !(threshold_ok && open_unit(confidence) && open_unit(alpha)) {
        return None;
    }
    let (median_a, median_b) = (median(a)?, median(b)?);
    if median_a == 0.0 {
        return None;
    }
    let scale = median_a.abs();
    let mw = mann_whitney_u(a, b)?;
    let positive = a.iter().chain(b).all(|&x| x > 0.0);
    let (ci, ci_method) = if a.len().saturating_mul(b.len()) <= MAX_HL_PAIRS && positive {
        // The shift model on the log scale is a ratio model (b is a·r):
        // the interval of r, less one, cannot fall below −100 % however
        // few or noisy the runs (criterion and benchstat report changes as
        // ratios too).
        let (la, lb): (Vec<f64>, Vec<f64>) = (
            a.iter().map(|x| x.ln()).collect(),
            b.iter().map(|x| x.ln()).collect(),
        );
        let hl = hodges_lehmann(&la, &lb, confidence)?;
        let ci = Interval {
            low: hl.ci.low.exp_m1(),
            high: hl.ci.high.exp_m1(),
            ..hl.ci
        };
        (ci, CiMethod::LogRatio)
    } else if a.len().saturating_mul(b.len()) <= MAX_HL_PAIRS {
        let hl = hodges_lehmann(a, b, confidence)?;
        let ci = Interval {
            low: hl.ci.low / scale,
            high: hl.ci.high / scale,
            ..hl.ci
        };
        (ci, CiMethod::HodgesLehmann)
    } else {
        (
            bootstrap_relative_change(a, b, confidence, resamples, seed)?,
            CiMethod::Bootstrap,
        )
    };
    let change = (median_b - median_a) / scale;
    let mut c = Comparison {
        n_a: a.len(),
        n_b: b.len(),
        median_a,
        median_b,
        change,
        ci_low: ci.low,
        ci_high: ci.high,
        ci_confidence: ci.confidence,
        ci_method,
        p_value: mw.p_value,
        p_judged: mw.p_value,
        p_method: mw.method,
        direction,
        significant: false,
        verdict: Difference::TooNoisy,
    };
    c.judge(mw.p_value, settings);
    Some(c)
}

impl Comparison {
    /// Judges again with `p` in place of the raw p-value, e.g. a
    /// [`holm`]-adjusted one when many comparisons are made at once: sets
    /// [`Comparison::p_judged`], [`Comparison::significant`] and
    /// [`Comparison::verdict`] by the rules in the crate documentation.
    pub fn judge(&mut self, p: f64, settings: Settings) {
        let Settings {
            threshold,
            confidence,
            alpha,
            ..
        } = settings;
        let (change, low, high) = (self.change, self.ci_low, self.ci_high);
        let confident = self.ci_confidence >= confidence * (1.0 - 1e-12);
        let significant = p < alpha && confident && (low > 0.0 || high < 0.0);
        self.verdict = if significant && low > 0.0 && change > threshold {
            match self.direction {
                Direction::HigherIsBetter => Difference::Better,
                Direction::LowerIsBetter => Difference::Worse,
            }
        } else if significant && high < 0.0 && change < -threshold {
            match self.direction {
                Direction::HigherIsBetter => Difference::Worse,
                Direction::LowerIsBetter => Difference::Better,
            }
        } else if !confident {
            Difference::TooFewRuns
        } else if high - low > 2.0 * threshold {
            Difference::TooNoisy
        } else {
            Difference::NoChange
        };
        self.p_judged = p;
        self.significant = significant;
    }
}

/// The fewest runs a side for which Moses' interval can reach
/// `confidence` without ties: the smallest `n` with `2 / C(2n, n) <= 1 −
/// confidence` (4 at 95 %: 3 against 3 reach 90 %).
pub fn runs_needed(confidence: f64) -> usize {
    let mut n = 1usize;
    loop {
        let arrangements = (1..=n).fold(1.0_f64, |c, i| c * (n + i) as f64 / i as f64);
        if 2.0 / arrangements <= 1.0 - confidence || n >= 1000 {
            return n;
        }
        n += 1;
    }
}

/// Holm–Bonferroni adjusted p-values (Holm 1979), in the order given: with
/// the `m` p-values sorted, `p(1) <= … <= p(m)`, the adjusted `p(i)` is
/// `max over j <= i of min(1, (m − j + 1)·p(j))`. Rejecting every
/// hypothesis whose adjusted p is below `alpha` keeps the chance of even one
/// false rejection among the `m` at most `alpha`, whatever their dependence
/// (R's `p.adjust(p, "holm")`). A NaN stays NaN and is left out of `m`.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let m = order.len();
    let mut out = vec![f64::NAN; p.len()];
    let mut running = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// CI gate: true when `c` is significantly worse ([`Comparison::significant`]
/// with the interval on the worse side of zero) and the change in the worse
/// direction exceeds `threshold` (a fraction). Independent of the threshold
/// the comparison's verdict used, so a gate can be looser than the report.
pub fn regression_beyond(c: &Comparison, threshold: f64) -> bool {
    let (worse_change, interval_worse) = match c.direction {
        Direction::LowerIsBetter => (c.change, c.ci_low > 0.0),
        Direction::HigherIsBetter => (-c.change, c.ci_high < 0.0),
    };
    c.significant && interval_worse && worse_change > threshold
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
