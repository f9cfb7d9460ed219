//! `atomlab show RUN` prints what the command printed: for every bench
//! table kind and for stress, the live stdout and the saved run's `show`
//! stdout are the same bytes (progress and notes go to stderr). The load
//! run's counterpart is in load_cli.rs, beside its test servers.

mod cli_support;

use cli_support::{scratch, text, with_store};

/// The id of the store's newest run.
fn newest(store: &str) -> String {
    let o = with_store(store, &["runs", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).expect("runs --json");
    runs["runs"][0]["meta"]["id"]
        .as_str()
        .expect("a run id")
        .to_string()
}

/// Runs `args` saving into `store`, then shows the run: same stdout.
fn shows_what_it_printed(store: &str, args: &[&str]) {
    let live = with_store(store, args);
    assert!(
        matches!(live.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        text(&live.stderr)
    );
    assert!(!live.stdout.is_empty(), "{args:?} printed nothing");
    let shown = with_store(store, &["show", &newest(store)]);
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown.stderr));
    assert_eq!(text(&shown.stdout), text(&live.stdout), "{args:?}");
}

#[test]
fn show_prints_every_bench_table_as_bench_printed_it() {
    let d = scratch("show-bench");
    let store = d.join("runs.db");
    let store = store.to_str().unwrap();
    let short = ["--duration", "20ms", "--warmup", "0", "--runs", "2"];
    for args in [
        // timed
        &[
            "bench",
            "counter",
            "--variant",
            "fetch_add",
            "--threads",
            "1,2",
        ][..],
        // fixed work
        &[
            "bench",
            "lock",
            "--variant",
            "tas",
            "--increments",
            "2000",
            "--tasks",
            "4",
            "--threads",
            "2",
        ],
        // fixed rate
        &[
            "bench",
            "counter",
            "--variant",
            "fetch_add",
            "--ordering",
            "relaxed",
            "--threads",
            "1",
            "--rate",
            "2k",
        ],
        // round trip
        &["bench", "pingpong", "--no-pin"],
        // queue
        &[
            "bench",
            "spsc",
            "--variant",
            "fences",
            "--rate",
            "2k",
            "--placement",
            "same-core",
            "--wait",
            "notify",
        ],
    ] {
        let mut a = args.to_vec();
        a.extend(short);
        shows_what_it_printed(store, &a);
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn show_prints_the_stress_tables_as_stress_printed_them() {
    let d = scratch("show-stress");
    let store = d.join("runs.db");
    let store = store.to_str().unwrap();
    shows_what_it_printed(
        store,
        &[
            "stress",
            "refcount",
            "--variant",
            "raw",
            "--ops",
            "5000",
            "--seed",
            "3",
        ],
    );
    let _ = std::fs::remove_dir_all(&d);
}
