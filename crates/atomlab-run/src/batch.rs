//! Runs a list of litmus tests on this CPU, one after another, and judges
//! each histogram against the models that apply: the library side of
//! `atomlab run` (and of `atomlab suite`'s run pass). A Rust user asks
//! "did the hardware show an outcome a model forbids" with
//! [`run_files`] (files, directories and `@LIST`s, expanded by
//! [`atomlab_litmus::inputs`]) or [`run_test`] (one prepared test), and
//! reads [`Ran::forbidden`] or the [`Record`] that [`Ran::record`] builds.
//!
//! The judging follows litmus7 beside herd7 (Alglave, Maranget, Sarkar
//! and Sewell, TACAS 2011): each model's allowed final states are
//! computed by atomlab-model's checker on the test as written (a C test
//! through the C11→ISA mapping the code ran with), and an observed state
//! outside them is forbidden by that model, unless the model says the
//! test has a data race (undefined behaviour: anything is allowed).
//!
//! Everything is parsed and compiled before anything runs. [`run_files`]
//! stops before the first run when a test cannot run
//! ([`BatchError::Inputs`]); [`prepare_for_host`], what `atomlab run`
//! uses, leaves such tests out and lists them, as `atomlab check` does, so
//! that one unsupported test does not stop a corpus.

use std::time::{Duration, Instant};

use atomlab_core::{InputError, Metric, Record, Source, Unit, Verdict};
use atomlab_litmus::{Arch, StateVar, Test, Value};
use atomlab_model::{CheckOptions, ModelOutcome};
use serde_json::json;

use crate::{Affinity, PrepareOptions, Program, RunError, RunOptions, RunResult, SyncMode};

/// How to run a batch of tests.
#[derive(Debug, Clone, Default)]
pub struct BatchOptions {
    /// How each test runs (instances, runs, synchronisation, placement...).
    pub run: RunOptions,
    /// How each test is turned into code.
    pub prepare: PrepareOptions,
    /// The models every test is judged by (`sc`, `x86tso`, `aarch64`,
    /// `riscv`, `c11`, `rc11`); empty for [`models_for`] each test.
    pub models: Vec<String>,
    /// Tune the setting per test ([`crate::tune`]), varying what is not
    /// pinned; `None` runs `run` as given.
    pub tune: Option<crate::tune::Pinned>,
}

/// An observed final state a model forbids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forbidden {
    /// The model that forbids it.
    pub model: &'static str,
    /// The state's values, in [`RunResult::vars`]' order.
    pub values: Vec<Value>,
    /// The state as litmus7 prints it (`0:EAX=0; 1:EAX=0;`).
    pub state: String,
    /// How many instances ended in it.
    pub count: u64,
}

/// One test run on this CPU beside the verdicts of its models.
#[derive(Debug)]
pub struct Ran {
    /// The test as written.
    pub test: Test,
    /// The C11→ISA mapping a C test ran through.
    pub mapping: Option<&'static str>,
    /// Each model's verdict on the test.
    pub models: Vec<ModelOutcome>,
    /// What the CPU did.
    pub result: RunResult,
    /// The observed states a model forbids, model by model in
    /// [`Ran::models`]' order, each in the histogram's order.
    pub forbidden: Vec<Forbidden>,
    /// The command line that repeats the run ([`replay_line`]; when
    /// tuned, with the chosen setting pinned).
    pub replay: String,
    /// The options it ran with (when tuned: those of the chosen setting,
    /// which the runs after the trials used).
    pub options: RunOptions,
    /// What the tuner tried and chose, when it tuned.
    pub tuning: Option<crate::tune::Tuning>,
    /// Loads of the thread's own frame after each access in the code the
    /// runs after the trials used ([`PrepareOptions::spacing`]).
    pub spacing: u32,
}

impl Ran {
    /// The `run` record of this run ([`record`]).
    pub fn record(&self) -> Record {
        record(self)
    }
}

/// What a batch reports as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// Test `index` (of `total`) is about to run.
    Starting {
        /// The test.
        test: &'a Test,
        /// Its place in the batch, from 0.
        index: usize,
        /// Tests in the batch.
        total: usize,
    },
    /// Test `index` (of `total`) ran.
    Done {
        /// Its run and verdicts.
        ran: &'a Ran,
        /// Its place in the batch, from 0.
        index: usize,
        /// Tests in the batch.
        total: usize,
    },
}

/// Why a batch did not run to the end.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// Inputs that cannot be read, parsed or compiled for this CPU, each
    /// with its place and why; nothing was run.
    #[error("{} input(s) cannot be run; nothing was run", .0.len())]
    Inputs(Vec<InputError>),
    /// An option is out of range, or the system refused a run's threads
    /// or memory.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// The models that judge `test` on this host: a C test by this CPU's
/// hardware model (the registry's [`atomlab_model::models::of_cpu`]),
/// through the mapping it runs with, and by C11/RC11 as written; an
/// assembly test by the hardware model of its own dialect.
pub fn models_for(test: &Test) -> Vec<&'static str> {
    if test.arch == Arch::C {
        let host = atomlab_model::models::of_cpu(crate::host_isa()).map(|m| m.name());
        return host
            .into_iter()
            .chain(atomlab_model::models::C_LANGUAGE.iter().copied())
            .collect();
    }
    atomlab_model::models::of_cpus()
        .filter(|m| matches!(m.judges(test, Default::default()), Ok(None)))
        .map(|m| m.name())
        .collect()
}

/// Why a test cannot run, without the file name (reports name it apart).
pub fn refusal(e: &RunError) -> String {
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

/// How a placement is written on `atomlab run`'s command line.
fn affinity_text(a: &Affinity) -> String {
    match a {
        Affinity::Spread => "spread".into(),
        Affinity::None => "none".into(),
        Affinity::Cpus(cpus) => cpus
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// The `atomlab run` command line that repeats a run of `file` with `opts`.
pub fn replay_line(file: &str, opts: &BatchOptions) -> String {
    let run = &opts.run;
    let mut replay = format!(
        "atomlab run {} --size {} --runs {} --sync {} --pin {} --stride {} --seed {} --layout {} --preload {} --roles {} --run-barrier {}",
        file,
        run.size,
        run.runs,
        run.sync.name(),
        affinity_text(&run.affinity),
        run.stride,
        run.seed,
        run.layout.name(),
        run.preload.name(),
        run.roles.name(),
        run.run_barrier.name()
    );
    if run.sync == SyncMode::Timebase {
        match run.timebase_delay {
            Some(d) => replay.push_str(&format!(" --timebase-delay {d}")),
            None => replay.push_str(" --timebase-delay auto"),
        }
    }
    if !opts.models.is_empty() {
        replay.push_str(&format!(" --model {}", opts.models.join(",")));
    }
    if opts.prepare.arm_acquire == atomlab_model::AcquireLoad::Ldapr {
        replay.push_str(" --arm-acquire ldapr");
    }
    if opts.prepare.spacing > 0 {
        replay.push_str(&format!(" --spacing {}", opts.prepare.spacing));
    }
    replay
}

/// Reads, parses and compiles every litmus file `inputs` name (files,
/// directories, `@LIST`s), for this CPU. Every input that cannot run is
/// an error with its place; then there are no programs.
pub fn prepare_files(
    inputs: &[String],
    prep: &PrepareOptions,
) -> Result<Vec<Program>, Vec<InputError>> {
    let (programs, errors) = prepare_each(inputs, prep);
    if errors.is_empty() {
        Ok(programs)
    } else {
        Err(errors.into_iter().map(|(e, _)| e).collect())
    }
}

/// Tests a batch left out ([`prepare_for_host`]): those this host cannot
/// run, and those that cannot run anywhere as written.
#[derive(Debug, Default)]
pub struct Skipped {
    /// Each test this host cannot run, with its file and why.
    pub tests: Vec<InputError>,
    /// Inputs that cannot be read, parsed or encoded (a construct atomlab
    /// does not support, an instruction the code generator cannot encode),
    /// each with its place: the caller reports them as bad input (exit 2)
    /// after the rest has run.
    pub refused: Vec<InputError>,
    /// How many of each kind (`AArch64 test`, `Linux-kernel C test`,
    /// `test needing FEAT_LSE`), for a one-line summary.
    pub kinds: std::collections::BTreeMap<String, usize>,
}

impl Skipped {
    /// The one line that says what was left out (`None` when nothing
    /// was): the test itself when one was, else how many of each kind,
    /// and where to judge them instead.
    pub fn note(&self) -> Option<String> {
        match self.tests.as_slice() {
            [] => None,
            [one] => Some(format!("skipped {one}")),
            many => Some(format!(
                "skipped {} tests this host ({}) cannot run: {}; judge them with `atomlab check`, \
                 or run them on their hardware",
                many.len(),
                crate::host_isa(),
                self.kinds
                    .iter()
                    .map(|(kind, n)| format!("{n} {kind}{}", if *n == 1 { "" } else { "s" }))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// The exit status of a batch's records: 1 when a model forbids an
/// observed outcome, a test was cut short, or a model could not judge
/// one (`FAIL`, `TIMEOUT`, `BOUND`); else 0.
pub fn exit_status(records: &[Record]) -> atomlab_core::ExitStatus {
    if records.iter().any(|r| {
        matches!(
            r.verdict,
            Some(Verdict::Fail | Verdict::Timeout | Verdict::Bound)
        )
    }) {
        atomlab_core::ExitStatus::VerdictFailed
    } else {
        atomlab_core::ExitStatus::Ok
    }
}

/// As [`prepare_files`], but what cannot run is left out instead of
/// stopping the batch, as `atomlab run` does over a corpus: the tests this
/// host cannot run (another ISA's, Linux-kernel C tests, tests needing a
/// feature this CPU lacks) are counted in [`Skipped::kinds`], and the
/// inputs that cannot run anywhere (unreadable, unsupported, unencodable)
/// are listed in [`Skipped::refused`]. A batch left with nothing to run is
/// an error listing every refusal.
pub fn prepare_for_host(
    inputs: &[String],
    prep: &PrepareOptions,
) -> Result<(Vec<Program>, Skipped), Vec<InputError>> {
    let (programs, errors) = prepare_each(inputs, prep);
    if programs.is_empty() {
        return Err(errors.into_iter().map(|(e, _)| e).collect());
    }
    let mut skipped = Skipped::default();
    for (e, kind) in errors {
        match kind {
            Some(kind) => {
                *skipped.kinds.entry(kind).or_default() += 1;
                skipped.tests.push(e);
            }
            None => skipped.refused.push(e),
        }
    }
    Ok((programs, skipped))
}

/// What kind of test this host cannot run a refused test is, if that is
/// why it was refused.
fn host_cannot_run(e: &RunError) -> Option<String> {
    match e {
        RunError::WrongIsa { arch, .. } => Some(format!("{arch} test")),
        RunError::LinuxKernel { .. } => Some("Linux-kernel C test".into()),
        RunError::MissingFeature { feature, .. } => Some(format!("test needing {feature}")),
        _ => None,
    }
}

/// Every input prepared, or its refusal with the kind of test this host
/// cannot run, when that is why ([`host_cannot_run`]).
#[allow(clippy::type_complexity)]
fn prepare_each(
    inputs: &[String],
    prep: &PrepareOptions,
) -> (Vec<Program>, Vec<(InputError, Option<String>)>) {
    let atomlab_litmus::inputs::Expanded { files, errors } = atomlab_litmus::inputs::expand(inputs);
    let mut report_errors: Vec<(InputError, Option<String>)> = errors
        .into_iter()
        .map(|(input, message)| {
            let e = InputError {
                input,
                line: None,
                column: None,
                message,
            };
            (e, None)
        })
        .collect();
    let mut programs = Vec::new();
    for path in &files {
        match atomlab_litmus::parse_file(path) {
            Err(e) => report_errors.push((
                InputError {
                    input: e.file.clone(),
                    line: Some(e.line),
                    column: Some(e.column),
                    message: e.message.clone(),
                },
                None,
            )),
            Ok(test) => match crate::prepare_with(&test, prep) {
                Ok(p) => programs.push(p),
                Err(e) => {
                    let line = match &e {
                        RunError::Unencodable { line, .. }
                        | RunError::MissingFeature { line, .. } => Some(*line),
                        _ => None,
                    };
                    let refused = InputError {
                        input: test.file.clone(),
                        line,
                        column: None,
                        message: refusal(&e),
                    };
                    report_errors.push((refused, host_cannot_run(&e)));
                }
            },
        }
    }
    (programs, report_errors)
}

/// Runs every test `inputs` name on this CPU, one after another, each
/// beside its models' verdicts, as `atomlab run` does. The options are
/// checked first and every test is prepared before anything runs.
pub fn run_files(
    inputs: &[String],
    opts: &BatchOptions,
    progress: impl FnMut(Progress<'_>),
) -> Result<Vec<Ran>, BatchError> {
    opts.run.validate()?;
    let programs = prepare_files(inputs, &opts.prepare).map_err(BatchError::Inputs)?;
    Ok(run_programs(&programs, opts, progress)?)
}

/// Runs prepared tests one after another ([`run_test`] each, with the
/// replay line of its file), telling `progress` before and after each.
pub fn run_programs(
    programs: &[Program],
    opts: &BatchOptions,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<Vec<Ran>, RunError> {
    let total = programs.len();
    let mut ran = Vec::with_capacity(total);
    for (index, program) in programs.iter().enumerate() {
        progress(Progress::Starting {
            test: &program.test,
            index,
            total,
        });
        let r = run_test(program, opts, replay_line(&program.test.file, opts))?;
        progress(Progress::Done {
            ran: &r,
            index,
            total,
        });
        ran.push(r);
    }
    Ok(ran)
}

/// Judges a prepared test under the models of `opts` (or
/// [`models_for`] it), runs it on this CPU, and finds the
/// observed states a model forbids.
pub fn run_test(program: &Program, opts: &BatchOptions, replay: String) -> Result<Ran, RunError> {
    let test = &program.test;
    let models: Vec<&str> = if opts.models.is_empty() {
        models_for(test)
    } else {
        opts.models.iter().map(String::as_str).collect()
    };
    // The aarch64 column of a C test judges the mapping the code ran with.
    let check_opts = CheckOptions {
        deadline: Some(Instant::now() + Duration::from_secs(60)),
        acquire: opts.prepare.arm_acquire,
        ..CheckOptions::default()
    };
    let verdicts = atomlab_model::check_test(test, &models, &check_opts);
    let (result, tuning) = match opts.tune {
        Some(pinned) => {
            let sc = sc_states(test, &check_opts);
            // The condition's witnesses when no SC execution reaches one
            // (the outcome the test was written to catch), else any state
            // SC forbids; without SC's states, the witnesses.
            let witnesses_relaxed = sc
                .as_ref()
                .is_some_and(|states| !states.iter().any(|(_, witness)| *witness));
            let relaxed = |s: &[Value], witness: bool| match &sc {
                _ if witnesses_relaxed => witness,
                Some(states) => !states.iter().any(|(x, _)| x.as_slice() == s),
                None => witness,
            };
            let hunt = crate::tune::Hunt {
                what: if witnesses_relaxed || sc.is_none() {
                    "the condition's witnesses"
                } else {
                    "states sequential consistency forbids"
                },
                hit: &relaxed,
            };
            // The test's code with space between its accesses, for the
            // tuner to try (issue 38), unless --spacing pinned it.
            let spaced: Vec<(u32, Program)> = if pinned.spacing {
                Vec::new()
            } else {
                [4, 16]
                    .into_iter()
                    .filter(|&n| n != opts.prepare.spacing)
                    .filter_map(|n| {
                        let prep = PrepareOptions {
                            spacing: n,
                            ..opts.prepare
                        };
                        crate::prepare_with(test, &prep).ok().map(|p| (n, p))
                    })
                    .collect()
            };
            let mut programs = vec![(opts.prepare.spacing, program)];
            programs.extend(spaced.iter().map(|(n, p)| (*n, p)));
            crate::tune::run_tuned(&programs, &opts.run, pinned, &hunt)?
        }
        None => (crate::run(program, &opts.run)?, None),
    };
    let (options, replay) = match &tuning {
        Some(t) => {
            let chosen = BatchOptions {
                run: t.chosen.apply(&opts.run),
                prepare: PrepareOptions {
                    spacing: t.chosen.spacing,
                    ..opts.prepare
                },
                ..opts.clone()
            };
            let replay = replay_line(&test.file, &chosen);
            (chosen.run, replay)
        }
        None => (opts.run.clone(), replay),
    };
    let mut forbidden = Vec::new();
    for v in &verdicts {
        let ModelOutcome::Done(d) = v else { continue };
        if d.racy {
            // A data race is undefined behaviour: the model allows anything.
            continue;
        }
        for (state, n, _) in &result.histogram {
            if !d.states.iter().any(|(s, _)| s == state) {
                forbidden.push(Forbidden {
                    model: d.model,
                    values: state.clone(),
                    state: state_text(test, &result.vars, state),
                    count: *n,
                });
            }
        }
    }
    Ok(Ran {
        test: test.clone(),
        mapping: program.mapping,
        models: verdicts,
        result,
        forbidden,
        replay,
        options,
        spacing: tuning
            .as_ref()
            .map_or(opts.prepare.spacing, |t| t.chosen.spacing),
        tuning,
    })
}

/// The final states sequential consistency allows for `test` (in
/// [`RunResult::vars`]' order, as every model's), each with whether the
/// condition's proposition holds in it; `None` when SC cannot judge it
/// or finds a data race (then anything is allowed).
fn sc_states(test: &Test, check_opts: &CheckOptions) -> Option<Vec<(Vec<Value>, bool)>> {
    match atomlab_model::check_test(test, &["sc"], check_opts).pop()? {
        ModelOutcome::Done(d) if !d.racy => Some(
            d.states
                .iter()
                .map(|(s, _)| {
                    let holds = test.condition.prop.eval(&|v: &StateVar| {
                        d.vars
                            .iter()
                            .position(|x| x == v)
                            .map(|i| s[i])
                            .unwrap_or(Value::Int(0))
                    });
                    (s.clone(), holds)
                })
                .collect(),
        ),
        _ => None,
    }
}

/// A final state as litmus7 prints it: `0:EAX=0; x=1;`.
pub fn state_text(test: &Test, vars: &[StateVar], values: &[Value]) -> String {
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
/// model forbids an observed state, TIMEOUT when the run's timeout cut it
/// short. The detail holds everything `atomlab run`'s tables show, so
/// they print from the record alone: per histogram state the models that
/// allow it, the allowed states not observed, the forbidden states in
/// order, why a model gave no verdict, the test's kind and the timeout.
pub fn record(r: &Ran) -> Record {
    let test = &r.test;
    let res = &r.result;
    let opts = &r.options;
    let mut rec = Record::new("run", &test.name, crate::host_isa());
    rec.param("file", test.file.clone())
        .param("arch", test.arch.name())
        .param("condition", test.condition_text())
        .param("observation", res.observation())
        .param("mapping", r.mapping)
        .param("size", opts.size)
        .param("runs", opts.runs)
        .param("runs_done", res.runs_done)
        .param("sync", opts.sync.name())
        .param("affinity", affinity_text(&opts.affinity))
        .param("stride", opts.stride)
        .param("seed", opts.seed)
        .param("layout", opts.layout.name())
        .param("preload", opts.preload.name())
        .param("roles", opts.roles.name())
        .param("run_barrier", opts.run_barrier.name())
        .param("tuned", r.tuning.is_some())
        .param("spacing", r.spacing)
        .param(
            "cpus",
            res.cpus
                .iter()
                .map(|c| c.map(|c| c as i64).unwrap_or(-1))
                .collect::<Vec<_>>(),
        );
    let count =
        |name: &'static str, n: f64| Metric::new(name, Unit::Count, Source::Derived, vec![n]);
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
    let judged: Vec<&atomlab_model::ModelResult> = r
        .models
        .iter()
        .filter_map(|m| match m {
            ModelOutcome::Done(d) => Some(&**d),
            _ => None,
        })
        .collect();
    let allowed_by = |s: &Vec<Value>| {
        judged
            .iter()
            .filter(|d| d.states.iter().any(|(x, _)| x == s))
            .map(|d| d.model)
            .collect::<Vec<_>>()
    };
    let models: Vec<serde_json::Value> = r
        .models
        .iter()
        .map(|m| match m {
            ModelOutcome::Done(d) => json!({
                "model": d.model,
                // Whether the model describes the CPU the test ran on, so
                // that readers of the record need no ISA-to-model table.
                "this_cpu": atomlab_model::models::by_name(d.model)
                    .and_then(|m| m.cpu()) == Some(crate::host_isa()),
                "observation": d.observation.word(),
                "mapping": d.mapping,
                "data_race": d.racy,
                "allowed_states": d.states.iter().map(|(s, _)| state_text(test, &d.vars, s)).collect::<Vec<_>>(),
            }),
            other => json!({
                "model": other.model(),
                "observation": check_cell(other),
                "unjudged": unjudged(other),
            }),
        })
        .collect();
    // Allowed states the CPU did not show (normal), in the models' order.
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
    rec.detail = Some(json!({
        "histogram": res.histogram.iter().map(|(s, n, w)| json!({
            "state": state_text(test, &res.vars, s),
            "count": n,
            "witness": w,
            "forbidden_by": r.forbidden.iter().filter(|f| &f.values == s).map(|f| f.model).collect::<Vec<_>>(),
            "allowed_by": allowed_by(s),
        })).collect::<Vec<_>>(),
        "not_observed": unseen.iter().map(|s| json!({
            "state": state_text(test, &res.vars, s),
            "witness": holds(s),
            "allowed_by": allowed_by(s),
        })).collect::<Vec<_>>(),
        "forbidden": r.forbidden.iter().map(|f| json!({
            "model": f.model,
            "state": f.state,
            "count": f.count,
        })).collect::<Vec<_>>(),
        "models": models,
        "kind": test.condition.quantifier.kind(),
        "filtered": res.filtered,
        "loop_budget_exhausted": res.budget_exhausted,
        "timed_out": res.timed_out,
        "replay": r.replay,
        // Where the time went, on the thread that laid out the runs
        // (issue 26's per-phase split).
        "phase_ns": {
            "init": res.phases.init.as_nanos() as u64,
            "barriers": res.phases.barriers.as_nanos() as u64,
            "preload": res.phases.preload.as_nanos() as u64,
            "instances": res.phases.instances.as_nanos() as u64,
            "collect": res.phases.collect.as_nanos() as u64,
            "startup": res.phases.startup.as_nanos() as u64,
        },
        // What the tuner tried and chose (issue 38): every setting's runs,
        // hits and time, so the choice can be checked and repeated.
        "tuning": r.tuning.as_ref().map(|t| json!({
            "hunted": t.hunted,
            "chosen": t.chosen.name(),
            "chosen_flags": t.chosen.flags(),
            "trial_runs": t.trial_runs,
            "switches": t.switches,
            "trials": t.trials.iter().map(|x| json!({
                "setting": x.setting.name(),
                "runs": x.runs,
                "instances": x.instances,
                "hits": x.hits,
                "seconds": x.seconds,
                "hits_per_second": if x.seconds > 0.0 { x.hits as f64 / x.seconds } else { 0.0 },
            })).collect::<Vec<_>>(),
        })),
    }));
    if let Some(t) = &r.tuning {
        let tried = t.trials.iter().filter(|x| x.runs > 0).count();
        rec.notes.push(format!(
            "tuned: {tried} settings tried for {}, runs shared by Thompson sampling: {} of {} ran {} ({}), {} the others",
            t.hunted,
            res.runs_done - t.trial_runs.min(res.runs_done),
            res.runs_done,
            t.chosen.name(),
            t.chosen.flags(),
            t.trial_runs,
        ));
    }
    for e in &res.pin_errors {
        rec.notes.push(format!("pinning refused: {e}"));
    }
    // Relaxed outcomes need the threads running at once: on fewer CPUs
    // they take turns, and a test that "never" shows one says little.
    if let Some(cpus) = res.shared_cpus {
        rec.notes.push(format!(
            "the test's {} threads share {cpus} CPUs: they take turns more than they run together, so relaxed outcomes become rare (an outcome not seen here may still happen on a machine with {} CPUs)",
            test.threads.len(),
            test.threads.len()
        ));
    }
    if res.budget_exhausted > 0 {
        rec.notes.push(format!(
            "{} instances ran out of their loop budget and are not counted",
            res.budget_exhausted
        ));
    }
    rec.verdict = Some(if !r.forbidden.is_empty() {
        for f in &r.forbidden {
            rec.notes.push(format!(
                "FORBIDDEN OUTCOME OBSERVED: {} seen {} times, forbidden by {}; replay: {}",
                f.state, f.count, f.model, r.replay
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

/// The `run` record of a test that was not run, with why (no verdict):
/// `atomlab suite` records so a built-in test this host cannot run.
pub fn not_run(test: &Test, reason: &str) -> Record {
    let mut rec = Record::new("run", &test.name, crate::host_isa());
    rec.param("file", test.file.clone())
        .param("arch", test.arch.name())
        .param("condition", test.condition_text())
        .param("not_run", reason);
    rec.notes.push(format!("not run: {reason}"));
    rec
}

/// A model's verdict in a word or two, as `check` words it.
fn check_cell(o: &ModelOutcome) -> String {
    match o {
        ModelOutcome::Done(r) => {
            let race = if r.racy { " race" } else { "" };
            format!("{} ({}){race}", r.observation.word(), r.states.len())
        }
        ModelOutcome::Timeout { .. } => Verdict::Timeout.as_str().into(),
        ModelOutcome::NotApplicable { .. } => "-".into(),
        // As `check` words it: the checker's fixed limits, or a test the
        // model cannot follow.
        ModelOutcome::Failed {
            error: atomlab_model::CheckError::TooBig(_),
            ..
        } => Verdict::Bound.as_str().into(),
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
