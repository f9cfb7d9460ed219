//! `atomlab check`: judge litmus tests under memory models (atomlab-model),
//! in parallel over tests, and render a table, herd7 logs or JSON.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Context;
use atomlab_core::ExitStatus;
use atomlab_litmus::{ParseError, Test};
use atomlab_model::check::{CheckOptions, ModelOutcome};
use atomlab_model::{explain, herd, AcquireLoad, MODEL_NAMES};
use clap::builder::PossibleValuesParser;
use serde_json::{json, Value};

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

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 every test judged; 1 some test timed out; 2 bad input \
(unreadable or unsupported test, unknown model or flag).\n\
C tests are judged by x86tso and aarch64 through the C11->ISA mapping tables (see --help of \
--arm-acquire and atomlab-model's mapping module)."
)]
pub struct CheckArgs {
    /// Litmus files, directories (searched for *.litmus) and @LIST files (one path per line).
    #[arg(required = true, value_name = "FILES")]
    pub files: Vec<String>,
    /// Models, comma-separated, or `all`.
    #[arg(long, short = 'm', default_value = "all", value_delimiter = ',',
          value_parser = PossibleValuesParser::new(["sc", "x86tso", "aarch64", "c11", "rc11", "all"]))]
    pub model: Vec<String>,
    /// For every forbidden outcome, the axiom that forbids it and a smallest cycle.
    #[arg(long)]
    pub explain: bool,
    /// Write Graphviz graphs (a witness of the condition, and one execution per forbidden outcome) into DIR.
    #[arg(long, value_name = "DIR")]
    pub dot: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Give up on a test after S seconds (TIMEOUT verdict).
    #[arg(long, value_name = "S")]
    pub timeout: Option<f64>,
    /// Tests checked in parallel (default: the CPUs available).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// How C11 acquire loads compile to AArch64 for the `aarch64` column of C tests.
    #[arg(long, value_enum, default_value = "ldar")]
    pub arm_acquire: ArmAcquire,
}

/// One input's result.
enum Outcome {
    Checked(Box<Test>, Vec<ModelOutcome>, Duration),
    Refused(ParseError),
}

/// Expands directories and @lists into litmus files, in a stable order.
fn expand(inputs: &[String], errors: &mut Vec<String>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for i in inputs {
        if let Some(list) = i.strip_prefix('@') {
            let base = Path::new(list).parent().unwrap_or(Path::new("."));
            match std::fs::read_to_string(list) {
                Ok(text) => {
                    let items: Vec<String> = text
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty() && !l.starts_with('#'))
                        .map(|l| {
                            let p = Path::new(l);
                            if p.exists() || p.is_absolute() {
                                l.to_string()
                            } else {
                                base.join(p).display().to_string()
                            }
                        })
                        .collect();
                    out.extend(expand(&items, errors));
                }
                Err(e) => errors.push(format!("{list}: cannot read list: {e}")),
            }
            continue;
        }
        let p = PathBuf::from(i);
        if p.is_dir() {
            let mut found = Vec::new();
            walk(&p, &mut found);
            if found.is_empty() {
                errors.push(format!("{i}: no .litmus files in this directory"));
            }
            out.extend(found);
        } else if p.is_file() {
            out.push(p);
        } else {
            errors.push(format!("{i}: no such file or directory"));
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    for p in v {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "litmus") {
            out.push(p);
        }
    }
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitStatus> {
    let models: Vec<&'static str> = if args.model.iter().any(|m| m == "all") {
        MODEL_NAMES.to_vec()
    } else {
        MODEL_NAMES
            .iter()
            .copied()
            .filter(|m| args.model.iter().any(|a| a == m))
            .collect()
    };
    let mut errors = Vec::new();
    let files = expand(&args.files, &mut errors);
    let opts = CheckOptions {
        deadline: None,
        explain: args.explain,
        graphs: args.dot.is_some(),
        acquire: match args.arm_acquire {
            ArmAcquire::Ldar => AcquireLoad::Ldar,
            ArmAcquire::Ldapr => AcquireLoad::Ldapr,
        },
    };
    let timeout = match args.timeout {
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => anyhow::bail!("--timeout must be a positive number of seconds, not {s}"),
        None => None,
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .clamp(1, 256);
    let results: Vec<Mutex<Option<Outcome>>> = files.iter().map(|_| Mutex::new(None)).collect();
    // ORDERING: the counter only hands out distinct indices; the results are
    // published by the Mutexes and the scope's join, so Relaxed suffices.
    let next = AtomicUsize::new(0);
    // Progress on stderr for runs over a second, when a person is watching.
    let show_progress = std::io::stderr().is_terminal();
    let run_start = Instant::now();
    let finished = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs.min(files.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                let outcome = match atomlab_litmus::parse_file(path) {
                    Err(e) => Outcome::Refused(e),
                    Ok(test) => {
                        let start = Instant::now();
                        let mut o = opts.clone();
                        o.deadline = timeout.map(|t| start + t);
                        let res = atomlab_model::check_test(&test, &models, &o);
                        Outcome::Checked(Box::new(test), res, start.elapsed())
                    }
                };
                if let Ok(mut slot) = results[i].lock() {
                    *slot = Some(outcome);
                }
                // ORDERING: a progress count only; nothing is published through it.
                let done = finished.fetch_add(1, Ordering::Relaxed) + 1;
                if show_progress && run_start.elapsed() > Duration::from_secs(1) {
                    eprint!("\rchecked {done}/{} tests", files.len());
                }
            });
        }
    });
    if show_progress && run_start.elapsed() > Duration::from_secs(1) {
        eprintln!();
    }
    let outcomes: Vec<Outcome> = results
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect();

    let mut bad_input = !errors.is_empty();
    let mut timed_out = false;
    for o in &outcomes {
        match o {
            Outcome::Refused(e) => {
                bad_input = true;
                errors.push(e.to_string());
            }
            Outcome::Checked(t, res, _) => {
                for r in res {
                    match r {
                        ModelOutcome::Failed { model, error } => {
                            bad_input = true;
                            errors.push(format!("{}: {} [{model}]: {error}", t.file, t.name));
                        }
                        ModelOutcome::Timeout { .. } => timed_out = true,
                        _ => {}
                    }
                }
            }
        }
    }

    if let Some(dir) = &args.dot {
        write_graphs(dir, &outcomes)?;
    }
    match args.format {
        Format::Table => print_table(&models, &outcomes, args.explain)?,
        Format::Herd => print_herd(&outcomes, args.explain)?,
        Format::Json => render::json(&to_json(&outcomes))?,
    }
    for e in &errors {
        eprintln!("atomlab: {e}");
    }
    if bad_input {
        return Ok(ExitStatus::BadInput);
    }
    if timed_out {
        return Ok(ExitStatus::VerdictFailed);
    }
    Ok(ExitStatus::Ok)
}

fn cell(o: &ModelOutcome) -> String {
    match o {
        ModelOutcome::Done(r) => {
            let race = if r.racy { " race" } else { "" };
            format!("{} ({}){race}", r.observation.word(), r.states.len())
        }
        ModelOutcome::Timeout { .. } => "TIMEOUT".into(),
        ModelOutcome::NotApplicable { .. } => "-".into(),
        ModelOutcome::Failed { .. } => "ERROR".into(),
    }
}

fn print_table(models: &[&str], outcomes: &[Outcome], explain: bool) -> anyhow::Result<()> {
    let mut t = render::table();
    let mut header = vec!["test".to_string(), "condition".to_string()];
    header.extend(models.iter().map(|m| m.to_string()));
    t.set_header(header);
    let mut mappings: Vec<(&str, &str)> = Vec::new();
    for o in outcomes {
        let Outcome::Checked(test, res, _) = o else {
            continue;
        };
        let mut row = vec![test.name.clone(), test.condition_text()];
        for r in res {
            row.push(cell(r));
            if let ModelOutcome::Done(d) = r {
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
    writeln!(out, "cells: observation of the condition (allowed final states); \"race\": a data race (undefined behaviour); \"-\": model does not apply")?;
    for (model, m) in mappings {
        writeln!(out, "{model} judges C tests through {m}")?;
    }
    if explain {
        for o in outcomes {
            if let Outcome::Checked(test, res, _) = o {
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
        if d.forbidden.is_empty() {
            writeln!(
                out,
                "{} [{}]: no outcome of a candidate execution is forbidden",
                test.name, d.model
            )?;
            continue;
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

fn print_herd(outcomes: &[Outcome], explain: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    for o in outcomes {
        let Outcome::Checked(test, res, _) = o else {
            continue;
        };
        for r in res {
            match r {
                ModelOutcome::Done(d) => {
                    write!(out, "{}", herd::log(test, d))?;
                    if explain {
                        write_explanations(&mut out, test, std::slice::from_ref(r))?;
                    }
                    writeln!(out)?;
                }
                ModelOutcome::Timeout { model } => {
                    writeln!(
                        out,
                        "Test {} {}\nTIMEOUT [{model}]\n",
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

fn to_json(outcomes: &[Outcome]) -> Value {
    let mut tests = Vec::new();
    let mut refused = Vec::new();
    for o in outcomes {
        match o {
            Outcome::Refused(e) => refused.push(json!({
                "file": e.file, "line": e.line, "column": e.column, "message": e.message,
            })),
            Outcome::Checked(test, res, elapsed) => {
                let models: Vec<Value> = res
                    .iter()
                    .map(|r| match r {
                        ModelOutcome::Done(d) => json!({
                            "model": d.model,
                            "mapping": d.mapping,
                            "verdict": d.observation.word(),
                            "ok": d.ok,
                            "states": d.states.iter().map(|(s, racy)| json!({
                                "state": herd::state_line(test, &d.vars, s), "data_race": racy,
                            })).collect::<Vec<_>>(),
                            "positive": d.positive,
                            "negative": d.negative,
                            "data_race": d.racy,
                            "candidates": d.candidates,
                            "forbidden": d.forbidden.iter().map(|f| json!({
                                "state": herd::state_line(test, &d.vars, &f.state),
                                "axiom": f.violation.axiom,
                                "cycle": explain::cycle_text(&f.violation, &f.labels),
                            })).collect::<Vec<_>>(),
                        }),
                        ModelOutcome::Timeout { model } => {
                            json!({"model": model, "verdict": "TIMEOUT"})
                        }
                        ModelOutcome::NotApplicable { model, reason } => {
                            json!({"model": model, "verdict": "n/a", "reason": reason})
                        }
                        ModelOutcome::Failed { model, error } => {
                            json!({"model": model, "verdict": "ERROR", "error": error.to_string()})
                        }
                    })
                    .collect();
                tests.push(json!({
                    "file": test.file,
                    "name": test.name,
                    "arch": test.arch.name(),
                    "condition": test.condition_text(),
                    "seconds": elapsed.as_secs_f64(),
                    "models": models,
                }));
            }
        }
    }
    json!({
        "schema_version": atomlab_core::SCHEMA_VERSION,
        "atomlab_version": atomlab_core::ATOMLAB_VERSION,
        "capability": "check",
        "tests": tests,
        "refused": refused,
    })
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

fn write_graphs(dir: &Path, outcomes: &[Outcome]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for o in outcomes {
        let Outcome::Checked(test, res, _) = o else {
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
        }
    }
    Ok(())
}

/// The check part of `atomlab suite`: atomlab-model's built-in tests (the
/// load-buffering test of case 004 and the classic shapes) under every
/// model, printed as the side-by-side table (unless `print` is false), and
/// returned as records (capability `check`, scenario = test, variant = model).
pub fn suite_pass(print: bool) -> anyhow::Result<Vec<atomlab_core::Record>> {
    let models: Vec<&'static str> = MODEL_NAMES.to_vec();
    let opts = CheckOptions {
        deadline: None,
        explain: false,
        graphs: false,
        acquire: AcquireLoad::Ldar,
    };
    let outcomes: Vec<Outcome> = atomlab_model::builtin::suite()
        .into_iter()
        .map(|test| {
            let start = Instant::now();
            let res = atomlab_model::check_test(&test, &models, &opts);
            Outcome::Checked(Box::new(test), res, start.elapsed())
        })
        .collect();
    if print {
        print_table(&models, &outcomes, false)?;
    }
    let mut records = Vec::new();
    for o in &outcomes {
        let Outcome::Checked(test, res, elapsed) = o else {
            continue;
        };
        for r in res {
            if let ModelOutcome::Done(d) = r {
                let mut rec = atomlab_core::Record::new("check", &test.name, d.model);
                rec.param("condition", test.condition_text())
                    .param("observation", d.observation.word())
                    .param("states", d.states.len())
                    .param("data_race", d.racy)
                    .param("mapping", d.mapping.unwrap_or("-"))
                    .param("seconds", elapsed.as_secs_f64());
                records.push(rec);
            }
        }
    }
    Ok(records)
}
