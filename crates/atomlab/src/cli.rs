//! The command line, declared with clap's derive API. Usage errors exit with
//! code 2 and list the valid choices (clap's behaviour, kept on purpose).

use clap::{Parser, Subcommand};

/// What does a memory-ordering choice cost on this machine, and is it correct?
#[derive(Debug, Parser)]
#[command(name = "atomlab", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// How binaries do their atomics: LSE, LL/SC, outline helpers, barriers.
    Audit(crate::cmd::audit::AuditArgs),
    /// Judge litmus tests under memory models: sc, x86tso, aarch64, c11, rc11.
    Check(crate::cmd::check::CheckArgs),
    /// Print the machine fingerprint stamped on every result.
    Machine(MachineArgs),
    /// The main job: a quick tour of this machine with every capability.
    Suite(SuiteArgs),
    /// Measure what a primitive costs: counter, refcount, lock, fence, pingpong.
    Bench(Box<crate::cmd::bench::BenchArgs>),
    /// Torture a primitive for correctness: mutex, peterson, dekker, refcount, spsc, seqlock.
    Stress(Box<crate::cmd::stress::StressArgs>),
}

#[derive(Debug, clap::Args)]
pub struct MachineArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct SuiteArgs {
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}
