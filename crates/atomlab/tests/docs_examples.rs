//! The user's docs hold: README.md and the book (docs/src) are run as a
//! reader would run them.
//!
//! - Every relative link of README.md, BENCHMARKS.md and the book names a
//!   file of the repository, and an `#anchor` into a Markdown file names
//!   one of its headings (GitHub's and mdBook's slugs: lower case, spaces
//!   to hyphens, punctuation dropped). The book's SUMMARY.md lists every
//!   chapter, and every chapter it lists exists.
//! - README.md stays under 200 lines: one screen of what atomlab is, the two
//!   commands, the four cases, and links into the book.
//! - Every example — a `$ ` line in a fenced block, with its `\`
//!   continuation lines — runs, in order, chapter by chapter, in a scratch
//!   folder that sees the repository's `include`, `crates` and workspace
//!   files: `cc` builds the plugins the next lines load, `atomlab` is the
//!   binary under test with a store of its own. Each must exit 0 or 1 (1
//!   is a verdict: the examples show FAILs on purpose), never 2 (bad
//!   input: the docs would be wrong) or a crash, and its tables must have
//!   the columns the docs show (as a set: how a table splits into panels
//!   depends on its figures' widths; an excerpt, marked by a `…` line,
//!   shows some of them). Measured durations are cut
//!   to keep this quick (`--duration`, `-d` and `--warmup` to 0.1 s, `--runs`
//!   to 1, `--interleave` to 2, `--increments` to 100000; a `bench` that
//!   gives no duration gets `--duration 0.1 --runs 1`, a `stress` that
//!   gives no count `--ops 100000`): the example's shape is checked here,
//!   its figures in BENCHMARKS.md.
//!
//! Examples that need what a fresh clone may lack run only when it is
//! there, and say so otherwise: Debian's cross compilers (required under
//! `ATOMLAB_REQUIRE_CROSS=1`), Debian's arm64 packages
//! (`ATOMLAB_AUDIT_DEBS`), nginx (`/usr/sbin/nginx`), apt-get with the
//! network (`ATOMLAB_TEST_APT=1`: the `audit --apt` examples have a test
//! of their own). Under `.ci/run` (`ATOMLAB_CI=1`) each of these is
//! provided (the network in its apt step), and a missing one fails.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// README.md, BENCHMARKS.md and every Markdown file of the book.
fn documents() -> Vec<PathBuf> {
    let root = repo();
    let mut docs = vec![root.join("README.md"), root.join("BENCHMARKS.md")];
    let mut stack = vec![root.join("docs/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                docs.push(path);
            }
        }
    }
    docs.sort();
    docs
}

/// The lines of `text` outside fenced blocks, with their line numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// The anchors a Markdown file's headings get (GitHub's slugs, which
/// mdBook follows): lower case, spaces to hyphens, everything but
/// letters, digits, `-` and `_` dropped.
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .into_iter()
        .filter(|(_, l)| l.starts_with('#'))
        .map(|(_, l)| {
            l.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// The targets of `[text](target)` links on a line.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        match after.find(')') {
            Some(j) => {
                out.push(after[..j].to_string());
                rest = &after[j..];
            }
            None => break,
        }
    }
    out
}

#[test]
fn every_link_of_the_docs_names_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (n, line) in prose(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = match target.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (target.as_str(), None),
                };
                let path = if file.is_empty() {
                    doc.clone()
                } else {
                    doc.parent().unwrap().join(file)
                };
                if !path.exists() {
                    broken.push(format!("{}:{n}: {target}: no such file", doc.display()));
                    continue;
                }
                if let Some(anchor) = anchor {
                    let heads = anchors(&std::fs::read_to_string(&path).unwrap_or_default());
                    if !heads.contains(anchor) {
                        broken.push(format!(
                            "{}:{n}: {target}: {} has no heading #{anchor}",
                            doc.display(),
                            path.display()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the link reader broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_books_summary_lists_every_chapter() {
    let src = repo().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = summary
        .lines()
        .flat_map(link_targets)
        .map(|t| src.join(t))
        .collect();
    for chapter in &listed {
        assert!(
            chapter.exists(),
            "SUMMARY.md lists {}, which does not exist",
            chapter.display()
        );
    }
    for doc in documents() {
        if doc.starts_with(&src) && !doc.ends_with("SUMMARY.md") {
            assert!(
                listed.contains(&doc),
                "{} is not in docs/src/SUMMARY.md: mdBook would leave it out",
                doc.display()
            );
        }
    }
}

#[test]
fn the_readme_fits_one_screen_of_reading() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines < 200,
        "README.md has {lines} lines; the rest belongs in the book (docs/src)"
    );
    // The two set-up commands open it, as a fresh machine needs them.
    let setup = readme
        .find("cargo run --release --locked -- suite")
        .unwrap();
    let tests = readme.find("cargo test --workspace --locked").unwrap();
    assert!(setup < tests && setup < readme.find("## Install").unwrap());
}

/// One `$ ` example: its command (continuations joined), where it is, and
/// the output the docs show after it.
struct Example {
    doc: PathBuf,
    line: usize,
    command: String,
    shown: Vec<String>,
}

/// The column names of every table in `output` (a header is a `|` row
/// over a `|---` rule), as one set: a table that a narrower terminal
/// splits into panels repeats its key columns, and which panel a column
/// lands in depends on the figures' widths. Header cells that name a file
/// (audit's `nginx_1.22.1-9+deb12u12_arm64.deb!/usr/sbin/nginx`) are
/// left out: a package's version moves on.
fn columns<'a>(output: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    let lines: Vec<&str> = output.into_iter().collect();
    let mut out = BTreeSet::new();
    for pair in lines.windows(2) {
        if pair[0].starts_with('|') && pair[1].starts_with("|-") {
            for cell in pair[0].trim().trim_matches('|').split('|') {
                let cell = cell.trim();
                if !cell.contains(".deb!") && !cell.starts_with('/') {
                    out.insert(cell.to_string());
                }
            }
        }
    }
    out
}

/// The examples of one document, in order.
fn examples(doc: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(doc).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Example> = Vec::new();
    let mut fenced = false;
    // Output lines belong to the last example of the same block.
    let mut attached = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            attached = false;
            i += 1;
            continue;
        }
        if fenced && line.starts_with("$ ") {
            let start = i;
            let mut command = line[2..].to_string();
            while command.ends_with('\\') && i + 1 < lines.len() {
                command.pop();
                i += 1;
                command.push(' ');
                command.push_str(lines[i].trim());
            }
            out.push(Example {
                doc: doc.to_path_buf(),
                line: start + 1,
                command,
                shown: Vec::new(),
            });
            attached = true;
        } else if fenced && attached {
            if let Some(last) = out.last_mut() {
                last.shown.push(line.to_string());
            }
        }
        i += 1;
    }
    out
}

/// Replaces the value after each of `flags` in a command line.
fn cut(command: &str) -> String {
    let short: &[(&str, &str)] = &[
        ("--duration", "0.1"),
        ("-d", "0.1"),
        ("--warmup", "0.1"),
        ("--runs", "1"),
        ("--interleave", "2"),
        ("--increments", "100000"),
    ];
    let given = |flag: &str| command.split(' ').any(|w| w == flag);
    let mut command = command.to_string();
    // A bench or stress example that leaves the measured time or the
    // operations at their defaults gets the short ones too.
    if command.starts_with("atomlab bench") && !given("--duration") && !given("--increments") {
        command.push_str(" --duration 0.1 --runs 1");
    }
    if command.starts_with("atomlab stress") && !given("--ops") {
        command.push_str(" --ops 100000");
    }
    let mut words: Vec<String> = command.split(' ').map(str::to_string).collect();
    for i in 1..words.len() {
        if let Some((_, v)) = short.iter().find(|(f, _)| *f == words[i - 1]) {
            words[i] = v.to_string();
        }
    }
    words.join(" ")
}

/// What an example needs that a fresh clone may lack, if anything.
fn need(command: &str) -> Option<&'static str> {
    let has = |tool: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if command.starts_with("aarch64-linux-gnu-gcc") && !has("aarch64-linux-gnu-gcc") {
        return Some("aarch64-linux-gnu-gcc (apt-get install gcc-aarch64-linux-gnu)");
    }
    if command.starts_with("riscv64-linux-gnu-gcc") && !has("riscv64-linux-gnu-gcc") {
        return Some("riscv64-linux-gnu-gcc (apt-get install gcc-riscv64-linux-gnu)");
    }
    if command.contains(".deb") && std::env::var_os("ATOMLAB_AUDIT_DEBS").is_none() {
        return Some("Debian's arm64 packages in ATOMLAB_AUDIT_DEBS (.ci/run downloads them)");
    }
    if command.contains("nginx") && !Path::new("/usr/sbin/nginx").exists() {
        return Some("nginx (apt-get install nginx-light)");
    }
    None
}

/// A scratch folder that sees the repository as an example expects.
fn scratch(doc: &Path) -> PathBuf {
    let name = doc
        .strip_prefix(repo())
        .unwrap()
        .to_string_lossy()
        .replace('/', "-");
    let dir = std::env::temp_dir().join(format!("atomlab-docs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    for item in [
        "include",
        "crates",
        "bench",
        "schema",
        "scripts",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        std::os::unix::fs::symlink(repo().join(item), dir.join(item)).unwrap();
    }
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_atomlab"), dir.join("bin/atomlab")).unwrap();
    if let Some(debs) = std::env::var_os("ATOMLAB_AUDIT_DEBS") {
        for entry in std::fs::read_dir(debs).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "deb") {
                std::os::unix::fs::symlink(&path, dir.join(path.file_name().unwrap())).unwrap();
            }
        }
    }
    dir
}

/// nginx prefixes for the load chapter's `--spawn 'exec nginx -p
/// /tmp/nginx-N …'`: the config the chapter describes (`daemon off;
/// worker_processes N;`, `return 200`), on a free port each, in the
/// scratch folder. Returns the command with the prefixes and ports put
/// in.
fn with_nginx(command: &str, dir: &Path) -> String {
    let mut command = command.to_string();
    for n in 1..=2u16 {
        let prefix = format!("/tmp/nginx-{n}");
        if !command.contains(&prefix) {
            continue;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let here = dir.join(format!("nginx-{n}"));
        std::fs::create_dir_all(here.join("logs")).unwrap();
        std::fs::write(
            here.join("nginx.conf"),
            format!(
                "daemon off; worker_processes {n}; error_log logs/error.log; pid logs/nginx.pid;\n\
                 events {{ worker_connections 1024; }}\n\
                 http {{ access_log off; client_body_temp_path logs; proxy_temp_path logs;\n\
                 fastcgi_temp_path logs; uwsgi_temp_path logs; scgi_temp_path logs;\n\
                 server {{ listen 127.0.0.1:{port}; location / {{ return 200 \"ok\\n\"; }} }} }}\n"
            ),
        )
        .unwrap();
        command = command
            .replace(&prefix, &here.to_string_lossy())
            .replace(&format!("127.0.0.1:808{n}"), &format!("127.0.0.1:{port}"));
    }
    command
}

/// Which examples a test runs: those of `audit --apt` (they fetch from
/// Debian's mirror) or the others.
#[derive(Clone, Copy, PartialEq)]
enum Selection {
    Apt,
    Local,
}

/// What running one document's examples gave.
#[derive(Default)]
struct Outcome {
    ran: usize,
    skipped: Vec<String>,
    failures: Vec<String>,
}

/// Runs the selected examples of `doc`, in order, in a scratch folder.
fn run_document(doc: &Path, selection: Selection) -> Outcome {
    let in_ci = std::env::var_os("ATOMLAB_CI").is_some();
    let require_cross = std::env::var_os("ATOMLAB_REQUIRE_CROSS").is_some();
    let mut outcome = Outcome::default();
    let examples: Vec<Example> = examples(doc)
        .into_iter()
        .filter(|ex| {
            let apt = ex.command.contains("--apt");
            // Builds run for both: an --apt line may follow one.
            let build = !ex.command.starts_with("atomlab");
            build || (apt == (selection == Selection::Apt))
        })
        .collect();
    if !examples.iter().any(|ex| ex.command.starts_with("atomlab")) {
        return outcome;
    }
    let dir = scratch(doc);
    // A build skipped leaves its output missing: the lines that name that
    // file are skipped with it.
    let mut missing: Vec<(String, String)> = Vec::new();
    for ex in examples {
        let at = format!(
            "{}:{}",
            ex.doc.strip_prefix(repo()).unwrap().display(),
            ex.line
        );
        let mut reason = need(&ex.command).map(str::to_string);
        if reason.is_none() {
            reason = missing
                .iter()
                .find(|(file, _)| ex.command.contains(file.as_str()))
                .map(|(_, why)| why.clone());
        }
        if let Some(why) = reason {
            let cross = why.contains("linux-gnu-gcc");
            if in_ci || (cross && require_cross) {
                outcome.failures.push(format!(
                    "{at}: `{}` needs {why}, which CI provides",
                    ex.command
                ));
            }
            outcome.skipped.push(format!("{at}: needs {why}"));
            let words: Vec<&str> = ex.command.split(' ').collect();
            if let Some(i) = words.iter().position(|w| *w == "-o") {
                if let Some(file) = words.get(i + 1) {
                    missing.push((file.to_string(), why));
                }
            }
            continue;
        }
        let command = with_nginx(&cut(&ex.command), &dir);
        let t = Instant::now();
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("timeout 300 {command}"))
            .current_dir(&dir)
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    dir.join("bin").display(),
                    std::env::var("PATH").unwrap()
                ),
            )
            .env("ATOMLAB_DB", dir.join("store.db"))
            .env_remove("ATOMLAB_STORE")
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .output()
            .unwrap();
        outcome.ran += 1;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("{at}: {:.1} s: {command}", t.elapsed().as_secs_f64());
        let code = out.status.code();
        let is_atomlab = ex.command.starts_with("atomlab");
        let fine = if is_atomlab {
            matches!(code, Some(0) | Some(1))
        } else {
            code == Some(0)
        };
        if !fine {
            outcome.failures.push(format!(
                "{at}: `{command}` exited {code:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
            ));
            continue;
        }
        let shown = columns(ex.shown.iter().map(String::as_str));
        if is_atomlab && !shown.is_empty() {
            let printed = columns(stdout.lines());
            // An excerpt (a line `…` marks what it leaves out) shows some
            // of the tables.
            let excerpt = ex.shown.iter().any(|l| l.trim() == "…");
            let agree = if excerpt {
                shown.is_subset(&printed)
            } else {
                printed == shown
            };
            if !agree {
                outcome.failures.push(format!(
                    "{at}: `{command}`: the docs show tables with columns {shown:?}, the command \
                     printed {printed:?}"
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

/// Runs the selected examples of every document, two documents at a time
/// (each in its own folder), and reports what ran, was skipped or failed.
fn run_all(selection: Selection) -> usize {
    let docs: Vec<PathBuf> = documents()
        .into_iter()
        // The log's commands ran on reference material kept outside the
        // repository; BENCHMARKS.md's table names scripts, not examples.
        .filter(|d| !d.ends_with("benchmarks-log.md") && !d.ends_with("BENCHMARKS.md"))
        .collect();
    let next = std::sync::Mutex::new(docs.into_iter());
    let total = std::sync::Mutex::new(Outcome::default());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some(doc) = next.lock().unwrap().next() else {
                    break;
                };
                let o = run_document(&doc, selection);
                let mut t = total.lock().unwrap();
                t.ran += o.ran;
                t.skipped.extend(o.skipped);
                t.failures.extend(o.failures);
            });
        }
    });
    let total = total.into_inner().unwrap();
    for s in &total.skipped {
        println!("skipped: {s}");
    }
    assert!(total.failures.is_empty(), "{}", total.failures.join("\n\n"));
    total.ran
}

#[test]
fn every_example_of_the_readme_and_the_book_runs() {
    let ran = run_all(Selection::Local);
    assert!(
        ran >= 20,
        "only {ran} examples ran: is the example reader broken?"
    );
}

/// The `audit --apt` examples fetch packages from Debian's mirror: they run
/// where `ATOMLAB_TEST_APT=1` says the network is there (`.ci/run`'s apt
/// step), and are skipped, saying so, elsewhere.
#[test]
fn the_apt_examples_run_with_the_network() {
    if std::env::var_os("ATOMLAB_TEST_APT").is_none() {
        println!("skipped: the docs' `audit --apt` examples need apt-get and the network (ATOMLAB_TEST_APT=1, as .ci/run sets in its apt step)");
        return;
    }
    let ran = run_all(Selection::Apt);
    assert!(ran >= 3, "only {ran} `audit --apt` examples ran");
}
