//! Tables for people: GitHub-flavoured Markdown pipe tables
//! (<https://github.github.com/gfm/#tables-extension->), padded so they
//! also read as aligned columns in a terminal, a log or a pipe.
//!
//! ```text
//! | test | x86tso     |
//! |------|------------|
//! | SB   | Always (4) |
//! ```
//!
//! A cell may hold several lines (`\n`); they print one under the other in
//! the cell's column. Widths are display widths (`unicode-width`), so a
//! wide character takes two columns. [`Table::wrap_to`] wraps cells at
//! spaces so that the table fits a width.
//!
//! `check` prints one for every run, often of a few milliseconds in all:
//! the table is laid out in one pass over its cells with one output buffer.

use std::fmt;

use unicode_width::UnicodeWidthStr;

/// A table: a header and rows of text cells.
#[derive(Debug, Default, Clone)]
pub struct Table {
    header: Option<Vec<String>>,
    rows: Vec<Vec<String>>,
    /// Fit the table into this many columns by wrapping cells.
    width: Option<usize>,
}

/// The narrowest a column is wrapped to.
const MIN_WRAPPED: usize = 10;

impl Table {
    /// An empty table.
    pub fn new() -> Table {
        Table::default()
    }

    /// Sets the header row.
    pub fn set_header<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        self.header = Some(cells.into_iter().map(Into::into).collect());
        self
    }

    /// Adds a row.
    pub fn add_row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Self {
        self.rows.push(cells.into_iter().map(Into::into).collect());
        self
    }

    /// Wraps cells at spaces (or, for a longer word, anywhere) so that
    /// the table is at most `width` columns wide, narrowing the widest
    /// columns first and none below ten columns.
    pub fn wrap_to(&mut self, width: usize) -> &mut Self {
        self.width = Some(width);
        self
    }

    fn all_rows(&self) -> impl Iterator<Item = &Vec<String>> {
        self.header.iter().chain(&self.rows)
    }

    /// The display width of each column before wrapping.
    fn natural_widths(&self) -> Vec<usize> {
        let columns = self.all_rows().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0; columns];
        for row in self.all_rows() {
            for (w, cell) in widths.iter_mut().zip(row) {
                for line in cell.split('\n') {
                    *w = (*w).max(line.width());
                }
            }
        }
        widths
    }

    /// Column widths that fit [`Table::wrap_to`]'s width where the
    /// minimum allows.
    fn widths(&self) -> Vec<usize> {
        let mut widths = self.natural_widths();
        let Some(limit) = self.width else {
            return widths;
        };
        // Each column adds its padding and a bar; the row has one more bar.
        let total = |w: &[usize]| w.iter().map(|c| c + 3).sum::<usize>() + 1;
        while total(&widths) > limit {
            let Some((i, &widest)) = widths.iter().enumerate().max_by_key(|(_, w)| **w) else {
                break;
            };
            if widest <= MIN_WRAPPED {
                break;
            }
            widths[i] = (widest - (total(&widths) - limit)).max(MIN_WRAPPED);
        }
        widths
    }

    fn write_row(out: &mut String, row: &[String], widths: &[usize]) {
        let cell = |c: usize| row.get(c).map_or("", String::as_str);
        // Most rows: one line per cell, each within its column.
        let one_line = (0..widths.len()).all(|c| !cell(c).contains('\n'));
        if one_line
            && widths
                .iter()
                .enumerate()
                .all(|(c, &w)| cell(c).width() <= w)
        {
            out.push('|');
            for (c, &w) in widths.iter().enumerate() {
                out.push(' ');
                out.push_str(cell(c));
                pad(out, w - cell(c).width() + 1);
                out.push('|');
            }
            return;
        }
        let cells: Vec<Vec<&str>> = widths
            .iter()
            .enumerate()
            .map(|(c, &w)| lines(row.get(c).map_or("", String::as_str), w))
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1).max(1);
        for k in 0..height {
            if k > 0 {
                out.push('\n');
            }
            out.push('|');
            for (cell, &w) in cells.iter().zip(widths) {
                let line = cell.get(k).copied().unwrap_or("");
                out.push(' ');
                out.push_str(line);
                pad(out, w.saturating_sub(line.width()) + 1);
                out.push('|');
            }
        }
    }
}

fn pad(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// The lines of `cell` in a column `width` wide: its own lines, each
/// wrapped at spaces when longer (a longer word is cut).
fn lines(cell: &str, width: usize) -> Vec<&str> {
    let mut out = Vec::new();
    for line in cell.split('\n') {
        let mut rest = line;
        while rest.width() > width && width > 0 {
            // The longest prefix that fits, ending before a space if
            // there is one.
            let mut fit = 0;
            let mut last_space = None;
            for (i, ch) in rest.char_indices() {
                if rest[..i + ch.len_utf8()].width() > width {
                    break;
                }
                fit = i + ch.len_utf8();
                if ch == ' ' {
                    last_space = Some(i);
                }
            }
            let cut = match last_space {
                // A word that ends exactly at the width stays on the line.
                _ if rest[fit..].starts_with(' ') && fit > 0 => fit,
                Some(i) if i > 0 => i,
                _ => fit.max(rest.chars().next().map_or(1, char::len_utf8)),
            };
            out.push(rest[..cut].trim_end());
            rest = rest[cut..].trim_start();
        }
        out.push(rest);
    }
    out
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let widths = self.widths();
        let mut out = String::with_capacity(
            (self.rows.len() + 2) * (widths.iter().map(|w| w + 3).sum::<usize>() + 2),
        );
        if let Some(header) = &self.header {
            Table::write_row(&mut out, header, &widths);
            out.push_str("\n|");
            for &w in &widths {
                out.extend(std::iter::repeat_n('-', w + 2));
                out.push('|');
            }
        }
        for row in &self.rows {
            if !out.is_empty() {
                out.push('\n');
            }
            Table::write_row(&mut out, row, &widths);
        }
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_padded_to_the_widest_cell() {
        let mut t = Table::new();
        t.set_header(["test", "x86tso"]);
        t.add_row(["SB", "Always (4)"]);
        t.add_row(["2+2W", "Never (3)"]);
        assert_eq!(
            t.to_string(),
            "| test | x86tso     |\n\
             |------|------------|\n\
             | SB   | Always (4) |\n\
             | 2+2W | Never (3)  |"
        );
    }

    #[test]
    fn a_cell_of_several_lines_keeps_its_column() {
        let mut t = Table::new();
        t.set_header(["a", "b"]);
        t.add_row(["one\ntwo", "x"]);
        assert_eq!(
            t.to_string(),
            "| a   | b |\n|-----|---|\n| one | x |\n| two |   |"
        );
    }

    #[test]
    fn short_rows_get_empty_cells_and_wide_characters_count_twice() {
        let mut t = Table::new();
        t.set_header(["名前", "n"]);
        t.add_row(["x"]);
        assert_eq!(t.to_string(), "| 名前 | n |\n|------|---|\n| x    |   |");
    }

    #[test]
    fn wrapping_fits_the_width_at_spaces() {
        let mut t = Table::new();
        t.set_header(["key", "value"]);
        t.add_row([
            "pmu",
            "unavailable: the kernel refused perf_event_open for cycles",
        ]);
        t.wrap_to(30);
        let s = t.to_string();
        for line in s.lines() {
            assert!(line.width() <= 30, "{line:?} is wider than 30");
        }
        assert!(s.contains("| pmu | unavailable: the     |"), "{s}");
        let words: Vec<&str> = s
            .lines()
            .skip(2)
            .flat_map(|l| l.split('|').nth(2).unwrap_or("").split_whitespace())
            .collect();
        assert_eq!(
            words.join(" "),
            "unavailable: the kernel refused perf_event_open for cycles"
        );
    }

    #[test]
    fn a_word_longer_than_the_column_is_cut() {
        assert_eq!(lines("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(lines("abcd efgh", 4), vec!["abcd", "efgh"]);
        assert_eq!(lines("", 4), vec![""]);
        assert_eq!(lines("a b", 0), vec!["a b"]);
    }
}
