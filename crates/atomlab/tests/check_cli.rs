//! `atomlab check` driven as a user drives it: the real binary, its stdout,
//! stderr and exit status.

mod cli_support;

use cli_support::{golden, scratch, text};

use std::process::Output;

fn atomlab(args: &[&str]) -> Output {
    // Not serialised: checking is single-process work.
    cli_support::command()
        .args(args)
        .output()
        .expect("run atomlab")
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
    // The table fits 100 columns in panels (the hardware models, then the
    // language models), each row starting with the test: its cells are
    // the first panel's, then each further panel's after the test.
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| LB+fence.acqs"))
        .collect();
    assert!(!rows.is_empty(), "a row for the test: {stdout}");
    let row = rows.concat();
    let mut cells: Vec<&str> = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let mine: Vec<&str> = r.split('|').map(str::trim).collect();
        let mine = &mine[..mine.len() - 1];
        cells.extend(if i == 0 { mine } else { &mine[2..] });
    }
    // | test | condition | sc | x86tso | aarch64 | riscv | c11 | rc11 |
    // (the 004 case: C11 allows LB with acquire fences, Arm, RISC-V and
    // x86 forbid it)
    assert_eq!(
        &cells[3..9],
        &[
            "Never (3)",
            "Never (3)",
            "Never (3)",
            "Never (3)",
            "Sometimes (4)",
            "Never (3)"
        ],
        "{row}"
    );
    // Everything fits 100 columns, the explanations' cycles too (wrapped
    // at spaces, their continuation lines indented under them).
    for line in stdout.lines() {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // The explanations read as one text, whatever the wrapping.
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("LB+fence.acqs [rc11]: 1 forbidden outcome(s)"),
        "{stdout}"
    );
    assert!(flat.contains("forbidden by no-thin-air"), "{stdout}");
    assert!(flat.contains("forbidden by tso"), "{stdout}");
    // The Arm reason names the barriers the acquire fences compile to:
    // the lines under its heading, up to the next heading.
    let arm: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("LB+fence.acqs [aarch64]"))
        .skip(1)
        .take_while(|l| l.starts_with(' '))
        .collect();
    let arm = arm.concat();
    assert!(
        arm.contains("-[dmb.ld]->") && arm.contains("-rfe->"),
        "{arm}"
    );
    assert!(
        flat.contains(
            "LB+fence.acqs [c11]: the condition's proposition holds in an allowed execution"
        ),
        "{stdout}"
    );
    assert!(
        flat.contains("C11->AArch64 (acquire load = LDAR"),
        "{stdout}"
    );
}

#[test]
fn unknown_model_is_refused_with_the_valid_ones() {
    let out = atomlab(&["check", "--model", "power", &golden("c/MP+rlx.litmus")]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("power") && err.contains("sc, x86tso, aarch64, riscv, c11, rc11, lkmm, all"),
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
    let want = "% Model aarch64 (atomlab)\nTest MP+dmb.ishst+po Allowed\nStates 4\n1:X0=0; 1:X4=0;\n1:X0=0; 1:X4=1;\n1:X0=1; 1:X4=0;\n1:X0=1; 1:X4=1;\nOk\nWitnesses\n";
    assert!(s.starts_with(want), "{s}");
    assert!(
        s.contains(
            "Condition exists (1:X0=1 /\\ 1:X4=0)\nObservation MP+dmb.ishst+po Sometimes 1 3\n"
        ),
        "{s}"
    );
}

/// The LKMM's flags print as herd7 prints them: one `Flag NAME` line each,
/// sorted, after the witnesses; they do not change the verdict or the exit.
#[test]
fn herd_format_prints_lkmm_flags_as_herd_does() {
    let out = atomlab(&[
        "check",
        "--format",
        "herd",
        "--model",
        "lkmm",
        &golden("linux/FLAG+mixed-accesses.litmus"),
        &golden("linux/FLAG+unmatched-srcu-unlock.litmus"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("Positive: 1 Negative: 2\nFlag data-race\nFlag mixed-accesses\nCondition exists (1:r0=1)\n"),
        "{s}"
    );
    assert!(
        s.contains("Flag unmatched-srcu-lock\nFlag unmatched-srcu-unlock\nCondition"),
        "{s}"
    );
}

/// A C test with plain accesses only is judged by lkmm, as herd7 with
/// linux-kernel.cfg judges it (`Always 1 0`), and the table says how it
/// was read; a model named with --model that does not judge a test says so
/// on stderr in herd's format, where it printed nothing (issue 37).
#[test]
fn lkmm_judges_a_plain_only_test_and_names_what_it_does_not_judge() {
    let plain = golden("linux/PLAIN+only.litmus");
    let out = atomlab(&[
        "check",
        "--no-save",
        "--format",
        "herd",
        "--model",
        "lkmm",
        &plain,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("Observation PLAIN+only Always 1 0"), "{s}");
    let out = atomlab(&["check", "--no-save", "--model", "lkmm", &plain]);
    let s = text(&out.stdout);
    assert!(s.contains("| Always (1) |"), "{s}");
    assert!(
        s.contains("lkmm: a C test with plain accesses only, read as Linux-kernel C"),
        "{s}"
    );
    let c11 = golden("c/LB+fence.acqs.litmus");
    let out = atomlab(&[
        "check",
        "--no-save",
        "--format",
        "herd",
        "--model",
        "lkmm",
        &c11,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("LB+fence.acqs.litmus: not judged by lkmm (lkmm judges Linux-kernel C tests"),
        "{err}"
    );
    assert!(text(&out.stdout).is_empty());
}

/// The same flags reach the table and the JSON records (parameter
/// `flags`), not only herd's format: a user reading the table must see
/// that the test is one the model calls ill-formed.
#[test]
fn lkmm_flags_show_in_the_table_and_the_records() {
    let file = golden("linux/FLAG+unmatched-srcu-unlock.litmus");
    let out = atomlab(&["check", "--no-save", "--model", "lkmm", &file]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    // The cell wraps to fit 100 columns: the flags on its lines.
    let cell: Vec<&str> = s
        .lines()
        .filter_map(|l| l.split('|').nth(3))
        .map(str::trim)
        .collect();
    assert!(
        cell.join(" ")
            .contains("flag unmatched-srcu-lock, unmatched-srcu-unlock"),
        "{s}"
    );
    assert!(
        s.contains("\"flag NAME\": the model's flag NAME is raised"),
        "{s}"
    );
    let out = atomlab(&["check", "--no-save", "--json", "--model", "lkmm", &file]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        v["records"][0]["parameters"]["flags"],
        serde_json::json!(["unmatched-srcu-lock", "unmatched-srcu-unlock"])
    );
    let out = atomlab(&[
        "check",
        "--no-save",
        "--json",
        "--model",
        "lkmm",
        &golden("linux/FLAG+none-srcu-locations.litmus"),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        v["records"][0]["parameters"]["flags"],
        serde_json::json!([])
    );
}

/// `--explain` with the explore engine never claims that nothing is
/// forbidden: the engine prunes forbidden executions before completing
/// them (LB+fence.acqs under rc11: its thin-air outcome), so it says that
/// its list covers only what it explored, where enumerate explains it.
#[test]
fn explore_does_not_claim_that_nothing_is_forbidden() {
    let file = golden("c/LB+fence.acqs.litmus");
    let run = |engine: &str| {
        let out = atomlab(&[
            "check",
            "--no-save",
            "--explain",
            "--engine",
            engine,
            "--model",
            "rc11",
            &file,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let enumerated = run("enumerate");
    assert!(
        enumerated.contains("LB+fence.acqs [rc11]: 1 forbidden outcome(s)"),
        "{enumerated}"
    );
    let explored = run("explore");
    assert!(
        !explored.contains("no outcome of a candidate execution is forbidden"),
        "{explored}"
    );
    assert!(
        explored.contains("among the executions explored"),
        "{explored}"
    );
}

/// A malformed SRCU call is refused like any bad input: file:line:column
/// and exit status 2.
#[test]
fn malformed_srcu_call_is_refused_with_its_position() {
    let f = golden("errors/linux-srcu.litmus");
    let out = atomlab(&["check", "--model", "lkmm", &f]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "linux-srcu.litmus:8:20: expected ',' between the arguments of srcu_read_unlock"
        ),
        "{err}"
    );
}

/// `--format json` and `--json` give atomlab's one document shape: a record
/// per test and model with its counts as metrics, refusals under `errors`.
#[test]
fn json_lists_models_states_and_refusals() {
    let (race, looping) = (golden("c/race.litmus"), golden("errors/c-loop.litmus"));
    for flag in [&["--format", "json"][..], &["--json"]] {
        let mut args = vec!["check"];
        args.extend(flag);
        args.extend(["--model", "c11,rc11", &race, &looping]);
        let out = atomlab(&args);
        assert_eq!(out.status.code(), Some(2));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(v["schema_version"], 2);
        assert_eq!(v["command"], "check");
        let r = &v["records"];
        assert_eq!(r[0]["capability"], "check");
        assert_eq!(r[0]["scenario"], "race");
        assert_eq!(r[0]["variant"], "c11");
        assert_eq!(r[1]["variant"], "rc11");
        assert_eq!(r[1]["parameters"]["observation"], "Sometimes");
        assert_eq!(r[1]["parameters"]["data_race"], true);
        let states = r[1]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "allowed_states")
            .expect("allowed_states metric");
        assert_eq!(states["unit"], "count");
        assert_eq!(
            states["samples"][0].as_f64().unwrap() as usize,
            r[1]["detail"]["states"].as_array().unwrap().len()
        );
        assert_eq!(v["errors"][0]["line"], 4);
    }
}

/// A table run without `--no-save` stores each record's allowed states
/// (the detail `--no-save` runs skip, since nothing reads it there).
#[test]
fn a_saved_check_keeps_each_records_states() {
    let mp = golden("x86/MP.litmus");
    let out = atomlab(&["check", "--model", "x86tso,sc", &mp]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let id = err
        .split_whitespace()
        .skip_while(|w| *w != "run")
        .nth(1)
        .unwrap_or_else(|| panic!("no saved run in {err}"));
    let export = atomlab(&["export", id]);
    assert_eq!(export.status.code(), Some(0), "{}", text(&export.stderr));
    let v: serde_json::Value = serde_json::from_slice(&export.stdout).expect("JSON");
    let records = v["records"].as_array().expect("records");
    assert_eq!(records.len(), 2);
    for r in records {
        let states = r["detail"]["states"].as_array().expect("detail.states");
        assert!(!states.is_empty(), "{r}");
        assert!(
            states[0]["state"].as_str().unwrap().contains("1:EAX="),
            "{r}"
        );
    }
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

/// Issue 9: a valid test past the checker's execution bound was reported
/// as bad input (exit 2, "execution bound exceeded" among the errors). It
/// is a BOUND cell, in the legend, and exit 1 like a TIMEOUT.
#[test]
fn a_test_past_the_bound_is_a_bound_cell_not_bad_input() {
    let d = scratch("bound");
    let mut body = String::from("C long\n{}\nP0 (atomic_int* x) {\n");
    for v in 1..=70 {
        body.push_str(&format!(
            "  atomic_store_explicit(x, {v}, memory_order_relaxed);\n"
        ));
    }
    body.push_str("}\nexists (x=70)\n");
    let f = d.join("long.litmus");
    std::fs::write(&f, body).unwrap();
    let out = atomlab(&["check", "--model", "sc,rc11", &f.display().to_string()]);
    let s = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{s}{}", text(&out.stderr));
    assert!(s.contains("| BOUND"), "{s}");
    assert!(s.contains("BOUND: the test exceeds a fixed limit"), "{s}");
    let out = atomlab(&["check", "--json", "--model", "sc", &f.display().to_string()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"][0]["verdict"], "BOUND");
    assert!(v["errors"].as_array().unwrap().is_empty());
}

/// With several models, `--format herd` says which model each block is
/// for, on a `%` line that herd log readers pass over.
#[test]
fn herd_blocks_name_their_model() {
    let out = atomlab(&[
        "check",
        "--format",
        "herd",
        "--model",
        "c11,rc11",
        &golden("c/LB+fence.acqs.litmus"),
    ]);
    let s = text(&out.stdout);
    let blocks: Vec<&str> = s.split("% Model ").skip(1).collect();
    assert_eq!(blocks.len(), 2, "{s}");
    assert!(blocks[0].starts_with("c11 (atomlab)\nTest LB+fence.acqs"));
    assert!(blocks[0].contains("Observation LB+fence.acqs Sometimes"));
    assert!(blocks[1].starts_with("rc11 (atomlab)\nTest LB+fence.acqs"));
    assert!(blocks[1].contains("Observation LB+fence.acqs Never"));
}

#[test]
fn timeout_zero_means_none_and_negative_is_refused() {
    let out = atomlab(&[
        "check",
        "--timeout",
        "0",
        "--model",
        "sc",
        &golden("x86/MP.litmus"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    cli_support::assert_bad_input(
        &["check", "--timeout", "-1", &golden("x86/MP.litmus")],
        &["--timeout"],
    );
}

/// `--shard I/N` splits the test files deterministically: the parts are
/// disjoint and together give the whole run's records.
#[test]
fn shards_split_the_files_and_cover_them() {
    let dir = golden("x86");
    let names = |args: &[&str]| -> Vec<String> {
        let out = atomlab(args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| format!("{} {}", r["scenario"], r["variant"]))
            .collect()
    };
    let whole = names(&["check", "--json", "--model", "x86tso", &dir]);
    let mut parts = Vec::new();
    for i in 0..3 {
        let shard = format!("{i}/3");
        let part = names(&[
            "check", "--json", "--model", "x86tso", "--shard", &shard, &dir,
        ]);
        assert!(!part.is_empty() || whole.len() < 3);
        parts.extend(part);
    }
    let (mut a, mut b) = (whole.clone(), parts.clone());
    a.sort();
    b.sort();
    assert_eq!(
        a, b,
        "the shards together are the whole run, each test once"
    );
}

/// A user's cat model: a column named after the file, next to a built-in
/// model; `NAME=FILE` with a built-in's name judges in its place; a bad
/// model is refused with file:line:column before any test is judged.
#[test]
fn model_files_judge_beside_or_instead_of_the_built_in_models() {
    let d = scratch("model-file");
    let sc = d.join("mysc.cat");
    std::fs::write(
        &sc,
        "MySC\nlet com = rf | co | fr\nacyclic po | com as sc\n",
    )
    .unwrap();
    // Relaxed message passing: Sometimes under rc11, Never under a plain SC model.
    let mp = golden("c/MP+rlx.litmus");
    let out = atomlab(&[
        "check",
        "--model",
        "rc11",
        "--model-file",
        sc.to_str().unwrap(),
        &mp,
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("| rc11") && stdout.contains("| mysc"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| MP+rlx"))
        .expect("row");
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert!(
        cells[3].starts_with("Sometimes") && cells[4].starts_with("Never"),
        "{row}"
    );

    // In place of the built-in: one herd block, named rc11, judged by the file.
    let spec = format!("rc11={}", sc.display());
    let out = atomlab(&[
        "check",
        "--format",
        "herd",
        "--model",
        "rc11",
        "--model-file",
        &spec,
        &mp,
    ]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("% Model rc11 (atomlab)"), "{stdout}");
    assert!(stdout.contains("Observation MP+rlx Never"), "{stdout}");
    assert_eq!(stdout.matches("% Model").count(), 1, "{stdout}");

    // An include found through --cat-path.
    let lib = d.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(lib.join("com.cat"), "let com = rf | co | fr\n").unwrap();
    let inc = d.join("inc.cat");
    std::fs::write(&inc, "include \"com.cat\"\nacyclic po | com as sc\n").unwrap();
    let out = atomlab(&["check", "--model-file", inc.to_str().unwrap(), &mp]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let out = atomlab(&[
        "check",
        "--model-file",
        inc.to_str().unwrap(),
        "--cat-path",
        lib.to_str().unwrap(),
        &mp,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // A bad model: exit 2, the position, and nothing judged.
    let bad = d.join("bad.cat");
    std::fs::write(&bad, "let x = po\nacyclic x | nope as y\n").unwrap();
    let out = atomlab(&["check", "--model-file", bad.to_str().unwrap(), &mp]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}:2:13: unknown name `nope`", bad.display())),
        "{err}"
    );
    assert!(
        !text(&out.stdout).contains("MP+rlx"),
        "{}",
        text(&out.stdout)
    );
}

/// Issue 22: on CoRR the cell said Never (3) while --explain said "no
/// outcome of a candidate execution is forbidden" and --dot wrote nothing
/// without a word. The state needs an incoherent execution, which the
/// engine never builds: the explanation says so, and --dot says why it
/// drew nothing.
#[test]
fn explain_says_coherence_rules_out_a_state_no_axiom_forbids() {
    let dir = scratch("corr-dot");
    let file = dir.join("CoRR.litmus");
    std::fs::write(
        &file,
        "X86 CoRR\n{}\n P0 | P1 ;\n MOV [x],$1 | MOV EAX,[x] ;\n | MOV EBX,[x] ;\nexists (1:EAX=1 /\\ 1:EBX=0)\n",
    )
    .unwrap();
    let dots = dir.join("dots");
    let out = atomlab(&[
        "check",
        "--no-save",
        "--explain",
        "--model",
        "sc,x86tso",
        "--dot",
        dots.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("| Never (3) |"), "{stdout}");
    assert!(
        !stdout.contains("no outcome of a candidate execution is forbidden"),
        "{stdout}"
    );
    for model in ["sc", "x86tso"] {
        assert!(
            stdout.contains(&format!(
                "CoRR [{model}]: no execution atomlab builds satisfies the condition"
            )),
            "{stdout}"
        );
        assert!(
            text(&out.stderr).contains(&format!("--dot: no graph for CoRR [{model}]")),
            "{}",
            text(&out.stderr)
        );
    }
    assert!(stdout.contains("breaks coherence"), "{stdout}");
}
