//! The results store from the command line: saving, listing, showing,
//! exporting, importing, comparing and reporting, and the bad inputs that
//! must exit 2 without losing anything. Each test uses its own SQLite file;
//! with ATOMLAB_TEST_POSTGRES=postgres://… the shard test also runs against
//! that server (`.ci/run` starts one with scripts/ci-postgres).

mod cli_support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("atomlab-store-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// atomlab with `--store STORE`.
fn run(store: &str, args: &[&str]) -> Output {
    cli_support::command()
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("run atomlab")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn golden(rel: &str) -> String {
    format!(
        "{}/../atomlab-model/tests/litmus/{rel}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn runs_json(store: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["runs", "--json", "--limit", "0"];
    args.extend(extra);
    let o = run(store, &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    serde_json::from_slice::<Value>(&o.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

const TINY_BENCH: &[&str] = &[
    "bench",
    "counter",
    "--variant",
    "fetch_add",
    "--threads",
    "1",
    "--duration",
    "10ms",
    "--warmup",
    "2ms",
    "--runs",
    "5",
];

#[test]
fn save_list_show_export_import() {
    let d = scratch("roundtrip");
    let db = d.join("r.db").display().to_string();
    let mut args = vec!["--label", "first"];
    args.extend(TINY_BENCH);
    let o = run(&db, &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("saved run ") && err.contains("(label first)"),
        "{err}"
    );
    let o = run(&db, &["check", &golden("x86/MP.litmus")]);
    assert_eq!(o.status.code(), Some(0));
    // --no-save saves nothing.
    let o = run(&db, &["--no-save", "check", &golden("x86/MP.litmus")]);
    assert!(!text(&o.stderr).contains("saved run"));

    let runs = runs_json(&db, &[]);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0]["meta"]["command"], "check", "newest first");
    assert_eq!(runs[1]["meta"]["label"], "first");
    assert_eq!(runs_json(&db, &["--capability", "bench"]).len(), 1);
    assert_eq!(runs_json(&db, &["--label", "first"]).len(), 1);
    let bench_id = runs[1]["meta"]["id"].as_str().unwrap().to_string();

    // show: the table as bench printed it; --json: the same document.
    let o = run(&db, &["show", &bench_id]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("| counter  | fetch_add"),
        "{}",
        text(&o.stdout)
    );
    let o = run(&db, &["--json", "show", &bench_id]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["command"], "bench");
    assert_eq!(doc["records"][0]["variant"], "fetch_add");

    // export: JSON is the document; CSV has a row per metric.
    let o = run(&db, &["export", &bench_id]);
    assert_eq!(serde_json::from_slice::<Value>(&o.stdout).unwrap(), doc);
    let o = run(&db, &["export", &bench_id, "--format", "csv"]);
    let csv = text(&o.stdout);
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("run,label,host,capability,scenario,variant"),
        "{header}"
    );
    let metrics = doc["records"][0]["metrics"].as_array().unwrap().len();
    assert_eq!(csv.lines().count(), 1 + metrics, "{csv}");
    // n is the runs kept: a run the harness had to leave out (a starved
    // thread on a busy machine) is not counted.
    let n = doc["records"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "ns_per_op")
        .unwrap()["summary"]["n"]
        .clone();
    assert!(
        csv.contains(&format!(",ns_per_op,nanos_per_op,clock_gettime,{n},")),
        "{csv}"
    );

    // import: a document from elsewhere becomes a new run.
    let file = d.join("doc.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let o = run(
        &db,
        &["--label", "imported", "import", file.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let new_id = text(&o.stdout).trim().to_string();
    assert_ne!(new_id, bench_id);
    assert_eq!(runs_json(&db, &["--label", "imported"]).len(), 1);
}

#[test]
fn bad_input_exits_2_and_loses_nothing() {
    let d = scratch("bad");
    let db = d.join("r.db").display().to_string();
    let o = run(&db, &["check", &golden("x86/MP.litmus")]);
    assert_eq!(o.status.code(), Some(0));
    let refuse = |args: &[&str], store: &str, words: &[&str]| {
        let o = run(store, args);
        let e = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        for w in words {
            assert!(e.contains(w), "{args:?}: stderr lacks {w:?}: {e}");
        }
        assert!(!e.contains("panicked"), "{e}");
    };
    refuse(
        &["show", "19990101-000000-0000"],
        &db,
        &["19990101-000000-0000"],
    );
    refuse(&["compare", "no-such-label", "x"], &db, &["no-such-label"]);
    // JSON of another schema version.
    let old = d.join("old.json");
    std::fs::write(
        &old,
        br#"{"schema_version": 1, "machine": {}, "records": []}"#,
    )
    .unwrap();
    refuse(
        &["import", old.to_str().unwrap()],
        &db,
        &["schema_version 1", "schema_version 2"],
    );
    let junk = d.join("junk.json");
    std::fs::write(&junk, b"not json").unwrap();
    refuse(&["import", junk.to_str().unwrap()], &db, &["not JSON"]);
    // A file that is not a database: refused before the command runs, and
    // never overwritten.
    let notdb = d.join("notes.txt");
    std::fs::write(&notdb, b"my notes, not a database\n").unwrap();
    let before = std::fs::read(&notdb).unwrap();
    refuse(
        &["check", &golden("x86/MP.litmus")],
        notdb.to_str().unwrap(),
        &["notes.txt", "not a SQLite database"],
    );
    assert_eq!(std::fs::read(&notdb).unwrap(), before);
    let o = run(
        notdb.to_str().unwrap(),
        &["check", &golden("x86/MP.litmus")],
    );
    assert!(o.stdout.is_empty(), "nothing ran");
    // An unreachable PostgreSQL: a clear error, quickly.
    let start = std::time::Instant::now();
    refuse(
        &["runs"],
        "postgres://atomlab@127.0.0.1:1/none",
        &["127.0.0.1:1"],
    );
    assert!(start.elapsed().as_secs() < 30);
    // The earlier run is still there.
    assert_eq!(runs_json(&db, &[]).len(), 1);
}

#[test]
fn two_processes_saving_at_once_both_land() {
    let d = scratch("concurrent");
    let db = d.join("r.db").display().to_string();
    let children: Vec<_> = (0..4)
        .map(|_| {
            cli_support::command()
                .args(["--store", &db, "check", &golden("x86/MP.litmus")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    assert_eq!(runs_json(&db, &[]).len(), 4);
}

/// A fabricated pair of bench documents: B's ns/op `factor` times A's.
fn bench_docs(d: &Path, factor: f64) -> (String, String) {
    let o = cli_support::command()
        .args(["--no-save", "--json"])
        .args(TINY_BENCH)
        .output()
        .unwrap();
    let mut a: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut b = a.clone();
    let samples = [3.0, 3.01, 2.99, 3.02, 2.98];
    let set = |doc: &mut Value, f: f64| {
        for m in doc["records"][0]["metrics"].as_array_mut().unwrap() {
            if m["name"] == "ns_per_op" {
                m["samples"] = samples.iter().map(|s| s * f).collect::<Vec<f64>>().into();
            }
        }
    };
    set(&mut a, 1.0);
    set(&mut b, factor);
    let (pa, pb) = (d.join("a.json"), d.join("b.json"));
    std::fs::write(&pa, serde_json::to_vec(&a).unwrap()).unwrap();
    std::fs::write(&pb, serde_json::to_vec(&b).unwrap()).unwrap();
    (pa.display().to_string(), pb.display().to_string())
}

#[test]
fn compare_gates_on_a_regression_beyond_the_threshold() {
    let d = scratch("compare");
    let db = d.join("r.db").display().to_string();
    let (a, b) = bench_docs(&d, 1.2);
    let o = run(&db, &["compare", &a, &b, "--metric", "ns_per_op"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", text(&o.stderr));
    assert!(
        out.contains("worse (regression)") && out.contains("+20.00%"),
        "{out}"
    );
    // A gate of 50 % lets the same 20 % through.
    let o = run(
        &db,
        &[
            "compare",
            &a,
            &b,
            "--metric",
            "ns_per_op",
            "--threshold",
            "50",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    // Faster is not a regression.
    let o = run(&db, &["compare", &b, &a, "--metric", "ns_per_op"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("better"));
    // --json: the one document shape, a record per compared metric.
    let o = run(&db, &["--json", "compare", &a, &b, "--metric", "ns_per_op"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["command"], "compare");
    assert_eq!(v["records"][0]["verdict"], "FAIL");
    // A record the harness flagged is compared, and the output says so.
    let mut flagged: Value = serde_json::from_slice(&std::fs::read(&b).unwrap()).unwrap();
    flagged["records"][0]["flags"] =
        serde_json::json!([{"kind": "not_contended", "detail": "test"}]);
    let fb = d.join("flagged.json");
    std::fs::write(&fb, serde_json::to_vec(&flagged).unwrap()).unwrap();
    let o = run(
        &db,
        &["compare", &a, fb.to_str().unwrap(), "--threshold", "50"],
    );
    let out = text(&o.stdout);
    assert!(
        out.contains("note: 1 flagged record(s) in B") && out.contains("not contended as asked"),
        "{out}"
    );
    // An unknown metric is bad input.
    let o = run(&db, &["compare", &a, &b, "--metric", "furlongs"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn compare_lists_changed_verdicts_first() {
    let d = scratch("verdicts");
    let db = d.join("r.db").display().to_string();
    let write = |name: &str, body: &str| {
        let p = d.join(name);
        std::fs::write(&p, body).unwrap();
        p.display().to_string()
    };
    // One test name, two fences: MFENCE forbids SB's relaxed outcome,
    // LFENCE/SFENCE do not.
    let sb = std::fs::read_to_string(golden("x86/SB+lfence-sfence.litmus")).unwrap();
    let sbf = std::fs::read_to_string(golden("x86/SB+mfences.litmus")).unwrap();
    let name = |s: &str| {
        s.lines()
            .next()
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    let fenced = write("a.litmus", &sbf.replacen(&name(&sbf), "SBX", 1));
    let plain = write("b.litmus", &sb.replacen(&name(&sb), "SBX", 1));
    for (label, f) in [("fenced", &fenced), ("plain", &plain)] {
        let o = run(&db, &["--label", label, "check", "--model", "x86tso", f]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let o = run(&db, &["compare", "fenced", "plain"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let changed = out.find("changed verdict").expect(&out);
    assert!(
        out[changed..].contains("Never") && out[changed..].contains("Sometimes"),
        "{out}"
    );
}

/// `--shard I/N` runs from N processes under one label read as one run:
/// against SQLite always, and against PostgreSQL when a server is given.
#[test]
fn shards_of_a_label_merge() {
    let d = scratch("shards");
    let mut stores = vec![d.join("r.db").display().to_string()];
    match std::env::var("ATOMLAB_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => stores.push(url),
        _ => eprintln!(
            "skipped the PostgreSQL half: set ATOMLAB_TEST_POSTGRES=postgres://… (scripts/ci-postgres starts a server)"
        ),
    }
    let dir = golden("x86");
    for store in &stores {
        let label = format!("corpus-{}-{}", std::process::id(), stores.len());
        let children: Vec<_> = (0..3)
            .map(|i| {
                cli_support::command()
                    .args([
                        "--store", store, "--label", &label, "check", "--model", "x86tso",
                    ])
                    .args(["--shard", &format!("{i}/3"), &dir])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{store}: {}", text(&o.stderr));
        }
        let o = run(store, &["--label", &label, "--json", "runs"]);
        let runs: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(runs.as_array().unwrap().len(), 3, "{store}");
        // The whole corpus in one process, for reference.
        let o = run(
            store,
            &["--no-save", "--json", "check", "--model", "x86tso", &dir],
        );
        let whole: Value = serde_json::from_slice(&o.stdout).unwrap();
        // compare reads the label's shards as one run: every record matched.
        let file = d.join("whole.json");
        std::fs::write(&file, serde_json::to_vec(&whole).unwrap()).unwrap();
        let o = run(store, &["compare", file.to_str().unwrap(), &label]);
        let out = text(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{store}: {out}{}",
            text(&o.stderr)
        );
        assert!(!out.contains("only in"), "{store}: {out}");
        assert!(out.contains("(3 runs)"), "{store}: {out}");
        // report --label draws the three shards together.
        let html = d.join("shards.html");
        let o = run(
            store,
            &["--label", &label, "report", "-o", html.to_str().unwrap()],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains("MP") && page.contains("SB"), "{store}");
    }
}

#[test]
fn interleave_runs_both_commands_in_turn_and_saves_them() {
    let d = scratch("interleave");
    let db = d.join("r.db").display().to_string();
    let mut args = vec![
        "--label",
        "il",
        "compare",
        "--interleave",
        "2",
        "--threshold",
        "1000",
        "--",
    ];
    args.extend(TINY_BENCH);
    args.push("--");
    args.extend(TINY_BENCH);
    let o = run(&db, &args);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(out.contains("ns_per_op"), "{out}");
    let err = text(&o.stderr);
    let order: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("atomlab compare: round "))
        .collect();
    assert_eq!(order.len(), 4, "{err}");
    assert!(
        order[0].starts_with("1/2, A")
            && order[1].starts_with("1/2, B")
            && order[2].starts_with("2/2, A"),
        "{order:?}"
    );
    assert_eq!(runs_json(&db, &["--label", "il-A"]).len(), 2);
    assert_eq!(runs_json(&db, &["--label", "il-B"]).len(), 2);
}

#[test]
fn report_writes_one_self_contained_file() {
    let d = scratch("report");
    let db = d.join("r.db").display().to_string();
    let o = run(&db, TINY_BENCH);
    assert_eq!(o.status.code(), Some(0));
    let html = d.join("r.html");
    let o = run(&db, &["report", "-o", html.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("class=\"chart\""));
    assert!(!page.contains("<script"));
    // No saved run at all: a clear error.
    let empty = d.join("empty.db").display().to_string();
    let o = run(&empty, &["report", "-o", html.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no saved runs"),
        "{}",
        text(&o.stderr)
    );
}
