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
    /// `postgresql://` URL, anything else a SQLite path (`~/` is the home
    /// directory).
    pub fn parse(value: &str) -> Location {
        parse_with(value, |name| std::env::var(name).ok())
    }
}

fn parse_with(value: &str, env: impl Fn(&str) -> Option<String>) -> Location {
    if is_postgres_url(value) {
        Location::Postgres(value.to_string())
    } else {
        Location::Sqlite(expand_home(value, env))
    }
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
        return Ok(parse_with(flag, &env));
    }
    for origin in ["ATOMLAB_STORE", "ATOMLAB_DB"] {
        if let Some(value) = env(origin) {
            if value.trim().is_empty() {
                return Err(StoreError::EmptyLocation { origin });
            }
            return Ok(if origin == "ATOMLAB_DB" {
                Location::Sqlite(expand_home(&value, &env))
            } else {
                parse_with(&value, &env)
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
        return url.to_string();
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

#[cfg(test)]
mod tests {
    use super::*;
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
}
