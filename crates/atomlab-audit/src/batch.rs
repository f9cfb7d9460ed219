//! A whole audit in one call: paths and typed [`Options`] in; the audits,
//! their `--require` judgements, the per-package rows and the
//! [`Record`]s out ([`audit`]). Over `.deb` packages the packages are
//! audited in parallel, `jobs` workers, and kept in the order given
//! (issue 27); ELF files and directories of them get a row per file, a
//! directory's files audited on `jobs` workers too.
//! The records are what a run saves; atomlab-report reads them back into
//! the views its tables need, so that a saved run prints as the live one
//! (issue 24: render from records only).

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use atomlab_core::{InputError, Metric, Record, Source, Unit};

use crate::{AuditError, AuditRun, BinaryAudit, Class, Event, PackageAudit, Requirement};

/// How to audit.
#[derive(Debug, Clone)]
pub struct Options {
    /// Packages audited at once (at least 1).
    pub jobs: usize,
    /// The gate every aarch64 binary is judged against, if any.
    pub require: Option<Requirement>,
    /// Keep each file's top N functions by atomic count (`None`: none, and
    /// over packages a row per package).
    pub by_function: Option<usize>,
    /// A row per ELF file also over packages.
    pub by_file: bool,
}

impl Default for Options {
    /// A worker per CPU (at most 64), no gate, no functions, rows per
    /// package.
    fn default() -> Options {
        Options {
            jobs: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .clamp(1, 64),
            require: None,
            by_function: None,
            by_file: false,
        }
    }
}

pub use atomlab_core::audit::{PackageRow, RequireResult};

/// The `--require` judgement of `r` on `a`.
pub fn require_result(r: Requirement, a: &BinaryAudit) -> RequireResult {
    let (met, reason) = match r.check(a) {
        _ if a.arch != crate::Arch::Aarch64 => (None, None),
        Ok(()) => (Some(true), None),
        Err(reason) => (Some(false), Some(reason)),
    };
    RequireResult {
        requirement: r.name().to_string(),
        met,
        reason,
    }
}

/// The row of package `p`.
pub fn package_row(p: &PackageAudit) -> PackageRow {
    PackageRow {
        name: p.name.clone(),
        version: p.version.clone(),
        architecture: p.architecture.clone(),
        path: p.path.clone(),
        verdict: p.verdict,
        files: p.audits.len(),
        deciding_file: p.deciding_file.clone(),
        llsc_only_files: p.llsc_only_files().map(|a| a.path.clone()).collect(),
        error: p.why_no_verdict().or_else(|| p.partial_errors()),
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
        r.param("require", c.requirement.clone());
        r.verdict = c.met.map(|met| {
            if met {
                atomlab_core::Verdict::Pass
            } else {
                atomlab_core::Verdict::Fail
            }
        });
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

/// A finished audit.
#[derive(Debug)]
pub struct Batch {
    /// Binaries audited, in the order given (functions cut to the top N).
    pub audits: Vec<BinaryAudit>,
    /// Their `--require` judgements, one per audit (`None` without a gate).
    pub checks: Vec<Option<RequireResult>>,
    /// A row per package (and ELF file beside them) when the paths held
    /// packages, in the order given.
    pub packages: Option<Vec<PackageRow>>,
    /// Paths and files that could not be audited.
    pub errors: Vec<AuditError>,
    /// Non-ELF files passed over inside directories and packages.
    pub skipped_non_elf: u64,
    /// Symbolic links passed over inside directories, and why.
    pub skipped_links: Vec<crate::input::SkippedLink>,
    /// Whether the result is a row per package (packages, and neither
    /// `by_file` nor `by_function`).
    pub by_package: bool,
    /// A record per audited package, then one per binary.
    pub records: Vec<Record>,
}

impl Batch {
    /// Binaries that do not meet the requirement.
    pub fn failed(&self) -> usize {
        self.checks
            .iter()
            .flatten()
            .filter(|c| c.met == Some(false))
            .count()
    }

    /// Packages with a verdict.
    pub fn audited_packages(&self) -> usize {
        self.packages
            .iter()
            .flatten()
            .filter(|r| r.verdict.is_some())
            .count()
    }

    /// The inputs that could not be used, a line each: in a row per
    /// package, one line per package that could not be audited (whole or
    /// in part), after the paths that could not be listed.
    pub fn input_errors(&self) -> Vec<InputError> {
        match (&self.packages, self.by_package) {
            (Some(rows), true) => self
                .errors
                .iter()
                .filter(|e| !rows.iter().any(|r| r.owns(e.path())))
                .map(|e| input_error(e.path(), &e.to_string()))
                .chain(
                    rows.iter()
                        .filter_map(|r| r.error.as_ref().map(|line| input_error(&r.path, line))),
                )
                .collect(),
            // The message without the path it starts with, which the
            // printer writes before it (it was written twice).
            _ => self
                .errors
                .iter()
                .map(|e| input_error(e.path(), &e.to_string()))
                .collect(),
        }
    }
}

/// An error line about `input` (`line` starts with it, as the audit's
/// errors do; a printer writes `input: message`).
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

/// Audits `paths` (ELF files, directories, `.deb` packages); `not_fetched`
/// are inputs that never arrived (apt's misses), reported with the rest.
/// `progress` hears where it is, from the workers' threads too.
pub fn audit(
    paths: &[PathBuf],
    not_fetched: Vec<AuditError>,
    options: &Options,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> Batch {
    let (units, mut listing) = crate::package::units(paths);
    let (run, packages) = if units.iter().any(|u| crate::input::looks_like_package(u)) {
        listing.errors.extend(not_fetched);
        progress(Event::Begin {
            total: units.len(),
            what: "packages",
        });
        let packages = audit_units(&units, options.jobs, progress);
        progress(Event::End);
        let rows: Vec<PackageRow> = packages.iter().map(package_row).collect();
        let mut run = AuditRun {
            audits: Vec::new(),
            errors: listing.errors,
            skipped_non_elf: listing.skipped_non_elf,
            skipped_links: listing.skipped_links,
        };
        for p in packages {
            run.audits.extend(p.audits);
            run.errors.extend(p.errors);
            run.skipped_non_elf += p.skipped_non_elf;
        }
        (run, Some(rows))
    } else {
        // ELF files and directories of them: a row per file. (The
        // listing's errors are found again by this walk.)
        let mut run = crate::audit_paths_on(paths, options.jobs, progress);
        run.errors.extend(not_fetched);
        (run, None)
    };
    judge(run, packages, options)
}

/// Cuts the functions, judges the requirement and makes the records.
fn judge(mut run: AuditRun, packages: Option<Vec<PackageRow>>, options: &Options) -> Batch {
    let top = options.by_function.unwrap_or(0);
    for a in &mut run.audits {
        a.functions.truncate(top);
    }
    let checks: Vec<Option<RequireResult>> = run
        .audits
        .iter()
        .map(|a| options.require.map(|r| require_result(r, a)))
        .collect();
    let by_package = packages.is_some() && !options.by_file && options.by_function.is_none();
    // Over packages, a record per package first (what `compare` of two
    // archive snapshots matches), then one per file as without packages.
    let given = packages.as_ref().map_or(0, Vec::len);
    let records = packages
        .iter()
        .flatten()
        .filter_map(|p| p.record(by_package, given))
        .chain(
            run.audits
                .iter()
                .zip(&checks)
                .map(|(a, c)| record(a, c.as_ref())),
        )
        .collect();
    Batch {
        audits: run.audits,
        checks,
        packages,
        errors: run.errors,
        skipped_non_elf: run.skipped_non_elf,
        skipped_links: run.skipped_links,
        by_package,
        records,
    }
}

/// Audits `units` (packages and ELF files) on `jobs` workers; the results
/// in the order of `units`, whatever order they end in.
fn audit_units(
    units: &[PathBuf],
    jobs: usize,
    progress: &mut (dyn FnMut(Event<'_>) + Send),
) -> Vec<PackageAudit> {
    let results: Vec<Mutex<Option<PackageAudit>>> =
        units.iter().map(|_| Mutex::new(None)).collect();
    // ORDERING: the counter only hands out distinct indices; the results are
    // published by the Mutexes and the scope's join, so Relaxed suffices.
    let next = AtomicUsize::new(0);
    let progress = Mutex::new(progress);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(path) = units.get(i) else { break };
        let audit = crate::package::audit_unit(path);
        if let Ok(mut p) = progress.lock() {
            (*p)(Event::Done(&audit.name));
        }
        if let Ok(mut slot) = results[i].lock() {
            *slot = Some(audit);
        }
    };
    std::thread::scope(|s| {
        // The calling thread is one of the workers.
        for _ in 1..jobs.max(1).min(units.len().max(1)) {
            s.spawn(work);
        }
        work();
    });
    results
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_report::kinds::audit::read::{shown, Shown};

    /// This test program itself: an ELF file for the host (x86-64 or
    /// aarch64) with atomics in it.
    fn me() -> PathBuf {
        std::env::current_exe().expect("the test binary")
    }

    #[test]
    fn a_batch_of_files_gives_an_audit_a_judgement_and_a_record_each() {
        let dir = std::env::temp_dir().join(format!("atomlab-audit-batch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = dir.join("notes.txt");
        std::fs::write(&text, "not an ELF file\n").unwrap();
        let missing = dir.join("missing");
        let options = Options {
            jobs: 2,
            require: Some(Requirement::NoLlsc),
            by_function: Some(3),
            by_file: false,
        };
        let mut steps = 0;
        let b = audit(
            &[me(), text.clone(), missing.clone()],
            Vec::new(),
            &options,
            &mut |_| steps += 1,
        );
        let _ = std::fs::remove_dir_all(&dir);
        assert!(steps > 0, "no progress reported");
        assert_eq!(b.audits.len(), 1, "{:?}", b.errors);
        assert!(b.packages.is_none() && !b.by_package);
        assert!(b.audits[0].functions.len() <= 3);
        assert!(!b.audits[0].functions.is_empty());
        // Two inputs not audited, a line each, naming them.
        let errors = b.input_errors();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors
            .iter()
            .any(|e| e.input == missing.display().to_string()));
        assert!(errors.iter().any(|e| e.input == text.display().to_string()));
        // The gate applies on aarch64 only.
        let check = b.checks[0].as_ref().expect("a judgement");
        assert_eq!(check.requirement, "no-llsc");
        let aarch64 = b.audits[0].arch == crate::Arch::Aarch64;
        assert_eq!(check.met.is_some(), aarch64);
        // One record, carrying what the tables print.
        assert_eq!(b.records.len(), 1);
        assert_eq!(b.records[0].parameters["require"], "no-llsc");
        match shown(&b.records).unwrap() {
            Shown::One(f) => {
                let a = &b.audits[0];
                assert_eq!(f.path, a.path);
                assert_eq!(f.arch, a.arch.name());
                assert_eq!(f.verdict.words, a.verdict.words);
                assert_eq!(f.code_bytes, a.code_bytes);
                for class in Class::ALL {
                    assert_eq!(f.count(class), a.count(class), "{class:?}");
                }
                assert_eq!(f.functions.len(), a.functions.len());
                assert_eq!(f.functions[0].name, a.functions[0].name);
                assert_eq!(f.require.as_ref(), Some(check));
            }
            other => panic!("one file shows as one file, not {other:?}"),
        }
    }
}
