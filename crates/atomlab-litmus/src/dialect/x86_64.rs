//! herd's X86_64 format: AT&T syntax (`movl $1,(x)`, `movl (y),%eax`,
//! `source,destination`), 64-bit registers and their 32-bit names, size
//! suffixes, `XCHG`, `LOCK` read-modify-writes, `MFENCE`, and the compare and
//! jump instructions of compiled code. Instruction semantics follow the Intel
//! SDM (vol. 2) as herd7 models them (herd/X86_64Sem.ml): an `XCHG` with memory
//! and a `LOCK`ed instruction are a locked read and a locked write linked by
//! `rmw`.
//!
//! Sizes: every access to one location must have the same width (`movl`
//! throughout, or `movq`…); a test that mixes widths on a location needs
//! mixed-size semantics (herd7's x86tso-mixed) and is refused. Registers are
//! named by their 64-bit name (`rax`), as herd7 prints them; a write to a
//! 32-bit register is not truncated (litmus values are small).

use super::operand::{operands, parse_int, text, END_LABEL};
use crate::ast::*;
use crate::builder::{reg_of, Builder};
use crate::scan::{Cursor, PResult};

/// herd's X86_64 dialect, for [`super::DIALECTS`].
pub(crate) const DIALECT: super::syntax::Dialect = super::syntax::Dialect {
    arch: Arch::X86_64,
    canonical_reg: |name| reg(name).map(|(r, _)| r.to_string()),
    threads: super::syntax::Threads::Table(instr),
};

/// The general-purpose registers: 64-bit name, 32-bit name.
const GPRS: &[(&str, &str)] = &[
    ("rax", "eax"),
    ("rbx", "ebx"),
    ("rcx", "ecx"),
    ("rdx", "edx"),
    ("rsi", "esi"),
    ("rdi", "edi"),
    ("rbp", "ebp"),
    ("rsp", "esp"),
    ("r8", "r8d"),
    ("r9", "r9d"),
    ("r10", "r10d"),
    ("r11", "r11d"),
    ("r12", "r12d"),
    ("r13", "r13d"),
    ("r14", "r14d"),
    ("r15", "r15d"),
];

/// Registers herd7 accepts in initial states and conditions although no
/// supported instruction writes them (the instruction pointer, segments).
const OTHER_REGS: &[&str] = &["rip", "cs", "ds", "es", "fs", "gs", "ss"];

/// A register's canonical (64-bit, lower-case) name and width in bits, for a
/// name with or without `%`.
pub(crate) fn reg(name: &str) -> Option<(&'static str, u32)> {
    let name = name.strip_prefix('%').unwrap_or(name);
    for (r64, r32) in GPRS {
        if name.eq_ignore_ascii_case(r64) {
            return Some((r64, 64));
        }
        if name.eq_ignore_ascii_case(r32) {
            return Some((r64, 32));
        }
    }
    OTHER_REGS
        .iter()
        .find(|r| name.eq_ignore_ascii_case(r))
        .map(|r| (*r, 64))
}

enum Op {
    Reg(Reg, u32),
    Imm(i64),
    /// A memory operand: its address, and the location when it is a constant.
    Mem(Expr, Option<LocId>),
}

struct Ctx<'x, 'a> {
    cur: &'x Cursor<'a>,
    ops: Vec<(usize, usize)>,
}

impl Ctx<'_, '_> {
    fn pos(&self, i: usize) -> usize {
        let (s, e) = self.ops[i];
        let t = &self.cur.src[s..e];
        s + (t.len() - t.trim_start().len())
    }
    fn err(&self, i: usize, msg: String) -> crate::ParseError {
        self.cur.err_at(self.pos(i), msg)
    }
}

fn gpr(ctx: &Ctx<'_, '_>, i: usize, s: &str, b: &mut Builder, t: usize) -> PResult<(Reg, u32)> {
    match reg(s) {
        Some((name, w)) if !OTHER_REGS.contains(&name) => Ok((reg_of(b.thread(t), name), w)),
        _ => Err(ctx.err(
            i,
            format!("expected a general-purpose register, found '{s}'"),
        )),
    }
}

/// `$imm`, a bare integer (herd7 reads `shl 2,%eax` as an immediate), `%reg`,
/// `(x)`, `(%reg)`, `disp(%base)`, `disp(%base,%index,scale)`.
fn operand(ctx: &Ctx<'_, '_>, i: usize, b: &mut Builder, t: usize) -> PResult<Op> {
    let s = text(ctx.cur, ctx.ops[i]);
    if let Some(imm) = s.strip_prefix('$') {
        return parse_int(imm)
            .map(Op::Imm)
            .ok_or_else(|| ctx.err(i, format!("bad immediate '{s}'")));
    }
    if s.starts_with('%') {
        let (r, w) = gpr(ctx, i, s, b, t)?;
        return Ok(Op::Reg(r, w));
    }
    if let Some(open) = s.find('(') {
        let inner = s[open + 1..]
            .strip_suffix(')')
            .ok_or_else(|| ctx.err(i, format!("unsupported memory operand '{s}'")))?;
        let disp = s[..open].trim();
        let disp = if disp.is_empty() {
            0
        } else {
            parse_int(disp)
                .ok_or_else(|| ctx.err(i, format!("unsupported displacement '{disp}' in '{s}'")))?
        };
        let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
        let base = parts[0];
        let is_name = !base.is_empty()
            && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !base.starts_with(|c: char| c.is_ascii_digit());
        if !base.starts_with('%') {
            if !is_name || parts.len() > 1 || disp != 0 {
                return Err(ctx.err(i, format!("unsupported memory operand '{s}'")));
            }
            let l = b.loc(base);
            return Ok(Op::Mem(Expr::Const(Value::Loc(l)), Some(l)));
        }
        let (r, _) = gpr(ctx, i, base, b, t)?;
        let mut e = Expr::Reg(r);
        if parts.len() > 3 {
            return Err(ctx.err(i, format!("unsupported memory operand '{s}'")));
        }
        if let Some(ix) = parts.get(1) {
            let (x, _) = gpr(ctx, i, ix, b, t)?;
            let scale = match parts.get(2) {
                None => 1,
                Some(k) => parse_int(k)
                    .filter(|k| [1, 2, 4, 8].contains(k))
                    .ok_or_else(|| ctx.err(i, format!("bad scale '{k}' in '{s}'")))?,
            };
            e = Expr::bin(
                BinOp::Add,
                e,
                Expr::bin(BinOp::Mul, Expr::Reg(x), Expr::int(scale)),
            );
        }
        if disp != 0 {
            e = Expr::bin(BinOp::Add, e, Expr::int(disp));
        }
        return Ok(Op::Mem(e, None));
    }
    if let Some(v) = parse_int(s) {
        return Ok(Op::Imm(v));
    }
    Err(ctx.err(
        i,
        format!("expected '%reg', '$imm' or a memory operand '(x)', found '{s}'"),
    ))
}

/// Splits `movl` into `mov` and its width; `None` when there is no suffix.
fn split_size<'m>(m: &'m str, bases: &[&str]) -> Option<(&'m str, Option<u32>)> {
    if bases.contains(&m) {
        return Some((m, None));
    }
    let (stem, last) = m.split_at(m.len().checked_sub(1)?);
    if !bases.contains(&stem) {
        return None;
    }
    let w = match last {
        "b" => 8,
        "w" => 16,
        "l" => 32,
        "q" => 64,
        _ => return None,
    };
    Some((stem, Some(w)))
}

const ALU: &[&str] = &[
    "mov", "xchg", "add", "sub", "and", "or", "xor", "inc", "dec", "xadd", "cmpxchg", "cmp", "shl",
    "sal", "shr", "neg", "not",
];

fn cond_op(jcc: &str) -> Option<BinOp> {
    Some(match jcc {
        "je" | "jz" => BinOp::Eq,
        "jne" | "jnz" => BinOp::Ne,
        "jl" | "jnge" => BinOp::Lt,
        "jle" | "jng" => BinOp::Le,
        "jg" | "jnle" => BinOp::Gt,
        "jge" | "jnl" => BinOp::Ge,
        "jb" | "jnae" | "jc" => BinOp::Ult,
        "jbe" | "jna" => BinOp::Ule,
        "ja" | "jnbe" => BinOp::Ugt,
        "jae" | "jnb" | "jnc" => BinOp::Uge,
        _ => return None,
    })
}

/// Lowers one X86_64 instruction.
pub(crate) fn instr(
    cur: &mut Cursor<'_>,
    b: &mut Builder,
    t: usize,
    out: &mut Vec<Instr>,
    fixups: &mut Vec<(usize, String, usize)>,
) -> PResult<()> {
    let mut mpos = cur.pos;
    let word = cur
        .ident()
        .ok_or_else(|| cur.err(format!("expected an instruction, found {}", cur.found())))?;
    let mut m = word.to_ascii_lowercase();
    let mut lock = false;
    if m == "lock" {
        lock = true;
        cur.ws();
        mpos = cur.pos;
        m = cur
            .ident()
            .ok_or_else(|| cur.err("expected an instruction after LOCK"))?
            .to_ascii_lowercase();
    }
    cur.ws();
    let ctx = Ctx {
        cur,
        ops: operands(cur),
    };
    let here = b.threads[t].code.len();
    let bad = |what: String| cur.err_at(mpos, what);
    let want = |n: usize| -> PResult<()> {
        if ctx.ops.len() != n {
            return Err(cur.err_at(
                mpos,
                format!("'{m}' takes {n} operands, found {}", ctx.ops.len()),
            ));
        }
        Ok(())
    };
    // No-ops, whatever their operands (compilers pad with `nopl 0(%rax,…)`).
    if !lock && (m.starts_with("nop") || m == "endbr64" || m == "pause") {
        cur.pos = cur.end;
        return Ok(());
    }
    match m.as_str() {
        "mfence" | "lfence" | "sfence" if !lock => {
            want(0)?;
            out.push(Instr::Fence(match m.as_str() {
                "mfence" => Fence::Mfence,
                "lfence" => Fence::Lfence,
                _ => Fence::Sfence,
            }));
            cur.pos = cur.end;
            return Ok(());
        }
        "ret" | "retq" if !lock => {
            want(0)?;
            fixups.push((here + out.len(), END_LABEL.to_string(), mpos));
            out.push(Instr::Branch {
                cond: None,
                target: usize::MAX,
            });
            cur.pos = cur.end;
            return Ok(());
        }
        "jmp" if !lock => {
            want(1)?;
            fixups.push((
                here + out.len(),
                text(cur, ctx.ops[0]).to_string(),
                ctx.pos(0),
            ));
            out.push(Instr::Branch {
                cond: None,
                target: usize::MAX,
            });
            cur.pos = cur.end;
            return Ok(());
        }
        j if !lock && cond_op(j).is_some() => {
            want(1)?;
            let op = cond_op(j).unwrap_or(BinOp::Eq);
            let th = b.thread(t);
            let (fa, fb) = (reg_of(th, "%flags.a"), reg_of(th, "%flags.b"));
            fixups.push((
                here + out.len(),
                text(cur, ctx.ops[0]).to_string(),
                ctx.pos(0),
            ));
            out.push(Instr::Branch {
                cond: Some(Expr::bin(op, Expr::Reg(fa), Expr::Reg(fb))),
                target: usize::MAX,
            });
            cur.pos = cur.end;
            return Ok(());
        }
        _ => {}
    }
    let Some((base, suffix)) = split_size(&m, ALU) else {
        return Err(bad(format!(
            "unsupported X86_64 instruction '{}{word}'",
            if lock { "lock " } else { "" }
        )));
    };
    let mut ops = Vec::new();
    for i in 0..ctx.ops.len() {
        ops.push(operand(&ctx, i, b, t)?);
    }
    // The access width: the suffix, else the register operands'; all agree.
    let mut width = suffix;
    for (i, o) in ops.iter().enumerate() {
        if let Op::Reg(_, w) = o {
            if matches!(base, "shl" | "sal" | "shr") && i == 0 {
                continue;
            }
            match width {
                Some(x) if x != *w => {
                    return Err(ctx.err(
                        i,
                        format!("operand size mismatch: a {w}-bit register in a {x}-bit '{m}'"),
                    ))
                }
                _ => width = Some(*w),
            }
        }
    }
    let width = width.unwrap_or(64);
    if width < 32 {
        return Err(bad(format!(
            "'{m}': {width}-bit accesses are not supported (8- and 16-bit registers and accesses need mixed-size semantics)"
        )));
    }
    for (i, o) in ops.iter().enumerate() {
        if let Op::Mem(_, Some(l)) = o {
            match b.sizes.iter().find(|(x, _)| x == l) {
                Some((_, w)) if *w != width => {
                    return Err(ctx.err(i, format!(
                        "location '{}' is accessed with {w}-bit and {width}-bit instructions: mixed-size accesses are not supported",
                        b.locations[*l]
                    )))
                }
                Some(_) => {}
                None => b.sizes.push((*l, width)),
            }
        }
    }
    let locked = Annot {
        locked: true,
        ..Annot::default()
    };
    let plain = Annot::default();
    let src = |o: &Op| -> Option<Expr> {
        match o {
            Op::Reg(r, _) => Some(Expr::Reg(*r)),
            Op::Imm(i) => Some(Expr::int(*i)),
            Op::Mem(..) => None,
        }
    };
    match base {
        "mov" if !lock => {
            want(2)?;
            match (&ops[0], &ops[1]) {
                (s, Op::Mem(a, _)) => {
                    let value = src(s).ok_or_else(|| bad("'mov' from memory to memory".into()))?;
                    out.push(Instr::Store {
                        addr: a.clone(),
                        value,
                        annot: plain,
                    });
                }
                (Op::Mem(a, _), Op::Reg(d, _)) => out.push(Instr::Load {
                    dst: Some(*d),
                    addr: a.clone(),
                    annot: plain,
                }),
                (s, Op::Reg(d, _)) => out.push(Instr::Assign {
                    dst: *d,
                    expr: src(s).unwrap_or(Expr::int(0)),
                }),
                _ => return Err(bad("'mov' to an immediate".into())),
            }
        }
        "xchg" => {
            want(2)?;
            match (&ops[0], &ops[1]) {
                (Op::Mem(a, _), Op::Reg(r, _)) | (Op::Reg(r, _), Op::Mem(a, _)) => {
                    out.push(Instr::Rmw {
                        dst: Some(*r),
                        addr: a.clone(),
                        op: RmwOp::Xchg,
                        operand: Expr::Reg(*r),
                        read: locked,
                        write: locked,
                        single: false,
                    })
                }
                (Op::Reg(x, _), Op::Reg(y, _)) if !lock => {
                    let tmp = reg_of(b.thread(t), "%xchg");
                    out.push(Instr::Assign {
                        dst: tmp,
                        expr: Expr::Reg(*x),
                    });
                    out.push(Instr::Assign {
                        dst: *x,
                        expr: Expr::Reg(*y),
                    });
                    out.push(Instr::Assign {
                        dst: *y,
                        expr: Expr::Reg(tmp),
                    });
                }
                _ => return Err(bad("unsupported 'xchg' operands".into())),
            }
        }
        "cmpxchg" if lock => {
            want(2)?;
            let (Op::Reg(r, _), Op::Mem(a, _)) = (&ops[0], &ops[1]) else {
                return Err(bad("'lock cmpxchg' needs %reg,(mem)".into()));
            };
            let rax = reg_of(b.thread(t), "rax");
            out.push(Instr::Cas {
                result: None,
                addr: a.clone(),
                expected: CasExpected::Reg(rax),
                desired: Expr::Reg(*r),
                read: locked,
                write: locked,
                fail: locked,
                weak: false,
                single: false,
            });
        }
        "cmp" if !lock => {
            want(2)?;
            // `cmp src,dst` sets the flags from dst - src: `jl` jumps when dst < src.
            let a = src(&ops[1]).ok_or_else(|| bad("'cmp' with a memory operand".into()))?;
            let c = src(&ops[0]).ok_or_else(|| bad("'cmp' with a memory operand".into()))?;
            let th = b.thread(t);
            let (fa, fb) = (reg_of(th, "%flags.a"), reg_of(th, "%flags.b"));
            out.push(Instr::Assign { dst: fa, expr: a });
            out.push(Instr::Assign { dst: fb, expr: c });
        }
        "add" | "sub" | "and" | "or" | "xor" | "inc" | "dec" | "xadd" | "shl" | "sal" | "shr"
        | "neg" | "not" => {
            let unary = matches!(base, "inc" | "dec" | "neg" | "not");
            want(if unary { 1 } else { 2 })?;
            let dst_i = if unary { 0 } else { 1 };
            let operand = match base {
                "inc" | "dec" => Expr::int(1),
                "neg" | "not" => Expr::int(0),
                _ => src(&ops[0]).ok_or_else(|| bad(format!("'{m}' with two memory operands")))?,
            };
            let op = match base {
                "add" | "xadd" | "inc" => BinOp::Add,
                "sub" | "dec" => BinOp::Sub,
                "and" => BinOp::And,
                "or" => BinOp::Or,
                "xor" => BinOp::Xor,
                "shl" | "sal" => BinOp::Shl,
                "shr" => BinOp::Shr,
                _ => BinOp::Sub,
            };
            match &ops[dst_i] {
                Op::Mem(a, _) if lock => {
                    let rmw_op = match op {
                        BinOp::Add => RmwOp::Add,
                        BinOp::Sub => RmwOp::Sub,
                        BinOp::And => RmwOp::And,
                        BinOp::Or => RmwOp::Or,
                        BinOp::Xor => RmwOp::Xor,
                        _ => return Err(bad(format!("'lock {m}' is not a locked operation"))),
                    };
                    if matches!(base, "neg" | "not") {
                        return Err(bad(format!("unsupported 'lock {m}'")));
                    }
                    let dst = match (&ops[0], base) {
                        (Op::Reg(r, _), "xadd") => Some(*r),
                        _ => None,
                    };
                    out.push(Instr::Rmw {
                        dst,
                        addr: a.clone(),
                        op: rmw_op,
                        operand,
                        read: locked,
                        write: locked,
                        single: false,
                    });
                }
                Op::Mem(..) if base == "xadd" => {
                    return Err(bad("'xadd' without LOCK is not atomic; add LOCK".into()))
                }
                Op::Mem(a, _) => {
                    let tmp = reg_of(b.thread(t), "%alu");
                    out.push(Instr::Load {
                        dst: Some(tmp),
                        addr: a.clone(),
                        annot: plain,
                    });
                    out.push(Instr::Store {
                        addr: a.clone(),
                        value: alu(base, op, Expr::Reg(tmp), operand),
                        annot: plain,
                    });
                }
                Op::Reg(d, _) if !lock && base != "xadd" => out.push(Instr::Assign {
                    dst: *d,
                    expr: alu(base, op, Expr::Reg(*d), operand),
                }),
                _ => return Err(bad(format!("unsupported '{m}' operands"))),
            }
        }
        _ => {
            return Err(bad(format!(
                "unsupported X86_64 instruction '{}{word}'",
                if lock { "lock " } else { "" }
            )))
        }
    }
    cur.pos = cur.end;
    Ok(())
}

/// `dst op operand`, with `neg` as `0 - dst` and `not` as `dst ^ -1`.
fn alu(base: &str, op: BinOp, dst: Expr, operand: Expr) -> Expr {
    match base {
        "neg" => Expr::bin(BinOp::Sub, Expr::int(0), dst),
        "not" => Expr::bin(BinOp::Xor, dst, Expr::int(-1)),
        _ => Expr::bin(op, dst, operand),
    }
}
