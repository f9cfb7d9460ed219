//! `atomlab show RUN` of a saved `check` prints what `check` printed: the
//! same table, from the saved records.

mod cli_support;

use cli_support::{golden, scratch, text, with_store as run};

/// The id of the store's newest run.
fn newest(store: &str) -> String {
    let o = run(store, &["runs", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).expect("runs --json");
    let runs = &runs["runs"];
    runs[0]["meta"]["id"]
        .as_str()
        .expect("a run id")
        .to_string()
}

/// Before: `show` dropped the columns of models that applied to no test
/// (aarch64 here, and every model but sc, x86tso and lkmm in the second
/// run), folded the x86 and x86_64 tests of the same name into one row,
/// and printed neither the flags nor the lines under the table.
#[test]
fn show_prints_the_table_check_printed() {
    let d = scratch("check-show");
    let store = d.join("runs.db");
    let store = store.to_str().unwrap();
    let (x86, x86_64) = (golden("x86"), golden("x86_64"));
    let (lb, flagged) = (
        golden("c/LB+fence.acqs.litmus"),
        golden("linux/CTRL+join-plain.litmus"),
    );
    for args in [
        &["check", &x86, &x86_64, &lb, &flagged] as &[&str],
        &[
            "check",
            "--model",
            "sc,x86tso,aarch64,lkmm",
            &x86,
            &x86_64,
            &flagged,
        ],
    ] {
        let live = run(store, args);
        assert_eq!(live.status.code(), Some(0), "{}", text(&live.stderr));
        let shown = run(store, &["show", &newest(store)]);
        assert_eq!(shown.status.code(), Some(0), "{}", text(&shown.stderr));
        assert_eq!(text(&shown.stdout), text(&live.stdout), "{args:?}");
        let table = text(&live.stdout);
        assert!(table.contains("| aarch64"), "{table}");
        assert!(table.contains("flag data-race"), "{table}");
        assert!(table.contains("\"-\": model does not apply"), "{table}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
