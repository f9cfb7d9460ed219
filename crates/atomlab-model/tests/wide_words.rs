//! Executions of more than 64 events are judged with `u128` words
//! (src/rel.rs), and those of at most 32 with `u32` words: the same
//! engines and models compiled for another word. Here the three paths are
//! held to each other on every test of the repository's corpora
//! (tests/litmus: AArch64, RISC-V, X86, X86_64, C, Linux; tests/lkmm-if),
//! under both engines and every built-in model, with
//! `CheckOptions::wide_words` forcing the wide words on tests that fit in
//! 64 and `CheckOptions::no_narrow_words` the `u64` words on those that
//! fit in 32; a test of 68 events is answered by every model that judges
//! it, and one of 135 events is refused, naming the bound.

use std::path::Path;

use atomlab_model::{check_test, CheckOptions, Engine, ModelOutcome, MODEL_NAMES};

/// Each model's outcome as one comparable line.
fn outcomes(test: &atomlab_litmus::Test, models: &[&str], opts: &CheckOptions) -> Vec<String> {
    check_test(test, models, opts)
        .into_iter()
        .map(|o| match o {
            ModelOutcome::Done(r) => format!(
                "{}: {} {}/{} racy={} states={:?}",
                r.model,
                r.observation.word(),
                r.positive,
                r.negative,
                r.racy,
                r.states
            ),
            ModelOutcome::Timeout { model, .. } => format!("{model}: timeout"),
            ModelOutcome::NotApplicable { model, .. } => format!("{model}: n/a"),
            ModelOutcome::Failed { model, error } => format!("{model}: failed {error}"),
        })
        .collect()
}

#[test]
fn every_word_gives_the_same_answers_on_the_corpus() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files = atomlab_litmus::inputs::litmus_files(&tests.join("litmus"));
    files.extend(atomlab_litmus::inputs::litmus_files(&tests.join("lkmm-if")));
    let mut compared = 0;
    for f in &files {
        let Ok(test) = atomlab_litmus::parse_file(f) else {
            continue;
        };
        for engine in [Engine::Enumerate, Engine::Explore] {
            let narrow = CheckOptions {
                engine,
                ..CheckOptions::default()
            };
            let wide = CheckOptions {
                wide_words: true,
                ..narrow.clone()
            };
            let usual = CheckOptions {
                no_narrow_words: true,
                ..narrow.clone()
            };
            let a = outcomes(&test, MODEL_NAMES, &narrow);
            let b = outcomes(&test, MODEL_NAMES, &wide);
            let c = outcomes(&test, MODEL_NAMES, &usual);
            assert_eq!(a, b, "{} under {engine:?}: u128 words", f.display());
            assert_eq!(a, c, "{} under {engine:?}: u64 words", f.display());
        }
        compared += 1;
    }
    assert!(compared > 100, "only {compared} tests compared");
}

/// A C test whose threads 0 to `writers - 1` each store 1 to `stores` to
/// a location of their own, relaxed, and whose last thread reads the
/// first location twice: `writers` initial writes, `writers * stores`
/// stores and 2 reads.
fn many_stores(writers: usize, stores: usize, exists: &str) -> atomlab_litmus::Test {
    let locs: Vec<String> = (0..writers).map(|k| format!("x{k}")).collect();
    let params: Vec<String> = locs.iter().map(|l| format!("atomic_int* {l}")).collect();
    let params = params.join(", ");
    let mut src = "C WIDE\n{}\n\n".to_string();
    for (k, loc) in locs.iter().enumerate() {
        src += &format!("P{k}({params}) {{\n");
        for v in 1..=stores {
            src += &format!("  atomic_store_explicit({loc}, {v}, memory_order_relaxed);\n");
        }
        src += "}\n\n";
    }
    src += &format!(
        "P{writers}({params}) {{\n  int r0 = atomic_load_explicit(x0, memory_order_relaxed);\n  \
         int r1 = atomic_load_explicit(x0, memory_order_relaxed);\n}}\n\nexists ({exists})\n"
    );
    atomlab_litmus::parse("WIDE.litmus", &src).expect("the generated test parses")
}

#[test]
fn an_execution_of_68_events_is_judged() {
    // coRR: the second read cannot see an older write than the first.
    let last = "32";
    let never = many_stores(2, 32, &format!("2:r0={last} /\\ 2:r1=1"));
    let sometimes = many_stores(2, 32, &format!("2:r0=1 /\\ 2:r1={last}"));
    for engine in [Engine::Enumerate, Engine::Explore] {
        let opts = CheckOptions {
            engine,
            ..CheckOptions::default()
        };
        for (test, word) in [(&never, "Never"), (&sometimes, "Sometimes")] {
            for line in outcomes(test, MODEL_NAMES, &opts) {
                // lkmm judges Linux-kernel C, not C11 atomics.
                if !line.starts_with("lkmm") {
                    assert!(line.contains(&format!(": {word} ")), "{engine:?}: {line}");
                }
            }
        }
    }
}

#[test]
fn past_128_events_the_bound_is_named() {
    let test = many_stores(5, 26, "5:r0=1");
    for line in outcomes(&test, &["aarch64"], &CheckOptions::default()) {
        assert!(line.contains("failed") && line.contains("128"), "{line}");
    }
}
