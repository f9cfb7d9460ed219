//! What a thread's code mentions: its test registers and locations. Both
//! code generators allocate machine registers from this (location
//! addresses first, then test registers), so it is one function for every
//! backend.

use atomlab_litmus::{CasExpected, Expr, Instr, Thread, Value};

fn walk(e: &Expr, regs: &mut Vec<usize>, locs: &mut Vec<usize>) {
    match e {
        Expr::Const(Value::Loc(l)) => locs.push(*l),
        Expr::Const(_) => {}
        Expr::Reg(r) => regs.push(*r),
        Expr::Not(a) => walk(a, regs, locs),
        Expr::Bin(_, a, b) => {
            walk(a, regs, locs);
            walk(b, regs, locs);
        }
    }
}

/// The test registers and locations the code mentions, sorted, each once.
pub(crate) fn used(th: &Thread) -> (Vec<usize>, Vec<usize>) {
    let (mut regs, mut locs) = (Vec::new(), Vec::new());
    for i in &th.code {
        match i {
            Instr::Load { dst, addr, .. } => {
                regs.extend(dst);
                walk(addr, &mut regs, &mut locs);
            }
            Instr::Store { addr, value, .. } => {
                walk(addr, &mut regs, &mut locs);
                walk(value, &mut regs, &mut locs);
            }
            Instr::StoreExclusive {
                status,
                addr,
                value,
                ..
            } => {
                regs.extend(status);
                walk(addr, &mut regs, &mut locs);
                walk(value, &mut regs, &mut locs);
            }
            Instr::Rmw {
                dst, addr, operand, ..
            } => {
                regs.extend(dst);
                walk(addr, &mut regs, &mut locs);
                walk(operand, &mut regs, &mut locs);
            }
            Instr::Cas {
                result,
                addr,
                expected,
                desired,
                ..
            } => {
                regs.extend(result);
                walk(addr, &mut regs, &mut locs);
                walk(desired, &mut regs, &mut locs);
                match expected {
                    CasExpected::Reg(r) => regs.push(*r),
                    CasExpected::Value(e) | CasExpected::Mem(e) => walk(e, &mut regs, &mut locs),
                }
            }
            Instr::Fence(_) => {}
            Instr::SyncSrcu { addr } => walk(addr, &mut regs, &mut locs),
            Instr::Assign { dst, expr } => {
                regs.push(*dst);
                walk(expr, &mut regs, &mut locs);
            }
            Instr::Select { dst, cond, a, b } => {
                regs.push(*dst);
                walk(cond, &mut regs, &mut locs);
                walk(a, &mut regs, &mut locs);
                walk(b, &mut regs, &mut locs);
            }
            Instr::Branch { cond, .. } => {
                if let Some(c) = cond {
                    walk(c, &mut regs, &mut locs);
                }
            }
        }
    }
    regs.sort_unstable();
    regs.dedup();
    locs.sort_unstable();
    locs.dedup();
    (regs, locs)
}
