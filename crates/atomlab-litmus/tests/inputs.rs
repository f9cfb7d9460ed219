//! Expanding a command line's files, directories and @lists.

use std::path::{Path, PathBuf};

use atomlab_litmus::inputs::{expand, litmus_files};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("atomlab-inputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn touch(p: &Path) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, "X86 t\n{}\n P0 ;\n MOV [x],$1 ;\nexists (x=1)\n").unwrap();
}

#[test]
fn a_directory_gives_its_litmus_files_sorted_subfolders_included() {
    let d = scratch("sorted");
    for f in [
        "b.litmus",
        "a.litmus",
        "sub/c.litmus",
        "notes.txt",
        "sub/x.expected",
        ".litmus",
    ] {
        touch(&d.join(f));
    }
    let names: Vec<String> = litmus_files(&d)
        .iter()
        .map(|p| p.strip_prefix(&d).unwrap().display().to_string())
        .collect();
    assert_eq!(names, ["a.litmus", "b.litmus", "sub/c.litmus"]);
}

/// A symbolic link to an ancestor once made the walk go round until the
/// path was too long (the same test checked 41 times).
#[test]
fn a_directory_reached_twice_is_walked_once() {
    let d = scratch("loop");
    touch(&d.join("SB.litmus"));
    std::os::unix::fs::symlink(&d, d.join("self")).unwrap();
    std::os::unix::fs::symlink(&d, d.join("again")).unwrap();
    assert_eq!(litmus_files(&d).len(), 1);
}

/// A list that names itself once overflowed the stack (exit 134).
#[test]
fn a_list_that_names_itself_is_refused_naming_the_chain() {
    let d = scratch("lists");
    touch(&d.join("t/SB.litmus"));
    std::fs::write(d.join("a.txt"), "# the tests\nt/SB.litmus\n@b.txt\n").unwrap();
    std::fs::write(d.join("b.txt"), "t\n@a.txt\n").unwrap();
    let e = expand(&[format!("@{}", d.join("a.txt").display())]);
    // a.txt's test, b.txt's folder (the same test), then the loop.
    assert_eq!(e.files.len(), 2, "{:?}", e.files);
    assert_eq!(e.errors.len(), 1, "{:?}", e.errors);
    assert!(
        e.errors[0].1.contains("the list names itself"),
        "{:?}",
        e.errors
    );
    assert!(
        e.errors[0].1.contains("a.txt -> ") && e.errors[0].1.contains("b.txt -> "),
        "{:?}",
        e.errors
    );
}

#[test]
fn what_cannot_be_used_is_named() {
    let d = scratch("missing");
    std::fs::create_dir_all(d.join("empty")).unwrap();
    let e = expand(&[
        d.join("nope.litmus").display().to_string(),
        d.join("empty").display().to_string(),
        format!("@{}", d.join("nolist.txt").display()),
    ]);
    assert!(e.files.is_empty());
    let why: Vec<&str> = e.errors.iter().map(|(_, w)| w.as_str()).collect();
    assert_eq!(why.len(), 3, "{why:?}");
    assert_eq!(why[0], "no such file or directory");
    assert_eq!(why[1], "no .litmus files in this directory");
    assert!(why[2].starts_with("cannot read list"), "{why:?}");
}
