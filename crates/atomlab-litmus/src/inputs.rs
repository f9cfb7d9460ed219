//! Which litmus files a command line names: files, directories (walked
//! for `.litmus` files, subdirectories included, in a stable order) and
//! `@LIST` files (one path a line, `#` comments, relative to the list),
//! as herd7 and litmus7 take `@list` arguments. The one walk every
//! command, test and example uses.
//!
//! Hostile layouts end: a list that names itself (directly or through
//! other lists) is refused naming the chain, and a directory reached twice
//! (a symbolic link to an ancestor) is walked once.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// What the inputs named: litmus files in order, and the inputs that could
/// not be used, each with why.
#[derive(Debug, Default)]
pub struct Expanded {
    /// The files, in the order the inputs give them (a directory's sorted).
    pub files: Vec<PathBuf>,
    /// `(input, reason)` for each input that gave nothing.
    pub errors: Vec<(String, String)>,
}

/// Expands files, directories and `@LIST`s into litmus files.
pub fn expand(inputs: &[String]) -> Expanded {
    let mut out = Expanded::default();
    expand_into(inputs, &mut Vec::new(), &mut out);
    out
}

fn expand_into(inputs: &[String], lists: &mut Vec<PathBuf>, out: &mut Expanded) {
    for i in inputs {
        if let Some(list) = i.strip_prefix('@') {
            let key = std::fs::canonicalize(list).unwrap_or_else(|_| PathBuf::from(list));
            if let Some(at) = lists.iter().position(|l| *l == key) {
                let chain: Vec<String> = lists[at..]
                    .iter()
                    .chain([&key])
                    .map(|p| p.display().to_string())
                    .collect();
                out.errors.push((
                    i.clone(),
                    format!(
                        "the list names itself ({}); remove the loop",
                        chain.join(" -> ")
                    ),
                ));
                continue;
            }
            let base = Path::new(list).parent().unwrap_or(Path::new("."));
            match std::fs::read_to_string(list) {
                Ok(text) => {
                    let items: Vec<String> = text
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty() && !l.starts_with('#'))
                        .map(|l| {
                            // `@other` inside a list is relative to it too.
                            let (at, name) = match l.strip_prefix('@') {
                                Some(n) => ("@", n),
                                None => ("", l),
                            };
                            let p = Path::new(name);
                            if p.exists() || p.is_absolute() {
                                l.to_string()
                            } else {
                                format!("{at}{}", base.join(p).display())
                            }
                        })
                        .collect();
                    lists.push(key);
                    expand_into(&items, lists, out);
                    lists.pop();
                }
                Err(e) => out
                    .errors
                    .push((list.to_string(), format!("cannot read list: {e}"))),
            }
            continue;
        }
        let p = PathBuf::from(i);
        if p.is_dir() {
            let found = litmus_files(&p);
            if found.is_empty() {
                out.errors
                    .push((i.clone(), "no .litmus files in this directory".into()));
            }
            out.files.extend(found);
        } else if p.is_file() {
            out.files.push(p);
        } else {
            out.errors
                .push((i.clone(), "no such file or directory".into()));
        }
    }
}

/// The `.litmus` files below `dir`, subdirectories included, sorted by
/// name within each directory; each directory once, however many symbolic
/// links lead to it.
pub fn litmus_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    walk(dir, &mut seen, &mut out);
    out
}

fn walk(dir: &Path, seen: &mut HashSet<PathBuf>, out: &mut Vec<PathBuf>) {
    if let Ok(real) = std::fs::canonicalize(dir) {
        if !seen.insert(real) {
            return;
        }
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    // The entry's type comes with the directory listing (d_type): no stat
    // per file, which was a tenth of a small corpus's check. A symbolic
    // link, or a file system that does not give the type, is stat'ed.
    // Sorted by name: within one directory that is the paths' order, without
    // comparing them component by component.
    // Only the `.litmus` files and the subdirectories get a path: a corpus
    // folder holds herd logs and expected results beside its tests.
    let mut v: Vec<(std::ffi::OsString, PathBuf, bool)> = rd
        .flatten()
        .filter_map(|e| {
            let is_dir = match e.file_type() {
                Ok(t) if !t.is_symlink() => t.is_dir(),
                _ => e.path().is_dir(),
            };
            let name = e.file_name();
            let litmus = name
                .as_encoded_bytes()
                .strip_suffix(b".litmus")
                .is_some_and(|stem| !stem.is_empty());
            (is_dir || litmus).then(|| (name, e.path(), is_dir))
        })
        .collect();
    // Siblings: comparing the paths compares their last components, kept
    // beside each path (taking them from the paths in every comparison
    // parsed each path again: a sixth of a small test's reading).
    v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (_, p, is_dir) in v {
        if is_dir {
            walk(&p, seen, out);
        } else {
            out.push(p);
        }
    }
}
