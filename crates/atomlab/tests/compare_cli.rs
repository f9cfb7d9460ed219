//! `atomlab compare` must compare something or say it could not: what the
//! two sides share is matched (a variant or parameter each side sets
//! throughout is what is compared), identical verdicts count as compared,
//! nothing in common exits 2, chance among many rows and thin tail
//! percentiles are not regressions, partial runs stay out unless asked, and
//! a million samples a side finish. Each test uses its own SQLite file.

mod cli_support;

use cli_support::{golden as litmus, scratch, text, with_store as run};

use std::path::Path;

use serde_json::{json, Value};

/// A real document (from `check`), its records replaced by `records`.
fn document(records: Vec<Value>) -> Value {
    let o = cli_support::command()
        .args(["--no-save", "--json", "check", &litmus("x86/MP.litmus")])
        .output()
        .unwrap();
    let mut doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["records"] = records.into();
    doc
}

/// `out` with the lines that prose wrapped to 100 columns joined again
/// (a wrapped line goes on two spaces in).
fn unwrapped(out: &str) -> String {
    out.replace("\n  ", " ")
}

fn write(d: &Path, name: &str, doc: &Value) -> String {
    let p = d.join(name);
    std::fs::write(&p, serde_json::to_vec(doc).unwrap()).unwrap();
    p.display().to_string()
}

/// One `load` run's record as load writes it (one sample per metric):
/// `base` scales every latency, `tail` the p99.9, p99.99 and max, over
/// `requests` requests.
fn load_record(base: f64, tail: f64, requests: f64, interrupted: bool) -> Value {
    let m = |name: &str, unit: &str, v: f64| json!({"name": name, "unit": unit, "source": {"kind": "clock_gettime"}, "samples": [v]});
    let lat = 1e-4 * base;
    json!({
        "schema_version": 2,
        "atomlab_version": "0.1.0",
        "capability": "load",
        "scenario": "http",
        "variant": "rate",
        "parameters": {"connections": 32, "rate": 10000.0, "duration_s": 3.0,
                       "url": "http://127.0.0.1:8081/", "interrupted": interrupted},
        "metrics": [
            m("requests", "count", requests),
            m("requests_per_sec", "ops_per_second", 10_000.0 * (2.0 - base)),
            m("bytes_per_sec", "bytes_per_second", 1.5e6 * (2.0 - base)),
            m("latency_p50_s", "seconds", lat),
            m("latency_p90_s", "seconds", 10.0 * lat),
            m("latency_p99_s", "seconds", 40.0 * lat),
            m("latency_p999_s", "seconds", 80.0 * lat * tail),
            m("latency_p9999_s", "seconds", 100.0 * lat * tail),
            m("latency_max_s", "seconds", 110.0 * lat * tail),
            m("latency_mean_s", "seconds", 5.0 * lat),
            m("server_cpu_percent", "percent", 11.0 * base),
            m("server_cpu_machine_percent", "percent", 5.5 * base),
            m("server_cpu_percent_per_1k_rps", "percent", 1.1 * base),
        ],
        "unix_time": 0
    })
}

#[test]
fn the_readme_interleave_compares_the_two_variants() {
    // README: compare --interleave 5 -- bench lock --variant ttas … --
    // bench lock --variant mcs …; the variant is what is compared.
    let d = scratch("variants");
    let db = d.join("r.db").display().to_string();
    let lock = |v: &'static str| {
        [
            "bench",
            "lock",
            "--variant",
            v,
            "--increments",
            "20000",
            "--runs",
            "2",
            "--warmup",
            "1ms",
        ]
    };
    let mut args = vec!["compare", "--interleave", "2", "--threshold", "1e9", "--"];
    args.extend(lock("ttas"));
    args.push("--");
    args.extend(lock("mcs"));
    let o = run(&db, &args);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(!out.contains("only in A:"), "{out}");
    assert!(out.contains("matched 1 record(s)"), "{out}");
    assert!(
        unwrapped(&out).contains("variant ttas (A) vs mcs (B)"),
        "{out}"
    );
    assert!(
        out.contains("ttas→mcs") && out.contains("ns_per_op"),
        "{out}"
    );
}

#[test]
fn a_label_against_itself_matches_every_verdict() {
    let d = scratch("self");
    let db = d.join("r.db").display().to_string();
    let o = run(
        &db,
        &[
            "--label",
            "L",
            "check",
            "--model",
            "x86tso,sc",
            &litmus("x86"),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run(&db, &["--json", "runs", "--label", "L"]);
    assert_eq!(o.status.code(), Some(0));
    let o = run(&db, &["compare", "L", "L"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    let n: usize = out
        .split("matched ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(n >= 2, "{out}");
    assert!(
        out.contains(&format!("verdicts: {n} compared, 0 changed")),
        "{out}"
    );
    assert!(!out.contains("no record of A matches"), "{out}");
}

#[test]
fn nothing_in_common_exits_2() {
    let d = scratch("nothing");
    let db = d.join("r.db").display().to_string();
    let check = write(
        &d,
        "check.json",
        &document(vec![load_record(1.0, 1.0, 1e6, false)]),
    );
    let mut other = load_record(1.0, 1.0, 1e6, false);
    other["capability"] = "bench".into();
    let bench = write(&d, "bench.json", &document(vec![other]));
    let o = run(&db, &["compare", &check, &bench]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}{err}", text(&o.stdout));
    assert!(
        err.contains("nothing to compare") && err.contains("load http"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn chance_in_thin_tails_and_among_many_rows_is_no_regression() {
    // The nginx case: 5 against 5 interleaved runs of 30 000 requests,
    // 12 judged metrics; by chance B's p99.9, p99.99 and max all lie above
    // A's (p = 0.0079 each, unadjusted), the rest overlap.
    let d = scratch("tails");
    let db = d.join("r.db").display().to_string();
    let wobble = [1.0, 1.02, 0.99, 1.01, 0.98];
    let a: Vec<Value> = wobble
        .iter()
        .map(|w| load_record(*w, 1.0, 30_000.0, false))
        .collect();
    let b: Vec<Value> = wobble
        .iter()
        .rev()
        .map(|w| load_record(*w, 1.3, 30_000.0, false))
        .collect();
    let (pa, pb) = (
        write(&d, "a.json", &document(a)),
        write(&d, "b.json", &document(b)),
    );
    let o = run(&db, &["compare", &pa, &pb]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", text(&o.stderr));
    assert!(
        out.contains("not judged: latency_p9999_s: a run's p99.99 rests on 30000 samples"),
        "{out}"
    );
    assert!(out.contains("not judged: latency_max_s"), "{out}");
    assert!(out.contains("Holm-Bonferroni over 10"), "{out}");
    // The same p999 alone is a regression: the correction, not the data,
    // keeps it from being one among ten.
    let o = run(&db, &["compare", &pa, &pb, "--metric", "latency_p999_s"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
}

#[test]
fn partial_runs_are_left_out_unless_asked() {
    let d = scratch("partial");
    let db = d.join("r.db").display().to_string();
    let wobble = [1.0, 1.02, 0.99, 1.01, 0.98];
    let a: Vec<Value> = wobble
        .iter()
        .map(|w| load_record(*w, 1.0, 30_000.0, false))
        .collect();
    let mut b = a.clone();
    b.push(load_record(1.5, 1.0, 900.0, true));
    let (pa, pb) = (
        write(&d, "a.json", &document(a)),
        write(&d, "b.json", &document(b)),
    );
    let n_b = |extra: &[&str]| {
        let mut args = vec!["--json", "compare", &pa, &pb, "--metric", "latency_p50_s"];
        args.extend(extra);
        let o = run(&db, &args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        (
            v["records"][0]["parameters"]["n_b"].as_u64().unwrap(),
            text(&o.stderr),
        )
    };
    let (n, err) = n_b(&[]);
    assert_eq!(n, 5, "{err}");
    assert!(err.contains("left out 1 partial record(s) of B"), "{err}");
    let (n, err) = n_b(&["--include-partial"]);
    assert_eq!(n, 6, "{err}");
    assert!(err.contains("1 partial record(s) of B pooled"), "{err}");
}

#[test]
fn a_million_samples_a_side_finish() {
    // Imported per-request latencies: 10⁶ samples a metric on each side.
    // The bootstrap used to sort both sides for each of 10 000 resamples.
    let d = scratch("million");
    let db = d.join("r.db").display().to_string();
    let n = 1_000_000usize;
    let rec = |scale: f64| {
        let mut r = load_record(1.0, 1.0, 1e6, false);
        r["metrics"] = json!([{
            "name": "latency_s", "unit": "seconds", "source": {"kind": "clock_gettime"},
            "samples": (0..n).map(|i| scale * (1e-4 + ((i * 7919) % 1000) as f64 * 1e-7)).collect::<Vec<f64>>()
        }]);
        r
    };
    let (pa, pb) = (
        write(&d, "a.json", &document(vec![rec(1.0)])),
        write(&d, "b.json", &document(vec![rec(1.02)])),
    );
    let o = run(&db, &["compare", &pa, &pb]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", text(&o.stderr));
    assert!(out.contains("CI*: 1000000 x 1000000 runs"), "{out}");
    assert!(out.contains("worse (regression)"), "{out}");
}

/// `--interleave` refuses what it cannot run before anything runs (no
/// round, one command, an empty one), and a side's command that atomlab
/// refuses stops the rounds: exit 2, each named by the flag or the
/// command.
#[test]
fn interleave_refuses_what_it_cannot_run() {
    use cli_support::assert_bad_input;
    fn compare<'a>(rest: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["--no-save", "compare", "--interleave"];
        args.extend(rest);
        args
    }
    assert_bad_input(
        &compare(&["0", "--", "machine", "--", "machine"]),
        &["--interleave needs at least 1 round"],
    );
    assert_bad_input(
        &compare(&["1", "--", "machine"]),
        &["--interleave needs two commands"],
    );
    assert_bad_input(
        &compare(&["1", "--", "machine", "--"]),
        &["--interleave: one of the two commands is empty"],
    );
    assert_bad_input(
        &compare(&["1", "--", "bench", "no-such-scenario", "--", "machine"]),
        &["atomlab bench no-such-scenario was refused (exit 2): see above"],
    );
}
