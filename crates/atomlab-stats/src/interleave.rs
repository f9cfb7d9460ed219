//! Alternating rounds: the way `atomlab compare --interleave N` gathers
//! its two samples. One job: run A and B one after the other, A B A B …,
//! `N` rounds, pooling each side's records, so that slow drift of a
//! shared machine (thermal state, other tenants, frequency) falls on both
//! sides instead of on whichever ran second (hyperfine's and benchstat's
//! advice: interleave the runs you compare). What a round runs is the
//! caller's: the CLI starts one atomlab command per side.

use atomlab_core::Record;

/// One of the two sides of an A/B comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arm {
    /// The baseline.
    A,
    /// The candidate.
    B,
}

impl Arm {
    /// `A` or `B`.
    pub fn tag(self) -> &'static str {
        match self {
            Arm::A => "A",
            Arm::B => "B",
        }
    }
}

/// Runs `run(arm, round)` for rounds 1 to `rounds`, A then B in each, and
/// pools each side's records in that order; the first error stops it.
pub fn interleave<E>(
    rounds: usize,
    mut run: impl FnMut(Arm, usize) -> Result<Vec<Record>, E>,
) -> Result<(Vec<Record>, Vec<Record>), E> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        a.extend(run(Arm::A, round)?);
        b.extend(run(Arm::B, round)?);
    }
    Ok((a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three rounds run A B A B A B, each side's records pooled in
    /// round order; an error stops the rounds.
    #[test]
    fn sides_alternate_and_pool() {
        let mut calls = Vec::new();
        let (a, b) = interleave::<()>(3, |arm, round| {
            calls.push(format!("{}{round}", arm.tag()));
            Ok(vec![Record::new("bench", arm.tag(), &round.to_string())])
        })
        .unwrap();
        assert_eq!(calls, ["A1", "B1", "A2", "B2", "A3", "B3"]);
        let variants = |v: &[Record]| v.iter().map(|r| r.variant.clone()).collect::<Vec<_>>();
        assert_eq!(variants(&a), ["1", "2", "3"]);
        assert_eq!(variants(&b), ["1", "2", "3"]);
        assert!(a.iter().all(|r| r.scenario == "A") && b.iter().all(|r| r.scenario == "B"));
        let mut ran = 0;
        let stopped = interleave(3, |arm, _| {
            ran += 1;
            if arm == Arm::B {
                Err("refused")
            } else {
                Ok(vec![])
            }
        });
        assert_eq!(stopped, Err("refused"));
        assert_eq!(ran, 2);
    }
}
