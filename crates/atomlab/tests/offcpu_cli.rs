//! Figures taken while the measured threads were off their CPUs are
//! flagged, one thread or many (issue 34): the same `bench counter
//! --threads 1` cell gave 5.66, 4.17 and 2.95 ns at 37, 50 and 67 % of a
//! CPU, all `ok`, and the suite's headline quoted the 5.66. This file is
//! its own test binary: the competing load it starts must not fall on
//! another test's measurement.

mod cli_support;

use std::process::{Child, Command};

use cli_support::{atomlab, stderr};

/// Busy loops at normal priority, one more than the CPUs, killed when
/// dropped.
struct Load(Vec<Child>);

impl Load {
    fn start() -> Load {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        Load(
            (0..=cpus)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .expect("sh")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn flags(args: &[&str]) -> Vec<(String, String)> {
    let o = atomlab(args);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            let cell = format!("{} threads={}", r["variant"], r["parameters"]["threads"]);
            r["flags"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |f| (cell.clone(), f["kind"].as_str().unwrap_or("").to_string()))
        })
        .collect()
}

#[test]
fn a_cell_whose_threads_were_off_the_cpu_is_flagged() {
    if std::env::var_os("QEMU_CPU").is_some() {
        // Under qemu-user every figure is an emulation's: not this check.
        return;
    }
    let _load = Load::start();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let counter = flags(&[
        "--no-save",
        "--json",
        "bench",
        "counter",
        "--variant",
        "fetch_add",
        "--threads",
        "1",
        "--contention",
        "private",
        "-d",
        "200ms",
        "--runs",
        "3",
        "--warmup",
        "0",
    ]);
    assert!(
        counter.iter().any(|(_, k)| k == "off_cpu"),
        "one thread, private, under load: {counter:?}"
    );
    let queue = flags(&[
        "--no-save",
        "--json",
        "bench",
        "spsc",
        "--variant",
        "fences",
        "-d",
        "200ms",
        "--runs",
        "3",
        "--warmup",
        "0",
    ]);
    assert!(
        queue.iter().any(|(_, k)| k == "off_cpu"),
        "spsc flat out under load: {queue:?}"
    );
    // Round trips too (they had no CPU figure at all). A 100 ms cell
    // sometimes runs while the busy loops sit on the other CPU (about one
    // time in six here): up to three tries, and a check that never flags
    // still fails.
    let mut tries = Vec::new();
    for _ in 0..3 {
        let pingpong = flags(&[
            "--no-save",
            "--json",
            "bench",
            "pingpong",
            "-d",
            "100ms",
            "--runs",
            "2",
        ]);
        let flagged = pingpong.iter().any(|(_, k)| k == "off_cpu");
        tries.push(pingpong);
        if flagged {
            break;
        }
    }
    assert!(
        tries.last().unwrap().iter().any(|(_, k)| k == "off_cpu"),
        "pingpong under load, three tries: {tries:?}"
    );
}
