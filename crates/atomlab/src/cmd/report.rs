//! `atomlab report`: one self-contained HTML file (inline SVG charts, no
//! network, readable without JavaScript) of saved runs, drawn by
//! atomlab-report; with `--compare A B`, the comparison and its chart too.

use std::path::PathBuf;

use anyhow::Context;
use atomlab_core::ExitStatus;
use atomlab_report::{ComparisonView, RunView};
use atomlab_store::{RunFilter, Store, StoredRun};

use crate::args::Globals;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Without RUN: the runs of the global --label (every shard of a job), \
or with --compare A B the runs compared, or else the latest run."
)]
pub struct ReportArgs {
    /// Run ids (or unique prefixes) to include.
    pub runs: Vec<String>,
    /// Where to write the HTML file.
    #[arg(
        short,
        long,
        value_name = "FILE",
        default_value = "atomlab-report.html"
    )]
    pub output: PathBuf,
    /// Add the comparison of B against A (run ids, labels or --json files).
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub compare: Vec<String>,
    /// The comparison's threshold, in per cent [default: 1].
    #[arg(
        long,
        value_name = "P",
        default_value_t = 1.0,
        hide_default_value = true
    )]
    pub threshold: f64,
}

/// Writes `html` to `path` through a temporary file, so a reader never sees
/// half a report.
pub fn write(path: &std::path::Path, html: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension("html.partial");
    std::fs::write(&tmp, html).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The runs one side of `--compare` names: a `--json` file's run, or the
/// runs of a label, or one run.
fn side_runs(spec: &str, store: &Store) -> anyhow::Result<Vec<StoredRun>> {
    match atomlab_store::side::file_run(spec)? {
        Some(run) => Ok(vec![run]),
        None => Ok(store.side_runs(spec)?),
    }
}

pub fn run(args: &ReportArgs, cli: &Globals) -> anyhow::Result<ExitStatus> {
    let store: Store = crate::cmd::store::open_existing(cli.store.as_deref())?;
    let mut runs: Vec<StoredRun> = Vec::new();
    for id in &args.runs {
        runs.push(store.load(id)?);
    }
    if runs.is_empty() {
        if let Some(label) = &cli.label {
            runs = store.runs_with_label(label)?;
            if runs.is_empty() {
                anyhow::bail!(
                    "no saved run has the label '{label}' in {}",
                    store.location()
                );
            }
            crate::cmd::store::warn_missing_shards(label, &runs);
        } else if args.compare.is_empty() {
            let latest = store.runs(&RunFilter {
                limit: 1,
                ..RunFilter::default()
            })?;
            let Some(latest) = latest.first() else {
                anyhow::bail!(
                    "no saved runs in {}: run a command (atomlab suite) first, or give --store",
                    store.location()
                );
            };
            runs.push(store.load(&latest.meta.id)?);
        }
    }
    let mut store = Some(store);
    let comparison = match args.compare.as_slice() {
        [a, b] => {
            let (a, b) = (
                crate::cmd::compare::side(a, &mut store, cli)?,
                crate::cmd::compare::side(b, &mut store, cli)?,
            );
            let gate = args.threshold / 100.0;
            let settings = atomlab_stats::Settings {
                threshold: gate,
                ..Default::default()
            };
            Some(ComparisonView {
                result: atomlab_stats::ab::compare_records(
                    &a.records, &b.records, settings, None, gate,
                ),
                a_name: a.name,
                b_name: b.name,
                threshold: gate,
            })
        }
        _ => None,
    };
    if runs.is_empty() {
        // `--compare A B` alone: the runs compared, so that the page says
        // what A and B are.
        let store = store.as_ref().expect("opened at the start");
        for spec in &args.compare {
            for run in side_runs(spec, store)? {
                if !runs.iter().any(|r| r.meta.id == run.meta.id) {
                    runs.push(run);
                }
            }
        }
    }
    let views: Vec<RunView> = runs.into_iter().map(RunView::from).collect();
    let html = atomlab_report::render_html(&views, comparison.as_ref());
    write(&args.output, &html)?;
    eprintln!(
        "atomlab: wrote {} ({} run{}{})",
        args.output.display(),
        views.len(),
        if views.len() == 1 { "" } else { "s" },
        if comparison.is_some() {
            " and a comparison"
        } else {
            ""
        }
    );
    println!("{}", args.output.display());
    Ok(ExitStatus::Ok)
}
