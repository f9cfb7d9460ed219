//! herd7's log format, so that tools written for herd logs read ours:
//!
//! ```text
//! Test MP Allowed
//! States 3
//! 1:r0=0; 1:r1=0;
//! …
//! Ok
//! Witnesses
//! Positive: 1 Negative: 3
//! Condition exists (1:r0=1 /\ 1:r1=0)
//! Observation MP Sometimes 1 3
//! ```

use std::fmt::Write;

use atomlab_litmus::{StateVar, Test, Value};

use crate::check::ModelResult;

/// One final state as herd prints it: `1:r0=0; [x]=1;`.
pub fn state_line(test: &Test, vars: &[StateVar], values: &[Value]) -> String {
    let mut items: Vec<String> = vars
        .iter()
        .zip(values)
        .map(|(v, x)| format!("{}={};", test.var_name(v), test.value_name(*x)))
        .collect();
    items.sort();
    items.join(" ")
}

/// herd7's block for one test under one model.
pub fn log(test: &Test, r: &ModelResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Test {} {}", test.name, test.condition.quantifier.kind());
    let _ = writeln!(s, "States {}", r.states.len());
    let mut lines: Vec<String> = r
        .states
        .iter()
        .map(|(v, _)| state_line(test, &r.vars, v))
        .collect();
    lines.sort();
    for l in lines {
        let _ = writeln!(s, "{l}");
    }
    let verdict = if r.racy {
        "Undef"
    } else if r.ok {
        "Ok"
    } else {
        "No"
    };
    let _ = writeln!(s, "{verdict}");
    let _ = writeln!(s, "Witnesses");
    let _ = writeln!(s, "Positive: {} Negative: {}", r.positive, r.negative);
    if r.racy {
        let _ = writeln!(s, "Flag data-race");
    }
    for f in &r.flags {
        let _ = writeln!(s, "Flag {f}");
    }
    let _ = writeln!(s, "Condition {}", test.condition_text());
    let _ = writeln!(
        s,
        "Observation {} {} {} {}",
        test.name,
        r.observation.word(),
        r.positive,
        r.negative
    );
    s
}
