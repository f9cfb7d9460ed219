//! Fuzzing `atomlab import`'s reader of --json documents: a real document
//! (a check run, with per-state detail), damaged at random, truncated,
//! nested thousands deep, its schema_version replaced by hostile values,
//! or a record given twice; every one is imported (exit 0) or refused as
//! bad input (exit 2), never a panic (101) or an abort (134), and a refusal
//! leaves the store as it was.
//!
//! `cargo test` runs a fixed number of cases; `ATOMLAB_FUZZ_SECS=N` (as
//! `.ci/run` sets it) keeps going with fresh seeds for N seconds.

mod cli_support;

use cli_support::scratch;

use std::time::Instant;

use cli_support::{command, stderr};

/// xorshift64: replayable without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A real --json document of `atomlab check`.
fn seed_document() -> String {
    let test = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../atomlab-run/tests/litmus/SB.litmus"
    );
    let o = command()
        .args(["check", "--no-save", "--json", "-m", "sc,x86tso", test])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    String::from_utf8(o.stdout).unwrap()
}

const PIECES: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "null",
    "true",
    "-1",
    "1e999",
    "\"2\"",
    "1180591620717411303424",
    "\\u0000",
    "\\ud800",
    "é",
    " ",
    "\n",
    "0",
    "\"schema_version\":",
    "\"records\":",
    "\"metrics\":",
    "\"samples\":",
];

/// One damaged copy of `doc`.
fn damage(doc: &str, rng: &mut Rng) -> String {
    let mut s = doc.to_string();
    let at = |s: &str, rng: &mut Rng| {
        let mut i = rng.below(s.len() + 1);
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    match rng.below(7) {
        0 => {
            let i = at(&s, rng);
            s.truncate(i);
        }
        1 => {
            // Nesting thousands deep.
            let i = at(&s, rng);
            let open = ["[", "{\"a\":", "[{\"b\":"][rng.below(3)];
            s.insert_str(i, &open.repeat(1000 + rng.below(100_000)));
        }
        2 => {
            let v = [
                "\"2\"",
                "-1",
                "1180591620717411303424",
                "2.5",
                "null",
                "99",
                "[2]",
                "2",
            ][rng.below(8)];
            s = s.replacen(
                "\"schema_version\":2",
                &format!("\"schema_version\":{v}"),
                1 + rng.below(3),
            );
        }
        3 => {
            // A record given twice.
            if let (Some(a), Some(b)) = (s.find("\"records\":["), s.rfind("]}")) {
                let body = s[a + 11..b].to_string();
                if let Some(end) = body.find("},{") {
                    s.insert_str(a + 11, &format!("{},", &body[..end + 1]));
                }
            }
        }
        _ => {
            for _ in 0..1 + rng.below(4) {
                let i = at(&s, rng);
                match rng.below(3) {
                    0 => s.insert_str(i, PIECES[rng.below(PIECES.len())]),
                    1 => {
                        // At most 20 bytes, ending on a character boundary
                        // (i is one, so the walk back stops there at worst).
                        let mut j = (at(&s[i..], rng) + i).min(i + 20);
                        while !s.is_char_boundary(j) {
                            j -= 1;
                        }
                        s.replace_range(i..j, "");
                    }
                    _ => {
                        let j = (i + 1..=s.len())
                            .find(|&j| s.is_char_boundary(j))
                            .unwrap_or(s.len());
                        s.replace_range(i..j, PIECES[rng.below(PIECES.len())]);
                    }
                }
            }
        }
    }
    s
}

#[test]
fn damaged_documents_are_imported_or_refused_never_a_crash() {
    let dir = scratch("damage");
    let store = dir.join("store.db");
    let doc = seed_document();
    let budget: f64 = std::env::var("ATOMLAB_FUZZ_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let seed: u64 = std::env::var("ATOMLAB_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x1a2b_3c4d_5e6f_7081);
    let mut rng = Rng(seed | 1);
    let start = Instant::now();
    let (mut cases, mut imported, mut refused) = (0u64, 0u64, 0u64);
    loop {
        for _ in 0..40 {
            let text = damage(&doc, &mut rng);
            let file = dir.join("doc.json");
            std::fs::write(&file, &text).unwrap();
            let o = command()
                .arg("--store")
                .arg(&store)
                .arg("import")
                .arg(&file)
                .output()
                .unwrap();
            let err = stderr(&o);
            match o.status.code() {
                Some(0) => imported += 1,
                Some(2) => {
                    assert!(
                        err.contains(&*file.display().to_string()) || err.contains("store"),
                        "a refusal names the file: {err}"
                    );
                    refused += 1;
                }
                other => panic!(
                    "import exited {other:?} (ATOMLAB_FUZZ_SEED={seed}, case {cases}): {err}\n{}",
                    &text[..text.len().min(2000)]
                ),
            }
            assert!(!err.contains("panicked"), "{err}");
            cases += 1;
        }
        if start.elapsed().as_secs_f64() >= budget {
            break;
        }
    }
    eprintln!(
        "{cases} damaged documents in {:.1} s: {imported} imported, {refused} refused",
        start.elapsed().as_secs_f64()
    );
    assert!(refused > 0, "the damage never made a bad document");
}

/// A device (an endless document) and a file past the size limit are
/// refused without being read.
#[test]
fn an_endless_document_is_refused() {
    let dir = scratch("endless");
    let o = command()
        .arg("--store")
        .arg(dir.join("store.db"))
        .args(["import", "/dev/zero"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
    let big = dir.join("big.json");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((1 << 30) + 1)
        .unwrap();
    let o = command()
        .arg("--store")
        .arg(dir.join("store.db"))
        .arg("import")
        .arg(&big)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("larger than 1024 MiB"), "{err}");
    assert!(
        !dir.join("store.db").exists(),
        "a refused import created the store"
    );
}
