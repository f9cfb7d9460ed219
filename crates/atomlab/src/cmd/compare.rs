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
use atomlab_core::{ExitStatus, Record, Report};
use atomlab_stats::ab::{compare_records, is_partial, AbResult, Side};
use atomlab_stats::interleave::Arm;
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
    let gate = args.threshold / 100.0;
    let settings = Settings {
        threshold: gate,
        ..Settings::default()
    };
    let result = compare_records(
        &a.records,
        &b.records,
        settings,
        args.metric.as_deref(),
        gate,
    );
    if let Some(m) = &args.metric {
        if result.rows.is_empty() && result.verdict_changes.is_empty() {
            anyhow::bail!("no metric named '{m}' in records both sides share (bench has ns_per_op, ops_per_sec, ref_cycles_per_op, fairness; fixed-work lock has seconds)");
        }
    }
    if !result.compared_anything() {
        anyhow::bail!("{}", nothing_compared(&result, &a, &b));
    }
    if json {
        let machine = atomlab_core::Machine::detect();
        render::json(&Report::new(
            "compare",
            machine,
            result.records(&a.name, &b.name),
        ))?;
    } else {
        atomlab_report::compare_view::write_terminal(
            &mut std::io::stdout().lock(),
            &result,
            &a.name,
            &b.name,
            args.threshold,
            settings.alpha,
        )?;
        // Figures the harness itself marked (not contended, runs left out)
        // are compared as measured, but the reader must know.
        for (tag, side) in [("A", &a), ("B", &b)] {
            let flagged: Vec<String> = side
                .records
                .iter()
                .filter(|r| !r.flags.is_empty())
                .map(|r| {
                    let mut words: Vec<&str> = r.flags.iter().map(|f| f.kind.words()).collect();
                    words.dedup();
                    format!("{} {} ({})", r.scenario, r.variant, words.join(", "))
                })
                .collect();
            if !flagged.is_empty() {
                println!(
                    "note: {} flagged record(s) in {tag}, compared as measured: {}",
                    flagged.len(),
                    flagged.join("; ")
                );
            }
        }
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

/// Why nothing was compared, and what to do.
fn nothing_compared(r: &AbResult, a: &Side, b: &Side) -> String {
    let mut why = if a.records.is_empty() || b.records.is_empty() {
        let (tag, side) = if a.records.is_empty() {
            ("A", a)
        } else {
            ("B", b)
        };
        format!(
            "nothing to compare: {tag} ({}) has no records{}",
            side.name,
            if side.partial > 0 {
                format!(
                    " besides {} partial one(s) (--include-partial pools them)",
                    side.partial
                )
            } else {
                String::new()
            }
        )
    } else if r.matched == 0 {
        let show = |keys: &[atomlab_stats::ab::Key]| {
            let mut s: Vec<String> = keys.iter().take(3).map(|k| k.to_string()).collect();
            if keys.len() > 3 {
                s.push(format!("… {} more", keys.len() - 3));
            }
            s.join("; ")
        };
        format!(
            "nothing to compare: no record of A ({}) matches one of B ({}). Records match by capability, scenario, variant and parameters (a variant or parameter set throughout each side is left out); A has {}: {}; B has {}: {}",
            a.name,
            b.name,
            r.only_a.len(),
            show(&r.only_a),
            r.only_b.len(),
            show(&r.only_b)
        )
    } else {
        format!(
            "nothing to compare: {} record(s) of A and B match, but none carries a verdict or a timing both sides have",
            r.matched
        )
    };
    why.push_str(" (exit 2: a comparison that compares nothing must not pass a CI gate)");
    why
}

/// Runs the two commands alternately (atomlab-stats' rounds), `n` times
/// each, with `--json`, saving each run (unless `--no-save`) under the label `interleave-A` /
/// `interleave-B` (or `--label`-A/-B).
fn interleave(n: usize, commands: &[String], cli: &Globals) -> anyhow::Result<(Side, Side)> {
    if n == 0 {
        anyhow::bail!("--interleave needs at least 1 round");
    }
    let split = commands.iter().position(|c| c == "--").ok_or_else(|| {
        anyhow::anyhow!("--interleave needs two commands: compare --interleave N -- bench lock --variant ttas -- bench lock --variant tas")
    })?;
    let (cmd_a, cmd_b) = (&commands[..split], &commands[split + 1..]);
    if cmd_a.is_empty() || cmd_b.is_empty() {
        anyhow::bail!("--interleave: one of the two commands is empty");
    }
    let me = std::env::current_exe().context("finding this atomlab binary")?;
    let base = cli.label.clone().unwrap_or_else(|| "interleave".into());
    let run_one = |arm: Arm, round: usize| -> anyhow::Result<Vec<Record>> {
        let (cmd, tag) = match arm {
            Arm::A => (cmd_a, arm.tag()),
            Arm::B => (cmd_b, arm.tag()),
        };
        eprintln!(
            "atomlab compare: round {round}/{n}, {tag}: atomlab {}",
            cmd.join(" ")
        );
        let mut c = std::process::Command::new(&me);
        // Stored with the run: the user's words for this side, not
        // the flags added here.
        let argv0 = std::env::args_os()
            .next()
            .unwrap_or_else(|| "atomlab".into());
        let given: Vec<String> = std::iter::once(argv0.to_string_lossy().into_owned())
            .chain(cmd.iter().cloned())
            .collect();
        c.env(
            crate::cmd::store::COMMAND_LINE_ENV,
            serde_json::to_string(&given)?,
        );
        c.args(cmd)
            .arg("--json")
            .arg("--label")
            .arg(format!("{base}-{tag}"));
        if cli.no_save {
            c.arg("--no-save");
        }
        if let Some(s) = &cli.store {
            c.arg("--store").arg(s);
        }
        let out = c
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running atomlab {}", cmd.join(" ")))?;
        if out.status.code() == Some(2) {
            anyhow::bail!("atomlab {} was refused (exit 2): see above", cmd.join(" "));
        }
        let report: Report = serde_json::from_slice(&out.stdout).with_context(|| {
            format!("atomlab {} did not print a --json document", cmd.join(" "))
        })?;
        Ok(report.records)
    };
    let (a, b) = atomlab_stats::interleave::interleave(n, run_one)?;
    Ok((
        Side::new(format!("A: atomlab {}", cmd_a.join(" ")), a),
        Side::new(format!("B: atomlab {}", cmd_b.join(" ")), b),
    ))
}
