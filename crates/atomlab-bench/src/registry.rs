//! Every benchmark scenario in one slice, lookup by name, and which table
//! a record prints in. Adding a scenario is a file in [`crate::scenario`]
//! that implements [`Scenario`], and one line here.

use atomlab_core::Record;

use crate::plan::{BenchError, Plan, Request, Scenario, TableKind};
use crate::scenario::plugged::Pluggable;
use crate::scenario::{counter, fence, lock, pingpong, refcount, spsc};

/// Every scenario, in the order the command line lists them.
pub fn all() -> &'static [&'static dyn Scenario] {
    &[
        &counter::Counter,
        &refcount::Refcount,
        &lock::Lock,
        &fence::Fence,
        &pingpong::Pingpong,
        &spsc::Spsc,
    ]
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
/// (include/atomlab.h) after its own, or as it is without paths: `lock`
/// takes lock plugins, `spsc` spsc plugins, `refcount` refcount plugins
/// and `counter` op plugins.
/// Every file is loaded and checked before anything runs; a bad one, or
/// one without a variant of the scenario's kind, is the error, naming the
/// file. The scenario lives as long as the process (one per command).
pub fn with_plugins(
    name: &str,
    paths: &[std::path::PathBuf],
) -> Result<&'static dyn Scenario, BenchError> {
    fn load<S: Pluggable>(
        base: S,
        paths: &[std::path::PathBuf],
    ) -> Result<&'static dyn Scenario, BenchError> {
        let subcommand = format!("bench {}", base.name());
        let plugins = atomlab_plugin::load_kind::<S::Fns>(paths, &subcommand)?;
        let builtin = base.variants();
        let scenario = atomlab_plugin::WithPlugins::new(base, &builtin, plugins)?;
        Ok(Box::leak(Box::new(scenario)))
    }
    if paths.is_empty() {
        return find(name);
    }
    match name {
        "lock" => load(lock::Lock, paths),
        "spsc" => load(spsc::Spsc, paths),
        "refcount" => load(refcount::Refcount, paths),
        "counter" => load(counter::Counter, paths),
        other => Err(BenchError::PluginNotApplicable {
            scenario: find(other)?.name().to_string(),
            takers: "lock (lock plugins), spsc (spsc), refcount (refcount) and counter (op)".into(),
        }),
    }
}

/// The table a bench record prints in: its scenario's, where that is a
/// round trip or a queue; else by the record's mode (fixed work, fixed
/// rate, or timed). A record of a scenario not listed here is timed; one
/// with a mode this version does not know prints in none.
pub fn table_of(r: &Record) -> Option<TableKind> {
    let kind = find(&r.scenario).map_or(TableKind::Timed, |s| s.table());
    if kind != TableKind::Timed {
        return Some(kind);
    }
    match r.parameters.get("mode").map(|m| m.as_str()) {
        Some(Some("fixed-work")) => Some(TableKind::FixedWork),
        Some(Some("fixed-rate")) => Some(TableKind::FixedRate),
        Some(_) => None,
        None => Some(TableKind::Timed),
    }
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
                rates: if s.takes_rate() {
                    vec!["max".into(), "1M".into()]
                } else {
                    vec![]
                },
                orderings: if s.takes_orderings() {
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
            let orderings = if s.takes_orderings() { 2 } else { 1 };
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

    #[test]
    fn records_print_in_their_scenarios_tables() {
        let rec = |scenario: &str, mode: Option<&str>| {
            let mut r = Record::new("bench", scenario, "v");
            if let Some(m) = mode {
                r.param("mode", m);
            }
            table_of(&r)
        };
        use TableKind::*;
        assert_eq!(rec("counter", None), Some(Timed));
        assert_eq!(rec("lock", Some("fixed-work")), Some(FixedWork));
        assert_eq!(rec("refcount", Some("fixed-rate")), Some(FixedRate));
        assert_eq!(rec("pingpong", None), Some(RoundTrip));
        assert_eq!(rec("spsc", Some("fixed-rate")), Some(Queue));
        assert_eq!(rec("spsc", None), Some(Queue));
        assert_eq!(rec("someone-elses", None), Some(Timed));
        assert_eq!(rec("lock", Some("fixed-mood")), None);
    }
}
