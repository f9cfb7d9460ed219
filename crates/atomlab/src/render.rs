//! Tables for people on stdout, JSON for tools.

use std::io::Write;

pub use crate::table::Table;
use atomlab_bench::TableKind;
use atomlab_core::{FlagKind, Machine, Record, Report};

/// A fresh table in atomlab's style: a plain-ASCII Markdown table, so it
/// survives logs and pipes and pastes into an issue.
pub fn table() -> Table {
    Table::new()
}

/// Writes `value` as pretty JSON on stdout.
pub fn json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Prints `table` on stdout.
pub fn print(table: &Table) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{table}")?;
    Ok(())
}

pub fn machine_table(m: &Machine) -> anyhow::Result<()> {
    let mut t = table();
    // The PMU's reason is a sentence: wrap it instead of a 200-column row.
    t.wrap_to(100);
    t.set_header(vec!["machine", ""]);
    let rows = m.facts();
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v]);
    }
    print(&t)
}

/// Checks, before any measurement, that `path` (`-`: stdout) can be
/// written: its directory exists and accepts a new file.
pub fn check_writable(path: &std::path::Path) -> anyhow::Result<()> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    if path.is_dir() {
        anyhow::bail!("{} is a directory; give a file name", path.display());
    }
    let probe = path.with_extension("json.partial");
    std::fs::write(&probe, b"").map_err(|e| {
        anyhow::anyhow!(
            "cannot write {}: {e}; create its directory or pick another path",
            path.display()
        )
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Writes `value` as pretty JSON to `path` (`-`: stdout), replacing the file
/// atomically so a reader never sees half a document.
pub fn export_json<T: serde::Serialize>(path: &std::path::Path, value: &T) -> anyhow::Result<()> {
    if path.as_os_str() == "-" {
        return json(value);
    }
    let tmp = path.with_extension("json.partial");
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// A figure with three significant digits and an SI suffix for big counts
/// (the report's formatting, so the terminal and the HTML agree).
pub fn num(v: f64) -> String {
    atomlab_report::figure(v)
}

/// A metric's median for a table; a record whose timing is implausible
/// shows no figure at all, so nobody copies it as data.
fn median(r: &Record, metric: &str) -> String {
    if r.flagged(FlagKind::Implausible) {
        return "implausible".into();
    }
    r.metric(metric)
        .and_then(|m| m.median())
        .map(num)
        .unwrap_or_else(|| "-".into())
}

/// The status column: `ok`, or the words of each flag.
fn status(r: &Record) -> String {
    if r.flags.is_empty() {
        return "ok".into();
    }
    let mut words: Vec<&str> = r.flags.iter().map(|f| f.kind.words()).collect();
    words.dedup();
    words.join(", ")
}

/// The flags' details under a table, one line per flagged record.
fn flag_lines(out: &mut impl Write, recs: &[&Record]) -> anyhow::Result<()> {
    for r in recs {
        for f in &r.flags {
            writeln!(
                out,
                "{}: {} {} threads={}: {}",
                f.kind.words(),
                r.scenario,
                variant_label(r),
                param(r, "threads"),
                f.detail
            )?;
        }
    }
    Ok(())
}

fn param(r: &Record, key: &str) -> String {
    match r.parameters.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => "-".into(),
        Some(v) => v.to_string(),
    }
}

fn variant_label(r: &Record) -> String {
    match r.parameters.get("ordering").and_then(|o| o.as_str()) {
        Some(o) => format!("{}/{o}", r.variant),
        None => r.variant.clone(),
    }
}

/// The people's view of bench records: one table per kind of record, then
/// the notes they carry (each once).
pub fn bench_tables(report: &Report) -> anyhow::Result<()> {
    let recs = &report.records;
    let of = |kind: TableKind| -> Vec<&Record> {
        recs.iter()
            .filter(|r| atomlab_bench::table_of(r) == Some(kind))
            .collect()
    };
    let timed = of(TableKind::Timed);
    let fixed = of(TableKind::FixedWork);
    let rated = of(TableKind::FixedRate);
    let pingpong = of(TableKind::RoundTrip);
    let spsc = of(TableKind::Queue);
    if !timed.is_empty() {
        print(&timed_table(&timed))?;
    }
    if !fixed.is_empty() {
        print(&fixed_table(&fixed))?;
    }
    if !rated.is_empty() {
        print(&rate_table(&rated))?;
    }
    if !pingpong.is_empty() {
        print(&pingpong_table(&pingpong))?;
    }
    if !spsc.is_empty() {
        print(&spsc_table(&spsc))?;
    }
    let mut out = std::io::stdout().lock();
    flag_lines(&mut out, &recs.iter().collect::<Vec<_>>())?;
    let mut seen = std::collections::BTreeSet::new();
    for note in recs.iter().flat_map(|r| &r.notes) {
        if seen.insert(note.as_str()) {
            writeln!(out, "note: {note}")?;
        }
    }
    if !report.machine.pmu.available {
        writeln!(
            out,
            "note: cyc/op and inst/op need hardware counters, unavailable here: {}",
            report
                .machine
                .pmu
                .reason
                .as_deref()
                .unwrap_or("no reason given")
        )?;
    }
    Ok(())
}

/// Columns of the timed table: median over the runs of each.
pub fn timed_table(recs: &[&Record]) -> Table {
    let mut events: Vec<String> = Vec::new();
    for r in recs {
        for m in &r.metrics {
            if m.name.starts_with("event:") && !events.contains(&m.name) {
                events.push(m.name.clone());
            }
        }
    }
    let mut t = table();
    let mut header: Vec<String> = [
        "scenario",
        "variant",
        "threads",
        "line",
        "ops/s",
        "ns/op",
        "ref-cyc/op",
        "cyc/op",
        "inst/op",
        "cpu %",
        "fairness",
        "cv",
        "status",
    ]
    .map(String::from)
    .to_vec();
    header.extend(
        events
            .iter()
            .map(|e| format!("{}/op", e.trim_start_matches("event:"))),
    );
    t.set_header(header);
    for r in recs {
        let cv = r
            .metric("ns_per_op")
            .and_then(|m| m.summary)
            .map(|s| format!("{:.1}%", s.cv * 100.0))
            .unwrap_or_else(|| "-".into());
        let mut row = vec![
            r.scenario.clone(),
            variant_label(r),
            param(r, "threads"),
            param(r, "contention"),
            median(r, "ops_per_sec"),
            median(r, "ns_per_op"),
            median(r, "ref_cycles_per_op"),
            median(r, "cycles_per_op"),
            median(r, "instructions_per_op"),
            median(r, "cpu_utilisation"),
            median(r, "fairness"),
            cv,
            status(r),
        ];
        row.extend(events.iter().map(|e| median(r, e)));
        t.add_row(row);
    }
    t
}

fn fixed_table(recs: &[&Record]) -> Table {
    let mut t = table();
    t.set_header(vec![
        "lock",
        "increments",
        "tasks",
        "workers",
        "median s",
        "min s",
        "max s",
        "cv",
        "ns/op",
        "status",
    ]);
    for r in recs {
        let s = r.metric("seconds").and_then(|m| m.summary);
        let implausible = r.flagged(FlagKind::Implausible);
        let f = |v: Option<f64>| match v {
            _ if implausible => "implausible".into(),
            Some(v) => format!("{v:.4}"),
            None => "-".into(),
        };
        t.add_row(vec![
            r.variant.clone(),
            param(r, "increments"),
            param(r, "tasks"),
            param(r, "workers"),
            f(s.map(|s| s.median)),
            f(s.map(|s| s.min)),
            f(s.map(|s| s.max)),
            s.map(|s| format!("{:.1}%", s.cv * 100.0))
                .unwrap_or_else(|| "-".into()),
            median(r, "ns_per_op"),
            status(r),
        ]);
    }
    t
}

/// `bench counter|refcount|lock --rate`: the CPU a given load needs.
pub fn rate_table(recs: &[&Record]) -> Table {
    let mut t = table();
    t.set_header(vec![
        "scenario",
        "variant",
        "threads",
        "line",
        "offered/s",
        "achieved/s",
        "cpu %",
        "busy %",
        "op ns",
        "p50 ns",
        "p99 ns",
        "p99.9 ns",
        "max ns",
        "status",
    ]);
    for r in recs {
        t.add_row(vec![
            r.scenario.clone(),
            variant_label(r),
            param(r, "threads"),
            param(r, "contention"),
            r.parameters
                .get("rate_offered")
                .and_then(|v| v.as_f64())
                .map(num)
                .unwrap_or_else(|| "-".into()),
            median(r, "rate_achieved"),
            median(r, "cpu_utilisation"),
            median(r, "busy"),
            median(r, "op_ns"),
            median(r, "latency_p50_ns"),
            median(r, "latency_p99_ns"),
            median(r, "latency_p999_ns"),
            median(r, "latency_max_ns"),
            status(r),
        ]);
    }
    t
}

/// `bench spsc`: one row per variant, placement and offered rate.
pub fn spsc_table(recs: &[&Record]) -> Table {
    let mut t = table();
    // --wait notify: the producer's wake calls per item, in its own column.
    let notify = recs
        .iter()
        .any(|r| r.metric("notifications_per_item").is_some());
    let mut header = vec![
        "variant",
        "placement",
        "offered/s",
        "achieved/s",
        "ns/item",
        "prod cpu %",
        "cons cpu %",
        "prod busy %",
        "cons busy %",
        "push ns",
        "pop ns",
        "p50 ns",
        "p99 ns",
        "p99.9 ns",
        "max ns",
    ];
    if notify {
        header.push("wakes/item");
    }
    // Hardware counters per item and side, where they were counted.
    let mut pmu: Vec<String> = Vec::new();
    for r in recs {
        for m in &r.metrics {
            let counted = m.name.ends_with("_cycles_per_item")
                || m.name.ends_with("_instructions_per_item")
                || m.name.contains("_event:");
            if counted && !pmu.contains(&m.name) {
                pmu.push(m.name.clone());
            }
        }
    }
    let pmu_headers: Vec<String> = pmu
        .iter()
        .map(|m| {
            let m = m
                .replace("producer_", "prod ")
                .replace("consumer_", "cons ")
                .replace("event:", "");
            format!("{}/item", m.trim_end_matches("_per_item"))
        })
        .collect();
    header.extend(pmu_headers.iter().map(String::as_str));
    header.push("status");
    t.set_header(header);
    for r in recs {
        let offered = r
            .parameters
            .get("rate_offered")
            .and_then(|v| v.as_f64())
            .map(num)
            .unwrap_or_else(|| "max".into());
        let mut row = vec![
            r.variant.clone(),
            param(r, "placement"),
            offered,
            // Fixed rate: items over the schedule's length; flat out: items/s.
            if r.metric("rate_achieved").is_some() {
                median(r, "rate_achieved")
            } else {
                median(r, "items_per_sec")
            },
            median(r, "ns_per_item"),
            median(r, "producer_cpu"),
            median(r, "consumer_cpu"),
            median(r, "producer_busy"),
            median(r, "consumer_busy"),
            median(r, "push_ns"),
            median(r, "pop_ns"),
            median(r, "latency_p50_ns"),
            median(r, "latency_p99_ns"),
            median(r, "latency_p999_ns"),
            median(r, "latency_max_ns"),
        ];
        if notify {
            row.push(median(r, "notifications_per_item"));
        }
        row.extend(pmu.iter().map(|m| median(r, m)));
        row.push(status(r));
        t.add_row(row);
    }
    t
}

fn pingpong_table(recs: &[&Record]) -> Table {
    let cpus: std::collections::BTreeSet<String> = recs
        .iter()
        .flat_map(|r| [param(r, "cpu_a"), param(r, "cpu_b")])
        .collect();
    let cpus: Vec<String> = cpus.into_iter().collect();
    let mut t = table();
    let mut header = vec!["round trip ns (ref-cyc)".to_string()];
    header.extend(cpus.iter().map(|c| format!("cpu {c}")));
    t.set_header(header);
    for a in &cpus {
        let mut row = vec![format!("cpu {a}")];
        for b in &cpus {
            let cell = recs.iter().find(|r| {
                let (x, y) = (param(r, "cpu_a"), param(r, "cpu_b"));
                (&x == a && &y == b) || (&x == b && &y == a)
            });
            row.push(match cell {
                Some(r) if a != b => format!(
                    "{} ({})",
                    median(r, "ns_per_roundtrip"),
                    median(r, "ref_cycles_per_roundtrip")
                ),
                _ => "-".into(),
            });
        }
        t.add_row(row);
    }
    t
}

/// Any records as a table (the view of a document from a command this
/// atomlab has no table for): key, verdict and every metric's median.
pub fn records_table(records: &[Record]) -> anyhow::Result<()> {
    let mut t = table();
    t.set_header(vec![
        "capability",
        "scenario",
        "variant",
        "verdict",
        "metrics (median)",
    ]);
    for r in records {
        let metrics: Vec<String> = r
            .metrics
            .iter()
            .filter_map(|m| {
                m.median()
                    .map(|v| format!("{} {} {}", m.name, num(v), m.unit.label()))
            })
            .collect();
        t.add_row(vec![
            r.capability.clone(),
            r.scenario.clone(),
            r.variant.clone(),
            r.verdict
                .and_then(|v| serde_json::to_value(v).ok())
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_else(|| "-".into()),
            metrics.join("; "),
        ]);
    }
    print(&t)
}
