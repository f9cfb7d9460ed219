//! The x86-64 backend: an encoder ([`encode`]) and the code generator from
//! atomlab-litmus's lowered instructions ([`codegen`]).

pub(crate) mod codegen;
pub(crate) mod encode;
