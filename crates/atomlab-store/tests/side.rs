//! What a side of `compare` names, read from a store or a file: a label's
//! runs pooled (empty shards left out, missing shards reported), one run,
//! a document, and a name that is none of them.

mod common;

use atomlab_core::{Record, Shard, SCHEMA_VERSION};
use atomlab_store::document::DocumentError;
use atomlab_store::side::{file_side, SideError};
use atomlab_store::{Location, Store};
use common::{meta, report, TempDir};

fn sharded(index: usize, count: usize, variant: &str) -> Vec<Record> {
    let mut r = report("bench", &[("bench", variant, None)]).records;
    r[0].param("shard", format!("{index}/{count}"));
    r
}

#[test]
fn a_label_pools_its_runs_without_empty_shards_and_names_the_missing_ones() {
    let dir = TempDir::new("side-label");
    let mut store = Store::open(&Location::Sqlite(dir.path().join("results.db"))).unwrap();
    let mut first = report("bench", &[]);
    first.records = sharded(0, 3, "ttas");
    let mut second = report("bench", &[]);
    second.records = sharded(2, 3, "mcs");
    // A shard with nothing to run: its record stands for no figure.
    let empty = Shard::parse("2/3").unwrap().empty_record("bench");
    second.records.push(empty);
    store
        .save(&meta("bench", Some("job"), 1_700_000_000.0), &first)
        .unwrap();
    store
        .save(&meta("bench", Some("job"), 1_700_000_001.0), &second)
        .unwrap();

    let found = store.side("job").unwrap();
    assert_eq!(found.side.name, "label job (2 runs)");
    let variants: Vec<&str> = found
        .side
        .records
        .iter()
        .map(|r| r.variant.as_str())
        .collect();
    assert_eq!(variants, ["ttas", "mcs"]);
    assert_eq!(found.side.partial, 0);
    assert_eq!(found.missing_shards.len(), 1);
    assert_eq!(found.missing_shards[0].capability, "bench");
    assert_eq!(found.missing_shards[0].count, 3);
    assert_eq!(found.missing_shards[0].missing, [1]);
}

#[test]
fn a_run_id_or_prefix_is_one_run_and_an_unknown_name_says_where_it_looked() {
    let dir = TempDir::new("side-run");
    let path = dir.path().join("results.db");
    let mut store = Store::open(&Location::Sqlite(path.clone())).unwrap();
    let r = report("bench", &[("bench", "ttas", None)]);
    let m = meta("bench", None, 1_700_000_000.0);
    store.save(&m, &r).unwrap();

    let found = store.side(&m.id[..12]).unwrap();
    assert_eq!(found.side.name, format!("run {}", m.id));
    assert_eq!(found.side.records, r.records);
    assert!(found.missing_shards.is_empty());

    let err = store.side("nightly").unwrap_err();
    assert!(
        matches!(err, SideError::Unknown { ref spec, .. } if spec == "nightly"),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with("'nightly' is neither a --json file, a label nor a run in "),
        "{text}"
    );
    assert!(text.contains(&path.display().to_string()), "{text}");
}

#[test]
fn a_file_side_is_its_document_and_other_names_are_not_files() {
    let dir = TempDir::new("side-file");
    let r = report("bench", &[("bench", "ttas", None), ("bench", "mcs", None)]);
    let path = dir.path().join("a.json");
    std::fs::write(&path, serde_json::to_vec(&r).unwrap()).unwrap();
    let spec = path.to_str().unwrap();
    let side = file_side(spec).unwrap().expect("a file");
    assert_eq!(side.name, spec);
    assert_eq!(side.records, r.records);

    assert!(file_side("some-label").unwrap().is_none());

    let mut future = serde_json::to_value(&r).unwrap();
    future["schema_version"] = (SCHEMA_VERSION + 1).into();
    std::fs::write(&path, serde_json::to_vec(&future).unwrap()).unwrap();
    assert!(matches!(
        file_side(spec),
        Err(DocumentError::OtherSchemaVersion { .. })
    ));
}

/// Issue 33: an unknown side named itself and the store twice ("'nightly'
/// is neither a --json file, a label nor a run in STORE: no run `nightly`
/// in STORE (nearest ids…)"), and an ambiguous prefix the same way. Each
/// is said once, with what helps (the nearest ids; the runs it matches).
#[test]
fn an_unknown_or_ambiguous_side_names_itself_and_the_store_once() {
    let dir = TempDir::new("side-once");
    let path = dir.path().join("results.db");
    let mut store = Store::open(&Location::Sqlite(path.clone())).unwrap();
    let r = report("bench", &[("bench", "ttas", None)]);
    let (a, b) = (
        meta("bench", None, 1_700_000_000.0),
        meta("bench", None, 1_700_000_001.0),
    );
    store.save(&a, &r).unwrap();
    store.save(&b, &r).unwrap();
    let once = |text: &str, what: &str| {
        assert_eq!(text.matches(what).count(), 1, "{what:?} in {text}");
    };
    let unknown = store.side("nightly").unwrap_err().to_string();
    once(&unknown, "nightly");
    once(&unknown, &path.display().to_string());
    assert!(
        unknown.starts_with("'nightly' is neither a --json file, a label nor a run in "),
        "{unknown}"
    );
    assert!(unknown.contains("nearest ids"), "{unknown}");
    assert!(
        unknown.ends_with("`atomlab runs` lists the stored runs"),
        "{unknown}"
    );
    // Both ids begin with the year they were made in.
    let prefix = &a.id[..4];
    assert!(b.id.starts_with(prefix));
    let ambiguous = store.side(prefix).unwrap_err().to_string();
    once(&ambiguous, &format!("'{prefix}'"));
    once(&ambiguous, &path.display().to_string());
    assert!(
        ambiguous.contains(&a.id) && ambiguous.contains(&b.id),
        "{ambiguous}"
    );
    assert!(ambiguous.contains("give more characters"), "{ambiguous}");
}
