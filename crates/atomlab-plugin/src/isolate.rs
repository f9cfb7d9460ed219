//! Running a plugin's variant in a child process, so that its crash or
//! hang becomes a result for that variant and never takes the others down.
//!
//! The child is this same program, re-executed with the same arguments
//! and two environment variables: [`CHILD_ENV`] says which part of the run
//! it does (a cell or a variant, in the caller's words) and [`OUT_ENV`]
//! names the file it writes its records to (JSON, [`write_child_records`]).
//! That file lies in a directory made for the one child by `mkdtemp(3)`
//! (mode 0700, a name no other user can guess or plant a symbolic link
//! at beforehand), removed when the child is done.
//!
//! The child dies with its parent: `prctl(PR_SET_PDEATHSIG, SIGKILL)`
//! (prctl(2)) between fork and exec, then a check that the parent is
//! still the one that forked it (it may have died before the call). The
//! signal is sent when the *thread* that forked exits; every caller here
//! waits for its child on that thread, so it outlives the child.
//! The parent waits for it with `waitpid(2)` semantics (`Child::try_wait`),
//! and reads a death by signal from the wait status (`WIFSIGNALED`,
//! `WTERMSIG`; wait(2)). A child that has not finished after a bound is
//! killed with SIGKILL and reported as hung. Core dumps are turned off in
//! the child (`setrlimit(RLIMIT_CORE, 0)`, setrlimit(2)): a plugin's
//! expected crash must not litter the working directory.

use std::ffi::OsString;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
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

/// A directory only this user can enter, made by `mkdtemp(3)` under the
/// temporary directory, removed with what is in it when dropped.
pub struct PrivateDir(PathBuf);

impl PrivateDir {
    /// A new one, `$TMPDIR/atomlab-XXXXXX`.
    pub fn new() -> std::io::Result<PrivateDir> {
        let template = std::env::temp_dir().join("atomlab-XXXXXX");
        let mut bytes = template.into_os_string().into_encoded_bytes();
        bytes.push(0);
        // SAFETY: a NUL-terminated, writable template ending in six X's;
        // mkdtemp replaces them in place and creates the directory with
        // mode 0700, failing rather than following anything already there.
        let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        bytes.pop();
        // SAFETY: the bytes came from an OsString and mkdtemp wrote only
        // ASCII letters and digits over the X's.
        let path = unsafe { OsString::from_encoded_bytes_unchecked(bytes) };
        Ok(PrivateDir(PathBuf::from(path)))
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
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

/// What a child that exited with `code` and no result did, in words.
pub fn exited_words(code: i32) -> String {
    if code == 0 {
        "exited with code 0 without a result: the plugin called exit()?".to_string()
    } else {
        format!("exited with code {code} without a result (the plugin called exit({code}), or a resource limit ended it: its error, if any, is above)")
    }
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
        libc::SIGTERM => ("SIGTERM", "terminated", "terminated from outside (a time limit, or a user's kill)"),
        libc::SIGINT => ("SIGINT", "interrupted", "interrupted from the terminal (Ctrl-C)"),
        libc::SIGHUP => ("SIGHUP", "hang-up", "the terminal or session went away"),
        libc::SIGQUIT => ("SIGQUIT", "quit", "quit from the terminal (Ctrl-\\)"),
        libc::SIGTRAP => ("SIGTRAP", "trace trap", "a breakpoint or __builtin_trap() in the plugin"),
        libc::SIGSYS => ("SIGSYS", "bad system call", "a seccomp filter refused one of the plugin's system calls"),
        libc::SIGPIPE => ("SIGPIPE", "broken pipe", "the plugin wrote to a pipe nobody reads"),
        libc::SIGALRM => ("SIGALRM", "alarm clock", "the plugin set an alarm(2) and did not handle it"),
        libc::SIGXCPU => ("SIGXCPU", "CPU time limit exceeded", "the CPU time limit (ulimit -t) ran out"),
        libc::SIGXFSZ => ("SIGXFSZ", "file size limit exceeded", "a file grew past the file size limit (ulimit -f)"),
        libc::SIGUSR1 => ("SIGUSR1", "user signal 1", "sent from outside, or by the plugin itself"),
        libc::SIGUSR2 => ("SIGUSR2", "user signal 2", "sent from outside, or by the plugin itself"),
        libc::SIGVTALRM => ("SIGVTALRM", "virtual timer expired", "the plugin set a timer and did not handle it"),
        libc::SIGPROF => ("SIGPROF", "profiling timer expired", "a profiler's timer, not handled"),
        other => return (format!("signal {other}"), "an unnamed signal", ""),
    };
    (name.to_string(), words, hint)
}

/// This program, started again as a child: with its own arguments when
/// `same_args`, else none; `env` added to its environment; stdin and
/// stdout on /dev/null (a plugin that prints cannot corrupt the parent's
/// `--json`), stderr shared; no core dumps; killed when this process dies.
pub(crate) fn spawn_self(same_args: bool, env: &[(&str, &OsString)]) -> std::io::Result<Child> {
    let exe = std::env::current_exe()?;
    let mut cmd = Command::new(exe);
    if same_args {
        cmd.args(std::env::args_os().skip(1));
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    // The plugin files already read, so that the child need not read them
    // again (a 500 MB file hashed twice ate a variant's time bound).
    cmd.env(crate::file::SHA256_ENV, crate::file::sha256_env_now());
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    // SAFETY: getpid is async-signal-safe; read before the fork.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and calls only
    // setrlimit, prctl and getppid, which are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let zero = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &zero);
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died between fork and prctl.
                if libc::getppid() != parent {
                    return Err(std::io::Error::other(
                        "the parent died before the child began",
                    ));
                }
            }
            let _ = parent;
            Ok(())
        });
    }
    cmd.spawn()
}

/// How a waited-for child ended.
pub(crate) enum Waited {
    /// It exited or was killed: its status.
    Ended(ExitStatus),
    /// Still running after the bound: killed (SIGKILL) and reaped.
    TimedOut,
}

/// Waits for `child` at most `bound`; kills and reaps it after that.
pub(crate) fn wait_bounded(child: &mut Child, bound: Duration) -> std::io::Result<Waited> {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Waited::Ended(s));
        }
        if start.elapsed() >= bound {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Waited::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs this program again with its own arguments as a child doing `what`,
/// waiting at most `bound` for it.
pub fn run_child(what: &str, bound: Duration) -> std::io::Result<End> {
    let dir = PrivateDir::new()?;
    let out = dir.path().join("records.json");
    let what = OsString::from(what);
    let out_env = out.clone().into_os_string();
    let mut child = spawn_self(true, &[(CHILD_ENV, &what), (OUT_ENV, &out_env)])?;
    let status = match wait_bounded(&mut child, bound)? {
        Waited::Ended(s) => s,
        Waited::TimedOut => return Ok(End::Hung(bound.as_secs())),
    };
    if let Some(sig) = status.signal() {
        return Ok(End::Crashed(sig));
    }
    let code = status.code().unwrap_or(-1);
    let records = std::fs::read(&out)
        .ok()
        .and_then(|b| serde_json::from_slice::<Vec<Record>>(&b).ok());
    Ok(match records {
        Some(r) => End::Done(r, code),
        None => End::NoRecords(code),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The child's result file was `$TMPDIR/atomlab-plugin-child-PID-N.json`,
    /// where another user could plant a symbolic link beforehand: each is
    /// now in a fresh directory of mode 0700 with an unguessable name.
    #[test]
    fn a_private_dir_is_new_unguessable_and_ours_alone() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let a = PrivateDir::new().unwrap();
        let b = PrivateDir::new().unwrap();
        assert_ne!(a.path(), b.path());
        let m = std::fs::symlink_metadata(a.path()).unwrap();
        assert!(m.is_dir() && !m.file_type().is_symlink());
        assert_eq!(m.permissions().mode() & 0o777, 0o700);
        // SAFETY: getuid has no preconditions.
        assert_eq!(m.uid(), unsafe { libc::getuid() });
        let name = a.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("atomlab-") && !name.contains("XXXXXX"),
            "{name}"
        );
        assert!(!name.contains(&std::process::id().to_string()), "{name}");
        let p = a.path().to_path_buf();
        drop(a);
        assert!(!p.exists());
    }

    #[test]
    fn signals_are_named_with_a_hint() {
        let (n, w, h) = signal_words(libc::SIGILL);
        assert_eq!((n.as_str(), w), ("SIGILL", "illegal instruction"));
        assert!(h.contains("LSE"));
        assert_eq!(signal_words(libc::SIGSEGV).0, "SIGSEGV");
        assert_eq!(signal_words(1000).0, "signal 1000");
        // Were "signal 15 (signal)".
        assert_eq!(signal_words(libc::SIGTERM).0, "SIGTERM");
        assert_eq!(signal_words(libc::SIGXFSZ).1, "file size limit exceeded");
    }
}
