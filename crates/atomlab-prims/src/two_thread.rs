//! Two-thread mutual exclusion from loads and stores alone: Peterson's
//! algorithm (G. L. Peterson, "Myths about the mutual exclusion problem",
//! Information Processing Letters 12(3), 1981) and Dekker's (as published by
//! E. W. Dijkstra, "Cooperating sequential processes", EWD123, 1965).
//!
//! Both rest on the store→load order: "I raise my flag, *then* I look at
//! yours". Store buffering (which x86-TSO allows) lets each thread's load run
//! ahead of its own store, so both see the other's flag down and both enter.
//! The correct variants put a sequentially consistent fence (`mfence`,
//! `dmb ish`) between the two; the `broken-…-nofence` ones leave it out.
//! Peterson's correct form also takes `turn` with an atomic swap (A.
//! Williams' C++11 form): with plain stores of `flag` and `turn`, even an SC
//! fence does not make the algorithm correct in the C11 model, which orders
//! two plain stores to `turn` with nothing that the fences see.
//!
//! Thread ids are 0 and 1; a lock must only be used by those two.

use crate::sync::{fence, spin_hint, yield_now, AtomicBool, AtomicU32, Ordering};

/// A lock for exactly two threads, identified as 0 and 1.
pub trait TwoThreadLock: Send + Sync {
    /// The name used on the command line and in records.
    const NAME: &'static str;
    /// Whether the variant is meant to be correct.
    const CORRECT: bool;
    /// An unlocked lock.
    fn new() -> Self;
    /// Blocks until thread `me` (0 or 1) holds the lock.
    fn lock(&self, me: usize);
    /// Releases the lock held by `me`.
    fn unlock(&self, me: usize);
}

/// Waits politely: spins a while, then yields, so that two spinners on one
/// CPU (or threads above the CPU count) still make progress.
struct Wait(u32);

impl Wait {
    #[inline(always)]
    fn snooze(&mut self) {
        if cfg!(loom) || self.0 >= 1024 {
            yield_now();
        } else {
            self.0 += 1;
            spin_hint();
        }
    }
}

/// Flags and turn shared by both algorithms.
#[derive(Debug)]
struct State {
    flag: [AtomicBool; 2],
    turn: AtomicU32,
}

impl State {
    fn new() -> Self {
        State {
            flag: [AtomicBool::new(false), AtomicBool::new(false)],
            turn: AtomicU32::new(0),
        }
    }
}

/// Peterson's lock: with `FENCED`, the correct form (an atomic swap of
/// `turn`, then the store→load fence); without, the broken one (plain
/// stores of `flag` and `turn`, then the loads).
#[derive(Debug)]
pub struct Peterson<const FENCED: bool>(State);

/// Peterson's lock with the store→load fence.
pub type PetersonFence = Peterson<true>;

/// Peterson's lock without the fence: plain stores, then the loads.
pub type BrokenPetersonNoFence = Peterson<false>;

impl<const FENCED: bool> TwoThreadLock for Peterson<FENCED> {
    const NAME: &'static str = if FENCED {
        "peterson-fence"
    } else {
        "broken-peterson-nofence"
    };
    const CORRECT: bool = FENCED;

    fn new() -> Self {
        Peterson(State::new())
    }

    fn lock(&self, me: usize) {
        let other = 1 - me;
        // ORDERING: Relaxed: when FENCED, ordered before our loads by the
        // fence below, and published to the other locker by the AcqRel swap
        // of `turn`. Without the fence (BROKEN on purpose) nothing orders it
        // before the loads: with store buffering (x86-TSO, Arm, RISC-V) both
        // threads' loads below can run before either store is visible: both
        // see the other's flag down and both enter.
        self.0.flag[me].store(true, Ordering::Relaxed);
        if FENCED {
            // ORDERING: an RMW, so two lockers' turns are ordered: the later
            // one reads the earlier's (Acquire) and so sees its raised flag
            // (Release) and waits (A. Williams' C++11 form of Peterson's
            // lock).
            self.0.turn.swap(other as u32, Ordering::AcqRel);
            // ORDERING: the textbook store→load fence (`mfence` / `dmb ish`):
            // our flag is visible before we read theirs. In C11 terms the
            // AcqRel swap above already carries the proof (and `xchg` is a
            // full barrier on x86); the fence keeps this the fenced form of
            // the algorithm, which `broken-peterson-nofence` differs from.
            fence(Ordering::SeqCst);
        } else {
            // ORDERING: BROKEN on purpose: a plain store of `turn`, and no
            // store→load barrier after it (see above).
            self.0.turn.store(other as u32, Ordering::Release);
        }
        let mut wait = Wait(0);
        // ORDERING: Acquire on both: entering because their flag is down pairs
        // with their unlock's Release store; entering because `turn` is ours
        // pairs with their swap (which follows their previous unlock).
        while self.0.flag[other].load(Ordering::Acquire)
            && self.0.turn.load(Ordering::Acquire) == other as u32
        {
            wait.snooze();
        }
    }

    fn unlock(&self, me: usize) {
        // ORDERING: Release publishes our critical section to the other's
        // Acquire load of our flag.
        self.0.flag[me].store(false, Ordering::Release);
    }
}

/// Dekker's lock: with `FENCED`, the store→load fence after every raise
/// of the flag; without, none.
#[derive(Debug)]
pub struct Dekker<const FENCED: bool>(State);

/// Dekker's lock with the store→load fence after every raise of the flag.
pub type DekkerFence = Dekker<true>;

/// Dekker's lock without the fence.
pub type BrokenDekkerNoFence = Dekker<false>;

impl<const FENCED: bool> TwoThreadLock for Dekker<FENCED> {
    const NAME: &'static str = if FENCED {
        "dekker-fence"
    } else {
        "broken-dekker-nofence"
    };
    const CORRECT: bool = FENCED;

    fn new() -> Self {
        Dekker(State::new())
    }

    /// Dekker's entry protocol; `FENCED` chooses the SeqCst fence after
    /// each raise of our flag.
    #[inline(always)]
    fn lock(&self, me: usize) {
        let s = &self.0;
        let other = 1 - me;
        // ORDERING: Relaxed: ordered before the load of their flag by the SeqCst
        // fence (FENCED); without it (BROKEN on purpose) store buffering lets
        // both threads read the other's flag down and both enter.
        s.flag[me].store(true, Ordering::Relaxed);
        if FENCED {
            // ORDERING: the store→load fence (SB with SC fences is forbidden in
            // C11 and on hardware): at least one of us sees the other's flag.
            fence(Ordering::SeqCst);
        }
        let mut wait = Wait(0);
        // ORDERING: Relaxed: the Acquire fence after the loop orders the critical
        // section after whatever flag store we read (their unlock's Release, or a
        // lowered flag after their SeqCst fence).
        while s.flag[other].load(Ordering::Relaxed) {
            // ORDERING: Relaxed: `turn` only decides who backs off (liveness).
            if s.turn.load(Ordering::Relaxed) != me as u32 {
                // ORDERING: Relaxed: lowering our flag publishes nothing.
                s.flag[me].store(false, Ordering::Relaxed);
                // ORDERING: Relaxed, as above (liveness only).
                while s.turn.load(Ordering::Relaxed) != me as u32 {
                    wait.snooze();
                }
                // ORDERING: as the first raise of the flag.
                s.flag[me].store(true, Ordering::Relaxed);
                if FENCED {
                    // ORDERING: as the first fence.
                    fence(Ordering::SeqCst);
                }
            } else {
                wait.snooze();
            }
        }
        // ORDERING: Acquire pairs with the other's unlock (Release store of its
        // flag) or its SeqCst fence before lowering its flag: its critical
        // section happens before ours.
        fence(Ordering::Acquire);
    }

    #[inline(always)]
    fn unlock(&self, me: usize) {
        let s = &self.0;
        // ORDERING: Release; only liveness depends on `turn`, but Release keeps
        // the critical section before the hand-over.
        s.turn.store((1 - me) as u32, Ordering::Release);
        // ORDERING: Release publishes our critical section to the other's
        // Acquire fence after it reads our flag down.
        s.flag[me].store(false, Ordering::Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn alternate<L: TwoThreadLock>() {
        let l = L::new();
        for i in 0..10 {
            l.lock(i % 2);
            l.unlock(i % 2);
        }
    }

    #[test]
    fn each_variant_has_its_own_name_and_correctness() {
        let names = [
            (PetersonFence::NAME, PetersonFence::CORRECT),
            (BrokenPetersonNoFence::NAME, BrokenPetersonNoFence::CORRECT),
            (DekkerFence::NAME, DekkerFence::CORRECT),
            (BrokenDekkerNoFence::NAME, BrokenDekkerNoFence::CORRECT),
        ];
        assert_eq!(
            names,
            [
                ("peterson-fence", true),
                ("broken-peterson-nofence", false),
                ("dekker-fence", true),
                ("broken-dekker-nofence", false),
            ]
        );
    }

    #[test]
    fn uncontended_lock_unlock() {
        alternate::<PetersonFence>();
        alternate::<BrokenPetersonNoFence>();
        alternate::<DekkerFence>();
        alternate::<BrokenDekkerNoFence>();
    }
}
