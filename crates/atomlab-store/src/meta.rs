//! Who ran what, when and where: the facts about a run that the report
//! itself does not hold, and the run's id.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::StoreError;

/// How long `git rev-parse HEAD` may take before the commit is left out.
const GIT_TIMEOUT: Duration = Duration::from_secs(2);

/// The facts about one stored run besides its report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    /// The run's id: UTC start time and 8 random hex digits,
    /// `20261201-042207-3fa1c02e`. Sorts by time; any unique prefix names it.
    pub id: String,
    /// When the run started, in Unix seconds.
    pub started_unix: f64,
    /// The user's label (`--label`); a label may be shared by several shard
    /// runs from different machines.
    #[serde(default)]
    pub label: Option<String>,
    /// The subcommand (`bench`, `suite`…), the report's `command`.
    pub command: String,
    /// The whole command line, program name first, without passwords
    /// (see [`crate::redact_command_line`]); empty for a run imported from a
    /// bare `--json` document, which does not say.
    pub command_line: Vec<String>,
    /// The git commit of the directory the run started in, if it is in a
    /// git work tree.
    #[serde(default)]
    pub git_commit: Option<String>,
    /// The host name of the machine.
    pub host: String,
}

impl RunMeta {
    /// The facts about a run starting now: a new id, the start time, the
    /// host name and the git commit of the current directory (none when it
    /// is not in a git work tree, git is missing or slow; never an error).
    pub fn new(
        command: impl Into<String>,
        command_line: Vec<String>,
        label: Option<String>,
    ) -> RunMeta {
        RunMeta {
            git_commit: git_commit(),
            ..RunMeta::without_commit(command, command_line, label)
        }
    }

    /// As [`RunMeta::new`] but without asking git, which takes a process
    /// start: a command that runs for a while looks the commit up with
    /// [`git_commit`] on another thread meanwhile and sets it before saving.
    pub fn without_commit(
        command: impl Into<String>,
        command_line: Vec<String>,
        label: Option<String>,
    ) -> RunMeta {
        let started_unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        RunMeta {
            id: new_run_id(started_unix),
            started_unix,
            label,
            command: command.into(),
            // A password in `--store postgres://u:pw@…` is cut here, so it
            // is neither stored nor printed (the suite's report, `show`).
            command_line: crate::location::redact_command_line(&command_line),
            git_commit: None,
            host: hostname(),
        }
    }
}

/// A new run id for a run started at `started_unix`: `YYYYMMDD-HHMMSS-xxxxxxxx`
/// in UTC, `xxxxxxxx` random hex. Ids made by one process never repeat;
/// two processes starting in the same second collide with probability
/// 2^-32 (16 bits were too few: 800 `check` processes of a corpus run in
/// 30 s collided about one time in six).
pub fn new_run_id(started_unix: f64) -> String {
    let (y, mo, d, h, mi, s) = utc(started_unix.floor() as i64);
    format!(
        "{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}-{:08x}",
        random_suffix()
    )
}

/// 32 random bits: a per-process random start, stepped by an odd constant,
/// so one process's successive suffixes are all distinct modulo 2^32.
fn random_suffix() -> u32 {
    static START: OnceLock<u32> = OnceLock::new();
    static COUNT: AtomicU32 = AtomicU32::new(0);
    let start = *START.get_or_init(|| {
        let mut h = RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        if let Ok(d) = SystemTime::now().duration_since(UNIX_EPOCH) {
            h.write_u128(d.as_nanos());
        }
        h.finish() as u32
    });
    // ORDERING: Relaxed: only distinctness of the counter's values matters.
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    start.wrapping_add(n.wrapping_mul(0x9e37_79b9))
}

/// Checks that a run id can be typed back: 1 to 64 of `[A-Za-z0-9._-]`.
pub(crate) fn check_run_id(id: &str) -> Result<(), StoreError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidRunId { id: id.to_string() })
    }
}

/// Year, month, day, hour, minute, second of a Unix time, in UTC (Howard
/// Hinnant's days-to-civil algorithm).
fn utc(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        month,
        day,
        (rem / 3600) as u32,
        (rem / 60 % 60) as u32,
        (rem % 60) as u32,
    )
}

/// The machine's host name, `unknown` when it cannot be read.
fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its whole length, which is passed.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
        if !name.is_empty() {
            return name;
        }
    }
    "unknown".to_string()
}

/// `git rev-parse HEAD` in the current directory, or `None` if it fails,
/// prints no commit hash, or takes longer than `GIT_TIMEOUT`.
/// The git commit of the current directory, or none when it is not in a git
/// work tree. Read from the repository's files (HEAD, the ref it names,
/// packed-refs; a worktree's `.git` file) in well under a millisecond; only
/// a layout this does not know (a reftable repository) costs a `git
/// rev-parse HEAD`, which gets 2 s.
pub fn git_commit() -> Option<String> {
    match read_head() {
        Some(Head::Commit(c)) => Some(c),
        Some(Head::Unknown) => git_rev_parse(),
        None => None,
    }
}

enum Head {
    Commit(String),
    Unknown,
}

fn is_hash(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// HEAD's commit from the files of the repository around the current
/// directory; `None` outside a repository.
fn read_head() -> Option<Head> {
    let mut dir = std::env::current_dir().ok()?;
    let git_dir = loop {
        let dot = dir.join(".git");
        if dot.is_dir() {
            break dot;
        }
        if dot.is_file() {
            // A worktree or submodule: `gitdir: PATH`.
            let text = std::fs::read_to_string(&dot).ok()?;
            let path = text.strip_prefix("gitdir:")?.trim();
            break dir.join(path);
        }
        if !dir.pop() {
            return None;
        }
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    if is_hash(head) {
        return Some(Head::Commit(head.to_ascii_lowercase()));
    }
    let Some(name) = head.strip_prefix("ref:").map(str::trim) else {
        return Some(Head::Unknown);
    };
    // A worktree keeps its HEAD apart but shares refs with the main
    // repository (`commondir`).
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .map(|c| git_dir.join(c.trim()))
        .unwrap_or_else(|_| git_dir.clone());
    for base in [&git_dir, &common] {
        if let Ok(v) = std::fs::read_to_string(base.join(name)) {
            let v = v.trim();
            return Some(if is_hash(v) {
                Head::Commit(v.to_ascii_lowercase())
            } else {
                Head::Unknown
            });
        }
    }
    if let Ok(packed) = std::fs::read_to_string(common.join("packed-refs")) {
        for line in packed.lines() {
            if let Some((hash, r)) = line.split_once(' ') {
                if r == name && is_hash(hash) {
                    return Some(Head::Commit(hash.to_ascii_lowercase()));
                }
            }
        }
    }
    // A branch with no commit yet, or refs this reader does not know.
    Some(Head::Unknown)
}

fn git_rev_parse() -> Option<String> {
    let mut child = Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + GIT_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    if !status.success() {
        return None;
    }
    // A hash is a few dozen bytes: it fit in the pipe before git exited.
    let mut out = String::new();
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    let hash = out.trim();
    is_hash(hash).then(|| hash.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file reader agrees with git itself (the tests run inside the
    /// repository: a clone, a worktree, or a tree without git, where both
    /// say nothing).
    #[test]
    fn head_read_from_files_is_git_s_head() {
        let from_git = git_rev_parse();
        match read_head() {
            Some(Head::Commit(c)) => assert_eq!(Some(c), from_git),
            Some(Head::Unknown) => {}
            None => assert_eq!(from_git, None),
        }
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), (1970, 1, 1, 0, 0, 0));
        // 2026-12-01T04:22:07Z
        assert_eq!(utc(1_796_098_927), (2026, 12, 1, 4, 22, 7));
        // 2000-02-29T23:59:59Z, a leap day of a century leap year.
        assert_eq!(utc(951_868_799), (2000, 2, 29, 23, 59, 59));
        assert_eq!(utc(-1), (1969, 12, 31, 23, 59, 59));
    }

    #[test]
    fn ids_sort_by_time_and_are_distinct() {
        let a = new_run_id(1_796_098_927.5);
        assert!(a.starts_with("20261201-042207-"), "{a}");
        assert_eq!(a.len(), "20261201-042207-3fa1c02e".len());
        check_run_id(&a).unwrap();
        let b = new_run_id(1_796_098_928.0);
        assert!(a < b);
        let ids: std::collections::HashSet<String> =
            (0..1000).map(|_| new_run_id(1_796_098_927.0)).collect();
        assert_eq!(ids.len(), 1000);
    }

    #[test]
    fn run_ids_must_be_typable() {
        for bad in ["", "a b", "x;drop", "é", &"a".repeat(65)] {
            assert!(check_run_id(bad).is_err(), "{bad:?}");
        }
        check_run_id("imported.1_a-B").unwrap();
    }

    #[test]
    fn new_meta_has_host_and_time() {
        let m = RunMeta::new("bench", vec!["atomlab".into(), "bench".into()], None);
        assert!(!m.host.is_empty());
        assert!(m.started_unix > 1.6e9);
        if let Some(c) = &m.git_commit {
            assert!(c.len() == 40 || c.len() == 64, "{c}");
        }
    }
}
