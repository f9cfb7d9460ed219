//! `atomlab verify`: a plugin's variants checked under memory models,
//! from the file alone. The plugin is never loaded or run (it may be built
//! for another architecture): its description is read from the ELF file
//! (`descriptor`), each variant's functions and everything they call in
//! the file are lifted to the checker's instructions ([`lift`]), a client
//! ([`client`]) calls them from several threads, and atomlab-model judges
//! every execution of that test under each model, as GenMC does for C
//! programs (Kokologiannakis and Vafeiadis, "GenMC: A Model Checker for
//! Weak Memory Models", CAV 2021): spin loops are cut by spin-assume
//! ([`atomlab_model::LoopRule`]), other loops by `--unroll`.
//!
//! Verdicts per variant and model: PASS (every execution checked, none
//! wrong), FAIL (one is wrong: its reads-from explanation comes with it),
//! BOUND (a loop or an engine limit cut the check short: no claim), and
//! REFUSED (the code does something verify does not follow: a system
//! call, a function of another library, an instruction or address it
//! cannot resolve; named, with its address). Never a silent PASS.
//!
//! A second opinion: [`export`] writes each client as a herd7 litmus test
//! in the file's own assembly (`--litmus DIR`), which `atomlab check` and
//! herd7 judge with their own AArch64 and RISC-V models.
//!
//! Supported today: kinds lock, spsc, refcount and op in AArch64, RV64
//! and x86-64 files (the instruction sets of [`lift::aarch64`],
//! [`lift::riscv64`] and [`lift::x86_64`]), each judged by its own
//! architecture's model (`aarch64`, `riscv`, `x86tso`) and by `sc`, each
//! with the client [`client`] describes, from the object as its `new_`
//! leaves it (`initial`). In all three
//! instruction sets, calls through the PLT to `malloc`, `calloc`,
//! `aligned_alloc` and `free`, and thread-local storage (aarch64's
//! TPIDR_EL0 and TLS descriptors, `__tls_get_addr` on x86-64 and riscv64)
//! give fresh memory per call site, thread and call, or a TLS block per
//! thread, whose addresses may be stored and followed back (an MCS
//! lock's queue), with heap misuse checked ([`lift::heap`]); the lock
//! client runs the file's `free_` at the end.
//! A ring's slot
//! indexed by a register masked to a few values (`slot[t & (N - 1)]`) is
//! followed as the field the index picks in each execution, and pop's
//! store through its item pointer as a store to the client's item
//! ([`lift::index`], [`lift::Registers::pointers`]); a slot computed any
//! other way is refused, naming the instruction.
#![warn(unreachable_pub)]

mod advise;
pub mod client;
mod counterexample;
mod descriptor;
pub mod export;
mod initial;
pub mod lift;
mod not_built;

use std::time::{Duration, Instant};

use atomlab_audit::{Arch, AuditError, PluginFile};
use atomlab_model::{CheckOptions, Engine, LoopRule, ModelOutcome, Observation};

pub use descriptor::{Description, Kind, Variant};

/// Bad input: exit 2, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The file cannot be read as ELF.
    #[error("{0} (verify reads a plugin built as a shared library: cc -O2 -shared -fPIC -I include -o my.so my.c)")]
    File(AuditError),
    /// No `atomlab_plugin` symbol.
    #[error("{path}: no atomlab_plugin symbol: not an atomlab plugin (see include/atomlab.h; export `const struct atomlab_plugin *atomlab_plugin(void)`)")]
    NoEntry {
        /// The file.
        path: String,
    },
    /// The description cannot be read from the file.
    #[error("{path}: cannot read the plugin's description: {what}")]
    Description {
        /// The file.
        path: String,
        /// Why.
        what: String,
    },
    /// A `--variant` the plugin does not have, or of a kind verify lacks.
    #[error("{0}")]
    Variant(String),
    /// A `--model` that does not judge this file's code.
    #[error("{0}")]
    Model(String),
    /// The file's architecture is not lifted yet.
    #[error("{path}: {arch} plugins are not verified (verify lifts aarch64, riscv64 and x86-64 code); check it on the machine with `atomlab stress mutex --plugin {path}`")]
    Arch {
        /// The file.
        path: String,
        /// Its architecture.
        arch: &'static str,
    },
}

impl From<AuditError> for VerifyError {
    fn from(e: AuditError) -> VerifyError {
        VerifyError::File(e)
    }
}

/// What to check.
#[derive(Debug, Clone)]
pub struct Options {
    /// Variants by name (`None`: every variant of a kind verify checks).
    pub variants: Option<Vec<String>>,
    /// Models by name (`None`: the file's own architecture's).
    pub models: Option<Vec<String>>,
    /// Threads of the client.
    pub threads: usize,
    /// Critical sections (lock), operations (op) or, for refcount, one
    /// put plus K-1 extra get/put pairs per thread.
    pub rounds: usize,
    /// Items the spsc client pushes ([`client::SPSC_ITEMS`] by default).
    pub items: usize,
    /// Iterations of a loop that writes allowed on one path.
    pub unroll: usize,
    /// Time allowed per (variant, model, CPU) check.
    pub timeout: Duration,
    /// Try changes to the instructions and verify again (`advise`).
    pub advise: bool,
    /// How far the checks have gone (runs, combinations, executions),
    /// for progress lines on a long check (shared by the caller).
    pub progress: Option<std::sync::Arc<atomlab_model::SearchProgress>>,
}

impl Options {
    /// The client's size these options ask for.
    pub fn size(&self) -> client::Size {
        client::Size {
            threads: self.threads,
            rounds: self.rounds,
            items: self.items,
        }
    }
}

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every execution was checked and none is wrong.
    Pass,
    /// Some execution is wrong.
    Fail,
    /// The check was cut short: no claim either way.
    Bound,
    /// The code is outside what verify follows.
    Refused,
}

impl Verdict {
    /// The word in the table.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Bound => "BOUND",
            Verdict::Refused => "REFUSED",
        }
    }
}

/// One row: a variant under a model (and, for outline atomics, a CPU).
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The variant.
    pub variant: String,
    /// Its kind.
    pub kind: Kind,
    /// The model.
    pub model: String,
    /// For code that calls libgcc's outline atomics: whether the CPU has
    /// LSE (the helpers take the LSE instruction) or not (the LL/SC loop).
    pub lse: Option<bool>,
    /// The verdict.
    pub verdict: Verdict,
    /// One line: why (the bound hit, the refusal, the wrong final value).
    pub reason: String,
    /// A FAIL's counterexample: the reads-from of the wrong execution.
    pub counterexample: Option<String>,
    /// A FAIL's execution at the instruction level.
    pub trace: Option<counterexample::Counterexample>,
    /// With `--advise`: changes that pass (for a FAIL) or keep passing
    /// (for a PASS).
    pub advice: advise::Advised,
    /// Executions the engine examined.
    pub executions: usize,
    /// Time taken.
    pub elapsed: Duration,
}

/// A plugin file read for checking.
pub struct Plugin<'a> {
    /// The file as given.
    pub path: String,
    /// The file, read.
    pub file: PluginFile<'a>,
    /// Its description.
    pub description: Description,
}

impl<'a> Plugin<'a> {
    /// Reads `data`, the file at `path`.
    pub fn read(path: &str, data: &'a [u8]) -> Result<Plugin<'a>, VerifyError> {
        let file = PluginFile::parse(path, data)?;
        let description = descriptor::read(path, &file)?;
        Ok(Plugin {
            path: path.into(),
            file,
            description,
        })
    }

    /// The file's architecture.
    pub fn arch(&self) -> Arch {
        self.file.arch()
    }

    /// The models a file of this architecture is judged by when none are
    /// given: its own hardware model.
    pub fn default_models(&self) -> Vec<String> {
        vec![own_model(self.arch()).to_string()]
    }

    /// The variants `opts` selects, checked against the description.
    pub fn select(&self, opts: &Options) -> Result<Vec<&Variant>, VerifyError> {
        let all = &self.description.variants;
        let listing = || {
            all.iter()
                .map(|v| format!("{} ({})", v.name, v.kind.map_or("unknown kind", Kind::name)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match &opts.variants {
            None => {
                let v: Vec<&Variant> = all.iter().filter(|v| v.kind.is_some()).collect();
                if v.is_empty() {
                    return Err(VerifyError::Variant(format!(
                        "{}: no variant of a kind verify checks (lock, spsc, refcount, op); this plugin provides {}",
                        self.path,
                        listing()
                    )));
                }
                Ok(v)
            }
            Some(names) => names
                .iter()
                .map(|n| {
                    let v = all.iter().find(|v| &v.name == n).ok_or_else(|| {
                        VerifyError::Variant(format!(
                            "{}: no variant {n}; this plugin provides {}",
                            self.path,
                            listing()
                        ))
                    })?;
                    if v.kind.is_none() {
                        return Err(VerifyError::Variant(format!(
                            "{}: variant {n} has a kind number include/atomlab.h does not define; verify checks lock, spsc, refcount and op variants",
                            self.path
                        )));
                    }
                    Ok(v)
                })
                .collect(),
        }
    }

    /// The models `opts` names, checked against the file's architecture.
    pub fn models(&self, opts: &Options) -> Result<Vec<String>, VerifyError> {
        if lift::lifter(self.arch()).is_none() {
            return Err(VerifyError::Arch {
                path: self.path.clone(),
                arch: self.arch().name(),
            });
        }
        let models = opts.models.clone().unwrap_or_else(|| self.default_models());
        let own = own_model(self.arch());
        for m in &models {
            if m != own && m != "sc" {
                return Err(VerifyError::Model(format!(
                    "--model {m}: {m} does not judge {} code; this file is judged by {own} (its own) and sc",
                    self.arch().name()
                )));
            }
        }
        Ok(models)
    }

    /// Checks `v` under `models`; one outcome per model (two, with and
    /// without LSE, where the code calls outline atomics).
    pub fn check(&self, v: &Variant, models: &[String], opts: &Options) -> Vec<Outcome> {
        let kind = v.kind.unwrap_or(Kind::Lock);
        let mut out = Vec::new();
        let build = |lse| client::build(&self.file, v, kind, opts.size(), lse);
        let first = build(false);
        let builds: Vec<(Option<bool>, Result<client::Built, client::NotBuilt>)> = match first {
            Ok(b) if b.reads_lse_flag => {
                let with = build(true);
                vec![(Some(false), Ok(b)), (Some(true), with)]
            }
            other => vec![(None, other)],
        };
        for (lse, built) in &builds {
            for m in models {
                let start = Instant::now();
                let row = |verdict, reason: String, counterexample, trace, executions| Outcome {
                    variant: v.name.clone(),
                    kind,
                    model: m.clone(),
                    lse: *lse,
                    verdict,
                    reason,
                    counterexample,
                    trace,
                    advice: advise::Advised::default(),
                    executions,
                    elapsed: start.elapsed(),
                };
                match built {
                    Err(client::NotBuilt::Refused(r)) => {
                        out.push(row(Verdict::Refused, r.to_string(), None, None, 0))
                    }
                    Err(client::NotBuilt::Missing(why)) => {
                        out.push(row(Verdict::Refused, why.clone(), None, None, 0))
                    }
                    Ok(b) => {
                        let j = judge(b, m, opts);
                        let trace = j
                            .witness
                            .as_ref()
                            .map(|w| counterexample::explain(&self.file, b, w, &j.reason));
                        let mut done = row(j.verdict, j.reason, j.reads_from, trace, j.executions);
                        if opts.advise {
                            done.advice = advise::advise(&self.file, b, m, opts, j.verdict);
                            done.elapsed = start.elapsed();
                        }
                        out.push(done);
                    }
                }
            }
        }
        out
    }
}

/// The hardware model of a file's own architecture (the model registry's
/// [`atomlab_model::models::of_cpu`]; every architecture verify reads has
/// one, as a test holds).
pub fn own_model(arch: Arch) -> &'static str {
    atomlab_model::models::of_cpu(arch.cpu()).map_or("sc", |m| m.name())
}

/// What the checker said of one built test under one model.
pub(crate) struct Judged {
    pub(crate) verdict: Verdict,
    reason: String,
    /// A FAIL's reads-from, in herd7's words.
    reads_from: Option<String>,
    /// A FAIL's execution as data.
    witness: Option<atomlab_model::explain::Witness>,
    pub(crate) executions: usize,
}

impl Judged {
    /// A verdict with no execution to show.
    fn plain(verdict: Verdict, reason: String, executions: usize) -> Judged {
        Judged {
            verdict,
            reason,
            reads_from: None,
            witness: None,
            executions,
        }
    }
}

/// The checker's options for one check: the time limit from now.
pub(crate) fn check_options(opts: &Options) -> CheckOptions {
    CheckOptions {
        deadline: Some(Instant::now() + opts.timeout),
        explain: true,
        // The exploration engine (explore.rs) with explanations: it
        // builds the witness's reads-from text and execution.
        engine: Engine::Explore,
        loops: Some(LoopRule {
            unroll: opts.unroll,
        }),
        // A FAIL needs one wrong execution, its counterexample: the search
        // stops there, as GenMC stops at the first error. A PASS still
        // examines every execution.
        stop_at_first: true,
        // The lock client's threads are copies of one: a combination of
        // their runs is searched once for all its orderings.
        symmetry: true,
        // GenMC's way: one execution graph grown at a time, where that
        // finds every combination of the threads' runs (grow.rs).
        grow: atomlab_model::Grow::Always,
        progress: opts.progress.clone(),
        ..CheckOptions::default()
    }
}

/// Runs the checker on a built test under `model`.
pub(crate) fn judge(b: &client::Built, model: &str, opts: &Options) -> Judged {
    let check = check_options(opts);
    let timed_out = || {
        Judged::plain(
            Verdict::Bound,
            format!("timed out after {:?} (--timeout)", opts.timeout),
            0,
        )
    };
    match atomlab_model::check_test(&b.test, &[model], &check).remove(0) {
        ModelOutcome::Done(r) if r.states.is_empty() => Judged::plain(
            Verdict::Bound,
            "no execution runs to the end (every run was cut): nothing was checked".into(),
            r.candidates,
        ),
        ModelOutcome::Done(r) if r.observation == Observation::Never => Judged::plain(
            Verdict::Pass,
            format!(
                "{}, from {} ({} final state{})",
                b.property.checked(opts.threads, opts.rounds),
                b.initial.words(),
                r.states.len(),
                if r.states.len() == 1 { "" } else { "s" }
            ),
            r.candidates,
        ),
        ModelOutcome::Done(r) => {
            // The first wrong final state's sentence, and how many other
            // distinct ones there are.
            let mut why: Vec<String> = Vec::new();
            for (s, _) in &r.states {
                if let Some(w) = b.wrong(&r.vars, s) {
                    if !why.contains(&w) {
                        why.push(w);
                    }
                }
            }
            if why.is_empty() {
                why.push("an execution ends in a state the client's condition calls wrong".into());
            }
            let mut reason = why.remove(0);
            if !why.is_empty() {
                reason.push_str(&format!(
                    " (and {} other wrong final state{})",
                    why.len(),
                    if why.len() == 1 { "" } else { "s" }
                ));
            }
            Judged {
                verdict: Verdict::Fail,
                reason,
                reads_from: r.witness.clone(),
                witness: r.witness_execution.clone(),
                executions: r.candidates,
            }
        }
        ModelOutcome::Timeout { .. } => timed_out(),
        ModelOutcome::Failed { error, .. } => match error {
            atomlab_model::CheckError::TooBig(why) => Judged::plain(
                Verdict::Bound,
                format!("{why}; try fewer --threads or --rounds, or a larger --unroll"),
                0,
            ),
            atomlab_model::CheckError::Timeout => timed_out(),
            other => Judged::plain(Verdict::Refused, other.to_string(), 0),
        },
        ModelOutcome::NotApplicable { reason, .. } => Judged::plain(Verdict::Refused, reason, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every architecture verify reads has its hardware model in the
    /// registry.
    #[test]
    fn each_architecture_has_its_own_model() {
        let own: Vec<&str> = [Arch::Aarch64, Arch::X86_64, Arch::Riscv64]
            .into_iter()
            .map(own_model)
            .collect();
        assert_eq!(own, ["aarch64", "x86tso", "riscv"]);
    }
}
