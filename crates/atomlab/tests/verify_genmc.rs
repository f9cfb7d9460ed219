//! `atomlab verify` against GenMC v0.10.3's own verdicts on the same lock
//! algorithms, with 2 and 3 threads: tests/plugins/verify_genmc.c holds
//! the locks of GenMC's tests/correct/data-structures clients
//! (ticketlock, ttaslock, spinlock and the kernel's mcs_spinlock, with
//! their orderings, and each with its handover relaxed; seqlock's writer
//! side over GenMC's model of a mutex and over the ticket lock);
//! tests/plugins/verify_genmc.expected
//! records what GenMC said of its clients under IMM and RC11, with the
//! commands. Built for aarch64 (-O2 -mno-outline-atomics), each variant
//! must FAIL under `aarch64` exactly when GenMC reports an error under
//! either model, and a PASS must explore as many executions as GenMC did
//! (no more than it needs).
//!
//! Without the cross compiler the test skips with a message, and fails
//! instead under ATOMLAB_REQUIRE_CROSS=1 (as CI sets).

mod cli_support;
mod verify_support;

use std::path::Path;

use cli_support::{atomlab, stderr};
use verify_support::{build_plugin, verdicts, AARCH64};

/// (variant, threads, GenMC found an error, GenMC's executions when it did
/// not).
fn expected() -> Vec<(String, usize, bool, Option<usize>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plugins/verify_genmc.expected");
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w.len(), 5, "{}: {l}", path.display());
            let error = w[2] != "ok" || w[3] != "ok";
            let threads = w[1].parse().expect("a thread count");
            (w[0].to_string(), threads, error, w[4].parse().ok())
        })
        .collect()
}

/// The executions column of `variant`'s row under `model`.
fn executions(out: &str, variant: &str, model: &str) -> Option<usize> {
    out.lines().find_map(|l| {
        let w: Vec<&str> = l.split('|').map(str::trim).collect();
        (w.get(1) == Some(&variant) && w.get(2) == Some(&model))
            .then(|| w.get(5)?.parse().ok())
            .flatten()
    })
}

#[test]
fn verdicts_match_genmc_on_its_own_lock_clients() {
    let Some(so) = build_plugin(
        AARCH64,
        "verify_genmc.c",
        "plugins-verify-genmc",
        "genmc-locks",
        &["-O2", "-mno-outline-atomics"],
    ) else {
        return;
    };
    let cases = expected();
    assert_eq!(
        cases.iter().filter(|c| c.1 == 2).count(),
        10,
        "every lock, as GenMC has it and relaxed, and both seqlocks, with 2 threads"
    );
    assert_eq!(
        cases.iter().filter(|c| c.1 == 3).count(),
        9,
        "with 3 threads, all but mcs_spinlock-relaxed"
    );
    for threads in [2, 3] {
        let n = threads.to_string();
        // The variants GenMC's rows name for this many threads.
        let named: Vec<&str> = cases
            .iter()
            .filter(|c| c.1 == threads)
            .map(|c| c.0.as_str())
            .collect();
        let named = named.join(",");
        let o = atomlab(&[
            "--no-save",
            "verify",
            "--plugin",
            so.to_str().unwrap(),
            "--variant",
            &named,
            "--model",
            "aarch64",
            "--threads",
            &n,
        ]);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
        for (variant, _, error, runs) in cases.iter().filter(|c| c.1 == threads) {
            let want = if *error { "FAIL" } else { "PASS" };
            assert_eq!(
                verdicts(&out, variant, "aarch64"),
                [want],
                "{variant}, {threads} threads: GenMC {}\n{out}",
                if *error {
                    "reports an error"
                } else {
                    "finds none"
                }
            );
            if let Some(n) = runs {
                assert_eq!(
                    executions(&out, variant, "aarch64"),
                    Some(*n),
                    "{variant}, {threads} threads: GenMC explored {n} executions\n{out}"
                );
            }
        }
    }
}
