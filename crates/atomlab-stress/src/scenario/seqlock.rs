//! `stress seqlock`: one writer stores values 1, 2, 3, … as four words that
//! each encode the value differently; readers (the other threads) take
//! snapshots and check that the four words agree (else a torn read was
//! accepted) and that values never go backwards for one reader.

use std::sync::atomic::{AtomicU64, Ordering};

use atomlab_prims::seqlock::{
    AcquireDataReader, BrokenReaderNoFence, FencedReader, SeqLock, SeqlockReader, SEQLOCK_NAMES,
    WORDS,
};

use super::{common_notes, run_threads, Patience};
use crate::detect::{Detector, Kind};
use crate::outcome::VariantRun;
use crate::plan::{Plan, Scenario, StressError, Threads};
use crate::rng::{jitter, XorShift};

#[inline(always)]
fn encode(v: u64, seed: u64) -> [u64; WORDS] {
    std::array::from_fn(|i| v.rotate_left(16 * i as u32) ^ seed.rotate_left(7 * i as u32))
}

/// The scenario.
pub(crate) struct Seqlock;

impl Scenario for Seqlock {
    fn name(&self) -> &'static str {
        "seqlock"
    }

    fn thread_roles(&self) -> &'static str {
        "a writer and readers"
    }

    fn variants(&self) -> Vec<&'static str> {
        SEQLOCK_NAMES.to_vec()
    }

    fn ops_unit(&self) -> &'static str {
        "accepted reads"
    }

    fn default_ops(&self) -> u64 {
        2_000_000
    }

    fn threads(&self) -> Threads {
        Threads::AtLeast {
            min: 2,
            why: "seqlock needs a writer and at least one reader",
            default_min: 2,
        }
    }

    /// Runs a seqlock reader variant.
    fn run(&self, plan: &Plan, variant: &'static str) -> Result<Option<VariantRun>, StressError> {
        match variant {
            "fenced-reader" => run_seq::<FencedReader>(plan, variant).map(Some),
            "acquire-data-reader" => run_seq::<AcquireDataReader>(plan, variant).map(Some),
            "broken-reader-nofence" => run_seq::<BrokenReaderNoFence>(plan, variant).map(Some),
            _ => Ok(None),
        }
    }
}

fn run_seq<R: SeqlockReader>(
    plan: &Plan,
    variant: &'static str,
) -> Result<VariantRun, StressError> {
    let seed = plan.seed;
    let lock = SeqLock::<R>::new(encode(0, seed));
    let det = Detector::new();
    let done = AtomicU64::new(0);
    let readers = (plan.threads - 1) as u64;
    let (counts, seconds) = run_threads(plan, variant, plan.threads, &det, |t| {
        let mut rng = XorShift::new(seed, t as u64);
        if t == 0 {
            let mut v = 0u64;
            // ORDERING: Relaxed: counts finished readers; nothing is
            // published with it. The writer runs until every reader is done.
            while done.load(Ordering::Relaxed) < readers {
                v += 1;
                lock.write(encode(v, seed));
                jitter(&mut rng, plan.jitter);
            }
            return (v, 0);
        }
        let ops = plan.ops;
        let n = ops / readers + u64::from(((t - 1) as u64) < ops % readers);
        let mut last = 0u64;
        let mut reads = 0u64;
        for _ in 0..n {
            if det.stopping() {
                break;
            }
            let mut p = Patience::new();
            let snap = loop {
                if let Some(s) = lock.try_read() {
                    break s;
                }
                p.wait();
            };
            let v = snap[0] ^ seed;
            if snap != encode(v, seed) {
                det.report(Kind::TornRead, 1, || {
                    format!("reader {t} accepted words {snap:x?}: word 0 says value {v}, the others disagree")
                });
            } else if v < last {
                det.report(Kind::WentBackwards, 1, || {
                    format!("reader {t} accepted value {v} after value {last}")
                });
            } else {
                last = v;
            }
            jitter(&mut rng, plan.jitter);
            reads += 1;
        }
        // ORDERING: Relaxed: see the writer's load.
        done.fetch_add(1, Ordering::Relaxed);
        (0, reads)
    })?;
    let ops: u64 = counts.iter().map(|c| c.1).sum();
    let mut notes = common_notes(plan);
    notes.push(format!(
        "1 writer ({} writes) and {readers} reader(s)",
        counts[0].0
    ));
    Ok(VariantRun::judge(plan, variant, ops, seconds, &det, notes))
}
