//! The Linux-kernel C dialect: how linux-kernel.def's primitives are
//! lowered (access tags, barriers, RMW pairs, locks) and how bad input is
//! refused with a position.

use atomlab_litmus::{parse, BinOp, Expr, Fence, Instr, LkAccess, LkFence, RmwOp, Value};

fn code(body: &str) -> Vec<Instr> {
    let src = format!(
        "C t\n{{}}\nP0(int *x, int *y, spinlock_t *s, atomic_t *v)\n{{\n{body}\n}}\nexists (x=0)\n"
    );
    let t = parse("t.litmus", &src).unwrap_or_else(|e| panic!("{e}"));
    assert!(t.is_linux());
    t.threads[0].code.clone()
}

fn tags(i: &Instr) -> (LkAccess, LkAccess) {
    match i {
        Instr::Load { annot, .. } | Instr::Store { annot, .. } => (annot.lk, annot.lk),
        Instr::Rmw { read, write, .. } => (read.lk, write.lk),
        Instr::Cas { read, write, .. } => (read.lk, write.lk),
        other => panic!("not an access: {other:?}"),
    }
}

#[test]
fn once_acquire_release_accesses_carry_their_tags() {
    let c = code(
        "int r0; int r1;\nr0 = READ_ONCE(*x);\nWRITE_ONCE(*y, r0);\nr1 = smp_load_acquire(y);\nsmp_store_release(x, 2);\nrcu_assign_pointer(*x, y);",
    );
    let acc: Vec<_> = c
        .iter()
        .filter(|i| matches!(i, Instr::Load { .. } | Instr::Store { .. }))
        .map(|i| tags(i).0)
        .collect();
    assert_eq!(
        acc,
        [
            LkAccess::Once,
            LkAccess::Once,
            LkAccess::Acquire,
            LkAccess::Release,
            LkAccess::Release
        ]
    );
}

#[test]
fn barriers_and_rcu_are_linux_fences() {
    let c = code("smp_mb(); smp_rmb(); smp_wmb(); rcu_read_lock(); rcu_read_unlock(); synchronize_rcu(); smp_mb__after_spinlock();");
    let f: Vec<_> = c
        .iter()
        .map(|i| match i {
            Instr::Fence(Fence::Linux(k)) => *k,
            other => panic!("{other:?}"),
        })
        .collect();
    use LkFence::*;
    assert_eq!(
        f,
        [Mb, Rmb, Wmb, RcuLock, RcuUnlock, SyncRcu, AfterSpinlock]
    );
}

#[test]
fn rmws_are_read_write_pairs_with_the_suffix_order() {
    let c = code("int r0; int r1; int r2;\nr0 = xchg_acquire(x, 1);\nr1 = atomic_fetch_add_release(2, v);\natomic_inc(v);\nr2 = cmpxchg(y, 0, 1);");
    let rmws: Vec<_> = c
        .iter()
        .filter(|i| matches!(i, Instr::Rmw { .. } | Instr::Cas { .. }))
        .collect();
    assert_eq!(rmws.len(), 4);
    assert!(matches!(
        rmws[0],
        Instr::Rmw {
            op: RmwOp::Xchg,
            single: false,
            ..
        }
    ));
    assert_eq!(tags(rmws[0]), (LkAccess::Acquire, LkAccess::Acquire));
    assert!(matches!(rmws[1], Instr::Rmw { op: RmwOp::Add, .. }));
    assert_eq!(tags(rmws[1]), (LkAccess::Release, LkAccess::Release));
    assert_eq!(tags(rmws[2]), (LkAccess::Noreturn, LkAccess::Noreturn));
    // A failed cmpxchg's read keeps the operation's tag (herd7, lkmmv2);
    // the model, not the tag, makes it order nothing.
    match rmws[3] {
        Instr::Cas { read, fail, .. } => {
            assert_eq!(read.lk, LkAccess::Mb);
            assert_eq!(fail.lk, LkAccess::Mb);
            assert!(read.lk_rmw && fail.lk_rmw);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn spinlocks_are_lock_events() {
    let c = code("int r0; int r1;\nspin_lock(s);\nspin_unlock(s);\nr0 = spin_trylock(s);\nr1 = spin_is_locked(s);");
    let t: Vec<_> = c
        .iter()
        .filter(|i| !matches!(i, Instr::Assign { .. }))
        .map(tags)
        .collect();
    assert_eq!(
        t,
        [
            (LkAccess::LockRead, LkAccess::LockWrite),
            (LkAccess::Unlock, LkAccess::Unlock),
            (LkAccess::LockRead, LkAccess::LockWrite),
            (LkAccess::IsLocked, LkAccess::IsLocked),
        ]
    );
}

#[test]
fn srcu_primitives_are_srcu_accesses_and_a_located_grace_period() {
    let src = "C t\n{}\nP0(int *x, struct srcu_struct *s)\n{\nint i; int j;\ni = srcu_read_lock(s);\nsrcu_read_unlock(s, i);\nj = srcu_down_read(s);\nsrcu_up_read(s, j);\nsynchronize_srcu(s);\nsynchronize_srcu_expedited(s);\nsmp_mb__after_srcu_read_unlock();\n}\nexists (x=0)\n";
    let t = parse("t.litmus", src).unwrap_or_else(|e| panic!("{e}"));
    assert!(t.is_linux());
    let s = t.locations.iter().position(|l| l == "s").unwrap();
    let c = &t.threads[0].code;
    let accesses: Vec<_> = c
        .iter()
        .filter(|i| matches!(i, Instr::Load { .. } | Instr::Store { .. }))
        .map(|i| tags(i).0)
        .collect();
    assert_eq!(
        accesses,
        [
            LkAccess::SrcuLock,
            LkAccess::SrcuUnlock,
            LkAccess::SrcuLock,
            LkAccess::SrcuUnlock
        ]
    );
    let syncs = c
        .iter()
        .filter(|i| matches!(i, Instr::SyncSrcu { addr: Expr::Const(Value::Loc(l)) } if *l == s))
        .count();
    assert_eq!(syncs, 2);
    assert_eq!(
        c.last(),
        Some(&Instr::Fence(Fence::Linux(LkFence::AfterSrcuReadUnlock)))
    );
}

#[test]
fn and_test_and_add_negative_compare_the_new_value_with_zero() {
    let c = code("int r0; int r1; int r2;\nr0 = atomic_dec_and_test(v);\nr1 = atomic_sub_and_test(2, v);\nr2 = atomic_add_negative_release(-1, v);");
    let rmws: Vec<_> = c
        .iter()
        .filter(|i| matches!(i, Instr::Rmw { .. }))
        .collect();
    assert_eq!(rmws.len(), 3);
    assert!(matches!(
        rmws[0],
        Instr::Rmw {
            op: RmwOp::Sub,
            operand: Expr::Const(Value::Int(1)),
            ..
        }
    ));
    assert_eq!(tags(rmws[0]), (LkAccess::Mb, LkAccess::Mb));
    assert!(matches!(
        rmws[1],
        Instr::Rmw {
            op: RmwOp::Sub,
            operand: Expr::Const(Value::Int(2)),
            ..
        }
    ));
    assert!(matches!(rmws[2], Instr::Rmw { op: RmwOp::Add, .. }));
    assert_eq!(tags(rmws[2]), (LkAccess::Release, LkAccess::Release));
    // The register gets `new == 0` / `new < 0`, not the old value.
    let tests: Vec<_> = c
        .iter()
        .filter_map(|i| match i {
            Instr::Assign {
                expr: Expr::Bin(op, _, _),
                ..
            } => Some(*op),
            _ => None,
        })
        .collect();
    assert_eq!(tests, [BinOp::Eq, BinOp::Eq, BinOp::Lt]);
}

#[test]
fn c_comments_casts_and_undeclared_registers_are_read() {
    let c = code(
        "// a comment\n/* a block\n comment */ r0 = (int *)READ_ONCE(*x);\nWRITE_ONCE(*y, r0);",
    );
    assert_eq!(c.len(), 3);
}

#[test]
fn c11_tests_are_not_linux_tests() {
    let t = parse(
        "c11.litmus",
        "C c11\n{}\nP0(atomic_int *x) { atomic_thread_fence(memory_order_seq_cst); atomic_store_explicit(x, 1, memory_order_relaxed); }\nexists (x=1)\n",
        )
    .unwrap();
    assert!(!t.is_linux());
}

#[test]
fn bad_linux_input_is_refused_with_its_position() {
    for (body, line, col, msg) in [
        ("int r0;\nr0 = READ_ONCE(x);", 6, 16, "expected '*pointer'"),
        ("srcu_read_unlock(x);", 5, 19, "expected ','"),
        ("synchronize_srcu();", 5, 18, "expected an expression"),
        ("srcu_barrier(x);", 5, 1, "the SRCU primitives are"),
        (
            "int r0;\nr0 = atomic_inc_and_test_acquire(v);",
            6,
            6,
            "only fully ordered",
        ),
        (
            "atomic_add_relaxed(1, v);",
            5,
            1,
            "unsupported Linux primitive",
        ),
        ("WRITE_ONCE(*x, 1); /* open", 5, 20, "unterminated comment"),
        (
            "int r0;\nr0 = atomic_add_unless(v, 1, r0);",
            6,
            30,
            "integer constant",
        ),
    ] {
        let src = format!("C t\n{{}}\nP0(int *x, atomic_t *v)\n{{\n{body}\n}}\nexists (x=0)\n");
        let e = parse("t.litmus", &src).expect_err(body);
        assert_eq!((e.line, e.column), (line, col), "{body}: {e}");
        assert!(e.message.contains(msg), "{body}: {e}");
    }
}
