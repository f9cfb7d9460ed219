//! `--shard I/N`: a deterministic split of a command's work (check's test
//! files, stress's variants, bench's cells) into N parts, so that a batch
//! scheduler can run part I on one node: a Kubernetes Indexed Job passes
//! `$JOB_COMPLETION_INDEX`, a Slurm job array `$SLURM_ARRAY_TASK_ID`
//! (`--array=0-(N-1)`). Item k (in the command's stable order) belongs to
//! shard k mod N, so the parts are disjoint, cover everything, and differ
//! in size by at most one.

use serde::{Deserialize, Serialize};

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
