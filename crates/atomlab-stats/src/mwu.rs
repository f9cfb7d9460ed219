//! Mann–Whitney U: ranks, the exact null distribution of U, the normal
//! approximation, and the normal distribution functions they need.

use crate::{finite_nonempty, open_unit, PMethod};

/// Largest `n_a * n_b` for which the exact distribution of U is tabulated
/// (an `i128` per value of U; 250 000 cells is 4 MB).
const MAX_EXACT_CELLS: usize = 250_000;

/// Result of [`mann_whitney_u`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U statistic of sample `a`: the number of pairs `(a_i, b_j)` with
    /// `a_i > b_j`, a tied pair counting 1/2 (scipy's `statistic`).
    pub u_a: f64,
    /// U statistic of sample `b`; `u_a + u_b == n_a * n_b`.
    pub u_b: f64,
    /// Two-sided p-value, clipped to at most 1.
    pub p_value: f64,
    /// How `p_value` was computed.
    pub method: PMethod,
}

/// Two-sided Mann–Whitney U test of `a` against `b`.
///
/// The p-value is exact when `min(n_a, n_b) <= 8` and no value occurs twice in
/// the pooled sample (scipy 1.17's `method="auto"` rule), provided the exact
/// distribution can be tabulated (`n_a * n_b <= 250 000` and
/// `C(n_a + n_b, n_a)` fits an `i128`); otherwise it is the normal
/// approximation with tie correction and continuity correction, as scipy's
/// `method="asymptotic"`. `None` when a sample is empty or holds a NaN or an
/// infinity.
pub fn mann_whitney_u(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if !finite_nonempty(a) || !finite_nonempty(b) {
        return None;
    }
    let (n_a, n_b) = (a.len(), b.len());
    let (rank_sum_a, tie_term) = ranks(a, b);
    let u_a = rank_sum_a - n_a as f64 * (n_a as f64 + 1.0) / 2.0;
    let cells = n_a as f64 * n_b as f64;
    let u_b = cells - u_a;
    let exact = if n_a.min(n_b) <= 8 && tie_term == 0.0 {
        UDist::new(n_a, n_b)
    } else {
        None
    };
    let (p_value, method) = match exact {
        // No ties: U is an integer. P(U >= u_max) = P(U <= n_a*n_b - u_max).
        Some(dist) => {
            let lower = (cells - u_a.max(u_b)) as usize;
            ((2.0 * dist.cdf(lower)).min(1.0), PMethod::Exact)
        }
        None => (normal_p(u_a, n_a, n_b, tie_term, true), PMethod::Normal),
    };
    Some(MannWhitney {
        u_a,
        u_b,
        p_value,
        method,
    })
}

/// Critical value of U from the exact distribution: the largest `u` with
/// two-sided `2·P(U <= u) <= alpha`, i.e. "reject when min(U_a, U_b) <= u"
/// as in textbook tables. `None` when no `u` qualifies (with 3 vs 3 runs the
/// smallest two-sided p is 0.1, so none at `alpha = 0.05`), when `alpha` is
/// not in (0, 1), or when the distribution is too large to tabulate.
pub fn exact_critical_u(n_a: usize, n_b: usize, alpha: f64) -> Option<usize> {
    if !open_unit(alpha) {
        return None;
    }
    let dist = UDist::new(n_a, n_b)?;
    let first_over = (0..=n_a * n_b).find(|&u| 2.0 * dist.cdf(u) > alpha * (1.0 + 1e-12))?;
    first_over.checked_sub(1)
}

/// Rank sum of `a` in the pooled sample (mid-ranks for ties) and the tie term
/// `Σ (t³ − t)` over groups of `t` equal values.
fn ranks(a: &[f64], b: &[f64]) -> (f64, f64) {
    let mut pooled: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).collect();
    pooled.extend(b.iter().map(|&x| (x, false)));
    pooled.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
    let (mut rank_sum_a, mut tie_term, mut i) = (0.0, 0.0, 0);
    while i < pooled.len() {
        let mut j = i + 1;
        while j < pooled.len() && pooled[j].0 == pooled[i].0 {
            j += 1;
        }
        // Positions i..j (0-based) share the mean of ranks i+1..=j.
        let mid_rank = (i + 1 + j) as f64 / 2.0;
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        rank_sum_a += mid_rank * pooled[i..j].iter().filter(|p| p.1).count() as f64;
        i = j;
    }
    (rank_sum_a, tie_term)
}

/// Two-sided normal-approximation p-value, scipy's `_get_mwu_z`: the larger U
/// less its mean `n_a·n_b/2` (less 1/2 with `continuity`), over the
/// tie-corrected standard deviation.
pub(crate) fn normal_p(u_a: f64, n_a: usize, n_b: usize, tie_term: f64, continuity: bool) -> f64 {
    let (m, n) = (n_a as f64, n_b as f64);
    let big_n = m + n;
    let u = u_a.max(m * n - u_a);
    let var = m * n / 12.0 * ((big_n + 1.0) - tie_term / (big_n * (big_n - 1.0)));
    let num = u - m * n / 2.0 - if continuity { 0.5 } else { 0.0 };
    // All values tied: var = 0 and z = -inf (p = 1), or 0/0 without continuity.
    let z = num / var.max(0.0).sqrt();
    if z.is_nan() {
        return 1.0;
    }
    (2.0 * norm_sf(z)).min(1.0)
}

/// Exact null distribution of U for sample sizes `n_a`, `n_b` (continuous
/// data, no ties): the number of the `C(n_a + n_b, n_a)` equally likely
/// arrangements with each value of U.
pub(crate) struct UDist {
    /// `cum[u]` = number of arrangements with `U <= u`.
    cum: Vec<i128>,
    total: i128,
}

impl UDist {
    /// `None` when the table would exceed [`MAX_EXACT_CELLS`] or `i128`.
    pub(crate) fn new(n_a: usize, n_b: usize) -> Option<UDist> {
        let (m, n) = (n_a.min(n_b), n_a.max(n_b));
        let cells = m.checked_mul(n).filter(|&c| c <= MAX_EXACT_CELLS)?;
        let mut total: i128 = 1;
        for i in 1..=m {
            total = total.checked_mul((n + i) as i128)? / i as i128;
        }
        if total > i128::MAX / 4 {
            return None;
        }
        // The counts are the coefficients of the Gaussian binomial
        // [m+n choose m]_q = Π_{i=1..m} (1 − q^(n+i)) / (1 − q^i): multiply by
        // the numerator factor, then divide exactly by the denominator one.
        let mut c = vec![0i128; cells + 1];
        c[0] = 1;
        for i in 1..=m {
            for k in (n + i..=cells).rev() {
                c[k] -= c[k - n - i];
            }
            for k in i..=cells {
                c[k] += c[k - i];
            }
        }
        let mut acc = 0;
        let cum = c
            .iter()
            .map(|&x| {
                acc += x;
                acc
            })
            .collect();
        Some(UDist { cum, total })
    }

    /// `P(U <= u)`.
    pub(crate) fn cdf(&self, u: usize) -> f64 {
        let count = self.cum[u.min(self.cum.len() - 1)];
        count as f64 / self.total as f64
    }
}

/// Upper tail of the standard normal, `P(Z > z)`.
pub(crate) fn norm_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The `z` with `P(Z > z) = p`, for `p` in (0, 1), by bisection (monotone,
/// so exact to the last bit of `norm_sf`'s accuracy).
pub(crate) fn norm_isf(p: f64) -> f64 {
    let (mut lo, mut hi) = (-40.0_f64, 40.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if norm_sf(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Complementary error function to about 1e-15 relative: the power series of
/// erf (all terms positive) below 2.5, Laplace's continued fraction above.
fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    let x2 = x * x;
    if x < 2.5 {
        // erf x = 2/√π · e^(−x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1))
        let (mut term, mut sum, mut n) = (x, x, 0.0);
        while term > sum * 1e-17 {
            n += 1.0;
            term *= 2.0 * x2 / (2.0 * n + 1.0);
            sum += term;
        }
        1.0 - 2.0 / std::f64::consts::PI.sqrt() * (-x2).exp() * sum
    } else {
        // erfc x = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))),
        // evaluated by the modified Lentz method.
        let tiny = 1e-300;
        let (mut f, mut c, mut d) = (x, x, 0.0);
        for k in 1..5000 {
            let a = k as f64 / 2.0;
            d = x + a * d;
            d = if d.abs() < tiny { tiny } else { d };
            c = x + a / c;
            c = if c.abs() < tiny { tiny } else { c };
            d = 1.0 / d;
            let delta = c * d;
            f *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (-x2).exp() / std::f64::consts::PI.sqrt() / f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_tail_matches_published_values() {
        // Φ(−1.959963984540054) = 0.025 and Φ(1) = 0.8413447460685429 (table
        // values; digits as scipy 1.17.1's `ndtri(0.025)`, `ndtr(1)` print them).
        assert!((norm_sf(1.959963984540054) - 0.025).abs() < 1e-15);
        assert!((norm_sf(0.0) - 0.5).abs() < 1e-16);
        assert!((norm_sf(-1.0) - 0.841_344_746_068_542_9).abs() < 1e-15);
        // Q(3) = 1.3498980316300933e-3, Q(6) = 9.865876450376946e-10
        // (scipy 1.17.1 `scipy.special.ndtr(-3)`, `ndtr(-6)`).
        assert!((norm_sf(3.0) / 1.349_898_031_630_093_3e-3 - 1.0).abs() < 1e-13);
        assert!((norm_sf(6.0) / 9.865_876_450_376_946e-10 - 1.0).abs() < 1e-13);
        assert!((norm_isf(0.025) - 1.959_963_984_540_054).abs() < 1e-12);
    }

    #[test]
    fn scipy_docs_asymptotic_values() {
        // scipy.stats.mannwhitneyu docs (Conover's ages example): U1 = 17,
        // n = 5, 4, no ties. method="asymptotic" gives 0.11134688653314041;
        // with use_continuity=False, 0.0864107329737.
        assert!((normal_p(17.0, 5, 4, 0.0, true) - 0.111_346_886_533_140_41).abs() < 1e-14);
        assert!((normal_p(17.0, 5, 4, 0.0, false) - 0.086_410_732_973_7).abs() < 1e-12);
    }

    #[test]
    fn exact_counts_sum_to_the_binomial() {
        let d = UDist::new(4, 5).expect("small");
        assert_eq!(d.total, 126);
        // U = 0, 1, 2, 3 have 1, 1, 2, 3 arrangements (partitions into at
        // most 4 parts of size at most 5).
        assert_eq!(&d.cum[..4], &[1, 2, 4, 7]);
        assert_eq!(*d.cum.last().expect("nonempty"), 126);
        assert!(UDist::new(1000, 1000).is_none());
    }
}
