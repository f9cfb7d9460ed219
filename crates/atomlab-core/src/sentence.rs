//! Lists written as a sentence writes them, for help lines and messages
//! built from a registry ("lock, spsc and counter"), so that no list of
//! names is written by hand beside the registry that holds them.

/// Items as a sentence lists them with `word` before the last: "a, b and
/// c" (`and`), "a, b or c" (`or`); one item alone, nothing for none.
pub fn listed<S: AsRef<str>>(items: &[S], word: &str) -> String {
    match items.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} {word} {}", rest.join(", "), last.as_ref())
        }
        Some((last, _)) => last.as_ref().to_string(),
        None => String::new(),
    }
}

/// "a, b and c" ([`listed`]).
pub fn and_list<S: AsRef<str>>(items: &[S]) -> String {
    listed(items, "and")
}

/// "a, b or c" ([`listed`]).
pub fn or_list<S: AsRef<str>>(items: &[S]) -> String {
    listed(items, "or")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_as_sentences() {
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
        assert_eq!(or_list(&["a", "b"]), "a or b");
        assert_eq!(and_list(&["a"]), "a");
        assert_eq!(and_list::<&str>(&[]), "");
    }
}
