//! The tables every subcommand prints, as snapshots: fixed runs (saved
//! `--json` documents with their run's facts, in tests/snapshots/fixtures)
//! are imported into a scratch store and shown, so timings cannot make the
//! snapshots flaky; `atomlab show` prints what the command printed
//! (show_cli.rs, check_show_cli.rs, run_cli.rs, audit_show.rs and
//! load_cli.rs check that). `runs` lists the imported runs and `compare`
//! compares two of the documents. The HTML report's tables are snapshot
//! too. `ATOMLAB_UPDATE_SNAPSHOTS=1` rewrites
//! the snapshots after an intended change.
//!
//! Every terminal snapshot fits 100 columns (`every_terminal_snapshot_fits_100_columns`),
//! as atomlab-report's `table::WIDTH` promises: a wide table is wrapped or
//! cut into panels, a long note wrapped.

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

/// `atomlab compare A B` of two documents: the load fixture and the spsc
/// fixture's records, and the same with every latency 30% longer and every
/// rate 10% lower. Each record's key heads its metrics once; medians are in
/// their units (µs, MB/s).
#[test]
fn compare_table_of_load_and_queue() {
    let d = scratch("snap-compare-load-queue");
    let read = |name: &str| -> serde_json::Value {
        let file = snapshot::dir().join(format!("fixtures/{name}.json"));
        serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
    };
    let mut a = read("load");
    let queue = read("bench-queue");
    for r in queue["records"].as_array().unwrap() {
        a["records"].as_array_mut().unwrap().push(r.clone());
    }
    let mut b = a.clone();
    for r in b["records"].as_array_mut().unwrap() {
        for m in r["metrics"].as_array_mut().unwrap() {
            let name = m["name"].as_str().unwrap().to_string();
            let scale = if name.contains("latency") || name.ends_with("_ns") {
                1.3
            } else if name.contains("per_sec") {
                0.9
            } else {
                1.0
            };
            for x in m["samples"].as_array_mut().unwrap() {
                *x = (x.as_f64().unwrap() * scale).into();
            }
        }
    }
    for (name, doc) in [("a.json", &a), ("b.json", &b)] {
        std::fs::write(d.join(name), serde_json::to_vec(doc).unwrap()).unwrap();
    }
    let o = cli_support::command()
        .current_dir(&d)
        .args(["compare", "a.json", "b.json"])
        .output()
        .unwrap();
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        text(&o.stderr)
    );
    let out = text(&o.stdout);
    assert!(out.contains(" µs "), "{out}");
    snapshot::assert("compare-load-queue", &out);
    let _ = std::fs::remove_dir_all(&d);
}

/// `atomlab runs` of every fixture: one row per run within 100 columns,
/// the command wrapped in its cell.
#[test]
fn runs_table() {
    let d = scratch("snap-runs");
    let store = d.join("runs.db");
    let store = store.to_str().unwrap();
    for name in FIXTURES.iter().chain(&["audit"]) {
        import(store, name);
    }
    let o = with_store(store, &["runs", "--limit", "100"]);
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
    atomlab_report::kinds::machine::write_terminal(&mut out, &doc.machine).unwrap();
    snapshot::assert("machine", &text(&out));
}

/// The fixtures, one per kind of terminal view.
const FIXTURES: [&str; 10] = [
    "bench-timed",
    "bench-fixed-work",
    "bench-fixed-rate",
    "bench-round-trip",
    "bench-queue",
    "bench-every-kind",
    "stress",
    "load",
    "check",
    "run",
];

/// Every snapshot of what a subcommand prints in a terminal (all but the
/// HTML report's) fits 100 columns: the tables, their notes, the load
/// view's lines. Display columns, not bytes: `µs` is two columns wide in
/// UTF-8 bytes and one on screen.
#[test]
fn every_terminal_snapshot_fits_100_columns() {
    let mut walked = 0;
    let mut wide = Vec::new();
    for entry in std::fs::read_dir(snapshot::dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".txt") || name.starts_with("report-") {
            continue;
        }
        walked += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let columns = line.chars().count();
            if columns > 100 {
                wide.push(format!("{name}:{}: {columns} columns: {line}", i + 1));
            }
        }
    }
    // The ten show-* snapshots, compare and runs.
    assert!(walked >= 12, "only {walked} snapshots found");
    assert!(
        wide.is_empty(),
        "lines wider than 100 columns:\n{}",
        wide.join("\n")
    );
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
