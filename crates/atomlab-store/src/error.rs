//! What can go wrong with a results store, each case naming the file or URL
//! and saying what to do about it.

use std::path::PathBuf;

/// An error of the results store. Every message names the store (its path,
/// or its URL without the password) and says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Neither a flag, `ATOMLAB_STORE`, `ATOMLAB_DB`, `XDG_DATA_HOME` nor
    /// `HOME` says where the store is.
    #[error(
        "cannot tell where to keep the results store: neither XDG_DATA_HOME nor HOME is set; \
         pass --store PATH (a SQLite file) or --store postgres://…, or set ATOMLAB_STORE"
    )]
    NoDefaultLocation,

    /// The store location was given but empty.
    #[error("{origin} is empty: give a SQLite file path or a postgres:// URL")]
    EmptyLocation {
        /// Where it came from (`--store`, `ATOMLAB_STORE`, `ATOMLAB_DB`).
        origin: &'static str,
    },

    /// A `scheme://` location of a scheme the store does not know
    /// (`postgress://`, `mysql://`): refused, not taken for a file path.
    #[error(
        "{location}: unknown store scheme `{scheme}://`; the results store is a SQLite file \
         path (`results.db`, `~/atomlab/results.db`) or a PostgreSQL URL \
         (postgres://USER@HOST[:PORT]/DATABASE or postgresql://…)"
    )]
    UnknownScheme {
        /// The location as given, without any password.
        location: String,
        /// The scheme found.
        scheme: String,
    },

    /// A libpq `key=value` connection string (`host=… dbname=…`): refused,
    /// not taken for a file path; the message names its keys only.
    #[error(
        "the store location is a libpq key=value connection string (keys: {keys}); atomlab takes \
         a URL: postgres://USER@HOST[:PORT]/DATABASE, with the password in PGPASSWORD or \
         ~/.pgpass, not on the command line"
    )]
    KeyValueString {
        /// Its keys, in order (never the values).
        keys: String,
    },

    /// A URL with white space before or after it, which would otherwise
    /// become a SQLite path (and be printed with its password).
    #[error(
        "the store location '{location}' has white space before or after it: give the URL \
         alone (postgres://USER@HOST[:PORT]/DATABASE) or a SQLite file path"
    )]
    Padded {
        /// The location trimmed, without any password.
        location: String,
    },

    /// `ATOMLAB_DB`, which names a SQLite file, holds a URL.
    #[error(
        "ATOMLAB_DB is {location}, a URL, but ATOMLAB_DB names a SQLite file; put a \
         postgres:// URL in ATOMLAB_STORE or pass --store"
    )]
    UrlInDbPath {
        /// The value, without any password.
        location: String,
    },

    /// A command that only reads the store was pointed at a store that does
    /// not exist; it is not created.
    #[error(
        "there is no results store at {store} ({detail}); nothing was created: check \
         --store / ATOMLAB_STORE / ATOMLAB_DB, or save a run there first (any bench, stress, \
         check, run, audit or suite without --no-save, or `atomlab import FILE.json`)"
    )]
    NoStore {
        /// The store's path or URL (without the password).
        store: String,
        /// What was found instead (`no such file`, `an empty file`…).
        detail: String,
    },

    /// The store cannot be written here: it (or its directory) is
    /// read-only, the file system is read-only or full. Found when the store
    /// is opened, before anything is measured.
    #[error("results store {store} cannot be written: {reason}; {advice}")]
    NotWritable {
        /// The store's path.
        store: String,
        /// What is wrong (`the file system is mounted read-only`…).
        reason: String,
        /// What to do about it.
        advice: String,
    },

    /// Another process held the store's write lock for longer than a save
    /// waits.
    #[error(
        "results store {store} stayed locked by another process for {waited_s} s (a long \
         `atomlab import`, or a program holding a transaction open); find it with \
         `fuser {store}` and retry when it is done"
    )]
    Locked {
        /// The store's path.
        store: String,
        /// How long the save waited, in seconds.
        waited_s: u64,
    },

    /// A file-system operation on the store's path failed.
    #[error(
        "{}: cannot {action}: {source}; check the path and its permissions, or pass another --store",
        path.display()
    )]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done (`create the directory`, `read`…).
        action: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// The path holds something that is not a SQLite database. It is left
    /// untouched.
    #[error(
        "{} is not a SQLite database ({detail}); atomlab left it untouched: \
         pass another --store path, or move the file away",
        path.display()
    )]
    NotADatabase {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        detail: String,
    },

    /// The path holds a damaged SQLite database. It is left untouched.
    #[error(
        "{} is a damaged SQLite database ({detail}); atomlab left it untouched: \
         restore it from a backup or salvage it with `sqlite3 {} .recover`, \
         or pass another --store path",
        path.display(), path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },

    /// The database holds tables of something else. It is left untouched.
    #[error(
        "{store} is a database but not an atomlab results store (it has {}); \
         atomlab left it untouched: pass another --store",
        tables.join(", ")
    )]
    NotAStore {
        /// The store's path or URL.
        store: String,
        /// The tables that are not atomlab's.
        tables: Vec<String>,
    },

    /// The store was written by a newer atomlab, with a store schema this
    /// one cannot read. It is left untouched.
    #[error(
        "the results store {store} has store schema version {found} (written by atomlab \
         {written_by}), but this atomlab {ours} reads versions up to {supported}; \
         the store was not changed: upgrade atomlab to use it, or pass another --store"
    )]
    TooNew {
        /// The store's path or URL.
        store: String,
        /// Its store schema version.
        found: i64,
        /// The atomlab version that last set it.
        written_by: String,
        /// The newest version this atomlab reads ([`crate::STORE_SCHEMA_VERSION`]).
        supported: u32,
        /// This atomlab's version.
        ours: &'static str,
    },

    /// A SQLite operation failed.
    #[error("results store {store}: {source}")]
    Sqlite {
        /// The store's path.
        store: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },

    /// A PostgreSQL operation failed after connecting.
    #[cfg(feature = "postgres")]
    #[error("PostgreSQL results store {store}: {detail}")]
    Postgres {
        /// The store's URL, without the password.
        store: String,
        /// The client's error with its causes (the server's message).
        detail: String,
        /// The client's error.
        #[source]
        source: postgres::Error,
    },

    /// The PostgreSQL server could not be reached or refused the connection.
    #[error(
        "cannot connect to the PostgreSQL results store {url}: {reason}; check that the \
         server is running and reachable from here and that the URL's host, port, user, \
         password and database are right (postgres://USER@HOST[:PORT]/DATABASE, with the \
         password in PGPASSWORD or ~/.pgpass rather than in the URL, where it shows in `ps`), \
         or keep results in a SQLite file with --store PATH"
    )]
    PostgresConnect {
        /// The URL, without the password.
        url: String,
        /// Why, in the client's words.
        reason: String,
    },

    /// A `postgres://` location that is not a valid connection URL.
    #[error(
        "{url} is not a valid PostgreSQL URL ({reason}); expected \
         postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
    )]
    BadUrl {
        /// The URL, without the password.
        url: String,
        /// What is wrong.
        reason: String,
    },

    /// This build has no PostgreSQL client.
    #[error(
        "{url}: this atomlab was built without PostgreSQL support (the `postgres` feature of \
         atomlab-store); rebuild with it, or keep results in a SQLite file with --store PATH"
    )]
    PostgresUnsupported {
        /// The URL, without the password.
        url: String,
    },

    /// No stored run has this id or id prefix.
    #[error("no run `{id}` in {store}{hint}; `atomlab runs` lists the stored runs")]
    UnknownRun {
        /// The id or prefix asked for.
        id: String,
        /// The store's path or URL.
        store: String,
        /// The ids nearest to it and the most recent ones, for the message.
        hint: String,
    },

    /// An id prefix that matches more than one run.
    #[error(
        "`{prefix}` matches {} runs in {store}: {}{}; give more characters of the id",
        if *more { "more than ".to_string() + &candidates.len().to_string() } else { candidates.len().to_string() },
        candidates.join(", "),
        if *more { ", …" } else { "" }
    )]
    AmbiguousRun {
        /// The prefix asked for.
        prefix: String,
        /// The store's path or URL.
        store: String,
        /// Matching ids (the first few, in id order).
        candidates: Vec<String>,
        /// Whether more ids match than are listed.
        more: bool,
    },

    /// A run with this id is already stored.
    #[error(
        "a run with id `{id}` is already in {store}; each run needs its own id \
         (make a new one with RunMeta::new)"
    )]
    DuplicateRun {
        /// The id.
        id: String,
        /// The store's path or URL.
        store: String,
    },

    /// A run id with characters a user could not type back.
    #[error(
        "`{id}` is not a valid run id: ids are 1 to 64 characters of letters, digits, \
         `-`, `_` and `.`"
    )]
    InvalidRunId {
        /// The id.
        id: String,
    },

    /// A record of another JSON schema version than this atomlab's, in a
    /// report of the right one.
    #[error(
        "record {index} ({what}) has schema_version {found}, but this atomlab stores \
         schema_version {expected}; the document mixes versions: re-run the command with \
         this atomlab"
    )]
    RecordSchemaVersion {
        /// The record's position in the report, from 0.
        index: usize,
        /// `capability/scenario/variant`.
        what: String,
        /// The record's version.
        found: u32,
        /// [`atomlab_core::SCHEMA_VERSION`].
        expected: u32,
    },

    /// A report of another JSON schema version than this atomlab's.
    #[error(
        "the report has schema_version {found}, but this atomlab stores schema_version \
         {expected}; re-run the command with this atomlab, or import it with the atomlab \
         version that wrote it"
    )]
    SchemaVersion {
        /// The report's version.
        found: u32,
        /// [`atomlab_core::SCHEMA_VERSION`].
        expected: u32,
    },

    /// A report that JSON cannot hold (a NaN or infinite sample).
    #[error("the report cannot be stored: {detail}")]
    BadReport {
        /// What is wrong, naming the record and metric.
        detail: String,
    },

    /// A stored run that this atomlab cannot read back.
    #[error(
        "run `{id}` in {store} cannot be read ({detail}); it may have been written by \
         another atomlab: export it with that version, or remove it"
    )]
    BadStoredRun {
        /// The run id.
        id: String,
        /// The store's path or URL.
        store: String,
        /// What failed.
        detail: String,
    },
}
