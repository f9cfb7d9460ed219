//! The report's section for audits over Debian packages (issue 27: an
//! archive audited in one run): per run, how many packages got each
//! verdict, worst first, then what needs attention: packages that would die
//! of SIGILL on ARMv8.0 (LSE behind no CPU-feature test) and packages with
//! LL/SC-only files that a rebuild with `-moutline-atomics` moves to LSE.
//! The same answer as the terminal's per-package view
//! ([`super::view::write_packages`]), read from the package records
//! `atomlab audit` saves ([`atomlab_core::audit::PackageRow::from_record`]),
//! and every package in a folded table below it.

use std::fmt::Write;

use atomlab_core::audit::{PackageRow, PackageVerdict};

use super::view::{attention, package_table, verdict_class as class};
use crate::html::esc;
use crate::table::{Cell, Table};
use crate::Rec;
use crate::{run_name, RunView};

/// Writes the section for the package records among `recs` (audit
/// records; the per-file ones are the audit section's); nothing when
/// there are none.
pub(crate) fn section(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    // Per run, in the order of the runs: its packages, as saved.
    let mut by_run: Vec<(usize, Vec<PackageRow>)> = Vec::new();
    for x in recs {
        let Some(row) = PackageRow::from_record(x.r) else {
            continue;
        };
        match by_run.iter_mut().find(|(run, _)| *run == x.run) {
            Some((_, rows)) => rows.push(row),
            None => by_run.push((x.run, vec![row])),
        }
    }
    if by_run.is_empty() {
        return;
    }
    out.push_str("<section id=\"audit-packages\">\n<h2>audit: packages</h2>\n");
    out.push_str(
        "<p class=\"lead\">A package's verdict is its worst ELF file's: needs ARMv8.1 \
         (LSE behind no CPU-feature test: SIGILL on ARMv8.0) &gt; LL/SC only (no LSE on \
         ARMv8.1+) &gt; mixed &gt; outline or run-time LSE &gt; no atomics.</p>\n",
    );
    for (run, rows) in &by_run {
        if by_run.len() > 1 {
            let _ = writeln!(
                out,
                "<h3>run {}</h3>",
                esc(&runs.get(*run).map(run_name).unwrap_or_default())
            );
        }
        packages(out, rows);
    }
    out.push_str("</section>\n");
}

/// One run's packages: counts per verdict, what needs attention, and every
/// package (folded).
fn packages(out: &mut String, rows: &[PackageRow]) {
    let mut order: Vec<&PackageRow> = rows.iter().collect();
    // Stable: equals keep the order they were audited in.
    order.sort_by_key(|r| std::cmp::Reverse(r.verdict));

    let mut t = Table::with_header(&["verdict", "packages"]);
    for v in PackageVerdict::WORST_FIRST {
        let n = order.iter().filter(|r| r.verdict == Some(v)).count();
        let c = if n > 0 { class(v) } else { "" };
        t.row(vec![
            Cell::text(v.words()).class(c),
            Cell::text(n.to_string()).class(c),
        ]);
    }
    t.row(vec![
        Cell::html("<strong>audited</strong>".into()),
        Cell::text(order.len().to_string()),
    ]);
    t.html(out);

    fn member(r: &PackageRow, f: &str) -> String {
        r.member(f).to_string()
    }
    let (crash, llsc) = attention(&order);
    if crash.is_empty() && llsc.is_empty() {
        out.push_str(
            "<p class=\"ok\">needs attention: none (no unconditional LSE, no LL/SC-only \
             file)</p>\n",
        );
    }
    if !crash.is_empty() {
        let _ = writeln!(
            out,
            "<h4 class=\"bad\">needs attention: SIGILL on ARMv8.0, {} of {} packages (LSE \
             behind no CPU-feature test: build for armv8-a with -moutline-atomics)</h4>",
            crash.len(),
            order.len()
        );
        let mut t = Table::with_header(&["package", "version", "decided by"]);
        for r in &crash {
            let f = r.deciding_file.as_deref().unwrap_or("?");
            t.row(vec![
                Cell::text(&r.name),
                Cell::text(r.version.as_deref().unwrap_or("-")),
                Cell::code(member(r, f)),
            ]);
        }
        t.html(out);
    }
    if !llsc.is_empty() {
        let _ = writeln!(
            out,
            "<h4 class=\"warn\">needs attention: LL/SC only, no LSE on ARMv8.1+, {} of {} \
             packages (a rebuild with -moutline-atomics fixes it)</h4>",
            llsc.len(),
            order.len()
        );
        let mut t = Table::with_header(&["package", "version", "LL/SC-only files"]);
        for r in &llsc {
            let files: Vec<String> = r
                .llsc_only_files
                .iter()
                .map(|f| format!("<code>{}</code>", esc(&member(r, f))))
                .collect();
            t.row(vec![
                Cell::text(&r.name),
                Cell::text(r.version.as_deref().unwrap_or("-")),
                Cell::html(files.join("<br>")),
            ]);
        }
        t.html(out);
    }

    let _ = writeln!(
        out,
        "<details class=\"explain\"><summary>every package ({}), worst first</summary>",
        order.len()
    );
    package_table(&order, true).html(out);
    out.push_str("</details>\n");
}

#[cfg(test)]
mod tests {
    use atomlab_core::audit::{PackageRow, PackageVerdict};
    use atomlab_core::{Machine, Report};

    use crate::{render_html, RunView};

    fn row(name: &str, verdict: PackageVerdict, llsc: &[&str]) -> PackageRow {
        let path = format!("/a/{name}_1.0_arm64.deb");
        PackageRow {
            name: name.into(),
            version: Some("1.0-1".into()),
            architecture: Some("arm64".into()),
            deciding_file: Some(format!("{path}!/usr/bin/{name}")),
            llsc_only_files: llsc.iter().map(|f| format!("{path}!{f}")).collect(),
            path,
            verdict: Some(verdict),
            files: 2,
            error: None,
        }
    }

    fn run(id: &str, rows: &[PackageRow]) -> RunView {
        let records = rows
            .iter()
            .filter_map(|r| r.record(true, rows.len()))
            .collect();
        RunView {
            id: id.into(),
            label: None,
            command_line: vec!["atomlab".into(), "audit".into(), "/a".into()],
            started_unix: 1_796_099_546.0,
            host: "h".into(),
            report: Report::new("audit", Machine::detect(), records),
        }
    }

    /// The section's part of the page.
    fn section(html: &str) -> &str {
        let start = html
            .find("<section id=\"audit-packages\">")
            .unwrap_or_else(|| panic!("no package section:\n{html}"));
        let rest = &html[start..];
        &rest[..rest.find("</section>").unwrap()]
    }

    #[test]
    fn counts_per_verdict_and_what_needs_attention() {
        let rows = [
            row("calm", PackageVerdict::NoAtomics, &[]),
            row("old", PackageVerdict::LlscOnly, &["/usr/lib/libold.so"]),
            row("crash", PackageVerdict::NeedsArmv81, &[]),
            row("modern", PackageVerdict::RunTimeLse, &[]),
            row("modern2", PackageVerdict::RunTimeLse, &[]),
        ];
        let html = render_html(&[run("r1", &rows)], None);
        let s = section(&html);
        // Counts, worst first, then the total.
        let count = |words: &str| -> &str {
            let at = s.find(&format!(">{words}</td>")).expect(words);
            let cell = &s[at + words.len() + 6..];
            let cell = &cell[cell.find('>').unwrap() + 1..];
            &cell[..cell.find('<').unwrap()]
        };
        let counts: Vec<&str> = PackageVerdict::WORST_FIRST
            .iter()
            .map(|v| count(v.words()))
            .collect();
        assert_eq!(counts, ["1", "1", "0", "2", "1"], "{s}");
        assert!(s.contains("<strong>audited</strong></td><td>5</td>"), "{s}");
        let red = format!(
            "<td class=\"bad\">{}</td>",
            PackageVerdict::NeedsArmv81.words()
        );
        assert!(s.contains(&red), "{s}");
        let sigill = s.find("SIGILL on ARMv8.0, 1 of 5 packages").expect(s);
        let llsc = s
            .find("LL/SC only, no LSE on ARMv8.1+, 1 of 5 packages")
            .expect(s);
        assert!(sigill < llsc, "{s}");
        assert!(
            s[sigill..llsc].contains("<code>/usr/bin/crash</code>"),
            "{s}"
        );
        assert!(!s[sigill..llsc].contains("modern"), "{s}");
        assert!(s[llsc..].contains("<code>/usr/lib/libold.so</code>"), "{s}");
        // Every package, folded, worst first.
        let all = &s[s.find("<details").unwrap()..];
        let at: Vec<usize> = ["crash", "old", "modern", "modern2", "calm"]
            .iter()
            .map(|n| all.find(&format!("<td>{n}</td>")).expect(n))
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{all}");
        assert!(!s.contains("needs attention: none"), "{s}");
    }

    #[test]
    fn two_snapshots_get_a_part_each_and_calm_says_so() {
        let old = run(
            "old-snapshot",
            &[row("calm", PackageVerdict::NoAtomics, &[])],
        );
        let new = run(
            "new-snapshot",
            &[row("calm", PackageVerdict::NeedsArmv81, &[])],
        );
        let html = render_html(&[old, new], None);
        let s = section(&html);
        let (a, b) = (
            s.find("<h3>run old-snapshot</h3>").expect(s),
            s.find("<h3>run new-snapshot</h3>").expect(s),
        );
        assert!(s[a..b].contains("needs attention: none"), "{s}");
        assert!(s[b..].contains("SIGILL on ARMv8.0, 1 of 1 packages"), "{s}");
        // No package records: no section.
        let html = render_html(&[run("empty", &[])], None);
        assert!(!html.contains("audit-packages"));
    }
}
