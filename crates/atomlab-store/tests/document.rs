//! A run as a file: the exported document read back, documents of another
//! schema version refused with the version named, the CSV export's rows,
//! and a save that retries a taken id or keeps the run in a file.

mod common;

use std::path::PathBuf;

use atomlab_core::{Verdict, SCHEMA_VERSION};
use atomlab_store::document::{document, read_run_document, write_csv, DocumentError, CSV_HEADER};
use atomlab_store::{Location, RunFilter, Store, StoreError, StoredRun};
use common::{meta, report, TempDir};

fn write_json(dir: &TempDir, name: &str, value: &serde_json::Value) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, serde_json::to_vec(value).unwrap()).unwrap();
    path
}

#[test]
fn an_exported_document_reads_back_with_its_facts() {
    let dir = TempDir::new("doc-round-trip");
    let r = report(
        "bench",
        &[
            ("bench", "ttas", None),
            ("check", "sc", Some(Verdict::Pass)),
        ],
    );
    let m = meta("bench", Some("nightly"), 1_700_000_000.5);
    let path = write_json(&dir, "run.json", &document(&m, &r).unwrap());
    let (back, facts) = read_run_document(&path).unwrap();
    assert_eq!(back.records, r.records);
    assert_eq!(facts, Some(m));
}

#[test]
fn a_document_of_a_future_schema_version_is_refused_naming_it() {
    let dir = TempDir::new("doc-future");
    let mut v = serde_json::to_value(report("bench", &[("bench", "ttas", None)])).unwrap();
    v["schema_version"] = (SCHEMA_VERSION + 1).into();
    let path = write_json(&dir, "future.json", &v);
    let err = read_run_document(&path).unwrap_err();
    assert!(
        matches!(&err, DocumentError::OtherSchemaVersion { found, what, .. }
            if *found == SCHEMA_VERSION + 1 && what.is_empty()),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!("schema_version {}", SCHEMA_VERSION + 1)),
        "{text}"
    );
    assert!(text.contains(&path.display().to_string()), "{text}");
}

#[test]
fn a_record_of_another_schema_version_is_refused_naming_the_record() {
    let dir = TempDir::new("doc-record");
    let mut v = serde_json::to_value(report(
        "bench",
        &[("bench", "ttas", None), ("bench", "mcs", None)],
    ))
    .unwrap();
    v["records"][1]["schema_version"] = "2".into();
    let path = write_json(&dir, "record.json", &v);
    let err = read_run_document(&path).unwrap_err();
    match &err {
        DocumentError::InvalidSchemaVersion { what, found, .. } => {
            assert_eq!(what, ": record 1 (bench/counter/mcs)");
            assert_eq!(found, "\"2\" (a string)");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_document_without_a_version_or_not_an_object_is_refused() {
    let dir = TempDir::new("doc-shape");
    let path = write_json(&dir, "array.json", &serde_json::json!([1, 2]));
    assert!(matches!(
        read_run_document(&path),
        Err(DocumentError::NotAnObject { .. })
    ));
    let path = write_json(&dir, "bare.json", &serde_json::json!({"records": []}));
    assert!(matches!(
        read_run_document(&path),
        Err(DocumentError::NoSchemaVersion { .. })
    ));
    assert!(matches!(
        read_run_document(dir.path()),
        Err(DocumentError::NotAFile { .. })
    ));
}

#[test]
fn the_csv_of_a_stored_run_has_the_header_and_a_row_per_metric() {
    let r = report(
        "bench",
        &[
            ("bench", "ttas", None),
            ("check", "sc", Some(Verdict::Fail)),
        ],
    );
    let m = meta("bench", Some("nightly"), 1_700_000_000.0);
    let stored = StoredRun {
        meta: m.clone(),
        report: r.clone(),
    };
    let mut out = Vec::new();
    write_csv(&stored, &mut out).unwrap();
    let mut rows = csv::Reader::from_reader(out.as_slice());
    let header: Vec<String> = rows.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header, CSV_HEADER);
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    let metrics: usize = r.records.iter().map(|r| r.metrics.len()).sum();
    assert_eq!(rows.len(), metrics);
    let col = |name: &str| CSV_HEADER.iter().position(|h| *h == name).unwrap();
    let mut i = 0;
    for rec in &r.records {
        for metric in &rec.metrics {
            let row = &rows[i];
            assert_eq!(&row[col("run")], m.id);
            assert_eq!(&row[col("label")], "nightly");
            assert_eq!(&row[col("capability")], rec.capability);
            assert_eq!(&row[col("variant")], rec.variant);
            assert_eq!(&row[col("metric")], metric.name);
            let samples: Vec<String> = metric.samples.iter().map(|v| v.to_string()).collect();
            assert_eq!(&row[col("samples")], samples.join(" "));
            i += 1;
        }
    }
    let verdicts: Vec<&str> = rows.iter().map(|row| &row[col("verdict")]).collect();
    assert!(
        verdicts.contains(&"FAIL") && verdicts.contains(&""),
        "{verdicts:?}"
    );
    assert!(rows.iter().any(|row| &row[col("source")] == "pmu:r6e"));
}

/// A writer whose reader has gone (`atomlab export … | head`).
struct ClosedPipe;

impl std::io::Write for ClosedPipe {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
}

/// The CLI ends quietly on a closed pipe only if it sees the I/O error
/// itself, however many rows were written before it.
#[test]
fn a_closed_pipe_under_the_csv_is_the_io_error_itself() {
    let many: Vec<(&str, &str, Option<Verdict>)> = vec![("bench", "ttas", None); 300];
    for records in [&many[..1], &many[..]] {
        let stored = StoredRun {
            meta: meta("bench", None, 1_700_000_000.0),
            report: report("bench", records),
        };
        let err = write_csv(&stored, ClosedPipe).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err:?}");
        assert!(err.get_ref().is_none(), "wrapped: {err:?}");
    }
}

/// Removes a file when dropped (a kept run written in the test's
/// directory).
struct Remove(PathBuf);

impl Drop for Remove {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_taken_id_is_replaced_once_and_the_run_saved() {
    let dir = TempDir::new("doc-retry");
    let mut store = Store::open(&Location::Sqlite(dir.path().join("results.db"))).unwrap();
    let r = report("bench", &[("bench", "ttas", None)]);
    let mut m = meta("bench", None, 1_700_000_000.0);
    store.save(&m, &r).unwrap();
    let first = m.id.clone();
    store.save_or_keep(&mut m, &r).unwrap();
    assert_ne!(m.id, first);
    let ids: Vec<String> = store
        .runs(&RunFilter::default())
        .unwrap()
        .into_iter()
        .map(|s| s.meta.id)
        .collect();
    assert!(ids.contains(&first) && ids.contains(&m.id), "{ids:?}");
}

#[test]
fn a_refused_run_is_kept_in_a_file_that_reads_back() {
    let dir = TempDir::new("doc-keep");
    let mut store = Store::open(&Location::Sqlite(dir.path().join("results.db"))).unwrap();
    let mut r = report("bench", &[("bench", "ttas", None)]);
    // A report of another schema version: the store refuses it.
    r.schema_version = SCHEMA_VERSION + 1;
    let mut m = meta("bench", None, 1_700_000_000.0);
    let unsaved = store.save_or_keep(&mut m, &r).unwrap_err();
    assert_eq!(unsaved.id, m.id);
    assert!(!matches!(unsaved.error, StoreError::DuplicateRun { .. }));
    let path = unsaved.kept.expect("kept in a file");
    let _cleanup = Remove(path.clone());
    assert!(path.is_absolute(), "{}", path.display());
    assert_eq!(
        path.file_name().unwrap().to_string_lossy(),
        format!("atomlab-unsaved-{}.json", m.id)
    );
    let text: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(text, document(&m, &r).unwrap());
    assert!(store.runs(&RunFilter::default()).unwrap().is_empty());
}
