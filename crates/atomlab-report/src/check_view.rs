//! The terminal's view of check records: atomlab-check's side-by-side
//! table (tests × models, defined there from records) drawn as atomlab's
//! [`Table`], with the lines under it; `atomlab check` prints it for a
//! batch, `atomlab show` and `suite --verbose` for saved records.

use std::io::{self, Write};

use atomlab_check::render;
use atomlab_core::Record;

use crate::table::Table;

/// Draws a check table and the lines under it, within
/// [`crate::table::WIDTH`]: a table too wide is cut into panels (the
/// hardware models, then the language models), each starting with the
/// test's name.
pub fn write_table(out: &mut impl Write, table: &render::Table) -> io::Result<()> {
    let mut t = Table::fitting();
    t.set_header(table.header.iter().cloned());
    for row in &table.rows {
        t.add_row(row.iter().cloned());
    }
    t.keys(1);
    writeln!(out, "{t}")?;
    for n in &table.notes {
        crate::table::write_wrapped(out, n, crate::table::WIDTH, 2)?;
    }
    Ok(())
}

/// The side-by-side table of saved check records (`show`, `suite
/// --verbose`), as `check` printed it as far as the records say.
pub fn write_records_table(out: &mut impl Write, recs: &[&Record]) -> io::Result<()> {
    write_table(out, &render::table(&render::Layout::of_records(recs), recs))
}
