//! Judging complete executions and keeping each model's verdicts: the one
//! place where an execution becomes a final state, allowed or forbidden
//! (with the reason, when explanations are asked for), shared by both
//! engines (the enumeration in `check.rs`, the exploration in
//! `explore.rs`).

use std::collections::{BTreeMap, BTreeSet};

use atomlab_litmus::{StateVar, Test, Value};

use crate::exec::Execution;
use crate::interp::decode;
use crate::models::{Judgement, Model, Violation};
use crate::options::CheckOptions;
use crate::width::Width;

/// An outcome a model forbids, with the reason.
#[derive(Debug, Clone)]
pub struct Forbidden {
    /// The final state.
    pub state: Vec<Value>,
    /// The axiom an execution with this outcome breaks, and its cycle.
    pub violation: Violation,
    /// Event labels of the cycle (`a: Rx=1`…), aligned with `violation.cycle`.
    pub labels: Vec<String>,
    /// A Graphviz graph of that execution, if asked for.
    pub dot: Option<String>,
}

/// What one model has allowed and forbidden so far (shared by both engines).
#[derive(Default)]
pub(crate) struct Acc {
    /// Allowed final states, each with whether an execution reaching it
    /// races.
    pub(crate) states: BTreeMap<Vec<Value>, bool>,
    /// Forbidden final states with the reason (with explanations).
    pub(crate) forbidden: BTreeMap<Vec<Value>, Forbidden>,
    /// Allowed executions satisfying the proposition.
    pub(crate) pos: usize,
    /// Allowed executions not satisfying it.
    pub(crate) neg: usize,
    /// Whether some allowed execution races.
    pub(crate) racy: bool,
    /// Flags some allowed execution raises.
    pub(crate) flags: BTreeSet<&'static str>,
    /// A graph of an allowed execution satisfying the proposition.
    pub(crate) witness: Option<String>,
    /// The reads-from of that execution, in words.
    pub(crate) witness_text: Option<String>,
    /// That execution as data.
    pub(crate) witness_execution: Option<crate::explain::Witness>,
    /// Whether an allowed execution has a cycle in `rf | data` (an
    /// out-of-thin-air value).
    pub(crate) thin_air: bool,
    /// Why an execution could not be judged (the model's result is then
    /// an error).
    pub(crate) unjudged: Option<&'static str>,
    /// The executions with symbolic values counted so far, by the key
    /// [`crate::thin::symbolic`] gives (one per class of values).
    pub(crate) thin_seen: std::collections::HashSet<u64>,
}

/// Judges complete executions and records the verdicts in [`Acc`]s: the one
/// place where an execution becomes a final state, for both engines.
pub(crate) struct Recorder<'a> {
    pub(crate) orig: &'a Test,
    pub(crate) vars: &'a [StateVar],
    pub(crate) opts: &'a CheckOptions,
    pub(crate) models: &'a [&'a dyn Model],
    pub(crate) nl: usize,
}

impl Acc {
    /// Whether some execution could not be judged (the model's result is
    /// then an error, whatever else is found).
    pub(crate) fn is_unjudged(&self) -> bool {
        self.unjudged.is_some()
    }
}

impl Recorder<'_> {
    /// With [`CheckOptions::stop_at_first`]: whether every model's answer
    /// to the condition is already decided (an allowed execution satisfies
    /// an `exists` or `~exists`, or one violates a `forall`), so nothing
    /// further can change it. Always false without that option.
    pub(crate) fn decided(&self, accs: &[Acc]) -> bool {
        use atomlab_litmus::Quantifier;
        self.opts.stop_at_first
            && accs.iter().all(|acc| match self.orig.condition.quantifier {
                Quantifier::Exists | Quantifier::NotExists => acc.pos > 0,
                Quantifier::Forall => acc.neg > 0,
            })
    }

    /// The final state of `x` and whether the proposition holds, or `None`
    /// when the test's filter drops it.
    pub(crate) fn outcome<S: Width>(&self, x: &Execution<'_, S>) -> Option<(Vec<Value>, bool)> {
        let sk = x.s;
        let nl = self.nl;
        let get = |v: &StateVar| -> Value {
            match v {
                StateVar::Reg { thread, reg } => {
                    decode(sk.regs[*thread].get(*reg).copied().unwrap_or(0), nl)
                }
                StateVar::Loc(l) => decode(sk.events[x.last[*l]].wval, nl),
            }
        };
        if !self.orig.filter.as_ref().is_none_or(|f| f.eval(&get)) {
            return None;
        }
        let state: Vec<Value> = self.vars.iter().map(&get).collect();
        let holds = self.orig.condition.prop.eval(&get);
        Some((state, holds))
    }

    /// Judges `x` under model `k` and records the verdict; `Some(racy)` when
    /// the model allows it.
    pub(crate) fn record<S: Width>(
        &self,
        acc: &mut Acc,
        k: usize,
        x: &Execution<'_, S>,
        state: &[Value],
        holds: bool,
        thin: Option<&crate::thin::ThinInfo<S>>,
    ) -> Option<bool> {
        let (m, opts, orig, sk) = (self.models[k], self.opts, self.orig, x.s);
        let want_detail = opts.explain || opts.graphs;
        let (judgement, flags) = S::judge_flagged(m, x, false);
        match judgement {
            Judgement::Allowed { racy } => {
                // herd7's view of thin-air values (crate::thin): a symbol
                // for a copy-only cycle's value, counted once; no execution
                // where a branch tests one.
                // A model given as a cat file (lkmm's from linux-kernel.cfg)
                // gets the same treatment on a Linux-kernel or plain C test:
                // the symbols come from herd7's C front end and solver, not
                // from the model.
                let sym;
                let mut symbolic = false;
                let (state, holds) = match thin
                    .filter(|info| m.symbolic_thin_air() || (m.allows_thin_air() && info.linux))
                {
                    Some(info) => {
                        match crate::thin::symbolic(self.orig, self.vars, self.nl, x, info) {
                            crate::thin::Symbolic::Concrete => (state, holds),
                            crate::thin::Symbolic::Drop => return None,
                            crate::thin::Symbolic::Refuse => {
                                acc.thin_air = true;
                                (state, holds)
                            }
                            crate::thin::Symbolic::State(s, h, key) => {
                                if !acc.thin_seen.insert(key) {
                                    acc.flags.extend(flags);
                                    acc.racy |= racy;
                                    if let Some(e) = acc.states.get_mut(&s) {
                                        *e |= racy;
                                    }
                                    return Some(racy);
                                }
                                sym = s;
                                symbolic = true;
                                (&sym[..], h)
                            }
                        }
                    }
                    None => (state, holds),
                };
                acc.flags.extend(flags);
                if m.allows_thin_air() && !symbolic && !(x.rf | sk.data).acyclic() {
                    acc.thin_air = true;
                }
                if holds {
                    acc.pos += 1;
                } else {
                    acc.neg += 1;
                }
                acc.racy |= racy;
                // Most executions reach a state already seen: no new key.
                match acc.states.get_mut(state) {
                    Some(e) => *e |= racy,
                    None => {
                        acc.states.insert(state.to_vec(), racy);
                    }
                }
                if opts.explain && holds && acc.witness_text.is_none() {
                    let mut w = crate::explain::reads_from(orig, x);
                    if !(x.rf | sk.po).acyclic() {
                        w.push_str(" (sb | rf is cyclic: load buffering, which this model has no axiom against)");
                    }
                    acc.witness_text = Some(w);
                    acc.witness_execution = Some(crate::explain::witness(orig, x));
                }
                if opts.graphs && holds && acc.witness.is_none() {
                    acc.witness = Some(crate::explain::dot(
                        orig,
                        x,
                        None,
                        &format!("{} {} witness", orig.name, m.name()),
                    ));
                }
                return Some(racy);
            }
            Judgement::Forbidden(_)
                if want_detail
                    && !acc.forbidden.contains_key(state)
                    && !acc.states.contains_key(state) =>
            {
                if let Judgement::Forbidden(v) = S::judge(m, x, true) {
                    let labels = crate::explain::labels(orig, x, &v.cycle);
                    let dot = opts.graphs.then(|| {
                        crate::explain::dot(
                            orig,
                            x,
                            Some(&v),
                            &format!("{} {} forbidden", orig.name, m.name()),
                        )
                    });
                    acc.forbidden.insert(
                        state.to_vec(),
                        Forbidden {
                            state: state.to_vec(),
                            violation: v,
                            labels,
                            dot,
                        },
                    );
                }
            }
            Judgement::Forbidden(_) => {}
            Judgement::Unjudged(why) => {
                acc.unjudged.get_or_insert(why);
            }
        }
        None
    }
}
