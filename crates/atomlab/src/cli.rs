//! The command line, declared with clap's derive API. Usage errors exit with
//! code 2 and list the valid choices (clap's behaviour, kept on purpose).

use clap::{Parser, Subcommand};

/// The help heading of the options every subcommand takes, apart from a
/// subcommand's own (issue 34).
const GLOBAL: &str = "Global options (every command)";

/// What does a memory-ordering choice cost on this machine, and is it correct?
#[derive(Debug, Parser)]
#[command(name = "atomlab", version, about, long_about = None)]
pub struct Cli {
    /// Print one JSON document (schema_version, machine, records, errors;
    /// schema/atomlab.schema.json) on stdout instead of tables.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,
    /// Do not save this run in the results store.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub no_save: bool,
    /// A label saved with the run (shards of one job share a label; compare
    /// and report take labels).
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "TEXT")]
    pub label: Option<String>,
    /// The results store: a SQLite file or postgres://user@host/db
    /// [default: $ATOMLAB_STORE, else $ATOMLAB_DB, else ~/.local/share/atomlab/results.db].
    #[arg(long, global = true, help_heading = GLOBAL, value_name = "PATH|URL")]
    pub store: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

// Each subcommand's arguments are declared only when it is the one being
// parsed (clap's `defer`): declaring all of them cost a `check` of 41 tests
// a tenth of its run time.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// How binaries do their atomics: LSE, LL/SC, outline helpers, barriers.
    Audit(crate::cmd::audit::AuditArgs),
    /// Judge litmus tests under memory models (their names from the model registry: `command`).
    Check(crate::cmd::check::CheckArgs),
    /// Run litmus tests on this CPU (JIT, no C compiler): histograms beside the models' verdicts.
    Run(Box<crate::cmd::run::RunArgs>),
    /// Print the machine fingerprint stamped on every result.
    Machine,
    /// The main job: a quick tour of this machine with every capability.
    Suite(SuiteArgs),
    /// Measure what a primitive costs (its scenarios from bench's registry: `command`).
    Bench(Box<crate::cmd::bench::BenchArgs>),
    /// Torture a primitive for correctness (its scenarios from stress's registry: `command`).
    Stress(Box<crate::cmd::stress::StressArgs>),
    /// Model-check a plugin's variants under its target CPU's model (its kinds from include/atomlab.h's table: `command`).
    Verify(Box<crate::cmd::verify::VerifyArgs>),
    /// Load an HTTP server: closed loop (wrk) or a fixed rate (wrk2), with the server's CPU.
    Load(Box<crate::cmd::load::LoadArgs>),
    /// List the saved runs, newest first.
    Runs(crate::cmd::store::RunsArgs),
    /// Print a saved run as its command did (or its JSON with --json).
    Show {
        /// A run id or a unique prefix of one.
        run: String,
    },
    /// Print a saved run as JSON (the --json document) or CSV (a row per metric).
    Export {
        /// A run id or a unique prefix of one.
        run: String,
        /// json or csv.
        #[arg(long, value_enum, default_value = "json")]
        format: crate::cmd::store::ExportFormat,
    },
    /// Save a --json document from another machine (or an earlier run) in the store.
    Import {
        /// The JSON file (`-` for stdin).
        file: std::path::PathBuf,
    },
    /// Judge B against A: medians, change, confidence interval, p-value, verdict per metric.
    Compare(Box<crate::cmd::compare::CompareArgs>),
    /// Write an HTML report (self-contained: inline SVG charts, no network) of saved runs.
    Report(crate::cmd::report::ReportArgs),
    /// Print a shell completion script: `atomlab completions bash > /etc/bash_completion.d/atomlab`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff), or write every one: `atomlab man --dir ~/.local/share/man/man1`.
    Man {
        /// The page of this command (`atomlab man check`); without one, the top-level page.
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
        /// Write every page (atomlab.1, atomlab-check.1…) into DIR and print their paths.
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        dir: Option<std::path::PathBuf>,
    },
}

/// The global options (by clap id) each command that does not read all
/// four reads. The others are hidden from its help, completions and man
/// page; they are still accepted, as scripts pass them to every command.
const GLOBALS_READ: &[(&str, &[&str])] = &[
    ("machine", &["json"]),
    ("runs", &["json", "label", "store"]),
    ("show", &["json", "store"]),
    ("export", &["store"]),
    ("import", &["label", "store"]),
    ("report", &["label", "store"]),
    ("completions", &[]),
    ("man", &[]),
];

/// The command line as parsed, shown in help and written as completions
/// and man pages: [`Cli`] with each command's meaningless global options
/// hidden ([`GLOBALS_READ`]).
pub fn command() -> clap::Command {
    use clap::{Arg, ArgAction};
    let mut cmd = <Cli as clap::CommandFactory>::command();
    // The root help's lines name what each command takes from the
    // registries themselves, never from a list written here.
    let listed = |names: Vec<&str>| names.join(", ");
    cmd = cmd
        .mut_subcommand("check", |sub| {
            sub.about(format!(
                "Judge litmus tests under memory models: {}",
                listed(atomlab_model::MODEL_NAMES.to_vec())
            ))
        })
        .mut_subcommand("bench", |sub| {
            sub.about(format!(
                "Measure what a primitive costs: {}",
                listed(atomlab_bench::all().iter().map(|s| s.name()).collect())
            ))
        })
        .mut_subcommand("stress", |sub| {
            sub.about(format!(
                "Torture a primitive for correctness: {}",
                listed(atomlab_stress::all().iter().map(|s| s.name()).collect())
            ))
        })
        .mut_subcommand("verify", |sub| {
            let kinds: Vec<&str> = atomlab_verify::Kind::all().map(|k| k.name()).collect();
            sub.about(format!(
                "Model-check a plugin's {} under its target CPU's model (aarch64, riscv64, x86-64 files; never run)",
                atomlab_core::sentence::or_list(&kinds)
            ))
        });
    for (name, read) in GLOBALS_READ {
        // A subcommand's own argument of a global's id takes the global's
        // place there (clap propagates a global only where its id is
        // free), and its value still reaches `Cli`'s field.
        cmd = cmd.mut_subcommand(name, |mut sub| {
            for (id, long, flag) in [
                ("json", "json", true),
                ("no_save", "no-save", true),
                ("label", "label", false),
                ("store", "store", false),
            ] {
                if read.contains(&id) {
                    continue;
                }
                let arg = Arg::new(id).long(long).hide(true);
                sub = sub.arg(if flag {
                    arg.action(ArgAction::SetTrue)
                } else {
                    arg.action(ArgAction::Set)
                });
            }
            sub
        });
    }
    cmd
}

/// [`command`] as completions see it: scenarios and variants offered from
/// the bench and stress registries (the parser itself takes any name and
/// refuses an unknown one with the list, so plugins' variants still
/// parse), and every completion of a free-text value left to the shell's
/// file names only where a file is meant.
pub fn completion_command() -> clap::Command {
    use clap::builder::PossibleValuesParser;
    let mut cmd = command();
    // The derive defers each subcommand's arguments until built.
    cmd.build();
    let registries: [(&str, Vec<&'static str>, Vec<&'static str>); 2] = [
        (
            "bench",
            atomlab_bench::registry::all()
                .iter()
                .map(|s| s.name())
                .collect(),
            atomlab_bench::registry::all()
                .iter()
                .flat_map(|s| s.variants())
                .chain(["all"])
                .collect(),
        ),
        (
            "stress",
            atomlab_stress::registry::all()
                .iter()
                .map(|s| s.name())
                .collect(),
            atomlab_stress::registry::all()
                .iter()
                .flat_map(|s| s.variants())
                .chain(["all", "correct", "broken"])
                .collect(),
        ),
    ];
    for (sub, scenarios, variants) in registries {
        let mut variants = variants;
        variants.sort_unstable();
        variants.dedup();
        cmd = cmd.mut_subcommand(sub, |s| {
            s.mut_arg("scenario", |a| {
                a.value_parser(PossibleValuesParser::new(scenarios.clone()))
            })
            .mut_arg("variant", |a| {
                a.value_parser(PossibleValuesParser::new(variants.clone()))
            })
        });
    }
    cmd
}

/// `script` (a completion script of `cmd`) without the options and
/// aliases hidden from help: the older spellings (`--no-pin`,
/// `--affinity`, `--time-limit`…) still parse, but are not offered.
pub fn without_hidden(cmd: &clap::Command, script: &str) -> String {
    fn hidden(cmd: &clap::Command, out: &mut std::collections::BTreeSet<String>) {
        for a in cmd.get_arguments() {
            if a.is_hide_set() {
                out.extend(a.get_long().map(|l| format!("--{l}")));
            }
            // Aliases set with `alias` (not `visible_alias`) are hidden.
            out.extend(
                a.get_aliases()
                    .into_iter()
                    .flatten()
                    .map(|l| format!("--{l}")),
            );
        }
        for sub in cmd.get_subcommands() {
            hidden(sub, out);
        }
    }
    let mut names = std::collections::BTreeSet::new();
    hidden(cmd, &mut names);
    script
        .lines()
        .filter_map(|line| {
            // Offered words are listed in `opts="…"` (bash), `'--x[…]'`
            // (zsh) and `-l x` (fish): bash's lists are filtered word by
            // word; other shells' lines that name a hidden option go.
            if let Some((head, rest)) = line.split_once("opts=\"") {
                let words: Vec<&str> = rest
                    .split(' ')
                    .filter(|w| !names.contains(w.trim_end_matches('"')))
                    .collect();
                let mut joined = words.join(" ");
                if !joined.ends_with('"') {
                    joined.push('"');
                }
                Some(format!("{head}opts=\"{joined}"))
            } else if names.iter().any(|n| {
                line.contains(&format!("'{n}[")) || line.contains(&format!("-l {} ", &n[2..]))
            }) {
                None
            } else {
                Some(line.to_string())
            }
        })
        .map(|l| l + "\n")
        .collect()
}

#[derive(Debug, clap::Args)]
pub struct SuiteArgs {
    /// Print every table, not only the one-screen summary.
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Where to write the suite's HTML report.
    #[arg(
        short,
        long,
        value_name = "FILE",
        default_value = "atomlab-report.html"
    )]
    pub output: std::path::PathBuf,
}

#[cfg(test)]
mod tests {
    /// Every visible option of every subcommand, with its command's name.
    fn options() -> Vec<(String, clap::Arg)> {
        let mut cmd = super::command();
        cmd.build();
        let mut out = Vec::new();
        for sub in cmd.get_subcommands_mut() {
            sub.build();
            let name = sub.get_name().to_string();
            for a in sub.get_arguments() {
                if a.get_long().is_some() && !a.is_hide_set() {
                    out.push((name.clone(), a.clone()));
                }
            }
        }
        out
    }

    /// The naming rule of README's "One vocabulary": one name and one
    /// syntax per concept across subcommands, older spellings only as
    /// hidden aliases. Walks every subcommand's options.
    #[test]
    fn one_vocabulary() {
        let opts = options();
        assert!(opts.len() > 80, "{} options", opts.len());
        let mut broken: Vec<String> = Vec::new();
        macro_rules! rule {
            ($ok:expr, $($why:tt)+) => {
                if !$ok {
                    broken.push(format!($($why)+));
                }
            };
        }
        for (sub, a) in &opts {
            let long = a.get_long().unwrap();
            let at = format!("atomlab {sub} --{long}");
            // Thread placement is --pin; these spellings are aliases.
            rule!(
                !["affinity", "placement", "no-pin", "time-limit"].contains(&long),
                "{at}: a retired spelling shown (placement is --pin, a cut-off --timeout)"
            );
            // --pin takes spread, same or none (run: also a CPU list).
            if long == "pin" {
                let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
                let values = a.get_value_names().map(|v| v.join(" ")).unwrap_or_default();
                for word in ["spread", "none"] {
                    rule!(
                        help.contains(word) || values.contains(word),
                        "{at}: --pin without {word}"
                    );
                }
                rule!(
                    a.get_num_args().is_none_or(|n| n.max_values() >= 1),
                    "{at}: takes a value"
                );
            }
            // Durations: value name DURATION, one parser (1.5, 500ms, 2s,
            // 5m), defaults written with their unit.
            if ["timeout", "duration", "warmup"].contains(&long) {
                let names = a.get_value_names().map(|v| v.join(" ")).unwrap_or_default();
                rule!(
                    names == "DURATION",
                    "{at}: value name {names}, not DURATION"
                );
                let alone = clap::Command::new("t").no_binary_name(true).arg(
                    clap::Arg::new("d")
                        .long("d")
                        .value_parser(a.get_value_parser().clone()),
                );
                for v in ["1.5", "500ms", "2s", "5m"] {
                    let m = alone.clone().try_get_matches_from(["--d", v]);
                    rule!(
                        m.is_ok_and(|m| m.get_one::<f64>("d").is_some()),
                        "{at}: refuses the duration {v}"
                    );
                }
                for d in a.get_default_values() {
                    let d = d.to_string_lossy();
                    rule!(
                        d.ends_with(|c: char| c.is_ascii_alphabetic()),
                        "{at}: default {d} without a unit"
                    );
                }
            }
            // -d is --duration's short form in every subcommand that
            // takes a duration (load -d 10 and bench -d 500ms alike).
            rule!(
                (long == "duration") == (a.get_short() == Some('d')),
                "{at}: -d and --duration go together (short {:?})",
                a.get_short()
            );
            // Several values: comma-separated (--rate 10k,1M); only files,
            // directories and free text (which may hold a comma) repeat.
            // (A fixed count, `--compare A B`, is two values, not a list.)
            let fixed = a
                .get_num_args()
                .is_some_and(|n| n.max_values() > 1 && n.min_values() == n.max_values());
            let many = !fixed
                && (matches!(a.get_action(), clap::ArgAction::Append)
                    || a.get_num_args().is_some_and(|n| n.max_values() > 1));
            if many && a.get_value_delimiter() != Some(',') {
                let names = a.get_value_names().map(|v| v.join(" ")).unwrap_or_default();
                let repeatable = ["FILE", "DIR", "PATH", "HEADER", "CMD"]
                    .iter()
                    .any(|w| names.to_uppercase().contains(w));
                rule!(
                    repeatable,
                    "{at} <{names}>: several values but no comma list"
                );
            }
        }
        assert!(
            broken.is_empty(),
            "the vocabulary rule (README) is broken:\n{}",
            broken.join("\n")
        );
    }
}
