//! `atomlab verify`: parses the flags, reads the plugin file and hands it
//! to atomlab-verify, then turns the outcomes into records (capability
//! "verify") and the exit status: 1 on a FAIL, 2 on bad input (an error
//! returned from here).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use atomlab_core::progress::{Event, Live};
use atomlab_core::{ExitStatus, Machine, Metric, Record, Report, Source, Unit, Verdict};
use atomlab_model::SearchProgress;
use atomlab_verify::{Options, Plugin};

use super::CommandOutput;

/// `--model`'s help line, the CPUs' models named from the registry.
fn model_help() -> String {
    let cpus: Vec<&str> = atomlab_model::models::of_cpus().map(|m| m.name()).collect();
    format!(
        "Models, comma-separated: the file's own ({}) and sc [default: the file's own]",
        atomlab_core::sentence::or_list(&cpus)
    )
}

/// The kinds of include/atomlab.h, from its one table (`abi::KINDS`).
fn kinds() -> Vec<&'static str> {
    atomlab_verify::Kind::all().map(|k| k.name()).collect()
}

fn variant_help() -> String {
    format!(
        "Variants, comma-separated [default: every variant: {}]",
        atomlab_core::sentence::and_list(&kinds())
    )
}

/// `--rounds`' help, from what each kind's client counts.
fn rounds_help() -> String {
    let each: Vec<String> = atomlab_verify::client::sizes()
        .filter_map(|(k, rounds, _)| Some(format!("{} ({})", rounds?, k.name())))
        .collect();
    format!(
        "Per thread, 1 to 3: {}",
        atomlab_core::sentence::or_list(&each)
    )
}

/// `--items`' help, naming the kinds whose client it sizes.
fn items_help() -> String {
    let takers: Vec<&str> = atomlab_verify::client::sizes()
        .filter(|(_, _, items)| *items)
        .map(|(k, _, _)| k.name())
        .collect();
    format!(
        "Items the {} client's producer pushes through a queue of 2, 1 to 3 (3: the last reuses the first slot; fewer make a --litmus export small enough for herd7)",
        atomlab_core::sentence::and_list(&takers)
    )
}

#[derive(Debug, clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct VerifyArgs {
    /// The plugin (include/atomlab.h), built for aarch64, riscv64 or x86-64; it is read, never loaded.
    #[arg(long, value_name = "PATH")]
    pub plugin: PathBuf,
    #[arg(long, value_delimiter = ',', help = variant_help())]
    pub variant: Vec<String>,
    #[arg(long, value_delimiter = ',', help = model_help())]
    pub model: Vec<String>,
    /// Threads of the client: 2 or 3.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    #[arg(long, default_value_t = 1, help = rounds_help())]
    pub rounds: usize,
    #[arg(long, default_value_t = atomlab_verify::client::SPSC_ITEMS, help = items_help())]
    pub items: usize,
    /// Iterations allowed of a loop that writes (spin loops that only
    /// read need none: spin-assume).
    #[arg(long, default_value_t = 4)]
    pub unroll: usize,
    /// Time allowed per variant and model; past it the verdict is BOUND [default: 60s].
    #[arg(long = "timeout", value_name = "DURATION", value_parser = crate::cmd::bench::parse_seconds)]
    pub timeout: Option<f64>,
    /// Advice: for a FAIL, each single change (an access made acquire or
    /// release, a barrier added) that makes it pass; for a PASS, each
    /// acquire, release or barrier that could be weakened with the PASS
    /// kept. Every change is verified again on the lifted code.
    #[arg(long)]
    pub advise: bool,
    /// Write a Graphviz graph of each FAIL's execution into DIR
    /// (VARIANT-MODEL[-CPU].dot): events labelled with their instruction,
    /// program order, reads-from and coherence.
    #[arg(long, value_name = "DIR")]
    pub dot: Option<PathBuf>,
    /// Write each variant's client as a herd7 litmus test in the file's
    /// own assembly (AArch64 or RISCV) into DIR
    /// (VARIANT-ARCH[-lse|-nolse].litmus): the condition is the client's
    /// (exists a wrong final state: herd7's Never is PASS), each loop cut
    /// at its first iteration by a filter (spin-assume). `atomlab check`
    /// and `herd7 -model aarch64.cat` (riscv.cat) judge it.
    #[arg(long, value_name = "DIR")]
    pub litmus: Option<PathBuf>,
}

pub fn run(args: VerifyArgs) -> anyhow::Result<CommandOutput> {
    if !(2..=3).contains(&args.threads) {
        anyhow::bail!(
            "--threads {}: verify's clients run 2 or 3 threads",
            args.threads
        );
    }
    if !(1..=3).contains(&args.rounds) {
        anyhow::bail!(
            "--rounds {}: 1 to 3 critical sections, ops or get/put rounds per thread (each adds events; the checker's executions hold 64)",
            args.rounds
        );
    }
    if !(1..=3).contains(&args.items) {
        anyhow::bail!(
            "--items {}: the spsc client pushes 1 to 3 items through a queue of 2",
            args.items
        );
    }
    if !(1..=64).contains(&args.unroll) {
        anyhow::bail!("--unroll {}: 1 to 64", args.unroll);
    }
    let path = args.plugin.display().to_string();
    // As --plugin everywhere: a FIFO, a device or a huge file is refused
    // before anything reads it.
    let data = atomlab_stress::plugin::file::read_file_bytes(&args.plugin)?;
    let plugin = Plugin::read(&path, &data)?;
    let opts = Options {
        variants: (!args.variant.is_empty()).then(|| args.variant.clone()),
        models: (!args.model.is_empty()).then(|| args.model.clone()),
        threads: args.threads,
        rounds: args.rounds,
        items: args.items,
        unroll: args.unroll,
        timeout: Duration::from_secs_f64(args.timeout.unwrap_or(60.0)),
        advise: args.advise,
        progress: Some(Arc::new(SearchProgress::default())),
    };
    let models = plugin.models(&opts)?;
    let variants = plugin.select(&opts)?;
    if let Some(dir) = &args.dot {
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "--dot {}: cannot create the directory",
                dir.display()
            ))
        })?;
    }
    if let Some(dir) = &args.litmus {
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "--litmus {}: cannot create the directory",
                dir.display()
            ))
        })?;
    }
    let sha = atomlab_stress::plugin::file::sha256_hex(&data);
    let mut rows = Vec::new();
    // A line on stderr every 10 s, or every half timeout when that is
    // shorter, while a variant runs that long, with its search's counts.
    let mut reporter = crate::progress::Reporter::of("verify");
    let every = match opts.timeout / 2 {
        half if half.is_zero() => Duration::from_secs(10),
        half => half.min(Duration::from_secs(10)),
    };
    let context = format!(
        "each model and CPU is given --timeout {:.0} s",
        opts.timeout.as_secs_f64()
    );
    for v in variants {
        eprintln!("atomlab verify: {} ({})", v.name, models.join(", "));
        // Each variant's counts from zero.
        let searched = Arc::new(SearchProgress::default());
        let opts = Options {
            progress: Some(Arc::clone(&searched)),
            ..opts.clone()
        };
        let live: Arc<dyn Live> = Arc::new(Searched(searched));
        reporter.event(Event::Watch {
            live: &live,
            every,
            context: &context,
        });
        reporter.event(Event::Step(&v.name));
        rows.extend(plugin.check(v, &models, &opts));
    }
    drop(reporter);
    let exports = match &args.litmus {
        Some(dir) => Some(export_litmus(&plugin, &opts, dir)?),
        None => None,
    };
    let mut records = Vec::new();
    let mut status = ExitStatus::Ok;
    let mut graphs = Vec::new();
    for r in &rows {
        if let (Some(dir), Some(t)) = (&args.dot, &r.trace) {
            let cpu = match r.lse {
                Some(true) => "-lse",
                Some(false) => "-nolse",
                None => "",
            };
            // A variant's name is the plugin's: only plain characters
            // reach the file name.
            let name: String = format!("{}-{}{cpu}.dot", r.variant, r.model)
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "._-".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let file = dir.join(name);
            let title = format!(
                "{} {} under {}{}",
                r.variant,
                r.verdict.word(),
                r.model,
                r.lse.map_or("", |l| if l { " (LSE)" } else { " (no LSE)" })
            );
            std::fs::write(&file, t.dot(&title)).map_err(|e| {
                anyhow::Error::new(e).context(format!("--dot: cannot write {}", file.display()))
            })?;
            graphs.push(file.display().to_string());
        }
        let mut rec = Record::new("verify", r.kind.name(), &r.variant);
        rec.param("model", r.model.clone())
            .param("threads", args.threads as u64)
            .param("rounds", args.rounds as u64)
            .param("unroll", args.unroll as u64)
            .param("plugin", path.clone())
            .param("plugin_sha256", sha.clone())
            .param("arch", plugin.arch().name());
        if atomlab_verify::client::takes_items(r.kind) {
            rec.param("items", args.items as u64);
        }
        if let Some(lse) = r.lse {
            rec.param("lse", lse)
                .param("cpu", if lse { "LSE" } else { "no LSE" });
        }
        rec.metrics.push(Metric::new(
            "executions",
            Unit::Count,
            Source::Derived,
            vec![r.executions as f64],
        ));
        rec.metrics.push(Metric::new(
            "seconds",
            Unit::Seconds,
            Source::ClockGettime,
            vec![r.elapsed.as_secs_f64()],
        ));
        // REFUSED has no Verdict of its own: the record has none, and says
        // why in `refused` (a record with no verdict decides nothing).
        rec.verdict = match r.verdict {
            atomlab_verify::Verdict::Pass => Some(Verdict::Pass),
            atomlab_verify::Verdict::Fail => Some(Verdict::Fail),
            atomlab_verify::Verdict::Bound => Some(Verdict::Bound),
            atomlab_verify::Verdict::Refused => {
                rec.param("refused", r.reason.clone());
                None
            }
        };
        rec.notes.push(r.reason.clone());
        let mut detail = serde_json::json!({});
        if let Some(c) = &r.counterexample {
            detail["counterexample"] = c.clone().into();
            // The execution at the instruction level: each event with the
            // machine instruction it came from.
            if let Some(t) = &r.trace {
                detail["broken"] = t.broken.clone().into();
                detail["trace"] = t
                    .steps
                    .iter()
                    .map(|s| {
                        serde_json::json!({
                            "thread": s.thread,
                            "place": s.place,
                            "instruction": s.instruction,
                            "event": s.event,
                            "source": s.source,
                        })
                    })
                    .collect();
                detail["coherence"] = t.coherence.clone().into();
            }
        }
        if args.advise
            && matches!(
                r.verdict,
                atomlab_verify::Verdict::Pass | atomlab_verify::Verdict::Fail
            )
        {
            detail["advice_tried"] = r.advice.tried.into();
            detail["advice"] = r
                .advice
                .advice
                .iter()
                .map(|a| {
                    serde_json::json!({
                        "address": format!("{:#x}", a.addr),
                        "place": a.place,
                        "instruction": a.instruction,
                        "change": a.change,
                        "verdict": a.verdict.word(),
                        "executions": a.executions,
                    })
                })
                .collect();
        }
        if detail.as_object().is_some_and(|d| !d.is_empty()) {
            rec.detail = Some(detail);
        }
        if r.verdict == atomlab_verify::Verdict::Fail {
            status = ExitStatus::VerdictFailed;
        }
        records.push(rec);
    }
    // The people's view is drawn from the records (atomlab-report's
    // verify_view), as `atomlab show` draws a saved run.
    let mut report = Report::new("verify", Machine::detect(), records);
    report.notes.push(format!(
        "{path}: {} code, models {}{}",
        plugin.arch().name(),
        models.join(", "),
        if args.model.is_empty() {
            " (the file's own architecture's; --model to choose)"
        } else {
            ""
        }
    ));
    if let Some(dir) = &args.dot {
        report.notes.push(match graphs.len() {
            0 => format!("--dot {}: no FAIL, so no graph", dir.display()),
            n => format!(
                "--dot: {n} graph(s) of the FAILs' executions: {}",
                graphs.join(", ")
            ),
        });
    }
    if let (Some(dir), Some((written, skipped))) = (&args.litmus, exports) {
        report.notes.push(match written.len() {
            0 => format!("--litmus {}: no client to write", dir.display()),
            n => format!(
                "--litmus: {n} litmus test(s) of the clients: {}",
                written.join(", ")
            ),
        });
        for s in skipped {
            report.notes.push(format!("--litmus: not written: {s}"));
        }
    }
    Ok(CommandOutput {
        report,
        status,
        people: Box::new(crate::render::show),
    })
}

/// Writes each selected variant's client into `dir` as a litmus test
/// (atomlab_verify::export); returns the files written and, for each
/// client not written, why (a REFUSED variant, an architecture or an
/// instruction with no printer).
fn export_litmus(
    plugin: &Plugin<'_>,
    opts: &Options,
    dir: &std::path::Path,
) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    use atomlab_verify::export;
    let mut written = Vec::new();
    let mut skipped = Vec::new();
    for v in plugin.select(opts)? {
        for (lse, built) in export::clients(plugin, v, opts) {
            let name = export::file_name(plugin, &v.name, lse);
            let b = match built {
                Ok(b) => b,
                Err(atomlab_verify::client::NotBuilt::Refused(r)) => {
                    skipped.push(format!("{name}: the variant is refused ({r})"));
                    continue;
                }
                Err(atomlab_verify::client::NotBuilt::Missing(why)) => {
                    skipped.push(format!("{name}: {why}"));
                    continue;
                }
            };
            match export::litmus_text(plugin, v, lse, &b) {
                Ok(text) => {
                    let file = dir.join(&name);
                    std::fs::write(&file, text).map_err(|e| {
                        anyhow::Error::new(e)
                            .context(format!("--litmus: cannot write {}", file.display()))
                    })?;
                    written.push(file.display().to_string());
                }
                Err(e) => skipped.push(format!("{name}: {e}")),
            }
        }
    }
    Ok((written, skipped))
}

/// How far a variant's search has gone, in words: the runs of the
/// threads enumerated, the combinations of them searched and the
/// executions examined.
struct Searched(Arc<SearchProgress>);

impl Live for Searched {
    fn so_far(&self) -> String {
        let (runs, combinations, executions) = self.0.now();
        format!("{runs} runs of the threads enumerated, {combinations} combinations of them searched and {executions} executions examined")
    }
}
