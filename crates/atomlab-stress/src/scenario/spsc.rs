//! `stress spsc`: a producer pushes items 1, 2, … N, each with a checksum
//! of its sequence number and the seed, through a 64-slot ring (so slots
//! are reused every 64 items); the consumer checks that item k arrives k-th
//! (out of order: lost, duplicated or stale) and that its checksum matches
//! (corrupt payload).
//!
//! The `…+notify` variants put the consumer to sleep on
//! [`atomlab_prims::doorbell::Doorbell`] whenever the ring is empty (the
//! event-driven design of 004's components) and check for lost wake-ups:
//! after each push the producer rings, then records the item and the
//! doorbell word its ring decision read. A consumer whose bounded sleep
//! missed the item and ran out, while the producer's decision for that item
//! read a word older than that sleep, was not woken for a published item:
//! the store-buffering outcome the doorbell's two SeqCst fences exist to
//! forbid (a producer that was merely late reads the sleep or a later word). `broken-doorbell-no-fence` drops them;
//! x86-TSO's store buffer (and Arm's and RISC-V's weaker orders) allow the
//! outcome, so real hardware shows it, not only loom.

use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use atomlab_prims::doorbell::{before, Doorbell};
use atomlab_prims::spsc::{C11AcqRel, SpscBarriers, SpscRing, SPSC_NAMES};
use atomlab_prims::{with_spsc, CachePadded};

use super::{common_notes, run_threads, Patience};
use crate::detect::{Detector, Kind};
use crate::outcome::Outcome;
use crate::plan::{is_broken, Plan, Scenario, Threads};
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

/// The ring (c11-acq-rel) with a sleeping consumer and its doorbell.
pub const NOTIFY: &str = "c11-acq-rel+notify";
/// The same with the doorbell's fences removed.
pub const BROKEN_NOTIFY: &str = "broken-doorbell-no-fence";

/// How long a notify-variant consumer sleeps before it checks whether it
/// was forgotten.
const SLEEP_BOUND: Duration = Duration::from_millis(2);

/// Items of a notify variant when `--ops` is not given: each is a sleep
/// and a wake-up (two system calls, ~20-40 µs here), not a few ns.
const NOTIFY_DEFAULT_OPS: u64 = 100_000;

/// The scenario.
pub struct Spsc;

impl Scenario for Spsc {
    fn name(&self) -> &'static str {
        "spsc"
    }

    /// The rings' barrier variants, with the sleeping consumer's doorbell
    /// after the correct ones and its fence-less copy at the end.
    fn variants(&self) -> Vec<&'static str> {
        let mut v = SPSC_NAMES.to_vec();
        let at = v.iter().position(|n| is_broken(n)).unwrap_or(v.len());
        v.insert(at, NOTIFY);
        v.push(BROKEN_NOTIFY);
        v
    }

    fn ops_unit(&self) -> &'static str {
        "items"
    }

    fn default_ops(&self) -> u64 {
        10_000_000
    }

    fn threads(&self) -> Threads {
        Threads::Exactly(2)
    }

    /// Runs an SPSC barrier variant.
    fn run(&self, plan: &Plan, variant: &'static str) -> Option<Outcome> {
        let notify_plan = || {
            let mut p = plan.clone();
            if !p.ops_given {
                p.ops = NOTIFY_DEFAULT_OPS;
                p.ops_given = true;
            }
            // Item numbers share a word with the doorbell's 32-bit epoch.
            p.ops = p.ops.min(u64::from(u32::MAX));
            p
        };
        match variant {
            NOTIFY => Some(run_notify(&notify_plan(), variant, Doorbell::new())),
            BROKEN_NOTIFY => Some(run_notify(
                &notify_plan(),
                variant,
                Doorbell::broken_without_fences(),
            )),
            _ => with_spsc!(variant, V => run_ring::<V>(plan, variant)),
        }
    }
}

fn run_notify(plan: &Plan, variant: &'static str, bell: Doorbell) -> Outcome {
    let ring = SpscRing::<C11AcqRel>::new(CAPACITY);
    let det = Detector::new();
    let (ops, seed) = (plan.ops, plan.seed);
    let produced = AtomicU64::new(u64::MAX);
    // The last item whose ring decision the producer has made (high 32
    // bits) and the doorbell word that decision read (low 32 bits).
    let decided = CachePadded::new(AtomicU64::new(0));
    // The last item the consumer took: the producer offers the next one
    // only after it, a random few instructions later, so that every item
    // meets a consumer on its way to sleep (litmus7's method: line the two
    // threads up, then vary the delay).
    let taken = CachePadded::new(AtomicU64::new(0));
    let (consumed, seconds) = run_threads(plan, 2, &det, |t| {
        let mut rng = XorShift::new(seed, t as u64);
        if t == 0 {
            let mut pushed = 0;
            for seq in 1..=ops {
                if det.stopping() {
                    break;
                }
                let mut p = Patience::new();
                // ORDERING: Relaxed: pacing only; the item itself goes
                // through the ring.
                while taken.load(Ordering::Relaxed) + 1 < seq && !det.stopping() {
                    p.wait();
                }
                for _ in 0..rng.next_u64() % 16 {
                    std::hint::spin_loop();
                }
                let mut p = Patience::new();
                while !ring.try_push((seq, checksum(seq, seed))) {
                    p.wait();
                }
                let rang = bell.ring_seen();
                // ORDERING: Release: a consumer that reads `seq` here (Acquire)
                // sees the item's publication, which came before the ring.
                decided.store(seq << 32 | u64::from(rang.seen), Ordering::Release);
                pushed = seq;
                jitter(&mut rng, plan.jitter);
            }
            // ORDERING: Relaxed, as in the ring variants.
            produced.store(pushed, Ordering::Relaxed);
            // Wake a consumer asleep on an empty ring for the end.
            bell.ring();
            return 0;
        }
        let mut consumed = 0;
        'items: for expected in 1..=ops {
            let (seq, sum) = loop {
                if let Some(item) = ring.try_pop() {
                    break item;
                }
                // ORDERING: Relaxed, as in the ring variants.
                if expected > produced.load(Ordering::Relaxed) || det.stopping() {
                    break 'items;
                }
                // A random few spins on this side too: the two stores meet
                // at varying offsets.
                for _ in 0..rng.next_u64() % 16 {
                    std::hint::spin_loop();
                }
                let slept_out = bell.sleep_unless_for(
                    || {
                        // ORDERING: Relaxed, as above.
                        ring.consumer_has_item() || produced.load(Ordering::Relaxed) != u64::MAX
                    },
                    SLEEP_BOUND,
                );
                // A lost wake-up: this sleep missed item `expected` and ran
                // out, and the producer's decision for that item read a word
                // older than the sleep (it did not see it: the SB outcome).
                // With the fences that read sees this sleep or a later word.
                if let Some(sleep) = slept_out.filter(|s| s.timed_out) {
                    // ORDERING: Acquire pairs with the producer's Release store.
                    let d = decided.load(Ordering::Acquire);
                    let (seq, seen) = (d >> 32, d as u32);
                    if seq == expected && before(seen, sleep.epoch) {
                        det.report(Kind::LostWakeup, 1, || {
                            format!(
                                "item {expected}: the producer's check read the sleep word {seen}, older than the consumer's sleep {} that missed the item, so no one rang; it slept {} ms",
                                sleep.epoch,
                                SLEEP_BOUND.as_millis()
                            )
                        });
                    }
                }
            };
            if seq != expected {
                det.report(Kind::OutOfOrder, 1, || {
                    format!("expected item {expected}, the consumer got item {seq}")
                });
            } else if sum != checksum(seq, seed) {
                det.report(Kind::CorruptPayload, 1, || {
                    format!("item {seq} arrived with a bad checksum")
                });
            }
            jitter(&mut rng, plan.jitter);
            consumed = expected;
            // ORDERING: Relaxed: pacing only, as above.
            taken.store(expected, Ordering::Relaxed);
        }
        consumed
    });
    let ops = consumed[1];
    let mut notes = common_notes(plan);
    notes.push(format!(
        "the producer offers each item once the consumer has taken the one before, after a random delay of up to 16 spins (and the consumer waits up to 16 before it sleeps), so every item meets a consumer on its way to sleep; a {CAPACITY}-slot ring whose consumer sleeps on a futex when it is empty; a sleep that runs {} ms while the producer has already decided not to ring for the awaited item is a lost wake-up",
        SLEEP_BOUND.as_millis()
    ));
    Outcome::judge(plan, variant, ops, seconds, &det, notes)
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
