//! `atomlab audit`: how binaries do their atomics. `atomlab_audit::batch`
//! does the work and makes the records in one call; this module maps the
//! arguments, fetches `--apt`'s packages, prints the tables from the
//! records (the same function `atomlab show` uses for a saved audit) and
//! picks the exit code.
//!
//! Over `.deb` packages the answer is one row per package (issue 27): its
//! worst file's verdict, how many ELF files it has and the file that decided
//! it, then what needs attention, in the order of the command line among
//! equals.

use std::io::IsTerminal;
use std::path::PathBuf;

use atomlab_audit::batch::{self, Batch, FileView, FunctionView, PackageRow, Shown, Step};
use atomlab_audit::{AuditError, Class, PackageVerdict, Progress, Requirement};
use atomlab_core::{ExitStatus, Machine, Record, Report};

use super::Outcome;
use crate::render;

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
}

pub fn run(mut args: AuditArgs) -> anyhow::Result<Outcome> {
    let missed = fetch_apt(&mut args)?;
    let options = batch::Options {
        require: args.require.map(Into::into),
        by_function: args.by_function,
        by_file: args.by_file,
        ..batch::Options::default()
    };
    let mut display = Display::new();
    let b = batch::audit(&args.paths, missed, &options, &mut |s| display.step(s));
    display.finish();
    finish(b, options.require)
}

/// Progress on stderr while the batch runs: a bar over packages, or one
/// line naming the file being read, when a person watches.
struct Display {
    tty: bool,
    packages: Option<crate::progress::Steps>,
    line_shown: bool,
}

impl Display {
    fn new() -> Display {
        Display {
            tty: std::io::stderr().is_terminal(),
            packages: None,
            line_shown: false,
        }
    }

    fn step(&mut self, step: Step<'_>) {
        match step {
            Step::Packages(n) => self.packages = Some(crate::progress::Steps::new(n, "packages")),
            Step::PackageDone(name) => {
                if let Some(p) = &mut self.packages {
                    p.done(name);
                }
            }
            Step::File(p) if self.tty => {
                let line = match p {
                    Progress::Reading(path) => format!("reading {}", path.display()),
                    Progress::Auditing { path, index, total } => {
                        format!("auditing {index}/{total} {path}")
                    }
                };
                let line: String = line.chars().take(100).collect();
                eprint!("\r\x1b[2Katomlab: {line}");
                self.line_shown = true;
            }
            Step::File(_) => {}
        }
    }

    fn finish(&self) {
        if let Some(p) = &self.packages {
            p.finish();
        }
        if self.line_shown {
            eprint!("\r\x1b[2K");
        }
    }
}

/// The report and exit status of `b`; its tables are printed from the
/// report's records, as `atomlab show` prints them.
fn finish(b: Batch, require: Option<Requirement>) -> anyhow::Result<Outcome> {
    let passed_over = (b.skipped_non_elf > 0).then(|| {
        let note = format!(
            "passed over {} non-ELF files in directories and packages",
            b.skipped_non_elf
        );
        eprintln!("atomlab: audit: {note}");
        note
    });
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
            eprintln!(
                "atomlab: audit: {failed} of {} binaries do not meet --require {}",
                b.audits.len(),
                r.name()
            );
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
    Ok(Outcome {
        report,
        status,
        people: Box::new(move |report| match none_of {
            Some(given) => print_packages(&[], given),
            None => records_table(&report.records),
        }),
    })
}

/// Fetches `--apt`'s packages and adds them to the paths; the packages apt
/// could not give, as errors (a line each; the rest goes on).
fn fetch_apt(args: &mut AuditArgs) -> anyhow::Result<Vec<AuditError>> {
    if args.apt.is_empty() {
        return Ok(Vec::new());
    }
    let cache = match &args.apt_cache {
        Some(c) => c.clone(),
        None => std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".cache"))
            })
            .map(|c| c.join("atomlab").join(format!("apt-{}", args.apt_arch)))
            .ok_or_else(|| {
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
    let got = atomlab_audit::apt::fetch(&req).map_err(|e| anyhow::anyhow!("--apt: {e}"))?;
    args.paths.extend(got.debs);
    Ok(got
        .missed
        .into_iter()
        .map(|m| AuditError::NotFetched {
            path: m.package,
            reason: m.reason,
        })
        .collect())
}

/// The per-package view: a row per package audited, worst first (the
/// command line's order among equals), then what needs attention.
fn print_packages(rows: &[PackageRow], given: usize) -> anyhow::Result<()> {
    let mut order: Vec<&PackageRow> = rows.iter().filter(|r| r.verdict.is_some()).collect();
    // Stable: equals keep the command line's order.
    order.sort_by_key(|r| std::cmp::Reverse(r.verdict));
    let mut t = render::table();
    t.set_header(vec!["package", "verdict", "ELF files", "decided by"]);
    for r in &order {
        let v = r.verdict.map(PackageVerdict::words).unwrap_or("-");
        let decided = match (r.verdict, &r.deciding_file) {
            (Some(PackageVerdict::NoAtomics), _) | (_, None) => "-".to_string(),
            (_, Some(f)) => r.member(f).to_string(),
        };
        t.add_row(vec![
            r.name.clone(),
            v.to_string(),
            r.files.to_string(),
            decided,
        ]);
    }
    if !order.is_empty() {
        render::print(&t)?;
    }
    let counts: Vec<String> = PackageVerdict::WORST_FIRST
        .iter()
        .map(|v| {
            let n = order.iter().filter(|r| r.verdict == Some(*v)).count();
            format!("{n} {}", v.words())
        })
        .collect();
    let unaudited = given.saturating_sub(order.len());
    println!(
        "\n{} of {} audited: {}{}",
        order.len(),
        given.max(order.len()),
        counts.join(", "),
        if unaudited > 0 {
            format!("; {unaudited} not audited (why: on stderr)")
        } else {
            String::new()
        }
    );
    let crash: Vec<String> = order
        .iter()
        .filter(|r| r.verdict == Some(PackageVerdict::NeedsArmv81))
        .map(|r| {
            let f = r.deciding_file.as_deref().unwrap_or("?");
            format!("{} ({})", r.name, r.member(f))
        })
        .collect();
    let llsc: Vec<String> = order
        .iter()
        .filter(|r| !r.llsc_only_files.is_empty())
        .map(|r| {
            let files: Vec<&str> = r.llsc_only_files.iter().map(|f| r.member(f)).collect();
            format!("{} ({})", r.name, files.join(", "))
        })
        .collect();
    if crash.is_empty() && llsc.is_empty() {
        println!("needs attention: none (no unconditional LSE, no LL/SC-only file)");
        return Ok(());
    }
    println!("needs attention:");
    if !crash.is_empty() {
        println!(
            "  SIGILL on ARMv8.0 (LSE behind no CPU-feature test; build for armv8-a with -moutline-atomics): {}",
            crash.join("; ")
        );
    }
    if !llsc.is_empty() {
        println!(
            "  LL/SC only, no LSE on ARMv8.1+ (a rebuild with -moutline-atomics fixes it): {}",
            llsc.join("; ")
        );
    }
    Ok(())
}

/// An audit's tables from its records alone: what `atomlab audit` prints,
/// and what `atomlab show` prints of a saved audit run.
pub fn records_table(records: &[Record]) -> anyhow::Result<()> {
    match batch::shown(records)? {
        Shown::Packages { rows, given } => print_packages(&rows, given),
        Shown::One(f) => print_one(&f),
        Shown::Files(files) => print_many(&files),
        Shown::Nothing => Ok(()),
    }
}

fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes.div_ceil(1024))
}

fn print_one(a: &FileView) -> anyhow::Result<()> {
    let mut t = render::table();
    t.set_header(vec![a.path.as_str(), ""]);
    t.add_row(vec!["verdict".to_string(), a.verdict.words.clone()]);
    t.add_row(vec![
        "arch".to_string(),
        format!(
            "{}, {} of code, {}",
            a.arch,
            kib(a.code_bytes),
            if a.has_symtab { "symbols" } else { "stripped" }
        ),
    ]);
    if let Some(c) = &a.require {
        let v = format!("--require {}: {}", c.requirement, c.words());
        t.add_row(vec!["require".to_string(), v]);
    }
    render::print(&t)?;

    let mut t = render::table();
    t.set_header(vec!["class", "count", "inside helpers"]);
    for class in Class::ALL {
        let (n, h) = (a.count(class), a.in_helpers(class));
        if n + h > 0 {
            t.add_row(vec![class.name().to_string(), n.to_string(), h.to_string()]);
        }
    }
    if !a.by_class.is_empty() || !a.in_helpers.is_empty() {
        println!();
        render::print(&t)?;
    }

    if !a.by_mnemonic.is_empty() {
        let mut t = render::table();
        t.set_header(vec!["instruction", "count"]);
        for (m, n) in &a.by_mnemonic {
            t.add_row(vec![m.clone(), n.to_string()]);
        }
        println!();
        render::print(&t)?;
    }
    if !a.outline_calls.is_empty() {
        let mut t = render::table();
        t.set_header(vec!["outline helper called", "calls"]);
        for (m, n) in &a.outline_calls {
            t.add_row(vec![m.clone(), n.to_string()]);
        }
        println!();
        render::print(&t)?;
    }
    if !a.functions.is_empty() {
        println!();
        print_functions(a)?;
    }
    for n in &a.notes {
        println!("note: {n}");
    }
    Ok(())
}

fn print_functions(a: &FileView) -> anyhow::Result<()> {
    let mut t = render::table();
    t.set_header(vec![
        "function",
        "address",
        "atomics",
        "lse",
        "lse dispatch",
        "llsc",
        "outline",
        "barrier",
        "acq/rel",
    ]);
    for f in &a.functions {
        let c = |k: Class| f.count(k);
        t.add_row(vec![
            f.name.clone(),
            format!("{:#x}", f.addr),
            f.atomics.to_string(),
            c(Class::Lse).to_string(),
            lse_dispatch(f),
            c(Class::LlscLoop).to_string(),
            c(Class::OutlineCall).to_string(),
            c(Class::Barrier).to_string(),
            (c(Class::AcquireLoad) + c(Class::ReleaseStore) + c(Class::RcpcLoad)).to_string(),
        ]);
    }
    render::print(&t)
}

/// A function's LSE instructions: what chooses them at run time (the
/// evidence), or how many have no CPU-feature test before them.
fn lse_dispatch(f: &FunctionView) -> String {
    let mut parts: Vec<String> = f
        .lse_evidence
        .iter()
        .map(|e| format!("run time ({e})"))
        .collect();
    if f.lse_unconditional > 0 {
        parts.push(format!(
            "{} unconditional (SIGILL on ARMv8.0)",
            f.lse_unconditional
        ));
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

fn print_many(audits: &[FileView]) -> anyhow::Result<()> {
    let mut t = render::table();
    let mut header = vec![
        "file",
        "arch",
        "verdict",
        "lse",
        "llsc loops",
        "outline calls",
        "locked/amo",
    ];
    if audits.iter().any(|a| a.require.is_some()) {
        header.push("require");
    }
    t.set_header(header);
    for a in audits {
        let mut row = vec![
            a.path.clone(),
            a.arch.clone(),
            a.verdict.words.clone(),
            a.count(Class::Lse).to_string(),
            a.count(Class::LlscLoop).to_string(),
            a.count(Class::OutlineCall).to_string(),
            (a.count(Class::LockedRmw)
                + a.count(Class::XchgMem)
                + a.count(Class::WideCas)
                + a.count(Class::Amo))
            .to_string(),
        ];
        if let Some(c) = &a.require {
            row.push(c.words());
        }
        t.add_row(row);
    }
    render::print(&t)?;
    for a in audits.iter().filter(|a| !a.functions.is_empty()) {
        println!("\n{}", a.path);
        print_functions(a)?;
    }
    Ok(())
}
