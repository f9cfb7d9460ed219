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
    StateLines::new(test, vars).line(values)
}

/// herd's lines for the final states of one test: the variables' names and
/// their order are worked out once, then each state is one string. herd
/// sorts the `name=value;` items; no name is another's prefix followed by
/// `=`, so sorting by `name=` gives the same order whatever the values.
pub struct StateLines<'t> {
    test: &'t Test,
    /// Index into the values, and the item's `name=` prefix, in herd's order.
    order: Vec<(usize, String)>,
}

impl<'t> StateLines<'t> {
    /// The lines of `test` over the variables `vars`.
    pub fn new(test: &'t Test, vars: &[StateVar]) -> StateLines<'t> {
        let mut order: Vec<(usize, String)> = vars
            .iter()
            .enumerate()
            .map(|(i, v)| (i, format!("{}=", test.var_name(v))))
            .collect();
        order.sort_by(|a, b| a.1.cmp(&b.1));
        StateLines { test, order }
    }

    /// One state's line.
    pub fn line(&self, values: &[Value]) -> String {
        let mut s = String::with_capacity(self.order.len() * 8);
        for (k, (i, name)) in self.order.iter().enumerate() {
            if k > 0 {
                s.push(' ');
            }
            s.push_str(name);
            match values.get(*i) {
                Some(Value::Int(n)) => {
                    let _ = write!(s, "{n}");
                }
                Some(v) => s.push_str(&self.test.value_name(*v)),
                None => {}
            }
            s.push(';');
        }
        s
    }
}

/// herd7's block for one test under one model.
pub fn log(test: &Test, r: &ModelResult) -> String {
    // Pushed piece by piece rather than through `writeln!`: the formatting
    // machinery was most of a small test's log (thousands in a batch).
    use atomlab_litmus::push_decimal;
    let count = |s: &mut String, n: usize| push_decimal(s, i64::try_from(n).unwrap_or(i64::MAX));
    let mut s = String::with_capacity(256);
    s.push_str("Test ");
    s.push_str(&test.name);
    s.push(' ');
    s.push_str(test.condition.quantifier.kind());
    s.push_str("\nStates ");
    count(&mut s, r.states.len());
    s.push('\n');
    let state_lines = StateLines::new(test, &r.vars);
    let mut lines: Vec<String> = r.states.iter().map(|(v, _)| state_lines.line(v)).collect();
    lines.sort();
    for l in lines {
        s.push_str(&l);
        s.push('\n');
    }
    let verdict = if r.racy {
        "Undef"
    } else if r.ok {
        "Ok"
    } else {
        "No"
    };
    s.push_str(verdict);
    s.push_str("\nWitnesses\nPositive: ");
    count(&mut s, r.positive);
    s.push_str(" Negative: ");
    count(&mut s, r.negative);
    s.push('\n');
    if r.racy {
        s.push_str("Flag data-race\n");
    }
    for f in &r.flags {
        s.push_str("Flag ");
        s.push_str(f);
        s.push('\n');
    }
    s.push_str("Condition ");
    s.push_str(&test.condition_text());
    s.push_str("\nObservation ");
    s.push_str(&test.name);
    s.push(' ');
    s.push_str(r.observation.word());
    s.push(' ');
    count(&mut s, r.positive);
    s.push(' ');
    count(&mut s, r.negative);
    s.push('\n');
    s
}
