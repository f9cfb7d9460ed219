//! What the `verify` test files share: building a plugin of
//! tests/plugins with a (cross) compiler, and reading verdicts from the
//! table. Without the compiler a test skips with a message, and fails
//! instead under ATOMLAB_REQUIRE_CROSS=1 (as CI sets).

#![allow(dead_code)] // Each test file uses its part.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Debian's aarch64 cross compiler.
pub const AARCH64: &str = "aarch64-linux-gnu-gcc";
/// Debian's riscv64 cross compiler.
pub const RISCV: &str = "riscv64-linux-gnu-gcc";
/// The host's compiler (x86-64 code on this project's machines).
pub const HOST: &str = "cc";

/// `atomlab --no-save verify --plugin so args…`: its exit code and
/// stdout, after checking that it did not panic.
pub fn verify_plugin(so: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["--no-save", "verify", "--plugin", so.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = super::cli_support::atomlab(&all);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

/// Says why a test does not run; under ATOMLAB_REQUIRE_CROSS=1, fails.
pub fn skip(msg: &str) {
    if std::env::var("ATOMLAB_REQUIRE_CROSS").is_ok_and(|v| v == "1") {
        panic!("{msg}, and ATOMLAB_REQUIRE_CROSS=1 is set");
    }
    let _ = writeln!(std::io::stderr(), "{msg}");
}

/// tests/plugins/`source` built by `gcc` with `flags` (which give the
/// optimisation level) as `name.so` in a folder of its own (`folder`,
/// under the test target dir), or `None` after saying why not.
pub fn build_plugin(
    gcc: &str,
    source: &str,
    folder: &str,
    name: &str,
    flags: &[&str],
) -> Option<PathBuf> {
    if !Command::new(gcc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        let package = match gcc {
            AARCH64 => "gcc-aarch64-linux-gnu",
            RISCV => "gcc-riscv64-linux-gnu",
            _ => "gcc",
        };
        skip(&format!(
            "verify tests skipped: `{gcc}` is not installed (apt-get install {package})"
        ));
        return None;
    }
    if gcc == HOST && !cfg!(target_arch = "x86_64") {
        let _ = writeln!(
            std::io::stderr(),
            "x86-64 verify tests skipped: the host `cc` does not build x86-64 code here"
        );
        return None;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let so = dir.join(format!("{name}.so"));
    // Built under a name of its own and renamed into place: two tests
    // that build the same plugin at once (they run in parallel) never
    // read a file the other's compiler is still writing.
    static BUILDS: AtomicUsize = AtomicUsize::new(0);
    // ORDERING: only distinct numbers are needed; nothing is published
    // through the counter.
    let n = BUILDS.fetch_add(1, Ordering::Relaxed);
    let part = dir.join(format!("{name}.{}.{n}.part.so", std::process::id()));
    let o = Command::new(gcc)
        .args(flags)
        .args(["-shared", "-fPIC"])
        .arg("-I")
        .arg(root.join("../../include"))
        .arg("-o")
        .arg(&part)
        .arg(root.join("tests/plugins").join(source))
        .output()
        .expect("run the compiler");
    assert!(
        o.status.success(),
        "{gcc} {flags:?} {source}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::rename(&part, &so).unwrap();
    Some(so)
}

/// The verdict words of `variant`'s rows under `model` in a verify
/// table, in order.
pub fn verdicts(out: &str, variant: &str, model: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            // A table row: `| variant | model | cpu | verdict | … |`.
            let l = l.replace('|', " ");
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.first() == Some(&variant) && w.get(1) == Some(&model)).then(|| {
                w.iter()
                    .find(|x| ["PASS", "FAIL", "BOUND", "REFUSED"].contains(x))
                    .unwrap_or(&"?")
                    .to_string()
            })
        })
        .collect()
}
