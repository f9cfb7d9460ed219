//! The plugin file, before anything reads it whole: it must be a regular
//! file (a FIFO would block, `/dev/zero` never ends) of at most
//! [`MAX_PLUGIN_BYTES`], its ELF header and program headers within it
//! (`crate::elf`: a truncated file would be mapped and raise SIGBUS), and
//! its SHA-256 is streamed once; a child process is handed the digest
//! ([`SHA256_ENV`]) instead of reading the file again.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::elf;
use crate::error::{err, PluginError};

/// The largest plugin file atomlab reads: far above any real plugin (a
/// Rust cdylib with full debug information is tens of MB).
pub const MAX_PLUGIN_BYTES: u64 = 512 << 20;

/// Set in a child: lines of `SHA256 PATH`, the digests of the plugin files
/// its parent already read (by canonical path), so the child does not read
/// them again.
pub const SHA256_ENV: &str = "ATOMLAB_PLUGIN_SHA256";

/// What kind of file a non-regular `ft` is, in words.
fn file_kind(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// The plugin file at `path` opened for reading, and its size: a regular
/// file of at most [`MAX_PLUGIN_BYTES`]. O_NONBLOCK: opening a FIFO for
/// reading would otherwise wait for a writer; the type is checked on the
/// opened file itself (fstat), so a file swapped after a stat cannot slip
/// through.
fn open_regular(path: &Path) -> Result<(std::fs::File, u64), PluginError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| err(path, format!("cannot read it: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| err(path, format!("cannot read it: {e}")))?;
    if !meta.is_file() {
        return Err(err(
            path,
            format!(
                "{}, not a shared object file: give the path of a .so built with `cc -shared -fPIC`",
                file_kind(meta.file_type())
            ),
        ));
    }
    let size = meta.len();
    if size > MAX_PLUGIN_BYTES {
        return Err(err(
            path,
            format!(
                "{size} bytes, more than the {} MiB a plugin may have (is this the plugin, or another file?)",
                MAX_PLUGIN_BYTES >> 20
            ),
        ));
    }
    Ok((file, size))
}

/// Checks the file at `path` as a plugin file without loading it: a
/// regular file of at most [`MAX_PLUGIN_BYTES`], an ELF shared object for
/// this machine whose program headers and segments lie within it; returns
/// its canonical path and SHA-256 (streamed, or handed down by a parent).
pub fn check_file(path: &Path) -> Result<(PathBuf, String), PluginError> {
    use std::os::unix::fs::FileExt;
    let (file, size) = open_regular(path)?;
    let mut head = [0u8; 64];
    let n = file.read_at(&mut head, 0).unwrap_or(0);
    elf::check(&head[..n]).map_err(|e| err(path, e.to_string()))?;
    elf::check_layout(&file, size).map_err(|e| err(path, e.to_string()))?;
    let abs = std::fs::canonicalize(path)
        .map_err(|e| err(path, format!("cannot resolve its path: {e}")))?;
    if let Some(known) = handed_down_sha256(&abs) {
        remember(&abs, &known);
        return Ok((abs, known));
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut reader = (&file).take(size);
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(err(path, format!("cannot read it: {e}"))),
        }
    }
    let sha: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    remember(&abs, &sha);
    Ok((abs, sha))
}

/// The plugin files this process has read, with their digests, for the
/// children it starts ([`SHA256_ENV`]).
static READ: std::sync::Mutex<Vec<(PathBuf, String)>> = std::sync::Mutex::new(Vec::new());

fn remember(abs: &Path, sha: &str) {
    let mut read = READ.lock().unwrap_or_else(|p| p.into_inner());
    if !read.iter().any(|(p, _)| p == abs) {
        read.push((abs.to_path_buf(), sha.to_string()));
    }
}

/// The [`SHA256_ENV`] value for a child of this process: every plugin file
/// read so far.
pub(crate) fn sha256_env_now() -> String {
    sha256_env(&READ.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The bytes of the plugin file at `path`, for reading it as data (`atomlab
/// verify`, which never loads it): the checks of [`check_file`] that need no
/// architecture (a regular file, opened without waiting on a FIFO, of at
/// most [`MAX_PLUGIN_BYTES`]), then the file read once.
pub fn read_file_bytes(path: &Path) -> Result<Vec<u8>, PluginError> {
    let (file, _) = open_regular(path)?;
    let mut bytes = Vec::new();
    (&file)
        .take(MAX_PLUGIN_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| err(path, format!("cannot read it: {e}")))?;
    Ok(bytes)
}

/// The digest a parent handed down for the file at `abs` ([`SHA256_ENV`]).
fn handed_down_sha256(abs: &Path) -> Option<String> {
    let lines = std::env::var(SHA256_ENV).ok()?;
    let want = abs.to_str()?;
    lines.lines().find_map(|l| {
        let (sha, p) = l.split_once(' ')?;
        (p == want && sha.len() == 64).then(|| sha.to_string())
    })
}

/// The [`SHA256_ENV`] value for plugin files already read: `(canonical
/// path, SHA-256)` pairs.
pub fn sha256_env(known: &[(PathBuf, String)]) -> String {
    known
        .iter()
        .filter_map(|(p, sha)| Some(format!("{sha} {}", p.to_str()?)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FIPS 180-4 examples (NIST's SHA256.pdf "abc" and the two-block
    /// message) and the empty string.
    #[test]
    fn sha256_matches_the_fips_examples() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
