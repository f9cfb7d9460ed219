//! The tables every subcommand prints, as snapshots: fixed runs (saved
//! `--json` documents with their run's facts, in tests/snapshots/fixtures)
//! are imported into a scratch store and shown, so timings cannot make the
//! snapshots flaky; `atomlab show` prints what the command printed
//! (show_cli.rs, check_show_cli.rs, load_cli.rs check that). The HTML
//! report's tables are snapshot too. `ATOMLAB_UPDATE_SNAPSHOTS=1` rewrites
//! the snapshots after an intended change.

mod cli_support;

use cli_support::{scratch, snapshot, text, with_store};

/// Imports the fixture `NAME.json` into `store` and returns its run id.
fn import(store: &str, name: &str) -> String {
    let file = snapshot::dir().join(format!("fixtures/{name}.json"));
    let o = with_store(store, &["import", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o.stderr));
    text(&o.stdout).trim().to_string()
}

/// `atomlab show` of the fixture `NAME`, as the snapshot `show-NAME`.
fn shown(name: &str) {
    let d = scratch(&format!("snap-{name}"));
    let store = d.join("runs.db");
    let store = store.to_str().unwrap();
    let id = import(store, name);
    let o = with_store(store, &["show", &id]);
    assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o.stderr));
    snapshot::assert(&format!("show-{name}"), &text(&o.stdout));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bench_timed_table() {
    shown("bench-timed");
}

#[test]
fn bench_fixed_work_table() {
    shown("bench-fixed-work");
}

#[test]
fn bench_fixed_rate_table() {
    shown("bench-fixed-rate");
}

#[test]
fn bench_round_trip_table() {
    shown("bench-round-trip");
}

#[test]
fn bench_queue_table() {
    shown("bench-queue");
}

#[test]
fn bench_every_kind_in_one_run() {
    shown("bench-every-kind");
}

#[test]
fn stress_table() {
    shown("stress");
}

#[test]
fn load_view() {
    shown("load");
}

#[test]
fn check_table() {
    shown("check");
}

#[test]
fn run_table() {
    shown("run");
}

/// The tables of the HTML report of the bench runs (the charts are left
/// out: they are plotters' SVG, not tables).
#[test]
fn report_bench_tables() {
    let d = scratch("snap-report");
    let store = d.join("runs.db");
    let store = store.to_str().unwrap();
    let mut args = vec!["report".to_string()];
    for name in [
        "bench-timed",
        "bench-fixed-work",
        "bench-round-trip",
        "bench-every-kind",
    ] {
        args.push(import(store, name));
    }
    let html = d.join("report.html");
    args.extend(["-o".into(), html.to_str().unwrap().into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = with_store(store, &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&html).unwrap();
    let mut tables = String::new();
    let mut rest = html.as_str();
    while let Some(start) = rest.find("<table") {
        let end = rest[start..].find("</table>").expect("a closed table") + start + 8;
        tables.push_str(&rest[start..end]);
        tables.push('\n');
        rest = &rest[end..];
    }
    assert!(tables.contains("ns/op"), "{tables}");
    snapshot::assert("report-bench-tables", &tables);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_diff_names_the_lines_that_differ() {
    assert_eq!(
        snapshot::diff("a\nb\nc\n", "a\nB\nc\n"),
        "  a\n- b\n+ B\n  c\n"
    );
    assert_eq!(snapshot::diff("a\n", "a\n"), "  a\n");
}
