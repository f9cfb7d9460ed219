//! In-process agreement with herd7's logs in a corpus directory (the same
//! comparison as ../shared/tools/litmus-agree, without a process per test):
//! `cargo run --release -p atomlab-model --example agree -- ../shared/litmus [model]`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use atomlab_model::{check_test, CheckOptions, ModelOutcome};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut v: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            walk(&p, out)
        } else if p.extension().is_some_and(|e| e == "expected") {
            out.push(p)
        }
    }
}

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
    walk(&dir, &mut files);
    let mut stats: BTreeMap<String, [usize; 3]> = BTreeMap::new();
    let mut times: BTreeMap<String, f64> = BTreeMap::new();
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
        let start = std::time::Instant::now();
        let out = check_test(&t, &[model], &CheckOptions::default());
        *times.entry(model.to_string()).or_default() += start.elapsed().as_secs_f64();
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
    for (m, [a, d, u]) in &stats {
        println!(
            "{m}: {a} agree, {d} disagree, {u} unsupported, {:.1} ms",
            times.get(m).unwrap_or(&0.0) * 1e3
        );
    }
}
