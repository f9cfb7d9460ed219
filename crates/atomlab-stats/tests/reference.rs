//! Published worked examples and external cross-checks. Values marked
//! "scipy 1.17.1" were computed with
//! `python -c "from scipy.stats import mannwhitneyu as M; print(M(a, b))"`
//! (default `method="auto"`, two-sided) in scipy 1.17.1.

use atomlab_stats::{exact_critical_u, hodges_lehmann, mann_whitney_u, PMethod};

/// (a, b, U of a, two-sided p, method).
type Case<'a> = (&'a [f64], &'a [f64], f64, f64, PMethod);

fn close(got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "got {got}, want {want}");
}

#[test]
fn scipy_docs_conover_diabetes_ages() {
    // scipy.stats.mannwhitneyu documentation example (from Conover): U1 = 17,
    // U2 = 3, exact two-sided p = 0.1111111111111111.
    let males = [19.0, 22.0, 16.0, 29.0, 24.0];
    let females = [20.0, 11.0, 17.0, 12.0];
    let r = mann_whitney_u(&males, &females).unwrap();
    assert_eq!((r.u_a, r.u_b, r.method), (17.0, 3.0, PMethod::Exact));
    close(r.p_value, 0.111_111_111_111_111_1, 1e-15);
}

#[test]
fn r_wilcox_test_docs_permeability() {
    // R's ?wilcox.test example (Hollander & Wolfe, permeability constants of
    // the chorioamnion): W = 35 and the exact one-sided ("greater") p-value
    // is printed as 0.1272; U is symmetric, so two-sided is twice that.
    // scipy 1.17.1 gives U = 35, p = 0.2544122544122544.
    let x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
    let y = [1.15, 0.88, 0.90, 0.74, 1.21];
    let r = mann_whitney_u(&x, &y).unwrap();
    assert_eq!((r.u_a, r.method), (35.0, PMethod::Exact));
    close(r.p_value / 2.0, 0.1272, 5e-5);
    close(r.p_value, 0.254_412_254_412_254_4, 1e-15);
}

#[test]
fn textbook_critical_values_of_u() {
    // The standard published table of critical values of U, two-tailed
    // alpha = 0.05, as printed in statistics textbooks' appendices: reject
    // when min(U_a, U_b) <= value; "-" (none) for 3 vs 3.
    let table = [
        ((3, 3), None),
        ((3, 5), Some(0)),
        ((4, 4), Some(0)),
        ((4, 6), Some(2)),
        ((5, 5), Some(2)),
        ((5, 10), Some(8)),
        ((6, 6), Some(5)),
        ((7, 7), Some(8)),
        ((8, 8), Some(13)),
        ((9, 9), Some(17)),
        ((10, 10), Some(23)),
        ((20, 20), Some(127)),
    ];
    for ((m, n), want) in table {
        assert_eq!(exact_critical_u(m, n, 0.05), want, "{m} vs {n}");
        assert_eq!(exact_critical_u(n, m, 0.05), want, "{n} vs {m}");
    }
}

#[test]
#[allow(clippy::approx_constant)] // 3.140 is a measurement, not π.
fn hollander_wolfe_chicken_hodges_lehmann_and_moses() {
    // Hollander, Wolfe & Chicken's two-sample example as run through SAS
    // PROC NPAR1WAY HL (PHUSE CAMIS, "Non-parametric point estimation"):
    // location shift A − B = 0.5600, asymptotic (Moses) 95 % limits
    // -0.3700 and 1.1830. Our exact index is the same k = 18 here. (SAS's
    // "Exact" row, -0.22 to 1.082, conditions on the data's ties; we don't.)
    let a = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
    let b = [
        0.878, 0.647, 0.598, 2.050, 1.060, 1.290, 1.060, 3.140, 1.290,
    ];
    let hl = hodges_lehmann(&b, &a, 0.95).unwrap();
    close(hl.shift, 0.56, 1e-12);
    close(hl.ci.low, -0.37, 1e-12);
    close(hl.ci.high, 1.183, 1e-12);
    assert!(hl.ci.confidence >= 0.95);
    // scipy 1.17.1: ties, so asymptotic: U = 58, p = 0.13291945818531892.
    let r = mann_whitney_u(&a, &b).unwrap();
    assert_eq!((r.u_a, r.method), (58.0, PMethod::Normal));
    close(r.p_value, 0.132_919_458_185_318_92, 1e-14);
}

#[test]
fn scipy_cross_checks() {
    // From scipy 1.17.1 (see the file header).
    let ties_a = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0, 6.0, 7.0];
    let ties_b = [3.0, 4.0, 4.0, 5.0, 6.0, 7.0, 7.0, 8.0, 9.0, 9.0, 10.0];
    let ten_a = [10.2, 11.5, 9.8, 10.9, 12.1, 10.4, 11.0, 9.5, 10.7, 11.8];
    let ten_b = [11.9, 12.4, 11.1, 12.8, 13.0, 11.6, 12.2, 10.6, 12.9, 13.3];
    let eight = [0.346, 0.822, 0.33, -1.303, 0.905, 0.446, -0.537, 0.581];
    let thirty = [
        0.865, 0.794, 0.528, 1.047, -0.236, 0.337, 0.018, 1.099, 0.54, 0.208, -0.282, 0.243, 0.508,
        0.224, 1.794, 1.507, -2.211, -1.389, 0.325, 0.078, 0.714, 0.717, 2.618, -0.612, 0.122,
        2.543, 1.147, 1.163, -0.014, -1.148,
    ];
    let cases: [Case; 7] = [
        // Smallest attainable p for 3 vs 3 and 5 vs 5 (2/20 and 2/252).
        (&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.0, 0.1, PMethod::Exact),
        (
            &[1.0, 2.0, 3.0, 4.0, 5.0],
            &[6.0, 7.0, 8.0, 9.0, 10.0],
            0.0,
            0.007_936_507_936_507_936,
            PMethod::Exact,
        ),
        // Ties with a small sample: normal with tie correction.
        (
            &[1.0, 2.0, 2.0, 3.0],
            &[2.0, 3.0, 4.0, 5.0, 6.0],
            2.5,
            0.079_856_193_773_516_44,
            PMethod::Normal,
        ),
        (
            &ties_a,
            &ties_b,
            17.5,
            0.008_683_395_852_230_817,
            PMethod::Normal,
        ),
        // No ties but both samples > 8: normal.
        (
            &ten_a,
            &ten_b,
            12.0,
            0.004_586_392_080_253_494,
            PMethod::Normal,
        ),
        // 8 vs 30, no ties: exact (min size <= 8).
        (
            &eight,
            &thirty,
            111.0,
            0.765_377_490_834_397_1,
            PMethod::Exact,
        ),
        // Everything tied: p = 1.
        (
            &[5.0, 5.0, 5.0, 5.0],
            &[5.0, 5.0, 5.0],
            6.0,
            1.0,
            PMethod::Normal,
        ),
    ];
    for (a, b, u_a, p, method) in cases {
        let r = mann_whitney_u(a, b).unwrap();
        assert_eq!((r.u_a, r.method), (u_a, method), "{a:?} vs {b:?}");
        close(r.p_value, p, 1e-13);
    }
}

#[test]
fn moses_interval_achieved_confidence() {
    // 3 vs 3: P(U <= 0) = 1/20 > 0.025, so 95 % is unattainable; the full
    // range of differences is returned with its 90 % coverage.
    let hl = hodges_lehmann(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], 0.95).unwrap();
    assert_eq!((hl.ci.low, hl.ci.high, hl.shift), (1.0, 5.0, 3.0));
    close(hl.ci.confidence, 0.9, 1e-12);
    // 5 vs 5 at 95 %: critical U = 2 (table above), so k = 3 with coverage
    // 1 − 2·4/252.
    let a = [1.0, 2.0, 3.0, 4.0, 5.0];
    let b = [1.5, 2.5, 3.5, 4.5, 5.5];
    let hl = hodges_lehmann(&a, &b, 0.95).unwrap();
    close(hl.ci.confidence, 1.0 - 8.0 / 252.0, 1e-12);
    // Differences b − a: 25 values from −3.5 to 4.5; the 3rd smallest is
    // −2.5 and the 3rd largest 3.5.
    assert_eq!((hl.ci.low, hl.ci.high, hl.shift), (-2.5, 3.5, 0.5));
}
