//! The generated code of the repository's litmus corpus, byte for byte:
//! for every `.litmus` file below atomlab-model's and atomlab-run's tests
//! and every ISA (AArch64 C tests with both acquire mappings), a digest of
//! each thread's machine code, or the code generator's refusal (thread,
//! instruction, reason), compared with `tests/codegen_digest.txt`.
//!
//! The encoders are checked against GNU as instruction by instruction
//! (their unit tests, `codegen_aarch64`, `codegen_riscv64`); this test
//! holds what the code generators choose to emit for whole tests, so that
//! a restructuring of the generators that is meant to change nothing is
//! seen to change nothing. A deliberate change to the generated code
//! rewrites the file with `ATOMLAB_BLESS=1` (review the diff).
//!
//! With `ATOMLAB_CODEGEN_DIGEST_OUT=PATH` the test also writes the same
//! listing for the shared corpora beside the repository (../shared/litmus,
//! ../shared/litmus-more), when present, to PATH: compare two such files
//! from before and after a change for a wider check.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use atomlab_model::AcquireLoad;
use atomlab_run::{generate, Isa, PrepareOptions, RunError};

mod support;
use support::litmus_files;

/// FNV-1a, 64-bit: a digest that does not depend on the Rust release (as
/// `DefaultHasher` may).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The variants a test is generated for: each ISA, and AArch64 with both
/// acquire-load mappings (they differ for C tests only).
fn variants() -> Vec<(&'static str, Isa, PrepareOptions)> {
    let ldapr = PrepareOptions {
        arm_acquire: AcquireLoad::Ldapr,
        ..PrepareOptions::default()
    };
    vec![
        ("x86_64", Isa::X86_64, PrepareOptions::default()),
        ("aarch64", Isa::AArch64, PrepareOptions::default()),
        ("aarch64-ldapr", Isa::AArch64, ldapr),
        ("riscv64", Isa::RiscV64, PrepareOptions::default()),
    ]
}

/// One line per (file, variant) the code generator sees: the digest and
/// length of each thread's code, or its refusal. Tests for another ISA,
/// Linux-kernel tests and files that do not parse are left out (no code
/// generator runs for them).
fn listing(root: &Path, files: &[PathBuf]) -> String {
    let mut out = String::new();
    for p in files {
        let Ok(test) = atomlab_litmus::parse_file(p) else {
            continue;
        };
        let name = p.strip_prefix(root).unwrap_or(p).display().to_string();
        for (label, isa, opts) in variants() {
            let result = match generate(&test, isa, &opts) {
                Ok(code) => code
                    .iter()
                    .map(|c| format!("{:016x}/{}", fnv1a(c), c.len()))
                    .collect::<Vec<_>>()
                    .join(" "),
                Err(RunError::Unencodable {
                    thread,
                    index,
                    what,
                    ..
                }) => format!("refused P{thread}#{index}: {what}"),
                Err(_) => continue,
            };
            let _ = writeln!(out, "{name} {label}: {result}");
        }
    }
    out
}

fn corpus_files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = dirs.iter().flat_map(|d| litmus_files(d)).collect();
    files.sort();
    files.dedup();
    files
}

#[test]
fn generated_code_of_the_corpus_is_unchanged() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = corpus_files(&[here.join("../atomlab-model/tests"), here.join("tests")]);
    assert!(files.len() > 50, "the corpus is missing: {}", files.len());
    let got = listing(here, &files);
    let golden = here.join("tests/codegen_digest.txt");
    if let Ok(path) = std::env::var("ATOMLAB_CODEGEN_DIGEST_OUT") {
        let shared = here.join("../../../shared");
        let more = corpus_files(&[shared.join("litmus"), shared.join("litmus-more")]);
        let all = got.clone() + &listing(&shared, &more);
        std::fs::write(&path, all).expect("ATOMLAB_CODEGEN_DIGEST_OUT is writable");
        eprintln!("wrote {path} ({} shared files)", more.len());
    }
    if std::env::var("ATOMLAB_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&golden, &got).expect("tests/codegen_digest.txt is writable");
        return;
    }
    let want = std::fs::read_to_string(&golden).unwrap_or_default();
    if got != want {
        let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
        let changed: Vec<String> = g
            .iter()
            .filter(|l| !w.contains(l))
            .map(|l| format!("now:  {l}"))
            .chain(
                w.iter()
                    .filter(|l| !g.contains(l))
                    .map(|l| format!("was:  {l}")),
            )
            .take(40)
            .collect();
        panic!(
            "the generated code differs from tests/codegen_digest.txt ({} lines now, {} before):\n{}\n\
             if the change is meant, rewrite the file with ATOMLAB_BLESS=1 and review its diff",
            g.len(),
            w.len(),
            changed.join("\n")
        );
    }
}
