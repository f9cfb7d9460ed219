//! The plugin description read from riscv64 and x86-64 files with their
//! dynamic relocations applied: in a `-shared -fPIC` build every pointer
//! of `struct atomlab_plugin` and the variants table is 0 in the file's
//! bytes and filled in by the dynamic linker: `R_*_RELATIVE` (addend: the
//! address in the file) for the names and the plugin's own functions, a
//! symbol relocation (`R_X86_64_64 free`, `R_RISCV_64 free`) for `free_`.
//! Built from crates/atomlab/tests/plugins/verify_locks.c by Debian's
//! `riscv64-linux-gnu-gcc` and the host `cc`; skipped without them, failed
//! under ATOMLAB_REQUIRE_CROSS=1.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use atomlab_audit::Pointer;
use atomlab_verify::{Kind, Plugin};

fn build(gcc: &str, name: &str) -> Option<Vec<u8>> {
    let have = Command::new(gcc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have || (gcc == "cc" && !cfg!(target_arch = "x86_64")) {
        let msg = format!("descriptor test skipped: no `{gcc}` building its architecture");
        if std::env::var("ATOMLAB_REQUIRE_CROSS").is_ok_and(|v| v == "1") {
            panic!("{msg}, and ATOMLAB_REQUIRE_CROSS=1 is set");
        }
        let _ = writeln!(std::io::stderr(), "{msg}");
        return None;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("verify-descriptor");
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

#[test]
fn riscv64_and_x86_64_descriptions_have_their_relocations_applied() {
    for (gcc, arch) in [("riscv64-linux-gnu-gcc", "riscv64"), ("cc", "x86-64")] {
        let Some(data) = build(gcc, arch) else {
            continue;
        };
        let p = Plugin::read(arch, &data).expect("the description reads");
        assert_eq!(p.arch().name(), arch);
        let d = &p.description;
        assert_eq!(d.abi_version, 1);
        assert_eq!(d.name, "verify-locks", "{arch}");
        let names: Vec<&str> = d.variants.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "tas",
                "tas-relaxed-lock",
                "tas-relaxed-unlock",
                "ttas",
                "ttas-relaxed-lock",
                "ttas-relaxed-unlock",
                "ticket",
                "ticket-relaxed"
            ],
            "{arch}"
        );
        for v in &d.variants {
            assert_eq!(v.kind, Some(Kind::Lock), "{arch} {}", v.name);
            // The functions are the file's own (RELATIVE relocations),
            // at their symbols; free_ is libc's (a symbol relocation).
            let fun = v.name.replace('-', "_");
            let (lock, unlock) = (format!("{fun}_lock"), format!("{fun}_unlock"));
            let at = |s: &str| p.file.symbol(s).map(Pointer::Here);
            assert_eq!(v.function("lock").cloned(), at(&lock), "{arch} {lock}");
            assert_eq!(
                v.function("unlock").cloned(),
                at(&unlock),
                "{arch} {unlock}"
            );
            assert_eq!(v.function("try_lock"), Some(&Pointer::Null), "{arch}");
            assert_eq!(
                v.function("free_"),
                Some(&Pointer::Import("free".into())),
                "{arch}"
            );
        }
    }
}
