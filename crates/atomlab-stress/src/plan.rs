//! What a stress scenario is ([`Scenario`]) and a validated run of one
//! ([`Plan`]), or a [`StressError`] that names what was wrong, in the terms
//! of [`Request`]'s fields, and lists the valid choices.
//!
//! The scenarios themselves live in `crate::scenario` and are listed in
//! [`crate::registry`]; this file knows none of them.

use std::fmt;
use std::str::FromStr;

use crate::outcome::VariantRun;

/// More threads than this is a typo, not a stress test.
pub const MAX_THREADS: usize = 1024;
/// Seconds a variant may run before it is stopped with a TIMEOUT verdict.
pub const DEFAULT_TIME_LIMIT: f64 = 60.0;
/// More operations than this would run for days.
pub const MAX_OPS: u64 = 1_000_000_000_000;

/// A torture scenario: one primitive hammered from many threads, with the
/// invariants a correct one keeps. Object-safe, so that the registry
/// ([`crate::registry::all`]) holds every scenario in one slice and a
/// scenario written outside this crate can join it.
pub trait Scenario: Sync {
    /// The scenario's name (`atomlab stress NAME`).
    fn name(&self) -> &'static str;
    /// Every variant, correct ones first; broken ones are named `broken-…`
    /// (see [`is_broken`]).
    fn variants(&self) -> Vec<&'static str>;
    /// What [`Request::ops`] counts (critical sections, items, …).
    fn ops_unit(&self) -> &'static str;
    /// Operations when [`Request::ops`] is not given.
    fn default_ops(&self) -> u64;
    /// How many threads the scenario runs.
    fn threads(&self) -> Threads {
        Threads::AtLeast {
            min: 1,
            why: "",
            default_min: 1,
        }
    }
    /// Whether the operations are split into tasks taken from a queue
    /// ([`Request::tasks`]).
    fn takes_tasks(&self) -> bool {
        false
    }
    /// What its threads are, for `--threads`' help ("workers", "a writer
    /// and readers"); a scenario of [`Threads::Exactly`] needs none.
    fn thread_roles(&self) -> &'static str {
        "threads"
    }
    /// How the scenario takes plugins (include/atomlab.h), if it does:
    /// their kind, and the scenario with their variants added.
    fn plugs(&self) -> Option<&'static dyn Plugs> {
        None
    }
    /// Runs one variant under `plan`; `Ok(None)` when the scenario has no
    /// variant of that name, an error when it could not run at all (its
    /// threads could not all start: [`StressError::Threads`]).
    fn run(&self, plan: &Plan, variant: &'static str) -> Result<Option<VariantRun>, StressError>;
    /// Adds what identifies `variant`'s code beyond its name to its record
    /// (a plugin's file and SHA-256).
    fn tag(&self, _variant: &str, _record: &mut atomlab_core::Record) {}
    /// Whether `variant` runs in a child process (a user's code, which may
    /// crash or hang; see [`crate::run_records`]).
    fn isolated(&self, _variant: &str) -> bool {
        false
    }
    /// What signal `sig`, which killed the child running `variant`, means
    /// for its code (a plugin's audit); `None` for the signal's usual
    /// meaning.
    fn crash_hint(&self, _variant: &str, _sig: i32) -> Option<String> {
        None
    }
}

impl fmt::Debug for dyn Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a scenario that takes plugins answers through [`Scenario::plugs`]:
/// the kind of variant it takes, and itself with a plugin list's variants
/// added. The registry asks it, so no list of pluggable names is written
/// anywhere else.
pub trait Plugs: Sync {
    /// The kind of plugin variant the scenario tests.
    fn kind(&self) -> atomlab_plugin::variant::Kind;
    /// The scenario with the variants of the plugins at `paths` after its
    /// own. Every file is loaded and checked before anything runs; a bad
    /// one, or one without a variant of the kind, is the error, naming the
    /// file. The scenario lives as long as the process (one per command).
    fn load(&self, paths: &[std::path::PathBuf]) -> Result<&'static dyn Scenario, StressError>;
}

/// How many threads a scenario runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// Exactly this many (a two-thread lock, a producer and a consumer).
    Exactly(usize),
    /// Any count from `min` (with `why` when above 1); by default one per
    /// CPU, and at least `default_min`.
    AtLeast {
        /// The fewest threads the scenario can run.
        min: usize,
        /// Why fewer will not do (when `min` is above 1).
        why: &'static str,
        /// The fewest threads the default gives.
        default_min: usize,
    },
}

/// Which field of a [`Request`] an error is about (the CLI names its flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// [`Request::threads`].
    Threads,
    /// [`Request::ops`].
    Ops,
    /// [`Request::tasks`].
    Tasks,
    /// [`Request::pin`].
    Pin,
    /// [`Request::time_limit`].
    TimeLimit,
}

impl Field {
    /// The field's name in [`Request`].
    pub fn name(self) -> &'static str {
        match self {
            Field::Threads => "threads",
            Field::Ops => "ops",
            Field::Tasks => "tasks",
            Field::Pin => "pin",
            Field::TimeLimit => "time_limit",
        }
    }
}

/// Bad input: every message names the field or value and what would do.
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
    /// A value out of range.
    #[error("{field} {value}: {why}", field = field.name(), why = why.render(&|f| f.name()))]
    OutOfRange {
        /// The field.
        field: Field,
        /// Its value.
        value: String,
        /// What the value must be.
        why: Why,
    },
    /// A plugin that cannot be used (not a shared object, another
    /// architecture, no entry point, an ABI from the future, no variant of
    /// the scenario's kind…), naming the file.
    #[error(transparent)]
    Plugin(#[from] atomlab_plugin::PluginError),
    /// A plugin's variant named like a variant already there.
    #[error(transparent)]
    PluginName(#[from] atomlab_plugin::variant::NameClash),
    /// `--plugin` given to a scenario that tests no plugins.
    #[error("plugins apply to {takers}, not {scenario}")]
    PluginNotApplicable {
        /// The scenario asked for.
        scenario: &'static str,
        /// The scenarios that take plugins, and their kinds.
        takers: String,
    },
    /// A field that this scenario does not take.
    #[error("{field}: the {scenario} scenario does not take it", field = field.name())]
    NotApplicable {
        /// The field.
        field: Field,
        /// The scenario asked for.
        scenario: &'static str,
    },
    /// A variant whose threads could not all start (`ulimit -u`,
    /// `ulimit -v`).
    #[error("stress {scenario} {variant}: {why}; the variant was not run")]
    Threads {
        /// The scenario.
        scenario: &'static str,
        /// The variant.
        variant: &'static str,
        /// Which thread, and the system's reason (in the message: not a
        /// source, which a chain of causes would print again).
        why: atomlab_thread::SpawnError,
    },
}

/// What a value out of range must be: words, with the other field it is
/// bounded by (if any), so that a front end can name that field its own way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Why {
    /// The words before the other field's name, or all of them.
    pub text: String,
    /// The other field and the words after its name.
    pub bound: Option<(Field, String)>,
}

impl Why {
    fn words(text: impl Into<String>) -> Why {
        Why {
            text: text.into(),
            bound: None,
        }
    }

    /// The words, with `name` naming the other field.
    pub fn render(&self, name: &dyn Fn(Field) -> &'static str) -> String {
        match &self.bound {
            Some((f, rest)) => format!("{}{}{rest}", self.text, name(*f)),
            None => self.text.clone(),
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

/// A word that names no [`Pin`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown pin '{0}': choose {choices}", choices = UnknownPin::CHOICES)]
pub struct UnknownPin(pub String);

impl UnknownPin {
    /// The valid words, described.
    pub const CHOICES: &'static str =
        "spread (round-robin over the allowed CPUs), same (all on one CPU) or none";
}

impl FromStr for Pin {
    type Err = UnknownPin;

    fn from_str(s: &str) -> Result<Pin, UnknownPin> {
        match s {
            "spread" => Ok(Pin::Spread),
            "same" => Ok(Pin::Same),
            "none" => Ok(Pin::None),
            other => Err(UnknownPin(other.to_string())),
        }
    }
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

/// What to run, before validation: a scenario and variants by name, and
/// typed options.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Scenario name (see [`crate::registry::find`]).
    pub scenario: String,
    /// Variant names, or `all`, `correct`, `broken`; empty means `correct`.
    pub variants: Vec<String>,
    /// Threads (mutex: workers; seqlock: 1 writer + readers; refcount: holders).
    pub threads: Option<usize>,
    /// Operations in all (see [`Scenario::ops_unit`]).
    pub ops: Option<u64>,
    /// Scenarios that [take tasks](Scenario::takes_tasks): tasks the
    /// operations are split over (default 20).
    pub tasks: Option<u64>,
    /// Seed of the jitter and payloads; fresh when absent.
    pub seed: Option<u64>,
    /// Random short spins between operations.
    pub jitter: bool,
    /// Thread placement [default: spread].
    pub pin: Option<Pin>,
    /// Seconds after which a variant's run is stopped (TIMEOUT); default 60.
    pub time_limit: Option<f64>,
}

/// A validated stress run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The scenario.
    pub scenario: &'static dyn Scenario,
    /// Variants to run, in order.
    pub variants: Vec<&'static str>,
    /// Threads.
    pub threads: usize,
    /// Operations in all.
    pub ops: u64,
    /// Whether `ops` was given (a variant whose operations are far
    /// slower than its scenario's may then pick its own default).
    pub ops_given: bool,
    /// Tasks (1 where the scenario takes none).
    pub tasks: u64,
    /// The seed.
    pub seed: u64,
    /// Random short spins between operations.
    pub jitter: bool,
    /// Thread placement.
    pub pin: Pin,
    /// The CPUs this process may use.
    pub cpus: Vec<usize>,
    /// Seconds after which a variant's run is stopped.
    pub time_limit: f64,
}

fn out_of_range(field: Field, value: impl ToString, why: impl Into<String>) -> StressError {
    StressError::OutOfRange {
        field,
        value: value.to_string(),
        why: Why::words(why),
    }
}

impl Plan {
    /// Validates `req` for `scenario` on a machine whose allowed CPUs are
    /// `cpus` (`req.scenario` is not read: [`Plan::from_request`] looks
    /// it up).
    pub fn new(
        scenario: &'static dyn Scenario,
        req: &Request,
        cpus: &[usize],
    ) -> Result<Plan, StressError> {
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
                        name: atomlab_core::text::shown(name, 64),
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
        let threads = match (scenario.threads(), req.threads) {
            (Threads::Exactly(n), Some(t)) if t != n => {
                return Err(out_of_range(
                    Field::Threads,
                    t,
                    format!("{} runs exactly {n} threads", scenario.name()),
                ))
            }
            (Threads::Exactly(n), _) => n,
            (Threads::AtLeast { .. }, Some(0)) => {
                return Err(out_of_range(
                    Field::Threads,
                    0,
                    "at least one thread is needed",
                ))
            }
            (Threads::AtLeast { .. }, Some(t)) if t > MAX_THREADS => {
                return Err(out_of_range(
                    Field::Threads,
                    t,
                    format!("at most {MAX_THREADS}"),
                ))
            }
            (Threads::AtLeast { min, why, .. }, Some(t)) if t < min => {
                return Err(out_of_range(
                    Field::Threads,
                    t,
                    format!("{why} ({min} or more)"),
                ))
            }
            (Threads::AtLeast { .. }, Some(t)) => t,
            (Threads::AtLeast { default_min, .. }, None) => ncpu.max(default_min),
        };
        let ops = req.ops.unwrap_or_else(|| scenario.default_ops());
        if ops == 0 || ops > MAX_OPS {
            return Err(out_of_range(
                Field::Ops,
                ops,
                format!("between 1 and {MAX_OPS} {}", scenario.ops_unit()),
            ));
        }
        if ops < threads as u64 {
            return Err(out_of_range(
                Field::Ops,
                ops,
                format!("at least one per thread ({threads})"),
            ));
        }
        let tasks = match (scenario.takes_tasks(), req.tasks) {
            (true, None) => 20.min(ops),
            (true, Some(t)) if t == 0 || t > ops => {
                return Err(StressError::OutOfRange {
                    field: Field::Tasks,
                    value: t.to_string(),
                    why: Why {
                        text: "between 1 and ".into(),
                        bound: Some((Field::Ops, format!(" ({ops})"))),
                    },
                })
            }
            (true, Some(t)) => t,
            (false, None) => 1,
            (false, Some(_)) => {
                return Err(StressError::NotApplicable {
                    field: Field::Tasks,
                    scenario: scenario.name(),
                })
            }
        };
        let pin = req.pin.unwrap_or(Pin::Spread);
        let time_limit = req.time_limit.unwrap_or(DEFAULT_TIME_LIMIT);
        // A week at most: longer limits would overflow the deadline.
        if !time_limit.is_finite() || time_limit <= 0.0 || time_limit > 604_800.0 {
            return Err(out_of_range(
                Field::TimeLimit,
                time_limit,
                "a positive number of seconds, at most a week (604800)",
            ));
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
        if self.scenario.takes_tasks() {
            s.push_str(&format!(" --tasks {}", self.tasks));
        }
        s.push_str(&format!(" --seed {} --pin {}", self.seed, self.pin.name()));
        if self.time_limit != DEFAULT_TIME_LIMIT {
            s.push_str(&format!(" --timeout {}", self.time_limit));
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
    use atomlab_prims::lock::LOCK_NAMES;

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
                "threads 0",
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
                "ops 0",
            ),
            (
                Request {
                    ops: Some(u64::MAX),
                    ..req("spsc")
                },
                "ops 18446744073709551615: between 1 and",
            ),
            (
                Request {
                    tasks: Some(3),
                    ..req("spsc")
                },
                "tasks: the spsc scenario does not take it",
            ),
            (
                Request {
                    tasks: Some(11),
                    ops: Some(10),
                    ..req("mutex")
                },
                "tasks 11: between 1 and ops (10)",
            ),
        ] {
            let e = Plan::from_request(&r, &[0, 1]).unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
        let e = "x".parse::<Pin>().unwrap_err().to_string();
        assert!(e.contains("'x'") && e.contains("spread"), "{e}");
        assert_eq!("same".parse::<Pin>(), Ok(Pin::Same));
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
