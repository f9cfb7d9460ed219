//! x86-64 classification, following the Intel 64 and IA-32 Architectures
//! Software Developer's Manual (Intel SDM), vol. 3A §9.1.2.2 "Software
//! Controlled Bus Locking" (the LOCK prefix and the instructions it may
//! prefix; XCHG with a memory operand locks without it), vol. 2 for
//! MFENCE/LFENCE/SFENCE and CMPXCHG8B/CMPXCHG16B. Decoding is iced-x86's,
//! with only its decoder compiled in.

use iced_x86::{Decoder, DecoderOptions, Instruction, MemorySize, Mnemonic, OpKind};

use crate::elf::Image;
use crate::found::{Call, Scan};
use crate::model::{Class, Order, Site};

fn name(m: Mnemonic) -> String {
    format!("{m:?}").to_ascii_lowercase()
}

fn has_memory_operand(inst: &Instruction) -> bool {
    (0..inst.op_count()).any(|i| inst.op_kind(i) == OpKind::Memory)
}

/// Bytes accessed, for the integer sizes atomic instructions use (iced-x86's
/// own `MemorySize::size` needs its larger `instr_info` tables).
fn access_size(m: MemorySize) -> u8 {
    match m {
        MemorySize::UInt8 | MemorySize::Int8 => 1,
        MemorySize::UInt16 | MemorySize::Int16 => 2,
        MemorySize::UInt32 | MemorySize::Int32 => 4,
        MemorySize::UInt64 | MemorySize::Int64 => 8,
        MemorySize::UInt128 | MemorySize::Int128 => 16,
        _ => 0,
    }
}

/// Classifies one decoded instruction.
fn classify(inst: &Instruction) -> Option<(Class, String, Order, u8)> {
    let m = inst.mnemonic();
    let size = access_size(inst.memory_size());
    let locked = inst.has_lock_prefix();
    let lock = if locked { "lock " } else { "" };
    match m {
        Mnemonic::Mfence | Mnemonic::Lfence | Mnemonic::Sfence => {
            Some((Class::Barrier, name(m), Order::SeqCst, 0))
        }
        Mnemonic::Cmpxchg8b | Mnemonic::Cmpxchg16b => Some((
            Class::WideCas,
            format!("{lock}{}", name(m)),
            if locked {
                Order::SeqCst
            } else {
                Order::Relaxed
            },
            size,
        )),
        Mnemonic::Xchg if has_memory_operand(inst) => {
            Some((Class::XchgMem, format!("{lock}xchg"), Order::SeqCst, size))
        }
        _ if locked && has_memory_operand(inst) => Some((
            Class::LockedRmw,
            format!("lock {}", name(m)),
            Order::SeqCst,
            size,
        )),
        _ => None,
    }
}

/// Scans the image's code.
pub(crate) fn scan(image: &Image<'_>) -> Scan {
    let mut out = Scan::default();
    let mut inst = Instruction::default();
    for region in &image.code {
        let mut decoder = Decoder::with_ip(64, region.bytes, region.addr, DecoderOptions::NONE);
        while decoder.can_decode() {
            decoder.decode_out(&mut inst);
            if inst.is_invalid() {
                out.undecodable += 1;
                continue;
            }
            // Direct calls and jumps, to find calls to libatomic.
            if matches!(inst.mnemonic(), Mnemonic::Call | Mnemonic::Jmp)
                && inst.op0_kind() == OpKind::NearBranch64
            {
                out.calls.push(Call {
                    addr: inst.ip(),
                    target: inst.near_branch_target(),
                });
            }
            if let Some((class, mnemonic, order, size)) = classify(&inst) {
                out.sites.push(Site {
                    addr: inst.ip(),
                    class,
                    mnemonic,
                    order,
                    size,
                });
            }
        }
    }
    // PLT stubs (`.plt`, `.plt.sec`: 16-byte entries, System V x86-64 ABI
    // §5.2) jump through their GOT slot with `jmp [rip+disp]`.
    for region in image.code.iter().filter(|r| r.name.starts_with(".plt")) {
        let mut decoder = Decoder::with_ip(64, region.bytes, region.addr, DecoderOptions::NONE);
        while decoder.can_decode() {
            decoder.decode_out(&mut inst);
            if inst.mnemonic() == Mnemonic::Jmp && inst.is_ip_rel_memory_operand() {
                let slot = inst.ip_rel_memory_address();
                if let Some(name) = image.got_slots.get(&slot) {
                    let stub = region
                        .addr
                        .wrapping_add(inst.ip().wrapping_sub(region.addr) & !15);
                    out.plt.insert(stub, name.clone());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(bytes: &[u8]) -> Option<(Class, String, Order, u8)> {
        let mut d = Decoder::with_ip(64, bytes, 0, DecoderOptions::NONE);
        classify(&d.decode())
    }

    #[test]
    fn locked_and_fences() {
        // lock xadd [rdi], eax
        assert_eq!(
            one(&[0xf0, 0x0f, 0xc1, 0x07]),
            Some((Class::LockedRmw, "lock xadd".into(), Order::SeqCst, 4))
        );
        // xchg [rdi], rax
        assert_eq!(
            one(&[0x48, 0x87, 0x07]),
            Some((Class::XchgMem, "xchg".into(), Order::SeqCst, 8))
        );
        // xchg rax, rbx is not atomic
        assert_eq!(one(&[0x48, 0x87, 0xd8]), None);
        // mfence
        assert_eq!(
            one(&[0x0f, 0xae, 0xf0]),
            Some((Class::Barrier, "mfence".into(), Order::SeqCst, 0))
        );
        // lock cmpxchg16b [rdi]
        assert_eq!(
            one(&[0xf0, 0x48, 0x0f, 0xc7, 0x0f]),
            Some((Class::WideCas, "lock cmpxchg16b".into(), Order::SeqCst, 16))
        );
        // add [rdi], eax without lock
        assert_eq!(one(&[0x01, 0x07]), None);
    }
}
