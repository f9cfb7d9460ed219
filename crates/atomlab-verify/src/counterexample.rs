//! A FAIL's execution at the instruction level: each thread's events in
//! program order as `symbol+offset: instruction`, what each read read and
//! from where, the coherence order of every location written more than
//! once, and the client property that broke, in words. The execution is
//! the checker's witness ([`atomlab_model::explain::Witness`]); each event
//! carries the index of the lifted instruction it came from, and the
//! client's [`Built::origins`] map that back to the machine instruction
//! in the file, as herd7's `-show` and GenMC's error traces show an
//! execution, but in the user's own machine code.

use atomlab_audit::PluginFile;
use atomlab_litmus::{Instr, Test};
use atomlab_model::explain::{Witness, WitnessEvent};

use crate::client::Built;

/// One event of the wrong execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Its thread (P0, P1, …).
    pub thread: usize,
    /// Where it came from: `symbol+offset` in the file, or `client`.
    pub place: String,
    /// The machine instruction (its disassembly), or the client's action.
    pub instruction: String,
    /// The event, as herd7 labels it (`Rlock=0[X]`).
    pub event: String,
    /// For a read: the write it read from, `init` (the initial value) or
    /// `#N`, the N-th step (from 1).
    pub source: Option<String>,
}

/// The wrong execution, explained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counterexample {
    /// The events, thread by thread in program order.
    pub steps: Vec<Step>,
    /// Each location written more than once: its writes in coherence order.
    pub coherence: Vec<String>,
    /// The client property that broke.
    pub broken: String,
    /// Reads-from by step index: (the write's step, or `None` for the
    /// initial value; the read's step).
    pub rf: Vec<(Option<usize>, usize)>,
    /// Coherence by step index, per location written more than once (the
    /// initial value first, as `None`).
    pub co: Vec<(String, Vec<Option<usize>>)>,
}

/// Explains witness `w` of the client `b` built from `file`; `reason` is
/// the broken property as the final state shows it (the verdict's reason),
/// which is what a client other than the lock's reports.
pub(crate) fn explain(
    file: &PluginFile<'_>,
    b: &Built,
    w: &Witness,
    reason: &str,
) -> Counterexample {
    let place = |e: &WitnessEvent| -> (String, String) {
        let Some(t) = e.thread else {
            return ("init".into(), String::new());
        };
        match b
            .origins
            .get(t)
            .and_then(|o| o.get(e.pc))
            .copied()
            .flatten()
        {
            Some(addr) => (
                file.describe(addr),
                b.lifter
                    .disassemble(file, addr)
                    .unwrap_or_else(|| format!("{addr:#x}")),
            ),
            None => ("client".into(), client_action(&b.test, t, e.pc)),
        }
    };
    let mut steps = Vec::new();
    let mut order: Vec<usize> = (0..w.events.len())
        .filter(|&i| w.events[i].thread.is_some())
        .collect();
    // Program order within a thread is the events' order in the witness.
    order.sort_by_key(|&i| (w.events[i].thread, i));
    // An event by its step number, `#N`, or `init`.
    let who = |i: usize| -> String {
        match order.iter().position(|&o| o == i) {
            Some(k) => format!("#{}", k + 1),
            None => "init".into(),
        }
    };
    for &i in &order {
        let e = &w.events[i];
        let (at, instruction) = place(e);
        let source = e
            .read
            .and_then(|_| w.rf.iter().find(|&&(_, r)| r == i))
            .map(|&(src, _)| who(src));
        steps.push(Step {
            thread: e.thread.unwrap_or(0),
            place: at,
            instruction,
            event: e.label.clone(),
            source,
        });
    }
    let step = |i: usize| order.iter().position(|&o| o == i);
    let rf =
        w.rf.iter()
            .filter(|&&(_, r)| w.events[r].thread.is_some())
            .filter_map(|&(src, r)| Some((step(src), step(r)?)))
            .collect();
    let co =
        w.co.iter()
            .filter(|(_, writes)| writes.len() > 2)
            .map(|(l, writes)| {
                (
                    b.test.locations[*l].clone(),
                    writes.iter().map(|&i| step(i)).collect(),
                )
            })
            .collect();
    let coherence =
        w.co.iter()
            .filter(|(_, writes)| writes.len() > 2)
            .map(|(l, writes)| {
                let chain: Vec<String> = writes
                    .iter()
                    .map(|&i| format!("{}={}", who(i), w.events[i].write.unwrap_or(0)))
                    .collect();
                format!("{}: {}", b.test.locations[*l], chain.join(" -> "))
            })
            .collect();
    Counterexample {
        steps,
        coherence,
        broken: match b.property.data_expected() {
            Some(expected) => broken_lock(b, expected, w, &who, reason),
            None => reason.to_string(),
        },
        rf,
        co,
    }
}

impl Counterexample {
    /// A Graphviz graph of the execution: one cluster per thread, each
    /// event labelled with its step, place, instruction and event, program
    /// order down each thread, reads-from in red, coherence in blue (as
    /// herd7's and `check --dot`'s graphs draw them).
    pub fn dot(&self, title: &str) -> String {
        use std::fmt::Write;
        let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let mut out = String::new();
        let _ = writeln!(out, "digraph \"{}\" {{", esc(title));
        let _ = writeln!(
            out,
            "  label=\"{}\"; labelloc=t; node [shape=box, fontname=monospace];",
            esc(title)
        );
        let _ = writeln!(out, "  init [label=\"initial values\", style=dotted];");
        let threads: std::collections::BTreeSet<usize> =
            self.steps.iter().map(|s| s.thread).collect();
        for t in threads {
            let _ = writeln!(out, "  subgraph cluster_p{t} {{ label=\"P{t}\";");
            let mine: Vec<usize> = (0..self.steps.len())
                .filter(|&i| self.steps[i].thread == t)
                .collect();
            for &i in &mine {
                let s = &self.steps[i];
                let _ = writeln!(
                    out,
                    "    s{i} [label=\"#{} {}\\n{}\\n{}\"];",
                    i + 1,
                    esc(&s.place),
                    esc(&s.instruction),
                    esc(&s.event)
                );
            }
            for w in mine.windows(2) {
                let _ = writeln!(out, "    s{} -> s{} [label=po];", w[0], w[1]);
            }
            let _ = writeln!(out, "  }}");
        }
        let node = |s: Option<usize>| s.map_or("init".to_string(), |i| format!("s{i}"));
        for &(w, r) in &self.rf {
            let _ = writeln!(
                out,
                "  {} -> s{r} [label=rf, color=red, fontcolor=red];",
                node(w)
            );
        }
        for (loc, chain) in &self.co {
            for pair in chain.windows(2) {
                let _ = writeln!(
                    out,
                    "  {} -> {} [label=\"co {}\", color=blue, fontcolor=blue];",
                    node(pair[0]),
                    node(pair[1]),
                    esc(loc)
                );
            }
        }
        let _ = writeln!(out, "}}");
        out
    }
}

/// What the client's own instruction at `pc` of thread `t` does, named
/// by the client location it touches (client.rs names them).
fn client_action(test: &Test, t: usize, pc: usize) -> String {
    let name = |e: &atomlab_litmus::Expr| match e {
        atomlab_litmus::Expr::Const(atomlab_litmus::Value::Loc(l)) => test.locations[*l].clone(),
        _ => "memory".into(),
    };
    let role = |loc: &str| {
        let what = match loc.trim_end_matches(|c: char| c.is_ascii_digit()) {
            "data" => "critical section",
            "use" => "a holder's use of the object",
            "ref" => "a reference handed over",
            "done" => "a thread finished, before read()",
            "item" => "the consumer's item",
            _ => return loc.to_string(),
        };
        format!("{loc} ({what})")
    };
    match test.threads.get(t).and_then(|th| th.code.get(pc)) {
        Some(Instr::Load { addr, .. }) => format!("load {}", role(&name(addr))),
        Some(Instr::Store { addr, .. }) => format!("store {}", role(&name(addr))),
        _ => "client".into(),
    }
}

/// The lock client's property, from the reads of `data`: two critical
/// sections that read the same write lost one update.
fn broken_lock(
    b: &Built,
    expected: i64,
    w: &Witness,
    who: &dyn Fn(usize) -> String,
    reason: &str,
) -> String {
    let Some(data) = b.test.locations.iter().position(|l| l == "data") else {
        return format!("the final state is not data = {}", expected);
    };
    let reads: Vec<(usize, usize)> =
        w.rf.iter()
            .copied()
            .filter(|&(_, r)| w.events[r].loc == Some(data) && w.events[r].thread.is_some())
            .collect();
    for (i, &(src, r1)) in reads.iter().enumerate() {
        if let Some(&(_, r2)) = reads[i + 1..].iter().find(|&&(s, _)| s == src) {
            let (t1, t2) = (
                w.events[r1].thread.unwrap_or(0),
                w.events[r2].thread.unwrap_or(0),
            );
            let value = w.events[r1].read.unwrap_or(0);
            let lost = format!(
                "one update was lost and data ends at {} instead of {}",
                final_data(w, data),
                expected
            );
            if t1 != t2 {
                // Did one enter after the other left? Its lock's read took
                // a write the other made after its critical section.
                for (a, rb, tb, ta) in [(r1, r2, t2, t1), (r2, r1, t1, t2)] {
                    let handoff = w.rf.iter().find(|&&(src, r)| {
                        w.events[r].thread == Some(tb)
                            && w.events[r].loc != Some(data)
                            && r < rb
                            && w.events[src].thread == Some(ta)
                            && src > a
                    });
                    if let Some(&(src, r)) = handoff {
                        return format!(
                            "P{tb} entered its critical section after P{ta} left ({} read {}, written after P{ta}'s critical section) but read data = {value} from {}, not P{ta}'s increment: the lock did not order P{ta}'s critical section before P{tb}'s (a missing release on unlock or acquire on lock), so {lost}",
                            who(r),
                            who(src),
                            who(src_of(w, rb)),
                        );
                    }
                }
            }
            let same = if t1 == t2 {
                format!("P{t1} read data = {value} twice")
            } else {
                format!("P{t1} and P{t2} both read data = {value}")
            };
            return format!(
                "{same} from the same write ({}) in their critical sections: both were inside at once, so {lost}",
                who(src),
            );
        }
    }
    let ended = final_data(w, data);
    if ended == expected {
        // The count is right: what broke is another part of the property
        // (heap misuse), which the reason names.
        return reason.to_string();
    }
    format!(
        "data ends at {ended} instead of {expected}: a critical section read a value older than the last increment",
    )
}

/// The write read `r` read from.
fn src_of(w: &Witness, r: usize) -> usize {
    w.rf.iter().find(|&&(_, x)| x == r).map_or(0, |&(s, _)| s)
}

/// The co-last write's value of `loc`.
fn final_data(w: &Witness, loc: usize) -> i64 {
    w.co.iter()
        .find(|(l, _)| *l == loc)
        .and_then(|(_, writes)| writes.last())
        .and_then(|&i| w.events[i].write)
        .unwrap_or(0)
}
