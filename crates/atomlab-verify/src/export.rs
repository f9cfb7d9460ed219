//! `atomlab verify --litmus DIR`: each variant's client written as a
//! herd7 litmus test in the file's own assembly (AArch64 or RISCV), so
//! that a second checker can judge it: herd7 (Alglave, Maranget and
//! Tautschnig, "Herding Cats", TOPLAS 2014; the herdtools7 manual for the
//! format) with its own aarch64.cat or riscv.cat, and `atomlab check`.
//! The printing is atomlab-litmus's ([`atomlab_litmus::print()`]); this
//! module makes the client a test that a litmus checker judges as verify
//! does:
//!
//! - The condition is the client's (`exists` a wrong final state), so
//!   herd7's `Never` is verify's PASS and `Sometimes`/`Always` its FAIL.
//! - Loops. A litmus checker runs each path to its end (`atomlab check`
//!   has no spin-assume; herd7 unrolls a backward jump `-unroll` times,
//!   default 2, and drops the executions cut there), so the export has no
//!   backward jump: each one jumps to the thread's end instead, past a
//!   `done` register the normal end sets to 1, and the test's `filter`
//!   keeps only executions in which every thread with a loop finished.
//!   That keeps the executions in which every loop leaves at its first
//!   iteration, which is what spin-assume keeps of a spin loop, an LL/SC
//!   retry or a CAS retry whose failed iteration wrote nothing (GenMC's
//!   argument, Kokologiannakis, Raad and Vafeiadis, OOPSLA 2019: the run
//!   in which the loop's read returns the value that leaves it is there
//!   too). A loop whose iterations write is cut as well, so for such a
//!   variant the export says less than verify (its `--unroll`); the test
//!   verify_litmus.rs checks that the export's verdict equals verify's on
//!   every zoo variant.

use atomlab_litmus::{CmpOp, Expr, Instr, Prop, StateVar, Test, Value};

use crate::client::{self, Built, NotBuilt};
use crate::descriptor::{Kind, Variant};
use crate::{Options, Plugin};

/// The clients verify checks for `v`: one, or two (without and with LSE)
/// when the code calls outline atomics.
pub fn clients(
    plugin: &Plugin<'_>,
    v: &Variant,
    opts: &Options,
) -> Vec<(Option<bool>, Result<Built, NotBuilt>)> {
    let kind = v.kind.unwrap_or(Kind::Lock);
    let build = |lse| client::build(&plugin.file, v, kind, opts.size(), lse);
    match build(false) {
        Ok(b) if b.reads_lse_flag => vec![(Some(false), Ok(b)), (Some(true), build(true))],
        other => vec![(None, other)],
    }
}

/// The file name of an export: `VARIANT-ARCH[-lse|-nolse].litmus`, with
/// only plain characters.
pub fn file_name(plugin: &Plugin<'_>, variant: &str, lse: Option<bool>) -> String {
    let cpu = match lse {
        Some(true) => "-lse",
        Some(false) => "-nolse",
        None => "",
    };
    format!("{variant}-{}{cpu}.litmus", plugin.arch().name())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The client `b` of variant `v` as a loop-free litmus test (see the
/// module's doc), named after the variant.
pub fn litmus_test(plugin: &Plugin<'_>, v: &Variant, lse: Option<bool>, b: &Built) -> Test {
    let mut t = b.test.clone();
    let arch = plugin.arch().name();
    t.name = file_name(plugin, &v.name, lse)
        .trim_end_matches(".litmus")
        .to_string();
    // The doc string: what the client is, from which file.
    let file = std::path::Path::new(&plugin.path)
        .file_name()
        .map_or(plugin.path.clone(), |f| f.to_string_lossy().into_owned());
    t.file = format!(
        "atomlab verify client of {} ({}) in {file} ({arch}{}): exists a wrong final state; loops cut at their first iteration (filter)",
        v.name,
        v.kind.map_or("?", Kind::name),
        match lse {
            Some(true) => ", CPU with LSE",
            Some(false) => ", CPU without LSE",
            None => "",
        }
    );
    let mut finished = Vec::new();
    for th in &mut t.threads {
        let back = back_edges(&th.code);
        if back.is_empty() {
            continue;
        }
        th.regs.push("%done".into());
        let done = th.regs.len() - 1;
        th.code = cut_loops(&th.code, &back, done);
        finished.push(Prop::Atom(
            StateVar::Reg {
                thread: th.id,
                reg: done,
            },
            CmpOp::Eq,
            Value::Int(1),
        ));
    }
    let mut keep: Vec<Prop> = t.filter.take().into_iter().collect();
    keep.extend(finished);
    t.filter = match keep.len() {
        0 => None,
        1 => keep.pop(),
        _ => Some(Prop::And(keep)),
    };
    t
}

/// The export's text, or why it cannot be printed.
pub fn litmus_text(
    plugin: &Plugin<'_>,
    v: &Variant,
    lse: Option<bool>,
    b: &Built,
) -> Result<String, atomlab_litmus::PrintError> {
    atomlab_litmus::print(&litmus_test(plugin, v, lse, b))
}

/// The successors of instruction `i` in `code` (`code.len()` is the end).
fn successors(code: &[Instr], i: usize) -> Vec<usize> {
    match &code[i] {
        Instr::Branch { cond: None, target } => vec![*target],
        Instr::Branch {
            cond: Some(_),
            target,
        } => vec![i + 1, *target],
        _ => vec![i + 1],
    }
}

/// The loops' back edges (from, to): the edges a depth-first walk from
/// the first instruction finds going to an instruction still on its
/// path. Lifted code is laid out as it was inlined, so a jump to an
/// earlier index is not necessarily a loop (a helper's return to its
/// caller's continuation) and a fall-through can close one.
fn back_edges(code: &[Instr]) -> std::collections::BTreeSet<(usize, usize)> {
    let n = code.len();
    let mut back = std::collections::BTreeSet::new();
    if n == 0 {
        return back;
    }
    // 0: not seen, 1: on the path, 2: done.
    let mut state = vec![0u8; n];
    let mut stack: Vec<(usize, Vec<usize>)> = vec![(0, successors(code, 0))];
    state[0] = 1;
    while let Some((u, succ)) = stack.last_mut() {
        let u = *u;
        match succ.pop() {
            Some(v) if v >= n => {}
            Some(v) => match state[v] {
                0 => {
                    state[v] = 1;
                    stack.push((v, successors(code, v)));
                }
                1 => {
                    back.insert((u, v));
                }
                _ => {}
            },
            None => {
                state[u] = 2;
                stack.pop();
            }
        }
    }
    back
}

/// `code` with each back edge sent past a final `done := 1`: a branch's
/// target changed, a fall-through given a jump of its own.
fn cut_loops(
    code: &[Instr],
    back: &std::collections::BTreeSet<(usize, usize)>,
    done: usize,
) -> Vec<Instr> {
    let n = code.len();
    let falls = |i: usize| !matches!(code[i], Instr::Branch { cond: None, .. });
    let cut_fall = |i: usize| falls(i) && back.contains(&(i, i + 1));
    let mut at = vec![0; n + 1];
    let mut pos = 0;
    for (i, a) in at.iter_mut().enumerate().take(n) {
        *a = pos;
        pos += if cut_fall(i) { 2 } else { 1 };
    }
    at[n] = pos;
    let cut = pos + 1;
    let mut out = Vec::with_capacity(cut);
    for (i, ins) in code.iter().enumerate() {
        let mut ins = ins.clone();
        if let Instr::Branch { target, .. } = &mut ins {
            *target = if back.contains(&(i, *target)) {
                cut
            } else {
                at[*target]
            };
        }
        out.push(ins);
        if cut_fall(i) {
            out.push(Instr::Branch {
                cond: None,
                target: cut,
            });
        }
    }
    out.push(Instr::Assign {
        dst: done,
        expr: Expr::int(1),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jump(cond: bool, target: usize) -> Instr {
        Instr::Branch {
            cond: cond.then_some(Expr::Reg(0)),
            target,
        }
    }

    fn nop() -> Instr {
        Instr::Assign {
            dst: 0,
            expr: Expr::Reg(0),
        }
    }

    #[test]
    fn a_jump_back_to_a_continuation_is_not_a_loop() {
        // 0: jump 3; 1: nop; 2: jump 5 (end); 3: nop; 4: jump 1 (back in
        // index order, but 1 is not on the path: the helper's return).
        let code = vec![jump(false, 3), nop(), jump(false, 5), nop(), jump(false, 1)];
        assert!(back_edges(&code).is_empty());
    }

    #[test]
    fn a_retry_loop_is_cut_past_the_done_write() {
        // 0: nop; 1: nop; 2: if r0 jump 0; end.
        let code = vec![nop(), nop(), jump(true, 0)];
        let back = back_edges(&code);
        assert_eq!(back.into_iter().collect::<Vec<_>>(), vec![(2, 0)]);
        let cut = cut_loops(&code, &back_edges(&code), 1);
        assert_eq!(cut.len(), 4);
        assert_eq!(cut[2], jump(true, 4));
        assert!(matches!(cut[3], Instr::Assign { dst: 1, .. }));
    }

    #[test]
    fn a_loop_closed_by_falling_through_gets_a_jump() {
        // A loop whose back edge is a fall-through: 0: jump 2; 1: nop
        // (falls into 2, on the path); 2: if r0 jump 4; 3: jump 1.
        let code = vec![jump(false, 2), nop(), jump(true, 4), jump(false, 1)];
        let back = back_edges(&code);
        assert_eq!(back.into_iter().collect::<Vec<_>>(), vec![(1, 2)]);
        let cut = cut_loops(&code, &back_edges(&code), 1);
        // 0: jump 3; 1: nop; 2: jump cut; 3: if r0 jump end; 4: jump 1;
        // 5: done; cut = 6.
        assert_eq!(cut[0], jump(false, 3));
        assert_eq!(cut[2], jump(false, 6));
        assert_eq!(cut[3], jump(true, 5));
        assert_eq!(cut[4], jump(false, 1));
    }
}
