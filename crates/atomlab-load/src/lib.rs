//! `atomlab load`: an HTTP/1.1 load generator in the shape of wrk (closed
//! loop, flat out) and wrk2 (open loop at a fixed offered rate, latency from
//! each request's intended send time: Gil Tene's coordinated-omission
//! correction), with the server's CPU over the measured window read from
//! /proc. See `engine` for the client and `server` for the server side.
//!
//! A run is judged (verdict PASS or FAIL, see `failures`): it failed when
//! no response in the measured window had a 2xx/3xx status, when the server
//! died or stopped answering, when the client hit its own limits, or when
//! more than [`MAX_ERROR_FRACTION`] of the requests failed. A figure that
//! could not be read (a dead server's CPU) is left out, never written as 0.

#![warn(unreachable_pub)]

pub mod body;
mod engine;
mod server;
mod server_pmu;

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the SIGINT handler while a run is measured: the client threads and
/// the coordinator stop at their next check (within 5 ms) and the partial
/// result is reported, as wrk does.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C ended the run early.
pub fn interrupted() -> bool {
    // ORDERING: Relaxed: a stop request only; the results are handed over by
    // joining the threads.
    INTERRUPTED.load(Ordering::Relaxed)
}

extern "C" fn on_sigint(_: libc::c_int) {
    // ORDERING: Relaxed, as in `interrupted`. A second Ctrl-C ends the
    // process at once (`_exit` is async-signal-safe), after killing a
    // spawned server (kill(2) is too).
    if INTERRUPTED.swap(true, Ordering::Relaxed) {
        server::signal_servers(libc::SIGKILL);
        // SAFETY: _exit is async-signal-safe and takes no pointers.
        unsafe { libc::_exit(130) };
    }
}

/// Routes SIGINT to [`on_sigint`] while it lives, then restores the
/// previous disposition.
struct SigintGuard(libc::sighandler_t);

impl SigintGuard {
    fn install() -> SigintGuard {
        // ORDERING: Relaxed: set before the threads that read it start.
        INTERRUPTED.store(false, Ordering::Relaxed);
        let handler = on_sigint as extern "C" fn(libc::c_int);
        // SAFETY: the handler only touches an atomic and calls _exit, both
        // async-signal-safe.
        SigintGuard(unsafe { libc::signal(libc::SIGINT, handler as libc::sighandler_t) })
    }
}

impl Drop for SigintGuard {
    fn drop(&mut self) {
        // SAFETY: restores the disposition `install` replaced.
        unsafe { libc::signal(libc::SIGINT, self.0) };
    }
}

/// How often the coordinator checks that a watched server still runs.
const WATCH_EVERY: Duration = Duration::from_millis(100);

/// Sleeps until `t`, or until Ctrl-C, checking every [`WATCH_EVERY`] that
/// the watched server still runs; the first time it does not, `died` says
/// so and when.
fn watch_until(t: Instant, watched: &mut Watched, died: &mut Option<String>, start: Instant) {
    let mut checked = Instant::now();
    while !interrupted() {
        let now = Instant::now();
        let left = t.saturating_duration_since(now);
        if left.is_zero() {
            return;
        }
        if died.is_none() && now.duration_since(checked) >= WATCH_EVERY {
            checked = now;
            if let Some(why) = watched.gone() {
                *died = Some(format!(
                    "{why} {:.2} s into the run",
                    start.elapsed().as_secs_f64()
                ));
            }
        }
        std::thread::sleep(left.min(Duration::from_millis(10)));
    }
}

/// The server's processes, when atomlab watches them.
enum Watched<'a> {
    /// Neither `--server-pid` nor `--spawn`.
    Nothing,
    /// `--server-pid`s.
    Pids(&'a [i32]),
    /// `--spawn`'s server, and its command.
    Spawned(&'a mut server::Spawned, &'a str),
}

impl Watched<'_> {
    fn watching(&self) -> bool {
        !matches!(self, Watched::Nothing)
    }

    /// The processes whose trees are the server now.
    fn roots(&mut self) -> Vec<i32> {
        match self {
            Watched::Nothing => Vec::new(),
            Watched::Pids(p) => p.to_vec(),
            Watched::Spawned(s, _) => s.roots(),
        }
    }

    /// Why the server is gone, if it is: a `--server-pid` that exited, or
    /// nothing left of what `--spawn` started.
    fn gone(&mut self) -> Option<String> {
        match self {
            Watched::Nothing => None,
            Watched::Pids(p) => {
                let dead: Vec<String> = p
                    .iter()
                    .filter(|&&p| !server::alive(p))
                    .map(|p| p.to_string())
                    .collect();
                (!dead.is_empty()).then(|| format!("server process {} exited", dead.join(", ")))
            }
            Watched::Spawned(s, cmd) => s
                .roots()
                .is_empty()
                .then(|| format!("the spawned server ('{cmd}') exited")),
        }
    }
}

/// Descriptors the client needs beside its connections: stdio, the
/// results store, /proc reads, the server's counters, the first connect
/// check (and an epoll and a timerfd per thread, counted apart).
const FD_RESERVE: u64 = 64;

/// Above this fraction of failed requests (errors of every kind over the
/// requests attempted, whole run) a load run fails.
pub const MAX_ERROR_FRACTION: f64 = 0.10;

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use atomlab_core::{Metric, Record, Source, Unit};
use serde_json::{json, Value};

/// What was wrong with a load run's input or target.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The URL cannot be used.
    #[error("bad URL '{0}': {1}")]
    Url(String, String),
    /// The target does not accept connections.
    #[error("cannot connect to {0} ({1}): {2}")]
    Connect(String, SocketAddr, String),
    /// An option's value cannot be used.
    #[error("{0}")]
    Option(String),
    /// `--spawn`'s command could not be started or never listened.
    #[error("--spawn '{0}': {1}")]
    Spawn(String, String),
    /// The body file could not be read.
    #[error("--body {0}: {1}")]
    Body(String, String),
    /// A `--server-pid` that is not a running process.
    #[error("--server-pid {0}: no such process")]
    NoProcess(i32),
    /// A client thread's event loop failed.
    #[error("client thread: {0}")]
    Io(#[from] std::io::Error),
    /// A client thread could not start (`ulimit -u`, `ulimit -v`).
    #[error("{0}; nothing was measured")]
    Threads(atomlab_thread::SpawnError),
}

/// A parsed `http://host[:port]/path` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub port: u16,
    /// Path and query, starting with '/'.
    pub path: String,
}

impl Target {
    /// Parses an `http://` URL (https is not supported).
    pub fn parse(url: &str) -> Result<Target, LoadError> {
        let bad = |why: &str| LoadError::Url(url.to_string(), why.to_string());
        let rest = if let Some(r) = url.strip_prefix("http://") {
            r
        } else if url.starts_with("https://") {
            return Err(bad("https is not supported; use http://"));
        } else {
            return Err(bad("expected http://host[:port]/path"));
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.contains('@') {
            return Err(bad("user info is not supported"));
        }
        let (host, port) = if let Some(h) = authority.strip_prefix('[') {
            let end = h.find(']').ok_or_else(|| bad("unclosed '[' in the host"))?;
            let after = &h[end + 1..];
            let port = match after.strip_prefix(':') {
                Some(p) => p
                    .parse()
                    .map_err(|_| bad("the port is not a number 1-65535"))?,
                None if after.is_empty() => 80,
                None => return Err(bad("junk after the host")),
            };
            (h[..end].to_string(), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (
                    h.to_string(),
                    p.parse::<u16>()
                        .map_err(|_| bad("the port is not a number 1-65535"))?,
                ),
                None => (authority.to_string(), 80),
            }
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        if port == 0 {
            return Err(bad("port 0"));
        }
        Ok(Target {
            host,
            port,
            path: path.to_string(),
        })
    }

    /// The `Host` header's value.
    fn host_header(&self) -> String {
        let h = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == 80 {
            h
        } else {
            format!("{h}:{}", self.port)
        }
    }

    /// The first address the host resolves to.
    pub fn resolve(&self, url: &str) -> Result<SocketAddr, LoadError> {
        (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| LoadError::Url(url.to_string(), format!("cannot resolve host: {e}")))?
            .next()
            .ok_or_else(|| LoadError::Url(url.to_string(), "the host has no address".into()))
    }
}

/// Parses a rate: a number with an optional `k` (×1,000) or `M` (×1,000,000).
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let (num, scale) = if let Some(n) = s.strip_suffix(['k', 'K']) {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix('M') {
        (n, 1e6)
    } else {
        (s, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v * scale),
        _ => Err(format!(
            "'{s}' is not a rate: a positive number of requests per second, optionally with k or M (10k, 1.5M)"
        )),
    }
}

/// Everything one load run needs.
#[derive(Debug, Clone)]
pub struct Config {
    pub url: String,
    pub connections: usize,
    pub threads: usize,
    pub duration: Duration,
    pub warmup: Duration,
    /// Offered rate, all threads together; `None` is closed loop.
    pub rate: Option<f64>,
    /// Requests written back to back per connection before reading their
    /// responses (HTTP/1.1 pipelining; 1 = off, closed loop only).
    pub pipeline: usize,
    pub timeout: Duration,
    pub method: String,
    /// `K: V` lines.
    pub headers: Vec<String>,
    pub body: Option<Vec<u8>>,
    pub server_pids: Vec<i32>,
    pub spawn: Option<String>,
    /// Hardware events counted in the server's processes (perf names, as
    /// `bench --events`); empty means cycles and instructions.
    pub events: Vec<String>,
}

/// The request serialised once, sent as is for every request.
pub fn serialize_request(cfg: &Config, target: &Target) -> Result<Vec<u8>, LoadError> {
    if cfg.method.is_empty() || !cfg.method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(LoadError::Option(format!(
            "--method '{}': expected an upper-case HTTP method (GET, POST…)",
            cfg.method
        )));
    }
    let mut r = format!("{} {} HTTP/1.1\r\n", cfg.method, target.path);
    let mut has_host = false;
    for h in &cfg.headers {
        let Some((k, v)) = h.split_once(':') else {
            return Err(LoadError::Option(format!(
                "--header '{h}': expected 'Name: value'"
            )));
        };
        let k = k.trim();
        if k.is_empty() || k.contains(|c: char| c.is_whitespace()) || h.contains(['\r', '\n']) {
            return Err(LoadError::Option(format!(
                "--header '{h}': expected 'Name: value'"
            )));
        }
        if k.eq_ignore_ascii_case("host") {
            has_host = true;
        }
        r.push_str(&format!("{k}: {}\r\n", v.trim()));
    }
    if !has_host {
        r.push_str(&format!("Host: {}\r\n", target.host_header()));
    }
    if let Some(b) = &cfg.body {
        r.push_str(&format!("Content-Length: {}\r\n", b.len()));
    }
    r.push_str("\r\n");
    let mut bytes = r.into_bytes();
    if let Some(b) = &cfg.body {
        bytes.extend_from_slice(b);
    }
    Ok(bytes)
}

/// What a run measured, before it becomes a record.
pub struct LoadRun {
    pub record: Record,
    /// Lines people must read (a server that went away).
    pub warnings: Vec<String>,
    /// Why the run failed (its verdict is FAIL); empty when it passed.
    pub failures: Vec<String>,
}

/// `--connections` must fit under the open-file limit: beyond it the
/// client's own connects fail (EMFILE), which is not the server's doing.
fn check_open_files(cfg: &Config) -> Result<(), LoadError> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid rlimit for getrlimit to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Ok(());
    }
    let need = cfg.connections as u64 + 2 * cfg.threads as u64 + FD_RESERVE;
    let soft = lim.rlim_cur;
    if lim.rlim_cur == libc::RLIM_INFINITY || need <= soft {
        return Ok(());
    }
    let hard = if lim.rlim_max == libc::RLIM_INFINITY {
        "unlimited".to_string()
    } else {
        lim.rlim_max.to_string()
    };
    let above_hard = lim.rlim_max != libc::RLIM_INFINITY && need > lim.rlim_max;
    Err(LoadError::Option(format!(
        "--connections {}: needs about {need} open files (one per connection, 2 per thread, {FD_RESERVE} for the client itself), \
         above this process's open-file limit of {soft} (RLIMIT_NOFILE, hard limit {hard}): raise it with `ulimit -n {need}` \
         in the shell that runs atomlab{}, or use fewer connections",
        cfg.connections,
        if above_hard {
            " (above the hard limit, which takes root or /etc/security/limits.conf)"
        } else {
            ""
        }
    )))
}

fn check_config(cfg: &Config) -> Result<(), LoadError> {
    let opt = |s: String| Err(LoadError::Option(s));
    if cfg.connections == 0 {
        return opt("--connections 0: at least one connection is needed".into());
    }
    if cfg.threads == 0 {
        return opt("--threads 0: at least one thread is needed".into());
    }
    if cfg.connections < cfg.threads {
        return opt(format!(
            "--connections {} is fewer than --threads {}: each thread needs a connection",
            cfg.connections, cfg.threads
        ));
    }
    if cfg.duration.is_zero() {
        return opt("--duration must be above 0".into());
    }
    if cfg.duration > Duration::from_secs(24 * 3600) {
        return opt("--duration above a day".into());
    }
    if cfg.pipeline == 0 || cfg.pipeline > 1024 {
        return opt(format!(
            "--pipeline {}: expected between 1 (off) and 1024",
            cfg.pipeline
        ));
    }
    if cfg.pipeline > 1 && cfg.rate.is_some() {
        return opt(
            "--pipeline applies to the closed loop: at a fixed --rate each request leaves at its own time".into(),
        );
    }
    if cfg.timeout.is_zero() {
        return opt("--timeout must be above 0".into());
    }
    check_open_files(cfg)?;
    if !cfg.server_pids.is_empty() && cfg.spawn.is_some() {
        return opt("--server-pid and --spawn exclude each other".into());
    }
    for &p in &cfg.server_pids {
        if p <= 0 || !std::path::Path::new(&format!("/proc/{p}/stat")).exists() {
            return Err(LoadError::NoProcess(p));
        }
    }
    if !cfg.events.is_empty() && cfg.server_pids.is_empty() && cfg.spawn.is_none() {
        return opt(
            "--events counts in the server's processes: give --server-pid or --spawn too".into(),
        );
    }
    server_events(cfg)?;
    Ok(())
}

/// The events to count in the server: `--events`, or cycles and instructions.
fn server_events(cfg: &Config) -> Result<Vec<atomlab_pmu::EventSpec>, LoadError> {
    if cfg.events.is_empty() {
        return Ok(vec![
            atomlab_pmu::EventSpec::cycles(),
            atomlab_pmu::EventSpec::instructions(),
        ]);
    }
    cfg.events
        .iter()
        .map(|e| {
            atomlab_pmu::EventSpec::parse(e.trim())
                .map_err(|err| LoadError::Option(format!("--events: {err}")))
        })
        .collect()
}

/// Runs the load described by `cfg`.
pub fn run(cfg: &Config) -> Result<LoadRun, LoadError> {
    let target = Target::parse(&cfg.url)?;
    check_config(cfg)?;
    let addr = target.resolve(&cfg.url)?;
    // Pipelining writes the request this many times in one go.
    let request: Arc<[u8]> = serialize_request(cfg, &target)?
        .repeat(cfg.pipeline.max(1))
        .into();
    let mut spawned = match &cfg.spawn {
        Some(cmd) => Some(server::Spawned::start(cmd, addr, Duration::from_secs(10))?),
        None => None,
    };
    let result = {
        let _sigint = SigintGuard::install();
        let watched = match (&mut spawned, &cfg.spawn) {
            (Some(s), Some(cmd)) => Watched::Spawned(s, cmd),
            _ if !cfg.server_pids.is_empty() => Watched::Pids(&cfg.server_pids),
            _ => Watched::Nothing,
        };
        measure(cfg, addr, request, watched)
    };
    if let Some(s) = &mut spawned {
        s.stop();
    }
    result
}

fn measure(
    cfg: &Config,
    addr: SocketAddr,
    request: Arc<[u8]>,
    mut watched: Watched,
) -> Result<LoadRun, LoadError> {
    // Refused or unreachable targets are bad input, not a run of errors.
    if let Err(e) = TcpStream::connect_timeout(&addr, cfg.timeout.min(Duration::from_secs(5))) {
        return Err(LoadError::Connect(cfg.url.clone(), addr, e.to_string()));
    }
    let seconds = cfg.duration.as_secs_f64().ceil() as usize;
    let start = Instant::now();
    let measure_start = start + cfg.warmup;
    let deadline = measure_start + cfg.duration;
    let mut handles = Vec::new();
    for t in 0..cfg.threads {
        let conns = cfg.connections / cfg.threads + usize::from(t < cfg.connections % cfg.threads);
        let plan = engine::ThreadPlan {
            addr,
            request: request.clone(),
            connections: conns,
            rate: cfg.rate.map(|r| r * conns as f64 / cfg.connections as f64),
            pipeline: cfg.pipeline,
            timeout: cfg.timeout,
            start,
            measure_start,
            deadline,
            seconds: seconds.max(1),
        };
        // The client threads wait for no one (each keeps its own clock to
        // `start`): one refused leaves the others to run out their time,
        // detached, while the error ends the process.
        let thread = std::thread::Builder::new()
            .name(format!("load-{t}"))
            .spawn(move || engine::run_thread(&plan))
            .map_err(|reason| {
                LoadError::Threads(atomlab_thread::SpawnError::Refused {
                    thread: format!("{} of {}", t + 1, cfg.threads),
                    reason,
                })
            })?;
        handles.push(thread);
    }
    let mut died = None;
    watch_until(measure_start, &mut watched, &mut died, start);
    let roots = watched.roots();
    // Counters attached now (after the warm-up) count the measured window.
    let counters = if roots.is_empty() {
        None
    } else {
        Some(server_pmu::ServerCounters::attach(
            &server_events(cfg)?,
            &roots,
        ))
    };
    if let Some(c) = &counters {
        c.start();
    }
    let before = server::snapshot(&roots);
    let self_before = server::snapshot(&[std::process::id() as i32]);
    let t0 = Instant::now();
    watch_until(deadline, &mut watched, &mut died, start);
    let totals = counters.as_ref().map(|c| c.stop());
    // A spawned server's roots may have changed (a daemon adopted): the
    // old and the new are followed.
    let mut roots_after = roots.clone();
    for p in watched.roots() {
        if !roots_after.contains(&p) {
            roots_after.push(p);
        }
    }
    let after = server::snapshot(&roots_after);
    if died.is_none() {
        died = watched
            .gone()
            .map(|why| format!("{why} by the end of the measured window"));
    }
    if watched.watching() && died.is_none() && before.is_empty() {
        died = Some("no server process was running when the measured window began".into());
    }
    let self_after = server::snapshot(&[std::process::id() as i32]);
    let window = t0.elapsed().as_secs_f64();
    let mut tally: Option<engine::Tally> = None;
    for h in handles {
        let t = h
            .join()
            .map_err(|_| LoadError::Option("a client thread panicked".into()))??;
        match &mut tally {
            None => tally = Some(t),
            Some(all) => all.merge(&t),
        }
    }
    let tally = tally.expect("at least one thread");
    let side = ServerSide {
        watching: watched.watching(),
        before,
        after,
        died,
    };
    let mut out = record(cfg, &tally, &side, &self_before, &self_after, window);
    if let (Some(c), Some(t), None) = (&counters, &totals, &side.died) {
        server_pmu_metrics(&mut out, c, t, tally.requests);
    }
    Ok(out)
}

/// The server's hardware counts per request, or why they are missing.
fn server_pmu_metrics(
    out: &mut LoadRun,
    counters: &server_pmu::ServerCounters,
    totals: &[server_pmu::EventTotal],
    requests: u64,
) {
    let r = &mut out.record;
    for t in totals {
        let (name, unit) = match t.name.as_str() {
            "cycles" => (
                "server_cycles_per_request".to_string(),
                Unit::CoreCyclesPerOp,
            ),
            "instructions" => (
                "server_instructions_per_request".to_string(),
                Unit::InstructionsPerOp,
            ),
            other => (format!("server_event:{other}"), Unit::EventsPerOp),
        };
        if requests > 0 {
            r.metrics.push(Metric::new(
                name,
                unit,
                Source::Pmu(t.name.clone()),
                vec![t.count / requests as f64],
            ));
        }
        if t.multiplexed {
            r.notes.push(format!(
                "server event {}: PMU multiplexed, count scaled by time_enabled/time_running",
                t.name
            ));
        }
    }
    if !totals.is_empty() {
        r.notes.push(format!(
            "server hardware counters: user space, summed over the {} threads of the server's processes and those they created during the window, per request",
            counters.threads
        ));
    }
    for (event, why) in &counters.refused {
        r.notes
            .push(format!("server event {event} not counted: {why}"));
    }
}

/// The server's side of the measured window.
struct ServerSide {
    /// Whether a server is watched (`--server-pid` or `--spawn`).
    watching: bool,
    before: server::Snapshot,
    after: server::Snapshot,
    /// Why and when the watched server went away, if it did.
    died: Option<String>,
}

/// Why a load run failed, empty when it did not (README, "atomlab load"):
/// no successful response; the server died or stopped answering; the
/// client hit its own limits; errors above [`MAX_ERROR_FRACTION`].
fn failures(
    cfg: &Config,
    t: &engine::Tally,
    died: Option<&str>,
    stopped_answering: bool,
) -> Vec<String> {
    let mut why = Vec::new();
    if t.ok == 0 {
        let mut w = if t.requests == 0 {
            "no response in the measured window".to_string()
        } else {
            format!(
                "no successful response: all {} responses in the measured window had a status outside 2xx/3xx (the first: {})",
                t.requests,
                t.bad_status.unwrap_or(0)
            )
        };
        if t.established < cfg.connections {
            w.push_str(&format!(
                "; {} of the {} connections were ever established",
                t.established, cfg.connections
            ));
        }
        why.push(w);
    }
    if let Some(d) = died {
        why.push(format!("the server died: {d}"));
    } else if stopped_answering {
        why.push(format!(
            "the server at {} stopped answering: its connects failed and no response came in the last second measured",
            cfg.url
        ));
    }
    let e = t.errors;
    if e.client > 0 {
        why.push(format!(
            "{} connects failed on the client's own limit ({}), not the server's: the load asked for was not applied",
            e.client,
            t.client_limit.unwrap_or("unknown")
        ));
    }
    // Status errors are responses; the other kinds are requests without one.
    let attempted = t.answered + e.connect + e.read + e.write + e.timeout + e.client;
    if attempted > 0 && e.total() as f64 > MAX_ERROR_FRACTION * attempted as f64 {
        why.push(format!(
            "{} errors in {attempted} requests attempted ({:.1}%), above the {:.0}% a run may have",
            e.total(),
            e.total() as f64 / attempted as f64 * 100.0,
            MAX_ERROR_FRACTION * 100.0
        ));
    }
    why
}

fn record(
    cfg: &Config,
    tally: &engine::Tally,
    side: &ServerSide,
    self_before: &server::Snapshot,
    self_after: &server::Snapshot,
    window: f64,
) -> LoadRun {
    let variant = if cfg.rate.is_some() { "rate" } else { "closed" };
    let mut r = Record::new("load", "http", variant);
    r.param("url", cfg.url.clone());
    r.param("connections", cfg.connections as u64);
    r.param("threads", cfg.threads as u64);
    r.param("duration_s", cfg.duration.as_secs_f64());
    r.param("warmup_s", cfg.warmup.as_secs_f64());
    r.param("rate", cfg.rate.map(Value::from).unwrap_or(Value::Null));
    r.param("pipeline", cfg.pipeline as u64);
    r.param("timeout_s", cfg.timeout.as_secs_f64());
    r.param("method", cfg.method.clone());
    r.param("headers", cfg.headers.clone());
    r.param(
        "body_bytes",
        cfg.body.as_ref().map(|b| b.len()).unwrap_or(0) as u64,
    );
    r.param("server_pids", cfg.server_pids.clone());
    if let Some(s) = &cfg.spawn {
        r.param("spawn", s.clone());
    }
    // Rates are over the window asked for, or the part of it measured
    // before Ctrl-C.
    let cut_short = interrupted();
    let dur = if cut_short {
        window.max(1e-3)
    } else {
        cfg.duration.as_secs_f64()
    };
    r.param("interrupted", cut_short);
    let one = |name: &'static str, unit: Unit, source: Source, v: f64| {
        Metric::new(name, unit, source, vec![v])
    };
    let rps = tally.requests as f64 / dur;
    r.metrics.push(one(
        "requests_per_sec",
        Unit::OpsPerSecond,
        Source::ClockGettime,
        rps,
    ));
    r.metrics.push(one(
        "bytes_per_sec",
        Unit::BytesPerSecond,
        Source::ClockGettime,
        tally.bytes as f64 / dur,
    ));
    r.metrics.push(one(
        "requests",
        Unit::Count,
        Source::ClockGettime,
        tally.requests as f64,
    ));
    let h = &tally.hist;
    let q = |p: f64| h.value_at_quantile(p) as f64 / 1e9;
    let mut hist = serde_json::Map::new();
    if tally.requests > 0 {
        for (name, p) in [
            ("latency_p50_s", 0.5),
            ("latency_p90_s", 0.9),
            ("latency_p99_s", 0.99),
            ("latency_p999_s", 0.999),
            ("latency_p9999_s", 0.9999),
        ] {
            r.metrics
                .push(one(name, Unit::Seconds, Source::ClockGettime, q(p)));
            hist.insert(name.into(), json!(q(p)));
        }
        let max = h.max() as f64 / 1e9;
        let mean = h.mean() / 1e9;
        r.metrics.push(one(
            "latency_max_s",
            Unit::Seconds,
            Source::ClockGettime,
            max,
        ));
        r.metrics.push(one(
            "latency_mean_s",
            Unit::Seconds,
            Source::ClockGettime,
            mean,
        ));
        hist.insert("latency_max_s".into(), json!(max));
        hist.insert("latency_mean_s".into(), json!(mean));
        hist.insert("latency_min_s".into(), json!(h.min() as f64 / 1e9));
        hist.insert("latency_stdev_s".into(), json!(h.stdev() / 1e9));
        hist.insert("count".into(), json!(h.len()));
    }
    let e = tally.errors;
    for (name, v) in [
        ("errors_connect", e.connect),
        ("errors_read", e.read),
        ("errors_write", e.write),
        ("errors_timeout", e.timeout),
        ("errors_status", e.status),
        ("errors_client", e.client),
    ] {
        r.metrics
            .push(one(name, Unit::Count, Source::ClockGettime, v as f64));
    }
    let tck = server::ticks_per_second();
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1) as f64;
    let client: u64 = server::delta(self_before, self_after)
        .iter()
        .map(|(_, s)| s.ticks)
        .sum();
    r.metrics.push(one(
        "client_cpu_percent",
        Unit::Percent,
        Source::Rusage,
        client as f64 / tck / window * 100.0,
    ));
    let mut warnings = Vec::new();
    let mut processes = Vec::new();
    let (before, after) = (&side.before, &side.after);
    if let (true, Some(why)) = (side.watching, &side.died) {
        // Its CPU up to its end is not in /proc any more: unknown, not 0.
        r.notes.push(format!(
            "server CPU unknown: {why}, so its CPU over the measured window cannot be read and none is recorded"
        ));
    } else if side.watching {
        let d = server::delta(before, after);
        let ticks: u64 = d.iter().map(|(_, s)| s.ticks).sum();
        let vol: u64 = d.iter().map(|(_, s)| s.voluntary).sum();
        let nonvol: u64 = d.iter().map(|(_, s)| s.nonvoluntary).sum();
        let pct = ticks as f64 / tck / window * 100.0;
        r.metrics.push(one(
            "server_cpu_percent",
            Unit::Percent,
            Source::Rusage,
            pct,
        ));
        r.metrics.push(one(
            "server_cpu_machine_percent",
            Unit::Percent,
            Source::Rusage,
            pct / cpus,
        ));
        r.metrics.push(one(
            "server_ctx_voluntary",
            Unit::Count,
            Source::Rusage,
            vol as f64,
        ));
        r.metrics.push(one(
            "server_ctx_nonvoluntary",
            Unit::Count,
            Source::Rusage,
            nonvol as f64,
        ));
        if rps > 0.0 {
            r.metrics.push(one(
                "server_cpu_percent_per_1k_rps",
                Unit::Percent,
                Source::Derived,
                pct / (rps / 1000.0),
            ));
        }
        for (pid, s) in &d {
            processes.push(json!({
                "pid": pid,
                "comm": s.comm,
                "cpu_s": s.ticks as f64 / tck,
                "cpu_percent": s.ticks as f64 / tck / window * 100.0,
                "ctx_voluntary": s.voluntary,
                "ctx_nonvoluntary": s.nonvoluntary,
            }));
        }
        let gone: Vec<String> = before
            .keys()
            .filter(|p| !after.contains_key(p))
            .map(|p| p.to_string())
            .collect();
        if !gone.is_empty() {
            let w = format!(
                "server processes {} exited during the measured window; their CPU is not counted",
                gone.join(", ")
            );
            r.notes.push(w.clone());
            warnings.push(w);
        }
        r.notes.push(format!(
            "server CPU is utime+stime from /proc over the {window:.3} s measured window, as % of one CPU (server_cpu_percent) and of the machine's {cpus} CPUs (server_cpu_machine_percent)"
        ));
    }
    r.notes.push(
        "errors are counted over the whole run, warm-up included; requests, bytes and latencies over the measured window".to_string(),
    );
    if cut_short {
        let w = format!(
            "interrupted (Ctrl-C) after {window:.2} s of the {:.2} s measured window: a partial result, its rates over the part measured",
            cfg.duration.as_secs_f64()
        );
        r.notes.push(w.clone());
        warnings.push(w);
    }
    if let Some(offered) = cfg.rate {
        // bench's rule and words (atomlab-bench push_rate_achieved).
        if rps < 0.99 * offered {
            let w =
                format!("offered {offered:.0} requests/s; achieved below 99% of it: {rps:.0}/s");
            r.flag(
                atomlab_core::FlagKind::RateNotSustained,
                Some("requests_per_sec"),
                w.clone(),
            );
            warnings.push(format!("rate not sustained: {w}"));
        }
    }
    if cfg.rate.is_some() {
        r.notes.push("open loop (wrk2's model): latency from each request's intended send time, corrected for coordinated omission".to_string());
        r.notes.push("the client wakes to send on a timerfd, so at a fixed rate a request may leave a little (the kernel's timer slack, ~50 µs, plus scheduling) after its intended time, and that lag is in its latency".to_string());
    } else {
        r.notes.push(
            "closed loop (wrk's model): latency from each request's actual send time".to_string(),
        );
    }
    // The last second measured (the one Ctrl-C cut, if it did).
    let last_second = if cut_short {
        (window as usize).min(tally.timeline.len().saturating_sub(1))
    } else {
        tally.timeline.len().saturating_sub(1)
    };
    let stopped_answering =
        e.connect > 0 && tally.timeline.get(last_second).copied().unwrap_or(0) == 0;
    if e.total() > 0 {
        let mut w = format!(
            "{} errors: connect {}, read {}, write {}, timeout {}, status {}, client {}",
            e.total(),
            e.connect,
            e.read,
            e.write,
            e.timeout,
            e.status,
            e.client
        );
        if stopped_answering {
            w.push_str(&format!(
                "; the server at {} stopped answering during the run",
                cfg.url
            ));
        }
        if let Some(limit) = tally.client_limit {
            w.push_str(&format!(
                "; {} connects hit the client's own limit ({limit}), not the server's",
                e.client
            ));
        }
        warnings.push(w);
    }
    let failures = failures(cfg, tally, side.died.as_deref(), stopped_answering);
    r.verdict = Some(if failures.is_empty() {
        atomlab_core::Verdict::Pass
    } else {
        atomlab_core::Verdict::Fail
    });
    let timeline: Vec<Value> = tally
        .timeline
        .iter()
        .zip(&tally.timeline_errors)
        .enumerate()
        .map(|(s, (n, e))| json!({"second": s, "requests": n, "errors": e}))
        .collect();
    r.detail = Some(json!({
        "timeline": timeline,
        "histogram": hist,
        "server_processes": processes,
        "failures": failures,
    }));
    LoadRun {
        record: r,
        warnings,
        failures,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let t = Target::parse("http://127.0.0.1:8080/a?b=1").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 8080, "/a?b=1")
        );
        let t = Target::parse("http://example.org").unwrap();
        assert_eq!((t.port, t.path.as_str()), (80, "/"));
        let t = Target::parse("http://[::1]:99/").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 99));
        for bad in [
            "ftp://x",
            "https://x",
            "http://",
            "http://x:0/",
            "http://x:70000/",
            "x",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }

    fn cfg() -> Config {
        Config {
            url: "http://h:8080/p".into(),
            connections: 1,
            threads: 1,
            duration: Duration::from_secs(1),
            warmup: Duration::ZERO,
            rate: None,
            timeout: Duration::from_secs(1),
            method: "POST".into(),
            headers: vec!["X-A:  b ".into()],
            body: Some(b"hi".to_vec()),
            server_pids: vec![],
            events: vec![],
            pipeline: 1,
            spawn: None,
        }
    }

    #[test]
    fn the_request_is_serialised_once_with_host_and_length() {
        let c = cfg();
        let t = Target::parse(&c.url).unwrap();
        let r = serialize_request(&c, &t).unwrap();
        assert_eq!(
            String::from_utf8(r).unwrap(),
            "POST /p HTTP/1.1\r\nX-A: b\r\nHost: h:8080\r\nContent-Length: 2\r\n\r\nhi"
        );
        let mut bad = cfg();
        bad.headers = vec!["nocolon".into()];
        assert!(serialize_request(&bad, &t).is_err());
        bad = cfg();
        bad.method = "get me".into();
        assert!(serialize_request(&bad, &t).is_err());
    }

    #[test]
    fn options_are_checked() {
        let mut c = cfg();
        c.threads = 2;
        assert!(check_config(&c)
            .unwrap_err()
            .to_string()
            .contains("fewer than --threads"));
        c = cfg();
        c.server_pids = vec![i32::MAX];
        assert!(check_config(&c)
            .unwrap_err()
            .to_string()
            .contains("no such process"));
        // More connections than any finite open-file limit allows.
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `lim` is a valid rlimit for getrlimit to fill.
        let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
        if rc == 0 && lim.rlim_cur != libc::RLIM_INFINITY {
            c = cfg();
            c.connections = usize::MAX / 4;
            let e = check_config(&c).unwrap_err().to_string();
            assert!(
                e.contains("open-file limit") && e.contains("ulimit -n"),
                "{e}"
            );
        }
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("2000"), Ok(2000.0));
        assert_eq!(parse_rate("10k"), Ok(10_000.0));
        assert_eq!(parse_rate("1.5M"), Ok(1_500_000.0));
        assert!(parse_rate("0").is_err());
        assert!(parse_rate("-1").is_err());
        assert!(parse_rate("fast").is_err());
    }
}
