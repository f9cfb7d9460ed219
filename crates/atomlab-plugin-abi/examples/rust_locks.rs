//! An atomlab plugin in Rust: a ticket lock and a test-and-test-and-set
//! lock, exported with `export_locks!` from this `cdylib`. The Rust twin of
//! `crates/atomlab/tests/plugins/ticket.c` (and of the README's C example).
//!
//! ```text
//! cargo build --release -p atomlab-plugin-abi --example rust_locks
//! atomlab bench lock --plugin target/release/examples/librust_locks.so
//! atomlab stress mutex --plugin target/release/examples/librust_locks.so
//! ```

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use atomlab_plugin_abi::{export_locks, Lock};

/// A ticket lock (Mellor-Crummey and Scott 1991): FIFO by the ticket taken.
pub struct Ticket {
    next: AtomicU32,
    serving: AtomicU32,
}

impl Lock for Ticket {
    fn new() -> Self {
        Ticket {
            next: AtomicU32::new(0),
            serving: AtomicU32::new(0),
        }
    }

    fn lock(&self) {
        // ORDERING: Relaxed: taking a ticket orders nothing; the acquire
        // load of `serving` synchronises with the previous holder.
        let me = self.next.fetch_add(1, Ordering::Relaxed);
        // ORDERING: Acquire pairs with the Release store in `unlock`.
        while self.serving.load(Ordering::Acquire) != me {
            std::hint::spin_loop();
        }
    }

    fn unlock(&self) {
        // ORDERING: Relaxed: only the holder writes `serving`.
        let s = self.serving.load(Ordering::Relaxed);
        // ORDERING: Release publishes the critical section to the next holder.
        self.serving.store(s.wrapping_add(1), Ordering::Release);
    }
}

/// Test-and-test-and-set: spin on a plain load, then try a compare-exchange.
pub struct Ttas(AtomicBool);

impl Lock for Ttas {
    const HAS_TRY_LOCK: bool = true;

    fn new() -> Self {
        Ttas(AtomicBool::new(false))
    }

    fn lock(&self) {
        loop {
            // ORDERING: Relaxed peek, only a hint; the CAS acquires.
            if !self.0.load(Ordering::Relaxed) && self.try_lock() {
                return;
            }
            std::hint::spin_loop();
        }
    }

    fn unlock(&self) {
        // ORDERING: Release publishes the critical section to the next acquirer.
        self.0.store(false, Ordering::Release);
    }

    fn try_lock(&self) -> bool {
        // ORDERING: Acquire on success pairs with `unlock`'s Release;
        // Relaxed on failure: nothing was taken.
        self.0
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }
}

export_locks!("rust-locks", "rust-ticket" => Ticket, "rust-ttas" => Ttas);
