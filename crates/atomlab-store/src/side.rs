//! What one side of `compare` names, read into its records: a `--json`
//! document file, every run of a label (pooled, so the shards of one job
//! are one side), or one run by id or unique prefix. Empty shards' records
//! stand for no figure and are left out; the shards a label lacks are
//! returned so the caller can warn that its figures cover part of the job.
//! The runs a side names ([`file_run`], [`Store::side_runs`]) are what a
//! report of the comparison shows beside it.

use std::path::Path;

use atomlab_core::shard::{self, Missing};
use atomlab_stats::ab::Side;

use crate::document::{read_document, read_run_document, DocumentError};
use crate::{RunMeta, Store, StoreError, StoredRun};

/// Why a label or run side could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SideError {
    /// The store failed while reading.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `spec` is no label in the store and no run it can load.
    #[error("{}", unknown_words(spec, store, error))]
    Unknown {
        /// What was given.
        spec: String,
        /// The store's path or URL.
        store: String,
        /// Why it is not a run (no such id, an ambiguous prefix…).
        error: Box<StoreError>,
    },
}

/// Why `spec` names no side in `store`: said once, with what the store's
/// own error adds (the nearest ids; the runs a prefix matches), not that
/// error after it, which names `spec` and `store` again.
fn unknown_words(spec: &str, store: &str, error: &StoreError) -> String {
    match error {
        StoreError::UnknownRun { hint, .. } => format!(
            "'{spec}' is neither a --json file, a label nor a run in {store}{hint}; `atomlab runs` lists the stored runs"
        ),
        StoreError::AmbiguousRun {
            candidates, more, ..
        } => format!(
            "'{spec}' is neither a --json file nor a label in {store}, and as the start of a run id it matches {}{} runs: {}{}; give more characters of the id",
            if *more { "more than " } else { "" },
            candidates.len(),
            candidates.join(", "),
            if *more { ", …" } else { "" }
        ),
        other => format!(
            "'{spec}' is neither a --json file nor a label in {store}, and reading it as a run failed: {other}"
        ),
    }
}

/// The side `spec` names when it is an existing file (a `--json` document,
/// read and version-checked), else `None`: it names a label or a run.
pub fn file_side(spec: &str) -> Result<Option<Side>, DocumentError> {
    let path = Path::new(spec);
    if !path.is_file() {
        return Ok(None);
    }
    Ok(Some(Side::new(spec, read_document(path)?.records)))
}

/// The run a side names when it is an existing file (a `--json` document):
/// its facts when it is an exported run, else a run named by the file
/// (`spec` its id), started at its first record; `None` when `spec` names
/// a label or a run.
pub fn file_run(spec: &str) -> Result<Option<StoredRun>, DocumentError> {
    let path = Path::new(spec);
    if !path.is_file() {
        return Ok(None);
    }
    let (report, meta) = read_run_document(path)?;
    let meta = meta.unwrap_or_else(|| RunMeta {
        id: spec.to_string(),
        started_unix: report
            .records
            .iter()
            .map(|r| r.unix_time)
            .min()
            .map_or(f64::NAN, |t| t as f64),
        label: None,
        command: report.command.clone(),
        // The document does not say.
        command_line: Vec::new(),
        git_commit: None,
        host: format!("unknown (--json document {spec})"),
    });
    Ok(Some(StoredRun { meta, report }))
}

/// A side read from the store, and the shards its label lacks.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreSide {
    /// The side.
    pub side: Side,
    /// The shards of the label's job that none of its runs holds (empty
    /// for a run, or a label whose job is whole or not sharded).
    pub missing_shards: Vec<Missing>,
}

impl Store {
    /// The runs `spec` names in this store, as [`Store::side`] reads
    /// them: every run of the label `spec` (oldest first), or else the run
    /// with that id or unique id prefix.
    pub fn side_runs(&self, spec: &str) -> Result<Vec<StoredRun>, SideError> {
        let by_label = self.runs_with_label(spec)?;
        if !by_label.is_empty() {
            return Ok(by_label);
        }
        self.load(spec)
            .map(|run| vec![run])
            .map_err(|error| SideError::Unknown {
                spec: spec.to_string(),
                store: self.location().to_string(),
                error: Box::new(error),
            })
    }

    /// The side `spec` names in this store: every run of the label `spec`
    /// (records pooled oldest first), or else the run with that id or
    /// unique id prefix; empty shards' records left out.
    pub fn side(&self, spec: &str) -> Result<StoreSide, SideError> {
        let by_label = self.runs_with_label(spec)?;
        if !by_label.is_empty() {
            let missing_shards = shard::missing(by_label.iter().flat_map(|r| &r.report.records));
            let n = by_label.len();
            let records = by_label
                .into_iter()
                .flat_map(|r| r.report.records)
                .filter(|r| !shard::is_empty_record(r))
                .collect();
            return Ok(StoreSide {
                side: Side::new(
                    format!("label {spec} ({n} run{})", if n == 1 { "" } else { "s" }),
                    records,
                ),
                missing_shards,
            });
        }
        match self.load(spec) {
            Ok(mut run) => {
                run.report.records.retain(|r| !shard::is_empty_record(r));
                Ok(StoreSide {
                    side: Side::new(format!("run {}", run.meta.id), run.report.records),
                    missing_shards: Vec::new(),
                })
            }
            Err(error) => Err(SideError::Unknown {
                spec: spec.to_string(),
                store: self.location().to_string(),
                error: Box::new(error),
            }),
        }
    }
}
