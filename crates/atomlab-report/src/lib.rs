//! atomlab's HTML report: one self-contained page for one or more runs
//! (each an [`atomlab_core::Report`]) and, optionally, an A/B comparison.
//!
//! The page needs nothing but itself: the CSS is inline, the charts are
//! inline SVG drawn by plotters' SVG backend, there is no script, no font
//! and no link to anything outside the file, and a Content-Security-Policy
//! says so to the browser. Explanations fold away in `<details>`, which
//! needs no JavaScript.
//!
//! What it shows, a section per kind of record (each a function of the
//! records of every run, in the kind's file under [`kinds`], with the
//! terminal's view of the same records), their tables those the terminal
//! prints, drawn as HTML:
//! * the machine fingerprint of each distinct machine, and every run's id,
//!   label, start time (UTC), host and command line;
//! * bench: per scenario a chart of ns/op against threads (a line per
//!   variant/ordering and contention, min–max bars over the runs), or per
//!   variant when one thread count was measured, or per CPU pair for
//!   pingpong; for `bench spsc` a chart per side (producer, consumer) of
//!   its CPU % against the offered rate, a line per barrier variant and
//!   wait mode, and for fixed-rate records the CPU % against the offered
//!   rate; then tables of every record (timed, fixed-work, fixed-rate,
//!   round trip, queue) with their flags and notes;
//! * stress: the verdict of each variant beside what it was expected to do;
//! * check: tests × models with each test's explanation (forbidden outcomes
//!   with axiom and cycle, witness, allowed states);
//! * run: per run the summary of its tests, then per test a chart of the
//!   final states seen beside the histogram with a column per model
//!   (forbidden outcomes red), the models' verdicts and the replay line;
//! * load: the latency percentiles and the requests in each second, a line
//!   per run, and a row per run of rates, percentiles, errors and CPU;
//! * audit: a bar per verdict (how many binaries or packages got it), over
//!   packages the count per verdict and what needs attention
//!   (`kinds/audit/archive.rs`), then each binary's verdict in words and its
//!   counts;
//! * the comparison, when given: changed verdicts first, then a chart and a
//!   table of every judged metric.
//!
//! Tables name a run by its id (what `atomlab show` takes) and its label;
//! charts' legends by its label, else its id.
//!
//! A record flagged implausible is never drawn, and its figures are not
//! printed: its table row says `implausible`. Every string from the data is
//! escaped.
//!
//! Every chart is a `<figure class="chart" data-chart="NAME">` holding an
//! `<svg>` and a `<figcaption>`: `bench-SCENARIO` per bench scenario (ns per
//! operation), `bench-SCENARIO-cpu` (fixed rate), `bench-SCENARIO-producer`
//! and `-consumer` (spsc), `run-RUN-TEST` per litmus test run,
//! `load-latency` and `load-timeline`, `audit-verdicts`, and `comparison`.
#![warn(unreachable_pub)]
#![deny(missing_docs)]

mod charts;
mod compare;
pub mod compare_view;
mod html;
pub mod kinds;
pub mod runs_view;
pub mod show_view;
pub mod table;
pub mod units;

/// A command line as it is typed (shell-quoted), for the terminal too.
pub use html::command_line as shell_quoted;
/// A figure as atomlab's tables print it (three significant digits, SI
/// suffixes); the terminal tables use it too.
pub use html::num as figure;
/// A check record's cell (`Never (3)`, `TIMEOUT`…), for the terminal too.
pub use kinds::check::check_cell;

use std::fmt::Write;

use atomlab_core::{Machine, Record, Report};
use atomlab_stats::ab::AbResult;

use html::{command_line, esc, utc};
use table::{Cell, Table};

/// A record of the page and the index of the run it came from.
#[derive(Clone, Copy)]
pub(crate) struct Rec<'a> {
    /// Index into the runs.
    pub run: usize,
    /// The record.
    pub r: &'a Record,
}

/// One run to report: a document atomlab wrote, and where it came from.
#[derive(Debug, Clone)]
pub struct RunView {
    /// The run's id (as the results store names it).
    pub id: String,
    /// A person's name for it (`baseline`, `after-fix`), if given.
    pub label: Option<String>,
    /// The command line that produced it.
    pub command_line: Vec<String>,
    /// When it started, Unix seconds.
    pub started_unix: f64,
    /// The host it ran on.
    pub host: String,
    /// What it wrote.
    pub report: Report,
}

/// An A/B comparison to report: `atomlab compare A B`'s result.
#[derive(Debug, Clone)]
pub struct ComparisonView {
    /// What A is (a run id or label).
    pub a_name: String,
    /// What B is.
    pub b_name: String,
    /// The gate's threshold, a fraction (0.02 = 2 %).
    pub threshold: f64,
    /// The comparison.
    pub result: AbResult,
}

/// Whether the records come from more than one run (tables then show a
/// run column).
fn runs_differ(recs: &[Rec<'_>]) -> bool {
    recs.windows(2).any(|w| w[0].run != w[1].run)
}

/// The name a run goes by in charts' legends: its label, else its id.
fn run_name(run: &RunView) -> String {
    match &run.label {
        Some(l) if !l.is_empty() => l.clone(),
        _ => run.id.clone(),
    }
}

/// A run as the tables' run column names it: its id (what `atomlab show`
/// takes), then its label when it has one.
fn run_column(run: &RunView) -> String {
    match &run.label {
        Some(l) if !l.is_empty() => format!("{} ({l})", run.id),
        _ => run.id.clone(),
    }
}

const CSS: &str = r#"
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
  margin: 0 auto; max-width: 1200px; padding: 1rem 1.5rem 3rem; color: #1b1b1b; background: #fff; line-height: 1.4; }
h1 { font-size: 1.6rem; margin: .5rem 0; }
h2 { font-size: 1.35rem; border-bottom: 2px solid #ddd; padding-bottom: .2rem; margin-top: 2.2rem; }
h3 { font-size: 1.12rem; margin-top: 1.6rem; }
h4 { font-size: 1rem; margin: 1rem 0 .3rem; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .4rem 1rem; }
.scroll { overflow-x: auto; margin: .5rem 0 1rem; }
table { border-collapse: collapse; font-size: .88rem; }
th, td { border: 1px solid #d4d4d4; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
tbody tr:nth-child(even) { background: #fafafa; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.wide { min-width: 22rem; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .85em; }
pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; }
.ok { color: #1b5e20; } td.ok { background: #e8f5e9; }
.warn { color: #8a4b00; } td.warn { background: #fff4e0; }
.bad { color: #b71c1c; } td.bad { background: #fdecea; }
td.never { background: #eef3fb; } td.sometimes { background: #fff8e1; } td.always { background: #fdecea; }
figure.chart { margin: 1rem 0 1.5rem; padding: .5rem; border: 1px solid #e2e2e2; background: #fff; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figcaption { font-size: .9rem; color: #444; margin-top: .3rem; }
ul.legend { list-style: none; padding: 0; margin: .3rem 0; display: flex; flex-wrap: wrap; gap: .2rem 1.2rem; font-size: .88rem; }
.swatch { display: inline-block; width: 2rem; height: 0; margin-right: .4rem; vertical-align: middle; }
ul.notes, ul.flags { font-size: .88rem; color: #444; }
p.states span { display: inline-block; margin: 0 1.2rem .2rem 0; }
div.pair { display: flex; flex-wrap: wrap; gap: 0 1.5rem; align-items: flex-start; }
div.pair > figure.chart { flex: 1 1 520px; min-width: 0; }
div.pair > .scroll { flex: 0 1 auto; }
details { margin: .3rem 0; }
details.explain { border: 1px solid #e2e2e2; padding: .3rem .6rem; }
details > summary { cursor: pointer; }
p.lead { color: #333; }
footer { margin-top: 3rem; font-size: .8rem; color: #666; }
"#;

/// What draws a kind's section of the page ([`kinds::Kind::section`]).
type SectionFn = fn(&mut String, &[RunView], &[Rec<'_>]);

/// The whole report as one HTML document.
pub fn render_html(runs: &[RunView], comparison: Option<&ComparisonView>) -> String {
    let mut out = String::with_capacity(64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    // Defence in depth: even markup that slipped through escaping could
    // load or run nothing.
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let title = match runs {
        [one] => format!("atomlab report: {} ({})", run_name(one), one.report.command),
        _ => format!("atomlab report: {} runs", runs.len()),
    };
    let _ = writeln!(out, "<title>{}</title>", esc(&title));
    let _ = writeln!(out, "<style>{CSS}</style>\n</head>\n<body>");
    let _ = writeln!(out, "<header><h1>{}</h1></header>", esc(&title));

    // Records by capability, in the order they come.
    let all: Vec<Rec<'_>> = runs
        .iter()
        .enumerate()
        .flat_map(|(run, v)| v.report.records.iter().map(move |r| Rec { run, r }))
        .collect();
    let of = |cap: &str| -> Vec<Rec<'_>> {
        all.iter()
            .copied()
            .filter(|x| x.r.capability == cap)
            .collect()
    };
    // The kinds with a section of their own, in the page's order.
    let sections: Vec<(&str, SectionFn, Vec<Rec<'_>>)> = kinds::KINDS
        .iter()
        .filter_map(|k| k.section.map(|draw| (k.name, draw, of(k.name))))
        .filter(|(_, _, recs)| !recs.is_empty())
        .collect();
    let other_recs: Vec<Rec<'_>> = all
        .iter()
        .copied()
        .filter(|x| kinds::find(&x.r.capability).is_none_or(|k| k.section.is_none()))
        .collect();

    let mut nav = vec![("runs", "runs and machines")];
    if comparison.is_some() {
        nav.push(("comparison", "comparison"));
    }
    for (name, _, _) in &sections {
        nav.push((name, name));
    }
    if !other_recs.is_empty() {
        nav.push(("other", "other records"));
    }
    out.push_str("<nav><ul>");
    for (id, words) in &nav {
        let _ = write!(out, "<li><a href=\"#{id}\">{words}</a></li>");
    }
    out.push_str("</ul></nav>\n");

    runs_section(&mut out, runs);
    if let Some(c) = comparison {
        compare::section(&mut out, c);
    }
    for (name, draw, recs) in &sections {
        let _ = writeln!(out, "<section id=\"{0}\">\n<h2>{0}</h2>", name);
        draw(&mut out, runs, recs);
        out.push_str("</section>\n");
    }
    if !other_recs.is_empty() {
        out.push_str("<section id=\"other\">\n<h2>other records</h2>\n");
        show_view::other(&mut out, runs, &other_recs);
        out.push_str("</section>\n");
    }
    if runs.is_empty() && comparison.is_none() {
        out.push_str("<p>No runs to report.</p>\n");
    }
    let _ = writeln!(
        out,
        "<footer>Written by atomlab-report {}. Self-contained: no scripts, fonts or \
         links outside this file.</footer>\n</body>\n</html>",
        esc(env!("CARGO_PKG_VERSION"))
    );
    out
}

fn runs_section(out: &mut String, runs: &[RunView]) {
    out.push_str("<section id=\"runs\">\n<h2>runs and machines</h2>\n");
    let mut machines: Vec<&Machine> = Vec::new();
    for r in runs {
        if !machines.contains(&&r.report.machine) {
            machines.push(&r.report.machine);
        }
    }
    let machine_no = |m: &Machine| machines.iter().position(|x| *x == m).unwrap_or(0) + 1;

    let mut t = Table::with_header(&[
        "run",
        "label",
        "started",
        "host",
        "command line",
        "command",
        "atomlab",
        "machine",
        "records",
    ]);
    for r in runs {
        t.row(vec![
            Cell::html(format!("<code>{}</code>", esc(&r.id))),
            Cell::text(r.label.as_deref().unwrap_or("-")),
            Cell::text(utc(r.started_unix)),
            Cell::text(&r.host),
            Cell::html(format!(
                "<code>{}</code>",
                esc(&command_line(&r.command_line))
            ))
            .class("wide"),
            Cell::text(&r.report.command),
            Cell::text(&r.report.atomlab_version),
            Cell::num(format!("#{}", machine_no(&r.report.machine))),
            Cell::num(r.report.records.len().to_string()),
        ]);
    }
    t.html(out);

    for r in runs {
        if r.report.notes.is_empty() && r.report.errors.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<h4>run {}</h4><ul class=\"notes\">",
            esc(&run_name(r))
        );
        for n in &r.report.notes {
            let _ = writeln!(out, "<li>note: {}</li>", esc(n));
        }
        for e in &r.report.errors {
            let _ = writeln!(
                out,
                "<li class=\"bad\">input not used: {}</li>",
                esc(&e.to_string())
            );
        }
        out.push_str("</ul>\n");
    }

    for (i, m) in machines.iter().enumerate() {
        let _ = writeln!(out, "<h3>machine #{}</h3>", i + 1);
        let mut t = Table::with_header(&["", ""]).class("kv");
        for (k, v) in m.facts() {
            t.row(vec![Cell::text(k), Cell::text(v)]);
        }
        t.html(out);
        if m.emulated {
            out.push_str(
                "<p class=\"warn\">Emulated: no weak-memory behaviour and no meaningful \
                 timings.</p>\n",
            );
        } else if m.virtualised {
            out.push_str(
                "<p class=\"warn\">Virtualised: expect noisy neighbours and no hardware \
                 counters.</p>\n",
            );
        }
    }
    out.push_str("</section>\n");
}
