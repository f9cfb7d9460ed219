//! Order statistics over a handful of runs: median, min, max, mean and the
//! coefficient of variation, the figures hyperfine and ccbench report.

use serde::{Deserialize, Serialize};

/// Summary of the samples of one metric over repeated runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Median (mean of the two middle samples for an even count).
    pub median: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Coefficient of variation: sample standard deviation over mean, 0 for
    /// fewer than two samples or a zero mean.
    pub cv: f64,
}

impl Summary {
    /// Summarises `samples`; `None` when there are none or any is not finite.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
            return None;
        }
        if let [x] = samples {
            // One sample (a count, one timing): nothing to sort.
            return Some(Summary {
                n: 1,
                median: *x,
                min: *x,
                max: *x,
                mean: *x,
                cv: 0.0,
            });
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let cv = if n < 2 || mean == 0.0 {
            0.0
        } else {
            let var = sorted.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            var.sqrt() / mean.abs()
        };
        Some(Summary {
            n,
            median,
            min: sorted[0],
            max: sorted[n - 1],
            mean,
            cv,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_medians() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.0, 1.0, 3.0, 3));
        let s = Summary::of(&[4.0, 1.0, 2.0, 3.0]).unwrap();
        assert_eq!(s.median, 2.5);
    }

    #[test]
    fn coefficient_of_variation() {
        // mean 2, sample sd 1 => cv 0.5
        let s = Summary::of(&[1.0, 2.0, 3.0]).unwrap();
        assert!((s.cv - 0.5).abs() < 1e-12);
        assert_eq!(Summary::of(&[7.0]).unwrap().cv, 0.0);
    }

    #[test]
    fn rejects_empty_and_nan() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }
}
