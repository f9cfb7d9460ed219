//! `atomlab`: the command-line front end. It parses, dispatches to the
//! capability crates and renders; the work lives in those crates.

mod args;
mod cli;
mod cmd;
mod man;
mod progress;
mod render;

use std::process::ExitCode;

use atomlab_core::ExitStatus;
use clap::FromArgMatches;

/// The stack atomlab's work runs on, whatever `ulimit -s` gave the main
/// thread (64 KiB did not hold clap's derived parsers of a debug build,
/// nor the models' judges): twice the usual 8 MiB main stack, address
/// space only until used.
const WORK_STACK: usize = 16 << 20;

fn main() -> ExitCode {
    tune_allocator();
    atomlab_thread::on_stack_meanwhile(WORK_STACK, work, progress::watch)
}

/// glibc's allocator, set for a program that builds large short-lived
/// structures (verify's and check's runs of each thread, rebuilt each round
/// of the value search): the work thread's arena grows its heap 64 MiB at a
/// time and keeps what is freed, instead of the default 128 KiB steps, each
/// an `mprotect(2)`, and a trim back to the system whenever the top of the
/// heap is free. Measured (`perf record`, the 3-thread seqlock over a ticket
/// lock, 30 MB of runs per round): 40 % of the command's time went to
/// `sysmalloc`'s mprotect calls and the page faults of memory given back
/// and taken again; address space costs nothing until touched, and the
/// peak resident size is unchanged. Measured on x86-64 only, and only set
/// there: the aarch64 and riscv64 builds are tested under qemu-user, where
/// this could not be tried (on the test machine qemu-user's threads stopped
/// starting at all, whatever the program), so they keep glibc's defaults.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
    // SAFETY: mallopt only sets the allocator's parameters; called before
    // any other thread exists.
    unsafe {
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

/// Everything atomlab does, from reading its arguments to its exit code.
fn work() -> ExitCode {
    // A child started to load a plugin apart (its constructors may crash,
    // exit or hang): it answers and exits here.
    atomlab_bench::plugin::probe_answer::answer_if_asked();
    quiet_on_closed_pipe();
    let cli =
        cli::Cli::from_arg_matches(&cli::command().get_matches()).unwrap_or_else(|e| e.exit());
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
            // An error may quote what the user or a file gave (a name, a
            // path): its control characters are shown, never obeyed.
            eprintln!("atomlab: {}", visible(&err.to_string()));
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {}", visible(&cause.to_string()));
            }
            ExitCode::from(ExitStatus::BadInput.code() as u8)
        }
    }
}

/// `message` with the control characters of each line made visible
/// (`atomlab_core::text::shown`), its line breaks kept.
fn visible(message: &str) -> String {
    message
        .split('\n')
        .map(|l| atomlab_core::text::shown(l, 4000))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A closed pipe on stdout (`atomlab … | head`, `… | true`) ends every
/// command quietly with exit 0, as in ripgrep: the one place for it. Rust
/// ignores SIGPIPE (so that load's sockets and the PostgreSQL client see
/// EPIPE as an error, not a kill), and `println!` and libraries' writers
/// (clap_complete, clap_mangen) then panic on the EPIPE error; a panic that
/// carries it exits here instead of printing a backtrace and exiting 101.
/// Errors returned up to `main` are sorted in `main` itself.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        // io::Error's Display (`Broken pipe (os error 32)`) or Debug
        // (`kind: BrokenPipe`), as `println!` and `expect` format it.
        if payload.contains("kind: BrokenPipe") || payload.contains("Broken pipe (os error") {
            std::process::exit(0);
        }
        default(info);
    }));
}
