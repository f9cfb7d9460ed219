//! A/B comparison of atomlab records: two sets of [`Record`]s (two runs,
//! two labels, all shards of a label, or N interleaved runs each) matched
//! by what they measured, then judged metric by metric with [`compare`].
//!
//! Matching: capability, scenario, variant and parameters, leaving out the
//! parameters that describe how a run went rather than what it measured
//! ([`VOLATILE_PARAMETERS`]: the calibrated batch, the CPUs the threads
//! landed on, the seed, the number of runs, a file's path, and for `load`
//! the server under test: its URL, spawn command and PIDs, which are what an
//! A/B of two servers or builds changes). Records with
//! the same key on one side (shards, repeated runs) pool their samples.
//!
//! Metrics compared: the timings and rates, each with its direction (ops/s
//! and fairness higher is better; ns/op, cycles, instructions, events and
//! seconds lower is better; a loaded server's CPU % lower is better). Counts (a checker's states, an audit's
//! instructions) are deterministic: a change there shows as a verdict or
//! observation change. Descriptive figures (CPU %, parallelism) are not
//! judged. A record that carries a verdict or an observation (stress,
//! check) is compared by it first: a changed verdict is listed before any
//! metric and, when it is worse, counts as a regression.

use std::collections::BTreeMap;

use atomlab_core::{Record, Unit, Verdict as RecordVerdict};

use crate::{compare, regression_beyond, Comparison, Direction, Settings};

/// Parameters that say how a run went, not what it measured.
pub const VOLATILE_PARAMETERS: &[&str] = &[
    "batch",
    "pinned_cpus",
    "seed",
    "runs",
    "warmup_s",
    "file",
    "path",
    "shard",
    "observation",
    "data_race",
    "mapping",
    // load: the server under test (what an A/B of two servers changes) and
    // whether Ctrl-C cut the run short.
    "url",
    "spawn",
    "server_pids",
    "interrupted",
];

/// What identifies a measured thing across runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// `bench`, `stress`, `check`…
    pub capability: String,
    /// The scenario (check: the test).
    pub scenario: String,
    /// The variant (check: the model).
    pub variant: String,
    /// The parameters that shaped it, as `k=v` pairs.
    pub parameters: String,
}

impl Key {
    /// The key of `r`.
    pub fn of(r: &Record) -> Key {
        let params: Vec<String> = r
            .parameters
            .iter()
            .filter(|(k, _)| !VOLATILE_PARAMETERS.contains(&k.as_str()))
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                v => format!("{k}={v}"),
            })
            .collect();
        Key {
            capability: r.capability.clone(),
            scenario: r.scenario.clone(),
            variant: r.variant.clone(),
            parameters: params.join(" "),
        }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.capability, self.scenario, self.variant)?;
        if !self.parameters.is_empty() {
            write!(f, " [{}]", self.parameters)?;
        }
        Ok(())
    }
}

/// The direction of a metric, or `None` when it is not judged.
pub fn direction(name: &str, unit: Unit) -> Option<Direction> {
    match unit {
        Unit::OpsPerSecond | Unit::BytesPerSecond => Some(Direction::HigherIsBetter),
        Unit::NanosPerOp
        | Unit::RefCyclesPerOp
        | Unit::CoreCyclesPerOp
        | Unit::InstructionsPerOp
        | Unit::EventsPerOp
        | Unit::Seconds => Some(Direction::LowerIsBetter),
        Unit::Ratio if name == "fairness" => Some(Direction::HigherIsBetter),
        // A server's CPU for the same load (load's headline, and 004's
        // measure) is a cost; a benchmark thread's CPU % only describes.
        Unit::Percent if name.starts_with("server_cpu") => Some(Direction::LowerIsBetter),
        Unit::Ratio | Unit::Percent | Unit::Count => None,
    }
}

/// One judged metric of one matched record.
#[derive(Debug, Clone)]
pub struct MetricRow {
    /// What was measured.
    pub key: Key,
    /// The metric's name.
    pub metric: String,
    /// Its unit.
    pub unit: Unit,
    /// The statistics; `None` when one side has no usable samples.
    pub comparison: Option<Comparison>,
    /// Significantly worse beyond the gate's threshold.
    pub regression: bool,
}

/// A verdict or observation that differs between A and B.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictChange {
    /// What was judged.
    pub key: Key,
    /// Before (A) and after (B), in the record's words.
    pub before: String,
    /// After.
    pub after: String,
    /// Whether the change is for the worse.
    pub regression: bool,
}

/// Everything `atomlab compare` reports.
#[derive(Debug, Clone, Default)]
pub struct AbResult {
    /// Changed verdicts and observations, listed first.
    pub verdict_changes: Vec<VerdictChange>,
    /// Judged metrics, in A's record order.
    pub rows: Vec<MetricRow>,
    /// Records only in A.
    pub only_a: Vec<Key>,
    /// Records only in B.
    pub only_b: Vec<Key>,
}

impl AbResult {
    /// Regressions: worse verdicts plus metrics worse beyond the threshold.
    pub fn regressions(&self) -> usize {
        self.verdict_changes.iter().filter(|c| c.regression).count()
            + self.rows.iter().filter(|r| r.regression).count()
    }
}

/// Pooled records of one side: per key, each metric's samples, and the
/// verdict words seen.
struct Side {
    order: Vec<Key>,
    metrics: BTreeMap<Key, Vec<(String, Unit, Vec<f64>)>>,
    verdicts: BTreeMap<Key, Vec<String>>,
}

fn verdict_words(r: &Record) -> Option<String> {
    if let Some(obs) = r.parameters.get("observation").and_then(|o| o.as_str()) {
        return Some(obs.to_string());
    }
    r.verdict.map(|v| {
        match v {
            RecordVerdict::Pass => "PASS",
            RecordVerdict::Fail => "FAIL",
            RecordVerdict::NotObserved => "NOT_OBSERVED",
            RecordVerdict::Timeout => "TIMEOUT",
            RecordVerdict::Bound => "BOUND",
        }
        .to_string()
    })
}

fn pool<'a>(records: impl IntoIterator<Item = &'a Record>) -> Side {
    let mut side = Side {
        order: Vec::new(),
        metrics: BTreeMap::new(),
        verdicts: BTreeMap::new(),
    };
    for r in records {
        let key = Key::of(r);
        if !side.metrics.contains_key(&key) {
            side.order.push(key.clone());
        }
        let ms = side.metrics.entry(key.clone()).or_default();
        for m in &r.metrics {
            match ms.iter_mut().find(|(n, _, _)| *n == m.name) {
                Some((_, _, samples)) => samples.extend(&m.samples),
                None => ms.push((m.name.clone(), m.unit, m.samples.clone())),
            }
        }
        if let Some(v) = verdict_words(r) {
            side.verdicts.entry(key).or_default().push(v);
        }
    }
    side
}

/// Whether going from `before` to `after` is worse. For check's
/// observations any change is (the memory model or the test changed its
/// answer); for stress, a move to FAIL, TIMEOUT or BOUND, or a broken
/// variant's detector going from FAIL to NOT_OBSERVED.
fn worse(capability: &str, before: &str, after: &str) -> bool {
    if capability == "check" {
        return before != after;
    }
    matches!(after, "FAIL" | "TIMEOUT" | "BOUND") || (before == "FAIL" && after == "NOT_OBSERVED")
}

/// Summarises the verdicts of pooled runs: one word, or `MIXED(a,b)`.
fn one_word(words: &[String]) -> String {
    let mut w: Vec<&String> = words.iter().collect();
    w.sort();
    w.dedup();
    match w.as_slice() {
        [one] => (*one).clone(),
        many => format!(
            "MIXED({})",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

/// Compares records `a` (before) with `b` (after). `metric` restricts the
/// judged metrics to one name; `gate` is the threshold (a fraction) beyond
/// which a significant change for the worse is a regression.
pub fn compare_records<'a>(
    a: impl IntoIterator<Item = &'a Record>,
    b: impl IntoIterator<Item = &'a Record>,
    settings: Settings,
    metric: Option<&str>,
    gate: f64,
) -> AbResult {
    let (a, b) = (pool(a), pool(b));
    let mut out = AbResult::default();
    for key in &a.order {
        let Some(mb) = b.metrics.get(key) else {
            out.only_a.push(key.clone());
            continue;
        };
        if let (Some(va), Some(vb)) = (a.verdicts.get(key), b.verdicts.get(key)) {
            let (before, after) = (one_word(va), one_word(vb));
            if before != after {
                out.verdict_changes.push(VerdictChange {
                    regression: worse(&key.capability, &before, &after),
                    key: key.clone(),
                    before,
                    after,
                });
            }
        }
        if key.capability == "check" || key.capability == "audit" {
            continue; // deterministic: the verdicts say it
        }
        for (name, unit, sa) in &a.metrics[key] {
            if metric.is_some_and(|m| m != name) {
                continue;
            }
            let Some(dir) = direction(name, *unit) else {
                continue;
            };
            let Some((_, _, sb)) = mb.iter().find(|(n, _, _)| n == name) else {
                continue;
            };
            let comparison = compare(sa, sb, dir, settings);
            out.rows.push(MetricRow {
                key: key.clone(),
                metric: name.clone(),
                unit: *unit,
                regression: comparison
                    .as_ref()
                    .is_some_and(|c| regression_beyond(c, gate)),
                comparison,
            });
        }
    }
    for key in &b.order {
        if !a.metrics.contains_key(key) {
            out.only_b.push(key.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomlab_core::{Metric, Source};

    fn bench(variant: &str, threads: u64, ns: &[f64], pinned: u64) -> Record {
        let mut r = Record::new("bench", "counter", variant);
        r.param("threads", threads).param("pinned_cpus", pinned);
        r.metrics.push(Metric::new(
            "ns_per_op",
            Unit::NanosPerOp,
            Source::ClockGettime,
            ns.to_vec(),
        ));
        r.metrics.push(Metric::new(
            "ops_per_sec",
            Unit::OpsPerSecond,
            Source::ClockGettime,
            ns.iter().map(|n| threads as f64 * 1e9 / n).collect(),
        ));
        r.metrics.push(Metric::new(
            "cpu_utilisation",
            Unit::Percent,
            Source::Rusage,
            vec![100.0; ns.len()],
        ));
        r
    }

    #[test]
    fn matches_by_what_was_measured_and_judges_with_direction() {
        let a = [
            bench("fetch_add", 1, &[3.0, 3.01, 2.99, 3.02, 2.98], 0),
            bench("cas_loop", 1, &[4.0, 4.001, 3.999, 4.002, 3.998], 0),
            bench("gone", 1, &[1.0], 0),
        ];
        // Same things on other CPUs (a volatile parameter), fetch_add 20 %
        // slower, cas_loop unchanged, and one new record.
        let b = [
            bench("fetch_add", 1, &[3.6, 3.61, 3.59, 3.62, 3.58], 1),
            bench("cas_loop", 1, &[4.0, 4.001, 3.999, 4.002, 3.998], 1),
            bench("new", 1, &[1.0], 1),
        ];
        let r = compare_records(&a, &b, Settings::default(), None, 0.01);
        assert_eq!(r.only_a.len(), 1);
        assert_eq!(r.only_b.len(), 1);
        assert_eq!(r.only_a[0].variant, "gone");
        // cpu_utilisation is descriptive: two judged metrics per record.
        assert_eq!(r.rows.len(), 4);
        let fa_ns = &r.rows[0];
        assert_eq!(
            (fa_ns.key.variant.as_str(), fa_ns.metric.as_str()),
            ("fetch_add", "ns_per_op")
        );
        let c = fa_ns.comparison.unwrap();
        assert_eq!(c.verdict, crate::Verdict::Worse);
        assert!((c.change - 0.2).abs() < 0.01);
        assert!(fa_ns.regression);
        // ops/s fell: worse too, by its own direction.
        assert_eq!(r.rows[1].comparison.unwrap().verdict, crate::Verdict::Worse);
        assert_eq!(
            r.rows[2].comparison.unwrap().verdict,
            crate::Verdict::NoChange
        );
        assert_eq!(r.regressions(), 2);
        // A looser gate lets the same 20 % through.
        let r = compare_records(&a, &b, Settings::default(), Some("ns_per_op"), 0.5);
        assert_eq!(r.rows.len(), 2);
        assert_eq!(r.regressions(), 0);
    }

    #[test]
    fn two_servers_under_the_same_load_are_matched() {
        // 001: the same load against two nginx builds or configurations.
        let load = |url: &str, spawn: &str| {
            let mut r = Record::new("load", "http", "rate");
            r.param("url", url)
                .param("spawn", spawn)
                .param("rate", 10_000.0)
                .param("connections", 32);
            r
        };
        let a = [load("http://127.0.0.1:8081/", "nginx -c one.conf")];
        let b = [load("http://127.0.0.1:8082/", "nginx -c two.conf")];
        let r = compare_records(&a, &b, Settings::default(), None, 0.01);
        assert!(r.only_a.is_empty() && r.only_b.is_empty());
        // A different offered load is a different measurement.
        let mut c = load("http://127.0.0.1:8082/", "nginx -c two.conf");
        c.param("rate", 20_000.0);
        let r = compare_records(&a, &[c], Settings::default(), None, 0.01);
        assert_eq!((r.only_a.len(), r.only_b.len()), (1, 1));
    }

    #[test]
    fn shards_pool_their_samples() {
        let a = [
            bench("fetch_add", 1, &[3.0, 3.01], 0),
            bench("fetch_add", 1, &[2.99, 3.02, 2.98], 1),
        ];
        let b = [bench("fetch_add", 1, &[3.0, 3.01, 2.99, 3.02, 2.98], 0)];
        let r = compare_records(&a, &b, Settings::default(), Some("ns_per_op"), 0.01);
        let c = r.rows[0].comparison.unwrap();
        assert_eq!((c.n_a, c.n_b), (5, 5));
        assert_eq!(c.verdict, crate::Verdict::NoChange);
    }

    #[test]
    fn changed_verdicts_come_first_and_count() {
        let rec = |cap: &str, obs: Option<&str>, v: Option<RecordVerdict>| {
            let mut r = Record::new(cap, "LB+fence.acqs", "c11");
            if let Some(o) = obs {
                r.param("observation", o);
            }
            r.verdict = v;
            r
        };
        let a = [
            rec("check", Some("Never"), None),
            rec("stress", None, Some(RecordVerdict::Pass)),
        ];
        let b = [
            rec("check", Some("Sometimes"), None),
            rec("stress", None, Some(RecordVerdict::Fail)),
        ];
        let r = compare_records(&a, &b, Settings::default(), None, 0.01);
        assert_eq!(r.verdict_changes.len(), 2);
        assert_eq!(r.verdict_changes[0].before, "Never");
        assert_eq!(r.verdict_changes[0].after, "Sometimes");
        assert!(r.verdict_changes.iter().all(|c| c.regression));
        assert_eq!(r.regressions(), 2);
        // A stress fix (FAIL -> PASS) is listed, not a regression.
        let r = compare_records(&b[1..], &a[1..], Settings::default(), None, 0.01);
        assert_eq!(r.verdict_changes.len(), 1);
        assert_eq!(r.regressions(), 0);
    }
}
