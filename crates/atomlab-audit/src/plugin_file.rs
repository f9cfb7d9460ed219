//! A shared library read as data, for `atomlab verify`: what a program
//! that never loads the file needs to find a plugin's description and the
//! code of its functions. The description (`atomlab_plugin()`'s result and
//! its variants table, include/atomlab.h) is static data whose pointers the
//! dynamic linker fills in: in a position-independent file each is an
//! `R_*_RELATIVE` relocation whose addend is the target (the file's bytes
//! hold 0 there), or a symbol relocation (`R_AARCH64_ABS64 free`) for a
//! function of another library. Relocation types are those of each
//! architecture's ELF supplement: "ELF for the Arm 64-bit Architecture
//! (AAELF64)", "Dynamic relocations"; the System V x86-64 psABI, 4.4; the
//! RISC-V ELF psABI, "Relocations".
//!
//! It reads with the same [`crate::elf::Image`] the audit uses (code,
//! function symbols, extents, GOT slots, PLT stubs) and adds only the data
//! side: bytes at any allocated address and the relocations on them.

use std::collections::HashMap;

use object::{
    Object, ObjectSection, ObjectSymbol, ObjectSymbolTable, RelocationTarget, SectionKind,
};

use crate::elf::Image;
use crate::error::AuditError;
use crate::model::Arch;

/// What a pointer-sized slot of the file's data holds once loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pointer {
    /// An address in this file (a `RELATIVE` relocation's addend, or the
    /// bytes of a file that is not position-independent).
    Here(u64),
    /// A symbol the dynamic linker resolves, by name (`free`).
    Import(String),
    /// Zero: a null pointer.
    Null,
}

/// One allocated section's bytes (`.bss` has none: it reads as zeros).
struct DataSection<'a> {
    addr: u64,
    size: u64,
    bytes: &'a [u8],
    name: String,
}

/// A plugin file read without loading it.
pub struct PluginFile<'a> {
    image: Image<'a>,
    sections: Vec<DataSection<'a>>,
    /// Slot address → target address (`R_*_RELATIVE`).
    relative: HashMap<u64, u64>,
    /// Every defined symbol (functions and data), by name.
    symbols: HashMap<String, u64>,
    /// Every defined symbol, sorted by address, with its size.
    by_addr: Vec<(u64, u64, String)>,
    /// PLT stub address → the imported function it jumps to.
    plt: HashMap<u64, String>,
    /// TLS descriptor slot (`R_AARCH64_TLSDESC`) → the offset of its
    /// variable in the file's thread-local block.
    tls_descriptors: HashMap<u64, u64>,
    /// The thread-local block's template: its address, the initialised
    /// part's bytes (`.tdata`) and its whole size (`.tbss` included).
    tls: Option<(u64, &'a [u8], u64)>,
}

impl<'a> PluginFile<'a> {
    /// Reads `data` (the whole file); `path` names it in errors.
    pub fn parse(path: &str, data: &'a [u8]) -> Result<PluginFile<'a>, AuditError> {
        let image = Image::parse(path, data)?;
        let corrupt = |reason: String| AuditError::Corrupt {
            path: path.into(),
            reason,
        };
        let file = object::File::parse(data).map_err(|e| corrupt(e.to_string()))?;
        let mut sections = Vec::new();
        for s in file.sections() {
            // `.tbss` occupies no addresses of the image: its address
            // range is the per-thread block's, and overlaps the sections
            // after `.tdata` (a Rust cdylib's `.data.rel.ro`, where its
            // description is), which must not read as its zeros.
            if s.address() == 0 || s.size() == 0 || s.kind() == SectionKind::UninitializedTls {
                continue;
            }
            let bytes = match s.kind() {
                SectionKind::UninitializedData => &[][..],
                _ => s.data().map_err(|e| {
                    corrupt(format!(
                        "section {} lies outside the file: {e}",
                        s.name().unwrap_or("?")
                    ))
                })?,
            };
            sections.push(DataSection {
                addr: s.address(),
                size: s.size(),
                bytes,
                name: s.name().unwrap_or("?").to_string(),
            });
        }
        let relative_type = match image.arch {
            Arch::Aarch64 => object::elf::R_AARCH64_RELATIVE,
            Arch::X86_64 => object::elf::R_X86_64_RELATIVE,
            Arch::Riscv64 => object::elf::R_RISCV_RELATIVE,
        };
        let tls = tls_template(&file);
        let mut relative = HashMap::new();
        let mut tls_descriptors = HashMap::new();
        let mut tls_offsets: HashMap<u64, u64> = HashMap::new();
        if let Some(relocs) = file.dynamic_relocations() {
            for (offset, reloc) in relocs {
                if let object::RelocationFlags::Elf { r_type } = reloc.flags() {
                    if r_type == relative_type && reloc.target() == RelocationTarget::Absolute {
                        relative.insert(offset, reloc.addend() as u64);
                    }
                    // AAELF64 "Thread-local storage": R_AARCH64_TLSDESC's
                    // variable is its symbol's value (an offset in the
                    // block; none for a static variable) plus the addend.
                    // x86-64 and RISC-V pass `__tls_get_addr` a tls_index
                    // {module, offset}: the module's relocation marks the
                    // slot, the offset is the next word (relocated by
                    // DTPOFF64/DTPREL64 for a symbol, below).
                    let (tls_pair, tls_offset) = match image.arch {
                        Arch::Aarch64 => {
                            (object::elf::R_AARCH64_TLSDESC, object::elf::R_AARCH64_NONE)
                        }
                        Arch::X86_64 => (
                            object::elf::R_X86_64_DTPMOD64,
                            object::elf::R_X86_64_DTPOFF64,
                        ),
                        Arch::Riscv64 => (
                            object::elf::R_RISCV_TLS_DTPMOD64,
                            object::elf::R_RISCV_TLS_DTPREL64,
                        ),
                    };
                    if r_type == tls_pair || r_type == tls_offset {
                        let base = match reloc.target() {
                            // A TLS symbol's value is its offset in the
                            // block (gABI, "Thread-Local Storage").
                            RelocationTarget::Symbol(i) => file
                                .dynamic_symbol_table()
                                .and_then(|t| t.symbol_by_index(i).ok())
                                .filter(|s| !s.is_undefined())
                                .map(|s| s.address()),
                            RelocationTarget::Absolute => Some(0),
                            _ => None,
                        };
                        if let Some(b) = base {
                            let v = b.wrapping_add(reloc.addend() as u64);
                            if r_type == tls_offset {
                                tls_offsets.insert(offset, v);
                            } else {
                                tls_descriptors.insert(offset, v);
                            }
                        }
                    }
                }
            }
        }
        if image.arch != Arch::Aarch64 {
            // A tls_index's offset: DTPOFF64's value, else the word the
            // file holds (a module-local variable's offset, or 0 for
            // local-dynamic's module base).
            let slots: Vec<u64> = tls_descriptors.keys().copied().collect();
            for slot in slots {
                let at = slot + 8;
                let off = tls_offsets.get(&at).copied().or_else(|| {
                    let s = sections
                        .iter()
                        .find(|s| s.addr <= at && at + 8 <= s.addr + s.size)?;
                    let o = usize::try_from(at - s.addr).ok()?;
                    let b = s.bytes.get(o..o + 8)?;
                    Some(u64::from_le_bytes(b.try_into().ok()?))
                });
                match off {
                    Some(o) => {
                        tls_descriptors.insert(slot, o);
                    }
                    None => {
                        tls_descriptors.remove(&slot);
                    }
                }
            }
        }
        let mut symbols = HashMap::new();
        let mut by_addr = Vec::new();
        for sym in file.symbols().chain(file.dynamic_symbols()) {
            if sym.is_undefined() || sym.address() == 0 {
                continue;
            }
            if let Ok(name) = sym.name() {
                // `$x`/`$d` are AArch64 mapping symbols (AAELF64 5.7), not names.
                if !name.is_empty() && !name.starts_with('$') {
                    symbols.entry(name.to_string()).or_insert(sym.address());
                    by_addr.push((sym.address(), sym.size(), name.to_string()));
                }
            }
        }
        by_addr.sort();
        by_addr.dedup_by_key(|s| s.0);
        let plt = crate::scan::plt_of(&image);
        Ok(PluginFile {
            image,
            sections,
            relative,
            symbols,
            by_addr,
            plt,
            tls_descriptors,
            tls,
        })
    }

    /// The offset in the thread-local block of the variable whose TLS
    /// descriptor (aarch64's `:tlsdesc:`) or `tls_index` (x86-64's and
    /// riscv64's argument of `__tls_get_addr`) is the GOT slot at `addr`.
    pub fn tls_descriptor(&self, addr: u64) -> Option<u64> {
        self.tls_descriptors.get(&addr).copied()
    }

    /// The size of the file's thread-local block (0: none).
    pub fn tls_size(&self) -> u64 {
        self.tls.map_or(0, |t| t.2)
    }

    /// The initial value of `len` bytes at `offset` in a thread's block
    /// (the `.tdata` template; zero in `.tbss`), little-endian.
    pub fn tls_initial(&self, offset: u64, len: usize) -> Option<u64> {
        let (_, data, size) = self.tls?;
        if offset.checked_add(len as u64)? > size {
            return None;
        }
        let mut v = [0u8; 8];
        for (i, b) in v.iter_mut().enumerate().take(len) {
            *b = usize::try_from(offset + i as u64)
                .ok()
                .and_then(|o| data.get(o))
                .copied()
                .unwrap_or(0);
        }
        Some(u64::from_le_bytes(v))
    }

    /// The file's architecture (its ELF header's machine).
    pub fn arch(&self) -> Arch {
        self.image.arch
    }

    /// The address of the symbol `name` defined in the file.
    pub fn symbol(&self, name: &str) -> Option<u64> {
        self.symbols.get(name).copied()
    }

    /// The symbol `addr` lies in (or the nearest one before it), with the
    /// offset: `tas_lock+0x8`, for messages.
    pub fn describe(&self, addr: u64) -> String {
        let i = self.by_addr.partition_point(|s| s.0 <= addr);
        match i.checked_sub(1).map(|i| &self.by_addr[i]) {
            Some((a, _, name)) if addr == *a => name.clone(),
            Some((a, size, name)) if *size == 0 || addr < a + size => {
                format!("{name}+{:#x}", addr - a)
            }
            _ => format!("{addr:#x}"),
        }
    }

    /// The name of the symbol that starts exactly at `addr`.
    pub fn symbol_at(&self, addr: u64) -> Option<&str> {
        let i = self.by_addr.partition_point(|s| s.0 < addr);
        self.by_addr
            .get(i)
            .filter(|s| s.0 == addr)
            .map(|s| s.2.as_str())
    }

    /// Code bytes from `addr` to the end of its executable section.
    pub fn code_at(&self, addr: u64) -> Option<&'a [u8]> {
        self.image.bytes_at(addr)
    }

    /// The imported function whose PLT stub is at `addr` (`usleep`).
    pub fn import_at(&self, addr: u64) -> Option<&str> {
        self.plt.get(&addr).map(String::as_str)
    }

    /// `len` bytes of the loaded image at `addr` (zeros in `.bss`), before
    /// relocation; `None` outside every allocated section.
    pub fn bytes(&self, addr: u64, len: usize) -> Option<Vec<u8>> {
        let s = self
            .sections
            .iter()
            .find(|s| s.addr <= addr && addr < s.addr.saturating_add(s.size))?;
        let off = usize::try_from(addr - s.addr).ok()?;
        if (addr - s.addr).checked_add(len as u64)? > s.size {
            return None;
        }
        if s.bytes.is_empty() {
            return Some(vec![0; len]);
        }
        s.bytes.get(off..off.checked_add(len)?).map(<[u8]>::to_vec)
    }

    /// The name of the section holding `addr`.
    pub fn section_of(&self, addr: u64) -> Option<&str> {
        self.sections
            .iter()
            .find(|s| s.addr <= addr && addr < s.addr.saturating_add(s.size))
            .map(|s| s.name.as_str())
    }

    /// A little-endian integer of `len` (1, 2, 4 or 8) bytes at `addr`.
    pub fn uint(&self, addr: u64, len: usize) -> Option<u64> {
        let b = self.bytes(addr, len)?;
        let mut v = [0u8; 8];
        v.get_mut(..len)?.copy_from_slice(&b);
        Some(u64::from_le_bytes(v))
    }

    /// The pointer in the 8-byte slot at `addr` once the dynamic linker
    /// has relocated it.
    pub fn pointer(&self, addr: u64) -> Option<Pointer> {
        if let Some(&target) = self.relative.get(&addr) {
            return Some(Pointer::Here(target));
        }
        if let Some(name) = self.image.got_slots.get(&addr) {
            return Some(Pointer::Import(name.clone()));
        }
        match self.uint(addr, 8)? {
            0 => Some(Pointer::Null),
            v => Some(Pointer::Here(v)),
        }
    }

    /// The NUL-terminated string at `addr`, at most `max` bytes.
    pub fn c_string(&self, addr: u64, max: usize) -> Option<String> {
        let mut out = Vec::new();
        for i in 0..max as u64 {
            match self.bytes(addr.checked_add(i)?, 1)?[0] {
                0 => return String::from_utf8(out).ok(),
                b => out.push(b),
            }
        }
        None
    }
}

/// The thread-local block's template: `.tdata` (bytes) then `.tbss`
/// (zeros), from the first one's address (the PT_TLS segment's).
fn tls_template<'a>(file: &object::File<'a>) -> Option<(u64, &'a [u8], u64)> {
    let mut start = u64::MAX;
    let mut end = 0u64;
    let mut data: &'a [u8] = &[];
    for s in file.sections() {
        match s.kind() {
            SectionKind::Tls => {
                data = s.data().unwrap_or(&[]);
            }
            SectionKind::UninitializedTls => {}
            _ => continue,
        }
        start = start.min(s.address());
        end = end.max(s.address().saturating_add(s.size()));
    }
    (start < end).then(|| (start, data, end - start))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_elf_is_refused() {
        assert!(matches!(
            PluginFile::parse("x", b"hello"),
            Err(AuditError::NotElf { .. })
        ));
        assert!(matches!(
            PluginFile::parse("x", b""),
            Err(AuditError::Empty { .. })
        ));
    }
}
