//! Tables for people on stdout, JSON for tools.

use std::io::Write;

use atomlab_core::Machine;
use comfy_table::{presets, Table};

/// A fresh table in atomlab's style: plain ASCII, so it survives logs and pipes.
pub fn table() -> Table {
    let mut t = Table::new();
    t.load_preset(presets::ASCII_MARKDOWN);
    t
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
    t.set_header(vec!["machine", ""]);
    let pmu = if m.pmu.available {
        "available".to_string()
    } else {
        format!(
            "unavailable ({})",
            m.pmu.reason.as_deref().unwrap_or("no reason given")
        )
    };
    let rows: Vec<(&str, String)> = vec![
        ("arch", m.arch.clone()),
        ("cpu", m.cpu_model.clone()),
        ("cpus", m.cpus.to_string()),
        ("features", m.features.join(" ")),
        ("virtualised", m.virtualised.to_string()),
        ("emulated", m.emulated.to_string()),
        ("kernel", m.kernel.clone()),
        ("rustc", m.rustc.clone()),
        ("target", m.target.clone()),
        ("pmu", pmu),
    ];
    for (k, v) in rows {
        t.add_row(vec![k.to_string(), v]);
    }
    print(&t)
}
