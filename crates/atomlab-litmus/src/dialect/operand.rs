//! What the assembly dialects share to read an instruction's operands:
//! splitting them at top-level commas, their text, integers in decimal or
//! hex, and the label that ends a thread.

use crate::scan::Cursor;

/// The branch target that ends the thread (x86 `RET`): a name no test can
/// write as a label.
pub(crate) const END_LABEL: &str = "%end";

/// Splits operands at top-level commas; returns (start, end) ranges.
pub(crate) fn operands(cur: &Cursor<'_>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = cur.pos;
    for (i, ch) in cur.rest().char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push((start, cur.pos + i));
                start = cur.pos + i + 1;
            }
            _ => {}
        }
    }
    if !cur.rest().trim().is_empty() {
        out.push((start, cur.end));
    }
    out
}

pub(crate) fn text<'a>(cur: &Cursor<'a>, r: (usize, usize)) -> &'a str {
    cur.src[r.0..r.1].trim()
}

/// An integer operand, decimal or `0x` hex, possibly negative.
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else {
        s.parse().ok()?
    };
    Some(if neg { -v } else { v })
}
