//! What a model is ([`Model`]) and says of an execution ([`Judgement`]):
//! allowed, or forbidden by a named axiom ([`Violation`]), with the
//! helpers every model uses to name the axiom and find a smallest cycle
//! of events that breaks it.

use atomlab_litmus::Test;

use crate::exec::Execution;
use crate::mapping::{AcquireLoad, Target};
use crate::rel::{full_set, shortest_cycle, Bits, Rel};

/// Why a model forbids an execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The axiom's name, as the model's cat file names it (`external`, `tso`, `SC`…).
    pub axiom: &'static str,
    /// A smallest cycle of events breaking it (empty unless explanations were asked for).
    pub cycle: Vec<usize>,
    /// The relation each cycle edge belongs to (`rfe`, `po`, `[dmb.ld]`…).
    pub edges: Vec<String>,
}

/// A model's judgement of one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    /// The model allows it; `racy` when it has a data race (undefined behaviour in C11/RC11).
    Allowed {
        /// A data race between non-atomic accesses (or a non-atomic and an atomic one).
        racy: bool,
    },
    /// The model forbids it.
    Forbidden(Violation),
    /// The model cannot judge it (an execution beyond its bounds): the
    /// test gets [`crate::CheckError::TooBig`] for this model, never a
    /// guessed verdict.
    Unjudged(&'static str),
}

/// A memory model.
pub trait Model: Sync {
    /// The name used on the command line.
    fn name(&self) -> &'static str;
    /// The CPU architecture whose hardware the model describes, as Rust
    /// names it (`std::env::consts::ARCH`: `x86_64`, `aarch64`,
    /// `riscv64`); `None` for a language or kernel model.
    fn cpu(&self) -> Option<&'static str> {
        None
    }
    /// What the model judges of `test`: the test's own events (`None`), a
    /// C test compiled to an ISA first (`Some`, with `acquire` choosing
    /// AArch64's load-acquire), or why it does not judge such a test. The
    /// default judges any test's own events, as a cat file does.
    fn judges(&self, test: &Test, acquire: AcquireLoad) -> Result<Option<Target>, String> {
        let _ = (test, acquire);
        Ok(None)
    }
    /// Judges an execution; fills the violation's cycle when `explain`.
    fn judge(&self, x: &Execution<'_>, explain: bool) -> Judgement;
    /// Judges an execution and names the flags it raises (herd's `flag`
    /// checks, which report without forbidding); built-in models raise none.
    fn judge_flagged(&self, x: &Execution<'_>, explain: bool) -> (Judgement, Vec<&'static str>) {
        (self.judge(x, explain), Vec::new())
    }
    /// Whether [`Model::judge_flagged`] can raise flags. The exploration
    /// engine stops at one allowed execution per final state, so it would
    /// miss a flag that only other executions with that state raise: for
    /// such a model it visits every allowed execution (`explore.rs`).
    fn raises_flags(&self) -> bool {
        false
    }
    /// Whether the model allows `sb | rf` cycles through data dependencies,
    /// whose values are then "out of thin air" (herd prints them symbolically).
    fn allows_thin_air(&self) -> bool {
        false
    }
    /// Whether the model shows the values of copy-only load-buffering
    /// cycles as herd7 does, as symbols (src/thin.rs): `lkmm`.
    fn symbolic_thin_air(&self) -> bool {
        false
    }
    /// Whether [`Model::judge_partial`] can forbid anything: the
    /// exploration engine (`explore.rs`) prunes partial executions
    /// with the models that say so and judges the others on complete
    /// executions only.
    fn prunes(&self) -> bool {
        false
    }
    /// Judges a *partial* execution with the axioms (or sound
    /// over-approximations of them) that only get worse as rf and co grow:
    /// `Some` only when every completion of `x` is forbidden.
    ///
    /// In `x`, rf and co are subsets of those of every completion the
    /// caller will judge (executions that are SC per location with atomic
    /// RMWs), a read has an rf edge exactly when its source is final,
    /// `fr` is `(rf^-1; co) \ id`, and `last` is empty (the co-last writes
    /// are not known). An axiom may be used here when the relation it
    /// constrains is built from rf, co and fr by union, intersection with
    /// fixed relations, sequence, closure and inverse: it can then only
    /// grow. An axiom that subtracts a growing relation must be left out
    /// or replaced by a monotone under-approximation of what it forbids.
    /// The default uses no axiom (`None`).
    fn judge_partial(&self, _x: &Execution<'_>) -> Option<Violation> {
        None
    }
    /// [`Model::judge`] of an execution of more than
    /// [`crate::graph::MAX_EVENTS`] events (`u128` words). The default
    /// does not judge it: the test gets [`crate::CheckError::TooBig`] for
    /// this model, naming the bound.
    fn judge_wide(&self, _x: &Execution<'_, u128>, _explain: bool) -> Judgement {
        Judgement::Unjudged(NOT_WIDE)
    }
    /// [`Model::judge_flagged`] of an execution of more than 64 events.
    fn judge_flagged_wide(
        &self,
        x: &Execution<'_, u128>,
        explain: bool,
    ) -> (Judgement, Vec<&'static str>) {
        (self.judge_wide(x, explain), Vec::new())
    }
    /// [`Model::judge_partial`] of an execution of more than 64 events.
    fn judge_partial_wide(&self, _x: &Execution<'_, u128>) -> Option<Violation> {
        None
    }
    /// Whether the model judges executions of at most
    /// [`crate::graph::MAX_NARROW_EVENTS`] events in `u32` words
    /// ([`Model::judge_narrow`] and its siblings): a check whose models
    /// all do judges such executions so (`rel.rs`: a quarter of the
    /// copying), and in `u64` words otherwise. The built-in models do; a
    /// cat file's model does not.
    fn judges_narrow(&self) -> bool {
        false
    }
    /// [`Model::judge`] of an execution of at most 32 events in `u32`
    /// words; called only when [`Model::judges_narrow`].
    fn judge_narrow(&self, _x: &Execution<'_, u32>, _explain: bool) -> Judgement {
        Judgement::Unjudged(NOT_NARROW)
    }
    /// [`Model::judge_flagged`] in `u32` words.
    fn judge_flagged_narrow(
        &self,
        x: &Execution<'_, u32>,
        explain: bool,
    ) -> (Judgement, Vec<&'static str>) {
        (self.judge_narrow(x, explain), Vec::new())
    }
    /// [`Model::judge_partial`] in `u32` words.
    fn judge_partial_narrow(&self, _x: &Execution<'_, u32>) -> Option<Violation> {
        None
    }
}

/// The judging methods of a [`Model`] whose axioms are all monotone (see
/// [`Model::judge_partial`]) and whose judgement is one function generic
/// over the word, `$judge(x, explain)`: the same judgement for complete
/// and partial executions, in every width.
macro_rules! judged_whole_in_every_width {
    ($judge:path) => {
        fn judges_narrow(&self) -> bool {
            true
        }

        fn judge_narrow(&self, x: &Execution<'_, u32>, explain: bool) -> Judgement {
            $judge(x, explain)
        }

        fn judge_partial_narrow(&self, x: &Execution<'_, u32>) -> Option<Violation> {
            super::model::forbidden($judge(x, false))
        }

        fn judge(&self, x: &Execution<'_>, explain: bool) -> Judgement {
            $judge(x, explain)
        }

        fn judge_partial(&self, x: &Execution<'_>) -> Option<Violation> {
            super::model::forbidden($judge(x, false))
        }

        fn judge_wide(&self, x: &Execution<'_, u128>, explain: bool) -> Judgement {
            $judge(x, explain)
        }

        fn judge_partial_wide(&self, x: &Execution<'_, u128>) -> Option<Violation> {
            super::model::forbidden($judge(x, false))
        }
    };
}
pub(crate) use judged_whole_in_every_width;

/// The judging methods of a [`Model`] whose judgement is one method
/// generic over the word, `self.$judge(x, explain, partial)`, where
/// `partial` leaves out the axioms that are not monotone (see
/// [`Model::judge_partial`]): complete and partial executions, in every
/// width.
macro_rules! judged_with_in_every_width {
    ($judge:ident) => {
        fn judge(&self, x: &Execution<'_>, explain: bool) -> Judgement {
            self.$judge(x, explain, false)
        }

        fn judge_partial(&self, x: &Execution<'_>) -> Option<Violation> {
            super::model::forbidden(self.$judge(x, false, true))
        }

        fn judge_wide(&self, x: &Execution<'_, u128>, explain: bool) -> Judgement {
            self.$judge(x, explain, false)
        }

        fn judge_partial_wide(&self, x: &Execution<'_, u128>) -> Option<Violation> {
            super::model::forbidden(self.$judge(x, false, true))
        }

        fn judges_narrow(&self) -> bool {
            true
        }

        fn judge_narrow(&self, x: &Execution<'_, u32>, explain: bool) -> Judgement {
            self.$judge(x, explain, false)
        }

        fn judge_partial_narrow(&self, x: &Execution<'_, u32>) -> Option<Violation> {
            super::model::forbidden(self.$judge(x, false, true))
        }
    };
}
pub(crate) use judged_with_in_every_width;

/// What [`Model::judge_narrow`] says of a model that does not take `u32`
/// words (never seen: such a model is not given them).
pub(crate) const NOT_NARROW: &str =
    "an execution was given to this model in u32 words, which it does not take";

/// Why a model without [`Model::judge_wide`] leaves an execution unjudged.
pub(crate) const NOT_WIDE: &str =
    "an execution has more than 64 events, which this model does not judge (the built-in \
     models judge up to 128)";

/// [`Model::judges`] for a hardware model of an ISA: the test's own events
/// when it is of one of `own` (the ISA's litmus dialects), a C11 test
/// compiled to `target`, and a refusal of any other (a Linux-kernel test is
/// the LKMM's).
pub(crate) fn judges_isa(
    name: &str,
    test: &Test,
    own: &[atomlab_litmus::Arch],
    target: Target,
) -> Result<Option<Target>, String> {
    if test.is_linux() {
        return Err(not_linux(name));
    }
    match test.arch {
        a if own.contains(&a) => Ok(None),
        atomlab_litmus::Arch::C => Ok(Some(target)),
        a => Err(format!("{name} does not judge {} tests", a.name())),
    }
}

/// [`Model::judges`] for a model of C11 atomics: a C test's own events; a
/// Linux-kernel or assembly test is refused.
pub(crate) fn judges_c11(name: &str, test: &Test) -> Result<Option<Target>, String> {
    if test.is_linux() {
        Err(not_linux(name))
    } else if test.arch == atomlab_litmus::Arch::C {
        Ok(None)
    } else {
        Err(format!("{name} judges C tests only"))
    }
}

/// Why model `name` does not judge a Linux-kernel test.
pub(crate) fn not_linux(name: &str) -> String {
    format!("{name} does not judge Linux-kernel C tests (lkmm does)")
}

/// The violation a judgement reports, if it forbids: [`Model::judge_partial`]
/// from a judgement of the partial execution (all of a monotone model's
/// axioms, or the monotone part of another's).
pub(crate) fn forbidden(j: Judgement) -> Option<Violation> {
    match j {
        Judgement::Forbidden(v) => Some(v),
        Judgement::Allowed { .. } | Judgement::Unjudged(_) => None,
    }
}

/// A violation of `axiom`, with a smallest cycle in the union of `parts`
/// (through an event of `through`) when `explain` is set. Each edge is named
/// by the first part that contains it.
pub(crate) fn violation<S: Bits>(
    axiom: &'static str,
    explain: bool,
    parts: &[(&str, Rel<S>)],
    through: Option<S>,
) -> Judgement {
    if !explain || parts.is_empty() {
        return Judgement::Forbidden(Violation {
            axiom,
            cycle: Vec::new(),
            edges: Vec::new(),
        });
    }
    let n = parts[0].1.n();
    let all = parts.iter().fold(Rel::empty(n), |a, (_, r)| a | *r);
    let cycle = shortest_cycle(&all, through.unwrap_or(full_set(n)))
        .or_else(|| shortest_cycle(&all, full_set(n)))
        .unwrap_or_default();
    let mut edges = Vec::new();
    for k in 0..cycle.len() {
        let (a, b) = (cycle[k], cycle[(k + 1) % cycle.len()]);
        let name = parts
            .iter()
            .find(|(_, r)| r.has(a, b))
            .map(|(n, _)| n.to_string())
            .unwrap_or_else(|| "?".into());
        edges.push(name);
    }
    Judgement::Forbidden(Violation {
        axiom,
        cycle,
        edges,
    })
}

/// One step of an irreflexive axiom's composition (`hb; eco?`), with the
/// relations an edge of it is made of, for printing.
pub(crate) struct Step<'a, S: Bits = u64> {
    pub name: &'a str,
    pub rel: Rel<S>,
    pub optional: bool,
    pub parts: &'a [(&'a str, Rel<S>)],
}

/// A violation of `irreflexive s1; s2; …`, with a shortest cycle that
/// follows the steps in order, each edge expanded into its parts.
pub(crate) fn violation_path<S: Bits>(
    axiom: &'static str,
    explain: bool,
    steps: &[Step<'_, S>],
) -> Judgement {
    if !explain || steps.is_empty() {
        return Judgement::Forbidden(Violation {
            axiom,
            cycle: Vec::new(),
            edges: Vec::new(),
        });
    }
    let n = steps[0].rel.n();
    let k = steps.len();
    let mut best: Option<Vec<(usize, usize)>> = None; // (event, step taken to reach the next)
    for start in 0..n {
        // BFS over (event, step index); prev stores the predecessor state.
        let idx = |e: usize, i: usize| e * (k + 1) + i;
        let mut prev = vec![usize::MAX; n * (k + 1)];
        let mut seen = vec![false; n * (k + 1)];
        let mut queue = std::collections::VecDeque::new();
        seen[idx(start, 0)] = true;
        queue.push_back((start, 0usize));
        let mut goal = None;
        while let Some((e, i)) = queue.pop_front() {
            if i == k {
                if e == start {
                    goal = Some((e, i));
                    break;
                }
                continue;
            }
            let mut next: Vec<usize> = Vec::new();
            if steps[i].optional && !seen[idx(e, i + 1)] {
                seen[idx(e, i + 1)] = true;
                prev[idx(e, i + 1)] = idx(e, i);
                queue.push_back((e, i + 1));
            }
            next.extend(crate::rel::members(steps[i].rel.row(e)));
            for f in next {
                if !seen[idx(f, i + 1)] {
                    seen[idx(f, i + 1)] = true;
                    prev[idx(f, i + 1)] = idx(e, i);
                    queue.push_back((f, i + 1));
                }
            }
        }
        let Some((e, i)) = goal else { continue };
        // Rebuild the list of (event, step) edges.
        let mut states = vec![(e, i)];
        let mut cur = idx(e, i);
        while prev[cur] != usize::MAX {
            cur = prev[cur];
            states.push((cur / (k + 1), cur % (k + 1)));
        }
        states.reverse();
        let mut edges = Vec::new();
        for w in states.windows(2) {
            if w[0].0 != w[1].0 || !steps[w[0].1].optional {
                edges.push((w[0].0, w[0].1));
            }
        }
        if !edges.is_empty() && best.as_ref().is_none_or(|b| edges.len() < b.len()) {
            best = Some(edges);
        }
    }
    let Some(edges) = best else {
        return Judgement::Forbidden(Violation {
            axiom,
            cycle: Vec::new(),
            edges: Vec::new(),
        });
    };
    // Expand each step edge into a shortest path of its parts.
    let mut cycle = Vec::new();
    let mut names = Vec::new();
    for (j, &(a, step)) in edges.iter().enumerate() {
        let b = edges[(j + 1) % edges.len()].0;
        let st = &steps[step];
        match expand(a, b, st.parts) {
            Some(path) => {
                for (e, name) in path {
                    cycle.push(e);
                    names.push(name);
                }
            }
            None => {
                cycle.push(a);
                names.push(st.name.to_string());
            }
        }
    }
    Judgement::Forbidden(Violation {
        axiom,
        cycle,
        edges: names,
    })
}

/// A shortest path from `a` to `b` in the union of `parts`, as (event, name of
/// the edge leaving it).
fn expand<S: Bits>(a: usize, b: usize, parts: &[(&str, Rel<S>)]) -> Option<Vec<(usize, String)>> {
    if parts.is_empty() {
        return None;
    }
    let n = parts[0].1.n();
    let all = parts.iter().fold(Rel::empty(n), |x, (_, r)| x | *r);
    let mut prev = vec![usize::MAX; n];
    let mut seen = S::bit(a);
    let mut frontier = vec![a];
    while !frontier.is_empty() && !seen.has(b) {
        let mut next = Vec::new();
        for &u in &frontier {
            for v in crate::rel::members(all.row(u)) {
                if !seen.has(v) {
                    seen |= S::bit(v);
                    prev[v] = u;
                    next.push(v);
                }
            }
        }
        frontier = next;
    }
    if !seen.has(b) || a == b {
        return None;
    }
    let mut path = vec![b];
    while *path.last()? != a {
        path.push(prev[*path.last()?]);
    }
    path.reverse();
    let mut out = Vec::new();
    for w in path.windows(2) {
        let name = parts
            .iter()
            .find(|(_, r)| r.has(w[0], w[1]))
            .map(|(n, _)| n.to_string())
            .unwrap_or_default();
        out.push((w[0], name));
    }
    Some(out)
}

/// `fencerel(S)`: events separated in program order by an event of `s`.
pub(crate) fn fencerel<S: Bits>(x: &Execution<'_, S>, s: S) -> Rel<S> {
    x.s.po.rng(s).seq(&x.s.po)
}
