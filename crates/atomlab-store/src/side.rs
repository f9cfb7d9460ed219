//! What one side of `compare` names, read into its records: a `--json`
//! document file, every run of a label (pooled, so the shards of one job
//! are one side), or one run by id or unique prefix. Empty shards' records
//! stand for no figure and are left out; the shards a label lacks are
//! returned so the caller can warn that its figures cover part of the job.

use std::path::Path;

use atomlab_core::shard::{self, Missing};
use atomlab_stats::ab::Side;

use crate::document::{read_document, DocumentError};
use crate::{Store, StoreError};

/// Why a label or run side could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SideError {
    /// The store failed while reading.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `spec` is no label in the store and no run it can load.
    #[error("'{spec}' is neither a --json file, a label nor a run in {store}: {error}")]
    Unknown {
        /// What was given.
        spec: String,
        /// The store's path or URL.
        store: String,
        /// Why it is not a run (no such id, an ambiguous prefix…).
        error: Box<StoreError>,
    },
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
