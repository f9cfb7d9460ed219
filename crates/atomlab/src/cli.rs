//! The command line, declared with clap's derive API. Usage errors exit with
//! code 2 and list the valid choices (clap's behaviour, kept on purpose).

use clap::{Parser, Subcommand};

/// What does a memory-ordering choice cost on this machine, and is it correct?
#[derive(Debug, Parser)]
#[command(name = "atomlab", version, about, long_about = None)]
pub struct Cli {
    /// Print one JSON document (schema_version, machine, records, errors;
    /// schema/atomlab.schema.json) on stdout instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
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
    Machine,
    /// The main job: a quick tour of this machine with every capability.
    Suite(SuiteArgs),
    /// Measure what a primitive costs: counter, refcount, lock, fence, pingpong.
    Bench(Box<crate::cmd::bench::BenchArgs>),
    /// Torture a primitive for correctness: mutex, peterson, dekker, refcount, spsc, seqlock.
    Stress(Box<crate::cmd::stress::StressArgs>),
    /// Print a shell completion script: `atomlab completions bash > /etc/bash_completion.d/atomlab`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `atomlab man > ~/.local/share/man/man1/atomlab.1`.
    Man,
}

#[derive(Debug, clap::Args)]
pub struct SuiteArgs {
    /// Print every table, not only the one-screen summary.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}
