//! `atomlab stress`: validates the options into a plan, runs it variant by
//! variant (progress on stderr), renders a table and the details that
//! matter (first violation, why a broken variant went uncaught, the replay
//! line), and turns the verdicts into the exit code.

use atomlab_core::{ExitStatus, Machine, Record, Report, Shard};
use atomlab_stress::{Field, Pin, Plan, Request, StressError};

use super::CommandOutput;

#[derive(Debug, clap::Args)]
// Negative numbers reach the value parsers, which say what is wrong with
// them, instead of clap's "use -- -1" tip.
#[command(allow_negative_numbers = true)]
pub struct StressArgs {
    #[arg(help = help_line("scenario"))]
    pub scenario: String,
    /// Variants, comma-separated; `correct`, `broken` or `all` [default: correct].
    /// Broken variants (`broken-…`) run only when named or with broken/all.
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    #[arg(long, help = help_line("threads"))]
    pub threads: Option<usize>,
    #[arg(long, help = help_line("ops"))]
    pub ops: Option<u64>,
    #[arg(long, help = help_line("tasks"))]
    pub tasks: Option<u64>,
    /// Seed of the jitter and payloads [default: from the clock; printed].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Random short spins between operations, to shift race windows.
    #[arg(long)]
    pub jitter: bool,
    /// Thread placement: spread (round-robin over the CPUs), same (all on
    /// one CPU) or none (the scheduler's choice) [default: spread].
    #[arg(long, value_name = "spread|same|none")]
    pub pin: Option<String>,
    /// After this long a variant's run is stopped and judged TIMEOUT;
    /// a correct variant that times out exits 1 [default: 60s].
    // `--time-limit` was its name before --timeout became the one name of
    // a cut-off (README, "One vocabulary").
    #[arg(long = "timeout", alias = "time-limit", value_name = "DURATION",
          value_parser = crate::cmd::bench::parse_seconds)]
    pub time_limit: Option<f64>,
    /// Exit 0 only if every variant run FAILED (for CI jobs that check that
    /// the detectors catch the broken variants); 1 otherwise.
    #[arg(long)]
    pub expect_fail: bool,
    /// Run only part I of N of the variants (0 <= I < N), for a batch
    /// scheduler's array job; the parts of one --label merge in compare and report.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    #[arg(long, value_name = "PATH", help = help_line("plugin"))]
    pub plugin: Vec<std::path::PathBuf>,
}

/// The help line of `stress`'s argument `id` where it names scenarios,
/// written from the registry (each scenario's threads, operations and
/// their default, tasks and plugin kind), so that a new scenario is listed
/// wherever it belongs without an edit here.
fn help_line(id: &str) -> String {
    use atomlab_core::sentence::{and_list, or_list};
    use atomlab_stress::plan::Threads;
    let all = atomlab_stress::all();
    let names: Vec<&str> = all.iter().map(|s| s.name()).collect();
    // Scenario names grouped by what they say, in the registry's order.
    fn grouped<K: PartialEq>(
        items: impl Iterator<Item = (K, &'static str)>,
    ) -> Vec<(K, Vec<&'static str>)> {
        let mut groups: Vec<(K, Vec<&'static str>)> = Vec::new();
        for (k, name) in items {
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, names)) => names.push(name),
                None => groups.push((k, vec![name])),
            }
        }
        groups
    }
    match id {
        "scenario" => format!("What to torture: {}", or_list(&names)),
        "threads" => {
            let mut parts: Vec<String> = all
                .iter()
                .filter(|s| matches!(s.threads(), Threads::AtLeast { .. }))
                .map(|s| format!("{}: {}", s.name(), s.thread_roles()))
                .collect();
            let exactly = grouped(all.iter().filter_map(|s| match s.threads() {
                Threads::Exactly(n) => Some((n, s.name())),
                Threads::AtLeast { .. } => None,
            }));
            for (n, names) in exactly {
                parts.push(format!("{}: always {n}", names.join(", ")));
            }
            format!(
                "Threads ({}). Above the CPU count is allowed [default: one per CPU]",
                parts.join("; ")
            )
        }
        "ops" => {
            let units: Vec<String> = grouped(all.iter().map(|s| (s.ops_unit(), s.name())))
                .into_iter()
                .map(|(unit, names)| format!("{unit} ({})", names.join(", ")))
                .collect();
            let defaults: Vec<String> =
                grouped(all.iter().map(|s| (s.default_ops(), s.name())))
                    .into_iter()
                    .map(|(ops, names)| format!("{} {ops}", names.join("/")))
                    .collect();
            format!(
                "Operations in all: {} [default: {}]",
                units.join(", "),
                defaults.join(", ")
            )
        }
        "tasks" => {
            let takers: Vec<&str> = all
                .iter()
                .filter(|s| s.takes_tasks())
                .map(|s| s.name())
                .collect();
            format!(
                "{}: tasks the operations are split over, as in 002 [default: 20]",
                and_list(&takers)
            )
        }
        "plugin" => format!(
            "{}: a shared library whose variants of that kind (include/atomlab.h) are tested beside the built-in ones, or alone with --variant NAME; repeatable",
            atomlab_stress::registry::plugin_takers()
        ),
        other => panic!("no help line for stress's {other}"),
    }
}

impl StressArgs {
    /// The plan these arguments ask for, or the library's complaint in
    /// terms of flags.
    fn plan(&self, cpus: &[usize]) -> anyhow::Result<Plan> {
        let pin = self.pin.as_deref().map(str::parse::<Pin>).transpose();
        let req = Request {
            scenario: self.scenario.clone(),
            variants: self.variant.clone(),
            threads: self.threads,
            ops: self.ops,
            tasks: self.tasks,
            seed: self.seed,
            jitter: self.jitter,
            pin: pin.clone().ok().flatten(),
            time_limit: self.time_limit,
        };
        let plan = atomlab_stress::registry::with_plugins(&self.scenario, &self.plugin)
            .and_then(|s| Plan::new(s, &req, cpus))
            .map_err(bad_input)?;
        // An unknown --pin is reported after the other flags, as the
        // validation has always ordered them.
        if let Err(e) = pin {
            anyhow::bail!(
                "unknown --pin '{}': choose {}",
                e.0,
                atomlab_stress::plan::UnknownPin::CHOICES
            );
        }
        Ok(plan)
    }
}

/// The flag that sets a field of [`Request`].
fn flag(field: Field) -> &'static str {
    match field {
        Field::Threads => "--threads",
        Field::Ops => "--ops",
        Field::Tasks => "--tasks",
        Field::Pin => "--pin",
        Field::TimeLimit => "--timeout",
    }
}

/// A validation error, with fields named by their flags.
fn bad_input(e: StressError) -> anyhow::Error {
    match e {
        StressError::OutOfRange { field, value, why } => {
            anyhow::anyhow!("{} {value}: {}", flag(field), why.render(&flag))
        }
        StressError::NotApplicable { field, scenario } => {
            let takers: Vec<&str> = atomlab_stress::all()
                .iter()
                .filter(|s| field != Field::Tasks || s.takes_tasks())
                .map(|s| s.name())
                .collect();
            anyhow::anyhow!(
                "{} applies to the {} scenario only, not {scenario}",
                flag(field),
                atomlab_core::sentence::and_list(&takers)
            )
        }
        other => other.into(),
    }
}

/// Runs `plan`, returning its records and the exit status its verdicts
/// give, or why a variant could not run at all (its threads did not all
/// start: exit 2).
pub fn run_plan(plan: &Plan, expect_fail: bool) -> Result<(Vec<Record>, ExitStatus), StressError> {
    let mut reporter = crate::progress::Reporter::new();
    atomlab_stress::run_records(plan, expect_fail, atomlab_stress::GRACE, &mut |e| {
        reporter.event(e)
    })
}

pub fn run(args: StressArgs) -> anyhow::Result<CommandOutput> {
    let machine = Machine::detect();
    let mut plan = args.plan(&atomlab_thread::allowed_cpus())?;
    if let Some(s) = args.shard {
        plan.variants = s.select(plan.variants.clone());
    }
    if let Some(words) = atomlab_stress::plugin::isolate::child_request() {
        // A child running one plugin variant for its parent (run_records).
        let (seed, variant) = atomlab_stress::child_part(&words)
            .ok_or_else(|| anyhow::anyhow!("bad plugin child request '{words}'"))?;
        plan.seed = seed;
        plan.variants.retain(|v| *v == variant);
        let (records, status) = run_plan(&plan, args.expect_fail)?;
        atomlab_stress::plugin::isolate::write_child_records(&records)?;
        std::process::exit(status.code());
    }
    eprintln!(
        "atomlab stress {}: seed {} ({} CPUs, {})",
        plan.scenario.name(),
        plan.seed,
        plan.cpus.len(),
        machine.arch
    );
    let (mut records, status) = run_plan(&plan, args.expect_fail)?;
    if let Some(s) = args.shard {
        for r in &mut records {
            r.param("shard", s.to_string());
        }
    }
    if machine.emulated {
        let note = "running under emulation (qemu-user), which shows none of a real Arm or RISC-V CPU's weak-memory reorderings: a NOT OBSERVED here says nothing about that hardware";
        eprintln!("atomlab: note: {note}");
        for r in &mut records {
            r.notes.push(note.to_string());
        }
    }
    Ok(CommandOutput {
        report: Report::new("stress", machine, records),
        status,
        people: Box::new(crate::render::show),
    })
}
