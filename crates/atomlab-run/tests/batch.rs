//! `atomlab_run::batch` as a Rust user calls it: files in, histograms and
//! the models' verdicts out, an outcome a model forbids flagged, without
//! the CLI.

use std::path::Path;

use atomlab_core::Verdict;
use atomlab_run::batch::{self, BatchError, BatchOptions, Progress};
use atomlab_run::RunError;

fn mine(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/litmus")
        .join(rel)
        .display()
        .to_string()
}

/// One run at a time: cargo runs tests in parallel, and runs whose
/// spinning threads compete for the CPUs overlap less.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// On x86-64, SB's relaxed outcome (both loads 0) is what the CPU does
/// (its store buffer) and what x86-TSO allows, while SC forbids it: judged
/// by both, the batch flags it as forbidden by `sc` only, and the record
/// says FAIL with the state in its detail.
#[test]
fn sb_on_x86_is_allowed_by_x86tso_and_flagged_against_sc() {
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped: the host is not x86-64");
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let opts = BatchOptions {
        models: vec!["sc".into(), "x86tso".into()],
        ..BatchOptions::default()
    };
    let mut seen = Vec::new();
    let ran = batch::run_files(&[mine("SB.litmus")], &opts, |p| match p {
        Progress::Starting { test, index, total } => {
            seen.push(format!("start {} {index}/{total}", test.name))
        }
        Progress::Done { ran, index, total } => {
            seen.push(format!("done {} {index}/{total}", ran.test.name))
        }
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(seen, ["start SB 0/1", "done SB 0/1"]);
    assert_eq!(ran.len(), 1);
    let r = &ran[0];
    let res = &r.result;
    let total: u64 = res.histogram.iter().map(|(_, n, _)| n).sum();
    assert_eq!(total, res.instances(), "{res:?}");
    assert_eq!(
        res.instances(),
        1000 * 1000,
        "the default: a million instances"
    );
    // The relaxed state is the witness; default options show it on x86.
    let relaxed = "0:EAX=0; 1:EAX=0;";
    let witnessed: Vec<String> = res
        .histogram
        .iter()
        .filter(|(_, _, w)| *w)
        .map(|(s, _, _)| batch::state_text(&r.test, &res.vars, s))
        .collect();
    assert_eq!(witnessed, [relaxed], "{res:?}");
    assert!(res.positive > 0, "{res:?}");
    // Forbidden by sc, and only that state; x86tso allows every state seen.
    assert!(!r.forbidden.is_empty());
    for f in &r.forbidden {
        assert_eq!((f.model, f.state.as_str()), ("sc", relaxed), "{f:?}");
    }
    assert_eq!(r.forbidden[0].count, res.positive);
    let rec = r.record();
    assert_eq!(rec.verdict, Some(Verdict::Fail));
    let detail = rec.detail.as_ref().unwrap();
    assert_eq!(detail["forbidden"][0]["model"], "sc", "{detail}");
    assert_eq!(detail["forbidden"][0]["state"], relaxed, "{detail}");
    assert!(r.replay.contains("--model sc,x86tso"), "{}", r.replay);

    // Beside the host's own model only (the default), it passes.
    let ran = batch::run_files(&[mine("SB.litmus")], &BatchOptions::default(), |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(ran[0].forbidden.is_empty(), "{:?}", ran[0].forbidden);
    let models: Vec<&str> = ran[0].models.iter().map(|m| m.model()).collect();
    assert_eq!(models, ["x86tso"]);
    assert_eq!(ran[0].record().verdict, Some(Verdict::Pass));
}

/// A file that does not exist stops the batch before anything runs, named
/// in the error; a bad option stops it before any file is read.
#[test]
fn unusable_inputs_and_options_stop_the_batch_before_it_runs() {
    let missing = mine("no-such-test.litmus");
    let mut called = false;
    let err = batch::run_files(
        &[mine("SB.litmus"), missing.clone()],
        &BatchOptions::default(),
        |_| called = true,
    )
    .expect_err("a missing file is an error");
    match err {
        BatchError::Inputs(errors) => {
            assert!(
                errors
                    .iter()
                    .any(|e| e.input.contains("no-such-test.litmus")),
                "{errors:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!called, "nothing may run when an input is unusable");
    let mut opts = BatchOptions::default();
    opts.run.size = 0;
    let err = batch::run_files(&[missing], &opts, |_| {}).err();
    assert!(
        matches!(err, Some(BatchError::Run(RunError::BadOption(_)))),
        "{err:?}"
    );
}
