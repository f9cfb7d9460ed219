//! `atomlab check` driven as a user drives it: the real binary, its stdout,
//! stderr and exit status.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn atomlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_atomlab"))
        .args(args)
        .output()
        .expect("run atomlab")
}

fn golden(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../atomlab-model/tests/litmus")
        .join(rel)
        .display()
        .to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("atomlab-check-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Case 004: LB with relaxed accesses and acquire fences is allowed by C11,
/// forbidden by RC11 and by x86 and Arm through the mappings, with reasons.
#[test]
fn case_004_side_by_side_with_reasons() {
    let out = atomlab(&["check", "--explain", &golden("c/LB+fence.acqs.litmus")]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| LB+fence.acqs"))
        .expect("a row for the test");
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // | test | condition | sc | x86tso | aarch64 | c11 | rc11 |
    assert_eq!(
        &cells[3..8],
        &[
            "Never (3)",
            "Never (3)",
            "Never (3)",
            "Sometimes (4)",
            "Never (3)"
        ],
        "{row}"
    );
    assert!(
        stdout.contains("LB+fence.acqs [rc11]: 1 forbidden outcome(s)"),
        "{stdout}"
    );
    assert!(stdout.contains("forbidden by no-thin-air"), "{stdout}");
    assert!(stdout.contains("forbidden by tso"), "{stdout}");
    // The Arm reason names the barriers the acquire fences compile to.
    let arm = stdout
        .lines()
        .skip_while(|l| !l.starts_with("LB+fence.acqs [aarch64]"))
        .nth(2)
        .unwrap_or("");
    assert!(
        arm.contains("-[dmb.ld]->") && arm.contains("-rfe->"),
        "{arm}"
    );
    assert!(
        stdout.contains(
            "LB+fence.acqs [c11]: the condition's proposition holds in an allowed execution"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("C11->AArch64 (acquire load = LDAR"),
        "{stdout}"
    );
}

#[test]
fn unknown_model_is_refused_with_the_valid_ones() {
    let out = atomlab(&["check", "--model", "power", &golden("c/MP+rlx.litmus")]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("power") && err.contains("sc, x86tso, aarch64, c11, rc11, all"),
        "{err}"
    );
}

#[test]
fn bad_input_names_file_line_and_column() {
    let f = golden("errors/bad-order.litmus");
    let out = atomlab(&["check", &f, &golden("c/MP+rlx.litmus")]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "{f}:4:31: unknown memory order 'memory_order_sloppy'"
        )),
        "{err}"
    );
    // The good test is still judged.
    assert!(text(&out.stdout).contains("| MP+rlx"));
    let out = atomlab(&["check", "/nonexistent/x.litmus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no such file"));
}

#[test]
fn herd_format_reads_like_herd() {
    let out = atomlab(&[
        "check",
        "--format",
        "herd",
        "--model",
        "aarch64",
        &golden("aarch64/MP+dmb.ishst+po.litmus"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let s = text(&out.stdout);
    let want = "Test MP+dmb.ishst+po Allowed\nStates 4\n1:X0=0; 1:X4=0;\n1:X0=0; 1:X4=1;\n1:X0=1; 1:X4=0;\n1:X0=1; 1:X4=1;\nOk\nWitnesses\n";
    assert!(s.starts_with(want), "{s}");
    assert!(
        s.contains(
            "Condition exists (1:X0=1 /\\ 1:X4=0)\nObservation MP+dmb.ishst+po Sometimes 1 3\n"
        ),
        "{s}"
    );
}

#[test]
fn json_lists_models_states_and_refusals() {
    let out = atomlab(&[
        "check",
        "--format",
        "json",
        "--model",
        "c11,rc11",
        &golden("c/race.litmus"),
        &golden("errors/c-loop.litmus"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let t = &v["tests"][0];
    assert_eq!(t["name"], "race");
    assert_eq!(t["models"][0]["model"], "c11");
    assert_eq!(t["models"][1]["verdict"], "Sometimes");
    assert_eq!(t["models"][1]["data_race"], true);
    assert_eq!(v["refused"][0]["line"], 4);
}

#[test]
fn directories_and_lists_in_parallel() {
    let d = scratch("lists");
    let list = d.join("tests.txt");
    std::fs::write(
        &list,
        format!(
            "# two tests\n{}\n{}\n",
            golden("x86/MP.litmus"),
            golden("x86/SB+mfences.litmus")
        ),
    )
    .unwrap();
    let out = atomlab(&[
        "check",
        "--jobs",
        "2",
        "--model",
        "x86tso",
        &format!("@{}", list.display()),
        &golden("aarch64"),
    ]);
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{s}{}", text(&out.stderr));
    // Input order is kept: the list first, then the directory in sorted order.
    let rows: Vec<&str> = s
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| test"))
        .collect();
    assert!(
        rows[0].starts_with("| MP ") && rows[1].starts_with("| SB+mfences"),
        "{s}"
    );
    assert!(rows.len() >= 12, "{s}");
    // x86tso does not judge AArch64 tests.
    assert!(
        rows[2].ends_with("| -           |") || rows[2].contains("| -"),
        "{s}"
    );
}

#[test]
fn timeout_gives_an_explicit_verdict() {
    let d = scratch("timeout");
    let mut body = String::from("C huge\n{}\n");
    for t in 0..10 {
        body.push_str(&format!(
            "P{t} (atomic_int* x) {{ atomic_store_explicit(x, {}, memory_order_relaxed); int r0 = atomic_load_explicit(x, memory_order_relaxed); }}\n",
            t + 1
        ));
    }
    body.push_str("exists (x=1)\n");
    let f = d.join("huge.litmus");
    std::fs::write(&f, body).unwrap();
    let start = std::time::Instant::now();
    let out = atomlab(&[
        "check",
        "--timeout",
        "0.5",
        "--model",
        "sc",
        &f.display().to_string(),
    ]);
    assert!(start.elapsed().as_secs_f64() < 20.0);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("TIMEOUT"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn dot_writes_graphs_of_chosen_executions() {
    let d = scratch("dot");
    let out = atomlab(&[
        "check",
        "--model",
        "rc11",
        "--dot",
        &d.display().to_string(),
        &golden("c/LB+fence.acqs.litmus"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let g = std::fs::read_to_string(d.join("LB+fence.acqs.rc11.forbidden1.dot"))
        .expect("forbidden graph");
    assert!(
        g.starts_with("digraph") && g.contains("no-thin-air") && g.contains("label=\"rf\""),
        "{g}"
    );
    let out = atomlab(&[
        "check",
        "--model",
        "c11",
        "--dot",
        &d.display().to_string(),
        &golden("c/LB+fence.acqs.litmus"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(d.join("LB+fence.acqs.c11.witness.dot").exists());
}
