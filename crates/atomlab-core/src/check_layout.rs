//! What the side-by-side table of check records (tests × models) shows
//! besides its records' cells: its columns, its rows and the cells where
//! a model could not follow a test. atomlab-check gives it for a live
//! batch; saved records give it as far as they go; atomlab-report draws
//! the table from it and the records.

use crate::Record;

/// What the table shows besides its records' cells: its columns, its rows
/// and the cells where a model could not follow the test. A batch knows
/// them (atomlab-check's `Batch::layout`); saved records give them as far
/// as the records go ([`Layout::of_records`]).
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
    /// Whether `r` is a record of this row's test (a record without a
    /// file, as an imported one may be, is of the row without one).
    pub fn holds(&self, r: &Record) -> bool {
        r.scenario == self.test && param(r, "file").unwrap_or_default() == self.file
    }
}

/// What tells one row from another: a record's test name and file (a
/// record without a file is of the row without one), as [`Row::holds`]
/// compares them. Tables of thousands of tests look rows up by it rather
/// than comparing every record with every row.
pub fn row_key(r: &Record) -> (&str, &str) {
    (r.scenario.as_str(), param(r, "file").unwrap_or_default())
}

fn param<'r>(r: &'r Record, name: &str) -> Option<&'r str> {
    r.parameters.get(name).and_then(|v| v.as_str())
}

impl Layout {
    /// The layout records alone give: the models of their batch (their
    /// `models` parameter; for records without it, saved before 2 December
    /// 2026, every model that judged some test, as first seen) and every
    /// test with a record, in record order. A
    /// test no model applied to has no record, hence no row here, and a
    /// model that could not follow a test no `ERROR` cell.
    pub fn of_records(recs: &[&Record]) -> Layout {
        let mut models: Vec<String> = Vec::new();
        let mut rows: Vec<Row> = Vec::new();
        let mut seen: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
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
            if seen.insert(row_key(r)) {
                rows.push(Row {
                    test: r.scenario.clone(),
                    file: row_key(r).1.to_string(),
                    condition: param(r, "condition").unwrap_or("-").to_string(),
                });
            }
        }
        Layout {
            models,
            rows,
            errors: Vec::new(),
        }
    }
}
