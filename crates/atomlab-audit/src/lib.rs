//! atomlab-audit: how a compiled binary does its atomics.
//!
//! Reads ELF executables and shared objects for aarch64, x86-64 and riscv64
//! (and the ELF files inside Debian packages and directories) and reports
//! each atomic or ordering instruction by class: on aarch64, LSE atomics with
//! their ordering and size, LL/SC exclusives grouped into retry loops, calls
//! to libgcc's outline-atomics helpers (found by symbol, or by their shape
//! in stripped binaries), barriers, acquire/release and RCpc accesses; on
//! x86-64, lock-prefixed instructions, XCHG with memory, fences and
//! CMPXCHG8B/16B; on riscv64, LR/SC and AMOs with aq/rl, FENCE and FENCE.TSO.
//! Then it gives a verdict in plain words ("outline atomics: LSE chosen at
//! run time (ARMv8.0-safe)") and tallies per function. An inline LSE
//! instruction behind a CPU-feature test (a branch on `getauxval(AT_HWCAP)`
//! or a loaded flag with an LL/SC loop on the other arm, as Go does; an
//! ifunc resolver's choice; or code nothing reaches) is "chosen at run time"
//! with its evidence named (`dispatch.rs`); only one behind no test is
//! "needs ARMv8.1 (SIGILL on ARMv8.0)".
//!
//! Crates: `object` reads ELF (it returns errors rather than
//! panicking on bad input, which tests/audit_fuzz.rs in the CLI crate checks), `gimli` reads `.eh_frame` for
//! function starts in stripped binaries, `yaxpeax-arm` decodes A64 (pure
//! Rust, no C toolchain, covers LSE, RCpc and LOR), `iced-x86` decodes x86
//! with only its decoder compiled, `riscv-decode` decodes RV64 base and A.
//! `tar`, `lzma-rust2`, `ruzstd` and `flate2` (miniz_oxide backend) unpack
//! `.deb` data archives in pure Rust, streamed (input.rs: the `ar` layer is
//! read there, as deb(5) describes it). `lzma-rust2` replaced `lzma-rs`,
//! whose LZMA2 decoder held a whole xz block (a whole single-threaded
//! `.tar.xz`) in memory before handing any of it on (issue 33).
//!
//! # Limitations
//! - The scan is a linear sweep over executable sections, like objdump's, so
//!   `by_mnemonic` agrees with objdump. Data embedded in `.text` decodes as
//!   instructions too: sites outside every `.eh_frame` FDE and function
//!   symbol (an unsized one reaches to the next start) are counted apart
//!   (`outside_functions`) and kept out of the verdict; in a stripped binary
//!   that also drops atomics in hand-written assembly that has no CFI.
//! - A helper is recognised by shape only in libgcc's form
//!   (`adrp; ldrb; cbz` then an LSE instruction and an LL/SC fallback).
//! - In a stripped binary, a function with no FDE, no `.dynsym` entry and no
//!   Go `.gopclntab` entry (Go 1.18+ layout) is merged into the function
//!   before it in `--by-function`.
#![warn(unreachable_pub)]
#![deny(missing_docs)]

mod a64_words;
mod aarch64;
pub mod apt;
pub mod batch;
mod dispatch;
mod elf;
mod error;
mod found;
mod function;
pub mod input;
mod model;
mod package;
mod plugin_file;
mod riscv64;
mod scan;
mod x86_64;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

pub use error::AuditError;
pub use function::{functions_at, FunctionAtomics, FunctionsAt};
pub use model::{
    Arch, BinaryAudit, BinaryVerdict, BinaryVerdictKind, Class, Evidence, FunctionTally, Helper,
    LseDispatch, Order, Requirement, Site,
};
pub use package::{PackageAudit, PackageVerdict};
pub use plugin_file::{PluginFile, Pointer};

/// Audits one ELF file held in memory. `path` names it in errors and output.
pub fn audit_bytes(path: &str, data: &[u8]) -> Result<BinaryAudit, AuditError> {
    let image = elf::Image::parse(path, data)?;
    let scan = match image.arch {
        Arch::Aarch64 => aarch64::scan(&image),
        Arch::X86_64 => x86_64::scan(&image),
        Arch::Riscv64 => riscv64::scan(&image),
    };
    Ok(scan::finish(path, &image, scan))
}

/// The result of auditing several paths.
#[derive(Debug, Default)]
pub struct AuditRun {
    /// Binaries audited, in the order found.
    pub audits: Vec<BinaryAudit>,
    /// Files that could not be audited, each with its reason.
    pub errors: Vec<AuditError>,
    /// Non-ELF files passed over inside directories and packages.
    pub skipped_non_elf: u64,
    /// Symbolic links passed over inside directories.
    pub skipped_links: Vec<input::SkippedLink>,
}

/// Where a long audit has got to: a [`Status`](Event::Status) line per
/// path read and per file audited ([`atomlab_core::progress`]).
pub use atomlab_core::progress::Event;

/// Audits files, directories (recursively) and `.deb` packages.
pub fn audit_paths(paths: &[PathBuf]) -> AuditRun {
    audit_paths_with(paths, &mut |_| {})
}

/// [`audit_paths`], telling `progress` what it is doing; a directory's
/// files are audited on a worker per CPU ([`audit_paths_on`]).
pub fn audit_paths_with(
    paths: &[PathBuf],
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> AuditRun {
    audit_paths_on(paths, batch::Options::default().jobs, progress)
}

/// [`audit_paths_with`] on `jobs` workers: the files under a directory are
/// read and audited in parallel, each worker holding one file at a time,
/// and the audits and errors come out in the order of the walk, as one
/// worker would give them (issue 27: a folder of thousands of ELF files
/// had waited on one CPU, with every file held in memory at once).
pub fn audit_paths_on(
    paths: &[PathBuf],
    jobs: usize,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> AuditRun {
    let mut run = AuditRun::default();
    for path in paths {
        progress(Event::Status(&format!("reading {}", path.display())));
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            audit_dir(path, jobs, progress, &mut run);
            continue;
        }
        // One ELF file, or a package's, audited as it is read.
        let mut expanded = input::Expanded::default();
        let mut results = Vec::new();
        input::expand_each(path, &mut expanded, &mut |path, data| {
            let n = results.len() + 1;
            progress(Event::Status(&format!("auditing {n}/{n} {path}")));
            results.push(audit_bytes(path, data));
        });
        run.errors.append(&mut expanded.errors);
        run.skipped_non_elf += expanded.skipped_non_elf;
        run.skipped_links.append(&mut expanded.skipped_links);
        for r in results {
            match r {
                Ok(a) => run.audits.push(a),
                Err(e) => run.errors.push(e),
            }
        }
    }
    run
}

/// One file of a directory, read and audited by a worker.
#[derive(Default)]
struct DirFile {
    /// What could not be read (a `.deb` found in the walk may give several).
    read_errors: Vec<AuditError>,
    skipped_non_elf: u64,
    audits: Vec<Result<BinaryAudit, AuditError>>,
}

/// Audits the files under `dir` on `jobs` workers into `run`, in the order
/// `input::expand` gives: the listing's errors, the read errors, then the
/// audits and their errors file by file.
fn audit_dir(
    dir: &std::path::Path,
    jobs: usize,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
    run: &mut AuditRun,
) {
    let mut listed = input::Expanded::default();
    let mut units = Vec::new();
    input::list_dir(dir, &mut units, &mut listed);
    run.errors.append(&mut listed.errors);
    run.skipped_non_elf += listed.skipped_non_elf;
    run.skipped_links.append(&mut listed.skipped_links);
    // Largest first, so that no worker is left with a big file at the end.
    let mut order: Vec<(u64, usize)> = units
        .iter()
        .enumerate()
        .map(|(i, u)| (std::fs::metadata(u).map_or(0, |m| m.len()), i))
        .collect();
    order.sort_unstable_by(|a, b| b.cmp(a));
    let results: Vec<Mutex<Option<DirFile>>> = units.iter().map(|_| Mutex::new(None)).collect();
    // ORDERING: the counter only hands out distinct indices; the results are
    // published by the Mutexes and the scope's join, so Relaxed suffices.
    let next = AtomicUsize::new(0);
    let total = units.len();
    let progress = Mutex::new(progress);
    let work = || {
        // Each worker reads every file into the same buffer.
        let mut buf = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(&(_, i)) = order.get(k) else { break };
            let mut read = input::Expanded::default();
            let mut audits = Vec::new();
            // The file itself, or each ELF file of a .deb found in the
            // walk, audited as it is read.
            input::read_listed_each(&units[i], &mut buf, &mut read, &mut |path, data| {
                if let Ok(mut p) = progress.lock() {
                    (*p)(Event::Status(&format!("auditing {}/{total} {path}", k + 1)));
                }
                audits.push(audit_bytes(path, data));
            });
            if let Ok(mut slot) = results[i].lock() {
                *slot = Some(DirFile {
                    read_errors: read.errors,
                    skipped_non_elf: read.skipped_non_elf,
                    audits,
                });
            }
        }
    };
    std::thread::scope(|s| {
        // The calling thread is one of the workers.
        for _ in 1..jobs.clamp(1, units.len().max(1)) {
            s.spawn(work);
        }
        work();
    });
    let mut files: Vec<DirFile> = results
        .into_iter()
        .map(|m| m.into_inner().ok().flatten().unwrap_or_default())
        .collect();
    for f in &mut files {
        run.errors.append(&mut f.read_errors);
        run.skipped_non_elf += f.skipped_non_elf;
    }
    if files.iter().all(|f| f.audits.is_empty()) {
        run.errors.push(AuditError::NoElfInDirectory {
            path: dir.display().to_string(),
        });
    }
    for f in files {
        for a in f.audits {
            match a {
                Ok(a) => run.audits.push(a),
                Err(e) => run.errors.push(e),
            }
        }
    }
}
