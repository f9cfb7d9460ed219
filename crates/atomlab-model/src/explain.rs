//! Explanations of forbidden outcomes (the axiom and a smallest cycle, in the
//! notation `a: Rx=2 -[dmb.ld]-> b: Wy=1 -rfe-> …`) and Graphviz graphs of
//! executions.

use std::fmt::Write;

use atomlab_litmus::Test;

use crate::exec::Execution;
use crate::models::Violation;
use crate::rel::{members, Bits};

fn letter(k: usize) -> String {
    let mut s = String::new();
    let mut k = k;
    loop {
        s.insert(0, (b'a' + (k % 26) as u8) as char);
        if k < 26 {
            return s;
        }
        k = k / 26 - 1;
    }
}

/// `a: Rx=1`-style labels for the events of a cycle.
pub fn labels<S: Bits>(test: &Test, x: &Execution<'_, S>, cycle: &[usize]) -> Vec<String> {
    cycle
        .iter()
        .enumerate()
        .map(|(k, &e)| {
            let th = x.s.events[e]
                .thread
                .map(|t| format!("P{t} "))
                .unwrap_or_default();
            format!("{}: {}{}", letter(k), th, x.s.label(test, e))
        })
        .collect()
}

/// The cycle as one line: `a: Rx=2 -[dmb.ld]-> b: Wy=1 -rfe-> a`.
pub fn cycle_text(v: &Violation, labels: &[String]) -> String {
    if v.cycle.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    for (k, l) in labels.iter().enumerate() {
        let edge = &v.edges[k];
        let edge = format!("-{edge}->");
        let _ = write!(s, "{l} {edge} ");
    }
    s.push_str(&letter(0));
    s
}

/// The reads-from of an execution, read by read: `P1 Rx=1 <-rf- P0 Wx=1`.
pub fn reads_from<S: Bits>(test: &Test, x: &Execution<'_, S>) -> String {
    let s = x.s;
    let mut items = Vec::new();
    for (w, r) in x.rf.pairs() {
        let who = |e: usize| {
            s.events[e]
                .thread
                .map(|t| format!("P{t} "))
                .unwrap_or_default()
        };
        items.push(format!(
            "{}{} <-rf- {}{}",
            who(r),
            s.label(test, r),
            who(w),
            s.label(test, w)
        ));
    }
    items.join("; ")
}

/// An execution as data, for tools that render it in their own terms
/// (`verify` maps each event back to the machine instruction it came
/// from): its events, reads-from and coherence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    /// The events; initial writes have no thread.
    pub events: Vec<WitnessEvent>,
    /// Reads-from, as (write, read) indices into `events`.
    pub rf: Vec<(usize, usize)>,
    /// Per location that has writes, its writes in coherence order
    /// (initial write first).
    pub co: Vec<(usize, Vec<usize>)>,
}

/// One event of a [`Witness`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WitnessEvent {
    /// The thread, or `None` for an initial write.
    pub thread: Option<usize>,
    /// The index in its thread's code of the instruction it came from.
    pub pc: usize,
    /// The location, if it accesses memory.
    pub loc: Option<usize>,
    /// Whether it reads, and what.
    pub read: Option<i64>,
    /// Whether it writes, and what.
    pub write: Option<i64>,
    /// herd's label (`Rx=0[A]`).
    pub label: String,
}

/// `x` as a [`Witness`].
pub fn witness<S: Bits>(test: &Test, x: &Execution<'_, S>) -> Witness {
    let s = x.s;
    let events: Vec<WitnessEvent> = (0..s.n)
        .map(|i| {
            let e = &s.events[i];
            let nl = test.locations.len();
            let value = |v: i64| match crate::interp::decode(v, nl) {
                atomlab_litmus::Value::Int(n) => n,
                _ => v,
            };
            let (read, write) = match e.kind {
                crate::interp::Kind::Read => (Some(value(e.rval)), None),
                crate::interp::Kind::Write => (None, Some(value(e.wval))),
                crate::interp::Kind::Update => (Some(value(e.rval)), Some(value(e.wval))),
                _ => (None, None),
            };
            WitnessEvent {
                thread: e.thread,
                pc: e.pc,
                loc: e.loc,
                read,
                write,
                label: s.label(test, i),
            }
        })
        .collect();
    let mut co = Vec::new();
    for l in 0..test.locations.len() {
        let mut writes: Vec<usize> = (0..s.n)
            .filter(|&i| events[i].loc == Some(l) && events[i].write.is_some())
            .collect();
        if writes.is_empty() {
            continue;
        }
        // co is transitive: a write's place is the number of writes before it.
        writes.sort_by_key(|&w| (0..s.n).filter(|&v| x.co.has(v, w)).count());
        co.push((l, writes));
    }
    Witness {
        events,
        rf: x.rf.pairs(),
        co,
    }
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A Graphviz graph of an execution: events by thread, po, rf, co, fr, and
/// the violation's cycle in bold red.
pub fn dot<S: Bits>(
    test: &Test,
    x: &Execution<'_, S>,
    v: Option<&Violation>,
    title: &str,
) -> String {
    let s = x.s;
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", esc(title));
    let _ = writeln!(
        out,
        "  label=\"{}\"; labelloc=t; node [shape=box, fontname=monospace];",
        esc(title)
    );
    let init: Vec<usize> = (0..s.n).filter(|&i| s.events[i].thread.is_none()).collect();
    let _ = writeln!(
        out,
        "  subgraph cluster_init {{ label=\"init\"; style=dotted;"
    );
    for i in &init {
        let _ = writeln!(out, "    e{i} [label=\"{}\"];", esc(&s.label(test, *i)));
    }
    let _ = writeln!(out, "  }}");
    for t in 0..test.threads.len() {
        let _ = writeln!(out, "  subgraph cluster_p{t} {{ label=\"P{t}\";");
        for i in 0..s.n {
            if s.events[i].thread == Some(t) {
                let _ = writeln!(out, "    e{i} [label=\"{}\"];", esc(&s.label(test, i)));
            }
        }
        let _ = writeln!(out, "  }}");
    }
    // Immediate program order only.
    let po = s.po;
    let po_imm = po - po.seq(&po);
    for (a, b) in po_imm.pairs() {
        let _ = writeln!(out, "  e{a} -> e{b} [label=\"po\", color=gray];");
    }
    for (a, b) in x.rf.pairs() {
        let _ = writeln!(
            out,
            "  e{a} -> e{b} [label=\"rf\", color=red, constraint=false];"
        );
    }
    let co_imm = x.co - x.co.seq(&x.co);
    for (a, b) in co_imm.pairs() {
        let _ = writeln!(
            out,
            "  e{a} -> e{b} [label=\"co\", color=blue, constraint=false];"
        );
    }
    for (a, b) in x.fr.pairs() {
        if members(s.sets.iw).any(|i| i == b) {
            continue;
        }
        let _ = writeln!(
            out,
            "  e{a} -> e{b} [label=\"fr\", color=orange, constraint=false];"
        );
    }
    if let Some(v) = v {
        for k in 0..v.cycle.len() {
            let (a, b) = (v.cycle[k], v.cycle[(k + 1) % v.cycle.len()]);
            let _ = writeln!(
                out,
                "  e{a} -> e{b} [label=\"{} ({})\", color=crimson, penwidth=3, constraint=false];",
                esc(&v.edges[k]),
                esc(v.axiom)
            );
        }
    }
    out.push_str("}\n");
    out
}
