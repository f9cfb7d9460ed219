//! A scenario written outside the crate goes through the same plan, cell
//! split and run as the built-in ones: the door a user's own scenario will
//! come in by (the registry lists the built-in ones; this one is passed to
//! `Plan::new` directly).

use atomlab_bench::plan::Progress;
use atomlab_bench::{BenchError, Plan, Request, Scenario, TableKind};
use atomlab_core::progress::Event;
use atomlab_core::Record;

/// Records one cell per variant and thread count, without measuring.
struct Census;

impl Scenario for Census {
    fn name(&self) -> &'static str {
        "census"
    }
    fn variants(&self) -> Vec<&'static str> {
        vec!["here", "elsewhere"]
    }
    fn unavailable(&self, variant: &str) -> Option<String> {
        (variant == "elsewhere").then(|| "elsewhere is not here".to_string())
    }
    /// None of the optional fields: no offered rates either.
    fn fields(&self) -> &'static [atomlab_bench::Field] {
        &[]
    }
    fn run(
        &self,
        plan: &Plan,
        _pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        let mut out = Vec::new();
        for v in &plan.variants {
            for &t in &plan.threads {
                progress(Event::Step(&format!("census {v} {t}")));
                let mut r = Record::new("bench", self.name(), v);
                r.param("threads", t);
                out.push(r);
            }
        }
        Ok(out)
    }
}

static CENSUS: Census = Census;

#[test]
fn a_scenario_from_outside_the_crate_plans_splits_and_runs() {
    let req = Request {
        threads: vec![1, 2, 4],
        ..Default::default()
    };
    let plan = Plan::new(&CENSUS, &req, 4).expect("valid plan");
    assert_eq!(plan.variants, ["here"]);
    assert_eq!(plan.skipped[0].0, "elsewhere");
    assert_eq!(plan.cells(), 3);
    let cells = plan.split_cells();
    assert_eq!(cells.len(), 3);
    let mut lines = Vec::new();
    let mut records = Vec::new();
    for c in &cells {
        records.extend(
            atomlab_bench::run(c, false, &mut |e| {
                if let Event::Step(l) = e {
                    lines.push(l.to_string())
                }
            })
            .unwrap(),
        );
    }
    assert_eq!(lines, ["census here 1", "census here 2", "census here 4"]);
    assert!(records.iter().all(|r| r.scenario == "census"));
    // Not in the registry, and its records name no queue capacity, CPU
    // pair or mode: they print in the timed table.
    assert_eq!(TableKind::of(&records[0]), Some(TableKind::Timed));
    // Its own rules hold: no rate, no orderings, no variant it lacks.
    for (bad, needle) in [
        (
            Request {
                rates: vec!["1M".into()],
                ..Default::default()
            },
            "not census",
        ),
        (
            Request {
                orderings: vec!["relaxed".into()],
                ..Default::default()
            },
            "census variants fix their own orderings",
        ),
        (
            Request {
                variants: vec!["elsewhere".into()],
                ..Default::default()
            },
            "elsewhere is not here",
        ),
    ] {
        let e = Plan::new(&CENSUS, &bad, 4).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
}
