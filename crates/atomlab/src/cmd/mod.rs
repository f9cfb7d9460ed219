//! One module per subcommand; each turns parsed arguments into calls on a
//! capability crate and hands the results to `render`.

pub mod audit;
pub mod bench;
pub mod check;
mod machine;
pub mod stress;
mod suite;

use atomlab_core::ExitStatus;

use crate::cli::{Cli, Command};

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitStatus> {
    match cli.command {
        Command::Audit(args) => audit::run(args),
        Command::Check(args) => check::run(args),
        Command::Machine(args) => machine::run(args),
        Command::Suite(args) => suite::run(args),
        Command::Bench(args) => bench::run(*args),
        Command::Stress(args) => stress::run(*args),
    }
}
