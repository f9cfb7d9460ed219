//! The results store from the command line: saving, listing, showing,
//! exporting, importing, comparing and reporting, and the bad inputs that
//! must exit 2 without losing anything. Each test uses its own SQLite file;
//! with ATOMLAB_TEST_POSTGRES=postgres://… the shard test also runs against
//! that server (`.ci/run` starts one with scripts/ci-postgres).

mod cli_support;

use cli_support::{golden, scratch, text, with_store as run};

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

fn runs_json(store: &str, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["runs", "--json", "--limit", "0"];
    args.extend(extra);
    let o = run(store, &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    serde_json::from_slice::<Value>(&o.stdout).unwrap()["runs"]
        .as_array()
        .expect("runs --json: the document's runs")
        .clone()
}

/// `doc` is valid under schema/atomlab.schema.json (boon, as json_schema.rs).
fn assert_matches_schema(doc: &Value) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/atomlab.schema.json"
    );
    let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let (mut schemas, mut compiler) = (boon::Schemas::new(), boon::Compiler::new());
    let url = "https://atomlab.invalid/schema/atomlab.schema.json";
    compiler.add_resource(url, schema).unwrap();
    let index = compiler.compile(url, &mut schemas).unwrap();
    if let Err(e) = schemas.validate(doc, index) {
        panic!("not the schema's shape: {e}");
    }
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

    // export: JSON is the document with the run's facts under `run`; CSV
    // has a row per metric.
    let o = run(&db, &["export", &bench_id]);
    let mut exported: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_matches_schema(&exported);
    let facts = exported.as_object_mut().unwrap().remove("run").unwrap();
    assert_eq!(exported, doc);
    assert_eq!(facts, runs[1]["meta"]);
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

    // import: the --json document of a run already stored is not a second
    // run of it.
    let file = d.join("doc.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let o = run(
        &db,
        &["--label", "imported", "import", file.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), bench_id);
    assert!(
        text(&o.stderr).contains("nothing was imported"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(runs_json(&db, &["--label", "imported"]).len(), 0);
    assert_eq!(runs_json(&db, &[]).len(), 2);

    // An exported run, imported elsewhere, keeps its facts (not the
    // import's time, command line and host), once.
    let exported_file = d.join("export.json");
    std::fs::write(&exported_file, run(&db, &["export", &bench_id]).stdout).unwrap();
    let other = d.join("other.db").display().to_string();
    for _ in 0..2 {
        let o = run(&other, &["import", exported_file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert_eq!(text(&o.stdout).trim(), bench_id);
    }
    let there = runs_json(&other, &[]);
    assert_eq!(there.len(), 1, "{there:?}");
    assert_eq!(there[0]["meta"], runs[1]["meta"]);
    let o = run(&other, &["--json", "show", &bench_id]);
    assert_eq!(serde_json::from_slice::<Value>(&o.stdout).unwrap(), doc);
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
        assert_eq!(runs["runs"].as_array().unwrap().len(), 3, "{store}");
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
    // No store at all: a clear error, and none is made.
    let empty = d.join("empty.db");
    let o = run(
        empty.to_str().unwrap(),
        &["report", "-o", html.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("there is no results store"),
        "{}",
        text(&o.stderr)
    );
    assert!(!empty.exists());
}

/// atomlab with `--store STORE`, run in `dir`.
fn run_in(dir: &Path, store: &str, args: &[&str]) -> Output {
    cli_support::command()
        .current_dir(dir)
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("run atomlab")
}

/// Every file and directory under `dir`, relative to it.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            if p.is_dir() {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_mistyped_scheme_is_bad_input_not_a_new_file() {
    let d = scratch("scheme");
    for store in [
        "postgress://bob:hunter2@db/x",
        "mysql://bob@db/x",
        "sqlite:///r.db",
    ] {
        for args in [&["check", &golden("x86/MP.litmus")] as &[&str], &["runs"]] {
            let o = run_in(&d, store, args);
            let e = text(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{store} {args:?}: {e}");
            let scheme = store.split("://").next().unwrap();
            assert!(e.contains(&format!("`{scheme}://`")), "{e}");
            assert!(e.contains("postgres://") && e.contains("SQLite"), "{e}");
            assert!(!e.contains("hunter2") && !e.contains("saved run"), "{e}");
            assert!(o.stdout.is_empty(), "nothing ran: {}", text(&o.stdout));
        }
    }
    assert_eq!(tree(&d), Vec::<PathBuf>::new(), "nothing was created");
}

#[test]
fn reading_commands_never_create_a_store() {
    let d = scratch("readonly-cmds");
    let missing = d.join("sub/none.db");
    let m = missing.to_str().unwrap();
    let html = d.join("r.html");
    for args in [
        &["runs"] as &[&str],
        &["runs", "--json"],
        &["show", "2026"],
        &["export", "2026"],
        &["report", "-o", html.to_str().unwrap()],
        &["compare", "a", "b"],
    ] {
        let o = run(m, args);
        let e = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(
            e.contains("there is no results store") && e.contains(m),
            "{args:?}: {e}"
        );
    }
    assert_eq!(tree(&d), Vec::<PathBuf>::new(), "nothing was created");
    // An empty file is no store either, and stays empty.
    let empty = d.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let o = run(empty.to_str().unwrap(), &["runs"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    // A command that saves makes the store; then the reading ones work.
    let o = run(m, &["check", &golden("x86/MP.litmus")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(runs_json(m, &[]).len(), 1);
}

/// The `runs` table of a store's raw rows: (id, command_line).
fn raw_command_lines(db: &Path) -> Vec<(String, String)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut st = c.prepare("SELECT id, command_line FROM runs").unwrap();
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<Vec<_>>>()
        .unwrap();
    rows
}

#[test]
fn store_passwords_are_never_printed() {
    let d = scratch("password");
    let db = d.join("r.db");
    let dbs = db.to_str().unwrap();
    // A run saved by an atomlab that kept the password of
    // `--store postgres://bob:hunter2@…` in its command line.
    let o = run(dbs, &["check", &golden("x86/MP.litmus")]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let (id, _) = raw_command_lines(&db).remove(0);
    let line = serde_json::json!([
        "atomlab",
        "--store",
        "postgres://bob:hunter2@db.example/atomlab",
        "--store=postgresql://bob:hunter2@db.example/atomlab?password=hunter2",
        "check",
        "MP.litmus"
    ]);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE runs SET command_line = ?1 WHERE id = ?2",
            [line.to_string(), id.clone()],
        )
        .unwrap();
    let html = d.join("r.html");
    for args in [
        &["runs"] as &[&str],
        &["runs", "--json"],
        &["show", &id],
        &["export", &id],
        &["export", &id, "--format", "csv"],
        &["report", &id, "-o", html.to_str().unwrap()],
    ] {
        let o = run(dbs, args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
        let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
        assert!(!all.contains("hunter2"), "{args:?}: {all}");
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("bob@db.example"), "the user stays");
    assert!(!page.contains("hunter2"), "{page}");
    // An exported run imported elsewhere does not bring it back.
    let file = d.join("x.json");
    std::fs::write(&file, run(dbs, &["export", &id]).stdout).unwrap();
    let other = d.join("other.db");
    let o = run(other.to_str().unwrap(), &["import", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    for (_, line) in raw_command_lines(&other) {
        assert!(
            !line.contains("hunter2") && line.contains("bob@db.example"),
            "{line}"
        );
    }
}

#[test]
fn a_password_on_the_command_line_is_not_stored_with_postgres() {
    let Ok(server) = std::env::var("ATOMLAB_TEST_POSTGRES") else {
        eprintln!("skipped: set ATOMLAB_TEST_POSTGRES=postgres://… to run this test");
        return;
    };
    // The test server trusts local connections: any password is accepted,
    // and must then be left out of everything atomlab keeps and prints.
    let Some((scheme, rest)) = server.split_once("://") else {
        panic!("ATOMLAB_TEST_POSTGRES is not a URL: {server}");
    };
    let Some((user, host)) = rest.split_once('@') else {
        panic!("ATOMLAB_TEST_POSTGRES has no user: {server}");
    };
    let user = user.split(':').next().unwrap();
    let schema = format!("atomlab_pw_{}", std::process::id());
    let sep = if host.contains('?') { '&' } else { '?' };
    let url = format!("{scheme}://{user}:hunter2@{host}{sep}options=-csearch_path%3D{schema}");
    let admin = format!("{scheme}://{user}@{host}");
    let psql = |sql: &str| {
        std::process::Command::new("psql")
            .args([admin.as_str(), "-qAtc", sql])
            .output()
            .map(|o| text(&o.stdout))
    };
    if psql(&format!("CREATE SCHEMA {schema}")).is_err() {
        eprintln!("skipped: psql is needed to make and drop the test schema");
        return;
    }
    let o = run(&url, &["check", &golden("x86/MP.litmus")]);
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(!e.contains("hunter2") && e.contains("PGPASSWORD"), "{e}");
    let stored = psql(&format!("SELECT command_line FROM {schema}.runs")).unwrap();
    let _ = psql(&format!("DROP SCHEMA {schema} CASCADE"));
    assert!(stored.contains("--store"), "{stored}");
    assert!(!stored.contains("hunter2"), "{stored}");
}

#[test]
fn a_run_the_store_refuses_at_save_time_is_kept_in_a_file_to_import() {
    let d = scratch("unsaved");
    let db = d.join("r.db");
    let dbs = db.to_str().unwrap();
    let mp = golden("x86/MP.litmus");
    let o = run(dbs, &["check", &mp]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // A store that opens cleanly but refuses the insert, as a full disk or
    // a lock held past the wait would at save time.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TRIGGER refuse BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'refused'); END;",
    )
    .unwrap();
    let work = d.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let o = run_in(&work, dbs, &["--label", "kept", "check", &mp]);
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(!o.stdout.is_empty(), "the results were printed");
    assert!(
        e.contains("was not saved") && e.contains("atomlab import"),
        "{e}"
    );
    assert!(
        e.contains("refused") && !e.contains("already in"),
        "SQLite's words, not a taken id: {e}"
    );
    let kept: Vec<PathBuf> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    let name = kept[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.starts_with("atomlab-unsaved-") && name.ends_with(".json"),
        "{name}"
    );
    assert!(e.contains(&name), "{e}");
    // Once the store is fixed, the run goes in with its own id and facts.
    conn.execute_batch("DROP TRIGGER refuse").unwrap();
    let o = run(dbs, &["import", kept[0].to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let id = text(&o.stdout).trim().to_string();
    assert!(name.contains(&id), "{name} {id}");
    let kept_runs = runs_json(dbs, &["--label", "kept"]);
    assert_eq!(kept_runs.len(), 1);
    let line = kept_runs[0]["meta"]["command_line"].to_string();
    assert!(line.contains("check") && !line.contains("import"), "{line}");
}

#[test]
fn a_save_waits_while_another_process_holds_the_store() {
    let d = scratch("locked");
    let db = d.join("r.db");
    let dbs = db.to_str().unwrap();
    let mp = golden("x86/MP.litmus");
    let o = run(dbs, &["check", &mp]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // A writer that holds the lock longer than the 5 s a save used to wait
    // (a large `atomlab import`).
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let child = cli_support::command()
        .args(["--store", dbs, "check", &mp])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(7));
    holder.execute_batch("COMMIT").unwrap();
    let o = child.wait_with_output().unwrap();
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains("locked by another process") && e.contains("waiting"),
        "{e}"
    );
    assert_eq!(runs_json(dbs, &[]).len(), 2);
}

#[test]
fn schema_versions_that_are_not_this_atomlab_s_are_named() {
    let d = scratch("schema-version");
    let db = d.join("r.db").display().to_string();
    let o = run(
        &db,
        &["--no-save", "--json", "check", &golden("x86/MP.litmus")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let try_import = |doc: &Value, words: &[&str]| {
        let f = d.join("doc.json");
        std::fs::write(&f, serde_json::to_vec(doc).unwrap()).unwrap();
        let o = run(&db, &["import", f.to_str().unwrap()]);
        let e = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        for w in words {
            assert!(e.contains(w), "stderr lacks {w:?}: {e}");
        }
        assert!(!e.contains("has no schema_version"), "{e}");
    };
    let big: Value = serde_json::from_str("1180591620717411303424").unwrap();
    for (v, what) in [
        (Value::from("2"), "\"2\" (a string)"),
        (Value::from(-1), "-1 (negative)"),
        (big, "(too large)"),
        (Value::from(2.5), "(not a whole number)"),
    ] {
        let mut bad = doc.clone();
        bad["schema_version"] = v;
        try_import(&bad, &["invalid schema_version", what]);
    }
    let mut rec = doc.clone();
    rec["records"][1]["schema_version"] = Value::from(99);
    try_import(&rec, &["record 1", "schema_version 99"]);
    rec["records"][1]["schema_version"] = Value::from("2");
    try_import(&rec, &["record 1", "invalid schema_version"]);
    // compare reads files the same way.
    let f = d.join("rec.json");
    rec["records"][1]["schema_version"] = Value::from(99);
    std::fs::write(&f, serde_json::to_vec(&rec).unwrap()).unwrap();
    let o = run(&db, &["compare", f.to_str().unwrap(), f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("schema_version 99"),
        "{}",
        text(&o.stderr)
    );
    assert!(!Path::new(&db).exists(), "nothing was imported");
}

/// Runs `script` with `sh -c` in a mount namespace of its own, where it can
/// mount a small tmpfs; `None` where that is not allowed (not root, no
/// `unshare`, a container without CAP_SYS_ADMIN).
fn in_mount_namespace(script: &str) -> Option<Output> {
    let probe = std::process::Command::new("unshare")
        .args([
            "-m",
            "sh",
            "-c",
            "mount -t tmpfs none /mnt 2>/dev/null || mount -t tmpfs none /tmp",
        ])
        .output()
        .ok()?;
    if !probe.status.success() {
        eprintln!(
            "skipped: cannot mount a tmpfs in a mount namespace here (needs root and unshare)"
        );
        return None;
    }
    let o = std::process::Command::new("unshare")
        .args(["-m", "sh", "-ec", script])
        .env("ATOMLAB_BIN", env!("CARGO_BIN_EXE_atomlab"))
        .env_remove("ATOMLAB_STORE")
        .env_remove("ATOMLAB_DB")
        .output()
        .expect("run unshare");
    Some(o)
}

#[test]
fn read_only_and_full_file_systems_are_named_before_anything_runs() {
    let d = scratch("fs");
    let mnt = d.join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let mp = golden("x86/MP.litmus");
    let m = mnt.display();
    // A full file system: the store is refused before the check runs.
    let full = format!(
        "mount -t tmpfs -o size=256k none {m}
         dd if=/dev/zero of={m}/fill bs=4k 2>/dev/null || true
         \"$ATOMLAB_BIN\" --store {m}/r.db check {mp} && exit 99 || echo \"exit=$?\""
    );
    let Some(o) = in_mount_namespace(&full) else {
        return;
    };
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(out.contains("exit=2"), "{out}{err}");
    assert!(err.contains("no space left"), "{err}");
    assert!(!out.contains("MP"), "nothing ran: {out}");
    // A store on a file system remounted read-only.
    let ro = format!(
        "mount -t tmpfs -o size=4m none {m}
         \"$ATOMLAB_BIN\" --store {m}/r.db check {mp} >/dev/null 2>&1
         mount -o remount,ro {m}
         \"$ATOMLAB_BIN\" --store {m}/r.db check {mp} && exit 99 || echo \"exit=$?\"
         \"$ATOMLAB_BIN\" --store {m}/r.db runs --json"
    );
    let o = in_mount_namespace(&ro).unwrap();
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(out.contains("exit=2"), "{out}{err}");
    assert!(err.contains("mounted read-only"), "{err}");
    // Reading it still works.
    assert!(out.contains("\"command\": \"check\""), "{out}{err}");
}

#[test]
fn a_read_only_store_file_is_refused_before_the_run_and_still_read() {
    use std::os::unix::fs::PermissionsExt;
    let d = scratch("ro-file");
    let db = d.join("r.db");
    let dbs = db.to_str().unwrap();
    let mp = golden("x86/MP.litmus");
    let o = run(dbs, &["check", &mp]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The directory stays writable: only the file is read-only.
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
    // Root writes any file: run as nobody then.
    let as_user = |args: &[&str]| {
        // The file the test just made belongs to the test's user.
        let root = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&db).unwrap()) == 0;
        let mut c = if root {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(env!("CARGO_BIN_EXE_atomlab"));
            c
        } else {
            std::process::Command::new(env!("CARGO_BIN_EXE_atomlab"))
        };
        c.current_dir(&d)
            .env_remove("ATOMLAB_DB")
            .env_remove("ATOMLAB_STORE")
            .args(["--store", dbs])
            .args(args)
            .output()
            .ok()
    };
    let Some(o) = as_user(&["check", &mp]) else {
        eprintln!("skipped: setpriv is needed to drop root's right to write any file");
        return;
    };
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("permission denied") && e.contains("read-only"),
        "{e}"
    );
    assert!(o.stdout.is_empty(), "nothing ran: {}", text(&o.stdout));
    let o = as_user(&["runs", "--json"]).unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["runs"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}
