//! atomlab's one table type, written in two syntaxes: the terminal's
//! GitHub-flavoured Markdown pipe tables
//! (<https://github.github.com/gfm/#tables-extension->), padded so they
//! also read as aligned columns in a terminal, a log or a pipe
//! ([`fmt::Display`]), and the HTML report's `<table>` ([`Table::html`]).
//! A table is built once from records (a kind's view, under [`crate::kinds`]) and drawn in
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
//! spaces so that the table fits a width; a table too wide even then
//! (seventeen columns of figures) is cut into panels of columns, each
//! repeating the [`Table::keys`] columns that say what a row is, as R and
//! pandas print a wide data frame. Every terminal view fits [`WIDTH`], and
//! writes its prose lines with [`write_wrapped`].
//!
//! [`Table::heading`] starts a group of rows under one line that says
//! what they share (`compare`'s record key), instead of repeating it in
//! every row.
//!
//! `check` prints one for every run, often of a few milliseconds in all:
//! the table is laid out in one pass over its cells with one output buffer.

use std::fmt::{self, Write as _};

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

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

    /// A name to be read as code (a path, a symbol): as it is in the
    /// terminal, in `<code>` in HTML.
    pub fn code(text: impl AsRef<str>) -> Cell {
        let text = text.as_ref();
        Cell {
            text: text.to_string(),
            html: Some(format!("<code>{}</code>", esc(text))),
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

/// The width every terminal view fits its tables and lines into: wide
/// enough for the tables' figures, narrow enough for a laptop's split
/// terminal, a code review's diff and an issue's code block.
pub const WIDTH: usize = 100;

/// Writes `text` as lines of at most `width` columns, broken at spaces
/// (a longer word is cut). Each of its lines keeps its own indentation
/// (`  note:`); the lines it wraps onto are indented by `indent` more, so
/// that a note's words stand under it.
pub fn write_wrapped(
    out: &mut impl std::io::Write,
    text: &str,
    width: usize,
    indent: usize,
) -> std::io::Result<()> {
    for line in text.split('\n') {
        let body = line.trim_start();
        let own = &line[..line.len() - body.len()];
        let hang = " ".repeat(own.width() + indent);
        let first = lines(body, width.saturating_sub(own.width()).max(MIN_WRAPPED));
        let head = first.first().copied().unwrap_or("");
        writeln!(out, "{own}{head}")?;
        // `head` is a slice of `body`: the rest starts after it.
        let end = head.as_ptr() as usize - body.as_ptr() as usize + head.len();
        let rest = body[end..].trim_start();
        if rest.is_empty() {
            continue;
        }
        for piece in lines(rest, width.saturating_sub(hang.len()).max(MIN_WRAPPED)) {
            writeln!(out, "{hang}{piece}")?;
        }
    }
    Ok(())
}

/// Runs `view` into a buffer, then writes what it wrote to `out` with
/// every line fitted to [`WIDTH`] by [`write_wrapped`] (a note's words
/// under the note, two columns in); table lines, already fitted, pass as
/// they are.
pub fn fitted(
    out: &mut impl std::io::Write,
    view: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    view(&mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    for line in text.lines() {
        if line.starts_with('|') {
            writeln!(out, "{line}")?;
        } else {
            write_wrapped(out, line, WIDTH, 2)?;
        }
    }
    Ok(())
}

/// A row of a table: cells, or a heading over the rows that follow.
#[derive(Debug, Clone)]
enum Row {
    Cells(Vec<Cell>),
    Heading(String),
}

impl Row {
    fn cells(&self) -> &[Cell] {
        match self {
            Row::Cells(c) => c,
            Row::Heading(_) => &[],
        }
    }
}

/// A table: a header and rows of cells.
#[derive(Debug, Default, Clone)]
pub struct Table {
    header: Option<Vec<String>>,
    rows: Vec<Row>,
    /// Fit the table into this many columns by wrapping cells.
    width: Option<usize>,
    /// The leading columns that name a row, repeated in every panel.
    keys: usize,
    /// The narrowest a column is wrapped to; [`WRAP_FLOOR`] when 0.
    floor: usize,
    /// Columns never wrapped (a verdict people grep for).
    whole: Vec<usize>,
    /// The HTML table's CSS class.
    class: &'static str,
}

/// The narrowest a line of prose is wrapped to.
const MIN_WRAPPED: usize = 10;

/// The narrowest a column is wrapped to: a wide table is cut into panels
/// rather than its cells into slivers.
const WRAP_FLOOR: usize = 20;

impl Table {
    /// An empty table, as wide as its cells.
    pub fn new() -> Table {
        Table::default()
    }

    /// An empty table that fits [`WIDTH`] in the terminal, as every
    /// capability's terminal view draws them.
    pub fn fitting() -> Table {
        Table {
            width: Some(WIDTH),
            ..Table::default()
        }
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
        self.rows
            .push(Row::Cells(cells.into_iter().map(Into::into).collect()));
        self
    }

    /// Appends a row; it must have one cell per column.
    pub fn row(&mut self, cells: Vec<Cell>) {
        debug_assert_eq!(Some(cells.len()), self.header.as_ref().map(Vec::len));
        self.rows.push(Row::Cells(cells));
    }

    /// Starts a group of rows under `text`, a line across the table (the
    /// terminal) or a header cell across every column (HTML).
    pub fn heading(&mut self, text: impl Into<String>) -> &mut Self {
        self.rows.push(Row::Heading(text.into()));
        self
    }

    /// Wraps columns down to `n` wide (instead of twenty) before the
    /// table is cut into panels: for a table whose columns belong
    /// together, such as a figure and its verdict.
    pub fn wrap_floor(&mut self, n: usize) -> &mut Self {
        self.floor = n;
        self
    }

    /// Column `c` is never wrapped: its cells stay on one line (a
    /// verdict that scripts and people search for as it is).
    pub fn whole(&mut self, c: usize) -> &mut Self {
        self.whole.push(c);
        self
    }

    /// The first `n` columns name a row (variant, placement, rate): when
    /// the table must be cut into panels to fit its width, every panel
    /// repeats them. One when not set.
    pub fn keys(&mut self, n: usize) -> &mut Self {
        self.keys = n;
        self
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
                        .any(|r| r.cells().get(c).is_some_and(|x| !x.is_blank()))
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
            if let Row::Cells(r) = r {
                filter(r, &keep);
            }
        }
    }

    fn all_rows_len(&self) -> usize {
        let header = self.header.as_ref().map_or(0, Vec::len);
        self.rows
            .iter()
            .map(|r| r.cells().len())
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
        let columns = self.all_rows_len();
        for r in &self.rows {
            let r = match r {
                Row::Cells(c) => c,
                Row::Heading(h) => {
                    let _ = writeln!(
                        out,
                        "<tr class=\"group\"><th scope=\"rowgroup\" colspan=\"{columns}\">{}</th></tr>",
                        esc(h)
                    );
                    continue;
                }
            };
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

    /// Wraps cells at spaces so that the table is at most `width` columns
    /// wide ([`WIDTH`] for [`Table::fitting`]), narrowing the widest columns first,
    /// none below twenty columns or its longest word;
    /// what still does not fit is cut into panels of columns, each
    /// repeating the [`Table::keys`].
    pub fn wrap_to(&mut self, width: usize) -> &mut Self {
        self.width = Some(width);
        self
    }

    /// The header and the rows of cells (not the headings), as the
    /// terminal's text.
    fn all_rows(&self) -> impl Iterator<Item = Vec<&str>> {
        let header = self
            .header
            .iter()
            .map(|h| h.iter().map(String::as_str).collect());
        header.chain(self.rows.iter().filter_map(|r| match r {
            Row::Cells(c) => Some(c.iter().map(Cell::as_str).collect()),
            Row::Heading(_) => None,
        }))
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

    /// The display width of the longest word of each column: wrapping
    /// never cuts a word (a run id, a number), so no column is narrower.
    /// A word breaks after an underscore, as [`lines`] does.
    fn longest_words(&self) -> Vec<usize> {
        let mut words = vec![0; self.all_rows_len()];
        for row in self.all_rows() {
            for (w, cell) in words.iter_mut().zip(row) {
                for word in cell.split_whitespace().flat_map(|w| w.split_inclusive('_')) {
                    *w = (*w).max(word.width());
                }
            }
        }
        words
    }

    /// The widths of the columns `cols` wrapped to fit `limit` where the
    /// floor and their words allow: the widest column loses a column at
    /// a time, so that two wide ones end up alike rather than one cut to
    /// the floor.
    fn shrink(&self, cols: &[usize], limit: usize) -> Vec<usize> {
        let floor = if self.floor == 0 {
            WRAP_FLOOR
        } else {
            self.floor
        };
        let (natural, words) = (self.natural_widths(), self.longest_words());
        let mut widths: Vec<usize> = cols.iter().map(|&c| natural[c]).collect();
        let least: Vec<usize> = cols
            .iter()
            .map(|&c| {
                if self.whole.contains(&c) {
                    natural[c]
                } else {
                    floor.max(words[c])
                }
            })
            .collect();
        while total(&widths) > limit {
            let Some((i, _)) = widths
                .iter()
                .enumerate()
                .filter(|(i, w)| **w > least[*i])
                .max_by_key(|(i, w)| (**w, std::cmp::Reverse(*i)))
            else {
                break;
            };
            widths[i] -= 1;
        }
        widths
    }

    /// The panels the table is drawn in, each its columns and their
    /// widths: one panel of every column when the table fits
    /// [`Table::wrap_to`]'s width as it is or with its cells wrapped; else
    /// the key columns and as many others as fit (wrapped), panel after
    /// panel, each panel's cells wrapped only if it does not fit as it is.
    fn panels(&self) -> Vec<(Vec<usize>, Vec<usize>)> {
        let natural = self.natural_widths();
        let all: Vec<usize> = (0..natural.len()).collect();
        let Some(limit) = self.width else {
            return vec![(all, natural)];
        };
        if total(&natural) <= limit {
            return vec![(all, natural)];
        }
        let wrapped = self.shrink(&all, limit);
        if total(&wrapped) <= limit {
            return vec![(all, wrapped)];
        }
        let of = |cols: &[usize]| total(&cols.iter().map(|&c| wrapped[c]).collect::<Vec<_>>());
        let keys: Vec<usize> = (0..self.keys.max(1).min(natural.len())).collect();
        let mut panels = Vec::new();
        let mut panel = keys.clone();
        for c in keys.len()..natural.len() {
            panel.push(c);
            if of(&panel) > limit && panel.len() > keys.len() + 1 {
                panel.pop();
                panels.push(std::mem::replace(&mut panel, keys.clone()));
                panel.push(c);
            }
        }
        panels.push(panel);
        panels
            .into_iter()
            .map(|cols| {
                let widths: Vec<usize> = cols.iter().map(|&c| natural[c]).collect();
                let widths = if total(&widths) <= limit {
                    widths
                } else {
                    self.shrink(&cols, limit)
                };
                (cols, widths)
            })
            .collect()
    }

    /// A heading across a panel `widths` wide, wrapped at spaces to fit;
    /// a word wider than the panel (a file's path) stays whole on a line
    /// of its own, past the panel's edge, so that it can be searched for.
    fn write_heading(out: &mut String, text: &str, widths: &[usize]) {
        let inner = total(widths).saturating_sub(4);
        for (k, line) in whole_words(text, inner.max(MIN_WRAPPED))
            .into_iter()
            .enumerate()
        {
            if k > 0 {
                out.push('\n');
            }
            out.push_str("| ");
            out.push_str(line);
            pad(out, inner.saturating_sub(line.width()) + 1);
            out.push('|');
        }
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

/// The lines of `text` at most `width` wide, broken at spaces only: a
/// longer word is a line of its own, whole.
fn whole_words(text: &str, width: usize) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.split('\n') {
        // The line being filled, as byte offsets into `line`.
        let mut current: Option<(usize, usize)> = None;
        let mut offset = 0;
        for word in line.split(' ') {
            let (start, end) = (offset, offset + word.len());
            offset = end + 1;
            if word.is_empty() {
                continue;
            }
            current = match current {
                Some((s, e)) if line[s..end].width() > width => {
                    out.push(&line[s..e]);
                    Some((start, end))
                }
                Some((s, _)) => Some((s, end)),
                None => Some((start, end)),
            };
        }
        out.push(current.map_or("", |(s, e)| &line[s..e]));
    }
    out
}

/// The lines of `cell` in a column `width` wide: its own lines, each
/// wrapped at spaces when longer (a longer word is cut).
///
/// Linear in the cell's length: each piece is measured once, a character
/// at a time, up to the width (a condition of 100,000 terms is one cell
/// of a check table; measuring the rest of it again for every line took
/// minutes).
fn lines(cell: &str, width: usize) -> Vec<&str> {
    let mut out = Vec::new();
    for line in cell.split('\n') {
        let mut rest = line;
        // A column of no width takes the line whole.
        while width > 0 && !rest.is_empty() {
            // The longest prefix that fits, ending before a space if
            // there is one, else after an underscore (a metric's name,
            // `server_cpu_percent`, breaks between its words).
            let (mut fit, mut used, mut overflows) = (0, 0, false);
            let mut last_space = None;
            let mut last_underscore = None;
            for (i, ch) in rest.char_indices() {
                used += ch.width().unwrap_or(0);
                if used > width {
                    overflows = true;
                    break;
                }
                fit = i + ch.len_utf8();
                if ch == ' ' {
                    last_space = Some(i);
                } else if ch == '_' {
                    last_underscore = Some(i + 1);
                }
            }
            if !overflows {
                break;
            }
            let cut = match (last_space, last_underscore) {
                // A word that ends exactly at the width stays on the line.
                _ if rest[fit..].starts_with(' ') && fit > 0 => fit,
                (Some(i), _) if i > 0 => i,
                (_, Some(i)) if i < rest.len() => i,
                _ => fit.max(rest.chars().next().map_or(1, char::len_utf8)),
            };
            out.push(rest[..cut].trim_end());
            rest = rest[cut..].trim_start();
        }
        out.push(rest);
    }
    out
}

/// The cells of a row in the columns `cols`.
fn pick<'a>(cells: impl Iterator<Item = &'a str>, cols: &[usize]) -> Vec<&'a str> {
    let cells: Vec<&str> = cells.collect();
    cols.iter()
        .map(|&c| cells.get(c).copied().unwrap_or(""))
        .collect()
}

/// The width of a row of columns `widths` wide: each column adds its
/// padding and a bar; the row has one more bar.
fn total(widths: &[usize]) -> usize {
    widths.iter().map(|c| c + 3).sum::<usize>() + 1
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let panels = self.panels();
        let width: usize = panels.iter().map(|(_, w)| total(w) + 2).sum();
        let mut out = String::with_capacity((self.rows.len() + 2) * width);
        for (p, (cols, w)) in panels.iter().enumerate() {
            if p > 0 {
                out.push_str("\n\n");
            }
            let start = out.len();
            if let Some(h) = &self.header {
                let header = pick(h.iter().map(String::as_str), cols);
                Table::write_row(&mut out, &header, w);
                out.push_str("\n|");
                for &w in w {
                    out.extend(std::iter::repeat_n('-', w + 2));
                    out.push('|');
                }
            }
            for row in &self.rows {
                if out.len() > start {
                    out.push('\n');
                }
                match row {
                    Row::Cells(c) => {
                        let cells = pick(c.iter().map(Cell::as_str), cols);
                        Table::write_row(&mut out, &cells, w);
                    }
                    Row::Heading(h) => Table::write_heading(&mut out, h, w),
                }
            }
        }
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_wraps_at_spaces_and_keeps_a_long_path_whole() {
        let mut t = Table::fitting();
        t.set_header(vec!["a", "b"]);
        let path = format!("/tmp/{}/x_1.0_arm64.deb!/usr/bin/quiet", "d".repeat(120));
        t.heading(format!("{path} and some words after it"));
        t.add_row(vec!["1", "2"]);
        let text = t.to_string();
        // The path on a line of its own, whole, past the table's edge.
        assert!(text.lines().any(|l| l == format!("| {path} |")), "{text}");
        // The words after it wrap to the table's width (ten columns at least).
        assert!(text.contains("| and some |\n| words |"), "{text}");
        assert_eq!(whole_words("ab cd ef", 5), ["ab cd", "ef"]);
        assert_eq!(whole_words("abcdefgh ij", 3), ["abcdefgh", "ij"]);
        assert_eq!(whole_words("", 3), [""]);
    }

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

    /// A table too wide for its width even wrapped is cut into panels,
    /// each within the width and each repeating the key columns, every
    /// cell shown once; headings cross each panel.
    #[test]
    fn a_wide_table_becomes_panels_that_repeat_the_keys() {
        let mut t = Table::with_header(&["variant", "wait", "a", "b", "c", "d", "e", "f"]);
        t.heading("bench spsc");
        t.add_row([
            "fences", "spin", "111111", "222222", "333333", "444444", "555555", "666666",
        ]);
        t.keys(2).wrap_to(40);
        let s = t.to_string();
        for line in s.lines() {
            assert!(line.width() <= 40, "{line:?} is wider than 40\n{s}");
        }
        let panels: Vec<&str> = s.split("\n\n").collect();
        assert!(panels.len() >= 2, "{s}");
        for p in &panels {
            assert!(p.starts_with("| variant | wait |"), "{s}");
            assert!(p.contains("| fences  | spin |"), "{s}");
            let heading = p.lines().nth(2).unwrap_or("");
            assert!(heading.starts_with("| bench spsc "), "{s}");
            assert!(heading.ends_with(" |"), "{s}");
            assert_eq!(heading.width(), p.lines().next().unwrap().width(), "{s}");
        }
        for figure in ["111111", "333333", "666666"] {
            assert_eq!(s.matches(figure).count(), 1, "{s}");
        }
        // Unlimited, it is one table.
        t.wrap_to(usize::MAX);
        assert!(!t.to_string().contains("\n\n"));
    }

    /// Prose wraps at spaces within the width, its continuation lines
    /// indented under the first's words.
    #[test]
    fn long_lines_wrap_under_their_first_word() {
        let mut out = Vec::new();
        write_wrapped(
            &mut out,
            "  note: one two three four five six seven eight nine ten",
            24,
            2,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "  note: one two three\n    four five six seven\n    eight nine ten\n"
        );
        let mut out = Vec::new();
        fitted(&mut out, |o| {
            use std::io::Write as _;
            writeln!(o, "| a |\nshort\n{}", "word ".repeat(30).trim_end())
        })
        .unwrap();
        let out = String::from_utf8(out).unwrap();
        assert!(out.starts_with("| a |\nshort\nword word"), "{out}");
        assert!(out.lines().all(|l| l.width() <= WIDTH), "{out}");
        assert_eq!(out.lines().count(), 4, "{out}");
    }

    #[test]
    fn a_word_longer_than_the_column_is_cut() {
        assert_eq!(lines("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(lines("abcd efgh", 4), vec!["abcd", "efgh"]);
        assert_eq!(lines("", 4), vec![""]);
        assert_eq!(lines("a b", 0), vec!["a b"]);
        // A name breaks after an underscore, a space first.
        assert_eq!(
            lines("server_cpu_percent_per_1k_rps", 12),
            vec!["server_cpu_", "percent_per_", "1k_rps"]
        );
        assert_eq!(
            lines("latency_p50_s too noisy", 15),
            vec!["latency_p50_s", "too noisy"]
        );
    }

    #[test]
    fn wide_characters_count_twice_and_a_long_cell_wraps_whole() {
        // Display width, not bytes or chars: two CJK characters fill 4.
        assert_eq!(lines("漢字漢字 ab", 4), vec!["漢字", "漢字", "ab"]);
        // A flat condition of 100,000 terms, as a check table shows it.
        let cell = vec!["[x]=1"; 100_000].join(" /\\ ");
        let wrapped = lines(&cell, 60);
        assert!(wrapped.iter().all(|l| l.width() <= 60));
        assert_eq!(wrapped.join(" "), cell);
    }
}
