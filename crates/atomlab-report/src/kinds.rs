//! Every kind of record the report knows, in one list ([`KINDS`]): the
//! command that writes it, how the terminal shows a report of that command
//! (what the command prints, and `atomlab show` prints again from the
//! saved records), and the section of the HTML page its records get. A new
//! kind is its view and one entry here; records of a kind not listed are
//! shown as one generic table ([`crate::show_view::write_records`]) and
//! under the page's "other records".

use std::io::{self, Write};

use atomlab_core::{Record, Report};

use crate::{Rec, RunView, SectionFn};

/// One kind of record.
pub(crate) struct Kind {
    /// The command that writes it ([`Report::command`]); also its
    /// records' capability, the page section's id and heading.
    pub(crate) name: &'static str,
    /// A report of the command as the terminal shows it.
    pub(crate) terminal: fn(&mut dyn Write, &Report) -> io::Result<()>,
    /// Its section of the page (every run's records of the capability,
    /// under the heading), if it has one: in the page's order.
    pub(crate) section: Option<SectionFn>,
}

/// Every kind, the ones with a page section first, in the page's order.
pub(crate) const KINDS: [Kind; 9] = [
    Kind {
        name: "bench",
        terminal: |mut out, report| crate::bench_tables::write_terminal(&mut out, report),
        section: Some(crate::bench::section),
    },
    Kind {
        name: "stress",
        terminal: |mut out, report| crate::stress_view::write_terminal(&mut out, &report.records),
        section: Some(crate::verdicts::stress),
    },
    Kind {
        name: "check",
        terminal: |mut out, report| {
            let recs: Vec<&Record> = report.records.iter().collect();
            crate::check_view::write_records_table(&mut out, &recs)
        },
        section: Some(crate::verdicts::check),
    },
    Kind {
        name: "run",
        terminal: |mut out, report| {
            crate::run_view::write_view(&mut out, &report.records, report.machine.emulated)
        },
        section: Some(crate::run_section::section),
    },
    Kind {
        name: "load",
        terminal: |mut out, report| crate::load_view::write_terminal(&mut out, &report.records),
        section: Some(crate::load_section::section),
    },
    Kind {
        name: "audit",
        terminal: |mut out, report| {
            // A record that is not an audit's names itself (index, key and
            // what is wrong), as the io::Error's message.
            let shown = crate::audit_read::shown(&report.records)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            crate::audit_view::write_terminal(&mut out, &shown)
        },
        section: Some(audit_section),
    },
    Kind {
        name: "suite",
        terminal: |mut out, report| crate::suite_view::write_summary(&mut out, report),
        section: None,
    },
    Kind {
        name: "machine",
        terminal: |mut out, report| crate::machine_view::write_terminal(&mut out, &report.machine),
        section: None,
    },
    Kind {
        name: "verify",
        terminal: |mut out, report| crate::verify_view::write_terminal(&mut out, report),
        section: None,
    },
];

/// The kind called `name`, if the report knows it.
pub(crate) fn find(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.name == name)
}

/// audit: how many binaries (or packages) got each verdict, then a row per
/// binary with its counts and details. Issue 27's archive section (verdict
/// counts per package and what needs attention) is a function of its own
/// module (`audit_*.rs`) called from here.
fn audit_section(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    crate::verdicts::audit_counts(out, runs, recs);
    crate::audit_archive::section(out, runs, recs);
    crate::verdicts::audit(out, runs, recs);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are unique, and the kinds with a section come first (the
    /// page's order is the list's).
    #[test]
    fn one_entry_per_kind_sections_first() {
        for (i, k) in KINDS.iter().enumerate() {
            assert!(KINDS[..i].iter().all(|j| j.name != k.name), "{}", k.name);
            if k.section.is_some() {
                assert!(KINDS[..i].iter().all(|j| j.section.is_some()), "{}", k.name);
            }
        }
        assert!(find("bench").is_some() && find("nope").is_none());
    }
}
