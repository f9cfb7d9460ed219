//! The terminal's view of a machine fingerprint: what `atomlab machine`
//! prints and `atomlab show` and `suite --verbose` print again.

use std::io::{self, Write};

use atomlab_core::Machine;

use crate::table::Table;

/// The machine's facts, a row each.
pub fn write_terminal(out: &mut impl Write, m: &Machine) -> io::Result<()> {
    let mut t = Table::new();
    // The PMU's reason is a sentence: wrap it instead of a 200-column row.
    t.wrap_to(100);
    t.set_header(vec!["machine", ""]);
    let rows = m.facts();
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v]);
    }
    writeln!(out, "{t}")
}

/// machine's entry in [`super::KINDS`]: the page shows every run's
/// machine at its top, not in a section.
pub(crate) const KIND: super::Kind = super::Kind {
    name: "machine",
    terminal: |mut out, report| write_terminal(&mut out, &report.machine),
    section: None,
};
