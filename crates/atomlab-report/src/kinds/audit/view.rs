//! The terminal's view of an audit: what `atomlab audit` prints and
//! `atomlab show` prints again, from what its records show
//! ([`super::read::shown`]): a row per package, one file in detail,
//! or a row per file.
//!
//! Over `.deb` packages the answer is one row per package (issue 27): its
//! worst file's verdict, how many ELF files it has and the file that decided
//! it, then what needs attention, in the order of the command line among
//! equals.

use std::io::{self, Write};

use atomlab_core::audit::{Class, PackageRow, PackageVerdict};

use super::read::{FileView, FunctionView, Shown};

use crate::table::{write_wrapped, Cell, Table, WIDTH};

/// The audit's tables: what [`Shown`] holds, in its view.
pub fn write_terminal(out: &mut impl Write, shown: &Shown) -> io::Result<()> {
    match shown {
        Shown::Packages { rows, given } => write_packages(out, rows, *given),
        Shown::One(f) => write_one(out, f),
        Shown::Files(files) => write_many(out, files),
        Shown::Nothing => Ok(()),
    }
}

/// The per-package view: a row per package audited, worst first (the
/// command line's order among equals), then what needs attention. `given`
/// is how many packages were asked for (those not audited are counted).
pub fn write_packages(out: &mut impl Write, rows: &[PackageRow], given: usize) -> io::Result<()> {
    let mut order: Vec<&PackageRow> = rows.iter().filter(|r| r.verdict.is_some()).collect();
    // Stable: equals keep the command line's order.
    order.sort_by_key(|r| std::cmp::Reverse(r.verdict));
    let t = package_table(&order, false);
    if !order.is_empty() {
        writeln!(out, "{t}")?;
    }
    let counts: Vec<String> = PackageVerdict::WORST_FIRST
        .iter()
        .map(|v| {
            let n = order.iter().filter(|r| r.verdict == Some(*v)).count();
            format!("{n} {}", v.words())
        })
        .collect();
    let unaudited = given.saturating_sub(order.len());
    writeln!(out)?;
    write_wrapped(
        out,
        &format!(
            "{} of {} audited: {}{}",
            order.len(),
            given.max(order.len()),
            counts.join(", "),
            if unaudited > 0 {
                format!("; {unaudited} not audited (why: on stderr)")
            } else {
                String::new()
            }
        ),
        WIDTH,
        2,
    )?;
    let (crash, llsc) = attention(&order);
    let crash: Vec<String> = crash
        .iter()
        .map(|r| {
            let f = r.deciding_file.as_deref().unwrap_or("?");
            format!("{} ({})", r.name, r.member(f))
        })
        .collect();
    let llsc: Vec<String> = llsc
        .iter()
        .map(|r| {
            // The package and a count, not every file (one had 87): the
            // first names where to look; --by-file lists them all.
            let first = r.member(&r.llsc_only_files[0]);
            match r.llsc_only_files.len() {
                1 => format!("{} ({first})", r.name),
                n => format!("{} ({n} files, e.g. {first}; --by-file lists them)", r.name),
            }
        })
        .collect();
    if crash.is_empty() && llsc.is_empty() {
        writeln!(
            out,
            "needs attention: none (no unconditional LSE, no LL/SC-only file)"
        )?;
        return Ok(());
    }
    // One package a line under each reason, so that a long list neither
    // runs past the terminal nor splits a name over two lines.
    writeln!(out, "needs attention:")?;
    for (reason, list) in [
        (
            "SIGILL on ARMv8.0 (LSE behind no CPU-feature test; build for armv8-a with -moutline-atomics):",
            &crash,
        ),
        (
            "LL/SC only, no LSE on ARMv8.1+ (a rebuild with -moutline-atomics fixes it):",
            &llsc,
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        write_wrapped(out, &format!("  {reason}"), WIDTH, 2)?;
        for entry in list {
            write_wrapped(out, &format!("    {entry}"), WIDTH, 2)?;
        }
    }
    Ok(())
}

/// What needs attention among `order`, in its order: the packages that
/// die of SIGILL on ARMv8.0 (LSE behind no CPU-feature test), and those
/// with LL/SC-only files (a rebuild with -moutline-atomics fixes them).
/// The terminal lists them and the report tables them.
pub(crate) fn attention<'r>(
    order: &[&'r PackageRow],
) -> (Vec<&'r PackageRow>, Vec<&'r PackageRow>) {
    let crash = order
        .iter()
        .copied()
        .filter(|r| r.verdict == Some(PackageVerdict::NeedsArmv81))
        .collect();
    let llsc = order
        .iter()
        .copied()
        .filter(|r| !r.llsc_only_files.is_empty())
        .collect();
    (crash, llsc)
}

/// The class of a verdict's cells in HTML: red for a crash on ARMv8.0,
/// amber for LL/SC only, green for the rest.
pub(crate) fn verdict_class(v: PackageVerdict) -> &'static str {
    match v {
        PackageVerdict::NeedsArmv81 => "bad",
        PackageVerdict::LlscOnly => "warn",
        _ => "ok",
    }
}

/// The table of packages, a row each in `order`: the one definition the
/// terminal prints and the report draws (which adds each package's
/// `version`). The verdict stays on one line: people and scripts grep for
/// it.
pub(crate) fn package_table(order: &[&PackageRow], with_version: bool) -> Table {
    let mut header = vec!["package"];
    if with_version {
        header.push("version");
    }
    header.extend(["verdict", "ELF files", "decided by"]);
    let mut t = Table::fitting();
    t.set_header(header.iter().copied()).whole(header.len() - 3);
    for r in order {
        let (words, class) = r
            .verdict
            .map_or(("-", ""), |v| (v.words(), verdict_class(v)));
        let decided = match (r.verdict, &r.deciding_file) {
            (Some(PackageVerdict::NoAtomics), _) | (_, None) => "-".to_string(),
            (_, Some(f)) => r.member(f).to_string(),
        };
        let mut cells = vec![Cell::text(&r.name)];
        if with_version {
            cells.push(Cell::text(r.version.as_deref().unwrap_or("-")));
        }
        cells.extend([
            Cell::text(words).class(class),
            Cell::num(r.files.to_string()),
            Cell::code(decided),
        ]);
        t.row(cells);
    }
    t
}

fn kib(bytes: u64) -> String {
    format!("{} KiB", bytes.div_ceil(1024))
}

/// One file in detail: verdict, architecture, the class and instruction
/// counts, the outline helpers called, the functions and the notes.
fn write_one(out: &mut impl Write, a: &FileView) -> io::Result<()> {
    let mut t = Table::fitting();
    t.set_header(vec!["file", a.path.as_str()]);
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
    writeln!(out, "{t}")?;

    let mut t = Table::fitting();
    t.set_header(vec!["class", "count", "inside helpers"]);
    for class in Class::ALL {
        let (n, h) = (a.count(class), a.in_helpers(class));
        if n + h > 0 {
            t.add_row(vec![class.name().to_string(), n.to_string(), h.to_string()]);
        }
    }
    if !a.by_class.is_empty() || !a.in_helpers.is_empty() {
        writeln!(out)?;
        writeln!(out, "{t}")?;
    }

    if !a.by_mnemonic.is_empty() {
        let mut t = Table::fitting();
        t.set_header(vec!["instruction", "count"]);
        for (m, n) in &a.by_mnemonic {
            t.add_row(vec![m.clone(), n.to_string()]);
        }
        writeln!(out)?;
        writeln!(out, "{t}")?;
    }
    if !a.outline_calls.is_empty() {
        let mut t = Table::fitting();
        t.set_header(vec!["outline helper called", "calls"]);
        for (m, n) in &a.outline_calls {
            t.add_row(vec![m.clone(), n.to_string()]);
        }
        writeln!(out)?;
        writeln!(out, "{t}")?;
    }
    if !a.functions.is_empty() {
        writeln!(out)?;
        write_functions(out, a)?;
    }
    for n in &a.notes {
        write_wrapped(out, &format!("note: {n}"), WIDTH, 2)?;
    }
    Ok(())
}

/// The file's functions (`--by-function`), each with its counts by class.
fn write_functions(out: &mut impl Write, a: &FileView) -> io::Result<()> {
    let mut t = Table::fitting();
    // What chooses the LSE instructions, one reason a line, each whole:
    // "run time (flag-test)" is what people and scripts search for.
    t.keys(1).whole(4);
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
    writeln!(out, "{t}")
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
        parts.join("\n")
    }
}

/// A row per file, then each file's functions when it has any.
fn write_many(out: &mut impl Write, audits: &[FileView]) -> io::Result<()> {
    // Each file's path on a line of its own over its row, as `compare`
    // names a record: a path is one word that never wraps, and beside the
    // figures it would squeeze the verdict into a sliver.
    let mut t = Table::fitting();
    t.set_header(vec![
        "arch",
        "lse",
        "llsc loops",
        "outline calls",
        "locked/amo",
        "verdict",
    ]);
    for a in audits {
        // `--require`'s answer under the verdict, in the same column.
        let verdict = match &a.require {
            Some(c) => format!(
                "{}\n--require {}: {}",
                a.verdict.words,
                c.requirement,
                c.words()
            ),
            None => a.verdict.words.clone(),
        };
        t.heading(a.path.clone());
        t.add_row(vec![
            a.arch.clone(),
            a.count(Class::Lse).to_string(),
            a.count(Class::LlscLoop).to_string(),
            a.count(Class::OutlineCall).to_string(),
            (a.count(Class::LockedRmw)
                + a.count(Class::XchgMem)
                + a.count(Class::WideCas)
                + a.count(Class::Amo))
            .to_string(),
            verdict,
        ]);
    }
    writeln!(out, "{t}")?;
    for a in audits.iter().filter(|a| !a.functions.is_empty()) {
        writeln!(out, "\n{}", a.path)?;
        write_functions(out, a)?;
    }
    Ok(())
}
