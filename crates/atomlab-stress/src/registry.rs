//! Every stress scenario in one slice, and lookup by name. Adding a
//! scenario is a file in [`crate::scenario`] that implements
//! [`Scenario`], and one line here.

use crate::plan::{Plan, Request, Scenario, StressError};
use crate::scenario::plugged::Pluggable;
use crate::scenario::{mutex, refcount, seqlock, spsc, two_thread};

/// Every scenario, in the order the command line lists them.
pub fn all() -> &'static [&'static dyn Scenario] {
    &[
        &mutex::Mutex,
        &two_thread::Peterson,
        &two_thread::Dekker,
        &refcount::Refcount,
        &spsc::Spsc,
        &seqlock::Seqlock,
    ]
}

/// The scenario called `name`, or an error that lists them all.
pub fn find(name: &str) -> Result<&'static dyn Scenario, StressError> {
    all()
        .iter()
        .copied()
        .find(|s| s.name() == name)
        .ok_or_else(|| StressError::UnknownScenario {
            name: name.to_string(),
            valid: all()
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The scenario `name` with the variants of the plugins at `paths`
/// (include/atomlab.h) after its own, or as it is without paths: `mutex`
/// takes lock plugins, `spsc` spsc plugins and `refcount` refcount
/// plugins. Every file is loaded and checked before anything runs; a bad
/// one, or one without a variant of the scenario's kind, is the error,
/// naming the file. The scenario lives as long as the process (one per
/// command).
pub fn with_plugins(
    name: &str,
    paths: &[std::path::PathBuf],
) -> Result<&'static dyn Scenario, StressError> {
    fn load<S: Pluggable>(
        base: S,
        paths: &[std::path::PathBuf],
    ) -> Result<&'static dyn Scenario, StressError> {
        let subcommand = format!("stress {}", base.name());
        let plugins = atomlab_plugin::load_kind::<S::Fns>(paths, &subcommand)?;
        let builtin = base.variants();
        let scenario = atomlab_plugin::WithPlugins::new(base, &builtin, plugins)?;
        Ok(Box::leak(Box::new(scenario)))
    }
    if paths.is_empty() {
        return find(name);
    }
    match name {
        "mutex" => load(mutex::Mutex, paths),
        "spsc" => load(spsc::Spsc, paths),
        "refcount" => load(refcount::Refcount, paths),
        other => Err(StressError::PluginNotApplicable {
            scenario: find(other)?.name(),
            takers: "mutex (lock plugins), spsc (spsc) and refcount (refcount)",
        }),
    }
}

impl Plan {
    /// Validates `req` for the scenario it names, on a machine whose
    /// allowed CPUs are `cpus` (see [`Plan::new`]).
    pub fn from_request(req: &Request, cpus: &[usize]) -> Result<Plan, StressError> {
        Plan::new(find(&req.scenario)?, req, cpus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for (i, s) in all().iter().enumerate() {
            assert!(all()[..i].iter().all(|t| t.name() != s.name()));
            assert_eq!(find(s.name()).unwrap().name(), s.name());
            assert!(!s.variants().is_empty(), "{}", s.name());
        }
        assert!(matches!(
            find("mutx"),
            Err(StressError::UnknownScenario { .. })
        ));
    }

    /// Every variant a scenario lists, it runs (a name in the list that
    /// its `run` does not know would be skipped silently).
    #[test]
    fn every_listed_variant_runs() {
        let cpus = [0, 1];
        for s in all() {
            let req = Request {
                scenario: s.name().into(),
                variants: vec!["all".into()],
                ops: Some(64),
                seed: Some(1),
                ..Default::default()
            };
            let plan = Plan::from_request(&req, &cpus).unwrap();
            for &v in &plan.variants {
                let o = s.run(&plan, v).unwrap();
                assert_eq!(o.map(|o| o.variant), Some(v), "{} {v}", s.name());
            }
            assert!(s.run(&plan, "no-such-variant").unwrap().is_none());
        }
    }
}
