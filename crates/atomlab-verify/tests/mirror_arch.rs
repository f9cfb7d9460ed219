//! The riscv64 and x86-64 lifters lower each memory instruction as
//! atomlab-litmus's RISCV and X86_64 parsers lower the same mnemonic, so
//! the `riscv` and `x86tso` models judge lifted code as they judge a
//! litmus test: a function of a gcc build of
//! crates/atomlab/tests/plugins/verify_locks.c is lifted, and its memory
//! events (kind, operation, annotations: aq/rl, exclusive, locked, width;
//! fences with their sets) are compared with those of a litmus test that
//! spells the same instructions as objdump prints them. Skipped without
//! the compilers, failed under ATOMLAB_REQUIRE_CROSS=1.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use atomlab_audit::PluginFile;
use atomlab_litmus::Instr;
use atomlab_verify::lift::{self, Locations, Registers};

fn build(gcc: &str, name: &str) -> Option<Vec<u8>> {
    let have = Command::new(gcc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have || (gcc == "cc" && !cfg!(target_arch = "x86_64")) {
        let msg = format!("mirror test skipped: no `{gcc}` building its architecture");
        if std::env::var("ATOMLAB_REQUIRE_CROSS").is_ok_and(|v| v == "1") {
            panic!("{msg}, and ATOMLAB_REQUIRE_CROSS=1 is set");
        }
        let _ = writeln!(std::io::stderr(), "{msg}");
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("verify-mirror");
    std::fs::create_dir_all(&dir).unwrap();
    let so = dir.join(format!("{name}.so"));
    let o = Command::new(gcc)
        .args(["-O2", "-shared", "-fPIC", "-I"])
        .arg(root.join("include"))
        .arg("-o")
        .arg(&so)
        .arg(root.join("crates/atomlab/tests/plugins/verify_locks.c"))
        .output()
        .expect("run the compiler");
    assert!(
        o.status.success(),
        "{gcc}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(std::fs::read(so).unwrap())
}

/// The memory events of `code`, in order, without addresses or registers.
fn events(code: &[Instr]) -> Vec<String> {
    code.iter()
        .filter_map(|i| match i {
            Instr::Load { annot, .. } => Some(format!("R {annot:?}")),
            Instr::Store { annot, .. } => Some(format!("W {annot:?}")),
            Instr::StoreExclusive { annot, .. } => Some(format!("WX {annot:?}")),
            Instr::Rmw {
                op, read, write, ..
            } => Some(format!("RMW {op:?} {read:?} {write:?}")),
            Instr::Cas {
                read, write, fail, ..
            } => Some(format!("CAS {read:?} {write:?} {fail:?}")),
            Instr::Fence(f) => Some(format!("F {f:?}")),
            _ => None,
        })
        .collect()
}

/// The events of `function` lifted from `data`.
fn lifted(data: &[u8], function: &str) -> Vec<String> {
    let file = PluginFile::parse("mirror.so", data).expect("reads");
    let entry = file.symbol(function).expect("the function's symbol");
    let mut regs = Registers::default();
    let mut locs = Locations::default();
    let obj = locs.object("lock");
    let l = lift::lifter(file.arch()).expect("a lifter");
    let out = l
        .lift(&file, entry, obj, false, &mut regs, &mut locs)
        .unwrap_or_else(|r| panic!("{function}: {r}"));
    events(&out.code)
}

/// The events of one thread of litmus code `body` in dialect `arch`.
fn parsed(arch: &str, init: &str, body: &str) -> Vec<String> {
    let src = format!(
        "{arch} mirror\n{{ {init} }}\n P0 ;\n{}\nexists (x=0)\n",
        body.lines()
            .map(|l| format!(" {l} ;"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let t = atomlab_litmus::parse("mirror.litmus", &src).unwrap_or_else(|e| panic!("{src}\n{e}"));
    events(&t.threads[0].code)
}

#[test]
fn riscv64_events_are_the_parsers() {
    let Some(so) = build("riscv64-linux-gnu-gcc", "riscv64") else {
        return;
    };
    let rv = |body| parsed("RISCV", "0:x10=x;", body);
    // objdump's text of each function's memory instructions (gcc 12).
    for (f, body) in [
        ("tas_lock", "amoswap.w.aq x15,x15,(x10)"),
        ("tas_relaxed_lock_lock", "amoswap.w x15,x15,(x10)"),
        ("tas_unlock", "fence iorw,ow\namoswap.w x0,x0,(x10)"),
        ("tas_relaxed_unlock_unlock", "amoswap.w x0,x0,(x10)"),
        ("ttas_lock", "lw x15,0(x10)\namoswap.w.aq x15,x15,(x10)"),
        (
            "ticket_lock",
            "amoadd.w x14,x15,(x10)\nlw x15,0(x10)\nfence rw,rw",
        ),
        (
            "ticket_unlock",
            "lw x15,4(x10)\nfence iorw,ow\namoswap.w x0,x15,(x10)",
        ),
    ] {
        let got = lifted(&so, f);
        assert_eq!(got.len(), body.lines().count(), "{f}: {got:?}");
        assert_eq!(got, rv(body), "{f}");
    }
}

#[test]
fn x86_64_events_are_the_parsers() {
    let Some(so) = build("cc", "x86_64") else {
        return;
    };
    let x86 = |body| parsed("X86_64", "0:rdi=x;", body);
    for (f, body) in [
        ("tas_lock", "xchgl %eax,(%rdi)"),
        ("tas_unlock", "movl $0,(%rdi)"),
        ("ttas_lock", "movl (%rdi),%eax\nxchgl %eax,(%rdi)"),
        ("ticket_lock", "lock xaddl %edx,(%rdi)\nmovl (%rdi),%eax"),
        ("ticket_unlock", "movl (%rdi),%eax\nmovl %eax,(%rdi)"),
    ] {
        let got = lifted(&so, f);
        assert_eq!(got.len(), body.lines().count(), "{f}: {got:?}");
        assert_eq!(got, x86(body), "{f}");
    }
}
