//! The generated code of the repository's litmus corpus, byte for byte:
//! for every `.litmus` file below atomlab-model's and atomlab-run's tests
//! and every ISA (AArch64 C tests with both acquire mappings), a digest of
//! each thread's machine code, or the code generator's refusal (thread,
//! instruction, reason), compared with `tests/codegen_digest.txt`; and the
//! same for the shared corpora beside the repository (../shared/litmus,
//! ../shared/litmus-more) when they are present (without them, only the
//! repository's lines are compared, and the test says so).
//!
//! The encoders are checked against GNU as instruction by instruction
//! (their unit tests, `codegen_aarch64`, `codegen_riscv64`); this test
//! holds what the code generators choose to emit for whole tests, so that
//! a restructuring of the generators that is meant to change nothing is
//! seen to change nothing. A deliberate change to the generated code
//! rewrites the file with `ATOMLAB_BLESS=1` (review the diff).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use atomlab_litmus::{Arch, BinOp, Expr, Instr, Test, Value};
use atomlab_model::AcquireLoad;
use atomlab_run::{generate, Isa, PrepareOptions, RunError};

mod support;
use support::{litmus_files, loop_test};

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

/// A test with loops (no corpus test has a backward branch on every ISA):
/// P0 counts r0 up to 3 with a conditional backward branch, stores it,
/// then spins on an unconditional one.
fn looping(arch: Arch) -> Test {
    let p0 = vec![
        Instr::Assign {
            dst: 0,
            expr: Expr::bin(BinOp::Add, Expr::Reg(0), Expr::int(1)),
        },
        Instr::Branch {
            cond: Some(Expr::bin(BinOp::Ne, Expr::Reg(0), Expr::int(3))),
            target: 0,
        },
        Instr::Store {
            addr: Expr::Const(Value::Loc(0)),
            value: Expr::Reg(0),
            annot: Default::default(),
        },
        Instr::Branch {
            cond: None,
            target: 2,
        },
    ];
    loop_test(arch, &format!("loop-{}.litmus", arch.name()), p0)
}

/// One line per (file, variant) the code generator sees: the digest and
/// length of each thread's code, or its refusal. Tests for another ISA,
/// Linux-kernel tests and files that do not parse are left out (no code
/// generator runs for them).
fn listing(root: &Path, files: &[PathBuf]) -> String {
    let tests = files.iter().filter_map(|p| {
        let test = atomlab_litmus::parse_file(p).ok()?;
        Some((
            p.strip_prefix(root).unwrap_or(p).display().to_string(),
            test,
        ))
    });
    listing_of(tests)
}

fn listing_of(tests: impl Iterator<Item = (String, Test)>) -> String {
    let mut out = String::new();
    for (name, test) in tests {
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
    let loops = [Arch::X86, Arch::AArch64, Arch::RiscV].map(|a| {
        let t = looping(a);
        (format!("tests/{}", t.file), t)
    });
    let mut got = listing_of(loops.into_iter()) + &listing(here, &files);
    // The shared corpora beside the repository, when present: far more
    // tests (loops, every access kind) than the repository's own.
    let shared = here.join("../../../shared");
    let have_shared = shared.join("litmus").is_dir();
    if have_shared {
        let more = corpus_files(&[shared.join("litmus"), shared.join("litmus-more")]);
        got += &listing(&shared, &more);
    } else {
        eprintln!(
            "note: {} is absent; only the repository's tests are compared",
            shared.display()
        );
    }
    let golden = here.join("tests/codegen_digest.txt");
    if std::env::var("ATOMLAB_BLESS").is_ok_and(|v| v == "1") {
        assert!(have_shared, "bless with the shared corpora present");
        std::fs::write(&golden, &got).expect("tests/codegen_digest.txt is writable");
        return;
    }
    let want = std::fs::read_to_string(&golden).unwrap_or_default();
    // Without the shared corpora, only the repository's lines (those of
    // files below this crate's folder, `../` or `tests/`) are compared.
    let ours = |l: &&str| have_shared || l.starts_with("../") || l.starts_with("tests/");
    let (g, w): (Vec<&str>, Vec<&str>) =
        (got.lines().collect(), want.lines().filter(ours).collect());
    if g != w {
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

/// Issue 38's spacing: each memory access of a thread is followed by
/// `spacing` loads of its frame, on every ISA (the code grows by the same
/// number of loads per access), and a thread with an exclusive pair gets
/// none (a memory access between LDXR and STXR may clear the monitor).
#[test]
fn spacing_adds_frame_loads_after_each_access_but_not_around_exclusives() {
    let sb = |arch: &str, body: &str| {
        atomlab_litmus::parse("sb.litmus", &format!("{arch} SB\n{body}")).unwrap()
    };
    let tests = [
        (
            Isa::X86_64,
            sb("X86", "{ }\n P0 | P1 ;\n MOV [x],$1 | MOV [y],$1 ;\n MOV EAX,[y] | MOV EAX,[x] ;\nexists (0:EAX=0 /\\ 1:EAX=0)\n"),
        ),
        (
            Isa::AArch64,
            sb("AArch64", "{ 0:X1=x; 0:X3=y; 1:X1=y; 1:X3=x; }\n P0 | P1 ;\n MOV W0,#1 | MOV W0,#1 ;\n STR W0,[X1] | STR W0,[X1] ;\n LDR W2,[X3] | LDR W2,[X3] ;\nexists (0:X2=0 /\\ 1:X2=0)\n"),
        ),
        (
            Isa::RiscV64,
            sb("RISCV", "{ 0:x6=x; 0:x8=y; 1:x6=y; 1:x8=x; }\n P0 | P1 ;\n ori x5,x0,1 | ori x5,x0,1 ;\n sw x5,0(x6) | sw x5,0(x6) ;\n lw x7,0(x8) | lw x7,0(x8) ;\nexists (0:x7=0 /\\ 1:x7=0)\n"),
        ),
    ];
    for (isa, test) in tests {
        let plain = generate(&test, isa, &PrepareOptions::default()).unwrap();
        let with = |n: u32| {
            generate(
                &test,
                isa,
                &PrepareOptions {
                    spacing: n,
                    ..PrepareOptions::default()
                },
            )
            .unwrap()
        };
        let (one, two) = (with(1), with(2));
        for t in 0..2 {
            // Two accesses per thread: spacing 2 adds twice what 1 adds.
            let per_load = (one[t].len() - plain[t].len()) / 2;
            assert!(per_load >= 3, "{isa:?}: {per_load} bytes per load");
            assert_eq!(two[t].len(), plain[t].len() + 4 * per_load, "{isa:?}");
        }
    }
    let exclusive = atomlab_litmus::parse_file(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../atomlab-model/tests/litmus/aarch64/ldxr-stxr.litmus"),
    )
    .unwrap();
    let plain = generate(&exclusive, Isa::AArch64, &PrepareOptions::default()).unwrap();
    let spaced = generate(
        &exclusive,
        Isa::AArch64,
        &PrepareOptions {
            spacing: 8,
            ..PrepareOptions::default()
        },
    )
    .unwrap();
    let has_exclusive = |t: &atomlab_litmus::Thread| {
        t.code
            .iter()
            .any(|i| matches!(i, atomlab_litmus::Instr::StoreExclusive { .. }))
    };
    assert!(exclusive.threads.iter().any(has_exclusive));
    for (t, th) in exclusive.threads.iter().enumerate() {
        if has_exclusive(th) {
            assert_eq!(plain[t], spaced[t], "thread {t} has an exclusive pair");
        }
    }
}
