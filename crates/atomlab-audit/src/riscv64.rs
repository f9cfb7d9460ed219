//! riscv64 classification, following The RISC-V Instruction Set Manual,
//! Volume I (Unprivileged): chapter "A" (LR/SC and AMOs with their aq/rl
//! bits, bits 26 and 25), the FENCE instruction (predecessor and successor
//! sets in bits 27:24 and 23:20, `fm` in 31:28; FENCE.TSO is fm=1000 with
//! RW,RW) and Zihintpause (PAUSE is FENCE W,0). Decoding is riscv-decode's;
//! it exposes the raw word, from which the aq/rl and fm fields are read.
//! Atomic instructions have no compressed forms, so 16-bit instructions are
//! stepped over by their length.
//!
//! An LR/SC loop is an LR, an SC within 32 bytes, and within three
//! instructions after the SC a conditional branch back to the LR (GCC often
//! uses the compressed `c.bnez`, which riscv-decode does not decode: `raki`
//! decodes branches and calls).

use riscv_decode::Instruction as I;

use crate::elf::Image;
use crate::found::{Call, Loop, Scan};
use crate::model::{Class, Order, Site};
use raki::{BaseIOpcode, COpcode, Decode, Isa, OpcodeKind};

fn aqrl(raw: u32) -> (Order, &'static str) {
    let aq = raw & (1 << 26) != 0;
    let rl = raw & (1 << 25) != 0;
    let s = match (aq, rl) {
        (false, false) => "",
        (true, false) => ".aq",
        (false, true) => ".rl",
        (true, true) => ".aqrl",
    };
    (Order::from_bits(aq, rl), s)
}

fn fence_set(bits: u32) -> String {
    let mut s = String::new();
    for (bit, c) in [(8, 'i'), (4, 'o'), (2, 'r'), (1, 'w')] {
        if bits & bit != 0 {
            s.push(c);
        }
    }
    if s.is_empty() {
        s.push('0');
    }
    s
}

/// Classifies one 32-bit instruction word.
fn classify(word: u32) -> Option<(Class, String, Order, u8)> {
    // FENCE.TSO (fm=1000, RW,RW, rs1=rd=x0): riscv-decode rejects fm != 0.
    if word == 0x8330_000f {
        return Some((Class::Barrier, "fence.tso".into(), Order::Relaxed, 0));
    }
    let inst = riscv_decode::decode(word).ok()?;
    let (class, base, size) = match inst {
        I::LrW(_) => (Class::LoadExclusive, "lr.w", 4),
        I::LrD(_) => (Class::LoadExclusive, "lr.d", 8),
        I::ScW(_) => (Class::StoreExclusive, "sc.w", 4),
        I::ScD(_) => (Class::StoreExclusive, "sc.d", 8),
        I::AmoswapW(_) => (Class::Amo, "amoswap.w", 4),
        I::AmoaddW(_) => (Class::Amo, "amoadd.w", 4),
        I::AmoxorW(_) => (Class::Amo, "amoxor.w", 4),
        I::AmoandW(_) => (Class::Amo, "amoand.w", 4),
        I::AmoorW(_) => (Class::Amo, "amoor.w", 4),
        I::AmominW(_) => (Class::Amo, "amomin.w", 4),
        I::AmomaxW(_) => (Class::Amo, "amomax.w", 4),
        I::AmominuW(_) => (Class::Amo, "amominu.w", 4),
        I::AmomaxuW(_) => (Class::Amo, "amomaxu.w", 4),
        I::AmoswapD(_) => (Class::Amo, "amoswap.d", 8),
        I::AmoaddD(_) => (Class::Amo, "amoadd.d", 8),
        I::AmoxorD(_) => (Class::Amo, "amoxor.d", 8),
        I::AmoandD(_) => (Class::Amo, "amoand.d", 8),
        I::AmoorD(_) => (Class::Amo, "amoor.d", 8),
        I::AmominD(_) => (Class::Amo, "amomin.d", 8),
        I::AmomaxD(_) => (Class::Amo, "amomax.d", 8),
        I::AmominuD(_) => (Class::Amo, "amominu.d", 8),
        I::AmomaxuD(_) => (Class::Amo, "amomaxu.d", 8),
        I::Fence(f) => {
            let fm = word >> 28;
            let (pred, succ) = (f.pred(), f.succ());
            let mnemonic = if fm == 0b1000 && pred == 0b0011 && succ == 0b0011 {
                "fence.tso".to_string()
            } else if fm == 0 && pred == 0b0001 && succ == 0 {
                return None; // PAUSE: a hint, not an ordering.
            } else if pred == 0b1111 && succ == 0b1111 {
                "fence".to_string()
            } else {
                format!("fence {},{}", fence_set(pred), fence_set(succ))
            };
            return Some((Class::Barrier, mnemonic, Order::Relaxed, 0));
        }
        _ => return None,
    };
    let (order, suffix) = aqrl(word);
    Some((class, format!("{base}{suffix}"), order, size))
}

/// An SC waiting for its retry branch.
struct PendingSc {
    lr_addr: u64,
    lr_index: usize,
    sc_index: usize,
    /// Instructions left in which the branch may come.
    left: u8,
}

/// Target of a conditional branch (B-type or C.BEQZ/C.BNEZ) decoded by raki.
fn conditional_target(inst: Option<raki::Instruction>, addr: u64) -> Option<u64> {
    let inst = inst?;
    let branch = matches!(
        inst.opc,
        OpcodeKind::BaseI(
            BaseIOpcode::BEQ
                | BaseIOpcode::BNE
                | BaseIOpcode::BLT
                | BaseIOpcode::BGE
                | BaseIOpcode::BLTU
                | BaseIOpcode::BGEU
        ) | OpcodeKind::C(COpcode::BEQZ | COpcode::BNEZ)
    );
    if !branch {
        return None;
    }
    Some(addr.wrapping_add(inst.imm? as i64 as u64))
}

/// Scans the image's code.
pub(crate) fn scan(image: &Image<'_>) -> Scan {
    let mut out = Scan::default();
    for region in &image.code {
        let bytes = region.bytes;
        let mut off = 0usize;
        let mut last_lr: Option<(u64, usize)> = None;
        let mut pending: Option<PendingSc> = None;
        // The last AUIPC (register, pc + upper immediate), for AUIPC+JALR calls.
        let mut last_auipc: Option<(usize, u64)> = None;
        while off + 2 <= bytes.len() {
            let low = u16::from_le_bytes([bytes[off], bytes[off + 1]]);
            let len = riscv_decode::instruction_length(low);
            // After an SC, look for its retry branch back to the LR.
            if let Some(p) = pending.as_mut() {
                let here = addr_at(region.addr, off);
                let inst = match len {
                    2 => low.decode(Isa::Rv64).ok(),
                    4 => bytes.get(off..off + 4).and_then(|b| {
                        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
                            .decode(Isa::Rv64)
                            .ok()
                    }),
                    _ => None,
                };
                if let Some(t) = conditional_target(inst, here) {
                    if t <= p.lr_addr && p.lr_addr - t <= 32 {
                        out.loops.push(Loop {
                            start: p.lr_addr,
                            ll: p.lr_index,
                            sc: p.sc_index,
                        });
                        pending = None;
                    }
                }
                if let Some(p) = pending.as_mut() {
                    if p.left == 0 {
                        pending = None;
                    } else {
                        p.left -= 1;
                    }
                }
            }
            if len == 2 {
                // C.J (quadrant 1, funct3 101): tail calls to the PLT.
                if low & 0b11 == 0b01 && low >> 13 == 0b101 {
                    if let Some(t) =
                        branch_target(low.decode(Isa::Rv64).ok(), addr_at(region.addr, off))
                    {
                        out.calls.push(Call {
                            addr: addr_at(region.addr, off),
                            target: t,
                        });
                    }
                }
                off += 2;
                continue;
            }
            if len != 4 {
                off += len.max(2);
                continue;
            }
            let Some(b) = bytes.get(off..off + 4) else {
                break;
            };
            let word = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let addr = region.addr.wrapping_add(off as u64);
            off += 4;
            // Only the AMO (0101111) and MISC-MEM (0001111) major opcodes
            // hold what we classify; calls are JAL (1101111) and AUIPC
            // (0010111) + JALR (1100111). Skip the decoder for the rest.
            let major = word & 0x7f;
            match major {
                0b110_1111 => {
                    if let Some(t) = branch_target(word.decode(Isa::Rv64).ok(), addr) {
                        out.calls.push(Call { addr, target: t });
                    }
                    continue;
                }
                0b001_0111 => {
                    if let Ok(i) = word.decode(Isa::Rv64) {
                        if let (Some(rd), Some(imm)) = (i.rd, i.imm) {
                            last_auipc = Some((rd, addr.wrapping_add(upper20(imm))));
                        }
                    }
                    continue;
                }
                0b110_0111 => {
                    if let (Ok(i), Some((reg, base))) = (word.decode(Isa::Rv64), last_auipc) {
                        if i.rs1 == Some(reg) {
                            let t = base.wrapping_add(i.imm.unwrap_or(0) as i64 as u64);
                            out.calls.push(Call { addr, target: t });
                        }
                    }
                    continue;
                }
                0b010_1111 | 0b000_1111 => {}
                _ => continue,
            }
            let Some((class, mnemonic, order, size)) = classify(word) else {
                continue;
            };
            match class {
                Class::LoadExclusive => last_lr = Some((addr, out.sites.len())),
                Class::StoreExclusive => {
                    if let Some((lr_addr, idx)) = last_lr.take() {
                        if addr.wrapping_sub(lr_addr) <= 32 {
                            pending = Some(PendingSc {
                                lr_addr,
                                lr_index: idx,
                                sc_index: out.sites.len(),
                                left: 3,
                            });
                        }
                    }
                }
                _ => {}
            }
            out.sites.push(Site {
                addr,
                class,
                mnemonic,
                order,
                size,
            });
        }
    }
    // PLT entries (RISC-V ELF psABI, "Procedure Linkage Table"):
    // `auipc t3, %pcrel_hi(slot); ld t3, %pcrel_lo(slot)(t3); jalr t1, t3; nop`.
    for region in image.code.iter().filter(|r| r.name.starts_with(".plt")) {
        let words: Vec<u32> = region
            .bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        for (i, pair) in words.windows(2).enumerate() {
            let (Ok(a), Ok(l)) = (pair[0].decode(Isa::Rv64), pair[1].decode(Isa::Rv64)) else {
                continue;
            };
            let is = |inst: &raki::Instruction, op: BaseIOpcode| matches!(&inst.opc, OpcodeKind::BaseI(o) if *o == op);
            if is(&a, BaseIOpcode::AUIPC) && is(&l, BaseIOpcode::LD) && a.rd == l.rs1 {
                let stub = addr_at(region.addr, 4 * i);
                let slot = stub
                    .wrapping_add(upper20(a.imm.unwrap_or(0)))
                    .wrapping_add(l.imm.unwrap_or(0) as i64 as u64);
                if let Some(name) = image.got_slots.get(&slot) {
                    out.plt.insert(stub, name.clone());
                }
            }
        }
    }
    out
}

fn addr_at(base: u64, off: usize) -> u64 {
    base.wrapping_add(off as u64)
}

/// AUIPC's 20-bit immediate (raki gives the raw field) as a byte offset.
fn upper20(imm: i32) -> u64 {
    ((((imm as u32) << 12) as i32) as i64) as u64
}

/// Target of a JAL or C.J decoded by raki (its immediates are sign-extended
/// byte offsets).
fn branch_target(inst: Option<raki::Instruction>, addr: u64) -> Option<u64> {
    let inst = inst?;
    let jump = matches!(
        inst.opc,
        OpcodeKind::BaseI(BaseIOpcode::JAL) | OpcodeKind::C(COpcode::J)
    );
    if !jump {
        return None;
    }
    Some(addr.wrapping_add(inst.imm? as i64 as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amo_lrsc_fence() {
        // Words and names from riscv64-linux-gnu-objdump on the fixtures.
        assert_eq!(
            classify(0x04e7b52f),
            Some((Class::Amo, "amoadd.d.aq".into(), Order::Acquire, 8))
        );
        assert_eq!(
            classify(0x140727af),
            Some((Class::LoadExclusive, "lr.w.aq".into(), Order::Acquire, 4))
        );
        assert_eq!(
            classify(0x1cb726af),
            Some((Class::StoreExclusive, "sc.w.aq".into(), Order::Acquire, 4))
        );
        assert_eq!(
            classify(0x0f50000f),
            Some((Class::Barrier, "fence iorw,ow".into(), Order::Relaxed, 0))
        );
        assert_eq!(
            classify(0x0ff0000f),
            Some((Class::Barrier, "fence".into(), Order::Relaxed, 0))
        );
        // fence.tso
        assert_eq!(
            classify(0x8330000f),
            Some((Class::Barrier, "fence.tso".into(), Order::Relaxed, 0))
        );
        // pause
        assert_eq!(classify(0x0100000f), None);
        // fence.i
        assert_eq!(classify(0x0000100f), None);
    }
}
