//! A cat file against the built-in model it mirrors, side by side in one
//! process: each test of a corpus folder is checked by both, alternately,
//! best of `ATOMLAB_REPEAT` (default 5) runs each; the results must agree
//! before anything is timed.
//!
//! ```sh
//! cargo run --release -p atomlab-cat --example cat_speed -- \
//!     ../shared/cats/herd7-7.58 ../shared/litmus
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use atomlab_model::{check_test_with, CheckOptions, ModelChoice, ModelOutcome};

fn tests_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    v.sort();
    for p in v {
        if p.is_dir() {
            out.extend(tests_in(&p));
        } else if p.extension().is_some_and(|e| e == "litmus") {
            out.push(p);
        }
    }
    out
}

fn states(o: &ModelOutcome) -> Option<Vec<String>> {
    match o {
        ModelOutcome::Done(r) => Some(
            r.states
                .iter()
                .map(|(s, _)| format!("{s:?}"))
                .chain([format!("{:?}", r.observation)])
                .collect(),
        ),
        _ => None,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 {
        eprintln!("usage: cat_speed CATS_DIR CORPUS_DIR");
        std::process::exit(2);
    }
    let (cats, corpus) = (PathBuf::from(&args[0]), PathBuf::from(&args[1]));
    let repeat: usize = std::env::var("ATOMLAB_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let cases = [
        ("sc", "sc.cat", "c"),
        ("c11", "c11_partialSC.cat", "c"),
        ("rc11", "rc11.cat", "c"),
        ("sc", "sc.cat", "x86"),
        ("x86tso", "x86tso.cat", "x86"),
        ("aarch64", "aarch64.cat", "aarch64"),
    ];
    let opts = CheckOptions::default();
    println!("| folder | model | cat file | tests | built-in | cat file | cat / built-in |");
    println!("|---|---|---|---|---|---|---|");
    for (name, file, folder) in cases {
        let model = match atomlab_cat::load(name, &cats.join(file), &[]) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("cat_speed: {e}");
                std::process::exit(2);
            }
        };
        let (mut builtin_t, mut cat_t, mut n) = (Duration::ZERO, Duration::ZERO, 0);
        for path in tests_in(&corpus.join(folder)) {
            let Ok(test) = atomlab_litmus::parse_file(&path) else {
                continue;
            };
            let b = [ModelChoice::Named(name)];
            let c = [ModelChoice::Given(&model)];
            let want = states(&check_test_with(&test, &b, &opts)[0]);
            let got = states(&check_test_with(&test, &c, &opts)[0]);
            if want.is_none() {
                continue; // refused by the built-in model too
            }
            assert_eq!(want, got, "{}: the cat file disagrees", path.display());
            let (mut best_b, mut best_c) = (Duration::MAX, Duration::MAX);
            for _ in 0..repeat {
                let t = Instant::now();
                std::hint::black_box(check_test_with(&test, &b, &opts));
                best_b = best_b.min(t.elapsed());
                let t = Instant::now();
                std::hint::black_box(check_test_with(&test, &c, &opts));
                best_c = best_c.min(t.elapsed());
            }
            builtin_t += best_b;
            cat_t += best_c;
            n += 1;
        }
        println!(
            "| {folder} | {name} | {file} | {n} | {:.1} ms | {:.1} ms | {:.2} |",
            builtin_t.as_secs_f64() * 1e3,
            cat_t.as_secs_f64() * 1e3,
            cat_t.as_secs_f64() / builtin_t.as_secs_f64()
        );
    }
}
