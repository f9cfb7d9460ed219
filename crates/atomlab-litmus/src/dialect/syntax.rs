//! What one dialect of herd's litmus format is to the parser ([`Dialect`]):
//! the architecture it is written for (whose herd name, `Arch::name`, opens
//! a test), how it names registers in the initial state and the final
//! condition, and how its threads are read: a table of assembly cells,
//! each instruction lowered by the dialect ([`Threads::Table`]), or a
//! syntax of its own (C's functions, [`Threads::Own`]). Each dialect file
//! ends in its `DIALECT`; `dialect/mod.rs` lists them.

use crate::ast::{Arch, Instr};
use crate::builder::Builder;
use crate::scan::{Cursor, PResult};

/// A branch whose label is resolved once the thread is read: the
/// instruction's index, the label and where it was written.
pub(crate) type Fixup = (usize, String, usize);

/// Lowers the instruction at the cursor, of thread `t`, appending to `out`
/// (branches to labels in `fixups`).
pub(crate) type LowerFn =
    fn(&mut Cursor<'_>, &mut Builder, usize, &mut Vec<Instr>, &mut Vec<Fixup>) -> PResult<()>;

/// How a dialect's threads are written.
#[derive(Clone, Copy)]
pub(crate) enum Threads {
    /// herd's assembly table (`P0 | P1 ;` and one row per line), each
    /// cell's instruction lowered by the function (`dialect/table.rs`).
    Table(LowerFn),
    /// A syntax of the dialect's own, read by the function, which returns
    /// where the threads end.
    Own(fn(&mut Cursor<'_>, &mut Builder) -> PResult<usize>),
}

/// One dialect: see the module's documentation.
#[derive(Clone, Copy)]
pub(crate) struct Dialect {
    /// The architecture it is written for.
    pub(crate) arch: Arch,
    /// The canonical name of a register as written in a condition or an
    /// initial state, or `None` when it is not one of the dialect's.
    pub(crate) canonical_reg: fn(&str) -> Option<String>,
    /// How its threads are read.
    pub(crate) threads: Threads,
}
