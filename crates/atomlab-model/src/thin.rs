//! Out-of-thin-air values under `lkmm` (built in, or the kernel's cat files
//! on a Linux-kernel test), shown as herd7 shows them (issue 37).
//!
//! In a load-buffering cycle whose plain accesses store what they read
//! (`r1 = *x; *y = r1;` ∥ `r2 = *y; *x = r2;`), every value satisfies the
//! cycle's equations. herd7 (7.58, herd/mem.ml `solve_mem` and
//! `calculate_rf_with_cnstrnts`) keeps such an execution once, with the
//! cycle's value unsolved, and prints it as the symbol of its equivalence
//! class (`0:r1=S8;`); an execution whose branch tests such a value leaves
//! the branch's constraint unsolvable and is dropped (herd/eventsMonad.ml
//! `choiceT` adds `v := true`/`v := false` for an undetermined condition).
//! The value search here gives the cycle each concrete value instead, so
//! [`symbolic`] turns those executions back into herd7's one:
//!
//! - the events whose values are *determined* are the least fixpoint of
//!   "an initial write; a read from a determined write; a write whose data
//!   dependencies are all determined"; the others are the cycle's;
//! - a branch condition that read one of them drops the execution;
//! - when every undetermined write copies an undetermined read (a chain of
//!   register copies, no arithmetic), each connected class gets one
//!   symbol, the registers and locations holding it show it, and the
//!   executions that differ only in the class's value are counted once;
//!   any other cycle (arithmetic on the way) is left to the value search,
//!   as before, or refused when a reported value depends on it.
//!
//! The symbol's number is herd7's: its C front end (herd/CSem.ml on
//! herd/eventsMonad.ml) draws a fresh variable (lib/symbValue.ml `gensym`,
//! reset per test) for every read of a register (function parameters
//! included: each `*x` reads `x`) and of memory, and for every operation
//! on a value not known when the code is built, `if (r)` counting as
//! `r != 0` (CSem.ml `build_cond`); both branches of an `if` are built,
//! then the code after the join once per branch's event structure
//! (`>>>` folds the continuation over them, the else-branch's first: the
//! golden tests THIN+lb-after-if and THIN+lb-after-if-else record it).
//! [`crate::herd_path::Numbering`] reproduces the count for the
//! instructions above (loads, stores, assignments, fences, `if`/`else`)
//! and gives up on anything else (RMWs, locks, loops): a test whose thin-air value it cannot number
//! is refused ([`crate::CheckError::ThinAir`]) rather than numbered
//! wrongly. Which variable of the class herd7 prints is its solver's
//! choice: `herd_symbol` replays herd/mem.ml's two passes (registers,
//! then memory) of union-find by rank (herd/partition.ml,
//! herd/valconstraint.ml) in herd7's equation order.
//!
//! Not followed: a `filter` is evaluated on the cycle's concrete values
//! before they become symbols (no generated or golden test has a filter
//! on a thin-air value), and a test with C11 atomics under `c11` or a cat
//! file still refuses thin-air values (their accesses' numbering in herd7
//! is not followed here). The other models (a cat file, `c11` on a test of
//! plain accesses only) get the symbols on Linux-kernel and plain C tests,
//! as herd7's front end gives them whatever the model.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use atomlab_litmus::{StateVar, Test, Value};

use crate::exec::Execution;
use crate::interp::{decode, Trace};
use crate::rel::{full_set, members, Bits};

/// What the thin-air analysis needs of one combination of traces, by
/// execution event.
pub(crate) struct ThinInfo<S: Bits = u64> {
    /// For a write, the read (in its thread) whose value it stores unchanged.
    copy_of: Vec<Option<usize>>,
    /// herd7's variable of the value read (a read) or written (a write of
    /// a register's value), numbered over the test (0 when none is known).
    hvar: Vec<u32>,
    /// Per thread: herd7's register-pass equations (test-numbered).
    unions: Vec<Vec<(u32, u32)>>,
    /// Each event's thread (`usize::MAX` for initial writes).
    thread: Vec<usize>,
    /// Reads whose values a branch condition tests.
    tested: S,
    /// Per thread and register: the read whose value the register holds
    /// unchanged at the end, and the reads its value depends on.
    reg_src: Vec<Vec<Option<usize>>>,
    reg_dep: Vec<Vec<S>>,
    /// Whether every thread's variables are numbered as herd7 does.
    numbered: bool,
    /// Whether the test is Linux-kernel C or C with plain accesses only: a
    /// model that allows thin air (a cat file, `c11`) gets herd7's symbols
    /// on such tests only (on C11 atomics they keep refusing).
    pub(crate) linux: bool,
}

impl<S: Bits> ThinInfo<S> {
    /// The information of `traces` (one per thread) over `nl` locations,
    /// numbered as [`crate::exec::Skeleton::build`] numbers events.
    pub(crate) fn build(traces: &[&Trace], nl: usize, linux: bool) -> ThinInfo<S> {
        let n = nl + traces.iter().map(|t| t.events.len()).sum::<usize>();
        let mut info = ThinInfo {
            copy_of: vec![None; n],
            hvar: vec![0; n],
            tested: S::ZERO,
            reg_src: Vec::with_capacity(traces.len()),
            reg_dep: Vec::with_capacity(traces.len()),
            unions: Vec::with_capacity(traces.len()),
            thread: vec![usize::MAX; n],
            numbered: traces.iter().all(|t| t.herd_total.is_some()),
            linux,
        };
        let mut base = nl;
        let mut hbase = 0u32;
        for (t, tr) in traces.iter().enumerate() {
            info.unions.push(
                tr.herd_unions
                    .iter()
                    .map(|&(a, b)| (hbase + a, hbase + b))
                    .collect(),
            );
            for (k, e) in tr.events.iter().enumerate() {
                info.thread[base + k] = t;
                info.copy_of[base + k] = e.copy_of.map(|i| base + usize::from(i));
                if e.hvar > 0 {
                    info.hvar[base + k] = hbase + e.hvar;
                }
            }
            info.tested |= S::from_u64(tr.tested) << base;
            info.reg_src
                .push(tr.reg_src.iter().map(|s| s.map(|i| base + i)).collect());
            info.reg_dep
                .push(tr.reg_dep.iter().map(|&d| S::from_u64(d) << base).collect());
            base += tr.events.len();
            hbase += tr.herd_total.unwrap_or(0);
        }
        info
    }
}

/// How an allowed execution is shown.
pub(crate) enum Symbolic {
    /// No undetermined value: its concrete state.
    Concrete,
    /// A branch tests an undetermined value: herd7 has no such execution.
    Drop,
    /// A reported value depends on an undetermined one through arithmetic,
    /// or herd7's numbering is not followed: refuse.
    Refuse,
    /// The state with symbols, whether the condition holds, and a key that
    /// is the same for the executions differing only in the symbols' values.
    State(Vec<Value>, bool, u64),
}

/// The execution `x` as herd7 shows it, under a model that allows it.
pub(crate) fn symbolic<S: Bits>(
    test: &Test,
    vars: &[StateVar],
    nl: usize,
    x: &Execution<'_, S>,
    info: &ThinInfo<S>,
) -> Symbolic {
    let sk = x.s;
    if (x.rf | sk.data).acyclic() {
        return Symbolic::Concrete;
    }
    let mem = sk.sets.r | sk.sets.w;
    let rf_inv = x.rf.inv();
    let data_inv = sk.data.inv();
    // Least fixpoint of the determined events.
    let mut det: S = sk.sets.iw | (full_set::<S>(sk.n) & !mem);
    loop {
        let mut next = det;
        for e in members(mem & !det) {
            let b = S::bit(e);
            let read_ok = (sk.sets.r & b).is_empty()
                || (rf_inv.row(e) & !det).is_empty() && !rf_inv.row(e).is_empty();
            let write_ok = (sk.sets.w & b).is_empty() || (data_inv.row(e) & !det).is_empty();
            if read_ok && write_ok {
                next |= b;
            }
        }
        if next == det {
            break;
        }
        det = next;
    }
    let und = mem & !det;
    if und.is_empty() {
        return Symbolic::Concrete;
    }
    if !(und & info.tested).is_empty() {
        return Symbolic::Drop;
    }
    // Copy-only: each undetermined write stores an undetermined read as is.
    let mut parent: Vec<usize> = (0..sk.n).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for e in members(und) {
        if sk.sets.upd.has(e) {
            return Symbolic::Concrete;
        }
        if sk.sets.w.has(e) {
            match info.copy_of.get(e).copied().flatten() {
                Some(r) if und.has(r) => {
                    let (a, c) = (find(&mut parent, e), find(&mut parent, r));
                    parent[a] = c;
                }
                _ => return Symbolic::Concrete,
            }
        } else {
            for w in members(rf_inv.row(e)) {
                let (a, c) = (find(&mut parent, e), find(&mut parent, w));
                parent[a] = c;
            }
        }
    }
    if !info.numbered {
        return Symbolic::Refuse;
    }
    // Each class's symbol: the representative herd7's solver ends with.
    let mut sym: HashMap<usize, u32> = HashMap::new();
    for e in members(und & sk.sets.r) {
        let root = find(&mut parent, e);
        if sym.contains_key(&root) {
            continue;
        }
        let class: Vec<usize> = members(und)
            .filter(|&f| find(&mut parent, f) == root)
            .collect();
        sym.insert(root, herd_symbol(x, info, &class));
    }
    let mut refuse = false;
    let mut get = |v: &StateVar| -> Value {
        match v {
            StateVar::Reg { thread, reg } => {
                if let Some(Some(src)) = info.reg_src.get(*thread).and_then(|r| r.get(*reg)) {
                    if und.has(*src) {
                        let root = find(&mut parent, *src);
                        return Value::Sym(sym.get(&root).copied().unwrap_or(0));
                    }
                }
                if let Some(d) = info.reg_dep.get(*thread).and_then(|r| r.get(*reg)) {
                    if !(*d & und).is_empty() {
                        refuse = true;
                    }
                }
                decode(sk.regs[*thread].get(*reg).copied().unwrap_or(0), nl)
            }
            StateVar::Loc(l) => {
                let w = x.last[*l];
                if und.has(w) {
                    let root = find(&mut parent, w);
                    return Value::Sym(sym.get(&root).copied().unwrap_or(0));
                }
                decode(sk.events[w].wval, nl)
            }
        }
    };
    let state: Vec<Value> = vars.iter().map(&mut get).collect();
    if refuse {
        return Symbolic::Refuse;
    }
    let lookup = |v: &StateVar| -> Value {
        vars.iter()
            .position(|w| w == v)
            .map(|i| state[i])
            .unwrap_or(Value::Int(0))
    };
    let holds = test.condition.prop.eval(&lookup);
    // The executions of this class differ only in the undetermined events'
    // values: the key leaves them out.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    state.hash(&mut h);
    for e in 0..sk.n {
        x.rf.row(e).hash(&mut h);
        x.co.row(e).hash(&mut h);
        if !und.has(e) {
            (sk.events[e].rval, sk.events[e].wval).hash(&mut h);
        }
    }
    Symbolic::State(state, holds, h.finish())
}

/// herd7's name for the value of one class of undetermined events: its
/// solver (herd/mem.ml) first solves the registers (`solve_regs`: each
/// register read equated with what its register's last write stored),
/// then memory (`solve_mem`: each load equated with the value its write
/// stores), each pass a union-find by rank (herd/partition.ml, union of
/// `Assign (v, Atom w)` making `v`'s root the parent on a tie) over its
/// equations in list order: the events' map folded into a list, the last
/// event's equation first. The class's value is printed as its root's
/// variable. Events are taken in the order herd7 creates them, which is
/// the order of their variables.
fn herd_symbol<S: Bits>(x: &Execution<'_, S>, info: &ThinInfo<S>, class: &[usize]) -> u32 {
    // The register pass, over the class's threads.
    let mut threads: Vec<usize> = class.iter().map(|&e| info.thread[e]).collect();
    threads.sort_unstable();
    threads.dedup();
    let mut regs: Vec<(u32, u32)> = threads
        .iter()
        .filter_map(|&t| info.unions.get(t))
        .flatten()
        .copied()
        .collect();
    regs.sort_unstable_by_key(|u| std::cmp::Reverse(u.0));
    let mut uf1 = Uf::default();
    for &(v, w) in &regs {
        uf1.union(v, w);
    }
    // The memory pass: each load of the class with its write's value.
    let mut loads: Vec<(u32, u32)> = class
        .iter()
        .filter(|&&e| x.s.sets.r.has(e))
        .filter_map(|&e| {
            let w = members(x.rf.inv().row(e)).next()?;
            let (lv, wv) = (info.hvar[e], info.hvar[w]);
            (lv != 0 && wv != 0).then_some((lv, wv))
        })
        .collect();
    loads.sort_unstable_by_key(|l| std::cmp::Reverse(l.0));
    let mut uf2 = Uf::default();
    for &(l, w) in &loads {
        let (l, w) = (uf1.find(l), uf1.find(w));
        uf2.union(l, w);
    }
    class
        .iter()
        .find(|&&e| info.hvar[e] != 0)
        .map(|&e| {
            let v = uf1.find(info.hvar[e]);
            uf2.find(v)
        })
        .unwrap_or(0)
}

/// herd/partition.ml's union-find: union by rank, the first argument's
/// root the parent on a tie.
#[derive(Default)]
struct Uf {
    /// Per variable: its parent and rank (absent: its own root, rank 0).
    cells: HashMap<u32, (u32, u32)>,
}

impl Uf {
    fn find(&mut self, v: u32) -> u32 {
        let mut r = v;
        while let Some(&(p, _)) = self.cells.get(&r) {
            if p == r {
                break;
            }
            r = p;
        }
        r
    }

    fn rank(&self, v: u32) -> u32 {
        self.cells.get(&v).map_or(0, |c| c.1)
    }

    fn union(&mut self, a: u32, b: u32) {
        let (d1, d2) = (self.find(a), self.find(b));
        if d1 == d2 {
            return;
        }
        let (r1, r2) = (self.rank(d1), self.rank(d2));
        if r1 > r2 {
            self.cells.insert(d2, (d1, r2));
        } else if r2 > r1 {
            self.cells.insert(d1, (d2, r1));
        } else {
            self.cells.insert(d2, (d1, r2));
            self.cells.insert(d1, (d1, r1 + 1));
        }
    }
}
