//! Issue 23's first items: commands that misled (a silent exit 0, a
//! panic) or stored what cannot be replayed. Each test names the
//! behaviour of the code before the fix that it would have caught.

mod cli_support;

use cli_support::{atomlab, golden, scratch, stderr, text, with_store};

/// `cmd` with its stdout a pipe whose reader is already gone, as in
/// `atomlab … | true` once `true` has exited.
fn into_closed_pipe(mut cmd: std::process::Command) -> std::process::Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    cmd.stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run atomlab")
}

/// Before: `atomlab completions zsh | true` panicked (BrokenPipe, exit
/// 101), and so did any command whose table met a closed pipe. Now every
/// one ends quietly with exit 0, as ripgrep does.
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let d = scratch("pipe");
    let db = d.join("r.db");
    let db = db.to_str().unwrap();
    let sb = golden("x86/MP.litmus");
    let o = with_store(db, &["--label", "piped", "check", "--model", "sc", &sb]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let commands: &[&[&str]] = &[
        &["completions", "zsh"],
        &["completions", "bash"],
        &["man"],
        &["--help"],
        &["check", "--help"],
        &["machine"],
        &["--no-save", "check", "--model", "sc", &sb],
        &["--no-save", "--json", "check", "--model", "sc", &sb],
        &["runs"],
        &["--json", "runs"],
        &["show", "2"],
        &["export", "2", "--format", "csv"],
    ];
    for args in commands {
        let mut c = cli_support::command();
        c.arg("--store").arg(db).args(*args);
        let o = into_closed_pipe(c);
        let e = stderr(&o);
        assert!(
            !e.contains("panicked") && !e.contains("Broken pipe") && !e.contains("BrokenPipe"),
            "{args:?}: {e}"
        );
        assert_eq!(o.status.code(), Some(0), "{args:?}: {e}");
    }
}

/// Before: `runs --capability foo` listed nothing and exited 0, and the
/// help named neither load nor run. Now an unknown capability is refused
/// (exit 2) with the known ones.
#[test]
fn runs_refuses_an_unknown_capability() {
    let d = scratch("runs-cap");
    let db = d.join("r.db");
    let db = db.to_str().unwrap();
    let o = with_store(db, &["check", &golden("x86/MP.litmus")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = with_store(db, &["runs", "--capability", "foo"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    for c in ["foo", "audit", "bench", "check", "load", "run", "stress", "suite"] {
        assert!(e.contains(c), "the refusal lacks {c}: {e}");
    }
    let help = text(&atomlab(&["runs", "--help"]).stdout);
    for c in ["load", "run", "suite"] {
        assert!(help.contains(c), "runs --help lacks {c}: {help}");
    }
    // A known one still lists.
    for c in ["check", "load", "run"] {
        let o = with_store(db, &["runs", "--capability", c]);
        assert_eq!(o.status.code(), Some(0), "{c}: {}", stderr(&o));
    }
}
