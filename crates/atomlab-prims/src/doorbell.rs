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
//!   word = s (odd: asleep)             tail = t + 1      (the queue's publish)
//!   fence(SeqCst)                      fence(SeqCst)
//!   r1 = queue has an item?            r2 = word
//!   if !r1: futex_wait(word, s)        if r2 is odd: CAS word r2 -> r2+1; futex_wake
//!   word = s + 1 (even: awake)
//! ```
//!
//! The outcome that loses a wake-up is `r1 = empty` with `r2` older than
//! `s`: the consumer sleeps on an item the producer did not ring for. With a
//! sequentially consistent fence between each side's store and load,
//! C11/C++20 forbids it (the SB litmus test with `seq_cst` fences;
//! [atomics.fences] and RC11, Lahav et al., PLDI 2017): one of the two loads
//! sees the other side's store. Without the fences, every architecture
//! atomlab targets allows it (x86-TSO's store buffer included), which is why
//! [`Doorbell::broken_without_fences`] exists: `tests/loom_doorbell.rs`
//! shows loom finding the lost wake-up in it and none in [`Doorbell::new`],
//! and `atomlab stress spsc` shows the hardware losing them.
//!
//! The word counts the consumer's sleeps (an epoch: `2k+1` while sleep `k`
//! is announced, `2k+2` after it), rather than a 0/1 flag, so that the
//! value a producer read says which sleep it saw: a checker can then tell a
//! lost wake-up (the producer read a value older than the sleep that missed
//! its item) from a producer that was merely late. The producer ends a
//! sleep with a compare-exchange, so a late ring never moves the word back
//! over a newer sleep. The consumer alone starts sleeps.
//!
//! `futex_wait(word, s)` sleeps only if the word is still `s` when the
//! kernel looks (atomically with its wait queue), so a producer that ends
//! the sleep between the consumer's check and its wait makes the wait
//! return at once (futex(2)). Spurious returns are allowed: the consumer
//! always goes back to its queue.
//!
//! The cost: one full fence per push on the producer side (an `mfence` or
//! locked instruction on x86-64, `dmb ish` on Arm) and one per sleep on the
//! consumer's, plus the compare-exchange and system calls when the consumer
//! was asleep; `bench spsc --wait notify` measures them, with notifications
//! per item.

use crate::sync::{fence, AtomicU32, Ordering};

/// What a producer's [`Doorbell::ring_seen`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ring {
    /// The word it read: odd while a sleep was announced.
    pub seen: u32,
    /// Whether it ended that sleep and made the wake call.
    pub woke: bool,
}

/// How a bounded sleep ([`Doorbell::sleep_unless_for`]) went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sleep {
    /// The word this sleep announced (odd).
    pub epoch: u32,
    /// Whether the whole bound passed without a wake.
    pub timed_out: bool,
}

/// Whether `seen` was read before the sleep `epoch` was announced (an
/// older word: the sleep's store was not visible to that read).
pub fn before(seen: u32, epoch: u32) -> bool {
    (epoch.wrapping_sub(seen) as i32) > 0
}

/// The consumer's sleep word and the wake-up system call.
#[derive(Debug)]
pub struct Doorbell {
    /// The futex word: odd from the moment the consumer announces a sleep
    /// until it or the producer ends it; counts up by one at each change.
    word: AtomicU32,
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
            word: AtomicU32::new(0),
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

    /// Consumer: announces a sleep and checks `ready` once more. Returns
    /// the sleep's epoch, or `None` (sleep over) when `ready` said yes.
    #[inline]
    fn announce(&self, ready: impl FnOnce() -> bool) -> Option<u32> {
        // ORDERING: Relaxed: only the consumer starts sleeps, so it reads
        // its own last write (even: awake) or the producer's end of its
        // last sleep (also even).
        let now = self.word.load(Ordering::Relaxed);
        let epoch = now.wrapping_add(if now & 1 == 0 { 1 } else { 2 });
        // ORDERING: Relaxed store, kept before the check below by the fence.
        self.word.store(epoch, Ordering::Relaxed);
        if self.fences {
            // ORDERING: SeqCst fence: pairs with the producer's SeqCst fence
            // in `ring`/`ring_seen` (the SB handshake in the module docs):
            // either our check sees its item or its load sees our epoch.
            fence(Ordering::SeqCst);
        }
        if ready() {
            self.end(epoch);
            return None;
        }
        Some(epoch)
    }

    /// Consumer: ends sleep `epoch` unless the producer already did.
    #[inline]
    fn end(&self, epoch: u32) {
        // ORDERING: Relaxed: the word is a hint to the producer; a stale odd
        // value costs it one needless compare-exchange. Both ends write the
        // same value, so a lost race changes nothing.
        let _ = self.word.compare_exchange(
            epoch,
            epoch.wrapping_add(1),
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// Consumer only, after a pop found the queue empty: announces that it
    /// is going to sleep, checks `ready` once more (an item, or a reason to
    /// stop), and sleeps until the producer rings unless `ready` said yes.
    /// Returns whether it slept (made the wait system call).
    #[inline]
    pub fn sleep_unless(&self, ready: impl FnOnce() -> bool) -> bool {
        let Some(epoch) = self.announce(ready) else {
            return false;
        };
        self.wait_while(epoch);
        self.end(epoch);
        true
    }

    /// Producer only, after publishing an item (or a stop flag): wakes the
    /// consumer if it said it is sleeping. Returns whether it made the wake
    /// system call (a notification).
    #[inline]
    pub fn ring(&self) -> bool {
        self.ring_seen().woke
    }

    /// [`Doorbell::ring`], also saying which word it read (for checkers).
    #[inline]
    pub fn ring_seen(&self) -> Ring {
        if self.fences {
            // ORDERING: SeqCst fence: pairs with the consumer's in
            // `announce`; orders our publish before the load below.
            fence(Ordering::SeqCst);
        }
        // ORDERING: Relaxed load after the fence above (that is what makes
        // it see the consumer's epoch when the consumer missed our item).
        let seen = self.word.load(Ordering::Relaxed);
        if seen & 1 == 0 {
            return Ring { seen, woke: false };
        }
        // ORDERING: Relaxed: the futex word's value is checked by the kernel
        // under its own lock; ending the sleep before the wake makes a
        // consumer that has not reached its wait yet return from it at once.
        // A compare-exchange, so a newer sleep is never overwritten.
        let ended = self
            .word
            .compare_exchange(
                seen,
                seen.wrapping_add(1),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok();
        if ended {
            self.wake();
        }
        Ring { seen, woke: ended }
    }

    /// Consumer only: [`Doorbell::sleep_unless`] with a bound on the sleep,
    /// for checkers that must not hang on a lost wake-up. `None` if `ready`
    /// said not to sleep.
    #[cfg(all(target_os = "linux", not(loom)))]
    pub fn sleep_unless_for(
        &self,
        ready: impl FnOnce() -> bool,
        timeout: std::time::Duration,
    ) -> Option<Sleep> {
        let epoch = self.announce(ready)?;
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: FUTEX_WAIT_PRIVATE reads the aligned u32 behind the pointer,
        // which lives as long as `self`; the relative timeout lives across
        // the call; the kernel returns at once if the word is not `epoch`.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                epoch,
                &ts as *const libc::timespec,
            )
        };
        let timed_out =
            rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ETIMEDOUT);
        self.end(epoch);
        Some(Sleep { epoch, timed_out })
    }

    #[cfg(all(target_os = "linux", not(loom)))]
    fn wait_while(&self, epoch: u32) {
        // SAFETY: as in `sleep_unless_for`, with no timeout (null).
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                epoch,
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
                self.word.as_ptr(),
                libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                1i32,
            );
        }
    }

    /// Without a futex: yield until the sleep is ended.
    #[cfg(all(not(target_os = "linux"), not(loom)))]
    fn wait_while(&self, epoch: u32) {
        // ORDERING: Relaxed: the caller re-checks its queue with its own
        // orderings after this returns.
        while self.word.load(Ordering::Relaxed) == epoch {
            std::thread::yield_now();
        }
    }

    #[cfg(all(not(target_os = "linux"), not(loom)))]
    fn wake(&self) {}

    #[cfg(loom)]
    fn wait_while(&self, epoch: u32) {
        // ORDERING: Relaxed, as the kernel's check of the futex word; the
        // Notify's permit covers a wake between this load and the wait.
        if self.word.load(Ordering::Relaxed) == epoch {
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
        let (mut rings, mut pause_rings) = (0, 0);
        for i in 1..=n {
            // ORDERING: Release publishes the item.
            published.store(i, Ordering::Release);
            rings += u64::from(d.ring());
            if i % 100 == 0 && i < n {
                // A pause until the consumer, having seen every item, is
                // asleep, and a ring wakes it (a spurious wake-up, which
                // the consumer must tolerate). Waiting for that instead of
                // a fixed pause: under qemu on a loaded machine the
                // consumer was not scheduled within 200 µs and never
                // slept. Bounded, so a consumer that never sleeps fails
                // the assertion below instead of hanging the test.
                let t0 = std::time::Instant::now();
                while t0.elapsed() < std::time::Duration::from_secs(5) {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    if d.ring() {
                        pause_rings += 1;
                        break;
                    }
                }
            }
        }
        let sleeps = consumer.join().unwrap();
        assert!(rings <= n);
        assert!(pause_rings < n / 100);
        // Each sleep that returned was ended by a ring or was spurious;
        // the pauses above make the consumer sleep at least once.
        assert!(sleeps >= 1, "the consumer never slept");
    }
}
