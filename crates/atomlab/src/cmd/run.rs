//! `atomlab run`: run litmus tests on this CPU (atomlab-run) and put the
//! histogram of final states beside each applicable model's verdict
//! (atomlab-model), as a table, litmus7's log format or JSON.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use atomlab_core::{
    ExitStatus, InputError, Machine, Metric, Record, Report, Source, Unit, Verdict,
};
use atomlab_litmus::{Arch, Quantifier, StateVar, Test, Value};
use atomlab_model::check::{CheckOptions, ModelOutcome};
use atomlab_run::{Affinity, PrepareOptions, RunError, RunOptions, RunResult, SyncMode};
use serde_json::json;

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

/// One test run on this CPU beside the verdicts of its models: what `run`
/// prints and what [`record`] turns into a record (`suite` shares both).
pub(crate) struct Ran {
    test: Test,
    mapping: Option<&'static str>,
    models: Vec<ModelOutcome>,
    result: RunResult,
    /// (model, state, count) of observed states a model forbids.
    forbidden: Vec<(&'static str, Vec<Value>, u64)>,
    replay: String,
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

/// The models that judge a test of `arch` on this host: a C test by the
/// host's hardware model through the mapping it runs with, and by C11/RC11.
pub(crate) fn models_for(arch: Arch) -> &'static [&'static str] {
    match arch {
        Arch::C if atomlab_run::host_isa() == "aarch64" => &["aarch64", "c11", "rc11"],
        Arch::C if atomlab_run::host_isa() == "riscv64" => &["riscv", "c11", "rc11"],
        Arch::C => &["x86tso", "c11", "rc11"],
        Arch::X86 | Arch::X86_64 => &["x86tso"],
        Arch::AArch64 => &["aarch64"],
        Arch::RiscV => &["riscv"],
    }
}

/// Why a test cannot run, without the file name (reports name it apart).
pub(crate) fn refusal(e: &RunError) -> String {
    match e {
        // The Display of these names the file itself.
        RunError::WrongIsa { .. }
        | RunError::Unencodable { .. }
        | RunError::MissingFeature { .. }
        | RunError::LinuxKernel { .. } => e
            .to_string()
            .split_once(": ")
            .map(|(_, m)| m.to_string())
            .unwrap_or_else(|| e.to_string()),
        _ => e.to_string(),
    }
}

/// The command line that repeats a run of `file` with `opts`.
pub(crate) fn replay_line(
    file: &str,
    opts: &RunOptions,
    affinity: &str,
    models: &[String],
    arm_acquire: atomlab_model::AcquireLoad,
) -> String {
    let mut replay = format!(
        "atomlab run {} --size {} --runs {} --sync {} --affinity {} --stride {} --seed {}",
        file,
        opts.size,
        opts.runs,
        opts.sync.name(),
        affinity,
        opts.stride,
        opts.seed
    );
    if !models.is_empty() {
        replay.push_str(&format!(" --model {}", models.join(",")));
    }
    if arm_acquire == atomlab_model::AcquireLoad::Ldapr {
        replay.push_str(" --arm-acquire ldapr");
    }
    replay
}

/// Judges a prepared test under `models`, runs it on this CPU with `opts`,
/// and finds the observed states a model forbids; each is reported on
/// stderr (FORBIDDEN OUTCOME OBSERVED) with `replay`.
pub(crate) fn run_test(
    program: &atomlab_run::Program,
    models: &[&str],
    opts: &RunOptions,
    prep: &PrepareOptions,
    replay: String,
) -> anyhow::Result<Ran> {
    let test = &program.test;
    // The aarch64 column of a C test judges the mapping the code ran with.
    let check_opts = CheckOptions {
        deadline: Some(Instant::now() + Duration::from_secs(60)),
        acquire: prep.arm_acquire,
        ..CheckOptions::default()
    };
    let verdicts = atomlab_model::check_test(test, models, &check_opts);
    let result = atomlab_run::run(program, opts).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut forbidden = Vec::new();
    for v in &verdicts {
        let ModelOutcome::Done(d) = v else { continue };
        if d.racy {
            // A data race is undefined behaviour: the model allows anything.
            continue;
        }
        for (state, n, _) in &result.histogram {
            if !d.states.iter().any(|(s, _)| s == state) {
                forbidden.push((d.model, state.clone(), *n));
            }
        }
    }
    for (model, state, n) in &forbidden {
        eprintln!(
            "atomlab: FORBIDDEN OUTCOME OBSERVED: {} state {} seen {n} times, forbidden by {model} (a CPU erratum or a wrong model); replay: {replay}",
            test.name,
            state_text(test, &result.vars, state)
        );
    }
    Ok(Ran {
        test: test.clone(),
        mapping: program.mapping,
        models: verdicts,
        result,
        forbidden,
        replay,
    })
}

pub fn run(args: RunArgs) -> anyhow::Result<Outcome> {
    let affinity = parse_affinity(&args.affinity)?;
    let timeout = match args.timeout {
        0.0 => None,
        s if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        s => anyhow::bail!("--timeout must be a number of seconds (0 for none), not {s}"),
    };
    if args.size == 0 || args.runs == 0 {
        anyhow::bail!("--size and --runs must be at least 1");
    }
    let opts = RunOptions {
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
        ..RunOptions::default()
    };
    // Flags first: a bad one is refused before any file is read.
    opts.validate()?;
    let prep = PrepareOptions {
        arm_acquire: match args.arm_acquire {
            super::check::ArmAcquire::Ldar => atomlab_model::AcquireLoad::Ldar,
            super::check::ArmAcquire::Ldapr => atomlab_model::AcquireLoad::Ldapr,
        },
    };
    let machine = Machine::detect();
    let atomlab_litmus::inputs::Expanded { files, errors } =
        atomlab_litmus::inputs::expand(&args.files);
    let mut report_errors: Vec<InputError> = errors
        .into_iter()
        .map(|(input, message)| InputError {
            input,
            line: None,
            column: None,
            message,
        })
        .collect();
    // Everything is parsed and compiled before anything runs: a test that
    // cannot run stops the command here (exit 2).
    let mut programs = Vec::new();
    for path in &files {
        match atomlab_litmus::parse_file(path) {
            Err(e) => report_errors.push(InputError {
                input: e.file.clone(),
                line: Some(e.line),
                column: Some(e.column),
                message: e.message.clone(),
            }),
            Ok(test) => match atomlab_run::prepare_with(&test, &prep) {
                Ok(p) => programs.push(p),
                Err(e) => {
                    let line = match &e {
                        RunError::Unencodable { line, .. }
                        | RunError::MissingFeature { line, .. } => Some(*line),
                        _ => None,
                    };
                    report_errors.push(InputError {
                        input: test.file.clone(),
                        line,
                        column: None,
                        message: refusal(&e),
                    });
                }
            },
        }
    }
    if !report_errors.is_empty() {
        let mut report = Report::new("run", machine, Vec::new());
        report.errors = report_errors;
        report
            .notes
            .push("nothing was run: every input must be runnable first".into());
        return Ok(Outcome {
            report,
            status: ExitStatus::BadInput,
            people: Box::new(|_| Ok(())),
        });
    }
    let mut ran = Vec::new();
    for program in &programs {
        let test = &program.test;
        let chosen: Vec<&str> = args.model.iter().map(String::as_str).collect();
        let models: &[&str] = if chosen.is_empty() {
            models_for(test.arch)
        } else {
            &chosen
        };
        // A progress line on a terminal only, as `check` (none when piped).
        if std::io::stderr().is_terminal() {
            eprintln!(
                "atomlab run: {}: {} x {} instances, --sync {}",
                test.name,
                opts.runs,
                opts.size,
                opts.sync.name()
            );
        }
        let replay = replay_line(
            &test.file,
            &opts,
            &args.affinity,
            &args.model,
            prep.arm_acquire,
        );
        ran.push(run_test(program, models, &opts, &prep, replay)?);
    }
    let records: Vec<Record> = ran
        .iter()
        .map(|r| record(r, &opts, &args.affinity))
        .collect();
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
        people: Box::new(move |_| match format {
            Format::Table => print_tables(&ran, emulated),
            Format::Litmus => print_litmus(&ran, emulated),
        }),
    })
}

/// Said on stdout (and in the report's notes) when the run is under
/// qemu-user: the emulator runs each thread's code functionally, so its
/// histogram says nothing about what an Arm (or any real) CPU does.
const EMULATED: &str = "running under emulation (qemu-user): the histogram shows the emulator's behaviour and says nothing about Arm or any other real hardware";

/// A final state as litmus7 prints it: `0:EAX=0; x=1;`.
fn state_text(test: &Test, vars: &[StateVar], values: &[Value]) -> String {
    vars.iter()
        .zip(values)
        .map(|(v, x)| {
            let name = match v {
                StateVar::Loc(l) => test.locations[*l].clone(),
                _ => test.var_name(v),
            };
            format!("{name}={};", test.value_name(*x))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn per_second(r: &RunResult) -> f64 {
    let s = r.elapsed.as_secs_f64();
    if s > 0.0 {
        r.positive as f64 / s
    } else {
        0.0
    }
}

fn per_million(r: &RunResult) -> f64 {
    if r.instances() > 0 {
        r.positive as f64 * 1e6 / r.instances() as f64
    } else {
        0.0
    }
}

/// The `run` record of a test run: observation, counts and rates as
/// metrics, the histogram and the models' verdicts in detail; FAIL when a
/// model forbids an observed state, TIMEOUT when `--timeout` cut it short.
pub(crate) fn record(r: &Ran, opts: &RunOptions, affinity: &str) -> Record {
    let test = &r.test;
    let res = &r.result;
    let mut rec = Record::new("run", &test.name, atomlab_run::host_isa());
    rec.param("file", test.file.clone())
        .param("arch", test.arch.name())
        .param("condition", test.condition_text())
        .param("observation", res.observation())
        .param("mapping", r.mapping)
        .param("size", opts.size)
        .param("runs", opts.runs)
        .param("runs_done", res.runs_done)
        .param("sync", opts.sync.name())
        .param("affinity", affinity)
        .param("stride", opts.stride)
        .param("seed", opts.seed)
        .param(
            "cpus",
            res.cpus
                .iter()
                .map(|c| c.map(|c| c as i64).unwrap_or(-1))
                .collect::<Vec<_>>(),
        );
    let count = |name: &str, n: f64| Metric::new(name, Unit::Count, Source::Derived, vec![n]);
    rec.metrics.push(Metric::new(
        "seconds",
        Unit::Seconds,
        Source::ClockGettime,
        vec![res.elapsed.as_secs_f64()],
    ));
    rec.metrics.push(count("instances", res.instances() as f64));
    rec.metrics.push(count("positive", res.positive as f64));
    rec.metrics.push(count("negative", res.negative as f64));
    rec.metrics
        .push(count("states", res.histogram.len() as f64));
    rec.metrics.push(Metric::new(
        "witnesses_per_second",
        Unit::OpsPerSecond,
        Source::Derived,
        vec![per_second(res)],
    ));
    rec.metrics.push(Metric::new(
        "witnesses_per_million",
        Unit::Count,
        Source::Derived,
        vec![per_million(res)],
    ));
    let models: Vec<serde_json::Value> = r
        .models
        .iter()
        .map(|m| match m {
            ModelOutcome::Done(d) => json!({
                "model": d.model,
                "observation": d.observation.word(),
                "mapping": d.mapping,
                "data_race": d.racy,
                "allowed_states": d.states.iter().map(|(s, _)| state_text(test, &d.vars, s)).collect::<Vec<_>>(),
            }),
            other => json!({ "model": other.model(), "observation": check_cell(other) }),
        })
        .collect();
    rec.detail = Some(json!({
        "histogram": res.histogram.iter().map(|(s, n, w)| json!({
            "state": state_text(test, &res.vars, s),
            "count": n,
            "witness": w,
            "forbidden_by": r.forbidden.iter().filter(|f| &f.1 == s).map(|f| f.0).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "models": models,
        "filtered": res.filtered,
        "loop_budget_exhausted": res.budget_exhausted,
        "replay": r.replay,
    }));
    for e in &res.pin_errors {
        rec.notes.push(format!("pinning refused: {e}"));
    }
    if res.budget_exhausted > 0 {
        rec.notes.push(format!(
            "{} instances ran out of their loop budget and are not counted",
            res.budget_exhausted
        ));
    }
    rec.verdict = Some(if !r.forbidden.is_empty() {
        for (model, state, n) in &r.forbidden {
            rec.notes.push(format!(
                "FORBIDDEN OUTCOME OBSERVED: {} seen {n} times, forbidden by {model}; replay: {}",
                state_text(test, &res.vars, state),
                r.replay
            ));
        }
        Verdict::Fail
    } else if let Some(why) = r.models.iter().find_map(unjudged) {
        // As `check` does: a test a model could not judge is not a pass.
        rec.notes.push(format!("BOUND: {why}"));
        Verdict::Bound
    } else if res.timed_out {
        rec.notes.push(format!(
            "TIMEOUT: stopped after {} of {} runs (--timeout)",
            res.runs_done, opts.runs
        ));
        Verdict::Timeout
    } else {
        Verdict::Pass
    });
    rec
}

fn check_cell(o: &ModelOutcome) -> String {
    match o {
        ModelOutcome::Done(r) => {
            let race = if r.racy { " race" } else { "" };
            format!("{} ({}){race}", r.observation.word(), r.states.len())
        }
        ModelOutcome::Timeout { .. } => "TIMEOUT".into(),
        ModelOutcome::NotApplicable { .. } => "-".into(),
        // As `check` words it: the checker's fixed limits, or a test the
        // model cannot follow.
        ModelOutcome::Failed {
            error: atomlab_model::CheckError::TooBig(_),
            ..
        } => "BOUND".into(),
        ModelOutcome::Failed { .. } => "ERROR".into(),
    }
}

/// Why a model gave no verdict on a run's test, for the people's output and
/// the record's notes; `None` when it gave one.
fn unjudged(o: &ModelOutcome) -> Option<String> {
    match o {
        ModelOutcome::Failed { model, error } => Some(format!(
            "{model} could not judge the test ({error}), so the observed states were not checked against it"
        )),
        ModelOutcome::Timeout { model, .. } => Some(format!(
            "{model} gave up at the checker's timeout, so the observed states were not checked against it"
        )),
        _ => None,
    }
}

fn print_tables(ran: &[Ran], emulated: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if emulated {
        writeln!(out, "NOTE: {EMULATED}")?;
    }
    for r in ran {
        let (test, res) = (&r.test, &r.result);
        let cpus: Vec<String> = res
            .cpus
            .iter()
            .enumerate()
            .map(|(i, c)| match c {
                Some(c) => format!("P{i}:cpu{c}"),
                None => format!("P{i}:any"),
            })
            .collect();
        writeln!(
            out,
            "{} ({}): {} instances ({} runs done), {:.3} s, {}",
            test.name,
            test.file,
            res.instances(),
            res.runs_done,
            res.elapsed.as_secs_f64(),
            cpus.join(" ")
        )?;
        let mut t = render::table();
        let mut header = vec!["count".to_string(), "witness".into(), "final state".into()];
        let judged: Vec<&atomlab_model::ModelResult> = r
            .models
            .iter()
            .filter_map(|m| match m {
                ModelOutcome::Done(d) => Some(&**d),
                _ => None,
            })
            .collect();
        header.extend(judged.iter().map(|d| d.model.to_string()));
        t.set_header(header);
        let model_cell = |d: &atomlab_model::ModelResult, s: &Vec<Value>| {
            if d.states.iter().any(|(x, _)| x == s) {
                "allowed".to_string()
            } else if d.racy {
                "forbidden (racy test: undefined)".to_string()
            } else {
                "FORBIDDEN".to_string()
            }
        };
        for (s, n, w) in &res.histogram {
            let mut row = vec![
                n.to_string(),
                if *w { "*".into() } else { String::new() },
                state_text(test, &res.vars, s),
            ];
            row.extend(judged.iter().map(|d| model_cell(d, s)));
            t.add_row(row);
        }
        // Allowed states the CPU did not show: normal, and said so.
        let mut unseen: Vec<&Vec<Value>> = Vec::new();
        for d in &judged {
            for (s, _) in &d.states {
                if !res.histogram.iter().any(|h| &h.0 == s) && !unseen.contains(&s) {
                    unseen.push(s);
                }
            }
        }
        unseen.sort();
        let holds = |s: &Vec<Value>| {
            test.condition.prop.eval(&|v: &StateVar| {
                res.vars
                    .iter()
                    .position(|x| x == v)
                    .map(|i| s[i])
                    .unwrap_or(Value::Int(0))
            })
        };
        for s in unseen {
            let mut row = vec![
                "0".to_string(),
                if holds(s) { "*".into() } else { String::new() },
                state_text(test, &res.vars, s),
            ];
            row.extend(
                judged
                    .iter()
                    .map(|d| format!("{}, not observed", model_cell(d, s))),
            );
            t.add_row(row);
        }
        writeln!(out, "{t}")?;
        writeln!(
            out,
            "Observation {} {} {} {}",
            test.name,
            res.observation(),
            res.positive,
            res.negative
        )?;
        writeln!(
            out,
            "witnesses: {} per second, {} per million instances",
            render::num(per_second(res)),
            render::num(per_million(res))
        )?;
        for m in &r.models {
            let verdict = check_cell(m);
            match m {
                ModelOutcome::Done(d) => {
                    let via = d
                        .mapping
                        .map(|m| format!(" through {m}"))
                        .unwrap_or_default();
                    writeln!(out, "{}: {verdict}{via}", d.model)?;
                }
                other => match unjudged(other) {
                    Some(why) => writeln!(out, "{}: {verdict}: {why}", other.model())?,
                    None => writeln!(out, "{}: {verdict}", other.model())?,
                },
            }
        }
        if res.positive == 0 && test.condition.quantifier == Quantifier::Exists {
            let allowed = judged.iter().any(|d| d.observation.word() != "Never");
            if allowed {
                writeln!(
                    out,
                    "the condition is allowed by a model but was not observed in {} instances: normal for an allowed outcome",
                    res.instances()
                )?;
            }
        }
        for (model, state, n) in &r.forbidden {
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
                "FORBIDDEN OUTCOME OBSERVED: {} {} seen {n} times, forbidden by {model} ({cause})\n  replay: {}",
                test.name,
                state_text(test, &res.vars, state),
                r.replay
            )?;
        }
        if res.timed_out {
            writeln!(
                out,
                "TIMEOUT: --timeout stopped the test after {} runs",
                res.runs_done
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// litmus7's log, one block per test.
fn print_litmus(ran: &[Ran], emulated: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if emulated {
        writeln!(out, "% {EMULATED}")?;
    }
    for r in ran {
        let (test, res) = (&r.test, &r.result);
        writeln!(out, "% Results for {} (atomlab run) %", test.file)?;
        writeln!(
            out,
            "Test {} {}",
            test.name,
            test.condition.quantifier.kind()
        )?;
        writeln!(out, "Histogram ({} states)", res.histogram.len())?;
        for (s, n, w) in &res.histogram {
            let mark = if *w { "*>" } else { ":>" };
            writeln!(out, "{n:<6}{mark}{}", state_text(test, &res.vars, s))?;
        }
        let ok = match test.condition.quantifier {
            Quantifier::Exists => res.positive > 0,
            Quantifier::NotExists => res.positive == 0,
            Quantifier::Forall => res.negative == 0,
        };
        writeln!(out, "{}", if ok { "Ok" } else { "No" })?;
        writeln!(out)?;
        writeln!(out, "Witnesses")?;
        writeln!(
            out,
            "Positive: {}, Negative: {}",
            res.positive, res.negative
        )?;
        // litmus7 says "validated" when the test's expectation holds.
        let validated = ok;
        writeln!(
            out,
            "Condition {} is {}validated",
            test.condition_text(),
            if validated { "" } else { "NOT " }
        )?;
        writeln!(
            out,
            "Observation {} {} {} {}",
            test.name,
            res.observation(),
            res.positive,
            res.negative
        )?;
        writeln!(out, "Time {} {:.2}", test.name, res.elapsed.as_secs_f64())?;
        writeln!(out)?;
    }
    Ok(())
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
