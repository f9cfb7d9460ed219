//! A small AArch64 (A64) encoder for the instructions litmus tests use:
//! loads and stores with an immediate or register offset (`LDR`/`STR`,
//! sized), the acquire/release forms (`LDAR`, `LDAPR`, `STLR`), the
//! exclusives (`LDXR`, `LDAXR`, `STXR`, `STLXR`), the LSE atomics (`SWP`,
//! `LD<op>`, `CAS`, with their `A`/`L` forms), barriers (`DMB`, `DSB`,
//! `ISB`), register arithmetic and compares, `CSEL`/`CSET`, and branches
//! (`B`, `B.cond`, `CBZ`, `CBNZ`, `RET`).
//!
//! Encodings follow the Arm Architecture Reference Manual for A-profile
//! (DDI 0487), chapter C4 (A64 instruction set encoding) and the
//! instruction pages of C6. The unit tests compare the words with GNU as
//! (binutils 2.40, `aarch64-linux-gnu-as -march=armv8.4-a+lse+rcpc`), and
//! one of them assembles a listing at test time when the cross binutils
//! are installed.

use crate::buffer::{signed_offset, Buffer, Fixup, Label};
pub(crate) use crate::operand::{Cond, Size};

/// A general-purpose register number, 0–30; 31 is XZR (or SP as a base).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct X(pub u8);

impl X {
    /// The zero register (register number 31 where it means XZR).
    pub(crate) const ZR: X = X(31);
    /// The stack pointer (register number 31 as a load/store base or in
    /// `ADD`/`SUB` immediate).
    pub(crate) const SP: X = X(31);

    fn n(self) -> u32 {
        u32::from(self.0 & 31)
    }
}

/// The `size` field of a load or store (C4.1), at bits 30–31.
fn bits(size: Size) -> u32 {
    size.log2() << 30
}

/// The condition code of `c` (C1.2.4): the `cond` field of `B.cond`,
/// `CSEL` and `CSINC`.
fn cc(c: Cond) -> u32 {
    match c {
        Cond::Eq => 0,
        Cond::Ne => 1,
        Cond::Geu => 2, // HS
        Cond::Ltu => 3, // LO
        Cond::Gtu => 8, // HI
        Cond::Leu => 9, // LS
        Cond::Ge => 10,
        Cond::Lt => 11,
        Cond::Gt => 12,
        Cond::Le => 13,
    }
}

/// Register-register data processing (shifted-register and two-source
/// forms, 64-bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `ADD Xd, Xn, Xm`
    Add,
    /// `SUB Xd, Xn, Xm`
    Sub,
    /// `AND Xd, Xn, Xm`
    And,
    /// `ORR Xd, Xn, Xm`
    Orr,
    /// `EOR Xd, Xn, Xm`
    Eor,
    /// `BIC Xd, Xn, Xm`
    Bic,
    /// `MUL Xd, Xn, Xm` (MADD with XZR)
    Mul,
    /// `LSL Xd, Xn, Xm` (LSLV)
    Lslv,
    /// `LSR Xd, Xn, Xm` (LSRV)
    Lsrv,
}

/// The operation of an LSE atomic memory operation (`LD<op>`, `SWP`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtomicOp {
    /// `LDADD`
    Add,
    /// `LDCLR`
    Clr,
    /// `LDEOR`
    Eor,
    /// `LDSET`
    Set,
    /// `LDSMAX`
    Smax,
    /// `LDSMIN`
    Smin,
    /// `LDUMAX`
    Umax,
    /// `LDUMIN`
    Umin,
    /// `SWP`
    Swp,
}

/// Which of the `DMB`/`DSB` options: the `CRm` field (C6.2.81).
pub(crate) fn barrier_crm(name: &str) -> Option<u32> {
    Some(match name.to_ascii_uppercase().as_str() {
        "OSHLD" => 0b0001,
        "OSHST" => 0b0010,
        "OSH" => 0b0011,
        "NSHLD" => 0b0101,
        "NSHST" => 0b0110,
        "NSH" => 0b0111,
        "ISHLD" => 0b1001,
        "ISHST" => 0b1010,
        "ISH" => 0b1011,
        "LD" => 0b1101,
        "ST" => 0b1110,
        "SY" => 0b1111,
        _ => return None,
    })
}

/// How a branch holds its target: a word offset in one of two fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Branch {
    /// `B`: imm26 at bits 0–25.
    Imm26,
    /// `B.cond`, `CBZ`, `CBNZ`: imm19 at bits 5–23.
    Imm19,
}

impl Fixup for Branch {
    type Unit = u32;

    fn patch(self, code: &mut [u32], at: usize, target: usize) -> Option<()> {
        let w = &mut code[at];
        match self {
            Branch::Imm26 => *w |= (signed_offset(at, target, 1, 26)? as u32) & 0x03FF_FFFF,
            Branch::Imm19 => *w |= ((signed_offset(at, target, 1, 19)? as u32) & 0x7FFFF) << 5,
        }
        Some(())
    }
}

/// An instruction buffer of A64 words with labels for forward and
/// backward branches (see [`crate::buffer`]).
pub(crate) type Asm = Buffer<Branch>;

impl Asm {
    /// `LDR Rt, [Xn, #off]` (unsigned offset, a multiple of the size);
    /// false when the offset does not fit.
    pub(crate) fn ldr_imm(&mut self, size: Size, t: X, n: X, off: u32) -> bool {
        self.ls_imm(0x3940_0000, size, t, n, off)
    }

    /// `STR Rt, [Xn, #off]`; false when the offset does not fit.
    pub(crate) fn str_imm(&mut self, size: Size, t: X, n: X, off: u32) -> bool {
        self.ls_imm(0x3900_0000, size, t, n, off)
    }

    fn ls_imm(&mut self, base: u32, size: Size, t: X, n: X, off: u32) -> bool {
        let scale = size.log2();
        if !off.is_multiple_of(1 << scale) || off >> scale > 0xFFF {
            return false;
        }
        self.emit(base | bits(size) | (off >> scale) << 10 | n.n() << 5 | t.n());
        true
    }

    /// `LDR Rt, [Xn, Xm]` (register offset, no shift).
    pub(crate) fn ldr_reg(&mut self, size: Size, t: X, n: X, m: X) {
        self.emit(0x3860_6800 | bits(size) | m.n() << 16 | n.n() << 5 | t.n());
    }

    /// `STR Rt, [Xn, Xm]` (register offset, no shift).
    pub(crate) fn str_reg(&mut self, size: Size, t: X, n: X, m: X) {
        self.emit(0x3820_6800 | bits(size) | m.n() << 16 | n.n() << 5 | t.n());
    }

    /// `LDAR Rt, [Xn]`.
    pub(crate) fn ldar(&mut self, size: Size, t: X, n: X) {
        self.emit(0x08DF_FC00 | bits(size) | n.n() << 5 | t.n());
    }

    /// `LDAPR Rt, [Xn]` (FEAT_LRCPC).
    pub(crate) fn ldapr(&mut self, size: Size, t: X, n: X) {
        self.emit(0x38BF_C000 | bits(size) | n.n() << 5 | t.n());
    }

    /// `STLR Rt, [Xn]`.
    pub(crate) fn stlr(&mut self, size: Size, t: X, n: X) {
        self.emit(0x089F_FC00 | bits(size) | n.n() << 5 | t.n());
    }

    /// `LDXR Rt, [Xn]`, or `LDAXR` with `acquire`.
    pub(crate) fn ldxr(&mut self, size: Size, acquire: bool, t: X, n: X) {
        self.emit(0x085F_7C00 | bits(size) | u32::from(acquire) << 15 | n.n() << 5 | t.n());
    }

    /// `STXR Ws, Rt, [Xn]`, or `STLXR` with `release`.
    pub(crate) fn stxr(&mut self, size: Size, release: bool, s: X, t: X, n: X) {
        self.emit(
            0x0800_7C00 | bits(size) | s.n() << 16 | u32::from(release) << 15 | n.n() << 5 | t.n(),
        );
    }

    /// An LSE atomic: `LD<op>{A}{L} Rs, Rt, [Xn]` or `SWP{A}{L}`
    /// (FEAT_LSE). With `t` = XZR and no acquire it is the `ST<op>` alias.
    // One argument per field of the instruction, as the Arm ARM names them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn atomic(
        &mut self,
        size: Size,
        op: AtomicOp,
        acq: bool,
        rel: bool,
        s: X,
        t: X,
        n: X,
    ) {
        let (o3, opc) = match op {
            AtomicOp::Add => (0, 0b000),
            AtomicOp::Clr => (0, 0b001),
            AtomicOp::Eor => (0, 0b010),
            AtomicOp::Set => (0, 0b011),
            AtomicOp::Smax => (0, 0b100),
            AtomicOp::Smin => (0, 0b101),
            AtomicOp::Umax => (0, 0b110),
            AtomicOp::Umin => (0, 0b111),
            AtomicOp::Swp => (1, 0b000),
        };
        self.emit(
            0x3820_0000
                | bits(size)
                | u32::from(acq) << 23
                | u32::from(rel) << 22
                | s.n() << 16
                | o3 << 15
                | opc << 12
                | n.n() << 5
                | t.n(),
        );
    }

    /// `CAS{A}{L} Rs, Rt, [Xn]` (FEAT_LSE): compares Rs with memory,
    /// writes Rt if equal; Rs receives the old value.
    pub(crate) fn cas(&mut self, size: Size, acq: bool, rel: bool, s: X, t: X, n: X) {
        self.emit(
            0x08A0_7C00
                | bits(size)
                | u32::from(acq) << 22
                | s.n() << 16
                | u32::from(rel) << 15
                | n.n() << 5
                | t.n(),
        );
    }

    /// `DMB <option>` by its `CRm` ([`barrier_crm`]).
    pub(crate) fn dmb(&mut self, crm: u32) {
        self.emit(0xD503_30BF | (crm & 15) << 8);
    }

    /// `DSB <option>` by its `CRm`.
    pub(crate) fn dsb(&mut self, crm: u32) {
        self.emit(0xD503_309F | (crm & 15) << 8);
    }

    /// `ISB`.
    pub(crate) fn isb(&mut self) {
        self.emit(0xD503_3FDF);
    }

    /// `NOP`.
    #[cfg(test)] // the encoder's tests against GNU as; no generator emits it
    pub(crate) fn nop(&mut self) {
        self.emit(0xD503_201F);
    }

    /// `RET` (to X30).
    pub(crate) fn ret(&mut self) {
        self.emit(0xD65F_03C0);
    }

    /// `MOV Xd, Xm` (ORR Xd, XZR, Xm).
    pub(crate) fn mov(&mut self, d: X, m: X) {
        self.emit(0xAA00_03E0 | m.n() << 16 | d.n());
    }

    /// `Xd = imm`, with MOVZ or MOVN and then MOVK for each remaining
    /// 16-bit chunk.
    pub(crate) fn mov_imm(&mut self, d: X, imm: i64) {
        let v = imm as u64;
        let chunks: Vec<u32> = (0..4).map(|i| ((v >> (16 * i)) & 0xFFFF) as u32).collect();
        // MOVN when more chunks are all-ones than zero.
        let ones = chunks.iter().filter(|c| **c == 0xFFFF).count();
        let zeros = chunks.iter().filter(|c| **c == 0).count();
        let (neg, skip) = if ones > zeros {
            (true, 0xFFFF)
        } else {
            (false, 0)
        };
        // 0 and -1 are one MOVZ/MOVN of chunk 0.
        let all_skipped = chunks.iter().all(|c| *c == skip);
        let mut first = true;
        for (hw, &c) in chunks.iter().enumerate() {
            if c == skip && !(all_skipped && hw == 0) {
                continue;
            }
            let hw = hw as u32;
            if first {
                let (base, field) = if neg {
                    (0x9280_0000, !c & 0xFFFF)
                } else {
                    (0xD280_0000, c)
                };
                self.emit(base | hw << 21 | field << 5 | d.n());
                first = false;
            } else {
                self.emit(0xF280_0000 | hw << 21 | c << 5 | d.n());
            }
        }
    }

    /// A register-register operation, 64-bit.
    pub(crate) fn op(&mut self, op: Op, d: X, n: X, m: X) {
        let base = match op {
            Op::Add => 0x8B00_0000,
            Op::Sub => 0xCB00_0000,
            Op::And => 0x8A00_0000,
            Op::Orr => 0xAA00_0000,
            Op::Eor => 0xCA00_0000,
            Op::Bic => 0x8A20_0000,
            Op::Mul => 0x9B00_7C00,
            Op::Lslv => 0x9AC0_2000,
            Op::Lsrv => 0x9AC0_2400,
        };
        self.emit(base | m.n() << 16 | n.n() << 5 | d.n());
    }

    /// `NEG Xd, Xm` (SUB Xd, XZR, Xm).
    pub(crate) fn neg(&mut self, d: X, m: X) {
        self.emit(0xCB00_03E0 | m.n() << 16 | d.n());
    }

    /// `MVN Xd, Xm` (ORN Xd, XZR, Xm).
    pub(crate) fn mvn(&mut self, d: X, m: X) {
        self.emit(0xAA20_03E0 | m.n() << 16 | d.n());
    }

    /// `ADD Xd, Xn, #imm12` (`Xn`/`Xd` may be SP); false when `imm`
    /// does not fit 12 bits.
    pub(crate) fn add_imm(&mut self, d: X, n: X, imm: u32) -> bool {
        self.addsub_imm(0x9100_0000, d, n, imm)
    }

    /// `SUB Xd, Xn, #imm12`; false when `imm` does not fit.
    pub(crate) fn sub_imm(&mut self, d: X, n: X, imm: u32) -> bool {
        self.addsub_imm(0xD100_0000, d, n, imm)
    }

    /// `SUBS Xd, Xn, #imm12` (`CMP Xn, #imm` with `d` = XZR); false when
    /// `imm` does not fit.
    pub(crate) fn subs_imm(&mut self, d: X, n: X, imm: u32) -> bool {
        self.addsub_imm(0xF100_0000, d, n, imm)
    }

    fn addsub_imm(&mut self, base: u32, d: X, n: X, imm: u32) -> bool {
        if imm > 0xFFF {
            return false;
        }
        self.emit(base | imm << 10 | n.n() << 5 | d.n());
        true
    }

    /// `CMP Xn, Xm` (SUBS XZR, Xn, Xm).
    pub(crate) fn cmp(&mut self, n: X, m: X) {
        self.emit(0xEB00_001F | m.n() << 16 | n.n() << 5);
    }

    /// `LSL Xd, Xn, #sh` (UBFM); `sh` < 64.
    pub(crate) fn lsl_imm(&mut self, d: X, n: X, sh: u32) {
        let sh = sh & 63;
        let immr = (64 - sh) & 63;
        let imms = 63 - sh;
        self.emit(0xD340_0000 | immr << 16 | imms << 10 | n.n() << 5 | d.n());
    }

    /// `LSR Xd, Xn, #sh` (UBFM); `sh` < 64.
    pub(crate) fn lsr_imm(&mut self, d: X, n: X, sh: u32) {
        self.emit(0xD340_FC00 | (sh & 63) << 16 | n.n() << 5 | d.n());
    }

    /// `CSEL Xd, Xn, Xm, cond`.
    pub(crate) fn csel(&mut self, d: X, n: X, m: X, c: Cond) {
        self.emit(0x9A80_0000 | m.n() << 16 | cc(c) << 12 | n.n() << 5 | d.n());
    }

    /// `CSET Xd, cond` (CSINC Xd, XZR, XZR, invert(cond)).
    pub(crate) fn cset(&mut self, d: X, c: Cond) {
        self.emit(0x9A9F_07E0 | cc(c.invert()) << 12 | d.n());
    }

    /// `B label`.
    pub(crate) fn b(&mut self, l: Label) {
        self.branch_here(l, Branch::Imm26);
        self.emit(0x1400_0000);
    }

    /// `B.cond label`.
    pub(crate) fn b_cond(&mut self, c: Cond, l: Label) {
        self.branch_here(l, Branch::Imm19);
        self.emit(0x5400_0000 | cc(c));
    }

    /// `CBZ Xt, label`.
    pub(crate) fn cbz(&mut self, t: X, l: Label) {
        self.branch_here(l, Branch::Imm19);
        self.emit(0xB400_0000 | t.n());
    }

    /// `CBNZ Xt, label`.
    pub(crate) fn cbnz(&mut self, t: X, l: Label) {
        self.branch_here(l, Branch::Imm19);
        self.emit(0xB500_0000 | t.n());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(f: impl FnOnce(&mut Asm)) -> Vec<u32> {
        crate::gnu_as::words(f)
    }

    /// Each line: an instruction as GNU as reads it, and what our encoder
    /// makes of it. The expected words are as's (binutils 2.40,
    /// `aarch64-linux-gnu-as -march=armv8.4-a+lse+rcpc`), copied from
    /// `aarch64-linux-gnu-objdump -d`.
    /// An instruction's text, as's word for it, and how we emit it.
    type Line = (&'static str, u32, Box<dyn Fn(&mut Asm)>);

    fn listing() -> Vec<Line> {
        use Size::{B, D, H, W};
        let x = X;
        vec![
            (
                "ldr x3, [x1]",
                0xf9400023,
                Box::new(move |a: &mut Asm| assert!(a.ldr_imm(D, x(3), x(1), 0))),
            ),
            (
                "ldr x2, [x0, #16]",
                0xf9400802,
                Box::new(move |a: &mut Asm| assert!(a.ldr_imm(D, x(2), x(0), 16))),
            ),
            (
                "ldr w5, [x2]",
                0xb9400045,
                Box::new(move |a: &mut Asm| assert!(a.ldr_imm(W, x(5), x(2), 0))),
            ),
            (
                "ldrb w5, [x2, #3]",
                0x39400c45,
                Box::new(move |a: &mut Asm| assert!(a.ldr_imm(B, x(5), x(2), 3))),
            ),
            (
                "ldrh w5, [x2, #4]",
                0x79400845,
                Box::new(move |a: &mut Asm| assert!(a.ldr_imm(H, x(5), x(2), 4))),
            ),
            (
                "str x9, [sp, #8]",
                0xf90007e9,
                Box::new(move |a: &mut Asm| assert!(a.str_imm(D, x(9), X::SP, 8))),
            ),
            (
                "str w3, [x0]",
                0xb9000003,
                Box::new(move |a: &mut Asm| assert!(a.str_imm(W, x(3), x(0), 0))),
            ),
            (
                "str xzr, [x4]",
                0xf900009f,
                Box::new(move |a: &mut Asm| assert!(a.str_imm(D, X::ZR, x(4), 0))),
            ),
            (
                "ldr x6, [x0, x5]",
                0xf8656806,
                Box::new(move |a: &mut Asm| a.ldr_reg(D, x(6), x(0), x(5))),
            ),
            (
                "str w6, [x0, x5]",
                0xb8256806,
                Box::new(move |a: &mut Asm| a.str_reg(W, x(6), x(0), x(5))),
            ),
            (
                "ldar x1, [x2]",
                0xc8dffc41,
                Box::new(move |a: &mut Asm| a.ldar(D, x(1), x(2))),
            ),
            (
                "ldar w1, [x2]",
                0x88dffc41,
                Box::new(move |a: &mut Asm| a.ldar(W, x(1), x(2))),
            ),
            (
                "ldapr x7, [x8]",
                0xf8bfc107,
                Box::new(move |a: &mut Asm| a.ldapr(D, x(7), x(8))),
            ),
            (
                "stlr x3, [x4]",
                0xc89ffc83,
                Box::new(move |a: &mut Asm| a.stlr(D, x(3), x(4))),
            ),
            (
                "stlr w3, [x4]",
                0x889ffc83,
                Box::new(move |a: &mut Asm| a.stlr(W, x(3), x(4))),
            ),
            (
                "ldxr x0, [x1]",
                0xc85f7c20,
                Box::new(move |a: &mut Asm| a.ldxr(D, false, x(0), x(1))),
            ),
            (
                "ldaxr x0, [x1]",
                0xc85ffc20,
                Box::new(move |a: &mut Asm| a.ldxr(D, true, x(0), x(1))),
            ),
            (
                "stxr w4, x2, [x3]",
                0xc8047c62,
                Box::new(move |a: &mut Asm| a.stxr(D, false, x(4), x(2), x(3))),
            ),
            (
                "stlxr w4, x2, [x3]",
                0xc804fc62,
                Box::new(move |a: &mut Asm| a.stxr(D, true, x(4), x(2), x(3))),
            ),
            (
                "ldadd x1, x2, [x3]",
                0xf8210062,
                Box::new(move |a: &mut Asm| {
                    a.atomic(D, AtomicOp::Add, false, false, x(1), x(2), x(3))
                }),
            ),
            (
                "ldaddal x1, x2, [x3]",
                0xf8e10062,
                Box::new(move |a: &mut Asm| {
                    a.atomic(D, AtomicOp::Add, true, true, x(1), x(2), x(3))
                }),
            ),
            (
                "ldclra x1, x2, [x3]",
                0xf8a11062,
                Box::new(move |a: &mut Asm| {
                    a.atomic(D, AtomicOp::Clr, true, false, x(1), x(2), x(3))
                }),
            ),
            (
                "ldeorl x1, x2, [x3]",
                0xf8612062,
                Box::new(move |a: &mut Asm| {
                    a.atomic(D, AtomicOp::Eor, false, true, x(1), x(2), x(3))
                }),
            ),
            (
                "ldset x1, x2, [x3]",
                0xf8213062,
                Box::new(move |a: &mut Asm| {
                    a.atomic(D, AtomicOp::Set, false, false, x(1), x(2), x(3))
                }),
            ),
            (
                "ldsmax x1, x2, [x3]",
                0xf8214062,
                Box::new(move |a: &mut Asm| {
                    a.atomic(D, AtomicOp::Smax, false, false, x(1), x(2), x(3))
                }),
            ),
            (
                "ldumin x1, x2, [x3]",
                0xf8217062,
                Box::new(move |a: &mut Asm| {
                    a.atomic(D, AtomicOp::Umin, false, false, x(1), x(2), x(3))
                }),
            ),
            (
                "stadd x1, [x3]",
                0xf821007f,
                Box::new(move |a: &mut Asm| {
                    a.atomic(D, AtomicOp::Add, false, false, x(1), X::ZR, x(3))
                }),
            ),
            (
                "swp x1, x2, [x3]",
                0xf8218062,
                Box::new(move |a: &mut Asm| {
                    a.atomic(D, AtomicOp::Swp, false, false, x(1), x(2), x(3))
                }),
            ),
            (
                "swpal w1, w2, [x3]",
                0xb8e18062,
                Box::new(move |a: &mut Asm| {
                    a.atomic(W, AtomicOp::Swp, true, true, x(1), x(2), x(3))
                }),
            ),
            (
                "cas x10, x4, [x2]",
                0xc8aa7c44,
                Box::new(move |a: &mut Asm| a.cas(D, false, false, x(10), x(4), x(2))),
            ),
            (
                "casa x10, x4, [x2]",
                0xc8ea7c44,
                Box::new(move |a: &mut Asm| a.cas(D, true, false, x(10), x(4), x(2))),
            ),
            (
                "casl x10, x4, [x2]",
                0xc8aafc44,
                Box::new(move |a: &mut Asm| a.cas(D, false, true, x(10), x(4), x(2))),
            ),
            (
                "casal w10, w4, [x2]",
                0x88eafc44,
                Box::new(move |a: &mut Asm| a.cas(W, true, true, x(10), x(4), x(2))),
            ),
            (
                "dmb ish",
                0xd5033bbf,
                Box::new(|a: &mut Asm| a.dmb(barrier_crm("ISH").unwrap())),
            ),
            (
                "dmb ishld",
                0xd50339bf,
                Box::new(|a: &mut Asm| a.dmb(barrier_crm("ishld").unwrap())),
            ),
            (
                "dmb ishst",
                0xd5033abf,
                Box::new(|a: &mut Asm| a.dmb(barrier_crm("ISHST").unwrap())),
            ),
            (
                "dmb sy",
                0xd5033fbf,
                Box::new(|a: &mut Asm| a.dmb(barrier_crm("SY").unwrap())),
            ),
            (
                "dmb oshld",
                0xd50331bf,
                Box::new(|a: &mut Asm| a.dmb(barrier_crm("OSHLD").unwrap())),
            ),
            (
                "dsb sy",
                0xd5033f9f,
                Box::new(|a: &mut Asm| a.dsb(barrier_crm("SY").unwrap())),
            ),
            (
                "dsb ish",
                0xd5033b9f,
                Box::new(|a: &mut Asm| a.dsb(barrier_crm("ISH").unwrap())),
            ),
            ("isb", 0xd5033fdf, Box::new(|a: &mut Asm| a.isb())),
            ("nop", 0xd503201f, Box::new(|a: &mut Asm| a.nop())),
            ("ret", 0xd65f03c0, Box::new(|a: &mut Asm| a.ret())),
            (
                "mov x3, x17",
                0xaa1103e3,
                Box::new(move |a: &mut Asm| a.mov(x(3), x(17))),
            ),
            (
                "mov x3, #0x1",
                0xd2800023,
                Box::new(move |a: &mut Asm| a.mov_imm(x(3), 1)),
            ),
            (
                "mov x3, #0x0",
                0xd2800003,
                Box::new(move |a: &mut Asm| a.mov_imm(x(3), 0)),
            ),
            (
                "mov x3, #0xffffffffffffffff",
                0x92800003,
                Box::new(move |a: &mut Asm| a.mov_imm(x(3), -1)),
            ),
            (
                "mov x3, #0x10000",
                0xd2a00023,
                Box::new(move |a: &mut Asm| a.mov_imm(x(3), 0x10000)),
            ),
            (
                "add x1, x2, x3",
                0x8b030041,
                Box::new(move |a: &mut Asm| a.op(Op::Add, x(1), x(2), x(3))),
            ),
            (
                "sub x1, x2, x3",
                0xcb030041,
                Box::new(move |a: &mut Asm| a.op(Op::Sub, x(1), x(2), x(3))),
            ),
            (
                "and x1, x2, x3",
                0x8a030041,
                Box::new(move |a: &mut Asm| a.op(Op::And, x(1), x(2), x(3))),
            ),
            (
                "orr x1, x2, x3",
                0xaa030041,
                Box::new(move |a: &mut Asm| a.op(Op::Orr, x(1), x(2), x(3))),
            ),
            (
                "eor x4, x3, x3",
                0xca030064,
                Box::new(move |a: &mut Asm| a.op(Op::Eor, x(4), x(3), x(3))),
            ),
            (
                "bic x1, x2, x3",
                0x8a230041,
                Box::new(move |a: &mut Asm| a.op(Op::Bic, x(1), x(2), x(3))),
            ),
            (
                "mul x1, x2, x3",
                0x9b037c41,
                Box::new(move |a: &mut Asm| a.op(Op::Mul, x(1), x(2), x(3))),
            ),
            (
                "lsl x1, x2, x3",
                0x9ac32041,
                Box::new(move |a: &mut Asm| a.op(Op::Lslv, x(1), x(2), x(3))),
            ),
            (
                "lsr x1, x2, x3",
                0x9ac32441,
                Box::new(move |a: &mut Asm| a.op(Op::Lsrv, x(1), x(2), x(3))),
            ),
            (
                "neg x1, x2",
                0xcb0203e1,
                Box::new(move |a: &mut Asm| a.neg(x(1), x(2))),
            ),
            (
                "mvn x1, x2",
                0xaa2203e1,
                Box::new(move |a: &mut Asm| a.mvn(x(1), x(2))),
            ),
            (
                "add x1, x2, #0x7",
                0x91001c41,
                Box::new(move |a: &mut Asm| assert!(a.add_imm(x(1), x(2), 7))),
            ),
            (
                "sub sp, sp, #0x50",
                0xd10143ff,
                Box::new(move |a: &mut Asm| assert!(a.sub_imm(X::SP, X::SP, 0x50))),
            ),
            (
                "subs x1, x1, #0x1",
                0xf1000421,
                Box::new(move |a: &mut Asm| assert!(a.subs_imm(x(1), x(1), 1))),
            ),
            (
                "cmp x5, x6",
                0xeb0600bf,
                Box::new(move |a: &mut Asm| a.cmp(x(5), x(6))),
            ),
            (
                "lsl x1, x2, #3",
                0xd37df041,
                Box::new(move |a: &mut Asm| a.lsl_imm(x(1), x(2), 3)),
            ),
            (
                "lsr x1, x2, #3",
                0xd343fc41,
                Box::new(move |a: &mut Asm| a.lsr_imm(x(1), x(2), 3)),
            ),
            (
                "csel x1, x2, x3, ne",
                0x9a831041,
                Box::new(move |a: &mut Asm| a.csel(x(1), x(2), x(3), Cond::Ne)),
            ),
            (
                "cset x1, eq",
                0x9a9f17e1,
                Box::new(move |a: &mut Asm| a.cset(x(1), Cond::Eq)),
            ),
            (
                "cset x1, lt",
                0x9a9fa7e1,
                Box::new(move |a: &mut Asm| a.cset(x(1), Cond::Lt)),
            ),
            (
                "cset x1, hi",
                0x9a9f97e1,
                Box::new(move |a: &mut Asm| a.cset(x(1), Cond::Gtu)),
            ),
            (
                "cset x1, lo",
                0x9a9f27e1,
                Box::new(move |a: &mut Asm| a.cset(x(1), Cond::Ltu)),
            ),
            (
                "cset x1, hs",
                0x9a9f37e1,
                Box::new(move |a: &mut Asm| a.cset(x(1), Cond::Geu)),
            ),
            (
                "cset x1, ls",
                0x9a9f87e1,
                Box::new(move |a: &mut Asm| a.cset(x(1), Cond::Leu)),
            ),
            (
                "cset x1, gt",
                0x9a9fd7e1,
                Box::new(move |a: &mut Asm| a.cset(x(1), Cond::Gt)),
            ),
            (
                "cset x1, le",
                0x9a9fc7e1,
                Box::new(move |a: &mut Asm| a.cset(x(1), Cond::Le)),
            ),
            (
                "cset x1, ge",
                0x9a9fb7e1,
                Box::new(move |a: &mut Asm| a.cset(x(1), Cond::Ge)),
            ),
        ]
    }

    #[test]
    fn instructions_match_gnu_as() {
        for (text, want, f) in listing() {
            assert_eq!(one(|a| f(a)), vec![want], "{text}");
        }
    }

    #[test]
    fn wide_immediates_take_movk() {
        // mov x3, #0x12345 is movz #0x2345 ; movk #0x1, lsl #16.
        assert_eq!(
            one(|a| a.mov_imm(X(3), 0x12345)),
            vec![0xd284_68a3, 0xf2a0_0023]
        );
        // -2 is movn #1.
        assert_eq!(one(|a| a.mov_imm(X(3), -2)), vec![0x9280_0023]);
    }

    #[test]
    fn branches_resolve_forward_and_backward() {
        let words = one(crate::gnu_as::forward_and_backward([
            |a, l| a.cbz(X(3), l),
            |a, l| a.b_cond(Cond::Ne, l),
            |a, l| a.b(l),
            |a, l| a.cbnz(X(4), l),
        ]));
        // cbz x3, .+12 ; b.ne .+8 ; b .-8 ; cbnz x4, .-12
        assert_eq!(
            words,
            vec![0xb400_0063, 0x5400_0041, 0x17ff_fffe, 0xb5ff_ffa4]
        );
        let mut a = Asm::new();
        let l = a.label();
        a.b(l);
        assert!(a.finish().is_none(), "an unbound label is refused");
    }

    #[test]
    fn out_of_range_offsets_are_refused() {
        let mut a = Asm::new();
        assert!(!a.ldr_imm(Size::D, X(1), X(2), 4));
        assert!(!a.ldr_imm(Size::D, X(1), X(2), 8 * 4096));
        assert!(!a.add_imm(X(1), X(2), 4096));
        assert!(a.units().is_empty());
    }

    /// Assembles the listing with GNU as when the cross binutils are
    /// installed (and fails without them under `ATOMLAB_REQUIRE_CROSS=1`)
    /// and compares every word with ours: a check that the expected words
    /// above were copied right.
    #[test]
    fn listing_assembles_to_the_same_words_with_binutils() {
        let lines: Vec<_> = listing()
            .into_iter()
            .map(|(t, w, f)| (t, w, one(|a| f(a))))
            .collect();
        let args = ["-march=armv8.4-a+lse+rcpc"];
        crate::gnu_as::compare(
            "aarch64-linux-gnu",
            &args,
            "binutils-aarch64-linux-gnu",
            &lines,
        );
    }
}
