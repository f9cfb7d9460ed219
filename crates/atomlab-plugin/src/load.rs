//! Loading a plugin: the file checks of [`crate::elf`], then `dlopen(3)`
//! with `RTLD_NOW | RTLD_LOCAL` (every symbol resolved now, so a missing
//! one fails here and not in the middle of a run; nothing exported to
//! later libraries), `dlsym(3)` of `atomlab_plugin`, one call of it, and
//! the checks of its description. Every error names the file and what is
//! wrong with it.
//!
//! The file is looked at before anything reads it whole: it must be a
//! regular file (a FIFO would block, `/dev/zero` never ends) of at most
//! [`MAX_PLUGIN_BYTES`], its ELF header and program headers within it
//! (a truncated file would be mapped and raise SIGBUS), and its SHA-256 is
//! streamed once; a child process is handed the digest
//! ([`SHA256_ENV`]) instead of reading the file again.
//!
//! Loading runs the library's constructors and its entry point, which are
//! the plugin's code: that is done first in a child process
//! ([`crate::probe`]), so that a constructor that crashes, exits, hangs or
//! prints is that plugin's error (exit 2, the file named) and never takes
//! atomlab down. Only a plugin that loaded cleanly there is loaded into
//! atomlab itself, with its standard output sent to /dev/null meanwhile.

use std::ffi::{c_void, CStr};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::abi::{self, Descriptor, LockFns, OpFns, RefcountFns, SpscFns};
use crate::elf;
use crate::library::Library;
use crate::variant::{KindFns, PluginVariant};

pub use crate::variant::Kind;

/// A plugin that cannot be used, and why; the message starts with the file.
#[derive(Debug, thiserror::Error)]
#[error("plugin {}: {what}", path.display())]
pub struct PluginError {
    /// The file as given.
    pub path: PathBuf,
    /// What is wrong, and what to do.
    pub what: String,
}

fn err(path: &Path, what: impl Into<String>) -> PluginError {
    PluginError {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

/// One variant of a plugin, checked.
#[derive(Debug, Clone)]
pub struct VariantInfo {
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: Kind,
}

/// A loaded and checked plugin.
pub struct Plugin {
    /// The file as given on the command line.
    pub path: PathBuf,
    /// The file's SHA-256, lowercase hex.
    pub sha256: String,
    /// The library's own name for itself.
    pub name: String,
    /// The ABI version it was built against.
    pub abi_version: u32,
    /// Its variants, in its order.
    pub variants: Vec<VariantInfo>,
    fns: Vec<abi::VariantFns>,
    lib: Arc<Library>,
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin")
            .field("path", &self.path)
            .field("sha256", &self.sha256)
            .field("name", &self.name)
            .field("variants", &self.variants)
            .finish()
    }
}

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

/// Whether `name` is a usable variant name: letters, digits, `-`, `_`,
/// `.`, 1 to 64 bytes.
fn good_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Plugin {
    /// Loads and checks the plugin at `path`: the file first
    /// ([`check_file`]), then its constructors and entry point in a child
    /// process ([`crate::probe`]; not again in a child that runs a variant,
    /// whose parent did it), and only then in this process.
    pub fn load(path: &Path) -> Result<Plugin, PluginError> {
        let (abs, sha256) = check_file(path)?;
        if crate::isolate::child_request().is_none() {
            crate::probe::probe(path, &abs)?;
        }
        Plugin::load_here(path, &abs, sha256)
    }

    /// Loads and checks the plugin at `path` (canonically `abs`, of digest
    /// `sha256`) in this process: its constructors and entry point run
    /// here, with standard output sent to /dev/null while they do.
    pub(crate) fn load_here(
        path: &Path,
        abs: &Path,
        sha256: String,
    ) -> Result<Plugin, PluginError> {
        // dlopen searches the library path for a name without a slash:
        // give it the file itself.
        let c = std::ffi::CString::new(abs.as_os_str().as_encoded_bytes())
            .map_err(|_| err(path, "its path contains a NUL byte"))?;
        let silenced = crate::probe::StdoutSilenced::new();
        let lib =
            Arc::new(Library::open(&c).map_err(|e| err(path, format!("dlopen refused it: {e}")))?);
        let Some(sym) = lib.symbol(abi::ENTRY) else {
            return Err(err(
                path,
                "missing entry point: it exports no function `atomlab_plugin` (define `const struct atomlab_plugin *atomlab_plugin(void)` from include/atomlab.h, not static; check with `nm -D`)",
            ));
        };
        // SAFETY: the header declares the symbol with this type; a plugin
        // that lies about it breaks the ABI's contract.
        let entry: abi::EntryFn = unsafe { std::mem::transmute::<*mut c_void, abi::EntryFn>(sym) };
        // SAFETY: as above: the plugin's own entry point, no arguments.
        let d = unsafe { entry() };
        drop(silenced);
        if d.is_null() {
            return Err(err(path, "atomlab_plugin() returned NULL"));
        }
        // SAFETY: non-null, and the header says it points to a description
        // that lives as long as the library.
        let d: &Descriptor = unsafe { &*d };
        if d.abi_version > abi::ABI_VERSION {
            return Err(err(
                path,
                format!(
                    "ABI version {} is from the future: this atomlab runs plugins of version {} and older (build it against this atomlab's include/atomlab.h, or update atomlab)",
                    d.abi_version,
                    abi::ABI_VERSION
                ),
            ));
        }
        if d.abi_version == 0 {
            return Err(err(
                path,
                "ABI version 0: set abi_version = ATOMLAB_PLUGIN_ABI_VERSION",
            ));
        }
        let name = cstr(d.name)
            .map(|n| atomlab_core::text::shown(&n, 64))
            .unwrap_or_default();
        if d.n_variants == 0 {
            return Err(err(path, "it describes no variants (n_variants is 0)"));
        }
        if d.variants.is_null() {
            return Err(err(
                path,
                format!(
                    "n_variants is {} but variants is NULL: point variants at an array of that many struct atomlab_variant",
                    d.n_variants
                ),
            ));
        }
        if d.n_variants > 1024 {
            return Err(err(
                path,
                format!("n_variants {} is implausible (at most 1024)", d.n_variants),
            ));
        }
        // SAFETY: non-null, `n_variants` entries by the header's contract.
        let vs = unsafe { std::slice::from_raw_parts(d.variants, d.n_variants) };
        let mut variants = Vec::new();
        let mut fns = Vec::new();
        for (i, v) in vs.iter().enumerate() {
            let vname = cstr(v.name).ok_or_else(|| {
                err(
                    path,
                    format!("variant {i} has no name (name is NULL or not UTF-8)"),
                )
            })?;
            if !good_name(&vname) {
                return Err(err(
                    path,
                    format!(
                        "variant name '{}': use 1 to 64 letters, digits, '-', '_' or '.'",
                        atomlab_core::text::shown(&vname, 64)
                    ),
                ));
            }
            if variants.iter().any(|w: &VariantInfo| w.name == vname) {
                return Err(err(path, format!("variant '{vname}' is described twice")));
            }
            let kind = Kind::from_abi(v.kind).ok_or_else(|| {
                err(
                    path,
                    format!(
                        "variant '{vname}' has kind {}, which ABI version {} does not define (1 lock, 2 spsc, 3 refcount, 4 op)",
                        v.kind, d.abi_version
                    ),
                )
            })?;
            // SAFETY: the kind says which member of `u` was written.
            let missing = unsafe {
                match kind {
                    Kind::Lock => LockFns::from_union(&v.u).missing(),
                    Kind::Spsc => SpscFns::from_union(&v.u).missing(),
                    Kind::Refcount => RefcountFns::from_union(&v.u).missing(),
                    Kind::Op => OpFns::from_union(&v.u).missing(),
                }
            };
            if !missing.is_empty() {
                return Err(err(
                    path,
                    format!(
                        "{} variant '{vname}' has no {} function (NULL)",
                        kind.name(),
                        missing.join(", ")
                    ),
                ));
            }
            variants.push(VariantInfo { name: vname, kind });
            fns.push(v.u);
        }
        Ok(Plugin {
            path: path.to_path_buf(),
            sha256,
            name,
            abi_version: d.abi_version,
            variants,
            fns,
            lib,
        })
    }

    /// The plugin's variants of the kind `F`, or an error naming the file
    /// and the kinds it has when it has none of that kind (`subcommand`
    /// says who asked, e.g. `bench spsc`).
    pub fn variants_of<F: KindFns>(
        &self,
        subcommand: &str,
    ) -> Result<Vec<PluginVariant<F>>, PluginError> {
        let out: Vec<PluginVariant<F>> = self
            .variants
            .iter()
            .zip(&self.fns)
            .filter(|(v, _)| v.kind == F::KIND)
            .map(|(v, f)| PluginVariant {
                name: v.name.clone(),
                path: self.path.clone(),
                sha256: self.sha256.clone(),
                // SAFETY: checked in `load`: the kind is F's.
                fns: unsafe { F::from_union(f) },
                lib: self.lib.clone(),
                audit: std::sync::OnceLock::new(),
            })
            .collect();
        if out.is_empty() {
            let kinds: Vec<String> = self
                .variants
                .iter()
                .map(|v| format!("{} ({})", v.name, v.kind.name()))
                .collect();
            return Err(err(
                &self.path,
                format!(
                    "{subcommand} takes {} variants, and this plugin provides {}",
                    F::KIND.name(),
                    kinds.join(", ")
                ),
            ));
        }
        Ok(out)
    }
}

/// The variants of kind `F` of the plugins at `paths`, in order, for
/// `subcommand` (e.g. `stress spsc`): every file is loaded and checked
/// before any is run, and the first bad one is the error.
pub fn load_kind<F: KindFns>(
    paths: &[PathBuf],
    subcommand: &str,
) -> Result<Vec<PluginVariant<F>>, PluginError> {
    let mut out = Vec::new();
    for p in paths {
        out.extend(Plugin::load(p)?.variants_of::<F>(subcommand)?);
    }
    Ok(out)
}

/// The lock variants of the plugins at `paths` ([`load_kind`] of locks).
pub fn load_locks(
    paths: &[PathBuf],
    subcommand: &str,
) -> Result<Vec<crate::lock::LockVariant>, PluginError> {
    load_kind(paths, subcommand)
}

fn cstr(p: *const std::ffi::c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated by the header's contract.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().ok().map(str::to_string)
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

    #[test]
    fn names() {
        assert!(good_name("my-ticket_v2.1"));
        assert!(!good_name(""));
        assert!(!good_name("a b"));
        assert!(!good_name(&"x".repeat(65)));
    }

    #[test]
    fn a_text_file_is_refused_naming_it() {
        let dir = std::env::temp_dir().join(format!("atomlab-plugin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("notes.so");
        std::fs::write(&p, "hello").unwrap();
        let e = Plugin::load(&p).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("plugin {}: not a shared object", p.display())),
            "{e}"
        );
        let e = Plugin::load(&dir.join("absent.so"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("absent.so: cannot read it"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
