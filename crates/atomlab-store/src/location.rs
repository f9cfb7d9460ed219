//! Where the results store is: a SQLite file on this machine or a
//! PostgreSQL database for a team.

use std::fmt;
use std::path::PathBuf;

use crate::StoreError;

/// Where a results store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite database file, created with its parent directories when
    /// missing.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://` or `postgresql://`). The
    /// store's tables live in the first schema of the connection's
    /// `search_path`, which the URL can set:
    /// `postgres://u@host/db?options=-csearch_path%3Datomlab`.
    Postgres(String),
}

impl Location {
    /// Where the store is, in order of precedence: the `--store` flag's
    /// value, else `ATOMLAB_STORE`, else `ATOMLAB_DB` (a SQLite path), else
    /// `$XDG_DATA_HOME/atomlab/results.db`, else
    /// `~/.local/share/atomlab/results.db`.
    pub fn resolve(flag: Option<&str>) -> Result<Location, StoreError> {
        resolve_with(flag, |name| {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        })
    }

    /// The location a `--store` value names: a `postgres://` or
    /// `postgresql://` URL, else a SQLite path (`~/` is the home
    /// directory). Any other `scheme://` (`postgress://`, `mysql://`) is
    /// refused rather than taken for a path: a typo must not become a new
    /// SQLite file in a directory named after the URL.
    pub fn parse(value: &str) -> Result<Location, StoreError> {
        parse_with(value, |name| std::env::var(name).ok())
    }
}

/// The connection keywords of libpq's `key=value` strings (PostgreSQL's
/// documentation, "Connection Strings", 34.1.1–34.1.2), those a user is
/// likely to write first.
const LIBPQ_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "sslmode",
    "options",
    "application_name",
    "connect_timeout",
    "service",
    "target_session_attrs",
];

/// The keywords of `value` if it is a libpq `key=value` connection string
/// (`host=db user=bob password=… dbname=atomlab`): white-space separated
/// words, one of them starting with a libpq keyword and `=`.
fn libpq_keywords(value: &str) -> Option<Vec<String>> {
    let keys: Vec<String> = value
        .split_whitespace()
        .filter_map(|w| {
            w.split_once('=')
                .map(|(k, _)| k.trim().to_ascii_lowercase())
        })
        .collect();
    keys.iter()
        .any(|k| LIBPQ_KEYWORDS.contains(&k.as_str()))
        .then_some(keys)
}

fn parse_with(value: &str, env: impl Fn(&str) -> Option<String>) -> Result<Location, StoreError> {
    if let Some(keys) = libpq_keywords(value) {
        // Never a file named after the string (with its password in the
        // name), and never the string itself in the message.
        return Err(StoreError::KeyValueString {
            keys: keys.join(", "),
        });
    }
    if value.trim() != value && (value.contains("://") || value.trim().is_empty()) {
        return Err(StoreError::Padded {
            location: redact_secrets(value.trim()),
        });
    }
    if is_postgres_url(value) {
        Ok(Location::Postgres(value.to_string()))
    } else if let Some(scheme) = url_scheme(value) {
        Err(StoreError::UnknownScheme {
            location: redact_url(value),
            scheme: scheme.to_string(),
        })
    } else {
        Ok(Location::Sqlite(expand_home(value, env)))
    }
}

/// The scheme of a `scheme://…` value (RFC 3986: a letter, then letters,
/// digits, `+`, `-`, `.`), or none for anything else.
fn url_scheme(value: &str) -> Option<&str> {
    let (scheme, _) = value.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// True for the URL schemes the PostgreSQL client accepts.
fn is_postgres_url(value: &str) -> bool {
    let lower = value.get(..13).unwrap_or(value).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

fn expand_home(value: &str, env: impl Fn(&str) -> Option<String>) -> PathBuf {
    match (
        value.strip_prefix("~/"),
        env("HOME").filter(|h| !h.is_empty()),
    ) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(value),
    }
}

/// [`Location::resolve`] with the environment given as a function, so the
/// rules can be tested without touching the process environment.
pub(crate) fn resolve_with(
    flag: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Location, StoreError> {
    if let Some(flag) = flag {
        if flag.trim().is_empty() {
            return Err(StoreError::EmptyLocation { origin: "--store" });
        }
        return parse_with(flag, &env);
    }
    for origin in ["ATOMLAB_STORE", "ATOMLAB_DB"] {
        if let Some(value) = env(origin) {
            if value.trim().is_empty() {
                return Err(StoreError::EmptyLocation { origin });
            }
            return Ok(if origin == "ATOMLAB_DB" {
                // A path only: a URL there would become a directory named
                // after it.
                if url_scheme(&value).is_some() {
                    return Err(StoreError::UrlInDbPath {
                        location: redact_url(&value),
                    });
                }
                Location::Sqlite(expand_home(&value, &env))
            } else {
                parse_with(&value, &env)?
            });
        }
    }
    // The XDG base directory rules: a relative XDG_DATA_HOME is ignored.
    let data_home = env("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            env("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })
        .ok_or(StoreError::NoDefaultLocation)?;
    Ok(Location::Sqlite(
        data_home.join("atomlab").join("results.db"),
    ))
}

impl fmt::Display for Location {
    /// The path, or the URL without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&redact_url(url)),
        }
    }
}

/// The URL with any password removed, from the user-info part and from a
/// `password=` query parameter, so it can be printed.
pub(crate) fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_key_values(url);
    };
    // The authority ends at the first '/', '?' or '#'; user-info at its last '@'.
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            format!("{user}@{host}")
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|kv| {
                    !kv.split('=')
                        .next()
                        .unwrap_or("")
                        .eq_ignore_ascii_case("password")
                })
                .collect();
            if kept.is_empty() {
                path.to_string()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// `text` with the value of every `password=` word removed (a libpq
/// `key=value` string, or such a word among a URL's parameters): `password=…`.
fn redact_key_values(text: &str) -> String {
    text.split(' ')
        .map(|w| match w.split_once('=') {
            Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=…"),
            _ => w.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` with the password of every `scheme://user:password@` URL in it
/// removed (from its user-info and `password=` parameter): for command lines (`--store
/// postgres://u:pw@h/db`, `--store=postgres://…`), which are stored with each
/// run and printed by `runs`, `show` and `report`.
pub fn redact_secrets(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        // The scheme: the letters, digits, `+`, `-`, `.` just before `://`.
        let start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |i| i + 1);
        // The URL: up to the next white space (a command line's arguments
        // are separate strings; this also covers a joined one).
        let end = rest[at..]
            .find(char::is_whitespace)
            .map_or(rest.len(), |i| at + i);
        out.push_str(&redact_key_values(&rest[..start]));
        out.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(&redact_key_values(rest));
    out
}

/// A command line with [`redact_secrets`] applied to each argument.
pub fn redact_command_line(args: &[String]) -> Vec<String> {
    args.iter().map(|a| redact_secrets(a)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--store 'host=db password=s3cret dbname=atomlab'` became a SQLite
    /// file named with the password, and the password was printed back; a
    /// space before `postgres://` printed the URL with its password.
    #[test]
    fn key_value_strings_and_padded_urls_are_refused_without_their_password() {
        let env = |_: &str| None;
        for v in [
            "host=db.lab password=s3cret dbname=atomlab",
            "dbname=atomlab user=bob password=s3cret",
            "password=s3cret",
        ] {
            let e = parse_with(v, env).unwrap_err();
            assert!(matches!(e, StoreError::KeyValueString { .. }), "{v}: {e}");
            let msg = e.to_string();
            assert!(!msg.contains("s3cret"), "{msg}");
            assert!(msg.contains("postgres://"), "{msg}");
        }
        for v in [
            " postgres://bob:s3cret@db/atomlab",
            "postgres://bob:s3cret@db/atomlab\n",
        ] {
            let e = parse_with(v, env).unwrap_err();
            assert!(matches!(e, StoreError::Padded { .. }), "{v:?}: {e}");
            assert!(!e.to_string().contains("s3cret"), "{e}");
        }
        // A plain path with an '=' in it is still a path.
        assert_eq!(
            parse_with("runs/a=b.db", env).unwrap(),
            Location::Sqlite("runs/a=b.db".into())
        );
        assert_eq!(
            redact_secrets("atomlab --store host=h password=s3cret bench"),
            "atomlab --store host=h password=… bench"
        );
    }
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn flag_wins_then_store_then_db_then_data_dir() {
        let all = env(&[
            ("ATOMLAB_STORE", "postgres://u@h/db"),
            ("ATOMLAB_DB", "/tmp/db.sqlite"),
            ("XDG_DATA_HOME", "/xdg"),
            ("HOME", "/home/u"),
        ]);
        assert_eq!(
            resolve_with(Some("/x/r.db"), &all).unwrap(),
            Location::Sqlite("/x/r.db".into())
        );
        assert_eq!(
            resolve_with(None, &all).unwrap(),
            Location::Postgres("postgres://u@h/db".into())
        );
        let db = env(&[("ATOMLAB_DB", "/tmp/db.sqlite"), ("HOME", "/home/u")]);
        assert_eq!(
            resolve_with(None, db).unwrap(),
            Location::Sqlite("/tmp/db.sqlite".into())
        );
        let xdg = env(&[("XDG_DATA_HOME", "/xdg"), ("HOME", "/home/u")]);
        assert_eq!(
            resolve_with(None, xdg).unwrap(),
            Location::Sqlite("/xdg/atomlab/results.db".into())
        );
        let relative_xdg = env(&[("XDG_DATA_HOME", "rel"), ("HOME", "/home/u")]);
        assert_eq!(
            resolve_with(None, relative_xdg).unwrap(),
            Location::Sqlite("/home/u/.local/share/atomlab/results.db".into())
        );
        assert!(matches!(
            resolve_with(None, env(&[])),
            Err(StoreError::NoDefaultLocation)
        ));
    }

    #[test]
    fn postgres_schemes_and_paths() {
        let none = env(&[("HOME", "/home/u")]);
        for url in ["postgres://a@b/c", "postgresql://a@b/c", "POSTGRES://a@b/c"] {
            assert_eq!(
                resolve_with(Some(url), &none).unwrap(),
                Location::Postgres(url.into())
            );
        }
        assert_eq!(
            resolve_with(Some("~/r.db"), &none).unwrap(),
            Location::Sqlite("/home/u/r.db".into())
        );
        assert_eq!(
            resolve_with(Some("postgres.db"), &none).unwrap(),
            Location::Sqlite("postgres.db".into())
        );
        assert_eq!(
            resolve_with(Some("./a:b//c"), &none).unwrap(),
            Location::Sqlite("./a:b//c".into())
        );
        assert!(matches!(
            resolve_with(Some(""), &none),
            Err(StoreError::EmptyLocation { origin: "--store" })
        ));
        assert!(matches!(
            resolve_with(None, env(&[("ATOMLAB_STORE", " ")])),
            Err(StoreError::EmptyLocation {
                origin: "ATOMLAB_STORE"
            })
        ));
    }

    #[test]
    fn passwords_are_not_printed() {
        assert_eq!(
            redact_url("postgres://bob:s3cr@t@db.example:5432/atomlab?sslmode=disable"),
            "postgres://bob@db.example:5432/atomlab?sslmode=disable"
        );
        assert_eq!(
            redact_url("postgresql://h/db?user=bob&password=x&options=-c"),
            "postgresql://h/db?user=bob&options=-c"
        );
        assert_eq!(redact_url("postgres://h/db?password=x"), "postgres://h/db");
        assert_eq!(redact_url("postgres://bob@h"), "postgres://bob@h");
        let loc = Location::Postgres("postgres://u:pw@h/d".into());
        assert_eq!(loc.to_string(), "postgres://u@h/d");
    }

    #[test]
    fn mistyped_and_foreign_schemes_are_refused_not_taken_for_paths() {
        let none = env(&[("HOME", "/home/u")]);
        for (value, scheme) in [
            ("postgress://u:pw@h/db", "postgress"),
            ("mysql://u@h/db", "mysql"),
            ("sqlite:///tmp/r.db", "sqlite"),
            ("file:///tmp/r.db", "file"),
        ] {
            match resolve_with(Some(value), &none) {
                Err(e @ StoreError::UnknownScheme { .. }) => {
                    let msg = e.to_string();
                    assert!(msg.contains(scheme), "{msg}");
                    assert!(msg.contains("postgres://"), "{msg}");
                    assert!(!msg.contains("pw"), "{msg}");
                }
                other => panic!("{value}: {other:?}"),
            }
        }
        assert!(matches!(
            resolve_with(None, env(&[("ATOMLAB_STORE", "postgress://h/db")])),
            Err(StoreError::UnknownScheme { .. })
        ));
        match resolve_with(None, env(&[("ATOMLAB_DB", "postgres://u:pw@h/db")])) {
            Err(e @ StoreError::UrlInDbPath { .. }) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("ATOMLAB_STORE") && !msg.contains("pw"),
                    "{msg}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn secrets_are_cut_from_command_lines() {
        let line: Vec<String> = [
            "atomlab",
            "--store",
            "postgres://bob:hunter2@db:5432/a",
            "--store=postgresql://bob:hunter2@db/a?password=x2&sslmode=disable",
            "bench",
            "counter",
            "ATOMLAB_STORE=postgres://u:p%40ss@h/d",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let red = redact_command_line(&line);
        let joined = red.join(" ");
        assert!(!joined.contains("hunter2"), "{joined}");
        assert!(!joined.contains("x2"), "{joined}");
        assert!(!joined.contains("p%40ss"), "{joined}");
        assert_eq!(red[2], "postgres://bob@db:5432/a");
        assert_eq!(red[3], "--store=postgresql://bob@db/a?sslmode=disable");
        assert_eq!(red[4], "bench");
        assert_eq!(
            redact_secrets("atomlab --store postgres://u:p@h/d runs"),
            "atomlab --store postgres://u@h/d runs"
        );
    }
}
