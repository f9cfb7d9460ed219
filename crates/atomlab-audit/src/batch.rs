//! A whole audit in one call: paths and typed [`Options`] in; the audits,
//! their `--require` judgements, the per-package rows and the
//! [`Record`]s out ([`audit`]). Over `.deb` packages the packages are
//! audited in parallel, `jobs` workers, and kept in the order given
//! (issue 27); ELF files and directories of them get a row per file, a
//! directory's files audited on `jobs` workers too.
//! The records are what a run saves, and [`shown`] reads them back into
//! the views a printer needs, so that a saved run prints as the live one
//! (issue 24: render from records only).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use atomlab_core::{InputError, Metric, Record, Source, Unit};
use serde::{Deserialize, Serialize};

use crate::{
    AuditError, AuditRun, BinaryAudit, Class, PackageAudit, PackageVerdict, Progress, Requirement,
};

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

/// Where a batch has got to, for progress displays.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// This many packages (and ELF files beside them) are to be audited in
    /// parallel.
    Packages(usize),
    /// One of them is done (its name); they end in any order.
    PackageDone(&'a str),
    /// Without packages: where the file-by-file audit is.
    File(Progress<'a>),
}

/// A `--require` judgement of one binary. `met` is `None` where the
/// requirement does not apply (it is about aarch64's atomics; an x86-64 or
/// riscv64 binary neither meets nor breaks it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequireResult {
    /// The requirement's name (`lse`, `outline`, `no-llsc`).
    pub requirement: String,
    /// Whether the binary meets it.
    pub met: Option<bool>,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl RequireResult {
    /// `r` applied to `a`.
    pub fn judge(r: Requirement, a: &BinaryAudit) -> RequireResult {
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

    /// The judgement in words (`met`, `NOT met: …`).
    pub fn words(&self) -> String {
        match (self.met, &self.reason) {
            (None, _) => "not applicable (aarch64 only)".into(),
            (Some(true), _) => "met".into(),
            (Some(false), Some(r)) => format!("NOT met: {r}"),
            (Some(false), None) => "NOT met".into(),
        }
    }
}

/// What the per-package view and record need of a [`PackageAudit`] (its
/// files' audits move on to the per-file records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageRow {
    /// The package's name (its control file's `Package:`).
    pub name: String,
    /// Its control file's `Version:`.
    pub version: Option<String>,
    /// Its control file's `Architecture:`.
    pub architecture: Option<String>,
    /// The `.deb` (or ELF file) as given.
    pub path: String,
    /// Its worst file's verdict.
    pub verdict: Option<PackageVerdict>,
    /// ELF files audited.
    pub files: usize,
    /// The file that decided the verdict.
    pub deciding_file: Option<String>,
    /// Its files that do their atomics with LL/SC only.
    pub llsc_only_files: Vec<String>,
    /// Why it has no verdict (one line), or which of its files were left out.
    pub error: Option<String>,
}

impl PackageRow {
    /// The row of `p`.
    pub fn of(p: &PackageAudit) -> PackageRow {
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

    /// Whether `path` is this package or one of its files.
    pub fn owns(&self, path: &str) -> bool {
        path.strip_prefix(self.path.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('!'))
    }

    /// A file of this package by its path inside it.
    pub fn member<'a>(&self, file: &'a str) -> &'a str {
        file.strip_prefix(self.path.as_str())
            .and_then(|f| f.strip_prefix('!'))
            .unwrap_or(file)
    }

    /// The package as a record: scenario = its name, its verdict the
    /// observation (what `compare` matches across two snapshots of an
    /// archive), its file count a metric, the deciding file its detail;
    /// the detail also says whether the run showed a row per package and
    /// how many packages it was given (what [`shown`] needs).
    pub fn record(&self, by_package: bool, given: usize) -> Option<Record> {
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
            "version": self.version,
            "architecture": self.architecture,
            "verdict": { "kind": v.name(), "words": v.words() },
            "elf_files": self.files,
            "deciding_file": self.deciding_file,
            "llsc_only_files": self.llsc_only_files,
            "by_package": by_package,
            "packages_given": given,
        }));
        Some(r)
    }

    /// A package record read back (the HTML report's archive section
    /// reads them so); `None` if it is not one [`audit`] wrote.
    pub fn from_record(r: &Record) -> Option<PackageRow> {
        Self::read_back(r).map(|(row, ..)| row)
    }

    /// [`PackageRow::from_record`], with whether the run showed a row per
    /// package and how many packages it was given.
    fn read_back(r: &Record) -> Option<(PackageRow, bool, usize)> {
        if r.variant != "package" {
            return None;
        }
        let d = r.detail.as_ref()?;
        let kind = d["verdict"]["kind"].as_str()?;
        let verdict = PackageVerdict::WORST_FIRST
            .into_iter()
            .find(|v| v.name() == kind)?;
        let text = |k: &str| d[k].as_str().map(str::to_string);
        let row = PackageRow {
            name: r.scenario.clone(),
            // Saved before these were written: none.
            version: text("version"),
            architecture: text("architecture"),
            path: d["path"].as_str()?.to_string(),
            verdict: Some(verdict),
            files: usize::try_from(d["elf_files"].as_u64()?).ok()?,
            deciding_file: d["deciding_file"].as_str().map(str::to_string),
            llsc_only_files: serde_json::from_value(d["llsc_only_files"].clone()).ok()?,
            error: None,
        };
        // Saved before these were written: a row per package, all audited.
        let by_package = d["by_package"].as_bool().unwrap_or(true);
        let given = d["packages_given"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok());
        Some((row, by_package, given.unwrap_or(0)))
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
    progress: &mut (dyn FnMut(Step<'_>) + Send),
) -> Batch {
    let (units, mut listing) = crate::package::units(paths);
    let (run, packages) = if units.iter().any(|u| crate::input::looks_like_package(u)) {
        listing.errors.extend(not_fetched);
        progress(Step::Packages(units.len()));
        let packages = audit_units(&units, options.jobs, progress);
        let rows: Vec<PackageRow> = packages.iter().map(PackageRow::of).collect();
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
        let mut run = crate::audit_paths_on(paths, options.jobs, &mut |p| progress(Step::File(p)));
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
        .map(|a| options.require.map(|r| RequireResult::judge(r, a)))
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
    progress: &mut (dyn FnMut(Step<'_>) + Send),
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
            (*p)(Step::PackageDone(&audit.name));
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

/// One function's line in a saved binary record (what the tables show).
#[derive(Debug, Clone, Deserialize)]
pub struct FunctionView {
    /// Entry address.
    pub addr: u64,
    /// Its name.
    pub name: String,
    /// Atomic read-modify-writes.
    pub atomics: u64,
    /// Counts by class name ([`Class::name`]).
    pub by_class: BTreeMap<String, u64>,
    /// LSE instructions with no CPU-feature test before them.
    pub lse_unconditional: u64,
    /// Evidence names ([`crate::Evidence::name`]) for the others.
    pub lse_evidence: Vec<String>,
}

impl FunctionView {
    /// Its count of `class`.
    pub fn count(&self, class: Class) -> u64 {
        self.by_class.get(class.name()).copied().unwrap_or(0)
    }
}

/// The sentence of a verdict.
#[derive(Debug, Clone, Deserialize)]
pub struct VerdictWords {
    /// The sentence.
    pub words: String,
}

/// One binary as its record tells it (what the tables show).
#[derive(Debug, Clone, Deserialize)]
pub struct FileView {
    /// The file.
    pub path: String,
    /// Its architecture's name ([`crate::Arch::name`]), from the record's
    /// parameters.
    #[serde(skip)]
    pub arch: String,
    /// Bytes of code scanned.
    pub code_bytes: u64,
    /// Whether it had a symbol table.
    pub has_symtab: bool,
    /// Its verdict.
    pub verdict: VerdictWords,
    /// Counts by class name outside helpers.
    pub by_class: BTreeMap<String, u64>,
    /// Counts by class name inside helpers.
    pub in_helpers: BTreeMap<String, u64>,
    /// Every site by mnemonic.
    pub by_mnemonic: BTreeMap<String, u64>,
    /// Calls to outline helpers by name.
    pub outline_calls: BTreeMap<String, u64>,
    /// Its top functions (as many as the run kept).
    pub functions: Vec<FunctionView>,
    /// Its notes.
    pub notes: Vec<String>,
    /// The `--require` judgement, if the run had one.
    #[serde(default)]
    pub require: Option<RequireResult>,
}

impl FileView {
    /// Its count of `class` outside helpers.
    pub fn count(&self, class: Class) -> u64 {
        self.by_class.get(class.name()).copied().unwrap_or(0)
    }

    /// Its count of `class` inside helpers.
    pub fn in_helpers(&self, class: Class) -> u64 {
        self.in_helpers.get(class.name()).copied().unwrap_or(0)
    }
}

/// What an audit's records show, as the run showed it.
#[derive(Debug, Clone)]
pub enum Shown {
    /// A row per package (those audited, in the order given) and how many
    /// packages the run was given.
    Packages {
        /// The audited packages.
        rows: Vec<PackageRow>,
        /// Packages given, audited or not.
        given: usize,
    },
    /// One file, in detail.
    One(Box<FileView>),
    /// A row per file.
    Files(Vec<FileView>),
    /// Nothing was audited.
    Nothing,
}

/// A record [`shown`] cannot read, and why.
#[derive(Debug, thiserror::Error)]
#[error("audit record {index} ({scenario}/{variant}) is not one atomlab audit writes: {reason}")]
pub struct NotAnAuditRecord {
    /// Its position among the records.
    pub index: usize,
    /// Its scenario.
    pub scenario: String,
    /// Its variant.
    pub variant: String,
    /// What is missing or wrong.
    pub reason: String,
}

/// Reads the records [`audit`] made (live, or saved and loaded) back into
/// what the run showed: a row per package, one file in detail, or a row
/// per file.
pub fn shown(records: &[Record]) -> Result<Shown, NotAnAuditRecord> {
    let bad = |index: usize, r: &Record, reason: String| NotAnAuditRecord {
        index,
        scenario: r.scenario.clone(),
        variant: r.variant.clone(),
        reason,
    };
    let mut rows = Vec::new();
    let mut files = Vec::new();
    let mut by_package = false;
    let mut given = 0;
    for (i, r) in records.iter().enumerate() {
        if r.variant == "package" {
            let (row, by, g) = PackageRow::read_back(r)
                .ok_or_else(|| bad(i, r, "no package verdict in its detail".into()))?;
            rows.push(row);
            by_package |= by;
            given = given.max(g);
        } else {
            let detail = r
                .detail
                .clone()
                .ok_or_else(|| bad(i, r, "it has no detail".into()))?;
            let mut f: FileView =
                serde_json::from_value(detail).map_err(|e| bad(i, r, e.to_string()))?;
            f.arch = r
                .parameters
                .get("arch")
                .and_then(|v| v.as_str())
                .unwrap_or("-")
                .to_string();
            files.push(f);
        }
    }
    Ok(if by_package {
        let given = given.max(rows.len());
        Shown::Packages { rows, given }
    } else if files.len() == 1 {
        Shown::One(Box::new(files.remove(0)))
    } else if files.is_empty() {
        Shown::Nothing
    } else {
        Shown::Files(files)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_package_row_reads_back_from_its_record() {
        let row = PackageRow {
            name: "v81only".into(),
            version: Some("1.0-1".into()),
            architecture: Some("arm64".into()),
            path: "/d/v81only_1.0_arm64.deb".into(),
            verdict: Some(PackageVerdict::NeedsArmv81),
            files: 3,
            deciding_file: Some("/d/v81only_1.0_arm64.deb!/usr/bin/c-lse".into()),
            llsc_only_files: vec!["/d/v81only_1.0_arm64.deb!/usr/bin/b".into()],
            error: None,
        };
        let r = row.record(true, 5).expect("a verdict makes a record");
        assert_eq!(r.parameters["observation"], "needs_armv8.1");
        assert_eq!(r.notes[1], "decided by /usr/bin/c-lse");
        match shown(&[r]).unwrap() {
            Shown::Packages { rows, given } => {
                assert_eq!(rows, vec![row.clone()]);
                assert_eq!(given, 5);
            }
            other => panic!("a row per package, not {other:?}"),
        }
        // Shown by file: the package record alone is no view of its own.
        let r = row.record(false, 1).unwrap();
        assert!(matches!(shown(&[r]).unwrap(), Shown::Nothing));
        let unaudited = PackageRow {
            verdict: None,
            ..row
        };
        assert!(unaudited.record(true, 1).is_none());
    }

    #[test]
    fn a_record_of_something_else_is_refused_by_name() {
        let r = Record::new("audit", "binary", "mixed");
        let e = shown(&[r]).unwrap_err();
        assert_eq!(e.index, 0);
        assert!(e.to_string().contains("no detail"), "{e}");
    }
}
