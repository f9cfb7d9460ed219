//! The SQLite store: round trips, filters, concurrent writers, and files it
//! must refuse without touching them.

mod common;

use std::path::{Path, PathBuf};

use atomlab_store::{Location, RunMeta, Store, StoreError, STORE_SCHEMA_VERSION};
use common::{report, TempDir};

fn db(dir: &TempDir) -> Location {
    // A directory that does not exist yet: the store makes it.
    Location::Sqlite(dir.path().join("nested/dir/results.db"))
}

#[test]
fn round_trip() {
    let dir = TempDir::new("round-trip");
    common::check_round_trip(&db(&dir));
}

#[test]
fn filters_limit_and_labels() {
    let dir = TempDir::new("filters");
    common::check_filters(&db(&dir));
}

#[test]
fn four_writers_at_once_all_land() {
    let dir = TempDir::new("concurrent");
    // The file does not exist yet: the four also race to create it.
    common::check_concurrent_saves(&db(&dir), 4, 25);
}

/// Fills a store with a few runs and closes it (which checkpoints the WAL
/// into the file and removes it).
fn filled_store(dir: &TempDir, runs: usize) -> PathBuf {
    let path = dir.path().join("results.db");
    let mut store = Store::open(&Location::Sqlite(path.clone())).unwrap();
    let rep = report(
        "bench",
        &[("bench", "fetch_add", None), ("bench", "cas", None)],
    );
    for _ in 0..runs {
        store
            .save(&RunMeta::new("bench", vec![], None), &rep)
            .unwrap();
    }
    drop(store);
    assert!(!sidecar(&path, "-wal").exists());
    path
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Opens `path`, expects an error naming it, and checks the file's bytes did
/// not change.
fn refused(path: &Path) -> StoreError {
    let before = std::fs::read(path).unwrap();
    let err = Store::open(&Location::Sqlite(path.to_path_buf())).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains(&path.display().to_string()),
        "the error names the file: {msg}"
    );
    assert!(
        msg.contains("untouched") || msg.contains("not changed"),
        "{msg}"
    );
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "the file was modified"
    );
    err
}

#[test]
fn a_text_file_is_refused_and_left_alone() {
    let dir = TempDir::new("text");
    let path = dir.path().join("results.db");
    std::fs::write(&path, "these are my notes, not a database\n".repeat(200)).unwrap();
    let err = refused(&path);
    assert!(matches!(err, StoreError::NotADatabase { .. }), "{err:?}");
    for suffix in ["-wal", "-shm", "-journal"] {
        assert!(!sidecar(&path, suffix).exists(), "{suffix} was created");
    }
}

#[test]
fn a_directory_is_refused() {
    let dir = TempDir::new("dir");
    let err = Store::open(&Location::Sqlite(dir.path().to_path_buf())).unwrap_err();
    assert!(matches!(err, StoreError::NotADatabase { .. }), "{err:?}");
    assert!(err.to_string().contains(&dir.path().display().to_string()));
}

#[test]
fn a_truncated_store_is_refused_and_left_alone() {
    let dir = TempDir::new("truncated");
    let path = filled_store(&dir, 40);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let err = refused(&path);
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("truncated"), "{err}");
}

#[test]
fn a_store_caught_mid_checkpoint_is_not_called_damaged() {
    // Another process checkpointing writes the header's new page count
    // before the pages that extend the file: for a moment the file looks
    // truncated. Found by CI, where two atomlab processes shared a store.
    let dir = TempDir::new("checkpoint");
    let path = filled_store(&dir, 40);
    let bytes = std::fs::read(&path).unwrap();
    let half = bytes.len() / 2;
    std::fs::write(&path, &bytes[..half]).unwrap();
    let finish = {
        let (path, rest) = (path.clone(), bytes[half..].to_vec());
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(40));
            // The missing pages are appended, as a checkpoint extends the
            // file: never truncated on the way (`fs::write` empties the
            // file first, and a reader that came in then saw no database
            // at all: this test failed so in one CI run).
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            f.write_all(&rest).unwrap();
        })
    };
    let store = Store::open(&Location::Sqlite(path.clone()));
    finish.join().unwrap();
    assert!(store.is_ok(), "{:?}", store.err());
}

#[test]
fn a_store_with_a_damaged_first_page_is_refused_and_left_alone() {
    let dir = TempDir::new("damaged");
    let path = filled_store(&dir, 5);
    let mut bytes = std::fs::read(&path).unwrap();
    // Page 1 after the 100-byte file header holds the schema's b-tree.
    for b in &mut bytes[100..4096] {
        *b = 0xa5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let err = refused(&path);
    assert!(
        matches!(
            err,
            StoreError::Corrupt { .. } | StoreError::NotADatabase { .. }
        ),
        "{err:?}"
    );
}

#[test]
fn a_short_file_with_the_sqlite_magic_is_refused() {
    let dir = TempDir::new("short");
    let path = dir.path().join("results.db");
    std::fs::write(&path, b"SQLite format 3\0 and then nothing").unwrap();
    let err = refused(&path);
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
}

#[test]
fn another_programs_database_is_refused_and_left_alone() {
    let dir = TempDir::new("foreign");
    let path = dir.path().join("results.db");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("CREATE TABLE invoices (n INTEGER); INSERT INTO invoices VALUES (1);")
        .unwrap();
    drop(conn);
    let err = refused(&path);
    match &err {
        StoreError::NotAStore { tables, .. } => assert_eq!(tables, &["invoices"]),
        other => panic!("expected NotAStore, got {other:?}"),
    }
}

#[test]
fn a_store_of_a_newer_atomlab_is_refused_and_left_alone() {
    let dir = TempDir::new("too-new");
    let path = filled_store(&dir, 3);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE atomlab_schema SET version = ?1, atomlab_version = '9.9.9'",
        [STORE_SCHEMA_VERSION + 1],
    )
    .unwrap();
    drop(conn);
    let err = refused(&path);
    match &err {
        StoreError::TooNew {
            found, written_by, ..
        } => {
            assert_eq!(*found, i64::from(STORE_SCHEMA_VERSION) + 1);
            assert_eq!(written_by, "9.9.9");
            assert!(err.to_string().contains("upgrade atomlab"), "{err}");
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    // Still the newer atomlab's store, with its runs.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (v, n): (u32, u32) = conn
        .query_row(
            "SELECT (SELECT version FROM atomlab_schema), (SELECT count(*) FROM runs)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((v, n), (STORE_SCHEMA_VERSION + 1, 3));
}

#[test]
fn an_empty_file_or_empty_database_becomes_a_store() {
    let dir = TempDir::new("empty");
    let empty_file = dir.path().join("empty.db");
    std::fs::write(&empty_file, b"").unwrap();
    let empty_db = dir.path().join("empty-sqlite.db");
    rusqlite::Connection::open(&empty_db)
        .unwrap()
        .execute_batch("PRAGMA user_version = 0; VACUUM;")
        .unwrap();
    for path in [empty_file, empty_db] {
        let loc = Location::Sqlite(path);
        let mut store = Store::open(&loc).unwrap();
        let m = RunMeta::new("machine", vec![], None);
        store.save(&m, &report("machine", &[])).unwrap();
        drop(store);
        assert_eq!(Store::open(&loc).unwrap().count_runs().unwrap(), 1);
    }
}

#[test]
fn reopening_keeps_the_schema_and_the_runs() {
    let dir = TempDir::new("reopen");
    let path = filled_store(&dir, 2);
    for _ in 0..3 {
        let store = Store::open(&Location::Sqlite(path.clone())).unwrap();
        assert_eq!(store.count_runs().unwrap(), 2);
    }
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (rows, mode): (u32, String) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM atomlab_schema), (SELECT journal_mode FROM pragma_journal_mode)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(rows, 1);
    assert_eq!(mode, "wal");
}

#[test]
fn a_store_damaged_deep_inside_is_refused_before_a_run_is_measured() {
    let dir = TempDir::new("deep-damage");
    let path = filled_store(&dir, 60);
    let mut bytes = std::fs::read(&path).unwrap();
    let page = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
    let pages = bytes.len() / page;
    assert!(pages > 8, "{pages} pages");
    // The last page: a leaf of some table, which the first-page checks of
    // every open do not read, and a save may.
    for b in &mut bytes[(pages - 1) * page..] {
        *b = 0xa5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let err = refused(&path);
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("quick_check"), "{err}");
}

#[test]
fn opening_for_reading_never_creates_a_store() {
    let dir = TempDir::new("existing");
    let path = dir.path().join("sub/results.db");
    let err = Store::open_existing(&Location::Sqlite(path.clone())).unwrap_err();
    assert!(matches!(err, StoreError::NoStore { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
    assert!(!path.parent().unwrap().exists(), "nothing was created");
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let err = Store::open_existing(&Location::Sqlite(empty.clone())).unwrap_err();
    assert!(matches!(err, StoreError::NoStore { .. }), "{err:?}");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    let filled = filled_store(&dir, 2);
    let store = Store::open_existing(&Location::Sqlite(filled)).unwrap();
    assert_eq!(store.count_runs().unwrap(), 2);
}

#[test]
fn passwords_in_command_lines_are_not_stored() {
    let dir = TempDir::new("password");
    let path = dir.path().join("results.db");
    let mut store = Store::open(&Location::Sqlite(path.clone())).unwrap();
    let mut m = RunMeta::new("bench", vec![], None);
    // Set after construction, as a library user might.
    m.command_line = vec![
        "atomlab".into(),
        "--store".into(),
        "postgres://bob:hunter2@db/a?password=hunter2".into(),
        "bench".into(),
    ];
    store
        .save(&m, &report("bench", &[("bench", "cas", None)]))
        .unwrap();
    let raw: String = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT command_line FROM runs", [], |r| r.get(0))
        .unwrap();
    assert!(
        !raw.contains("hunter2") && raw.contains("bob@db/a"),
        "{raw}"
    );
    let loaded = store.load(&m.id).unwrap();
    assert_eq!(loaded.meta.command_line[2], "postgres://bob@db/a");
}

#[test]
fn a_save_waits_for_a_writer_that_holds_the_lock_for_long() {
    let dir = TempDir::new("locked");
    let path = filled_store(&dir, 1);
    let mut store = Store::open(&Location::Sqlite(path.clone())).unwrap();
    let told = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = told.clone();
    store.set_wait_notice(Box::new(move |_, _| {
        // ORDERING: Relaxed: the saving thread is joined before the count
        // is read, and the join orders its increment before the read.
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }));
    // Another process's long transaction (a large import): longer than
    // the 5 s a save used to wait before losing the run.
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let saver = std::thread::spawn(move || {
        let m = RunMeta::new("bench", vec![], None);
        tx.send(()).unwrap();
        let r = store.save(&m, &report("bench", &[("bench", "cas", None)]));
        (store, r)
    });
    rx.recv().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(7));
    holder.execute_batch("COMMIT").unwrap();
    let (store, result) = saver.join().unwrap();
    result.unwrap();
    assert_eq!(store.count_runs().unwrap(), 2);
    assert_eq!(told.load(std::sync::atomic::Ordering::Relaxed), 1);
}
