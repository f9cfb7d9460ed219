//! The RISC-V printer ([`crate::print`]): lowered code back to the RV64
//! subset that riscv.rs parses and herd7 reads (The RISC-V Instruction Set
//! Manual, Volume I: RV64I, the A extension's LR/SC and AMOs with their
//! `.aq`/`.rl` bits, FENCE and FENCE.TSO; chapter 17, RVWMO, for what they
//! order): `lb`/`lh`/`lw`/`ld` and stores by the access's width, `lr`,
//! `sc`, `amo<op>`, `fence`, `li`, `mv`, the register and immediate ALU
//! forms, `slt`/`sltu`, `mul`, `beq`…`bgeu` and `j`.
//!
//! Registers are printed by number (`x10`): a thread register that is an
//! RV64 register keeps its number; the others (stack slots, temporaries)
//! and the registers holding each location's address get free ones;
//! expressions are computed into scratch registers. An address
//! dependency is printed as herd7's own tests write it: the dependency
//! added to the location's register (`add x7,x6,x5; lw x8,0(x7)`).

use std::collections::BTreeMap;

use super::frame::{self, Ctx, PrintError, Printed};
use crate::ast::*;

const ARCH: &str = "RISCV";

/// Prints a RISCV test.
pub(crate) fn print(test: &Test) -> Result<String, PrintError> {
    let mut threads = Vec::new();
    for t in 0..test.threads.len() {
        threads.push(thread(test, t)?);
    }
    Ok(frame::assemble(test, threads))
}

struct Gen<'t> {
    ctx: Ctx<'t>,
    names: Vec<String>,
    bases: BTreeMap<LocId, String>,
    free: Vec<String>,
    used: usize,
    lines: Vec<String>,
}

fn thread(test: &Test, t: usize) -> Result<Printed, PrintError> {
    let th = &test.threads[t];
    let ctx = Ctx {
        test,
        thread: t,
        index: 0,
        arch: ARCH,
    };
    let own = |n: &str| crate::dialect::riscv::reg_num(n).filter(|d| *d != 0);
    let mut taken = [false; 32];
    taken[0] = true;
    for n in &th.regs {
        if let Some(d) = own(n) {
            taken[d as usize] = true;
        }
    }
    let mut free: Vec<String> = (1..32)
        .filter(|d| !taken[*d])
        .map(|d| format!("x{d}"))
        .collect();
    free.reverse();
    let mut names = Vec::new();
    for n in &th.regs {
        match own(n) {
            Some(d) => names.push(format!("x{d}")),
            None => names
                .push(free.pop().ok_or_else(|| {
                    ctx.err(format!("more than 31 registers: none left for {n}"))
                })?),
        }
    }
    let mut bases = BTreeMap::new();
    let mut init: Vec<(String, Value)> = Vec::new();
    for l in frame::constant_locations(&th.code) {
        let r = free
            .pop()
            .ok_or_else(|| ctx.err("more than 31 registers: none left for a location"))?;
        init.push((r.clone(), Value::Loc(l)));
        bases.insert(l, r);
    }
    for (r, v) in &th.init {
        if *v != Value::Int(0) {
            init.push((names[*r].clone(), *v));
        }
    }
    free.reverse();
    let labels = frame::labels(t, &th.code);
    let mut g = Gen {
        ctx,
        names,
        bases,
        free,
        used: 0,
        lines: Vec::new(),
    };
    for (i, ins) in th.code.iter().enumerate() {
        if let Some(l) = labels.get(&i) {
            g.lines.push(format!("{l}:"));
        }
        g.ctx.index = i;
        g.used = 0;
        g.instr(ins, &labels)?;
    }
    if let Some(l) = labels.get(&th.code.len()) {
        g.lines.push(format!("{l}:"));
    }
    Ok(Printed {
        lines: g.lines,
        init,
        names: g.names,
    })
}

/// The width suffix of an access of `width` bytes (0: the register's, 8).
fn width(w: u8) -> &'static str {
    match w {
        1 => "b",
        2 => "h",
        4 => "w",
        _ => "d",
    }
}

fn ordering(acq: bool, rel: bool) -> &'static str {
    match (acq, rel) {
        (true, true) => ".aqrl",
        (true, false) => ".aq",
        (false, true) => ".rl",
        (false, false) => "",
    }
}

fn fits12(k: i64) -> bool {
    (-2048..2048).contains(&k)
}

impl Gen<'_> {
    fn emit(&mut self, s: String) {
        self.lines.push(s);
    }

    fn temp(&mut self) -> Result<String, PrintError> {
        let r = self.free.get(self.used).cloned().ok_or_else(|| {
            self.ctx
                .err("more than 31 registers: no scratch register left")
        })?;
        self.used += 1;
        Ok(r)
    }

    /// `e` in a register (`x0` for 0).
    fn reg(&mut self, e: &Expr) -> Result<String, PrintError> {
        match e {
            Expr::Const(v) => {
                if let Value::Int(k) = v {
                    if *k == 0 {
                        return Ok("x0".into());
                    }
                    let t = self.temp()?;
                    self.emit(format!("li {t},{k}"));
                    Ok(t)
                } else if let Value::Loc(l) = v {
                    Ok(self.bases[l].clone())
                } else {
                    Err(self
                        .ctx
                        .err("a symbolic value (results carry them, code never)"))
                }
            }
            Expr::Reg(r) => Ok(self.names[*r].clone()),
            Expr::Not(_) | Expr::Bin(..) => self.value(e, None),
        }
    }

    /// Computes `e` into `dst` (a scratch register when `None`).
    fn value(&mut self, e: &Expr, dst: Option<&str>) -> Result<String, PrintError> {
        let d = match dst {
            Some(d) => d.to_string(),
            None => self.temp()?,
        };
        match e {
            Expr::Const(Value::Int(k)) => self.emit(format!("li {d},{k}")),
            Expr::Const(_) | Expr::Reg(_) => {
                let s = self.reg(e)?;
                self.emit(format!("mv {d},{s}"));
            }
            Expr::Not(a) => {
                let ra = self.reg(a)?;
                self.emit(format!("sltiu {d},{ra},1"));
            }
            Expr::Bin(op, a, b) => self.bin(*op, a, b, &d)?,
        }
        Ok(d)
    }

    fn bin(&mut self, op: BinOp, a: &Expr, b: &Expr, d: &str) -> Result<(), PrintError> {
        if op == BinOp::And && *b == Expr::int(0) {
            // A dependency with no value (`r & 0`): xor of the register
            // with itself, which herd7 also takes when the register holds
            // a location (and/andi on a location is an error there).
            let ra = self.reg(a)?;
            self.emit(format!("xor {d},{ra},{ra}"));
            return Ok(());
        }
        let imm = match b {
            Expr::Const(Value::Int(k)) => Some(*k),
            _ => None,
        };
        let rform = match op {
            BinOp::Add => Some(("add", Some("addi"))),
            BinOp::Sub => Some(("sub", None)),
            BinOp::Xor => Some(("xor", Some("xori"))),
            BinOp::And => Some(("and", Some("andi"))),
            BinOp::Or => Some(("or", Some("ori"))),
            BinOp::Shl => Some(("sll", Some("slli"))),
            BinOp::Shr => Some(("srl", Some("srli"))),
            BinOp::Lt => Some(("slt", Some("slti"))),
            BinOp::Ult => Some(("sltu", Some("sltiu"))),
            BinOp::Mul => Some(("mul", None)),
            _ => None,
        };
        if let Some((r, i)) = rform {
            let ra = self.reg(a)?;
            match (i, imm) {
                (Some(i), Some(k)) if fits12(k) => self.emit(format!("{i} {d},{ra},{k}")),
                (None, Some(k)) if op == BinOp::Sub && fits12(-k) => {
                    self.emit(format!("addi {d},{ra},{}", -k))
                }
                _ => {
                    let rb = self.reg(b)?;
                    self.emit(format!("{r} {d},{ra},{rb}"));
                }
            }
            return Ok(());
        }
        let ra = self.reg(a)?;
        let rb = self.reg(b)?;
        match op {
            BinOp::AndNot => {
                let t = self.temp()?;
                self.emit(format!("xori {t},{rb},-1"));
                self.emit(format!("and {d},{ra},{t}"));
            }
            BinOp::Eq | BinOp::Ne => {
                let t = self.temp()?;
                self.emit(format!("xor {t},{ra},{rb}"));
                if op == BinOp::Eq {
                    self.emit(format!("sltiu {d},{t},1"));
                } else {
                    self.emit(format!("sltu {d},x0,{t}"));
                }
            }
            BinOp::Gt => self.emit(format!("slt {d},{rb},{ra}")),
            BinOp::Ugt => self.emit(format!("sltu {d},{rb},{ra}")),
            BinOp::Le | BinOp::Ge | BinOp::Ule | BinOp::Uge => {
                // a <= b is !(b < a); a >= b is !(a < b).
                let (m, x, y) = match op {
                    BinOp::Le => ("slt", &rb, &ra),
                    BinOp::Ge => ("slt", &ra, &rb),
                    BinOp::Ule => ("sltu", &rb, &ra),
                    _ => ("sltu", &ra, &rb),
                };
                let t = self.temp()?;
                self.emit(format!("{m} {t},{x},{y}"));
                self.emit(format!("xori {d},{t},1"));
            }
            _ => {
                return Err(self
                    .ctx
                    .err(format!("{op:?}: no RV64 instruction in the printed subset")))
            }
        }
        Ok(())
    }

    /// A memory operand `0(xN)`: the location's register, or it plus a
    /// dependency, or a computed address.
    fn mem(&mut self, addr: &Expr) -> Result<String, PrintError> {
        let r = match addr {
            Expr::Const(Value::Loc(l)) => self.bases[l].clone(),
            Expr::Bin(BinOp::Add, x, y)
                if matches!(**x, Expr::Const(Value::Loc(_)))
                    && matches!(**y, Expr::Const(Value::Int(0))) =>
            {
                self.reg(x)?
            }
            _ => self.reg(addr)?,
        };
        Ok(format!("0({r})"))
    }

    fn dst(&mut self, d: Option<Reg>) -> Result<String, PrintError> {
        match d {
            Some(r) => Ok(self.names[r].clone()),
            None => self.temp(),
        }
    }

    fn instr(&mut self, i: &Instr, labels: &BTreeMap<usize, String>) -> Result<(), PrintError> {
        match i {
            Instr::Load { dst, addr, annot } => {
                let a = self.mem(addr)?;
                let d = self.dst(*dst)?;
                if annot.exclusive {
                    let o = ordering(annot.acquire, annot.release);
                    self.emit(format!("lr.{}{o} {d},{a}", width(annot.width)));
                } else if annot.acquire || annot.release || annot.acquire_pc {
                    return Err(self
                        .ctx
                        .err("an ordered plain load (RISC-V orders loads with fences or lr.aq)"));
                } else {
                    self.emit(format!("l{} {d},{a}", width(annot.width)));
                }
            }
            Instr::Store { addr, value, annot } => {
                if annot.acquire || annot.release {
                    return Err(self.ctx.err("an ordered plain store"));
                }
                let v = self.reg(value)?;
                let a = self.mem(addr)?;
                self.emit(format!("s{} {v},{a}", width(annot.width)));
            }
            Instr::StoreExclusive {
                status,
                addr,
                value,
                annot,
            } => {
                let v = self.reg(value)?;
                let a = self.mem(addr)?;
                let s = self.dst(*status)?;
                let o = ordering(annot.acquire, annot.release);
                self.emit(format!("sc.{}{o} {s},{v},{a}", width(annot.width)));
            }
            Instr::Rmw {
                dst,
                addr,
                op,
                operand,
                read,
                write,
                ..
            } => {
                let stem = match op {
                    RmwOp::Xchg => "swap",
                    RmwOp::Add => "add",
                    RmwOp::And => "and",
                    RmwOp::Or => "or",
                    RmwOp::Xor => "xor",
                    RmwOp::Max => "max",
                    RmwOp::Min => "min",
                    RmwOp::Umax => "maxu",
                    RmwOp::Umin => "minu",
                    RmwOp::Sub | RmwOp::Clr => {
                        return Err(self.ctx.err(format!("{op:?}: RV64 has no such AMO")))
                    }
                };
                let v = self.reg(operand)?;
                let a = self.mem(addr)?;
                let d = match dst {
                    Some(r) => self.names[*r].clone(),
                    None => "x0".into(),
                };
                let o = ordering(read.acquire, write.release);
                self.emit(format!("amo{stem}.{}{o} {d},{v},{a}", width(read.width)));
            }
            Instr::Cas { .. } => {
                return Err(self
                    .ctx
                    .err("a compare-and-swap (RV64 without Zacas has none)"))
            }
            Instr::Fence(Fence::RiscV { pred, succ }) => {
                let set = |a: RvAccesses| match (a.r, a.w) {
                    (true, true) => "rw",
                    (true, false) => "r",
                    (false, true) => "w",
                    (false, false) => "",
                };
                if set(*pred).is_empty() || set(*succ).is_empty() {
                    // A fence with an empty set orders nothing.
                    self.emit("nop".into());
                } else {
                    self.emit(format!("fence {},{}", set(*pred), set(*succ)));
                }
            }
            Instr::Fence(Fence::Tso) => self.emit("fence.tso".into()),
            Instr::Fence(f) => return Err(self.ctx.err(format!("{f}: not a RISC-V fence"))),
            Instr::SyncSrcu { .. } => return Err(self.ctx.err("synchronize_srcu is Linux C")),
            Instr::Assign { dst, expr } => {
                let d = self.names[*dst].clone();
                self.value(expr, Some(&d))?;
            }
            Instr::Select { .. } => {
                return Err(self
                    .ctx
                    .err("a conditional select (RV64 has no such instruction)"))
            }
            Instr::Branch { cond, target } => {
                let l = labels[target].clone();
                match cond {
                    None => self.emit(format!("j {l}")),
                    Some(Expr::Bin(op, x, y))
                        if matches!(
                            op,
                            BinOp::Eq
                                | BinOp::Ne
                                | BinOp::Lt
                                | BinOp::Ge
                                | BinOp::Ult
                                | BinOp::Uge
                                | BinOp::Gt
                                | BinOp::Le
                                | BinOp::Ugt
                                | BinOp::Ule
                        ) =>
                    {
                        let rx = self.reg(x)?;
                        let ry = self.reg(y)?;
                        let (m, a, b) = match op {
                            BinOp::Eq => ("beq", rx, ry),
                            BinOp::Ne => ("bne", rx, ry),
                            BinOp::Lt => ("blt", rx, ry),
                            BinOp::Ge => ("bge", rx, ry),
                            BinOp::Ult => ("bltu", rx, ry),
                            BinOp::Uge => ("bgeu", rx, ry),
                            BinOp::Gt => ("blt", ry, rx),
                            BinOp::Le => ("bge", ry, rx),
                            BinOp::Ugt => ("bltu", ry, rx),
                            _ => ("bgeu", ry, rx),
                        };
                        self.emit(format!("{m} {a},{b},{l}"));
                    }
                    Some(c) => {
                        let r = self.reg(c)?;
                        self.emit(format!("bne {r},x0,{l}"));
                    }
                }
            }
        }
        Ok(())
    }
}
