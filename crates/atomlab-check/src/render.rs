//! A check batch for people, from the live results: herd7's log format
//! and the explanations of forbidden outcomes, written to any `Write`.
//! The side-by-side table (tests × models) is drawn from records alone by
//! atomlab-report's check view, over the batch's [`crate::Batch::layout`].

use std::io::{self, Write};

use atomlab_litmus::Test;
use atomlab_model::{explain, herd, ModelOutcome};

use crate::Checked;

/// For each judged test, what `--explain` prints: the witness of the
/// condition and each forbidden outcome with its axiom and cycle.
pub fn write_explanations(out: &mut impl Write, checked: &[Checked]) -> io::Result<()> {
    for c in checked {
        explanations(out, &c.test, &c.outcomes)?;
    }
    Ok(())
}

fn explanations(out: &mut impl Write, test: &Test, res: &[ModelOutcome]) -> io::Result<()> {
    for r in res {
        let ModelOutcome::Done(d) = r else { continue };
        if let Some(w) = &d.witness {
            writeln!(
                out,
                "{} [{}]: the condition's proposition holds in an allowed execution: {w}",
                test.name, d.model
            )?;
        }
        // The explore engine prunes a forbidden partial execution before it
        // is complete, so it cannot say that nothing is forbidden, nor list
        // every forbidden outcome: it says so instead of guessing.
        let partial = "(the explore engine prunes forbidden executions before they are complete; --engine enumerate explains every forbidden outcome)";
        if d.forbidden.is_empty() {
            if d.explored {
                writeln!(
                    out,
                    "{} [{}]: no forbidden outcome among the executions explored {partial}",
                    test.name, d.model
                )?;
            } else if d.positive == 0 {
                // Every model here implies coherence (SC per location) and
                // RMW atomicity, so the engine never builds an execution
                // that breaks them: a state only such an execution gives is
                // absent from the candidates, not forbidden by an axiom.
                writeln!(
                    out,
                    "{} [{}]: no execution atomlab builds satisfies the condition, and none was forbidden by an axiom of the model: the condition's states need an execution that breaks coherence (SC per location: acyclic po-loc | rf | co | fr) or RMW atomicity, which every model requires and atomlab rules out while building executions, or values no thread writes",
                    test.name, d.model
                )?;
            } else {
                writeln!(
                    out,
                    "{} [{}]: no outcome of a candidate execution is forbidden by an axiom of the model (executions that break coherence or RMW atomicity are never built)",
                    test.name, d.model
                )?;
            }
            continue;
        }
        if d.explored {
            writeln!(
                out,
                "{} [{}]: forbidden outcomes among the executions explored {partial}",
                test.name, d.model
            )?;
        }
        writeln!(
            out,
            "{} [{}]: {} forbidden outcome(s)",
            test.name,
            d.model,
            d.forbidden.len()
        )?;
        for f in &d.forbidden {
            let state = herd::state_line(test, &d.vars, &f.state);
            writeln!(out, "  {state}  forbidden by {}:", f.violation.axiom)?;
            writeln!(out, "    {}", explain::cycle_text(&f.violation, &f.labels))?;
        }
    }
    Ok(())
}

/// The batch in herd7's log format, a block per test and model, each after
/// a `% Model NAME (atomlab)` line; with `explain`, each block followed by
/// its explanations.
pub fn write_herd(out: &mut impl Write, checked: &[Checked], explain: bool) -> io::Result<()> {
    for Checked { test, outcomes, .. } in checked {
        for r in outcomes {
            // herd7 logs have no model line; log readers (mcompare7,
            // litmus-agree) pass over lines starting with `%`, as in
            // litmus7's `% Results for` banners.
            match r {
                ModelOutcome::Done(d) => {
                    writeln!(out, "% Model {} (atomlab)", d.model)?;
                    write!(out, "{}", herd::log(test, d))?;
                    if explain {
                        explanations(out, test, std::slice::from_ref(r))?;
                    }
                    writeln!(out)?;
                }
                ModelOutcome::Timeout { model } => {
                    writeln!(
                        out,
                        "% Model {model} (atomlab)\nTest {} {}\nTIMEOUT [{model}]\n",
                        test.name,
                        test.condition.quantifier.kind()
                    )?;
                }
                ModelOutcome::NotApplicable { .. } => {}
                ModelOutcome::Failed { .. } => {}
            }
        }
    }
    Ok(())
}
