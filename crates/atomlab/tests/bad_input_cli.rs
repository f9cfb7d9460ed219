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
