//! What `atomlab show RUN` prints: a saved report as its command printed
//! it, from its records alone, through that command's view (bench's
//! tables, stress's, check's, run's, audit's, load's, the suite's summary,
//! the machine's facts); the records of a command this atomlab has no view
//! for as one table of their keys, verdicts and medians. The commands
//! whose view needs nothing but the report (bench, stress, audit, load,
//! suite, machine) print through here live too, so the two cannot differ.
//! The page shows such records under "other records" (`other`).

use std::io::{self, Write};

use atomlab_core::{Record, Report, Verdict};

use crate::html::num;
use crate::table::{Cell, Table};
use crate::{run_column, Rec, RunView};

/// The report as its command printed it.
pub fn write_terminal(out: &mut impl Write, report: &Report) -> io::Result<()> {
    match crate::kinds::find(&report.command) {
        Some(kind) => (kind.terminal)(out, report),
        None => write_records(out, &report.records),
    }
}

/// Any records as one table (the view of a document from a command this
/// atomlab has no view for): key, verdict and every metric's median.
pub fn write_records(out: &mut impl Write, records: &[Record]) -> io::Result<()> {
    let mut t = Table::fitting();
    t.set_header(vec![
        "capability",
        "scenario",
        "variant",
        "verdict",
        "metrics (median)",
    ]);
    for r in records {
        let metrics: Vec<String> = r
            .metrics
            .iter()
            .filter_map(|m| {
                m.median()
                    .map(|v| format!("{} {} {}", m.name, num(v), m.unit.label()))
            })
            .collect();
        t.add_row(vec![
            r.capability.clone(),
            r.scenario.clone(),
            r.variant.clone(),
            r.verdict
                .and_then(|v| serde_json::to_value(v).ok())
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_else(|| "-".into()),
            metrics.join("; "),
        ]);
    }
    writeln!(out, "{t}")
}

/// Records of capabilities this report has no section for: their medians.
pub(crate) fn other(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    let mut t = Table::with_header(&[
        "run",
        "capability",
        "scenario",
        "variant",
        "verdict",
        "medians",
        "notes",
    ]);
    for x in recs {
        let r = x.r;
        let medians: Vec<String> = r
            .metrics
            .iter()
            .filter_map(|m| {
                Some(format!(
                    "{} {} {}",
                    m.name,
                    num(m.median()?),
                    m.unit.label()
                ))
            })
            .collect();
        t.row(vec![
            Cell::text(run_column(&runs[x.run])),
            Cell::text(&r.capability),
            Cell::text(&r.scenario),
            Cell::text(&r.variant),
            Cell::text(r.verdict.map(Verdict::as_str).unwrap_or("-")),
            Cell::text(medians.join(", ")),
            Cell::text(r.notes.join("; ")).class("wide"),
        ]);
    }
    t.html(out);
}
