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
    assert!(s.contains("[default: 60]"), "{s}");
    let s = out(&atomlab(&["stress", "--help"]));
    assert!(
        s.contains("[default: correct]") && s.contains("[default: 60]"),
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
    for cap in ["bench counter", "bench lock", "stress", "check"] {
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
