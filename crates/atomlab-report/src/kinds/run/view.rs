//! The terminal's view of run records: what `atomlab run` prints (its
//! tables, or litmus7's log with `--format litmus`) and `atomlab show`
//! prints again, from the records alone (the fields atomlab-run's
//! `batch::record` writes; a field an older record lacks reads as empty).

use std::io::{self, Write};

use atomlab_core::Record;

use crate::html::num;
use crate::table::{self, Cell, Table};
use crate::units;

/// Said on stdout (and in the report's notes) when the run is under
/// qemu-user: the emulator runs each thread's code functionally, so its
/// histogram says nothing about what an Arm (or any real) CPU does.
pub const EMULATED: &str = "running under emulation (qemu-user): the histogram shows the emulator's behaviour and says nothing about Arm or any other real hardware";

/// A run record's fields as its tables read them (`batch::record` writes
/// them); a field an older record lacks reads as empty.
struct Fields<'a>(&'a Record);

impl<'a> Fields<'a> {
    fn text(&self, key: &str) -> String {
        match self.0.parameters.get(key) {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => "-".into(),
        }
    }
    fn count(&self, key: &str) -> u64 {
        self.0
            .parameters
            .get(key)
            .and_then(|v| v.as_u64())
            .unwrap_or(0)
    }
    fn metric(&self, name: &str) -> f64 {
        self.0.metric(name).and_then(|m| m.median()).unwrap_or(0.0)
    }
    fn detail(&self, key: &str) -> Option<&'a serde_json::Value> {
        self.0.detail.as_ref().and_then(|d| d.get(key))
    }
    fn list(&self, key: &str) -> &'a [serde_json::Value] {
        self.detail(key)
            .and_then(|v| v.as_array())
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

fn str_of<'a>(v: &'a serde_json::Value, key: &str) -> &'a str {
    v.get(key).and_then(|x| x.as_str()).unwrap_or("")
}

fn names(v: &serde_json::Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(|x| x.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|m| m.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The models that gave a verdict on a test: those with allowed states.
fn judged<'a>(f: &Fields<'a>) -> Vec<&'a serde_json::Value> {
    f.list("models")
        .iter()
        .filter(|m| m.get("allowed_states").is_some())
        .collect()
}

/// A test's histogram as `atomlab run` prints it and the report shows it:
/// a row per final state seen (its count, `*` on the witness), then the
/// allowed states not seen (count 0), with a column per model that judged
/// the test: allowed, or FORBIDDEN.
pub fn histogram_table(r: &Record) -> Table {
    let f = Fields(r);
    let judged = judged(&f);
    let mut t = Table::fitting();
    let mut header = vec!["count".to_string(), "witness".into(), "final state".into()];
    header.extend(judged.iter().map(|m| str_of(m, "model").to_string()));
    t.set_header(header);
    t.keys(3);
    let model_cell = |m: &serde_json::Value, allowed_by: &[String]| {
        if allowed_by.iter().any(|a| a == str_of(m, "model")) {
            "allowed".to_string()
        } else if m.get("data_race").and_then(|x| x.as_bool()) == Some(true) {
            "forbidden (racy test: undefined)".to_string()
        } else {
            "FORBIDDEN".to_string()
        }
    };
    let witness = |h: &serde_json::Value| {
        if h.get("witness").and_then(|x| x.as_bool()) == Some(true) {
            "*".to_string()
        } else {
            String::new()
        }
    };
    // A state seen that a model forbids is marked in HTML.
    let seen_cell = |text: String| {
        let class = match text.as_str() {
            "FORBIDDEN" => "bad",
            "allowed" => "",
            _ => "warn",
        };
        Cell::text(text).class(class)
    };
    for h in f.list("histogram") {
        let allowed_by = names(h, "allowed_by");
        let mut row = vec![
            Cell::num(
                h.get("count")
                    .and_then(|x| x.as_u64())
                    .unwrap_or(0)
                    .to_string(),
            ),
            Cell::text(witness(h)),
            Cell::text(str_of(h, "state")),
        ];
        row.extend(judged.iter().map(|m| seen_cell(model_cell(m, &allowed_by))));
        t.add_row(row);
    }
    // Allowed states the CPU did not show: normal, and said so.
    for h in f.list("not_observed") {
        let allowed_by = names(h, "allowed_by");
        let mut row = vec![
            Cell::num("0"),
            Cell::text(witness(h)),
            Cell::text(str_of(h, "state")),
        ];
        row.extend(
            judged
                .iter()
                .map(|m| Cell::text(format!("{}, not observed", model_cell(m, &allowed_by)))),
        );
        t.add_row(row);
    }
    t
}

/// Per test: the header line, the histogram with a column per model (and
/// the allowed states not observed), the observation, the rates, each
/// model's verdict and what went wrong; from the run's records alone, so
/// `atomlab run` and `atomlab show` print the same.
pub fn write_tables(out: &mut impl Write, recs: &[Record], emulated: bool) -> io::Result<()> {
    table::fitted(out, |out| write_unfitted(out, recs, emulated))
}

/// [`write_tables`]' lines, before the long ones are wrapped.
fn write_unfitted(out: &mut Vec<u8>, recs: &[Record], emulated: bool) -> io::Result<()> {
    if emulated {
        writeln!(out, "NOTE: {EMULATED}")?;
    }
    for r in recs {
        let f = Fields(r);
        let cpus: Vec<String> = r
            .parameters
            .get("cpus")
            .and_then(|c| c.as_array())
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .map(|(i, c)| match c.as_i64() {
                Some(c) if c >= 0 => format!("P{i}:cpu{c}"),
                _ => format!("P{i}:any"),
            })
            .collect();
        writeln!(
            out,
            "{} ({}): {} instances ({} done), {}, {}",
            r.scenario,
            f.text("file"),
            f.metric("instances") as u64,
            units::plural(f.count("runs_done"), "run"),
            units::duration(f.metric("seconds")),
            cpus.join(" ")
        )?;
        let judged = judged(&f);
        let t = histogram_table(r);
        writeln!(out, "{t}")?;
        let positive = f.metric("positive") as u64;
        writeln!(
            out,
            "Observation {} {} {} {}",
            r.scenario,
            f.text("observation"),
            positive,
            f.metric("negative") as u64
        )?;
        writeln!(
            out,
            "witnesses: {} per second, {} per million instances",
            num(f.metric("witnesses_per_second")),
            num(f.metric("witnesses_per_million"))
        )?;
        for m in f.list("models") {
            let model = str_of(m, "model");
            match m.get("allowed_states").and_then(|s| s.as_array()) {
                Some(states) => {
                    let race = if m.get("data_race").and_then(|x| x.as_bool()) == Some(true) {
                        " race"
                    } else {
                        ""
                    };
                    let via = match m.get("mapping").and_then(|x| x.as_str()) {
                        Some(map) => format!(" through {map}"),
                        None => String::new(),
                    };
                    writeln!(
                        out,
                        "{model}: {} ({}){race}{via}",
                        str_of(m, "observation"),
                        states.len()
                    )?;
                }
                None => match m.get("unjudged").and_then(|x| x.as_str()) {
                    Some(why) => writeln!(out, "{model}: {}: {why}", str_of(m, "observation"))?,
                    None => writeln!(out, "{model}: {}", str_of(m, "observation"))?,
                },
            }
        }
        let exists = f.detail("kind").and_then(|k| k.as_str()) == Some("Allowed");
        if positive == 0 && exists && judged.iter().any(|m| str_of(m, "observation") != "Never") {
            writeln!(
                out,
                "the condition is allowed by a model but was not observed in {} instances: normal for an allowed outcome",
                f.metric("instances") as u64
            )?;
        }
        let replay = f.detail("replay").and_then(|x| x.as_str()).unwrap_or("");
        for x in f.list("forbidden") {
            // Under emulation the emulator is a third suspect: qemu-user on
            // an x86-64 host lets a store-release pass a later
            // load-acquire (measured: SB+rel+acq, crates/atomlab-run/tests).
            // This CPU's own model: when it allows the state and a
            // stronger one (sc) forbids it, the observation is the point
            // of asking, not an erratum.
            // (The record marks the model that describes the CPU it ran
            // on, `this_cpu`; records from before 6 Dec 2026 do not, and
            // their forbidden outcomes get the general cause.)
            let host = f
                .list("models")
                .iter()
                .find(|m| m.get("this_cpu").and_then(|b| b.as_bool()) == Some(true))
                .map_or("", |m| str_of(m, "model"));
            let model = str_of(x, "model");
            let host_judged = !host.is_empty();
            let host_forbids = f
                .list("forbidden")
                .iter()
                .any(|y| str_of(y, "model") == host && str_of(y, "state") == str_of(x, "state"));
            let cause = if host_judged && !host_forbids && model != host {
                format!("{host}, this CPU's own model, allows it: {model} is stronger than this CPU, so seeing it shows where the CPU is weaker, as asked")
            } else if emulated {
                "the emulator's behaviour, a CPU erratum or a wrong model".to_string()
            } else {
                "a CPU erratum or a wrong model".to_string()
            };
            writeln!(
                out,
                "FORBIDDEN OUTCOME OBSERVED: {} {} seen {} times, forbidden by {model} ({cause})\n  replay: {replay}",
                r.scenario,
                str_of(x, "state"),
                x.get("count").and_then(|c| c.as_u64()).unwrap_or(0),
            )?;
        }
        if f.detail("timed_out").and_then(|x| x.as_bool()) == Some(true) {
            writeln!(
                out,
                "TIMEOUT: --timeout stopped the test after {} runs",
                f.count("runs_done")
            )?;
        }
        // The notes not said above (a loop budget run out, pinning
        // refused), which were once only in --json.
        for n in r.notes.iter().filter(|n| {
            ![
                "FORBIDDEN OUTCOME OBSERVED",
                "TIMEOUT:",
                "BOUND:",
                "not run:",
            ]
            .iter()
            .any(|said| n.starts_with(said))
        }) {
            writeln!(out, "note: {n}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// litmus7's log, one block per test, from the run's records.
pub fn write_litmus_log(out: &mut impl Write, recs: &[Record], emulated: bool) -> io::Result<()> {
    if emulated {
        writeln!(out, "% {EMULATED}")?;
    }
    for r in recs {
        let f = Fields(r);
        let name = &r.scenario;
        let kind = f.detail("kind").and_then(|k| k.as_str()).unwrap_or("");
        writeln!(out, "% Results for {} (atomlab run) %", f.text("file"))?;
        writeln!(out, "Test {name} {kind}")?;
        let histogram = f.list("histogram");
        writeln!(out, "Histogram ({} states)", histogram.len())?;
        for h in histogram {
            let n = h.get("count").and_then(|x| x.as_u64()).unwrap_or(0);
            let mark = if h.get("witness").and_then(|x| x.as_bool()) == Some(true) {
                "*>"
            } else {
                ":>"
            };
            writeln!(out, "{n:<6}{mark}{}", str_of(h, "state"))?;
        }
        let (positive, negative) = (f.metric("positive") as u64, f.metric("negative") as u64);
        let ok = match kind {
            "Allowed" => positive > 0,
            "Forbidden" => positive == 0,
            _ => negative == 0,
        };
        writeln!(out, "{}", if ok { "Ok" } else { "No" })?;
        writeln!(out)?;
        writeln!(out, "Witnesses")?;
        writeln!(out, "Positive: {positive}, Negative: {negative}")?;
        // litmus7 says "validated" when the test's expectation holds.
        let validated = ok;
        writeln!(
            out,
            "Condition {} is {}validated",
            f.text("condition"),
            if validated { "" } else { "NOT " }
        )?;
        writeln!(
            out,
            "Observation {name} {} {positive} {negative}",
            f.text("observation")
        )?;
        writeln!(out, "Time {name} {:.2}", f.metric("seconds"))?;
        writeln!(out)?;
    }
    Ok(())
}

/// A saved run as `atomlab run` printed it (`atomlab show`), then its
/// summary: one row per test with the hardware's observation and each
/// model's. `emulated`: the run was under qemu-user (its machine says so).
pub fn write_view(out: &mut impl Write, recs: &[Record], emulated: bool) -> io::Result<()> {
    write_tables(out, recs, emulated)?;
    write_records_table(out, recs)
}

/// A saved run's summary (`atomlab show`), from its records alone: one row
/// per test with the hardware's observation and each model's.
pub fn write_records_table(out: &mut impl Write, recs: &[Record]) -> io::Result<()> {
    writeln!(out, "{}", records_table(recs))
}

/// The summary of run records (`atomlab show`, the report): one row per
/// test with the hardware's observation and each model's.
pub fn records_table<'a>(recs: impl IntoIterator<Item = &'a Record>) -> Table {
    let mut t = Table::fitting();
    t.set_header(vec![
        "test",
        "condition",
        "hardware",
        "witnesses/s",
        "models",
        "verdict",
    ]);
    for r in recs {
        let p = |k: &str| {
            r.parameters
                .get(k)
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                })
                .unwrap_or_else(|| "-".into())
        };
        let m = |k: &str| r.metric(k).and_then(|m| m.median()).unwrap_or(0.0);
        let models = r
            .detail
            .as_ref()
            .and_then(|d| d.get("models"))
            .and_then(|m| m.as_array())
            .map(|ms| {
                ms.iter()
                    .map(|m| {
                        format!(
                            "{} {}",
                            m.get("model").and_then(|x| x.as_str()).unwrap_or("?"),
                            m.get("observation").and_then(|x| x.as_str()).unwrap_or("?")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        // `suite` records a test this host cannot run, with the reason.
        let hardware = match r.parameters.get("not_run").and_then(|v| v.as_str()) {
            Some(reason) => format!("not run: {reason}"),
            None => format!("{} {} {}", p("observation"), m("positive"), m("negative")),
        };
        t.add_row(vec![
            r.scenario.clone(),
            p("condition"),
            hardware,
            num(m("witnesses_per_second")),
            models,
            r.verdict
                .map(|v| format!("{v:?}").to_uppercase())
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::{Metric, Source, Unit, Verdict};
    use serde_json::json;

    /// A run of SB where x86tso forbids nothing and sc forbids the
    /// witness, as atomlab-run's batch records it.
    fn sb() -> Record {
        let mut r = Record::new("run", "SB", "x86_64");
        r.param("file", "SB.litmus")
            .param("observation", "Sometimes")
            .param("condition", "exists (0:EAX=0 /\\ 1:EAX=0)")
            .param("runs_done", 2);
        for (name, v) in [
            ("instances", 10.0),
            ("positive", 3.0),
            ("negative", 7.0),
            ("seconds", 0.5),
        ] {
            r.metrics
                .push(Metric::new(name, Unit::Count, Source::Derived, vec![v]));
        }
        r.detail = Some(json!({
            "kind": "Allowed",
            "replay": "atomlab run SB.litmus --seed 1",
            "models": [
                {"model": "x86tso", "this_cpu": true, "observation": "Sometimes", "allowed_states": ["a", "b"]},
                {"model": "sc", "observation": "Never", "allowed_states": ["a"]},
            ],
            "histogram": [
                {"count": 7, "state": "0:EAX=1; 1:EAX=0;", "allowed_by": ["x86tso", "sc"]},
                {"count": 3, "state": "0:EAX=0; 1:EAX=0;", "witness": true, "allowed_by": ["x86tso"]},
            ],
            "forbidden": [{"model": "sc", "state": "0:EAX=0; 1:EAX=0;", "count": 3}],
        }));
        r.verdict = Some(Verdict::Fail);
        r
    }

    /// The histogram with a column per judging model, the observation,
    /// each model's verdict, the forbidden outcome with its replay line,
    /// and the summary row.
    #[test]
    fn the_view_shows_the_histogram_and_the_forbidden_outcome() {
        let mut out = Vec::new();
        write_view(&mut out, &[sb()], false).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.starts_with("SB (SB.litmus): 10 instances (2 runs done), 500 ms, \n"),
            "{out}"
        );
        assert!(
            out.contains("| count | witness | final state       | x86tso  | sc        |"),
            "{out}"
        );
        assert!(
            out.contains("| 3     | *       | 0:EAX=0; 1:EAX=0; | allowed | FORBIDDEN |"),
            "{out}"
        );
        assert!(out.contains("Observation SB Sometimes 3 7\n"), "{out}");
        assert!(
            out.contains("x86tso: Sometimes (2)\nsc: Never (1)\n"),
            "{out}"
        );
        // The line is wrapped to 100 columns, its rest indented under it.
        assert!(out.contains(
            "FORBIDDEN OUTCOME OBSERVED: SB 0:EAX=0; 1:EAX=0; seen 3 times, forbidden by sc (x86tso, this CPU's\n  own model, allows it: sc is stronger than this CPU, so seeing it shows where the CPU is weaker, as\n  asked)\n  replay: atomlab run SB.litmus --seed 1\n"
        ), "{out}");
        // The summary's row (its condition and models wrap to fit 100
        // columns onto the lines under it).
        let summary = out
            .lines()
            .find(|l| l.starts_with("| SB   | exists"))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(
            summary.contains("| Sometimes 3 7 |") && summary.ends_with("| FAIL    |"),
            "{summary}"
        );
    }

    /// litmus7's log: the histogram with the witness marked, Ok for an
    /// allowed condition observed, the witnesses and the observation.
    #[test]
    fn the_litmus_log_is_litmus7s() {
        let mut out = Vec::new();
        write_litmus_log(&mut out, &[sb()], true).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(
            out,
            format!(
                "% {EMULATED}\n% Results for SB.litmus (atomlab run) %\nTest SB Allowed\nHistogram (2 states)\n\
                 7     :>0:EAX=1; 1:EAX=0;\n3     *>0:EAX=0; 1:EAX=0;\nOk\n\nWitnesses\nPositive: 3, Negative: 7\n\
                 Condition exists (0:EAX=0 /\\ 1:EAX=0) is validated\nObservation SB Sometimes 3 7\nTime SB 0.50\n\n"
            )
        );
    }
}
