//! Hostile and out-of-range input to every subcommand (issue 22's sweep):
//! each is bad input, exit 2 with a message naming what was wrong, never a
//! panic (exit 101) or an abort (134).

mod cli_support;

use cli_support::assert_bad_input;

/// Every duration option goes through one parser with a maximum of one
/// week; 1e19 seconds once panicked converting to a Duration or adding it
/// to an Instant.
#[test]
fn durations_past_the_maximum_are_refused_by_every_option() {
    let test = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../atomlab-run/tests/litmus/SB.litmus"
    );
    let cases: &[&[&str]] = &[
        &["check", "--timeout", "1e19", test],
        &["check", "--timeout", "1e30", test],
        &["check", "--timeout", "18446744073709551616", test],
        &["run", "--timeout", "1e30", test],
        &["stress", "mutex", "--time-limit", "1e30"],
        &["load", "--warmup", "1e19", "http://127.0.0.1:9/"],
        &["load", "--duration", "1e19", "http://127.0.0.1:9/"],
        &["load", "--timeout", "1e19", "http://127.0.0.1:9/"],
        &["bench", "counter", "--duration", "1e30"],
        &["bench", "counter", "--warmup", "1e30"],
    ];
    for args in cases {
        let mut a = vec!["--no-save"];
        a.extend_from_slice(args);
        assert_bad_input(&a, &["one week (604800 s)"]);
    }
}

/// A file in the temporary folder, for one test.
fn scratch(name: &str, text: &str) -> String {
    let p = std::env::temp_dir().join(format!("atomlab-bad-{}-{name}", std::process::id()));
    std::fs::write(&p, text).expect("temporary folder");
    p.display().to_string()
}

/// Nesting 30,000 to 100,000 deep overflowed the stack (SIGABRT, exit 134)
/// in check and run: C parentheses, long operator chains, unary minus,
/// nested `if`s, and conditions of parentheses, negations and
/// implications. The parsers now stop at 500 levels with
/// file:line:column. (A condition's flat chain of `/\` or `\/` is not
/// nesting: see `flat_chains_in_a_condition_are_judged`.)
#[test]
fn deep_nesting_in_a_litmus_test_is_refused_where_it_goes_too_deep() {
    let c = |name: &str, body: &str, cond: &str| {
        format!("C {name}\n{{}}\nP0(int *x) {{\n{body}\n}}\nexists {cond}\n")
    };
    let n = 100_000;
    let cases = [
        (
            "parens",
            c(
                "P",
                &format!("  int r0 = {}1{};", "(".repeat(30_000), ")".repeat(30_000)),
                "(x=1)",
            ),
        ),
        (
            "plus",
            c(
                "A",
                &format!("  int r0 = {};", vec!["1"; n].join("+")),
                "(x=1)",
            ),
        ),
        (
            "minus",
            c("M", &format!("  int r0 = {}1;", "-".repeat(n)), "(x=1)"),
        ),
        (
            "ifs",
            c(
                "I",
                &format!("{}{}", "if (1) {\n".repeat(n), "}\n".repeat(n)),
                "(x=1)",
            ),
        ),
        (
            "cond-parens",
            c(
                "CP",
                "  *x = 1;",
                &format!("{}x=1{}", "(".repeat(n), ")".repeat(n)),
            ),
        ),
        (
            "cond-and-nested",
            c(
                "CA",
                "  *x = 1;",
                &format!("{}x=1{}", "(x=1 /\\ ".repeat(n), ")".repeat(n)),
            ),
        ),
        (
            "cond-not",
            c("CN", "  *x = 1;", &format!("({}x=1)", "~".repeat(n))),
        ),
        (
            "cond-implies",
            c(
                "CI",
                "  *x = 1;",
                &format!("({})", vec!["x=1"; n].join(" => ")),
            ),
        ),
    ];
    for (name, text) in cases {
        let f = scratch(&format!("{name}.litmus"), &text);
        for cmd in ["check", "run"] {
            assert_bad_input(
                &[cmd, "--no-save", &f],
                &[&f, "nesting deeper than 500 levels"],
            );
        }
    }
}

/// Issue 33: a flat chain of 600 `\/` terms was refused as "nesting
/// deeper than 500 levels"; a chain is one level, however long (100,000
/// `/\` terms here), and is judged by the models and on this CPU.
#[test]
fn flat_chains_in_a_condition_are_judged() {
    let ors = (1..=600)
        .map(|v| format!("x={v}"))
        .collect::<Vec<_>>()
        .join(" \\/ ");
    let ands = vec!["x=1"; 100_000].join(" /\\ ");
    for (name, cond) in [("or600", ors), ("and100k", ands)] {
        let f = scratch(
            &format!("{name}.litmus"),
            &format!("C FLAT\n{{}}\nP0(atomic_int *x) {{\n  atomic_store_explicit(x, 1, memory_order_relaxed);\n}}\nexists ({cond})\n"),
        );
        for args in [
            vec!["check", "--no-save", "-m", "all", &f],
            vec!["run", "--no-save", "-s", "10", "-r", "2", &f],
        ] {
            let o = cli_support::atomlab(&args);
            let err = cli_support::stderr(&o);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
            assert!(!err.contains("nesting"), "{args:?}: {err}");
        }
    }
}

/// Nesting just under the limit still parses and is judged.
#[test]
fn nesting_below_the_limit_is_judged() {
    let f = scratch(
        "near.litmus",
        &format!(
            "C NEAR\n{{}}\nP0(int *x) {{\n  int r0 = {}1{};\n  *x = r0;\n}}\nexists ({})\n",
            "(".repeat(240),
            ")".repeat(240),
            vec!["x=1"; 240].join(" /\\ ")
        ),
    );
    let o = cli_support::atomlab(&["check", "--no-save", "-m", "all", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", cli_support::stderr(&o));
}

/// A cat file whose `let a = po | po | …` has 100,000 terms overflowed the
/// stack; the chain now counts toward the cat parser's depth limit.
#[test]
fn a_cat_file_with_a_long_chain_is_refused() {
    let cat = scratch(
        "deep.cat",
        &format!(
            "\"deep\"\nlet a = {}\nacyclic a as x\n",
            vec!["po"; 100_000].join(" | ")
        ),
    );
    let test = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../atomlab-run/tests/litmus/SB.litmus"
    );
    assert_bad_input(
        &["check", "--no-save", "--model-file", &cat, test],
        &[&format!("{cat}:2:"), "nested deeper than 200 levels"],
    );
}

/// A litmus file is read up to 16 MiB: a device or a runaway generator's
/// output is refused, not read into memory.
#[test]
fn a_litmus_file_past_16_mib_is_refused() {
    let f = scratch(
        "huge.litmus",
        &format!("X86 HUGE\n(* {} *)\n", "x".repeat(17 << 20)),
    );
    assert_bad_input(&["check", "--no-save", &f], &[&f, "larger than 16 MiB"]);
}

/// A list that names itself overflowed the stack (exit 134); it is now
/// refused naming the loop, and what the list did name is still checked.
#[test]
fn a_list_that_names_itself_is_refused() {
    let list = scratch("self.txt", "");
    let test = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../atomlab-run/tests/litmus/SB.litmus"
    );
    std::fs::write(&list, format!("{test}\n@{list}\n")).unwrap();
    let o = cli_support::atomlab(&["check", "--no-save", &format!("@{list}")]);
    let err = cli_support::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("the list names itself"), "{err}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("| SB "),
        "the named test is still checked"
    );
}

/// Issue 33: an option's error named the option twice
/// (`atomlab: --apt: --apt 'Bad!': not a Debian package name`, and
/// `--apt: --apt-arch 'a b': …`): the CLI put `--apt: ` before errors
/// that already begin with their option. Each is named once. Nothing
/// reaches apt-get: the names are checked first.
#[test]
fn an_apt_option_error_names_its_option_once() {
    let cache = std::env::temp_dir().join(format!("atomlab-bad-{}-apt", std::process::id()));
    let cache = cache.display().to_string();
    for (args, subject) in [
        (
            vec!["--apt", "Bad!"],
            "--apt 'Bad!': not a Debian package name",
        ),
        (
            vec!["--apt", "gzip", "--apt-arch", "a b"],
            "--apt-arch 'a b': not a Debian architecture name",
        ),
    ] {
        let mut a = vec!["--no-save", "audit", "--apt-cache", &cache];
        a.extend(args);
        let o = cli_support::atomlab(&a);
        let err = cli_support::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(&format!("atomlab: {subject}")), "{a:?}: {err}");
        assert!(!err.contains("--apt: --apt"), "{a:?}: {err}");
    }
}

/// Issue 33: `compare` named a side that is no file, label or run twice,
/// and its store twice ("'x' is neither a --json file, a label nor a run
/// in STORE: no run `x` in STORE (nearest ids…)"). Once each now.
#[test]
fn compare_names_an_unknown_side_and_its_store_once() {
    let store = cli_support::scratch("compare-once").join("results.db");
    let store = store.display().to_string();
    let saved = cli_support::with_store(&store, &["check", &cli_support::golden("x86/MP.litmus")]);
    assert_eq!(
        saved.status.code(),
        Some(0),
        "{}",
        cli_support::stderr(&saved)
    );
    let o = cli_support::with_store(&store, &["compare", "no-such-side", "no-such-other"]);
    let err = cli_support::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("no-such-side").count(), 1, "{err}");
    assert_eq!(err.matches(store.as_str()).count(), 1, "{err}");
    assert!(err.contains("nearest ids"), "{err}");
}
