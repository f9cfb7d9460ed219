//! A check batch for people: the side-by-side table (tests × models),
//! from records only, so that a saved run prints as the command printed
//! it; herd7's log format and the explanations of forbidden outcomes,
//! from the live results. The table is returned as header, rows and notes
//! for the caller to draw; the logs are written to any `Write`.

use std::io::{self, Write};

use atomlab_core::{Record, Verdict};
use atomlab_litmus::Test;
use atomlab_model::{explain, herd, ModelOutcome, MODEL_NAMES};

use crate::Checked;

/// The per-test timeout `atomlab check` uses when none is given.
pub const DEFAULT_TIMEOUT_S: f64 = 60.0;

/// What the table shows besides its records' cells: its columns, its rows
/// and the cells where a model could not follow the test. A batch knows
/// them ([`crate::Batch::layout`]); saved records give them as far as the
/// records go ([`Layout::of_records`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// The models, one column each.
    pub models: Vec<String>,
    /// The tests, one row each.
    pub rows: Vec<Row>,
    /// `(file, model)` cells where the model could not follow the test
    /// (an `ERROR` cell; such a cell has no record).
    pub errors: Vec<(String, String)>,
}

/// A row of the table: a test, told from a test of the same name in
/// another file by its file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    /// The test's name (the records' scenario).
    pub test: String,
    /// Its file (the records' `file` parameter).
    pub file: String,
    /// Its condition, as the table prints it.
    pub condition: String,
}

impl Row {
    /// Whether `r` is a record of this row's test.
    fn holds(&self, r: &Record) -> bool {
        r.scenario == self.test && param(r, "file") == Some(self.file.as_str())
    }
}

fn param<'r>(r: &'r Record, name: &str) -> Option<&'r str> {
    r.parameters.get(name).and_then(|v| v.as_str())
}

impl Layout {
    /// The layout records alone give: the models of their batch (their
    /// `models` parameter; for records without it, every model that judged
    /// some test, the built-in ones in their usual order, then the others
    /// as first seen) and every test with a record, in record order. A
    /// test no model applied to has no record, hence no row here, and a
    /// model that could not follow a test no `ERROR` cell.
    pub fn of_records(recs: &[&Record]) -> Layout {
        let mut models: Vec<String> = Vec::new();
        let mut rows: Vec<Row> = Vec::new();
        for r in recs {
            let batch = r.parameters.get("models").and_then(|m| m.as_array());
            for m in batch.into_iter().flatten().filter_map(|m| m.as_str()) {
                if !models.iter().any(|k| k == m) {
                    models.push(m.to_string());
                }
            }
            if !models.contains(&r.variant) {
                models.push(r.variant.clone());
            }
            if !rows.iter().any(|row| row.holds(r)) {
                rows.push(Row {
                    test: r.scenario.clone(),
                    file: param(r, "file").unwrap_or_default().to_string(),
                    condition: param(r, "condition").unwrap_or("-").to_string(),
                });
            }
        }
        // Records without the batch's models (saved by an older atomlab):
        // the built-in ones in their usual order, the cat models after them
        // as first seen (a stable sort).
        if !recs.iter().any(|r| r.parameters.contains_key("models")) {
            models.sort_by_key(|m| {
                MODEL_NAMES
                    .iter()
                    .position(|b| b == m)
                    .unwrap_or(MODEL_NAMES.len())
            });
        }
        Layout {
            models,
            rows,
            errors: Vec::new(),
        }
    }
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
        notes.push("BOUND: the test exceeds a fixed limit of this checker (64 events per execution, 2000 instructions per thread, 200,000 possible runs per test), which no option raises: split the test".into());
    }
    if words.iter().any(|w| w == "ERROR") {
        notes.push("ERROR: the model could not follow the test (see the message on stderr)".into());
    }
    let mut mappings: Vec<(&str, &str)> = Vec::new();
    for r in recs {
        if let Some(m) = r.parameters.get("mapping").and_then(|m| m.as_str()) {
            if !mappings.iter().any(|(a, b)| *a == r.variant && *b == m) {
                mappings.push((&r.variant, m));
            }
        }
    }
    for (model, m) in mappings {
        notes.push(format!("{model} judges C tests through {m}"));
    }
    let mut readings: Vec<(&str, &str)> = Vec::new();
    for r in recs {
        if let Some(m) = r.parameters.get("reading").and_then(|m| m.as_str()) {
            if !readings.iter().any(|(a, b)| *a == r.variant && *b == m) {
                readings.push((&r.variant, m));
            }
        }
    }
    for (model, m) in readings {
        notes.push(format!("{model}: {m}"));
    }
    Table {
        header,
        rows,
        notes,
    }
}

/// For each judged test, what `--explain` prints: the witness of the
/// condition and each forbidden outcome with its axiom and cycle.
pub fn write_explanations(out: &mut impl Write, checked: &[Checked]) -> io::Result<()> {
    for c in checked {
        explanations(out, &c.test, &c.outcomes)?;
    }
    Ok(())
}

fn explanations(out: &mut impl Write, test: &Test, res: &[ModelOutcome]) -> io::Result<()> {
    for r in res {
        let ModelOutcome::Done(d) = r else { continue };
        if let Some(w) = &d.witness {
            writeln!(
                out,
                "{} [{}]: the condition's proposition holds in an allowed execution: {w}",
                test.name, d.model
            )?;
        }
        // The explore engine prunes a forbidden partial execution before it
        // is complete, so it cannot say that nothing is forbidden, nor list
        // every forbidden outcome: it says so instead of guessing.
        let partial = "(the explore engine prunes forbidden executions before they are complete; --engine enumerate explains every forbidden outcome)";
        if d.forbidden.is_empty() {
            if d.explored {
                writeln!(
                    out,
                    "{} [{}]: no forbidden outcome among the executions explored {partial}",
                    test.name, d.model
                )?;
            } else if d.positive == 0 {
                // Every model here implies coherence (SC per location) and
                // RMW atomicity, so the engine never builds an execution
                // that breaks them: a state only such an execution gives is
                // absent from the candidates, not forbidden by an axiom.
                writeln!(
                    out,
                    "{} [{}]: no execution atomlab builds satisfies the condition, and none was forbidden by an axiom of the model: the condition's states need an execution that breaks coherence (SC per location: acyclic po-loc | rf | co | fr) or RMW atomicity, which every model requires and atomlab rules out while building executions, or values no thread writes",
                    test.name, d.model
                )?;
            } else {
                writeln!(
                    out,
                    "{} [{}]: no outcome of a candidate execution is forbidden by an axiom of the model (executions that break coherence or RMW atomicity are never built)",
                    test.name, d.model
                )?;
            }
            continue;
        }
        if d.explored {
            writeln!(
                out,
                "{} [{}]: forbidden outcomes among the executions explored {partial}",
                test.name, d.model
            )?;
        }
        writeln!(
            out,
            "{} [{}]: {} forbidden outcome(s)",
            test.name,
            d.model,
            d.forbidden.len()
        )?;
        for f in &d.forbidden {
            let state = herd::state_line(test, &d.vars, &f.state);
            writeln!(out, "  {state}  forbidden by {}:", f.violation.axiom)?;
            writeln!(out, "    {}", explain::cycle_text(&f.violation, &f.labels))?;
        }
    }
    Ok(())
}

/// The batch in herd7's log format, a block per test and model, each after
/// a `% Model NAME (atomlab)` line; with `explain`, each block followed by
/// its explanations.
pub fn write_herd(out: &mut impl Write, checked: &[Checked], explain: bool) -> io::Result<()> {
    for Checked { test, outcomes, .. } in checked {
        for r in outcomes {
            // herd7 logs have no model line; log readers (mcompare7,
            // litmus-agree) pass over lines starting with `%`, as in
            // litmus7's `% Results for` banners.
            match r {
                ModelOutcome::Done(d) => {
                    writeln!(out, "% Model {} (atomlab)", d.model)?;
                    write!(out, "{}", herd::log(test, d))?;
                    if explain {
                        explanations(out, test, std::slice::from_ref(r))?;
                    }
                    writeln!(out)?;
                }
                ModelOutcome::Timeout { model } => {
                    writeln!(
                        out,
                        "% Model {model} (atomlab)\nTest {} {}\nTIMEOUT [{model}]\n",
                        test.name,
                        test.condition.quantifier.kind()
                    )?;
                }
                ModelOutcome::NotApplicable { .. } => {}
                ModelOutcome::Failed { .. } => {}
            }
        }
    }
    Ok(())
}
