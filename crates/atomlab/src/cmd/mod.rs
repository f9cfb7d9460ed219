//! One module per subcommand. Each turns parsed arguments into calls on a
//! capability crate and returns a [`CommandOutput`]: the records as one
//! [`Report`], the exit status their verdicts give, and the people's view.
//! Rendering (`--json` or the view) and the exit code are applied here,
//! once, the same way for every subcommand (the book's design chapter,
//! docs/src/design.md, "How one result flows").

pub mod audit;
pub mod bench;
pub mod check;
pub mod compare;
pub mod load;
mod machine;
pub mod report;
pub mod run;
pub mod store;
pub mod stress;
mod suite;
pub mod verify;

use atomlab_core::{ExitStatus, Report};

use crate::cli::{Cli, Command};
use crate::render;

/// How a command shows its report to people (tables, herd logs).
pub type PeopleView = Box<dyn FnOnce(&Report) -> anyhow::Result<()>>;

/// What a subcommand hands back to the dispatcher: its output before
/// rendering.
pub struct CommandOutput {
    /// The document `--json` prints: machine, records, unusable inputs.
    pub report: Report,
    /// The exit status the records' verdicts give.
    pub status: ExitStatus,
    /// The people's view, printed on stdout unless `--json`.
    pub people: PeopleView,
}

pub fn dispatch(cli: Cli) -> anyhow::Result<ExitStatus> {
    // `check --format json` and `run --format json` are `--json`: one
    // document shape everywhere.
    let json = cli.json
        || matches!(&cli.command, Command::Check(a) if a.format == check::Format::Json)
        || matches!(&cli.command, Command::Run(a) if a.format == run::Format::Json);
    let command_name = match &cli.command {
        Command::Audit(_) => "audit",
        Command::Check(_) => "check",
        Command::Run(_) => "run",
        Command::Suite(_) => "suite",
        Command::Bench(_) => "bench",
        Command::Stress(_) => "stress",
        Command::Load(_) => "load",
        Command::Verify(_) => "verify",
        Command::Machine => "machine",
        // Commands that describe the tool or read the store have no run.
        other => return tools(other, &cli, json),
    };
    // Commands that measure or judge save their run: the store is opened
    // first, so a bad one stops the command before anything is measured.
    let saves = command_name != "machine" && !cli.no_save;
    let mut store = if saves {
        Some(store::open(cli.store.as_deref())?)
    } else {
        None
    };
    let shard = match &cli.command {
        Command::Check(a) => a.shard,
        Command::Bench(a) => a.shard,
        Command::Stress(a) => a.shard,
        _ => None,
    };
    let suite_report = match &cli.command {
        Command::Suite(a) => Some(a.output.clone()),
        _ => None,
    };
    let mut meta = atomlab_store::RunMeta::without_commit(
        command_name,
        store::given_command_line(),
        cli.label.clone(),
    );
    // git runs beside the command, not before it; after it, on this
    // thread, when the system refuses a thread (`ulimit -u`).
    let git = saves.then(|| std::thread::Builder::new().spawn(atomlab_store::git_commit));
    let outcome = match cli.command {
        Command::Audit(args) => audit::run(args)?,
        // The records' per-state detail is read only from the store and
        // from --json.
        Command::Check(args) => check::run(args, saves || json)?,
        Command::Run(args) => run::run(*args)?,
        Command::Machine => machine::run(),
        Command::Suite(args) => suite::run(args)?,
        Command::Bench(args) => bench::run(*args)?,
        Command::Stress(args) => stress::run(*args)?,
        Command::Load(args) => load::run(*args)?,
        Command::Verify(args) => verify::run(*args)?,
        _ => unreachable!("tools() took the others"),
    };
    let CommandOutput {
        mut report,
        status,
        people,
    } = outcome;
    // A shard with nothing to do says so, and its run is saved with one
    // record that names the shard, so that its label knows how many shards
    // the job has (compare and report warn of missing ones).
    let empty_shard = shard
        .filter(|_| report.records.is_empty() && report.errors.is_empty())
        .map(|s| {
            eprintln!(
                "atomlab: shard {s} has nothing to run: the work splits into fewer than {} \
                 parts{}",
                s.count,
                if saves {
                    "; its empty run is saved so that its label counts this shard"
                } else {
                    ""
                }
            );
            s.empty_record(command_name)
        });
    if json {
        report.records.extend(empty_shard);
        render::json(&report)?;
    } else {
        people(&report)?;
        report.records.extend(empty_shard);
    }
    for e in &report.errors {
        eprintln!("atomlab: {e}");
    }
    meta.git_commit = match git {
        Some(Ok(beside)) => beside.join().ok().flatten(),
        Some(Err(_)) => atomlab_store::git_commit(),
        None => None,
    };
    // A failed save (the run then kept in a file) still lets the suite
    // write its HTML report below; its error is returned after.
    let saved = match &mut store {
        Some(store) if !report.records.is_empty() => store::save(store, &mut meta, &report),
        _ => Ok(()),
    };
    if let Some(path) = suite_report {
        // The suite's report: the run just made, in one HTML file.
        let view = atomlab_report::RunView {
            id: meta.id.clone(),
            label: meta.label.clone(),
            command_line: meta.command_line.clone(),
            started_unix: meta.started_unix,
            host: meta.host.clone(),
            report,
        };
        let html = atomlab_report::render_html(std::slice::from_ref(&view), None);
        match (report::write(&path, &html), &saved) {
            (Ok(()), _) => eprintln!("atomlab: wrote the suite's report to {}", path.display()),
            // The save's error (where the run was kept) is the one returned.
            (Err(e), Err(_)) => eprintln!("atomlab: {e:#}"),
            (Err(e), Ok(())) => return Err(e),
        }
    } else {
        // The process ends with this command: freeing every record's values
        // one by one took a tenth of a 400-test `check` (perf), for memory
        // the exit returns at once. The store above is closed normally.
        std::mem::forget(report);
    }
    saved?;
    Ok(status)
}

/// The commands without a run of their own: completions and the man page,
/// and those that read the store.
fn tools(command: &Command, cli: &Cli, json: bool) -> anyhow::Result<ExitStatus> {
    match command {
        Command::Completions { shell } => {
            let mut cmd = crate::cli::completion_command();
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut cmd, "atomlab", &mut script);
            let script = crate::cli::without_hidden(&cmd, &String::from_utf8_lossy(&script));
            std::io::Write::write_all(&mut std::io::stdout(), script.as_bytes())?;
            Ok(ExitStatus::Ok)
        }
        Command::Man { command, dir } => {
            match dir {
                Some(dir) => {
                    for path in crate::man::write_all(dir)? {
                        println!("{}", path.display());
                    }
                }
                None => {
                    let page = crate::man::page(command.as_deref())?;
                    std::io::Write::write_all(&mut std::io::stdout(), &page.text)?;
                }
            }
            Ok(ExitStatus::Ok)
        }
        Command::Runs(args) => store::runs(
            &store::open_existing(cli.store.as_deref())?,
            args,
            cli.label.clone(),
            json,
        ),
        Command::Show { run } => {
            store::show(&store::open_existing(cli.store.as_deref())?, run, json)
        }
        Command::Export { run, format } => {
            store::export(&store::open_existing(cli.store.as_deref())?, run, *format)
        }
        Command::Import { file } => store::import(cli.store.as_deref(), file, cli.label.clone()),
        Command::Compare(args) => compare::run(args, &globals(cli), json),
        Command::Report(args) => report::run(args, &globals(cli)),
        _ => unreachable!("dispatch() runs the commands with records"),
    }
}

/// The global options `compare` and `report` read.
fn globals(cli: &Cli) -> crate::args::Globals {
    crate::args::Globals {
        store: cli.store.clone(),
        label: cli.label.clone(),
        no_save: cli.no_save,
    }
}

/// A saved report as its command printed it (`atomlab show`), from its
/// records alone.
pub fn view(report: &Report) -> anyhow::Result<()> {
    if let [r] = report.records.as_slice() {
        if atomlab_core::shard::is_empty_record(r) {
            for n in &r.notes {
                eprintln!("atomlab: {n}");
            }
            return Ok(());
        }
    }
    render::show(report)
}
