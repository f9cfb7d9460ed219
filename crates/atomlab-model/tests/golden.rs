//! Golden tests: every `tests/litmus/**/X.litmus` is checked against its
//! `X.MODEL.expected` files (herd7's log format: the Observation, the set
//! of final states and the set of `Flag` lines must match), and every `X.error` names the position and
//! message the parser must refuse `X.litmus` with.

use std::collections::BTreeSet;
use std::path::Path;

use atomlab_model::{check_test, herd, CheckOptions, ModelOutcome};

mod support;
use support::{flags, summary};

#[test]
fn golden_litmus_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/litmus");
    let mut files = Vec::new();
    files.extend(atomlab_litmus::inputs::litmus_files(&root));
    assert!(files.len() >= 30, "golden tests missing: {}", files.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in &files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let err_file = f.with_file_name(format!("{stem}.error"));
        let parsed = atomlab_litmus::parse_file(f);
        if err_file.exists() {
            let want = std::fs::read_to_string(&err_file).unwrap();
            match parsed {
                Ok(_) => failures.push(format!(
                    "{}: parsed, but should fail with {want}",
                    f.display()
                )),
                Err(e) => {
                    let got = e.to_string();
                    if !got.contains(want.trim()) {
                        failures.push(format!(
                            "{}: error {got:?} does not contain {:?}",
                            f.display(),
                            want.trim()
                        ));
                    }
                }
            }
            checked += 1;
            continue;
        }
        let test = match parsed {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{e}"));
                continue;
            }
        };
        let mut any = false;
        for model in atomlab_model::MODEL_NAMES {
            let exp = f.with_file_name(format!("{stem}.{model}.expected"));
            let Ok(want) = std::fs::read_to_string(&exp) else {
                continue;
            };
            any = true;
            checked += 1;
            let out = check_test(&test, &[model], &CheckOptions::default());
            match &out[0] {
                ModelOutcome::Done(r) => {
                    let log = herd::log(&test, r);
                    let (got, got_flags) = (summary(&log), flags(&log));
                    let (want, want_flags) = (summary(&want), flags(&want));
                    if got != want {
                        failures.push(format!(
                            "{} [{model}]: expected {want:?}, got {got:?}",
                            f.display()
                        ));
                    }
                    if got_flags != want_flags {
                        failures.push(format!(
                            "{} [{model}]: herd7 flags {want_flags:?}, atomlab flags {got_flags:?}",
                            f.display()
                        ));
                    }
                }
                other => failures.push(format!("{} [{model}]: {other:?}", f.display())),
            }
        }
        if !any {
            failures.push(format!("{}: no .expected file", f.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} golden checks failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// RISC-V accesses carry their width: a location read with `lw` and written
/// with `sd` needs mixed-size semantics, which the checker refuses (herd7's
/// riscv.cat would judge byte by byte).
#[test]
fn riscv_mixed_size_is_refused() {
    let src = "RISCV mixed\n{ 0:x5=x; }\n P0 ;\n lw x6,0(x5) ;\n sd x6,0(x5) ;\nexists (0:x6=0)\n";
    let test = atomlab_litmus::parse("mixed.litmus", src).unwrap();
    let out = check_test(&test, &["riscv"], &CheckOptions::default());
    match &out[0] {
        ModelOutcome::Failed { error, .. } => {
            assert!(error.to_string().contains("mixed-size"), "{error}")
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// The C11→RISC-V mapping (the spec's Table A.6) is sound for C11 on every
/// race-free C test here and in ../shared/litmus/c when present: each final
/// state `riscv` allows for the compiled test is one `c11` allows. (Not
/// `rc11`: its no-thin-air axiom forbids relaxed load buffering, which plain
/// loads and stores allow on RISC-V as on Arm; RC11's mappings add a fake
/// dependency after relaxed loads for that.)
#[test]
fn riscv_mapping_allows_no_state_c11_forbids() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    files.extend(atomlab_litmus::inputs::litmus_files(
        &here.join("tests/litmus/c"),
    ));
    let shared = here.join("../../../shared/litmus/c");
    if shared.is_dir() {
        files.extend(atomlab_litmus::inputs::litmus_files(&shared));
    }
    let mut compared = 0;
    let mut unsound = Vec::new();
    for f in &files {
        let Ok(test) = atomlab_litmus::parse_file(f) else {
            continue;
        };
        let out = check_test(&test, &["c11", "riscv"], &CheckOptions::default());
        let (ModelOutcome::Done(c11), ModelOutcome::Done(rv)) = (&out[0], &out[1]) else {
            continue;
        };
        if c11.racy {
            continue;
        }
        compared += 1;
        let allowed: BTreeSet<_> = c11.states.iter().map(|(s, _)| s.clone()).collect();
        for (s, _) in &rv.states {
            if !allowed.contains(s) {
                unsound.push(format!("{}: riscv allows {s:?}", f.display()));
            }
        }
    }
    eprintln!("{compared} race-free C tests compared under c11 and riscv");
    assert!(compared >= 10, "only {compared} tests compared");
    assert!(unsound.is_empty(), "{}", unsound.join("\n"));
}
