//! `atomlab bench`: parses the options, probes the PMU once, runs the plan
//! variant by variant (rewriting `--export-json` after each, so an
//! interrupted run keeps what it measured) and renders.

use std::path::PathBuf;

use anyhow::Context;
use atomlab_bench::{BenchError, Contention, Field, Placement, Plan, Request, WaitMode};
use atomlab_core::{ExitStatus, Machine, Record, Report, Shard};

use super::CommandOutput;
use crate::render;

#[derive(Debug, clap::Args)]
// Negative numbers reach the value parsers, which say what is wrong with
// them, instead of clap's "use -- -1" tip.
#[command(allow_negative_numbers = true)]
pub struct BenchArgs {
    #[arg(help = help_line("scenario"))]
    pub scenario: String,
    /// Variants to run, comma-separated, or `all` [default: all that run here].
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    #[arg(long, value_delimiter = ',', help = help_line("ordering"))]
    pub ordering: Vec<String>,
    #[arg(long, value_delimiter = ',', help = help_line("threads"))]
    pub threads: Vec<usize>,
    /// `shared`: every thread on one cache line; `private`: one padded line each [default: shared].
    #[arg(long)]
    pub contention: Option<String>,
    /// Length of each measured run: seconds, or with a unit (500ms, 2s) [default: 1s].
    #[arg(long, short = 'd', value_name = "DURATION", value_parser = parse_seconds)]
    pub duration: Option<f64>,
    /// Measured runs per cell [default: 5].
    #[arg(long)]
    pub runs: Option<usize>,
    /// Warm-up before the runs: seconds, or with a unit [default: 200ms].
    #[arg(long, value_name = "DURATION", value_parser = parse_seconds)]
    pub warmup: Option<f64>,
    #[arg(long, value_name = "spread|same|none", overrides_with = "no_pin", help = help_line("pin"))]
    pub pin: Option<String>,
    /// `--pin none`, as it was spelled before --pin took a placement.
    #[arg(long, hide = true, overrides_with = "pin")]
    pub no_pin: bool,
    /// PMU events to count besides cycles and instructions: perf names or raw codes (r6e) [default: none].
    #[arg(long, value_delimiter = ',')]
    pub events: Vec<String>,
    #[arg(long, help = help_line("cs_work"))]
    pub cs_work: Option<u32>,
    #[arg(long, help = help_line("increments"))]
    pub increments: Option<u64>,
    #[arg(long, help = help_line("tasks"))]
    pub tasks: Option<u64>,
    #[arg(long, value_delimiter = ',', help = help_line("rate"))]
    pub rate: Vec<String>,
    /// The ring's `--pin spread` (cross-core) or `--pin same` (same-core), as
    /// it was spelled before --pin became the one name of placement.
    #[arg(long, hide = true)]
    pub placement: Option<String>,
    #[arg(long, help = help_line("capacity"))]
    pub capacity: Option<usize>,
    #[arg(long, help = help_line("batch"))]
    pub batch: Option<usize>,
    #[arg(long, value_delimiter = ',', value_name = "WAIT", help = help_line("wait"))]
    pub wait: Vec<String>,
    /// Run only part I of N of the cells (0 <= I < N), for a batch
    /// scheduler's array job; the parts of one --label merge in compare and report.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// Also write the JSON to FILE (`-` for stdout), rewritten after each cell.
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    #[arg(long, value_name = "PATH", help = help_line("plugin"))]
    pub plugin: Vec<PathBuf>,
    #[arg(long, help = help_line("via_abi"))]
    pub via_abi: bool,
}

pub use crate::args::parse_seconds;

/// The help line of `bench`'s argument `id` where it names scenarios,
/// written from the registry (which scenario takes which option: its
/// `fields`), so that a new scenario is listed wherever it belongs
/// without an edit here.
fn help_line(id: &str) -> String {
    let ring = || takers(Field::Capacity);
    let fixed = || takers(Field::Increments);
    match id {
        "scenario" => {
            let names: Vec<&str> = atomlab_bench::all().iter().map(|s| s.name()).collect();
            format!("What to measure: {}", atomlab_core::sentence::or_list(&names))
        }
        "ordering" => format!(
            "Orderings for {}: relaxed, acquire, release, acq_rel, seq_cst [default: seq_cst]",
            takers(Field::Orderings)
        ),
        "threads" => format!(
            "Thread counts, comma-separated [default: 1 and powers of two up to the CPU count]; fixed-work {}: workers [default: one per CPU]",
            fixed()
        ),
        "pin" => format!(
            "Thread placement: spread (threads on the CPUs round-robin; {ring}: producer and consumer on two CPUs), same ({ring}: both on one CPU, time-sliced) or none (the scheduler's choice) [default: spread]. A value is required, as in stress and run",
            ring = ring()
        ),
        "cs_work" => format!(
            "Units of work inside each critical section ({}) [default: 0]",
            takers(Field::CsWork)
        ),
        "increments" => format!(
            "Fixed-work {} mode: total increments (the Crystal mutex shape) [default with --tasks: 1000000]",
            fixed()
        ),
        "tasks" => format!(
            "Fixed-work {} mode: tasks the increments are split over [default with --increments: 20]",
            fixed()
        ),
        "rate" => format!(
            "{}: offered rates (items or operations per second over all threads), comma-separated, with k, M or G (100k,1M), or max for flat out; at a fixed rate the record gives the CPU the load needs and the latency of each operation [default: max]",
            takers(Field::Rates)
        ),
        "capacity" => format!(
            "{}: ring capacity in items (atomlab's ring rounds it up to a power of two) [default: 1024]",
            ring()
        ),
        "batch" => format!(
            "{}: items the producer offers together: due at one time at a fixed rate, and one doorbell ring per batch with --wait notify [default: 1]",
            ring()
        ),
        "wait" => format!(
            "{}: how a side waits for room, items or its next deadline, comma-separated for one row each (spin,notify): spin, yield, or notify (the consumer sleeps on a futex when the ring is empty and the producer wakes it only when it said it sleeps) [default: spin]",
            ring()
        ),
        "plugin" => format!(
            "{}: a shared library whose variants of that kind (include/atomlab.h) run beside the built-in ones, or alone with --variant NAME; repeatable",
            atomlab_bench::registry::plugin_takers()
        ),
        "via_abi" => format!(
            "{}: call the built-in variants through the plugin ABI's function pointers, as a plugin's are (rows NAME@abi), so that they compare like with like beside --plugin",
            takers(Field::ViaAbi)
        ),
        other => panic!("no help line for bench's {other}"),
    }
}

impl BenchArgs {
    /// The plan these arguments ask for, or the library's complaint in
    /// terms of flags.
    fn plan(&self, cpus: usize) -> anyhow::Result<Plan> {
        let contention = word(&self.contention);
        // --pin spread|same|none; --no-pin and spsc's --placement are its
        // older spellings. `same` is spsc's same-core placement.
        let pin = if self.no_pin {
            Some("none")
        } else {
            self.pin.as_deref()
        };
        let placement_word = match pin {
            Some("same")
                if !atomlab_bench::registry::find(&self.scenario)
                    .is_ok_and(|s| s.takes(Field::Placement)) =>
            {
                anyhow::bail!(
                    "--pin same applies to bench {} (both sides on one CPU); here use spread or none",
                    takers(Field::Placement)
                )
            }
            Some("same") => Some("same-core".to_string()),
            Some("spread" | "none") | None => self.placement.clone(),
            Some(other) => anyhow::bail!("--pin {other}: expected spread, same or none"),
        };
        let placement = word(&placement_word);
        let waits: Result<Vec<WaitMode>, _> = self.wait.iter().map(|w| w.parse()).collect();
        // A word that names no value still counts as given, as a value that
        // sets off no other check (same-core needs one CPU); its own error
        // comes after the other checks', as validation has always ordered
        // them ("--wait applies to the spsc scenario" before "unknown wait").
        let req = Request {
            scenario: self.scenario.clone(),
            variants: self.variant.clone(),
            orderings: self.ordering.clone(),
            threads: self.threads.clone(),
            contention: contention.clone().unwrap_or(Some(Contention::Shared)),
            duration: self.duration,
            runs: self.runs,
            warmup: self.warmup,
            pin: pin != Some("none"),
            events: self.events.clone(),
            cs_work: self.cs_work,
            via_abi: self.via_abi,
            increments: self.increments,
            tasks: self.tasks,
            rates: self.rate.clone(),
            placement: placement.clone().unwrap_or(Some(Placement::SameCore)),
            capacity: self.capacity,
            batch: self.batch,
            waits: match &waits {
                Ok(w) => w.clone(),
                Err(_) => vec![WaitMode::Spin],
            },
        };
        let plan = atomlab_bench::registry::with_plugins(&self.scenario, &self.plugin)
            .and_then(|s| Plan::new(s, &req, cpus))
            .map_err(bad_input)?;
        contention?;
        placement?;
        waits?;
        Ok(plan)
    }
}

/// Parses an option's word into its typed value.
fn word<T: std::str::FromStr>(w: &Option<String>) -> Result<Option<T>, T::Err> {
    w.as_deref().map(str::parse).transpose()
}

/// The scenarios that take `field` ([`atomlab_bench::Scenario::fields`]),
/// as a list ("a, b and c"), the queue first.
fn takers(field: Field) -> String {
    let mut names: Vec<(bool, &str)> = atomlab_bench::all()
        .iter()
        .filter(|s| s.takes(field))
        .map(|s| (s.table() != atomlab_bench::TableKind::Queue, s.name()))
        .collect();
    // The queue first: the options it takes were written for it.
    names.sort_by_key(|(later, _)| *later);
    let names: Vec<&str> = names.into_iter().map(|(_, n)| n).collect();
    atomlab_core::sentence::and_list(&names)
}

/// The flag that gives `field`.
fn flag(field: Field) -> &'static str {
    match field {
        Field::Orderings => "--ordering",
        Field::Rates => "--rate",
        Field::CsWork => "--cs-work",
        Field::Increments => "--increments",
        Field::Tasks => "--tasks",
        Field::ViaAbi => "--via-abi",
        // Only the hidden --placement gives it to a scenario without a
        // ring (--pin same is refused before).
        Field::Placement => "--placement",
        Field::Capacity => "--capacity",
        Field::Batch => "--batch",
        Field::Wait => "--wait",
    }
}

/// A validation error, with fields named by their flags.
fn bad_input(e: BenchError) -> anyhow::Error {
    use BenchError as E;
    let msg = match e {
        E::CrossCoreNeedsTwoCpus => "spsc with --pin spread (cross-core) needs two CPUs and this process may use one; use --pin same".to_string(),
        E::NotApplicable { field, scenario } => {
            let flag = flag(field);
            let takers = takers(field);
            let scenarios = if takers.contains(' ') { "scenarios" } else { "scenario" };
            let why = match field {
                Field::Orderings => {
                    format!(": {scenario} variants fix their own orderings (see --variant)")
                }
                _ => String::new(),
            };
            format!("{flag} applies to the {takers} {scenarios}, not {scenario}{why}")
        }
        E::BadThreads(t, most, cpus) => format!(
            "--threads {t}: thread counts must be between 1 and {most} (64 x the {cpus} CPUs here)"
        ),
        E::BadDuration(field, v, min, max) => {
            format!("--{field} {v}: expected seconds between {min} and {max}")
        }
        E::BadRuns(n) => format!("--runs {n}: expected between 1 and 1000"),
        E::BadCsWork(n) => format!("--cs-work {n}: expected at most 1000000"),
        E::BadIncrements(n) => format!("--increments {n}: expected between 1 and 10^12"),
        E::BadTasks(n) => {
            format!("--tasks {n}: expected between 1 and min(--increments, 10^6)")
        }
        E::RateWithFixedWork => "--rate and --increments are two different measurements: a fixed offered rate for a time, or a fixed amount of work as fast as possible; pick one".to_string(),
        E::BadRate(r) => format!("--rate {r}: expected items per second above 0 and at most 1000G, with an optional k, M or G suffix (100k, 1M, 2.5G), or max for flat out"),
        E::BadCapacity(n) => format!("--capacity {n}: expected between 1 and 16777216 items"),
        E::BadBatch(n, cap) => {
            format!("--batch {n}: expected between 1 and the ring's capacity ({cap})")
        }
        other => return other.into(),
    };
    anyhow::anyhow!(msg)
}

/// Runs `plan` cell by cell with a progress bar, calling `after_each` with
/// the records so far.
pub fn run_plan(
    plan: &Plan,
    pmu: bool,
    shard: Option<Shard>,
    after_each: impl FnMut(&[Record]) -> anyhow::Result<()>,
) -> anyhow::Result<Vec<Record>> {
    let mut reporter = crate::progress::Reporter::new();
    atomlab_bench::batch::run(plan, pmu, shard, &mut |e| reporter.event(e), after_each)
}

pub fn run(args: BenchArgs) -> anyhow::Result<CommandOutput> {
    let mut machine = Machine::detect();
    let plan = args.plan(machine.cpus)?;
    if let Some(path) = &args.export_json {
        render::check_writable(path).context("--export-json")?;
    }
    for (v, why) in &plan.skipped {
        eprintln!("atomlab: note: skipping variant {v}: {why}");
    }
    if machine.emulated {
        eprintln!("atomlab: note: running under emulation (qemu-user): timings are not meaningful");
    }
    let pmu = atomlab_bench::batch::probe_pmu(&mut machine);
    if let Some(key) = atomlab_bench::plugin::isolate::child_request() {
        // A child running one plugin cell for its parent (lock's `isolated`).
        let cell = plan
            .split_cells()
            .into_iter()
            .find(|c| atomlab_bench::scenario::plugged::cell_key(c) == key)
            .ok_or_else(|| anyhow::anyhow!("bad plugin child request '{key}'"))?;
        let records = atomlab_bench::run(&cell, pmu, &mut |_| {})?;
        atomlab_bench::plugin::isolate::write_child_records(&records)?;
        std::process::exit(0);
    }
    let export = args.export_json.clone();
    let records = run_plan(&plan, pmu, args.shard, |so_far| {
        if let Some(path) = &export {
            let report = Report::new("bench", machine.clone(), so_far.to_vec());
            render::export_json(path, &report)
                .with_context(|| format!("writing --export-json {}", path.display()))?;
        }
        Ok(())
    })?;
    let mut records = records;
    if machine.emulated {
        for r in &mut records {
            r.notes
                .push("measured under emulation (qemu-user): timings are not meaningful".into());
        }
    }
    let to_stdout = matches!(&args.export_json, Some(p) if p.as_os_str() == "-");
    // A plugin's cell that crashed or hung is a failed verdict.
    let failed = records
        .iter()
        .any(|r| r.verdict == Some(atomlab_core::Verdict::Fail));
    Ok(CommandOutput {
        report: Report::new("bench", machine, records),
        status: if failed {
            ExitStatus::VerdictFailed
        } else {
            ExitStatus::Ok
        },
        people: Box::new(move |report| {
            if to_stdout {
                Ok(())
            } else {
                render::show(report)
            }
        }),
    })
}
