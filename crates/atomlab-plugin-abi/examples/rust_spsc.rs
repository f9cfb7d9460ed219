//! An atomlab plugin in Rust: Lamport's bounded single-producer
//! single-consumer ring (Lamport 1983, "Specifying concurrent program
//! modules"), with C11/Rust acquire/release indices as atomlab's built-in
//! `c11-acq-rel` ring, in two variants exported with `export_plugin!`
//! from this `cdylib`:
//!   - `rust-lamport`: every push reads the consumer's index and every pop
//!     the producer's, as `crates/atomlab/tests/plugins/ring.c`;
//!   - `rust-lamport-cached`: each side keeps its last sight of the other's
//!     index and reads the shared one only when that says full (push) or
//!     empty (pop), so the index lines bounce between the cores less (the
//!     optimisation of Rigtorp's SPSCQueue and of rtrb).
//!
//! ```text
//! cargo build --release -p atomlab-plugin-abi --example rust_spsc
//! atomlab bench spsc --plugin target/release/examples/librust_spsc.so
//! atomlab stress spsc --plugin target/release/examples/librust_spsc.so
//! ```

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

use atomlab_plugin_abi::{export_plugin, Spsc};

/// One cache line of its own: the producer's index and the consumer's do
/// not share one (no false sharing).
#[repr(align(64))]
struct Line<T>(T);

/// A ring of `mask + 1` slots (a power of two). `head` and `tail` count
/// items popped and pushed since `new` (wrapping), so `tail - head` is the
/// number of items in the ring.
pub struct Ring<const CACHED: bool> {
    /// Items popped; written by the consumer only.
    head: Line<AtomicUsize>,
    /// Items pushed; written by the producer only.
    tail: Line<AtomicUsize>,
    /// The producer's last sight of `head` (`CACHED` only).
    head_seen: Line<UnsafeCell<usize>>,
    /// The consumer's last sight of `tail` (`CACHED` only).
    tail_seen: Line<UnsafeCell<usize>>,
    mask: usize,
    slots: Box<[UnsafeCell<u64>]>,
}

// SAFETY: the SPSC contract of `Spsc::push`/`Spsc::pop` (one producer
// thread, one consumer thread): a slot is written by the producer only
// while it is outside `head..tail` (the consumer does not read it), and
// read by the consumer only while it is inside, after the Release store
// of `tail` that published it; `head_seen` is touched by the producer
// alone and `tail_seen` by the consumer alone.
unsafe impl<const CACHED: bool> Sync for Ring<CACHED> {}

impl<const CACHED: bool> Spsc for Ring<CACHED> {
    fn new(capacity: usize) -> Self {
        let slots = capacity.max(1).next_power_of_two();
        Ring {
            head: Line(AtomicUsize::new(0)),
            tail: Line(AtomicUsize::new(0)),
            head_seen: Line(UnsafeCell::new(0)),
            tail_seen: Line(UnsafeCell::new(0)),
            mask: slots - 1,
            slots: (0..slots).map(|_| UnsafeCell::new(0)).collect(),
        }
    }

    unsafe fn push(&self, item: u64) -> bool {
        // ORDERING: Relaxed: only the producer (this thread) writes `tail`.
        let t = self.tail.0.load(Ordering::Relaxed);
        let full = |head: usize| t.wrapping_sub(head) > self.mask;
        // ORDERING: Acquire pairs with pop's Release store of `head`: the
        // consumer's read of a slot happens before the slot is reused here.
        let head = || self.head.0.load(Ordering::Acquire);
        if CACHED {
            // SAFETY: `head_seen` is the producer's alone (see `Sync`).
            let seen = unsafe { &mut *self.head_seen.0.get() };
            // A stale sight only says "full" too early, never too late:
            // `head` only grows.
            if full(*seen) {
                *seen = head();
                if full(*seen) {
                    return false;
                }
            }
        } else if full(head()) {
            return false;
        }
        // SAFETY: slot `t` is outside `head..tail`: the consumer does not
        // read it until the store below publishes it.
        unsafe { *self.slots[t & self.mask].get() = item };
        // ORDERING: Release publishes the slot's write to pop's Acquire
        // load of `tail`.
        self.tail.0.store(t.wrapping_add(1), Ordering::Release);
        true
    }

    unsafe fn pop(&self) -> Option<u64> {
        // ORDERING: Relaxed: only the consumer (this thread) writes `head`.
        let h = self.head.0.load(Ordering::Relaxed);
        // ORDERING: Acquire pairs with push's Release store of `tail`: the
        // slots below it are written before they are read here.
        let tail = || self.tail.0.load(Ordering::Acquire);
        if CACHED {
            // SAFETY: `tail_seen` is the consumer's alone (see `Sync`).
            let seen = unsafe { &mut *self.tail_seen.0.get() };
            // A stale sight only says "empty" too early; the slots below it
            // were published by the Acquire load that gave it.
            if h == *seen {
                *seen = tail();
                if h == *seen {
                    return None;
                }
            }
        } else if h == tail() {
            return None;
        }
        // SAFETY: slot `h` is inside `head..tail`, published by the
        // producer's Release store of `tail`, and it does not write it
        // again until the store below.
        let item = unsafe { *self.slots[h & self.mask].get() };
        // ORDERING: Release: the slot's read happens before push's Acquire
        // load of `head` lets the producer reuse it.
        self.head.0.store(h.wrapping_add(1), Ordering::Release);
        Some(item)
    }
}

export_plugin!(
    "rust-queues",
    spsc "rust-lamport" => Ring<false>,
    spsc "rust-lamport-cached" => Ring<true>,
);
