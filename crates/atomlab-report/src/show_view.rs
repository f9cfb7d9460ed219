//! What `atomlab show RUN` prints: a saved report as its command printed
//! it, from its records alone, through that command's view (bench's
//! tables, stress's, check's, run's, audit's, load's, the suite's summary,
//! the machine's facts); the records of a command this atomlab has no view
//! for as one table of their keys, verdicts and medians. The commands
//! whose view needs nothing but the report (bench, stress, audit, load,
//! suite, machine) print through here live too, so the two cannot differ.

use std::io::{self, Write};

use atomlab_core::{Record, Report};

use crate::html::num;
use crate::table::Table;

/// The report as its command printed it.
pub fn write_terminal(out: &mut impl Write, report: &Report) -> io::Result<()> {
    match report.command.as_str() {
        "bench" => crate::bench_tables::write_terminal(out, report),
        "stress" => crate::stress_view::write_terminal(out, &report.records),
        "check" => {
            let recs: Vec<&Record> = report.records.iter().collect();
            crate::check_view::write_records_table(out, &recs)
        }
        "audit" => {
            // A record that is not an audit's names itself (index, key and
            // what is wrong), as the io::Error's message.
            let shown = crate::audit_read::shown(&report.records)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            crate::audit_view::write_terminal(out, &shown)
        }
        "run" => crate::run_view::write_view(out, &report.records, report.machine.emulated),
        "load" => crate::load_view::write_terminal(out, &report.records),
        "suite" => crate::suite_view::write_summary(out, report),
        "machine" => crate::machine_view::write_terminal(out, &report.machine),
        "verify" => crate::verify_view::write_terminal(out, report),
        _ => write_records(out, &report.records),
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
