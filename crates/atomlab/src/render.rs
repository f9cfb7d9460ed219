//! Tables for people on stdout, JSON for tools.

use std::io::Write;

use atomlab_core::{Machine, Record, Report};
pub use atomlab_report::table::Table;

/// A fresh table in atomlab's style: a plain-ASCII Markdown table, so it
/// survives logs and pipes and pastes into an issue, within 100 columns
/// (`runs`: its long cells wrap, its columns fall into panels).
pub fn table() -> Table {
    Table::fitting()
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

/// The machine fingerprint as a table (atomlab-report's machine view).
pub fn machine_table(m: &Machine) -> anyhow::Result<()> {
    atomlab_report::machine_view::write_terminal(&mut std::io::stdout().lock(), m)?;
    Ok(())
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

/// The people's view of bench records: one table per kind of record, then
/// the notes they carry (each once); the tables are atomlab-report's.
pub fn bench_tables(report: &Report) -> anyhow::Result<()> {
    atomlab_report::bench_tables::write_terminal(&mut std::io::stdout().lock(), report)?;
    Ok(())
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
