//! Running a plugin's variant in a child process, so that its crash or
//! hang becomes a result for that variant and never takes the others down.
//!
//! The child is this same program, re-executed with the same arguments
//! and two environment variables: [`CHILD_ENV`] says which part of the run
//! it does (a cell or a variant, in the caller's words) and [`OUT_ENV`]
//! names the file it writes its records to (JSON, [`write_child_records`]).
//! The parent waits for it with `waitpid(2)` semantics (`Child::try_wait`),
//! and reads a death by signal from the wait status (`WIFSIGNALED`,
//! `WTERMSIG`; wait(2)). A child that has not finished after a bound is
//! killed with SIGKILL and reported as hung. Core dumps are turned off in
//! the child (`setrlimit(RLIMIT_CORE, 0)`, setrlimit(2)): a plugin's
//! expected crash must not litter the working directory.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use atomlab_core::Record;

/// Set in a child: what it is to run (the caller's words).
pub const CHILD_ENV: &str = "ATOMLAB_PLUGIN_CHILD";
/// Set in a child: the file its records go to.
pub const OUT_ENV: &str = "ATOMLAB_PLUGIN_OUT";

/// How a child ended.
#[derive(Debug)]
pub enum End {
    /// It finished: its records and exit code.
    Done(Vec<Record>, i32),
    /// A signal killed it.
    Crashed(i32),
    /// No result within the bound (seconds); it was killed.
    Hung(u64),
    /// It exited without writing records (code), e.g. a bad argument.
    NoRecords(i32),
}

/// What the current process is to run as a child, if it is one.
pub fn child_request() -> Option<String> {
    std::env::var(CHILD_ENV).ok()
}

/// Writes a child's records for its parent (call once, then exit).
pub fn write_child_records(records: &[Record]) -> std::io::Result<()> {
    let path = std::env::var_os(OUT_ENV).ok_or_else(|| {
        std::io::Error::other(format!("{OUT_ENV} is not set: not a plugin child"))
    })?;
    let json = serde_json::to_vec(records).map_err(std::io::Error::other)?;
    std::fs::write(path, json)
}

/// A signal's name, its words, and what it usually means for a plugin.
pub fn signal_words(sig: i32) -> (String, &'static str, &'static str) {
    let (name, words, hint) = match sig {
        libc::SIGSEGV => (
            "SIGSEGV",
            "segmentation fault",
            "the plugin read or wrote memory it does not own (a NULL or dangling pointer?)",
        ),
        libc::SIGILL => (
            "SIGILL",
            "illegal instruction",
            "this build needs an instruction the CPU lacks (LSE atomics on ARMv8.0? AVX on an older x86?)",
        ),
        libc::SIGBUS => (
            "SIGBUS",
            "bus error",
            "a misaligned or unmapped access (an atomic on a misaligned address?)",
        ),
        libc::SIGFPE => ("SIGFPE", "arithmetic exception", "a division by zero?"),
        libc::SIGABRT => ("SIGABRT", "abort", "the plugin or its C library called abort()"),
        libc::SIGKILL => ("SIGKILL", "killed", "killed from outside (out of memory?)"),
        other => return (format!("signal {other}"), "signal", ""),
    };
    (name.to_string(), words, hint)
}

/// Runs this program again with its own arguments as a child doing `what`,
/// waiting at most `bound` for it.
pub fn run_child(what: &str, bound: Duration) -> std::io::Result<End> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // ORDERING: Relaxed: only a unique number for the file name is needed.
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let out: PathBuf = std::env::temp_dir().join(format!(
        "atomlab-plugin-child-{}-{n}.json",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&out);
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    cmd.args(std::env::args_os().skip(1))
        .env(CHILD_ENV, what)
        .env(OUT_ENV, &out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    // SAFETY: the closure runs between fork and exec and calls only
    // setrlimit, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let zero = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &zero);
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if start.elapsed() >= bound {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_file(&out);
            return Ok(End::Hung(bound.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    if let Some(sig) = status.signal() {
        let _ = std::fs::remove_file(&out);
        return Ok(End::Crashed(sig));
    }
    let code = status.code().unwrap_or(-1);
    let records = std::fs::read(&out)
        .ok()
        .and_then(|b| serde_json::from_slice::<Vec<Record>>(&b).ok());
    let _ = std::fs::remove_file(&out);
    Ok(match records {
        Some(r) => End::Done(r, code),
        None => End::NoRecords(code),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_are_named_with_a_hint() {
        let (n, w, h) = signal_words(libc::SIGILL);
        assert_eq!((n.as_str(), w), ("SIGILL", "illegal instruction"));
        assert!(h.contains("LSE"));
        assert_eq!(signal_words(libc::SIGSEGV).0, "SIGSEGV");
        assert_eq!(signal_words(1000).0, "signal 1000");
    }
}
