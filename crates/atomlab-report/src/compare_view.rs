//! The terminal's view of an A/B comparison: what `atomlab compare A B`
//! prints, from atomlab-stats' [`AbResult`] (the HTML report's section is
//! `crate::compare`).

use std::io::{self, Write};

use atomlab_stats::ab::{AbResult, MetricRow, Side};
use atomlab_stats::{CiMethod, Difference, PMethod, Settings};

use crate::table::{self, Table};
use crate::units;

/// A change in per cent with two decimals and its sign.
fn pct(x: f64) -> String {
    format!("{:+.2}%", x * 100.0)
}

/// The smallest two-sided Mann–Whitney p that `n_a` against `n_b` runs
/// without ties can reach: `2 / C(n_a + n_b, n_a)`.
fn smallest_exact_p(n_a: usize, n_b: usize) -> f64 {
    let (m, n) = (n_a.min(n_b), n_a.max(n_b));
    let arrangements = (1..=m).fold(1.0, |c, i| c * (n + i) as f64 / i as f64);
    (2.0 / arrangements).min(1.0)
}

/// The metric table's columns, as the terminal and the HTML report both
/// head them (the report adds a row number and the record before them).
pub const METRIC_COLUMNS: [&str; 8] = [
    "metric", "median A", "median B", "change", "95% CI", "p", "p (Holm)", "verdict",
];

/// The changed-verdict table's columns, in both views.
pub const VERDICT_CHANGE_COLUMNS: [&str; 4] = ["changed verdict", "A", "B", "regression"];

/// The cells of a metric row, as the terminal and the HTML report both
/// show them (one judgement, [`AbResult`]'s, in the same words): the
/// metric, both medians in their unit, the change, its interval (with
/// its achieved confidence when below 95 %, `*` for the bootstrap), p,
/// p adjusted by Holm, and the verdict.
pub fn metric_cells(row: &MetricRow) -> [String; 8] {
    let Some(c) = &row.comparison else {
        return [
            row.metric.clone(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "no usable samples".into(),
        ];
    };
    let verdict = if row.not_judged.is_some() {
        "not judged".to_string()
    } else if row.regression {
        format!("{} (regression)", c.verdict.as_str())
    } else {
        c.verdict.as_str().to_string()
    };
    [
        row.metric.clone(),
        units::by_unit(c.median_a, row.unit),
        units::by_unit(c.median_b, row.unit),
        pct(c.change),
        format!(
            "[{}, {}]{}{}",
            pct(c.ci_low),
            pct(c.ci_high),
            if c.ci_confidence + 1e-9 < 0.95 {
                format!(" ({:.0}%)", c.ci_confidence * 100.0)
            } else {
                String::new()
            },
            if c.ci_method == CiMethod::Bootstrap {
                "*"
            } else {
                ""
            }
        ),
        format!("{:.3}", c.p_value),
        if row.not_judged.is_some() {
            "-".to_string()
        } else {
            format!("{:.3}", c.p_judged)
        },
        verdict,
    ]
}

/// What the comparison table's columns and verdicts mean, for `judged`
/// rows, a threshold in per cent and `alpha`.
pub fn legend(judged: usize, threshold: f64, alpha: f64) -> String {
    // (The reason of "too few runs" rows is [`too_few_note`].)
    format!("change: B vs A, relative to A's median; CI: a 95% interval for that change, on the ratio scale (Moses' interval for the Hodges-Lehmann shift of the logarithms: never below -100%), its achieved confidence in brackets when the runs are too few to reach 95%; p: Mann-Whitney U, two-sided; p (Holm): p adjusted by Holm-Bonferroni over the {judged} judged rows, so that the chance of any false better/worse among them stays under {alpha}; verdict: better/worse when p (Holm) < {alpha}, the interval excludes 0 and the change exceeds {threshold}%; too few runs when no interval of so few runs can reach 95% ({} or more a side can); too noisy when the interval is wider than 2x{threshold}%; no change otherwise", atomlab_stats::runs_needed(0.95))
}

/// Each metric shown but not judged, with why, once, in order.
pub fn not_judged(r: &AbResult) -> Vec<(&str, &str)> {
    let mut reasons: Vec<(&str, &str)> = r
        .rows
        .iter()
        .filter_map(|x| Some((x.metric.as_str(), x.not_judged.as_deref()?)))
        .collect();
    reasons.sort();
    reasons.dedup();
    reasons
}

/// The line under the table when rows are "too few runs": how many runs
/// a side it takes, and how many the fewest-run row has; `None` when no
/// judged row is.
pub fn too_few_note(r: &AbResult) -> Option<String> {
    let (n_a, n_b) = r
        .rows
        .iter()
        .filter(|x| x.not_judged.is_none())
        .filter_map(|x| x.comparison)
        .filter(|c| c.verdict == Difference::TooFewRuns)
        .map(|c| (c.n_a, c.n_b))
        .min()?;
    let need = atomlab_stats::runs_needed(0.95);
    Some(format!("too few runs (need ≥ {need} per side): with {n_a} run(s) of A and {n_b} of B no interval can reach 95%, however quiet the runs; run each side {need} times or more (--runs, or compare --interleave {need})"))
}

/// The terminal's view of a comparison (`atomlab compare A B`): what
/// matched, changed verdicts, the metric table (a heading line per
/// record, its metrics under it, medians in their units), why rows were
/// not judged, the unmatched. `a` and `b` name the sides; `threshold` is
/// the gate in per cent and `alpha` the significance level, as the legend
/// says them. Every line fits [`table::WIDTH`].
pub fn write_terminal(
    out: &mut impl Write,
    r: &AbResult,
    a: &str,
    b: &str,
    threshold: f64,
    alpha: f64,
) -> io::Result<()> {
    table::fitted(out, |out| write_unfitted(out, r, a, b, threshold, alpha))
}

/// [`write_terminal`]'s lines, before the long ones are wrapped.
fn write_unfitted(
    out: &mut Vec<u8>,
    r: &AbResult,
    a: &str,
    b: &str,
    threshold: f64,
    alpha: f64,
) -> io::Result<()> {
    writeln!(out, "A = {a}\nB = {b}")?;
    let mut matched = format!("matched {} record(s) of A with B", r.matched);
    if !(r.only_a.is_empty() && r.only_b.is_empty()) {
        matched.push_str(&format!(
            " ({} of A and {} of B unmatched, listed below)",
            r.only_a.len(),
            r.only_b.len()
        ));
    }
    if !r.across.is_empty() {
        let across: Vec<String> = r
            .across
            .iter()
            .map(|x| format!("{} {} (A) vs {} (B)", x.field, x.a, x.b))
            .collect();
        matched.push_str(&format!(
            ", compared across what each side sets throughout: {}",
            across.join(", ")
        ));
    }
    writeln!(out, "{matched}")?;
    if r.verdicts_compared > 0 {
        writeln!(
            out,
            "verdicts: {} compared, {} changed ({} for the worse)",
            r.verdicts_compared,
            r.verdict_changes.len(),
            r.verdict_changes.iter().filter(|c| c.regression).count()
        )?;
    }
    if !r.rows.is_empty() {
        let unjudged = r.rows.iter().filter(|x| x.not_judged.is_some()).count();
        writeln!(
            out,
            "metrics: {} row(s), {} judged (Holm-Bonferroni over {}){}",
            r.rows.len(),
            r.judged,
            r.judged,
            if unjudged > 0 {
                format!(", {unjudged} shown but not judged (below)")
            } else {
                String::new()
            }
        )?;
    }
    if !r.verdict_changes.is_empty() {
        let mut t = Table::fitting();
        t.set_header(VERDICT_CHANGE_COLUMNS.to_vec());
        for c in &r.verdict_changes {
            t.add_row(vec![
                c.key.to_string(),
                c.before.clone(),
                c.after.clone(),
                if c.regression { "yes" } else { "no" }.into(),
            ]);
        }
        writeln!(out, "{t}")?;
    }
    if !r.rows.is_empty() {
        let mut t = Table::fitting();
        t.set_header(METRIC_COLUMNS.to_vec());
        // Eight columns of figures and words: a two-line verdict or
        // interval reads better than a table cut in two.
        t.wrap_floor(10);
        // The verdict on one line: `worse (regression)` is searched for.
        t.whole(7);
        // Each record's key once, over its metrics: in the order the rows
        // come, a record's rows together.
        let mut keys: Vec<&atomlab_stats::ab::Key> = Vec::new();
        for row in &r.rows {
            if !keys.contains(&&row.key) {
                keys.push(&row.key);
            }
        }
        let grouped = keys
            .iter()
            .flat_map(|k| r.rows.iter().filter(move |x| &x.key == *k));
        let mut last = None;
        for row in grouped {
            if last != Some(&row.key) {
                t.heading(row.key.to_string());
                last = Some(&row.key);
            }
            t.add_row(metric_cells(row).to_vec());
        }
        writeln!(out, "{t}")?;
        writeln!(out, "{}", legend(r.judged, threshold, alpha))?;
        if let Some(note) = too_few_note(r) {
            writeln!(out, "{note}")?;
        }
        if let Some(c) = r
            .rows
            .iter()
            .filter_map(|x| x.comparison)
            .find(|c| c.ci_method == CiMethod::Bootstrap)
        {
            writeln!(out, "CI*: {} x {} runs make over a million pairwise differences, so the interval is the percentile bootstrap of the change of medians: {} resamples, each resample's median drawn directly as an order statistic (exact in distribution; costs one sort of each side, not resamples x samples)", c.n_a, c.n_b, Settings::default().resamples)?;
        }
        for (metric, why) in not_judged(r) {
            writeln!(out, "not judged: {metric}: {why}")?;
        }
        // Holm's first step needs p < alpha/m; with few runs an exact p
        // cannot get that low, and the reader must know it, not read
        // "too noisy" as "unchanged".
        let hopeless = r
            .rows
            .iter()
            .filter(|x| x.not_judged.is_none())
            .filter_map(|x| x.comparison)
            .filter(|c| {
                c.p_method == PMethod::Exact
                    && smallest_exact_p(c.n_a, c.n_b) * r.judged as f64 >= alpha
            })
            .map(|c| (c.n_a, c.n_b))
            .min();
        if let Some((n_a, n_b)) = hopeless {
            writeln!(out, "note: with {n_a} vs {n_b} runs no p can fall below {:.4}, and Holm over {} rows needs the smallest below {:.4}: such rows cannot show a change; use more runs, or --metric to judge fewer rows", smallest_exact_p(n_a, n_b), r.judged, alpha / r.judged as f64)?;
        }
    }
    for k in &r.only_a {
        writeln!(out, "only in A: {k}")?;
    }
    for k in &r.only_b {
        writeln!(out, "only in B: {k}")?;
    }
    Ok(())
}

/// The lines under the comparison for records the harness itself flagged
/// (not contended, runs left out) on side `a` or `b`: they are compared as
/// measured, but the reader must know.
pub fn write_flagged(out: &mut impl Write, a: &Side, b: &Side) -> io::Result<()> {
    for (tag, side) in [("A", a), ("B", b)] {
        let flagged: Vec<String> = side
            .records
            .iter()
            .filter(|r| !r.flags.is_empty())
            .map(|r| {
                let mut words: Vec<&str> = r.flags.iter().map(|f| f.kind.words()).collect();
                words.dedup();
                format!("{} {} ({})", r.scenario, r.variant, words.join(", "))
            })
            .collect();
        if !flagged.is_empty() {
            let note = format!(
                "note: {} flagged record(s) in {tag}, compared as measured: {}",
                flagged.len(),
                flagged.join("; ")
            );
            crate::table::write_wrapped(out, &note, crate::table::WIDTH, 6)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::{Metric, Record, Source, Unit};
    use atomlab_stats::ab::compare_records;

    fn bench(ns: &[f64]) -> Record {
        let mut r = Record::new("bench", "counter", "fetch_add");
        r.param("threads", 1);
        r.metrics.push(Metric::new(
            "ns_per_op",
            Unit::NanosPerOp,
            Source::ClockGettime,
            ns.to_vec(),
        ));
        r
    }

    /// The sides, what matched, the table with a regression's row, the
    /// legend with the gate and alpha, and the unmatched record.
    #[test]
    fn a_regression_is_a_row_and_the_unmatched_are_listed() {
        let a = [bench(&[10.0, 10.1, 10.2, 9.9, 10.0])];
        let mut other = bench(&[1.0]);
        other.scenario = "lock".into();
        let b = [bench(&[12.0, 12.1, 12.2, 11.9, 12.0]), other];
        let r = compare_records(&a, &b, Settings::default(), None, 0.01);
        let mut out = Vec::new();
        write_terminal(&mut out, &r, "run 1", "run 2", 1.0, 0.05).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.starts_with(
                "A = run 1\nB = run 2\nmatched 1 record(s) of A with B (0 of A and 1 of B unmatched, listed below)\n"
            ),
            "{out}"
        );
        let row = out
            .lines()
            .find(|l| l.contains("| ns_per_op "))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(
            row.contains("| 10.0 ns ") && row.contains("| 12.0 ns "),
            "{row}"
        );
        // The record's key once, on the line above its metrics.
        let lines: Vec<&str> = out.lines().collect();
        let at = lines.iter().position(|l| l == &row).unwrap();
        assert!(
            lines[at - 1].starts_with("| bench counter fetch_add [threads=1] "),
            "{out}"
        );
        assert_eq!(out.matches("bench counter fetch_add").count(), 1, "{out}");
        assert!(row.contains("+20.00%"), "{row}");
        // Eight columns in 100: the interval wraps onto a second line of
        // the row, the verdict stays whole.
        assert!(row.contains("worse (regression)"), "{out}");
        assert!(lines[at + 1].contains("+22.00%]"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");
        assert!(out.contains("exceeds 1%"), "{out}");
        assert!(
            out.ends_with(&format!("only in B: {}\n", r.only_b[0])),
            "{out}"
        );
    }
}
