//! `--advise`: what to change in the machine code, tried on the lifted
//! code and verified again, one change at a time.
//!
//! For a FAIL: each access made acquire (a read) or release (a write), and
//! a full barrier added after a read or before a write; every change that
//! turns the FAIL into a PASS is advice. For a PASS: each acquire or
//! release form made plain, and each barrier dropped; every change that
//! keeps the PASS could be weakened, for this client. This is the
//! question VSync asks of C source (Oberhauser et al., "VSync: Push-Button
//! Verification and Optimization for Synchronization Primitives on Weak
//! Memory Models", ASPLOS 2021), asked here of the instructions shipped: a
//! change applies to a machine instruction, so to every place the client
//! runs it (each thread, each round).

use atomlab_audit::PluginFile;
use atomlab_litmus::{Annot, Instr, Test};

use crate::client::Built;
use crate::{judge, Options, Verdict};

/// One piece of advice: a change to one instruction and what it gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Advice {
    /// The instruction's address in the file.
    pub addr: u64,
    /// Where that is (`tas_lock+0x8`).
    pub place: String,
    /// The instruction as disassembled.
    pub instruction: String,
    /// The change, in words (`make it acquire (ldaxr)`).
    pub change: String,
    /// The verdict with the change.
    pub verdict: Verdict,
    /// Executions the checker examined with the change.
    pub executions: usize,
}

/// A change to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Acquire,
    Release,
    BarrierAfter,
    BarrierBefore,
    DropAcquire,
    DropRelease,
    DropBarrier,
}

/// At most this many changes are tried per verdict (each is a check).
const MAX_TRIES: usize = 48;

/// What `--advise` found: the changes that work, and how many were tried.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Advised {
    /// The changes that pass (FAIL) or keep passing (PASS).
    pub advice: Vec<Advice>,
    /// Changes tried (0: the code has nothing to change, such as x86 code
    /// with no barrier, whose locked instructions are full barriers).
    pub tried: usize,
}

/// The advice for `b`, judged `was` under `model`: strengthenings that
/// pass for a FAIL, weakenings that keep passing for a PASS; none for
/// BOUND or REFUSED.
pub(crate) fn advise(
    file: &PluginFile<'_>,
    b: &Built,
    model: &str,
    opts: &Options,
    was: Verdict,
) -> Advised {
    let changes: &[Change] = match was {
        Verdict::Fail => &[
            Change::Acquire,
            Change::Release,
            Change::BarrierAfter,
            Change::BarrierBefore,
        ],
        Verdict::Pass => &[
            Change::DropAcquire,
            Change::DropRelease,
            Change::DropBarrier,
        ],
        Verdict::Bound | Verdict::Refused => return Advised::default(),
    };
    // Only instructions some run executes: a change to code no run reaches
    // (outline atomics' other path) would change nothing.
    let Ok(run) = atomlab_model::instructions_run(&b.test, &crate::check_options(opts)) else {
        return Advised::default();
    };
    let mut out = Vec::new();
    let mut tried = 0;
    for addr in addresses(b, &run) {
        let instruction = b
            .lifter
            .disassemble(file, addr)
            .unwrap_or_else(|| format!("{addr:#x}"));
        for &change in changes {
            // Only a change the instruction set can make: an acquire or
            // release form it has (Arm's LDAR/STLR, RISC-V's aq/rl bits),
            // never one x86 or a RISC-V plain access lacks.
            let form = match change {
                Change::Acquire => b.lifter.ordered_form(&instruction, true),
                Change::Release => b.lifter.ordered_form(&instruction, false),
                _ => Some(String::new()),
            };
            if form.is_none() {
                continue;
            }
            let Some(test) = apply(b, addr, change) else {
                continue;
            };
            if tried == MAX_TRIES {
                return Advised { advice: out, tried };
            }
            tried += 1;
            let changed = Built {
                test,
                reads_lse_flag: b.reads_lse_flag,
                property: b.property.clone(),
                initial: b.initial.clone(),
                origins: b.origins.clone(),
                lifter: b.lifter,
                heap_errors: b.heap_errors.clone(),
            };
            let j = judge(&changed, model, opts);
            // A FAIL made to pass, or a PASS that stays one.
            if j.verdict == Verdict::Pass {
                let place = file.describe(addr);
                out.push(Advice {
                    addr,
                    change: words(b, &place, &instruction, change),
                    place,
                    instruction: instruction.clone(),
                    verdict: j.verdict,
                    executions: j.executions,
                });
            }
        }
    }
    Advised { advice: out, tried }
}

/// The plugin instructions some run of the client executes (`run`: per
/// thread, the indices of those that make events), in program order.
fn addresses(b: &Built, run: &[Vec<usize>]) -> Vec<u64> {
    let mut seen = Vec::new();
    for (th, pcs) in b.origins.iter().zip(run) {
        for a in pcs.iter().filter_map(|&pc| th.get(pc).copied().flatten()) {
            if !seen.contains(&a) {
                seen.push(a);
            }
        }
    }
    seen
}

/// The change in words, with the instruction's stronger or weaker form
/// where the lifter knows it.
fn words(b: &Built, place: &str, instruction: &str, change: Change) -> String {
    let barrier = b.lifter.full_barrier().map_or("a full barrier", |f| f.1);
    let form = |acquire: bool| {
        b.lifter
            .ordered_form(instruction, acquire)
            .map_or(String::new(), |m| format!(" ({m})"))
    };
    let mut s = match change {
        Change::Acquire => format!("make it acquire{}", form(true)),
        Change::Release => format!("make it release{}", form(false)),
        Change::BarrierAfter => format!("add {barrier} after it"),
        Change::BarrierBefore => format!("add {barrier} before it"),
        Change::DropAcquire => "it need not be acquire".to_string(),
        Change::DropRelease => "it need not be release".to_string(),
        Change::DropBarrier => "this barrier can go".to_string(),
    };
    if place.starts_with("__aarch64_") {
        s.push_str(
            " (it is in libgcc's outline-atomics helper: in the source, give the atomic the matching memory_order)",
        );
    }
    s
}

/// `b`'s test with `change` made to every lifted instruction from `addr`,
/// or `None` when the change does not apply to it.
fn apply(b: &Built, addr: u64, change: Change) -> Option<Test> {
    let mut test = b.test.clone();
    let mut any = false;
    for (t, th) in test.threads.iter_mut().enumerate() {
        // `j` indexes the code as built (and its origins), `i` the code
        // with the barriers inserted so far.
        let mut inserted = 0;
        for j in 0..b.origins[t].len().min(th.code.len()) {
            if b.origins[t][j] != Some(addr) {
                continue;
            }
            let i = j + inserted;
            match change {
                Change::Acquire | Change::Release | Change::DropAcquire | Change::DropRelease => {
                    any |= annotate(&mut th.code[i], change);
                }
                Change::DropBarrier => {
                    if matches!(th.code[i], Instr::Fence(_)) {
                        // An unconditional branch to the next instruction:
                        // nothing, with every target kept.
                        th.code[i] = Instr::Branch {
                            cond: None,
                            target: i + 1,
                        };
                        any = true;
                    }
                }
                Change::BarrierAfter if reads(&th.code[i]) => {
                    let f = b.lifter.full_barrier()?.0;
                    insert(&mut th.code, i + 1, Instr::Fence(f), true);
                    any = true;
                    inserted += 1;
                }
                Change::BarrierBefore if writes(&th.code[i]) => {
                    let f = b.lifter.full_barrier()?.0;
                    insert(&mut th.code, i, Instr::Fence(f), false);
                    any = true;
                    inserted += 1;
                }
                _ => {}
            }
        }
    }
    any.then_some(test)
}

/// Whether `i` reads memory.
fn reads(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Load { .. } | Instr::Rmw { .. } | Instr::Cas { .. }
    )
}

/// Whether `i` writes memory.
fn writes(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Store { .. } | Instr::StoreExclusive { .. } | Instr::Rmw { .. } | Instr::Cas { .. }
    )
}

/// Makes the annotation change on `i`; whether it changed anything.
fn annotate(i: &mut Instr, change: Change) -> bool {
    let set = |a: &mut Annot, on: bool, acquire: bool| -> bool {
        let before = *a;
        if acquire {
            a.acquire = on;
            if !on {
                a.acquire_pc = false;
            }
        } else {
            a.release = on;
        }
        *a != before
    };
    match (i, change) {
        (Instr::Load { annot, .. }, Change::Acquire) if !annot.acquire_pc => set(annot, true, true),
        (Instr::Load { annot, .. }, Change::DropAcquire) => set(annot, false, true),
        (Instr::Store { annot, .. } | Instr::StoreExclusive { annot, .. }, Change::Release) => {
            set(annot, true, false)
        }
        (Instr::Store { annot, .. } | Instr::StoreExclusive { annot, .. }, Change::DropRelease) => {
            set(annot, false, false)
        }
        (Instr::Rmw { read, .. }, Change::Acquire) => set(read, true, true),
        (Instr::Rmw { read, .. }, Change::DropAcquire) => set(read, false, true),
        (Instr::Rmw { write, .. }, Change::Release) => set(write, true, false),
        (Instr::Rmw { write, .. }, Change::DropRelease) => set(write, false, false),
        // CASA acquires whether or not it succeeds.
        (Instr::Cas { read, fail, .. }, Change::Acquire) => {
            set(read, true, true) | set(fail, true, true)
        }
        (Instr::Cas { read, fail, .. }, Change::DropAcquire) => {
            set(read, false, true) | set(fail, false, true)
        }
        (Instr::Cas { write, .. }, Change::Release) => set(write, true, false),
        (Instr::Cas { write, .. }, Change::DropRelease) => set(write, false, false),
        _ => false,
    }
}

/// Inserts `instr` at `at`, moving every branch target past it; a branch
/// to `at` itself lands after the new instruction when `skip` (it was
/// added after the previous one), on it otherwise (added before `at`).
fn insert(code: &mut Vec<Instr>, at: usize, instr: Instr, skip: bool) {
    for i in code.iter_mut() {
        if let Instr::Branch { target, .. } = i {
            if *target > at || (*target == at && skip) {
                *target += 1;
            }
        }
    }
    code.insert(at, instr);
}
