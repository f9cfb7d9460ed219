//! `atomlab`: the command-line front end. It parses, dispatches to the
//! capability crates and renders; the work lives in those crates.

mod args;
mod cli;
mod cmd;
mod progress;
mod render;

use std::process::ExitCode;

use atomlab_core::ExitStatus;
use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match cmd::dispatch(cli) {
        Ok(status) => ExitCode::from(status.code() as u8),
        Err(err) => {
            // A closed pipe (`atomlab … | head`) is not an error, as in ripgrep.
            if err.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
                    || c.downcast_ref::<serde_json::Error>()
                        .is_some_and(|e| e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("atomlab: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(ExitStatus::BadInput.code() as u8)
        }
    }
}
