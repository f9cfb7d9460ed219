//! The audit's terminal view written to a buffer: packages worst first with
//! what needs attention, and one file in detail from a saved audit.

mod common;

use atomlab_core::audit::{PackageRow, PackageVerdict};
use atomlab_report::kinds::audit::read::{shown, Shown};
use atomlab_report::kinds::audit::view::{write_packages, write_terminal};

fn row(name: &str, verdict: Option<PackageVerdict>, llsc: &[&str]) -> PackageRow {
    let path = format!("{name}.deb");
    PackageRow {
        name: name.into(),
        version: None,
        architecture: None,
        deciding_file: verdict.map(|_| format!("{path}!usr/bin/{name}")),
        llsc_only_files: llsc.iter().map(|f| format!("{path}!{f}")).collect(),
        path,
        verdict,
        files: 2,
        error: None,
    }
}

fn text(write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut out = Vec::new();
    write(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn packages_come_worst_first_with_what_needs_attention() {
    let rows = vec![
        row("calm", Some(PackageVerdict::NoAtomics), &[]),
        row(
            "old",
            Some(PackageVerdict::LlscOnly),
            &["usr/lib/libold.so"],
        ),
        row("broken", None, &[]),
        row("crash", Some(PackageVerdict::NeedsArmv81), &[]),
    ];
    let out = text(|o| write_packages(o, &rows, 5));
    let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("no {s:?} in\n{out}"));
    // Table rows, worst first; the package without a verdict has no row.
    assert!(
        at("| crash") < at("| old") && at("| old") < at("| calm"),
        "{out}"
    );
    assert!(!out.contains("| broken"), "{out}");
    assert!(out.contains(PackageVerdict::NeedsArmv81.words()));
    assert!(out.contains("\n3 of 5 audited: "), "{out}");
    // The counts' line wraps at 100 columns, as every line here.
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("; 2 not audited (why: on stderr)"), "{out}");
    for line in out.lines() {
        assert!(line.chars().count() <= 100, "{line}");
    }
    // What needs attention names the deciding file inside its package.
    assert!(out.contains("crash (usr/bin/crash)"), "{out}");
    assert!(out.contains("old (usr/lib/libold.so)"), "{out}");
    assert!(!out.contains("none (no unconditional LSE"), "{out}");
}

/// "needs attention" named every file of a package (60 for one, 87 for
/// another): now the package, how many files, and the first.
#[test]
fn a_package_of_many_ll_sc_files_is_named_once_with_its_count() {
    let many: Vec<String> = (0..60).map(|i| format!("usr/lib/lib{i}.so")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let rows = vec![row("big", Some(PackageVerdict::LlscOnly), &many)];
    let out = text(|o| write_packages(o, &rows, 1));
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("big (60 files, e.g. usr/lib/lib0.so; --by-file lists them)"),
        "{out}"
    );
    assert!(!out.contains("lib59.so"), "{out}");
}

#[test]
fn no_package_audited_prints_no_table_and_says_so() {
    let out = text(|o| write_packages(o, &[], 2));
    assert!(!out.contains('|'), "{out}");
    assert!(out.starts_with("\n0 of 2 audited: 0 "), "{out}");
    assert!(out.contains("needs attention: none"), "{out}");
}

#[test]
fn a_saved_audit_of_one_file_shows_it_in_detail() {
    let report = common::report("audit.json");
    let shown = shown(&report.records).unwrap();
    let Shown::One(file) = &shown else {
        panic!("one file expected: {shown:?}")
    };
    let out = text(|o| write_terminal(o, &shown));
    let first = out.lines().next().unwrap();
    assert!(first.contains(&file.path), "{out}");
    // The verdict wraps at 100 columns: read the table as one text.
    let flat = |s: &str| {
        s.replace('|', " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(flat(&out).contains(&flat(&file.verdict.words)), "{out}");
    for (mnemonic, n) in &file.by_mnemonic {
        assert!(
            out.lines()
                .any(|l| l.contains(&format!("| {mnemonic} ")) && l.contains(&format!(" {n} "))),
            "no row for {mnemonic}: {out}"
        );
    }
    for note in &file.notes {
        assert!(
            flat(&out).contains(&flat(&format!("note: {note}"))),
            "{out}"
        );
    }
}
