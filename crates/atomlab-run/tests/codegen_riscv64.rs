//! The RISC-V code generator, on any host: every RISCV and C test of the
//! project's and the shared corpora either generates code or is refused
//! with a reason (never a panic), and, where GNU objdump for riscv64 is
//! installed, the code of every RISCV test disassembles cleanly and holds
//! exactly the test's memory accesses, fences and AMOs: the same multiset
//! of mnemonics (`ld`, `sc.d.rl`, `amoswap.d.aqrl`, `fence r,rw`…) as the
//! test's source (at 64 bits, as the backend runs every access) (diy7's `lw.aq`/`sw.rl` spelled as the fenced sequences
//! herd reads them as), besides the prologue's and epilogue's frame
//! accesses; and the code of every C test holds exactly the instructions
//! the C11→RISC-V mapping gives it (those `check`'s `riscv` column judges).
//! Without objdump the comparison is skipped with a message, and
//! under `ATOMLAB_REQUIRE_CROSS=1` (as CI sets) it fails instead.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use atomlab_litmus::Arch;
use atomlab_run::{generate, Isa, PrepareOptions, RunError};

mod support;
use support::{litmus_files, own};

fn dirs() -> Vec<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = vec![own("riscv"), own("c")];
    let shared = here.join("../../../shared");
    for d in ["litmus-more/riscv", "litmus/c"] {
        let p = shared.join(d);
        if p.is_dir() {
            v.push(p);
        } else {
            eprintln!("note: {} is absent; only the project's tests", p.display());
        }
    }
    v
}

/// A fence's set as the parser keeps it: `r` and/or `w` (I/O dropped).
fn fence_set(s: &str) -> String {
    let s = s.trim().to_ascii_lowercase();
    let mut out = String::new();
    if s.contains('r') {
        out.push('r');
    }
    if s.contains('w') {
        out.push('w');
    }
    out
}

/// The memory-access, fence and AMO mnemonics of the test's thread table,
/// lower case, a fence with its sets (`fence r,rw`), every access at 64
/// bits as the backend runs it (`lw` is `ld`, `amoadd.w` is `amoadd.d`),
/// and annotated plain accesses expanded as atomlab-litmus (and herd)
/// lower them; `fence.i` orders no data access and is dropped by the
/// lowering.
fn source_mnemonics(src: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    let mut add = |k: String| *m.entry(k).or_insert(0) += 1;
    let table = src
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("P0"))
        .skip(1)
        .take_while(|l| {
            let w = l.trim_start();
            !(w.starts_with("exists")
                || w.starts_with("~exists")
                || w.starts_with("forall")
                || w.starts_with("locations")
                || w.starts_with("filter"))
        });
    for line in table {
        let row = line.split(';').next().unwrap_or("");
        for cell in row.split('|') {
            let mut cell = cell.trim();
            // Labels.
            while let Some((l, rest)) = cell.split_once(':') {
                if !l.trim().is_empty()
                    && l.trim()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    cell = rest.trim();
                } else {
                    break;
                }
            }
            let mut words = cell.split_whitespace();
            let Some(op) = words.next() else { continue };
            let op = op.to_ascii_lowercase();
            let rest: String = words.collect::<Vec<_>>().join("");
            let (stem, ann) = match op.find(".aq").or_else(|| op.find(".rl")) {
                Some(i) => (&op[..i], &op[i..]),
                None => (op.as_str(), ""),
            };
            let plain_load = matches!(stem, "lb" | "lh" | "lw" | "ld" | "lbu" | "lhu" | "lwu");
            let plain_store = matches!(stem, "sb" | "sh" | "sw" | "sd");
            if plain_load {
                let base = "ld".to_string();
                if ann == ".aqrl" {
                    add("fence rw,rw".into());
                }
                add(base);
                if ann == ".aq" || ann == ".aqrl" {
                    add("fence r,rw".into());
                }
            } else if plain_store {
                match ann {
                    ".aqrl" => add("fence rw,rw".into()),
                    ".rl" => add("fence rw,w".into()),
                    _ => {}
                }
                add("sd".into());
            } else if op == "fence" {
                let name = match rest.split_once(',') {
                    Some((p, s)) => format!("fence {},{}", fence_set(p), fence_set(s)),
                    None => "fence rw,rw".into(),
                };
                add(name);
            } else if op == "fence.tso"
                || op.starts_with("lr.")
                || op.starts_with("sc.")
                || op.starts_with("amo")
            {
                add(op.replacen(".w", ".d", 1));
            }
        }
    }
    m
}

/// The same mnemonics in objdump's listing of the generated code, the
/// frame accesses (`(a0)`, `(sp)`) left out.
fn code_mnemonics(listing: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for line in listing.lines() {
        let mut f = line.split('\t');
        let (Some(_), Some(_), Some(op)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let args = f.next().unwrap_or("").trim();
        let op = op.trim().to_string();
        if args.ends_with("(a0)") || args.ends_with("(sp)") {
            continue;
        }
        let memory = matches!(
            op.as_str(),
            "lb" | "lh" | "lw" | "ld" | "lbu" | "lhu" | "lwu" | "sb" | "sh" | "sw" | "sd"
        ) || op.starts_with("lr.")
            || op.starts_with("sc.")
            || op.starts_with("amo")
            || op.starts_with("fence");
        if !memory {
            continue;
        }
        let name = if op == "fence" {
            format!("fence {}", if args.is_empty() { "iorw,iorw" } else { args })
        } else {
            op
        };
        *m.entry(name).or_insert(0) += 1;
    }
    m
}

/// `.aq`, `.rl`, `.aqrl` or nothing.
fn bits(aq: bool, rl: bool) -> &'static str {
    match (aq, rl) {
        (true, true) => ".aqrl",
        (true, false) => ".aq",
        (false, true) => ".rl",
        (false, false) => "",
    }
}

/// The mnemonics a C test's code must hold: its threads as the C11→RISC-V
/// mapping compiles them (the instructions `check`'s `riscv` column
/// judges), each access at 64 bits, a compare-exchange as its LR/SC pair
/// (plus the load of a expected value kept in memory, and the store of
/// the old value there on failure).
fn mapped_mnemonics(test: &atomlab_litmus::Test) -> BTreeMap<String, usize> {
    use atomlab_litmus::{CasExpected, Fence, Instr, RmwOp};
    let compiled = atomlab_model::mapping::compile(test, atomlab_model::mapping::Target::RiscV);
    let mut m = BTreeMap::new();
    let mut add = |k: String| *m.entry(k).or_insert(0) += 1;
    let set = |a: atomlab_litmus::RvAccesses| {
        format!(
            "{}{}",
            if a.r { "r" } else { "" },
            if a.w { "w" } else { "" }
        )
    };
    for th in &compiled.threads {
        for i in &th.code {
            match i {
                Instr::Load { annot, .. } if annot.exclusive => {
                    add(format!("lr.d{}", bits(annot.acquire, annot.release)))
                }
                Instr::Load { .. } => add("ld".into()),
                Instr::Store { .. } => add("sd".into()),
                Instr::StoreExclusive { annot, .. } => {
                    add(format!("sc.d{}", bits(annot.acquire, annot.release)))
                }
                Instr::Rmw {
                    op, read, write, ..
                } => {
                    let name = match op {
                        RmwOp::Xchg => "swap",
                        RmwOp::Add | RmwOp::Sub => "add",
                        RmwOp::And | RmwOp::Clr => "and",
                        RmwOp::Or => "or",
                        RmwOp::Xor => "xor",
                        RmwOp::Max => "max",
                        RmwOp::Min => "min",
                        RmwOp::Umax => "maxu",
                        RmwOp::Umin => "minu",
                    };
                    add(format!("amo{name}.d{}", bits(read.acquire, write.release)));
                }
                Instr::Cas {
                    expected,
                    read,
                    write,
                    fail,
                    ..
                } => {
                    add(format!(
                        "lr.d{}",
                        bits(read.acquire || fail.acquire, read.release || fail.release)
                    ));
                    add(format!("sc.d{}", bits(write.acquire, write.release)));
                    if let CasExpected::Mem(_) = expected {
                        add("ld".into());
                        add("sd".into());
                    }
                }
                Instr::Fence(Fence::RiscV { pred, succ }) => {
                    add(format!("fence {},{}", set(*pred), set(*succ)))
                }
                Instr::Fence(Fence::Tso) => add("fence.tso".into()),
                _ => {}
            }
        }
    }
    m
}

fn objdump(code: &[u8], dir: &Path, n: usize) -> Option<String> {
    let bin = dir.join(format!("t{n}.bin"));
    std::fs::write(&bin, code).ok()?;
    let out = std::process::Command::new("riscv64-linux-gnu-objdump")
        .args(["-D", "-b", "binary", "-m", "riscv:rv64"])
        .arg(&bin)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn corpus_generates_the_tests_instructions() {
    let mut files: Vec<PathBuf> = dirs().iter().flat_map(|d| litmus_files(d)).collect();
    files.sort();
    let tmp = std::env::temp_dir().join(format!("atomlab-cg-rv64-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let have_objdump = std::process::Command::new("riscv64-linux-gnu-objdump")
        .arg("--version")
        .output()
        .is_ok();
    if !have_objdump {
        let msg = "riscv64-linux-gnu-objdump is absent (binutils-riscv64-linux-gnu)";
        if std::env::var("ATOMLAB_REQUIRE_CROSS").is_ok_and(|v| v == "1") {
            panic!("{msg}, and ATOMLAB_REQUIRE_CROSS=1 is set");
        }
        eprintln!("note: {msg}: the code is generated but not disassembled");
    }
    let (mut generated, mut refused, mut compared, mut n) = (0, 0, 0, 0);
    let (mut rv_generated, mut rv_refused) = (0, 0);
    let mut mismatches = Vec::new();
    for p in &files {
        let Ok(test) = atomlab_litmus::parse_file(p) else {
            continue;
        };
        if !matches!(test.arch, Arch::RiscV | Arch::C) || test.is_linux() {
            continue;
        }
        match generate(&test, Isa::RiscV64, &PrepareOptions::default()) {
            Ok(code) => {
                generated += 1;
                if test.arch == Arch::RiscV {
                    rv_generated += 1;
                }
                if !have_objdump {
                    continue;
                }
                let mut all = BTreeMap::new();
                for c in &code {
                    n += 1;
                    let listing = objdump(c, &tmp, n).expect("objdump runs");
                    // objdump prints what it cannot decode as `.4byte`,
                    // `.2byte` or `unimp` (and never emitted compressed
                    // instructions as 2-byte words).
                    assert!(
                        [".4byte", ".2byte", "unimp", ".insn"]
                            .iter()
                            .all(|bad| !listing.contains(bad)),
                        "{}: objdump does not decode the code:\n{listing}",
                        p.display()
                    );
                    for (k, v) in code_mnemonics(&listing) {
                        *all.entry(k).or_insert(0) += v;
                    }
                }
                compared += 1;
                let want = if test.arch == Arch::RiscV {
                    source_mnemonics(&std::fs::read_to_string(p).unwrap())
                } else {
                    mapped_mnemonics(&test)
                };
                if want != all {
                    mismatches.push(format!("{}: wanted {want:?}, code {all:?}", p.display()));
                }
            }
            Err(e @ RunError::Unencodable { .. }) => {
                refused += 1;
                if test.arch == Arch::RiscV {
                    rv_refused += 1;
                }
                eprintln!("refused: {e}");
            }
            Err(e) => panic!("{}: {e}", p.display()),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!(
        "{generated} generated ({rv_generated} RISCV), {refused} refused ({rv_refused} RISCV), {compared} compared (RISCV tests with their source, C tests with the C11->RISC-V mapping)"
    );
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(
        rv_generated >= 10,
        "only {rv_generated} RISCV tests generate"
    );
}

/// A RISCV test is refused on the other backends, naming the host.
#[test]
fn a_riscv_test_is_refused_by_the_other_backends() {
    let test = atomlab_litmus::parse_file(&own("riscv/MP.litmus")).unwrap();
    for isa in [Isa::X86_64, Isa::AArch64] {
        match generate(&test, isa, &PrepareOptions::default()) {
            Err(e @ RunError::WrongIsa { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(isa.name()) && msg.contains("riscv64"), "{msg}");
            }
            other => panic!("{isa:?}: {other:?}"),
        }
    }
}

/// A Linux-kernel C test is refused on riscv64 as on the other ISAs.
#[test]
fn a_linux_kernel_test_is_refused() {
    let src = "C lk\n{ x = 0; }\nP0 (int *x) { WRITE_ONCE(*x, 1); smp_mb(); }\nexists (x = 1)\n";
    let test = atomlab_litmus::parse("lk.litmus", src).unwrap();
    assert!(matches!(
        generate(&test, Isa::RiscV64, &PrepareOptions::default()),
        Err(RunError::LinuxKernel { .. })
    ));
}

/// What cannot run is refused with the instruction named, before any code
/// runs: an access through a register not known to hold a location.
#[test]
fn an_unknown_address_is_refused_with_its_line() {
    let src = "RISCV bad\n{\n0:x6=x;\n}\n P0 ;\n lw x5,0(x6) ;\n lw x7,0(x5) ;\nexists (0:x5=0)\n";
    let dir = std::env::temp_dir().join(format!("atomlab-rv-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.litmus");
    std::fs::write(&f, src).unwrap();
    let test = atomlab_litmus::parse_file(&f).unwrap();
    let e = generate(&test, Isa::RiscV64, &PrepareOptions::default()).unwrap_err();
    let _ = std::fs::remove_dir_all(&dir);
    match &e {
        RunError::Unencodable { line, index, .. } => {
            assert_eq!((*line, *index), (7, 1), "{e}");
        }
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("x5"), "{e}");
}
