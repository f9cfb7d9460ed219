//! The server's side of a load run, from /proc: the CPU time (utime + stime
//! of every process, threads included) and the context switches (summed
//! over every thread's /proc/PID/task/TID/status) of the watched processes
//! and their descendants (found by ppid in /proc/*/stat, so an nginx master
//! brings its workers), and starting and stopping a `--spawn`ed server.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::LoadError;

/// One process's counters at one moment.
#[derive(Debug, Clone, Default)]
pub struct ProcSample {
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
pub type Snapshot = BTreeMap<i32, ProcSample>;

/// `(ppid, comm, utime + stime)` from /proc/PID/stat.
fn stat(pid: i32) -> Option<(i32, String, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // comm may hold spaces and parentheses: it ends at the last ')'.
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let comm = s[open + 1..close].to_string();
    let rest: Vec<&str> = s[close + 2..].split_whitespace().collect();
    // rest[0] is field 3 (state); ppid is field 4, utime 14, stime 15.
    let ppid = rest.get(1)?.parse().ok()?;
    let utime: u64 = rest.get(11)?.parse().ok()?;
    let stime: u64 = rest.get(12)?.parse().ok()?;
    Some((ppid, comm, utime + stime))
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
pub fn tree(roots: &[i32]) -> Vec<i32> {
    let mut parent = BTreeMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            if let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) {
                if let Some((ppid, _, _)) = stat(pid) {
                    parent.insert(pid, ppid);
                }
            }
        }
    }
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
pub fn snapshot(roots: &[i32]) -> Snapshot {
    let mut snap = Snapshot::new();
    for pid in tree(roots) {
        if let Some((_, comm, ticks)) = stat(pid) {
            let (voluntary, nonvoluntary) = switches(pid);
            snap.insert(
                pid,
                ProcSample {
                    comm,
                    ticks,
                    voluntary,
                    nonvoluntary,
                },
            );
        }
    }
    snap
}

/// Clock ticks per second of /proc's times.
pub fn ticks_per_second() -> f64 {
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
pub fn delta(before: &Snapshot, after: &Snapshot) -> Vec<(i32, ProcSample)> {
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

/// A server started with `--spawn`: its own process group, so stopping it
/// stops what it started.
pub struct Spawned {
    child: Child,
}

impl Spawned {
    /// Starts `cmd` with `sh -c` and waits up to `wait` for `addr` to accept.
    pub fn start(cmd: &str, addr: SocketAddr, wait: Duration) -> Result<Spawned, LoadError> {
        let child = Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .process_group(0)
            .spawn()
            .map_err(|e| LoadError::Spawn(cmd.to_string(), e.to_string()))?;
        let mut s = Spawned { child };
        let until = Instant::now() + wait;
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(s);
            }
            if let Ok(Some(st)) = s.child.try_wait() {
                return Err(LoadError::Spawn(
                    cmd.to_string(),
                    format!("it exited ({st}) before {addr} accepted connections"),
                ));
            }
            if Instant::now() >= until {
                s.stop();
                return Err(LoadError::Spawn(
                    cmd.to_string(),
                    format!("{addr} did not accept connections within {wait:?}"),
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its pid (the shell's; its children are followed by ppid).
    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// SIGTERM to the group, then SIGKILL after 2 s if it is still there.
    pub fn stop(&mut self) {
        let pgid = self.pid();
        // SAFETY: kill only sends a signal; the group is the one we created.
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                // The shell is gone; make sure the rest of its group is too.
                // SAFETY: as above.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: as above.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn spawn_that_never_listens_is_refused_and_stopped() {
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
