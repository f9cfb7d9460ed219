//! What every plugin variant is, whatever its kind: a name, the file it
//! came from and that file's SHA-256 (for records), the kind's function
//! pointers ([`KindFns`], one `#[repr(C)]` struct of [`crate::abi`] per
//! kind), and the library they point into. A variant's [`Kind`] is its
//! entry of [`abi::KINDS`], which also says which of its functions may
//! be NULL (`crate::load` refuses any other NULL); the kinds' own modules
//! ([`crate::lock`], [`crate::spsc`], [`crate::refcount`], [`crate::op`])
//! wrap their functions in safe handles.

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::Arc;

use atomlab_core::Record;

use crate::abi;
use crate::library::Library;

/// What a variant is (`enum atomlab_kind`): one entry of [`abi::KINDS`],
/// the one list of kinds, so a new kind is its entry there and not a
/// variant here too.
#[derive(Clone, Copy)]
pub struct Kind(&'static abi::KindDef);

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        self.0.value == other.0.value
    }
}

impl Eq for Kind {}

impl std::fmt::Debug for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Kind {
    /// The kind whose `enum atomlab_kind` value is `value`
    /// (`abi::KIND_LOCK`, …); a value [`abi::KINDS`] does not list does
    /// not compile where this is a constant, and panics elsewhere.
    pub const fn of(value: u32) -> Kind {
        let mut i = 0;
        while i < abi::KINDS.len() {
            if abi::KINDS[i].value == value {
                return Kind(&abi::KINDS[i]);
            }
            i += 1;
        }
        panic!("not a kind of abi::KINDS")
    }

    /// Every kind, in the order of [`abi::KINDS`].
    pub fn all() -> impl Iterator<Item = Kind> {
        abi::KINDS.iter().map(Kind)
    }

    /// The header's definition of the kind.
    pub fn def(self) -> &'static abi::KindDef {
        self.0
    }

    /// The kind's name in the header and on the command line.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// What one variant of the kind is, for people ("a built-in lock").
    pub fn noun(self) -> &'static str {
        self.0.noun
    }

    /// The members of the kind's struct of functions, in order.
    pub fn members(self) -> &'static [&'static str] {
        self.0.members
    }

    /// The kind of `enum atomlab_kind`'s value `k`, if the ABI defines it.
    pub fn from_abi(k: u32) -> Option<Kind> {
        Kind::all().find(|kind| kind.0.value == k)
    }

    /// The members of this kind's struct in `u` that are NULL and that
    /// the header does not allow to be (`try_lock` and `read` may be), in
    /// order: what the loader refuses a variant for.
    ///
    /// # Safety
    /// `u`'s member written is this kind's.
    pub unsafe fn missing(self, u: &abi::VariantFns) -> Vec<&'static str> {
        // SAFETY: the caller vouches that this kind's member was written,
        // so its `members.len()` words are initialised.
        let words = unsafe { u.words(self.0.members.len()) };
        self.0
            .members
            .iter()
            .zip(words)
            .filter(|(m, w)| w.is_null() && !self.0.optional.contains(m))
            .map(|(m, _)| *m)
            .collect()
    }

    /// Every kind's `enum atomlab_kind` value and name, as an error lists
    /// them ("1 lock, 2 spsc, 3 refcount, 4 op").
    pub fn listed() -> String {
        Kind::all()
            .map(|k| format!("{} {}", k.0.value, k.0.name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Scenarios that take plugins, each with its kind where the two names
/// differ, as a sentence lists them ("mutex (lock), refcount and spsc"):
/// what `bench` and `stress` say in their help and their errors.
pub fn takers<'a>(scenarios: impl IntoIterator<Item = (&'a str, Kind)>) -> String {
    let named: Vec<String> = scenarios
        .into_iter()
        .map(|(name, kind)| match name == kind.name() {
            true => name.to_string(),
            false => format!("{name} ({})", kind.name()),
        })
        .collect();
    atomlab_core::sentence::and_list(&named)
}

/// The function pointers of one kind (`struct atomlab_lock`, …).
pub trait KindFns: Copy + Send + Sync + 'static {
    /// The kind whose member of `union u` this is.
    const KIND: Kind;
    /// This kind's member of a variant's union.
    ///
    /// # Safety
    /// The variant's `kind` must be [`Self::KIND`] (the member written).
    unsafe fn from_union(u: &abi::VariantFns) -> Self;
    /// The functions whose atomics the line beside a variant's figures
    /// describes, by role, those the plugin provides: a lock's `lock`,
    /// `unlock` and `try_lock`, a queue's `push` and `pop`, a count's
    /// `get` and `put`, an operation's `op` (not `new_` and `free_`,
    /// which run outside the measured loop); none by default.
    fn audited(&self) -> Vec<(&'static str, *const c_void)> {
        Vec::new()
    }
}

/// One variant of a loaded and checked plugin, of the kind `F` says.
#[derive(Clone)]
pub struct PluginVariant<F> {
    /// The variant's name.
    pub name: String,
    /// The plugin file as given.
    pub path: PathBuf,
    /// The file's SHA-256.
    pub sha256: String,
    pub(crate) fns: F,
    pub(crate) lib: Arc<Library>,
    /// What its functions do with atomics, audited on first use.
    pub(crate) audit: std::sync::OnceLock<crate::audit::VariantAudit>,
}

/// The name of every kind's no-op variant: functions that do nothing,
/// called through the ABI's pointers as a plugin's are, measured beside a
/// plugin in the same run to show what the indirect calls cost here.
pub const ABI_NOOP: &str = "abi-noop";

/// A variant of atomlab's own, called through `fns` exactly as a plugin's
/// functions are (`bench lock --via-abi`, each kind's `abi_noop`).
pub fn built_in<F: KindFns>(name: &str, fns: F) -> Result<PluginVariant<F>, String> {
    Ok(PluginVariant {
        name: name.to_string(),
        path: std::path::PathBuf::from("(built in)"),
        sha256: String::new(),
        // Through black_box, so that the calls stay indirect: the
        // compiler cannot see which functions the pointers hold.
        fns: std::hint::black_box(fns),
        lib: Arc::new(Library::this_program()?),
        audit: std::sync::OnceLock::new(),
    })
}

/// A 64-byte object (alone on its cache line, as a plugin's) for the
/// no-op variants' `new_`.
pub(crate) extern "C" fn noop_new() -> *mut c_void {
    Box::into_raw(Box::new([0u64; 8])).cast()
}

/// Frees [`noop_new`]'s object.
pub(crate) extern "C" fn noop_free(p: *mut c_void) {
    // SAFETY: made by `noop_new`, freed once by the instance's drop.
    drop(unsafe { Box::from_raw(p.cast::<[u64; 8]>()) });
}

/// A function of the ABI's `void f(void *)` shape that does nothing.
pub(crate) extern "C" fn noop_obj(_: *mut c_void) {}

impl<F> std::fmt::Debug for PluginVariant<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginVariant")
            .field("name", &self.name)
            .field("path", &self.path)
            .finish()
    }
}

impl<F: KindFns> PluginVariant<F> {
    /// What the kind's audited functions ([`KindFns::audited`]) do with
    /// atomics (the file is read and audited once, on first use).
    pub fn audit(&self) -> &crate::audit::VariantAudit {
        self.audit.get_or_init(|| {
            let fns = self.fns.audited();
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

    /// Names the plugin in `r`'s parameters: the file, its SHA-256 and the
    /// variant, so that two builds of one plugin compare as A/B; and what
    /// its audited functions ([`KindFns::audited`]) do with atomics.
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
pub fn variant_names<F: KindFns>(
    plugins: &[PluginVariant<F>],
    builtin: &[&str],
) -> Result<Vec<&'static str>, NameClash> {
    let mut names: Vec<&'static str> = Vec::new();
    for p in plugins {
        let clash = if builtin.contains(&p.name.as_str()) {
            Some(format!("a built-in {}", F::KIND.noun()))
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

/// A scenario of bench or stress (`base`) with the plugin variants of one
/// kind `F` after its own: bench's and stress's `Scenario` impls for it
/// send a plugin's variant to the plugin and the others to `base`. The
/// plugins' names are checked once ([`variant_names`]) and live as long
/// as the process, as a scenario's do.
pub struct WithPlugins<S, F> {
    base: S,
    plugins: Vec<PluginVariant<F>>,
    names: Vec<&'static str>,
}

impl<S, F: KindFns> WithPlugins<S, F> {
    /// `base`, whose own variants are `builtin`, with `plugins`' variants;
    /// refuses a name that is already a built-in variant's or another
    /// plugin's, naming the file (records are told apart by variant name).
    pub fn new(
        base: S,
        builtin: &[&str],
        plugins: Vec<PluginVariant<F>>,
    ) -> Result<Self, NameClash> {
        let names = variant_names(&plugins, builtin)?;
        Ok(WithPlugins {
            base,
            plugins,
            names,
        })
    }

    /// The scenario the plugins join.
    pub fn base(&self) -> &S {
        &self.base
    }

    /// The plugin variant called `name`, if one is.
    pub fn plugin(&self, name: &str) -> Option<&PluginVariant<F>> {
        self.plugins.iter().find(|p| p.name == name)
    }

    /// Every plugin variant, in the order given.
    pub fn plugins(&self) -> &[PluginVariant<F>] {
        &self.plugins
    }

    /// The scenario's variants: `builtin` (the base's), then the plugins'.
    pub fn after(&self, mut builtin: Vec<&'static str>) -> Vec<&'static str> {
        builtin.extend(&self.names);
        builtin
    }
}

/// The functions of `roles` that the plugin provides (not NULL), in order,
/// for [`KindFns::audited`].
pub(crate) fn present<const N: usize>(
    roles: [(&'static str, Option<*const c_void>); N],
) -> Vec<(&'static str, *const c_void)> {
    roles
        .into_iter()
        .filter_map(|(role, p)| Some((role, p?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{abi, Kind};

    /// Each kind's entry of the table is its own: every value of the
    /// header maps back to its kind, and no other value does.
    #[test]
    fn the_kinds_are_the_headers_table() {
        assert_eq!(Kind::all().count(), abi::KINDS.len());
        for k in Kind::all() {
            assert_eq!(Kind::from_abi(k.def().value), Some(k));
        }
        assert_eq!(Kind::of(abi::KIND_SPSC).name(), "spsc");
        assert_eq!(Kind::of(abi::KIND_REFCOUNT).noun(), "reference count");
        assert_eq!(Kind::from_abi(0), None);
        assert_eq!(Kind::from_abi(5), None);
        assert_eq!(Kind::listed(), "1 lock, 2 spsc, 3 refcount, 4 op");
    }

    /// A NULL member is missing unless the header allows it, whatever
    /// the kind, read from the union's words.
    #[test]
    fn missing_members_are_read_from_the_union() {
        extern "C" fn obj(_: *mut std::ffi::c_void) {}
        let lock = abi::VariantFns {
            lock: abi::LockFns {
                new: None,
                lock: Some(obj),
                unlock: None,
                try_lock: None,
                free: Some(obj),
            },
        };
        // SAFETY: the lock member was written.
        let missing = unsafe { Kind::of(abi::KIND_LOCK).missing(&lock) };
        assert_eq!(missing, ["new_", "unlock"]);
        let op = abi::VariantFns {
            op: abi::OpFns {
                new: None,
                op: Some(obj),
                read: None,
                free: None,
            },
        };
        // SAFETY: the op member was written.
        let missing = unsafe { Kind::of(abi::KIND_OP).missing(&op) };
        assert_eq!(missing, ["new_", "free_"]);
    }
}
