//! A writer killed with SIGKILL in the middle of saving loses no run it had
//! reported saved, and leaves a store that opens and reads.
//!
//! The writer is this test binary run again with `ATOMLAB_STORE_CRASH_WRITER`
//! set to the database path: it saves runs in a loop and prints
//! `saved ID N end` after each commit.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use atomlab_core::Verdict;
use atomlab_store::{Location, RunMeta, Store};
use common::{report, TempDir};

const WRITER_ENV: &str = "ATOMLAB_STORE_CRASH_WRITER";

/// The report of the writer's run number `n`: its variant names carry `n`.
fn nth_report(n: u64) -> atomlab_core::Report {
    let v0 = format!("v{n}");
    let v1 = format!("w{n}");
    report(
        "stress",
        &[
            ("stress", &v0, Some(Verdict::Pass)),
            ("stress", &v1, Some(Verdict::Fail)),
            ("bench", "fetch_add", None),
        ],
    )
}

/// The writer: does nothing unless the crash test started this binary.
#[test]
fn crash_writer_child() {
    let Some(path) = std::env::var_os(WRITER_ENV) else {
        return;
    };
    let mut store = Store::open(&Location::Sqlite(path.into())).unwrap();
    for n in 0.. {
        let meta = RunMeta::new("stress", vec!["writer".into()], Some(format!("n{n}")));
        store.save(&meta, &nth_report(n)).unwrap();
        println!("saved {} {n} end", meta.id);
    }
}

/// `saved ID N end` → (ID, N); anything else (a line cut by the kill) → None.
fn parse(line: &str) -> Option<(String, u64)> {
    let mut words = line.split_whitespace();
    let (Some("saved"), Some(id), Some(n), Some("end"), None) = (
        words.next(),
        words.next(),
        words.next(),
        words.next(),
        words.next(),
    ) else {
        return None;
    };
    Some((id.to_string(), n.parse().ok()?))
}

#[test]
fn sigkill_mid_stream_loses_no_saved_run() {
    let dir = TempDir::new("crash");
    let path = dir.path().join("results.db");
    let mut saved: Vec<(String, u64)> = Vec::new();
    // Kill at different moments; later rounds also reopen a store whose
    // writer died with its WAL not yet checkpointed.
    for (round, after) in [15usize, 40, 7, 25, 3, 60, 10, 30].into_iter().enumerate() {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "crash_writer_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(WRITER_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut this_round = 0;
        while this_round < after {
            let line = lines
                .next()
                .expect("the writer stopped before saving enough runs")
                .unwrap();
            if let Some(s) = parse(&line) {
                saved.push(s);
                this_round += 1;
            }
        }
        // Let it get into its next transactions, then kill it outright.
        std::thread::sleep(Duration::from_micros(700 * round as u64));
        child.kill().unwrap();
        child.wait().unwrap();
        // What it printed before dying was committed before it printed.
        for line in lines {
            if let Some(s) = parse(&line.unwrap()) {
                saved.push(s);
            }
        }

        let store = Store::open(&Location::Sqlite(path.clone())).unwrap();
        let count = store.count_runs().unwrap() as usize;
        assert!(
            count >= saved.len(),
            "round {round}: {count} runs stored, {} reported saved",
            saved.len()
        );
        for (id, n) in &saved {
            let run = store.load(id).unwrap();
            assert_eq!(run.meta.label, Some(format!("n{n}")));
            let variants: Vec<&str> = run
                .report
                .records
                .iter()
                .map(|r| r.variant.as_str())
                .collect();
            assert_eq!(
                variants,
                [format!("v{n}").as_str(), &format!("w{n}"), "fetch_add"]
            );
        }
        // Every stored run, including any the writer had no time to
        // report, is whole.
        for s in store.runs(&Default::default()).unwrap() {
            assert_eq!(s.records, 3, "{}", s.meta.id);
            assert_eq!(store.load(&s.meta.id).unwrap().report.records.len(), 3);
        }
        eprintln!(
            "round {round}: killed after {} reported saves; {count} runs stored",
            saved.len()
        );
    }
}
