//! `atomlab verify`: parses the flags, reads the plugin file and hands it
//! to atomlab-verify, then turns the outcomes into records (capability
//! "verify") and the exit status: 1 on a FAIL, 2 on bad input (an error
//! returned from here).

use std::path::PathBuf;
use std::time::Duration;

use atomlab_core::{ExitStatus, Machine, Metric, Record, Report, Source, Unit, Verdict};
use atomlab_verify::{Options, Plugin};

use super::CommandOutput;

#[derive(Debug, clap::Args)]
#[command(allow_negative_numbers = true)]
pub struct VerifyArgs {
    /// The plugin (include/atomlab.h), built for aarch64, riscv64 or x86-64; it is read, never loaded.
    #[arg(long, value_name = "PATH")]
    pub plugin: PathBuf,
    /// Variants, comma-separated [default: every lock variant].
    #[arg(long, value_delimiter = ',')]
    pub variant: Vec<String>,
    /// Models, comma-separated: the file's own (aarch64, riscv or x86tso) and sc [default: the file's own].
    #[arg(long, value_delimiter = ',')]
    pub model: Vec<String>,
    /// Threads of the client: 2 or 3.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Critical sections per thread (1 to 3).
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Iterations allowed of a loop that writes (spin loops that only
    /// read need none: spin-assume).
    #[arg(long, default_value_t = 4)]
    pub unroll: usize,
    /// Time allowed per variant and model; past it the verdict is BOUND [default: 60s].
    #[arg(long = "timeout", value_name = "DURATION", value_parser = crate::cmd::bench::parse_seconds)]
    pub timeout: Option<f64>,
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
            "--rounds {}: 1 to 3 critical sections per thread (each adds events; the checker's executions hold 64)",
            args.rounds
        );
    }
    if !(1..=64).contains(&args.unroll) {
        anyhow::bail!("--unroll {}: 1 to 64", args.unroll);
    }
    let path = args.plugin.display().to_string();
    // As --plugin everywhere: a FIFO, a device or a huge file is refused
    // before anything reads it.
    let data = atomlab_stress::plugin::load::read_file_bytes(&args.plugin)?;
    let plugin = Plugin::read(&path, &data)?;
    let opts = Options {
        variants: (!args.variant.is_empty()).then(|| args.variant.clone()),
        models: (!args.model.is_empty()).then(|| args.model.clone()),
        threads: args.threads,
        rounds: args.rounds,
        unroll: args.unroll,
        timeout: Duration::from_secs_f64(args.timeout.unwrap_or(60.0)),
    };
    let models = plugin.models(&opts)?;
    let variants = plugin.select(&opts)?;
    let sha = atomlab_stress::plugin::load::sha256_hex(&data);
    let mut rows = Vec::new();
    for v in variants {
        eprintln!("atomlab verify: {} ({})", v.name, models.join(", "));
        rows.extend(plugin.check(v, &models, &opts));
    }
    let mut records = Vec::new();
    let mut status = ExitStatus::Ok;
    for r in &rows {
        let mut rec = Record::new("verify", r.kind.name(), &r.variant);
        rec.param("model", r.model.clone())
            .param("threads", args.threads as u64)
            .param("rounds", args.rounds as u64)
            .param("unroll", args.unroll as u64)
            .param("plugin", path.clone())
            .param("plugin_sha256", sha.clone())
            .param("arch", plugin.arch().name());
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
        if let Some(c) = &r.counterexample {
            rec.detail = Some(serde_json::json!({ "counterexample": c }));
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
    Ok(CommandOutput {
        report,
        status,
        people: Box::new(crate::render::show),
    })
}
