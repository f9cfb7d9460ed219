//! A judged batch as atomlab records: one per test and model that judged
//! it (or ran out of time, or passed the checker's bound), capability
//! `check`, scenario = the test, variant = the model; the observation as
//! a parameter, the counts as metrics, the states as detail.

use std::time::Instant;

use atomlab_core::{Metric, Record, Source, Unit, Verdict};
use atomlab_litmus::Test;
use atomlab_model::{explain, herd, CheckError, CheckOptions, ModelOutcome, MODEL_NAMES};
use serde_json::Value;

use crate::Checked;

/// Whether `error` is the checker's fixed bound (a `BOUND` record, not
/// bad input).
pub(crate) fn bound(error: &CheckError) -> bool {
    matches!(error, CheckError::TooBig(_))
}

/// atomlab-model's built-in tests (the load-buffering test of case 004
/// and the classic shapes) judged under every built-in model, as records
/// with their states (the check part of `atomlab suite`).
pub fn builtin_suite() -> Vec<Record> {
    let models: Vec<&'static str> = MODEL_NAMES.to_vec();
    let opts = CheckOptions::default();
    let checked: Vec<Checked> = atomlab_model::suite_tests::suite()
        .into_iter()
        .map(|test| {
            let start = Instant::now();
            let outcomes = atomlab_model::check_test(&test, &models, &opts);
            Checked {
                test,
                outcomes,
                elapsed: start.elapsed(),
            }
        })
        .collect();
    let models: Vec<String> = models.iter().map(|m| m.to_string()).collect();
    records(&checked, &models, true)
}

/// One record per test and model that judged it (or ran out of time or
/// of bound): capability `check`, scenario = the test, variant = the
/// model; the observation as a parameter, the counts as metrics.
/// `models`: the batch's models, every record's `models` parameter (so
/// that a saved batch's table has the columns of models that applied to
/// none of its tests).
pub(crate) fn records(checked: &[Checked], models: &[String], detail: bool) -> Vec<Record> {
    let models = Value::from(models.to_vec());
    let mut out = Vec::new();
    for Checked {
        test,
        outcomes: res,
        elapsed,
    } in checked
    {
        // Once per test, not per model: every record of the test carries it.
        let condition = test.condition_text();
        for r in res {
            let model = match r {
                ModelOutcome::Done(d) => d.model,
                ModelOutcome::Timeout { model } => model,
                ModelOutcome::Failed {
                    model,
                    error: CheckError::TooBig(_),
                } => model,
                _ => continue,
            };
            let mut rec = Record::new("check", &test.name, model);
            rec.param("file", test.file.clone())
                .param("arch", test.arch.name())
                .param("condition", condition.clone())
                .param("models", models.clone());
            let count = |name: &'static str, n: f64| {
                Metric::new(name, Unit::Count, Source::Derived, vec![n])
            };
            // Its six metrics, without a vector grown to eight (records
            // are kept until the batch is printed).
            rec.metrics.reserve_exact(6);
            rec.metrics.push(Metric::new(
                "seconds",
                Unit::Seconds,
                Source::ClockGettime,
                vec![elapsed.as_secs_f64()],
            ));
            match r {
                ModelOutcome::Done(d) => {
                    rec.param("observation", d.observation.word())
                        .param("mapping", d.mapping)
                        // How a test that reads two ways was read (a
                        // plain-only C test under lkmm).
                        .param("reading", d.reading)
                        .param("data_race", d.racy)
                        // The model's other `flag`s (LKMM's lock and RCU
                        // validity checks, a cat file's own), as herd7
                        // prints `Flag NAME`.
                        .param("flags", d.flags.clone());
                    // The final states with a value out of thin air (an
                    // `S8` symbol, as herd7 prints it), when there are any.
                    let thin: Vec<String> = d
                        .states
                        .iter()
                        .filter(|(s, _)| {
                            s.iter().any(|v| matches!(v, atomlab_litmus::Value::Sym(_)))
                        })
                        .map(|(s, _)| herd::state_line(test, &d.vars, s))
                        .collect();
                    if !thin.is_empty() {
                        rec.param("thin_air_states", thin);
                    }
                    rec.metrics
                        .push(count("allowed_states", d.states.len() as f64));
                    rec.metrics.push(count("positive", d.positive as f64));
                    rec.metrics.push(count("negative", d.negative as f64));
                    rec.metrics.push(count("candidates", d.candidates as f64));
                    rec.metrics
                        .push(count("forbidden_outcomes", d.forbidden.len() as f64));
                    // The allowed and forbidden states, for a reader of
                    // the records (the store, --json) only.
                    if detail {
                        rec.detail = Some(states_detail(test, d));
                    }
                }
                ModelOutcome::Timeout { .. } => {
                    rec.verdict = Some(Verdict::Timeout);
                    rec.notes.push(format!(
                        "gave up after the per-test timeout ({:.1} s); raise it with --timeout S, or --timeout 0 for none",
                        elapsed.as_secs_f64()
                    ));
                }
                ModelOutcome::Failed { error, .. } => {
                    rec.verdict = Some(Verdict::Bound);
                    rec.notes.push(format!(
                        "{error}: a fixed limit of this checker, which no option raises; split the test into smaller ones"
                    ));
                }
                ModelOutcome::NotApplicable { .. } => {}
            }
            out.push(rec);
        }
    }
    out
}

/// A check record's detail: each allowed state (with its data race),
/// each forbidden one (with the axiom and the cycle) and the witness.
fn states_detail(test: &Test, d: &atomlab_model::ModelResult) -> Value {
    let lines = herd::StateLines::new(test, &d.vars);
    // Built as values directly: `json!` would serialize the
    // arrays of values once more into new values.
    object([
        (
            "states",
            Value::Array(
                d.states
                    .iter()
                    .map(|(s, racy)| {
                        object([
                            ("state", Value::String(lines.line(s))),
                            ("data_race", Value::Bool(*racy)),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "forbidden",
            Value::Array(
                d.forbidden
                    .iter()
                    .map(|f| {
                        object([
                            ("state", Value::String(lines.line(&f.state))),
                            ("axiom", Value::from(f.violation.axiom)),
                            (
                                "cycle",
                                Value::String(explain::cycle_text(&f.violation, &f.labels)),
                            ),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "witness",
            d.witness.clone().map_or(Value::Null, Value::String),
        ),
    ])
}

/// A JSON object of `pairs`, in their order.
fn object<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}
