//! `atomlab run`: run litmus tests on this CPU and put the histogram of
//! final states beside each applicable model's verdict, as a table,
//! litmus7's log format or JSON. The running and judging is one call to
//! [`atomlab_run::batch::run_files`]; this file maps the flags to its
//! options, prints the records it returns through atomlab-report's run
//! view (which `atomlab show` uses for a saved run) and picks the exit code.

use std::io::IsTerminal;
use std::time::Duration;

use atomlab_core::{ExitStatus, Machine, Record, Report};
use atomlab_run::batch::{self, BatchOptions, Progress, Ran};
use atomlab_run::tune::Pinned;
use atomlab_run::{
    Affinity, Layout, Preload, PrepareOptions, Roles, RunBarrier, RunOptions, SyncMode,
};

use super::CommandOutput;
use atomlab_report::kinds::run::view as run_view;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Per test: the histogram with a column per model, and a summary table.
    Table,
    /// litmus7's log format (mcompare7 and litmus7 log scripts read it).
    Litmus,
    /// JSON: the --json document, as `check --format json`.
    Json,
}

/// Start synchronisation per instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Sync {
    /// A counter per instance; threads spin until all arrived.
    Spin,
    /// As spin, then a full fence (MFENCE; DMB ISH on AArch64) before the test's code.
    Userfence,
    /// As spin, then all wait for a common deadline on the time-stamp counter (the generic timer on AArch64).
    Timebase,
    /// Instance k's leader (thread k mod n) raises a flag and fences; the others spin on it (litmus7's userfence).
    Leader,
    /// None: threads run through the instances on their own.
    None,
}

#[derive(Debug, clap::Args)]
#[command(allow_negative_numbers = true)]
#[command(
    after_help = "Exit status: 0 every test ran and every state seen is allowed by every model that applies; \
1 a state some model forbids was seen (FORBIDDEN OUTCOME OBSERVED), or --timeout cut a test short (TIMEOUT); \
2 bad input: a CPU --pin may not use (refused before anything runs), or a test that cannot be read, \
parsed or encoded (each named with its place on stderr; the other tests run and are saved, as with check). Tests this host cannot run (another ISA's, Linux-kernel C tests, \
an instruction this CPU lacks such as an LSE atomic without FEAT_LSE) are skipped with one line; when \
nothing is left to run, that is bad input too.\n\
Thread code is generated as machine code at run time: on x86-64, X86 tests as written and C tests through the \
C11->x86 mapping that `atomlab check` judges the x86tso column with; on AArch64, AArch64 tests as written and \
C tests through the C11->AArch64 mapping of the aarch64 column (--arm-acquire); on riscv64, RISCV tests as \
written and C tests through the C11->RISC-V mapping (the spec's Table A.6) of the riscv column. Under emulation (qemu-user) \
the output says so: its histogram says nothing about the hardware. Which synchronisation finds relaxed outcomes fastest \
depends on the machine and the test (on one VM the best setting changed between boots), so by default each test's runs \
try the settings not given on the command line, one run each, then go to the setting Thompson sampling picks from the hits per second so far; \
the note under each test and the record's `tuning` say what was tried and chosen, and the replay line pins it (--no-tune: no trials)."
)]
pub struct RunArgs {
    /// Litmus files, directories (searched for *.litmus) and @LIST files (one path per line).
    #[arg(required = true, value_name = "FILES")]
    pub files: Vec<String>,
    /// Instances of the test per run, laid out side by side in memory.
    #[arg(long, short = 's', value_name = "N", default_value_t = 1000)]
    pub size: usize,
    /// Runs; each run executes every instance once (by default a million instances in all, as litmus7's 5000 x 200).
    #[arg(long, short = 'r', value_name = "R", default_value_t = 1000)]
    pub runs: usize,
    /// How the threads start each instance together [default: tuned per test, starting from timebase].
    #[arg(long, value_enum)]
    pub sync: Option<Sync>,
    /// Thread placement: `spread` (thread t on the t-th allowed CPU, wrapping), `none`, or a CPU list `0,1`.
    // `--affinity` was its name before --pin became the one name of thread
    // placement (README, "One vocabulary").
    #[arg(
        long,
        alias = "affinity",
        value_name = "spread|none|CPUS",
        default_value = "spread"
    )]
    pub pin: String,
    /// Bytes between the locations of one instance (8 to 4096, a multiple of 8).
    #[arg(
        long,
        value_name = "BYTES",
        default_value_t = 64,
        conflicts_with = "same_line"
    )]
    pub stride: usize,
    /// All locations of an instance on one cache line (--stride 8).
    #[arg(long)]
    pub same_line: bool,
    /// Instance memory: `blocks` (a shuffled block per instance, --stride apart) or `packed` (an array per location, instances side by side, in order; litmus7's -memory direct).
    /// [default: tuned per test, starting from blocks]
    #[arg(long, value_parser = ["blocks", "packed"])]
    pub layout: Option<String>,
    /// Before each run's instances: `none` (the main thread writes every thread's frames), `frames` (each thread writes its own), `random`/`all` (and reads half/all of the instance memory; litmus7's -preload random).
    /// [default: tuned per test, starting from none]
    #[arg(long, value_parser = ["none", "frames", "random", "all"])]
    pub preload: Option<String>,
    /// `fixed`: OS thread i runs Pi in every run; `rotate`: in run r it runs P((i+r) mod n) (litmus7's -launch changing).
    /// [default: tuned per test, starting from rotate]
    #[arg(long, value_parser = ["fixed", "rotate"])]
    pub roles: Option<String>,
    /// Loads of each thread's own frame after each of its memory accesses, as a C compiler's stack traffic spaces them (0: back to back) [default: tuned per test, starting from 0].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=64))]
    pub spacing: Option<u32>,
    /// Do not tune: run every test with the starting setting (timebase, blocks, none, rotate) or the one given. By default each setting not given (--sync, --timebase-delay, --layout, --preload, --roles, --spacing) gets a run and the rest go to the one Thompson sampling picks from the relaxed outcomes per second so far; the record says what ran most, and its replay line pins it.
    #[arg(long)]
    pub no_tune: bool,
    /// With --sync timebase: ticks of the time-stamp counter between the last thread's arrival and the common start, or `auto` to adapt it each run to the shortest that still aligns the threads [default: 500 on x86-64; the same time on the generic timer (AArch64) or the time CSR (RISC-V)].
    #[arg(long, value_name = "auto|TICKS", value_parser = parse_delay)]
    pub timebase_delay: Option<TimebaseDelay>,
    /// How threads meet between runs: `futex` (sleep) or `spin` [default: futex].
    #[arg(long, value_parser = ["futex", "spin"])]
    pub run_barrier: Option<String>,
    /// Stop a test after this long (runs done are kept; TIMEOUT, exit 1);
    /// 0 for no limit. The same default as check's.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = crate::args::parse_seconds)]
    pub timeout: f64,
    /// Seed of the instance shuffle [default: from the clock; printed in
    /// the replay line], as stress's seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    #[arg(long, short = 'm', value_delimiter = ',', value_name = "MODELS", help = model_help(),
          value_parser = clap::builder::PossibleValuesParser::new(
              // Every built-in model but lkmm, whose tests `run` cannot run.
              atomlab_model::MODEL_NAMES.iter().copied().filter(|m| *m != "lkmm")))]
    pub model: Vec<String>,
    /// How C11 acquire loads compile on AArch64 (C tests on an AArch64 host), as in `check`.
    #[arg(long, value_enum, default_value = "ldar")]
    pub arm_acquire: crate::args::ArmAcquire,
}

fn parse_affinity(s: &str) -> anyhow::Result<Affinity> {
    match s {
        "spread" => Ok(Affinity::Spread),
        "none" => Ok(Affinity::None),
        list => {
            let cpus: Result<Vec<usize>, _> = list.split(',').map(|c| c.trim().parse()).collect();
            match cpus {
                Ok(c) if !c.is_empty() => Ok(Affinity::Cpus(c)),
                _ => anyhow::bail!(
                    "--pin {list}: expected spread, none, or a comma-separated CPU list such as 0,1"
                ),
            }
        }
    }
}

/// `--model`'s help line, its models named from the registry.
fn model_help() -> String {
    use atomlab_core::sentence::{and_list, or_list};
    let cpus: Vec<&str> = atomlab_model::models::of_cpus().map(|m| m.name()).collect();
    format!(
        "Models to put beside the hardware, comma-separated [default: the model of the CPU the test is written for ({}); for C tests the host's, {}]. `sc` shows where the CPU is not sequentially consistent (its relaxed outcomes are then FORBIDDEN, exit 1)",
        or_list(&cpus),
        and_list(atomlab_model::models::C_LANGUAGE)
    )
}

/// Says a forbidden outcome on stderr as soon as its test has run (the
/// tables follow at the end); `suite` says its own the same way.
pub(crate) fn say_forbidden(ran: &Ran) {
    // This CPU's own model, when it was judged and allows the state: then
    // a stronger model (sc) forbidding it is what was asked, not an erratum.
    let host = atomlab_model::models::of_cpu(atomlab_run::host_isa()).map_or("", |m| m.name());
    let host_judged = ran
        .models
        .iter()
        .any(|m| matches!(m, atomlab_model::ModelOutcome::Done(r) if r.model == host));
    for f in &ran.forbidden {
        let host_forbids = ran
            .forbidden
            .iter()
            .any(|g| g.model == host && g.state == f.state);
        let cause = if host_judged && !host_forbids && f.model != host {
            format!(
                "{host}, this CPU's own model, allows it: {} is stronger than this CPU",
                f.model
            )
        } else {
            "a CPU erratum or a wrong model".to_string()
        };
        eprintln!(
            "atomlab: FORBIDDEN OUTCOME OBSERVED: {} state {} seen {} times, forbidden by {} ({cause}); replay: {}",
            ran.test.name, f.state, f.count, f.model, ran.replay
        );
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<CommandOutput> {
    let affinity = parse_affinity(&args.pin)?;
    let timeout = match args.timeout {
        0.0 => None,
        s if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        s => anyhow::bail!("--timeout must be a number of seconds (0 for none), not {s}"),
    };
    let opts = BatchOptions {
        run: RunOptions {
            size: args.size,
            runs: args.runs,
            sync: match args.sync.unwrap_or(Sync::Timebase) {
                Sync::Spin => SyncMode::Spin,
                Sync::Userfence => SyncMode::UserFence,
                Sync::Timebase => SyncMode::Timebase,
                Sync::Leader => SyncMode::Leader,
                Sync::None => SyncMode::None,
            },
            affinity,
            stride: if args.same_line { 8 } else { args.stride },
            timeout,
            seed: args.seed.unwrap_or_else(atomlab_stress::rng::fresh_seed),
            layout: match args.layout.as_deref().unwrap_or("blocks") {
                "packed" => Layout::Packed,
                _ => Layout::Blocks,
            },
            preload: match args.preload.as_deref().unwrap_or("none") {
                "frames" => Preload::Frames,
                "random" => Preload::Random,
                "all" => Preload::All,
                _ => Preload::None,
            },
            roles: match args.roles.as_deref().unwrap_or("rotate") {
                "rotate" => Roles::Rotate,
                _ => Roles::Fixed,
            },
            timebase_delay: match args.timebase_delay {
                Some(TimebaseDelay(d)) => d,
                None => Some(atomlab_run::default_timebase_delay()),
            },
            run_barrier: match args.run_barrier.as_deref() {
                Some("spin") => RunBarrier::Spin,
                _ => RunBarrier::Futex,
            },
            ..RunOptions::default()
        },
        prepare: PrepareOptions {
            arm_acquire: match args.arm_acquire {
                crate::args::ArmAcquire::Ldar => atomlab_model::AcquireLoad::Ldar,
                crate::args::ArmAcquire::Ldapr => atomlab_model::AcquireLoad::Ldapr,
            },
            spacing: args.spacing.unwrap_or(0),
        },
        models: args.model.clone(),
        // What the command line gives is pinned; the tuner varies the rest.
        tune: (!args.no_tune).then_some(Pinned {
            sync: args.sync.is_some(),
            timebase_delay: args.timebase_delay.is_some(),
            layout: args.layout.is_some() || args.same_line || args.stride != 64,
            preload: args.preload.is_some(),
            roles: args.roles.is_some(),
            spacing: args.spacing.is_some(),
            run_barrier: args.run_barrier.is_some(),
        }),
    };
    let machine = Machine::detect();
    let terminal = std::io::stderr().is_terminal();
    opts.run.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
    // What this host cannot run (another ISA's tests in a mixed folder)
    // is skipped with one line, as the rest runs.
    let (programs, skipped) = match batch::prepare_for_host(&args.files, &opts.prepare) {
        Ok(prepared) => prepared,
        Err(errors) => {
            let mut report = Report::new("run", machine, Vec::new());
            report.errors = errors;
            report
                .notes
                .push("nothing was run: no input can run on this host".into());
            return Ok(CommandOutput {
                report,
                status: ExitStatus::BadInput,
                people: Box::new(|_| Ok(())),
            });
        }
    };
    let skipped_note = skipped.note();
    if let Some(note) = &skipped_note {
        eprintln!("atomlab run: {note}");
    }
    // Past ten seconds, a clock with the test being run (a terminal only).
    let clock = crate::progress::Clock::start("run", None);
    let ran = batch::run_programs(&programs, &opts, |p| match p {
        // A progress line on a terminal only, as `check` (none when piped).
        Progress::Starting { test, .. } if terminal => {
            clock.label(&format!("run {}", test.name));
            eprintln!(
                "atomlab run: {}: {} x {} instances, {}",
                test.name,
                opts.run.runs,
                opts.run.size,
                match opts.tune {
                    Some(p) if !p.all() => "tuned".to_string(),
                    _ => format!("--sync {}", opts.run.sync.name()),
                }
            )
        }
        Progress::Starting { .. } => {}
        Progress::Done { ran, .. } => say_forbidden(ran),
    });
    drop(clock);
    let ran = ran.map_err(|e| anyhow::anyhow!("{e}"))?;
    let records: Vec<Record> = ran.iter().map(Ran::record).collect();
    // A forbidden outcome observed, a test cut short, or one a model could
    // not judge: exit 1.
    let status = if !skipped.refused.is_empty() {
        // Some inputs could not run: bad input, as `check` says it, after
        // the rest ran and was saved (the dispatcher lists them).
        ExitStatus::BadInput
    } else {
        batch::exit_status(&records)
    };
    let emulated = machine.emulated;
    let mut report = Report::new("run", machine, records);
    if emulated {
        report.notes.push(run_view::EMULATED.into());
    }
    report.notes.extend(skipped_note);
    report.errors = skipped.refused;
    let format = args.format;
    Ok(CommandOutput {
        report,
        status,
        people: Box::new(move |report| {
            let mut out = std::io::stdout().lock();
            match format {
                Format::Table => run_view::write_tables(&mut out, &report.records, emulated)?,
                Format::Litmus => run_view::write_litmus_log(&mut out, &report.records, emulated)?,
                Format::Json => unreachable!("--format json is --json: the dispatcher prints it"),
            }
            Ok(())
        }),
    })
}

/// `--timebase-delay`: `None` for `auto` (adapted run by run), or ticks.
#[derive(Debug, Clone, Copy)]
pub struct TimebaseDelay(pub Option<u64>);

/// `--timebase-delay`: `auto` or a positive number of ticks.
fn parse_delay(s: &str) -> Result<TimebaseDelay, String> {
    match s {
        "auto" => Ok(TimebaseDelay(None)),
        _ => match s.parse::<u64>() {
            Ok(n) if n > 0 => Ok(TimebaseDelay(Some(n))),
            _ => Err(format!(
                "'{s}' is neither `auto` nor a positive number of timer ticks (e.g. 500)"
            )),
        },
    }
}
