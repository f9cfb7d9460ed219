//! herd's X86 dialect: the 32-bit Intel-syntax subset of litmus tests
//! (`MOV [x],$1`, `MOV EAX,[y]`, `XCHG`, `LOCK` RMWs, `MFENCE`), lowered
//! to [`Instr`]s. Instruction semantics follow the Intel SDM (vol. 2) as
//! herd7 models them (herd/X86Sem.ml).

use crate::ast::*;
use crate::builder::{reg_of, Builder};
use crate::scan::{Cursor, PResult};

use super::operand::{operands, parse_int, text};

/// herd's X86 dialect, for [`super::DIALECTS`].
pub(crate) const DIALECT: super::syntax::Dialect = super::syntax::Dialect {
    arch: Arch::X86,
    canonical_reg: |name| reg(name).map(str::to_string),
    threads: super::syntax::Threads::Table(|cur, b, t, out, _| instr(cur, b, t, out)),
};

const X86_REGS: &[&str] = &["EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "EBP"];

pub(crate) fn reg(name: &str) -> Option<&'static str> {
    let up = name.to_ascii_uppercase();
    X86_REGS.iter().copied().find(|r| *r == up)
}

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
        if let Some(r) = reg(inner) {
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
    if let Some(r) = reg(s) {
        return Ok(X86Op::Reg(reg_of(b.thread(t), r)));
    }
    Err(cur.err_at(
        pos,
        format!("expected a register, '$imm' or '[loc]', found '{s}'"),
    ))
}

/// Lowers one X86 instruction into `out`.
pub(crate) fn instr(
    cur: &mut Cursor<'_>,
    b: &mut Builder,
    t: usize,
    out: &mut Vec<Instr>,
) -> PResult<()> {
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
