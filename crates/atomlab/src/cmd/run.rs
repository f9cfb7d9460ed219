//! `atomlab run`: run litmus tests on this CPU and put the histogram of
//! final states beside each applicable model's verdict, as a table,
//! litmus7's log format or JSON. The running and judging is one call to
//! [`atomlab_run::batch::run_files`]; this file maps the flags to its
//! options, prints the tables from the records it returns (`atomlab show`
//! prints a saved run through the same functions) and picks the exit code.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use atomlab_core::{ExitStatus, Machine, Record, Report, Verdict};
use atomlab_run::batch::{self, BatchError, BatchOptions, Progress, Ran};
use atomlab_run::{
    Affinity, Layout, Preload, PrepareOptions, Roles, RunBarrier, RunOptions, SyncMode,
};

use super::Outcome;
use crate::render;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Per test: the histogram with a column per model, and a summary table.
    Table,
    /// litmus7's log format (mcompare7 and litmus7 log scripts read it).
    Litmus,
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
    /// None: threads run through the instances on their own.
    None,
}

#[derive(Debug, clap::Args)]
#[command(allow_negative_numbers = true)]
#[command(
    after_help = "Exit status: 0 every test ran and every state seen is allowed by every model that applies; \
1 a state some model forbids was seen (FORBIDDEN OUTCOME OBSERVED), or --timeout cut a test short (TIMEOUT); \
2 bad input (unreadable test, a test for another ISA than this host, an instruction the code generator \
cannot encode, an instruction this CPU lacks such as an LSE atomic without FEAT_LSE: all refused before \
anything runs).\n\
Thread code is generated as machine code at run time: on x86-64, X86 tests as written and C tests through the \
C11->x86 mapping that `atomlab check` judges the x86tso column with; on AArch64, AArch64 tests as written and \
C tests through the C11->AArch64 mapping of the aarch64 column (--arm-acquire); on riscv64, RISCV tests as \
written and C tests through the C11->RISC-V mapping (the spec's Table A.6) of the riscv column. Under emulation (qemu-user) \
the output says so: its histogram says nothing about the hardware. The default --sync userfence gave the most \
SB witnesses per second on the 2-core machine it was measured on (median of 9 runs); timebase gives more \
per instance but runs about 4x slower there (BENCHMARKS.md)."
)]
pub struct RunArgs {
    /// Litmus files, directories (searched for *.litmus) and @LIST files (one path per line).
    #[arg(required = true, value_name = "FILES")]
    pub files: Vec<String>,
    /// Instances of the test per run, laid out side by side in memory.
    #[arg(long, short = 's', value_name = "N", default_value_t = 1000)]
    pub size: usize,
    /// Runs; each run executes every instance once.
    #[arg(long, short = 'r', value_name = "R", default_value_t = 200)]
    pub runs: usize,
    /// How the threads start each instance together.
    #[arg(long, value_enum, default_value = "userfence")]
    pub sync: Sync,
    /// Thread placement: `spread` (thread t on the t-th allowed CPU, wrapping), `none`, or a CPU list `0,1`.
    #[arg(long, value_name = "spread|none|CPUS", default_value = "spread")]
    pub affinity: String,
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
    #[arg(long, value_parser = ["blocks", "packed"], default_value = "blocks")]
    pub layout: String,
    /// Before each run's instances: `none` (the main thread writes every thread's frames), `frames` (each thread writes its own), `random`/`all` (and reads half/all of the instance memory; litmus7's -preload random).
    #[arg(long, value_parser = ["none", "frames", "random", "all"], default_value = "none")]
    pub preload: String,
    /// `fixed`: OS thread i runs Pi in every run; `rotate`: in run r it runs P((i+r) mod n) (litmus7's -launch changing).
    #[arg(long, value_parser = ["fixed", "rotate"], default_value = "fixed")]
    pub roles: String,
    /// How threads meet between runs: `futex` (sleep) or `spin`.
    #[arg(long, value_parser = ["futex", "spin"], default_value = "futex")]
    pub run_barrier: String,
    /// Stop a test after S seconds (runs done are kept; TIMEOUT, exit 1); 0 for no limit.
    #[arg(long, value_name = "S", default_value = "0", value_parser = crate::cli::parse_seconds)]
    pub timeout: f64,
    /// Seed of the instance shuffle (printed in the replay line).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Models to put beside the hardware, comma-separated [default: x86tso for X86
    /// tests, aarch64 for AArch64 tests, riscv for RISCV tests; for C tests the
    /// host's (x86tso, aarch64 or riscv), c11 and rc11]. `sc` shows where the CPU is not sequentially consistent (its
    /// relaxed outcomes are then FORBIDDEN, exit 1).
    #[arg(long, short = 'm', value_delimiter = ',', value_name = "MODELS",
          value_parser = clap::builder::PossibleValuesParser::new(["sc", "x86tso", "aarch64", "riscv", "c11", "rc11"]))]
    pub model: Vec<String>,
    /// How C11 acquire loads compile on AArch64 (C tests on an AArch64 host), as in `check`.
    #[arg(long, value_enum, default_value = "ldar")]
    pub arm_acquire: super::check::ArmAcquire,
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
                    "--affinity {list}: expected spread, none, or a comma-separated CPU list such as 0,1"
                ),
            }
        }
    }
}

/// Says a forbidden outcome on stderr as soon as its test has run (the
/// tables follow at the end); `suite` says its own the same way.
pub(crate) fn say_forbidden(ran: &Ran) {
    for f in &ran.forbidden {
        eprintln!(
            "atomlab: FORBIDDEN OUTCOME OBSERVED: {} state {} seen {} times, forbidden by {} (a CPU erratum or a wrong model); replay: {}",
            ran.test.name, f.state, f.count, f.model, ran.replay
        );
    }
}

pub fn run(args: RunArgs) -> anyhow::Result<Outcome> {
    let affinity = parse_affinity(&args.affinity)?;
    let timeout = match args.timeout {
        0.0 => None,
        s if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        s => anyhow::bail!("--timeout must be a number of seconds (0 for none), not {s}"),
    };
    let opts = BatchOptions {
        run: RunOptions {
            size: args.size,
            runs: args.runs,
            sync: match args.sync {
                Sync::Spin => SyncMode::Spin,
                Sync::Userfence => SyncMode::UserFence,
                Sync::Timebase => SyncMode::Timebase,
                Sync::None => SyncMode::None,
            },
            affinity,
            stride: if args.same_line { 8 } else { args.stride },
            timeout,
            seed: args.seed,
            layout: match args.layout.as_str() {
                "packed" => Layout::Packed,
                _ => Layout::Blocks,
            },
            preload: match args.preload.as_str() {
                "frames" => Preload::Frames,
                "random" => Preload::Random,
                "all" => Preload::All,
                _ => Preload::None,
            },
            roles: match args.roles.as_str() {
                "rotate" => Roles::Rotate,
                _ => Roles::Fixed,
            },
            run_barrier: match args.run_barrier.as_str() {
                "spin" => RunBarrier::Spin,
                _ => RunBarrier::Futex,
            },
            ..RunOptions::default()
        },
        prepare: PrepareOptions {
            arm_acquire: match args.arm_acquire {
                super::check::ArmAcquire::Ldar => atomlab_model::AcquireLoad::Ldar,
                super::check::ArmAcquire::Ldapr => atomlab_model::AcquireLoad::Ldapr,
            },
        },
        models: args.model.clone(),
    };
    let machine = Machine::detect();
    let terminal = std::io::stderr().is_terminal();
    let ran = batch::run_files(&args.files, &opts, |p| match p {
        // A progress line on a terminal only, as `check` (none when piped).
        Progress::Starting { test, .. } if terminal => eprintln!(
            "atomlab run: {}: {} x {} instances, --sync {}",
            test.name,
            opts.run.runs,
            opts.run.size,
            opts.run.sync.name()
        ),
        Progress::Starting { .. } => {}
        Progress::Done { ran, .. } => say_forbidden(ran),
    });
    let ran = match ran {
        Ok(ran) => ran,
        Err(BatchError::Inputs(errors)) => {
            let mut report = Report::new("run", machine, Vec::new());
            report.errors = errors;
            report
                .notes
                .push("nothing was run: every input must be runnable first".into());
            return Ok(Outcome {
                report,
                status: ExitStatus::BadInput,
                people: Box::new(|_| Ok(())),
            });
        }
        Err(BatchError::Run(e)) => anyhow::bail!("{e}"),
    };
    let records: Vec<Record> = ran.iter().map(Ran::record).collect();
    // A forbidden outcome observed, a test cut short, or one a model could
    // not judge: exit 1.
    let status = if records.iter().any(|r| {
        matches!(
            r.verdict,
            Some(Verdict::Fail | Verdict::Timeout | Verdict::Bound)
        )
    }) {
        ExitStatus::VerdictFailed
    } else {
        ExitStatus::Ok
    };
    let emulated = machine.emulated;
    let mut report = Report::new("run", machine, records);
    if emulated {
        report.notes.push(EMULATED.into());
    }
    let format = args.format;
    Ok(Outcome {
        report,
        status,
        people: Box::new(move |report| {
            let mut out = std::io::stdout().lock();
            match format {
                Format::Table => tables(&mut out, &report.records, emulated),
                Format::Litmus => litmus_log(&mut out, &report.records, emulated),
            }
        }),
    })
}

/// Said on stdout (and in the report's notes) when the run is under
/// qemu-user: the emulator runs each thread's code functionally, so its
/// histogram says nothing about what an Arm (or any real) CPU does.
const EMULATED: &str = "running under emulation (qemu-user): the histogram shows the emulator's behaviour and says nothing about Arm or any other real hardware";

/// A run record's fields as its tables read them (`batch::record` writes
/// them); a field an older record lacks reads as empty.
struct Fields<'a>(&'a Record);

impl<'a> Fields<'a> {
    fn text(&self, key: &str) -> String {
        match self.0.parameters.get(key) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => "-".into(),
        }
    }
    fn count(&self, key: &str) -> u64 {
        self.0
            .parameters
            .get(key)
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    }
    fn metric(&self, name: &str) -> f64 {
        self.0.metric(name).and_then(|m| m.median()).unwrap_or(0.0)
    }
    fn detail(&self, key: &str) -> Option<&'a serde_json::Value> {
        self.0.detail.as_ref().and_then(|d| d.get(key))
    }
    fn list(&self, key: &str) -> &'a [serde_json::Value] {
        self.detail(key)
            .and_then(|v| v.as_array())
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

fn str_of<'a>(v: &'a serde_json::Value, key: &str) -> &'a str {
    v.get(key).and_then(|x| x.as_str()).unwrap_or("")
}

fn names(v: &serde_json::Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(|x| x.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Per test: the header line, the histogram with a column per model (and
/// the allowed states not observed), the observation, the rates, each
/// model's verdict and what went wrong; from the run's records alone, so
/// `atomlab run` and `atomlab show` print the same.
fn tables(out: &mut impl Write, recs: &[Record], emulated: bool) -> anyhow::Result<()> {
    if emulated {
        writeln!(out, "NOTE: {EMULATED}")?;
    }
    for r in recs {
        let f = Fields(r);
        let cpus: Vec<String> = r
            .parameters
            .get("cpus")
            .and_then(|c| c.as_array())
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .map(|(i, c)| match c.as_i64() {
                Some(c) if c >= 0 => format!("P{i}:cpu{c}"),
                _ => format!("P{i}:any"),
            })
            .collect();
        writeln!(
            out,
            "{} ({}): {} instances ({} runs done), {:.3} s, {}",
            r.scenario,
            f.text("file"),
            f.metric("instances") as u64,
            f.count("runs_done"),
            f.metric("seconds"),
            cpus.join(" ")
        )?;
        // The models that gave a verdict: they have allowed states.
        let judged: Vec<&serde_json::Value> = f
            .list("models")
            .iter()
            .filter(|m| m.get("allowed_states").is_some())
            .collect();
        let mut t = render::table();
        let mut header = vec!["count".to_string(), "witness".into(), "final state".into()];
        header.extend(judged.iter().map(|m| str_of(m, "model").to_string()));
        t.set_header(header);
        let model_cell = |m: &serde_json::Value, allowed_by: &[String]| {
            if allowed_by.iter().any(|a| a == str_of(m, "model")) {
                "allowed".to_string()
            } else if m.get("data_race").and_then(|x| x.as_bool()) == Some(true) {
                "forbidden (racy test: undefined)".to_string()
            } else {
                "FORBIDDEN".to_string()
            }
        };
        let witness = |h: &serde_json::Value| {
            if h.get("witness").and_then(|x| x.as_bool()) == Some(true) {
                "*".to_string()
            } else {
                String::new()
            }
        };
        for h in f.list("histogram") {
            let allowed_by = names(h, "allowed_by");
            let mut row = vec![
                h.get("count")
                    .and_then(|x| x.as_u64())
                    .unwrap_or(0)
                    .to_string(),
                witness(h),
                str_of(h, "state").to_string(),
            ];
            row.extend(judged.iter().map(|m| model_cell(m, &allowed_by)));
            t.add_row(row);
        }
        // Allowed states the CPU did not show: normal, and said so.
        for h in f.list("not_observed") {
            let allowed_by = names(h, "allowed_by");
            let mut row = vec!["0".to_string(), witness(h), str_of(h, "state").to_string()];
            row.extend(
                judged
                    .iter()
                    .map(|m| format!("{}, not observed", model_cell(m, &allowed_by))),
            );
            t.add_row(row);
        }
        writeln!(out, "{t}")?;
        let positive = f.metric("positive") as u64;
        writeln!(
            out,
            "Observation {} {} {} {}",
            r.scenario,
            f.text("observation"),
            positive,
            f.metric("negative") as u64
        )?;
        writeln!(
            out,
            "witnesses: {} per second, {} per million instances",
            render::num(f.metric("witnesses_per_second")),
            render::num(f.metric("witnesses_per_million"))
        )?;
        for m in f.list("models") {
            let model = str_of(m, "model");
            match m.get("allowed_states").and_then(|s| s.as_array()) {
                Some(states) => {
                    let race = if m.get("data_race").and_then(|x| x.as_bool()) == Some(true) {
                        " race"
                    } else {
                        ""
                    };
                    let via = match m.get("mapping").and_then(|x| x.as_str()) {
                        Some(map) => format!(" through {map}"),
                        None => String::new(),
                    };
                    writeln!(
                        out,
                        "{model}: {} ({}){race}{via}",
                        str_of(m, "observation"),
                        states.len()
                    )?;
                }
                None => match m.get("unjudged").and_then(|x| x.as_str()) {
                    Some(why) => writeln!(out, "{model}: {}: {why}", str_of(m, "observation"))?,
                    None => writeln!(out, "{model}: {}", str_of(m, "observation"))?,
                },
            }
        }
        let exists = f.detail("kind").and_then(|k| k.as_str()) == Some("Allowed");
        if positive == 0 && exists && judged.iter().any(|m| str_of(m, "observation") != "Never") {
            writeln!(
                out,
                "the condition is allowed by a model but was not observed in {} instances: normal for an allowed outcome",
                f.metric("instances") as u64
            )?;
        }
        let replay = f.detail("replay").and_then(|x| x.as_str()).unwrap_or("");
        for x in f.list("forbidden") {
            // Under emulation the emulator is a third suspect: qemu-user on
            // an x86-64 host lets a store-release pass a later
            // load-acquire (measured: SB+rel+acq, crates/atomlab-run/tests).
            let cause = if emulated {
                "the emulator's behaviour, a CPU erratum or a wrong model"
            } else {
                "a CPU erratum or a wrong model"
            };
            writeln!(
                out,
                "FORBIDDEN OUTCOME OBSERVED: {} {} seen {} times, forbidden by {} ({cause})\n  replay: {replay}",
                r.scenario,
                str_of(x, "state"),
                x.get("count").and_then(|c| c.as_u64()).unwrap_or(0),
                str_of(x, "model"),
            )?;
        }
        if f.detail("timed_out").and_then(|x| x.as_bool()) == Some(true) {
            writeln!(
                out,
                "TIMEOUT: --timeout stopped the test after {} runs",
                f.count("runs_done")
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// litmus7's log, one block per test, from the run's records.
fn litmus_log(out: &mut impl Write, recs: &[Record], emulated: bool) -> anyhow::Result<()> {
    if emulated {
        writeln!(out, "% {EMULATED}")?;
    }
    for r in recs {
        let f = Fields(r);
        let name = &r.scenario;
        let kind = f.detail("kind").and_then(|k| k.as_str()).unwrap_or("");
        writeln!(out, "% Results for {} (atomlab run) %", f.text("file"))?;
        writeln!(out, "Test {name} {kind}")?;
        let histogram = f.list("histogram");
        writeln!(out, "Histogram ({} states)", histogram.len())?;
        for h in histogram {
            let n = h.get("count").and_then(|x| x.as_u64()).unwrap_or(0);
            let mark = if h.get("witness").and_then(|x| x.as_bool()) == Some(true) {
                "*>"
            } else {
                ":>"
            };
            writeln!(out, "{n:<6}{mark}{}", str_of(h, "state"))?;
        }
        let (positive, negative) = (f.metric("positive") as u64, f.metric("negative") as u64);
        let ok = match kind {
            "Allowed" => positive > 0,
            "Forbidden" => positive == 0,
            _ => negative == 0,
        };
        writeln!(out, "{}", if ok { "Ok" } else { "No" })?;
        writeln!(out)?;
        writeln!(out, "Witnesses")?;
        writeln!(out, "Positive: {positive}, Negative: {negative}")?;
        // litmus7 says "validated" when the test's expectation holds.
        let validated = ok;
        writeln!(
            out,
            "Condition {} is {}validated",
            f.text("condition"),
            if validated { "" } else { "NOT " }
        )?;
        writeln!(
            out,
            "Observation {name} {} {positive} {negative}",
            f.text("observation")
        )?;
        writeln!(out, "Time {name} {:.2}", f.metric("seconds"))?;
        writeln!(out)?;
    }
    Ok(())
}

/// A saved run as `atomlab run` printed it (`atomlab show`), then its
/// summary: one row per test with the hardware's observation and each
/// model's.
pub fn view(report: &Report) -> anyhow::Result<()> {
    tables(
        &mut std::io::stdout().lock(),
        &report.records,
        report.machine.emulated,
    )?;
    records_table(&report.records)
}

/// A saved run's summary (`atomlab show`), from its records alone: one row
/// per test with the hardware's observation and each model's.
pub fn records_table(recs: &[Record]) -> anyhow::Result<()> {
    let mut t = render::table();
    t.set_header(vec![
        "test",
        "condition",
        "hardware",
        "witnesses/s",
        "models",
        "verdict",
    ]);
    for r in recs {
        let p = |k: &str| {
            r.parameters
                .get(k)
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                })
                .unwrap_or_else(|| "-".into())
        };
        let m = |k: &str| r.metric(k).and_then(|m| m.median()).unwrap_or(0.0);
        let models = r
            .detail
            .as_ref()
            .and_then(|d| d.get("models"))
            .and_then(|m| m.as_array())
            .map(|ms| {
                ms.iter()
                    .map(|m| {
                        format!(
                            "{} {}",
                            m.get("model").and_then(|x| x.as_str()).unwrap_or("?"),
                            m.get("observation").and_then(|x| x.as_str()).unwrap_or("?")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        // `suite` records a test this host cannot run, with the reason.
        let hardware = match r.parameters.get("not_run").and_then(|v| v.as_str()) {
            Some(reason) => format!("not run: {reason}"),
            None => format!("{} {} {}", p("observation"), m("positive"), m("negative")),
        };
        t.add_row(vec![
            r.scenario.clone(),
            p("condition"),
            hardware,
            render::num(m("witnesses_per_second")),
            models,
            r.verdict
                .map(|v| format!("{v:?}").to_uppercase())
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    render::print(&t)
}
