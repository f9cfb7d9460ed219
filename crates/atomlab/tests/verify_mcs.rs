//! `atomlab verify` on tests/plugins/verify_mcs.c, MCS queue locks whose
//! nodes come from malloc (one per `lock`, freed by `unlock`), built by
//! Debian's `aarch64-linux-gnu-gcc` at -O2 with libgcc's outline atomics,
//! with `-mno-outline-atomics` and with `-march=armv8.1-a`: the
//! release/acquire MCS lock PASSes under `aarch64` and `sc` (its queue
//! pointers stored, loaded back and followed through the nodes: verify's
//! regions for malloc, lift/heap.rs); with the handover relaxed it FAILs
//! under `aarch64` and PASSes under `sc`; a use of the node after `free`
//! and a double `free` FAIL under both, named as heap misuse; a node
//! field only ever written through a pointer loaded from the queue
//! (`mcs-counted`) is laid out in every node, so that lock PASSes. The same
//! lock with a `_Thread_local` node (`-fPIC`: a TLS descriptor call and
//! TPIDR_EL0) passes and fails the same way; a TAS lock that swaps in a
//! thread-local 1 from `.tdata` passes only if each thread's block starts
//! from the file's TLS template. The lock client runs a `free_` of the
//! file at the end: one that frees the lock passes, one that also calls
//! puts(3) is REFUSED naming the call and its address. The x86-64 build
//! (the host `cc`; `-fPIC` TLS through `__tls_get_addr`) gives the same
//! verdicts under `x86tso` and `sc` but for the relaxed handovers, which
//! PASS there: x86-TSO keeps stores in order and loads in order. The
//! riscv64 build's thread-local MCS locks give aarch64's verdicts under
//! `riscv` (its malloc'd ones take 40-60 s each there, so they are left
//! out of the test).
//!
//! Without the compiler the tests skip with a message, and fail instead
//! under ATOMLAB_REQUIRE_CROSS=1 (as CI sets).

mod cli_support;
mod verify_support;

use std::path::{Path, PathBuf};

use verify_support::{build_plugin, verdicts, verify_plugin, AARCH64, HOST, RISCV};

/// verify_mcs.c built for aarch64 with `flags` as `name.so`.
fn build(name: &str, flags: &[&str]) -> Option<PathBuf> {
    build_plugin(AARCH64, "verify_mcs.c", "plugins-verify-mcs", name, flags)
}

/// verify_mcs.c built for riscv64 at -O2 as `mcs-riscv64.so`.
fn build_riscv64() -> Option<PathBuf> {
    build_plugin(
        RISCV,
        "verify_mcs.c",
        "plugins-verify-mcs",
        "mcs-riscv64",
        &["-O2"],
    )
}

/// `atomlab --no-save verify --plugin so --model models`: exit code and
/// stdout.
fn verify(so: &Path, models: &str) -> (Option<i32>, String) {
    verify_plugin(so, &["--model", models])
}

/// Every row of `variant` under `model` says `want` (one row, or two
/// where the code calls outline atomics: without and with LSE).
fn all(out: &str, variant: &str, model: &str, want: &str) {
    let v = verdicts(out, variant, model);
    assert!(
        !v.is_empty() && v.iter().all(|x| x == want),
        "{variant} {model}: {v:?}, not all {want}\n{out}"
    );
}

fn check_build(name: &str, flags: &[&str]) {
    let Some(so) = build(name, flags) else {
        return;
    };
    let (code, out) = verify(&so, "aarch64,sc");
    assert_eq!(code, Some(1), "a broken variant FAILs: exit 1\n{out}");
    all(&out, "mcs", "aarch64", "PASS");
    all(&out, "mcs", "sc", "PASS");
    all(&out, "mcs-relaxed-handover", "aarch64", "FAIL");
    all(&out, "mcs-relaxed-handover", "sc", "PASS");
    // A node field written only through a pointer loaded from the queue:
    // laid out in every node, not taken for a wild pointer (which FAILed
    // this correct lock before).
    all(&out, "mcs-counted", "aarch64", "PASS");
    all(&out, "mcs-counted", "sc", "PASS");
    for m in ["aarch64", "sc"] {
        all(&out, "mcs-tls", m, "PASS");
        all(&out, "tas-tdata", m, "PASS");
        all(&out, "mcs-own-free", m, "PASS");
        all(&out, "mcs-noisy-free", m, "REFUSED");
    }
    all(&out, "mcs-tls-relaxed-handover", "aarch64", "FAIL");
    all(&out, "mcs-tls-relaxed-handover", "sc", "PASS");
    for v in ["mcs-use-after-free", "mcs-double-free"] {
        for m in ["aarch64", "sc"] {
            all(&out, v, m, "FAIL");
        }
    }
    let joined = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        joined.contains("mcs-relaxed-handover FAIL under aarch64")
            && joined.contains("mutual exclusion broken"),
        "{out}"
    );
    assert!(
        joined.contains("heap misuse in T") && joined.contains("(use after free)"),
        "{out}"
    );
    assert!(joined.contains("(double free)"), "{out}");
    // A heap misuse with the count right says so, not "data ends at 2
    // instead of 2".
    assert!(!joined.contains("data ends at 2 instead of 2"), "{out}");
    assert!(
        joined.contains("mcs-noisy-free REFUSED under aarch64")
            && joined.contains("free_, which the client runs at the end: calls puts")
            && joined.contains("(noisy_free+0x"),
        "{out}"
    );
}

#[test]
fn x86_64_build_passes_under_x86tso_relaxed_handover_included() {
    let Some(so) = build_plugin(
        HOST,
        "verify_mcs.c",
        "plugins-verify-mcs",
        "mcs-x86_64",
        &["-O2"],
    ) else {
        return;
    };
    let (code, out) = verify(&so, "x86tso,sc");
    assert_eq!(code, Some(1), "heap misuse FAILs: exit 1\n{out}");
    // Its PASSes say what they cannot cover: an Arm or RISC-V CPU.
    let joined = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        joined.contains("a PASS under x86tso covers x86-64 CPUs only")
            && joined.contains("a PASS under sc covers sequential consistency"),
        "{out}"
    );
    for m in ["x86tso", "sc"] {
        for v in [
            "mcs",
            "mcs-relaxed-handover",
            "mcs-counted",
            "mcs-tls",
            "mcs-tls-relaxed-handover",
            "mcs-own-free",
            "tas-tdata",
        ] {
            all(&out, v, m, "PASS");
        }
        all(&out, "mcs-use-after-free", m, "FAIL");
        all(&out, "mcs-double-free", m, "FAIL");
        all(&out, "mcs-noisy-free", m, "REFUSED");
    }
}

#[test]
fn riscv64_thread_local_mcs_passes_and_its_relaxed_handover_fails() {
    let Some(so) = build_riscv64() else {
        return;
    };
    let (code, out) = verify_plugin(
        &so,
        &[
            "--variant",
            "mcs-tls,mcs-tls-relaxed-handover,tas-tdata,mcs-noisy-free",
            "--model",
            "riscv,sc",
        ],
    );
    assert_eq!(code, Some(1), "{out}");
    for m in ["riscv", "sc"] {
        all(&out, "mcs-tls", m, "PASS");
        all(&out, "tas-tdata", m, "PASS");
        all(&out, "mcs-noisy-free", m, "REFUSED");
    }
    all(&out, "mcs-tls-relaxed-handover", "riscv", "FAIL");
    all(&out, "mcs-tls-relaxed-handover", "sc", "PASS");
}

/// With 3 threads the riscv64 build's executions have 66-70 events (its
/// stores are AMOs of two events each, its fences events of their own):
/// past the 64 of u64 words, judged with u128 ones (atomlab-model's
/// rel.rs) where they were BOUND before.
#[test]
fn riscv64_three_thread_mcs_is_judged_past_64_events() {
    let Some(so) = build_riscv64() else {
        return;
    };
    let (code, out) = verify_plugin(
        &so,
        &[
            "--variant",
            "mcs-tls,mcs-tls-relaxed-handover",
            "--model",
            "riscv",
            "--threads",
            "3",
        ],
    );
    assert_eq!(code, Some(1), "{out}");
    all(&out, "mcs-tls", "riscv", "PASS");
    all(&out, "mcs-tls-relaxed-handover", "riscv", "FAIL");
}

#[test]
fn mcs_with_outline_atomics() {
    check_build("mcs-outline", &["-O2"]);
}

#[test]
fn mcs_without_outline_atomics() {
    check_build("mcs-llsc", &["-O2", "-mno-outline-atomics"]);
}

#[test]
fn mcs_with_lse() {
    check_build("mcs-lse", &["-O2", "-march=armv8.1-a"]);
}
