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

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use atomlab_core::{ExitStatus, Metric, Record, Report, Source, Unit, Verdict};
use atomlab_stats::ab::{compare_records, is_partial, AbResult};
use atomlab_stats::{CiMethod, PMethod, Settings};
use atomlab_store::Store;

use crate::cli::Cli;
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

/// One side: its name for people and its records.
pub struct Side {
    pub name: String,
    pub records: Vec<Record>,
    /// Partial records left out (see `complete_only`).
    pub partial: usize,
}

/// Resolves a run id, a label or a file into a side.
pub fn side(spec: &str, store: &mut Option<Store>, cli: &Cli) -> anyhow::Result<Side> {
    let path = Path::new(spec);
    if path.is_file() {
        let report = crate::cmd::store::read_document(path)?;
        return Ok(Side {
            name: spec.to_string(),
            records: report.records,
            partial: 0,
        });
    }
    if store.is_none() {
        *store = Some(crate::cmd::store::open_existing(cli.store.as_deref())?);
    }
    let s = store.as_ref().expect("opened above");
    let by_label = s.runs_with_label(spec)?;
    if !by_label.is_empty() {
        crate::cmd::store::warn_missing_shards(spec, &by_label);
        let n = by_label.len();
        return Ok(Side {
            name: format!("label {spec} ({n} run{})", if n == 1 { "" } else { "s" }),
            records: by_label
                .into_iter()
                .flat_map(|r| r.report.records)
                .filter(|r| !atomlab_core::shard::is_empty_record(r))
                .collect(),
            partial: 0,
        });
    }
    match s.load(spec) {
        Ok(mut run) => Ok(Side {
            name: format!("run {}", run.meta.id),
            records: {
                run.report
                    .records
                    .retain(|r| !atomlab_core::shard::is_empty_record(r));
                run.report.records
            },
            partial: 0,
        }),
        Err(e) => Err(anyhow::anyhow!(
            "'{spec}' is neither a --json file, a label nor a run in {}: {e}",
            s.location()
        )),
    }
}

pub fn run(args: &CompareArgs, cli: &Cli, json: bool) -> anyhow::Result<ExitStatus> {
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
        (complete_only(a), complete_only(b))
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
            records(&result, &a.name, &b.name),
        ))?;
    } else {
        print(&result, &a.name, &b.name, args.threshold, settings.alpha)?;
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

/// `side` without its partial records, counting them.
fn complete_only(mut side: Side) -> Side {
    let before = side.records.len();
    side.records.retain(|r| !is_partial(r));
    side.partial += before - side.records.len();
    side
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

/// Runs the two commands alternately, `n` times each, with `--json`,
/// saving each run (unless `--no-save`) under the label `interleave-A` /
/// `interleave-B` (or `--label`-A/-B).
fn interleave(n: usize, commands: &[String], cli: &Cli) -> anyhow::Result<(Side, Side)> {
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
    let mut sides = [
        Side {
            name: format!("A: atomlab {}", cmd_a.join(" ")),
            records: Vec::new(),
            partial: 0,
        },
        Side {
            name: format!("B: atomlab {}", cmd_b.join(" ")),
            records: Vec::new(),
            partial: 0,
        },
    ];
    for round in 1..=n {
        for (k, (cmd, tag)) in [(cmd_a, "A"), (cmd_b, "B")].into_iter().enumerate() {
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
            sides[k].records.extend(report.records);
        }
    }
    let [a, b] = sides;
    Ok((a, b))
}

fn pct(x: f64) -> String {
    format!("{:+.2}%", x * 100.0)
}

fn verdict_word(v: atomlab_stats::Verdict) -> &'static str {
    match v {
        atomlab_stats::Verdict::Better => "better",
        atomlab_stats::Verdict::Worse => "worse",
        atomlab_stats::Verdict::NoChange => "no change",
        atomlab_stats::Verdict::TooNoisy => "too noisy",
    }
}

/// The smallest two-sided Mann–Whitney p that `n_a` against `n_b` runs
/// without ties can reach: `2 / C(n_a + n_b, n_a)`.
fn smallest_exact_p(n_a: usize, n_b: usize) -> f64 {
    let (m, n) = (n_a.min(n_b), n_a.max(n_b));
    let arrangements = (1..=m).fold(1.0, |c, i| c * (n + i) as f64 / i as f64);
    (2.0 / arrangements).min(1.0)
}

/// The people's view: what matched, changed verdicts, the metric table,
/// why rows were not judged, the unmatched.
fn print(r: &AbResult, a: &str, b: &str, threshold: f64, alpha: f64) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "A = {a}\nB = {b}")?;
    let mut matched = format!("matched {} record(s) of A with B", r.matched);
    if !(r.only_a.is_empty() && r.only_b.is_empty()) {
        matched.push_str(&format!(
            " ({} of A and {} of B unmatched, listed below)",
            r.only_a.len(),
            r.only_b.len()
        ));
    }
    if !r.across.is_empty() {
        let across: Vec<String> = r
            .across
            .iter()
            .map(|x| format!("{} {} (A) vs {} (B)", x.field, x.a, x.b))
            .collect();
        matched.push_str(&format!(
            ", compared across what each side sets throughout: {}",
            across.join(", ")
        ));
    }
    writeln!(out, "{matched}")?;
    if r.verdicts_compared > 0 {
        writeln!(
            out,
            "verdicts: {} compared, {} changed ({} for the worse)",
            r.verdicts_compared,
            r.verdict_changes.len(),
            r.verdict_changes.iter().filter(|c| c.regression).count()
        )?;
    }
    if !r.rows.is_empty() {
        let unjudged = r.rows.iter().filter(|x| x.not_judged.is_some()).count();
        writeln!(
            out,
            "metrics: {} row(s), {} judged (Holm-Bonferroni over {}){}",
            r.rows.len(),
            r.judged,
            r.judged,
            if unjudged > 0 {
                format!(", {unjudged} shown but not judged (below)")
            } else {
                String::new()
            }
        )?;
    }
    if !r.verdict_changes.is_empty() {
        let mut t = render::table();
        t.set_header(vec!["changed verdict", "A", "B", "regression"]);
        for c in &r.verdict_changes {
            t.add_row(vec![
                c.key.to_string(),
                c.before.clone(),
                c.after.clone(),
                if c.regression { "yes" } else { "no" }.into(),
            ]);
        }
        writeln!(out, "{t}")?;
    }
    if !r.rows.is_empty() {
        let mut t = render::table();
        t.set_header(vec![
            "record", "metric", "median A", "median B", "change", "95% CI", "p", "p (Holm)",
            "verdict",
        ]);
        for row in &r.rows {
            let mut cells = vec![row.key.to_string(), row.metric.clone()];
            match &row.comparison {
                Some(c) => {
                    let v = if row.not_judged.is_some() {
                        "not judged".to_string()
                    } else if row.regression {
                        format!("{} (regression)", verdict_word(c.verdict))
                    } else {
                        verdict_word(c.verdict).to_string()
                    };
                    cells.extend([
                        render::num(c.median_a),
                        render::num(c.median_b),
                        pct(c.change),
                        format!(
                            "[{}, {}]{}{}",
                            pct(c.ci_low),
                            pct(c.ci_high),
                            if c.ci_confidence + 1e-9 < 0.95 {
                                format!(" ({:.0}%)", c.ci_confidence * 100.0)
                            } else {
                                String::new()
                            },
                            if c.ci_method == CiMethod::Bootstrap {
                                "*"
                            } else {
                                ""
                            }
                        ),
                        format!("{:.3}", c.p_value),
                        if row.not_judged.is_some() {
                            "-".to_string()
                        } else {
                            format!("{:.3}", c.p_judged)
                        },
                        v,
                    ]);
                }
                None => cells
                    .extend(["-", "-", "-", "-", "-", "-", "no usable samples"].map(String::from)),
            }
            t.add_row(cells);
        }
        writeln!(out, "{t}")?;
        writeln!(out, "change: B vs A, relative to A's median; CI: Hodges-Lehmann shift with Moses' interval (its confidence in brackets when the runs are too few to reach 95%); p: Mann-Whitney U, two-sided; p (Holm): p adjusted by Holm-Bonferroni over the {} judged rows, so that the chance of any false better/worse among them stays under {alpha}; verdict: better/worse when p (Holm) < {alpha}, the interval excludes 0 and the change exceeds {threshold}%; too noisy when the interval is wider than 2x{threshold}% or below 95%", r.judged)?;
        if let Some(c) = r
            .rows
            .iter()
            .filter_map(|x| x.comparison)
            .find(|c| c.ci_method == CiMethod::Bootstrap)
        {
            writeln!(out, "CI*: {} x {} runs make over a million pairwise differences, so the interval is the percentile bootstrap of the change of medians: {} resamples, each resample's median drawn directly as an order statistic (exact in distribution; costs one sort of each side, not resamples x samples)", c.n_a, c.n_b, Settings::default().resamples)?;
        }
        let mut reasons: Vec<(&str, &str)> = r
            .rows
            .iter()
            .filter_map(|x| Some((x.metric.as_str(), x.not_judged.as_deref()?)))
            .collect();
        reasons.sort();
        reasons.dedup();
        for (metric, why) in reasons {
            writeln!(out, "not judged: {metric}: {why}")?;
        }
        // Holm's first step needs p < alpha/m; with few runs an exact p
        // cannot get that low, and the reader must know it, not read
        // "too noisy" as "unchanged".
        let hopeless = r
            .rows
            .iter()
            .filter(|x| x.not_judged.is_none())
            .filter_map(|x| x.comparison)
            .filter(|c| {
                c.p_method == PMethod::Exact
                    && smallest_exact_p(c.n_a, c.n_b) * r.judged as f64 >= alpha
            })
            .map(|c| (c.n_a, c.n_b))
            .min();
        if let Some((n_a, n_b)) = hopeless {
            writeln!(out, "note: with {n_a} vs {n_b} runs no p can fall below {:.4}, and Holm over {} rows needs the smallest below {:.4}: such rows cannot show a change; use more runs, or --metric to judge fewer rows", smallest_exact_p(n_a, n_b), r.judged, alpha / r.judged as f64)?;
        }
    }
    for k in &r.only_a {
        writeln!(out, "only in A: {k}")?;
    }
    for k in &r.only_b {
        writeln!(out, "only in B: {k}")?;
    }
    Ok(())
}

/// The comparison as records of the one document shape: capability
/// `compare`, scenario = the compared record, variant = the metric.
fn records(r: &AbResult, a: &str, b: &str) -> Vec<Record> {
    let mut out = Vec::new();
    for c in &r.verdict_changes {
        let mut rec = Record::new("compare", &c.key.to_string(), "verdict");
        rec.param("a", a)
            .param("b", b)
            .param("before", c.before.clone())
            .param("after", c.after.clone());
        rec.verdict = Some(if c.regression {
            Verdict::Fail
        } else {
            Verdict::Pass
        });
        out.push(rec);
    }
    for row in &r.rows {
        let mut rec = Record::new("compare", &row.key.to_string(), &row.metric);
        rec.param("a", a).param("b", b);
        if let Some(why) = &row.not_judged {
            rec.param("not_judged", why.clone());
        }
        if let Some(c) = &row.comparison {
            rec.param("n_a", c.n_a).param("n_b", c.n_b);
            let f =
                |name: &str, unit: Unit, v: f64| Metric::new(name, unit, Source::Derived, vec![v]);
            rec.metrics.push(f("median_a", row.unit, c.median_a));
            rec.metrics.push(f("median_b", row.unit, c.median_b));
            rec.metrics
                .push(f("change_percent", Unit::Percent, c.change * 100.0));
            rec.metrics
                .push(f("ci_low_percent", Unit::Percent, c.ci_low * 100.0));
            rec.metrics
                .push(f("ci_high_percent", Unit::Percent, c.ci_high * 100.0));
            rec.metrics.push(f("p_value", Unit::Ratio, c.p_value));
            if row.not_judged.is_none() {
                rec.metrics.push(f("p_holm", Unit::Ratio, c.p_judged));
            }
            rec.param(
                "verdict",
                if row.not_judged.is_some() {
                    "not judged"
                } else {
                    verdict_word(c.verdict)
                },
            );
        }
        rec.verdict = Some(if row.regression {
            Verdict::Fail
        } else {
            Verdict::Pass
        });
        out.push(rec);
    }
    out
}
