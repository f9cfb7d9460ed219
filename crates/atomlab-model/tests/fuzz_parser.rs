//! Property-based fuzzing of the litmus parser and the checker behind it
//! (proptest): for mutated versions of the golden tests and for random text
//! in the litmus alphabet, parsing returns a test or a positioned error and
//! never panics; whatever parses is checked under every model with a short
//! deadline, which must return a verdict, TIMEOUT, n/a or an error, never
//! panic or hang. The edits include issue 22's hostile shapes: nesting
//! thousands deep (parentheses, unary operators, operator chains, `if`s,
//! condition connectives), and an initial state that gives one register or
//! location twice (as written, or under an alias), which must be refused.
//!
//! `cargo test` runs a small number of cases. A long run, for a given time:
//! `ATOMLAB_FUZZ_SECS=600 nice -n 19 cargo test --release -p atomlab-model --test fuzz_parser -- --nocapture`
//! (BENCHMARKS.md records how long it ran clean).

use std::path::Path;
use std::time::{Duration, Instant};

use atomlab_model::{check_test, CheckOptions, MODEL_NAMES};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn seeds() -> Vec<String> {
    atomlab_litmus::inputs::litmus_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/litmus"),
    )
    .iter()
    .map(|f| std::fs::read_to_string(f).unwrap())
    .collect()
}

/// One edit to a test's text.
#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, String),
    Replace(usize, String),
    Duplicate(usize, usize),
    Truncate(usize),
    /// `piece` repeated `n` times at a position.
    Deep(usize, usize, usize),
    /// The first item of the initial state given again.
    InitAgain,
}

/// Pieces that nest when repeated.
const DEEP: &[&str] = &[
    "(", "-", "!", "~", "1+", "if (1) {", "x=1 /\\ ", "x=1 \\/ ", "((",
];

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    "|",
    ",",
    ":",
    "=",
    "!=",
    "/\\",
    "\\/",
    "~",
    "*",
    "&",
    "#",
    "$",
    "-",
    "P0",
    "P1",
    "P9",
    "0:",
    "1:",
    "7:",
    "X0",
    "W1",
    "WZR",
    "EAX",
    "r0",
    "x",
    "y",
    "exists",
    "forall",
    "~exists",
    "filter",
    "locations",
    "LDR",
    "STR",
    "LDAR",
    "STLR",
    "CAS",
    "SWP",
    "LDADDAL",
    "DMB",
    "ISB",
    "CBNZ",
    "B.EQ",
    "L0:",
    "MOV",
    "EOR",
    "MFENCE",
    "LOCK",
    "XCHG",
    "CMPXCHG",
    "X86_64",
    "movl",
    "movq",
    "%eax",
    "%rax",
    "%r8d",
    "$1",
    "(x)",
    "(%rax)",
    "0(%rax,%rbx,8)",
    "xchgl",
    "lock",
    "addq",
    "cmp",
    "je",
    "jmp",
    "ret",
    "mfence",
    "RISCV",
    "lw",
    "sd",
    "lw.aq",
    "sw.rl",
    "lr.w",
    "sc.w.rl",
    "amoswap.w.aqrl",
    "amomaxu.d",
    "fence",
    "rw,rw",
    "fence.tso",
    "fence.i",
    "x0",
    "x5",
    "t0",
    "0(x6)",
    "(x5)",
    "bne",
    "LC00:",
    "ori",
    "[x]",
    "atomic_load_explicit",
    "atomic_store_explicit",
    "atomic_fetch_add_explicit",
    "atomic_compare_exchange_strong",
    "memory_order_seq_cst",
    "memory_order_relaxed",
    "READ_ONCE(*x)",
    "WRITE_ONCE(*y, 1);",
    "READ_ONCE",
    "smp_mb();",
    "smp_rmb()",
    "smp_wmb()",
    "smp_load_acquire(x)",
    "smp_store_release(y, 1)",
    "smp_mb__after_spinlock();",
    "smp_mb__before_atomic()",
    "spin_lock(s);",
    "spin_unlock(s);",
    "spin_trylock(s)",
    "spin_is_locked(s)",
    "spinlock_t *s",
    "rcu_read_lock();",
    "rcu_read_unlock();",
    "synchronize_rcu();",
    "srcu_read_lock(s)",
    "srcu_read_unlock(s, r0);",
    "srcu_down_read(s)",
    "srcu_up_read(s, r0);",
    "synchronize_srcu(s);",
    "synchronize_srcu_expedited(s);",
    "smp_mb__after_srcu_read_unlock();",
    "struct srcu_struct *s",
    "atomic_dec_and_test(v)",
    "atomic_inc_and_test(v)",
    "atomic_sub_and_test(2, v)",
    "atomic_add_negative(-1, v)",
    "atomic_add_negative_acquire(-1, v)",
    "rcu_dereference(*p)",
    "rcu_assign_pointer(*p, x)",
    "xchg(x, 1)",
    "cmpxchg_acquire(x, 0, 1)",
    "atomic_add_unless(v, 1, 0)",
    "atomic_fetch_add_release(1, v)",
    "atomic_inc(v)",
    "(int *)",
    "//",
    "/*",
    "*/",
    "if",
    "else",
    "int",
    "(*",
    "*)",
    "\"",
    "\n",
    " ",
    "0x",
    "99999999999999999999",
    "-1",
    "é",
    "\0",
];

fn edit() -> impl Strategy<Value = Edit> {
    let tok = proptest::sample::select(TOKENS).prop_map(str::to_string);
    let text = prop_oneof![tok.clone(), "[ -~\n]{0,12}"];
    prop_oneof![
        (any::<usize>(), 1usize..20).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), text.clone()).prop_map(|(a, s)| Edit::Insert(a, s)),
        (any::<usize>(), text).prop_map(|(a, s)| Edit::Replace(a, s)),
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Edit::Duplicate(a, n)),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), 0..DEEP.len(), 400usize..20_000).prop_map(|(a, k, n)| Edit::Deep(a, k, n)),
        Just(Edit::InitAgain),
    ]
}

fn boundary(s: &str, at: usize) -> usize {
    let mut i = at % (s.len() + 1);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(mut s: String, edits: &[Edit]) -> String {
    for e in edits {
        match e {
            Edit::Delete(a, n) => {
                let i = boundary(&s, *a);
                let j = boundary(&s, i + n);
                if j > i {
                    s.replace_range(i..j, "");
                }
            }
            Edit::Insert(a, t) => {
                let i = boundary(&s, *a);
                s.insert_str(i, t);
            }
            Edit::Replace(a, t) => {
                let i = boundary(&s, *a);
                let j = boundary(&s, i + t.len());
                if j >= i {
                    s.replace_range(i..j, t);
                }
            }
            Edit::Duplicate(a, n) => {
                let i = boundary(&s, *a);
                let j = boundary(&s, i + n);
                if j > i {
                    let piece = s[i..j].to_string();
                    s.insert_str(j, &piece);
                }
            }
            Edit::Truncate(a) => {
                let i = boundary(&s, *a);
                s.truncate(i);
            }
            Edit::Deep(a, k, n) => {
                let i = boundary(&s, *a);
                s.insert_str(i, &DEEP[*k].repeat(*n));
            }
            Edit::InitAgain => {
                // `{ a; b; }` becomes `{ a; a; b; }`.
                if let (Some(open), Some(close)) = (s.find('{'), s.find('}')) {
                    if open < close {
                        let body = &s[open + 1..close];
                        if let Some(item) = body.split(';').map(str::trim).find(|t| t.contains('='))
                        {
                            let item = format!(" {item};");
                            s.insert_str(open + 1, &item);
                        }
                    }
                }
            }
        }
    }
    s
}

/// Parses and, if that works, checks under every model with a deadline.
fn exercise(src: &str) {
    match atomlab_litmus::parse("<fuzz>", src) {
        Err(e) => {
            assert!(
                e.line >= 1 && e.column >= 1,
                "error without a position: {e}"
            );
            assert!(!e.message.is_empty());
        }
        Ok(t) => {
            let opts = CheckOptions {
                deadline: Some(Instant::now() + Duration::from_millis(50)),
                explain: true,
                ..CheckOptions::default()
            };
            let start = Instant::now();
            let out = check_test(&t, MODEL_NAMES, &opts);
            assert_eq!(out.len(), MODEL_NAMES.len());
            // The deadline is honoured (generously, for a loaded machine).
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "check took {:?}",
                start.elapsed()
            );
        }
    }
}

fn cases() -> u32 {
    std::env::var("ATOMLAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
}

/// Seconds to keep fuzzing (0: one batch of `cases()`).
fn secs() -> f64 {
    std::env::var("ATOMLAB_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// Runs batches of `cases()` with fresh seeds until `secs()` have passed;
/// returns the number of cases run.
fn fuzz<S: Strategy>(strategy: &S, test: impl Fn(S::Value)) -> u64 {
    let start = Instant::now();
    let mut total = 0u64;
    loop {
        let mut runner = TestRunner::new(Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(strategy, |v| {
                test(v);
                Ok(())
            })
            .unwrap();
        total += u64::from(cases());
        if start.elapsed().as_secs_f64() >= secs() {
            return total;
        }
    }
}

#[test]
fn mutated_tests_never_panic() {
    let seeds = seeds();
    assert!(!seeds.is_empty());
    let strategy = (0..seeds.len(), proptest::collection::vec(edit(), 1..6));
    let start = Instant::now();
    let n = fuzz(&strategy, |(k, edits)| {
        exercise(&apply(seeds[k].clone(), &edits))
    });
    eprintln!(
        "mutated_tests_never_panic: {n} cases in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}

/// The X86_64 and RISC-V golden tests alone, so that each run mutates the
/// newer formats as often as the older ones together.
#[test]
fn mutated_x86_64_and_riscv_tests_never_panic() {
    let seeds: Vec<String> = seeds()
        .into_iter()
        .filter(|s| s.starts_with("X86_64") || s.starts_with("RISCV"))
        .collect();
    assert!(seeds.len() >= 10, "{} seeds", seeds.len());
    let strategy = (0..seeds.len(), proptest::collection::vec(edit(), 1..6));
    let start = Instant::now();
    let n = fuzz(&strategy, |(k, edits)| {
        exercise(&apply(seeds[k].clone(), &edits))
    });
    eprintln!(
        "mutated_x86_64_and_riscv_tests_never_panic: {n} cases in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}

/// Every golden test whose initial state gives a value, with that item
/// given again, is refused at a position, naming it given twice.
#[test]
fn an_initial_value_given_twice_is_always_refused() {
    let mut refused = 0;
    for seed in seeds() {
        let doubled = apply(seed.clone(), &[Edit::InitAgain]);
        if doubled == seed {
            continue;
        }
        // The golden error tests are refused for their own reason first.
        let refused_anyway = atomlab_litmus::parse("<fuzz>", &seed).is_err();
        match atomlab_litmus::parse("<fuzz>", &doubled) {
            Ok(_) => panic!("a value given twice was accepted:\n{doubled}"),
            Err(e) => {
                assert!(
                    refused_anyway || e.message.contains("initialised twice"),
                    "{e}\n{doubled}"
                );
                assert!(e.line >= 1 && e.column >= 1, "{e}");
                refused += 1;
            }
        }
    }
    assert!(
        refused >= 30,
        "only {refused} golden tests have an initial value"
    );
}

#[test]
fn random_text_never_panics() {
    let tok = proptest::sample::select(TOKENS).prop_map(str::to_string);
    let strategy =
        proptest::collection::vec(prop_oneof![tok, "[ -~]{0,6}"], 0..60).prop_map(|v| v.join(" "));
    let heads = [
        "C t\n{}\n",
        "X86 t\n{}\n",
        "X86_64 t\n{}\n",
        "AArch64 t\n{}\n",
        "RISCV t\n{ 0:x5=x; 1:x5=y; }\n",
        "",
    ];
    let start = Instant::now();
    let n = fuzz(&(0..heads.len(), strategy), |(h, body)| {
        exercise(&format!("{}{}", heads[h], body))
    });
    eprintln!(
        "random_text_never_panics: {n} cases in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}
