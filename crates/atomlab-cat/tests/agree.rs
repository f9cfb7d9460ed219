//! Agreement: herd7's own published models (read at run time from
//! ../shared/cats/herd7-7.58, never copied here), given as cat files, judge
//! the reference corpus (../shared/litmus) exactly as the built-in models
//! they mirror: same observation, same final states, same races. Skipped,
//! with a message, where ../shared is absent.

use std::path::{Path, PathBuf};

use atomlab_model::{check_test_with, CheckOptions, ModelChoice, ModelOutcome};

fn shared() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    if p.join("cats/herd7-7.58").is_dir() && p.join("litmus").is_dir() {
        Some(p)
    } else {
        eprintln!(
            "skipped: no herd7 cat files and corpus at {} (../shared beside the repository)",
            p.display()
        );
        None
    }
}

fn tests_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    let mut out = Vec::new();
    for p in v {
        if p.is_dir() {
            out.extend(tests_in(&p));
        } else if p.extension().is_some_and(|e| e == "litmus") {
            out.push(p);
        }
    }
    out
}

fn summary(o: &ModelOutcome) -> String {
    match o {
        ModelOutcome::Done(r) => format!(
            "{:?} {:?} racy={}",
            r.observation,
            r.states.iter().map(|(s, _)| s).collect::<Vec<_>>(),
            r.racy
        ),
        ModelOutcome::Failed { error, .. } => format!("failed: {error}"),
        ModelOutcome::Timeout { .. } => "timeout".into(),
        ModelOutcome::NotApplicable { reason, .. } => format!("n/a: {reason}"),
    }
}

fn agree(builtin: &str, file: &str, folders: &[&str]) {
    let Some(shared) = shared() else { return };
    let cats = shared.join("cats/herd7-7.58");
    let model = atomlab_cat::load(builtin, &cats.join(file), &[]).expect("herd7's model loads");
    let opts = CheckOptions::default();
    let mut judged = 0;
    for folder in folders {
        let dir = shared.join(folder);
        if !dir.is_dir() {
            eprintln!("skipped: no {}", dir.display());
            return;
        }
        for path in tests_in(&dir) {
            let Ok(test) = atomlab_litmus::parse_file(&path) else {
                continue;
            };
            let want = &check_test_with(&test, &[ModelChoice::Named(builtin)], &opts)[0];
            if !matches!(want, ModelOutcome::Done(_)) {
                continue;
            }
            let got = &check_test_with(&test, &[ModelChoice::Given(&model)], &opts)[0];
            assert_eq!(
                summary(want),
                summary(got),
                "{} under {builtin} and {file}",
                path.display()
            );
            judged += 1;
        }
    }
    assert!(judged > 20, "only {judged} tests judged");
}

#[test]
fn sc_cat_agrees_with_sc() {
    agree("sc", "sc.cat", &["litmus/c", "litmus/x86"]);
}

#[test]
fn x86tso_cat_agrees_with_x86tso() {
    agree("x86tso", "x86tso.cat", &["litmus/x86"]);
}

#[test]
fn rc11_cat_agrees_with_rc11() {
    agree("rc11", "rc11.cat", &["litmus/c"]);
}

#[test]
fn c11_partial_sc_cat_agrees_with_c11() {
    agree("c11", "c11_partialSC.cat", &["litmus/c"]);
}

#[test]
fn aarch64_cat_agrees_with_aarch64() {
    // herd7 7.58's aarch64.cat computes dependencies from register-level
    // events: this also checks the virtual register events rebuilt from
    // the engine's addr, data, ctrl and pick dependencies.
    agree("aarch64", "aarch64.cat", &["litmus/aarch64"]);
}

#[test]
fn riscv_cat_agrees_with_riscv() {
    // riscv.cat reads herd's RISC-V fence sets (`Fence.r.rw`, `Fence.tso`),
    // the `.aq`/`.rl` annotations (`Acq`, `Rel`, `AcqRel`), `AMO` and `X`.
    agree("riscv", "riscv.cat", &["litmus-more/riscv"]);
}

/// An execution too big for the register events aarch64.cat needs is
/// refused for that model (an error naming the bound), never given a
/// verdict: 24 locations read once each, each load's address depending on
/// the one before (48 events, plus a virtual event per dependency).
#[test]
fn beyond_the_event_bound_is_an_error_not_a_verdict() {
    let Some(shared) = shared() else { return };
    let model = atomlab_cat::load("aarch64", &shared.join("cats/herd7-7.58/aarch64.cat"), &[])
        .expect("herd7's model loads");
    let n = 24;
    let init: Vec<String> = (0..n).map(|i| format!("0:X{}=l{i};", i + 1)).collect();
    let code: Vec<String> = (0..n)
        .map(|i| {
            if i == 0 {
                " LDR X0,[X1] ;".to_string()
            } else {
                format!(" EOR X29,X0,X0 ;\n LDR X0,[X{},X29] ;", i + 1)
            }
        })
        .collect();
    let text = format!(
        "AArch64 BIG\n{{ {} }}\n P0 ;\n{}\nexists (0:X0=0)\n",
        init.join(" "),
        code.join("\n")
    );
    let test = atomlab_litmus::parse("BIG.litmus", &text).expect("a valid test");
    let got = &check_test_with(
        &test,
        &[ModelChoice::Given(&model)],
        &CheckOptions::default(),
    )[0];
    match got {
        ModelOutcome::Failed { error, .. } => {
            assert!(error.to_string().contains("exceed 64 events"), "{error}")
        }
        other => panic!("judged beyond the bound: {}", summary(other)),
    }
    // The built-in model, which needs no register events, judges it.
    let builtin = &check_test_with(
        &test,
        &[ModelChoice::Named("aarch64")],
        &CheckOptions::default(),
    )[0];
    assert!(
        matches!(builtin, ModelOutcome::Done(_)),
        "{}",
        summary(builtin)
    );
}

/// The kernel's LKMM files, as herd7 -conf linux-kernel.cfg runs them:
/// ../shared/litmus-more/linux/model (GPL-2.0, read at run time, never
/// copied here) and herd7's library for lock.cat's includes.
fn lkmm_files() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let corpus = shared.join("litmus-more/linux");
    let model = corpus.join("model");
    let lib = shared.join("cats/herd7-7.58");
    if model.join("linux-kernel.cat").is_file() && lib.join("cross.cat").is_file() {
        Some((corpus, model, lib))
    } else {
        eprintln!(
            "skipped: no LKMM files and herd7 library under {} (../shared beside the repository)",
            shared.display()
        );
        None
    }
}

fn lkmm_options(model: &Path, lib: &Path, variants: &[&str]) -> atomlab_cat::Options {
    atomlab_cat::Options {
        bell: Some(model.join("linux-kernel.bell")),
        variants: variants.iter().map(|v| v.to_string()).collect(),
        cat_path: vec![lib.to_path_buf()],
    }
}

fn with_flags(o: &ModelOutcome) -> String {
    match o {
        ModelOutcome::Done(r) => format!("{} flags={:?}", summary(o), r.flags),
        other => summary(other),
    }
}

/// How many tests of the corpus `model` judges differently from the
/// built-in lkmm (observation, final states, races or flags), and how many
/// it judged.
fn lkmm_differences(corpus: &Path, model: &atomlab_cat::CatModel) -> (usize, usize, Vec<String>) {
    let opts = CheckOptions::default();
    let (mut judged, mut differ, mut names) = (0, 0, Vec::new());
    for path in tests_in(corpus) {
        // Tests the Linux parser refuses (SRCU, for now) are not judged.
        let Ok(test) = atomlab_litmus::parse_file(&path) else {
            continue;
        };
        let want = &check_test_with(&test, &[ModelChoice::Named("lkmm")], &opts)[0];
        let got = &check_test_with(&test, &[ModelChoice::Given(model)], &opts)[0];
        assert!(
            matches!(got, ModelOutcome::Done(_)),
            "{}: {}",
            path.display(),
            summary(got)
        );
        judged += 1;
        if with_flags(want) != with_flags(got) {
            differ += 1;
            names.push(format!(
                "{}: {} vs {}",
                path.display(),
                with_flags(want),
                with_flags(got)
            ));
        }
    }
    (judged, differ, names)
}

/// linux-kernel.cat with linux-kernel.bell, lock.cat and variant lkmmv2
/// judges all 79 Linux-kernel tests as the built-in lkmm does (which agrees
/// with herd7's logs there: atomlab-model's lkmm corpus test): same
/// observation, final states, races and flags. Also atomlab-model's golden
/// Linux tests, whose failed `spin_trylock`s and `spin_is_locked`s take
/// lock.cat's generated reads-from (`with … from cross(…)`).
#[test]
fn lkmm_files_agree_with_lkmm() {
    let Some((corpus, model, lib)) = lkmm_files() else {
        return;
    };
    let opts = lkmm_options(&model, &lib, &["lkmmv2"]);
    let cat = atomlab_cat::load_with("lkmm", &model.join("linux-kernel.cat"), &opts)
        .expect("the kernel's LKMM files load");
    let (judged, differ, names) = lkmm_differences(&corpus, &cat);
    assert_eq!(judged, 79);
    assert_eq!(differ, 0, "{names:#?}");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../atomlab-model/tests/litmus/linux");
    let (judged, differ, names) = lkmm_differences(&golden, &cat);
    assert!(judged >= 19, "{judged}");
    assert_eq!(differ, 0, "{names:#?}");
}

/// The files decide the verdicts: without the variant the bell raises its
/// flag on every test (as herd7 does), and a copy of linux-kernel.cat
/// without its propagation axiom (made in a scratch directory) allows
/// outcomes the LKMM forbids.
#[test]
fn lkmm_verdicts_come_from_the_files() {
    let Some((corpus, model, lib)) = lkmm_files() else {
        return;
    };
    let test = atomlab_litmus::parse_file(&corpus.join("SB+fencembonceonces.litmus"))
        .expect("a Linux test");
    let v1 = atomlab_cat::load_with(
        "lkmm",
        &model.join("linux-kernel.cat"),
        &lkmm_options(&model, &lib, &[]),
    )
    .expect("loads");
    match &check_test_with(&test, &[ModelChoice::Given(&v1)], &CheckOptions::default())[0] {
        ModelOutcome::Done(r) => assert!(
            r.flags
                .contains(&"this-model-requires-variant-higher-than-lkmmv1"),
            "{:?}",
            r.flags
        ),
        other => panic!("{}", summary(other)),
    }

    let text = std::fs::read_to_string(model.join("linux-kernel.cat")).unwrap();
    let axiom = "acyclic pb as propagation";
    assert!(text.contains(axiom));
    let dir = std::env::temp_dir().join(format!("atomlab-lkmm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let weak = dir.join("linux-kernel.cat");
    std::fs::write(&weak, text.replace(axiom, "")).unwrap();
    // lock.cat is found beside the original, through the cat path.
    let mut opts = lkmm_options(&model, &lib, &["lkmmv2"]);
    opts.cat_path.insert(0, model.clone());
    let weak = atomlab_cat::load_with("lkmm", &weak, &opts).expect("loads");
    let _ = std::fs::remove_dir_all(&dir);
    let (judged, differ, names) = lkmm_differences(&corpus, &weak);
    assert_eq!(judged, 79);
    assert!(differ > 0, "removing the propagation axiom changed nothing");
    assert!(
        names.iter().any(|n| n.contains("SB+fencembonceonces")),
        "{names:#?}"
    );
}
