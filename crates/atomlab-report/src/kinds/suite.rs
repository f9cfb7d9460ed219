//! The terminal's view of a suite run: what `atomlab suite` prints and
//! `atomlab show` prints again, from the records alone.

use std::io::{self, Write};

use atomlab_core::{FlagKind, Record, Report, Verdict};

use crate::kinds::check::check_cell;
use crate::table::Table;

/// The suite's detail (`atomlab suite --verbose`): every table of every
/// capability, each from its own records.
pub fn write_detail(out: &mut impl Write, report: &Report) -> io::Result<()> {
    crate::kinds::machine::write_terminal(out, &report.machine)?;
    // bench's tables read every record; give them only bench's.
    let bench_only = Report {
        records: report
            .records
            .iter()
            .filter(|r| r.capability == "bench")
            .cloned()
            .collect(),
        ..report.clone()
    };
    crate::kinds::bench::tables::write_terminal(out, &bench_only)?;
    crate::kinds::stress::write_terminal(out, &report.records)?;
    let checks: Vec<&Record> = report
        .records
        .iter()
        .filter(|r| r.capability == "check")
        .collect();
    crate::kinds::check::write_records_table(out, &checks)?;
    let runs: Vec<Record> = report
        .records
        .iter()
        .filter(|r| r.capability == "run")
        .cloned()
        .collect();
    crate::kinds::run::view::write_records_table(out, &runs)
}

/// The suite's summary (`atomlab suite`, `atomlab show`): one screen, the
/// machine in a line, then a line per capability with its verdict and
/// headline figures; `--verbose` (or `--json`) has the rest.
pub fn write_summary(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let m = &report.machine;
    writeln!(
        out,
        // Two lines: an emulated CPU's name and the notes would pass 120
        // columns on one.
        "machine: {} {}, {} CPUs{}{}\nPMU: {}",
        m.arch,
        m.cpu_model,
        m.cpus,
        if m.virtualised { ", virtualised" } else { "" },
        if m.emulated {
            ", EMULATED (timings meaningless)"
        } else {
            ""
        },
        if m.pmu.available {
            "available"
        } else {
            "unavailable (no core cycles or events)"
        }
    )?;
    let mut t = Table::fitting();
    t.set_header(vec!["capability", "verdict", "headline"]);
    let bench = |scenario: &str| -> Vec<&Record> {
        report
            .records
            .iter()
            .filter(|r| r.capability == "bench" && r.scenario == scenario)
            .collect()
    };
    // A flagged figure is never quoted as if it were clean: its flags
    // follow it.
    let ns = |r: &Record| {
        if r.flagged(FlagKind::Implausible) {
            "implausible".to_string()
        } else {
            let figure = r
                .metric("ns_per_op")
                .and_then(|m| m.median())
                .map(crate::units::nanos)
                .unwrap_or_else(|| "-".into());
            let mut words: Vec<&str> = r.flags.iter().map(|f| f.kind.words()).collect();
            words.dedup();
            if words.is_empty() {
                figure
            } else {
                format!("{figure} ({})", words.join(", "))
            }
        }
    };
    let param = |r: &Record, k: &str| {
        r.parameters
            .get(k)
            .map(|v| v.to_string().trim_matches('"').to_string())
            .unwrap_or_default()
    };
    let flagged = |recs: &[&Record]| -> String {
        let count = |k: FlagKind| recs.iter().filter(|r| r.flagged(k)).count();
        let words: Vec<String> = [
            FlagKind::Implausible,
            FlagKind::RunsExcluded,
            FlagKind::NotContended,
        ]
        .into_iter()
        .filter(|&k| count(k) > 0)
        .map(|k| format!("{} {}", count(k), k.words()))
        .collect();
        let flagged = recs.iter().filter(|r| !r.flags.is_empty()).count();
        if words.is_empty() && flagged == 0 {
            "ok".into()
        } else if flagged == recs.len() {
            // Not "ok": no cell of the row measured what it was asked to.
            format!("all {flagged} cells flagged: {}", words.join(", "))
        } else {
            format!(
                "{flagged} of {} cells flagged: {}",
                recs.len(),
                words.join(", ")
            )
        }
    };
    let counter = bench("counter");
    t.add_row(vec![
        "bench counter".into(),
        flagged(&counter),
        counter
            .iter()
            .filter(|r| r.variant == "fetch_add")
            .map(|r| {
                format!(
                    "fetch_add {} thr {}: {}",
                    param(r, "threads"),
                    param(r, "contention"),
                    ns(r)
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
            + " per op",
    ]);
    let rc = bench("refcount");
    t.add_row(vec![
        "bench refcount (003)".into(),
        flagged(&rc),
        "1 thread: ".to_string()
            + &rc
                .iter()
                .filter(|r| param(r, "threads") == "1" && param(r, "contention") == "private")
                .map(|r| format!("{} {}", r.variant, ns(r)))
                .collect::<Vec<_>>()
                .join(", ")
            + " per op",
    ]);
    let locks = bench("lock");
    let fixed: Vec<&Record> = locks
        .iter()
        .copied()
        .filter(|r| param(r, "mode") == "fixed-work")
        .collect();
    let secs = |r: &Record| r.metric("seconds").and_then(|m| m.median());
    let fastest = fixed
        .iter()
        .filter_map(|r| secs(r).map(|s| (s, r)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    let slowest = fixed
        .iter()
        .filter_map(|r| secs(r).map(|s| (s, r)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    t.add_row(vec![
        "bench lock (002)".into(),
        flagged(&locks),
        match (fastest, slowest) {
            (Some((f, fr)), Some((s, sr))) => format!(
                "1M increments in 20 tasks: fastest {} {}, slowest {} {} ({} locks)",
                fr.variant,
                crate::units::duration(f),
                sr.variant,
                crate::units::duration(s),
                fixed.len()
            ),
            _ => "-".into(),
        },
    ]);
    let fences = bench("fence");
    t.add_row(vec![
        "bench fence".into(),
        flagged(&fences),
        fences
            .iter()
            .filter(|r| {
                matches!(
                    r.variant.as_str(),
                    "none" | "seq_cst" | "mfence" | "dmb_ish"
                )
            })
            .map(|r| format!("{} {}", r.variant, ns(r)))
            .collect::<Vec<_>>()
            .join("; "),
    ]);
    let pp = bench("pingpong");
    let trips: Vec<f64> = pp
        .iter()
        .filter_map(|r| r.metric("ns_per_roundtrip").and_then(|m| m.median()))
        .collect();
    t.add_row(vec![
        "bench pingpong".into(),
        flagged(&pp),
        match (
            trips.iter().copied().reduce(f64::min),
            trips.iter().copied().reduce(f64::max),
        ) {
            (Some(lo), Some(hi)) => {
                format!(
                    "core-to-core round trip {} to {}",
                    crate::units::nanos(lo),
                    crate::units::nanos(hi)
                )
            }
            _ => "-".into(),
        },
    ]);
    let stress: Vec<&Record> = report
        .records
        .iter()
        .filter(|r| r.capability == "stress")
        .collect();
    let count = |v: Verdict| stress.iter().filter(|r| r.verdict == Some(v)).count();
    let correct_failed = stress
        .iter()
        .filter(|r| !r.variant.starts_with("broken") && r.verdict != Some(Verdict::Pass))
        .count();
    t.add_row(vec![
        "stress".into(),
        if correct_failed == 0 { "PASS".into() } else { format!("FAIL ({correct_failed} correct variants)") },
        {
            // Why each broken variant went uncaught, as its record says.
            let not_observed = |why: &str| {
                stress
                    .iter()
                    .filter(|r| r.verdict == Some(Verdict::NotObserved))
                    .filter(|r| param(r, "not_observed") == why)
                    .count()
            };
            let (hidden, not_hit) = (not_observed("hidden_by_cpu"), not_observed("not_hit"));
            let mut why = Vec::new();
            if hidden > 0 {
                why.push(format!("{hidden} hidden by this CPU's memory model"));
            }
            if not_hit > 0 {
                why.push(format!("{not_hit} race not hit in this run"));
            }
            format!(
                "{} variants: {} PASS, {} FAIL (broken, caught), {} NOT OBSERVED (broken{}), {} TIMEOUT",
                stress.len(),
                count(Verdict::Pass),
                count(Verdict::Fail),
                count(Verdict::NotObserved),
                if why.is_empty() {
                    String::new()
                } else {
                    format!(": {}", why.join(", "))
                },
                count(Verdict::Timeout)
            )
        },
    ]);
    let checks: Vec<&Record> = report
        .records
        .iter()
        .filter(|r| r.capability == "check")
        .collect();
    let tests: std::collections::BTreeSet<&str> =
        checks.iter().map(|r| r.scenario.as_str()).collect();
    let lb: Vec<String> = checks
        .iter()
        .filter(|r| r.scenario == "LB+fence.acqs")
        .map(|r| format!("{} {}", r.variant, check_cell(r)))
        .collect();
    t.add_row(vec![
        "check".into(),
        if checks.iter().any(|r| r.verdict.is_some()) {
            "undecided tests".into()
        } else {
            "ok".into()
        },
        format!(
            "{} built-in tests under every model; 004's LB+fence.acqs: {}",
            tests.len(),
            lb.join(", ")
        ),
    ]);
    let (verdict, headline) = run_row(&report.records);
    t.add_row(vec!["run (this CPU)".into(), verdict, headline]);
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "detail: atomlab suite --verbose (every table), or --json"
    )?;
    Ok(())
}

/// The summary's `run` row, from the `run` records alone: its verdict, and
/// a line per test (the hardware's observation and witnesses beside the
/// verdict of the model of this CPU, or "not run"), then a line per reason
/// tests were not run.
fn run_row(records: &[Record]) -> (String, String) {
    let runs: Vec<&Record> = records.iter().filter(|r| r.capability == "run").collect();
    let mut lines = Vec::new();
    let mut refused: Vec<(String, Vec<&str>)> = Vec::new();
    for r in &runs {
        let param = |k: &str| r.parameters.get(k).and_then(|v| v.as_str());
        if let Some(reason) = param("not_run") {
            match refused.iter_mut().find(|(why, _)| why == reason) {
                Some((_, names)) => names.push(&r.scenario),
                None => refused.push((reason.to_string(), vec![r.scenario.as_str()])),
            }
            lines.push(format!("{}: not run", r.scenario));
            continue;
        }
        let m = |k: &str| r.metric(k).and_then(|m| m.median()).unwrap_or(0.0);
        // The first model is the one of this CPU (x86tso, through the
        // C11 mapping for C tests): the one the hardware must agree with.
        let model = r
            .detail
            .as_ref()
            .and_then(|d| d.get("models"))
            .and_then(|m| m.as_array())
            .and_then(|ms| ms.first())
            .map(|m| {
                format!(
                    "{} {}",
                    m.get("model").and_then(|x| x.as_str()).unwrap_or("?"),
                    m.get("observation").and_then(|x| x.as_str()).unwrap_or("?")
                )
            })
            .unwrap_or_else(|| "no model".into());
        let mut line = format!(
            "{}: {} {}/{} ({model})",
            r.scenario,
            param("observation").unwrap_or("?"),
            m("positive"),
            m("instances"),
        );
        match r.verdict {
            Some(Verdict::Fail) => line.push_str(" FORBIDDEN OUTCOME OBSERVED"),
            Some(Verdict::Timeout) => line.push_str(" TIMEOUT"),
            _ => {}
        }
        lines.push(line);
    }
    // A reason once (on a host without a code generator every test shares
    // it), with the tests it stopped when there are several reasons.
    for (reason, names) in &refused {
        lines.push(if refused.len() > 1 {
            format!("not run: {reason} ({})", names.join(", "))
        } else {
            format!("not run: {reason}")
        });
    }
    let count = |v: Verdict| runs.iter().filter(|r| r.verdict == Some(v)).count();
    let verdict = if runs.is_empty() {
        "-".to_string()
    } else if count(Verdict::Fail) > 0 {
        format!("FAIL ({} FORBIDDEN OUTCOME OBSERVED)", count(Verdict::Fail))
    } else if runs.iter().all(|r| r.verdict.is_none()) {
        "not run".into()
    } else if count(Verdict::Timeout) > 0 {
        format!("ok; {} TIMEOUT", count(Verdict::Timeout))
    } else {
        "ok".into()
    };
    if lines.is_empty() {
        lines.push("no run records".into());
    }
    (verdict, lines.join("\n"))
}

/// suite's entry in [`super::KINDS`]: no page section of its own (its
/// records are the other kinds', each in its section).
pub(crate) const KIND: super::Kind = super::Kind {
    name: "suite",
    terminal: |mut out, report| write_summary(&mut out, report),
    section: None,
};

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::Machine;

    fn refused(name: &str, reason: &str) -> Record {
        let mut r = Record::new("run", name, "aarch64");
        r.param("not_run", reason);
        r
    }

    fn ran(name: &str, observation: &str, verdict: Verdict) -> Record {
        let mut r = Record::new("run", name, "x86_64");
        r.param("observation", observation);
        r.verdict = Some(verdict);
        r
    }

    /// A host without a code generator: every test "not run", the reason
    /// once, no failure.
    #[test]
    fn refused_tests_are_not_run_not_failed() {
        let recs = vec![refused("SB", "no backend"), refused("MP", "no backend")];
        let (verdict, lines) = run_row(&recs);
        assert_eq!(verdict, "not run");
        assert_eq!(lines, "SB: not run\nMP: not run\nnot run: no backend");
    }

    #[test]
    fn a_forbidden_outcome_fails_the_row() {
        let recs = vec![
            ran("SB", "Sometimes", Verdict::Pass),
            ran("MP", "Sometimes", Verdict::Fail),
            refused("IRIW", "too many registers"),
        ];
        let (verdict, lines) = run_row(&recs);
        assert!(verdict.starts_with("FAIL (1 FORBIDDEN"), "{verdict}");
        assert!(
            lines.contains("MP: Sometimes 0/0 (no model) FORBIDDEN OUTCOME OBSERVED"),
            "{lines}"
        );
        assert!(
            lines.contains("IRIW: not run\nnot run: too many registers"),
            "{lines}"
        );
    }

    fn machine() -> Machine {
        let mut m = Machine::detect();
        m.arch = "x86_64".into();
        m.cpu_model = "Test CPU".into();
        m.cpus = 4;
        m.virtualised = false;
        m.emulated = false;
        m.pmu.available = false;
        m
    }

    /// The detail: the machine, then each capability's own table from its
    /// own records, in the tour's order (bench has none here).
    #[test]
    fn the_detail_has_every_capabilitys_table_in_order() {
        let mut stress = Record::new("stress", "mutex", "correct");
        stress.verdict = Some(Verdict::Pass);
        let mut check = Record::new("check", "SB", "sc");
        check
            .param("observation", "Never")
            .param("file", "SB.litmus");
        let recs = vec![stress, check, ran("SB", "Sometimes", Verdict::Pass)];
        let mut out = Vec::new();
        write_detail(&mut out, &Report::new("suite", machine(), recs)).unwrap();
        let out = String::from_utf8(out).unwrap();
        let at = |header: &str| {
            out.find(header)
                .unwrap_or_else(|| panic!("no {header:?} in\n{out}"))
        };
        let order = [
            at("| machine "),
            at("| scenario | variant | expected |"),
            at("| test | condition | sc "),
            at("| test | condition | hardware "),
        ];
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}\n{out}");
        assert!(out.contains("| mutex    | correct |"), "{out}");
        assert!(out.contains("| Sometimes 0 0 |"), "{out}");
    }

    /// The summary from records: the machine line, a stress row that
    /// counts a failed correct variant, and the run row.
    #[test]
    fn the_summary_counts_a_failed_correct_variant() {
        let m = machine();
        let mut correct = Record::new("stress", "mutex", "correct");
        correct.verdict = Some(Verdict::Fail);
        let mut broken = Record::new("stress", "mutex", "broken-tas-not-atomic");
        broken.verdict = Some(Verdict::Fail);
        let recs = vec![correct, broken, ran("SB", "Never", Verdict::Pass)];
        let mut out = Vec::new();
        write_summary(&mut out, &Report::new("suite", m, recs)).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.starts_with(
                "machine: x86_64 Test CPU, 4 CPUs\nPMU: unavailable (no core cycles or events)\n"
            ),
            "{out}"
        );
        let stress = out.lines().find(|l| l.starts_with("| stress")).unwrap();
        assert!(stress.contains("FAIL (1 correct variants)"), "{stress}");
        assert!(stress.contains("2 variants: 0 PASS, 2 FAIL"), "{stress}");
        let run = out
            .lines()
            .find(|l| l.starts_with("| run (this CPU)"))
            .unwrap();
        assert!(run.contains("| ok "), "{run}");
        assert!(out.ends_with("detail: atomlab suite --verbose (every table), or --json\n"));
    }

    /// The summary said "NOT OBSERVED (broken, needs weaker hardware)" of
    /// a variant whose race was simply not hit, "ok; cells: 16 not
    /// contended as asked" of a row whose 16 cells were all flagged, and
    /// quoted a flagged figure as if it were clean.
    #[test]
    fn the_summary_gives_each_reason_and_never_calls_a_flagged_row_ok() {
        let mut hidden = Record::new("stress", "mutex", "broken-relaxed-unlock");
        hidden.verdict = Some(Verdict::NotObserved);
        hidden.param("not_observed", "hidden_by_cpu");
        let mut missed = Record::new("stress", "mutex", "broken-tas-not-atomic");
        missed.verdict = Some(Verdict::NotObserved);
        missed.param("not_observed", "not_hit");
        let cell = |threads: usize, flagged: bool| {
            let mut r = Record::new("bench", "counter", "fetch_add");
            r.param("threads", threads).param("contention", "shared");
            r.metrics.push(atomlab_core::Metric::new(
                "ns_per_op",
                atomlab_core::Unit::NanosPerOp,
                atomlab_core::Source::Derived,
                vec![5.66],
            ));
            if flagged {
                r.flag(FlagKind::NotContended, None, "37% of a CPU");
            }
            r
        };
        let recs = vec![hidden, missed, cell(1, true), cell(2, true)];
        let mut out = Vec::new();
        write_summary(&mut out, &Report::new("suite", machine(), recs)).unwrap();
        // Wrapped cells read as one text: no bars, single spaces.
        let out = String::from_utf8(out)
            .unwrap()
            .replace('|', " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            out.contains("2 NOT OBSERVED (broken: 1 hidden by this CPU's memory model, 1 race not hit in this run)"),
            "{out}"
        );
        assert!(
            out.contains("bench counter all 2 cells flagged: 2 not"),
            "{out}"
        );
        assert!(!out.contains("bench counter ok"), "{out}");
        assert!(out.contains("5.66 ns (not contended as asked)"), "{out}");
    }
}
