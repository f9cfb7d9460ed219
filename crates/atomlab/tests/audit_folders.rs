//! `atomlab audit` over folders (issue 33): a symbolic link to a package
//! or an ELF file is followed (once, however many names lead to the file),
//! a link it does not follow is named in a note, and an input that could
//! not be audited is named once on its line.

mod audit_support;
mod cli_support;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Output;

use audit_support::*;

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A package holding /bin/true (any host's ELF file: `--by-file` audits
/// every architecture).
fn true_deb(path: &Path, name: &str) {
    let mut tar = Vec::new();
    deb::tar_file(
        &mut tar,
        b"./usr/bin/true",
        &std::fs::read("/bin/true").expect("/bin/true"),
    );
    deb::tar_end(&mut tar);
    std::fs::write(path, deb::deb(name, &tar)).unwrap();
}

/// Before: a folder of symbolic links to packages (a mirror's pool linked
/// into a dist folder) was "a directory that holds no ELF file", the links
/// passed over without a word.
#[test]
fn symbolic_links_to_packages_are_followed_and_others_named() {
    let dir = scratch("folder-links");
    let pool = dir.join("pool");
    let dist = dir.join("dist");
    std::fs::create_dir_all(&pool).unwrap();
    std::fs::create_dir_all(&dist).unwrap();
    true_deb(&pool.join("real_1.0_amd64.deb"), "real");
    symlink("../pool/real_1.0_amd64.deb", dist.join("real.deb")).unwrap();
    // A second name for the same package: audited once.
    symlink("real.deb", dist.join("again.deb")).unwrap();
    symlink("../pool", dist.join("pool-link")).unwrap();
    symlink("../pool/gone.deb", dist.join("dangling.deb")).unwrap();
    let o = atomlab()
        .args(["audit", "--no-save", "--by-file", "--json"])
        .arg(&dist)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let paths: Vec<&str> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["detail"]["path"].as_str())
        .collect();
    assert_eq!(paths.len(), 1, "the package audited once: {paths:?}");
    assert!(
        paths[0].ends_with("dist/again.deb!/usr/bin/true")
            || paths[0].ends_with("dist/real.deb!/usr/bin/true"),
        "{paths:?}"
    );
    // The links passed over are named, on stderr and in the run's notes.
    for link in ["pool-link", "dangling.deb"] {
        assert!(err.contains(link), "{link} not named: {err}");
    }
    assert!(err.contains("a link to a directory"), "{err}");
    assert!(err.contains("a link to nothing"), "{err}");
    let notes = doc["notes"].to_string();
    assert!(notes.contains("pool-link"), "{notes}");
}

/// A folder of ELF files with the usual library links (libx.so →
/// libx.so.1 → libx.so.1.2): each file audited once, under its own name,
/// and a link to a file outside the folder followed.
#[test]
fn a_library_and_its_links_are_audited_once() {
    let dir = scratch("folder-library-links");
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::copy("/bin/true", lib.join("libx.so.1.2")).expect("/bin/true");
    symlink("libx.so.1.2", lib.join("libx.so.1")).unwrap();
    symlink("libx.so.1", lib.join("libx.so")).unwrap();
    std::fs::copy("/bin/true", dir.join("outside")).unwrap();
    symlink("../outside", lib.join("outside-link")).unwrap();
    let o = atomlab()
        .args(["audit", "--no-save", "--json"])
        .arg(&lib)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let mut paths: Vec<String> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["detail"]["path"].as_str())
        .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
        .collect();
    paths.sort();
    assert_eq!(paths, ["libx.so.1.2", "outside-link"], "{err}");
    assert!(err.contains("audited under another name"), "{err}");
}

/// Before: `--by-file` of a package with no ELF file, and a folder with
/// none, printed the path twice ("x.deb: x.deb: no ELF file…").
#[test]
fn an_input_without_elf_files_is_named_once() {
    let dir = scratch("named-once");
    let mut tar = Vec::new();
    deb::tar_file(&mut tar, b"./usr/share/doc/meta/copyright", b"text\n");
    deb::tar_end(&mut tar);
    let meta = dir.join("meta_1.0_all.deb");
    std::fs::write(&meta, deb::deb("meta", &tar)).unwrap();
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("README"), "no ELF here\n").unwrap();
    for (args, input) in [
        (&["--by-file"][..], &meta),
        (&[][..], &meta),
        (&[][..], &empty),
    ] {
        let o = atomlab()
            .args(["audit", "--no-save"])
            .args(args)
            .arg(input)
            .output()
            .unwrap();
        let (_, err) = text(&o);
        let name = input.display().to_string();
        let line = err
            .lines()
            .find(|l| l.contains("no ELF file"))
            .unwrap_or_else(|| panic!("{args:?} {name}: no line says so: {err}"));
        assert_eq!(
            line.matches(name.as_str()).count(),
            1,
            "{args:?}: the path once: {line}"
        );
    }
}
