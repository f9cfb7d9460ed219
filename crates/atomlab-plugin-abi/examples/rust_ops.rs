//! An atomlab plugin in Rust: operations for `atomlab bench counter`,
//! exported with `export_plugin!` from this `cdylib`. The Rust twin of
//! `crates/atomlab/tests/plugins/op.c`, and one broken operation to show
//! the count check work:
//!
//! - `rust-fetch-add`: a Relaxed atomic increment, with `read` returning
//!   the count, so atomlab checks after every run that none was lost;
//! - `rust-fence`: a SeqCst fence alone (no `read`: nothing to count);
//! - `rust-load-store-add`: an increment made of an atomic load and a
//!   separate atomic store, no read-modify-write: with two threads on one
//!   state, increments are lost, and `bench counter` says so (an
//!   `incorrect` cell, exit 1) instead of timing it.
//!
//! ```text
//! cargo build --release -p atomlab-plugin-abi --example rust_ops
//! atomlab bench counter --plugin target/release/examples/librust_ops.so --variant fetch_add,rust-fetch-add,rust-fence
//! atomlab bench counter --plugin target/release/examples/librust_ops.so --variant rust-load-store-add --threads 2
//! ```

use std::sync::atomic::{fence, AtomicU64, Ordering};

use atomlab_plugin_abi::{export_plugin, Op};

/// A counter alone on its 64-byte cache line (a state per thread with
/// `--contention private` then shares no line).
#[repr(align(64))]
pub struct Counter(AtomicU64);

impl Op for Counter {
    const HAS_READ: bool = true;

    fn new() -> Self {
        Counter(AtomicU64::new(0))
    }

    fn op(&self) {
        // ORDERING: Relaxed: a statistics counter; only the total matters,
        // and the read-modify-write alone makes it exact.
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn read(&self) -> u64 {
        // ORDERING: Relaxed: read after atomlab's threads have stopped
        // (the harness's joins order it after their increments).
        self.0.load(Ordering::Relaxed)
    }
}

/// A sequentially consistent fence: the operation measured; no state.
pub struct Fence;

impl Op for Fence {
    fn new() -> Self {
        Fence
    }

    fn op(&self) {
        // ORDERING: SeqCst: the fence is what is measured.
        fence(Ordering::SeqCst);
    }
}

/// A broken counter: each access atomic, the increment not.
#[repr(align(64))]
pub struct LoadStoreAdd(AtomicU64);

impl Op for LoadStoreAdd {
    const HAS_READ: bool = true;

    fn new() -> Self {
        LoadStoreAdd(AtomicU64::new(0))
    }

    fn op(&self) {
        // ORDERING: Relaxed load and store, and that is the bug on purpose:
        // no ordering makes two accesses one atomic step, so another
        // thread's increment between them is overwritten.
        let v = self.0.load(Ordering::Relaxed);
        self.0.store(v.wrapping_add(1), Ordering::Relaxed);
    }

    fn read(&self) -> u64 {
        // ORDERING: as Counter::read.
        self.0.load(Ordering::Relaxed)
    }
}

export_plugin!(
    "rust-ops",
    op "rust-fetch-add" => Counter,
    op "rust-fence" => Fence,
    op "rust-load-store-add" => LoadStoreAdd,
);
