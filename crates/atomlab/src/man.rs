//! Man pages: `atomlab.1` and one per command (`atomlab-check.1`, …), drawn
//! by clap_mangen from the command line `--help` shows, with the sections
//! it does not write (EXIT STATUS, ENVIRONMENT, EXAMPLES, SEE ALSO) in the
//! order man-pages(7) gives them. A command's `after_help` is split: its
//! "Exit status: …" paragraph goes under EXIT STATUS, the rest under NOTES.

use std::path::{Path, PathBuf};

use anyhow::Context;
use roff::{bold, roman, Roff};

/// One page: its file name (`atomlab-check.1`) and its roff text.
pub struct Page {
    pub file: String,
    pub text: Vec<u8>,
}

/// The command line the pages describe, built, without clap's `help`
/// subcommand (it has no page).
fn built() -> clap::Command {
    let mut cmd = crate::cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The names of the commands that have a page of their own.
fn commands(root: &clap::Command) -> Vec<String> {
    root.get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

/// The page of `command` (`check`), or the top-level page for `None`.
pub fn page(command: Option<&str>) -> anyhow::Result<Page> {
    let root = built();
    let cmd = match command {
        None => root,
        Some(name) => match root.find_subcommand(name) {
            Some(sub) if !sub.is_hide_set() => sub.clone(),
            _ => anyhow::bail!(
                "'{name}' is not an atomlab command; the pages are of: {}",
                commands(&root).join(", ")
            ),
        },
    };
    render(cmd, command)
}

/// Writes every page into `dir` (created if missing), returning their
/// paths: the top-level page first.
pub fn write_all(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--dir {}: cannot create the directory", dir.display()))?;
    let root = built();
    let mut pages = vec![render(root.clone(), None)?];
    for name in commands(&root) {
        pages.push(page(Some(&name))?);
    }
    let mut paths = Vec::new();
    for p in pages {
        let path = dir.join(&p.file);
        std::fs::write(&path, &p.text)
            .with_context(|| format!("--dir {}: cannot write {}", dir.display(), p.file))?;
        paths.push(path);
    }
    Ok(paths)
}

fn render(cmd: clap::Command, command: Option<&str>) -> anyhow::Result<Page> {
    let after = cmd
        .get_after_long_help()
        .or(cmd.get_after_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let (exit_status, notes) = split_exit_status(&after);
    let exit_status = exit_status.unwrap_or_else(|| default_exit_status(command).to_string());
    let man = clap_mangen::Man::new(cmd);
    let file = man.get_filename();
    let mut page = Vec::new();
    man.render(&mut page)?;
    let page = String::from_utf8(page).context("the man page is not UTF-8")?;
    // clap_mangen's EXTRA (the after_help) is replaced by EXIT STATUS and NOTES.
    let page = without_section(&page, "EXTRA");
    let mut roff = Roff::default();
    roff.control("SH", ["EXIT STATUS"]);
    for line in exit_status.split("; ") {
        roff.text([roman(line.trim().trim_end_matches('.'))]);
        roff.control("br", [] as [&str; 0]);
    }
    roff.control("SH", ["ENVIRONMENT"]);
    for (name, what) in environment(command) {
        roff.control("TP", [] as [&str; 0]);
        roff.text([bold(*name)]);
        roff.text([roman(*what)]);
    }
    if !notes.trim().is_empty() {
        roff.control("SH", ["NOTES"]);
        for para in notes.split('\n').filter(|p| !p.trim().is_empty()) {
            roff.control("PP", [] as [&str; 0]);
            roff.text([roman(para.trim())]);
        }
    }
    roff.control("SH", ["EXAMPLES"]);
    for (line, what) in examples(command) {
        roff.control("TP", [] as [&str; 0]);
        roff.text([bold(*line)]);
        roff.text([roman(*what)]);
    }
    roff.control("SH", ["SEE ALSO"]);
    let see_also = match command {
        None => "README.md and the book (docs/src, its design chapter docs/src/design.md) in atomlab's source; the page of each command above",
        Some(_) => "atomlab(1); README.md and the book (docs/src) in atomlab's source",
    };
    roff.text([roman(see_also)]);
    // Before VERSION, the last section clap_mangen writes.
    let ours = roff.to_roff();
    let text = match page.find("\n.SH VERSION") {
        Some(at) => format!("{}\n{ours}{}", &page[..at], &page[at + 1..]),
        None => format!("{page}{ours}"),
    };
    Ok(Page {
        file,
        text: text.into_bytes(),
    })
}

/// `page` without its section `name` (from `.SH name` to the next `.SH`).
fn without_section(page: &str, name: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in page.split_inclusive('\n') {
        if let Some(h) = line.strip_prefix(".SH ") {
            skipping = h.trim().trim_matches('"') == name;
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out
}

/// The "Exit status: …" paragraph of an `after_help`, and the rest.
fn split_exit_status(after: &str) -> (Option<String>, String) {
    let Some(at) = after.find("Exit status: ") else {
        return (None, after.to_string());
    };
    let start = at + "Exit status: ".len();
    let end = after[start..].find('\n').map_or(after.len(), |i| start + i);
    let rest = format!("{}{}", &after[..at], &after[end..]);
    (Some(after[start..end].to_string()), rest)
}

/// The exit status of a command whose help does not say it, as its code
/// gives it (atomlab_core::ExitStatus: 0 ok, 1 a failed verdict, 2 bad
/// input), statuses separated by "; ".
fn default_exit_status(command: Option<&str>) -> &'static str {
    match command {
        None => "0 success; 1 a verdict failed: a stress FAIL, a check TIMEOUT or BOUND, a forbidden outcome run observed, a load that failed, a regression compare found, an audit --require not met; 2 bad input or an error: an unreadable file, an unknown option or value, an unusable results store; a closed pipe on stdout ends any command quietly with 0",
        Some("audit") => "0 every binary audited (and, with --require, meeting it); 1 some binary does not meet --require; 2 bad input: an unreadable file, a package not found, nothing to audit",
        Some("bench") => "0 measured; 1 a plugin's cell crashed or hung (FAIL); 2 bad input: an unknown scenario, variant or value",
        Some("stress") => "0 no correct variant failed or timed out (with --expect-fail: every variant failed); 1 otherwise; 2 bad input",
        Some("load") => "0 the load ran and the server answered; 1 it failed: no 2xx/3xx response, the server died or stopped answering, the client hit its limits, or too many requests failed; 2 bad input",
        Some("suite") => "0 every capability passed; 1 some capability failed a verdict; 2 bad input",
        Some(_) => "0 success; 2 bad input or an error (an unknown run id, an unusable results store, an unreadable file)",
    }
}

/// The results store's variables, read by every command that saves or
/// reads runs.
const STORE_ENV: &[(&str, &str)] = &[
    ("ATOMLAB_STORE", "The results store (a SQLite file or postgres://user@host/db) when --store is not given."),
    ("ATOMLAB_DB", "A SQLite file for the results store when neither --store nor ATOMLAB_STORE is given."),
    ("XDG_DATA_HOME, HOME", "The default store is $XDG_DATA_HOME/atomlab/results.db, else ~/.local/share/atomlab/results.db."),
    ("PGPASSWORD", "The PostgreSQL password (or ~/.pgpass), rather than in a --store URL, which other users see in ps."),
];

/// The environment variables `command` reads.
fn environment(command: Option<&str>) -> Vec<&'static (&'static str, &'static str)> {
    const HERDLIB: &(&str, &str) = &(
        "HERDLIB",
        "herd7's library directory, searched last for files a --model-file includes.",
    );
    const NONE: &(&str, &str) = &("(none)", "This command reads no environment variable.");
    match command {
        Some("completions" | "man" | "machine") => vec![NONE],
        Some("check") | None => {
            let mut v: Vec<_> = STORE_ENV.iter().collect();
            v.push(HERDLIB);
            v
        }
        _ => STORE_ENV.iter().collect(),
    }
}

/// Examples of `command`, each a command line and what it does.
fn examples(command: Option<&str>) -> &'static [(&'static str, &'static str)] {
    match command {
        None => &[
            ("atomlab suite", "A quick tour of this machine with every capability, and an HTML report."),
            ("atomlab check --model x86tso,c11 tests/", "Judge litmus tests under two models."),
            ("atomlab man --dir ~/.local/share/man/man1", "Install every page."),
        ],
        Some("audit") => &[
            ("atomlab audit /usr/bin/nginx", "How a binary does its atomics."),
            ("atomlab audit --require lse build/app", "Exit 1 unless the binary uses LSE atomics."),
        ],
        Some("check") => &[
            ("atomlab check --model x86tso,c11 tests/", "One row per test, one column per model."),
            ("atomlab check --explain MP+rel+acq.litmus", "Why a forbidden outcome is forbidden."),
            ("atomlab check --shard 0/4 --label corpus tests/", "Part 0 of 4 of a batch job; compare and report pool the label."),
        ],
        Some("run") => &[
            ("atomlab run SB.litmus", "Run SB on this CPU, the histogram beside x86tso's verdict."),
            ("atomlab run --pin 0,1 --runs 1000 tests/", "Pin the test's threads to CPUs 0 and 1."),
        ],
        Some("machine") => &[("atomlab machine --json", "The fingerprint stamped on every result.")],
        Some("suite") => &[("atomlab suite -o tour.html", "The tour, with its report in tour.html.")],
        Some("bench") => &[
            ("atomlab bench counter --variant fetch_add,cas_loop --threads 1,2", "What a shared counter costs."),
            ("atomlab bench lock --variant ttas,std --threads 2", "Two locks under contention."),
        ],
        Some("stress") => &[
            ("atomlab stress mutex", "Torture the correct mutexes."),
            ("atomlab stress mutex --variant broken --expect-fail", "Check that the detectors catch the broken ones."),
        ],
        Some("load") => &[
            ("atomlab load http://127.0.0.1:8080/ -c 16 -d 10", "A closed loop of 16 connections for 10 s."),
            ("atomlab load http://127.0.0.1:8080/ -R 20k", "A fixed rate of 20,000 requests per second."),
        ],
        Some("runs") => &[("atomlab runs --capability bench --limit 5", "The five newest bench runs.")],
        Some("show") => &[("atomlab show 20261201-0422", "A saved run, as its command printed it.")],
        Some("export") => &[("atomlab export 20261201-0422 --format csv", "A saved run as CSV, a row per metric.")],
        Some("import") => &[("atomlab import other-machine.json --label arm-server", "Save another machine's --json document.")],
        Some("compare") => &[
            ("atomlab compare baseline after-fix", "Judge the label after-fix against baseline."),
            ("atomlab compare --interleave 5 -- bench lock --variant ttas -- bench lock --variant tas", "Alternate two commands five times each, then compare."),
        ],
        Some("report") => &[("atomlab report --label corpus -o corpus.html", "Every run of a label in one HTML file.")],
        Some("verify") => &[
            ("atomlab verify --plugin locks-arm64.so", "Every lock of an aarch64 plugin under the aarch64 model."),
            ("atomlab verify --plugin locks-arm64.so --variant ttas --model aarch64,sc --rounds 2", "One lock, two models, two critical sections per thread."),
            ("atomlab verify --plugin locks-riscv64.so --model riscv,sc", "A riscv64 build (riscv64-linux-gnu-gcc) under the RISC-V model and SC."),
        ],
        Some("completions") => &[("atomlab completions bash > ~/.local/share/bash-completion/completions/atomlab", "Install bash completions.")],
        Some("man") => &[
            ("atomlab man --dir ~/.local/share/man/man1", "Install every page."),
            ("atomlab man check | man -l -", "Read one command's page."),
        ],
        Some(_) => &[],
    }
}
