//! `stress spsc`: a producer pushes items 1, 2, … N, each with a checksum
//! of its sequence number and the seed, through a 64-slot ring (so slots
//! are reused every 64 items); the consumer checks that item k arrives k-th
//! (out of order: lost, duplicated or stale) and that its checksum matches
//! (corrupt payload).

use std::sync::atomic::{AtomicU64, Ordering};

use atomlab_prims::spsc::{SpscBarriers, SpscRing};
use atomlab_prims::with_spsc;

use super::{common_notes, run_threads, Patience};
use crate::detect::{Detector, Kind};
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::rng::{jitter, XorShift};

/// Slots in the ring.
pub const CAPACITY: usize = 64;

#[inline(always)]
fn checksum(seq: u64, seed: u64) -> u64 {
    (seq ^ seed)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29)
        ^ 0xA5A5_A5A5_A5A5_A5A5
}

/// Runs an SPSC barrier variant.
pub fn run(plan: &Plan, variant: &'static str) -> Option<Outcome> {
    with_spsc!(variant, V => run_ring::<V>(plan, variant))
}

fn run_ring<V: SpscBarriers>(plan: &Plan, variant: &'static str) -> Outcome {
    let ring = SpscRing::<V>::new(CAPACITY);
    let det = Detector::new();
    let (ops, seed) = (plan.ops, plan.seed);
    // Items the producer pushed in all, once it has stopped (MAX until then).
    let produced = AtomicU64::new(u64::MAX);
    let (consumed, seconds) = run_threads(plan, 2, &det, |t| {
        let mut rng = XorShift::new(seed, t as u64);
        if t == 0 {
            let mut pushed = 0;
            for seq in 1..=ops {
                if det.stopping() {
                    break;
                }
                let mut p = Patience::new();
                while !ring.try_push((seq, checksum(seq, seed))) {
                    p.wait();
                }
                pushed = seq;
                jitter(&mut rng, plan.jitter);
            }
            // ORDERING: Relaxed: the consumer only compares it with its own
            // count; the items themselves come through the ring.
            produced.store(pushed, Ordering::Relaxed);
            return 0;
        }
        let mut consumed = 0;
        'items: for expected in 1..=ops {
            let mut p = Patience::new();
            let (seq, sum) = loop {
                if let Some(item) = ring.try_pop() {
                    break item;
                }
                // ORDERING: Relaxed: see the store; once the producer has
                // stopped and every item it pushed has come, we are done.
                if expected > produced.load(Ordering::Relaxed) {
                    break 'items;
                }
                p.wait();
            };
            {
                if seq != expected {
                    det.report(Kind::OutOfOrder, 1, || {
                        format!("expected item {expected}, the consumer got item {seq}")
                    });
                } else if sum != checksum(seq, seed) {
                    det.report(Kind::CorruptPayload, 1, || {
                        format!(
                            "item {seq} arrived with checksum {sum:#x}, expected {:#x}",
                            checksum(seq, seed)
                        )
                    });
                }
                jitter(&mut rng, plan.jitter);
            }
            consumed = expected;
        }
        consumed
    });
    let ops = consumed[1];
    let mut notes = common_notes(plan);
    notes.push(format!(
        "a {CAPACITY}-slot ring, one producer, one consumer"
    ));
    Outcome::judge(plan, variant, ops, seconds, &det, notes)
}
