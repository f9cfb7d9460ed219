//! A small RV64 encoder for the instructions litmus tests use: loads and
//! stores of every width (`LB`…`LD`, `SB`…`SD`), the register and
//! immediate arithmetic the lowering needs for dependencies and constants
//! (`ADD`, `SUB`, `AND`, `OR`, `XOR`, `SLL`, `SRL`, `SLT`, `SLTU`, their
//! immediate forms, `LUI`/`ADDIW`/`SLLI` sequences for 64-bit constants,
//! `MUL`), branches (`BEQ`…`BGEU`, `JAL`) and `JALR` for the return,
//! `FENCE` with its predecessor and successor sets, `FENCE.TSO`,
//! `FENCE.I`, and the "A" extension: `LR`/`SC` and every AMO in `.W` and
//! `.D` with `aq`/`rl`.
//!
//! Encodings follow the RISC-V Unprivileged ISA manual (20191213):
//! chapter 2 (RV32I base: instruction formats 2.2–2.3, integer computation
//! 2.4, control transfer 2.5, loads and stores 2.6, FENCE 2.7 with
//! FENCE.TSO), chapter 3 ("Zifencei", FENCE.I), chapter 5 (RV64I: `LD`,
//! `SD`, `LWU`, 6-bit shift amounts, `ADDIW`), chapter 7 ("M": `MUL`),
//! chapter 8 ("A": LR/SC 8.2, AMOs 8.4, the `aq`/`rl` bits 8.1) and
//! chapter 24 (the opcode map). The unit tests compare every word with GNU
//! as (`riscv64-linux-gnu-as -march=rv64ima_zifencei`, binutils 2.40),
//! assembling the listing at test time when the cross binutils are
//! installed.

use crate::buffer::{signed_offset, Buffer, Fixup, Label};
pub(crate) use crate::operand::{Cond, Size};

/// An integer register, `x0`–`x31` (`x0` reads as zero, writes are lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct R(pub u8);

impl R {
    /// `x0`, the zero register.
    pub(crate) const ZERO: R = R(0);
    /// `x1` (`ra`), the return address.
    pub(crate) const RA: R = R(1);
    /// `x2` (`sp`), the stack pointer.
    pub(crate) const SP: R = R(2);

    fn n(self) -> u32 {
        u32::from(self.0 & 31)
    }
}

/// Register-register operations (OP, and OP with funct7 1 for `MUL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `ADD`
    Add,
    /// `SUB`
    Sub,
    /// `SLL`
    Sll,
    /// `SLT`
    Slt,
    /// `SLTU`
    Sltu,
    /// `XOR`
    Xor,
    /// `SRL`
    Srl,
    /// `OR`
    Or,
    /// `AND`
    And,
    /// `MUL` (RV64M)
    Mul,
}

/// Register-immediate operations (OP-IMM), 12-bit signed immediates.
/// The encoder encodes them all (tested against GNU as); the generator
/// uses some.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum OpImm {
    /// `ADDI`
    Addi,
    /// `SLTI`
    Slti,
    /// `SLTIU`
    Sltiu,
    /// `XORI`
    Xori,
    /// `ORI`
    Ori,
    /// `ANDI`
    Andi,
}

/// The operation of an AMO: its `funct5` (chapter 8.4, table 24.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Amo {
    /// `AMOSWAP`
    Swap = 0b00001,
    /// `AMOADD`
    Add = 0b00000,
    /// `AMOXOR`
    Xor = 0b00100,
    /// `AMOAND`
    And = 0b01100,
    /// `AMOOR`
    Or = 0b01000,
    /// `AMOMIN`
    Min = 0b10000,
    /// `AMOMAX`
    Max = 0b10100,
    /// `AMOMINU`
    Minu = 0b11000,
    /// `AMOMAXU`
    Maxu = 0b11100,
}

/// A FENCE's predecessor or successor set: bits I, O, R, W (chapter 2.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Set {
    /// Device input.
    pub i: bool,
    /// Device output.
    pub o: bool,
    /// Memory reads.
    pub r: bool,
    /// Memory writes.
    pub w: bool,
}

impl Set {
    /// Reads and writes (`rw`).
    pub(crate) const RW: Set = Set {
        i: false,
        o: false,
        r: true,
        w: true,
    };

    fn bits(self) -> u32 {
        u32::from(self.i) << 3 | u32::from(self.o) << 2 | u32::from(self.r) << 1 | u32::from(self.w)
    }
}

/// How a branch holds its target: a byte offset scattered over the
/// immediate of one of two formats (2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Branch {
    /// B-type: a 13-bit signed byte offset (±4 KiB).
    B,
    /// J-type: a 21-bit signed byte offset (±1 MiB).
    J,
}

impl Fixup for Branch {
    type Unit = u32;

    fn patch(self, code: &mut [u32], at: usize, target: usize) -> Option<()> {
        let w = &mut code[at];
        match self {
            Branch::B => {
                let o = signed_offset(at, target, 4, 13)? as u32;
                // imm[12|10:5] at 31:25, imm[4:1|11] at 11:7.
                *w |= (o >> 12 & 1) << 31
                    | (o >> 5 & 0x3F) << 25
                    | (o >> 1 & 0xF) << 8
                    | (o >> 11 & 1) << 7;
            }
            Branch::J => {
                let o = signed_offset(at, target, 4, 21)? as u32;
                // imm[20|10:1|11|19:12] at 31:12.
                *w |= (o >> 20 & 1) << 31
                    | (o >> 1 & 0x3FF) << 21
                    | (o >> 11 & 1) << 20
                    | (o >> 12 & 0xFF) << 12;
            }
        }
        Some(())
    }
}

/// An instruction buffer of RV64 words with labels for forward and
/// backward branches (see [`crate::buffer`]).
pub(crate) type Asm = Buffer<Branch>;

const LOAD: u32 = 0x03;
const MISC_MEM: u32 = 0x0f;
const OP_IMM: u32 = 0x13;
const OP_IMM_32: u32 = 0x1b;
const STORE: u32 = 0x23;
const AMO: u32 = 0x2f;
const OP: u32 = 0x33;
const LUI: u32 = 0x37;
const BRANCH: u32 = 0x63;
const JALR: u32 = 0x67;
const JAL: u32 = 0x6f;

fn fits12(v: i64) -> bool {
    (-2048..2048).contains(&v)
}

fn i_type(imm: i32, rs1: R, funct3: u32, rd: R, opcode: u32) -> u32 {
    ((imm as u32) & 0xFFF) << 20 | rs1.n() << 15 | funct3 << 12 | rd.n() << 7 | opcode
}

fn r_type(funct7: u32, rs2: R, rs1: R, funct3: u32, rd: R, opcode: u32) -> u32 {
    funct7 << 25 | rs2.n() << 20 | rs1.n() << 15 | funct3 << 12 | rd.n() << 7 | opcode
}

impl Asm {
    /// `L{B,H,W,D} rd, off(rs1)` (sign-extending); false when the offset
    /// does not fit in 12 bits.
    pub(crate) fn load(&mut self, w: Size, rd: R, rs1: R, off: i32) -> bool {
        if !fits12(off.into()) {
            return false;
        }
        self.emit(i_type(off, rs1, w.log2(), rd, LOAD));
        true
    }

    /// `S{B,H,W,D} rs2, off(rs1)`; false when the offset does not fit.
    pub(crate) fn store(&mut self, w: Size, rs2: R, rs1: R, off: i32) -> bool {
        if !fits12(off.into()) {
            return false;
        }
        let o = off as u32;
        self.emit(
            (o >> 5 & 0x7F) << 25
                | rs2.n() << 20
                | rs1.n() << 15
                | w.log2() << 12
                | (o & 0x1F) << 7
                | STORE,
        );
        true
    }

    /// `LR.{W,D}{.aq}{.rl} rd, (rs1)`.
    pub(crate) fn lr(&mut self, w: Size, aq: bool, rl: bool, rd: R, rs1: R) {
        self.amo_word(0b00010, w, aq, rl, R::ZERO, rs1, rd);
    }

    /// `SC.{W,D}{.aq}{.rl} rd, rs2, (rs1)`: rd is 0 on success.
    pub(crate) fn sc(&mut self, w: Size, aq: bool, rl: bool, rd: R, rs2: R, rs1: R) {
        self.amo_word(0b00011, w, aq, rl, rs2, rs1, rd);
    }

    /// `AMO<op>.{W,D}{.aq}{.rl} rd, rs2, (rs1)`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn amo(&mut self, op: Amo, w: Size, aq: bool, rl: bool, rd: R, rs2: R, rs1: R) {
        self.amo_word(op as u32, w, aq, rl, rs2, rs1, rd);
    }

    #[allow(clippy::too_many_arguments)]
    fn amo_word(&mut self, funct5: u32, w: Size, aq: bool, rl: bool, rs2: R, rs1: R, rd: R) {
        // Only .W (funct3 2) and .D (3) exist in "A".
        let f3 = if w == Size::D { 3 } else { 2 };
        let funct7 = funct5 << 2 | u32::from(aq) << 1 | u32::from(rl);
        self.emit(r_type(funct7, rs2, rs1, f3, rd, AMO));
    }

    /// `FENCE pred, succ` (fm 0000).
    pub(crate) fn fence(&mut self, pred: Set, succ: Set) {
        self.emit(pred.bits() << 24 | succ.bits() << 20 | MISC_MEM);
    }

    /// `FENCE.TSO`: fm 1000 with `rw,rw` (chapter 2.7).
    pub(crate) fn fence_tso(&mut self) {
        self.emit(0b1000 << 28 | Set::RW.bits() << 24 | Set::RW.bits() << 20 | MISC_MEM);
    }

    /// `FENCE.I` (Zifencei).
    #[cfg(test)] // the encoder's tests against GNU as; no generator emits it
    pub(crate) fn fence_i(&mut self) {
        self.emit(1 << 12 | MISC_MEM);
    }

    /// A register-register operation.
    pub(crate) fn op(&mut self, op: Op, rd: R, rs1: R, rs2: R) {
        let (f7, f3) = match op {
            Op::Add => (0, 0),
            Op::Sub => (0x20, 0),
            Op::Sll => (0, 1),
            Op::Slt => (0, 2),
            Op::Sltu => (0, 3),
            Op::Xor => (0, 4),
            Op::Srl => (0, 5),
            Op::Or => (0, 6),
            Op::And => (0, 7),
            Op::Mul => (1, 0),
        };
        self.emit(r_type(f7, rs2, rs1, f3, rd, OP));
    }

    /// A register-immediate operation; false when `imm` does not fit in
    /// 12 signed bits.
    pub(crate) fn op_imm(&mut self, op: OpImm, rd: R, rs1: R, imm: i64) -> bool {
        if !fits12(imm) {
            return false;
        }
        let f3 = match op {
            OpImm::Addi => 0,
            OpImm::Slti => 2,
            OpImm::Sltiu => 3,
            OpImm::Xori => 4,
            OpImm::Ori => 6,
            OpImm::Andi => 7,
        };
        self.emit(i_type(imm as i32, rs1, f3, rd, OP_IMM));
        true
    }

    /// `ADDI rd, rs1, imm`; false when `imm` does not fit.
    pub(crate) fn addi(&mut self, rd: R, rs1: R, imm: i64) -> bool {
        self.op_imm(OpImm::Addi, rd, rs1, imm)
    }

    /// `MV rd, rs` (`ADDI rd, rs, 0`).
    pub(crate) fn mv(&mut self, rd: R, rs: R) {
        self.addi(rd, rs, 0);
    }

    /// `SLLI rd, rs1, shamt` (6-bit shift amount, RV64I).
    pub(crate) fn slli(&mut self, rd: R, rs1: R, shamt: u32) {
        self.emit(i_type((shamt & 63) as i32, rs1, 1, rd, OP_IMM));
    }

    /// `SRLI rd, rs1, shamt`.
    pub(crate) fn srli(&mut self, rd: R, rs1: R, shamt: u32) {
        self.emit(i_type((shamt & 63) as i32, rs1, 5, rd, OP_IMM));
    }

    /// `LUI rd, imm20` (the upper 20 bits of a 32-bit value).
    pub(crate) fn lui(&mut self, rd: R, imm20: u32) {
        self.emit((imm20 & 0xFFFFF) << 12 | rd.n() << 7 | LUI);
    }

    /// `ADDIW rd, rs1, imm` (RV64I); false when `imm` does not fit.
    pub(crate) fn addiw(&mut self, rd: R, rs1: R, imm: i64) -> bool {
        if !fits12(imm) {
            return false;
        }
        self.emit(i_type(imm as i32, rs1, 0, rd, OP_IMM_32));
        true
    }

    /// `rd = imm`: `ADDI` for 12 bits, `LUI`+`ADDIW` for 32, and for wider
    /// values the upper part built the same way, shifted by `SLLI`, then
    /// the low 12 bits added (the sequence GNU as and LLVM use for `li`).
    pub(crate) fn li(&mut self, rd: R, imm: i64) {
        if fits12(imm) {
            self.addi(rd, R::ZERO, imm);
            return;
        }
        if i64::from(imm as i32) == imm {
            let lo = (imm << 52) >> 52;
            let hi = ((imm - lo) >> 12) as u32 & 0xFFFFF;
            self.lui(rd, hi);
            if lo != 0 {
                // ADDIW: LUI's result may be the sign-extended wrap of a
                // value just below 2^31; the 32-bit add undoes it.
                self.addiw(rd, rd, lo);
            }
            return;
        }
        let lo = (imm << 52) >> 52;
        let rest = imm.wrapping_sub(lo);
        let shift = rest.trailing_zeros();
        self.li(rd, rest >> shift);
        self.slli(rd, rd, shift);
        if lo != 0 {
            self.addi(rd, rd, lo);
        }
    }

    /// `B<cond> rs1, rs2, l`: `BEQ`, `BNE`, `BLT`, `BGE`, `BLTU`, `BGEU`,
    /// and the other four conditions as these with `rs1` and `rs2`
    /// swapped (`BGT`, `BLE`, `BGTU`, `BLEU`, the manual's pseudo-
    /// instructions, chapter 25).
    pub(crate) fn branch(&mut self, c: Cond, rs1: R, rs2: R, l: Label) {
        let (funct3, rs1, rs2) = match c {
            Cond::Eq => (0, rs1, rs2),
            Cond::Ne => (1, rs1, rs2),
            Cond::Lt => (4, rs1, rs2),
            Cond::Ge => (5, rs1, rs2),
            Cond::Ltu => (6, rs1, rs2),
            Cond::Geu => (7, rs1, rs2),
            Cond::Gt | Cond::Le | Cond::Gtu | Cond::Leu => {
                return self.branch(c.swap(), rs2, rs1, l);
            }
        };
        self.branch_here(l, Branch::B);
        self.emit(rs2.n() << 20 | rs1.n() << 15 | funct3 << 12 | BRANCH);
    }

    /// `J l` (`JAL x0, l`).
    pub(crate) fn j(&mut self, l: Label) {
        self.branch_here(l, Branch::J);
        self.emit(JAL);
    }

    /// `RET` (`JALR x0, 0(ra)`).
    pub(crate) fn ret(&mut self) {
        self.emit(i_type(0, R::RA, 0, R::ZERO, JALR));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(f: impl FnOnce(&mut Asm)) -> Vec<u32> {
        crate::gnu_as::words(f)
    }

    type Case = (&'static str, u32, fn(&mut Asm));

    /// Each instruction with the word GNU as gives it
    /// (`riscv64-linux-gnu-as -march=rv64ima_zifencei`, binutils 2.40).
    fn listing() -> Vec<Case> {
        vec![
            ("beq x5, x6, .", 0x0062_8063, |a| {
                let l = a.label();
                a.bind(l);
                a.branch(Cond::Eq, R(5), R(6), l);
            }),
            ("bne x5, x6, .", 0x0062_9063, |a| {
                let l = a.label();
                a.bind(l);
                a.branch(Cond::Ne, R(5), R(6), l);
            }),
            ("blt x5, x6, .", 0x0062_c063, |a| {
                let l = a.label();
                a.bind(l);
                a.branch(Cond::Lt, R(5), R(6), l);
            }),
            ("bge x5, x6, .", 0x0062_d063, |a| {
                let l = a.label();
                a.bind(l);
                a.branch(Cond::Ge, R(5), R(6), l);
            }),
            ("bltu x5, x6, .", 0x0062_e063, |a| {
                let l = a.label();
                a.bind(l);
                a.branch(Cond::Ltu, R(5), R(6), l);
            }),
            ("bgeu x5, x6, .", 0x0062_f063, |a| {
                let l = a.label();
                a.bind(l);
                a.branch(Cond::Geu, R(5), R(6), l);
            }),
            ("bgt x5, x6, .", 0x0053_4063, |a| {
                let l = a.label();
                a.bind(l);
                a.branch(Cond::Gt, R(5), R(6), l);
            }),
            ("ble x5, x6, .", 0x0053_5063, |a| {
                let l = a.label();
                a.bind(l);
                a.branch(Cond::Le, R(5), R(6), l);
            }),
            ("bgtu x5, x6, .", 0x0053_6063, |a| {
                let l = a.label();
                a.bind(l);
                a.branch(Cond::Gtu, R(5), R(6), l);
            }),
            ("bleu x5, x6, .", 0x0053_7063, |a| {
                let l = a.label();
                a.bind(l);
                a.branch(Cond::Leu, R(5), R(6), l);
            }),
            ("lb x5, 0(x6)", 0x0003_0283, |a| {
                a.load(Size::B, R(5), R(6), 0);
            }),
            ("lh x5, 2(x6)", 0x0023_1283, |a| {
                a.load(Size::H, R(5), R(6), 2);
            }),
            ("lw x5, -4(x6)", 0xffc3_2283, |a| {
                a.load(Size::W, R(5), R(6), -4);
            }),
            ("ld x31, 2040(x10)", 0x7f85_3f83, |a| {
                a.load(Size::D, R(31), R(10), 2040);
            }),
            ("sb x5, 0(x6)", 0x0053_0023, |a| {
                a.store(Size::B, R(5), R(6), 0);
            }),
            ("sh x5, 2(x6)", 0x0053_1123, |a| {
                a.store(Size::H, R(5), R(6), 2);
            }),
            ("sw x5, -4(x6)", 0xfe53_2e23, |a| {
                a.store(Size::W, R(5), R(6), -4);
            }),
            ("sd x27, 2040(x2)", 0x7fb1_3c23, |a| {
                a.store(Size::D, R(27), R(2), 2040);
            }),
            ("lr.w x5, (x6)", 0x1003_22af, |a| {
                a.lr(Size::W, false, false, R(5), R(6))
            }),
            ("lr.d.aq x5, (x6)", 0x1403_32af, |a| {
                a.lr(Size::D, true, false, R(5), R(6))
            }),
            ("lr.w.aqrl x5, (x6)", 0x1603_22af, |a| {
                a.lr(Size::W, true, true, R(5), R(6))
            }),
            ("sc.w x7, x5, (x6)", 0x1853_23af, |a| {
                a.sc(Size::W, false, false, R(7), R(5), R(6))
            }),
            ("sc.d.rl x7, x5, (x6)", 0x1a53_33af, |a| {
                a.sc(Size::D, false, true, R(7), R(5), R(6))
            }),
            ("amoswap.w x7, x5, (x6)", 0x0853_23af, |a| {
                a.amo(Amo::Swap, Size::W, false, false, R(7), R(5), R(6))
            }),
            ("amoswap.d.aqrl x0, x5, (x6)", 0x0e53_302f, |a| {
                a.amo(Amo::Swap, Size::D, true, true, R(0), R(5), R(6))
            }),
            ("amoadd.w.aq x7, x5, (x6)", 0x0453_23af, |a| {
                a.amo(Amo::Add, Size::W, true, false, R(7), R(5), R(6))
            }),
            ("amoxor.d.rl x7, x5, (x6)", 0x2253_33af, |a| {
                a.amo(Amo::Xor, Size::D, false, true, R(7), R(5), R(6))
            }),
            ("amoand.w x7, x5, (x6)", 0x6053_23af, |a| {
                a.amo(Amo::And, Size::W, false, false, R(7), R(5), R(6))
            }),
            ("amoor.d x7, x5, (x6)", 0x4053_33af, |a| {
                a.amo(Amo::Or, Size::D, false, false, R(7), R(5), R(6))
            }),
            ("amomin.w x7, x5, (x6)", 0x8053_23af, |a| {
                a.amo(Amo::Min, Size::W, false, false, R(7), R(5), R(6))
            }),
            ("amomax.d x7, x5, (x6)", 0xa053_33af, |a| {
                a.amo(Amo::Max, Size::D, false, false, R(7), R(5), R(6))
            }),
            ("amominu.w x7, x5, (x6)", 0xc053_23af, |a| {
                a.amo(Amo::Minu, Size::W, false, false, R(7), R(5), R(6))
            }),
            ("amomaxu.d.aqrl x7, x5, (x6)", 0xe653_33af, |a| {
                a.amo(Amo::Maxu, Size::D, true, true, R(7), R(5), R(6))
            }),
            ("fence rw, rw", 0x0330_000f, |a| a.fence(Set::RW, Set::RW)),
            ("fence r, rw", 0x0230_000f, |a| {
                a.fence(
                    Set {
                        w: false,
                        ..Set::RW
                    },
                    Set::RW,
                )
            }),
            ("fence rw, w", 0x0310_000f, |a| {
                a.fence(
                    Set::RW,
                    Set {
                        r: false,
                        ..Set::RW
                    },
                )
            }),
            ("fence w, r", 0x0120_000f, |a| {
                a.fence(
                    Set {
                        r: false,
                        ..Set::RW
                    },
                    Set {
                        w: false,
                        ..Set::RW
                    },
                )
            }),
            ("fence iorw, iorw", 0x0ff0_000f, |a| {
                let all = Set {
                    i: true,
                    o: true,
                    r: true,
                    w: true,
                };
                a.fence(all, all)
            }),
            ("fence.tso", 0x8330_000f, |a| a.fence_tso()),
            ("fence.i", 0x0000_100f, |a| a.fence_i()),
            ("add x5, x6, x7", 0x0073_02b3, |a| {
                a.op(Op::Add, R(5), R(6), R(7))
            }),
            ("sub x5, x6, x7", 0x4073_02b3, |a| {
                a.op(Op::Sub, R(5), R(6), R(7))
            }),
            ("sll x5, x6, x7", 0x0073_12b3, |a| {
                a.op(Op::Sll, R(5), R(6), R(7))
            }),
            ("slt x5, x6, x7", 0x0073_22b3, |a| {
                a.op(Op::Slt, R(5), R(6), R(7))
            }),
            ("sltu x5, x6, x7", 0x0073_32b3, |a| {
                a.op(Op::Sltu, R(5), R(6), R(7))
            }),
            ("xor x5, x6, x7", 0x0073_42b3, |a| {
                a.op(Op::Xor, R(5), R(6), R(7))
            }),
            ("srl x5, x6, x7", 0x0073_52b3, |a| {
                a.op(Op::Srl, R(5), R(6), R(7))
            }),
            ("or x5, x6, x7", 0x0073_62b3, |a| {
                a.op(Op::Or, R(5), R(6), R(7))
            }),
            ("and x5, x6, x7", 0x0073_72b3, |a| {
                a.op(Op::And, R(5), R(6), R(7))
            }),
            ("mul x5, x6, x7", 0x0273_02b3, |a| {
                a.op(Op::Mul, R(5), R(6), R(7))
            }),
            ("addi x5, x6, -1", 0xfff3_0293, |a| {
                a.addi(R(5), R(6), -1);
            }),
            ("slti x5, x6, 5", 0x0053_2293, |a| {
                a.op_imm(OpImm::Slti, R(5), R(6), 5);
            }),
            ("sltiu x5, x6, 1", 0x0013_3293, |a| {
                a.op_imm(OpImm::Sltiu, R(5), R(6), 1);
            }),
            ("xori x5, x6, -1", 0xfff3_4293, |a| {
                a.op_imm(OpImm::Xori, R(5), R(6), -1);
            }),
            ("ori x5, x6, 2047", 0x7ff3_6293, |a| {
                a.op_imm(OpImm::Ori, R(5), R(6), 2047);
            }),
            ("andi x5, x6, -2048", 0x8003_7293, |a| {
                a.op_imm(OpImm::Andi, R(5), R(6), -2048);
            }),
            ("slli x5, x6, 63", 0x03f3_1293, |a| a.slli(R(5), R(6), 63)),
            ("srli x5, x6, 32", 0x0203_5293, |a| a.srli(R(5), R(6), 32)),
            ("lui x5, 0x12345", 0x1234_52b7, |a| a.lui(R(5), 0x12345)),
            ("addiw x5, x5, -2048", 0x8002_829b, |a| {
                a.addiw(R(5), R(5), -2048);
            }),
            ("addi sp, sp, -96", 0xfa01_0113, |a| {
                a.addi(R::SP, R::SP, -96);
            }),
            ("ret", 0x0000_8067, |a| a.ret()),
        ]
    }

    #[test]
    fn instructions_match_the_listing() {
        for (text, want, f) in listing() {
            assert_eq!(one(f), vec![want], "{text}");
        }
    }

    /// Runs `li` through a tiny interpreter of the four instructions it
    /// emits.
    fn li_value(imm: i64) -> i64 {
        let words = one(|a| a.li(R(5), imm));
        let mut x5: i64 = 0;
        for w in words {
            let opc = w & 0x7f;
            let f3 = w >> 12 & 7;
            let iimm = (w as i32 >> 20) as i64;
            let rs1 = if (w >> 15 & 31) == 0 { 0 } else { x5 };
            x5 = match (opc, f3) {
                (0x13, 0) => rs1.wrapping_add(iimm),
                (0x13, 1) => rs1 << (w >> 20 & 63),
                (0x37, _) => i64::from((w & 0xFFFF_F000) as i32),
                (0x1b, 0) => i64::from((rs1 as i32).wrapping_add(iimm as i32)),
                _ => panic!("li emitted {w:#010x}"),
            };
        }
        x5
    }

    #[test]
    fn li_builds_every_kind_of_constant() {
        for v in [
            0,
            1,
            -1,
            2047,
            -2048,
            2048,
            0x12345,
            0x7FFF_F800,
            0x7FFF_FFFF,
            -0x8000_0000,
            0x8000_0000,
            0xFFFF_FFFF,
            0x1234_5678_9ABC_DEF0,
            i64::MAX,
            i64::MIN,
            9_999_999_999_999,
            -9_999_999_999_999,
        ] {
            assert_eq!(li_value(v), v, "li {v:#x}");
        }
    }

    #[test]
    fn branches_resolve_forward_and_backward() {
        let words = one(crate::gnu_as::forward_and_backward([
            |a, l| a.branch(Cond::Eq, R(5), R(6), l),
            |a, l| a.branch(Cond::Ne, R(5), R(0), l),
            |a, l| a.j(l),
            |a, l| a.branch(Cond::Geu, R(7), R(5), l),
        ]));
        // beq x5,x6,.+12 ; bne x5,x0,.+8 ; j .-8 ; bgeu x7,x5,.-12
        assert_eq!(
            words,
            vec![0x0062_8663, 0x0002_9463, 0xff9f_f06f, 0xfe53_fae3]
        );
    }

    /// Assembles the listing with GNU as when the riscv64 cross binutils
    /// are installed (and fails without them under
    /// `ATOMLAB_REQUIRE_CROSS=1`, as CI sets), and compares every word.
    #[test]
    fn instructions_match_gnu_as() {
        let lines: Vec<_> = listing()
            .into_iter()
            .map(|(t, w, f)| (t, w, one(f)))
            .collect();
        let args = ["-march=rv64ima_zifencei", "-mno-relax"];
        crate::gnu_as::compare(
            "riscv64-linux-gnu",
            &args,
            "binutils-riscv64-linux-gnu",
            &lines,
        );
    }
}
