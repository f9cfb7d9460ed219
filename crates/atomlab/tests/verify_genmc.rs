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

/// Whether `function` in the riscv64 file `so` orders its compare-exchange
/// as a release: an `sc` with `.rl`, or a `fence` before its `lr` (as
/// `riscv64-linux-gnu-objdump -d` prints them).
fn cas_releases(so: &Path, function: &str) -> Option<bool> {
    let o = std::process::Command::new("riscv64-linux-gnu-objdump")
        .arg("-d")
        .arg(so)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let start = text.find(&format!("<{function}>:"))?;
    let body = &text[start..];
    let body = &body[..body.find("\n\n").unwrap_or(body.len())];
    let lr = body.find("\tlr.")?;
    let fence_before = body[..lr].contains("\tfence");
    let sc_rl = body
        .lines()
        .any(|l| l.contains("\tsc.") && l.contains(".rl"));
    Some(fence_before || sc_rl)
}

/// The MCS lock's unlock releases the lock with a compare-exchange of
/// release order. Debian 12's riscv64 GCC (12.2) emits it as a plain
/// `lr.d`/`sc.d` pair, with no `.rl` and no fence: the critical section's
/// store may then become visible after the lock is free, and verify FAILs
/// the riscv64 build under `riscv` while the aarch64 build PASSes. The
/// verdict must follow the code, whichever compiler made it.
#[test]
fn riscv64_mcs_verdict_follows_the_compilers_cas_ordering() {
    let Some(so) = build_plugin(
        verify_support::RISCV,
        "verify_genmc.c",
        "plugins-verify-genmc",
        "genmc-locks-riscv64",
        &["-O2"],
    ) else {
        return;
    };
    let Some(releases) = cas_releases(&so, "mcs_unlock") else {
        verify_support::skip("riscv64-linux-gnu-objdump could not show mcs_unlock's lr/sc");
        return;
    };
    let (code, out) =
        verify_support::verify_plugin(&so, &["--variant", "mcs_spinlock", "--model", "riscv"]);
    let want = if releases { "PASS" } else { "FAIL" };
    assert_eq!(
        verdicts(&out, "mcs_spinlock", "riscv"),
        [want],
        "mcs_unlock's CAS {} release ordering\n{out}",
        if releases { "has" } else { "lacks" }
    );
    assert_eq!(code, Some(if releases { 0 } else { 1 }), "{out}");
}
