//! Judging a finished run of one variant: the verdict and its reason (with
//! why a broken variant may go uncaught on this CPU), and the record
//! written to `--json`. Apart from [`crate::outcome`] so that the outcome,
//! which a [`crate::plan::Scenario`] returns, does not depend on the plan.

use atomlab_core::{Metric, Record, Source, Unit, Verdict};

use crate::detect::Detector;
use crate::outcome::VariantRun;
use crate::plan::{is_broken, Plan};

impl VariantRun {
    /// Judges a finished run of `variant`.
    pub fn judge(
        plan: &Plan,
        variant: &'static str,
        ops: u64,
        seconds: f64,
        det: &Detector,
        notes: Vec<String>,
    ) -> VariantRun {
        let violations = det.counts();
        let cpu = det.cpu_seconds();
        let parallelism = (cpu > 0.0 && seconds > 0.0).then(|| cpu / seconds);
        let possible = plan.threads.min(plan.cpus.len().max(1)) as f64;
        let mut notes = notes;
        if let Some(p) = parallelism {
            notes.push(format!(
                "parallelism {p:.2} of {possible} possible (worker CPU time over wall time; waiters that yield do not count)"
            ));
        }
        let starved = parallelism.is_some_and(|p| possible >= 2.0 && p < 0.75 * possible);
        let total: u64 = violations.iter().map(|(_, n)| n).sum();
        let correct = !is_broken(variant);
        let unit = plan.scenario.ops_unit();
        let timed_out = det.stopping();
        let (verdict, reason) = match (correct, total) {
            (_, 0) if timed_out => (
                Verdict::Timeout,
                format!(
                    "stopped at the time limit ({} s) after {ops} of {} {unit}, with no violation in those: undecided (raise --timeout, or lower --ops or --threads)",
                    plan.time_limit, plan.ops
                ),
            ),
            (true, 0) if starved => (
                Verdict::Pass,
                format!(
                    "no violation in {ops} {unit}; the threads ran together only part of the time (parallelism {:.2} of {possible}: a busy machine, or waiters that yield), so this run is weaker evidence than its count suggests",
                    parallelism.unwrap_or(0.0)
                ),
            ),
            (true, 0) => (Verdict::Pass, format!("no violation in {ops} {unit}")),
            (true, n) => (
                Verdict::Fail,
                format!("{n} violations of a variant meant to be correct"),
            ),
            (false, 0) if starved => (
                Verdict::NotObserved,
                format!(
                    "{}; and the threads ran together only part of the time (parallelism {:.2} of {possible}: a busy machine, or waiters that yield), so this run is weak evidence",
                    not_observed_reason(variant, ops, unit),
                    parallelism.unwrap_or(0.0)
                ),
            ),
            (false, 0) => (
                Verdict::NotObserved,
                not_observed_reason(variant, ops, unit),
            ),
            (false, n) => (
                Verdict::Fail,
                format!("caught: {n} violations (a known-broken variant; the detector works)"),
            ),
        };
        VariantRun {
            variant,
            correct,
            ops,
            seconds,
            violations,
            first: det.first(),
            verdict,
            reason,
            notes,
            replay: plan.replay_line(variant),
            parallelism,
        }
    }

    /// The record written to `--json`.
    pub fn record(&self, plan: &Plan) -> Record {
        let mut r = Record::new("stress", plan.scenario.name(), self.variant);
        r.param("expected", if self.correct { "correct" } else { "broken" })
            .param("threads", plan.threads)
            .param("ops", plan.ops)
            .param("ops_unit", plan.scenario.ops_unit())
            .param("seed", plan.seed)
            .param("jitter", plan.jitter)
            .param("pin", plan.pin.name())
            .param("replay", self.replay.clone());
        if plan.scenario.takes_tasks() {
            r.param("tasks", plan.tasks);
        }
        let count = |name: std::borrow::Cow<'static, str>, v: u64| {
            Metric::new(name, Unit::Count, Source::Derived, vec![v as f64])
        };
        r.metrics.push(count("operations".into(), self.ops));
        r.metrics.push(Metric::new(
            "seconds",
            Unit::Seconds,
            Source::ClockGettime,
            vec![self.seconds],
        ));
        r.metrics
            .push(count("violations".into(), self.total_violations()));
        if let Some(p) = self.parallelism {
            r.metrics.push(Metric::new(
                "parallelism",
                Unit::Ratio,
                Source::Rusage,
                vec![p],
            ));
        }
        for (k, n) in &self.violations {
            r.metrics
                .push(count(format!("violations:{}", k.name()).into(), *n));
        }
        if self.verdict == Verdict::NotObserved {
            // Why, in one word a summary can count by: the CPU's memory
            // model hides the bug, or the race was not hit this time.
            r.param(
                "not_observed",
                if hidden_by_this_cpu(self.variant) {
                    "hidden_by_cpu"
                } else {
                    "not_hit"
                },
            );
        }
        r.notes.push(format!("verdict: {}", self.reason));
        if let Some(f) = &self.first {
            r.metrics.push(Metric::new(
                "time_to_first_violation",
                Unit::Seconds,
                Source::ClockGettime,
                vec![f.after.as_secs_f64()],
            ));
            r.notes
                .push(format!("first violation ({}): {}", f.kind.name(), f.detail));
        }
        r.verdict = Some(self.verdict);
        r.notes.extend(self.notes.iter().cloned());
        // Last: a plugin's audit note follows the verdict's notes.
        plan.scenario.tag(self.variant, &mut r);
        r
    }
}

/// Whether a broken `variant` cannot fail on this CPU at all: its memory
/// model hides the bug (x86-TSO for the ordering bugs), or no hardware
/// shows it (a C11-only outcome). Otherwise its race was merely not hit.
pub(crate) fn hidden_by_this_cpu(variant: &str) -> bool {
    let x86 = cfg!(target_arch = "x86_64") || cfg!(target_arch = "x86");
    match variant {
        "broken-relaxed-unlock"
        | "broken-relaxed-acquire"
        | "broken-relaxed-publish"
        | "broken-reader-nofence"
        | "broken-relaxed-dec" => x86,
        "broken-acquire-fence-dequeue" => true,
        _ => false,
    }
}

/// Why a broken variant may go uncaught here.
fn not_observed_reason(variant: &str, ops: u64, unit: &str) -> String {
    let x86 = cfg!(target_arch = "x86_64") || cfg!(target_arch = "x86");
    let elsewhere = "run on Arm or RISC-V, or see the loom proof (crates/atomlab-prims/tests/loom_stress.rs) and `atomlab check crates/atomlab-model/tests/litmus/c/MP+rlx.litmus` (message passing without release/acquire)";
    let why = match variant {
        "broken-relaxed-unlock" if x86 => {
            format!("x86-TSO makes every store a release, so a relaxed unlock still publishes the critical section; {elsewhere}")
        }
        "broken-relaxed-acquire" if x86 => format!(
            "x86's `xchg` is a full barrier and x86-TSO never reorders loads with loads, so a relaxed swap still acquires; {elsewhere}"
        ),
        "broken-relaxed-publish" if x86 => format!(
            "x86-TSO keeps stores in order and loads in order, so the index is never seen before the item; {elsewhere}"
        ),
        "broken-reader-nofence" if x86 => format!(
            "x86-TSO never reorders loads with loads, so the missing acquire fence changes nothing here; {elsewhere}"
        ),
        "broken-relaxed-dec" if x86 => format!(
            "x86's `lock xadd` is a full barrier, so the missing acquire still happens; {elsewhere}"
        ),
        "broken-acquire-fence-dequeue" => "C11 allows this load-buffering outcome, but x86, Arm and RISC-V forbid it (004; the IMM paper), so no hardware run can show it; only the compiler could. The loom proof shows it is a data race in the language; see `atomlab check --explain crates/atomlab-model/tests/litmus/c/LB+fence.acqs.litmus`".to_string(),
        "broken-relaxed-unlock" | "broken-relaxed-acquire" | "broken-relaxed-publish"
        | "broken-reader-nofence" | "broken-relaxed-dec" => {
            "the reordering is allowed here but was not seen: raise --ops, add --jitter or threads; the loom proof shows the bug".to_string()
        }
        "broken-peterson-nofence" | "broken-dekker-nofence" => {
            "store buffering needs both threads to enter the protocol at the same moment on different CPUs, and two threads that take turns rarely do: add --jitter, keep --pin spread on 2+ CPUs, raise --ops; `atomlab check crates/atomlab-model/tests/litmus/c/SB+rel-acq.litmus` shows the reordering".to_string()
        }
        _ => "the race window is a few instructions wide and was not hit: raise --ops, add --jitter or threads".to_string(),
    };
    format!("not observed in {ops} {unit}: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::Kind;
    use crate::outcome::exit_status;
    use crate::plan::{Plan, Request};
    use atomlab_core::ExitStatus;

    fn outcome(variant: &'static str, det: &Detector) -> VariantRun {
        let plan = Plan::from_request(
            &Request {
                scenario: "mutex".into(),
                variants: vec!["all".into()],
                seed: Some(1),
                ..Default::default()
            },
            &[0, 1],
        )
        .unwrap();
        VariantRun::judge(&plan, variant, 10, 0.5, det, vec![])
    }

    #[test]
    fn verdicts_and_exit_codes() {
        let clean = Detector::new();
        let dirty = Detector::new();
        dirty.report(Kind::LostUpdate, 3, || "three lost".into());
        let stopped = Detector::new();
        stopped.request_stop();

        let pass = outcome("tas", &clean);
        let fail = outcome("tas", &dirty);
        let caught = outcome("broken-tas-not-atomic", &dirty);
        let missed = outcome("broken-relaxed-unlock", &clean);
        let undecided = outcome("tas", &stopped);
        assert_eq!(pass.verdict, Verdict::Pass);
        assert_eq!(fail.verdict, Verdict::Fail);
        assert_eq!(caught.verdict, Verdict::Fail);
        assert_eq!(missed.verdict, Verdict::NotObserved);
        assert!(missed
            .reason
            .starts_with("not observed in 10 critical sections"));
        assert_eq!(undecided.verdict, Verdict::Timeout);
        assert_eq!(fail.first.as_ref().unwrap().detail, "three lost");

        let code = |os: &[&VariantRun], expect_fail| {
            exit_status(
                &os.iter().map(|o| (*o).clone()).collect::<Vec<_>>(),
                expect_fail,
            )
        };
        assert_eq!(code(&[&pass, &caught, &missed], false), ExitStatus::Ok);
        assert_eq!(code(&[&pass, &fail], false), ExitStatus::VerdictFailed);
        assert_eq!(code(&[&undecided], false), ExitStatus::VerdictFailed);
        assert_eq!(code(&[&caught], true), ExitStatus::Ok);
        assert_eq!(code(&[&caught, &missed], true), ExitStatus::VerdictFailed);
        assert_eq!(code(&[&pass], true), ExitStatus::VerdictFailed);
    }
}
