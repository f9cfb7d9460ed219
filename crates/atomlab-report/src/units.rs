//! Figures in human units, the one formatting every terminal view uses
//! (bench, stress, load, compare, run, `runs`) and the HTML report too:
//! a time in ns, µs, ms or s picked per value, a throughput in KB/s, MB/s
//! or GB/s, a rate with k, M or G, and a count beside its noun in the
//! singular or the plural.
//!
//! Three significant digits, as wrk and hyperfine print (`28.9 ms`,
//! `7.49 MB/s`): the runs atomlab compares differ by more than the
//! fourth digit, and `compare` gives the exact change. Byte units are
//! decimal (SI: 1 MB = 10^6 bytes), as the rates' k and M are; wrk's `MB`
//! is 2^20 bytes, so its figure reads 4.6% lower than atomlab's.
//! A value that is not finite (a metric nobody measured) is `-`.

use atomlab_core::Unit;

/// `x` (at least 1 and under 1000, or the caller's largest unit) with
/// three significant digits.
fn three(x: f64) -> String {
    let a = x.abs();
    if a >= 99.95 {
        format!("{x:.0}")
    } else if a >= 9.995 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// `v` in the first of `steps` (factor, suffix), largest first, that it
/// reaches once rounded to three digits, else in `base`.
fn scaled(v: f64, steps: &[(f64, &str)], base: &str) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    for &(factor, suffix) in steps {
        // 999.96 ns prints as 1.00 µs, not 1000 ns: compare after rounding.
        if v.abs() >= factor * 0.999_5 {
            return format!("{}{suffix}", three(v / factor));
        }
    }
    if v == 0.0 {
        return format!("0{base}");
    }
    format!("{}{base}", three(v))
}

/// A time in seconds, in ns, µs, ms or s (`28.9 ms`, `73.3 µs`).
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() {
        return "-".into();
    }
    let a = seconds.abs();
    let ns = seconds * 1e9;
    if a >= 0.999_5 {
        three(seconds) + " s"
    } else if a * 1e3 >= 0.999_5 {
        three(seconds * 1e3) + " ms"
    } else if a * 1e6 >= 0.999_5 {
        three(seconds * 1e6) + " µs"
    } else if ns == 0.0 {
        "0 ns".into()
    } else {
        three(ns) + " ns"
    }
}

/// A time in nanoseconds, as [`duration`].
pub fn nanos(ns: f64) -> String {
    duration(ns * 1e-9)
}

/// Bytes per second in B/s, KB/s, MB/s or GB/s (decimal).
pub fn bytes_per_sec(v: f64) -> String {
    scaled(
        v,
        &[
            (1e12, " TB/s"),
            (1e9, " GB/s"),
            (1e6, " MB/s"),
            (1e3, " KB/s"),
        ],
        " B/s",
    )
}

/// A rate or a large count with k, M or G (`56.7`, `12.3k`, `1.23M`).
pub fn rate(v: f64) -> String {
    scaled(v, &[(1e9, "G"), (1e6, "M"), (1e3, "k")], "")
}

/// `n` and its noun, singular for one (`1 thread`, `2 threads`); `noun`
/// is the singular and takes an `s`.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A figure in its unit's human form: a time as [`duration`], a byte or
/// operation rate with its unit, a per cent with `%`; other figures
/// (cycles, counts, ratios) as [`crate::figure`].
pub fn by_unit(v: f64, unit: Unit) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    match unit {
        Unit::Seconds => duration(v),
        Unit::NanosPerOp => nanos(v),
        Unit::BytesPerSecond => bytes_per_sec(v),
        Unit::OpsPerSecond => rate(v) + "/s",
        Unit::Percent => crate::figure(v) + "%",
        _ => crate::figure(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_pick_their_unit_at_the_boundaries() {
        assert_eq!(duration(7.33e-5), "73.3 µs");
        assert_eq!(duration(0.028_951), "29.0 ms");
        assert_eq!(duration(1.376), "1.38 s");
        assert_eq!(duration(125.4), "125 s");
        assert_eq!(duration(0.0), "0 ns");
        assert_eq!(duration(5e-10), "0.50 ns");
        // Just under a unit rounds up into it rather than printing 1000.
        assert_eq!(duration(999.96e-9), "1.00 µs");
        assert_eq!(duration(999.4e-9), "999 ns");
        assert_eq!(duration(1e-6), "1.00 µs");
        assert_eq!(duration(999.96e-6), "1.00 ms");
        assert_eq!(duration(1e-3), "1.00 ms");
        assert_eq!(duration(0.999_96), "1.00 s");
        assert_eq!(duration(9.996e-3), "10.0 ms");
        assert_eq!(duration(99.96e-3), "100 ms");
        assert_eq!(duration(f64::NAN), "-");
        assert_eq!(nanos(2783.0), "2.78 µs");
        assert_eq!(nanos(1.59e6), "1.59 ms");
    }

    #[test]
    fn byte_rates_are_decimal_and_rates_take_k_m_g() {
        assert_eq!(bytes_per_sec(10_284_930.0), "10.3 MB/s");
        assert_eq!(bytes_per_sec(6_966_227.0), "6.97 MB/s");
        assert_eq!(bytes_per_sec(999.0), "999 B/s");
        assert_eq!(bytes_per_sec(999.6), "1.00 KB/s");
        assert_eq!(bytes_per_sec(1.5e9), "1.50 GB/s");
        assert_eq!(bytes_per_sec(0.0), "0 B/s");
        assert_eq!(rate(56.7), "56.7");
        assert_eq!(rate(2000.0), "2.00k");
        assert_eq!(rate(999_960.0), "1.00M");
        assert_eq!(rate(12_290_000.0), "12.3M");
        assert_eq!(rate(4.2e9), "4.20G");
        assert_eq!(rate(f64::INFINITY), "-");
    }

    #[test]
    fn one_is_singular() {
        assert_eq!(plural(1, "thread"), "1 thread");
        assert_eq!(plural(0, "thread"), "0 threads");
        assert_eq!(plural(2, "connection"), "2 connections");
    }

    #[test]
    fn figures_follow_their_unit() {
        assert_eq!(by_unit(7.33e-5, Unit::Seconds), "73.3 µs");
        assert_eq!(by_unit(81.3, Unit::NanosPerOp), "81.3 ns");
        assert_eq!(by_unit(7.49e6, Unit::BytesPerSecond), "7.49 MB/s");
        assert_eq!(by_unit(1.229e7, Unit::OpsPerSecond), "12.3M/s");
        assert_eq!(by_unit(8.28, Unit::Percent), "8.28%");
        assert_eq!(by_unit(211.0, Unit::RefCyclesPerOp), "211");
    }
}
