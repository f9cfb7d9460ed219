//! The results store from the command line: opening it (before a run, so a
//! bad store fails before anything is measured), saving a run (and, if the
//! save still fails, keeping the run in a file to import later), and the
//! commands that read it back (`runs`, `show`, `export`, `import`).

use std::path::Path;
use std::time::Instant;

use atomlab_core::{ExitStatus, Machine, Report};
use atomlab_report::runs_view;
use atomlab_store::document::{document, read_run_document, write_csv};
use atomlab_store::{Imported, Location, OpenMode, RunFilter, RunMeta, Store, StoredRun};

use crate::render;

/// Opens, creating it when missing, the store named by `--store`,
/// `ATOMLAB_STORE`, `ATOMLAB_DB` or the default path, for a command that
/// saves: it is checked for writability and soundness here, before anything
/// is measured.
pub fn open(flag: Option<&str>) -> anyhow::Result<Store> {
    open_with(flag, OpenMode::Create)
}

/// Opens an existing store for a command that only reads it (`runs`,
/// `show`, `export`, `compare`, `report`): a missing store is an error, and
/// nothing is created.
pub fn open_existing(flag: Option<&str>) -> anyhow::Result<Store> {
    open_with(flag, OpenMode::Existing)
}

fn open_with(flag: Option<&str>, mode: OpenMode) -> anyhow::Result<Store> {
    let location = Location::resolve(flag)?;
    if let (Some(flag), Location::Postgres(_)) = (flag, &location) {
        if atomlab_store::redact_secrets(flag) != flag {
            eprintln!(
                "atomlab: note: a password in --store shows in `ps` to every user of this \
                 machine; put it in PGPASSWORD or ~/.pgpass instead (it is never saved or printed)"
            );
        }
    }
    let mut store = Store::open_with(&location, mode)?;
    store.set_wait_notice(Box::new(|name, limit| {
        eprintln!(
            "atomlab: the results store {name} is locked by another process (a save or an \
             `atomlab import`); waiting for it, up to {} min…",
            limit.as_secs() / 60
        );
    }));
    Ok(store)
}

/// Saves `report` as the run `meta` and says where on stderr. If the store
/// refuses it, the run is written to `atomlab-unsaved-ID.json` (in the
/// current directory, else the temporary directory) so that nothing
/// measured is lost, and the error says how to import it.
pub fn save(store: &mut Store, meta: &mut RunMeta, report: &Report) -> anyhow::Result<()> {
    let start = Instant::now();
    if let Err(unsaved) = store.save_or_keep(meta, report) {
        let kept = match unsaved.kept {
            Ok(path) => format!(
                "the run is kept in {}: `atomlab import {}` saves it (with its id, time and \
                 host) once the store is fixed",
                path.display(),
                path.display()
            ),
            Err(why) => format!(
                "the run could not be kept in a file either ({:#})",
                anyhow::Error::new(why)
            ),
        };
        return Err(anyhow::Error::new(unsaved.error)
            .context(format!("run {} was not saved; {kept}", unsaved.id)));
    }
    let label = meta
        .label
        .as_deref()
        .map(|l| format!(" (label {l})"))
        .unwrap_or_default();
    // `atomlab show ID` finds the run only in the store it resolves to
    // without --store; any other store is named in the hint.
    let default = Location::resolve(None).map(|l| l.to_string()).ok();
    let flag = if default.as_deref() == Some(store.location()) {
        String::new()
    } else {
        format!(
            "--store {} ",
            atomlab_report::shell_quoted(&[store.location().to_string()])
        )
    };
    eprintln!(
        "atomlab: saved run {}{label} in {} ({:.1} ms); `atomlab {flag}show {}` prints it again",
        meta.id,
        store.location(),
        start.elapsed().as_secs_f64() * 1e3,
        meta.id
    );
    Ok(())
}

/// What `runs --capability` takes: the commands that save runs and the
/// capabilities of their records. Anything else matches nothing, so it is
/// refused (exit 2) rather than listed as an empty store.
const CAPABILITIES: [&str; 7] = ["audit", "bench", "check", "load", "run", "stress", "suite"];

/// Warns on stderr when the runs of `label` lack some of their job's
/// shards (an empty shard's record counts as its shard): a comparison or
/// report of them covers part of the work.
pub fn warn_missing_shards(label: &str, runs: &[StoredRun]) {
    let records = runs.iter().flat_map(|r| &r.report.records);
    warn_missing(label, &atomlab_core::shard::missing(records));
}

/// Warns on stderr about each job of `label` that lacks the `missing`
/// shards.
pub fn warn_missing(label: &str, missing: &[atomlab_core::shard::Missing]) {
    for m in missing {
        let names: Vec<String> = m
            .missing
            .iter()
            .map(|i| format!("{i}/{}", m.count))
            .collect();
        eprintln!(
            "atomlab: warning: label {label} has {} of its {} {} shards; missing {}: their runs \
             failed, are still running or were saved in another store, so these figures cover \
             part of the job",
            m.count - names.len(),
            m.count,
            m.capability,
            names.join(", ")
        );
    }
}

/// List the saved runs, newest first; with --label L, only the runs of that label.
#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    /// Only runs of this capability or command.
    #[arg(long, value_name = "C", value_parser = clap::builder::PossibleValuesParser::new(CAPABILITIES))]
    pub capability: Option<String>,
    /// At most N runs [default: 20; 0 for all].
    #[arg(
        long,
        value_name = "N",
        default_value_t = 20,
        hide_default_value = true
    )]
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
        // The document every subcommand's --json prints (its --help says
        // so), the run summaries under `runs`; it lists, so no records.
        let mut doc = serde_json::to_value(Report::new("runs", Machine::detect(), Vec::new()))?;
        doc["runs"] = serde_json::to_value(&runs)?;
        render::json(&doc)?;
        return Ok(ExitStatus::Ok);
    }
    if runs.is_empty() {
        eprintln!("atomlab: no saved runs match in {}", store.location());
        return Ok(ExitStatus::Ok);
    }
    runs_view::write_terminal(&mut std::io::stdout().lock(), &runs)?;
    Ok(ExitStatus::Ok)
}

/// The environment variable through which `compare --interleave` gives the
/// atomlab it starts the user's own command line for that side, which is
/// stored instead of the internal one (`… --json --label X-A`). A JSON
/// array of strings, program name first.
pub const COMMAND_LINE_ENV: &str = "ATOMLAB_COMMAND_LINE";

/// The command line to store with a run: the user's, as given.
pub fn given_command_line() -> Vec<String> {
    std::env::var(COMMAND_LINE_ENV)
        .ok()
        .and_then(|v| serde_json::from_str(&v).ok())
        // args_os: an argument that is not UTF-8 (a file name) is kept,
        // lossily, where `args()` would panic.
        .unwrap_or_else(|| {
            std::env::args_os()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        })
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
            runs_view::started(stored.meta.started_unix),
            stored.meta.host,
            runs_view::command_text(&stored.meta)
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
        ExportFormat::Json => render::json(&document(&stored.meta, &stored.report)?)?,
        ExportFormat::Csv => write_csv(&stored, std::io::stdout().lock())?,
    }
    Ok(ExitStatus::Ok)
}

/// `atomlab import FILE.json`: the run keeps the id, time, command line and
/// host it was saved with (an `export`ed or unsaved-run file says them);
/// a document already stored is not stored again.
pub fn import(
    store_flag: Option<&str>,
    file: &Path,
    label: Option<String>,
) -> anyhow::Result<ExitStatus> {
    // The document first: a bad one leaves the store as it was (not even
    // created).
    let (report, meta) = read_run_document(file)?;
    let store = &mut open(store_flag)?;
    let wanted_id = meta.as_ref().map(|m| m.id.clone());
    match store.import(report, meta, label)? {
        Imported::New(meta) => {
            if let Some(w) = wanted_id.filter(|w| *w != meta.id) {
                eprintln!(
                    "atomlab: note: another run already has the id {w} in {}; this one got a new id",
                    store.location()
                );
            }
            eprintln!(
                "atomlab: imported {} as run {} in {}",
                file.display(),
                meta.id,
                store.location()
            );
            println!("{}", meta.id);
        }
        Imported::AlreadyStored(meta) => {
            eprintln!(
                "atomlab: note: {} is already in {} as run {}; nothing was imported",
                file.display(),
                store.location(),
                meta.id
            );
            println!("{}", meta.id);
        }
    }
    Ok(ExitStatus::Ok)
}
