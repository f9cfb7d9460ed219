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
//!
//! Users' queues (plugins, `include/atomlab.h`'s `spsc` kind) run the same
//! test through [`atomlab_plugin::WithPlugins`], made with `new_(64)`.
//! Their items are one nonzero 64-bit word: the sequence number above a
//! 24-bit checksum of it ([`pack`]), so a torn or corrupt word shows as a
//! bad checksum, and a lost, duplicated or stale item as a sequence number
//! other than the next; after a lost item the consumer resumes from the
//! item that came, so that one loss is one violation.

use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use atomlab_plugin::abi::SpscFns;
use atomlab_plugin::spsc::{Consumer, Producer};
use atomlab_plugin::SpscVariant;
use atomlab_prims::doorbell::{before, Doorbell};
use atomlab_prims::spsc::{C11AcqRel, SpscBarriers, SpscRing, SPSC_NAMES};
use atomlab_prims::{with_spsc, CachePadded};

use super::plugged::{cannot_make, Pluggable};
use super::{common_notes, run_threads, Patience};
use crate::detect::{Detector, Kind};
use crate::outcome::VariantRun;
use crate::plan::{is_broken, Plan, Scenario, StressError, Threads};
use crate::rng::{jitter, XorShift};

/// Slots in the ring.
pub(crate) const CAPACITY: usize = 64;

#[inline(always)]
fn checksum(seq: u64, seed: u64) -> u64 {
    (seq ^ seed)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29)
        ^ 0xA5A5_A5A5_A5A5_A5A5
}

/// The ring (c11-acq-rel) with a sleeping consumer and its doorbell.
pub(crate) const NOTIFY: &str = "c11-acq-rel+notify";
/// The same with the doorbell's fences removed.
pub(crate) const BROKEN_NOTIFY: &str = "broken-doorbell-no-fence";

/// How long a notify-variant consumer sleeps before it checks whether it
/// was forgotten.
const SLEEP_BOUND: Duration = Duration::from_millis(2);

/// Items of a notify variant when `--ops` is not given: each is a sleep
/// and a wake-up (two system calls, ~20-40 µs here), not a few ns.
const NOTIFY_DEFAULT_OPS: u64 = 100_000;

/// The scenario.
#[derive(Clone, Copy)]
pub(crate) struct Spsc;

impl Scenario for Spsc {
    fn name(&self) -> &'static str {
        "spsc"
    }

    fn plugs(&self) -> Option<&'static dyn crate::plan::Plugs> {
        Some(&crate::scenario::plugged::Door(Spsc))
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
    fn run(&self, plan: &Plan, variant: &'static str) -> Result<Option<VariantRun>, StressError> {
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
            NOTIFY => run_notify(&notify_plan(), variant, Doorbell::new()).map(Some),
            BROKEN_NOTIFY => {
                run_notify(&notify_plan(), variant, Doorbell::broken_without_fences()).map(Some)
            }
            _ => with_spsc!(variant, V => run_ring::<V>(plan, variant)).transpose(),
        }
    }
}

/// Users' queues beside the built-in rings ([`atomlab_plugin::WithPlugins`]).
impl Pluggable for Spsc {
    type Fns = SpscFns;

    fn run_plugin(
        &self,
        plan: &Plan,
        variant: &'static str,
        p: &SpscVariant,
    ) -> Result<VariantRun, StressError> {
        match p.make(CAPACITY) {
            Ok((producer, consumer)) => run_plugged(plan, variant, producer, consumer),
            Err(why) => Ok(cannot_make(plan, variant, why)),
        }
    }
}

/// Item `seq` (1 ≤ seq ≤ 10^12 < 2^40) as one nonzero word: `seq` above
/// the low 24 bits of its checksum.
#[inline(always)]
pub(crate) fn pack(seq: u64, seed: u64) -> u64 {
    seq << 24 | (checksum(seq, seed) & 0xFF_FFFF)
}

/// Takes an end of the queue out of its slot (once per thread).
fn take_end<T>(slot: &std::sync::Mutex<Option<T>>) -> Option<T> {
    slot.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// A plugin's queue: items 1..=ops through `producer` and `consumer`.
fn run_plugged(
    plan: &Plan,
    variant: &'static str,
    producer: Producer,
    consumer: Consumer,
) -> Result<VariantRun, StressError> {
    let det = Detector::new();
    let (ops, seed) = (plan.ops, plan.seed);
    // Items the producer pushed in all, once it has stopped (MAX until then).
    let produced = AtomicU64::new(u64::MAX);
    // Each end moves to its thread once, at the start (not a lock per item:
    // a lock's barriers would hide the queue's missing ones).
    let producer = std::sync::Mutex::new(Some(producer));
    let consumer = std::sync::Mutex::new(Some(consumer));
    let (consumed, seconds) = run_threads(plan, variant, 2, &det, |t| {
        let mut rng = XorShift::new(seed, t as u64);
        if t == 0 {
            let Some(mut q): Option<Producer> = take_end(&producer) else {
                return 0;
            };
            let mut pushed = 0;
            'items: for seq in 1..=ops {
                if det.stopping() {
                    break;
                }
                let mut p = Patience::new();
                while !q.push(pack(seq, seed)) {
                    if det.stopping() {
                        break 'items;
                    }
                    p.wait();
                }
                pushed = seq;
                jitter(&mut rng, plan.jitter);
            }
            // ORDERING: Release: every push above happens before a consumer
            // that reads the count (Acquire), so its last pop after that
            // read sees every item a correct queue holds.
            produced.store(pushed, Ordering::Release);
            return 0;
        }
        let Some(mut q): Option<Consumer> = take_end(&consumer) else {
            return 0;
        };
        let mut next = 1u64;
        let mut received = 0u64;
        loop {
            let mut p = Patience::new();
            let item = loop {
                if let Some(item) = q.pop() {
                    break Some(item);
                }
                // ORDERING: Acquire pairs with the producer's Release store.
                let done = produced.load(Ordering::Acquire);
                if done != u64::MAX {
                    // Everything it pushed is in the queue or was taken.
                    break q.pop().or_else(|| {
                        if next <= done {
                            let lost = done - next + 1;
                            det.report(Kind::OutOfOrder, lost, || {
                                format!(
                                    "items {next} to {done} were pushed and never came out: lost"
                                )
                            });
                        }
                        None
                    });
                }
                if det.stopping() {
                    break None;
                }
                p.wait();
            };
            let Some(item) = item else { break };
            received += 1;
            // A pop that always answers (garbage, or the same item again)
            // never lets the loop above see the time limit: look every
            // 1024 items, and stop at once when more came out than can
            // have gone in.
            if received > ops {
                det.report(Kind::OutOfOrder, 1, || {
                    format!("the queue gave {received} items where only {ops} can have been pushed: pop() returned items that were never pushed")
                });
                break;
            }
            if received & 1023 == 0 && det.stopping() {
                break;
            }
            let seq = item >> 24;
            if item != pack(seq, seed) {
                det.report(Kind::CorruptPayload, 1, || {
                    format!("after item {} the consumer got the word {item:#x}, which is no item that was pushed (torn or corrupt; item {next} is {:#x})", next - 1, pack(next, seed))
                });
            } else if seq > next {
                det.report(Kind::OutOfOrder, seq - next, || {
                    format!(
                        "expected item {next}, the consumer got item {seq}: {} lost",
                        seq - next
                    )
                });
                next = seq + 1;
            } else if seq < next {
                det.report(Kind::OutOfOrder, 1, || {
                    format!("expected item {next}, the consumer got item {seq} again: duplicated or stale")
                });
            } else {
                next += 1;
            }
            jitter(&mut rng, plan.jitter);
        }
        received
    })?;
    let ops = consumed[1];
    let mut notes = common_notes(plan);
    notes.push(format!(
        "the plugin's queue made with new_({CAPACITY}), one producer, one consumer; items are nonzero words: a sequence number and a 24-bit checksum"
    ));
    Ok(VariantRun::judge(plan, variant, ops, seconds, &det, notes))
}

fn run_notify(
    plan: &Plan,
    variant: &'static str,
    bell: Doorbell,
) -> Result<VariantRun, StressError> {
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
    let (consumed, seconds) = run_threads(plan, variant, 2, &det, |t| {
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
    })?;
    let ops = consumed[1];
    let mut notes = common_notes(plan);
    notes.push(format!(
        "the producer offers each item once the consumer has taken the one before, after a random delay of up to 16 spins (and the consumer waits up to 16 before it sleeps), so every item meets a consumer on its way to sleep; a {CAPACITY}-slot ring whose consumer sleeps on a futex when it is empty; a sleep that runs {} ms while the producer has already decided not to ring for the awaited item is a lost wake-up",
        SLEEP_BOUND.as_millis()
    ));
    Ok(VariantRun::judge(plan, variant, ops, seconds, &det, notes))
}

fn run_ring<V: SpscBarriers>(
    plan: &Plan,
    variant: &'static str,
) -> Result<VariantRun, StressError> {
    let ring = SpscRing::<V>::new(CAPACITY);
    let det = Detector::new();
    let (ops, seed) = (plan.ops, plan.seed);
    // Items the producer pushed in all, once it has stopped (MAX until then).
    let produced = AtomicU64::new(u64::MAX);
    let (consumed, seconds) = run_threads(plan, variant, 2, &det, |t| {
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
    })?;
    let ops = consumed[1];
    let mut notes = common_notes(plan);
    notes.push(format!(
        "a {CAPACITY}-slot ring, one producer, one consumer"
    ));
    Ok(VariantRun::judge(plan, variant, ops, seconds, &det, notes))
}
