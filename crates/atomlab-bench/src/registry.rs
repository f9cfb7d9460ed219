//! Every benchmark scenario in one slice and lookup by name. Adding a
//! scenario is a file in [`crate::scenario`] that implements [`Scenario`],
//! and its line in that folder's list (`crate::scenario::ALL`).

use crate::plan::{BenchError, Plan, Request, Scenario};

/// Every scenario, in the order the command line lists them
/// (`crate::scenario::ALL`, beside their modules).
pub fn all() -> &'static [&'static dyn Scenario] {
    crate::scenario::ALL
}

/// The scenario called `name`, or an error that lists them all.
pub fn find(name: &str) -> Result<&'static dyn Scenario, BenchError> {
    all()
        .iter()
        .copied()
        .find(|s| s.name() == name)
        .ok_or_else(|| BenchError::UnknownScenario {
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
) -> Result<&'static dyn Scenario, BenchError> {
    let scenario = find(name)?;
    if paths.is_empty() {
        return Ok(scenario);
    }
    match scenario.plugs() {
        Some(door) => door.load(paths),
        None => Err(BenchError::PluginNotApplicable {
            scenario: scenario.name().to_string(),
            takers: plugin_takers(),
        }),
    }
}

/// The scenarios that take plugins, each with its kind where the two
/// names differ, as a sentence lists them: "counter (op), refcount, lock and spsc".
pub fn plugin_takers() -> String {
    atomlab_plugin::variant::takers(
        all()
            .iter()
            .filter_map(|s| s.plugs().map(|p| (s.name(), p.kind()))),
    )
}

impl Plan {
    /// Validates `req` for the scenario it names, on a machine with `cpus`
    /// usable CPUs (see [`Plan::new`]).
    pub fn from_request(req: &Request, cpus: usize) -> Result<Plan, BenchError> {
        Plan::new(find(&req.scenario)?, req, cpus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Field;

    #[test]
    fn names_are_unique_and_found() {
        for (i, s) in all().iter().enumerate() {
            assert!(all()[..i].iter().all(|t| t.name() != s.name()));
            assert_eq!(find(s.name()).unwrap().name(), s.name());
            assert!(!s.variants().is_empty(), "{}", s.name());
        }
        let e = find("nope").unwrap_err().to_string();
        assert!(
            e.contains("counter, refcount, lock, fence, pingpong, spsc"),
            "{e}"
        );
    }

    /// Splitting a plan into cells keeps every cell once, one variant and
    /// one rate each; a scenario that splits thread counts gets one cell
    /// per count, the others keep theirs whole.
    #[test]
    fn every_scenario_splits_into_its_cells() {
        for s in all() {
            let req = Request {
                scenario: s.name().into(),
                threads: vec![1, 2],
                rates: if s.takes(Field::Rates) {
                    vec!["max".into(), "1M".into()]
                } else {
                    vec![]
                },
                orderings: if s.takes(Field::Orderings) {
                    vec!["relaxed".into(), "seq_cst".into()]
                } else {
                    vec![]
                },
                ..Default::default()
            };
            let p = Plan::from_request(&req, 2).unwrap();
            let cells = p.split_cells();
            assert!(cells
                .iter()
                .all(|c| c.variants.len() == 1 && c.rates.len() == 1));
            let threads = if s.splits_threads() { 2 } else { 1 };
            let orderings = if s.takes(Field::Orderings) { 2 } else { 1 };
            assert_eq!(
                cells.len(),
                p.variants.len() * p.rates.len() * orderings * threads,
                "{}",
                s.name()
            );
            assert!(cells.iter().all(|c| c.threads.len() == 3 - threads));
            if s.name() != "pingpong" {
                assert_eq!(cells.len(), p.cells(), "{}", s.name());
            }
        }
    }
}
