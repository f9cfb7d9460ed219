//! What the run tests share: where the litmus corpora are and how their
//! files are listed. Each test binary uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A folder of the project's own litmus tests (atomlab-model's).
pub fn own(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../atomlab-model/tests/litmus")
        .join(rel)
}

/// ../shared/litmus beside the repository, or None (said on stderr) when
/// it is absent, so that the test skips.
pub fn shared() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!(
            "skipped: {} is absent (the shared litmus corpus)",
            p.display()
        );
        None
    }
}

/// The `.litmus` files below `dir`, subfolders included, sorted; none when
/// it cannot be read.
pub fn litmus_files(dir: &Path) -> Vec<PathBuf> {
    let mut v = atomlab_litmus::inputs::litmus_files(dir);
    v.sort();
    v
}

/// Whether some thread has a store-release before a later load-acquire:
/// the pair qemu-user on an x86-64 host does not keep in order
/// (hardware_aarch64.rs says what was measured), so a forbidden state of
/// such a test under emulation is the emulator's, not the code's.
pub fn has_release_then_acquire(test: &atomlab_litmus::Test) -> bool {
    use atomlab_litmus::Instr;
    test.threads.iter().any(|th| {
        let first_release = th.code.iter().position(|i| {
            matches!(i, Instr::Store { annot, .. } | Instr::StoreExclusive { annot, .. } if annot.release)
                || matches!(i, Instr::Rmw { write, .. } | Instr::Cas { write, .. } if write.release)
        });
        first_release.is_some_and(|k| {
            th.code[k + 1..].iter().any(|i| {
                matches!(i, Instr::Load { annot, .. } if annot.acquire)
                    || matches!(i, Instr::Rmw { read, .. } | Instr::Cas { read, .. } if read.acquire)
            })
        })
    })
}

/// A two-thread test with a loop in P0: `p0` over its register r0 (thread
/// 0, register 0), and P1 storing 1 to x (location 0); x is observed, and
/// the condition asks whether r0 ends as 1.
pub fn loop_test(
    arch: atomlab_litmus::Arch,
    file: &str,
    p0: Vec<atomlab_litmus::Instr>,
) -> atomlab_litmus::Test {
    use atomlab_litmus::{
        CmpOp, Condition, Expr, Instr, Prop, Quantifier, StateVar, Test, Thread, Value,
    };
    Test {
        file: file.into(),
        arch,
        name: "loop".into(),
        locations: vec!["x".into()],
        init: vec![],
        threads: vec![
            Thread {
                id: 0,
                regs: vec!["r0".into()],
                init: vec![],
                code: p0,
            },
            Thread {
                id: 1,
                regs: vec![],
                init: vec![],
                code: vec![Instr::Store {
                    addr: Expr::Const(Value::Loc(0)),
                    value: Expr::int(1),
                    annot: Default::default(),
                }],
            },
        ],
        observed: vec![StateVar::Loc(0)],
        filter: None,
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop: Prop::Atom(
                StateVar::Reg { thread: 0, reg: 0 },
                CmpOp::Eq,
                Value::Int(1),
            ),
        },
    }
}
