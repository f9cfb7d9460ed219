//! A doorbell for a queue whose single consumer sleeps when the queue is
//! empty, and whose producer makes a system call only when the consumer said
//! it is sleeping: the notification-avoidance flag of the seL4 Device Driver
//! Framework's queues (sDDF, the 004 case), and the same handshake as Linux's
//! `prepare_to_wait`/`wake_up` pair (`set_current_state`'s full barrier
//! against the waker's barrier before `waitqueue_active`).
//!
//! The protocol is a store-buffering (Dekker) handshake:
//!
//! ```text
//! consumer (queue looked empty)      producer (after publishing an item)
//!   sleeping = 1                       tail = t + 1      (the queue's publish)
//!   fence(SeqCst)                      fence(SeqCst)
//!   r1 = queue has an item?            r2 = sleeping
//!   if !r1: futex_wait(sleeping, 1)    if r2 == 1: sleeping = 0; futex_wake
//! ```
//!
//! The outcome that loses a wake-up is `r1 = empty, r2 = 0`: the consumer
//! sleeps on an item the producer did not ring for. With a sequentially
//! consistent fence between each side's store and load, C11/C++20 forbids it
//! (the SB litmus test with `seq_cst` fences; [atomics.fences] and RC11,
//! Lahav et al., PLDI 2017): one of the two loads sees the other side's
//! store. Without the fences, every architecture atomlab targets allows it
//! (x86-TSO's store buffer included), which is why [`Doorbell::broken_without_fences`]
//! exists: `tests/loom_doorbell.rs` shows loom finding the lost wake-up in
//! it and none in [`Doorbell::new`].
//!
//! `futex_wait(sleeping, 1)` sleeps only if `sleeping` is still 1 when the
//! kernel looks (atomically with its wait queue), so a producer that clears
//! the flag between the consumer's check and its sleep makes the wait
//! return at once (futex(2)). Spurious returns are allowed: the consumer
//! always goes back to its queue.
//!
//! The cost: one full fence per push on the producer side (an `mfence` or
//! locked instruction on x86-64, `dmb ish` on Arm) and one per sleep on the
//! consumer's, plus the system calls when the consumer was asleep; `bench
//! spsc --wait notify` measures both, with notifications per item.

use crate::sync::{fence, AtomicU32, Ordering};

/// The consumer's "I am going to sleep" flag and the wake-up system call.
#[derive(Debug)]
pub struct Doorbell {
    /// 1 from the moment the consumer decides to sleep until it or the
    /// producer clears it; the futex word.
    sleeping: AtomicU32,
    /// Whether the two full fences are there (false only in the broken variant).
    fences: bool,
    /// loom has no futex: a Notify, whose stored permit makes a wake before
    /// the wait return at once, as the futex's value check does.
    #[cfg(loom)]
    notify: loom::sync::Notify,
}

impl Default for Doorbell {
    fn default() -> Self {
        Self::new()
    }
}

impl Doorbell {
    /// The correct doorbell.
    pub fn new() -> Self {
        Doorbell {
            sleeping: AtomicU32::new(0),
            fences: true,
            #[cfg(loom)]
            notify: loom::sync::Notify::new(),
        }
    }

    /// BROKEN on purpose: the doorbell without its two fences, which loses
    /// wake-ups (the SB outcome). For tests that show the checkers catch it.
    pub fn broken_without_fences() -> Self {
        Doorbell {
            fences: false,
            ..Self::new()
        }
    }

    /// Consumer only, after a pop found the queue empty: announces that it
    /// is going to sleep, checks `ready` once more (an item, or a reason to
    /// stop), and sleeps until the producer rings unless `ready` said yes.
    /// Returns whether it slept (made the wait system call).
    #[inline]
    pub fn sleep_unless(&self, ready: impl FnOnce() -> bool) -> bool {
        // ORDERING: Relaxed store, kept before the check below by the fence.
        self.sleeping.store(1, Ordering::Relaxed);
        if self.fences {
            // ORDERING: SeqCst fence: pairs with the producer's SeqCst fence
            // in `ring` (the SB handshake in the module docs): either our
            // check sees its item or its load sees our flag.
            fence(Ordering::SeqCst);
        }
        if ready() {
            // ORDERING: Relaxed: only a hint to the producer that it need
            // not ring; a stale 1 costs it one needless wake.
            self.sleeping.store(0, Ordering::Relaxed);
            return false;
        }
        self.wait_while_flag_set();
        // ORDERING: Relaxed: as above (the producer may have cleared it).
        self.sleeping.store(0, Ordering::Relaxed);
        true
    }

    /// Producer only, after publishing an item (or a stop flag): wakes the
    /// consumer if it said it is sleeping. Returns whether it made the wake
    /// system call (a notification).
    #[inline]
    pub fn ring(&self) -> bool {
        if self.fences {
            // ORDERING: SeqCst fence: pairs with the consumer's in
            // `sleep_unless`; orders our publish before the load below.
            fence(Ordering::SeqCst);
        }
        // ORDERING: Relaxed load after the fence above (that is what makes
        // it see the consumer's flag when the consumer missed our item).
        if self.sleeping.load(Ordering::Relaxed) == 0 {
            return false;
        }
        // ORDERING: Relaxed: the futex word's value is checked by the kernel
        // under its own lock; clearing it before the wake makes a consumer
        // that has not reached its wait yet return from it at once.
        self.sleeping.store(0, Ordering::Relaxed);
        self.wake();
        true
    }

    /// Consumer only: [`Doorbell::sleep_unless`] with a bound on the sleep,
    /// for checkers that must not hang on a lost wake-up: `Some(true)` if
    /// it slept the whole `timeout` without being rung, `Some(false)` if it
    /// slept and returned early, `None` if `ready` said not to sleep.
    #[cfg(all(target_os = "linux", not(loom)))]
    pub fn sleep_unless_for(
        &self,
        ready: impl FnOnce() -> bool,
        timeout: std::time::Duration,
    ) -> Option<bool> {
        // ORDERING: as in `sleep_unless`.
        self.sleeping.store(1, Ordering::Relaxed);
        if self.fences {
            // ORDERING: as in `sleep_unless`.
            fence(Ordering::SeqCst);
        }
        if ready() {
            // ORDERING: as in `sleep_unless`.
            self.sleeping.store(0, Ordering::Relaxed);
            return None;
        }
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: as in `wait_while_flag_set`, with a relative timeout that
        // lives across the call.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.sleeping.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                1u32,
                &ts as *const libc::timespec,
            )
        };
        let timed_out =
            rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ETIMEDOUT);
        // ORDERING: as in `sleep_unless`.
        self.sleeping.store(0, Ordering::Relaxed);
        Some(timed_out)
    }

    #[cfg(all(target_os = "linux", not(loom)))]
    fn wait_while_flag_set(&self) {
        // SAFETY: FUTEX_WAIT_PRIVATE reads the aligned u32 behind the pointer,
        // which lives as long as `self`; a null timeout waits indefinitely,
        // and the kernel returns at once if the word is no longer 1.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.sleeping.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                1u32,
                std::ptr::null::<libc::timespec>(),
            );
        }
    }

    #[cfg(all(target_os = "linux", not(loom)))]
    fn wake(&self) {
        // SAFETY: FUTEX_WAKE_PRIVATE only uses the address as a key.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.sleeping.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1i32,
            );
        }
    }

    /// Without a futex: yield until the flag is cleared.
    #[cfg(all(not(target_os = "linux"), not(loom)))]
    fn wait_while_flag_set(&self) {
        // ORDERING: Relaxed: the caller re-checks its queue with its own
        // orderings after this returns.
        while self.sleeping.load(Ordering::Relaxed) == 1 {
            std::thread::yield_now();
        }
    }

    #[cfg(all(not(target_os = "linux"), not(loom)))]
    fn wake(&self) {}

    #[cfg(loom)]
    fn wait_while_flag_set(&self) {
        // ORDERING: Relaxed, as the kernel's check of the futex word; the
        // Notify's permit covers a wake between this load and the wait.
        if self.sleeping.load(Ordering::Relaxed) == 1 {
            self.notify.wait();
        }
    }

    #[cfg(loom)]
    fn wake(&self) {
        self.notify.notify();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    #[test]
    fn ring_without_a_sleeper_makes_no_call() {
        let d = Doorbell::new();
        assert!(!d.ring());
        assert!(!d.sleep_unless(|| true), "ready: no sleep");
        assert!(!d.ring(), "the flag was cleared");
    }

    #[test]
    fn a_sleeping_consumer_is_woken_for_every_item() {
        // A counter as the queue: the producer publishes n items one at a
        // time; the consumer sleeps whenever it has seen them all. A lost
        // wake-up hangs this test (the harness's timeout reports it).
        let d = Arc::new(Doorbell::new());
        let published = Arc::new(AtomicU64::new(0));
        let n = 2000;
        let consumer = {
            let (d, published) = (d.clone(), published.clone());
            std::thread::spawn(move || {
                let (mut seen, mut sleeps) = (0, 0);
                while seen < n {
                    // ORDERING: Acquire pairs with the producer's Release.
                    let p = published.load(Ordering::Acquire);
                    if p > seen {
                        seen = p;
                        continue;
                    }
                    // ORDERING: as above.
                    if d.sleep_unless(|| published.load(Ordering::Acquire) > seen) {
                        sleeps += 1;
                    }
                }
                sleeps
            })
        };
        let mut rings = 0;
        for i in 1..=n {
            // ORDERING: Release publishes the item.
            published.store(i, Ordering::Release);
            rings += u64::from(d.ring());
            if i % 100 == 0 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        }
        let sleeps = consumer.join().unwrap();
        assert!(rings <= n);
        // Each sleep that returned was ended by a ring or was spurious;
        // the pauses above make the consumer sleep at least once.
        assert!(sleeps >= 1, "the consumer never slept");
    }
}
