//! herd's RISCV format: RV64 assembly (`lw x5,0(x6)`, `sw x5,0(x6)`,
//! `amoswap.w.rl x0,x5,(x6)`), lowered to [`Instr`]s. Instruction semantics
//! follow the RISC-V unprivileged ISA manual (RV64I; "A" extension: LR/SC and
//! AMOs; FENCE and FENCE.TSO) as herd7 7.58 models them (herd/RISCVSem.ml):
//!
//! - An AMO is a read and a write linked by `rmw`; `.aq` marks the read
//!   acquire and `.rl` the write release; `.aqrl` marks both events both
//!   (the spec's RCsc AMO).
//! - `lr`/`sc` are an exclusive read and an exclusive conditional write; the
//!   `sc` may always fail (writing nothing and a non-zero status) and
//!   succeeds only paired with the thread's last `lr` of the same address.
//!   Their `.aq`/`.rl` annotations are kept on the event.
//! - The base ISA has no acquire/release plain loads and stores; herd7 reads
//!   diy7's `lw.aq`, `sw.rl`, `lw.aqrl`, `sw.aqrl` as the fenced sequences
//!   of the spec's C11 mapping (Table A.6): `l; fence r,rw`,
//!   `fence rw,w; s`, `fence rw,rw; l; fence r,rw`, `fence rw,rw; s`; an
//!   `.rl` load or `.aq` store is a plain access. This parser does the same.
//! - `fence.i` orders nothing among data accesses and is dropped.
//!
//! Widths: `b`/`h`/`w`/`d` accesses carry their width so that the checker
//! can refuse a location accessed with two widths (mixed-size). Values are
//! 64-bit: `.w` operations are not sign-truncated (litmus values are small).

use super::operand::{operands, parse_int, text};
use crate::ast::*;
use crate::builder::{reg_of, Builder};
use crate::scan::{Cursor, PResult};

/// herd's RISCV dialect, for [`super::DIALECTS`].
pub(crate) const DIALECT: super::syntax::Dialect = super::syntax::Dialect {
    arch: Arch::RiscV,
    canonical_reg: canonical,
    threads: super::syntax::Threads::Table(instr),
};

/// ABI names of x1–x31 (`x0` is `zero`).
const ABI: &[&str] = &[
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6",
];

/// A register's number, from `x5` or an ABI name (`t0`, `fp`).
pub(crate) fn reg_num(name: &str) -> Option<u8> {
    let low = name.to_ascii_lowercase();
    if let Some(n) = low.strip_prefix('x') {
        if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) && n.len() <= 2 {
            let n: u8 = n.parse().ok()?;
            return (n < 32).then_some(n);
        }
    }
    if low == "fp" {
        return Some(8);
    }
    ABI.iter().position(|r| *r == low).map(|i| i as u8)
}

/// The canonical name (`x5`) of a register.
pub(crate) fn canonical(name: &str) -> Option<String> {
    reg_num(name).map(|n| format!("x{n}"))
}

struct Ctx<'x, 'a> {
    cur: &'x Cursor<'a>,
    ops: Vec<(usize, usize)>,
    mpos: usize,
    mnemonic: String,
}

impl Ctx<'_, '_> {
    fn want(&self, n: usize) -> PResult<()> {
        if self.ops.len() != n {
            return Err(self.cur.err_at(
                self.mpos,
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
        let (s, e) = self.ops[i];
        let t = &self.cur.src[s..e];
        s + (t.len() - t.trim_start().len())
    }
    fn err(&self, i: usize, msg: String) -> crate::ParseError {
        self.cur.err_at(self.pos(i), msg)
    }
    fn reg(&self, i: usize) -> PResult<u8> {
        let s = self.op(i);
        reg_num(s).ok_or_else(|| self.err(i, format!("expected a register (x0–x31), found '{s}'")))
    }
    fn imm(&self, i: usize) -> PResult<i64> {
        let s = self.op(i);
        parse_int(s).ok_or_else(|| self.err(i, format!("bad immediate '{s}'")))
    }
}

/// Reading register `n`: `x0` is the constant 0.
fn read(b: &mut Builder, t: usize, n: u8) -> Expr {
    if n == 0 {
        Expr::int(0)
    } else {
        Expr::Reg(reg_of(b.thread(t), &format!("x{n}")))
    }
}

/// Writing register `n`: writes to `x0` are discarded.
fn write(b: &mut Builder, t: usize, n: u8) -> Option<Reg> {
    (n != 0).then(|| reg_of(b.thread(t), &format!("x{n}")))
}

/// `imm(rs1)` or `(rs1)`: the address `rs1 + imm`.
fn addr(ctx: &Ctx<'_, '_>, b: &mut Builder, t: usize, i: usize) -> PResult<Expr> {
    let s = ctx.op(i);
    let bad = || {
        ctx.err(
            i,
            format!("expected a memory operand 'imm(reg)', found '{s}'"),
        )
    };
    let open = s.find('(').ok_or_else(bad)?;
    let inner = s[open + 1..].strip_suffix(')').ok_or_else(bad)?;
    let base = reg_num(inner.trim()).ok_or_else(bad)?;
    let disp = s[..open].trim();
    let disp = if disp.is_empty() {
        0
    } else {
        parse_int(disp).ok_or_else(bad)?
    };
    let e = read(b, t, base);
    Ok(if disp == 0 {
        e
    } else {
        Expr::bin(BinOp::Add, e, Expr::int(disp))
    })
}

/// `.aq`, `.rl`, `.aqrl` (or nothing): (acquire, release).
fn ordering(s: &str) -> Option<(bool, bool)> {
    Some(match s {
        "" => (false, false),
        ".aq" => (true, false),
        ".rl" => (false, true),
        ".aqrl" => (true, true),
        _ => return None,
    })
}

/// A width suffix of `lr`/`sc`/AMOs: `.w` or `.d`, in bytes, and the rest.
fn width_suffix(s: &str) -> Option<(u8, &str)> {
    if let Some(r) = s.strip_prefix(".w") {
        Some((4, r))
    } else {
        s.strip_prefix(".d").map(|r| (8, r))
    }
}

fn fence_set(s: &str) -> Option<RvAccesses> {
    let s = s.trim().to_ascii_lowercase();
    if s.is_empty() || !s.chars().all(|c| "iorw".contains(c)) {
        return None;
    }
    Some(RvAccesses {
        r: s.contains('r'),
        w: s.contains('w'),
    })
}

fn fence(pred: RvAccesses, succ: RvAccesses) -> Instr {
    Instr::Fence(Fence::RiscV { pred, succ })
}

/// Lowers one RISC-V instruction.
pub(crate) fn instr(
    cur: &mut Cursor<'_>,
    b: &mut Builder,
    t: usize,
    out: &mut Vec<Instr>,
    fixups: &mut Vec<(usize, String, usize)>,
) -> PResult<()> {
    let mpos = cur.pos;
    let word = cur
        .ident()
        .ok_or_else(|| cur.err(format!("expected an instruction, found {}", cur.found())))?;
    let m = word.to_ascii_lowercase();
    cur.ws();
    let ctx = Ctx {
        cur,
        ops: operands(cur),
        mpos,
        mnemonic: m.clone(),
    };
    let here = b.threads[t].code.len();
    let unsupported = || cur.err_at(mpos, format!("unsupported RISCV instruction '{word}'"));
    let mut branch = |out: &mut Vec<Instr>, cond: Option<Expr>, label_op: usize| {
        fixups.push((
            here + out.len(),
            ctx.op(label_op).to_string(),
            ctx.pos(label_op),
        ));
        out.push(Instr::Branch {
            cond,
            target: usize::MAX,
        });
    };
    let (stem, ann) = match m.find(".aq").or_else(|| m.find(".rl")) {
        Some(i) => (&m[..i], &m[i..]),
        None => (m.as_str(), ""),
    };
    let Some((acq, rel)) = ordering(ann) else {
        return Err(unsupported());
    };
    let annotated = acq || rel;
    match stem {
        "nop" | "fence.i" if !annotated => ctx.want(0)?,
        "fence" if !annotated => {
            if ctx.ops.is_empty() {
                out.push(fence(RvAccesses::RW, RvAccesses::RW));
            } else {
                ctx.want(2)?;
                let p = fence_set(ctx.op(0)).ok_or_else(|| {
                    ctx.err(0, format!("bad fence predecessor set '{}'", ctx.op(0)))
                })?;
                let s = fence_set(ctx.op(1)).ok_or_else(|| {
                    ctx.err(1, format!("bad fence successor set '{}'", ctx.op(1)))
                })?;
                out.push(fence(p, s));
            }
        }
        "fence.tso" if !annotated => {
            ctx.want(0)?;
            out.push(Instr::Fence(Fence::Tso));
        }
        "lb" | "lh" | "lw" | "ld" | "lbu" | "lhu" | "lwu" => {
            ctx.want(2)?;
            let d = ctx.reg(0)?;
            let a = addr(&ctx, b, t, 1)?;
            let annot = Annot {
                width: access_width(stem),
                ..Annot::default()
            };
            if acq && rel {
                out.push(fence(RvAccesses::RW, RvAccesses::RW));
            }
            let dst = write(b, t, d);
            out.push(Instr::Load {
                dst,
                addr: a,
                annot,
            });
            if acq {
                out.push(fence(RvAccesses::R, RvAccesses::RW));
            }
        }
        "sb" | "sh" | "sw" | "sd" => {
            ctx.want(2)?;
            let v = ctx.reg(0)?;
            let value = read(b, t, v);
            let a = addr(&ctx, b, t, 1)?;
            match (acq, rel) {
                (true, true) => out.push(fence(RvAccesses::RW, RvAccesses::RW)),
                (false, true) => out.push(fence(RvAccesses::RW, RvAccesses::W)),
                _ => {}
            }
            out.push(Instr::Store {
                addr: a,
                value,
                annot: Annot {
                    width: access_width(stem),
                    ..Annot::default()
                },
            });
        }
        _ if stem.starts_with("lr.") => {
            let Some((width, "")) = width_suffix(&stem[2..]) else {
                return Err(unsupported());
            };
            ctx.want(2)?;
            let d = ctx.reg(0)?;
            let a = addr(&ctx, b, t, 1)?;
            let dst = write(b, t, d);
            out.push(Instr::Load {
                dst,
                addr: a,
                annot: Annot {
                    acquire: acq,
                    release: rel,
                    exclusive: true,
                    width,
                    ..Annot::default()
                },
            });
        }
        _ if stem.starts_with("sc.") => {
            let Some((width, "")) = width_suffix(&stem[2..]) else {
                return Err(unsupported());
            };
            ctx.want(3)?;
            let s = ctx.reg(0)?;
            let v = ctx.reg(1)?;
            let value = read(b, t, v);
            let a = addr(&ctx, b, t, 2)?;
            let status = write(b, t, s);
            out.push(Instr::StoreExclusive {
                status,
                addr: a,
                value,
                annot: Annot {
                    acquire: acq,
                    release: rel,
                    exclusive: true,
                    width,
                    ..Annot::default()
                },
            });
        }
        _ if stem.starts_with("amo") => {
            let dot = stem.find('.').ok_or_else(unsupported)?;
            let op = match &stem[3..dot] {
                "swap" => RmwOp::Xchg,
                "add" => RmwOp::Add,
                "and" => RmwOp::And,
                "or" => RmwOp::Or,
                "xor" => RmwOp::Xor,
                "max" => RmwOp::Max,
                "min" => RmwOp::Min,
                "maxu" => RmwOp::Umax,
                "minu" => RmwOp::Umin,
                _ => return Err(unsupported()),
            };
            let Some((width, "")) = width_suffix(&stem[dot..]) else {
                return Err(unsupported());
            };
            ctx.want(3)?;
            let d = ctx.reg(0)?;
            let v = ctx.reg(1)?;
            let operand = read(b, t, v);
            let a = addr(&ctx, b, t, 2)?;
            let dst = write(b, t, d);
            // `.aqrl` makes both events acquire and release (RCsc); otherwise
            // `.aq` is on the read and `.rl` on the write (herd7's read_mo
            // and write_mo).
            let both = acq && rel;
            out.push(Instr::Rmw {
                dst,
                addr: a,
                op,
                operand,
                read: Annot {
                    acquire: acq,
                    release: both,
                    width,
                    ..Annot::default()
                },
                write: Annot {
                    acquire: both,
                    release: rel,
                    width,
                    ..Annot::default()
                },
                single: false,
            });
        }
        _ if annotated => return Err(unsupported()),
        "li" => {
            ctx.want(2)?;
            let d = ctx.reg(0)?;
            let v = ctx.imm(1)?;
            if let Some(d) = write(b, t, d) {
                out.push(Instr::Assign {
                    dst: d,
                    expr: Expr::int(v),
                });
            }
        }
        "mv" | "neg" | "not" | "seqz" | "snez" => {
            ctx.want(2)?;
            let d = ctx.reg(0)?;
            let s = ctx.reg(1)?;
            let e = read(b, t, s);
            let expr = match stem {
                "mv" => e,
                "neg" => Expr::bin(BinOp::Sub, Expr::int(0), e),
                "not" => Expr::bin(BinOp::Xor, e, Expr::int(-1)),
                "seqz" => Expr::bin(BinOp::Eq, e, Expr::int(0)),
                _ => Expr::bin(BinOp::Ne, e, Expr::int(0)),
            };
            if let Some(d) = write(b, t, d) {
                out.push(Instr::Assign { dst: d, expr });
            }
        }
        "add" | "sub" | "and" | "or" | "xor" | "sll" | "srl" | "slt" | "sltu" | "mul" | "addw"
        | "subw" | "sllw" | "srlw" | "mulw" | "addi" | "andi" | "ori" | "xori" | "slli"
        | "srli" | "slti" | "sltiu" | "addiw" | "slliw" | "srliw" => {
            ctx.want(3)?;
            let d = ctx.reg(0)?;
            let s1 = ctx.reg(1)?;
            let a = read(b, t, s1);
            let (base, imm) = match stem {
                "addi" | "addiw" => ("add", true),
                "andi" => ("and", true),
                "ori" => ("or", true),
                "xori" => ("xor", true),
                "slli" | "slliw" => ("sll", true),
                "srli" | "srliw" => ("srl", true),
                "slti" => ("slt", true),
                "sltiu" => ("sltu", true),
                "addw" => ("add", false),
                "subw" => ("sub", false),
                "sllw" => ("sll", false),
                "srlw" => ("srl", false),
                "mulw" => ("mul", false),
                other => (other, false),
            };
            let c = if imm {
                Expr::int(ctx.imm(2)?)
            } else {
                let s2 = ctx.reg(2)?;
                read(b, t, s2)
            };
            let op = match base {
                "add" => BinOp::Add,
                "sub" => BinOp::Sub,
                "and" => BinOp::And,
                "or" => BinOp::Or,
                "xor" => BinOp::Xor,
                "sll" => BinOp::Shl,
                "srl" => BinOp::Shr,
                "slt" => BinOp::Lt,
                "sltu" => BinOp::Ult,
                _ => BinOp::Mul,
            };
            if let Some(d) = write(b, t, d) {
                out.push(Instr::Assign {
                    dst: d,
                    expr: Expr::bin(op, a, c),
                });
            }
        }
        "beq" | "bne" | "blt" | "bge" | "bltu" | "bgeu" => {
            ctx.want(3)?;
            let r1 = ctx.reg(0)?;
            let r2 = ctx.reg(1)?;
            let (x, y) = (read(b, t, r1), read(b, t, r2));
            let op = match stem {
                "beq" => BinOp::Eq,
                "bne" => BinOp::Ne,
                "blt" => BinOp::Lt,
                "bge" => BinOp::Ge,
                "bltu" => BinOp::Ult,
                _ => BinOp::Uge,
            };
            branch(out, Some(Expr::bin(op, x, y)), 2);
        }
        "beqz" | "bnez" => {
            ctx.want(2)?;
            let r1 = ctx.reg(0)?;
            let x = read(b, t, r1);
            let op = if stem == "beqz" { BinOp::Eq } else { BinOp::Ne };
            branch(out, Some(Expr::bin(op, x, Expr::int(0))), 1);
        }
        "j" => {
            ctx.want(1)?;
            branch(out, None, 0);
        }
        _ => return Err(unsupported()),
    }
    cur.pos = cur.end;
    Ok(())
}

/// The width in bytes of a plain load or store mnemonic.
fn access_width(stem: &str) -> u8 {
    match stem.as_bytes().get(1) {
        Some(b'b') => 1,
        Some(b'h') => 2,
        Some(b'w') => 4,
        _ => 8,
    }
}
