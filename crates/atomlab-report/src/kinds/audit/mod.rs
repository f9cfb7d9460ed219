//! Audit records: what `atomlab audit` prints ([`view`], from the records
//! [`read`] checks), and the page's section: a bar per verdict (how many
//! binaries or packages got it), over packages the count per verdict and
//! what needs attention (`archive.rs`), then each binary's verdict in words
//! and its counts.

use std::fmt::Write;
use std::io;

use atomlab_core::audit::PackageVerdict;
use atomlab_core::{Record, Verdict};
use serde_json::Value;

use super::Kind;
use crate::charts::{self, Bar, Tone};
use crate::html::{count, esc, param};
use crate::table::{Cell, Table};
use crate::{run_column, runs_differ, Rec, RunView};

mod archive;
pub mod read;
pub mod view;

/// audit's entry in [`super::KINDS`].
pub(crate) const KIND: Kind = Kind {
    name: "audit",
    terminal: |mut out, report| {
        // A record that is not an audit's names itself (index, key and
        // what is wrong), as the io::Error's message.
        let shown = read::shown(&report.records)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        view::write_terminal(&mut out, &shown)
    },
    section: Some(section),
};

/// The page's section: the verdicts counted, issue 27's archive section
/// (verdict counts per package and what needs attention), then a row per
/// binary.
fn section(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    audit_counts(out, runs, recs);
    archive::section(out, runs, recs);
    audit(out, runs, recs);
}

fn object_table(out: &mut String, title: &str, v: Option<&Value>) {
    let Some(obj) = v.and_then(|v| v.as_object()) else {
        return;
    };
    if obj.is_empty() {
        return;
    }
    let _ = writeln!(out, "<h4>{}</h4>", esc(title));
    let mut t = Table::with_header(&["name", "count"]);
    for (k, v) in obj {
        t.row(vec![
            Cell::html(format!("<code>{}</code>", esc(k))),
            Cell::num(match v {
                Value::Number(n) => n.to_string(),
                v => v.to_string(),
            }),
        ]);
    }
    t.html(out);
}

/// The bar an audit record counts for: its verdict's words (a package's)
/// or kind (a binary's), and its colour: red for what crashes on ARMv8.0
/// (LSE behind no CPU-feature test), amber for LL/SC only (no LSE on
/// ARMv8.1+).
fn audit_verdict(r: &Record) -> (String, Tone) {
    let kind = r
        .detail
        .as_ref()
        .and_then(|d| d.pointer("/verdict/kind"))
        .and_then(|k| k.as_str())
        .unwrap_or(&r.variant);
    let tone = match kind {
        "needs_armv8.1" | "inline_lse" => Tone::Bad,
        "llsc_only" => Tone::Warn,
        _ => Tone::Plain(0),
    };
    let label = if r.variant == "package" {
        let words = PackageVerdict::WORST_FIRST
            .iter()
            .find(|v| v.name() == kind)
            .map_or(kind, |v| v.words());
        format!("package: {words}")
    } else {
        format!("binary: {}", kind.replace('_', " "))
    };
    (label, tone)
}

/// Audit: a bar per verdict, how many binaries (or packages) got it,
/// worst first.
fn audit_counts(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    let mut bars: Vec<Bar> = Vec::new();
    for x in recs {
        let (label, tone) = audit_verdict(x.r);
        match bars.iter_mut().find(|b| b.label == label) {
            Some(b) => b.value += 1.0,
            None => bars.push(Bar {
                label,
                value: 1.0,
                tone,
            }),
        }
    }
    let rank = |t: Tone| match t {
        Tone::Bad => 0,
        Tone::Warn => 1,
        Tone::Plain(_) => 2,
    };
    bars.sort_by_key(|b| rank(b.tone));
    let packages = recs.iter().filter(|x| x.r.variant == "package").count();
    let what = match (packages, recs.len() - packages) {
        (0, _) => "binaries",
        (_, 0) => "packages",
        _ => "binaries and packages",
    };
    let mut run_count: Vec<usize> = recs.iter().map(|x| x.run).collect();
    run_count.dedup();
    let mut caption = format!(
        "audit: how many {what} got each verdict ({} in all",
        recs.len()
    );
    if run_count.len() > 1 && runs.len() > 1 {
        let _ = write!(caption, ", over {} runs", run_count.len());
    }
    caption.push(')');
    if bars.iter().any(|b| b.tone == Tone::Bad) {
        caption.push_str("; red: LSE behind no CPU-feature test, SIGILL on ARMv8.0");
    }
    if bars.iter().any(|b| b.tone == Tone::Warn) {
        caption.push_str("; amber: LL/SC only, no LSE on ARMv8.1+");
    }
    out.push_str(&charts::figure(
        "audit-verdicts",
        charts::bar_chart(&bars, what),
        &format!("audit: {what} per verdict"),
        "",
        &esc(&caption),
    ));
}

/// Audit: a row per binary with its verdict in words and its counts.
fn audit(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    let multi = runs_differ(recs);
    let mut header = vec![];
    if multi {
        header.push("run");
    }
    header.extend([
        "binary",
        "arch",
        "verdict",
        "counts",
        "code bytes",
        "requirement",
    ]);
    let mut t = Table::with_header(&header);
    for x in recs {
        let r = x.r;
        let words = r
            .notes
            .first()
            .cloned()
            .or_else(|| {
                r.detail
                    .as_ref()
                    .and_then(|d| d.pointer("/verdict/words"))
                    .and_then(|w| w.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| r.variant.clone());
        let counts: Vec<String> = r
            .metrics
            .iter()
            .filter_map(|m| Some(format!("{} {}", m.name, count(m.median()?))))
            .collect();
        let require = match (r.parameters.get("require"), r.verdict) {
            (Some(req), v) => format!(
                "{}: {}",
                match req {
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                },
                v.map(Verdict::as_str).unwrap_or("not applicable")
            ),
            (None, _) => "-".into(),
        };
        let mut row = Vec::new();
        if multi {
            row.push(Cell::text(run_column(&runs[x.run])));
        }
        row.extend([
            Cell::html(format!("<code>{}</code>", esc(&param(r, "path")))),
            Cell::text(param(r, "arch")),
            Cell::text(words).class("wide"),
            Cell::text(if counts.is_empty() {
                "none".to_string()
            } else {
                counts.join(", ")
            }),
            Cell::num(param(r, "code_bytes")),
            Cell::text(require).class(match r.verdict {
                Some(Verdict::Pass) => "ok",
                Some(Verdict::Fail) => "bad",
                _ => "",
            }),
        ]);
        t.row(row);
    }
    t.drop_blank_columns();
    t.html(out);
    for x in recs {
        let r = x.r;
        let Some(d) = r.detail.as_ref() else { continue };
        let _ = writeln!(
            out,
            "<details class=\"explain\"><summary><code>{}</code>: instructions, helpers and functions</summary>",
            esc(&param(r, "path"))
        );
        for n in r.notes.iter().skip(1) {
            let _ = writeln!(out, "<p class=\"warn\">{}</p>", esc(n));
        }
        object_table(out, "by mnemonic (helpers included)", d.get("by_mnemonic"));
        object_table(out, "inside outline helpers, by class", d.get("in_helpers"));
        object_table(
            out,
            "outside every known function, by class",
            d.get("outside_functions"),
        );
        object_table(out, "calls to outline helpers", d.get("outline_calls"));
        object_table(out, "calls to libatomic", d.get("libatomic_calls"));
        object_table(out, "LL/SC loops outside helpers", d.get("llsc_loops"));
        if let Some(fs) = d.get("functions").and_then(|f| f.as_array()) {
            if !fs.is_empty() {
                const SHOWN: usize = 100;
                let _ = writeln!(
                    out,
                    "<h4>functions with atomics ({}{})</h4>",
                    fs.len(),
                    if fs.len() > SHOWN {
                        format!(", the first {SHOWN}")
                    } else {
                        String::new()
                    }
                );
                let mut t = Table::with_header(&["function", "atomics", "by class"]);
                for f in fs.iter().take(SHOWN) {
                    let by = f
                        .get("by_class")
                        .and_then(|b| b.as_object())
                        .map(|o| {
                            o.iter()
                                .map(|(k, v)| format!("{k} {v}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .unwrap_or_default();
                    t.row(vec![
                        Cell::html(format!(
                            "<code>{}</code>",
                            esc(f.get("name").and_then(|n| n.as_str()).unwrap_or("-"))
                        )),
                        Cell::num(f.get("atomics").map(|a| a.to_string()).unwrap_or_default()),
                        Cell::text(by),
                    ]);
                }
                t.html(out);
            }
        }
        if let Some(known) = d.get("functions_known") {
            let _ = writeln!(out, "<p>functions known: {}</p>", esc(&known.to_string()));
        }
        out.push_str("</details>\n");
    }
}
