//! The AArch64 code generator, on any host: every AArch64 and C test of
//! the project's and the shared corpus either generates code or is
//! refused with a reason (never a panic), and, where GNU objdump for
//! aarch64 is installed, the code of every AArch64 test disassembles
//! cleanly and holds exactly the test's memory accesses and barriers:
//! the same multiset of mnemonics (`ldar`, `stlr`, `casal`, `dmb ishld`…)
//! as the test's source, besides the prologue's and epilogue's frame
//! accesses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use atomlab_litmus::Arch;
use atomlab_run::{generate, Isa, PrepareOptions, RunError};

mod support;
use support::litmus_files;

fn dirs() -> Vec<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = vec![
        here.join("../atomlab-model/tests/litmus/aarch64"),
        here.join("../atomlab-model/tests/litmus/c"),
    ];
    let shared = here.join("../../../shared/litmus");
    if shared.is_dir() {
        v.push(shared.join("aarch64"));
        v.push(shared.join("c"));
    } else {
        eprintln!(
            "note: {} is absent; only the project's tests",
            shared.display()
        );
    }
    v
}

/// The memory-access and barrier mnemonics of the test's thread table,
/// lower case, with a barrier's option (`dmb ish`); `ld<op>`/`swp`/`cas`
/// with the zero register as destination spelled as objdump prints them.
fn source_mnemonics(src: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
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
                if l.trim()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !l.trim().is_empty()
                {
                    cell = rest.trim();
                } else {
                    break;
                }
            }
            let mut words = cell.split_whitespace();
            let Some(op) = words.next() else { continue };
            let op = op.to_ascii_lowercase();
            let memory = op.starts_with("ld")
                || op.starts_with("st")
                || op.starts_with("cas")
                || op.starts_with("swp")
                || op == "dmb"
                || op == "dsb"
                || op == "isb";
            if !memory {
                continue;
            }
            let rest: String = words.collect::<Vec<_>>().join(" ").to_ascii_lowercase();
            let ops: Vec<&str> = rest.split(',').map(str::trim).collect();
            let zero = |i: usize| ops.get(i).is_some_and(|o| *o == "wzr" || *o == "xzr");
            let name = match op.as_str() {
                "dmb" | "dsb" => format!("{op} {}", rest.trim()),
                // A read into the zero register keeps no acquire, as herd
                // models it (NoRet) and atomlab-litmus lowers it; LD<op>
                // into it is objdump's ST<op>.
                _ if op.starts_with("cas") && zero(0) => op.replacen("casa", "cas", 1),
                _ if op.starts_with("swp") && zero(1) => op.replacen("swpa", "swp", 1),
                _ if op.starts_with("ld")
                    && !op.starts_with("ldr")
                    && ops.len() == 3
                    && zero(1) =>
                {
                    let o = format!("st{}", &op[2..]);
                    let base = o.trim_end_matches('l').trim_end_matches('a').to_string();
                    if o.ends_with('l') {
                        format!("{base}l")
                    } else {
                        base
                    }
                }
                _ => op,
            };
            *m.entry(name).or_insert(0) += 1;
        }
    }
    m
}

/// The same mnemonics in objdump's listing of the generated code, the
/// frame accesses (`[x0, …]`, `[sp, …]`) left out.
fn code_mnemonics(listing: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for line in listing.lines() {
        let mut f = line.split('\t');
        let (Some(_), Some(_), Some(op)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let args = f.next().unwrap_or("");
        let op = op.trim().to_string();
        if args.contains("[x0") || args.contains("[sp") {
            continue;
        }
        let memory = op.starts_with("ld")
            || op.starts_with("st")
            || op.starts_with("cas")
            || op.starts_with("swp")
            || op == "dmb"
            || op == "dsb"
            || op == "isb";
        if !memory {
            continue;
        }
        let name = match op.as_str() {
            "dmb" | "dsb" => format!("{op} {}", args.split_whitespace().next().unwrap_or("")),
            _ => op,
        };
        *m.entry(name).or_insert(0) += 1;
    }
    m
}

fn objdump(code: &[u8], dir: &Path, n: usize) -> Option<String> {
    let bin = dir.join(format!("t{n}.bin"));
    std::fs::write(&bin, code).ok()?;
    let out = std::process::Command::new("aarch64-linux-gnu-objdump")
        .args(["-D", "-b", "binary", "-m", "aarch64"])
        .arg(&bin)
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn corpus_generates_the_tests_instructions() {
    let mut files: Vec<PathBuf> = dirs().iter().flat_map(|d| litmus_files(d)).collect();
    files.sort();
    let tmp = std::env::temp_dir().join(format!("atomlab-cg-a64-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let have_objdump = std::process::Command::new("aarch64-linux-gnu-objdump")
        .arg("--version")
        .output()
        .is_ok();
    if !have_objdump {
        eprintln!(
            "note: aarch64-linux-gnu-objdump is absent: the code is generated but not disassembled"
        );
    }
    let (mut generated, mut refused, mut compared, mut n) = (0, 0, 0, 0);
    let mut mismatches = Vec::new();
    for p in &files {
        let Ok(test) = atomlab_litmus::parse_file(p) else {
            continue;
        };
        if !matches!(test.arch, Arch::AArch64 | Arch::C) {
            continue;
        }
        match generate(&test, Isa::AArch64, &PrepareOptions::default()) {
            Ok(code) => {
                generated += 1;
                if !have_objdump {
                    continue;
                }
                let mut all = BTreeMap::new();
                for c in &code {
                    n += 1;
                    let listing = objdump(c, &tmp, n).expect("objdump runs");
                    assert!(
                        !listing.contains("undefined") && !listing.contains(".inst"),
                        "{}: objdump does not decode the code:\n{listing}",
                        p.display()
                    );
                    for (k, v) in code_mnemonics(&listing) {
                        *all.entry(k).or_insert(0) += v;
                    }
                }
                if test.arch == Arch::AArch64 {
                    compared += 1;
                    let src = std::fs::read_to_string(p).unwrap();
                    let want = source_mnemonics(&src);
                    if want != all {
                        mismatches.push(format!("{}: source {want:?}, code {all:?}", p.display()));
                    }
                }
            }
            Err(e @ RunError::Unencodable { .. }) => {
                refused += 1;
                eprintln!("refused: {e}");
            }
            Err(e) => panic!("{}: {e}", p.display()),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    eprintln!("{generated} generated, {refused} refused, {compared} AArch64 tests compared with their source");
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert!(generated > 0);
}
