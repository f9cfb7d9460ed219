//! Users' code and files must not take atomlab down, nor turn it against
//! its user (issue 33): plugins that misbehave while loaded
//! (`tests/plugins/hostile.c`), plugin "files" that are FIFOs, devices,
//! huge or truncated, a plugin cell that exits, a parent killed with
//! SIGKILL, a symlink planted where the old result file went, `--apt`
//! names that apt-get would read as options, store strings that carry a
//! password, and echoed names with terminal escapes.
//!
//! Without a C compiler the plugin tests skip with a message (and fail
//! under ATOMLAB_REQUIRE_CROSS=1, which `.ci/run` sets).

mod cli_support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cli_support::{assert_bad_input, atomlab, command, scratch, stderr, text};

const CC: &str = if cfg!(target_arch = "aarch64") {
    "aarch64-linux-gnu-gcc"
} else if cfg!(target_arch = "riscv64") {
    "riscv64-linux-gnu-gcc"
} else {
    "cc"
};

/// `CC -O2 -shared -fPIC` of `tests/plugins/SRC.c` with `-DDEFINE` into
/// CARGO_TARGET_TMPDIR as `OUT.so`; `None` (after saying why) without `CC`.
fn plugin(src: &str, define: &str, out: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("containment");
    std::fs::create_dir_all(&dir).unwrap();
    let so = dir.join(format!("{out}.so"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let built = Command::new(CC)
        .args(["-O2", "-shared", "-fPIC", "-I"])
        .arg(root.join("../../include"))
        .arg(format!("-D{define}"))
        .arg("-o")
        .arg(&so)
        .arg(root.join(format!("tests/plugins/{src}.c")))
        .output();
    match built {
        Ok(o) if o.status.success() => Some(so),
        Ok(o) => panic!("{CC} {src}.c: {}", text(&o.stderr)),
        Err(e) => {
            let msg = format!("containment tests skipped: no C compiler `{CC}` ({e})");
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

/// Each used to kill atomlab with SIGSEGV and no word, end it with exit 0
/// and nothing run (CTOR_EXIT: a CI gate passed), or hang it (CTOR_SLEEP):
/// now each is refused, exit 2, naming the file and what happened.
#[test]
fn a_plugin_that_misbehaves_while_loading_is_refused_naming_it() {
    let Some(crash) = plugin("hostile", "CTOR_CRASH", "ctor-crash") else {
        return;
    };
    let cases = [
        (crash, "crashed (SIGSEGV, segmentation fault) while loading"),
        (
            plugin("hostile", "ENTRY_CRASH", "entry-crash").unwrap(),
            "crashed (SIGSEGV, segmentation fault) while loading",
        ),
        (
            plugin("hostile", "BAD_VARIANTS", "bad-variants").unwrap(),
            "crashed (SIGSEGV, segmentation fault) while loading",
        ),
        (
            plugin("hostile", "NULL_VARIANTS", "null-variants").unwrap(),
            "n_variants is 2 but variants is NULL",
        ),
        (
            plugin("hostile", "CTOR_EXIT", "ctor-exit").unwrap(),
            "exited with code 0 while loading",
        ),
        (
            plugin("hostile", "CTOR_SLEEP", "ctor-sleep").unwrap(),
            "no answer in 10 s while loading",
        ),
    ];
    for (so, what) in &cases {
        let named = format!("plugin {}: ", s(so));
        let began = Instant::now();
        assert_bad_input(
            &["--no-save", "stress", "mutex", "--plugin", s(so)],
            &[&named, what],
        );
        assert!(began.elapsed() < Duration::from_secs(30), "{what}");
    }
    // bench too, one of them (the loading is the same code).
    let named = format!("plugin {}: ", s(&cases[0].0));
    assert_bad_input(
        &["--no-save", "bench", "lock", "--plugin", s(&cases[0].0)],
        &[&named, cases[0].1],
    );
}

/// A constructor and an entry point that print to stdout corrupted
/// `--json`; now the document parses and the plugin still runs.
#[test]
fn a_plugin_that_prints_while_loading_leaves_the_json_intact() {
    let Some(so) = plugin("hostile", "CTOR_PRINT", "ctor-print") else {
        return;
    };
    let o = atomlab(&[
        "--no-save",
        "--json",
        "stress",
        "mutex",
        "--plugin",
        s(&so),
        "--variant",
        "c-hostile-tas",
        "--ops",
        "20000",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("--json is not JSON ({e}): {}", text(&o.stdout)));
    assert_eq!(doc["records"][0]["variant"], "c-hostile-tas");
    assert!(!text(&o.stdout).contains("printed by"));
}

/// A plugin cell that calls exit(0) aborted the whole bench run (exit 2,
/// the built-in variant neither printed nor saved); now that cell is
/// flagged "exited" and the rest is printed and saved, exit 1. stress
/// likewise.
#[test]
fn a_cell_that_exits_is_flagged_and_the_others_are_kept() {
    let Some(so) = plugin("hostile", "CELL_EXIT", "cell-exit") else {
        return;
    };
    let o = atomlab(&[
        "--no-save",
        "--json",
        "bench",
        "lock",
        "--plugin",
        s(&so),
        "--variant",
        "tas,c-exits",
        "--threads",
        "1",
        "-d",
        "30ms",
        "--runs",
        "1",
        "--warmup",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let recs = doc["records"].as_array().unwrap();
    let of = |v: &str| recs.iter().find(|r| r["variant"] == v).unwrap().clone();
    let has_metrics = |r: &serde_json::Value| match &r["metrics"] {
        serde_json::Value::Array(a) => !a.is_empty(),
        serde_json::Value::Object(o) => !o.is_empty(),
        _ => false,
    };
    assert!(has_metrics(&of("tas")), "{}", of("tas"));
    let exited = of("c-exits");
    assert_eq!(exited["flags"][0]["kind"], "exited", "{exited}");
    assert!(
        exited["flags"][0]["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("the plugin called exit()"),
        "{exited}"
    );
    let o = atomlab(&[
        "--no-save",
        "stress",
        "mutex",
        "--plugin",
        s(&so),
        "--variant",
        "tas,c-exits",
        "--ops",
        "20000",
    ]);
    let out = text(&o.stdout).replace("\n    ", " ");
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("mutex tas: PASS"), "{out}");
    assert!(out.contains("exited with code 0 without a result"), "{out}");
}

/// A FIFO hung atomlab for ever, /dev/zero grew its memory without bound,
/// a 2 GiB sparse file took 2 GB; a truncated library raised SIGBUS in
/// dlopen. Each is refused at once, exit 2.
#[test]
fn files_that_are_not_plugins_are_refused_before_they_are_read() {
    let dir = scratch("not-plugins");
    let fifo = dir.join("fifo.so");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let sparse = dir.join("sparse.so");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let short = dir.join("short.so");
    std::fs::write(&short, b"\x7fELF\x02\x01\x01\0\0\0").unwrap();
    let mut cases: Vec<(PathBuf, &str)> = vec![
        (fifo, "a FIFO (named pipe), not a shared object file"),
        (PathBuf::from("/dev/zero"), "a character device"),
        (dir.clone(), "a directory"),
        (sparse, "more than the 512 MiB a plugin may have"),
        (short, "too short for an ELF header"),
    ];
    if let Some(good) = plugin("hostile", "CTOR_PRINT", "to-truncate") {
        let bytes = std::fs::read(&good).unwrap();
        let cut = dir.join("truncated.so");
        std::fs::write(&cut, &bytes[..bytes.len() / 3]).unwrap();
        cases.push((cut, "truncated:"));
    }
    for (path, what) in &cases {
        let began = Instant::now();
        assert_bad_input(
            &["--no-save", "bench", "lock", "--plugin", s(path)],
            &[&format!("plugin {}: ", s(path)), what],
        );
        assert!(began.elapsed() < Duration::from_secs(10), "{what}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child that runs a plugin's variant outlived a SIGKILLed atomlab
/// and spun on; now it dies with its parent (PR_SET_PDEATHSIG).
#[test]
fn a_plugin_child_dies_with_a_killed_atomlab() {
    let Some(hang) = plugin("bad", "HANG", "hang-orphan") else {
        return;
    };
    let mut parent = command()
        .args([
            "--no-save",
            "stress",
            "mutex",
            "--plugin",
            s(&hang),
            "--variant",
            "c-forever",
            "--time-limit",
            "120",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = parent.id();
    // The child running the variant (not the one that loaded the plugin
    // first, which is gone by then): its environment says so.
    let child = wait_for(Duration::from_secs(20), || {
        children_of(pid).into_iter().find(|c| {
            std::fs::read(format!("/proc/{c}/environ")).is_ok_and(|env| {
                env.split(|b| *b == 0)
                    .any(|v| v.starts_with(b"ATOMLAB_PLUGIN_CHILD="))
            })
        })
    });
    let Some(child) = child else {
        let _ = parent.kill();
        panic!("atomlab started no child process for the plugin in 20 s");
    };
    parent.kill().unwrap();
    parent.wait().unwrap();
    let gone = wait_for(Duration::from_secs(5), || (!alive(child)).then_some(()));
    if gone.is_none() {
        // SAFETY: a plain kill(2) of the test's own grandchild.
        unsafe { libc::kill(child as i32, libc::SIGKILL) };
        panic!("the plugin child {child} outlived its SIGKILLed parent {pid}");
    }
}

/// The child's result file was `$TMPDIR/atomlab-plugin-child-PID-N.json`:
/// a symlink planted there for coming PIDs made atomlab overwrite the
/// link's target. Now nothing is written at such a name, and the victim
/// file is untouched.
#[test]
fn a_symlink_planted_in_tmpdir_is_never_followed() {
    let Some(good) = plugin("hostile", "CTOR_PRINT", "planted") else {
        return;
    };
    let tmp = scratch("planted-tmp");
    let victim = tmp.join("victim.txt");
    std::fs::write(&victim, "the user's file\n").unwrap();
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    for pid in last..last + 400 {
        for n in 0..2 {
            let link = tmp.join(format!("atomlab-plugin-child-{pid}-{n}.json"));
            let _ = std::os::unix::fs::symlink(&victim, link);
        }
    }
    let o = command()
        .env("TMPDIR", &tmp)
        .args([
            "--no-save",
            "bench",
            "lock",
            "--plugin",
            s(&good),
            "--variant",
            "c-hostile-tas",
            "--threads",
            "1",
            "-d",
            "20ms",
            "--runs",
            "1",
            "--warmup",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "the user's file\n"
    );
    // The private directories are gone after the run.
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("atomlab-") && !n.starts_with("atomlab-plugin-child-"))
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A queue whose pop always returns a word nobody pushed ran past the
/// time limit and was called "a lock that never returns"; now its corrupt
/// items are reported within the limit.
#[test]
fn a_queue_whose_pop_always_answers_is_judged_within_the_limit() {
    let Some(so) = plugin("bad", "SPSC_GARBAGE", "garbage-queue") else {
        return;
    };
    let began = Instant::now();
    let o = atomlab(&[
        "--no-save",
        "stress",
        "spsc",
        "--plugin",
        s(&so),
        "--variant",
        "c-garbage-queue",
        "--time-limit",
        "3",
    ]);
    // Notes wrap at 100 columns: read them joined.
    let out = text(&o.stdout).replace("\n    ", " ");
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("which is no item that was pushed"), "{out}");
    assert!(!out.contains("hung"), "{out}");
    assert!(!out.contains("lock"), "{out}");
    assert!(began.elapsed() < Duration::from_secs(10));
}

/// `--apt=-cFILE` made apt-get read FILE as configuration (which can run
/// programs); a name among good ones that is an option dropped the
/// others. Refused before apt-get runs: a stand-in apt-get first on PATH
/// records that it never ran.
#[test]
fn apt_names_that_are_options_are_refused_before_apt_get_runs() {
    let dir = scratch("apt-inject");
    let log = dir.join("ran");
    let fake = dir.join("apt-get");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\necho \"$@\" >> {}\n", log.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for apt in [
        "--apt=-c/tmp/evil.conf",
        "--apt=hello,-oAPT::Get::Print-URIs=0",
    ] {
        let o = command()
            .env("PATH", &path)
            .args([
                "--no-save",
                "audit",
                apt,
                "--apt-cache",
                s(&dir.join("cache")),
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{apt}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("apt-get would read as an option"),
            "{}",
            stderr(&o)
        );
    }
    assert!(
        !log.exists(),
        "apt-get ran: {:?}",
        std::fs::read_to_string(&log)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--store 'host=… password=… dbname=…'` became a SQLite file named with
/// the password, printed back; now it is refused naming its keys only,
/// and no file is made.
#[test]
fn a_libpq_string_as_store_is_refused_without_its_password() {
    let dir = scratch("libpq-store");
    for store in [
        "host=db password=s3cr3t dbname=atomlab",
        " postgres://u:s3cr3t@db/atomlab",
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_atomlab"))
            .current_dir(&dir)
            .env_remove("ATOMLAB_DB")
            .args(["--store", store, "runs"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{store}: {}", stderr(&o));
        assert!(!stderr(&o).contains("s3cr3t"), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("postgres://USER@HOST"),
            "{}",
            stderr(&o)
        );
    }
    let made: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(made.is_empty(), "{made:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A refused variant name was echoed whole (10 KB) and raw (its escape
/// sequences reached the terminal).
#[test]
fn a_refused_name_is_cut_and_its_escapes_shown() {
    let name = format!("{}\x1b[2J\x1b[31mred", "x".repeat(10_000));
    for sub in [&["bench", "lock"][..], &["stress", "mutex"][..]] {
        let args = [&["--no-save"][..], sub, &["--variant", &name][..]].concat();
        let o = atomlab(&args);
        assert_eq!(o.status.code(), Some(2));
        let err = stderr(&o);
        assert!(!err.contains('\x1b'), "{err}");
        assert!(err.len() < 2000, "{} bytes: {}", err.len(), &err[..200]);
        assert!(err.contains("more bytes)"), "{err}");
    }
}

fn wait_for<T>(bound: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let began = Instant::now();
    while began.elapsed() < bound {
        if let Some(t) = f() {
            return Some(t);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// The processes whose parent is `pid` (/proc/PID/stat's fourth field).
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|st| {
                // After the command's closing parenthesis: state, ppid.
                st.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    == Some(pid)
            })
        })
        .collect()
}

/// Whether `pid` is a live process (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
        st.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}
