//! Users' code (plugins, `include/atomlab.h`) beside a scenario's built-in
//! variants: [`WithPlugins`] wraps a scenario that can test a plugin's
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
use crate::plan::{Plan, Scenario, StressError, Threads};

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

/// `base` with its plugins' variants after its own (atomlab-plugin's
/// [`atomlab_plugin::WithPlugins`]), a scenario of its own here.
pub type WithPlugins<S> = atomlab_plugin::WithPlugins<S, <S as Pluggable>::Fns>;

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
