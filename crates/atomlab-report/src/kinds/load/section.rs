//! The load section: HTTP load runs (wrk's figures, and the server's CPU
//! where it was watched). A chart of the latency percentiles (p50 to max,
//! a line per run; coordinated omission corrected at a fixed rate, as
//! wrk2 does), a chart of the requests completed in each second (where a
//! stall or a dying server shows), then the table of every record
//! ([`super::view::table`]) and what went wrong.

use std::fmt::Write;

use atomlab_core::Record;

use super::view::{self, PERCENTILES};
use crate::charts::{self, Point, Series};
use crate::html::esc;
use crate::kinds::bench::tables::Row;
use crate::Rec;
use crate::{run_column, run_name, RunView};

/// One value as a chart point (a load record is one run: no spread).
fn at(x: usize, v: f64) -> Point {
    Point {
        x,
        median: v,
        min: v,
        max: v,
        hollow: false,
    }
}

/// The `(second, requests, errors)` of a record's timeline.
pub(crate) fn timeline(r: &Record) -> Vec<(usize, f64, f64)> {
    r.detail
        .as_ref()
        .and_then(|d| d.get("timeline"))
        .and_then(|t| t.as_array())
        .map(|t| {
            t.iter()
                .filter_map(|s| {
                    let second = usize::try_from(s.get("second")?.as_u64()?).ok()?;
                    let n = |k: &str| s.get(k).and_then(|v| v.as_f64()).unwrap_or(0.0);
                    Some((second, n("requests"), n("errors")))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Each record's name in the charts' legends: its mode, its URL where the
/// records load several, its run's where they come from several; a
/// number after a name given twice.
fn names(runs: &[RunView], recs: &[Rec<'_>], multi: bool) -> Vec<String> {
    let url = |r: &Record| {
        r.parameters
            .get("url")
            .and_then(|u| u.as_str())
            .unwrap_or("-")
            .to_string()
    };
    let urls = recs.iter().any(|x| url(x.r) != url(recs[0].r));
    let mut out: Vec<String> = Vec::new();
    for x in recs {
        let mut name = String::new();
        if multi {
            let _ = write!(name, "{}: ", run_name(&runs[x.run]));
        }
        name.push_str(&x.r.variant);
        if urls {
            let _ = write!(name, " {}", url(x.r));
        }
        let same = out
            .iter()
            .filter(|n| *n == &name || n.starts_with(&format!("{name} (")))
            .count();
        if same > 0 {
            let _ = write!(name, " ({})", same + 1);
        }
        out.push(name);
    }
    out
}

/// The latency percentiles, a line per record, in ms.
fn latency_chart(recs: &[Rec<'_>], names: &[String]) -> String {
    let labels: Vec<String> = PERCENTILES.iter().map(|(_, w)| w.to_string()).collect();
    let series: Vec<Series> = recs
        .iter()
        .zip(names)
        .map(|(x, name)| Series {
            name: name.clone(),
            dashed: false,
            color: None,
            points: PERCENTILES
                .iter()
                .enumerate()
                .filter_map(|(i, (m, _))| {
                    let v = x.r.metric(m)?.median()?;
                    Some(at(i, v * 1e3))
                })
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    let mut caption = String::from(
        "load: latency percentiles, one line per run (at a fixed rate from each request's \
         scheduled send time, so a stall counts for every request it held up)",
    );
    if series.is_empty() {
        caption.push_str("; nothing to draw");
    }
    charts::figure(
        "load-latency",
        charts::line_chart(&labels, "percentile", "latency, ms", &series),
        "load: latency percentiles in ms",
        &charts::legend(&series),
        &esc(&caption),
    )
}

/// The requests completed in each second, a line per record; the errors
/// in each second dashed, where there were any.
fn timeline_chart(recs: &[Rec<'_>], names: &[String]) -> String {
    let lines: Vec<Vec<(usize, f64, f64)>> = recs.iter().map(|x| timeline(x.r)).collect();
    let seconds = lines
        .iter()
        .flatten()
        .map(|(s, _, _)| s + 1)
        .max()
        .unwrap_or(0);
    // About twenty labelled seconds at most; the other ticks unlabelled.
    let every = seconds.div_ceil(20).max(1);
    let labels: Vec<String> = (0..seconds)
        .map(|s| {
            if s % every == 0 {
                s.to_string()
            } else {
                String::new()
            }
        })
        .collect();
    let mut series: Vec<Series> = Vec::new();
    for (i, (line, name)) in lines.iter().zip(names).enumerate() {
        if line.is_empty() {
            continue;
        }
        series.push(Series {
            name: name.clone(),
            dashed: false,
            color: Some(i),
            points: line.iter().map(|(s, n, _)| at(*s, *n)).collect(),
        });
        if line.iter().any(|(_, _, e)| *e > 0.0) {
            series.push(Series {
                name: format!("{name}: errors"),
                dashed: true,
                color: Some(i),
                points: line.iter().map(|(s, _, e)| at(*s, *e)).collect(),
            });
        }
    }
    let mut caption =
        String::from("load: requests completed in each second of the run, one line per run");
    if series.iter().any(|s| s.dashed) {
        caption.push_str(" (dashed: errors in each second)");
    }
    if series.is_empty() {
        caption.push_str("; nothing to draw");
    }
    charts::figure(
        "load-timeline",
        charts::line_chart(
            &labels,
            "second of the run",
            "requests in that second",
            &series,
        ),
        "load: requests per second over the run",
        &charts::legend(&series),
        &esc(&caption),
    )
}

/// Draws the load records of every run: the two charts, the table, then
/// each record's flags, failures and notes.
pub(crate) fn section(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    let multi = recs.windows(2).any(|w| w[0].run != w[1].run);
    let names = names(runs, recs, multi);
    out.push_str(&latency_chart(recs, &names));
    out.push_str(&timeline_chart(recs, &names));
    let columns: Vec<String> = runs.iter().map(run_column).collect();
    let rows: Vec<Row<'_>> = recs
        .iter()
        .map(|x| Row {
            run: multi.then(|| columns[x.run].as_str()),
            record: x.r,
        })
        .collect();
    let mut t = view::table(&rows);
    t.drop_blank_columns();
    t.html(out);
    let mut notes: Vec<String> = Vec::new();
    out.push_str("<ul class=\"notes\">\n");
    for (x, name) in recs.iter().zip(&names) {
        for f in &x.r.flags {
            let _ = writeln!(
                out,
                "<li class=\"warn\">{}: {}: {}</li>",
                esc(name),
                esc(f.kind.words()),
                esc(&f.detail)
            );
        }
        let failures =
            x.r.detail
                .as_ref()
                .and_then(|d| d.get("failures"))
                .and_then(|f| f.as_array())
                .cloned()
                .unwrap_or_default();
        for f in failures {
            let _ = writeln!(
                out,
                "<li class=\"bad\">{}: FAILED: {}</li>",
                esc(name),
                esc(f.as_str().unwrap_or("?"))
            );
        }
        for n in &x.r.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    for n in notes {
        let _ = writeln!(out, "<li>note: {}</li>", esc(&n));
    }
    out.push_str("</ul>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::{Metric, Report, Source, Unit, Verdict};
    use serde_json::json;

    /// A load record as atomlab-load writes it: the percentiles (seconds),
    /// the rates, and the per-second timeline in its detail.
    fn load(variant: &str, p50: f64, timeline: &[(u64, u64, u64)]) -> Record {
        let mut r = Record::new("load", "http", variant);
        r.param("url", "http://127.0.0.1:8080/")
            .param("connections", 4);
        for (i, (name, _)) in PERCENTILES.iter().enumerate() {
            r.metrics.push(Metric::new(
                *name,
                Unit::Seconds,
                Source::ClockGettime,
                vec![p50 * (1.0 + i as f64)],
            ));
        }
        r.metrics.push(Metric::new(
            "requests_per_sec",
            Unit::OpsPerSecond,
            Source::ClockGettime,
            vec![1000.0],
        ));
        r.detail = Some(json!({
            "failures": [],
            "timeline": timeline
                .iter()
                .map(|(s, n, e)| json!({"second": s, "requests": n, "errors": e}))
                .collect::<Vec<_>>(),
        }));
        r.verdict = Some(Verdict::Pass);
        r
    }

    fn render(records: Vec<Record>) -> String {
        let runs = [RunView {
            id: "20261202-130000-00000003".into(),
            label: None,
            command_line: vec!["atomlab".into(), "load".into()],
            started_unix: 0.0,
            host: "h".into(),
            report: Report::new("load", atomlab_core::Machine::detect(), records),
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

    fn figure<'a>(html: &'a str, name: &str) -> &'a str {
        let start = html
            .find(&format!("data-chart=\"{name}\""))
            .unwrap_or_else(|| panic!("no {name} in {html}"));
        &html[start..start + html[start..].find("</figure>").unwrap()]
    }

    /// Two runs (closed and fixed-rate): a line each of six percentiles,
    /// a line each over the seconds and one of errors for the run that
    /// had some; the table's percentiles in ms.
    #[test]
    fn percentiles_and_timeline_a_line_per_run() {
        let html = render(vec![
            load("closed", 0.002, &[(0, 900, 0), (1, 1000, 0), (2, 1100, 0)]),
            load("fixed-rate", 0.004, &[(0, 500, 0), (1, 0, 3), (2, 500, 0)]),
        ]);
        let latency = figure(&html, "load-latency");
        assert_eq!(latency.matches("<circle").count(), 12, "{latency}");
        assert_eq!(latency.matches("<li>").count(), 2, "{latency}");
        for p in ["p50", "p99.9", "max"] {
            assert!(
                latency.contains(&format!(">\n{p}\n</text>")),
                "{p}: {latency}"
            );
        }
        assert!(latency.contains("latency, ms"));
        let timeline = figure(&html, "load-timeline");
        // closed, fixed-rate and fixed-rate's errors, three seconds each.
        assert_eq!(timeline.matches("<li>").count(), 3, "{timeline}");
        assert_eq!(timeline.matches("<circle").count(), 9, "{timeline}");
        assert!(timeline.contains("</span>fixed-rate: errors</li>"));
        assert!(timeline.contains("dashed: errors in each second"));
        // The table: a row per record, p50 in ms.
        assert!(html.contains("<th scope=\"col\">p50 ms</th>"), "{html}");
        assert!(html.contains("<td>closed</td>"));
        assert!(html.contains("<td class=\"n\">2.000</td>"), "{html}");
        assert!(html.contains("<td class=\"ok\">PASS</td>"));
    }
}
