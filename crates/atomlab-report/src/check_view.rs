//! The terminal's view of check records: the side-by-side table (tests ×
//! models), defined here from records and a [`Layout`], drawn as atomlab's
//! [`crate::table::Table`] with the lines under it; `atomlab check` prints
//! it for a batch, `atomlab show` and `suite --verbose` for saved records.

use std::io::{self, Write};

use atomlab_core::check_layout::Layout;
use atomlab_core::{Record, Verdict};

/// The per-test timeout `atomlab check` uses when none is given.
pub const DEFAULT_TIMEOUT_S: f64 = 60.0;

/// Draws a check table and the lines under it, within
/// [`crate::table::WIDTH`]: a table too wide is cut into panels (the
/// hardware models, then the language models), each starting with the
/// test's name.
pub fn write_table(out: &mut impl Write, table: &Table) -> io::Result<()> {
    let mut t = crate::table::Table::fitting();
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
    write_table(out, &table(&Layout::of_records(recs), recs))
}

/// A table to draw: a header, rows of cells, and the lines printed under
/// it (what its words mean, the C11 mappings).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// The column names.
    pub header: Vec<String>,
    /// The rows, as many cells as the header.
    pub rows: Vec<Vec<String>>,
    /// Lines under the table.
    pub notes: Vec<String>,
}

/// A check record's cell: `Never (3)`, `Sometimes (4) race`,
/// `Always (1) flag lock-final`, `TIMEOUT`, `BOUND`.
pub fn cell(r: &Record) -> String {
    if let Some(v @ (Verdict::Timeout | Verdict::Bound)) = r.verdict {
        return v.as_str().into();
    }
    let obs = r
        .parameters
        .get("observation")
        .and_then(|o| o.as_str())
        .unwrap_or("-");
    let states = r
        .metric("allowed_states")
        .and_then(|m| m.median())
        .unwrap_or(0.0);
    let race = if r.parameters.get("data_race").and_then(|d| d.as_bool()) == Some(true) {
        " race"
    } else {
        ""
    };
    let flags = flags(r);
    let flags = if flags.is_empty() {
        String::new()
    } else {
        format!(" flag {}", flags.join(", "))
    };
    let thin = if thin_air_states(r).is_empty() {
        ""
    } else {
        " thin-air"
    };
    format!("{obs} ({states}){race}{flags}{thin}")
}

/// The final states with a value out of thin air a record carries
/// (`0:r1=S8;`).
fn thin_air_states(r: &Record) -> Vec<&str> {
    r.parameters
        .get("thin_air_states")
        .and_then(|f| f.as_array())
        .map(|a| a.iter().filter_map(|f| f.as_str()).collect())
        .unwrap_or_default()
}

/// The model's raised flags a record carries.
fn flags(r: &Record) -> Vec<&str> {
    r.parameters
        .get("flags")
        .and_then(|f| f.as_array())
        .map(|a| a.iter().filter_map(|f| f.as_str()).collect())
        .unwrap_or_default()
}

/// The side-by-side table of check records: a row per test of `layout`,
/// a column per model, each cell from the test's record under the model
/// (`-`: the model does not apply), then what the words mean.
pub fn table(layout: &Layout, recs: &[&Record]) -> Table {
    let mut header = vec!["test".to_string(), "condition".to_string()];
    header.extend(layout.models.iter().cloned());
    let mut words: Vec<String> = Vec::new();
    let rows = layout
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![row.test.clone(), row.condition.clone()];
            for m in &layout.models {
                let c = match recs.iter().find(|r| r.variant == *m && row.holds(r)) {
                    Some(r) => cell(r),
                    None if layout.errors.iter().any(|(f, e)| *f == row.file && e == m) => {
                        "ERROR".into()
                    }
                    None => "-".into(),
                };
                if !words.contains(&c) {
                    words.push(c.clone());
                }
                cells.push(c);
            }
            cells
        })
        .collect();
    let mut notes = vec!["cells: Never/Sometimes/Always: observation of the condition (allowed final states); \"race\": a data race (undefined behaviour); \"-\": model does not apply".to_string()];
    if recs.iter().any(|r| !flags(r).is_empty()) {
        notes.push("\"flag NAME\": the model's flag NAME is raised (herd7's Flag; the LKMM's say the test misuses a lock, RCU or SRCU, or mixes plain and marked accesses)".into());
    }
    let thin: Vec<&&Record> = recs
        .iter()
        .filter(|r| !thin_air_states(r).is_empty())
        .collect();
    if !thin.is_empty() {
        notes.push("\"thin-air\": a final state holds a value out of thin air, named as herd7 names it (S8): the value of a load-buffering cycle of plain accesses that store what they read, which every value satisfies and nothing determines; it is one state, counted once, and the condition is false on it".into());
        for r in thin {
            notes.push(format!(
                "{} [{}]: {}",
                r.scenario,
                r.variant,
                thin_air_states(r).join("  ")
            ));
        }
    }
    if words.iter().any(|w| w == Verdict::Timeout.as_str()) {
        notes.push(format!("TIMEOUT: gave up at the per-test timeout (default {DEFAULT_TIMEOUT_S} s; --timeout S raises it, --timeout 0 removes it)"));
    }
    if words.iter().any(|w| w == Verdict::Bound.as_str()) {
        notes.push("BOUND: the test exceeds a fixed limit of this checker (128 events per execution, 64 under a cat file, 2000 instructions per thread, 200,000 possible runs per test), which no option raises: split the test".into());
    }
    if words.iter().any(|w| w == "ERROR") {
        notes.push("ERROR: the model could not follow the test (see the message on stderr)".into());
    }
    for (model, m) in by_model(recs, "mapping") {
        notes.push(format!("{model} judges C tests through {m}"));
    }
    for (model, m) in by_model(recs, "reading") {
        notes.push(format!("{model}: {m}"));
    }
    Table {
        header,
        rows,
        notes,
    }
}

/// The distinct (model, value) pairs of the text parameter `key` of `recs`,
/// in record order.
fn by_model<'r>(recs: &[&'r Record], key: &str) -> Vec<(&'r str, &'r str)> {
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for r in recs {
        if let Some(v) = r.parameters.get(key).and_then(|v| v.as_str()) {
            if !pairs.contains(&(r.variant.as_str(), v)) {
                pairs.push((&r.variant, v));
            }
        }
    }
    pairs
}
