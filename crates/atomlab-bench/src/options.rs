//! The values of the options only some scenarios take, and which ones take
//! which ([`Field`], listed by each scenario's
//! [`Scenario::fields`](crate::plan::Scenario::fields)): the queue's ring
//! ([`Ring`]: placement, capacity, batch, ways of waiting), the lock's fixed
//! work ([`FixedWork`]), and the words each is spelled with on a command
//! line. Validation of a whole request is [`crate::plan::Plan::new`]'s.

use std::str::FromStr;

/// A field of [`crate::plan::Request`] that only some scenarios take: each
/// scenario lists its own ([`Scenario::fields`](crate::plan::Scenario::fields)),
/// and a request that gives one to a scenario without it is refused with
/// [`BenchError::NotApplicable`](crate::plan::BenchError::NotApplicable). One
/// list per scenario, where there was a method per option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// [`Request::orderings`](crate::plan::Request::orderings): the
    /// scenario's variants take an ordering (else they fix their own).
    Orderings,
    /// [`Request::rates`](crate::plan::Request::rates): offered rates.
    Rates,
    /// [`Request::cs_work`](crate::plan::Request::cs_work): work inside
    /// critical sections.
    CsWork,
    /// [`Request::increments`](crate::plan::Request::increments): fixed work.
    Increments,
    /// [`Request::tasks`](crate::plan::Request::tasks): fixed work's tasks.
    Tasks,
    /// [`Request::via_abi`](crate::plan::Request::via_abi): built-in variants
    /// called through the plugin ABI.
    ViaAbi,
    /// [`Request::placement`](crate::plan::Request::placement): the ring's
    /// two sides on two CPUs or one.
    Placement,
    /// [`Request::capacity`](crate::plan::Request::capacity): the ring's size.
    Capacity,
    /// [`Request::batch`](crate::plan::Request::batch): items offered together.
    Batch,
    /// [`Request::waits`](crate::plan::Request::waits): how the ring's sides wait.
    Wait,
}

impl Field {
    /// Every field, in the order a help text lists them.
    pub const ALL: [Field; 10] = [
        Field::Orderings,
        Field::Rates,
        Field::CsWork,
        Field::Increments,
        Field::Tasks,
        Field::ViaAbi,
        Field::Placement,
        Field::Capacity,
        Field::Batch,
        Field::Wait,
    ];

    /// The field's name in [`crate::plan::Request`].
    pub fn name(self) -> &'static str {
        match self {
            Field::Orderings => "orderings",
            Field::Rates => "rates",
            Field::CsWork => "cs_work",
            Field::Increments => "increments",
            Field::Tasks => "tasks",
            Field::ViaAbi => "via_abi",
            Field::Placement => "placement",
            Field::Capacity => "capacity",
            Field::Batch => "batch",
            Field::Wait => "waits",
        }
    }
}

/// The lock's fixed-work mode (the Crystal mutex shape, 002): a total of
/// increments split over tasks, done as fast as possible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedWork {
    /// Total increments.
    pub increments: u64,
    /// Tasks the increments are split over.
    pub tasks: u64,
}

/// How the queue's ring is run: a cell's; the plan's `waits` lists every
/// way of waiting it measures.
#[derive(Debug, Clone, PartialEq)]
pub struct Ring {
    /// Where the two threads run.
    pub placement: Placement,
    /// Capacity in items.
    pub capacity: usize,
    /// Items the producer offers together (due at one time at a fixed
    /// rate) and rings the doorbell for once (`--wait notify`).
    pub batch: usize,
    /// How a thread waits (a cell's; the first of `waits` in a plan of
    /// several).
    pub wait: WaitMode,
    /// Every way of waiting the plan measures, one cell each
    /// (`--wait spin,notify`); a cell's is its `wait` alone.
    pub waits: Vec<WaitMode>,
}

impl Default for Ring {
    /// Cross-core, 1024 items, one at a time, spinning.
    fn default() -> Ring {
        Ring {
            placement: Placement::CrossCore,
            capacity: 1024,
            batch: 1,
            wait: WaitMode::Spin,
            waits: vec![WaitMode::Spin],
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

/// A word that names no value of an option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {option} '{word}': expected {choices}")]
pub struct UnknownWord {
    /// The option (`contention`, `placement`, `wait`).
    pub option: &'static str,
    /// The word given.
    pub word: String,
    /// The valid words.
    pub choices: &'static str,
}

fn unknown(option: &'static str, word: &str, choices: &'static str) -> UnknownWord {
    UnknownWord {
        option,
        word: word.to_string(),
        choices,
    }
}

impl FromStr for Contention {
    type Err = UnknownWord;

    fn from_str(s: &str) -> Result<Contention, UnknownWord> {
        match s {
            "shared" => Ok(Contention::Shared),
            "private" => Ok(Contention::Private),
            other => Err(unknown("contention", other, "shared or private")),
        }
    }
}

impl FromStr for Placement {
    type Err = UnknownWord;

    fn from_str(s: &str) -> Result<Placement, UnknownWord> {
        match s {
            "cross-core" => Ok(Placement::CrossCore),
            "same-core" => Ok(Placement::SameCore),
            other => Err(unknown("placement", other, "cross-core or same-core")),
        }
    }
}

impl FromStr for WaitMode {
    type Err = UnknownWord;

    fn from_str(s: &str) -> Result<WaitMode, UnknownWord> {
        match s {
            "spin" => Ok(WaitMode::Spin),
            "yield" => Ok(WaitMode::Yield),
            "notify" => Ok(WaitMode::Notify),
            other => Err(unknown("wait", other, "spin, yield or notify")),
        }
    }
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
