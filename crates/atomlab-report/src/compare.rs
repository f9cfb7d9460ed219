//! The comparison section: changed verdicts, the judged metrics, and a
//! chart of the changes with their intervals against the threshold.

use std::fmt::Write;

use atomlab_stats::ab::{Key, MetricRow};
use atomlab_stats::{Difference, Direction};

use crate::charts::{self, ChangeBar};
use crate::html::esc;
use crate::table::{Cell, Table};
use crate::ComparisonView;

fn verdict_words(v: Difference) -> (&'static str, &'static str) {
    match v {
        Difference::Better => (v.as_str(), "ok"),
        Difference::Worse => (v.as_str(), "bad"),
        Difference::NoChange => (v.as_str(), ""),
        Difference::TooNoisy => ("too noisy to tell", "warn"),
        Difference::TooFewRuns => ("too few runs", "warn"),
    }
}

fn tone(v: Difference) -> &'static str {
    match v {
        Difference::Better => "better",
        Difference::Worse => "worse",
        Difference::NoChange => "same",
        Difference::TooNoisy | Difference::TooFewRuns => "noisy",
    }
}

/// A short label for a chart row: `#3 counter fetch_add 2t ns_per_op`.
fn short(i: usize, row: &MetricRow) -> String {
    let threads = row
        .key
        .parameters
        .split(' ')
        .find_map(|p| p.strip_prefix("threads="))
        .map(|t| format!(" {t}t"))
        .unwrap_or_default();
    let ordering = row
        .key
        .parameters
        .split(' ')
        .find_map(|p| p.strip_prefix("ordering="))
        .map(|o| format!("/{o}"))
        .unwrap_or_default();
    let contention = row
        .key
        .parameters
        .split(' ')
        .find_map(|p| p.strip_prefix("contention="))
        .map(|c| format!(" {c}"))
        .unwrap_or_default();
    let mut s = format!(
        "#{} {} {}{ordering}{threads}{contention} {}",
        i + 1,
        row.key.scenario,
        row.key.variant,
        row.metric
    );
    if s.chars().count() > 60 {
        s = s.chars().take(59).collect::<String>() + "…";
    }
    s
}

fn key_cell(k: &Key) -> Cell {
    let mut html = format!(
        "{} {} <strong>{}</strong>",
        esc(&k.capability),
        esc(&k.scenario),
        esc(&k.variant)
    );
    if !k.parameters.is_empty() {
        let _ = write!(html, "<br><small>{}</small>", esc(&k.parameters));
    }
    Cell::html(html)
}

/// Renders the comparison of `c`.
pub(crate) fn section(out: &mut String, c: &ComparisonView) {
    let res = &c.result;
    let (a, b) = (esc(&c.a_name), esc(&c.b_name));
    out.push_str("<section id=\"comparison\">\n<h2>comparison</h2>\n");
    let _ = writeln!(
        out,
        "<p class=\"lead\">A = <strong>{a}</strong> (before), B = <strong>{b}</strong> \
         (after). Change = (median B − median A) / |median A|, with a 95% interval on the \
         ratio scale; p is the two-sided Mann–Whitney p-value and p (Holm) the same \
         adjusted by Holm–Bonferroni over the {} judged rows, which decides. A change \
         counts when p (Holm) &lt; 0.05, the interval excludes zero and the change \
         exceeds the threshold of {}.</p>",
        res.judged,
        esc(&format!("±{:.1}%", c.threshold.abs() * 100.0))
    );
    let regressions = res.regressions();
    // Judged rows only: a row shown but not judged is counted as such.
    let count = |v: Difference| {
        res.rows
            .iter()
            .filter(|r| r.not_judged.is_none())
            .filter(|r| r.comparison.is_some_and(|c| c.verdict == v))
            .count()
    };
    let not_judged = res
        .rows
        .iter()
        .filter(|r| r.comparison.is_some() && r.not_judged.is_some())
        .count();
    let _ = writeln!(
        out,
        "<p class=\"summary\"><span class=\"{}\">{regressions} regression(s)</span>; \
         {} verdict change(s); metrics: {} worse, {} better, {} unchanged, {} too noisy, \
         {} too few runs, {} not judged, {} not comparable; {} record(s) only in A, {} only \
         in B.</p>",
        if regressions > 0 { "bad" } else { "ok" },
        res.verdict_changes.len(),
        count(Difference::Worse),
        count(Difference::Better),
        count(Difference::NoChange),
        count(Difference::TooNoisy),
        count(Difference::TooFewRuns),
        not_judged,
        res.rows.iter().filter(|r| r.comparison.is_none()).count(),
        res.only_a.len(),
        res.only_b.len(),
    );

    if !res.verdict_changes.is_empty() {
        out.push_str("<h3>changed verdicts</h3>\n");
        let mut t = Table::with_header(&crate::compare_view::VERDICT_CHANGE_COLUMNS);
        for v in &res.verdict_changes {
            t.row(vec![
                key_cell(&v.key),
                Cell::text(&v.before),
                Cell::text(&v.after).class(if v.regression { "bad" } else { "ok" }),
                Cell::text(if v.regression { "yes" } else { "no" }).class(if v.regression {
                    "bad"
                } else {
                    ""
                }),
            ]);
        }
        t.html(out);
    }

    if !res.rows.is_empty() {
        let bars: Vec<ChangeBar> = res
            .rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let cmp = r.comparison?;
                Some(ChangeBar {
                    label: short(i, r),
                    change: cmp.change,
                    low: cmp.ci_low,
                    high: cmp.ci_high,
                    tone: tone(cmp.verdict),
                })
            })
            .collect();
        out.push_str("<h3>metrics</h3>\n");
        out.push_str("<figure class=\"chart\" data-chart=\"comparison\">\n");
        match charts::change_chart(&bars, c.threshold) {
            Ok(svg) => out.push_str(&charts::labelled(
                &svg,
                "relative change of each metric, B against A, with its interval",
            )),
            Err(e) => {
                let _ = writeln!(out, "<p class=\"bad\">chart not drawn: {}</p>", esc(&e));
            }
        }
        let _ = writeln!(
            out,
            "\n<figcaption>Relative change of each metric's median, B ({b}) against A ({a}), \
             in %, with its confidence interval; the shaded band is ±threshold. \
             <span class=\"bad\">Red: worse</span>, <span class=\"ok\">green: better</span>, \
             grey: no change, <span class=\"warn\">amber: too noisy to tell</span>. Whether \
             up is worse depends on the metric (ns/op up is worse, ops/s up is better). \
             Rows are numbered as in the table below.</figcaption>\n</figure>"
        );
        let mut header = vec!["#", "record"];
        header.extend(crate::compare_view::METRIC_COLUMNS);
        let mut t = Table::with_header(&header);
        for (i, r) in res.rows.iter().enumerate() {
            // The terminal's cells, word for word: one judgement, shown
            // the same way in both.
            let [metric, median_a, median_b, change, ci, p, p_holm, verdict] =
                crate::compare_view::metric_cells(r);
            let direction = match r.comparison.map(|c| c.direction) {
                Some(Direction::LowerIsBetter) => "lower is better",
                Some(Direction::HigherIsBetter) => "higher is better",
                None => "-",
            };
            let class = match r.comparison {
                Some(_) if r.not_judged.is_some() => "",
                Some(c) => verdict_words(c.verdict).1,
                None => "",
            };
            let (n_a, n_b) = r.comparison.map_or((0, 0), |c| (c.n_a, c.n_b));
            t.row(vec![
                Cell::num((i + 1).to_string()),
                key_cell(&r.key),
                Cell::text(format!("{metric} ({direction})")),
                Cell::num(format!("{median_a} (n={n_a})")),
                Cell::num(format!("{median_b} (n={n_b})")),
                Cell::num(change),
                Cell::num(ci),
                Cell::num(p),
                Cell::num(p_holm),
                Cell::text(verdict).class(class),
            ]);
        }
        t.html(out);
        let _ = writeln!(
            out,
            "<p class=\"legend\">{}</p>",
            esc(&crate::compare_view::legend(
                res.judged,
                c.threshold * 100.0,
                0.05
            ))
        );
        if let Some(note) = crate::compare_view::too_few_note(res) {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&note));
        }
        for (metric, why) in crate::compare_view::not_judged(res) {
            let _ = writeln!(
                out,
                "<p class=\"note\">not judged: {}: {}</p>",
                esc(metric),
                esc(why)
            );
        }
    }

    for (title, keys) in [
        (format!("only in A ({a})"), &res.only_a),
        (format!("only in B ({b})"), &res.only_b),
    ] {
        if keys.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<details><summary>{} record(s) {title}</summary><ul>",
            keys.len()
        );
        for k in keys {
            let _ = writeln!(out, "<li>{}</li>", esc(&k.to_string()));
        }
        out.push_str("</ul></details>\n");
    }
    out.push_str("</section>\n");
}
