//! stdout: the people's view of a report (atomlab-report's), JSON for tools.

use std::io::Write;

use atomlab_core::Report;

/// Writes `value` as pretty JSON on stdout.
pub fn json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// `report` as its command prints it, and as `atomlab show` prints it
/// again (atomlab-report's show view).
pub fn show(report: &Report) -> anyhow::Result<()> {
    atomlab_report::show_view::write_terminal(&mut std::io::stdout().lock(), report)?;
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
