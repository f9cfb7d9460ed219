//! A character cursor over the whole source that knows lines and columns, so
//! every sub-parser reports positions in the file, not in a fragment.

use crate::ParseError;

/// Cursor over `src[pos..end]`.
#[derive(Clone)]
pub(crate) struct Cursor<'a> {
    pub src: &'a str,
    pub pos: usize,
    pub end: usize,
    pub file: &'a str,
}

pub(crate) type PResult<T> = Result<T, ParseError>;

impl<'a> Cursor<'a> {
    pub(crate) fn new(file: &'a str, src: &'a str) -> Cursor<'a> {
        Cursor {
            src,
            pos: 0,
            end: src.len(),
            file,
        }
    }

    /// A cursor over `start..end` of the same source.
    pub(crate) fn sub(&self, start: usize, end: usize) -> Cursor<'a> {
        Cursor {
            src: self.src,
            pos: start,
            end,
            file: self.file,
        }
    }

    pub(crate) fn rest(&self) -> &'a str {
        &self.src[self.pos..self.end]
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.end
    }

    pub(crate) fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    pub(crate) fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    /// Skips spaces, tabs and newlines (any Unicode white space).
    pub(crate) fn ws(&mut self) {
        // ASCII white space byte by byte (every parser calls this before
        // each token it tries, so it is the scanner's hottest loop); the
        // rest of Unicode's white space only where a non-ASCII byte stops
        // it.
        let b = self.src.as_bytes();
        let mut i = self.pos;
        // Most calls find a token right there.
        if i < self.end && b[i] > b' ' && b[i] < 0x80 {
            return;
        }
        while i < self.end && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
            i += 1;
        }
        if i < self.end && b[i] >= 0x80 {
            let rest = &self.src[i..self.end];
            i += rest.len() - rest.trim_start().len();
        }
        self.pos = i;
    }

    /// Skips spaces and tabs only.
    pub(crate) fn ws_inline(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start_matches([' ', '\t', '\r']).len();
    }

    /// Consumes `s` (after whitespace) if it comes next.
    pub(crate) fn eat(&mut self, s: &str) -> bool {
        self.ws();
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    /// Consumes `s` if it comes next as a whole word.
    pub(crate) fn eat_word(&mut self, s: &str) -> bool {
        self.ws();
        let r = self.rest();
        if let Some(rest) = r.strip_prefix(s) {
            if !rest
                .bytes()
                .next()
                .is_some_and(|c| is_ident_char(c as char))
            {
                self.pos += s.len();
                return true;
            }
        }
        false
    }

    pub(crate) fn expect(&mut self, s: &str, context: &str) -> PResult<()> {
        self.expect_with(s, || context.to_string())
    }

    /// [`Cursor::expect`] with a context written only when it is missing
    /// (a call's closing parenthesis is expected thousands of times in a
    /// corpus, and found).
    pub(crate) fn expect_with(&mut self, s: &str, context: impl FnOnce() -> String) -> PResult<()> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.err(format!(
                "expected '{s}' {}, found {}",
                context(),
                self.found()
            )))
        }
    }

    /// A description of what comes next, for error messages.
    pub(crate) fn found(&self) -> String {
        let r = self.rest();
        let r = r.trim_start();
        if r.is_empty() {
            return "end of input".into();
        }
        let w: String = r
            .chars()
            .take_while(|c| !c.is_whitespace())
            .take(20)
            .collect();
        format!("'{w}'")
    }

    /// An identifier (letters, digits, `_`, `.`), after whitespace.
    pub(crate) fn ident(&mut self) -> Option<&'a str> {
        self.ws();
        let r = self.rest();
        // Identifier characters are ASCII: bytes suffice.
        let b = r.as_bytes();
        match b.first() {
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {}
            _ => return None,
        }
        let len = b
            .iter()
            .position(|&c| !is_ident_char(c as char))
            .unwrap_or(b.len());
        self.pos += len;
        Some(&r[..len])
    }

    /// A decimal or hexadecimal integer, optionally negative.
    pub(crate) fn number(&mut self) -> Option<i64> {
        self.ws();
        let save = self.pos;
        let neg = self.eat("-");
        self.ws();
        let r = self.rest();
        let (digits, radix, skip) = if r.starts_with("0x") || r.starts_with("0X") {
            (&r[2..], 16, 2)
        } else {
            (r, 10, 0)
        };
        let len = digits
            .char_indices()
            .find(|&(_, c)| !c.is_digit(radix))
            .map(|(i, _)| i)
            .unwrap_or(digits.len());
        if len == 0 {
            self.pos = save;
            return None;
        }
        let v = match i64::from_str_radix(&digits[..len], radix).ok().or_else(|| {
            u64::from_str_radix(&digits[..len], radix)
                .ok()
                .map(|u| u as i64)
        }) {
            Some(v) => v,
            None => {
                self.pos = save;
                return None;
            }
        };
        self.pos += skip + len;
        Some(if neg { v.wrapping_neg() } else { v })
    }

    /// (line, column) of byte offset `pos`, both 1-based.
    pub(crate) fn line_col(&self, pos: usize) -> (usize, usize) {
        let pos = pos.min(self.src.len());
        let before = &self.src[..pos];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let col = self.src[line_start..pos].chars().count() + 1;
        (line, col)
    }

    pub(crate) fn err_at(&self, pos: usize, msg: impl Into<String>) -> ParseError {
        let (line, column) = self.line_col(pos);
        ParseError {
            file: self.file.to_string(),
            line,
            column,
            message: msg.into(),
        }
    }

    /// An error at the next non-blank character.
    pub(crate) fn err(&self, msg: impl Into<String>) -> ParseError {
        let mut c = self.clone();
        c.ws();
        c.err_at(c.pos, msg)
    }
}

pub(crate) fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// Replaces OCaml-style comments `(* … *)` (nested) with spaces, keeping
/// newlines so positions do not move. `(*x` without a space is C, not a
/// comment. Returns an error position for an unterminated comment.
/// Blanks C comments (`// …` to the end of the line, `/* … */`) from the
/// initial state on (the first `{`), keeping newlines so positions stay
/// right: herd7's C lexer reads them in Linux-kernel tests. Returns the
/// position of an unterminated `/*` as the error.
pub(crate) fn blank_c_comments(src: &str) -> Result<String, usize> {
    let b = src.as_bytes();
    let mut i = src.find('{').unwrap_or(b.len());
    // Most tests have no C comment: one search, and the text as it is.
    let Some(first) = src[i..].find('/').map(|k| i + k) else {
        return Ok(src.to_owned());
    };
    i = first;
    let mut out = b.to_vec();
    while i + 1 < b.len() {
        let end = if b[i] == b'/' && b[i + 1] == b'/' {
            src[i..].find('\n').map(|k| i + k).unwrap_or(b.len())
        } else if b[i] == b'/' && b[i + 1] == b'*' {
            match src[i + 2..].find("*/") {
                Some(k) => i + 2 + k + 2,
                None => return Err(i),
            }
        } else {
            i += 1;
            continue;
        };
        for c in &mut out[i..end] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
        i = end;
    }
    // Only ASCII bytes were replaced by ASCII spaces: still UTF-8.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

pub(crate) fn blank_comments(src: &str) -> Result<String, usize> {
    blank(src, false)
}

/// Like [`blank_comments`], but every `(*` opens a comment, as after the
/// threads (where no C dereference can stand).
pub(crate) fn blank_all_comments(src: &str) -> Result<String, usize> {
    blank(src, true)
}

fn blank(src: &str, all: bool) -> Result<String, usize> {
    let b = src.as_bytes();
    // Most tests have no comment: one search, and the text as it is.
    let Some(first) = src.find("(*") else {
        return Ok(src.to_owned());
    };
    let mut out = b.to_vec();
    let mut i = first;
    while i + 1 < b.len() {
        if b[i] == b'('
            && b[i + 1] == b'*'
            && (all
                || b.get(i + 2)
                    .is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_' && *c != b'('))
        {
            let start = i;
            let mut depth = 0usize;
            loop {
                if i + 1 >= b.len() {
                    return Err(start);
                }
                if b[i] == b'(' && b[i + 1] == b'*' {
                    depth += 1;
                    i += 2;
                    continue;
                }
                if b[i] == b'*' && b[i + 1] == b')' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                    continue;
                }
                i += 1;
            }
            for c in &mut out[start..i] {
                if *c != b'\n' {
                    *c = b' ';
                }
            }
        } else {
            i += 1;
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces, but a comment may have
    // covered part of a multi-byte character's neighbours only as whole
    // characters, so the result is still UTF-8; fall back to lossy otherwise.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// The deepest nesting a test may have: parentheses, unary operators, the
/// operators of one chain of C (`a + b + c` is 3 deep), blocks and `if`s,
/// and in conditions parentheses, negations and implications (a chain of
/// `\/` or `/\` is one level: its terms are kept side by side). Real
/// tests stay below 20; a hostile one of 100,000 levels would otherwise
/// overflow the stack.
pub(crate) const MAX_DEPTH: usize = 500;

/// The message for nesting past [`MAX_DEPTH`].
pub(crate) fn too_deep() -> String {
    format!("nesting deeper than {MAX_DEPTH} levels (parentheses, operators, blocks or 'if's): split the expression or condition")
}
