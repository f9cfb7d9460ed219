//! Alternating rounds: the way `atomlab compare --interleave N` gathers
//! its two samples. One job: run A and B one after the other, A B A B …,
//! `N` rounds, pooling each side's records, so that slow drift of a
//! shared machine (thermal state, other tenants, frequency) falls on both
//! sides instead of on whichever ran second (hyperfine's and benchstat's
//! advice: interleave the runs you compare). What a round runs is the
//! caller's: [`interleave`] takes any closure, and [`Interleaved`] runs
//! two atomlab commands (`--interleave N -- ARGS_A -- ARGS_B`), each
//! round's child started by the caller (the CLI re-executes itself) and
//! its `--json` document read here.

use atomlab_core::{shell, Record, Report};

use crate::ab::Side;

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

/// Why two commands cannot be interleaved as given.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InterleaveError {
    /// Zero rounds asked for.
    NoRounds,
    /// The words hold no `--` between the two commands.
    NotTwoCommands,
    /// One of the two commands has no words.
    EmptyCommand,
}

impl std::fmt::Display for InterleaveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InterleaveError::NoRounds => "interleaving needs at least 1 round",
            InterleaveError::NotTwoCommands => "interleaving needs two commands separated by `--`",
            InterleaveError::EmptyCommand => "one of the two commands is empty",
        })
    }
}

impl std::error::Error for InterleaveError {}

/// Why one round's command gave no records.
#[derive(Debug)]
#[non_exhaustive]
pub enum RoundError {
    /// It refused its arguments (exit 2) and said why on its stderr.
    Refused {
        /// Its words (`bench lock --variant ttas`).
        command: String,
    },
    /// Its stdout is not a `--json` document.
    NoDocument {
        /// Its words.
        command: String,
        /// Why the document could not be read.
        error: serde_json::Error,
    },
}

impl std::fmt::Display for RoundError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoundError::Refused { command } => {
                write!(f, "atomlab {command} was refused (exit 2): see above")
            }
            RoundError::NoDocument { command, .. } => {
                write!(f, "atomlab {command} did not print a --json document")
            }
        }
    }
}

impl std::error::Error for RoundError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RoundError::Refused { .. } => None,
            RoundError::NoDocument { error, .. } => Some(error),
        }
    }
}

/// One run of one side's command, for the caller to start: atomlab with
/// `command`'s words, `--json` and `--label label`.
#[derive(Debug, Clone, Copy)]
pub struct Round<'a> {
    /// The side.
    pub arm: Arm,
    /// Which round, from 1.
    pub round: usize,
    /// Of how many.
    pub rounds: usize,
    /// The side's atomlab words, without the program name.
    pub command: &'a [String],
    /// The label its run is saved under (`interleave-A`, `L-B`).
    pub label: &'a str,
}

/// What the started command gave: its exit code (`None` when a signal
/// ended it) and its stdout, the `--json` document.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The exit code.
    pub code: Option<i32>,
    /// Its standard output.
    pub stdout: Vec<u8>,
}

/// Two atomlab commands to run alternately, `rounds` times each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interleaved {
    rounds: usize,
    a: Vec<String>,
    b: Vec<String>,
}

impl Interleaved {
    /// `rounds` rounds of the two commands in `words` (`ARGS_A -- ARGS_B`,
    /// atomlab's words without the program name).
    pub fn new(rounds: usize, words: &[String]) -> Result<Interleaved, InterleaveError> {
        if rounds == 0 {
            return Err(InterleaveError::NoRounds);
        }
        let split = words
            .iter()
            .position(|w| w == "--")
            .ok_or(InterleaveError::NotTwoCommands)?;
        let (a, b) = (&words[..split], &words[split + 1..]);
        if a.is_empty() || b.is_empty() {
            return Err(InterleaveError::EmptyCommand);
        }
        Ok(Interleaved {
            rounds,
            a: a.to_vec(),
            b: b.to_vec(),
        })
    }

    /// The words of side `arm`'s command.
    pub fn command(&self, arm: Arm) -> &[String] {
        match arm {
            Arm::A => &self.a,
            Arm::B => &self.b,
        }
    }

    /// Runs the rounds ([`interleave`]): `start` starts each round's command
    /// and returns how it ended; its `--json` document is read here. Each
    /// side's runs are saved under the label `BASE-A` / `BASE-B` (`BASE`:
    /// `label`, else `interleave`); the sides are named by their command
    /// lines as a shell takes them (`atomlab load … --spawn 'exec nginx'`). The first error stops the rounds: the
    /// caller's, or a [`RoundError`] (a refused command, no document).
    pub fn run<E: From<RoundError>>(
        &self,
        label: Option<&str>,
        mut start: impl FnMut(&Round<'_>) -> Result<Finished, E>,
    ) -> Result<(Side, Side), E> {
        let base = label.unwrap_or("interleave");
        let (a, b) = interleave(self.rounds, |arm, round| -> Result<Vec<Record>, E> {
            let command = self.command(arm);
            let done = start(&Round {
                arm,
                round,
                rounds: self.rounds,
                command,
                label: &format!("{base}-{}", arm.tag()),
            })?;
            let words = || command.join(" ");
            if done.code == Some(2) {
                return Err(RoundError::Refused { command: words() }.into());
            }
            let report: Report =
                serde_json::from_slice(&done.stdout).map_err(|error| RoundError::NoDocument {
                    command: words(),
                    error,
                })?;
            Ok(report.records)
        })?;
        Ok((
            Side::new(format!("atomlab {}", shell::quoted(&self.a)), a),
            Side::new(format!("atomlab {}", shell::quoted(&self.b)), b),
        ))
    }
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

    fn words(w: &str) -> Vec<String> {
        w.split(' ').map(String::from).collect()
    }

    /// The two commands split at `--`; zero rounds, no `--` and an empty
    /// side are refused before anything runs.
    #[test]
    fn commands_split_at_the_double_dash() {
        let i = Interleaved::new(2, &words("bench lock -- bench lock --variant tas")).unwrap();
        assert_eq!(i.command(Arm::A), words("bench lock"));
        assert_eq!(i.command(Arm::B), words("bench lock --variant tas"));
        assert_eq!(
            Interleaved::new(0, &words("a -- b")),
            Err(InterleaveError::NoRounds)
        );
        assert_eq!(
            Interleaved::new(1, &words("bench lock")),
            Err(InterleaveError::NotTwoCommands)
        );
        assert_eq!(
            Interleaved::new(1, &words("bench lock --")),
            Err(InterleaveError::EmptyCommand)
        );
    }

    #[derive(Debug)]
    enum Fails {
        Round(RoundError),
        Start,
    }

    impl From<RoundError> for Fails {
        fn from(e: RoundError) -> Fails {
            Fails::Round(e)
        }
    }

    /// Each round starts its side's command under the side's label, and
    /// the records of the documents they print pool into named sides; a
    /// refused command (exit 2), a stdout that is no document and the
    /// starter's own error stop the rounds.
    #[test]
    fn rounds_read_each_side_s_documents() {
        let machine = atomlab_core::Machine::detect();
        let doc = |variant: &str| {
            let r = Record::new("bench", "lock", variant);
            serde_json::to_vec(&Report::new("bench", machine.clone(), vec![r])).unwrap()
        };
        let i = Interleaved::new(2, &words("bench lock --variant ttas -- bench lock")).unwrap();
        let mut started = Vec::new();
        let (a, b) = i
            .run(Some("L"), |r: &Round<'_>| -> Result<Finished, Fails> {
                started.push(format!(
                    "{}{}/{} {}",
                    r.arm.tag(),
                    r.round,
                    r.rounds,
                    r.label
                ));
                Ok(Finished {
                    code: Some(0),
                    stdout: doc(&format!("{}{}", r.arm.tag(), r.round)),
                })
            })
            .unwrap();
        assert_eq!(started, ["A1/2 L-A", "B1/2 L-B", "A2/2 L-A", "B2/2 L-B"]);
        assert_eq!(a.name, "atomlab bench lock --variant ttas");
        assert_eq!(b.name, "atomlab bench lock");
        let variants = |s: &Side| {
            s.records
                .iter()
                .map(|r| r.variant.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(variants(&a), ["A1", "A2"]);
        assert_eq!(variants(&b), ["B1", "B2"]);
        let ended = |code: Option<i32>, stdout: &[u8]| {
            i.run(None, |r: &Round<'_>| -> Result<Finished, Fails> {
                assert_eq!(r.label, format!("interleave-{}", r.arm.tag()));
                Ok(Finished {
                    code,
                    stdout: stdout.to_vec(),
                })
            })
            .unwrap_err()
        };
        let refused = ended(Some(2), b"");
        assert!(
            matches!(&refused, Fails::Round(e @ RoundError::Refused { .. })
                if e.to_string() == "atomlab bench lock --variant ttas was refused (exit 2): see above"),
            "{refused:?}"
        );
        let garbled = ended(Some(1), b"no json");
        assert!(
            matches!(&garbled, Fails::Round(e @ RoundError::NoDocument { .. })
                if e.to_string() == "atomlab bench lock --variant ttas did not print a --json document"
                    && std::error::Error::source(e).is_some()),
            "{garbled:?}"
        );
        let mut tries = 0;
        let stopped = i.run(None, |_: &Round<'_>| -> Result<Finished, Fails> {
            tries += 1;
            Err(Fails::Start)
        });
        assert!(matches!(stopped, Err(Fails::Start)) && tries == 1);
    }
}
