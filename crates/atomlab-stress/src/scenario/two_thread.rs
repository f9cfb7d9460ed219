//! `stress peterson` and `stress dekker`: two threads take turns through a
//! two-thread lock, each section checked as in `stress mutex` (occupancy,
//! lost updates, buffer corruption).
//!
//! Each thread also does a short random amount of work outside the lock
//! (0 to 255 loop iterations), as real code does between critical sections,
//! with or without `--jitter`: two threads that only take turns keep one
//! flag always raised, so they almost never run the entry protocol at the
//! same moment, which is when store buffering breaks the unfenced variants.

use atomlab_prims::two_thread::*;

use super::mutex::Protected;
use super::{common_notes, run_threads};
use crate::detect::Detector;
use crate::outcome::VariantRun;
use crate::plan::{Plan, Scenario, StressError, Threads};
use crate::rng::{jitter, XorShift};

/// Peterson's two-thread lock.
pub(crate) struct Peterson;

/// Dekker's two-thread lock.
pub(crate) struct Dekker;

/// One algorithm's scenario: its name and its two locks, the fenced
/// (correct) and the unfenced (broken) form; everything else is the same
/// for both algorithms.
trait Pair: Sync {
    /// The scenario's name.
    const NAME: &'static str;
    /// The correct form, with the store→load fence.
    type Fenced: TwoThreadLock;
    /// The broken form, without it.
    type Broken: TwoThreadLock;
}

impl Pair for Peterson {
    const NAME: &'static str = "peterson";
    type Fenced = PetersonFence;
    type Broken = BrokenPetersonNoFence;
}

impl Pair for Dekker {
    const NAME: &'static str = "dekker";
    type Fenced = DekkerFence;
    type Broken = BrokenDekkerNoFence;
}

impl<P: Pair> Scenario for P {
    fn name(&self) -> &'static str {
        P::NAME
    }

    fn variants(&self) -> Vec<&'static str> {
        vec![P::Fenced::NAME, P::Broken::NAME]
    }

    fn ops_unit(&self) -> &'static str {
        "critical sections"
    }

    fn default_ops(&self) -> u64 {
        2_000_000
    }

    fn threads(&self) -> Threads {
        Threads::Exactly(2)
    }

    fn run(&self, plan: &Plan, variant: &'static str) -> Result<Option<VariantRun>, StressError> {
        if variant == P::Fenced::NAME {
            run_pair::<P::Fenced>(plan, variant).map(Some)
        } else if variant == P::Broken::NAME {
            run_pair::<P::Broken>(plan, variant).map(Some)
        } else {
            Ok(None)
        }
    }
}

fn run_pair<L: TwoThreadLock>(
    plan: &Plan,
    variant: &'static str,
) -> Result<VariantRun, StressError> {
    let lock = L::new();
    let data = Protected::new();
    let det = Detector::new();
    let ops = plan.ops;
    let (done, seconds) = run_threads(plan, variant, 2, &det, |me| {
        let mut rng = XorShift::new(plan.seed, me as u64);
        let n = ops / 2 + if me == 0 { ops % 2 } else { 0 };
        let mut done = 0u64;
        for op in 0..n {
            if det.stopping() {
                break;
            }
            lock.lock(me);
            data.section(&det, me, op, &mut rng, plan.jitter);
            lock.unlock(me);
            // Work outside the lock: always (see the module docs).
            jitter(&mut rng, true);
            done += 1;
        }
        done
    })?;
    let done: u64 = done.iter().sum();
    data.finish(&det, done);
    Ok(VariantRun::judge(
        plan,
        variant,
        done,
        seconds,
        &det,
        common_notes(plan),
    ))
}
