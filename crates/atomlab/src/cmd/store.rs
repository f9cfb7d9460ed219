//! The results store from the command line: opening it (before a run, so a
//! bad store fails before anything is measured), saving a run, and the
//! commands that read it back (`runs`, `show`, `export`, `import`).

use std::io::Write;
use std::time::Instant;

use anyhow::Context;
use atomlab_core::{ExitStatus, Report, SCHEMA_VERSION};
use atomlab_store::{Location, RunFilter, RunMeta, Store, StoredRun};

use crate::render;

/// Opens the store named by `--store`, `ATOMLAB_STORE`, `ATOMLAB_DB` or the
/// default path.
pub fn open(flag: Option<&str>) -> anyhow::Result<Store> {
    let location = Location::resolve(flag)?;
    Ok(Store::open(&location)?)
}

/// Saves `report` as the run `meta` and says where on stderr.
pub fn save(store: &mut Store, meta: &mut RunMeta, report: &Report) -> anyhow::Result<()> {
    let start = Instant::now();
    if let Err(e) = store.save(meta, report) {
        // Another process took this id in the same second (a 2^-32
        // chance): a new id, once.
        if !matches!(e, atomlab_store::StoreError::DuplicateRun { .. }) {
            return Err(e.into());
        }
        meta.id = atomlab_store::new_run_id(meta.started_unix);
        store.save(meta, report)?;
    }
    let label = meta
        .label
        .as_deref()
        .map(|l| format!(" (label {l})"))
        .unwrap_or_default();
    eprintln!(
        "atomlab: saved run {}{label} in {} ({:.1} ms); `atomlab show {}` prints it again",
        meta.id,
        store.location(),
        start.elapsed().as_secs_f64() * 1e3,
        meta.id
    );
    Ok(())
}

/// `atomlab runs`; the global `--label L` lists only runs with that label.
#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    /// Only runs of this capability or command (bench, stress, check, audit, suite).
    #[arg(long, value_name = "C")]
    pub capability: Option<String>,
    /// At most N runs [default: 20; 0 for all].
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
}

/// `atomlab runs`.
pub fn runs(
    store: &Store,
    args: &RunsArgs,
    label: Option<String>,
    json: bool,
) -> anyhow::Result<ExitStatus> {
    let filter = RunFilter {
        label,
        capability: args.capability.clone(),
        limit: args.limit,
    };
    let runs = store.runs(&filter)?;
    if json {
        // A listing of documents, not a document: an array of run summaries.
        render::json(&runs)?;
        return Ok(ExitStatus::Ok);
    }
    if runs.is_empty() {
        eprintln!("atomlab: no saved runs match in {}", store.location());
        return Ok(ExitStatus::Ok);
    }
    let mut t = render::table();
    t.set_header(vec![
        "run",
        "started (UTC)",
        "label",
        "command",
        "records",
        "verdicts",
        "host",
        "git",
    ]);
    for r in &runs {
        let verdicts: Vec<String> = r.verdicts.iter().map(|(v, n)| format!("{n} {v}")).collect();
        t.add_row(vec![
            r.meta.id.clone(),
            utc(r.meta.started_unix),
            r.meta.label.clone().unwrap_or_else(|| "-".into()),
            r.meta
                .command_line
                .iter()
                .skip(1)
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
            r.records.to_string(),
            if verdicts.is_empty() {
                "-".into()
            } else {
                verdicts.join(", ")
            },
            r.meta.host.clone(),
            r.meta
                .git_commit
                .as_deref()
                .map(|c| c.chars().take(10).collect())
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    render::print(&t)?;
    Ok(ExitStatus::Ok)
}

/// `YYYY-MM-DD HH:MM:SS` from Unix seconds (the run id carries the same
/// time without separators).
pub fn utc(unix: f64) -> String {
    let id = atomlab_store::new_run_id(unix);
    let d = &id[..8];
    let t = &id[9..15];
    format!(
        "{}-{}-{} {}:{}:{}",
        &d[..4],
        &d[4..6],
        &d[6..],
        &t[..2],
        &t[2..4],
        &t[4..]
    )
}

/// `atomlab show RUN`: the run as its command printed it.
pub fn show(store: &Store, run: &str, json: bool) -> anyhow::Result<ExitStatus> {
    let stored = store.load(run)?;
    if json {
        render::json(&stored.report)?;
    } else {
        eprintln!(
            "atomlab: run {} ({}), {}: {}",
            stored.meta.id,
            utc(stored.meta.started_unix),
            stored.meta.host,
            stored.meta.command_line.join(" ")
        );
        crate::cmd::view(&stored.report)?;
    }
    Ok(ExitStatus::Ok)
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// The --json document.
    Json,
    /// One row per metric of every record, with the run's facts.
    Csv,
}

/// `atomlab export RUN --format json|csv`.
pub fn export(store: &Store, run: &str, format: ExportFormat) -> anyhow::Result<ExitStatus> {
    let stored = store.load(run)?;
    match format {
        ExportFormat::Json => render::json(&stored.report)?,
        ExportFormat::Csv => write_csv(&stored, std::io::stdout().lock())?,
    }
    Ok(ExitStatus::Ok)
}

/// The CSV export: a header, then one row per metric of every record.
pub fn write_csv(stored: &StoredRun, out: impl Write) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "run",
        "label",
        "host",
        "capability",
        "scenario",
        "variant",
        "parameters",
        "verdict",
        "metric",
        "unit",
        "source",
        "n",
        "median",
        "min",
        "max",
        "mean",
        "cv",
        "samples",
    ])?;
    let label = stored.meta.label.clone().unwrap_or_default();
    for r in &stored.report.records {
        let verdict = r
            .verdict
            .map(|v| {
                serde_json::to_value(v)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        let params = serde_json::to_string(&r.parameters)?;
        for m in &r.metrics {
            let s = m.summary;
            let f = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
            let source = match &m.source {
                atomlab_core::Source::Pmu(e) => format!("pmu:{e}"),
                other => serde_json::to_value(other)
                    .ok()
                    .and_then(|v| v["kind"].as_str().map(String::from))
                    .unwrap_or_default(),
            };
            w.write_record([
                stored.meta.id.as_str(),
                &label,
                &stored.meta.host,
                &r.capability,
                &r.scenario,
                &r.variant,
                &params,
                &verdict,
                &m.name,
                serde_json::to_value(m.unit)?.as_str().unwrap_or_default(),
                &source,
                &s.map(|s| s.n.to_string()).unwrap_or_default(),
                &f(s.map(|s| s.median)),
                &f(s.map(|s| s.min)),
                &f(s.map(|s| s.max)),
                &f(s.map(|s| s.mean)),
                &f(s.map(|s| s.cv)),
                &m.samples
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
            ])?;
        }
    }
    w.flush()?;
    Ok(())
}

/// Reads a --json document, refusing another schema version with a clear
/// message.
pub fn read_document(path: &std::path::Path) -> anyhow::Result<Report> {
    let bytes = if path.as_os_str() == "-" {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut v)?;
        v
    } else {
        std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?
    };
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not JSON", path.display()))?;
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => anyhow::bail!(
            "{} is atomlab JSON of schema_version {v}; this atomlab reads schema_version {SCHEMA_VERSION}: re-run the command with this atomlab, or use the atomlab that wrote it",
            path.display()
        ),
        None => anyhow::bail!(
            "{} has no schema_version: it is not an atomlab --json document (schema/atomlab.schema.json)",
            path.display()
        ),
    }
    serde_json::from_value(value).with_context(|| {
        format!(
            "{} does not have the shape of an atomlab --json document (schema/atomlab.schema.json)",
            path.display()
        )
    })
}

/// `atomlab import FILE.json`.
pub fn import(
    store: &mut Store,
    file: &std::path::Path,
    label: Option<String>,
) -> anyhow::Result<ExitStatus> {
    let report = read_document(file)?;
    let meta = RunMeta::new(report.command.clone(), std::env::args().collect(), label);
    let meta = store.import(report, meta)?;
    eprintln!(
        "atomlab: imported {} as run {} in {}",
        file.display(),
        meta.id,
        store.location()
    );
    println!("{}", meta.id);
    Ok(ExitStatus::Ok)
}
