//! Starting a group of scoped threads that wait for one another (at a
//! barrier, a start line, a ring) so that a thread the system refuses
//! strands none of them.
//!
//! `pthread_create(3)` fails with EAGAIN when RLIMIT_NPROC (`ulimit -u`,
//! which counts every thread of the user, `getrlimit(2)`) or the kernel's
//! thread limit is reached, and the stack `mmap(2)` fails when RLIMIT_AS
//! (`ulimit -v`) leaves no room for it. `std::thread::Scope::spawn` panics
//! then, and the threads already started, waiting at the caller's barrier
//! for one that will never come, keep the scope from ever ending. Here
//! every thread of a [`Group`] first waits at a gate of its own, before
//! any of the caller's code runs; the gate opens when the caller has
//! started them all ([`Group::open`]) and shuts when it has not (a refused
//! spawn, an early return, a panic: [`Group`]'s `Drop`), and then the
//! threads return without running their work.
//!
//! Before the first thread, the address space the group needs is checked
//! against RLIMIT_AS: when the limit runs out between a new thread's stack
//! and the signal stack the Rust runtime maps for it, the runtime aborts
//! the whole process in that thread ("failed to allocate an alternative
//! stack"), which no caller can catch.

use std::fmt;
use std::io;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{Scope, ScopedJoinHandle};

/// The stack of a thread whose caller asks for nothing special: the Rust
/// runtime's default (`std::thread::Builder::stack_size`).
pub const DEFAULT_STACK: usize = 2 << 20;

/// What a thread maps besides its stack, at most: the guard page, the
/// signal stack the Rust runtime gives every thread (SIGSTKSZ, or the
/// kernel's AT_MINSIGSTKSZ, and its guard page) and glibc's static TLS.
const THREAD_EXTRA: usize = 256 << 10;

/// Why a group's threads could not all start; nothing of theirs ran.
#[derive(Debug)]
pub enum SpawnError {
    /// The system refused a thread (`pthread_create(3)`: EAGAIN under
    /// `ulimit -u`, ENOMEM under `ulimit -v`).
    Refused {
        /// The thread, as the caller names it (`P3 of 4`).
        thread: String,
        /// The system's reason.
        reason: io::Error,
    },
    /// The threads would not fit under the address-space limit
    /// (`ulimit -v`, RLIMIT_AS); checked before any starts.
    AddressSpace {
        /// Threads the group was to start.
        threads: usize,
        /// MiB of address space they need, with a margin.
        need_mib: u64,
        /// The limit, MiB.
        limit_mib: u64,
        /// What the limit leaves, MiB.
        left_mib: u64,
    },
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::Refused { thread, reason } => write!(
                f,
                "cannot start thread {thread}: {reason} (the limits on threads or memory, `ulimit -u` and `ulimit -v`, are too low for this many threads: raise them or use fewer threads)"
            ),
            SpawnError::AddressSpace {
                threads,
                need_mib,
                limit_mib,
                left_mib,
            } => write!(
                f,
                "cannot start {threads} threads: they need about {need_mib} MiB of address space and the limit (`ulimit -v`, {limit_mib} MiB) leaves {left_mib} MiB; raise the limit or use fewer threads"
            ),
        }
    }
}

/// The system's reason is in the message: no source, so that a chain of
/// causes does not say it twice.
impl std::error::Error for SpawnError {}

/// Opened once: `true` when every thread of the group has started,
/// `false` when one could not be.
#[derive(Default)]
struct Gate {
    state: Mutex<Option<bool>>,
    opened: Condvar,
}

impl Gate {
    fn open(&self, go: bool) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.is_none() {
            *st = Some(go);
        }
        self.opened.notify_all();
    }

    /// Blocks until the gate is opened; whether to go on.
    fn wait(&self) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(go) = *st {
                return go;
            }
            st = self.opened.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Threads started in a `std::thread::scope` that run their work only
/// once all of them have started ([`Group::open`]). Dropped unopened (the
/// caller returned early or panicked), it lets the started threads return
/// without running their work, so the scope can end.
///
/// ```
/// use atomlab_thread::{Group, DEFAULT_STACK};
/// let barrier = std::sync::Barrier::new(3);
/// let sum = std::thread::scope(|s| -> Result<usize, atomlab_thread::SpawnError> {
///     let mut group = Group::new(s, 2, DEFAULT_STACK)?;
///     let mut workers = Vec::new();
///     for t in 0..2 {
///         let barrier = &barrier;
///         workers.push(group.spawn(format!("{t} of 2"), move || {
///             barrier.wait();
///             t + 1
///         })?);
///     }
///     group.open();
///     barrier.wait();
///     Ok(workers.into_iter().map(|w| w.join().unwrap_or(0)).sum())
/// });
/// assert_eq!(sum.unwrap(), 3);
/// ```
pub struct Group<'scope, 'env: 'scope> {
    scope: &'scope Scope<'scope, 'env>,
    gate: Arc<Gate>,
    stack: usize,
}

impl<'scope, 'env> Group<'scope, 'env> {
    /// A group in `scope` of up to `threads` threads of `stack` bytes of
    /// stack each, or why they cannot fit under `ulimit -v`.
    pub fn new(
        scope: &'scope Scope<'scope, 'env>,
        threads: usize,
        stack: usize,
    ) -> Result<Self, SpawnError> {
        address_space_for(threads, stack)?;
        Ok(Group {
            scope,
            gate: Arc::default(),
            stack,
        })
    }

    /// Starts `work` on a thread of its own, to run once the group is
    /// opened; `thread` names it in the error when the system refuses it.
    /// On an error the group is shut: the threads started before return
    /// without running their work.
    pub fn spawn<T, F>(&mut self, thread: String, work: F) -> Result<Member<'scope, T>, SpawnError>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        let gate = Arc::clone(&self.gate);
        std::thread::Builder::new()
            .stack_size(self.stack)
            .spawn_scoped(self.scope, move || gate.wait().then(work))
            .map(Member)
            .map_err(|reason| {
                self.gate.open(false);
                SpawnError::Refused { thread, reason }
            })
    }

    /// Every thread has started: let them run their work.
    pub fn open(self) {
        self.gate.open(true);
    }
}

impl Drop for Group<'_, '_> {
    /// Unopened: the started threads return without running their work
    /// (opened, this changes nothing: the gate opens once).
    fn drop(&mut self) {
        self.gate.open(false);
    }
}

/// A thread of a [`Group`].
pub struct Member<'scope, T>(ScopedJoinHandle<'scope, Option<T>>);

impl<T> Member<'_, T> {
    /// Waits for the thread; its work's result, or the panic that ended
    /// it. A thread whose group was never opened ran no work: that is an
    /// error too.
    pub fn join(self) -> std::thread::Result<T> {
        self.0
            .join()?
            .ok_or_else(|| Box::new("the thread's group never opened") as _)
    }

    /// Whether the thread has finished.
    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }
}

/// Refuses `threads` threads of `stack` bytes that cannot all fit under
/// the address-space limit (`ulimit -v`, RLIMIT_AS), with a margin,
/// against what this process has already mapped (/proc/self/statm).
fn address_space_for(threads: usize, stack: usize) -> Result<(), SpawnError> {
    if threads == 0 {
        return Ok(());
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return Ok(());
    }
    let Some(mapped) = mapped_bytes() else {
        return Ok(());
    };
    let limit = lim.rlim_cur;
    let margin = 64u64 << 20;
    let n = threads as u64;
    let need = n
        .saturating_mul(stack.saturating_add(THREAD_EXTRA) as u64)
        .saturating_add(malloc_arenas(n))
        .saturating_add(margin);
    let left = limit.saturating_sub(mapped);
    if need > left {
        return Err(SpawnError::AddressSpace {
            threads,
            need_mib: need >> 20,
            limit_mib: limit >> 20,
            left_mib: left >> 20,
        });
    }
    Ok(())
}

/// The address space glibc's malloc may reserve for `threads` new threads:
/// each thread that allocates may get an arena of its own, a 64 MiB
/// reservation (HEAP_MAX_SIZE on 64-bit), up to M_ARENA_MAX, which is
/// `MALLOC_ARENA_MAX` or 8 per online CPU (glibc malloc/arena.c,
/// `arena_get2`). Measured: 241 threads under a 1.5 GB limit, not the 650
/// their stacks alone allow. Other C libraries reserve no arenas.
fn malloc_arenas(threads: u64) -> u64 {
    if !cfg!(target_env = "gnu") {
        return 0;
    }
    let max = std::env::var("MALLOC_ARENA_MAX")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or_else(|| {
            // SAFETY: sysconf has no preconditions.
            let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
            8 * u64::try_from(cpus).unwrap_or(1).max(1)
        });
    threads.min(max).saturating_mul(64 << 20)
}

/// The bytes of address space this process has mapped, from the first
/// field of /proc/self/statm (pages, `proc(5)`); `None` where there is no
/// /proc.
fn mapped_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|&p| p > 0)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn an_opened_group_runs_every_thread_and_joins_its_results() {
        let barrier = std::sync::Barrier::new(4);
        let got = std::thread::scope(|s| -> Result<Vec<usize>, SpawnError> {
            let mut g = Group::new(s, 3, DEFAULT_STACK)?;
            let members = (0..3)
                .map(|t| {
                    let barrier = &barrier;
                    g.spawn(format!("{t}"), move || {
                        barrier.wait();
                        t * 10
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            g.open();
            barrier.wait();
            Ok(members.into_iter().map(|m| m.join().unwrap()).collect())
        });
        assert_eq!(got.unwrap(), vec![0, 10, 20]);
    }

    /// The defect of issue 33: a caller that stopped spawning after its
    /// threads had started left them waiting at its barrier for ever.
    /// A group dropped unopened lets them go without running their work.
    #[test]
    fn a_group_dropped_unopened_runs_no_work_and_strands_no_thread() {
        let ran = AtomicUsize::new(0);
        let barrier = std::sync::Barrier::new(3);
        let out = std::thread::scope(|s| -> Result<(), SpawnError> {
            let mut g = Group::new(s, 2, DEFAULT_STACK)?;
            for t in 0..2 {
                let (ran, barrier) = (&ran, &barrier);
                g.spawn(format!("{t}"), move || {
                    // ORDERING: Relaxed: read after the scope has joined.
                    ran.fetch_add(1, Ordering::Relaxed);
                    barrier.wait();
                })?;
            }
            // As if the third thread had been refused: return unopened.
            Err(SpawnError::Refused {
                thread: "2 of 3".into(),
                reason: io::Error::from_raw_os_error(libc::EAGAIN),
            })
        });
        let e = out.unwrap_err().to_string();
        assert!(
            e.starts_with("cannot start thread 2 of 3: ") && e.contains("`ulimit -u`"),
            "{e}"
        );
        // ORDERING: Relaxed: the scope joined every writer.
        assert_eq!(ran.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_member_of_a_group_never_opened_joins_as_an_error() {
        std::thread::scope(|s| {
            let mut g = Group::new(s, 1, DEFAULT_STACK).unwrap();
            let m = g.spawn("0".into(), || 1).unwrap();
            drop(g);
            assert!(m.join().is_err());
        });
    }
}
