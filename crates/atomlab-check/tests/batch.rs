//! A check batch from Rust: the example that checks a folder, the records
//! and the table they give, timeouts, progress, and model-loading errors.

#[allow(dead_code)] // its `main` is the example's, not the test's
#[path = "../examples/check_folder.rs"]
mod example;

use std::path::PathBuf;
use std::time::Duration;

use atomlab_check::{check, Error, LoadError, ModelFile, Options};
use atomlab_core::check_layout::Layout;
use atomlab_core::progress::{silent, Event};
use atomlab_core::{ExitStatus, Record, Verdict};
use atomlab_report::kinds::check as render;
use serde_json::Value;

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("atomlab-check-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SB: &str = "X86_64 SB
{ }
 P0            | P1            ;
 movq $1,(x)   | movq $1,(y)   ;
 movq (y),%rax | movq (x),%rax ;
exists (0:rax=0 /\\ 1:rax=0)
";

const SB_MFENCES: &str = "X86 SB+mfences
{ x=0; y=0; }
 P0          | P1          ;
 MOV [x],$1  | MOV [y],$1  ;
 MFENCE      | MFENCE      ;
 MOV EAX,[y] | MOV EAX,[x] ;
exists (0:EAX=0 /\\ 1:EAX=0)
";

const MP_C: &str = "C MP+rel+acq
{}
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
  atomic_store_explicit(y, 1, memory_order_release);
}
P1 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire);
  int r1 = atomic_load_explicit(x, memory_order_relaxed);
}
exists (1:r0=1 /\\ 1:r1=0)
";

/// The observation of `test` under `model` in a JSON array of records.
fn observation<'v>(records: &'v Value, test: &str, model: &str) -> &'v str {
    records
        .as_array()
        .expect("an array of records")
        .iter()
        .find(|r| r["scenario"] == test && r["variant"] == model)
        .unwrap_or_else(|| panic!("no record of {test} under {model}"))["parameters"]["observation"]
        .as_str()
        .expect("an observation")
}

#[test]
fn the_example_checks_a_folder_and_prints_records_as_json() {
    let d = scratch("example");
    std::fs::write(d.join("SB.litmus"), SB).unwrap();
    std::fs::create_dir_all(d.join("more")).unwrap();
    std::fs::write(d.join("more/SB+mfences.litmus"), SB_MFENCES).unwrap();
    std::fs::write(d.join("more/MP+rel+acq.litmus"), MP_C).unwrap();
    let mut out = Vec::new();
    let status = example::check_folder(&d, Duration::from_secs(30), &mut out).unwrap();
    assert_eq!(status, ExitStatus::Ok);
    let records: Value = serde_json::from_slice(&out).expect("JSON");
    // The store buffer: x86-TSO lets both loads read 0, SC does not; the
    // fences forbid it again.
    assert_eq!(observation(&records, "SB", "x86tso"), "Sometimes");
    assert_eq!(observation(&records, "SB", "sc"), "Never");
    assert_eq!(observation(&records, "SB+mfences", "x86tso"), "Never");
    // Release/acquire message passing holds under C11 and on Arm.
    assert_eq!(observation(&records, "MP+rel+acq", "c11"), "Never");
    assert_eq!(observation(&records, "MP+rel+acq", "aarch64"), "Never");
    // Every test of the folder, subfolder included, and no model that
    // does not apply (aarch64 has no record of an x86 test).
    let all = records.as_array().unwrap();
    for t in ["SB", "SB+mfences", "MP+rel+acq"] {
        assert!(all.iter().any(|r| r["scenario"] == t), "{t}");
    }
    assert!(!all
        .iter()
        .any(|r| r["scenario"] == "SB" && r["variant"] == "aarch64"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_test_past_its_deadline_is_a_timeout_record() {
    let d = scratch("timeout");
    let mut body = String::from("C huge\n{}\n");
    for t in 0..10 {
        body.push_str(&format!(
            "P{t} (atomic_int* x) {{ atomic_store_explicit(x, {}, memory_order_relaxed); int r0 = atomic_load_explicit(x, memory_order_relaxed); }}\n",
            t + 1
        ));
    }
    body.push_str("exists (x=1)\n");
    std::fs::write(d.join("huge.litmus"), body).unwrap();
    std::fs::write(d.join("SB.litmus"), SB).unwrap();
    let opts = Options {
        models: vec!["sc".into()],
        timeout: Some(Duration::from_millis(300)),
        jobs: Some(2),
        ..Default::default()
    };
    let batch = check(&[d.display().to_string()], &opts, &mut silent).unwrap();
    let huge = batch.records.iter().find(|r| r.scenario == "huge").unwrap();
    assert_eq!(huge.verdict, Some(Verdict::Timeout));
    // The other test is judged all the same.
    let sb = batch.records.iter().find(|r| r.scenario == "SB").unwrap();
    assert_eq!(sb.verdict, None);
    assert_eq!(sb.parameters["observation"], "Never");
    assert_eq!(batch.status(), ExitStatus::VerdictFailed);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn progress_hears_of_every_test_and_refusals_are_errors() {
    let d = scratch("progress");
    std::fs::write(d.join("SB.litmus"), SB).unwrap();
    std::fs::write(d.join("SB+mfences.litmus"), SB_MFENCES).unwrap();
    std::fs::write(d.join("broken.litmus"), "X86 broken\n{ }\n P0 ;\n FOO ;\n").unwrap();
    let opts = Options {
        models: vec!["sc".into(), "x86tso".into()],
        graphs: Some(d.join("graphs")),
        ..Default::default()
    };
    // What the batch says as it goes, in words.
    let mut heard: Vec<String> = Vec::new();
    let batch = check(&[d.display().to_string()], &opts, &mut |e| {
        heard.push(match e {
            Event::Begin { total, what } => format!("begin {total} {what}"),
            Event::At { label, .. } => format!("start {label}"),
            Event::Done(_) => "done".into(),
            Event::End => "end".into(),
            Event::Watch { live, .. } => format!("watch {}", live.so_far()),
            other => format!("{other:?}"),
        })
    })
    .unwrap();
    assert_eq!(heard[..2], ["begin 3 tests", "watch 0 executions explored"]);
    assert_eq!(
        heard.iter().filter(|h| *h == "done").count(),
        3,
        "{heard:?}"
    );
    assert_eq!(heard.iter().filter(|h| *h == "end").count(), 1, "{heard:?}");
    assert_eq!(heard.last().map(String::as_str), Some("end"), "{heard:?}");
    let mut started: Vec<&String> = heard.iter().filter(|h| h.starts_with("start ")).collect();
    started.sort();
    assert_eq!(started, ["start SB", "start SB+mfences"]);
    // The refused test is an error naming its file and place, not a record.
    assert_eq!(batch.errors.len(), 1, "{:?}", batch.errors);
    assert!(batch.errors[0].input.ends_with("broken.litmus"));
    assert!(batch.errors[0].line.is_some());
    assert_eq!(batch.status(), ExitStatus::BadInput);
    assert_eq!(batch.records.len(), 4);
    assert_eq!(batch.models, ["sc", "x86tso"]);
    // Graphs were written: a witness of SB under x86-TSO.
    assert!(d.join("graphs/SB.x86tso.witness.dot").is_file());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_table_from_saved_records_is_the_live_table() {
    // Two tests named SB in two files, and models (aarch64, c11) that
    // apply to none of them: both must show in the table of the saved
    // records as in the live one.
    let d = scratch("table");
    std::fs::create_dir_all(d.join("a")).unwrap();
    std::fs::create_dir_all(d.join("b")).unwrap();
    std::fs::write(d.join("a/SB.litmus"), SB).unwrap();
    std::fs::write(
        d.join("b/SB.litmus"),
        SB_MFENCES.replace("X86 SB+mfences", "X86 SB"),
    )
    .unwrap();
    let opts = Options {
        models: vec!["x86tso".into(), "aarch64".into(), "c11".into()],
        ..Default::default()
    };
    let batch = check(&[d.display().to_string()], &opts, &mut silent).unwrap();
    let live = render::table(&batch.layout(), &batch.records.iter().collect::<Vec<_>>());
    // Saved and read back, as the store does.
    let saved: Vec<Record> =
        serde_json::from_str(&serde_json::to_string(&batch.records).unwrap()).unwrap();
    let recs: Vec<&Record> = saved.iter().collect();
    let shown = render::table(&Layout::of_records(&recs), &recs);
    assert_eq!(shown, live);
    assert_eq!(
        live.header,
        ["test", "condition", "x86tso", "aarch64", "c11"]
    );
    let cells: Vec<&str> = live.rows.iter().map(|r| r[2].as_str()).collect();
    assert_eq!(cells, ["Sometimes (4)", "Never (3)"]);
    assert_eq!(live.rows[0][3], "-");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn models_that_cannot_be_loaded_are_refused_in_the_librarys_terms() {
    let d = scratch("load");
    std::fs::write(d.join("SB.litmus"), SB).unwrap();
    let inputs = [d.display().to_string()];
    let load = |opts: &Options| match check(&inputs, opts, &mut silent) {
        Err(Error::Load(e)) => e,
        other => panic!("not a load error: {other:?}"),
    };
    let cfg = d.join("nomodel.cfg");
    std::fs::write(&cfg, "variant mixed\n").unwrap();
    let opts = Options {
        conf: Some(ModelFile {
            name: None,
            path: cfg,
        }),
        ..Default::default()
    };
    assert!(matches!(load(&opts), LoadError::ConfNamesNoModel));
    let opts = Options {
        variants: vec!["mixed".into()],
        ..Default::default()
    };
    assert!(matches!(load(&opts), LoadError::CatSettingsWithoutModel));
    let opts = Options {
        models: vec!["power".into()],
        ..Default::default()
    };
    let e = load(&opts);
    assert!(matches!(&e, LoadError::UnknownModel(m) if m == "power"));
    assert!(e.to_string().contains("x86tso"), "{e}");
    let opts = Options {
        model_files: vec![ModelFile {
            name: Some("mine".into()),
            path: d.join("missing.cat"),
        }],
        ..Default::default()
    };
    assert!(matches!(
        load(&opts),
        LoadError::Model {
            from: atomlab_check::ModelFrom::File(0),
            ..
        }
    ));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_model_that_could_not_follow_a_test_is_an_error_cell() {
    let d = scratch("error-cell");
    std::fs::write(d.join("SB.litmus"), SB).unwrap();
    let opts = Options {
        models: vec!["sc".into(), "x86tso".into()],
        ..Default::default()
    };
    let batch = check(&[d.display().to_string()], &opts, &mut silent).unwrap();
    let file = batch.checked[0].test.file.clone();
    // As a batch lays out a cell whose model failed: it has no record.
    let mut layout = batch.layout();
    layout.errors.push((file, "x86tso".into()));
    let recs: Vec<&Record> = batch
        .records
        .iter()
        .filter(|r| r.variant != "x86tso")
        .collect();
    let t = render::table(&layout, &recs);
    assert_eq!(t.rows[0][2..], ["Never (3)", "ERROR"]);
    assert!(t.notes.iter().any(|n| n.starts_with("ERROR: ")), "{t:?}");
    assert!(!t.notes.iter().any(|n| n.starts_with("TIMEOUT")), "{t:?}");
    let _ = std::fs::remove_dir_all(&d);
}

const LB_PLAIN_COPY: &str = "C LB+plain-copy
{}
P0(int *x, int *y)
{
	int r1;

	r1 = *x;
	smp_mb();
	*y = r1;
}
P1(int *x, int *y)
{
	int r2;

	r2 = *y;
	smp_mb();
	*x = r2;
}
exists (0:r1=0)
";

/// Issue 37: a value out of thin air under lkmm is shown as herd7 shows it
/// (`0:r1=S8;`, herd7 7.58's log of this test), the cell says `thin-air`
/// and the notes say what the symbol is, in the live and the saved table.
#[test]
fn a_thin_air_value_shows_as_herd7s_symbol_in_the_table() {
    let d = scratch("thin");
    std::fs::write(d.join("LB.litmus"), LB_PLAIN_COPY).unwrap();
    let opts = Options {
        models: vec!["lkmm".into()],
        ..Default::default()
    };
    let batch = check(&[d.display().to_string()], &opts, &mut silent).unwrap();
    let live = render::table(&batch.layout(), &batch.records.iter().collect::<Vec<_>>());
    let saved: Vec<Record> =
        serde_json::from_str(&serde_json::to_string(&batch.records).unwrap()).unwrap();
    let recs: Vec<&Record> = saved.iter().collect();
    assert_eq!(render::table(&Layout::of_records(&recs), &recs), live);
    assert_eq!(
        live.rows[0][2], "Sometimes (2) flag data-race thin-air",
        "{live:?}"
    );
    assert!(
        live.notes.iter().any(|n| n.starts_with("\"thin-air\"")
            && n.contains("load-buffering cycle of plain accesses that store what they read")),
        "{:?}",
        live.notes
    );
    assert!(
        live.notes
            .iter()
            .any(|n| n == "LB+plain-copy [lkmm]: 0:r1=S8;"),
        "{:?}",
        live.notes
    );
    let _ = std::fs::remove_dir_all(&d);
}
