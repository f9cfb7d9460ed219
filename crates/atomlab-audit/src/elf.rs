//! Reading an ELF file into what the scanners need: the architecture, the
//! executable bytes with their addresses, function symbols, `.eh_frame`
//! function starts (for stripped binaries) and the GOT slots that PLT stubs
//! jump through. Follows the System V ABI's ELF chapter (gABI) and the
//! LSB's `.eh_frame` description; parsing is done by the `object` and
//! `gimli` crates, which return errors rather than panicking on bad input.

use std::collections::HashMap;

use object::{
    Architecture, Endianness, Object, ObjectSection, ObjectSegment, ObjectSymbol,
    ObjectSymbolTable, RelocationTarget, SectionKind, SegmentFlags, SymbolKind,
};

use crate::error::AuditError;
use crate::model::Arch;

/// One run of executable bytes.
pub(crate) struct CodeRegion<'a> {
    /// Virtual address of `bytes[0]`.
    pub addr: u64,
    /// The bytes.
    pub bytes: &'a [u8],
    /// Section name (`.text`, `.plt`), or `PT_LOAD` when read from segments.
    pub name: String,
}

/// A function symbol.
#[derive(Debug, Clone)]
pub(crate) struct FuncSymbol {
    pub addr: u64,
    pub size: u64,
    pub name: String,
}

/// What the scanners need from one ELF file.
pub(crate) struct Image<'a> {
    pub arch: Arch,
    pub code: Vec<CodeRegion<'a>>,
    pub symbols: Vec<FuncSymbol>,
    pub has_symtab: bool,
    /// GOT slot address → the imported symbol it is resolved to
    /// (`R_*_JUMP_SLOT` relocations).
    pub got_slots: HashMap<u64, String>,
    /// Function starts from `.eh_frame` FDEs.
    pub fde_starts: Vec<u64>,
    /// Functions from Go's `.gopclntab` (kept by `strip`: Go's runtime needs
    /// it), sized.
    pub go_funcs: Vec<FuncSymbol>,
    /// Known function extents (FDE ranges, sized symbols), merged and sorted.
    pub extents: Vec<(u64, u64)>,
    pub entry: u64,
    /// GNU indirect functions (STT_GNU_IFUNC) defined here: implementations
    /// picked at load time, often by CPU feature.
    pub ifuncs: usize,
    /// Their resolvers' addresses (the symbols' values, and the addends of
    /// `R_*_IRELATIVE` relocations), sorted.
    pub ifunc_resolvers: Vec<u64>,
    /// Whether the file is position-independent (`ET_DYN`: a shared object
    /// or a PIE), so that every code address stored in its data carries a
    /// dynamic relocation.
    pub position_independent: bool,
    /// Code addresses the file's data and dynamic symbols point to: the
    /// addends of `R_*_RELATIVE` relocations, exported symbols, the entry.
    pub data_refs: Vec<u64>,
    pub notes: Vec<String>,
}

/// A name read from the file (a symbol, a section), as every output shows
/// it: control characters made visible (an ANSI escape or a newline in a
/// symbol name would recolour the terminal or forge a table row), cut at
/// [`crate::input::MAX_NAME_CHARS`].
fn shown_name(name: &str) -> String {
    atomlab_core::text::shown(name, crate::input::MAX_NAME_CHARS)
}

fn arch_name(file: &object::File<'_>) -> String {
    let machine = match file {
        object::File::Elf32(f) => f.elf_header().e_machine.get(f.endian()).0,
        object::File::Elf64(f) => f.elf_header().e_machine.get(f.endian()).0,
        _ => 0,
    };
    let bits = if file.is_64() { 64 } else { 32 };
    match file.architecture() {
        Architecture::Unknown => format!("ELF e_machine {machine} ({bits}-bit)"),
        Architecture::Arm => "arm (32-bit, armhf/armel)".to_string(),
        Architecture::I386 => "i386 (32-bit x86)".to_string(),
        a => format!("{a:?} ({bits}-bit)").to_lowercase(),
    }
}

impl<'a> Image<'a> {
    /// Parses `data` (the whole file) as ELF.
    pub(crate) fn parse(path: &str, data: &'a [u8]) -> Result<Image<'a>, AuditError> {
        if data.is_empty() {
            return Err(AuditError::Empty { path: path.into() });
        }
        if !data.starts_with(b"\x7fELF") {
            let magic = data
                .iter()
                .take(4)
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" ");
            return Err(AuditError::NotElf {
                path: path.into(),
                magic,
            });
        }
        let corrupt = |reason: String| AuditError::Corrupt {
            path: path.into(),
            reason,
        };
        let file = object::File::parse(data).map_err(|e| corrupt(e.to_string()))?;
        let arch = match (file.architecture(), file.is_64()) {
            (Architecture::Aarch64, true) => Arch::Aarch64,
            (Architecture::X86_64, true) => Arch::X86_64,
            (Architecture::Riscv64, true) => Arch::Riscv64,
            _ => {
                return Err(AuditError::UnknownArch {
                    path: path.into(),
                    found: arch_name(&file),
                })
            }
        };
        if file.endianness() != Endianness::Little {
            return Err(AuditError::UnknownArch {
                path: path.into(),
                found: format!("{arch} big-endian"),
            });
        }

        let mut notes = Vec::new();
        let mut code = Vec::new();
        for section in file.sections() {
            if section.kind() != SectionKind::Text {
                continue;
            }
            let name = shown_name(section.name().unwrap_or("?"));
            let bytes = section.data().map_err(|e| {
                corrupt(format!(
                    "section {name} (address {:#x}, {} bytes) lies outside the file: {e}",
                    section.address(),
                    section.size()
                ))
            })?;
            if bytes.is_empty() {
                continue;
            }
            if (bytes.len() as u64) < section.size() {
                return Err(corrupt(format!(
                    "section {name} claims {} bytes but the file holds {}",
                    section.size(),
                    bytes.len()
                )));
            }
            code.push(CodeRegion {
                addr: section.address(),
                bytes,
                name,
            });
        }
        if code.is_empty() {
            // No section headers (sstrip'd, or a crafted file): fall back to
            // the executable PT_LOAD segments.
            for segment in file.segments() {
                let exec = match segment.flags() {
                    SegmentFlags::Elf { p_flags, .. } => p_flags.0 & object::elf::PF_X.0 != 0,
                    _ => false,
                };
                if !exec {
                    continue;
                }
                let bytes = segment.data().map_err(|e| {
                    corrupt(format!(
                        "executable segment at {:#x} lies outside the file: {e}",
                        segment.address()
                    ))
                })?;
                if !bytes.is_empty() {
                    code.push(CodeRegion {
                        addr: segment.address(),
                        bytes,
                        name: "PT_LOAD".into(),
                    });
                }
            }
            if !code.is_empty() {
                notes.push("no section headers: scanned executable segments whole".into());
            }
        }
        if code.is_empty() {
            return Err(AuditError::NoCode { path: path.into() });
        }
        code.sort_by_key(|r| r.addr);

        let has_symtab = file.symbol_table().is_some();
        let mut symbols = Vec::new();
        let mut ifuncs = std::collections::HashSet::new();
        for sym in file.symbols().chain(file.dynamic_symbols()) {
            if let object::SymbolFlags::Elf { st_info, .. } = sym.flags() {
                if st_info.st_type() == object::elf::STT_GNU_IFUNC && !sym.is_undefined() {
                    ifuncs.insert(sym.address());
                }
            }
            if sym.kind() != SymbolKind::Text || sym.address() == 0 || sym.is_undefined() {
                continue;
            }
            if let Ok(name) = sym.name() {
                if !name.is_empty() {
                    symbols.push(FuncSymbol {
                        addr: sym.address(),
                        size: sym.size(),
                        name: shown_name(name),
                    });
                }
            }
        }
        symbols.sort_by(|a, b| a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)));
        symbols.dedup_by_key(|s| s.addr);

        let mut got_slots = HashMap::new();
        let mut data_refs: Vec<u64> = file
            .dynamic_symbols()
            .filter(|s| !s.is_undefined() && s.address() != 0)
            .map(|s| s.address())
            .collect();
        data_refs.push(file.entry());
        let mut irelative = Vec::new();
        // Only aarch64 needs them (the LSE dispatch analysis).
        let relocs = file.dynamic_relocations().filter(|_| arch == Arch::Aarch64);
        if let Some(relocs) = relocs {
            for (_, reloc) in relocs {
                if let object::RelocationFlags::Elf { r_type } = reloc.flags() {
                    // The addend is the address itself (ELF for the Arm 64-bit
                    // Architecture, "Dynamic relocations").
                    let target = reloc.addend() as u64;
                    if r_type == object::elf::R_AARCH64_RELATIVE {
                        data_refs.push(target);
                    } else if r_type == object::elf::R_AARCH64_IRELATIVE {
                        data_refs.push(target);
                        irelative.push(target);
                    }
                }
            }
        }
        data_refs.sort_unstable();
        data_refs.dedup();
        // Dynamic relocations name symbols by their index in .dynsym.
        if let (Some(relocs), Some(dynsym)) =
            (file.dynamic_relocations(), file.dynamic_symbol_table())
        {
            for (offset, reloc) in relocs {
                if let RelocationTarget::Symbol(idx) = reloc.target() {
                    if let Ok(sym) = dynsym.symbol_by_index(idx) {
                        if let Ok(name) = sym.name() {
                            if !name.is_empty() {
                                got_slots.insert(offset, shown_name(name));
                            }
                        }
                    }
                }
            }
        }

        let mut fdes = eh_frame_ranges(&file, &mut notes);
        let fde_starts = fdes.iter().map(|r| r.0).collect();
        let go_funcs = match file.section_by_name(".gopclntab") {
            Some(s) => s
                .data()
                .ok()
                .map(|d| go_functions(d, &mut notes))
                .unwrap_or_default(),
            // Externally linked Go PIEs (Debian's `age`) carry no
            // .gopclntab section: the table lies in .data.rel.ro or
            // .rodata, found by its header as Go's own debug/gosym does.
            None => pclntab_without_section(&file, &mut notes),
        };
        fdes.extend(
            go_funcs
                .iter()
                .map(|f| (f.addr, f.addr.saturating_add(f.size))),
        );
        // A function symbol without a size (hand-written assembly without
        // `.size`) reaches to the next known start.
        let mut starts: Vec<u64> = symbols
            .iter()
            .map(|s| s.addr)
            .chain(fdes.iter().map(|f| f.0))
            .collect();
        starts.sort_unstable();
        let next_start = |a: u64| {
            let i = starts.partition_point(|&s| s <= a);
            starts.get(i).copied().unwrap_or(a)
        };
        let sized: Vec<(u64, u64)> = symbols
            .iter()
            .map(|s| match s.size {
                0 => (s.addr, next_start(s.addr)),
                n => (s.addr, s.addr.saturating_add(n)),
            })
            .collect();
        let mut extents: Vec<(u64, u64)> = fdes.into_iter().chain(sized).collect();
        extents.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(extents.len());
        for (a, b) in extents {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        Ok(Image {
            arch,
            code,
            symbols,
            has_symtab,
            got_slots,
            fde_starts,
            go_funcs,
            extents: merged,
            entry: file.entry(),
            ifuncs: ifuncs.len(),
            ifunc_resolvers: {
                let mut r: Vec<u64> = ifuncs.into_iter().chain(irelative).collect();
                r.sort_unstable();
                r.dedup();
                r
            },
            position_independent: matches!(file.kind(), object::ObjectKind::Dynamic),
            data_refs,
            notes,
        })
    }

    /// Whether `addr` lies inside a known function extent; true when the
    /// file gives no extents at all.
    pub(crate) fn in_known_function(&self, addr: u64) -> bool {
        if self.extents.is_empty() {
            return true;
        }
        let i = self.extents.partition_point(|e| e.0 <= addr);
        i > 0 && addr < self.extents[i - 1].1
    }

    /// The bytes at `addr`, up to the end of their region.
    pub(crate) fn bytes_at(&self, addr: u64) -> Option<&'a [u8]> {
        let i = self
            .code
            .partition_point(|r| r.addr <= addr)
            .checked_sub(1)?;
        let r = &self.code[i];
        let off = usize::try_from(addr - r.addr).ok()?;
        r.bytes.get(off..)
    }
}

/// Function extents (start, end) from the `.eh_frame` FDEs (gimli's reader),
/// which survive `strip` because unwinding needs them.
fn eh_frame_ranges(file: &object::File<'_>, notes: &mut Vec<String>) -> Vec<(u64, u64)> {
    use gimli::{BaseAddresses, CieOrFde, EhFrame, LittleEndian, UnwindSection};
    let Some(section) = file.section_by_name(".eh_frame") else {
        return Vec::new();
    };
    let Ok(data) = section.data() else {
        notes.push(".eh_frame lies outside the file: function starts from symbols only".into());
        return Vec::new();
    };
    let mut bases = BaseAddresses::default().set_eh_frame(section.address());
    if let Some(text) = file.section_by_name(".text") {
        bases = bases.set_text(text.address());
    }
    if let Some(got) = file.section_by_name(".got") {
        bases = bases.set_got(got.address());
    }
    let eh = EhFrame::new(data, LittleEndian);
    let mut starts = Vec::new();
    let mut entries = eh.entries(&bases);
    // A bounded walk: a corrupt .eh_frame ends it with an error, and we keep
    // what was read so far.
    loop {
        match entries.next() {
            Ok(Some(CieOrFde::Fde(partial))) => {
                match partial.parse(|_, bases, offset| eh.cie_from_offset(bases, offset)) {
                    Ok(fde) => starts.push((
                        fde.initial_address(),
                        fde.initial_address().saturating_add(fde.len()),
                    )),
                    Err(_) => continue,
                }
            }
            Ok(Some(CieOrFde::Cie(_))) => {}
            Ok(None) => break,
            Err(e) => {
                notes.push(format!(".eh_frame unreadable past some entries ({e})"));
                break;
            }
        }
    }
    starts
}

/// Go's pcln table where no `.gopclntab` section names it: a Go binary
/// (a `.go.buildinfo` section or `.note.go.buildid`) whose read-only data
/// holds the table's header (Go 1.18+ magic `0xfffffff0`/`0xfffffff1`,
/// two zero bytes, an instruction size quantum of 1, 2 or 4 and a
/// pointer size of 8; runtime/symtab.go's `pcHeader`). The first such
/// header whose table parses into functions inside the code wins.
fn pclntab_without_section(file: &object::File<'_>, notes: &mut Vec<String>) -> Vec<FuncSymbol> {
    let is_go = file.section_by_name(".go.buildinfo").is_some()
        || file.section_by_name(".note.go.buildid").is_some();
    if !is_go {
        return Vec::new();
    }
    let text = file
        .section_by_name(".text")
        .map(|t| (t.address(), t.address().saturating_add(t.size())));
    for name in [".data.rel.ro", ".rodata", ".noptrdata"] {
        let Some(data) = file.section_by_name(name).and_then(|s| s.data().ok()) else {
            continue;
        };
        let mut at = 0;
        while let Some(i) = data[at..]
            .windows(8)
            .position(|w| {
                (w[..4] == [0xf0, 0xff, 0xff, 0xff] || w[..4] == [0xf1, 0xff, 0xff, 0xff])
                    && w[4] == 0
                    && w[5] == 0
                    && matches!(w[6], 1 | 2 | 4)
                    && w[7] == 8
            })
            .map(|i| at + i)
        {
            let mut quiet = Vec::new();
            let funcs = go_functions(&data[i..], &mut quiet);
            let inside = |f: &FuncSymbol| text.is_none_or(|(lo, hi)| lo <= f.addr && f.addr < hi);
            if !funcs.is_empty() && funcs.iter().all(inside) {
                notes.push(format!(
                    "Go's function table found by its header in {name} (the file has no .gopclntab section): {} Go functions",
                    funcs.len()
                ));
                return funcs;
            }
            at = i + 1;
        }
    }
    notes.push(
        "a Go binary without a .gopclntab section, and no pcln table header found in its read-only data: Go functions not listed, so code outside the known functions is unattributed".into(),
    );
    Vec::new()
}

/// Functions from a Go 1.18+ `.gopclntab` (Go's runtime/symtab.go: the
/// `pcHeader`, then `functab`, `nfunc + 1` pairs of 32-bit entry offsets from
/// `textStart` and offsets of `_func` records, whose second word is the
/// name's offset in `funcnametab`). Other versions give nothing, with a note.
fn go_functions(data: &[u8], notes: &mut Vec<String>) -> Vec<FuncSymbol> {
    let u32_at = |off: usize| -> Option<u32> {
        Some(u32::from_le_bytes(
            data.get(off..off.checked_add(4)?)?.try_into().ok()?,
        ))
    };
    let magic = u32_at(0).unwrap_or(0);
    if magic != 0xffff_fff0 && magic != 0xffff_fff1 {
        notes.push(format!(
            ".gopclntab of a Go version this reader does not know (magic {magic:#x}, Go 1.18+ expected): Go functions not listed"
        ));
        return Vec::new();
    }
    if data.get(7) != Some(&8) {
        return Vec::new();
    }
    let word = |i: usize| -> Option<u64> {
        let off = 8 + 8 * i;
        Some(u64::from_le_bytes(data.get(off..off + 8)?.try_into().ok()?))
    };
    let parse = || -> Option<Vec<FuncSymbol>> {
        let nfunc = usize::try_from(word(0)?).ok()?;
        let text_start = word(2)?;
        let funcnames = usize::try_from(word(3)?).ok()?;
        let functab = usize::try_from(word(7)?).ok()?;
        // Each entry is 8 bytes: refuse a count the section cannot hold.
        if nfunc > data.len() / 8 {
            return None;
        }
        // Offsets come from the file: checked, never trusted.
        let tab = |i: usize, field: usize| u32_at(functab.checked_add(8 * i + field)?);
        let mut out = Vec::with_capacity(nfunc);
        for i in 0..nfunc {
            let entry = u64::from(tab(i, 0)?);
            let funcoff = tab(i, 4)? as usize;
            let next = u64::from(tab(i + 1, 0)?);
            let name_off = u32_at(functab.checked_add(funcoff)?.checked_add(4)?)? as usize;
            let addr = text_start.wrapping_add(entry);
            let name = funcnames
                .checked_add(name_off)
                .and_then(|o| data.get(o..))
                .and_then(|b| b.split(|&c| c == 0).next())
                .map(|b| shown_name(&String::from_utf8_lossy(b)))
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| format!("go@{addr:#x}"));
            out.push(FuncSymbol {
                addr,
                size: next.saturating_sub(entry),
                name,
            });
        }
        Some(out)
    };
    parse().unwrap_or_else(|| {
        notes.push(".gopclntab unreadable: Go functions not listed".into());
        Vec::new()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Go 1.18 `.gopclntab` with two functions at 0x1000 and 0x1040,
    /// ending at 0x1080.
    fn pclntab() -> Vec<u8> {
        let mut d = Vec::new();
        d.extend(0xffff_fff0u32.to_le_bytes());
        d.extend([0, 0, 4, 8]);
        let names = 72u64;
        let functab = names + 8;
        for w in [2u64, 0, 0x1000, names, 0, 0, 0, functab] {
            d.extend(w.to_le_bytes());
        }
        d.extend(b"a.f\0a.g\0");
        // functab: (entry, funcoff) × 2, then the end.
        for w in [0u32, 24, 0x40, 32, 0x80, 0] {
            d.extend(w.to_le_bytes());
        }
        // _func records: entryOff, nameOff.
        for w in [0u32, 0, 0x40, 4] {
            d.extend(w.to_le_bytes());
        }
        d
    }

    #[test]
    fn gopclntab_functions() {
        let mut notes = Vec::new();
        let f = go_functions(&pclntab(), &mut notes);
        let got: Vec<(u64, u64, &str)> = f
            .iter()
            .map(|f| (f.addr, f.size, f.name.as_str()))
            .collect();
        assert_eq!(got, [(0x1000, 0x40, "a.f"), (0x1040, 0x40, "a.g")]);
        assert!(notes.is_empty());
    }

    #[test]
    fn bad_gopclntab_gives_nothing_and_says_so() {
        let good = pclntab();
        for cut in 0..good.len() {
            let mut notes = Vec::new();
            let f = go_functions(&good[..cut], &mut notes);
            assert!(f.is_empty() || cut >= 96, "{cut}");
        }
        let mut huge = good.clone();
        // pclnOffset and funcnameOffset far past the end.
        huge[64..72].copy_from_slice(&u64::MAX.to_le_bytes());
        huge[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        let mut notes = Vec::new();
        assert!(go_functions(&huge, &mut notes).is_empty());
        assert_eq!(notes.len(), 1, "{notes:?}");
        let mut notes = Vec::new();
        assert!(go_functions(b"\x01\x02\x03\x04", &mut notes).is_empty());
        assert!(notes[0].contains("magic"), "{notes:?}");
    }
}
