//! `atomlab compare A B`: B judged against A, metric by metric
//! (atomlab-stats: medians, change, Hodges–Lehmann interval, Mann–Whitney
//! p-value adjusted by Holm–Bonferroni over all judged rows, a verdict),
//! changed verdicts first, unmatched records listed, and how many records
//! matched; a field each side sets throughout (`--variant ttas` against
//! `--variant mcs`) is what is compared, not part of the match; tail
//! percentiles with too few samples under them are shown but not judged;
//! partial (Ctrl-C'd) runs are left out unless `--include-partial`. Exit 1
//! on a significant regression beyond `--threshold`, 2 when nothing could
//! be compared. With
//! `--interleave N -- ARGS_A -- ARGS_B` it first runs the two atomlab
//! commands alternately N times (A B A B …), so that slow drift of a shared
//! machine falls on both sides, and saves both series.

use anyhow::Context;
use atomlab_core::{ExitStatus, Report};
use atomlab_report::compare_view;
use atomlab_stats::ab::{compare_sides, is_partial, Side};
use atomlab_stats::interleave::{Finished, InterleaveError, Interleaved};
use atomlab_stats::Settings;
use atomlab_store::Store;

use crate::args::Globals;
use crate::render;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "A and B are run ids (or unique prefixes), labels (every run with that \
label, so the shards of one job pool into one side) or --json files. Exit status: 0 no \
regression; 1 a changed verdict for the worse, or a metric significantly worse by more than \
--threshold (p-values adjusted by Holm-Bonferroni over all judged rows); 2 bad input, or \
nothing the two sides share to compare."
)]
pub struct CompareArgs {
    /// The baseline: a run id, a label or a --json file.
    #[arg(required_unless_present = "interleave")]
    pub a: Option<String>,
    /// The candidate: a run id, a label or a --json file.
    #[arg(required_unless_present = "interleave")]
    pub b: Option<String>,
    /// The smallest change that matters, in per cent; a significant change
    /// for the worse beyond it exits 1 [default: 1].
    #[arg(
        long,
        value_name = "P",
        default_value_t = 1.0,
        hide_default_value = true
    )]
    pub threshold: f64,
    /// Only this metric (ns_per_op, ops_per_sec, seconds…).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Run `-- ARGS_A -- ARGS_B` (two atomlab commands without `atomlab`)
    /// alternately N times each, save both series and compare them.
    #[arg(long, value_name = "N")]
    pub interleave: Option<usize>,
    /// Pool partial runs (a `load` stopped by Ctrl-C) with complete ones;
    /// by default they are left out and counted.
    #[arg(long)]
    pub include_partial: bool,
    /// With --interleave: the two commands, separated by `--`.
    #[arg(last = true, value_name = "ARGS_A -- ARGS_B")]
    pub commands: Vec<String>,
}

/// Resolves a run id, a label or a file into a side, warning when a
/// label lacks some of its job's shards.
pub fn side(spec: &str, store: &mut Option<Store>, cli: &Globals) -> anyhow::Result<Side> {
    if let Some(side) = atomlab_store::side::file_side(spec)? {
        return Ok(side);
    }
    if store.is_none() {
        *store = Some(crate::cmd::store::open_existing(cli.store.as_deref())?);
    }
    let s = store.as_ref().expect("opened above");
    let found = s.side(spec)?;
    crate::cmd::store::warn_missing(spec, &found.missing_shards);
    Ok(found.side)
}

pub fn run(args: &CompareArgs, cli: &Globals, json: bool) -> anyhow::Result<ExitStatus> {
    if !(args.threshold.is_finite() && args.threshold >= 0.0) {
        anyhow::bail!(
            "--threshold must be a non-negative per cent, not {}",
            args.threshold
        );
    }
    let mut store: Option<Store> = None;
    let (a, b) = match args.interleave {
        Some(n) => interleave(n, &args.commands, cli)?,
        None => {
            let (a, b) = (args.a.as_deref(), args.b.as_deref());
            let (Some(a), Some(b)) = (a, b) else {
                anyhow::bail!("compare needs A and B (run ids, labels or --json files), or --interleave N -- ARGS_A -- ARGS_B");
            };
            (side(a, &mut store, cli)?, side(b, &mut store, cli)?)
        }
    };
    let (a, b) = if args.include_partial {
        (a, b)
    } else {
        (a.complete_only(), b.complete_only())
    };
    let settings = Settings {
        threshold: args.threshold / 100.0,
        ..Settings::default()
    };
    let result = compare_sides(&a, &b, settings, args.metric.as_deref())?;
    if json {
        let machine = atomlab_core::Machine::detect();
        render::json(&Report::new(
            "compare",
            machine,
            result.records(&a.name, &b.name),
        ))?;
    } else {
        let mut out = std::io::stdout().lock();
        compare_view::write_terminal(
            &mut out,
            &result,
            &a.name,
            &b.name,
            args.threshold,
            settings.alpha,
        )?;
        compare_view::write_flagged(&mut out, &a, &b)?;
    }
    for (tag, side) in [("A", &a), ("B", &b)] {
        if side.partial > 0 {
            eprintln!(
                "atomlab compare: left out {} partial record(s) of {tag} (runs cut short by Ctrl-C, interrupted=true); --include-partial pools them with the complete ones",
                side.partial
            );
        } else if args.include_partial {
            let n = side.records.iter().filter(|r| is_partial(r)).count();
            if n > 0 {
                eprintln!("atomlab compare: {n} partial record(s) of {tag} pooled with the complete ones (--include-partial)");
            }
        }
    }
    if result.regressions() > 0 {
        eprintln!(
            "atomlab compare: {} regression(s) of {} against {} (threshold {}%)",
            result.regressions(),
            b.name,
            a.name,
            args.threshold
        );
        return Ok(ExitStatus::VerdictFailed);
    }
    Ok(ExitStatus::Ok)
}

/// Runs the two commands alternately `n` times each (atomlab-stats'
/// [`Interleaved`]); each round is this atomlab started again with the
/// side's words, `--json`, its label (`interleave-A`/`-B`, or
/// `--label`-A/-B) and the global `--no-save` and `--store`.
fn interleave(n: usize, commands: &[String], cli: &Globals) -> anyhow::Result<(Side, Side)> {
    let rounds = Interleaved::new(n, commands).map_err(|e| match e {
        InterleaveError::NoRounds => anyhow::anyhow!("--interleave needs at least 1 round"),
        InterleaveError::NotTwoCommands => anyhow::anyhow!("--interleave needs two commands: compare --interleave N -- bench lock --variant ttas -- bench lock --variant tas"),
        e => anyhow::anyhow!("--interleave: {e}"),
    })?;
    let me = std::env::current_exe().context("finding this atomlab binary")?;
    // Stored with each run: the user's words for this side, not the flags
    // added here.
    let argv0 = std::env::args_os()
        .next()
        .unwrap_or_else(|| "atomlab".into());
    rounds.run(cli.label.as_deref(), |round| -> anyhow::Result<Finished> {
        let words = round.command.join(" ");
        eprintln!(
            "atomlab compare: round {}/{}, {}: atomlab {words}",
            round.round,
            round.rounds,
            round.arm.tag()
        );
        let given: Vec<String> = std::iter::once(argv0.to_string_lossy().into_owned())
            .chain(round.command.iter().cloned())
            .collect();
        let mut c = std::process::Command::new(&me);
        c.env(
            crate::cmd::store::COMMAND_LINE_ENV,
            serde_json::to_string(&given)?,
        );
        c.args(round.command)
            .arg("--json")
            .arg("--label")
            .arg(round.label);
        if cli.no_save {
            c.arg("--no-save");
        }
        if let Some(s) = &cli.store {
            c.arg("--store").arg(s);
        }
        let out = c
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running atomlab {words}"))?;
        Ok(Finished {
            code: out.status.code(),
            stdout: out.stdout,
        })
    })
}
