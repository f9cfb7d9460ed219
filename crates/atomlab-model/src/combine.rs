//! Which combinations of the threads' runs can make an execution: the
//! search both engines start from.
//!
//! The interpreter ([`crate::interp`]) gives each thread every run it may
//! take, a run per choice of value for each read (herd7's "pre-candidate"
//! step, Alglave, Maranget and Tautschnig, "Herding cats", TOPLAS 2014,
//! section 8). An execution picks one run per thread, and every value a
//! run reads must be written by some run picked (or be the initial value).
//! Picking runs as an odometer and testing that at the end visits the
//! product of the threads' runs: a 3-thread ticket lock lifted by `verify`
//! has 1860 runs per thread and 6.4 billion products, of which a few
//! hundred pass.
//!
//! Here the runs of each thread form a tree by the values their reads
//! return, in program order (a run is determined by those values), and the
//! search descends the threads' trees a read at a time, round robin. Each
//! node knows which values the runs below it may write; a read whose value
//! no thread can still write (the others' subtrees, its own po-earlier
//! writes, the initial state) cuts the branch. A read-modify-write needs a
//! write of its own: two single-event ones that read one write would each
//! precede the other in coherence (`co ; fr` between them), which every
//! built-in model forbids (they all imply SC per location); two pairs
//! (LDXR/STXR, LR/SC, an AMO's two events) of different threads that read
//! one write put one's write between the other's source and write
//! (`rmw & (fre; coe)`, which the engines exclude for every built-in
//! model), and two of one thread read it against coherence (the first
//! one's write precedes the second read in program order). So more such
//! reads of a value than writes that can give it also cut it.
//! This is the value-level half of what GenMC gets by adding a thread's
//! events as its reads get their sources (Kokologiannakis and Vafeiadis,
//! CAV 2021); the executions themselves are still searched per combination
//! ([`crate::explore`], [`crate::exec`]).
//!
//! Where many combinations remain below the threads' nodes, the search
//! also asks whether the events their runs share so far can start an
//! allowed execution at all ([`Probe`]): the reads whose every possible
//! source is known (a write of the prefixes, the initial value, or a
//! thread's one remaining write of the value, standing as a plain write
//! after its prefix) are given sources as the exploration gives them, and
//! judged by the models' monotone axioms. A prefix that no model allows
//! cuts every combination below it, as GenMC stops growing a graph that is
//! already inconsistent: the 3-thread seqlock writer client that `verify`
//! builds went from 322,307 combinations searched (16.7 s) to 1,813
//! (0.5-0.65 s, with the pairs' rule above).
//!
//! Threads that run the same code from the same registers, and that
//! nothing the test observes tells apart, are interchangeable
//! ([`symmetric_groups`], with `CheckOptions::symmetry`): of the
//! combinations that differ only by swapping their runs, one is searched
//! and stands for the others, its counts multiplied by how many there are
//! (symmetry reduction, as in Clarke, Emerson, Jha and Sistla, "Symmetry
//! reductions in model checking", CAV 1998). `verify`'s clients run N
//! copies of one thread.
//!
//! A filter (herd7's `filter`) whose conjuncts each name one thread's
//! registers drops that thread's runs that fail them before the search:
//! `verify`'s spin-assume leaves each spin loop's failing runs to the
//! filter.

use std::collections::HashMap;
use std::time::Instant;

use atomlab_litmus::{Prop, StateVar, Test};

use crate::interp::{decode, Kind, Runs, Trace, TraceEvent};
use crate::CheckError;

/// Whether to go on after a combination: `visit` returns `Stop` once the
/// answer is decided.
pub(crate) enum Flow {
    Go,
    Stop,
}

/// Most distinct (location, value) pairs written, and most bytes of
/// per-node summaries, for which the tree's pruning is kept (above either,
/// the search visits the plain product, as before).
const MAX_PAIRS: usize = 4096;
const MAX_SUMMARY_BYTES: usize = 64 << 20;

/// Drops from each thread's runs those that fail a conjunct of `t`'s
/// filter naming only that thread's registers: no execution with such a
/// run passes the filter.
pub(crate) fn apply_filter(t: &Test, traces: &mut [Runs], nl: usize) {
    let Some(filter) = &t.filter else { return };
    let conjuncts: Vec<&Prop> = match filter {
        Prop::And(ps) => ps.iter().collect(),
        p => vec![p],
    };
    for c in conjuncts {
        let mut vars = Vec::new();
        c.vars(&mut vars);
        let mut threads = vars.iter().map(|v| match v {
            StateVar::Reg { thread, .. } => Some(*thread),
            StateVar::Loc(_) => None,
        });
        let Some(Some(thread)) = threads.next() else {
            continue;
        };
        if !threads.all(|x| x == Some(thread)) || thread >= traces.len() {
            continue;
        }
        let passes = |tr: &Trace| {
            c.eval(&|v: &StateVar| match v {
                StateVar::Reg { reg, .. } => decode(tr.regs.get(*reg).copied().unwrap_or(0), nl),
                StateVar::Loc(_) => unreachable!("a one-thread conjunct names registers only"),
            })
        };
        // A thread sharing its runs with its twins gets its own copy only
        // when the conjunct drops some.
        if !traces[thread].iter().all(passes) {
            std::rc::Rc::make_mut(&mut traces[thread]).retain(passes);
        }
    }
}

/// What a run's read returns, and where. Runs that read alike but differ
/// in kind (a weak CAS that fails spuriously reads where a successful one
/// updates) part at that read.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct ReadKey {
    loc: usize,
    val: i64,
    update: bool,
}

/// A read of a run, with what the search asks of it, worked out once.
#[derive(Clone, Copy)]
struct Read {
    key: ReadKey,
    /// The written (location, value) pair it needs, numbered (`None` when
    /// no run writes it).
    pair: Option<usize>,
    /// Whether the initial value or a po-earlier write of its own thread
    /// gives it its value.
    local: bool,
    /// For the read of a read-modify-write whose write is in the run
    /// (a single-event update, or a pair such as LDXR/STXR whose store
    /// succeeded): the event index of that write.
    rmw_write: Option<usize>,
}

/// A node of one thread's tree: the runs `order[lo..hi]`, which agree on
/// their first `depth` reads.
#[derive(Clone)]
struct Node {
    lo: usize,
    hi: usize,
    depth: usize,
    /// How many events its runs share from their start (the run's own
    /// length at a node of one run).
    prefix: usize,
    children: Vec<usize>,
    /// Most writes of each (location, value) pair in one run below.
    writes: Vec<u8>,
}

/// One thread's runs as a tree.
struct Tree<'a> {
    runs: &'a [Trace],
    /// Run indices, sorted by their reads' values.
    order: Vec<usize>,
    /// Per run: its reads, in program order.
    reads: Vec<Vec<Read>>,
    nodes: Vec<Node>,
}

impl<'a> Tree<'a> {
    /// The most writes of each pair in one of the runs `order[lo..hi]`.
    fn run_writes(&self, lo: usize, hi: usize, pairs: &HashMap<(usize, i64), usize>) -> Vec<u8> {
        let mut most = vec![0u8; pairs.len()];
        for k in lo..hi {
            let mut here = vec![0u8; pairs.len()];
            for e in &self.runs[self.order[k]].events {
                if matches!(e.kind, Kind::Write | Kind::Update) {
                    if let Some(&p) = pairs.get(&(e.loc, e.wval)) {
                        here[p] = here[p].saturating_add(1);
                    }
                }
            }
            for (x, h) in most.iter_mut().zip(here) {
                *x = (*x).max(h);
            }
        }
        most
    }

    fn build(runs: &'a [Trace], init: &[i64], pairs: &HashMap<(usize, i64), usize>) -> Tree<'a> {
        let reads: Vec<Vec<Read>> = runs
            .iter()
            .map(|tr| {
                let mut written: Vec<(usize, i64)> = Vec::new();
                let mut reads = Vec::new();
                for (k, e) in tr.events.iter().enumerate() {
                    if matches!(e.kind, Kind::Read | Kind::Update) {
                        let rmw_write = if e.kind == Kind::Update {
                            Some(k)
                        } else {
                            tr.events
                                .iter()
                                .enumerate()
                                .skip(k + 1)
                                .find(|(_, w)| {
                                    w.rmw_read.map(usize::from) == Some(k) && w.loc == e.loc
                                })
                                .map(|(j, _)| j)
                        };
                        let local =
                            init.get(e.loc) == Some(&e.rval) || written.contains(&(e.loc, e.rval));
                        reads.push(Read {
                            key: ReadKey {
                                loc: e.loc,
                                val: e.rval,
                                update: e.kind == Kind::Update,
                            },
                            pair: pairs.get(&(e.loc, e.rval)).copied(),
                            local,
                            rmw_write,
                        });
                    }
                    if matches!(e.kind, Kind::Write | Kind::Update) {
                        written.push((e.loc, e.wval));
                    }
                }
                reads
            })
            .collect();
        let mut order: Vec<usize> = (0..runs.len()).collect();
        order.sort_by(|&a, &b| {
            let ka = reads[a].iter().map(|r| r.key);
            let kb = reads[b].iter().map(|r| r.key);
            ka.cmp(kb)
        });
        let mut tree = Tree {
            runs,
            order,
            reads,
            nodes: Vec::new(),
        };
        tree.grow(0, runs.len(), 0);
        tree
    }

    /// Adds the node of runs `order[lo..hi]` at `depth` and its subtree;
    /// returns its index.
    fn grow(&mut self, lo: usize, hi: usize, depth: usize) -> usize {
        let id = self.nodes.len();
        let prefix = self.shared_prefix(lo, hi);
        self.nodes.push(Node {
            lo,
            hi,
            depth,
            prefix,
            children: Vec::new(),
            writes: Vec::new(),
        });
        let key = |tree: &Tree, k: usize| tree.reads[tree.order[k]].get(depth).map(|r| r.key);
        let mut children = Vec::new();
        // The runs with no read past `depth` sort first: one leaf of them
        // (unless they are all there is, when this node is that leaf).
        let mut a = lo;
        while a < hi && key(self, a).is_none() {
            a += 1;
        }
        if a > lo && a < hi {
            let leaf = self.nodes.len();
            let prefix = self.shared_prefix(lo, a);
            self.nodes.push(Node {
                lo,
                hi: a,
                depth,
                prefix,
                children: Vec::new(),
                writes: Vec::new(),
            });
            children.push(leaf);
        }
        while a < hi {
            let k = key(self, a);
            let mut b = a + 1;
            while b < hi && key(self, b) == k {
                b += 1;
            }
            children.push(self.grow(a, b, depth + 1));
            a = b;
        }
        self.nodes[id].children = children;
        id
    }

    /// How many events the runs `order[lo..hi]` share from their start.
    fn shared_prefix(&self, lo: usize, hi: usize) -> usize {
        let first = &self.runs[self.order[lo]].events;
        (lo + 1..hi).fold(first.len(), |len, k| {
            let other = &self.runs[self.order[k]].events;
            first[..len]
                .iter()
                .zip(other)
                .take_while(|(a, b)| a == b)
                .count()
        })
    }

    /// Gives every node the most writes of each pair in one run below it:
    /// a leaf from its runs, an inner node from its children (which come
    /// after it in `nodes`, so a walk from the end meets them first).
    fn summarise(&mut self, pairs: &HashMap<(usize, i64), usize>) {
        for id in (0..self.nodes.len()).rev() {
            let w = if self.nodes[id].children.is_empty() {
                self.run_writes(self.nodes[id].lo, self.nodes[id].hi, pairs)
            } else {
                let mut w = vec![0u8; pairs.len()];
                for &c in &self.nodes[id].children {
                    for (x, &h) in w.iter_mut().zip(&self.nodes[c].writes) {
                        *x = (*x).max(h);
                    }
                }
                w
            };
            self.nodes[id].writes = w;
        }
    }
}

/// How many combinations a node of the search must stand for before its
/// prefixes are probed.
pub(crate) const PROBE_ABOVE: u64 = 64;

/// What the runs below one thread's node share: the events they all
/// start with, for [`Probe`].
pub(crate) struct Prefix<'a> {
    /// The shared events, in program order.
    pub(crate) events: &'a [TraceEvent],
    /// Bit `k`: event `k` is a read whose every possible source is known:
    /// a write of the prefixes, the initial value, or one of the `later`
    /// writes of a thread that makes at most one write of its value after
    /// its prefix.
    pub(crate) settled: u64,
    /// The (location, value) pairs a settled read may read from this
    /// thread after its prefix: written at most once there, in program
    /// order after the prefix, in an order not known.
    pub(crate) later: Vec<(usize, i64)>,
}

/// Asked at each step of the search with the threads' prefixes: whether
/// some execution of them may be allowed. `false` cuts the branch, so it
/// must hold for every execution that extends them (`crate::explore`'s
/// `prefix_satisfiable` judges the settled reads' sources by the models'
/// monotone axioms).
pub(crate) type Probe<'p> = dyn FnMut(&[Prefix<'_>]) -> Result<bool, CheckError> + 'p;

/// What the search over combinations cuts with.
pub(crate) struct Cuts<'a, 'p> {
    /// Cut by values at all: `false` visits the whole product
    /// (`CheckOptions::unpruned`, to measure what this saves).
    pub(crate) values: bool,
    /// Read-modify-writes each need a write of their own (true for the
    /// built-in models; see the module's docs).
    pub(crate) rmw_exclusive: bool,
    /// Asked whether the prefixes the threads' current nodes share can
    /// start an allowed execution, where at least the given number of
    /// combinations lie below them ([`PROBE_ABOVE`], or 0: at every step);
    /// `false` cuts the branch.
    pub(crate) probe: Option<(&'a mut Probe<'p>, u64)>,
}

/// Calls `visit` with every combination of one run per thread whose reads
/// can all be given their values (see the module's docs), until it says
/// stop, cutting with `cuts`.
///
/// `groups`: sets of interchangeable threads ([`symmetric_groups`]); only
/// combinations whose runs, in the trees' order, do not decrease within a
/// group are visited, each with its weight: how many combinations it
/// stands for.
pub(crate) fn each(
    traces: &[Runs],
    init: &[i64],
    cuts: Cuts<'_, '_>,
    groups: &[Vec<usize>],
    deadline: Option<Instant>,
    mut visit: impl FnMut(&[&Trace], u64) -> Result<Flow, CheckError>,
) -> Result<(), CheckError> {
    if traces.iter().any(|t| t.is_empty()) {
        return Ok(());
    }
    // The (location, value) pairs the runs write, numbered.
    let mut pairs: HashMap<(usize, i64), usize> = HashMap::new();
    for e in traces.iter().flat_map(|r| r.iter()).flat_map(|t| &t.events) {
        if matches!(e.kind, Kind::Write | Kind::Update) {
            let n = pairs.len();
            pairs.entry((e.loc, e.wval)).or_insert(n);
        }
    }
    // Threads with the same runs (copies of one thread) share one tree,
    // built and summarised once: `tree_of[i]` is thread i's in `distinct`.
    let (mut distinct, tree_of) = once_per_copy(traces, |runs| Tree::build(runs, init, &pairs));
    let nodes: usize = tree_of.iter().map(|&d| distinct[d].nodes.len()).sum();
    let summarise = cuts.values
        && pairs.len() <= MAX_PAIRS
        && nodes.saturating_mul(pairs.len()) <= MAX_SUMMARY_BYTES;
    if summarise {
        for t in &mut distinct {
            t.summarise(&pairs);
        }
    }
    let trees: Vec<&Tree> = tree_of.iter().map(|&d| &distinct[d]).collect();
    // Each thread's group, and its place in it.
    let mut ordered_after: Vec<Option<usize>> = vec![None; trees.len()];
    for g in groups {
        for w in g.windows(2) {
            ordered_after[w[1]] = Some(w[0]);
        }
    }
    let mut search = Joint {
        trees: &trees,
        groups,
        ordered_after,
        pairs: summarise.then_some(&pairs),
        init,
        rmw_exclusive: cuts.rmw_exclusive,
        deadline,
        probe: cuts.probe.filter(|_| summarise),
        judged: 0,
        steps: 0,
        cur: vec![0; trees.len()],
    };
    search.descend(0, &mut visit).map(|_| ())
}

/// The search over the threads' trees at once.
struct Joint<'t, 'a, 'p> {
    trees: &'t [&'t Tree<'a>],
    groups: &'t [Vec<usize>],
    /// For a thread of a group, the thread before it in the group: its run
    /// may not come later in the tree's order.
    ordered_after: Vec<Option<usize>>,
    pairs: Option<&'t HashMap<(usize, i64), usize>>,
    init: &'t [i64],
    rmw_exclusive: bool,
    deadline: Option<Instant>,
    /// Judges the prefixes the threads' nodes share (with the trees'
    /// summaries only: they say which reads are settled).
    probe: Option<(&'t mut Probe<'p>, u64)>,
    /// The settled reads of the prefixes last probed on this path.
    judged: u32,
    steps: u64,
    /// Each thread's node.
    cur: Vec<usize>,
}

impl<'a> Joint<'_, 'a, '_> {
    /// Descends from the current nodes, advancing threads round robin
    /// from `next`.
    fn descend(
        &mut self,
        next: usize,
        visit: &mut impl FnMut(&[&Trace], u64) -> Result<Flow, CheckError>,
    ) -> Result<Flow, CheckError> {
        step(&mut self.steps, self.deadline)?;
        let n = self.trees.len();
        let Some(i) = (0..n)
            .map(|k| (next + k) % n)
            .find(|&i| !self.trees[i].nodes[self.cur[i]].children.is_empty())
        else {
            return self.leaves(
                0,
                &mut Vec::with_capacity(n),
                &mut Vec::with_capacity(n),
                visit,
            );
        };
        let here = self.cur[i];
        let judged = self.judged;
        for c in 0..self.trees[i].nodes[here].children.len() {
            self.cur[i] = self.trees[i].nodes[here].children[c];
            if self.canonical() && self.feasible() && self.consistent()? {
                if let Flow::Stop = self.descend((i + 1) % n, visit)? {
                    self.cur[i] = here;
                    self.judged = judged;
                    return Ok(Flow::Stop);
                }
            }
            self.judged = judged;
        }
        self.cur[i] = here;
        Ok(Flow::Go)
    }

    /// Every combination of the runs of the threads' leaves (in a group,
    /// runs that do not decrease in the trees' order), with its weight.
    fn leaves(
        &self,
        i: usize,
        chosen: &mut Vec<&'a Trace>,
        at: &mut Vec<usize>,
        visit: &mut impl FnMut(&[&Trace], u64) -> Result<Flow, CheckError>,
    ) -> Result<Flow, CheckError> {
        if i == self.trees.len() {
            return visit(chosen, self.weight(at));
        }
        let (tree, node) = (&self.trees[i], &self.trees[i].nodes[self.cur[i]]);
        let from = match self.ordered_after[i] {
            Some(before) => node.lo.max(at[before]),
            None => node.lo,
        };
        for k in from..node.hi {
            chosen.push(&tree.runs[tree.order[k]]);
            at.push(k);
            let flow = self.leaves(i + 1, chosen, at, visit)?;
            chosen.pop();
            at.pop();
            if let Flow::Stop = flow {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Go)
    }

    /// Whether the current nodes can still give a combination whose runs
    /// do not decrease within each group.
    fn canonical(&self) -> bool {
        self.ordered_after
            .iter()
            .enumerate()
            .all(|(j, before)| match before {
                Some(i) => {
                    let (a, b) = (
                        &self.trees[*i].nodes[self.cur[*i]],
                        &self.trees[j].nodes[self.cur[j]],
                    );
                    a.lo < b.hi
                }
                None => true,
            })
    }

    /// How many combinations the one at positions `at` stands for.
    fn weight(&self, at: &[usize]) -> u64 {
        orderings(self.groups, at)
    }

    /// Whether the prefixes the current nodes' runs share may start an
    /// allowed execution ([`Probe`]); `true` without a probe.
    fn consistent(&mut self) -> Result<bool, CheckError> {
        let (Some((probe, above)), Some(pairs)) = (self.probe.as_mut(), self.pairs) else {
            return Ok(true);
        };
        // Below a few combinations, searching them costs less than the
        // probe (verify's 3-thread MCS lock: 0.16 s without probes, 0.45 s
        // probing every node).
        let below = self
            .trees
            .iter()
            .zip(&self.cur)
            .map(|(tree, &c)| (tree.nodes[c].hi - tree.nodes[c].lo) as u64)
            .fold(1u64, u64::saturating_mul);
        if below < *above {
            return Ok(true);
        }
        let prefixes: Vec<&[TraceEvent]> = self
            .trees
            .iter()
            .zip(&self.cur)
            .map(|(tree, &c)| {
                let node = &tree.nodes[c];
                &tree.runs[tree.order[node.lo]].events[..node.prefix]
            })
            .collect();
        // Per thread, the most writes of a pair one of its runs below makes
        // after the prefix (all of them share it).
        let later = |j: usize, p: usize| -> u8 {
            let here = prefixes[j]
                .iter()
                .filter(|e| {
                    matches!(e.kind, Kind::Write | Kind::Update)
                        && pairs.get(&(e.loc, e.wval)) == Some(&p)
                })
                .count();
            let most = usize::from(self.trees[j].nodes[self.cur[j]].writes[p]);
            u8::try_from(most.saturating_sub(here)).unwrap_or(u8::MAX)
        };
        // Per pair read: each thread's later writes of it.
        let mut counts: HashMap<usize, Vec<u8>> = HashMap::new();
        let mut shown: Vec<Prefix<'_>> = prefixes
            .iter()
            .map(|&events| Prefix {
                events,
                settled: 0,
                later: Vec::new(),
            })
            .collect();
        for (i, events) in prefixes.iter().enumerate() {
            for (k, e) in events.iter().enumerate().take(64) {
                if !matches!(e.kind, Kind::Read | Kind::Update) {
                    continue;
                }
                let Some(&p) = pairs.get(&(e.loc, e.rval)) else {
                    // No run writes the value: the initial one or none.
                    shown[i].settled |= 1 << k;
                    continue;
                };
                let c = counts
                    .entry(p)
                    .or_insert_with(|| (0..prefixes.len()).map(|j| later(j, p)).collect());
                if c.iter().all(|&n| n <= 1) {
                    shown[i].settled |= 1 << k;
                    for (j, &n) in c.iter().enumerate() {
                        let pair = (e.loc, e.rval);
                        if n == 1 && !shown[j].later.contains(&pair) {
                            shown[j].later.push(pair);
                        }
                    }
                }
            }
        }
        // A probe of prefixes with no read settled since the last one
        // asked on this path would mostly repeat its answer: skipped (a
        // probe only ever cuts, so asking less often loses nothing).
        let settled: u32 = shown.iter().map(|p| p.settled.count_ones()).sum();
        if settled <= self.judged {
            return Ok(true);
        }
        self.judged = settled;
        probe(&shown)
    }

    /// Whether every read fixed so far can still be given its value.
    fn feasible(&self) -> bool {
        if self.pairs.is_none() {
            return true;
        }
        // Per (location, value) the RMWs so far read: its pair, whether it
        // is the initial value, and how many read it.
        type Reads = ((usize, i64), Option<usize>, bool, u32);
        let mut rmw_reads: Vec<Reads> = Vec::new();
        for (i, tree) in self.trees.iter().enumerate() {
            let node = &tree.nodes[self.cur[i]];
            for r in &tree.reads[tree.order[node.lo]][..node.depth] {
                // The write of a pair counts once every run below has it
                // (in the events they share).
                let rmw = r.key.update || r.rmw_write.is_some_and(|w| w < node.prefix);
                if self.rmw_exclusive && rmw {
                    let init = self.init.get(r.key.loc) == Some(&r.key.val);
                    let read = (r.key.loc, r.key.val);
                    match rmw_reads.iter_mut().find(|(v, ..)| *v == read) {
                        Some((.., n)) => *n += 1,
                        None => rmw_reads.push((read, r.pair, init, 1)),
                    }
                }
                if r.local {
                    continue;
                }
                let Some(p) = r.pair else {
                    return false;
                };
                let others = (0..self.trees.len())
                    .any(|j| j != i && self.trees[j].nodes[self.cur[j]].writes[p] > 0);
                if !others {
                    return false;
                }
            }
        }
        // Single-event RMWs reading one value: no more than the writes
        // that can give it (the initial write once, each thread's most in
        // one run below its node).
        for (_, pair, init, n) in rmw_reads {
            let mut supply = u32::from(init);
            if let Some(p) = pair {
                supply += self
                    .trees
                    .iter()
                    .enumerate()
                    .map(|(j, t)| u32::from(t.nodes[self.cur[j]].writes[p]))
                    .sum::<u32>();
            }
            if n > supply {
                return false;
            }
        }
        true
    }
}

/// How many combinations of runs the one whose threads take the runs at
/// positions `at` stands for: per group of copies ([`symmetric_groups`]),
/// its size's factorial over those of the runs it repeats.
pub(crate) fn orderings(groups: &[Vec<usize>], at: &[usize]) -> u64 {
    let mut weight = 1u64;
    for g in groups {
        let mut runs: Vec<usize> = g.iter().map(|&t| at[t]).collect();
        runs.sort_unstable();
        let mut w = factorial(g.len());
        for same in runs.chunk_by(|a, b| a == b) {
            w /= factorial(same.len());
        }
        weight = weight.saturating_mul(w);
    }
    weight
}

fn factorial(n: usize) -> u64 {
    (1..=n as u64).product()
}

/// Counts a step of a search, and every 1,024 steps says whether the
/// deadline has passed (TIMEOUT).
pub(crate) fn step(steps: &mut u64, deadline: Option<Instant>) -> Result<(), CheckError> {
    *steps += 1;
    if *steps & 1023 == 0 && deadline.is_some_and(|d| Instant::now() > d) {
        return Err(CheckError::Timeout);
    }
    Ok(())
}

/// What `build` makes of each thread's runs, made once for threads that
/// are copies of one (the same runs): the things made, and for each
/// thread the index of its own.
pub(crate) fn once_per_copy<'r, T>(
    traces: &'r [Runs],
    mut build: impl FnMut(&'r [Trace]) -> T,
) -> (Vec<T>, Vec<usize>) {
    let mut made: Vec<T> = Vec::new();
    let mut of: Vec<usize> = Vec::with_capacity(traces.len());
    for (i, runs) in traces.iter().enumerate() {
        match (0..i).find(|&j| same_runs(&traces[j], runs)) {
            Some(j) => of.push(of[j]),
            None => {
                of.push(made.len());
                made.push(build(runs));
            }
        }
    }
    (made, of)
}

/// Whether two threads have the same runs: shared (twins, see
/// [`crate::interp::Runs`]) or equal.
fn same_runs(a: &Runs, b: &Runs) -> bool {
    std::rc::Rc::ptr_eq(a, b) || a == b
}

/// The groups of interchangeable threads of `t`: threads with the same
/// code, registers and initial values (so the same runs, `traces`), whose
/// registers neither the condition nor `locations` names, and whose
/// conjuncts in the filter (each naming one thread's registers) are the
/// same but for the thread. Swapping two of them maps every execution to
/// one with the same final state, allowed by every model alike.
pub(crate) fn symmetric_groups(t: &Test, traces: &[Runs]) -> Vec<Vec<usize>> {
    let observed: Vec<usize> = t
        .state_vars()
        .iter()
        .filter_map(|v| match v {
            StateVar::Reg { thread, .. } => Some(*thread),
            StateVar::Loc(_) => None,
        })
        .collect();
    // Per thread, its filter conjuncts with its number made 0; `None` when
    // the filter ties it to another thread.
    let conjuncts: Vec<&Prop> = match &t.filter {
        None => Vec::new(),
        Some(Prop::And(ps)) => ps.iter().collect(),
        Some(p) => vec![p],
    };
    let own: Vec<Option<Vec<Prop>>> = (0..t.threads.len())
        .map(|i| {
            let mut mine = Vec::new();
            for c in &conjuncts {
                let mut vars = Vec::new();
                c.vars(&mut vars);
                let threads: Vec<usize> = vars
                    .iter()
                    .filter_map(|v| match v {
                        StateVar::Reg { thread, .. } => Some(*thread),
                        StateVar::Loc(_) => None,
                    })
                    .collect();
                if !threads.contains(&i) {
                    continue;
                }
                if threads.iter().any(|&x| x != i) {
                    return None;
                }
                mine.push(renumber(c, i));
            }
            mine.sort_by_key(|p| format!("{p:?}"));
            Some(mine)
        })
        .collect();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..t.threads.len() {
        if observed.contains(&i) || own[i].is_none() {
            continue;
        }
        let same = |j: usize| {
            let (a, b) = (&t.threads[i], &t.threads[j]);
            a.code == b.code
                && a.regs == b.regs
                && a.init == b.init
                && own[i] == own[j]
                && same_runs(&traces[i], &traces[j])
        };
        match groups.iter_mut().find(|g| same(g[0])) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups.retain(|g| g.len() > 1);
    groups
}

/// `p` with thread `from`'s registers made thread 0's.
fn renumber(p: &Prop, from: usize) -> Prop {
    let var = |v: &StateVar| match v {
        StateVar::Reg { thread, reg } if *thread == from => StateVar::Reg {
            thread: 0,
            reg: *reg,
        },
        other => other.clone(),
    };
    match p {
        Prop::True => Prop::True,
        Prop::False => Prop::False,
        Prop::Atom(v, op, x) => Prop::Atom(var(v), *op, *x),
        Prop::Same(v, op, w) => Prop::Same(var(v), *op, var(w)),
        Prop::Not(q) => Prop::Not(Box::new(renumber(q, from))),
        Prop::And(qs) => Prop::And(qs.iter().map(|q| renumber(q, from)).collect()),
        Prop::Or(qs) => Prop::Or(qs.iter().map(|q| renumber(q, from)).collect()),
    }
}
