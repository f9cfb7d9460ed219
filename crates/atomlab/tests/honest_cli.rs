//! Issue 23's first items: commands that misled (a silent exit 0, a
//! panic) or stored what cannot be replayed. Each test names the
//! behaviour of the code before the fix that it would have caught.

mod cli_support;

use cli_support::{atomlab, golden, scratch, stderr, text, with_store};

/// `cmd` with its stdout a pipe whose reader is already gone, as in
/// `atomlab … | true` once `true` has exited.
fn into_closed_pipe(mut cmd: std::process::Command) -> std::process::Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    cmd.stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run atomlab")
}

/// Before: `atomlab completions zsh | true` panicked (BrokenPipe, exit
/// 101), and so did any command whose table met a closed pipe. Now every
/// one ends quietly with exit 0, as ripgrep does.
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let d = scratch("pipe");
    let db = d.join("r.db");
    let db = db.to_str().unwrap();
    let sb = golden("x86/MP.litmus");
    let o = with_store(db, &["--label", "piped", "check", "--model", "sc", &sb]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let commands: &[&[&str]] = &[
        &["completions", "zsh"],
        &["completions", "bash"],
        &["man"],
        &["--help"],
        &["check", "--help"],
        &["machine"],
        &["--no-save", "check", "--model", "sc", &sb],
        &["--no-save", "--json", "check", "--model", "sc", &sb],
        &["runs"],
        &["--json", "runs"],
        &["show", "2"],
        &["export", "2", "--format", "csv"],
    ];
    for args in commands {
        let mut c = cli_support::command();
        c.arg("--store").arg(db).args(*args);
        let o = into_closed_pipe(c);
        let e = stderr(&o);
        assert!(
            !e.contains("panicked") && !e.contains("Broken pipe") && !e.contains("BrokenPipe"),
            "{args:?}: {e}"
        );
        assert_eq!(o.status.code(), Some(0), "{args:?}: {e}");
    }
}

/// Before: `runs --capability foo` listed nothing and exited 0, and the
/// help named neither load nor run. Now an unknown capability is refused
/// (exit 2) with the known ones.
#[test]
fn runs_refuses_an_unknown_capability() {
    let d = scratch("runs-cap");
    let db = d.join("r.db");
    let db = db.to_str().unwrap();
    let o = with_store(db, &["check", &golden("x86/MP.litmus")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = with_store(db, &["runs", "--capability", "foo"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    for c in [
        "foo", "audit", "bench", "check", "load", "run", "stress", "suite",
    ] {
        assert!(e.contains(c), "the refusal lacks {c}: {e}");
    }
    let help = text(&atomlab(&["runs", "--help"]).stdout);
    for c in ["load", "run", "suite"] {
        assert!(help.contains(c), "runs --help lacks {c}: {help}");
    }
    // A known one still lists.
    for c in ["check", "load", "run"] {
        let o = with_store(db, &["runs", "--capability", c]);
        assert_eq!(o.status.code(), Some(0), "{c}: {}", stderr(&o));
    }
}

/// Before: an empty shard (`check --shard 3/5` of 2 tests) printed
/// nothing, saved nothing and exited 0, and `report --label` and `compare`
/// of a label with shards missing said nothing of them. Now the empty
/// shard says so and saves a record of itself; a label lacking shards is
/// warned of.
#[test]
fn empty_and_missing_shards_are_told() {
    let d = scratch("empty-shard");
    let db = d.join("r.db");
    let db = db.to_str().unwrap();
    let (mp, sb) = (golden("x86/MP.litmus"), golden("x86/SB+mfences.litmus"));
    let label = "two-tests";
    let o = with_store(db, &["--label", label, "check", "--shard", "3/5", &mp, &sb]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains("shard 3/5") && e.contains("nothing to run"),
        "{e}"
    );
    assert!(e.contains("saved run"), "the empty shard is saved: {e}");
    let o = with_store(db, &["--label", label, "--json", "runs"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = &runs["runs"];
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");
    // show says what the shard said, and prints no table.
    let id = runs[0]["meta"]["id"].as_str().unwrap().to_string();
    let o = with_store(db, &["show", &id]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing to run"), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));

    // A label with 1 of 3 shards stored: compare and report warn.
    let partial = "one-of-three";
    let dir = golden("x86");
    let o = with_store(db, &["--label", partial, "check", "--shard", "1/3", &dir]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = with_store(db, &["--no-save", "--json", "check", &dir]);
    let whole = d.join("whole.json");
    std::fs::write(&whole, &o.stdout).unwrap();
    let o = with_store(db, &["compare", whole.to_str().unwrap(), partial]);
    let e = stderr(&o);
    assert!(
        e.contains("missing") && e.contains("0/3") && e.contains("2/3"),
        "compare: {e}"
    );
    let html = d.join("r.html");
    let o = with_store(
        db,
        &["--label", partial, "report", "-o", html.to_str().unwrap()],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains("missing") && e.contains("0/3") && e.contains("2/3"),
        "report: {e}"
    );
    // The empty shard counts as stored: the label knows it has 5 shards
    // and which 4 are missing.
    let o = with_store(
        db,
        &["--label", label, "report", "-o", html.to_str().unwrap()],
    );
    let e = stderr(&o);
    assert!(
        e.contains("missing") && e.contains("0/5") && !e.contains("3/5"),
        "{e}"
    );
}

/// The command in backquotes of the save line, run by `sh` as a user would
/// paste it (with this atomlab first on PATH, and the test's default store).
fn run_hint(saved: &str) -> std::process::Output {
    let line = saved
        .lines()
        .find(|l| l.contains("saved run"))
        .unwrap_or_else(|| panic!("no save line: {saved}"));
    let hint = line.split('`').nth(1).unwrap_or_else(|| panic!("{line}"));
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_atomlab"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let c = cli_support::command();
    std::process::Command::new("sh")
        .args(["-c", hint])
        .env("PATH", path)
        .envs(c.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .env_remove("ATOMLAB_STORE")
        .output()
        .expect("run sh")
}

/// Before: after a save to a store given by `--store` (PostgreSQL, or any
/// other than the default), the hint "`atomlab show ID` prints it again"
/// omitted `--store`, so as given it found nothing. Now the hint, pasted
/// as it is, prints the run.
#[test]
fn the_show_hint_names_the_store_it_saved_in() {
    let d = scratch("hint");
    let mut stores = vec![d.join("a store.db").display().to_string()];
    match std::env::var("ATOMLAB_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => stores.push(url),
        _ => eprintln!(
            "skipped the PostgreSQL half: set ATOMLAB_TEST_POSTGRES=postgres://… (scripts/ci-postgres starts a server)"
        ),
    }
    let mp = golden("x86/MP.litmus");
    for store in &stores {
        let o = with_store(store, &["check", "--model", "sc", &mp]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{e}");
        assert!(e.contains("--store"), "{e}");
        let shown = run_hint(&e);
        assert_eq!(shown.status.code(), Some(0), "{e}{}", stderr(&shown));
        assert!(
            text(&shown.stdout).contains("MP"),
            "{}",
            text(&shown.stdout)
        );
    }
    // The default store needs no --store.
    let o = atomlab(&["check", "--model", "sc", &mp]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    let hint_line = e.lines().find(|l| l.contains("saved run")).unwrap();
    assert!(!hint_line.contains("--store"), "{hint_line}");
    let shown = run_hint(&e);
    assert_eq!(shown.status.code(), Some(0), "{e}{}", stderr(&shown));
}

/// Before: a run was stored with the command line atomlab gave it, not the
/// user's (`--json --label interleave-A` for an interleaved run), and
/// `runs` and `show` joined it with spaces, so `--spawn 'exec nginx …'` or
/// a file name with a space lost its quotes. Now the user's words are
/// stored and shown as they would be typed again.
#[test]
fn stored_command_lines_are_the_users_and_replay() {
    let d = scratch("argv");
    let db = d.join("r.db");
    let db = db.to_str().unwrap();
    let spaced = d.join("my tests");
    std::fs::create_dir_all(&spaced).unwrap();
    let mp = spaced.join("MP.litmus");
    std::fs::copy(golden("x86/MP.litmus"), &mp).unwrap();
    let mp = mp.to_str().unwrap();
    let o = with_store(db, &["--label", "quoted", "check", "--model", "sc", mp]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = with_store(db, &["--label", "quoted", "runs"]);
    let listed = text(&o.stdout);
    // The command column wraps at spaces to fit 100 columns: its lines
    // joined again.
    let command: Vec<&str> = listed
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.split('|').nth(4))
        .map(str::trim)
        .collect();
    assert!(command.join(" ").contains(&format!("'{mp}'")), "{listed}");
    let o = with_store(db, &["--label", "quoted", "--json", "runs"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = &runs["runs"];
    let id = runs[0]["meta"]["id"].as_str().unwrap();
    let o = with_store(db, &["show", id]);
    assert!(stderr(&o).contains(&format!("'{mp}'")), "{}", stderr(&o));

    let o = with_store(
        db,
        &[
            "--label",
            "side",
            "compare",
            "--interleave",
            "1",
            "--",
            "check",
            "--model",
            "sc",
            mp,
            "--",
            "check",
            "--model",
            "x86tso",
            mp,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for (label, model) in [("side-A", "sc"), ("side-B", "x86tso")] {
        let o = with_store(db, &["--label", label, "--json", "runs"]);
        let runs: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let runs = &runs["runs"];
        let line: Vec<&str> = runs[0]["meta"]["command_line"]
            .as_array()
            .unwrap_or_else(|| panic!("{runs}"))
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(&line[1..], ["check", "--model", model, mp], "{label}");
    }
}

/// A test of this repository's: `tests/honest/NAME`.
fn honest(name: &str) -> String {
    format!("{}/tests/honest/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// x86-64 hosts only: the tests below use X86 litmus tests to run.
fn x86_host() -> bool {
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped: an x86-64 host's test");
        return false;
    }
    true
}

/// Before: `run --affinity 0,5` on a 2-CPU machine was accepted and the
/// table said `P1:cpu5`. Now a CPU the process may not run on
/// (sched_getaffinity) is refused, exit 2, naming it.
#[test]
fn run_refuses_cpus_the_process_may_not_use() {
    if !x86_host() {
        return;
    }
    let mp = golden("x86/MP.litmus");
    // CPU 4095 is past the kernel's affinity mask that atomlab reads
    // (CPU_SETSIZE, 1024): never allowed.
    cli_support::assert_bad_input(
        &[
            "run",
            "--no-save",
            "--runs",
            "2",
            "--affinity",
            "0,4095",
            &mp,
        ],
        &["--pin", "4095"],
    );
    let o = atomlab(&[
        "run",
        "--no-save",
        "--runs",
        "2",
        "--size",
        "10",
        "--pin",
        "0",
        &mp,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Before: `run` over a folder of mixed architectures refused the batch
/// with one line per foreign test. Now what this host cannot run is
/// skipped with one summary line and the rest runs.
#[test]
fn run_skips_other_isas_with_one_line() {
    if !x86_host() {
        return;
    }
    let d = scratch("mixed");
    for rel in [
        "x86/MP.litmus",
        "aarch64/MP+dmb.ishst+po.litmus",
        "aarch64/LB+bcond+isb.litmus",
    ] {
        let from = golden(rel);
        let name = rel.replace('/', "-");
        std::fs::copy(&from, d.join(name)).unwrap();
    }
    let o = atomlab(&[
        "run",
        "--no-save",
        "--runs",
        "2",
        "--size",
        "10",
        d.to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        text(&o.stdout).contains("x86-MP.litmus)"),
        "{}",
        text(&o.stdout)
    );
    let skipped: Vec<&str> = e.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(skipped.len(), 1, "{e}");
    assert!(
        skipped[0].contains('2') && skipped[0].contains("AArch64"),
        "{e}"
    );
    assert!(
        !e.contains("MP+dmb.ishst+po"),
        "one line, not one per test: {e}"
    );
}

/// Before: the loop-budget (and pinning-refused) notes were only in
/// `--json`. Now they print under the test's table.
#[test]
fn run_prints_its_notes_under_the_table() {
    if !x86_host() {
        return;
    }
    let o = atomlab(&[
        "run",
        "--no-save",
        "--runs",
        "2",
        "--size",
        "10",
        &honest("spin.litmus"),
    ]);
    let out = text(&o.stdout);
    assert!(out.contains("ran out of their loop budget"), "{out}");
}

/// Before: `run --format json` was refused where `check --format json`
/// was accepted. Now it is `--json`, as for check.
#[test]
fn run_takes_format_json_as_check_does() {
    if !x86_host() {
        return;
    }
    let mp = golden("x86/MP.litmus");
    let o = atomlab(&[
        "run",
        "--no-save",
        "--runs",
        "2",
        "--size",
        "10",
        "--format",
        "json",
        &mp,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON document");
    assert_eq!(doc["command"], "run", "{doc}");
    assert_eq!(doc["records"][0]["scenario"], "MP", "{doc}");
}
