//! `atomlab verify --litmus DIR`: each variant's client written as a
//! herd7 litmus test in the file's own assembly (AArch64 or RISCV), so
//! that a second checker can judge it: herd7 (Alglave, Maranget and
//! Tautschnig, "Herding Cats", TOPLAS 2014; the herdtools7 manual for the
//! format) with its own aarch64.cat or riscv.cat, and `atomlab check`.
//! The printing is atomlab-litmus's ([`atomlab_litmus::print`]); this
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
    let build = |lse| client::build(&plugin.file, v, kind, opts.threads, opts.rounds, lse);
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
        let n = th.code.len();
        let back = th
            .code
            .iter()
            .enumerate()
            .any(|(i, ins)| matches!(ins, Instr::Branch { target, .. } if *target <= i));
        if !back {
            continue;
        }
        for (i, ins) in th.code.iter_mut().enumerate() {
            if let Instr::Branch { target, .. } = ins {
                if *target <= i {
                    // Past the `done` write: the execution is filtered.
                    *target = n + 1;
                }
            }
        }
        th.regs.push("%done".into());
        let done = th.regs.len() - 1;
        th.code.push(Instr::Assign {
            dst: done,
            expr: Expr::int(1),
        });
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
