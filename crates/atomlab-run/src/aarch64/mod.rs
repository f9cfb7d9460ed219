//! The AArch64 backend: an encoder ([`encode`]) and the code generator from
//! atomlab-litmus's lowered instructions ([`codegen`]), and on
//! that host what running the code needs (`host`, through [`crate::host`]).

use atomlab_litmus::Arch;
use atomlab_model::mapping::Target;

use crate::{Backend, Isa};

pub(crate) mod codegen;
pub(crate) mod encode;
#[cfg(target_arch = "aarch64")]
pub(crate) mod host;

/// The backend, as [`crate::BACKENDS`] lists it.
pub(crate) const BACKEND: Backend = Backend {
    isa: Isa::AArch64,
    name: "aarch64",
    archs: &[Arch::AArch64],
    target: |opts| Target::AArch64(opts.arm_acquire),
    thread_code: codegen::thread_code_spaced,
    feature_needed: codegen::feature_needed,
};
