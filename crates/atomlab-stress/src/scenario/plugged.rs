//! Users' code (plugins, `include/atomlab.h`) beside a scenario's built-in
//! variants: [`atomlab_plugin::WithPlugins`] wraps a scenario that can test a plugin's
//! variants of one kind ([`Pluggable`]: `lock` for mutex, `spsc` for spsc,
//! `refcount` for refcount), adds their names after the built-in ones
//! (judged as correct variants), runs each in a child process
//! ([`crate::run_records`]), and names the plugin file, its SHA-256 and
//! the variant in the records, with a replay line that loads the plugin.

use atomlab_plugin::variant::KindFns;
use atomlab_plugin::PluginVariant;

use super::common_notes;
use crate::detect::Detector;
use crate::outcome::VariantRun;
use crate::plan::{Plan, Plugs, Scenario, StressError, Threads};

/// [`Plugs`] for the pluggable scenario `S` (`Some(&Door(Mutex))`).
pub(crate) struct Door<S>(pub S);

impl<S: Pluggable + Copy + Sync> Plugs for Door<S> {
    fn kind(&self) -> atomlab_plugin::variant::Kind {
        <S::Fns as KindFns>::KIND
    }

    fn load(&self, paths: &[std::path::PathBuf]) -> Result<&'static dyn Scenario, StressError> {
        let base = self.0;
        let subcommand = format!("stress {}", base.name());
        let plugins = atomlab_plugin::load_kind::<S::Fns>(paths, &subcommand)?;
        let builtin = base.variants();
        let scenario = atomlab_plugin::WithPlugins::new(base, &builtin, plugins)?;
        Ok(Box::leak(Box::new(scenario)))
    }
}

/// A scenario that tests plugin variants of the kind `Fns`.
pub trait Pluggable: Scenario + 'static {
    /// The kind's function pointers (`atomlab_plugin::abi::LockFns`, …).
    type Fns: KindFns;
    /// Tests the plugin variant `p` (called `variant`) under `plan`.
    fn run_plugin(
        &self,
        plan: &Plan,
        variant: &'static str,
        p: &PluginVariant<Self::Fns>,
    ) -> Result<VariantRun, StressError>;
}

/// The FAIL of a plugin variant whose `new_` gave no object.
pub(crate) fn cannot_make(plan: &Plan, variant: &'static str, why: String) -> VariantRun {
    let det = Detector::new();
    let mut o = VariantRun::judge(plan, variant, 0, 0.0, &det, common_notes(plan));
    o.verdict = atomlab_core::Verdict::Fail;
    o.reason = format!("the plugin could not make an object to test: {why}");
    o
}

/// `base` with its plugins' variants after its own, a scenario of its own.
impl<S: Pluggable> Scenario for atomlab_plugin::WithPlugins<S, S::Fns> {
    fn name(&self) -> &'static str {
        self.base().name()
    }

    fn variants(&self) -> Vec<&'static str> {
        self.after(self.base().variants())
    }

    fn ops_unit(&self) -> &'static str {
        self.base().ops_unit()
    }

    fn default_ops(&self) -> u64 {
        self.base().default_ops()
    }

    fn threads(&self) -> Threads {
        self.base().threads()
    }

    fn takes_tasks(&self) -> bool {
        self.base().takes_tasks()
    }

    fn thread_roles(&self) -> &'static str {
        self.base().thread_roles()
    }

    fn plugs(&self) -> Option<&'static dyn Plugs> {
        self.base().plugs()
    }

    fn run(&self, plan: &Plan, variant: &'static str) -> Result<Option<VariantRun>, StressError> {
        match self.plugin(variant) {
            Some(p) => self.base().run_plugin(plan, variant, p).map(Some),
            None => self.base().run(plan, variant),
        }
    }

    /// A plugin's variant runs in a child process, except in that child.
    fn isolated(&self, variant: &str) -> bool {
        atomlab_plugin::isolate::child_request().is_none() && self.plugin(variant).is_some()
    }

    fn crash_hint(&self, variant: &str, sig: i32) -> Option<String> {
        Some(self.plugin(variant)?.crash_hint(sig))
    }

    fn tag(&self, variant: &str, record: &mut atomlab_core::Record) {
        let Some(p) = self.plugin(variant) else {
            return;
        };
        p.tag(record);
        if record.verdict == Some(atomlab_core::Verdict::Pass) {
            if let Some(note) = crate::scenario::plugged::pass_covers() {
                record.param("pass_covers", "x86-tso");
                record.notes.push(format!("{variant}: {note}"));
            }
        }
        // The replay needs the plugin.
        if let Some(serde_json::Value::String(line)) = record.parameters.get("replay") {
            let command = format!("atomlab stress {}", self.name());
            let line = line.replacen(
                &command,
                &format!("{command} --plugin {}", p.path.display()),
                1,
            );
            record.param("replay", line);
        }
    }
}

/// What a plugin's PASS cannot cover on this host, when it is a TSO one
/// (x86-64): `None` elsewhere. Built-in broken variants say NOT OBSERVED
/// with a reason in the same place; a plugin's PASS must say as much.
pub(crate) fn pass_covers() -> Option<&'static str> {
    (cfg!(target_arch = "x86_64") || cfg!(target_arch = "x86")).then_some(
        "PASS on an x86-64 host, whose x86-TSO memory model makes every store a release and every locked read-modify-write a full barrier: a missing acquire or release cannot show here, so this PASS covers the algorithm and its atomicity, not the orderings an Arm or RISC-V CPU needs (nor does qemu-user, which shows no weak memory); check the build for the CPU it ships to with `atomlab verify --plugin` under that CPU's model",
    )
}
