//! Text that came from a file or a user, made safe to show.
//!
//! Names read from files atomlab does not control (a `.deb`'s member
//! paths, a plugin's symbol and variant names, a name echoed in a
//! refusal) can hold terminal control sequences (an ANSI escape that
//! recolours, moves the cursor or forges a table row) or be thousands of
//! bytes long. [`shown`] makes every control character visible, as
//! `cat -v` and `ls --quoting-style=escape` do, and cuts the text at a
//! bound with an ellipsis that says how much was left out.

/// `s` with every control character (C0, DEL, C1 and the Unicode
/// bidirectional overrides, which reorder what a terminal shows) written as
/// a visible escape (`\e`, `\n`, `\t`, `\x7f`, `\u{202e}`), cut to at most
/// `max` characters of the escaped text with `…(N more bytes)` after it.
pub fn shown(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max + 24));
    let mut shown_chars = 0;
    for (i, c) in s.char_indices() {
        let piece = escape(c);
        let n = piece.as_ref().map_or(1, |p| p.chars().count());
        if shown_chars + n > max {
            out.push_str(&format!("…({} more bytes)", s.len() - i));
            return out;
        }
        shown_chars += n;
        match piece {
            Some(p) => out.push_str(&p),
            None => out.push(c),
        }
    }
    out
}

/// Whether `s` would be shown as it is by [`shown`] with no bound: no
/// control character in it.
pub fn is_plain(s: &str) -> bool {
    s.chars().all(|c| escape(c).is_none())
}

/// The visible escape of a control character, `None` for one shown as is.
fn escape(c: char) -> Option<String> {
    Some(match c {
        '\x1b' => "\\e".to_string(),
        '\n' => "\\n".to_string(),
        '\r' => "\\r".to_string(),
        '\t' => "\\t".to_string(),
        '\\' => return None,
        c if (c as u32) < 0x20 || c == '\x7f' => format!("\\x{:02x}", c as u32),
        c if (0x80..0xa0).contains(&(c as u32)) => format!("\\u{{{:x}}}", c as u32),
        // Bidirectional embeddings, overrides and isolates (Unicode UAX #9),
        // and the zero-width and line/paragraph separators.
        '\u{200b}'..='\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{feff}' => {
            format!("\\u{{{:x}}}", c as u32)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_made_visible() {
        assert_eq!(shown("plain/name.so", 80), "plain/name.so");
        assert_eq!(shown("a\x1b[31mred\n| x |", 80), "a\\e[31mred\\n| x |");
        assert_eq!(shown("bell\x07del\x7f", 80), "bell\\x07del\\x7f");
        assert_eq!(shown("evil\u{202e}os.exe", 80), "evil\\u{202e}os.exe");
        assert_eq!(shown("\u{9b}31m", 80), "\\u{9b}31m");
        assert!(is_plain("über-lock"));
        assert!(!is_plain("a\rb"));
    }

    #[test]
    fn long_text_is_cut_saying_how_much_is_left() {
        let long = "x".repeat(10_000);
        let s = shown(&long, 64);
        assert_eq!(s, format!("{}…(9936 more bytes)", "x".repeat(64)));
        // An escape is never cut in half.
        let s = shown("ab\x1bcd", 3);
        assert_eq!(s, "ab…(3 more bytes)");
    }
}
