//! herd's C dialect: `P0 (atomic_int* x, …) { … }` threads with C11 atomics,
//! plain accesses, `if`/`else` and local `int` registers, lowered to
//! [`Instr`]s. Follows herd7's C semantics (herd/CSem.ml): read-modify-writes
//! are single events, and `atomic_compare_exchange_*` reads `*expected`
//! plainly, then either performs one RMW event (success) or an atomic read of
//! the object and a plain write of `*expected` (failure).

use crate::ast::*;
use crate::parse::{reg_of, Builder, TYPE_WORDS};
use crate::scan::{Cursor, PResult};

struct Body<'c, 'b> {
    c: &'c mut Cursor<'b>,
    b: &'c mut Builder,
    tid: usize,
    params: Vec<(String, LocId)>,
    declared: Vec<String>,
    code: Vec<Instr>,
    temps: usize,
}

pub(crate) fn parse_threads(c: &mut Cursor<'_>, b: &mut Builder) -> PResult<usize> {
    loop {
        c.ws();
        let r = c.rest();
        let is_thread = r.starts_with('P') && r[1..].starts_with(|ch: char| ch.is_ascii_digit());
        if !is_thread {
            return Ok(c.pos);
        }
        let pos = c.pos;
        let name = c.ident().unwrap_or("P");
        let tid: usize = name[1..]
            .parse()
            .map_err(|_| c.err_at(pos, format!("bad thread name '{name}'")))?;
        if tid != b.threads.len() {
            return Err(c.err_at(
                pos,
                format!("expected thread P{}, found '{name}'", b.threads.len()),
            ));
        }
        b.thread(tid);
        c.expect("(", "after the thread name")?;
        let mut params = Vec::new();
        loop {
            c.ws();
            if c.eat(")") {
                break;
            }
            let ppos = c.pos;
            let mut last = None;
            loop {
                c.ws();
                if c.eat("*") {
                    continue;
                }
                let wpos = c.pos;
                match c.ident() {
                    Some(w) if TYPE_WORDS.contains(&w) => continue,
                    Some(w) => {
                        if last.is_some() {
                            return Err(
                                c.err_at(wpos, format!("unsupported parameter type near '{w}'"))
                            );
                        }
                        last = Some(w)
                    }
                    None => break,
                }
            }
            let pname = last.ok_or_else(|| c.err_at(ppos, "expected a parameter name"))?;
            let l = b.loc(pname);
            params.push((pname.to_string(), l));
            c.ws();
            if !c.eat(",") && !c.rest().starts_with(')') {
                return Err(c.err(format!(
                    "expected ',' or ')' in the parameters, found {}",
                    c.found()
                )));
            }
        }
        c.expect("{", "to open the thread's body")?;
        let mut body = Body {
            c,
            b,
            tid,
            params,
            declared: Vec::new(),
            code: Vec::new(),
            temps: 0,
        };
        body.block_rest()?;
        let code = std::mem::take(&mut body.code);
        b.threads[tid].code = code;
    }
}

fn mem_order(name: &str) -> Option<MemOrder> {
    Some(match name {
        "memory_order_relaxed" => MemOrder::Relaxed,
        "memory_order_consume" => MemOrder::Consume,
        "memory_order_acquire" => MemOrder::Acquire,
        "memory_order_release" => MemOrder::Release,
        "memory_order_acq_rel" => MemOrder::AcqRel,
        "memory_order_seq_cst" => MemOrder::SeqCst,
        _ => return None,
    })
}

impl Body<'_, '_> {
    fn thread(&mut self) -> &mut Thread {
        &mut self.b.threads[self.tid]
    }

    fn temp(&mut self) -> Reg {
        self.temps += 1;
        let name = format!("%t{}", self.temps);
        reg_of(self.thread(), &name)
    }

    /// Statements up to and including the closing `}`.
    fn block_rest(&mut self) -> PResult<()> {
        loop {
            self.c.ws();
            if self.c.eat("}") {
                return Ok(());
            }
            if self.c.at_end() {
                return Err(self.c.err("unterminated block: expected '}'"));
            }
            self.stmt()?;
        }
    }

    fn stmt(&mut self) -> PResult<()> {
        let c = &mut *self.c;
        c.ws();
        if c.eat(";") {
            return Ok(());
        }
        if c.eat("{") {
            return self.block_rest();
        }
        let pos = c.pos;
        if c.eat_word("if") {
            self.c.expect("(", "after 'if'")?;
            let cond = self.expr()?;
            self.c.expect(")", "to close the 'if' condition")?;
            let br = self.code.len();
            self.code.push(Instr::Branch {
                cond: Some(Expr::Not(Box::new(cond))),
                target: usize::MAX,
            });
            self.stmt()?;
            if self.c.eat_word("else") {
                let jump = self.code.len();
                self.code.push(Instr::Branch {
                    cond: None,
                    target: usize::MAX,
                });
                let else_start = self.code.len();
                self.patch(br, else_start);
                self.stmt()?;
                let end = self.code.len();
                self.patch(jump, end);
            } else {
                let end = self.code.len();
                self.patch(br, end);
            }
            return Ok(());
        }
        for kw in ["while", "for", "do", "goto", "return", "switch"] {
            if self.c.eat_word(kw) {
                return Err(self
                    .c
                    .err_at(pos, format!("unsupported C statement '{kw}'")));
            }
        }
        // Declarations.
        let save = self.c.pos;
        let mut typed = false;
        loop {
            let wpos = self.c.pos;
            match self.c.ident() {
                Some(w) if TYPE_WORDS.contains(&w) => typed = true,
                Some(_) => {
                    self.c.pos = wpos;
                    break;
                }
                None => break,
            }
        }
        if typed {
            loop {
                while self.c.eat("*") {}
                let npos = self.c.pos;
                let name = self
                    .c
                    .ident()
                    .ok_or_else(|| self.c.err("expected a variable name in the declaration"))?;
                if self.params.iter().any(|(p, _)| p == name) {
                    return Err(self.c.err_at(npos, format!("'{name}' shadows a parameter")));
                }
                let name = name.to_string();
                self.declared.push(name.clone());
                let r = reg_of(self.thread(), &name);
                if self.c.eat("=") {
                    let e = self.expr()?;
                    self.code.push(Instr::Assign { dst: r, expr: e });
                }
                if self.c.eat(",") {
                    continue;
                }
                self.c.expect(";", "after the declaration")?;
                return Ok(());
            }
        }
        self.c.pos = save;
        // `*p = e;`
        if self.c.eat("*") {
            let addr = self.unary()?;
            self.c.expect("=", "in a store through a pointer")?;
            let value = self.expr()?;
            self.c.expect(";", "after the store")?;
            self.code.push(Instr::Store {
                addr,
                value,
                annot: Annot::c(MemOrder::Na),
            });
            return Ok(());
        }
        // `r = e;`
        let save = self.c.pos;
        if let Some(name) = self.c.ident() {
            self.c.ws();
            if self.c.rest().starts_with('=') && !self.c.rest().starts_with("==") {
                self.c.eat("=");
                if !self.declared.iter().any(|d| d == name) {
                    return Err(self
                        .c
                        .err_at(save, format!("assignment to undeclared variable '{name}'")));
                }
                let r = reg_of(self.thread(), name);
                let e = self.expr()?;
                self.c.expect(";", "after the assignment")?;
                self.code.push(Instr::Assign { dst: r, expr: e });
                return Ok(());
            }
        }
        self.c.pos = save;
        let _ = self.expr()?;
        self.c.expect(";", "after the statement")?;
        Ok(())
    }

    fn patch(&mut self, at: usize, to: usize) {
        if let Instr::Branch { target, .. } = &mut self.code[at] {
            *target = to;
        }
    }

    fn expr(&mut self) -> PResult<Expr> {
        self.binary(0)
    }

    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        loop {
            self.c.ws();
            let ops: &[(&str, u8, BinOp)] = &[
                ("||", 1, BinOp::LogOr),
                ("&&", 2, BinOp::LogAnd),
                ("==", 6, BinOp::Eq),
                ("!=", 6, BinOp::Ne),
                ("<=", 7, BinOp::Le),
                (">=", 7, BinOp::Ge),
                ("<<", 8, BinOp::Shl),
                (">>", 8, BinOp::Shr),
                ("<", 7, BinOp::Lt),
                (">", 7, BinOp::Gt),
                ("|", 3, BinOp::Or),
                ("^", 4, BinOp::Xor),
                ("&", 5, BinOp::And),
                ("+", 9, BinOp::Add),
                ("-", 9, BinOp::Sub),
                ("*", 10, BinOp::Mul),
            ];
            let r = self.c.rest();
            let found = ops.iter().find(|(s, _, _)| r.starts_with(s));
            let Some(&(s, prec, op)) = found else {
                return Ok(lhs);
            };
            if prec < min_prec || prec == 0 {
                return Ok(lhs);
            }
            if r.starts_with('/') || r.starts_with('%') {
                return Err(self.c.err("unsupported C operator"));
            }
            self.c.pos += s.len();
            let rhs = self.binary(prec + 1)?;
            lhs = Expr::bin(op, lhs, rhs);
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.c.ws();
        if self.c.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.c.eat("-") {
            let e = self.unary()?;
            return Ok(Expr::bin(BinOp::Sub, Expr::int(0), e));
        }
        if self.c.eat("*") {
            let addr = self.unary()?;
            let t = self.temp();
            self.code.push(Instr::Load {
                dst: Some(t),
                addr,
                annot: Annot::c(MemOrder::Na),
            });
            return Ok(Expr::Reg(t));
        }
        if self.c.eat("&") {
            let pos = self.c.pos;
            let name = self
                .c
                .ident()
                .ok_or_else(|| self.c.err("expected a name after '&'"))?;
            return match self.params.iter().find(|(p, _)| p == name) {
                Some(_) => Err(self
                    .c
                    .err_at(pos, format!("unsupported: address of parameter '{name}'"))),
                None => Err(self
                    .c
                    .err_at(pos, format!("unsupported: address of '{name}'"))),
            };
        }
        if self.c.eat("(") {
            let e = self.expr()?;
            self.c.expect(")", "to close '('")?;
            return Ok(e);
        }
        if let Some(v) = self.c.number() {
            return Ok(Expr::int(v));
        }
        let pos = self.c.pos;
        let Some(name) = self.c.ident() else {
            return Err(self
                .c
                .err(format!("expected an expression, found {}", self.c.found())));
        };
        self.c.ws();
        if self.c.rest().starts_with('(') {
            return self.call(name, pos);
        }
        if self.declared.iter().any(|d| d == name) {
            let r = reg_of(self.thread(), name);
            return Ok(Expr::Reg(r));
        }
        if let Some((_, l)) = self.params.iter().find(|(p, _)| p == name) {
            return Ok(Expr::Const(Value::Loc(*l)));
        }
        if name.starts_with("memory_order_") {
            return Err(self.c.err_at(pos, format!("unknown memory order '{name}'")));
        }
        if name.starts_with("__") || self.c.rest().starts_with('{') {
            return Err(self.c.err_at(
                pos,
                format!("unsupported C construct '{name}' (Linux-kernel and compiler primitives)"),
            ));
        }
        Err(self
            .c
            .err_at(pos, format!("undeclared identifier '{name}'")))
    }

    fn order_arg(&mut self) -> PResult<MemOrder> {
        self.c.ws();
        let pos = self.c.pos;
        let name = self
            .c
            .ident()
            .ok_or_else(|| self.c.err("expected a memory order"))?;
        mem_order(name).ok_or_else(|| {
            self.c.err_at(
                pos,
                format!("unknown memory order '{name}' (expected memory_order_relaxed, _consume, _acquire, _release, _acq_rel or _seq_cst)"),
            )
        })
    }

    fn comma(&mut self, f: &str) -> PResult<()> {
        self.c.expect(",", &format!("between the arguments of {f}"))
    }

    fn call(&mut self, name: &str, pos: usize) -> PResult<Expr> {
        self.c.expect("(", "")?;
        let (base, explicit) = match name.strip_suffix("_explicit") {
            Some(b) => (b, true),
            None => (name, false),
        };
        let result = match base {
            "atomic_load" => {
                let addr = self.expr()?;
                let mo = if explicit {
                    self.comma(name)?;
                    self.order_arg()?
                } else {
                    MemOrder::SeqCst
                };
                let t = self.temp();
                self.code.push(Instr::Load {
                    dst: Some(t),
                    addr,
                    annot: Annot::c(mo),
                });
                Expr::Reg(t)
            }
            "atomic_store" => {
                let addr = self.expr()?;
                self.comma(name)?;
                let value = self.expr()?;
                let mo = if explicit {
                    self.comma(name)?;
                    self.order_arg()?
                } else {
                    MemOrder::SeqCst
                };
                self.code.push(Instr::Store {
                    addr,
                    value,
                    annot: Annot::c(mo),
                });
                Expr::int(0)
            }
            "atomic_thread_fence" if !explicit => {
                let mo = self.order_arg()?;
                self.code.push(Instr::Fence(Fence::C(mo)));
                Expr::int(0)
            }
            "atomic_fetch_add" | "atomic_fetch_sub" | "atomic_fetch_or" | "atomic_fetch_and"
            | "atomic_fetch_xor" | "atomic_exchange" => {
                let op = match base {
                    "atomic_fetch_add" => RmwOp::Add,
                    "atomic_fetch_sub" => RmwOp::Sub,
                    "atomic_fetch_or" => RmwOp::Or,
                    "atomic_fetch_and" => RmwOp::And,
                    "atomic_fetch_xor" => RmwOp::Xor,
                    _ => RmwOp::Xchg,
                };
                let addr = self.expr()?;
                self.comma(name)?;
                let operand = self.expr()?;
                let mo = if explicit {
                    self.comma(name)?;
                    self.order_arg()?
                } else {
                    MemOrder::SeqCst
                };
                let t = self.temp();
                self.code.push(Instr::Rmw {
                    dst: Some(t),
                    addr,
                    op,
                    operand,
                    read: Annot::c(mo),
                    write: Annot::c(mo),
                    single: true,
                });
                Expr::Reg(t)
            }
            "atomic_compare_exchange_strong" | "atomic_compare_exchange_weak" => {
                let weak = base.ends_with("weak");
                let addr = self.expr()?;
                self.comma(name)?;
                let expected = self.expr()?;
                self.comma(name)?;
                let desired = self.expr()?;
                let (succ, fail) = if explicit {
                    self.comma(name)?;
                    let s = self.order_arg()?;
                    self.comma(name)?;
                    let f = self.order_arg()?;
                    (s, f)
                } else {
                    (MemOrder::SeqCst, MemOrder::SeqCst)
                };
                let t = self.temp();
                self.code.push(Instr::Cas {
                    result: Some(t),
                    addr,
                    expected: CasExpected::Mem(expected),
                    desired,
                    read: Annot::c(succ),
                    write: Annot::c(succ),
                    fail: Annot::c(fail),
                    weak,
                    single: true,
                });
                Expr::Reg(t)
            }
            _ => {
                return Err(self
                    .c
                    .err_at(pos, format!("unsupported C function '{name}'")));
            }
        };
        self.c
            .expect(")", &format!("to close the call of {name}"))?;
        Ok(result)
    }
}
