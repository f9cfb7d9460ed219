//! The run loop, after litmus7 (Alglave et al., TACAS 2011, section 3):
//! per run, the calling thread lays out `size` instances (initial memory
//! and register frames), releases the test's threads at a barrier, runs
//! thread 0 itself, meets the others at a second barrier, and only then
//! reads the final states, so that collecting never runs beside the test.
//!
//! Memory: instance blocks of `round_up(locations × stride, 64)` bytes,
//! 64-byte aligned; location `l` of block `b` is at `b × block + l ×
//! stride`. Each run maps logical instance `k` to a shuffled block, so the
//! threads meet at addresses in a different order every run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::Instant;

use atomlab_litmus::{StateVar, Value};

use crate::rng::Rng;
use crate::{Affinity, Program, RunError, RunOptions, RunResult, SyncMode};

/// TSC ticks between the timebase's last arrival and the common start,
/// enough for the start time to reach every core before it comes. Measured
/// on SB on the 2-core KVM guest (TSC at 2.3 GHz, BENCHMARKS.md): 200 ticks
/// gave 9% witnesses, 500 gave 38% at the best rate, 1000–3000 no more
/// witnesses per instance and fewer per second.
const TIMEBASE_DELAY: u64 = 500;

#[repr(align(64))]
#[derive(Default)]
struct Padded<T>(T);

#[cfg(target_arch = "x86_64")]
fn ticks() -> u64 {
    // SAFETY: RDTSC has no memory effects; every x86-64 CPU has it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(target_arch = "aarch64")]
fn ticks() -> u64 {
    let t: u64;
    // SAFETY: reading the virtual counter has no side effects; Linux lets
    // EL0 read CNTVCT_EL0.
    unsafe { core::arch::asm!("mrs {}, cntvct_el0", out(reg) t, options(nomem, nostack)) };
    t
}

#[cfg(target_arch = "riscv64")]
fn ticks() -> u64 {
    let t: u64;
    // SAFETY: RDTIME reads the `time` CSR, which Linux lets user mode read
    // (Zicntr); no side effects.
    unsafe { core::arch::asm!("rdtime {}", out(reg) t, options(nomem, nostack)) };
    t
}

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
fn ticks() -> u64 {
    0
}

/// [`TIMEBASE_DELAY`] in this machine's ticks: TSC ticks on x86-64; on
/// AArch64 the same time (500 ticks at 2.3 GHz, about 220 ns) on the
/// generic timer, whose frequency CNTFRQ_EL0 gives, and on RISC-V on the
/// `time` CSR, at the device tree's timebase-frequency (at least one
/// tick).
fn timebase_delay() -> u64 {
    #[cfg(target_arch = "aarch64")]
    {
        let f: u64;
        // SAFETY: reading CNTFRQ_EL0 has no side effects; EL0 may read it.
        unsafe { core::arch::asm!("mrs {}, cntfrq_el0", out(reg) f, options(nomem, nostack)) };
        (f.saturating_mul(TIMEBASE_DELAY) / 2_300_000_000).max(1)
    }
    #[cfg(target_arch = "riscv64")]
    {
        // The `time` CSR counts at the platform's timebase frequency,
        // which user mode cannot read from a register: Linux gives it in
        // the device tree; 10 MHz (QEMU's virt board) when that is absent.
        // Read once: this runs per instance.
        static DELAY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        *DELAY.get_or_init(|| {
            let f = std::fs::read("/proc/device-tree/cpus/timebase-frequency")
                .ok()
                .and_then(|b| <[u8; 4]>::try_from(b.as_slice()).ok())
                .map(|b| u64::from(u32::from_be_bytes(b)))
                .unwrap_or(10_000_000);
            (f.saturating_mul(TIMEBASE_DELAY) / 2_300_000_000).max(1)
        })
    }
    #[cfg(not(any(target_arch = "aarch64", target_arch = "riscv64")))]
    {
        TIMEBASE_DELAY
    }
}

/// Everything the threads share during a run.
struct Shared<'p> {
    program: &'p Program,
    opts: &'p RunOptions,
    /// Instance memory (64-byte aligned from `mem_base`).
    mem: Vec<AtomicU64>,
    mem_base: usize,
    block_words: usize,
    stride_words: usize,
    /// One frame array per thread.
    frames: Vec<Vec<AtomicU64>>,
    /// Logical instance -> memory block, per run.
    perm: Vec<AtomicU32>,
    arrive: Vec<Padded<AtomicU32>>,
    start_at: Vec<Padded<AtomicU64>>,
    abort: AtomicBool,
    quit: AtomicBool,
    deadline: Option<Instant>,
    oversubscribed: bool,
}

impl Shared<'_> {
    fn word(&self, block: usize, l: usize) -> &AtomicU64 {
        &self.mem[self.mem_base + block * self.block_words + l * self.stride_words]
    }

    fn addr(&self, block: usize, l: usize) -> u64 {
        self.word(block, l).as_ptr() as u64
    }

    fn frame(&self, t: usize, k: usize) -> &[AtomicU64] {
        let w = self.program.threads[t].layout.words();
        &self.frames[t][k * w..(k + 1) * w]
    }

    fn decode(&self, block: usize, v: u64) -> Value {
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
        }
    }

    /// Writes the initial state of every instance. Called by the run's
    /// owner between runs, when no other thread touches the arrays.
    fn init(&self, rng: &mut Rng) {
        let size = self.opts.size;
        let mut perm: Vec<u32> = (0..size as u32).collect();
        for i in (1..size).rev() {
            perm.swap(i, rng.below(i + 1));
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
            for (ti, th) in t.threads.iter().enumerate() {
                let layout = self.program.threads[ti].layout;
                let f = self.frame(ti, k);
                for w in f {
                    w.store(0, Ordering::Relaxed);
                }
                for l in 0..t.locations.len() {
                    f[layout.loc_word(l)].store(self.addr(b, l), Ordering::Relaxed);
                }
                for (r, v) in &th.init {
                    f[layout.reg_word(*r)].store(self.encode(b, *v), Ordering::Relaxed);
                }
                f[layout.budget_word()].store(self.opts.loop_budget.max(1), Ordering::Relaxed);
            }
            // ORDERING: Relaxed: timing counters only; no data is published
            // through them (the barriers order the data).
            self.arrive[k].0.store(0, Ordering::Relaxed);
            self.start_at[k].0.store(0, Ordering::Relaxed);
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
                if self.deadline.is_some_and(|d| Instant::now() > d) {
                    // ORDERING: Relaxed: as above.
                    self.abort.store(true, Ordering::Relaxed);
                    return false;
                }
            }
        }
        true
    }

    /// Thread `t`'s part of one run: every instance in logical order.
    fn batch(&self, t: usize) {
        let n = self.program.threads.len() as u32;
        let code = &self.program.threads[t];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the page holds a complete function generated by
        // x86_64::codegen for the System V ABI, taking one pointer (RDI) to
        // a frame of `layout.words()` words, and it is mapped executable.
        let f: extern "sysv64" fn(*mut u64) = unsafe { std::mem::transmute(code.page.as_ptr()) };
        #[cfg(target_arch = "aarch64")]
        // SAFETY: the page holds a complete function generated by
        // aarch64::codegen for the AAPCS64, taking one pointer (X0) to a
        // frame of `layout.words()` words, and it is mapped executable.
        let f: extern "C" fn(*mut u64) = unsafe { std::mem::transmute(code.page.as_ptr()) };
        #[cfg(target_arch = "riscv64")]
        // SAFETY: the page holds a complete function generated by
        // riscv64::codegen for the LP64 psABI, taking one pointer (a0) to
        // a frame of `layout.words()` words, and it is mapped executable
        // (and made visible to every hart's instruction fetch, code.rs).
        let f: extern "C" fn(*mut u64) = unsafe { std::mem::transmute(code.page.as_ptr()) };
        // The code was written by another thread: a context
        // synchronisation event before running it (code.rs).
        #[cfg(target_arch = "aarch64")]
        // SAFETY: ISB has no operands and no memory effects.
        unsafe {
            core::arch::asm!("isb", options(nostack))
        };
        for k in 0..self.opts.size {
            match self.opts.sync {
                SyncMode::None => {}
                SyncMode::Spin | SyncMode::UserFence => {
                    // ORDERING: Relaxed: the counter only aligns start
                    // times; the data of the run is published by the
                    // start barrier and read after the end barrier.
                    self.arrive[k].0.fetch_add(1, Ordering::Relaxed);
                    if !self.spin(|| self.arrive[k].0.load(Ordering::Relaxed) >= n) {
                        return;
                    }
                }
                SyncMode::Timebase => {
                    // ORDERING: Relaxed, as for Spin; the start time is
                    // itself the only value passed.
                    if self.arrive[k].0.fetch_add(1, Ordering::Relaxed) + 1 == n {
                        self.start_at[k]
                            .0
                            .store(ticks() + timebase_delay(), Ordering::Relaxed);
                    }
                    if !self.spin(|| self.start_at[k].0.load(Ordering::Relaxed) != 0) {
                        return;
                    }
                    let at = self.start_at[k].0.load(Ordering::Relaxed);
                    if !self.spin(|| ticks() >= at) {
                        return;
                    }
                }
            }
            if self.opts.sync == SyncMode::UserFence {
                // ORDERING: SeqCst fence (MFENCE on x86-64, DMB ISH on
                // AArch64, FENCE RW,RW on RISC-V): drains this thread's store buffer (the
                // counter's write) before the test runs.
                std::sync::atomic::fence(Ordering::SeqCst);
            }
            let frame = self.frame(t, k).as_ptr() as *mut u64;
            #[cfg(any(
                target_arch = "x86_64",
                target_arch = "aarch64",
                target_arch = "riscv64"
            ))]
            f(frame);
            #[cfg(not(any(
                target_arch = "x86_64",
                target_arch = "aarch64",
                target_arch = "riscv64"
            )))]
            let _ = (frame, code);
        }
    }
}

/// Runs `program` as `opts` says and counts the final states.
pub fn run(program: &Program, opts: &RunOptions) -> Result<RunResult, RunError> {
    opts.validate()?;
    let t = &program.compiled;
    let nthreads = t.threads.len();
    let nl = t.locations.len().max(1);
    let stride_words = opts.stride / 8;
    let block_words = (nl * stride_words).div_ceil(8) * 8;
    let total = opts
        .size
        .checked_mul(block_words)
        .filter(|w| *w <= 1 << 28)
        .ok_or_else(|| {
            RunError::BadOption(format!(
                "--size {}: the instances would need more than 2 GiB; lower --size or --stride",
                opts.size
            ))
        })?;
    let mem: Vec<AtomicU64> = (0..total + 8).map(|_| AtomicU64::new(0)).collect();
    let mem_base = {
        let p = mem.as_ptr() as usize;
        (p.next_multiple_of(64) - p) / 8
    };
    let cpus = atomlab_thread::allowed_cpus();
    let placement: Vec<Option<usize>> = (0..nthreads)
        .map(|i| match &opts.affinity {
            Affinity::Spread => cpus.get(i % cpus.len().max(1)).copied(),
            Affinity::None => None,
            Affinity::Cpus(list) => list.get(i % list.len().max(1)).copied(),
        })
        .collect();
    let shared = Shared {
        program,
        opts,
        mem,
        mem_base,
        block_words,
        stride_words,
        frames: program
            .threads
            .iter()
            .map(|c| {
                (0..opts.size * c.layout.words())
                    .map(|_| AtomicU64::new(0))
                    .collect()
            })
            .collect(),
        perm: (0..opts.size).map(|_| AtomicU32::new(0)).collect(),
        arrive: (0..opts.size).map(|_| Padded::default()).collect(),
        start_at: (0..opts.size).map(|_| Padded::default()).collect(),
        abort: AtomicBool::new(false),
        quit: AtomicBool::new(false),
        deadline: opts.timeout.map(|d| Instant::now() + d),
        oversubscribed: nthreads > cpus.len()
            || matches!(&opts.affinity, Affinity::Cpus(l) if {
                let mut u = l.clone();
                u.sort();
                u.dedup();
                u.len() < nthreads
            }),
    };
    let vars = program.test.state_vars();
    let start = Barrier::new(nthreads);
    let end = Barrier::new(nthreads);
    let pin_errors = std::sync::Mutex::new(Vec::new());
    let mut hist: HashMap<Vec<Value>, u64> = HashMap::new();
    let (mut filtered, mut exhausted, mut runs_done, mut timed_out) = (0u64, 0u64, 0usize, false);
    let began = Instant::now();
    let pin = |i: usize| {
        if let Some(c) = placement[i] {
            if let Err(e) = atomlab_thread::pin_current_thread(c) {
                if let Ok(mut v) = pin_errors.lock() {
                    v.push(format!("thread P{i} on CPU {c}: {e}"));
                }
            }
        }
    };
    std::thread::scope(|s| {
        for i in 1..nthreads {
            let (shared, start, end, pin) = (&shared, &start, &end, &pin);
            s.spawn(move || {
                pin(i);
                loop {
                    start.wait();
                    // ORDERING: Relaxed: written before the start barrier,
                    // which orders it before this read.
                    if shared.quit.load(Ordering::Relaxed) {
                        break;
                    }
                    shared.batch(i);
                    end.wait();
                }
            });
        }
        pin(0);
        let mut rng = Rng::new(opts.seed);
        for _ in 0..opts.runs {
            if shared.deadline.is_some_and(|d| Instant::now() > d) {
                timed_out = true;
                break;
            }
            shared.init(&mut rng);
            start.wait();
            shared.batch(0);
            end.wait();
            // ORDERING: Relaxed: set before the end barrier by the thread
            // that saw the deadline.
            if shared.abort.load(Ordering::Relaxed) {
                // The run was cut short: its instances are incomplete.
                timed_out = true;
                break;
            }
            runs_done += 1;
            collect(&shared, &vars, &mut hist, &mut filtered, &mut exhausted);
        }
        // ORDERING: Relaxed: the start barrier publishes it.
        shared.quit.store(true, Ordering::Relaxed);
        start.wait();
    });
    let elapsed = began.elapsed();
    // The calling thread may run anywhere again.
    let _ = atomlab_thread::set_current_thread_cpus(&cpus);
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
        cpus: placement,
        pin_errors: pin_errors.into_inner().unwrap_or_default(),
    })
}

/// Reads every instance's final state into the histogram (after the end
/// barrier: the test's threads are waiting at the next start).
fn collect(
    sh: &Shared<'_>,
    vars: &[StateVar],
    hist: &mut HashMap<Vec<Value>, u64>,
    filtered: &mut u64,
    exhausted: &mut u64,
) {
    let t = &sh.program.compiled;
    let mut state = Vec::with_capacity(vars.len());
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
        match hist.get_mut(&state) {
            Some(n) => *n += 1,
            None => {
                hist.insert(state.clone(), 1);
            }
        }
    }
}
