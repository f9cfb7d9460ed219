//! Size of a change: the Hodges–Lehmann shift with Moses' interval, and the
//! percentile bootstrap of the relative change of medians.

use crate::mwu::{norm_isf, norm_sf, UDist};
use crate::{finite_nonempty, median_sorted, open_unit, PMethod};

/// A confidence interval and the confidence it actually has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Achieved confidence: for Moses' interval the exact (or normal
    /// approximated) coverage, which can exceed the requested one (U is
    /// discrete) or fall short of it when too few runs were given; for the
    /// bootstrap the nominal one.
    pub confidence: f64,
}

/// Result of [`hodges_lehmann`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HodgesLehmann {
    /// Median of all `n_a·n_b` differences `b_j − a_i`: the estimated shift of
    /// `b` relative to `a`, in the samples' unit.
    pub shift: f64,
    /// Moses' distribution-free interval for the shift.
    pub ci: Interval,
    /// Whether the interval's order-statistic index came from the exact U
    /// distribution or from its normal approximation.
    pub method: PMethod,
}

/// Hodges–Lehmann estimate of the shift `b − a` with Moses' confidence
/// interval at (at least) `confidence`.
///
/// With the differences sorted, `D(1) <= … <= D(n_a·n_b)`, the interval is
/// `[D(k), D(n_a·n_b + 1 − k)]` with `k` the largest index such that
/// `P(U <= k − 1) <= (1 − confidence)/2` under the exact U distribution; its
/// coverage is `1 − 2·P(U <= k − 1)` (Hollander & Wolfe, ch. 4). When even
/// `k = 1` is short of that (3 vs 3 runs reach only 90 %), the full range
/// `[D(1), D(n_a·n_b)]` is returned with its lower achieved confidence rather
/// than a pretended one. When the exact distribution is too large to tabulate,
/// `k = ⌊n_a·n_b/2 − z·√(n_a·n_b·(n_a+n_b+1)/12)⌋` (at least 1) from the
/// normal approximation, with `z` the upper `(1 − confidence)/2` quantile, and
/// the achieved confidence is that approximation's, continuity corrected.
///
/// `None` for an empty or non-finite sample or `confidence` outside (0, 1).
/// Costs `O(n_a·n_b·log(n_a·n_b))` time and `8·n_a·n_b` bytes.
pub fn hodges_lehmann(a: &[f64], b: &[f64], confidence: f64) -> Option<HodgesLehmann> {
    if !(finite_nonempty(a) && finite_nonempty(b) && open_unit(confidence)) {
        return None;
    }
    let mut d: Vec<f64> = b
        .iter()
        .flat_map(|&y| a.iter().map(move |&x| y - x))
        .collect();
    d.sort_unstable_by(f64::total_cmp);
    let (k, achieved, method) = moses_index(a.len(), b.len(), confidence);
    let ci = Interval {
        low: d[k - 1],
        high: d[d.len() - k],
        confidence: achieved,
    };
    Some(HodgesLehmann {
        shift: median_sorted(&d),
        ci,
        method,
    })
}

/// Moses' order-statistic index `k` (1-based), its achieved confidence and
/// how it was found. See [`hodges_lehmann`].
pub(crate) fn moses_index(n_a: usize, n_b: usize, confidence: f64) -> (usize, f64, PMethod) {
    let tail = (1.0 - confidence) / 2.0;
    match UDist::new(n_a, n_b) {
        Some(dist) => {
            // First u with P(U <= u) > tail; it is at most n_a·n_b/2 because
            // tail < 1/2, so the interval's ends never cross.
            let first_over = (0..=n_a * n_b)
                .find(|&u| dist.cdf(u) > tail * (1.0 + 1e-12))
                .unwrap_or(0);
            let k = first_over.max(1);
            (k, 1.0 - 2.0 * dist.cdf(k - 1), PMethod::Exact)
        }
        None => {
            let (k, achieved) = moses_index_normal(n_a, n_b, tail);
            (k, achieved, PMethod::Normal)
        }
    }
}

/// Hollander & Wolfe's large-sample index and its (continuity-corrected)
/// normal-approximated coverage.
fn moses_index_normal(n_a: usize, n_b: usize, tail: f64) -> (usize, f64) {
    let cells = n_a as f64 * n_b as f64;
    let mean = cells / 2.0;
    let sd = (cells * (n_a + n_b + 1) as f64 / 12.0).sqrt();
    let k = (mean - norm_isf(tail) * sd).floor().max(1.0) as usize;
    (k, 1.0 - 2.0 * norm_sf((mean - (k as f64 - 0.5)) / sd))
}

/// Percentile bootstrap interval (Efron) of the relative change of medians,
/// `(median(b) − median(a)) / |median(a)|`, at nominal `confidence`.
///
/// Each of `resamples` rounds draws `n_a` values from `a` and `n_b` from `b`
/// with replacement (SplitMix64 seeded with `seed`, so the result is
/// reproducible) and computes the statistic; the interval's ends are the
/// `(1 ∓ confidence)/2` quantiles of those values (linear interpolation
/// between order statistics, numpy's default). `None` for an empty or
/// non-finite sample, `confidence` outside (0, 1), `resamples == 0`, or when a
/// resample's `median(a)` is 0 (the relative change is then undefined).
pub fn bootstrap_relative_change(
    a: &[f64],
    b: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    if !(finite_nonempty(a) && finite_nonempty(b) && open_unit(confidence)) {
        return None;
    }
    let mut rng = SplitMix64(seed);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut stats = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let ma = resample_median(a, &mut ra, &mut rng);
        let mb = resample_median(b, &mut rb, &mut rng);
        if ma == 0.0 {
            return None;
        }
        stats.push((mb - ma) / ma.abs());
    }
    if stats.is_empty() {
        return None;
    }
    stats.sort_unstable_by(f64::total_cmp);
    let tail = (1.0 - confidence) / 2.0;
    Some(Interval {
        low: quantile(&stats, tail),
        high: quantile(&stats, 1.0 - tail),
        confidence,
    })
}

fn resample_median(from: &[f64], buf: &mut [f64], rng: &mut SplitMix64) -> f64 {
    for slot in buf.iter_mut() {
        *slot = from[rng.below(from.len())];
    }
    buf.sort_unstable_by(f64::total_cmp);
    median_sorted(buf)
}

/// Quantile `q` of sorted, non-empty `s`, interpolating linearly between
/// order statistics (Hyndman & Fan type 7).
fn quantile(s: &[f64], q: f64) -> f64 {
    let h = (s.len() - 1) as f64 * q;
    let (lo, frac) = (h.floor() as usize, h - h.floor());
    match s.get(lo + 1) {
        Some(&next) => s[lo] + frac * (next - s[lo]),
        None => s[lo],
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014; Vigna's `splitmix64.c`): tiny,
/// fast, and its output is fixed forever, so seeded results reproduce.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An index in `0..n` by Lemire's multiply-shift (bias below `n / 2⁶⁴`).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_outputs() {
        // Rosetta Code, "Pseudo-random numbers/Splitmix64": the first five
        // outputs for seed 1234567.
        let mut r = SplitMix64(1_234_567);
        let want = [
            6_457_827_717_110_365_317,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423,
            4_593_380_528_125_082_431,
            16_408_922_859_458_223_821,
        ];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
    }

    #[test]
    fn moses_index_matches_sas_for_the_chicken_example() {
        // SAS PROC NPAR1WAY's asymptotic (Moses) 95 % limits for Hollander &
        // Wolfe's 9 vs 9 chicken example are D(18) and D(64) (values in
        // tests/reference.rs). The exact U distribution gives k = 18 too:
        // P(U <= 17) = 972/48620 <= 0.025 < P(U <= 18) = 0.02515.
        let (k, achieved) = moses_index_normal(9, 9, 0.025);
        assert_eq!(k, 18);
        assert!(achieved > 0.95 && achieved < 0.97, "{achieved}");
        let (k, achieved, method) = moses_index(9, 9, 0.95);
        assert_eq!((k, method), (18, PMethod::Exact));
        assert!((achieved - (1.0 - 2.0 * 972.0 / 48620.0)).abs() < 1e-12);
    }

    #[test]
    fn quantile_interpolates_like_numpy() {
        // numpy.quantile([1, 2, 3, 4], 0.25) == 1.75 (type 7).
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.25), 1.75);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 1.0), 4.0);
    }
}
