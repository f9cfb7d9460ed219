//! atomlab's results store: every run kept, so that `atomlab runs`, `show`,
//! `export`, `import`, `compare` and `report` can read it later.
//!
//! A run is one [`atomlab_core::Report`] (the JSON document a subcommand
//! writes with `--json`) plus its [`RunMeta`]: id, start time, label, command
//! line, git commit and host. [`Location::resolve`] says where the store is:
//! a SQLite file on this machine or a PostgreSQL database for a team.
#![deny(missing_docs)]

mod error;
mod location;
mod meta;

pub use error::StoreError;
pub use location::Location;
pub use meta::{new_run_id, RunMeta};
