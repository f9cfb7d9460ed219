//! What a per-architecture scanner (aarch64.rs, riscv64.rs, x86_64.rs)
//! finds in a binary's code, before scan.rs attributes it to functions and
//! judges it.

use std::collections::HashMap;

use crate::model::{Helper, Site};

/// A direct branch (`bl`, or `b` as a tail call) and its target.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call {
    pub addr: u64,
    pub target: u64,
}

/// A load-exclusive … store-exclusive retry loop: indexes into `Scan::sites`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Loop {
    pub start: u64,
    pub ll: usize,
    pub sc: usize,
}

/// What a scanner found, before attribution.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub sites: Vec<Site>,
    pub loops: Vec<Loop>,
    pub calls: Vec<Call>,
    pub helpers: Vec<Helper>,
    /// PLT stub address → the imported function it jumps to.
    pub plt: HashMap<u64, String>,
    pub undecodable: u64,
}
