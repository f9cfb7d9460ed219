//! One C lock plugin (`tests/plugins/ticket.c`) built for aarch64 by
//! Debian's cross gcc (issue 25): `-march=armv8-a -mno-outline-atomics`
//! (LL/SC loops; Debian's gcc otherwise defaults to outline atomics),
//! `-march=armv8.1-a` (inline LSE), and `-march=armv8-a
//! -moutline-atomics` (libgcc's helpers: LSE or LL/SC chosen at run
//! time, the build of 001).
//!
//! - Anywhere: the two objects really differ (GNU objdump finds LSE
//!   instructions in one and exclusives in the other), and the audit of
//!   the plugin's functions says so in words.
//! - Where atomlab itself is an aarch64 binary under qemu-user
//!   (scripts/cross-test runs this test so): `bench lock --plugin` and
//!   `stress mutex --plugin` on both builds with `QEMU_CPU=cortex-a53`
//!   (ARMv8.0, no LSE) and `QEMU_CPU=max`. On cortex-a53 the LSE build is
//!   a crashed cell, SIGILL, explained as LSE needing ARMv8.1, exit 1; the
//!   LL/SC and outline-atomics builds run. On max both run, and the audit
//!   line tells them apart. QEMU_CPU, not `-cpu`: the plugin's child process (atomlab
//!   re-executed, through binfmt_misc) inherits it.
//!
//! Without the cross tools the tests skip with a message, and fail
//! instead under ATOMLAB_REQUIRE_CROSS=1 (as CI sets).

mod cli_support;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cli_support::{command, stderr, text};

const GCC: &str = "aarch64-linux-gnu-gcc";
const OBJDUMP: &str = "aarch64-linux-gnu-objdump";
const NM: &str = "aarch64-linux-gnu-nm";

/// Says why the test cannot run; panics instead under
/// ATOMLAB_REQUIRE_CROSS=1.
fn skip(msg: &str) {
    if std::env::var("ATOMLAB_REQUIRE_CROSS").is_ok_and(|v| v == "1") {
        panic!("{msg}, and ATOMLAB_REQUIRE_CROSS=1 is set");
    }
    let _ = writeln!(std::io::stderr(), "{msg}");
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The builds, (LL/SC, LSE, outline atomics), or `None` after saying why
/// not.
fn builds(tag: &str) -> Option<(PathBuf, PathBuf, PathBuf)> {
    for tool in [GCC, OBJDUMP, NM] {
        if !have(tool) {
            skip(&format!(
                "Arm plugin tests skipped: `{tool}` is not installed (apt-get install gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu)"
            ));
            return None;
        }
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("plugins-arm");
    std::fs::create_dir_all(&dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let build = |name: &str, flags: &[&str]| {
        let so = dir.join(format!("{tag}-{name}.so"));
        let o = Command::new(GCC)
            .args(["-O2", "-shared", "-fPIC"])
            .args(flags)
            .arg("-I")
            .arg(root.join("../../include"))
            .arg("-o")
            .arg(&so)
            .arg(root.join("tests/plugins/ticket.c"))
            .output()
            .expect("run the cross compiler");
        assert!(o.status.success(), "{GCC} {flags:?}: {}", stderr(&o));
        so
    };
    Some((
        build("llsc", &["-march=armv8-a", "-mno-outline-atomics"]),
        build("lse", &["-march=armv8.1-a"]),
        // GCC's outline atomics: LSE or LL/SC picked at run time (001).
        build("outline", &["-march=armv8-a", "-moutline-atomics"]),
    ))
}

/// The mnemonics GNU objdump prints for `so`'s code.
fn mnemonics(so: &Path) -> Vec<String> {
    let o = Command::new(OBJDUMP)
        .arg("-d")
        .arg(so)
        .output()
        .expect("objdump");
    assert!(o.status.success(), "{}", stderr(&o));
    text(&o.stdout)
        .lines()
        .filter_map(|l| Some(l.split('\t').nth(2)?.split_whitespace().next()?.to_string()))
        .collect()
}

fn is_lse(m: &str) -> bool {
    [
        "cas", "swp", "ldadd", "ldclr", "ldeor", "ldset", "stadd", "stset",
    ]
    .iter()
    .any(|p| m.starts_with(p))
}

fn is_exclusive(m: &str) -> bool {
    m.starts_with("ldxr")
        || m.starts_with("ldaxr")
        || m.starts_with("stxr")
        || m.starts_with("stlxr")
}

/// The address `nm` gives `symbol` in `so`.
fn symbol(so: &Path, name: &str) -> u64 {
    let o = Command::new(NM).arg(so).output().expect("nm");
    text(&o.stdout)
        .lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            let (a, _, n) = (w.next()?, w.next()?, w.next()?);
            (n == name).then(|| u64::from_str_radix(a, 16).ok())?
        })
        .unwrap_or_else(|| panic!("no {name} in {}", so.display()))
}

/// What the audit says `so`'s `lock` and `unlock` of the ticket lock do.
fn words(so: &Path) -> (String, String) {
    let bytes = std::fs::read(so).unwrap();
    let at = [symbol(so, "ticket_lock"), symbol(so, "ticket_unlock")];
    let r = atomlab_audit::functions_at(&so.display().to_string(), &bytes, &at).unwrap();
    let w = |i: usize| r.functions[i].as_ref().unwrap().words(r.arch);
    (w(0), w(1))
}

#[test]
fn the_arm_builds_differ_and_the_audit_says_how() {
    let Some((llsc, lse, outline)) = builds("words") else {
        return;
    };
    let (m_llsc, m_lse) = (mnemonics(&llsc), mnemonics(&lse));
    assert!(
        m_lse.iter().any(|m| is_lse(m)),
        "no LSE in the armv8.1-a build: {m_lse:?}"
    );
    assert!(!m_lse.iter().any(|m| is_exclusive(m)), "{m_lse:?}");
    assert!(
        m_llsc.iter().any(|m| is_exclusive(m)),
        "no exclusives in the armv8-a build: {m_llsc:?}"
    );
    assert!(!m_llsc.iter().any(|m| is_lse(m)), "{m_llsc:?}");

    let (lock, unlock) = words(&llsc);
    assert!(lock.contains("an LL/SC loop (ldxr/stxr)"), "{lock}");
    assert!(!lock.contains("LSE"), "{lock}");
    assert!(unlock.contains("a release store (stlr)"), "{unlock}");
    let (lock, unlock) = words(&lse);
    assert!(
        lock.contains("LSE atomics (ldadd; ARMv8.1, SIGILL on ARMv8.0)"),
        "{lock}"
    );
    assert!(!lock.contains("LL/SC"), "{lock}");
    assert!(unlock.contains("a release store (stlr)"), "{unlock}");
    let (lock, _) = words(&outline);
    assert!(
        lock.contains(
            "outline-atomics helpers (__aarch64_ldadd4_relax: LSE or LL/SC chosen at run time)"
        ),
        "{lock}"
    );
}

/// atomlab with `args` on the qemu CPU model `cpu`.
fn on(cpu: &str, args: &[&str]) -> Output {
    command()
        .env("QEMU_CPU", cpu)
        .args(args)
        .output()
        .expect("run atomlab")
}

fn bench(cpu: &str, so: &Path) -> Output {
    let so = so.to_str().unwrap();
    on(
        cpu,
        &[
            "--no-save",
            "bench",
            "lock",
            "--plugin",
            so,
            "--variant",
            "c-ticket",
            "--threads",
            "1",
            "--duration",
            "20ms",
            "--runs",
            "1",
            "--warmup",
            "0",
        ],
    )
}

fn stress(cpu: &str, so: &Path) -> Output {
    let so = so.to_str().unwrap();
    on(
        cpu,
        &[
            "--no-save",
            "stress",
            "mutex",
            "--plugin",
            so,
            "--variant",
            "c-ticket",
            "--ops",
            "2000",
            "--time-limit",
            "20",
        ],
    )
}

/// The bench table's c-ticket row: its line in each panel the table is
/// cut into to fit 100 columns, one after the other (the ns/op figure is
/// in the first, the status in the last).
fn row(out: &str) -> String {
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("| c-ticket ")).collect();
    assert!(!lines.is_empty(), "no c-ticket row: {out}");
    lines.concat()
}

fn has_figure(row: &str) -> bool {
    row.split('|')
        .map(str::trim)
        .nth(6)
        .is_some_and(|c| c.starts_with(|ch: char| ch.is_ascii_digit()))
}

#[test]
fn the_lse_build_crashes_on_armv8_0_and_both_run_on_max() {
    if !cfg!(target_arch = "aarch64") {
        let _ = writeln!(
            std::io::stderr(),
            "the qemu half of the Arm plugin test needs atomlab built for aarch64: scripts/cross-test runs it there"
        );
        return;
    }
    let Some((llsc, lse, outline)) = builds("qemu") else {
        return;
    };
    // QEMU_CPU picks the CPU only under qemu-user (with binfmt_misc for
    // the plugin's child process), not on an Arm machine.
    let m = text(&on("cortex-a53", &["machine", "--json"]).stdout);
    if !m.contains("\"emulated\": true") || m.contains("\"lse\"") {
        skip("the qemu half of the Arm plugin test skipped: not under qemu-user, so QEMU_CPU=cortex-a53 gives no ARMv8.0 CPU");
        return;
    }

    // cortex-a53: the LSE build is a crashed cell with the reason.
    let o = bench("cortex-a53", &lse);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(row(&out).contains("crashed"), "{out}");
    // The line wraps at 100 columns onto indented lines: rejoined.
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("crashed: lock c-ticket"))
        .unwrap_or_else(|| panic!("no crash line: {out}"));
    let mut crash = lines[at].to_string();
    for l in &lines[at + 1..] {
        if !l.starts_with(' ') {
            break;
        }
        crash.push(' ');
        crash.push_str(l.trim());
    }
    assert!(crash.contains("SIGILL (illegal instruction)"), "{crash}");
    assert!(
        crash.contains("lock uses ldadd: LSE atomics, which need ARMv8.1 (FEAT_LSE)"),
        "{crash}"
    );
    let o = stress("cortex-a53", &lse);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    // Compared with the wrapped lines' words rejoined.
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("crashed: SIGILL (illegal instruction)"),
        "{out}"
    );
    assert!(flat.contains("need ARMv8.1 (FEAT_LSE)"), "{out}");

    // cortex-a53: the LL/SC build runs and says it is LL/SC.
    let o = bench("cortex-a53", &llsc);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(has_figure(&row(&out)), "{out}");
    assert!(
        out.contains("note: c-ticket: lock uses an LL/SC loop (ldxr/stxr)"),
        "{out}"
    );
    let o = stress("cortex-a53", &llsc);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        stderr(&o)
    );
    assert!(text(&o.stdout).contains("mutex c-ticket: PASS"));

    // cortex-a53: outline atomics run (their LL/SC half) and say so.
    let o = bench("cortex-a53", &outline);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(has_figure(&row(&out)), "{out}");
    assert!(
        out.contains("note: c-ticket: lock uses outline-atomics helpers (__aarch64_ldadd4_relax"),
        "{out}"
    );

    // max: both run, and the audit line tells them apart.
    for (so, says) in [
        (&llsc, "lock uses an LL/SC loop (ldxr/stxr)"),
        (
            &lse,
            "lock uses LSE atomics (ldadd; ARMv8.1, SIGILL on ARMv8.0)",
        ),
    ] {
        let o = bench("max", so);
        let out = text(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
        assert!(has_figure(&row(&out)), "{out}");
        // Notes wrap to 100 columns, their rest two spaces in.
        assert!(
            out.replace("\n  ", " ")
                .contains(&format!("note: c-ticket: {says}")),
            "{out}"
        );
        let o = stress("max", so);
        let out = text(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
        assert!(out.contains(&format!("c-ticket: {says}")), "{out}");
    }
}
