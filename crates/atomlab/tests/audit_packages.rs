//! `atomlab audit` over Debian packages (issue 27): one row per package,
//! worst first, with its ELF file count and the file that decided it; what
//! needs attention; `--by-file` for the row per file; a damaged, foreign or
//! unreadable package gets one line and the rest goes on. The packages are
//! built here (`ar`, `tar`, `xz`) from the fixtures the other audit tests
//! compile.

mod audit_support;
mod cli_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use audit_support::*;

const A64_CC: &str = "aarch64-linux-gnu-gcc";
const RV_CC: &str = "riscv64-linux-gnu-gcc";

fn sh(dir: &Path, script: &str) {
    let o = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Builds `dir/NAME_1.0_arm64.deb` holding `files` (binary, path under
/// /usr/bin) and a README, its data archive compressed by `comp` ("xz",
/// "gz", or any other name: the data member's suffix, its bytes plain tar).
fn deb(dir: &Path, name: &str, files: &[(&Path, &str)], comp: &str) -> PathBuf {
    // Beside `dir`, so that `dir` holds only packages.
    let work = PathBuf::from(format!("{}-build/{name}", dir.display()));
    let _ = std::fs::remove_dir_all(&work);
    let root = work.join("root");
    std::fs::create_dir_all(root.join("usr/bin")).unwrap();
    std::fs::create_dir_all(root.join("usr/share/doc")).unwrap();
    std::fs::write(root.join("usr/share/doc/README"), "not an ELF\n").unwrap();
    for (bin, as_name) in files {
        std::fs::copy(bin, root.join("usr/bin").join(as_name)).unwrap();
    }
    let data = match comp {
        "xz" => "tar -C root -cf data.tar . && xz -0 -f data.tar".to_string(),
        "gz" => "tar -C root -cf data.tar . && gzip -1 -f data.tar".to_string(),
        other => format!("tar -C root -cf data.tar.{other} ."),
    };
    sh(
        &work,
        &format!("printf '2.0\\n' > debian-binary && printf 'Package: {name}\\n' > control && tar -cf control.tar control && gzip -f control.tar && {data}"),
    );
    let out = dir.join(format!("{name}_1.0_arm64.deb"));
    sh(
        &work,
        &format!(
            "ar rc {} debian-binary control.tar.gz data.tar.{comp}",
            out.display()
        ),
    );
    out
}

/// The aarch64 fixtures: (no atomics, outline helpers, inline LSE, LL/SC).
struct Bins {
    none: PathBuf,
    outline: PathBuf,
    lse: PathBuf,
    llsc: PathBuf,
}

fn bins(dir: &Path) -> Bins {
    let c = &["atomics.c"];
    let b = Bins {
        none: dir.join("none"),
        outline: dir.join("outline"),
        lse: dir.join("lse"),
        llsc: dir.join("llsc"),
    };
    compile(A64_CC, &[], &["noatomics.c"], &b.none);
    // GCC 12's default on aarch64 is -moutline-atomics.
    compile(A64_CC, &[], c, &b.outline);
    compile(A64_CC, &["-march=armv8.1-a"], c, &b.lse);
    compile(
        A64_CC,
        &["-march=armv8-a", "-mno-outline-atomics"],
        c,
        &b.llsc,
    );
    b
}

fn audit(args: &[&str], paths: &[&Path]) -> Output {
    let out = atomlab()
        .args(["audit", "--no-save"])
        .args(args)
        .args(paths)
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The table rows (lines with a package's name in the first cell).
fn row<'a>(out: &'a str, name: &str) -> Option<&'a str> {
    out.lines()
        .find(|l| l.split(['│', '|']).map(str::trim).find(|c| !c.is_empty()) == Some(name))
}

/// The four packages, given in the opposite of their order of severity.
fn four(dir: &Path, b: &Bins) -> Vec<PathBuf> {
    vec![
        deb(dir, "quiet", &[(&b.none, "quiet")], "xz"),
        deb(
            dir,
            "modern",
            &[(&b.none, "a-none"), (&b.outline, "b-outline")],
            "xz",
        ),
        deb(
            dir,
            "oldbuild",
            &[(&b.outline, "a-outline"), (&b.llsc, "b-llsc")],
            "gz",
        ),
        deb(
            dir,
            "v81only",
            &[
                (&b.none, "a-none"),
                (&b.outline, "b-outline"),
                (&b.lse, "c-lse"),
            ],
            "xz",
        ),
    ]
}

#[test]
fn a_row_per_package_worst_first_with_what_needs_attention() {
    if !have_tools("a_row_per_package", &[A64_CC]) {
        return;
    }
    let dir = scratch("packages");
    let b = bins(&dir);
    let dir = dir.join("debs");
    std::fs::create_dir_all(&dir).unwrap();
    let debs = four(&dir, &b);
    let paths: Vec<&Path> = debs.iter().map(PathBuf::as_path).collect();
    let out = audit(&[], &paths);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    // One row per package, worst first.
    let expect = [
        ("v81only", "needs ARMv8.1", "3", "/usr/bin/c-lse"),
        ("oldbuild", "LL/SC only", "2", "/usr/bin/b-llsc"),
        ("modern", "run-time LSE", "2", "/usr/bin/b-outline"),
        ("quiet", "no atomics", "1", "-"),
    ];
    let mut at = Vec::new();
    for (name, verdict, files, decided) in expect {
        let r = row(&stdout, name).unwrap_or_else(|| panic!("no row for {name}:\n{stdout}"));
        let cells: Vec<&str> = r
            .split(['│', '|'])
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert!(cells[1].contains(verdict), "{name}: {r}");
        assert_eq!(cells[2], files, "{name}: {r}");
        assert_eq!(cells[3], decided, "{name}: {r}");
        at.push(stdout.find(r).unwrap());
    }
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "not worst first:\n{stdout}"
    );
    // No row per file.
    assert!(!stdout.contains(".deb!"), "{stdout}");

    // What needs attention: the SIGILL and the LL/SC-only file, by name.
    let attention = &stdout[stdout.find("needs attention").expect(&stdout)..];
    // Under each reason, a package a line: `    NAME (FILE)`.
    let under = |reason: &str| -> Vec<&str> {
        let mut lines = attention.lines();
        lines
            .by_ref()
            .find(|l| l.contains(reason))
            .unwrap_or_else(|| panic!("no {reason:?} in\n{attention}"));
        lines
            .take_while(|l| l.starts_with("    "))
            .map(str::trim)
            .collect()
    };
    assert_eq!(under("SIGILL"), ["v81only (/usr/bin/c-lse)"], "{attention}");
    assert_eq!(
        under("-moutline-atomics fixes"),
        ["oldbuild (/usr/bin/b-llsc)"],
        "{attention}"
    );

    // A directory of the packages gives the same rows.
    let dir_out = audit(&[], &[&dir]);
    assert_eq!(dir_out.status.code(), Some(0), "{}", text(&dir_out.stderr));
    let dir_stdout = text(&dir_out.stdout);
    let cells = |out: &str, name: &str| -> Vec<String> {
        row(out, name)
            .unwrap_or_else(|| panic!("no row for {name}:\n{out}"))
            .split(['│', '|'])
            .map(|c| c.trim().to_string())
            .collect()
    };
    for (name, ..) in expect {
        assert_eq!(
            cells(&dir_stdout, name),
            cells(&stdout, name),
            "{dir_stdout}"
        );
    }

    // Without attention needed, it says so.
    let calm = audit(&[], &[&debs[0], &debs[1]]);
    assert!(
        text(&calm.stdout).contains("needs attention: none"),
        "{}",
        text(&calm.stdout)
    );
}

#[test]
fn by_file_and_records_of_packages() {
    if !have_tools("by_file_and_records", &[A64_CC]) {
        return;
    }
    let dir = scratch("packages-json");
    let b = bins(&dir);
    let debs = four(&dir, &b);
    let paths: Vec<&Path> = debs.iter().map(PathBuf::as_path).collect();

    // --by-file: today's row per ELF file.
    let out = audit(&["--by-file"], &paths);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for d in &debs {
        assert!(
            stdout.contains(&format!("{}!/usr/bin/", d.display())),
            "{stdout}"
        );
    }
    assert!(!stdout.contains("needs attention"), "{stdout}");

    // Records: one per package (scenario = its name, its verdict the
    // observation), then one per file.
    let out = audit(&["--json"], &paths);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let records = doc["records"].as_array().unwrap();
    let pkgs: Vec<&serde_json::Value> = records
        .iter()
        .filter(|r| r["variant"] == "package")
        .collect();
    let names: Vec<&str> = pkgs
        .iter()
        .map(|r| r["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["quiet", "modern", "oldbuild", "v81only"]);
    let v81 = pkgs[3];
    assert_eq!(v81["parameters"]["observation"], "needs_armv8.1");
    assert_eq!(v81["metrics"][0]["name"], "elf_files");
    assert_eq!(v81["metrics"][0]["samples"][0], 3.0);
    assert!(v81["detail"]["deciding_file"]
        .as_str()
        .unwrap()
        .ends_with("!/usr/bin/c-lse"));
    assert_eq!(
        records.iter().filter(|r| r["scenario"] == "binary").count(),
        8
    );
}

#[test]
fn compare_of_two_snapshots_names_the_package_that_changed() {
    if !have_tools("compare_of_two_snapshots", &[A64_CC]) {
        return;
    }
    let dir = scratch("packages-compare");
    let b = bins(&dir);
    let (old, new) = (dir.join("old"), dir.join("new"));
    std::fs::create_dir_all(&old).unwrap();
    std::fs::create_dir_all(&new).unwrap();
    deb(&old, "steady", &[(&b.outline, "s")], "xz");
    deb(&old, "regressed", &[(&b.outline, "r")], "xz");
    deb(&new, "steady", &[(&b.outline, "s")], "xz");
    deb(&new, "regressed", &[(&b.lse, "r")], "xz");
    let store = dir.join("store.db");
    let store = store.to_str().unwrap();
    for (label, d) in [("old", &old), ("new", &new)] {
        let o = cli_support::with_store(store, &["--label", label, "audit", d.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let o = cli_support::with_store(store, &["compare", "old", "new"]);
    let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
    let changed: Vec<&str> = all
        .lines()
        .filter(|l| l.contains("needs_armv8.1"))
        .collect();
    assert_eq!(changed.len(), 1, "{all}");
    assert!(changed[0].contains("regressed"), "{all}");
    assert!(changed[0].contains("run_time_lse"), "{all}");
    assert!(!all.contains("steady package"), "{all}");
    // Coming to need ARMv8.1 is a regression (issue 27: it was listed
    // but compare exited 0); the way back is not.
    assert_eq!(o.status.code(), Some(1), "{all}");
    let back = cli_support::with_store(store, &["compare", "new", "old"]);
    let all = format!("{}{}", text(&back.stdout), text(&back.stderr));
    assert_eq!(back.status.code(), Some(0), "{all}");
}

#[test]
fn a_bad_package_gets_one_line_and_the_rest_goes_on() {
    if !have_tools("a_bad_package", &[A64_CC, RV_CC]) {
        return;
    }
    let dir = scratch("packages-bad");
    let b = bins(&dir);
    let good = deb(&dir, "good", &[(&b.outline, "g")], "xz");
    // Cut short in the middle of its data archive.
    let whole = std::fs::read(&good).unwrap();
    let damaged = dir.join("damaged_1.0_arm64.deb");
    std::fs::write(&damaged, &whole[..whole.len() * 2 / 3]).unwrap();
    // A riscv64 package.
    let rv = dir.join("rv");
    compile(RV_CC, &[], &["noatomics.c"], &rv);
    let foreign = deb(&dir, "foreign", &[(&rv, "a"), (&rv, "b")], "xz");
    // A data archive compressed in a way atomlab does not read.
    let lz = deb(&dir, "squeezed", &[(&b.outline, "z")], "lz4");

    let bad = [&damaged, &foreign, &lz];
    let mut paths: Vec<&Path> = vec![&good];
    paths.extend(bad.iter().map(|p| p.as_path()));
    let out = audit(&[], &paths);
    let err = text(&out.stderr);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(row(&stdout, "good").is_some(), "{stdout}");
    for (p, why) in [
        (&damaged, "damaged"),
        (&foreign, "not an arm64 package"),
        (&lz, "unknown compression"),
    ] {
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.contains(&p.display().to_string()))
            .collect();
        assert_eq!(lines.len(), 1, "{}: one line:\n{err}", p.display());
        if why != "damaged" {
            assert!(lines[0].contains(why), "{}", lines[0]);
        }
        let name = p.file_name().unwrap().to_str().unwrap();
        let name = name.split('_').next().unwrap();
        assert!(row(&stdout, name).is_none(), "{stdout}");
    }
    // The counts' line wraps at 100 columns: read it as one text.
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("3 not audited"), "{stdout}");

    // Nothing audited: exit 2, still one line each.
    let bad_paths: Vec<&Path> = bad.iter().map(|p| p.as_path()).collect();
    let out = audit(&[], &bad_paths);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert_eq!(
        err.lines().filter(|l| l.contains(".deb")).count(),
        3,
        "{err}"
    );
}

#[test]
fn elf_files_outside_packages_keep_the_row_per_file() {
    if !have_tools("elf_files_outside_packages", &[A64_CC]) {
        return;
    }
    let dir = scratch("packages-elf");
    let b = bins(&dir);
    let out = audit(&[], &[&dir]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(&b.lse.display().to_string()), "{stdout}");
    assert!(!stdout.contains("needs attention"), "{stdout}");
}

/// A stand-in for apt-get that serves the packages in `mirror`: it logs
/// each call, `update` does nothing, `download --print-uris` names the
/// files (or says apt's "Unable to locate package" and exits 100, as apt
/// does for the whole list), `download` copies them into the current
/// directory. Returns the directory to put first on PATH.
fn fake_apt(dir: &Path, mirror: &Path) -> PathBuf {
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        r#"#!/bin/sh
mirror='{mirror}'
echo "$*" >> '{log}'
while [ $# -gt 0 ]; do
  case "$1" in -q) shift ;; -o) shift 2 ;; *) break ;; esac
done
cmd=$1; shift
[ "$cmd" = update ] && exit 0
uris=0; [ "$1" = --print-uris ] && {{ uris=1; shift; }}
# Names only after `--`, as atomlab passes them (never as options).
[ "$1" = -- ] || {{ echo "E: names without -- before them" >&2; exit 100; }}
shift
rc=0
for p in "$@"; do
  f=$(ls "$mirror" | grep "^${{p}}_" | head -n1)
  if [ -z "$f" ]; then echo "E: Unable to locate package $p" >&2; rc=100; continue; fi
  # As apt: no URI for a file already in the current directory, and a
  # Get: line for each file it downloads.
  if [ $uris = 1 ]; then [ -e "$f" ] || echo "'file://$mirror/$f' $f 1 SHA256:0"
  elif ! [ -e "$f" ]; then echo "Get:1 file://$mirror bookworm/main arm64 $p arm64 1.0 [1 B]"; cp "$mirror/$f" .; fi
done
exit $rc
"#,
        mirror = mirror.display(),
        log = dir.join("apt.log").display()
    );
    let path = bin.join("apt-get");
    std::fs::write(&path, script).unwrap();
    sh(&bin, "chmod +x apt-get");
    bin
}

fn audit_with_path(path_first: &Path, args: &[&str]) -> Output {
    let path = format!(
        "{}:{}",
        path_first.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = atomlab()
        .args(["audit", "--no-save"])
        .args(args)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        !text(&out.stderr).contains("panicked"),
        "{}",
        text(&out.stderr)
    );
    out
}

/// Issue 27: `--apt PKG…` fetches packages by name into a cache and audits
/// them; a name apt does not know gets one line and the rest goes on; a
/// second run does not fetch the package lists again.
#[test]
fn apt_fetches_packages_by_name_and_a_missing_one_gets_a_line() {
    if !have_tools("apt_fetches_packages", &[A64_CC]) {
        return;
    }
    let dir = scratch("packages-apt");
    let b = bins(&dir);
    let mirror = dir.join("mirror");
    std::fs::create_dir_all(&mirror).unwrap();
    deb(&mirror, "modern", &[(&b.outline, "m")], "xz");
    deb(&mirror, "v81only", &[(&b.lse, "v")], "xz");
    let bin = fake_apt(&dir, &mirror);
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    // A name apt cannot give fails a CI list (exit 1, named), unless
    // --allow-missing says that is expected; the others are audited
    // either way.
    let strict = ["--apt", "modern", "nosuch", "v81only", "--apt-cache", cache];
    let o = audit_with_path(&bin, &strict);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("1 of the 3 --apt names could not be fetched (nosuch)"),
        "{err}"
    );
    let args = [&strict[..], &["--allow-missing"]].concat();
    let o = audit_with_path(&bin, &args);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        err.contains("nosuch") && err.contains("Unable to locate package nosuch"),
        "{err}"
    );
    let row = |name: &str| out.lines().find(|l| l.contains(name)).map(str::to_string);
    assert!(
        row("v81only").is_some_and(|l| l.contains("needs ARMv8.1")),
        "{out}"
    );
    assert!(
        row("modern").is_some_and(|l| l.contains("ARMv8.0-safe")),
        "{out}"
    );
    assert!(Path::new(cache).join("debs/modern_1.0_arm64.deb").is_file());
    // The lists are a day fresh: the second run only downloads, and the
    // packages already in the cache are audited again.
    let o = audit_with_path(&bin, &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), out);
    let log = std::fs::read_to_string(dir.join("apt.log")).unwrap();
    assert_eq!(
        log.lines().filter(|l| l.ends_with(" update")).count(),
        1,
        "{log}"
    );
    // Every call keeps apt's state in the cache and asks for arm64.
    assert!(
        log.lines()
            .all(|l| l.contains(&format!("Dir::State::Lists={cache}/lists"))
                && l.contains("APT::Architecture=arm64")),
        "{log}"
    );
}

/// Nothing fetched is bad input (exit 2), a line per name; no apt-get at
/// all says what is needed.
#[test]
fn apt_with_nothing_to_fetch_or_no_apt_get_is_bad_input() {
    let dir = scratch("packages-apt-none");
    let mirror = dir.join("mirror");
    std::fs::create_dir_all(&mirror).unwrap();
    let bin = fake_apt(&dir, &mirror);
    let cache = dir.join("cache");
    let cache = cache.to_str().unwrap();
    let o = audit_with_path(&bin, &["--apt", "gone1", "gone2", "--apt-cache", cache]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("gone1") && err.contains("gone2"), "{err}");
    // An empty PATH: no apt-get.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = atomlab()
        .args(["audit", "--no-save", "--apt", "gzip", "--apt-cache", cache])
        .env("PATH", &empty)
        .output()
        .unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot run apt-get"), "{err}");
}

/// The real apt-get and Debian's mirror: gzip for arm64 (138 kB). Needs the
/// network, so it runs where ATOMLAB_TEST_APT=1 (`.ci/run` sets it).
#[test]
fn apt_fetches_a_real_arm64_package_from_debian() {
    if std::env::var("ATOMLAB_TEST_APT").as_deref() != Ok("1") {
        eprintln!("apt_fetches_a_real_arm64_package_from_debian: skipped: set ATOMLAB_TEST_APT=1 to fetch from Debian's mirror (.ci/run does)");
        return;
    }
    let dir = scratch("packages-apt-real");
    let cache = dir.join("cache");
    let o = atomlab()
        .args(["audit", "--no-save", "--apt", "gzip", "--apt-cache"])
        .arg(&cache)
        .output()
        .unwrap();
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(out.lines().any(|l| l.starts_with("| gzip ")), "{out}");
}

/// A metapackage (no ELF file, as golang-go or nginx-core) is not a damaged
/// package: its line says there was nothing to audit.
#[test]
fn a_package_without_elf_files_is_not_called_bad() {
    if !have_tools("a_package_without_elf_files", &[A64_CC]) {
        return;
    }
    let dir = scratch("packages-meta");
    let b = bins(&dir);
    let meta = deb(&dir, "meta", &[], "xz");
    let real = deb(&dir, "real", &[(&b.outline, "r")], "xz");
    let o = audit(&[], &[&meta, &real]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("no ELF file in this package"), "{err}");
    assert!(!err.contains("bad Debian package"), "{err}");
}

/// Builds a package with dpkg-deb (control.tar.xz, as Debian's are) whose
/// control file says `control` and whose file is called `file_name`.
fn dpkg_deb(dir: &Path, control: &str, bin: &Path, file_name: &str) -> PathBuf {
    let work = dir.join(format!("{file_name}-root"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(work.join("usr/bin")).unwrap();
    std::fs::write(work.join("DEBIAN/control"), control).unwrap();
    std::fs::copy(bin, work.join("usr/bin/tool")).unwrap();
    let out = dir.join(file_name);
    run_ok(
        Command::new("dpkg-deb")
            .args(["--root-owner-group", "-Zxz", "--build"])
            .arg(&work)
            .arg(&out),
    );
    out
}

/// Issue 27: a package is named by its control file (Package:, with its
/// Version: and Architecture: in the record), not by its file name: a
/// renamed .deb, and one whose control names another architecture than
/// its ELF files, keep the control's name; the row, the record (what
/// `compare` matches) and the foreign package's line say so.
#[test]
fn a_package_is_named_by_its_control_file_not_its_file_name() {
    if !have_tools(
        "a_package_is_named_by_its_control_file",
        &[A64_CC, RV_CC, "dpkg-deb"],
    ) {
        return;
    }
    let dir = scratch("packages-control");
    let b = bins(&dir);
    let debs = dir.join("debs");
    std::fs::create_dir_all(&debs).unwrap();
    let control = |name: &str, version: &str, arch: &str| {
        format!("Package: {name}\nVersion: {version}\nArchitecture: {arch}\nMaintainer: atomlab tests <tests@example.invalid>\nDescription: a fixture\n continued description line\n")
    };
    // Renamed: the file says "oldname" and amd64.
    let renamed = dpkg_deb(
        &debs,
        &control("realname", "2.5-1", "arm64"),
        &b.lse,
        "oldname_0.1_amd64.deb",
    );
    // The control says amd64, the ELF file is aarch64: audited, named by
    // its control.
    let mislabelled = dpkg_deb(
        &debs,
        &control("labelled-amd64", "1:3.0", "amd64"),
        &b.outline,
        "whatever.deb",
    );
    // A riscv64 ELF file in a package whose control says arm64.
    let rv = dir.join("rv");
    compile(RV_CC, &[], &["noatomics.c"], &rv);
    let foreign = dpkg_deb(
        &debs,
        &control("says-arm64", "1.0", "arm64"),
        &rv,
        "foreign_1.0_arm64.deb",
    );
    let out = audit(&[], &[&renamed, &mislabelled, &foreign]);
    let (stdout, err) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        row(&stdout, "realname").is_some_and(|r| r.contains("needs ARMv8.1")),
        "{stdout}"
    );
    assert!(
        row(&stdout, "labelled-amd64").is_some_and(|r| r.contains("ARMv8.0-safe")),
        "{stdout}"
    );
    for wrong in ["oldname", "whatever", "foreign"] {
        assert!(row(&stdout, wrong).is_none(), "{wrong}:\n{stdout}");
    }
    assert!(
        stdout.contains("SIGILL") && stdout.contains("realname (/usr/bin/tool)"),
        "{stdout}"
    );
    let line = err
        .lines()
        .find(|l| l.contains("foreign_1.0_arm64.deb"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("not an arm64 package")
            && line.contains("riscv64")
            && line.contains("its control file says Architecture: arm64"),
        "{line}"
    );

    // The records: scenario = the control's name, its version and
    // architecture in the detail.
    let out = audit(&["--json"], &[&renamed, &mislabelled]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pkgs: Vec<&serde_json::Value> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["variant"] == "package")
        .collect();
    let got: Vec<(&str, &str, &str)> = pkgs
        .iter()
        .map(|r| {
            (
                r["scenario"].as_str().unwrap(),
                r["detail"]["version"].as_str().unwrap_or("-"),
                r["detail"]["architecture"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("realname", "2.5-1", "arm64"),
            ("labelled-amd64", "1:3.0", "amd64")
        ]
    );
}

/// Issue 27: on a terminal (a pseudo-terminal script(1) makes), a bar with
/// an ETA over the packages audited and one over the packages `--apt`
/// fetches; nothing of either when stderr is a pipe.
#[test]
fn progress_shows_on_a_terminal_only() {
    if !have_tools("progress_shows_on_a_terminal_only", &[A64_CC, "script"]) {
        return;
    }
    let dir = scratch("packages-progress");
    let b = bins(&dir);
    let mirror = dir.join("mirror");
    std::fs::create_dir_all(&mirror).unwrap();
    deb(&mirror, "modern", &[(&b.outline, "m")], "xz");
    deb(&mirror, "v81only", &[(&b.lse, "v")], "xz");
    deb(&mirror, "quiet", &[(&b.none, "q")], "xz");
    let bin = fake_apt(&dir, &mirror);
    let args = |cache: &str| -> Vec<String> {
        ["audit", "--no-save", "--apt", "modern", "v81only", "quiet"]
            .iter()
            .map(|a| a.to_string())
            .chain(["--apt-cache".to_string(), cache.to_string()])
            .collect()
    };

    let cache = dir.join("cache-tty");
    let line = std::iter::once(env!("CARGO_BIN_EXE_atomlab").to_string())
        .chain(args(cache.to_str().unwrap()))
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let line = format!("PATH='{}':\"$PATH\" {line}", bin.display());
    let o = Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let tty = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{tty}{}", text(&o.stderr));
    assert!(tty.contains("/3 packages fetched ["), "{tty}");
    assert!(tty.contains("/3 packages ["), "{tty}");
    assert!(tty.contains("ETA"), "{tty}");
    assert!(row(&tty, "v81only").is_some(), "{tty}");

    // Piped: the same run says where it fetches, and nothing else moves.
    let cache = dir.join("cache-pipe");
    let piped: Vec<String> = args(cache.to_str().unwrap());
    let piped: Vec<&str> = piped.iter().skip(2).map(String::as_str).collect();
    let o = audit_with_path(&bin, &piped);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("fetching 3 arm64 packages"), "{err}");
    assert!(!err.contains("ETA") && !err.contains('\r'), "{err:?}");
    assert!(!err.contains("packages fetched"), "{err}");
}
