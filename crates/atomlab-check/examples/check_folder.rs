//! Checks a folder of litmus tests in parallel, each test with a deadline,
//! under every built-in model, and prints their records as JSON: what
//! `atomlab check --json DIR` does, from Rust, without the CLI.
//!
//! ```text
//! cargo run -p atomlab-check --example check_folder -- DIR [SECONDS]
//! ```
//!
//! The exit status is atomlab's: 0 every test judged, 1 a test timed out
//! or passed the checker's bound, 2 an input could not be used.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use atomlab_core::ExitStatus;

/// Judges the litmus tests under `dir` (subdirectories included), giving
/// up on a test after `timeout`, and writes the records as a JSON array
/// to `out`; the inputs that could not be used go to stderr.
pub fn check_folder(
    dir: &Path,
    timeout: Duration,
    out: &mut impl Write,
) -> Result<ExitStatus, Box<dyn std::error::Error>> {
    let opts = atomlab_check::Options {
        timeout: Some(timeout),
        ..Default::default()
    };
    let batch = atomlab_check::check(
        &[dir.display().to_string()],
        &opts,
        &mut atomlab_core::progress::silent,
    )?;
    serde_json::to_writer_pretty(&mut *out, &batch.records)?;
    writeln!(out)?;
    for e in &batch.errors {
        eprintln!("check_folder: {e}");
    }
    Ok(batch.status())
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(dir), seconds) = (args.next(), args.next()) else {
        eprintln!("usage: check_folder DIR [SECONDS]");
        return std::process::ExitCode::from(ExitStatus::BadInput.code() as u8);
    };
    let timeout = match seconds.as_deref().map(str::parse::<f64>) {
        None => Duration::from_secs(60),
        Some(Ok(s)) if s.is_finite() && s > 0.0 => Duration::from_secs_f64(s),
        Some(_) => {
            eprintln!("check_folder: SECONDS must be a positive number of seconds");
            return std::process::ExitCode::from(ExitStatus::BadInput.code() as u8);
        }
    };
    match check_folder(Path::new(&dir), timeout, &mut std::io::stdout().lock()) {
        Ok(status) => std::process::ExitCode::from(status.code() as u8),
        Err(e) => {
            eprintln!("check_folder: {e}");
            std::process::ExitCode::from(ExitStatus::BadInput.code() as u8)
        }
    }
}
