//! atomlab's results store: every run kept, so that `atomlab runs`, `show`,
//! `export`, `import`, `compare` and `report` can read it later.
//!
//! A run is one [`Report`] (the JSON document a subcommand writes with
//! `--json`) plus its [`RunMeta`]: id, start time, label, command line, git
//! commit and host. The store keeps the whole report as JSON, and its records
//! and metrics in normalized tables for queries. It lives in a SQLite file on
//! this machine (WAL mode, so two processes can save at once) or in a
//! PostgreSQL database for a team; [`Location::resolve`] says which.
//!
//! ```no_run
//! use atomlab_store::{Location, RunFilter, RunMeta, Store};
//! # fn run(report: atomlab_core::Report) -> Result<(), atomlab_store::StoreError> {
//! let mut store = Store::open(&Location::resolve(None)?)?;
//! let meta = RunMeta::new(&report.command, std::env::args().collect(), None);
//! store.save(&meta, &report)?;
//! for run in store.runs(&RunFilter { limit: 20, ..RunFilter::default() })? {
//!     println!("{} {} {} records", run.meta.id, run.meta.command, run.records);
//! }
//! let again = store.load(&meta.id[..10])?; // any unique prefix
//! # Ok(()) }
//! ```
//!
//! # Schema (store schema version 1)
//!
//! | table | columns |
//! |---|---|
//! | `atomlab_schema` | `version`, `atomlab_version` (one row: the store's layout version and the atomlab that set it) |
//! | `runs` | `id` (key), `started_unix`, `label`, `command`, `command_line` (JSON array), `git_commit`, `host`, `atomlab_version`, `schema_version`, `machine` (JSON), `report` (the whole report, JSON) |
//! | `records` | `run_id`, `idx` (key together), `capability`, `scenario`, `variant`, `parameters` (JSON object), `verdict` (`PASS`, `FAIL`… or null) |
//! | `metrics` | `run_id`, `record_idx`, `idx` (key together), `name`, `unit` (`ns_per_op`…), `median` (null without a summary), `samples` (JSON array) |
//! | `run_capabilities` | `capability`, `started_unix`, `run_id` (key together): the run's command and its records' capabilities, each once, so the newest runs of a capability are an index range |
//!
//! Indexes: `runs(started_unix, id)`, `runs(label, started_unix, id)`,
//! `runs(command, started_unix, id)`, `records(capability, run_id)`,
//! `run_capabilities(run_id)`. PostgreSQL has the same tables, in the first
//! schema of the connection's `search_path`.
//!
//! # What is refused, and what survives
//!
//! A store written by a newer atomlab (a higher `atomlab_schema.version`) is
//! refused and left as it is; so is a file that is not a SQLite database, a
//! damaged one, or a database holding tables of something else. An existing
//! file is first looked at read-only: its header, its size against the page
//! count the header gives, its schema and the first page of each table.
//! Damage deeper in the file, which only a full `PRAGMA quick_check` would
//! find (seconds per gigabyte, too slow for every command), shows as an error
//! when a query reaches it.
//!
//! Opened for saving ([`Store::open`]), a SQLite store is also checked for
//! what a save will need, before the caller measures anything: a file,
//! directory and file system it can write, at least 1 MiB free, and (for
//! files up to 8 MiB, about 1 ms per MiB) a clean `PRAGMA quick_check`.
//! Opened for reading ([`Store::open_existing`]), nothing is created: a
//! missing store is [`StoreError::NoStore`]. A location of an unknown
//! `scheme://` is refused, never taken for a file name.
//!
//! A save waits up to 10 minutes for another process's write lock (a large
//! import), telling [`Store::set_wait_notice`] once. Passwords never reach
//! the store: command lines are cut of them (`postgres://u:pw@…` →
//! `postgres://u@…`) when saved and again when read.
//!
//! SQLite runs in WAL mode with `synchronous = NORMAL`: a saved run survives
//! the process being killed at any moment; a power cut may lose the last
//! runs saved, never the file.
//!
//! # A run as a file
//!
//! [`document`] writes a run as one JSON document (`export`) or CSV, reads
//! such a document back refusing another schema version (`import`,
//! `compare FILE`), and keeps a run the store refused
//! ([`Store::save_or_keep`]) in a file to import later. [`side`] reads what
//! one side of a comparison names: a document, a label's runs or one run.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod document;
mod error;
mod location;
mod meta;
#[cfg(feature = "postgres")]
mod pg;
pub mod side;
mod sqlite;

use std::collections::BTreeMap;

use atomlab_core::Report;
use serde::{Deserialize, Serialize};

pub use error::StoreError;
pub use location::{redact_command_line, redact_secrets, Location};
pub use meta::{git_commit, new_run_id, RunMeta};

/// The layout version of the store's tables. A store with a higher version
/// was written by a newer atomlab and is refused; a lower one is migrated.
pub const STORE_SCHEMA_VERSION: u32 = 1;

/// Which runs [`Store::runs`] lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFilter {
    /// Only runs with this label.
    pub label: Option<String>,
    /// Only runs that have a record of this capability (`bench`, `check`…)
    /// or whose command is this (`suite`, `machine`).
    pub capability: Option<String>,
    /// At most this many runs, newest first; 0 for all.
    pub limit: usize,
}

/// One line of `atomlab runs`: a run's facts and a count of its records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The run.
    pub meta: RunMeta,
    /// How many records its report has.
    pub records: usize,
    /// How many records have each verdict, by the verdict's JSON name
    /// (`PASS`, `FAIL`, `NOT_OBSERVED`, `TIMEOUT`, `BOUND`); records without
    /// a verdict (measurements) are not counted here.
    pub verdicts: BTreeMap<String, usize>,
}

/// A run as stored: its facts and its whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    /// The run's facts.
    pub meta: RunMeta,
    /// The report, as saved.
    pub report: Report,
}

/// An open results store.
pub struct Store {
    backend: Box<dyn Backend>,
    name: String,
}

// A store can move to the thread that uses it (it is not shared: one
// connection each).
const _: fn() = || {
    fn send<T: Send>() {}
    send::<Store>();
};

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.name)
            .finish()
    }
}

/// The rows one run adds, computed once whatever the database.
pub(crate) struct RunRows<'a> {
    pub meta: &'a RunMeta,
    pub command_line: String,
    pub atomlab_version: &'a str,
    pub schema_version: u32,
    pub machine: String,
    pub report: String,
    pub records: Vec<RecordRow<'a>>,
    pub metrics: Vec<MetricRow<'a>>,
    /// The command and the records' capabilities, each once: the rows of
    /// `run_capabilities`.
    pub capabilities: Vec<&'a str>,
}

/// One row of `records`.
pub(crate) struct RecordRow<'a> {
    pub idx: i32,
    pub capability: &'a str,
    pub scenario: &'a str,
    pub variant: &'a str,
    pub parameters: String,
    pub verdict: Option<String>,
}

/// One row of `metrics`.
pub(crate) struct MetricRow<'a> {
    pub record_idx: i32,
    pub idx: i32,
    pub name: &'a str,
    pub unit: String,
    pub median: Option<f64>,
    pub samples: String,
}

/// What each database does; [`Store`] holds the logic they share.
pub(crate) trait Backend: Send {
    /// Inserts one run in one transaction.
    fn save(&mut self, rows: &RunRows<'_>) -> Result<(), StoreError>;
    /// Runs matching `filter`, newest first.
    fn runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError>;
    /// Up to `limit` ids starting with `prefix`, in id order.
    fn ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>, StoreError>;
    /// Up to `n` ids just below and `n` just above `id` in id order.
    fn ids_around(&self, id: &str, n: usize) -> Result<Vec<String>, StoreError>;
    /// The run with this exact id: its facts and its report's JSON.
    fn fetch(&self, id: &str) -> Result<Option<(RunMeta, String)>, StoreError>;
    /// The newest run with this label.
    fn latest_with_label(&self, label: &str) -> Result<Option<RunMeta>, StoreError>;
    /// Every run with this label, oldest first, with its report's JSON.
    fn with_label(&self, label: &str) -> Result<Vec<(RunMeta, String)>, StoreError>;
    /// How many runs are stored.
    fn count_runs(&self) -> Result<u64, StoreError>;
    /// Ids of the runs of `command` started in `[lo, hi]` (Unix seconds),
    /// in time order.
    fn ids_started_between(
        &self,
        lo: f64,
        hi: f64,
        command: &str,
    ) -> Result<Vec<String>, StoreError>;
    /// Sets what is called, once per save, when the save has to wait for
    /// another process's write lock.
    fn set_wait_notice(&mut self, _notice: WaitNotice) {}
}

/// Told, once per save, that the save waits for another process: the
/// store's name and how long the save will wait at most.
pub type WaitNotice = Box<dyn FnMut(&str, std::time::Duration) + Send>;

/// Whether a command may create the store or only reads an existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create the store when missing and check that it can be written
    /// (commands that save a run, `import`).
    Create,
    /// Open a store that exists; a missing one is an error, nothing is
    /// created or migrated into a new file (`runs`, `show`, `export`,
    /// `compare`, `report`).
    Existing,
}

/// What [`Store::import`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Imported {
    /// The run was saved with these facts.
    New(RunMeta),
    /// A run with the same report was already stored: nothing was saved.
    AlreadyStored(RunMeta),
}

/// A run [`Store::save_or_keep`] could not save.
#[derive(Debug)]
pub struct Unsaved {
    /// The run's id.
    pub id: String,
    /// Why the store refused it.
    pub error: StoreError,
    /// Where the run was kept instead, or why it could not be.
    pub kept: Result<std::path::PathBuf, document::KeepError>,
}

impl Store {
    /// Opens (creating when missing) the store at `location`, migrating an
    /// older store schema. Refuses, without changing anything, a store of a
    /// newer atomlab, a file that is not a SQLite database or is damaged,
    /// and a database of something else. A PostgreSQL server that cannot be
    /// reached is reported within about 5 s.
    ///
    /// A SQLite store is also checked for what a save needs: that the file,
    /// its directory and its file system can be written, that the file
    /// system has room, and (for stores up to 8 MiB) that every page is
    /// sound, so that a run is not measured only to be lost at save time.
    pub fn open(location: &Location) -> Result<Store, StoreError> {
        Store::open_with(location, OpenMode::Create)
    }

    /// Opens the store at `location` for reading: a store that does not
    /// exist is [`StoreError::NoStore`], and nothing is created.
    pub fn open_existing(location: &Location) -> Result<Store, StoreError> {
        Store::open_with(location, OpenMode::Existing)
    }

    /// [`Store::open`] or [`Store::open_existing`].
    pub fn open_with(location: &Location, mode: OpenMode) -> Result<Store, StoreError> {
        let name = location.to_string();
        let backend: Box<dyn Backend> = match location {
            Location::Sqlite(path) => Box::new(sqlite::Sqlite::open(path, mode)?),
            #[cfg(feature = "postgres")]
            Location::Postgres(url) => Box::new(pg::Pg::open(url, mode)?),
            #[cfg(not(feature = "postgres"))]
            Location::Postgres(_) => return Err(StoreError::PostgresUnsupported { url: name }),
        };
        Ok(Store { backend, name })
    }

    /// The store's path, or its URL without the password, for messages.
    pub fn location(&self) -> &str {
        &self.name
    }

    /// Saves one run: its facts, its whole report, and its records and
    /// metrics for queries, all in one transaction. Refuses a report of
    /// another `schema_version` than [`atomlab_core::SCHEMA_VERSION`], an
    /// id already stored, and samples JSON cannot hold (NaN, infinities).
    pub fn save(&mut self, meta: &RunMeta, report: &Report) -> Result<(), StoreError> {
        let rows = rows(meta, report)?;
        self.backend.save(&rows)
    }

    /// Saves one run like [`Store::save`], and when the store refuses it,
    /// keeps it in a file ([`document::keep_unsaved`]) so that nothing
    /// measured is lost. An id another process took in the same second is
    /// replaced by a new one (in `meta`), once.
    pub fn save_or_keep(
        &mut self,
        meta: &mut RunMeta,
        report: &Report,
    ) -> Result<(), Box<Unsaved>> {
        let mut result = self.save(meta, report);
        if let Err(StoreError::DuplicateRun { .. }) = result {
            // Another process took this id in the same second (a 2^-32
            // chance): a new id, once.
            meta.id = new_run_id(meta.started_unix);
            result = self.save(meta, report);
        }
        result.map_err(|error| {
            Box::new(Unsaved {
                id: meta.id.clone(),
                error,
                kept: document::keep_unsaved(meta, report),
            })
        })
    }

    /// Sets what is told when a save has to wait for another process's
    /// write lock (the CLI says so on stderr).
    pub fn set_wait_notice(&mut self, notice: WaitNotice) {
        self.backend.set_wait_notice(notice);
    }

    /// Saves a run exported elsewhere with the facts it was saved with
    /// there (`meta`: its id, start time, command line, host, git commit),
    /// or for a bare `--json` document (`meta` of `None`) with what the
    /// report tells: its command, and its first record's time as the start.
    ///
    /// Importing the same report again is not a second run: when a stored
    /// run has the same id, or started around the same time and holds an
    /// identical report, nothing is saved and that run is returned as
    /// [`Imported::AlreadyStored`]. Refuses a report of another
    /// `schema_version`.
    pub fn import(
        &mut self,
        report: Report,
        meta: Option<RunMeta>,
        label: Option<String>,
    ) -> Result<Imported, StoreError> {
        // The same report already stored: under its own id, or (a bare
        // document has none) started in the day before its first record.
        let first_record = report.records.iter().map(|r| r.unix_time).min();
        let last_record = report.records.iter().map(|r| r.unix_time).max();
        let mut candidates = Vec::new();
        if let Some(m) = &meta {
            meta::check_run_id(&m.id)?;
            candidates.push(m.id.clone());
        }
        if let (Some(first), Some(last)) = (first_record, last_record) {
            const DAY: f64 = 86_400.0;
            let lo = meta
                .as_ref()
                .map_or(first as f64 - DAY, |m| m.started_unix.min(first as f64))
                - 1.0;
            candidates.extend(self.backend.ids_started_between(
                lo,
                last as f64 + 1.0,
                &report.command,
            )?);
        }
        // Byte-equal to what a save would store, or (written by another
        // atomlab version) equal once read back.
        let wanted = to_json(&report, "the report")?;
        for id in candidates {
            if let Some((stored_meta, json)) = self.backend.fetch(&id)? {
                if json == wanted
                    || serde_json::from_str::<Report>(&json).is_ok_and(|r| r == report)
                {
                    return Ok(Imported::AlreadyStored(stored_meta));
                }
            }
        }
        let mut meta = match meta {
            Some(mut m) => {
                if label.is_some() {
                    m.label = label;
                }
                m
            }
            None => {
                let started_unix = first_record.map_or_else(
                    || RunMeta::without_commit("", Vec::new(), None).started_unix,
                    |t| t as f64,
                );
                RunMeta {
                    id: new_run_id(started_unix),
                    started_unix,
                    label,
                    command: report.command.clone(),
                    // Not known: the document does not say, and the
                    // importing command line is not the run's.
                    command_line: Vec::new(),
                    git_commit: None,
                    host: "unknown (imported --json document)".to_string(),
                }
            }
        };
        // The id is taken by another run (or, for a new id, drawn twice):
        // a new one from the same start time.
        let mut tries = 0;
        loop {
            match self.save(&meta, &report) {
                Err(StoreError::DuplicateRun { .. }) if tries < 8 => {
                    tries += 1;
                    meta.id = new_run_id(meta.started_unix);
                }
                Err(e) => return Err(e),
                Ok(()) => return Ok(Imported::New(meta)),
            }
        }
    }

    /// The runs matching `filter`, newest first.
    pub fn runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        self.backend.runs(filter)
    }

    /// The full id of the run that `id_or_prefix` names: the id itself or
    /// the only id that starts with it.
    pub fn resolve_id(&self, id_or_prefix: &str) -> Result<String, StoreError> {
        let q = id_or_prefix.trim();
        const SHOWN: usize = 10;
        let candidates = if q.is_empty() || q.len() > 64 {
            Vec::new()
        } else {
            self.backend.ids_with_prefix(q, SHOWN + 1)?
        };
        if candidates.iter().any(|c| c == q) {
            return Ok(q.to_string());
        }
        match candidates.len() {
            0 => Err(StoreError::UnknownRun {
                id: q.to_string(),
                store: self.name.clone(),
                hint: self.unknown_hint(q)?,
            }),
            1 => Ok(candidates.into_iter().next().unwrap_or_default()),
            n => Err(StoreError::AmbiguousRun {
                prefix: q.to_string(),
                store: self.name.clone(),
                candidates: candidates.into_iter().take(SHOWN).collect(),
                more: n > SHOWN,
            }),
        }
    }

    /// The ids nearest to `q` in id order, and the most recent ones.
    fn unknown_hint(&self, q: &str) -> Result<String, StoreError> {
        let near = if q.is_empty() {
            Vec::new()
        } else {
            self.backend.ids_around(q, 2)?
        };
        let recent: Vec<String> = self
            .backend
            .runs(&RunFilter {
                limit: 3,
                ..RunFilter::default()
            })?
            .into_iter()
            .map(|r| r.meta.id)
            .collect();
        Ok(if recent.is_empty() {
            " (the store is empty)".to_string()
        } else if near.is_empty() {
            format!(" (most recent: {})", recent.join(", "))
        } else {
            format!(
                " (nearest ids: {}; most recent: {})",
                near.join(", "),
                recent.join(", ")
            )
        })
    }

    /// The run that `id_or_prefix` names (see [`Store::resolve_id`]).
    pub fn load(&self, id_or_prefix: &str) -> Result<StoredRun, StoreError> {
        let id = self.resolve_id(id_or_prefix)?;
        let (meta, json) = self
            .backend
            .fetch(&id)?
            .ok_or_else(|| StoreError::UnknownRun {
                id: id.clone(),
                store: self.name.clone(),
                hint: " (it was removed while being read)".to_string(),
            })?;
        self.stored_run(meta, &json)
    }

    /// The newest run with this label.
    pub fn latest_with_label(&self, label: &str) -> Result<Option<RunMeta>, StoreError> {
        self.backend.latest_with_label(label)
    }

    /// Every run with this label, oldest first: the shards of one labelled
    /// measurement, which may come from several machines.
    pub fn runs_with_label(&self, label: &str) -> Result<Vec<StoredRun>, StoreError> {
        self.backend
            .with_label(label)?
            .into_iter()
            .map(|(meta, json)| self.stored_run(meta, &json))
            .collect()
    }

    /// How many runs are stored.
    pub fn count_runs(&self) -> Result<u64, StoreError> {
        self.backend.count_runs()
    }

    fn stored_run(&self, meta: RunMeta, json: &str) -> Result<StoredRun, StoreError> {
        let report = serde_json::from_str(json).map_err(|e| StoreError::BadStoredRun {
            id: meta.id.clone(),
            store: self.name.clone(),
            detail: format!("its report is not a report this atomlab reads: {e}"),
        })?;
        Ok(StoredRun { meta, report })
    }
}

/// A value's JSON name (`PASS`, `ns_per_op`).
fn json_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

fn to_json<T: Serialize + ?Sized>(value: &T, what: &str) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::BadReport {
        detail: format!("{what} cannot be written as JSON: {e}"),
    })
}

/// Checks a run and computes its rows.
fn rows<'a>(meta: &'a RunMeta, report: &'a Report) -> Result<RunRows<'a>, StoreError> {
    meta::check_run_id(&meta.id)?;
    if report.schema_version != atomlab_core::SCHEMA_VERSION {
        return Err(StoreError::SchemaVersion {
            found: report.schema_version,
            expected: atomlab_core::SCHEMA_VERSION,
        });
    }
    if let Some((index, r)) = report
        .records
        .iter()
        .enumerate()
        .find(|(_, r)| r.schema_version != atomlab_core::SCHEMA_VERSION)
    {
        return Err(StoreError::RecordSchemaVersion {
            index,
            what: format!("{}/{}/{}", r.capability, r.scenario, r.variant),
            found: r.schema_version,
            expected: atomlab_core::SCHEMA_VERSION,
        });
    }
    if !meta.started_unix.is_finite() {
        return Err(StoreError::BadReport {
            detail: format!("run {} has no valid start time", meta.id),
        });
    }
    let mut records = Vec::with_capacity(report.records.len());
    let mut metrics = Vec::new();
    for (i, r) in report.records.iter().enumerate() {
        let record_idx = i32::try_from(i).map_err(|_| StoreError::BadReport {
            detail: "more than 2^31 records".into(),
        })?;
        records.push(RecordRow {
            idx: record_idx,
            capability: &r.capability,
            scenario: &r.scenario,
            variant: &r.variant,
            parameters: to_json(&r.parameters, "a record's parameters")?,
            verdict: r.verdict.as_ref().map(json_name),
        });
        for (j, m) in r.metrics.iter().enumerate() {
            let summary_ok = m.summary.is_none_or(|s| {
                [s.median, s.min, s.max, s.mean, s.cv]
                    .iter()
                    .all(|v| v.is_finite())
            });
            if !summary_ok || m.samples.iter().any(|s| !s.is_finite()) {
                // JSON writes NaN as null, which would not read back as a
                // number: the run could never be loaded again.
                return Err(StoreError::BadReport {
                    detail: format!(
                        "record {i} ({}/{}/{}) metric `{}` has a NaN or infinite sample, \
                         which JSON cannot hold; leave such samples out of the metric",
                        r.capability, r.scenario, r.variant, m.name
                    ),
                });
            }
            metrics.push(MetricRow {
                record_idx,
                idx: j as i32,
                name: &m.name,
                unit: json_name(&m.unit),
                median: m.median(),
                samples: to_json(&m.samples, "a metric's samples")?,
            });
        }
    }
    let mut capabilities: Vec<&str> = report
        .records
        .iter()
        .map(|r| r.capability.as_str())
        .chain([meta.command.as_str()])
        .collect();
    capabilities.sort_unstable();
    capabilities.dedup();
    Ok(RunRows {
        meta,
        capabilities,
        // Never a password (`--store postgres://u:pw@…`), whoever made the
        // meta.
        command_line: to_json(
            &location::redact_command_line(&meta.command_line),
            "the command line",
        )?,
        atomlab_version: &report.atomlab_version,
        schema_version: report.schema_version,
        machine: to_json(&report.machine, "the machine")?,
        report: to_json(report, "the report")?,
        records,
        metrics,
    })
}

/// What a parameter of [`runs_query`] stands for.
pub(crate) enum QueryArg {
    Label,
    Capability,
    Limit,
}

/// The query behind [`Store::runs`], with the database's placeholder for
/// parameter `n` (1-based): the selected runs, newest first, each joined to
/// its count of records per verdict (one row per run and verdict).
///
/// A capability filter walks `run_capabilities` in time order, so finding
/// the newest runs of a rare capability reads no more than its own rows.
pub(crate) fn runs_query(
    filter: &RunFilter,
    placeholder: impl Fn(usize) -> String,
) -> (String, Vec<QueryArg>) {
    let mut args = Vec::new();
    let mut param = |arg| {
        args.push(arg);
        placeholder(args.len())
    };
    let columns = "runs.id, runs.started_unix, runs.label, runs.command, runs.command_line, \
                   runs.git_commit, runs.host";
    let select = match (&filter.label, &filter.capability) {
        (label, Some(_)) => {
            let cap = param(QueryArg::Capability);
            let label = label
                .as_ref()
                .map(|_| format!(" AND runs.label = {}", param(QueryArg::Label)))
                .unwrap_or_default();
            format!(
                "SELECT {columns} FROM run_capabilities rc JOIN runs ON runs.id = rc.run_id
                 WHERE rc.capability = {cap}{label}
                 ORDER BY rc.started_unix DESC, rc.run_id DESC LIMIT {}",
                param(QueryArg::Limit)
            )
        }
        (Some(_), None) => format!(
            "SELECT {columns} FROM runs WHERE runs.label = {}
             ORDER BY runs.started_unix DESC, runs.id DESC LIMIT {}",
            param(QueryArg::Label),
            param(QueryArg::Limit)
        ),
        (None, None) => format!(
            "SELECT {columns} FROM runs ORDER BY runs.started_unix DESC, runs.id DESC LIMIT {}",
            param(QueryArg::Limit)
        ),
    };
    let sql = format!(
        "WITH sel AS ({select})
         SELECT sel.*, c.verdict, c.n FROM sel LEFT JOIN
             (SELECT run_id, verdict, count(*) AS n FROM records
              WHERE run_id IN (SELECT id FROM sel) GROUP BY run_id, verdict) c
             ON c.run_id = sel.id
         ORDER BY sel.started_unix DESC, sel.id DESC"
    );
    (sql, args)
}

/// Adds one row's verdict count to a summary being built.
pub(crate) fn add_verdicts(summary: &mut RunSummary, verdict: Option<String>, n: i64) {
    let n = usize::try_from(n).unwrap_or(0);
    summary.records += n;
    if let Some(v) = verdict {
        *summary.verdicts.entry(v).or_insert(0) += n;
    }
}

/// A stored command line (a JSON list of strings) read back, without any
/// password an older atomlab stored in it.
pub(crate) fn parse_command_line(
    store: &str,
    id: &str,
    text: &str,
) -> Result<Vec<String>, StoreError> {
    serde_json::from_str::<Vec<String>>(text)
        .map(|line| location::redact_command_line(&line))
        .map_err(|e| StoreError::BadStoredRun {
            id: id.to_string(),
            store: store.to_string(),
            detail: format!("its command line is not a JSON list of strings: {e}"),
        })
}
