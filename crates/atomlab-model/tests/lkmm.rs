//! The `lkmm` model (models/lkmm.rs): which tests it judges, the data-race
//! flag, and agreement with herd7 7.58's logs on the Linux-kernel corpus of
//! ../shared/litmus-more/linux when it is present beside the repository.
//! The golden tests in tests/litmus/linux (herd7's logs beside them) check
//! grace periods, read-side critical sections and lock ordering.

use std::path::Path;

use atomlab_model::{check_test, CheckOptions, ModelOutcome, ModelResult, Observation};

mod support;
use support::{flags, summary};

fn parse(src: &str) -> atomlab_litmus::Test {
    atomlab_litmus::parse("t.litmus", src).expect("the test parses")
}

fn lkmm(src: &str) -> ModelResult {
    match check_test(&parse(src), &["lkmm"], &CheckOptions::default()).remove(0) {
        ModelOutcome::Done(r) => *r,
        other => panic!("lkmm did not judge the test: {other:?}"),
    }
}

const PLAIN_MP: &str = "C plain-MP
{}
P0(int *x, int *y)
{
	*x = 1;
	smp_store_release(y, 1);
}
P1(int *x, int *y)
{
	int r0;
	int r1;
	r0 = READ_ONCE(*y);
	r1 = *x;
}
exists (1:r0=1 /\\ 1:r1=0)
";

#[test]
fn a_plain_read_not_ordered_after_the_flag_races() {
    let r = lkmm(PLAIN_MP);
    assert_eq!(r.observation, Observation::Sometimes);
    assert_eq!(r.flags, vec!["data-race"]);
}

#[test]
fn a_plain_read_after_an_acquire_races_unless_the_flag_was_seen() {
    // As herd7 7.58 reports with linux-kernel.cat: ordered after the
    // acquire, the read cannot see x=0 once the flag is seen, but when the
    // flag is 0 it still reads x while P0 writes it, a race.
    let acquire = PLAIN_MP.replace("r0 = READ_ONCE(*y);", "r0 = smp_load_acquire(y);");
    let r = lkmm(&acquire);
    assert_eq!(r.observation, Observation::Never);
    assert_eq!(r.flags, vec!["data-race"]);
    // Reading x only when the flag was seen: no race.
    let guarded = acquire.replace("r1 = *x;", "if (r0)\n\t\tr1 = *x;");
    let r = lkmm(&guarded);
    assert_eq!(r.observation, Observation::Never);
    assert!(r.flags.is_empty(), "{:?}", r.flags);
}

#[test]
fn lkmm_does_not_judge_c11_atomics_and_c11_models_do_not_judge_linux_tests() {
    let linux = parse(PLAIN_MP);
    let out = check_test(
        &linux,
        &["lkmm", "sc", "c11", "x86tso"],
        &CheckOptions::default(),
    );
    assert!(matches!(out[0], ModelOutcome::Done(_)));
    assert!(matches!(out[1], ModelOutcome::Done(_)));
    assert!(matches!(out[2], ModelOutcome::NotApplicable { .. }));
    assert!(matches!(out[3], ModelOutcome::NotApplicable { .. }));
    let c11 = parse(
        "C MP
{}
P0(atomic_int *x) { atomic_store_explicit(x, 1, memory_order_relaxed); }
exists (x=1)
",
    );
    let out = check_test(&c11, &["lkmm"], &CheckOptions::default());
    assert!(matches!(out[0], ModelOutcome::NotApplicable { .. }));
}

#[test]
fn a_c_test_with_plain_accesses_only_is_judged_by_lkmm_and_says_so() {
    // herd7 7.58 with linux-kernel.cfg: `Observation plain-only Always 1 0`
    // (issue 37); it was NotApplicable, a silent skip under `-m lkmm`.
    let t = parse("C plain-only\n{ }\nP0(int *x) { *x = 1; }\nexists (x=1)\n");
    assert!(t.is_plain_c() && !t.is_linux());
    let out = check_test(&t, &["lkmm", "c11"], &CheckOptions::default());
    let ModelOutcome::Done(r) = &out[0] else {
        panic!("lkmm did not judge a plain-only test: {:?}", out[0]);
    };
    assert_eq!(r.observation, Observation::Always);
    assert_eq!((r.positive, r.negative), (1, 0));
    assert_eq!(r.reading, Some(atomlab_model::check::PLAIN_AS_LINUX));
    // c11 still judges it as C11, and says nothing about how it read it.
    let ModelOutcome::Done(c11) = &out[1] else {
        panic!("c11 did not judge it: {:?}", out[1]);
    };
    assert_eq!(c11.reading, None);
}

#[test]
fn a_plain_only_test_is_read_as_linux_kernel_c_under_lkmm() {
    // Two threads racing with plain accesses: lkmm flags the data race, as
    // herd7 7.58 does for any C test under linux-kernel.cfg (`Sometimes 1
    // 1`, `Flag data-race`).
    let r = lkmm(
        "C plain-race
{}
P0(int *x) { *x = 1; }
P1(int *x) { int r0; r0 = *x; }
exists (1:r0=1)
",
    );
    assert_eq!(r.observation, Observation::Sometimes);
    assert_eq!(r.flags, vec!["data-race"]);
}

#[test]
fn a_constant_chosen_in_an_if_and_stored_after_the_join_is_no_dependency() {
    // herd7 7.58 with linux-kernel.cfg: `Sometimes 1 4`, States 2 (issue
    // 37): the store writes one of two constants, so the load-buffering
    // cycle through P1's data dependency is allowed. atomlab said Never.
    let r = lkmm(
        "C if-constant
{}
P0(int *x, int *y)
{
	int r1;
	int r3;

	r1 = 1;
	r3 = READ_ONCE(*x);
	if (r3 == 0)
		r1 = 0;
	WRITE_ONCE(*y, r1);
}
P1(int *x, int *y)
{
	int r2;

	r2 = READ_ONCE(*y);
	WRITE_ONCE(*x, r2);
}
exists (0:r1=1)
",
    );
    assert_eq!(r.observation, Observation::Sometimes);
    assert_eq!((r.positive, r.negative), (1, 4));
    assert_eq!(r.states.len(), 2);
}

#[test]
fn a_constant_every_path_overwrites_before_the_store_is_no_seed() {
    // r0 = 1 never reaches the store: both branches assign r0 again. The
    // value 1 reaches y only through the load-buffering cycle of the else
    // branch (r0 = r2), whose value herd7 leaves unsolved and drops with
    // the branch's condition: herd7 7.58, `Always 4 0`, States 1 (s37's
    // LKIF-078). A seed taken from every assignment of r0 gave 1:r0=1.
    let r = lkmm(
        "C overwritten
{}
P0(int *x, int *y)
{
	int r0;
	int r2;

	r0 = 1;
	r2 = *x;
	if (r2 != 1) {
		r0 = 0;
	} else {
		r0 = r2;
	}
	smp_wmb();
	WRITE_ONCE(*y, r0);
}
P1(int *x, int *y)
{
	int r0;

	r0 = READ_ONCE(*y);
	WRITE_ONCE(*x, r0);
}
exists (1:r0=0)
",
    );
    assert_eq!(r.observation, Observation::Always);
    assert_eq!(r.states.len(), 1, "{:?}", r.states);
}

#[test]
fn a_lock_taken_twice_by_one_thread_deadlocks() {
    // lock.cat's lock-nest axiom: no execution takes the lock again, so
    // no final state at all.
    let r = lkmm(
        "C nest
{}
P0(int *x, spinlock_t *s)
{
	spin_lock(s);
	spin_lock(s);
	WRITE_ONCE(*x, 1);
}
exists (x=1)
",
    );
    assert!(r.states.is_empty(), "{:?}", r.states);
}

/// Every test of ../shared/litmus-more/linux parses and lkmm's Observation,
/// final states and flags (none there) equal herd7's (`NAME.lkmm.expected`).
#[test]
fn linux_corpus_agrees_with_herd7() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/litmus-more/linux");
    if !dir.is_dir() {
        eprintln!("no ../shared/litmus-more/linux: skipped");
        return;
    }
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "litmus"))
        .collect();
    files.sort();
    assert!(files.len() >= 79, "{} tests", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let expected = f.with_extension("lkmm.expected");
        let want_log = std::fs::read_to_string(&expected).unwrap();
        let (want, want_flags) = (summary(&want_log), flags(&want_log));
        let test = match atomlab_litmus::parse_file(f) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{e}"));
                continue;
            }
        };
        let r = match check_test(&test, &["lkmm"], &CheckOptions::default()).remove(0) {
            ModelOutcome::Done(r) => r,
            other => {
                failures.push(format!("{}: {other:?}", f.display()));
                continue;
            }
        };
        let log = atomlab_model::herd::log(&test, &r);
        let got = summary(&log);
        if got != want {
            failures.push(format!("{}: herd7 {want:?}, atomlab {got:?}", f.display()));
        }
        if flags(&log) != want_flags {
            failures.push(format!(
                "{}: herd7 flags {want_flags:?}, atomlab flags {:?}",
                f.display(),
                flags(&log)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const LB_PLAIN_COPY: &str = "C LB+plain-copy
{}
P0(int *x, int *y)
{
	int r1;
	r1 = *x;
	smp_mb();
	*y = r1;
}
P1(int *x, int *y)
{
	int r2;
	r2 = *y;
	smp_mb();
	*x = r2;
}
exists (0:r1=0)
";

/// Issue 37: the cycle's value is one symbol, herd7's (`S8`, herd7 7.58's
/// log of this test: `0:r1=S8;` and `0:r1=0;`, Positive 3, Negative 1):
/// the executions that differ only in the value are one, and the
/// condition is false on it.
#[test]
fn a_thin_air_value_is_one_symbol_counted_once() {
    let r = lkmm(LB_PLAIN_COPY);
    let states: Vec<&Vec<atomlab_litmus::Value>> = r.states.iter().map(|(s, _)| s).collect();
    assert_eq!(
        states,
        [
            &vec![atomlab_litmus::Value::Int(0)],
            &vec![atomlab_litmus::Value::Sym(8)]
        ],
        "{:?}",
        r.states
    );
    assert_eq!((r.positive, r.negative), (3, 1));
    assert_eq!(r.observation, Observation::Sometimes);
    assert!(r.flags.contains(&"data-race"), "{:?}", r.flags);
}

/// A thin-air value in a thread whose code herd7's numbering is not
/// followed for (an atomic RMW) is refused, not numbered wrongly.
#[test]
fn a_thin_air_value_that_cannot_be_numbered_is_refused() {
    let src = LB_PLAIN_COPY
        .replace("\tr2 = *y;\n", "\tr2 = *y;\n\tatomic_inc(v);\n")
        .replace("P1(int *x, int *y)", "P1(int *x, int *y, atomic_t *v)");
    match check_test(&parse(&src), &["lkmm"], &CheckOptions::default()).remove(0) {
        ModelOutcome::Failed {
            error: atomlab_model::CheckError::ThinAir(m),
            ..
        } => assert_eq!(m, "lkmm"),
        other => panic!("expected a thin-air refusal: {other:?}"),
    }
}
