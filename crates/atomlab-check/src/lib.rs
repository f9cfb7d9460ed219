//! A batch of litmus tests judged under memory models: the work of
//! `atomlab check`, callable from Rust.
//!
//! One job: take the inputs a user names (files, directories, `@LIST`s, as
//! [`atomlab_litmus::inputs`] expands them) and the models to judge them by
//! (atomlab-model's built-in ones, herd7 cat files through atomlab-cat,
//! herd7 `.cfg` files), judge every test in parallel with a deadline per
//! test, and give back atomlab's [`Record`]s (capability `check`, scenario
//! = the test, variant = the model), the inputs that could not be used,
//! and the live results for herd7-style logs. [`render`] turns them into
//! the check table (from records only, so a saved run prints as the command
//! did), herd7 logs and explanations.
//!
//! ```no_run
//! let opts = atomlab_check::Options {
//!     models: vec!["sc".into(), "x86tso".into()],
//!     timeout: Some(std::time::Duration::from_secs(10)),
//!     ..Default::default()
//! };
//! let batch = atomlab_check::check(&["tests/x86".into()], &opts, &mut atomlab_core::progress::silent).unwrap();
//! for r in &batch.records {
//!     println!("{} {} {:?}", r.scenario, r.variant, r.parameters.get("observation"));
//! }
//! ```
//!
//! Dependencies: `atomlab-litmus` (the tests and their expansion),
//! `atomlab-model` (the judging), `atomlab-cat` (cat and cfg files),
//! `atomlab-core` (records), `serde_json` (record detail), `thiserror`.
#![warn(unreachable_pub)]
#![deny(missing_docs)]

mod models;
mod pool;
mod records;
pub mod render;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use atomlab_core::check_layout::{Layout, Row};
use atomlab_core::progress::{Event, Live, Sink};
use atomlab_core::{ExitStatus, InputError, Record, Shard, Verdict};
use atomlab_litmus::Test;
/// How far a batch's search has gone (the counts behind its live
/// progress).
pub use atomlab_model::SearchProgress;
use atomlab_model::{AcquireLoad, Engine, ModelOutcome};

pub use models::{LoadError, ModelFile, ModelFrom};
pub use records::builtin_suite;

/// What to judge the inputs by, and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Built-in models by name (atomlab-model's `MODEL_NAMES`), or `all`;
    /// none means all of them unless model files are given.
    pub models: Vec<String>,
    /// Models written in herd7's cat language. One named like a selected
    /// built-in model judges in its place.
    pub model_files: Vec<ModelFile>,
    /// A herd7 configuration file (herd7's `-conf`): its `model` becomes a
    /// model file (named [`ModelFile::name`], or by the model's file stem)
    /// unless `model_files` are given; its `bell` and `variant` apply
    /// unless given here.
    pub conf: Option<ModelFile>,
    /// Directories searched for files a cat model includes, after the
    /// including file's own directory (herd7's `-I`).
    pub cat_path: Vec<PathBuf>,
    /// A bell file run before each cat model (herd7's `-bell`).
    pub bell: Option<PathBuf>,
    /// Variants the cat models' `if "NAME"` tests see as set.
    pub variants: Vec<String>,
    /// Tests judged in parallel; `None`: the CPUs available.
    pub jobs: Option<usize>,
    /// Give up on a test after this long (a `TIMEOUT` record); `None`: no limit.
    pub timeout: Option<Duration>,
    /// Which exploration builds the executions.
    pub engine: Engine,
    /// How C11 acquire loads compile to AArch64.
    pub acquire: AcquireLoad,
    /// For every forbidden outcome, the axiom that forbids it and a cycle.
    pub explain: bool,
    /// Write Graphviz graphs (a witness of the condition, one execution
    /// per forbidden outcome) into this directory.
    pub graphs: Option<PathBuf>,
    /// Only part `I` of `N` of the expanded test files.
    pub shard: Option<Shard>,
    /// Whether each record carries its allowed and forbidden states
    /// ([`Record::detail`]); without it, the verdict and the counts.
    pub detail: bool,
}

/// How far a batch's search has gone, in words, for the person watching
/// ([`atomlab_core::progress::Event::Watch`]): the executions explored so
/// far over every test.
struct Explored(Arc<SearchProgress>);

impl Live for Explored {
    fn so_far(&self) -> String {
        let (_, _, explored) = self.0.now();
        format!("{explored} executions explored")
    }
}

/// A long test is said to be running, where no bar shows it, this often.
pub const WATCH_EVERY: Duration = Duration::from_secs(10);

/// What a batch has to say besides its results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Note {
    /// The cfg file's `macros` file is not read: the Linux C parser has
    /// linux-kernel.def's macros built in.
    MacrosNotRead(PathBuf),
    /// No graph was written for a test under a model: nothing to draw.
    NoGraph {
        /// The test.
        test: String,
        /// The model.
        model: String,
    },
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Note::MacrosNotRead(def) => write!(
                f,
                "macros {} not read: atomlab's Linux C parser has linux-kernel.def's macros built in (READ_ONCE, smp_mb, spin_lock, rcu_read_lock...)",
                def.display()
            ),
            Note::NoGraph { test, model } => write!(
                f,
                "no graph for {test} [{model}]: no execution satisfies the condition and none was forbidden by an axiom (see --explain)"
            ),
        }
    }
}

/// Why a batch could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A model, cfg or bell file could not be used.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The graphs directory could not be created.
    #[error("{}: cannot create the directory", path.display())]
    GraphsDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A graph could not be written.
    #[error("writing {}", path.display())]
    GraphWrite {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// One test, judged.
#[derive(Debug)]
pub struct Checked {
    /// The test; its threads' code is dropped once judged unless
    /// explanations or graphs were asked for.
    pub test: Test,
    /// One outcome per model, in the batch's model order.
    pub outcomes: Vec<ModelOutcome>,
    /// How long judging it took.
    pub elapsed: Duration,
}

/// A judged batch.
#[derive(Debug)]
pub struct Batch {
    /// The models, in column order.
    pub models: Vec<String>,
    /// The tests that were judged, in input order (the live results:
    /// herd7 logs and explanations print from them).
    pub checked: Vec<Checked>,
    /// One record per test and model that judged it, ran out of time or
    /// passed the checker's bound.
    pub records: Vec<Record>,
    /// The inputs that could not be used (unreadable, outside the
    /// supported subset, a model that could not follow the test).
    pub errors: Vec<InputError>,
}

impl Batch {
    /// The exit status: bad input if any input could not be used, a
    /// failed verdict if a test timed out or passed the bound, else Ok.
    pub fn status(&self) -> ExitStatus {
        let undecided = self
            .records
            .iter()
            .any(|r| matches!(r.verdict, Some(Verdict::Timeout | Verdict::Bound)));
        if !self.errors.is_empty() {
            ExitStatus::BadInput
        } else if undecided {
            ExitStatus::VerdictFailed
        } else {
            ExitStatus::Ok
        }
    }

    /// The table's rows and columns as the command shows them: every
    /// model and every judged test, and the cells where a model could not
    /// follow the test (which have no record).
    pub fn layout(&self) -> Layout {
        Layout {
            models: self.models.clone(),
            rows: self
                .checked
                .iter()
                .map(|c| Row {
                    test: c.test.name.clone(),
                    file: c.test.file.clone(),
                    condition: c.test.condition_text(),
                })
                .collect(),
            errors: self
                .checked
                .iter()
                .flat_map(|c| {
                    c.outcomes.iter().filter_map(|o| match o {
                        ModelOutcome::Failed { model, error } if !records::bound(error) => {
                            Some((c.test.file.clone(), model.to_string()))
                        }
                        _ => None,
                    })
                })
                .collect(),
        }
    }
}

/// Judges the litmus tests `inputs` name (files, directories searched for
/// `*.litmus`, `@LIST` files) under the models of `opts`, in parallel,
/// telling `progress` as it goes (a batch of tests, each test as it
/// starts and ends, the executions explored so far as live counts, and
/// notes; from the calling thread or, one at a time, from the workers).
/// Fails only when a model cannot be loaded or the graphs cannot be
/// written; a test that cannot be used is in [`Batch::errors`].
pub fn check(inputs: &[String], opts: &Options, progress: Sink<'_>) -> Result<Batch, Error> {
    let given = models::load(opts, progress)?;
    let choices = models::choose(&opts.models, &given);
    if let Some(dir) = &opts.graphs {
        std::fs::create_dir_all(dir).map_err(|source| Error::GraphsDir {
            path: dir.clone(),
            source,
        })?;
    }
    let atomlab_litmus::inputs::Expanded { mut files, errors } =
        atomlab_litmus::inputs::expand(inputs);
    if let Some(s) = opts.shard {
        files = s.select(files);
    }
    let results = pool::judge(&files, &choices, opts, progress);

    let mut report_errors: Vec<InputError> = errors
        .into_iter()
        .map(|(input, message)| InputError {
            input,
            line: None,
            column: None,
            message,
        })
        .collect();
    let mut checked = Vec::new();
    for r in results {
        match r {
            Err(e) => report_errors.push(InputError {
                input: e.file.clone(),
                line: Some(e.line),
                column: Some(e.column),
                message: e.message.clone(),
            }),
            Ok(c) => {
                for o in &c.outcomes {
                    if let ModelOutcome::Failed { model, error } = o {
                        if !records::bound(error) {
                            report_errors.push(InputError {
                                input: c.test.file.clone(),
                                line: None,
                                column: None,
                                message: format!("{} [{model}]: {error}", c.test.name),
                            });
                        }
                    }
                }
                checked.push(c);
            }
        }
    }
    if let Some(dir) = &opts.graphs {
        write_graphs(dir, &checked, progress)?;
    }
    let models: Vec<String> = choices
        .iter()
        .map(|c| models::name(c).to_string())
        .collect();
    let mut records = records::records(&checked, &models, opts.detail);
    if let Some(s) = opts.shard {
        for r in &mut records {
            r.param("shard", s.to_string());
        }
    }
    Ok(Batch {
        models,
        checked,
        records,
        errors: report_errors,
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

fn write_graphs(
    dir: &std::path::Path,
    checked: &[Checked],
    progress: Sink<'_>,
) -> Result<(), Error> {
    let write = |p: PathBuf, text: &str| {
        std::fs::write(&p, text).map_err(|source| Error::GraphWrite { path: p, source })
    };
    for c in checked {
        for r in &c.outcomes {
            let ModelOutcome::Done(d) = r else { continue };
            let stem = format!("{}.{}", file_stem(&c.test.name), d.model);
            if let Some(w) = &d.witness_dot {
                write(dir.join(format!("{stem}.witness.dot")), w)?;
            }
            for (k, f) in d.forbidden.iter().enumerate() {
                if let Some(g) = &f.dot {
                    write(dir.join(format!("{stem}.forbidden{}.dot", k + 1)), g)?;
                }
            }
            if d.witness_dot.is_none() && d.forbidden.is_empty() {
                // Nothing to draw: say so rather than leave the folder empty.
                let note = Note::NoGraph {
                    test: c.test.name.clone(),
                    model: d.model.to_string(),
                };
                progress(Event::Note(&format!("--dot: {note}")));
            }
        }
    }
    Ok(())
}
