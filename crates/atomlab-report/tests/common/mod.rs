//! Fixtures shared by the tests: the sample documents as runs.
#![allow(dead_code)]

use atomlab_core::{Metric, Record, Report, Source, Unit, Verdict};
use atomlab_report::{ComparisonView, RunView};
use atomlab_stats::ab::compare_records;
use atomlab_stats::Settings;

/// The fixture `name` (in tests/fixtures) as a report.
pub fn report(name: &str) -> Report {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The fixture `name` as a run with id `id`.
pub fn run(name: &str, id: &str, label: Option<&str>) -> RunView {
    let report = report(name);
    RunView {
        id: id.to_string(),
        label: label.map(str::to_string),
        command_line: std::iter::once("atomlab".to_string())
            .chain(report.command.split(' ').map(str::to_string))
            .chain(["--json".to_string()])
            .collect(),
        started_unix: 1_796_099_546.25,
        host: "ci-runner-1".into(),
        report,
    }
}

/// The `<figure class="chart" …>…</figure>` elements of `html`, each with
/// its `data-chart` name.
pub fn figures(html: &str) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<figure class=\"chart\"") {
        let from = &rest[start..];
        let end = from.find("</figure>").expect("figure closed") + "</figure>".len();
        let fig = &from[..end];
        let name = fig
            .split("data-chart=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or_default()
            .to_string();
        out.push((name, fig));
        rest = &from[end..];
    }
    out
}

pub fn bench(variant: &str, threads: u64, ns: &[f64]) -> Record {
    let mut r = Record::new("bench", "counter", variant);
    r.param("threads", threads).param("contention", "shared");
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
    r
}

pub fn stress(verdict: Verdict) -> Record {
    let mut r = Record::new("stress", "mutex", "tas<1>");
    r.param("expected", "correct");
    r.verdict = Some(verdict);
    r
}

/// A before/after pair of record sets, and their comparison.
pub fn comparison() -> ComparisonView {
    let a = [
        bench("fetch_add", 1, &[3.0, 3.01, 2.99, 3.02, 2.98]),
        bench("cas_loop", 2, &[8.0, 8.01, 7.99, 8.02, 7.98]),
        bench("noisy", 2, &[8.0, 12.0, 5.0]),
        stress(Verdict::Pass),
    ];
    let b = [
        bench("fetch_add", 1, &[3.6, 3.61, 3.59, 3.62, 3.58]),
        bench("cas_loop", 2, &[7.0, 7.01, 6.99, 7.02, 6.98]),
        bench("noisy", 2, &[9.0, 4.0, 13.0]),
        stress(Verdict::Fail),
    ];
    let result = compare_records(&a, &b, Settings::default(), None, 0.02);
    assert_eq!(result.verdict_changes.len(), 1);
    assert_eq!(result.rows.len(), 6);
    ComparisonView {
        a_name: "main".into(),
        b_name: "<feature>".into(),
        threshold: 0.02,
        result,
    }
}
