//! Judging one test under several models: enumerate candidate executions
//! once per event structure (the test's own, or its C11→ISA compilation),
//! judge each under every model that applies, and collect the final states
//! each model allows, the outcomes it forbids and why.

use std::time::{Duration, Instant};

use atomlab_litmus::{Arch, Quantifier, StateVar, Test, Value};

use crate::combine::Flow;
use crate::exec::{events_of, loc_choices, Budget, Execution, LocChoice, Skeleton};
use crate::interp::{encode, explore, Trace};
use crate::judge::{Acc, Recorder};
use crate::mapping::{compile, mapping_name, Target};
use crate::models::{by_name, Model};
use crate::options::{CheckOptions, Engine};
use crate::rel::{full_set, Rel, MAX_EVENTS, MAX_NARROW_EVENTS};
use crate::width::Width;
use crate::CheckError;

pub use crate::judge::Forbidden;

/// herd's observation of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Observation {
    /// No allowed execution satisfies the proposition.
    Never,
    /// Some do, some do not.
    Sometimes,
    /// All do.
    Always,
}

impl Observation {
    /// herd's word.
    pub fn word(self) -> &'static str {
        match self {
            Observation::Never => "Never",
            Observation::Sometimes => "Sometimes",
            Observation::Always => "Always",
        }
    }
}

/// One model's verdict on one test.
#[derive(Debug, Clone)]
pub struct ModelResult {
    /// The model.
    pub model: &'static str,
    /// The C11→ISA mapping the test went through, if any.
    pub mapping: Option<&'static str>,
    /// How a test that reads two ways was read (a plain-only C test under
    /// `lkmm`: [`PLAIN_AS_LINUX`]), if it was.
    pub reading: Option<&'static str>,
    /// The variables of a final state.
    pub vars: Vec<StateVar>,
    /// Allowed final states, sorted, each with whether some execution reaching it races.
    pub states: Vec<(Vec<Value>, bool)>,
    /// Allowed executions satisfying the proposition.
    pub positive: usize,
    /// Allowed executions not satisfying it.
    pub negative: usize,
    /// The observation.
    pub observation: Observation,
    /// Whether the test's expectation holds (herd's `Ok`/`No`).
    pub ok: bool,
    /// Some allowed execution has a data race (C11/RC11 undefined behaviour).
    pub racy: bool,
    /// The flags some allowed execution raises (a cat model's `flag` checks), sorted.
    pub flags: Vec<&'static str>,
    /// Forbidden outcomes with reasons (when explanations were asked for).
    pub forbidden: Vec<Forbidden>,
    /// A graph of an allowed execution satisfying the proposition, if asked for.
    pub witness_dot: Option<String>,
    /// With explanations: the reads-from of an allowed execution satisfying
    /// the proposition (why the outcome can happen).
    pub witness: Option<String>,
    /// With explanations: that execution as data (its events, each with the
    /// instruction it came from, its reads-from and coherence).
    pub witness_execution: Option<crate::explain::Witness>,
    /// Candidate executions examined.
    pub candidates: usize,
    /// Whether the explore engine built some of the executions: it visits
    /// one allowed execution per final state and prunes forbidden partial
    /// ones, so `forbidden` and `witness` then cover only the executions it
    /// completed, not every forbidden outcome (the explore engine, `explore.rs`).
    pub explored: bool,
    /// Whether the combinations of the threads' runs were found by growing
    /// one execution graph at a time (`CheckOptions::grow`, where it
    /// applies) rather than by searching their product.
    pub grown: bool,
    /// Time spent (shared enumeration counted once per event structure).
    pub elapsed: Duration,
}

/// The result of asking one model about one test.
#[derive(Debug, Clone)]
pub enum ModelOutcome {
    /// Judged.
    Done(Box<ModelResult>),
    /// The deadline passed.
    Timeout {
        /// The model.
        model: &'static str,
    },
    /// The model does not apply to the test's architecture.
    NotApplicable {
        /// The model.
        model: &'static str,
        /// Why.
        reason: String,
    },
    /// The test could not be judged (an execution bound, a bad address).
    Failed {
        /// The model.
        model: &'static str,
        /// Why.
        error: CheckError,
    },
}

impl ModelOutcome {
    /// The model's name.
    pub fn model(&self) -> &'static str {
        match self {
            ModelOutcome::Done(r) => r.model,
            ModelOutcome::Timeout { model }
            | ModelOutcome::NotApplicable { model, .. }
            | ModelOutcome::Failed { model, .. } => model,
        }
    }
}

/// A model to judge with: a built-in one by name, or one given as a trait
/// object (such as a user's cat file, atomlab-cat), which judges the test's
/// own events (no C11→ISA mapping).
#[derive(Clone, Copy)]
pub enum ModelChoice<'m> {
    /// A built-in model, by its command-line name.
    Named(&'m str),
    /// A model given by the caller.
    Given(&'m dyn Model),
}

/// Judges `test` under each of `models` (names as on the command line).
pub fn check_test(test: &Test, models: &[&str], opts: &CheckOptions) -> Vec<ModelOutcome> {
    let choices: Vec<ModelChoice<'_>> = models.iter().map(|m| ModelChoice::Named(m)).collect();
    check_test_with(test, &choices, opts)
}

/// Judges `test` under each of `models`, built-in or given.
pub fn check_test_with(
    test: &Test,
    models: &[ModelChoice<'_>],
    opts: &CheckOptions,
) -> Vec<ModelOutcome> {
    let mut outcomes: Vec<Option<ModelOutcome>> = vec![None; models.len()];
    // Models judging the same event structure share one enumeration: the
    // same compilation (or none), read as Linux-kernel C or not.
    type Group = (Option<Target>, bool);
    let mut groups: Vec<(Group, Vec<usize>)> = Vec::new();
    let mut resolved: Vec<Option<&dyn Model>> = vec![None; models.len()];
    for (i, choice) in models.iter().enumerate() {
        let (model, target) = match *choice {
            ModelChoice::Given(m) => (m, Ok(None)),
            ModelChoice::Named(m) => {
                let Some(model) = by_name(m) else {
                    outcomes[i] = Some(ModelOutcome::NotApplicable {
                        model: "?",
                        reason: format!("unknown model {m}"),
                    });
                    continue;
                };
                (model, model.judges(test, opts.acquire))
            }
        };
        resolved[i] = Some(model);
        match target {
            Err(reason) => {
                outcomes[i] = Some(ModelOutcome::NotApplicable {
                    model: model.name(),
                    reason,
                })
            }
            Ok(t) => {
                let key = (t, read_as_linux(test, model.name()));
                match groups.iter_mut().find(|g| g.0 == key) {
                    Some(g) => g.1.push(i),
                    None => groups.push((key, vec![i])),
                }
            }
        }
    }
    for ((target, linux), idx) in groups {
        let ms: Vec<&dyn Model> = idx.iter().filter_map(|&i| resolved[i]).collect();
        let compiled;
        let t = match target {
            Some(tg) => {
                compiled = compile(test, tg);
                &compiled
            }
            None => test,
        };
        let start = Instant::now();
        let builtin = idx
            .iter()
            .all(|&i| matches!(models[i], ModelChoice::Named(_)));
        let res = run(test, t, &ms, builtin, linux, opts);
        let elapsed = start.elapsed();
        match res {
            Ok(results) => {
                for (k, (&i, r)) in idx.iter().zip(results).enumerate() {
                    outcomes[i] = Some(match r {
                        Ok(mut r) => {
                            r.mapping = target.map(mapping_name);
                            if linux && !test.is_linux() {
                                r.reading = Some(PLAIN_AS_LINUX);
                            }
                            r.elapsed = elapsed;
                            ModelOutcome::Done(Box::new(r))
                        }
                        Err(error) => ModelOutcome::Failed {
                            model: ms[k].name(),
                            error,
                        },
                    });
                }
            }
            Err(CheckError::Timeout) => {
                for (k, &i) in idx.iter().enumerate() {
                    outcomes[i] = Some(ModelOutcome::Timeout {
                        model: ms[k].name(),
                    });
                }
            }
            Err(e) => {
                for (k, &i) in idx.iter().enumerate() {
                    outcomes[i] = Some(ModelOutcome::Failed {
                        model: ms[k].name(),
                        error: e.clone(),
                    });
                }
            }
        }
    }
    outcomes
        .into_iter()
        .map(|o| o.expect("every model has an outcome"))
        .collect()
}

/// One combination of runs (one per thread) whose values can all be read,
/// with what judging it needs from [`run`].
struct Combination<'a, 'r> {
    t: &'a Test,
    init: &'a [i64],
    chosen: &'a [&'a Trace],
    observed: u128,
    linux: bool,
    explore_here: bool,
    flagged: bool,
    rec: &'r Recorder<'r>,
}

impl Combination<'_, '_> {
    /// Judges every execution of the combination under the models, with
    /// words `S` (wide enough for its events): by the exploring engine
    /// where it applies (`true`), else by enumerating each location's
    /// reads-from and coherence.
    fn judge<S: Width>(
        &self,
        accs: &mut [Acc],
        candidates: &mut usize,
        budget: &mut Budget,
    ) -> Result<bool, CheckError> {
        let (t, rec, opts, nl) = (self.t, self.rec, self.rec.opts, self.rec.nl);
        let sk = Skeleton::<S>::build(t, self.init, self.chosen, self.observed)?;
        // What the thin-air analysis needs (crate::thin), for the models
        // that show such values as herd7 does.
        let thin = rec
            .models
            .iter()
            .any(|m| m.symbolic_thin_air() || (self.linux && m.allows_thin_air()))
            .then(|| crate::thin::ThinInfo::build(self.chosen, nl, self.linux));
        if self.explore_here
            && (opts.engine == Engine::Explore
                || crate::explore::worth_exploring(&sk, nl, self.flagged))
        {
            crate::explore::explore_skeleton(&sk, rec, accs, candidates, thin.as_ref())?;
            return Ok(true);
        }
        let mut choices: Vec<Vec<LocChoice>> = Vec::with_capacity(nl);
        for l in 0..nl {
            let c = loc_choices(&sk, l, budget)?;
            if c.is_empty() {
                return Ok(false);
            }
            choices.push(c);
        }
        let mut ci = vec![0usize; nl];
        loop {
            *candidates += 1;
            if *candidates & 63 == 0 {
                if let Some(p) = &opts.progress {
                    crate::SearchProgress::add(&p.executions, 64);
                }
                if let Some(d) = opts.deadline {
                    if Instant::now() > d {
                        return Err(CheckError::Timeout);
                    }
                }
            }
            let sel: Vec<&LocChoice> = ci
                .iter()
                .enumerate()
                .map(|(l, &k)| &choices[l][k])
                .collect();
            let x = Execution::from_choices(&sk, &sel);
            if let Some((state, holds)) = rec.outcome(&x) {
                for (k, acc) in accs.iter_mut().enumerate() {
                    rec.record(acc, k, &x, &state, holds, thin.as_ref());
                }
            }
            if rec.decided(accs) {
                break;
            }
            // Next per-location choice.
            let mut l = 0;
            loop {
                if l == nl {
                    break;
                }
                ci[l] += 1;
                if ci[l] < choices[l].len() {
                    break;
                }
                ci[l] = 0;
                l += 1;
            }
            if l == nl {
                break;
            }
        }
        Ok(false)
    }
}

/// [`crate::explore::prefix_satisfiable`] of the threads' prefixes `runs`
/// (from `prefixes`), with words `S`.
fn probe_prefixes<S: Width>(
    t: &Test,
    init: &[i64],
    runs: &[&Trace],
    prefixes: &[crate::combine::Prefix<'_>],
    observed: u128,
    rec: &Recorder<'_>,
) -> Result<bool, CheckError> {
    let nl = t.locations.len();
    let mut sk = Skeleton::<S>::build(t, init, runs, observed)?;
    let mut settled = S::ZERO;
    let mut base = nl;
    for p in prefixes {
        settled |= S::from_u64(p.settled) << base;
        // The later writes come after the prefix in any order: no
        // program order among them.
        let len = p.events.len() + p.later.len();
        let later = full_set::<S>(base + len) & !full_set::<S>(base + p.events.len());
        sk.po = sk.po - Rel::cross(sk.n, later, later);
        base += len;
    }
    crate::explore::prefix_satisfiable(&sk, rec, settled)
}

/// Whether every read of the chosen traces can read from some write of
/// theirs or the initial state (same location, same value).
fn values_feasible(chosen: &[&Trace], init: &[i64]) -> bool {
    use crate::interp::Kind;
    for (ti, tr) in chosen.iter().enumerate() {
        for e in &tr.events {
            if !matches!(e.kind, Kind::Read | Kind::Update) || init[e.loc] == e.rval {
                continue;
            }
            let found = chosen.iter().enumerate().any(|(tj, other)| {
                other.events.iter().any(|w| {
                    matches!(w.kind, Kind::Write | Kind::Update)
                        && w.loc == e.loc
                        && w.wval == e.rval
                        && !(tj == ti && std::ptr::eq(w, e))
                })
            });
            if !found {
                return false;
            }
        }
    }
    true
}

/// Refuses a test whose traces access one location with two widths: that
/// needs mixed-size semantics (herd7's `sm` relation and byte-level events),
/// which these models do not have.
fn mixed_size(t: &Test, traces: &[crate::interp::Runs]) -> Result<(), CheckError> {
    let mut width = vec![0u8; t.locations.len()];
    // A thread sharing an earlier one's runs (a copy: verify's clients)
    // adds nothing: each set of runs is looked at once.
    let distinct = traces
        .iter()
        .enumerate()
        .filter(|(i, r)| !traces[..*i].iter().any(|q| std::rc::Rc::ptr_eq(q, r)));
    for e in distinct
        .flat_map(|(_, r)| r.iter())
        .flat_map(|tr| &tr.events)
    {
        if matches!(e.kind, crate::interp::Kind::Fence(_)) || e.annot.width == 0 {
            continue;
        }
        let w = &mut width[e.loc];
        if *w != 0 && *w != e.annot.width {
            return Err(CheckError::Semantics(format!(
                "location '{}' is accessed with {}-byte and {}-byte accesses: mixed-size tests are not supported",
                t.locations[e.loc], *w, e.annot.width
            )));
        }
        *w = e.annot.width;
    }
    Ok(())
}

/// What [`ModelResult::reading`] says of a C test with plain accesses only
/// judged by `lkmm`.
pub const PLAIN_AS_LINUX: &str =
    "a C test with plain accesses only, read as Linux-kernel C (plain accesses), as herd7 with linux-kernel.cfg reads every C test";

/// Whether model `name` reads `test` as Linux-kernel C: a Linux test, or a
/// C test with plain accesses only judged by the LKMM (built in, or a cat
/// file named `lkmm` as `--conf lkmm=linux-kernel.cfg` names it).
fn read_as_linux(test: &Test, name: &str) -> bool {
    test.is_linux() || (name == "lkmm" && test.is_plain_c())
}

/// The word an execution's sets and relations are built with (rel.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    /// `u32`: at most 32 events, and every model takes them.
    Narrow,
    /// `u64`: at most 64 events.
    Usual,
    /// `u128`: more, or [`CheckOptions::wide_words`].
    Wide,
}

/// The words a check may use: whether every model of `models` takes `u32`
/// words (and the options let them), and whether `u128` is forced.
#[derive(Debug, Clone, Copy)]
struct Words {
    narrow: bool,
    wide: bool,
}

impl Words {
    fn of(models: &[&dyn Model], opts: &CheckOptions) -> Words {
        Words {
            narrow: !opts.no_narrow_words && models.iter().all(|m| m.judges_narrow()),
            wide: opts.wide_words,
        }
    }

    /// The narrowest word that holds `events` events.
    fn word(self, events: usize) -> Word {
        if self.wide || events > MAX_EVENTS {
            Word::Wide
        } else if self.narrow && events <= MAX_NARROW_EVENTS {
            Word::Narrow
        } else {
            Word::Usual
        }
    }
}

/// Enumerates the candidate executions of `t` (which is `orig` or its
/// compilation) and judges each under `models`. `linux`: the test is read
/// as Linux-kernel C ([`read_as_linux`]).
fn run(
    orig: &Test,
    t: &Test,
    models: &[&dyn Model],
    builtin: bool,
    linux: bool,
    opts: &CheckOptions,
) -> Result<Vec<Result<ModelResult, CheckError>>, CheckError> {
    let vars = orig.state_vars();
    let nl = t.locations.len();
    // A C test judged as C has herd7's structured control dependencies;
    // its compilation (`t` is not `orig`) has the ISA's (see mapping.rs).
    let structured = t.arch == Arch::C && std::ptr::eq(orig, t);
    let (_values, mut traces) = explore(t, opts, structured, linux)?;
    let mut init = vec![0i64; nl];
    for (l, v) in &t.init {
        init[*l] = encode(*v);
    }
    let mut accs: Vec<Acc> = models.iter().map(|_| Acc::default()).collect();
    // Words as wide as each execution needs (rel.rs), decided once.
    let words = Words::of(models, opts);
    mixed_size(t, &traces)?;
    let observed = crate::exec::observed_locations(t);
    let mut candidates = 0usize;
    // A Linux thread that waits for a lock it can never take (lock.cat's
    // lock-nest, or a lock never released) has no run: the test has no
    // execution at all, as herd7 reports (States 0). Elsewhere an empty
    // thread is an error of the semantics.
    let blocked = traces.iter().any(|t| t.is_empty());
    if blocked && !linux {
        return Err(CheckError::Semantics("a thread has no possible run".into()));
    }
    let mut budget = Budget {
        deadline: opts.deadline,
        steps: 0,
        max_choices: 1_000_000,
    };
    let rec = Recorder {
        orig,
        vars: &vars,
        opts,
        models,
        nl,
    };
    // A model with flags (lkmm's validity checks) is explored without the
    // one-execution-per-state shortcut: every execution it allows is
    // visited, so no flag is missed (explore.rs).
    let explore_here = crate::explore::applies(opts, builtin);
    // ... and `auto` explores them only above a larger search space than
    // the others' (explore::EXPLORE_FLAGGED_ABOVE): judging every allowed
    // execution and the partial graphs too costs more per skeleton than
    // enumerating the Linux-kernel corpora's small tests.
    let flagged = models.iter().any(|m| m.raises_flags());
    let mut any_explored = false;
    // A Linux-kernel or plain C test: herd7's C front end gives its thin-air
    // values symbols whatever the model, a cat file's included (crate::thin).
    let linux = t.is_linux() || t.is_plain_c();
    // Runs that fail a one-thread conjunct of the filter make no execution
    // that counts (verify's spin loops leave their failing runs to it).
    crate::combine::apply_filter(orig, &mut traces, nl);
    // The combinations of runs whose values can all be read (combine.rs);
    // single-event RMWs each need their own write under the built-in
    // models, which all imply SC per location.
    // Interchangeable threads (CheckOptions::symmetry): one combination of
    // each set that swapping their runs relates is searched, its counts
    // multiplied by the set's size (combine.rs).
    let groups = if opts.symmetry && std::ptr::eq(orig, t) {
        crate::combine::symmetric_groups(orig, &traces)
    } else {
        Vec::new()
    };
    let mut each_combination = |chosen: &[&Trace], weight: u64| -> Result<Flow, CheckError> {
        // Every combination is counted: one can take seconds (verify's
        // 3-thread locks).
        if let Some(p) = &opts.progress {
            crate::SearchProgress::add(&p.combinations, 1);
        }
        let before: Vec<(usize, usize)> = accs.iter().map(|a| (a.pos, a.neg)).collect();
        let candidates_before = candidates;
        // Every value read must be written by someone in this combination
        // (or be the initial value); otherwise no reads-from exists.
        if values_feasible(chosen, &init) {
            let one = Combination {
                t,
                init: &init,
                chosen,
                observed,
                linux,
                explore_here,
                flagged,
                rec: &rec,
            };
            // Words as wide as the execution needs (rel.rs).
            let explored = match words.word(events_of(nl, chosen)?) {
                Word::Narrow => one.judge::<u32>(&mut accs, &mut candidates, &mut budget)?,
                Word::Usual => one.judge::<u64>(&mut accs, &mut candidates, &mut budget)?,
                Word::Wide => one.judge::<u128>(&mut accs, &mut candidates, &mut budget)?,
            };
            any_explored |= explored;
        }
        // The combination a stop_at_first search ended in stands for
        // itself only: its orderings were not searched to their end.
        if weight > 1 && !rec.decided(&accs) {
            let more = |now: usize, then: usize| {
                (now - then).saturating_mul(usize::try_from(weight - 1).unwrap_or(usize::MAX))
            };
            candidates = candidates.saturating_add(more(candidates, candidates_before));
            for (a, (pos, neg)) in accs.iter_mut().zip(before) {
                a.pos = a.pos.saturating_add(more(a.pos, pos));
                a.neg = a.neg.saturating_add(more(a.neg, neg));
            }
        }
        Ok(if rec.decided(&accs) {
            Flow::Stop
        } else {
            Flow::Go
        })
    };
    // With the pruning engine and models that all prune, the search over
    // combinations also judges the prefixes the threads' runs share, and
    // cuts those no model allows (combine::Probe): GenMC's growing of one
    // graph, at the level of the runs.
    let mut probe = |prefixes: &[crate::combine::Prefix<'_>]| -> Result<bool, CheckError> {
        let runs: Vec<Trace> = prefixes
            .iter()
            .map(|p| Trace::prefix(p.events, &p.later))
            .collect();
        let refs: Vec<&Trace> = runs.iter().collect();
        match events_of(nl, &refs).map(|n| words.word(n)) {
            Ok(Word::Narrow) => probe_prefixes::<u32>(t, &init, &refs, prefixes, observed, &rec),
            Ok(Word::Usual) => probe_prefixes::<u64>(t, &init, &refs, prefixes, observed, &rec),
            Ok(Word::Wide) => probe_prefixes::<u128>(t, &init, &refs, prefixes, observed, &rec),
            Err(_) => Ok(true),
        }
    };
    // Only on an ISA's events: a later write stands in as a plain write,
    // which C11's models read as non-atomic.
    let probing = explore_here && !flagged && !opts.unpruned && t.arch != Arch::C;
    // Growing graphs hands the probe no stand-in: every event of its
    // prefixes is the graph's and every read's source is among them, so
    // its prefixes are probed whatever the test's language and whether or
    // not a model raises flags (a flag is raised by an allowed execution,
    // and no execution extending a prefix that no model allows is one).
    // On the Linux-kernel seqlocks of issue 37 this is what makes growing
    // pay: SEQLOCK-4's combinations fall from thousands to its 120.
    let probing_grown = explore_here && !opts.unpruned;
    // Where every execution's po ∪ rf is acyclic under every model judged,
    // and the combinations are many, they are found by growing graphs
    // (grow.rs).
    let names: Vec<&str> = models.iter().map(|m| m.name()).collect();
    let grow = match opts.grow {
        crate::Grow::Never => false,
        crate::Grow::WhereFlagged => flagged,
        crate::Grow::Always => true,
    } && builtin
        && !opts.unpruned
        && (opts.grow_all || combinations(&traces, &groups) > crate::grow::ABOVE)
        && crate::grow::applies(&names, &traces);
    if !blocked && grow {
        crate::grow::each(
            &traces,
            &init,
            probing_grown.then_some(&mut probe as &mut crate::combine::Probe<'_>),
            &groups,
            opts.deadline,
            &mut each_combination,
        )?;
    } else if !blocked {
        crate::combine::each(
            &traces,
            &init,
            crate::combine::Cuts {
                values: !opts.unpruned,
                rmw_exclusive: builtin,
                probe: probing.then_some((
                    &mut probe as &mut crate::combine::Probe<'_>,
                    if opts.probe_all {
                        0
                    } else {
                        crate::combine::PROBE_ABOVE
                    },
                )),
            },
            &groups,
            opts.deadline,
            &mut each_combination,
        )?;
    }
    let q = orig.condition.quantifier;
    Ok(models
        .iter()
        .zip(accs)
        .map(|(m, acc)| {
            if let Some(why) = acc.unjudged {
                return Err(CheckError::TooBig(format!("{}: {why}", m.name())));
            }
            if acc.thin_air {
                return Err(CheckError::ThinAir(m.name()));
            }
            let observation = if acc.pos == 0 {
                Observation::Never
            } else if opts.stop_at_first {
                // The search may have stopped at the first execution that
                // satisfied the condition: whether all do is not known.
                Observation::Sometimes
            } else if acc.neg == 0 {
                Observation::Always
            } else {
                Observation::Sometimes
            };
            let ok = match q {
                Quantifier::Exists => acc.pos > 0,
                Quantifier::NotExists => acc.pos == 0,
                Quantifier::Forall => acc.neg == 0,
            };
            let forbidden = acc
                .forbidden
                .into_iter()
                .filter(|(s, _)| !acc.states.contains_key(s))
                .map(|(_, f)| f)
                .collect();
            Ok(ModelResult {
                model: m.name(),
                mapping: None,
                reading: None,
                vars: vars.clone(),
                states: acc.states.into_iter().collect(),
                positive: acc.pos,
                negative: acc.neg,
                observation,
                ok,
                racy: acc.racy,
                flags: acc.flags.into_iter().collect(),
                forbidden,
                witness_dot: acc.witness,
                witness: acc.witness_text,
                witness_execution: acc.witness_execution,
                candidates,
                explored: any_explored,
                grown: grow,
                elapsed: Duration::ZERO,
            })
        })
        .collect())
}

/// About how many combinations of runs the threads have: the product of
/// their runs' counts, over the orderings of each group of copies.
fn combinations(traces: &[crate::interp::Runs], groups: &[Vec<usize>]) -> f64 {
    let product: f64 = traces.iter().map(|r| r.len() as f64).product();
    let orderings: f64 = groups
        .iter()
        .map(|g| (1..=g.len()).map(|k| k as f64).product::<f64>())
        .product();
    product / orderings
}

/// The instructions of each thread of `t` that make a memory or fence
/// event in some run of it (by index in its code): what a change to the
/// code can affect. Code no run reaches (the path a constant condition
/// never takes, such as outline atomics' LSE test) is not in it.
pub fn instructions_run(t: &Test, opts: &CheckOptions) -> Result<Vec<Vec<usize>>, CheckError> {
    let (_values, traces) = explore(t, opts, false, t.is_linux())?;
    Ok(traces
        .iter()
        .map(|runs| {
            let mut pcs: Vec<usize> = runs
                .iter()
                .flat_map(|tr| tr.events.iter().map(|e| e.pc))
                .collect();
            pcs.sort_unstable();
            pcs.dedup();
            pcs
        })
        .collect())
}
