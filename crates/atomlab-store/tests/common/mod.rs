//! What the SQLite and PostgreSQL tests share: reports to store and checks
//! that must hold whatever the database.
#![allow(dead_code)]

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};

use atomlab_core::{FlagKind, InputError, Machine, Metric, Record, Report, Source, Unit, Verdict};
use atomlab_store::{
    new_run_id, Imported, Location, RunFilter, RunMeta, Store, StoreError, StoredRun,
};

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "atomlab-store-{tag}-{}-{:016x}",
            std::process::id(),
            random_u64()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn random_u64() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos(),
    );
    h.finish()
}

/// A report of `command` with one record per `(capability, variant,
/// verdict)`, each with parameters, two metrics (one with a PMU source),
/// notes, a flag and a structured detail, so every part of the JSON is
/// exercised.
pub fn report(command: &str, records: &[(&str, &str, Option<Verdict>)]) -> Report {
    let records = records
        .iter()
        .enumerate()
        .map(|(i, (capability, variant, verdict))| {
            let mut r = Record::new(capability, "counter", variant);
            r.param("threads", 2)
                .param("ordering", "seq_cst")
                .param("pinned", true)
                .param("duration_s", 0.25);
            r.metrics.push(Metric::new(
                "ns_per_op",
                Unit::NanosPerOp,
                Source::ClockGettime,
                vec![3.1 + i as f64, 3.3, 2.9, 0.1 + 0.2],
            ));
            r.metrics.push(Metric::new(
                "event:r6e",
                Unit::EventsPerOp,
                Source::Pmu("r6e".into()),
                vec![1e-9, 12_345.678_901_234_567],
            ));
            r.metrics.push(Metric::new(
                "empty",
                Unit::Count,
                Source::Derived,
                Vec::new(),
            ));
            r.verdict = *verdict;
            r.notes.push(format!("note {i}"));
            r.flag(FlagKind::RunsExcluded, Some("ns_per_op"), "run 3 excluded");
            r.detail = Some(serde_json::json!({ "allowed": [[0, 1], [1, 0]], "i": i }));
            r
        })
        .collect();
    let mut report = Report::new(command, Machine::detect(), records);
    report.notes.push("a note about the run".into());
    report.errors.push(InputError {
        input: "tests/x.litmus".into(),
        line: Some(3),
        column: Some(7),
        message: "unsupported".into(),
    });
    report
}

/// A run's facts, started at `started_unix`.
pub fn meta(command: &str, label: Option<&str>, started_unix: f64) -> RunMeta {
    let mut m = RunMeta::new(
        command,
        vec!["atomlab".into(), command.into(), "--json".into()],
        label.map(str::to_string),
    );
    m.started_unix = started_unix;
    m
}

/// Save, load by id and by prefix, unknown and ambiguous ids, duplicates,
/// other schema versions, imports, NaN samples.
pub fn check_round_trip(loc: &Location) {
    let mut store = Store::open(loc).unwrap();
    assert_eq!(store.count_runs().unwrap(), 0);
    let rep = report(
        "check",
        &[
            ("check", "sb", Some(Verdict::Pass)),
            ("check", "mp", Some(Verdict::Fail)),
            ("bench", "fetch_add", None),
        ],
    );
    let m = RunMeta::new(
        "check",
        vec!["atomlab".into(), "check".into()],
        Some("base".into()),
    );
    store.save(&m, &rep).unwrap();
    assert_eq!(store.count_runs().unwrap(), 1);
    let want = StoredRun {
        meta: m.clone(),
        report: rep.clone(),
    };
    assert_eq!(store.load(&m.id).unwrap(), want);
    assert_eq!(store.load(&m.id[..10]).unwrap(), want);
    assert_eq!(store.load("2").unwrap(), want);
    // A new connection reads the same.
    drop(store);
    let mut store = Store::open(loc).unwrap();
    assert_eq!(store.load(&m.id).unwrap(), want);

    match store.load("19990101") {
        Err(e @ StoreError::UnknownRun { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&loc.to_string()), "{msg}");
            assert!(
                msg.contains(&m.id),
                "the hint lists the runs there are: {msg}"
            );
        }
        other => panic!("expected UnknownRun, got {other:?}"),
    }

    match store.save(&m, &rep) {
        Err(StoreError::DuplicateRun { id, .. }) => assert_eq!(id, m.id),
        other => panic!("expected DuplicateRun, got {other:?}"),
    }

    let m2 = RunMeta::new("check", vec![], None);
    store.save(&m2, &rep).unwrap();
    match store.load("20") {
        Err(e @ StoreError::AmbiguousRun { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&m.id) && msg.contains(&m2.id), "{msg}");
        }
        other => panic!("expected AmbiguousRun, got {other:?}"),
    }

    let mut old = rep.clone();
    old.schema_version = 1;
    match store.import(old.clone(), Some(m.clone()), None) {
        Err(e @ StoreError::SchemaVersion { found: 1, .. }) => {
            assert!(e.to_string().contains("schema_version 1"), "{e}")
        }
        other => panic!("expected SchemaVersion, got {other:?}"),
    }
    assert!(matches!(
        store.save(&RunMeta::new("check", vec![], None), &old),
        Err(StoreError::SchemaVersion { .. })
    ));
    // A record of another schema version, in a report of this one.
    let mut mixed = rep.clone();
    mixed.records[0].schema_version = 99;
    match store.save(&RunMeta::new("check", vec![], None), &mixed) {
        Err(e @ StoreError::RecordSchemaVersion { found: 99, .. }) => {
            assert!(e.to_string().contains("record 0"), "{e}")
        }
        other => panic!("expected RecordSchemaVersion, got {other:?}"),
    }

    // The run itself again: nothing is saved.
    match store.import(rep.clone(), Some(m.clone()), None).unwrap() {
        Imported::AlreadyStored(s) => assert_eq!(s, m),
        other => panic!("expected AlreadyStored, got {other:?}"),
    }
    // Its bare --json document (no run facts): found by its report.
    match store.import(rep.clone(), None, None).unwrap() {
        Imported::AlreadyStored(s) => assert!(s.id == m.id || s.id == m2.id, "{s:?}"),
        other => panic!("expected AlreadyStored, got {other:?}"),
    }
    // A run saved elsewhere keeps its id, time, command line and host.
    let mut other_rep = rep.clone();
    other_rep.records[0].metrics[0].samples.push(7.0);
    let mut elsewhere = meta("check", None, m.started_unix - 3_600.0);
    elsewhere.id = new_run_id(elsewhere.started_unix);
    elsewhere.host = "elsewhere".into();
    match store
        .import(other_rep.clone(), Some(elsewhere.clone()), None)
        .unwrap()
    {
        Imported::New(s) => assert_eq!(s, elsewhere),
        other => panic!("expected New, got {other:?}"),
    }
    let loaded = store.load(&elsewhere.id).unwrap();
    assert_eq!(
        (loaded.meta, loaded.report),
        (elsewhere.clone(), other_rep.clone())
    );
    assert!(matches!(
        store
            .import(other_rep.clone(), Some(elsewhere.clone()), None)
            .unwrap(),
        Imported::AlreadyStored(_)
    ));
    // A bare document: its command and its first record's time, once.
    let mut bare = rep.clone();
    bare.records[0].metrics[0].samples.push(8.0);
    let first = bare.records.iter().map(|r| r.unix_time).min().unwrap();
    let Imported::New(b) = store.import(bare.clone(), None, Some("l".into())).unwrap() else {
        panic!("a new report was not imported")
    };
    assert_eq!(b.started_unix, first as f64);
    assert_eq!(b.command, bare.command);
    assert_eq!(b.label.as_deref(), Some("l"));
    assert!(b.command_line.is_empty(), "{b:?}");
    assert!(matches!(
        store.import(bare.clone(), None, None).unwrap(),
        Imported::AlreadyStored(_)
    ));

    let mut nan = rep.clone();
    nan.records[0].metrics[0].samples.push(f64::NAN);
    match store.save(&RunMeta::new("check", vec![], None), &nan) {
        Err(e @ StoreError::BadReport { .. }) => {
            assert!(e.to_string().contains("ns_per_op"), "{e}")
        }
        other => panic!("expected BadReport, got {other:?}"),
    }
    let mut bad_id = RunMeta::new("check", vec![], None);
    bad_id.id = "no spaces".into();
    assert!(matches!(
        store.save(&bad_id, &rep),
        Err(StoreError::InvalidRunId { .. })
    ));
    assert_eq!(store.count_runs().unwrap(), 4);
}

/// `runs` by label, by capability or command, with a limit, newest first;
/// `latest_with_label` and `runs_with_label`.
pub fn check_filters(loc: &Location) {
    let mut store = Store::open(loc).unwrap();
    let a = meta("bench", Some("base"), 1_000.0);
    let b = meta("check", Some("base"), 2_000.0);
    let c = meta("suite", Some("new"), 3_000.0);
    let d = meta("machine", None, 4_000.0);
    let ra = report(
        "bench",
        &[("bench", "fetch_add", None), ("bench", "cas", None)],
    );
    let rb = report(
        "check",
        &[
            ("check", "sb", Some(Verdict::Pass)),
            ("check", "mp", Some(Verdict::Pass)),
            ("check", "lb", Some(Verdict::NotObserved)),
        ],
    );
    let rc = report(
        "suite",
        &[
            ("bench", "ticket", None),
            ("stress", "mp", Some(Verdict::Fail)),
        ],
    );
    let rd = report("machine", &[]);
    // Saved out of time order: the listing sorts by start time.
    store.save(&c, &rc).unwrap();
    store.save(&a, &ra).unwrap();
    store.save(&d, &rd).unwrap();
    store.save(&b, &rb).unwrap();

    let ids = |filter: RunFilter| -> Vec<String> {
        store
            .runs(&filter)
            .unwrap()
            .into_iter()
            .map(|s| s.meta.id)
            .collect()
    };
    let all = RunFilter::default();
    assert_eq!(
        ids(all.clone()),
        [d.id.as_str(), c.id.as_str(), b.id.as_str(), a.id.as_str()]
    );
    let label = |l: &str| RunFilter {
        label: Some(l.into()),
        ..RunFilter::default()
    };
    let cap = |c: &str| RunFilter {
        capability: Some(c.into()),
        ..RunFilter::default()
    };
    assert_eq!(ids(label("base")), [b.id.as_str(), a.id.as_str()]);
    assert_eq!(ids(label("none")), Vec::<String>::new());
    assert_eq!(ids(cap("bench")), [c.id.as_str(), a.id.as_str()]);
    assert_eq!(ids(cap("stress")), [c.id.as_str()]);
    assert_eq!(
        ids(cap("machine")),
        [d.id.as_str()],
        "a command counts as a capability"
    );
    assert_eq!(ids(cap("check")), [b.id.as_str()]);
    assert_eq!(
        ids(RunFilter {
            label: Some("base".into()),
            capability: Some("bench".into()),
            limit: 0
        }),
        [a.id.as_str()]
    );
    assert_eq!(
        ids(RunFilter { limit: 2, ..all }),
        [d.id.as_str(), c.id.as_str()]
    );
    assert_eq!(
        ids(RunFilter {
            limit: 1,
            ..label("base")
        }),
        [b.id.as_str()]
    );

    let summaries = store.runs(&RunFilter::default()).unwrap();
    let by_id = |id: &str| summaries.iter().find(|s| s.meta.id == id).unwrap();
    assert_eq!(by_id(&b.id).meta, b);
    assert_eq!(by_id(&b.id).records, 3);
    assert_eq!(
        by_id(&b.id).verdicts,
        [("NOT_OBSERVED".to_string(), 1), ("PASS".to_string(), 2)].into()
    );
    assert_eq!(by_id(&c.id).records, 2);
    assert_eq!(by_id(&c.id).verdicts, [("FAIL".to_string(), 1)].into());
    assert_eq!(by_id(&d.id).records, 0);
    assert!(by_id(&d.id).verdicts.is_empty());

    assert_eq!(store.latest_with_label("base").unwrap(), Some(b.clone()));
    assert_eq!(store.latest_with_label("nope").unwrap(), None);
    let shards = store.runs_with_label("base").unwrap();
    assert_eq!(
        shards,
        [
            StoredRun {
                meta: a,
                report: ra
            },
            StoredRun {
                meta: b,
                report: rb
            }
        ]
    );
    assert!(store.runs_with_label("nope").unwrap().is_empty());
}

/// `threads` threads, each with its own connection, save `per_thread` runs
/// at once: all of them land.
pub fn check_concurrent_saves(loc: &Location, threads: usize, per_thread: usize) {
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let loc = loc.clone();
            std::thread::spawn(move || {
                let mut store = Store::open(&loc).unwrap();
                let rep = report(
                    "bench",
                    &[("bench", "fetch_add", None), ("bench", "cas", None)],
                );
                (0..per_thread)
                    .map(|i| {
                        let m = RunMeta::new("bench", vec![], Some(format!("t{t}-{i}")));
                        store.save(&m, &rep).unwrap();
                        m.id
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let ids: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let store = Store::open(loc).unwrap();
    assert_eq!(store.count_runs().unwrap() as usize, threads * per_thread);
    let distinct: std::collections::HashSet<_> = ids.iter().collect();
    assert_eq!(distinct.len(), threads * per_thread);
    for id in &ids {
        let run = store.load(id).unwrap();
        assert_eq!(run.report.records.len(), 2);
    }
    let listed = store
        .runs(&RunFilter::default())
        .unwrap()
        .into_iter()
        .filter(|s| s.records == 2)
        .count();
    assert_eq!(listed, threads * per_thread);
}
