//! Every stress scenario in one slice, and lookup by name. Adding a
//! scenario is a file in `crate::scenario` that implements
//! [`Scenario`], and its line in that folder's list
//! (`crate::scenario::ALL`).

use crate::plan::{Plan, Request, Scenario, StressError};

/// Every scenario, in the order the command line lists them
/// (`crate::scenario::ALL`, beside their modules).
pub fn all() -> &'static [&'static dyn Scenario] {
    crate::scenario::ALL
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
/// (include/atomlab.h) after its own, or as it is without paths: each
/// scenario that takes plugins says their kind ([`Scenario::plugs`]).
pub fn with_plugins(
    name: &str,
    paths: &[std::path::PathBuf],
) -> Result<&'static dyn Scenario, StressError> {
    let scenario = find(name)?;
    if paths.is_empty() {
        return Ok(scenario);
    }
    match scenario.plugs() {
        Some(door) => door.load(paths),
        None => Err(StressError::PluginNotApplicable {
            scenario: scenario.name(),
            takers: plugin_takers(),
        }),
    }
}

/// The scenarios that take plugins, each with its kind where the two
/// names differ, as a sentence lists them: "mutex (lock), refcount and spsc".
pub fn plugin_takers() -> String {
    atomlab_plugin::variant::takers(
        all()
            .iter()
            .filter_map(|s| s.plugs().map(|p| (s.name(), p.kind()))),
    )
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
