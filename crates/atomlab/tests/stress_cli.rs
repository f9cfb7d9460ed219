//! Drives the real `atomlab stress` binary: bad input exits 2 with the
//! valid choices named; broken variants that x86 cannot hide are caught
//! (FAIL) while the run still exits 0; a correct variant passes; the JSON
//! carries the verdict, the counts, the seed and the replay line.

mod cli_support;

use cli_support::{assert_bad_input, atomlab, stderr};
use serde_json::Value;

/// Runs with `--json` and returns the exit code and the records.
fn json_run(args: &[&str]) -> (i32, Vec<Value>) {
    let mut all = vec!["stress"];
    all.extend_from_slice(args);
    all.push("--json");
    let o = atomlab(&all);
    let doc: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{all:?}: not JSON ({e}): {}", stderr(&o)));
    assert_eq!(doc["schema_version"], 2);
    assert!(doc["machine"]["arch"].is_string());
    let recs = doc["records"].as_array().expect("records").clone();
    (o.status.code().unwrap_or(-1), recs)
}

fn metric(r: &Value, name: &str) -> Option<f64> {
    r["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)?["samples"][0]
        .as_f64()
}

#[test]
fn bad_input_exits_2_and_lists_the_choices() {
    assert_bad_input(
        &["stress", "mutx"],
        &[
            "unknown scenario 'mutx'",
            "mutex, peterson, dekker, refcount, spsc, seqlock",
        ],
    );
    assert_bad_input(
        &["stress", "mutex", "--variant", "futex"],
        &[
            "unknown mutex variant 'futex'",
            "ticket",
            "broken-tas-not-atomic",
        ],
    );
    assert_bad_input(&["stress", "mutex", "--threads", "0"], &["--threads 0"]);
    assert_bad_input(
        &["stress", "peterson", "--threads", "3"],
        &["exactly 2 threads"],
    );
    assert_bad_input(&["stress", "mutex", "--ops", "0"], &["--ops 0"]);
    assert_bad_input(
        &["stress", "mutex", "--ops", "99999999999999999999999"],
        &["--ops"],
    );
    assert_bad_input(
        &["stress", "mutex", "--ops", "10", "--tasks", "11"],
        &["--tasks 11"],
    );
    assert_bad_input(
        &["stress", "spsc", "--tasks", "4"],
        &["--tasks applies to the mutex scenario only"],
    );
    assert_bad_input(&["stress", "mutex", "--pin", "diagonal"], &["spread"]);
    assert_bad_input(&["stress", "mutex", "--time-limit", "0"], &["--timeout 0"]);
    assert_bad_input(
        &["stress", "mutex", "--time-limit", "soon"],
        &["not a duration"],
    );
}

#[test]
fn broken_test_and_set_is_caught_on_this_machine() {
    // A race is caught by chance; on a busy machine the threads may seldom
    // overlap, so up to three seeds. A detector that never catches fails.
    let attempt = |seed: &str| {
        json_run(&[
            "mutex",
            "--variant",
            "broken-tas-not-atomic",
            "--ops",
            "400000",
            "--seed",
            seed,
            // Longer sections keep both threads overlapping on a loaded machine.
            "--jitter",
        ])
    };
    let (mut code, mut recs) = attempt("7");
    for seed in ["8", "9"] {
        if recs[0]["verdict"] == "FAIL" {
            break;
        }
        (code, recs) = attempt(seed);
    }
    // A broken variant failing is the expected outcome: exit 0.
    assert_eq!(code, 0);
    let r = &recs[0];
    assert_eq!(r["capability"], "stress");
    assert_eq!(r["variant"], "broken-tas-not-atomic");
    assert_eq!(r["parameters"]["expected"], "broken");
    assert_eq!(r["verdict"], "FAIL", "{r}");
    assert!(metric(r, "violations").unwrap() > 0.0);
    assert!(metric(r, "violations:mutual_exclusion").unwrap() > 0.0);
    assert!(metric(r, "time_to_first_violation").unwrap() >= 0.0);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("first violation (mutual_exclusion)"),
        "{notes}"
    );
}

#[test]
fn broken_peterson_without_fence_is_caught_on_this_machine() {
    // Store buffering needs two CPUs; this machine (and CI) has them.
    let attempt = || {
        json_run(&[
            "peterson",
            "--variant",
            "broken-peterson-nofence",
            "--ops",
            "1000000",
            "--jitter",
            "--expect-fail",
        ])
    };
    // Caught by chance: up to three runs (fresh seeds) before calling it missed.
    let (mut code, mut recs) = attempt();
    for _ in 0..2 {
        if recs[0]["verdict"] == "FAIL" {
            break;
        }
        (code, recs) = attempt();
    }
    assert_eq!(recs[0]["verdict"], "FAIL", "{}", recs[0]);
    assert_eq!(code, 0, "--expect-fail: every variant caught exits 0");
}

#[test]
fn correct_variants_pass_and_the_json_replays() {
    let (code, recs) = json_run(&[
        "mutex",
        "--variant",
        "ticket,runtime-store-release",
        "--ops",
        "20000",
        "--tasks",
        "4",
        "--seed",
        "42",
        "--jitter",
    ]);
    assert_eq!(code, 0);
    assert_eq!(recs.len(), 2);
    for r in &recs {
        assert_eq!(r["verdict"], "PASS", "{r}");
        assert_eq!(r["parameters"]["expected"], "correct");
        assert_eq!(r["parameters"]["seed"], 42);
        assert_eq!(r["parameters"]["tasks"], 4);
        assert_eq!(metric(r, "operations"), Some(20000.0));
        assert_eq!(metric(r, "violations"), Some(0.0));
        assert!(metric(r, "seconds").unwrap() > 0.0);
        assert!(metric(r, "time_to_first_violation").is_none());
        assert!(metric(r, "parallelism").unwrap() > 0.0, "{r}");
        let replay = r["parameters"]["replay"].as_str().unwrap();
        assert!(
            replay.starts_with("atomlab stress mutex --variant ")
                && replay.contains("--ops 20000 --tasks 4 --seed 42")
                && replay.ends_with("--jitter"),
            "{replay}"
        );
    }
    // --expect-fail turns a correct variant's PASS into exit 1.
    let (code, _) = json_run(&["seqlock", "--ops", "1000", "--expect-fail"]);
    assert_eq!(code, 1);
}

#[test]
fn a_doorbell_without_fences_loses_wake_ups_on_this_machine() {
    // The store-buffering outcome of the sleeping consumer's handshake:
    // x86-TSO allows it, so the hardware shows it (1.3% of items here);
    // with the fences, never. Two CPUs needed; this machine and CI have them.
    let attempt = || {
        json_run(&[
            "spsc",
            "--variant",
            "c11-acq-rel+notify,broken-doorbell-no-fence",
            "--ops",
            "20000",
        ])
    };
    let (mut code, mut recs) = attempt();
    for _ in 0..2 {
        if recs[1]["verdict"] == "FAIL" {
            break;
        }
        (code, recs) = attempt();
    }
    assert_eq!(code, 0, "{recs:?}");
    assert_eq!(recs[0]["variant"], "c11-acq-rel+notify");
    assert_eq!(recs[0]["verdict"], "PASS", "{}", recs[0]);
    // Under qemu-user (scripts/cross-test) the race window is a few
    // emulated instructions that the translator's timing rarely lines up:
    // there a NOT_OBSERVED, which the record says proves nothing, is
    // allowed; a PASS (claiming correctness) never is.
    let emulated = recs[1].to_string().contains("running under emulation");
    if emulated && recs[1]["verdict"] == "NOT_OBSERVED" {
        return;
    }
    assert_eq!(recs[1]["verdict"], "FAIL", "{}", recs[1]);
    assert!(recs[1].to_string().contains("lost_wakeup"), "{}", recs[1]);
}

#[test]
fn broken_variants_run_only_when_asked_and_are_never_a_bare_pass() {
    let (_, recs) = json_run(&["spsc", "--ops", "2000"]);
    assert!(recs
        .iter()
        .all(|r| r["parameters"]["expected"] == "correct"));
    let (code, recs) = json_run(&["spsc", "--variant", "broken", "--ops", "2000"]);
    assert_eq!(code, 0, "broken variants never make the run fail");
    assert_eq!(recs.len(), 3);
    for r in &recs {
        assert!(r["variant"].as_str().unwrap().starts_with("broken-"));
        assert_ne!(r["verdict"], "PASS", "{r}");
        if r["verdict"] == "NOT_OBSERVED" {
            assert!(
                r["notes"]
                    .to_string()
                    .contains("not observed in 2000 items"),
                "{r}"
            );
        }
    }
}

#[test]
fn tables_for_people() {
    let o = atomlab(&[
        "stress",
        "refcount",
        "--variant",
        "raw",
        "--ops",
        "5000",
        "--seed",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("| refcount"), "{out}");
    assert!(out.contains("PASS"), "{out}");
    assert!(
        out.contains("replay: atomlab stress refcount --variant raw"),
        "{out}"
    );
    assert!(stderr(&o).contains("seed 3"));
}

#[test]
fn a_run_cut_off_by_the_time_limit_is_undecided_and_exits_1() {
    let (code, recs) = json_run(&["seqlock", "--ops", "1000000000000", "--time-limit", "300ms"]);
    assert_eq!(code, 1, "a correct variant that timed out is not a pass");
    let r = &recs[0];
    assert_eq!(r["verdict"], "TIMEOUT", "{r}");
    let done = metric(r, "operations").unwrap();
    assert!(done > 0.0 && done < 1e12, "{done}");
    assert!(r["notes"]
        .to_string()
        .contains("stopped at the time limit (0.3 s)"));
    assert!(r["parameters"]["replay"]
        .as_str()
        .unwrap()
        .ends_with("--timeout 0.3"));
}
