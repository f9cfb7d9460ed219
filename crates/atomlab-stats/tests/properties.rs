//! Properties any correct implementation has, and the verdict rules.

use atomlab_stats::{
    bootstrap_relative_change, compare, hodges_lehmann, mann_whitney_u, median, regression_beyond,
    CiMethod, Difference, Direction, PMethod, Settings,
};

/// Deterministic noise in [-1, 1) (an LCG), so tests need no RNG crate.
fn noise(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

fn around(center: f64, spread: f64, seed: u64, n: usize) -> Vec<f64> {
    noise(seed, n)
        .into_iter()
        .map(|e| center + spread * e)
        .collect()
}

#[test]
fn symmetry_and_u_sum() {
    let samples = [
        (around(100.0, 3.0, 1, 5), around(102.0, 3.0, 2, 7)),
        (around(10.0, 1.0, 3, 12), around(10.5, 1.0, 4, 9)),
        (vec![1.0, 2.0, 2.0, 3.0, 3.0], vec![2.0, 3.0, 3.0, 4.0]),
        (vec![1.0], vec![2.0]),
    ];
    for (a, b) in &samples {
        let ab = mann_whitney_u(a, b).unwrap();
        let ba = mann_whitney_u(b, a).unwrap();
        assert_eq!(ab.u_a + ab.u_b, (a.len() * b.len()) as f64);
        assert_eq!((ab.u_a, ab.u_b), (ba.u_b, ba.u_a));
        assert_eq!(ab.p_value, ba.p_value);
        assert!(ab.p_value > 0.0 && ab.p_value <= 1.0);
    }
}

#[test]
fn identical_samples_are_no_change() {
    let a = [100.0, 100.1, 100.2, 100.3, 100.4];
    let c = compare(&a, &a, Direction::LowerIsBetter, Settings::default()).unwrap();
    assert_eq!(c.p_value, 1.0);
    assert_eq!((c.change, c.verdict), (0.0, Difference::NoChange));
    assert!(c.ci_low < 0.0 && c.ci_high > 0.0);
    assert!(!regression_beyond(&c, 0.0));
}

#[test]
fn clear_shift_follows_direction() {
    let a = around(100.0, 1.0, 5, 10);
    let b = around(110.0, 1.0, 6, 10);
    let s = Settings::default();
    let slower = compare(&a, &b, Direction::LowerIsBetter, s).unwrap();
    assert_eq!(slower.verdict, Difference::Worse);
    assert_eq!(
        (slower.p_method, slower.ci_method),
        (PMethod::Normal, CiMethod::LogRatio)
    );
    assert!(slower.p_value < 0.001 && slower.ci_low > 0.05 && slower.ci_high < 0.15);
    assert!((slower.change - 0.1).abs() < 0.03);
    assert!(regression_beyond(&slower, 0.05));
    assert!(!regression_beyond(&slower, 0.5));
    assert_eq!(
        compare(&a, &b, Direction::HigherIsBetter, s)
            .unwrap()
            .verdict,
        Difference::Better
    );
    let faster = compare(&b, &a, Direction::LowerIsBetter, s).unwrap();
    assert_eq!(faster.verdict, Difference::Better);
    assert!(!regression_beyond(&faster, 0.0));
    let lost = compare(&b, &a, Direction::HigherIsBetter, s).unwrap();
    assert_eq!(lost.verdict, Difference::Worse);
    assert!(regression_beyond(&lost, 0.05));
}

#[test]
fn three_runs_a_side_are_never_significant() {
    // Smallest two-sided exact p for 3 vs 3 is 2/20 = 0.1 > alpha = 0.05,
    // and 95 % intervals are unattainable: always TooFewRuns at the
    // defaults, which say so rather than blame the noise.
    for seed in 0..50 {
        for shift in [0.0, 0.001, 0.05, 1.0, 100.0] {
            let a = around(100.0, 2.0, seed, 3);
            let b = around(100.0 * (1.0 + shift), 2.0, seed + 1000, 3);
            let c = compare(&a, &b, Direction::LowerIsBetter, Settings::default()).unwrap();
            assert!(c.p_value >= 0.1 - 1e-12, "{c:?}");
            assert!(c.ci_confidence < 0.95);
            assert_eq!(c.verdict, Difference::TooFewRuns, "{c:?}");
        }
    }
    // Even perfectly quiet runs: 90 % is all 3 vs 3 can give.
    let c = compare(
        &[5.0; 3],
        &[5.0; 3],
        Direction::LowerIsBetter,
        Settings::default(),
    )
    .unwrap();
    assert_eq!((c.verdict, c.p_value), (Difference::TooFewRuns, 1.0));
    // All tied: scipy 1.17.1's normal approximation (ties) gives p =
    // 0.04685417760387376 < alpha, yet 3 vs 3 cannot be significant.
    let c = compare(
        &[1.0; 3],
        &[2.0; 3],
        Direction::LowerIsBetter,
        Settings::default(),
    )
    .unwrap();
    assert!((c.p_value - 0.046_854_177_603_873_76).abs() < 1e-14);
    assert!(!c.significant && !regression_beyond(&c, 0.0));
    assert_eq!(c.verdict, Difference::TooFewRuns);
    assert_eq!(atomlab_stats::runs_needed(0.95), 4);
}

/// A latency's interval was `[−2090 %, +1695 %]` (a latency cannot fall by
/// more than all of it), and one run a side gave `[+1244 %, +1244 %]`
/// called "too noisy". Positive metrics get ratio-scale intervals, never
/// below −100 %, and one run a side is "too few runs".
#[test]
fn intervals_of_positive_metrics_are_ratios_and_one_run_is_too_few() {
    // Wildly noisy latencies, 5 a side.
    let a = [1.0e-4, 9.0e-4, 2.0e-5, 3.0e-3, 4.0e-4];
    let b = [2.0e-5, 5.0e-3, 1.0e-4, 7.0e-4, 3.0e-5];
    let c = compare(&a, &b, Direction::LowerIsBetter, Settings::default()).unwrap();
    assert_eq!(c.ci_method, CiMethod::LogRatio);
    assert!(c.ci_low > -1.0 && c.ci_low < c.ci_high, "{c:?}");
    assert_eq!(c.verdict, Difference::TooNoisy);
    let one = compare(
        &[1.0],
        &[13.44],
        Direction::LowerIsBetter,
        Settings::default(),
    )
    .unwrap();
    assert_eq!(one.verdict, Difference::TooFewRuns, "{one:?}");
    // A metric with a negative value keeps the additive interval.
    let c = compare(
        &[-1.0, 2.0, 3.0, 4.0, 5.0],
        &[2.0, 3.0, 4.0, 5.0, 6.0],
        Direction::HigherIsBetter,
        Settings::default(),
    )
    .unwrap();
    assert_eq!(c.ci_method, CiMethod::HodgesLehmann);
}

#[test]
fn five_runs_a_side_can_be_significant() {
    let a = [100.0, 100.2, 100.4, 100.6, 100.8];
    let b = [105.0, 105.2, 105.4, 105.6, 105.8];
    let c = compare(&a, &b, Direction::LowerIsBetter, Settings::default()).unwrap();
    assert!((c.p_value - 2.0 / 252.0).abs() < 1e-15);
    assert_eq!((c.p_method, c.verdict), (PMethod::Exact, Difference::Worse));
}

#[test]
fn noisy_or_small_changes() {
    let s = Settings::default();
    // 1 % shift under 5 % noise: the interval is far wider than 2 %.
    let c = compare(
        &around(100.0, 5.0, 7, 10),
        &around(101.0, 5.0, 8, 10),
        Direction::LowerIsBetter,
        s,
    )
    .unwrap();
    assert_eq!(c.verdict, Difference::TooNoisy);
    // A significant 0.5 % shift with 0.1 % noise is below the 1 % threshold.
    let c = compare(
        &around(100.0, 0.1, 9, 10),
        &around(100.5, 0.1, 10, 10),
        Direction::LowerIsBetter,
        s,
    )
    .unwrap();
    assert!(c.p_value < 0.05 && c.ci_low > 0.0);
    assert_eq!(c.verdict, Difference::NoChange);
    assert!(regression_beyond(&c, 0.001));
    assert!(!regression_beyond(&c, 0.01));
}

#[test]
fn bootstrap_is_seeded_and_used_for_huge_samples() {
    let a = around(100.0, 1.0, 11, 30);
    let b = around(103.0, 1.0, 12, 30);
    let one = bootstrap_relative_change(&a, &b, 0.95, 2000, 42).unwrap();
    assert_eq!(Some(one), bootstrap_relative_change(&a, &b, 0.95, 2000, 42));
    assert_ne!(Some(one), bootstrap_relative_change(&a, &b, 0.95, 2000, 43));
    assert!(one.low > 0.01 && one.high < 0.05 && one.low < one.high);
    // A constant pair: every resample gives exactly +100 %.
    let c = bootstrap_relative_change(&[2.0; 4], &[4.0; 4], 0.9, 100, 0).unwrap();
    assert_eq!((c.low, c.high), (1.0, 1.0));
    // 1001 × 1000 pairs exceed the Hodges–Lehmann limit.
    let s = Settings {
        resamples: 200,
        ..Settings::default()
    };
    let big_a = around(100.0, 1.0, 13, 1001);
    let big_b = around(102.0, 1.0, 14, 1000);
    let c = compare(&big_a, &big_b, Direction::LowerIsBetter, s).unwrap();
    assert_eq!(
        (c.ci_method, c.verdict),
        (CiMethod::Bootstrap, Difference::Worse)
    );
    let none = Settings { resamples: 0, ..s };
    assert!(compare(&big_a, &big_b, Direction::LowerIsBetter, none).is_none());
}

#[test]
fn bad_input_is_none_not_a_panic() {
    let ok = [1.0, 2.0, 3.0];
    let dir = Direction::LowerIsBetter;
    let s = Settings::default();
    for bad in [
        &[][..],
        &[1.0, f64::NAN][..],
        &[f64::INFINITY][..],
        &[f64::NEG_INFINITY, 1.0][..],
    ] {
        assert!(median(bad).is_none());
        assert!(mann_whitney_u(bad, &ok).is_none() && mann_whitney_u(&ok, bad).is_none());
        assert!(
            hodges_lehmann(bad, &ok, 0.95).is_none() && hodges_lehmann(&ok, bad, 0.95).is_none()
        );
        assert!(bootstrap_relative_change(bad, &ok, 0.95, 10, 0).is_none());
        assert!(compare(bad, &ok, dir, s).is_none() && compare(&ok, bad, dir, s).is_none());
    }
    assert!(
        compare(&[0.0, 0.0, 0.0], &ok, dir, s).is_none(),
        "median_a = 0"
    );
    for bad in [
        Settings {
            confidence: 1.0,
            ..s
        },
        Settings { alpha: 0.0, ..s },
        Settings {
            threshold: f64::NAN,
            ..s
        },
        Settings {
            threshold: -0.1,
            ..s
        },
    ] {
        assert!(compare(&ok, &ok, dir, bad).is_none());
    }
    assert!(hodges_lehmann(&ok, &ok, f64::NAN).is_none());
    assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), Some(2.5));
    assert_eq!(median(&[f64::MAX, f64::MAX]), Some(f64::MAX));
}
