//! Final conditions: a flat chain of `\/` or `/\` terms is one level of
//! nesting however long it is (issue 33), while real nesting (parentheses,
//! negations, implications) past the limit is still refused.

use atomlab_litmus::ast::{StateVar, Value};
use atomlab_litmus::parse;

/// A C test whose P0 loads x into r0, with the final condition `cond`.
fn with_condition(cond: &str) -> String {
    format!(
        "C CHAIN\n{{}}\nP0(atomic_int *x) {{\n  int r0 = atomic_load_explicit(x, memory_order_relaxed);\n}}\nexists {cond}\n"
    )
}

/// `0:r0=1 <op> 0:r0=2 <op> … <op> 0:r0=n`.
fn chain(n: usize, op: &str) -> String {
    (1..=n)
        .map(|v| format!("0:r0={v}"))
        .collect::<Vec<_>>()
        .join(&format!(" {op} "))
}

/// The condition of `test` with r0 (its one state variable) at `r0`.
fn holds(test: &atomlab_litmus::ast::Test, r0: i64) -> bool {
    test.condition.prop.eval(&|v: &StateVar| match v {
        StateVar::Reg { thread: 0, .. } => Value::Int(r0),
        _ => Value::Int(0),
    })
}

/// Issue 33: 600 disjuncts without parentheses were refused as "nesting
/// deeper than 500 levels"; they are one level, parsed and judged.
#[test]
fn a_flat_chain_of_600_disjuncts_is_parsed_and_judged() {
    let src = with_condition(&format!("({})", chain(600, "\\/")));
    let test = parse("chain.litmus", &src).expect("a flat chain is not nesting");
    assert!(holds(&test, 1));
    assert!(holds(&test, 600));
    assert!(!holds(&test, 0));
    assert!(!holds(&test, 601));
    let text = test.condition_text();
    assert!(
        text.starts_with("exists (0:r0=1 \\/ 0:r0=2 \\/ ") && text.ends_with(" \\/ 0:r0=600)"),
        "{}",
        &text[..80]
    );
}

/// The same for conjuncts, and for a chain long enough to overflow any
/// stack if it were walked as nested pairs.
#[test]
fn flat_chains_of_any_length_are_parsed_and_judged() {
    let conj = (0..600).map(|_| "0:r0=7").collect::<Vec<_>>().join(" /\\ ");
    let test = parse("and.litmus", &with_condition(&format!("({conj})"))).unwrap();
    assert!(holds(&test, 7));
    assert!(!holds(&test, 8));
    let test = parse(
        "long.litmus",
        &with_condition(&format!("({})", chain(100_000, "\\/"))),
    )
    .unwrap();
    assert!(holds(&test, 99_999));
    assert!(!holds(&test, 100_001));
    // A chain of `\/` and `/\` mixed: `/\` binds tighter.
    let test = parse(
        "mixed.litmus",
        &with_condition("(0:r0=1 /\\ 0:r0=2 \\/ 0:r0=3 \\/ 0:r0=4 /\\ 0:r0=4)"),
    )
    .unwrap();
    assert!(!holds(&test, 1) && !holds(&test, 2));
    assert!(holds(&test, 3) && holds(&test, 4));
    assert_eq!(
        test.condition_text(),
        "exists ((0:r0=1 /\\ 0:r0=2) \\/ 0:r0=3 \\/ (0:r0=4 /\\ 0:r0=4))"
    );
}

/// Real nesting past the limit is still refused, at the place it goes too
/// deep: parentheses, negations and implications (each `=>` wraps what
/// came before it).
#[test]
fn real_nesting_past_the_limit_is_still_refused() {
    let cases = [
        format!("{}0:r0=1{}", "(".repeat(600), ")".repeat(600)),
        format!("({}0:r0=1)", "~".repeat(600)),
        format!("({})", chain(600, "=>")),
    ];
    for cond in cases {
        let err = parse("deep.litmus", &with_condition(&cond)).unwrap_err();
        assert!(
            err.to_string().contains("nesting deeper than 500 levels"),
            "{err}"
        );
    }
}
