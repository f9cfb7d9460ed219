//! `atomlab audit`: how binaries do their atomics. `atomlab_audit::batch`
//! does the work and makes the records in one call; this module maps the
//! arguments, fetches `--apt`'s packages, prints the tables from the
//! records (the same function `atomlab show` uses for a saved audit) and
//! picks the exit code.
//! The tables are atomlab-report's `audit_view`.

use std::path::PathBuf;

use atomlab_audit::apt::AptError;
use atomlab_audit::batch::{self, Batch};
use atomlab_audit::{AuditError, Requirement};
use atomlab_core::{ExitStatus, Machine, Report};

use super::CommandOutput;

/// `--require` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RequireArg {
    /// Inline LSE only: no outline calls and no LL/SC loops (ARMv8.1+ builds).
    Lse,
    /// Outline atomics only: no inline LSE (SIGILL on ARMv8.0) and no inline LL/SC.
    Outline,
    /// No inline LL/SC loops (LSE inline or through outline helpers).
    NoLlsc,
}

impl From<RequireArg> for Requirement {
    fn from(r: RequireArg) -> Requirement {
        match r {
            RequireArg::Lse => Requirement::Lse,
            RequireArg::Outline => Requirement::Outline,
            RequireArg::NoLlsc => Requirement::NoLlsc,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    /// ELF files, directories (searched recursively) and .deb packages.
    #[arg(required_unless_present = "apt", value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Debian packages to fetch by name with `apt-get download` (for
    /// --apt-arch, into --apt-cache) and audit, after any PATHs; apt's
    /// state stays in the cache, so neither root nor
    /// `dpkg --add-architecture` is needed. Comma-separated, or
    /// space-separated as apt-get takes them.
    #[arg(long, value_name = "PKG", num_args = 1.., value_delimiter = ',')]
    pub apt: Vec<String>,
    /// The architecture --apt fetches.
    #[arg(long, value_name = "ARCH", default_value = "arm64")]
    pub apt_arch: String,
    /// Where --apt keeps package lists and packages (default:
    /// $XDG_CACHE_HOME/atomlab/apt-ARCH, or ~/.cache/atomlab/apt-ARCH).
    #[arg(long, value_name = "DIR")]
    pub apt_cache: Option<PathBuf>,
    /// List the top N functions by atomic count (10 without a value), per
    /// ELF file.
    #[arg(long, value_name = "N", num_args = 0..=1, require_equals = true, default_missing_value = "10")]
    pub by_function: Option<usize>,
    /// A row per ELF file, also over packages (which get a row per package
    /// without it).
    #[arg(long)]
    pub by_file: bool,
    /// Exit 1 unless every aarch64 binary complies (a CI gate).
    #[arg(long, value_enum)]
    pub require: Option<RequireArg>,
    /// With --apt: a name apt cannot fetch is a line on stderr, not a
    /// failure (without it, exit 1: a typo in a CI list must not pass).
    #[arg(long)]
    pub allow_missing: bool,
}

pub fn run(mut args: AuditArgs) -> anyhow::Result<CommandOutput> {
    let missed = fetch_apt(&mut args)?;
    let options = batch::Options {
        require: args.require.map(Into::into),
        by_function: args.by_function,
        by_file: args.by_file,
        ..batch::Options::default()
    };
    let missing: Vec<String> = missed.iter().map(|e| e.path().to_string()).collect();
    let mut reporter = crate::progress::Reporter::new();
    let b = batch::audit(&args.paths, missed, &options, &mut |e| reporter.event(e));
    drop(reporter);
    let mut out = finish(b, options.require)?;
    if !missing.is_empty() && !args.allow_missing && out.status == ExitStatus::Ok {
        eprintln!(
            "atomlab: audit: {} of the {} --apt names could not be fetched ({}): exit 1; --allow-missing accepts that",
            missing.len(),
            args.apt.len(),
            missing.join(", ")
        );
        out.status = ExitStatus::VerdictFailed;
    }
    Ok(out)
}

/// The report and exit status of `b`; its tables are printed from the
/// report's records, as `atomlab show` prints them.
fn finish(b: Batch, require: Option<Requirement>) -> anyhow::Result<CommandOutput> {
    let passed_over = (b.skipped_non_elf > 0).then(|| {
        let note = format!(
            "passed over {} non-ELF files in directories and packages",
            b.skipped_non_elf
        );
        eprintln!("atomlab: audit: {note}");
        note
    });
    let links = links_note(&b.skipped_links);
    if let Some(note) = &links {
        eprintln!("atomlab: audit: {note}");
    }
    let failed = b.failed();
    let status = if b.by_package && b.audited_packages() == 0 {
        ExitStatus::BadInput
    } else if b.audits.is_empty() {
        if b.errors.is_empty() {
            eprintln!("atomlab: audit: nothing to audit");
        }
        ExitStatus::BadInput
    } else if failed > 0 {
        if let Some(r) = require {
            // A CI gate says what failed, file by file, with the reason.
            let failing: Vec<String> = b
                .audits
                .iter()
                .zip(&b.checks)
                .filter_map(|(a, c)| {
                    let c = c.as_ref().filter(|c| c.met == Some(false))?;
                    Some(match &c.reason {
                        Some(why) => format!("{} ({why})", a.path),
                        None => a.path.clone(),
                    })
                })
                .collect();
            const SHOWN: usize = 20;
            eprintln!(
                "atomlab: audit: {failed} of {} binaries do not meet --require {}:",
                b.audits.len(),
                r.name()
            );
            for f in failing.iter().take(SHOWN) {
                eprintln!("  {f}");
            }
            if failing.len() > SHOWN {
                eprintln!(
                    "  … and {} more (--json lists every one)",
                    failing.len() - SHOWN
                );
            }
        }
        ExitStatus::VerdictFailed
    } else {
        ExitStatus::Ok
    };
    let errors = b.input_errors();
    // Packages given but none audited: no record, nothing saved, and the
    // summary line still says so.
    let none_of = (b.by_package && b.records.is_empty()).then(|| b.packages.map_or(0, |p| p.len()));
    let mut report = Report::new("audit", Machine::detect(), b.records);
    report.errors = errors;
    report.notes.extend(passed_over);
    report.notes.extend(links);
    Ok(CommandOutput {
        report,
        status,
        people: Box::new(move |report| match none_of {
            Some(given) => Ok(atomlab_report::kinds::audit::view::write_packages(
                &mut std::io::stdout().lock(),
                &[],
                given,
            )?),
            None => crate::render::show(report),
        }),
    })
}

/// The symbolic links a directory walk passed over, in one note: how
/// many, and the first few with why (the rest are of the same kinds).
fn links_note(links: &[atomlab_audit::input::SkippedLink]) -> Option<String> {
    const NAMED: usize = 3;
    if links.is_empty() {
        return None;
    }
    let named: Vec<String> = links
        .iter()
        .take(NAMED)
        .map(|l| format!("{} ({})", l.path, l.why))
        .collect();
    let more = match links.len().saturating_sub(NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    Some(format!(
        "passed over {} symbolic link(s) in directories: {}{more}",
        links.len(),
        named.join(", ")
    ))
}

/// Fetches `--apt`'s packages and adds them to the paths; the packages apt
/// could not give, as errors (a line each; the rest goes on).
fn fetch_apt(args: &mut AuditArgs) -> anyhow::Result<Vec<AuditError>> {
    if args.apt.is_empty() {
        return Ok(Vec::new());
    }
    let cache = match &args.apt_cache {
        Some(c) => c.clone(),
        None => atomlab_audit::apt::default_cache(&args.apt_arch).ok_or_else(|| {
            anyhow::anyhow!(
                "--apt: no HOME or XDG_CACHE_HOME to keep packages in; give --apt-cache DIR"
            )
        })?,
    };
    let req = atomlab_audit::apt::AptRequest {
        packages: args.apt.clone(),
        arch: args.apt_arch.clone(),
        cache: cache.clone(),
        apt_get: PathBuf::from("apt-get"),
    };
    eprintln!(
        "atomlab: audit: fetching {} {} packages with apt-get into {}",
        req.packages.len(),
        req.arch,
        cache.display()
    );
    // On a terminal: a bar of packages fetched (apt starting each
    // download) of those apt will give, with an ETA.
    let mut reporter = crate::progress::Reporter::new();
    let got = atomlab_audit::apt::fetch_with(&req, &mut |e| reporter.event(e));
    drop(reporter);
    let got = got.map_err(|e| match e {
        // These begin with their option (`--apt 'NAME': …`,
        // `--apt-arch 'ARCH': …`): named once, not twice.
        AptError::BadName { .. } | AptError::BadArch { .. } => anyhow::Error::new(e),
        e => anyhow::anyhow!("--apt: {e}"),
    })?;
    args.paths.extend(got.debs);
    Ok(got
        .missed
        .into_iter()
        .map(atomlab_audit::apt::AptMiss::into_error)
        .collect())
}
