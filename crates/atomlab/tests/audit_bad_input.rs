//! `atomlab audit` on bad input: a clear error naming the file and the
//! reason, exit 2 only when nothing could be audited, never a panic. The
//! ELF used as raw material is the `atomlab` binary itself (x86-64 or
//! aarch64, whichever this machine builds), so these tests need no cross
//! compiler.

mod audit_support;
mod cli_support;

use std::path::{Path, PathBuf};

use audit_support::*;

fn me() -> Vec<u8> {
    std::fs::read(env!("CARGO_BIN_EXE_atomlab")).expect("read atomlab binary")
}

fn write(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

/// Runs `atomlab audit PATHS`: (exit code, stderr).
fn audit(paths: &[&Path]) -> (i32, String) {
    let out = atomlab().arg("audit").args(paths).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code().unwrap_or(-1), err)
}

#[test]
fn each_kind_of_bad_file_gets_its_reason() {
    let dir = scratch("bad-input");
    let elf = me();
    let empty = write(&dir, "empty", b"");
    let text = write(&dir, "notes.txt", b"hello, not an ELF\n");
    let header_only = write(&dir, "header-only", &elf[..40]);
    // Section headers at an offset past the end of the file.
    let mut far = elf.clone();
    far[0x28..0x30].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    let far = write(&dir, "shoff-past-end", &far);
    // Executable sections whose sh_offset points past the end of the file.
    let mut outside = elf.clone();
    let shoff = u64::from_le_bytes(elf[0x28..0x30].try_into().unwrap()) as usize;
    let shnum = u16::from_le_bytes([elf[0x3c], elf[0x3d]]) as usize;
    for i in 0..shnum {
        let sh = shoff + 64 * i;
        let flags = u64::from_le_bytes(elf[sh + 8..sh + 16].try_into().unwrap());
        if flags & 0x4 != 0 {
            outside[sh + 0x18..sh + 0x20].copy_from_slice(&0x7fff_ffff_0000u64.to_le_bytes());
        }
    }
    let outside = write(&dir, "text-outside", &outside);
    // Cut in half: the section header table (at the end) is gone.
    let half = write(&dir, "half", &elf[..elf.len() / 2]);
    // e_machine = EM_PPC64 (21).
    let mut ppc = elf.clone();
    ppc[0x12..0x14].copy_from_slice(&21u16.to_le_bytes());
    let ppc = write(&dir, "ppc64", &ppc);
    // ELFCLASS32 with i386's e_machine: a tiny but real 32-bit header.
    let mut i386 = vec![0u8; 52];
    i386[..4].copy_from_slice(b"\x7fELF");
    i386[4] = 1; // ELFCLASS32
    i386[5] = 1; // little-endian
    i386[6] = 1;
    i386[0x10] = 2; // ET_EXEC
    i386[0x12] = 3; // EM_386
    i386[0x14] = 1;
    i386[0x28] = 52; // e_ehsize
    let i386 = write(&dir, "i386", &i386);
    let empty_dir = dir.join("no-elf-here");
    std::fs::create_dir_all(&empty_dir).unwrap();
    write(&empty_dir, "README", b"nothing to see");

    let cases: [(&Path, &str); 9] = [
        (&empty, "empty file"),
        (&text, "not an ELF file (it starts with 68 65 6c 6c)"),
        (&header_only, "truncated or corrupt ELF"),
        (&far, "truncated or corrupt ELF"),
        (&outside, "truncated or corrupt ELF: section ."),
        (&half, "truncated or corrupt ELF"),
        (&ppc, "unsupported architecture powerpc64"),
        (&i386, "unsupported architecture i386"),
        (&empty_dir, "directory holds no ELF file"),
    ];
    for (path, reason) in cases {
        let (code, err) = audit(&[path]);
        assert_eq!(code, 2, "{}: {err}", path.display());
        let want = format!("{}: {reason}", path.display());
        assert!(err.contains(&want), "want `{want}` in: {err}");
        if path == outside.as_path() {
            assert!(err.contains("lies outside the file"), "{err}");
        }
    }

    // One good file among bad ones: the bad are reported, the exit is 0.
    let good = Path::new(env!("CARGO_BIN_EXE_atomlab"));
    let (code, err) = audit(&[&empty, good, &text]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("empty file") && err.contains("not an ELF"),
        "{err}"
    );

    // A directory mixing both: non-ELF files are passed over and counted.
    let mixed = dir.join("mixed");
    std::fs::create_dir_all(mixed.join("sub")).unwrap();
    std::fs::copy(good, mixed.join("sub/atomlab")).unwrap();
    write(&mixed, "a.txt", b"text");
    let out = atomlab()
        .args(["audit", "--json"])
        .arg(&mixed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["records"].as_array().unwrap().len(), 1);
    assert_eq!(
        doc["notes"][0],
        "passed over 1 non-ELF files in directories and packages"
    );
    // Passed: the scratch files go, so that later tests have the disk.
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn usage_errors_exit_2() {
    let out = atomlab().args(["audit"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = atomlab()
        .args(["audit", "--require", "fast", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-llsc"));
}
