//! A thread that loops forever is stopped by its loop budget: the code
//! returns, the instance is counted apart, and the run completes. The test
//! is built in the host's ISA (X86 on x86-64, AArch64 on aarch64, where
//! the budget is a register decremented by `SUBS`/`B.EQ`, RISCV on
//! riscv64, by `ADDI`/`BEQ`).

use atomlab_litmus::{Arch, BinOp, CmpOp, Expr, Instr, Prop, StateVar, Test, Value};
use atomlab_run::{prepare, run, RunOptions};

mod support;
use support::loop_test;

/// The host's assembly dialect, if it has a backend.
fn host_arch() -> Option<Arch> {
    match std::env::consts::ARCH {
        "x86_64" => Some(Arch::X86),
        "aarch64" => Some(Arch::AArch64),
        "riscv64" => Some(Arch::RiscV),
        other => {
            eprintln!("skipped: no backend for {other}");
            None
        }
    }
}

fn spinning_test() -> Test {
    // P0: r0 := r0 + 1; goto 0   (never ends)
    // P1: [x] := 1
    let p0 = vec![
        Instr::Assign {
            dst: 0,
            expr: Expr::bin(BinOp::Add, Expr::Reg(0), Expr::int(1)),
        },
        Instr::Branch {
            cond: None,
            target: 0,
        },
    ];
    loop_test(host_arch().unwrap_or(Arch::X86), "loop.litmus", p0)
}

#[test]
fn an_endless_loop_is_cut_by_the_budget() {
    if host_arch().is_none() {
        return;
    }
    let program = prepare(&spinning_test()).unwrap();
    let o = RunOptions {
        size: 50,
        runs: 4,
        loop_budget: 100,
        ..RunOptions::default()
    };
    let r = run(&program, &o).unwrap();
    assert!(!r.timed_out);
    assert_eq!(r.budget_exhausted, 200, "every instance hits the budget");
    assert_eq!(r.instances(), 0, "no cut instance enters the histogram");
}

#[test]
fn a_bounded_conditional_loop_finishes_within_the_budget() {
    if host_arch().is_none() {
        return;
    }
    // P0: r0 := r0 + 1; if r0 < 10 goto 0
    let mut t = spinning_test();
    t.threads[0].code[1] = Instr::Branch {
        cond: Some(Expr::bin(BinOp::Lt, Expr::Reg(0), Expr::int(10))),
        target: 0,
    };
    t.condition.prop = Prop::Atom(
        StateVar::Reg { thread: 0, reg: 0 },
        CmpOp::Eq,
        Value::Int(10),
    );
    let program = prepare(&t).unwrap();
    let o = RunOptions {
        size: 50,
        runs: 4,
        loop_budget: 100,
        ..RunOptions::default()
    };
    let r = run(&program, &o).unwrap();
    assert_eq!(r.budget_exhausted, 0);
    assert_eq!(
        r.positive, 200,
        "r0 ends at 10 in every instance: {:?}",
        r.histogram
    );
}
