//! What both printers share: the error, a thread's printed code and the
//! context it is printed in, the labels and constant locations of lowered
//! code, and the file's frame around the threads' columns ([`assemble`]:
//! header, doc string, initial state, `filter` and final condition).

use std::collections::BTreeMap;

use crate::ast::*;

/// Why a test cannot be printed in its dialect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrintError {
    /// The test's name.
    pub test: String,
    /// The dialect.
    pub arch: &'static str,
    /// The thread.
    pub thread: usize,
    /// The index of the instruction in the thread's lowered code.
    pub index: usize,
    /// The instruction, as the debugger prints it.
    pub instr: String,
    /// Why.
    pub message: String,
}

impl std::fmt::Display for PrintError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.instr.is_empty() {
            write!(
                f,
                "{}: cannot print {}: {}",
                self.test, self.arch, self.message
            )
        } else {
            write!(
                f,
                "{}: cannot print P{} instruction {} ({}) as {}: {}",
                self.test, self.thread, self.index, self.instr, self.arch, self.message
            )
        }
    }
}

impl std::error::Error for PrintError {}

/// A name herd7 reads as an identifier: letters, digits and `_`, not
/// starting with a digit (`lock+4` becomes `lock_4`).
pub(crate) fn identifier(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.insert(0, 'v');
    }
    out
}

/// Location names as identifiers, distinct.
pub(crate) fn location_names(test: &Test) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for l in &test.locations {
        let base = identifier(l);
        let mut n = base.clone();
        let mut k = 1;
        while names.contains(&n) {
            n = format!("{base}_{k}");
            k += 1;
        }
        names.push(n);
    }
    names
}

/// One thread's printed code and what it needs.
pub(crate) struct Printed {
    /// The instruction lines (labels as `L0_3:` lines).
    pub lines: Vec<String>,
    /// Initial register values, by printed register name.
    pub init: Vec<(String, Value)>,
    /// The printed name of each of the thread's registers.
    pub names: Vec<String>,
}

/// What a dialect's thread printer gets: the thread, and a way to fail.
pub(crate) struct Ctx<'t> {
    pub test: &'t Test,
    pub thread: usize,
    pub index: usize,
    pub arch: &'static str,
}

impl Ctx<'_> {
    /// The error for the current instruction.
    pub(crate) fn err(&self, message: impl Into<String>) -> PrintError {
        let code = &self.test.threads[self.thread].code;
        PrintError {
            test: self.test.name.clone(),
            arch: self.arch,
            thread: self.thread,
            index: self.index,
            instr: code
                .get(self.index)
                .map_or_else(String::new, |i| format!("{i:?}")),
            message: message.into(),
        }
    }
}

/// The locations a thread's code names as constants, in order of first use.
pub(crate) fn constant_locations(code: &[Instr]) -> Vec<LocId> {
    fn walk(e: &Expr, out: &mut Vec<LocId>) {
        match e {
            Expr::Const(Value::Loc(l)) => {
                if !out.contains(l) {
                    out.push(*l)
                }
            }
            Expr::Const(_) | Expr::Reg(_) => {}
            Expr::Not(a) => walk(a, out),
            Expr::Bin(_, a, b) => {
                walk(a, out);
                walk(b, out);
            }
        }
    }
    let mut out = Vec::new();
    for i in code {
        match i {
            Instr::Load { addr, .. } | Instr::SyncSrcu { addr } => walk(addr, &mut out),
            Instr::Store { addr, value, .. } | Instr::StoreExclusive { addr, value, .. } => {
                walk(addr, &mut out);
                walk(value, &mut out);
            }
            Instr::Rmw { addr, operand, .. } => {
                walk(addr, &mut out);
                walk(operand, &mut out);
            }
            Instr::Cas {
                addr,
                expected,
                desired,
                ..
            } => {
                walk(addr, &mut out);
                if let CasExpected::Value(e) | CasExpected::Mem(e) = expected {
                    walk(e, &mut out);
                }
                walk(desired, &mut out);
            }
            Instr::Assign { expr, .. } => walk(expr, &mut out),
            Instr::Select { cond, a, b, .. } => {
                walk(cond, &mut out);
                walk(a, &mut out);
                walk(b, &mut out);
            }
            Instr::Branch { cond: Some(c), .. } => walk(c, &mut out),
            Instr::Branch { cond: None, .. } | Instr::Fence(_) => {}
        }
    }
    out
}

/// The branch targets of a thread's code, each with its label
/// (`L{thread}_{index}`: herd7 wants labels distinct across threads).
pub(crate) fn labels(thread: usize, code: &[Instr]) -> BTreeMap<usize, String> {
    code.iter()
        .filter_map(|i| match i {
            Instr::Branch { target, .. } => Some((*target, format!("L{thread}_{target}"))),
            _ => None,
        })
        .collect()
}

/// The whole file from the threads' printed code.
pub(crate) fn assemble(test: &Test, threads: Vec<Printed>) -> String {
    let locs = location_names(test);
    // The condition, filter and values in the printed names: the test
    // with its registers and locations renamed prints them as herd7 does.
    let mut named = test.clone();
    named.locations = locs.clone();
    for (t, p) in named.threads.iter_mut().zip(&threads) {
        t.regs = p.names.clone();
    }
    let value = |v: Value| named.value_name(v);
    let mut out = String::new();
    out.push_str(&format!(
        "{} {}\n",
        test.arch.name(),
        identifier(&test.name)
    ));
    out.push_str(&format!(
        "\"{}\"\n",
        test.file.replace(['"', '\n'], " ").trim()
    ));
    let mut init: Vec<String> = Vec::new();
    let initial: BTreeMap<LocId, Value> = test.init.iter().copied().collect();
    for (l, name) in locs.iter().enumerate() {
        init.push(format!(
            "{name}={}",
            value(initial.get(&l).copied().unwrap_or(Value::Int(0)))
        ));
    }
    for (t, p) in threads.iter().enumerate() {
        for (r, v) in &p.init {
            init.push(format!("{t}:{r}={}", value(*v)));
        }
    }
    out.push_str("{\n");
    for i in &init {
        out.push_str(&format!(" {i};\n"));
    }
    out.push_str("}\n");
    let rows = threads.iter().map(|p| p.lines.len()).max().unwrap_or(0);
    let mut cols: Vec<Vec<String>> = threads
        .iter()
        .enumerate()
        .map(|(t, p)| {
            let mut c = vec![format!("P{t}")];
            c.extend(p.lines.iter().cloned());
            c.resize(rows + 1, String::new());
            c
        })
        .collect();
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| c.iter().map(String::len).max().unwrap_or(0))
        .collect();
    for row in 0..=rows {
        let cells: Vec<String> = cols
            .iter_mut()
            .zip(&widths)
            .map(|(c, w)| format!(" {:w$} ", std::mem::take(&mut c[row]), w = *w))
            .collect();
        out.push_str(&cells.join("|"));
        out.push_str(";\n");
    }
    if let Some(f) = &test.filter {
        out.push_str(&format!("filter {}\n", named.prop_text(f)));
    }
    out.push_str(&named.condition_text());
    out.push('\n');
    out
}
