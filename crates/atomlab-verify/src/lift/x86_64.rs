//! x86-64 to checker instructions, following the Intel 64 and IA-32
//! Architectures Software Developer's Manual (Intel SDM): vol. 2 for each
//! instruction's operation (a 32-bit register write zero-extends to 64
//! bits, 8- and 16-bit writes keep the other bits; the flags each
//! instruction sets), vol. 3A §9.1.2 "Guaranteed Atomic Operations" and
//! "Software Controlled Bus Locking" (XCHG with memory is locked without
//! a LOCK prefix) and vol. 3A §10.2 "Memory Ordering" for what the models
//! judge. Decoding is iced-x86's, with only its decoder compiled in, as in
//! atomlab-audit.
//!
//! How a function becomes events (the scheme of the aarch64 lifter,
//! through `super::flow`):
//! - Followed from its entry along every path: `call rel32` into the file
//!   is inlined (the return address takes its 8 bytes of stack; the
//!   callee's `ret` returns to the call), `jmp` is a jump (a tail call
//!   included), `ret` of the entry function ends it. A call to a PLT stub
//!   or through a GOT slot is refused by the imported function's name;
//!   `syscall` and an indirect jump are refused.
//! - A forward analysis resolves every memory operand to (object, byte
//!   offset): `rdi` holds the object, `rsp` the stack (a stack slot is a
//!   register of the thread; PUSH and POP are stores and loads of slots);
//!   `disp(base,index,scale)` with an index masked to a few values
//!   resolves to one of a few fields ([`super::index`]).
//! - Accesses are lowered as atomlab-litmus lowers the same mnemonic in an
//!   X86_64 litmus test (x86_64.rs): MOV is a plain load or store, XCHG
//!   with memory and a LOCK'd ADD/SUB/AND/OR/XOR/INC/DEC/XADD/BTS/CMPXCHG
//!   are a locked read and a locked write (an RMW; x86-TSO makes them full
//!   barriers), MFENCE/LFENCE/SFENCE are fences, PAUSE and NOPs are
//!   nothing; an ALU instruction on memory without LOCK is a plain load
//!   and a plain store.
//! - Flags: CMP and SUB keep their two operands, TEST/AND/OR/XOR and the
//!   arithmetic ones their result (as `%flags.a`, `%flags.b`, the parser's
//!   names), and Jcc, SETcc and CMOVcc compare them; a 32-bit signed
//!   condition compares with the sign bits flipped, unsigned. A condition
//!   on flags the analysis cannot tell the origin of is refused.

use std::collections::BTreeMap;

use atomlab_audit::{PluginFile, Pointer};
use atomlab_litmus::{Annot, BinOp, CasExpected, Expr, Fence, Instr, RmwOp, Value};
use iced_x86::{Decoder, DecoderOptions, Instruction, MemorySize, Mnemonic, OpKind, Register};

use super::flow::{self, narrow, narrow_int, sext, sext_int, Abs, Ctx, Low, Step, Target};
use super::heap;
use super::index::{self, Span};
use super::lifter::{Lifted, Lifter, Refusal};
use super::state::{Locations, Registers};

/// The x86-64 lifter (see [`super::lifter`]).
pub struct X86_64;

impl Lifter for X86_64 {
    fn first_argument(&self) -> &'static str {
        "rdi"
    }
    fn second_argument(&self) -> &'static str {
        "rsi"
    }
    fn result(&self) -> &'static str {
        "rax"
    }
    /// iced-x86's Intel-syntax disassembly.
    fn disassemble(&self, file: &PluginFile<'_>, addr: u64) -> Option<String> {
        use iced_x86::Formatter;
        let bytes = file.code_at(addr)?;
        let mut d = iced_x86::Decoder::with_ip(64, bytes, addr, iced_x86::DecoderOptions::NONE);
        let i = d.decode();
        if i.is_invalid() {
            return None;
        }
        let mut out = String::new();
        iced_x86::IntelFormatter::new().format(&i, &mut out);
        Some(out)
    }
    fn full_barrier(&self) -> Option<(atomlab_litmus::Fence, &'static str)> {
        Some((atomlab_litmus::Fence::Mfence, "mfence"))
    }
    fn litmus_arch(&self) -> atomlab_litmus::Arch {
        atomlab_litmus::Arch::X86_64
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
        let mut r = [Abs::Unknown; 16];
        // The return address is at 0(%rsp) on entry.
        r[RSP] = Abs::Stack(0);
        r[RDI] = Abs::Obj(obj, 0);
        // Pointer arguments (pop's item) point to their objects (System V
        // AMD64: rsi, rdx, rcx, r8, r9).
        for &(n, o) in &regs.pointers {
            if let Some(&r_n) = [RSI, 2, 1, 8, 9].get(n.wrapping_sub(1)) {
                r[r_n] = Abs::Obj(o, 0);
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
                r,
                stack: BTreeMap::new(),
                flags: Flags::None,
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

/// The file address the function at `entry` returns in `rax`, when every
/// path returns the same one (`atomlab_plugin`'s `return &plugin;` at any
/// optimisation level: `lea plugin(%rip),%rax; ret`, or with a frame at
/// -O0).
pub fn returned_address(file: &PluginFile<'_>, entry: u64) -> Option<u64> {
    let mut r = [Abs::Unknown; 16];
    r[RSP] = Abs::Stack(0);
    let mut regs = Registers::default();
    let mut m = Machine {
        file,
        regs: &mut regs,
        root: entry,
        follow_heap: false,
        pending: Vec::new(),
    };
    let start = State {
        r,
        stack: BTreeMap::new(),
        flags: Flags::None,
    };
    let exits = flow::exit_states(&mut m, entry, start).ok()?;
    let mut at = None;
    for e in exits {
        match (e.r[RAX], at) {
            (Abs::File(a), None) => at = Some(a),
            (Abs::File(a), Some(b)) if a == b => {}
            _ => return None,
        }
    }
    at
}

/// The general-purpose registers in encoding order, by their 64-bit
/// names (the parser's canonical names).
const GPR: [&str; 16] = [
    "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15",
];
const RAX: usize = 0;
const RSP: usize = 4;
const RBP: usize = 5;
const RSI: usize = 6;
const RDI: usize = 7;

/// The scale of a memory operand's index (1, 2, 4 or 8).
fn span_scale(inst: &Instruction) -> i64 {
    i64::from(inst.memory_index_scale())
}

/// A general-purpose register's number and width in bytes (`None`: not a
/// general-purpose register, or AH/BH/CH/DH, which are not followed).
fn gpr(r: Register) -> Option<(usize, u8)> {
    let v = r as u32;
    let at = |first: Register| v.checked_sub(first as u32).filter(|i| *i < 16);
    if let Some(i) = at(Register::RAX) {
        return Some((i as usize, 8));
    }
    if let Some(i) = at(Register::EAX) {
        return Some((i as usize, 4));
    }
    if let Some(i) = at(Register::AX) {
        return Some((i as usize, 2));
    }
    match r {
        Register::AL => Some((0, 1)),
        Register::CL => Some((1, 1)),
        Register::DL => Some((2, 1)),
        Register::BL => Some((3, 1)),
        _ => v
            .checked_sub(Register::SPL as u32)
            .filter(|i| *i < 12)
            .map(|i| (i as usize + 4, 1)),
    }
}

/// Bytes a memory operand accesses (iced-x86's own `MemorySize::size`
/// needs its larger `instr_info` tables).
fn access_size(m: MemorySize) -> Option<u8> {
    match m {
        MemorySize::UInt8 | MemorySize::Int8 => Some(1),
        MemorySize::UInt16 | MemorySize::Int16 => Some(2),
        MemorySize::UInt32 | MemorySize::Int32 => Some(4),
        MemorySize::UInt64 | MemorySize::Int64 => Some(8),
        _ => None,
    }
}

/// The condition of a Jcc, SETcc or CMOVcc (Intel SDM vol. 1, B.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cc {
    E,
    Ne,
    B,
    Ae,
    Be,
    A,
    L,
    Ge,
    Le,
    G,
    S,
    Ns,
}

/// Which instruction uses a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CcUse {
    Jump,
    Set,
    Move,
}

fn cc_of(m: Mnemonic) -> Option<(Cc, CcUse)> {
    use Mnemonic::*;
    let (j, s, c) = (CcUse::Jump, CcUse::Set, CcUse::Move);
    Some(match m {
        Je => (Cc::E, j),
        Sete => (Cc::E, s),
        Cmove => (Cc::E, c),
        Jne => (Cc::Ne, j),
        Setne => (Cc::Ne, s),
        Cmovne => (Cc::Ne, c),
        Jb => (Cc::B, j),
        Setb => (Cc::B, s),
        Cmovb => (Cc::B, c),
        Jae => (Cc::Ae, j),
        Setae => (Cc::Ae, s),
        Cmovae => (Cc::Ae, c),
        Jbe => (Cc::Be, j),
        Setbe => (Cc::Be, s),
        Cmovbe => (Cc::Be, c),
        Ja => (Cc::A, j),
        Seta => (Cc::A, s),
        Cmova => (Cc::A, c),
        Jl => (Cc::L, j),
        Setl => (Cc::L, s),
        Cmovl => (Cc::L, c),
        Jge => (Cc::Ge, j),
        Setge => (Cc::Ge, s),
        Cmovge => (Cc::Ge, c),
        Jle => (Cc::Le, j),
        Setle => (Cc::Le, s),
        Cmovle => (Cc::Le, c),
        Jg => (Cc::G, j),
        Setg => (Cc::G, s),
        Cmovg => (Cc::G, c),
        Js => (Cc::S, j),
        Sets => (Cc::S, s),
        Cmovs => (Cc::S, c),
        Jns => (Cc::Ns, j),
        Setns => (Cc::Ns, s),
        Cmovns => (Cc::Ns, c),
        _ => return None,
    })
}

/// What the flags were last set by; their values are `%flags.a` and
/// `%flags.b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flags {
    None,
    /// CMP/SUB `a - b` at this width.
    Sub(u8),
    /// TEST/AND/OR/XOR: the result `a` (`b` is 0); CF = OF = 0.
    Logic(u8),
    /// ADD/INC/DEC and the locked arithmetic: the result `a`; only ZF
    /// and SF are followed.
    Result(u8),
    /// LOCK CMPXCHG: `a` the expected value, `b` the value read; ZF is
    /// their equality.
    Cas,
    /// LOCK BTS: `a` the bit's old value, which CF holds.
    Bit,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    r: [Abs; 16],
    stack: BTreeMap<i64, Abs>,
    flags: Flags,
}

/// A resolved memory operand.
enum Mem {
    Loc(Expr),
    Stack(i64),
}

/// A source operand's value and what the analysis knows of it.
struct Val {
    e: Expr,
    a: Abs,
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

fn name(inst: &Instruction) -> String {
    format!(
        "{}{}",
        if inst.has_lock_prefix() { "lock " } else { "" },
        format!("{:?}", inst.mnemonic()).to_ascii_lowercase()
    )
}

fn is_mem(inst: &Instruction, i: u32) -> bool {
    inst.op_kind(i) == OpKind::Memory
}

impl Machine<'_, '_, '_> {
    fn refuse(&self, pc: u64, what: String) -> Refusal {
        flow::refusal(self.file, pc, what)
    }

    fn reg(&mut self, n: usize) -> atomlab_litmus::Reg {
        self.regs.get(GPR[n])
    }

    fn tmp(&mut self, name: &str) -> atomlab_litmus::Reg {
        self.regs.get(name)
    }

    fn stack_reg(&mut self, slot: i64) -> atomlab_litmus::Reg {
        self.regs.get(&format!("sp{slot:+}"))
    }

    /// The operand width of `inst` in bytes: its first register
    /// operand's, else its memory operand's.
    fn width(&self, inst: &Instruction, pc: u64) -> Result<u8, Refusal> {
        for i in 0..inst.op_count() {
            if inst.op_kind(i) == OpKind::Register {
                if let Some((_, w)) = gpr(inst.op_register(i)) {
                    return Ok(w);
                }
            }
            if is_mem(inst, i) {
                return access_size(inst.memory_size()).ok_or_else(|| {
                    self.refuse(
                        pc,
                        format!("{}: an access of this size is not followed", name(inst)),
                    )
                });
            }
        }
        Ok(8)
    }

    /// The memory operand of `inst` accessed with `width` bytes.
    fn mem(
        &mut self,
        inst: &Instruction,
        st: &State,
        width: u8,
        pc: u64,
        locs: Option<&mut Locations>,
    ) -> Result<Mem, Refusal> {
        if let Some((o, span, index_reg)) = self.indexed(inst, st) {
            // `disp(base, index, scale)` with a masked index: the slot
            // the index's value picks ([`index`]).
            let index_e = Expr::Reg(self.reg(index_reg));
            let Some(locs) = locs else {
                return Ok(Mem::Loc(Expr::int(0)));
            };
            let picked: Result<Vec<(i64, usize)>, String> = span
                .values()
                .map(|v| {
                    let field = o.1.wrapping_add(v.wrapping_mul(span_scale(inst)));
                    locs.field(o.0, field, width).map(|l| (v, l))
                })
                .collect();
            let candidates = picked.map_err(|e| self.refuse(pc, e))?;
            return Ok(Mem::Loc(index::select(index_e, &candidates, Expr::int(0))));
        }
        match self.address(inst, st, pc)? {
            (Abs::Obj(o, field), base) => {
                let l = match locs {
                    Some(locs) => locs.field(o, field, width).map_err(|e| self.refuse(pc, e))?,
                    None => 0,
                };
                // The base register joins the address with its value times
                // zero, as the other lifters do (x86-TSO has no dependency
                // order; the `sc` model none either: it only keeps the
                // register in the address, as written).
                let dep = Expr::bin(BinOp::And, Expr::Reg(self.reg(base)), Expr::int(0));
                Ok(Mem::Loc(Expr::bin(
                    BinOp::Add,
                    Expr::Const(Value::Loc(l)),
                    dep,
                )))
            }
            (Abs::Heap(site, field), base) => {
                let Some(locs) = locs else {
                    return Ok(Mem::Loc(Expr::int(0)));
                };
                let (l, checks) = heap::field_here(self.regs, locs, site, field, width)
                    .map_err(|e| self.refuse(pc, e))?;
                self.pending.extend(checks);
                let dep = Expr::bin(BinOp::And, Expr::Reg(self.reg(base)), Expr::int(0));
                Ok(Mem::Loc(Expr::bin(BinOp::Add, Expr::Const(Value::Loc(l)), dep)))
            }
            (Abs::Unknown, base)
                if self.follow_heap
                    && inst.memory_index() == Register::None
                    && gpr(inst.memory_base()).is_some_and(|(_, w)| w == 8) =>
            {
                let Some(locs) = locs else {
                    return Ok(Mem::Loc(Expr::int(0)));
                };
                if locs.heap.complete && locs.heap.regions.is_empty() {
                    return Err(self.refuse(pc, format!("{}: accesses memory at an address verify cannot resolve to a field of the object", name(inst))));
                }
                let ptr = Expr::Reg(self.reg(base));
                let disp = inst.memory_displacement64() as i64;
                let (addr, checks) = heap::select(self.regs, locs, ptr, disp, disp, width)
                    .map_err(|e| self.refuse(pc, e))?;
                self.pending.extend(checks);
                Ok(Mem::Loc(addr))
            }
            (Abs::Stack(slot), _) => Ok(Mem::Stack(slot)),
            (Abs::File(a), _) => Err(self.refuse(
                pc,
                format!(
                    "{}: accesses data of the file at {a:#x} ({}): verify models only the object the function is given",
                    name(inst),
                    self.file.describe(a)
                ),
            )),
            _ => Err(self.refuse(
                pc,
                format!(
                    "{}: accesses memory at an address verify cannot resolve to a field of the object",
                    name(inst)
                ),
            )),
        }
    }

    /// A memory operand `disp(base, index, scale)` whose base is an
    /// object's address and whose 64-bit index is masked to a few values:
    /// (object and offset of base + disp, the index's values, its register).
    fn indexed(&self, inst: &Instruction, st: &State) -> Option<((usize, i64), Span, usize)> {
        if inst.is_ip_rel_memory_operand() {
            return None;
        }
        let (i, 8) = gpr(inst.memory_index())? else {
            return None;
        };
        let Abs::Idx(span) = st.r[i] else { return None };
        let (b, 8) = gpr(inst.memory_base())? else {
            return None;
        };
        let Abs::Obj(o, off) = st.r[b] else {
            return None;
        };
        Some((
            (o, off.wrapping_add(inst.memory_displacement64() as i64)),
            span,
            i,
        ))
    }

    /// What the memory operand's address is (and its base register).
    fn address(
        &mut self,
        inst: &Instruction,
        st: &State,
        pc: u64,
    ) -> Result<(Abs, usize), Refusal> {
        if inst.is_ip_rel_memory_operand() {
            return Ok((Abs::File(inst.ip_rel_memory_address()), RAX));
        }
        let disp = inst.memory_displacement64() as i64;
        let base = inst.memory_base();
        let (mut a, b) = match base {
            Register::None => (Abs::Int(0), RAX),
            r => match gpr(r) {
                Some((n, 8)) => (st.r[n], n),
                _ => {
                    return Err(self.refuse(
                        pc,
                        format!(
                            "{}: a base register of this kind is not followed",
                            name(inst)
                        ),
                    ))
                }
            },
        };
        match inst.memory_index() {
            Register::None => {}
            r => match gpr(r).map(|(n, _)| st.r[n]) {
                Some(Abs::Int(i)) => {
                    a = a.plus(i.wrapping_mul(i64::from(inst.memory_index_scale())))
                }
                _ => {
                    return Err(self.refuse(
                        pc,
                        format!(
                            "{}: an index register verify cannot resolve to a constant",
                            name(inst)
                        ),
                    ))
                }
            },
        }
        Ok((a.plus(disp), b))
    }

    /// Operand `i` read at `width` bytes (a memory operand is loaded into
    /// `%ld` first, plainly).
    #[allow(clippy::too_many_arguments)]
    fn src(
        &mut self,
        inst: &Instruction,
        i: u32,
        st: &State,
        width: u8,
        pc: u64,
        locs: Option<&mut Locations>,
        low: &mut Vec<Low>,
    ) -> Result<Val, Refusal> {
        match inst.op_kind(i) {
            OpKind::Register => {
                let (n, w) = gpr(inst.op_register(i)).ok_or_else(|| {
                    self.refuse(
                        pc,
                        format!(
                            "{}: register {:?} is not followed",
                            name(inst),
                            inst.op_register(i)
                        ),
                    )
                })?;
                let e = narrow(Expr::Reg(self.reg(n)), w);
                let a = match st.r[n] {
                    Abs::Int(v) => Abs::Int(narrow_int(v, w)),
                    a if w == 8 => a,
                    _ => Abs::Unknown,
                };
                Ok(Val { e, a })
            }
            OpKind::Immediate8
            | OpKind::Immediate16
            | OpKind::Immediate32
            | OpKind::Immediate64
            | OpKind::Immediate8to16
            | OpKind::Immediate8to32
            | OpKind::Immediate8to64
            | OpKind::Immediate32to64 => {
                let v = narrow_int(inst.immediate(i) as i64, width);
                Ok(Val {
                    e: Expr::int(v),
                    a: Abs::Int(v),
                })
            }
            OpKind::Memory => match self.mem(inst, st, width, pc, locs)? {
                Mem::Loc(addr) => {
                    let t = self.tmp("%ld");
                    low.push(Low::I(Instr::Load {
                        dst: Some(t),
                        addr,
                        annot: Annot::default(),
                    }));
                    Ok(Val {
                        e: Expr::Reg(t),
                        a: Abs::Unknown,
                    })
                }
                Mem::Stack(slot) => {
                    let s = self.stack_reg(slot);
                    let a = match st.stack.get(&slot).copied().unwrap_or(Abs::Unknown) {
                        Abs::Int(v) => Abs::Int(narrow_int(v, width)),
                        a if width == 8 => a,
                        _ => Abs::Unknown,
                    };
                    Ok(Val {
                        e: narrow(Expr::Reg(s), width),
                        a,
                    })
                }
            },
            k => Err(self.refuse(
                pc,
                format!("{}: operand kind {k:?} is not followed", name(inst)),
            )),
        }
    }

    /// Writes `v` (`width` bytes) to register `n`: a 32-bit write
    /// zero-extends, an 8- or 16-bit one keeps the other bits (Intel SDM
    /// vol. 1, 3.4.1.1).
    fn write_reg(&mut self, out: &mut State, n: usize, width: u8, v: Val, low: &mut Vec<Low>) {
        let r = self.reg(n);
        let (expr, a) = match width {
            8 => (v.e, v.a),
            4 => (
                narrow(v.e, 4),
                match v.a {
                    Abs::Int(x) => Abs::Int(narrow_int(x, 4)),
                    Abs::Idx(s) if s.within(0xffff_ffff) => v.a,
                    _ => Abs::Unknown,
                },
            ),
            w => {
                let m = narrow_int(-1, w);
                (
                    Expr::bin(
                        BinOp::Or,
                        Expr::bin(BinOp::And, Expr::Reg(r), Expr::int(!m)),
                        Expr::bin(BinOp::And, v.e, Expr::int(m)),
                    ),
                    match (out.r[n], v.a) {
                        (Abs::Int(o), Abs::Int(x)) => Abs::Int((o & !m) | (x & m)),
                        _ => Abs::Unknown,
                    },
                )
            }
        };
        out.r[n] = a;
        low.push(Low::I(Instr::Assign { dst: r, expr }));
    }

    /// Writes `v` to operand `i`: a register, a stack slot or a field
    /// (a plain store).
    #[allow(clippy::too_many_arguments)]
    fn dst(
        &mut self,
        inst: &Instruction,
        i: u32,
        out: &mut State,
        st: &State,
        width: u8,
        v: Val,
        pc: u64,
        locs: Option<&mut Locations>,
        low: &mut Vec<Low>,
    ) -> Result<(), Refusal> {
        match inst.op_kind(i) {
            OpKind::Register => {
                let (n, w) = gpr(inst.op_register(i)).ok_or_else(|| {
                    self.refuse(
                        pc,
                        format!(
                            "{}: register {:?} is not followed",
                            name(inst),
                            inst.op_register(i)
                        ),
                    )
                })?;
                if n == RSP && !matches!(v.a, Abs::Stack(_)) {
                    return Err(self.refuse(
                        pc,
                        format!(
                            "{}: moves the stack pointer somewhere the analysis cannot follow",
                            name(inst)
                        ),
                    ));
                }
                self.write_reg(out, n, w, v, low);
                Ok(())
            }
            OpKind::Memory => {
                let value = narrow(v.e, width);
                match self.mem(inst, st, width, pc, locs)? {
                    Mem::Loc(addr) => {
                        if v.a.is_address() {
                            return Err(self.refuse(pc, format!("{}: stores a pointer to shared memory (linked structures are not modelled)", name(inst))));
                        }
                        low.push(Low::I(Instr::Store {
                            addr,
                            value,
                            annot: Annot::default(),
                        }));
                    }
                    Mem::Stack(slot) => {
                        let s = self.stack_reg(slot);
                        low.push(Low::I(Instr::Assign {
                            dst: s,
                            expr: value,
                        }));
                        out.stack.insert(
                            slot,
                            match v.a {
                                Abs::Int(x) => Abs::Int(narrow_int(x, width)),
                                a if width == 8 => a,
                                _ => Abs::Unknown,
                            },
                        );
                    }
                }
                Ok(())
            }
            k => Err(self.refuse(
                pc,
                format!("{}: destination kind {k:?} is not followed", name(inst)),
            )),
        }
    }

    fn set_flags(&mut self, a: Expr, b: Expr, low: &mut Vec<Low>) {
        let fa = self.tmp("%flags.a");
        let fb = self.tmp("%flags.b");
        low.push(Low::I(Instr::Assign { dst: fa, expr: a }));
        low.push(Low::I(Instr::Assign { dst: fb, expr: b }));
    }

    /// Condition `cc` on the flags as `st` says they were set.
    fn cond(&mut self, st: &State, cc: Cc, inst: &Instruction, pc: u64) -> Result<Expr, Refusal> {
        let a = Expr::Reg(self.tmp("%flags.a"));
        let b = Expr::Reg(self.tmp("%flags.b"));
        let signed = |op: BinOp, w: u8, a: Expr, b: Expr| {
            if w >= 8 {
                Expr::bin(op, a, b)
            } else {
                // The operands are zero-extended: flipping the sign bit
                // makes the unsigned order the signed one.
                let s = 1i64 << (8 * u32::from(w) - 1);
                let uop = match op {
                    BinOp::Lt => BinOp::Ult,
                    BinOp::Le => BinOp::Ule,
                    BinOp::Gt => BinOp::Ugt,
                    _ => BinOp::Uge,
                };
                Expr::bin(
                    uop,
                    Expr::bin(BinOp::Xor, a, Expr::int(s)),
                    Expr::bin(BinOp::Xor, b, Expr::int(s)),
                )
            }
        };
        let sign = |w: u8, a: Expr, neg: bool| {
            let s = if w >= 8 {
                i64::MIN
            } else {
                1i64 << (8 * u32::from(w) - 1)
            };
            Expr::bin(if neg { BinOp::Uge } else { BinOp::Ult }, a, Expr::int(s))
        };
        let e = match (st.flags, cc) {
            (_, Cc::E) if !matches!(st.flags, Flags::None | Flags::Unknown | Flags::Bit) => {
                Expr::bin(BinOp::Eq, a, b)
            }
            (_, Cc::Ne) if !matches!(st.flags, Flags::None | Flags::Unknown | Flags::Bit) => {
                Expr::bin(BinOp::Ne, a, b)
            }
            (Flags::Sub(_), Cc::B) => Expr::bin(BinOp::Ult, a, b),
            (Flags::Sub(_), Cc::Ae) => Expr::bin(BinOp::Uge, a, b),
            (Flags::Sub(_), Cc::Be) => Expr::bin(BinOp::Ule, a, b),
            (Flags::Sub(_), Cc::A) => Expr::bin(BinOp::Ugt, a, b),
            (Flags::Sub(w) | Flags::Logic(w), Cc::L) => signed(BinOp::Lt, w, a, b),
            (Flags::Sub(w) | Flags::Logic(w), Cc::Ge) => signed(BinOp::Ge, w, a, b),
            (Flags::Sub(w) | Flags::Logic(w), Cc::Le) => signed(BinOp::Le, w, a, b),
            (Flags::Sub(w) | Flags::Logic(w), Cc::G) => signed(BinOp::Gt, w, a, b),
            (Flags::Logic(w) | Flags::Result(w), Cc::S) => sign(w, a, true),
            (Flags::Logic(w) | Flags::Result(w), Cc::Ns) => sign(w, a, false),
            // CF = 0 after a logical operation.
            (Flags::Logic(_), Cc::B) => Expr::int(0),
            (Flags::Logic(_), Cc::Ae) => Expr::int(1),
            (Flags::Logic(_), Cc::Be) => Expr::bin(BinOp::Eq, a, b),
            (Flags::Logic(_), Cc::A) => Expr::bin(BinOp::Ne, a, b),
            (Flags::Bit, Cc::B) => Expr::bin(BinOp::Ne, a, Expr::int(0)),
            (Flags::Bit, Cc::Ae) => Expr::bin(BinOp::Eq, a, Expr::int(0)),
            _ => {
                return Err(self.refuse(
                    pc,
                    format!(
                        "{}: a condition on flags the analysis cannot tell the origin of",
                        name(inst)
                    ),
                ))
            }
        };
        Ok(e)
    }

    /// Where a `jmp`/`call` through memory goes: a GOT slot names the
    /// imported function, which is refused by name.
    /// Where a `jmp` or `call` goes: its rel32 target, or the function of
    /// this file a GOT slot holds (`call *f@GOTPCREL(%rip)`, as `-fno-plt`
    /// C and Rust code call); anything else is refused.
    fn target(&mut self, inst: &Instruction, st: &State, pc: u64) -> Result<u64, Refusal> {
        match inst.op_kind(0) {
            OpKind::NearBranch64 => Ok(inst.near_branch_target()),
            OpKind::Memory => match self.address(inst, st, pc) {
                Ok((Abs::File(slot), _)) => match self.file.pointer(slot) {
                    Some(Pointer::Here(t)) if self.file.code_at(t).is_some() => Ok(t),
                    // A GOT slot of a function this file defines binds to
                    // it (see flow::resolve).
                    Some(Pointer::Import(f))
                        if self
                            .file
                            .symbol(&f)
                            .is_some_and(|a| self.file.code_at(a).is_some()) =>
                    {
                        Ok(self.file.symbol(&f).unwrap_or_default())
                    }
                    _ => Err(self.indirect(inst, st, pc)),
                },
                _ => Err(self.indirect(inst, st, pc)),
            },
            _ => Err(self.indirect(inst, st, pc)),
        }
    }

    fn indirect(&mut self, inst: &Instruction, st: &State, pc: u64) -> Refusal {
        if is_mem(inst, 0) {
            if let Ok((Abs::File(slot), _)) = self.address(inst, st, pc) {
                if let Some(Pointer::Import(f)) = self.file.pointer(slot) {
                    return self.refuse(
                        pc,
                        format!(
                            "{}: calls {f}, a function of another library, which verify cannot follow",
                            name(inst)
                        ),
                    );
                }
            }
        }
        self.refuse(
            pc,
            format!(
                "{}: an indirect jump or call, which verify cannot follow",
                name(inst)
            ),
        )
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
        let bytes = &bytes[..bytes.len().min(15)];
        let mut decoder = Decoder::with_ip(64, bytes, pc, DecoderOptions::NONE);
        let inst = decoder.decode();
        if inst.is_invalid() {
            return Err(self.refuse(
                pc,
                format!("undecodable bytes {:02x?}", &bytes[..bytes.len().min(4)]),
            ));
        }
        let after = inst.next_ip();
        let mut out = st.clone();
        let mut low = Vec::new();
        let mut next = Some(Target::Node(ctx.clone(), after));
        let m = inst.mnemonic();
        let lock = inst.has_lock_prefix();
        let locked = Annot {
            locked: true,
            ..Annot::default()
        };
        if lock
            && !matches!(
                m,
                Mnemonic::Add
                    | Mnemonic::Sub
                    | Mnemonic::And
                    | Mnemonic::Or
                    | Mnemonic::Xor
                    | Mnemonic::Inc
                    | Mnemonic::Dec
                    | Mnemonic::Xadd
                    | Mnemonic::Xchg
                    | Mnemonic::Cmpxchg
                    | Mnemonic::Bts
            )
        {
            return Err(self.refuse(
                pc,
                format!(
                    "{}: an instruction outside the set verify follows",
                    name(&inst)
                ),
            ));
        }
        match m {
            // No memory effect: NOPs (compilers pad with `nopw 0(%rax,…)`),
            // ENDBR64, and PAUSE, a spin-wait hint (the parser drops them).
            Mnemonic::Nop | Mnemonic::Endbr64 | Mnemonic::Pause => {}
            Mnemonic::Mfence => low.push(Low::I(Instr::Fence(Fence::Mfence))),
            Mnemonic::Lfence => low.push(Low::I(Instr::Fence(Fence::Lfence))),
            Mnemonic::Sfence => low.push(Low::I(Instr::Fence(Fence::Sfence))),
            Mnemonic::Mov
                if inst.op_kind(0) == OpKind::Register
                    && is_mem(&inst, 1)
                    && matches!(gpr(inst.op_register(0)), Some((_, 4 | 8))) =>
            {
                // A 32- or 64-bit load into a register: one load into it,
                // as the parser lowers `movl (x),%eax` (the field holds
                // the value cut to its width, so the 32-bit write's zero
                // extension is already there).
                let (n, w) = gpr(inst.op_register(0)).unwrap_or((RAX, 8));
                match self.mem(&inst, st, w, pc, locs)? {
                    Mem::Loc(addr) => {
                        let dst = self.reg(n);
                        low.push(Low::I(Instr::Load {
                            dst: Some(dst),
                            addr,
                            annot: Annot::default(),
                        }));
                        out.r[n] = Abs::Unknown;
                    }
                    Mem::Stack(slot) => {
                        let s = self.stack_reg(slot);
                        let a = match st.stack.get(&slot).copied().unwrap_or(Abs::Unknown) {
                            Abs::Int(v) => Abs::Int(narrow_int(v, w)),
                            a if w == 8 => a,
                            _ => Abs::Unknown,
                        };
                        if n == RSP && !matches!(a, Abs::Stack(_)) {
                            return Err(self.refuse(
                                pc,
                                "mov: moves the stack pointer somewhere the analysis cannot follow"
                                    .into(),
                            ));
                        }
                        let e = narrow(Expr::Reg(s), w);
                        self.write_reg(&mut out, n, w, Val { e, a }, &mut low);
                    }
                }
            }
            Mnemonic::Mov => {
                let w = self.width(&inst, pc)?;
                let v = self.src(&inst, 1, st, w, pc, locs.as_deref_mut(), &mut low)?;
                self.dst(&inst, 0, &mut out, st, w, v, pc, locs, &mut low)?;
            }
            Mnemonic::Movzx | Mnemonic::Movsx | Mnemonic::Movsxd => {
                let (Some((n, w)), sw) = (
                    gpr(inst.op_register(0)),
                    if is_mem(&inst, 1) {
                        access_size(inst.memory_size())
                    } else {
                        gpr(inst.op_register(1)).map(|x| x.1)
                    },
                ) else {
                    return Err(self.refuse(pc, format!("{}: operands not followed", name(&inst))));
                };
                let Some(sw) = sw else {
                    return Err(self.refuse(pc, format!("{}: operands not followed", name(&inst))));
                };
                let v = self.src(&inst, 1, st, sw, pc, locs, &mut low)?;
                let v = if m == Mnemonic::Movzx {
                    v
                } else {
                    Val {
                        e: sext(v.e, sw),
                        a: match v.a {
                            Abs::Int(x) => Abs::Int(sext_int(x, 8 * u32::from(sw))),
                            _ => Abs::Unknown,
                        },
                    }
                };
                self.write_reg(&mut out, n, w, v, &mut low);
            }
            Mnemonic::Lea => {
                let Some((n, w)) = gpr(inst.op_register(0)) else {
                    return Err(self.refuse(pc, format!("{}: operands not followed", name(&inst))));
                };
                let (a, base) = self.address(&inst, st, pc)?;
                let e = match a {
                    Abs::Int(v) => Expr::int(v),
                    Abs::File(f) => Expr::int(f as i64),
                    _ => {
                        // base + disp (an index was resolved to a constant).
                        let off = match (a, st.r[base]) {
                            (Abs::Obj(_, x), Abs::Obj(_, y)) | (Abs::Stack(x), Abs::Stack(y)) => {
                                x.wrapping_sub(y)
                            }
                            _ => inst.memory_displacement64() as i64,
                        };
                        Expr::bin(BinOp::Add, Expr::Reg(self.reg(base)), Expr::int(off))
                    }
                };
                if n == RSP && !matches!(a, Abs::Stack(_)) {
                    return Err(self.refuse(
                        pc,
                        "lea: moves the stack pointer somewhere the analysis cannot follow".into(),
                    ));
                }
                self.write_reg(&mut out, n, w, Val { e, a }, &mut low);
            }
            Mnemonic::Xchg => {
                let w = self.width(&inst, pc)?;
                match (is_mem(&inst, 0), is_mem(&inst, 1)) {
                    (false, false) => {
                        let x = self.src(&inst, 0, st, w, pc, None, &mut low)?;
                        let y = self.src(&inst, 1, st, w, pc, None, &mut low)?;
                        let t = self.tmp("%xchg");
                        low.push(Low::I(Instr::Assign { dst: t, expr: x.e }));
                        let xa = x.a;
                        self.dst(&inst, 0, &mut out, st, w, y, pc, None, &mut low)?;
                        let mid = out.clone();
                        self.dst(
                            &inst,
                            1,
                            &mut out,
                            &mid,
                            w,
                            Val {
                                e: Expr::Reg(t),
                                a: xa,
                            },
                            pc,
                            None,
                            &mut low,
                        )?;
                    }
                    (m0, _) => {
                        // XCHG with memory is locked, LOCK or not (Intel
                        // SDM vol. 3A §9.1.2.1): a locked read and write.
                        let ri = if m0 { 1 } else { 0 };
                        let v = self.src(&inst, ri, st, w, pc, None, &mut low)?;
                        if v.a.is_address() {
                            return Err(self.refuse(pc, "xchg: stores a pointer to shared memory (linked structures are not modelled)".into()));
                        }
                        let Mem::Loc(addr) = self.mem(&inst, st, w, pc, locs)? else {
                            return Err(self.refuse(
                                pc,
                                "xchg on the stack (an atomic outside the object is not followed)"
                                    .into(),
                            ));
                        };
                        let t = self.tmp("%rmw");
                        low.push(Low::I(Instr::Rmw {
                            dst: Some(t),
                            addr,
                            op: RmwOp::Xchg,
                            operand: v.e,
                            read: locked,
                            write: locked,
                            single: false,
                        }));
                        let (n, rw) = gpr(inst.op_register(ri)).unwrap_or((RAX, w));
                        self.write_reg(
                            &mut out,
                            n,
                            rw,
                            Val {
                                e: Expr::Reg(t),
                                a: Abs::Unknown,
                            },
                            &mut low,
                        );
                    }
                }
            }
            Mnemonic::Cmpxchg => {
                let w = self.width(&inst, pc)?;
                if !lock || !is_mem(&inst, 0) {
                    return Err(self.refuse(
                        pc,
                        format!(
                            "{}: cmpxchg without LOCK on memory is not atomic (not followed)",
                            name(&inst)
                        ),
                    ));
                }
                let v = self.src(&inst, 1, st, w, pc, None, &mut low)?;
                if v.a.is_address() {
                    return Err(self.refuse(pc, "cmpxchg: stores a pointer to shared memory (linked structures are not modelled)".into()));
                }
                let Mem::Loc(addr) = self.mem(&inst, st, w, pc, locs)? else {
                    return Err(self.refuse(
                        pc,
                        "cmpxchg on the stack (an atomic outside the object is not followed)"
                            .into(),
                    ));
                };
                // The accumulator's low `w` bytes (AL, AX, EAX, RAX) are
                // the expected value and receive the value read; as the
                // parser's `lock cmpxchg` (CasExpected::Reg), through
                // `%cas` so that an 8-, 16- or 32-bit one compares only
                // those bytes and the write back keeps the others.
                let rax = self.reg(RAX);
                let cas = self.tmp("%cas");
                low.push(Low::I(Instr::Assign {
                    dst: cas,
                    expr: narrow(Expr::Reg(rax), w),
                }));
                let fa = self.tmp("%flags.a");
                low.push(Low::I(Instr::Assign {
                    dst: fa,
                    expr: Expr::Reg(cas),
                }));
                low.push(Low::I(Instr::Cas {
                    result: None,
                    addr,
                    expected: CasExpected::Reg(cas),
                    desired: v.e,
                    read: locked,
                    write: locked,
                    fail: locked,
                    weak: false,
                    single: false,
                }));
                let fb = self.tmp("%flags.b");
                low.push(Low::I(Instr::Assign {
                    dst: fb,
                    expr: Expr::Reg(cas),
                }));
                self.write_reg(
                    &mut out,
                    RAX,
                    w,
                    Val {
                        e: Expr::Reg(cas),
                        a: Abs::Unknown,
                    },
                    &mut low,
                );
                out.r[RAX] = Abs::Unknown;
                out.flags = Flags::Cas;
            }
            Mnemonic::Xadd
            | Mnemonic::Add
            | Mnemonic::Sub
            | Mnemonic::And
            | Mnemonic::Or
            | Mnemonic::Xor
            | Mnemonic::Inc
            | Mnemonic::Dec
            | Mnemonic::Bts
                if lock =>
            {
                let w = self.width(&inst, pc)?;
                if !is_mem(&inst, 0) {
                    return Err(self.refuse(
                        pc,
                        format!("{}: LOCK without a memory destination", name(&inst)),
                    ));
                }
                let operand = match m {
                    Mnemonic::Inc | Mnemonic::Dec => Val {
                        e: Expr::int(1),
                        a: Abs::Int(1),
                    },
                    _ => self.src(&inst, 1, st, w, pc, None, &mut low)?,
                };
                let (op, operand_e, bit) = match m {
                    Mnemonic::Add | Mnemonic::Xadd | Mnemonic::Inc => (RmwOp::Add, operand.e, None),
                    Mnemonic::Sub | Mnemonic::Dec => (RmwOp::Sub, operand.e, None),
                    Mnemonic::And => (RmwOp::And, operand.e, None),
                    Mnemonic::Or => (RmwOp::Or, operand.e, None),
                    Mnemonic::Xor => (RmwOp::Xor, operand.e, None),
                    _ => {
                        // BTS with an immediate bit: an OR of that bit,
                        // CF its old value.
                        let Abs::Int(k) = operand.a else {
                            return Err(self.refuse(
                                pc,
                                format!(
                                    "{}: a bit offset in a register is not followed",
                                    name(&inst)
                                ),
                            ));
                        };
                        let k = k & (8 * i64::from(w) - 1);
                        (RmwOp::Or, Expr::int(1i64 << k), Some(k))
                    }
                };
                let t = self.tmp("%rmw");
                match self.mem(&inst, st, w, pc, locs)? {
                    Mem::Loc(addr) => low.push(Low::I(Instr::Rmw {
                        dst: Some(t),
                        addr,
                        op,
                        operand: operand_e.clone(),
                        read: locked,
                        write: locked,
                        single: false,
                    })),
                    Mem::Stack(slot) => {
                        // A locked RMW of the thread's own stack is gcc's
                        // seq_cst fence (`lock orq $0,(%rsp)`): no other
                        // thread sees the slot, and a locked instruction
                        // orders every access before it with every one
                        // after (Intel SDM vol. 3A §10.2.2), as MFENCE does.
                        let s = self.stack_reg(slot);
                        low.push(Low::I(Instr::Fence(Fence::Mfence)));
                        low.push(Low::I(Instr::Assign {
                            dst: t,
                            expr: narrow(Expr::Reg(s), w),
                        }));
                        let bop = match op {
                            RmwOp::Add => BinOp::Add,
                            RmwOp::Sub => BinOp::Sub,
                            RmwOp::And => BinOp::And,
                            RmwOp::Or => BinOp::Or,
                            _ => BinOp::Xor,
                        };
                        low.push(Low::I(Instr::Assign {
                            dst: s,
                            expr: narrow(Expr::bin(bop, Expr::Reg(t), operand_e.clone()), w),
                        }));
                        let known = st.stack.get(&slot).copied().unwrap_or(Abs::Unknown);
                        out.stack.insert(
                            slot,
                            match (known, operand.a, bit) {
                                (Abs::Int(x), Abs::Int(y), None) => Abs::Int(narrow_int(
                                    match op {
                                        RmwOp::Add => x.wrapping_add(y),
                                        RmwOp::Sub => x.wrapping_sub(y),
                                        RmwOp::And => x & y,
                                        RmwOp::Or => x | y,
                                        _ => x ^ y,
                                    },
                                    w,
                                )),
                                _ => Abs::Unknown,
                            },
                        );
                    }
                }
                let old = Expr::Reg(t);
                match bit {
                    Some(k) => {
                        let b = Expr::bin(
                            BinOp::And,
                            Expr::bin(BinOp::Shr, old, Expr::int(k)),
                            Expr::int(1),
                        );
                        self.set_flags(b, Expr::int(0), &mut low);
                        out.flags = Flags::Bit;
                    }
                    None => {
                        let bop = match op {
                            RmwOp::Add => BinOp::Add,
                            RmwOp::Sub => BinOp::Sub,
                            RmwOp::And => BinOp::And,
                            RmwOp::Or => BinOp::Or,
                            _ => BinOp::Xor,
                        };
                        let result = narrow(Expr::bin(bop, old.clone(), operand_e), w);
                        self.set_flags(result, Expr::int(0), &mut low);
                        out.flags = if matches!(op, RmwOp::Add | RmwOp::Sub) {
                            Flags::Result(w)
                        } else {
                            Flags::Logic(w)
                        };
                        if m == Mnemonic::Xadd {
                            let (n, rw) = gpr(inst.op_register(1)).unwrap_or((RAX, w));
                            self.write_reg(
                                &mut out,
                                n,
                                rw,
                                Val {
                                    e: old,
                                    a: Abs::Unknown,
                                },
                                &mut low,
                            );
                        }
                    }
                }
            }
            Mnemonic::Xadd => {
                return Err(self.refuse(
                    pc,
                    format!(
                        "{}: xadd without LOCK is not atomic (not followed)",
                        name(&inst)
                    ),
                ))
            }
            Mnemonic::Add
            | Mnemonic::Sub
            | Mnemonic::And
            | Mnemonic::Or
            | Mnemonic::Xor
            | Mnemonic::Inc
            | Mnemonic::Dec
            | Mnemonic::Neg
            | Mnemonic::Not
            | Mnemonic::Shl
            | Mnemonic::Shr
            | Mnemonic::Sar
            | Mnemonic::Imul => {
                let w = self.width(&inst, pc)?;
                if m == Mnemonic::Imul && inst.op_count() != 2 {
                    return Err(
                        self.refuse(pc, format!("{}: this form is not followed", name(&inst)))
                    );
                }
                // `xor %eax,%eax` is a zeroing idiom: no read.
                let zeroing = matches!(m, Mnemonic::Xor | Mnemonic::Sub)
                    && !is_mem(&inst, 0)
                    && inst.op_kind(1) == OpKind::Register
                    && inst.op_register(0) == inst.op_register(1);
                let x = self.src(&inst, 0, st, w, pc, locs.as_deref_mut(), &mut low)?;
                let unary = matches!(
                    m,
                    Mnemonic::Inc | Mnemonic::Dec | Mnemonic::Neg | Mnemonic::Not
                );
                let y = if unary {
                    Val {
                        e: Expr::int(1),
                        a: Abs::Int(1),
                    }
                } else {
                    // A shift count is CL or an immediate, its own width.
                    let sw = if matches!(m, Mnemonic::Shl | Mnemonic::Shr | Mnemonic::Sar) {
                        1
                    } else {
                        w
                    };
                    self.src(&inst, 1, st, sw, pc, None, &mut low)?
                };
                let bits = 8 * i64::from(w);
                let (e, a) = if zeroing {
                    (Expr::int(0), Abs::Int(0))
                } else {
                    let ints = match (x.a, y.a) {
                        (Abs::Int(p), Abs::Int(q)) => Some((p, q)),
                        _ => None,
                    };
                    let (e, v): (Expr, Option<i64>) = match m {
                        Mnemonic::Add | Mnemonic::Inc => (
                            Expr::bin(BinOp::Add, x.e.clone(), y.e.clone()),
                            ints.map(|(p, q)| p.wrapping_add(q)),
                        ),
                        Mnemonic::Sub | Mnemonic::Dec => (
                            Expr::bin(BinOp::Sub, x.e.clone(), y.e.clone()),
                            ints.map(|(p, q)| p.wrapping_sub(q)),
                        ),
                        Mnemonic::And => (
                            Expr::bin(BinOp::And, x.e.clone(), y.e.clone()),
                            ints.map(|(p, q)| p & q),
                        ),
                        Mnemonic::Or => (
                            Expr::bin(BinOp::Or, x.e.clone(), y.e.clone()),
                            ints.map(|(p, q)| p | q),
                        ),
                        Mnemonic::Xor => (
                            Expr::bin(BinOp::Xor, x.e.clone(), y.e.clone()),
                            ints.map(|(p, q)| p ^ q),
                        ),
                        Mnemonic::Neg => (
                            Expr::bin(BinOp::Sub, Expr::int(0), x.e.clone()),
                            ints.map(|(p, _)| p.wrapping_neg()),
                        ),
                        Mnemonic::Not => (
                            Expr::bin(BinOp::Xor, x.e.clone(), Expr::int(-1)),
                            ints.map(|(p, _)| !p),
                        ),
                        Mnemonic::Imul => (
                            Expr::bin(BinOp::Mul, x.e.clone(), y.e.clone()),
                            ints.map(|(p, q)| p.wrapping_mul(q)),
                        ),
                        Mnemonic::Shl => (
                            Expr::bin(
                                BinOp::Shl,
                                x.e.clone(),
                                Expr::bin(BinOp::And, y.e.clone(), Expr::int(bits - 1)),
                            ),
                            ints.map(|(p, q)| p.wrapping_shl((q & (bits - 1)) as u32)),
                        ),
                        Mnemonic::Shr => (
                            Expr::bin(
                                BinOp::Shr,
                                x.e.clone(),
                                Expr::bin(BinOp::And, y.e.clone(), Expr::int(bits - 1)),
                            ),
                            ints.map(|(p, q)| ((p as u64) >> (q & (bits - 1))) as i64),
                        ),
                        _ => {
                            // SAR by a constant k: the logical shift of
                            // the sign-extended value with the sign's
                            // copies added back.
                            let Abs::Int(k) = y.a else {
                                return Err(self.refuse(
                                    pc,
                                    format!(
                                        "{}: a shift by a register amount is not followed",
                                        name(&inst)
                                    ),
                                ));
                            };
                            let k = k & (bits - 1);
                            let xs = sext(x.e.clone(), w);
                            let e = if k == 0 {
                                xs
                            } else {
                                let s = 1i64 << (63 - k);
                                Expr::bin(
                                    BinOp::Sub,
                                    Expr::bin(
                                        BinOp::Xor,
                                        Expr::bin(BinOp::Shr, xs, Expr::int(k)),
                                        Expr::int(s),
                                    ),
                                    Expr::int(s),
                                )
                            };
                            (e, ints.map(|(p, _)| sext_int(p, 8 * u32::from(w)) >> k))
                        }
                    };
                    let a = match (m, x.a, y.a, v) {
                        (_, _, _, Some(v)) => Abs::Int(narrow_int(v, w)),
                        // A ring's index: masked, scaled (`t & (N - 1)`).
                        (Mnemonic::And, p, Abs::Int(c), None) => p.masked(c),
                        (Mnemonic::Shl, p, Abs::Int(c), None) if w == 8 => p.shl(c & 63),
                        // Pointer arithmetic on 64-bit registers.
                        (Mnemonic::Add, p, Abs::Int(c), None) if w == 8 => p.plus(c),
                        (Mnemonic::Sub, p, Abs::Int(c), None) if w == 8 => p.plus(c.wrapping_neg()),
                        (Mnemonic::Inc, p, _, None) if w == 8 => p.plus(1),
                        (Mnemonic::Dec, p, _, None) if w == 8 => p.plus(-1),
                        _ => Abs::Unknown,
                    };
                    (e, a)
                };
                let result = narrow(e.clone(), w);
                // The flags each sets (Intel SDM vol. 2): SUB as CMP; the
                // logical ones from the result with CF = OF = 0; ADD, INC
                // and DEC from the result (ZF and SF followed); the rest
                // leave them unknown.
                match m {
                    Mnemonic::Sub => {
                        self.set_flags(x.e.clone(), y.e.clone(), &mut low);
                        out.flags = Flags::Sub(w);
                    }
                    Mnemonic::And | Mnemonic::Or | Mnemonic::Xor => {
                        self.set_flags(result, Expr::int(0), &mut low);
                        out.flags = Flags::Logic(w);
                    }
                    Mnemonic::Add | Mnemonic::Inc | Mnemonic::Dec => {
                        self.set_flags(result, Expr::int(0), &mut low);
                        out.flags = Flags::Result(w);
                    }
                    Mnemonic::Not => {}
                    _ => out.flags = Flags::Unknown,
                }
                let mid = out.clone();
                self.dst(
                    &inst,
                    0,
                    &mut out,
                    &mid,
                    w,
                    Val { e, a },
                    pc,
                    locs,
                    &mut low,
                )?;
            }
            Mnemonic::Cmp | Mnemonic::Test => {
                let w = self.width(&inst, pc)?;
                let x = self.src(&inst, 0, st, w, pc, locs.as_deref_mut(), &mut low)?;
                let y = self.src(&inst, 1, st, w, pc, locs, &mut low)?;
                if m == Mnemonic::Cmp {
                    // `cmp src,dst` (AT&T) sets the flags from dst - src,
                    // as the parser's `%flags.a`, `%flags.b`.
                    self.set_flags(x.e, y.e, &mut low);
                    out.flags = Flags::Sub(w);
                } else {
                    self.set_flags(
                        narrow(Expr::bin(BinOp::And, x.e, y.e), w),
                        Expr::int(0),
                        &mut low,
                    );
                    out.flags = Flags::Logic(w);
                }
            }
            _ if matches!(cc_of(m), Some((_, CcUse::Jump))) => {
                let cc = cc_of(m).map_or(Cc::E, |c| c.0);
                let cond = self.cond(st, cc, &inst, pc)?;
                low.push(Low::Jump(
                    Some(cond),
                    Target::Node(ctx.clone(), inst.near_branch_target()),
                ));
            }
            _ if matches!(cc_of(m), Some((_, CcUse::Set))) => {
                let cc = cc_of(m).map_or(Cc::E, |c| c.0);
                let cond = self.cond(st, cc, &inst, pc)?;
                self.dst(
                    &inst,
                    0,
                    &mut out,
                    st,
                    1,
                    Val {
                        e: cond,
                        a: Abs::Unknown,
                    },
                    pc,
                    locs,
                    &mut low,
                )?;
            }
            _ if matches!(cc_of(m), Some((_, CcUse::Move))) => {
                // CMOVcc: a select between the source and the old value.
                let cc = cc_of(m).map_or(Cc::E, |c| c.0);
                let w = self.width(&inst, pc)?;
                let cond = self.cond(st, cc, &inst, pc)?;
                let Some((n, _)) = gpr(inst.op_register(0)) else {
                    return Err(self.refuse(pc, format!("{}: operands not followed", name(&inst))));
                };
                let v = self.src(&inst, 1, st, w, pc, locs, &mut low)?;
                let r = self.reg(n);
                let old = narrow(Expr::Reg(r), w);
                low.push(Low::I(Instr::Select {
                    dst: r,
                    cond,
                    a: v.e,
                    b: old,
                }));
                if w == 4 {
                    low.push(Low::I(Instr::Assign {
                        dst: r,
                        expr: narrow(Expr::Reg(r), 4),
                    }));
                }
                out.r[n] = Abs::Unknown;
            }
            Mnemonic::Push => {
                let v = self.src(&inst, 0, st, 8, pc, None, &mut low)?;
                let Abs::Stack(sp) = st.r[RSP] else {
                    return Err(
                        self.refuse(pc, "push: the stack pointer is not followed here".into())
                    );
                };
                let slot = sp.wrapping_sub(8);
                let s = self.stack_reg(slot);
                low.push(Low::I(Instr::Assign { dst: s, expr: v.e }));
                out.stack.insert(slot, v.a);
                out.r[RSP] = Abs::Stack(slot);
            }
            Mnemonic::Pop => {
                let Abs::Stack(sp) = st.r[RSP] else {
                    return Err(
                        self.refuse(pc, "pop: the stack pointer is not followed here".into())
                    );
                };
                let Some((n, 8)) = gpr(inst.op_register(0)) else {
                    return Err(self.refuse(pc, format!("{}: operands not followed", name(&inst))));
                };
                let s = self.stack_reg(sp);
                let a = st.stack.get(&sp).copied().unwrap_or(Abs::Unknown);
                out.r[RSP] = Abs::Stack(sp.wrapping_add(8));
                if n != RSP {
                    self.write_reg(&mut out, n, 8, Val { e: Expr::Reg(s), a }, &mut low);
                }
            }
            Mnemonic::Leave => {
                // mov %rbp,%rsp; pop %rbp.
                let Abs::Stack(sp) = st.r[RBP] else {
                    return Err(
                        self.refuse(pc, "leave: the frame pointer is not followed here".into())
                    );
                };
                let s = self.stack_reg(sp);
                let a = st.stack.get(&sp).copied().unwrap_or(Abs::Unknown);
                out.r[RSP] = Abs::Stack(sp.wrapping_add(8));
                self.write_reg(&mut out, RBP, 8, Val { e: Expr::Reg(s), a }, &mut low);
            }
            Mnemonic::Jmp | Mnemonic::Call
                if self.heap_call(&inst, st, pc, &mut locs, &mut low)? =>
            {
                clobber(&mut out);
                self.heap_result(&inst, st, pc, &mut out);
                next = Some(if inst.mnemonic() == Mnemonic::Jmp {
                    out.r[RSP] = st.r[RSP].plus(8);
                    flow::ret(ctx)
                } else {
                    Target::Node(ctx.clone(), after)
                });
            }
            Mnemonic::Jmp => {
                let t = flow::resolve(self.file, self.target(&inst, st, pc)?);
                if self.file.import_at(t).is_some() {
                    // A followed tail call's `ret` pops our return
                    // address.
                    clobber(&mut out);
                    out.r[RSP] = st.r[RSP].plus(8);
                }
                next = Some(flow::call(self.file, self.root, ctx, pc, after, t, true)?);
            }
            Mnemonic::Call => {
                let t = flow::resolve(self.file, self.target(&inst, st, pc)?);
                let Abs::Stack(sp) = st.r[RSP] else {
                    return Err(
                        self.refuse(pc, "call: the stack pointer is not followed here".into())
                    );
                };
                // The return address takes 8 bytes of stack; the inlined
                // callee's `ret` gives them back. A function of another
                // library that is followed (sched_yield) returns at once,
                // with the caller-saved registers (System V psABI 3.2.1)
                // unknown.
                if self.file.import_at(t).is_some() {
                    clobber(&mut out);
                } else {
                    out.r[RSP] = Abs::Stack(sp.wrapping_sub(8));
                }
                next = Some(flow::call(self.file, self.root, ctx, pc, after, t, false)?);
            }
            Mnemonic::Ret => {
                if inst.op_count() != 0 {
                    return Err(self.refuse(
                        pc,
                        "ret imm16 (callee-popped arguments) is not followed".into(),
                    ));
                }
                out.r[RSP] = st.r[RSP].plus(8);
                next = Some(flow::ret(ctx));
            }
            Mnemonic::Syscall | Mnemonic::Sysenter | Mnemonic::Int | Mnemonic::Int3 => {
                return Err(self.refuse(
                    pc,
                    format!("{}: a system call, which verify cannot follow", name(&inst)),
                ))
            }
            _ => {
                return Err(self.refuse(
                    pc,
                    format!(
                        "{}: an instruction outside the set verify follows",
                        name(&inst)
                    ),
                ))
            }
        }
        Ok(Step { low, out, next })
    }
}

/// After a call to a function of another library: the registers the
/// System V x86-64 psABI (3.2.1) lets a callee change are unknown.
impl Machine<'_, '_, '_> {
    /// The import a call or jump `inst` goes to, if it is one that
    /// [`super::heap`] follows (`malloc`, `calloc`, `aligned_alloc`,
    /// `free`, `__tls_get_addr`): lowers its effect and says so.
    fn heap_call(
        &mut self,
        inst: &Instruction,
        st: &State,
        pc: u64,
        locs: &mut Option<&mut Locations>,
        low: &mut Vec<Low>,
    ) -> Result<bool, Refusal> {
        if !self.follow_heap {
            return Ok(false);
        }
        let Some(name) = self.callee_import(inst, st, pc) else {
            return Ok(false);
        };
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
        let rax = self.reg(RAX);
        let code = if tls {
            let off = self.tls_offset(st).unwrap_or(0) as i64;
            let base = locs.tls_region(self.file).base;
            vec![Instr::Assign {
                dst: rax,
                expr: Expr::int(base + off),
            }]
        } else if name == "free" {
            let ptr = Expr::Reg(self.reg(RDI));
            heap::free(self.regs, locs, ptr)
        } else {
            let r = locs.region(pc, &name);
            heap::allocate(self.regs, &r, GPR[RAX])
        };
        low.extend(code.into_iter().map(Low::I));
        Ok(true)
    }

    /// The function of another library a `call` or `jmp` goes to: through
    /// its PLT stub (`call calloc@plt`) or its GOT slot (`jmp
    /// *calloc@GOTPCREL(%rip)`, as `-fno-plt` code calls).
    fn callee_import(&mut self, inst: &Instruction, st: &State, pc: u64) -> Option<String> {
        if let Ok(t) = self.target(inst, st, pc) {
            return self
                .file
                .import_at(flow::resolve(self.file, t))
                .map(str::to_string);
        }
        if !is_mem(inst, 0) {
            return None;
        }
        match self.address(inst, st, pc) {
            Ok((Abs::File(slot), _)) => match self.file.pointer(slot) {
                Some(Pointer::Import(f)) => Some(f),
                _ => None,
            },
            _ => None,
        }
    }

    /// The offset of the TLS variable whose `tls_index` `rdi` points to.
    fn tls_offset(&self, st: &State) -> Option<u64> {
        match st.r[RDI] {
            Abs::File(a) => self.file.tls_descriptor(a),
            _ => None,
        }
    }

    /// What the analysis knows of `rax` after a call [`Self::heap_call`]
    /// followed.
    fn heap_result(&mut self, inst: &Instruction, st: &State, pc: u64, out: &mut State) {
        let name = self.callee_import(inst, st, pc);
        out.r[RAX] = match name.as_deref() {
            Some("__tls_get_addr") => Abs::Heap(heap::TLS, self.tls_offset(st).unwrap_or(0) as i64),
            Some(n) if heap::ALLOCATORS.contains(&n) => Abs::Heap(pc, 0),
            _ => Abs::Unknown,
        };
    }
}

fn clobber(out: &mut State) {
    for n in [0, 1, 2, 6, 7, 8, 9, 10, 11] {
        out.r[n] = Abs::Unknown;
    }
    out.flags = Flags::Unknown;
}

impl flow::Machine for Machine<'_, '_, '_> {
    type State = State;

    fn join(a: &State, b: &State) -> State {
        let mut r = a.r;
        for (p, q) in r.iter_mut().zip(b.r.iter()) {
            *p = p.join(*q);
        }
        State {
            r,
            stack: flow::join_stack(&a.stack, &b.stack),
            flags: if a.flags == b.flags {
                a.flags
            } else {
                Flags::Unknown
            },
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

    fn decode(bytes: &[u8]) -> Instruction {
        Decoder::with_ip(64, bytes, 0x1000, DecoderOptions::NONE).decode()
    }

    #[test]
    fn registers_by_number_and_width() {
        assert_eq!(gpr(Register::RDI), Some((RDI, 8)));
        assert_eq!(gpr(Register::EAX), Some((RAX, 4)));
        assert_eq!(gpr(Register::R15D), Some((15, 4)));
        assert_eq!(gpr(Register::DIL), Some((RDI, 1)));
        assert_eq!(gpr(Register::R8L), Some((8, 1)));
        assert_eq!(gpr(Register::AH), None);
    }

    #[test]
    fn the_zoo_instructions_decode_as_lifted() {
        // xchg %eax,(%rdi): locked without a prefix.
        let i = decode(&[0x87, 0x07]);
        assert_eq!(i.mnemonic(), Mnemonic::Xchg);
        assert!(!i.has_lock_prefix());
        assert_eq!(access_size(i.memory_size()), Some(4));
        // lock xadd %edx,(%rdi).
        let i = decode(&[0xf0, 0x0f, 0xc1, 0x17]);
        assert_eq!(name(&i), "lock xadd");
        // jne rel8 and its condition.
        let i = decode(&[0x75, 0xf8]);
        assert_eq!(cc_of(i.mnemonic()), Some((Cc::Ne, CcUse::Jump)));
        assert_eq!(i.near_branch_target(), 0x1000 + 2 - 8);
        // sete %al.
        assert_eq!(
            cc_of(decode(&[0x0f, 0x94, 0xc0]).mnemonic()),
            Some((Cc::E, CcUse::Set))
        );
        // syscall.
        assert_eq!(decode(&[0x0f, 0x05]).mnemonic(), Mnemonic::Syscall);
    }
}
