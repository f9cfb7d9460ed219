//! What a benchmark scenario is ([`Scenario`]) and a validated request for
//! one ([`Plan`]), or a [`BenchError`] that names what was wrong, in the
//! terms of [`Request`]'s fields, and lists what would have been right.
//!
//! The scenarios live in [`crate::scenario`] and are listed in
//! [`crate::registry`]; this file knows none of them.

use std::fmt;
use std::sync::atomic::Ordering;
use std::time::Duration;

use atomlab_core::Record;

use crate::options::{Contention, Field, FixedWork, Placement, Ring, WaitMode};
use crate::pmu::{EventSpec, UnknownEvent};

/// Where progress goes ([`atomlab_core::progress`]: the CLI's reporter,
/// nowhere in tests): each cell a [`Event::Step`](atomlab_core::progress::Event::Step).
pub type Progress<'a> = atomlab_core::progress::Sink<'a>;

/// A benchmark scenario: what it measures, which options it takes, and how
/// it runs. Object-safe, so that the registry ([`crate::registry::all`])
/// holds every scenario in one slice and a scenario written outside this
/// crate can join it.
pub trait Scenario: Sync {
    /// The scenario's name (`atomlab bench NAME`).
    fn name(&self) -> &'static str;
    /// Every variant name the scenario knows, whether or not it runs here.
    fn variants(&self) -> Vec<&'static str>;
    /// Why `variant` cannot run on this machine, if it cannot.
    fn unavailable(&self, _variant: &str) -> Option<String> {
        None
    }
    /// The table its records print in (fixed-work and fixed-rate records
    /// of a [`TableKind::Timed`] scenario have tables of their own).
    fn table(&self) -> TableKind {
        TableKind::Timed
    }
    /// The fields of [`Request`] that only some scenarios take, and this
    /// one does (offered rates by default): one list, which validation,
    /// help texts and errors read.
    fn fields(&self) -> &'static [Field] {
        &[Field::Rates]
    }
    /// Whether the scenario takes `field` (it is in [`Scenario::fields`]).
    fn takes(&self, field: Field) -> bool {
        self.fields().contains(&field)
    }
    /// Whether `variant` runs once per ordering (else once, with the
    /// orderings it fixes itself, as a plugin's operation does).
    fn variant_takes_orderings(&self, _variant: &str) -> bool {
        self.takes(Field::Orderings)
    }
    /// How the scenario takes plugins (include/atomlab.h), if it does:
    /// their kind, and the scenario with their variants added.
    fn plugs(&self) -> Option<&'static dyn Plugs> {
        None
    }
    /// Whether each thread count is a cell of its own (else the scenario
    /// picks its threads and runs them whole).
    fn splits_threads(&self) -> bool {
        true
    }
    /// Whether [`Scenario::run`] measures every offered rate of a plan
    /// itself (else the plan is run one rate at a time).
    fn runs_every_rate(&self) -> bool {
        false
    }
    /// Records measured once per run beside the cells of `plan` (what the
    /// plugin ABI's calls cost here, beside plugins); none by default.
    fn baseline(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError> {
        let _ = (plan, pmu, progress);
        Ok(Vec::new())
    }
    /// How many cells `plan` measures (for progress bars).
    fn cells(&self, plan: &Plan) -> usize {
        plan.grid_cells()
    }
    /// Checks what validation of the options alone cannot: that `plan` can
    /// run on a machine with `cpus` usable CPUs.
    fn check(&self, _plan: &Plan, _cpus: usize) -> Result<(), BenchError> {
        Ok(())
    }
    /// Why a run of `plan` is implausibly fast, if it is: `serial_ns` is
    /// the run's wall time per operation, `ns_per_op` one thread's time per
    /// operation (see `crate::plausible`).
    fn implausible(&self, _plan: &Plan, _serial_ns: f64, _ns_per_op: f64) -> Option<String> {
        None
    }
    /// Runs every cell of `plan`; `pmu` says whether hardware counters
    /// work here.
    fn run(
        &self,
        plan: &Plan,
        pmu: bool,
        progress: Progress<'_>,
    ) -> Result<Vec<Record>, BenchError>;
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
    /// The kind of plugin variant the scenario runs.
    fn kind(&self) -> atomlab_plugin::variant::Kind;
    /// The scenario with the variants of the plugins at `paths` after its
    /// own. Every file is loaded and checked before anything runs; a bad
    /// one, or one without a variant of the kind, is the error, naming the
    /// file. The scenario lives as long as the process (one per command).
    fn load(&self, paths: &[std::path::PathBuf]) -> Result<&'static dyn Scenario, BenchError>;
}

/// Which table a bench record is printed in (read back from a record by
/// [`TableKind::of`]).
pub use atomlab_core::TableKind;

/// Parses an offered rate in items per second: `250000`, `100k`, `1M`,
/// `2.5G`; `max` means flat out (`None`).
pub fn parse_rate(s: &str) -> Result<Option<f64>, BenchError> {
    if s == "max" {
        return Ok(None);
    }
    let (num, scale) = match s.char_indices().last() {
        Some((i, 'k' | 'K')) => (&s[..i], 1e3),
        Some((i, 'M')) => (&s[..i], 1e6),
        Some((i, 'G')) => (&s[..i], 1e9),
        _ => (s, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * scale <= 1e12 => Ok(Some(v * scale)),
        _ => Err(BenchError::BadRate(s.to_string())),
    }
}

/// What to measure, before validation: a scenario and variants by name,
/// orderings, rates and events as words, and typed options.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Scenario name (see [`crate::registry::find`]).
    pub scenario: String,
    /// Variant names, or `all`; empty means all that run here.
    pub variants: Vec<String>,
    /// Orderings (`relaxed`, `acquire`, `release`, `acq_rel`, `seq_cst`).
    pub orderings: Vec<String>,
    /// Thread counts; empty means 1 and powers of two up to the CPU count.
    pub threads: Vec<usize>,
    /// Contention [default: shared].
    pub contention: Option<Contention>,
    /// Seconds per measured run.
    pub duration: Option<f64>,
    /// Measured runs.
    pub runs: Option<usize>,
    /// Seconds of warm-up.
    pub warmup: Option<f64>,
    /// Pin threads to CPUs.
    pub pin: bool,
    /// PMU event names.
    pub events: Vec<String>,
    /// Units of work inside the lock's critical section.
    pub cs_work: Option<u32>,
    /// Lock fixed-work mode: total increments (the 002 shape).
    pub increments: Option<u64>,
    /// Lock fixed-work mode: tasks the increments are split over.
    pub tasks: Option<u64>,
    /// spsc: offered rates (`100k`, `1M`, `max`); empty means flat out.
    pub rates: Vec<String>,
    /// spsc: where the two threads run [default: cross-core].
    pub placement: Option<Placement>,
    /// spsc: ring capacity in items.
    pub capacity: Option<usize>,
    /// spsc: items the producer offers together.
    pub batch: Option<usize>,
    /// spsc: how the threads wait, one cell each, in this order (empty:
    /// spin only).
    pub waits: Vec<WaitMode>,
    /// lock: call the built-in locks through the plugin ABI's function
    /// pointers, as a plugin's are (`--via-abi`).
    pub via_abi: bool,
}

/// A validated request.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The scenario.
    pub scenario: &'static dyn Scenario,
    /// Variants to run, in table order.
    pub variants: Vec<String>,
    /// Variants `all` skipped because they cannot run here, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Orderings (counter only; one `seq_cst` entry elsewhere for uniformity).
    pub orderings: Vec<Ordering>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// True when the thread counts were given (not the default list).
    pub threads_explicit: bool,
    /// Contention.
    pub contention: Contention,
    /// Measured run length.
    pub duration: Duration,
    /// Measured runs.
    pub runs: usize,
    /// Warm-up length.
    pub warmup: Duration,
    /// Pin threads.
    pub pin: bool,
    /// Requested PMU events.
    pub events: Vec<EventSpec>,
    /// Critical-section work units (lock).
    pub cs_work: u32,
    /// Fixed-work lock mode.
    pub fixed_work: Option<FixedWork>,
    /// Offered rates in items or operations per second, `None` for flat
    /// out (one cell each).
    pub rates: Vec<Option<f64>>,
    /// The queue's ring (its defaults where the scenario has none).
    pub ring: Ring,
    /// lock: built-in locks called through the plugin ABI (rows
    /// `NAME@abi`), so that they compare like with like beside plugins.
    pub via_abi: bool,
}

impl Plan {
    /// How many cells the plan measures (for progress bars): one per
    /// variant, ordering, thread count and rate, as the scenario splits
    /// them ([`Scenario::cells`]).
    pub fn cells(&self) -> usize {
        self.scenario.cells(self)
    }

    /// The cells of the grid: one per variant and rate, and where the
    /// scenario splits them, per ordering and thread count (fixed-work
    /// without explicit workers runs its threads whole).
    pub fn grid_cells(&self) -> usize {
        let v = self.variants.len().max(1);
        let orderings = if self.scenario.takes(Field::Orderings) {
            self.orderings.len().max(1)
        } else {
            1
        };
        let threads = if self.runs_threads_whole() {
            1
        } else {
            self.threads.len()
        };
        v * self.ring.waits.len().max(1) * self.rates.len().max(1) * orderings * threads
    }

    /// Whether the thread counts are one cell (the scenario picks its
    /// threads, or fixed work without explicit workers).
    fn runs_threads_whole(&self) -> bool {
        !self.scenario.splits_threads() || (self.fixed_work.is_some() && !self.threads_explicit)
    }

    /// The plan split into one plan per cell (variant x wait x rate x
    /// ordering x thread count, as [`Plan::grid_cells`] counts them), in
    /// table order: the unit that `--shard` distributes.
    pub fn split_cells(&self) -> Vec<Plan> {
        let mut out = Vec::new();
        for v in &self.variants {
            for &wait in &self.ring.waits {
                let mut by_variant = self.clone();
                by_variant.variants = vec![v.clone()];
                by_variant.ring.wait = wait;
                by_variant.ring.waits = vec![wait];
                for &rate in &self.rates {
                    let mut by_rate = by_variant.clone();
                    by_rate.rates = vec![rate];
                    if self.runs_threads_whole() {
                        out.push(by_rate);
                        continue;
                    }
                    let orderings = if self.scenario.variant_takes_orderings(v) {
                        self.orderings.iter().map(|o| vec![*o]).collect()
                    } else {
                        vec![self.orderings.clone()]
                    };
                    for o in orderings {
                        for &t in &self.threads {
                            let mut cell = by_rate.clone();
                            cell.orderings = o.clone();
                            cell.threads = vec![t];
                            out.push(cell);
                        }
                    }
                }
            }
        }
        out
    }

    /// Seconds the plan takes at least: warm-up and runs of every cell
    /// (fixed-work runs are not timed in advance, so 0 for them).
    pub fn estimated_seconds(&self) -> f64 {
        if self.fixed_work.is_some() {
            return 0.0;
        }
        self.cells() as f64
            * (self.warmup.as_secs_f64() + self.runs as f64 * self.duration.as_secs_f64())
    }
}

/// What was wrong with a request. Fields are named as in [`Request`]
/// (a front end names its flags instead: see each variant).
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// No such scenario.
    #[error("unknown scenario '{name}': expected one of {valid}")]
    UnknownScenario {
        /// The name given.
        name: String,
        /// The valid names.
        valid: String,
    },
    /// No such variant for the scenario.
    #[error("unknown {scenario} variant '{name}': expected one of {list}, or all", list = valid.join(", "))]
    UnknownVariant {
        /// Scenario name.
        scenario: &'static str,
        /// The name given.
        name: String,
        /// Valid names.
        valid: Vec<&'static str>,
    },
    /// A variant that exists but cannot run here.
    #[error("{0}")]
    Unavailable(String),
    /// spsc's cross-core placement on a machine that lets this process use
    /// one CPU.
    #[error("spsc placement cross-core needs two CPUs and this process may use one; use placement same-core")]
    CrossCoreNeedsTwoCpus,
    /// No such ordering.
    #[error("unknown ordering '{0}': expected one of relaxed, acquire, release, acq_rel, seq_cst")]
    UnknownOrdering(String),
    /// A field only some scenarios take ([`Scenario::fields`]), given to
    /// one that does not.
    #[error("{}", not_applicable(*field, scenario))]
    NotApplicable {
        /// The field.
        field: Field,
        /// The scenario asked for.
        scenario: &'static str,
    },
    /// Bad event name.
    #[error(transparent)]
    UnknownEvent(#[from] UnknownEvent),
    /// Thread counts out of range: the count, the most, the CPUs here.
    #[error("threads {0}: thread counts must be between 1 and {1} (64 x the {2} CPUs here)")]
    BadThreads(usize, usize, usize),
    /// A duration out of range: the field (`duration`, `warmup`), its
    /// value, the least and the most.
    #[error("{0} {1}: expected seconds between {2} and {3}")]
    BadDuration(&'static str, f64, f64, f64),
    /// Runs out of range.
    #[error("runs {0}: expected between 1 and 1000")]
    BadRuns(usize),
    /// Critical section work out of range.
    #[error("cs_work {0}: expected at most 1000000")]
    BadCsWork(u32),
    /// Increments out of range.
    #[error("increments {0}: expected between 1 and 10^12")]
    BadIncrements(u64),
    /// Tasks out of range.
    #[error("tasks {0}: expected between 1 and min(increments, 10^6)")]
    BadTasks(u64),
    /// A rate and fixed work together.
    #[error("rates and increments are two different measurements: a fixed offered rate for a time, or a fixed amount of work as fast as possible; pick one")]
    RateWithFixedWork,
    /// An offered rate that is not a positive number of items per second.
    #[error("rate {0}: expected items per second above 0 and at most 1000G, with an optional k, M or G suffix (100k, 1M, 2.5G), or max for flat out")]
    BadRate(String),
    /// Ring capacity out of range.
    #[error("capacity {0}: expected between 1 and 16777216 items")]
    BadCapacity(usize),
    /// Batch out of range: the batch and the capacity.
    #[error("batch {0}: expected between 1 and the ring's capacity ({1})")]
    BadBatch(usize, usize),
    /// A plugin that cannot be used (not a shared object, another
    /// architecture, no entry point, an ABI from the future, no variant of
    /// the scenario's kind…), naming the file.
    #[error(transparent)]
    Plugin(#[from] atomlab_plugin::PluginError),
    /// `--plugin` given to a scenario that runs no plugins: the scenario
    /// and those that do.
    #[error("plugins apply to {takers}, not {scenario}")]
    PluginNotApplicable {
        /// The scenario asked for.
        scenario: String,
        /// The scenarios that take plugins, and their kinds.
        takers: String,
    },
    /// A plugin's variant named like a variant already there.
    #[error(transparent)]
    PluginName(#[from] atomlab_plugin::variant::NameClash),
    /// A cell whose threads could not all start (`ulimit -u`, `ulimit -v`).
    #[error("bench {scenario} {variant}: {why}; nothing was measured")]
    Threads {
        /// Scenario name.
        scenario: &'static str,
        /// Variant name.
        variant: String,
        /// Which thread, and the system's reason (in the message: not a
        /// source, which a chain of causes would print again).
        why: atomlab_thread::SpawnError,
    },
    /// A run whose results failed their sanity check.
    #[error("{scenario} {variant}: {reason}")]
    Sanity {
        /// Scenario name.
        scenario: &'static str,
        /// Variant name.
        variant: String,
        /// What was wrong.
        reason: String,
    },
}

/// [`BenchError::NotApplicable`]'s message: the field as [`Request`] names
/// it, the scenario, and for orderings why.
fn not_applicable(field: Field, scenario: &str) -> String {
    let why = match field {
        Field::Orderings => format!("; {scenario} variants fix their own orderings"),
        _ => String::new(),
    };
    format!(
        "{} applies to the scenarios that take it, not {scenario}{why}",
        field.name()
    )
}

/// Parses an ordering name.
pub fn parse_ordering(s: &str) -> Result<Ordering, BenchError> {
    Ok(match s {
        "relaxed" => Ordering::Relaxed,
        "acquire" => Ordering::Acquire,
        "release" => Ordering::Release,
        "acq_rel" => Ordering::AcqRel,
        "seq_cst" => Ordering::SeqCst,
        _ => return Err(BenchError::UnknownOrdering(s.to_string())),
    })
}

/// An ordering's name.
pub fn ordering_name(o: Ordering) -> &'static str {
    match o {
        Ordering::Relaxed => "relaxed",
        Ordering::Acquire => "acquire",
        Ordering::Release => "release",
        Ordering::AcqRel => "acq_rel",
        _ => "seq_cst",
    }
}

/// 1 and the powers of two below `cpus`, then `cpus` itself.
pub fn default_threads(cpus: usize) -> Vec<usize> {
    let mut t = vec![1];
    let mut n = 2;
    while n < cpus {
        t.push(n);
        n *= 2;
    }
    if cpus > 1 {
        t.push(cpus);
    }
    t
}

/// The ring of `req` (its defaults where it gives none), or what is wrong
/// with it.
fn ring(req: &Request) -> Result<Ring, BenchError> {
    let mut ring = Ring::default();
    if let Some(placement) = req.placement {
        ring.placement = placement;
    }
    if !req.waits.is_empty() {
        ring.waits.clear();
        for &w in &req.waits {
            if !ring.waits.contains(&w) {
                ring.waits.push(w);
            }
        }
    }
    ring.wait = ring.waits[0];
    ring.capacity = req.capacity.unwrap_or(ring.capacity);
    if ring.capacity == 0 || ring.capacity > 1 << 24 {
        return Err(BenchError::BadCapacity(ring.capacity));
    }
    ring.batch = req.batch.unwrap_or(ring.batch);
    if ring.batch == 0 || ring.batch > ring.capacity {
        return Err(BenchError::BadBatch(ring.batch, ring.capacity));
    }
    Ok(ring)
}

impl Request {
    /// Whether the request gives `field` (a value, or `true` for a flag).
    pub fn gives(&self, field: Field) -> bool {
        match field {
            Field::Orderings => !self.orderings.is_empty(),
            Field::Rates => !self.rates.is_empty(),
            Field::CsWork => self.cs_work.is_some(),
            Field::Increments => self.increments.is_some(),
            Field::Tasks => self.tasks.is_some(),
            Field::ViaAbi => self.via_abi,
            Field::Placement => self.placement.is_some(),
            Field::Capacity => self.capacity.is_some(),
            Field::Batch => self.batch.is_some(),
            Field::Wait => !self.waits.is_empty(),
        }
    }
}

fn seconds(
    flag: &'static str,
    v: Option<f64>,
    default: f64,
    min: f64,
    max: f64,
) -> Result<Duration, BenchError> {
    let v = v.unwrap_or(default);
    if !v.is_finite() || v < min || v > max {
        return Err(BenchError::BadDuration(flag, v, min, max));
    }
    Ok(Duration::from_secs_f64(v))
}

impl Plan {
    /// Validates `req` for `scenario` on a machine with `cpus` usable CPUs
    /// (`req.scenario` is not read: [`Plan::from_request`] looks it up).
    pub fn new(
        scenario: &'static dyn Scenario,
        req: &Request,
        cpus: usize,
    ) -> Result<Plan, BenchError> {
        let known = scenario.variants();
        let mut variants = Vec::new();
        let mut skipped = Vec::new();
        let wants_all = req.variants.is_empty() || req.variants.iter().any(|v| v == "all");
        if wants_all {
            for v in &known {
                match scenario.unavailable(v) {
                    Some(why) => skipped.push((v.to_string(), why)),
                    None => variants.push(v.to_string()),
                }
            }
        }
        for v in req.variants.iter().filter(|v| *v != "all") {
            if !known.contains(&v.as_str()) {
                return Err(BenchError::UnknownVariant {
                    scenario: scenario.name(),
                    name: atomlab_core::text::shown(v, 64),
                    valid: known,
                });
            }
            if let Some(why) = scenario.unavailable(v) {
                return Err(BenchError::Unavailable(why));
            }
            if !variants.contains(v) {
                variants.push(v.clone());
            }
        }

        // A field the scenario does not take is refused as such, whatever
        // its value.
        if let Some(&field) = Field::ALL
            .iter()
            .find(|&&f| req.gives(f) && !scenario.takes(f))
        {
            return Err(BenchError::NotApplicable {
                field,
                scenario: scenario.name(),
            });
        }
        let orderings = if req.orderings.is_empty() {
            vec![Ordering::SeqCst]
        } else {
            req.orderings
                .iter()
                .map(|o| parse_ordering(o))
                .collect::<Result<_, _>>()?
        };

        let max_threads = cpus.max(1) * 64;
        let threads = if req.threads.is_empty() {
            default_threads(cpus)
        } else {
            for &t in &req.threads {
                if t == 0 || t > max_threads {
                    return Err(BenchError::BadThreads(t, max_threads, cpus));
                }
            }
            req.threads.clone()
        };

        let contention = req.contention.unwrap_or(Contention::Shared);
        let duration = seconds("duration", req.duration, 1.0, 0.001, 3600.0)?;
        let warmup = seconds("warmup", req.warmup, 0.2, 0.0, 600.0)?;
        let runs = req.runs.unwrap_or(5);
        if runs == 0 || runs > 1000 {
            return Err(BenchError::BadRuns(runs));
        }
        let events = req
            .events
            .iter()
            .map(|e| EventSpec::parse(e))
            .collect::<Result<Vec<_>, _>>()?;
        let cs_work = req.cs_work.unwrap_or(0);
        if cs_work > 1_000_000 {
            return Err(BenchError::BadCsWork(cs_work));
        }
        let fixed_work = match (req.increments, req.tasks) {
            (None, None) => None,
            (inc, tasks) => {
                let inc = inc.unwrap_or(1_000_000);
                let tasks = tasks.unwrap_or(20);
                if !(1..=1_000_000_000_000).contains(&inc) {
                    return Err(BenchError::BadIncrements(inc));
                }
                if tasks == 0 || tasks > inc || tasks > 1_000_000 {
                    return Err(BenchError::BadTasks(tasks));
                }
                Some(FixedWork {
                    increments: inc,
                    tasks,
                })
            }
        };
        if !req.rates.is_empty() && fixed_work.is_some() {
            return Err(BenchError::RateWithFixedWork);
        }
        let mut rates = Vec::new();
        for r in &req.rates {
            let r = parse_rate(r)?;
            if !rates.contains(&r) {
                rates.push(r);
            }
        }
        if rates.is_empty() {
            rates.push(None);
        }
        let ring = ring(req)?;
        let plan = Plan {
            scenario,
            variants,
            skipped,
            orderings,
            threads,
            threads_explicit: !req.threads.is_empty(),
            contention,
            duration,
            runs,
            warmup,
            pin: req.pin,
            events,
            cs_work,
            fixed_work,
            rates,
            ring,
            via_abi: req.via_abi,
        };
        scenario.check(&plan, cpus)?;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(scenario: &str) -> Request {
        Request {
            scenario: scenario.into(),
            pin: true,
            ..Default::default()
        }
    }

    #[test]
    fn defaults() {
        let p = Plan::from_request(&req("counter"), 8).unwrap();
        assert_eq!(p.threads, vec![1, 2, 4, 8]);
        assert_eq!(default_threads(6), vec![1, 2, 4, 6]);
        assert_eq!(default_threads(1), vec![1]);
        assert!(p.variants.contains(&"fetch_add".to_string()));
        assert_eq!(p.contention, Contention::Shared);
        assert_eq!(p.runs, 5);
        if !cfg!(target_arch = "aarch64") {
            assert!(p
                .skipped
                .iter()
                .any(|(v, why)| v == "lse" && why.contains("aarch64")));
        }
    }

    #[test]
    fn bad_input_names_the_valid_choices() {
        let e = Plan::from_request(&req("nope"), 2).unwrap_err().to_string();
        assert!(
            e.contains("counter, refcount, lock, fence, pingpong"),
            "{e}"
        );
        let mut r = req("lock");
        r.variants = vec!["spinny".into()];
        let e = Plan::from_request(&r, 2).unwrap_err().to_string();
        assert!(e.contains("mcs") && e.contains("spinny"), "{e}");
        let mut r = req("counter");
        r.orderings = vec!["sequential".into()];
        assert!(Plan::from_request(&r, 2)
            .unwrap_err()
            .to_string()
            .contains("seq_cst"));
        let mut r = req("counter");
        r.threads = vec![0];
        assert!(matches!(
            Plan::from_request(&r, 2),
            Err(BenchError::BadThreads(0, 128, 2))
        ));
        let mut r = req("counter");
        r.duration = Some(f64::NAN);
        assert!(Plan::from_request(&r, 2).is_err());
        let mut r = req("counter");
        r.events = vec!["cycels".into()];
        assert!(Plan::from_request(&r, 2)
            .unwrap_err()
            .to_string()
            .contains("r6e"));
        let mut r = req("fence");
        r.orderings = vec!["relaxed".into()];
        assert!(matches!(
            Plan::from_request(&r, 2),
            Err(BenchError::NotApplicable {
                field: Field::Orderings,
                scenario: "fence"
            })
        ));
        let mut r = req("counter");
        r.increments = Some(10);
        assert!(Plan::from_request(&r, 2).is_err());
        let mut r = req("lock");
        r.tasks = Some(0);
        assert!(Plan::from_request(&r, 2).is_err());
    }

    #[test]
    fn spsc_options() {
        assert_eq!(parse_rate("100k").unwrap(), Some(1e5));
        assert_eq!(parse_rate("1M").unwrap(), Some(1e6));
        assert_eq!(parse_rate("2.5G").unwrap(), Some(2.5e9));
        assert_eq!(parse_rate("250").unwrap(), Some(250.0));
        assert_eq!(parse_rate("max").unwrap(), None);
        for bad in ["0", "-1", "fast", "", "k", "inf", "NaN", "1T", "2000G"] {
            assert!(
                matches!(parse_rate(bad), Err(BenchError::BadRate(_))),
                "{bad}"
            );
        }
        let mut r = req("spsc");
        r.rates = vec!["max".into(), "1M".into()];
        let p = Plan::from_request(&r, 2).unwrap();
        assert_eq!(p.rates, vec![None, Some(1e6)]);
        assert_eq!(p.ring.capacity, 1024);
        assert_eq!(p.cells(), p.variants.len() * 2);
        assert_eq!(p.split_cells().len(), p.cells());
        assert!(p.variants.contains(&"rtrb".to_string()));
        assert!(!p.variants.iter().any(|v| v.starts_with("broken")));
        let mut r = req("spsc");
        r.capacity = Some(0);
        assert!(Plan::from_request(&r, 2).is_err());
        let e = "numa".parse::<Placement>().unwrap_err().to_string();
        assert!(e.contains("'numa'") && e.contains("same-core"), "{e}");
        assert_eq!("same-core".parse(), Ok(Placement::SameCore));
        assert_eq!("notify".parse(), Ok(WaitMode::Notify));
        assert!("sleep".parse::<WaitMode>().is_err());
        assert_eq!("private".parse(), Ok(Contention::Private));
        assert!("none".parse::<Contention>().is_err());
        let mut r = req("counter");
        r.waits = vec![WaitMode::Notify];
        assert!(Plan::from_request(&r, 2).is_err());
        let mut r = req("fence");
        r.rates = vec!["1M".into()];
        assert!(Plan::from_request(&r, 2).is_err());
        // A rate is a mode of counter, refcount and lock: one cell per rate.
        let mut r = req("counter");
        r.rates = vec!["1M".into(), "2M".into()];
        let p = Plan::from_request(&r, 2).unwrap();
        assert_eq!(p.split_cells().len(), p.cells());
        assert!(p.split_cells().iter().all(|c| c.rates.len() == 1));
    }

    /// `--wait spin,notify` is a list as `--rate` is: a cell per way of
    /// waiting and rate, per variant, in that order; a repeat is dropped.
    #[test]
    fn waits_are_a_list_of_cells() {
        let mut r = req("spsc");
        r.variants = vec!["fences".into()];
        r.waits = vec![WaitMode::Spin, WaitMode::Notify, WaitMode::Spin];
        r.rates = vec!["100k".into(), "1M".into()];
        let p = Plan::from_request(&r, 2).unwrap();
        assert_eq!(p.ring.waits, [WaitMode::Spin, WaitMode::Notify]);
        let cells = p.split_cells();
        assert_eq!(cells.len(), 4);
        assert_eq!(p.cells(), 4);
        let order: Vec<(WaitMode, Option<f64>)> = cells
            .iter()
            .map(|c| {
                assert_eq!(c.ring.waits, [c.ring.wait]);
                (c.ring.wait, c.rates[0])
            })
            .collect();
        assert_eq!(
            order,
            [
                (WaitMode::Spin, Some(1e5)),
                (WaitMode::Spin, Some(1e6)),
                (WaitMode::Notify, Some(1e5)),
                (WaitMode::Notify, Some(1e6)),
            ]
        );
    }

    #[test]
    fn an_unavailable_variant_asked_for_by_name_is_refused() {
        let mut r = req("counter");
        r.variants = vec!["lse".into()];
        match Plan::from_request(&r, 2) {
            Ok(p) => assert!(cfg!(target_arch = "aarch64") && p.variants == ["lse"]),
            Err(e) => assert!(e.to_string().contains("lse"), "{e}"),
        }
    }
}
