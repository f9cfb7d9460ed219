//! Assembly threads: the `P0 | P1 ;` table and the X86 and AArch64
//! instruction subsets, lowered to [`Instr`]s. Instruction semantics follow
//! the Intel SDM (vol. 2) and the Arm ARM (DDI 0487, C6), as herd7 models
//! them (herd/X86Sem.ml, herd/AArch64Sem.ml): LSE atomics and CAS are a read
//! and a write linked by `rmw`; a CAS that fails only reads.

use crate::ast::*;
use crate::parse::{reg_of, Builder};
use crate::scan::{Cursor, PResult};

/// An AArch64 register operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArmReg {
    /// X0–X30 / W0–W30.
    Gpr(u8),
    /// XZR / WZR.
    Zero,
}

pub(crate) fn arm_reg(name: &str) -> Option<ArmReg> {
    let up = name.to_ascii_uppercase();
    if up == "XZR" || up == "WZR" {
        return Some(ArmReg::Zero);
    }
    let rest = up.strip_prefix('X').or_else(|| up.strip_prefix('W'))?;
    if rest.is_empty() || !rest.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let n: u8 = rest.parse().ok()?;
    (n <= 30).then_some(ArmReg::Gpr(n))
}

const X86_REGS: &[&str] = &["EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "EBP"];

pub(crate) fn x86_reg(name: &str) -> Option<&'static str> {
    let up = name.to_ascii_uppercase();
    X86_REGS.iter().copied().find(|r| *r == up)
}

/// The branch target that ends the thread (x86 `RET`): a name no test can
/// write as a label.
pub(crate) const END_LABEL: &str = "%end";

/// One cell of the thread table.
struct Cell {
    thread: usize,
    start: usize,
    end: usize,
}

pub(crate) fn parse_threads(c: &mut Cursor<'_>, b: &mut Builder) -> PResult<usize> {
    c.ws();
    // Header line: `P0 | P1 ;`
    let line_end = c
        .rest()
        .find(';')
        .map(|i| c.pos + i)
        .ok_or_else(|| c.err("expected the thread header 'P0 | P1 ;'"))?;
    let mut n = 0;
    for (i, part) in c.src[c.pos..line_end].split('|').enumerate() {
        let p = part.trim();
        if p != format!("P{i}") {
            return Err(c.err(format!("expected 'P{i}' in the thread header, found '{p}'")));
        }
        n += 1;
    }
    for t in 0..n {
        b.thread(t);
    }
    c.pos = line_end + 1;
    let mut cells: Vec<Cell> = Vec::new();
    loop {
        // Skip blank space up to the next line with content.
        c.ws();
        if c.at_end() {
            break;
        }
        let line_end = c.rest().find('\n').map(|i| c.pos + i).unwrap_or(c.end);
        let line = &c.src[c.pos..line_end];
        let first = line
            .split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '~' && ch != '_')
            .next()
            .unwrap_or("");
        if matches!(
            first,
            "exists" | "~exists" | "forall" | "locations" | "filter"
        ) || line.starts_with('~')
        {
            break;
        }
        let Some(semi) = line.find(';') else {
            break;
        };
        let row_start = c.pos;
        let row_end = row_start + semi;
        let mut start = row_start;
        let mut t = 0;
        for (i, ch) in c.src[row_start..row_end].char_indices() {
            if ch == '|' {
                cells.push(Cell {
                    thread: t,
                    start,
                    end: row_start + i,
                });
                t += 1;
                start = row_start + i + 1;
            }
        }
        cells.push(Cell {
            thread: t,
            start,
            end: row_end,
        });
        if t >= n {
            return Err(c.err_at(
                row_start,
                format!(
                    "this row has {} columns but the test has {n} threads",
                    t + 1
                ),
            ));
        }
        c.pos = row_end + 1;
    }
    let tail = c.pos;
    // Lower each thread's cells in order.
    let mut labels: Vec<Vec<(String, usize)>> = vec![Vec::new(); n];
    let mut fixups: Vec<Vec<(usize, String, usize)>> = vec![Vec::new(); n];
    for cell in &cells {
        let mut cur = c.sub(cell.start, cell.end);
        cur.ws();
        if cur.at_end() {
            continue;
        }
        // Labels `L0:` (possibly followed by an instruction).
        loop {
            let save = cur.pos;
            if let Some(id) = cur.ident() {
                cur.ws_inline();
                if cur.eat(":") {
                    let code_len = b.threads[cell.thread].code.len();
                    labels[cell.thread].push((id.to_string(), code_len));
                    continue;
                }
            }
            cur.pos = save;
            break;
        }
        cur.ws();
        if cur.at_end() {
            continue;
        }
        let mut out = Vec::new();
        match b.arch {
            Arch::X86 => x86_instr(&mut cur, b, cell.thread, &mut out)?,
            Arch::X86_64 => {
                crate::x86_64::instr(&mut cur, b, cell.thread, &mut out, &mut fixups[cell.thread])?
            }
            Arch::RiscV => {
                crate::riscv::instr(&mut cur, b, cell.thread, &mut out, &mut fixups[cell.thread])?
            }
            _ => arm_instr(&mut cur, b, cell.thread, &mut out, &mut fixups[cell.thread])?,
        }
        cur.ws();
        if !cur.at_end() {
            return Err(cur.err(format!("unexpected {} after the instruction", cur.found())));
        }
        b.threads[cell.thread].code.extend(out);
    }
    for (t, fix) in fixups.into_iter().enumerate() {
        for (at, label, pos) in fix {
            let target = labels[t]
                .iter()
                .find(|(l, _)| *l == label)
                .map(|(_, i)| *i)
                .or_else(|| (label == END_LABEL).then_some(b.threads[t].code.len()))
                .ok_or_else(|| c.err_at(pos, format!("undefined label '{label}' in thread {t}")))?;
            if let Instr::Branch { target: tg, .. } = &mut b.threads[t].code[at] {
                *tg = target;
            }
        }
    }
    Ok(tail)
}

/// Splits operands at top-level commas; returns (start, end) ranges.
pub(crate) fn operands(cur: &Cursor<'_>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = cur.pos;
    for (i, ch) in cur.rest().char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push((start, cur.pos + i));
                start = cur.pos + i + 1;
            }
            _ => {}
        }
    }
    if !cur.rest().trim().is_empty() {
        out.push((start, cur.end));
    }
    out
}

pub(crate) fn text<'a>(cur: &Cursor<'a>, r: (usize, usize)) -> &'a str {
    cur.src[r.0..r.1].trim()
}

// ---------------------------------------------------------------- AArch64

struct ArmCtx<'x, 'a> {
    cur: &'x Cursor<'a>,
    ops: Vec<(usize, usize)>,
    mnemonic: String,
}

impl ArmCtx<'_, '_> {
    fn want(&self, n: usize) -> PResult<()> {
        if self.ops.len() != n {
            return Err(self.cur.err_at(
                self.cur.pos,
                format!(
                    "'{}' takes {n} operands, found {}",
                    self.mnemonic,
                    self.ops.len()
                ),
            ));
        }
        Ok(())
    }
    fn op(&self, i: usize) -> &str {
        text(self.cur, self.ops[i])
    }
    fn pos(&self, i: usize) -> usize {
        let (s, _) = self.ops[i];
        let t = &self.cur.src[s..];
        s + (t.len() - t.trim_start().len())
    }
    fn err(&self, i: usize, msg: String) -> crate::ParseError {
        self.cur.err_at(self.pos(i), msg)
    }
    fn reg(&self, i: usize) -> PResult<ArmReg> {
        let s = self.op(i);
        arm_reg(s).ok_or_else(|| self.err(i, format!("expected a W or X register, found '{s}'")))
    }
}

fn arm_read(b: &mut Builder, t: usize, r: ArmReg) -> Expr {
    match r {
        ArmReg::Zero => Expr::int(0),
        ArmReg::Gpr(n) => Expr::Reg(reg_of(b.thread(t), &format!("X{n}"))),
    }
}

fn arm_write(b: &mut Builder, t: usize, r: ArmReg) -> Option<Reg> {
    match r {
        ArmReg::Zero => None,
        ArmReg::Gpr(n) => Some(reg_of(b.thread(t), &format!("X{n}"))),
    }
}

fn flags_regs(b: &mut Builder, t: usize) -> (Reg, Reg) {
    let th = b.thread(t);
    (reg_of(th, "%nzcv.a"), reg_of(th, "%nzcv.b"))
}

fn arm_cond(b: &mut Builder, t: usize, name: &str) -> Option<Expr> {
    let (a, bb) = flags_regs(b, t);
    let op = match name.to_ascii_uppercase().as_str() {
        "EQ" => BinOp::Eq,
        "NE" => BinOp::Ne,
        "GT" => BinOp::Gt,
        "GE" => BinOp::Ge,
        "LT" => BinOp::Lt,
        "LE" => BinOp::Le,
        "HI" => BinOp::Ugt,
        "HS" | "CS" => BinOp::Uge,
        "LO" | "CC" => BinOp::Ult,
        "LS" => BinOp::Ule,
        _ => return None,
    };
    Some(Expr::bin(op, Expr::Reg(a), Expr::Reg(bb)))
}

/// A register or `#imm` source operand.
fn arm_src(ctx: &ArmCtx<'_, '_>, b: &mut Builder, t: usize, i: usize) -> PResult<Expr> {
    let s = ctx.op(i);
    if let Some(imm) = s.strip_prefix('#') {
        return parse_int(imm)
            .map(Expr::int)
            .ok_or_else(|| ctx.err(i, format!("bad immediate '{s}'")));
    }
    let r = ctx.reg(i)?;
    Ok(arm_read(b, t, r))
}

pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else {
        s.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// `[Xn]`, `[Xn,#imm]`, `[Xn,Xm]`, `[Xn,Wm,SXTW]`, `[Xn,Xm,LSL #k]`.
fn arm_addr(ctx: &ArmCtx<'_, '_>, b: &mut Builder, t: usize, i: usize) -> PResult<Expr> {
    let s = ctx.op(i);
    let inner = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(|| ctx.err(i, format!("expected a memory operand '[Xn…]', found '{s}'")))?;
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let base =
        arm_reg(parts[0]).ok_or_else(|| ctx.err(i, format!("bad base register '{}'", parts[0])))?;
    let mut e = arm_read(b, t, base);
    if parts.len() >= 2 {
        let off = if let Some(imm) = parts[1].strip_prefix('#') {
            Expr::int(
                parse_int(imm).ok_or_else(|| ctx.err(i, format!("bad offset '{}'", parts[1])))?,
            )
        } else {
            let r = arm_reg(parts[1])
                .ok_or_else(|| ctx.err(i, format!("bad index register '{}'", parts[1])))?;
            arm_read(b, t, r)
        };
        let off = match parts.get(2) {
            None => off,
            Some(ext) => {
                let up = ext.to_ascii_uppercase();
                let mut w = up.split_whitespace();
                let kind = w.next().unwrap_or("");
                let amount = w.next().map(|a| parse_int(a.trim_start_matches('#')));
                match (kind, amount) {
                    ("SXTW" | "UXTW" | "SXTX" | "UXTX" | "LSL", None) => off,
                    ("SXTW" | "UXTW" | "SXTX" | "UXTX" | "LSL", Some(Some(k))) => {
                        Expr::bin(BinOp::Shl, off, Expr::int(k))
                    }
                    _ => return Err(ctx.err(i, format!("unsupported address extension '{ext}'"))),
                }
            }
        };
        if parts.len() > 3 {
            return Err(ctx.err(i, format!("unsupported memory operand '{s}'")));
        }
        e = Expr::bin(BinOp::Add, e, off);
    }
    Ok(e)
}

/// `SXTW`, `UXTW`, `LSL #k` applied to a register operand.
fn arm_extend(ctx: &ArmCtx<'_, '_>, i: usize, e: Expr) -> PResult<Expr> {
    let up = ctx.op(i).to_ascii_uppercase();
    let mut w = up.split_whitespace();
    let kind = w.next().unwrap_or("");
    let amount = match w.next() {
        None => 0,
        Some(a) => parse_int(a.trim_start_matches('#'))
            .ok_or_else(|| ctx.err(i, format!("bad shift amount '{a}'")))?,
    };
    match kind {
        "SXTW" | "UXTW" | "SXTX" | "UXTX" | "LSL" if amount == 0 => Ok(e),
        "SXTW" | "UXTW" | "SXTX" | "UXTX" | "LSL" => {
            Ok(Expr::bin(BinOp::Shl, e, Expr::int(amount)))
        }
        _ => Err(ctx.err(i, format!("unsupported operand extension '{}'", ctx.op(i)))),
    }
}

/// Post-indexed addressing `[Xn],#imm`: the base register moves after the access.
fn arm_post_index(
    ctx: &ArmCtx<'_, '_>,
    b: &mut Builder,
    t: usize,
    mem: usize,
    out: &mut Vec<Instr>,
) -> PResult<()> {
    if ctx.ops.len() != mem + 2 {
        return Ok(());
    }
    let s = ctx.op(mem + 1);
    let imm = s.strip_prefix('#').and_then(parse_int).ok_or_else(|| {
        ctx.err(
            mem + 1,
            format!("expected a post-index '#imm', found '{s}'"),
        )
    })?;
    let inner = ctx.op(mem).trim_start_matches('[').trim_end_matches(']');
    let base = arm_reg(inner.trim()).ok_or_else(|| {
        ctx.err(
            mem,
            "post-indexed addressing needs a plain base register".into(),
        )
    })?;
    if let Some(r) = arm_write(b, t, base) {
        out.push(Instr::Assign {
            dst: r,
            expr: Expr::bin(BinOp::Add, Expr::Reg(r), Expr::int(imm)),
        });
    }
    Ok(())
}

fn barrier_opt(name: &str) -> Option<BarrierOpt> {
    let up = name.to_ascii_uppercase();
    let (kind, n): (BarrierKind, &'static str) = match up.as_str() {
        "SY" => (BarrierKind::Full, "SY"),
        "ISH" => (BarrierKind::Full, "ISH"),
        "OSH" => (BarrierKind::Full, "OSH"),
        "NSH" => (BarrierKind::Full, "NSH"),
        "LD" => (BarrierKind::Ld, "LD"),
        "ISHLD" => (BarrierKind::Ld, "ISHLD"),
        "OSHLD" => (BarrierKind::Ld, "OSHLD"),
        "NSHLD" => (BarrierKind::Ld, "NSHLD"),
        "ST" => (BarrierKind::St, "ST"),
        "ISHST" => (BarrierKind::St, "ISHST"),
        "OSHST" => (BarrierKind::St, "OSHST"),
        "NSHST" => (BarrierKind::St, "NSHST"),
        _ => return None,
    };
    Some(BarrierOpt { kind, name: n })
}

fn arm_instr(
    cur: &mut Cursor<'_>,
    b: &mut Builder,
    t: usize,
    out: &mut Vec<Instr>,
    fixups: &mut Vec<(usize, String, usize)>,
) -> PResult<()> {
    let mpos = cur.pos;
    let m = cur
        .ident()
        .ok_or_else(|| cur.err(format!("expected an instruction, found {}", cur.found())))?;
    let up = m.to_ascii_uppercase();
    cur.ws();
    let ctx = ArmCtx {
        cur,
        ops: operands(cur),
        mnemonic: up.clone(),
    };
    let here = b.threads[t].code.len();
    let ann = |acq: bool, q: bool, rel: bool, x: bool| Annot {
        acquire: acq,
        acquire_pc: q,
        release: rel,
        exclusive: x,
        ..Annot::default()
    };
    let suffix_ar = |s: &str| -> Option<(bool, bool)> {
        Some(match s {
            "" => (false, false),
            "A" => (true, false),
            "L" => (false, true),
            "AL" => (true, true),
            _ => return None,
        })
    };
    match up.as_str() {
        "NOP" => ctx.want(0)?,
        "MOV" => {
            ctx.want(2)?;
            let d = ctx.reg(0)?;
            let e = arm_src(&ctx, b, t, 1)?;
            if let Some(d) = arm_write(b, t, d) {
                out.push(Instr::Assign { dst: d, expr: e });
            }
        }
        "ADD" | "SUB" | "EOR" | "AND" | "ORR" | "LSR" | "LSL" | "BIC" => {
            if ctx.ops.len() != 4 {
                ctx.want(3)?;
            }
            let op = match up.as_str() {
                "ADD" => BinOp::Add,
                "SUB" => BinOp::Sub,
                "EOR" => BinOp::Xor,
                "AND" => BinOp::And,
                "ORR" => BinOp::Or,
                "LSR" => BinOp::Shr,
                "LSL" => BinOp::Shl,
                _ => BinOp::AndNot,
            };
            let d = ctx.reg(0)?;
            let a = arm_src(&ctx, b, t, 1)?;
            let mut c2 = arm_src(&ctx, b, t, 2)?;
            if ctx.ops.len() == 4 {
                c2 = arm_extend(&ctx, 3, c2)?;
            }
            if let Some(d) = arm_write(b, t, d) {
                out.push(Instr::Assign {
                    dst: d,
                    expr: Expr::bin(op, a, c2),
                });
            }
        }
        "CMP" => {
            ctx.want(2)?;
            let a = arm_src(&ctx, b, t, 0)?;
            let c2 = arm_src(&ctx, b, t, 1)?;
            let (fa, fb) = flags_regs(b, t);
            out.push(Instr::Assign { dst: fa, expr: a });
            out.push(Instr::Assign { dst: fb, expr: c2 });
        }
        "CSEL" => {
            ctx.want(4)?;
            let d = ctx.reg(0)?;
            let a = arm_src(&ctx, b, t, 1)?;
            let c2 = arm_src(&ctx, b, t, 2)?;
            let cond = arm_cond(b, t, ctx.op(3))
                .ok_or_else(|| ctx.err(3, format!("unsupported condition '{}'", ctx.op(3))))?;
            if let Some(d) = arm_write(b, t, d) {
                out.push(Instr::Select {
                    dst: d,
                    cond,
                    a,
                    b: c2,
                });
            }
        }
        "CBZ" | "CBNZ" => {
            ctx.want(2)?;
            let r = ctx.reg(0)?;
            let v = arm_read(b, t, r);
            let op = if up == "CBZ" { BinOp::Eq } else { BinOp::Ne };
            fixups.push((here + out.len(), ctx.op(1).to_string(), ctx.pos(1)));
            out.push(Instr::Branch {
                cond: Some(Expr::bin(op, v, Expr::int(0))),
                target: usize::MAX,
            });
        }
        "B" => {
            ctx.want(1)?;
            fixups.push((here + out.len(), ctx.op(0).to_string(), ctx.pos(0)));
            out.push(Instr::Branch {
                cond: None,
                target: usize::MAX,
            });
        }
        _ if up.starts_with("B.") => {
            ctx.want(1)?;
            let cond = arm_cond(b, t, &up[2..]).ok_or_else(|| {
                ctx.cur
                    .err_at(mpos, format!("unsupported branch condition '{m}'"))
            })?;
            fixups.push((here + out.len(), ctx.op(0).to_string(), ctx.pos(0)));
            out.push(Instr::Branch {
                cond: Some(cond),
                target: usize::MAX,
            });
        }
        "DMB" | "DSB" => {
            ctx.want(1)?;
            let o = barrier_opt(ctx.op(0))
                .ok_or_else(|| ctx.err(0, format!("unsupported barrier option '{}'", ctx.op(0))))?;
            let k = if up == "DMB" {
                Barrier::Dmb
            } else {
                Barrier::Dsb
            };
            out.push(Instr::Fence(Fence::Dmb(k, o)));
        }
        "ISB" => {
            if !ctx.ops.is_empty() && !ctx.op(0).eq_ignore_ascii_case("SY") {
                return Err(ctx.err(0, "unsupported ISB option".into()));
            }
            out.push(Instr::Fence(Fence::Isb));
        }
        "LDR" | "LDAR" | "LDAPR" | "LDXR" | "LDAXR" => {
            if !(up == "LDR" && ctx.ops.len() == 3) {
                ctx.want(2)?;
            }
            let d = ctx.reg(0)?;
            let addr = arm_addr(&ctx, b, t, 1)?;
            let annot = match up.as_str() {
                "LDR" => ann(false, false, false, false),
                "LDAR" => ann(true, false, false, false),
                "LDAPR" => ann(false, true, false, false),
                "LDXR" => ann(false, false, false, true),
                _ => ann(true, false, false, true),
            };
            let dst = arm_write(b, t, d);
            out.push(Instr::Load { dst, addr, annot });
            arm_post_index(&ctx, b, t, 1, out)?;
        }
        "STR" | "STLR" => {
            if !(up == "STR" && ctx.ops.len() == 3) {
                ctx.want(2)?;
            }
            let v = ctx.reg(0)?;
            let value = arm_read(b, t, v);
            let addr = arm_addr(&ctx, b, t, 1)?;
            out.push(Instr::Store {
                addr,
                value,
                annot: ann(false, false, up == "STLR", false),
            });
            arm_post_index(&ctx, b, t, 1, out)?;
        }
        "STXR" | "STLXR" => {
            ctx.want(3)?;
            let s = ctx.reg(0)?;
            let v = ctx.reg(1)?;
            let value = arm_read(b, t, v);
            let addr = arm_addr(&ctx, b, t, 2)?;
            let status = arm_write(b, t, s);
            out.push(Instr::StoreExclusive {
                status,
                addr,
                value,
                annot: ann(false, false, up == "STLXR", true),
            });
        }
        _ if up.starts_with("CAS") && suffix_ar(&up[3..]).is_some() => {
            ctx.want(3)?;
            let (a, l) = suffix_ar(&up[3..]).unwrap_or((false, false));
            let rs = ctx.reg(0)?;
            let rt = ctx.reg(1)?;
            let desired = arm_read(b, t, rt);
            let addr = arm_addr(&ctx, b, t, 2)?;
            let noret = rs == ArmReg::Zero;
            let expected = match arm_write(b, t, rs) {
                Some(r) => CasExpected::Reg(r),
                None => CasExpected::Value(Expr::int(0)),
            };
            out.push(Instr::Cas {
                result: None,
                addr,
                expected,
                desired,
                read: Annot {
                    noret,
                    ..ann(a && !noret, false, false, false)
                },
                write: ann(false, false, l, false),
                fail: Annot {
                    noret,
                    ..ann(a && !noret, false, false, false)
                },
                weak: false,
                single: false,
            });
        }
        _ => {
            // SWP / LD<op> / ST<op> with A/L/AL suffixes.
            let parse_rmw = |s: &str| -> Option<(RmwOp, bool, bool, bool)> {
                let (op, rest, store) = if let Some(r) = s.strip_prefix("SWP") {
                    (RmwOp::Xchg, r, false)
                } else {
                    let (r, store) = match s.strip_prefix("LD") {
                        Some(r) => (r, false),
                        None => (s.strip_prefix("ST")?, true),
                    };
                    let ops = [
                        ("ADD", RmwOp::Add),
                        ("CLR", RmwOp::Clr),
                        ("EOR", RmwOp::Xor),
                        ("SET", RmwOp::Or),
                    ];
                    let (name, op) = ops.iter().find(|(n, _)| r.starts_with(n))?;
                    (*op, &r[name.len()..], store)
                };
                let (a, l) = suffix_ar(rest)?;
                if store && a {
                    return None;
                }
                Some((op, a, l, store))
            };
            let Some((op, a, l, store)) = parse_rmw(&up) else {
                return Err(ctx
                    .cur
                    .err_at(mpos, format!("unsupported AArch64 instruction '{m}'")));
            };
            let (rs, rt, addr_i) = if store {
                ctx.want(2)?;
                (ctx.reg(0)?, ArmReg::Zero, 1)
            } else {
                ctx.want(3)?;
                (ctx.reg(0)?, ctx.reg(1)?, 2)
            };
            let operand = arm_read(b, t, rs);
            let addr = arm_addr(&ctx, b, t, addr_i)?;
            let dst = arm_write(b, t, rt);
            // With the zero register as destination the read returns nothing
            // and, as herd models it, loses its acquire semantics (NoRet).
            let noret = dst.is_none();
            out.push(Instr::Rmw {
                dst,
                addr,
                op,
                operand,
                read: Annot {
                    noret,
                    ..ann(a && !noret, false, false, false)
                },
                write: ann(false, false, l, false),
                single: false,
            });
        }
    }
    cur.pos = cur.end;
    Ok(())
}

// ---------------------------------------------------------------- X86

enum X86Op {
    Reg(Reg),
    Imm(i64),
    Mem(Expr),
}

fn x86_operand(cur: &Cursor<'_>, b: &mut Builder, t: usize, r: (usize, usize)) -> PResult<X86Op> {
    let s = text(cur, r);
    let pos = r.0 + (cur.src[r.0..r.1].len() - cur.src[r.0..r.1].trim_start().len());
    if let Some(imm) = s.strip_prefix('$') {
        return parse_int(imm)
            .map(X86Op::Imm)
            .ok_or_else(|| cur.err_at(pos, format!("bad immediate '{s}'")));
    }
    if let Some(inner) = s.strip_prefix('[').and_then(|x| x.strip_suffix(']')) {
        let inner = inner.trim();
        if let Some(r) = x86_reg(inner) {
            let reg = reg_of(b.thread(t), r);
            return Ok(X86Op::Mem(Expr::Reg(reg)));
        }
        if !inner.is_empty()
            && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !inner.starts_with(|c: char| c.is_ascii_digit())
        {
            let l = b.loc(inner);
            return Ok(X86Op::Mem(Expr::Const(Value::Loc(l))));
        }
        return Err(cur.err_at(pos, format!("unsupported memory operand '{s}'")));
    }
    if let Some(r) = x86_reg(s) {
        return Ok(X86Op::Reg(reg_of(b.thread(t), r)));
    }
    Err(cur.err_at(
        pos,
        format!("expected a register, '$imm' or '[loc]', found '{s}'"),
    ))
}

fn x86_instr(cur: &mut Cursor<'_>, b: &mut Builder, t: usize, out: &mut Vec<Instr>) -> PResult<()> {
    let mut mpos = cur.pos;
    let mut m = cur
        .ident()
        .ok_or_else(|| cur.err(format!("expected an instruction, found {}", cur.found())))?
        .to_ascii_uppercase();
    let mut lock = false;
    if m == "LOCK" {
        lock = true;
        mpos = {
            cur.ws();
            cur.pos
        };
        m = cur
            .ident()
            .ok_or_else(|| cur.err("expected an instruction after LOCK"))?
            .to_ascii_uppercase();
    }
    cur.ws();
    let ops = operands(cur);
    let want = |n: usize| -> PResult<()> {
        if ops.len() != n {
            return Err(cur.err_at(
                mpos,
                format!("'{m}' takes {n} operands, found {}", ops.len()),
            ));
        }
        Ok(())
    };
    let locked = Annot {
        locked: true,
        ..Annot::default()
    };
    let plain = Annot::default();
    let mut ops_v = Vec::new();
    for r in &ops {
        ops_v.push(x86_operand(cur, b, t, *r)?);
    }
    let src = |o: &X86Op| -> Option<Expr> {
        match o {
            X86Op::Reg(r) => Some(Expr::Reg(*r)),
            X86Op::Imm(i) => Some(Expr::int(*i)),
            X86Op::Mem(_) => None,
        }
    };
    let bad = |what: &str| cur.err_at(mpos, format!("unsupported X86 instruction form: {what}"));
    match m.as_str() {
        "MFENCE" | "LFENCE" | "SFENCE" if !lock => {
            want(0)?;
            out.push(Instr::Fence(match m.as_str() {
                "MFENCE" => Fence::Mfence,
                "LFENCE" => Fence::Lfence,
                _ => Fence::Sfence,
            }));
        }
        "MOV" if !lock => {
            want(2)?;
            match (&ops_v[0], &ops_v[1]) {
                (X86Op::Mem(a), s) => {
                    let value = src(s).ok_or_else(|| bad("MOV from memory to memory"))?;
                    out.push(Instr::Store {
                        addr: a.clone(),
                        value,
                        annot: plain,
                    });
                }
                (X86Op::Reg(d), X86Op::Mem(a)) => out.push(Instr::Load {
                    dst: Some(*d),
                    addr: a.clone(),
                    annot: plain,
                }),
                (X86Op::Reg(d), s) => out.push(Instr::Assign {
                    dst: *d,
                    expr: src(s).unwrap_or(Expr::int(0)),
                }),
                _ => return Err(bad("MOV to an immediate")),
            }
        }
        "XCHG" => {
            want(2)?;
            match (&ops_v[0], &ops_v[1]) {
                (X86Op::Mem(a), X86Op::Reg(r)) | (X86Op::Reg(r), X86Op::Mem(a)) => {
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
                (X86Op::Reg(x), X86Op::Reg(y)) if !lock => {
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
                _ => return Err(bad("XCHG operands")),
            }
        }
        "ADD" | "SUB" | "XOR" | "AND" | "OR" | "INC" | "DEC" | "XADD" => {
            let (op, unary) = match m.as_str() {
                "ADD" | "XADD" => (BinOp::Add, false),
                "SUB" => (BinOp::Sub, false),
                "XOR" => (BinOp::Xor, false),
                "AND" => (BinOp::And, false),
                "OR" => (BinOp::Or, false),
                "INC" => (BinOp::Add, true),
                _ => (BinOp::Sub, true),
            };
            want(if unary { 1 } else { 2 })?;
            let operand = if unary {
                Expr::int(1)
            } else {
                src(&ops_v[1]).ok_or_else(|| bad("memory source operand"))?
            };
            let rmw_op = match op {
                BinOp::Add => RmwOp::Add,
                BinOp::Sub => RmwOp::Sub,
                BinOp::Xor => RmwOp::Xor,
                BinOp::And => RmwOp::And,
                _ => RmwOp::Or,
            };
            match &ops_v[0] {
                X86Op::Mem(a) if lock || m == "XADD" => {
                    if m == "XADD" && !lock {
                        return Err(bad("XADD without LOCK is not atomic; add LOCK"));
                    }
                    let dst = match (&ops_v.get(1), m.as_str()) {
                        (Some(X86Op::Reg(r)), "XADD") => Some(*r),
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
                X86Op::Mem(a) => {
                    let tmp = reg_of(b.thread(t), "%alu");
                    out.push(Instr::Load {
                        dst: Some(tmp),
                        addr: a.clone(),
                        annot: plain,
                    });
                    out.push(Instr::Store {
                        addr: a.clone(),
                        value: Expr::bin(op, Expr::Reg(tmp), operand),
                        annot: plain,
                    });
                }
                X86Op::Reg(d) if !lock && m != "XADD" => {
                    out.push(Instr::Assign {
                        dst: *d,
                        expr: Expr::bin(op, Expr::Reg(*d), operand),
                    });
                }
                _ => return Err(bad("LOCK on a register operand")),
            }
        }
        "CMPXCHG" if lock => {
            want(2)?;
            let (X86Op::Mem(a), X86Op::Reg(r)) = (&ops_v[0], &ops_v[1]) else {
                return Err(bad("CMPXCHG needs [loc],reg"));
            };
            let eax = reg_of(b.thread(t), "EAX");
            out.push(Instr::Cas {
                result: None,
                addr: a.clone(),
                expected: CasExpected::Reg(eax),
                desired: Expr::Reg(*r),
                read: locked,
                write: locked,
                fail: locked,
                weak: false,
                single: false,
            });
        }
        _ => {
            return Err(cur.err_at(
                mpos,
                format!(
                    "unsupported X86 instruction '{}{m}'",
                    if lock { "LOCK " } else { "" }
                ),
            ))
        }
    }
    cur.pos = cur.end;
    Ok(())
}
