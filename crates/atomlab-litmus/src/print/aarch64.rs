//! The AArch64 printer ([`crate::print`]): lowered code back to the A64
//! subset that dialect/aarch64.rs parses and herd7 reads (Arm ARM, DDI 0487, C6.2 for
//! each instruction): LDR/LDAR/LDAPR/LDXR/LDAXR, STR/STLR, STXR/STLXR,
//! CAS, SWP and `LD<op>` with their A/L suffixes, DMB/DSB/ISB, MOV, ADD,
//! SUB, EOR, AND, ORR, BIC, LSL, LSR, CMP, CSEL, CBZ/CBNZ, B and B.cond.
//!
//! Registers: a thread register called `Xn` keeps its name; the others
//! (flags, stack slots, temporaries of the lowering) and the registers
//! holding each location's address get free `X` registers; expressions
//! are computed into scratch registers, which dependencies pass through
//! as they pass through the expression (herd7 and the checker both follow
//! dependencies through registers). Immediates are printed in decimal
//! (herd7 reads no hexadecimal immediate).

use std::collections::BTreeMap;

use super::frame::{self, Ctx, PrintError, Printed};
use crate::ast::*;

const ARCH: &str = "AArch64";

/// Prints an AArch64 test.
pub(crate) fn print(test: &Test) -> Result<String, PrintError> {
    let mut threads = Vec::new();
    for t in 0..test.threads.len() {
        threads.push(thread(test, t)?);
    }
    Ok(frame::assemble(test, threads))
}

/// An operand: a register or an immediate.
enum Opnd {
    Reg(String),
    Imm(i64),
}

impl Opnd {
    fn text(&self) -> String {
        match self {
            Opnd::Reg(r) => r.clone(),
            Opnd::Imm(k) => format!("#{k}"),
        }
    }
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
    // Registers named X0–X30 keep their names; the others take free ones.
    let own = |n: &str| {
        n.strip_prefix('X')
            .and_then(|d| d.parse::<u8>().ok())
            .filter(|d| *d <= 30 && n == format!("X{d}"))
    };
    let mut taken = [false; 31];
    for n in &th.regs {
        if let Some(d) = own(n) {
            taken[d as usize] = true;
        }
    }
    let mut free: Vec<String> = (0..31)
        .filter(|d| !taken[*d])
        .map(|d| format!("X{d}"))
        .collect();
    free.reverse();
    let mut names = Vec::new();
    for n in &th.regs {
        match own(n) {
            Some(_) => names.push(n.clone()),
            None => names.push(free.pop().ok_or_else(|| {
                ctx.err(format!(
                    "more than 31 registers: no X register left for {n}"
                ))
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
        ctx: Ctx {
            test,
            thread: t,
            index: 0,
            arch: ARCH,
        },
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

/// The condition code of a comparison.
fn cond_code(op: BinOp) -> Option<&'static str> {
    Some(match op {
        BinOp::Eq => "EQ",
        BinOp::Ne => "NE",
        BinOp::Lt => "LT",
        BinOp::Le => "LE",
        BinOp::Gt => "GT",
        BinOp::Ge => "GE",
        BinOp::Ult => "LO",
        BinOp::Ule => "LS",
        BinOp::Ugt => "HI",
        BinOp::Uge => "HS",
        _ => return None,
    })
}

/// `(comparison, other)` when one factor of a product is a comparison
/// or a negation (0 or 1).
fn boolean_factor<'e>(a: &'e Expr, b: &'e Expr) -> Option<(&'e Expr, &'e Expr)> {
    let is_cmp = |e: &Expr| {
        matches!(e, Expr::Not(_)) || matches!(e, Expr::Bin(op, ..) if cond_code(*op).is_some())
    };
    if is_cmp(a) {
        Some((a, b))
    } else if is_cmp(b) {
        Some((b, a))
    } else {
        None
    }
}

/// (condition, location) terms of a [`location_choice`].
type Chosen<'e> = Vec<(&'e Expr, LocId)>;

/// A location chosen by conditions: `rest + Σ cond_k · loc_k`, the form
/// the lifter gives an address picked by an index or a pointer compared
/// with each field it may reach (its conditions exclude one another and
/// one holds: the lifter's analysis establishes it, and a pointer to no
/// field has a term of its own). Returns the (condition, location) terms
/// in order and the other terms (a dependency, an offset).
fn location_choice(e: &Expr) -> Option<(Chosen<'_>, Vec<&Expr>)> {
    fn terms<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
        match e {
            Expr::Bin(BinOp::Add, a, b) => {
                terms(a, out);
                terms(b, out);
            }
            _ => out.push(e),
        }
    }
    let mut all = Vec::new();
    terms(e, &mut all);
    let mut chosen = Vec::new();
    let mut rest = Vec::new();
    for t in all {
        match t {
            Expr::Bin(BinOp::Mul, a, b) => match boolean_factor(a, b) {
                Some((c, Expr::Const(Value::Loc(l)))) => chosen.push((c, *l)),
                _ => rest.push(t),
            },
            _ => rest.push(t),
        }
    }
    (!chosen.is_empty()).then_some((chosen, rest))
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

    fn base(&self, l: LocId) -> String {
        self.bases[&l].clone()
    }

    fn opnd(&mut self, e: &Expr) -> Result<Opnd, PrintError> {
        Ok(match e {
            Expr::Const(v) => {
                if let Value::Int(k) = v {
                    Opnd::Imm(*k)
                } else if let Value::Loc(l) = v {
                    Opnd::Reg(self.base(*l))
                } else {
                    return Err(self
                        .ctx
                        .err("a symbolic value (results carry them, code never)"));
                }
            }
            Expr::Reg(r) => Opnd::Reg(self.names[*r].clone()),
            Expr::Not(_) | Expr::Bin(..) => Opnd::Reg(self.value(e, None)?),
        })
    }

    /// `e` in a register; 0 as XZR where `zero` allows it.
    fn reg(&mut self, e: &Expr, zero: bool) -> Result<String, PrintError> {
        match self.opnd(e)? {
            Opnd::Reg(r) => Ok(r),
            Opnd::Imm(0) if zero => Ok("XZR".into()),
            Opnd::Imm(k) => {
                let t = self.temp()?;
                self.emit(format!("MOV {t},#{k}"));
                Ok(t)
            }
        }
    }

    /// Computes `e` into `dst` (a scratch register when `None`).
    fn value(&mut self, e: &Expr, dst: Option<&str>) -> Result<String, PrintError> {
        let d = match dst {
            Some(d) => d.to_string(),
            None => self.temp()?,
        };
        match e {
            Expr::Const(_) | Expr::Reg(_) => {
                let o = self.opnd(e)?;
                self.emit(format!("MOV {d},{}", o.text()));
            }
            Expr::Not(a) => {
                let ra = self.reg(a, false)?;
                let one = self.reg(&Expr::int(1), false)?;
                self.emit(format!("CMP {ra},#0"));
                self.emit(format!("CSEL {d},{one},XZR,EQ"));
            }
            Expr::Bin(BinOp::And, a, b) if **b == Expr::int(0) => {
                // A dependency with no value (`r & 0`, the lifter's way to
                // make an address depend on a register): EOR of the
                // register with itself, which herd7 also takes when the
                // register holds a location (AND on a location is an
                // error there).
                let ra = self.reg(a, false)?;
                self.emit(format!("EOR {d},{ra},{ra}"));
            }
            Expr::Bin(BinOp::Add, ..) if location_choice(e).is_some() => {
                let (chosen, rest) = location_choice(e).unwrap_or_default();
                self.choose(&chosen, &d)?;
                for t in rest {
                    if *t != Expr::int(0) {
                        let o = self.opnd(t)?;
                        self.emit(format!("ADD {d},{d},{}", o.text()));
                    }
                }
            }
            Expr::Bin(op, a, b) => {
                let m = match op {
                    BinOp::Add => "ADD",
                    BinOp::Sub => "SUB",
                    BinOp::Xor => "EOR",
                    BinOp::And => "AND",
                    BinOp::Or => "ORR",
                    BinOp::AndNot => "BIC",
                    BinOp::Shl => "LSL",
                    BinOp::Shr => "LSR",
                    _ => "",
                };
                if !m.is_empty() {
                    let ra = self.reg(a, false)?;
                    let ob = self.opnd(b)?;
                    self.emit(format!("{m} {d},{ra},{}", ob.text()));
                } else if let (BinOp::Mul, Some((c, x))) = (op, boolean_factor(a, b)) {
                    // A comparison times a value (the lifter's choice of
                    // a ring's slot: `(i == 2) * slot2`): the value or 0,
                    // a CSEL on the comparison.
                    let rx = self.reg(x, true)?;
                    let cc = self.compare(c)?;
                    self.emit(format!("CSEL {d},{rx},XZR,{cc}"));
                } else if let Some(cc) = cond_code(*op) {
                    let ra = self.reg(a, false)?;
                    let ob = self.opnd(b)?;
                    let one = self.reg(&Expr::int(1), false)?;
                    self.emit(format!("CMP {ra},{}", ob.text()));
                    self.emit(format!("CSEL {d},{one},XZR,{cc}"));
                } else {
                    return Err(self
                        .ctx
                        .err(format!("{op:?}: no A64 instruction in the printed subset")));
                }
            }
        }
        Ok(d)
    }

    /// The location `chosen` picks, into `d`: the last one, replaced by
    /// each earlier one whose condition holds (a CSEL each). The address
    /// is never 0, which herd7 refuses as a location with no initial
    /// value, even in a candidate it would reject; where no condition
    /// holds (never, see [`location_choice`]) it is the last location.
    fn choose(&mut self, chosen: &[(&Expr, LocId)], d: &str) -> Result<(), PrintError> {
        let Some(((_, last), earlier)) = chosen.split_last() else {
            return Ok(());
        };
        let mut acc = self.base(*last);
        for (c, l) in earlier.iter().rev() {
            let rl = self.base(*l);
            let cc = self.compare(c)?;
            self.emit(format!("CSEL {d},{rl},{acc},{cc}"));
            acc = d.to_string();
        }
        if acc != d {
            self.emit(format!("MOV {d},{acc}"));
        }
        Ok(())
    }

    /// A memory operand: `[Xbase]`, `[Xbase,Xdep]` or `[Xaddr]`; `plain`
    /// asks for the base-only form (exclusives, CAS, SWP, LD<op>).
    fn mem(&mut self, addr: &Expr, plain: bool) -> Result<String, PrintError> {
        if let Some((chosen, rest)) = location_choice(addr) {
            let rest: Vec<&Expr> = rest.into_iter().filter(|t| **t != Expr::int(0)).collect();
            if plain || rest.len() > 1 {
                return Ok(format!("[{}]", self.reg(addr, false)?));
            }
            let b = self.temp()?;
            self.choose(&chosen, &b)?;
            return match rest.first() {
                None => Ok(format!("[{b}]")),
                Some(t) => match self.opnd(t)? {
                    Opnd::Imm(k) => Ok(format!("[{b},#{k}]")),
                    Opnd::Reg(r) => Ok(format!("[{b},{r}]")),
                },
            };
        }
        match addr {
            Expr::Const(Value::Loc(l)) => Ok(format!("[{}]", self.base(*l))),
            Expr::Bin(BinOp::Add, x, y) if !plain => {
                // The location (or base register) first, the offset or
                // dependency second: `[Xbase,Xdep]`.
                let (x, y) = match (&**x, &**y) {
                    (e, l @ Expr::Const(Value::Loc(_))) => (l, e),
                    (a, b) => (a, b),
                };
                let b = self.reg(x, false)?;
                match self.opnd(y)? {
                    Opnd::Imm(0) => Ok(format!("[{b}]")),
                    Opnd::Imm(k) => Ok(format!("[{b},#{k}]")),
                    Opnd::Reg(r) => Ok(format!("[{b},{r}]")),
                }
            }
            _ => Ok(format!("[{}]", self.reg(addr, false)?)),
        }
    }

    fn dst(&mut self, d: Option<Reg>) -> Result<String, PrintError> {
        match d {
            Some(r) => Ok(self.names[r].clone()),
            None => self.temp(),
        }
    }

    fn instr(&mut self, i: &Instr, labels: &BTreeMap<usize, String>) -> Result<(), PrintError> {
        let al = |acq: bool, rel: bool| match (acq, rel) {
            (true, true) => "AL",
            (true, false) => "A",
            (false, true) => "L",
            (false, false) => "",
        };
        match i {
            Instr::Load { dst, addr, annot } => {
                let m = match (annot.exclusive, annot.acquire, annot.acquire_pc) {
                    (true, true, _) => "LDAXR",
                    (true, false, _) => "LDXR",
                    (false, true, _) => "LDAR",
                    (false, false, true) => "LDAPR",
                    (false, false, false) => "LDR",
                };
                let a = self.mem(addr, m != "LDR")?;
                let d = self.dst(*dst)?;
                self.emit(format!("{m} {d},{a}"));
            }
            Instr::Store { addr, value, annot } => {
                let m = if annot.release { "STLR" } else { "STR" };
                let v = self.reg(value, true)?;
                let a = self.mem(addr, annot.release)?;
                self.emit(format!("{m} {v},{a}"));
            }
            Instr::StoreExclusive {
                status,
                addr,
                value,
                annot,
            } => {
                let m = if annot.release { "STLXR" } else { "STXR" };
                let v = self.reg(value, true)?;
                let a = self.mem(addr, true)?;
                let s = self.dst(*status)?;
                // The status is a W register in A64's syntax.
                let s = s.replacen('X', "W", 1);
                self.emit(format!("{m} {s},{v},{a}"));
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
                    RmwOp::Xchg => "SWP",
                    RmwOp::Add => "LDADD",
                    RmwOp::Or => "LDSET",
                    RmwOp::Xor => "LDEOR",
                    RmwOp::Clr => "LDCLR",
                    RmwOp::Max => "LDSMAX",
                    RmwOp::Min => "LDSMIN",
                    RmwOp::Umax => "LDUMAX",
                    RmwOp::Umin => "LDUMIN",
                    RmwOp::Sub | RmwOp::And => {
                        return Err(self.ctx.err(format!("{op:?}: A64 has no such atomic")))
                    }
                };
                let v = self.reg(operand, true)?;
                let a = self.mem(addr, true)?;
                let d = match dst {
                    Some(r) => self.names[*r].clone(),
                    None => "XZR".into(),
                };
                let sfx = al(read.acquire, write.release);
                self.emit(format!("{stem}{sfx} {v},{d},{a}"));
            }
            Instr::Cas {
                result,
                addr,
                expected,
                desired,
                read,
                write,
                ..
            } => {
                if result.is_some() {
                    return Err(self.ctx.err("a C compare-exchange's boolean result"));
                }
                let s = match expected {
                    CasExpected::Reg(r) => self.names[*r].clone(),
                    CasExpected::Value(e) => {
                        let e = e.clone();
                        self.reg(&e, true)?
                    }
                    CasExpected::Mem(_) => {
                        return Err(self.ctx.err("a C compare-exchange's expected pointer"))
                    }
                };
                let v = self.reg(desired, true)?;
                let a = self.mem(addr, true)?;
                let sfx = al(read.acquire, write.release);
                self.emit(format!("CAS{sfx} {s},{v},{a}"));
            }
            Instr::Fence(Fence::Dmb(b, o)) => {
                let m = match b {
                    Barrier::Dmb => "DMB",
                    Barrier::Dsb => "DSB",
                };
                self.emit(format!("{m} {}", o.name()));
            }
            Instr::Fence(Fence::Isb) => self.emit("ISB".into()),
            Instr::Fence(f) => return Err(self.ctx.err(format!("{f}: not an A64 barrier"))),
            Instr::SyncSrcu { .. } => return Err(self.ctx.err("synchronize_srcu is Linux C")),
            Instr::Assign { dst, expr } => {
                let d = self.names[*dst].clone();
                self.value(expr, Some(&d))?;
            }
            Instr::Select { dst, cond, a, b } => {
                let ra = self.reg(a, true)?;
                let rb = self.reg(b, true)?;
                let cc = self.compare(cond)?;
                let d = self.names[*dst].clone();
                self.emit(format!("CSEL {d},{ra},{rb},{cc}"));
            }
            Instr::Branch { cond, target } => {
                let l = labels[target].clone();
                match cond {
                    None => self.emit(format!("B {l}")),
                    Some(Expr::Bin(op @ (BinOp::Eq | BinOp::Ne), x, y)) if **y == Expr::int(0) => {
                        let r = self.reg(x, false)?;
                        let m = if *op == BinOp::Eq { "CBZ" } else { "CBNZ" };
                        self.emit(format!("{m} {r},{l}"));
                    }
                    Some(c) => {
                        let cc = self.compare(c)?;
                        self.emit(format!("B.{cc} {l}"));
                    }
                }
            }
        }
        Ok(())
    }

    /// Sets the flags for `cond` (a comparison, or a value tested against
    /// 0) and returns the condition code that holds when it does.
    fn compare(&mut self, cond: &Expr) -> Result<&'static str, PrintError> {
        if let Expr::Bin(op, x, y) = cond {
            if let Some(cc) = cond_code(*op) {
                let rx = self.reg(x, false)?;
                let oy = self.opnd(y)?;
                self.emit(format!("CMP {rx},{}", oy.text()));
                return Ok(cc);
            }
        }
        let r = self.reg(cond, false)?;
        self.emit(format!("CMP {r},#0"));
        Ok("NE")
    }
}
