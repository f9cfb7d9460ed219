//! The execution graphs a model judges, for models written outside this
//! crate (atomlab-cat's cat interpreter) and their tests: events and their
//! kinds, the sets and relations of a candidate execution (as in Alglave,
//! Maranget and Tautschnig, "Herding cats", TOPLAS 2014), and the bit-matrix
//! relations they are made of. The engine that builds them (`exec.rs`,
//! `interp.rs`, `explore.rs`) is private to this crate.

pub use crate::exec::{Event, Execution, Memo, Sets, Skeleton};
pub use crate::interp::Kind;
pub use crate::rel::{
    full_set, members, shortest_cycle, Bits, Rel, Set, MAX_EVENTS, MAX_NARROW_EVENTS,
    MAX_WIDE_EVENTS,
};
