//! Axiomatic memory-model checker (work in progress).
#![deny(missing_docs)]
