//! The client threads: one mio event loop per thread over its share of the
//! non-blocking keep-alive connections, one request in flight per
//! connection, responses parsed with httparse (Content-Length and chunked
//! bodies), bodies skipped without being stored.
//!
//! Two models, as wrk and wrk2 define them:
//! - closed loop (wrk): each connection sends its next request as soon as the
//!   previous response is complete; latency runs from the actual send.
//! - open loop at a fixed offered rate (wrk2): the thread's k-th request is
//!   due at `start + k / rate`; a due request goes out on the first idle
//!   connection, and its latency runs from that *intended* time, so a server
//!   stall that holds the senders back is charged to every request it delayed
//!   (Gil Tene's coordinated-omission correction), not just to the one in
//!   flight.
//!
//! The hot path does not allocate: the request bytes are serialised once,
//! every connection owns a fixed read buffer, httparse's header array is on
//! the stack, and the histogram and timeline are sized before the run.

use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mio::net::TcpStream;
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

/// Bytes a connection buffers; a response head must fit in it.
const BUF: usize = 64 * 1024;
/// Wait before reconnecting after a failed connect, so a dead server is not
/// spun on.
const RECONNECT_BACKOFF: Duration = Duration::from_millis(10);
/// Largest latency the histogram holds, in nanoseconds (100 s); longer ones
/// are clamped to it.
pub(crate) const MAX_LATENCY_NS: u64 = 100_000_000_000;

/// Errors by kind, counted over the whole run (warm-up included).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Errors {
    /// Connects refused or failed.
    pub connect: u64,
    /// Reads that failed, connections closed mid-response, unparsable responses.
    pub read: u64,
    /// Writes that failed.
    pub write: u64,
    /// Requests without a complete response within `--timeout`.
    pub timeout: u64,
    /// Responses with status >= 400.
    pub status: u64,
    /// Connects that failed on the client's own limits (open files, local
    /// ports, socket memory: see [`client_limit`]), not the server's.
    pub client: u64,
}

impl Errors {
    /// All errors together.
    pub(crate) fn total(&self) -> u64 {
        self.connect + self.read + self.write + self.timeout + self.status + self.client
    }

    fn add(&mut self, o: &Errors) {
        self.connect += o.connect;
        self.read += o.read;
        self.write += o.write;
        self.timeout += o.timeout;
        self.status += o.status;
        self.client += o.client;
    }
}

/// What one thread (or all of them, merged) measured.
pub(crate) struct Tally {
    /// Latencies of the responses completed in the measured window, ns.
    pub hist: Histogram<u64>,
    /// Responses completed in the measured window (any status).
    pub requests: u64,
    /// Of those, the ones with a 2xx or 3xx status.
    pub ok: u64,
    /// Responses completed over the whole run (warm-up included, any
    /// status), the errors' counterpart.
    pub answered: u64,
    /// The first status outside 2xx/3xx seen, if any.
    pub bad_status: Option<u16>,
    /// Connections that were established at least once.
    pub established: usize,
    /// What the client's own limit was, when a connect hit one.
    pub client_limit: Option<&'static str>,
    /// Bytes received in the measured window.
    pub bytes: u64,
    /// Errors over the whole run.
    pub errors: Errors,
    /// Responses completed in each second of the measured window.
    pub timeline: Vec<u64>,
    /// Errors in each second of the run since the measured window began
    /// (warm-up errors are in the first).
    pub timeline_errors: Vec<u64>,
}

impl Tally {
    fn new(seconds: usize) -> Tally {
        Tally {
            // 3 significant figures from 1 ns to 100 s.
            hist: Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid bounds"),
            requests: 0,
            ok: 0,
            answered: 0,
            bad_status: None,
            established: 0,
            client_limit: None,
            bytes: 0,
            errors: Errors::default(),
            timeline: vec![0; seconds],
            timeline_errors: vec![0; seconds],
        }
    }

    /// Adds another thread's tally.
    pub(crate) fn merge(&mut self, o: &Tally) {
        self.hist.add(&o.hist).expect("same bounds");
        self.requests += o.requests;
        self.ok += o.ok;
        self.answered += o.answered;
        self.bad_status = self.bad_status.or(o.bad_status);
        self.established += o.established;
        self.client_limit = self.client_limit.or(o.client_limit);
        self.bytes += o.bytes;
        self.errors.add(&o.errors);
        for (a, b) in self.timeline.iter_mut().zip(&o.timeline) {
            *a += b;
        }
        for (a, b) in self.timeline_errors.iter_mut().zip(&o.timeline_errors) {
            *a += b;
        }
    }
}

/// One thread's share of the run.
pub(crate) struct ThreadPlan {
    pub addr: SocketAddr,
    pub request: std::sync::Arc<[u8]>,
    pub connections: usize,
    /// This thread's offered rate in requests per second; `None` is closed loop.
    pub rate: Option<f64>,
    /// Requests in `request` (it holds this many copies, sent in one go;
    /// closed loop only).
    pub pipeline: usize,
    pub timeout: Duration,
    pub start: Instant,
    pub measure_start: Instant,
    pub deadline: Instant,
    pub seconds: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// Waiting to reconnect (after a close or a failed connect).
    Down,
    /// Connect in progress.
    Connecting,
    /// Connected, no request in flight (open loop only).
    Idle,
    /// Sending the request.
    Writing,
    /// Reading the response head.
    Head,
    /// Skipping this many body bytes.
    Body(usize),
    /// Reading a chunk-size line.
    ChunkSize,
    /// Skipping a chunk's data and its CRLF.
    ChunkData(usize),
    /// Reading trailer lines after the last chunk until an empty one.
    Trailer,
}

struct Conn {
    stream: Option<TcpStream>,
    phase: Phase,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    written: usize,
    /// When the latency of the request in flight starts counting.
    origin: Instant,
    /// When the request in flight was actually sent (for the timeout).
    sent: Instant,
    reconnect_at: Instant,
    status: u16,
    close_after: bool,
    /// Responses still due for the requests written (pipelining).
    outstanding: usize,
    /// Whether a connect of this connection ever succeeded.
    established: bool,
}

enum Step {
    /// Wait for the socket.
    Block,
    /// Go on driving this connection.
    Again,
}

struct Worker<'a> {
    plan: &'a ThreadPlan,
    poll: Poll,
    conns: Vec<Conn>,
    idle: Vec<usize>,
    tally: Tally,
    /// Open loop: requests scheduled so far.
    scheduled: u64,
    interval_ns: f64,
    /// Whether the measured window has begun (updated once per poll).
    measuring: bool,
}

/// Runs one thread's share until its deadline and returns what it measured.
pub(crate) fn run_thread(plan: &ThreadPlan) -> std::io::Result<Tally> {
    let now = Instant::now();
    let mut w = Worker {
        plan,
        poll: Poll::new()?,
        conns: (0..plan.connections)
            .map(|_| Conn {
                stream: None,
                phase: Phase::Down,
                buf: vec![0u8; BUF].into_boxed_slice(),
                start: 0,
                end: 0,
                written: 0,
                origin: now,
                sent: now,
                reconnect_at: now,
                status: 0,
                close_after: false,
                outstanding: 0,
                established: false,
            })
            .collect(),
        idle: Vec::with_capacity(plan.connections),
        tally: Tally::new(plan.seconds),
        scheduled: 0,
        interval_ns: plan.rate.map(|r| 1e9 / r).unwrap_or(0.0),
        measuring: false,
    };
    let mut events = Events::with_capacity(1024);
    // Open loop: epoll's own timeout has 1 ms steps; a timerfd wakes the
    // thread within the kernel's timer slack (~50 µs) of a send's due time.
    let timer = match plan.rate {
        Some(_) => {
            let t = Timer::new()?;
            w.poll
                .registry()
                .register(&mut SourceFd(&t.fd), TIMER, Interest::READABLE)?;
            Some(t)
        }
        None => None,
    };
    let mut armed_for = None;
    for i in 0..w.conns.len() {
        w.connect(i, now);
    }
    let mut last_sweep = now;
    loop {
        let now = Instant::now();
        if now >= plan.deadline || crate::interrupted() {
            break;
        }
        w.measuring = now >= plan.measure_start;
        // Reconnects and timeouts, every 5 ms.
        if now.duration_since(last_sweep) >= Duration::from_millis(5) {
            last_sweep = now;
            w.sweep(now);
        }
        if plan.rate.is_some() {
            w.dispatch(now);
        }
        let mut wait = plan.deadline - now;
        wait = wait.min(Duration::from_millis(5));
        if let (Some(t), false) = (&timer, w.idle.is_empty()) {
            let due = w.due(w.scheduled);
            if due > now && armed_for != Some(due) {
                t.arm(due - now);
                armed_for = Some(due);
            }
        }
        match w.poll.poll(&mut events, Some(wait)) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        for ev in events.iter() {
            if ev.token() == TIMER {
                if let Some(t) = &timer {
                    t.drain();
                }
                continue;
            }
            w.drive(ev.token().0);
        }
    }
    w.tally.established = w.conns.iter().filter(|c| c.established).count();
    Ok(w.tally)
}

/// Whether a failed connect hit the client's own limit rather than the
/// server, and which: connect(2) and socket(2)'s errors that concern the
/// caller's resources.
pub(crate) fn client_limit(e: &std::io::Error) -> Option<&'static str> {
    match e.raw_os_error()? {
        libc::EMFILE => Some("EMFILE, this process's open-file limit (RLIMIT_NOFILE, `ulimit -n`)"),
        libc::ENFILE => Some("ENFILE, the system's open-file limit (fs.file-max)"),
        libc::EADDRNOTAVAIL => {
            Some("EADDRNOTAVAIL, no free local port (net.ipv4.ip_local_port_range)")
        }
        libc::ENOBUFS | libc::ENOMEM => Some("ENOBUFS/ENOMEM, the kernel's socket memory"),
        _ => None,
    }
}

/// The timer's token: no connection has it.
const TIMER: Token = Token(usize::MAX);

/// A one-shot, non-blocking CLOCK_MONOTONIC timerfd.
struct Timer {
    fd: i32,
}

impl Timer {
    fn new() -> std::io::Result<Timer> {
        // SAFETY: timerfd_create takes no pointers; the result is checked.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Timer { fd })
    }

    /// Fires once after `d` (at least 1 ns: zero would disarm it).
    fn arm(&self, d: Duration) {
        let d = d.max(Duration::from_nanos(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                tv_nsec: d.subsec_nanos() as _,
            },
        };
        // SAFETY: `spec` is a valid itimerspec that outlives the call; the
        // old value is not asked for (null); `fd` is our open timerfd.
        unsafe { libc::timerfd_settime(self.fd, 0, &spec, std::ptr::null_mut()) };
    }

    /// Consumes the expiry count, so the next expiry is a new edge.
    fn drain(&self) {
        let mut n = [0u8; 8];
        // SAFETY: `n` is 8 writable bytes, as a timerfd read needs; `fd`
        // is non-blocking, so this returns at once.
        unsafe { libc::read(self.fd, n.as_mut_ptr().cast(), n.len()) };
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // SAFETY: `fd` is ours and closed once, here.
        unsafe { libc::close(self.fd) };
    }
}

impl Worker<'_> {
    fn due(&self, k: u64) -> Instant {
        self.plan.start + Duration::from_nanos((k as f64 * self.interval_ns) as u64)
    }

    fn second(&self, at: Instant) -> usize {
        let s = at
            .saturating_duration_since(self.plan.measure_start)
            .as_secs() as usize;
        s.min(self.plan.seconds.saturating_sub(1))
    }

    fn error(&mut self, kind: fn(&mut Errors) -> &mut u64, at: Instant) {
        *kind(&mut self.tally.errors) += 1;
        let s = self.second(at);
        if let Some(e) = self.tally.timeline_errors.get_mut(s) {
            *e += 1;
        }
    }

    /// Open loop: sends every due request on an idle connection.
    fn dispatch(&mut self, now: Instant) {
        while !self.idle.is_empty() {
            let due = self.due(self.scheduled);
            if due > now {
                break;
            }
            let i = self.idle.pop().expect("not empty");
            self.scheduled += 1;
            self.start_request(i, due, now);
            self.drive(i);
        }
    }

    fn start_request(&mut self, i: usize, origin: Instant, now: Instant) {
        let pipeline = self.plan.pipeline.max(1);
        let c = &mut self.conns[i];
        c.outstanding = pipeline;
        c.phase = Phase::Writing;
        c.written = 0;
        c.origin = origin;
        c.sent = now;
        c.status = 0;
        c.close_after = false;
    }

    fn connect(&mut self, i: usize, now: Instant) {
        match TcpStream::connect(self.plan.addr) {
            Ok(mut s) => {
                let _ = s.set_nodelay(true);
                if let Err(e) = self.poll.registry().register(
                    &mut s,
                    Token(i),
                    Interest::READABLE | Interest::WRITABLE,
                ) {
                    // epoll's own limits (memory, max_user_watches) are
                    // the client's.
                    self.tally.client_limit = self
                        .tally
                        .client_limit
                        .or(client_limit(&e))
                        .or(Some("epoll_ctl failed: the client's epoll limits"));
                    self.error(|e| &mut e.client, now);
                    self.down(i, now + RECONNECT_BACKOFF);
                    return;
                }
                let c = &mut self.conns[i];
                c.stream = Some(s);
                c.phase = Phase::Connecting;
                c.start = 0;
                c.end = 0;
                c.sent = now;
            }
            Err(e) => {
                self.connect_failed(&e, now);
                self.down(i, now + RECONNECT_BACKOFF);
            }
        }
    }

    /// Counts a failed connect as the server's or, when it hit the
    /// client's own limit, as the client's.
    fn connect_failed(&mut self, e: &std::io::Error, now: Instant) {
        match client_limit(e) {
            Some(why) => {
                self.tally.client_limit = Some(why);
                self.error(|e| &mut e.client, now);
            }
            None => self.error(|e| &mut e.connect, now),
        }
    }

    fn down(&mut self, i: usize, at: Instant) {
        let c = &mut self.conns[i];
        if let Some(mut s) = c.stream.take() {
            let _ = self.poll.registry().deregister(&mut s);
        }
        c.phase = Phase::Down;
        c.reconnect_at = at;
        if let Some(p) = self.idle.iter().position(|&x| x == i) {
            self.idle.swap_remove(p);
        }
    }

    /// Reconnects the connections whose backoff is over and times out the
    /// requests that have waited too long.
    fn sweep(&mut self, now: Instant) {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            match c.phase {
                Phase::Down if now >= c.reconnect_at => self.connect(i, now),
                Phase::Down | Phase::Idle => {}
                Phase::Connecting => {
                    if now.duration_since(c.sent) > self.plan.timeout {
                        self.error(|e| &mut e.connect, now);
                        self.down(i, now);
                    }
                }
                _ => {
                    if now.duration_since(c.sent) > self.plan.timeout {
                        self.error(|e| &mut e.timeout, now);
                        self.down(i, now);
                    }
                }
            }
        }
    }

    /// Drives connection `i` as far as its socket allows.
    fn drive(&mut self, i: usize) {
        loop {
            match self.step(i) {
                Step::Block => return,
                Step::Again => {}
            }
        }
    }

    fn step(&mut self, i: usize) -> Step {
        let now_phase = self.conns[i].phase;
        match now_phase {
            Phase::Down => Step::Block,
            Phase::Idle => {
                // Nothing is in flight: readable means the server closed
                // an idle keep-alive connection (not an error: reconnect)
                // or sent what nobody asked for (a read error).
                let c = &mut self.conns[i];
                let s = c.stream.as_mut().expect("idle has a stream");
                match s.read(&mut c.buf[..]) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        self.dispatch(Instant::now());
                        Step::Block
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => Step::Again,
                    Ok(0) => {
                        let now = Instant::now();
                        self.down(i, now);
                        self.connect(i, now);
                        Step::Block
                    }
                    Ok(_) | Err(_) => {
                        let now = Instant::now();
                        self.error(|e| &mut e.read, now);
                        self.down(i, now);
                        Step::Block
                    }
                }
            }
            Phase::Connecting => {
                let c = &mut self.conns[i];
                let s = c.stream.as_ref().expect("connecting has a stream");
                match s.take_error() {
                    Ok(Some(e)) | Err(e) => {
                        let now = Instant::now();
                        self.connect_failed(&e, now);
                        self.down(i, now + RECONNECT_BACKOFF);
                        return Step::Block;
                    }
                    Ok(None) => {}
                }
                match s.peer_addr() {
                    Ok(_) => {
                        let now = Instant::now();
                        c.established = true;
                        if self.plan.rate.is_some() {
                            c.phase = Phase::Idle;
                            self.idle.push(i);
                            self.dispatch(now);
                            Step::Block
                        } else {
                            self.start_request(i, now, now);
                            Step::Again
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::NotConnected => Step::Block,
                    Err(_) => {
                        let now = Instant::now();
                        self.error(|e| &mut e.connect, now);
                        self.down(i, now + RECONNECT_BACKOFF);
                        Step::Block
                    }
                }
            }
            Phase::Writing => {
                let req = &self.plan.request;
                let c = &mut self.conns[i];
                let s = c.stream.as_mut().expect("writing has a stream");
                match s.write(&req[c.written..]) {
                    Ok(0) => {
                        self.error(|e| &mut e.write, Instant::now());
                        self.down(i, Instant::now());
                        Step::Block
                    }
                    Ok(n) => {
                        c.written += n;
                        if c.written == req.len() {
                            // The answer cannot be there yet: wait for the
                            // readable edge instead of a read that would
                            // only say EAGAIN (one syscall less a request).
                            c.phase = Phase::Head;
                            return Step::Block;
                        }
                        Step::Again
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => Step::Block,
                    Err(e) if e.kind() == ErrorKind::Interrupted => Step::Again,
                    Err(_) => {
                        self.error(|e| &mut e.write, Instant::now());
                        self.down(i, Instant::now());
                        Step::Block
                    }
                }
            }
            _ => self.read_step(i),
        }
    }

    /// Parses what is buffered; reads more when it is not enough.
    fn read_step(&mut self, i: usize) -> Step {
        match self.parse(i) {
            Ok(true) => return self.complete(i),
            Ok(false) => {}
            Err(()) => {
                let now = Instant::now();
                self.error(|e| &mut e.read, now);
                self.down(i, now);
                return Step::Block;
            }
        }
        let c = &mut self.conns[i];
        if c.start == c.end {
            c.start = 0;
            c.end = 0;
        } else if c.end == c.buf.len() {
            if c.start == 0 {
                // A head larger than the buffer.
                let now = Instant::now();
                self.error(|e| &mut e.read, now);
                self.down(i, now);
                return Step::Block;
            }
            c.buf.copy_within(c.start..c.end, 0);
            c.end -= c.start;
            c.start = 0;
        }
        let s = c.stream.as_mut().expect("reading has a stream");
        match s.read(&mut c.buf[c.end..]) {
            Ok(0) => {
                // Closed by the server with a request in flight.
                let now = Instant::now();
                self.error(|e| &mut e.read, now);
                self.down(i, now);
                Step::Block
            }
            Ok(n) => {
                c.end += n;
                if self.measuring {
                    self.tally.bytes += n as u64;
                }
                Step::Again
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => Step::Block,
            Err(e) if e.kind() == ErrorKind::Interrupted => Step::Again,
            Err(_) => {
                let now = Instant::now();
                self.error(|e| &mut e.read, now);
                self.down(i, now);
                Step::Block
            }
        }
    }

    /// Advances the response parser over the buffer: `Ok(true)` when the
    /// response is complete, `Ok(false)` when more bytes are needed.
    fn parse(&mut self, i: usize) -> Result<bool, ()> {
        let c = &mut self.conns[i];
        loop {
            let data = &c.buf[c.start..c.end];
            match c.phase {
                Phase::Head => {
                    let mut headers = [httparse::EMPTY_HEADER; 64];
                    let mut resp = httparse::Response::new(&mut headers);
                    match resp.parse(data) {
                        Ok(httparse::Status::Partial) => return Ok(false),
                        Ok(httparse::Status::Complete(n)) => {
                            c.status = resp.code.unwrap_or(0);
                            let mut length = None;
                            let mut chunked = false;
                            c.close_after = resp.version == Some(0);
                            for h in resp.headers.iter() {
                                if h.name.eq_ignore_ascii_case("content-length") {
                                    let v = std::str::from_utf8(h.value).map_err(|_| ())?;
                                    length = Some(v.trim().parse::<usize>().map_err(|_| ())?);
                                } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                                    chunked = h
                                        .value
                                        .windows(7)
                                        .any(|w| w.eq_ignore_ascii_case(b"chunked"));
                                } else if h.name.eq_ignore_ascii_case("connection") {
                                    if h.value.eq_ignore_ascii_case(b"close") {
                                        c.close_after = true;
                                    } else if h.value.eq_ignore_ascii_case(b"keep-alive") {
                                        c.close_after = false;
                                    }
                                }
                            }
                            c.start += n;
                            let bodiless = c.status == 204 || c.status == 304 || c.status < 200;
                            c.phase = if chunked {
                                Phase::ChunkSize
                            } else if bodiless {
                                Phase::Body(0)
                            } else if let Some(l) = length {
                                Phase::Body(l)
                            } else {
                                // Body to end of connection: not supported
                                // for keep-alive load.
                                return Err(());
                            };
                        }
                        Err(_) => return Err(()),
                    }
                }
                Phase::Body(left) => {
                    let take = left.min(data.len());
                    c.start += take;
                    if take == left {
                        return Ok(true);
                    }
                    c.phase = Phase::Body(left - take);
                    return Ok(false);
                }
                Phase::ChunkSize => match httparse::parse_chunk_size(data) {
                    Ok(httparse::Status::Partial) => return Ok(false),
                    Ok(httparse::Status::Complete((n, size))) => {
                        c.start += n;
                        c.phase = if size == 0 {
                            Phase::Trailer
                        } else {
                            Phase::ChunkData(usize::try_from(size).map_err(|_| ())? + 2)
                        };
                    }
                    Err(_) => return Err(()),
                },
                Phase::ChunkData(left) => {
                    let take = left.min(data.len());
                    c.start += take;
                    if take < left {
                        c.phase = Phase::ChunkData(left - take);
                        return Ok(false);
                    }
                    c.phase = Phase::ChunkSize;
                }
                Phase::Trailer => match data.windows(2).position(|w| w == b"\r\n") {
                    None => return Ok(false),
                    Some(0) => {
                        c.start += 2;
                        return Ok(true);
                    }
                    Some(p) => c.start += p + 2,
                },
                _ => return Ok(false),
            }
        }
    }

    /// Records a complete response and starts the next request.
    fn complete(&mut self, i: usize) -> Step {
        let now = Instant::now();
        let (origin, status, close_after) = {
            let c = &self.conns[i];
            (c.origin, c.status, c.close_after)
        };
        if now >= self.plan.measure_start {
            let ns = now.saturating_duration_since(origin).as_nanos() as u64;
            self.tally
                .hist
                .saturating_record(ns.clamp(1, MAX_LATENCY_NS));
            self.tally.requests += 1;
            if (200..400).contains(&status) {
                self.tally.ok += 1;
            }
            let s = self.second(now);
            self.tally.timeline[s] += 1;
        }
        self.tally.answered += 1;
        if !(200..400).contains(&status) && self.tally.bad_status.is_none() {
            self.tally.bad_status = Some(status);
        }
        if status >= 400 {
            self.error(|e| &mut e.status, now);
        }
        let c = &mut self.conns[i];
        c.outstanding = c.outstanding.saturating_sub(1);
        if c.outstanding > 0 {
            if close_after {
                // The server closes with pipelined requests unanswered:
                // each is a read error, never silently dropped.
                for _ in 0..c.outstanding {
                    self.error(|e| &mut e.read, now);
                }
            } else {
                // The next pipelined response; its latency also runs from
                // the batch's send, its timeout from now.
                c.phase = Phase::Head;
                c.status = 0;
                c.sent = now;
                return Step::Again;
            }
        }
        if close_after {
            self.down(i, now);
            self.connect(i, now);
            return Step::Block;
        }
        if self.plan.rate.is_some() {
            // Idle: its step probes for a close that arrived with the
            // response (the edge is spent), then sends what is due.
            self.conns[i].phase = Phase::Idle;
            self.idle.push(i);
            Step::Again
        } else {
            self.start_request(i, now, now);
            Step::Again
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client's own limits are told apart from the server's refusals.
    #[test]
    fn client_limits_are_named() {
        let e = |n| std::io::Error::from_raw_os_error(n);
        assert!(client_limit(&e(libc::EMFILE))
            .unwrap()
            .contains("ulimit -n"));
        assert!(client_limit(&e(libc::ENFILE)).is_some());
        assert!(client_limit(&e(libc::EADDRNOTAVAIL)).is_some());
        assert_eq!(client_limit(&e(libc::ECONNREFUSED)), None);
        assert_eq!(client_limit(&e(libc::ETIMEDOUT)), None);
        assert_eq!(client_limit(&std::io::Error::other("x")), None);
    }
}
