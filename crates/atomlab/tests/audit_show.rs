//! `atomlab show RUN` of a saved `audit` prints what `audit` printed (issue
//! 24): one file in detail, a row per file with `--require` and
//! `--by-function`, a row per package with what needs attention, and
//! `--by-file` over packages, all from the saved records.

mod audit_support;
mod cli_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use audit_support::*;

const A64_CC: &str = "aarch64-linux-gnu-gcc";

fn sh(dir: &Path, script: &str) {
    let o = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `dir/NAME_1.0_arm64.deb` holding `files` (binary, name under /usr/bin)
/// and a README.
fn deb(dir: &Path, name: &str, files: &[(&Path, &str)]) -> PathBuf {
    let work = PathBuf::from(format!("{}-build/{name}", dir.display()));
    let _ = std::fs::remove_dir_all(&work);
    let root = work.join("root");
    std::fs::create_dir_all(root.join("usr/bin")).unwrap();
    std::fs::create_dir_all(root.join("usr/share/doc")).unwrap();
    std::fs::write(root.join("usr/share/doc/README"), "not an ELF\n").unwrap();
    for (bin, as_name) in files {
        std::fs::copy(bin, root.join("usr/bin").join(as_name)).unwrap();
    }
    sh(
        &work,
        &format!("printf '2.0\\n' > debian-binary && printf 'Package: {name}\\n' > control && tar -cf control.tar control && gzip -f control.tar && tar -C root -cf data.tar . && xz -0 -f data.tar"),
    );
    let out = dir.join(format!("{name}_1.0_arm64.deb"));
    sh(
        &work,
        &format!(
            "ar rc {} debian-binary control.tar.gz data.tar.xz",
            out.display()
        ),
    );
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn in_store(store: &Path, args: &[&str]) -> Output {
    let out = atomlab()
        .arg("--store")
        .arg(store)
        .args(args)
        .output()
        .unwrap();
    assert!(
        !text(&out.stderr).contains("panicked"),
        "{}",
        text(&out.stderr)
    );
    out
}

/// The id of the store's newest run.
fn newest(store: &Path) -> String {
    let o = in_store(store, &["runs", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&o.stdout).expect("runs --json");
    let runs = &runs["runs"];
    runs[0]["meta"]["id"]
        .as_str()
        .expect("a run id")
        .to_string()
}

/// Before: `show` printed a row per file (or the package table then a row
/// per file) whatever the audit had printed: not the one file's detail, the
/// functions, the `--require` reasons or what needs attention.
#[test]
fn show_prints_what_audit_printed() {
    if !have_tools("show_prints_what_audit_printed", &[A64_CC]) {
        return;
    }
    let dir = scratch("show");
    let (none, outline, lse, llsc) = (
        dir.join("none"),
        dir.join("outline"),
        dir.join("lse"),
        dir.join("llsc"),
    );
    compile(A64_CC, &[], &["noatomics.c"], &none);
    compile(A64_CC, &[], &["atomics.c"], &outline);
    compile(A64_CC, &["-march=armv8.1-a"], &["atomics.c"], &lse);
    compile(
        A64_CC,
        &["-march=armv8-a", "-mno-outline-atomics"],
        &["atomics.c"],
        &llsc,
    );
    let debs = dir.join("debs");
    std::fs::create_dir_all(&debs).unwrap();
    let quiet = deb(&debs, "quiet", &[(&none, "quiet")]);
    let old = deb(&debs, "oldbuild", &[(&outline, "a"), (&llsc, "b")]);
    let v81 = deb(&debs, "v81only", &[(&none, "a"), (&lse, "c-lse")]);
    let broken = debs.join("broken_1.0_arm64.deb");
    std::fs::write(&broken, b"!<arch>\nnot really\n").unwrap();
    let store = dir.join("runs.db");
    let s = |p: &Path| p.to_str().unwrap().to_string();

    let cases: Vec<(Vec<String>, Option<&str>)> = vec![
        // One file in detail, its gate not met.
        (
            vec!["--require".into(), "lse".into(), s(&outline)],
            Some("--require lse: NOT met"),
        ),
        // A row per file, the gate's reasons and the top functions.
        (
            vec![
                "--by-function=2".into(),
                "--require".into(),
                "no-llsc".into(),
                s(&none),
                s(&llsc),
                s(&lse),
            ],
            Some("| function"),
        ),
        // A row per package, what needs attention, one not audited.
        (
            vec![s(&quiet), s(&old), s(&v81), s(&broken)],
            Some("needs attention"),
        ),
        // A row per file over packages.
        (vec!["--by-file".into(), s(&quiet), s(&v81)], Some(".deb!")),
    ];
    for (args, must) in cases {
        let mut all = vec!["audit".to_string()];
        all.extend(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let live = in_store(&store, &all);
        assert!(
            matches!(live.status.code(), Some(0 | 1)),
            "{all:?}: {}",
            text(&live.stderr)
        );
        let printed = text(&live.stdout);
        if let Some(m) = must {
            assert!(printed.contains(m), "{all:?}: no {m:?} in\n{printed}");
        }
        let shown = in_store(&store, &["show", &newest(&store)]);
        assert_eq!(shown.status.code(), Some(0), "{}", text(&shown.stderr));
        assert_eq!(text(&shown.stdout), printed, "{all:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
