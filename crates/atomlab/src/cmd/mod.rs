//! One module per subcommand. Each turns parsed arguments into calls on a
//! capability crate and returns an [`Outcome`]: the records as one
//! [`Report`], the exit status their verdicts give, and the people's view.
//! Rendering (`--json` or the view) and the exit code are applied here,
//! once, the same way for every subcommand (DESIGN.md, "How a result
//! flows").

pub mod audit;
pub mod bench;
pub mod check;
mod machine;
pub mod stress;
mod suite;

use atomlab_core::{ExitStatus, Report};

use crate::cli::{Cli, Command};
use crate::render;

/// How a command shows its report to people (tables, herd logs).
pub type PeopleView = Box<dyn FnOnce(&Report) -> anyhow::Result<()>>;

/// What a subcommand hands back to the dispatcher.
pub struct Outcome {
    /// The document `--json` prints: machine, records, unusable inputs.
    pub report: Report,
    /// The exit status the records' verdicts give.
    pub status: ExitStatus,
    /// The people's view, printed on stdout unless `--json`.
    pub people: PeopleView,
}

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitStatus> {
    // Completions and the man page describe the tool; they have no records.
    match &cli.command {
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(*shell, &mut cmd, "atomlab", &mut std::io::stdout());
            return Ok(ExitStatus::Ok);
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            clap_mangen::Man::new(cmd).render(&mut std::io::stdout())?;
            return Ok(ExitStatus::Ok);
        }
        _ => {}
    }
    // `check --format json` is `--json`: one document shape everywhere.
    let json =
        cli.json || matches!(&cli.command, Command::Check(a) if a.format == check::Format::Json);
    let outcome = match cli.command {
        Command::Audit(args) => audit::run(args)?,
        Command::Check(args) => check::run(args)?,
        Command::Machine => machine::run(),
        Command::Suite(args) => suite::run(args)?,
        Command::Bench(args) => bench::run(*args)?,
        Command::Stress(args) => stress::run(*args)?,
        Command::Completions { .. } | Command::Man => unreachable!("handled above"),
    };
    let Outcome {
        report,
        status,
        people,
    } = outcome;
    if json {
        render::json(&report)?;
    } else {
        people(&report)?;
    }
    for e in &report.errors {
        eprintln!("atomlab: {e}");
    }
    Ok(status)
}
