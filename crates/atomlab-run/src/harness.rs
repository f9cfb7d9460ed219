//! The run loop, after litmus7 (Alglave et al., TACAS 2011, section 3):
//! per run, the calling thread lays out `size` instances (initial memory
//! and register frames), releases the test's threads at a barrier, runs
//! thread 0 itself, meets the others at a second barrier, and only then
//! reads the final states, so that collecting never runs beside the test.
//! The threads are started and pinned once per test and serve every call
//! of [`run_calls`] (the tuner's calls, each in a setting of its own),
//! as litmus7's threads serve all of its runs.
//!
//! Memory ([`Layout`]): with `blocks`, instance blocks of
//! `round_up(locations × stride, 64)` bytes, 64-byte aligned; location `l`
//! of block `b` is at `b × block + l × stride`. Each run maps logical
//! instance `k` to a shuffled block, so the threads meet at addresses in a
//! different order every run. With `packed` (litmus7's `-memory direct`),
//! one 64-byte aligned array per location, instance `k`'s word at index
//! `k`, visited in order.
//!
//! The start state of a run (issue 26, after litmus7's `-preload` and
//! `-launch changing`; notes/issue26-research.md): with [`Preload`] other
//! than `none` each thread writes its own register frames and reads the
//! instance memory before the first instance, so no thread starts from
//! lines another core wrote last; with [`Roles::Rotate`] the test's
//! threads change OS threads (and CPUs) every run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use atomlab_litmus::{StateVar, Value};

use crate::host;
use crate::rng::Rng;
use crate::{
    Affinity, Layout, Phases, Preload, Program, Roles, RunBarrier, RunError, RunOptions, RunResult,
    SyncMode,
};

/// TSC ticks between the timebase's last arrival and the common start at
/// the first run, enough for the start time to reach every core before it
/// comes; then each run adapts it ([`adapt_delay`]). Measured on SB on the
/// 2-core KVM guest (TSC at 2.3 GHz, BENCHMARKS.md): what the delay needs
/// to be changes with where the hypervisor puts the vCPUs (100–250 ticks
/// gave the most witnesses per second in one setting, 500 in another).
const TIMEBASE_DELAY: u64 = 500;

/// The next run's timebase delay from this run's: a thread that first saw
/// an instance's start time after it had passed started late (the delay
/// was shorter than the time the start time took to reach it), which
/// spoils the alignment the timebase is for. More than 1 in 100 late: the
/// delay grows by half; none late: it shrinks by a sixteenth, to find the
/// shortest delay that still aligns (each tick of it is spent waiting, in
/// every instance). Bounded to 1/32 – 8x the starting delay.
fn adapt_delay(delay: u64, late: u64, arrivals: u64, start: u64) -> u64 {
    let next = if late * 100 > arrivals {
        delay + delay / 2 + 1
    } else if late == 0 {
        delay - delay / 16
    } else {
        delay
    };
    next.clamp((start / 32).max(1), start * 8)
}

#[repr(align(64))]
#[derive(Default)]
struct Padded<T>(T);

/// [`TIMEBASE_DELAY`] in this machine's ticks: TSC ticks on x86-64; on
/// AArch64 the same time (500 ticks at 2.3 GHz, about 220 ns) on the
/// generic timer, whose frequency CNTFRQ_EL0 gives, and on RISC-V on the
/// `time` CSR, at the device tree's timebase-frequency (at least one
/// tick).
pub(crate) fn timebase_delay() -> u64 {
    match host::timer_hz() {
        Some(hz) => (hz.saturating_mul(TIMEBASE_DELAY) / 2_300_000_000).max(1),
        None => TIMEBASE_DELAY,
    }
}

/// A barrier that spins instead of sleeping: a generation number the
/// last arriver advances.
struct SpinBarrier {
    n: u32,
    count: Padded<AtomicU32>,
    generation: Padded<AtomicU32>,
    /// More threads than CPUs: give the CPU up while waiting.
    polite: bool,
}

impl SpinBarrier {
    fn new(n: usize, polite: bool) -> SpinBarrier {
        SpinBarrier {
            n: n as u32,
            count: Padded::default(),
            generation: Padded::default(),
            polite,
        }
    }

    /// Returns when all `n` threads have called it; everything each did
    /// before is visible to all after.
    fn wait(&self) {
        // ORDERING: Acquire, Relaxed would do: read before this thread's
        // arrival, so the generation cannot have advanced yet (the last
        // arrival, which advances it, comes after ours).
        let g = self.generation.0.load(Ordering::Acquire);
        // ORDERING: AcqRel: the arrivals form one release sequence on the
        // counter, which the last arriver acquires (every thread's writes
        // before the barrier), and which it then releases to the others
        // through the generation.
        if self.count.0.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // ORDERING: Relaxed: the others next touch the counter after
            // acquiring the generation below, which is stored after this.
            self.count.0.store(0, Ordering::Relaxed);
            // ORDERING: Release: publishes every arrival's writes (acquired
            // above) and the counter's reset to the waiting threads.
            self.generation
                .0
                .store(g.wrapping_add(1), Ordering::Release);
        } else {
            let mut i: u32 = 0;
            // ORDERING: Acquire: pairs with the Release above.
            while self.generation.0.load(Ordering::Acquire) == g {
                std::hint::spin_loop();
                i = i.wrapping_add(1);
                if self.polite && i.is_multiple_of(8) {
                    std::thread::yield_now();
                }
            }
        }
    }
}

/// The barrier before and after each run ([`RunBarrier`]).
enum RunSync {
    Futex(Barrier),
    Spin(SpinBarrier),
}

impl RunSync {
    fn new(kind: RunBarrier, n: usize, polite: bool) -> RunSync {
        match kind {
            RunBarrier::Futex => RunSync::Futex(Barrier::new(n)),
            RunBarrier::Spin => RunSync::Spin(SpinBarrier::new(n, polite)),
        }
    }

    fn wait(&self) {
        match self {
            RunSync::Futex(b) => {
                b.wait();
            }
            RunSync::Spin(b) => b.wait(),
        }
    }
}

/// A zeroed array of `n` elements `step` apart starting on a 64-byte
/// boundary: the array and the index of its first element.
fn aligned_zeroed<T: Default>(
    n: usize,
    step: usize,
    what: &str,
) -> Result<(Vec<T>, usize), RunError> {
    let per_line = 64 / std::mem::size_of::<T>();
    let v: Vec<T> = zeroed(n * step + per_line, what)?;
    let p = v.as_ptr() as usize;
    let base = (p.next_multiple_of(64) - p) / std::mem::size_of::<T>();
    Ok((v, base))
}

/// The histogram's hasher: FxHash's multiply-rotate (rustc's
/// `rustc-hash`), a few cycles per word where SipHash takes tens; the keys
/// are final states of this process's own runs, so there is no
/// adversary to resist (issue 26, R4: counting once per instance).
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn write_isize(&mut self, i: isize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Final state -> instances that ended in it.
type Histogram = HashMap<Vec<Value>, u64, std::hash::BuildHasherDefault<FxHasher>>;

/// Everything the threads share during a run.
struct Shared<'p> {
    program: &'p Program,
    opts: &'p RunOptions,
    /// Instance memory (64-byte aligned from `mem_base`).
    mem: Vec<AtomicU64>,
    mem_base: usize,
    /// Blocks: words per instance block; packed: words per location array.
    block_words: usize,
    stride_words: usize,
    /// One frame array per thread of the test.
    frames: Vec<Vec<AtomicU64>>,
    /// Logical instance -> memory block, per run.
    perm: Vec<AtomicU32>,
    /// Start counter of instance `k` at `arrive_base + k × arrive_step`
    /// (one per line with blocks, dense with packed); the same for the
    /// start times.
    arrive: Vec<AtomicU32>,
    arrive_base: usize,
    arrive_step: usize,
    start_at: Vec<AtomicU64>,
    start_base: usize,
    start_step: usize,
    /// Where the threads wait for each other's preload.
    ready: SpinBarrier,
    /// The run under way, counted over every call of this setting (set
    /// by the owner before the start barrier).
    run_no: AtomicUsize,
    abort: AtomicBool,
    /// The number of the call that has ended, set by the owner before the
    /// start barrier that ends it: the threads leave this setting's loop.
    /// A number, not a flag: the next call may be of the same setting, and
    /// its owner must not clear a flag a thread has yet to read.
    ended_call: AtomicUsize,
    /// The call's deadline, in nanoseconds after `epoch` (`u64::MAX`:
    /// none); set by the owner while the threads wait between calls.
    deadline_ns: AtomicU64,
    epoch: Instant,
    /// The barriers before and after each run ([`RunBarrier`]).
    start: RunSync,
    end: RunSync,
    oversubscribed: bool,
    /// The CPUs the threads shared, when fewer than the threads.
    shared_cpus: Option<usize>,
    /// What its arrays take (what [`MEMORY_LIMIT`] bounds).
    bytes: usize,
    /// The timebase delay of the run under way, in timer ticks (set by
    /// the owner before the start barrier; [`adapt_delay`]).
    tb_delay: AtomicU64,
    /// Arrivals that saw their instance's start time already past, this run.
    tb_late: AtomicU64,
}

impl Shared<'_> {
    /// Whether `now` is past the call's deadline.
    fn past_deadline(&self, now: Instant) -> bool {
        // ORDERING: Relaxed: set by the owner before the call's first
        // start barrier, which publishes it.
        let d = self.deadline_ns.load(Ordering::Relaxed);
        d != u64::MAX && now.saturating_duration_since(self.epoch).as_nanos() > u128::from(d)
    }

    /// Sets the next call's deadline: `timeout` from now. Called by the
    /// owner while the other threads wait between calls.
    fn set_deadline(&self, timeout: Option<Duration>) {
        let ns = timeout.map_or(u64::MAX, |t| {
            let at = self.epoch.elapsed() + t;
            u64::try_from(at.as_nanos()).unwrap_or(u64::MAX - 1)
        });
        // ORDERING: Relaxed: the call's first start barrier publishes it.
        self.deadline_ns.store(ns, Ordering::Relaxed);
    }

    fn word(&self, block: usize, l: usize) -> &AtomicU64 {
        let i = match self.opts.layout {
            Layout::Blocks => block * self.block_words + l * self.stride_words,
            Layout::Packed => l * self.block_words + block,
        };
        &self.mem[self.mem_base + i]
    }

    fn arrive(&self, k: usize) -> &AtomicU32 {
        &self.arrive[self.arrive_base + k * self.arrive_step]
    }

    fn start_at(&self, k: usize) -> &AtomicU64 {
        &self.start_at[self.start_base + k * self.start_step]
    }

    /// The test thread OS thread `slot` runs in run `run`.
    fn role(&self, slot: usize, run: usize) -> usize {
        match self.opts.roles {
            Roles::Fixed => slot,
            Roles::Rotate => (slot + run) % self.program.threads.len(),
        }
    }

    fn addr(&self, block: usize, l: usize) -> u64 {
        self.word(block, l).as_ptr() as u64
    }

    fn frame(&self, t: usize, k: usize) -> &[AtomicU64] {
        let w = self.program.threads[t].layout.words();
        &self.frames[t][k * w..(k + 1) * w]
    }

    fn decode(&self, block: usize, v: u64) -> Value {
        // A value outside the instance memory is no location's address
        // (most final values are small integers): one range check per
        // value instead of a search of every location.
        let lo = self.mem.as_ptr() as u64;
        let hi = lo + (self.mem.len() * std::mem::size_of::<AtomicU64>()) as u64;
        if v < lo || v >= hi {
            return Value::Int(v as i64);
        }
        let nl = self.program.compiled.locations.len();
        (0..nl)
            .find(|&l| self.addr(block, l) == v)
            .map(Value::Loc)
            .unwrap_or(Value::Int(v as i64))
    }

    fn encode(&self, block: usize, v: Value) -> u64 {
        match v {
            Value::Int(i) => i as u64,
            Value::Loc(l) => self.addr(block, l),
            // Symbols are results only (atomlab check's thin-air values),
            // never a test's initial value.
            Value::Sym(_) => 0,
        }
    }

    /// Writes the initial state of every instance: the memory, and every
    /// thread's frames unless each thread writes its own ([`Preload`]).
    /// Called by the run's owner between runs, when no other thread
    /// touches the arrays.
    fn init(&self, rng: &mut Rng) {
        let size = self.opts.size;
        let mut perm: Vec<u32> = (0..size as u32).collect();
        if self.opts.layout == Layout::Blocks {
            for i in (1..size).rev() {
                perm.swap(i, rng.below(i + 1));
            }
        }
        let t = &self.program.compiled;
        for (k, &b) in perm.iter().enumerate() {
            // ORDERING: Relaxed: the start barrier publishes all of the
            // run's initial state to the test's threads.
            self.perm[k].store(b, Ordering::Relaxed);
            let b = b as usize;
            for l in 0..t.locations.len() {
                self.word(b, l).store(0, Ordering::Relaxed);
            }
            for (l, v) in &t.init {
                self.word(b, *l)
                    .store(self.encode(b, *v), Ordering::Relaxed);
            }
            if self.opts.preload == Preload::None {
                for ti in 0..t.threads.len() {
                    self.init_frame(ti, k, b);
                }
            }
            // ORDERING: Relaxed: timing counters only; no data is published
            // through them (the barriers order the data).
            self.arrive(k).store(0, Ordering::Relaxed);
            self.start_at(k).store(0, Ordering::Relaxed);
        }
    }

    /// Writes thread `ti`'s frame of instance `k`, laid out in block `b`.
    fn init_frame(&self, ti: usize, k: usize, b: usize) {
        let th = &self.program.compiled.threads[ti];
        let layout = self.program.threads[ti].layout;
        let f = self.frame(ti, k);
        // ORDERING: Relaxed, all of them: the frames are published to the
        // thread that runs them by the start barrier (written by the
        // owner) or written by that thread itself, and read by the
        // collection after the end barrier.
        for w in f {
            w.store(0, Ordering::Relaxed);
        }
        for l in 0..self.program.compiled.locations.len() {
            f[layout.loc_word(l)].store(self.addr(b, l), Ordering::Relaxed);
        }
        // Exactly the values the address checks judged
        // (Thread::init_value).
        for &(r, _) in &th.init {
            f[layout.reg_word(r)].store(self.encode(b, th.init_value(r)), Ordering::Relaxed);
        }
        f[layout.budget_word()].store(self.opts.loop_budget.max(1), Ordering::Relaxed);
    }

    /// Writes every frame of test thread `ti` for this run (after the
    /// start barrier, which publishes the run's order).
    fn init_frames(&self, ti: usize) {
        for k in 0..self.opts.size {
            // ORDERING: Relaxed: written by the owner before the start
            // barrier.
            let b = self.perm[k].load(Ordering::Relaxed) as usize;
            self.init_frame(ti, k, b);
        }
    }

    /// Reads the instance memory as [`Preload`] says, in instance order
    /// (litmus7's `check_globals`): the lines end up shared with the
    /// other threads' caches rather than owned by the run's owner.
    fn preload(&self, slot: usize, run: usize) {
        let nl = self.program.compiled.locations.len();
        let mut rng = Rng::new(
            self.opts.seed
                ^ (((run as u64) << 20) | (slot as u64 + 1)).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let (mut bits, mut left) = (0u64, 0u32);
        for k in 0..self.opts.size {
            // ORDERING: Relaxed: as in init_frames.
            let b = self.perm[k].load(Ordering::Relaxed) as usize;
            for l in 0..nl {
                let read = match self.opts.preload {
                    Preload::None | Preload::Frames => return,
                    Preload::All => true,
                    Preload::Random => {
                        if left == 0 {
                            (bits, left) = (rng.next_u64(), 64);
                        }
                        let coin = bits & 1 == 1;
                        (bits, left) = (bits >> 1, left - 1);
                        coin
                    }
                };
                if read {
                    // ORDERING: Relaxed: only the cache state matters; the
                    // value is the owner's, published by the start barrier.
                    std::hint::black_box(self.word(b, l).load(Ordering::Relaxed));
                }
            }
        }
    }

    /// Spins until `done()`; false if the run was aborted (deadline).
    fn spin(&self, done: impl Fn() -> bool) -> bool {
        let mut n: u32 = 0;
        while !done() {
            std::hint::spin_loop();
            n = n.wrapping_add(1);
            // More threads than CPUs: a spinner holds the CPU a thread it
            // waits for needs, so it gives the CPU up at once.
            if self.oversubscribed && n.is_multiple_of(8) {
                std::thread::yield_now();
            }
            if n.is_multiple_of(1024) {
                // ORDERING: Relaxed: the flag only tells spinners to stop;
                // the end barrier orders everything after it.
                if self.abort.load(Ordering::Relaxed) {
                    return false;
                }
                if self.past_deadline(Instant::now()) {
                    // ORDERING: Relaxed: as above.
                    self.abort.store(true, Ordering::Relaxed);
                    return false;
                }
            }
        }
        true
    }

    /// OS thread `slot`'s part of one run: its frames and preload when
    /// [`Preload`] says so, then every instance in logical order as the
    /// test thread [`Shared::role`] gives. Returns the time until the
    /// instances began.
    fn batch(&self, slot: usize) -> Duration {
        let began = Instant::now();
        // ORDERING: Relaxed: written before the start barrier.
        let run = self.run_no.load(Ordering::Relaxed);
        let t = self.role(slot, run);
        if self.opts.preload != Preload::None {
            self.init_frames(t);
            self.preload(slot, run);
            // Nobody starts an instance while another thread still
            // writes its frames or reads the memory.
            self.ready.wait();
        }
        let prepared = began.elapsed();
        let n = self.program.threads.len() as u32;
        let code = &self.program.threads[t];
        // SAFETY: the page holds a complete function generated by the
        // host's codegen for its ABI, taking one pointer to a frame of
        // `layout.words()` words; it is mapped executable (code.rs) and
        // outlives the runs.
        let f = unsafe { host::entry(code.page.as_ptr()) };
        // The code was written by another thread: what the ISA asks before
        // running it (host.rs).
        host::before_new_code();
        // ORDERING: Relaxed: set by the owner before the start barrier.
        let tb_delay = self.tb_delay.load(Ordering::Relaxed);
        let mut late = 0u64;
        for k in 0..self.opts.size {
            match self.opts.sync {
                SyncMode::None => {}
                SyncMode::Spin | SyncMode::UserFence => {
                    // ORDERING: Relaxed: the counter only aligns start
                    // times; the data of the run is published by the
                    // start barrier and read after the end barrier.
                    self.arrive(k).fetch_add(1, Ordering::Relaxed);
                    if !self.spin(|| self.arrive(k).load(Ordering::Relaxed) >= n) {
                        return prepared;
                    }
                }
                SyncMode::Leader => {
                    if k % n as usize == slot {
                        // ORDERING: Relaxed store, then the host's full
                        // fence (MFENCE; DMB ISH; FENCE RW,RW: host.rs):
                        // the flag leaves the store buffer before the
                        // leader runs the test, as litmus7's userfence
                        // barrier does with mbar(). The flag carries no
                        // data: the run's memory was published by the
                        // start barrier.
                        self.arrive(k).store(1, Ordering::Relaxed);
                        host::full_fence();
                    } else if !self.spin(|| self.arrive(k).load(Ordering::Relaxed) != 0) {
                        // ORDERING: Relaxed: the flag only aligns start times.
                        return prepared;
                    }
                }
                SyncMode::Timebase => {
                    // ORDERING: Relaxed, as for Spin; the start time is
                    // itself the only value passed.
                    if self.arrive(k).fetch_add(1, Ordering::Relaxed) + 1 == n {
                        self.start_at(k)
                            .store(host::ticks() + tb_delay, Ordering::Relaxed);
                    }
                    if !self.spin(|| self.start_at(k).load(Ordering::Relaxed) != 0) {
                        return prepared;
                    }
                    let at = self.start_at(k).load(Ordering::Relaxed);
                    if host::ticks() >= at {
                        late += 1;
                    }
                    if !self.spin(|| host::ticks() >= at) {
                        return prepared;
                    }
                }
            }
            if self.opts.sync == SyncMode::UserFence {
                // ORDERING: the host's full fence (MFENCE on x86-64, DMB
                // ISH on AArch64, FENCE RW,RW on RISC-V: host.rs): drains
                // this thread's store buffer (the counter's write) before
                // the test runs.
                host::full_fence();
            }
            let frame = self.frame(t, k).as_ptr() as *mut u64;
            f(frame);
        }
        // ORDERING: Relaxed: read by the owner after the end barrier.
        self.tb_late.fetch_add(late, Ordering::Relaxed);
        prepared
    }
}

/// The most memory a run may allocate for its instances: instance
/// memory, every thread's register frames and the per-instance counters.
pub(crate) const MEMORY_LIMIT: usize = 2 << 30;

/// A zeroed array of `n` elements, or an error naming what it was for when
/// the allocator refuses (instead of aborting the process).
fn zeroed<T: Default>(n: usize, what: &str) -> Result<Vec<T>, RunError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        RunError::Os(format!(
            "cannot allocate {} MiB for {what}: the system refused the memory; lower --size",
            (n * std::mem::size_of::<T>()) >> 20
        ))
    })?;
    v.resize_with(n, T::default);
    Ok(v)
}

/// What one instance of a test takes in a layout.
struct Sizes {
    /// Blocks: words per instance; packed: words per location array.
    block_words: usize,
    memory_per_instance: usize,
    arrive_step: usize,
    start_step: usize,
    frame_words: usize,
    /// Bytes in all: memory, frames and counters.
    per_instance: usize,
}

impl Sizes {
    fn of(program: &Program, opts: &RunOptions) -> Sizes {
        let nl = program.compiled.locations.len().max(1);
        let stride_words = opts.stride / 8;
        let (block_words, memory_per_instance, arrive_step, start_step) = match opts.layout {
            Layout::Blocks => {
                let w = (nl * stride_words).div_ceil(8) * 8;
                (w, w * 8, 16, 8)
            }
            Layout::Packed => (opts.size.div_ceil(8) * 8, nl * 8, 1, 1),
        };
        let frame_words: usize = program.threads.iter().map(|c| c.layout.words()).sum();
        let per_instance = memory_per_instance
            + frame_words * 8
            + std::mem::size_of::<AtomicU32>()
            + std::mem::size_of::<AtomicU32>() * arrive_step
            + std::mem::size_of::<AtomicU64>() * start_step;
        Sizes {
            block_words,
            memory_per_instance,
            arrive_step,
            start_step,
            frame_words,
            per_instance,
        }
    }

    /// Bytes of `size` instances (saturating: [`Shared::new`] refuses
    /// what passes [`MEMORY_LIMIT`]).
    fn total(program: &Program, opts: &RunOptions) -> usize {
        opts.size
            .saturating_mul(Sizes::of(program, opts).per_instance)
    }
}

impl<'p> Shared<'p> {
    /// Lays out the instances of `program` for runs of `opts`: refused,
    /// before anything is allocated, when they would need more than
    /// [`MEMORY_LIMIT`], and with an error (not an abort) when the system
    /// refuses an allocation.
    /// `cpus`: the CPUs the process may use, read before any thread was
    /// pinned (a pinned caller's own set is its one CPU).
    fn new(
        program: &'p Program,
        opts: &'p RunOptions,
        cpus: &[usize],
    ) -> Result<Shared<'p>, RunError> {
        let t = &program.compiled;
        let nthreads = t.threads.len();
        let nl = t.locations.len().max(1);
        let stride_words = opts.stride / 8;
        let sizes = Sizes::of(program, opts);
        let (block_words, per_instance) = (sizes.block_words, sizes.per_instance);
        let (arrive_step, start_step) = (sizes.arrive_step, sizes.start_step);
        let or_stride = if opts.layout == Layout::Blocks {
            " or --stride"
        } else {
            ""
        };
        opts.size
            .checked_mul(per_instance)
            .filter(|b| *b <= MEMORY_LIMIT)
            .ok_or_else(|| {
                RunError::BadOption(format!(
                    "--size {}: this test's instances would need {} MiB ({} bytes each: {} of instance memory, {} of register frames for its {nthreads} threads, the rest counters), more than the limit of {} MiB; lower --size (at most {}){or_stride}",
                    opts.size,
                    (opts.size as u128 * per_instance as u128) >> 20,
                    per_instance,
                    sizes.memory_per_instance,
                    sizes.frame_words * 8,
                    MEMORY_LIMIT >> 20,
                    MEMORY_LIMIT / per_instance,
                ))
            })?;
        let arrays = match opts.layout {
            Layout::Blocks => opts.size,
            Layout::Packed => nl,
        };
        let bytes = opts.size * per_instance;
        let (mem, mem_base) = aligned_zeroed(arrays * block_words, 1, "the instance memory")?;
        let (arrive, arrive_base) = aligned_zeroed(opts.size, arrive_step, "the start counters")?;
        let (start_at, start_base) = aligned_zeroed(opts.size, start_step, "the start times")?;
        let mut frames = Vec::with_capacity(nthreads);
        for c in &program.threads {
            frames.push(zeroed(opts.size * c.layout.words(), "the register frames")?);
        }
        // The CPUs the threads may run on: those allowed, or those --pin
        // lists; fewer than the threads and they take turns.
        let usable = match &opts.affinity {
            Affinity::Cpus(l) => {
                let mut u = l.clone();
                u.sort();
                u.dedup();
                u.len().min(cpus.len().max(1))
            }
            Affinity::Spread | Affinity::None => cpus.len().max(1),
        };
        let oversubscribed = nthreads > usable;
        let shared_cpus = oversubscribed.then_some(usable);
        Ok(Shared {
            program,
            opts,
            mem,
            mem_base,
            block_words,
            stride_words,
            frames,
            perm: zeroed(opts.size, "the instance order")?,
            arrive,
            arrive_base,
            arrive_step,
            start_at,
            start_base,
            start_step,
            ready: SpinBarrier::new(nthreads, oversubscribed),
            run_no: AtomicUsize::new(0),
            abort: AtomicBool::new(false),
            ended_call: AtomicUsize::new(usize::MAX),
            deadline_ns: AtomicU64::new(u64::MAX),
            epoch: Instant::now(),
            start: RunSync::new(opts.run_barrier, nthreads, oversubscribed),
            end: RunSync::new(opts.run_barrier, nthreads, oversubscribed),
            oversubscribed,
            shared_cpus,
            bytes,
            tb_delay: AtomicU64::new(opts.timebase_delay.unwrap_or_else(timebase_delay).max(1)),
            tb_late: AtomicU64::new(0),
        })
    }
}

/// The stack each test thread gets: the generated code uses a few words
/// of it; the rest is the Rust runtime's. Fixed, so that the address-space
/// check of [`atomlab_thread::Group::new`] is about what is really mapped.
const THREAD_STACK: usize = 2 << 20;

/// The run's error for threads that could not all start.
fn not_started(e: atomlab_thread::SpawnError) -> RunError {
    RunError::Os(format!("{e}; nothing was run"))
}

/// Runs `program` as `opts` says and counts the final states.
pub fn run(program: &Program, opts: &RunOptions) -> Result<RunResult, RunError> {
    let plans = [Plan { program, opts }];
    run_calls(&plans, |calls| {
        calls.call(0, opts.runs, opts.seed, opts.timeout)
    })
}

/// One setting a caller of [`run_calls`] may run: the test's code and the
/// options its memory and its threads' start follow (`runs`, `seed` and
/// `timeout` are given per call).
pub struct Plan<'p> {
    /// The test's code (every plan's has the same threads).
    pub program: &'p Program,
    /// The setting.
    pub opts: &'p RunOptions,
}

/// What [`run_calls`] hands its caller: calls of runs of any of the
/// plans, on one set of threads.
pub struct Calls<'s, 'p> {
    plans: &'p [Plan<'p>],
    /// Each plan's memory and barriers, laid out at its first call.
    shared: &'s [PlanMemory<'p>],
    /// Bytes of memory laid out now, over every plan.
    laid_out: usize,
    /// The most `laid_out` may be ([`MEMORY_LIMIT`]).
    limit: usize,
    /// The plan of the call under way, or [`NO_MORE_CALLS`]; set by the
    /// owner before the call barrier.
    current: &'s AtomicUsize,
    /// The number of the call under way; set with `current`.
    call_no: &'s AtomicUsize,
    /// Calls made so far.
    calls_made: usize,
    /// Where the threads wait between calls.
    between: &'s Barrier,
    placement: &'s [Option<usize>],
    /// The CPUs the process may use, read before the threads were pinned.
    cpus: &'s [usize],
    pin_errors: &'s std::sync::Mutex<Vec<String>>,
    /// Whether a call has run: the first pays for the threads' start.
    started: bool,
    /// When the threads began to start: the first call's time counts from
    /// here, so that a test's seconds include its threads' start.
    spawned_at: Instant,
}

/// A plan's memory and barriers once laid out: shared by the owner and,
/// during a call, by the threads.
type PlanMemory<'p> = Mutex<Option<Arc<Shared<'p>>>>;

/// [`Calls::current`] when the threads are to end.
const NO_MORE_CALLS: usize = usize::MAX;

/// Starts the test's threads once, pinned as the first plan says, and
/// gives `body` the [`Calls`] that run any plan on them, as often as it
/// likes: a call costs a meeting of the threads (tens of microseconds),
/// not their start, their pinning and a new layout of the memory (0.7-1.2
/// ms on the 2-vCPU KVM guest, as much as a run of SB's 1,000 instances),
/// which the tuner would otherwise pay on each of its calls. The threads
/// end when `body` returns (or panics).
pub fn run_calls<'p, T>(
    plans: &'p [Plan<'p>],
    body: impl FnOnce(&mut Calls<'_, 'p>) -> Result<T, RunError>,
) -> Result<T, RunError> {
    run_calls_within(plans, MEMORY_LIMIT, body)
}

/// [`run_calls`], the plans' memory together kept within `limit` bytes.
fn run_calls_within<'p, T>(
    plans: &'p [Plan<'p>],
    limit: usize,
    body: impl FnOnce(&mut Calls<'_, 'p>) -> Result<T, RunError>,
) -> Result<T, RunError> {
    let first = plans
        .first()
        .ok_or_else(|| RunError::BadOption("no setting to run".into()))?;
    let nthreads = first.program.compiled.threads.len();
    for plan in plans {
        plan.opts.validate()?;
        assert_eq!(
            plan.program.compiled.threads.len(),
            nthreads,
            "every plan runs the same test"
        );
    }
    let cpus = atomlab_thread::allowed_cpus();
    let placement: Vec<Option<usize>> = (0..nthreads)
        .map(|i| match &first.opts.affinity {
            Affinity::Spread => cpus.get(i % cpus.len().max(1)).copied(),
            Affinity::None => None,
            Affinity::Cpus(list) => list.get(i % list.len().max(1)).copied(),
        })
        .collect();
    let shared: Vec<PlanMemory<'p>> = plans.iter().map(|_| Mutex::new(None)).collect();
    let current = AtomicUsize::new(NO_MORE_CALLS);
    let call_no = AtomicUsize::new(0);
    let between = Barrier::new(nthreads);
    let pin_errors = std::sync::Mutex::new(Vec::new());
    let pin = |i: usize| {
        if let Some(c) = placement[i] {
            if let Err(e) = atomlab_thread::pin_current_thread(c) {
                if let Ok(mut v) = pin_errors.lock() {
                    v.push(format!("thread P{i} on CPU {c}: {e}"));
                }
            }
        }
    };
    let spawned_at = Instant::now();
    let outcome = std::thread::scope(|s| {
        // Nothing waits at the barriers until every thread exists: a thread
        // the system refuses would leave the others waiting there for ever.
        let mut group = atomlab_thread::Group::new(s, nthreads.saturating_sub(1), THREAD_STACK)
            .map_err(not_started)?;
        for i in 1..nthreads {
            let (shared, current, call_no, between, pin) =
                (&shared, &current, &call_no, &between, &pin);
            group
                .spawn(format!("P{i} of {nthreads}"), move || {
                    pin(i);
                    loop {
                        between.wait();
                        // ORDERING: Relaxed: written before the call
                        // barrier, which orders it before this read.
                        let k = current.load(Ordering::Relaxed);
                        // ORDERING: Relaxed: as `current`.
                        let this_call = call_no.load(Ordering::Relaxed);
                        // The call's layout, held until the call ends (the
                        // owner may let it go between calls).
                        let Some(sh) = shared
                            .get(k)
                            .and_then(|m| m.lock().ok().and_then(|s| s.clone()))
                        else {
                            break;
                        };
                        loop {
                            sh.start.wait();
                            // ORDERING: Relaxed: written before the start
                            // barrier, which orders it before this read.
                            if sh.ended_call.load(Ordering::Relaxed) == this_call {
                                break;
                            }
                            sh.batch(i);
                            sh.end.wait();
                        }
                    }
                })
                .map_err(not_started)?;
        }
        group.open();
        pin(0);
        // The threads end however `body` leaves, a panic included: they
        // wait between calls until told there are no more.
        struct NoMoreCalls<'a>(&'a AtomicUsize, &'a Barrier);
        impl Drop for NoMoreCalls<'_> {
            fn drop(&mut self) {
                // ORDERING: Relaxed: the call barrier publishes it.
                self.0.store(NO_MORE_CALLS, Ordering::Relaxed);
                self.1.wait();
            }
        }
        let _end = NoMoreCalls(&current, &between);
        let mut calls = Calls {
            plans,
            shared: &shared,
            laid_out: 0,
            limit,
            current: &current,
            call_no: &call_no,
            calls_made: 0,
            between: &between,
            placement: &placement,
            cpus: &cpus,
            pin_errors: &pin_errors,
            started: false,
            spawned_at,
        };
        body(&mut calls)
    });
    // The calling thread may run anywhere again.
    let _ = atomlab_thread::set_current_thread_cpus(&cpus);
    outcome
}

impl<'p> Calls<'_, 'p> {
    /// Runs plan `k` `runs` times, its instances shuffled from `seed`,
    /// stopping at `timeout` from now, and counts the final states.
    pub fn call(
        &mut self,
        k: usize,
        runs: usize,
        seed: u64,
        timeout: Option<Duration>,
    ) -> Result<RunResult, RunError> {
        let plan = self
            .plans
            .get(k)
            .ok_or_else(|| RunError::BadOption(format!("no setting {k} to run")))?;
        let (program, opts) = (plan.program, plan.opts);
        // A call's seconds: its layout of the memory (at a setting's first
        // call), the threads' meeting and its runs; the first call's also
        // the threads' start.
        let first = !self.started;
        self.started = true;
        let began = if first {
            self.spawned_at
        } else {
            Instant::now()
        };
        let laid = self.shared[k].lock().ok().and_then(|s| s.clone());
        let shared = match laid {
            Some(sh) => sh,
            None => {
                // Each plan's memory stays laid out for its next call, the
                // plans together within the one limit: when this one would
                // pass it, the others are let go (and laid out again at
                // their next call, as when every call laid out its own).
                if self.laid_out + Sizes::total(program, opts) > self.limit {
                    for slot in self.shared {
                        if let Ok(mut s) = slot.lock() {
                            s.take();
                        }
                    }
                    self.laid_out = 0;
                }
                let sh = Arc::new(Shared::new(program, opts, self.cpus)?);
                self.laid_out += sh.bytes;
                if let Ok(mut s) = self.shared[k].lock() {
                    *s = Some(sh.clone());
                }
                sh
            }
        };
        let shared = &*shared;
        let vars = program.test.state_vars();
        let mut phases = Phases::default();
        let mut hist = Histogram::default();
        let (mut filtered, mut exhausted, mut runs_done, mut timed_out) =
            (0u64, 0u64, 0usize, false);
        let met = Instant::now();
        shared.set_deadline(timeout);
        let this_call = self.calls_made;
        self.calls_made += 1;
        // ORDERING: Relaxed all three: the call barrier below publishes
        // them to the threads (which, between calls, read none of them).
        shared.abort.store(false, Ordering::Relaxed);
        self.current.store(k, Ordering::Relaxed);
        self.call_no.store(this_call, Ordering::Relaxed);
        self.between.wait();
        phases.startup += met.elapsed();
        let mut rng = Rng::new(seed);
        for _ in 0..runs {
            let t0 = Instant::now();
            if shared.past_deadline(t0) {
                timed_out = true;
                break;
            }
            shared.init(&mut rng);
            let t1 = Instant::now();
            shared.start.wait();
            let t2 = Instant::now();
            let prepared = shared.batch(0);
            let t3 = Instant::now();
            shared.end.wait();
            let t4 = Instant::now();
            phases.init += t1 - t0;
            if first && runs_done == 0 {
                // The threads just started reach their first barrier.
                phases.startup += t2 - t1;
            } else {
                phases.barriers += t2 - t1;
            }
            phases.barriers += t4 - t3;
            phases.preload += prepared;
            phases.instances += (t3 - t2).saturating_sub(prepared);
            // ORDERING: Relaxed: set before the end barrier by the thread
            // that saw the deadline.
            if shared.abort.load(Ordering::Relaxed) {
                // The run was cut short: its instances are incomplete.
                timed_out = true;
                break;
            }
            runs_done += 1;
            // ORDERING: Relaxed both: only this thread writes the count,
            // and the next start barrier publishes it.
            shared
                .run_no
                .store(shared.run_no.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            if opts.sync == SyncMode::Timebase && opts.timebase_delay.is_none() {
                // ORDERING: Relaxed both: the end barrier ordered the
                // threads' counts before this read, and the start barrier
                // publishes the new delay.
                let late = shared.tb_late.swap(0, Ordering::Relaxed);
                let delay = shared.tb_delay.load(Ordering::Relaxed);
                let arrivals = (opts.size * program.threads.len()) as u64;
                shared.tb_delay.store(
                    adapt_delay(delay, late, arrivals, timebase_delay()),
                    Ordering::Relaxed,
                );
            }
            collect(shared, &vars, &mut hist, &mut filtered, &mut exhausted);
            phases.collect += t4.elapsed();
        }
        // ORDERING: Relaxed: the start barrier publishes it; the threads
        // then wait for the next call.
        shared.ended_call.store(this_call, Ordering::Relaxed);
        shared.start.wait();
        let elapsed = began.elapsed();
        let prop = &program.test.condition.prop;
        let mut histogram: Vec<(Vec<Value>, u64, bool)> = hist
            .into_iter()
            .map(|(s, n)| {
                let holds = prop.eval(&|v: &StateVar| {
                    vars.iter()
                        .position(|x| x == v)
                        .map(|i| s[i])
                        .unwrap_or(Value::Int(0))
                });
                (s, n, holds)
            })
            .collect();
        histogram.sort();
        let positive = histogram.iter().filter(|h| h.2).map(|h| h.1).sum();
        let negative = histogram.iter().filter(|h| !h.2).map(|h| h.1).sum();
        Ok(RunResult {
            vars,
            histogram,
            positive,
            negative,
            filtered,
            budget_exhausted: exhausted,
            runs_done,
            elapsed,
            timed_out,
            cpus: self.placement.to_vec(),
            pin_errors: self
                .pin_errors
                .lock()
                .map(|v| v.clone())
                .unwrap_or_default(),
            phases,
            shared_cpus: shared.shared_cpus,
        })
    }
}

/// Reads every instance's final state into the histogram (after the end
/// barrier: the test's threads are waiting at the next start).
fn collect(
    sh: &Shared<'_>,
    vars: &[StateVar],
    hist: &mut Histogram,
    filtered: &mut u64,
    exhausted: &mut u64,
) {
    let t = &sh.program.compiled;
    let mut state = Vec::with_capacity(vars.len());
    // The last few distinct final states and their counts, before the
    // hash map: a run's instances end in a handful of states, most often
    // the one before, and comparing a few values costs less than hashing
    // them (issue 38: collection was a fifth of a tuned SB's time).
    let mut recent: Vec<(Vec<Value>, u64)> = Vec::with_capacity(RECENT_STATES);
    for k in 0..sh.opts.size {
        // ORDERING: Relaxed: the end barrier orders the run's writes before
        // these reads.
        let b = sh.perm[k].load(Ordering::Relaxed) as usize;
        let get = |v: &StateVar| -> Value {
            match v {
                StateVar::Reg { thread, reg } => {
                    let layout = sh.program.threads[*thread].layout;
                    let w = sh.frame(*thread, k)[layout.reg_word(*reg)].load(Ordering::Relaxed);
                    sh.decode(b, w)
                }
                StateVar::Loc(l) => sh.decode(b, sh.word(b, *l).load(Ordering::Relaxed)),
            }
        };
        let out_of_budget = (0..t.threads.len()).any(|ti| {
            let layout = sh.program.threads[ti].layout;
            sh.frame(ti, k)[layout.budget_word()].load(Ordering::Relaxed) == 0
        });
        if out_of_budget {
            *exhausted += 1;
            continue;
        }
        if let Some(f) = &t.filter {
            if !f.eval(&get) {
                *filtered += 1;
                continue;
            }
        }
        state.clear();
        state.extend(vars.iter().map(get));
        if let Some(i) = recent.iter().position(|(s, _)| *s == state) {
            recent[i].1 += 1;
            continue;
        }
        if recent.len() == RECENT_STATES {
            let (s, n) = recent.remove(0);
            count_into(hist, s, n);
        }
        recent.push((state.clone(), 1));
    }
    for (s, n) in recent {
        count_into(hist, s, n);
    }
}

/// How many distinct final states [`collect`] keeps beside the histogram.
const RECENT_STATES: usize = 4;

fn count_into(hist: &mut Histogram, state: Vec<Value>, n: u64) {
    *hist.entry(state).or_insert(0) += n;
}

/// The property the address checks exist for: whatever a test's initial
/// state says (one register given twice, aliases of one register such as
/// eax and rax, upper and lower case, integers that look like addresses),
/// every address the generated code can use points into the instance
/// memory. Tests with a register or location initialised twice must be
/// refused by the parser; the others, and hand-built tests that list a
/// register twice (as a parser that let them through would give), are
/// either refused before anything runs or load only in-bounds addresses,
/// and then run.
#[cfg(test)]
mod tests {
    use super::adapt_delay;

    /// Plans whose memory together passes the limit take turns: each
    /// call lays its plan out again once the others were let go, and every
    /// call still runs all of its runs.
    #[test]
    fn plans_beyond_the_memory_limit_take_turns() {
        use super::{run_calls_within, Plan, Sizes};
        use crate::{Layout, RunOptions};
        // A C test: every host runs it, through its C11 mapping.
        let test = atomlab_litmus::parse(
            "SB+rel-acq.litmus",
            include_str!("../../atomlab-model/tests/litmus/c/SB+rel-acq.litmus"),
        )
        .expect("SB parses");
        let program = crate::prepare(&test).expect("every host runs C tests");
        let base = RunOptions {
            size: 64,
            ..RunOptions::default()
        };
        let packed = RunOptions {
            layout: Layout::Packed,
            ..base.clone()
        };
        let plans = [
            Plan {
                program: &program,
                opts: &base,
            },
            Plan {
                program: &program,
                opts: &packed,
            },
        ];
        let one = Sizes::total(&program, &base).max(Sizes::total(&program, &packed));
        let limit = one + one / 2;
        run_calls_within(&plans, limit, |calls| {
            for n in 0..6 {
                let r = calls.call(n % 2, 2, n as u64, None)?;
                assert_eq!(r.runs_done, 2);
                assert!(
                    calls.laid_out <= limit,
                    "call {n}: {} > {limit}",
                    calls.laid_out
                );
            }
            Ok(())
        })
        .unwrap();
        // Within a limit that holds both, both stay laid out.
        run_calls_within(&plans, 4 * one, |calls| {
            for n in 0..4 {
                calls.call(n % 2, 1, n as u64, None)?;
            }
            assert!(calls.laid_out > one, "both plans laid out");
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn the_timebase_delay_grows_when_threads_start_late_and_shrinks_when_none_do() {
        // 2 of 100 arrivals late: grows by half.
        assert_eq!(adapt_delay(500, 2, 100, 500), 751);
        // 1 of 100: holds.
        assert_eq!(adapt_delay(500, 1, 100, 500), 500);
        // None late: shrinks by a sixteenth.
        assert_eq!(adapt_delay(500, 0, 100, 500), 469);
        // Bounded to 1/32 - 8x the starting delay.
        assert_eq!(adapt_delay(16, 0, 100, 500), 15);
        assert_eq!(adapt_delay(15, 0, 100, 500), 15);
        assert_eq!(adapt_delay(3900, 50, 100, 500), 4000);
        // A tiny starting delay never reaches zero.
        assert_eq!(adapt_delay(1, 0, 100, 1), 1);
    }

    use super::*;
    use crate::addresses::addresses;
    use atomlab_litmus::{Arch, Expr, Instr};

    /// Register names of the test's ISA, in groups that name one register.
    fn aliases(arch: Arch) -> &'static [&'static [&'static str]] {
        match arch {
            Arch::X86 => &[&["EAX", "eax", "Eax"], &["EBX", "ebx"]],
            Arch::X86_64 => &[&["rax", "eax", "RAX", "EAX"], &["rbx", "ebx", "RBX"]],
            Arch::AArch64 => &[&["X1", "W1", "x1", "w1"], &["X3", "W3", "x3"]],
            Arch::RiscV => &[&["x5", "t0", "X5", "T0"], &["x6", "t1", "x6"]],
            Arch::C => &[&["r0"], &["r1"]],
        }
    }

    /// A thread that stores through both registers of [`aliases`].
    fn code(arch: Arch, t: usize) -> String {
        match arch {
            Arch::X86 => " MOV [EAX],$1 ; MOV [EBX],$2 ;".into(),
            Arch::X86_64 => " movq $1,(%rax) ; movq $2,(%rbx) ;".into(),
            Arch::AArch64 => " MOV W2,#1 ; STR W2,[X1] ; STR W2,[X3] ;".into(),
            Arch::RiscV => " ori x7,x0,1 ; sw x7,0(x5) ; sw x7,0(x6) ;".into(),
            Arch::C => format!(
                "P{t}(int *x, int *y) {{\n  int *r0;\n  int *r1;\n  *r0 = 1;\n  *r1 = 2;\n}}\n"
            ),
        }
    }

    const VALUES: &[&str] = &[
        "x",
        "y",
        "z",
        "0",
        "1",
        "0x41414141",
        "-8",
        "140737488289792",
    ];

    /// A test of `arch` with `threads` threads and a random initial state;
    /// whether it names one register or one location twice.
    fn generate(arch: Arch, threads: usize, rng: &mut Rng) -> (String, bool) {
        let groups = aliases(arch);
        let mut init = Vec::new();
        let mut seen_regs = Vec::new();
        let mut seen_locs = Vec::new();
        let mut twice = false;
        let value = |rng: &mut Rng| {
            // Mostly locations, so that many tests get past the address check.
            if rng.below(10) < 7 {
                VALUES[rng.below(3)]
            } else {
                VALUES[3 + rng.below(VALUES.len() - 3)]
            }
        };
        // Each register of each thread once (mostly), then a few more items
        // that may repeat one, under another alias or the same name.
        let mut items: Vec<(usize, usize)> = (0..threads)
            .flat_map(|t| (0..groups.len()).map(move |g| (t, g)))
            .filter(|_| rng.below(8) != 0)
            .collect();
        for _ in 0..rng.below(3) {
            items.push((rng.below(threads), rng.below(groups.len())));
        }
        for (t, g) in items {
            if rng.below(8) == 0 {
                let loc = ["x", "y"][rng.below(2)];
                twice |= seen_locs.contains(&loc);
                seen_locs.push(loc);
                init.push(format!("{loc}={}", rng.below(3)));
            }
            twice |= seen_regs.contains(&(t, g));
            seen_regs.push((t, g));
            let name = groups[g][rng.below(groups[g].len())];
            init.push(format!("{t}:{name}={}", value(rng)));
        }
        // `u` is there for the condition to name.
        let mut src = format!("{} GEN\n{{ u=0; {}; }}\n", arch.name(), init.join("; "));
        if arch == Arch::C {
            for t in 0..threads {
                src.push_str(&code(arch, t));
            }
        } else {
            let header: Vec<String> = (0..threads).map(|t| format!("P{t}")).collect();
            src.push_str(&format!(" {} ;\n", header.join(" | ")));
            let row: Vec<String> = (0..threads).map(|_| code(arch, 0)).collect();
            // One instruction per row: split each thread's code at ';'.
            let cells: Vec<Vec<&str>> = row
                .iter()
                .map(|c| {
                    c.split(';')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .collect()
                })
                .collect();
            for i in 0..cells[0].len() {
                let line: Vec<&str> = cells.iter().map(|c| c[i]).collect();
                src.push_str(&format!(" {} ;\n", line.join(" | ")));
            }
        }
        src.push_str("exists (u=0)\n");
        (src, twice)
    }

    /// The layouts and start states the property covers: each layout, and
    /// frames written by the run's owner or by their own threads.
    const SHAPES: &[(Layout, Preload)] = &[
        (Layout::Blocks, Preload::None),
        (Layout::Packed, Preload::None),
        (Layout::Blocks, Preload::Random),
        (Layout::Packed, Preload::Frames),
    ];

    /// Lays out a few instances of `program` as a run does (with `layout`
    /// and `preload`) and checks that every address its threads' accesses
    /// use (a location's word, or a register the harness loaded and the
    /// code never writes) is a word of the instance memory, and that no
    /// two locations of any instances share a word.
    fn assert_in_bounds(program: &Program, src: &str, layout: Layout, preload: Preload) {
        let opts = RunOptions {
            size: 3,
            runs: 1,
            layout,
            preload,
            ..RunOptions::default()
        };
        let sh = Shared::new(program, &opts, &atomlab_thread::allowed_cpus())
            .expect("a few instances fit");
        sh.init(&mut Rng::new(7));
        if preload != Preload::None {
            for ti in 0..program.threads.len() {
                sh.init_frames(ti);
            }
        }
        let lo = sh.mem.as_ptr() as u64;
        let hi = lo + 8 * sh.mem.len() as u64;
        let nl = program.compiled.locations.len();
        let mut words: Vec<u64> = (0..opts.size)
            .flat_map(|b| (0..nl).map(move |l| (b, l)))
            .map(|(b, l)| sh.addr(b, l))
            .collect();
        assert!(
            words.iter().all(|a| (lo..hi).contains(a)),
            "{layout:?}: a location outside the instance memory:\n{src}"
        );
        words.sort();
        words.dedup();
        assert_eq!(
            words.len(),
            opts.size * nl,
            "{layout:?}: two locations share a word:\n{src}"
        );
        for (ti, th) in program.compiled.threads.iter().enumerate() {
            let layout = program.threads[ti].layout;
            let written = |r: usize| {
                th.code.iter().any(|i| match i {
                    Instr::Load { dst, .. } | Instr::Rmw { dst, .. } => *dst == Some(r),
                    Instr::Assign { dst, .. } | Instr::Select { dst, .. } => *dst == r,
                    _ => false,
                })
            };
            for k in 0..opts.size {
                let frame = sh.frame(ti, k);
                for i in &th.code {
                    for a in addresses(i) {
                        let word = match a {
                            Expr::Const(Value::Loc(l)) => layout.loc_word(*l),
                            Expr::Reg(r) if !written(*r) => layout.reg_word(*r),
                            // Computed in the code: the dataflow check's job.
                            _ => continue,
                        };
                        let at = frame[word].load(Ordering::Relaxed);
                        assert!(
                            (lo..hi).contains(&at) && at.is_multiple_of(8),
                            "{layout:?}, preload {preload:?}: P{ti} of instance {k} would access {at:#x}, outside the instance memory {lo:#x}..{hi:#x}:\n{src}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_address_the_code_can_use_is_inside_the_instance_memory() {
        let Some(isa) = crate::Isa::host() else {
            eprintln!("skipped: no code generator for this host");
            return;
        };
        let archs: Vec<Arch> = isa.archs().iter().copied().chain([Arch::C]).collect();
        let mut rng = Rng::new(0x5eed);
        let (mut refused_twice, mut ran, mut refused_address, mut hand_built) = (0, 0, 0, 0);
        for &arch in &archs {
            for case in 0..150 {
                let (src, twice) = generate(arch, 1 + case % 2, &mut rng);
                let mut test = match atomlab_litmus::parse("gen.litmus", &src) {
                    Err(e) => {
                        assert!(
                            twice && e.message.contains("initialised twice"),
                            "refused: {e}\n{src}"
                        );
                        refused_twice += 1;
                        continue;
                    }
                    Ok(t) => {
                        assert!(
                            !twice,
                            "a register or location initialised twice was accepted:\n{src}"
                        );
                        t
                    }
                };
                // As a parser that let a second value through would give:
                // the same register listed again with another value.
                if case % 3 == 0 {
                    if let Some(th) = test.threads.first_mut() {
                        if let Some(&(r, _)) = th.init.first() {
                            th.init.push((r, Value::Int(0x4141_4140)));
                            hand_built += 1;
                        }
                    }
                }
                match crate::prepare(&test) {
                    Err(RunError::Unencodable { .. }) => refused_address += 1,
                    Err(e) => panic!("unexpected refusal {e}:\n{src}"),
                    Ok(program) => {
                        for &(layout, preload) in SHAPES {
                            assert_in_bounds(&program, &src, layout, preload);
                        }
                        let (layout, preload) = SHAPES[case % SHAPES.len()];
                        let opts = RunOptions {
                            size: 3,
                            runs: 2,
                            layout,
                            preload,
                            roles: [Roles::Fixed, Roles::Rotate][case % 2],
                            ..RunOptions::default()
                        };
                        run(&program, &opts).expect("an in-bounds test runs");
                        ran += 1;
                    }
                }
            }
        }
        eprintln!(
            "{refused_twice} refused by the parser (a value given twice), {refused_address} refused by the address check, {ran} run; {hand_built} hand-built with a register listed twice"
        );
        // The generator must exercise all three outcomes.
        assert!(refused_twice > 20 && refused_address > 20 && ran > 20);
    }
}
