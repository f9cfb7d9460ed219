//! The report rendered from the sample documents, checked for structure:
//! a chart per bench scenario with real SVG, units on the axes, nothing
//! fetched from outside, escaping, flags, and the comparison section.

mod common;

use atomlab_core::{FlagKind, Metric, Record, Verdict};
use atomlab_report::render_html;
use common::{comparison, figures, run};

fn bench_scenarios(runs: &[atomlab_report::RunView]) -> Vec<String> {
    let mut s: Vec<String> = Vec::new();
    for r in runs.iter().flat_map(|r| &r.report.records) {
        if r.capability == "bench" && !s.contains(&r.scenario) {
            s.push(r.scenario.clone());
        }
    }
    s
}

/// Every `http://` or `https://` in `html` is the SVG namespace.
fn assert_self_contained(html: &str) {
    for (i, _) in html.match_indices("http") {
        let rest = &html[i..];
        if rest.starts_with("http://") || rest.starts_with("https://") {
            assert!(
                rest.starts_with("http://www.w3.org/2000/svg\""),
                "external reference: {}",
                &rest[..rest.len().min(80)]
            );
        }
    }
    let lower = html.to_ascii_lowercase();
    for bad in [
        "<script", "<link", "<img", "<iframe", "<object", "<embed", "@import", "url(",
    ] {
        assert!(!lower.contains(bad), "{bad} in the report");
    }
}

fn assert_chart_drawn(name: &str, fig: &str) {
    assert!(fig.contains("<svg"), "{name}: no svg");
    assert!(fig.contains("</svg>"), "{name}: svg not closed");
    assert!(
        ["<path", "<polyline", "<rect", "<circle", "<line"]
            .iter()
            .any(|e| fig.contains(e)),
        "{name}: no shapes"
    );
    assert!(fig.contains("<text"), "{name}: no axis text");
    assert!(fig.contains("<figcaption>"), "{name}: no caption");
}

#[test]
fn bench_sample_has_a_chart_per_scenario_with_units() {
    let runs = [run("bench-counter.json", "r1", Some("baseline"))];
    let html = render_html(&runs, None);
    assert_self_contained(&html);
    let figs = figures(&html);
    assert_eq!(figs.len(), 1);
    let (name, fig) = &figs[0];
    assert_eq!(name, "bench-counter");
    assert_chart_drawn(name, fig);
    // Threads 1 and 2: a line chart with both axes named with units.
    assert!(fig.contains(">\nthreads\n</text>"), "x axis named");
    assert!(fig.contains("ns per op (median; bars: min–max over runs)"));
    // Two variants, two thread counts: four points.
    assert_eq!(fig.matches("<circle").count(), 4);
    assert!(fig.contains("fetch_add/seq_cst · shared"));
    // Table of figures.
    assert!(html.contains("<th scope=\"col\">ns/op</th>"));
    assert!(html.contains("<th scope=\"col\">ops/s</th>"));
    assert!(html.contains("<th scope=\"col\">cv (ns/op)</th>"));
    assert!(html.contains("<th scope=\"col\">status</th>"));
    // Top: machine and run.
    assert!(html.contains("AMD EPYC"));
    assert!(html.contains("2026-12-01 04:32:26 UTC"));
    assert!(html.contains("ci-runner-1"));
    assert!(html.contains("<code>atomlab bench --json</code>"));
}

#[test]
fn suite_sample_charts_every_scenario_and_tabulates_every_shape() {
    let runs = [run("suite.json", "suite-1", None)];
    let html = render_html(&runs, None);
    assert_self_contained(&html);
    let figs = figures(&html);
    let scenarios = bench_scenarios(&runs);
    assert_eq!(
        scenarios,
        ["counter", "refcount", "lock", "fence", "pingpong"].map(String::from)
    );
    assert_eq!(figs.len(), scenarios.len());
    for (s, (name, fig)) in scenarios.iter().zip(&figs) {
        assert_eq!(name, &format!("bench-{s}"));
        assert_chart_drawn(name, fig);
    }
    let fig = |n: &str| figs.iter().find(|(name, _)| name == n).unwrap().1;
    // fence ran at one thread count: a row per variant, ns/op on x.
    assert!(fig("bench-fence").contains("ns per op (median; bars: min–max over runs)"));
    assert!(fig("bench-fence").contains("mfence"));
    assert!(fig("bench-pingpong").contains("ns per round trip"));
    assert!(fig("bench-pingpong").contains("cpu 0 ↔ cpu 1"));
    // Counter: private and shared lines.
    assert!(fig("bench-counter").contains("dashed: private"));
    // Refcount cells that ran one at a time are drawn hollow.
    assert!(fig("bench-refcount").contains("hollow points"));
    // The lock's fixed-work table, and the flags' words.
    assert!(html.contains("fixed work: every increment done"));
    assert!(html.contains("<th scope=\"col\">ns per increment</th>"));
    // Times carry their unit in the cell (units::duration).
    assert!(html.contains("<th scope=\"col\">median</th>"));
    assert!(html.contains("not contended as asked"));
    // Stress.
    assert!(html.contains("<section id=\"stress\">"));
    assert!(html.contains("<td class=\"bad\">") || html.contains("broken-dekker-nofence"));
    // For people: NOT OBSERVED (NOT_OBSERVED is the machines' spelling).
    assert!(html.contains(">NOT OBSERVED</td>"));
    assert!(
        html.contains("<td class=\"ok\">FAIL</td>"),
        "a broken variant caught"
    );
    assert!(html.contains("mutual_exclusion 427"));
    // Check, from the suite.
    assert!(html.contains("<section id=\"check\">"));
    assert!(html.contains("Sometimes (4)"));
}

#[test]
fn check_sample_shows_the_matrix_and_explanations() {
    let mut r = run("check.json", "chk", None);
    // A test the checker gave up on, with a name that is markup.
    let mut t = Record::new("check", "<img src=x onerror=alert(1)>", "c11");
    t.verdict = Some(Verdict::Timeout);
    t.notes.push("gave up after the per-test timeout".into());
    r.report.records.push(t);
    let html = render_html(&[r], None);
    assert_self_contained(&html);
    assert!(figures(&html).is_empty(), "no bench, no chart");
    // Models as columns, observations with state counts in the cells.
    for model in ["sc", "x86tso", "aarch64", "c11", "rc11"] {
        assert!(html.contains(&format!("<th scope=\"col\">{model}</th>")));
    }
    assert!(html.contains(">Never (15)</td>"));
    assert!(html.contains(">Sometimes (16)</td>"));
    assert!(html.contains("race</td>"), "the racy test is marked");
    assert!(html.contains(">TIMEOUT</td>"));
    // Explanations fold away and carry axiom, cycle and witness.
    assert!(html.contains("<details class=\"explain\""));
    assert!(html.contains("<strong>IRIW+acq</strong>: 3 forbidden outcome(s) explained"));
    assert!(html.contains("-rfe-&gt; b: P1 Rx=1[acq]"));
    assert!(html.contains("<td>tso</td>"));
    assert!(html.contains("witness (an execution"));
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
}

#[test]
fn audit_sample_shows_the_binary_verdict() {
    let html = render_html(&[run("audit.json", "a1", None)], None);
    assert_self_contained(&html);
    assert!(html.contains("<section id=\"audit\">"));
    assert!(html.contains("<code>target/debug/atomlab</code>"));
    assert!(html.contains("x86-64 locked atomics: 2416 lock-prefixed ops"));
    assert!(html.contains("locked_rmw 2416"));
    assert!(html.contains("<code>lock cmpxchg</code>"));
}

#[test]
fn strings_from_the_data_are_escaped() {
    let evil = "<script>alert(1)</script>";
    let mut r = run("bench-counter.json", "id\"><b>x</b>", Some(evil));
    r.host = evil.into();
    r.command_line.push(evil.into());
    r.report.records[0].variant = evil.into();
    r.report.records[0].notes.push(evil.into());
    r.report.notes.push(evil.into());
    let mut other = run("bench-counter.json", "r2", Some("other"));
    other.report.records[1].variant = "x<y".into();
    let html = render_html(&[r, other], None);
    assert!(!html.contains(evil), "raw markup from the data");
    assert!(!html.to_ascii_lowercase().contains("<script"));
    assert!(!html.contains("<b>x</b>"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // In the chart too (plotters escapes its text; the legend is ours).
    let figs = figures(&html);
    assert!(figs[0].1.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(figs[0].1.contains("x&lt;y"));
    assert_self_contained(&html);
}

#[test]
fn implausible_records_are_not_drawn_and_show_no_figures() {
    let mut r = run("bench-counter.json", "r1", None);
    let rec = &mut r.report.records[1];
    assert_eq!(rec.parameters["threads"], 2);
    for m in &mut rec.metrics {
        for s in &mut m.samples {
            *s = 5e6;
        }
        *m = Metric::new(m.name.clone(), m.unit, m.source.clone(), m.samples.clone());
    }
    rec.flag(
        FlagKind::Implausible,
        Some("ns_per_op"),
        "faster than one atomic RMW",
    );
    let html = render_html(&[r], None);
    let figs = figures(&html);
    let fig = figs[0].1;
    assert_eq!(fig.matches("<circle").count(), 3, "one point left out");
    assert!(!fig.contains("M\n</text>") && !fig.contains("k\n</text>"));
    assert!(fig.contains("1 record(s) flagged implausible are not drawn"));
    assert!(html.contains("<td class=\"bad\">implausible</td>"));
    assert!(!html.contains("5.00M"), "no figure of it anywhere");
}

#[test]
fn runs_on_two_machines_show_both_fingerprints() {
    let a = run("bench-counter.json", "r1", Some("before"));
    let mut b = run("bench-counter.json", "r2", Some("after"));
    b.report.machine.cpu_model = "Neoverse-N1".into();
    b.report.machine.arch = "aarch64".into();
    let html = render_html(&[a, b], None);
    assert!(html.contains("<h3>machine #1</h3>"));
    assert!(html.contains("<h3>machine #2</h3>"));
    assert!(html.contains("Neoverse-N1"));
    // One chart, a line per run and variant.
    let figs = figures(&html);
    assert_eq!(figs.len(), 1);
    assert!(figs[0].1.contains("before: fetch_add/seq_cst · shared"));
    assert!(figs[0].1.contains("after: cas_loop/seq_cst · shared"));
    assert!(html.contains("<th scope=\"col\">run</th>"));
}

#[test]
fn comparison_lists_changed_verdicts_first_then_the_metrics_and_a_chart() {
    let c = comparison();
    let html = render_html(&[run("bench-counter.json", "r1", None)], Some(&c));
    assert_self_contained(&html);
    let sec = &html[html.find("<section id=\"comparison\">").unwrap()..];
    let sec = &sec[..sec.find("</section>").unwrap()];
    let verdicts = sec.find("<h3>changed verdicts</h3>").unwrap();
    let metrics = sec.find("<h3>metrics</h3>").unwrap();
    assert!(verdicts < metrics);
    assert!(sec.contains("tas&lt;1&gt;"));
    assert!(sec.contains("&lt;feature&gt;"));
    assert!(!sec.contains("<feature>"));
    assert!(
        sec.contains("3 regression(s)"),
        "FAIL and fetch_add's two metrics"
    );
    // The table: medians, change, interval, p, p (Holm), verdict, in the
    // terminal's words: one judgement shown the same way in both (the
    // report said "12 too noisy" where the terminal judged 9 and left 3
    // unjudged, had no Holm column and printed medians in raw seconds).
    assert!(sec.contains("+20.00%"), "{sec}");
    assert!(sec.contains("worse (regression)"));
    assert!(sec.contains(">better</td>"));
    assert!(sec.contains("<th scope=\"col\">p</th>"));
    assert!(sec.contains("<th scope=\"col\">p (Holm)</th>"));
    let mut terminal = Vec::new();
    atomlab_report::compare_view::write_terminal(&mut terminal, &c.result, "A", "B", 1.0, 0.05)
        .unwrap();
    let terminal = String::from_utf8(terminal).unwrap();
    for row in &c.result.rows {
        let cells = atomlab_report::compare_view::metric_cells(row);
        assert!(
            sec.contains(&format!(">{}</td>", cells[7])),
            "{}: {sec}",
            cells[7]
        );
        assert!(terminal.contains(&cells[7]), "{}: {terminal}", cells[7]);
    }
    // The chart: one whisker per judged row, the zero line, the band, units.
    let figs = figures(sec);
    assert_eq!(figs.len(), 1);
    let (name, fig) = &figs[0];
    assert_eq!(name, "comparison");
    assert_chart_drawn(name, fig);
    assert!(fig.contains("change, % (B vs A)"));
    assert!(fig.contains("#1 counter fetch_add 1t shared ns_per_op"));
    // Plus the bench chart of the run: two figures in all.
    assert_eq!(figures(&html).len(), 2);
}

#[test]
fn nothing_to_report_is_still_a_page() {
    let html = render_html(&[], None);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("No runs to report."));
    assert!(html.trim_end().ends_with("</html>"));
}

/// The `<section id="ID">` of `html`, up to the next top-level section.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no {id} section"));
    let rest = &html[start + 1..];
    let end = rest
        .find("\n<section id=")
        .map_or(html.len(), |e| start + 1 + e);
    &html[start..end]
}

/// `bench spsc` at two offered rates, spinning and sleeping (the records
/// of `atomlab bench spsc --rate 100k,1M --wait spin` and `--wait
/// notify`): a chart per side with a line per variant and wait mode, and
/// the queue table with a row per variant, wait and rate.
#[test]
fn spsc_sample_charts_each_sides_cpu_against_the_offered_rate() {
    let runs = [run("spsc.json", "spsc-1", None)];
    let recs = &runs[0].report.records;
    let html = render_html(&runs, None);
    assert_self_contained(&html);
    let figs = figures(&html);
    let names: Vec<&str> = figs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["bench-spsc-producer", "bench-spsc-consumer"]);
    let lines: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for r in recs {
            let line = format!("{} · {}", r.variant, r.parameters["wait"].as_str().unwrap());
            if !v.contains(&line) {
                v.push(line);
            }
        }
        v
    };
    assert!(lines.len() >= 4, "variants × spin and notify: {lines:?}");
    for (name, fig) in &figs {
        assert_chart_drawn(name, fig);
        assert_eq!(fig.matches("<li>").count(), lines.len(), "{name}: {fig}");
        for line in &lines {
            assert!(
                fig.contains(&format!("</span>{line}</li>")),
                "{name}: {line}"
            );
        }
        // A point per record on each side; a hollow one (the rate not
        // sustained) is a white disc inside a coloured ring.
        let hollow = recs
            .iter()
            .filter(|r| r.flagged(FlagKind::RateNotSustained))
            .count();
        assert_eq!(
            fig.matches("<circle").count(),
            recs.len() + hollow,
            "{name}"
        );
        assert!(fig.contains("offered rate (items/s)"));
    }
    // The queue table: the terminal's, with every figure the record has.
    let bench = section(&html, "bench");
    for column in [
        "offered/s",
        "achieved/s",
        "prod cpu %",
        "cons cpu %",
        "p50",
        "p99",
        "p99.9",
        "wakes/item",
    ] {
        assert!(
            bench.contains(&format!("<th scope=\"col\">{column}</th>")),
            "{column}"
        );
    }
    let rows = bench.split("<tr>").filter(|r| r.contains("<td")).count();
    assert_eq!(rows, recs.len(), "a row per record");
    assert!(!bench.contains("nothing to draw"));
}

/// A load run (`atomlab load -d 3`): its section with the percentiles,
/// the per-second timeline and a table row; not "other records".
#[test]
fn load_sample_gets_percentiles_a_timeline_and_a_row() {
    let runs = [run("load.json", "20261202-101010-0000000a", Some("nginx"))];
    let html = render_html(&runs, None);
    // The URL loaded is data in a cell, not a link (assert_self_contained
    // would take it for one).
    assert!(!html.contains("href=\"http"));
    assert!(!html.to_ascii_lowercase().contains("<script"));
    assert!(!html.contains("id=\"other\""));
    let load = section(&html, "load");
    let figs = figures(load);
    let names: Vec<&str> = figs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["load-latency", "load-timeline"]);
    for (name, fig) in &figs {
        assert_chart_drawn(name, fig);
    }
    // Six percentiles of one run.
    assert_eq!(figs[0].1.matches("<circle").count(), 6);
    let seconds = runs[0].report.records[0].detail.as_ref().unwrap()["timeline"]
        .as_array()
        .unwrap()
        .len();
    assert!(seconds >= 2, "a timeline of seconds");
    assert_eq!(figs[1].1.matches("<circle").count(), seconds);
    for column in ["requests/s", "p50 ms", "p99 ms", "max ms", "client cpu %"] {
        assert!(
            load.contains(&format!("<th scope=\"col\">{column}</th>")),
            "{column}"
        );
    }
    assert!(load.contains("<td class=\"ok\">PASS</td>"));
}

/// A litmus test run on this CPU: the summary, and the histogram chart
/// beside the table with a column per model.
#[test]
fn run_sample_shows_the_histogram_beside_the_models() {
    let runs = [run("run.json", "20261202-101010-0000000b", None)];
    let r = &runs[0].report.records[0];
    let states = r.detail.as_ref().unwrap()["histogram"]
        .as_array()
        .unwrap()
        .len();
    let html = render_html(&runs, None);
    assert_self_contained(&html);
    assert!(!html.contains("id=\"other\""));
    let sec = section(&html, "run");
    let figs = figures(sec);
    assert_eq!(figs.len(), 1);
    let (name, fig) = &figs[0];
    assert_eq!(name, &format!("run-0-{}", r.scenario.to_lowercase()));
    assert_chart_drawn(name, fig);
    assert!(fig.contains("times seen"));
    // A count per state seen, written at the end of its bar.
    assert!(fig.matches("<rect").count() > states, "{fig}");
    let pair = &sec[sec.find("<div class=\"pair\">").unwrap()..];
    assert!(pair.contains("<th scope=\"col\">final state</th>"));
    let rows = pair[..pair.find("</table>").unwrap()]
        .split("<tr>")
        .filter(|r| r.contains("<td"))
        .count();
    assert!(rows >= states, "a row per state");
    assert!(sec.contains("<th scope=\"col\">hardware</th>"));
}

/// Audit: a bar per verdict, packages worst first, the one that crashes
/// on ARMv8.0 red.
#[test]
fn audit_counts_each_verdict() {
    let mut r = run("audit.json", "a1", None);
    for (name, kind) in [
        ("nginx", "needs_armv8.1"),
        ("libc6", "run_time_lse"),
        ("openssl", "run_time_lse"),
    ] {
        let mut p = Record::new("audit", name, "package");
        p.detail = Some(serde_json::json!({"verdict": {"kind": kind, "words": "-"}}));
        r.report.records.push(p);
    }
    let html = render_html(&[r], None);
    let audit = section(&html, "audit");
    let figs = figures(audit);
    assert_eq!(figs.len(), 1);
    let (name, fig) = &figs[0];
    assert_eq!(name, "audit-verdicts");
    assert_chart_drawn(name, fig);
    for label in [
        "package: needs ARMv8.1 (SIGILL on ARMv8.0)",
        "package: outline or run-time LSE (ARMv8.0-safe)",
        "binary: x86 locked",
    ] {
        assert!(
            fig.contains(&format!(">\n{label}\n</text>")),
            "{label}: {fig}"
        );
    }
    assert!(fig.contains("red: LSE behind no CPU-feature test"), "{fig}");
    assert!(fig.contains("#C62828"), "red for SIGILL on ARMv8.0");
    // Counts on the axis are whole numbers.
    for fraction in ["0.2", "0.5", "1.5"] {
        assert!(!fig.contains(&format!(">\n{fraction}\n</text>")), "{fig}");
    }
    assert!(
        fig.contains("how many binaries and packages got each verdict (4 in all)"),
        "{fig}"
    );
}

/// A capability the report has no section for falls under "other
/// records", its run named by its id.
#[test]
fn other_records_name_their_run_by_id() {
    let mut r = run(
        "bench-counter.json",
        "20261202-101010-0000000c",
        Some("lbl"),
    );
    let mut odd = Record::new("future", "thing", "x");
    odd.verdict = Some(Verdict::Pass);
    r.report.records.push(odd);
    let html = render_html(&[r], None);
    let other = section(&html, "other");
    assert!(
        other.contains("<td>20261202-101010-0000000c (lbl)</td>"),
        "{other}"
    );
}
