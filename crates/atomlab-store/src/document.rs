//! A run as a file: the exported JSON document (the `--json` report with the
//! run's facts under `run`), its CSV rows, reading such a document back
//! (refusing another schema version, naming it), and keeping a run that
//! could not be saved in a file that `import` takes later.
//!
//! The document's shape is `schema/atomlab.schema.json`; the CSV has one row
//! per metric of every record, its columns those of [`CSV_HEADER`].

use std::io::Write;
use std::path::{Path, PathBuf};

use atomlab_core::{Report, SCHEMA_VERSION};

use crate::{RunMeta, StoredRun};

/// The largest document [`read_run_document`] reads (1 GiB): a million
/// samples a metric is tens of MB.
pub const MAX_DOCUMENT_BYTES: u64 = 1 << 30;

/// Why a document could not be read. Every message names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentError {
    /// The file (or stdin) could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A directory, a device or a pipe given as a file.
    #[error(
        "{} is not a regular file: give an atomlab --json document (or - for stdin)",
        path.display()
    )]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// More than [`MAX_DOCUMENT_BYTES`].
    #[error(
        "{} is larger than {} MiB, the most atomlab reads of one document",
        path.display(),
        MAX_DOCUMENT_BYTES >> 20
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// Not JSON at all.
    #[error("{} is not JSON", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Where the JSON breaks.
        source: serde_json::Error,
    },
    /// JSON, but not an object.
    #[error(
        "{} is not an atomlab --json document: it is not a JSON object",
        path.display()
    )]
    NotAnObject {
        /// The file.
        path: PathBuf,
    },
    /// The document (or one of its records) has no `schema_version`.
    #[error(
        "{}{what} has no schema_version: it is not an atomlab --json document \
         (schema/atomlab.schema.json)",
        path.display()
    )]
    NoSchemaVersion {
        /// The file.
        path: PathBuf,
        /// Where in it: empty for the document, `: record 3 (bench/…)`.
        what: String,
    },
    /// A `schema_version` other than this atomlab's.
    #[error(
        "{}{what} is atomlab JSON of schema_version {found}; this atomlab reads \
         schema_version {SCHEMA_VERSION}: re-run the command with this atomlab, or use \
         the atomlab that wrote it",
        path.display()
    )]
    OtherSchemaVersion {
        /// The file.
        path: PathBuf,
        /// Where in it: empty for the document, `: record 3 (bench/…)`.
        what: String,
        /// The version it has.
        found: u32,
    },
    /// A `schema_version` that is not a whole number.
    #[error(
        "{}{what} has an invalid schema_version: {found}; expected the whole number \
         {SCHEMA_VERSION}",
        path.display()
    )]
    InvalidSchemaVersion {
        /// The file.
        path: PathBuf,
        /// Where in it: empty for the document, `: record 3 (bench/…)`.
        what: String,
        /// The value and what it is: `"2" (a string)`.
        found: String,
    },
    /// The right version, the wrong shape.
    #[error(
        "{} does not have the shape of an atomlab --json document (schema/atomlab.schema.json)",
        path.display()
    )]
    Shape {
        /// The file.
        path: PathBuf,
        /// What does not fit.
        source: serde_json::Error,
    },
    /// The run's facts under `run` do not parse.
    #[error(
        "{}: its `run` (the run's facts, as `atomlab export` writes them) is malformed",
        path.display()
    )]
    RunFacts {
        /// The file.
        path: PathBuf,
        /// What does not fit.
        source: serde_json::Error,
    },
}

/// Reads a --json document, refusing another schema version.
pub fn read_document(path: &Path) -> Result<Report, DocumentError> {
    Ok(read_run_document(path)?.0)
}

/// What a `schema_version` value is, for a message: `"2" (a string)`.
fn describe_version(v: &serde_json::Value) -> String {
    let kind = match v {
        serde_json::Value::String(_) => "a string",
        // Numbers beyond 64 bits arrive as floats.
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() != 0.0 => "not a whole number",
            Some(f) if f < 0.0 => "negative",
            _ => "too large",
        },
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        _ => "not a number",
    };
    let mut text = v.to_string();
    if text.len() > 40 {
        text = format!("{}…", text.chars().take(40).collect::<String>());
    }
    format!("{text} ({kind})")
}

/// Checks one `schema_version` field: present, a whole number, this
/// atomlab's. `what` names where it is (`` ``, `: record 3 (bench/…)`).
fn check_version(
    path: &Path,
    what: &str,
    value: Option<&serde_json::Value>,
) -> Result<(), DocumentError> {
    let (path, what) = (path.to_path_buf(), what.to_string());
    match value {
        None => Err(DocumentError::NoSchemaVersion { path, what }),
        Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(SCHEMA_VERSION) => Ok(()),
            Some(found) => Err(DocumentError::OtherSchemaVersion { path, what, found }),
            None => Err(DocumentError::InvalidSchemaVersion {
                path,
                what,
                found: describe_version(v),
            }),
        },
    }
}

/// Reads a --json document (or an `export`ed run, with its facts under
/// `run`) from `path`, or stdin for `-`, refusing a document or a record of
/// another schema version.
pub fn read_run_document(path: &Path) -> Result<(Report, Option<RunMeta>), DocumentError> {
    let read_err = |source| DocumentError::Read {
        path: path.to_path_buf(),
        source,
    };
    let too_large = || DocumentError::TooLarge {
        path: path.to_path_buf(),
    };
    // At most MAX_DOCUMENT_BYTES, from a file or stdin: a device or an
    // endless pipe is refused, not read until memory runs out.
    let mut bytes = Vec::new();
    let read = if path.as_os_str() == "-" {
        std::io::Read::read_to_end(
            &mut std::io::Read::take(std::io::stdin(), MAX_DOCUMENT_BYTES + 1),
            &mut bytes,
        )
    } else {
        let meta = std::fs::metadata(path).map_err(read_err)?;
        if !meta.is_file() {
            return Err(DocumentError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        if meta.len() > MAX_DOCUMENT_BYTES {
            return Err(too_large());
        }
        std::fs::File::open(path).and_then(|f| {
            std::io::Read::read_to_end(
                &mut std::io::Read::take(f, MAX_DOCUMENT_BYTES + 1),
                &mut bytes,
            )
        })
    };
    read.map_err(read_err)?;
    if bytes.len() as u64 > MAX_DOCUMENT_BYTES {
        return Err(too_large());
    }
    let mut value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|source| DocumentError::NotJson {
            path: path.to_path_buf(),
            source,
        })?;
    let Some(obj) = value.as_object_mut() else {
        return Err(DocumentError::NotAnObject {
            path: path.to_path_buf(),
        });
    };
    check_version(path, "", obj.get("schema_version"))?;
    if let Some(records) = obj.get("records").and_then(|r| r.as_array()) {
        for (i, r) in records.iter().enumerate() {
            let name = |k: &str| r.get(k).and_then(|v| v.as_str()).unwrap_or("?").to_string();
            let what = format!(
                ": record {i} ({}/{}/{})",
                name("capability"),
                name("scenario"),
                name("variant")
            );
            check_version(path, &what, r.get("schema_version"))?;
        }
    }
    let run = obj.remove("run");
    let report: Report = serde_json::from_value(value).map_err(|source| DocumentError::Shape {
        path: path.to_path_buf(),
        source,
    })?;
    let meta = run
        .map(serde_json::from_value::<RunMeta>)
        .transpose()
        .map_err(|source| DocumentError::RunFacts {
            path: path.to_path_buf(),
            source,
        })?;
    Ok((report, meta))
}

/// The run as one JSON document: the `--json` report with the run's facts
/// under `run`, which `import` keeps.
pub fn document(meta: &RunMeta, report: &Report) -> Result<serde_json::Value, serde_json::Error> {
    let mut v = serde_json::to_value(report)?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert("run".to_string(), serde_json::to_value(meta)?);
    }
    Ok(v)
}

/// Why a run could not be kept in a file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeepError {
    /// The run did not become JSON (a value JSON cannot hold).
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
    /// The file could not be written (the last directory tried).
    #[error("cannot write {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Writes the run's [`document`] to a new `atomlab-unsaved-ID.json` in the
/// current directory, else in the temporary directory, and returns its
/// absolute path. An existing file is never overwritten.
pub fn keep_unsaved(meta: &RunMeta, report: &Report) -> Result<PathBuf, KeepError> {
    let text = serde_json::to_vec_pretty(&document(meta, report)?)?;
    let name = format!("atomlab-unsaved-{}.json", meta.id);
    let mut last = None;
    for dir in [PathBuf::from("."), std::env::temp_dir()] {
        let path = dir.join(&name);
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut f| {
                f.write_all(&text)?;
                f.sync_all()
            });
        match written {
            Ok(()) => return Ok(std::path::absolute(&path).unwrap_or(path)),
            Err(source) => {
                let _ = std::fs::remove_file(&path);
                last = Some(KeepError::Write { path, source });
            }
        }
    }
    Err(last.expect("two directories were tried"))
}

/// The CSV export's columns.
pub const CSV_HEADER: [&str; 18] = [
    "run",
    "label",
    "host",
    "capability",
    "scenario",
    "variant",
    "parameters",
    "verdict",
    "metric",
    "unit",
    "source",
    "n",
    "median",
    "min",
    "max",
    "mean",
    "cv",
    "samples",
];

/// A CSV writer's error as the I/O error it is (a closed pipe stays a
/// closed pipe for the caller to recognise); anything else, which writing
/// strings does not give, as an error of its own kind.
fn io_error(e: csv::Error) -> std::io::Error {
    if !e.is_io_error() {
        return std::io::Error::other(e);
    }
    match e.into_kind() {
        csv::ErrorKind::Io(io) => io,
        // is_io_error() said it is one.
        other => std::io::Error::other(format!("{other:?}")),
    }
}

/// The CSV export: [`CSV_HEADER`], then one row per metric of every record
/// (summary cells empty for a metric without a summary, samples
/// space-separated). Fails only as writing `out` fails.
pub fn write_csv(stored: &StoredRun, out: impl Write) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(CSV_HEADER).map_err(io_error)?;
    let label = stored.meta.label.clone().unwrap_or_default();
    for r in &stored.report.records {
        let verdict = r
            .verdict
            .map(|v| {
                serde_json::to_value(v)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        let params = serde_json::to_string(&r.parameters)?;
        for m in &r.metrics {
            let s = m.summary;
            let f = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
            let source = match &m.source {
                atomlab_core::Source::Pmu(e) => format!("pmu:{e}"),
                other => serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v["kind"].as_str().map(String::from))
                    .unwrap_or_default(),
            };
            w.write_record([
                stored.meta.id.as_str(),
                &label,
                &stored.meta.host,
                &r.capability,
                &r.scenario,
                &r.variant,
                &params,
                &verdict,
                &m.name,
                serde_json::to_value(m.unit)?.as_str().unwrap_or_default(),
                &source,
                &s.map(|s| s.n.to_string()).unwrap_or_default(),
                &f(s.map(|s| s.median)),
                &f(s.map(|s| s.min)),
                &f(s.map(|s| s.max)),
                &f(s.map(|s| s.mean)),
                &f(s.map(|s| s.cv)),
                &m.samples
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
            ])
            .map_err(io_error)?;
        }
    }
    w.flush()?;
    Ok(())
}
