//! `atomlab audit` tells LSE chosen at run time from LSE behind no test
//! (issue 27): fixtures built here with Debian's aarch64 cross compiler, each
//! audited with symbols and stripped, and each run under
//! `qemu-aarch64 -cpu cortex-a53` (ARMv8.0, no LSE), where the one the audit
//! says needs ARMv8.1 must die of SIGILL and the others must not, and under
//! `-cpu max`, where all run.
//!
//! Without the tools these tests print that they skipped and why; with
//! ATOMLAB_REQUIRE_CROSS=1 (set by .ci/run) a missing tool fails them.

mod audit_support;
mod cli_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use audit_support::*;

const A64_CC: &str = "aarch64-linux-gnu-gcc";
const A64_STRIP: &str = "aarch64-linux-gnu-strip";
const QEMU: &str = "qemu-aarch64";

/// A fixture: its sources and what the audit must say.
struct Fixture {
    name: &'static str,
    sources: &'static [&'static str],
    flags: &'static [&'static str],
    /// Verdict kind.
    kind: &'static str,
    /// Evidence the LSE instructions are chosen at run time by (empty: none).
    evidence: &'static str,
}

const FIXTURES: [Fixture; 7] = [
    Fixture {
        name: "hwcap",
        sources: &["dispatch_hwcap.c"],
        flags: &[],
        kind: "runtime_lse",
        evidence: "getauxval",
    },
    Fixture {
        name: "ifunc",
        sources: &["dispatch_ifunc.c"],
        flags: &[],
        kind: "runtime_lse",
        evidence: "ifunc",
    },
    Fixture {
        name: "goflag",
        sources: &["dispatch_goflag_main.c", "dispatch_goflag.S"],
        // As Go links: at a fixed address, no .eh_frame.
        flags: &["-no-pie", "-fno-asynchronous-unwind-tables"],
        kind: "runtime_lse",
        evidence: "flag-test",
    },
    // The same two tests through CMP/TST and B.cond (B.EQ to the LL/SC
    // loop in one function, B.NE to the LSE arm in the other), a PIE with
    // CFI, whose functions main calls.
    Fixture {
        name: "bcond",
        sources: &["dispatch_goflag_main.c", "dispatch_bcond.S"],
        flags: &[],
        kind: "runtime_lse",
        evidence: "flag-test",
    },
    Fixture {
        name: "bcond-hwcap",
        sources: &["dispatch_goflag_main.c", "dispatch_bcond.S"],
        flags: &["-DBCOND_HWCAP"],
        kind: "runtime_lse",
        evidence: "getauxval",
    },
    Fixture {
        name: "unreferenced",
        sources: &["dispatch_unreferenced.c"],
        flags: &["-pie", "-fPIE"],
        kind: "runtime_lse",
        evidence: "unreferenced",
    },
    Fixture {
        name: "uncond",
        sources: &["dispatch_uncond.c"],
        flags: &[],
        kind: "inline_lse",
        evidence: "",
    },
];

/// Builds a fixture and its stripped copy (ARMv8.0 target: no -march).
fn build(dir: &Path, f: &Fixture) -> (PathBuf, PathBuf) {
    let bin = dir.join(f.name);
    compile(A64_CC, f.flags, f.sources, &bin);
    let stripped = dir.join(format!("{}-stripped", f.name));
    run_ok(Command::new(A64_STRIP).arg("-o").arg(&stripped).arg(&bin));
    (bin, stripped)
}

#[test]
fn lse_chosen_at_run_time_is_told_from_unconditional_lse() {
    if !have_tools(
        "lse_chosen_at_run_time_is_told_from_unconditional_lse",
        &[A64_CC, A64_STRIP],
    ) {
        return;
    }
    let dir = scratch("dispatch");
    for f in &FIXTURES {
        let (bin, stripped) = build(&dir, f);
        for file in [&bin, &stripped] {
            let what = file.display();
            let (a, code) = audit_json(file, &[]);
            assert_eq!(code, 0, "{what}");
            let words = a["verdict"]["words"].as_str().unwrap();
            assert_eq!(a["verdict"]["kind"], f.kind, "{what}: {words}");
            let d = &a["lse_dispatch"];
            let lse = class(&a["by_class"], "lse");
            assert!(lse > 0, "{what}: no LSE found");
            if f.evidence.is_empty() {
                assert_eq!(d["unconditional"].as_u64(), Some(lse), "{what}: {d}");
                assert!(words.contains("SIGILL on ARMv8.0"), "{what}: {words}");
                // The function is named, with its unconditional count.
                let fun = a["functions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["lse_unconditional"].as_u64() > Some(0))
                    .unwrap_or_else(|| panic!("{what}: no function with unconditional LSE"));
                assert_eq!(fun["lse_unconditional"], 1, "{what}");
            } else {
                assert_eq!(d["unconditional"], 0, "{what}: {d}");
                assert_eq!(d["chosen_at_run_time"].as_u64(), Some(lse), "{what}: {d}");
                assert_eq!(d["evidence"][f.evidence].as_u64(), Some(lse), "{what}: {d}");
                // Every fallback is an LL/SC loop, none "LL/SC even on ARMv8.1+".
                assert_eq!(
                    d["llsc_fallback_loops"].as_u64(),
                    Some(class(&a["by_class"], "llsc_loop")),
                    "{what}: {d}"
                );
                assert!(!words.contains("SIGILL"), "{what}: {words}");
                assert!(words.starts_with("LSE chosen at run time (ARMv8.0-safe)"));
                assert!(words.contains(&format!("[{}]", f.evidence)), "{words}");
                assert!(a["functions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x["lse_evidence"][0] == f.evidence));
            }
        }
    }
    // A stripped Go-style binary: its functions come from .gopclntab, by
    // name, each with its own evidence (not one "function" for the file).
    let (g, _) = audit_json(&dir.join("goflag-stripped"), &[]);
    let mut go: Vec<(String, String)> = g["functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["found_by"] == "gopclntab")
        .map(|f| {
            assert_eq!(f["lse_evidence"][0], "flag-test", "{f}");
            assert_eq!(f["lse_unconditional"], 0, "{f}");
            (
                f["name"].as_str().unwrap().to_string(),
                f["by_class"]["lse"].to_string(),
            )
        })
        .collect();
    go.sort();
    assert_eq!(
        go,
        [
            ("runtime/internal/atomic.Cas".to_string(), "1".to_string()),
            ("runtime/internal/atomic.Xadd".to_string(), "1".to_string())
        ],
        "{}",
        g["functions"]
    );

    // The table says which evidence led to each function's LSE verdict.
    let out = run_ok(
        atomlab()
            .args(["audit", "--by-function=5"])
            .arg(dir.join("goflag-stripped"))
            .arg(dir.join("uncond")),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("run time (flag-test)"), "{text}");
    assert!(
        text.contains("1 unconditional (SIGILL on ARMv8.0)"),
        "{text}"
    );
    // --require outline: run-time LSE is fine, unconditional LSE is not;
    // --require lse: a run-time choice keeps an LL/SC path, which fails it.
    for f in &FIXTURES {
        let uncond = f.evidence.is_empty();
        let llsc_path = !uncond && f.evidence != "unreferenced";
        for (req, fails) in [("outline", uncond), ("lse", llsc_path)] {
            let (a, code) = audit_json(&dir.join(f.name), &["--require", req]);
            assert_eq!(
                code,
                i32::from(fails),
                "{} --require {req}: {}",
                f.name,
                a["require"]
            );
        }
    }
}

/// Runs a fixture under qemu-aarch64 on `cpu`: exit code, or the signal.
fn run_on(cpu: &str, file: &Path) -> Result<i32, i32> {
    use std::os::unix::process::ExitStatusExt;
    let out = Command::new(QEMU)
        .args(["-cpu", cpu, "-L", "/usr/aarch64-linux-gnu"])
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("{QEMU}: {e}"));
    match (out.status.code(), out.status.signal()) {
        (Some(c), _) => Ok(c),
        (None, Some(s)) => Err(s),
        _ => panic!("{}: no exit code and no signal", file.display()),
    }
}

#[test]
fn verdicts_agree_with_an_armv8_0_cpu() {
    if !have_tools(
        "verdicts_agree_with_an_armv8_0_cpu",
        &[A64_CC, A64_STRIP, QEMU],
    ) {
        return;
    }
    let dir = scratch("dispatch-qemu");
    const SIGILL: i32 = 4;
    for f in &FIXTURES {
        let (bin, _) = build(&dir, f);
        let (a, _) = audit_json(&bin, &[]);
        let sigill = a["verdict"]["words"]
            .as_str()
            .unwrap()
            .contains("SIGILL on ARMv8.0");
        let a53 = run_on("cortex-a53", &bin);
        if sigill {
            assert_eq!(a53, Err(SIGILL), "{}: says SIGILL on ARMv8.0", f.name);
        } else {
            assert_eq!(a53, Ok(0), "{}: says ARMv8.0-safe", f.name);
        }
        // With LSE every fixture runs and computes its sum right.
        assert_eq!(run_on("max", &bin), Ok(0), "{} on -cpu max", f.name);
    }
}
