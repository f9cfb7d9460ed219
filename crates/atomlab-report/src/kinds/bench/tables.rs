//! One definition per kind of bench record of its table: the header and
//! the cells, from records, for the terminal (`atomlab bench` and `atomlab
//! show`, as Markdown) and for the HTML report. Where the two views differ
//! (the report adds a run column and min–max spreads and leaves blank
//! columns out; the terminal adds the scenario and PMU event columns), the
//! column says so here, beside the columns they share.

use std::collections::BTreeSet;
use std::io::{self, Write};

use atomlab_core::{FlagKind, Record, Report, TableKind};

use crate::html::{num, param, status, status_class, variant_label};
use crate::table::{self, Cell, Table};
use crate::units;

/// Where a table is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// The terminal: `atomlab bench`, `atomlab show`.
    Terminal,
    /// The HTML report.
    Report,
}

/// A record and, in a report of several runs, the name of its run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Row<'a> {
    /// The run's name, when the table mixes runs (its own first column).
    pub run: Option<&'a str>,
    /// The record.
    pub record: &'a Record,
}

impl<'a> Row<'a> {
    /// The records of one run.
    pub(crate) fn of(recs: &[&'a Record]) -> Vec<Row<'a>> {
        recs.iter()
            .map(|r| Row {
                run: None,
                record: r,
            })
            .collect()
    }
}

/// A table under construction: its columns and rows, built column by
/// column so that each column's title sits beside its cell.
struct Columns<'r> {
    header: Vec<String>,
    cells: Vec<Vec<Cell>>,
    rows: &'r [Row<'r>],
}

impl<'r> Columns<'r> {
    /// Starts with the run column when the rows mix runs.
    fn new(rows: &'r [Row<'r>]) -> Columns<'r> {
        let mut c = Columns {
            header: Vec::new(),
            cells: vec![Vec::new(); rows.len()],
            rows,
        };
        if rows.iter().any(|x| x.run.is_some()) {
            c.col("run", |x| Cell::text(x.run.unwrap_or("-")));
        }
        c
    }

    /// A column titled `title`, a cell per row from `cell`.
    fn col(&mut self, title: impl Into<String>, cell: impl Fn(&Row<'_>) -> Cell) -> &mut Self {
        self.header.push(title.into());
        for (cells, row) in self.cells.iter_mut().zip(self.rows) {
            cells.push(cell(row));
        }
        self
    }

    /// A column of the record's cell only.
    fn rec(&mut self, title: impl Into<String>, cell: impl Fn(&Record) -> Cell) -> &mut Self {
        self.col(title, |x| cell(x.record))
    }

    fn table(self) -> Table {
        let mut t = Table::fitting();
        t.set_header(self.header.iter().cloned());
        for row in self.cells {
            t.row(row);
        }
        t
    }
}

/// A metric's median for a table; a record whose timing is implausible
/// shows no figure at all, so nobody copies it as data.
fn median(r: &Record, metric: &str) -> Cell {
    median_as(r, metric, num)
}

/// A metric's median in the human unit `show` gives it ([`units`]).
fn median_as(r: &Record, metric: &str, show: fn(f64) -> String) -> Cell {
    if r.flagged(FlagKind::Implausible) {
        return Cell::text("implausible").class("bad");
    }
    Cell::num(
        r.metric(metric)
            .and_then(|m| m.median())
            .map(show)
            .unwrap_or_else(|| "-".into()),
    )
}

/// A median in nanoseconds, in ns, µs, ms or s.
fn time_ns(r: &Record, metric: &str) -> Cell {
    median_as(r, metric, units::nanos)
}

/// The fastest and the slowest run of a metric (report only).
fn spread(r: &Record, metric: &str) -> Cell {
    if r.flagged(FlagKind::Implausible) {
        return Cell::text("-");
    }
    Cell::num(
        r.metric(metric)
            .and_then(|m| m.summary)
            .map(|s| format!("{}–{}", num(s.min), num(s.max)))
            .unwrap_or_else(|| "-".into()),
    )
}

/// A metric's coefficient of variation over the runs; the report shows
/// none for a single run, the terminal shows its 0%.
fn cv(r: &Record, metric: &str, target: Target) -> Cell {
    Cell::num(
        r.metric(metric)
            .and_then(|m| m.summary)
            .filter(|s| target == Target::Terminal || s.n > 1)
            .map(|s| format!("{:.1}%", s.cv * 100.0))
            .unwrap_or_else(|| "-".into()),
    )
}

/// The status column: `ok`, or the words of each flag.
fn status_cell(r: &Record) -> Cell {
    Cell::text(status(r)).class(status_class(r))
}

/// The text of a parameter, as a figure.
fn count(r: &Record, key: &str) -> Cell {
    Cell::num(param(r, key))
}

/// A record's table kind as the terminal groups them.
fn kind(r: &Record) -> Option<TableKind> {
    TableKind::of(r)
}

/// The timed table (counter, refcount, lock, fence): the medians over the
/// runs of each record. The report also takes the fixed-rate and queue
/// records here.
pub(crate) fn timed(rows: &[Row<'_>], target: Target) -> Table {
    let terminal = target == Target::Terminal;
    // The terminal's PMU event columns, in order of appearance.
    let mut events: Vec<&str> = Vec::new();
    for x in rows.iter().filter(|_| terminal) {
        for m in &x.record.metrics {
            if m.name.starts_with("event:") && !events.contains(&m.name.as_ref()) {
                events.push(&m.name);
            }
        }
    }
    let mut c = Columns::new(rows);
    if terminal {
        c.rec("scenario", |r| Cell::text(&r.scenario));
    }
    c.rec("variant", |r| Cell::text(variant_label(r)))
        .rec("threads", |r| count(r, "threads"))
        .rec(if terminal { "line" } else { "contention" }, |r| {
            Cell::text(param(r, "contention"))
        });
    if !terminal {
        c.rec("cs work", |r| count(r, "cs_work"));
    }
    c.rec("ops/s", |r| median(r, "ops_per_sec"))
        .rec("ns/op", |r| median(r, "ns_per_op"));
    if !terminal {
        c.rec("ns/op min–max", |r| spread(r, "ns_per_op"));
    }
    c.rec("ref-cyc/op", |r| median(r, "ref_cycles_per_op"))
        .rec("cyc/op", |r| median(r, "cycles_per_op"))
        .rec("inst/op", |r| median(r, "instructions_per_op"))
        .rec("cpu %", |r| median(r, "cpu_utilisation"));
    if !terminal {
        c.rec("parallelism", |r| median(r, "parallelism"));
    }
    c.rec("fairness", |r| median(r, "fairness"))
        .rec(if terminal { "cv" } else { "cv (ns/op)" }, |r| {
            cv(r, "ns_per_op", target)
        })
        .rec("status", status_cell);
    for e in events {
        c.rec(format!("{}/op", e.trim_start_matches("event:")), |r| {
            median(r, e)
        });
    }
    let mut t = c.table();
    if !terminal {
        t.drop_blank_columns();
    }
    // Scenario, variant and threads: the line (contention) is the
    // fourth, but four keys leave the status no room in the second panel.
    t.keys(keys(rows, 3));
    t
}

/// The fixed-work table (lock with `--increments`): every increment done,
/// timed to the end.
pub(crate) fn fixed_work(rows: &[Row<'_>], target: Target) -> Table {
    let terminal = target == Target::Terminal;
    let secs = |r: &Record, pick: fn(&atomlab_core::Summary) -> f64| match r
        .metric("seconds")
        .and_then(|m| m.summary)
    {
        _ if r.flagged(FlagKind::Implausible) => Cell::text("implausible").class("bad"),
        Some(s) => Cell::num(units::duration(pick(&s))),
        None => Cell::text("-"),
    };
    let mut c = Columns::new(rows);
    c.rec("lock", |r| Cell::text(&r.variant))
        .rec("increments", |r| count(r, "increments"))
        .rec("tasks", |r| count(r, "tasks"))
        .rec("workers", |r| count(r, "workers"))
        .rec("median", |r| secs(r, |s| s.median))
        .rec("min", |r| secs(r, |s| s.min))
        .rec("max", |r| secs(r, |s| s.max))
        .rec("cv", |r| cv(r, "seconds", target))
        .rec(
            if terminal {
                "ns/op"
            } else {
                "ns per increment"
            },
            |r| median(r, "ns_per_op"),
        );
    if !terminal {
        c.rec("ops/s", |r| median(r, "ops_per_sec"));
    }
    c.rec("status", status_cell);
    c.table()
}

/// An offered rate (`rate_offered`), or `absent`.
fn offered(r: &Record, absent: &str) -> Cell {
    Cell::num(
        r.parameters
            .get("rate_offered")
            .and_then(|v| v.as_f64())
            .map(units::rate)
            .unwrap_or_else(|| absent.into()),
    )
}

/// `bench counter|refcount|lock --rate`: the CPU a given load needs
/// (terminal; the report shows these records in the timed table).
pub(crate) fn fixed_rate(rows: &[Row<'_>]) -> Table {
    let mut c = Columns::new(rows);
    c.rec("scenario", |r| Cell::text(&r.scenario))
        .rec("variant", |r| Cell::text(variant_label(r)))
        .rec("threads", |r| count(r, "threads"))
        .rec("line", |r| Cell::text(param(r, "contention")))
        .rec("offered/s", |r| offered(r, "-"))
        .rec("achieved/s", |r| median_as(r, "rate_achieved", units::rate))
        .rec("cpu %", |r| median(r, "cpu_utilisation"))
        .rec("busy %", |r| median(r, "busy"))
        .rec("op", |r| time_ns(r, "op_ns"))
        .rec("p50", |r| time_ns(r, "latency_p50_ns"))
        .rec("p99", |r| time_ns(r, "latency_p99_ns"))
        .rec("p99.9", |r| time_ns(r, "latency_p999_ns"))
        .rec("max", |r| time_ns(r, "latency_max_ns"))
        .rec("status", status_cell);
    let mut t = c.table();
    t.keys(keys(rows, 3));
    t
}

/// `bench spsc`: one row per variant, wait, offered rate and placement
/// (terminal; the report shows these records in the timed table).
pub(crate) fn queue(rows: &[Row<'_>]) -> Table {
    let recs = || rows.iter().map(|x| x.record);
    // --wait notify: the producer's wake calls per item, in its own column.
    let notify = recs().any(|r| r.metric("notifications_per_item").is_some());
    // Hardware counters per item and side, where they were counted.
    let mut pmu: Vec<&str> = Vec::new();
    for r in recs() {
        for m in &r.metrics {
            let counted = m.name.ends_with("_cycles_per_item")
                || m.name.ends_with("_instructions_per_item")
                || m.name.contains("_event:");
            if counted && !pmu.contains(&m.name.as_ref()) {
                pmu.push(&m.name);
            }
        }
    }
    let mut c = Columns::new(rows);
    // Variant, wait and offered rate say what a row is (the keys every
    // panel repeats); the placement is most often one for all rows.
    c.rec("variant", |r| Cell::text(&r.variant))
        .rec("wait", |r| Cell::text(param(r, "wait")))
        .rec("offered/s", |r| offered(r, "max"))
        .rec("placement", |r| Cell::text(param(r, "placement")))
        // Fixed rate: items over the schedule's length; flat out: items/s.
        .rec("achieved/s", |r| {
            if r.metric("rate_achieved").is_some() {
                median_as(r, "rate_achieved", units::rate)
            } else {
                median_as(r, "items_per_sec", units::rate)
            }
        })
        .rec("ns/item", |r| median(r, "ns_per_item"))
        .rec("prod cpu %", |r| median(r, "producer_cpu"))
        .rec("cons cpu %", |r| median(r, "consumer_cpu"))
        .rec("prod busy %", |r| median(r, "producer_busy"))
        .rec("cons busy %", |r| median(r, "consumer_busy"))
        .rec("push", |r| time_ns(r, "push_ns"))
        .rec("pop", |r| time_ns(r, "pop_ns"))
        .rec("p50", |r| time_ns(r, "latency_p50_ns"))
        .rec("p99", |r| time_ns(r, "latency_p99_ns"))
        .rec("p99.9", |r| time_ns(r, "latency_p999_ns"))
        .rec("max", |r| time_ns(r, "latency_max_ns"));
    if notify {
        c.rec("wakes/item", |r| median(r, "notifications_per_item"));
    }
    for m in pmu {
        let title = m
            .replace("producer_", "prod ")
            .replace("consumer_", "cons ")
            .replace("event:", "");
        let title = format!("{}/item", title.trim_end_matches("_per_item"));
        c.rec(title, |r| median(r, m));
    }
    c.rec("status", status_cell);
    let mut t = c.table();
    t.keys(keys(rows, 3));
    t
}

/// The key columns of a table whose own keys are its first `n`, after the
/// run column when the rows mix runs: what a panel repeats when the table
/// is cut to fit the terminal ([`Table::keys`]).
fn keys(rows: &[Row<'_>], n: usize) -> usize {
    n + usize::from(rows.iter().any(|x| x.run.is_some()))
}

/// A record's CPU pair, `cpu A ↔ cpu B`.
pub(crate) fn cpu_pair(r: &Record) -> String {
    format!("cpu {} ↔ cpu {}", param(r, "cpu_a"), param(r, "cpu_b"))
}

/// `bench pingpong`: round trips between two CPUs. The terminal draws a
/// matrix of CPUs, `ns (ref-cyc)` in each pair's cell; the report a row
/// per pair.
pub(crate) fn round_trip(rows: &[Row<'_>], target: Target) -> Table {
    if target == Target::Report {
        let mut c = Columns::new(rows);
        c.rec("CPUs", |r| Cell::text(cpu_pair(r)))
            .rec("variant", |r| Cell::text(&r.variant))
            .rec("ns per round trip", |r| median(r, "ns_per_roundtrip"))
            .rec("min–max", |r| spread(r, "ns_per_roundtrip"))
            .rec("ref-cyc per round trip", |r| {
                median(r, "ref_cycles_per_roundtrip")
            })
            .rec("cv", |r| cv(r, "ns_per_roundtrip", target))
            .rec("status", status_cell);
        let mut t = c.table();
        t.drop_blank_columns();
        return t;
    }
    let cpus: BTreeSet<String> = rows
        .iter()
        .flat_map(|x| [param(x.record, "cpu_a"), param(x.record, "cpu_b")])
        .collect();
    let mut t = Table::fitting();
    let mut header = vec!["round trip ns (ref-cyc)".to_string()];
    header.extend(cpus.iter().map(|c| format!("cpu {c}")));
    t.set_header(header);
    for a in &cpus {
        let mut row = vec![format!("cpu {a}")];
        for b in &cpus {
            let cell = rows.iter().map(|x| x.record).find(|r| {
                let (x, y) = (param(r, "cpu_a"), param(r, "cpu_b"));
                (&x == a && &y == b) || (&x == b && &y == a)
            });
            row.push(match cell {
                Some(r) if a != b => format!(
                    "{} ({})",
                    median(r, "ns_per_roundtrip").as_str(),
                    median(r, "ref_cycles_per_roundtrip").as_str()
                ),
                _ => "-".into(),
            });
        }
        t.add_row(row);
    }
    t
}

/// What the timed table's columns and statuses mean, under it.
pub(crate) const TIMED_LEGEND: &str = "legend: line: shared (one object for every thread) or private (one each); ops/s: every thread's operations over the run's wall time; ns/op: one thread's time per operation (threads x wall / operations); ref-cyc/op: ticks of the constant-rate reference counter (TSC, CNTVCT) per operation, not core cycles; cyc/op, inst/op: core cycles and instructions from the PMU; cpu %: the threads' CPU time over their wall time (below 100: they were off the CPU); fairness: the fewest operations of one thread over the most; cv: the runs' coefficient of variation; status: ok, implausible (faster than this machine can go: no figure), runs excluded, not contended as asked (the threads did not run together), incorrect (a plugin broke the check: no figure), crashed, hung or exited (a plugin's cell ended without figures)";

/// A table's definition: its rows to its table.
type Definition = fn(&[Row<'_>]) -> Table;

/// The terminal's view of bench records (`atomlab bench`, `atomlab show`):
/// one table per kind of record, then the flags' details, the notes they
/// carry (each once) and why the PMU columns are empty.
pub(crate) fn write_terminal(out: &mut impl Write, report: &Report) -> io::Result<()> {
    table::fitted(out, |out| write_unfitted(out, report))
}

/// [`write_terminal`]'s lines, before the long ones are wrapped.
fn write_unfitted(out: &mut Vec<u8>, report: &Report) -> io::Result<()> {
    let recs = &report.records;
    let of =
        |k: TableKind| -> Vec<&Record> { recs.iter().filter(|r| kind(r) == Some(k)).collect() };
    let tables: [(TableKind, Definition); 5] = [
        (TableKind::Timed, |x| timed(x, Target::Terminal)),
        (TableKind::FixedWork, |x| fixed_work(x, Target::Terminal)),
        (TableKind::FixedRate, fixed_rate),
        (TableKind::RoundTrip, |x| round_trip(x, Target::Terminal)),
        (TableKind::Queue, queue),
    ];
    for (k, table) in tables {
        let mine = of(k);
        if !mine.is_empty() {
            writeln!(out, "{}", table(&Row::of(&mine)))?;
        }
    }
    for r in recs {
        for f in &r.flags {
            writeln!(
                out,
                "{}: {} {} threads={}: {}",
                f.kind.words(),
                r.scenario,
                variant_label(r),
                param(r, "threads"),
                f.detail
            )?;
        }
    }
    let mut seen = BTreeSet::new();
    for note in recs.iter().flat_map(|r| &r.notes) {
        if seen.insert(note.as_str()) {
            writeln!(out, "note: {note}")?;
        }
    }
    if !of(TableKind::Timed).is_empty() {
        writeln!(out, "{TIMED_LEGEND}")?;
    }
    if !report.machine.pmu.available {
        writeln!(
            out,
            "note: cyc/op and inst/op need hardware counters, unavailable here: {}",
            report
                .machine
                .pmu
                .reason
                .as_deref()
                .unwrap_or("no reason given")
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::{Metric, Source, Unit};

    fn timed_record(ns: &[f64]) -> Record {
        let mut r = Record::new("bench", "counter", "fetch_add");
        r.param("threads", 2).param("contention", "shared");
        r.param("ordering", "relaxed");
        r.metrics.push(Metric::new(
            "ns_per_op",
            Unit::NanosPerOp,
            Source::ClockGettime,
            ns.to_vec(),
        ));
        r
    }

    fn html(t: &Table) -> String {
        let mut s = String::new();
        t.html(&mut s);
        s
    }

    #[test]
    fn the_timed_table_in_both_syntaxes() {
        let one = timed_record(&[40.0]);
        let rows = Row::of(&[&one]);
        let text = timed(&rows, Target::Terminal).to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0]
                .starts_with("| scenario | variant           | threads | line   | ops/s | ns/op |"),
            "{text}"
        );
        // One run: the terminal shows its cv (0%), the report none.
        assert!(
            lines[2]
                .starts_with("| counter  | fetch_add/relaxed | 2       | shared | -     | 40.0  |"),
            "{text}"
        );
        // The table is cut in two to fit 100 columns: cv and status are
        // in the second panel, after the keys.
        let second = text
            .split("\n\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{text}"));
        assert!(
            second.starts_with("| scenario | variant           | threads |"),
            "{text}"
        );
        assert!(second.contains("| 0.0% | ok     |"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
        let page = html(&timed(&rows, Target::Report));
        assert!(page.contains("<th scope=\"col\">contention</th>"), "{page}");
        assert!(
            !page.contains(">scenario<") && !page.contains(">cv (ns/op)<"),
            "{page}"
        );
        assert!(
            page.contains("<td class=\"n\">40.0</td><td class=\"n\">40.0–40.0</td>"),
            "{page}"
        );
        assert!(page.contains("<td class=\"ok\">ok</td>"), "{page}");
    }

    #[test]
    fn an_implausible_record_shows_no_figures_and_several_runs_get_a_run_column() {
        let mut r = timed_record(&[1.0, 2.0, 3.0]);
        r.flag(
            FlagKind::Implausible,
            Some("ns_per_op"),
            "faster than light",
        );
        let text = timed(&Row::of(&[&r]), Target::Terminal).to_string();
        assert!(text.contains("| implausible |"), "{text}");
        assert!(!text.contains("2.00"), "{text}");
        let rows = [Row {
            run: Some("A"),
            record: &r,
        }];
        let page = html(&timed(&rows, Target::Report));
        assert!(
            page.contains("<th scope=\"col\">run</th><th scope=\"col\">variant</th>"),
            "{page}"
        );
        assert!(
            page.contains("<td class=\"bad\">implausible</td>"),
            "{page}"
        );
        assert!(
            page.contains("<tr><td>A</td><td>fetch_add/relaxed</td>"),
            "{page}"
        );
    }

    #[test]
    fn round_trips_are_a_matrix_in_the_terminal_and_a_list_in_the_report() {
        let mut r = Record::new("bench", "pingpong", "load-from-modified");
        r.param("cpu_a", 0).param("cpu_b", 1);
        r.metrics.push(Metric::new(
            "ns_per_roundtrip",
            Unit::NanosPerOp,
            Source::ClockGettime,
            vec![687.0],
        ));
        let rows = Row::of(&[&r]);
        assert_eq!(
            round_trip(&rows, Target::Terminal).to_string(),
            "| round trip ns (ref-cyc) | cpu 0   | cpu 1   |\n\
             |-------------------------|---------|---------|\n\
             | cpu 0                   | -       | 687 (-) |\n\
             | cpu 1                   | 687 (-) | -       |"
        );
        let page = html(&round_trip(&rows, Target::Report));
        assert!(
            page.contains(
                "<td>cpu 0 ↔ cpu 1</td><td>load-from-modified</td><td class=\"n\">687</td>"
            ),
            "{page}"
        );
        // The blank ref-cycles and cv columns are left out.
        assert!(!page.contains("ref-cyc"), "{page}");
    }

    #[test]
    fn the_terminal_view_prints_each_kind_then_flags_and_notes_once() {
        let mut a = timed_record(&[40.0]);
        a.notes.push("a note".into());
        let mut b = timed_record(&[50.0]);
        b.notes.push("a note".into());
        b.flag(FlagKind::NotContended, None, "ran one at a time");
        let mut fixed = Record::new("bench", "lock", "tas");
        fixed.param("mode", "fixed-work").param("increments", 2000);
        let report = Report::new("bench", atomlab_core::Machine::detect(), vec![a, b, fixed]);
        let mut out = Vec::new();
        write_terminal(&mut out, &report).unwrap();
        let out = String::from_utf8(out).unwrap();
        let timed_at = out.find("| scenario |").expect("a timed table");
        let fixed_at = out.find("| lock |").expect("a fixed-work table");
        assert!(timed_at < fixed_at, "{out}");
        assert!(out.contains("\nnot contended as asked: counter fetch_add/relaxed threads=2: ran one at a time\n"), "{out}");
        assert_eq!(out.matches("note: a note").count(), 1, "{out}");
    }
}
