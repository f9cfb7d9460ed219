//! Drives the real `atomlab bench` binary: bad input exits 2 with the valid
//! choices named, and a tiny run's JSON is checked field by field.

mod cli_support;

use cli_support::{assert_bad_input, atomlab, stderr};
use serde_json::Value;

#[test]
fn bad_input_exits_2_and_lists_the_choices() {
    assert_bad_input(
        &["bench", "spinlock"],
        &[
            "unknown scenario 'spinlock'",
            "counter, refcount, lock, fence, pingpong",
        ],
    );
    assert_bad_input(
        &["bench", "lock", "--variant", "futex"],
        &["unknown lock variant 'futex'", "ticket", "mcs"],
    );
    assert_bad_input(
        &["bench", "counter", "--ordering", "sc"],
        &["unknown ordering 'sc'", "seq_cst"],
    );
    assert_bad_input(&["bench", "counter", "--threads", "0"], &["--threads 0"]);
    assert_bad_input(
        &["bench", "counter", "--threads", "100000"],
        &["--threads 100000"],
    );
    assert_bad_input(&["bench", "counter", "--threads", "two"], &["two"]);
    assert_bad_input(&["bench", "counter", "--duration", "0"], &["--duration 0"]);
    assert_bad_input(
        &["bench", "counter", "--duration", "forever"],
        &["not a duration"],
    );
    assert_bad_input(&["bench", "counter", "--runs", "0"], &["--runs 0"]);
    // Issue 9: clap answered a negative number with "use -- -1".
    assert_bad_input(
        &["bench", "counter", "--duration", "-1"],
        &["'-1' is not a duration", "non-negative"],
    );
    // Output paths are checked before anything is measured.
    assert_bad_input(
        &[
            "bench",
            "counter",
            "--export-json",
            "/nonexistent-dir/out.json",
        ],
        &["--export-json", "cannot write /nonexistent-dir/out.json"],
    );
    assert_bad_input(
        &["bench", "counter", "--events", "cylces"],
        &["unknown event 'cylces'", "r6e"],
    );
    assert_bad_input(
        &["bench", "counter", "--contention", "some"],
        &["shared or private"],
    );
    assert_bad_input(&["bench", "counter", "--frobnicate"], &["--frobnicate"]);
    // Issue 12: bench spsc's rate and ring options.
    for rate in ["0", "-1", "fast", "1T", "inf"] {
        assert_bad_input(
            &["bench", "spsc", "--rate", rate],
            &[&format!("--rate {rate}"), "100k, 1M", "max"],
        );
    }
    assert_bad_input(
        &["bench", "spsc", "--capacity", "0"],
        &["--capacity 0", "between 1 and"],
    );
    assert_bad_input(
        &["bench", "spsc", "--variant", "lamport"],
        &[
            "unknown spsc variant 'lamport'",
            "c11-acq-rel",
            "rtrb",
            "schedule-only",
        ],
    );
    assert_bad_input(
        &["bench", "spsc", "--placement", "numa"],
        &["unknown placement 'numa'", "cross-core or same-core"],
    );
    assert_bad_input(
        &["bench", "spsc", "--wait", "sleep"],
        &["unknown wait 'sleep'", "spin, yield or notify"],
    );
    assert_bad_input(
        &["bench", "counter", "--wait", "notify"],
        &["--wait applies to the spsc scenario, not counter"],
    );
    assert_bad_input(&["bench", "fence", "--rate", "1M"], &["not fence"]);
    assert_bad_input(
        &["bench", "lock", "--rate", "1M", "--increments", "1000"],
        &["--rate and --increments", "pick one"],
    );
    assert_bad_input(
        &["bench", "fence", "--ordering", "relaxed"],
        &[
            "--ordering applies to the counter scenario, not fence",
            "fence variants fix their own orderings",
        ],
    );
    // An option the scenario does not take is refused as such, whatever
    // its word; a word for the right scenario names the valid ones.
    for (flag, word, choices) in [
        ("--placement", "numa", "cross-core or same-core"),
        ("--wait", "sleep", "spin, yield or notify"),
    ] {
        assert_bad_input(
            &["bench", "counter", flag, word],
            &[&format!("{flag} applies to the spsc scenario, not counter")],
        );
        assert_bad_input(&["bench", "spsc", flag, word], &[word, choices]);
    }
    assert_bad_input(
        &["bench", "counter", "--contention", "none"],
        &["unknown contention 'none': expected shared or private"],
    );
    if !cfg!(target_arch = "aarch64") {
        assert_bad_input(&["bench", "counter", "--variant", "lse"], &["aarch64"]);
        assert_bad_input(
            &["bench", "fence", "--variant", "dmb_ish"],
            &["aarch64 only"],
        );
    }
}

/// The number of samples a metric of `r` must have after `runs` runs:
/// every run, less those the record says it left out (a run timed faster
/// than this machine's atomic RMW, which a loaded machine under qemu can
/// produce). A sample lost without that flag fails the caller's test.
fn samples_expected(r: &Value, runs: usize) -> usize {
    let excluded = r["flags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["kind"] == "runs_excluded")
        .map(|f| {
            let m = f["detail"].as_str().unwrap_or_default();
            let n = m.split(' ').next().and_then(|n| n.parse::<usize>().ok());
            assert!(m.contains(&format!(" of {runs} runs left out")), "flag {f}");
            n.unwrap_or_else(|| panic!("flag {f} names no count"))
        })
        .sum::<usize>();
    assert!(excluded < runs, "every run left out: {r}");
    runs - excluded
}

fn json_run(args: &[&str]) -> Value {
    let o = atomlab(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("stdout is one JSON document")
}

#[test]
fn tiny_counter_run_json_field_by_field() {
    let dir = std::env::temp_dir().join(format!("atomlab-bench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let export = dir.join("out.json");
    let v = json_run(&[
        "bench",
        "counter",
        "--variant",
        "fetch_add",
        "--threads",
        "1,2",
        "--contention",
        "private",
        "--duration",
        "20ms",
        "--warmup",
        "5ms",
        "--runs",
        "2",
        "--json",
        "--export-json",
        export.to_str().unwrap(),
    ]);
    assert_eq!(v["schema_version"], 2);
    let m = &v["machine"];
    assert_eq!(m["arch"], std::env::consts::ARCH);
    assert!(m["cpus"].as_u64().unwrap() >= 1);
    assert!(m["rustc"].as_str().unwrap().starts_with("rustc"));
    assert!(m["pmu"]["available"].is_boolean());
    if m["pmu"]["available"] == false {
        assert!(m["pmu"]["reason"]
            .as_str()
            .unwrap()
            .contains("perf_event_open"));
    }
    let records = v["records"].as_array().unwrap();
    assert_eq!(records.len(), 2, "one record per thread count");
    for (r, threads) in records.iter().zip([1, 2]) {
        assert_eq!(r["schema_version"], 2);
        assert_eq!(r["capability"], "bench");
        assert_eq!(r["scenario"], "counter");
        assert_eq!(r["variant"], "fetch_add");
        assert_eq!(r["parameters"]["threads"], threads);
        assert_eq!(r["parameters"]["contention"], "private");
        assert_eq!(r["parameters"]["ordering"], "seq_cst");
        assert_eq!(r["parameters"]["runs"], 2);
        let metric = |name: &str| {
            r["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["name"] == name)
                .unwrap_or_else(|| panic!("metric {name} missing"))
                .clone()
        };
        let ops = metric("ops_per_sec");
        assert_eq!(ops["unit"], "ops_per_second");
        assert_eq!(ops["source"]["kind"], "clock_gettime");
        assert_eq!(
            ops["samples"].as_array().unwrap().len(),
            samples_expected(r, 2),
            "{r}"
        );
        let s = &ops["summary"];
        assert!(s["min"].as_f64().unwrap() > 0.0);
        assert!(
            s["min"].as_f64() <= s["median"].as_f64() && s["median"].as_f64() <= s["max"].as_f64()
        );
        let ns = metric("ns_per_op");
        assert_eq!(ns["unit"], "nanos_per_op");
        let ns_med = ns["summary"]["median"].as_f64().unwrap();
        assert!(ns_med > 0.05 && ns_med < 10_000.0, "ns/op {ns_med}");
        if cfg!(target_arch = "x86_64") {
            let rc = metric("ref_cycles_per_op");
            assert_eq!(rc["unit"], "ref_cycles_per_op");
            assert_eq!(rc["source"]["kind"], "tsc");
        }
        let cpu = metric("cpu_utilisation");
        assert_eq!(cpu["unit"], "percent");
        let fair = metric("fairness")["summary"]["median"].as_f64().unwrap();
        // A thread starved for a whole 20 ms run on a busy machine gives 0.
        assert!((0.0..=1.0).contains(&fair), "fairness {fair}");
    }
    let exported: Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    assert_eq!(exported["records"].as_array().unwrap().len(), 2);
    assert_eq!(exported["machine"], v["machine"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_scenario_runs_and_prints_a_table() {
    for args in [
        &[
            "bench",
            "refcount",
            "--variant",
            "refcount-inc,refcount-inc-call",
            "--threads",
            "1",
        ][..],
        &[
            "bench",
            "lock",
            "--variant",
            "ticket,mcs",
            "--threads",
            "2",
            "--cs-work",
            "4",
        ],
        &[
            "bench",
            "fence",
            "--variant",
            "none,seq_cst",
            "--threads",
            "1",
        ],
        &["bench", "pingpong", "--no-pin"],
    ] {
        let mut a = args.to_vec();
        a.extend(["--duration", "20ms", "--warmup", "5ms", "--runs", "2"]);
        let o = atomlab(&a);
        assert_eq!(o.status.code(), Some(0), "{a:?}: {}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("ns"), "{a:?}: {out}");
        assert!(out.lines().count() >= 3, "{a:?}: {out}");
    }
}

#[test]
fn fixed_work_lock_counts_every_increment() {
    let v = json_run(&[
        "bench",
        "lock",
        "--variant",
        "tas,runtime-store-release",
        "--increments",
        "20000",
        "--tasks",
        "20",
        "--threads",
        "2",
        "--runs",
        "2",
        "--json",
    ]);
    let records = v["records"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    for r in records {
        assert_eq!(r["parameters"]["mode"], "fixed-work");
        assert_eq!(r["parameters"]["increments"], 20000);
        assert_eq!(r["parameters"]["tasks"], 20);
        assert_eq!(r["parameters"]["workers"], 2);
        let secs = r["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "seconds")
            .unwrap();
        assert_eq!(
            secs["samples"].as_array().unwrap().len(),
            samples_expected(r, 2),
            "{r}"
        );
        assert!(secs["summary"]["median"].as_f64().unwrap() > 0.0);
    }
}

/// Issue 9: with more threads than CPUs, `ops/s` (sum of per-thread rates)
/// and `ns/op` (mean of per-thread times) disagreed by orders of magnitude
/// (335k ops/s beside 72 ms per op for 16 ticket-lock threads), and
/// nothing said the threads had not contended. Now both come from the same
/// wall time, in every sample, and the cell is flagged.
#[test]
fn oversubscribed_cells_are_consistent_and_flagged() {
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let threads = (cpus * 2 + 1).to_string();
    let v = json_run(&[
        "bench",
        "lock",
        "--variant",
        "ticket",
        "--threads",
        &threads,
        "--duration",
        "30ms",
        "--warmup",
        "10ms",
        "--runs",
        "2",
        "--json",
    ]);
    let r = &v["records"][0];
    let samples = |name: &str| -> Vec<f64> {
        r["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap_or_else(|| panic!("metric {name} missing"))["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let t = (cpus * 2 + 1) as f64;
    for (ns, ops) in samples("ns_per_op").iter().zip(samples("ops_per_sec")) {
        assert!(
            (ns * ops / (t * 1e9) - 1.0).abs() < 1e-6,
            "ns/op {ns} and ops/s {ops} disagree for {t} threads"
        );
    }
    let flags = r["flags"].as_array().expect("the cell is flagged");
    assert!(
        flags.iter().any(|f| f["kind"] == "not_contended"
            && f["detail"].as_str().unwrap().contains("time-sliced")),
        "{flags:?}"
    );
    let table = atomlab(&[
        "bench",
        "lock",
        "--variant",
        "ticket",
        "--threads",
        &threads,
        "--duration",
        "20ms",
        "--warmup",
        "5ms",
        "--runs",
        "1",
    ]);
    assert!(String::from_utf8_lossy(&table.stdout).contains("not contended as asked"));
}

/// `bench --shard I/N` splits the cells (variant x threads) round-robin.
#[test]
fn shards_split_the_cells() {
    let cells = |shard: &str| -> Vec<String> {
        let v = json_run(&[
            "bench",
            "counter",
            "--variant",
            "fetch_add,cas_loop",
            "--threads",
            "1,2",
            "--duration",
            "10ms",
            "--warmup",
            "2ms",
            "--runs",
            "1",
            "--shard",
            shard,
            "--json",
        ]);
        v["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                assert_eq!(r["parameters"]["shard"], shard);
                format!("{}x{}", r["variant"], r["parameters"]["threads"])
            })
            .collect()
    };
    assert_eq!(cells("0/2"), ["\"fetch_add\"x1", "\"cas_loop\"x1"]);
    assert_eq!(cells("1/2"), ["\"fetch_add\"x2", "\"cas_loop\"x2"]);
}

fn metric_median(r: &Value, name: &str) -> f64 {
    r["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("metric {name} missing"))["summary"]["median"]
        .as_f64()
        .unwrap_or_else(|| panic!("metric {name} has no median"))
}

/// Issue 12: `--rate` is a mode of counter, refcount and lock too: the
/// record gives the achieved rate, the CPU the load needed and latencies.
#[test]
fn counter_at_a_fixed_rate_reports_cpu_and_latency() {
    let v = json_run(&[
        "bench",
        "counter",
        "--variant",
        "fetch_add",
        "--ordering",
        "relaxed",
        "--threads",
        "2",
        "--rate",
        "2k,4k",
        "--duration",
        "200ms",
        "--warmup",
        "0",
        "--runs",
        "1",
        "--json",
    ]);
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2, "one record per offered rate");
    // 1 ms and 500 µs between a thread's operations: it sleeps between them.
    for (r, offered) in recs.iter().zip([2e3, 4e3]) {
        assert_eq!(r["parameters"]["mode"], "fixed-rate");
        assert_eq!(r["parameters"]["rate_offered"], offered);
        let achieved = metric_median(r, "rate_achieved");
        assert!(achieved <= offered * 1.01, "{achieved}");
        // `flags` is left out of a record that has none.
        let flagged = r["flags"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["kind"] == "rate_not_sustained"));
        assert_eq!(flagged, achieved < 0.99 * offered, "{achieved}");
        // Sleeping between operations: far from a spinner's 100%.
        assert!(metric_median(r, "cpu_utilisation") < 60.0);
        assert!(metric_median(r, "latency_p50_ns") > 0.0);
        // Each operation's cost, unless the clock is too coarse to time
        // one (qemu's counter under QEMU_CPU=max): then a note says so.
        let timed = r["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == "op_ns");
        if timed {
            assert!(metric_median(r, "op_ns") > 0.0);
        } else {
            assert!(
                r["notes"]
                    .to_string()
                    .contains("op_ns not given: every operation began and ended within one tick"),
                "{r}"
            );
        }
    }
}

/// Issue 12: `--wait notify` puts the consumer to sleep between items at a
/// low rate, and the record counts the wake-ups.
#[test]
fn spsc_notify_counts_wake_ups() {
    let v = json_run(&[
        "bench",
        "spsc",
        "--variant",
        "fences",
        "--rate",
        "2k",
        "--placement",
        "same-core",
        "--wait",
        "notify",
        "--duration",
        "200ms",
        "--warmup",
        "0",
        "--runs",
        "1",
        "--json",
    ]);
    let r = &v["records"][0];
    assert_eq!(r["parameters"]["wait"], "notify");
    let wakes = metric_median(r, "notifications_per_item");
    // 500 µs between items: the consumer is asleep when most arrive.
    assert!(wakes > 0.3 && wakes <= 1.0, "{wakes}");
    assert!(metric_median(r, "consumer_sleeps_per_item") > 0.3);
}

/// Issue 23: `--wait` is a list as `--rate` is (`--wait yield,notify`):
/// a record per way of waiting and rate, in that order, and the table's
/// wait column tells the rows apart; `-d` is `--duration`, as in load.
#[test]
fn spsc_wait_is_a_list_with_a_wait_column() {
    let args = [
        "bench",
        "spsc",
        "--variant",
        "fences",
        "--rate",
        "2k,4k",
        "--pin",
        "same",
        "--wait",
        "yield,notify",
        "-d",
        "50ms",
        "--warmup",
        "0",
        "--runs",
        "1",
    ];
    let v = json_run(&[&args[..], &["--json"]].concat());
    let got: Vec<(String, f64)> = v["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["parameters"]["duration_s"], 0.05, "{r}");
            (
                r["parameters"]["wait"].as_str().unwrap().to_string(),
                r["parameters"]["rate_offered"].as_f64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, f64)> = [
        ("yield", 2e3),
        ("yield", 4e3),
        ("notify", 2e3),
        ("notify", 4e3),
    ]
    .iter()
    .map(|(w, r)| (w.to_string(), *r))
    .collect();
    assert_eq!(got, want);
    let o = atomlab(&[&["--no-save"][..], &args].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.starts_with("| variant | wait   | offered/s | placement |"),
        "{table}"
    );
    for (wait, rate) in [
        ("yield ", "2.00k"),
        ("yield ", "4.00k"),
        ("notify", "2.00k"),
        ("notify", "4.00k"),
    ] {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(&format!("| fences  | {wait} | {rate}     | same-core |"))),
            "{wait} {rate}: {table}"
        );
    }
}

/// Issue 12: an absurd offered rate is reported as not sustained, in the
/// JSON (flag) and in the table (status), never as met.
#[test]
fn spsc_absurd_rate_is_flagged_not_sustained() {
    let v = json_run(&[
        "bench",
        "spsc",
        "--variant",
        "c11-acq-rel",
        "--rate",
        "10G",
        "--placement",
        "same-core",
        "--wait",
        "yield",
        "--duration",
        "50ms",
        "--warmup",
        "0",
        "--runs",
        "1",
        "--json",
    ]);
    let r = &v["records"][0];
    assert_eq!(r["scenario"], "spsc");
    assert_eq!(r["parameters"]["load"], "fixed-rate");
    assert_eq!(r["parameters"]["rate_offered"], 1e10);
    assert_eq!(r["parameters"]["placement"], "same-core");
    assert!(r["flags"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["kind"] == "rate_not_sustained"));
    assert!(metric_median(r, "rate_achieved") < 0.99e10);
    // No ns_per_item at a rate: wall / items is 1 / rate there.
    assert!(
        !r["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == "ns_per_item"),
        "{r}"
    );
    for m in [
        "items_per_sec",
        "producer_cpu",
        "consumer_cpu",
        "producer_busy",
        "consumer_busy",
        "push_ns",
        "pop_ns",
        "latency_p50_ns",
        "latency_p99_ns",
        "latency_p999_ns",
        "latency_max_ns",
        "schedule_lag_max_ns",
    ] {
        assert!(metric_median(r, m) >= 0.0, "{m}");
    }

    let o = atomlab(&[
        "bench",
        "spsc",
        "--variant",
        "rtrb",
        "--rate",
        "10G",
        "--duration",
        "30ms",
        "--warmup",
        "0",
        "--runs",
        "1",
        "--wait",
        "yield",
        "--placement",
        "same-core",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("achieved/s") && table.contains("| p99.9 "),
        "{table}"
    );
    // The table is cut into panels to fit 100 columns: the status is in
    // one of the rtrb row's panels.
    let rows: Vec<&str> = table.lines().filter(|l| l.contains("| rtrb")).collect();
    assert!(!rows.is_empty(), "{table}");
    assert!(
        rows.iter().any(|r| r.contains("rate not sustained")),
        "{table}"
    );
}

/// Issue 34: a plugin's figures include the ABI's two indirect calls and a
/// built-in's did not, so a plugin of the same algorithm read as slower.
/// `--via-abi` runs each built-in lock through the same function pointers
/// (rows `NAME@abi`), in timed and fixed-work cells, with every critical
/// section still counted (two threads: exclusion holds through the calls);
/// a scenario without built-in locks refuses it.
#[test]
fn via_abi_runs_the_built_in_locks_through_the_plugin_abi() {
    let v = json_run(&[
        "bench",
        "lock",
        "--variant",
        "ttas,mcs,std",
        "--via-abi",
        "--threads",
        "2",
        "--duration",
        "50ms",
        "--warmup",
        "10ms",
        "--runs",
        "1",
        "--json",
    ]);
    let records = v["records"].as_array().unwrap();
    let names: Vec<&str> = records
        .iter()
        .map(|r| r["variant"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ttas@abi", "mcs@abi", "std@abi"], "{v}");
    for (r, built_in) in records.iter().zip(["ttas", "mcs", "std"]) {
        assert_eq!(r["parameters"]["entry"], "abi", "{r}");
        assert_eq!(r["parameters"]["built_in"], built_in, "{r}");
        let flags = r["flags"].as_array().map(Vec::len).unwrap_or(0);
        let incorrect = r["flags"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|f| f["kind"] == "incorrect");
        assert!(!incorrect, "{flags} flags: {r}");
    }
    let fixed = json_run(&[
        "bench",
        "lock",
        "--variant",
        "ticket",
        "--via-abi",
        "--increments",
        "20000",
        "--tasks",
        "20",
        "--threads",
        "2",
        "--runs",
        "1",
        "--json",
    ]);
    let r = &fixed["records"][0];
    assert_eq!(r["variant"], "ticket@abi", "{fixed}");
    assert_eq!(r["parameters"]["mode"], "fixed-work");
    assert_eq!(r["parameters"]["entry"], "abi");
    assert_bad_input(
        &["bench", "counter", "--via-abi"],
        &["--via-abi applies to the lock scenario, not counter"],
    );
}
