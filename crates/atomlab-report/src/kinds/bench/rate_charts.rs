//! Charts of bench records measured at offered rates: what CPU a given
//! load costs. For `bench spsc`, each side's CPU % against the offered
//! rate, one line per barrier variant and wait mode (case 004: "CPU
//! utilisation at a fixed offered load per barrier variant"; a spinning
//! side is on its CPU at any load, a sleeping consumer's CPU follows the
//! load); for `bench counter|refcount|lock --rate`, the CPU % against the
//! offered rate, one line per variant.
//!
//! Rates go left to right ascending, flat out (`max`) last. A point whose
//! rate was not sustained is drawn hollow; an implausible record is not
//! drawn.

use std::fmt::Write;

use atomlab_core::{FlagKind, Record};

use crate::charts::{self, Point, Series};
use crate::html::{esc, num, param, variant_label};
use crate::Rec;
use crate::{run_name, RunView};

/// A record's offered rate, `None` flat out.
fn offered(r: &Record) -> Option<f64> {
    r.parameters.get("rate_offered").and_then(|v| v.as_f64())
}

/// The offered rates of `recs`, ascending, flat out last.
fn rates(recs: &[Rec<'_>]) -> Vec<Option<f64>> {
    let mut v: Vec<Option<f64>> = Vec::new();
    for x in recs {
        let r = offered(x.r);
        if !v.contains(&r) {
            v.push(r);
        }
    }
    v.sort_by(|a, b| match (a, b) {
        (Some(a), Some(b)) => a.total_cmp(b),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    v
}

/// An x axis label: `100.0k/s`, or `max` (flat out).
fn rate_label(r: Option<f64>) -> String {
    r.map_or_else(|| "max".into(), |r| format!("{}/s", num(r)))
}

/// The values of parameter `key` among `recs`, each once.
fn distinct(recs: &[Rec<'_>], key: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for x in recs {
        let p = param(x.r, key);
        if !v.contains(&p) {
            v.push(p);
        }
    }
    v
}

/// A metric's median and spread at x, unless the record is implausible;
/// hollow when the offered rate was not sustained.
fn point(r: &Record, metric: &str, x: usize) -> Option<Point> {
    if r.flagged(FlagKind::Implausible) {
        return None;
    }
    let s = r.metric(metric)?.summary?;
    Some(Point {
        x,
        median: s.median,
        min: s.min,
        max: s.max,
        hollow: r.flagged(FlagKind::RateNotSustained),
    })
}

/// One line of a chart: the key that names it, its colour's key and
/// whether it is dashed.
struct LineKey {
    name: String,
    color_key: String,
    dashed: bool,
}

/// The lines of `metric` against the offered rates, one per key that
/// `key` gives a record; each line's colour is its colour key's.
fn lines<'r>(
    recs: &[Rec<'r>],
    xs: &[Option<f64>],
    metric: &str,
    key: &dyn Fn(Rec<'r>) -> LineKey,
) -> Vec<Series> {
    let mut colors: Vec<String> = Vec::new();
    let mut series: Vec<Series> = Vec::new();
    for x in recs {
        let Some(at) = xs.iter().position(|r| *r == offered(x.r)) else {
            continue;
        };
        let Some(p) = point(x.r, metric, at) else {
            continue;
        };
        let k = key(*x);
        let color = match colors.iter().position(|c| *c == k.color_key) {
            Some(i) => i,
            None => {
                colors.push(k.color_key);
                colors.len() - 1
            }
        };
        match series.iter_mut().find(|s| s.name == k.name) {
            Some(s) => s.points.push(p),
            None => series.push(Series {
                name: k.name,
                dashed: k.dashed,
                color: Some(color),
                points: vec![p],
            }),
        }
    }
    for s in &mut series {
        s.points.sort_by_key(|p| p.x);
    }
    series
}

/// The notes every rate chart's caption ends with.
fn caption_tail(caption: &mut String, recs: &[Rec<'_>], series: &[Series]) {
    caption.push_str("; bars: min–max over runs");
    if series.iter().flat_map(|s| &s.points).any(|p| p.hollow) {
        caption.push_str("; hollow points: the offered rate was not sustained");
    }
    let implausible = recs
        .iter()
        .filter(|x| x.r.flagged(FlagKind::Implausible))
        .count();
    if implausible > 0 {
        let _ = write!(
            caption,
            "; {implausible} record(s) flagged implausible are not drawn"
        );
    }
    if series.is_empty() {
        caption.push_str("; nothing to draw");
    }
}

/// `bench spsc`: a chart per side (producer, consumer) of its CPU %
/// against the offered rate, a line per barrier variant and wait mode
/// (and placement, and run, where the records differ in them). The
/// figures are `bench-ID-producer` and `bench-ID-consumer`.
pub(crate) fn queue(out: &mut String, runs: &[RunView], id: &str, recs: &[Rec<'_>], multi: bool) {
    let xs = rates(recs);
    let labels: Vec<String> = xs.iter().map(|r| rate_label(*r)).collect();
    let placements = distinct(recs, "placement");
    let key = |x: Rec<'_>| {
        let mut name = String::new();
        if multi {
            let _ = write!(name, "{}: ", run_name(&runs[x.run]));
        }
        name.push_str(&x.r.variant);
        let wait = param(x.r, "wait");
        if wait != "-" {
            let _ = write!(name, " · {wait}");
        }
        if placements.len() > 1 {
            let _ = write!(name, " · {}", param(x.r, "placement"));
        }
        LineKey {
            name,
            color_key: format!("{}\u{0}{}", x.run, x.r.variant),
            // Spinning (the default) solid; sleeping or yielding dashed.
            dashed: wait != "spin" && wait != "-",
        }
    };
    for (side, metric) in [("producer", "producer_cpu"), ("consumer", "consumer_cpu")] {
        let series = lines(recs, &xs, metric, &key);
        let axis = format!("{side} CPU % (thread CPU time over wall time, median)");
        let mut caption = format!(
            "bench spsc: the {side}'s CPU against the offered rate, one line per barrier \
             variant and wait mode (solid: spin, dashed: notify or yield; colour: variant); \
             max: flat out"
        );
        caption_tail(&mut caption, recs, &series);
        out.push_str(&charts::figure(
            &format!("bench-{id}-{side}"),
            charts::line_chart(&labels, "offered rate (items/s)", &axis, &series),
            &format!("bench spsc: {axis} against the offered rate"),
            &charts::legend(&series),
            &esc(&caption),
        ));
    }
}

/// `bench counter|refcount|lock --rate`: the CPU % against the offered
/// rate, a line per variant (and thread count and run where they differ).
/// The figure is `bench-ID-cpu`.
pub(crate) fn fixed_rate(
    out: &mut String,
    runs: &[RunView],
    sc: &str,
    id: &str,
    recs: &[Rec<'_>],
    multi: bool,
) {
    let xs = rates(recs);
    let labels: Vec<String> = xs.iter().map(|r| rate_label(*r)).collect();
    let threads = distinct(recs, "threads");
    let key = |x: Rec<'_>| {
        let mut name = String::new();
        if multi {
            let _ = write!(name, "{}: ", run_name(&runs[x.run]));
        }
        name.push_str(&variant_label(x.r));
        if threads.len() > 1 {
            let _ = write!(name, " · {} threads", param(x.r, "threads"));
        }
        LineKey {
            color_key: name.clone(),
            name,
            dashed: false,
        }
    };
    let series = lines(recs, &xs, "cpu_utilisation", &key);
    let axis = "CPU % (CPU time over wall time, median)";
    let mut caption =
        format!("bench {sc}: the CPU a fixed offered rate needs, one line per variant");
    caption_tail(&mut caption, recs, &series);
    out.push_str(&charts::figure(
        &format!("bench-{id}-cpu"),
        charts::line_chart(&labels, "offered rate (ops/s)", axis, &series),
        &format!("bench {sc}: {axis} against the offered rate"),
        &charts::legend(&series),
        &esc(&caption),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::{Metric, Report, Source, Unit};

    /// An spsc record as atomlab-bench writes it: the offered rate, the
    /// wait mode, each side's CPU %.
    fn spsc(variant: &str, wait: &str, rate: Option<f64>, cpu: (f64, f64)) -> Record {
        let mut r = Record::new("bench", "spsc", variant);
        r.param("threads", 2)
            .param("placement", "spread")
            .param("wait", wait)
            .param(
                "rate_offered",
                rate.map_or(serde_json::Value::Null, |r| r.into()),
            );
        for (name, v) in [("producer_cpu", cpu.0), ("consumer_cpu", cpu.1)] {
            r.metrics.push(Metric::new(
                name,
                Unit::Percent,
                Source::Rusage,
                vec![v, v + 1.0],
            ));
        }
        r
    }

    fn view(records: Vec<Record>) -> RunView {
        RunView {
            id: "20261202-130000-00000001".into(),
            label: None,
            command_line: vec!["atomlab".into(), "bench".into(), "spsc".into()],
            started_unix: 0.0,
            host: "h".into(),
            report: Report::new("bench", atomlab_core::Machine::detect(), records),
        }
    }

    /// Two variants × two wait modes × two rates and flat out: a line per
    /// variant and wait mode on each side, a point per rate, the notify
    /// lines dashed, rates ascending and `max` last.
    #[test]
    fn a_line_per_variant_and_wait_mode_on_each_side() {
        let mut recs = Vec::new();
        for v in ["c11-acq-rel", "seq_cst"] {
            for (wait, consumer) in [("spin", 99.0), ("notify", 10.0)] {
                for rate in [Some(1e6), Some(1e5), None] {
                    recs.push(spsc(v, wait, rate, (99.5, consumer)));
                }
            }
        }
        let runs = [view(recs)];
        let all: Vec<Rec<'_>> = runs[0]
            .report
            .records
            .iter()
            .map(|r| Rec { run: 0, r })
            .collect();
        let mut out = String::new();
        queue(&mut out, &runs, "spsc", &all, false);
        let figs: Vec<&str> = out
            .split("</figure>")
            .filter(|f| f.contains("<figure"))
            .collect();
        assert_eq!(figs.len(), 2, "{out}");
        for (fig, side) in figs.iter().zip(["producer", "consumer"]) {
            assert!(
                fig.contains(&format!("data-chart=\"bench-spsc-{side}\"")),
                "{fig}"
            );
            assert!(fig.contains(&format!("{side} CPU %")), "{fig}");
            // Four lines, three points each.
            assert_eq!(fig.matches("<li>").count(), 4, "{fig}");
            assert_eq!(fig.matches("<circle").count(), 12, "{fig}");
            assert_eq!(fig.matches("border-top: 3px dashed").count(), 2, "{fig}");
            for name in [
                "c11-acq-rel · spin",
                "c11-acq-rel · notify",
                "seq_cst · notify",
            ] {
                assert!(
                    fig.contains(&format!("</span>{name}</li>")),
                    "{name}: {fig}"
                );
            }
            let at = |label: String| {
                fig.find(&format!(">\n{label}\n<"))
                    .unwrap_or_else(|| panic!("{label} on x: {fig}"))
            };
            let (k, m, max) = (
                at(rate_label(Some(1e5))),
                at(rate_label(Some(1e6))),
                at("max".into()),
            );
            assert!(k < m && m < max, "{fig}");
        }
        // A side without figures (schedule-only has no consumer) is not a
        // line: its record is left out of that side's chart only.
        let mut lone = spsc("schedule-only", "spin", Some(1e5), (10.0, 0.0));
        lone.metrics.retain(|m| m.name != "consumer_cpu");
        let runs = [view(vec![lone])];
        let all = [Rec {
            run: 0,
            r: &runs[0].report.records[0],
        }];
        let mut out = String::new();
        queue(&mut out, &runs, "spsc", &all, false);
        let consumer = &out[out.find("bench-spsc-consumer").unwrap()..];
        assert!(consumer.contains("nothing to draw"), "{consumer}");
        assert!(!out[..out.find("bench-spsc-consumer").unwrap()].contains("nothing to draw"));
    }

    /// A rate not sustained is drawn hollow and said so; an implausible
    /// record is not drawn.
    #[test]
    fn flagged_points_are_hollow_or_left_out() {
        let mut slow = spsc("fences", "spin", Some(1e9), (100.0, 100.0));
        slow.flag(FlagKind::RateNotSustained, None, "below 99%");
        let mut bad = spsc("fences", "spin", Some(1e5), (100.0, 100.0));
        bad.flag(FlagKind::Implausible, None, "no");
        let runs = [view(vec![slow, bad])];
        let all: Vec<Rec<'_>> = runs[0]
            .report
            .records
            .iter()
            .map(|r| Rec { run: 0, r })
            .collect();
        let mut out = String::new();
        queue(&mut out, &runs, "spsc", &all, false);
        assert!(out.contains("hollow points: the offered rate was not sustained"));
        assert!(out.contains("1 record(s) flagged implausible are not drawn"));
    }
}
