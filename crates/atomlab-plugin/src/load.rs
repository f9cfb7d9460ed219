//! Loading a plugin: the file checks of [`crate::file`], then `dlopen(3)`
//! with `RTLD_NOW | RTLD_LOCAL` (every symbol resolved now, so a missing
//! one fails here and not in the middle of a run; nothing exported to
//! later libraries), `dlsym(3)` of `atomlab_plugin`, one call of it, and
//! the checks of its description. Every error names the file and what is
//! wrong with it.
//!
//! The file itself is checked first ([`crate::file`]).
//!
//! Loading runs the library's constructors and its entry point, which are
//! the plugin's code: that is done first in a child process
//! ([`crate::probe`]), so that a constructor that crashes, exits, hangs or
//! prints is that plugin's error (exit 2, the file named) and never takes
//! atomlab down. Only a plugin that loaded cleanly there is loaded into
//! atomlab itself, with its standard output sent to /dev/null meanwhile.

use std::ffi::{c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::abi::{self, Descriptor};
use crate::error::{err, PluginError};
use crate::file::check_file;
use crate::library::Library;
use crate::variant::{KindFns, PluginVariant};

pub use crate::variant::Kind;

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

/// Whether `name` is a usable variant name: letters, digits, `-`, `_`,
/// `.`, 1 to 64 bytes.
fn good_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl Plugin {
    /// Loads and checks the plugin at `path`: the file first
    /// ([`check_file`]), then its constructors and entry point in a child
    /// process (`crate::probe`; not again in a child that runs a variant,
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
                        "variant '{vname}' has kind {}, which ABI version {} does not define ({})",
                        v.kind,
                        d.abi_version,
                        Kind::listed()
                    ),
                )
            })?;
            // SAFETY: the kind says which member of `u` was written.
            let missing = unsafe { kind.missing(&v.u) };
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
