//! herd's AArch64 dialect: the A64 instruction subset of litmus tests,
//! lowered to [`Instr`]s. Instruction semantics follow the Arm ARM (DDI
//! 0487, C6) as herd7 models them (herd/AArch64Sem.ml): LSE atomics and CAS
//! are a read and a write linked by `rmw`; a CAS that fails only reads.

use crate::ast::*;
use crate::builder::{reg_of, Builder};
use crate::scan::{Cursor, PResult};

use super::operand::{operands, parse_int, text};

/// herd's AArch64 dialect, for [`super::DIALECTS`]: registers are named
/// by their 64-bit name (`X0`).
pub(crate) const DIALECT: super::syntax::Dialect = super::syntax::Dialect {
    arch: Arch::AArch64,
    canonical_reg: |name| match reg(name) {
        Some(ArmReg::Gpr(n)) => Some(format!("X{n}")),
        _ => None,
    },
    threads: super::syntax::Threads::Table(instr),
};

/// An AArch64 register operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArmReg {
    /// X0–X30 / W0–W30.
    Gpr(u8),
    /// XZR / WZR.
    Zero,
}

/// The AArch64 register `name` names (X0–X30, W0–W30, XZR, WZR).
pub(crate) fn reg(name: &str) -> Option<ArmReg> {
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
        reg(s).ok_or_else(|| self.err(i, format!("expected a W or X register, found '{s}'")))
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

/// `[Xn]`, `[Xn,#imm]`, `[Xn,Xm]`, `[Xn,Wm,SXTW]`, `[Xn,Xm,LSL #k]`.
fn arm_addr(ctx: &ArmCtx<'_, '_>, b: &mut Builder, t: usize, i: usize) -> PResult<Expr> {
    let s = ctx.op(i);
    let inner = s
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or_else(|| ctx.err(i, format!("expected a memory operand '[Xn…]', found '{s}'")))?;
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let base =
        reg(parts[0]).ok_or_else(|| ctx.err(i, format!("bad base register '{}'", parts[0])))?;
    let mut e = arm_read(b, t, base);
    if parts.len() >= 2 {
        let off = if let Some(imm) = parts[1].strip_prefix('#') {
            Expr::int(
                parse_int(imm).ok_or_else(|| ctx.err(i, format!("bad offset '{}'", parts[1])))?,
            )
        } else {
            let r = reg(parts[1])
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
    let base = reg(inner.trim()).ok_or_else(|| {
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

/// Lowers one AArch64 instruction (and its label fix-ups) into `out`.
pub(crate) fn instr(
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
            let o = BarrierOpt::parse(ctx.op(0))
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
