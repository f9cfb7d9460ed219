//! `atomlab compare A B`: B judged against A, metric by metric
//! (atomlab-stats: medians, change, Hodges–Lehmann interval, Mann–Whitney
//! p-value, a verdict), changed verdicts first, unmatched records listed;
//! exit 1 on a significant regression beyond `--threshold`. With
//! `--interleave N -- ARGS_A -- ARGS_B` it first runs the two atomlab
//! commands alternately N times (A B A B …), so that slow drift of a shared
//! machine falls on both sides, and saves both series.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use atomlab_core::{ExitStatus, Metric, Record, Report, Source, Unit, Verdict};
use atomlab_stats::ab::{compare_records, AbResult};
use atomlab_stats::Settings;
use atomlab_store::Store;

use crate::cli::Cli;
use crate::render;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "A and B are run ids (or unique prefixes), labels (every run with that \
label, so the shards of one job pool into one side) or --json files. Exit status: 0 no \
regression; 1 a changed verdict for the worse, or a metric significantly worse by more than \
--threshold; 2 bad input."
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
    #[arg(long, value_name = "P", default_value_t = 1.0)]
    pub threshold: f64,
    /// Only this metric (ns_per_op, ops_per_sec, seconds…).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Run `-- ARGS_A -- ARGS_B` (two atomlab commands without `atomlab`)
    /// alternately N times each, save both series and compare them.
    #[arg(long, value_name = "N")]
    pub interleave: Option<usize>,
    /// With --interleave: the two commands, separated by `--`.
    #[arg(last = true, value_name = "ARGS_A -- ARGS_B")]
    pub commands: Vec<String>,
}

/// One side: its name for people and its records.
pub struct Side {
    pub name: String,
    pub records: Vec<Record>,
}

/// Resolves a run id, a label or a file into a side.
pub fn side(spec: &str, store: &mut Option<Store>, cli: &Cli) -> anyhow::Result<Side> {
    let path = Path::new(spec);
    if path.is_file() {
        let report = crate::cmd::store::read_document(path)?;
        return Ok(Side {
            name: spec.to_string(),
            records: report.records,
        });
    }
    if store.is_none() {
        *store = Some(crate::cmd::store::open_existing(cli.store.as_deref())?);
    }
    let s = store.as_ref().expect("opened above");
    let by_label = s.runs_with_label(spec)?;
    if !by_label.is_empty() {
        let n = by_label.len();
        return Ok(Side {
            name: format!("label {spec} ({n} run{})", if n == 1 { "" } else { "s" }),
            records: by_label
                .into_iter()
                .flat_map(|r| r.report.records)
                .collect(),
        });
    }
    match s.load(spec) {
        Ok(run) => Ok(Side {
            name: format!("run {}", run.meta.id),
            records: run.report.records,
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
    if json {
        let machine = atomlab_core::Machine::detect();
        render::json(&Report::new(
            "compare",
            machine,
            records(&result, &a.name, &b.name),
        ))?;
    } else {
        print(&result, &a.name, &b.name, args.threshold)?;
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
        },
        Side {
            name: format!("B: atomlab {}", cmd_b.join(" ")),
            records: Vec::new(),
        },
    ];
    for round in 1..=n {
        for (k, (cmd, tag)) in [(cmd_a, "A"), (cmd_b, "B")].into_iter().enumerate() {
            eprintln!(
                "atomlab compare: round {round}/{n}, {tag}: atomlab {}",
                cmd.join(" ")
            );
            let mut c = std::process::Command::new(&me);
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

/// The people's view: changed verdicts, the metric table, the unmatched.
fn print(r: &AbResult, a: &str, b: &str, threshold: f64) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "A = {a}\nB = {b}")?;
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
            "record", "metric", "median A", "median B", "change", "95% CI", "p", "verdict",
        ]);
        for row in &r.rows {
            let mut cells = vec![row.key.to_string(), row.metric.clone()];
            match &row.comparison {
                Some(c) => {
                    let v = if row.regression {
                        format!("{} (regression)", verdict_word(c.verdict))
                    } else {
                        verdict_word(c.verdict).to_string()
                    };
                    cells.extend([
                        render::num(c.median_a),
                        render::num(c.median_b),
                        pct(c.change),
                        format!(
                            "[{}, {}]{}",
                            pct(c.ci_low),
                            pct(c.ci_high),
                            if c.ci_confidence + 1e-9 < 0.95 {
                                format!(" ({:.0}%)", c.ci_confidence * 100.0)
                            } else {
                                String::new()
                            }
                        ),
                        format!("{:.3}", c.p_value),
                        v,
                    ]);
                }
                None => {
                    cells.extend(["-", "-", "-", "-", "-", "no usable samples"].map(String::from))
                }
            }
            t.add_row(cells);
        }
        writeln!(out, "{t}")?;
        writeln!(out, "change: B vs A, relative to A's median; CI: Hodges-Lehmann shift with Moses' interval (its confidence in brackets when the runs are too few to reach 95%); p: Mann-Whitney U, two-sided; verdict: better/worse when p < 0.05, the interval excludes 0 and the change exceeds {threshold}%; too noisy when the interval is wider than 2x{threshold}% or below 95%")?;
    }
    for k in &r.only_a {
        writeln!(out, "only in A: {k}")?;
    }
    for k in &r.only_b {
        writeln!(out, "only in B: {k}")?;
    }
    if r.rows.is_empty() && r.verdict_changes.is_empty() {
        writeln!(out, "no record of A matches one of B")?;
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
        if let Some(c) = &row.comparison {
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
            rec.param("verdict", verdict_word(c.verdict));
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
