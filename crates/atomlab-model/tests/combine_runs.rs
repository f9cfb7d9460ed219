//! Combining the threads' runs by the values they read (src/combine.rs)
//! against visiting their whole product (`CheckOptions::unpruned`): on the
//! repository's litmus corpus and on tests written for it (chains of
//! read-modify-writes, a weak CAS that fails spuriously, filters naming
//! one thread's registers), under every built-in model and both engines,
//! the same observation, the same final states, the same counts of allowed
//! executions and the same flags. And what it is for: a 3-thread ticket
//! lock, whose product of runs no search finished, is answered. With
//! `CheckOptions::symmetry`, interchangeable threads' combinations are
//! searched once: the same states and verdicts, and under the enumerating
//! engine the same counts, multiplied back.

use std::path::Path;
use std::time::{Duration, Instant};

use atomlab_litmus::Test;
use atomlab_model::{check_test, CheckOptions, Engine, ModelOutcome, Observation, MODEL_NAMES};

fn options(engine: Engine, unpruned: bool) -> CheckOptions {
    CheckOptions {
        engine,
        unpruned,
        symmetry: false,
        deadline: Some(Instant::now() + Duration::from_secs(30)),
        ..CheckOptions::default()
    }
}

/// Per model: the verdict, its counts and flags, and the states.
fn verdicts(test: &Test, engine: Engine, unpruned: bool) -> Option<Vec<String>> {
    verdicts_with(test, &options(engine, unpruned))
}

fn verdicts_with(test: &Test, opts: &CheckOptions) -> Option<Vec<String>> {
    let engine = opts.engine;
    let mut out = Vec::new();
    for o in check_test(test, MODEL_NAMES, opts) {
        out.push(match o {
            ModelOutcome::Done(r) => format!(
                "{}: {} ok={} racy={} positive={} negative={} flags={:?} states={:?}",
                r.model,
                r.observation.word(),
                r.ok,
                r.racy,
                // The exploration counts the executions it visited, one
                // per state and model; the enumeration counts them all.
                if engine == Engine::Enumerate || r.model == "lkmm" {
                    r.positive
                } else {
                    0
                },
                if engine == Engine::Enumerate || r.model == "lkmm" {
                    r.negative
                } else {
                    0
                },
                r.flags,
                r.states
            ),
            ModelOutcome::Timeout { .. } => return None,
            ModelOutcome::NotApplicable { model, .. } => format!("{model}: n/a"),
            ModelOutcome::Failed { model, error } => format!("{model}: failed {error}"),
        });
    }
    Some(out)
}

/// Compares the two searches on `test` under both engines; `Ok(false)`
/// when the unpruned one did not finish.
fn compare(name: &str, test: &Test) -> Result<bool, String> {
    for engine in [Engine::Enumerate, Engine::Explore] {
        let Some(all) = verdicts(test, engine, true) else {
            return Ok(false);
        };
        let combined = verdicts(test, engine, false)
            .ok_or_else(|| format!("{name} ({}): timed out combined", engine.name()))?;
        if let Some((a, b)) = all.iter().zip(&combined).find(|(a, b)| a != b) {
            return Err(format!(
                "{name} ({}):\n  every combination: {a}\n  combined by value: {b}",
                engine.name()
            ));
        }
    }
    Ok(true)
}

/// Written for this test: what the tree of runs must not get wrong.
const SHAPES: &[&str] = &[
    // Three fetch-adds: each needs a write of its own (tickets 0, 1, 2).
    "C three-tickets
{ next = 0; }
P0 (atomic_int* next) {
  int t = atomic_fetch_add_explicit(next, 1, memory_order_relaxed);
}
P1 (atomic_int* next) {
  int t = atomic_fetch_add_explicit(next, 1, memory_order_relaxed);
}
P2 (atomic_int* next) {
  int t = atomic_fetch_add_explicit(next, 1, memory_order_relaxed);
}
exists (0:t=0 /\\ 1:t=0)
",
    // A strong CAS and a weak one that may fail anyway: the two runs of
    // P1 that read 0 differ in kind (an update, a read).
    "C cas-strong-weak
{ x = 0; e0 = 0; e1 = 0; }
P0 (atomic_int* x, int* e0) {
  int ok = atomic_compare_exchange_strong_explicit(x, e0, 1, memory_order_acq_rel, memory_order_acquire);
}
P1 (atomic_int* x, int* e1) {
  int ok = atomic_compare_exchange_weak(x, e1, 2);
}
exists (0:ok=1 /\\ 1:ok=0)
",
    // Exchanges that pass a value along, and a plain reader.
    "C exchange-chain
{ x = 0; }
P0 (atomic_int* x) {
  int a = atomic_exchange_explicit(x, 1, memory_order_acq_rel);
}
P1 (atomic_int* x) {
  int b = atomic_exchange_explicit(x, 2, memory_order_acq_rel);
}
P2 (atomic_int* x) {
  int c = atomic_load_explicit(x, memory_order_acquire);
  int d = atomic_load_explicit(x, memory_order_acquire);
}
exists (2:c=2 /\\ 2:d=1)
",
    // A filter with one conjunct per thread, and one across two threads.
    "C filtered-mp
{ x = 0; y = 0; }
P0 (atomic_int* x, atomic_int* y) {
  atomic_store_explicit(x, 1, memory_order_relaxed);
  atomic_store_explicit(y, 1, memory_order_release);
}
P1 (atomic_int* x, atomic_int* y) {
  int r0 = atomic_load_explicit(y, memory_order_acquire);
  int r1 = atomic_load_explicit(x, memory_order_relaxed);
}
P2 (atomic_int* x, atomic_int* y) {
  int r2 = atomic_load_explicit(y, memory_order_relaxed);
}
filter (1:r0=1 /\\ (2:r2=1 \\/ 1:r1=0))
exists (1:r1=0)
",
];

/// The repository's litmus corpus and `shapes`, each with its name.
fn corpus_and(shapes: &[&str]) -> Vec<(String, Test)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/litmus");
    let mut tests: Vec<(String, Test)> = atomlab_litmus::inputs::litmus_files(&dir)
        .iter()
        .filter_map(|f| Some((f.display().to_string(), atomlab_litmus::parse_file(f).ok()?)))
        .collect();
    for src in shapes {
        let t = atomlab_litmus::parse("shape.litmus", src).expect("parses");
        tests.push((t.name.clone(), t));
    }
    tests
}

#[test]
fn combining_runs_by_value_keeps_every_answer() {
    let tests = corpus_and(SHAPES);
    let (mut compared, mut bad) = (0, Vec::new());
    for (name, test) in &tests {
        match compare(name, test) {
            Ok(true) => compared += 1,
            Ok(false) => {}
            Err(e) => bad.push(e),
        }
    }
    eprintln!("combine: {compared} of {} tests compared", tests.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(compared > 100, "only {compared} compared");
}

/// A 3-thread ticket lock (each thread takes a ticket, waits until it is
/// served, increments the data, serves the next), its spin loop cut by a
/// filter as `verify` cuts it, with the given orderings of the wait and
/// the release.
fn ticket3(acquire: &str, release: &str) -> Test {
    let thread = |i: usize| {
        format!(
            "P{i} (atomic_int* next, atomic_int* serving, int* data) {{
  int t = atomic_fetch_add_explicit(next, 1, memory_order_relaxed);
  int s = atomic_load_explicit(serving, {acquire});
  int ok = 0;
  if (s == t) {{
    ok = 1;
    int d = *data;
    *data = d + 1;
    int o = atomic_load_explicit(serving, memory_order_relaxed);
    atomic_store_explicit(serving, o + 1, {release});
  }}
}}
"
        )
    };
    let src = format!(
        "C ticket3\n{{ next = 0; serving = 0; data = 0; }}\n{}{}{}filter (0:ok=1 /\\ 1:ok=1 /\\ 2:ok=1)\nexists (~data=3)\n",
        thread(0),
        thread(1),
        thread(2)
    );
    atomlab_litmus::parse("ticket3.litmus", &src).expect("parses")
}

/// Symmetry against none, on the shapes above, the ticket lock with each
/// ordering and three copies of one counter thread: per model, the same
/// observation and states under both engines; under the enumerating one
/// the same counts of allowed executions and of candidates too.
#[test]
fn interchangeable_threads_are_searched_once_with_the_same_answers() {
    let mut tests: Vec<Test> = SHAPES
        .iter()
        .map(|src| atomlab_litmus::parse("shape.litmus", src).expect("parses"))
        .collect();
    tests.push(ticket3("memory_order_acquire", "memory_order_release"));
    tests.push(ticket3("memory_order_relaxed", "memory_order_relaxed"));
    let counter = |i: usize| {
        format!(
            "P{i} (atomic_int* x, int* y) {{\n  int r = atomic_load_explicit(x, memory_order_relaxed);\n  atomic_store_explicit(x, r + 1, memory_order_relaxed);\n  int q = *y;\n  *y = q + 1;\n}}\n"
        )
    };
    let src = format!(
        "C counter3\n{{ x = 0; y = 0; }}\n{}{}{}exists (x=3 /\\ ~y=3)\n",
        counter(0),
        counter(1),
        counter(2)
    );
    tests.push(atomlab_litmus::parse("counter3.litmus", &src).expect("parses"));
    for test in &tests {
        for engine in [Engine::Enumerate, Engine::Explore] {
            let run = |symmetry: bool| {
                let opts = CheckOptions {
                    symmetry,
                    ..options(engine, false)
                };
                check_test(test, &["sc", "c11", "aarch64", "riscv", "x86tso"], &opts)
            };
            let (all, once) = (run(false), run(true));
            for (a, b) in all.iter().zip(&once) {
                let (ModelOutcome::Done(a), ModelOutcome::Done(b)) = (a, b) else {
                    assert_eq!(format!("{a:?}"), format!("{b:?}"), "{}", test.name);
                    continue;
                };
                let at = format!("{} under {} ({})", test.name, a.model, engine.name());
                assert_eq!(
                    (a.observation, &a.states, a.racy),
                    (b.observation, &b.states, b.racy),
                    "{at}"
                );
                if engine == Engine::Enumerate {
                    assert_eq!(
                        (a.positive, a.negative, a.candidates),
                        (b.positive, b.negative, b.candidates),
                        "{at}: counts"
                    );
                }
            }
        }
    }
}

/// The reason for it: the 3-thread ticket lock above. Each thread has
/// runs for every ticket, every value served and every data value; their
/// product ran past any limit. Combined by value, only runs whose tickets
/// differ and whose reads someone writes meet, and the test is answered:
/// no increment is lost under any model.
#[test]
fn a_three_thread_ticket_lock_is_answered() {
    let test = ticket3("memory_order_acquire", "memory_order_release");
    for engine in [Engine::Explore, Engine::Enumerate] {
        for o in check_test(
            &test,
            &["c11", "aarch64", "x86tso"],
            &options(engine, false),
        ) {
            let ModelOutcome::Done(r) = o else {
                panic!("{}: not answered: {o:?}", engine.name());
            };
            assert_eq!(
                r.observation,
                Observation::Never,
                "{} under {}: {:?}",
                engine.name(),
                r.model,
                r.states
            );
            assert!(!r.racy, "{} under {}: a race", engine.name(), r.model);
        }
    }
}

/// Three threads each taking a ticket with an exclusive pair (the pairs
/// that fail are filtered out), then incrementing the data and serving
/// the next: pairs that read one write are cut by value (no two pairs
/// can read the same write).
const TICKETS_LLSC: &str = "AArch64 tickets-llsc
{ 0:X0=next; 0:X1=serving; 0:X2=data; 1:X0=next; 1:X1=serving; 1:X2=data; 2:X0=next; 2:X1=serving; 2:X2=data; }
 P0               | P1               | P2               ;
 LDAXR W3,[X0]    | LDAXR W3,[X0]    | LDAXR W3,[X0]    ;
 ADD W4,W3,#1     | ADD W4,W3,#1     | ADD W4,W3,#1     ;
 STLXR W5,W4,[X0] | STLXR W5,W4,[X0] | STLXR W5,W4,[X0] ;
 LDAR W6,[X1]     | LDAR W6,[X1]     | LDAR W6,[X1]     ;
 LDR W7,[X2]      | LDR W7,[X2]      | LDR W7,[X2]      ;
 ADD W7,W7,#1     | ADD W7,W7,#1     | ADD W7,W7,#1     ;
 STR W7,[X2]      | STR W7,[X2]      | STR W7,[X2]      ;
 ADD W8,W6,#1     | ADD W8,W6,#1     | ADD W8,W6,#1     ;
 STLR W8,[X1]     | STLR W8,[X1]     | STLR W8,[X1]     ;
filter (0:X5=0 /\\ 1:X5=0 /\\ 2:X5=0)
exists (~[data]=3)
";

/// Probing the threads' shared prefixes (src/combine.rs, at every step of
/// the search here, not only where many combinations remain) against the
/// whole product of runs: on the corpus, the shapes above, the ticket
/// locks (C, compiled to each ISA, and AArch64 exclusive pairs), under
/// every built-in model, the same observation, states and flags.
#[test]
fn probing_prefixes_keeps_every_answer() {
    let shapes: Vec<&str> = SHAPES.iter().copied().chain([TICKETS_LLSC]).collect();
    let mut tests = corpus_and(&shapes);
    for (a, r) in [
        ("memory_order_acquire", "memory_order_release"),
        ("memory_order_relaxed", "memory_order_relaxed"),
    ] {
        tests.push((format!("ticket3 {a} {r}"), ticket3(a, r)));
    }
    let (mut compared, mut bad) = (0, Vec::new());
    for (name, test) in &tests {
        let Some(all) = verdicts(test, Engine::Explore, true) else {
            continue;
        };
        let probed = verdicts_with(
            test,
            &CheckOptions {
                probe_all: true,
                ..options(Engine::Explore, false)
            },
        );
        match probed {
            None => bad.push(format!("{name}: timed out probing")),
            Some(probed) => {
                if let Some((a, b)) = all.iter().zip(&probed).find(|(a, b)| a != b) {
                    bad.push(format!("{name}:\n  every combination: {a}\n  probed: {b}"));
                }
                compared += 1;
            }
        }
    }
    eprintln!("probe: {compared} of {} tests compared", tests.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(compared > 100, "only {compared} compared");
}
