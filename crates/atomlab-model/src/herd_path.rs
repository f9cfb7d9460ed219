//! herd7's numbering of a thread's paths through its `if`s, which names
//! the values a thin-air cycle leaves unsolved ([`crate::thin`]): the
//! interpreter follows a run's path ([`HerdPath`]) as herd7 numbers it.

use std::collections::HashMap;

use atomlab_litmus::{BinOp, Expr, Instr, Thread, Value};

/// One `if` of a thread's code, as herd7 builds it.
#[derive(Debug, Clone)]
struct IfNum {
    /// Its join point (the first instruction after it).
    join: usize,
    /// Variables of the condition, of the then- and else-blocks (each
    /// block with its own continuation copies).
    c_cond: u32,
    c_then: u32,
    c_else: u32,
    /// Event structures the else-block yields (1 when there is none).
    n_else: u64,

    /// Variables and structures of the rest of the enclosing block.
    c_rest: u32,
    n_rest: u64,
}

/// herd7's fresh-variable count over one thread's code: its total, and
/// each `if`'s layout, keyed by the index of its conditional branch.
#[derive(Debug, Clone)]
pub(crate) struct Numbering {
    /// Variables the thread draws in all.
    pub(crate) total: u32,
    ifs: HashMap<usize, IfNum>,
    /// The registers the lowering adds (names starting with `%`): C has
    /// no read of them, so herd7 draws no variable for one.
    hidden: Vec<bool>,
}

/// Variables herd7 draws evaluating `e` (an operation on a value it does
/// not know yet draws one; constants none, a location's address one: the
/// parameter register that holds it).
fn expr_count(e: &Expr, hidden: &[bool]) -> u32 {
    match e {
        Expr::Const(Value::Loc(_)) => 1,
        Expr::Const(_) => 0,
        Expr::Reg(r) => u32::from(!hidden.get(*r).copied().unwrap_or(false)),
        Expr::Not(a) => expr_count(a, hidden) + u32::from(!is_const(a)),
        Expr::Bin(_, a, b) => {
            expr_count(a, hidden) + expr_count(b, hidden) + u32::from(!(is_const(a) && is_const(b)))
        }
    }
}

fn is_const(e: &Expr) -> bool {
    matches!(e, Expr::Const(Value::Int(_)))
}

fn is_cmp(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Bin(
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge,
            _,
            _
        )
    )
}

/// The condition of a lowered `if` (`Branch` on `!c` to the else-block):
/// `c` itself, or `None` when the branch is not one.
fn if_cond(instr: &Instr) -> Option<&Expr> {
    match instr {
        Instr::Branch {
            cond: Some(Expr::Not(c)),
            ..
        } => Some(c),
        _ => None,
    }
}

/// Variables of an `if`'s condition: `c`, or `c != 0` when `c` is no
/// comparison (CSem.ml `build_cond`).
fn cond_count(c: &Expr, hidden: &[bool]) -> u32 {
    expr_count(c, hidden) + u32::from(!is_cmp(c))
}

/// Variables of one straight-line instruction, `None` for an instruction
/// the numbering does not follow.
fn instr_count(instr: &Instr, hidden: &[bool]) -> Option<u32> {
    match instr {
        Instr::Load { addr, .. } => Some(expr_count(addr, hidden) + 1),
        Instr::Store { addr, value, .. } => {
            Some(expr_count(addr, hidden) + expr_count(value, hidden))
        }
        Instr::Assign { expr, .. } => Some(expr_count(expr, hidden)),
        Instr::Fence(_) => Some(0),
        _ => None,
    }
}

impl Numbering {
    /// The numbering of `code`, lowered C with structured `if`s; `None`
    /// when the code has anything else (loops, RMWs, locks, a constant
    /// condition herd7 decides while building).
    pub(crate) fn of(t: &Thread) -> Option<Numbering> {
        let hidden: Vec<bool> = t.regs.iter().map(|r| r.starts_with('%')).collect();
        let mut ifs = HashMap::new();
        let (total, _) = block(&t.code, 0, t.code.len(), &hidden, &mut ifs)?;
        Some(Numbering { total, ifs, hidden })
    }
}

/// Variables and event structures of `code[lo..hi]`, recording each `if`.
fn block(
    code: &[Instr],
    lo: usize,
    hi: usize,
    hidden: &[bool],
    ifs: &mut HashMap<usize, IfNum>,
) -> Option<(u32, u64)> {
    // The block's statements: (variables, structures, the if's pc).
    let mut items: Vec<(u32, u64, Option<usize>)> = Vec::new();
    let mut i = lo;
    while i < hi {
        let instr = &code[i];
        if let Instr::Branch { cond, target } = instr {
            let c = if_cond(instr)?;
            let _ = cond;
            if is_const(c) || *target <= i || *target > hi {
                return None;
            }
            let target = *target;
            // An else: the then-block ends with a jump past it.
            let (then_hi, else_range) = match code.get(target - 1) {
                Some(Instr::Branch {
                    cond: None,
                    target: end,
                }) if target - 1 > i && *end >= target && *end <= hi => {
                    (target - 1, Some((target, *end)))
                }
                _ => (target, None),
            };
            let (c_then, n_then) = block(code, i + 1, then_hi, hidden, ifs)?;
            let (c_else, n_else, join) = match else_range {
                Some((a, b)) => {
                    let (c, n) = block(code, a, b, hidden, ifs)?;
                    (c, n, b)
                }
                None => (0, 1, target),
            };
            let c_cond = cond_count(c, hidden);
            ifs.insert(
                i,
                IfNum {
                    join,
                    c_cond,
                    c_then,
                    c_else,
                    n_else,
                    c_rest: 0,
                    n_rest: 1,
                },
            );
            items.push((
                c_cond.checked_add(c_then)?.checked_add(c_else)?,
                n_then.checked_add(n_else)?,
                Some(i),
            ));
            i = join;
        } else {
            items.push((instr_count(instr, hidden)?, 1, None));
            i += 1;
        }
    }
    // From the end: c([s; rest]) = c(s) + n(s) c(rest), n = n(s) n(rest).
    let (mut c, mut n) = (0u32, 1u64);
    for &(ci, ni, at) in items.iter().rev() {
        if let Some(pc) = at {
            let f = ifs.get_mut(&pc)?;
            f.c_rest = c;
            f.n_rest = n;
        }
        c = ci.checked_add(u32::try_from(ni).ok()?.checked_mul(c)?)?;
        n = ni.checked_mul(n)?;
    }
    Some((c, n))
}

/// An `if` the path is inside.
#[derive(Debug, Clone)]
struct Frame {
    at: usize,
    /// Variables drawn before its condition.
    start: u32,
    took_then: bool,
    /// The path's event structure within the branch it took.
    acc: u64,
}

/// herd7's variable numbers along one path of a thread.
#[derive(Debug, Clone)]
pub(crate) struct HerdPath {
    num: std::rc::Rc<Numbering>,
    /// Variables drawn so far (the last one's number).
    pub(crate) hv: u32,
    frames: Vec<Frame>,
    /// Per register: the variable its last write stored (0: none, or a
    /// value known while building).
    reg_var: Vec<u32>,
    /// The register pass's equations along the path.
    unions: Vec<(u32, u32)>,
}

impl HerdPath {
    /// The thread's count of variables in all.
    pub(crate) fn total(&self) -> u32 {
        self.num.total
    }

    pub(crate) fn new(num: Numbering, regs: usize) -> HerdPath {
        HerdPath {
            num: std::rc::Rc::new(num),
            hv: 0,
            frames: Vec::new(),
            reg_var: vec![0; regs],
            unions: Vec::new(),
        }
    }

    /// Before the instruction at `pc`: the `if`s joining there end, and the
    /// path goes on in the copy of the code after each that its branch's
    /// event structure gets.
    pub(crate) fn at(&mut self, pc: usize) {
        while let Some(f) = self.frames.last() {
            let Some(info) = self.num.ifs.get(&f.at) else {
                break;
            };
            if info.join != pc {
                break;
            }
            // The code after the `if` is built for the else-block's event
            // structures first, then the then-block's: herd7 7.58 numbers
            // the else path's copy first whatever the blocks' lengths
            // (THIN+lb-after-if and its if/else variants, checked with
            // then-blocks shorter than, as long as and longer than the
            // else-block).
            let k = if f.took_then {
                info.n_else + f.acc
            } else {
                f.acc
            };
            self.hv = f.start
                + info.c_cond
                + info.c_then
                + info.c_else
                + (k as u32).saturating_mul(info.c_rest);
            let add = k.saturating_mul(info.n_rest);
            self.frames.pop();
            if let Some(p) = self.frames.last_mut() {
                p.acc += add;
            }
        }
    }

    /// Draws the variables of evaluating `e`, and returns the variable of
    /// its value when it is a register's (0 otherwise). Reading a register
    /// draws a variable that herd7's register pass equates with the one its
    /// last write stored (`unions`).
    pub(crate) fn walk(&mut self, e: &Expr) -> u32 {
        match e {
            Expr::Const(Value::Loc(_)) => {
                self.hv += 1;
                0
            }
            Expr::Const(_) => 0,
            Expr::Reg(r) if self.num.hidden.get(*r).copied().unwrap_or(false) => {
                self.reg_var.get(*r).copied().unwrap_or(0)
            }
            Expr::Reg(r) => {
                self.hv += 1;
                let stored = self.reg_var.get(*r).copied().unwrap_or(0);
                if stored != 0 {
                    self.unions.push((self.hv, stored));
                }
                self.hv
            }
            Expr::Not(a) => {
                self.walk(a);
                if !is_const(a) {
                    self.hv += 1;
                }
                0
            }
            Expr::Bin(_, a, b) => {
                self.walk(a);
                self.walk(b);
                if !(is_const(a) && is_const(b)) {
                    self.hv += 1;
                }
                0
            }
        }
    }

    /// A memory read: its variable, which its destination register holds.
    pub(crate) fn load(&mut self, dst: Option<usize>) -> u32 {
        self.hv += 1;
        if let Some(d) = dst {
            self.set_reg(d, self.hv);
        }
        self.hv
    }

    /// Register `r` now holds the variable `v` (0: a value herd7 knows).
    pub(crate) fn set_reg(&mut self, r: usize, v: u32) {
        if let Some(x) = self.reg_var.get_mut(r) {
            *x = v;
        }
    }

    /// The register pass's equations so far: (the variable of a register
    /// read, the variable the register's last write stored).
    pub(crate) fn unions(&self) -> &[(u32, u32)] {
        &self.unions
    }

    /// At the conditional branch `pc`: the condition's variables; then
    /// whether the path takes the then-block (`then`).
    pub(crate) fn branch(&mut self, pc: usize, instr: &Instr, then: bool) {
        let (Some(info), Some(c)) = (self.num.ifs.get(&pc).cloned(), if_cond(instr)) else {
            return;
        };
        let start = self.hv;
        self.walk(c);
        if !is_cmp(c) {
            self.hv += 1;
        }
        if !then {
            self.hv += info.c_then;
        }
        self.frames.push(Frame {
            at: pc,
            start,
            took_then: then,
            acc: 0,
        });
    }
}
