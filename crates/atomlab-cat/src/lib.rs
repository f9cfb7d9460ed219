//! An interpreter for herd7's cat language, so that `atomlab check
//! --model-file FILE.cat` judges litmus tests under a user's own model.
//!
//! The language is herd7's (Alglave, Cousot and Maranget, "Syntax and
//! semantics of the weak consistency model specification language cat",
//! 2016; herd7's manual, "The cat language"). A model is parsed once
//! ([`syntax`]), then run once by a partial evaluator (the `compile` module)
//! that resolves names, applies functions, follows `include` and `if`, and
//! leaves an evaluation plan of set and relation operations over
//! atomlab-model's candidate executions ([`CatModel`]); the plan is run per
//! execution ([`atomlab_model::models::Model`]).
//!
//! Bell files (herd7's `-bell`, manual section "Bell files") run before
//! the model in the same scope: `enum Name = 'a || 'b` also defines, per
//! tag, the set of events carrying it, named as herd names it (tag 'once
//! gives `Once`, 'rcu-lock gives `Rcu-lock`: herd's `BellName.tag2set_var`);
//! an event carries a tag when its Linux-kernel annotation (an access's, as
//! linux-kernel.def tags `READ_ONCE` with `ONCE`, or a fence's, `smp_rmb()`
//! with `rmb`) has that name, case aside. `instructions R[Accesses]` is
//! accepted (atomlab's Linux parser emits only linux-kernel.def's tags).
//! Variants (herd7's `-variant`) are given by the caller ([`Options`]);
//! herd7 cfg files are read by [`conf`].
//!
//! herd's view of lock events is kept: `M`, `R`, `W`, `rf`, `co`, `fr`,
//! `rmw` and `FW` leave out the lock events `LKR`, `LKW`, `UL`, `LF`, `RL`,
//! `RU` (herd's C semantics makes them non-memory events), which lock.cat
//! puts back; see the `with … from` notes in the compile module for how
//! lock.cat's generated reads-from and coherence map onto the engine's.
//!
//! Dependencies: `atomlab-model` (executions and relations), `thiserror`.
//!
//! # Limitations
//! - Executions come from atomlab-model's engine, which keeps only
//!   candidates that are SC per location and respect RMW atomicity; a model
//!   weaker than that sees fewer executions than under herd7.
//! - `with x from e` works for herd's coherence-order generators
//!   (`generate_cos`, `generate_orders`), for `cross(map f S)` where each
//!   `f(e)` is a set of candidate reads-from edges into `e` (lock.cat), and
//!   for a set of one value. `map` over an execution's events or pairs is
//!   supported only in that form.
//! - `match` and other enumeration of an execution's events (`classes-loc`,
//!   `partition`, `linearisations`, `tag2set`) are refused, as are
//!   `forall`, `assert` and bell declarations other than `enum`,
//!   `instructions`, `let` and checks (herd's scopes, regions and levels).
//! - herd's register-level events (`rf-reg`, `iico_data`, `iico_ctrl`,
//!   `Rreg`, `DATA`, `BCC`, `B`), which herd7 7.58's aarch64.cat uses to
//!   compute dependencies, are rebuilt from the engine's dependencies as
//!   virtual events (one per read and dependency kind, after the
//!   execution's events); a test with an execution whose events and
//!   virtual events pass 64 is refused for that model (execution bound
//!   exceeded), never given a guessed verdict.
//! - Sets of events atomlab's executions never have (page tables, tags,
//!   instruction fetch, cache and TLB maintenance, exceptions, locks,
//!   shareability variants of barriers other than `.SY`) are empty; DMB and
//!   DSB of one kind are one set (`DMB.SY`, `DMB.LD`, `DMB.ST`).
//! - RISC-V (herd's RISCV names, as riscv-defs.cat reads them): the fence
//!   sets `Fence.PRED.SUCC` (each of `r`, `w`, `rw`) and `Fence.tso`;
//!   `Acq`, `Rel` and `AcqRel` for `.aq`, `.rl` and `.aqrl`; `AMO` for both
//!   events of an AMO instruction; `X` (x86 LOCKed accesses, and the
//!   exclusives of Arm and RISC-V).
//! - `flag` checks are reported (herd's `Flag NAME` lines, through
//!   [`atomlab_model::models::Model::judge_flagged`]) and never forbid;
//!   `undefined_unless` shows as a data race (herd's `Undef`).
//! - Variants (`if "name"`) hold exactly for the names given
//!   ([`Options::variants`]); none by default.
//! - herd's `FW` (final writes) is every location's last write, not only
//!   those of locations the test's final condition observes.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod compile;
pub mod conf;
mod plan;
pub mod syntax;

use std::path::{Path, PathBuf};

pub use plan::CatModel;

/// A model that cannot be loaded: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct CatError {
    /// The cat file.
    pub file: String,
    /// 1-based line (0 when the file could not be read).
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

impl CatError {
    pub(crate) fn at(file: &str, line: u32, column: u32, message: String) -> CatError {
        CatError {
            file: file.to_string(),
            line,
            column,
            message,
        }
    }
}

fn finish(name: &str, mut c: compile::Compiler<'_>) -> CatModel {
    c.plan.finish();
    CatModel {
        // One name per loaded model, kept for the process: results carry
        // model names as &'static str.
        name: Box::leak(name.to_string().into_boxed_str()),
        plan: c.plan,
    }
}

/// Loads the model in `path` under the name `name`; `include`s are looked
/// up beside the including file, then in `cat_path`.
pub fn load(name: &str, path: &Path, cat_path: &[PathBuf]) -> Result<CatModel, CatError> {
    load_with(
        name,
        path,
        &Options {
            cat_path: cat_path.to_vec(),
            ..Options::default()
        },
    )
}

/// What herd7 takes besides the model file.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// herd7's `-bell FILE`: run before the model; its `enum`s define tag sets.
    pub bell: Option<PathBuf>,
    /// herd7's `-variant NAME`s: the model's `if "NAME"` tests hold for them.
    pub variants: Vec<String>,
    /// Directories searched for included files after the including
    /// file's own (herd7's `-I`).
    pub cat_path: Vec<PathBuf>,
}

/// Loads the model in `path` with a bell file and variants (herd7's
/// `-bell` and `-variant`).
pub fn load_with(name: &str, path: &Path, opts: &Options) -> Result<CatModel, CatError> {
    let mut c = compile::Compiler::new(&opts.cat_path, &opts.variants);
    c.run_prelude()?;
    if let Some(bell) = &opts.bell {
        c.run_bell(bell)?;
    }
    c.run_file(path, None)?;
    Ok(finish(name, c))
}

/// Loads a model from text (`file` names it in messages; `include`s are
/// looked up in `cat_path`).
pub fn load_text(
    name: &str,
    file: &str,
    text: &str,
    cat_path: &[PathBuf],
) -> Result<CatModel, CatError> {
    let mut c = compile::Compiler::new(cat_path, &[]);
    c.run_prelude()?;
    c.run_text(file, text)?;
    Ok(finish(name, c))
}
