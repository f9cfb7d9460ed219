//! `atomlab check`: judge litmus tests under memory models (atomlab-model),
//! in parallel over tests, and render a table, herd7 logs or JSON.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use atomlab_core::{
    ExitStatus, InputError, Machine, Metric, Record, Report, Shard, Source, Unit, Verdict,
};
use atomlab_litmus::{ParseError, Test};
use atomlab_model::check::{CheckOptions, ModelOutcome};
use atomlab_model::models::Model;
use atomlab_model::{explain, herd, AcquireLoad, CheckError, Engine, ModelChoice, MODEL_NAMES};
use clap::builder::PossibleValuesParser;
use serde_json::Value;

use super::Outcome;
use crate::render;

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

/// How a C11 acquire load compiles to AArch64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ArmAcquire {
    /// LDAR (RCsc).
    Ldar,
    /// LDAPR (RCpc, Armv8.3).
    Ldapr,
}

/// Which exploration builds the executions (atomlab-model's `Engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// explore for built-in models, enumerate with --explain, --dot or --model-file.
    Auto,
    /// Every candidate execution (rf choices x coherence orders), judged one by one: the reference.
    Enumerate,
    /// Incremental: executions grown read by read and write by write, pruned as soon as a
    /// monotone model (sc, x86tso, rc11) forbids them, searched per final state (GenMC/HMC style).
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
rcu_read_lock...) by lkmm and sc."
)]
pub struct CheckArgs {
    /// Litmus files, directories (searched for *.litmus) and @LIST files (one path per line).
    #[arg(required = true, value_name = "FILES")]
    pub files: Vec<String>,
    /// Built-in models, comma-separated, or `all` (the default unless --model-file is given).
    #[arg(long, short = 'm', value_delimiter = ',',
          value_parser = PossibleValuesParser::new(["sc", "x86tso", "aarch64", "riscv", "c11", "rc11", "lkmm", "all"]))]
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
    /// Give up on a test after S seconds (a TIMEOUT cell, exit 1); 0 for no limit.
    #[arg(long, value_name = "S", default_value = "60", value_parser = crate::cli::parse_seconds)]
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

/// One input's result.
enum TestResult {
    Checked(Box<Test>, Vec<ModelOutcome>, Duration),
    Refused(ParseError),
}

/// The per-test timeout when `--timeout` is not given.
pub const DEFAULT_TIMEOUT_S: f64 = 60.0;

/// Splits `[NAME=]FILE` (a NAME has no `/`).
fn named(spec: &str) -> (Option<String>, &str) {
    match spec.split_once('=') {
        Some((n, f)) if !n.is_empty() && !n.contains('/') => (Some(n.to_string()), f),
        _ => (None, spec),
    }
}

fn stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string())
}

/// Loads each `--model-file [NAME=]FILE` and the model of `--conf`
/// (refusing a bad one, with its file:line:column, before any test is
/// judged).
fn load_model_files(args: &CheckArgs) -> anyhow::Result<Vec<atomlab_cat::CatModel>> {
    let mut cat_path = args.cat_path.clone();
    // herd7's own library directory, as herd7 itself finds it.
    if let Some(lib) = std::env::var_os("HERDLIB").filter(|l| !l.is_empty()) {
        cat_path.push(PathBuf::from(lib));
    }
    let mut opts = atomlab_cat::Options {
        bell: args.bell.clone(),
        variants: args.variant.clone(),
        cat_path,
    };
    let mut specs: Vec<(String, PathBuf, String)> = Vec::new();
    if let Some(spec) = &args.conf {
        let (name, file) = named(spec);
        let conf = atomlab_cat::conf::read(Path::new(file))
            .with_context(|| format!("--conf {spec}: the cfg file cannot be used"))?;
        if opts.bell.is_none() {
            opts.bell = conf.bell.clone();
        }
        if args.variant.is_empty() {
            opts.variants = conf.variants.clone();
        }
        if let Some(def) = &conf.macros {
            if !def.is_file() {
                anyhow::bail!(
                    "--conf {spec}: its macros file {} does not exist",
                    def.display()
                );
            }
            eprintln!(
                "atomlab: note: --conf {spec}: macros {} not read: atomlab's Linux C parser has linux-kernel.def's macros built in (READ_ONCE, smp_mb, spin_lock, rcu_read_lock...)",
                def.display()
            );
        }
        match &conf.model {
            Some(m) if args.model_file.is_empty() => specs.push((
                name.unwrap_or_else(|| stem(m)),
                m.clone(),
                format!("--conf {spec}: its model"),
            )),
            Some(_) => {}
            None if args.model_file.is_empty() => anyhow::bail!(
                "--conf {spec}: the cfg file names no model (a `model FILE.cat` line); give one with --model-file"
            ),
            None => {}
        }
    }
    if let Some(b) = &opts.bell {
        if !b.is_file() {
            anyhow::bail!("--bell {}: no such file", b.display());
        }
    }
    for spec in &args.model_file {
        let (name, file) = named(spec);
        let path = PathBuf::from(file);
        specs.push((
            name.unwrap_or_else(|| stem(&path)),
            path,
            format!("--model-file {spec}"),
        ));
    }
    if specs.is_empty() && (args.bell.is_some() || !args.variant.is_empty()) {
        anyhow::bail!("--bell and --variant apply to cat models: give --model-file FILE.cat or --conf FILE.cfg");
    }
    let mut out = Vec::new();
    for (name, file, what) in specs {
        let m = atomlab_cat::load_with(&name, &file, &opts)
            .with_context(|| format!("{what}: the model cannot be loaded"))?;
        out.push(m);
    }
    Ok(out)
}

/// Judges the tests of `args`. `detail`: whether the records will be read
/// (saved or printed as JSON), so that each carries its allowed and
/// forbidden states; without it they carry the verdict and the counts.
pub fn run(args: CheckArgs, detail: bool) -> anyhow::Result<Outcome> {
    let given = load_model_files(&args)?;
    let builtin: Vec<&'static str> =
        if args.model.iter().any(|m| m == "all") || (args.model.is_empty() && given.is_empty()) {
            MODEL_NAMES.to_vec()
        } else {
            MODEL_NAMES
                .iter()
                .copied()
                .filter(|m| args.model.iter().any(|a| a == m))
                .collect()
        };
    // A model file named like a selected built-in model judges in its place.
    let mut choices: Vec<ModelChoice<'_>> = builtin
        .iter()
        .map(|b| match given.iter().find(|g| g.name() == *b) {
            Some(g) => ModelChoice::Given(g),
            None => ModelChoice::Named(b),
        })
        .collect();
    for g in &given {
        if !builtin.contains(&g.name()) {
            choices.push(ModelChoice::Given(g));
        }
    }
    let models: Vec<&'static str> = choices
        .iter()
        .map(|c| match c {
            ModelChoice::Named(n) => MODEL_NAMES.iter().copied().find(|m| m == n).unwrap_or("?"),
            ModelChoice::Given(g) => g.name(),
        })
        .collect();
    if let Some(dir) = &args.dot {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--dot {}: cannot create the directory", dir.display()))?;
    }
    let atomlab_litmus::inputs::Expanded { mut files, errors } =
        atomlab_litmus::inputs::expand(&args.files);
    if let Some(s) = args.shard {
        files = s.select(files);
    }
    let explored = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let opts = CheckOptions {
        deadline: None,
        explored: Some(explored.clone()),
        explain: args.explain,
        graphs: args.dot.is_some(),
        acquire: match args.arm_acquire {
            ArmAcquire::Ldar => AcquireLoad::Ldar,
            ArmAcquire::Ldapr => AcquireLoad::Ldapr,
        },
        engine: match args.engine {
            EngineArg::Auto => Engine::Auto,
            EngineArg::Enumerate => Engine::Enumerate,
            EngineArg::Explore => Engine::Explore,
        },
        unpruned: false,
    };
    let timeout = match args.timeout {
        0.0 => None,
        s if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        s => anyhow::bail!("--timeout must be a number of seconds (0 for none), not {s}"),
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .clamp(1, 256);
    let results: Vec<Mutex<Option<TestResult>>> = files.iter().map(|_| Mutex::new(None)).collect();
    // ORDERING: the counter only hands out distinct indices; the results are
    // published by the Mutexes and the scope's join, so Relaxed suffices.
    let next = AtomicUsize::new(0);
    let progress = Arc::new(Progress::new(files.len(), explored));
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(path) = files.get(i) else { break };
        let outcome = match atomlab_litmus::parse_file(path) {
            Err(e) => TestResult::Refused(e),
            Ok(test) => {
                progress.started(&test.name);
                let start = Instant::now();
                let mut o = opts.clone();
                o.deadline = timeout.map(|t| start + t);
                let res = atomlab_model::check_test_with(&test, &choices, &o);
                TestResult::Checked(Box::new(test), res, start.elapsed())
            }
        };
        if let Ok(mut slot) = results[i].lock() {
            *slot = Some(outcome);
        }
        progress.finished();
    };
    // The progress display runs on its own thread, never joined: a run of
    // a few milliseconds does not wait for it to wake up and end (0.3 to
    // 0.5 ms on this 2-core VM), and it draws nothing once cleared. Without
    // a thread there is no display, nothing else.
    let _ = std::thread::Builder::new().name("progress".into()).spawn({
        let progress = Arc::clone(&progress);
        move || progress.watch()
    });
    std::thread::scope(|s| {
        // The calling thread is one of the workers: with `--jobs 1` no test
        // waits for a thread to start (about 0.15 ms each time on this VM).
        for _ in 1..jobs.min(files.len().max(1)) {
            s.spawn(work);
        }
        work();
    });
    progress.clear();
    let outcomes: Vec<TestResult> = results
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect();

    let mut bad_input = !errors.is_empty();
    let mut report_errors: Vec<InputError> = errors
        .iter()
        .map(|(input, message)| InputError {
            input: input.clone(),
            line: None,
            column: None,
            message: message.clone(),
        })
        .collect();
    for o in &outcomes {
        match o {
            TestResult::Refused(e) => {
                bad_input = true;
                report_errors.push(InputError {
                    input: e.file.clone(),
                    line: Some(e.line),
                    column: Some(e.column),
                    message: e.message.clone(),
                });
            }
            TestResult::Checked(t, res, _) => {
                for r in res {
                    if let ModelOutcome::Failed { model, error } = r {
                        if !matches!(error, CheckError::TooBig(_)) {
                            bad_input = true;
                            report_errors.push(InputError {
                                input: t.file.clone(),
                                line: None,
                                column: None,
                                message: format!("{} [{model}]: {error}", t.name),
                            });
                        }
                    }
                }
            }
        }
    }

    if let Some(dir) = &args.dot {
        write_graphs(dir, &outcomes)?;
    }
    let mut records = records(&outcomes, detail);
    if let Some(s) = args.shard {
        for r in &mut records {
            r.param("shard", s.to_string());
        }
    }
    let undecided = records
        .iter()
        .any(|r| matches!(r.verdict, Some(Verdict::Timeout | Verdict::Bound)));
    let status = if bad_input {
        ExitStatus::BadInput
    } else if undecided {
        ExitStatus::VerdictFailed
    } else {
        ExitStatus::Ok
    };
    let mut report = Report::new("check", Machine::detect(), records);
    report.errors = report_errors;
    let (format, explain) = (args.format, args.explain);
    Ok(Outcome {
        report,
        status,
        people: Box::new(move |_| {
            if !outcomes
                .iter()
                .any(|o| matches!(o, TestResult::Checked(..)))
            {
                return Ok(()); // every input refused: no empty table
            }
            let printed = match format {
                Format::Table | Format::Json => print_table(&models, &outcomes, explain),
                Format::Herd => print_herd(&outcomes, explain),
            };
            // Not freed test by test: the process ends after this view (as
            // the dispatcher does with the report).
            std::mem::forget(outcomes);
            printed
        }),
    })
}

/// Progress on stderr: a bar with tests done, the current test and the
/// executions explored when stderr is a terminal and the run passes a
/// second; without a terminal, a line every 10 s while a test runs long.
struct Progress {
    total: usize,
    done: AtomicUsize,
    current: Mutex<(String, Instant)>,
    explored: Arc<std::sync::atomic::AtomicU64>,
    bar: Option<indicatif::ProgressBar>,
    start: Instant,
    /// Set by [`Progress::clear`]: the display is over. Held while the
    /// watcher draws, so that nothing is drawn after the clearing.
    cleared: Mutex<bool>,
}

impl Progress {
    fn new(total: usize, explored: Arc<std::sync::atomic::AtomicU64>) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = indicatif::ProgressBar::with_draw_target(
                Some(total as u64),
                indicatif::ProgressDrawTarget::stderr(),
            );
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "checked {pos}/{len} tests [{elapsed_precise}, ETA {eta}] {msg}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            b
        });
        Progress {
            total,
            done: AtomicUsize::new(0),
            current: Mutex::new((String::new(), Instant::now())),
            explored,
            bar,
            start: Instant::now(),
            cleared: Mutex::new(false),
        }
    }

    fn started(&self, name: &str) {
        if let Ok(mut c) = self.current.lock() {
            *c = (name.to_string(), Instant::now());
        }
    }

    fn finished(&self) {
        // ORDERING: a progress count only; nothing is published through it.
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// Refreshes the display every 100 ms until every test is done or the
    /// display is cleared.
    fn watch(&self) {
        let mut last_line = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(100));
            let Ok(cleared) = self.cleared.lock() else {
                return;
            };
            // ORDERING: Relaxed: progress counts only; the results are
            // published by the workers' scope, not through this thread.
            if *cleared || self.done.load(Ordering::Relaxed) >= self.total {
                return;
            }
            let finished = self.done.load(Ordering::Relaxed);
            let explored = self.explored.load(Ordering::Relaxed);
            let (name, since) = self
                .current
                .lock()
                .map(|c| c.clone())
                .unwrap_or_else(|_| (String::new(), Instant::now()));
            match &self.bar {
                Some(bar) if self.start.elapsed() > Duration::from_secs(1) => {
                    bar.set_position(finished as u64);
                    bar.set_message(format!("{name}: {explored} executions explored"));
                }
                Some(_) => {}
                None if since.elapsed() > Duration::from_secs(10)
                    && last_line.elapsed() > Duration::from_secs(10) =>
                {
                    eprintln!(
                        "atomlab check: {finished}/{} tests done; {name} running for {:.0} s, {explored} executions explored so far",
                        self.total,
                        since.elapsed().as_secs_f64()
                    );
                    last_line = Instant::now();
                }
                None => {}
            }
        }
    }

    fn clear(&self) {
        // Whatever the watcher was drawing is drawn; it draws no more.
        if let Ok(mut cleared) = self.cleared.lock() {
            *cleared = true;
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// One record per test and model that judged it (or ran out of time or
/// of bound): capability `check`, scenario = the test, variant = the
/// model; the observation as a parameter, the counts as metrics.
fn records(outcomes: &[TestResult], detail: bool) -> Vec<Record> {
    let mut out = Vec::new();
    for o in outcomes {
        let TestResult::Checked(test, res, elapsed) = o else {
            continue;
        };
        // Once per test, not per model: every record of the test carries it.
        let condition = test.condition_text();
        for r in res {
            let model = match r {
                ModelOutcome::Done(d) => d.model,
                ModelOutcome::Timeout { model } => model,
                ModelOutcome::Failed {
                    model,
                    error: CheckError::TooBig(_),
                } => model,
                _ => continue,
            };
            let mut rec = Record::new("check", &test.name, model);
            rec.param("file", test.file.clone())
                .param("arch", test.arch.name())
                .param("condition", condition.clone());
            let count =
                |name: &str, n: f64| Metric::new(name, Unit::Count, Source::Derived, vec![n]);
            rec.metrics.push(Metric::new(
                "seconds",
                Unit::Seconds,
                Source::ClockGettime,
                vec![elapsed.as_secs_f64()],
            ));
            match r {
                ModelOutcome::Done(d) => {
                    rec.param("observation", d.observation.word())
                        .param("mapping", d.mapping)
                        .param("data_race", d.racy)
                        // The model's other `flag`s (LKMM's lock and RCU
                        // validity checks, a cat file's own), as herd7
                        // prints `Flag NAME`.
                        .param("flags", d.flags.clone());
                    rec.metrics
                        .push(count("allowed_states", d.states.len() as f64));
                    rec.metrics.push(count("positive", d.positive as f64));
                    rec.metrics.push(count("negative", d.negative as f64));
                    rec.metrics.push(count("candidates", d.candidates as f64));
                    rec.metrics
                        .push(count("forbidden_outcomes", d.forbidden.len() as f64));
                    // The allowed and forbidden states, for a reader of
                    // the records (the store, --json) only.
                    if detail {
                        rec.detail = Some(states_detail(test, d));
                    }
                }
                ModelOutcome::Timeout { .. } => {
                    rec.verdict = Some(Verdict::Timeout);
                    rec.notes.push(format!(
                        "gave up after the per-test timeout ({:.1} s); raise it with --timeout S, or --timeout 0 for none",
                        elapsed.as_secs_f64()
                    ));
                }
                ModelOutcome::Failed { error, .. } => {
                    rec.verdict = Some(Verdict::Bound);
                    rec.notes.push(format!(
                        "{error}: a fixed limit of this checker, which no option raises; split the test into smaller ones"
                    ));
                }
                ModelOutcome::NotApplicable { .. } => {}
            }
            out.push(rec);
        }
    }
    out
}

/// A check record's detail: each allowed state (with its data race),
/// each forbidden one (with the axiom and the cycle) and the witness.
fn states_detail(test: &Test, d: &atomlab_model::ModelResult) -> Value {
    let lines = herd::StateLines::new(test, &d.vars);
    // Built as values directly: `json!` would serialize the
    // arrays of values once more into new values.
    object([
        (
            "states",
            Value::Array(
                d.states
                    .iter()
                    .map(|(s, racy)| {
                        object([
                            ("state", Value::String(lines.line(s))),
                            ("data_race", Value::Bool(*racy)),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "forbidden",
            Value::Array(
                d.forbidden
                    .iter()
                    .map(|f| {
                        object([
                            ("state", Value::String(lines.line(&f.state))),
                            ("axiom", Value::from(f.violation.axiom)),
                            (
                                "cycle",
                                Value::String(explain::cycle_text(&f.violation, &f.labels)),
                            ),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "witness",
            d.witness.clone().map_or(Value::Null, Value::String),
        ),
    ])
}

/// A JSON object of `pairs`, in their order.
fn object<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn cell(o: &ModelOutcome) -> String {
    match o {
        ModelOutcome::Done(r) => {
            let race = if r.racy { " race" } else { "" };
            let flags = if r.flags.is_empty() {
                String::new()
            } else {
                format!(" flag {}", r.flags.join(", "))
            };
            format!("{} ({}){race}{flags}", r.observation.word(), r.states.len())
        }
        ModelOutcome::Timeout { .. } => "TIMEOUT".into(),
        ModelOutcome::NotApplicable { .. } => "-".into(),
        ModelOutcome::Failed {
            error: CheckError::TooBig(_),
            ..
        } => "BOUND".into(),
        ModelOutcome::Failed { .. } => "ERROR".into(),
    }
}

fn print_table(models: &[&str], outcomes: &[TestResult], explain: bool) -> anyhow::Result<()> {
    let mut t = render::table();
    let mut header = vec!["test".to_string(), "condition".to_string()];
    header.extend(models.iter().map(|m| m.to_string()));
    t.set_header(header);
    let mut mappings: Vec<(&str, &str)> = Vec::new();
    let mut flagged = false;
    for o in outcomes {
        let TestResult::Checked(test, res, _) = o else {
            continue;
        };
        let mut row = vec![test.name.clone(), test.condition_text()];
        for r in res {
            row.push(cell(r));
            if let ModelOutcome::Done(d) = r {
                flagged |= !d.flags.is_empty();
                if let Some(m) = d.mapping {
                    if !mappings.iter().any(|(a, b)| *a == d.model && *b == m) {
                        mappings.push((d.model, m));
                    }
                }
            }
        }
        t.add_row(row);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{t}")?;
    writeln!(out, "cells: Never/Sometimes/Always: observation of the condition (allowed final states); \"race\": a data race (undefined behaviour); \"-\": model does not apply")?;
    if flagged {
        writeln!(out, "\"flag NAME\": the model's flag NAME is raised (herd7's Flag; the LKMM's say the test misuses a lock, RCU or SRCU, or mixes plain and marked accesses)")?;
    }
    let words: Vec<String> = outcomes
        .iter()
        .filter_map(|o| match o {
            TestResult::Checked(_, res, _) => Some(res),
            TestResult::Refused(_) => None,
        })
        .flatten()
        .map(cell)
        .collect();
    if words.iter().any(|w| w == "TIMEOUT") {
        writeln!(out, "TIMEOUT: gave up at the per-test timeout (default {DEFAULT_TIMEOUT_S} s; --timeout S raises it, --timeout 0 removes it)")?;
    }
    if words.iter().any(|w| w == "BOUND") {
        writeln!(out, "BOUND: the test exceeds a fixed limit of this checker (64 events per execution, 2000 instructions per thread, 200,000 possible runs per test), which no option raises: split the test")?;
    }
    if words.iter().any(|w| w == "ERROR") {
        writeln!(
            out,
            "ERROR: the model could not follow the test (see the message on stderr)"
        )?;
    }
    for (model, m) in mappings {
        writeln!(out, "{model} judges C tests through {m}")?;
    }
    if explain {
        for o in outcomes {
            if let TestResult::Checked(test, res, _) = o {
                write_explanations(&mut out, test, res)?;
            }
        }
    }
    Ok(())
}

fn write_explanations(
    out: &mut impl Write,
    test: &Test,
    res: &[ModelOutcome],
) -> anyhow::Result<()> {
    for r in res {
        let ModelOutcome::Done(d) = r else { continue };
        if let Some(w) = &d.witness {
            writeln!(
                out,
                "{} [{}]: the condition's proposition holds in an allowed execution: {w}",
                test.name, d.model
            )?;
        }
        // The explore engine prunes a forbidden partial execution before it
        // is complete, so it cannot say that nothing is forbidden, nor list
        // every forbidden outcome: it says so instead of guessing.
        let partial = "(the explore engine prunes forbidden executions before they are complete; --engine enumerate explains every forbidden outcome)";
        if d.forbidden.is_empty() {
            if d.explored {
                writeln!(
                    out,
                    "{} [{}]: no forbidden outcome among the executions explored {partial}",
                    test.name, d.model
                )?;
            } else if d.positive == 0 {
                // Every model here implies coherence (SC per location) and
                // RMW atomicity, so the engine never builds an execution
                // that breaks them: a state only such an execution gives is
                // absent from the candidates, not forbidden by an axiom.
                writeln!(
                    out,
                    "{} [{}]: no execution atomlab builds satisfies the condition, and none was forbidden by an axiom of the model: the condition's states need an execution that breaks coherence (SC per location: acyclic po-loc | rf | co | fr) or RMW atomicity, which every model requires and atomlab rules out while building executions, or values no thread writes",
                    test.name, d.model
                )?;
            } else {
                writeln!(
                    out,
                    "{} [{}]: no outcome of a candidate execution is forbidden by an axiom of the model (executions that break coherence or RMW atomicity are never built)",
                    test.name, d.model
                )?;
            }
            continue;
        }
        if d.explored {
            writeln!(
                out,
                "{} [{}]: forbidden outcomes among the executions explored {partial}",
                test.name, d.model
            )?;
        }
        writeln!(
            out,
            "{} [{}]: {} forbidden outcome(s)",
            test.name,
            d.model,
            d.forbidden.len()
        )?;
        for f in &d.forbidden {
            let state = herd::state_line(test, &d.vars, &f.state);
            writeln!(out, "  {state}  forbidden by {}:", f.violation.axiom)?;
            writeln!(out, "    {}", explain::cycle_text(&f.violation, &f.labels))?;
        }
    }
    Ok(())
}

fn print_herd(outcomes: &[TestResult], explain: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    for o in outcomes {
        let TestResult::Checked(test, res, _) = o else {
            continue;
        };
        for r in res {
            // herd7 logs have no model line; log readers (mcompare7,
            // litmus-agree) pass over lines starting with `%`, as in
            // litmus7's `% Results for` banners.
            match r {
                ModelOutcome::Done(d) => {
                    writeln!(out, "% Model {} (atomlab)", d.model)?;
                    write!(out, "{}", herd::log(test, d))?;
                    if explain {
                        write_explanations(&mut out, test, std::slice::from_ref(r))?;
                    }
                    writeln!(out)?;
                }
                ModelOutcome::Timeout { model } => {
                    writeln!(
                        out,
                        "% Model {model} (atomlab)\nTest {} {}\nTIMEOUT [{model}]\n",
                        test.name,
                        test.condition.quantifier.kind()
                    )?;
                }
                ModelOutcome::NotApplicable { .. } => {}
                ModelOutcome::Failed { .. } => {}
            }
        }
    }
    Ok(())
}

fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn write_graphs(dir: &Path, outcomes: &[TestResult]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for o in outcomes {
        let TestResult::Checked(test, res, _) = o else {
            continue;
        };
        for r in res {
            let ModelOutcome::Done(d) = r else { continue };
            let stem = format!("{}.{}", file_stem(&test.name), d.model);
            if let Some(w) = &d.witness_dot {
                let p = dir.join(format!("{stem}.witness.dot"));
                std::fs::write(&p, w).with_context(|| format!("writing {}", p.display()))?;
            }
            for (k, f) in d.forbidden.iter().enumerate() {
                if let Some(g) = &f.dot {
                    let p = dir.join(format!("{stem}.forbidden{}.dot", k + 1));
                    std::fs::write(&p, g).with_context(|| format!("writing {}", p.display()))?;
                }
            }
            if d.witness_dot.is_none() && d.forbidden.is_empty() {
                // Nothing to draw: say so rather than leave the folder empty.
                eprintln!(
                    "--dot: no graph for {} [{}]: no execution satisfies the condition and none was forbidden by an axiom (see --explain)",
                    test.name, d.model
                );
            }
        }
    }
    Ok(())
}

/// The check part of `atomlab suite`: atomlab-model's built-in tests (the
/// load-buffering test of case 004 and the classic shapes) under every
/// model, printed as the side-by-side table (unless `print` is false), and
/// returned as records (capability `check`, scenario = test, variant = model).
pub fn suite_pass() -> Vec<atomlab_core::Record> {
    let models: Vec<&'static str> = MODEL_NAMES.to_vec();
    let opts = CheckOptions::default();
    let outcomes: Vec<TestResult> = atomlab_model::builtin::suite()
        .into_iter()
        .map(|test| {
            let start = Instant::now();
            let res = atomlab_model::check_test(&test, &models, &opts);
            TestResult::Checked(Box::new(test), res, start.elapsed())
        })
        .collect();
    records(&outcomes, true)
}

/// The side-by-side table of check records (test rows, model columns), for
/// `suite`, from the records alone.
pub fn records_table(recs: &[&Record]) -> anyhow::Result<()> {
    let mut models: Vec<&str> = Vec::new();
    let mut tests: Vec<(&str, String)> = Vec::new();
    for r in recs {
        if !models.contains(&r.variant.as_str()) {
            models.push(&r.variant);
        }
        let cond = r
            .parameters
            .get("condition")
            .and_then(|c| c.as_str())
            .unwrap_or("-");
        if !tests.iter().any(|(t, _)| *t == r.scenario) {
            tests.push((&r.scenario, cond.to_string()));
        }
    }
    let mut t = render::table();
    let mut header = vec!["test".to_string(), "condition".to_string()];
    header.extend(models.iter().map(|m| m.to_string()));
    t.set_header(header);
    for (test, cond) in &tests {
        let mut row = vec![test.to_string(), cond.clone()];
        for m in &models {
            let r = recs.iter().find(|r| r.scenario == *test && r.variant == *m);
            row.push(match r {
                Some(r) => record_cell(r),
                None => "-".into(),
            });
        }
        t.add_row(row);
    }
    render::print(&t)
}

/// A check record's cell, as the table of `check` prints it.
pub fn record_cell(r: &Record) -> String {
    atomlab_report::check_cell(r)
}
