//! Thread placement through `sched_getaffinity(2)` / `sched_setaffinity(2)`,
//! a thread's CPU time through `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`
//! (to tell whether threads really ran at the same time), and how
//! atomlab's threads start: a [`Group`] of threads that wait for one
//! another, none of which a refused thread strands (`pthread_create(3)`
//! under `ulimit -u` or `ulimit -v`), and work run on a stack of a known
//! size ([`on_stack`]) rather than the main thread's (`ulimit -s`).
//!
//! The benchmark harness, the stress scenarios and the litmus runner all
//! start and place their threads with these functions; the affinity calls
//! apply to the calling thread only (pid 0), as the man pages describe.

#![warn(unreachable_pub)]

mod group;

pub use group::{Group, Member, SpawnError, DEFAULT_STACK};

use std::io;

/// Runs `work` on a thread with `stack` bytes of stack and returns what it
/// returns (a panic in it goes on in the caller). The main thread's stack
/// is whatever `ulimit -s` (RLIMIT_STACK, `getrlimit(2)`) gave the
/// process, 64 KiB if the user says so; a thread's is the size asked for
/// (`pthread_attr_setstacksize(3)`). When the system refuses the thread
/// (`ulimit -u`), `work` runs on the calling thread instead.
pub fn on_stack<T: Send>(stack: usize, work: impl FnOnce() -> T + Send) -> T {
    on_stack_meanwhile(stack, work, |_| {})
}

/// [`on_stack`], with the calling thread running `meanwhile` while it
/// waits, instead of a thread of its own: a process of two threads rather
/// than three, for work that needs something done beside it now and then
/// (atomlab's progress watcher). `meanwhile` is given `ended`, which waits
/// up to the given time and says whether the work has ended; it should
/// return once `ended` says so (the work's result waits for it). It wakes
/// as soon as the work ends, not at the end of its wait. When the thread
/// is refused and the work runs on the calling thread, `meanwhile` is not
/// run.
///
/// Each thread costs a short command about 0.14 ms on the 2-vCPU KVM guest
/// atomlab is measured on (a `clone(2)`, its stack, its malloc arena and
/// the TLB shootdowns of a process whose threads ran on both CPUs).
pub fn on_stack_meanwhile<T: Send>(
    stack: usize,
    work: impl FnOnce() -> T + Send,
    meanwhile: impl FnOnce(&mut dyn FnMut(std::time::Duration) -> bool),
) -> T {
    use std::sync::atomic::{AtomicBool, Ordering};
    // The work waits in a slot until a thread takes it: a thread that
    // cannot start leaves it there for the calling thread.
    let slot = std::sync::Mutex::new(Some(work));
    let ended = AtomicBool::new(false);
    let caller = std::thread::current();
    let on_thread = std::thread::scope(|s| {
        let thread = std::thread::Builder::new()
            .name("atomlab".into())
            .stack_size(stack)
            .spawn_scoped(s, || {
                // Set and the caller woken even when the work panics, so
                // that the caller goes on to `join` and the panic.
                struct Ended<'a>(&'a AtomicBool, &'a std::thread::Thread);
                impl Drop for Ended<'_> {
                    fn drop(&mut self) {
                        // Release: pairs with the caller's Acquire loads;
                        // it only decides when the caller stops waiting
                        // (the result itself comes through `join`).
                        self.0.store(true, Ordering::Release);
                        self.1.unpark();
                    }
                }
                let _ended = Ended(&ended, &caller);
                take_and_run(&slot)
            });
        thread.ok().map(|t| {
            meanwhile(&mut |wait| {
                // Acquire: pairs with the work thread's Release store above.
                if !ended.load(Ordering::Acquire) {
                    // A token left by an `unpark` before this `park`
                    // makes it return at once; a spurious wake-up only
                    // shortens the wait.
                    std::thread::park_timeout(wait);
                }
                ended.load(Ordering::Acquire)
            });
            t.join()
        })
    });
    match on_thread {
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        Some(Ok(Some(out))) => out,
        Some(Ok(None)) | None => {
            take_and_run(&slot).expect("a thread that did not take the work left it in its slot")
        }
    }
}

/// Runs the work in `slot`, if it is still there. Never inlined: the
/// work's frames (which may be large) then stay off the frame of
/// [`on_stack`], which is on the small stack.
#[inline(never)]
fn take_and_run<T>(slot: &std::sync::Mutex<Option<impl FnOnce() -> T>>) -> Option<T> {
    let work = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    work.map(|w| w())
}

/// The CPUs this process may run on, in ascending order. If the kernel
/// will not say, every CPU `available_parallelism` counts.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is a plain bitmask; all-zero is a valid value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the size is the buffer's.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        return (0..n).collect();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `set` was filled by the kernel; `c` < CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Lets the calling thread run only on `cpus`. A CPU number past the
/// kernel's mask size is EINVAL; otherwise errors carry the OS's reason.
pub fn set_current_thread_cpus(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: as above.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `c` < CPU_SETSIZE, checked above.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; the size is the buffer's.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    set_current_thread_cpus(&[cpu])
}

/// CPU time consumed by the calling thread, in nanoseconds
/// (`CLOCK_THREAD_CPUTIME_ID`); 0 if the clock is unavailable.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pin_to_each_allowed_cpu_then_restore() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        std::thread::spawn(move || {
            for &c in &cpus {
                pin_current_thread(c).unwrap();
                assert_eq!(allowed_cpus(), vec![c]);
            }
            set_current_thread_cpus(&cpus).unwrap();
            assert_eq!(allowed_cpus(), cpus);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn work_on_a_stack_of_its_own_runs_there_and_returns() {
        let deep = on_stack(64 << 20, || {
            // 32 MiB of stack: far more than the test's thread has.
            let big = [7u8; 32 << 20];
            std::hint::black_box(&big)[1 << 20]
        });
        assert_eq!(deep, 7);
    }

    #[test]
    fn the_caller_runs_meanwhile_and_is_woken_when_the_work_ends() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let mut waits = 0;
        let started = std::time::Instant::now();
        let out = on_stack_meanwhile(
            1 << 20,
            move || {
                // The work ends only once the caller has waited once.
                rx.recv().unwrap();
                41 + 1
            },
            |ended| {
                tx.send(()).unwrap();
                // Waits of an hour: the loop ends because the work's end
                // wakes it, not because a wait ran out.
                while !ended(std::time::Duration::from_secs(3600)) {
                    waits += 1;
                }
            },
        );
        assert_eq!(out, 42);
        assert!(waits < 1000, "{waits} spurious wake-ups");
        assert!(started.elapsed() < std::time::Duration::from_secs(600));
    }

    #[test]
    fn a_panic_in_the_work_reaches_the_caller_after_meanwhile() {
        let caught = std::panic::catch_unwind(|| {
            on_stack_meanwhile(
                1 << 20,
                || -> u8 { panic!("the work's panic") },
                |ended| while !ended(std::time::Duration::from_secs(3600)) {},
            )
        });
        let payload = caught.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"the work's panic"));
    }

    #[test]
    fn a_cpu_past_the_mask_is_refused() {
        let err = pin_current_thread(1 << 20).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
    }

    #[test]
    fn thread_cpu_time_grows_with_work() {
        let t0 = thread_cpu_ns();
        let wall = std::time::Instant::now();
        // Spin for 2 ms of CPU time, bounded by 5 s of wall time in case
        // the clock were stuck.
        while thread_cpu_ns() < t0 + 2_000_000 && wall.elapsed().as_secs() < 5 {
            std::hint::black_box(0u64);
        }
        assert!(t0 > 0, "CLOCK_THREAD_CPUTIME_ID gave nothing");
        assert!(thread_cpu_ns() >= t0 + 2_000_000);
    }
}
