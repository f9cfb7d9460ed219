//! From a command line's words to a validated plan, or an error that names
//! what was wrong and lists what would have been right.

use std::sync::atomic::Ordering;
use std::time::Duration;

use atomlab_prims::counter::CounterVariant;
use atomlab_prims::fence::FenceVariant;
use atomlab_prims::lock::LOCK_NAMES;

use crate::pmu::{EventSpec, UnknownEvent};
use crate::scenario::refcount::REFCOUNT_VARIANTS;

/// The benchmark scenarios.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// Shared or private counters: `fetch_add`, CAS loop, LL/SC, LSE.
    Counter,
    /// Raw atomic vs saturating refcounts, inlined and called.
    Refcount,
    /// Locks around a critical section.
    Lock,
    /// A store followed by each fence.
    Fence,
    /// Core-to-core cache-line round trips.
    Pingpong,
    /// A single-producer single-consumer ring, flat out or at a fixed rate.
    Spsc,
}

impl Scenario {
    /// Every scenario.
    pub const ALL: [Scenario; 6] = [
        Scenario::Counter,
        Scenario::Refcount,
        Scenario::Lock,
        Scenario::Fence,
        Scenario::Pingpong,
        Scenario::Spsc,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Counter => "counter",
            Scenario::Refcount => "refcount",
            Scenario::Lock => "lock",
            Scenario::Fence => "fence",
            Scenario::Pingpong => "pingpong",
            Scenario::Spsc => "spsc",
        }
    }

    /// Every variant name the scenario knows, whether or not it runs here.
    pub fn variant_names(self) -> Vec<&'static str> {
        match self {
            Scenario::Counter => CounterVariant::ALL.map(|v| v.name()).to_vec(),
            Scenario::Refcount => REFCOUNT_VARIANTS.to_vec(),
            Scenario::Lock => LOCK_NAMES.to_vec(),
            Scenario::Fence => FenceVariant::ALL.map(|v| v.name()).to_vec(),
            Scenario::Pingpong => vec![crate::scenario::pingpong::VARIANT],
            Scenario::Spsc => crate::scenario::spsc::variant_names(),
        }
    }

    /// Why `variant` cannot run on this machine, if it cannot.
    fn unavailable(self, variant: &str) -> Option<String> {
        match self {
            Scenario::Counter => variant
                .parse::<CounterVariant>()
                .ok()
                .and_then(|v| v.available().err())
                .map(|e| e.to_string()),
            Scenario::Fence => variant
                .parse::<FenceVariant>()
                .ok()
                .filter(|v| !v.runs_here())
                .map(|v| {
                    format!(
                        "fence {} is {} only; this is {}",
                        v.name(),
                        v.arch().unwrap_or("?"),
                        std::env::consts::ARCH
                    )
                }),
            _ => None,
        }
    }
}

/// Whether threads share one cache line or each has its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contention {
    /// One line written by every thread.
    Shared,
    /// One padded line per thread: the uncontended cost.
    Private,
}

impl Contention {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Contention::Shared => "shared",
            Contention::Private => "private",
        }
    }
}

/// Where the spsc producer and consumer run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Two CPUs: the indices and slots cross between cores.
    CrossCore,
    /// One CPU: the two threads time-slice (004's unicore case).
    SameCore,
}

impl Placement {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Placement::CrossCore => "cross-core",
            Placement::SameCore => "same-core",
        }
    }
}

/// What an spsc thread does while it cannot make progress (ring empty or
/// full, or the next deadline not yet reached).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// Spin with the CPU's pause hint.
    Spin,
    /// `sched_yield(2)` between checks.
    Yield,
    /// The consumer sleeps on a futex when the ring is empty and the
    /// producer wakes it only when it said it is sleeping
    /// (`atomlab_prims::doorbell`); the producer sleeps until shortly before
    /// an item is due at low fixed rates, and yields when the ring is full.
    Notify,
}

impl WaitMode {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            WaitMode::Spin => "spin",
            WaitMode::Yield => "yield",
            WaitMode::Notify => "notify",
        }
    }
}

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

/// The command line's words, before validation.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Scenario name.
    pub scenario: String,
    /// Variant names, or `all`; empty means all that run here.
    pub variants: Vec<String>,
    /// Orderings (`relaxed`, `acquire`, `release`, `acq_rel`, `seq_cst`).
    pub orderings: Vec<String>,
    /// Thread counts; empty means 1 and powers of two up to the CPU count.
    pub threads: Vec<usize>,
    /// `shared` or `private`; empty means shared.
    pub contention: Option<String>,
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
    /// spsc: `cross-core` or `same-core`.
    pub placement: Option<String>,
    /// spsc: ring capacity in items.
    pub capacity: Option<usize>,
    /// spsc: items the producer offers together.
    pub batch: Option<usize>,
    /// spsc: `spin` or `yield`.
    pub wait: Option<String>,
}

/// A validated request.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The scenario.
    pub scenario: Scenario,
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
    /// Fixed-work lock mode: (total increments, tasks).
    pub fixed_work: Option<(u64, u64)>,
    /// spsc: offered rates in items/s, `None` for flat out (one cell each).
    pub rates: Vec<Option<f64>>,
    /// spsc: where the two threads run.
    pub placement: Placement,
    /// spsc: ring capacity in items.
    pub capacity: usize,
    /// spsc: items the producer offers together (due at one time at a
    /// fixed rate) and rings the doorbell for once (`--wait notify`).
    pub batch: usize,
    /// spsc: how a thread waits.
    pub wait: WaitMode,
}

impl Plan {
    /// How many cells the plan measures (for progress bars): one per
    /// variant, ordering and thread count; fixed-work: per variant and
    /// worker count; pingpong: per pair of allowed CPUs.
    pub fn cells(&self) -> usize {
        let v = self.variants.len().max(1);
        match self.scenario {
            Scenario::Pingpong => {
                let n = atomlab_thread::allowed_cpus().len();
                if self.pin && n > 1 {
                    n * (n - 1) / 2
                } else {
                    1
                }
            }
            Scenario::Lock if self.fixed_work.is_some() => {
                v * if self.threads_explicit {
                    self.threads.len()
                } else {
                    1
                }
            }
            Scenario::Counter => {
                v * self.orderings.len().max(1) * self.threads.len() * self.rates.len().max(1)
            }
            Scenario::Spsc => v * self.rates.len().max(1),
            _ => v * self.threads.len() * self.rates.len().max(1),
        }
    }

    /// The plan split into one plan per cell (variant x ordering x thread
    /// count; fixed-work without explicit workers and pingpong stay whole),
    /// in table order: the unit that `--shard` distributes.
    pub fn split_cells(&self) -> Vec<Plan> {
        let mut out = Vec::new();
        for v in &self.variants {
            let mut by_variant = self.clone();
            by_variant.variants = vec![v.clone()];
            if self.scenario == Scenario::Spsc {
                for &rate in &self.rates {
                    let mut cell = by_variant.clone();
                    cell.rates = vec![rate];
                    out.push(cell);
                }
                continue;
            }
            // Each offered rate of counter, refcount and lock is a cell.
            let by_rate: Vec<Plan> = self
                .rates
                .iter()
                .map(|&rate| {
                    let mut p = by_variant.clone();
                    p.rates = vec![rate];
                    p
                })
                .collect();
            for by_variant in by_rate {
                let whole_threads = self.scenario == Scenario::Pingpong
                    || (self.fixed_work.is_some() && !self.threads_explicit);
                if whole_threads {
                    out.push(by_variant);
                    continue;
                }
                let orderings = if self.scenario == Scenario::Counter {
                    self.orderings.iter().map(|o| vec![*o]).collect()
                } else {
                    vec![self.orderings.clone()]
                };
                for o in orderings {
                    for &t in &self.threads {
                        let mut cell = by_variant.clone();
                        cell.orderings = o.clone();
                        cell.threads = vec![t];
                        out.push(cell);
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

/// What was wrong with a request.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// No such scenario.
    #[error("unknown scenario '{0}': expected one of {valid}", valid = Scenario::ALL.map(|s| s.name()).join(", "))]
    UnknownScenario(String),
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
    /// No such ordering.
    #[error("unknown ordering '{0}': expected one of relaxed, acquire, release, acq_rel, seq_cst")]
    UnknownOrdering(String),
    /// `--ordering` on a scenario whose variants fix their orderings.
    #[error("--ordering applies to the counter scenario; {0} variants fix their own orderings (see --variant)")]
    OrderingNotApplicable(&'static str),
    /// No such contention mode.
    #[error("unknown contention '{0}': expected shared or private")]
    UnknownContention(String),
    /// Bad event name.
    #[error(transparent)]
    UnknownEvent(#[from] UnknownEvent),
    /// Thread counts out of range.
    #[error("--threads {0}: thread counts must be between 1 and {1} (64 x the {2} CPUs here)")]
    BadThreads(usize, usize, usize),
    /// A duration out of range.
    #[error("--{0} {1}: expected seconds between {2} and {3}")]
    BadDuration(&'static str, f64, f64, f64),
    /// Runs out of range.
    #[error("--runs {0}: expected between 1 and 1000")]
    BadRuns(usize),
    /// Critical section work out of range.
    #[error("--cs-work {0}: expected at most 1000000")]
    BadCsWork(u32),
    /// Fixed-work parameters out of range.
    #[error("{0}")]
    BadFixedWork(String),
    /// An offered rate that is not a positive number of items per second.
    #[error("--rate {0}: expected items per second above 0 and at most 1000G, with an optional k, M or G suffix (100k, 1M, 2.5G), or max for flat out")]
    BadRate(String),
    /// Another spsc option out of range.
    #[error("{0}")]
    BadSpsc(String),
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
    /// Validates `req` for a machine with `cpus` usable CPUs.
    pub fn from_request(req: &Request, cpus: usize) -> Result<Plan, BenchError> {
        let scenario = Scenario::ALL
            .into_iter()
            .find(|s| s.name() == req.scenario)
            .ok_or_else(|| BenchError::UnknownScenario(req.scenario.clone()))?;
        let known = scenario.variant_names();
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
                    name: v.clone(),
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

        let orderings = if req.orderings.is_empty() {
            vec![Ordering::SeqCst]
        } else {
            if scenario != Scenario::Counter {
                return Err(BenchError::OrderingNotApplicable(scenario.name()));
            }
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

        let contention = match req.contention.as_deref() {
            None | Some("shared") => Contention::Shared,
            Some("private") => Contention::Private,
            Some(other) => return Err(BenchError::UnknownContention(other.to_string())),
        };
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
                if scenario != Scenario::Lock {
                    return Err(BenchError::BadFixedWork(
                        "--increments and --tasks apply to the lock scenario".into(),
                    ));
                }
                let inc = inc.unwrap_or(1_000_000);
                let tasks = tasks.unwrap_or(20);
                if !(1..=1_000_000_000_000).contains(&inc) {
                    return Err(BenchError::BadFixedWork(format!(
                        "--increments {inc}: expected between 1 and 10^12"
                    )));
                }
                if tasks == 0 || tasks > inc || tasks > 1_000_000 {
                    return Err(BenchError::BadFixedWork(format!(
                        "--tasks {tasks}: expected between 1 and min(--increments, 10^6)"
                    )));
                }
                Some((inc, tasks))
            }
        };
        let spsc_opts = req.placement.is_some()
            || req.capacity.is_some()
            || req.wait.is_some()
            || req.batch.is_some();
        if spsc_opts && scenario != Scenario::Spsc {
            return Err(BenchError::BadSpsc(
                "--placement, --capacity, --batch and --wait apply to the spsc scenario".into(),
            ));
        }
        if !req.rates.is_empty() && matches!(scenario, Scenario::Fence | Scenario::Pingpong) {
            return Err(BenchError::BadSpsc(format!(
                "--rate applies to spsc, counter, refcount and lock, not {}",
                scenario.name()
            )));
        }
        if !req.rates.is_empty() && fixed_work.is_some() {
            return Err(BenchError::BadFixedWork(
                "--rate and --increments are two different measurements: a fixed offered rate for a time, or a fixed amount of work as fast as possible; pick one".into(),
            ));
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
        let placement = match req.placement.as_deref() {
            None | Some("cross-core") => Placement::CrossCore,
            Some("same-core") => Placement::SameCore,
            Some(other) => {
                return Err(BenchError::BadSpsc(format!(
                    "unknown placement '{other}': expected cross-core or same-core"
                )))
            }
        };
        let wait = match req.wait.as_deref() {
            None | Some("spin") => WaitMode::Spin,
            Some("yield") => WaitMode::Yield,
            Some("notify") => WaitMode::Notify,
            Some(other) => {
                return Err(BenchError::BadSpsc(format!(
                    "unknown wait '{other}': expected spin, yield or notify"
                )))
            }
        };
        let capacity = req.capacity.unwrap_or(1024);
        if capacity == 0 || capacity > 1 << 24 {
            return Err(BenchError::BadSpsc(format!(
                "--capacity {capacity}: expected between 1 and 16777216 items"
            )));
        }
        let batch = req.batch.unwrap_or(1);
        if batch == 0 || batch > capacity {
            return Err(BenchError::BadSpsc(format!(
                "--batch {batch}: expected between 1 and the ring's capacity ({capacity})"
            )));
        }
        if scenario == Scenario::Spsc && placement == Placement::CrossCore && cpus < 2 {
            return Err(BenchError::Unavailable(
                "spsc --placement cross-core needs two CPUs and this process may use one; use --placement same-core".into(),
            ));
        }
        Ok(Plan {
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
            placement,
            capacity,
            batch,
            wait,
        })
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
            Err(BenchError::OrderingNotApplicable(_))
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
        assert_eq!(p.capacity, 1024);
        assert_eq!(p.cells(), p.variants.len() * 2);
        assert_eq!(p.split_cells().len(), p.cells());
        assert!(p.variants.contains(&"rtrb".to_string()));
        assert!(!p.variants.iter().any(|v| v.starts_with("broken")));
        let mut r = req("spsc");
        r.capacity = Some(0);
        assert!(Plan::from_request(&r, 2).is_err());
        let mut r = req("spsc");
        r.placement = Some("numa".into());
        assert!(Plan::from_request(&r, 2)
            .unwrap_err()
            .to_string()
            .contains("same-core"));
        let mut r = req("counter");
        r.wait = Some("notify".into());
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
