//! The PostgreSQL store: the same checks as SQLite's, against the server in
//! `ATOMLAB_TEST_POSTGRES` (`eval "$(scripts/ci-postgres)"` starts one).
//! Each test works in a schema of its own, dropped at the end, so the tests
//! run in parallel. Without the variable they say so and pass.
#![cfg(feature = "postgres")]

mod common;

use atomlab_store::{Location, RunMeta, Store, StoreError, STORE_SCHEMA_VERSION};
use postgres::{Client, NoTls};

const SERVER_ENV: &str = "ATOMLAB_TEST_POSTGRES";

fn server() -> Option<String> {
    match std::env::var(SERVER_ENV) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            eprintln!("skipped: set {SERVER_ENV}=postgres://… to run the PostgreSQL tests");
            None
        }
    }
}

/// A fresh schema on the test server, dropped with everything in it when
/// this goes out of scope; `location` points the store at it.
struct Schema {
    server: String,
    name: String,
    location: Location,
}

impl Schema {
    fn new(server: &str) -> Schema {
        let name = format!("t_{:016x}", common::random_u64());
        let mut admin = Client::connect(server, NoTls).unwrap();
        admin
            .batch_execute(&format!("CREATE SCHEMA {name}"))
            .unwrap();
        let sep = if server.contains('?') { '&' } else { '?' };
        let url = format!("{server}{sep}options=-csearch_path%3D{name}");
        Schema {
            server: server.to_string(),
            location: Location::Postgres(url),
            name,
        }
    }

    fn admin(&self) -> Client {
        Client::connect(&self.server, NoTls).unwrap()
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        if let Ok(mut admin) = Client::connect(&self.server, NoTls) {
            let _ = admin.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name));
        }
    }
}

#[test]
fn pg_round_trip() {
    let Some(server) = server() else { return };
    let schema = Schema::new(&server);
    common::check_round_trip(&schema.location);
    // The tables are in the test's schema, not elsewhere.
    let n: i64 = schema
        .admin()
        .query_one(&format!("SELECT count(*) FROM {}.runs", schema.name), &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 4);
}

#[test]
fn pg_filters_limit_and_labels() {
    let Some(server) = server() else { return };
    let schema = Schema::new(&server);
    common::check_filters(&schema.location);
}

#[test]
fn pg_four_writers_at_once_all_land() {
    let Some(server) = server() else { return };
    let schema = Schema::new(&server);
    // The schema is empty: the four also race to create the tables.
    common::check_concurrent_saves(&schema.location, 4, 25);
}

#[test]
fn pg_a_store_of_a_newer_atomlab_is_refused_and_left_alone() {
    let Some(server) = server() else { return };
    let schema = Schema::new(&server);
    let mut store = Store::open(&schema.location).unwrap();
    store
        .save(
            &RunMeta::new("machine", vec![], None),
            &common::report("machine", &[]),
        )
        .unwrap();
    drop(store);
    let mut admin = schema.admin();
    admin
        .execute(
            &format!(
                "UPDATE {}.atomlab_schema SET version = $1, atomlab_version = '9.9.9'",
                schema.name
            ),
            &[&(STORE_SCHEMA_VERSION as i32 + 1)],
        )
        .unwrap();
    match Store::open(&schema.location) {
        Err(e @ StoreError::TooNew { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.contains("9.9.9") && msg.contains("not changed"),
                "{msg}"
            );
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    let row = admin
        .query_one(
            &format!(
                "SELECT (SELECT version FROM {0}.atomlab_schema), (SELECT count(*) FROM {0}.runs)",
                schema.name
            ),
            &[],
        )
        .unwrap();
    assert_eq!(row.get::<_, i32>(0), STORE_SCHEMA_VERSION as i32 + 1);
    assert_eq!(row.get::<_, i64>(1), 1);
}

#[test]
fn pg_tables_of_something_else_are_refused() {
    let Some(server) = server() else { return };
    let schema = Schema::new(&server);
    schema
        .admin()
        .batch_execute(&format!("CREATE TABLE {}.runs (x INTEGER)", schema.name))
        .unwrap();
    match Store::open(&schema.location) {
        Err(StoreError::NotAStore { tables, .. }) => assert_eq!(tables, ["runs"]),
        other => panic!("expected NotAStore, got {other:?}"),
    }
}

/// Needs no server: nothing listens on port 1.
#[test]
fn pg_unreachable_server_is_named_without_its_password() {
    let started = std::time::Instant::now();
    let url = "postgres://atomlab:hunter2@127.0.0.1:1/atomlab";
    let err = Store::open(&Location::Postgres(url.into())).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, StoreError::PostgresConnect { .. }), "{err:?}");
    assert!(
        msg.contains("postgres://atomlab@127.0.0.1:1/atomlab"),
        "{msg}"
    );
    assert!(!msg.contains("hunter2"), "the password leaked: {msg}");
    assert!(msg.contains("--store"), "says what to do: {msg}");
    eprintln!("refused in {:?}: {msg}", started.elapsed());

    let bad = Store::open(&Location::Postgres("postgres://u:pw@h:notaport/db".into())).unwrap_err();
    assert!(matches!(bad, StoreError::BadUrl { .. }), "{bad:?}");
    assert!(!bad.to_string().contains("pw@"), "{bad}");
}

#[test]
fn pg_reading_never_creates_the_tables() {
    let Some(server) = server() else { return };
    let schema = Schema::new(&server);
    match Store::open_existing(&schema.location) {
        Err(e @ StoreError::NoStore { .. }) => {
            assert!(e.to_string().contains("no atomlab tables"), "{e}")
        }
        other => panic!("expected NoStore, got {other:?}"),
    }
    let n: i64 = schema
        .admin()
        .query_one(
            "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = $1",
            &[&schema.name],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "no table was made");
    drop(Store::open(&schema.location).unwrap());
    assert_eq!(
        Store::open_existing(&schema.location)
            .unwrap()
            .count_runs()
            .unwrap(),
        0
    );
}
