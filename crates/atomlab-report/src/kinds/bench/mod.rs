//! The bench section: per scenario a chart of ns/op against threads (or per
//! variant, or per CPU pair), of the CPU an offered rate costs (fixed-rate
//! records; each side of an SPSC queue), and the tables of every record,
//! the terminal's ([`tables`]) in HTML.

use std::fmt::Write;

use atomlab_core::{FlagKind, Record, TableKind};

use crate::charts::{self, Point, Series};
use crate::html::{esc, param, slug, variant_label};
use crate::{run_column, run_name, Rec, RunView};
use tables::{cpu_pair, Target};

mod rate_charts;
pub(crate) mod tables;

/// What shape of bench record it is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// Runs for a duration, ns/op per thread (counter, refcount, lock, fence).
    Timed,
    /// A fixed number of increments, timed to completion (lock 002).
    FixedWork,
    /// Round trips between two CPUs.
    PingPong,
}

fn shape(r: &Record) -> Shape {
    if r.parameters.get("mode").and_then(|m| m.as_str()) == Some("fixed-work") {
        Shape::FixedWork
    } else if r.metric("ns_per_roundtrip").is_some()
        || TableKind::of(r) == Some(TableKind::RoundTrip)
    {
        Shape::PingPong
    } else {
        Shape::Timed
    }
}

/// The chart's y (or x) metric of a shape and the words of its axis.
fn chart_metric(s: Shape) -> (&'static str, &'static str) {
    match s {
        Shape::Timed => ("ns_per_op", "ns per op (median; bars: min–max over runs)"),
        Shape::FixedWork => (
            "ns_per_op",
            "ns per increment (median; bars: min–max over runs)",
        ),
        Shape::PingPong => (
            "ns_per_roundtrip",
            "ns per round trip (median; bars: min–max over runs)",
        ),
    }
}

fn point(r: &Record, metric: &str, x: usize) -> Option<Point> {
    let s = r.metric(metric)?.summary?;
    Some(Point {
        x,
        median: s.median,
        min: s.min,
        max: s.max,
        hollow: r.flagged(FlagKind::NotContended),
    })
}

fn threads(r: &Record) -> Option<u64> {
    r.parameters.get("threads").and_then(|t| t.as_u64())
}

/// A series' name: variant/ordering and contention, after the run's name
/// when several runs share the chart.
fn series_name(runs: &[RunView], rec: Rec<'_>, multi: bool) -> String {
    let mut name = String::new();
    if multi {
        let _ = write!(name, "{}: ", run_name(&runs[rec.run]));
    }
    name.push_str(&variant_label(rec.r));
    if let Some(c) = rec.r.parameters.get("contention").and_then(|c| c.as_str()) {
        let _ = write!(name, " · {c}");
    }
    name
}

/// Renders the bench section of `recs` (all bench records of all runs).
pub(crate) fn section(out: &mut String, runs: &[RunView], recs: &[Rec<'_>]) {
    let mut scenarios: Vec<&str> = Vec::new();
    for rec in recs {
        if !scenarios.contains(&rec.r.scenario.as_str()) {
            scenarios.push(&rec.r.scenario);
        }
    }
    out.push_str(
        "<p class=\"lead\">Medians over each record's runs; the bars span the fastest and \
         the slowest run. Records flagged <em>implausible</em> are left out of the charts \
         and show no figures in the tables.</p>\n",
    );
    for sc in scenarios {
        let mine: Vec<Rec<'_>> = recs
            .iter()
            .copied()
            .filter(|x| x.r.scenario == sc)
            .collect();
        scenario(out, runs, sc, &mine);
    }
}

fn scenario(out: &mut String, runs: &[RunView], sc: &str, recs: &[Rec<'_>]) {
    let id = slug(sc);
    let _ = writeln!(
        out,
        "<section class=\"scenario\" id=\"bench-{id}\">\n<h3>bench {}</h3>",
        esc(sc)
    );
    let mut multi_runs: Vec<usize> = recs.iter().map(|x| x.run).collect();
    multi_runs.dedup();
    multi_runs.sort_unstable();
    multi_runs.dedup();
    let multi = multi_runs.len() > 1;

    // Queue (spsc) and fixed-rate records have their own tables and
    // charts: what CPU an offered rate costs.
    let kind = |x: &Rec<'_>| TableKind::of(x.r);
    let queue: Vec<Rec<'_>> = recs
        .iter()
        .copied()
        .filter(|x| kind(x) == Some(TableKind::Queue))
        .collect();
    let rate: Vec<Rec<'_>> = recs
        .iter()
        .copied()
        .filter(|x| kind(x) == Some(TableKind::FixedRate))
        .collect();
    let of = |s: Shape| -> Vec<Rec<'_>> {
        recs.iter()
            .copied()
            .filter(|x| !matches!(kind(x), Some(TableKind::Queue | TableKind::FixedRate)))
            .filter(|x| shape(x.r) == s)
            .collect()
    };
    let (timed, fixed, pingpong) = (of(Shape::Timed), of(Shape::FixedWork), of(Shape::PingPong));
    // One chart of ns per operation: the timed records when there are any
    // (their ns/op is per operation and thread); else the fixed-work
    // records (ns per increment), else the round trips.
    let charted = if !timed.is_empty() {
        Some((&timed, Shape::Timed))
    } else if !fixed.is_empty() {
        Some((&fixed, Shape::FixedWork))
    } else if !pingpong.is_empty() {
        Some((&pingpong, Shape::PingPong))
    } else {
        None
    };
    if let Some((charted, s)) = charted {
        chart(out, runs, sc, &id, charted, s, multi);
    }
    if !rate.is_empty() {
        rate_charts::fixed_rate(out, runs, sc, &id, &rate, multi);
    }
    if !queue.is_empty() {
        rate_charts::queue(out, runs, &id, &queue, multi);
    }

    // The tables' rows: each record, after its run's id when several
    // runs share the section.
    let names: Vec<String> = runs.iter().map(run_column).collect();
    let rows = |recs| table_rows(&names, recs, multi);
    if !timed.is_empty() {
        tables::timed(&rows(&timed), Target::Report).html(out);
    }
    if !fixed.is_empty() {
        let _ = writeln!(
            out,
            "<h4>fixed work: every increment done, timed to the end</h4>"
        );
        tables::fixed_work(&rows(&fixed), Target::Report).html(out);
    }
    if !pingpong.is_empty() {
        tables::round_trip(&rows(&pingpong), Target::Report).html(out);
    }
    if !rate.is_empty() {
        let _ = writeln!(out, "<h4>fixed rate: the CPU an offered load needs</h4>");
        tables::fixed_rate(&rows(&rate)).html(out);
    }
    if !queue.is_empty() {
        tables::queue(&rows(&queue)).html(out);
    }
    flags_and_notes(out, runs, recs, multi);
    out.push_str("</section>\n");
}

fn chart(
    out: &mut String,
    runs: &[RunView],
    sc: &str,
    id: &str,
    recs: &[Rec<'_>],
    s: Shape,
    multi: bool,
) {
    let (metric, axis) = chart_metric(s);
    let implausible = recs
        .iter()
        .filter(|x| x.r.flagged(FlagKind::Implausible))
        .count();
    let data: Vec<Rec<'_>> = recs
        .iter()
        .copied()
        .filter(|x| !x.r.flagged(FlagKind::Implausible))
        .filter(|x| x.r.metric(metric).and_then(|m| m.summary).is_some())
        .collect();
    let mut counts: Vec<u64> = data.iter().filter_map(|x| threads(x.r)).collect();
    counts.sort_unstable();
    counts.dedup();
    let hollow = data.iter().any(|x| x.r.flagged(FlagKind::NotContended));

    let _ = writeln!(out, "<figure class=\"chart\" data-chart=\"bench-{id}\">");
    let mut caption = String::new();
    let mut legend = String::new();
    let svg = if s != Shape::PingPong && counts.len() > 1 {
        // ns/op against threads, a line per variant and contention.
        let labels: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
        let mut series: Vec<Series> = Vec::new();
        for x in &data {
            let name = series_name(runs, *x, multi);
            let Some(t) = threads(x.r) else { continue };
            let at = counts.iter().position(|c| *c == t).unwrap_or(0);
            let Some(p) = point(x.r, metric, at) else {
                continue;
            };
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push(p),
                None => series.push(Series {
                    dashed: x.r.parameters.get("contention").and_then(|c| c.as_str())
                        == Some("private"),
                    color: None,
                    name,
                    points: vec![p],
                }),
            }
        }
        for s in &mut series {
            s.points.sort_by_key(|p| p.x);
        }
        let _ = write!(
            caption,
            "bench {}: {} against threads, one line per variant",
            esc(sc),
            if s == Shape::FixedWork {
                "ns per increment"
            } else {
                "ns/op"
            }
        );
        if series.iter().any(|s| s.dashed) {
            caption.push_str(" (solid: shared counter, dashed: private counter per thread)");
        }
        legend = charts::legend(&series);
        charts::line_chart(&labels, "threads", axis, &series)
    } else {
        // One thread count (or CPU pairs): a row per variant.
        let rows: Vec<(String, Point)> = data
            .iter()
            .enumerate()
            .filter_map(|(i, x)| {
                let label = if s == Shape::PingPong {
                    let mut l = String::new();
                    if multi {
                        let _ = write!(l, "{}: ", run_name(&runs[x.run]));
                    }
                    l + &cpu_pair(x.r)
                } else {
                    series_name(runs, *x, multi)
                };
                point(x.r, metric, i).map(|p| (label, p))
            })
            .collect();
        let _ = write!(caption, "bench {}: ", esc(sc));
        match (s, counts.as_slice()) {
            (Shape::PingPong, _) => caption.push_str("round-trip time per CPU pair"),
            (_, [t]) => {
                let _ = write!(
                    caption,
                    "{} per variant at {t} thread(s)",
                    esc(axis_word(s))
                );
            }
            _ => {
                let _ = write!(caption, "{} per variant", esc(axis_word(s)));
            }
        }
        charts::dot_chart(&rows, axis)
    };
    if hollow {
        caption
            .push_str("; hollow points: the threads did not run together (not contended as asked)");
    }
    if implausible > 0 {
        let _ = write!(
            caption,
            "; {implausible} record(s) flagged implausible are not drawn"
        );
    }
    if data.is_empty() {
        caption.push_str("; nothing to draw");
    }
    match svg {
        Ok(svg) => out.push_str(&charts::labelled(&svg, &format!("bench {sc}: {axis}"))),
        Err(e) => {
            let _ = writeln!(out, "<p class=\"bad\">chart not drawn: {}</p>", esc(&e));
        }
    }
    out.push('\n');
    out.push_str(&legend);
    let _ = writeln!(out, "<figcaption>{caption}.</figcaption>\n</figure>");
}

fn axis_word(s: Shape) -> &'static str {
    match s {
        Shape::FixedWork => "ns per increment",
        _ => "ns/op",
    }
}

/// The rows of a table of `recs`: each record, after its run's name when
/// several runs share it.
fn table_rows<'a>(names: &'a [String], recs: &[Rec<'a>], multi: bool) -> Vec<tables::Row<'a>> {
    recs.iter()
        .map(|x| tables::Row {
            run: multi.then(|| names[x.run].as_str()),
            record: x.r,
        })
        .collect()
}

fn flags_and_notes(out: &mut String, runs: &[RunView], recs: &[Rec<'_>], multi: bool) {
    let flagged: Vec<&Rec<'_>> = recs.iter().filter(|x| !x.r.flags.is_empty()).collect();
    if !flagged.is_empty() {
        out.push_str("<ul class=\"flags\">\n");
        for x in flagged {
            for f in &x.r.flags {
                let who = if multi {
                    format!("{}: ", run_name(&runs[x.run]))
                } else {
                    String::new()
                };
                let metric = f
                    .metric
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "<li><strong class=\"{}\">{}</strong>{}: {}{} threads={}: {}</li>",
                    if f.kind == FlagKind::Implausible {
                        "bad"
                    } else {
                        "warn"
                    },
                    esc(f.kind.words()),
                    esc(&metric),
                    esc(&who),
                    esc(&variant_label(x.r)),
                    esc(&param(x.r, "threads")),
                    esc(&f.detail)
                );
            }
        }
        out.push_str("</ul>\n");
    }
    let mut notes: Vec<&str> = Vec::new();
    for n in recs.iter().flat_map(|x| &x.r.notes) {
        if !notes.contains(&n.as_str()) {
            notes.push(n);
        }
    }
    if !notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for n in notes {
            let _ = writeln!(out, "<li>note: {}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
}

/// bench's entry in [`super::KINDS`].
pub(crate) const KIND: super::Kind = super::Kind {
    name: "bench",
    terminal: |mut out, report| tables::write_terminal(&mut out, report),
    section: Some(section),
};
