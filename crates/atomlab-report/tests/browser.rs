//! The report in a real browser: Debian's chromium, headless, loads the
//! page from a file, takes a screenshot and dumps the DOM it built. The
//! screenshot stays under the target directory
//! (`atomlab-report-test/report.png`) for CI to keep as an artifact.
//!
//! Skipped, with a line on stderr, where `/usr/bin/chromium` is absent.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use atomlab_report::render_html;
use common::{comparison, figures, run};

const CHROMIUM: &str = "/usr/bin/chromium";

/// The cargo target directory: `CARGO_TARGET_DIR` (as given to this test,
/// else as given to the build), else the workspace's `target`.
fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let given = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .or_else(|| option_env!("CARGO_TARGET_DIR").map(PathBuf::from));
    match given {
        Some(p) if p.is_absolute() => p,
        Some(p) => workspace.join(p),
        None => workspace.join("target"),
    }
}

/// Output of one chromium run, killed after `limit`.
struct ChromiumRun {
    success: bool,
    stdout: String,
    stderr: String,
}

fn chromium(profile: &Path, args: &[String], limit: Duration) -> ChromiumRun {
    let out_dir = profile.with_extension("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let (so, se) = (out_dir.join("stdout"), out_dir.join("stderr"));
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&so).unwrap())
        .stderr(std::fs::File::create(&se).unwrap())
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    let outcome = ChromiumRun {
        success: status.is_some_and(|s| s.success()),
        stdout: read(&so),
        stderr: read(&se),
    };
    assert!(
        status.is_some(),
        "chromium did not finish in {limit:?}; stderr:\n{}",
        outcome.stderr
    );
    outcome
}

/// Lines where the page itself complained: console errors, uncaught
/// exceptions (Content-Security-Policy refusals are console errors too).
fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| (l.contains("CONSOLE") && l.contains("ERROR")) || l.contains("Uncaught"))
        .collect()
}

#[test]
fn chromium_renders_the_report_without_errors() {
    if !Path::new(CHROMIUM).exists() {
        eprintln!(
            "skipped: Debian's chromium is not installed (apt-get install chromium); \
             the report's browser test needs it"
        );
        return;
    }
    let runs = [
        run("suite.json", "suite-2026-12-01", Some("suite on <ci>")),
        run("bench-counter.json", "bench-1", Some("counter again")),
        run("check.json", "check-1", None),
        run("audit.json", "audit-1", None),
    ];
    let comparison = comparison();
    let html = render_html(&runs, Some(&comparison));
    let expected: Vec<String> = figures(&html).into_iter().map(|(n, _)| n).collect();
    assert!(expected.len() >= 6, "bench scenarios and the comparison");

    let dir = target_dir().join("atomlab-report-test");
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("report.html");
    std::fs::write(&page, &html).unwrap();
    let page = page.canonicalize().unwrap();
    let png = dir.join("report.png");
    let _ = std::fs::remove_file(&png);
    let url = format!("file://{}", page.display());

    // A fresh profile per run, under the system's temporary directory.
    let profile = |what: &str| {
        let p = std::env::temp_dir().join(format!(
            "atomlab-report-chromium-{}-{what}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&p);
        p
    };
    let limit = Duration::from_secs(180);

    let shot_profile = profile("shot");
    let shot = chromium(
        &shot_profile,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1280,4000".into(),
            url.clone(),
        ],
        limit,
    );
    assert!(shot.success, "screenshot run failed:\n{}", shot.stderr);
    assert!(
        console_errors(&shot.stderr).is_empty(),
        "console errors: {:?}",
        console_errors(&shot.stderr)
    );
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 50_000,
        "screenshot {} is {size} bytes",
        png.display()
    );
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG");

    let dom_profile = profile("dom");
    let dom = chromium(&dom_profile, &["--dump-dom".into(), url], limit);
    assert!(dom.success, "dump-dom run failed:\n{}", dom.stderr);
    assert!(
        console_errors(&dom.stderr).is_empty(),
        "console errors: {:?}",
        console_errors(&dom.stderr)
    );
    let found = figures(&dom.stdout);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, expected, "every chart figure is in the DOM");
    for (name, fig) in &found {
        assert!(fig.contains("<svg"), "{name}: no svg in the DOM");
        assert!(fig.contains("<text"), "{name}: no text in the DOM's svg");
    }
    std::fs::write(dir.join("report.dom.html"), &dom.stdout).unwrap();
    for p in [shot_profile, dom_profile] {
        let _ = std::fs::remove_dir_all(&p);
        let _ = std::fs::remove_dir_all(p.with_extension("out"));
    }
    eprintln!("screenshot: {} ({size} bytes)", png.display());
}
