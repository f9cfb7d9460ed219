//! The tables every subcommand prints, as snapshots: fixed runs (saved
//! `--json` documents with their run's facts, in tests/snapshots/fixtures)
//! are imported into a scratch store and shown, so timings cannot make the
//! snapshots flaky; `atomlab show` prints what the command printed
//! (show_cli.rs, check_show_cli.rs, run_cli.rs, audit_show.rs and
//! load_cli.rs check that). `runs` lists the imported runs and `compare`
//! compares two of the documents. The HTML report's tables are snapshot
//! too. `ATOMLAB_UPDATE_SNAPSHOTS=1` rewrites
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

#[test]
fn audit_table() {
    shown("audit");
}

#[test]
fn suite_summary() {
    shown("suite");
}

/// `atomlab runs`: the imported runs, newest first, with their ids,
/// times, commands (unknown for a bare document), record and verdict
/// counts and hosts.
#[test]
fn runs_table() {
    let d = scratch("snap-runs");
    let store = d.join("runs.db");
    let store = store.to_str().unwrap();
    for name in ["bench-timed", "check", "stress", "audit"] {
        import(store, name);
    }
    let o = with_store(store, &["runs"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    snapshot::assert("runs", &text(&o.stdout));
    let _ = std::fs::remove_dir_all(&d);
}

/// `atomlab compare A.json B.json`: the bench run against a copy of it
/// whose times are 10% longer (3 runs a side: too few to call it worse).
#[test]
fn compare_table() {
    let file = |name: &str| {
        snapshot::dir()
            .join(format!("fixtures/{name}.json"))
            .to_str()
            .unwrap()
            .to_string()
    };
    let (a, b) = (file("bench-timed"), file("bench-timed-slower"));
    let o = cli_support::atomlab(&["compare", &a, &b]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The sides are named by their paths, which differ from checkout to
    // checkout.
    let dir = snapshot::dir().join("fixtures");
    let out = text(&o.stdout).replace(dir.to_str().unwrap(), "FIXTURES");
    snapshot::assert("compare", &out);
}

/// `atomlab machine`'s table (atomlab-report's machine view, which the
/// command prints), drawn from a saved fingerprint: the live one differs
/// from machine to machine.
#[test]
fn machine_table() {
    let file = snapshot::dir().join("fixtures/bench-timed.json");
    let doc: atomlab_core::Report =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let mut out = Vec::new();
    atomlab_report::machine_view::write_terminal(&mut out, &doc.machine).unwrap();
    snapshot::assert("machine", &text(&out));
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
