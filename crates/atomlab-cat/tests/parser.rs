//! The cat parser: shapes of expressions (precedence as herd7's grammar)
//! and file:line:column on errors.

use atomlab_cat::load_text;
use atomlab_cat::syntax::{parse, BinOp, ExprKind, Instr, InstrKind, UnOp};

fn one_let(text: &str) -> ExprKind {
    let instrs: Vec<Instr> = parse(0, "t.cat", text).expect("parses");
    match &instrs[0].kind {
        InstrKind::Let(_, bs) => bs[0].body.kind.clone(),
        k => panic!("not a let: {k:?}"),
    }
}

fn bin(e: &ExprKind) -> (BinOp, ExprKind, ExprKind) {
    match e {
        ExprKind::Bin(op, a, b) => (*op, a.kind.clone(), b.kind.clone()),
        k => panic!("not a binary operation: {k:?}"),
    }
}

#[test]
fn union_is_loosest_then_sequence_then_difference() {
    // a | b ; c \ d  ==  a | (b ; (c \ d))
    let (op, a, rest) = bin(&one_let("let x = a | b ; c \\ d"));
    assert_eq!(op, BinOp::Union);
    assert_eq!(a, ExprKind::Var("a".into()));
    let (op, _, rest) = bin(&rest);
    assert_eq!(op, BinOp::Seq);
    assert_eq!(bin(&rest).0, BinOp::Diff);
}

#[test]
fn star_is_a_product_between_operands_and_a_closure_otherwise() {
    assert_eq!(bin(&one_let("let x = A * B")).0, BinOp::Cross);
    match one_let("let x = (r ; s)*\nlet y = 0") {
        ExprKind::Un(UnOp::Star, _) => {}
        k => panic!("expected a closure: {k:?}"),
    }
    // Postfix operators bind tighter than `;`.
    let (op, a, b) = bin(&one_let("let x = rf^-1 ; co+"));
    assert_eq!(op, BinOp::Seq);
    assert!(matches!(a, ExprKind::Un(UnOp::Inv, _)));
    assert!(matches!(b, ExprKind::Un(UnOp::Plus, _)));
}

#[test]
fn names_take_dots_and_dashes_and_brackets_make_identities() {
    match one_let("let x = [DMB.ISH] ; po-loc") {
        ExprKind::Bin(BinOp::Seq, a, b) => {
            assert!(
                matches!(&a.kind, ExprKind::Un(UnOp::Id, s) if s.kind == ExprKind::Var("DMB.ISH".into()))
            );
            assert_eq!(b.kind, ExprKind::Var("po-loc".into()));
        }
        k => panic!("{k:?}"),
    }
}

#[test]
fn application_and_functions_parse() {
    let text = "let f(a, b) = a & b\nlet g x = x\nlet h = fun r -> r ; r\nlet y = f(po, g rf)\n\
                let rec m s = match s with || {} -> 0 || e ++ t -> e | m t end\n\
                procedure p(r) = acyclic r end\ncall p(po)\n";
    let instrs = parse(0, "t.cat", text).expect("parses");
    assert_eq!(instrs.len(), 7);
}

#[test]
fn comments_nest_and_titles_are_skipped() {
    let text = "X86 \"TSO model\"\n(* a (* nested *) comment *)\n# a line comment\nlet x = po\nacyclic x as ok\n";
    let instrs = parse(0, "t.cat", text).expect("parses");
    assert_eq!(instrs.len(), 2);
    assert_eq!(instrs[1].pos.line, 5);
}

fn err_at(text: &str) -> (u32, u32, String) {
    let e = load_text("m", "bad.cat", text, &[]).expect_err("refused");
    assert_eq!(e.file, "bad.cat");
    (e.line, e.column, e.message)
}

#[test]
fn errors_name_line_and_column() {
    let (l, c, m) = err_at("let x = po\nlet y = x $ po\n");
    assert_eq!((l, c), (2, 11), "{m}");
    let (l, c, m) = err_at("let x = po\n\n  acyclic x | nope as z\n");
    assert_eq!((l, c), (3, 15), "{m}");
    assert!(m.contains("nope"), "{m}");
    let (l, c, _) = err_at("let x = (po | rf\n");
    assert_eq!((l, c), (2, 1));
    let (l, c, m) = err_at("(* never closed\nlet x = po");
    assert_eq!((l, c), (1, 1), "{m}");
    let (l, c, m) = err_at("let x = po\nacyclic [x]\n");
    assert_eq!((l, c), (2, 9), "{m}");
    assert!(m.contains("set of events"), "{m}");
}

#[test]
fn unsupported_forms_are_refused_with_their_position() {
    let (l, c, m) = err_at("let x = po\nforall e in W do empty 0 end\n");
    assert_eq!((l, c), (2, 1), "{m}");
    let (l, c, m) = err_at("let s = classes-loc(W)\n");
    assert_eq!(l, 1, "{m}");
    assert_eq!(c, 20, "{m}");
    let (l, _, m) = err_at("let x = po\nwith y from W\n");
    assert_eq!(l, 2, "{m}");
    let (l, _, m) = err_at("let x = match W with || {} -> 0 || e ++ s -> po end\n");
    assert_eq!(l, 1);
    assert!(m.contains("match"), "{m}");
}
