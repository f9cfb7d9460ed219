//! What the CLI tests share: running the real binary and checking that bad
//! input is refused properly.
#![allow(dead_code)]

pub mod snapshot;

use std::process::{Command, Output};

/// One atomlab run at a time within a test binary: cargo runs tests in
/// parallel, and measuring or stressing runs that compete for the CPUs
/// overlap their threads less (stress catches less, bench measures noise).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The `atomlab` binary under test, saving into a scratch store (one per
/// test process), never the user's.
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_atomlab"));
    c.env(
        "ATOMLAB_DB",
        std::env::temp_dir().join(format!("atomlab-tests-{}.db", std::process::id())),
    )
    .env_remove("ATOMLAB_STORE");
    c
}

/// Runs the `atomlab` binary under test with `args`, one at a time.
pub fn atomlab(args: &[&str]) -> Output {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    command().args(args).output().expect("run atomlab")
}

/// The run's stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `args` must be refused: exit 2, every `must_mention` on stderr, no panic,
/// nothing on stdout.
pub fn assert_bad_input(args: &[&str], must_mention: &[&str]) {
    let o = atomlab(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    let err = stderr(&o);
    for m in must_mention {
        assert!(err.contains(m), "{args:?}: stderr lacks {m:?}: {err}");
    }
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(o.stdout.is_empty(), "{args:?}: nothing on stdout on error");
}

/// A fresh, empty folder for one test of this process.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("atomlab-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// atomlab with `--store STORE` and `args`.
pub fn with_store(store: &str, args: &[&str]) -> Output {
    command()
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .expect("run atomlab")
}

/// Bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A golden litmus test of atomlab-model's (`x86/SB.litmus`).
pub fn golden(rel: &str) -> String {
    format!(
        "{}/../atomlab-model/tests/litmus/{rel}",
        env!("CARGO_MANIFEST_DIR")
    )
}
