//! `atomlab check` with herd7's model options: `--bell` (tag sets from a
//! bell file's enums), `--variant` (the model's `if "NAME"` tests) and
//! `--conf FILE.cfg` (herd7's configuration files), driven through the
//! real binary; and the Linux-kernel memory model run from the kernel's own
//! files in ../shared (skipped, with a message, where ../shared is absent).

mod cli_support;

use cli_support::{scratch, text};

use std::path::{Path, PathBuf};
use std::process::Output;

fn atomlab(args: &[&str]) -> Output {
    cli_support::command()
        .args(args)
        .output()
        .expect("run atomlab")
}

/// Store buffering with READ_ONCE/WRITE_ONCE: allowed unless a model
/// orders the marked accesses.
const SB_ONCE: &str = "C SB+once\n{}\n\
P0(int *x, int *y)\n{\n\tint r0;\n\tWRITE_ONCE(*x, 1);\n\tr0 = READ_ONCE(*y);\n}\n\
P1(int *x, int *y)\n{\n\tint r0;\n\tWRITE_ONCE(*y, 1);\n\tr0 = READ_ONCE(*x);\n}\n\
exists (0:r0=0 /\\ 1:r0=0)\n";

/// The observation of the one test under the one model, from herd's log.
fn observation(out: &Output) -> String {
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("Observation SB+once "))
        .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
        .unwrap_or_else(|| panic!("no observation in {stdout}"))
}

struct Files {
    dir: PathBuf,
    test: String,
}

impl Files {
    fn new(name: &str) -> Files {
        let dir = scratch(name);
        let test = dir.join("SB+once.litmus");
        std::fs::write(&test, SB_ONCE).unwrap();
        std::fs::write(
            dir.join("tags.bell"),
            "\"tags\"\nenum Accesses = 'once || 'release\ninstructions R[Accesses]\ninstructions W[Accesses]\n",
        )
        .unwrap();
        Files {
            test: test.display().to_string(),
            dir,
        }
    }

    fn write(&self, name: &str, body: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, body).unwrap();
        p.display().to_string()
    }

    fn bell(&self) -> String {
        self.dir.join("tags.bell").display().to_string()
    }
}

/// The bell's tag 'once gives the set `Once`, READ_ONCE's and WRITE_ONCE's
/// events: ordering them forbids SB; its tag 'release gives `Release`,
/// empty in this test, which orders nothing.
#[test]
fn bell_tags_name_the_linux_annotations() {
    let f = Files::new("tags");
    let once = f.write(
        "once.cat",
        "\"once\"\nacyclic ([Once] ; po ; [Once]) | rf | co | fr as once-sc\n",
    );
    let release = f.write(
        "release.cat",
        "\"release\"\nacyclic ([Release] ; po ; [Release]) | rf | co | fr as release-sc\n",
    );
    let bell = f.bell();
    let run = |model: &str| {
        atomlab(&[
            "check",
            "--no-save",
            "--format",
            "herd",
            "--bell",
            &bell,
            "--model-file",
            model,
            &f.test,
        ])
    };
    assert_eq!(observation(&run(&once)), "Never");
    assert_eq!(observation(&run(&release)), "Sometimes");

    // Without the bell, `Once` is no name: refused with its position and a
    // pointer to --bell.
    let out = atomlab(&["check", "--no-save", "--model-file", &once, &f.test]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{once}:2:11: unknown name `Once`")) && err.contains("--bell"),
        "{err}"
    );
}

/// `if "NAME"` holds exactly for the names given with --variant.
#[test]
fn variants_choose_the_branches_of_if() {
    let f = Files::new("variants");
    let model = f.write(
        "v.cat",
        "\"v\"\nacyclic (if \"strong\" then po else 0) | rf | co | fr as v\n\
         if \"flagged\" flag ~empty _ as flagged-variant end\n",
    );
    let run = |extra: &[&str]| {
        let mut args = vec![
            "check",
            "--no-save",
            "--format",
            "herd",
            "--model-file",
            &model,
        ];
        args.extend_from_slice(extra);
        args.push(&f.test);
        atomlab(&args)
    };
    assert_eq!(observation(&run(&[])), "Sometimes");
    assert_eq!(observation(&run(&["--variant", "strong"])), "Never");
    assert_eq!(observation(&run(&["--variant", "Strong"])), "Sometimes");
    let both = run(&["--variant", "strong,flagged"]);
    assert_eq!(observation(&both), "Never");
    let out = run(&["--variant", "flagged"]);
    assert!(
        text(&out.stdout).contains("Flag flagged-variant"),
        "{}",
        text(&out.stdout)
    );
}

/// A herd7 cfg file: model, bell and variant, relative to the cfg's own
/// directory; display keys skipped; other keys, missing files and options
/// without a model refused with exit 2.
#[test]
fn cfg_files_give_the_model_bell_and_variants() {
    let f = Files::new("cfg");
    f.write(
        "m.cat",
        "\"m\"\nacyclic (if \"strong\" then [Once] ; po ; [Once] else 0) | rf | co | fr as m\n",
    );
    let cfg = f.write(
        "m.cfg",
        "# a herd7 cfg\nmodel m.cat\nbell tags.bell\nvariant strong\ngraph columns\nshowevents noregs\n",
    );
    // Run from elsewhere: the names resolve against the cfg's directory.
    let out = cli_support::command()
        .current_dir(std::env::temp_dir())
        .args([
            "check",
            "--no-save",
            "--format",
            "herd",
            "--conf",
            &cfg,
            &f.test,
        ])
        .output()
        .unwrap();
    assert_eq!(observation(&out), "Never");
    assert!(
        text(&out.stdout).contains("% Model m (atomlab)"),
        "{}",
        text(&out.stdout)
    );
    // NAME=FILE.cfg names the column, and --variant replaces the cfg's.
    let spec = format!("mine={cfg}");
    let out = atomlab(&[
        "check",
        "--no-save",
        "--format",
        "herd",
        "--conf",
        &spec,
        "--variant",
        "weak",
        &f.test,
    ]);
    assert_eq!(observation(&out), "Sometimes");
    assert!(text(&out.stdout).contains("% Model mine (atomlab)"));

    let bad = f.write("bad.cfg", "model m.cat\nunroll 2\n");
    let out = atomlab(&["check", "--no-save", "--conf", &bad, &f.test]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{bad}:2:1: herd7 cfg key `unroll`")),
        "{err}"
    );

    let missing = f.write("missing.cfg", "model m.cat\nbell nope.bell\n");
    let out = atomlab(&["check", "--no-save", "--conf", &missing, &f.test]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("nope.bell"),
        "{}",
        text(&out.stderr)
    );

    let nomodel = f.write("nomodel.cfg", "bell tags.bell\n");
    let out = atomlab(&["check", "--no-save", "--conf", &nomodel, &f.test]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("names no model"),
        "{}",
        text(&out.stderr)
    );

    let out = atomlab(&["check", "--no-save", "--conf", "/no/such.cfg", &f.test]);
    assert_eq!(out.status.code(), Some(2));

    let out = atomlab(&["check", "--no-save", "--bell", &f.bell(), &f.test]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--model-file"),
        "{}",
        text(&out.stderr)
    );

    let out = atomlab(&["check", "--no-save", "--bel", &f.bell(), &f.test]);
    assert_eq!(out.status.code(), Some(2));
}

/// A bell file with an error is refused with its file:line:column, exit 2,
/// before any test is judged.
#[test]
fn a_bad_bell_is_refused_with_its_position() {
    let f = Files::new("badbell");
    let model = f.write("ok.cat", "\"ok\"\nacyclic po | rf | co | fr as sc\n");
    for (body, at, what) in [
        ("enum A = 'a ||\n", "2:1", "expected a tag"),
        ("enum A = 'a\ninstructions R[B]\n", "2:1", "no `enum B`"),
        ("enum A = 'a\ninstructions R[A\n", "3:1", "expected"),
        ("enum A = a\n", "1:10", "expected a tag"),
        ("let x = Nope\n", "1:9", "unknown name `Nope`"),
    ] {
        let bell = f.write("bad.bell", body);
        let out = atomlab(&[
            "check",
            "--no-save",
            "--bell",
            &bell,
            "--model-file",
            &model,
            &f.test,
        ]);
        assert_eq!(out.status.code(), Some(2), "{body}");
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("{bell}:{at}: ")) && err.contains(what),
            "{body}: {err}"
        );
        assert!(!text(&out.stdout).contains("SB+once"), "{body}");
    }
}

fn linux_model() -> Option<(PathBuf, PathBuf)> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let model = shared.join("litmus-more/linux/model");
    let lib = shared.join("cats/herd7-7.58");
    if model.join("linux-kernel.cfg").is_file() && lib.join("cross.cat").is_file() {
        Some((model, lib))
    } else {
        eprintln!(
            "skipped: no LKMM files and herd7 library at {} (../shared beside the repository)",
            shared.display()
        );
        None
    }
}

/// herd7 -conf linux-kernel.cfg, as a herd7 user runs it (herd7's library
/// found through $HERDLIB): MP with release and acquire is Never, and the
/// cfg's macros file is set aside with a note.
#[test]
fn the_kernel_cfg_runs_the_lkmm() {
    let Some((model, lib)) = linux_model() else {
        return;
    };
    let cfg = model.join("linux-kernel.cfg");
    let test = model.join("../MP+pooncerelease+poacquireonce.litmus");
    let spec = format!("lkmm={}", cfg.display());
    let out = cli_support::command()
        .env("HERDLIB", &lib)
        .args([
            "check",
            "--no-save",
            "--format",
            "herd",
            "--model",
            "lkmm",
            "--conf",
            &spec,
            test.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("Observation MP+pooncerelease+poacquireonce Never"),
        "{stdout}"
    );
    assert!(text(&out.stderr).contains("linux-kernel.def not read"));

    // Without herd7's library, lock.cat's include of cross.cat is refused
    // with its position and what to do.
    let out = cli_support::command()
        .env_remove("HERDLIB")
        .args([
            "check",
            "--no-save",
            "--conf",
            &spec,
            test.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("lock.cat:11:1: cannot find included file \"cross.cat\"")
            && err.contains("--cat-path"),
        "{err}"
    );
}
