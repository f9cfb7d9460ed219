//! RV64 to checker instructions, following The RISC-V Instruction Set
//! Manual, Volume I: Unprivileged ISA: chapter "RV64I" for the base
//! instructions (and the `.w` forms, whose 32-bit results are
//! sign-extended to 64 bits), chapter "A" for LR/SC and the AMOs with their
//! aq/rl bits (26 and 25), the FENCE instruction (predecessor set in bits
//! 27:24, successor set in 23:20, `fm` in 31:28: FENCE.TSO is fm=1000 with
//! RW,RW), Zihintpause (PAUSE is FENCE W,0), and chapter "C" for the
//! compressed forms, each the expansion the manual gives. Decoding is
//! atomlab-audit's: riscv-decode for 32-bit words (the aq/rl and fm bits
//! read from the raw word, as the audit does) and raki for the 16-bit
//! compressed ones.
//!
//! How a function becomes events (the scheme of the aarch64 lifter,
//! through `super::flow`):
//! - Followed from its entry along every path: `jal ra`/`call` into the
//!   file is inlined (its `ret` returns to the call), `j`, `jal zero` and a
//!   `jr` to a resolved address are jumps (a tail call included), `ret` of
//!   the entry function ends it. A call to a PLT stub is refused by the
//!   imported function's name; `ecall` is refused.
//! - A forward analysis resolves every memory operand to (object, byte
//!   offset): `a0` holds the object, `sp` the stack (a stack slot is a
//!   register of the thread), `auipc` a file address; an index masked to
//!   a few values and added to `a0` resolves to one of a few fields
//!   ([`super::index`]). Anything else is refused with the instruction's
//!   address.
//! - Accesses are lowered as atomlab-litmus lowers the same mnemonic in a
//!   RISCV litmus test (riscv.rs): `lr`/`sc` are exclusive with their aq/rl
//!   annotations, an AMO is a read and a write with `.aq` on the read,
//!   `.rl` on the write and `.aqrl` on both, `fence pred,succ` keeps its r
//!   and w bits (i and o order no memory access of the model), `fence.tso`
//!   is [`Fence::Tso`], and every access carries its width.
//! - Registers are 64 bits. A `.w` operation, `lw` and a `.w` AMO's result
//!   are sign-extended from bit 31; stores and AMO operands are cut to the
//!   access width; `lbu`/`lhu`/`lwu` read the zero-extended bytes.

use std::collections::BTreeMap;

use atomlab_audit::PluginFile;
use atomlab_litmus::{Annot, BinOp, Expr, Fence, Instr, RmwOp, RvAccesses, Value};
use raki::{COpcode, Decode, Isa, OpcodeKind};
use riscv_decode::Instruction as I;

use super::flow::{self, narrow, narrow_int, sext, sext_int, Abs, Ctx, Low, Step, Target};
use super::heap;
use super::index;
use super::lifter::{Lifted, Lifter, Refusal};
use super::state::{Locations, Registers};

/// The RISC-V (RV64) lifter (see [`super::lifter`]).
pub struct Riscv64;

impl Lifter for Riscv64 {
    fn first_argument(&self) -> &'static str {
        "a0"
    }
    fn second_argument(&self) -> &'static str {
        "a1"
    }
    fn result(&self) -> &'static str {
        "a0"
    }
    fn litmus_arch(&self) -> atomlab_litmus::Arch {
        atomlab_litmus::Arch::RiscV
    }
    /// raki's disassembly (compressed instructions included).
    fn disassemble(&self, file: &PluginFile<'_>, addr: u64) -> Option<String> {
        use raki::{Decode, Isa};
        let bytes = file.code_at(addr)?;
        if let Some(text) = objdump_form(bytes) {
            return Some(text);
        }
        let low = u16::from_le_bytes([*bytes.first()?, *bytes.get(1)?]);
        if length(low) == 2 {
            return Some(low.decode(Isa::Rv64).ok()?.to_string());
        }
        let word = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
        let text = word.decode(Isa::Rv64).ok()?.to_string();
        if word & 0x7f != 0x2f {
            return Some(text);
        }
        // LR/SC/AMO: raki leaves out the aq/rl bits (26, 25), which are
        // the ordering; print them and the operands as objdump does
        // (`amoswap.w.aq a5,a5,(a0)`).
        const ABI: [&str; 32] = [
            "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3",
            "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
            "t3", "t4", "t5", "t6",
        ];
        let reg = |shift: u32| ABI[((word >> shift) & 31) as usize];
        let suffix = match (word >> 26 & 1, word >> 25 & 1) {
            (1, 1) => ".aqrl",
            (1, 0) => ".aq",
            (0, 1) => ".rl",
            _ => "",
        };
        let m = text.split_whitespace().next()?;
        let m = [".aqrl", ".aq", ".rl"]
            .iter()
            .find_map(|s| m.strip_suffix(s))
            .unwrap_or(m);
        Some(if m.starts_with("lr.") {
            format!("{m}{suffix} {},({})", reg(7), reg(15))
        } else {
            format!("{m}{suffix} {},{},({})", reg(7), reg(20), reg(15))
        })
    }
    /// The A extension's aq/rl bits: LR, SC and AMOs only (a plain load
    /// or store has none: a fence is the advice there).
    fn ordered_form(&self, instruction: &str, acquire: bool) -> Option<String> {
        let m = instruction.split_whitespace().next()?;
        if !(m.starts_with("lr.") || m.starts_with("sc.") || m.starts_with("amo")) {
            return None;
        }
        let (core, had) = [".aqrl", ".aq", ".rl"]
            .iter()
            .find_map(|s| m.strip_suffix(s).map(|c| (c, *s)))
            .unwrap_or((m, ""));
        let add = if acquire { ".aq" } else { ".rl" };
        let new = match had {
            ".aqrl" => return None,
            "" => add,
            s if s == add => return None,
            _ => ".aqrl",
        };
        Some(format!("{core}{new}"))
    }
    fn full_barrier(&self) -> Option<(atomlab_litmus::Fence, &'static str)> {
        Some((
            atomlab_litmus::Fence::RiscV {
                pred: atomlab_litmus::RvAccesses::RW,
                succ: atomlab_litmus::RvAccesses::RW,
            },
            "fence rw,rw",
        ))
    }
    fn lift(
        &self,
        file: &PluginFile<'_>,
        entry: u64,
        obj: usize,
        _lse: bool,
        regs: &mut Registers,
        locs: &mut Locations,
    ) -> Result<Lifted, Refusal> {
        let mut x = [Abs::Unknown; 32];
        x[0] = Abs::Int(0);
        x[2] = Abs::Stack(0);
        x[10] = Abs::Obj(obj, 0);
        // Pointer arguments (pop's item) point to their objects (a1…a7).
        for &(n, o) in &regs.pointers {
            if (1..8).contains(&n) {
                x[10 + n] = Abs::Obj(o, 0);
            }
        }
        let mut m = Machine {
            file,
            regs,
            root: entry,
            follow_heap: locs.heap.follow,
            pending: Vec::new(),
        };
        let (code, origins) = flow::run(
            &mut m,
            entry,
            State {
                x,
                stack: BTreeMap::new(),
            },
            locs,
        )?;
        Ok(Lifted {
            code,
            origins,
            reads_lse_flag: false,
        })
    }
}

/// The instructions raki prints misleadingly, as objdump prints them:
/// C.SW and C.SD (raki names the base register first and the stored one
/// in the parentheses: `sd a1,0(a5)` came out as `C.sd a5, 0(a1)`, the
/// store through the wrong pointer) and FENCE (raki's `fence.i` for every
/// MISC-MEM word), after the RISC-V unprivileged ISA manual (chapter 16,
/// "C" extension, CS format; 2.7 memory ordering: FENCE's pred, succ and
/// fm fields).
fn objdump_form(bytes: &[u8]) -> Option<String> {
    const ABI: [&str; 32] = [
        "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
        "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
        "t5", "t6",
    ];
    let half = u16::from_le_bytes([*bytes.first()?, *bytes.get(1)?]);
    if length(half) == 2 {
        let h = u32::from(half);
        let (quadrant, funct3) = (h & 3, h >> 13);
        if quadrant != 0 || funct3 < 6 {
            return None;
        }
        // CS format: rs1' bits 9:7, rs2' bits 4:2 (x8..x15).
        let rs1 = ABI[8 + ((h >> 7) & 7) as usize];
        let rs2 = ABI[8 + ((h >> 2) & 7) as usize];
        let (m, imm) = if funct3 == 7 {
            // C.SD: uimm[5:3] = bits 12:10, uimm[7:6] = bits 6:5.
            ("sd", ((h >> 10) & 7) << 3 | ((h >> 5) & 3) << 6)
        } else {
            // C.SW: uimm[5:3] = bits 12:10, uimm[2] = bit 6, uimm[6] = bit 5.
            (
                "sw",
                ((h >> 10) & 7) << 3 | ((h >> 6) & 1) << 2 | ((h >> 5) & 1) << 6,
            )
        };
        return Some(format!("{m} {rs2},{imm}({rs1})"));
    }
    let word = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
    if word & 0x7f != 0x0f || (word >> 12) & 7 != 0 {
        return None;
    }
    let set = |bits: u32| -> String {
        let s: String = [(8, 'i'), (4, 'o'), (2, 'r'), (1, 'w')]
            .iter()
            .filter(|(b, _)| bits & b != 0)
            .map(|(_, c)| *c)
            .collect();
        if s.is_empty() {
            "0".into()
        } else {
            s
        }
    };
    let (fm, pred, succ) = (word >> 28, (word >> 24) & 15, (word >> 20) & 15);
    Some(match (fm, pred, succ) {
        (8, 3, 3) => "fence.tso".into(),
        (0, 15, 15) => "fence".into(),
        _ => format!("fence {},{}", set(pred), set(succ)),
    })
}

/// The file address the function at `entry` returns in `a0`, when every
/// path returns the same one (`atomlab_plugin`'s `return &plugin;` at any
/// optimisation level: `auipc; addi; ret`, or with a frame at -O0).
pub fn returned_address(file: &PluginFile<'_>, entry: u64) -> Option<u64> {
    let mut x = [Abs::Unknown; 32];
    x[0] = Abs::Int(0);
    x[2] = Abs::Stack(0);
    let mut regs = Registers::default();
    let mut m = Machine {
        file,
        regs: &mut regs,
        root: entry,
        follow_heap: false,
        pending: Vec::new(),
    };
    let start = State {
        x,
        stack: BTreeMap::new(),
    };
    let exits = flow::exit_states(&mut m, entry, start).ok()?;
    let mut at = None;
    for e in exits {
        match (e.x[10], at) {
            (Abs::File(a), None) => at = Some(a),
            (Abs::File(a), Some(b)) if a == b => {}
            _ => return None,
        }
    }
    at
}

/// ABI names of x0–x31 (the psABI's), as objdump prints them.
const ABI: [&str; 32] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6",
];

/// An ALU operation (RV64I and M's `mul`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alu {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Sll,
    Srl,
    Sra,
    Slt,
    Sltu,
    Mul,
}

/// The second operand of an ALU operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    Reg(u8),
    Imm(i64),
}

/// One decoded instruction, compressed or not, as the lifter needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Inst {
    Lui {
        rd: u8,
        imm: i64,
    },
    Auipc {
        rd: u8,
        imm: i64,
    },
    Jal {
        rd: u8,
        off: i64,
    },
    Jalr {
        rd: u8,
        rs1: u8,
        imm: i64,
    },
    Branch {
        op: BinOp,
        rs1: u8,
        rs2: u8,
        off: i64,
    },
    Load {
        rd: u8,
        rs1: u8,
        imm: i64,
        width: u8,
        signed: bool,
    },
    Store {
        rs1: u8,
        rs2: u8,
        imm: i64,
        width: u8,
    },
    Alu {
        op: Alu,
        rd: u8,
        rs1: u8,
        src: Src,
        /// A `.w` operation: 32-bit, the result sign-extended.
        word: bool,
    },
    Lr {
        rd: u8,
        rs1: u8,
        width: u8,
        aq: bool,
        rl: bool,
    },
    Sc {
        rd: u8,
        rs1: u8,
        rs2: u8,
        width: u8,
        aq: bool,
        rl: bool,
    },
    Amo {
        op: RmwOp,
        rd: u8,
        rs1: u8,
        rs2: u8,
        width: u8,
        aq: bool,
        rl: bool,
    },
    Fence {
        pred: RvAccesses,
        succ: RvAccesses,
    },
    FenceTso,
    /// No memory effect: `nop`, PAUSE, `fence.i`.
    Nop,
    /// A system call (or a breakpoint).
    Ecall(&'static str),
    /// Decoded, but outside the set verify follows: its mnemonic.
    Other(String),
}

/// The length of the instruction whose first halfword is `low`.
fn length(low: u16) -> usize {
    if low & 0b11 == 0b11 {
        4
    } else {
        2
    }
}

/// The mnemonic raki gives a word or halfword, for refusals.
fn mnemonic32(word: u32) -> String {
    match word.decode(Isa::Rv64) {
        Ok(i) => i.opc.to_string().to_ascii_lowercase(),
        Err(_) => format!("the word {word:08x}"),
    }
}

fn accesses(bits: u32) -> RvAccesses {
    RvAccesses {
        r: bits & 0b10 != 0,
        w: bits & 0b01 != 0,
    }
}

/// Decodes the instruction at the start of `bytes`: it and its length.
fn decode(bytes: &[u8]) -> Option<(Inst, u64)> {
    let low = u16::from_le_bytes([*bytes.first()?, *bytes.get(1)?]);
    if length(low) == 2 {
        return Some((decode16(low), 2));
    }
    let word = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
    Some((decode32(word), 4))
}

fn decode32(word: u32) -> Inst {
    // FENCE.TSO and PAUSE first: riscv-decode rejects fm != 0, and PAUSE
    // (FENCE W,0) is a hint, not an ordering (Zihintpause).
    if word == 0x8330_000f {
        return Inst::FenceTso;
    }
    if word == 0x0100_000f {
        return Inst::Nop;
    }
    let Ok(inst) = riscv_decode::decode(word) else {
        return Inst::Other(mnemonic32(word));
    };
    let r = |n: u32| n as u8;
    let simm12 = |imm: u32| ((imm as i32) << 20 >> 20) as i64;
    let aq = word & (1 << 26) != 0;
    let rl = word & (1 << 25) != 0;
    let alu_i = |op, t: riscv_decode::types::IType, word_op| Inst::Alu {
        op,
        rd: r(t.rd()),
        rs1: r(t.rs1()),
        src: Src::Imm(simm12(t.imm())),
        word: word_op,
    };
    let shift = |op, t: riscv_decode::types::ShiftType, word_op: bool| Inst::Alu {
        op,
        rd: r(t.rd()),
        rs1: r(t.rs1()),
        src: Src::Imm(i64::from(t.shamt() & if word_op { 31 } else { 63 })),
        word: word_op,
    };
    let alu_r = |op, t: riscv_decode::types::RType, word_op| Inst::Alu {
        op,
        rd: r(t.rd()),
        rs1: r(t.rs1()),
        src: Src::Reg(r(t.rs2())),
        word: word_op,
    };
    let load = |t: riscv_decode::types::IType, width, signed| Inst::Load {
        rd: r(t.rd()),
        rs1: r(t.rs1()),
        imm: simm12(t.imm()),
        width,
        signed,
    };
    let store = |t: riscv_decode::types::SType, width| Inst::Store {
        rs1: r(t.rs1()),
        rs2: r(t.rs2()),
        imm: simm12(t.imm()),
        width,
    };
    let branch = |op, t: riscv_decode::types::BType| Inst::Branch {
        op,
        rs1: r(t.rs1()),
        rs2: r(t.rs2()),
        off: ((t.imm() as i32) << 19 >> 19) as i64,
    };
    let amo = |op, t: riscv_decode::types::RType, width| Inst::Amo {
        op,
        rd: r(t.rd()),
        rs1: r(t.rs1()),
        rs2: r(t.rs2()),
        width,
        aq,
        rl,
    };
    match inst {
        I::Lui(u) => Inst::Lui {
            rd: r(u.rd()),
            imm: u.imm() as i32 as i64,
        },
        I::Auipc(u) => Inst::Auipc {
            rd: r(u.rd()),
            imm: u.imm() as i32 as i64,
        },
        I::Jal(j) => Inst::Jal {
            rd: r(j.rd()),
            off: ((j.imm() as i32) << 11 >> 11) as i64,
        },
        I::Jalr(t) => Inst::Jalr {
            rd: r(t.rd()),
            rs1: r(t.rs1()),
            imm: simm12(t.imm()),
        },
        I::Beq(t) => branch(BinOp::Eq, t),
        I::Bne(t) => branch(BinOp::Ne, t),
        I::Blt(t) => branch(BinOp::Lt, t),
        I::Bge(t) => branch(BinOp::Ge, t),
        I::Bltu(t) => branch(BinOp::Ult, t),
        I::Bgeu(t) => branch(BinOp::Uge, t),
        I::Lb(t) => load(t, 1, true),
        I::Lh(t) => load(t, 2, true),
        I::Lw(t) => load(t, 4, true),
        I::Ld(t) => load(t, 8, true),
        I::Lbu(t) => load(t, 1, false),
        I::Lhu(t) => load(t, 2, false),
        I::Lwu(t) => load(t, 4, false),
        I::Sb(t) => store(t, 1),
        I::Sh(t) => store(t, 2),
        I::Sw(t) => store(t, 4),
        I::Sd(t) => store(t, 8),
        I::Addi(t) => alu_i(Alu::Add, t, false),
        I::Slti(t) => alu_i(Alu::Slt, t, false),
        I::Sltiu(t) => alu_i(Alu::Sltu, t, false),
        I::Xori(t) => alu_i(Alu::Xor, t, false),
        I::Ori(t) => alu_i(Alu::Or, t, false),
        I::Andi(t) => alu_i(Alu::And, t, false),
        I::Addiw(t) => alu_i(Alu::Add, t, true),
        I::Slli(t) => shift(Alu::Sll, t, false),
        I::Srli(t) => shift(Alu::Srl, t, false),
        I::Srai(t) => shift(Alu::Sra, t, false),
        I::Slliw(t) => shift(Alu::Sll, t, true),
        I::Srliw(t) => shift(Alu::Srl, t, true),
        I::Sraiw(t) => shift(Alu::Sra, t, true),
        I::Add(t) => alu_r(Alu::Add, t, false),
        I::Sub(t) => alu_r(Alu::Sub, t, false),
        I::Sll(t) => alu_r(Alu::Sll, t, false),
        I::Slt(t) => alu_r(Alu::Slt, t, false),
        I::Sltu(t) => alu_r(Alu::Sltu, t, false),
        I::Xor(t) => alu_r(Alu::Xor, t, false),
        I::Srl(t) => alu_r(Alu::Srl, t, false),
        I::Or(t) => alu_r(Alu::Or, t, false),
        I::And(t) => alu_r(Alu::And, t, false),
        I::Mul(t) => alu_r(Alu::Mul, t, false),
        I::Addw(t) => alu_r(Alu::Add, t, true),
        I::Subw(t) => alu_r(Alu::Sub, t, true),
        I::Sllw(t) => alu_r(Alu::Sll, t, true),
        I::Srlw(t) => alu_r(Alu::Srl, t, true),
        I::Mulw(t) => alu_r(Alu::Mul, t, true),
        I::LrW(t) | I::LrD(t) => Inst::Lr {
            rd: r(t.rd()),
            rs1: r(t.rs1()),
            width: if matches!(inst, I::LrW(_)) { 4 } else { 8 },
            aq,
            rl,
        },
        I::ScW(t) | I::ScD(t) => Inst::Sc {
            rd: r(t.rd()),
            rs1: r(t.rs1()),
            rs2: r(t.rs2()),
            width: if matches!(inst, I::ScW(_)) { 4 } else { 8 },
            aq,
            rl,
        },
        I::AmoswapW(t) => amo(RmwOp::Xchg, t, 4),
        I::AmoaddW(t) => amo(RmwOp::Add, t, 4),
        I::AmoxorW(t) => amo(RmwOp::Xor, t, 4),
        I::AmoandW(t) => amo(RmwOp::And, t, 4),
        I::AmoorW(t) => amo(RmwOp::Or, t, 4),
        I::AmominW(t) => amo(RmwOp::Min, t, 4),
        I::AmomaxW(t) => amo(RmwOp::Max, t, 4),
        I::AmominuW(t) => amo(RmwOp::Umin, t, 4),
        I::AmomaxuW(t) => amo(RmwOp::Umax, t, 4),
        I::AmoswapD(t) => amo(RmwOp::Xchg, t, 8),
        I::AmoaddD(t) => amo(RmwOp::Add, t, 8),
        I::AmoxorD(t) => amo(RmwOp::Xor, t, 8),
        I::AmoandD(t) => amo(RmwOp::And, t, 8),
        I::AmoorD(t) => amo(RmwOp::Or, t, 8),
        I::AmominD(t) => amo(RmwOp::Min, t, 8),
        I::AmomaxD(t) => amo(RmwOp::Max, t, 8),
        I::AmominuD(t) => amo(RmwOp::Umin, t, 8),
        I::AmomaxuD(t) => amo(RmwOp::Umax, t, 8),
        I::Fence(f) => Inst::Fence {
            pred: accesses(f.pred()),
            succ: accesses(f.succ()),
        },
        // FENCE.I orders instruction fetch only (the parser drops it too).
        I::FenceI => Inst::Nop,
        I::Ecall => Inst::Ecall("ecall"),
        I::Ebreak => Inst::Ecall("ebreak"),
        _ => Inst::Other(mnemonic32(word)),
    }
}

/// A compressed instruction as its 32-bit expansion (RISC-V manual,
/// chapter "C", "RVC Instruction Set Listings").
fn decode16(half: u16) -> Inst {
    let Ok(i) = half.decode(Isa::Rv64) else {
        return Inst::Other(format!("the halfword {half:04x}"));
    };
    let OpcodeKind::C(op) = &i.opc else {
        return Inst::Other(i.opc.to_string().to_ascii_lowercase());
    };
    let rd = i.rd.unwrap_or(0) as u8;
    let rs1 = i.rs1.unwrap_or(0) as u8;
    let rs2 = i.rs2.unwrap_or(0) as u8;
    let imm = i64::from(i.imm.unwrap_or(0));
    let alu = |op, rd, rs1, src, word| Inst::Alu {
        op,
        rd,
        rs1,
        src,
        word,
    };
    match op {
        COpcode::ADDI4SPN => alu(Alu::Add, rd, 2, Src::Imm(imm), false),
        COpcode::LW => Inst::Load {
            rd,
            rs1,
            imm,
            width: 4,
            signed: true,
        },
        COpcode::LD => Inst::Load {
            rd,
            rs1,
            imm,
            width: 8,
            signed: true,
        },
        COpcode::SW => Inst::Store {
            rs1,
            rs2,
            imm,
            width: 4,
        },
        COpcode::SD => Inst::Store {
            rs1,
            rs2,
            imm,
            width: 8,
        },
        COpcode::NOP => Inst::Nop,
        COpcode::ADDI => alu(Alu::Add, rd, rd, Src::Imm(imm), false),
        COpcode::ADDIW => alu(Alu::Add, rd, rd, Src::Imm(imm), true),
        COpcode::LI => alu(Alu::Add, rd, 0, Src::Imm(imm), false),
        COpcode::ADDI16SP => alu(Alu::Add, 2, 2, Src::Imm(imm), false),
        COpcode::LUI => Inst::Lui { rd, imm },
        COpcode::SRLI => alu(Alu::Srl, rd, rd, Src::Imm(imm & 63), false),
        COpcode::SRAI => alu(Alu::Sra, rd, rd, Src::Imm(imm & 63), false),
        COpcode::ANDI => alu(Alu::And, rd, rd, Src::Imm(imm), false),
        COpcode::SUB => alu(Alu::Sub, rd, rd, Src::Reg(rs2), false),
        COpcode::XOR => alu(Alu::Xor, rd, rd, Src::Reg(rs2), false),
        COpcode::OR => alu(Alu::Or, rd, rd, Src::Reg(rs2), false),
        COpcode::AND => alu(Alu::And, rd, rd, Src::Reg(rs2), false),
        COpcode::SUBW => alu(Alu::Sub, rd, rd, Src::Reg(rs2), true),
        COpcode::ADDW => alu(Alu::Add, rd, rd, Src::Reg(rs2), true),
        COpcode::J => Inst::Jal { rd: 0, off: imm },
        COpcode::BEQZ => Inst::Branch {
            op: BinOp::Eq,
            rs1,
            rs2: 0,
            off: imm,
        },
        COpcode::BNEZ => Inst::Branch {
            op: BinOp::Ne,
            rs1,
            rs2: 0,
            off: imm,
        },
        COpcode::SLLI => alu(Alu::Sll, rd, rd, Src::Imm(imm & 63), false),
        COpcode::LWSP => Inst::Load {
            rd,
            rs1: 2,
            imm,
            width: 4,
            signed: true,
        },
        COpcode::LDSP => Inst::Load {
            rd,
            rs1: 2,
            imm,
            width: 8,
            signed: true,
        },
        COpcode::SWSP => Inst::Store {
            rs1: 2,
            rs2,
            imm,
            width: 4,
        },
        COpcode::SDSP => Inst::Store {
            rs1: 2,
            rs2,
            imm,
            width: 8,
        },
        COpcode::JR => Inst::Jalr { rd: 0, rs1, imm: 0 },
        COpcode::JALR => Inst::Jalr { rd: 1, rs1, imm: 0 },
        COpcode::MV => alu(Alu::Add, rd, 0, Src::Reg(rs2), false),
        COpcode::ADD => alu(Alu::Add, rd, rd, Src::Reg(rs2), false),
        COpcode::EBREAK => Inst::Ecall("c.ebreak"),
        // C.JAL is RV32 only; raki decodes that encoding as C.ADDIW here.
        COpcode::JAL => Inst::Other("c.jal".into()),
    }
}

/// The ALU operation on known values (the interpreter's arithmetic:
/// wrapping, logical `>>`).
fn alu_int(op: Alu, x: i64, y: i64, word: bool) -> i64 {
    let bits = if word { 31 } else { 63 };
    let r = match op {
        Alu::Add => x.wrapping_add(y),
        Alu::Sub => x.wrapping_sub(y),
        Alu::And => x & y,
        Alu::Or => x | y,
        Alu::Xor => x ^ y,
        Alu::Mul => x.wrapping_mul(y),
        Alu::Sll => x.wrapping_shl((y & bits) as u32),
        Alu::Srl if word => ((x & 0xffff_ffff) as u64 >> (y & 31)) as i64,
        Alu::Srl => ((x as u64) >> (y & 63)) as i64,
        Alu::Sra if word => sext_int(x, 32) >> (y & 31),
        Alu::Sra => x >> (y & 63),
        Alu::Slt => i64::from(x < y),
        Alu::Sltu => i64::from((x as u64) < (y as u64)),
    };
    if word {
        sext_int(r, 32)
    } else {
        r
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    x: [Abs; 32],
    stack: BTreeMap<i64, Abs>,
}

/// A resolved memory operand.
enum Mem {
    Loc(Expr),
    Stack(i64),
}

struct Machine<'f, 'a, 'r> {
    file: &'f PluginFile<'a>,
    regs: &'r mut Registers,
    root: u64,
    /// Calls to the allocator, `free` and `__tls_get_addr` are followed
    /// ([`super::heap`]).
    follow_heap: bool,
    /// Heap checks of the instruction being lowered, to go before it.
    pending: Vec<Instr>,
}

impl Machine<'_, '_, '_> {
    fn refuse(&self, pc: u64, what: String) -> Refusal {
        flow::refusal(self.file, pc, what)
    }

    /// Reading register `n` (`zero` is 0).
    fn read(&mut self, n: u8) -> Expr {
        if n == 0 {
            Expr::int(0)
        } else {
            Expr::Reg(self.regs.get(ABI[n as usize]))
        }
    }

    /// Writing `e` (known as `a`) to register `n` (writes to `zero` are
    /// dropped).
    fn write(&mut self, out: &mut State, n: u8, e: Expr, a: Abs, low: &mut Vec<Low>) {
        if n == 0 {
            return;
        }
        out.x[n as usize] = a;
        let dst = self.regs.get(ABI[n as usize]);
        low.push(Low::I(Instr::Assign { dst, expr: e }));
    }

    fn stack_reg(&mut self, slot: i64) -> atomlab_litmus::Reg {
        self.regs.get(&format!("sp{slot:+}"))
    }

    /// The memory operand `imm(rs1)` accessed with `width` bytes.
    fn mem(
        &mut self,
        st: &State,
        rs1: u8,
        imm: i64,
        width: u8,
        pc: u64,
        locs: Option<&mut Locations>,
    ) -> Result<Mem, Refusal> {
        if let Abs::ObjIdx(o, span) = st.x[rs1 as usize] {
            // The slot the computed address picks ([`index`]).
            let reg = self.read(rs1);
            return match locs {
                Some(locs) => index::select_computed(locs, reg, (o, span, imm), width)
                    .map(Mem::Loc)
                    .map_err(|e| self.refuse(pc, e)),
                None => Ok(Mem::Loc(Expr::int(0))),
            };
        }
        match st.x[rs1 as usize].plus(imm) {
            Abs::Obj(o, field) => {
                let l = match locs {
                    Some(locs) => locs.field(o, field, width).map_err(|e| self.refuse(pc, e))?,
                    None => 0,
                };
                // The base register joins the address with its value
                // times zero, so an address dependency through it stays.
                let dep = Expr::bin(BinOp::And, self.read(rs1), Expr::int(0));
                Ok(Mem::Loc(Expr::bin(
                    BinOp::Add,
                    Expr::Const(Value::Loc(l)),
                    dep,
                )))
            }
            Abs::Heap(site, field) => {
                let Some(locs) = locs else {
                    return Ok(Mem::Loc(Expr::int(0)));
                };
                let (l, checks) = heap::field_here(self.regs, locs, site, field, width)
                    .map_err(|e| self.refuse(pc, e))?;
                self.pending.extend(checks);
                let dep = Expr::bin(BinOp::And, self.read(rs1), Expr::int(0));
                Ok(Mem::Loc(Expr::bin(BinOp::Add, Expr::Const(Value::Loc(l)), dep)))
            }
            a @ (Abs::Unknown | Abs::Loaded(_)) if self.follow_heap && rs1 != 0 => {
                // The field past the pointer as loaded, for the layout.
                let field = match a {
                    Abs::Loaded(k) => k.wrapping_add(imm),
                    _ => imm,
                };
                let Some(locs) = locs else {
                    return Ok(Mem::Loc(Expr::int(0)));
                };
                if locs.heap.complete && locs.heap.regions.is_empty() {
                    return Err(self.refuse(pc, format!("accesses memory at an address verify cannot resolve to a field of the object (base register {})", ABI[rs1 as usize])));
                }
                let ptr = self.read(rs1);
                let (addr, checks) = heap::select(self.regs, locs, ptr, imm, field, width)
                    .map_err(|e| self.refuse(pc, e))?;
                self.pending.extend(checks);
                Ok(Mem::Loc(addr))
            }
            Abs::Stack(slot) => Ok(Mem::Stack(slot)),
            Abs::File(a) => Err(self.refuse(
                pc,
                format!(
                    "accesses data of the file at {a:#x} ({}): verify models only the object the function is given",
                    self.file.describe(a)
                ),
            )),
            _ => Err(self.refuse(
                pc,
                format!(
                    "accesses memory at an address verify cannot resolve to a field of the object (base register {})",
                    ABI[rs1 as usize]
                ),
            )),
        }
    }

    /// The memory operand of an LR, SC or AMO: a field of the object.
    fn atomic_loc(
        &mut self,
        st: &State,
        rs1: u8,
        width: u8,
        pc: u64,
        locs: Option<&mut Locations>,
        what: &str,
    ) -> Result<Expr, Refusal> {
        match self.mem(st, rs1, 0, width, pc, locs)? {
            Mem::Loc(a) => Ok(a),
            Mem::Stack(_) => Err(self.refuse(
                pc,
                format!("{what} on the stack (an atomic outside the object is not followed)"),
            )),
        }
    }

    #[allow(clippy::too_many_lines)]
    fn lower(
        &mut self,
        ctx: &Ctx,
        pc: u64,
        st: &State,
        mut locs: Option<&mut Locations>,
    ) -> Result<Step<State>, Refusal> {
        let bytes = self
            .file
            .code_at(pc)
            .ok_or_else(|| self.refuse(pc, "runs past the end of the code".into()))?;
        let (inst, len) =
            decode(bytes).ok_or_else(|| self.refuse(pc, "runs past the end of the code".into()))?;
        let mut out = st.clone();
        let mut low = Vec::new();
        let mut next = Some(Target::Node(ctx.clone(), pc.wrapping_add(len)));
        let width_annot = |width: u8| Annot {
            width,
            ..Annot::default()
        };
        if let Some((t, tail)) = call_target(&inst, st, pc) {
            if self.heap_call(t, st, pc, &mut locs, &mut low)? {
                clobber(&mut out);
                out.x[10] = self.heap_result(t, st, pc);
                next = Some(if tail {
                    flow::ret(ctx)
                } else {
                    Target::Node(ctx.clone(), pc.wrapping_add(len))
                });
                return Ok(Step { low, out, next });
            }
        }
        match inst {
            Inst::Nop => {}
            Inst::Lui { rd, imm } => {
                self.write(&mut out, rd, Expr::int(imm), Abs::Int(imm), &mut low)
            }
            Inst::Auipc { rd, imm } => {
                let a = pc.wrapping_add(imm as u64);
                self.write(&mut out, rd, Expr::int(a as i64), Abs::File(a), &mut low);
            }
            Inst::Alu {
                op,
                rd,
                rs1,
                src,
                word,
            } => {
                let a = self.read(rs1);
                let aa = st.x[rs1 as usize];
                let (b, ba) = match src {
                    Src::Reg(n) => (self.read(n), st.x[n as usize]),
                    Src::Imm(v) => (Expr::int(v), Abs::Int(v)),
                };
                let abs = match (op, aa, ba, word) {
                    (_, Abs::Int(x), Abs::Int(y), _) => Abs::Int(alu_int(op, x, y, word)),
                    // Pointer arithmetic: the object, stack or file
                    // address plus a constant.
                    (Alu::Add, p, Abs::Int(c), false) | (Alu::Add, Abs::Int(c), p, false) => {
                        p.plus(c)
                    }
                    (Alu::Sub, p, Abs::Int(c), false) => p.plus(c.wrapping_neg()),
                    // A ring's slot: the index masked, scaled, added to
                    // the object's address (`slot[t & (N - 1)]`).
                    (Alu::And, p, Abs::Int(m), _) | (Alu::And, Abs::Int(m), p, _) => p.masked(m),
                    (Alu::Sll, p, Abs::Int(s), false) => p.shl(s),
                    (Alu::Add, p, q, false) => p.add_index(q),
                    _ => Abs::Unknown,
                };
                let e = match op {
                    Alu::Add => Expr::bin(BinOp::Add, a, b),
                    Alu::Sub => Expr::bin(BinOp::Sub, a, b),
                    Alu::And => Expr::bin(BinOp::And, a, b),
                    Alu::Or => Expr::bin(BinOp::Or, a, b),
                    Alu::Xor => Expr::bin(BinOp::Xor, a, b),
                    Alu::Mul => Expr::bin(BinOp::Mul, a, b),
                    Alu::Slt => Expr::bin(BinOp::Lt, a, b),
                    Alu::Sltu => Expr::bin(BinOp::Ult, a, b),
                    Alu::Sll => {
                        let m = if word { 31 } else { 63 };
                        Expr::bin(BinOp::Shl, a, Expr::bin(BinOp::And, b, Expr::int(m)))
                    }
                    Alu::Srl => {
                        let (a, m) = if word { (narrow(a, 4), 31) } else { (a, 63) };
                        Expr::bin(BinOp::Shr, a, Expr::bin(BinOp::And, b, Expr::int(m)))
                    }
                    Alu::Sra => {
                        // Arithmetic shift by a constant k: the logical
                        // shift with the sign bit's copies added back,
                        // ((x >> k) ^ s) - s with s = 1 << (63 - k).
                        let Src::Imm(k) = src else {
                            return Err(self.refuse(
                                pc,
                                "an arithmetic shift by a register amount (not followed)".into(),
                            ));
                        };
                        let a = if word { sext(a, 4) } else { a };
                        let k = k & if word { 31 } else { 63 };
                        if k == 0 {
                            a
                        } else {
                            let s = 1i64 << (63 - k);
                            Expr::bin(
                                BinOp::Sub,
                                Expr::bin(
                                    BinOp::Xor,
                                    Expr::bin(BinOp::Shr, a, Expr::int(k)),
                                    Expr::int(s),
                                ),
                                Expr::int(s),
                            )
                        }
                    }
                };
                // `.w` results are sign-extended from bit 31 (RV64I).
                let e = if word { sext(e, 4) } else { e };
                self.write(&mut out, rd, e, abs, &mut low);
            }
            Inst::Load {
                rd,
                rs1,
                imm,
                width,
                signed,
            } => match self.mem(st, rs1, imm, width, pc, locs)? {
                Mem::Loc(addr) => {
                    let dst = (rd != 0).then(|| self.regs.get(ABI[rd as usize]));
                    low.push(Low::I(Instr::Load {
                        dst,
                        addr,
                        annot: width_annot(width),
                    }));
                    if let Some(d) = dst {
                        if signed && width < 8 {
                            low.push(Low::I(Instr::Assign {
                                dst: d,
                                expr: sext(Expr::Reg(d), width),
                            }));
                        }
                        // A doubleword may be a pointer to follow.
                        out.x[rd as usize] = if width == 8 {
                            Abs::Loaded(0)
                        } else {
                            Abs::Unknown
                        };
                    }
                }
                Mem::Stack(slot) => {
                    let s = self.stack_reg(slot);
                    let a = match st.stack.get(&slot).copied().unwrap_or(Abs::Unknown) {
                        Abs::Int(v) if width < 8 => Abs::Int(if signed {
                            sext_int(v, 8 * u32::from(width))
                        } else {
                            narrow_int(v, width)
                        }),
                        a if width == 8 => a,
                        _ => Abs::Unknown,
                    };
                    let e = if width == 8 {
                        Expr::Reg(s)
                    } else if signed {
                        sext(Expr::Reg(s), width)
                    } else {
                        narrow(Expr::Reg(s), width)
                    };
                    self.write(&mut out, rd, e, a, &mut low);
                }
            },
            Inst::Store {
                rs1,
                rs2,
                imm,
                width,
            } => {
                let value = narrow(self.read(rs2), width);
                let va = st.x[rs2 as usize];
                match self.mem(st, rs1, imm, width, pc, locs)? {
                    Mem::Loc(addr) => {
                        if va.is_address() {
                            return Err(self.refuse(pc, "stores a pointer to shared memory (linked structures are not modelled)".into()));
                        }
                        low.push(Low::I(Instr::Store {
                            addr,
                            value,
                            annot: width_annot(width),
                        }));
                    }
                    Mem::Stack(slot) => {
                        let s = self.stack_reg(slot);
                        low.push(Low::I(Instr::Assign {
                            dst: s,
                            expr: value,
                        }));
                        let a = match va {
                            Abs::Int(v) => Abs::Int(narrow_int(v, width)),
                            a if width == 8 => a,
                            _ => Abs::Unknown,
                        };
                        out.stack.insert(slot, a);
                    }
                }
            }
            Inst::Lr {
                rd,
                rs1,
                width,
                aq,
                rl,
            } => {
                let addr = self.atomic_loc(st, rs1, width, pc, locs, "lr")?;
                let dst = (rd != 0).then(|| self.regs.get(ABI[rd as usize]));
                low.push(Low::I(Instr::Load {
                    dst,
                    addr,
                    annot: Annot {
                        acquire: aq,
                        release: rl,
                        exclusive: true,
                        width,
                        ..Annot::default()
                    },
                }));
                if let Some(d) = dst {
                    if width < 8 {
                        low.push(Low::I(Instr::Assign {
                            dst: d,
                            expr: sext(Expr::Reg(d), width),
                        }));
                    }
                    out.x[rd as usize] = Abs::Unknown;
                }
            }
            Inst::Sc {
                rd,
                rs1,
                rs2,
                width,
                aq,
                rl,
            } => {
                let addr = self.atomic_loc(st, rs1, width, pc, locs.as_deref_mut(), "sc")?;
                if st.x[rs2 as usize].is_address() {
                    return Err(self.refuse(
                        pc,
                        "stores a pointer to shared memory (linked structures are not modelled)"
                            .into(),
                    ));
                }
                let value = narrow(self.read(rs2), width);
                let status = (rd != 0).then(|| self.regs.get(ABI[rd as usize]));
                if rd != 0 {
                    out.x[rd as usize] = Abs::Unknown;
                }
                low.push(Low::I(Instr::StoreExclusive {
                    status,
                    addr,
                    value,
                    annot: Annot {
                        acquire: aq,
                        release: rl,
                        exclusive: true,
                        width,
                        ..Annot::default()
                    },
                }));
            }
            Inst::Amo {
                op,
                rd,
                rs1,
                rs2,
                width,
                aq,
                rl,
            } => {
                let addr = self.atomic_loc(st, rs1, width, pc, locs, "an AMO")?;
                if op == RmwOp::Xchg && st.x[rs2 as usize].is_address() {
                    return Err(self.refuse(
                        pc,
                        "stores a pointer to shared memory (linked structures are not modelled)"
                            .into(),
                    ));
                }
                let operand = narrow(self.read(rs2), width);
                let dst = (rd != 0).then(|| self.regs.get(ABI[rd as usize]));
                // As the parser: `.aqrl` makes both events acquire and
                // release (the manual's RCsc AMO); otherwise `.aq` is on
                // the read and `.rl` on the write (herd7's RISCVSem).
                let both = aq && rl;
                low.push(Low::I(Instr::Rmw {
                    dst,
                    addr,
                    op,
                    operand,
                    read: Annot {
                        acquire: aq,
                        release: both,
                        width,
                        ..Annot::default()
                    },
                    write: Annot {
                        acquire: both,
                        release: rl,
                        width,
                        ..Annot::default()
                    },
                    single: false,
                }));
                if let Some(d) = dst {
                    if width < 8 {
                        low.push(Low::I(Instr::Assign {
                            dst: d,
                            expr: sext(Expr::Reg(d), width),
                        }));
                    }
                    out.x[rd as usize] = Abs::Unknown;
                }
            }
            // The r and w bits are what the model orders; i and o (device
            // input and output) order no access of a litmus test, and the
            // parser drops them too (riscv.rs `fence_set`).
            Inst::Fence { pred, succ } => {
                low.push(Low::I(Instr::Fence(Fence::RiscV { pred, succ })))
            }
            Inst::FenceTso => low.push(Low::I(Instr::Fence(Fence::Tso))),
            Inst::Branch { op, rs1, rs2, off } => {
                let cond = Expr::bin(op, self.read(rs1), self.read(rs2));
                let t = pc.wrapping_add(off as u64);
                low.push(Low::Jump(Some(cond), Target::Node(ctx.clone(), t)));
            }
            Inst::Jal { rd, off } => {
                let t = flow::resolve(self.file, pc.wrapping_add(off as u64));
                if self.file.import_at(t).is_some() {
                    clobber(&mut out);
                }
                next = Some(match rd {
                    0 => flow::call(self.file, self.root, ctx, pc, pc.wrapping_add(len), t, true)?,
                    1 => {
                        out.x[1] = Abs::Unknown;
                        flow::call(
                            self.file,
                            self.root,
                            ctx,
                            pc,
                            pc.wrapping_add(len),
                            t,
                            false,
                        )?
                    }
                    _ => {
                        return Err(self.refuse(
                            pc,
                            format!(
                                "jal {}: a call that links through {} (not followed)",
                                ABI[rd as usize], ABI[rd as usize]
                            ),
                        ))
                    }
                });
            }
            Inst::Jalr { rd, rs1, imm } => {
                if rd == 0 && rs1 == 1 && imm == 0 {
                    next = Some(flow::ret(ctx));
                } else {
                    let Abs::File(t) = st.x[rs1 as usize].plus(imm) else {
                        return Err(self.refuse(
                            pc,
                            format!(
                                "jalr {}, {imm}({}): an indirect jump or call, which verify cannot follow",
                                ABI[rd as usize], ABI[rs1 as usize]
                            ),
                        ));
                    };
                    let t = flow::resolve(self.file, t);
                    if self.file.import_at(t).is_some() {
                        clobber(&mut out);
                    }
                    next = Some(match rd {
                        0 => flow::call(
                            self.file,
                            self.root,
                            ctx,
                            pc,
                            pc.wrapping_add(len),
                            t,
                            true,
                        )?,
                        1 => {
                            out.x[1] = Abs::Unknown;
                            flow::call(
                                self.file,
                                self.root,
                                ctx,
                                pc,
                                pc.wrapping_add(len),
                                t,
                                false,
                            )?
                        }
                        _ => {
                            return Err(self.refuse(
                                pc,
                                format!(
                                    "jalr {}: a call that links through it (not followed)",
                                    ABI[rd as usize]
                                ),
                            ))
                        }
                    });
                }
            }
            Inst::Ecall(name) => {
                return Err(self.refuse(
                    pc,
                    format!("{name}: a system call, which verify cannot follow"),
                ))
            }
            Inst::Other(name) => {
                return Err(self.refuse(
                    pc,
                    format!("{name}: an instruction outside the set verify follows"),
                ))
            }
        }
        Ok(Step { low, out, next })
    }
}

/// After a call to a function of another library that is followed
/// (sched_yield): the registers the RISC-V psABI lets a callee change
/// (ra, t0–t6, a0–a7) are unknown.
/// Where a `jal`/`jalr` at `pc` that calls (`ra`) or tail-calls
/// (`zero`) a known address goes, and whether it is a tail call.
fn call_target(inst: &Inst, st: &State, pc: u64) -> Option<(u64, bool)> {
    let (rd, t) = match *inst {
        Inst::Jal { rd, off } => (rd, pc.wrapping_add(off as u64)),
        Inst::Jalr { rd, rs1, imm } => match st.x[rs1 as usize].plus(imm) {
            Abs::File(t) => (rd, t),
            _ => return None,
        },
        _ => return None,
    };
    (rd <= 1).then_some((t, rd == 0))
}

impl Machine<'_, '_, '_> {
    /// The import at `t`, if it is one that [`super::heap`] follows
    /// (`malloc`, `calloc`, `aligned_alloc`, `free`, `__tls_get_addr`):
    /// lowers its effect and says so.
    fn heap_call(
        &mut self,
        t: u64,
        st: &State,
        pc: u64,
        locs: &mut Option<&mut Locations>,
        low: &mut Vec<Low>,
    ) -> Result<bool, Refusal> {
        if !self.follow_heap {
            return Ok(false);
        }
        let Some(name) = self.file.import_at(flow::resolve(self.file, t)) else {
            return Ok(false);
        };
        let name = name.to_string();
        let tls = name == "__tls_get_addr";
        if !(heap::ALLOCATORS.contains(&name.as_str()) || name == "free" || tls) {
            return Ok(false);
        }
        if tls && self.tls_offset(st).is_none() {
            return Err(self.refuse(pc, "calls __tls_get_addr with an argument that is not a TLS slot of the file (not followed)".into()));
        }
        let Some(locs) = locs else {
            return Ok(true);
        };
        let locs: &mut Locations = locs;
        let a0 = self.regs.get(ABI[10]);
        let code = if tls {
            let off = self.tls_offset(st).unwrap_or(0) as i64;
            let base = locs.tls_region(self.file).base;
            vec![Instr::Assign {
                dst: a0,
                expr: Expr::int(base + off),
            }]
        } else if name == "free" {
            let ptr = self.read(10);
            heap::free(self.regs, locs, ptr)
        } else {
            let r = locs.region(pc, &name);
            heap::allocate(self.regs, &r, ABI[10])
        };
        low.extend(code.into_iter().map(Low::I));
        Ok(true)
    }

    /// The offset of the TLS variable whose `tls_index` `a0` points to.
    fn tls_offset(&self, st: &State) -> Option<u64> {
        match st.x[10] {
            Abs::File(a) => self.file.tls_descriptor(a),
            _ => None,
        }
    }

    /// What the analysis knows of `a0` after a call [`Self::heap_call`]
    /// followed.
    fn heap_result(&self, t: u64, st: &State, pc: u64) -> Abs {
        match self.file.import_at(flow::resolve(self.file, t)) {
            Some("__tls_get_addr") => Abs::Heap(heap::TLS, self.tls_offset(st).unwrap_or(0) as i64),
            Some(n) if heap::ALLOCATORS.contains(&n) => Abs::Heap(pc, 0),
            _ => Abs::Unknown,
        }
    }
}

fn clobber(out: &mut State) {
    for n in [1, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16, 17, 28, 29, 30, 31] {
        out.x[n] = Abs::Unknown;
    }
}

impl flow::Machine for Machine<'_, '_, '_> {
    type State = State;

    fn join(a: &State, b: &State) -> State {
        let mut x = a.x;
        for (p, q) in x.iter_mut().zip(b.x.iter()) {
            *p = p.join(*q);
        }
        State {
            x,
            stack: flow::join_stack(&a.stack, &b.stack),
        }
    }

    fn step(
        &mut self,
        ctx: &Ctx,
        pc: u64,
        st: &State,
        locs: Option<&mut Locations>,
    ) -> Result<Step<State>, Refusal> {
        self.pending.clear();
        let mut step = self.lower(ctx, pc, st, locs)?;
        // The heap checks read the pointer before the instruction writes.
        let mut low: Vec<Low> = self.pending.drain(..).map(Low::I).collect();
        low.append(&mut step.low);
        step.low = low;
        Ok(step)
    }

    fn file(&self) -> &PluginFile<'_> {
        self.file
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(bytes: &[u8]) -> (Inst, u64) {
        decode(bytes).expect("decodes")
    }

    #[test]
    fn stores_and_fences_print_as_objdump_prints_them() {
        let f = |w: u32, n: usize| objdump_form(&w.to_le_bytes()[..n]);
        assert_eq!(f(0xe38c, 2).as_deref(), Some("sd a1,0(a5)"));
        assert_eq!(f(0xe19c, 2).as_deref(), Some("sd a5,0(a1)"));
        assert_eq!(f(0xc3cc, 2).as_deref(), Some("sw a1,4(a5)"));
        assert_eq!(f(0xed10, 2).as_deref(), Some("sd a2,24(a0)"));
        assert_eq!(f(0xc334, 2).as_deref(), Some("sw a3,64(a4)"));
        assert_eq!(f(0x0ff0_000f, 4).as_deref(), Some("fence"));
        assert_eq!(f(0x0f50_000f, 4).as_deref(), Some("fence iorw,ow"));
        assert_eq!(f(0x0230_000f, 4).as_deref(), Some("fence r,rw"));
        assert_eq!(f(0x8330_000f, 4).as_deref(), Some("fence.tso"));
        // fence.i and everything else: raki's words.
        assert_eq!(f(0x0000_100f, 4), None);
        assert_eq!(f(0x6518, 2), None);
    }

    #[test]
    fn amos_keep_their_aq_rl_bits() {
        // amoswap.w.aq a5,a5,(a0) (gcc's acquire exchange).
        assert_eq!(
            one(&0x0cf5_27afu32.to_le_bytes()),
            (
                Inst::Amo {
                    op: RmwOp::Xchg,
                    rd: 15,
                    rs1: 10,
                    rs2: 15,
                    width: 4,
                    aq: true,
                    rl: false
                },
                4
            )
        );
        // amoswap.w zero,zero,(a0): a relaxed store, no result.
        assert!(matches!(
            one(&0x0805_202fu32.to_le_bytes()).0,
            Inst::Amo {
                rd: 0,
                rs2: 0,
                aq: false,
                rl: false,
                ..
            }
        ));
    }

    #[test]
    fn fences_keep_their_sets() {
        // fence iorw,ow: gcc's release fence: RW before, W after.
        assert_eq!(
            one(&0x0f50_000fu32.to_le_bytes()).0,
            Inst::Fence {
                pred: RvAccesses::RW,
                succ: RvAccesses::W
            }
        );
        assert_eq!(one(&0x8330_000fu32.to_le_bytes()).0, Inst::FenceTso);
        // PAUSE is a hint.
        assert_eq!(one(&0x0100_000fu32.to_le_bytes()).0, Inst::Nop);
        assert_eq!(one(&0x0000_0073u32.to_le_bytes()).0, Inst::Ecall("ecall"));
    }

    #[test]
    fn compressed_forms_expand() {
        // c.bnez a5,-2 (0xfffd at 9e2 → 9e0).
        assert_eq!(
            one(&0xfffdu16.to_le_bytes()),
            (
                Inst::Branch {
                    op: BinOp::Ne,
                    rs1: 15,
                    rs2: 0,
                    off: -2
                },
                2
            )
        );
        // c.lw a5,0(a0); c.lw a5,4(a0).
        assert!(matches!(
            one(&0x411cu16.to_le_bytes()).0,
            Inst::Load {
                rd: 15,
                rs1: 10,
                imm: 0,
                width: 4,
                signed: true
            }
        ));
        assert!(matches!(
            one(&0x415cu16.to_le_bytes()).0,
            Inst::Load { imm: 4, .. }
        ));
        // sext.w a5,a5 is c.addiw a5,0; ret is c.jr ra.
        assert_eq!(
            one(&0x2781u16.to_le_bytes()).0,
            Inst::Alu {
                op: Alu::Add,
                rd: 15,
                rs1: 15,
                src: Src::Imm(0),
                word: true
            }
        );
        assert_eq!(
            one(&0x8082u16.to_le_bytes()).0,
            Inst::Jalr {
                rd: 0,
                rs1: 1,
                imm: 0
            }
        );
    }

    /// The file is user input: every halfword, and words drawn over the
    /// whole space, decode to something (an `Other` to refuse at worst)
    /// without a panic in either decoder.
    #[test]
    fn any_bytes_decode_without_panic() {
        for h in 0..=u16::MAX {
            let _ = decode(&h.to_le_bytes());
        }
        let mut x: u32 = 0x9e37_79b9;
        for _ in 0..200_000 {
            // xorshift32
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let _ = decode(&(x | 0b11).to_le_bytes());
        }
        assert_eq!(decode(&[0x13]), None, "a lone byte is the end of the code");
    }

    #[test]
    fn word_arithmetic_sign_extends() {
        assert_eq!(alu_int(Alu::Add, 0x7fff_ffff, 1, true), -0x8000_0000);
        assert_eq!(alu_int(Alu::Add, 0x7fff_ffff, 1, false), 0x8000_0000);
        assert_eq!(sext_int(0xffff_ffff, 32), -1);
        assert_eq!(alu_int(Alu::Srl, -1, 28, true), 0xf);
    }
}
