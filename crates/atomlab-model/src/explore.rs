//! Incremental exploration of a test's executions: the `explore` engine of
//! `atomlab check`, after GenMC and HMC (Kokologiannakis, Raad and
//! Vafeiadis, "Model checking for weakly consistent libraries", PLDI 2019;
//! Kokologiannakis and Vafeiadis, "HMC: Model checking for hardware memory
//! models", ASPLOS 2020).
//!
//! The enumerating engine ([`crate::exec`]) forms every coherence order of
//! every location, pairs it with every reads-from, and judges the product.
//! This engine instead grows one execution graph at a time:
//!
//! 1. **Reads-from, fewest choices first.** Reads are given sources in
//!    order of how many writes with their value they may read (program
//!    order among equals: [`most_constrained_first`]); each picks one.
//!    Two read-modify-writes of different threads never pick one write
//!    (one's write would come between the other's source and write:
//!    atomicity, [`Search::rmw_source_taken`]). After each
//!    pick the coherence edges that *every* coherent completion must have
//!    are derived (coWW from program order; coWR, coRW and coRR from the
//!    reads-from so far; the initial write first; an RMW after the write it
//!    reads), as GenMC's PLDI 2019 paper does when it checks RC11 without a
//!    fixed coherence order (its "writes-before" relation). A cycle there
//!    is an SC-per-location violation, which every model here implies, so
//!    the branch dies. (These edges are exact: with them, any total order
//!    extending them is SC-per-location, by the five coherence patterns of
//!    Alglave et al., "Herding cats", TOPLAS 2014, section 4.)
//! 2. **Coherence, position by position.** With reads-from complete, the
//!    co-maximal write of each location is chosen first (it decides the
//!    final state), then the other writes are placed from the end of each
//!    coherence order towards its start, RMW atomicity enforced as they go.
//! 3. **Pruning.** At each step the graph built so far (reads-from so far,
//!    the coherence edges known so far) is judged by each model with the
//!    axioms it declares *monotone* ([`crate::models::Model::judge_partial`]): acyclicity,
//!    irreflexivity or emptiness of relations built from rf, co and fr by
//!    union, intersection with fixed relations, sequence, closure and
//!    inverse, so adding edges can only add violations and a violation now
//!    is a violation in every completion. `sc`, `x86tso`, `rc11` and
//!    `riscv` prune with all their axioms (`riscv` by relating, in its
//!    `r2`, only reads whose source is chosen); `aarch64` with all but
//!    `atomic` (which subtracts internal paths); `c11` with under-
//!    approximations of its release sequences and `NaRf` (each subtracts a
//!    growing relation; see [`crate::models::c11`]); `lkmm` with
//!    happens-before and propagation (its RCU, lock and plain-access
//!    axioms on complete executions only).
//! 4. **Outcomes, not executions.** A final state depends only on the
//!    threads' traces and the co-maximal writes, both fixed before the
//!    coherence orders are filled in. Once a model allows an execution with
//!    that state (and, for a test that can race, a racy one), further
//!    completions cannot change its answer and are not explored. This is
//!    why a test with many coherence orders (four threads storing three
//!    times to one location) finishes: the search is per reachable outcome,
//!    not per execution.
//!
//! Equality with the enumerating engine is tested on the reference corpus
//! and on random tests (`tests/explore_agree.rs`). Witness counts differ by
//! design: `Positive`/`Negative` here count the allowed executions the
//! search visited, not all of them.
//!
//! # Limitations
//! - Models given by the caller (cat files) are enumerated: their `flag`
//!   checks are per execution, and their monotonicity is not known.
//! - `lkmm` raises flags per execution ([`crate::models::Model::raises_flags`]),
//!   so it is explored without step 4's shortcut: every execution it
//!   allows is visited (its flags, states and Positive/Negative counts are
//!   the enumeration's, checked on the Linux-kernel corpora), pruning only
//!   cuts the others, and not at all in a test with an unlock no lock
//!   precedes (lock.cat takes it out of co before judging). On the
//!   corpora's small tests that costs more than enumerating, so `auto`
//!   explores lkmm only above a larger search space than the others'
//!   (`EXPLORE_FLAGGED_ABOVE`).
//! - A model's non-monotone axioms (`c11`'s exact release sequences and
//!   `NaRf`, `aarch64`'s `atomic`) are only applied to complete
//!   executions: a branch that only they forbid is explored to its leaves.
//! - Threads' traces are enumerated up front, with every value a read may
//!   return ([`crate::interp`], at most 200,000 for all threads), and each
//!   combination of traces is searched on its own: a thread with k reads
//!   of a location that m writes may have (m+1)^k traces, so a reader of
//!   four loads hits the bound with six writers of four stores. GenMC
//!   instead adds a thread's events as its reads get their sources.
//! - With `--explain` or `--graphs` the engine explains only forbidden
//!   outcomes whose execution it completed; `auto` enumerates then.

use crate::exec::{Execution, Skeleton};
use crate::judge::{Acc, Recorder};
use crate::options::{CheckOptions, Engine};
use crate::rel::{members, Bits, Rel, MAX_WIDE_EVENTS};
use crate::width::Width;
use crate::CheckError;

/// Whether the exploration engine may judge this group of models (for
/// `auto`, skeleton by skeleton, see [`worth_exploring`]).
pub(crate) fn applies(opts: &CheckOptions, builtin: bool) -> bool {
    match opts.engine {
        Engine::Enumerate => false,
        Engine::Explore => builtin,
        Engine::Auto => builtin && !opts.explain && !opts.graphs,
    }
}

/// For [`Engine::Auto`]: whether a skeleton's candidate executions are
/// many enough for the exploration to pay for its bookkeeping. The bound is
/// the enumerating engine's search space before pruning: per location, the
/// orders of its writes times a source for each of its reads. `flagged`:
/// one of the models raises flags ([`EXPLORE_FLAGGED_ABOVE`]).
pub(crate) fn worth_exploring<S: Bits>(sk: &Skeleton<S>, nl: usize, flagged: bool) -> bool {
    let mut bound = 1f64;
    for l in 0..nl {
        let here = (0..sk.n).filter(|&i| sk.events[i].loc == Some(l));
        let (mut w, mut r) = (0u32, 0i32);
        for i in here {
            if (sk.sets.w & !sk.sets.iw).has(i) {
                w += 1;
            }
            if sk.sets.r.has(i) {
                r += 1;
            }
        }
        let orders: f64 = (1..=w).map(f64::from).product();
        bound *= orders * f64::from(w + 1).powi(r);
    }
    bound
        > if flagged {
            EXPLORE_FLAGGED_ABOVE
        } else {
            EXPLORE_ABOVE
        }
}

/// Where `auto` changes engine (candidates per skeleton): below it the
/// enumeration is cheaper than the exploration's per-step judgements (on the
/// reference corpus, whose skeletons are almost all below it).
const EXPLORE_ABOVE: f64 = 5000.0;

/// The same for a model that raises flags (`lkmm`), whose exploration
/// visits every allowed execution and so saves less: the Linux-kernel
/// corpora (lkmm-if, litmus-more/linux, the C corpus under lkmm, 1,700
/// tests, one job) took 0.67-0.89 s enumerated, 0.98-1.16 s with the
/// threshold at 5,000 and 0.81-0.90 s at 10^6, with the same output. A
/// lock chain is far above it: five threads taking one spinlock (6 x 10^11
/// candidates) timed out at 60 s enumerated and take 0.03 s explored.
const EXPLORE_FLAGGED_ABOVE: f64 = 1e6;

/// The search over one skeleton (one trace per thread).
struct Search<'a, 'r, S: Bits> {
    sk: &'a Skeleton<S>,
    /// The models that raise flags (bit per model): never settled.
    flagged: u64,
    /// What the thin-air analysis needs, for the models that show such
    /// values as herd7 does (`crate::thin`).
    thin: Option<&'a crate::thin::ThinInfo<S>>,
    rec: &'r Recorder<'r>,
    accs: &'r mut [Acc],
    candidates: &'r mut usize,
    /// Reads, in the order the search gives them sources
    /// ([`most_constrained_first`]).
    reads: Vec<usize>,
    /// The writes each read may read from (same location and value).
    sources: Vec<Vec<usize>>,
    /// The writes of each location, initial write included.
    loc_writes: Vec<S>,
    /// Models (bit k = model k) that judge partial graphs ([`crate::models::Model::prunes`]).
    monotone: u64,
    /// Whether some execution can race (a non-atomic access exists): then
    /// a state's racy flag is sought until found.
    race_possible: bool,
    po_loc: Rel<S>,
    po_loc_inv: Rel<S>,
    /// The coherence edges no reads-from changes: the initial write of
    /// each location first, and coWW (program order between writes).
    co_base: Rel<S>,
    /// The forced coherence ([`Search::forced_co`]) after each depth of
    /// the search over reads-from: `forced[i]` once the first `i` reads
    /// have sources, closed; each depth adds the edges of one read to its
    /// parent's (`forced_with`), where recomputing and closing every
    /// read's edges at every step took 14-26 % of verify's time.
    forced: Vec<Rel<S>>,
    rf: Rel<S>,
    src: [usize; MAX_WIDE_EVENTS],
    /// The read-modify-write reads (of pairs and single-event RMWs) whose
    /// sources are cut by [`Search::rmw_source_taken`]; empty when pruning
    /// is off (`CheckOptions::unpruned`).
    rmw_reads: S,
    steps: u64,
}

/// Explores the executions of `sk`, recording each model's allowed final
/// states in `accs` as the enumerating engine does.
pub(crate) fn explore_skeleton<S: Width>(
    sk: &Skeleton<S>,
    rec: &Recorder<'_>,
    accs: &mut [Acc],
    candidates: &mut usize,
    thin: Option<&crate::thin::ThinInfo<S>>,
) -> Result<(), CheckError> {
    let Some(mut search) = Search::new(sk, rec, accs, candidates, sk.sets.r) else {
        return Ok(());
    };
    search.thin = thin;
    let all = if rec.models.len() >= 64 {
        u64::MAX
    } else {
        (1u64 << rec.models.len()) - 1
    };
    search.reads_from(0, all)
}

/// Whether some reads-from for the reads of `settled` (each from a write
/// of `sk` with its value, the other reads left without a source) passes
/// the monotone axioms ([`crate::models::Model::judge_partial`]) of at
/// least one model: `false` when every model forbids every such graph.
///
/// `sk` is built from prefixes of the threads' runs ([`crate::combine`]'s
/// probe). The answer holds for every execution that extends them: a
/// prefix's fixed relations (program order, dependencies, barriers, the
/// sets) are those of any extension restricted to its events, since
/// nothing a prefix holds depends on what comes after it in program
/// order; its reads-from and coherence are subsets of the extension's;
/// a stand-in write after a thread's prefix (`combine::Prefix::later`,
/// used only when that thread writes the value at most once more) stands
/// for that one write of the extension, and has fewer fixed edges than it
/// (program order from the prefix, the barriers and acquires there; no
/// dependencies, no annotations, no order among the stand-ins);
/// and a monotone axiom violated by fewer edges stays violated with more
/// (GenMC checks each graph it grows the same way: Kokologiannakis and
/// Vafeiadis, "GenMC: A model checker for weak memory models", CAV 2021).
/// Models that do not prune are never cut: with one among `rec`'s, the
/// answer is `true`.
pub(crate) fn prefix_satisfiable<S: Width>(
    sk: &Skeleton<S>,
    rec: &Recorder<'_>,
    settled: S,
) -> Result<bool, CheckError> {
    if rec.opts.unpruned || !rec.models.iter().all(|m| m.prunes()) {
        return Ok(true);
    }
    let mut candidates = 0;
    let Some(mut search) = Search::new(sk, rec, &mut [], &mut candidates, sk.sets.r & settled)
    else {
        return Ok(false);
    };
    let co = search.forced[0];
    if search.prune(&co, search.monotone) != 0 {
        search.satisfiable(0, search.monotone)
    } else {
        Ok(false)
    }
}

/// The reads ordered by how many writes each may read from, fewest first
/// (program order among equals): a read with one possible source adds its
/// edges before the search branches at all, so that a choice among many
/// (a lock's acquisitions, each of which may follow any release) is judged
/// against them at once rather than after every branch below it was
/// explored (the "most constrained variable first" rule of constraint
/// search; GenMC gets the same effect by adding events whose sources are
/// determined as it meets them). The search's answers do not depend on
/// the order: it visits every choice of sources either way.
fn most_constrained_first(
    reads: Vec<usize>,
    sources: Vec<Vec<usize>>,
) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut pairs: Vec<(usize, Vec<usize>)> = reads.into_iter().zip(sources).collect();
    pairs.sort_by_key(|(_, s)| s.len());
    pairs.into_iter().unzip()
}

/// The coherence edges every execution of `sk` has whatever it reads:
/// each location's initial write before its other writes, and coWW.
fn co_base<S: Bits>(sk: &Skeleton<S>, loc_writes: &[S]) -> Rel<S> {
    let w = sk.sets.w;
    let mut co = Rel::empty(sk.n);
    for (l, &ws) in loc_writes.iter().enumerate() {
        let init = sk.init_of[l];
        for x in members(ws & !S::bit(init)) {
            co.add(init, x);
        }
    }
    co | sk.po_loc().dom(w).rng(w)
}

impl<'a, 'r, S: Width> Search<'a, 'r, S> {
    /// The search over `sk` for the reads of `reads` (no thin-air
    /// analysis); `None` when one of them has no write it may read from.
    fn new(
        sk: &'a Skeleton<S>,
        rec: &'r Recorder<'r>,
        accs: &'r mut [Acc],
        candidates: &'r mut usize,
        reads: S,
    ) -> Option<Search<'a, 'r, S>> {
        let reads: Vec<usize> = members(reads).collect();
        let sources = reads
            .iter()
            .map(|&r| {
                members(sk.sets.w & sk.loc.row(r))
                    .filter(|&w| {
                        w != r && sk.events[w].wval == sk.events[r].rval && !sk.po.has(r, w)
                    })
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>();
        if sources.iter().any(|s| s.is_empty()) {
            return None;
        }
        let (reads, sources) = most_constrained_first(reads, sources);
        let loc_writes: Vec<S> = (0..rec.nl)
            .map(|l| {
                members(sk.sets.w)
                    .filter(|&w| sk.events[w].loc == Some(l))
                    .fold(S::ZERO, |a, w| a | S::bit(w))
            })
            .collect();
        let monotone = rec
            .models
            .iter()
            .enumerate()
            .filter(|(_, m)| m.prunes() && !rec.opts.unpruned)
            .fold(0u64, |a, (k, _)| a | 1 << k);
        // A model that raises flags (lkmm) is never settled by a state:
        // every execution it allows is visited, as the enumeration visits
        // them, so that no flag and no count is missed; pruning still cuts
        // the others.
        let flagged = rec
            .models
            .iter()
            .enumerate()
            .filter(|(_, m)| m.raises_flags())
            .fold(0u64, |a, (k, _)| a | 1 << k);
        let co_base = co_base(sk, &loc_writes);
        // The base has no cycle (init before the rest, then program
        // order); were it to have one, no execution would exist.
        let closed = co_base.plus();
        if !closed.irreflexive() {
            return None;
        }
        Some(Search {
            sk,
            rec,
            accs,
            candidates,
            reads,
            sources,
            co_base,
            forced: vec![closed],
            loc_writes,
            monotone,
            flagged,
            thin: None,
            race_possible: !(sk.sets.m & !sk.sets.atomic & !sk.sets.iw).is_empty(),
            po_loc: sk.po_loc(),
            po_loc_inv: sk.po_loc().inv(),
            rf: Rel::empty(sk.n),
            src: [usize::MAX; MAX_WIDE_EVENTS],
            rmw_reads: if rec.opts.unpruned {
                S::ZERO
            } else {
                sk.rmw.domain() | sk.sets.upd
            },
            steps: 0,
        })
    }
}

impl<S: Width> Search<'_, '_, S> {
    /// Whether the reads from number `i` on can be given sources that
    /// leave some model of `alive` unviolated ([`prefix_satisfiable`]).
    fn satisfiable(&mut self, i: usize, alive: u64) -> Result<bool, CheckError> {
        if i == self.reads.len() {
            return Ok(true);
        }
        let r = self.reads[i];
        for k in 0..self.sources[i].len() {
            self.tick()?;
            let w = self.sources[i][k];
            if self.rmw_source_taken(r, w) {
                continue;
            }
            self.rf.add(w, r);
            self.src[r] = w;
            let found = match self.forced_with(r, w) {
                Some(co) => {
                    let alive = self.prune(&co, alive);
                    self.forced.push(co);
                    let found = alive != 0 && self.satisfiable(i + 1, alive)?;
                    self.forced.pop();
                    found
                }
                None => false,
            };
            self.src[r] = usize::MAX;
            self.rf.remove(w, r);
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn tick(&mut self) -> Result<(), CheckError> {
        self.steps += 1;
        if self.steps & 1023 == 0 {
            if let Some(d) = self.rec.opts.deadline {
                if std::time::Instant::now() > d {
                    return Err(CheckError::Timeout);
                }
            }
        }
        Ok(())
    }

    /// Whether giving RMW read `r` the source `w` breaks atomicity whatever
    /// coherence follows: another thread's RMW read already reads `w` (or,
    /// for two single-event RMWs, any other). Both writes then follow `w`
    /// in coherence (coRW, or the RMW's own edge), so one of them comes
    /// between `w` and the other: `rmw & (fre; coe)` for a pair, not the
    /// direct successor for a single-event RMW, which every built-in model
    /// forbids and the coherence search excludes at the leaves
    /// ([`Search::atomic_ok`]). Cutting it here keeps a lock's
    /// acquisitions from being tried in every way that two of them take
    /// one release: five threads taking one spinlock have 6^5 choices of
    /// sources for their acquisitions, of which 5! pass this test.
    fn rmw_source_taken(&self, r: usize, w: usize) -> bool {
        let sk = self.sk;
        if !self.rmw_reads.has(r) {
            return false;
        }
        let both_single = |r2: usize| sk.sets.upd.has(r) && sk.sets.upd.has(r2);
        members(self.rmw_reads & !S::bit(r))
            .any(|r2| self.src[r2] == w && (sk.ext.has(r, r2) || both_single(r2)))
    }

    /// The forced coherence of the reads given sources so far (the top of
    /// `self.forced`) with read `r` given source `s` too: the edges
    /// [`Search::forced_co`] lists for `r`, and coRR with the reads of its
    /// location before and after it that have sources, added to the closed
    /// relation one by one ([`Rel::add_closed`]); `None` on a cycle.
    fn forced_with(&self, r: usize, s: usize) -> Option<Rel<S>> {
        let co = self.add_read_edges(r, s);
        debug_assert_eq!(co, self.forced_co());
        co
    }

    fn add_read_edges(&self, r: usize, s: usize) -> Option<Rel<S>> {
        let sk = self.sk;
        let w = sk.sets.w;
        let mut co = *self.forced.last()?;
        // An RMW's write follows the write it reads.
        if w.has(r) && !co.add_closed(s, r) {
            return None;
        }
        // coWR: a po-earlier write of the location precedes the source.
        for x in members(self.po_loc_inv.row(r) & w) {
            if x != s && !co.add_closed(x, s) {
                return None;
            }
        }
        // coRW: the source precedes po-later writes.
        for x in members(self.po_loc.row(r) & w) {
            if !co.add_closed(s, x) {
                return None;
            }
        }
        // coRR: a po-later read reads the source or a co-later write; a
        // po-earlier one reads the source or a co-earlier write.
        for r2 in members(self.po_loc.row(r) & sk.sets.r) {
            let s2 = self.src[r2];
            if s2 != usize::MAX && s2 != s && !co.add_closed(s, s2) {
                return None;
            }
        }
        for r0 in members(self.po_loc_inv.row(r) & sk.sets.r) {
            let s0 = self.src[r0];
            if s0 != usize::MAX && s0 != s && !co.add_closed(s0, s) {
                return None;
            }
        }
        Some(co)
    }

    /// The coherence edges every coherent completion of the reads-from so
    /// far has, transitively closed; `None` when they form a cycle.
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    fn forced_co(&self) -> Option<Rel<S>> {
        let sk = self.sk;
        let w = sk.sets.w;
        let mut co = self.co_base;
        for &r in &self.reads {
            let s = self.src[r];
            if s == usize::MAX {
                continue;
            }
            // An RMW's write follows the write it reads.
            if w.has(r) {
                co.add(s, r);
            }
            // coWR: a po-earlier write of the location precedes the source.
            for x in members(self.po_loc_inv.row(r) & w) {
                if x != s {
                    co.add(x, s);
                }
            }
            // coRW: the source precedes po-later writes.
            for x in members(self.po_loc.row(r) & w) {
                co.add(s, x);
            }
            // coRR: po-later reads read the source or a co-later write.
            for r2 in members(self.po_loc.row(r) & sk.sets.r) {
                let s2 = self.src[r2];
                if s2 != usize::MAX && s2 != s {
                    co.add(s, s2);
                }
            }
        }
        let co = co.plus();
        co.irreflexive().then_some(co)
    }

    /// `fr = (rf^-1; co) \ id` from each read's source: the writes
    /// co-after the one it reads (itself excluded, for an RMW).
    fn fr_of(&self, co: &Rel<S>) -> Rel<S> {
        let mut fr = Rel::empty(self.sk.n);
        for &r in &self.reads {
            let s = self.src[r];
            if s != usize::MAX {
                fr.add_row(r, co.row(s) & !S::bit(r));
            }
        }
        debug_assert_eq!(fr, self.rf.inv().seq(co).noid());
        fr
    }

    /// Judges the partial graph `(rf, co)` under the pruning models of
    /// `need`, by their monotone axioms, and returns `need` without those
    /// that forbid it.
    fn prune(&self, co: &Rel<S>, need: u64) -> u64 {
        let mut need = need;
        let x = Execution {
            s: self.sk,
            rf: self.rf,
            co: *co,
            fr: self.fr_of(co),
            last: Vec::new(),
        };
        for k in members(need & self.monotone) {
            if S::judge_partial(self.rec.models[k], &x).is_some() {
                need &= !(1 << k);
            }
        }
        need
    }

    /// Picks the source of read number `i` onwards.
    fn reads_from(&mut self, i: usize, alive: u64) -> Result<(), CheckError> {
        if self.rec.decided(self.accs) {
            return Ok(());
        }
        if i == self.reads.len() {
            return self.last_writes(0, &mut vec![0; self.rec.nl], alive);
        }
        // Only worth asking once every model has states to compare with.
        if members(alive).all(|k| !self.accs[k].states.is_empty()) {
            if let Some(forced) = self.forced.last() {
                if self.all_settled(forced, alive) {
                    return Ok(());
                }
            }
        }
        let last = i + 1 == self.reads.len();
        let r = self.reads[i];
        for k in 0..self.sources[i].len() {
            self.tick()?;
            if self.rec.decided(self.accs) {
                break;
            }
            let w = self.sources[i][k];
            if self.rmw_source_taken(r, w) {
                continue;
            }
            self.rf.add(w, r);
            self.src[r] = w;
            if let Some(co) = self.forced_with(r, w) {
                // After the last read the coherence search judges the same
                // graph with more edges, so judging here would be repeated.
                let alive = if last { alive } else { self.prune(&co, alive) };
                if alive != 0 {
                    self.forced.push(co);
                    self.reads_from(i + 1, alive)?;
                    self.forced.pop();
                }
            }
            self.src[r] = usize::MAX;
            self.rf.remove(w, r);
        }
        Ok(())
    }

    /// Whether every final state this branch can still reach (one per
    /// choice of co-maximal writes, given the coherence edges already
    /// forced) is settled for every model in `alive`: then nothing below
    /// can change any answer. Only asked when there are few such states.
    fn all_settled(&self, forced: &Rel<S>, alive: u64) -> bool {
        if alive & self.flagged != 0 {
            return false;
        }
        let mut lasts: Vec<Vec<usize>> = Vec::with_capacity(self.rec.nl);
        let mut product = 1usize;
        for &ws in &self.loc_writes {
            let c: Vec<usize> = members(ws)
                .filter(|&w| (forced.row(w) & ws).is_empty())
                .collect();
            product = product.saturating_mul(c.len());
            lasts.push(c);
        }
        if product == 0 || product > 64 {
            return false;
        }
        let mut pick = vec![0usize; lasts.len()];
        loop {
            let probe = Execution {
                s: self.sk,
                rf: self.rf,
                co: *forced,
                fr: Rel::empty(self.sk.n),
                last: pick.iter().zip(&lasts).map(|(&k, c)| c[k]).collect(),
            };
            if let Some((state, _)) = self.rec.outcome(&probe) {
                for k in members(alive) {
                    let acc = &self.accs[k];
                    if self.rec.models[k].allows_thin_air() && !acc.thin_air {
                        return false;
                    }
                    match acc.states.get(&state) {
                        Some(&racy) if racy || !self.race_possible => {}
                        _ => return false,
                    }
                }
            }
            let mut l = 0;
            loop {
                if l == pick.len() {
                    return true;
                }
                pick[l] += 1;
                if pick[l] < lasts[l].len() {
                    break;
                }
                pick[l] = 0;
                l += 1;
            }
        }
    }

    /// Chooses the co-maximal write of location `l` onwards; with all
    /// chosen, the final state is known and the rest of coherence is
    /// searched for the models that still need an execution with it.
    fn last_writes(
        &mut self,
        l: usize,
        last: &mut Vec<usize>,
        alive: u64,
    ) -> Result<(), CheckError> {
        let Some(&forced) = self.forced.last() else {
            return Ok(());
        };
        if l < self.rec.nl {
            let ws = self.loc_writes[l];
            for w in members(ws) {
                if self.rec.decided(self.accs) {
                    break;
                }
                // Nothing may be forced after the last write.
                if !(forced.row(w) & ws).is_empty() {
                    continue;
                }
                last[l] = w;
                self.last_writes(l + 1, last, alive)?;
            }
            return Ok(());
        }
        let probe = Execution {
            s: self.sk,
            rf: self.rf,
            co: forced,
            fr: Rel::empty(self.sk.n),
            last: last.clone(),
        };
        let Some((state, holds)) = self.rec.outcome(&probe) else {
            return Ok(());
        };
        let thin = !(self.rf | self.sk.data).acyclic();
        let mut need = 0u64;
        for k in members(alive) {
            let acc = &self.accs[k];
            let thin_here = thin && self.rec.models[k].allows_thin_air() && !acc.thin_air;
            let settled = match acc.states.get(&state) {
                Some(&racy) => racy || !self.race_possible,
                None => false,
            };
            if thin_here || !settled || self.flagged >> k & 1 == 1 {
                need |= 1 << k;
            }
        }
        if need == 0 {
            return Ok(());
        }
        let mut placed = S::ZERO;
        for &w in last.iter() {
            placed |= S::bit(w);
        }
        let mut fill = Fill {
            forced,
            co: Rel::empty(self.sk.n),
            placed,
            prev: last.clone(),
            state,
            holds,
        };
        self.fill(&mut fill, 0, need, true).map(|_| ())
    }

    /// Places the remaining writes of location `l` onwards, each as the
    /// coherence predecessor of those placed before it; returns the models
    /// of `need` that found an allowed execution here (not those pruned).
    fn fill(
        &mut self,
        f: &mut Fill<S>,
        l: usize,
        need: u64,
        judge: bool,
    ) -> Result<u64, CheckError> {
        self.tick()?;
        let mut need = need;
        if judge && need & self.monotone != 0 {
            let co = self.known_co(f);
            need = self.prune(&co, need);
            if need == 0 {
                return Ok(0);
            }
        }
        let nl = self.rec.nl;
        if l == nl {
            return self.leaf(f, need);
        }
        let ws = self.loc_writes[l];
        let unplaced = ws & !f.placed;
        if unplaced.is_empty() {
            return self.fill(f, l + 1, need, false);
        }
        let prev = f.prev[l];
        let mut first = true;
        let mut done = 0u64;
        for w in members(unplaced) {
            // Everything forced after `w` must be placed already.
            if !(f.forced.row(w) & unplaced & !S::bit(w)).is_empty() {
                continue;
            }
            if !self.atomic_ok(f, l, w) {
                continue;
            }
            // `w` precedes every write placed so far at `l`.
            let saved = f.co;
            for x in members(f.placed & ws) {
                f.co.add(w, x);
            }
            f.placed |= S::bit(w);
            f.prev[l] = w;
            // The first branch is entered without judging (most first
            // completions are allowed); later ones are pruned first.
            done |= self.fill(f, l, need & !done, !first)?;
            first = false;
            f.placed &= !S::bit(w);
            f.prev[l] = prev;
            f.co = saved;
            if need & !done == 0 {
                break;
            }
        }
        Ok(done)
    }

    /// Whether placing `w` next (just before the writes placed at `l`)
    /// keeps RMWs atomic: a single-event RMW directly follows the write it
    /// reads; no other thread's write comes between the write an
    /// exclusive or two-event RMW pair reads and the pair's write.
    fn atomic_ok(&self, f: &Fill<S>, l: usize, w: usize) -> bool {
        let sk = self.sk;
        let prev = f.prev[l];
        if sk.sets.upd.has(prev) && f.placed.has(prev) && self.src[prev] != w {
            return false;
        }
        let ws = self.loc_writes[l];
        // Pairs whose write is placed and whose read's source is not yet.
        for r in members(sk.rmw.domain()) {
            for wr in members(sk.rmw.row(r) & f.placed & ws) {
                let s = self.src[r];
                if s == usize::MAX || f.placed.has(s) || s == w {
                    continue;
                }
                if sk.ext.has(w, wr) {
                    return false;
                }
            }
        }
        true
    }

    /// The coherence edges known so far: forced ones, those among placed
    /// writes, and every unplaced write before every placed one.
    fn known_co(&self, f: &Fill<S>) -> Rel<S> {
        let mut co = f.forced | f.co;
        for &ws in &self.loc_writes {
            let placed = ws & f.placed;
            for u in members(ws & !f.placed) {
                for p in members(placed) {
                    co.add(u, p);
                }
            }
        }
        co
    }

    /// A complete execution, judged by every model still in need; returns
    /// those that need nothing more.
    fn leaf(&mut self, f: &Fill<S>, need: u64) -> Result<u64, CheckError> {
        let sk = self.sk;
        let co = f.co;
        let fr = self.fr_of(&co);
        // The enumerating engine's per-location conditions, checked again so
        // that both engines judge the same candidates.
        if !(self.po_loc | self.rf | co | fr).acyclic() {
            return Ok(0);
        }
        *self.candidates += 1;
        if *self.candidates & 63 == 0 {
            if let Some(p) = &self.rec.opts.progress {
                crate::SearchProgress::add(&p.executions, 64);
            }
        }
        let x = Execution {
            s: sk,
            rf: self.rf,
            co,
            fr,
            last: f.last_of(&self.loc_writes, &co),
        };
        let mut done = 0u64;
        for k in members(need) {
            let acc = &mut self.accs[k];
            let thin_before = acc.thin_air;
            // The thin-air symbols for the models that visit every
            // execution (a symbol changes the state recorded, which the
            // per-state shortcut of the others does not follow).
            let thin = self.thin.filter(|_| self.flagged >> k & 1 == 1);
            match self.rec.record(acc, k, &x, &f.state, f.holds, thin) {
                Some(_) if self.flagged >> k & 1 == 1 => {}
                Some(racy) => {
                    let thin_pending = self.rec.models[k].allows_thin_air()
                        && !acc.thin_air
                        && !thin_before
                        && !(self.rf | sk.data).acyclic();
                    if (racy || !self.race_possible) && !thin_pending {
                        done |= 1 << k;
                    }
                }
                None => {
                    if acc.is_unjudged() {
                        done |= 1 << k;
                    }
                }
            }
        }
        Ok(done)
    }
}

/// The state of the coherence search at one skeleton and reads-from.
struct Fill<S: Bits> {
    forced: Rel<S>,
    /// Edges among placed writes.
    co: Rel<S>,
    placed: S,
    /// The write placed most recently at each location.
    prev: Vec<usize>,
    state: Vec<atomlab_litmus::Value>,
    holds: bool,
}

impl<S: Bits> Fill<S> {
    /// The co-maximal write of each location.
    fn last_of(&self, loc_writes: &[S], co: &Rel<S>) -> Vec<usize> {
        loc_writes
            .iter()
            .map(|&ws| {
                members(ws)
                    .find(|&w| (co.row(w) & ws).is_empty())
                    .unwrap_or_default()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names() {
        assert_eq!(Engine::default(), Engine::Auto);
        assert_eq!(Engine::Explore.name(), "explore");
    }

    #[test]
    fn which_models_prune() {
        let prune: Vec<&str> = crate::models::MODEL_NAMES
            .iter()
            .filter(|m| crate::models::by_name(m).is_some_and(|m| m.prunes()))
            .copied()
            .collect();
        assert_eq!(
            prune,
            ["sc", "x86tso", "aarch64", "riscv", "c11", "rc11", "lkmm"]
        );
    }
}
