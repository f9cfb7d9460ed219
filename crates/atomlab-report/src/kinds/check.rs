//! The terminal's view of check records: the side-by-side table (tests ×
//! models), defined here from records and a [`Layout`], drawn as atomlab's
//! [`crate::table::Table`] with the lines under it; `atomlab check` prints
//! it for a batch, `atomlab show` and `suite --verbose` for saved records.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::{self, Write};

use atomlab_core::check_layout::{row_key, Layout};
use atomlab_core::{Record, Verdict};
use serde_json::Value;

use crate::html::{esc, param, slug};
use crate::table::{Cell, Table as PageTable};
use crate::{run_column, run_name, runs_differ, Rec, RunView};

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
    // Each cell's record and error by its row and model, the first one
    // as a search in order would find it: a table of thousands of tests
    // is not a search of every record for every cell.
    let mut by_cell: HashMap<((&str, &str), &str), &Record> = HashMap::new();
    for r in recs {
        by_cell.entry((row_key(r), r.variant.as_str())).or_insert(r);
    }
    let errors: HashSet<(&str, &str)> = layout
        .errors
        .iter()
        .map(|(f, m)| (f.as_str(), m.as_str()))
        .collect();
    let rows = layout
        .rows
        .iter()
        .map(|row| {
            let mut cells = vec![row.test.clone(), row.condition.clone()];
            let key = (row.test.as_str(), row.file.as_str());
            for m in &layout.models {
                let c = match by_cell.get(&(key, m.as_str())) {
                    Some(r) => cell(r),
                    None if errors.contains(&(row.file.as_str(), m.as_str())) => "ERROR".into(),
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

/// A check record's cell as `atomlab check` prints it (one definition:
/// [`cell`]): `Never (3)`, `Sometimes (4) race`, `TIMEOUT`, `BOUND`.
pub fn check_cell(r: &Record) -> String {
    cell(r)
}

fn check_class(r: &Record) -> &'static str {
    match r.verdict {
        Some(Verdict::Timeout | Verdict::Bound) => "warn",
        _ => match r.parameters.get("observation").and_then(|o| o.as_str()) {
            Some("Never") => "never",
            Some("Sometimes") => "sometimes",
            Some("Always") => "always",
            _ => "",
        },
    }
}

/// Check: tests × models, then each test's explanation in a `<details>`.
/// The table is the terminal's ([`table`]), one per
/// run, with a run column when the runs differ and each cell coloured by
/// its verdict; its notes follow it.
pub(crate) fn section(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    let multi = runs_differ(recs);
    let mut run_order: Vec<usize> = Vec::new();
    for x in recs {
        if !run_order.contains(&x.run) {
            run_order.push(x.run);
        }
    }
    // Each run's table as the terminal draws it, and the models of all.
    let mut models: Vec<String> = Vec::new();
    let mut tables = Vec::new();
    for &run in &run_order {
        let mine: Vec<&Record> = recs.iter().filter(|x| x.run == run).map(|x| x.r).collect();
        let layout = Layout::of_records(&mine);
        for m in &layout.models {
            if !models.contains(m) {
                models.push(m.clone());
            }
        }
        let table = table(&layout, &mine);
        tables.push((run, layout, table));
    }
    let find = |run: usize, test: &str, model: &str| {
        recs.iter()
            .find(|x| x.run == run && x.r.scenario == test && x.r.variant == model)
    };
    let mut header: Vec<String> = Vec::new();
    if multi {
        header.push("run".into());
    }
    header.push("test".into());
    header.push("condition".into());
    header.extend(models.iter().cloned());
    let mut t = PageTable::with_header(&header).class("check");
    let mut rows: Vec<(usize, &str)> = Vec::new();
    let mut notes: Vec<&str> = Vec::new();
    for (run, layout, table) in &tables {
        for (row, cells) in layout.rows.iter().zip(&table.rows) {
            let mut html = Vec::new();
            if multi {
                html.push(Cell::text(run_column(&runs[*run])));
            }
            html.push(Cell::html(format!(
                "<a href=\"#{}\">{}</a>",
                explain_id(*run, &row.test),
                esc(&row.test)
            )));
            html.push(Cell::html(format!("<code>{}</code>", esc(&row.condition))));
            for m in &models {
                let column = layout.models.iter().position(|k| k == m);
                let cell = column.map_or("-", |c| cells[2 + c].as_str());
                html.push(match find(*run, &row.test, m) {
                    Some(x) => Cell::text(cell).class(check_class(x.r)),
                    None => Cell::text(cell),
                });
            }
            t.row(html);
            if !rows.contains(&(*run, row.test.as_str())) {
                rows.push((*run, &row.test));
            }
        }
        for n in &table.notes {
            if !notes.contains(&n.as_str()) {
                notes.push(n);
            }
        }
    }
    t.html(out);
    if !notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for n in notes {
            let _ = writeln!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<h3>explanations</h3>\n");
    for &(run, test) in &rows {
        let mine: Vec<&Record> = models
            .iter()
            .filter_map(|m| find(run, test, m))
            .map(|x| x.r)
            .collect();
        explanation(out, runs, multi.then_some(run), test, &mine);
    }
}

fn explain_id(run: usize, test: &str) -> String {
    format!("check-{run}-{}", slug(test))
}

fn explanation(
    out: &mut String,
    runs: &[RunView],
    run: Option<usize>,
    test: &str,
    recs: &[&Record],
) {
    let detail = |r: &Record, key: &str| -> Vec<Value> {
        r.detail
            .as_ref()
            .and_then(|d| d.get(key))
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let forbidden: usize = recs.iter().map(|r| detail(r, "forbidden").len()).sum();
    let witnessed: Vec<&str> = recs
        .iter()
        .filter(|r| {
            r.detail
                .as_ref()
                .and_then(|d| d.get("witness"))
                .is_some_and(|w| w.is_string())
        })
        .map(|r| r.variant.as_str())
        .collect();
    let mut summary = String::new();
    if let Some(run) = run {
        let _ = write!(summary, "{}: ", esc(&run_name(&runs[run])));
    }
    let _ = write!(summary, "<strong>{}</strong>: ", esc(test));
    let mut parts: Vec<String> = Vec::new();
    if forbidden > 0 {
        parts.push(format!("{forbidden} forbidden outcome(s) explained"));
    }
    if !witnessed.is_empty() {
        parts.push(format!("witness under {}", esc(&witnessed.join(", "))));
    }
    if parts.is_empty() {
        parts.push("allowed states".into());
    }
    summary.push_str(&parts.join("; "));
    let _ = writeln!(
        out,
        "<details class=\"explain\" id=\"{}\"><summary>{summary}</summary>",
        explain_id(run.unwrap_or(0), test)
    );
    if let Some(r) = recs.first() {
        let _ = writeln!(
            out,
            "<p>condition <code>{}</code>; file <code>{}</code></p>",
            esc(&param(r, "condition")),
            esc(&param(r, "file"))
        );
    }
    for r in recs {
        let _ = writeln!(
            out,
            "<h4>{}: <span class=\"{}\">{}</span></h4>",
            esc(&r.variant),
            check_class(r),
            esc(&check_cell(r))
        );
        for n in &r.notes {
            let _ = writeln!(out, "<p class=\"warn\">{}</p>", esc(n));
        }
        let forbidden = detail(r, "forbidden");
        if !forbidden.is_empty() {
            let mut t = PageTable::with_header(&["forbidden final state", "axiom", "cycle"]);
            for f in &forbidden {
                let s = |k: &str| f.get(k).and_then(|v| v.as_str()).unwrap_or("-");
                t.row(vec![
                    Cell::html(format!("<code>{}</code>", esc(s("state")))),
                    Cell::text(s("axiom")),
                    Cell::html(format!("<code>{}</code>", esc(s("cycle")))).class("wide"),
                ]);
            }
            t.html(out);
        }
        if let Some(w) = r
            .detail
            .as_ref()
            .and_then(|d| d.get("witness"))
            .and_then(|w| w.as_str())
        {
            let _ = writeln!(
                out,
                "<p>witness (an execution with the condition's outcome):</p><pre>{}</pre>",
                esc(&w.replace("; ", ";\n"))
            );
        }
        let states = detail(r, "states");
        if !states.is_empty() {
            let _ = write!(
                out,
                "<details><summary>allowed final states ({})</summary><p class=\"states\">",
                states.len()
            );
            for s in &states {
                let line = s.get("state").and_then(|v| v.as_str()).unwrap_or("-");
                let race = if s.get("data_race").and_then(|v| v.as_bool()) == Some(true) {
                    " <span class=\"bad\">(data race)</span>"
                } else {
                    ""
                };
                let _ = write!(out, "<span><code>{}</code>{race}</span> ", esc(line));
            }
            out.push_str("</p></details>\n");
        }
    }
    out.push_str("</details>\n");
}

/// check's entry in [`super::KINDS`].
pub(crate) const KIND: super::Kind = super::Kind {
    name: "check",
    terminal: |mut out, report| {
        let recs: Vec<&Record> = report.records.iter().collect();
        write_records_table(&mut out, &recs)
    },
    section: Some(section),
};
