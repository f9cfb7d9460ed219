//! Shared by the `audit*` integration tests: finding the cross tools (and
//! skipping, or failing under ATOMLAB_REQUIRE_CROSS=1, when they are
//! missing), building fixtures, running the real `atomlab` binary and
//! parsing GNU objdump's disassembly for the reference counts.
#![allow(dead_code)]

pub mod deb;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `atomlab` binary under test.
pub fn atomlab() -> Command {
    crate::cli_support::command()
}

/// Whether a missing tool must fail the test rather than skip it.
pub fn require_cross() -> bool {
    std::env::var("ATOMLAB_REQUIRE_CROSS").is_ok_and(|v| v == "1")
}

/// True when every tool runs; otherwise prints why the test skips (or
/// panics under ATOMLAB_REQUIRE_CROSS=1).
pub fn have_tools(test: &str, tools: &[&str]) -> bool {
    for tool in tools {
        let ok = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            let msg = format!(
                "{test}: skipped: `{tool}` is not installed (apt-get install gcc-aarch64-linux-gnu gcc-riscv64-linux-gnu binutils-aarch64-linux-gnu binutils-riscv64-linux-gnu qemu-user)"
            );
            if require_cross() {
                panic!("{msg}, and ATOMLAB_REQUIRE_CROSS=1 is set");
            }
            // Straight to the process's stderr, past libtest's capture, so
            // that a skip is seen in a plain `cargo test` run.
            let _ = writeln!(std::io::stderr(), "{msg}");
            return false;
        }
    }
    true
}

/// The fixture sources directory.
pub fn support_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/audit_support")
}

/// A scratch directory for this test's fixtures.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("audit-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs a command and panics with its stderr if it fails.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Compiles `sources` (relative to the support dir) with `cc` and `flags`.
pub fn compile(cc: &str, flags: &[&str], sources: &[&str], out: &Path) {
    let mut cmd = Command::new(cc);
    cmd.args(["-O2", "-o"]).arg(out);
    for s in sources {
        cmd.arg(support_dir().join(s));
    }
    // After the sources, so that libraries (-latomic) resolve their calls.
    cmd.args(flags);
    run_ok(&mut cmd);
}

/// `atomlab audit --json --by-function=100000 FILE`: the one binary's JSON
/// object, and the exit code.
pub fn audit_json(file: &Path, extra: &[&str]) -> (serde_json::Value, i32) {
    let out = atomlab()
        .args(["audit", "--json", "--by-function=100000"])
        .args(extra)
        .arg(file)
        .output()
        .expect("run atomlab");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "bad JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let bin = doc["records"][0]["detail"].clone();
    (bin, out.status.code().unwrap_or(-1))
}

/// One instruction line of `objdump -d`.
#[derive(Debug, Clone)]
pub struct Line {
    pub addr: u64,
    /// The function (`<name>:` header) it sits in.
    pub function: String,
    pub mnemonic: String,
    pub operands: String,
}

/// Parses `objdump -d` output.
pub fn objdump(tool: &str, flags: &[&str], file: &Path) -> Vec<Line> {
    let out = run_ok(Command::new(tool).arg("-d").args(flags).arg(file));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = Vec::new();
    let mut function = String::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_suffix(">:") {
            if let Some((_, name)) = rest.split_once(" <") {
                function = name.to_string();
            }
            continue;
        }
        // "  addr:\tbytes\tmnemonic operands"
        let mut fields = l.splitn(3, '\t');
        let (Some(a), Some(_bytes), Some(ins)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(a.trim().trim_end_matches(':'), 16) else {
            continue;
        };
        let ins = ins.split("//").next().unwrap_or("").trim();
        let (mnemonic, operands) = match ins.split_once(char::is_whitespace) {
            Some((m, o)) => (m.to_string(), o.trim().to_string()),
            None => (ins.to_string(), String::new()),
        };
        lines.push(Line {
            addr,
            function: function.clone(),
            mnemonic,
            operands,
        });
    }
    lines
}

fn is_aarch64_lse(m: &str) -> bool {
    let ops = [
        "casp", "cas", "swp", "ldadd", "ldclr", "ldeor", "ldset", "ldsmax", "ldsmin", "ldumax",
        "ldumin", "stadd", "stclr", "steor", "stset", "stsmax", "stsmin", "stumax", "stumin",
    ];
    ops.iter().any(|op| {
        m.strip_prefix(op).is_some_and(|rest| {
            let rest = rest
                .strip_prefix("al")
                .or_else(|| rest.strip_prefix('a'))
                .or_else(|| rest.strip_prefix('l'))
                .unwrap_or(rest);
            rest.is_empty() || rest == "b" || rest == "h"
        })
    })
}

/// The aarch64 class objdump's mnemonic belongs to, in atomlab's names.
pub fn aarch64_class(m: &str) -> Option<&'static str> {
    let excl_load = [
        "ldxr", "ldaxr", "ldxrb", "ldaxrb", "ldxrh", "ldaxrh", "ldxp", "ldaxp",
    ];
    let excl_store = [
        "stxr", "stlxr", "stxrb", "stlxrb", "stxrh", "stlxrh", "stxp", "stlxp",
    ];
    let acq = ["ldar", "ldarb", "ldarh", "ldlar", "ldlarb", "ldlarh"];
    let rel = [
        "stlr", "stlrb", "stlrh", "stllr", "stllrb", "stllrh", "stlur", "stlurb", "stlurh",
    ];
    let rcpc = [
        "ldapr", "ldaprb", "ldaprh", "ldapur", "ldapurb", "ldapurh", "ldapursb", "ldapursh",
        "ldapursw",
    ];
    if is_aarch64_lse(m) {
        Some("lse")
    } else if excl_load.contains(&m) {
        Some("load_exclusive")
    } else if excl_store.contains(&m) {
        Some("store_exclusive")
    } else if acq.contains(&m) {
        Some("acquire_load")
    } else if rel.contains(&m) {
        Some("release_store")
    } else if rcpc.contains(&m) {
        Some("rcpc_load")
    } else if m == "dmb" || m == "dsb" || m == "isb" {
        Some("barrier")
    } else {
        None
    }
}

/// The name atomlab reports for an objdump line it should count: barriers
/// carry their option (`dmb ish`).
pub fn aarch64_key(l: &Line) -> Option<String> {
    let class = aarch64_class(&l.mnemonic)?;
    Some(if class == "barrier" && !l.operands.is_empty() {
        format!("{} {}", l.mnemonic, l.operands)
    } else {
        l.mnemonic.clone()
    })
}

/// Counts by key over the lines.
pub fn tally<F: Fn(&Line) -> Option<String>>(lines: &[Line], key: F) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for l in lines {
        if let Some(k) = key(l) {
            *m.entry(k).or_insert(0) += 1;
        }
    }
    m
}

/// A JSON object of counts as a map.
pub fn counts(v: &serde_json::Value) -> BTreeMap<String, u64> {
    v.as_object()
        .map(|o| {
            o.iter()
                .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
                .collect()
        })
        .unwrap_or_default()
}

/// A count of a class in a JSON object of counts (0 when absent).
pub fn class(v: &serde_json::Value, name: &str) -> u64 {
    v[name].as_u64().unwrap_or(0)
}
