//! One behaviour per flag across subcommands (issue 34): each test names
//! what the code did before.

mod cli_support;

use cli_support::{assert_bad_input, atomlab, golden, stderr, text};

/// `--pin` took an optional value in `bench` (bare `--pin` was spread, and
/// swallowed nothing) and a required one in `stress` and `run`: now it
/// needs one everywhere.
#[test]
fn pin_needs_a_value_in_every_subcommand() {
    for sub in [&["bench", "counter"][..], &["stress", "mutex"][..]] {
        let args = [&["--no-save"][..], sub, &["--pin"][..]].concat();
        let o = atomlab(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--pin"), "{}", stderr(&o));
    }
    assert_bad_input(
        &["run", "--no-save", &golden("x86/MP.litmus"), "--pin"],
        &["--pin"],
    );
}

/// `run`'s seed was always 1 (stress's from the clock) and its timeout 0
/// (check's 60 s): now both as the others, the seed printed in the replay
/// line so any run can be repeated.
#[test]
fn run_takes_a_fresh_seed_and_check_s_timeout() {
    if std::env::consts::ARCH != "x86_64" {
        return;
    }
    let sb = golden("x86/MP.litmus");
    let seed = |o: &std::process::Output| -> String {
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let replay = doc["records"][0]["detail"]["replay"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        replay
            .split("--seed ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or_else(|| panic!("no --seed in the replay line: {replay}"))
            .to_string()
    };
    let run = || {
        atomlab(&[
            "run",
            "--no-save",
            "--json",
            "--size",
            "20",
            "--runs",
            "2",
            &sb,
        ])
    };
    let (a, b) = (run(), run());
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_ne!(seed(&a), seed(&b), "two runs, one seed");
    let help = text(&atomlab(&["run", "--help"]).stdout);
    assert!(help.contains("[default: 60s]"), "{help}");
}

/// `compare --metric a,b` was refused ("no metric named 'a,b'") while
/// every other list option takes commas.
#[test]
fn metric_takes_a_comma_separated_list() {
    let dir = cli_support::scratch("metric-list");
    let db = dir.join("r.db");
    let db = db.to_str().unwrap();
    for label in ["A", "B"] {
        let o = atomlab(&[
            "--store",
            db,
            "--label",
            label,
            "bench",
            "counter",
            "--variant",
            "fetch_add",
            "--threads",
            "1",
            "-d",
            "20ms",
            "--runs",
            "5",
            "--warmup",
            "0",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    // The JSON document, not the table: a table cell wraps ("ops_per_" /
    // "sec") when the figures' columns are wide, as under qemu.
    let o = atomlab(&[
        "--store",
        db,
        "--json",
        "compare",
        "A",
        "B",
        "--metric",
        "ns_per_op,ops_per_sec",
    ]);
    let out = text(&o.stdout);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{out}{}",
        stderr(&o)
    );
    assert!(
        out.contains("\"ns_per_op\"") && out.contains("\"ops_per_sec\""),
        "{out}"
    );
    assert!(!out.contains("ref_cycles_per_op"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bash completion offered flags, not scenarios, after `atomlab bench `,
/// file names after `--variant`, and the hidden older spellings: now the
/// scenarios and variants come from the registries and the hidden names
/// are not offered (they still parse).
#[test]
fn completions_offer_the_registries_and_not_the_hidden_spellings() {
    let o = atomlab(&["completions", "bash"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let script = text(&o.stdout);
    let bench = script
        .lines()
        .skip_while(|l| !l.contains("atomlab__subcmd__bench)"))
        .find(|l| l.contains("opts=\""))
        .expect("bench's opts");
    for scenario in ["counter", "refcount", "lock", "fence", "pingpong", "spsc"] {
        assert!(
            bench.split(' ').any(|w| w.trim_matches('"') == scenario),
            "{bench}"
        );
    }
    let variant = script
        .lines()
        .skip_while(|l| !l.contains("atomlab__subcmd__bench)"))
        .skip_while(|l| !l.contains("--variant)"))
        .nth(1)
        .expect("bench --variant");
    assert!(
        variant.contains("fetch_add") && variant.contains("ttas"),
        "{variant}"
    );
    for hidden in ["--no-pin", "--time-limit", "--affinity"] {
        assert!(
            !script
                .lines()
                .any(|l| l.contains("opts=\"") && l.split(' ').any(|w| w == hidden)),
            "{hidden} offered"
        );
    }
    // Still parsed.
    let o = atomlab(&["--no-save", "bench", "counter", "--no-pin", "--help"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
