//! The x86-64 backend: an encoder ([`encode`]) and the code generator from
//! atomlab-litmus's lowered instructions ([`codegen`]), and on
//! that host what running the code needs (`host`, through [`crate::host`]).

use atomlab_litmus::Arch;
use atomlab_model::mapping::Target;

use crate::{Backend, Isa};

pub(crate) mod codegen;
pub(crate) mod encode;
#[cfg(target_arch = "x86_64")]
pub(crate) mod host;

/// The backend, as [`crate::BACKENDS`] lists it.
pub(crate) const BACKEND: Backend = Backend {
    isa: Isa::X86_64,
    name: "x86_64",
    archs: &[Arch::X86, Arch::X86_64],
    target: |_| Target::X86,
    thread_code: codegen::thread_code_spaced,
    feature_needed: |_| None,
};
