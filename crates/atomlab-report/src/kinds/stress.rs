//! The terminal's view of stress records: what `atomlab stress` prints and
//! `atomlab show` prints again, from the records alone.

use std::fmt::Write as _;
use std::io::{self, Write};

use atomlab_core::{Record, Verdict};

use crate::html::{esc, num, param};
use crate::table::{self, Cell, Table};
use crate::units;
use crate::{run_column, runs_differ, Rec, RunView};

/// A metric's median.
fn metric(r: &Record, name: &str) -> Option<f64> {
    r.metric(name).and_then(|m| m.median())
}

/// A verdict as the stress table prints it.
fn verdict_word(v: Option<Verdict>) -> &'static str {
    v.map_or("-", Verdict::words)
}

/// The terminal's view of stress records (`atomlab stress`, `atomlab
/// show`): one table, then per variant the verdict's reason, the first
/// violation and the replay line.
pub(crate) fn write_terminal(out: &mut impl Write, recs: &[Record]) -> io::Result<()> {
    table::fitted(out, |out| write_unfitted(out, recs))
}

/// The stress table's columns, as the terminal and the HTML report draw
/// them.
pub(crate) const COLUMNS: [&str; 9] = [
    "scenario",
    "variant",
    "expected",
    "threads",
    "ops",
    "time",
    "violations",
    "first after",
    "verdict",
];

/// A stress record's row under [`COLUMNS`]: the one definition of the
/// table, for the terminal ([`write_terminal`]) and the HTML report.
pub(crate) fn row(r: &Record) -> Vec<String> {
    let s = |k: &str| match r.parameters.get(k) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".into(),
    };
    vec![
        r.scenario.clone(),
        r.variant.clone(),
        s("expected"),
        s("threads"),
        metric(r, "operations").map_or("-".into(), num),
        metric(r, "seconds").map_or("-".into(), units::duration),
        metric(r, "violations").map_or("-".into(), |v| format!("{v}")),
        metric(r, "time_to_first_violation").map_or("-".into(), units::duration),
        verdict_word(r.verdict).to_string(),
    ]
}

/// What is said of a record under the table: its verdict's reason and
/// other notes, its violations by kind, and the line that replays it.
pub(crate) fn details(r: &Record) -> Vec<String> {
    let mut lines: Vec<String> = r
        .notes
        .iter()
        .map(|n| n.strip_prefix("verdict: ").unwrap_or(n).to_string())
        .collect();
    let by_kind: Vec<String> = r
        .metrics
        .iter()
        .filter_map(|m| {
            let k = m.name.strip_prefix("violations:")?;
            Some(format!("{k} {}", m.median()?))
        })
        .collect();
    if !by_kind.is_empty() {
        lines.push(format!("violations by kind: {}", by_kind.join(", ")));
    }
    if let Some(serde_json::Value::String(line)) = r.parameters.get("replay") {
        lines.push(format!("replay: {line}"));
    }
    lines
}

/// [`write_terminal`]'s lines, before the long ones are wrapped.
fn write_unfitted(out: &mut Vec<u8>, recs: &[Record]) -> io::Result<()> {
    let recs: Vec<&Record> = recs.iter().filter(|r| r.capability == "stress").collect();
    if recs.is_empty() {
        return Ok(());
    }
    let mut t = Table::fitting();
    t.set_header(COLUMNS.to_vec());
    for r in &recs {
        t.add_row(row(r));
    }
    t.keys(2);
    writeln!(out, "{t}")?;
    for r in &recs {
        writeln!(
            out,
            "{} {}: {}",
            r.scenario,
            r.variant,
            verdict_word(r.verdict)
        )?;
        for line in details(r) {
            writeln!(out, "  {line}")?;
        }
    }
    writeln!(out, "{STRESS_LEGEND}")?;
    Ok(())
}

/// What the stress table's columns and verdicts mean, under it (the
/// terminal spells NOT OBSERVED with a space; JSON and the report's data
/// with an underscore, NOT_OBSERVED, as every machine-read verdict).
pub(crate) const STRESS_LEGEND: &str = "legend: expected: correct, or broken (built to fail, to show the detectors catch it); ops: critical sections, items or operations run; violations: what the detectors caught (mutual exclusion, lost updates, lost, duplicated or torn items, early frees); first after: time to the first violation; verdict: PASS (a correct variant, no violation), FAIL (a correct variant with violations, or a broken one caught), NOT OBSERVED (a broken variant whose bug did not show: the reason is under it), TIMEOUT (stopped undecided)";

/// The page's section: the terminal's table ([`row`]), a run
/// column when runs differ, each verdict coloured by whether it is what
/// the variant's expectation asks, and what the terminal says under the
/// table in a last column.
pub(crate) fn section(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    let multi = runs_differ(recs);
    let mut header = vec![];
    if multi {
        header.push("run");
    }
    header.extend(COLUMNS);
    header.push("notes");
    let verdict_at = COLUMNS.len() - 1;
    let mut t = Table::with_header(&header);
    for x in recs {
        let r = x.r;
        let class = match (param(r, "expected").as_str(), r.verdict) {
            (_, Some(Verdict::Timeout | Verdict::Bound)) => "warn",
            ("correct", Some(Verdict::Pass)) | ("broken", Some(Verdict::Fail)) => "ok",
            ("broken", Some(Verdict::NotObserved)) => "warn",
            (_, Some(Verdict::Fail)) => "bad",
            _ => "",
        };
        let mut cells = Vec::new();
        if multi {
            cells.push(Cell::text(run_column(&runs[x.run])));
        }
        for (i, c) in row(r).into_iter().enumerate() {
            cells.push(if i == verdict_at {
                Cell::text(c).class(class)
            } else {
                Cell::text(c)
            });
        }
        let lines = details(r);
        let notes = match lines.split_first() {
            None => String::new(),
            Some((first, [])) => esc(first),
            Some((first, rest)) => format!(
                "{}<details><summary>more</summary><ul>{}</ul></details>",
                esc(first),
                rest.iter()
                    .map(|n| format!("<li>{}</li>", esc(n)))
                    .collect::<String>()
            ),
        };
        cells.push(Cell::html(notes).class("wide"));
        t.row(cells);
    }
    t.html(out);
    let _ = writeln!(out, "<p class=\"notes\">{}</p>", esc(STRESS_LEGEND));
}

/// stress's entry in [`super::KINDS`].
pub(crate) const KIND: super::Kind = super::Kind {
    name: "stress",
    terminal: |mut out, report| write_terminal(&mut out, &report.records),
    section: Some(section),
};

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::{Metric, Source, Unit};

    #[test]
    fn a_table_then_each_variant_with_its_violations_and_replay() {
        let mut r = Record::new("stress", "refcount", "raw");
        r.param("expected", "broken").param("threads", 2);
        r.param("replay", "atomlab stress refcount --variant raw --seed 3");
        r.verdict = Some(Verdict::Fail);
        for (name, v) in [("violations", 3.0), ("violations:double-free", 3.0)] {
            r.metrics.push(Metric::new(
                name,
                Unit::Count,
                Source::ClockGettime,
                vec![v],
            ));
        }
        r.notes.push("verdict: caught".into());
        let other = Record::new("bench", "counter", "fetch_add");
        let mut out = Vec::new();
        write_terminal(&mut out, &[r, other]).unwrap();
        let out = String::from_utf8(out).unwrap();
        // The legend closes the view (what each column and verdict means).
        let (out, legend) = out.split_at(out.find("legend: ").expect("a legend"));
        assert!(
            legend.contains("first after: time to the first violation"),
            "{legend}"
        );
        assert!(
            legend.contains("NOT OBSERVED (a broken variant"),
            "{legend}"
        );
        assert_eq!(
            out,
            "| scenario | variant | expected | threads | ops | time | violations | first after | verdict |\n\
             |----------|---------|----------|---------|-----|------|------------|-------------|---------|\n\
             | refcount | raw     | broken   | 2       | -   | -    | 3          | -           | FAIL    |\n\
             refcount raw: FAIL\n  caught\n  violations by kind: double-free 3\n  \
             replay: atomlab stress refcount --variant raw --seed 3\n"
        );
    }
}
