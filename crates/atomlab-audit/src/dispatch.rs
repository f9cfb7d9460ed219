//! Whether an aarch64 LSE instruction is chosen at run time.
//!
//! An LSE instruction (FEAT_LSE, ARMv8.1) raises SIGILL on an ARMv8.0 CPU
//! only if that CPU executes it. Code built for both tests the CPU first and
//! keeps an LL/SC loop for the other case. The forms recognised, each named
//! by an [`Evidence`]:
//! - a branch (CBZ, CBNZ, TBZ, TBNZ, or B.cond after CMP, CMN or TST;
//!   Arm ARM C6.2) whose one arm holds the
//!   LSE instruction and whose other arm holds a load-exclusive, on a
//!   register that was loaded from memory (Go's compiler and runtime test
//!   `internal/cpu.ARM64.HasATOMICS` so; C code a cached HWCAP bit), returned
//!   by `getauxval` (`AT_HWCAP`, Linux's `HWCAP_ATOMICS` bit), or read from
//!   an ID register by MRS. For B.cond the register is the one the nearest
//!   flag-setting instruction before it compares with a constant (CMP, CMN:
//!   SUBS, ADDS to the zero register) or masks (TST: ANDS to the zero
//!   register); any other flag setter, or a call, between them and the test
//!   is not recognised;
//! - a function that a GNU ifunc resolver (STT_GNU_IFUNC or
//!   `R_AARCH64_IRELATIVE`) returns as one of several choices, where the
//!   resolver has a conditional (branch or CSEL) to choose with;
//! - a function of a position-independent file that no instruction outside
//!   it branches to or takes the address of (ADR, ADRP+ADD) and that no
//!   dynamic symbol or relocation points to: never run at all. In a PIE or
//!   shared object every code address stored in data carries a
//!   `R_AARCH64_RELATIVE` relocation (ELF for the Arm 64-bit Architecture),
//!   so none is missed there; executables at fixed addresses are not judged
//!   this way.
//!
//! The outline helpers' own LSE halves are counted apart (`in_helpers`).
//!
//! # Limitations
//! - The test is judged by shape: a branch on a loaded value that puts LSE
//!   on one arm and an LL/SC loop on the other is taken for a feature test,
//!   whatever the value means.
//! - A B.cond is followed to one compare (CMP, CMN, TST with a constant or
//!   the zero register) within 8 instructions before it; a compare of two
//!   registers, CCMP chains and flags set further away are not recognised.
//! - The branch is found within 24 instructions before the LSE
//!   instruction, a fallback it jumps to within 1024 instructions after it
//!   (and in the same function), and each arm's first 24 instructions are
//!   searched.

use std::collections::{BTreeMap, HashMap, HashSet};

use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Instruction, Opcode, Operand};

use crate::elf::Image;
use crate::model::Evidence;

/// How far (in instructions) a guarding branch may lie before the LSE
/// instruction, and how long each arm may be.
const ARM: u64 = 24;

/// How far (in instructions) a guarding branch may jump forward to its
/// fallback, within the function: Go puts the LL/SC arms of a function's
/// inlined atomics at its end (Debian 12's nats-server has a TBZ 41
/// instructions before its fallback).
const FAR: u64 = 1024;

pub(crate) struct Dispatch {
    /// LSE site address → why it is chosen at run time.
    pub guarded: HashMap<u64, Evidence>,
    /// Load-exclusive addresses on the ARMv8.0 side of a choice (or never run).
    pub fallback_ll: HashSet<u64>,
}

struct Ctx<'a, 'b> {
    image: &'b Image<'a>,
    decoder: InstDecoder,
    /// Function starts, sorted.
    starts: &'b [u64],
    /// Load-exclusive addresses, sorted.
    lls: &'b [u64],
    /// Addresses of `getauxval` (PLT stubs or the function itself).
    getauxval: HashSet<u64>,
}

impl Ctx<'_, '_> {
    fn decode(&self, addr: u64) -> Option<Instruction> {
        let bytes = self.image.bytes_at(addr)?;
        let mut inst = Instruction::default();
        let mut reader = U8Reader::new(bytes.get(..4)?);
        self.decoder.decode_into(&mut inst, &mut reader).ok()?;
        Some(inst)
    }

    /// The function around `addr`: [start, end), ending at the next start or
    /// the end of its section, whichever comes first.
    fn function(&self, addr: u64) -> (u64, u64) {
        let i = self.starts.partition_point(|&s| s <= addr);
        let start = i.checked_sub(1).map_or(0, |j| self.starts[j]);
        let next = self.starts.get(i).copied().unwrap_or(u64::MAX);
        let region_end = self
            .image
            .code
            .iter()
            .find(|r| r.addr <= addr && addr - r.addr < r.bytes.len() as u64)
            .map_or(u64::MAX, |r| r.addr.saturating_add(r.bytes.len() as u64));
        (start, next.min(region_end))
    }

    /// Load-exclusives in [from, to).
    fn lls_in(&self, from: u64, to: u64) -> &[u64] {
        let a = self.lls.partition_point(|&l| l < from);
        let b = self.lls.partition_point(|&l| l < to);
        &self.lls[a..b.max(a)]
    }

    /// What the value in `reg` at the branch `at` came from.
    fn condition(&self, at: u64, mut reg: u16, floor: u64) -> Option<Evidence> {
        let mut addr = at;
        for _ in 0..12 {
            addr = addr.checked_sub(4)?;
            if addr < floor {
                return None;
            }
            let inst = self.decode(addr)?;
            let name = format!("{:?}", inst.opcode);
            if matches!(inst.opcode, Opcode::BL | Opcode::BLR) {
                if reg > 18 {
                    continue;
                }
                let target = match inst.operands[0] {
                    Operand::PCOffset(off) => Some(addr.wrapping_add(off as u64)),
                    _ => None,
                };
                return (reg == 0 && target.is_some_and(|t| self.getauxval.contains(&t)))
                    .then_some(Evidence::Getauxval);
            }
            if matches!(inst.opcode, Opcode::RET | Opcode::B | Opcode::BR) {
                return None;
            }
            let writes = match inst.operands[0] {
                Operand::Register(_, r) | Operand::RegisterOrSP(_, r) => r == reg,
                _ => false,
            };
            // Stores, compares-and-branches and the like read operand 0.
            let reads_only = name.starts_with("ST")
                || name.starts_with("CB")
                || name.starts_with("TB")
                || name.starts_with("PRFM")
                || name.starts_with("CAS")
                || name.starts_with("SWP");
            if !writes || reads_only {
                continue;
            }
            if name.starts_with("LD") && !name.starts_with("LDX") && !name.starts_with("LDAX") {
                return Some(Evidence::FlagTest);
            }
            if inst.opcode == Opcode::MRS {
                return Some(Evidence::IdRegister);
            }
            // `and`, `ubfx`, `mov`: follow the source register.
            let src = inst.operands[1..].iter().find_map(|op| match op {
                Operand::Register(_, r) | Operand::RegisterOrSP(_, r) if *r != 31 => Some(*r),
                _ => None,
            })?;
            reg = src;
        }
        None
    }

    /// The register a B.cond at `at` tests, and where: the nearest
    /// flag-setting instruction before it must compare one register with a
    /// constant or the zero register (CMP, CMN: SUBS, ADDS writing the zero
    /// register) or mask it (TST: ANDS writing the zero register). Another
    /// flag setter, a call (which may change the flags) or the end of a
    /// block before one is found: `None`.
    fn compared(&self, at: u64, floor: u64) -> Option<(u16, u64)> {
        let mut addr = at;
        for _ in 0..8 {
            addr = addr.checked_sub(4)?;
            if addr < floor {
                return None;
            }
            let inst = self.decode(addr)?;
            match (inst.opcode, inst.operands) {
                (
                    Opcode::SUBS | Opcode::ADDS | Opcode::ANDS,
                    [Operand::Register(_, 31), Operand::Register(_, r) | Operand::RegisterOrSP(_, r), with, _],
                ) => {
                    let constant = matches!(
                        with,
                        Operand::Immediate(_)
                            | Operand::ImmShift(..)
                            | Operand::Imm64(_)
                            | Operand::RegShift(_, _, _, 31)
                    );
                    // Register 31 as a source is SP (or zero): no flag.
                    return (constant && r != 31).then_some((r, addr));
                }
                (
                    Opcode::SUBS
                    | Opcode::ADDS
                    | Opcode::ANDS
                    | Opcode::BICS
                    | Opcode::ADCS
                    | Opcode::SBCS
                    | Opcode::CCMP
                    | Opcode::CCMN
                    | Opcode::FCMP
                    | Opcode::FCMPE
                    | Opcode::FCCMP
                    | Opcode::FCCMPE
                    | Opcode::BL
                    | Opcode::BLR
                    | Opcode::RET
                    | Opcode::B
                    | Opcode::BR,
                    _,
                ) => return None,
                _ => {}
            }
        }
        None
    }

    /// A branch before the LSE instruction at `site` that puts it on one arm
    /// and a load-exclusive on the other: the evidence, and the fallback's
    /// load-exclusives.
    fn branch_guard(&self, site: u64) -> Option<(Evidence, Vec<u64>)> {
        let (floor, fn_end) = self.function(site);
        // The nearest unconditional end (RET, B, BR) passed walking back.
        let mut end: Option<u64> = None;
        for k in 1..=ARM {
            let b = site.checked_sub(4 * k)?;
            if b < floor {
                return None;
            }
            let inst = self.decode(b)?;
            // The register tested, where its test is, and the branch offset.
            let (reg, tested_at, off) = match (inst.opcode, inst.operands) {
                (
                    Opcode::CBZ | Opcode::CBNZ,
                    [Operand::Register(_, r), Operand::PCOffset(off), ..],
                )
                | (
                    Opcode::TBZ | Opcode::TBNZ,
                    [Operand::Register(_, r), _, Operand::PCOffset(off), _],
                ) => (r, b, off),
                // Not AL or NV (0b1110, 0b1111), which always branch.
                (Opcode::Bcc(cond), [Operand::PCOffset(off), ..]) if cond < 0b1110 => {
                    match self.compared(b, floor) {
                        Some((r, at)) => (r, at, off),
                        None => continue,
                    }
                }
                (Opcode::RET | Opcode::B | Opcode::BR, _) => {
                    if end.is_some() {
                        return None;
                    }
                    end = Some(b);
                    continue;
                }
                _ => continue,
            };
            let t = b.wrapping_add(off as u64);
            let fallback: Vec<u64> = match end {
                // LSE falls through from the branch; the fallback is taken.
                None if t > site && t - b <= 4 * FAR && t < fn_end => {
                    self.lls_in(t, t.saturating_add(4 * ARM)).to_vec()
                }
                // LSE is the taken arm, after the fall-through arm's end.
                Some(e) if t > e && t <= site => self.lls_in(b + 4, e).to_vec(),
                _ => continue,
            };
            if fallback.is_empty() {
                continue;
            }
            let lse_arm = if end.is_none() {
                (b + 4, t)
            } else {
                (t, site.saturating_add(4))
            };
            if !self.lls_in(lse_arm.0, lse_arm.1).is_empty() {
                continue;
            }
            return self.condition(tested_at, reg, floor).map(|e| (e, fallback));
        }
        None
    }
}

/// Code addresses taken or branched to by instructions (source, target).
fn code_refs(image: &Image<'_>, decoder: &InstDecoder) -> Vec<(u64, u64)> {
    let mut refs = Vec::new();
    let mut inst = Instruction::default();
    for region in &image.code {
        let mut pages: [Option<u64>; 32] = [None; 32];
        for (i, chunk) in region.bytes.chunks_exact(4).enumerate() {
            let addr = region.addr.wrapping_add(4 * i as u64);
            let word = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            // Arm ARM C4.1: 100x data processing (immediate), 101x branches.
            let op0 = (word >> 25) & 0xf;
            if op0 & 0b1100 != 0b1000 {
                continue;
            }
            let mut reader = U8Reader::new(chunk);
            if decoder.decode_into(&mut inst, &mut reader).is_err() {
                continue;
            }
            match inst.opcode {
                Opcode::ADRP => {
                    if let (Operand::Register(_, r), Operand::PCOffset(off)) =
                        (inst.operands[0], inst.operands[1])
                    {
                        if let Some(p) = pages.get_mut(usize::from(r)) {
                            *p = Some((addr & !0xfff).wrapping_add(off as u64));
                        }
                    }
                }
                Opcode::ADD => {
                    let src = match inst.operands[1] {
                        Operand::Register(_, r) | Operand::RegisterOrSP(_, r) => r,
                        _ => continue,
                    };
                    let imm = match inst.operands[2] {
                        Operand::Immediate(v) => u64::from(v),
                        Operand::ImmShift(v, s) => {
                            u64::from(v).checked_shl(u32::from(s)).unwrap_or(0)
                        }
                        _ => continue,
                    };
                    if let Some(Some(p)) = pages.get(usize::from(src)) {
                        refs.push((addr, p.wrapping_add(imm)));
                    }
                }
                _ => {
                    for op in &inst.operands {
                        if let Operand::PCOffset(off) = op {
                            refs.push((addr, addr.wrapping_add(*off as u64)));
                        }
                    }
                }
            }
        }
    }
    refs
}

/// Functions an ifunc resolver chooses between (only resolvers that have a
/// conditional and more than one choice).
fn ifunc_choices(ctx: &Ctx<'_, '_>) -> HashSet<u64> {
    let mut out = HashSet::new();
    for &r in &ctx.image.ifunc_resolvers {
        let (_, end) = ctx.function(r);
        let mut pages: HashMap<u16, u64> = HashMap::new();
        let mut targets = HashSet::new();
        let mut conditional = false;
        for k in 0..64u64 {
            let Some(addr) = r.checked_add(4 * k).filter(|&a| a < end) else {
                break;
            };
            let Some(inst) = ctx.decode(addr) else { break };
            match (
                inst.opcode,
                inst.operands[0],
                inst.operands[1],
                inst.operands[2],
            ) {
                (Opcode::ADRP, Operand::Register(_, d), Operand::PCOffset(off), _) => {
                    pages.insert(d, (addr & !0xfff).wrapping_add(off as u64));
                }
                (Opcode::ADD, _, Operand::Register(_, s) | Operand::RegisterOrSP(_, s), imm) => {
                    let imm = match imm {
                        Operand::Immediate(v) => Some(u64::from(v)),
                        Operand::ImmShift(v, sh) => u64::from(v).checked_shl(u32::from(sh)),
                        _ => None,
                    };
                    if let (Some(p), Some(i)) = (pages.get(&s), imm) {
                        targets.insert(p.wrapping_add(i));
                    }
                }
                (Opcode::ADR, _, Operand::PCOffset(off), _) => {
                    targets.insert(addr.wrapping_add(off as u64));
                }
                (
                    Opcode::CBZ
                    | Opcode::CBNZ
                    | Opcode::TBZ
                    | Opcode::TBNZ
                    | Opcode::Bcc(_)
                    | Opcode::CSEL,
                    ..,
                ) => conditional = true,
                _ => {}
            }
        }
        targets.retain(|t| ctx.image.bytes_at(*t).is_some());
        if conditional && targets.len() > 1 {
            out.extend(targets);
        }
    }
    out
}

/// Judges every LSE site (outside helpers) in `lse`, given the function
/// starts, the load-exclusive addresses and the PLT.
pub(crate) fn analyse(
    image: &Image<'_>,
    lse: &[u64],
    starts: &[u64],
    lls: &[u64],
    plt: &HashMap<u64, String>,
) -> Dispatch {
    let mut out = Dispatch {
        guarded: HashMap::new(),
        fallback_ll: HashSet::new(),
    };
    if lse.is_empty() {
        return out;
    }
    let is_getauxval = |n: &str| n == "getauxval" || n == "__getauxval";
    let getauxval: HashSet<u64> = plt
        .iter()
        .filter(|(_, n)| is_getauxval(n))
        .map(|(a, _)| *a)
        .chain(
            image
                .symbols
                .iter()
                .filter(|s| is_getauxval(&s.name))
                .map(|s| s.addr),
        )
        .collect();
    let ctx = Ctx {
        image,
        decoder: InstDecoder::default(),
        starts,
        lls,
        getauxval,
    };
    let mut rest = Vec::new();
    for &site in lse {
        match ctx.branch_guard(site) {
            Some((e, fallback)) => {
                out.guarded.insert(site, e);
                out.fallback_ll.extend(fallback);
            }
            None => rest.push(site),
        }
    }
    if rest.is_empty() {
        return out;
    }
    // Whole functions chosen by ifunc resolvers, or never reached.
    let mut judged: BTreeMap<u64, Option<Evidence>> = BTreeMap::new();
    let choices = ifunc_choices(&ctx);
    let refs = if image.position_independent {
        let mut r = code_refs(image, &ctx.decoder);
        r.sort_unstable_by_key(|&(_, t)| t);
        Some(r)
    } else {
        None
    };
    let reached = |start: u64, end: u64| -> bool {
        let Some(refs) = &refs else { return true };
        let data = image.data_refs.partition_point(|&d| d < start);
        if image.data_refs.get(data).is_some_and(|&d| d < end) {
            return true;
        }
        let i = refs.partition_point(|&(_, t)| t < start);
        refs[i..]
            .iter()
            .take_while(|&&(_, t)| t < end)
            .any(|&(s, _)| s < start || s >= end)
    };
    for site in rest {
        let (start, end) = ctx.function(site);
        let verdict = *judged.entry(start).or_insert_with(|| {
            if choices.contains(&start) {
                Some(Evidence::Ifunc)
            } else if start != 0 && end != u64::MAX && !reached(start, end) {
                Some(Evidence::Unreferenced)
            } else {
                None
            }
        });
        if let Some(e) = verdict {
            out.guarded.insert(site, e);
        }
    }
    // The LL/SC loops of those functions are the other choice (or dead).
    for (&start, e) in &judged {
        if e.is_some() {
            let (_, end) = ctx.function(start);
            out.fallback_ll.extend(ctx.lls_in(start, end));
        }
    }
    // Functions only LL/SC, chosen by the same resolvers.
    for &start in &choices {
        let (_, end) = ctx.function(start);
        out.fallback_ll.extend(ctx.lls_in(start, end));
    }
    out
}
