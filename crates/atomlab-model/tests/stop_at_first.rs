//! `CheckOptions::stop_at_first` (herd7's `-speedcheck fast`, what
//! `atomlab verify` uses for a FAIL) against the full search, on the
//! repository's litmus corpus under every built-in model and both engines:
//! the same answer to the condition (`ok`, and Never stays Never), final
//! states that the full search also finds, never more executions examined,
//! and strictly fewer on some tests (an option that changed nothing would
//! fail here). With explanations on, a decided `exists` carries its
//! witness, as verify's counterexample needs.

use std::path::Path;
use std::time::{Duration, Instant};

use atomlab_litmus::{Quantifier, Test};
use atomlab_model::{check_test, CheckOptions, Engine, ModelOutcome, Observation, MODEL_NAMES};

fn options(engine: Engine, stop_at_first: bool, explain: bool) -> CheckOptions {
    CheckOptions {
        engine,
        stop_at_first,
        explain,
        deadline: Some(Instant::now() + Duration::from_secs(20)),
        ..CheckOptions::default()
    }
}

/// Compares the two searches on `test`: `Err` says what differs; `Ok` the
/// number of (model, engine) pairs where stopping examined fewer
/// executions.
fn compare(name: &str, test: &Test) -> Result<usize, String> {
    let mut fewer = 0;
    for engine in [Engine::Explore, Engine::Enumerate] {
        let full = check_test(test, MODEL_NAMES, &options(engine, false, false));
        let first = check_test(test, MODEL_NAMES, &options(engine, true, false));
        for (a, b) in full.into_iter().zip(first) {
            let (ModelOutcome::Done(a), ModelOutcome::Done(b)) = (a, b) else {
                continue;
            };
            let at = format!("{name} under {} ({})", a.model, engine.name());
            if a.ok != b.ok
                || (a.observation == Observation::Never) != (b.observation == Observation::Never)
            {
                return Err(format!(
                    "{at}: full search {} ok={}, stopping at the first {} ok={}",
                    a.observation.word(),
                    a.ok,
                    b.observation.word(),
                    b.ok
                ));
            }
            if let Some(s) = b.states.iter().find(|s| !a.states.contains(s)) {
                return Err(format!(
                    "{at}: stopping found a state the full search does not: {s:?}"
                ));
            }
            if b.candidates > a.candidates {
                return Err(format!(
                    "{at}: stopping examined {} executions, the full search {}",
                    b.candidates, a.candidates
                ));
            }
            if b.candidates < a.candidates {
                fewer += 1;
            }
        }
    }
    Ok(fewer)
}

#[test]
fn stopping_at_the_first_keeps_every_answer_on_the_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/litmus");
    let files = atomlab_litmus::inputs::litmus_files(&dir);
    let (mut compared, mut fewer) = (0, 0);
    let mut bad = Vec::new();
    for f in &files {
        let Ok(test) = atomlab_litmus::parse_file(f) else {
            continue;
        };
        compared += 1;
        match compare(&f.display().to_string(), &test) {
            Ok(n) => fewer += n,
            Err(e) => bad.push(e),
        }
    }
    eprintln!("stop_at_first: {compared} tests, fewer executions examined in {fewer} (model, engine) pairs");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(compared > 100, "only {compared} tests parsed");
    assert!(
        fewer > 50,
        "stopping at the first saved executions on only {fewer} pairs"
    );
}

#[test]
fn a_decided_exists_carries_its_witness() {
    // Store buffering: x86-TSO allows both reads to see 0.
    let src = "X86 SB\n{ x=0; y=0; }\n P0 | P1 ;\n MOV [x],$1 | MOV [y],$1 ;\n MOV EAX,[y] | MOV EAX,[x] ;\nexists (0:EAX=0 /\\ 1:EAX=0)\n";
    let test = atomlab_litmus::parse("SB.litmus", src).expect("parses");
    assert_eq!(test.condition.quantifier, Quantifier::Exists);
    let out = check_test(&test, &["x86tso"], &options(Engine::Explore, true, true));
    let ModelOutcome::Done(r) = &out[0] else {
        panic!("not done: {out:?}");
    };
    assert_eq!(r.observation, Observation::Sometimes, "{r:?}");
    assert_eq!(r.candidates, 1, "stopped at the first: {r:?}");
    assert!(r.ok);
    assert!(
        r.witness.is_some() && r.witness_execution.is_some(),
        "no witness: {r:?}"
    );
}
