//! herd's C dialect: `P0 (atomic_int* x, …) { … }` threads with C11 atomics,
//! plain accesses, `if`/`else` and local `int` registers, lowered to
//! [`Instr`]s. Follows herd7's C semantics (herd/CSem.ml): read-modify-writes
//! are single events, and `atomic_compare_exchange_*` reads `*expected`
//! plainly, then either performs one RMW event (success) or an atomic read of
//! the object and a plain write of `*expected` (failure).
//!
//! The Linux-kernel dialect (a test using READ_ONCE, smp_*, spin_*, rcu_*,
//! xchg, atomic_t…) follows the kernel's tools/memory-model/linux-kernel.def:
//! each primitive becomes an access tagged with its [`LkAccess`] (ONCE,
//! ACQUIRE, RELEASE, MB, NORETURN, lock events) or a [`Fence::Linux`]
//! barrier; RMWs are read/write pairs linked by `rmw`, as herd7 builds them
//! for the LKMM; registers may be used undeclared, as herd7 allows. In
//! both dialects a register the initial state sets (`{ 0:r4=y; }`) is
//! declared by it, and `void *r0 = …;` declares a register. SRCU's
//! read-side lock and unlock are a read and a write of the srcu_struct
//! tagged [`LkAccess::SrcuLock`]/[`LkAccess::SrcuUnlock`], and
//! `synchronize_srcu(s)` is an [`Instr::SyncSrcu`] at `s`. The
//! `atomic_*_and_test` and `atomic_add_negative*` RMWs return their new
//! value compared with 0.

use crate::ast::*;
use crate::builder::{reg_of, Builder};
use crate::scan::{too_deep, Cursor, PResult, MAX_DEPTH};

/// herd's C dialect, for [`super::DIALECTS`]: a register is any name (a
/// thread's local), and threads are C functions.
pub(crate) const DIALECT: super::syntax::Dialect = super::syntax::Dialect {
    arch: Arch::C,
    canonical_reg: |name| Some(name.to_string()),
    threads: super::syntax::Threads::Own(parse_threads),
};

/// Integer type words accepted (and ignored) in declarations.
pub(crate) const TYPE_WORDS: &[&str] = &[
    "int",
    "long",
    "unsigned",
    "signed",
    "short",
    "char",
    "atomic_int",
    "atomic_long",
    "atomic_uint",
    "atomic_ulong",
    "atomic_t",
    "spinlock_t",
    "struct",
    "srcu_struct",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "intptr_t",
    "uintptr_t",
    "volatile",
    "const",
    "_Atomic",
    "atomic_intptr_t",
    "__int128_t",
    "__uint128_t",
    "__int128",
];

struct Body<'c, 'b> {
    c: &'c mut Cursor<'b>,
    b: &'c mut Builder,
    tid: usize,
    params: Vec<(String, LocId)>,
    declared: Vec<String>,
    code: Vec<Instr>,
    temps: usize,
    /// The file uses Linux-kernel primitives: registers may be used
    /// without a declaration, as herd7 accepts in that dialect.
    linux: bool,
    /// Nesting of statements, operands and operator chains being parsed
    /// (at most [`MAX_DEPTH`]).
    depth: usize,
}

/// Whether a test's text uses the Linux-kernel dialect (herd7 reads C tests
/// with linux-kernel.def's macros then).
fn looks_linux(src: &str) -> bool {
    src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| {
            matches!(
                w,
                "READ_ONCE" | "WRITE_ONCE" | "atomic_t" | "spinlock_t" | "synchronize_rcu"
            ) || [
                "smp_",
                "spin_",
                "rcu_",
                "srcu_",
                "synchronize_",
                "xchg",
                "cmpxchg",
            ]
            .iter()
            .any(|p| w.starts_with(p))
        })
}

/// The Linux access tag of an ordering suffix (`_relaxed`, `_acquire`,
/// `_release`, none), as linux-kernel.def maps them.
fn lk_suffix(name: &str) -> (&str, LkAccess) {
    for (suf, tag) in [
        ("_relaxed", LkAccess::Once),
        ("_acquire", LkAccess::Acquire),
        ("_release", LkAccess::Release),
    ] {
        if let Some(b) = name.strip_suffix(suf) {
            return (b, tag);
        }
    }
    (name, LkAccess::Mb)
}

fn lk(tag: LkAccess) -> Annot {
    Annot {
        lk: tag,
        ..Annot::default()
    }
}

fn lk_rmw(tag: LkAccess) -> Annot {
    Annot {
        lk: tag,
        lk_rmw: true,
        ..Annot::default()
    }
}

/// The operation of a Linux atomic_t RMW's stem (`add` in
/// `atomic_fetch_add_relaxed`).
fn lk_op(stem: &str) -> Option<(RmwOp, bool)> {
    // (op, whether the operand is implicit 1)
    Some(match stem {
        "add" => (RmwOp::Add, false),
        "sub" => (RmwOp::Sub, false),
        "and" => (RmwOp::And, false),
        "or" => (RmwOp::Or, false),
        "xor" => (RmwOp::Xor, false),
        "andnot" => (RmwOp::Clr, false),
        "inc" => (RmwOp::Add, true),
        "dec" => (RmwOp::Sub, true),
        _ => return None,
    })
}

fn rmw_expr(op: RmwOp, old: Expr, x: Expr) -> Expr {
    let bop = match op {
        RmwOp::Add => BinOp::Add,
        RmwOp::Sub => BinOp::Sub,
        RmwOp::And => BinOp::And,
        RmwOp::Or => BinOp::Or,
        RmwOp::Xor => BinOp::Xor,
        RmwOp::Clr => BinOp::AndNot,
        _ => return x,
    };
    Expr::bin(bop, old, x)
}

pub(crate) fn parse_threads(c: &mut Cursor<'_>, b: &mut Builder) -> PResult<usize> {
    let linux = looks_linux(c.src);
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
        // Registers the initial state sets are declared by it.
        let declared = b
            .init_regs
            .iter()
            .filter(|(t, _)| *t == tid)
            .map(|(_, name)| name.clone())
            .collect();
        let mut body = Body {
            c,
            b,
            tid,
            params,
            declared,
            code: Vec::new(),
            temps: 0,
            linux,
            depth: 0,
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
        // A new name each time (`%` starts no C identifier): added without
        // looking it up, and written without the formatting machinery.
        let mut name = String::with_capacity(8);
        name.push_str("%t");
        crate::ast::push_decimal(&mut name, self.temps as i64);
        let regs = &mut self.thread().regs;
        debug_assert!(!regs.contains(&name), "{name} made twice");
        regs.push(name);
        regs.len() - 1
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

    /// One level deeper; an error at the cursor past [`MAX_DEPTH`], so that
    /// a hostile test cannot overflow the stack (here or in whatever later
    /// walks the expression trees).
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.c.err(too_deep()));
        }
        Ok(())
    }

    fn stmt(&mut self) -> PResult<()> {
        self.enter()?;
        let r = self.stmt_inner();
        self.depth -= 1;
        r
    }

    fn stmt_inner(&mut self) -> PResult<()> {
        let c = &mut *self.c;
        c.ws();
        if c.eat(";") {
            return Ok(());
        }
        if c.eat("{") {
            return self.block_rest();
        }
        let pos = c.pos;
        // The statement's first word, read once (a chain of `eat_word`s
        // was 7 scans of every statement).
        let first = c.ident();
        if first == Some("if") {
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
        if let Some(kw @ ("while" | "for" | "do" | "goto" | "return" | "switch")) = first {
            return Err(self
                .c
                .err_at(pos, format!("unsupported C statement '{kw}'")));
        }
        self.c.pos = pos;
        // Declarations.
        let save = self.c.pos;
        let mut typed = false;
        loop {
            let wpos = self.c.pos;
            match self.c.ident() {
                Some(w) if TYPE_WORDS.contains(&w) => typed = true,
                // `void *r0 = rcu_dereference(*(void **)y);`: `void` only
                // as a pointer's base type, as in herd7's C grammar.
                Some("void") if !typed && self.c.rest().trim_start().starts_with('*') => {
                    typed = true
                }
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
                if self.linux
                    && !self.declared.iter().any(|d| d == name)
                    && !self.params.iter().any(|(p, _)| p == name)
                {
                    self.declared.push(name.to_string());
                }
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
        self.enter()?;
        // Each operator of a chain (a + b + c) deepens the tree by one: it
        // counts as a level for the operands parsed after it.
        let mut chain = 1;
        let r = self.chain(min_prec, &mut chain);
        self.depth -= chain;
        r
    }

    fn chain(&mut self, min_prec: u8, chain: &mut usize) -> PResult<Expr> {
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
            // Most operands end at `)`, `,` or `;`: no operator to look up.
            if !r
                .bytes()
                .next()
                .is_some_and(|b| b"|&=!<>^+-*/%".contains(&b))
            {
                return Ok(lhs);
            }
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
            self.enter()?;
            *chain += 1;
            let rhs = self.binary(prec + 1)?;
            lhs = Expr::bin(op, lhs, rhs);
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> PResult<Expr> {
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
            // A cast such as `(int**)` or `(void *)`: types are not
            // tracked, values are 64-bit, so a cast changes nothing. `void`
            // is a cast's type only as a pointer's base, as in herd7's C
            // grammar (CParser.mly: `typ_ptr: void STAR`).
            let save = self.c.pos;
            let mut typed = false;
            let mut void = false;
            let mut stars = 0;
            loop {
                self.c.ws();
                if (typed || void) && self.c.eat("*") {
                    stars += 1;
                    continue;
                }
                let wpos = self.c.pos;
                match self.c.ident() {
                    Some(w) if TYPE_WORDS.contains(&w) => typed = true,
                    Some("void") if !typed && !void => void = true,
                    _ => {
                        self.c.pos = wpos;
                        break;
                    }
                }
            }
            if (typed || (void && stars > 0)) && self.c.eat(")") {
                return self.unary();
            }
            self.c.pos = save;
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
        self.c
            .expect_with(",", || format!("between the arguments of {f}"))
    }

    /// An atomic_t read-modify-write of `addr` whose read goes to `t`, both
    /// accesses tagged `tag`.
    fn atomic_rmw(&mut self, t: usize, addr: Expr, op: RmwOp, operand: Expr, tag: LkAccess) {
        self.code.push(Instr::Rmw {
            dst: Some(t),
            addr,
            op,
            operand,
            read: lk_rmw(tag),
            write: lk_rmw(tag),
            single: false,
        });
    }

    /// An atomic_t operation's arguments: `(V, X)`, or `(X)` when the
    /// operand is an implicit 1 (`atomic_inc`, `atomic_dec_and_test`…).
    fn atomic_operands(&mut self, implicit: bool, name: &str) -> PResult<(Expr, Expr)> {
        let operand = if implicit {
            Expr::int(1)
        } else {
            let v = self.expr()?;
            self.comma(name)?;
            v
        };
        Ok((operand, self.expr()?))
    }

    fn call(&mut self, name: &str, pos: usize) -> PResult<Expr> {
        self.c.expect("(", "")?;
        if let Some(e) = if self.linux {
            self.linux_call(name, pos)?
        } else {
            None
        } {
            self.c
                .expect_with(")", || format!("to close the call of {name}"))?;
            return Ok(e);
        }
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
            .expect_with(")", || format!("to close the call of {name}"))?;
        Ok(result)
    }
}

impl Body<'_, '_> {
    /// `*e` as the argument of READ_ONCE and friends: the address `e`.
    fn lvalue(&mut self, f: &str) -> PResult<Expr> {
        self.c.ws();
        if !self.c.eat("*") {
            return Err(self.c.err(format!(
                "expected '*pointer' as the first argument of {f} (linux-kernel.def takes an lvalue)"
            )));
        }
        self.unary()
    }

    fn load(&mut self, addr: Expr, annot: Annot) -> Expr {
        let t = self.temp();
        self.code.push(Instr::Load {
            dst: Some(t),
            addr,
            annot,
        });
        Expr::Reg(t)
    }

    fn fence(&mut self, f: LkFence) -> Expr {
        self.code.push(Instr::Fence(Fence::Linux(f)));
        Expr::int(0)
    }

    /// The Linux-kernel primitives of linux-kernel.def, lowered to
    /// instructions with [`LkAccess`] tags; `None` when `name` is not one.
    fn linux_call(&mut self, name: &str, pos: usize) -> PResult<Option<Expr>> {
        let fence = match name {
            "smp_mb" => Some(LkFence::Mb),
            "smp_rmb" => Some(LkFence::Rmb),
            "smp_wmb" => Some(LkFence::Wmb),
            "barrier" => Some(LkFence::Barrier),
            "smp_mb__before_atomic" => Some(LkFence::BeforeAtomic),
            "smp_mb__after_atomic" => Some(LkFence::AfterAtomic),
            "smp_mb__after_spinlock" => Some(LkFence::AfterSpinlock),
            "smp_mb__after_unlock_lock" => Some(LkFence::AfterUnlockLock),
            "smp_mb__after_srcu_read_unlock" => Some(LkFence::AfterSrcuReadUnlock),
            "rcu_read_lock" => Some(LkFence::RcuLock),
            "rcu_read_unlock" => Some(LkFence::RcuUnlock),
            "synchronize_rcu" | "synchronize_rcu_expedited" => Some(LkFence::SyncRcu),
            _ => None,
        };
        if let Some(f) = fence {
            return Ok(Some(self.fence(f)));
        }
        let e = match name {
            "READ_ONCE" | "rcu_dereference" => {
                let a = self.lvalue(name)?;
                self.load(a, lk(LkAccess::Once))
            }
            "WRITE_ONCE" | "rcu_assign_pointer" | "smp_store_mb" => {
                let addr = self.lvalue(name)?;
                self.comma(name)?;
                let value = self.expr()?;
                let tag = if name == "rcu_assign_pointer" {
                    LkAccess::Release
                } else {
                    LkAccess::Once
                };
                self.code.push(Instr::Store {
                    addr,
                    value,
                    annot: lk(tag),
                });
                if name == "smp_store_mb" {
                    self.fence(LkFence::Mb);
                }
                Expr::int(0)
            }
            "smp_load_acquire" | "atomic_read_acquire" | "atomic_read" => {
                let a = self.expr()?;
                let tag = if name == "atomic_read" {
                    LkAccess::Once
                } else {
                    LkAccess::Acquire
                };
                self.load(a, lk(tag))
            }
            "smp_store_release" | "atomic_set_release" | "atomic_set" => {
                let addr = self.expr()?;
                self.comma(name)?;
                let value = self.expr()?;
                let tag = if name == "atomic_set" {
                    LkAccess::Once
                } else {
                    LkAccess::Release
                };
                self.code.push(Instr::Store {
                    addr,
                    value,
                    annot: lk(tag),
                });
                Expr::int(0)
            }
            "spin_lock" => {
                let addr = self.expr()?;
                // A lock acquisition reads the lock free (0) and takes it:
                // the interpreter keeps only runs whose LKR reads 0, which
                // is lock.cat's rf of LKR from the co-previous IW or UL.
                self.code.push(Instr::Rmw {
                    dst: None,
                    addr,
                    op: RmwOp::Xchg,
                    operand: Expr::int(1),
                    read: lk(LkAccess::LockRead),
                    write: lk(LkAccess::LockWrite),
                    single: false,
                });
                Expr::int(0)
            }
            "spin_unlock" => {
                let addr = self.expr()?;
                self.code.push(Instr::Store {
                    addr,
                    value: Expr::int(0),
                    annot: lk(LkAccess::Unlock),
                });
                Expr::int(0)
            }
            "spin_trylock" => {
                let addr = self.expr()?;
                let t = self.temp();
                self.code.push(Instr::Cas {
                    result: Some(t),
                    addr,
                    expected: CasExpected::Value(Expr::int(0)),
                    desired: Expr::int(1),
                    read: lk(LkAccess::LockRead),
                    write: lk(LkAccess::LockWrite),
                    fail: lk(LkAccess::LockFail),
                    weak: false,
                    single: false,
                });
                Expr::Reg(t)
            }
            "spin_is_locked" => {
                let addr = self.expr()?;
                let v = self.load(addr, lk(LkAccess::IsLocked));
                Expr::bin(BinOp::Ne, v, Expr::int(0))
            }
            // SRCU, as linux-kernel.def has it: the read-side lock is a read
            // of the srcu_struct (its value is the index), the unlock a
            // write of the index back, and the grace period an event of
            // its own at the srcu_struct's location.
            "srcu_read_lock" | "srcu_down_read" => {
                let addr = self.expr()?;
                self.load(addr, lk(LkAccess::SrcuLock))
            }
            "srcu_read_unlock" | "srcu_up_read" => {
                let addr = self.expr()?;
                self.comma(name)?;
                let value = self.expr()?;
                self.code.push(Instr::Store {
                    addr,
                    value,
                    annot: lk(LkAccess::SrcuUnlock),
                });
                Expr::int(0)
            }
            "synchronize_srcu" | "synchronize_srcu_expedited" => {
                let addr = self.expr()?;
                self.code.push(Instr::SyncSrcu { addr });
                Expr::int(0)
            }
            _ if name.starts_with("srcu_") || name.starts_with("synchronize_srcu") => {
                return Err(self.c.err_at(
                    pos,
                    format!("unsupported Linux primitive '{name}' (the SRCU primitives are srcu_read_lock, srcu_read_unlock, srcu_down_read, srcu_up_read, synchronize_srcu and synchronize_srcu_expedited)"),
                ));
            }
            _ => return self.linux_rmw(name, pos),
        };
        Ok(Some(e))
    }

    /// xchg, cmpxchg and the atomic_t read-modify-writes.
    fn linux_rmw(&mut self, name: &str, pos: usize) -> PResult<Option<Expr>> {
        let (base, tag) = lk_suffix(name);
        let stem = base.strip_prefix("atomic_").unwrap_or(base);
        if stem == "xchg" {
            let addr = self.expr()?;
            self.comma(name)?;
            let operand = self.expr()?;
            let t = self.temp();
            self.code.push(Instr::Rmw {
                dst: Some(t),
                addr,
                op: RmwOp::Xchg,
                operand,
                read: lk_rmw(tag),
                write: lk_rmw(tag),
                single: false,
            });
            return Ok(Some(Expr::Reg(t)));
        }
        if stem == "cmpxchg" {
            let addr = self.expr()?;
            self.comma(name)?;
            let old = self.expr()?;
            self.comma(name)?;
            let desired = self.expr()?;
            // The expected value goes to a register that receives the old
            // value: cmpxchg returns what it read, success or not.
            let t = self.temp();
            self.code.push(Instr::Assign { dst: t, expr: old });
            self.code.push(Instr::Cas {
                result: None,
                addr,
                expected: CasExpected::Reg(t),
                desired,
                read: lk_rmw(tag),
                write: lk_rmw(tag),
                // A failed cmpxchg's read keeps the operation's tag, as
                // herd7's lkmmv2 semantics gives it (linux-kernel.def); it
                // orders nothing all the same, because linux-kernel.bell's
                // Acquire, Release and Mb exclude FailedRMW (the built-in
                // lkmm does too), but a user's model may read the tag.
                fail: lk_rmw(tag),
                weak: false,
                single: false,
            });
            return Ok(Some(Expr::Reg(t)));
        }
        if !base.starts_with("atomic_") {
            return Ok(None);
        }
        // atomic_{sub,dec,inc}_and_test and atomic_add_negative: a returning
        // RMW whose new value is compared with 0 (linux-kernel.def:
        // `__atomic_op_return{MB}(X,-,V) == 0`, `__atomic_op_return{..}(X,+,V) < 0`).
        let tested = match base {
            "atomic_sub_and_test" => Some((RmwOp::Sub, false, BinOp::Eq)),
            "atomic_dec_and_test" => Some((RmwOp::Sub, true, BinOp::Eq)),
            "atomic_inc_and_test" => Some((RmwOp::Add, true, BinOp::Eq)),
            "atomic_add_negative" => Some((RmwOp::Add, false, BinOp::Lt)),
            _ => None,
        };
        if let Some((op, implicit, cmp)) = tested {
            if cmp == BinOp::Eq && tag != LkAccess::Mb {
                return Err(self.c.err_at(
                    pos,
                    format!("unsupported Linux primitive '{name}': linux-kernel.def has {base} only fully ordered (no _relaxed, _acquire or _release)"),
                ));
            }
            let (operand, addr) = self.atomic_operands(implicit, name)?;
            let t = self.temp();
            self.atomic_rmw(t, addr, op, operand.clone(), tag);
            let new = rmw_expr(op, Expr::Reg(t), operand);
            return Ok(Some(Expr::bin(cmp, new, Expr::int(0))));
        }
        if base == "atomic_add_unless" || base == "atomic_inc_not_zero" {
            if tag != LkAccess::Mb {
                return Err(self
                    .c
                    .err_at(pos, format!("unsupported Linux primitive '{name}'")));
            }
            let addr = self.expr()?;
            let operand = if base == "atomic_add_unless" {
                self.comma(name)?;
                self.expr()?
            } else {
                Expr::int(1)
            };
            let unless = if base == "atomic_add_unless" {
                self.comma(name)?;
                self.c.ws();
                let upos = self.c.pos;
                match self.expr()? {
                    Expr::Const(Value::Int(u)) => u,
                    _ => {
                        return Err(self.c.err_at(
                            upos,
                            format!("the last argument of {name} must be an integer constant"),
                        ))
                    }
                }
            } else {
                0
            };
            let t = self.temp();
            let mut read = lk_rmw(LkAccess::Mb);
            read.unless = Some(unless);
            self.code.push(Instr::Rmw {
                dst: Some(t),
                addr,
                op: RmwOp::Add,
                operand,
                read,
                write: lk_rmw(LkAccess::Mb),
                single: false,
            });
            return Ok(Some(Expr::bin(BinOp::Ne, Expr::Reg(t), Expr::int(unless))));
        }
        // atomic_OP(v, x), atomic_OP_return(v, x), atomic_fetch_OP(v, x)
        let mut stem = stem;
        let fetch = match stem.strip_prefix("fetch_") {
            Some(s) => {
                stem = s;
                true
            }
            None => false,
        };
        let ret = match stem.strip_suffix("_return") {
            Some(s) => {
                stem = s;
                true
            }
            None => false,
        };
        let Some((op, implicit)) = lk_op(stem) else {
            return Err(self
                .c
                .err_at(pos, format!("unsupported Linux primitive '{name}'")));
        };
        if !fetch && !ret && name != base {
            return Err(self.c.err_at(
                pos,
                format!("unsupported Linux primitive '{name}' (no ordering variants of non-returning atomics)"),
            ));
        }
        if ret && matches!(op, RmwOp::And | RmwOp::Or | RmwOp::Xor | RmwOp::Clr) {
            return Err(self
                .c
                .err_at(pos, format!("unsupported Linux primitive '{name}'")));
        }
        let (operand, addr) = self.atomic_operands(implicit, name)?;
        let t = self.temp();
        let tag = if fetch || ret {
            tag
        } else {
            LkAccess::Noreturn
        };
        self.atomic_rmw(t, addr, op, operand.clone(), tag);
        Ok(Some(if ret {
            rmw_expr(op, Expr::Reg(t), operand)
        } else if fetch {
            Expr::Reg(t)
        } else {
            Expr::int(0)
        }))
    }
}
