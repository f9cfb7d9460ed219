//! Every subcommand's `--json` is one document shape, and that shape is the
//! JSON Schema in `schema/atomlab.schema.json` (validated with boon, a
//! draft 2020-12 validator that passes the JSON-Schema-Test-Suite).

mod cli_support;

use cli_support::golden;

use cli_support::{atomlab, stderr};

fn schema() -> (boon::Schemas, boon::SchemaIndex) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schema/atomlab.schema.json"
    );
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("schema file")).expect("schema JSON");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let url = "https://atomlab.invalid/schema/atomlab.schema.json";
    compiler.add_resource(url, doc).expect("schema resource");
    let index = compiler
        .compile(url, &mut schemas)
        .expect("the schema compiles");
    (schemas, index)
}

#[test]
fn every_subcommand_writes_the_schema() {
    let (schemas, index) = schema();
    let me = env!("CARGO_BIN_EXE_atomlab");
    let (mp, refused) = (golden("x86/MP.litmus"), golden("errors/c-loop.litmus"));
    let race = golden("c/race.litmus");
    // The suite's HTML report goes to a scratch file, not the source tree.
    let suite_html = std::env::temp_dir()
        .join(format!("atomlab-schema-suite-{}.html", std::process::id()))
        .display()
        .to_string();
    let runs: Vec<(Vec<&str>, i32)> = vec![
        (vec!["machine", "--json"], 0),
        (
            vec![
                "bench",
                "counter",
                "--threads",
                "1,2",
                "--duration",
                "20ms",
                "--warmup",
                "5ms",
                "--runs",
                "2",
                "--json",
            ],
            0,
        ),
        (
            vec![
                "bench",
                "lock",
                "--variant",
                "ttas",
                "--increments",
                "20000",
                "--runs",
                "2",
                "--json",
            ],
            0,
        ),
        (
            vec![
                "bench",
                "pingpong",
                "--duration",
                "20ms",
                "--runs",
                "1",
                "--json",
            ],
            0,
        ),
        (
            vec![
                "stress",
                "mutex",
                "--variant",
                "ttas,broken-tas-not-atomic",
                "--ops",
                "20000",
                "--json",
            ],
            0,
        ),
        (vec!["check", "--json", &mp, &race], 0),
        (vec!["check", "--json", &mp, &refused], 2),
        (vec!["audit", "--json", me], 0),
        // x86-64 and riscv64: not applicable (0); aarch64: this build's own
        // atomics decide (1 unless it was built for LSE).
        (
            vec!["audit", "--json", "--require", "lse", me],
            if cfg!(target_arch = "aarch64") { -1 } else { 0 },
        ),
        (vec!["suite", "--json", "-o", &suite_html], 0),
    ];
    let mut runs = runs;
    // `run` has an x86-64 backend only (elsewhere it refuses, with no records).
    if cfg!(target_arch = "x86_64") {
        runs.push((
            vec!["run", "--json", "--size", "50", "--runs", "4", &mp, &race],
            0,
        ));
    }
    // Last: the runs above were saved (the tests' scratch store), and
    // `runs --json` lists them in the same document (it was a bare array).
    runs.push((vec!["runs", "--json"], 0));
    for (args, want) in runs {
        let o = atomlab(&args);
        match want {
            -1 => assert!(
                matches!(o.status.code(), Some(0 | 1)),
                "{args:?}: {}",
                stderr(&o)
            ),
            want => assert_eq!(o.status.code(), Some(want), "{args:?}: {}", stderr(&o)),
        }
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", stderr(&o)));
        if let Err(e) = schemas.validate(&doc, index) {
            panic!("{args:?}: does not match schema/atomlab.schema.json:\n{e:#}");
        }
        assert_eq!(doc["command"], args[0], "{args:?}");
        if args[0] == "runs" {
            assert!(
                !doc["runs"].as_array().unwrap().is_empty(),
                "runs --json lists no run"
            );
        } else if args[0] != "machine" {
            assert!(
                !doc["records"].as_array().unwrap().is_empty(),
                "{args:?}: no records"
            );
        }
    }
}

/// The schema is not a rubber stamp: documents that break it are refused.
#[test]
fn the_schema_refuses_other_shapes() {
    let (schemas, index) = schema();
    let o = atomlab(&["machine", "--json"]);
    let good: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(schemas.validate(&good, index).is_ok());
    let mut old = good.clone();
    old["schema_version"] = 1.into();
    assert!(schemas.validate(&old, index).is_err(), "schema_version 1");
    let mut bare = good.clone();
    bare.as_object_mut().unwrap().remove("records");
    assert!(schemas.validate(&bare, index).is_err(), "no records");
    let bare_machine = good["machine"].clone();
    assert!(
        schemas.validate(&bare_machine, index).is_err(),
        "a bare machine object (the old machine --json)"
    );
    let mut bad_unit = good.clone();
    bad_unit["records"] = serde_json::json!([{
        "schema_version": 2, "atomlab_version": "0", "capability": "bench",
        "scenario": "s", "variant": "v", "parameters": {}, "unix_time": 0,
        "metrics": [{"name": "x", "unit": "furlongs", "source": {"kind": "tsc"},
                     "samples": [], "summary": null}]
    }]);
    assert!(schemas.validate(&bad_unit, index).is_err(), "unknown unit");
}

/// Every flag a record can carry is one the schema names (a flag kind
/// added to atomlab-core, such as a plugin cell's `incorrect`, must be
/// added to the schema too).
#[test]
fn the_schema_names_every_flag_kind() {
    use atomlab_core::{FlagKind, Machine, Record, Report};
    let (schemas, index) = schema();
    let kinds = [
        FlagKind::Implausible,
        FlagKind::NotContended,
        FlagKind::RunsExcluded,
        FlagKind::RateNotSustained,
        FlagKind::Crashed,
        FlagKind::Hung,
        FlagKind::Exited,
        FlagKind::OffCpu,
        FlagKind::Incorrect,
    ];
    for kind in kinds {
        let mut r = Record::new("bench", "lock", "v");
        r.flag(kind, None, "why");
        let doc = serde_json::to_value(Report::new("bench", Machine::detect(), vec![r])).unwrap();
        assert!(
            schemas.validate(&doc, index).is_ok(),
            "{kind:?} is not in schema/atomlab.schema.json"
        );
    }
}
