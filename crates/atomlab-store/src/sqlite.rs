//! The store in a SQLite file: WAL mode and a busy timeout so several
//! processes can save at once, and a read-only look at an existing file
//! before anything is written to it.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};

use crate::{
    add_verdicts, parse_command_line, runs_query, Backend, QueryArg, RunFilter, RunMeta, RunRows,
    RunSummary, StoreError, STORE_SCHEMA_VERSION,
};

/// How long opening the store waits for another process's transaction
/// (making a new store, or switching it to WAL).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How long SQLite itself waits for the write lock before a save says it
/// is waiting and tries again.
const BUSY_STEP: Duration = Duration::from_secs(1);

/// How long a save waits in all for another process's write lock. Other
/// saves hold it for milliseconds; an `atomlab import` of a large document
/// or a program with a transaction open may hold it for minutes, and a
/// measured run is worth waiting for (the wait is said on stderr).
const SAVE_WAIT: Duration = Duration::from_secs(600);

/// Stores up to this size get a `PRAGMA quick_check` when opened for
/// saving (about 1 ms per MiB with SQLite optimised; 2 ms for a 1.8 MiB
/// store in a debug build), so that damage anywhere in them is found before
/// a run is measured rather than when it is saved. Bigger stores would make
/// each of a corpus's hundreds of `check` processes pay for it; their damage
/// shows at save time, and the run is then kept in a file.
const QUICK_CHECK_MAX: u64 = 8 << 20;

/// Less free space than this on the store's file system is refused when
/// opening the store for saving: a save writes the report about twice.
const MIN_FREE: u64 = 1 << 20;

/// The first 16 bytes of every SQLite 3 database file.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Migration `i` takes the store from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: the first layout.
    "CREATE TABLE atomlab_schema (
         version INTEGER NOT NULL,
         atomlab_version TEXT NOT NULL
     );
     CREATE TABLE runs (
         id TEXT NOT NULL PRIMARY KEY,
         started_unix REAL NOT NULL,
         label TEXT,
         command TEXT NOT NULL,
         command_line TEXT NOT NULL,
         git_commit TEXT,
         host TEXT NOT NULL,
         atomlab_version TEXT NOT NULL,
         schema_version INTEGER NOT NULL,
         machine TEXT NOT NULL,
         report TEXT NOT NULL
     );
     CREATE INDEX runs_started ON runs (started_unix, id);
     CREATE INDEX runs_label ON runs (label, started_unix, id);
     CREATE INDEX runs_command ON runs (command, started_unix, id);
     CREATE TABLE records (
         run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
         idx INTEGER NOT NULL,
         capability TEXT NOT NULL,
         scenario TEXT NOT NULL,
         variant TEXT NOT NULL,
         parameters TEXT NOT NULL,
         verdict TEXT,
         PRIMARY KEY (run_id, idx)
     ) WITHOUT ROWID;
     CREATE INDEX records_capability ON records (capability, run_id);
     CREATE TABLE metrics (
         run_id TEXT NOT NULL,
         record_idx INTEGER NOT NULL,
         idx INTEGER NOT NULL,
         name TEXT NOT NULL,
         unit TEXT NOT NULL,
         median REAL,
         samples TEXT NOT NULL,
         PRIMARY KEY (run_id, record_idx, idx),
         FOREIGN KEY (run_id, record_idx) REFERENCES records (run_id, idx) ON DELETE CASCADE
     ) WITHOUT ROWID;
     CREATE TABLE run_capabilities (
         capability TEXT NOT NULL,
         started_unix REAL NOT NULL,
         run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
         PRIMARY KEY (capability, started_unix, run_id)
     ) WITHOUT ROWID;
     CREATE INDEX run_capabilities_run ON run_capabilities (run_id);",
];

const META_COLUMNS: &str = "id, started_unix, label, command, command_line, git_commit, host";

/// A store in a SQLite file.
pub(crate) struct Sqlite {
    conn: Connection,
    name: String,
    path: PathBuf,
    wait_notice: Option<crate::WaitNotice>,
}

/// Why one attempt at a save failed.
enum SaveError {
    /// The run's id is taken.
    Duplicate,
    /// Anything else SQLite said.
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for SaveError {
    fn from(e: rusqlite::Error) -> SaveError {
        SaveError::Sqlite(e)
    }
}

/// What a read-only look at the path found.
enum Found {
    /// No file, or an empty one: a new store.
    Nothing,
    /// An atomlab store of this version (0: a SQLite database with no tables).
    Store(u32),
}

impl Sqlite {
    pub(crate) fn open(path: &Path, mode: crate::OpenMode) -> Result<Sqlite, StoreError> {
        let name = path.display().to_string();
        let create = mode == crate::OpenMode::Create;
        if !create {
            let missing = |detail: &str| StoreError::NoStore {
                store: name.clone(),
                detail: detail.to_string(),
            };
            match std::fs::metadata(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(missing("no such file"))
                }
                Ok(m) if m.is_file() && m.len() == 0 => return Err(missing("an empty file")),
                _ => {}
            }
        }
        let found = inspect(path)?;
        if !create && matches!(found, Found::Store(0)) {
            return Err(StoreError::NoStore {
                store: name,
                detail: "a SQLite database without atomlab's tables".to_string(),
            });
        }
        if create {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| {
                    unwritable(path).unwrap_or(StoreError::Io {
                        path: dir.to_path_buf(),
                        action: "create the directory",
                        source,
                    })
                })?;
            }
            // Before SQLite makes a file that could never be saved to.
            if let Some(e) = unwritable(path) {
                return Err(e);
            }
        }
        let flags = if create {
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
        } else {
            // Falls back to read-only on a file that cannot be written:
            // reading needs no more.
            OpenFlags::SQLITE_OPEN_READ_WRITE
        };
        let conn = if !create && on_read_only_fs(path) {
            // Nothing can change a file on a read-only file system, so it
            // is opened as immutable: SQLite then needs no -shm file, which
            // it could not make there.
            Connection::open_with_flags(
                immutable_uri(path),
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_URI
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
        } else {
            Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        }
        .map_err(|e| classify(path, e))?;
        let mut store = Sqlite {
            conn,
            name,
            path: path.to_path_buf(),
            wait_notice: None,
        };
        let read_only = store
            .conn
            .is_readonly(rusqlite::MAIN_DB)
            .map_err(|e| classify(path, e))?;
        if create && read_only {
            return Err(unwritable(path).unwrap_or_else(|| StoreError::NotWritable {
                store: store.name.clone(),
                reason: "SQLite could open it only read-only".to_string(),
                advice: "check the file's permissions and owner, or pass another --store \
                         (or --no-save)"
                    .to_string(),
            }));
        }
        store.configure(path, !read_only)?;
        let current = matches!(found, Found::Store(v) if v == STORE_SCHEMA_VERSION);
        if !current {
            store.migrate(path)?;
        } else if create && file_len(path)? <= QUICK_CHECK_MAX {
            store.quick_check(path)?;
        }
        // From here on SQLite waits only briefly: a save waits in steps, and
        // says so (see SAVE_WAIT).
        store
            .conn
            .busy_timeout(BUSY_STEP)
            .map_err(|e| classify(path, e))?;
        Ok(store)
    }

    /// `PRAGMA quick_check`: every page of the file is read and its
    /// b-tree structure checked.
    fn quick_check(&self, path: &Path) -> Result<(), StoreError> {
        let verdict: String = self
            .conn
            .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
            .map_err(|e| classify(path, e))?;
        if verdict == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                detail: format!("SQLite's quick_check says: {verdict}"),
            })
        }
    }

    /// One attempt at saving the run, in one transaction.
    fn try_save(&mut self, rows: &RunRows<'_>) -> Result<(), SaveError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let m = rows.meta;
            let mut run = tx.prepare_cached(
                "INSERT INTO runs (id, started_unix, label, command, command_line, git_commit,
                                   host, atomlab_version, schema_version, machine, report)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?;
            run.execute(params![
                m.id,
                m.started_unix,
                m.label,
                m.command,
                rows.command_line,
                m.git_commit,
                m.host,
                rows.atomlab_version,
                rows.schema_version,
                rows.machine,
                rows.report,
            ])
            .map_err(|e| match &e {
                // Only the primary key: a trigger or check that refuses
                // the row is not a taken id.
                rusqlite::Error::SqliteFailure(f, _)
                    if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
                {
                    SaveError::Duplicate
                }
                _ => SaveError::Sqlite(e),
            })?;
            let mut record = tx.prepare_cached(
                "INSERT INTO records (run_id, idx, capability, scenario, variant, parameters, verdict)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for r in &rows.records {
                record.execute(params![
                    m.id,
                    r.idx,
                    r.capability,
                    r.scenario,
                    r.variant,
                    r.parameters,
                    r.verdict
                ])?;
            }
            let mut metric = tx.prepare_cached(
                "INSERT INTO metrics (run_id, record_idx, idx, name, unit, median, samples)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            let mut capability = tx.prepare_cached(
                "INSERT INTO run_capabilities (capability, started_unix, run_id)
                 VALUES (?1, ?2, ?3)",
            )?;
            for c in &rows.capabilities {
                capability.execute(params![c, m.started_unix, m.id])?;
            }
            for x in &rows.metrics {
                metric.execute(params![
                    m.id,
                    x.record_idx,
                    x.idx,
                    x.name,
                    x.unit,
                    x.median,
                    x.samples
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            store: self.name.clone(),
            source,
        }
    }

    /// Busy timeout, WAL journal, synchronous=NORMAL (in WAL mode a commit
    /// survives a crash of the process; only a power cut can lose the last
    /// ones, never the database), foreign keys.
    fn configure(&mut self, path: &Path, writable: bool) -> Result<(), StoreError> {
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| classify(path, e))?;
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(|e| classify(path, e))?;
        if writable && !mode.eq_ignore_ascii_case("wal") {
            // Changing the journal mode needs the database to itself, and
            // SQLite does not wait for it: retry while another process opens
            // the same new store.
            let deadline = Instant::now() + BUSY_TIMEOUT;
            loop {
                match self
                    .conn
                    .query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                {
                    // A file system without shared memory keeps the rollback
                    // journal; the busy timeout still serialises writers.
                    Ok(_) => break,
                    Err(e) if is_busy(&e) && Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(5))
                    }
                    Err(e) => return Err(classify(path, e)),
                }
            }
        }
        self.conn
            .execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(|e| classify(path, e))
    }

    /// Brings the store to [`STORE_SCHEMA_VERSION`] under the write lock,
    /// looking again at its version in case another process got there first.
    fn migrate(&mut self, path: &Path) -> Result<(), StoreError> {
        let name = self.name.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| classify(path, e))?;
        let version = match schema_state(&tx).map_err(|e| classify(path, e))? {
            SchemaState::Foreign(tables) => {
                return Err(StoreError::NotAStore {
                    store: name,
                    tables,
                })
            }
            SchemaState::Version(v, by) => check_version(&name, v, by)?,
        };
        if version == STORE_SCHEMA_VERSION {
            return Ok(());
        }
        for sql in &MIGRATIONS[version as usize..] {
            tx.execute_batch(sql).map_err(|e| classify(path, e))?;
        }
        tx.execute("DELETE FROM atomlab_schema", [])
            .and_then(|_| {
                tx.execute(
                    "INSERT INTO atomlab_schema (version, atomlab_version) VALUES (?1, ?2)",
                    params![STORE_SCHEMA_VERSION, atomlab_core::ATOMLAB_VERSION],
                )
            })
            .and_then(|_| tx.commit())
            .map_err(|e| classify(path, e))
    }
}

/// The version a store reports, refused when newer than this atomlab's.
fn check_version(store: &str, version: i64, written_by: String) -> Result<u32, StoreError> {
    match u32::try_from(version) {
        Ok(v) if v <= STORE_SCHEMA_VERSION => Ok(v),
        _ => Err(StoreError::TooNew {
            store: store.to_string(),
            found: version,
            written_by,
            supported: STORE_SCHEMA_VERSION,
            ours: atomlab_core::ATOMLAB_VERSION,
        }),
    }
}

enum SchemaState {
    /// Tables, but not atomlab's.
    Foreign(Vec<String>),
    /// atomlab's store of this version, set by this atomlab (0: no tables).
    Version(i64, String),
}

fn schema_state(conn: &Connection) -> rusqlite::Result<SchemaState> {
    let mut st = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let tables: Vec<String> = st
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if !tables.iter().any(|t| t == "atomlab_schema") {
        return Ok(if tables.is_empty() {
            SchemaState::Version(0, String::new())
        } else {
            SchemaState::Foreign(tables)
        });
    }
    let row: Option<(i64, String)> = conn
        .query_row(
            "SELECT version, atomlab_version FROM atomlab_schema ORDER BY version DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    match row {
        Some((v, by)) => Ok(SchemaState::Version(v, by)),
        // Migrations write the row in the transaction that makes the table.
        None => Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            Some("the atomlab_schema table has no row".into()),
        )),
    }
}

/// Looks at the path without writing to it: whether there is anything, and
/// if so whether it is an atomlab store this atomlab can open.
fn inspect(path: &Path) -> Result<Found, StoreError> {
    let io = |action, source| StoreError::Io {
        path: path.to_path_buf(),
        action,
        source,
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(e) => return Err(io("read the file's metadata", e)),
    };
    let not_db = |detail: &str| StoreError::NotADatabase {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    };
    let corrupt = |detail: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        detail,
    };
    if meta.is_dir() {
        return Err(not_db("it is a directory"));
    }
    if !meta.is_file() {
        return Err(not_db("it is not a regular file"));
    }
    // An empty file holds nothing to lose: SQLite makes it a database (it is
    // also how a store looks for an instant after another process made it).
    if meta.len() == 0 {
        return Ok(Found::Nothing);
    }
    let mut header = Vec::with_capacity(100);
    File::open(path)
        .and_then(|f| f.take(100).read_to_end(&mut header))
        .map_err(|e| io("read", e))?;
    if header.len() < MAGIC.len() || &header[..MAGIC.len()] != MAGIC {
        return Err(not_db("it does not start with the SQLite header"));
    }
    if header.len() < 100 {
        return Err(corrupt(format!(
            "{} bytes, shorter than a SQLite header",
            header.len()
        )));
    }
    let be16 = |at: usize| u16::from_be_bytes([header[at], header[at + 1]]);
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match be16(16) {
        1 => 65_536,
        n if n.is_power_of_two() && n >= 512 => u64::from(n),
        n => return Err(corrupt(format!("its header gives a page size of {n}"))),
    };
    // The page count in the header is valid when its change counter matches
    // (SQLite 3.7.0 on). With WAL frames beside it the file may lag behind
    // (a checkpoint cut short), and SQLite finishes the job on opening.
    let pages = u64::from(be32(28));
    let header_count_valid = pages > 0 && be32(24) == be32(92);
    if header_count_valid && !has_wal_frames(path) && file_len(path)? < pages * page_size {
        // Another process may be checkpointing right now: it writes the
        // header's new count before the pages that extend the file, and it
        // may empty the WAL between our reads. A real truncation is still
        // there a moment later; a checkpoint is not.
        let mut len = 0;
        for _ in 0..10 {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let mut again = Vec::with_capacity(100);
            File::open(path)
                .and_then(|f| f.take(100).read_to_end(&mut again))
                .map_err(|e| io("read", e))?;
            len = file_len(path)?;
            let count = again.get(28..32).map_or(0, |b| {
                u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            });
            if has_wal_frames(path) || len >= count * page_size {
                len = u64::MAX;
                break;
            }
        }
        if len != u64::MAX {
            return Err(corrupt(format!(
                "truncated: its header counts {pages} pages of {page_size} bytes \
                 ({} bytes), the file has {len}",
                pages * page_size
            )));
        }
    }
    let conn = if on_read_only_fs(path) {
        // See Sqlite::open: no -shm file can be made there.
        Connection::open_with_flags(
            immutable_uri(path),
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
    } else {
        Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
    }
    .map_err(|e| classify(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| classify(path, e))?;
    let name = path.display().to_string();
    match schema_state(&conn).map_err(|e| classify(path, e))? {
        SchemaState::Foreign(tables) => Err(StoreError::NotAStore {
            store: name,
            tables,
        }),
        SchemaState::Version(v, by) => {
            let version = check_version(&name, v, by)?;
            if version == STORE_SCHEMA_VERSION {
                // Read the first page of each table, so a store whose pages
                // are damaged is refused here rather than on the first save.
                conn.query_row(
                    "SELECT (SELECT count(*) FROM (SELECT 1 FROM runs LIMIT 1)),
                            (SELECT count(*) FROM (SELECT 1 FROM records LIMIT 1)),
                            (SELECT count(*) FROM (SELECT 1 FROM metrics LIMIT 1)),
                            (SELECT count(*) FROM (SELECT 1 FROM run_capabilities LIMIT 1)),
                            (SELECT max(started_unix) FROM runs)",
                    [],
                    |_| Ok(()),
                )
                .map_err(|e| classify(path, e))?;
            }
            Ok(Found::Store(version))
        }
    }
}

/// The file's current length (read again, not the length seen earlier).
fn file_len(path: &Path) -> Result<u64, StoreError> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| StoreError::Io {
            path: path.to_path_buf(),
            action: "read the file's metadata",
            source: e,
        })
}

/// Whether a `-wal` file with frames lies beside the database.
fn has_wal_frames(path: &Path) -> bool {
    let mut wal = PathBuf::from(path).into_os_string();
    wal.push("-wal");
    std::fs::metadata(wal).is_ok_and(|m| m.len() > 32)
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Whether `path` lies on a file system mounted read-only.
fn on_read_only_fs(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: an all-zero statvfs is a valid value of this plain C struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` is writable.
    (unsafe { libc::statvfs(c.as_ptr(), &mut st) }) == 0 && st.f_flag & libc::ST_RDONLY != 0
}

/// `file:PATH?immutable=1`, with the characters a URI gives meaning to
/// escaped (SQLite's URI filenames, sqlite.org/uri.html).
fn immutable_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Why the store at `path` cannot be written, when the file system says
/// so: a read-only mount, no space left, or permissions (of the file, or of
/// its directory where SQLite makes its `-wal` and `-shm` files). `None`
/// when nothing is wrong that this can see.
fn unwritable(path: &Path) -> Option<StoreError> {
    use std::os::unix::ffi::OsStrExt;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // The nearest existing directory: the store's may not exist yet.
    let existing = dir.ancestors().find(|d| d.exists()).unwrap_or(dir);
    let store = path.display().to_string();
    let fail = |reason: String, advice: &str| {
        Some(StoreError::NotWritable {
            store: store.clone(),
            reason,
            advice: advice.to_string(),
        })
    };
    let c_dir = std::ffi::CString::new(existing.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is a valid value of this plain C struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c_dir` is a NUL-terminated path and `st` is writable.
    if unsafe { libc::statvfs(c_dir.as_ptr(), &mut st) } == 0 {
        if st.f_flag & libc::ST_RDONLY != 0 {
            return fail(
                format!(
                    "the file system holding {} is mounted read-only",
                    existing.display()
                ),
                "remount it read-write, or pass --store a path on a writable file system \
                 (or run with --no-save)",
            );
        }
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        // Root may use the blocks reserved for it; others may not.
        let blocks = if root { st.f_bfree } else { st.f_bavail } as u64;
        let free = blocks.saturating_mul(st.f_frsize as u64);
        if free < MIN_FREE {
            return fail(
                format!(
                    "no space left on the file system holding {} ({free} bytes free)",
                    existing.display()
                ),
                "free some space there, or pass --store a path on another file system",
            );
        }
    }
    let denied = |p: &Path| {
        let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `c` is a NUL-terminated path.
        let refused = unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0;
        refused && std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES)
    };
    if path.exists() && denied(path) {
        return fail(
            format!("permission denied: the file {store} is read-only for this user"),
            "make it writable (chmod u+w, or chown it to this user), or pass another --store \
             (or run with --no-save)",
        );
    }
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if !Path::new(&wal).exists() && denied(existing) {
        return fail(
            format!(
                "permission denied: the directory {} is not writable for this user, and SQLite \
                 keeps its -wal and -shm files beside the store",
                existing.display()
            ),
            "make the directory writable, or pass --store a path in a directory you can write \
             (or run with --no-save)",
        );
    }
    None
}

/// SQLite's verdict on a file, as the error that says what to do.
fn classify(path: &Path, e: rusqlite::Error) -> StoreError {
    let detail = e.to_string();
    let code = e.sqlite_error_code();
    if matches!(
        code,
        Some(
            ErrorCode::ReadOnly
                | ErrorCode::CannotOpen
                | ErrorCode::DiskFull
                | ErrorCode::SystemIoFailure
                | ErrorCode::PermissionDenied
        )
    ) {
        if let Some(why) = unwritable(path) {
            return why;
        }
        if code == Some(ErrorCode::DiskFull) {
            return StoreError::NotWritable {
                store: path.display().to_string(),
                reason: format!("the disk is full (SQLite says: {detail})"),
                advice: "free some space, or pass --store a path on another file system"
                    .to_string(),
            };
        }
    }
    if is_busy(&e) {
        return StoreError::Locked {
            store: path.display().to_string(),
            waited_s: BUSY_TIMEOUT.as_secs(),
        };
    }
    match code {
        Some(ErrorCode::NotADatabase) => StoreError::NotADatabase {
            path: path.to_path_buf(),
            detail: format!("SQLite says: {detail}"),
        },
        Some(ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: path.to_path_buf(),
            detail: format!("SQLite says: {detail}"),
        },
        _ => StoreError::Sqlite {
            store: path.display().to_string(),
            source: e,
        },
    }
}

fn meta_from_row(
    name: &str,
    r: &rusqlite::Row<'_>,
) -> rusqlite::Result<Result<RunMeta, StoreError>> {
    let id: String = r.get(0)?;
    let started_unix: f64 = r.get(1)?;
    let label: Option<String> = r.get(2)?;
    let command: String = r.get(3)?;
    let command_line: String = r.get(4)?;
    let git_commit: Option<String> = r.get(5)?;
    let host: String = r.get(6)?;
    Ok(
        parse_command_line(name, &id, &command_line).map(|command_line| RunMeta {
            id,
            started_unix,
            label,
            command,
            command_line,
            git_commit,
            host,
        }),
    )
}

impl Backend for Sqlite {
    /// Saves in one transaction, waiting up to [`SAVE_WAIT`] for another
    /// process's write lock: each attempt takes the lock first (`BEGIN
    /// IMMEDIATE`), so a busy attempt has written nothing and is retried
    /// whole.
    fn save(&mut self, rows: &RunRows<'_>) -> Result<(), StoreError> {
        let start = Instant::now();
        let mut told = false;
        loop {
            match self.try_save(rows) {
                Ok(()) => return Ok(()),
                Err(SaveError::Duplicate) => {
                    return Err(StoreError::DuplicateRun {
                        id: rows.meta.id.clone(),
                        store: self.name.clone(),
                    })
                }
                Err(SaveError::Sqlite(e)) if is_busy(&e) => {
                    if start.elapsed() >= SAVE_WAIT {
                        return Err(StoreError::Locked {
                            store: self.name.clone(),
                            waited_s: start.elapsed().as_secs(),
                        });
                    }
                    if !told {
                        told = true;
                        if let Some(notice) = &mut self.wait_notice {
                            notice(&self.name, SAVE_WAIT);
                        }
                    }
                }
                Err(SaveError::Sqlite(e)) => return Err(classify(&self.path, e)),
            }
        }
    }

    fn set_wait_notice(&mut self, notice: crate::WaitNotice) {
        self.wait_notice = Some(notice);
    }

    fn ids_started_between(
        &self,
        lo: f64,
        hi: f64,
        command: &str,
    ) -> Result<Vec<String>, StoreError> {
        // runs_command (command, started_unix, id) covers it.
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT id FROM runs WHERE command = ?3 AND started_unix BETWEEN ?1 AND ?2
                 ORDER BY started_unix, id",
            )
            .map_err(|e| self.err(e))?;
        st.query_map(params![lo, hi, command], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    fn runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let (sql, arg_kinds) = runs_query(filter, |n| format!("?{n}"));
        let limit = if filter.limit == 0 {
            -1
        } else {
            i64::try_from(filter.limit).unwrap_or(i64::MAX)
        };
        let args: Vec<&dyn rusqlite::ToSql> = arg_kinds
            .iter()
            .map(|a| -> &dyn rusqlite::ToSql {
                match a {
                    QueryArg::Label => &filter.label,
                    QueryArg::Capability => &filter.capability,
                    QueryArg::Limit => &limit,
                }
            })
            .collect();
        let mut st = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let mut rows = st.query(args.as_slice()).map_err(|e| self.err(e))?;
        let mut out: Vec<RunSummary> = Vec::new();
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let id: String = r.get(0).map_err(|e| self.err(e))?;
            if out.last().is_none_or(|s| s.meta.id != id) {
                let meta = meta_from_row(&self.name, r).map_err(|e| self.err(e))??;
                out.push(RunSummary {
                    meta,
                    records: 0,
                    verdicts: Default::default(),
                });
            }
            let verdict: Option<String> = r.get(7).map_err(|e| self.err(e))?;
            let n: Option<i64> = r.get(8).map_err(|e| self.err(e))?;
            if let (Some(s), Some(n)) = (out.last_mut(), n) {
                add_verdicts(s, verdict, n);
            }
        }
        Ok(out)
    }

    fn ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        // Ids are ASCII below DEL, so [prefix, prefix + DEL) holds exactly
        // the ids that start with it, and the primary key finds them.
        let upper = format!("{prefix}\u{7f}");
        let mut st = self
            .conn
            .prepare_cached("SELECT id FROM runs WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT ?3")
            .map_err(|e| self.err(e))?;
        let ids = st
            .query_map(params![prefix, upper, limit as i64], |r| {
                r.get::<_, String>(0)
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.err(e))?;
        Ok(ids
            .into_iter()
            .filter(|id| id.starts_with(prefix))
            .collect())
    }

    fn ids_around(&self, id: &str, n: usize) -> Result<Vec<String>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT id FROM (SELECT id FROM runs WHERE id < ?1 ORDER BY id DESC LIMIT ?2)
                 UNION ALL
                 SELECT id FROM (SELECT id FROM runs WHERE id > ?1 ORDER BY id LIMIT ?2)
                 ORDER BY id",
            )
            .map_err(|e| self.err(e))?;
        st.query_map(params![id, n as i64], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.err(e))
    }

    fn fetch(&self, id: &str) -> Result<Option<(RunMeta, String)>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT {META_COLUMNS}, report FROM runs WHERE id = ?1"
            ))
            .map_err(|e| self.err(e))?;
        let row = st
            .query_row([id], |r| {
                Ok((meta_from_row(&self.name, r)?, r.get::<_, String>(7)?))
            })
            .optional()
            .map_err(|e| self.err(e))?;
        row.map(|(meta, json)| meta.map(|m| (m, json))).transpose()
    }

    fn latest_with_label(&self, label: &str) -> Result<Option<RunMeta>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT {META_COLUMNS} FROM runs WHERE label = ?1
                 ORDER BY started_unix DESC, id DESC LIMIT 1"
            ))
            .map_err(|e| self.err(e))?;
        st.query_row([label], |r| meta_from_row(&self.name, r))
            .optional()
            .map_err(|e| self.err(e))?
            .transpose()
    }

    fn with_label(&self, label: &str) -> Result<Vec<(RunMeta, String)>, StoreError> {
        let mut st = self
            .conn
            .prepare_cached(&format!(
                "SELECT {META_COLUMNS}, report FROM runs WHERE label = ?1
                 ORDER BY started_unix, id"
            ))
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([label], |r| {
                Ok((meta_from_row(&self.name, r)?, r.get::<_, String>(7)?))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.err(e))?;
        rows.into_iter()
            .map(|(meta, json)| meta.map(|m| (m, json)))
            .collect()
    }

    fn count_runs(&self) -> Result<u64, StoreError> {
        self.conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| self.err(e))
    }
}
