//! Fuzz-style tests: truncated and randomly damaged cat, bell and cfg text
//! never panics, and every refusal names a line and column inside the
//! text. `cargo test` runs a fixed number of damaged copies; with
//! `ATOMLAB_FUZZ_SECS=N` (as `.ci/run` sets) each damage test keeps going
//! with fresh seeds for N seconds.

use atomlab_cat::load_text;

const MODEL: &str = r#"MyModel "a model for the fuzz test"
(* comment (* nested *) *)
let com = rf | co | fr
let ppo = po \ (W * R)
let f(a, b) = a & (b * _)
let rec hb = ppo | rfe | hb ; hb
let g = try fencerel(MFENCE) with 0
let rec walk s = match s with || {} -> 0 || e ++ t -> e | walk t end
let h = walk {po, rf}
if "variant" let z = po else let z = rf end
acyclic po-loc | com as uniproc
irreflexive hb ; com? as causality
empty rmw & (fre ; coe) as atomic
flag ~empty f(po, W) as has-po-to-writes
undefined_unless empty [R] ; z as nothing
procedure p(r) = acyclic r end
call p(g | h)
show hb
"#;

fn check(text: &str) {
    if let Err(e) = load_text("fuzz", "fuzz.cat", text, &[]) {
        let lines = text.lines().count().max(1) as u32 + 1;
        assert!(e.line >= 1 && e.line <= lines, "{e} for {text:?}");
        assert!(e.column >= 1, "{e} for {text:?}");
        assert!(!e.message.is_empty());
    }
}

#[test]
fn the_full_model_loads() {
    let m = load_text("fuzz", "fuzz.cat", MODEL, &[]).expect("loads");
    assert!(m.checks().contains(&"uniproc"));
    assert!(m.checks().contains(&"causality"));
}

#[test]
fn every_truncation_is_handled() {
    for (i, _) in MODEL.char_indices() {
        check(&MODEL[..i]);
    }
}

#[test]
fn random_damage_is_handled() {
    damaged_copies(
        MODEL,
        "()[]{}|&\\;*+?~^-1=>,'\"_ \nletrecandinacyclicempty0#",
        3000,
        0x2545_f491_4f6c_dd1d,
        check,
    );
}

/// Damages `base` `rounds` times (one to four characters removed, inserted
/// from `alphabet` or replaced each time, by a fixed-seed xorshift:
/// reproducible without a dependency) and hands each copy to `check`.
fn damaged_copies(
    base: &str,
    alphabet: &str,
    rounds: usize,
    seed: u64,
    mut check: impl FnMut(&str),
) {
    let budget = std::env::var("ATOMLAB_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    let start = std::time::Instant::now();
    let mut round = 0u64;
    loop {
        // Each batch its own seed, so a longer run sees new damage.
        let batch = seed ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        damage_batch(base, alphabet, rounds, batch | 1, &mut check);
        round += 1;
        if start.elapsed().as_secs_f64() >= budget {
            break;
        }
    }
    if budget > 0.0 {
        eprintln!(
            "{} batches of {rounds} damaged copies in {:.1} s (base seed {seed:#x})",
            round,
            start.elapsed().as_secs_f64()
        );
    }
}

fn damage_batch(
    base: &str,
    alphabet: &str,
    rounds: usize,
    seed: u64,
    check: &mut impl FnMut(&str),
) {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let alphabet: Vec<char> = alphabet.chars().collect();
    let base: Vec<char> = base.chars().collect();
    for _ in 0..rounds {
        let mut t = base.clone();
        for _ in 0..(next() % 4 + 1) {
            let pos = (next() as usize) % t.len();
            match next() % 3 {
                0 => {
                    t.remove(pos);
                }
                1 => t.insert(pos, alphabet[(next() as usize) % alphabet.len()]),
                _ => t[pos] = alphabet[(next() as usize) % alphabet.len()],
            }
        }
        check(&t.iter().collect::<String>());
    }
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let text = format!("let x = {}po{}\n", "(".repeat(5000), ")".repeat(5000));
    let e = load_text("deep", "deep.cat", &text, &[]).expect_err("refused");
    assert_eq!(e.line, 1);
    let text = "let rec f x = f x\nlet y = f po\n";
    let e = load_text("loop", "loop.cat", text, &[]).expect_err("refused");
    assert_eq!(e.line, 1);
}

/// A chain of 100,000 unions is built in a loop, but every later walk of
/// its tree recursed: each operator counts toward the depth limit.
#[test]
fn a_long_chain_is_refused_not_a_stack_overflow() {
    for op in [" | ", " ; ", " & ", " \\ ", " ++ "] {
        let text = format!("let x = {}\n", vec!["po"; 100_000].join(op));
        let e = load_text("chain", "chain.cat", &text, &[]).expect_err("refused");
        assert_eq!(e.line, 1, "{e}");
        assert!(e.message.contains("nested deeper than"), "{e}");
    }
    // Real models chain a few dozen at most.
    let text = format!("let x = {}\nacyclic x as a\n", vec!["po"; 150].join(" | "));
    load_text("chain", "chain.cat", &text, &[]).expect("a chain of 150 loads");
}

/// herd7 cfg files: every truncation and random damage gives a cfg or an
/// error at a line and column of the text.
#[test]
fn damaged_cfg_files_are_handled() {
    const CFG: &str = "# a herd7 cfg\nmodel linux-kernel.cat\nbell linux-kernel.bell\nmacros linux-kernel.def\nvariant lkmmv2, before-rcu\ngraph columns\nsquished true\n";
    let check_cfg = |text: &str| {
        if let Err(e) = atomlab_cat::conf::parse("fuzz.cfg", std::path::Path::new("/tmp"), text) {
            let lines = text.lines().count().max(1) as u32;
            assert!(e.line >= 1 && e.line <= lines, "{e} for {text:?}");
            assert!(e.column >= 1 && !e.message.is_empty(), "{e} for {text:?}");
        }
    };
    let conf =
        atomlab_cat::conf::parse("fuzz.cfg", std::path::Path::new("/tmp"), CFG).expect("loads");
    assert_eq!(conf.variants, ["lkmmv2", "before-rcu"]);
    for (i, _) in CFG.char_indices() {
        check_cfg(&CFG[..i]);
    }
    damaged_copies(
        CFG,
        "#\n ,modelbellvariantmacros.cat\t=",
        1500,
        0x51ed_270b_1234_5679,
        check_cfg,
    );
}

#[test]
fn runaway_recursion_through_nested_expressions_is_refused() {
    // Each call nests a few expressions: bounded in all, not per call.
    let text = "let rec f x = ((((((((((f (x | x)))))))))))\nlet y = f po\n";
    let e = load_text("loop", "loop.cat", text, &[]).expect_err("refused");
    assert_eq!(e.line, 1, "{e}");
}

/// A bell file in the shape of the kernel's linux-kernel.bell (written
/// here, not copied): enums and `instructions`, tag sets, a `let rec`
/// mixing sets and relations, a variant test, flags, and lock.cat-style
/// reads-from generation with `map` and `cross`.
const BELL: &str = r#""a bell for the fuzz test"
enum Accesses = 'once (* marked *) || 'acquire || 'release
instructions R[Accesses]
instructions W[Accesses]
enum Fences = 'mb || 'rcu-lock || 'rcu-unlock
instructions F[Fences]
let Marked = Once | Acquire | Release
let rec opened = Rcu-lock \ domain(paired)
    and closed = Rcu-unlock \ range(paired)
    and paired = paired | (([opened] ; po ; [closed]) \ (po ; [opened | closed] ; po))
flag ~empty Rcu-lock \ domain(paired) as unpaired
flag ~empty (if "v2" then 0 else _) as needs-v2
let pair-to-relation p = p ++ 0
let candidates e = (W * {e}) & loc & ext
let all-candidates = map (fun e -> map pair-to-relation (candidates e)) (R & Once)
with picked from cross(all-candidates)
let data = (data ; rfi)* ; data
"#;

fn check_bell(dir: &std::path::Path, text: &str) {
    let bell = dir.join("fuzz.bell");
    let model = dir.join("fuzz.cat");
    std::fs::write(&bell, text).unwrap();
    let opts = atomlab_cat::Options {
        bell: Some(bell.clone()),
        variants: vec!["v2".into()],
        cat_path: Vec::new(),
    };
    if let Err(e) = atomlab_cat::load_with("fuzz", &model, &opts) {
        let lines = if e.file == bell.display().to_string() {
            text.lines().count().max(1) as u32 + 1
        } else {
            assert_eq!(e.file, model.display().to_string(), "{e}");
            // The model uses the bell's names: unknown when damaged.
            3
        };
        assert!(e.line >= 1 && e.line <= lines, "{e} for {text:?}");
        assert!(e.column >= 1, "{e} for {text:?}");
        assert!(!e.message.is_empty());
    }
}

fn bell_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("atomlab-cat-fuzz-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("fuzz.cat"),
        "\"uses the bell\"\nacyclic [Marked] ; po ; [Marked] | rf | co | fr | picked as m\n",
    )
    .unwrap();
    d
}

#[test]
fn the_full_bell_loads() {
    let d = bell_dir("full");
    std::fs::write(d.join("fuzz.bell"), BELL).unwrap();
    let opts = atomlab_cat::Options {
        bell: Some(d.join("fuzz.bell")),
        variants: vec!["v2".into()],
        cat_path: Vec::new(),
    };
    let m = atomlab_cat::load_with("fuzz", &d.join("fuzz.cat"), &opts).expect("loads");
    assert!(m.checks().contains(&"unpaired"));
    assert!(m.checks().contains(&"cross"), "{:?}", m.checks());
}

#[test]
fn every_truncation_of_a_bell_is_handled() {
    let d = bell_dir("truncated");
    for (i, _) in BELL.char_indices() {
        check_bell(&d, &BELL[..i]);
    }
}

#[test]
fn random_damage_to_a_bell_is_handled() {
    let d = bell_dir("damaged");
    damaged_copies(
        BELL,
        "()[]{}|&\\;*+?~^-1=>,'\"_ \nenuminstructionsletrecmapcross0#",
        1500,
        0x9e37_79b9_7f4a_7c15,
        |t| check_bell(&d, t),
    );
}

/// `map` and `cross` over an execution's events only in lock.cat's form:
/// other uses are refused with the position of the set mapped over.
#[test]
fn map_over_events_is_refused_outside_cross_candidates() {
    for (text, at) in [
        // f(e) is not a set of edges into e.
        (
            "let s = map (fun e -> map (fun p -> p ++ 0) (W * W)) R\n",
            (1, 54),
        ),
        // f(e) is not a set of one-edge relations.
        ("let s = map (fun e -> {e}) R\n", (1, 28)),
        // cross of something else.
        ("with x from cross(po)\n", (1, 18)),
    ] {
        let e = load_text("m", "m.cat", text, &[]).expect_err(text);
        assert_eq!((e.line, e.column), at, "{e} for {text}");
    }
}
