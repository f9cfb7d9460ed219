//! Loading a plugin in a child process first: its constructors and
//! `atomlab_plugin()` are the plugin's own code, run before any check of
//! ours can help. A constructor that dereferences NULL, calls `exit(0)`,
//! sleeps, or prints to standard output would otherwise kill atomlab
//! with no word, end it with exit 0 and nothing run (a CI gate passes),
//! hang it, or corrupt its `--json`.
//!
//! The child is this program started again with no arguments and
//! [`PROBE_ENV`] naming the file; [`crate::probe_answer`], called first
//! thing in `main`, loads it there and writes what it
//! found (the description's checks passed, or the error) to a file in a
//! private directory ([`crate::isolate::PrivateDir`]). The parent waits
//! at most [`LOAD_BOUND`]; a death by a signal, an exit without an
//! answer, or no answer in time is the plugin's error, naming the file.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use crate::error::PluginError;
use crate::isolate::{signal_words, spawn_self, wait_bounded, PrivateDir, Waited, OUT_ENV};

/// Set in a probe child: the plugin file to load.
pub(crate) const PROBE_ENV: &str = "ATOMLAB_PLUGIN_PROBE";

/// How long loading a plugin may take: constructors and `atomlab_plugin()`
/// do next to nothing in a well-behaved plugin.
pub(crate) const LOAD_BOUND: Duration = Duration::from_secs(10);

/// Loads the plugin at `path` (canonically `abs`) in a child process and
/// returns its error, if loading it there failed in any way.
pub(crate) fn probe(path: &Path, abs: &Path) -> Result<(), PluginError> {
    let fail = |what: String| PluginError {
        path: path.to_path_buf(),
        what,
    };
    if std::env::var_os(PROBE_ENV).is_some() {
        return Err(fail("a probe child cannot load another plugin".into()));
    }
    let dir = PrivateDir::new().map_err(|e| {
        fail(format!(
            "cannot make a private directory to load it from: {e}"
        ))
    })?;
    let out = dir.path().join("answer");
    let file = OsString::from(abs);
    let out_env = out.clone().into_os_string();
    let mut child = spawn_self(false, &[(PROBE_ENV, &file), (OUT_ENV, &out_env)])
        .map_err(|e| fail(format!("cannot start a child process to load it in: {e}")))?;
    let status = match wait_bounded(&mut child, LOAD_BOUND)
        .map_err(|e| fail(format!("waiting for the child process that loads it: {e}")))?
    {
        Waited::Ended(s) => s,
        Waited::TimedOut => {
            return Err(fail(format!(
                "no answer in {} s while loading it (a constructor or atomlab_plugin() that does not return? it was killed)",
                LOAD_BOUND.as_secs()
            )))
        }
    };
    if let Some(sig) = status.signal() {
        let (name, words, hint) = signal_words(sig);
        let hint = if hint.is_empty() {
            String::new()
        } else {
            format!(": {hint}")
        };
        return Err(fail(format!(
            "crashed ({name}, {words}) while loading, in its constructors or atomlab_plugin(){hint}"
        )));
    }
    match std::fs::read_to_string(&out) {
        Ok(a) if a.starts_with("ok ") => Ok(()),
        Ok(a) if a.starts_with("error ") => Err(fail(a["error ".len()..].to_string())),
        _ => Err(fail(format!(
            "exited with code {} while loading, before atomlab_plugin() answered (a constructor that calls exit()?)",
            status.code().unwrap_or(-1)
        ))),
    }
}

/// Standard output sent to /dev/null while it lives: the plugin's
/// constructors and entry point run in atomlab's own process, and whatever
/// they print must not land in its `--json`. C's buffered output is
/// flushed (`fflush(NULL)`) before the descriptor is given back.
pub(crate) struct StdoutSilenced(Option<libc::c_int>);

impl StdoutSilenced {
    pub(crate) fn new() -> StdoutSilenced {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        // SAFETY: dup, open and dup2 on descriptors this process owns; on
        // any failure stdout is left as it was.
        unsafe {
            let saved = libc::dup(1);
            if saved < 0 {
                return StdoutSilenced(None);
            }
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if null < 0 || libc::dup2(null, 1) < 0 {
                if null >= 0 {
                    libc::close(null);
                }
                libc::close(saved);
                return StdoutSilenced(None);
            }
            libc::close(null);
            StdoutSilenced(Some(saved))
        }
    }
}

impl Drop for StdoutSilenced {
    fn drop(&mut self) {
        if let Some(saved) = self.0.take() {
            // SAFETY: flushes every C stream, then puts the saved
            // descriptor back on 1 and closes the copy.
            unsafe {
                libc::fflush(std::ptr::null_mut());
                libc::dup2(saved, 1);
                libc::close(saved);
            }
        }
    }
}
