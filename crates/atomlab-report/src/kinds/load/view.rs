//! The terminal's view of load records: what `atomlab load` prints and
//! `atomlab show` prints again, from the records alone; and the report's
//! table of them, a row per record.

use std::io::{self, Write};

use atomlab_core::{Record, Source, Verdict};

use crate::html::num;
use crate::table::{Cell, Table};
use crate::{table, units};

/// A metric's median.
fn m(r: &Record, name: &str) -> Option<f64> {
    r.metric(name).and_then(|m| m.median())
}

/// A time in its human unit, `-` when absent.
fn ms(v: Option<f64>) -> String {
    v.map(units::duration).unwrap_or_else(|| "-".into())
}

/// The latency percentiles a load record has, in order, with their
/// words: the report's table columns and its chart's x axis.
pub(crate) const PERCENTILES: [(&str, &str); 6] = [
    ("latency_p50_s", "p50"),
    ("latency_p90_s", "p90"),
    ("latency_p99_s", "p99"),
    ("latency_p999_s", "p99.9"),
    ("latency_p9999_s", "p99.99"),
    ("latency_max_s", "max"),
];

/// A row per load record (the report's table; the terminal prints each
/// record's lines, [`write_terminal`]): what was loaded and how, the
/// rates, the latency percentiles, the errors, each side's CPU and the
/// verdict. A first column names the record's run where the rows mix
/// runs.
pub(crate) fn table(rows: &[crate::kinds::bench::tables::Row<'_>]) -> Table {
    let runs = rows.iter().any(|x| x.run.is_some());
    let mut header: Vec<String> = Vec::new();
    if runs {
        header.push("run".into());
    }
    header.extend(
        [
            "url",
            "mode",
            "connections",
            "offered/s",
            "requests/s",
            "bytes/s",
        ]
        .map(String::from),
    );
    header.extend(PERCENTILES.iter().map(|(_, words)| format!("{words} ms")));
    header.extend(["errors", "client cpu %", "server cpu %", "verdict"].map(String::from));
    let mut t = Table::with_header(&header);
    for x in rows {
        let r = x.record;
        let figure = |name: &str| Cell::num(m(r, name).map(num).unwrap_or_else(|| "-".into()));
        let mut row = Vec::new();
        if runs {
            row.push(Cell::text(x.run.unwrap_or("-")));
        }
        let errors: f64 = [
            "errors_connect",
            "errors_read",
            "errors_write",
            "errors_timeout",
            "errors_status",
            "errors_client",
        ]
        .iter()
        .filter_map(|e| m(r, e))
        .sum();
        let (verdict, class) = match r.verdict {
            Some(Verdict::Pass) => ("PASS", "ok"),
            Some(Verdict::Fail) => ("FAIL", "bad"),
            Some(v) => (v.as_str(), "warn"),
            None => ("-", ""),
        };
        row.extend([
            Cell::text(
                r.parameters
                    .get("url")
                    .and_then(|u| u.as_str())
                    .unwrap_or("-"),
            ),
            Cell::text(&r.variant),
            Cell::num(
                r.parameters
                    .get("connections")
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| "-".into()),
            ),
            Cell::num(
                r.parameters
                    .get("rate")
                    .and_then(|v| v.as_f64())
                    .map(num)
                    .unwrap_or_else(|| "-".into()),
            ),
            figure("requests_per_sec"),
            figure("bytes_per_sec"),
        ]);
        row.extend(PERCENTILES.iter().map(|(name, _)| {
            Cell::num(
                m(r, name)
                    .map(|s| format!("{:.3}", s * 1e3))
                    .unwrap_or_else(|| "-".into()),
            )
        }));
        row.extend([
            Cell::num(format!("{errors:.0}")).class(if errors > 0.0 { "warn" } else { "n" }),
            figure("client_cpu_percent"),
            figure("server_cpu_percent"),
            Cell::text(verdict).class(class),
        ]);
        t.row(row);
    }
    t
}

/// The terminal's view of load records (`atomlab load`, `atomlab show`):
/// per record its rates, latency percentiles, errors, CPU, flags, verdict
/// and notes.
pub(crate) fn write_terminal(out: &mut impl Write, recs: &[Record]) -> io::Result<()> {
    table::fitted(out, |out| {
        for r in recs {
            view(out, r)?;
        }
        Ok(())
    })
}

/// The view of one load record.
fn view(out: &mut impl Write, r: &Record) -> io::Result<()> {
    let g = |n: &str| m(r, n).unwrap_or(0.0);
    writeln!(
        out,
        "load {} ({})",
        r.parameters["url"].as_str().unwrap_or("?"),
        r.variant
    )?;
    writeln!(
        out,
        "  requests/s {}   received {}   requests {:.0}",
        units::rate(g("requests_per_sec")),
        units::bytes_per_sec(g("bytes_per_sec")),
        g("requests")
    )?;
    writeln!(
        out,
        "  latency p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}  max {}",
        ms(m(r, "latency_p50_s")),
        ms(m(r, "latency_p90_s")),
        ms(m(r, "latency_p99_s")),
        ms(m(r, "latency_p999_s")),
        ms(m(r, "latency_p9999_s")),
        ms(m(r, "latency_max_s")),
    )?;
    writeln!(
        out,
        "  errors: connect {:.0}, read {:.0}, write {:.0}, timeout {:.0}, status>=400 {:.0}, client's own limits {:.0}",
        g("errors_connect"),
        g("errors_read"),
        g("errors_write"),
        g("errors_timeout"),
        g("errors_status"),
        g("errors_client")
    )?;
    writeln!(
        out,
        "  client CPU {:.1}% of one CPU",
        g("client_cpu_percent")
    )?;
    if let Some(cpu) = m(r, "server_cpu_percent") {
        writeln!(
        out,
            "  server CPU {:.1}% of one CPU ({:.1}% of the machine), context switches {:.0} voluntary, {:.0} nonvoluntary",
            cpu,
            g("server_cpu_machine_percent"),
            g("server_ctx_voluntary"),
            g("server_ctx_nonvoluntary")
        )?;
        if let Some(per) = m(r, "server_cpu_percent_per_1k_rps") {
            writeln!(
                out,
                "  server CPU per 1,000 requests/s: {per:.3}% of one CPU"
            )?;
        }
    } else if r.parameters.contains_key("spawn")
        || r.parameters
            .get("server_pids")
            .and_then(|p| p.as_array())
            .is_some_and(|p| !p.is_empty())
    {
        writeln!(out, "  server CPU unknown (see the notes)")?;
    }
    // The server's hardware counters per request, where they were counted.
    let counted: Vec<String> = r
        .metrics
        .iter()
        .filter(|x| x.name.starts_with("server_") && matches!(x.source, Source::Pmu(_)))
        .filter_map(|x| {
            let event = match &x.source {
                Source::Pmu(e) => e.as_str(),
                _ => return None,
            };
            Some(format!("{event} {:.1}", x.median()?))
        })
        .collect();
    if !counted.is_empty() {
        writeln!(out, "  server per request: {}", counted.join(", "))?;
    }
    for f in &r.flags {
        writeln!(out, "  flag: {}: {}", f.kind.words(), f.detail)?;
    }
    let failures = r
        .detail
        .as_ref()
        .and_then(|d| d["failures"].as_array().cloned())
        .unwrap_or_default();
    match r.verdict {
        Some(Verdict::Fail) => {
            for f in failures {
                writeln!(out, "  FAILED: {}", f.as_str().unwrap_or("?"))?;
            }
        }
        Some(Verdict::Pass) => writeln!(out, "  verdict: PASS")?,
        _ => {}
    }
    for n in &r.notes {
        writeln!(out, "  note: {n}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::{Metric, Unit};

    #[test]
    fn a_failed_run_lists_its_failures_and_an_unwatched_cpu_is_unknown() {
        let mut r = Record::new("load", "http", "closed");
        r.param("url", "http://127.0.0.1:1/")
            .param("spawn", "nginx");
        r.metrics.push(Metric::new(
            "latency_p50_s",
            Unit::Seconds,
            Source::ClockGettime,
            vec![0.0025],
        ));
        r.verdict = Some(Verdict::Fail);
        r.detail = Some(serde_json::json!({"failures": ["no successful response"]}));
        r.notes.push("a note".into());
        let mut out = Vec::new();
        write_terminal(&mut out, &[r]).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "load http://127.0.0.1:1/ (closed)");
        assert!(
            lines[2].starts_with("  latency p50 2.50 ms  p90 -"),
            "{out}"
        );
        assert_eq!(
            &lines[5..],
            [
                "  server CPU unknown (see the notes)",
                "  FAILED: no successful response",
                "  note: a note"
            ],
            "{out}"
        );
    }
}
