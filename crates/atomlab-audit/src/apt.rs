//! Fetching Debian packages to audit: `atomlab audit --apt PKG…`.
//!
//! A distribution maintainer asks about packages by name, not by file. This
//! module runs Debian's own `apt-get download` (apt-get(8)) for a chosen
//! architecture (arm64 by default) into a cache directory, with apt's state
//! (package lists, its cache) kept inside that directory, so no root, no
//! `dpkg --add-architecture` and no change to the system's apt are needed:
//! the system's sources (`/etc/apt/sources.list.d`) and keyrings are read,
//! nothing of the system's is written.
//!
//! `apt-get download --print-uris` (asked from an empty directory: it
//! leaves out a file already in the current one) names the file each
//! package will be saved as, and refuses the whole list when one name is unknown; then each
//! name is asked alone, so that an unknown or virtual package gets one line
//! and the rest are still fetched. apt-get itself verifies every download's
//! hash and leaves a file it already has in place, so a second run fetches
//! nothing.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

/// Package lists older than this are fetched again.
const LISTS_MAX_AGE: Duration = Duration::from_secs(24 * 3600);

/// What `--apt` is asked for.
#[derive(Debug, Clone)]
pub struct AptRequest {
    /// Package names (`nginx-light`, `libatomic1`; `name=version` as apt
    /// takes it).
    pub packages: Vec<String>,
    /// The Debian architecture (`arm64`).
    pub arch: String,
    /// The cache directory: `lists/` and `cache/` for apt's state, `debs/`
    /// for the packages.
    pub cache: PathBuf,
    /// The apt-get program (`apt-get` on PATH).
    pub apt_get: PathBuf,
}

/// A package apt could not give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AptMiss {
    /// The name asked for.
    pub package: String,
    /// apt's reason (its `E:` lines).
    pub reason: String,
}

impl AptMiss {
    /// The miss as an audit error: one line naming the package, and the
    /// rest of the audit goes on.
    pub fn into_error(self) -> crate::AuditError {
        crate::AuditError::NotFetched {
            path: self.package,
            reason: self.reason,
        }
    }
}

/// Where packages for `arch` are kept when no cache directory is given:
/// `$XDG_CACHE_HOME/atomlab/apt-ARCH`, else `~/.cache/atomlab/apt-ARCH`
/// (the XDG base directory specification); `None` when neither variable
/// is set to something.
pub fn default_cache(arch: &str) -> Option<PathBuf> {
    cache_under(
        std::env::var_os("XDG_CACHE_HOME"),
        std::env::var_os("HOME"),
        arch,
    )
}

/// [`default_cache`] from the two variables' values.
fn cache_under(
    xdg_cache_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
    arch: &str,
) -> Option<PathBuf> {
    xdg_cache_home
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            home.filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .map(|c| c.join("atomlab").join(format!("apt-{arch}")))
}

/// What `--apt` fetched.
#[derive(Debug, Default)]
pub struct AptFetch {
    /// The .deb files, in the order the packages were asked for.
    pub debs: Vec<PathBuf>,
    /// The packages apt could not give, in the same order.
    pub missed: Vec<AptMiss>,
    /// Whether the package lists were fetched in this call.
    pub updated_lists: bool,
}

/// Why nothing could be fetched.
#[derive(Debug, thiserror::Error)]
pub enum AptError {
    /// apt-get cannot be run.
    #[error("cannot run {program}: {source} (fetching packages by name needs Debian's apt-get)")]
    NoAptGet {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The cache directory cannot be made or written.
    #[error("{path}: cannot use as the package cache: {source}")]
    Cache {
        /// The directory.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// apt-get failed as a whole (the lists could not be fetched, the
    /// network is down, the downloads failed).
    #[error("`apt-get {step}` failed (exit {code}): {reason}")]
    Apt {
        /// The step (`update`, `download`).
        step: &'static str,
        /// apt-get's exit code, or `signal`.
        code: String,
        /// apt's `E:` lines, or its last lines of output.
        reason: String,
    },
    /// Nothing was asked for.
    #[error("no package names given")]
    NoPackages,
    /// A name that is not a Debian package name (it could be read by
    /// apt-get as an option: `-cFILE`, `-oKEY=VALUE`).
    #[error("--apt '{name}': {why}")]
    BadName {
        /// The name as given, shown with control characters escaped and cut.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// An architecture that is not a Debian architecture name.
    #[error("--apt-arch '{arch}': not a Debian architecture name (lowercase letters, digits and '-', e.g. arm64, riscv64, armhf)")]
    BadArch {
        /// The name as given, shown with control characters escaped and cut.
        arch: String,
    },
}

/// Whether `s` is a Debian package name: at least two characters of
/// lowercase letters, digits, `+`, `-` and `.`, starting with a letter or
/// digit (Debian Policy 5.6.1, "Source"/"Package").
fn is_package_name(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2
        && b[0].is_ascii_lowercase() | b[0].is_ascii_digit()
        && b.iter().all(|&c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.')
        })
}

/// Whether `s` is a Debian architecture name (`arm64`, `riscv64`,
/// `linux-any` aside: a concrete one, as dpkg-architecture(1) lists).
fn is_arch_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 32
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
}

/// Whether `s` is a Debian version: `[epoch:]upstream[-revision]` of
/// letters, digits and `.+~-:` starting with a digit (Debian Policy 5.6.12).
fn is_version(s: &str) -> bool {
    s.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && s.len() <= 256
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'~' | b'-' | b':'))
}

/// Whether `s` is a release or suite name (`bookworm`, `stable`,
/// `bookworm-backports`) as apt's `/RELEASE` takes it.
fn is_release(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.as_bytes()[0].is_ascii_alphanumeric()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_'))
}

/// Checks one `--apt` name: a Debian package name, optionally followed by
/// `:ARCH`, then `=VERSION` or `/RELEASE`, as apt-get(8) takes them.
/// Anything else is refused before apt-get runs: a name starting with `-`
/// would be one of apt-get's options (`-c FILE` reads a configuration
/// that can name programs for apt to run).
pub fn check_package_name(spec: &str) -> Result<(), AptError> {
    let bad = |why: &str| AptError::BadName {
        name: atomlab_core::text::shown(spec, 80),
        why: why.to_string(),
    };
    if spec.starts_with('-') {
        return Err(bad(
            "starts with '-', which apt-get would read as an option: give package names only (Debian's names are lowercase letters, digits, '+', '-' and '.', starting with a letter or digit)",
        ));
    }
    let (rest, version, release) = match (spec.split_once('='), spec.split_once('/')) {
        (Some((n, v)), None) => (n, Some(v), None),
        (None, Some((n, r))) => (n, None, Some(r)),
        (None, None) => (spec, None, None),
        (Some(_), Some(_)) => return Err(bad("give either =VERSION or /RELEASE, not both")),
    };
    let (name, arch) = match rest.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (rest, None),
    };
    if !is_package_name(name) {
        return Err(bad(
            "not a Debian package name (at least two lowercase letters, digits, '+', '-' or '.', starting with a letter or digit; optionally :ARCH, =VERSION or /RELEASE)",
        ));
    }
    if arch.is_some_and(|a| !is_arch_name(a)) {
        return Err(bad(
            "the part after ':' is not an architecture name (arm64, riscv64…)",
        ));
    }
    if version.is_some_and(|v| !is_version(v)) {
        return Err(bad(
            "the part after '=' is not a Debian version (it starts with a digit: 1.22.1-9)",
        ));
    }
    if release.is_some_and(|r| !is_release(r)) {
        return Err(bad(
            "the part after '/' is not a release name (bookworm, stable…)",
        ));
    }
    Ok(())
}

impl AptRequest {
    /// The options that keep apt's state in the cache and select the
    /// architecture; the system's sources and keyrings are still read.
    fn options(&self) -> Vec<String> {
        let c = self.cache.display();
        let mut o = vec![
            format!("Dir::State::Lists={c}/lists"),
            format!("Dir::Cache={c}/cache"),
            format!("Dir::State::status={c}/status"),
            format!("APT::Architecture={}", self.arch),
            format!("APT::Architectures::={}", self.arch),
            // The lock files are apt's own, inside the cache.
            "Debug::NoLocking=1".to_string(),
        ];
        if running_as_root() {
            // apt drops to its `_apt` user to download, which cannot write
            // into a directory root made (a warning on every run).
            o.push("APT::Sandbox::User=root".to_string());
        }
        o.into_iter().flat_map(|x| ["-o".to_string(), x]).collect()
    }

    fn command(&self, args: &[&str], dir: &Path) -> Result<Command, AptError> {
        let mut c = Command::new(self.program()?);
        c.arg("-q")
            .args(self.options())
            .args(args)
            .current_dir(dir)
            .env("LC_ALL", "C");
        Ok(c)
    }

    fn no_apt_get(&self, source: std::io::Error) -> AptError {
        AptError::NoAptGet {
            program: self.apt_get.display().to_string(),
            source,
        }
    }

    fn apt(&self, args: &[&str], dir: &Path) -> Result<Output, AptError> {
        self.command(args, dir)?
            .output()
            .map_err(|e| self.no_apt_get(e))
    }

    /// [`AptRequest::apt`], calling `line` with each line apt prints on
    /// stdout as it prints it (its output is still returned whole).
    fn apt_lines(
        &self,
        args: &[&str],
        dir: &Path,
        line: &mut dyn FnMut(&str),
    ) -> Result<Output, AptError> {
        let mut child = self
            .command(args, dir)?
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.no_apt_get(e))?;
        let (Some(out), Some(mut err)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(self.no_apt_get(std::io::Error::other("no pipes to apt-get")));
        };
        // stderr on a thread of its own, so that neither pipe fills while
        // the other is read.
        let stderr = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = err.read_to_end(&mut buf);
            buf
        });
        let mut stdout = Vec::new();
        let mut reader = std::io::BufReader::new(out);
        let mut l = Vec::new();
        while reader.read_until(b'\n', &mut l).is_ok_and(|n| n > 0) {
            line(String::from_utf8_lossy(&l).trim_end());
            stdout.append(&mut l);
        }
        let status = child.wait().map_err(|e| self.no_apt_get(e))?;
        Ok(Output {
            status,
            stdout,
            stderr: stderr.join().unwrap_or_default(),
        })
    }

    /// The apt-get to run: `apt_get` itself when it names a path, else
    /// the first executable of that name on PATH. Looked up here rather
    /// than left to exec, so that a missing apt-get is said as such even
    /// where exec's failure does not come back intact (under qemu-user a
    /// failed exec looked like an apt-get that printed nothing).
    fn program(&self) -> Result<PathBuf, AptError> {
        let missing = |why: &str| AptError::NoAptGet {
            program: self.apt_get.display().to_string(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, why.to_string()),
        };
        if self.apt_get.components().count() > 1 {
            return if is_executable(&self.apt_get) {
                Ok(self.apt_get.clone())
            } else {
                Err(missing("no such executable file"))
            };
        }
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(&self.apt_get))
            .find(|p| is_executable(p))
            .ok_or_else(|| missing("not found on PATH"))
    }

    fn debs_dir(&self) -> PathBuf {
        self.cache.join("debs")
    }
}

/// Fetches `req.packages` (the lists first, when absent or a day old).
pub fn fetch(req: &AptRequest) -> Result<AptFetch, AptError> {
    fetch_with(req, &mut |_| {})
}

/// [`fetch`], telling `progress` where it is ([`atomlab_core::progress`]):
/// a note when another atomlab holds the cache, a status line while the
/// lists are fetched, then a batch of the packages apt will give, each
/// counted as apt starts its download.
pub fn fetch_with(
    req: &AptRequest,
    progress: atomlab_core::progress::Sink<'_>,
) -> Result<AptFetch, AptError> {
    use atomlab_core::progress::Event;
    if req.packages.is_empty() {
        return Err(AptError::NoPackages);
    }
    // Every name is checked before apt-get runs at all, and every apt-get
    // call below puts `--` before them too: neither a name nor the
    // architecture ever reaches apt-get as an option.
    for p in &req.packages {
        check_package_name(p)?;
    }
    if !is_arch_name(&req.arch) {
        return Err(AptError::BadArch {
            arch: atomlab_core::text::shown(&req.arch, 40),
        });
    }
    // apt reads a relative Dir::State::Lists under its own /var/lib/apt,
    // and apt-get runs in other directories than ours: the cache's path
    // is made absolute first.
    let absolute = AptRequest {
        cache: std::path::absolute(&req.cache).map_err(|source| AptError::Cache {
            path: req.cache.display().to_string(),
            source,
        })?,
        ..req.clone()
    };
    let req = &absolute;
    for d in [
        req.cache.join("lists/partial"),
        req.cache.join("cache/archives/partial"),
        req.debs_dir(),
    ] {
        std::fs::create_dir_all(&d).map_err(|source| AptError::Cache {
            path: d.display().to_string(),
            source,
        })?;
    }
    // apt's own locks are off (Debug::NoLocking above: they are the
    // system's, under /var), so two atomlab runs sharing this cache take
    // turns, each holding an exclusive lock on a file of the cache from the
    // lists to the last download (the lock goes with the file, when this
    // function returns or the process dies). Without it the second
    // `apt-get update` deleted the first one's partial lists and both
    // failed.
    let lock_path = req.cache.join("atomlab.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|source| AptError::Cache {
            path: lock_path.display().to_string(),
            source,
        })?;
    if lock.try_lock().is_err() {
        progress(Event::Note(&format!(
            "audit: another atomlab is fetching into {}; waiting for it",
            req.cache.display()
        )));
        lock.lock().map_err(|source| AptError::Cache {
            path: lock_path.display().to_string(),
            source,
        })?;
    }
    let status = req.cache.join("status");
    if !status.exists() {
        std::fs::write(&status, b"").map_err(|source| AptError::Cache {
            path: status.display().to_string(),
            source,
        })?;
    }
    let stamp = req.cache.join("lists/.atomlab-updated");
    let fresh = std::fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age < LISTS_MAX_AGE);
    let mut out = AptFetch::default();
    if !fresh {
        progress(Event::Status("audit: fetching the package lists"));
        let o = req.apt(&["update"], &req.cache)?;
        if !o.status.success() || has_errors(&o) {
            return Err(failed("update", &o));
        }
        // A stamp of our own: apt touches its lists only when they change.
        let _ = std::fs::write(&stamp, b"");
        out.updated_lists = true;
    }
    // Which file each package becomes; a name apt does not know spoils the
    // whole list, so then each is asked alone.
    let mut files: Vec<(String, String)> = Vec::new();
    let mut names: Vec<&str> = req.packages.iter().map(String::as_str).collect();
    names.dedup();
    // apt prints no URI for a file already in the current directory, so
    // the names are asked from an empty one.
    let ask = req.cache.join("print-uris");
    let _ = std::fs::remove_dir_all(&ask);
    std::fs::create_dir_all(&ask).map_err(|source| AptError::Cache {
        path: ask.display().to_string(),
        source,
    })?;
    let mut all = vec!["download", "--print-uris", "--"];
    all.extend(&names);
    let o = req.apt(&all, &ask)?;
    if o.status.success() {
        files = assign(&names, &stdout_files(&o));
    } else {
        for name in &names {
            let o = req.apt(&["download", "--print-uris", "--", name], &ask)?;
            if o.status.success() {
                files.extend(assign(&[name], &stdout_files(&o)));
            } else {
                out.missed.push(AptMiss {
                    package: name.to_string(),
                    reason: reason(&o),
                });
            }
        }
    }
    if files.is_empty() {
        return Ok(out);
    }
    let mut get = vec!["download", "--"];
    get.extend(files.iter().map(|(n, _)| n.as_str()));
    let total = files.len();
    // apt passes over a file it already has, saying nothing.
    let mut fetched = files
        .iter()
        .filter(|(_, f)| req.debs_dir().join(f).is_file())
        .count();
    const LABEL: &str = "apt-get download";
    progress(Event::Begin {
        total,
        what: "packages fetched",
    });
    progress(Event::At {
        done: fetched,
        label: LABEL,
    });
    let o = req.apt_lines(&get, &req.debs_dir(), &mut |line| {
        if line.starts_with("Get:") && fetched < total {
            fetched += 1;
            progress(Event::At {
                done: fetched,
                label: LABEL,
            });
        }
    });
    progress(Event::End);
    let o = o?;
    if !o.status.success() {
        return Err(failed("download", &o));
    }
    out.debs = files
        .into_iter()
        .map(|(_, f)| req.debs_dir().join(f))
        .collect();
    Ok(out)
}

/// Pairs each asked name with the file apt will save it as: the file whose
/// name is the package's (before the first `_`; a `name=version` asks for
/// `name`).
fn assign(names: &[&str], files: &[String]) -> Vec<(String, String)> {
    names
        .iter()
        .filter_map(|n| {
            let bare = n.split(['=', ':']).next().unwrap_or(n);
            files
                .iter()
                .find(|f| f.split('_').next() == Some(bare))
                .map(|f| (n.to_string(), f.clone()))
        })
        .collect()
}

/// The file names of `--print-uris` lines (`'URL' FILE SIZE HASH`).
fn stdout_files(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with('\''))
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(str::to_string)
        .collect()
}

fn has_errors(o: &Output) -> bool {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .any(|l| l.starts_with("E:") || l.starts_with("Err:"))
}

/// apt's `E:` lines, or the last lines it printed.
fn reason(o: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("E:") || l.starts_with("Err:"))
        .map(|l| l.trim_start_matches("E:").trim())
        .collect();
    if !errors.is_empty() {
        return errors.join("; ");
    }
    let tail: Vec<&str> = text.lines().rev().take(3).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    if tail.is_empty() {
        "no output".to_string()
    } else {
        tail.join("; ")
    }
}

fn failed(step: &'static str, o: &Output) -> AptError {
    AptError::Apt {
        step,
        code: o
            .status
            .code()
            .map(|c| c.to_string())
            .unwrap_or_else(|| "signal".to_string()),
        reason: reason(o),
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn running_as_root() -> bool {
    // /proc/self/status's Uid line: real, effective, saved, filesystem.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for apt-get: `update` does nothing, `download
    /// --print-uris NAME…` names `NAME_1_arm64.deb` for each, `download
    /// NAME…` prints apt's `Get:` line and writes the file for each one
    /// not already in the current directory (apt says nothing of those).
    fn fake_apt_get(dir: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("apt-get");
        let script = r#"#!/bin/sh
echo "$*" >> "$(dirname "$0")/apt.log"
while [ $# -gt 0 ]; do
  case "$1" in -q) shift ;; -o) shift 2 ;; *) break ;; esac
done
cmd=$1; shift
# Two updates of one cache at once fail, as apt's do without its locks.
if [ "$cmd" = update ]; then
  busy="$(dirname "$0")/updating"
  [ -e "$busy" ] && { echo "E: another update of this cache is running" >&2; exit 100; }
  touch "$busy"; sleep 0.3; rm -f "$busy"; exit 0
fi
uris=
[ "$1" = --print-uris ] && { uris=1; shift; }
# Names come after `--` only: anything else is a bug in atomlab.
[ "$1" = -- ] || { echo "E: names without -- before them: $*" >&2; exit 100; }
shift
if [ -n "$uris" ]; then
  for p in "$@"; do echo "'file:///m/${p}_1_arm64.deb' ${p}_1_arm64.deb 1 SHA256:0"; done
  exit 0
fi
i=0
for p in "$@"; do
  [ -e "${p}_1_arm64.deb" ] && continue
  i=$((i + 1))
  echo "Get:$i file:///m bookworm/main arm64 $p arm64 1 [1 B]"
  echo deb > "${p}_1_arm64.deb"
done
"#;
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn progress_counts_packages_fetched_of_those_apt_gives() {
        let dir = std::env::temp_dir().join(format!("atomlab-apt-progress-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("cache/debs")).unwrap();
        // One of the three is in the cache already.
        std::fs::write(dir.join("cache/debs/bb_1_arm64.deb"), "deb\n").unwrap();
        let req = AptRequest {
            packages: vec!["aa".into(), "bb".into(), "cc".into()],
            arch: "arm64".into(),
            cache: dir.join("cache"),
            apt_get: fake_apt_get(&dir),
        };
        let mut seen = Vec::new();
        let got = fetch_with(&req, &mut |e| seen.push(format!("{e:?}")));
        let _ = std::fs::remove_dir_all(&dir);
        let got = got.unwrap();
        assert_eq!(got.debs.len(), 3, "{got:?}");
        let at = |done| format!("At {{ done: {done}, label: \"apt-get download\" }}");
        assert_eq!(
            seen,
            [
                "Status(\"audit: fetching the package lists\")".to_string(),
                "Begin { total: 3, what: \"packages fetched\" }".to_string(),
                at(1),
                at(2),
                at(3),
                "End".to_string()
            ]
        );
    }

    /// Two fetches into one cache at once (two atomlab runs, or the
    /// docs' examples run two at a time): the second waits for the first
    /// instead of running `apt-get update` beside it, which failed both
    /// ("Failed to stat …/lists/partial/…", then "Unable to locate
    /// package").
    #[test]
    fn two_fetches_into_one_cache_take_turns() {
        let dir = std::env::temp_dir().join(format!("atomlab-apt-turns-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let req = AptRequest {
            packages: vec!["aa".into()],
            arch: "arm64".into(),
            cache: dir.join("cache"),
            apt_get: fake_apt_get(&dir),
        };
        let results: Vec<(Result<AptFetch, AptError>, Vec<String>)> = std::thread::scope(|s| {
            let runs: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let mut seen = Vec::new();
                        (fetch_with(&req, &mut |e| seen.push(format!("{e:?}"))), seen)
                    })
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let _ = std::fs::remove_dir_all(&dir);
        for (got, _) in &results {
            assert!(got.as_ref().is_ok_and(|f| f.debs.len() == 1), "{got:?}");
        }
        // Only one updated the lists; the other found them fresh.
        let updates = results
            .iter()
            .filter(|(_, seen)| seen.iter().any(|e| e.contains("package lists")))
            .count();
        assert_eq!(updates, 1, "{results:?}");
    }

    /// A relative cache reached apt as a relative Dir::State::Lists, which
    /// apt reads under /var/lib/apt: the lists went there, and nothing was
    /// found. Every path apt is given is absolute.
    #[test]
    fn a_relative_cache_reaches_apt_as_an_absolute_path() {
        let dir = std::env::temp_dir().join(format!("atomlab-apt-relative-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let apt_get = fake_apt_get(&dir);
        // Relative to the test's working directory (the crate's).
        let cache = PathBuf::from(format!("target-apt-relative-{}", std::process::id()));
        let req = AptRequest {
            packages: vec!["aa".into()],
            arch: "arm64".into(),
            cache: cache.clone(),
            apt_get,
        };
        let got = fetch(&req);
        let log = std::fs::read_to_string(dir.join("apt.log")).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&cache);
        assert_eq!(got.unwrap().debs.len(), 1);
        let want = format!(
            "Dir::State::Lists={}/lists",
            std::env::current_dir().unwrap().join(&cache).display()
        );
        assert_eq!(log.lines().count(), 3, "{log}");
        assert!(log.lines().all(|l| l.contains(&want)), "{want}: {log}");
    }

    /// `--apt=-cFILE` made apt-get read FILE as its configuration (a
    /// `Dir::Bin::dpkg` line there ran a program), and
    /// `-oAPT::Get::Print-URIs=0` among names silently dropped the others:
    /// a name outside Debian's grammar is refused before apt-get runs.
    #[test]
    fn names_that_apt_get_would_read_as_options_are_refused_before_it_runs() {
        let dir = std::env::temp_dir().join(format!("atomlab-apt-inject-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let apt_get = fake_apt_get(&dir);
        for bad in [
            "-c/tmp/evil.conf",
            "-oAPT::Get::Print-URIs=0",
            "--print-uris",
            "Hello",
            "a",
            "x\x1b[2J",
            "",
        ] {
            let req = AptRequest {
                packages: vec!["hello".into(), bad.into()],
                arch: "arm64".into(),
                cache: dir.join("cache"),
                apt_get: apt_get.clone(),
            };
            let e = fetch(&req).unwrap_err();
            assert!(matches!(e, AptError::BadName { .. }), "{bad}: {e}");
            assert!(!e.to_string().contains('\x1b'), "{e}");
        }
        let req = AptRequest {
            packages: vec!["hello".into()],
            arch: "-cfoo".into(),
            cache: dir.join("cache"),
            apt_get: apt_get.clone(),
        };
        assert!(matches!(fetch(&req).unwrap_err(), AptError::BadArch { .. }));
        // apt-get was never run.
        assert!(!dir.join("apt.log").exists());
        let _ = std::fs::remove_dir_all(&dir);
        for good in [
            "hello",
            "libc6:arm64",
            "g++-12",
            "libstdc++6=12.2.0-14+deb12u1",
            "nginx/bookworm-backports",
            "0ad",
            "lib.x:riscv64=1:2.3~rc1-4",
        ] {
            check_package_name(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
    }

    #[test]
    fn the_default_cache_follows_xdg_then_home() {
        let os = |s: &str| Some(std::ffi::OsString::from(s));
        assert_eq!(
            cache_under(os("/x"), os("/home/u"), "arm64"),
            Some(PathBuf::from("/x/atomlab/apt-arm64"))
        );
        // An empty XDG_CACHE_HOME counts as unset.
        assert_eq!(
            cache_under(os(""), os("/home/u"), "riscv64"),
            Some(PathBuf::from("/home/u/.cache/atomlab/apt-riscv64"))
        );
        assert_eq!(cache_under(None, os(""), "arm64"), None);
    }

    #[test]
    fn a_miss_is_an_audit_error_naming_the_package() {
        let miss = AptMiss {
            package: "nosuch".into(),
            reason: "Unable to locate package nosuch".into(),
        };
        let e = miss.into_error();
        assert_eq!(e.path(), "nosuch");
        assert_eq!(
            e.to_string(),
            "nosuch: apt-get cannot fetch this package: Unable to locate package nosuch"
        );
    }

    #[test]
    fn names_are_paired_with_their_files_whatever_order_apt_prints() {
        let files = [
            "libatomic1_12.2.0-14+deb12u1_arm64.deb".to_string(),
            "golang-go_2%3a1.19~1_arm64.deb".to_string(),
            "gzip_1.12-1_arm64.deb".to_string(),
        ];
        let got = assign(&["gzip", "golang-go", "libatomic1=12.2.0-14"], &files);
        let want: Vec<(String, String)> = [
            ("gzip", "gzip_1.12-1_arm64.deb"),
            ("golang-go", "golang-go_2%3a1.19~1_arm64.deb"),
            (
                "libatomic1=12.2.0-14",
                "libatomic1_12.2.0-14+deb12u1_arm64.deb",
            ),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        assert_eq!(got, want);
        // "go" is not "golang-go".
        assert!(assign(&["go"], &files).is_empty());
    }
}
