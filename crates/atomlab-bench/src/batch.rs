//! A plan run cell by cell: the batch call behind `atomlab bench` and the
//! bench part of `atomlab suite`. One job: split a [`Plan`] into its cells
//! (the part a [`Shard`] selects), run each, and mark the records with the
//! shard and the variants the plan skipped, handing the records so far to
//! the caller after every cell (`--export-json` rewrites its file there).

use atomlab_core::{Machine, PmuStatus, Record, Shard};

use crate::plan::{BenchError, Plan, Progress};

/// The cells of `plan` that `shard` runs (every cell without one), one
/// plan each, in table order.
pub fn cells(plan: &Plan, shard: Option<Shard>) -> Vec<Plan> {
    match shard {
        Some(s) => s.select(plan.split_cells()),
        None => plan.split_cells(),
    }
}

/// How many steps [`run`] reports through its progress (its
/// [`Event::Begin`](atomlab_core::progress::Event::Begin)): the cells of
/// the plans [`cells`] gives.
pub fn steps(plan: &Plan, shard: Option<Shard>) -> usize {
    cells(plan, shard).iter().map(Plan::cells).sum()
}

/// Probes the PMU once and records the answer in `machine` (the tables say
/// it once, under the figures; `--json` carries it in `machine.pmu`):
/// whether hardware counters work here, the `pmu` that [`run`] takes.
pub fn probe_pmu(machine: &mut Machine) -> bool {
    match crate::pmu::probe() {
        Ok(()) => {
            machine.pmu = PmuStatus {
                available: true,
                reason: None,
            };
            true
        }
        Err(reason) => {
            machine.pmu = PmuStatus {
                available: false,
                reason: Some(reason),
            };
            false
        }
    }
}

/// Runs `plan` cell by cell (the part `shard` selects), calling
/// `after_each` with the records so far. `pmu` says whether hardware
/// counters work here (probe them once with [`probe_pmu`]).
pub fn run<E: From<BenchError>>(
    plan: &Plan,
    pmu: bool,
    shard: Option<Shard>,
    progress: Progress<'_>,
    mut after_each: impl FnMut(&[Record]) -> Result<(), E>,
) -> Result<Vec<Record>, E> {
    let mut records = Vec::new();
    progress(atomlab_core::progress::Event::Begin {
        total: steps(plan, shard),
        what: "cells",
    });
    for one in &cells(plan, shard) {
        let mut recs = crate::run(one, pmu, progress)?;
        if let Some(s) = shard {
            for r in &mut recs {
                r.param("shard", s.to_string());
            }
        }
        for (v, why) in &plan.skipped {
            for r in &mut recs {
                r.notes.push(format!("variant {v} skipped: {why}"));
            }
        }
        records.append(&mut recs);
        after_each(&records)?;
    }
    // Once per run (the first shard's part of it), after the cells: what
    // the plugin ABI's calls cost here, beside plugins' figures.
    if shard.is_none_or(|s| s.index == 0) {
        let mut recs = plan.scenario.baseline(plan, pmu, progress)?;
        if let Some(s) = shard {
            for r in &mut recs {
                r.param("shard", s.to_string());
            }
        }
        if !recs.is_empty() {
            records.append(&mut recs);
            after_each(&records)?;
        }
    }
    progress(atomlab_core::progress::Event::End);
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The machine says what the probe found: available with no reason,
    /// or not available with the probe's own reason (never "not probed").
    #[test]
    fn probe_pmu_records_the_answer_in_the_machine() {
        let mut machine = Machine::detect();
        machine.pmu = PmuStatus::not_probed();
        let works = probe_pmu(&mut machine);
        let expected = match crate::pmu::probe() {
            Ok(()) => PmuStatus {
                available: true,
                reason: None,
            },
            Err(reason) => PmuStatus {
                available: false,
                reason: Some(reason),
            },
        };
        assert_eq!(works, expected.available);
        assert_eq!(machine.pmu, expected);
        assert_ne!(machine.pmu, PmuStatus::not_probed());
    }
    use crate::Request;

    fn tiny(threads: Vec<usize>) -> Plan {
        let req = Request {
            scenario: "counter".into(),
            variants: vec!["fetch_add".into(), "cas_loop".into()],
            threads,
            duration: Some(0.01),
            warmup: Some(0.0),
            runs: Some(1),
            ..Default::default()
        };
        Plan::from_request(&req, 2).unwrap()
    }

    /// Two shards take every cell once between them, and each record
    /// says which shard made it.
    #[test]
    fn shards_split_the_cells_and_mark_their_records() {
        let plan = tiny(vec![1, 2]);
        let all = steps(&plan, None);
        assert_eq!(all, 4);
        let halves: Vec<Shard> = (0..2).map(|i| Shard { index: i, count: 2 }).collect();
        assert_eq!(
            halves.iter().map(|s| steps(&plan, Some(*s))).sum::<usize>(),
            all
        );
        let mut seen = Vec::new();
        let recs = run::<BenchError>(&plan, false, Some(halves[1]), &mut |_| {}, |so_far| {
            seen.push(so_far.len());
            Ok(())
        })
        .unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(seen, vec![1, 2]);
        for r in &recs {
            assert_eq!(r.parameters["shard"], "1/2");
        }
    }
}
