//! `atomlab audit`: how binaries do their atomics (atomlab-audit does the
//! work; this module parses, renders and picks the exit code).
//!
//! Over `.deb` packages the answer is one row per package (issue 27): its
//! worst file's verdict, how many ELF files it has and the file that decided
//! it, then what needs attention. The packages are audited in parallel, a
//! worker per CPU, and shown in the order of the command line.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use atomlab_audit::{
    AuditError, AuditRun, BinaryAudit, Class, FunctionTally, PackageAudit, PackageVerdict,
    Progress, Requirement,
};
use atomlab_core::{
    ExitStatus, InputError, Machine, Metric, Record, Report, Source, Unit, Verdict,
};
use serde::Serialize;

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
    /// `dpkg --add-architecture` is needed.
    #[arg(long, value_name = "PKG", num_args = 1..)]
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

/// A `--require` judgement of one binary. `met` is `None` where the
/// requirement does not apply (it is about aarch64's atomics; an x86-64 or
/// riscv64 binary neither meets nor breaks it).
#[derive(Serialize)]
struct RequireResult {
    requirement: &'static str,
    met: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

impl RequireResult {
    fn words(&self) -> String {
        match (self.met, &self.reason) {
            (None, _) => "not applicable (aarch64 only)".into(),
            (Some(true), _) => "met".into(),
            (Some(false), Some(r)) => format!("NOT met: {r}"),
            (Some(false), None) => "NOT met".into(),
        }
    }
}

/// One binary as a [`Record`]: counts by class are its metrics, the whole
/// audit (instructions, helpers, functions) its detail.
fn record(a: &BinaryAudit, check: Option<&RequireResult>) -> Record {
    let mut r = Record::new(
        "audit",
        "binary",
        &format!("{:?}", a.verdict.kind).to_lowercase(),
    );
    r.param("path", a.path.clone())
        .param("arch", a.arch.name())
        .param("code_bytes", a.code_bytes)
        .param("has_symtab", a.has_symtab);
    for class in Class::ALL {
        if let Some(&n) = a.by_class.get(&class) {
            // Counted from the disassembly, not sampled: one "run".
            r.metrics.push(Metric::new(
                class.name(),
                Unit::Count,
                Source::Derived,
                vec![n as f64],
            ));
        }
    }
    if let Some(c) = check {
        r.param("require", c.requirement);
        r.verdict = c
            .met
            .map(|met| if met { Verdict::Pass } else { Verdict::Fail });
    }
    r.notes.push(a.verdict.words.clone());
    r.notes.extend(a.notes.iter().cloned());
    r.detail = serde_json::to_value(a).ok().map(|mut v| {
        if let (Some(obj), Some(c)) = (v.as_object_mut(), check) {
            obj.insert(
                "require".into(),
                serde_json::to_value(c).unwrap_or_default(),
            );
        }
        v
    });
    r
}

pub fn run(mut args: AuditArgs) -> anyhow::Result<Outcome> {
    let missed = fetch_apt(&mut args)?;
    let (units, mut list_errors, list_skipped) = atomlab_audit::package::units(&args.paths);
    if !units
        .iter()
        .any(|u| atomlab_audit::input::looks_like_package(u))
    {
        // ELF files and directories of them: a row per file, as before.
        // (The listing's errors are found again by that walk.)
        let mut run = per_file(&args.paths);
        run.errors.extend(missed);
        return finish(args, run, None);
    }
    list_errors.extend(missed);
    let packages = audit_units(&units);
    let rows: Vec<PackageRow> = packages.iter().map(PackageRow::of).collect();
    let mut run = AuditRun {
        audits: Vec::new(),
        errors: list_errors,
        skipped_non_elf: list_skipped,
    };
    for p in packages {
        run.audits.extend(p.audits);
        run.errors.extend(p.errors);
        run.skipped_non_elf += p.skipped_non_elf;
    }
    finish(args, run, Some(rows))
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

/// Audits `units` (packages and ELF files) on a worker per CPU; the results
/// in the order of `units`, whatever order they end in.
fn audit_units(units: &[PathBuf]) -> Vec<PackageAudit> {
    let jobs = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 64);
    let results: Vec<Mutex<Option<PackageAudit>>> =
        units.iter().map(|_| Mutex::new(None)).collect();
    // ORDERING: the counter only hands out distinct indices; the results are
    // published by the Mutexes and the scope's join, so Relaxed suffices.
    let next = AtomicUsize::new(0);
    let steps = Mutex::new(crate::progress::Steps::new(units.len(), "packages"));
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(path) = units.get(i) else { break };
        let audit = atomlab_audit::package::audit_unit(path);
        if let Ok(mut s) = steps.lock() {
            s.done(&audit.name);
        }
        if let Ok(mut slot) = results[i].lock() {
            *slot = Some(audit);
        }
    };
    std::thread::scope(|s| {
        // The calling thread is one of the workers.
        for _ in 1..jobs.min(units.len().max(1)) {
            s.spawn(work);
        }
        work();
    });
    if let Ok(s) = steps.lock() {
        s.finish();
    }
    results
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

/// Audits `paths` file by file on this thread, with a one-line progress
/// display on stderr when a person watches.
fn per_file(paths: &[PathBuf]) -> AuditRun {
    let tty = std::io::stderr().is_terminal();
    let mut shown = false;
    let mut progress = |p: Progress<'_>| {
        if !tty {
            return;
        }
        let line = match p {
            Progress::Reading(path) => format!("reading {}", path.display()),
            Progress::Auditing { path, index, total } => {
                format!("auditing {index}/{total} {path}")
            }
        };
        let line: String = line.chars().take(100).collect();
        eprint!("\r\x1b[2Katomlab: {line}");
        shown = true;
    };
    let run: AuditRun = atomlab_audit::audit_paths_with(paths, &mut progress);
    if shown {
        eprint!("\r\x1b[2K");
    }
    run
}

/// What the per-package view and record need of a [`PackageAudit`] (its
/// files' audits move on to the per-file records).
struct PackageRow {
    name: String,
    path: String,
    verdict: Option<PackageVerdict>,
    files: usize,
    deciding_file: Option<String>,
    llsc_only_files: Vec<String>,
    /// Why it has no verdict (one line), or which of its files were left out.
    error: Option<String>,
}

impl PackageRow {
    fn of(p: &PackageAudit) -> PackageRow {
        PackageRow {
            name: p.name.clone(),
            path: p.path.clone(),
            verdict: p.verdict,
            files: p.audits.len(),
            deciding_file: p.deciding_file.clone(),
            llsc_only_files: p.llsc_only_files().map(|a| a.path.clone()).collect(),
            error: p.why_no_verdict().or_else(|| p.partial_errors()),
        }
    }

    /// Whether `path` is this package or one of its files.
    fn owns(&self, path: &str) -> bool {
        path.strip_prefix(self.path.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('!'))
    }

    /// A file of this package by its path inside it.
    fn member<'a>(&self, file: &'a str) -> &'a str {
        file.strip_prefix(self.path.as_str())
            .and_then(|f| f.strip_prefix('!'))
            .unwrap_or(file)
    }

    /// The package as a record: scenario = its name, its verdict the
    /// observation (what `compare` matches across two snapshots of an
    /// archive), its file count a metric, the deciding file its detail.
    fn record(&self) -> Option<Record> {
        let v = self.verdict?;
        let mut r = Record::new("audit", &self.name, "package");
        r.param("path", self.path.clone())
            .param("observation", v.name());
        // Counted, not sampled: one "run".
        r.metrics.push(Metric::new(
            "elf_files",
            Unit::Count,
            Source::Derived,
            vec![self.files as f64],
        ));
        r.notes.push(v.words().to_string());
        if let Some(f) = &self.deciding_file {
            r.notes.push(format!("decided by {}", self.member(f)));
        }
        r.detail = Some(serde_json::json!({
            "path": self.path,
            "package": self.name,
            "verdict": { "kind": v.name(), "words": v.words() },
            "elf_files": self.files,
            "deciding_file": self.deciding_file,
            "llsc_only_files": self.llsc_only_files,
        }));
        Some(r)
    }
}

/// Renders, records and judges `run`; `packages` when the paths held
/// packages (then a row per package unless `--by-file` or `--by-function`).
fn finish(
    args: AuditArgs,
    mut run: AuditRun,
    packages: Option<Vec<PackageRow>>,
) -> anyhow::Result<Outcome> {
    let top = args.by_function.unwrap_or(0);
    for a in &mut run.audits {
        a.functions.truncate(top);
    }
    let require: Option<Requirement> = args.require.map(Into::into);
    let checks: Vec<Option<RequireResult>> = run
        .audits
        .iter()
        .map(|a| {
            require.map(|r| match r.check(a) {
                _ if a.arch != atomlab_audit::Arch::Aarch64 => RequireResult {
                    requirement: r.name(),
                    met: None,
                    reason: None,
                },
                Ok(()) => RequireResult {
                    requirement: r.name(),
                    met: Some(true),
                    reason: None,
                },
                Err(reason) => RequireResult {
                    requirement: r.name(),
                    met: Some(false),
                    reason: Some(reason),
                },
            })
        })
        .collect();
    let failed = checks
        .iter()
        .flatten()
        .filter(|c| c.met == Some(false))
        .count();

    let passed_over = (run.skipped_non_elf > 0).then(|| {
        let note = format!(
            "passed over {} non-ELF files in directories and packages",
            run.skipped_non_elf
        );
        eprintln!("atomlab: audit: {note}");
        note
    });

    // Over packages, a record per package first (what `compare` of two
    // archive snapshots matches), then one per file as without packages.
    let by_package = packages.is_some() && !args.by_file && args.by_function.is_none();
    let records = packages
        .iter()
        .flatten()
        .filter_map(PackageRow::record)
        .chain(
            run.audits
                .iter()
                .zip(&checks)
                .map(|(a, c)| record(a, c.as_ref())),
        )
        .collect();
    let mut report = Report::new("audit", Machine::detect(), records);
    report.errors = match (&packages, by_package) {
        // One line per package that could not be audited (whole or in
        // part), after the paths that could not be listed.
        (Some(rows), true) => run
            .errors
            .iter()
            .filter(|e| !rows.iter().any(|r| r.owns(e.path())))
            .map(|e| input_error(e.path(), &e.to_string()))
            .chain(
                rows.iter()
                    .filter_map(|r| r.error.as_ref().map(|line| input_error(&r.path, line))),
            )
            .collect(),
        _ => run
            .errors
            .iter()
            .map(|e| InputError {
                input: e.path().to_string(),
                line: None,
                column: None,
                message: e.to_string(),
            })
            .collect(),
    };
    report.notes.extend(passed_over);
    let audited_packages = packages
        .iter()
        .flatten()
        .filter(|r| r.verdict.is_some())
        .count();
    let status = if by_package && audited_packages == 0 {
        ExitStatus::BadInput
    } else if run.audits.is_empty() {
        if run.errors.is_empty() {
            eprintln!("atomlab: audit: nothing to audit");
        }
        ExitStatus::BadInput
    } else if failed > 0 {
        if let Some(r) = require {
            eprintln!(
                "atomlab: audit: {failed} of {} binaries do not meet --require {}",
                run.audits.len(),
                r.name()
            );
        }
        ExitStatus::VerdictFailed
    } else {
        ExitStatus::Ok
    };
    let audits = run.audits;
    Ok(Outcome {
        report,
        status,
        people: Box::new(move |_| {
            if let (true, Some(rows)) = (by_package, &packages) {
                print_packages(rows)
            } else if audits.len() == 1 {
                print_one(&audits[0], checks[0].as_ref())
            } else if !audits.is_empty() {
                print_many(&audits, &checks)
            } else {
                Ok(())
            }
        }),
    })
}

/// An error line about `input` (`line` starts with it, as the audit's
/// errors do; the dispatcher prints `input: message`).
fn input_error(input: &str, line: &str) -> InputError {
    InputError {
        input: input.to_string(),
        line: None,
        column: None,
        message: line
            .strip_prefix(input)
            .and_then(|l| l.strip_prefix(": "))
            .unwrap_or(line)
            .to_string(),
    }
}

/// The per-package view: a row per package audited, worst first (the
/// command line's order among equals), then what needs attention.
fn print_packages(rows: &[PackageRow]) -> anyhow::Result<()> {
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
    let unaudited = rows.len() - order.len();
    println!(
        "\n{} of {} audited: {}{}",
        order.len(),
        rows.len(),
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

/// A saved audit (`atomlab show`): a row per binary from its record.
pub fn records_table(records: &[Record]) -> anyhow::Result<()> {
    let (packages, records): (Vec<&Record>, Vec<&Record>) =
        records.iter().partition(|r| r.variant == "package");
    if !packages.is_empty() {
        let mut t = render::table();
        t.set_header(vec!["package", "verdict", "ELF files", "decided by"]);
        for r in &packages {
            let files = r
                .metric("elf_files")
                .and_then(|m| m.median())
                .map(|n| n.to_string())
                .unwrap_or_else(|| "-".into());
            let decided = r
                .notes
                .iter()
                .find_map(|n| n.strip_prefix("decided by "))
                .unwrap_or("-");
            t.add_row(vec![
                r.scenario.clone(),
                r.notes.first().cloned().unwrap_or_default(),
                files,
                decided.to_string(),
            ]);
        }
        render::print(&t)?;
        if records.is_empty() {
            return Ok(());
        }
        println!();
    }
    let mut t = render::table();
    t.set_header(vec![
        "file",
        "arch",
        "verdict",
        "lse",
        "llsc loops",
        "outline calls",
        "locked/amo",
        "require",
    ]);
    let count = |r: &Record, names: &[&str]| -> String {
        let n: f64 = names
            .iter()
            .filter_map(|n| r.metric(n).and_then(|m| m.median()))
            .sum();
        format!("{n}")
    };
    for r in records {
        let r: &Record = r;
        let p = |k: &str| {
            r.parameters
                .get(k)
                .and_then(|v| v.as_str())
                .unwrap_or("-")
                .to_string()
        };
        t.add_row(vec![
            p("path"),
            p("arch"),
            r.notes.first().cloned().unwrap_or_default(),
            count(r, &[Class::Lse.name()]),
            count(r, &[Class::LlscLoop.name()]),
            count(r, &[Class::OutlineCall.name()]),
            count(
                r,
                &[
                    Class::LockedRmw.name(),
                    Class::XchgMem.name(),
                    Class::WideCas.name(),
                    Class::Amo.name(),
                ],
            ),
            match (r.parameters.get("require"), r.verdict) {
                (None, _) => "-".into(),
                (Some(_), Some(Verdict::Pass)) => "met".into(),
                (Some(_), Some(_)) => "NOT met".into(),
                (Some(_), None) => "not applicable".into(),
            },
        ]);
    }
    render::print(&t)
}

fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes.div_ceil(1024))
}

fn print_one(a: &BinaryAudit, check: Option<&RequireResult>) -> anyhow::Result<()> {
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
    if let Some(c) = check {
        let v = format!("--require {}: {}", c.requirement, c.words());
        t.add_row(vec!["require".to_string(), v]);
    }
    render::print(&t)?;

    let mut t = render::table();
    t.set_header(vec!["class", "count", "inside helpers"]);
    for class in Class::ALL {
        let n = a.by_class.get(&class).copied().unwrap_or(0);
        let h = a.in_helpers.get(&class).copied().unwrap_or(0);
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

fn print_functions(a: &BinaryAudit) -> anyhow::Result<()> {
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
        let c = |k: Class| f.by_class.get(&k).copied().unwrap_or(0);
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
fn lse_dispatch(f: &FunctionTally) -> String {
    let mut parts: Vec<String> = f
        .lse_evidence
        .iter()
        .map(|e| format!("run time ({})", e.name()))
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

fn print_many(audits: &[BinaryAudit], checks: &[Option<RequireResult>]) -> anyhow::Result<()> {
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
    if checks.iter().any(Option::is_some) {
        header.push("require");
    }
    t.set_header(header);
    for (a, check) in audits.iter().zip(checks) {
        let mut row = vec![
            a.path.clone(),
            a.arch.to_string(),
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
        if let Some(c) = check {
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

#[cfg(test)]
mod tests {
    use atomlab_audit::PackageVerdict;

    /// `compare` ranks package observations by atomlab-core's list; the
    /// words the audit writes must be that list, in its order.
    #[test]
    fn package_verdicts_are_the_words_compare_ranks() {
        let written: Vec<&str> = PackageVerdict::WORST_FIRST
            .iter()
            .map(|v| v.name())
            .collect();
        assert_eq!(written, atomlab_core::AUDIT_PACKAGE_WORST_FIRST);
    }
}
