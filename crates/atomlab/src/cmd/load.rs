//! `atomlab load`: parses the options into an `atomlab_load::Config`, runs
//! it, and renders the figures (requests/s, latency percentiles, errors by
//! kind, the server's CPU). All the work is in the atomlab-load crate.

use std::path::PathBuf;
use std::time::Duration;

use atomlab_core::{ExitStatus, Machine, Report};

use super::CommandOutput;
use crate::cmd::bench::parse_seconds;

#[derive(Debug, clap::Args)]
// Negative numbers reach the value parsers, which say what is wrong with
// them, instead of clap's "use -- -1" tip.
#[command(allow_negative_numbers = true)]
pub struct LoadArgs {
    /// The URL to load: `http://host[:port]/path`.
    pub url: String,
    /// Keep-alive connections, spread over the threads.
    #[arg(long, short = 'c', default_value_t = 16)]
    pub connections: usize,
    /// Client threads, each with its own event loop.
    #[arg(long, short = 't', default_value_t = 1)]
    pub threads: usize,
    /// Measured time: seconds, or with a unit (500ms, 2s).
    #[arg(long, short = 'd', value_name = "DURATION", value_parser = parse_seconds, default_value = "10s")]
    pub duration: f64,
    /// Load before the measured window, not counted.
    #[arg(long, value_name = "DURATION", value_parser = parse_seconds, default_value = "1s")]
    pub warmup: f64,
    /// Offered rate in requests/s, all threads together (k and M suffixes:
    /// 10k, 1.5M); open loop, latency from each request's intended send
    /// time [default: closed loop, flat out].
    #[arg(long, short = 'R', value_parser = atomlab_load::parse_rate)]
    pub rate: Option<f64>,
    /// A request without a complete response after this long is counted
    /// as a timeout and its connection reopened.
    #[arg(long, value_name = "DURATION", value_parser = parse_seconds, default_value = "2s")]
    pub timeout: f64,
    /// The HTTP method.
    #[arg(long, default_value = "GET")]
    pub method: String,
    /// A request header 'Name: value'; repeatable.
    #[arg(long, short = 'H')]
    pub header: Vec<String>,
    /// A file whose bytes are every request's body (with Content-Length).
    #[arg(long)]
    pub body: Option<PathBuf>,
    /// The server's processes (their threads and children are followed),
    /// comma-separated or repeated. Their CPU over the measured window is reported.
    #[arg(long, value_name = "PID", value_delimiter = ',')]
    pub server_pid: Vec<i32>,
    /// Start the server with `sh -c CMD`, wait for the URL's port to
    /// accept, measure it, stop it (SIGTERM, then SIGKILL).
    #[arg(long, value_name = "CMD")]
    pub spawn: Option<String>,
    /// Hardware events to count in the server's processes, per request,
    /// comma-separated perf names or raw codes (001's r6e counts failed
    /// store-exclusives on Arm) [default with a server: cycles,instructions].
    #[arg(long, value_delimiter = ',')]
    pub events: Vec<String>,
    /// HTTP/1.1 pipelining: requests written back to back per connection
    /// before their responses are read (closed loop; each latency runs from
    /// the batch's send) [default: 1, off].
    #[arg(long, default_value_t = 1, hide_default_value = true)]
    pub pipeline: usize,
}

pub fn run(args: LoadArgs) -> anyhow::Result<CommandOutput> {
    let body = match &args.body {
        Some(p) => Some(atomlab_load::body::read(p)?),
        None => None,
    };
    let secs = |name: &str, v: f64| -> anyhow::Result<Duration> {
        Duration::try_from_secs_f64(v).map_err(|_| anyhow::anyhow!("--{name} {v}: too long"))
    };
    let cfg = atomlab_load::Config {
        url: args.url.clone(),
        connections: args.connections,
        threads: args.threads,
        duration: secs("duration", args.duration)?,
        warmup: secs("warmup", args.warmup)?,
        rate: args.rate,
        timeout: secs("timeout", args.timeout)?,
        method: args.method.clone(),
        headers: args.header.clone(),
        body,
        server_pids: args.server_pid.clone(),
        spawn: args.spawn.clone(),
        events: args.events.clone(),
        pipeline: args.pipeline,
    };
    let machine = Machine::detect();
    eprintln!(
        "atomlab load {}: {} over {}, {} s after {} s warm-up, {}",
        cfg.url,
        atomlab_report::units::plural(cfg.connections as u64, "connection"),
        atomlab_report::units::plural(cfg.threads as u64, "thread"),
        args.duration,
        args.warmup,
        match cfg.rate {
            Some(r) => format!("{r} requests/s offered"),
            None => "closed loop".to_string(),
        }
    );
    // A run of ten seconds or more shows its clock on a terminal.
    let clock = crate::progress::Clock::start(
        &format!("load {}", cfg.url),
        Some(Duration::from_secs_f64(args.warmup + args.duration)),
    );
    let out = atomlab_load::run(&cfg);
    drop(clock);
    let out = out?;
    for w in &out.warnings {
        eprintln!("atomlab: warning: {w}");
    }
    for f in &out.failures {
        eprintln!("atomlab: load failed: {f}");
    }
    Ok(CommandOutput {
        report: Report::new("load", machine, vec![out.record]),
        status: if out.failures.is_empty() {
            ExitStatus::Ok
        } else {
            ExitStatus::VerdictFailed
        },
        people: Box::new(crate::render::show),
    })
}
