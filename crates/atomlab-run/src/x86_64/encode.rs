//! A small x86-64 encoder for the few instructions litmus tests need: 64-bit
//! moves between registers, immediates and memory addressed by a base
//! register, ALU operations, `MFENCE`/`LFENCE`/`SFENCE`, `XCHG`,
//! `LOCK XADD`/`CMPXCHG`/`ADD`/`OR`/`AND`/`XOR`, `SETcc`/`CMOVcc`/`Jcc`,
//! `PUSH`/`POP` and `RET`.
//!
//! Encodings follow the Intel 64 and IA-32 Architectures Software
//! Developer's Manual, vol. 2 (chapter 2: REX prefixes, ModR/M and SIB
//! bytes; the instruction pages of chapters 3–4 for the opcodes). The unit
//! tests compare against bytes produced by GNU objdump
//! (`objdump -D -b binary -m i386:x86-64`).

use crate::buffer::{signed_offset, Buffer, Fixup, Label};
pub(crate) use crate::operand::Cond;

/// A general-purpose register, numbered as in the SDM's register field
/// (RAX = 0 … R15 = 15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Gpr(pub u8);

#[allow(missing_docs)]
impl Gpr {
    pub(crate) const RAX: Gpr = Gpr(0);
    pub(crate) const RCX: Gpr = Gpr(1);
    pub(crate) const RDX: Gpr = Gpr(2);
    pub(crate) const RBX: Gpr = Gpr(3);
    #[cfg(test)] // the stack pointer: only the encoder's tests address through it
    pub(crate) const RSP: Gpr = Gpr(4);
    pub(crate) const RBP: Gpr = Gpr(5);
    pub(crate) const RSI: Gpr = Gpr(6);
    pub(crate) const RDI: Gpr = Gpr(7);
    pub(crate) const R8: Gpr = Gpr(8);
    pub(crate) const R9: Gpr = Gpr(9);
    pub(crate) const R10: Gpr = Gpr(10);
    pub(crate) const R11: Gpr = Gpr(11);
    pub(crate) const R12: Gpr = Gpr(12);
    pub(crate) const R13: Gpr = Gpr(13);
    pub(crate) const R14: Gpr = Gpr(14);
    pub(crate) const R15: Gpr = Gpr(15);

    fn low(self) -> u8 {
        self.0 & 7
    }
}

/// ALU operations with the `op r/m64, r64` and `81 /digit` forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alu {
    /// ADD
    Add,
    /// OR
    Or,
    /// AND
    And,
    /// SUB
    Sub,
    /// XOR
    Xor,
    /// CMP
    Cmp,
}

impl Alu {
    /// The `op r/m64, r64` opcode byte.
    fn rm_reg(self) -> u8 {
        match self {
            Alu::Add => 0x01,
            Alu::Or => 0x09,
            Alu::And => 0x21,
            Alu::Sub => 0x29,
            Alu::Xor => 0x31,
            Alu::Cmp => 0x39,
        }
    }

    /// The `/digit` of the `81 /digit id` form.
    #[cfg(test)] // the encoder's tests against GNU as; no generator emits it
    fn digit(self) -> u8 {
        match self {
            Alu::Add => 0,
            Alu::Or => 1,
            Alu::And => 4,
            Alu::Sub => 5,
            Alu::Xor => 6,
            Alu::Cmp => 7,
        }
    }
}

/// The condition's `tttn` nibble, the low nibble of `Jcc`/`SETcc`/`CMOVcc`
/// (SDM vol. 2, appendix B.1.4.7).
fn tttn(c: Cond) -> u8 {
    match c {
        Cond::Ltu => 0x2, // B
        Cond::Geu => 0x3, // AE
        Cond::Eq => 0x4,  // E
        Cond::Ne => 0x5,  // NE
        Cond::Leu => 0x6, // BE
        Cond::Gtu => 0x7, // A
        Cond::Lt => 0xC,  // L
        Cond::Ge => 0xD,  // GE
        Cond::Le => 0xE,  // LE
        Cond::Gt => 0xF,  // G
    }
}

/// How a jump holds its target: a 32-bit displacement from the end of
/// the field (`Jcc rel32`, `JMP rel32`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rel32;

impl Fixup for Rel32 {
    type Unit = u8;

    fn patch(self, code: &mut [u8], at: usize, target: usize) -> Option<()> {
        let rel = i32::try_from(signed_offset(at + 4, target, 1, 32)?).ok()?;
        code[at..at + 4].copy_from_slice(&rel.to_le_bytes());
        Some(())
    }
}

/// An instruction buffer of bytes with labels for forward and backward
/// jumps (see [`crate::buffer`]).
pub(crate) type Asm = Buffer<Rel32>;

impl Asm {
    fn rex(&mut self, w: bool, reg: u8, base: u8, force: bool) {
        let r = 0x40 | (u8::from(w) << 3) | ((reg >> 3) & 1) << 2 | ((base >> 3) & 1);
        if r != 0x40 || force {
            self.emit(r);
        }
    }

    /// ModR/M (and SIB, displacement) for `[base + disp]` with `reg` in the
    /// reg field (SDM vol. 2, tables 2-2 and 2-3): RSP/R12 as a base need a
    /// SIB byte; RBP/R13 with mod 00 would mean RIP-relative, so they take a
    /// zero disp8.
    fn modrm_mem(&mut self, reg: u8, base: Gpr, disp: i32) {
        let (md, d8) = if disp == 0 && base.low() != 5 {
            (0u8, false)
        } else if i8::try_from(disp).is_ok() {
            (1, true)
        } else {
            (2, false)
        };
        self.emit((md << 6) | ((reg & 7) << 3) | base.low());
        if base.low() == 4 {
            self.emit(0x24);
        }
        match md {
            1 if d8 => self.emit(disp as i8 as u8),
            2 => self.emit_all(&disp.to_le_bytes()),
            _ => {}
        }
    }

    fn modrm_reg(&mut self, reg: u8, rm: Gpr) {
        self.emit(0xC0 | ((reg & 7) << 3) | rm.low());
    }

    /// `op r64, [base+disp]` or `op [base+disp], r64` with a REX.W prefix.
    fn mem_op(&mut self, lock: bool, opcode: &[u8], reg: u8, base: Gpr, disp: i32) {
        if lock {
            self.emit(0xF0);
        }
        self.rex(true, reg, base.0, false);
        self.emit_all(opcode);
        self.modrm_mem(reg, base, disp);
    }

    fn reg_op(&mut self, opcode: &[u8], reg: u8, rm: Gpr) {
        self.rex(true, reg, rm.0, false);
        self.emit_all(opcode);
        self.modrm_reg(reg, rm);
    }

    /// `MOV dst, [base+disp]` (REX.W 8B /r).
    pub(crate) fn load(&mut self, dst: Gpr, base: Gpr, disp: i32) {
        self.mem_op(false, &[0x8B], dst.0, base, disp);
    }

    /// `MOV r32, [base+disp]` (8B /r): a 32-bit load, zero-extended.
    #[cfg(test)] // the encoder's tests against GNU as; no generator emits it
    pub(crate) fn load32(&mut self, dst: Gpr, base: Gpr, disp: i32) {
        self.rex(false, dst.0, base.0, false);
        self.emit(0x8B);
        self.modrm_mem(dst.0, base, disp);
    }

    /// `MOV [base+disp], src` (REX.W 89 /r).
    pub(crate) fn store(&mut self, base: Gpr, disp: i32, src: Gpr) {
        self.mem_op(false, &[0x89], src.0, base, disp);
    }

    /// `MOV [base+disp], r32` (89 /r): a 32-bit store.
    #[cfg(test)] // the encoder's tests against GNU as; no generator emits it
    pub(crate) fn store32(&mut self, base: Gpr, disp: i32, src: Gpr) {
        self.rex(false, src.0, base.0, false);
        self.emit(0x89);
        self.modrm_mem(src.0, base, disp);
    }

    /// `MOV QWORD [base+disp], imm32` sign-extended (REX.W C7 /0 id).
    pub(crate) fn store_imm(&mut self, base: Gpr, disp: i32, imm: i32) {
        self.mem_op(false, &[0xC7], 0, base, disp);
        self.emit_all(&imm.to_le_bytes());
    }

    /// `MOV dst, src` (REX.W 89 /r).
    pub(crate) fn mov(&mut self, dst: Gpr, src: Gpr) {
        self.reg_op(&[0x89], src.0, dst);
    }

    /// `MOV dst, imm`: `REX.W C7 /0 id` when it fits a sign-extended
    /// 32-bit immediate, else `REX.W B8+r io`.
    pub(crate) fn mov_imm(&mut self, dst: Gpr, imm: i64) {
        match i32::try_from(imm) {
            Ok(i) => {
                self.reg_op(&[0xC7], 0, dst);
                self.emit_all(&i.to_le_bytes());
            }
            Err(_) => {
                self.rex(true, 0, dst.0, false);
                self.emit(0xB8 + dst.low());
                self.emit_all(&imm.to_le_bytes());
            }
        }
    }

    /// `op dst, src` for the ALU operations (REX.W op /r).
    pub(crate) fn alu(&mut self, op: Alu, dst: Gpr, src: Gpr) {
        self.reg_op(&[op.rm_reg()], src.0, dst);
    }

    /// `op dst, imm32` (REX.W 81 /digit id).
    #[cfg(test)] // the encoder's tests against GNU as; no generator emits it
    pub(crate) fn alu_imm(&mut self, op: Alu, dst: Gpr, imm: i32) {
        self.reg_op(&[0x81], op.digit(), dst);
        self.emit_all(&imm.to_le_bytes());
    }

    /// `LOCK op [base+disp], src` (F0 REX.W op /r), for ADD/OR/AND/XOR/SUB.
    pub(crate) fn lock_alu_mem(&mut self, op: Alu, base: Gpr, disp: i32, src: Gpr) {
        self.mem_op(true, &[op.rm_reg()], src.0, base, disp);
    }

    /// `IMUL dst, src` (REX.W 0F AF /r).
    pub(crate) fn imul(&mut self, dst: Gpr, src: Gpr) {
        self.reg_op(&[0x0F, 0xAF], dst.0, src);
    }

    /// `NEG r` (REX.W F7 /3).
    pub(crate) fn neg(&mut self, r: Gpr) {
        self.reg_op(&[0xF7], 3, r);
    }

    /// `NOT r` (REX.W F7 /2).
    pub(crate) fn not(&mut self, r: Gpr) {
        self.reg_op(&[0xF7], 2, r);
    }

    /// `SHL r, imm8` (REX.W C1 /4 ib).
    pub(crate) fn shl_imm(&mut self, r: Gpr, n: u8) {
        self.reg_op(&[0xC1], 4, r);
        self.emit(n);
    }

    /// `SHR r, imm8` (REX.W C1 /5 ib).
    pub(crate) fn shr_imm(&mut self, r: Gpr, n: u8) {
        self.reg_op(&[0xC1], 5, r);
        self.emit(n);
    }

    /// `TEST a, b` (REX.W 85 /r).
    pub(crate) fn test(&mut self, a: Gpr, b: Gpr) {
        self.reg_op(&[0x85], b.0, a);
    }

    /// `SETcc r8; MOVZX r64, r8`: `r` := 1 if the condition holds, else 0.
    /// A REX prefix is always emitted so that registers 4–7 name SPL–DIL,
    /// not AH–BH (SDM vol. 2, 3.1.1.1, "REX prefix and byte registers").
    pub(crate) fn set(&mut self, c: Cond, r: Gpr) {
        self.rex(false, 0, r.0, true);
        self.emit_all(&[0x0F, 0x90 | tttn(c)]);
        self.modrm_reg(0, r);
        self.reg_op(&[0x0F, 0xB6], r.0, r);
    }

    /// `CMOVcc dst, src` (REX.W 0F 40+cc /r).
    pub(crate) fn cmov(&mut self, c: Cond, dst: Gpr, src: Gpr) {
        self.reg_op(&[0x0F, 0x40 | tttn(c)], dst.0, src);
    }

    /// `MFENCE` (0F AE F0).
    pub(crate) fn mfence(&mut self) {
        self.emit_all(&[0x0F, 0xAE, 0xF0]);
    }

    /// `LFENCE` (0F AE E8).
    pub(crate) fn lfence(&mut self) {
        self.emit_all(&[0x0F, 0xAE, 0xE8]);
    }

    /// `SFENCE` (0F AE F8).
    pub(crate) fn sfence(&mut self) {
        self.emit_all(&[0x0F, 0xAE, 0xF8]);
    }

    /// `XCHG [base+disp], r` (REX.W 87 /r): locked without a prefix.
    pub(crate) fn xchg_mem(&mut self, base: Gpr, disp: i32, r: Gpr) {
        self.mem_op(false, &[0x87], r.0, base, disp);
    }

    /// `LOCK XADD [base+disp], r` (F0 REX.W 0F C1 /r).
    pub(crate) fn lock_xadd(&mut self, base: Gpr, disp: i32, r: Gpr) {
        self.mem_op(true, &[0x0F, 0xC1], r.0, base, disp);
    }

    /// `LOCK CMPXCHG [base+disp], r` (F0 REX.W 0F B1 /r): compares with RAX.
    pub(crate) fn lock_cmpxchg(&mut self, base: Gpr, disp: i32, r: Gpr) {
        self.mem_op(true, &[0x0F, 0xB1], r.0, base, disp);
    }

    /// `DEC QWORD [base+disp]` (REX.W FF /1).
    pub(crate) fn dec_mem(&mut self, base: Gpr, disp: i32) {
        self.mem_op(false, &[0xFF], 1, base, disp);
    }

    /// `Jcc rel32` (0F 80+cc cd).
    pub(crate) fn jcc(&mut self, c: Cond, l: Label) {
        self.emit_all(&[0x0F, 0x80 | tttn(c)]);
        self.branch_here(l, Rel32);
        self.emit_all(&[0; 4]);
    }

    /// `JMP rel32` (E9 cd).
    pub(crate) fn jmp(&mut self, l: Label) {
        self.emit(0xE9);
        self.branch_here(l, Rel32);
        self.emit_all(&[0; 4]);
    }

    /// `PUSH r` (50+rd, REX.B for R8–R15).
    pub(crate) fn push(&mut self, r: Gpr) {
        self.rex(false, 0, r.0, false);
        self.emit(0x50 + r.low());
    }

    /// `POP r` (58+rd, REX.B for R8–R15).
    pub(crate) fn pop(&mut self, r: Gpr) {
        self.rex(false, 0, r.0, false);
        self.emit(0x58 + r.low());
    }

    /// `RET` (C3).
    pub(crate) fn ret(&mut self) {
        self.emit(0xC3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(f: impl FnOnce(&mut Asm)) -> Vec<u8> {
        let mut a = Asm::new();
        f(&mut a);
        a.finish().expect("labels bound")
    }

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).expect("hex"))
            .collect()
    }

    // Expected bytes: GNU as (binutils 2.40) on this machine, shown by
    // `objdump -d -M intel`; where as picks a shorter form (`or r15,1` as
    // 83 /1 ib, `shr r9,1` as D1 /5) our longer form was checked with
    // `objdump -D -b binary -m i386:x86-64` instead.
    #[test]
    fn loads_and_stores_match_objdump() {
        // mov rax,[rbx]
        assert_eq!(one(|a| a.load(Gpr::RAX, Gpr::RBX, 0)), hex("48 8b 03"));
        // mov r9,[r12]  (SIB for r12)
        assert_eq!(one(|a| a.load(Gpr::R9, Gpr::R12, 0)), hex("4d 8b 0c 24"));
        // mov rdx,[r13]  (disp8 0 for r13)
        assert_eq!(one(|a| a.load(Gpr::RDX, Gpr::R13, 0)), hex("49 8b 55 00"));
        // mov rcx,[rdi+0x10]
        assert_eq!(one(|a| a.load(Gpr::RCX, Gpr::RDI, 16)), hex("48 8b 4f 10"));
        // mov r15,[rdi+0x200]
        assert_eq!(
            one(|a| a.load(Gpr::R15, Gpr::RDI, 0x200)),
            hex("4c 8b bf 00 02 00 00")
        );
        // mov eax,[rbx]
        assert_eq!(one(|a| a.load32(Gpr::RAX, Gpr::RBX, 0)), hex("8b 03"));
        // mov [rsp],rbp
        assert_eq!(one(|a| a.store(Gpr::RSP, 0, Gpr::RBP)), hex("48 89 2c 24"));
        // mov [rbp+0x8],r11
        assert_eq!(one(|a| a.store(Gpr::RBP, 8, Gpr::R11)), hex("4c 89 5d 08"));
        // mov [r8],r10d
        assert_eq!(one(|a| a.store32(Gpr::R8, 0, Gpr::R10)), hex("45 89 10"));
        // mov QWORD PTR [rbx],0x1
        assert_eq!(
            one(|a| a.store_imm(Gpr::RBX, 0, 1)),
            hex("48 c7 03 01 00 00 00")
        );
        // mov QWORD PTR [r12],0xffffffffffffffff
        assert_eq!(
            one(|a| a.store_imm(Gpr::R12, 0, -1)),
            hex("49 c7 04 24 ff ff ff ff")
        );
    }

    #[test]
    fn register_ops_match_objdump() {
        // mov rbx,r14
        assert_eq!(one(|a| a.mov(Gpr::RBX, Gpr::R14)), hex("4c 89 f3"));
        // mov rax,0x2a
        assert_eq!(
            one(|a| a.mov_imm(Gpr::RAX, 42)),
            hex("48 c7 c0 2a 00 00 00")
        );
        // movabs r10,0x123456789
        assert_eq!(
            one(|a| a.mov_imm(Gpr::R10, 0x1_2345_6789)),
            hex("49 ba 89 67 45 23 01 00 00 00")
        );
        // add rcx,rdx ; sub r8,rax ; xor r11,r11 ; cmp rsi,r9
        assert_eq!(
            one(|a| a.alu(Alu::Add, Gpr::RCX, Gpr::RDX)),
            hex("48 01 d1")
        );
        assert_eq!(one(|a| a.alu(Alu::Sub, Gpr::R8, Gpr::RAX)), hex("49 29 c0"));
        assert_eq!(
            one(|a| a.alu(Alu::Xor, Gpr::R11, Gpr::R11)),
            hex("4d 31 db")
        );
        assert_eq!(one(|a| a.alu(Alu::Cmp, Gpr::RSI, Gpr::R9)), hex("4c 39 ce"));
        // and rbp,0xff ; or r15,0x1
        assert_eq!(
            one(|a| a.alu_imm(Alu::And, Gpr::RBP, 0xff)),
            hex("48 81 e5 ff 00 00 00")
        );
        assert_eq!(
            one(|a| a.alu_imm(Alu::Or, Gpr::R15, 1)),
            hex("49 81 cf 01 00 00 00")
        );
        // imul rax,r12 ; neg r11 ; not rsi ; shl rdx,0x3 ; shr r9,0x1
        assert_eq!(one(|a| a.imul(Gpr::RAX, Gpr::R12)), hex("49 0f af c4"));
        assert_eq!(one(|a| a.neg(Gpr::R11)), hex("49 f7 db"));
        assert_eq!(one(|a| a.not(Gpr::RSI)), hex("48 f7 d6"));
        assert_eq!(one(|a| a.shl_imm(Gpr::RDX, 3)), hex("48 c1 e2 03"));
        assert_eq!(one(|a| a.shr_imm(Gpr::R9, 1)), hex("49 c1 e9 01"));
        // test rax,rax
        assert_eq!(one(|a| a.test(Gpr::RAX, Gpr::RAX)), hex("48 85 c0"));
        // sete sil ; movzx rsi,sil
        assert_eq!(
            one(|a| a.set(Cond::Eq, Gpr::RSI)),
            hex("40 0f 94 c6 48 0f b6 f6")
        );
        // setl r11b ; movzx r11,r11b
        assert_eq!(
            one(|a| a.set(Cond::Lt, Gpr::R11)),
            hex("41 0f 9c c3 4d 0f b6 db")
        );
        // jb, jae, je, jne, jbe, ja, jl, jge, jle, jg (0F 8x, the SDM's
        // Jcc page), each to its own end: a zero rel32.
        let jumps = [
            (Cond::Ltu, 0x82),
            (Cond::Geu, 0x83),
            (Cond::Eq, 0x84),
            (Cond::Ne, 0x85),
            (Cond::Leu, 0x86),
            (Cond::Gtu, 0x87),
            (Cond::Lt, 0x8c),
            (Cond::Ge, 0x8d),
            (Cond::Le, 0x8e),
            (Cond::Gt, 0x8f),
        ];
        for (c, op) in jumps {
            let code = one(|a| {
                let l = a.label();
                a.jcc(c, l);
                a.bind(l);
            });
            assert_eq!(code, vec![0x0f, op, 0, 0, 0, 0], "{c:?}");
        }
        // cmovne rax,r13
        assert_eq!(
            one(|a| a.cmov(Cond::Ne, Gpr::RAX, Gpr::R13)),
            hex("49 0f 45 c5")
        );
        // push rbx ; push r12 ; pop r12 ; pop rbx ; ret
        assert_eq!(
            one(|a| {
                a.push(Gpr::RBX);
                a.push(Gpr::R12);
                a.pop(Gpr::R12);
                a.pop(Gpr::RBX);
                a.ret();
            }),
            hex("53 41 54 41 5c 5b c3")
        );
    }

    #[test]
    fn fences_and_locked_ops_match_objdump() {
        let bytes = one(|a| {
            a.mfence();
            a.lfence();
            a.sfence();
        });
        assert_eq!(bytes, hex("0f ae f0 0f ae e8 0f ae f8"));
        // xchg [rbx],rax
        assert_eq!(one(|a| a.xchg_mem(Gpr::RBX, 0, Gpr::RAX)), hex("48 87 03"));
        // lock xadd [r12],rax
        assert_eq!(
            one(|a| a.lock_xadd(Gpr::R12, 0, Gpr::RAX)),
            hex("f0 49 0f c1 04 24")
        );
        // lock cmpxchg [rbp+0x0],r11
        assert_eq!(
            one(|a| a.lock_cmpxchg(Gpr::RBP, 0, Gpr::R11)),
            hex("f0 4c 0f b1 5d 00")
        );
        // lock or [rcx],rdx ; lock add [r14],r11
        assert_eq!(
            one(|a| a.lock_alu_mem(Alu::Or, Gpr::RCX, 0, Gpr::RDX)),
            hex("f0 48 09 11")
        );
        assert_eq!(
            one(|a| a.lock_alu_mem(Alu::Add, Gpr::R14, 0, Gpr::R11)),
            hex("f0 4d 01 1e")
        );
        // dec QWORD PTR [rdi+0x18]
        assert_eq!(one(|a| a.dec_mem(Gpr::RDI, 0x18)), hex("48 ff 4f 18"));
    }

    #[test]
    fn jumps_resolve_forward_and_backward() {
        let bytes = one(|a| {
            let top = a.label();
            let end = a.label();
            a.bind(top);
            a.jcc(Cond::Ne, end); // 0f 85 rel32 -> +5 (over the jmp)
            a.jmp(top); // e9 rel32 -> -11
            a.bind(end);
            a.ret();
        });
        assert_eq!(bytes, hex("0f 85 05 00 00 00 e9 f5 ff ff ff c3"));
        let mut a = Asm::new();
        let l = a.label();
        a.jmp(l);
        assert!(a.finish().is_none(), "an unbound label is refused");
    }
}
