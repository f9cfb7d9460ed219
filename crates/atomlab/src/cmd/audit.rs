//! `atomlab audit`: how binaries do their atomics (atomlab-audit does the
//! work; this module parses, renders and picks the exit code).

use std::io::IsTerminal;
use std::path::PathBuf;

use atomlab_audit::{AuditRun, BinaryAudit, Class, FunctionTally, Progress, Requirement};
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
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// List the top N functions by atomic count (10 without a value).
    #[arg(long, value_name = "N", num_args = 0..=1, require_equals = true, default_missing_value = "10")]
    pub by_function: Option<usize>,
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

pub fn run(args: AuditArgs) -> anyhow::Result<Outcome> {
    // A one-line progress display on stderr, only for a person watching.
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
    let mut run: AuditRun = atomlab_audit::audit_paths_with(&args.paths, &mut progress);
    if shown {
        eprint!("\r\x1b[2K");
    }
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

    let records = run
        .audits
        .iter()
        .zip(&checks)
        .map(|(a, c)| record(a, c.as_ref()))
        .collect();
    let mut report = Report::new("audit", Machine::detect(), records);
    report.errors = run
        .errors
        .iter()
        .map(|e| InputError {
            input: e.path().to_string(),
            line: None,
            column: None,
            message: e.to_string(),
        })
        .collect();
    report.notes.extend(passed_over);
    let status = if run.audits.is_empty() {
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
            if audits.len() == 1 {
                print_one(&audits[0], checks[0].as_ref())
            } else if !audits.is_empty() {
                print_many(&audits, &checks)
            } else {
                Ok(())
            }
        }),
    })
}

/// A saved audit (`atomlab show`): a row per binary from its record.
pub fn records_table(records: &[Record]) -> anyhow::Result<()> {
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
