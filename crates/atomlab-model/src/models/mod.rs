//! The models, each a file that reads like its paper or cat file, over the
//! engine's [`Execution`]s. A model names the axiom an execution breaks and,
//! when asked, a smallest cycle of events that breaks it.

use crate::exec::Execution;
use crate::rel::{full_set, shortest_cycle, Rel, Set};

pub mod aarch64;
pub mod c11;
pub mod rc11;
pub mod sc;
pub mod x86tso;

/// Why a model forbids an execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The axiom's name, as the model's cat file names it (`external`, `tso`, `SC`…).
    pub axiom: &'static str,
    /// A smallest cycle of events breaking it (empty unless explanations were asked for).
    pub cycle: Vec<usize>,
    /// The relation each cycle edge belongs to (`rfe`, `po`, `[dmb.ld]`…).
    pub edges: Vec<String>,
}

/// A model's judgement of one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// The model allows it; `racy` when it has a data race (undefined behaviour in C11/RC11).
    Allowed {
        /// A data race between non-atomic accesses (or a non-atomic and an atomic one).
        racy: bool,
    },
    /// The model forbids it.
    Forbidden(Violation),
}

/// A memory model.
pub trait Model: Sync {
    /// The name used on the command line.
    fn name(&self) -> &'static str;
    /// Judges an execution; fills the violation's cycle when `explain`.
    fn judge(&self, x: &Execution<'_>, explain: bool) -> Judgement;
    /// Whether the model allows `sb | rf` cycles through data dependencies,
    /// whose values are then "out of thin air" (herd prints them symbolically).
    fn allows_thin_air(&self) -> bool {
        false
    }
}

/// A violation of `axiom`, with a smallest cycle in the union of `parts`
/// (through an event of `through`) when `explain` is set. Each edge is named
/// by the first part that contains it.
pub(crate) fn violation(
    axiom: &'static str,
    explain: bool,
    parts: &[(&str, Rel)],
    through: Option<Set>,
) -> Judgement {
    if !explain || parts.is_empty() {
        return Judgement::Forbidden(Violation {
            axiom,
            cycle: Vec::new(),
            edges: Vec::new(),
        });
    }
    let n = parts[0].1.n();
    let all = parts.iter().fold(Rel::empty(n), |a, (_, r)| a | *r);
    let cycle = shortest_cycle(&all, through.unwrap_or(full_set(n)))
        .or_else(|| shortest_cycle(&all, full_set(n)))
        .unwrap_or_default();
    let mut edges = Vec::new();
    for k in 0..cycle.len() {
        let (a, b) = (cycle[k], cycle[(k + 1) % cycle.len()]);
        let name = parts
            .iter()
            .find(|(_, r)| r.has(a, b))
            .map(|(n, _)| n.to_string())
            .unwrap_or_else(|| "?".into());
        edges.push(name);
    }
    Judgement::Forbidden(Violation {
        axiom,
        cycle,
        edges,
    })
}

/// `fencerel(S)`: events separated in program order by an event of `s`.
pub(crate) fn fencerel(x: &Execution<'_>, s: Set) -> Rel {
    x.s.po.rng(s).seq(&x.s.po)
}

/// The model named `name`.
pub fn by_name(name: &str) -> Option<&'static dyn Model> {
    Some(match name {
        "sc" => &sc::Sc,
        "x86tso" => &x86tso::X86Tso,
        "aarch64" => &aarch64::AArch64,
        "c11" => &c11::C11,
        "rc11" => &rc11::Rc11,
        _ => return None,
    })
}

/// Every model's name, in the order tables show them.
pub const MODEL_NAMES: &[&str] = &["sc", "x86tso", "aarch64", "c11", "rc11"];
