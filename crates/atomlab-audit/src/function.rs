//! What single functions do with their atomics: for a user's plugin, the
//! few functions it hands atomlab (a lock's `lock` and `unlock`), in words
//! that fit beside its figures ("an LL/SC loop (ldaxr/stlxr)", "a
//! lock-prefixed RMW (lock xadd)", "plain stores (mov)").
//!
//! The same scan as the whole-file audit (the per-architecture scanners and
//! [`crate::audit_bytes`]'s LSE dispatch analysis), narrowed to a
//! function's extent: its sized symbol, else its `.eh_frame` FDE, else up
//! to the next known function start. When a function has nothing atomic
//! of its own, the functions of the same file it calls directly (or
//! tail-calls) are read, level by level, until something atomic is found
//! (at most [`FOLLOW_DEPTH`] calls deep and [`MAX_CALLEES_PER_LEVEL`] per
//! level, never into functions whose names say they are panic or
//! formatting paths): an unoptimised build puts the atomic instruction in
//! a callee (`AtomicBool::compare_exchange` in a Rust debug build). Calls to outline-atomics helpers and to libatomic
//! are named, not followed.
//!
//! Plain stores (x86-64 `mov` to memory, AArch64 `str`/`stp`/`stur` and
//! their byte and halfword forms) are counted only here, through a base
//! register other than the stack pointer and frame pointer (spills are not
//! the algorithm's stores): under x86-TSO a plain store is already a
//! release store, and a "lock" with neither an atomic read-modify-write
//! nor anything but plain stores is worth saying so.

use std::collections::{BTreeMap, BTreeSet};

use iced_x86::{Decoder, DecoderOptions, Instruction, Mnemonic, OpKind, Register};
use serde::Serialize;
use yaxpeax_arch::{Decoder as _, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Opcode, Operand};

use crate::elf::Image;
use crate::error::AuditError;
use crate::found::Scan;
use crate::model::{Arch, Class, Evidence};

/// How many calls deep the callees of a function are followed, while
/// nothing atomic has been found.
pub(crate) const FOLLOW_DEPTH: usize = 6;

/// How many functions of one level of calls are read at most.
pub(crate) const MAX_CALLEES_PER_LEVEL: usize = 16;

/// What one function (with the functions it calls) does with atomics.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionAtomics {
    /// The address asked about.
    pub addr: u64,
    /// The function's start.
    pub start: u64,
    /// One past its end.
    pub end: u64,
    /// Its symbol name, or `fn@0x…`.
    pub name: String,
    /// Mnemonics by class (LL/SC loops as their `ldaxr/stlxr` pair).
    pub by_class: BTreeMap<Class, BTreeSet<String>>,
    /// Outline-atomics helpers called.
    pub outline_calls: BTreeSet<String>,
    /// libatomic functions called.
    pub libatomic_calls: BTreeSet<String>,
    /// Plain stores (not through the stack or frame pointer), by mnemonic.
    pub plain_stores: BTreeSet<String>,
    /// x86-64: read-modify-writes of memory without a LOCK prefix (`inc
    /// [rdi]`, `add [rdi], 1`), by mnemonic: not atomic, so another CPU's
    /// update between the read and the write is lost.
    pub unlocked_rmw: BTreeSet<String>,
    /// aarch64: LSE instructions behind no CPU-feature test (SIGILL on
    /// ARMv8.0).
    pub lse_unconditional: u64,
    /// aarch64: why the other LSE instructions are taken to be chosen at
    /// run time.
    pub lse_evidence: Vec<Evidence>,
    /// The functions it calls whose instructions are counted here too.
    pub callees: Vec<String>,
}

/// The functions of one file at the given addresses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionsAt {
    /// The file's architecture.
    pub arch: Arch,
    /// One entry per address asked about, in order; `None` for an address
    /// in no executable section.
    pub functions: Vec<Option<FunctionAtomics>>,
}

/// What the functions of the ELF file `data` (named `path` in errors)
/// that contain `addrs` (virtual addresses as the file gives them) do
/// with atomics.
pub fn functions_at(path: &str, data: &[u8], addrs: &[u64]) -> Result<FunctionsAt, AuditError> {
    let whole = crate::audit_bytes(path, data)?;
    let image = Image::parse(path, data)?;
    let scan = match image.arch {
        Arch::Aarch64 => crate::aarch64::scan(&image),
        Arch::X86_64 => crate::x86_64::scan(&image),
        Arch::Riscv64 => crate::riscv64::scan(&image),
    };
    let functions = addrs
        .iter()
        .map(|&a| {
            let (start, end, name) = extent(&image, a)?;
            let mut f = FunctionAtomics {
                addr: a,
                start,
                end,
                name,
                by_class: BTreeMap::new(),
                outline_calls: BTreeSet::new(),
                libatomic_calls: BTreeSet::new(),
                plain_stores: BTreeSet::new(),
                unlocked_rmw: BTreeSet::new(),
                lse_unconditional: 0,
                lse_evidence: Vec::new(),
                callees: Vec::new(),
            };
            // Level by level: the callees of a level are read only when
            // nothing atomic was found so far (an unoptimised shim that
            // only calls), so that a function with atomics of its own is
            // not blurred by its slow and error paths.
            let mut seen = BTreeSet::from([start]);
            let mut level: Vec<(u64, u64, Option<String>)> = vec![(start, end, None)];
            for _depth in 0..=FOLLOW_DEPTH {
                let mut next = Vec::new();
                for (s, e, cname) in level {
                    let before = f.found();
                    let callees = collect(&image, &scan, &whole, s, e, &mut f);
                    // A callee is named when it added something.
                    if let Some(n) = cname.filter(|_| f.found() != before) {
                        f.callees.push(n);
                    }
                    for callee in callees {
                        if next.len() >= MAX_CALLEES_PER_LEVEL || !seen.insert(callee) {
                            continue;
                        }
                        if let Some((cs, ce, n)) = extent(&image, callee) {
                            if !["panic", "fmt", "unwrap_failed", "expect_failed"]
                                .iter()
                                .any(|cold| n.contains(cold))
                            {
                                next.push((cs, ce, Some(demangle(&n))));
                            }
                        }
                    }
                }
                if f.atomic() || next.is_empty() {
                    break;
                }
                level = next;
            }
            Some(f)
        })
        .collect();
    Ok(FunctionsAt {
        arch: image.arch,
        functions,
    })
}

/// The function containing `addr`: its start, end and name.
fn extent(image: &Image<'_>, addr: u64) -> Option<(u64, u64, String)> {
    image.bytes_at(addr)?;
    let sym = image
        .symbols
        .iter()
        .filter(|s| s.addr <= addr && addr < s.addr.saturating_add(s.size.max(1)))
        .max_by_key(|s| s.addr);
    if let Some(s) = sym.filter(|s| s.size > 0) {
        return Some((s.addr, s.addr + s.size, s.name.clone()));
    }
    let i = image.extents.partition_point(|e| e.0 <= addr);
    if i > 0 && addr < image.extents[i - 1].1 {
        let (s, e) = image.extents[i - 1];
        let name = image
            .symbols
            .iter()
            .find(|x| x.addr == s)
            .map_or_else(|| format!("fn@{s:#x}"), |x| x.name.clone());
        return Some((s, e, name));
    }
    // Up to the next known start, or the end of the code region.
    let next = image
        .symbols
        .iter()
        .map(|s| s.addr)
        .chain(image.fde_starts.iter().copied())
        .filter(|&s| s > addr)
        .min();
    let region_end = addr + image.bytes_at(addr).map_or(0, |b| b.len() as u64);
    let name = sym.map_or_else(|| format!("fn@{addr:#x}"), |s| s.name.clone());
    Some((addr, next.unwrap_or(region_end).min(region_end), name))
}

/// Adds what lies in `[start, end)` to `f`; returns the functions of the
/// file it calls (or tail-calls) that are neither helpers nor PLT stubs.
fn collect(
    image: &Image<'_>,
    scan: &Scan,
    whole: &crate::BinaryAudit,
    start: u64,
    end: u64,
    f: &mut FunctionAtomics,
) -> Vec<u64> {
    let inside = |a: u64| start <= a && a < end;
    let in_helper = |a: u64| scan.helpers.iter().any(|h| h.addr <= a && a < h.end);
    if in_helper(start) {
        return Vec::new();
    }
    for s in scan.sites.iter().filter(|s| inside(s.addr)) {
        f.by_class
            .entry(s.class)
            .or_default()
            .insert(s.mnemonic.clone());
    }
    for lp in scan.loops.iter().filter(|l| inside(l.start)) {
        let pair = format!(
            "{}/{}",
            scan.sites[lp.ll].mnemonic, scan.sites[lp.sc].mnemonic
        );
        f.by_class.entry(Class::LlscLoop).or_default().insert(pair);
    }
    if let Some(t) = whole.functions.iter().find(|t| t.addr == start) {
        f.lse_unconditional += t.lse_unconditional;
        for e in &t.lse_evidence {
            if !f.lse_evidence.contains(e) {
                f.lse_evidence.push(*e);
            }
        }
    }
    let mut callees = Vec::new();
    for c in scan
        .calls
        .iter()
        .filter(|c| inside(c.addr) && !inside(c.target))
    {
        if let Some(h) = scan.helpers.iter().find(|h| h.addr == c.target) {
            f.outline_calls.insert(h.name.clone());
        } else if let Some(name) = scan.plt.get(&c.target) {
            if crate::aarch64::parse_helper_name(name).is_some() {
                f.outline_calls.insert(name.clone());
            } else if name.starts_with("__atomic_") {
                f.libatomic_calls.insert(name.clone());
            }
        } else if let Some(s) = image.symbols.iter().find(|s| s.addr == c.target) {
            if s.name.starts_with("__atomic_") {
                f.libatomic_calls.insert(s.name.clone());
            } else {
                callees.push(c.target);
            }
        } else if image.bytes_at(c.target).is_some() {
            callees.push(c.target);
        }
    }
    plain_stores(image, start, end, &mut f.plain_stores, &mut f.unlocked_rmw);
    callees
}

/// The plain stores in `[start, end)` not through the stack or frame
/// pointer into `out`, and (x86-64) the read-modify-writes of memory
/// without LOCK into `unlocked`.
fn plain_stores(
    image: &Image<'_>,
    start: u64,
    end: u64,
    out: &mut BTreeSet<String>,
    unlocked: &mut BTreeSet<String>,
) {
    let Some(bytes) = image.bytes_at(start) else {
        return;
    };
    let len = usize::try_from(end - start).unwrap_or(0).min(bytes.len());
    let bytes = &bytes[..len];
    match image.arch {
        Arch::X86_64 => {
            let mut d = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE);
            let mut inst = Instruction::default();
            while d.can_decode() {
                d.decode_out(&mut inst);
                // A write to memory without LOCK: MOV, or an unlocked
                // read-modify-write (`inc [rdi]` for a holder's `n + 1`).
                let m = inst.mnemonic();
                if matches!(
                    m,
                    Mnemonic::Mov
                        | Mnemonic::Movnti
                        | Mnemonic::Inc
                        | Mnemonic::Dec
                        | Mnemonic::Add
                        | Mnemonic::Sub
                        | Mnemonic::And
                        | Mnemonic::Or
                        | Mnemonic::Xor
                ) && !inst.has_lock_prefix()
                    && inst.op0_kind() == OpKind::Memory
                    && !matches!(inst.memory_base(), Register::RSP | Register::RBP)
                {
                    let name = format!("{m:?}").to_ascii_lowercase();
                    if matches!(m, Mnemonic::Mov | Mnemonic::Movnti) {
                        out.insert(name);
                    } else {
                        unlocked.insert(name);
                    }
                }
            }
        }
        Arch::Aarch64 => {
            let decoder = InstDecoder::default();
            let mut inst = yaxpeax_arm::armv8::a64::Instruction::default();
            for chunk in bytes.chunks_exact(4) {
                let mut reader = U8Reader::new(chunk);
                if decoder.decode_into(&mut inst, &mut reader).is_err() {
                    continue;
                }
                let name = match inst.opcode {
                    Opcode::STR => "str",
                    Opcode::STRB => "strb",
                    Opcode::STRH => "strh",
                    Opcode::STUR => "stur",
                    Opcode::STURB => "sturb",
                    Opcode::STURH => "sturh",
                    Opcode::STP => "stp",
                    _ => continue,
                };
                let base = inst.operands.iter().find_map(|op| match op {
                    Operand::RegPreIndex(rn, _, _)
                    | Operand::RegPostIndex(rn, _)
                    | Operand::RegRegOffset(rn, ..) => Some(*rn),
                    _ => None,
                });
                // 31 is SP as a base register; 29 the frame pointer.
                if base.is_some_and(|rn| rn != 31 && rn != 29) {
                    out.insert(name.into());
                }
            }
        }
        Arch::Riscv64 => {}
    }
}

/// A Rust symbol in the legacy mangling (`_ZN4core4sync6atomic…17h…E`)
/// as `core::sync::atomic::…`, without its hash; other names as they are.
fn demangle(name: &str) -> String {
    let Some(mut rest) = name.strip_prefix("_ZN") else {
        return name.to_string();
    };
    let mut parts: Vec<String> = Vec::new();
    while let Some(d) = rest.find(|c: char| !c.is_ascii_digit()).filter(|&d| d > 0) {
        let Ok(n) = rest[..d].parse::<usize>() else {
            break;
        };
        let Some(part) = rest.get(d..d + n) else {
            break;
        };
        // A part that starts with `$` is written `_$`.
        parts.push(
            part.strip_prefix('_')
                .filter(|p| p.starts_with('$'))
                .unwrap_or(part)
                .to_string(),
        );
        rest = &rest[d + n..];
    }
    if rest != "E" || parts.is_empty() {
        return name.to_string();
    }
    let is_hash = |p: &str| p.len() == 17 && p.starts_with('h');
    if parts.last().is_some_and(|p| is_hash(p)) {
        parts.pop();
    }
    parts
        .join("::")
        .replace("$LT$", "<")
        .replace("$GT$", ">")
        .replace("$u20$", " ")
        .replace("$RF$", "&")
        .replace("$C$", ",")
        .replace("..", "::")
}

fn list(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(", ")
}

impl FunctionAtomics {
    /// Whether anything atomic or ordering was found (plain stores aside).
    fn atomic(&self) -> bool {
        self.by_class.values().any(|s| !s.is_empty())
            || !self.outline_calls.is_empty()
            || !self.libatomic_calls.is_empty()
    }

    /// How many things were found, to tell whether a callee added any.
    fn found(&self) -> usize {
        self.by_class.values().map(BTreeSet::len).sum::<usize>()
            + self.outline_calls.len()
            + self.libatomic_calls.len()
            + self.plain_stores.len()
            + self.unlocked_rmw.len()
    }

    fn class(&self, c: Class) -> Option<&BTreeSet<String>> {
        self.by_class.get(&c).filter(|s| !s.is_empty())
    }

    /// What it does, in words: "an LL/SC loop (ldaxr/stxr) and acquire
    /// loads (ldar)", "a lock-prefixed RMW (lock xadd)", "plain stores
    /// only (mov: …)".
    pub fn words(&self, arch: Arch) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(m) = self.class(Class::Lse) {
            let need = if self.lse_unconditional > 0 {
                "ARMv8.1, SIGILL on ARMv8.0".to_string()
            } else {
                let why: Vec<&str> = self.lse_evidence.iter().map(|e| e.words()).collect();
                format!("chosen at run time: {}", why.join(", "))
            };
            parts.push(format!("LSE atomics ({}; {need})", list(m)));
        }
        if let Some(m) = self.class(Class::LlscLoop) {
            let what = if arch == Arch::Riscv64 {
                "LR/SC"
            } else {
                "LL/SC"
            };
            let loops = if m.len() == 1 {
                format!("an {what} loop")
            } else {
                format!("{what} loops")
            };
            parts.push(format!("{loops} ({})", list(m)));
        } else if self.class(Class::StoreExclusive).is_some() {
            // Exclusives with no retry branch back: a weak CAS.
            let both: BTreeSet<String> = [Class::LoadExclusive, Class::StoreExclusive]
                .iter()
                .filter_map(|c| self.class(*c))
                .flatten()
                .cloned()
                .collect();
            let what = if arch == Arch::Riscv64 {
                "LR/SC"
            } else {
                "LL/SC"
            };
            parts.push(format!(
                "{what} exclusives, no retry loop ({})",
                list(&both)
            ));
        }
        if !self.outline_calls.is_empty() {
            parts.push(format!(
                "outline-atomics helpers ({}: LSE or LL/SC chosen at run time)",
                list(&self.outline_calls)
            ));
        }
        if !self.libatomic_calls.is_empty() {
            parts.push(format!(
                "libatomic ({}: it picks its implementation at run time)",
                list(&self.libatomic_calls)
            ));
        }
        if let Some(m) = self.class(Class::LockedRmw) {
            parts.push(format!("a lock-prefixed RMW ({})", list(m)));
        }
        if self.class(Class::XchgMem).is_some() {
            parts.push("xchg with memory (implicitly locked)".into());
        }
        if let Some(m) = self.class(Class::WideCas) {
            parts.push(format!("a double-width CAS ({})", list(m)));
        }
        if let Some(m) = self.class(Class::Amo) {
            parts.push(format!("AMOs ({})", list(m)));
        }
        if let Some(m) = self.class(Class::Barrier) {
            let what = match arch {
                Arch::X86_64 => "fences",
                Arch::Aarch64 => "barriers",
                Arch::Riscv64 => "fences",
            };
            parts.push(format!("{what} ({})", list(m)));
        }
        if let Some(m) = self.class(Class::AcquireLoad) {
            parts.push(format!("acquire loads ({})", list(m)));
        }
        if let Some(m) = self.class(Class::RcpcLoad) {
            parts.push(format!("RCpc acquire loads ({})", list(m)));
        }
        if let Some(m) = self.class(Class::ReleaseStore) {
            parts.push(format!("a release store ({})", list(m)));
        }
        let rmw = self.by_class.keys().any(|c| c.is_rmw())
            || !self.outline_calls.is_empty()
            || !self.libatomic_calls.is_empty();
        if !self.unlocked_rmw.is_empty() {
            if rmw {
                // Beside real atomics: an owner's bookkeeping, most likely.
                parts.push(format!(
                    "non-atomic read-modify-writes ({})",
                    list(&self.unlocked_rmw)
                ));
            } else {
                // The only writes that read first: said first and as what
                // they are, never as a store.
                parts.insert(
                    0,
                    format!(
                        "a non-atomic read-modify-write ({} without lock: right only where one thread alone writes that location)",
                        list(&self.unlocked_rmw)
                    ),
                );
            }
        }
        if !parts.is_empty() && !rmw && !self.plain_stores.is_empty() {
            // No read-modify-write: its plain stores are what it writes with.
            parts.push(format!("plain stores ({})", list(&self.plain_stores)));
        }
        if parts.is_empty() {
            return if self.plain_stores.is_empty() {
                "no atomic instruction and no store".into()
            } else if arch == Arch::X86_64 {
                format!(
                    "plain stores only ({}): no atomic instruction (under x86-TSO each store is a release)",
                    list(&self.plain_stores)
                )
            } else {
                format!(
                    "plain stores only ({}: no atomic, no ordering)",
                    list(&self.plain_stores)
                )
            };
        }
        let mut s = match parts.len() {
            1 => parts.remove(0),
            _ => {
                let last = parts.pop().unwrap_or_default();
                format!("{} and {last}", parts.join(", "))
            }
        };
        if !self.callees.is_empty() {
            s.push_str(&format!(" via {}", self.callees.join(", ")));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_legacy_names_are_demangled() {
        assert_eq!(
            demangle("_ZN4core4sync6atomic9AtomicU329fetch_add17h0fdff02f9ae0950fE"),
            "core::sync::atomic::AtomicU32::fetch_add"
        );
        assert_eq!(
            demangle("_ZN63_$LT$rust_locks..Ticket$u20$as$u20$atomlab_plugin_abi..Lock$GT$4lock17h0123456789abcdefE"),
            "<rust_locks::Ticket as atomlab_plugin_abi::Lock>::lock"
        );
        assert_eq!(demangle("ticket_lock"), "ticket_lock");
        assert_eq!(demangle("_ZN3foo"), "_ZN3foo");
    }
}
