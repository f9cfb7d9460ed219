//! `atomlab report` of every capability, from runs of the real commands
//! (short durations) in a scratch store: each gets its section with its
//! table and chart (issue 23, "the report shows every capability"):
//! `bench spsc` at two offered rates, spinning and sleeping, a chart per
//! side and a row per rate; `run` a histogram beside the models; `load`
//! its percentiles and per-second timeline; `audit` its verdict counts;
//! and `report --compare A B` alone shows the runs it compares.

mod cli_support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;

use cli_support::{scratch, text, with_store};

/// Runs atomlab on `store`, which must succeed, and returns the id of the
/// run it saved (from its `saved run ID` line on stderr).
fn saved(store: &str, args: &[&str]) -> String {
    let o = with_store(store, args);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    err.split("saved run ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("{args:?} saved no run: {err}"))
        .to_string()
}

/// A tiny HTTP/1.1 server on 127.0.0.1 (keep-alive, `ok` to every
/// request), a thread per connection, for as long as the test runs.
fn serve() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { continue };
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        buf.drain(..end + 4);
                        if c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                            .is_err()
                        {
                            return;
                        }
                    }
                    match c.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    });
    format!("http://{addr}/")
}

/// This host's store-buffering test for `atomlab run`, if it has one.
fn host_sb() -> Option<String> {
    let rel = match std::env::consts::ARCH {
        "x86_64" => "SB.litmus",
        "aarch64" => "aarch64/SB.litmus",
        "riscv64" => "riscv/SB.litmus",
        _ => return None,
    };
    Some(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../atomlab-run/tests/litmus")
            .join(rel)
            .display()
            .to_string(),
    )
}

/// The `<section id="ID">` of `html`, up to the next top-level section.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no {id} section"));
    let rest = &html[start + 1..];
    // The next top-level section starts a line with `<section id=`.
    let end = rest
        .find("\n<section id=")
        .map_or(html.len(), |e| start + 1 + e);
    &html[start..end]
}

/// The `<figure … data-chart="NAME">` of `html`.
fn figure<'a>(html: &'a str, name: &str) -> &'a str {
    let start = html
        .find(&format!("data-chart=\"{name}\""))
        .unwrap_or_else(|| panic!("no chart {name}"));
    &html[start..start + html[start..].find("</figure>").unwrap()]
}

#[test]
fn every_capability_gets_its_section_and_compare_alone_shows_its_runs() {
    let d = scratch("report-every");
    let store = d.join("runs.db");
    let store = store.to_str().unwrap();
    let spsc = |wait: &str| {
        saved(
            store,
            &[
                "bench",
                "spsc",
                "--variant",
                "c11-acq-rel,fences",
                "--rate",
                "100k,1M",
                "--wait",
                wait,
                "--duration",
                "100ms",
                "--warmup",
                "0",
                "--runs",
                "1",
            ],
        )
    };
    let (spin, notify) = (spsc("spin"), spsc("notify"));
    let url = serve();
    let load = saved(
        store,
        &["load", &url, "-c", "2", "-d", "2", "--warmup", "0"],
    );
    let audit = saved(store, &["audit", env!("CARGO_BIN_EXE_atomlab")]);
    let mut ids = vec![spin.clone(), notify.clone(), load, audit];
    let sb = host_sb();
    if let Some(sb) = &sb {
        ids.push(saved(store, &["run", sb, "--runs", "5"]));
    } else {
        eprintln!("skipped the run section: no SB test for this host's architecture");
    }

    let html_path = d.join("all.html");
    let mut args: Vec<&str> = vec!["report"];
    args.extend(ids.iter().map(String::as_str));
    args.extend(["-o", html_path.to_str().unwrap()]);
    let o = with_store(store, &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(
        !html.contains("id=\"other\""),
        "every record has its section"
    );

    // spsc: a chart per side, a line per variant and wait mode, a point
    // per offered rate; the queue table with a row per variant, wait and
    // rate, the rates told apart.
    let bench = section(&html, "bench");
    for side in ["producer", "consumer"] {
        let fig = figure(bench, &format!("bench-spsc-{side}"));
        assert!(!fig.contains("nothing to draw"), "{fig}");
        for line in [
            "c11-acq-rel · spin",
            "c11-acq-rel · notify",
            "fences · spin",
            "fences · notify",
        ] {
            assert!(fig.contains(line), "{side}: no line {line}: {fig}");
        }
        // Four lines of two rates (a rate not sustained draws two circles).
        assert_eq!(fig.matches("<li>").count(), 4, "{side}: {fig}");
        assert!(fig.matches("<circle").count() >= 8, "{side}: {fig}");
    }
    let queue = &bench[bench
        .find("<th scope=\"col\">offered/s</th>")
        .expect("queue table")..];
    for column in [
        "achieved/s",
        "p99",
        "prod cpu %",
        "cons cpu %",
        "wakes/item",
    ] {
        assert!(
            queue.contains(&format!("<th scope=\"col\">{column}</th>")),
            "{column}"
        );
    }
    let rows: Vec<&str> = queue.split("<tr>").skip(1).collect();
    assert_eq!(rows.len(), 8, "2 variants × 2 waits × 2 rates: {queue}");
    let rates: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.split("<td class=\"n\">").nth(1))
        .filter_map(|c| c.split('<').next())
        .collect();
    let mut distinct = rates.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 2, "two offered rates told apart: {rates:?}");
    // The run column names the run by its id.
    assert!(queue.contains(&format!("<td>{spin}</td>")), "{queue}");

    // load: the percentiles and the timeline, and its row.
    let load = section(&html, "load");
    let latency = figure(load, "load-latency");
    assert_eq!(latency.matches("<circle").count(), 6, "{latency}");
    let timeline = figure(load, "load-timeline");
    assert!(timeline.matches("<circle").count() >= 2, "{timeline}");
    assert!(load.contains("<th scope=\"col\">p99 ms</th>"), "{load}");
    assert!(load.contains(&format!("<td>{url}</td>")), "{load}");

    // audit: the verdict counts and the binary's row.
    let audit = section(&html, "audit");
    let counts = figure(audit, "audit-verdicts");
    assert!(counts.contains("binary: "), "{counts}");
    assert!(audit.contains("atomlab</code>"), "{audit}");

    // run: the summary, and SB's histogram beside the models.
    if sb.is_some() {
        let run = section(&html, "run");
        // Named by the run's place in the report (the last) and the test.
        let fig = figure(run, &format!("run-{}-sb", ids.len() - 1));
        assert!(fig.contains("times seen"), "{fig}");
        assert!(run.contains("<div class=\"pair\">"), "{run}");
        assert!(run.contains("<th scope=\"col\">final state</th>"), "{run}");
        assert!(run.contains("<th scope=\"col\">hardware</th>"), "{run}");
    }

    // `report --compare A B` alone: the comparison and the two runs.
    let cmp = d.join("cmp.html");
    let o = with_store(
        store,
        &[
            "report",
            "--compare",
            &spin,
            &notify,
            "-o",
            cmp.to_str().unwrap(),
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("(2 runs and a comparison)"), "{err}");
    let html = std::fs::read_to_string(&cmp).unwrap();
    let runs = section(&html, "runs");
    assert!(
        runs.contains(&format!("<code>{spin}</code>"))
            && runs.contains(&format!("<code>{notify}</code>")),
        "{runs}"
    );
    assert!(html.contains("<section id=\"comparison\">"));
    assert!(html.contains("data-chart=\"bench-spsc-producer\""));
    let _ = std::fs::remove_dir_all(&d);
}
