//! The run section: litmus tests run on the real CPU (like litmus7's
//! logs). Per run the summary table `atomlab show` prints, then per test a
//! chart of how often each final state was seen beside its histogram table
//! (a column per model: allowed or FORBIDDEN), the models' verdicts and
//! any forbidden outcome observed with its replay line. The tables are
//! [`super::view`]'s, the terminal's, in HTML.

use std::fmt::Write;

use atomlab_core::Record;
use serde_json::Value;

use super::view::{self, EMULATED};
use crate::charts::{self, Bar, Tone};
use crate::html::{count, esc, slug};
use crate::Rec;
use crate::{run_column, RunView};

fn detail<'a>(r: &'a Record, key: &str) -> &'a [Value] {
    r.detail
        .as_ref()
        .and_then(|d| d.get(key))
        .and_then(|v| v.as_array())
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(|x| x.as_str()).unwrap_or("")
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(|x| x.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The bars of a test's chart: a bar per final state seen, then the
/// allowed states not seen (0); red where a model forbids what was seen,
/// the witness (the condition's outcome) in the second colour.
pub(crate) fn bars(r: &Record) -> Vec<Bar> {
    let mut out = Vec::new();
    for (h, seen) in detail(r, "histogram")
        .iter()
        .map(|h| (h, true))
        .chain(detail(r, "not_observed").iter().map(|h| (h, false)))
    {
        let witness = h.get("witness").and_then(|w| w.as_bool()) == Some(true);
        let forbidden_by = names(h, "forbidden_by");
        let mut label = str_of(h, "state").to_string();
        if witness {
            label.push_str(" *");
        }
        let tone = if seen && !forbidden_by.is_empty() {
            label.push_str(&format!(" (forbidden by {})", forbidden_by.join(", ")));
            Tone::Bad
        } else if witness {
            Tone::Plain(1)
        } else {
            Tone::Plain(0)
        };
        out.push(Bar {
            label,
            value: if seen {
                h.get("count").and_then(|c| c.as_f64()).unwrap_or(0.0)
            } else {
                0.0
            },
            tone,
        });
    }
    out
}

/// Draws the run records of every run: per run its summary table, then
/// each test's chart and histogram.
pub(crate) fn section(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    out.push_str(
        "<p class=\"lead\">Each litmus test ran many times on this CPU. The chart counts \
         each final state seen (<q>*</q>: the condition's outcome, the witness); the table \
         beside it says which model allows it. A state a model forbids that the CPU showed \
         is red: a CPU erratum, a wrong model or, under emulation, the emulator.</p>\n",
    );
    let mut order: Vec<usize> = recs.iter().map(|x| x.run).collect();
    order.dedup();
    let multi = order.len() > 1;
    for run in order {
        let mine: Vec<&Record> = recs.iter().filter(|x| x.run == run).map(|x| x.r).collect();
        let view = &runs[run];
        if multi {
            let _ = writeln!(out, "<h3>run {}</h3>", esc(&run_column(view)));
        }
        if view.report.machine.emulated {
            let _ = writeln!(out, "<p class=\"warn\">{}</p>", esc(EMULATED));
        }
        let mut summary = view::records_table(mine.iter().copied());
        summary.drop_blank_columns();
        summary.html(out);
        for r in mine {
            test(out, run, r);
        }
    }
}

/// One test: the chart of its final states beside its histogram table,
/// then the models' verdicts and what went wrong.
fn test(out: &mut String, run: usize, r: &Record) {
    let name = &r.scenario;
    let id = format!("run-{run}-{}", slug(name));
    let param = |k: &str| match r.parameters.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".into(),
    };
    let metric = |k: &str| r.metric(k).and_then(|m| m.median()).unwrap_or(0.0);
    let _ = writeln!(
        out,
        "<section class=\"test\" id=\"{id}\">\n<h4>{} <small>(<code>{}</code>): {} instances, \
         condition <code>{}</code></small></h4>",
        esc(name),
        esc(&param("file")),
        count(metric("instances")),
        esc(&param("condition"))
    );
    if let Some(reason) = r.parameters.get("not_run").and_then(|v| v.as_str()) {
        let _ = writeln!(
            out,
            "<p class=\"warn\">not run: {}</p>\n</section>",
            esc(reason)
        );
        return;
    }
    let verdicts: Vec<String> = detail(r, "models")
        .iter()
        .map(|m| {
            let states = m
                .get("allowed_states")
                .and_then(|s| s.as_array())
                .map(|s| format!(" ({})", s.len()))
                .unwrap_or_default();
            format!(
                "{}: {}{states}",
                str_of(m, "model"),
                str_of(m, "observation")
            )
        })
        .collect();
    let bars = bars(r);
    let forbidden = bars.iter().filter(|b| b.tone == Tone::Bad).count();
    let mut caption = format!(
        "{name}: times each final state was seen; models: {}",
        if verdicts.is_empty() {
            "none judged it".to_string()
        } else {
            verdicts.join("; ")
        }
    );
    if forbidden > 0 {
        let _ = write!(caption, "; {forbidden} forbidden state(s) seen, in red");
    }
    out.push_str("<div class=\"pair\">\n");
    out.push_str(&charts::figure(
        &id,
        charts::bar_chart(&bars, "times seen"),
        &format!("{name}: final states seen"),
        "",
        &esc(&caption),
    ));
    view::histogram_table(r).html(out);
    out.push_str("</div>\n");
    let mut lines: Vec<(String, &str)> = vec![(
        format!(
            "Observation {name} {} {} {}",
            param("observation"),
            metric("positive"),
            metric("negative")
        ),
        "",
    )];
    for x in detail(r, "forbidden") {
        lines.push((
            format!(
                "FORBIDDEN OUTCOME OBSERVED: {} seen {} times, forbidden by {}",
                str_of(x, "state"),
                x.get("count").and_then(|c| c.as_u64()).unwrap_or(0),
                str_of(x, "model")
            ),
            "bad",
        ));
    }
    if let Some(replay) = r
        .detail
        .as_ref()
        .and_then(|d| d.get("replay"))
        .and_then(|x| x.as_str())
    {
        lines.push((format!("replay: {replay}"), ""));
    }
    for n in &r.notes {
        if !n.starts_with("FORBIDDEN OUTCOME OBSERVED") {
            lines.push((format!("note: {n}"), ""));
        }
    }
    out.push_str("<ul class=\"notes\">\n");
    for (line, class) in lines {
        if class.is_empty() {
            let _ = writeln!(out, "<li>{}</li>", esc(&line));
        } else {
            let _ = writeln!(out, "<li class=\"{class}\">{}</li>", esc(&line));
        }
    }
    out.push_str("</ul>\n</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::{Metric, Report, Source, Unit, Verdict};
    use serde_json::json;

    /// A run of SB on a CPU that (wrongly) showed sc's forbidden state, as
    /// atomlab-run's batch records it.
    fn sb() -> Record {
        let mut r = Record::new("run", "SB", "x86_64");
        r.param("file", "SB.litmus")
            .param("observation", "Sometimes")
            .param("condition", "exists (0:EAX=0 /\\ 1:EAX=0)");
        for (name, v) in [("instances", 10.0), ("positive", 3.0), ("negative", 7.0)] {
            r.metrics
                .push(Metric::new(name, Unit::Count, Source::Derived, vec![v]));
        }
        r.detail = Some(json!({
            "kind": "Allowed",
            "replay": "atomlab run SB.litmus --seed 1",
            "models": [
                {"model": "x86tso", "observation": "Sometimes", "allowed_states": ["a", "b", "c"]},
                {"model": "sc", "observation": "Never", "allowed_states": ["a", "b"]},
            ],
            "histogram": [
                {"count": 7, "state": "0:EAX=1; 1:EAX=0;", "allowed_by": ["x86tso", "sc"], "forbidden_by": []},
                {"count": 3, "state": "0:EAX=0; 1:EAX=0;", "witness": true, "allowed_by": ["x86tso"], "forbidden_by": ["sc"]},
            ],
            "not_observed": [
                {"state": "0:EAX=1; 1:EAX=1;", "allowed_by": ["x86tso", "sc"]},
            ],
            "forbidden": [{"model": "sc", "state": "0:EAX=0; 1:EAX=0;", "count": 3}],
        }));
        r.verdict = Some(Verdict::Fail);
        r
    }

    fn render(records: Vec<Record>) -> String {
        let runs = [RunView {
            id: "20261202-130000-00000002".into(),
            label: Some("after".into()),
            command_line: vec!["atomlab".into(), "run".into()],
            started_unix: 0.0,
            host: "h".into(),
            report: Report::new("run", atomlab_core::Machine::detect(), records),
        }];
        let recs: Vec<Rec<'_>> = runs[0]
            .report
            .records
            .iter()
            .map(|r| Rec { run: 0, r })
            .collect();
        let mut out = String::new();
        section(&mut out, &runs, &recs);
        out
    }

    /// A bar per state seen and per allowed state not seen, the forbidden
    /// one red and named, beside the histogram table with a column per
    /// model, and the forbidden outcome with its replay line.
    #[test]
    fn a_test_shows_its_histogram_beside_the_models() {
        let b = bars(&sb());
        assert_eq!(b.len(), 3);
        assert_eq!(b[1].tone, Tone::Bad);
        assert_eq!(b[1].label, "0:EAX=0; 1:EAX=0; * (forbidden by sc)");
        assert_eq!((b[0].value, b[1].value, b[2].value), (7.0, 3.0, 0.0));
        let html = render(vec![sb()]);
        let fig = &html[html.find("<figure").unwrap()..html.find("</figure>").unwrap()];
        assert!(fig.contains("data-chart=\"run-0-sb\""), "{fig}");
        assert!(
            fig.contains("models: x86tso: Sometimes (3); sc: Never (2)"),
            "{fig}"
        );
        assert!(fig.contains("1 forbidden state(s) seen, in red"), "{fig}");
        // The bar chart: one rectangle per state seen over the frame's.
        let frame = charts::bar_chart(&[], "times seen")
            .unwrap()
            .matches("<rect")
            .count();
        assert_eq!(fig.matches("<rect").count(), frame + 2, "{fig}");
        // The histogram table beside it: a column per model, the forbidden
        // state seen marked.
        let pair = &html[html.find("<div class=\"pair\">").unwrap()..];
        assert!(pair.contains("<th scope=\"col\">x86tso</th><th scope=\"col\">sc</th>"));
        assert!(
            pair.contains(
                "<td>0:EAX=0; 1:EAX=0;</td><td>allowed</td><td class=\"bad\">FORBIDDEN</td>"
            ),
            "{pair}"
        );
        assert!(pair.contains("allowed, not observed"));
        assert!(html.contains(
            "<li class=\"bad\">FORBIDDEN OUTCOME OBSERVED: 0:EAX=0; 1:EAX=0; seen 3 times, forbidden by sc</li>"
        ));
        assert!(html.contains("replay: atomlab run SB.litmus --seed 1"));
        // The summary table: the test, the hardware's observation, FAIL.
        assert!(html.contains("<td>Sometimes 3 7</td>"), "{html}");
        assert!(html.contains("<td>FAIL</td>"));
    }
}
