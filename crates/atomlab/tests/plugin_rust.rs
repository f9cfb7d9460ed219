//! Plugins written in Rust (issue 25): `crates/atomlab-plugin-abi`'s
//! examples `rust_locks` (a ticket lock and a TTAS lock exported with
//! `export_locks!`), `rust_spsc` (two Lamport rings), `rust_refcount`
//! (the kernel's refcount_t) and `rust_ops` (counter operations, one
//! broken), the last three exported with
//! `export_plugin!`, each a `cdylib`, built here with cargo in release
//! mode, as the README tells users to, into a target directory of its own
//! (the outer `cargo test` holds the workspace's), then run through the
//! real `atomlab bench lock|spsc|refcount|counter --plugin` and `atomlab
//! stress mutex|spsc|refcount --plugin`.

mod cli_support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use cli_support::{atomlab, stderr, text};

/// The example plugin `name` (`librust_NAME.so`), built for the
/// architecture under test; `None` (after saying why) where cargo cannot
/// build it here.
fn rust_plugin(name: &str) -> Option<PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    let dir = BUILT.get_or_init(build_examples).as_ref()?;
    Some(dir.join(format!("librust_{name}.so")))
}

/// Builds every example plugin once (the tests run in parallel); the
/// folder of the `.so` files.
fn build_examples() -> Option<PathBuf> {
    let target = if cfg!(target_arch = "x86_64") {
        None
    } else if cfg!(target_arch = "aarch64") {
        Some("aarch64-unknown-linux-gnu")
    } else {
        let _ = writeln!(
            std::io::stderr(),
            "Rust plugin test skipped: this architecture's standard library needs -Zbuild-std"
        );
        return None;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rust-plugin");
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(&root)
        .args(["build", "--release", "--offline", "--locked", "-q"])
        .args(["-p", "atomlab-plugin-abi"])
        .args(["--example", "rust_locks", "--example", "rust_spsc"])
        .args(["--example", "rust_refcount", "--example", "rust_ops"])
        .arg("--target-dir")
        .arg(&dir);
    if let Some(t) = target {
        cargo.args(["--target", t]);
    }
    let o = cargo.output().expect("run cargo");
    assert!(
        o.status.success(),
        "cargo build of the example: {}",
        stderr(&o)
    );
    let out = match target {
        Some(t) => dir.join(t),
        None => dir,
    };
    Some(out.join("release/examples"))
}

fn records(stdout: &[u8]) -> Vec<serde_json::Value> {
    let doc: serde_json::Value = serde_json::from_slice(stdout).unwrap();
    doc["records"].as_array().unwrap().clone()
}

#[test]
fn a_rust_plugin_runs_through_bench_lock_and_stress_mutex() {
    let Some(so) = rust_plugin("locks") else {
        return;
    };
    let so = so.to_str().unwrap();
    let args = [
        "bench",
        "lock",
        "--plugin",
        so,
        "--variant",
        "ticket,rust-ticket,rust-ttas",
        "--threads",
        "1",
        "--duration",
        "30ms",
        "--runs",
        "1",
        "--warmup",
        "0",
    ];
    let o = atomlab(&[&["--no-save"][..], &args].concat());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    for v in ["ticket", "rust-ticket", "rust-ttas"] {
        let row = out
            .lines()
            .find(|l| l.contains(&format!("| {v} ")))
            .unwrap_or_else(|| panic!("no {v} row: {out}"));
        let ns = row.split('|').map(str::trim).nth(6).unwrap();
        assert!(ns.starts_with(|c: char| c.is_ascii_digit()), "{out}");
    }
    // What the Rust code compiled to, beside the figures.
    if cfg!(target_arch = "x86_64") {
        assert!(
            out.contains("note: rust-ticket: lock uses a lock-prefixed RMW (lock xadd), unlock a non-atomic read-modify-write"),
            "{out}"
        );
        assert!(
            out.contains("note: rust-ttas: lock uses a lock-prefixed RMW (lock cmpxchg)"),
            "{out}"
        );
    } else {
        assert!(out.contains("note: rust-ticket: lock uses "), "{out}");
    }
    let o = atomlab(&[&["--json", "--no-save"][..], &args].concat());
    let recs = records(&o.stdout);
    let r = recs.iter().find(|r| r["variant"] == "rust-ttas").unwrap();
    assert_eq!(r["parameters"]["plugin"], so);
    assert_eq!(r["parameters"]["plugin_sha256"].as_str().unwrap().len(), 64);

    let o = atomlab(&[
        "--no-save",
        "stress",
        "mutex",
        "--plugin",
        so,
        "--variant",
        "rust-ticket,rust-ttas",
        "--ops",
        "100000",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("mutex rust-ticket: PASS"), "{out}");
    assert!(out.contains("mutex rust-ttas: PASS"), "{out}");
}

/// The row of `variant` in a people's table.
fn row_of<'a>(out: &'a str, variant: &str) -> &'a str {
    out.lines()
        .find(|l| l.contains(&format!("| {variant} ")))
        .unwrap_or_else(|| panic!("no {variant} row: {out}"))
}

/// Whether column `col` of a table row starts with a figure.
fn figure(row: &str, col: usize) -> bool {
    row.split('|')
        .map(str::trim)
        .nth(col)
        .is_some_and(|c| c.starts_with(|ch: char| ch.is_ascii_digit()))
}

#[test]
fn rust_queues_run_through_stress_spsc_and_bench_spsc() {
    let Some(so) = rust_plugin("spsc") else {
        return;
    };
    let so = so.to_str().unwrap();
    let mine = "rust-lamport,rust-lamport-cached";
    let o = atomlab(&[
        "--no-save",
        "stress",
        "spsc",
        "--plugin",
        so,
        "--variant",
        mine,
        "--ops",
        "100000",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("spsc rust-lamport: PASS"), "{out}");
    assert!(out.contains("spsc rust-lamport-cached: PASS"), "{out}");

    // Flat out, where this process may use two CPUs; else time-sliced on
    // one, with yielding waits.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let placement: &[&str] = if cpus >= 2 {
        &["--placement", "cross-core"]
    } else {
        &["--placement", "same-core", "--wait", "yield"]
    };
    let variants = format!("c11-acq-rel,{mine}");
    let args = [
        &["bench", "spsc", "--plugin", so, "--variant", &variants][..],
        &["--duration", "30ms", "--runs", "1", "--warmup", "0"],
        placement,
    ]
    .concat();
    let o = atomlab(&[&["--no-save"][..], &args].concat());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    for v in ["c11-acq-rel", "rust-lamport", "rust-lamport-cached"] {
        // Column 5, achieved/s (variant, wait, offered/s, placement before).
        assert!(figure(row_of(&out, v), 5), "{v}: {out}");
    }
    let o = atomlab(&[&["--json", "--no-save"][..], &args].concat());
    let recs = records(&o.stdout);
    let r = recs
        .iter()
        .find(|r| r["variant"] == "rust-lamport")
        .unwrap();
    assert_eq!(r["parameters"]["plugin"], so);
    // A Lamport ring needs no read-modify-write: what the Rust compiled to.
    let audit = r["parameters"]["plugin_audit"].as_str().unwrap();
    assert!(audit.starts_with("push uses "), "{audit}");
    if cfg!(target_arch = "x86_64") {
        assert!(!audit.contains("lock-prefixed"), "{audit}");
    }
}

#[test]
fn a_rust_refcount_runs_through_stress_refcount_and_bench_refcount() {
    let Some(so) = rust_plugin("refcount") else {
        return;
    };
    let so = so.to_str().unwrap();
    let o = atomlab(&[
        "--no-save",
        "stress",
        "refcount",
        "--plugin",
        so,
        "--variant",
        "rust-refcount",
        "--threads",
        "2",
        "--ops",
        "100000",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("refcount rust-refcount: PASS"), "{out}");

    let args = [
        "bench",
        "refcount",
        "--plugin",
        so,
        "--variant",
        "refcount-get-put,rust-refcount",
        "--threads",
        "1",
        "--duration",
        "30ms",
        "--runs",
        "1",
        "--warmup",
        "0",
    ];
    let o = atomlab(&[&["--no-save"][..], &args].concat());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    for v in ["refcount-get-put", "rust-refcount"] {
        assert!(figure(row_of(&out, v), 6), "{v}: {out}");
    }
    // The kernel's put is an atomic decrement: on x86-64 a lock-prefixed
    // RMW.
    let says = if cfg!(target_arch = "x86_64") {
        ", put a lock-prefixed RMW (lock "
    } else {
        ", put "
    };
    // Notes wrap to 100 columns, their rest two spaces in: joined again.
    let joined = out.replace("\n  ", " ");
    let note = joined
        .lines()
        .find(|l| l.starts_with("note: rust-refcount: get uses "))
        .unwrap_or_else(|| panic!("no audit note: {out}"));
    assert!(note.contains(says), "{note}");
    let o = atomlab(&[&["--json", "--no-save"][..], &args].concat());
    let recs = records(&o.stdout);
    let r = recs
        .iter()
        .find(|r| r["variant"] == "rust-refcount")
        .unwrap();
    assert_eq!(r["parameters"]["plugin"], so);
    assert_eq!(r["parameters"]["plugin_variant"], "rust-refcount");
}

/// `bench counter --plugin` times the Rust operations beside the built-in
/// `fetch_add`, once per thread count whatever `--ordering` says, checks
/// `rust-fetch-add`'s count with its `read`, and says what each compiled
/// to; the increment made of a load and a store loses updates with two
/// threads: an `incorrect` row without figures, the count named, exit 1.
#[test]
fn rust_operations_run_through_bench_counter_and_a_lost_update_is_caught() {
    let Some(so) = rust_plugin("ops") else {
        return;
    };
    let so = so.to_str().unwrap();
    let args = [
        "bench",
        "counter",
        "--plugin",
        so,
        "--variant",
        "fetch_add,rust-fetch-add,rust-fence",
        "--ordering",
        "relaxed,seq_cst",
        "--threads",
        "1",
        "--duration",
        "30ms",
        "--runs",
        "1",
        "--warmup",
        "0",
    ];
    let o = atomlab(&[&["--no-save"][..], &args].concat());
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    for v in ["fetch_add/relaxed", "rust-fetch-add", "rust-fence"] {
        assert!(figure(row_of(&out, v), 6), "{v}: {out}");
    }
    let note = out
        .lines()
        .find(|l| l.starts_with("note: rust-fetch-add: op uses "))
        .unwrap_or_else(|| panic!("no audit note: {out}"));
    if cfg!(target_arch = "x86_64") {
        assert!(note.contains("a lock-prefixed RMW (lock "), "{note}");
    }
    let o = atomlab(&[&["--json", "--no-save"][..], &args].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = records(&o.stdout);
    let count = |v: &str| recs.iter().filter(|r| r["variant"] == v).count();
    assert_eq!(
        (
            count("fetch_add"),
            count("rust-fetch-add"),
            count("rust-fence")
        ),
        (2, 1, 1)
    );
    let r = recs
        .iter()
        .find(|r| r["variant"] == "rust-fetch-add")
        .unwrap();
    assert_eq!(r["parameters"]["plugin"], so);
    assert!(r["parameters"].get("ordering").is_none(), "{r}");
    assert!(
        r["notes"]
            .to_string()
            .contains("read() counted every operation"),
        "{r}"
    );

    let o = atomlab(&[
        "--no-save",
        "bench",
        "counter",
        "--plugin",
        so,
        "--variant",
        "rust-load-store-add",
        "--threads",
        "2",
        "--duration",
        "50ms",
        "--runs",
        "3",
        "--warmup",
        "0",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    let row = row_of(&out, "rust-load-store-add");
    assert!(!figure(row, 6), "{out}");
    // The table falls into panels at 100 columns: the status is in a later
    // one, on the variant's row there.
    assert!(
        out.lines()
            .filter(|l| l.contains("| rust-load-store-add "))
            .any(|l| l.contains("incorrect")),
        "{out}"
    );
    assert!(out.contains("the plugin's read() counted "), "{out}");
    assert!(out.contains(" were made: lost updates"), "{out}");
}
