//! Argument parsers and value types that several subcommands' clap
//! arguments share: durations (`parse_seconds`), the AArch64 acquire-load
//! choice of `check` and `run`, and the global options that `compare` and
//! `report` read. A leaf: `cli.rs` and `cmd/*` import it, it imports
//! neither, so the command line's declaration and the commands do not
//! import each other.

/// The global options of a command that reads the store or starts other
/// atomlab commands (`compare`, `report`): `--store`, `--label`,
/// `--no-save`, as given.
#[derive(Debug, Clone, Default)]
pub struct Globals {
    /// `--store`.
    pub store: Option<String>,
    /// `--label`.
    pub label: Option<String>,
    /// `--no-save`.
    pub no_save: bool,
}

/// How a C11 acquire load compiles to AArch64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ArmAcquire {
    /// LDAR (RCsc).
    Ldar,
    /// LDAPR (RCpc, Armv8.3).
    Ldapr,
}

/// The longest time any duration option takes (`--duration`, `--warmup`,
/// `--timeout`, `--time-limit`): one week. Longer values are refused as bad
/// input, never turned into an overflowing `Duration` or deadline.
pub const MAX_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// The one parser of every duration option: `1.5` (seconds), `1.5s`,
/// `500ms`, `200us`, `2m`, `1h`; finite, non-negative and at most
/// [`MAX_SECONDS`].
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.trim().parse().map_err(|_| {
        format!("'{s}' is not a duration: write seconds (1.5) or with a unit (200us, 500ms, 2s, 5m, 1h)")
    })?;
    let secs = v * scale;
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!(
            "'{s}' is not a duration: it must be a finite, non-negative time"
        ));
    }
    if secs > MAX_SECONDS {
        return Err(format!(
            "'{s}' is longer than the longest duration atomlab takes, one week ({MAX_SECONDS} s)"
        ));
    }
    Ok(secs)
}

#[cfg(test)]
mod tests {
    use super::parse_seconds;

    #[test]
    fn durations() {
        assert_eq!(parse_seconds("1.5").unwrap(), 1.5);
        assert_eq!(parse_seconds("2s").unwrap(), 2.0);
        assert_eq!(parse_seconds("2m").unwrap(), 120.0);
        assert_eq!(parse_seconds("1h").unwrap(), 3600.0);
        assert!((parse_seconds("500ms").unwrap() - 0.5).abs() < 1e-12);
        assert!((parse_seconds("200us").unwrap() - 0.0002).abs() < 1e-12);
        assert_eq!(parse_seconds("0").unwrap(), 0.0);
        assert_eq!(parse_seconds("168h").unwrap(), 604800.0);
        for bad in [
            "soon",
            "-1",
            "inf",
            "NaN",
            "1e19",
            "1e30",
            "18446744073709551616",
            "169h",
            "1e308h",
        ] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }
}
