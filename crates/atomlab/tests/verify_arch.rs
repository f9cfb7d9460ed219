//! `atomlab verify` on riscv64 and x86-64 builds of
//! tests/plugins/verify_locks.c (Debian's `riscv64-linux-gnu-gcc` and the
//! host `cc`, `-O2 -shared -fPIC`): the acquire/release TAS (the
//! pthread-free spin lock), TTAS and ticket locks PASS under each file's
//! own model (`riscv`, `x86tso`) and `sc`; the relaxed ones FAIL under
//! `riscv` with a counterexample and PASS under `x86tso`, where every
//! locked read-modify-write is a full barrier and every store a release,
//! as the hardware runs them. tests/plugins/verify_arch.c's locks that
//! make a system call or read a time counter are REFUSED naming the
//! instruction and its address, and its racy test-then-set lock FAILs
//! under every model. The description is read with the
//! dynamic relocations applied (the variant names are pointers the
//! dynamic linker fills in). Lamport's ring (tests/plugins/verify_kinds.c)
//! with a relaxed publish FAILs under `riscv` and PASSes under `x86tso`;
//! with release/acquire it PASSes under both.
//!
//! Without a compiler the tests skip with a message, and fail instead
//! under ATOMLAB_REQUIRE_CROSS=1 (as CI sets).

mod cli_support;
mod verify_support;

use std::path::{Path, PathBuf};

use cli_support::{assert_bad_input, atomlab, stderr};
use verify_support::{build_plugin, verdicts, HOST, RISCV};

/// `source` (in tests/plugins) built by `gcc` at -O2 as `name.so`, or
/// `None` after saying why not.
fn build(gcc: &str, source: &str, name: &str) -> Option<PathBuf> {
    build_with(gcc, source, name, &["-O2"])
}

/// `source` built by `gcc` with `flags` as `name.so`.
fn build_with(gcc: &str, source: &str, name: &str, flags: &[&str]) -> Option<PathBuf> {
    build_plugin(gcc, source, "plugins-verify-arch", name, flags)
}

/// `atomlab --no-save verify --plugin so --variant variants --model
/// models`: its exit code and stdout.
fn verify(so: &Path, variants: &str, models: &str) -> (Option<i32>, String) {
    let o = atomlab(&[
        "--no-save",
        "verify",
        "--plugin",
        so.to_str().unwrap(),
        "--variant",
        variants,
        "--model",
        models,
    ]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    (o.status.code(), out)
}

/// `out` with its lines joined: the terminal wraps the note that starts
/// with the plugin's path at 100 columns, and a long path (the
/// cross-test's target folder) moves where.
fn one_line(out: &str) -> String {
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

const SPIN: &str =
    "tas,tas-relaxed-lock,tas-relaxed-unlock,ttas,ttas-relaxed-lock,ttas-relaxed-unlock";

#[test]
fn riscv64_spin_locks_pass_and_relaxed_ones_fail_under_riscv() {
    let Some(so) = build(RISCV, "verify_locks.c", "locks-riscv64") else {
        return;
    };
    let (code, out) = verify(&so, SPIN, "riscv,sc");
    assert_eq!(code, Some(1), "a relaxed lock FAILs: exit 1\n{out}");
    assert!(
        one_line(&out).contains("riscv64 code, models riscv, sc"),
        "{out}"
    );
    for v in ["tas", "ttas"] {
        for m in ["riscv", "sc"] {
            assert_eq!(verdicts(&out, v, m), ["PASS"], "{v} {m}\n{out}");
        }
    }
    for v in [
        "tas-relaxed-lock",
        "tas-relaxed-unlock",
        "ttas-relaxed-lock",
        "ttas-relaxed-unlock",
    ] {
        assert_eq!(verdicts(&out, v, "riscv"), ["FAIL"], "{v}\n{out}");
        assert_eq!(verdicts(&out, v, "sc"), ["PASS"], "{v} sc\n{out}");
        assert!(
            out.contains(&format!("{v} FAIL under riscv")),
            "{v}: the FAIL is explained\n{out}"
        );
    }
    assert!(out.contains("counterexample (reads-from): P0 "), "{out}");
}

/// The ticket locks' unlock is an `amoswap.w` on riscv64 (gcc 12's atomic
/// store), which the engine explores slowly: they have their own test.
#[test]
fn riscv64_ticket_lock_passes_and_its_relaxed_build_fails() {
    let Some(so) = build(RISCV, "verify_locks.c", "ticket-riscv64") else {
        return;
    };
    let (code, out) = verify(&so, "ticket", "riscv,sc");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(verdicts(&out, "ticket", "riscv"), ["PASS"], "{out}");
    assert_eq!(verdicts(&out, "ticket", "sc"), ["PASS"], "{out}");
    let (code, out) = verify(&so, "ticket-relaxed", "riscv");
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(verdicts(&out, "ticket-relaxed", "riscv"), ["FAIL"], "{out}");
}

#[test]
fn x86_64_locks_pass_under_x86tso_relaxed_ones_included() {
    let Some(so) = build(HOST, "verify_locks.c", "locks-x86_64") else {
        return;
    };
    let all = format!("{SPIN},ticket,ticket-relaxed");
    let (code, out) = verify(&so, &all, "x86tso,sc");
    assert_eq!(code, Some(0), "nothing FAILs on x86-64\n{out}");
    assert!(
        one_line(&out).contains("x86-64 code, models x86tso, sc"),
        "{out}"
    );
    for v in all.split(',') {
        for m in ["x86tso", "sc"] {
            assert_eq!(verdicts(&out, v, m), ["PASS"], "{v} {m}\n{out}");
        }
    }
}

/// Lamport's ring of tests/plugins/verify_kinds.c on riscv64 and x86-64:
/// the slot index masked and scaled (`andi; addi; slli; add` into an
/// address register on riscv64, `disp(base,index,8)` on x86-64) and pop's
/// store through its item pointer (a1, rsi) are followed; the spsc client
/// passes its arguments in each file's own registers. Under `riscv` the
/// relaxed publish of head lets the consumer read a slot before its item
/// (FAIL), the release/acquire ring PASSes; under `x86tso` both PASS (TSO
/// keeps the slot's store before head's, as the hardware does); `sc`
/// passes both everywhere.
#[test]
fn lamports_ring_on_riscv64_and_x86_64() {
    let rings = "ring,ring-relaxed-head";
    if let Some(so) = build(RISCV, "verify_kinds.c", "kinds-riscv64") {
        let (code, out) = verify(&so, rings, "riscv,sc");
        assert_eq!(code, Some(1), "the relaxed ring FAILs: exit 1\n{out}");
        for m in ["riscv", "sc"] {
            assert_eq!(verdicts(&out, "ring", m), ["PASS"], "ring {m}\n{out}");
        }
        assert_eq!(
            verdicts(&out, "ring-relaxed-head", "riscv"),
            ["FAIL"],
            "{out}"
        );
        assert_eq!(verdicts(&out, "ring-relaxed-head", "sc"), ["PASS"], "{out}");
        let line = one_line(&out);
        assert!(
            line.contains("ring-relaxed-head FAIL under riscv: FIFO broken: the consumer popped ")
                && line.contains("was never pushed"),
            "{out}"
        );
        assert!(out.contains("counterexample (reads-from): P0 "), "{out}");
    }
    if let Some(so) = build(HOST, "verify_kinds.c", "kinds-x86_64") {
        let (code, out) = verify(&so, rings, "x86tso,sc");
        assert_eq!(code, Some(0), "nothing FAILs on x86-64\n{out}");
        for v in rings.split(',') {
            for m in ["x86tso", "sc"] {
                assert_eq!(verdicts(&out, v, m), ["PASS"], "{v} {m}\n{out}");
            }
        }
    }
}

#[test]
fn a_system_call_or_an_unknown_instruction_is_refused_with_its_address() {
    for (gcc, syscall, counter) in [(RISCV, "ecall", "rdtime"), (HOST, "syscall", "rdtsc")] {
        let Some(so) = build(gcc, "verify_arch.c", &format!("arch-{gcc}")) else {
            continue;
        };
        let model = if gcc == RISCV { "riscv" } else { "x86tso" };
        let (code, out) = verify(&so, "syscall,counter", model);
        assert_eq!(code, Some(0), "REFUSED is not a FAIL\n{out}");
        assert_eq!(verdicts(&out, "syscall", model), ["REFUSED"], "{out}");
        assert_eq!(verdicts(&out, "counter", model), ["REFUSED"], "{out}");
        assert!(
            out.contains(&format!(
                "{syscall}: a system call, which verify cannot follow at 0x"
            )) && out.contains("(syscall_lock+0x"),
            "{gcc}: the system call is named with its address\n{out}"
        );
        assert!(
            out.contains(&format!(
                "{counter}: an instruction outside the set verify follows at 0x"
            )) && out.contains("(counter_lock"),
            "{gcc}: the instruction is named with its address\n{out}"
        );
    }
}

/// The variant names and functions are pointers in the file's data that
/// the dynamic linker fills in (`R_RISCV_RELATIVE`, `R_X86_64_RELATIVE`):
/// read with them applied, the names list; a model of another
/// architecture is refused naming the file's own.
#[test]
fn descriptions_are_read_with_relocations_and_models_checked() {
    for (gcc, arch, own) in [(RISCV, "riscv64", "riscv"), (HOST, "x86-64", "x86tso")] {
        let Some(so) = build(gcc, "verify_locks.c", &format!("desc-{arch}")) else {
            continue;
        };
        let so = so.to_str().unwrap();
        assert_bad_input(
            &["--no-save", "verify", "--plugin", so, "--variant", "nope"],
            &[
                "no variant nope",
                "tas (lock), tas-relaxed-lock (lock)",
                "ticket-relaxed (lock)",
            ],
        );
        assert_bad_input(
            &["--no-save", "verify", "--plugin", so, "--model", "aarch64"],
            &[
                &format!("aarch64 does not judge {arch} code"),
                &format!("judged by {own} (its own) and sc"),
            ],
        );
    }
}

/// A lock that tests and then sets with two accesses FAILs under every
/// model, x86-TSO included: the x86-64 lifter does not pass everything.
#[test]
fn a_racy_lock_fails_under_every_model() {
    for (gcc, model) in [(HOST, "x86tso"), (RISCV, "riscv")] {
        let Some(so) = build(gcc, "verify_arch.c", &format!("racy-{gcc}")) else {
            continue;
        };
        let (code, out) = verify(&so, "racy", &format!("{model},sc"));
        assert_eq!(code, Some(1), "{gcc}\n{out}");
        assert_eq!(verdicts(&out, "racy", model), ["FAIL"], "{gcc}\n{out}");
        assert_eq!(verdicts(&out, "racy", "sc"), ["FAIL"], "{gcc}\n{out}");
        assert!(
            out.contains(&format!("racy FAIL under {model}")),
            "{gcc}: the FAIL is explained\n{out}"
        );
    }
}

/// tests/plugins/ticket.c's TTAS lock: a byte-wide `lock cmpxchg` and a
/// backoff that calls sched_yield(2) (followed as nothing another thread
/// sees) PASS on x86-64; on riscv64 gcc calls libatomic's
/// `__atomic_compare_exchange_1` for the byte CAS, which is refused by name.
#[test]
fn a_byte_cas_with_sched_yield_backoff() {
    if let Some(so) = build(HOST, "ticket.c", "ticket-c-x86_64") {
        let (code, out) = verify(&so, "c-ttas", "x86tso,sc");
        assert_eq!(code, Some(0), "{out}");
        assert_eq!(verdicts(&out, "c-ttas", "x86tso"), ["PASS"], "{out}");
        assert_eq!(verdicts(&out, "c-ttas", "sc"), ["PASS"], "{out}");
    }
    if let Some(so) = build(RISCV, "ticket.c", "ticket-c-riscv64") {
        let (code, out) = verify(&so, "c-ttas", "riscv");
        assert_eq!(code, Some(0), "{out}");
        assert_eq!(verdicts(&out, "c-ttas", "riscv"), ["REFUSED"], "{out}");
        assert!(
            out.contains("calls __atomic_compare_exchange_1, a function of another library"),
            "{out}"
        );
    }
}

/// A relaxed TAS made correct by seq_cst fences PASSes: `fence rw,rw` on
/// riscv64, and on x86-64 gcc's `lock orq $0,(%rsp)`, a locked RMW of the
/// thread's own stack that orders as MFENCE does.
#[test]
fn seq_cst_fences_order_a_relaxed_lock() {
    for (gcc, model) in [(HOST, "x86tso"), (RISCV, "riscv")] {
        let Some(so) = build(gcc, "verify_arch.c", &format!("fenced-{gcc}")) else {
            continue;
        };
        let (code, out) = verify(&so, "fenced", &format!("{model},sc"));
        assert_eq!(code, Some(0), "{gcc}\n{out}");
        assert_eq!(verdicts(&out, "fenced", model), ["PASS"], "{gcc}\n{out}");
        assert_eq!(verdicts(&out, "fenced", "sc"), ["PASS"], "{gcc}\n{out}");
    }
}

/// At -O0 every value goes through the stack and `atomlab_plugin` sets up
/// a frame before it returns the description's address: the stack slots
/// are registers of the thread, and the description is found by the
/// lifter's analysis of that body. The verdicts are those of -O2.
#[test]
fn unoptimised_builds_give_the_same_verdicts() {
    for (gcc, model, relaxed) in [(HOST, "x86tso", "PASS"), (RISCV, "riscv", "FAIL")] {
        let Some(so) = build_with(gcc, "verify_locks.c", &format!("o0-{gcc}"), &["-O0"]) else {
            continue;
        };
        let (_, out) = verify(&so, SPIN, model);
        for v in ["tas", "ttas"] {
            assert_eq!(verdicts(&out, v, model), ["PASS"], "{gcc} -O0 {v}\n{out}");
        }
        for v in ["tas-relaxed-lock", "ttas-relaxed-unlock"] {
            assert_eq!(verdicts(&out, v, model), [relaxed], "{gcc} -O0 {v}\n{out}");
        }
    }
}

/// A lock that calls an exported function of its own file goes through
/// the PLT (and, built with -fno-plt, a GOT slot): verify follows the
/// file's definition instead of refusing it as another library's.
#[test]
fn a_call_to_an_exported_function_of_the_file_is_followed() {
    for (gcc, model) in [(HOST, "x86tso"), (RISCV, "riscv")] {
        for flags in [&["-O2"][..], &["-O2", "-fno-plt"]] {
            let opt = flags.join(" ");
            let name = format!("exported-{gcc}{}", flags.len());
            let Some(so) = build_with(gcc, "verify_arch.c", &name, flags) else {
                continue;
            };
            let (code, out) = verify(&so, "exported", model);
            assert_eq!(code, Some(0), "{gcc} {opt}\n{out}");
            assert_eq!(
                verdicts(&out, "exported", model),
                ["PASS"],
                "{gcc} {opt}\n{out}"
            );
        }
    }
}
