//! What a plugin file is, read from its ELF header without loading it:
//! the checks of the System V gABI ("ELF Header": `e_ident` magic,
//! `EI_CLASS`, `EI_DATA`, `e_type`, `e_machine`), so that a file that is
//! not a shared object, or one built for another machine, is refused with
//! a sentence that says which, before `dlopen(3)` is asked.

/// Why a file cannot be a plugin for this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotLoadable {
    /// No ELF magic (`\x7fELF`).
    NotElf,
    /// The ELF magic, then fewer bytes than an ELF header has: the file's
    /// length.
    TooShort(u64),
    /// The program headers, or a segment `dlopen(3)` would map, lie past
    /// the end of the file (a truncated file: mapping it gives SIGBUS).
    Truncated(String),
    /// ELF, but not `ET_DYN`: the object type found.
    NotShared(&'static str),
    /// A shared object for another machine: found, expected.
    WrongArch(String, &'static str),
    /// 32-bit vs 64-bit, or the other byte order: found, expected.
    WrongClass(&'static str, &'static str),
}

impl std::fmt::Display for NotLoadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotLoadable::NotElf => f.write_str(
                "not a shared object: the file does not start with the ELF magic \\x7fELF (build one with `cc -shared -fPIC -o NAME.so NAME.c`)",
            ),
            NotLoadable::TooShort(n) => write!(
                f,
                "too short for an ELF header: {n} bytes after the ELF magic's start (a 64-bit header is 64 bytes; a truncated copy?)"
            ),
            NotLoadable::Truncated(what) => write!(
                f,
                "truncated: {what} (a partial download or copy? rebuild or copy it again)"
            ),
            NotLoadable::NotShared(t) => write!(
                f,
                "not a shared object: an ELF {t} (build with `cc -shared -fPIC`)"
            ),
            NotLoadable::WrongArch(found, want) => write!(
                f,
                "wrong architecture: built for {found}, and this atomlab runs on {want} (rebuild the plugin for {want})"
            ),
            NotLoadable::WrongClass(found, want) => write!(
                f,
                "wrong architecture: a {found} object, and this atomlab is {want} (rebuild the plugin for this machine)"
            ),
        }
    }
}

/// `e_machine` of this build's architecture and its name.
pub(crate) fn this_machine() -> (u16, &'static str) {
    if cfg!(target_arch = "x86_64") {
        (62, "x86-64")
    } else if cfg!(target_arch = "aarch64") {
        (183, "aarch64")
    } else if cfg!(target_arch = "riscv64") {
        (243, "riscv64")
    } else if cfg!(target_arch = "x86") {
        (3, "x86")
    } else if cfg!(target_arch = "arm") {
        (40, "arm")
    } else {
        (0, std::env::consts::ARCH)
    }
}

/// The name of an `e_machine` value.
fn machine_name(m: u16) -> String {
    match m {
        3 => "x86 (i386)".into(),
        8 => "mips".into(),
        20 => "powerpc".into(),
        21 => "powerpc64".into(),
        22 => "s390".into(),
        40 => "arm (32-bit)".into(),
        62 => "x86-64".into(),
        183 => "aarch64".into(),
        243 => "riscv".into(),
        258 => "loongarch".into(),
        other => format!("e_machine {other}"),
    }
}

/// Checks that `head` (the file's first bytes, at least 20 of them for an
/// answer beyond "not ELF") is a shared object for this machine.
pub(crate) fn check(head: &[u8]) -> Result<(), NotLoadable> {
    if head.len() < 4 || &head[..4] != b"\x7fELF" {
        return Err(NotLoadable::NotElf);
    }
    let header_len = if head.get(4) == Some(&1) { 52 } else { 64 };
    if head.len() < header_len {
        return Err(NotLoadable::TooShort(head.len() as u64));
    }
    let le = match head[5] {
        1 => true,
        2 => false,
        _ => return Err(NotLoadable::NotElf),
    };
    let u16_at = |o: usize| {
        let b = [head[o], head[o + 1]];
        if le {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        }
    };
    let (want, want_name) = this_machine();
    let machine = u16_at(18);
    if machine != want {
        return Err(NotLoadable::WrongArch(machine_name(machine), want_name));
    }
    let class = match head[4] {
        1 => "32-bit",
        2 => "64-bit",
        _ => return Err(NotLoadable::NotElf),
    };
    let our_class = if cfg!(target_pointer_width = "64") {
        "64-bit"
    } else {
        "32-bit"
    };
    if class != our_class {
        return Err(NotLoadable::WrongClass(class, our_class));
    }
    if le != cfg!(target_endian = "little") {
        let (found, want) = if le {
            ("little-endian", "big-endian")
        } else {
            ("big-endian", "little-endian")
        };
        return Err(NotLoadable::WrongClass(found, want));
    }
    match u16_at(16) {
        3 => Ok(()),
        1 => Err(NotLoadable::NotShared("relocatable object (.o)")),
        2 => Err(NotLoadable::NotShared("executable")),
        4 => Err(NotLoadable::NotShared("core dump")),
        _ => Err(NotLoadable::NotShared("object of unknown type")),
    }
}

/// Checks that the program header table and every `PT_LOAD` segment of
/// the ELF file `file` (`size` bytes, its header already [`check`]ed) lie
/// within the file: `dlopen(3)` maps segments with `mmap(2)`, and a page
/// past the end of a file raises SIGBUS when touched instead of an error.
pub(crate) fn check_layout(file: &std::fs::File, size: u64) -> Result<(), NotLoadable> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 64];
    let n = file.read_at(&mut head, 0).unwrap_or(0);
    let wide = head[4] == 2;
    let le = head[5] == 1;
    let header_len = if wide { 64 } else { 52 };
    if n < header_len {
        return Err(NotLoadable::TooShort(n as u64));
    }
    let int = |b: &[u8]| -> u64 {
        let mut v = 0u64;
        for (i, &x) in b.iter().enumerate() {
            let shift = if le { 8 * i } else { 8 * (b.len() - 1 - i) };
            v |= u64::from(x) << shift;
        }
        v
    };
    let (phoff, phentsize, phnum) = if wide {
        (int(&head[32..40]), int(&head[54..56]), int(&head[56..58]))
    } else {
        (int(&head[28..32]), int(&head[42..44]), int(&head[44..46]))
    };
    let min_entry = if wide { 56 } else { 32 };
    if phnum == 0 {
        return Err(NotLoadable::Truncated(
            "it has no program headers, so nothing of it can be loaded".into(),
        ));
    }
    if phentsize < min_entry {
        return Err(NotLoadable::Truncated(format!(
            "program header entries of {phentsize} bytes, fewer than the {min_entry} an entry has"
        )));
    }
    let table_end = phoff.checked_add(phentsize * phnum);
    if table_end.is_none_or(|e| e > size) {
        return Err(NotLoadable::Truncated(format!(
            "its {phnum} program headers at offset {phoff} end past the file's {size} bytes"
        )));
    }
    let mut entry = vec![0u8; phentsize as usize];
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        if file.read_at(&mut entry, at).ok() != Some(entry.len()) {
            return Err(NotLoadable::Truncated(format!(
                "program header {i} at offset {at} cannot be read"
            )));
        }
        const PT_LOAD: u64 = 1;
        if int(&entry[0..4]) != PT_LOAD {
            continue;
        }
        let (offset, filesz) = if wide {
            (int(&entry[8..16]), int(&entry[32..40]))
        } else {
            (int(&entry[4..8]), int(&entry[16..20]))
        };
        if offset.checked_add(filesz).is_none_or(|e| e > size) {
            return Err(NotLoadable::Truncated(format!(
                "its loadable segment {i} covers bytes {offset} to {} of a file of {size} bytes",
                offset.saturating_add(filesz)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(class: u8, data: u8, etype: u16, machine: u16) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = class;
        h[5] = data;
        h[6] = 1;
        h[16..18].copy_from_slice(&etype.to_le_bytes());
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h
    }

    #[test]
    fn checks_follow_the_elf_header() {
        let (m, _) = this_machine();
        let class = if cfg!(target_pointer_width = "64") {
            2
        } else {
            1
        };
        assert_eq!(check(&header(class, 1, 3, m)), Ok(()));
        assert_eq!(check(b"#!/bin/sh\n"), Err(NotLoadable::NotElf));
        // Was "not a shared object: the file does not start with the ELF magic".
        assert_eq!(
            check(b"\x7fELF\x02\x01\x01\0\0\0"),
            Err(NotLoadable::TooShort(10))
        );
        assert_eq!(check(b""), Err(NotLoadable::NotElf));
        assert!(matches!(
            check(&header(class, 1, 2, m)),
            Err(NotLoadable::NotShared("executable"))
        ));
        assert!(matches!(
            check(&header(class, 1, 1, m)),
            Err(NotLoadable::NotShared(_))
        ));
        let other = if m == 183 { 62 } else { 183 };
        let e = check(&header(class, 1, 3, other)).unwrap_err().to_string();
        assert!(e.starts_with("wrong architecture: built for"), "{e}");
        let e = check(&header(3 - class, 1, 3, m)).unwrap_err().to_string();
        assert!(e.contains("wrong architecture"), "{e}");
    }
}
