//! Assembly threads: the `P0 | P1 ;` table of herd's assembly dialects,
//! its cells split into each thread's column, labels resolved, and each
//! instruction handed to its dialect's lowering (`syntax::Threads::Table`)
//! to become [`Instr`]s.

use crate::ast::*;
use crate::builder::Builder;
use crate::scan::{Cursor, PResult};

use super::operand::END_LABEL;
use super::syntax::{Fixup, LowerFn};

/// One cell of the thread table.
struct Cell {
    thread: usize,
    start: usize,
    end: usize,
}

/// Reads the thread table at `c`, each cell's instruction lowered by
/// `lower` (its dialect's); returns where the table ends.
pub(crate) fn parse_threads(c: &mut Cursor<'_>, b: &mut Builder, lower: LowerFn) -> PResult<usize> {
    c.ws();
    // Header line: `P0 | P1 ;`
    let line_end = c
        .rest()
        .find(';')
        .map(|i| c.pos + i)
        .ok_or_else(|| c.err("expected the thread header 'P0 | P1 ;'"))?;
    let mut n = 0;
    for (i, part) in c.src[c.pos..line_end].split('|').enumerate() {
        let p = part.trim();
        if p != format!("P{i}") {
            return Err(c.err(format!("expected 'P{i}' in the thread header, found '{p}'")));
        }
        n += 1;
    }
    for t in 0..n {
        b.thread(t);
    }
    c.pos = line_end + 1;
    let mut cells: Vec<Cell> = Vec::new();
    loop {
        // Skip blank space up to the next line with content.
        c.ws();
        if c.at_end() {
            break;
        }
        let line_end = c.rest().find('\n').map(|i| c.pos + i).unwrap_or(c.end);
        let line = &c.src[c.pos..line_end];
        let first = line
            .split(|ch: char| !ch.is_ascii_alphanumeric() && ch != '~' && ch != '_')
            .next()
            .unwrap_or("");
        if matches!(
            first,
            "exists" | "~exists" | "forall" | "locations" | "filter"
        ) || line.starts_with('~')
        {
            break;
        }
        let Some(semi) = line.find(';') else {
            break;
        };
        let row_start = c.pos;
        let row_end = row_start + semi;
        let mut start = row_start;
        let mut t = 0;
        for (i, ch) in c.src[row_start..row_end].char_indices() {
            if ch == '|' {
                cells.push(Cell {
                    thread: t,
                    start,
                    end: row_start + i,
                });
                t += 1;
                start = row_start + i + 1;
            }
        }
        cells.push(Cell {
            thread: t,
            start,
            end: row_end,
        });
        if t >= n {
            return Err(c.err_at(
                row_start,
                format!(
                    "this row has {} columns but the test has {n} threads",
                    t + 1
                ),
            ));
        }
        c.pos = row_end + 1;
    }
    let tail = c.pos;
    // Lower each thread's cells in order.
    let mut labels: Vec<Vec<(String, usize)>> = vec![Vec::new(); n];
    let mut fixups: Vec<Vec<Fixup>> = vec![Vec::new(); n];
    for cell in &cells {
        let mut cur = c.sub(cell.start, cell.end);
        cur.ws();
        if cur.at_end() {
            continue;
        }
        // Labels `L0:` (possibly followed by an instruction).
        loop {
            let save = cur.pos;
            if let Some(id) = cur.ident() {
                cur.ws_inline();
                if cur.eat(":") {
                    let code_len = b.threads[cell.thread].code.len();
                    labels[cell.thread].push((id.to_string(), code_len));
                    continue;
                }
            }
            cur.pos = save;
            break;
        }
        cur.ws();
        if cur.at_end() {
            continue;
        }
        let mut out = Vec::new();
        lower(&mut cur, b, cell.thread, &mut out, &mut fixups[cell.thread])?;
        cur.ws();
        if !cur.at_end() {
            return Err(cur.err(format!("unexpected {} after the instruction", cur.found())));
        }
        b.threads[cell.thread].code.extend(out);
    }
    for (t, fix) in fixups.into_iter().enumerate() {
        for (at, label, pos) in fix {
            let target = labels[t]
                .iter()
                .find(|(l, _)| *l == label)
                .map(|(_, i)| *i)
                .or_else(|| (label == END_LABEL).then_some(b.threads[t].code.len()))
                .ok_or_else(|| c.err_at(pos, format!("undefined label '{label}' in thread {t}")))?;
            if let Instr::Branch { target: tg, .. } = &mut b.threads[t].code[at] {
                *tg = target;
            }
        }
    }
    Ok(tail)
}
