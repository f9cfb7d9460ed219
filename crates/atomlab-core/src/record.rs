//! One measured or checked thing, as written to `--json` and `--export-json`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{Machine, Summary, ATOMLAB_VERSION, SCHEMA_VERSION};

/// The unit of a figure. Reference cycles (TSC, CNTVCT) and core cycles (PMU)
/// are distinct units on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Operations per second, all threads together.
    OpsPerSecond,
    /// Nanoseconds per operation, as seen by one thread.
    NanosPerOp,
    /// Ticks of a constant-rate counter (TSC, CNTVCT) per operation.
    RefCyclesPerOp,
    /// Core clock cycles per operation, from the PMU.
    CoreCyclesPerOp,
    /// Retired instructions per operation, from the PMU.
    InstructionsPerOp,
    /// Occurrences of a named PMU event per operation.
    EventsPerOp,
    /// A dimensionless ratio (fairness: min/max ops across threads).
    Ratio,
    /// Per cent (CPU utilisation).
    Percent,
    /// Seconds of wall-clock time.
    Seconds,
    /// A plain count.
    Count,
    /// Bytes per second (a load run's received throughput).
    BytesPerSecond,
}

impl Unit {
    /// Short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            Unit::OpsPerSecond => "ops/s",
            Unit::NanosPerOp => "ns/op",
            Unit::RefCyclesPerOp => "ref-cyc/op",
            Unit::CoreCyclesPerOp => "cyc/op",
            Unit::InstructionsPerOp => "inst/op",
            Unit::EventsPerOp => "ev/op",
            Unit::Ratio => "ratio",
            Unit::Percent => "%",
            Unit::Seconds => "s",
            Unit::Count => "count",
            Unit::BytesPerSecond => "B/s",
        }
    }
}

/// How a figure was obtained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "detail")]
pub enum Source {
    /// x86 time-stamp counter (`rdtsc`): constant-rate reference cycles.
    Tsc,
    /// AArch64 virtual counter (`CNTVCT_EL0`): constant-rate reference ticks.
    Cntvct,
    /// `clock_gettime(CLOCK_MONOTONIC)`.
    ClockGettime,
    /// `getrusage`/`clock_gettime(CLOCK_PROCESS_CPUTIME_ID)` CPU time.
    Rusage,
    /// A hardware counter through `perf_event_open`, named as perf names it.
    Pmu(String),
    /// Computed from other figures of the same record.
    Derived,
}

/// The outcome of a judged record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// Nothing wrong was seen and the thing is meant to be correct.
    Pass,
    /// Something wrong was seen.
    Fail,
    /// A known-broken thing whose breakage this run did not observe.
    NotObserved,
    /// The run was cut off before it could decide.
    Timeout,
    /// The input exceeds a fixed limit of the tool (a checker's execution
    /// bound), so nothing was decided; not bad input.
    Bound,
}

impl Verdict {
    /// Every verdict.
    pub const ALL: [Verdict; 5] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::NotObserved,
        Verdict::Timeout,
        Verdict::Bound,
    ];

    /// Its one spelling, as records store it and tables print it: `PASS`,
    /// `FAIL`, `NOT_OBSERVED`, `TIMEOUT`, `BOUND`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::NotObserved => "NOT_OBSERVED",
            Verdict::Timeout => "TIMEOUT",
            Verdict::Bound => "BOUND",
        }
    }

    /// The spelling in running text: [`Verdict::as_str`] with a space for
    /// the underscore (`NOT OBSERVED`), as the stress table and its notes
    /// print it.
    pub fn words(self) -> &'static str {
        match self {
            Verdict::NotObserved => "NOT OBSERVED",
            v => v.as_str(),
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Verdict {
    type Err = String;

    /// A verdict from its spelling ([`Verdict::as_str`]).
    fn from_str(s: &str) -> Result<Verdict, String> {
        Verdict::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                format!("`{s}` is not a verdict (one of PASS, FAIL, NOT_OBSERVED, TIMEOUT, BOUND)")
            })
    }
}

/// The observations of `audit`'s package records, worst first: what a
/// package needs of an Arm CPU, from "needs ARMv8.1" (SIGILL on ARMv8.0)
/// down to "no atomics". `compare` counts a move towards the front as a
/// regression; [`crate::audit::PackageVerdict`] names them (a test there
/// keeps the two lists the same).
pub const AUDIT_PACKAGE_WORST_FIRST: [&str; 5] = [
    "needs_armv8.1",
    "llsc_only",
    "mixed",
    "run_time_lse",
    "no_atomics",
];

/// Why a record's figures must not be read as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagKind {
    /// A figure is physically impossible (faster than one atomic
    /// read-modify-write of this machine, or longer than the run): the
    /// clock or the harness misbehaved. The figure is not data.
    Implausible,
    /// The threads did not run together, so the cell did not measure the
    /// contention it was asked to (time-sliced, descheduled, or asleep).
    NotContended,
    /// Some runs were left out of the summary because their timing could
    /// not be trusted; the rest are data.
    RunsExcluded,
    /// A fixed-rate run achieved less than 99% of the offered rate: the
    /// figures describe a saturated system, not the load asked for.
    RateNotSustained,
    /// The code under test (a user's plugin) killed its process with a
    /// signal: there are no figures.
    Crashed,
    /// The code under test made no progress within a bound and was
    /// killed: there are no figures.
    Hung,
    /// The code under test ended its process (it called `exit()`, or hit
    /// a resource limit) before the run gave a result: there are no
    /// figures.
    Exited,
    /// The measured threads were off their CPUs for part of the timed
    /// window without sleeping themselves: other processes' time slices
    /// are in the figure, which is then slower than the code.
    OffCpu,
    /// The code under test (a user's plugin) broke what the benchmark
    /// checks after every run (a lost update, a lost item, a count that
    /// said "last" too early): its figures would not be those of a working
    /// primitive, so there are none.
    Incorrect,
}

impl FlagKind {
    /// The words a table prints for it.
    pub fn words(self) -> &'static str {
        match self {
            FlagKind::Implausible => "implausible",
            FlagKind::NotContended => "not contended as asked",
            FlagKind::RunsExcluded => "runs excluded",
            FlagKind::RateNotSustained => "rate not sustained",
            FlagKind::Crashed => "crashed",
            FlagKind::Hung => "hung",
            FlagKind::Exited => "exited",
            FlagKind::OffCpu => "off the CPU",
            FlagKind::Incorrect => "incorrect",
        }
    }
}

/// A mark on a record saying its figures need care, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flag {
    /// What kind of trouble.
    pub kind: FlagKind,
    /// The metric it concerns, when it is one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub metric: Option<String>,
    /// What was seen, with the figures.
    pub detail: String,
}

/// One figure of a record: its samples over the runs and their summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// What it measures (`ops_per_sec`, `ns_per_op`, `event:r6e`…): a
    /// constant name is not copied (a check batch makes six per test).
    pub name: std::borrow::Cow<'static, str>,
    /// Its unit.
    pub unit: Unit,
    /// Where it came from.
    pub source: Source,
    /// One sample per run, in run order.
    pub samples: Vec<f64>,
    /// Summary of `samples`; absent when there are none.
    pub summary: Option<Summary>,
}

impl Metric {
    /// A metric from its samples, summarised.
    pub fn new(
        name: impl Into<std::borrow::Cow<'static, str>>,
        unit: Unit,
        source: Source,
        samples: Vec<f64>,
    ) -> Metric {
        let summary = Summary::of(&samples);
        Metric {
            name: name.into(),
            unit,
            source,
            samples,
            summary,
        }
    }

    /// The median, if there is one.
    pub fn median(&self) -> Option<f64> {
        self.summary.map(|s| s.median)
    }
}

/// One measured or checked thing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Layout version of this JSON, see [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// atomlab's version.
    pub atomlab_version: String,
    /// The subcommand that produced it (`bench`, `stress`, …).
    pub capability: String,
    /// Scenario within the capability (`counter`, `lock`, …).
    pub scenario: String,
    /// Variant within the scenario (`fetch_add`, `ticket`, …).
    pub variant: String,
    /// Every parameter that shaped the run, enough to replay it.
    pub parameters: Map<String, Value>,
    /// Measured or counted figures.
    pub metrics: Vec<Metric>,
    /// The verdict, for judged capabilities.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub verdict: Option<Verdict>,
    /// Free-form notes the reader must see (a PMU that was refused, emulation).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
    /// Marks on figures that must not be read as plain data.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub flags: Vec<Flag>,
    /// The capability's structured detail that is not a figure (a check's
    /// allowed states and forbidden cycles, an audit's functions), for tools
    /// that want more than the metrics.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<Value>,
    /// Unix time in seconds when the record was made.
    pub unix_time: u64,
}

impl Record {
    /// A new record stamped with the schema version and the current time.
    pub fn new(capability: &str, scenario: &str, variant: &str) -> Record {
        Record {
            schema_version: SCHEMA_VERSION,
            atomlab_version: ATOMLAB_VERSION.to_string(),
            capability: capability.to_string(),
            scenario: scenario.to_string(),
            variant: variant.to_string(),
            parameters: Map::new(),
            metrics: Vec::new(),
            verdict: None,
            notes: Vec::new(),
            flags: Vec::new(),
            detail: None,
            unix_time: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        }
    }

    /// Sets one parameter.
    pub fn param(&mut self, key: &str, value: impl Into<Value>) -> &mut Self {
        self.parameters.insert(key.to_string(), value.into());
        self
    }

    /// The metric named `name`.
    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.name == name)
    }

    /// Adds a flag.
    pub fn flag(&mut self, kind: FlagKind, metric: Option<&str>, detail: impl Into<String>) {
        self.flags.push(Flag {
            kind,
            metric: metric.map(str::to_string),
            detail: detail.into(),
        });
    }

    /// Whether a flag of `kind` is set.
    pub fn flagged(&self, kind: FlagKind) -> bool {
        self.flags.iter().any(|f| f.kind == kind)
    }
}

/// An input a command could not use (a litmus test outside the supported
/// subset, a file that is not an ELF), named with where and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputError {
    /// The file or argument.
    pub input: String,
    /// Line and column, when the error has a place in a text file.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub line: Option<usize>,
    /// Column of `line`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub column: Option<usize>,
    /// What was wrong, and what to do.
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.input)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// The document every subcommand writes with `--json` (and `--export-json`,
/// and the results store keeps): the machine once, then the records, then
/// the inputs that could not be used. `schema/atomlab.schema.json` in the
/// repository is its JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Layout version of this JSON.
    pub schema_version: u32,
    /// atomlab's version.
    pub atomlab_version: String,
    /// The subcommand that wrote it (`bench`, `check`, `suite`, `machine`…).
    pub command: String,
    /// The machine every record ran on.
    pub machine: Machine,
    /// The records.
    pub records: Vec<Record>,
    /// Inputs that could not be used, each with its reason.
    #[serde(default)]
    pub errors: Vec<InputError>,
    /// Notes about the run as a whole (inputs passed over, emulation).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl Report {
    /// A report of `command` over `records` on `machine`.
    pub fn new(command: &str, machine: Machine, records: Vec<Record>) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            atomlab_version: ATOMLAB_VERSION.to_string(),
            command: command.to_string(),
            machine,
            records,
            errors: Vec::new(),
            notes: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_is_spelled_as_its_json() {
        for v in Verdict::ALL {
            let json = serde_json::to_value(v).unwrap();
            assert_eq!(json.as_str(), Some(v.as_str()));
            assert_eq!(v.to_string(), v.as_str());
            assert_eq!(v.as_str().parse::<Verdict>(), Ok(v));
            assert_eq!(v.words().replace(' ', "_"), v.as_str());
        }
        assert!("MIXED".parse::<Verdict>().is_err());
    }

    #[test]
    fn record_round_trips_through_json() {
        let mut r = Record::new("bench", "counter", "fetch_add");
        r.param("threads", 2);
        r.metrics.push(Metric::new(
            "ns_per_op",
            Unit::NanosPerOp,
            Source::ClockGettime,
            vec![3.0, 3.5],
        ));
        r.metrics.push(Metric::new(
            "event:r6e",
            Unit::EventsPerOp,
            Source::Pmu("r6e".into()),
            vec![1.0],
        ));
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"unit\":\"nanos_per_op\""));
        assert!(json.contains("{\"kind\":\"pmu\",\"detail\":\"r6e\"}"));
        let back: Record = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.metric("ns_per_op").unwrap().median(), Some(3.25));
    }
}
