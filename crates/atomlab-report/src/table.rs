//! atomlab's one table type, written in two syntaxes: the terminal's
//! GitHub-flavoured Markdown pipe tables
//! (<https://github.github.com/gfm/#tables-extension->), padded so they
//! also read as aligned columns in a terminal, a log or a pipe
//! ([`fmt::Display`]), and the HTML report's `<table>` ([`Table::html`]).
//! A table is built once from records (e.g. [`crate::tables`]) and drawn in
//! either.
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

use std::fmt::{self, Write as _};

use unicode_width::UnicodeWidthStr;

use crate::html::esc;

/// One table cell: its text, its CSS class (`n` for a figure, right-aligned
/// in HTML), and markup the HTML shows instead of the text.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Cell {
    text: String,
    html: Option<String>,
    class: &'static str,
}

impl Cell {
    /// A cell showing `text` (escaped in HTML).
    pub fn text(text: impl AsRef<str>) -> Cell {
        Cell {
            text: text.as_ref().to_string(),
            ..Cell::default()
        }
    }

    /// A figure: right-aligned in HTML.
    pub fn num(text: impl AsRef<str>) -> Cell {
        Cell::text(text).class("n")
    }

    /// A cell of markup the caller built (and escaped) itself; the
    /// terminal shows the markup as it is.
    pub fn html(html: String) -> Cell {
        Cell {
            text: html.clone(),
            html: Some(html),
            ..Cell::default()
        }
    }

    /// The same cell with `class` (HTML only).
    pub fn class(mut self, class: &'static str) -> Cell {
        self.class = class;
        self
    }

    /// The cell's text, as the terminal shows it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    fn to_html(&self) -> String {
        self.html.clone().unwrap_or_else(|| esc(&self.text))
    }

    fn is_blank(&self) -> bool {
        let html = self.to_html();
        html.is_empty() || html == "-"
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell {
            text,
            ..Cell::default()
        }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::text(text)
    }
}

/// A table: a header and rows of cells.
#[derive(Debug, Default, Clone)]
pub struct Table {
    header: Option<Vec<String>>,
    rows: Vec<Vec<Cell>>,
    /// Fit the table into this many columns by wrapping cells.
    width: Option<usize>,
    /// The HTML table's CSS class.
    class: &'static str,
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

    /// A table with these column titles.
    pub fn with_header<S: AsRef<str>>(header: &[S]) -> Table {
        let mut t = Table::new();
        t.set_header(header.iter().map(|h| h.as_ref().to_string()));
        t
    }

    /// Adds a row.
    pub fn add_row<C: Into<Cell>>(&mut self, cells: impl IntoIterator<Item = C>) -> &mut Self {
        self.rows.push(cells.into_iter().map(Into::into).collect());
        self
    }

    /// Appends a row; it must have one cell per column.
    pub fn row(&mut self, cells: Vec<Cell>) {
        debug_assert_eq!(Some(cells.len()), self.header.as_ref().map(Vec::len));
        self.rows.push(cells);
    }

    /// The same table with a CSS class (HTML only).
    pub fn class(mut self, class: &'static str) -> Table {
        self.class = class;
        self
    }

    /// Leaves out the columns (other than the first) whose every cell is
    /// empty or `-`: a PMU column on a machine without counters.
    pub fn drop_blank_columns(&mut self) {
        let columns = self.all_rows_len();
        let keep: Vec<bool> = (0..columns)
            .map(|c| {
                c == 0
                    || self
                        .rows
                        .iter()
                        .any(|r| r.get(c).is_some_and(|x| !x.is_blank()))
            })
            .collect();
        fn filter<T>(v: &mut Vec<T>, keep: &[bool]) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                keep.get(i - 1).copied().unwrap_or(true)
            });
        }
        if let Some(h) = &mut self.header {
            filter(h, &keep);
        }
        for r in &mut self.rows {
            filter(r, &keep);
        }
    }

    fn all_rows_len(&self) -> usize {
        let header = self.header.as_ref().map_or(0, Vec::len);
        self.rows
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .max(header)
    }

    /// The table as HTML.
    pub fn html(&self, out: &mut String) {
        let class = if self.class.is_empty() {
            String::new()
        } else {
            format!(" class=\"{}\"", self.class)
        };
        let _ = write!(out, "<div class=\"scroll\"><table{class}>\n<thead><tr>");
        for h in self.header.iter().flatten() {
            let _ = write!(out, "<th scope=\"col\">{}</th>", esc(h));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for r in &self.rows {
            out.push_str("<tr>");
            for c in r {
                let html = c.to_html();
                if c.class.is_empty() {
                    let _ = write!(out, "<td>{html}</td>");
                } else {
                    let _ = write!(out, "<td class=\"{}\">{html}</td>", c.class);
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
    }

    /// Wraps cells at spaces (or, for a longer word, anywhere) so that
    /// the table is at most `width` columns wide, narrowing the widest
    /// columns first and none below ten columns.
    pub fn wrap_to(&mut self, width: usize) -> &mut Self {
        self.width = Some(width);
        self
    }

    /// The header and the rows, as the terminal's text.
    fn all_rows(&self) -> impl Iterator<Item = Vec<&str>> {
        let header = self
            .header
            .iter()
            .map(|h| h.iter().map(String::as_str).collect());
        header.chain(
            self.rows
                .iter()
                .map(|r| r.iter().map(Cell::as_str).collect()),
        )
    }

    /// The display width of each column before wrapping.
    fn natural_widths(&self) -> Vec<usize> {
        let mut widths = vec![0; self.all_rows_len()];
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

    fn write_row(out: &mut String, row: &[&str], widths: &[usize]) {
        let cell = |c: usize| row.get(c).copied().unwrap_or("");
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
            .map(|(c, &w)| lines(cell(c), w))
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
        let mut rows = self.all_rows();
        if self.header.is_some() {
            let header = rows.next().unwrap_or_default();
            Table::write_row(&mut out, &header, &widths);
            out.push_str("\n|");
            for &w in &widths {
                out.extend(std::iter::repeat_n('-', w + 2));
                out.push('|');
            }
        }
        for row in rows {
            if !out.is_empty() {
                out.push('\n');
            }
            Table::write_row(&mut out, &row, &widths);
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
    fn blank_columns_go_and_html_escapes() {
        let mut t = Table::with_header(&["a", "b", "c"]);
        t.row(vec![
            Cell::text("x<"),
            Cell::text("-"),
            Cell::num("1").class("ok"),
        ]);
        t.drop_blank_columns();
        let mut s = String::new();
        t.html(&mut s);
        assert_eq!(
            s,
            "<div class=\"scroll\"><table>\n<thead><tr><th scope=\"col\">a</th><th scope=\"col\">c</th></tr></thead>\n<tbody>\n<tr><td>x&lt;</td><td class=\"ok\">1</td></tr>\n</tbody></table></div>\n"
        );
        assert_eq!(t.to_string(), "| a  | c |\n|----|---|\n| x< | 1 |");
    }

    #[test]
    fn a_word_longer_than_the_column_is_cut() {
        assert_eq!(lines("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(lines("abcd efgh", 4), vec!["abcd", "efgh"]);
        assert_eq!(lines("", 4), vec![""]);
        assert_eq!(lines("a b", 0), vec!["a b"]);
    }
}
