//! The evaluator on small hand-built executions: store buffering (SB) with
//! both reads reading the initial values, judged by cat texts written here.

use atomlab_cat::load_text;
use atomlab_litmus::{Annot, MemOrder};
use atomlab_model::graph::{Event, Execution, Kind, Memo, Rel, Sets, Skeleton};
use atomlab_model::models::{Judgement, Model};

/// Events: 0 = init x, 1 = init y; thread 0: 2 = W x=1, 3 = R y=0;
/// thread 1: 4 = W y=1, 5 = R x=0. `order` annotates the four accesses.
fn sb(order: Option<MemOrder>) -> Skeleton {
    let n = 6;
    let ev = |thread, kind, loc, rval, wval| Event {
        thread,
        kind,
        loc: Some(loc),
        rval,
        wval,
        annot: Annot {
            order: if thread.is_some() { order } else { None },
            ..Annot::default()
        },
        instance: 0,
        pc: 0,
    };
    let events = vec![
        ev(None, Kind::Write, 0, 0, 0),
        ev(None, Kind::Write, 1, 0, 0),
        ev(Some(0), Kind::Write, 0, 0, 1),
        ev(Some(0), Kind::Read, 1, 0, 0),
        ev(Some(1), Kind::Write, 1, 0, 1),
        ev(Some(1), Kind::Read, 0, 0, 0),
    ];
    let mut sets = Sets {
        r: 0b101000,
        w: 0b010111,
        iw: 0b000011,
        ..Sets::default()
    };
    sets.m = sets.r | sets.w;
    if order == Some(MemOrder::SeqCst) {
        sets.sc = 0b111100;
        sets.atomic = 0b111100;
    }
    let mut po = Rel::empty(n);
    po.add(2, 3);
    po.add(4, 5);
    let mut loc = Rel::empty(n);
    let mut int = Rel::empty(n);
    let mut ext = Rel::empty(n);
    for i in 0..n {
        for j in 0..n {
            if events[i].loc == events[j].loc {
                loc.add(i, j);
            }
            if events[i].thread == events[j].thread {
                int.add(i, j);
            } else {
                ext.add(i, j);
            }
        }
    }
    Skeleton {
        n,
        events,
        sets,
        po,
        loc,
        int,
        ext,
        rmw: Rel::empty(n),
        amo: Rel::empty(n),
        addr: Rel::empty(n),
        data: Rel::empty(n),
        ctrl: Rel::empty(n),
        pick_addr: Rel::empty(n),
        pick_data: Rel::empty(n),
        pick_ctrl: Rel::empty(n),
        lmrs: Rel::empty(n),
        same_instance: Rel::id(n, (1 << n) - 1),
        init_of: vec![0, 1],
        regs: vec![vec![0], vec![0]],
        memo: Memo::default(),
    }
}

fn execution(s: &Skeleton) -> Execution<'_> {
    let mut rf = Rel::empty(s.n);
    rf.add(1, 3);
    rf.add(0, 5);
    let mut co = Rel::empty(s.n);
    co.add(0, 2);
    co.add(1, 4);
    let fr = rf.inv().seq(&co).noid();
    Execution {
        s,
        rf,
        co,
        fr,
        last: vec![2, 4],
    }
}

fn judge(text: &str, x: &Execution<'_>) -> Judgement {
    load_text("t", "t.cat", text, &[])
        .expect("loads")
        .judge(x, true)
}

#[test]
fn sequential_consistency_forbids_sb_and_names_the_axiom() {
    let s = sb(None);
    let x = execution(&s);
    match judge("acyclic po | rf | co | fr as sc", &x) {
        Judgement::Forbidden(v) => {
            assert_eq!(v.axiom, "sc");
            // The cycle W x -po-> R y -fr-> W y -po-> R x -fr-> W x.
            assert_eq!(v.cycle.len(), 4, "{v:?}");
        }
        j => panic!("{j:?}"),
    }
}

#[test]
fn tso_allows_sb() {
    let s = sb(None);
    let x = execution(&s);
    let tso = "let ppo = po \\ (W * R)\nacyclic ppo | rfe | co | fr as tso";
    assert_eq!(judge(tso, &x), Judgement::Allowed { racy: false });
    // The same with a fence between each write and read is forbidden.
    let fenced = "let ppo = po \\ (W * R)\nacyclic ppo | po | rfe | co | fr as tso";
    assert!(matches!(judge(fenced, &x), Judgement::Forbidden(_)));
}

#[test]
fn recursive_definitions_are_least_fixpoints() {
    let s = sb(None);
    let x = execution(&s);
    // hb = (po | fr)+ written as a recursive definition: cyclic on SB.
    let rec = "let rec hb = po | fr | hb ; hb\nirreflexive hb as hb";
    let closed = "let hb = (po | fr)+\nirreflexive hb as hb";
    assert!(matches!(judge(rec, &x), Judgement::Forbidden(_)));
    assert!(matches!(judge(closed, &x), Judgement::Forbidden(_)));
    let rec_po = "let rec r = po | r ; r\nirreflexive r as r";
    assert_eq!(judge(rec_po, &x), Judgement::Allowed { racy: false });
}

#[test]
fn sets_domains_and_products() {
    let s = sb(None);
    let x = execution(&s);
    // Reads of the initial values: both reads.
    assert!(matches!(
        judge("empty range([IW]; rf) \\ R as none", &x),
        Judgement::Allowed { .. }
    ));
    assert!(matches!(
        judge("empty range([IW]; rf) as none", &x),
        Judgement::Forbidden(_)
    ));
    // W * R restricted to external pairs on one location: (2,5) and (4,3).
    assert!(matches!(
        judge(
            "empty ((W \\ IW) * R) & loc & ext \\ (fr^-1) as fr-only",
            &x
        ),
        Judgement::Allowed { .. }
    ));
    assert!(matches!(
        judge("~empty domain(fencerel(R)) as no-fence", &x),
        Judgement::Forbidden(_)
    ));
}

#[test]
fn flags_and_undefined_behaviour_do_not_forbid() {
    let s = sb(None);
    let x = execution(&s);
    let m = load_text(
        "t",
        "t.cat",
        "flag ~empty fr as has-fr\nundefined_unless empty rf & ext as Dr",
        &[],
    )
    .expect("loads");
    let (j, flags) = m.judge_flags(&x, false);
    assert_eq!(j, Judgement::Allowed { racy: true });
    assert_eq!(flags, vec!["has-fr"]);
}

#[test]
fn annotations_and_functions() {
    // One model judges executions of two skeletons in turn: values computed
    // once per skeleton must not leak from one to the other.
    let psc = "let f(s) = [s]; (po | fr); [s]\nacyclic f(SC) as SC";
    let m = load_text("t", "t.cat", psc, &[]).expect("loads");
    let (sc, rlx) = (sb(Some(MemOrder::SeqCst)), sb(Some(MemOrder::Relaxed)));
    for _ in 0..2 {
        assert!(matches!(
            m.judge(&execution(&sc), false),
            Judgement::Forbidden(_)
        ));
        assert_eq!(
            m.judge(&execution(&rlx), false),
            Judgement::Allowed { racy: false }
        );
    }
}

#[test]
fn includes_resolve_beside_the_file_then_in_the_cat_path() {
    let dir = std::env::temp_dir().join(format!("atomlab-cat-include-{}", std::process::id()));
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).expect("temp dir");
    std::fs::write(
        dir.join("model.cat"),
        "include \"near.cat\"\ninclude \"far.cat\"\nacyclic near | far as both\n",
    )
    .expect("write");
    std::fs::write(dir.join("near.cat"), "let near = po\n").expect("write");
    std::fs::write(lib.join("far.cat"), "let far = fr\n").expect("write");
    let s = sb(None);
    let x = execution(&s);
    let err = atomlab_cat::load("m", &dir.join("model.cat"), &[]).expect_err("far.cat not found");
    assert_eq!((err.line, err.column), (2, 1), "{err}");
    let m =
        atomlab_cat::load("m", &dir.join("model.cat"), std::slice::from_ref(&lib)).expect("loads");
    assert!(matches!(m.judge(&x, false), Judgement::Forbidden(_)));
    // An include cycle is refused where it closes.
    std::fs::write(lib.join("far.cat"), "include \"model.cat\"\n").expect("write");
    std::fs::write(lib.join("model.cat"), "include \"far.cat\"\n").expect("write");
    let err = atomlab_cat::load("m", &lib.join("model.cat"), &[]).expect_err("cycle");
    assert!(err.message.contains("includes itself"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn flags_reach_the_herd_log() {
    // Through the engine: a test whose allowed executions raise a flag.
    let test = atomlab_litmus::parse(
        "SB.litmus",
        "C SB\n{}\nP0 (atomic_int* x, atomic_int* y) {\n  atomic_store_explicit(x, 1, memory_order_relaxed);\n  int r0 = atomic_load_explicit(y, memory_order_relaxed);\n}\nP1 (atomic_int* x, atomic_int* y) {\n  atomic_store_explicit(y, 1, memory_order_relaxed);\n  int r0 = atomic_load_explicit(x, memory_order_relaxed);\n}\nexists (0:r0=0 /\\ 1:r0=0)\n",
    )
    .expect("parses");
    let m = load_text(
        "flagged",
        "f.cat",
        "acyclic po | rf | co | fr as sc\nflag ~empty rf & ext as communicates",
        &[],
    )
    .expect("loads");
    let out = atomlab_model::check_test_with(
        &test,
        &[atomlab_model::ModelChoice::Given(&m)],
        &atomlab_model::CheckOptions::default(),
    );
    let atomlab_model::ModelOutcome::Done(r) = &out[0] else {
        panic!("{out:?}")
    };
    assert_eq!(r.flags, vec!["communicates"]);
    let log = atomlab_model::herd::log(&test, r);
    assert!(log.contains("\nFlag communicates\n"), "{log}");
    assert!(log.contains("Observation SB Never"), "{log}");
}

#[test]
fn mutually_recursive_definitions() {
    let s = sb(None);
    let x = execution(&s);
    // a and b alternate po and fr steps: on SB they close a cycle.
    let m = "let rec a = po | b ; a\nand b = fr | a ; b\nirreflexive a as a";
    assert!(matches!(judge(m, &x), Judgement::Forbidden(_)));
    // Without fr, b stays empty and a is po.
    let m = "let rec a = po | b ; a\nand b = a ; b\nirreflexive a as a\nempty b as b";
    assert_eq!(judge(m, &x), Judgement::Allowed { racy: false });
}
