//! `stress spsc`: a producer pushes items 1, 2, … N, each with a checksum
//! of its sequence number and the seed, through a 64-slot ring (so slots
//! are reused every 64 items); the consumer checks that item k arrives k-th
//! (out of order: lost, duplicated or stale) and that its checksum matches
//! (corrupt payload).

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
    let (_, seconds) = run_threads(plan, 2, &det, |t| {
        let mut rng = XorShift::new(seed, t as u64);
        if t == 0 {
            for seq in 1..=ops {
                let mut p = Patience::new();
                while !ring.try_push((seq, checksum(seq, seed))) {
                    p.wait();
                }
                jitter(&mut rng, plan.jitter);
            }
        } else {
            for expected in 1..=ops {
                let mut p = Patience::new();
                let (seq, sum) = loop {
                    if let Some(item) = ring.try_pop() {
                        break item;
                    }
                    p.wait();
                };
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
        }
    });
    let mut notes = common_notes(plan);
    notes.push(format!(
        "a {CAPACITY}-slot ring, one producer, one consumer"
    ));
    Outcome::judge(plan, variant, ops, seconds, &det, notes)
}
