//! In-process agreement with herd7's logs in a corpus directory (the same
//! comparison as ../shared/tools/litmus-agree, without a process per test):
//! `cargo run --release -p atomlab-model --example agree -- ../shared/litmus [model]`.
//! Times are per test, parse included, one thread; `ATOMLAB_REPEAT=k` keeps
//! the best of k runs of each test (the machines here are shared and noisy).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use atomlab_model::{check_test, CheckOptions, ModelOutcome};

fn parse(text: &str) -> (Option<String>, BTreeSet<String>) {
    let mut obs = None;
    let mut states = BTreeSet::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if let Some(r) = l.strip_prefix("Observation ") {
            obs = r.split_whitespace().nth(1).map(str::to_string);
        }
        if let Some(n) = l.strip_prefix("States ") {
            let n: usize = n.trim().parse().unwrap_or(0);
            for s in &lines[i + 1..i + 1 + n] {
                let mut items: Vec<&str> = s
                    .split(';')
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .collect();
                items.sort();
                states.insert(items.join(" "));
            }
        }
    }
    (obs, states)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(
        args.get(1)
            .map(String::as_str)
            .unwrap_or("../shared/litmus"),
    );
    let only = args.get(2).cloned();
    let mut files = Vec::new();
    files.extend(atomlab_litmus::inputs::litmus_files(&dir));
    let mut stats: BTreeMap<String, [usize; 3]> = BTreeMap::new();
    let mut times: BTreeMap<String, f64> = BTreeMap::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut slow: Vec<(f64, String)> = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let stem = name.trim_end_matches(".expected");
        let (test, model) = stem.rsplit_once('.').unwrap();
        if only.as_deref().is_some_and(|o| o != model) {
            continue;
        }
        let litmus = f.with_file_name(format!("{test}.litmus"));
        let want = parse(&std::fs::read_to_string(&f).unwrap());
        let st = stats.entry(model.to_string()).or_default();
        let t = match atomlab_litmus::parse_file(&litmus) {
            Ok(t) => t,
            Err(e) => {
                st[2] += 1;
                println!("REFUSED {e}");
                continue;
            }
        };
        let repeat: usize = std::env::var("ATOMLAB_REPEAT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        let mut best = f64::INFINITY;
        let mut out = Vec::new();
        for _ in 0..repeat.max(1) {
            let start = std::time::Instant::now();
            let t = atomlab_litmus::parse_file(&litmus).unwrap();
            out = check_test(&t, &[model], &CheckOptions::default());
            best = best.min(start.elapsed().as_secs_f64());
        }
        *times.entry(model.to_string()).or_default() += best;
        *counts.entry(model.to_string()).or_default() += 1;
        slow.push((best, format!("{} [{model}]", litmus.display())));
        match &out[0] {
            ModelOutcome::Done(r) => {
                let log = atomlab_model::herd::log(&t, r);
                let got = parse(&log);
                if got == want {
                    st[0] += 1;
                } else {
                    st[1] += 1;
                    let extra: Vec<_> = got.1.difference(&want.1).take(3).collect();
                    let missing: Vec<_> = want.1.difference(&got.1).take(3).collect();
                    println!("DISAGREE {} [{model}]: herd {:?} ours {:?} extra {extra:?} missing {missing:?}", litmus.display(), want.0, got.0);
                }
            }
            other => {
                st[2] += 1;
                println!("UNSUPPORTED {} [{model}]: {other:?}", litmus.display());
            }
        }
    }
    slow.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (t, name) in slow.iter().take(5) {
        println!("slow: {:.2} ms {name}", t * 1e3);
    }
    for (m, [a, d, u]) in &stats {
        let t = times.get(m).unwrap_or(&0.0);
        let c = *counts.get(m).unwrap_or(&0) as f64;
        println!(
            "{m}: {a} agree, {d} disagree, {u} unsupported; {c} tests parsed and checked in {:.1} ms ({:.0} tests/s)",
            t * 1e3,
            c / t
        );
    }
}
