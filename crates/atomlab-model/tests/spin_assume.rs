//! The loop rule ([`atomlab_model::LoopRule`]) on threads that wait for
//! each other: a handshake in which each thread writes, then spins until
//! it sees the other's write. Every path of either thread alone ends in a
//! spin that spin-assume drops, so the values each waits for come only
//! from the other's dropped paths (what they wrote before spinning): the
//! value search must keep those writes, or no thread has a run at all
//! (as `atomlab verify`'s spsc client, whose producer waits for a free
//! slot while the consumer waits for an item, would find).

use std::time::{Duration, Instant};

use atomlab_litmus::{
    Annot, Arch, BinOp, CmpOp, Condition, Expr, Instr, Prop, Quantifier, StateVar, Test, Thread,
    Value,
};
use atomlab_model::{check_test, CheckOptions, Engine, LoopRule, ModelOutcome, Observation};

/// Thread `id`: `mine = 1`, then wait until `theirs` is 1 (reading it
/// into r0), then `mine = 2`.
fn waiter(id: usize, mine: usize, theirs: usize) -> Thread {
    let at = |l| Expr::Const(Value::Loc(l));
    Thread {
        id,
        regs: vec!["X0".into()],
        init: Vec::new(),
        code: vec![
            Instr::Store {
                addr: at(mine),
                value: Expr::int(1),
                annot: Annot::default(),
            },
            Instr::Load {
                dst: Some(0),
                addr: at(theirs),
                annot: Annot::default(),
            },
            Instr::Branch {
                cond: Some(Expr::bin(BinOp::Eq, Expr::Reg(0), Expr::int(0))),
                target: 1,
            },
            Instr::Store {
                addr: at(mine),
                value: Expr::int(2),
                annot: Annot::default(),
            },
        ],
    }
}

#[test]
fn threads_that_wait_for_each_other_finish() {
    let test = Test {
        file: String::new(),
        arch: Arch::AArch64,
        name: "handshake".into(),
        locations: vec!["x".into(), "y".into()],
        init: Vec::new(),
        threads: vec![waiter(0, 0, 1), waiter(1, 1, 0)],
        observed: vec![StateVar::Loc(1)],
        filter: None,
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop: Prop::Atom(StateVar::Loc(0), CmpOp::Ne, Value::Int(2)),
        },
    };
    let opts = CheckOptions {
        engine: Engine::Explore,
        loops: Some(LoopRule { unroll: 2 }),
        deadline: Some(Instant::now() + Duration::from_secs(60)),
        ..CheckOptions::default()
    };
    for model in ["sc", "aarch64"] {
        match check_test(&test, &[model], &opts).remove(0) {
            ModelOutcome::Done(r) => {
                // Both get past their wait: each ends having written 2.
                assert_eq!(r.observation, Observation::Never, "{model}: {r:?}");
                assert!(!r.states.is_empty(), "{model}: {r:?}");
                for (s, _) in &r.states {
                    assert_eq!(s, &[Value::Int(2), Value::Int(2)], "{model}: {r:?}");
                }
            }
            other => panic!("{model}: {other:?}"),
        }
    }
}
