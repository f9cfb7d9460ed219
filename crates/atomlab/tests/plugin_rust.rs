//! A plugin written in Rust (issue 25): `crates/atomlab-plugin-abi`'s
//! example `rust_locks` (a ticket lock and a TTAS lock exported with
//! `export_locks!` from a `cdylib`), built here with cargo in release
//! mode, as the README tells users to, into a target directory of its own
//! (the outer `cargo test` holds the workspace's), then run through the
//! real `atomlab bench lock --plugin` and `atomlab stress mutex --plugin`.

mod cli_support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use cli_support::{atomlab, stderr, text};

/// The example plugin, built for the architecture under test; `None`
/// (after saying why) where cargo cannot build it here.
fn rust_plugin() -> Option<PathBuf> {
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
        .args(["-p", "atomlab-plugin-abi", "--example", "rust_locks"])
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
    Some(out.join("release/examples/librust_locks.so"))
}

fn records(stdout: &[u8]) -> Vec<serde_json::Value> {
    let doc: serde_json::Value = serde_json::from_slice(stdout).unwrap();
    doc["records"].as_array().unwrap().clone()
}

#[test]
fn a_rust_plugin_runs_through_bench_lock_and_stress_mutex() {
    let Some(so) = rust_plugin() else {
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
            out.contains("note: rust-ticket: lock uses a lock-prefixed RMW (lock xadd), unlock plain stores only"),
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
