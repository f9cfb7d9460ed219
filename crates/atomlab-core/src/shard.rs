//! `--shard I/N`: a deterministic split of a command's work (check's test
//! files, stress's variants, bench's cells) into N parts, so that a batch
//! scheduler can run part I on one node: a Kubernetes Indexed Job passes
//! `$JOB_COMPLETION_INDEX`, a Slurm job array `$SLURM_ARRAY_TASK_ID`
//! (`--array=0-(N-1)`). Item k (in the command's stable order) belongs to
//! shard k mod N, so the parts are disjoint, cover everything, and differ
//! in size by at most one.
//!
//! A shard with nothing to do (`--shard 3/5` of 2 tests) still saves one
//! record, [`Shard::empty_record`], so that the runs of a label say how
//! many shards the job had and [`missing`] can tell which never arrived.

use serde::{Deserialize, Serialize};

use crate::Record;

/// The scenario of an empty shard's record: not a name any test, scenario
/// or binary takes (it has a space).
pub const EMPTY_SHARD: &str = "empty shard";

/// Part `index` (0-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which part, from 0.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

impl Shard {
    /// Parses `I/N` with 0 <= I < N.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "'{s}' is not a shard: write I/N with 0 <= I < N, e.g. 0/4 (Kubernetes: $JOB_COMPLETION_INDEX/N; Slurm: $SLURM_ARRAY_TASK_ID/N with --array=0-(N-1))"
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Whether item `k` of the stable order belongs to this shard.
    pub fn keeps(&self, k: usize) -> bool {
        k % self.count == self.index
    }

    /// The items of `items` that belong to this shard, in order.
    pub fn select<T>(&self, items: impl IntoIterator<Item = T>) -> Vec<T> {
        items
            .into_iter()
            .enumerate()
            .filter(|(k, _)| self.keeps(*k))
            .map(|(_, t)| t)
            .collect()
    }

    /// The one record of a run whose shard had nothing to do: no metrics,
    /// no verdict, the shard in its `shard` parameter as every sharded
    /// record has it.
    pub fn empty_record(&self, capability: &str) -> Record {
        let mut r = Record::new(capability, EMPTY_SHARD, "-");
        r.param("shard", self.to_string());
        r.notes.push(format!(
            "shard {self} had nothing to run: the work splits into fewer than {} parts",
            self.count
        ));
        r
    }

    /// The shard a record was made in (its `shard` parameter), if any.
    pub fn of_record(r: &Record) -> Option<Shard> {
        Shard::parse(r.parameters.get("shard")?.as_str()?).ok()
    }
}

/// Whether `r` is an empty shard's record ([`Shard::empty_record`]), which
/// stands for no figure and is left out of tables and comparisons.
pub fn is_empty_record(r: &Record) -> bool {
    r.scenario == EMPTY_SHARD && r.metrics.is_empty() && r.verdict.is_none()
}

/// Shards of one job (a capability split into `count` parts) that no
/// record comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The capability split (`check`, `bench`, `stress`).
    pub capability: String,
    /// How many parts the job was split into.
    pub count: usize,
    /// The parts no record comes from, in order.
    pub missing: Vec<usize>,
}

/// Which shards `records` (the runs of one label, pooled) lack, per
/// capability and shard count; empty when every shard is there or
/// nothing is sharded.
pub fn missing<'a>(records: impl IntoIterator<Item = &'a Record>) -> Vec<Missing> {
    let mut seen: std::collections::BTreeMap<(String, usize), Vec<bool>> = Default::default();
    for r in records {
        if let Some(s) = Shard::of_record(r) {
            seen.entry((r.capability.clone(), s.count))
                .or_insert_with(|| vec![false; s.count])[s.index] = true;
        }
    }
    seen.into_iter()
        .filter_map(|((capability, count), present)| {
            let missing: Vec<usize> = (0..count).filter(|&i| !present[i]).collect();
            (!missing.is_empty()).then_some(Missing {
                capability,
                count,
                missing,
            })
        })
        .collect()
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_disjoint_and_cover_everything() {
        for n in 1..6 {
            let mut seen = [0; 23];
            for i in 0..n {
                let s = Shard::parse(&format!("{i}/{n}")).unwrap();
                let part = s.select(0..23);
                assert!(part.len() >= 23 / n && part.len() <= 23 / n + 1);
                for k in part {
                    seen[k] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c == 1));
        }
    }

    #[test]
    fn missing_shards_are_found_and_empty_ones_count() {
        let rec = |cap: &str, s: &str| {
            let mut r = Record::new(cap, "MP", "sc");
            r.param("shard", s);
            r
        };
        let empty = Shard::parse("3/5").unwrap().empty_record("check");
        assert!(is_empty_record(&empty));
        assert!(!is_empty_record(&rec("check", "1/5")));
        let recs = [
            rec("check", "1/5"),
            rec("check", "1/5"),
            empty,
            rec("bench", "0/2"),
        ];
        assert_eq!(
            missing(&recs),
            vec![
                Missing {
                    capability: "bench".into(),
                    count: 2,
                    missing: vec![1]
                },
                Missing {
                    capability: "check".into(),
                    count: 5,
                    missing: vec![0, 2, 4]
                },
            ]
        );
        let whole = [
            rec("bench", "0/2"),
            rec("bench", "1/2"),
            Record::new("check", "MP", "sc"),
        ];
        assert!(missing(&whole).is_empty());
    }

    #[test]
    fn bad_shards_are_refused() {
        for s in ["", "1", "4/4", "-1/4", "a/b", "0/0", "1/2/3"] {
            assert!(Shard::parse(s).is_err(), "{s}");
        }
        assert_eq!(
            Shard::parse(" 3 / 4 ").unwrap(),
            Shard { index: 3, count: 4 }
        );
    }
}
