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
    /// Do not save this run in the results store.
    #[arg(long, global = true)]
    pub no_save: bool,
    /// A label saved with the run (shards of one job share a label; compare
    /// and report take labels).
    #[arg(long, global = true, value_name = "TEXT")]
    pub label: Option<String>,
    /// The results store: a SQLite file or postgres://user@host/db
    /// [default: $ATOMLAB_STORE, else $ATOMLAB_DB, else ~/.local/share/atomlab/results.db].
    #[arg(long, global = true, value_name = "PATH|URL")]
    pub store: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

// Each subcommand's arguments are declared only when it is the one being
// parsed (clap's `defer`): declaring all of them cost a `check` of 41 tests
// a tenth of its run time.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// How binaries do their atomics: LSE, LL/SC, outline helpers, barriers.
    Audit(crate::cmd::audit::AuditArgs),
    /// Judge litmus tests under memory models: sc, x86tso, aarch64, riscv, c11, rc11.
    Check(crate::cmd::check::CheckArgs),
    /// Run litmus tests on this CPU (JIT, no C compiler): histograms beside the models' verdicts.
    Run(Box<crate::cmd::run::RunArgs>),
    /// Print the machine fingerprint stamped on every result.
    Machine,
    /// The main job: a quick tour of this machine with every capability.
    Suite(SuiteArgs),
    /// Measure what a primitive costs: counter, refcount, lock, fence, pingpong.
    Bench(Box<crate::cmd::bench::BenchArgs>),
    /// Torture a primitive for correctness: mutex, peterson, dekker, refcount, spsc, seqlock.
    Stress(Box<crate::cmd::stress::StressArgs>),
    /// Load an HTTP server: closed loop (wrk) or a fixed rate (wrk2), with the server's CPU.
    Load(Box<crate::cmd::load::LoadArgs>),
    /// List the saved runs, newest first.
    Runs(crate::cmd::store::RunsArgs),
    /// Print a saved run as its command did (or its JSON with --json).
    Show {
        /// A run id or a unique prefix of one.
        run: String,
    },
    /// Print a saved run as JSON (the --json document) or CSV (a row per metric).
    Export {
        /// A run id or a unique prefix of one.
        run: String,
        /// json or csv.
        #[arg(long, value_enum, default_value = "json")]
        format: crate::cmd::store::ExportFormat,
    },
    /// Save a --json document from another machine (or an earlier run) in the store.
    Import {
        /// The JSON file (`-` for stdin).
        file: std::path::PathBuf,
    },
    /// Judge B against A: medians, change, confidence interval, p-value, verdict per metric.
    Compare(Box<crate::cmd::compare::CompareArgs>),
    /// Write an HTML report (self-contained: inline SVG charts, no network) of saved runs.
    Report(crate::cmd::report::ReportArgs),
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
    /// Where to write the suite's HTML report.
    #[arg(
        short,
        long,
        value_name = "FILE",
        default_value = "atomlab-report.html"
    )]
    pub output: std::path::PathBuf,
}
