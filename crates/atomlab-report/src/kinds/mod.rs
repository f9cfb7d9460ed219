//! Every kind of record the report knows, one file (or folder) each, and
//! their one list (`KINDS`). A kind's file holds everything shown of its
//! records: how the terminal shows a report of its command (what the
//! command prints, and `atomlab show` prints again from the saved records),
//! the tables that view defines, and the section of the HTML page, which
//! draws those tables as HTML; it ends its part in its `Kind` entry,
//! `KIND`. A new kind is its file, its `mod` line and its entry in
//! `KINDS`; records of a kind not listed are shown as one generic table
//! ([`crate::show_view::write_records`]) and under the page's "other
//! records".

use std::io::{self, Write};

use atomlab_core::Report;

use crate::SectionFn;

pub mod audit;
mod bench;
pub mod check;
mod load;
pub mod machine;
pub mod run;
mod stress;
pub mod suite;
mod verify;

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
    bench::KIND,
    stress::KIND,
    check::KIND,
    run::KIND,
    load::KIND,
    audit::KIND,
    suite::KIND,
    machine::KIND,
    verify::KIND,
];

/// The kind called `name`, if the report knows it.
pub(crate) fn find(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.name == name)
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
