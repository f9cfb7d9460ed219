//! The terminal's view of `atomlab verify` (and `atomlab show` of a saved
//! verify run), drawn from its records: the file and the models judged, a
//! row per variant, model and CPU (with and without LSE, for code that
//! calls libgcc's outline atomics), then why each one that did not pass
//! did not, with its counterexample.

use std::io::{self, Write};

use atomlab_core::{Record, Report};

use crate::table::{self, Table};
use crate::units;

fn param<'a>(r: &'a Record, k: &str) -> Option<&'a str> {
    r.parameters.get(k).and_then(|v| v.as_str())
}

/// A record's verdict in words: PASS, FAIL, BOUND, or REFUSED (a record
/// without a verdict that says why it was refused).
fn verdict(r: &Record) -> &'static str {
    match (r.verdict, param(r, "refused")) {
        (Some(v), _) => v.words(),
        (None, Some(_)) => "REFUSED",
        (None, None) => "-",
    }
}

/// A parameter of `r` as written in the record (`?` when absent).
fn number(r: &Record, k: &str) -> String {
    r.parameters
        .get(k)
        .map_or("?".to_string(), |v| v.to_string())
}

/// What the client of `r`'s kind (its scenario) did, in words
/// (atomlab-verify's client.rs builds them).
fn client(r: &Record) -> Option<String> {
    let (t, k) = (number(r, "threads"), number(r, "rounds"));
    let rounds: Option<u64> = r.parameters.get("rounds").and_then(|v| v.as_u64());
    Some(match r.scenario.as_str() {
        "lock" => format!("{t} threads x {k} critical section(s), each a plain read-increment-write of shared data; data must end at threads x sections (mutual exclusion, and each holder sees the last one's write)"),
        "spsc" => {
            // Records from before --items pushed 3.
            let n = r.parameters.get("items").and_then(|v| v.as_u64()).unwrap_or(3);
            let items = (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
            let wraps = if n > 2 { ", so the ring wraps" } else { "" };
            format!("a producer pushes {items} (retrying while full) into a queue made with new_(2){wraps}; a consumer pops {n} item(s) (retrying while empty) and must see {items} in order (none lost, duplicated, reordered or torn)")
        }
        "refcount" => format!("{t} holders, one reference each (thread 0 takes the others' and hands them over), each uses the object, takes and drops {} more reference(s) (get, put), then drops its own; exactly one put says last, never early, and the last sees every holder's use", rounds.map_or("?".into(), |n| n.saturating_sub(1).to_string())),
        "op" => format!("{t} threads x {k} op(s), then read() after joining them must return threads x ops (without read(): every execution runs to the end)"),
        _ => return None,
    })
}

/// The view of `report`'s verify records.
pub(crate) fn write_terminal(out: &mut impl Write, report: &Report) -> io::Result<()> {
    table::fitted(out, |out| write_unfitted(out, report))
}

fn write_unfitted(out: &mut Vec<u8>, report: &Report) -> io::Result<()> {
    let recs: Vec<&Record> = report
        .records
        .iter()
        .filter(|r| r.capability == "verify")
        .collect();
    for n in &report.notes {
        writeln!(out, "{n}")?;
    }
    let mut t = Table::fitting();
    t.set_header(vec![
        "variant",
        "model",
        "cpu",
        "verdict",
        "executions",
        "time",
    ]);
    for r in &recs {
        let m = |k: &str| r.metric(k).and_then(|m| m.median());
        t.add_row(vec![
            r.variant.clone(),
            param(r, "model").unwrap_or("-").to_string(),
            param(r, "cpu").unwrap_or("-").to_string(),
            verdict(r).to_string(),
            m("executions").map_or("-".into(), |n| format!("{n:.0}")),
            m("seconds").map_or("-".into(), units::duration),
        ]);
    }
    writeln!(out, "{t}")?;
    // What a PASS covers: this client, this model, this CPU, no more.
    if let Some(r) = recs.first() {
        writeln!(
            out,
            "legend: PASS: every execution of the client that the model allows ends right (a loop that writes unrolled up to {} times), on the cpu shown; FAIL: one does not (why, below); BOUND: a bound cut the search, nothing proved; REFUSED: code verify cannot follow; executions: those the model allows, examined (a FAIL stops at the first wrong one, as GenMC stops at the first error; threads that are copies of one are searched in one order and each other order counted as examined)",
            number(r, "unroll")
        )?;
    }
    // A PASS under x86tso or sc says which CPUs it cannot speak for.
    let passed = |model: &str| {
        recs.iter()
            .any(|r| verdict(r) == "PASS" && param(r, "model") == Some(model))
    };
    if passed("x86tso") {
        writeln!(out, "a PASS under x86tso covers x86-64 CPUs only: x86-TSO keeps stores in order and makes every locked read-modify-write a full barrier, so a missing acquire or release cannot show; for an Arm or RISC-V CPU, verify the aarch64 or riscv64 build of the same source under its own model")?;
    }
    if passed("sc") {
        writeln!(out, "a PASS under sc covers sequential consistency, which no multicore CPU gives: the algorithm, not its orderings")?;
    }
    // Each kind's client, once, as its first record ran it.
    let mut kinds: Vec<&str> = Vec::new();
    for r in &recs {
        if !kinds.contains(&r.scenario.as_str()) {
            kinds.push(&r.scenario);
            if let Some(c) = client(r) {
                writeln!(out, "client {}: {c}", r.scenario)?;
            }
        }
    }
    for r in recs.iter().filter(|r| verdict(r) != "PASS") {
        writeln!(
            out,
            "\n{}: {}",
            heading(r),
            r.notes.first().map_or("", String::as_str)
        )?;
        if let Some(c) = r
            .detail
            .as_ref()
            .and_then(|d| d.get("counterexample"))
            .and_then(|c| c.as_str())
        {
            writeln!(out, "  counterexample (reads-from): {c}")?;
        }
        if let Some(d) = &r.detail {
            write_trace(out, d, r.notes.first().map_or("", String::as_str))?;
        }
    }
    for r in &recs {
        if let Some(advice) = r
            .detail
            .as_ref()
            .and_then(|d| d.get("advice"))
            .and_then(|a| a.as_array())
        {
            write_advice(out, r, advice)?;
        }
    }
    // The cpu column: "-" needs saying even when every row shows it.
    if recs.iter().any(|r| param(r, "cpu").is_some()) {
        writeln!(out, "\ncpu: the code calls libgcc's outline atomics; \"LSE\" is a CPU with FEAT_LSE (the helpers' CAS/SWP/LD<op>), \"no LSE\" one without (their LL/SC loops); \"-\": the code does not depend on FEAT_LSE (one verdict covers every CPU of the architecture)")?;
    } else if !recs.is_empty() {
        writeln!(out, "\ncpu \"-\": the code takes no path chosen by a CPU feature at run time (no outline atomics), so one verdict covers every CPU the model describes")?;
    }
    Ok(())
}

/// A verdict's heading: "VARIANT VERDICT under MODEL (CPU)", the CPU
/// where the record names one.
fn heading(r: &atomlab_core::Record) -> String {
    format!(
        "{} {} under {}{}",
        r.variant,
        verdict(r),
        param(r, "model").unwrap_or("-"),
        param(r, "cpu").map_or(String::new(), |c| format!(" ({c})"))
    )
}

/// `--advise`'s answer for one record: for a FAIL, the single changes
/// that make it pass; for a PASS, what could be weakened with the PASS
/// kept (for this client, model and CPU).
fn write_advice(
    out: &mut dyn std::io::Write,
    r: &atomlab_core::Record,
    advice: &[serde_json::Value],
) -> std::io::Result<()> {
    let field = |a: &serde_json::Value, k: &str| {
        a.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string()
    };
    let head = match verdict(r) {
        "FAIL" => "advice: each of these changes alone makes it PASS (verified again)",
        _ => "advice: each of these alone could be weakened and it still PASSes (verified again, for this client)",
    };
    writeln!(
        out,
        "\n{}: {}",
        heading(r),
        if advice.is_empty()
            && r.detail
                .as_ref()
                .and_then(|d| d.get("advice_tried"))
                .and_then(|n| n.as_u64())
                == Some(0)
        {
            "advice: nothing to try: the code it runs has no access with an acquire or release form to change and no barrier (x86's locked instructions are full barriers by the architecture)"
        } else if advice.is_empty() {
            match verdict(r) {
                "FAIL" => "advice: no single change tried makes it pass (an access made acquire or release, a full barrier added); it needs more than one",
                _ => "advice: nothing could be weakened: every acquire, release and barrier is needed for this client",
            }
        } else {
            head
        }
    )?;
    for a in advice {
        writeln!(
            out,
            "  {} ({}) {}: {}",
            field(a, "place"),
            field(a, "address"),
            field(a, "instruction"),
            field(a, "change")
        )?;
    }
    Ok(())
}

/// A FAIL's execution at the instruction level, from the record's
/// `detail` (`broken`, `trace`, `coherence`): the property that broke,
/// then each thread's events as `symbol+offset  instruction  event  <- the
/// write it read`, then the coherence order of each location written more
/// than once. `broken` is not repeated when it is the reason already
/// shown (`note`), as for the clients other than the lock's.
fn write_trace(
    out: &mut dyn std::io::Write,
    d: &serde_json::Value,
    note: &str,
) -> std::io::Result<()> {
    if let Some(b) = d
        .get("broken")
        .and_then(|b| b.as_str())
        .filter(|b| *b != note)
    {
        writeln!(out, "  broken: {b}")?;
    }
    let Some(steps) = d.get("trace").and_then(|t| t.as_array()) else {
        return Ok(());
    };
    let text = |s: &serde_json::Value, k: &str| {
        s.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string()
    };
    let place_w = steps
        .iter()
        .map(|s| text(s, "place").len())
        .max()
        .unwrap_or(0);
    let instr_w = steps
        .iter()
        .map(|s| text(s, "instruction").len())
        .max()
        .unwrap_or(0);
    writeln!(
        out,
        "  the execution, instruction by instruction (each thread in program order; <- #N: read from step N):"
    )?;
    let mut last = None;
    for (n, s) in steps.iter().enumerate() {
        let t = s.get("thread").and_then(|t| t.as_u64());
        let thread = if t != last {
            t.map_or(String::new(), |t| format!("P{t}"))
        } else {
            String::new()
        };
        last = t;
        let source = s
            .get("source")
            .and_then(|v| v.as_str())
            .map_or(String::new(), |src| format!("  <- {src}"));
        writeln!(
            out,
            "  {:>4} {thread:<3} {:<place_w$}  {:<instr_w$}  {}{source}",
            format!("#{}", n + 1),
            text(s, "place"),
            text(s, "instruction"),
            text(s, "event")
        )?;
    }
    if let Some(co) = d.get("coherence").and_then(|c| c.as_array()) {
        for c in co.iter().filter_map(|c| c.as_str()) {
            writeln!(out, "  coherence of {c}")?;
        }
    }
    Ok(())
}

/// verify's entry in [`super::KINDS`].
pub(crate) const KIND: super::Kind = super::Kind {
    name: "verify",
    terminal: |mut out, report| write_terminal(&mut out, report),
    section: None,
};

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::{Machine, Metric, Source, Unit, Verdict};

    /// The live view and `show` of a saved run are the same lines, drawn
    /// from the records: the rows, the failing one's reason and its
    /// counterexample, the refused one's reason.
    #[test]
    fn rows_then_what_did_not_pass() {
        let rec = |v: &str, verdict: Option<Verdict>, why: &str| {
            let mut r = Record::new("verify", "lock", v);
            r.param("model", "aarch64").param("cpu", "no LSE");
            r.metrics.push(Metric::new(
                "executions",
                Unit::Count,
                Source::Derived,
                vec![8.0],
            ));
            r.metrics.push(Metric::new(
                "seconds",
                Unit::Seconds,
                Source::ClockGettime,
                vec![0.002],
            ));
            r.verdict = verdict;
            r.notes.push(why.into());
            r
        };
        let mut fail = rec(
            "tas-relaxed-unlock",
            Some(Verdict::Fail),
            "an update was lost",
        );
        fail.detail = Some(serde_json::json!({"counterexample": "P1 Rlock=0 <-rf- P0 Wlock=0"}));
        let mut refused = rec("tas-usleep", None, "calls usleep at 0xb88");
        refused.param("refused", "calls usleep at 0xb88");
        let mut report = Report::new(
            "verify",
            Machine::detect(),
            vec![
                rec("tas", Some(Verdict::Pass), "every execution"),
                fail,
                refused,
            ],
        );
        report
            .notes
            .push("x.so: aarch64 code, models aarch64".into());
        let mut out = Vec::new();
        write_terminal(&mut out, &report).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.starts_with("x.so: aarch64 code, models aarch64\n"),
            "{out}"
        );
        assert!(
            out.contains("| tas                | aarch64 | no LSE | PASS"),
            "{out}"
        );
        assert!(
            out.contains("| tas-usleep         | aarch64 | no LSE | REFUSED"),
            "{out}"
        );
        assert!(out.contains("tas-relaxed-unlock FAIL under aarch64 (no LSE): an update was lost\n  counterexample (reads-from): P1 Rlock=0 <-rf- P0 Wlock=0"), "{out}");
        assert!(
            out.contains("tas-usleep REFUSED under aarch64 (no LSE): calls usleep at 0xb88"),
            "{out}"
        );
        assert!(!out.contains("tas PASS under"), "{out}");
        // Every PASS says what it covers: the client, the model, the CPU.
        assert!(
            out.contains("legend: PASS: every execution of the client"),
            "{out}"
        );
        // The cpu column is explained, "-" included.
        assert!(
            out.contains("\ncpu: the code calls libgcc's outline atomics"),
            "{out}"
        );
        assert!(!out.contains("cpu \"-\": the code takes no path"), "{out}");
    }

    /// A smaller spsc client (`--items 2`) is named as it ran: two items,
    /// no wrap.
    #[test]
    fn the_spsc_legend_counts_the_items_pushed() {
        let mut r = Record::new("verify", "spsc", "ring");
        r.param("model", "aarch64")
            .param("threads", 2u64)
            .param("rounds", 1u64)
            .param("items", 2u64)
            .param("unroll", 4u64);
        r.verdict = Some(Verdict::Pass);
        let report = Report::new("verify", Machine::detect(), vec![r]);
        let mut out = Vec::new();
        write_terminal(&mut out, &report).unwrap();
        let out = String::from_utf8(out).unwrap().replace("\n  ", " ");
        assert!(
            out.contains("client spsc: a producer pushes 1, 2 (retrying while full) into a queue made with new_(2); a consumer pops 2 item(s) (retrying while empty) and must see 1, 2 in order"),
            "{out}"
        );
        // No record depends on a CPU feature: the column's "-" is still
        // explained.
        assert!(
            out.contains("cpu \"-\": the code takes no path chosen by a CPU feature"),
            "{out}"
        );
    }

    /// The legend says what each kind's client did, once per kind, from
    /// the records' parameters: a refcount PASS is not a lock's.
    #[test]
    fn the_legend_names_each_kinds_client() {
        let rec = |kind: &str, v: &str| {
            let mut r = Record::new("verify", kind, v);
            r.param("model", "aarch64")
                .param("threads", 3u64)
                .param("rounds", 2u64)
                .param("unroll", 4u64);
            r.verdict = Some(Verdict::Pass);
            r.notes.push("every execution".into());
            r
        };
        let report = Report::new(
            "verify",
            Machine::detect(),
            vec![
                rec("lock", "tas"),
                rec("lock", "ticket"),
                rec("spsc", "ring"),
                rec("refcount", "refcount"),
                rec("op", "op-fetch-add"),
            ],
        );
        let mut out = Vec::new();
        write_terminal(&mut out, &report).unwrap();
        let out = String::from_utf8(out).unwrap().replace("\n  ", " ");
        assert!(out.contains("unrolled up to 4 times"), "{out}");
        assert!(
            out.contains("client lock: 3 threads x 2 critical section(s)"),
            "{out}"
        );
        assert_eq!(out.matches("client lock:").count(), 1, "{out}");
        assert!(
            out.contains("client spsc: a producer pushes 1, 2, 3 (retrying while full) into a queue made with new_(2), so the ring wraps; a consumer pops 3 item(s)"),
            "{out}"
        );
        assert!(
            out.contains("client refcount: 3 holders")
                && out.contains("takes and drops 1 more reference(s)"),
            "{out}"
        );
        assert!(
            out.contains("client op: 3 threads x 2 op(s), then read()"),
            "{out}"
        );
    }
}
