//! A command line as a person would type it in a POSIX shell, so that a
//! stored or shown command can be pasted back and run: arguments with
//! spaces or shell characters in single quotes, a single quote inside one
//! as `'\''` (POSIX.1-2017, Shell Command Language, 2.2.3 Single-Quotes).

/// `args` joined by spaces, each quoted when the shell would split or
/// expand it (`--spawn 'exec nginx -p /tmp/n'`).
pub fn quoted(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn words_the_shell_would_split_or_expand_are_quoted() {
        let args: Vec<String> = [
            "load",
            "--spawn",
            "exec nginx -p /tmp/n",
            "it's",
            "",
            "a=b,c",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            quoted(&args),
            r"load --spawn 'exec nginx -p /tmp/n' 'it'\''s' '' a=b,c"
        );
    }
}
