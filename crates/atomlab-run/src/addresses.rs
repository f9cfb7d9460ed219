//! Which memory accesses a thread may run: every access must reach one of
//! the instance's locations, so its address must be known at that point of
//! the code to be a location's address. Both weakly ordered backends
//! (AArch64, RISC-V) check this with the one dataflow here before any code
//! runs.

use atomlab_litmus::{BinOp, CasExpected, Expr, Instr, Thread, Value};

use crate::Unencodable;

/// What a register is known to hold at a point of the code, for the
/// address check: a location's address, zero (for address dependencies
/// such as `EOR W5,W5,W5`), or anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    Zero,
    Loc(usize),
    Any,
}

fn join(a: Known, b: Known) -> Known {
    if a == b {
        a
    } else {
        Known::Any
    }
}

fn value_of(e: &Expr, st: &[Known]) -> Known {
    let reg = |r: usize| st.get(r).copied().unwrap_or(Known::Any);
    match e {
        Expr::Const(Value::Int(0)) => Known::Zero,
        Expr::Const(Value::Loc(l)) => Known::Loc(*l),
        Expr::Const(_) => Known::Any,
        Expr::Reg(r) => reg(*r),
        Expr::Not(_) => Known::Any,
        Expr::Bin(op, a, b) => {
            let (va, vb) = (value_of(a, st), value_of(b, st));
            match op {
                // x ^ x and x - x are zero whatever x is.
                BinOp::Xor | BinOp::Sub if a == b => Known::Zero,
                BinOp::And | BinOp::Mul if va == Known::Zero || vb == Known::Zero => Known::Zero,
                BinOp::AndNot | BinOp::Shl | BinOp::Shr if va == Known::Zero => Known::Zero,
                BinOp::Add | BinOp::Or | BinOp::Xor | BinOp::Sub => match (va, vb) {
                    (Known::Zero, Known::Zero) => Known::Zero,
                    (Known::Loc(l), Known::Zero) => Known::Loc(l),
                    (Known::Zero, Known::Loc(l)) if *op != BinOp::Sub => Known::Loc(l),
                    _ => Known::Any,
                },
                _ => Known::Any,
            }
        }
    }
}

/// The memory addresses an instruction uses.
pub(crate) fn addresses(i: &Instr) -> Vec<&Expr> {
    match i {
        Instr::Load { addr, .. }
        | Instr::Store { addr, .. }
        | Instr::StoreExclusive { addr, .. }
        | Instr::Rmw { addr, .. } => vec![addr],
        Instr::Cas { addr, expected, .. } => {
            let mut v = vec![addr];
            if let CasExpected::Mem(e) = expected {
                v.push(e);
            }
            v
        }
        _ => Vec::new(),
    }
}

/// Every memory access must reach one of the instance's locations: its
/// address must be known, at that point of the code, to be a location's
/// address (a location, a register holding one, or one plus a register
/// known to be zero: an address dependency). A forward dataflow over the
/// thread's code (branches included) finds what each register holds;
/// anything else could point outside the instance and is refused before
/// any code runs.
pub(crate) fn check_addresses(th: &Thread) -> Result<(), Unencodable> {
    let n = th.code.len();
    // What the harness loads into each register (Thread::init_value).
    let init: Vec<Known> = (0..th.regs.len())
        .map(|r| match th.init_value(r) {
            Value::Loc(l) => Known::Loc(l),
            Value::Int(0) => Known::Zero,
            Value::Int(_) | Value::Sym(_) => Known::Any,
        })
        .collect();
    let mut before: Vec<Option<Vec<Known>>> = vec![None; n + 1];
    before[0] = Some(init);
    let mut work = vec![0usize];
    while let Some(i) = work.pop() {
        if i >= n {
            continue;
        }
        let Some(mut st) = before[i].clone() else {
            continue;
        };
        let set = |st: &mut Vec<Known>, r: Option<usize>, k: Known| {
            if let Some(x) = r.and_then(|r| st.get_mut(r)) {
                *x = k;
            }
        };
        let mut succ = vec![i + 1];
        match &th.code[i] {
            Instr::Load { dst, .. } | Instr::Rmw { dst, .. } => set(&mut st, *dst, Known::Any),
            Instr::StoreExclusive { status, .. } => set(&mut st, *status, Known::Any),
            Instr::Cas {
                result, expected, ..
            } => {
                set(&mut st, *result, Known::Any);
                if let CasExpected::Reg(r) = expected {
                    set(&mut st, Some(*r), Known::Any);
                }
            }
            Instr::Assign { dst, expr } => {
                let k = value_of(expr, &st);
                set(&mut st, Some(*dst), k);
            }
            Instr::Select { dst, a, b, .. } => {
                let k = join(value_of(a, &st), value_of(b, &st));
                set(&mut st, Some(*dst), k);
            }
            Instr::Branch { cond, target } => {
                if cond.is_none() {
                    succ.clear();
                }
                succ.push(*target);
            }
            Instr::Store { .. } | Instr::Fence(_) | Instr::SyncSrcu { .. } => {}
        }
        for s in succ {
            if s > n {
                continue;
            }
            let merged = match &before[s] {
                None => st.clone(),
                Some(old) => old.iter().zip(&st).map(|(a, b)| join(*a, *b)).collect(),
            };
            if before[s].as_ref() != Some(&merged) {
                before[s] = Some(merged);
                work.push(s);
            }
        }
    }
    let reaches = |index: usize, a: &Expr| match &before[index] {
        Some(st) => matches!(value_of(a, st), Known::Loc(_)),
        // Code no path reaches never runs.
        None => true,
    };
    refuse_unless(
        th,
        reaches,
        "a computed address",
        "which is not known to hold a location's address there (only [loc], registers holding a location, and a location plus a register known to be zero are run)",
    )
}

/// Refuses the first memory access of `th` whose address (at instruction
/// `index`) `reaches(index, address)` does not know to reach one of the
/// instance's locations: the error names the register, or `computed` for
/// any other address, and `why` says what is not known of it.
pub(crate) fn refuse_unless(
    th: &Thread,
    reaches: impl Fn(usize, &Expr) -> bool,
    computed: &str,
    why: &str,
) -> Result<(), Unencodable> {
    for (index, i) in th.code.iter().enumerate() {
        let Some(a) = addresses(i).into_iter().find(|a| !reaches(index, a)) else {
            continue;
        };
        let name = match a {
            Expr::Reg(r) => th.regs.get(*r).cloned().unwrap_or_default(),
            _ => computed.into(),
        };
        return Err(Unencodable {
            thread: th.id,
            index,
            what: format!("a memory access through {name}, {why}"),
        });
    }
    Ok(())
}
