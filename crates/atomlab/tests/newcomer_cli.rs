//! Issue 9's newcomer path: what a first-time user sees. Each test names
//! the behaviour of the code before the fix that it would have caught.

mod cli_support;

use cli_support::{atomlab, stderr};

fn out(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Before: the PMU note was printed two or three times per command (stderr
/// at the probe, stdout under the table). Now once, under the figures.
#[test]
fn the_pmu_note_once_per_command() {
    let o = atomlab(&[
        "bench",
        "counter",
        "--threads",
        "1",
        "--duration",
        "20ms",
        "--warmup",
        "5ms",
        "--runs",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let all = out(&o) + &stderr(&o);
    let machine: serde_json::Value =
        serde_json::from_slice(&atomlab(&["machine", "--json"]).stdout).unwrap();
    let want = usize::from(machine["machine"]["pmu"]["available"] == false);
    assert_eq!(
        all.matches("hardware counters").count(),
        want,
        "the PMU note, once when the PMU is unavailable: {all}"
    );
}

/// Before: `machine` printed "not probed" for the PMU.
#[test]
fn machine_probes_the_pmu() {
    let o = atomlab(&["machine"]);
    assert_eq!(o.status.code(), Some(0));
    let s = out(&o);
    assert!(!s.contains("not probed"), "{s}");
    assert!(s.contains("| pmu"), "{s}");
    // The table is wrapped: no line wider than 100 columns.
    assert!(s.lines().all(|l| l.chars().count() <= 100), "{s}");
}

/// Before: `audit --require lse` on an x86-64 binary said "met".
#[test]
fn require_on_another_arch_is_not_applicable() {
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let me = env!("CARGO_BIN_EXE_atomlab");
    let o = atomlab(&["audit", "--require", "lse", me]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = out(&o);
    assert!(s.contains("not applicable"), "{s}");
    assert!(!s.contains(": met"), "{s}");
    let o = atomlab(&["audit", "--json", "--require", "lse", me]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["records"][0].get("verdict").is_none(),
        "no PASS for x86-64"
    );
    assert!(v["records"][0]["detail"]["require"]["met"].is_null());
}

/// Before: `--help` did not show the defaults of most options.
#[test]
fn help_shows_defaults() {
    let o = atomlab(&["bench", "--help"]);
    let s = out(&o);
    for d in [
        "[default: 1s]",
        "[default: 5]",
        "[default: 200ms]",
        "[default: shared]",
    ] {
        assert!(s.contains(d), "bench --help lacks {d}: {s}");
    }
    let s = out(&atomlab(&["check", "--help"]));
    assert!(s.contains("[default: 60s]"), "{s}");
    let s = out(&atomlab(&["stress", "--help"]));
    assert!(
        s.contains("[default: correct]") && s.contains("[default: 60s]"),
        "{s}"
    );
}

/// Before: no completions and no man page.
#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish"] {
        let o = atomlab(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0));
        let s = out(&o);
        assert!(
            s.contains("atomlab") && s.contains("stress"),
            "{shell}: {s}"
        );
    }
    let o = atomlab(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(out(&o).starts_with(".ie") || out(&o).contains(".TH atomlab 1"));
}

/// Before: progress lines on stderr even when piped. Now a bar on a
/// terminal only; piped, stderr carries notes, not one line per cell.
#[test]
fn no_progress_lines_when_piped() {
    let o = atomlab(&[
        "bench",
        "fence",
        "--variant",
        "none,seq_cst",
        "--duration",
        "10ms",
        "--warmup",
        "5ms",
        "--runs",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let e = stderr(&o);
    assert!(!e.contains("bench fence none"), "{e}");
}

/// Before: `suite` printed 213 lines, 84 of them wider than 120 columns.
/// Now one screen: a line per capability.
#[test]
fn suite_fits_on_one_screen() {
    let html = std::env::temp_dir().join(format!("atomlab-suite-{}.html", std::process::id()));
    let o = atomlab(&["suite", "-o", html.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s = out(&o);
    assert!(s.lines().count() <= 40, "{} lines: {s}", s.lines().count());
    assert!(s.lines().all(|l| l.chars().count() <= 120), "{s}");
    for cap in [
        "bench counter",
        "bench lock",
        "stress",
        "check",
        "run (this CPU)",
    ] {
        assert!(s.contains(cap), "no {cap} line: {s}");
    }
    // The suite writes its report and says where.
    assert!(
        stderr(&o).contains(html.to_str().unwrap()),
        "{}",
        stderr(&o)
    );
    let page = std::fs::read_to_string(&html).expect("the suite's report");
    assert!(page.contains("<svg"));
    suite_runs_the_builtin_tests(&o, &s, &page);
}

/// Before: `suite` only judged its built-in litmus tests (`check`); the
/// CPU's own answer needed a separate `atomlab run`. Now the suite runs
/// each briefly: a `run` record per test, a summary line per test (or per
/// reason tests were not run), and SB's relaxed outcome counted on x86-64.
fn suite_runs_the_builtin_tests(o: &std::process::Output, summary: &str, page: &str) {
    let e = stderr(o);
    assert!(!e.contains("panicked"), "{e}");
    assert!(!e.contains("FORBIDDEN"), "{e}");
    assert!(!summary.contains("FORBIDDEN"), "{summary}");
    // The run's records, as saved: `atomlab export` of the run id on stderr.
    let id = e
        .split("saved run ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no run id on stderr: {e}"));
    let x = atomlab(&["export", id]);
    assert_eq!(x.status.code(), Some(0), "{}", stderr(&x));
    let doc: serde_json::Value = serde_json::from_slice(&x.stdout).expect("export is JSON");
    let runs: Vec<&serde_json::Value> = doc["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter(|r| r["capability"] == "run")
        .collect();
    let builtin = [
        "SB+rel-acq",
        "SB+sc",
        "MP+rlx",
        "MP+rel+acq",
        "LB+fence.acqs",
        "IRIW+acq",
    ];
    for name in builtin {
        assert_eq!(
            runs.iter().filter(|r| r["scenario"] == name).count(),
            1,
            "one run record for {name}: {runs:?}"
        );
        // Its line in the summary: the hardware's observation or why not.
        let line = ["Never", "Sometimes", "Always", "not run"]
            .iter()
            .any(|w| summary.contains(&format!("{name}: {w}")));
        assert!(line, "no run line for {name}: {summary}");
    }
    // The HTML report shows the run records beside the others.
    assert!(page.contains("SB+rel-acq"), "no run record in the report");
    for r in &runs {
        assert_ne!(r["verdict"], "FAIL", "a forbidden outcome: {r}");
    }
    if !cfg!(target_arch = "x86_64") {
        eprintln!(
            "suite_runs_the_builtin_tests: not x86-64, the code generator refuses every test: \
             checking they are reported as not run, not the hardware's outcomes"
        );
        for r in &runs {
            assert!(r.get("verdict").is_none(), "{r}");
            assert!(r["parameters"]["not_run"].is_string(), "{r}");
        }
        assert!(summary.contains("not run: "), "{summary}");
        return;
    }
    for r in &runs {
        assert!(
            r["parameters"]["not_run"].is_null(),
            "x86-64 runs every built-in test: {r}"
        );
        let instances = &r["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "instances")
            .expect("instances")["summary"]["median"];
        assert!(instances.as_f64().unwrap_or(0.0) > 0.0, "{r}");
    }
    // SB with release/acquire: x86's store buffer shows the relaxed outcome
    // in nearly every run of a few thousand instances; 50 x 1000 here.
    let sb = runs.iter().find(|r| r["scenario"] == "SB+rel-acq").unwrap();
    let positive = sb["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "positive")
        .expect("positive")["summary"]["median"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(positive > 0.0, "SB's relaxed outcome not seen: {sb}");
    assert!(
        summary.contains("SB+rel-acq: Sometimes"),
        "SB's line shows its outcome: {summary}"
    );
}

/// Before: `stress refcount` printed "refcount_t: underflow; use-after-free"
/// with nothing saying it was the saturation test working.
#[test]
fn refcount_saturation_warnings_are_announced() {
    let o = atomlab(&[
        "stress",
        "refcount",
        "--variant",
        "saturating",
        "--ops",
        "20000",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    let announced = e.find("warnings below are expected").expect(&e);
    if let Some(warning) = e.find("atomlab-prims: refcount_t: saturated") {
        assert!(announced < warning, "{e}");
    }
}

/// Before: an empty table was printed when every input was refused.
#[test]
fn no_empty_table_when_every_input_is_refused() {
    let bad = std::env::temp_dir().join(format!("atomlab-refused-{}.litmus", std::process::id()));
    std::fs::write(&bad, "C broken\n{ x = ; }\n").unwrap();
    let o = atomlab(&["check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "{}", out(&o));
    assert!(stderr(&o).contains("broken") || stderr(&o).contains(bad.to_str().unwrap()));
    let notelf = std::env::temp_dir().join(format!("atomlab-notelf-{}", std::process::id()));
    std::fs::write(&notelf, "not an ELF").unwrap();
    let o = atomlab(&["audit", notelf.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "{}", out(&o));
}
