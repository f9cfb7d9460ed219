//! The judged capabilities: stress verdicts, check observations with their
//! explanations, audit verdicts (counted in a chart, then per binary), and
//! any other record.

use std::fmt::Write;

use atomlab_core::audit::PackageVerdict;
use atomlab_core::check_layout::Layout;
use atomlab_core::{Record, Verdict};
use serde_json::Value;

use crate::charts::{self, Bar, Tone};
use crate::html::{count, esc, num, param, slug};
use crate::table::{Cell, Table};
use crate::Rec;
use crate::{run_column, run_name, RunView};

fn runs_differ(recs: &[Rec<'_>]) -> bool {
    recs.windows(2).any(|w| w[0].run != w[1].run)
}

/// Stress: the terminal's table ([`crate::stress_view::row`]), a run
/// column when runs differ, each verdict coloured by whether it is what
/// the variant's expectation asks, and what the terminal says under the
/// table in a last column.
pub(crate) fn stress(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    use crate::stress_view::{details, row, COLUMNS, STRESS_LEGEND};
    let multi = runs_differ(recs);
    let mut header = vec![];
    if multi {
        header.push("run");
    }
    header.extend(COLUMNS);
    header.push("notes");
    let verdict_at = COLUMNS.len() - 1;
    let mut t = Table::with_header(&header);
    for x in recs {
        let r = x.r;
        let class = match (param(r, "expected").as_str(), r.verdict) {
            (_, Some(Verdict::Timeout | Verdict::Bound)) => "warn",
            ("correct", Some(Verdict::Pass)) | ("broken", Some(Verdict::Fail)) => "ok",
            ("broken", Some(Verdict::NotObserved)) => "warn",
            (_, Some(Verdict::Fail)) => "bad",
            _ => "",
        };
        let mut cells = Vec::new();
        if multi {
            cells.push(Cell::text(run_column(&runs[x.run])));
        }
        for (i, c) in row(r).into_iter().enumerate() {
            cells.push(if i == verdict_at {
                Cell::text(c).class(class)
            } else {
                Cell::text(c)
            });
        }
        let lines = details(r);
        let notes = match lines.split_first() {
            None => String::new(),
            Some((first, [])) => esc(first),
            Some((first, rest)) => format!(
                "{}<details><summary>more</summary><ul>{}</ul></details>",
                esc(first),
                rest.iter()
                    .map(|n| format!("<li>{}</li>", esc(n)))
                    .collect::<String>()
            ),
        };
        cells.push(Cell::html(notes).class("wide"));
        t.row(cells);
    }
    t.html(out);
    let _ = writeln!(out, "<p class=\"notes\">{}</p>", esc(STRESS_LEGEND));
}

/// A check record's cell as `atomlab check` prints it (one definition:
/// [`crate::check_view::cell`]): `Never (3)`, `Sometimes (4) race`,
/// `TIMEOUT`, `BOUND`.
pub fn check_cell(r: &Record) -> String {
    crate::check_view::cell(r)
}

fn check_class(r: &Record) -> &'static str {
    match r.verdict {
        Some(Verdict::Timeout | Verdict::Bound) => "warn",
        _ => match r.parameters.get("observation").and_then(|o| o.as_str()) {
            Some("Never") => "never",
            Some("Sometimes") => "sometimes",
            Some("Always") => "always",
            _ => "",
        },
    }
}

/// Check: tests × models, then each test's explanation in a `<details>`.
/// The table is the terminal's ([`crate::check_view::table`]), one per
/// run, with a run column when the runs differ and each cell coloured by
/// its verdict; its notes follow it.
pub(crate) fn check(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    let multi = runs_differ(recs);
    let mut run_order: Vec<usize> = Vec::new();
    for x in recs {
        if !run_order.contains(&x.run) {
            run_order.push(x.run);
        }
    }
    // Each run's table as the terminal draws it, and the models of all.
    let mut models: Vec<String> = Vec::new();
    let mut tables = Vec::new();
    for &run in &run_order {
        let mine: Vec<&Record> = recs.iter().filter(|x| x.run == run).map(|x| x.r).collect();
        let layout = Layout::of_records(&mine);
        for m in &layout.models {
            if !models.contains(m) {
                models.push(m.clone());
            }
        }
        let table = crate::check_view::table(&layout, &mine);
        tables.push((run, layout, table));
    }
    let find = |run: usize, test: &str, model: &str| {
        recs.iter()
            .find(|x| x.run == run && x.r.scenario == test && x.r.variant == model)
    };
    let mut header: Vec<String> = Vec::new();
    if multi {
        header.push("run".into());
    }
    header.push("test".into());
    header.push("condition".into());
    header.extend(models.iter().cloned());
    let mut t = Table::with_header(&header).class("check");
    let mut rows: Vec<(usize, &str)> = Vec::new();
    let mut notes: Vec<&str> = Vec::new();
    for (run, layout, table) in &tables {
        for (row, cells) in layout.rows.iter().zip(&table.rows) {
            let mut html = Vec::new();
            if multi {
                html.push(Cell::text(run_column(&runs[*run])));
            }
            html.push(Cell::html(format!(
                "<a href=\"#{}\">{}</a>",
                explain_id(*run, &row.test),
                esc(&row.test)
            )));
            html.push(Cell::html(format!("<code>{}</code>", esc(&row.condition))));
            for m in &models {
                let column = layout.models.iter().position(|k| k == m);
                let cell = column.map_or("-", |c| cells[2 + c].as_str());
                html.push(match find(*run, &row.test, m) {
                    Some(x) => Cell::text(cell).class(check_class(x.r)),
                    None => Cell::text(cell),
                });
            }
            t.row(html);
            if !rows.contains(&(*run, row.test.as_str())) {
                rows.push((*run, &row.test));
            }
        }
        for n in &table.notes {
            if !notes.contains(&n.as_str()) {
                notes.push(n);
            }
        }
    }
    t.html(out);
    if !notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for n in notes {
            let _ = writeln!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("<h3>explanations</h3>\n");
    for &(run, test) in &rows {
        let mine: Vec<&Record> = models
            .iter()
            .filter_map(|m| find(run, test, m))
            .map(|x| x.r)
            .collect();
        explanation(out, runs, multi.then_some(run), test, &mine);
    }
}

fn explain_id(run: usize, test: &str) -> String {
    format!("check-{run}-{}", slug(test))
}

fn explanation(
    out: &mut String,
    runs: &[RunView],
    run: Option<usize>,
    test: &str,
    recs: &[&Record],
) {
    let detail = |r: &Record, key: &str| -> Vec<Value> {
        r.detail
            .as_ref()
            .and_then(|d| d.get(key))
            .and_then(|v| v.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let forbidden: usize = recs.iter().map(|r| detail(r, "forbidden").len()).sum();
    let witnessed: Vec<&str> = recs
        .iter()
        .filter(|r| {
            r.detail
                .as_ref()
                .and_then(|d| d.get("witness"))
                .is_some_and(|w| w.is_string())
        })
        .map(|r| r.variant.as_str())
        .collect();
    let mut summary = String::new();
    if let Some(run) = run {
        let _ = write!(summary, "{}: ", esc(&run_name(&runs[run])));
    }
    let _ = write!(summary, "<strong>{}</strong>: ", esc(test));
    let mut parts: Vec<String> = Vec::new();
    if forbidden > 0 {
        parts.push(format!("{forbidden} forbidden outcome(s) explained"));
    }
    if !witnessed.is_empty() {
        parts.push(format!("witness under {}", esc(&witnessed.join(", "))));
    }
    if parts.is_empty() {
        parts.push("allowed states".into());
    }
    summary.push_str(&parts.join("; "));
    let _ = writeln!(
        out,
        "<details class=\"explain\" id=\"{}\"><summary>{summary}</summary>",
        explain_id(run.unwrap_or(0), test)
    );
    if let Some(r) = recs.first() {
        let _ = writeln!(
            out,
            "<p>condition <code>{}</code>; file <code>{}</code></p>",
            esc(&param(r, "condition")),
            esc(&param(r, "file"))
        );
    }
    for r in recs {
        let _ = writeln!(
            out,
            "<h4>{}: <span class=\"{}\">{}</span></h4>",
            esc(&r.variant),
            check_class(r),
            esc(&check_cell(r))
        );
        for n in &r.notes {
            let _ = writeln!(out, "<p class=\"warn\">{}</p>", esc(n));
        }
        let forbidden = detail(r, "forbidden");
        if !forbidden.is_empty() {
            let mut t = Table::with_header(&["forbidden final state", "axiom", "cycle"]);
            for f in &forbidden {
                let s = |k: &str| f.get(k).and_then(|v| v.as_str()).unwrap_or("-");
                t.row(vec![
                    Cell::html(format!("<code>{}</code>", esc(s("state")))),
                    Cell::text(s("axiom")),
                    Cell::html(format!("<code>{}</code>", esc(s("cycle")))).class("wide"),
                ]);
            }
            t.html(out);
        }
        if let Some(w) = r
            .detail
            .as_ref()
            .and_then(|d| d.get("witness"))
            .and_then(|w| w.as_str())
        {
            let _ = writeln!(
                out,
                "<p>witness (an execution with the condition's outcome):</p><pre>{}</pre>",
                esc(&w.replace("; ", ";\n"))
            );
        }
        let states = detail(r, "states");
        if !states.is_empty() {
            let _ = write!(
                out,
                "<details><summary>allowed final states ({})</summary><p class=\"states\">",
                states.len()
            );
            for s in &states {
                let line = s.get("state").and_then(|v| v.as_str()).unwrap_or("-");
                let race = if s.get("data_race").and_then(|v| v.as_bool()) == Some(true) {
                    " <span class=\"bad\">(data race)</span>"
                } else {
                    ""
                };
                let _ = write!(out, "<span><code>{}</code>{race}</span> ", esc(line));
            }
            out.push_str("</p></details>\n");
        }
    }
    out.push_str("</details>\n");
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
pub(crate) fn audit_counts(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
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
pub(crate) fn audit(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
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

/// Records of capabilities this report has no section for: their medians.
pub(crate) fn other(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    let mut t = Table::with_header(&[
        "run",
        "capability",
        "scenario",
        "variant",
        "verdict",
        "medians",
        "notes",
    ]);
    for x in recs {
        let r = x.r;
        let medians: Vec<String> = r
            .metrics
            .iter()
            .filter_map(|m| {
                Some(format!(
                    "{} {} {}",
                    m.name,
                    num(m.median()?),
                    m.unit.label()
                ))
            })
            .collect();
        t.row(vec![
            Cell::text(run_column(&runs[x.run])),
            Cell::text(&r.capability),
            Cell::text(&r.scenario),
            Cell::text(&r.variant),
            Cell::text(r.verdict.map(Verdict::as_str).unwrap_or("-")),
            Cell::text(medians.join(", ")),
            Cell::text(r.notes.join("; ")).class("wide"),
        ]);
    }
    t.html(out);
}
