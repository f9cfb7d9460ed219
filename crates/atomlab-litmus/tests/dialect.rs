//! Forms of herd7's C dialect that kernel tests use and herd7 7.58 takes
//! (issue 37): a `(*Note:…*)` comment after the final condition, registers
//! set in the initial state and used undeclared, a repeated `C name` header
//! line, `locations` naming a register the thread lacks, and `void *`
//! declarations. The tests here are written for this project, one per
//! shape; none is copied from the kernel's litmus collection.

use atomlab_litmus::{parse, Expr, Instr, StateVar, Value};

fn parsed(src: &str) -> atomlab_litmus::Test {
    parse("t.litmus", src).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_comment_without_a_space_after_the_final_condition_is_a_comment() {
    // herd7's splitter skips `(* … *)` after the threads whatever follows
    // `(*`; inside C code `(*x` stays a dereference.
    let t = parsed(
        "C note\n{}\nP0(int *x)\n{\n\tint r0;\n\tr0 = (*x);\n\tWRITE_ONCE(*x, 1);\n}\nexists (x=1)\n(*Note: herd7 reads this as a comment. *)\n",
    );
    assert_eq!(t.threads[0].code.len(), 3);
    // Before the condition too, and nested.
    parsed("C note\n{}\nP0(int *x)\n{\n\tWRITE_ONCE(*x, 1);\n}\n(*Result: (*nested*) ok*)\nexists (x=1)\n");
    // An unterminated one is still an error, at its position.
    let e = parse(
        "t.litmus",
        "C note\n{}\nP0(int *x)\n{\n\tWRITE_ONCE(*x, 1);\n}\nexists (x=1)\n(*Note: open\n",
    )
    .expect_err("unterminated");
    assert_eq!((e.line, e.column), (8, 1), "{e}");
    assert!(e.message.contains("unterminated comment"), "{e}");
}

#[test]
fn a_register_set_in_the_initial_state_needs_no_declaration() {
    for init in ["0:r4=y;", "int *0:r4 = y;", "int 0:r4 = y;"] {
        let t = parsed(&format!(
            "C initreg\n{{ {init} }}\nP0(int *x, int *y)\n{{\n\tWRITE_ONCE(*x, r4);\n\tWRITE_ONCE(*r4, 1);\n}}\nexists (x=y)\n"
        ));
        let th = &t.threads[0];
        let r4 = th.reg("r4").expect("r4 is a register of P0");
        let y = t.locations.iter().position(|l| l == "y").unwrap();
        assert_eq!(th.init, vec![(r4, Value::Loc(y))], "{init}");
        assert!(
            matches!(&th.code[0], Instr::Store { value: Expr::Reg(r), .. } if *r == r4),
            "{init}: {:?}",
            th.code[0]
        );
    }
    // Another thread's initial register is not declared in P0.
    let e = parse(
        "t.litmus",
        "C initreg\n{ 1:r4=y; }\nP0(int *x, int *y)\n{\n\tWRITE_ONCE(*x, r4);\n}\nP1(int *y)\n{\n\tWRITE_ONCE(*y, 1);\n}\nexists (x=y)\n",
    )
    .expect_err("r4 belongs to P1");
    assert!(e.message.contains("undeclared identifier 'r4'"), "{e}");
}

#[test]
fn a_second_header_line_with_a_name_is_skipped() {
    let t = parsed(
        "C first-name\nC second-name\n{}\nP0(int *x)\n{\n\tWRITE_ONCE(*x, 1);\n}\nexists (x=1)\n",
    );
    assert_eq!(t.name, "first-name");
    // Other text in the header is still refused.
    let e = parse(
        "t.litmus",
        "C first-name\nstray words here\n{}\nP0(int *x)\n{\n\tWRITE_ONCE(*x, 1);\n}\nexists (x=1)\n",
    )
    .expect_err("stray header text");
    assert!(e.message.contains("key=value"), "{e}");
}

#[test]
fn locations_may_name_a_register_the_thread_lacks_but_a_condition_may_not() {
    let t = parsed(
        "C locs\n{}\nP0(int *x)\n{\n\tWRITE_ONCE(*x, 1);\n}\nlocations [0:r1; x]\nexists (x=1)\n",
    );
    let r1 = t.threads[0].reg("r1").expect("r1 added for locations");
    assert!(t.observed.contains(&StateVar::Reg { thread: 0, reg: r1 }));
    // A location no thread uses, likewise (herd7 7.58: `[w]=0;`).
    let t = parsed(
        "C locw\n{}\nP0(int *x)\n{\n\tWRITE_ONCE(*x, 1);\n}\nlocations [w; 0:r5]\nexists (x=1)\n",
    );
    let w = t.locations.iter().position(|l| l == "w").expect("w added");
    assert!(t.observed.contains(&StateVar::Loc(w)));
    let e = parse(
        "t.litmus",
        "C locs\n{}\nP0(int *x)\n{\n\tWRITE_ONCE(*x, 1);\n}\nexists (0:r1=0)\n",
    )
    .expect_err("a condition on a missing register");
    assert!(e.message.contains("has no register 'r1'"), "{e}");
}

#[test]
fn a_void_pointer_declaration_is_a_register() {
    let t = parsed(
        "C voidp\n{ y=x; }\nP0(int *x, int *y)\n{\n\tvoid *r0 = rcu_dereference(*(void **)y);\n\tint r1 = READ_ONCE(*(int *)r0);\n}\nexists (0:r1=0)\n",
    );
    assert!(t.is_linux());
    assert!(t.threads[0].reg("r0").is_some());
    let loads = t.threads[0]
        .code
        .iter()
        .filter(|i| matches!(i, Instr::Load { .. }))
        .count();
    assert_eq!(loads, 2);
    // `void` alone is not a type of a register.
    let e = parse(
        "t.litmus",
        "C voidp\n{}\nP0(int *x)\n{\n\tvoid r0;\n\tWRITE_ONCE(*x, 1);\n}\nexists (x=1)\n",
    )
    .expect_err("void r0");
    assert!(e.message.contains("'void'"), "{e}");
}
