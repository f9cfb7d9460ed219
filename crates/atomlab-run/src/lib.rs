//! Runs litmus tests on the real CPU, as litmus7 (herdtools7) does, and
//! counts the final states: the engine of `atomlab run`.
//!
//! The method is litmus7's, from Alglave, Maranget, Sarkar and Sewell,
//! "Litmus: running tests against hardware" (TACAS 2011): many instances of
//! the test are laid out in memory ([`RunOptions::size`] per run), the
//! test's threads are pinned to CPUs and run every instance once per run,
//! started together per instance by a synchronisation mode
//! ([`SyncMode`]), in a shuffled order of memory blocks, and the final
//! states are read after the run, so that collecting them does not perturb
//! it. Unlike litmus7 there is no C compiler: each thread's code is
//! generated as machine code at run time from atomlab-litmus's lowered
//! instructions, by a backend per ISA over a small encoder of its own
//! (`x86_64::codegen` over `x86_64::encode`, after the Intel SDM;
//! `aarch64::codegen` over `aarch64::encode`, after the Arm ARM;
//! `riscv64::codegen` over `riscv64::encode`, after the RISC-V
//! unprivileged ISA manual), into W^X pages (`code.rs`). Each backend is
//! one folder (`<isa>/`: `encode.rs`, `codegen.rs`, and `host.rs`, what
//! running the code needs of that host: its counter, cache maintenance,
//! calling convention and CPU features) described by a `Backend` in its
//! `mod.rs` and listed once in `BACKENDS`; the harness holds no ISA's code.
//!
//! A C test runs through atomlab-model's C11→ISA mapping
//! ([`atomlab_model::mapping`]): C11→x86 on x86-64, C11→AArch64 (with the
//! `LDAR` or `LDAPR` choice of [`PrepareOptions::arm_acquire`]) on
//! AArch64, C11→RISC-V (the spec's Table A.6: fenced `ld`/`sd`, AMOs with
//! `.aq`/`.rl`, compare-exchange as an LR/SC loop) on riscv64: the same
//! tables `atomlab check` judges the `x86tso`, `aarch64` and `riscv`
//! columns with, so the hardware's histogram and that verdict are about
//! the same instructions.
//!
//! Dependencies: `atomlab-litmus` (the format), `atomlab-model` (the C11
//! mapping, and the models a run is judged by in [`batch`]),
//! `atomlab-core` and `serde_json` (a run's record), `libc`
//! (mmap/mprotect, sched_setaffinity), `thiserror`. No assembler crate:
//! each encoder is a few hundred lines, tested against GNU binutils'
//! bytes, where dynasm-rs would add a proc-macro tree.
//!
//! # Limitations
//! - Backends for x86-64, AArch64 and riscv64 (RV64GC) only: on another
//!   host every test is refused, and a test of another ISA than the host's
//!   is refused, naming the host. Linux-kernel C tests are refused on
//!   every ISA.
//! - Locations and registers are 64-bit; W/E-register tests run with
//!   64-bit accesses, as atomlab-litmus models them (no mixed sizes), and
//!   so do RISC-V's `lb`/`lh`/`lw`/`lwu`, `sw`, `lr.w`/`sc.w` and `.w`
//!   AMOs (they run as `ld`, `sd`, `lr.d`/`sc.d`, `.d`).
//! - x86-64: a thread may keep at most 12 registers and locations in
//!   machine registers (more spill to the frame). AArch64: at most 24, and
//!   more is refused before anything runs.
//! - AArch64: an access is run only when its address is known to be a
//!   location's (a location plus a register known to be zero is an address
//!   dependency and runs); LSE atomics, CAS (FEAT_LSE) and LDAPR
//!   (FEAT_LRCPC) are refused on a CPU without them; a read into the zero
//!   register (`SWPA X1, XZR`) runs without its acquire, as herd models it
//!   and atomlab-litmus lowers it.
//! - riscv64: at most 22 registers and locations a thread, more refused;
//!   an access is run only when its address is known to be a location's,
//!   as on AArch64 (`0(x6)` with x6 holding a location, or a location plus
//!   a register known to be zero; `8(x6)` and other displacements are
//!   refused); an annotated plain access that is not RISC-V's (a
//!   load-acquire outside LR, an Arm or x86 kind) is refused. diy7's
//!   `lw.aq`/`sw.rl` run as the fenced sequences herd reads them as, and
//!   `fence.i` (dropped by the lowering) is not emitted. A C
//!   compare-exchange is the spec's LR/SC retry loop, weak ones included
//!   (they never fail spuriously here). New code is made visible to every
//!   hart with the `riscv_flush_icache` system call (`riscv64/host.rs`). Under
//!   qemu-user (scripts/cross-test) the runs check the code, not RISC-V
//!   hardware: qemu runs it on the host's stronger memory model.
#![warn(unreachable_pub)]
#![deny(missing_docs)]

mod aarch64;
mod addresses;
pub mod batch;
mod buffer;
mod code;
mod frame;
mod generator;
#[cfg(test)]
mod gnu_as;
mod harness;
mod host;
mod mentions;
mod operand;
mod riscv64;
mod rng;
pub mod tune;
mod x86_64;

use std::time::Duration;

use atomlab_litmus::{Arch, StateVar, Test, Value};

pub use harness::{run, run_calls, Calls, Plan};

/// How the threads start each instance together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// A counter per instance: each thread adds one and spins until all
    /// have.
    Spin,
    /// As `Spin`, then a full fence (MFENCE) before the test's code, so each
    /// thread starts with an empty store buffer. Fast per instance, but the
    /// last thread to arrive starts a cache-line transfer ahead of the
    /// others: its witnesses per second varied a hundredfold between three
    /// boots of the same VM (BENCHMARKS.md, issue 26).
    UserFence,
    /// As `Spin`, and the last thread to arrive sets a start time on the
    /// time-stamp counter a little ahead; every thread waits for it
    /// (litmus7's `timebase`): the start is aligned to the shared clock, not
    /// to when each core sees the counter's last write. The default: with
    /// [`Roles::Rotate`], the most relaxed-outcome witnesses per second and
    /// the steadiest of the settings measured beside litmus7 on a quiet
    /// machine (9 tests, 5 alternating rounds, three boots; BENCHMARKS.md).
    Timebase,
    /// One thread per instance leads (thread `k mod n` for instance `k`):
    /// it raises the instance's flag and drains its store buffer with a
    /// full fence; the others spin until they see the flag and start at
    /// once, with no read-modify-write on the way (litmus7's `userfence`
    /// barrier, skel.ml `user_barrier_def FenceW`). The leader role
    /// rotates, so no thread always starts first.
    Leader,
    /// No synchronisation: threads run through the instances on their own.
    None,
}

impl SyncMode {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SyncMode::Spin => "spin",
            SyncMode::UserFence => "userfence",
            SyncMode::Timebase => "timebase",
            SyncMode::Leader => "leader",
            SyncMode::None => "none",
        }
    }
}

/// Where an instance's locations live in memory (issue 26, R2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One block of `round_up(locations x stride, 64)` bytes per instance,
    /// the blocks in a shuffled order each run ([`RunOptions::stride`]).
    Blocks,
    /// litmus7's `-memory direct`: one array per location, 64-byte
    /// aligned, instance `k`'s word at index `k`, so 8 neighbouring
    /// instances share each line; visited in order, no shuffle; the
    /// per-instance start counters are dense too. `stride` is unused.
    Packed,
}

impl Layout {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Blocks => "blocks",
            Layout::Packed => "packed",
        }
    }
}

/// Who writes a thread's register frames, and what each thread reads
/// before a run's first instance (issue 26, R1; litmus7's `-preload`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preload {
    /// The run's owner writes the memory and every thread's frames;
    /// nothing is read before the instances.
    None,
    /// Each thread writes its own frames (first touch on its own CPU).
    Frames,
    /// As `Frames`, then each thread reads each location of each instance
    /// with probability 1/2 (litmus7's `-preload random`), so lines start
    /// shared between the threads' caches.
    Random,
    /// As `Frames`, then each thread reads every location of every instance.
    All,
}

impl Preload {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Preload::None => "none",
            Preload::Frames => "frames",
            Preload::Random => "random",
            Preload::All => "all",
        }
    }
}

/// Which code each of the test's OS threads runs (issue 26, R5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roles {
    /// OS thread `i` runs the test's thread `Pi` in every run; P0 is the
    /// thread that also lays out and collects the runs.
    Fixed,
    /// In run `r`, OS thread `i` runs `P((i + r) mod n)` (after litmus7's
    /// `-launch changing`): no test thread always runs beside the
    /// layout and collection, or always on one CPU.
    Rotate,
}

impl Roles {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Roles::Fixed => "fixed",
            Roles::Rotate => "rotate",
        }
    }
}

/// How the threads meet between runs (issue 26, R4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunBarrier {
    /// `std::sync::Barrier`: waiting threads sleep in the kernel.
    Futex,
    /// A spinning barrier: no thread sleeps between runs (it yields the CPU
    /// when the test has more threads than CPUs).
    Spin,
}

impl RunBarrier {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RunBarrier::Futex => "futex",
            RunBarrier::Spin => "spin",
        }
    }
}

/// Where the time of a test's runs went, as the run's owner thread saw it
/// (summed over the runs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Phases {
    /// Laying out the instances (the owner's part of it).
    pub init: Duration,
    /// Waiting at the barriers before and after each run (but the first
    /// run's start: [`Phases::startup`]).
    pub barriers: Duration,
    /// The owner's own frames and preload, and the wait for the others'.
    pub preload: Duration,
    /// The owner's pass over the instances.
    pub instances: Duration,
    /// Reading the final states into the histogram.
    pub collect: Duration,
    /// The threads' meeting at each call of the harness, and the very
    /// first run's start barrier: waiting for the threads just started to
    /// reach it (paid once per test, whatever the setting).
    pub startup: Duration,
}

impl Phases {
    /// The runs' own time: every phase but the threads' startup. The
    /// tuner compares settings by it, since a call of one run would
    /// otherwise be charged a call's overhead that a call of 25 shares.
    pub fn runs(&self) -> Duration {
        self.init + self.barriers + self.preload + self.instances + self.collect
    }
}

/// Where the test's threads run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Affinity {
    /// Thread `t` on the `t mod n`-th CPU this process may use.
    Spread,
    /// Not pinned: the scheduler decides.
    None,
    /// Thread `t` on `cpus[t mod len]`.
    Cpus(Vec<usize>),
}

/// How to run a test.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Instances per run.
    pub size: usize,
    /// Runs.
    pub runs: usize,
    /// Start synchronisation per instance.
    pub sync: SyncMode,
    /// Thread placement.
    pub affinity: Affinity,
    /// Bytes between two locations of one instance (8: all on one cache
    /// line; 64: each on its own line).
    pub stride: usize,
    /// Stop after this long (runs done so far are kept; the result says
    /// TIMEOUT).
    pub timeout: Option<Duration>,
    /// Seed of the instance shuffle.
    pub seed: u64,
    /// Backward-branch instructions a thread may execute per instance
    /// (taken or not); when they run out the code returns and the instance
    /// is counted apart ([`RunResult::budget_exhausted`]).
    pub loop_budget: u64,
    /// Where the instances' locations live.
    pub layout: Layout,
    /// Who writes the frames and what is read before the instances.
    pub preload: Preload,
    /// Which code each OS thread runs in each run.
    pub roles: Roles,
    /// How the threads meet between runs.
    pub run_barrier: RunBarrier,
    /// With [`SyncMode::Timebase`]: the delay between the last arrival and
    /// the common start, in timer ticks, or `None` to adapt it run by run
    /// to the shortest that still aligns the threads. The default is
    /// [`default_timebase_delay`]: adapting gave more witnesses on some
    /// tests and far fewer on others (BENCHMARKS.md, issue 26).
    pub timebase_delay: Option<u64>,
}

impl RunOptions {
    /// Checks the options that do not depend on a test (size, runs,
    /// stride), so a bad flag is refused before any file is read.
    pub fn validate(&self) -> Result<(), RunError> {
        if self.size == 0 || self.runs == 0 {
            return Err(RunError::BadOption(
                "--size and --runs must be at least 1".into(),
            ));
        }
        if self.stride < 8 || !self.stride.is_multiple_of(8) || self.stride > 4096 {
            return Err(RunError::BadOption(format!(
                "--stride {}: must be a multiple of 8 bytes between 8 and 4096",
                self.stride
            )));
        }
        if let Affinity::Cpus(cpus) = &self.affinity {
            // A CPU outside the process's affinity mask would be refused
            // thread by thread, or (past the machine) printed as if used.
            let allowed = atomlab_thread::allowed_cpus();
            let refused: Vec<String> = cpus
                .iter()
                .filter(|c| !allowed.contains(c))
                .map(usize::to_string)
                .collect();
            if !refused.is_empty() {
                let allowed: Vec<String> = allowed.iter().map(usize::to_string).collect();
                return Err(RunError::BadOption(format!(
                    "--pin: CPU {} is not one this process may run on (sched_getaffinity \
                     allows {}): give CPUs from that list, spread or none",
                    refused.join(", "),
                    allowed.join(",")
                )));
            }
        }
        if self.layout == Layout::Packed && self.stride != RunOptions::default().stride {
            return Err(RunError::BadOption(format!(
                "--stride {} (or --same-line) with --layout packed: the packed layout gives each location an array of its own, so there is no stride between an instance's locations; use --layout blocks to set one",
                self.stride
            )));
        }
        Ok(())
    }
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            // The CLI's defaults (`atomlab run --size 1000 --runs 1000`):
            // a million instances, as litmus7's defaults (-s 5000 -r 200).
            // With 200 runs the tuner's first run of each of its dozen
            // settings, slow ones included, was a sixth of the test's
            // time; measured side by side with litmus7 (issue 38), a
            // million gave more witnesses per second on 7 of its 9 tests
            // (docs/src/benchmarks-log.md).
            size: 1000,
            runs: 1000,
            // Measured side by side with litmus7 on a quiet machine
            // (issue 26, BENCHMARKS.md): the most witnesses per second and
            // the steadiest of the settings tried.
            sync: SyncMode::Timebase,
            affinity: Affinity::Spread,
            stride: 64,
            timeout: None,
            seed: 1,
            loop_budget: 1000,
            // Measured (issue 26): packed and preloaded layouts helped on
            // some tests and hurt on others; rotating roles helped on all
            // but one, with timebase.
            layout: Layout::Blocks,
            preload: Preload::None,
            roles: Roles::Rotate,
            run_barrier: RunBarrier::Futex,
            timebase_delay: Some(default_timebase_delay()),
        }
    }
}

/// The timebase delay `atomlab run` uses unless told: 500 ticks of the
/// TSC on x86-64, the same time on the generic timer (AArch64) or the
/// `time` CSR (RISC-V).
pub fn default_timebase_delay() -> u64 {
    harness::timebase_delay()
}

/// The ISA this process runs on.
pub fn host_isa() -> &'static str {
    std::env::consts::ARCH
}

/// A test made ready to run: its thread code generated and mapped.
#[derive(Debug)]
pub struct Program {
    /// The test as written.
    pub test: Test,
    /// The test as run (C tests after the C11→ISA mapping).
    pub compiled: Test,
    /// The mapping a C test went through.
    pub mapping: Option<&'static str>,
    threads: Vec<ThreadCode>,
}

#[derive(Debug)]
struct ThreadCode {
    page: code::CodePage,
    layout: frame::FrameLayout,
    len: usize,
}

impl Program {
    /// Bytes of generated code per thread.
    pub fn code_sizes(&self) -> Vec<usize> {
        self.threads.iter().map(|t| t.len).collect()
    }
}

/// An instruction the code generator cannot encode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unencodable {
    /// The thread.
    pub thread: usize,
    /// Index of the instruction in the thread's lowered code.
    pub index: usize,
    /// What cannot be encoded.
    pub what: String,
}

/// Why a test cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The test is for another ISA than this machine's.
    #[error("{file}: this is an {arch} test and this host is {host}: run it on {want} hardware (or under scripts/cross-test), or judge it with `atomlab check`")]
    WrongIsa {
        /// The test file.
        file: String,
        /// The test's architecture.
        arch: &'static str,
        /// This machine's ISA.
        host: &'static str,
        /// The ISA it needs.
        want: &'static str,
    },
    /// A Linux-kernel C test: the runner has no compilation of the kernel's
    /// primitives (a lock would not wait, barriers would be refused one by one).
    #[error("{file}: a Linux-kernel C test (READ_ONCE, smp_mb, spin_lock...): the runner does not compile the kernel's primitives; the test was not run. Judge it with `atomlab check --model lkmm`")]
    LinuxKernel {
        /// The test file.
        file: String,
    },
    /// The code generator cannot encode an instruction of the test.
    #[error("{file}:{line}: P{thread}, instruction {index} ({instr}): cannot generate code for {what}; the test was not run. Rewrite the test without it, or judge it with `atomlab check`")]
    Unencodable {
        /// The test file.
        file: String,
        /// The line of the thread's code in the file.
        line: usize,
        /// The thread.
        thread: usize,
        /// The instruction's index in the thread's lowered code.
        index: usize,
        /// The instruction, as lowered.
        instr: String,
        /// What cannot be encoded.
        what: String,
    },
    /// The test needs an architecture feature this CPU lacks.
    #[error("{file}:{line}: P{thread}, instruction {index} ({instr}) needs {feature}, which this CPU lacks (no '{hwcap}' in its hwcaps); the test was not run. Run it on a CPU with {feature}, or judge it with `atomlab check`")]
    MissingFeature {
        /// The test file.
        file: String,
        /// The line of the instruction in the file.
        line: usize,
        /// The thread.
        thread: usize,
        /// The instruction's index in the thread's lowered code.
        index: usize,
        /// The instruction, as lowered.
        instr: String,
        /// The feature's Arm ARM name (`FEAT_LSE`).
        feature: &'static str,
        /// Its name in Linux's hwcaps (`lse`).
        hwcap: &'static str,
    },
    /// The operating system refused something (a mapping, a thread).
    #[error("{0}")]
    Os(String),
    /// An option is out of range.
    #[error("{0}")]
    BadOption(String),
}

/// The line of lowered instruction `index` of thread `t` in an assembly
/// table: the rows are re-parsed as growing prefixes of the table (each
/// closed by `exists true`) until thread `t` has more than `index`
/// instructions. `None` when that does not work out (then the table's
/// header line is named).
fn asm_row_line(src: &str, t: usize, index: usize) -> Option<usize> {
    let lines: Vec<&str> = src.lines().collect();
    let header = lines.iter().position(|l| {
        l.trim_start()
            .strip_prefix("P0")
            .is_some_and(|r| r.trim_start().starts_with(['|', ';']))
    })?;
    for (j, line) in lines.iter().enumerate().skip(header + 1) {
        let w = line.trim_start();
        if ["exists", "~exists", "forall", "locations", "filter", "~"]
            .iter()
            .any(|k| w.starts_with(k))
        {
            break;
        }
        let prefix = format!("{}\nexists true\n", lines[..=j].join("\n"));
        if let Ok(test) = atomlab_litmus::parse("prefix", &prefix) {
            if test.threads.get(t).is_some_and(|th| th.code.len() > index) {
                return Some(j + 1);
            }
        }
    }
    None
}

/// The line where thread `t`'s code starts in `src` (a C function's
/// `P0 (`, or the header row `P0 | P1 ;` of an assembly table).
fn thread_line(src: &str, arch: Arch, t: usize) -> usize {
    let name = format!("P{t}");
    for (i, line) in src.lines().enumerate() {
        let l = line.trim_start();
        let hit = match arch {
            Arch::C => l
                .strip_prefix(&name)
                .is_some_and(|r| r.trim_start().starts_with('(')),
            _ => l
                .strip_prefix("P0")
                .is_some_and(|r| r.trim_start().starts_with(['|', ';'])),
        };
        if hit {
            return i + 1;
        }
    }
    0
}

fn expr_text(th: &atomlab_litmus::Thread, locs: &[String], e: &atomlab_litmus::Expr) -> String {
    use atomlab_litmus::Expr;
    match e {
        Expr::Const(Value::Int(i)) => i.to_string(),
        Expr::Const(Value::Loc(l)) => locs.get(*l).cloned().unwrap_or_default(),
        Expr::Const(Value::Sym(n)) => format!("S{n}"),
        Expr::Reg(r) => th.regs.get(*r).cloned().unwrap_or_default(),
        Expr::Not(a) => format!("!{}", expr_text(th, locs, a)),
        Expr::Bin(op, a, b) => format!(
            "({} {op:?} {})",
            expr_text(th, locs, a),
            expr_text(th, locs, b)
        ),
    }
}

/// A lowered instruction in a line: `load EAX <- [EBX]`.
fn describe(th: &atomlab_litmus::Thread, locs: &[String], i: &atomlab_litmus::Instr) -> String {
    use atomlab_litmus::Instr;
    let e = |x| expr_text(th, locs, x);
    let reg = |r: &Option<usize>| {
        r.and_then(|r| th.regs.get(r).cloned())
            .unwrap_or_else(|| "_".into())
    };
    match i {
        Instr::Load { dst, addr, .. } => format!("load {} <- [{}]", reg(dst), e(addr)),
        Instr::Store { addr, value, .. } => format!("store [{}] <- {}", e(addr), e(value)),
        Instr::StoreExclusive { addr, value, .. } => {
            format!("store-exclusive [{}] <- {}", e(addr), e(value))
        }
        Instr::Rmw {
            dst,
            addr,
            op,
            operand,
            ..
        } => format!("{op:?} {} <- [{}], {}", reg(dst), e(addr), e(operand)),
        Instr::Cas { addr, desired, .. } => format!("cas [{}] <- {}", e(addr), e(desired)),
        Instr::Fence(f) => format!("fence {f}"),
        Instr::SyncSrcu { addr } => format!("synchronize_srcu [{}]", e(addr)),
        Instr::Assign { dst, expr } => format!("{} := {}", reg(&Some(*dst)), e(expr)),
        Instr::Select { dst, .. } => format!("select into {}", reg(&Some(*dst))),
        Instr::Branch { target, .. } => format!("branch to {target}"),
    }
}

/// An instruction set this crate generates code for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// x86-64: X86 and X86_64 tests, C tests through the C11->x86 mapping.
    X86_64,
    /// AArch64: AArch64 tests, C tests through the C11->AArch64 mapping.
    AArch64,
    /// RV64 (riscv64gc): RISCV tests, C tests through the C11->RISC-V
    /// mapping (the spec's Table A.6).
    RiscV64,
}

/// One ISA's backend: what its folder (`<isa>/`) gives the rest of the
/// crate. A new ISA is a folder with its `codegen.rs`, `encode.rs`,
/// `host.rs` and this descriptor in `mod.rs`, its line in [`BACKENDS`] and
/// its [`Isa`] variant (plus, outside this crate, its litmus dialect and
/// its C11 mapping).
pub(crate) struct Backend {
    /// Which ISA.
    isa: Isa,
    /// Its name, as `std::env::consts::ARCH` spells it.
    name: &'static str,
    /// The litmus architectures it runs as written (C tests go through
    /// the mapping to [`Backend::target`]).
    archs: &'static [Arch],
    /// The C11 mapping's target for a C test, under `opts`.
    target: fn(&PrepareOptions) -> atomlab_model::mapping::Target,
    /// A thread's machine code for frames laid out as given, with the
    /// given spacing ([`PrepareOptions::spacing`]).
    thread_code:
        fn(&atomlab_litmus::Thread, &frame::FrameLayout, u32) -> Result<Vec<u8>, Unencodable>,
    /// The CPU feature an instruction needs, if any: its name and Linux's
    /// hwcap for it ([`host_has`]).
    feature_needed: fn(&atomlab_litmus::Instr) -> Option<(&'static str, &'static str)>,
}

/// Every backend, in [`Isa`]'s order.
const BACKENDS: [&Backend; 3] = [&x86_64::BACKEND, &aarch64::BACKEND, &riscv64::BACKEND];

impl Isa {
    /// The backend for this host, if there is one.
    pub fn host() -> Option<Isa> {
        BACKENDS
            .iter()
            .find(|b| b.name == host_isa())
            .map(|b| b.isa)
    }

    /// Its name, as `std::env::consts::ARCH` spells it.
    pub fn name(self) -> &'static str {
        self.backend().name
    }

    /// The litmus architectures it runs as written; C tests go through
    /// the C11 mapping to it.
    pub fn archs(self) -> &'static [Arch] {
        self.backend().archs
    }

    fn backend(self) -> &'static Backend {
        BACKENDS[self as usize]
    }

    fn target(self, opts: &PrepareOptions) -> atomlab_model::mapping::Target {
        (self.backend().target)(opts)
    }
}

/// How to turn a test into code.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrepareOptions {
    /// How a C test's acquire loads compile on AArch64: `LDAR` (the
    /// default) or `LDAPR`, as `atomlab check --arm-acquire`.
    pub arm_acquire: atomlab_model::AcquireLoad,
    /// Loads of the thread's own frame after each memory access (0: none),
    /// a setting `run` tunes (issue 38): litmus7's gcc-compiled threads
    /// keep values on the stack between their accesses, and on some tests
    /// that spacing found ten to a hundred times more relaxed outcomes.
    pub spacing: u32,
}

/// Whether this CPU has the feature Linux's hwcaps call `hwcap` (`lse`,
/// `rcpc`); false on a host without such features.
pub fn host_has(hwcap: &str) -> bool {
    host::has(hwcap)
}

/// The line of thread `t`'s lowered instruction `index` (of the test as
/// compiled for `isa`) in the test's file, or the thread's first line when
/// it cannot be told.
fn instr_line(test: &Test, isa: Isa, opts: &PrepareOptions, t: usize, index: usize) -> usize {
    let src = std::fs::read_to_string(&test.file).unwrap_or_default();
    match test.arch {
        Arch::C => c_statement_line(&src, isa.target(opts), t, index),
        _ => asm_row_line(&src, t, index),
    }
    .unwrap_or_else(|| thread_line(&src, test.arch, t))
}

/// The line of C thread `t`'s statement that compiles (through `target`)
/// to instruction `index`: the function is cut after each of its lines,
/// closed with the braces still open and `exists true`, and re-parsed
/// until thread `t` compiles to more than `index` instructions.
fn c_statement_line(
    src: &str,
    target: atomlab_model::mapping::Target,
    t: usize,
    index: usize,
) -> Option<usize> {
    let lines: Vec<&str> = src.lines().collect();
    let first = thread_line(src, Arch::C, t).checked_sub(1)?;
    let mut depth: i64 = 0;
    for (j, line) in lines.iter().enumerate().skip(first) {
        depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        if depth < 0 {
            return None;
        }
        let mut prefix = lines[..=j].join("\n");
        for _ in 0..depth {
            prefix.push_str("\n}");
        }
        prefix.push_str("\nexists true\n");
        if let Ok(test) = atomlab_litmus::parse("prefix", &prefix) {
            let compiled = atomlab_model::mapping::compile(&test, target);
            if compiled
                .threads
                .get(t)
                .is_some_and(|th| th.code.len() > index)
            {
                return Some(j + 1);
            }
        }
        if depth == 0 && j > first {
            return None;
        }
    }
    None
}

/// The backends that run tests of `arch` ("x86_64"; for C, every one:
/// "x86_64, aarch64 or riscv64").
fn runs_on(arch: Arch) -> &'static str {
    match arch {
        Arch::C => "x86_64, aarch64 or riscv64",
        _ => BACKENDS
            .iter()
            .find(|b| b.archs.contains(&arch))
            .map_or("none", |b| b.name),
    }
}

/// Compiles a C test for `isa` (the other tests as written), and refuses
/// a test for another ISA.
fn compile_for(
    test: &Test,
    isa: Isa,
    opts: &PrepareOptions,
) -> Result<(Test, Option<&'static str>), RunError> {
    let wrong = |want: &'static str| RunError::WrongIsa {
        file: test.file.clone(),
        arch: test.arch.name(),
        host: isa.name(),
        want,
    };
    // (X86_64 tests lower to the same instructions as X86 ones.)
    if isa.archs().contains(&test.arch) {
        return Ok((test.clone(), None));
    }
    match test.arch {
        Arch::C if test.is_linux() => Err(RunError::LinuxKernel {
            file: test.file.clone(),
        }),
        Arch::C => {
            let t = isa.target(opts);
            Ok((
                atomlab_model::mapping::compile(test, t),
                Some(atomlab_model::mapping::mapping_name(t)),
            ))
        }
        arch => Err(wrong(runs_on(arch))),
    }
}

/// Generates each thread's machine code for `isa` (without mapping it):
/// C tests go through the C11 mapping to `isa`. A test for another ISA, or
/// one the backend cannot encode, is refused. Used by [`prepare_with`],
/// and on any host by tests of the code generators.
pub fn generate(test: &Test, isa: Isa, opts: &PrepareOptions) -> Result<Vec<Vec<u8>>, RunError> {
    let (compiled, _) = compile_for(test, isa, opts)?;
    let mut out = Vec::new();
    for th in &compiled.threads {
        let layout = frame::FrameLayout {
            locations: compiled.locations.len(),
            regs: th.regs.len(),
        };
        let bytes = (isa.backend().thread_code)(th, &layout, opts.spacing).map_err(|u| {
            RunError::Unencodable {
                file: test.file.clone(),
                line: instr_line(test, isa, opts, u.thread, u.index),
                thread: u.thread,
                index: u.index,
                instr: th
                    .code
                    .get(u.index)
                    .map(|i| describe(th, &compiled.locations, i))
                    .unwrap_or_else(|| "end of thread".into()),
                what: u.what,
            }
        })?;
        out.push(bytes);
    }
    Ok(out)
}

/// Generates and maps each thread's code for this host, with the default
/// [`PrepareOptions`].
pub fn prepare(test: &Test) -> Result<Program, RunError> {
    prepare_with(test, &PrepareOptions::default())
}

/// Generates and maps each thread's code for this host. Nothing runs: a
/// test for another ISA, a test the backend cannot encode, and a test
/// that needs a CPU feature this CPU lacks (FEAT_LSE, FEAT_LRCPC) are
/// refused here.
pub fn prepare_with(test: &Test, opts: &PrepareOptions) -> Result<Program, RunError> {
    let Some(isa) = Isa::host() else {
        return Err(RunError::WrongIsa {
            file: test.file.clone(),
            arch: test.arch.name(),
            host: host_isa(),
            want: runs_on(test.arch),
        });
    };
    let (compiled, mapping) = compile_for(test, isa, opts)?;
    let code = generate(test, isa, opts)?;
    for th in &compiled.threads {
        for (index, i) in th.code.iter().enumerate() {
            if let Some((feature, hwcap)) = (isa.backend().feature_needed)(i) {
                if !host_has(hwcap) {
                    return Err(RunError::MissingFeature {
                        file: test.file.clone(),
                        line: instr_line(test, isa, opts, th.id, index),
                        thread: th.id,
                        index,
                        instr: describe(th, &compiled.locations, i),
                        feature,
                        hwcap,
                    });
                }
            }
        }
    }
    let mut threads = Vec::new();
    for (th, bytes) in compiled.threads.iter().zip(code) {
        let layout = frame::FrameLayout {
            locations: compiled.locations.len(),
            regs: th.regs.len(),
        };
        let page = code::CodePage::new(&bytes)
            .map_err(|e| RunError::Os(format!("cannot map code pages: {e}")))?;
        threads.push(ThreadCode {
            page,
            layout,
            len: bytes.len(),
        });
    }
    Ok(Program {
        test: test.clone(),
        compiled,
        mapping,
        threads,
    })
}

/// What a run of a test saw.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The variables of a final state (the condition's, then `locations`).
    pub vars: Vec<StateVar>,
    /// Each final state seen, with its count and whether the condition's
    /// proposition holds in it (a witness), sorted by state.
    pub histogram: Vec<(Vec<Value>, u64, bool)>,
    /// Instances whose final state satisfies the proposition.
    pub positive: u64,
    /// Instances whose final state does not.
    pub negative: u64,
    /// Instances discarded by the test's `filter`.
    pub filtered: u64,
    /// Instances whose loop budget ran out (not counted in the histogram).
    pub budget_exhausted: u64,
    /// Runs completed.
    pub runs_done: usize,
    /// Wall time of the runs, collection included.
    pub elapsed: Duration,
    /// Whether `--timeout` cut the runs short.
    pub timed_out: bool,
    /// The CPU each OS thread was pinned to (`None`: not pinned); OS
    /// thread `i` runs `Pi` in every run unless [`Roles::Rotate`].
    pub cpus: Vec<Option<usize>>,
    /// Pinning that the OS refused, with its reason.
    pub pin_errors: Vec<String>,
    /// Where the time went.
    pub phases: Phases,
    /// The CPUs the test's threads shared, when there were fewer than
    /// threads (those the process may use, or those `--pin` lists): they
    /// took turns, and waiting threads gave their CPU up.
    pub shared_cpus: Option<usize>,
}

impl RunResult {
    /// litmus7's observation: Never (no witness), Always (only witnesses),
    /// Sometimes.
    pub fn observation(&self) -> &'static str {
        if self.positive == 0 {
            "Never"
        } else if self.negative == 0 {
            "Always"
        } else {
            "Sometimes"
        }
    }

    /// Instances counted in the histogram.
    pub fn instances(&self) -> u64 {
        self.positive + self.negative
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`BACKENDS`] is in [`Isa`]'s order (`Isa::backend` indexes it), no
    /// two backends share a name or a litmus architecture, and the host's
    /// is the one named as `std::env::consts::ARCH`.
    #[test]
    fn one_backend_per_isa_in_order() {
        for (i, b) in BACKENDS.iter().enumerate() {
            assert_eq!(b.isa as usize, i, "{}", b.name);
            assert_eq!(b.isa.name(), b.name);
            for other in &BACKENDS[..i] {
                assert_ne!(other.name, b.name);
                assert!(b.archs.iter().all(|a| !other.archs.contains(a)));
            }
        }
        if let Some(isa) = Isa::host() {
            assert_eq!(isa.name(), std::env::consts::ARCH);
        }
        assert_eq!(runs_on(Arch::X86_64), "x86_64");
        assert_eq!(runs_on(Arch::RiscV), "riscv64");
    }

    const SHIFT: &str = "C shift-by-register
{ x = 0; y = 0; }

P0 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(x, memory_order_relaxed);
  int r1 = 1;
  if (r0 == 0) {
    int r2 = r1 << r0;
    atomic_store_explicit(y, r2, memory_order_relaxed);
  }
}

P1 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
}
exists (0:r0 = 0)
";

    /// A refused C instruction names its own line, not its function's
    /// (the shift by a register is refused by the x86-64 backend).
    #[test]
    fn a_c_statement_is_found_by_its_line() {
        let t = atomlab_model::mapping::Target::X86;
        let test = atomlab_litmus::parse("t", SHIFT).unwrap();
        let compiled = atomlab_model::mapping::compile(&test, t);
        let index = compiled.threads[0]
            .code
            .iter()
            .position(|i| {
                matches!(
                    i,
                    atomlab_litmus::Instr::Assign {
                        expr: atomlab_litmus::Expr::Bin(atomlab_litmus::BinOp::Shl, ..),
                        ..
                    }
                )
            })
            .unwrap();
        assert_eq!(c_statement_line(SHIFT, t, 0, index), Some(8));
        assert_eq!(c_statement_line(SHIFT, t, 0, 0), Some(5));
        let store = compiled.threads[1].code.len() - 1;
        assert_eq!(c_statement_line(SHIFT, t, 1, store), Some(14));
    }
}
