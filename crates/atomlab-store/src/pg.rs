//! The store in a PostgreSQL database, for a team: the same tables as the
//! SQLite store, in the first schema of the connection's `search_path`.
//!
//! A URL without a password takes it from `PGPASSWORD`, else from the
//! password file, as libpq does (PostgreSQL manual, "The Password File",
//! libpq-pgpass.html): `PGPASSFILE` or `~/.pgpass`, lines of
//! `hostname:port:database:username:password` with `*` wildcards and `\`
//! escapes, the first match winning, the file ignored when its group or
//! others may read it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, NoTls, Row, Statement};

use crate::location::redact_url;
use crate::{
    add_verdicts, parse_command_line, runs_query, Backend, QueryArg, RunFilter, RunMeta, RunRows,
    RunSummary, StoreError, STORE_SCHEMA_VERSION,
};

/// How long connecting may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Migration `i` takes the store from version `i` to `i + 1`. Ids sort
/// byte-wise (`COLLATE "C"`), as in SQLite, so prefixes are index ranges.
const MIGRATIONS: &[&str] = &[
    // 1: the first layout.
    r#"CREATE TABLE atomlab_schema (
         version INTEGER NOT NULL,
         atomlab_version TEXT NOT NULL
     );
     CREATE TABLE runs (
         id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
         started_unix DOUBLE PRECISION NOT NULL,
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
         run_id TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
         idx INTEGER NOT NULL,
         capability TEXT NOT NULL,
         scenario TEXT NOT NULL,
         variant TEXT NOT NULL,
         parameters TEXT NOT NULL,
         verdict TEXT,
         PRIMARY KEY (run_id, idx)
     );
     CREATE INDEX records_capability ON records (capability, run_id);
     CREATE TABLE metrics (
         run_id TEXT COLLATE "C" NOT NULL,
         record_idx INTEGER NOT NULL,
         idx INTEGER NOT NULL,
         name TEXT NOT NULL,
         unit TEXT NOT NULL,
         median DOUBLE PRECISION,
         samples TEXT NOT NULL,
         PRIMARY KEY (run_id, record_idx, idx),
         FOREIGN KEY (run_id, record_idx) REFERENCES records (run_id, idx) ON DELETE CASCADE
     );
     CREATE TABLE run_capabilities (
         capability TEXT NOT NULL,
         started_unix DOUBLE PRECISION NOT NULL,
         run_id TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
         PRIMARY KEY (capability, started_unix, run_id)
     );
     CREATE INDEX run_capabilities_run ON run_capabilities (run_id);"#,
];

const META_COLUMNS: &str = "id, started_unix, label, command, command_line, git_commit, host";

/// A store in a PostgreSQL database.
pub(crate) struct Pg {
    inner: RefCell<Inner>,
    name: String,
}

struct Inner {
    client: Client,
    /// Statements prepared on this connection, by their SQL.
    statements: HashMap<String, Statement>,
}

impl Inner {
    fn statement(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    fn query(
        &mut self,
        sql: &str,
        args: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, postgres::Error> {
        let st = self.statement(sql)?;
        self.client.query(&st, args)
    }
}

impl Pg {
    pub(crate) fn open(url: &str, mode: crate::OpenMode) -> Result<Pg, StoreError> {
        let name = redact_url(url);
        let mut config: postgres::Config =
            url.parse()
                .map_err(|e: postgres::Error| StoreError::BadUrl {
                    url: name.clone(),
                    reason: describe(&e),
                })?;
        // The client reads no environment: the password comes, as libpq
        // users expect, from PGPASSWORD or else the password file.
        if config.get_password().is_none() {
            if let Some(pw) = password_from_env(&config, |k| std::env::var_os(k)) {
                config.password(pw);
            }
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("atomlab");
        }
        let mut client = config
            .connect(NoTls)
            .map_err(|e| StoreError::PostgresConnect {
                url: name.clone(),
                reason: describe(&e),
            })?;
        migrate(&mut client, &name, mode)?;
        Ok(Pg {
            inner: RefCell::new(Inner {
                client,
                statements: HashMap::new(),
            }),
            name,
        })
    }

    fn err(&self) -> impl Fn(postgres::Error) -> StoreError + '_ {
        move |source| pg_error(&self.name, source)
    }

    fn meta(&self, r: &Row) -> Result<RunMeta, StoreError> {
        let e = self.err();
        let id: String = r.try_get(0).map_err(&e)?;
        let command_line: String = r.try_get(4).map_err(&e)?;
        Ok(RunMeta {
            command_line: parse_command_line(&self.name, &id, &command_line)?,
            started_unix: r.try_get(1).map_err(&e)?,
            label: r.try_get(2).map_err(&e)?,
            command: r.try_get(3).map_err(&e)?,
            git_commit: r.try_get(5).map_err(&e)?,
            host: r.try_get(6).map_err(&e)?,
            id,
        })
    }
}

/// The client's error and its causes: its own message is only the kind
/// (`db error`), the server's words are in the cause.
fn describe(e: &postgres::Error) -> String {
    let mut out = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

fn pg_error(store: &str, source: postgres::Error) -> StoreError {
    StoreError::Postgres {
        store: store.to_string(),
        detail: describe(&source),
        source,
    }
}

/// Brings the store to [`STORE_SCHEMA_VERSION`]. An advisory lock per
/// schema lets several clients open a new store at once; a store of a
/// newer atomlab is refused before anything is written.
fn migrate(client: &mut Client, name: &str, mode: crate::OpenMode) -> Result<(), StoreError> {
    let e = |source| pg_error(name, source);
    let mut tx = client.transaction().map_err(e)?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(hashtext('atomlab-store:' || coalesce(current_schema(), '')))",
    )
    .map_err(e)?;
    let tables: Vec<String> = tx
        .query(
            "SELECT tablename::text FROM pg_catalog.pg_tables
             WHERE schemaname = current_schema()
               AND tablename IN ('atomlab_schema', 'runs', 'records', 'metrics', 'run_capabilities')
             ORDER BY tablename",
            &[],
        )
        .map_err(e)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let version = if tables.iter().any(|t| t == "atomlab_schema") {
        let row = tx
            .query_opt(
                "SELECT version, atomlab_version FROM atomlab_schema ORDER BY version DESC LIMIT 1",
                &[],
            )
            .map_err(e)?;
        let Some(row) = row else {
            return Err(StoreError::NotAStore {
                store: name.to_string(),
                tables: vec!["an empty atomlab_schema table".to_string()],
            });
        };
        let version: i32 = row.try_get(0).map_err(e)?;
        let written_by: String = row.try_get(1).map_err(e)?;
        match u32::try_from(version) {
            Ok(v) if v <= STORE_SCHEMA_VERSION => v,
            _ => {
                return Err(StoreError::TooNew {
                    store: name.to_string(),
                    found: i64::from(version),
                    written_by,
                    supported: STORE_SCHEMA_VERSION,
                    ours: atomlab_core::ATOMLAB_VERSION,
                })
            }
        }
    } else if !tables.is_empty() {
        return Err(StoreError::NotAStore {
            store: name.to_string(),
            tables,
        });
    } else if mode == crate::OpenMode::Existing {
        return Err(StoreError::NoStore {
            store: name.to_string(),
            detail: "the database has no atomlab tables in its current schema".to_string(),
        });
    } else {
        0
    };
    if version < STORE_SCHEMA_VERSION {
        for sql in &MIGRATIONS[version as usize..] {
            tx.batch_execute(sql).map_err(e)?;
        }
        tx.execute("DELETE FROM atomlab_schema", &[]).map_err(e)?;
        tx.execute(
            "INSERT INTO atomlab_schema (version, atomlab_version) VALUES ($1, $2)",
            &[
                &(STORE_SCHEMA_VERSION as i32),
                &atomlab_core::ATOMLAB_VERSION,
            ],
        )
        .map_err(e)?;
    }
    tx.commit().map_err(e)
}

/// The password for `config` when its URL has none: `PGPASSWORD`, else the
/// first matching line of the password file (`PGPASSFILE`, else
/// `~/.pgpass`), as libpq does. libpq ignores a password file that others
/// can read; so does this.
fn password_from_env(
    config: &postgres::Config,
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    if let Some(pw) = env("PGPASSWORD").filter(|p| !p.is_empty()) {
        return Some(pw.as_bytes().to_vec());
    }
    let file = match env("PGPASSFILE").filter(|p| !p.is_empty()) {
        Some(f) => std::path::PathBuf::from(f),
        None => std::path::PathBuf::from(env("HOME")?).join(".pgpass"),
    };
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(&file).ok()?;
        if !meta.is_file() || meta.permissions().mode() & 0o077 != 0 {
            if meta.is_file() {
                eprintln!(
                    "atomlab: warning: password file {} has group or world access; \
                     it is ignored (chmod 0600 it)",
                    file.display()
                );
            }
            return None;
        }
    }
    let text = std::fs::read_to_string(&file).ok()?;
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        Some(postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    let db = config
        .get_dbname()
        .map(str::to_string)
        .unwrap_or_else(|| user.clone());
    pgpass_lookup(&text, &host, &port, &db, &user).map(String::into_bytes)
}

/// The password of the first line of a `.pgpass` text
/// (`hostname:port:database:username:password`, `*` matching anything, `\`
/// escaping `:` and `\`) that matches.
fn pgpass_lookup(text: &str, host: &str, port: &str, db: &str, user: &str) -> Option<String> {
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = Vec::with_capacity(5);
        let mut field = String::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => field.extend(chars.next()),
                ':' if fields.len() < 4 => fields.push(std::mem::take(&mut field)),
                c => field.push(c),
            }
        }
        fields.push(field);
        if fields.len() != 5 {
            continue;
        }
        // libpq matches a Unix-socket host against `localhost` too.
        let host_ok =
            |f: &str| f == "*" || f == host || (host.starts_with('/') && f == "localhost");
        let ok = |f: &str, v: &str| f == "*" || f == v;
        if host_ok(&fields[0]) && ok(&fields[1], port) && ok(&fields[2], db) && ok(&fields[3], user)
        {
            return fields.pop();
        }
    }
    None
}

impl Backend for Pg {
    fn ids_started_between(
        &self,
        lo: f64,
        hi: f64,
        command: &str,
    ) -> Result<Vec<String>, StoreError> {
        // runs_command (command, started_unix, id) covers it.
        let rows = self
            .inner
            .borrow_mut()
            .query(
                "SELECT id FROM runs WHERE command = $3 AND started_unix BETWEEN $1 AND $2
                 ORDER BY started_unix, id",
                &[&lo, &hi, &command],
            )
            .map_err(self.err())?;
        rows.iter()
            .map(|r| r.try_get(0).map_err(self.err()))
            .collect()
    }

    fn save(&mut self, rows: &RunRows<'_>) -> Result<(), StoreError> {
        let name = self.name.clone();
        let e = |source| pg_error(&name, source);
        let inner = self.inner.get_mut();
        let run = inner
            .statement(
                "INSERT INTO runs (id, started_unix, label, command, command_line, git_commit,
                                   host, atomlab_version, schema_version, machine, report)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            )
            .map_err(e)?;
        // One statement per table, whatever the number of rows: the rows go
        // as arrays, so a save is three round trips, not one per metric.
        let records = inner
            .statement(
                "INSERT INTO records (run_id, idx, capability, scenario, variant, parameters, verdict)
                 SELECT $1::text, * FROM unnest($2::int4[], $3::text[], $4::text[], $5::text[],
                                                $6::text[], $7::text[])",
            )
            .map_err(e)?;
        let metrics = inner
            .statement(
                "INSERT INTO metrics (run_id, record_idx, idx, name, unit, median, samples)
                 SELECT $1::text, * FROM unnest($2::int4[], $3::int4[], $4::text[], $5::text[],
                                                $6::float8[], $7::text[])",
            )
            .map_err(e)?;
        let capabilities = inner
            .statement(
                "INSERT INTO run_capabilities (capability, started_unix, run_id)
                 SELECT c, $2, $3 FROM unnest($1::text[]) c",
            )
            .map_err(e)?;
        let m = rows.meta;
        let mut tx = inner.client.transaction().map_err(e)?;
        tx.execute(
            &run,
            &[
                &m.id,
                &m.started_unix,
                &m.label,
                &m.command,
                &rows.command_line,
                &m.git_commit,
                &m.host,
                &rows.atomlab_version,
                &(rows.schema_version as i32),
                &rows.machine,
                &rows.report,
            ],
        )
        .map_err(|source| {
            if source.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                StoreError::DuplicateRun {
                    id: m.id.clone(),
                    store: name.clone(),
                }
            } else {
                e(source)
            }
        })?;
        if !rows.records.is_empty() {
            let r = &rows.records;
            tx.execute(
                &records,
                &[
                    &m.id,
                    &r.iter().map(|x| x.idx).collect::<Vec<_>>(),
                    &r.iter().map(|x| x.capability).collect::<Vec<_>>(),
                    &r.iter().map(|x| x.scenario).collect::<Vec<_>>(),
                    &r.iter().map(|x| x.variant).collect::<Vec<_>>(),
                    &r.iter().map(|x| x.parameters.as_str()).collect::<Vec<_>>(),
                    &r.iter().map(|x| x.verdict.as_deref()).collect::<Vec<_>>(),
                ],
            )
            .map_err(e)?;
        }
        if !rows.metrics.is_empty() {
            let x = &rows.metrics;
            tx.execute(
                &metrics,
                &[
                    &m.id,
                    &x.iter().map(|x| x.record_idx).collect::<Vec<_>>(),
                    &x.iter().map(|x| x.idx).collect::<Vec<_>>(),
                    &x.iter().map(|x| x.name).collect::<Vec<_>>(),
                    &x.iter().map(|x| x.unit.as_str()).collect::<Vec<_>>(),
                    &x.iter().map(|x| x.median).collect::<Vec<_>>(),
                    &x.iter().map(|x| x.samples.as_str()).collect::<Vec<_>>(),
                ],
            )
            .map_err(e)?;
        }
        tx.execute(&capabilities, &[&rows.capabilities, &m.started_unix, &m.id])
            .map_err(e)?;
        tx.commit().map_err(e)
    }

    fn runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, StoreError> {
        let (sql, arg_kinds) = runs_query(filter, |n| format!("${n}"));
        // LIMIT NULL is no limit.
        let limit = (filter.limit > 0).then(|| i64::try_from(filter.limit).unwrap_or(i64::MAX));
        let args: Vec<&(dyn ToSql + Sync)> = arg_kinds
            .iter()
            .map(|a| -> &(dyn ToSql + Sync) {
                match a {
                    QueryArg::Label => &filter.label,
                    QueryArg::Capability => &filter.capability,
                    QueryArg::Limit => &limit,
                }
            })
            .collect();
        let rows = self
            .inner
            .borrow_mut()
            .query(&sql, &args)
            .map_err(self.err())?;
        let mut out: Vec<RunSummary> = Vec::new();
        for r in &rows {
            let id: String = r.try_get(0).map_err(self.err())?;
            if out.last().is_none_or(|s| s.meta.id != id) {
                out.push(RunSummary {
                    meta: self.meta(r)?,
                    records: 0,
                    verdicts: Default::default(),
                });
            }
            let verdict: Option<String> = r.try_get(7).map_err(self.err())?;
            let n: Option<i64> = r.try_get(8).map_err(self.err())?;
            if let (Some(s), Some(n)) = (out.last_mut(), n) {
                add_verdicts(s, verdict, n);
            }
        }
        Ok(out)
    }

    fn ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>, StoreError> {
        // Ids are ASCII below DEL and sort byte-wise: [prefix, prefix + DEL)
        // holds exactly the ids that start with it.
        let upper = format!("{prefix}\u{7f}");
        let rows = self
            .inner
            .borrow_mut()
            .query(
                "SELECT id FROM runs WHERE id >= $1 AND id < $2 ORDER BY id LIMIT $3",
                &[&prefix, &upper, &(limit as i64)],
            )
            .map_err(self.err())?;
        rows.iter()
            .map(|r| r.try_get::<_, String>(0).map_err(self.err()))
            .filter(|id| id.as_ref().map_or(true, |id| id.starts_with(prefix)))
            .collect()
    }

    fn ids_around(&self, id: &str, n: usize) -> Result<Vec<String>, StoreError> {
        let rows = self
            .inner
            .borrow_mut()
            .query(
                "SELECT id FROM (SELECT id FROM runs WHERE id < $1 ORDER BY id DESC LIMIT $2) below
                 UNION ALL
                 SELECT id FROM (SELECT id FROM runs WHERE id > $1 ORDER BY id LIMIT $2) above
                 ORDER BY id",
                &[&id, &(n as i64)],
            )
            .map_err(self.err())?;
        rows.iter()
            .map(|r| r.try_get(0).map_err(self.err()))
            .collect()
    }

    fn fetch(&self, id: &str) -> Result<Option<(RunMeta, String)>, StoreError> {
        let rows = self
            .inner
            .borrow_mut()
            .query(
                &format!("SELECT {META_COLUMNS}, report FROM runs WHERE id = $1"),
                &[&id],
            )
            .map_err(self.err())?;
        rows.first()
            .map(|r| Ok((self.meta(r)?, r.try_get(7).map_err(self.err())?)))
            .transpose()
    }

    fn latest_with_label(&self, label: &str) -> Result<Option<RunMeta>, StoreError> {
        let rows = self
            .inner
            .borrow_mut()
            .query(
                &format!(
                    "SELECT {META_COLUMNS} FROM runs WHERE label = $1
                     ORDER BY started_unix DESC, id DESC LIMIT 1"
                ),
                &[&label],
            )
            .map_err(self.err())?;
        rows.first().map(|r| self.meta(r)).transpose()
    }

    fn with_label(&self, label: &str) -> Result<Vec<(RunMeta, String)>, StoreError> {
        let rows = self
            .inner
            .borrow_mut()
            .query(
                &format!(
                    "SELECT {META_COLUMNS}, report FROM runs WHERE label = $1
                     ORDER BY started_unix, id"
                ),
                &[&label],
            )
            .map_err(self.err())?;
        rows.iter()
            .map(|r| Ok((self.meta(r)?, r.try_get(7).map_err(self.err())?)))
            .collect()
    }

    fn count_runs(&self) -> Result<u64, StoreError> {
        let rows = self
            .inner
            .borrow_mut()
            .query("SELECT count(*) FROM runs", &[])
            .map_err(self.err())?;
        let n: i64 = rows
            .first()
            .map(|r| r.try_get(0))
            .transpose()
            .map_err(self.err())?
            .unwrap_or(0);
        Ok(n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_lines_match_as_libpq_does() {
        let text = "# comment\n\
                    other:5432:*:bob:wrong\n\
                    db.example:5432:atomlab:bob:s3cr\\:et\n\
                    *:*:*:*:fallback\n";
        assert_eq!(
            pgpass_lookup(text, "db.example", "5432", "atomlab", "bob").as_deref(),
            Some("s3cr:et")
        );
        assert_eq!(
            pgpass_lookup(text, "db.example", "5433", "atomlab", "bob").as_deref(),
            Some("fallback")
        );
        assert_eq!(pgpass_lookup("h:1:d:u:p\n", "h", "1", "d", "x"), None);
        assert_eq!(
            pgpass_lookup("localhost:5432:d:u:p\n", "/run/pg", "5432", "d", "u").as_deref(),
            Some("p")
        );
    }

    #[test]
    fn password_comes_from_pgpassword_then_the_password_file() {
        let dir = std::env::temp_dir().join(format!("atomlab-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pgpass");
        std::fs::write(&file, "h:5432:db:u:from-file\n").unwrap();
        let config: postgres::Config = "postgres://u@h/db".parse().unwrap();
        let env = |vars: Vec<(&'static str, std::ffi::OsString)>| {
            move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())
        };
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(
            password_from_env(&config, env(vec![("PGPASSWORD", "from-env".into())])),
            Some(b"from-env".to_vec())
        );
        assert_eq!(
            password_from_env(&config, env(vec![("PGPASSFILE", file.clone().into())])),
            Some(b"from-file".to_vec())
        );
        std::fs::write(dir.join(".pgpass"), "*:*:*:*:home\n").unwrap();
        std::fs::set_permissions(dir.join(".pgpass"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        assert_eq!(
            password_from_env(&config, env(vec![("HOME", dir.clone().into())])),
            Some(b"home".to_vec())
        );
        // Readable by others: ignored, as libpq does.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            password_from_env(&config, env(vec![("PGPASSFILE", file.clone().into())])),
            None
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
