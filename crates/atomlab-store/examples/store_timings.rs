//! How long the store takes: saving typical runs, then the queries of
//! `atomlab runs`, `show` and `compare` on a store of 10,000 runs.
//!
//! ```sh
//! cargo run --release -p atomlab-store --example store_timings
//! cargo run --release -p atomlab-store --example store_timings -- --runs 2000 --store postgres://…
//! ```
//!
//! Without `--store` it uses a new SQLite file in a temporary directory,
//! removed at the end. It prints figures and asserts nothing.

use std::time::{Duration, Instant};

use atomlab_core::{Machine, Metric, Record, Report, Source, Unit, Verdict};
use atomlab_store::{Location, RunFilter, RunMeta, Store};

/// A `bench` run as the CLI makes one: 24 cells (4 variants × 2 orderings
/// × 3 thread counts), 8 metrics of 5 samples each.
fn bench_report(machine: &Machine, seed: f64) -> Report {
    let mut records = Vec::new();
    for variant in ["fetch_add", "cas_loop", "llsc", "lse"] {
        for ordering in ["relaxed", "seq_cst"] {
            for threads in [1, 2, 4] {
                let mut r = Record::new("bench", "counter", variant);
                r.param("threads", threads)
                    .param("ordering", ordering)
                    .param("contention", "shared")
                    .param("duration_s", 1.0)
                    .param("warmup_s", 0.2)
                    .param("runs", 5)
                    .param("pin", true)
                    .param("check_every", 1024);
                let base = seed + threads as f64;
                let five = |scale: f64| (0..5).map(|i| scale * (base + i as f64 * 0.013)).collect();
                for (name, unit, source, scale) in [
                    ("ops_per_sec", Unit::OpsPerSecond, Source::Derived, 1.0e8),
                    ("ns_per_op", Unit::NanosPerOp, Source::ClockGettime, 3.0),
                    ("ref_cycles_per_op", Unit::RefCyclesPerOp, Source::Tsc, 7.3),
                    (
                        "core_cycles_per_op",
                        Unit::CoreCyclesPerOp,
                        Source::Pmu("cycles".into()),
                        7.0,
                    ),
                    (
                        "instructions_per_op",
                        Unit::InstructionsPerOp,
                        Source::Pmu("instructions".into()),
                        4.0,
                    ),
                    ("cpu_percent", Unit::Percent, Source::Rusage, 99.0),
                    ("fairness", Unit::Ratio, Source::Derived, 0.9),
                    ("wall_s", Unit::Seconds, Source::ClockGettime, 1.0),
                ] {
                    r.metrics.push(Metric::new(name, unit, source, five(scale)));
                }
                records.push(r);
            }
        }
    }
    Report::new("bench", machine.clone(), records)
}

/// A `check` run: 30 litmus tests with verdicts.
fn check_report(machine: &Machine) -> Report {
    let records = (0..30)
        .map(|i| {
            let mut r = Record::new("check", "litmus", &format!("test{i}"));
            r.param("model", "rc11");
            r.verdict = Some(if i % 7 == 0 {
                Verdict::Fail
            } else {
                Verdict::Pass
            });
            r.metrics.push(Metric::new(
                "states",
                Unit::Count,
                Source::Derived,
                vec![4.0],
            ));
            r
        })
        .collect();
    Report::new("check", machine.clone(), records)
}

/// A `stress` run: rare in the store, so filtering for it walks far.
fn stress_report(machine: &Machine) -> Report {
    let mut r = Record::new("stress", "mp", "relaxed");
    r.verdict = Some(Verdict::NotObserved);
    r.metrics.push(Metric::new(
        "iterations",
        Unit::Count,
        Source::Derived,
        vec![1e6],
    ));
    Report::new("stress", machine.clone(), vec![r])
}

fn stats(label: &str, mut d: Vec<Duration>) {
    d.sort();
    let pick = |q: f64| d[((d.len() - 1) as f64 * q).round() as usize];
    let mean = d.iter().sum::<Duration>() / d.len() as u32;
    println!(
        "{label:<44} n={:<6} median {:>9.3?}  p90 {:>9.3?}  p99 {:>9.3?}  max {:>9.3?}  mean {:>9.3?}",
        d.len(),
        pick(0.5),
        pick(0.9),
        pick(0.99),
        d[d.len() - 1],
        mean
    );
}

fn time<T>(label: &str, reps: usize, mut f: impl FnMut() -> T) -> T {
    let mut times = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps {
        let t = Instant::now();
        last = Some(f());
        times.push(t.elapsed());
    }
    stats(label, times);
    last.unwrap()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut runs = 10_000usize;
    let mut store_arg = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "--store" => store_arg = args.next(),
            other => panic!("unknown argument {other} (expected --runs N, --store LOCATION)"),
        }
    }
    let tmp = std::env::temp_dir().join(format!("atomlab-store-timings-{}", std::process::id()));
    let location = match &store_arg {
        Some(s) => Location::parse(s).expect("a store location"),
        None => Location::Sqlite(tmp.join("results.db")),
    };
    println!("store: {location}, {runs} runs");

    let machine = Machine::detect();
    let bench = bench_report(&machine, 1.0);
    let check = check_report(&machine);
    let stress = stress_report(&machine);
    println!(
        "typical bench run: {} records, {} metrics, {} bytes of JSON",
        bench.records.len(),
        bench.records.iter().map(|r| r.metrics.len()).sum::<usize>(),
        serde_json::to_string(&bench).unwrap().len()
    );

    let mut store = time("Store::open (new store)", 1, || {
        Store::open(&location).unwrap()
    });
    let t0 = 1_700_000_000.0;
    let mut saves = (Vec::new(), Vec::new(), Vec::new());
    let mut some_id = String::new();
    let fill = Instant::now();
    for i in 0..runs {
        let (command, report, times) = match i % 100 {
            0 => ("stress", &stress, &mut saves.2),
            1..=9 => ("check", &check, &mut saves.1),
            _ => ("bench", &bench, &mut saves.0),
        };
        let mut meta = RunMeta::new(command, vec!["atomlab".into(), command.into()], None);
        meta.label = Some(format!("nightly-{}", i % 50));
        meta.started_unix = t0 + i as f64 * 60.0;
        meta.id = atomlab_store::new_run_id(meta.started_unix);
        let t = Instant::now();
        store.save(&meta, report).unwrap();
        times.push(t.elapsed());
        if i == runs / 2 {
            some_id = meta.id;
        }
    }
    println!("filled {runs} runs in {:.2?}", fill.elapsed());
    stats("save: bench run (24 records, 192 metrics)", saves.0);
    stats("save: check run (30 records)", saves.1);
    stats("save: stress run (1 record)", saves.2);
    drop(store);
    if let Location::Sqlite(p) = &location {
        let size = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        println!("database file: {:.1} MiB", size as f64 / (1 << 20) as f64);
    }

    // What one command pays: open the store, save its run, close it
    // (closing the last connection checkpoints the WAL into the file).
    let mut cli = Vec::new();
    for _ in 0..50 {
        let mut meta = RunMeta::new("bench", vec!["atomlab".into(), "bench".into()], None);
        meta.started_unix = t0 - 1e6;
        meta.id = atomlab_store::new_run_id(meta.started_unix);
        let t = Instant::now();
        let mut store = Store::open(&location).unwrap();
        store.save(&meta, &bench).unwrap();
        drop(store);
        cli.push(t.elapsed());
    }
    stats("open + save bench run + close (one command)", cli);

    let store = time("Store::open (existing store)", 10, || {
        Store::open(&location).unwrap()
    });
    let filter = |label: Option<&str>, capability: Option<&str>, limit| RunFilter {
        label: label.map(Into::into),
        capability: capability.map(Into::into),
        limit,
    };
    let reps = 50;
    let n = time("runs(limit 20)", reps, || {
        store.runs(&filter(None, None, 20)).unwrap()
    });
    assert_eq!(n.len(), 24);
    time("runs(label, limit 20)", reps, || {
        store.runs(&filter(Some("nightly-7"), None, 20)).unwrap()
    });
    time("runs(capability bench, limit 20)", reps, || {
        store.runs(&filter(None, Some("bench"), 20)).unwrap()
    });
    time("runs(capability stress (1%), limit 20)", reps, || {
        store.runs(&filter(None, Some("stress"), 20)).unwrap()
    });
    time("runs(capability none of them, limit 20)", 10, || {
        store.runs(&filter(None, Some("audit"), 20)).unwrap()
    });
    let all = time("runs(no limit: all runs)", 3, || {
        store.runs(&filter(None, None, 0)).unwrap()
    });
    assert_eq!(all.len(), runs + 50);
    time("latest_with_label", reps, || {
        store.latest_with_label("nightly-7").unwrap()
    });
    time("latest_with_label (no such label)", reps, || {
        store.latest_with_label("nope").unwrap()
    });
    let shards = time("runs_with_label (200 runs, reports parsed)", 5, || {
        store.runs_with_label("nightly-7").unwrap()
    });
    println!("  ({} runs with label nightly-7)", shards.len());
    time("load(full id)", reps, || store.load(&some_id).unwrap());
    time("load(prefix of 13 chars)", reps, || {
        store.load(&some_id[..13]).unwrap()
    });
    time("load(unknown id: error with hints)", reps, || {
        store.load("19990101").unwrap_err()
    });
    time("count_runs", reps, || store.count_runs().unwrap());

    if store_arg.is_none() {
        drop(store);
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
