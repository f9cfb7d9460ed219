//! The plugin's description, read from the file: `atomlab_plugin()`'s
//! body decoded to the address it returns, then `struct atomlab_plugin`
//! and its `struct atomlab_variant` table at that address, with the
//! dynamic relocations applied (include/atomlab.h, ABI version 1; LP64
//! layout, as the System V psABIs of aarch64, x86-64 and riscv64 lay C
//! structs out).
//!
//! Offsets (LP64):
//! - `atomlab_plugin`: `abi_version` u32 @0, `name` @8, `n_variants` @16,
//!   `variants` @24; 32 bytes.
//! - `atomlab_variant`: `name` @0, `kind` u32 @8, union `u` @16 (five
//!   pointers at most: `atomlab_lock`), 56 bytes. Lock: `new_` @16, `lock`
//!   @24, `unlock` @32, `try_lock` @40, `free_` @48.

use atomlab_audit::{Arch, PluginFile, Pointer};

use crate::VerifyError;

/// Size of `struct atomlab_variant` in LP64.
const VARIANT_SIZE: u64 = 56;
/// Offset of the union `u` in `struct atomlab_variant`.
const UNION_AT: u64 = 16;
/// The variants a file may describe (a corrupt count is refused, not read).
const MAX_VARIANTS: u64 = 4096;

/// The kinds of include/atomlab.h: the one list atomlab-plugin keeps.
pub use atomlab_plugin::Kind;

/// One variant of the description.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Its name.
    pub name: String,
    /// Its kind (`None`: a number the header does not define).
    pub kind: Option<Kind>,
    /// The kind's function pointers, by member name (`lock`, `unlock`).
    pub functions: Vec<(&'static str, Pointer)>,
}

impl Variant {
    /// The function member `role` points to.
    pub fn function(&self, role: &str) -> Option<&Pointer> {
        self.functions
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(_, p)| p)
    }
}

/// The plugin's description.
#[derive(Debug, Clone)]
pub struct Description {
    /// `abi_version`.
    pub abi_version: u32,
    /// `name`.
    pub name: String,
    /// The variants.
    pub variants: Vec<Variant>,
}

/// Reads the description of `file` (named `path` in errors).
pub(crate) fn read(path: &str, file: &PluginFile<'_>) -> Result<Description, VerifyError> {
    let bad = |what: String| VerifyError::Description {
        path: path.into(),
        what,
    };
    let entry = file
        .symbol("atomlab_plugin")
        .ok_or_else(|| VerifyError::NoEntry { path: path.into() })?;
    let at = returned_address(file, entry).ok_or_else(|| {
        bad(format!(
            "atomlab_plugin (at {entry:#x}) does not simply return the address of a static description (`return &plugin;`), which is all verify can read without running it"
        ))
    })?;
    let abi_version = file
        .uint(at, 4)
        .ok_or_else(|| bad(format!("the description at {at:#x} lies outside the file")))?
        as u32;
    if abi_version != 1 {
        return Err(bad(format!(
            "ABI version {abi_version}; verify reads version 1 (include/atomlab.h)"
        )));
    }
    let string = |slot: u64, what: &str| -> Result<String, VerifyError> {
        match file.pointer(slot) {
            Some(Pointer::Here(a)) => file
                .c_string(a, 256)
                .ok_or_else(|| bad(format!("{what} at {a:#x} is not a string in the file"))),
            _ => Err(bad(format!(
                "{what} (slot {slot:#x}) does not point into the file"
            ))),
        }
    };
    let name = string(at + 8, "the plugin's name")?;
    let n = file
        .uint(at + 16, 8)
        .ok_or_else(|| bad("n_variants lies outside the file".into()))?;
    if n > MAX_VARIANTS {
        return Err(bad(format!(
            "{n} variants (at most {MAX_VARIANTS} are read)"
        )));
    }
    let table = match file.pointer(at + 24) {
        Some(Pointer::Here(a)) => a,
        Some(Pointer::Null) if n == 0 => 0,
        _ => return Err(bad("the variants table does not point into the file".into())),
    };
    let mut variants = Vec::new();
    for i in 0..n {
        let v = table + i * VARIANT_SIZE;
        let vname = string(v, &format!("variant {i}'s name"))?;
        let kind = match file.uint(v + 8, 4) {
            Some(k) => u32::try_from(k).ok().and_then(Kind::from_abi),
            None => return Err(bad(format!("variant {i} lies outside the file"))),
        };
        let functions = match kind {
            Some(k) => k
                .members()
                .iter()
                .enumerate()
                .map(|(j, role)| {
                    let slot = v + UNION_AT + 8 * j as u64;
                    file.pointer(slot).map(|p| (*role, p)).ok_or_else(|| {
                        bad(format!("variant {vname}'s {role} lies outside the file"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        variants.push(Variant {
            name: vname,
            kind,
            functions,
        });
    }
    Ok(Description {
        abi_version,
        name,
        variants,
    })
}

/// The address `atomlab_plugin`'s body returns, when the body is the
/// compiler's `return &static_description;`: aarch64 `adrp x0; add x0;
/// ret` (Arm ARM C6.2 ADRP, ADD (immediate)), x86-64 `lea rax, [rip+d];
/// ret`, riscv64 `auipc a0; addi a0; ret`, or (x86-64, riscv64) any body
/// whose every path returns one file address, as at -O0.
fn returned_address(file: &PluginFile<'_>, entry: u64) -> Option<u64> {
    let code = file.code_at(entry)?;
    match file.arch() {
        Arch::Aarch64 => crate::lift::aarch64::returned_address(entry, code),
        // The compiler's usual two instructions, else the lifter's
        // analysis of the body (a frame at -O0, `endbr64`, compressed
        // forms): the one file address every path returns.
        Arch::X86_64 => x86_64_returned_address(entry, code)
            .or_else(|| crate::lift::x86_64::returned_address(file, entry)),
        Arch::Riscv64 => riscv64_returned_address(entry, code)
            .or_else(|| crate::lift::riscv64::returned_address(file, entry)),
    }
}

/// x86-64 `[endbr64;] lea rax, [rip+disp32]; ret` (Intel SDM vol. 2, LEA;
/// REX.W 8D /r with ModRM 0x05: RIP-relative, rax).
fn x86_64_returned_address(entry: u64, code: &[u8]) -> Option<u64> {
    let skip = if code.starts_with(&[0xf3, 0x0f, 0x1e, 0xfa]) {
        4
    } else {
        0
    };
    let c = code.get(skip..skip + 8)?;
    if c[0..3] != [0x48, 0x8d, 0x05] || c[7] != 0xc3 {
        return None;
    }
    let disp = i32::from_le_bytes([c[3], c[4], c[5], c[6]]) as i64;
    let next = entry + skip as u64 + 7;
    Some(next.wrapping_add(disp as u64))
}

/// riscv64 `auipc a0, hi; addi a0, a0, lo; ret` (RISC-V unprivileged ISA,
/// 2.4 "Integer Computational Instructions").
fn riscv64_returned_address(entry: u64, code: &[u8]) -> Option<u64> {
    let word = |i: usize| -> Option<u32> {
        Some(u32::from_le_bytes(
            code.get(4 * i..4 * i + 4)?.try_into().ok()?,
        ))
    };
    let auipc = word(0)?;
    let addi = word(1)?;
    // auipc a0 (x10): opcode 0010111, rd 10.
    if auipc & 0x7f != 0x17 || (auipc >> 7) & 0x1f != 10 {
        return None;
    }
    // addi a0, a0, imm: opcode 0010011, funct3 000, rd = rs1 = 10.
    if addi & 0x7f != 0x13
        || (addi >> 12) & 7 != 0
        || (addi >> 7) & 0x1f != 10
        || (addi >> 15) & 0x1f != 10
    {
        return None;
    }
    let hi = (auipc & 0xffff_f000) as i32 as i64;
    let lo = (addi as i32 >> 20) as i64;
    Some(entry.wrapping_add(hi as u64).wrapping_add(lo as u64))
}
