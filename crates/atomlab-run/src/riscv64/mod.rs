//! The RV64 backend: an encoder ([`encode`]) and the code generator from
//! atomlab-litmus's lowered instructions ([`codegen`]).

pub mod codegen;
pub mod encode;
