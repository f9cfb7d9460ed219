//! From the command line's words to a validated [`Plan`], or a
//! [`StressError`] that names what was wrong and lists the valid choices.

use atomlab_prims::broken::BROKEN_LOCK_NAMES;
use atomlab_prims::lock::LOCK_NAMES;
use atomlab_prims::seqlock::SEQLOCK_NAMES;
use atomlab_prims::spsc::SPSC_NAMES;

use crate::scenario::refcount::REFCOUNT_NAMES;

/// More threads than this is a typo, not a stress test.
pub const MAX_THREADS: usize = 1024;
/// Seconds a variant may run before it is stopped with a TIMEOUT verdict.
pub const DEFAULT_TIME_LIMIT: f64 = 60.0;
/// More operations than this would run for days.
pub const MAX_OPS: u64 = 1_000_000_000_000;

/// Bad input: every message names the flag or value and what would do.
#[derive(Debug, thiserror::Error)]
pub enum StressError {
    /// No such scenario.
    #[error("unknown scenario '{name}': choose one of {valid}")]
    UnknownScenario {
        /// What was asked for.
        name: String,
        /// The valid scenarios.
        valid: String,
    },
    /// No such variant in this scenario.
    #[error("unknown {scenario} variant '{name}': choose from {valid}, or correct, broken, all")]
    UnknownVariant {
        /// The scenario.
        scenario: &'static str,
        /// What was asked for.
        name: String,
        /// The valid variants.
        valid: String,
    },
    /// A flag with a value out of range.
    #[error("{flag} {value}: {why}")]
    OutOfRange {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: String,
        /// What the value must be.
        why: String,
    },
    /// A flag that this scenario does not take.
    #[error("{flag} applies to the {applies} scenario only, not {scenario}")]
    NotApplicable {
        /// The flag.
        flag: &'static str,
        /// Where it applies.
        applies: &'static str,
        /// The scenario asked for.
        scenario: &'static str,
    },
    /// No such pinning layout.
    #[error("unknown --pin '{0}': choose spread (round-robin over the allowed CPUs), same (all on one CPU) or none")]
    UnknownPin(String),
}

/// The torture scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Many threads through one lock (the 002 shape).
    Mutex,
    /// Peterson's two-thread lock.
    Peterson,
    /// Dekker's two-thread lock.
    Dekker,
    /// Objects shared by reference counts.
    Refcount,
    /// A single-producer single-consumer ring (the 004 shape).
    Spsc,
    /// A sequence lock with racing readers.
    Seqlock,
}

impl Scenario {
    /// Every scenario.
    pub const ALL: [Scenario; 6] = [
        Scenario::Mutex,
        Scenario::Peterson,
        Scenario::Dekker,
        Scenario::Refcount,
        Scenario::Spsc,
        Scenario::Seqlock,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Mutex => "mutex",
            Scenario::Peterson => "peterson",
            Scenario::Dekker => "dekker",
            Scenario::Refcount => "refcount",
            Scenario::Spsc => "spsc",
            Scenario::Seqlock => "seqlock",
        }
    }

    /// Every variant, correct ones first; broken ones are named `broken-…`.
    pub fn variants(self) -> Vec<&'static str> {
        match self {
            Scenario::Mutex => LOCK_NAMES
                .iter()
                .chain(&BROKEN_LOCK_NAMES)
                .copied()
                .collect(),
            Scenario::Peterson => vec!["peterson-fence", "broken-peterson-nofence"],
            Scenario::Dekker => vec!["dekker-fence", "broken-dekker-nofence"],
            Scenario::Refcount => REFCOUNT_NAMES.to_vec(),
            Scenario::Spsc => {
                let mut v = SPSC_NAMES.to_vec();
                // The sleeping consumer's doorbell, correct and without its
                // fences (crate::scenario::spsc).
                let at = v.iter().position(|n| is_broken(n)).unwrap_or(v.len());
                v.insert(at, crate::scenario::spsc::NOTIFY);
                v.push(crate::scenario::spsc::BROKEN_NOTIFY);
                v
            }
            Scenario::Seqlock => SEQLOCK_NAMES.to_vec(),
        }
    }

    /// Operations when `--ops` is not given.
    pub fn default_ops(self) -> u64 {
        match self {
            // 002: 1,000,000 increments.
            Scenario::Mutex => 1_000_000,
            Scenario::Peterson | Scenario::Dekker => 2_000_000,
            Scenario::Refcount => 4_000_000,
            Scenario::Spsc => 10_000_000,
            Scenario::Seqlock => 2_000_000,
        }
    }

    /// The thread count the scenario is built for, if it has only one.
    fn fixed_threads(self) -> Option<usize> {
        match self {
            Scenario::Peterson | Scenario::Dekker | Scenario::Spsc => Some(2),
            _ => None,
        }
    }

    /// What `--ops` counts.
    pub fn ops_unit(self) -> &'static str {
        match self {
            Scenario::Mutex | Scenario::Peterson | Scenario::Dekker => "critical sections",
            Scenario::Refcount => "reference operations",
            Scenario::Spsc => "items",
            Scenario::Seqlock => "accepted reads",
        }
    }
}

/// Whether a variant name is a deliberately broken one.
pub fn is_broken(variant: &str) -> bool {
    variant.starts_with("broken-")
}

/// Where threads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    /// Round-robin over the allowed CPUs (the default).
    Spread,
    /// Every thread on the first allowed CPU (only preemption interleaves them).
    Same,
    /// Wherever the scheduler puts them.
    None,
}

impl Pin {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Pin::Spread => "spread",
            Pin::Same => "same",
            Pin::None => "none",
        }
    }

    /// The CPU for thread `t`, if pinned.
    pub fn cpu_for(self, t: usize, cpus: &[usize]) -> Option<usize> {
        match self {
            _ if cpus.is_empty() => None,
            Pin::Spread => Some(cpus[t % cpus.len()]),
            Pin::Same => Some(cpus[0]),
            Pin::None => None,
        }
    }
}

/// The command line's words, before validation.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Scenario name.
    pub scenario: String,
    /// Variant names, or `all`, `correct`, `broken`; empty means `correct`.
    pub variants: Vec<String>,
    /// Threads (mutex: workers; seqlock: 1 writer + readers; refcount: holders).
    pub threads: Option<usize>,
    /// Operations in all (see [`Scenario::ops_unit`]).
    pub ops: Option<u64>,
    /// mutex: tasks the increments are split over (default 20).
    pub tasks: Option<u64>,
    /// Seed of the jitter and payloads; fresh when absent.
    pub seed: Option<u64>,
    /// Random short spins between operations.
    pub jitter: bool,
    /// `spread`, `same` or `none`.
    pub pin: Option<String>,
    /// Seconds after which a variant's run is stopped (TIMEOUT); default 60.
    pub time_limit: Option<f64>,
}

/// A validated stress run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The scenario.
    pub scenario: Scenario,
    /// Variants to run, in order.
    pub variants: Vec<&'static str>,
    /// Threads.
    pub threads: usize,
    /// Operations in all.
    pub ops: u64,
    /// Whether `--ops` was given (a variant whose operations are far
    /// slower than its scenario's may then pick its own default).
    pub ops_given: bool,
    /// mutex tasks.
    pub tasks: u64,
    /// The seed.
    pub seed: u64,
    /// `--jitter`.
    pub jitter: bool,
    /// Thread placement.
    pub pin: Pin,
    /// The CPUs this process may use.
    pub cpus: Vec<usize>,
    /// Seconds after which a variant's run is stopped.
    pub time_limit: f64,
}

impl Plan {
    /// Validates `req` for a machine whose allowed CPUs are `cpus`.
    pub fn from_request(req: &Request, cpus: &[usize]) -> Result<Plan, StressError> {
        let scenario = Scenario::ALL
            .into_iter()
            .find(|s| s.name() == req.scenario)
            .ok_or_else(|| StressError::UnknownScenario {
                name: req.scenario.clone(),
                valid: Scenario::ALL.map(|s| s.name()).join(", "),
            })?;
        let known = scenario.variants();
        let mut variants: Vec<&'static str> = Vec::new();
        let words: Vec<&str> = if req.variants.is_empty() {
            vec!["correct"]
        } else {
            req.variants.iter().map(|s| s.trim()).collect()
        };
        for w in words {
            let chosen: Vec<&'static str> = match w {
                "all" => known.clone(),
                "correct" => known.iter().copied().filter(|v| !is_broken(v)).collect(),
                "broken" => known.iter().copied().filter(|v| is_broken(v)).collect(),
                name => vec![known.iter().copied().find(|v| *v == name).ok_or_else(|| {
                    StressError::UnknownVariant {
                        scenario: scenario.name(),
                        name: name.to_string(),
                        valid: known.join(", "),
                    }
                })?],
            };
            for v in chosen {
                if !variants.contains(&v) {
                    variants.push(v);
                }
            }
        }
        let ncpu = cpus.len().max(1);
        let threads = match (scenario.fixed_threads(), req.threads) {
            (Some(n), Some(t)) if t != n => {
                return Err(StressError::OutOfRange {
                    flag: "--threads",
                    value: t.to_string(),
                    why: format!("{} runs exactly {n} threads", scenario.name()),
                })
            }
            (Some(n), _) => n,
            (None, Some(0)) => {
                return Err(StressError::OutOfRange {
                    flag: "--threads",
                    value: "0".into(),
                    why: "at least one thread is needed".into(),
                })
            }
            (None, Some(t)) if t > MAX_THREADS => {
                return Err(StressError::OutOfRange {
                    flag: "--threads",
                    value: t.to_string(),
                    why: format!("at most {MAX_THREADS}"),
                })
            }
            (None, Some(1)) if scenario == Scenario::Seqlock => {
                return Err(StressError::OutOfRange {
                    flag: "--threads",
                    value: "1".into(),
                    why: "seqlock needs a writer and at least one reader (2 or more)".into(),
                })
            }
            (None, Some(t)) => t,
            (None, None) => match scenario {
                Scenario::Seqlock | Scenario::Refcount => ncpu.max(2),
                _ => ncpu,
            },
        };
        let ops = req.ops.unwrap_or_else(|| scenario.default_ops());
        if ops == 0 || ops > MAX_OPS {
            return Err(StressError::OutOfRange {
                flag: "--ops",
                value: ops.to_string(),
                why: format!("between 1 and {MAX_OPS} {}", scenario.ops_unit()),
            });
        }
        if ops < threads as u64 {
            return Err(StressError::OutOfRange {
                flag: "--ops",
                value: ops.to_string(),
                why: format!("at least one per thread ({threads})"),
            });
        }
        let tasks = match (scenario, req.tasks) {
            (Scenario::Mutex, None) => 20.min(ops),
            (Scenario::Mutex, Some(t)) if t == 0 || t > ops => {
                return Err(StressError::OutOfRange {
                    flag: "--tasks",
                    value: t.to_string(),
                    why: format!("between 1 and --ops ({ops})"),
                })
            }
            (Scenario::Mutex, Some(t)) => t,
            (_, None) => 1,
            (s, Some(_)) => {
                return Err(StressError::NotApplicable {
                    flag: "--tasks",
                    applies: "mutex",
                    scenario: s.name(),
                })
            }
        };
        let pin = match req.pin.as_deref() {
            None | Some("spread") => Pin::Spread,
            Some("same") => Pin::Same,
            Some("none") => Pin::None,
            Some(other) => return Err(StressError::UnknownPin(other.to_string())),
        };
        let time_limit = req.time_limit.unwrap_or(DEFAULT_TIME_LIMIT);
        // A week at most: longer limits would overflow the deadline.
        if !time_limit.is_finite() || time_limit <= 0.0 || time_limit > 604_800.0 {
            return Err(StressError::OutOfRange {
                flag: "--time-limit",
                value: time_limit.to_string(),
                why: "a positive number of seconds, at most a week (604800)".into(),
            });
        }
        Ok(Plan {
            time_limit,
            scenario,
            variants,
            threads,
            ops,
            ops_given: req.ops.is_some(),
            tasks,
            seed: req.seed.unwrap_or_else(crate::rng::fresh_seed),
            jitter: req.jitter,
            pin,
            cpus: cpus.to_vec(),
        })
    }

    /// The command line that replays `variant` with this plan's parameters
    /// and seed (the seed fixes jitter and payloads, not the OS's scheduling).
    pub fn replay_line(&self, variant: &str) -> String {
        let mut s = format!(
            "atomlab stress {} --variant {variant} --threads {} --ops {}",
            self.scenario.name(),
            self.threads,
            self.ops
        );
        if self.scenario == Scenario::Mutex {
            s.push_str(&format!(" --tasks {}", self.tasks));
        }
        s.push_str(&format!(" --seed {} --pin {}", self.seed, self.pin.name()));
        if self.time_limit != DEFAULT_TIME_LIMIT {
            s.push_str(&format!(" --time-limit {}", self.time_limit));
        }
        if self.jitter {
            s.push_str(" --jitter");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(scenario: &str) -> Request {
        Request {
            scenario: scenario.into(),
            seed: Some(1),
            ..Default::default()
        }
    }

    #[test]
    fn defaults_reproduce_002_and_skip_broken() {
        let p = Plan::from_request(&req("mutex"), &[0, 1]).unwrap();
        assert_eq!((p.ops, p.tasks, p.threads), (1_000_000, 20, 2));
        assert!(p.variants.iter().all(|v| !is_broken(v)));
        assert_eq!(p.variants.len(), LOCK_NAMES.len());
        let all = Plan::from_request(
            &Request {
                variants: vec!["all".into()],
                ..req("mutex")
            },
            &[0],
        )
        .unwrap();
        assert!(all.variants.contains(&"broken-tas-not-atomic"));
    }

    #[test]
    fn bad_input_names_the_choices() {
        let e = Plan::from_request(&req("mutx"), &[0])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("mutex, peterson, dekker, refcount, spsc, seqlock"),
            "{e}"
        );
        let e = Plan::from_request(
            &Request {
                variants: vec!["futex".into()],
                ..req("mutex")
            },
            &[0],
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("'futex'") && e.contains("broken-tas-not-atomic"),
            "{e}"
        );
        for (r, needle) in [
            (
                Request {
                    threads: Some(0),
                    ..req("mutex")
                },
                "--threads 0",
            ),
            (
                Request {
                    threads: Some(3),
                    ..req("peterson")
                },
                "exactly 2",
            ),
            (
                Request {
                    ops: Some(0),
                    ..req("spsc")
                },
                "--ops 0",
            ),
            (
                Request {
                    ops: Some(u64::MAX),
                    ..req("spsc")
                },
                "--ops",
            ),
            (
                Request {
                    tasks: Some(3),
                    ..req("spsc")
                },
                "--tasks applies",
            ),
            (
                Request {
                    pin: Some("x".into()),
                    ..req("spsc")
                },
                "spread",
            ),
        ] {
            let e = Plan::from_request(&r, &[0, 1]).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
    }

    #[test]
    fn replay_line_carries_everything() {
        let mut p = Plan::from_request(&req("mutex"), &[0, 1]).unwrap();
        p.jitter = true;
        assert_eq!(
            p.replay_line("tas"),
            "atomlab stress mutex --variant tas --threads 2 --ops 1000000 --tasks 20 --seed 1 --pin spread --jitter"
        );
    }
}
