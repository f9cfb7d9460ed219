//! The combinations of runs found by growing graphs (`CheckOptions::grow`,
//! grow.rs) against those of the search over their product (combine.rs):
//! on every test, the same observation, final states and counts of allowed
//! and forbidden executions under every model the growing applies to; and
//! it does apply (to most tests of the corpus, the load-buffering shapes
//! and C11 excepted). Over the in-repository corpus, and the reference
//! corpus (../shared/litmus and litmus-more) where it is present; and under
//! the Linux-kernel model over the generated LKMM corpora (lkmm-if,
//! lkmm-families) and the reference corpus's Linux tests.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use atomlab_litmus::Test;
use atomlab_model::{check_test, CheckOptions, Engine, Grow, ModelOutcome};

/// The models growing may apply to, but the Linux-kernel model's.
const MODELS: &[&str] = &["sc", "x86tso", "aarch64", "riscv", "rc11"];

/// The models of a Linux-kernel test (`check`'s default for one).
const LINUX_MODELS: &[&str] = &["lkmm", "sc"];

/// Per model: what must agree, and whether the combinations were grown.
/// `None` when a search timed out.
fn outcomes(test: &Test, models: &[&str], grow: bool) -> Option<Vec<(String, Vec<String>, bool)>> {
    let opts = CheckOptions {
        engine: Engine::Explore,
        deadline: Some(Instant::now() + Duration::from_secs(20)),
        grow: if grow { Grow::Always } else { Grow::Never },
        // Wherever it applies, not only where the combinations are many.
        grow_all: grow,
        ..CheckOptions::default()
    };
    let mut out = Vec::new();
    for o in check_test(test, models, &opts) {
        out.push(match o {
            ModelOutcome::Done(r) => (
                format!(
                    "{}: {} racy={} positive={} negative={} flags={:?}",
                    r.model,
                    r.observation.word(),
                    r.racy,
                    r.positive,
                    r.negative,
                    r.flags
                ),
                r.states.iter().map(|s| format!("{s:?}")).collect(),
                r.grown,
            ),
            ModelOutcome::Timeout { .. } => return None,
            ModelOutcome::NotApplicable { model, .. } => {
                (format!("{model}: n/a"), Vec::new(), false)
            }
            ModelOutcome::Failed { model, error } => {
                (format!("{model}: failed {error}"), Vec::new(), false)
            }
        });
    }
    Some(out)
}

fn corpus() -> Vec<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["aarch64", "riscv", "x86", "x86_64", "c"] {
        files.extend(atomlab_litmus::inputs::litmus_files(
            &here.join("tests/litmus").join(dir),
        ));
    }
    for shared in ["litmus", "litmus-more"] {
        let dir = here.join("../../../shared").join(shared);
        if dir.is_dir() {
            files.extend(atomlab_litmus::inputs::litmus_files(&dir));
        }
    }
    files
}

/// What comparing the two searches over `files` under `models` found.
struct Agreement {
    compared: usize,
    /// Per model (in `models`' order): the tests whose combinations grew.
    grown: Vec<usize>,
    skipped: usize,
    bad: Vec<String>,
}

fn agree(files: &[PathBuf], models: &[&str]) -> Agreement {
    let mut a = Agreement {
        compared: 0,
        grown: vec![0; models.len()],
        skipped: 0,
        bad: Vec::new(),
    };
    for f in files {
        let Ok(test) = atomlab_litmus::parse_file(f) else {
            continue;
        };
        let (Some(want), Some(got)) = (
            outcomes(&test, models, false),
            outcomes(&test, models, true),
        ) else {
            a.skipped += 1;
            continue;
        };
        a.compared += 1;
        for (i, g) in got.iter().enumerate() {
            a.grown[i] += usize::from(g.2);
        }
        for (w, g) in want.iter().zip(&got) {
            if (&w.0, &w.1) != (&g.0, &g.1) {
                a.bad.push(format!(
                    "{}: product {} ({} states), grown {} ({} states)",
                    f.display(),
                    w.0,
                    w.1.len(),
                    g.0,
                    g.1.len()
                ));
            }
        }
    }
    eprintln!(
        "grown vs product under {models:?}: {} tests compared, grown per model {:?}, {} disagree, {} timed out",
        a.compared,
        a.grown,
        a.bad.len(),
        a.skipped
    );
    a
}

#[test]
fn growing_graphs_finds_what_the_product_search_finds() {
    let a = agree(&corpus(), MODELS);
    assert!(a.bad.is_empty(), "{}", a.bad.join("\n"));
    assert!(a.compared >= 40, "only {} tests compared", a.compared);
    let grown: usize = a.grown.iter().sum();
    assert!(
        grown >= 40,
        "growing applied to only {grown} (test, model) pairs"
    );
}

/// Under the Linux-kernel model, growing applies where every access is
/// marked and linux-kernel.cat's preserved program order keeps each read
/// before every later write (grow.rs's `orders_lkmm`): the lock chains,
/// seqlocks and RCU chains of the generated corpora, and most of its `if`
/// tests; not the load-buffering shapes or tests with plain accesses.
#[test]
fn growing_graphs_under_lkmm_finds_what_the_product_search_finds() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["tests/lkmm-if", "tests/lkmm-families"] {
        files.extend(atomlab_litmus::inputs::litmus_files(&here.join(dir)));
    }
    let shared = here.join("../../../shared/litmus-more/linux");
    if shared.is_dir() {
        files.extend(atomlab_litmus::inputs::litmus_files(&shared));
    }
    let a = agree(&files, LINUX_MODELS);
    assert!(a.bad.is_empty(), "{}", a.bad.join("\n"));
    assert!(a.compared >= 1000, "only {} tests compared", a.compared);
    // 177 of the repository's corpora grow under lkmm, 245 with the
    // reference corpus's (2026-12-07).
    assert!(
        a.grown[0] >= 150,
        "growing applied to only {} tests under lkmm",
        a.grown[0]
    );
}
