//! Issue 23's help and man-page items: what `--help` and `atomlab man`
//! say, walked over every subcommand the root help lists.

mod cli_support;

use cli_support::{atomlab, scratch, stderr, text};

/// The subcommands `atomlab --help` lists (without `help`), each with its
/// one-line description.
fn subcommands() -> Vec<(String, String)> {
    let root = text(&atomlab(&["--help"]).stdout);
    root.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| {
            let (name, about) = l.trim().split_once(char::is_whitespace)?;
            (name != "help").then(|| (name.to_string(), about.trim().to_string()))
        })
        .collect()
}

/// Before: `--pipeline`, `runs --limit` and the two `--threshold`s said
/// their default twice (`[default: 1, off] [default: 1]`).
#[test]
fn every_default_is_said_once() {
    let subs = subcommands();
    assert!(subs.len() >= 15, "{subs:?}");
    for (name, _) in &subs {
        let help = text(&atomlab(&[name, "--help"]).stdout);
        for line in help.lines() {
            assert!(
                !line.contains("] [default:"),
                "atomlab {name} --help says a default twice: {line}"
            );
        }
    }
}

/// The values `--help` of `sub` lists for `--flag` or the argument `<ARG>`
/// (`[possible values: …]`, or a list after a colon on its line).
fn listed(help: &str, arg: &str) -> Vec<String> {
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with(arg))
        .unwrap_or_else(|| panic!("no {arg} in {help}"));
    let list = line.rsplit_once(": ").map(|(_, l)| l).unwrap_or(line);
    list.trim_end_matches(']')
        .split([',', ' '])
        .map(|w| w.trim().trim_end_matches('.'))
        .filter(|w| !w.is_empty() && !["or", "and", "all"].contains(w))
        .map(String::from)
        .collect()
}

/// Before: the root help's line for check omitted lkmm, and bench's
/// omitted spsc. Now each names every model or scenario its command takes.
#[test]
fn the_root_help_names_every_model_and_scenario() {
    let subs = subcommands();
    let about = |name: &str| {
        subs.iter()
            .find(|(n, _)| n == name)
            .map(|(_, a)| a.clone())
            .unwrap_or_else(|| panic!("no {name} in the root help"))
    };
    let check = text(&atomlab(&["check", "--help"]).stdout);
    let models: Vec<String> = check
        .split("[possible values: ")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap()
        .split(", ")
        .filter(|m| *m != "all")
        .map(String::from)
        .collect();
    assert!(models.contains(&"lkmm".to_string()), "{models:?}");
    for m in &models {
        assert!(
            about("check").contains(m.as_str()),
            "check's line lacks {m}"
        );
    }
    for sub in ["bench", "stress"] {
        let help = text(&atomlab(&[sub, "--help"]).stdout);
        let scenarios = listed(&help, "<SCENARIO>");
        assert!(scenarios.len() >= 5, "{sub}: {scenarios:?}");
        for s in &scenarios {
            assert!(about(sub).contains(s.as_str()), "{sub}'s line lacks {s}");
        }
    }
}

/// Before: the global --json, --no-save, --label and --store were in the
/// help (and man page) of every subcommand, where most mean nothing. Now
/// each subcommand shows only those it reads.
#[test]
fn global_options_only_where_they_mean_something() {
    let globals = ["--json", "--no-save", "--label", "--store"];
    let means: &[(&str, &[&str])] = &[
        ("man", &[]),
        ("completions", &[]),
        ("runs", &["--json", "--label", "--store"]),
        ("show", &["--json", "--store"]),
        ("export", &["--store"]),
        ("import", &["--label", "--store"]),
        ("report", &["--label", "--store"]),
        ("machine", &["--json"]),
        ("check", &globals),
        ("compare", &globals),
    ];
    for (sub, meant) in means {
        let help = text(&atomlab(&[sub, "--help"]).stdout);
        for g in globals {
            let shown = help.lines().any(|l| l.trim_start().starts_with(g));
            assert_eq!(
                shown,
                meant.contains(&g),
                "atomlab {sub} --help and {g}: {help}"
            );
        }
    }
    // Still accepted where they are hidden (scripts pass them globally).
    let o = atomlab(&["--no-save", "completions", "bash"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// The section headings (`.SH NAME`) of a roff page.
fn sections(page: &str) -> Vec<String> {
    page.lines()
        .filter_map(|l| l.strip_prefix(".SH "))
        .map(|h| h.trim_matches('"').to_string())
        .collect()
}

/// Before: `atomlab man` wrote only the top-level page, which refers to
/// atomlab-check(1) and the others that could not be generated, without
/// EXIT STATUS, ENVIRONMENT or EXAMPLES. Now `atomlab man --dir DIR`
/// writes a page per command, each with those sections, and `atomlab man
/// CMD` prints one.
#[test]
fn a_man_page_for_every_command() {
    let d = scratch("man");
    let o = atomlab(&["man", "--dir", d.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut names = vec!["atomlab".to_string()];
    names.extend(
        subcommands()
            .into_iter()
            .map(|(n, _)| format!("atomlab-{n}")),
    );
    for name in &names {
        let path = d.join(format!("{name}.1"));
        let page = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("no page {}: {e}", path.display()));
        let heads = sections(&page);
        for want in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "EXIT STATUS",
            "ENVIRONMENT",
            "EXAMPLES",
        ] {
            assert!(
                heads.iter().any(|h| h == want),
                "{name}.1 lacks {want}: {heads:?}"
            );
        }
        // The examples are commands of this page's command.
        let examples = page.split(".SH EXAMPLES").nth(1).unwrap();
        let cmd = name.replace('-', " ");
        assert!(examples.contains(&cmd), "{name}.1's examples: {examples}");
        // Global options it does not read are not in its page.
        if name == "atomlab-man" {
            assert!(!page.contains("no\\-save"), "{page}");
        }
    }
    // The top-level page's cross-references all name pages written.
    let root = std::fs::read_to_string(d.join("atomlab.1")).unwrap();
    for (n, _) in subcommands() {
        assert!(
            root.contains(&format!("atomlab\\-{n}(1)")),
            "atomlab.1 lacks atomlab-{n}(1)"
        );
    }
    // One page on stdout, as before, and a command's with its name.
    let o = atomlab(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        text(&o.stdout).contains(".TH atomlab 1"),
        "{}",
        text(&o.stdout)
    );
    let o = atomlab(&["man", "check"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(text(&o.stdout).contains(".TH atomlab-check 1"));
    cli_support::assert_bad_input(&["man", "nosuch"], &["nosuch", "check", "bench"]);
}

/// Issue 34: the four options every command takes were mixed into each
/// subcommand's own (`--json` first in `bench --help`, `--store` between
/// `--contention` and `--duration`). They now stand under a heading of
/// their own, after the subcommand's options, in every help text.
#[test]
fn global_options_stand_apart_from_a_subcommands_own() {
    for cmd in ["bench", "stress", "check", "run", "verify", "audit"] {
        let o = atomlab(&[cmd, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{cmd} --help");
        let help = String::from_utf8_lossy(&o.stdout);
        let heading = help
            .find("Global options (every command):")
            .unwrap_or_else(|| panic!("{cmd} --help has no global heading:\n{help}"));
        let own = help.find("Options:").expect("an Options heading");
        assert!(own < heading, "{cmd}: its own options first:\n{help}");
        for global in ["--json", "--no-save", "--label", "--store"] {
            // The option's own line, not a mention in another's text.
            let at = [" ", "\n"]
                .iter()
                .find_map(|end| help.find(&format!("\n      {global}{end}")))
                .unwrap_or_else(|| panic!("{cmd}: {global}"));
            assert!(
                at > heading,
                "{cmd}: {global} among the command's own options:\n{help}"
            );
        }
    }
}

/// Whether `line` holds `word` as a whole word.
fn names_word(line: &str, word: &str) -> bool {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .any(|w| w == word)
}

/// The line of `help` that describes `flag`.
fn line_of<'h>(help: &'h str, flag: &str) -> &'h str {
    help.lines()
        .find(|l| l.trim_start().starts_with(flag))
        .unwrap_or_else(|| panic!("no {flag} in {help}"))
}

/// Before: bench's and stress's help named their scenarios in doc comments
/// written by hand (a new scenario had to be added there too, and
/// `--cs-work` said "(lock)" while any scenario silently took it). Now
/// those lines are written from the registries: no doc comment of the two
/// commands names a scenario, and each option's line names exactly the
/// scenarios that take it.
#[test]
fn scenario_names_in_help_come_from_the_registries() {
    let bench: Vec<&str> = atomlab_bench::all().iter().map(|s| s.name()).collect();
    let stress: Vec<&str> = atomlab_stress::all().iter().map(|s| s.name()).collect();
    let cmd = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd");
    for (file, names) in [("bench.rs", &bench), ("stress.rs", &stress)] {
        let src = std::fs::read_to_string(cmd.join(file)).unwrap();
        for (i, line) in src.lines().enumerate() {
            if !line.trim_start().starts_with("///") {
                continue;
            }
            for name in names.iter() {
                assert!(
                    !names_word(line, name),
                    "src/cmd/{file}:{}: a help text names the scenario {name} by hand: {line}",
                    i + 1
                );
            }
        }
    }
    let help = text(&atomlab(&["bench", "--help"]).stdout);
    type Takes = fn(&dyn atomlab_bench::Scenario) -> bool;
    use atomlab_bench::Field;
    let options: [(&str, Takes); 8] = [
        ("--ordering", |s| s.takes(Field::Orderings)),
        ("--cs-work", |s| s.takes(Field::CsWork)),
        ("--increments", |s| s.takes(Field::Increments)),
        ("--rate", |s| s.takes(Field::Rates)),
        ("--capacity", |s| s.takes(Field::Capacity)),
        ("--wait", |s| s.takes(Field::Wait)),
        ("--plugin", |s| s.plugs().is_some()),
        ("--via-abi", |s| s.takes(Field::ViaAbi)),
    ];
    for (flag, takes) in options {
        let line = line_of(&help, flag);
        for s in atomlab_bench::all() {
            assert_eq!(
                names_word(line, s.name()),
                takes(*s),
                "bench {flag} and {}: {line}",
                s.name()
            );
        }
    }
    let help = text(&atomlab(&["stress", "--help"]).stdout);
    for s in atomlab_stress::all() {
        let tasks = line_of(&help, "--tasks");
        assert_eq!(names_word(tasks, s.name()), s.takes_tasks(), "{tasks}");
        let plugin = line_of(&help, "--plugin");
        assert_eq!(
            names_word(plugin, s.name()),
            s.plugs().is_some(),
            "{plugin}"
        );
        for flag in ["--threads", "--ops"] {
            let line = line_of(&help, flag);
            assert!(
                names_word(line, s.name()),
                "stress {flag} lacks {}: {line}",
                s.name()
            );
        }
        let ops = line_of(&help, "--ops");
        assert!(
            ops.contains(&s.default_ops().to_string()),
            "{ops} lacks {}'s default",
            s.name()
        );
    }
}

/// Before: `bench counter --cs-work 5` ran and ignored it. Now an option a
/// scenario does not take is refused, naming those that take it.
#[test]
fn cs_work_is_refused_where_there_is_no_critical_section() {
    let o = atomlab(&["--no-save", "bench", "counter", "--cs-work", "5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--cs-work applies to the lock scenario, not counter"),
        "{}",
        stderr(&o)
    );
}

/// Before: run's and verify's `--model` lines listed the CPUs' models by
/// hand. Now they are written from the model registry: each model that
/// describes a CPU is named in both.
#[test]
fn the_cpus_models_in_help_come_from_the_registry() {
    for sub in ["run", "verify"] {
        let help = text(&atomlab(&[sub, "--help"]).stdout);
        // The flag's line and the lines of its text below it, if any.
        let at = help.find("--model").unwrap_or_else(|| panic!("{help}"));
        let line: String = help[at..]
            .lines()
            .enumerate()
            .take_while(|(i, l)| *i == 0 || !l.trim_start().starts_with('-'))
            .map(|(_, l)| l)
            .collect::<Vec<_>>()
            .join(" ");
        for m in atomlab_model::models::of_cpus() {
            assert!(
                names_word(&line, m.name()),
                "{sub} --model lacks {}: {line}",
                m.name()
            );
        }
    }
}

/// Before: verify's help named the plugin kinds by hand in four places
/// (its line in the root help, `--variant`, `--rounds`, `--items`), so a
/// new kind of include/atomlab.h had to be added there too. Now they are
/// written from the header's one table (`abi::KINDS`) and the clients of
/// verify: no doc comment of the command names a kind, and its help
/// names every kind.
#[test]
fn plugin_kinds_in_help_come_from_the_headers_table() {
    let kinds: Vec<&str> = atomlab_verify::Kind::all().map(|k| k.name()).collect();
    assert!(kinds.len() >= 4, "{kinds:?}");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cmd/verify.rs");
    let src = std::fs::read_to_string(src).unwrap();
    for (i, line) in src.lines().enumerate() {
        if !line.trim_start().starts_with("///") {
            continue;
        }
        for k in &kinds {
            assert!(
                !names_word(line, k),
                "src/cmd/verify.rs:{}: a help text names the kind {k} by hand: {line}",
                i + 1
            );
        }
    }
    let root = text(&atomlab(&["--help"]).stdout);
    let about = line_of(&root, "verify");
    let help = text(&atomlab(&["verify", "--help"]).stdout);
    let variant = line_of(&help, "--variant");
    for k in &kinds {
        assert!(names_word(about, k), "{about} lacks {k}");
        assert!(names_word(variant, k), "{variant} lacks {k}");
    }
    let items = line_of(&help, "--items");
    let rounds = line_of(&help, "--rounds");
    for (k, counts, takes_items) in atomlab_verify::client::sizes() {
        assert_eq!(names_word(items, k.name()), takes_items, "{items}");
        assert_eq!(names_word(rounds, k.name()), counts.is_some(), "{rounds}");
    }
}
