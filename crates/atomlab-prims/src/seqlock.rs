//! A sequence lock: one writer, readers that never block it and retry when
//! a write overlapped their read.
//!
//! The idea is Lamport's ("Concurrent reading and writing", CACM 20(11),
//! 1977), as the Linux kernel ships it (`include/linux/seqlock.h`: an odd
//! count while a write is in progress, `smp_rmb()` between the data reads and
//! the re-check). The C11 orderings follow H.-J. Boehm, "Can seqlocks get
//! along with programming language memory models?" (MSPC 2012): the writer
//! makes the count odd, then a release fence, then relaxed data stores, then
//! a release store of the even count; the reader takes the count with
//! acquire, reads the data relaxed, then an **acquire fence** before
//! re-reading the count. [`AcquireDataReader`] is the other correct reader
//! Boehm gives: each data load is an acquire load and there is no fence (on
//! AArch64 an `LDAR`/`LDAPR` per word instead of one `DMB ISHLD`; the same
//! code as the fenced reader on x86-64). [`BrokenReaderNoFence`] leaves the
//! fence out: a
//! data load may then be satisfied after the re-check (a weakly ordered CPU
//! or the compiler can do it; x86-TSO keeps loads in order and hides it),
//! and the reader accepts a torn value.
//!
//! The data are relaxed atomics (Boehm's recommendation), so a racing read
//! is defined behaviour and a broken reader's torn value is observable.

use crate::sync::{fence, AtomicU64, Ordering};

/// Words of data a [`SeqLock`] protects.
pub const WORDS: usize = 4;

/// How a reader validates its snapshot.
pub trait SeqlockReader: Send + Sync + 'static {
    /// The name used on the command line and in records.
    const NAME: &'static str;
    /// Whether the variant is correct.
    const CORRECT: bool;
    /// Whether to put the acquire fence between the data loads and the re-check.
    const FENCE: bool;
    /// How the data words are loaded.
    const DATA: Ordering = Ordering::Relaxed;
}

/// Boehm's reader: acquire fence before the re-check.
#[derive(Debug)]
pub struct FencedReader;

impl SeqlockReader for FencedReader {
    const NAME: &'static str = "fenced-reader";
    const CORRECT: bool = true;
    const FENCE: bool = true;
}

/// Boehm's other reader: acquire data loads, no fence.
#[derive(Debug)]
pub struct AcquireDataReader;

impl SeqlockReader for AcquireDataReader {
    const NAME: &'static str = "acquire-data-reader";
    const CORRECT: bool = true;
    const FENCE: bool = false;
    // ORDERING: Acquire on each data load: a load that reads a data store
    // of a newer write synchronises with the writer's Release fence (which
    // follows its odd count), so the re-check after it sees the odd count;
    // and the loads stay before the re-check, which follows them in
    // program order after an acquire.
    const DATA: Ordering = Ordering::Acquire;
}

/// A reader without the acquire fence.
#[derive(Debug)]
pub struct BrokenReaderNoFence;

impl SeqlockReader for BrokenReaderNoFence {
    const NAME: &'static str = "broken-reader-nofence";
    const CORRECT: bool = false;
    const FENCE: bool = false;
}

/// Names of the variants, correct first.
pub const SEQLOCK_NAMES: [&str; 3] = [
    FencedReader::NAME,
    AcquireDataReader::NAME,
    BrokenReaderNoFence::NAME,
];

/// A sequence lock over [`WORDS`] words, read with `R`'s protocol.
#[derive(Debug)]
pub struct SeqLock<R> {
    seq: crate::CachePadded<AtomicU64>,
    data: [AtomicU64; WORDS],
    _r: std::marker::PhantomData<R>,
}

impl<R: SeqlockReader> SeqLock<R> {
    /// A sequence lock holding `init` in every word.
    pub fn new(init: [u64; WORDS]) -> Self {
        SeqLock {
            seq: crate::CachePadded::new(AtomicU64::new(0)),
            data: init.map(AtomicU64::new),
            _r: std::marker::PhantomData,
        }
    }

    /// Writer only (one writer at a time): stores `value`.
    #[inline]
    pub fn write(&self, value: [u64; WORDS]) {
        // ORDERING: Relaxed: only the writer stores the count.
        let s = self.seq.load(Ordering::Relaxed);
        // ORDERING: Relaxed store of the odd count, ordered before the data
        // stores by the Release fence below.
        self.seq.store(s.wrapping_add(1), Ordering::Relaxed);
        // ORDERING: Release fence: a reader whose (fenced) data load reads one
        // of the stores below then sees the odd count (Boehm §4).
        fence(Ordering::Release);
        for (w, v) in self.data.iter().zip(value) {
            // ORDERING: Relaxed: ordered by the fence above and the store below.
            w.store(v, Ordering::Relaxed);
        }
        // ORDERING: Release publishes the data with the even count.
        self.seq.store(s.wrapping_add(2), Ordering::Release);
    }

    /// One read attempt: the snapshot if no write overlapped it (by `R`'s
    /// check), `None` if it must be retried.
    #[inline]
    pub fn try_read(&self) -> Option<[u64; WORDS]> {
        // ORDERING: Acquire pairs with the writer's final Release store: the
        // data of the write that made this count are visible.
        let s1 = self.seq.load(Ordering::Acquire);
        if s1 & 1 == 1 {
            return None;
        }
        // ORDERING: R::DATA: Relaxed (racing with the writer is expected;
        // the re-check below decides whether the snapshot stands, ordered
        // after these by the fence) or Acquire (AcquireDataReader: these
        // loads order the re-check themselves).
        let out = std::array::from_fn(|i| self.data[i].load(R::DATA));
        if R::FENCE {
            // ORDERING: Acquire fence: the data loads above happen before the
            // re-check below, and reading any newer data store synchronises
            // with the writer's Release fence, so the re-check sees the odd
            // count (Linux's smp_rmb() in read_seqcount_retry).
            fence(Ordering::Acquire);
        }
        // ORDERING: Relaxed, ordered after the data by the fence above (or
        // the acquire data loads). In the broken reader there is neither: BROKEN on purpose, this load may
        // read the old count although a data load read a newer value.
        let s2 = self.seq.load(Ordering::Relaxed);
        (s1 == s2).then_some(out)
    }

    /// Reads, retrying until a snapshot stands.
    pub fn read(&self) -> [u64; WORDS] {
        loop {
            if let Some(v) = self.try_read() {
                return v;
            }
            crate::sync::spin_hint();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_reader_reads_what_was_written() {
        let s = SeqLock::<AcquireDataReader>::new([0; WORDS]);
        s.write([5, 6, 7, 8]);
        assert_eq!(s.read(), [5, 6, 7, 8]);
    }

    #[test]
    fn read_after_write() {
        let s = SeqLock::<FencedReader>::new([0; WORDS]);
        assert_eq!(s.read(), [0; WORDS]);
        s.write([1, 2, 3, 4]);
        assert_eq!(s.read(), [1, 2, 3, 4]);
        assert_eq!(s.try_read(), Some([1, 2, 3, 4]));
    }
}
