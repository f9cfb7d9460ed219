//! The server's side of a load run, from /proc: the CPU time (utime + stime
//! of every process, threads included) and the context switches (summed
//! over every thread's /proc/PID/task/TID/status) of the watched processes
//! and their descendants (found by ppid in /proc/*/stat, so an nginx master
//! brings its workers), and starting and stopping a `--spawn`ed server:
//! the port must be free before it starts, a server that daemonises is
//! followed (atomlab is its child subreaper, prctl(2)), and every exit path
//! stops it (drop, SIGTERM/SIGHUP, Ctrl-C while it starts or a second one while it is measured, and PR_SET_PDEATHSIG
//! when atomlab is killed outright).

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use crate::LoadError;

/// One process's counters at one moment.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProcSample {
    /// Its name (comm).
    pub comm: String,
    /// utime + stime in clock ticks.
    pub ticks: u64,
    /// Voluntary context switches over its threads.
    pub voluntary: u64,
    /// Nonvoluntary context switches over its threads.
    pub nonvoluntary: u64,
}

/// The watched processes' counters at one moment, by pid.
pub(crate) type Snapshot = BTreeMap<i32, ProcSample>;

/// What /proc/PID/stat says of one process.
#[derive(Debug, Clone)]
struct Stat {
    /// R, S, D, Z…
    state: char,
    ppid: i32,
    /// Process group.
    pgrp: i32,
    session: i32,
    comm: String,
    /// utime + stime in clock ticks.
    ticks: u64,
}

/// One process's /proc/PID/stat (proc(5): fields 3-6, 14 and 15).
fn stat(pid: i32) -> Option<Stat> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // comm may hold spaces and parentheses: it ends at the last ')'.
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let comm = s[open + 1..close].to_string();
    let rest: Vec<&str> = s.get(close + 2..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); ppid is field 4, pgrp 5, session 6,
    // utime 14, stime 15.
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    Some(Stat {
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        pgrp: rest.get(2)?.parse().ok()?,
        session: rest.get(3)?.parse().ok()?,
        comm,
        ticks: utime + stime,
    })
}

/// Whether `pid` is a running process (not gone, not a zombie).
pub(crate) fn alive(pid: i32) -> bool {
    pid > 0 && stat(pid).is_some_and(|s| s.state != 'Z')
}

/// Every process's stat, by pid.
fn all_processes() -> BTreeMap<i32, Stat> {
    let mut out = BTreeMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            if let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) {
                if let Some(st) = stat(pid) {
                    out.insert(pid, st);
                }
            }
        }
    }
    out
}

fn switches(pid: i32) -> (u64, u64) {
    let mut v = 0;
    let mut n = 0;
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return (0, 0);
    };
    for t in tasks.flatten() {
        let Ok(s) = std::fs::read_to_string(t.path().join("status")) else {
            continue;
        };
        for line in s.lines() {
            if let Some(x) = line.strip_prefix("voluntary_ctxt_switches:") {
                v += x.trim().parse::<u64>().unwrap_or(0);
            } else if let Some(x) = line.strip_prefix("nonvoluntary_ctxt_switches:") {
                n += x.trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    (v, n)
}

/// `roots` and all their living descendants.
pub(crate) fn tree(roots: &[i32]) -> Vec<i32> {
    let parent: BTreeMap<i32, i32> = all_processes()
        .into_iter()
        .map(|(pid, s)| (pid, s.ppid))
        .collect();
    let mut out: Vec<i32> = roots.to_vec();
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        for (&c, &pp) in &parent {
            if pp == p && !out.contains(&c) {
                out.push(c);
            }
        }
        i += 1;
    }
    out
}

/// The counters of `roots` and their descendants now.
pub(crate) fn snapshot(roots: &[i32]) -> Snapshot {
    let mut snap = Snapshot::new();
    for pid in tree(roots) {
        if let Some(st) = stat(pid) {
            let (voluntary, nonvoluntary) = switches(pid);
            snap.insert(
                pid,
                ProcSample {
                    comm: st.comm,
                    ticks: st.ticks,
                    voluntary,
                    nonvoluntary,
                },
            );
        }
    }
    snap
}

/// Clock ticks per second of /proc's times.
pub(crate) fn ticks_per_second() -> f64 {
    // SAFETY: sysconf only reads a configuration value.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// Per-process change between two snapshots: a process born in between
/// counts from zero; one that died in between is lost (and named by the
/// caller).
pub(crate) fn delta(before: &Snapshot, after: &Snapshot) -> Vec<(i32, ProcSample)> {
    after
        .iter()
        .map(|(&pid, a)| {
            let b = before.get(&pid).cloned().unwrap_or_default();
            (
                pid,
                ProcSample {
                    comm: a.comm.clone(),
                    ticks: a.ticks.saturating_sub(b.ticks),
                    voluntary: a.voluntary.saturating_sub(b.voluntary),
                    nonvoluntary: a.nonvoluntary.saturating_sub(b.nonvoluntary),
                },
            )
        })
        .collect()
}

/// Who listens on TCP `port` (any local address), from /proc/net/tcp{,6}
/// and the processes' open sockets: `(pid, comm)` of each holder this
/// process may see (another user's processes need root).
pub(crate) fn port_holders(port: u16) -> Vec<(i32, String)> {
    let mut sockets = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            // proc(5): local_address is ADDR:PORT in hex, st 0A is LISTEN,
            // the tenth column the socket's inode.
            let (Some(local), Some(st), Some(inode)) = (cols.get(1), cols.get(3), cols.get(9))
            else {
                continue;
            };
            let p = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if p == Some(port) && *st == "0A" && *inode != "0" {
                sockets.push(format!("socket:[{inode}]"));
            }
        }
    }
    if sockets.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (pid, st) in all_processes() {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|l| sockets.iter().any(|s| l.as_os_str() == s.as_str()))
        });
        if holds {
            out.push((pid, st.comm));
        }
    }
    out
}

/// Why `addr` cannot be given to a server about to start: something
/// already accepts connections there (named when /proc shows who).
fn port_taken(addr: SocketAddr) -> Option<String> {
    TcpStream::connect_timeout(&addr, Duration::from_millis(500)).ok()?;
    let holders = port_holders(addr.port());
    let who = match holders.as_slice() {
        [] => "a process this user cannot see (another user's, or another network namespace)"
            .to_string(),
        [(pid, comm)] => format!("pid {pid} ({comm})"),
        many => many
            .iter()
            .map(|(pid, comm)| format!("pid {pid} ({comm})"))
            .collect::<Vec<_>>()
            .join(", "),
    };
    Some(format!(
        "port {} is already taken: {addr} accepts connections before the server was started, held by {who}; \
         stop it, or give the spawned server and the URL a free port (otherwise the old server would be measured)",
        addr.port()
    ))
}

/// The process groups of the `--spawn`ed servers now running, for the
/// handlers of the signals that end atomlab at once (a second Ctrl-C,
/// SIGTERM, SIGHUP): they stop the server first, so no exit path leaves it
/// behind. 0 is a free slot.
static GROUPS: [AtomicI32; 16] = [const { AtomicI32::new(0) }; 16];

fn register_group(g: i32) {
    // ORDERING: Relaxed throughout: each slot is one value read on its own
    // by a signal handler; nothing else is published through it.
    if g <= 1 || GROUPS.iter().any(|s| s.load(Ordering::Relaxed) == g) {
        return;
    }
    for s in &GROUPS {
        // ORDERING: Relaxed, as above.
        if s.compare_exchange(0, g, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

fn unregister_group(g: i32) {
    for s in &GROUPS {
        // ORDERING: Relaxed, as in `register_group`.
        let _ = s.compare_exchange(g, 0, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// Sends `sig` to every registered server group. Async-signal-safe: atomic
/// loads and kill(2) only.
pub(crate) fn signal_servers(sig: libc::c_int) {
    for s in &GROUPS {
        // ORDERING: Relaxed, as in `register_group`.
        let g = s.load(Ordering::Relaxed);
        if g > 1 {
            // SAFETY: kill only sends a signal, to a group we started.
            unsafe { libc::kill(-g, sig) };
        }
    }
}

/// SIGTERM, SIGHUP or SIGINT while a spawned server runs (SIGINT outside
/// the measured run, whose own handler takes it then): stop the server,
/// which is in a process group of its own and so gets no signal from the
/// terminal, then end as the signal would have.
extern "C" fn on_terminate(sig: libc::c_int) {
    signal_servers(libc::SIGTERM);
    // SAFETY: _exit is async-signal-safe and takes no pointers.
    unsafe { libc::_exit(128 + sig) };
}

/// A server started with `--spawn`: `sh -c CMD` in its own process group,
/// with atomlab its child subreaper (prctl(2) PR_SET_CHILD_SUBREAPER), so a
/// server that daemonises (forks, lets its parent exit, setsid: nginx's
/// default `daemon on`) is handed to atomlab instead of init, followed, and
/// stopped with the rest. One at a time per process: orphans are told
/// apart from atomlab's other children, not from another server's.
pub(crate) struct Spawned {
    child: Child,
    /// The shell's pid, which is its process group.
    group: i32,
    /// atomlab's pid, process group and session.
    me: i32,
    my_group: i32,
    my_session: i32,
    /// The shell's exit status, once it has exited.
    exited: Option<std::process::ExitStatus>,
    /// Processes the server left behind when their parent exited (a
    /// daemon), adopted by atomlab as subreaper.
    adopted: Vec<i32>,
    /// SIGTERM's, SIGHUP's and SIGINT's dispositions before `start`.
    previous: Vec<(libc::c_int, libc::sighandler_t)>,
    stopped: bool,
}

impl Spawned {
    /// Starts `cmd` with `sh -c` and waits up to `wait` for `addr` to
    /// accept. Refused when `addr` already accepts before the start (the
    /// old server would be measured), when the server exits before it
    /// listens, or when it does not listen in time; a refused server is
    /// stopped.
    pub(crate) fn start(cmd: &str, addr: SocketAddr, wait: Duration) -> Result<Spawned, LoadError> {
        let err = |why: String| LoadError::Spawn(cmd.to_string(), why);
        if let Some(why) = port_taken(addr) {
            return Err(err(why));
        }
        let mut s = Spawned::spawn(cmd)?;
        let until = Instant::now() + wait;
        loop {
            let accepting = TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok();
            let running = !s.roots().is_empty();
            if accepting && running {
                return Ok(s);
            }
            if !running {
                let status = s.exit_status();
                s.stop();
                return Err(err(if accepting {
                    format!(
                        "it exited ({status}) and left nothing running, yet {addr} accepts connections: another process took the port"
                    )
                } else {
                    format!("it exited ({status}) before {addr} accepted connections")
                }));
            }
            if Instant::now() >= until {
                s.stop();
                return Err(err(format!(
                    "{addr} did not accept connections within {wait:?}"
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts `sh -c cmd` in a process group of its own, atomlab its
    /// subreaper, SIGTERM, SIGHUP and SIGINT caught to stop it.
    fn spawn(cmd: &str) -> Result<Spawned, LoadError> {
        // SAFETY: prctl with integer arguments only; it changes how this
        // process's orphaned descendants are reparented.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        let mut command = Command::new("sh");
        command.arg("-c").arg(cmd).process_group(0);
        // SAFETY: runs between fork and exec, calls only prctl (a system
        // call, async-signal-safe). If atomlab is killed outright (SIGKILL),
        // the server gets SIGTERM (nginx's master then stops its workers).
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
                Ok(())
            })
        };
        let child = command
            .spawn()
            .map_err(|e| LoadError::Spawn(cmd.to_string(), e.to_string()))?;
        let group = child.id() as i32;
        register_group(group);
        // SAFETY: getpid/getpgrp/getsid(0) take no pointers.
        let (me, my_group, my_session) =
            unsafe { (libc::getpid(), libc::getpgrp(), libc::getsid(0)) };
        let mut s = Spawned {
            child,
            group,
            me,
            my_group,
            my_session,
            exited: None,
            adopted: Vec::new(),
            previous: Vec::new(),
            stopped: false,
        };
        s.catch_terminate();
        Ok(s)
    }

    /// SIGTERM, SIGHUP and SIGINT stop the server before atomlab goes (unless they
    /// were ignored, as under nohup).
    fn catch_terminate(&mut self) {
        let handler = on_terminate as extern "C" fn(libc::c_int);
        for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
            // SAFETY: the handler only loads atomics, calls kill and _exit,
            // all async-signal-safe.
            let prev = unsafe { libc::signal(sig, handler as libc::sighandler_t) };
            if prev == libc::SIG_IGN {
                // SAFETY: puts back the disposition just replaced.
                unsafe { libc::signal(sig, prev) };
            } else {
                self.previous.push((sig, prev));
            }
        }
    }

    /// The shell's exit status, in words.
    fn exit_status(&self) -> String {
        self.exited
            .map(|st| st.to_string())
            .unwrap_or_else(|| "still running".into())
    }

    /// The server's processes now: the shell while it runs and what the
    /// server left behind that atomlab adopted (their descendants are
    /// followed by [`tree`]). Empty when the server has exited.
    pub(crate) fn roots(&mut self) -> Vec<i32> {
        if self.exited.is_none() {
            if let Ok(Some(st)) = self.child.try_wait() {
                self.exited = Some(st);
            }
        }
        self.adopt();
        let mut out = Vec::new();
        if self.exited.is_none() {
            out.push(self.group);
        }
        out.extend(self.adopted.iter().copied().filter(|&p| alive(p)));
        out
    }

    /// Takes in the server's orphans: atomlab's children other than the
    /// shell that are in the shell's process group, or in a session of
    /// their own (a daemon's setsid). atomlab's other children (git) share
    /// its own group and session. Adopted processes that exited are reaped.
    fn adopt(&mut self) {
        for (pid, st) in all_processes() {
            if st.ppid == self.me
                && pid != self.group
                && st.state != 'Z'
                && (st.pgrp == self.group || st.session != self.my_session)
                && !self.adopted.contains(&pid)
            {
                self.adopted.push(pid);
                if st.pgrp != self.my_group {
                    register_group(st.pgrp);
                }
            }
        }
        for &pid in &self.adopted {
            let mut status = 0;
            // SAFETY: `status` is a valid int; `pid` is our child (adopted),
            // not one std's Command waits for.
            unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        }
    }

    /// The process groups of the server's processes now (never atomlab's own).
    fn groups(&mut self) -> Vec<i32> {
        let roots = self.roots();
        let mut groups = vec![self.group];
        for pid in tree(&roots) {
            if let Some(st) = stat(pid) {
                if st.pgrp > 1 && st.pgrp != self.my_group && !groups.contains(&st.pgrp) {
                    groups.push(st.pgrp);
                }
            }
        }
        groups
    }

    /// SIGTERM to every group of the server, then SIGKILL after 2 s to
    /// whatever is left; reaps what it can. Called again, it does nothing.
    pub(crate) fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        let mut groups = self.groups();
        for &g in &groups {
            // SAFETY: kill only sends a signal; `g` is a group the server
            // made (never atomlab's own, see `groups`).
            unsafe { libc::kill(-g, libc::SIGTERM) };
        }
        let until = Instant::now() + Duration::from_secs(2);
        loop {
            let left = tree(&self.roots());
            if left.is_empty() {
                break;
            }
            if Instant::now() >= until {
                for g in self.groups() {
                    if !groups.contains(&g) {
                        groups.push(g);
                    }
                }
                for &g in &groups {
                    // SAFETY: as above.
                    unsafe { libc::kill(-g, libc::SIGKILL) };
                }
                for pid in left {
                    // SAFETY: as above; a process of the server's tree that
                    // moved to a group of its own.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
                // Reaped below once SIGKILL has done its work.
                let until = Instant::now() + Duration::from_secs(1);
                while !tree(&self.roots()).is_empty() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(20));
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: as above: the shell's group, in case it outlived the shell.
        unsafe { libc::kill(-self.group, libc::SIGKILL) };
        let _ = self.child.wait();
        self.adopt();
        for g in groups {
            unregister_group(g);
        }
        unregister_group(self.group);
        for (sig, prev) in self.previous.drain(..) {
            // SAFETY: restores the disposition `catch_terminate` replaced.
            unsafe { libc::signal(sig, prev) };
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One spawned server at a time, as in atomlab: a server's orphans are
    /// told apart from the rest of the process's children by their group
    /// or session, not from another spawned server's.
    static ONE_SPAWN: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn a_snapshot_follows_children_and_counts_cpu() {
        let me = std::process::id() as i32;
        let mut child = Command::new("sleep").arg("5").spawn().unwrap();
        // Burn a little CPU so our own ticks move.
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(50) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        assert!(x > 0);
        let snap = snapshot(&[me]);
        let _ = child.kill();
        let _ = child.wait();
        assert!(snap.contains_key(&me));
        assert!(snap.contains_key(&(child.id() as i32)), "{snap:?}");
        assert!(snap[&me].voluntary + snap[&me].nonvoluntary > 0);
        let d = delta(&Snapshot::new(), &snap);
        assert_eq!(d.len(), snap.len());
        assert!(ticks_per_second() > 0.0);
    }

    /// A TCP socket bound to a free loopback port, not listening, and
    /// its address; the port stays taken while the socket is open.
    fn bound_not_listening() -> (std::os::fd::OwnedFd, SocketAddr) {
        use std::os::fd::FromRawFd;
        // SAFETY: plain socket(2) call; the result is checked.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        // SAFETY: `fd` is a fresh socket that nothing else owns.
        let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        let mut sa = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes([127, 0, 0, 1]),
            },
            sin_zero: [0; 8],
        };
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        // SAFETY: `sa` is a valid sockaddr_in of `len` bytes.
        let rc = unsafe { libc::bind(fd, (&raw const sa).cast(), len) };
        assert_eq!(rc, 0, "bind: {}", std::io::Error::last_os_error());
        // SAFETY: `sa` and `len` are writable and sized for a sockaddr_in.
        let rc = unsafe { libc::getsockname(fd, (&raw mut sa).cast(), &mut len) };
        assert_eq!(rc, 0, "getsockname: {}", std::io::Error::last_os_error());
        let port = u16::from_be(sa.sin_port);
        (owned, SocketAddr::from(([127, 0, 0, 1], port)))
    }

    /// A server that daemonises (here `setsid` behind `&`: its parent shell
    /// exits at once, and it leaves the shell's session) is adopted, counted
    /// among the server's processes, and stopped with it.
    #[test]
    fn a_daemonising_server_is_followed_and_stopped() {
        let _one = ONE_SPAWN.lock().unwrap_or_else(|e| e.into_inner());
        let mut s = Spawned::spawn("setsid sleep 30 &").unwrap();
        let t = Instant::now();
        // Adopted as soon as the shell exits, which may be before the child
        // has called setsid and exec'd sleep: wait for both.
        let daemon = loop {
            let roots = s.roots();
            let daemon = roots.iter().copied().find(|&p| {
                p != s.group
                    && stat(p).is_some_and(|st| st.comm == "sleep" && st.session != s.my_session)
            });
            if let Some(p) = daemon {
                break p;
            }
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "never adopted: {roots:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(s.adopted.contains(&daemon));
        s.stop();
        assert!(!alive(daemon), "the daemon {daemon} outlived stop()");
        assert!(s.roots().is_empty());
    }

    #[test]
    fn the_holder_of_a_port_is_named() {
        let _one = ONE_SPAWN.lock().unwrap_or_else(|e| e.into_inner());
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let me = std::process::id() as i32;
        assert!(port_holders(addr.port()).iter().any(|(p, _)| *p == me));
        let why = port_taken(addr).expect("taken");
        assert!(
            why.contains(&format!("port {} is already taken", addr.port())),
            "{why}"
        );
        assert!(why.contains(&format!("pid {me}")), "{why}");
        let e = Spawned::start("sleep 30", addr, Duration::from_secs(2))
            .err()
            .expect("refused");
        assert!(e.to_string().contains("already taken"), "{e}");
    }

    #[test]
    fn spawn_that_never_listens_is_refused_and_stopped() {
        let _one = ONE_SPAWN.lock().unwrap_or_else(|e| e.into_inner());
        // A port held by a bound socket that never listens: connecting is
        // refused, and no other process or test can take the port (a
        // dropped listener's port was taken by a parallel test once, and
        // "exit 3" then seemed to listen).
        let (_held, addr) = bound_not_listening();
        let e = Spawned::start("exit 3", addr, Duration::from_secs(2))
            .err()
            .expect("refused");
        assert!(e.to_string().contains("exited"), "{e}");
        let t = Instant::now();
        let e = Spawned::start("sleep 30", addr, Duration::from_millis(300))
            .err()
            .expect("refused");
        assert!(e.to_string().contains("did not accept"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
