//! On an x86-64 host: every state the CPU shows is one x86-TSO allows, SB
//! shows its relaxed outcome, and the forbidden shapes never show theirs.
//! Tests over ../shared/litmus skip (with a message) when it is absent.

use std::path::{Path, PathBuf};

use atomlab_litmus::{Test, Value};
use atomlab_model::{check_test, CheckOptions, ModelOutcome};
use atomlab_run::{prepare, run, RunOptions, SyncMode};

mod support;
use support::{litmus_files, own, shared};

fn mine(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/litmus")
        .join(rel)
}

fn parse(p: &Path) -> Test {
    atomlab_litmus::parse_file(p).unwrap_or_else(|e| panic!("{e}"))
}

/// The states x86-TSO allows for `test` (through the mapping for C).
fn tso_states(test: &Test) -> Vec<Vec<Value>> {
    let out = check_test(test, &["x86tso"], &CheckOptions::default());
    match &out[0] {
        ModelOutcome::Done(r) => r.states.iter().map(|(s, _)| s.clone()).collect(),
        other => panic!("{}: x86tso did not judge it: {other:?}", test.name),
    }
}

fn opts(size: usize, runs: usize) -> RunOptions {
    RunOptions {
        size,
        runs,
        ..RunOptions::default()
    }
}

/// One run at a time: cargo runs tests in parallel, and runs whose
/// spinning threads compete for the CPUs crawl and overlap less.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `test` and asserts every observed state is x86-TSO-allowed;
/// returns the witnesses.
fn run_within_tso(test: &Test, o: &RunOptions) -> u64 {
    run_spaced_within_tso(test, o, 0)
}

#[test]
fn own_x86_and_c_tests_stay_within_x86tso() {
    for dir in ["x86", "c"] {
        for p in litmus_files(&own(dir)) {
            let test = parse(&p);
            run_within_tso(&test, &opts(100, 20));
        }
    }
}

#[test]
fn sb_shows_its_relaxed_outcome_by_default() {
    // The corpus's SB, or this crate's copy of it without the corpus.
    let file = match shared() {
        Some(dir) => dir.join("x86/SB.litmus"),
        None => mine("SB.litmus"),
    };
    let w = run_within_tso(&parse(&file), &RunOptions::default());
    assert!(
        w > 0 || std::env::consts::ARCH != "x86_64",
        "no SB witness in a default run"
    );
}

#[test]
fn forbidden_shapes_never_show_their_outcome() {
    let mut tests = vec![
        own("x86/MP.litmus"),
        mine("LB.litmus"),
        mine("2+2W.litmus"),
        mine("IRIW.litmus"),
        own("c/IRIW+sc.litmus"),
        own("c/2+2W+fetch_add.litmus"),
    ];
    if let Some(dir) = shared() {
        for n in ["MP", "LB", "2+2W"] {
            tests.push(dir.join(format!("x86/{n}.litmus")));
        }
    }
    for p in tests {
        let test = parse(&p);
        // Each shape's condition is a state x86-TSO forbids...
        let tso = check_test(&test, &["x86tso"], &CheckOptions::default());
        assert!(
            matches!(&tso[0], ModelOutcome::Done(r) if r.observation == atomlab_model::Observation::Never),
            "{}: not a shape x86tso forbids",
            test.name
        );
        // ...and the CPU never shows it.
        // More threads than CPUs (IRIW on 2 cores) take turns: fewer runs.
        let o = if test.threads.len() > atomlab_thread::allowed_cpus().len() {
            opts(200, 10)
        } else {
            opts(500, 40)
        };
        let w = run_within_tso(&test, &o);
        assert_eq!(
            w, 0,
            "{}: witnessed a condition x86tso never allows",
            test.name
        );
    }
}

#[test]
fn shared_x86_corpus_stays_within_x86tso() {
    let Some(dir) = shared() else { return };
    for p in litmus_files(&dir.join("x86")) {
        run_within_tso(&parse(&p), &opts(200, 20));
    }
}

#[test]
fn shared_x86_64_corpus_stays_within_x86tso() {
    // herdtools' X86_64 format (../shared/litmus-more/x86_64): the same
    // instructions with 64-bit registers; A009's array is refused by the parser.
    let Some(dir) = shared() else { return };
    let more = dir.join("../litmus-more/x86_64");
    if !more.is_dir() {
        eprintln!("skipped: {} is absent", more.display());
        return;
    }
    let mut ran = 0;
    for p in litmus_files(&more) {
        let Ok(test) = atomlab_litmus::parse_file(&p) else {
            continue;
        };
        run_within_tso(&test, &opts(200, 10));
        ran += 1;
    }
    assert!(ran >= 40, "only {ran} X86_64 tests ran");
}

#[test]
fn shared_c_corpus_stays_within_x86tso() {
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped: the host is not x86-64");
        return;
    }
    let Some(dir) = shared() else { return };
    let (mut ran, mut refused) = (0, 0);
    for p in litmus_files(&dir.join("c")) {
        let Ok(test) = atomlab_litmus::parse_file(&p) else {
            continue; // outside the parser's subset: `check` refuses it too
        };
        match prepare(&test) {
            Ok(_) => {}
            Err(e) => {
                eprintln!("refused: {e}");
                refused += 1;
                continue;
            }
        }
        let states = check_test(&test, &["x86tso"], &CheckOptions::default());
        if !matches!(states[0], ModelOutcome::Done(_)) {
            continue;
        }
        run_within_tso(&test, &opts(100, 2));
        ran += 1;
    }
    eprintln!("{ran} C tests ran, {refused} refused by the code generator");
    assert!(ran > 100, "only {ran} C tests ran");
}

#[test]
fn sync_modes_all_run() {
    let test = parse(&own("x86/SB+mfences.litmus"));
    for sync in [
        SyncMode::Spin,
        SyncMode::UserFence,
        SyncMode::Timebase,
        SyncMode::Leader,
        SyncMode::None,
    ] {
        let o = RunOptions {
            sync,
            ..opts(300, 20)
        };
        assert_eq!(
            run_within_tso(&test, &o),
            0,
            "SB+mfences witnessed with {sync:?}"
        );
    }
    // The timebase delay adapted run by run (--timebase-delay auto).
    let o = RunOptions {
        sync: SyncMode::Timebase,
        timebase_delay: None,
        ..opts(300, 20)
    };
    assert_eq!(
        run_within_tso(&test, &o),
        0,
        "SB+mfences witnessed with {o:?}"
    );
}

/// A register holding a location's address ends with that location as its
/// value (collection tells an address from an integer by the instance
/// memory's range), and every instance is counted once (a run's latest
/// few final states are counted beside the histogram until the run ends).
#[test]
fn addresses_read_back_as_locations_and_every_instance_counts() {
    let test = atomlab_litmus::parse(
        "PTR.litmus",
        "X86 PTR\n{ x=0; y=0; 0:EAX=x; 1:EBX=y; }\n P0 | P1 ;\n MOV [y],$1 | MOV ECX,[y] ;\nexists (0:EAX=x /\\ 1:EBX=y)\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let witnesses = run_within_tso(&test, &opts(200, 30));
    if std::env::consts::ARCH == "x86_64" {
        assert_eq!(
            witnesses,
            200 * 30,
            "every instance ends with 0:EAX=x and 1:EBX=y"
        );
    }
}

#[test]
fn same_line_layout_runs() {
    let test = parse(&own("x86/LOCK-ops.litmus"));
    let o = RunOptions {
        stride: 8,
        ..opts(300, 20)
    };
    run_within_tso(&test, &o);
}

/// Issue 26's layouts and start states (packed arrays, frames written by
/// their own threads, the memory preloaded, roles rotating, spinning run
/// barriers) change only cache states and who runs what: every state is
/// still one x86-TSO allows, and the forbidden shapes never show theirs.
#[test]
fn layouts_preloads_and_roles_stay_within_x86tso() {
    use atomlab_run::{Layout, Preload, Roles, RunBarrier};
    let shapes = [
        (
            Layout::Packed,
            Preload::None,
            Roles::Fixed,
            RunBarrier::Futex,
        ),
        (
            Layout::Blocks,
            Preload::Frames,
            Roles::Fixed,
            RunBarrier::Spin,
        ),
        (
            Layout::Blocks,
            Preload::Random,
            Roles::Rotate,
            RunBarrier::Futex,
        ),
        (
            Layout::Packed,
            Preload::Random,
            Roles::Fixed,
            RunBarrier::Futex,
        ),
        (
            Layout::Packed,
            Preload::All,
            Roles::Rotate,
            RunBarrier::Spin,
        ),
    ];
    let forbidden = [
        own("x86/MP.litmus"),
        own("x86/SB+mfences.litmus"),
        mine("LB.litmus"),
        mine("2+2W.litmus"),
    ];
    for (layout, preload, roles, run_barrier) in shapes {
        let with = |o: RunOptions| RunOptions {
            layout,
            preload,
            roles,
            run_barrier,
            ..o
        };
        // Each thread's registers end up in its own frame, whichever OS
        // thread ran it: a state with the values swapped is one x86-TSO
        // forbids, and every instance must satisfy the condition.
        let roles = atomlab_litmus::parse(
            "roles.litmus",
            "X86 ROLES\n{ x=0; }\n P0 | P1 ;\n MOV EAX,$1 | MOV EAX,$2 ;\n MOV [x],EAX | MOV [x],EAX ;\nexists (0:EAX=1 /\\ 1:EAX=2)\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let o = with(opts(300, 10));
        if std::env::consts::ARCH == "x86_64" {
            assert_eq!(run_within_tso(&roles, &o), 3000, "{o:?}");
        }
        for sync in [SyncMode::UserFence, SyncMode::Timebase, SyncMode::Leader] {
            for p in &forbidden {
                let test = parse(p);
                let o = with(RunOptions {
                    sync,
                    ..opts(500, 20)
                });
                assert_eq!(
                    run_within_tso(&test, &o),
                    0,
                    "{}: witnessed a condition x86tso never allows with {o:?}",
                    test.name
                );
            }
        }
        // A test with an allowed relaxed outcome and locations given as
        // initial register values: its states are within x86-TSO too.
        run_within_tso(&parse(&mine("SB.litmus")), &with(opts(500, 20)));
        for p in litmus_files(&own("x86")) {
            run_within_tso(&parse(&p), &with(opts(50, 4)));
        }
    }
}

/// The whole shared X86, X86_64 and C corpus under issue 26's options
/// together (packed arrays, preloaded memory, rotating roles, spinning run
/// barriers): every state seen is one x86-TSO allows (issue 13).
#[test]
fn shared_corpus_stays_within_x86tso_packed_preloaded_rotating() {
    use atomlab_run::{Layout, Preload, Roles, RunBarrier};
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped: the host is not x86-64");
        return;
    }
    let Some(dir) = shared() else { return };
    let o = RunOptions {
        layout: Layout::Packed,
        preload: Preload::Random,
        roles: Roles::Rotate,
        run_barrier: RunBarrier::Spin,
        ..opts(200, 6)
    };
    let mut ran = 0;
    for sub in ["x86", "../litmus-more/x86_64", "c"] {
        let d = dir.join(sub);
        if !d.is_dir() {
            eprintln!("skipped: {} is absent", d.display());
            continue;
        }
        for p in litmus_files(&d) {
            let Ok(test) = atomlab_litmus::parse_file(&p) else {
                continue;
            };
            if prepare(&test).is_err()
                || !matches!(
                    check_test(&test, &["x86tso"], &CheckOptions::default())[0],
                    ModelOutcome::Done(_)
                )
            {
                continue;
            }
            run_within_tso(&test, &o);
            ran += 1;
        }
    }
    assert!(ran > 150, "only {ran} tests ran");
}

/// Issue 38: every setting the tuner may choose (`tune::candidates` from
/// the defaults, nothing pinned) keeps every state within x86-TSO, and
/// the forbidden shapes never show theirs, setting by setting.
#[test]
fn every_setting_the_tuner_may_choose_stays_within_x86tso() {
    use atomlab_run::tune::{candidates, Pinned};
    let settings = candidates(&RunOptions::default(), 0, Pinned::default());
    assert!(settings.len() >= 8, "{settings:?}");
    assert!(settings.iter().any(|s| s.spacing > 0), "{settings:?}");
    let forbidden = [
        own("x86/MP.litmus"),
        own("x86/SB+mfences.litmus"),
        mine("LB.litmus"),
        mine("2+2W.litmus"),
    ];
    for s in settings {
        let o = s.apply(&opts(500, 10));
        for p in &forbidden {
            let test = parse(p);
            assert_eq!(
                run_spaced_within_tso(&test, &o, s.spacing),
                0,
                "{}: witnessed a condition x86tso never allows with {}",
                test.name,
                s.name()
            );
        }
        run_spaced_within_tso(&parse(&mine("SB.litmus")), &o, s.spacing);
    }
}

/// As [`run_within_tso`], with the code prepared with `spacing` loads of
/// each thread's frame after each access.
fn run_spaced_within_tso(test: &Test, o: &RunOptions, spacing: u32) -> u64 {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped: the host is not x86-64");
        return 0;
    }
    let allowed = tso_states(test);
    let prep = atomlab_run::PrepareOptions {
        spacing,
        ..Default::default()
    };
    let program = atomlab_run::prepare_with(test, &prep).unwrap_or_else(|e| panic!("{e}"));
    let r = run(&program, o).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{} (spacing {spacing}): {} instances in {:.3} s, {} witnesses",
        test.name,
        r.instances(),
        r.elapsed.as_secs_f64(),
        r.positive
    );
    assert_eq!(
        r.instances(),
        (o.size * o.runs) as u64 - r.filtered,
        "{}",
        test.name
    );
    for (state, n, _) in &r.histogram {
        assert!(
            allowed.contains(state),
            "{} (spacing {spacing}): state {state:?} seen {n} times is forbidden by x86tso (allowed: {allowed:?})",
            test.name
        );
    }
    r.positive
}

/// A tuned run (issue 38) adds up every trial's runs: the instances are
/// the budget's, every state is x86-TSO's, SB still shows its relaxed
/// outcome, and the tuning says what it tried.
#[test]
fn a_tuned_run_counts_every_run_and_stays_within_x86tso() {
    use atomlab_run::tune::{run_tuned, Hunt, Pinned};
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("skipped: the host is not x86-64");
        return;
    }
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let test = parse(&mine("SB.litmus"));
    let allowed = tso_states(&test);
    let program = prepare(&test).unwrap_or_else(|e| panic!("{e}"));
    let o = opts(500, 60);
    let hit = |_: &[Value], witness: bool| witness;
    let hunt = Hunt {
        what: "the condition's witnesses",
        hit: &hit,
    };
    let spaced = atomlab_run::prepare_with(
        &test,
        &atomlab_run::PrepareOptions {
            spacing: 16,
            ..Default::default()
        },
    )
    .unwrap();
    let programs = [(0, &program), (16, &spaced)];
    let (r, tuning) = run_tuned(&programs, &o, Pinned::default(), &hunt).unwrap();
    let tuning = tuning.expect("60 runs leave room to tune");
    assert_eq!(r.runs_done, 60);
    assert_eq!(r.instances(), 30_000 - r.filtered);
    for (state, n, _) in &r.histogram {
        assert!(allowed.contains(state), "{state:?} seen {n} times");
    }
    assert!(r.positive > 0, "SB never showed 0/0 in 30000 instances");
    let tried: usize = tuning.trials.iter().map(|t| t.runs).sum();
    // The runs of the settings other than the one run most: at least one
    // each.
    assert!(tried >= tuning.trial_runs && tuning.trial_runs >= tuning.trials.len() - 1);
    assert_eq!(tried, 60, "every run is some setting's");
    assert!(
        tuning.trials.iter().all(|t| t.runs > 0),
        "every candidate gets a run"
    );
    let hits: u64 = tuning.trials.iter().map(|t| t.hits).sum();
    assert!(hits <= r.positive);
}
