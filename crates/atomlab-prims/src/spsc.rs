//! A bounded single-producer single-consumer ring (Lamport's queue) in the
//! barrier variants that the 004 case compared.
//!
//! The algorithm and its C11 orderings follow N. M. Lê, A. Guatto, A. Cohen,
//! A. Pop, "Correct and efficient bounded FIFO queues" (SBAC-PAD 2013): the
//! producer reads the consumer's index before overwriting a slot and
//! publishes its own after writing it; the consumer reads the producer's
//! index before reading a slot and publishes its own after reading it.
//! Each side keeps a private copy of the other's index and re-reads the
//! shared one only when the ring looks full (producer) or empty (consumer),
//! as in Lê et al. The four index accesses are where the variants differ
//! ([`SpscBarriers`]):
//! - [`C11AcqRel`]: acquire loads, release stores (Lê et al.'s queue);
//! - [`Fences`]: relaxed accesses with acquire/release fences;
//! - [`SeqCst`]: every access sequentially consistent;
//! - [`BrokenAcquireFenceDequeue`]: 004's "dangerous optimisation": the
//!   consumer's release fence replaced by an acquire fence. C11 allows the
//!   load-buffering outcome (the producer overwrites the slot before the
//!   consumer has read it) although Arm, RISC-V and x86 forbid it, so it is a
//!   data race in the language; loom shows it, hardware will not.
//! - [`BrokenRelaxedPublish`]: the producer publishes its index with a
//!   relaxed store and the consumer reads it relaxed: the consumer can see
//!   the new index before the item (Arm, RISC-V; x86-TSO keeps stores and
//!   loads in order and hides it).
//!
//! A slot holds two words (a sequence number and a checksum). Natively they
//! are relaxed atomics, so a broken variant reads stale words (which the
//! stress detectors see) instead of being undefined behaviour; under loom
//! they are `loom::cell::UnsafeCell`s, so loom reports any access to a slot
//! that is not ordered by happens-before.

use crate::sync::{fence, AtomicUsize, Ordering};

/// How the ring orders its index accesses.
pub trait SpscBarriers: Send + Sync + 'static {
    /// The name used on the command line and in records.
    const NAME: &'static str;
    /// Whether the variant is correct in the C11 model.
    const CORRECT: bool;
    /// Producer: reads the consumer's index before overwriting a slot.
    fn producer_load_head(head: &AtomicUsize) -> usize;
    /// Producer: publishes its index after writing a slot.
    fn producer_publish_tail(tail: &AtomicUsize, v: usize);
    /// Consumer: reads the producer's index before reading a slot.
    fn consumer_load_tail(tail: &AtomicUsize) -> usize;
    /// Consumer: publishes its index after reading a slot.
    fn consumer_publish_head(head: &AtomicUsize, v: usize);
}

/// Release/acquire accesses (Lê et al.).
#[derive(Debug)]
pub struct C11AcqRel;

impl SpscBarriers for C11AcqRel {
    const NAME: &'static str = "c11-acq-rel";
    const CORRECT: bool = true;
    #[inline(always)]
    fn producer_load_head(head: &AtomicUsize) -> usize {
        // ORDERING: Acquire pairs with the consumer's Release publish: its
        // read of the slot happens before we overwrite it.
        head.load(Ordering::Acquire)
    }
    #[inline(always)]
    fn producer_publish_tail(tail: &AtomicUsize, v: usize) {
        // ORDERING: Release publishes the slot we wrote.
        tail.store(v, Ordering::Release)
    }
    #[inline(always)]
    fn consumer_load_tail(tail: &AtomicUsize) -> usize {
        // ORDERING: Acquire pairs with the producer's Release: we see the item.
        tail.load(Ordering::Acquire)
    }
    #[inline(always)]
    fn consumer_publish_head(head: &AtomicUsize, v: usize) {
        // ORDERING: Release: our read of the slot happens before the
        // producer (Acquire) overwrites it.
        head.store(v, Ordering::Release)
    }
}

/// Relaxed accesses with fences (the form 004 started from).
#[derive(Debug)]
pub struct Fences;

impl SpscBarriers for Fences {
    const NAME: &'static str = "fences";
    const CORRECT: bool = true;
    #[inline(always)]
    fn producer_load_head(head: &AtomicUsize) -> usize {
        // ORDERING: Relaxed load made acquiring by the fence after it.
        let h = head.load(Ordering::Relaxed);
        // ORDERING: Acquire fence pairs with the consumer's Release fence.
        fence(Ordering::Acquire);
        h
    }
    #[inline(always)]
    fn producer_publish_tail(tail: &AtomicUsize, v: usize) {
        // ORDERING: Release fence: the slot write before it is published by
        // the relaxed store after it (fence-to-atomic synchronisation).
        fence(Ordering::Release);
        // ORDERING: Relaxed after the fence above.
        tail.store(v, Ordering::Relaxed)
    }
    #[inline(always)]
    fn consumer_load_tail(tail: &AtomicUsize) -> usize {
        // ORDERING: Relaxed load made acquiring by the fence after it.
        let t = tail.load(Ordering::Relaxed);
        // ORDERING: Acquire fence pairs with the producer's Release fence.
        fence(Ordering::Acquire);
        t
    }
    #[inline(always)]
    fn consumer_publish_head(head: &AtomicUsize, v: usize) {
        // ORDERING: Release fence: our slot read happens before the
        // producer's overwrite, which follows its Acquire fence.
        fence(Ordering::Release);
        // ORDERING: Relaxed after the fence above.
        head.store(v, Ordering::Relaxed)
    }
}

/// Every access sequentially consistent.
#[derive(Debug)]
pub struct SeqCst;

impl SpscBarriers for SeqCst {
    const NAME: &'static str = "seq_cst";
    const CORRECT: bool = true;
    #[inline(always)]
    fn producer_load_head(head: &AtomicUsize) -> usize {
        // ORDERING: SeqCst includes the Acquire that C11AcqRel needs.
        head.load(Ordering::SeqCst)
    }
    #[inline(always)]
    fn producer_publish_tail(tail: &AtomicUsize, v: usize) {
        // ORDERING: SeqCst includes the Release that C11AcqRel needs.
        tail.store(v, Ordering::SeqCst)
    }
    #[inline(always)]
    fn consumer_load_tail(tail: &AtomicUsize) -> usize {
        // ORDERING: SeqCst includes the Acquire that C11AcqRel needs.
        tail.load(Ordering::SeqCst)
    }
    #[inline(always)]
    fn consumer_publish_head(head: &AtomicUsize, v: usize) {
        // ORDERING: SeqCst includes the Release that C11AcqRel needs.
        head.store(v, Ordering::SeqCst)
    }
}

/// [`Fences`] with 004's dangerous optimisation in dequeue.
#[derive(Debug)]
pub struct BrokenAcquireFenceDequeue;

impl SpscBarriers for BrokenAcquireFenceDequeue {
    const NAME: &'static str = "broken-acquire-fence-dequeue";
    const CORRECT: bool = false;
    #[inline(always)]
    fn producer_load_head(head: &AtomicUsize) -> usize {
        Fences::producer_load_head(head)
    }
    #[inline(always)]
    fn producer_publish_tail(tail: &AtomicUsize, v: usize) {
        Fences::producer_publish_tail(tail, v)
    }
    #[inline(always)]
    fn consumer_load_tail(tail: &AtomicUsize) -> usize {
        Fences::consumer_load_tail(tail)
    }
    #[inline(always)]
    fn consumer_publish_head(head: &AtomicUsize, v: usize) {
        // ORDERING: BROKEN on purpose (004): an Acquire fence where a Release
        // fence belongs. Hardware orders the slot load before the store below
        // (`dmb ishld` does on Arm), but C11 does not: nothing makes our read
        // of the slot happen before the producer overwrites it (the LB
        // outcome), a data race in the language.
        fence(Ordering::Acquire);
        // ORDERING: Relaxed, with no release before it: the bug above.
        head.store(v, Ordering::Relaxed)
    }
}

/// Relaxed publication of the producer's index.
#[derive(Debug)]
pub struct BrokenRelaxedPublish;

impl SpscBarriers for BrokenRelaxedPublish {
    const NAME: &'static str = "broken-relaxed-publish";
    const CORRECT: bool = false;
    #[inline(always)]
    fn producer_load_head(head: &AtomicUsize) -> usize {
        C11AcqRel::producer_load_head(head)
    }
    #[inline(always)]
    fn producer_publish_tail(tail: &AtomicUsize, v: usize) {
        // ORDERING: BROKEN on purpose: Relaxed publishes nothing, so the
        // consumer may see the new index before the slot's contents.
        tail.store(v, Ordering::Relaxed)
    }
    #[inline(always)]
    fn consumer_load_tail(tail: &AtomicUsize) -> usize {
        // ORDERING: BROKEN on purpose: Relaxed acquires nothing, so the slot
        // may be read before the producer's writes to it are visible.
        tail.load(Ordering::Relaxed)
    }
    #[inline(always)]
    fn consumer_publish_head(head: &AtomicUsize, v: usize) {
        C11AcqRel::consumer_publish_head(head, v)
    }
}

/// Names of the variants, correct ones first.
pub const SPSC_NAMES: [&str; 5] = [
    C11AcqRel::NAME,
    Fences::NAME,
    SeqCst::NAME,
    BrokenAcquireFenceDequeue::NAME,
    BrokenRelaxedPublish::NAME,
];

/// Calls `$body` with `$V` bound to the [`SpscBarriers`] named `$name`;
/// `Some(result)`, or `None` for an unknown name.
#[macro_export]
macro_rules! with_spsc {
    ($name:expr, $V:ident => $body:expr) => {{
        use $crate::spsc::*;
        match $name {
            "c11-acq-rel" => {
                type $V = C11AcqRel;
                Some($body)
            }
            "fences" => {
                type $V = Fences;
                Some($body)
            }
            "seq_cst" => {
                type $V = SeqCst;
                Some($body)
            }
            "broken-acquire-fence-dequeue" => {
                type $V = BrokenAcquireFenceDequeue;
                Some($body)
            }
            "broken-relaxed-publish" => {
                type $V = BrokenRelaxedPublish;
                Some($body)
            }
            _ => None,
        }
    }};
}

/// One slot: a sequence number and a checksum.
#[cfg(not(loom))]
#[derive(Debug, Default)]
struct Slot {
    seq: crate::sync::AtomicU64,
    sum: crate::sync::AtomicU64,
}

#[cfg(not(loom))]
impl Slot {
    #[inline(always)]
    fn write(&self, item: (u64, u64)) {
        // ORDERING: Relaxed: the slot is published by the variant's tail
        // store; relaxed atomics keep a broken variant's stale reads defined.
        self.seq.store(item.0, Ordering::Relaxed);
        // ORDERING: as above.
        self.sum.store(item.1, Ordering::Relaxed);
    }
    #[inline(always)]
    fn read(&self) -> (u64, u64) {
        // ORDERING: Relaxed: ordered by the variant's tail load.
        let seq = self.seq.load(Ordering::Relaxed);
        // ORDERING: as above.
        (seq, self.sum.load(Ordering::Relaxed))
    }
}

#[cfg(loom)]
#[derive(Debug)]
struct Slot(loom::cell::UnsafeCell<(u64, u64)>);

#[cfg(loom)]
impl Default for Slot {
    fn default() -> Self {
        Slot(loom::cell::UnsafeCell::new((0, 0)))
    }
}

#[cfg(loom)]
impl Slot {
    fn write(&self, item: (u64, u64)) {
        // SAFETY: loom checks that this write is ordered with every other
        // access to the slot, and panics if it is not.
        self.0.with_mut(|p| unsafe { *p = item })
    }
    fn read(&self) -> (u64, u64) {
        // SAFETY: as above, for a read.
        self.0.with(|p| unsafe { *p })
    }
}

/// The ring: `capacity` slots (a power of two), one producer, one consumer.
#[derive(Debug)]
pub struct SpscRing<V> {
    slots: Box<[Slot]>,
    mask: usize,
    /// The consumer's next index (written by the consumer only).
    head: crate::CachePadded<AtomicUsize>,
    /// The producer's next index (written by the producer only).
    tail: crate::CachePadded<AtomicUsize>,
    /// The producer's last reading of `head` (touched by the producer only):
    /// Lê et al.'s cached index, so most pushes do not read the consumer's line.
    head_seen: crate::CachePadded<AtomicUsize>,
    /// The consumer's last reading of `tail` (touched by the consumer only).
    tail_seen: crate::CachePadded<AtomicUsize>,
    _v: std::marker::PhantomData<V>,
}

impl<V: SpscBarriers> SpscRing<V> {
    /// A ring of `capacity` slots, rounded up to a power of two (at least 2).
    pub fn new(capacity: usize) -> Self {
        let cap = capacity.max(2).next_power_of_two();
        SpscRing {
            slots: (0..cap).map(|_| Slot::default()).collect(),
            mask: cap - 1,
            head: crate::CachePadded::new(AtomicUsize::new(0)),
            tail: crate::CachePadded::new(AtomicUsize::new(0)),
            head_seen: crate::CachePadded::new(AtomicUsize::new(0)),
            tail_seen: crate::CachePadded::new(AtomicUsize::new(0)),
            _v: std::marker::PhantomData,
        }
    }

    /// Producer only: appends `item`, or returns false when the ring is full.
    #[inline]
    pub fn try_push(&self, item: (u64, u64)) -> bool {
        // ORDERING: Relaxed: only the producer writes `tail`.
        let t = self.tail.load(Ordering::Relaxed);
        // ORDERING: Relaxed: a producer-private copy of a `head` value that
        // was read with the variant's ordering below.
        let mut h = self.head_seen.load(Ordering::Relaxed);
        if t.wrapping_sub(h) > self.mask {
            h = V::producer_load_head(&self.head);
            // ORDERING: Relaxed: producer-private, see above.
            self.head_seen.store(h, Ordering::Relaxed);
            if t.wrapping_sub(h) > self.mask {
                return false;
            }
        }
        self.slots[t & self.mask].write(item);
        V::producer_publish_tail(&self.tail, t.wrapping_add(1));
        true
    }

    /// Consumer only: whether an item is ready to pop, reading the
    /// producer's index with the variant's ordering (the check a consumer
    /// makes before it sleeps: [`crate::doorbell::Doorbell::sleep_unless`]).
    #[inline]
    pub fn consumer_has_item(&self) -> bool {
        // ORDERING: Relaxed: only the consumer writes `head`.
        let h = self.head.load(Ordering::Relaxed);
        let t = V::consumer_load_tail(&self.tail);
        // ORDERING: Relaxed: consumer-private, as in `try_pop`.
        self.tail_seen.store(t, Ordering::Relaxed);
        t != h
    }

    /// Consumer only: takes the oldest item, or `None` when the ring is empty.
    #[inline]
    pub fn try_pop(&self) -> Option<(u64, u64)> {
        // ORDERING: Relaxed: only the consumer writes `head`.
        let h = self.head.load(Ordering::Relaxed);
        // ORDERING: Relaxed: a consumer-private copy of a `tail` value that
        // was read with the variant's ordering below.
        let mut t = self.tail_seen.load(Ordering::Relaxed);
        if t == h {
            t = V::consumer_load_tail(&self.tail);
            // ORDERING: Relaxed: consumer-private, see above.
            self.tail_seen.store(t, Ordering::Relaxed);
            if t == h {
                return None;
            }
        }
        let item = self.slots[h & self.mask].read();
        V::consumer_publish_head(&self.head, h.wrapping_add(1));
        Some(item)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn fifo<V: SpscBarriers>() {
        let r = SpscRing::<V>::new(3);
        for i in 0..4 {
            assert!(r.try_push((i, i * 7)), "{}", V::NAME);
        }
        assert!(!r.try_push((9, 9)), "full at 4");
        for i in 0..4 {
            assert_eq!(r.try_pop(), Some((i, i * 7)));
        }
        assert_eq!(r.try_pop(), None);
    }

    #[test]
    fn every_variant_is_a_fifo_on_one_thread() {
        for name in SPSC_NAMES {
            assert_eq!(with_spsc!(name, V => fifo::<V>()), Some(()));
        }
    }
}
