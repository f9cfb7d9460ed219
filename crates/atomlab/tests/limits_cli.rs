//! atomlab under the resource limits a user or a batch system sets (issue
//! 33): few threads (`ulimit -u`, RLIMIT_NPROC) and a small main stack
//! (`ulimit -s`, RLIMIT_STACK). Each run has a deadline: a run that hangs
//! is killed and fails its test.
//!
//! RLIMIT_NPROC counts every process and thread of the user, and the
//! kernel does not enforce it for root (`setrlimit(2)`: CAP_SYS_RESOURCE,
//! CAP_SYS_ADMIN). Run as root (as CI runs), the binary is started as a
//! user id of its own with no other process, so that the limit allows
//! exactly the threads a test says; run as another user, the limit is 1
//! and no thread can start at all.

mod cli_support;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cli_support::{golden, stderr, text};

/// How long any limited run may take before it counts as hung.
const DEADLINE: Duration = Duration::from_secs(60);

/// A folder every user may read, for the binary and the tests a run under
/// another user id reads (the checkout may sit in a folder only root
/// enters, as /root). The binary is hard-linked there (copied across file
/// systems); the folders of earlier test processes that have ended are
/// removed first.
fn shared_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        remove_ended(&tmp);
        let d = tmp.join(format!("atomlab-limits-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temporary folder");
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        let bin = d.join("atomlab");
        let built = env!("CARGO_BIN_EXE_atomlab");
        if std::fs::hard_link(built, &bin).is_err() {
            std::fs::copy(built, &bin).expect("copy the binary");
        }
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        d
    })
}

/// Removes the shared folders in `tmp` of test processes that have ended.
fn remove_ended(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("atomlab-limits-"))
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A file of the shared folder, written with `text`, readable by all.
fn shared_file(name: &str, text: &str) -> String {
    let p = shared_dir().join(name);
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    p.display().to_string()
}

/// A C test of `threads` threads that each store to x (it runs on every
/// host, through the host's C11 mapping).
fn many_threads(threads: usize) -> String {
    let mut t = String::from("C MANY\n{}\n");
    for i in 0..threads {
        t.push_str(&format!(
            "P{i}(atomic_int *x) {{\n  atomic_store_explicit(x, 1, memory_order_relaxed);\n}}\n"
        ));
    }
    t.push_str("exists (x=1)\n");
    t
}

/// The limits a run is started under.
#[derive(Clone, Copy)]
enum Limit {
    /// RLIMIT_NPROC: the process itself and `n - 1` more threads (as
    /// root; as another user, no more threads at all).
    Tasks(u64),
    /// RLIMIT_STACK, in bytes: the main thread's stack.
    Stack(u64),
}

/// Whether atomlab runs natively here: under qemu-user (scripts/cross-test)
/// the limits would count and cut qemu's own threads (its RCU thread) and
/// stack (its translator runs on the main stack), not only atomlab's.
fn native(test: &str) -> bool {
    if atomlab_core::Machine::detect().emulated {
        eprintln!("{test}: skipped under qemu-user, whose own threads and stack the limits count");
        return false;
    }
    true
}

/// Whether this test process runs as root.
fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A user (and group) id no other process has, one per test process and
/// run (so that RLIMIT_NPROC, counted per user, counts only this run's
/// threads): high in the ids this user namespace maps (a container may map
/// only 0-65535), below the top 1,000 (nobody, 65534, sits there).
fn lone_id() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    // ORDERING: Relaxed: only distinct numbers are needed.
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 64;
    let top = ["/proc/self/uid_map", "/proc/self/gid_map"]
        .iter()
        .map(|f| mapped_top(f))
        .min()
        .unwrap_or(u32::MAX);
    let spread = (std::process::id() % 100) * 64 + k;
    top.min(2_000_000_000).saturating_sub(1_000 + spread)
}

/// The end of the first range of ids `map` (`/proc/self/uid_map`,
/// `user_namespaces(7)`: inside, outside, count per line) maps.
fn mapped_top(map: &str) -> u32 {
    let text = std::fs::read_to_string(map).unwrap_or_default();
    let mut nums = text.split_whitespace().map(|n| n.parse::<u64>().ok());
    match (nums.next().flatten(), nums.next(), nums.next().flatten()) {
        (Some(inside), Some(_), Some(count)) => {
            u32::try_from(inside.saturating_add(count)).unwrap_or(u32::MAX)
        }
        _ => u32::MAX,
    }
}

/// Runs the binary with `args` under `limit`, with the store in the shared
/// folder; kills it and fails the test if it has not ended by
/// [`DEADLINE`].
fn limited(limit: Limit, args: &[&str]) -> Output {
    let id = lone_id();
    let mut cmd = Command::new(shared_dir().join("atomlab"));
    cmd.args(args)
        .current_dir(shared_dir())
        .env("ATOMLAB_DB", shared_dir().join(format!("store-{id}.db")))
        .env_remove("ATOMLAB_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (resource, value) = match limit {
        Limit::Tasks(n) if root() => {
            cmd.uid(id).gid(id);
            (libc::RLIMIT_NPROC, n)
        }
        Limit::Tasks(_) => (libc::RLIMIT_NPROC, 1),
        Limit::Stack(bytes) => (libc::RLIMIT_STACK, bytes),
    };
    // SAFETY: the closure runs between fork and exec and calls only
    // setrlimit, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            if libc::setrlimit(resource, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("start atomlab under the limit");
    let began = Instant::now();
    loop {
        if let Some(_status) = child.try_wait().expect("wait for atomlab") {
            return child.wait_with_output().expect("atomlab's output");
        }
        if began.elapsed() > DEADLINE {
            let _ = child.kill();
            let out = child.wait_with_output().expect("atomlab's output");
            panic!(
                "atomlab {args:?} hung under the limit (killed after {} s): {}",
                DEADLINE.as_secs(),
                stderr(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run refused its threads as bad input: exit 2, a sentence that
/// names the limit, no panic.
fn assert_threads_refused(o: &Output, args: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains("cannot start thread") && err.contains("`ulimit -u`"),
        "{args:?}: {err}"
    );
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
}

/// Issue 33: `bench` panicked when the system refused a thread
/// (`std::thread::scope`'s spawn) and then hung, the threads already
/// started waiting at the start barrier for ever. Four threads where the
/// limit leaves room for two at most.
#[test]
fn bench_under_a_thread_limit_ends_with_a_message() {
    if !native("bench_under_a_thread_limit_ends_with_a_message") {
        return;
    }
    let args = [
        "--no-save",
        "bench",
        "counter",
        "--variant",
        "fetch_add",
        "--threads",
        "4",
        "-d",
        "0.05",
        "--warmup",
        "0.01",
        "--runs",
        "1",
    ];
    let o = limited(Limit::Tasks(3), &args);
    assert_threads_refused(&o, &args);
    assert!(
        stderr(&o).contains("bench counter fetch_add"),
        "{}",
        stderr(&o)
    );
}

/// The same in `bench lock`'s fixed work, whose workers wait for one
/// another at a barrier too.
#[test]
fn bench_fixed_work_under_a_thread_limit_ends_with_a_message() {
    if !native("bench_fixed_work_under_a_thread_limit_ends_with_a_message") {
        return;
    }
    let args = [
        "--no-save",
        "bench",
        "lock",
        "--variant",
        "tas",
        "--threads",
        "4",
        "--increments",
        "1000",
        "--runs",
        "1",
    ];
    assert_threads_refused(&limited(Limit::Tasks(3), &args), &args);
}

/// Issue 33: `stress` panicked (exit 101) when the system refused a
/// thread, or hung, the others spinning at the start line.
#[test]
fn stress_under_a_thread_limit_ends_with_a_message() {
    if !native("stress_under_a_thread_limit_ends_with_a_message") {
        return;
    }
    let args = [
        "--no-save",
        "stress",
        "mutex",
        "--variant",
        "tas",
        "--threads",
        "4",
        "--ops",
        "1000",
    ];
    let o = limited(Limit::Tasks(3), &args);
    assert_threads_refused(&o, &args);
    assert!(stderr(&o).contains("stress mutex tas"), "{}", stderr(&o));
}

/// `run` keeps doing what it did (issue 22), now through the same group.
#[test]
fn run_under_a_thread_limit_ends_with_a_message() {
    if !native("run_under_a_thread_limit_ends_with_a_message") {
        return;
    }
    let f = shared_file("many4.litmus", &many_threads(4));
    let args = ["--no-save", "run", "-s", "10", "-r", "2", &f];
    let o = limited(Limit::Tasks(3), &args);
    assert_threads_refused(&o, &args);
    assert!(stderr(&o).contains("nothing was run"), "{}", stderr(&o));
}

/// `check`'s workers wait for no one: when the system gives it no thread
/// at all, the tests are judged on the calling thread (it panicked in the
/// worker pool's spawn), and the run is saved (the git look-up beside the
/// command panicked too).
#[test]
fn check_without_threads_judges_on_the_calling_thread_and_saves() {
    if !native("check_without_threads_judges_on_the_calling_thread_and_saves") {
        return;
    }
    let a = shared_file(
        "mp-x86.litmus",
        &std::fs::read_to_string(golden("x86/MP.litmus")).unwrap(),
    );
    let b = shared_file(
        "mp.litmus",
        &std::fs::read_to_string(golden("c/MP+rel+acq.litmus")).unwrap(),
    );
    let args = ["check", "-j", "4", &a, &b];
    let o = limited(Limit::Tasks(1), &args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let out = text(&o.stdout);
    assert!(out.contains("MP ") && out.contains("MP+rel+acq"), "{out}");
}

/// Issue 33: under `ulimit -s 64` atomlab overflowed its main stack and
/// aborted (exit 134) before it had read its arguments: clap's derived
/// parsers take frames of 100-200 KiB in a debug build, the models' judges
/// 60-120 KiB. The work now runs on a thread with a stack of a known size,
/// and the exit codes are the usual ones.
#[test]
fn a_64_kib_main_stack_runs_and_checks_as_usual() {
    if !native("a_64_kib_main_stack_runs_and_checks_as_usual") {
        return;
    }
    let mp = shared_file(
        "mp-c11.litmus",
        &std::fs::read_to_string(golden("c/MP+rel+acq.litmus")).unwrap(),
    );
    let missing = shared_dir().join("no-such.litmus").display().to_string();
    for (args, code) in [
        (vec!["--no-save", "run", "-s", "10", "-r", "2", &mp], 0),
        (vec!["--no-save", "check", &mp], 0),
        (vec!["--no-save", "run", &missing], 2),
    ] {
        let o = limited(Limit::Stack(64 << 10), &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(!err.contains("overflow"), "{args:?}: {err}");
    }
}

/// `load`'s client threads: a refused one said only "client thread:
/// Resource temporarily unavailable"; now the sentence names the limit.
/// The target is a listener of this test's that never answers: the run
/// ends before any request could.
#[test]
fn load_under_a_thread_limit_names_the_limit() {
    if !native("load_under_a_thread_limit_names_the_limit") {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a local port");
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let args = [
        "--no-save",
        "load",
        "-t",
        "4",
        "-c",
        "4",
        "-d",
        "1",
        "--warmup",
        "0",
        &url,
    ];
    let o = limited(Limit::Tasks(3), &args);
    assert_threads_refused(&o, &args);
    drop(listener);
}
