//! herd7's configuration files (`herd7 -conf FILE.cfg`): one `key value`
//! per line, `#` starting a comment, as herd7's manual ("Configuration
//! files", herdtools7 `doc/herd.tex`) and `herd/herd.ml`'s option table
//! read them. atomlab takes the keys that decide a verdict — `model`,
//! `bell`, `variant` — and `macros` (which it reads and sets aside: its
//! Linux C parser has linux-kernel.def's macros built in); the display
//! keys (`graph`, `showevents`, `edgeattr`…) only shape herd's pictures
//! and are skipped. Any other key is refused: it could change the verdicts.
//! Relative file names resolve against the cfg file's directory.

use std::path::{Path, PathBuf};

use crate::CatError;

/// What a herd7 cfg file asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HerdConf {
    /// `model FILE.cat`.
    pub model: Option<PathBuf>,
    /// `bell FILE.bell`.
    pub bell: Option<PathBuf>,
    /// `variant a,b` (repeatable).
    pub variants: Vec<String>,
    /// `macros FILE.def`: read by herd's C front end, not by atomlab (see
    /// the module docs).
    pub macros: Option<PathBuf>,
}

/// Keys that only change herd7's pictures and printing.
const DISPLAY_KEYS: &[&str] = &[
    "graph",
    "squished",
    "showevents",
    "movelabel",
    "fontsize",
    "xscale",
    "yscale",
    "arrowsize",
    "showinitrf",
    "showfinalrf",
    "showinitwrites",
    "splines",
    "pad",
    "edgeattr",
    "showthin",
    "showlegend",
    "showkind",
    "showpo",
    "showfr",
    "showobserved",
    "shownames",
    "showtoken",
    "oneinit",
    "labelinit",
    "mono",
    "dotmode",
    "dotcom",
    "doshow",
    "unshow",
    "symetric",
    "penwidth",
    "scale",
    "fixedsize",
    "extrachars",
    "initpos",
    "finaldot",
    "condensed",
    "showcutoff",
];

/// Reads a herd7 cfg file.
pub fn read(path: &Path) -> Result<HerdConf, CatError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| CatError::at(&name, 0, 0, format!("cannot read the cfg file: {e}")))?;
    parse(&name, path.parent().unwrap_or(Path::new("")), &text)
}

/// Parses cfg text; `dir` resolves relative file names.
pub fn parse(name: &str, dir: &Path, text: &str) -> Result<HerdConf, CatError> {
    let mut conf = HerdConf::default();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i as u32 + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (key, value) = match line.split_once(char::is_whitespace) {
            Some((k, v)) => (k, v.trim()),
            None => (line, ""),
        };
        let col = raw.len() - raw.trim_start().len() + 1;
        let err = |msg: String| Err(CatError::at(name, line_no, col as u32, msg));
        let file = |v: &str| {
            let p = PathBuf::from(v);
            if p.is_absolute() {
                p
            } else {
                dir.join(p)
            }
        };
        match key {
            "model" | "bell" | "macros" if value.is_empty() => {
                return err(format!("`{key}` needs a file name"));
            }
            "model" => conf.model = Some(file(value)),
            "bell" => conf.bell = Some(file(value)),
            "macros" => conf.macros = Some(file(value)),
            "variant" => conf.variants.extend(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(String::from),
            ),
            k if DISPLAY_KEYS.contains(&k) => {}
            k => {
                return err(format!(
                    "herd7 cfg key `{k}` is not supported by atomlab (it takes model, bell, variant and macros, and skips display keys); remove the line or give the options on the command line"
                ))
            }
        }
    }
    Ok(conf)
}
