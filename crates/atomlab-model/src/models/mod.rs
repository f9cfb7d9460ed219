//! The models, each a file that reads like its paper or cat file, over the
//! engine's `Execution`s. A model names the axiom an execution breaks and,
//! when asked, a smallest cycle of events that breaks it.

pub mod aarch64;
pub mod c11;
pub mod lkmm;
mod model;
pub mod rc11;
pub mod riscv;
pub mod sc;
pub mod x86tso;

pub use model::{Judgement, Model, Violation};

/// The model named `name`.
pub fn by_name(name: &str) -> Option<&'static dyn Model> {
    Some(match name {
        "sc" => &sc::Sc,
        "x86tso" => &x86tso::X86Tso,
        "aarch64" => &aarch64::AArch64,
        "c11" => &c11::C11,
        "rc11" => &rc11::Rc11,
        "riscv" => &riscv::RiscV,
        "lkmm" => &lkmm::Lkmm,
        _ => return None,
    })
}

/// The built-in model of the CPU architecture `arch` (Rust's name for it,
/// as [`Model::cpu`] gives it): the model a PASS or an observation on
/// such a CPU is held to.
pub fn of_cpu(arch: &str) -> Option<&'static dyn Model> {
    of_cpus().find(|m| m.cpu() == Some(arch))
}

/// The models that describe a CPU ([`Model::cpu`]), in the order tables
/// show them: x86tso, aarch64, riscv.
pub fn of_cpus() -> impl Iterator<Item = &'static dyn Model> {
    MODEL_NAMES
        .iter()
        .filter_map(|n| by_name(n))
        .filter(|m| m.cpu().is_some())
}

/// The models of the C language (C11 and its repair RC11): what `run`
/// puts beside a C test's host model.
pub const C_LANGUAGE: &[&str] = &["c11", "rc11"];

/// Every model's name, in the order tables show them.
pub const MODEL_NAMES: &[&str] = &["sc", "x86tso", "aarch64", "riscv", "c11", "rc11", "lkmm"];
