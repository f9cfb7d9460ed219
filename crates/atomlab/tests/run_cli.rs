//! `atomlab run` driven as a user drives it: the real binary on this CPU,
//! its stdout, stderr and exit status.

mod cli_support;

use std::path::Path;

use cli_support::{assert_bad_input, atomlab, stderr};

fn own(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../atomlab-run/tests/litmus")
        .join(rel)
        .display()
        .to_string()
}

fn golden(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../atomlab-model/tests/litmus")
        .join(rel)
        .display()
        .to_string()
}

fn x86_host() -> bool {
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped: atomlab run has only an x86-64 backend");
        return false;
    }
    true
}

#[test]
fn sb_histogram_beside_x86tso() {
    if !x86_host() {
        return;
    }
    let o = atomlab(&["run", "--no-save", &own("SB.litmus"), "--runs", "20"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for want in [
        "Observation SB ",
        "x86tso",
        "witnesses:",
        "0:EAX=0; 1:EAX=0;",
        "20000 instances",
    ] {
        assert!(out.contains(want), "stdout lacks {want:?}:\n{out}");
    }
    assert!(!out.contains("FORBIDDEN"), "{out}");
}

#[test]
fn litmus7_log_format() {
    if !x86_host() {
        return;
    }
    let o = atomlab(&[
        "run",
        "--no-save",
        "--format",
        "litmus",
        &own("SB.litmus"),
        "--runs",
        "10",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for want in [
        "Test SB Allowed",
        "Histogram (",
        "Witnesses",
        "Positive: ",
        "Condition exists (0:EAX=0 /\\ 1:EAX=0) is ",
        "Observation SB ",
        "Time SB ",
    ] {
        assert!(out.contains(want), "stdout lacks {want:?}:\n{out}");
    }
    // Every histogram line is `COUNT*>STATE` or `COUNT:>STATE`, and the
    // counts add up to the instances.
    let total: u64 = out
        .lines()
        .filter_map(|l| {
            l.split_once(">")
                .filter(|(c, _)| c.ends_with('*') || c.ends_with(':'))
        })
        .map(|(c, _)| {
            c.trim_end_matches(['*', ':'])
                .trim()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(total, 10_000, "{out}");
}

#[test]
fn c_test_gets_x86tso_c11_and_rc11() {
    if !x86_host() {
        return;
    }
    let o = atomlab(&[
        "run",
        "--no-save",
        &golden("c/MP+rel+acq.litmus"),
        "--runs",
        "10",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for want in [
        "x86tso",
        "c11",
        "rc11",
        "C11->x86",
        "Observation MP+rel+acq Never 0 ",
    ] {
        assert!(out.contains(want), "stdout lacks {want:?}:\n{out}");
    }
}

/// SB's relaxed outcome is what the CPU does and what SC forbids: asked to
/// compare with `sc`, the run reports it loudly and exits 1.
#[test]
fn an_outcome_the_model_forbids_is_loud() {
    if !x86_host() {
        return;
    }
    let o = atomlab(&[
        "run",
        "--no-save",
        &own("SB.litmus"),
        "--model",
        "sc,x86tso",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    assert!(
        out.contains("FORBIDDEN OUTCOME OBSERVED: SB 0:EAX=0; 1:EAX=0; seen"),
        "{out}"
    );
    assert!(out.contains("forbidden by sc"), "{out}");
    assert!(out.contains("replay: atomlab run "), "{out}");
    assert!(
        stderr(&o).contains("FORBIDDEN OUTCOME OBSERVED"),
        "{}",
        stderr(&o)
    );
    let j = atomlab(&[
        "run",
        "--no-save",
        "--json",
        &own("SB.litmus"),
        "--model",
        "sc",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(doc["records"][0]["verdict"], "FAIL", "{doc}");
}

#[test]
fn another_isa_is_refused_naming_the_host() {
    if !x86_host() {
        return;
    }
    assert_bad_input(
        &[
            "run",
            "--no-save",
            &golden("aarch64/MP+dmb.ishst+po.litmus"),
        ],
        &["MP+dmb.ishst+po.litmus", "AArch64 test", "host is x86_64"],
    );
}

#[test]
fn an_unencodable_test_is_refused_before_anything_runs() {
    // The x86-64 code generator's refusal; elsewhere the ISA is refused
    // first (another_isa_is_refused_naming_the_host).
    if !x86_host() {
        return;
    }
    // SB is valid, but nothing runs: every input must be runnable first.
    assert_bad_input(
        &[
            "run",
            "--no-save",
            &own("SB.litmus"),
            &own("refused/addr-not-a-location.litmus"),
        ],
        &[
            "addr-not-a-location.litmus:5",
            "P0",
            "EBX",
            "nothing was run",
        ],
    );
}

#[test]
fn timeout_is_explicit() {
    if !x86_host() {
        return;
    }
    let o = atomlab(&[
        "run",
        "--no-save",
        &own("SB.litmus"),
        "--runs",
        "1000000",
        "--timeout",
        "0.2",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("TIMEOUT"), "{out}");
}

#[test]
fn bad_options_are_refused() {
    assert_bad_input(
        &["run", "--no-save", &own("SB.litmus"), "--affinity", "x"],
        &["--affinity"],
    );
    assert_bad_input(
        &["run", "--no-save", &own("SB.litmus"), "--size", "0"],
        &["--size"],
    );
    assert_bad_input(
        &["run", "--no-save", &own("SB.litmus"), "--stride", "12"],
        &["--stride"],
    );
}

#[test]
fn placement_and_layout_options_run() {
    if !x86_host() {
        return;
    }
    let cpus = "0";
    for extra in [
        vec!["--affinity", cpus],
        vec!["--affinity", "none"],
        vec!["--same-line"],
        vec!["--stride", "128", "--sync", "timebase"],
        vec!["--sync", "none"],
    ] {
        let mut args = vec!["run", "--no-save", "--json", "--runs", "5"];
        let sb = own("SB.litmus");
        args.push(&sb);
        args.extend(extra.iter().copied());
        let o = atomlab(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let r = &doc["records"][0];
        assert_eq!(r["verdict"], "PASS", "{args:?}: {r}");
        let instances = r["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "instances")
            .unwrap()["samples"][0]
            .as_f64()
            .unwrap();
        assert_eq!(instances, 5000.0, "{args:?}");
        if extra.contains(&"--same-line") {
            assert_eq!(r["parameters"]["stride"], 8, "{r}");
        }
        if extra == ["--affinity", cpus] {
            assert_eq!(r["parameters"]["cpus"], serde_json::json!([0, 0]), "{r}");
        }
    }
}

/// A saved run shows as its summary table (`atomlab show`), from its
/// records alone.
#[test]
fn a_saved_run_shows_its_summary() {
    if !x86_host() {
        return;
    }
    let db = std::env::temp_dir().join(format!("atomlab-run-show-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let db = db.display().to_string();
    let o = atomlab(&["--store", &db, "run", &own("SB.litmus"), "--runs", "5"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let runs = atomlab(&["--store", &db, "runs", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    let id = doc[0]["meta"]["id"].as_str().unwrap().to_string();
    assert_eq!(doc[0]["meta"]["command"], "run", "{doc}");
    let show = atomlab(&["--store", &db, "show", &id]);
    let out = String::from_utf8_lossy(&show.stdout);
    assert_eq!(show.status.code(), Some(0), "{}", stderr(&show));
    for want in ["hardware", "x86tso", "SB", "PASS"] {
        assert!(out.contains(want), "show lacks {want:?}:\n{out}");
    }
    let _ = std::fs::remove_file(&db);
}
