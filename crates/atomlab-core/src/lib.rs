//! The data model every atomlab capability speaks.
//!
//! A capability (bench, stress, check, audit, …) produces [`Record`]s: one
//! measured or checked thing each, carrying its parameters, its per-run
//! samples, a [`Summary`] per [`Metric`], the [`Machine`] it ran on and a
//! `schema_version`. Every figure carries its [`Unit`] and the [`Source`] it
//! came from, so that TSC reference cycles are never passed off as core cycles.
//!
//! The crate is deliberately small (serde types, units, exit codes, the machine
//! fingerprint), in the manner of cargo-nextest's metadata crate: tools that
//! read atomlab's JSON can depend on it without pulling in any capability.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

pub mod audit;
pub mod check_layout;
mod exit;
pub mod machine;
pub mod progress;
mod record;
pub mod sentence;
pub mod shard;
pub mod shell;
mod summary;
mod table_kind;
pub mod text;

pub use exit::ExitStatus;
pub use machine::{Machine, PmuStatus};
pub use record::{
    Flag, FlagKind, InputError, Metric, Record, Report, Source, Unit, Verdict,
    AUDIT_PACKAGE_WORST_FIRST,
};
pub use shard::Shard;
pub use summary::Summary;
pub use table_kind::TableKind;

/// Version of the JSON records' layout. Readers refuse an unknown major
/// version; a field added without changing meaning keeps the number.
/// Version 2: one document shape for every subcommand (`command`,
/// `atomlab_version`, `errors`), record `flags` and `detail`, and ns/op
/// defined from the run's wall time (threads × wall / operations).
pub const SCHEMA_VERSION: u32 = 2;

/// This atomlab's version, as stamped into every record.
pub const ATOMLAB_VERSION: &str = env!("CARGO_PKG_VERSION");
