//! `atomlab check`: the flags mapped to atomlab-check's options, one batch
//! judged there, and its table, herd7 logs or JSON printed.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use atomlab_check::{render, Error, LoadError, ModelFile, ModelFrom, Options};
use atomlab_core::{Machine, Record, Report, Shard};
use atomlab_model::{AcquireLoad, Engine};
use atomlab_report::kinds::check as check_view;
use clap::builder::PossibleValuesParser;

use super::CommandOutput;
use crate::args::ArmAcquire;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One row per test, one column per model.
    Table,
    /// herd7's log format, one block per test and model.
    Herd,
    /// JSON.
    Json,
}

/// Which exploration builds the executions (atomlab-model's `Engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// explore a test of a built-in model whose candidate executions are many (over 5,000; over 10^6 under lkmm, whose every allowed execution the exploration visits); enumerate the rest, and always with --explain, --dot or --model-file.
    Auto,
    /// Every candidate execution (rf choices x coherence orders), judged one by one: the reference.
    Enumerate,
    /// Incremental: executions grown read by read and write by write, pruned as soon as a
    /// model's monotone axioms forbid them, searched per final state (GenMC/HMC style).
    Explore,
}

#[derive(Debug, clap::Args)]
// Negative numbers reach the value parsers, which say what is wrong with
// them, instead of clap's "use -- -1" tip.
#[command(allow_negative_numbers = true)]
#[command(
    after_help = "Exit status: 0 every test judged; 1 some test timed out (TIMEOUT) or exceeded the \
checker's fixed bound (BOUND); 2 bad input \
(unreadable or unsupported test, unknown model or flag).\n\
C tests are judged by x86tso, aarch64 and riscv through the C11->ISA mapping tables (see --help of \
--arm-acquire and atomlab-model's mapping module); Linux-kernel C tests (READ_ONCE, smp_mb, spin_lock, \
rcu_read_lock...) by lkmm and sc; C tests with plain accesses only by lkmm too, as herd7 with \
linux-kernel.cfg judges every C test."
)]
pub struct CheckArgs {
    /// Litmus files, directories (searched for *.litmus) and @LIST files (one path per line).
    #[arg(required = true, value_name = "FILES")]
    pub files: Vec<String>,
    /// Built-in models, comma-separated, or `all` (the default unless --model-file is given).
    #[arg(long, short = 'm', value_delimiter = ',',
          value_parser = PossibleValuesParser::new(atomlab_model::MODEL_NAMES.iter().copied().chain(["all"])))]
    pub model: Vec<String>,
    /// A model written in herd7's cat language, as FILE (named by its file
    /// stem) or NAME=FILE; repeatable. It judges the test's own events. A
    /// NAME of a selected built-in model judges in its place (for comparing
    /// a cat file with herd7 logs named after that model).
    #[arg(long = "model-file", value_name = "[NAME=]FILE")]
    pub model_file: Vec<String>,
    /// Directories searched for files a --model-file includes, after the
    /// including file's own directory; repeatable. $HERDLIB (herd7's library
    /// directory, with cross.cat, cos-opt.cat...) is searched last.
    #[arg(long = "cat-path", value_name = "DIR")]
    pub cat_path: Vec<PathBuf>,
    /// A bell file run before each --model-file (herd7's -bell): its enums
    /// name the Linux-kernel annotations (tag 'once gives the set Once).
    #[arg(long, value_name = "FILE")]
    pub bell: Option<PathBuf>,
    /// A variant the model files' `if "NAME"` tests see as set (herd7's
    /// -variant); repeatable or comma-separated.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub variant: Vec<String>,
    /// A herd7 configuration file ([NAME=]FILE.cfg, herd7's -conf): its
    /// `model` becomes a --model-file (named NAME, or by the model's file
    /// stem) unless --model-file is given, its `bell` and `variant` apply
    /// unless given here; relative
    /// names resolve against the cfg's directory. `macros` files are not
    /// read: the Linux C parser has linux-kernel.def's macros built in.
    #[arg(long, value_name = "[NAME=]FILE.cfg")]
    pub conf: Option<String>,
    /// For every forbidden outcome, the axiom that forbids it and a smallest cycle.
    #[arg(long)]
    pub explain: bool,
    /// Write Graphviz graphs (a witness of the condition, and one execution per forbidden outcome) into DIR.
    #[arg(long, value_name = "DIR")]
    pub dot: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Give up on a test after this long (a TIMEOUT cell, exit 1); 0 for no limit.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = crate::args::parse_seconds)]
    pub timeout: f64,
    /// Tests checked in parallel (default: the CPUs available).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Check only part I of N of the test files (0 <= I < N), for a batch
    /// scheduler's array job; the parts of one --label merge in compare and report.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// How C11 acquire loads compile to AArch64 for the `aarch64` column of C tests.
    #[arg(long, value_enum, default_value = "ldar")]
    pub arm_acquire: ArmAcquire,
    /// How executions are explored: both engines give the same observation and final states;
    /// explore visits per outcome rather than per execution, so its witness counts are smaller.
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: EngineArg,
}

/// Splits `[NAME=]FILE` (a NAME has no `/`).
fn named(spec: &str) -> (Option<String>, &str) {
    match spec.split_once('=') {
        Some((n, f)) if !n.is_empty() && !n.contains('/') => (Some(n.to_string()), f),
        _ => (None, spec),
    }
}

fn model_file(spec: &str) -> ModelFile {
    let (name, file) = named(spec);
    ModelFile {
        name,
        path: PathBuf::from(file),
    }
}

/// The library's options for `args`. `detail`: whether the records will
/// be read (saved or printed as JSON), so that each carries its allowed
/// and forbidden states.
fn options(args: &CheckArgs, detail: bool) -> anyhow::Result<Options> {
    let timeout = match args.timeout {
        0.0 => None,
        s if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        s => anyhow::bail!("--timeout must be a number of seconds (0 for none), not {s}"),
    };
    let mut cat_path = args.cat_path.clone();
    // herd7's own library directory, as herd7 itself finds it.
    if let Some(lib) = std::env::var_os("HERDLIB").filter(|l| !l.is_empty()) {
        cat_path.push(PathBuf::from(lib));
    }
    Ok(Options {
        models: args.model.clone(),
        model_files: args.model_file.iter().map(|s| model_file(s)).collect(),
        conf: args.conf.as_deref().map(model_file),
        cat_path,
        bell: args.bell.clone(),
        variants: args.variant.clone(),
        jobs: args.jobs,
        timeout,
        engine: match args.engine {
            EngineArg::Auto => Engine::Auto,
            EngineArg::Enumerate => Engine::Enumerate,
            EngineArg::Explore => Engine::Explore,
        },
        acquire: match args.arm_acquire {
            ArmAcquire::Ldar => AcquireLoad::Ldar,
            ArmAcquire::Ldapr => AcquireLoad::Ldapr,
        },
        explain: args.explain,
        graphs: args.dot.clone(),
        shard: args.shard,
        detail,
    })
}

/// The library's error, naming the flag that gave the file.
fn flag_error(e: Error, args: &CheckArgs) -> anyhow::Error {
    let conf = args.conf.as_deref().unwrap_or_default();
    match e {
        Error::Load(LoadError::Conf(c)) => {
            anyhow::Error::new(c).context(format!("--conf {conf}: the cfg file cannot be used"))
        }
        Error::Load(e @ (LoadError::MacrosMissing(_) | LoadError::ConfNamesNoModel)) => {
            let what = if matches!(e, LoadError::ConfNamesNoModel) {
                "; give one with --model-file"
            } else {
                ""
            };
            anyhow::anyhow!("--conf {conf}: {e}{what}")
        }
        Error::Load(LoadError::BellMissing(b)) => {
            anyhow::anyhow!("--bell {}: no such file", b.display())
        }
        Error::Load(LoadError::CatSettingsWithoutModel) => anyhow::anyhow!(
            "--bell and --variant apply to cat models: give --model-file FILE.cat or --conf FILE.cfg"
        ),
        Error::Load(LoadError::Model { from, error }) => {
            let what = match from {
                ModelFrom::Conf => format!("--conf {conf}: its model"),
                ModelFrom::File(i) => format!("--model-file {}", args.model_file[i]),
            };
            anyhow::Error::new(error).context(format!("{what}: the model cannot be loaded"))
        }
        Error::Load(e @ LoadError::UnknownModel(_)) => anyhow::anyhow!("--model: {e}"),
        Error::GraphsDir { path, source } => anyhow::Error::new(source).context(format!(
            "--dot {}: cannot create the directory",
            path.display()
        )),
        e @ Error::GraphWrite { .. } => anyhow::Error::new(e),
    }
}

/// Judges the tests of `args` (atomlab-check) and prints the table, the
/// herd7 logs or (through the dispatcher) the JSON. `detail`: whether the
/// records will be read (saved or printed as JSON).
pub fn run(args: CheckArgs, detail: bool) -> anyhow::Result<CommandOutput> {
    let opts = options(&args, detail)?;
    let mut reporter = crate::progress::Reporter::of("check");
    let batch = atomlab_check::check(&args.files, &opts, &mut |e| reporter.event(e))
        .map_err(|e| flag_error(e, &args))?;
    drop(reporter);
    let status = batch.status();
    let layout = batch.layout();
    let atomlab_check::Batch {
        checked,
        records,
        errors,
        ..
    } = batch;
    let mut report = Report::new("check", Machine::detect(), records);
    report.errors = errors;
    let (format, explain) = (args.format, args.explain);
    // A model named with --model that does not judge a test prints no log
    // block in herd7's format: say so instead of skipping it silently.
    let named = !args.model.is_empty() && !args.model.iter().any(|m| m == "all");
    Ok(CommandOutput {
        report,
        status,
        people: Box::new(move |report| {
            if checked.is_empty() {
                return Ok(()); // every input refused: no empty table
            }
            // Buffered: stdout is line-buffered, and a herd7 log of
            // thousands of tests would otherwise be thousands of writes.
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            match format {
                Format::Table | Format::Json => {
                    let recs: Vec<&Record> = report.records.iter().collect();
                    write_table(&mut out, &check_view::table(&layout, &recs))?;
                    if explain {
                        // Wrapped to the terminal views' width (a cycle can
                        // run to several hundred columns); the herd log
                        // below keeps herd7's one line each.
                        let mut text = Vec::new();
                        render::write_explanations(&mut text, &checked)?;
                        let text = String::from_utf8_lossy(&text);
                        if !text.is_empty() {
                            atomlab_report::table::write_wrapped(
                                &mut out,
                                text.trim_end_matches('\n'),
                                atomlab_report::table::WIDTH,
                                4,
                            )?;
                        }
                    }
                }
                Format::Herd => {
                    for c in checked.iter().filter(|_| named) {
                        for o in &c.outcomes {
                            if let atomlab_model::ModelOutcome::NotApplicable { model, reason } = o
                            {
                                eprintln!(
                                    "atomlab: note: {}: not judged by {model} ({reason}); choose another model with --model",
                                    c.test.file
                                );
                            }
                        }
                    }
                    render::write_herd(&mut out, &checked, explain)?
                }
            }
            // Not freed test by test: the process ends after this view (as
            // the dispatcher does with the report).
            std::mem::forget(checked);
            out.flush()?;
            Ok(())
        }),
    })
}

/// Draws a check table and the lines under it (atomlab-report's check view).
fn write_table(out: &mut impl Write, table: &check_view::Table) -> std::io::Result<()> {
    check_view::write_table(out, table)
}
