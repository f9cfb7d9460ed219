//! A/B comparison of atomlab records: two sets of [`Record`]s (two runs,
//! two labels, all shards of a label, or N interleaved runs each) matched
//! by what they measured, then judged metric by metric with [`compare`].
//!
//! # Matching
//!
//! Capability, scenario, variant and parameters, leaving out the
//! parameters that describe how a run went rather than what it measured
//! ([`VOLATILE_PARAMETERS`]: the calibrated batch, the CPUs the threads
//! landed on, the seed, the number of runs, a file's path, and for `load`
//! the server under test: its URL, spawn command and PIDs, which are what an
//! A/B of two servers or builds changes; and stress's replay command,
//! which carries the seed). Records with
//! the same key on one side (shards, repeated runs) pool their samples.
//!
//! **A user's plugin** (issue 25) is matched by its variant's name, never
//! by its build ([`PLUGIN_BUILD_PARAMETERS`]: the file as given, its
//! SHA-256, what its functions do with atomics): `compare --interleave 5
//! -- bench lock --plugin old.so -- bench lock --plugin new.so` pairs
//! old.so's `c-ticket` with new.so's, although the built-in records beside
//! them carry no plugin at all. Where each side's plugin records name one
//! build and the two differ, the builds are reported in
//! [`AbResult::across`], as the fields set throughout are.
//!
//! **What is being compared.** When the variant, or a parameter, has one
//! value throughout A and another one throughout B (all of A is `--variant
//! ttas`, all of B `--variant mcs`; or every record of A has `threads=1`
//! and every one of B `threads=2`), no record could match with it in the
//! key, and it is what the two sides set differently on purpose: it is left
//! out of the key and reported in [`AbResult::across`]. A field that varies
//! within a side stays in the key.
//!
//! # Judging
//!
//! Metrics compared: the timings and rates, each with its direction (ops/s
//! and fairness higher is better; ns/op, cycles, instructions, events and
//! seconds lower is better; a loaded server's CPU % lower is better). Counts (a checker's states, an audit's
//! instructions) are deterministic: a change there shows as a verdict or
//! observation change. Descriptive figures (CPU %, parallelism) are not
//! judged. A record that carries a verdict or an observation (stress,
//! check) is compared by it first: a changed verdict is listed before any
//! metric and, when it is worse, counts as a regression.
//!
//! **Many rows at once.** Every judged row is a test at `alpha`, so a
//! comparison of 12 metrics at 0.05 would call something "worse" by chance
//! about half the time. The rows' Mann–Whitney p-values are therefore
//! adjusted with Holm–Bonferroni ([`crate::holm`], Holm 1979) over all
//! judged rows of the comparison, and each row is judged with its adjusted
//! p ([`Comparison::p_judged`]): the chance that even one row of an
//! unchanged pair is called better or worse stays at most `alpha`. The
//! price is power: with `m` judged rows the smallest p must be below
//! `alpha/m`, and 5 against 5 runs reach at best 0.0079, so at most 6 rows
//! can be told apart with 5 runs a side at 0.05.
//!
//! **Tail percentiles.** A per-run p99.99 is an estimate from that run's
//! samples and means little unless enough of them lie beyond it. A metric
//! named like `latency_p9999_s` (quantile `q` = 0.9999 read from the digits
//! after `p`) is judged only when every run on both sides rests on at least
//! `10 / (1 − q)` samples (ten beyond the quantile: 1 000 for a p99, 100 000
//! for a p99.99); a maximum (`…_max_…`) is one extreme sample and is never
//! judged. Such rows are shown with the reason in
//! [`MetricRow::not_judged`] and stay out of the Holm family. The samples
//! under a run are its `requests` count (load), or its rate times
//! `duration_s` (bench at a fixed rate); when neither is recorded, only
//! quantiles up to the median are judged.
//!
//! **Partial runs.** A run cut short (a `load` stopped by Ctrl-C carries
//! `interrupted=true`) measured less than it was asked to; [`is_partial`]
//! finds such records so that callers can leave them out of a pool of
//! complete runs (`atomlab compare` does unless `--include-partial`).

use std::collections::{BTreeMap, BTreeSet};

use atomlab_core::{Metric, Record, Source, Unit, Verdict, AUDIT_PACKAGE_WORST_FIRST};

use crate::{compare, holm, regression_beyond, Comparison, Direction, Settings};

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
    // stress: the command that re-runs a cell, which carries the seed (a
    // fresh one each run) and a plugin's path.
    "replay",
];

/// Parameters that name the build of a user's plugin, never part of the
/// match (see the module documentation): the file as given, its SHA-256,
/// and the audit line of its functions.
pub const PLUGIN_BUILD_PARAMETERS: &[&str] = &["plugin", "plugin_sha256", "plugin_audit"];

/// Whether `r` is a partial result: a run cut short before its measured
/// window ended (`interrupted=true`, as `load` marks a Ctrl-C'd run).
pub fn is_partial(r: &Record) -> bool {
    ["interrupted", "partial"]
        .iter()
        .any(|k| r.parameters.get(*k) == Some(&serde_json::Value::Bool(true)))
}

/// One side of a comparison: its name for people and its records.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// `run ID`, `label L (N runs)`, a file name…
    pub name: String,
    /// The records compared.
    pub records: Vec<Record>,
    /// Partial records left out (see [`Side::complete_only`]).
    pub partial: usize,
}

impl Side {
    /// A side of these records, none left out yet.
    pub fn new(name: impl Into<String>, records: Vec<Record>) -> Side {
        Side {
            name: name.into(),
            records,
            partial: 0,
        }
    }

    /// The side without its partial records ([`is_partial`]), counting them.
    pub fn complete_only(mut self) -> Side {
        let before = self.records.len();
        self.records.retain(|r| !is_partial(r));
        self.partial += before - self.records.len();
        self
    }
}

/// What identifies a measured thing across runs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// `bench`, `stress`, `check`…
    pub capability: String,
    /// The scenario (check: the test).
    pub scenario: String,
    /// The variant (check: the model); `A→B` when the two sides differ
    /// in it throughout (see the module documentation).
    pub variant: String,
    /// The parameters that shaped it, as `k=v` pairs.
    pub parameters: String,
}

/// A parameter's value as text (a string without its quotes).
fn param_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The matched parameters of `r` (volatile ones and a plugin's build left
/// out), as text.
fn key_params(r: &Record) -> impl Iterator<Item = (&String, String)> {
    r.parameters
        .iter()
        .filter(|(k, _)| {
            !VOLATILE_PARAMETERS.contains(&k.as_str())
                && !PLUGIN_BUILD_PARAMETERS.contains(&k.as_str())
        })
        .map(|(k, v)| (k, param_text(v)))
}

impl Key {
    /// The key of `r`.
    pub fn of(r: &Record) -> Key {
        Key::without(r, None, &BTreeSet::new())
    }

    /// The key of `r` with the variant replaced by `variant` and the
    /// parameters in `dropped` left out.
    fn without(r: &Record, variant: Option<&str>, dropped: &BTreeSet<String>) -> Key {
        let params: Vec<String> = key_params(r)
            .filter(|(k, _)| !dropped.contains(k.as_str()))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        Key {
            capability: r.capability.clone(),
            scenario: r.scenario.clone(),
            variant: variant.unwrap_or(&r.variant).to_string(),
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

/// A field the two sides differ in throughout, left out of the match key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Across {
    /// `variant` or a parameter's name.
    pub field: String,
    /// Its one value in A (`-` when A's records lack it).
    pub a: String,
    /// Its one value in B.
    pub b: String,
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

/// What part of a distribution a metric's name says it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tail {
    /// A quantile, e.g. 0.9999 for `latency_p9999_s`.
    Quantile(f64),
    /// The maximum, e.g. `latency_max_s`.
    Max,
}

/// The quantile or maximum a metric's name stands for: a `_`-separated
/// part `pDIGITS` is the quantile `0.DIGITS` (`p50` 0.5, `p999` 0.999), a
/// part `max` the maximum; `None` for anything else.
pub fn tail_of(name: &str) -> Option<Tail> {
    name.split('_').find_map(|part| {
        if part == "max" {
            return Some(Tail::Max);
        }
        let digits = part.strip_prefix('p')?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        format!("0.{digits}").parse().ok().map(Tail::Quantile)
    })
}

/// Samples each run of `r` rests on (the fewest over its runs): its
/// `requests` count, or a rate times `duration_s`; `None` when `r`
/// records neither.
fn samples_underneath(r: &Record) -> Option<f64> {
    let fewest = |v: &[f64]| v.iter().copied().reduce(f64::min);
    if let Some(m) = r.metrics.iter().find(|m| m.name == "requests") {
        return fewest(&m.samples);
    }
    let duration = r.parameters.get("duration_s")?.as_f64()?;
    let rate = r
        .metrics
        .iter()
        .filter(|m| m.unit == Unit::OpsPerSecond)
        .min_by_key(|m| m.name != "rate_achieved")?;
    fewest(&rate.samples).map(|x| x * duration)
}

/// Why a tail metric cannot be judged with `underneath` samples per run
/// (the fewest on either side), or `None` when it can.
fn tail_unjudgeable(tail: Tail, underneath: Option<f64>) -> Option<String> {
    let q = match tail {
        Tail::Max => {
            return Some(
                "a maximum is one extreme sample, not an estimate: shown, not judged".into(),
            )
        }
        Tail::Quantile(q) => q,
    };
    // Less a hair: 1 − 0.9999 is 9.9999…e-5 in binary floating point.
    let need = (10.0 / (1.0 - q) * (1.0 - 1e-9)).ceil();
    let pct = format!("p{}", (q * 100.0 * 1e6).round() / 1e6);
    match underneath {
        Some(n) if n >= need => None,
        Some(n) => Some(format!(
            "a run's {pct} rests on {n:.0} samples; judging it needs {need:.0} (10 beyond it)"
        )),
        None if need <= 20.0 => None,
        None => Some(format!(
            "how many samples a run's {pct} rests on is not recorded; judging it needs {need:.0}"
        )),
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
    /// The statistics; `None` when one side has no usable samples. Its
    /// verdict is judged with the Holm-adjusted p-value.
    pub comparison: Option<Comparison>,
    /// Significantly worse beyond the gate's threshold.
    pub regression: bool,
    /// Why the row is shown but not judged (a tail percentile with too few
    /// samples under it, a maximum); such a row is never a regression and
    /// its comparison is marked not significant.
    pub not_judged: Option<String>,
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
    /// Keys found on both sides.
    pub matched: usize,
    /// Matched keys with a verdict or observation on both sides.
    pub verdicts_compared: usize,
    /// Fields the sides differ in throughout, left out of the key.
    pub across: Vec<Across>,
    /// Rows judged, the size of the Holm–Bonferroni family.
    pub judged: usize,
}

impl AbResult {
    /// Regressions: worse verdicts plus metrics worse beyond the threshold.
    pub fn regressions(&self) -> usize {
        self.verdict_changes.iter().filter(|c| c.regression).count()
            + self.rows.iter().filter(|r| r.regression).count()
    }

    /// Whether anything at all was compared: a verdict or a metric row.
    pub fn compared_anything(&self) -> bool {
        self.verdicts_compared > 0 || !self.rows.is_empty()
    }
}

impl AbResult {
    /// The comparison as records of the one document shape (`atomlab
    /// compare --json`): capability `compare`, scenario = the compared
    /// record, variant = the metric; A and B named `a` and `b`.
    pub fn records(&self, a: &str, b: &str) -> Vec<Record> {
        let r = self;
        let mut out = Vec::new();
        for c in &r.verdict_changes {
            let mut rec = Record::new("compare", &c.key.to_string(), "verdict");
            rec.param("a", a)
                .param("b", b)
                .param("before", c.before.clone())
                .param("after", c.after.clone());
            rec.verdict = Some(if c.regression {
                Verdict::Fail
            } else {
                Verdict::Pass
            });
            out.push(rec);
        }
        for row in &r.rows {
            let mut rec = Record::new("compare", &row.key.to_string(), &row.metric);
            rec.param("a", a).param("b", b);
            if let Some(why) = &row.not_judged {
                rec.param("not_judged", why.clone());
            }
            if let Some(c) = &row.comparison {
                rec.param("n_a", c.n_a).param("n_b", c.n_b);
                let f = |name: &'static str, unit: Unit, v: f64| {
                    Metric::new(name, unit, Source::Derived, vec![v])
                };
                rec.metrics.push(f("median_a", row.unit, c.median_a));
                rec.metrics.push(f("median_b", row.unit, c.median_b));
                rec.metrics
                    .push(f("change_percent", Unit::Percent, c.change * 100.0));
                rec.metrics
                    .push(f("ci_low_percent", Unit::Percent, c.ci_low * 100.0));
                rec.metrics
                    .push(f("ci_high_percent", Unit::Percent, c.ci_high * 100.0));
                rec.metrics.push(f("p_value", Unit::Ratio, c.p_value));
                if row.not_judged.is_none() {
                    rec.metrics.push(f("p_holm", Unit::Ratio, c.p_judged));
                }
                rec.param(
                    "verdict",
                    if row.not_judged.is_some() {
                        "not judged"
                    } else {
                        c.verdict.as_str()
                    },
                );
            }
            rec.verdict = Some(if row.regression {
                Verdict::Fail
            } else {
                Verdict::Pass
            });
            out.push(rec);
        }
        out
    }
}

/// Pooled records of one side: per key, each metric's samples, the
/// verdict words seen and the samples under each record's runs.
struct Pooled {
    order: Vec<Key>,
    metrics: BTreeMap<Key, Vec<(String, Unit, Vec<f64>)>>,
    verdicts: BTreeMap<Key, Vec<String>>,
    underneath: BTreeMap<Key, Vec<Option<f64>>>,
}

fn verdict_words(r: &Record) -> Option<String> {
    if let Some(obs) = r.parameters.get("observation").and_then(|o| o.as_str()) {
        return Some(obs.to_string());
    }
    r.verdict.map(|v| v.as_str().to_string())
}

fn pool(records: &[&Record], key: &dyn Fn(&Record) -> Key) -> Pooled {
    let mut side = Pooled {
        order: Vec::new(),
        metrics: BTreeMap::new(),
        verdicts: BTreeMap::new(),
        underneath: BTreeMap::new(),
    };
    for r in records {
        let key = key(r);
        if !side.metrics.contains_key(&key) {
            side.order.push(key.clone());
        }
        let ms = side.metrics.entry(key.clone()).or_default();
        for m in &r.metrics {
            match ms.iter_mut().find(|(n, _, _)| *n == m.name) {
                Some((_, _, samples)) => samples.extend(&m.samples),
                None => ms.push((m.name.to_string(), m.unit, m.samples.clone())),
            }
        }
        side.underneath
            .entry(key.clone())
            .or_default()
            .push(samples_underneath(r));
        if let Some(v) = verdict_words(r) {
            side.verdicts.entry(key).or_default().push(v);
        }
    }
    side
}

/// The one value `field` has throughout `records` (`None` inside: absent),
/// or `None` when it varies or there are no records.
fn constant(
    records: &[&Record],
    field: &dyn Fn(&Record) -> Option<String>,
) -> Option<Option<String>> {
    let first = field(records.first()?);
    records[1..]
        .iter()
        .all(|r| field(r) == first)
        .then_some(first)
}

/// The fields (variant, parameters) that have one value throughout `a`
/// and another one throughout `b`.
fn fields_across(a: &[&Record], b: &[&Record]) -> Vec<Across> {
    let mut out = Vec::new();
    let show = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    if let (Some(va), Some(vb)) = (
        constant(a, &|r| Some(r.variant.clone())),
        constant(b, &|r| Some(r.variant.clone())),
    ) {
        if va != vb {
            out.push(Across {
                field: "variant".into(),
                a: show(va),
                b: show(vb),
            });
        }
    }
    let names: BTreeSet<&String> = a
        .iter()
        .chain(b)
        .flat_map(|r| key_params(r).map(|(k, _)| k))
        .collect();
    for name in names {
        let value = |r: &Record| key_params(r).find(|(k, _)| *k == name).map(|(_, v)| v);
        if let (Some(va), Some(vb)) = (constant(a, &value), constant(b, &value)) {
            if va != vb {
                out.push(Across {
                    field: name.clone(),
                    a: show(va),
                    b: show(vb),
                });
            }
        }
    }
    // A plugin's build: out of the key in any case; said when the records
    // that carry it name one build on each side and the two differ.
    for name in PLUGIN_BUILD_PARAMETERS {
        let build = |side: &[&Record]| -> Option<String> {
            let mut values = side
                .iter()
                .filter_map(|r| r.parameters.get(*name))
                .map(param_text);
            let first = values.next()?;
            values.all(|v| v == first).then_some(first)
        };
        if let (Some(va), Some(vb)) = (build(a), build(b)) {
            if va != vb {
                out.push(Across {
                    field: name.to_string(),
                    a: va,
                    b: vb,
                });
            }
        }
    }
    out
}

/// Whether going from `before` to `after` is worse. For check's
/// observations any change is (the memory model or the test changed its
/// answer); for an audited package, a move towards "needs ARMv8.1"
/// ([`AUDIT_PACKAGE_WORST_FIRST`]); for stress, a move to FAIL, TIMEOUT or
/// BOUND, or a broken variant's detector going from FAIL to NOT_OBSERVED.
fn worse(capability: &str, before: &str, after: &str) -> bool {
    if capability == "check" {
        return before != after;
    }
    if capability == "audit" {
        let rank = |w: &str| AUDIT_PACKAGE_WORST_FIRST.iter().position(|x| *x == w);
        return match (rank(before), rank(after)) {
            (Some(b), Some(a)) => a < b,
            // A word this build does not know: a change to be looked at.
            _ => before != after,
        };
    }
    let (before, after) = (before.parse(), after.parse());
    matches!(after, Ok(Verdict::Fail | Verdict::Timeout | Verdict::Bound))
        || (before == Ok(Verdict::Fail) && after == Ok(Verdict::NotObserved))
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
/// which a significant change for the worse is a regression. Rows are
/// judged with Holm–Bonferroni-adjusted p-values over all judged rows, and
/// fields the sides differ in throughout are left out of the match key
/// (both in the module documentation).
pub fn compare_records<'a>(
    a: impl IntoIterator<Item = &'a Record>,
    b: impl IntoIterator<Item = &'a Record>,
    settings: Settings,
    metric: Option<&str>,
    gate: f64,
) -> AbResult {
    let (a, b): (Vec<&Record>, Vec<&Record>) = (a.into_iter().collect(), b.into_iter().collect());
    let across = fields_across(&a, &b);
    let variant = across
        .iter()
        .find(|x| x.field == "variant")
        .map(|x| format!("{}→{}", x.a, x.b));
    let dropped: BTreeSet<String> = across.iter().map(|x| x.field.clone()).collect();
    let key = |r: &Record| Key::without(r, variant.as_deref(), &dropped);
    let (a, b) = (pool(&a, &key), pool(&b, &key));
    let mut out = AbResult {
        across,
        ..AbResult::default()
    };
    for key in &a.order {
        let Some(mb) = b.metrics.get(key) else {
            out.only_a.push(key.clone());
            continue;
        };
        out.matched += 1;
        if let (Some(va), Some(vb)) = (a.verdicts.get(key), b.verdicts.get(key)) {
            out.verdicts_compared += 1;
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
        let underneath = a.underneath[key]
            .iter()
            .chain(&b.underneath[key])
            .try_fold(f64::INFINITY, |acc, n| n.map(|n| acc.min(n)));
        for (name, unit, sa) in &a.metrics[key] {
            // `--metric a,b`: comma-separated, as every list option.
            if metric.is_some_and(|m| !m.split(',').any(|one| one.trim() == name)) {
                continue;
            }
            let Some(dir) = direction(name, *unit) else {
                continue;
            };
            let Some((_, _, sb)) = mb.iter().find(|(n, _, _)| n == name) else {
                continue;
            };
            out.rows.push(MetricRow {
                key: key.clone(),
                metric: name.clone(),
                unit: *unit,
                regression: false,
                not_judged: tail_of(name).and_then(|t| tail_unjudgeable(t, underneath)),
                comparison: compare(sa, sb, dir, settings),
            });
        }
    }
    for key in &b.order {
        if !a.metrics.contains_key(key) {
            out.only_b.push(key.clone());
        }
    }
    judge_rows(&mut out, settings, gate);
    out
}

/// Why a comparison of two sides gives nothing to gate on (`atomlab
/// compare` exits 2: a comparison that compares nothing must not pass a CI
/// gate).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotCompared {
    /// The one metric asked for is in no record both sides share.
    NoSuchMetric(String),
    /// Nothing was compared at all; the sentence says why (a side without
    /// records, no record matching, no verdict or timing in common) and
    /// what to do.
    Nothing(String),
    /// One side offered a fixed rate (open loop, `--rate`) and the other
    /// ran as fast as it could (closed loop): the side that is open and
    /// its rate.
    OpenAgainstClosed {
        /// `A` or `B`.
        open: &'static str,
        /// Its offered rate, as recorded.
        rate: String,
    },
}

impl std::fmt::Display for NotCompared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotCompared::NoSuchMetric(m) => write!(
                f,
                "no metric named '{m}' in records both sides share (bench has ns_per_op, ops_per_sec, ref_cycles_per_op, fairness; fixed-work lock has seconds)"
            ),
            NotCompared::Nothing(why) => f.write_str(why),
            NotCompared::OpenAgainstClosed { open, rate } => {
                let closed = if *open == "A" { "B" } else { "A" };
                write!(
                    f,
                    "{open} offered a fixed rate ({rate}/s: an open loop) and {closed} ran as fast as it could (a closed loop): they answer different questions (a closed loop's latency leaves out the queueing an open loop sees, coordinated omission), so they are not compared; compare two runs at one --rate, or two without --rate"
                )
            }
        }
    }
}

impl std::error::Error for NotCompared {}

/// Compares side `b` with side `a` ([`compare_records`] with the gate at
/// `settings.threshold`), or says why nothing was compared: `metric` (the
/// one metric to judge) names none they share, or no verdict and no
/// metric row came out of it.
pub fn compare_sides(
    a: &Side,
    b: &Side,
    settings: Settings,
    metric: Option<&str>,
) -> Result<AbResult, NotCompared> {
    let result = compare_records(&a.records, &b.records, settings, metric, settings.threshold);
    // A rate on one side only: an open loop against a closed one.
    let unset = |v: &str| v == "null" || v == "-" || v == "max";
    if let Some(x) = result
        .across
        .iter()
        .find(|x| x.field == "rate" && unset(&x.a) != unset(&x.b))
    {
        let (open, rate) = if unset(&x.b) {
            ("A", &x.a)
        } else {
            ("B", &x.b)
        };
        return Err(NotCompared::OpenAgainstClosed {
            open,
            rate: rate.clone(),
        });
    }
    if let Some(m) = metric {
        // Each name asked for must be one both sides have.
        for one in m.split(',').map(str::trim) {
            if !result.rows.iter().any(|r| r.metric == one) {
                return Err(NotCompared::NoSuchMetric(one.to_string()));
            }
        }
    }
    if !result.compared_anything() {
        return Err(NotCompared::Nothing(nothing_compared(&result, a, b)));
    }
    Ok(result)
}

/// Why nothing was compared, and what to do.
fn nothing_compared(r: &AbResult, a: &Side, b: &Side) -> String {
    let mut why = if a.records.is_empty() || b.records.is_empty() {
        let (tag, side) = if a.records.is_empty() {
            ("A", a)
        } else {
            ("B", b)
        };
        format!(
            "nothing to compare: {tag} ({}) has no records{}",
            side.name,
            if side.partial > 0 {
                format!(
                    " besides {} partial one(s) (--include-partial pools them)",
                    side.partial
                )
            } else {
                String::new()
            }
        )
    } else if r.matched == 0 {
        let show = |keys: &[Key]| {
            let mut s: Vec<String> = keys.iter().take(3).map(|k| k.to_string()).collect();
            if keys.len() > 3 {
                s.push(format!("… {} more", keys.len() - 3));
            }
            s.join("; ")
        };
        format!(
            "nothing to compare: no record of A ({}) matches one of B ({}). Records match by capability, scenario, variant and parameters (a variant or parameter set throughout each side is left out); A has {}: {}; B has {}: {}",
            a.name,
            b.name,
            r.only_a.len(),
            show(&r.only_a),
            r.only_b.len(),
            show(&r.only_b)
        )
    } else {
        format!(
            "nothing to compare: {} record(s) of A and B match, but none carries a verdict or a timing both sides have",
            r.matched
        )
    };
    why.push_str(" (exit 2: a comparison that compares nothing must not pass a CI gate)");
    why
}

/// Holm–Bonferroni over the judged rows, then each row's verdict and
/// regression from its adjusted p.
fn judge_rows(out: &mut AbResult, settings: Settings, gate: f64) {
    let judged: Vec<usize> = (0..out.rows.len())
        .filter(|&i| out.rows[i].comparison.is_some() && out.rows[i].not_judged.is_none())
        .collect();
    let p: Vec<f64> = judged
        .iter()
        .filter_map(|&i| out.rows[i].comparison.map(|c| c.p_value))
        .collect();
    for (&i, p) in judged.iter().zip(holm(&p)) {
        let row = &mut out.rows[i];
        if let Some(c) = row.comparison.as_mut() {
            c.judge(p, settings);
            row.regression = regression_beyond(c, gate);
        }
    }
    for row in out.rows.iter_mut().filter(|r| r.not_judged.is_some()) {
        if let Some(c) = row.comparison.as_mut() {
            c.significant = false;
            c.verdict = crate::Difference::TooNoisy;
        }
    }
    out.judged = judged.len();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two sides that share nothing, a side of only partial records and
    /// a metric neither has are refused with what to do; a comparison
    /// with a row passes.
    #[test]
    fn comparing_nothing_is_refused_and_says_why() {
        let s = Settings::default();
        let side = |name: &str, records: Vec<Record>| Side::new(name, records);
        let a = side("run A", vec![bench("ttas", 1, &[10.0, 11.0, 12.0], 1)]);
        let b = side("run B", vec![bench("ttas", 1, &[10.5, 11.5, 12.5], 1)]);
        assert!(compare_sides(&a, &b, s, None).is_ok());
        let e = compare_sides(&a, &b, s, Some("nope")).unwrap_err();
        assert_eq!(e, NotCompared::NoSuchMetric("nope".into()));
        assert!(e.to_string().starts_with("no metric named 'nope'"), "{e}");
        // A list, comma-separated as every list option takes it.
        let both =
            compare_sides(&a, &b, Settings::default(), Some("ns_per_op,ops_per_sec")).unwrap();
        let names: std::collections::BTreeSet<&str> =
            both.rows.iter().map(|r| r.metric.as_str()).collect();
        assert_eq!(names, ["ns_per_op", "ops_per_sec"].into());
        let e = compare_sides(&a, &b, Settings::default(), Some("ns_per_op,nope")).unwrap_err();
        assert!(e.to_string().starts_with("no metric named 'nope'"), "{e}");
        let mut cut = bench("ttas", 1, &[10.0], 1);
        cut.param("interrupted", true);
        let only_partial = side("run C", vec![cut]).complete_only();
        let e = compare_sides(&a, &only_partial, s, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("nothing to compare: B (run C) has no records besides 1 partial one(s)")
                && e.ends_with("must not pass a CI gate)"),
            "{e}"
        );
        let mut other = bench("mcs", 2, &[10.0], 1);
        other.scenario = "lock".into();
        let e = compare_sides(&a, &side("run D", vec![other]), s, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no record of A (run A) matches one of B (run D)"),
            "{e}"
        );
    }

    #[test]
    fn complete_only_leaves_out_and_counts_partial_records() {
        let mut cut = bench("ttas", 1, &[10.0], 1);
        cut.param("interrupted", true);
        let mut whole = bench("mcs", 1, &[10.0], 1);
        whole.param("interrupted", false);
        let side = Side::new(
            "run x",
            vec![cut, whole.clone(), bench("tas", 1, &[1.0], 1)],
        );
        let side = side.complete_only();
        assert_eq!(side.partial, 1);
        let variants: Vec<&str> = side.records.iter().map(|r| r.variant.as_str()).collect();
        assert_eq!(variants, ["mcs", "tas"]);
        assert_eq!(side.records[0], whole);
        // Again: nothing more to leave out, the count stays.
        assert_eq!(side.complete_only().partial, 1);
    }
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

    /// `compare --json`'s records: one per metric row, named by the
    /// compared record and the metric, with both sides' medians, the
    /// verdict's word, and FAIL on a regression beyond the gate.
    #[test]
    fn records_say_each_row_and_fail_a_regression() {
        let a = [bench("ttas", 1, &[10.0, 10.1, 10.2, 9.9, 10.0], 1)];
        let b = [bench("ttas", 1, &[12.0, 12.1, 12.2, 11.9, 12.0], 1)];
        let r = compare_records(&a, &b, Settings::default(), Some("ns_per_op"), 0.01);
        let recs = r.records("run a", "run b");
        assert_eq!(recs.len(), 1);
        let rec = &recs[0];
        assert_eq!(rec.capability, "compare");
        assert_eq!(rec.variant, "ns_per_op");
        assert_eq!(rec.scenario, r.rows[0].key.to_string());
        assert_eq!(rec.parameters["a"], "run a");
        assert_eq!(rec.parameters["b"], "run b");
        assert_eq!(rec.parameters["verdict"], "worse");
        assert_eq!(rec.verdict, Some(Verdict::Fail));
        let median = |n: &str| rec.metric(n).and_then(|m| m.median()).unwrap();
        assert_eq!(median("median_a"), 10.0);
        assert_eq!(median("median_b"), 12.0);
        assert!((median("change_percent") - 20.0).abs() < 1e-9);
        assert!(rec.metric("p_holm").is_some());
    }

    /// Issue 27: a package that came to need ARMv8.1 was listed as a
    /// change but not counted as a regression (compare exited 0).
    #[test]
    fn a_package_moving_towards_armv8_1_is_a_regression_and_back_is_not() {
        let pkg = |obs: &str| {
            let mut r = Record::new("audit", "nginx", "package");
            r.param("observation", obs);
            r
        };
        let judge = |before: &str, after: &str| {
            let out = compare_records(
                [&pkg(before)],
                [&pkg(after)],
                Settings::default(),
                None,
                0.05,
            );
            assert_eq!(out.verdict_changes.len(), 1);
            out.verdict_changes[0].regression
        };
        assert!(judge("run_time_lse", "needs_armv8.1"));
        assert!(judge("no_atomics", "llsc_only"));
        assert!(!judge("needs_armv8.1", "run_time_lse"));
        assert!(!judge("llsc_only", "mixed"));
        assert!(judge("run_time_lse", "a_word_from_a_newer_atomlab"));
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
        assert_eq!(c.verdict, crate::Difference::Worse);
        assert!((c.change - 0.2).abs() < 0.01);
        assert!(fa_ns.regression);
        // ops/s fell: worse too, by its own direction.
        assert_eq!(
            r.rows[1].comparison.unwrap().verdict,
            crate::Difference::Worse
        );
        assert_eq!(
            r.rows[2].comparison.unwrap().verdict,
            crate::Difference::NoChange
        );
        assert_eq!(r.regressions(), 2);
        // A looser gate lets the same 20 % through.
        let r = compare_records(&a, &b, Settings::default(), Some("ns_per_op"), 0.5);
        assert_eq!(r.rows.len(), 2);
        assert_eq!(r.regressions(), 0);
    }

    /// `rate 5000.0 (A) vs null (B)` went through as an ordinary
    /// comparison: an open loop against a closed one is refused.
    #[test]
    fn an_open_loop_is_not_compared_with_a_closed_one() {
        let side = |rate: serde_json::Value, name: &str| {
            let mut r = Record::new("load", "http", "closed");
            r.param("url", "http://127.0.0.1:8081/").param("rate", rate);
            r.metrics.push(atomlab_core::Metric::new(
                "requests_per_sec",
                Unit::OpsPerSecond,
                atomlab_core::Source::ClockGettime,
                vec![100.0, 101.0, 99.0, 100.5, 100.2],
            ));
            Side::new(name, vec![r])
        };
        let open = side(serde_json::json!(5000.0), "open");
        let closed = side(serde_json::Value::Null, "closed");
        for (a, b, which) in [(&open, &closed, "A"), (&closed, &open, "B")] {
            match compare_sides(a, b, Settings::default(), None) {
                Err(NotCompared::OpenAgainstClosed { open, rate }) => {
                    assert_eq!((open, rate.as_str()), (which, "5000.0"));
                }
                other => panic!("{other:?}"),
            }
        }
        let e = compare_sides(&open, &closed, Settings::default(), None).unwrap_err();
        assert!(e.to_string().contains("coordinated omission"), "{e}");
        assert!(compare_sides(&open, &open, Settings::default(), None).is_ok());
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
        // A different offered load on each side throughout is what is
        // being compared, and said so.
        let mut c = load("http://127.0.0.1:8082/", "nginx -c two.conf");
        c.param("rate", 20_000.0);
        let r = compare_records(
            &a,
            std::slice::from_ref(&c),
            Settings::default(),
            None,
            0.01,
        );
        assert_eq!(r.matched, 1);
        assert_eq!(r.across[0].field, "rate");
        // Beside the same load, it is a different measurement.
        let two = [load("http://127.0.0.1:8082/", "nginx -c two.conf"), c];
        let r = compare_records(&a, &two, Settings::default(), None, 0.01);
        assert_eq!((r.only_a.len(), r.only_b.len(), r.matched), (0, 1, 1));
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
        assert_eq!(c.verdict, crate::Difference::NoChange);
    }

    #[test]
    fn changed_verdicts_come_first_and_count() {
        let rec = |cap: &str, obs: Option<&str>, v: Option<Verdict>| {
            let mut r = Record::new(cap, "LB+fence.acqs", "c11");
            if let Some(o) = obs {
                r.param("observation", o);
            }
            r.verdict = v;
            r
        };
        let a = [
            rec("check", Some("Never"), None),
            rec("stress", None, Some(Verdict::Pass)),
        ];
        let b = [
            rec("check", Some("Sometimes"), None),
            rec("stress", None, Some(Verdict::Fail)),
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

    /// A load record as `load` writes it: one sample per metric per run.
    fn load_run(p50: f64, tail: f64, requests: f64) -> Record {
        let mut r = Record::new("load", "http", "rate");
        r.param("connections", 32).param("rate", 10_000.0);
        let one = |name: &'static str, unit: Unit, v: f64| {
            Metric::new(name, unit, Source::ClockGettime, vec![v])
        };
        r.metrics.push(one("requests", Unit::Count, requests));
        r.metrics
            .push(one("requests_per_sec", Unit::OpsPerSecond, 10_000.0));
        r.metrics.push(one("latency_p50_s", Unit::Seconds, p50));
        r.metrics
            .push(one("latency_p99_s", Unit::Seconds, 2.0 * p50));
        r.metrics.push(one("latency_p9999_s", Unit::Seconds, tail));
        r.metrics
            .push(one("latency_max_s", Unit::Seconds, tail * 1.1));
        r
    }

    #[test]
    fn holm_matches_r_p_adjust() {
        // R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") is
        // 0.03 0.06 0.06 0.02.
        let adj = crate::holm(&[0.01, 0.04, 0.03, 0.005]);
        for (x, want) in adj.iter().zip([0.03, 0.06, 0.06, 0.02]) {
            assert!((x - want).abs() < 1e-12, "{adj:?}");
        }
        assert!(crate::holm(&[]).is_empty());
        assert_eq!(crate::holm(&[0.3, 0.02]), vec![0.3, 0.04]);
    }

    #[test]
    fn a_lone_low_p_among_many_rows_is_not_a_regression() {
        // 5 vs 5 runs, 12 judged metrics; one of them is separated by
        // chance (p = 0.0079 unadjusted), the other eleven overlap. Alone it
        // is a regression; among twelve, Holm needs p < 0.05/12.
        let noise = [1.0, 1.03, 0.98, 1.01, 0.99];
        let shuffled = [0.99, 1.0, 1.02, 0.98, 1.01];
        let rec = |fluke: bool| {
            let mut r = Record::new("bench", "counter", "fetch_add");
            for k in 0..12 {
                let s: Vec<f64> = if k == 0 && fluke {
                    noise.iter().map(|x| x * 1.2).collect()
                } else if fluke {
                    shuffled.to_vec()
                } else {
                    noise.to_vec()
                };
                r.metrics.push(Metric::new(
                    format!("ns_per_op_{k}"),
                    Unit::NanosPerOp,
                    Source::ClockGettime,
                    s,
                ));
            }
            r
        };
        let (a, b) = ([rec(false)], [rec(true)]);
        let one = compare_records(&a, &b, Settings::default(), Some("ns_per_op_0"), 0.01);
        assert_eq!(one.regressions(), 1);
        let all = compare_records(&a, &b, Settings::default(), None, 0.01);
        assert_eq!(all.judged, 12);
        let c = all.rows[0].comparison.unwrap();
        assert!(c.p_value < 0.01 && (c.p_judged - 12.0 * c.p_value).abs() < 1e-12);
        assert_eq!(all.regressions(), 0, "{:?}", all.rows[0]);
    }

    #[test]
    fn tails_are_judged_only_with_enough_samples_under_them() {
        // The nginx 5-vs-5 case: p99.99 and max 30 % apart by chance.
        let side = |tail: f64, requests: f64| -> Vec<Record> {
            (0..5)
                .map(|i| {
                    load_run(
                        1e-4 * (1.0 + 0.01 * i as f64),
                        tail * (1.0 + 0.01 * i as f64),
                        requests,
                    )
                })
                .collect()
        };
        let r = compare_records(
            &side(0.01, 30_000.0),
            &side(0.013, 30_000.0),
            Settings::default(),
            None,
            0.01,
        );
        let row = |name: &str| r.rows.iter().find(|x| x.metric == name).unwrap();
        assert!(row("latency_p50_s").not_judged.is_none());
        assert!(row("latency_p99_s").not_judged.is_none());
        let why = row("latency_p9999_s").not_judged.clone().unwrap();
        assert!(why.contains("30000") && why.contains("100000"), "{why}");
        assert!(row("latency_max_s").not_judged.is_some());
        assert_eq!(r.regressions(), 0);
        assert_eq!(r.judged, 3);
        // Two million requests a run: the p99.99 is an estimate, and judged.
        let r = compare_records(
            &side(0.01, 2e6),
            &side(0.013, 2e6),
            Settings::default(),
            Some("latency_p9999_s"),
            0.01,
        );
        assert!(r.rows[0].not_judged.is_none());
        assert_eq!(r.regressions(), 1);
    }

    #[test]
    fn what_each_side_sets_throughout_is_what_is_compared() {
        // README: compare --interleave 5 -- bench lock --variant ttas --
        // bench lock --variant mcs. Every record of A is ttas, of B mcs.
        let a: Vec<Record> = (0..3)
            .map(|_| bench("ttas", 2, &[3.0, 3.01, 2.99], 0))
            .collect();
        let b: Vec<Record> = (0..3)
            .map(|_| bench("mcs", 2, &[4.0, 4.01, 3.99], 1))
            .collect();
        let r = compare_records(&a, &b, Settings::default(), None, 0.01);
        assert!(r.only_a.is_empty() && r.only_b.is_empty(), "{r:?}");
        assert_eq!(r.matched, 1);
        assert_eq!(r.across.len(), 1);
        assert_eq!(
            (r.across[0].a.as_str(), r.across[0].b.as_str()),
            ("ttas", "mcs")
        );
        assert_eq!(r.rows[0].key.variant, "ttas→mcs");
        let c = r.rows[0].comparison.unwrap();
        assert_eq!((c.n_a, c.n_b), (9, 9));
        // A parameter the same way: 1 thread against 2, both variants.
        let a = [bench("ttas", 1, &[3.0], 0), bench("mcs", 1, &[3.0], 0)];
        let b = [bench("ttas", 2, &[3.0], 0), bench("mcs", 2, &[3.0], 0)];
        let r = compare_records(&a, &b, Settings::default(), None, 0.01);
        assert_eq!(r.matched, 2);
        assert_eq!(r.across[0].field, "threads");
        // A field that varies within a side stays in the key.
        let b = [bench("ttas", 2, &[3.0], 0), bench("mcs", 1, &[3.0], 0)];
        let r = compare_records(&a, &b, Settings::default(), None, 0.01);
        assert!(r.across.is_empty());
        assert_eq!(r.matched, 1);
    }

    /// Issue 25: `compare --interleave 3 -- bench lock --plugin old.so --
    /// bench lock --plugin new.so`. The built-in records carry no plugin,
    /// so the plugin's file and hash are not set throughout a side; the
    /// plugin's variant must still pair by its name, its builds said.
    #[test]
    fn two_builds_of_one_plugin_pair_by_the_variant_name() {
        let build = |file: &str, sha: &str, audit: &str, ns: &[f64]| {
            let mut r = bench("c-ticket", 1, ns, 0);
            r.param("plugin", file)
                .param("plugin_sha256", sha)
                .param("plugin_variant", "c-ticket")
                .param("plugin_audit", audit);
            r
        };
        let xadd = "lock uses a lock-prefixed RMW (lock xadd)";
        let side = |file: &str, sha: &str, ns: f64| -> Vec<Record> {
            (0..3)
                .flat_map(|i| {
                    let ns = [ns, ns * 1.01, ns * 0.99].map(|x| x + i as f64 * 0.001);
                    [
                        bench("ticket", 1, &[5.0, 5.1, 4.9], 0),
                        build(file, sha, xadd, &ns),
                    ]
                })
                .collect()
        };
        let (a, b) = (side("old.so", "aa11", 10.0), side("new.so", "bb22", 30.0));
        let r = compare_records(&a, &b, Settings::default(), Some("ns_per_op"), 0.01);
        assert!(r.only_a.is_empty() && r.only_b.is_empty(), "{r:?}");
        assert_eq!(r.matched, 2);
        let row = r.rows.iter().find(|x| x.key.variant == "c-ticket").unwrap();
        assert!(!row.key.parameters.contains(".so"), "{}", row.key);
        assert!(row.key.parameters.contains("plugin_variant=c-ticket"));
        let c = row.comparison.unwrap();
        assert_eq!((c.n_a, c.n_b), (9, 9));
        assert!(row.regression);
        // Each side's build, said; the audit line is the same on both.
        let across: Vec<(&str, &str, &str)> = r
            .across
            .iter()
            .map(|x| (x.field.as_str(), x.a.as_str(), x.b.as_str()))
            .collect();
        assert_eq!(
            across,
            [
                ("plugin", "old.so", "new.so"),
                ("plugin_sha256", "aa11", "bb22")
            ]
        );
        // Two plugins on one side (two files): not one build, not said,
        // still out of the key.
        let mut two = a.clone();
        two.push(build("other.so", "cc33", xadd, &[10.0]));
        let r = compare_records(&two, &b, Settings::default(), Some("ns_per_op"), 0.01);
        assert_eq!((r.matched, r.only_b.len()), (2, 0));
        assert!(r.across.iter().all(|x| x.field != "plugin"), "{r:?}");
    }

    /// A stress cell's replay command carries its seed, fresh each run:
    /// three runs a side must pool into one record and compare verdicts.
    #[test]
    fn stress_runs_with_fresh_seeds_pool_and_compare() {
        let run = |seed: u64, v: Verdict| {
            let mut r = Record::new("stress", "mutex", "c-ticket");
            r.param("seed", seed).param("threads", 2).param(
                "replay",
                format!("atomlab stress mutex --plugin x.so --variant c-ticket --seed {seed}"),
            );
            r.verdict = Some(v);
            r
        };
        let a: Vec<Record> = (1..=3).map(|s| run(s, Verdict::Fail)).collect();
        let b: Vec<Record> = (4..=6).map(|s| run(s, Verdict::Pass)).collect();
        let r = compare_records(&a, &b, Settings::default(), None, 0.01);
        assert_eq!((r.matched, r.verdicts_compared), (1, 1), "{r:?}");
        assert_eq!(r.verdict_changes[0].before, "FAIL");
        assert_eq!(r.verdict_changes[0].after, "PASS");
        assert_eq!(r.regressions(), 0);
    }

    #[test]
    fn identical_verdicts_are_compared_not_unmatched() {
        let check = |test: &str| {
            let mut r = Record::new("check", test, "x86tso");
            r.param("observation", "Never")
                .param("file", format!("{test}.litmus"));
            r
        };
        let a: Vec<Record> = ["MP", "SB", "LB"].map(check).to_vec();
        let r = compare_records(&a, &a, Settings::default(), None, 0.01);
        assert_eq!((r.matched, r.verdicts_compared), (3, 3));
        assert!(r.verdict_changes.is_empty() && r.compared_anything());
        assert!(r.across.is_empty());
        // Nothing shared: nothing compared.
        let r = compare_records(
            &a,
            &[bench("x", 1, &[1.0], 0)],
            Settings::default(),
            None,
            0.01,
        );
        assert!(!r.compared_anything());
    }

    #[test]
    fn partial_runs_are_recognised() {
        let mut r = load_run(1e-4, 1e-2, 1000.0);
        assert!(!is_partial(&r));
        r.param("interrupted", true);
        assert!(is_partial(&r));
        r.param("interrupted", false);
        assert!(!is_partial(&r));
    }

    #[test]
    fn a_million_samples_a_side_are_compared_in_bounded_time() {
        // Imported per-request latencies: 10⁶ a side. The bootstrap used to
        // sort 2·10⁶ values for each of 10 000 resamples (hours); now each
        // resample's median is one order-statistic draw.
        let n: usize = 1_000_000;
        let a: Vec<f64> = (0..n)
            .map(|i| 100.0 + ((i * 7919) % 1000) as f64 / 100.0)
            .collect();
        let b: Vec<f64> = a.iter().map(|x| x * 1.02).collect();
        let rec = |s: Vec<f64>| {
            let mut r = Record::new("bench", "imported", "v");
            r.metrics.push(Metric::new(
                "ns_per_op",
                Unit::NanosPerOp,
                Source::ClockGettime,
                s,
            ));
            r
        };
        let r = compare_records(&[rec(a)], &[rec(b)], Settings::default(), None, 0.01);
        let c = r.rows[0].comparison.unwrap();
        assert_eq!(c.ci_method, crate::CiMethod::Bootstrap);
        assert!(c.ci_low < 0.02 + 1e-9 && c.ci_high > 0.02 - 1e-9, "{c:?}");
        assert!(c.ci_low > 0.015 && c.ci_high < 0.025, "{c:?}");
        assert_eq!(c.verdict, crate::Difference::Worse);
    }
}
