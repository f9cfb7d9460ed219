//! Names read from files reach the terminal, the JSON and the store only
//! with their control characters made visible (issue 33): a package
//! member's path and an ELF file's function names, as `atomlab audit`
//! prints them, as `atomlab show` prints the saved run, and in `--json`.
//! A member's path is otherwise shown as the archive has it (`..` and
//! all), and nothing of the package is written to disk.

mod audit_support;
mod cli_support;

use std::path::Path;
use std::process::Output;

use audit_support::*;

/// The placeholder in the fixture's function name, patched in the ELF
/// file's string table to [`EVIL_FN`] (same length).
const PLACEHOLDER: &[u8] = b"AAAAAAAAAAAAAAAAAAAA";
const EVIL_FN: &[u8] = b"\x1b[31mX\n| forged |ZZZ";

/// An x86-64 ELF file with a function named `evil_` + [`EVIL_FN`] that
/// does an atomic read-modify-write (so that `--by-function` lists it).
fn evil_elf(dir: &Path) -> Vec<u8> {
    let src = dir.join("evil.c");
    std::fs::write(
        &src,
        "int counter;\n\
         __attribute__((noinline)) void evil_AAAAAAAAAAAAAAAAAAAA(void) {\n\
           __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);\n\
         }\n\
         int main(void) { evil_AAAAAAAAAAAAAAAAAAAA(); return counter; }\n",
    )
    .unwrap();
    let out = dir.join("evil");
    run_ok(
        std::process::Command::new("gcc")
            .args(["-O1", "-g0", "-o"])
            .arg(&out)
            .arg(&src),
    );
    let mut elf = std::fs::read(&out).unwrap();
    let mut patched = 0;
    let mut i = 0;
    while let Some(at) = elf[i..]
        .windows(PLACEHOLDER.len())
        .position(|w| w == PLACEHOLDER)
    {
        let at = i + at;
        elf[at..at + EVIL_FN.len()].copy_from_slice(EVIL_FN);
        patched += 1;
        i = at + EVIL_FN.len();
    }
    assert!(patched > 0, "the function name is in the symbol table");
    elf
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// No control character (but the newlines that end lines) in `s`, and
/// no line a forged name started.
fn assert_safe(what: &str, s: &str) {
    let raw: Vec<char> = s
        .chars()
        .filter(|&c| c != '\n' && !atomlab_core_plain(c))
        .collect();
    assert!(
        raw.is_empty(),
        "{what}: raw control characters {raw:?} in:\n{s}"
    );
    assert!(
        !s.lines().any(|l| l.trim_start().starts_with("| forged")),
        "{what}: a forged table row:\n{s}"
    );
}

/// Whether `c` is shown as it is (atomlab_core::text's rule: no C0, DEL,
/// C1 or bidirectional control).
fn atomlab_core_plain(c: char) -> bool {
    let u = c as u32;
    !(u < 0x20
        || u == 0x7f
        || (0x80..0xa0).contains(&u)
        || (0x200b..=0x200f).contains(&u)
        || (0x2028..=0x202e).contains(&u)
        || (0x2066..=0x2069).contains(&u)
        || u == 0xfeff)
}

/// Every string in a JSON document.
fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
        serde_json::Value::Object(o) => {
            for (k, v) in o {
                out.push(k.clone());
                strings(v, out);
            }
        }
        _ => {}
    }
}

#[test]
fn names_from_a_package_are_shown_escaped_everywhere() {
    if !have_tools("names_from_a_package_are_shown_escaped", &["gcc"]) {
        return;
    }
    let dir = scratch("hostile-names");
    let elf = evil_elf(&dir);
    let mut tar = Vec::new();
    deb::tar_file(&mut tar, b"./usr/bin/red\x1b[31mALERT", &elf);
    deb::tar_file(&mut tar, b"./usr/bin/ok\n| forged | row |", &elf);
    deb::tar_file(&mut tar, b"../../../etc/evil.so", &elf);
    deb::pax_path(&mut tar, b"./usr/bin/pax\x1b[2J\x07");
    deb::tar_file(&mut tar, b"placeholder", &elf);
    let mut long = b"./usr/lib/".to_vec();
    long.extend_from_slice(&[b'x'; 150]);
    long.extend_from_slice(b"\x1b]0;title\x07");
    deb::long_name(&mut tar, &long);
    deb::tar_file(&mut tar, b"cut-long-name", &elf);
    deb::tar_end(&mut tar);
    let deb_path = dir.join("hostile_1.0_amd64.deb");
    std::fs::write(&deb_path, deb::deb("hostile", &tar)).unwrap();
    // Run from three folders down, so that a `../../../etc/evil.so`
    // written relative to it would land inside the scratch folder.
    let cwd = dir.join("a/b/c");
    std::fs::create_dir_all(&cwd).unwrap();
    let store = dir.join("runs.db");
    let run = |args: &[&str]| {
        let o = atomlab()
            .current_dir(&cwd)
            .arg("--store")
            .arg(&store)
            .args(args)
            .output()
            .unwrap();
        assert!(!text(&o).contains("panicked"), "{args:?}: {}", text(&o));
        o
    };
    // Relative, so that the table's rows stay short (a long path wraps).
    assert!(deb_path.is_file());
    let deb_arg = "../../../hostile_1.0_amd64.deb";

    let live = run(&["audit", "--by-file", "--by-function=5", deb_arg]);
    let shown = text(&live);
    assert_eq!(live.status.code(), Some(0), "{shown}");
    assert_safe("audit --by-file --by-function", &shown);
    for expected in [
        "/usr/bin/red\\e[31mALERT",
        "/usr/bin/ok\\n| forged | row |",
        // Exactly as in the archive: not normalised, no dot taken off.
        "hostile_1.0_amd64.deb!../../../etc/evil.so",
        "/usr/bin/pax\\e[2J\\x07",
        "evil_\\e[31mX\\n| forged |ZZZ",
    ] {
        assert!(shown.contains(expected), "{expected:?} not in:\n{shown}");
    }

    // The saved run shows the same.
    let runs = run(&["runs", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).expect("runs --json");
    let id = runs["runs"][0]["meta"]["id"]
        .as_str()
        .expect("a run id")
        .to_string();
    let again = run(&["show", &id]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert_safe("show", &text(&again));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&live.stdout),
        "show prints what audit printed"
    );

    // The JSON holds the same visible form (not only JSON's \u001b).
    let json = run(&[
        "audit",
        "--no-save",
        "--by-file",
        "--by-function=5",
        "--json",
        deb_arg,
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let mut all = Vec::new();
    strings(&doc, &mut all);
    for s in &all {
        assert_safe("--json", s);
    }
    let paths: Vec<&str> = doc["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["detail"]["path"].as_str())
        .collect();
    assert_eq!(paths.len(), 5, "every member audited: {paths:?}");
    assert!(
        paths
            .iter()
            .any(|p| p.contains(&format!("!/usr/lib/{}\\e]0;title\\x07", "x".repeat(150)))),
        "the GNU long name, escaped: {paths:?}"
    );
    assert!(all
        .iter()
        .any(|s| s.contains("evil_\\e[31mX\\n| forged |ZZZ")));

    // Nothing was unpacked: no evil.so anywhere `..` could reach.
    for root in [dir.join("etc/evil.so"), cwd.join("../../../etc/evil.so")] {
        assert!(!root.exists(), "{} was written", root.display());
    }
    assert!(
        !Path::new("/etc/evil.so").exists(),
        "/etc/evil.so was written"
    );
}

/// A `.deb` in a folder whose own file name carries an escape: the
/// folder's listing is read from the file system, and shown escaped too.
#[test]
fn a_package_file_name_with_an_escape_is_shown_escaped() {
    let dir = scratch("hostile-file-name");
    let mut tar = Vec::new();
    deb::tar_file(
        &mut tar,
        b"./usr/bin/true",
        &std::fs::read("/bin/true").expect("/bin/true"),
    );
    deb::tar_end(&mut tar);
    std::fs::write(dir.join("odd\x1b[31m_1.0_amd64.deb"), deb::deb("odd", &tar)).unwrap();
    let o = atomlab()
        .args(["audit", "--no-save", "--by-file"])
        .arg(&dir)
        .output()
        .unwrap();
    let shown = text(&o);
    assert_eq!(o.status.code(), Some(0), "{shown}");
    assert_safe("audit of a folder", &shown);
    // The table wraps a long path: the JSON has it whole.
    let o = atomlab()
        .args(["audit", "--no-save", "--by-file", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let path = doc["records"][0]["detail"]["path"].as_str().unwrap_or("");
    assert!(
        path.ends_with("/odd\\e[31m_1.0_amd64.deb!/usr/bin/true"),
        "{path}"
    );
}
