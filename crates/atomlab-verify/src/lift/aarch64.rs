//! A64 to checker instructions, following the Arm Architecture Reference
//! Manual for A-profile (Arm ARM, DDI 0487): C6.2 for each instruction's
//! operation, B2.3 for what the access kinds mean to the memory model.
//! Decoding is yaxpeax-arm's, as in atomlab-audit.
//!
//! How a function becomes events:
//! - It is followed from its entry along every path, not scanned as a
//!   range: BL into the file is inlined (its RET returns to the call),
//!   B (a tail call included) is a jump, RET of the entry function ends it.
//!   libgcc's outline-atomics helpers (`__aarch64_swp4_acq` …) are
//!   ordinary code of the file and are inlined the same way; their test of
//!   `__aarch64_have_lse_atomics` reads the constant the caller chose, so
//!   a CPU with LSE takes the LSE instruction and one without the LL/SC
//!   loop, each checked on its own.
//! - A forward analysis (a fixpoint over the inlined control-flow graph)
//!   tracks which registers hold the object pointer plus a constant, the
//!   stack pointer plus a constant, a file address (ADRP), or an integer.
//!   Every memory operand must resolve to (object, byte offset): each
//!   field is its own location. A stack slot is a register of the thread.
//!   A register index masked to a few values (`[x0, x3, lsl #3]`, or the
//!   address computed first: `add x9, x0, x9, lsl #3`) resolves to one
//!   of a few fields, picked per execution ([`super::index`]); pointer
//!   arguments ([`super::Registers::pointers`]) to their objects.
//!   Anything else is refused, with the instruction's address.
//! - Accesses are annotated as the litmus parser annotates the same
//!   mnemonic (atomlab-litmus dialect/aarch64.rs `instr`): LDAR acquire, LDAPR
//!   acquire-pc, LDXR exclusive, STLR release, CAS/SWP/`LD<op>` with A/L
//!   suffixes, a zero destination making the read NoRet without acquire.
//! - W registers are 32 bits: a W write is masked to 32 bits, as is a W
//!   read. Flags are the two operands of the last compare (the parser's
//!   `%nzcv.a`/`%nzcv.b`); a 32-bit signed condition compares the
//!   operands with their sign bits flipped, unsigned.

use std::collections::{BTreeMap, HashMap, VecDeque};

use atomlab_audit::PluginFile;
use atomlab_litmus::{
    Annot, Barrier, BarrierOpt, BinOp, CasExpected, Expr, Fence, Instr, RmwOp, Value,
};
use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Instruction, Opcode, Operand, ShiftStyle, SizeCode};

use super::heap;
use super::index::{self, Span};
use super::lifter::{self, Lifted, Refusal};
use super::state::{Locations, Registers};

/// Calls nested deeper than this are refused (recursion, or more code
/// than a lock needs).
const MAX_DEPTH: usize = 8;
/// Instructions (counted once per inlined copy) one function may lift to.
const MAX_NODES: usize = 4096;

/// The AArch64 lifter (see [`super::lifter`]).
pub struct Aarch64;

#[cfg(test)]
mod form_tests {
    use super::super::Lifter;
    use super::Aarch64;

    #[test]
    fn acquire_and_release_forms_follow_the_arm_arm() {
        let f = |i: &str, acq: bool| Aarch64.ordered_form(i, acq);
        assert_eq!(f("ldxr w1, [x0]", true).as_deref(), Some("ldaxr"));
        assert_eq!(f("ldxrb w1, [x0]", true).as_deref(), Some("ldaxrb"));
        assert_eq!(f("ldr w1, [x0]", true).as_deref(), Some("ldar"));
        assert_eq!(f("str wzr, [x0]", false).as_deref(), Some("stlr"));
        assert_eq!(f("stxr w3, w2, [x0]", false).as_deref(), Some("stlxr"));
        assert_eq!(f("swp w0, w0, [x1]", true).as_deref(), Some("swpa"));
        assert_eq!(f("swpb w0, w0, [x1]", true).as_deref(), Some("swpab"));
        assert_eq!(f("swpa w0, w0, [x1]", false).as_deref(), Some("swpal"));
        assert_eq!(f("ldadd w0, w0, [x1]", false).as_deref(), Some("ldaddl"));
        assert_eq!(f("casal w0, w1, [x2]", true), None);
        assert_eq!(f("ldar w0, [x1]", true), None);
        assert_eq!(f("add w0, w0, #1", true), None);
    }
}

impl lifter::Lifter for Aarch64 {
    fn first_argument(&self) -> &'static str {
        "X0"
    }
    fn second_argument(&self) -> &'static str {
        "X1"
    }
    fn result(&self) -> &'static str {
        "X0"
    }
    fn litmus_arch(&self) -> atomlab_litmus::Arch {
        atomlab_litmus::Arch::AArch64
    }
    fn full_barrier(&self) -> Option<(Fence, &'static str)> {
        Some((Fence::Dmb(Barrier::Dmb, BarrierOpt::ISH), "dmb ish"))
    }
    /// The Arm ARM's acquire/release forms (C6.2): LDAR, LDAXR, STLR,
    /// STLXR, and the A/L suffixes of CAS, SWP and `LD<op>`.
    fn ordered_form(&self, instruction: &str, acquire: bool) -> Option<String> {
        let m = instruction.split_whitespace().next()?;
        let (base, size) = match m.strip_suffix('b').or_else(|| m.strip_suffix('h')) {
            Some(b) if ["ld", "st", "swp", "cas"].iter().any(|p| m.starts_with(p)) => {
                (b, &m[b.len()..])
            }
            _ => (m, ""),
        };
        let to = match (base, acquire) {
            ("ldr", true) => "ldar".to_string(),
            ("ldxr", true) => "ldaxr".to_string(),
            ("ldapr", true) => "ldar".to_string(),
            ("str", false) => "stlr".to_string(),
            ("stxr", false) => "stlxr".to_string(),
            (b, _)
                if b.starts_with("cas")
                    || b.starts_with("swp")
                    || (b.starts_with("ld")
                        && ["add", "clr", "eor", "set", "smax", "smin", "umax", "umin"]
                            .iter()
                            .any(|op| b[2..].starts_with(op))) =>
            {
                // CAS/SWP/LD<op>: A for acquire, L for release, AL both.
                let (core, had) = ["al", "a", "l"]
                    .iter()
                    .find_map(|s| b.strip_suffix(s).filter(|c| c.len() >= 3).map(|c| (c, *s)))
                    .unwrap_or((b, ""));
                let add = if acquire { "a" } else { "l" };
                let new = match had {
                    "al" => return None,
                    "" => add.to_string(),
                    s if s == add => return None,
                    _ => "al".to_string(),
                };
                format!("{core}{new}")
            }
            _ => return None,
        };
        Some(format!("{to}{size}"))
    }
    fn disassemble(&self, file: &PluginFile<'_>, addr: u64) -> Option<String> {
        let bytes = file.code_at(addr)?;
        decode(&InstDecoder::default(), bytes.get(..4)?).map(|i| i.to_string())
    }
    fn lift(
        &self,
        file: &PluginFile<'_>,
        entry: u64,
        obj: usize,
        lse: bool,
        regs: &mut Registers,
        locs: &mut Locations,
    ) -> Result<Lifted, Refusal> {
        lift(file, entry, obj, lse, regs, locs)
    }
}

/// What a register holds, as far as the analysis knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Abs {
    Unknown,
    Int(i64),
    /// An address in the file (ADRP, ADR).
    File(u64),
    /// Object `.0`'s address plus `.1`.
    Obj(usize, i64),
    /// The stack pointer on entry plus `.0`.
    Stack(i64),
    /// An integer known to be one of a few values (a masked index).
    Idx(Span),
    /// Object `.0`'s address plus one of the span's offsets (a slot
    /// address computed into a register: `add x9, x0, x9, lsl #3`).
    ObjIdx(usize, Span),
    /// The memory the allocator call at `.0` returned, plus `.1`
    /// ([`super::heap`]); [`heap::TLS`] for the thread's TLS block.
    Heap(u64, i64),
    /// The resolver of a TLS descriptor for the variable at this offset
    /// of the thread-local block (loaded from its GOT slot).
    TlsDesc(u64),
    /// A doubleword loaded from memory (a pointer the analysis cannot
    /// follow statically) plus `.0`: an access through it selects a
    /// field by its value at run time ([`heap::select`]), and `.0` tells
    /// the layout which field (`add x0, x0, #8; stlr wzr, [x0]`: offset
    /// 8, where the instruction alone says 0).
    Loaded(i64),
}

impl Abs {
    fn join(self, o: Abs) -> Abs {
        if self == o {
            self
        } else {
            Abs::Unknown
        }
    }

    fn plus(self, c: i64) -> Abs {
        match self {
            Abs::Int(v) => Abs::Int(v.wrapping_add(c)),
            Abs::File(a) => Abs::File(a.wrapping_add(c as u64)),
            Abs::Obj(o, off) => Abs::Obj(o, off.wrapping_add(c)),
            Abs::Stack(off) => Abs::Stack(off.wrapping_add(c)),
            Abs::Idx(s) => Abs::Idx(s.plus(c)),
            Abs::ObjIdx(o, s) => Abs::ObjIdx(o, s.plus(c)),
            Abs::Heap(site, off) => Abs::Heap(site, off.wrapping_add(c)),
            Abs::Loaded(off) => Abs::Loaded(off.wrapping_add(c)),
            Abs::TlsDesc(_) | Abs::Unknown => Abs::Unknown,
        }
    }

    /// The value shifted left by `s` bits (an index scaled to bytes).
    fn shl(self, s: u32) -> Abs {
        match self {
            Abs::Int(v) => Abs::Int(v.wrapping_shl(s)),
            Abs::Idx(span) => span.shifted(s).map_or(Abs::Unknown, Abs::Idx),
            _ => Abs::Unknown,
        }
    }

    /// The value ANDed with the constant `m`: an unknown integer masked to
    /// a few values becomes an index (`t & (N - 1)`).
    fn masked(self, m: i64) -> Abs {
        match self {
            Abs::Int(v) => Abs::Int(v & m),
            Abs::Idx(s) if s.within(m) && m & m.wrapping_add(1) == 0 => self,
            Abs::Obj(..) | Abs::ObjIdx(..) | Abs::Stack(_) | Abs::File(_) => Abs::Unknown,
            _ => Span::masked(m).map_or(Abs::Unknown, Abs::Idx),
        }
    }
}

/// What the flags were last set by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flags {
    None,
    /// SUBS/CMP: `a - b`, 32-bit or not.
    Sub(bool),
    /// ADDS/CMN and ANDS/TST: only zero or not is kept.
    ZeroOnly,
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    x: [Abs; 31],
    sp: Abs,
    stack: BTreeMap<i64, Abs>,
    flags: Flags,
}

impl State {
    fn join(&self, o: &State) -> State {
        let mut x = self.x;
        for (a, b) in x.iter_mut().zip(o.x.iter()) {
            *a = a.join(*b);
        }
        let stack = self
            .stack
            .iter()
            .filter_map(|(k, v)| o.stack.get(k).map(|w| (*k, v.join(*w))))
            .collect();
        State {
            x,
            sp: self.sp.join(o.sp),
            stack,
            flags: if self.flags == o.flags {
                self.flags
            } else {
                Flags::Unknown
            },
        }
    }
}

/// A call context: the return addresses and callee entries of the calls
/// being inlined, innermost last.
type Ctx = Vec<(u64, u64)>;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Target {
    Node(Ctx, u64),
    Exit,
}

/// One lowered instruction: a checker instruction or a jump to a node.
enum Low {
    I(Instr),
    Jump(Option<Expr>, Target),
}

/// The result of one instruction: its lowering, the state after it, and
/// where control goes when no jump is taken (`None`: nowhere).
struct Step {
    low: Vec<Low>,
    out: State,
    next: Option<Target>,
}

/// Lifts the function at `entry` with X0 holding object `obj`'s address.
pub fn lift(
    file: &PluginFile<'_>,
    entry: u64,
    obj: usize,
    lse: bool,
    regs: &mut Registers,
    locs: &mut Locations,
) -> Result<Lifted, Refusal> {
    let mut l = Lifter {
        file,
        decoder: InstDecoder::default(),
        lse,
        lse_flag: file.symbol("__aarch64_have_lse_atomics"),
        reads_lse_flag: false,
        follow_heap: locs.heap.follow,
        regs,
        locs: Some(locs),
        root: entry,
    };
    let mut x = [Abs::Unknown; 31];
    x[0] = Abs::Obj(obj, 0);
    // Pointer arguments (pop's item) point to their objects (X1…X7).
    for &(n, o) in &l.regs.pointers {
        if (1..8).contains(&n) {
            x[n] = Abs::Obj(o, 0);
        }
    }
    let start = State {
        x,
        sp: Abs::Stack(0),
        stack: BTreeMap::new(),
        flags: Flags::None,
    };
    // Phase 1: the states at every node, to a fixpoint.
    let mut order: Vec<(Ctx, u64)> = Vec::new();
    let mut states: HashMap<(Ctx, u64), State> = HashMap::new();
    let mut work: VecDeque<(Ctx, u64)> = VecDeque::new();
    let first = (Vec::new(), entry);
    states.insert(first.clone(), start);
    order.push(first.clone());
    work.push_back(first);
    let mut rounds = 0usize;
    while let Some(key) = work.pop_front() {
        rounds += 1;
        if rounds > 16 * MAX_NODES {
            return Err(l.refuse(
                entry,
                "the analysis of this function does not settle".into(),
            ));
        }
        let st = states[&key].clone();
        let saved = l.locs.take();
        let step = l.step(&key.0, key.1, &st);
        l.locs = saved;
        let step = step?;
        let mut targets: Vec<Target> = step
            .low
            .iter()
            .filter_map(|lw| match lw {
                Low::Jump(_, t) => Some(t.clone()),
                Low::I(_) => None,
            })
            .collect();
        targets.extend(step.next.clone());
        for t in targets {
            let Target::Node(c, pc) = t else { continue };
            let k = (c, pc);
            match states.get(&k) {
                Some(old) => {
                    let j = old.join(&step.out);
                    if &j != old {
                        states.insert(k.clone(), j);
                        work.push_back(k);
                    }
                }
                None => {
                    if order.len() >= MAX_NODES {
                        return Err(l.refuse(
                            pc,
                            format!(
                                "more than {MAX_NODES} instructions to follow from this function"
                            ),
                        ));
                    }
                    states.insert(k.clone(), step.out.clone());
                    order.push(k.clone());
                    work.push_back(k);
                }
            }
        }
    }
    // Phase 2: lower each node with its final state.
    let mut blocks: Vec<Vec<Low>> = Vec::with_capacity(order.len());
    for (i, key) in order.iter().enumerate() {
        let step = l.step(&key.0, key.1, &states[key])?;
        let mut low = step.low;
        if let Some(next) = step.next {
            let falls = match (&next, order.get(i + 1)) {
                (Target::Node(c, pc), Some(k)) => k.0 == *c && k.1 == *pc,
                _ => false,
            };
            if !falls {
                low.push(Low::Jump(None, next));
            }
        }
        blocks.push(low);
    }
    let mut start_of: HashMap<(Ctx, u64), usize> = HashMap::new();
    let mut at = 0usize;
    for (key, b) in order.iter().zip(&blocks) {
        start_of.insert(key.clone(), at);
        at += b.len();
    }
    let end = at;
    let mut code = Vec::with_capacity(end);
    let mut origins = Vec::with_capacity(end);
    for (key, b) in order.iter().zip(blocks) {
        for lw in b {
            origins.push(key.1);
            code.push(match lw {
                Low::I(i) => i,
                Low::Jump(cond, t) => Instr::Branch {
                    cond,
                    target: match t {
                        Target::Exit => end,
                        Target::Node(c, pc) => start_of.get(&(c, pc)).copied().unwrap_or(end),
                    },
                },
            });
        }
    }
    Ok(Lifted {
        code,
        origins,
        reads_lse_flag: l.reads_lse_flag,
    })
}

/// The address `atomlab_plugin` returns when its body is `adrp x0, page;
/// add x0, x0, #lo; ret` (optionally after `bti c`/`paciasp` hints).
pub fn returned_address(entry: u64, code: &[u8]) -> Option<u64> {
    let decoder = InstDecoder::default();
    let mut x0: Option<u64> = None;
    for (i, w) in code.chunks_exact(4).take(8).enumerate() {
        let pc = entry + 4 * i as u64;
        let inst = decode(&decoder, w)?;
        match (inst.opcode, inst.operands) {
            (Opcode::HINT, _) => {}
            (Opcode::ADRP, [Operand::Register(SizeCode::X, 0), Operand::PCOffset(off), ..]) => {
                x0 = Some((pc & !0xfff).wrapping_add(off as u64));
            }
            (
                Opcode::ADD,
                [Operand::RegisterOrSP(SizeCode::X, 0), Operand::RegisterOrSP(SizeCode::X, 0), Operand::Immediate(imm), ..],
            ) => {
                x0 = x0.map(|a| a.wrapping_add(u64::from(imm)));
            }
            (Opcode::ADR, [Operand::Register(SizeCode::X, 0), Operand::PCOffset(off), ..]) => {
                x0 = Some(pc.wrapping_add(off as u64));
            }
            (Opcode::RET, _) => return x0,
            _ => return None,
        }
    }
    None
}

fn decode(decoder: &InstDecoder, bytes: &[u8]) -> Option<Instruction> {
    let mut inst = Instruction::default();
    let mut reader = U8Reader::new(bytes);
    decoder.decode_into(&mut inst, &mut reader).ok()?;
    Some(inst)
}

const MASK32: i64 = 0xffff_ffff;

fn mask(e: Expr, w: bool) -> Expr {
    if w {
        Expr::bin(BinOp::And, e, Expr::int(MASK32))
    } else {
        e
    }
}

fn is_w(sz: SizeCode) -> bool {
    matches!(sz, SizeCode::W)
}

struct Lifter<'f, 'a, 'r> {
    file: &'f PluginFile<'a>,
    decoder: InstDecoder,
    lse: bool,
    lse_flag: Option<u64>,
    reads_lse_flag: bool,
    /// Calls to the allocator and `free` are followed ([`heap`]).
    follow_heap: bool,
    regs: &'r mut Registers,
    /// `None` during the analysis (no location is allocated yet).
    locs: Option<&'r mut Locations>,
    root: u64,
}

/// A resolved memory operand.
enum Mem {
    Loc(Expr),
    Stack(i64),
    LseFlag,
}

impl Lifter<'_, '_, '_> {
    fn refuse(&self, addr: u64, what: String) -> Refusal {
        Refusal {
            addr,
            place: self.file.describe(addr),
            what,
        }
    }

    fn xreg(&mut self, n: u16) -> Expr {
        Expr::Reg(self.regs.get(&format!("X{n}")))
    }

    /// A source operand's value and what the analysis knows of it.
    fn src(&mut self, st: &State, op: &Operand, pc: u64) -> Result<(Expr, Abs), Refusal> {
        Ok(match *op {
            Operand::Register(_, 31) => (Expr::int(0), Abs::Int(0)),
            Operand::Register(sz, n) | Operand::RegisterOrSP(sz, n) if n < 31 => (
                mask(self.xreg(n), is_w(sz)),
                if is_w(sz) {
                    w_abs(st.x[n as usize])
                } else {
                    st.x[n as usize]
                },
            ),
            // The stack pointer's value is not modelled, only what it
            // points to; a constant stands for it.
            Operand::RegisterOrSP(_, _) => (Expr::int(0x7ff0_0000), st.sp),
            Operand::RegShift(style, amount, sz, n) => {
                let (e, a) = if n == 31 {
                    (Expr::int(0), Abs::Int(0))
                } else {
                    (
                        mask(self.xreg(n), is_w(sz)),
                        if is_w(sz) {
                            w_abs(st.x[n as usize])
                        } else {
                            st.x[n as usize]
                        },
                    )
                };
                if amount == 0 {
                    (e, a)
                } else {
                    let op = match style {
                        ShiftStyle::LSL => BinOp::Shl,
                        ShiftStyle::LSR => BinOp::Shr,
                        _ => {
                            return Err(self.refuse(
                                pc,
                                format!("shift {style:?} of a register (not followed)"),
                            ))
                        }
                    };
                    let abs = match (a, op) {
                        (Abs::Int(v), _) => Abs::Int(binop(op, v, i64::from(amount))),
                        (Abs::Idx(_), BinOp::Shl) if !is_w(sz) => a.shl(u32::from(amount)),
                        _ => Abs::Unknown,
                    };
                    (
                        mask(Expr::bin(op, e, Expr::int(i64::from(amount))), is_w(sz)),
                        abs,
                    )
                }
            }
            Operand::Immediate(v) => (Expr::int(i64::from(v)), Abs::Int(i64::from(v))),
            Operand::Imm64(v) => (Expr::int(v as i64), Abs::Int(v as i64)),
            Operand::Imm16(v) => (Expr::int(i64::from(v)), Abs::Int(i64::from(v))),
            Operand::ImmShift(v, s) => {
                let v = i64::from(v) << s;
                (Expr::int(v), Abs::Int(v))
            }
            _ => return Err(self.refuse(pc, format!("operand {op} (not followed)"))),
        })
    }

    /// Writes `e` (known as `a`) to the destination operand.
    fn dst(
        &mut self,
        st: &mut State,
        op: &Operand,
        e: Expr,
        a: Abs,
        low: &mut Vec<Low>,
        pc: u64,
    ) -> Result<(), Refusal> {
        match *op {
            Operand::Register(_, 31) => {}
            Operand::Register(sz, n) | Operand::RegisterOrSP(sz, n) if n < 31 => {
                let w = is_w(sz);
                st.x[n as usize] = if w { w_abs(a) } else { a };
                let r = self.regs.get(&format!("X{n}"));
                low.push(Low::I(Instr::Assign {
                    dst: r,
                    expr: mask(e, w),
                }));
            }
            Operand::RegisterOrSP(SizeCode::X, 31) => match a {
                Abs::Stack(_) => st.sp = a,
                _ => {
                    return Err(self.refuse(
                        pc,
                        "moves the stack pointer somewhere the analysis cannot follow".into(),
                    ))
                }
            },
            _ => return Err(self.refuse(pc, format!("destination {op} (not followed)"))),
        }
        Ok(())
    }

    fn reg_dst(&mut self, op: &Operand) -> Option<(atomlab_litmus::Reg, bool)> {
        match *op {
            Operand::Register(sz, n) if n < 31 => Some((self.regs.get(&format!("X{n}")), is_w(sz))),
            _ => None,
        }
    }

    /// The memory operand `op` accessed with `width` bytes: its location
    /// (or stack slot), and the base register writeback, if any.
    fn mem(
        &mut self,
        st: &mut State,
        op: &Operand,
        width: u8,
        pc: u64,
        low: &mut Vec<Low>,
        flag_ok: bool,
    ) -> Result<Mem, Refusal> {
        let (base, off, wb) = match *op {
            Operand::RegPreIndex(b, off, wb) => (
                b,
                i64::from(off),
                if wb { Some(i64::from(off)) } else { None },
            ),
            Operand::RegPostIndex(b, off) => (b, 0, Some(i64::from(off))),
            Operand::RegRegOffset(b, i, SizeCode::X, ShiftStyle::LSL, 0)
                if b < 31 && i < 31 && matches!(st.x[i as usize], Abs::Int(_)) =>
            {
                // A constant index: a TLS variable's offset from the
                // thread pointer (`ldr w2, [x3, x0]` after its
                // descriptor call).
                let Abs::Int(off) = st.x[i as usize] else {
                    unreachable!("matched above")
                };
                (b, off, None)
            }
            Operand::RegRegOffset(b, i, sz, style, amount) => {
                return self.mem_indexed(st, (b, i, sz, style, amount), width, pc)
            }
            _ => {
                return Err(self.refuse(
                    pc,
                    format!("memory operand {op} (this addressing form is not followed)"),
                ))
            }
        };
        let b_abs = if base == 31 {
            st.sp
        } else {
            st.x[base as usize]
        };
        if let Abs::ObjIdx(o, span) = b_abs {
            return self.mem_computed(pc, base, (o, span, off), wb.is_some(), width);
        }
        let at = b_abs.plus(off);
        if let Some(d) = wb {
            let moved = b_abs.plus(d);
            if base == 31 {
                st.sp = moved;
            } else {
                st.x[base as usize] = moved;
                let r = self.regs.get(&format!("X{base}"));
                low.push(Low::I(Instr::Assign {
                    dst: r,
                    expr: Expr::bin(BinOp::Add, Expr::Reg(r), Expr::int(d)),
                }));
            }
        }
        match at {
            Abs::Obj(o, field) => {
                let l = match self.locs.as_deref_mut() {
                    Some(locs) => locs.field(o, field, width).map_err(|e| self.refuse(pc, e))?,
                    None => 0,
                };
                // The base register joins the address with its value
                // times zero, so an address dependency through it stays.
                let dep = if base == 31 {
                    Expr::int(0)
                } else {
                    Expr::bin(BinOp::And, Expr::Reg(self.regs.get(&format!("X{base}"))), Expr::int(0))
                };
                Ok(Mem::Loc(Expr::bin(BinOp::Add, Expr::Const(Value::Loc(l)), dep)))
            }
            Abs::Heap(site, field) => {
                let Some(locs) = self.locs.as_deref_mut() else {
                    return Ok(Mem::Loc(Expr::int(0)));
                };
                let here = locs.heap.regions.iter().find(|r| {
                    r.key.site == site
                        && r.key.thread == locs.heap.thread
                        && (r.key.call == locs.heap.call || site == heap::TLS)
                });
                let found = match here.cloned() {
                    Some(r) => locs.field(r.obj, field, width).map(|l| (r, l)),
                    None => Err("uses memory of an allocation that did not run".into()),
                };
                let (r, l) = found.map_err(|e| self.refuse(pc, e))?;
                low.extend(heap::use_static(self.regs, &r).into_iter().map(Low::I));
                let dep = Expr::bin(BinOp::And, Expr::Reg(self.regs.get(&format!("X{base}"))), Expr::int(0));
                Ok(Mem::Loc(Expr::bin(BinOp::Add, Expr::Const(Value::Loc(l)), dep)))
            }
            Abs::Unknown if base != 31 => self.dynamic(base, off, off, width, pc, low),
            Abs::Loaded(k) if base != 31 => {
                self.dynamic(base, off, k.wrapping_add(off), width, pc, low)
            }
            Abs::Stack(slot) => Ok(Mem::Stack(slot)),
            Abs::File(a) if flag_ok && (Some(a) == self.lse_flag || self.in_helper_flag_read(a)) => {
                self.reads_lse_flag = true;
                Ok(Mem::LseFlag)
            }
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
                    if base == 31 { "sp".to_string() } else { format!("x{base}") }
                ),
            )),
        }
    }

    /// The memory operand `[base, index{, extend #amount}]` (Arm ARM C6.2,
    /// register offset): a field of the object, at the base's offset
    /// plus the index scaled, for each value the index can hold; the
    /// address is the one the index's value picks ([`index::select`]).
    fn mem_indexed(
        &mut self,
        st: &State,
        (base, i, sz, style, amount): (u16, u16, SizeCode, ShiftStyle, u8),
        width: u8,
        pc: u64,
    ) -> Result<Mem, Refusal> {
        let refuse = |me: &Self, why: &str| {
            me.refuse(
                pc,
                format!(
                    "accesses memory at {} plus index {}{i}: {why}",
                    if base == 31 {
                        "sp".to_string()
                    } else {
                        format!("x{base}")
                    },
                    if is_w(sz) { "w" } else { "x" }
                ),
            )
        };
        let b_abs = if base == 31 {
            st.sp
        } else {
            st.x[base as usize]
        };
        let Abs::Obj(o, off) = b_abs else {
            return Err(refuse(
                self,
                "the base is not the object or a pointer argument (not followed)",
            ));
        };
        // A W index is zero-extended (UXTW) or sign-extended (SXTW): a
        // nonnegative 32-bit value either way.
        let i_abs = match (i, sz) {
            (31, _) => Abs::Int(0),
            (_, SizeCode::W) => w_abs(st.x[i as usize]),
            _ => st.x[i as usize],
        };
        let ok_style = matches!(
            (style, sz),
            (
                ShiftStyle::LSL | ShiftStyle::UXTX | ShiftStyle::SXTX,
                SizeCode::X
            ) | (ShiftStyle::UXTW | ShiftStyle::SXTW, SizeCode::W)
        );
        let values: Vec<i64> = match i_abs {
            Abs::Int(v) if ok_style => vec![v],
            Abs::Idx(s) if ok_style && (matches!(sz, SizeCode::X) || s.within(0x7fff_ffff)) => {
                s.values().collect()
            }
            _ => {
                return Err(refuse(
                    self,
                    "an index verify cannot bound (it follows an index masked to a few values, as a ring's `slot[t & (N - 1)]`, into the object)",
                ))
            }
        };
        let index_e = if i == 31 {
            Expr::int(0)
        } else {
            mask(self.xreg(i), is_w(sz))
        };
        let dep = if base == 31 {
            Expr::int(0)
        } else {
            Expr::bin(BinOp::And, self.xreg(base), Expr::int(0))
        };
        let Some(locs) = self.locs.as_deref_mut() else {
            return Ok(Mem::Loc(Expr::int(0)));
        };
        let picked: Result<Vec<(i64, usize)>, String> = values
            .into_iter()
            .map(|v| {
                let field = off.wrapping_add(v.wrapping_shl(u32::from(amount)));
                locs.field(o, field, width).map(|l| (v, l))
            })
            .collect();
        let candidates = picked.map_err(|e| self.refuse(pc, e))?;
        Ok(Mem::Loc(index::select(index_e, &candidates, dep)))
    }

    /// The memory operand `[xN, #imm]` whose base holds the object's
    /// address plus one of a few offsets ([`Abs::ObjIdx`]): the field the
    /// register's value picks ([`index::select_computed`]).
    fn mem_computed(
        &mut self,
        pc: u64,
        base: u16,
        at: (usize, Span, i64),
        writeback: bool,
        width: u8,
    ) -> Result<Mem, Refusal> {
        if writeback {
            return Err(self.refuse(
                pc,
                format!("moves x{base}, a slot address computed from an index (not followed)"),
            ));
        }
        let reg = self.xreg(base);
        let picked = match self.locs.as_deref_mut() {
            Some(locs) => index::select_computed(locs, reg, at, width),
            None => Ok(Expr::int(0)),
        };
        picked.map(Mem::Loc).map_err(|e| self.refuse(pc, e))
    }

    /// An access of `width` bytes at `x{base} + off`, a pointer loaded from
    /// memory: the field of the allocator's region it points to
    /// ([`heap::select`]), `field` bytes past the loaded pointer; refused
    /// when the test has no region.
    fn dynamic(
        &mut self,
        base: u16,
        off: i64,
        field: i64,
        width: u8,
        pc: u64,
        low: &mut Vec<Low>,
    ) -> Result<Mem, Refusal> {
        let Some(locs) = self.locs.as_deref_mut() else {
            return Ok(Mem::Loc(Expr::int(0)));
        };
        if locs.heap.complete && locs.heap.regions.is_empty() {
            return Err(self.refuse(
                pc,
                format!("accesses memory at an address verify cannot resolve to a field of the object (base register x{base})"),
            ));
        }
        let ptr = Expr::Reg(self.regs.get(&format!("X{base}")));
        let (addr, checks) = heap::select(self.regs, locs, ptr, off, field, width)
            .map_err(|e| self.refuse(pc, e))?;
        low.extend(checks.into_iter().map(Low::I));
        Ok(Mem::Loc(addr))
    }

    /// A call through the PLT to the allocator or `free` at `pc`
    /// (`tail`: a jump): its effect, or `None` for another function.
    fn allocator_call(
        &mut self,
        ctx: &Ctx,
        pc: u64,
        target: u64,
        tail: bool,
        out: &mut State,
        low: &mut Vec<Low>,
    ) -> Option<Target> {
        if !self.follow_heap {
            return None;
        }
        let name = self.file.import_at(target)?.to_string();
        let back = if tail {
            ret(ctx)
        } else {
            Target::Node(ctx.clone(), pc + 4)
        };
        let is_alloc = heap::ALLOCATORS.contains(&name.as_str());
        if !is_alloc && name != "free" {
            return None;
        }
        if let Some(locs) = self.locs.as_deref_mut() {
            let code = if is_alloc {
                let r = locs.region(pc, &name);
                heap::allocate(self.regs, &r, "X0")
            } else {
                let ptr = Expr::Reg(self.regs.get("X0"));
                heap::free(self.regs, locs, ptr)
            };
            low.extend(code.into_iter().map(Low::I));
        }
        // AAPCS64: X0-X18 and X30 are not preserved across a call.
        for x in out.x.iter_mut().take(19) {
            *x = Abs::Unknown;
        }
        out.x[30] = Abs::Unknown;
        if is_alloc {
            out.x[0] = Abs::Heap(pc, 0);
        }
        Some(back)
    }

    /// The variable offset of the TLS descriptor that an 8-byte load from
    /// `op` reads the resolver of (`ldr x1, [x0, #:tlsdesc_lo12:v]`).
    fn tls_descriptor(&self, st: &State, op: &Operand, width: u8) -> Option<u64> {
        let Operand::RegPreIndex(b, off, false) = *op else {
            return None;
        };
        let Abs::File(a) = st.x.get(b as usize)?.plus(i64::from(off)) else {
            return None;
        };
        (width == 8).then(|| self.file.tls_descriptor(a)).flatten()
    }

    /// `blr` of a TLS descriptor's resolver (AAELF64 "TLS descriptors":
    /// X0 the descriptor in, the variable's offset from the thread
    /// pointer out, every other register but X30 kept).
    fn tls_call(&mut self, op: &Operand, out: &mut State, low: &mut Vec<Low>) -> bool {
        let Operand::Register(SizeCode::X, n) = *op else {
            return false;
        };
        let Some(Abs::TlsDesc(off)) = out.x.get(n as usize).copied() else {
            return false;
        };
        let r = self.regs.get("X0");
        low.push(Low::I(Instr::Assign {
            dst: r,
            expr: Expr::int(off as i64),
        }));
        out.x[0] = Abs::Int(off as i64);
        out.x[30] = Abs::Unknown;
        true
    }

    /// `mrs xN, tpidr_el0`: the thread pointer, the start of this
    /// thread's TLS block (a region of its own, [`heap::TLS`]).
    fn thread_pointer(
        &mut self,
        inst: &Instruction,
        dst: &Operand,
        out: &mut State,
        low: &mut Vec<Low>,
        pc: u64,
    ) -> Result<bool, Refusal> {
        if !inst.to_string().contains("tpidr_el0") || !self.follow_heap {
            return Ok(false);
        }
        let base = match self.locs.as_deref_mut() {
            Some(locs) => locs.tls_region(self.file).base,
            None => 0,
        };
        self.dst(out, dst, Expr::int(base), Abs::Heap(heap::TLS, 0), low, pc)?;
        Ok(true)
    }

    /// A stripped file has no `__aarch64_have_lse_atomics` symbol: the
    /// flag is the byte an outline helper reads in its first instructions.
    fn in_helper_flag_read(&self, _addr: u64) -> bool {
        self.lse_flag.is_none()
    }

    fn stack_reg(&mut self, slot: i64) -> atomlab_litmus::Reg {
        self.regs.get(&format!("sp{slot:+}"))
    }

    fn cond(&mut self, st: &State, code: u8, pc: u64) -> Result<Expr, Refusal> {
        let a = Expr::Reg(self.regs.get("%nzcv.a"));
        let b = Expr::Reg(self.regs.get("%nzcv.b"));
        // Condition codes: Arm ARM C1.2.4, table C1-1.
        let (op, signed) = match code {
            0 => (BinOp::Eq, false),
            1 => (BinOp::Ne, false),
            14 | 15 => return Ok(Expr::int(1)),
            2 => (BinOp::Uge, false),
            3 => (BinOp::Ult, false),
            8 => (BinOp::Ugt, false),
            9 => (BinOp::Ule, false),
            10 => (BinOp::Ge, true),
            11 => (BinOp::Lt, true),
            12 => (BinOp::Gt, true),
            13 => (BinOp::Le, true),
            _ => {
                return Err(self.refuse(
                    pc,
                    format!("condition code {code} (N or V flag alone) is not followed"),
                ))
            }
        };
        match st.flags {
            Flags::Sub(w) => {
                if signed && w {
                    let flip = |e: Expr| Expr::bin(BinOp::Xor, e, Expr::int(0x8000_0000));
                    let uop = match op {
                        BinOp::Ge => BinOp::Uge,
                        BinOp::Lt => BinOp::Ult,
                        BinOp::Gt => BinOp::Ugt,
                        _ => BinOp::Ule,
                    };
                    Ok(Expr::bin(uop, flip(a), flip(b)))
                } else {
                    Ok(Expr::bin(op, a, b))
                }
            }
            Flags::ZeroOnly if matches!(op, BinOp::Eq | BinOp::Ne) => Ok(Expr::bin(op, a, b)),
            _ => Err(self.refuse(
                pc,
                "a condition on flags the analysis cannot tell the origin of".into(),
            )),
        }
    }

    fn set_flags(&mut self, a: Expr, b: Expr, low: &mut Vec<Low>) {
        let fa = self.regs.get("%nzcv.a");
        let fb = self.regs.get("%nzcv.b");
        low.push(Low::I(Instr::Assign { dst: fa, expr: a }));
        low.push(Low::I(Instr::Assign { dst: fb, expr: b }));
    }

    fn call(&self, ctx: &Ctx, pc: u64, target: u64, tail: bool) -> Result<Option<Target>, Refusal> {
        if let Some(name) = self.file.import_at(target) {
            // sched_yield(2) only gives up the CPU: nothing another thread
            // can see. Any other function of another library is unknown.
            if name == "sched_yield" {
                return Ok(if tail {
                    Some(ret(ctx))
                } else {
                    Some(Target::Node(ctx.clone(), pc + 4))
                });
            }
            return Err(self.refuse(
                pc,
                format!("calls {name}, a function of another library, which verify cannot follow"),
            ));
        }
        if self.file.code_at(target).is_none() {
            return Err(self.refuse(pc, format!("jumps to {target:#x}, outside the file's code")));
        }
        if tail {
            return Ok(Some(Target::Node(ctx.clone(), target)));
        }
        if ctx.len() >= MAX_DEPTH || ctx.iter().any(|c| c.1 == target) || target == self.root {
            return Err(self.refuse(
                pc,
                format!(
                    "calls {} recursively or nested deeper than {MAX_DEPTH}",
                    self.file.describe(target)
                ),
            ));
        }
        let mut c = ctx.clone();
        c.push((pc + 4, target));
        Ok(Some(Target::Node(c, target)))
    }

    #[allow(clippy::too_many_lines)]
    fn step(&mut self, ctx: &Ctx, pc: u64, st: &State) -> Result<Step, Refusal> {
        let bytes = self
            .file
            .code_at(pc)
            .and_then(|b| b.get(..4))
            .ok_or_else(|| self.refuse(pc, "runs past the end of the code".into()))?;
        let inst = decode(&self.decoder, bytes).ok_or_else(|| {
            self.refuse(
                pc,
                format!(
                    "undecodable word {:08x}",
                    u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
                ),
            )
        })?;
        let mut out = st.clone();
        let mut low = Vec::new();
        let mut next = Some(Target::Node(ctx.clone(), pc + 4));
        let ops = inst.operands;
        let pc_target = |op: &Operand| match *op {
            Operand::PCOffset(off) => Some(pc.wrapping_add(off as u64)),
            _ => None,
        };
        let plain = Annot::default();
        let acq = Annot {
            acquire: true,
            ..Annot::default()
        };
        let acq_pc = Annot {
            acquire_pc: true,
            ..Annot::default()
        };
        let rel = Annot {
            release: true,
            ..Annot::default()
        };
        let excl = |a: Annot| Annot {
            exclusive: true,
            ..a
        };
        match inst.opcode {
            Opcode::HINT => {} // NOP, YIELD, WFE, SEVL, BTI, PAC hints: no memory effect.
            Opcode::ISB => low.push(Low::I(Instr::Fence(Fence::Isb))),
            Opcode::DMB(crm) | Opcode::DSB(crm) => {
                let name = match crm {
                    15 => "SY",
                    14 => "ST",
                    13 => "LD",
                    11 => "ISH",
                    10 => "ISHST",
                    9 => "ISHLD",
                    7 => "NSH",
                    6 => "NSHST",
                    5 => "NSHLD",
                    3 => "OSH",
                    2 => "OSHST",
                    1 => "OSHLD",
                    _ => return Err(self.refuse(pc, format!("{inst} (a reserved barrier option)"))),
                };
                // Every CRm above names an option BarrierOpt knows.
                let option = BarrierOpt::parse(name)
                    .ok_or_else(|| self.refuse(pc, format!("{inst} (barrier option {name})")))?;
                let b = if matches!(inst.opcode, Opcode::DMB(_)) {
                    Barrier::Dmb
                } else {
                    Barrier::Dsb
                };
                low.push(Low::I(Instr::Fence(Fence::Dmb(b, option))));
            }
            Opcode::ADD | Opcode::SUB | Opcode::ADDS | Opcode::SUBS => {
                let (a, aa) = self.src(st, &ops[1], pc)?;
                let (b, ba) = self.src(st, &ops[2], pc)?;
                let w = matches!(
                    ops[0],
                    Operand::Register(SizeCode::W, _) | Operand::RegisterOrSP(SizeCode::W, _)
                );
                let sub = matches!(inst.opcode, Opcode::SUB | Opcode::SUBS);
                let abs = match (aa, ba, sub) {
                    (x, Abs::Int(c), false) => x.plus(c),
                    (Abs::Int(c), x, false) => x.plus(c),
                    // The object plus a (scaled) index: a slot's address.
                    (Abs::Obj(o, off), Abs::Idx(s), false)
                    | (Abs::Idx(s), Abs::Obj(o, off), false) => Abs::ObjIdx(o, s.plus(off)),
                    (x, Abs::Int(c), true) => x.plus(c.wrapping_neg()),
                    _ => Abs::Unknown,
                };
                if matches!(inst.opcode, Opcode::SUBS) {
                    self.set_flags(a.clone(), b.clone(), &mut low);
                    out.flags = Flags::Sub(w);
                } else if matches!(inst.opcode, Opcode::ADDS) {
                    let neg = mask(Expr::bin(BinOp::Sub, Expr::int(0), b.clone()), w);
                    self.set_flags(a.clone(), neg, &mut low);
                    out.flags = Flags::ZeroOnly;
                }
                let op = if sub { BinOp::Sub } else { BinOp::Add };
                self.dst(&mut out, &ops[0], Expr::bin(op, a, b), abs, &mut low, pc)?;
            }
            Opcode::AND | Opcode::ORR | Opcode::EOR | Opcode::ANDS | Opcode::BIC => {
                let (a, aa) = self.src(st, &ops[1], pc)?;
                let (b, ba) = self.src(st, &ops[2], pc)?;
                let w = matches!(
                    ops[0],
                    Operand::Register(SizeCode::W, _) | Operand::RegisterOrSP(SizeCode::W, _)
                );
                let op = match inst.opcode {
                    Opcode::ORR => BinOp::Or,
                    Opcode::EOR => BinOp::Xor,
                    Opcode::BIC => BinOp::AndNot,
                    _ => BinOp::And,
                };
                let abs = match (aa, ba) {
                    (Abs::Int(x), Abs::Int(y)) => Abs::Int(binop(op, x, y)),
                    // ORR d, zr, s is MOV.
                    (Abs::Int(0), s) if op == BinOp::Or => s,
                    // AND with a small mask: a ring's index (`t & (N - 1)`).
                    (x, Abs::Int(m)) | (Abs::Int(m), x) if op == BinOp::And => x.masked(m),
                    _ => Abs::Unknown,
                };
                let e = Expr::bin(op, a, b);
                if matches!(inst.opcode, Opcode::ANDS) {
                    self.set_flags(mask(e.clone(), w), Expr::int(0), &mut low);
                    out.flags = Flags::ZeroOnly;
                }
                self.dst(&mut out, &ops[0], e, abs, &mut low, pc)?;
            }
            Opcode::MOVZ | Opcode::MOVN => {
                let Operand::ImmShift(v, s) = ops[1] else {
                    return Err(self.refuse(pc, format!("{inst}: operand not followed")));
                };
                let mut v = i64::from(v) << s;
                if matches!(inst.opcode, Opcode::MOVN) {
                    v = !v;
                }
                if matches!(ops[0], Operand::Register(SizeCode::W, _)) {
                    v &= MASK32;
                }
                self.dst(&mut out, &ops[0], Expr::int(v), Abs::Int(v), &mut low, pc)?;
            }
            Opcode::MOVK => {
                let (Operand::ImmShift(v, s), Operand::Register(_, n)) = (ops[1], ops[0]) else {
                    return Err(self.refuse(pc, format!("{inst}: operand not followed")));
                };
                let keep = !(0xffffi64 << s);
                let put = i64::from(v) << s;
                let old = if n < 31 {
                    st.x[n as usize]
                } else {
                    Abs::Int(0)
                };
                let abs = match old {
                    Abs::Int(o) => Abs::Int((o & keep) | put),
                    _ => Abs::Unknown,
                };
                let (cur, _) = self.src(st, &ops[0], pc)?;
                let e = Expr::bin(
                    BinOp::Or,
                    Expr::bin(BinOp::And, cur, Expr::int(keep)),
                    Expr::int(put),
                );
                self.dst(&mut out, &ops[0], e, abs, &mut low, pc)?;
            }
            Opcode::UBFM => {
                let (Operand::Immediate(immr), Operand::Immediate(imms)) = (ops[2], ops[3]) else {
                    return Err(self.refuse(pc, format!("{inst}: operand not followed")));
                };
                let (x, xa) = self.src(st, &ops[1], pc)?;
                let size: u32 = if matches!(ops[0], Operand::Register(SizeCode::W, _)) {
                    32
                } else {
                    64
                };
                let ones = |n: u32| {
                    if n >= 64 {
                        -1i64
                    } else {
                        ((1u64 << n) - 1) as i64
                    }
                };
                // UBFM: Arm ARM C6.2 (LSR, LSL, UBFX, UXTB/UXTH aliases).
                let (e, f): (Expr, Box<dyn Fn(i64) -> i64>) = if imms >= immr {
                    let width = imms - immr + 1;
                    (
                        Expr::bin(
                            BinOp::And,
                            Expr::bin(BinOp::Shr, x, Expr::int(i64::from(immr))),
                            Expr::int(ones(width)),
                        ),
                        Box::new(move |v| ((v as u64 >> immr) as i64) & ones(width)),
                    )
                } else {
                    let sh = size - immr;
                    (
                        Expr::bin(
                            BinOp::Shl,
                            Expr::bin(BinOp::And, x, Expr::int(ones(imms + 1))),
                            Expr::int(i64::from(sh)),
                        ),
                        Box::new(move |v| (v & ones(imms + 1)) << sh),
                    )
                };
                let abs = match xa {
                    Abs::Int(v) => Abs::Int(f(v)),
                    Abs::Idx(_) => ubfm_index(xa, immr, imms, size),
                    _ => Abs::Unknown,
                };
                self.dst(&mut out, &ops[0], e, abs, &mut low, pc)?;
            }
            Opcode::MADD => {
                let (n, na) = self.src(st, &ops[1], pc)?;
                let (m, ma) = self.src(st, &ops[2], pc)?;
                let (a, aa) = self.src(st, &ops[3], pc)?;
                let abs = match (na, ma, aa) {
                    (Abs::Int(x), Abs::Int(y), Abs::Int(z)) => {
                        Abs::Int(z.wrapping_add(x.wrapping_mul(y)))
                    }
                    _ => Abs::Unknown,
                };
                let e = Expr::bin(BinOp::Add, a, Expr::bin(BinOp::Mul, n, m));
                self.dst(&mut out, &ops[0], e, abs, &mut low, pc)?;
            }
            Opcode::CSEL | Opcode::CSINC => {
                let Operand::ConditionCode(c) = ops[3] else {
                    return Err(self.refuse(pc, format!("{inst}: operand not followed")));
                };
                let cond = self.cond(st, c, pc)?;
                let (a, _) = self.src(st, &ops[1], pc)?;
                let (mut b, _) = self.src(st, &ops[2], pc)?;
                if matches!(inst.opcode, Opcode::CSINC) {
                    b = Expr::bin(BinOp::Add, b, Expr::int(1));
                }
                if let Some((dst, w)) = self.reg_dst(&ops[0]) {
                    low.push(Low::I(Instr::Select { dst, cond, a, b }));
                    if w {
                        low.push(Low::I(Instr::Assign {
                            dst,
                            expr: mask(Expr::Reg(dst), true),
                        }));
                    }
                }
                if let Operand::Register(_, n) = ops[0] {
                    if n < 31 {
                        out.x[n as usize] = Abs::Unknown;
                    }
                }
            }
            Opcode::ADRP | Opcode::ADR => {
                let Operand::PCOffset(off) = ops[1] else {
                    return Err(self.refuse(pc, format!("{inst}: operand not followed")));
                };
                let base = if matches!(inst.opcode, Opcode::ADRP) {
                    pc & !0xfff
                } else {
                    pc
                };
                let a = base.wrapping_add(off as u64);
                self.dst(
                    &mut out,
                    &ops[0],
                    Expr::int(a as i64),
                    Abs::File(a),
                    &mut low,
                    pc,
                )?;
            }
            // Loads and stores (Arm ARM C3.2): width from the mnemonic.
            Opcode::LDR
            | Opcode::LDRB
            | Opcode::LDRH
            | Opcode::LDUR
            | Opcode::LDURB
            | Opcode::LDURH
            | Opcode::LDAR
            | Opcode::LDARB
            | Opcode::LDARH
            | Opcode::LDAPR
            | Opcode::LDAPRB
            | Opcode::LDAPRH
            | Opcode::LDXR
            | Opcode::LDXRB
            | Opcode::LDXRH
            | Opcode::LDAXR
            | Opcode::LDAXRB
            | Opcode::LDAXRH => {
                let width = width_of(inst.opcode, &ops[0]);
                let annot = match inst.opcode {
                    Opcode::LDAR | Opcode::LDARB | Opcode::LDARH => acq,
                    Opcode::LDAPR | Opcode::LDAPRB | Opcode::LDAPRH => acq_pc,
                    Opcode::LDXR | Opcode::LDXRB | Opcode::LDXRH => excl(plain),
                    Opcode::LDAXR | Opcode::LDAXRB | Opcode::LDAXRH => excl(acq),
                    _ => plain,
                };
                let flag_ok = matches!(inst.opcode, Opcode::LDRB);
                if let Some(off) = self.tls_descriptor(st, &ops[1], width) {
                    // The descriptor's resolver, called next (`blr`).
                    self.dst(
                        &mut out,
                        &ops[0],
                        Expr::int(0),
                        Abs::TlsDesc(off),
                        &mut low,
                        pc,
                    )?;
                    return Ok(Step { low, out, next });
                }
                let m = self.mem(&mut out, &ops[1], width, pc, &mut low, flag_ok)?;
                let dst = self.reg_dst(&ops[0]).map(|d| d.0);
                let n = match ops[0] {
                    Operand::Register(_, n) if n < 31 => Some(n as usize),
                    _ => None,
                };
                match m {
                    Mem::Loc(addr) => {
                        low.push(Low::I(Instr::Load { dst, addr, annot }));
                        if let Some(n) = n {
                            // A doubleword may be a pointer to follow.
                            out.x[n] = if width == 8 {
                                Abs::Loaded(0)
                            } else {
                                Abs::Unknown
                            };
                        }
                    }
                    Mem::Stack(slot) => {
                        let s = self.stack_reg(slot);
                        if let Some(d) = dst {
                            low.push(Low::I(Instr::Assign {
                                dst: d,
                                expr: Expr::Reg(s),
                            }));
                        }
                        if let Some(n) = n {
                            out.x[n] = st.stack.get(&slot).copied().unwrap_or(Abs::Unknown);
                        }
                    }
                    Mem::LseFlag => {
                        let v = i64::from(self.lse);
                        if let Some(d) = dst {
                            low.push(Low::I(Instr::Assign {
                                dst: d,
                                expr: Expr::int(v),
                            }));
                        }
                        if let Some(n) = n {
                            out.x[n] = Abs::Int(v);
                        }
                    }
                }
            }
            Opcode::STR
            | Opcode::STRB
            | Opcode::STRH
            | Opcode::STUR
            | Opcode::STURB
            | Opcode::STURH
            | Opcode::STLR
            | Opcode::STLRB
            | Opcode::STLRH => {
                let width = width_of(inst.opcode, &ops[0]);
                let (value, va) = self.src(st, &ops[0], pc)?;
                let value = narrow(value, width);
                let annot = if matches!(inst.opcode, Opcode::STLR | Opcode::STLRB | Opcode::STLRH) {
                    rel
                } else {
                    plain
                };
                match self.mem(&mut out, &ops[1], width, pc, &mut low, false)? {
                    Mem::Loc(addr) => {
                        if matches!(
                            va,
                            Abs::Obj(..) | Abs::ObjIdx(..) | Abs::Stack(_) | Abs::File(_)
                        ) {
                            return Err(self.refuse(pc, "stores a pointer to shared memory (linked structures are not modelled)".into()));
                        }
                        low.push(Low::I(Instr::Store { addr, value, annot }));
                    }
                    Mem::Stack(slot) => {
                        let s = self.stack_reg(slot);
                        low.push(Low::I(Instr::Assign {
                            dst: s,
                            expr: value,
                        }));
                        out.stack.insert(slot, va);
                    }
                    Mem::LseFlag => {
                        return Err(self.refuse(pc, "writes the outline-atomics flag".into()));
                    }
                }
            }
            Opcode::STP | Opcode::LDP => {
                let width = if matches!(ops[0], Operand::Register(SizeCode::W, _)) {
                    4
                } else {
                    8
                };
                match self.mem(&mut out, &ops[2], width, pc, &mut low, false)? {
                    Mem::Stack(slot) => {
                        let base = slot;
                        for (k, op) in ops[..2].iter().enumerate() {
                            let s = base + k as i64 * i64::from(width);
                            let sr = self.stack_reg(s);
                            if matches!(inst.opcode, Opcode::STP) {
                                let (v, va) = self.src(st, op, pc)?;
                                low.push(Low::I(Instr::Assign { dst: sr, expr: v }));
                                out.stack.insert(s, va);
                            } else {
                                let a = st.stack.get(&s).copied().unwrap_or(Abs::Unknown);
                                self.dst(&mut out, op, Expr::Reg(sr), a, &mut low, pc)?;
                            }
                        }
                    }
                    _ => {
                        return Err(self.refuse(
                            pc,
                            format!("{inst}: a pair access outside the stack is not followed"),
                        ))
                    }
                }
            }
            Opcode::STXR
            | Opcode::STXRB
            | Opcode::STXRH
            | Opcode::STLXR
            | Opcode::STLXRB
            | Opcode::STLXRH => {
                let width = width_of(inst.opcode, &ops[1]);
                let (value, _) = self.src(st, &ops[1], pc)?;
                let value = narrow(value, width);
                let annot = excl(
                    if matches!(inst.opcode, Opcode::STLXR | Opcode::STLXRB | Opcode::STLXRH) {
                        rel
                    } else {
                        plain
                    },
                );
                let Mem::Loc(addr) = self.mem(&mut out, &ops[2], width, pc, &mut low, false)?
                else {
                    return Err(self.refuse(
                        pc,
                        format!("{inst}: an exclusive access outside the object"),
                    ));
                };
                let status = self.reg_dst(&ops[0]).map(|d| d.0);
                if let Operand::Register(_, n) = ops[0] {
                    if n < 31 {
                        out.x[n as usize] = Abs::Unknown;
                    }
                }
                low.push(Low::I(Instr::StoreExclusive {
                    status,
                    addr,
                    value,
                    annot,
                }));
            }
            Opcode::CAS(ar) | Opcode::CASB(ar) | Opcode::CASH(ar) => {
                let (a, l) = (ar & 2 != 0, ar & 1 != 0);
                let width = width_of(inst.opcode, &ops[0]);
                let (desired, _) = self.src(st, &ops[1], pc)?;
                let desired = narrow(desired, width);
                let Mem::Loc(addr) = self.mem(&mut out, &ops[2], width, pc, &mut low, false)?
                else {
                    return Err(self.refuse(pc, format!("{inst}: an atomic outside the object")));
                };
                let noret = matches!(ops[0], Operand::Register(_, 31));
                let expected = match self.reg_dst(&ops[0]) {
                    Some((r, _)) => {
                        // The expected value is the register's low bytes.
                        low.push(Low::I(Instr::Assign {
                            dst: r,
                            expr: narrow(Expr::Reg(r), width),
                        }));
                        CasExpected::Reg(r)
                    }
                    None => CasExpected::Value(Expr::int(0)),
                };
                if let Operand::Register(_, n) = ops[0] {
                    if n < 31 {
                        out.x[n as usize] = Abs::Unknown;
                    }
                }
                let read = Annot {
                    noret,
                    acquire: a && !noret,
                    ..Annot::default()
                };
                low.push(Low::I(Instr::Cas {
                    result: None,
                    addr,
                    expected,
                    desired,
                    read,
                    write: Annot {
                        release: l,
                        ..Annot::default()
                    },
                    fail: read,
                    weak: false,
                    single: false,
                }));
            }
            Opcode::SWP(ar)
            | Opcode::SWPB(ar)
            | Opcode::SWPH(ar)
            | Opcode::LDADD(ar)
            | Opcode::LDADDB(ar)
            | Opcode::LDADDH(ar)
            | Opcode::LDCLR(ar)
            | Opcode::LDCLRB(ar)
            | Opcode::LDCLRH(ar)
            | Opcode::LDEOR(ar)
            | Opcode::LDEORB(ar)
            | Opcode::LDEORH(ar)
            | Opcode::LDSET(ar)
            | Opcode::LDSETB(ar)
            | Opcode::LDSETH(ar) => {
                let (a, l) = (ar & 2 != 0, ar & 1 != 0);
                let op = match inst.opcode {
                    Opcode::SWP(_) | Opcode::SWPB(_) | Opcode::SWPH(_) => RmwOp::Xchg,
                    Opcode::LDADD(_) | Opcode::LDADDB(_) | Opcode::LDADDH(_) => RmwOp::Add,
                    Opcode::LDCLR(_) | Opcode::LDCLRB(_) | Opcode::LDCLRH(_) => RmwOp::Clr,
                    Opcode::LDEOR(_) | Opcode::LDEORB(_) | Opcode::LDEORH(_) => RmwOp::Xor,
                    _ => RmwOp::Or,
                };
                let width = width_of(inst.opcode, &ops[0]);
                let (operand, _) = self.src(st, &ops[0], pc)?;
                let operand = narrow(operand, width);
                let Mem::Loc(addr) = self.mem(&mut out, &ops[2], width, pc, &mut low, false)?
                else {
                    return Err(self.refuse(pc, format!("{inst}: an atomic outside the object")));
                };
                let dst = self.reg_dst(&ops[1]).map(|d| d.0);
                if let Operand::Register(_, n) = ops[1] {
                    if n < 31 {
                        out.x[n as usize] = Abs::Unknown;
                    }
                }
                let noret = dst.is_none();
                low.push(Low::I(Instr::Rmw {
                    dst,
                    addr,
                    op,
                    operand,
                    read: Annot {
                        noret,
                        acquire: a && !noret,
                        ..Annot::default()
                    },
                    write: Annot {
                        release: l,
                        ..Annot::default()
                    },
                    single: false,
                }));
                if let Some(d) = dst {
                    // The sum of an LDADD wraps at the access width.
                    if width < 8 {
                        low.push(Low::I(Instr::Assign {
                            dst: d,
                            expr: narrow(Expr::Reg(d), width),
                        }));
                    }
                }
            }
            Opcode::B => {
                let t = pc_target(&ops[0]).ok_or_else(|| self.refuse(pc, format!("{inst}")))?;
                next = match self.allocator_call(ctx, pc, t, true, &mut out, &mut low) {
                    Some(back) => Some(back),
                    None => self.call(ctx, pc, t, true)?,
                };
            }
            Opcode::BL => {
                let t = pc_target(&ops[0]).ok_or_else(|| self.refuse(pc, format!("{inst}")))?;
                out.x[30] = Abs::Unknown;
                // Calls clobber the caller-saved registers (AAPCS64); the
                // inlined callee's own code says what it writes, so only
                // an import needs this.
                next = match self.allocator_call(ctx, pc, t, false, &mut out, &mut low) {
                    Some(back) => Some(back),
                    None => self.call(ctx, pc, t, false)?,
                };
            }
            Opcode::Bcc(c) => {
                let t = pc_target(&ops[0]).ok_or_else(|| self.refuse(pc, format!("{inst}")))?;
                let cond = self.cond(st, c, pc)?;
                low.push(Low::Jump(Some(cond), Target::Node(ctx.clone(), t)));
            }
            Opcode::CBZ | Opcode::CBNZ => {
                let t = pc_target(&ops[1]).ok_or_else(|| self.refuse(pc, format!("{inst}")))?;
                let (v, _) = self.src(st, &ops[0], pc)?;
                let op = if matches!(inst.opcode, Opcode::CBZ) {
                    BinOp::Eq
                } else {
                    BinOp::Ne
                };
                low.push(Low::Jump(
                    Some(Expr::bin(op, v, Expr::int(0))),
                    Target::Node(ctx.clone(), t),
                ));
            }
            Opcode::TBZ | Opcode::TBNZ => {
                let (Operand::Imm16(bit), Some(t)) = (ops[1], pc_target(&ops[2])) else {
                    return Err(self.refuse(pc, format!("{inst}: operand not followed")));
                };
                let (v, _) = self.src(st, &ops[0], pc)?;
                let test = Expr::bin(
                    BinOp::And,
                    Expr::bin(BinOp::Shr, v, Expr::int(i64::from(bit))),
                    Expr::int(1),
                );
                let op = if matches!(inst.opcode, Opcode::TBZ) {
                    BinOp::Eq
                } else {
                    BinOp::Ne
                };
                low.push(Low::Jump(
                    Some(Expr::bin(op, test, Expr::int(0))),
                    Target::Node(ctx.clone(), t),
                ));
            }
            Opcode::RET => {
                if !matches!(ops[0], Operand::Register(_, 30) | Operand::Nothing) {
                    return Err(
                        self.refuse(pc, format!("{inst}: a return through another register"))
                    );
                }
                next = Some(ret(ctx));
            }
            Opcode::BLR if self.tls_call(&ops[0], &mut out, &mut low) => {}
            Opcode::MRS if self.thread_pointer(&inst, &ops[0], &mut out, &mut low, pc)? => {}
            Opcode::BR | Opcode::BLR => {
                return Err(self.refuse(
                    pc,
                    format!("{inst}: an indirect jump or call, which verify cannot follow"),
                ));
            }
            Opcode::SVC | Opcode::HVC | Opcode::SMC => {
                return Err(self.refuse(
                    pc,
                    format!("{inst}: a system call, which verify cannot follow"),
                ));
            }
            _ => {
                return Err(self.refuse(
                    pc,
                    format!("{inst}: an instruction outside the set verify follows"),
                ));
            }
        }
        Ok(Step { low, out, next })
    }
}

fn ret(ctx: &Ctx) -> Target {
    match ctx.split_last() {
        Some((&(back, _), rest)) => Target::Node(rest.to_vec(), back),
        None => Target::Exit,
    }
}

/// What a W register's write leaves known.
fn w_abs(a: Abs) -> Abs {
    match a {
        Abs::Int(v) => Abs::Int(v & MASK32),
        Abs::Idx(s) if s.within(MASK32) => a,
        _ => Abs::Unknown,
    }
}

/// UBFM (LSL, LSR, UBFX aliases) of an index: what a shift left or a
/// field extraction from bit 0 leaves of its values (Arm ARM C6.2.333).
fn ubfm_index(a: Abs, immr: u32, imms: u32, size: u32) -> Abs {
    let ones = |n: u32| if n >= 63 { i64::MAX } else { (1i64 << n) - 1 };
    let Abs::Idx(s) = a else { return Abs::Unknown };
    if imms >= immr && immr == 0 {
        // UBFX from bit 0: a mask of imms + 1 bits.
        return a.masked(ones(imms + 1));
    }
    if imms < immr && s.within(ones(imms + 1)) {
        // LSL by size − immr.
        return a.shl(size - immr);
    }
    Abs::Unknown
}

/// The access width of a load/store mnemonic with register `rt`.
fn width_of(op: Opcode, rt: &Operand) -> u8 {
    use Opcode::*;
    match op {
        LDRB | LDURB | LDARB | LDAPRB | LDXRB | LDAXRB | STRB | STURB | STLRB | STXRB | STLXRB
        | CASB(_) | SWPB(_) | LDADDB(_) | LDCLRB(_) | LDEORB(_) | LDSETB(_) => 1,
        LDRH | LDURH | LDARH | LDAPRH | LDXRH | LDAXRH | STRH | STURH | STLRH | STXRH | STLXRH
        | CASH(_) | SWPH(_) | LDADDH(_) | LDCLRH(_) | LDEORH(_) | LDSETH(_) => 2,
        _ => {
            if matches!(rt, Operand::Register(SizeCode::W, _)) {
                4
            } else {
                8
            }
        }
    }
}

/// `e` cut to `width` bytes.
fn narrow(e: Expr, width: u8) -> Expr {
    match width {
        1 => Expr::bin(BinOp::And, e, Expr::int(0xff)),
        2 => Expr::bin(BinOp::And, e, Expr::int(0xffff)),
        4 => Expr::bin(BinOp::And, e, Expr::int(MASK32)),
        _ => e,
    }
}

fn binop(op: BinOp, x: i64, y: i64) -> i64 {
    match op {
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::AndNot => x & !y,
        BinOp::Shl => x.wrapping_shl(y as u32),
        BinOp::Shr => ((x as u64).wrapping_shr(y as u32)) as i64,
        _ => x & y,
    }
}
