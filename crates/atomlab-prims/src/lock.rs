//! Locks behind one trait, [`RawLock`], so that `bench lock` and `stress
//! mutex` drive each the same way.
//!
//! The spin locks follow Mellor-Crummey and Scott, "Algorithms for Scalable
//! Synchronization on Shared-Memory Multiprocessors" (ACM TOCS 9(1), 1991):
//! test-and-set, test-and-test-and-set with exponential backoff, the ticket
//! lock and the MCS queue lock. [`RuntimeLock`] is the lock of the Crystal
//! runtime thread (crystal-lang/crystal#13050 and the 002 case): a
//! sequentially consistent swap to take it, and the two fixed ways to release
//! it (a store-release, or a full fence then a relaxed store).

use crate::sync::{fence, spin_hint, yield_now, AtomicBool, AtomicPtr, AtomicU32, Ordering};

/// A mutual-exclusion lock. Dropping the guard unlocks.
pub trait RawLock: Send + Sync {
    /// The name used on the command line and in records.
    const NAME: &'static str;
    /// Proof of holding the lock; unlocks on drop.
    type Guard<'a>
    where
        Self: 'a;
    /// An unlocked lock.
    fn new() -> Self;
    /// Blocks until the lock is held.
    fn lock(&self) -> Self::Guard<'_>;
}

/// Spins with exponential backoff: `spin_hint` 1, 2, 4… up to 2^`cap` times,
/// then yields the CPU, which matters when threads outnumber CPUs.
struct Backoff {
    step: u32,
}

impl Backoff {
    const SPIN_LIMIT: u32 = 6;
    const YIELD_LIMIT: u32 = 10;

    fn new() -> Self {
        Backoff { step: 0 }
    }

    fn snooze(&mut self) {
        // Under loom every spin is a scheduling point: one is enough.
        if cfg!(loom) {
            yield_now();
            return;
        }
        if self.step <= Self::SPIN_LIMIT {
            for _ in 0..1u32 << self.step {
                spin_hint();
            }
        } else {
            yield_now();
        }
        if self.step <= Self::YIELD_LIMIT {
            self.step += 1;
        }
    }
}

/// `swap(true)`: true when the flag was already set. Under loom the same
/// effect is a compare-exchange from false: a failed swap writes back the
/// value it read, which no other thread can tell from no write, and loom
/// cannot explore an unbounded spin of writing RMWs. The ordering on success
/// is the one under test.
#[inline(always)]
pub(crate) fn test_and_set(flag: &AtomicBool, order: Ordering) -> bool {
    #[cfg(not(loom))]
    {
        // ORDERING: the caller's, see the call sites.
        flag.swap(true, order)
    }
    #[cfg(loom)]
    {
        // ORDERING: the caller's on success; a failure acquires nothing we use.
        flag.compare_exchange(false, true, order, Ordering::Relaxed)
            .is_err()
    }
}

/// [`test_and_set`] for a `u32` lock word (0 free, 1 held).
#[inline(always)]
fn test_and_set_u32(word: &AtomicU32, order: Ordering) -> bool {
    #[cfg(not(loom))]
    {
        // ORDERING: the caller's, see the call sites.
        word.swap(1, order) != 0
    }
    #[cfg(loom)]
    {
        // ORDERING: the caller's on success; a failure acquires nothing we use.
        word.compare_exchange(0, 1, order, Ordering::Relaxed)
            .is_err()
    }
}

/// Test-and-set: every waiter swaps the flag, each attempt a write that
/// bounces the line between cores.
#[derive(Debug)]
pub struct TasLock {
    locked: AtomicBool,
}

/// Guard of a [`TasLock`].
pub struct TasGuard<'a>(&'a TasLock);

impl RawLock for TasLock {
    const NAME: &'static str = "tas";
    type Guard<'a> = TasGuard<'a>;

    fn new() -> Self {
        TasLock {
            locked: AtomicBool::new(false),
        }
    }

    #[inline]
    fn lock(&self) -> TasGuard<'_> {
        // ORDERING: Acquire pairs with the Release store in unlock, so the
        // previous holder's critical section happens before ours.
        while test_and_set(&self.locked, Ordering::Acquire) {
            spin_hint();
        }
        TasGuard(self)
    }
}

impl Drop for TasGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // ORDERING: Release publishes our critical section to the next
        // acquirer's Acquire swap.
        self.0.locked.store(false, Ordering::Release);
    }
}

/// Test-and-test-and-set with exponential backoff: waiters read the flag
/// (a shared line, no traffic) and only try to take it when it looks free.
#[derive(Debug)]
pub struct TtasLock {
    locked: AtomicBool,
}

/// Guard of a [`TtasLock`].
pub struct TtasGuard<'a>(&'a TtasLock);

impl RawLock for TtasLock {
    const NAME: &'static str = "ttas";
    type Guard<'a> = TtasGuard<'a>;

    fn new() -> Self {
        TtasLock {
            locked: AtomicBool::new(false),
        }
    }

    #[inline]
    fn lock(&self) -> TtasGuard<'_> {
        let mut backoff = Backoff::new();
        loop {
            // ORDERING: Relaxed peek: only a hint; the CAS below is what acquires.
            if !self.locked.load(Ordering::Relaxed)
                // ORDERING: Acquire on success pairs with unlock's Release;
                // failure learns nothing we act on.
                && self
                    .locked
                    .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return TtasGuard(self);
            }
            backoff.snooze();
        }
    }
}

impl Drop for TtasGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // ORDERING: Release publishes the critical section to the next CAS.
        self.0.locked.store(false, Ordering::Release);
    }
}

/// Ticket lock: take a number, wait until it is served. FIFO-fair; every
/// hand-off invalidates the line in every waiter.
#[derive(Debug)]
pub struct TicketLock {
    next: AtomicU32,
    serving: AtomicU32,
}

/// Guard of a [`TicketLock`].
pub struct TicketGuard<'a> {
    lock: &'a TicketLock,
    ticket: u32,
}

impl TicketGuard<'_> {
    /// The ticket this holder drew (tests check FIFO order with it).
    pub fn ticket(&self) -> u32 {
        self.ticket
    }
}

impl TicketLock {
    /// Tickets drawn so far (a snapshot, for tests and reports).
    pub fn tickets_drawn(&self) -> u32 {
        // ORDERING: a snapshot; orders nothing.
        self.next.load(Ordering::Relaxed)
    }
}

impl RawLock for TicketLock {
    const NAME: &'static str = "ticket";
    type Guard<'a> = TicketGuard<'a>;

    fn new() -> Self {
        TicketLock {
            next: AtomicU32::new(0),
            serving: AtomicU32::new(0),
        }
    }

    #[inline]
    fn lock(&self) -> TicketGuard<'_> {
        // ORDERING: Relaxed: the ticket only orders us among waiters; the
        // critical section is ordered by the Acquire load of `serving`.
        let ticket = self.next.fetch_add(1, Ordering::Relaxed);
        // ORDERING: Acquire pairs with the previous holder's Release store.
        while self.serving.load(Ordering::Acquire) != ticket {
            spin_hint();
        }
        TicketGuard { lock: self, ticket }
    }
}

impl Drop for TicketGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        // ORDERING: Release hands our critical section to the next ticket
        // holder's Acquire load. Only the holder writes `serving`, so our own
        // ticket + 1 is the next value.
        self.lock
            .serving
            .store(self.ticket.wrapping_add(1), Ordering::Release);
    }
}

/// A waiter's queue node in an [`McsLock`].
#[derive(Debug)]
struct McsNode {
    next: AtomicPtr<McsNode>,
    locked: AtomicBool,
}

/// MCS queue lock: each waiter spins on its own node, and the holder hands
/// the lock to its successor directly; one remote write per hand-off.
#[derive(Debug)]
pub struct McsLock {
    tail: AtomicPtr<McsNode>,
}

/// Guard of an [`McsLock`]: owns this acquisition's queue node.
pub struct McsGuard<'a> {
    lock: &'a McsLock,
    node: *mut McsNode,
}

// SAFETY: the node is owned by the guard (allocated per acquisition) and only
// touched by the lock protocol's atomics; the guard may be dropped elsewhere.
unsafe impl Send for McsGuard<'_> {}

#[cfg(not(loom))]
thread_local! {
    // One spare node per thread, so an uncontended lock/unlock does not
    // allocate (nested acquisitions allocate their own).
    static SPARE_NODE: std::cell::Cell<*mut McsNode> = const { std::cell::Cell::new(std::ptr::null_mut()) };
}

fn take_node() -> *mut McsNode {
    #[cfg(not(loom))]
    {
        let spare = SPARE_NODE.with(|s| s.replace(std::ptr::null_mut()));
        if !spare.is_null() {
            // SAFETY: a spare node is owned by this thread alone.
            let node = unsafe { &*spare };
            // ORDERING: plain initialisation, published by the AcqRel swap of
            // `tail` that enqueues the node.
            node.next.store(std::ptr::null_mut(), Ordering::Relaxed);
            node.locked.store(true, Ordering::Relaxed);
            return spare;
        }
    }
    Box::into_raw(Box::new(McsNode {
        next: AtomicPtr::new(std::ptr::null_mut()),
        locked: AtomicBool::new(true),
    }))
}

fn give_node(node: *mut McsNode) {
    #[cfg(not(loom))]
    {
        let node = SPARE_NODE.with(|s| {
            if s.get().is_null() {
                s.set(node);
                std::ptr::null_mut()
            } else {
                node
            }
        });
        if node.is_null() {
            return;
        }
        // SAFETY: allocated by Box::into_raw in take_node, no longer shared.
        drop(unsafe { Box::from_raw(node) });
    }
    #[cfg(loom)]
    {
        // SAFETY: allocated by Box::into_raw in take_node, no longer shared.
        drop(unsafe { Box::from_raw(node) });
    }
}

impl RawLock for McsLock {
    const NAME: &'static str = "mcs";
    type Guard<'a> = McsGuard<'a>;

    fn new() -> Self {
        McsLock {
            tail: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    #[inline]
    fn lock(&self) -> McsGuard<'_> {
        let node = take_node();
        // ORDERING: Release publishes our node's initialisation to the
        // successor that will write `next` in it; Acquire pairs with the
        // Release of the predecessor's swap (its node is initialised) and with
        // a holder's Release CAS that emptied the queue (its critical section).
        let prev = self.tail.swap(node, Ordering::AcqRel);
        if !prev.is_null() {
            // SAFETY: `prev` stays allocated until its owner has handed the lock
            // on, which needs the `next` pointer we are about to store.
            let prev = unsafe { &*prev };
            // ORDERING: Release so the predecessor, reading `next` with Acquire,
            // sees our initialised node.
            prev.next.store(node, Ordering::Release);
            // SAFETY: our own node, alive until the guard drops.
            let me = unsafe { &*node };
            // ORDERING: Acquire pairs with the predecessor's Release hand-off.
            while me.locked.load(Ordering::Acquire) {
                spin_hint();
            }
        }
        McsGuard { lock: self, node }
    }
}

impl Drop for McsGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: our own node, alive until give_node below.
        let me = unsafe { &*self.node };
        // ORDERING: Acquire pairs with the successor's Release store of `next`.
        let mut next = me.next.load(Ordering::Acquire);
        if next.is_null() {
            // ORDERING: Release publishes our critical section to whoever next
            // swaps `tail` (with Acquire); failure only tells us a successor exists.
            if self
                .lock
                .tail
                .compare_exchange(
                    self.node,
                    std::ptr::null_mut(),
                    Ordering::Release,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                give_node(self.node);
                return;
            }
            // A successor has swapped the tail but not yet linked itself.
            loop {
                // ORDERING: as above, pairs with the successor's Release store.
                next = me.next.load(Ordering::Acquire);
                if !next.is_null() {
                    break;
                }
                spin_hint();
            }
        }
        // SAFETY: the successor's node is alive: it is spinning on it.
        let succ = unsafe { &*next };
        // ORDERING: Release hands our critical section to the successor's Acquire spin.
        succ.locked.store(false, Ordering::Release);
        give_node(self.node);
    }
}

/// `std::sync::Mutex<()>` (futex-based on Linux).
#[derive(Debug, Default)]
pub struct StdMutex(std::sync::Mutex<()>);

impl RawLock for StdMutex {
    const NAME: &'static str = "std";
    type Guard<'a> = std::sync::MutexGuard<'a, ()>;

    fn new() -> Self {
        StdMutex::default()
    }

    fn lock(&self) -> Self::Guard<'_> {
        // A poisoned lock still excludes; the benchmark's sections never panic.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `parking_lot::Mutex<()>`: spin briefly, then park.
#[derive(Debug, Default)]
pub struct ParkingLotMutex(parking_lot::Mutex<()>);

impl RawLock for ParkingLotMutex {
    const NAME: &'static str = "parking_lot";
    type Guard<'a> = parking_lot::MutexGuard<'a, ()>;

    fn new() -> Self {
        ParkingLotMutex::default()
    }

    fn lock(&self) -> Self::Guard<'_> {
        self.0.lock()
    }
}

/// How a [`RuntimeLock`] releases.
pub trait RuntimeUnlock: Send + Sync + 'static {
    /// The variant's name.
    const NAME: &'static str;
    /// Releases `state`.
    fn unlock(state: &AtomicU32);
}

/// The store-release fix: `state.store(0, Release)` (`stlr` on aarch64).
#[derive(Debug)]
pub struct StoreRelease;

impl RuntimeUnlock for StoreRelease {
    const NAME: &'static str = "runtime-store-release";
    #[inline]
    fn unlock(state: &AtomicU32) {
        // ORDERING: Release orders the critical section before the store that
        // frees the lock, pairing with the SeqCst (so acquiring) swap in lock.
        state.store(0, Ordering::Release);
    }
}

/// The barrier fix of crystal#13050: a full fence, then the original relaxed
/// ("lazy set") store.
#[derive(Debug)]
pub struct FenceThenRelaxed;

impl RuntimeUnlock for FenceThenRelaxed {
    const NAME: &'static str = "runtime-fence-relaxed";
    #[inline]
    fn unlock(state: &AtomicU32) {
        // ORDERING: a fence before a relaxed store makes it a release
        // (fence-to-atomic synchronisation, C++ [atomics.fences]/2): the next
        // acquirer's swap reads our store and so syncs with this fence. SeqCst
        // because that is what the runtime's `Atomic.fence` emits (`dmb ish`).
        fence(Ordering::SeqCst);
        // ORDERING: Relaxed is enough after the fence above.
        state.store(0, Ordering::Relaxed);
    }
}

/// The Crystal runtime's lock: a SeqCst swap to take it (spinning, then
/// yielding like a fiber reschedule), and `U` to release it.
#[derive(Debug)]
pub struct RuntimeLock<U> {
    state: AtomicU32,
    _unlock: std::marker::PhantomData<U>,
}

/// Guard of a [`RuntimeLock`].
pub struct RuntimeGuard<'a, U: RuntimeUnlock>(&'a RuntimeLock<U>);

impl<U: RuntimeUnlock> RawLock for RuntimeLock<U> {
    const NAME: &'static str = U::NAME;
    type Guard<'a> = RuntimeGuard<'a, U>;

    fn new() -> Self {
        RuntimeLock {
            state: AtomicU32::new(0),
            _unlock: std::marker::PhantomData,
        }
    }

    #[inline]
    fn lock(&self) -> RuntimeGuard<'_, U> {
        let mut backoff = Backoff::new();
        // ORDERING: SeqCst as the runtime's `@state.swap(LOCKED)` (Crystal
        // atomics default to sequentially consistent); it includes the Acquire
        // that pairs with the unlock's release.
        while test_and_set_u32(&self.state, Ordering::SeqCst) {
            backoff.snooze();
        }
        RuntimeGuard(self)
    }
}

impl<U: RuntimeUnlock> Drop for RuntimeGuard<'_, U> {
    #[inline]
    fn drop(&mut self) {
        U::unlock(&self.0.state);
    }
}

/// The runtime lock released by a store-release.
pub type RuntimeStoreReleaseLock = RuntimeLock<StoreRelease>;
/// The runtime lock released by a fence and a relaxed store.
pub type RuntimeFenceRelaxedLock = RuntimeLock<FenceThenRelaxed>;

/// Names of every lock, in the order tables list them.
pub const LOCK_NAMES: [&str; 8] = [
    TasLock::NAME,
    TtasLock::NAME,
    TicketLock::NAME,
    McsLock::NAME,
    StdMutex::NAME,
    ParkingLotMutex::NAME,
    RuntimeStoreReleaseLock::NAME,
    RuntimeFenceRelaxedLock::NAME,
];

/// Calls `$body` with `$L` bound to the lock type named `$name` (a `&str`);
/// evaluates to `Some(result)`, or `None` for an unknown name. Monomorphises
/// the caller's generic code once per lock, so the hot loop has no dispatch.
#[macro_export]
macro_rules! with_lock {
    ($name:expr, $L:ident => $body:expr) => {{
        use $crate::lock::*;
        match $name {
            "tas" => {
                type $L = TasLock;
                Some($body)
            }
            "ttas" => {
                type $L = TtasLock;
                Some($body)
            }
            "ticket" => {
                type $L = TicketLock;
                Some($body)
            }
            "mcs" => {
                type $L = McsLock;
                Some($body)
            }
            "std" => {
                type $L = StdMutex;
                Some($body)
            }
            "parking_lot" => {
                type $L = ParkingLotMutex;
                Some($body)
            }
            "runtime-store-release" => {
                type $L = RuntimeStoreReleaseLock;
                Some($body)
            }
            "runtime-fence-relaxed" => {
                type $L = RuntimeFenceRelaxedLock;
                Some($body)
            }
            _ => None,
        }
    }};
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::cell::UnsafeCell;

    struct Shared<L> {
        lock: L,
        value: UnsafeCell<u64>,
    }
    // SAFETY: `value` is only touched while `lock` is held.
    unsafe impl<L: Sync> Sync for Shared<L> {}

    fn hammer<L: RawLock>() -> u64 {
        let s = Shared {
            lock: L::new(),
            value: UnsafeCell::new(0),
        };
        // Two threads: FIFO spin locks (ticket, MCS) hand the lock to a
        // waiter that may be descheduled, and with more threads than CPUs
        // (or under qemu on a busy host) every hand-off can cost a timeslice.
        std::thread::scope(|sc| {
            for _ in 0..2 {
                let s = &s;
                sc.spawn(move || {
                    for _ in 0..20_000 {
                        let _g = s.lock.lock();
                        // SAFETY: the lock is held.
                        unsafe { *s.value.get() += 1 };
                    }
                });
            }
        });
        s.value.into_inner()
    }

    #[test]
    fn every_lock_excludes() {
        for name in LOCK_NAMES {
            let n = with_lock!(name, L => hammer::<L>()).unwrap();
            assert_eq!(n, 40_000, "{name} lost updates");
        }
        assert!(with_lock!("nope", L => hammer::<L>()).is_none());
    }

    #[test]
    fn ticket_lock_serves_in_fifo_order() {
        let lock = TicketLock::new();
        let order = std::sync::Mutex::new(Vec::new());
        let held = lock.lock();
        std::thread::scope(|s| {
            for i in 0..4u32 {
                // Each waiter draws its ticket only after the previous one has.
                while lock.tickets_drawn() != i + 1 {
                    std::thread::yield_now();
                }
                let (lock, order) = (&lock, &order);
                s.spawn(move || {
                    let g = lock.lock();
                    order.lock().unwrap().push((i, g.ticket()));
                });
            }
            while lock.tickets_drawn() != 5 {
                std::thread::yield_now();
            }
            drop(held);
        });
        let order = order.into_inner().unwrap();
        assert_eq!(order, vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
    }

    #[test]
    fn mcs_hands_off_to_the_queued_successor() {
        use std::sync::atomic::{AtomicBool as B, Ordering as O};
        let lock = McsLock::new();
        let got_it = B::new(false);
        let g = lock.lock();
        std::thread::scope(|s| {
            s.spawn(|| {
                let _g = lock.lock();
                got_it.store(true, O::Relaxed);
            });
            // The successor is queued behind us and must not get in.
            while lock.tail.load(Ordering::Relaxed) == g.node {
                std::thread::yield_now();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(!got_it.load(O::Relaxed), "MCS let a waiter in while held");
            drop(g);
        });
        assert!(got_it.load(O::Relaxed));
        assert!(
            lock.tail.load(Ordering::Relaxed).is_null(),
            "queue empty after hand-off"
        );
    }
}
