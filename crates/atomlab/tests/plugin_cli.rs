//! Users' own locks as plugins (include/atomlab.h, issue 25): C plugins
//! from `tests/plugins/*.c`, compiled with the system `cc` into
//! CARGO_TARGET_TMPDIR, run through the real `atomlab bench lock` and
//! `atomlab stress mutex`. Without `cc` the tests skip with a message (and
//! fail instead under ATOMLAB_REQUIRE_CROSS=1, as the other tests that need
//! a compiler do).

mod cli_support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use cli_support::{assert_bad_input, atomlab, stderr, text};

/// The C compiler for the atomlab under test: the system `cc` natively,
/// Debian's cross compiler where the tests run under qemu-user
/// (scripts/cross-test), whose atomlab loads only its own architecture.
const CC: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-linux-gnu-gcc"
} else if cfg!(target_arch = "riscv64") {
    "riscv64-linux-gnu-gcc"
} else {
    "cc"
};

/// `CC -O2 -shared -fPIC` of `tests/plugins/SRC.c` with `defines`, into
/// CARGO_TARGET_TMPDIR as `OUT.so`; `None` (after saying why) without `CC`.
fn plugin(src: &str, defines: &[&str], out: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugins");
    std::fs::create_dir_all(&dir).unwrap();
    let so = dir.join(format!("{out}.so"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let built = Command::new(CC)
        .args(["-O2", "-shared", "-fPIC", "-I"])
        .arg(root.join("../../include"))
        .args(defines.iter().map(|d| format!("-D{d}")))
        .arg("-o")
        .arg(&so)
        .arg(root.join(format!("tests/plugins/{src}.c")))
        .output();
    match built {
        Ok(o) if o.status.success() => Some(so),
        Ok(o) => panic!("{CC} {src}.c: {}", text(&o.stderr)),
        Err(e) => {
            let msg =
                format!("plugin tests skipped: no C compiler `{CC}` ({e}); apt-get install gcc");
            if std::env::var("ATOMLAB_REQUIRE_CROSS").is_ok_and(|v| v == "1") {
                panic!("{msg}, and ATOMLAB_REQUIRE_CROSS=1 is set");
            }
            let _ = writeln!(std::io::stderr(), "{msg}");
            None
        }
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The records of a `--json` run.
fn records(stdout: &[u8]) -> Vec<serde_json::Value> {
    let doc: serde_json::Value =
        serde_json::from_slice(stdout).unwrap_or_else(|e| panic!("--json: {e}: {}", text(stdout)));
    doc["records"].as_array().expect("records").clone()
}

fn find<'a>(recs: &'a [serde_json::Value], variant: &str) -> &'a serde_json::Value {
    recs.iter()
        .find(|r| r["variant"] == variant)
        .unwrap_or_else(|| panic!("no record of {variant} in {recs:?}"))
}

#[test]
fn a_correct_ticket_lock_passes_stress_mutex() {
    let Some(so) = plugin("ticket", &[], "ticket-stress") else {
        return;
    };
    let o = atomlab(&[
        "--json",
        "--no-save",
        "stress",
        "mutex",
        "--plugin",
        s(&so),
        "--variant",
        "c-ticket",
        "--ops",
        "200000",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = records(&o.stdout);
    assert_eq!(recs.len(), 1);
    let r = find(&recs, "c-ticket");
    assert_eq!(r["verdict"], "PASS", "{r}");
    assert_eq!(r["parameters"]["plugin"], s(&so));
    assert!(r["parameters"]["replay"]
        .as_str()
        .unwrap()
        .contains(&format!("--plugin {}", s(&so))));
    // The audit of its functions, as a parameter and as a note after the
    // verdict's reason (which stays the first).
    let audit = r["parameters"]["plugin_audit"].as_str().unwrap();
    assert!(audit.starts_with("lock uses "), "{audit}");
    let notes = r["notes"].as_array().unwrap();
    assert!(notes[0].as_str().unwrap().starts_with("verdict: "), "{r}");
    assert!(
        notes[1..].contains(&format!("c-ticket: {audit}").into()),
        "{r}"
    );
}

/// A "lock" of a plain load and a separate store lets two threads in: the
/// verdict is FAIL and the exit code 1.
#[test]
fn a_load_store_lock_is_caught_losing_updates() {
    let Some(so) = plugin("loadstore", &[], "loadstore") else {
        return;
    };
    let o = atomlab(&[
        "--no-save",
        "stress",
        "mutex",
        "--plugin",
        s(&so),
        "--variant",
        "c-load-store",
        "--ops",
        "1000000",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("mutex c-load-store: FAIL"), "{out}");
    assert!(
        out.contains("violations of a variant meant to be correct"),
        "{out}"
    );
    // The audit of its functions says why, beside the verdict.
    let says = if cfg!(target_arch = "x86_64") {
        "c-load-store: lock uses plain stores only (mov: a release store under x86-TSO)"
    } else {
        "c-load-store: lock uses acquire loads (ldar) and plain stores (str)"
    };
    assert!(out.contains(says), "{out}");
}

/// `bench lock --plugin` puts the plugin's lock in the same table as the
/// built-in ones, with figures, and its records name the file and its
/// SHA-256 (the built-in ones do not).
#[test]
fn bench_lock_runs_the_plugin_beside_the_built_in_locks() {
    let Some(so) = plugin("ticket", &[], "ticket-bench") else {
        return;
    };
    let args = [
        "bench",
        "lock",
        "--plugin",
        s(&so),
        "--threads",
        "1",
        "--duration",
        "30ms",
        "--runs",
        "2",
        "--warmup",
        "0",
    ];
    let o = atomlab(&[&["--json", "--no-save"][..], &args].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = records(&o.stdout);
    for builtin in ["tas", "ttas", "ticket", "mcs", "std"] {
        assert!(find(&recs, builtin)["parameters"].get("plugin").is_none());
    }
    let r = find(&recs, "c-ticket");
    assert_eq!(r["parameters"]["plugin"], s(&so));
    assert_eq!(r["parameters"]["plugin_variant"], "c-ticket");
    let sha = r["parameters"]["plugin_sha256"].as_str().unwrap();
    assert_eq!(sha.len(), 64, "{sha}");
    if let Ok(out) = Command::new("sha256sum").arg(&so).output() {
        assert!(
            text(&out.stdout).starts_with(sha),
            "{sha} vs {}",
            text(&out.stdout)
        );
    }
    let ns = r["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "ns_per_op")
        .expect("ns_per_op");
    assert!(ns["samples"].as_array().unwrap().len() == 2, "{ns}");
    // What its functions do with atomics, in the record.
    let audit = r["parameters"]["plugin_audit"]
        .as_str()
        .expect("plugin_audit");
    if cfg!(target_arch = "x86_64") {
        assert_eq!(
            audit,
            "lock uses a lock-prefixed RMW (lock xadd), unlock plain stores only (mov: a release store under x86-TSO)"
        );
        let ttas = find(&recs, "c-ttas")["parameters"]["plugin_audit"].clone();
        assert!(
            ttas.as_str()
                .unwrap()
                .ends_with("try_lock a lock-prefixed RMW (lock cmpxchg)"),
            "{ttas}"
        );
    } else {
        assert!(audit.starts_with("lock uses "), "{audit}");
    }
    assert!(find(&recs, "ticket")["parameters"]
        .get("plugin_audit")
        .is_none());
    // The people's table: one table, the plugin's row with a figure.
    let o = atomlab(
        &[
            &["--no-save"][..],
            &args[..4],
            &["--variant", "ticket,c-ticket"],
            &args[4..],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = text(&o.stdout);
    let row = out
        .lines()
        .find(|l| l.contains("| c-ticket "))
        .unwrap_or_else(|| panic!("no c-ticket row: {out}"));
    assert!(out.lines().any(|l| l.contains("| ticket ")), "{out}");
    assert!(has_figure(row), "{out}");
    // And beside the table, once.
    let line = format!("note: c-ticket: {audit}");
    assert_eq!(out.lines().filter(|l| *l == line).count(), 1, "{out}");
}

/// Whether a bench table row has an ns/op figure (a number, perhaps with
/// a k or M suffix).
fn has_figure(row: &str) -> bool {
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    cells
        .get(6)
        .is_some_and(|c| c.starts_with(|ch: char| ch.is_ascii_digit()))
}

/// Every bad plugin is refused before anything runs, exit 2, naming the
/// file and what is wrong with it, by both subcommands.
#[test]
fn bad_plugins_are_refused_naming_the_file() {
    let Some(good) = plugin("ticket", &[], "ticket-bad") else {
        return;
    };
    let dir = good.parent().unwrap();
    let text_file = dir.join("notes.so");
    std::fs::write(&text_file, "not a library\n").unwrap();
    // The same library, its ELF header's e_machine made another machine's.
    let mut bytes = std::fs::read(&good).unwrap();
    let other: u16 = if cfg!(target_arch = "aarch64") {
        62
    } else {
        183
    };
    bytes[18..20].copy_from_slice(&other.to_le_bytes());
    let foreign = dir.join("foreign.so");
    std::fs::write(&foreign, bytes).unwrap();
    let no_entry = plugin("bad", &["NO_ENTRY"], "no-entry").unwrap();
    let future = plugin("bad", &["FUTURE"], "future").unwrap();
    let queue = plugin("bad", &["SPSC"], "queue").unwrap();
    let cases: [(&Path, &str); 5] = [
        (&text_file, "not a shared object"),
        (&foreign, "wrong architecture"),
        (&no_entry, "missing entry point"),
        (&future, "ABI version 99 is from the future"),
        (
            &queue,
            "takes lock variants, and this plugin provides c-queue (spsc)",
        ),
    ];
    for (path, what) in cases {
        let named = format!("plugin {}: ", s(path));
        assert_bad_input(
            &["--no-save", "bench", "lock", "--plugin", s(path)],
            &[&named, what],
        );
        assert_bad_input(
            &["--no-save", "stress", "mutex", "--plugin", s(path)],
            &[&named, what],
        );
    }
    // One name twice: records could not tell them apart.
    assert_bad_input(
        &[
            "--no-save",
            "bench",
            "lock",
            "--plugin",
            s(&good),
            "--plugin",
            s(&good),
        ],
        &["variant 'c-ticket' has the name of a variant of"],
    );
    // The good one beside a bad one: nothing runs either.
    assert_bad_input(
        &[
            "--no-save",
            "stress",
            "mutex",
            "--plugin",
            s(&good),
            "--plugin",
            s(&future),
        ],
        &["future.so"],
    );
}

/// A plugin that dereferences NULL and one that never returns from `lock`
/// are cells of their own (crashed, hung) with exit 1; the other
/// variants still run, print and are in the records.
#[test]
fn a_crashing_and_a_hanging_plugin_do_not_take_the_others_down() {
    let Some(good) = plugin("ticket", &[], "ticket-isolated") else {
        return;
    };
    let crash = plugin("bad", &["CRASH"], "crash").unwrap();
    let hang = plugin("bad", &["HANG"], "hang").unwrap();
    let plugins = [
        "--plugin",
        s(&crash),
        "--plugin",
        s(&hang),
        "--plugin",
        s(&good),
    ];
    let variants = ["--variant", "c-null,ticket,c-forever,c-ticket"];

    let stress = |json: &[&'static str]| {
        atomlab(
            &[
                json,
                &["--no-save", "stress", "mutex"][..],
                &plugins,
                &variants,
                &["--ops", "100000", "--time-limit", "1"],
            ]
            .concat(),
        )
    };
    let o = stress(&[]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("mutex ticket: PASS"), "{out}");
    assert!(out.contains("mutex c-ticket: PASS"), "{out}");
    assert!(
        out.contains("crashed: SIGSEGV (segmentation fault)"),
        "{out}"
    );
    assert!(out.contains("hung: no result for"), "{out}");
    let o = stress(&["--json"]);
    let recs = records(&o.stdout);
    assert_eq!(recs.len(), 4, "{recs:?}");
    assert_eq!(find(&recs, "c-null")["flags"][0]["kind"], "crashed");
    assert_eq!(find(&recs, "c-forever")["flags"][0]["kind"], "hung");
    assert_eq!(find(&recs, "c-null")["parameters"]["plugin"], s(&crash));

    let o = atomlab(
        &[
            &["--no-save", "bench", "lock"][..],
            &plugins,
            &variants,
            &[
                "--threads",
                "1",
                "--duration",
                "30ms",
                "--runs",
                "1",
                "--warmup",
                "0",
            ],
        ]
        .concat(),
    );
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    let row = |v: &str| {
        out.lines()
            .find(|l| l.contains(&format!("| {v} ")))
            .unwrap_or_else(|| panic!("no {v} row: {out}"))
            .to_string()
    };
    assert!(row("c-null").contains("crashed"), "{out}");
    assert!(row("c-forever").contains("hung"), "{out}");
    assert!(has_figure(&row("ticket")), "{out}");
    assert!(has_figure(&row("c-ticket")), "{out}");
    assert!(!has_figure(&row("c-null")), "{out}");
    assert!(
        out.contains("crashed: lock c-null threads=1: SIGSEGV (segmentation fault)"),
        "{out}"
    );
}

/// A lock that is the C library's `pthread_mutex_lock`: the audit line
/// reads it from the C library (named), not from the plugin's file, and
/// the lock passes stress mutex.
#[test]
fn a_lock_in_the_c_library_is_audited_there() {
    let Some(so) = plugin("pthread", &[], "pthread") else {
        return;
    };
    let o = atomlab(&[
        "--json",
        "--no-save",
        "stress",
        "mutex",
        "--plugin",
        s(&so),
        "--ops",
        "100000",
        "--variant",
        "c-pthread",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = records(&o.stdout);
    let r = find(&recs, "c-pthread");
    assert_eq!(r["verdict"], "PASS", "{r}");
    let audit = r["parameters"]["plugin_audit"].as_str().unwrap();
    assert!(
        audit.starts_with("lock (pthread_mutex_lock in libc.so"),
        "{audit}"
    );
    assert!(audit.contains("unlock ("), "{audit}");
    if cfg!(target_arch = "x86_64") {
        assert!(
            audit.contains("uses a lock-prefixed RMW (lock cmpxchg)"),
            "{audit}"
        );
    }
}
