//! A plugin's lock (`struct atomlab_lock`) behind a safe handle: a
//! [`LockVariant`] makes [`LockInstance`]s, and an instance runs a closure
//! with the lock held ([`LockInstance::with`]), unlocking even if the
//! closure panics, so that `unlock` is only ever called by the holder.

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::Arc;

use atomlab_core::Record;

use crate::abi::LockFns;
use crate::load::Library;

/// One lock variant of a loaded plugin.
#[derive(Clone)]
pub struct LockVariant {
    /// The variant's name.
    pub name: String,
    /// The plugin file as given.
    pub path: PathBuf,
    /// The file's SHA-256.
    pub sha256: String,
    fns: LockFns,
    lib: Arc<Library>,
    /// What its functions do with atomics, audited on first use.
    audit: std::sync::OnceLock<crate::audit::VariantAudit>,
}

impl std::fmt::Debug for LockVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockVariant")
            .field("name", &self.name)
            .field("path", &self.path)
            .finish()
    }
}

impl LockVariant {
    pub(crate) fn new(
        name: String,
        path: PathBuf,
        sha256: String,
        fns: LockFns,
        lib: Arc<Library>,
    ) -> LockVariant {
        LockVariant {
            name,
            path,
            sha256,
            fns,
            lib,
            audit: std::sync::OnceLock::new(),
        }
    }

    /// What its `lock`, `unlock` and `try_lock` do with atomics (the
    /// file is read and audited once, on first use).
    pub fn audit(&self) -> &crate::audit::VariantAudit {
        self.audit.get_or_init(|| {
            let fns: Vec<(&'static str, *const c_void)> = [
                ("lock", self.fns.lock.map(|f| f as *const c_void)),
                ("unlock", self.fns.unlock.map(|f| f as *const c_void)),
                ("try_lock", self.fns.try_lock.map(|f| f as *const c_void)),
            ]
            .into_iter()
            .filter_map(|(role, p)| Some((role, p?)))
            .collect();
            let plugin = std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone());
            crate::audit::audit(&fns, &plugin)
        })
    }

    /// What a signal that killed a child running this variant means: for
    /// SIGILL on an aarch64 CPU without LSE, the LSE instructions the
    /// audit found; otherwise the signal's usual meaning.
    pub fn crash_hint(&self, sig: i32) -> String {
        let (_, _, hint) = crate::isolate::signal_words(sig);
        if sig != libc::SIGILL || cpu_has_lse() {
            return hint.to_string();
        }
        let lse: Vec<String> = self
            .audit()
            .functions
            .iter()
            .filter_map(|f| Some(format!("{} uses {}", f.role, f.unconditional_lse()?)))
            .collect();
        if lse.is_empty() {
            return hint.to_string();
        }
        format!(
            "{}: {}: LSE atomics, which need ARMv8.1 (FEAT_LSE), and this CPU has no LSE; build for ARMv8.0 (gcc -march=armv8-a -moutline-atomics picks LSE at run time; -mno-outline-atomics gives LL/SC loops)",
            self.name,
            lse.join(", ")
        )
    }

    /// A new unlocked lock from the plugin's `new_`, or why not.
    pub fn make(&self) -> Result<LockInstance, String> {
        let new = self.fns.new.ok_or("no new_ function")?;
        // SAFETY: `new_` of a plugin checked at load; the library stays
        // loaded while `lib` is held.
        let p = unsafe { new() };
        if p.is_null() {
            return Err(format!("{}: new_() returned NULL", self.name));
        }
        Ok(LockInstance {
            ptr: p,
            fns: self.fns,
            _lib: self.lib.clone(),
        })
    }

    /// Names the plugin in `r`'s parameters: the file, its SHA-256 and the
    /// variant, so that two builds of one lock compare as A/B.
    pub fn tag(&self, r: &mut Record) {
        r.param("plugin", self.path.display().to_string())
            .param("plugin_sha256", self.sha256.clone())
            .param("plugin_variant", self.name.clone());
        let line = self.audit().line();
        if !line.is_empty() {
            r.param("plugin_audit", line.clone());
            let note = format!("{}: {line}", self.name);
            if !r.notes.contains(&note) {
                r.notes.push(note);
            }
        }
    }
}

/// Whether this CPU has the aarch64 LSE atomics (false elsewhere: the
/// question is not asked there).
fn cpu_has_lse() -> bool {
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("lse")
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        false
    }
}

/// One lock made by a plugin; freed with the plugin's `free_` on drop.
pub struct LockInstance {
    ptr: *mut c_void,
    fns: LockFns,
    _lib: Arc<Library>,
}

// SAFETY: the header's contract: `lock`/`unlock` are called from many
// threads on one object, which is what a lock is for.
unsafe impl Send for LockInstance {}
// SAFETY: as above.
unsafe impl Sync for LockInstance {}

/// Unlocks on drop (the closure in [`LockInstance::with`] may panic).
struct Held<'a>(&'a LockInstance);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(unlock) = self.0.fns.unlock {
            // SAFETY: this thread holds the lock (Held is made only after
            // `lock` returned).
            unsafe { unlock(self.0.ptr) }
        }
    }
}

impl LockInstance {
    /// Runs `f` with the lock held.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce() -> R) -> R {
        if let Some(lock) = self.fns.lock {
            // SAFETY: the object came from this plugin's `new_` and is not
            // freed while `self` lives.
            unsafe { lock(self.ptr) };
        }
        let _held = Held(self);
        f()
    }

    /// Runs `f` if the plugin's `try_lock` took the lock; `None` if it did
    /// not, or the plugin has no `try_lock`.
    pub fn try_with<R>(&self, f: impl FnOnce() -> R) -> Option<R> {
        let try_lock = self.fns.try_lock?;
        // SAFETY: as in `with`.
        if unsafe { try_lock(self.ptr) } == 0 {
            return None;
        }
        let _held = Held(self);
        Some(f())
    }
}

impl Drop for LockInstance {
    fn drop(&mut self) {
        if let Some(free) = self.fns.free {
            // SAFETY: made by `new_`, freed once, unlocked (every `with`
            // has returned: they borrow `self`).
            unsafe { free(self.ptr) }
        }
    }
}

/// A plugin's variant named like a variant already there (records are
/// told apart by variant name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plugin {path}: variant '{name}' has the name of {other}; rename it in the plugin's description")]
pub struct NameClash {
    /// The plugin file.
    pub path: String,
    /// The variant's name.
    pub name: String,
    /// Whose name it is already.
    pub other: String,
}

/// The names of `plugins`' variants, after the `builtin` ones of the
/// scenario they join; refuses a name that is already a built-in
/// variant's or another plugin's, naming the file. The names are
/// `&'static str`, as a scenario's variants are: a plugin's live as long
/// as the process (one scenario per command).
pub fn variant_names(
    plugins: &[LockVariant],
    builtin: &[&str],
) -> Result<Vec<&'static str>, NameClash> {
    let mut names: Vec<&'static str> = Vec::new();
    for p in plugins {
        let clash = if builtin.contains(&p.name.as_str()) {
            Some("a built-in lock".to_string())
        } else {
            plugins
                .iter()
                .find(|q| q.name == p.name && !std::ptr::eq(*q, p))
                .map(|q| format!("a variant of {}", q.path.display()))
        };
        if let Some(other) = clash {
            return Err(NameClash {
                path: p.path.display().to_string(),
                name: p.name.clone(),
                other,
            });
        }
        names.push(Box::leak(p.name.clone().into_boxed_str()));
    }
    Ok(names)
}
