//! Small pieces of HTML: escaping, tables, numbers and times.
//!
//! Every string that comes from a report (a test's name, a label, a note, a
//! command line) goes through [`esc`] before it reaches the page.

use atomlab_core::{FlagKind, Record};
use serde_json::Value;

/// `s` with the five characters that mean something in HTML text and in
/// quoted attribute values replaced by their entities.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A name usable in an `id` or a `data-` attribute: lower-case ASCII
/// letters, digits and `-`, nothing else.
pub(crate) fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let t = out.trim_matches('-');
    if t.is_empty() {
        "x".into()
    } else {
        t.to_string()
    }
}

/// A figure with about three significant digits and an SI suffix for big
/// values, as atomlab's terminal tables print it; a small one in decimals
/// (`0.00248`) down to 0.0001, below which only an exponent reads.
/// Figures with a unit of time or bytes go through [`crate::units`].
pub fn num(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "-".into()
    // Each step is taken where the one below would round up to its
    // size: 9999.6 is `10.0k`, not `10000` (a column of 10.0k and 10000).
    } else if a >= 999_995_000.0 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 999_950.0 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 9_999.5 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 99.95 {
        format!("{v:.0}")
    } else if a >= 9.995 {
        format!("{v:.1}")
    } else if a >= 0.01 || a == 0.0 {
        format!("{v:.2}")
    } else if a >= 1e-4 {
        // Three significant digits: 0.00248 has five decimals.
        let decimals = (2.0 - a.log10().floor()) as usize;
        format!("{v:.decimals$}")
    } else {
        format!("{v:.2e}")
    }
}

/// An axis tick: up to three decimals without trailing zeros, big values
/// as [`num`].
pub(crate) fn tick(v: f64) -> String {
    if !v.is_finite() || v.abs() >= 1e4 {
        return num(v);
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A count: whole numbers in full, anything else as [`num`].
pub(crate) fn count(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        num(v)
    }
}

/// Unix seconds as `YYYY-MM-DD HH:MM:SS UTC` (proleptic Gregorian).
pub(crate) fn utc(unix: f64) -> String {
    if !unix.is_finite() {
        return "-".into();
    }
    let secs = unix.floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A command line as a person would type it ([`atomlab_core::shell`]).
pub use atomlab_core::shell::quoted as command_line;

/// A parameter of a record as text (`-` when absent or null).
pub(crate) fn param(r: &Record, key: &str) -> String {
    match r.parameters.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".into(),
        Some(v) => v.to_string(),
    }
}

/// `variant/ordering` when the record has an ordering, else the variant.
pub(crate) fn variant_label(r: &Record) -> String {
    match r.parameters.get("ordering").and_then(|o| o.as_str()) {
        Some(o) => format!("{}/{o}", r.variant),
        None => r.variant.clone(),
    }
}

/// The status words of a record: `ok`, or each flag's words once.
pub(crate) fn status(r: &Record) -> String {
    if r.flags.is_empty() {
        return "ok".into();
    }
    let mut words: Vec<&str> = Vec::new();
    for f in &r.flags {
        if !words.contains(&f.kind.words()) {
            words.push(f.kind.words());
        }
    }
    words.join(", ")
}

/// The CSS class of a record's status cell.
pub(crate) fn status_class(r: &Record) -> &'static str {
    if r.flagged(FlagKind::Implausible) {
        "bad"
    } else if r.flags.is_empty() {
        "ok"
    } else {
        "warn"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn ticks_and_counts() {
        assert_eq!(tick(0.0), "0");
        assert_eq!(tick(12.0), "12");
        assert_eq!(tick(2.5), "2.5");
        assert_eq!(tick(0.125), "0.125");
        assert_eq!(tick(25_000.0), "25.0k");
        assert_eq!(count(439.0), "439");
        assert_eq!(count(2.5), "2.50");
        assert_eq!(num(9_999.6), "10.0k");
        assert_eq!(num(9_999.4), "9999");
        assert_eq!(num(999_960.0), "1.00M");
        assert_eq!(num(999_996_000.0), "1.00G");
        assert_eq!(num(99.96), "100");
        assert_eq!(num(9.996), "10.0");
        assert_eq!(num(2.48e-3), "0.00248");
        assert_eq!(num(1.5e-4), "0.000150");
        assert_eq!(num(0.0099), "0.00990");
        assert_eq!(num(7.33e-5), "7.33e-5");
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0.0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400.5), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_796_099_546.0), "2026-12-01 04:32:26 UTC");
        assert_eq!(utc(-1.0), "1969-12-31 23:59:59 UTC");
    }

    #[test]
    fn slugs_and_command_lines() {
        assert_eq!(slug("MP+rel+acq"), "mp-rel-acq");
        assert_eq!(slug("<>"), "x");
        let args = ["atomlab", "check", "a b.litmus", "it's"].map(String::from);
        assert_eq!(
            command_line(&args),
            r#"atomlab check 'a b.litmus' 'it'\''s'"#
        );
    }
}
