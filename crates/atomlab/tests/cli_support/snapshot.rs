//! Snapshot tests without a dependency: a text is compared with
//! `tests/snapshots/NAME.txt`; `ATOMLAB_UPDATE_SNAPSHOTS=1` rewrites the
//! file instead, and a difference fails with a line diff.

use std::path::PathBuf;

/// The folder of snapshots (and of the fixtures they are drawn from).
pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// `text` must equal the snapshot `NAME.txt`; with
/// `ATOMLAB_UPDATE_SNAPSHOTS=1`, it becomes the snapshot.
pub fn assert(name: &str, text: &str) {
    let path = dir().join(format!("{name}.txt"));
    if std::env::var_os("ATOMLAB_UPDATE_SNAPSHOTS").is_some_and(|v| v == "1") {
        std::fs::write(&path, text)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "no snapshot {} ({e}): run with ATOMLAB_UPDATE_SNAPSHOTS=1 to write it",
            path.display()
        )
    });
    if want != text {
        panic!(
            "{name}: the output differs from {} (- snapshot, + now; \
             ATOMLAB_UPDATE_SNAPSHOTS=1 rewrites it):\n{}",
            path.display(),
            diff(&want, text)
        );
    }
}

/// A line diff of `old` and `new` (longest common subsequence): `-` for a
/// line only in `old`, `+` only in `new`, two spaces for both.
pub fn diff(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out += &format!("  {}\n", a[i]);
            (i, j) = (i + 1, j + 1);
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out += &format!("- {}\n", a[i]);
            i += 1;
        } else {
            out += &format!("+ {}\n", b[j]);
            j += 1;
        }
    }
    if old.ends_with('\n') != new.ends_with('\n') {
        out += "(the two differ in a final newline)\n";
    }
    out
}
