//! The combinations of runs found by growing graphs (`CheckOptions::grow`,
//! grow.rs) against those of the search over their product (combine.rs):
//! on every test, the same observation, final states and counts of allowed
//! and forbidden executions under every model the growing applies to; and
//! it does apply (to most tests of the corpus, the load-buffering shapes
//! and C11 excepted). Over the in-repository corpus, and the reference
//! corpus (../shared/litmus and litmus-more) where it is present.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use atomlab_litmus::Test;
use atomlab_model::{check_test, CheckOptions, Engine, ModelOutcome};

/// The models growing may apply to.
const MODELS: &[&str] = &["sc", "x86tso", "aarch64", "riscv", "rc11"];

/// Per model: what must agree, and whether the combinations were grown.
/// `None` when a search timed out.
fn outcomes(test: &Test, grow: bool) -> Option<Vec<(String, Vec<String>, bool)>> {
    let opts = CheckOptions {
        engine: Engine::Explore,
        deadline: Some(Instant::now() + Duration::from_secs(20)),
        grow,
        // Wherever it applies, not only where the combinations are many.
        grow_all: grow,
        ..CheckOptions::default()
    };
    let mut out = Vec::new();
    for o in check_test(test, MODELS, &opts) {
        out.push(match o {
            ModelOutcome::Done(r) => (
                format!(
                    "{}: {} racy={} positive={} negative={}",
                    r.model,
                    r.observation.word(),
                    r.racy,
                    r.positive,
                    r.negative
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

#[test]
fn growing_graphs_finds_what_the_product_search_finds() {
    let (mut compared, mut grown, mut skipped) = (0, 0, 0);
    let mut bad = Vec::new();
    for f in corpus() {
        let Ok(test) = atomlab_litmus::parse_file(&f) else {
            continue;
        };
        let (Some(want), Some(got)) = (outcomes(&test, false), outcomes(&test, true)) else {
            skipped += 1;
            continue;
        };
        compared += 1;
        grown += got.iter().filter(|g| g.2).count();
        for (w, g) in want.iter().zip(&got) {
            if (&w.0, &w.1) != (&g.0, &g.1) {
                bad.push(format!(
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
        "grown vs product: {compared} tests compared, {grown} (test, model) pairs grown, {} disagree, {skipped} timed out",
        bad.len()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(compared >= 40, "only {compared} tests compared");
    assert!(
        grown >= 40,
        "growing applied to only {grown} (test, model) pairs"
    );
}
