//! The parts of a litmus file every architecture shares: the first line,
//! header keys, the initial state, `locations`, `filter` and the final
//! condition. Thread code is handed to its dialect (`dialect/`).
//!
//! Follows the format herd7 reads (herdtools7 `litmus/` and `herd/`
//! documentation: "A litmus test … consists of a header, an initial state, the
//! code of threads and a final condition").

use crate::ast::*;
use crate::builder::{reg_of, Builder};
use crate::dialect::c::TYPE_WORDS;
use crate::dialect::{self, syntax::Threads};
use crate::scan::{blank_comments, too_deep, Cursor, PResult, MAX_DEPTH};
use crate::ParseError;

/// The canonical name of a register as written in a condition or initial
/// state, or `None` when it is not one of the architecture's registers
/// (its dialect's `canonical_reg`).
pub(crate) fn canonical_reg(arch: Arch, name: &str) -> Option<String> {
    (dialect::of(arch).canonical_reg)(name)
}

/// Parses a litmus test. `file` is used in error messages only.
pub fn parse(file: &str, src: &str) -> Result<Test, ParseError> {
    let text = match blank_comments(src) {
        Ok(t) => t,
        Err(pos) => {
            return Err(Cursor::new(file, src).err_at(pos, "unterminated comment '(*'"));
        }
    };
    let text = if text.trim_start().starts_with("C")
        && text.trim_start()[1..].starts_with(char::is_whitespace)
    {
        match crate::scan::blank_c_comments(&text) {
            Ok(t) => t,
            Err(pos) => {
                return Err(Cursor::new(file, src).err_at(pos, "unterminated comment '/*'"));
            }
        }
    } else {
        text
    };
    let mut c = Cursor::new(file, &text);
    c.ws();
    let arch_pos = c.pos;
    let dialect = match c.ident() {
        Some(name) => dialect::by_name(name).ok_or_else(|| {
            c.err_at(
                arch_pos,
                format!(
                    "unsupported architecture '{name}' (supported: {})",
                    dialect::names()
                ),
            )
        })?,
        None => {
            return Err(c.err(format!(
                "expected an architecture name ({}) at the start of the test",
                dialect::names()
            )))
        }
    };
    let arch = dialect.arch;
    c.ws_inline();
    let line_end = c.rest().find('\n').map(|i| c.pos + i).unwrap_or(c.end);
    let name = c.src[c.pos..line_end].trim().to_string();
    if name.is_empty() {
        return Err(c.err("expected the test's name after the architecture"));
    }
    c.pos = line_end;
    let mut b = Builder {
        arch,
        locations: Vec::new(),
        threads: Vec::new(),
        sizes: Vec::new(),
        init_regs: Vec::new(),
    };
    // Header: a doc string and `key=value` lines, up to the initial state.
    loop {
        c.ws();
        if c.at_end() {
            return Err(c.err("expected the initial state '{ … }'"));
        }
        if c.rest().starts_with('{') {
            break;
        }
        if c.rest().starts_with('"') {
            let start = c.pos;
            c.bump();
            match c.rest().find('"') {
                Some(i) => c.pos += i + 1,
                None => return Err(c.err_at(start, "unterminated string in the header")),
            }
            continue;
        }
        let line_end = c.rest().find('\n').map(|i| c.pos + i).unwrap_or(c.end);
        let line = &c.src[c.pos..line_end];
        // A second `C name` line (some kernel tests carry their old name
        // too): herd7's splitter skips header text that is not `key=value`
        // and keeps the first name; only this form is taken here, so that
        // stray text still gets an error.
        if repeated_header(line, arch) {
            c.pos = line_end;
            continue;
        }
        if !line.contains('=') {
            return Err(c.err(format!(
                "expected 'key=value' or the initial state '{{', found {}",
                c.found()
            )));
        }
        c.pos = line_end;
    }
    // Initial state.
    let open = c.pos;
    let close = match c.rest().find('}') {
        Some(i) => c.pos + i,
        None => return Err(c.err_at(open, "unterminated initial state: no '}'")),
    };
    let mut init_regs = Vec::new();
    let mut init_mem = Vec::new();
    parse_init(
        &c.sub(open + 1, close),
        &mut b,
        &mut init_regs,
        &mut init_mem,
    )?;
    c.pos = close + 1;
    b.init_regs = init_regs
        .iter()
        .map(|(t, name, ..)| (*t, name.clone()))
        .collect();
    // Threads.
    let tail_start = match dialect.threads {
        Threads::Own(read) => read(&mut c, &mut b)?,
        Threads::Table(lower) => dialect::table::parse_threads(&mut c, &mut b, lower)?,
    };
    // After the threads, `(*` always opens a comment, as in herd7's
    // splitter (lib/splitter.mll, `inside_constr`): `(*Note: …*)` after the
    // final condition is a comment there, while inside C code `(*x` is a
    // dereference and stays (see `blank_comments`).
    let text = if text[tail_start..].contains("(*") {
        let tail = match crate::scan::blank_all_comments(&text[tail_start..]) {
            Ok(t) => t,
            Err(pos) => {
                return Err(c.err_at(tail_start + pos, "unterminated comment '(*'"));
            }
        };
        format!("{}{tail}", &text[..tail_start])
    } else {
        // No comment after the threads: the text as it is.
        text
    };
    let mut c = Cursor::new(file, &text);
    c.pos = tail_start;
    if b.threads.is_empty() {
        return Err(c.err("the test has no threads"));
    }
    let mut reg_init_pos: Vec<(usize, Reg, usize, String)> = Vec::new();
    for (t, name, written, v, pos) in init_regs {
        if t >= b.threads.len() {
            return Err(c.err_at(
                pos,
                format!("initial state names thread {t}, which does not exist"),
            ));
        }
        let th = &mut b.threads[t];
        let r = reg_of(th, &name);
        // One value per register: `run` loads a single value, and a second
        // one (or an alias such as eax for rax) would make what the checker
        // judges and what the harness loads differ.
        if let Some(first) = reg_init_pos.iter().find(|(x, y, _, _)| *x == t && *y == r) {
            let (line, col) = c.line_col(first.2);
            let alias = if first.3 == written {
                String::new()
            } else {
                format!(" ('{}' and '{written}' name the same register)", first.3)
            };
            return Err(c.err_at(
                pos,
                format!(
                    "register {t}:{name} is initialised twice in the initial state (first at {line}:{col}){alias}; give each register one value"
                ),
            ));
        }
        reg_init_pos.push((t, r, pos, written));
        th.init.push((r, v));
    }
    // Tail: locations, filter, condition.
    let mut observed = Vec::new();
    let mut filter = None;
    let condition;
    loop {
        c.ws();
        if c.eat_word("locations") {
            c.expect("[", "after 'locations'")?;
            loop {
                c.ws();
                if c.eat("]") {
                    break;
                }
                let v = parse_var(&mut c, &mut b, true)?;
                observed.push(v);
                c.ws();
                if !c.eat(";") && !c.rest().starts_with(']') {
                    return Err(c.err(format!(
                        "expected ';' or ']' in 'locations', found {}",
                        c.found()
                    )));
                }
            }
            continue;
        }
        if c.eat_word("filter") {
            filter = Some(parse_prop(&mut c, &mut b)?);
            continue;
        }
        let q = if c.eat("~exists") || c.eat_word("~ exists") {
            Quantifier::NotExists
        } else if c.eat_word("exists") {
            Quantifier::Exists
        } else if c.eat_word("forall") {
            Quantifier::Forall
        } else if c.at_end() {
            // No final condition: herd7 takes `forall (true)`, which every
            // execution satisfies (its log lists the final states anyway).
            condition = Condition {
                quantifier: Quantifier::Forall,
                prop: Prop::True,
            };
            break;
        } else {
            return Err(c.err(format!(
                "unsupported construct {} after the threads (expected 'locations', 'filter', 'exists', '~exists' or 'forall')",
                c.found()
            )));
        };
        let prop = parse_prop(&mut c, &mut b)?;
        condition = Condition {
            quantifier: q,
            prop,
        };
        c.eat(";");
        break;
    }
    c.ws();
    if !c.at_end() {
        return Err(c.err(format!(
            "unexpected {} after the final condition",
            c.found()
        )));
    }
    let init = init_mem;
    // A judged test is kept until its batch is printed: its code without
    // the room its vector grew into (a third of what a small kernel test
    // kept, and each page the batch grows into is a page fault).
    let mut threads = b.threads;
    for t in &mut threads {
        t.code.shrink_to_fit();
    }
    Ok(Test {
        file: file.to_string(),
        arch,
        name,
        locations: b.locations,
        init,
        threads,
        observed,
        filter,
        condition,
    })
}

/// Whether a header line repeats the first line's form, `ARCH name` (the
/// same architecture word, then a name and nothing else).
fn repeated_header(line: &str, arch: Arch) -> bool {
    let mut words = line.split_whitespace();
    let word = words.next();
    word == Some(arch.name())
        && words.next().is_some()
        && words.next().is_none()
        && !line.contains('=')
}

/// Initial register values as written: thread, canonical name, the name as
/// written, value, position.
type InitRegs = Vec<(usize, String, String, Value, usize)>;

fn parse_init(
    c: &Cursor<'_>,
    b: &mut Builder,
    regs: &mut InitRegs,
    mem: &mut Vec<(LocId, Value)>,
) -> PResult<()> {
    let mut c = c.clone();
    let mut mem_pos: Vec<(LocId, usize)> = Vec::new();
    loop {
        c.ws();
        if c.at_end() {
            return Ok(());
        }
        if c.eat(";") {
            continue;
        }
        let item_pos = c.pos;
        // Optional type words.
        let mut typed = false;
        loop {
            let save = c.pos;
            match c.ident() {
                Some(w) if TYPE_WORDS.contains(&w) => typed = true,
                Some(_) => {
                    c.pos = save;
                    break;
                }
                None => break,
            }
        }
        let pointer = c.eat("*");
        let _ = typed;
        // The left-hand side.
        c.ws();
        let lhs_pos = c.pos;
        enum Lhs {
            /// Thread, canonical name, the name as written.
            Reg(usize, String, String),
            Loc(LocId),
        }
        let lhs = if let Some(t) = thread_prefix(&mut c) {
            let name_pos = c.pos;
            let name = c
                .ident()
                .ok_or_else(|| c.err("expected a register name after 'N:'"))?;
            let canon = canonical_reg(b.arch, name).ok_or_else(|| {
                c.err_at(
                    name_pos,
                    format!("'{name}' is not a {} register", b.arch.name()),
                )
            })?;
            Lhs::Reg(t, canon, name.to_string())
        } else if c.eat("[") {
            let npos = c.pos;
            let name = c.ident().ok_or_else(|| c.err("expected a location name"))?;
            if c.rest().starts_with('(') {
                return Err(c.err_at(npos, format!("unsupported initial-state construct '{name}(…)' (page tables and physical addresses)")));
            }
            c.expect("]", "after a location")?;
            Lhs::Loc(b.loc(name))
        } else {
            match c.ident() {
                Some(name) => {
                    c.ws_inline();
                    if c.rest().starts_with('[') {
                        return Err(c.err_at(
                            lhs_pos,
                            format!("unsupported initial-state construct: array '{name}[…]'"),
                        ));
                    }
                    if c.rest()
                        .starts_with(|ch: char| ch.is_ascii_alphanumeric() || ch == '_')
                    {
                        return Err(c.err_at(
                            lhs_pos,
                            format!("unsupported type '{name}' in the initial state"),
                        ));
                    }
                    Lhs::Loc(b.loc(name))
                }
                None => {
                    return Err(c.err_at(
                        lhs_pos,
                        format!("expected an initial-state item, found {}", c.found()),
                    ))
                }
            }
        };
        let value = if c.eat("=") {
            parse_value(&mut c, b)?
        } else {
            Value::Int(0)
        };
        let _ = pointer;
        match lhs {
            Lhs::Reg(t, name, written) => regs.push((t, name, written, value, item_pos)),
            Lhs::Loc(l) => {
                // One value per location, as for registers.
                if let Some((_, first)) = mem_pos.iter().find(|(m, _)| *m == l) {
                    let (line, col) = c.line_col(*first);
                    return Err(c.err_at(
                        item_pos,
                        format!(
                            "location '{}' is initialised twice in the initial state (first at {line}:{col}); give each location one value",
                            b.locations[l]
                        ),
                    ));
                }
                mem_pos.push((l, item_pos));
                mem.push((l, value))
            }
        }
        c.ws();
        if !c.at_end() && !c.eat(";") {
            // `{ x = 1 }` has no separator; anything else is an error.
            return Err(c.err(format!(
                "expected ';' in the initial state, found {}",
                c.found()
            )));
        }
    }
}

/// `N:` before a register name.
fn thread_prefix(c: &mut Cursor<'_>) -> Option<usize> {
    let save = c.pos;
    c.ws();
    let r = c.rest();
    let len = r.chars().take_while(|ch| ch.is_ascii_digit()).count();
    if len > 0 {
        let n: usize = r[..len].parse().ok()?;
        c.pos += len;
        c.ws_inline();
        if c.eat(":") {
            return Some(n);
        }
    }
    c.pos = save;
    None
}

fn parse_value(c: &mut Cursor<'_>, b: &mut Builder) -> PResult<Value> {
    c.ws();
    if let Some(v) = c.number() {
        return Ok(Value::Int(v));
    }
    let pos = c.pos;
    if c.eat("&") {
        let name = c
            .ident()
            .ok_or_else(|| c.err("expected a location after '&'"))?;
        return Ok(Value::Loc(b.loc(name)));
    }
    if c.rest().starts_with('{') {
        return Err(c.err_at(pos, "unsupported initial value: arrays ('{…}')"));
    }
    match c.ident() {
        Some(name)
            if c.rest().starts_with(':') || c.rest().starts_with('(') && name != "ATOMIC_INIT" =>
        {
            Err(c.err_at(
                pos,
                format!("unsupported initial value '{name}…' (instructions, page-table entries)"),
            ))
        }
        Some("ATOMIC_INIT") => {
            c.expect("(", "after ATOMIC_INIT")?;
            let v = c
                .number()
                .ok_or_else(|| c.err("expected a number in ATOMIC_INIT"))?;
            c.expect(")", "after ATOMIC_INIT's value")?;
            Ok(Value::Int(v))
        }
        Some(name) => Ok(Value::Loc(b.loc(name))),
        None => Err(c.err_at(pos, format!("expected a value, found {}", c.found()))),
    }
}

/// A state variable: `N:reg`, `[loc]` or `loc`. In `locations`, a register
/// the thread does not have, or a location no thread uses, is taken (herd7
/// lists it with value 0); in a condition it is refused, as a typo that
/// would otherwise hold silently.
fn parse_var(c: &mut Cursor<'_>, b: &mut Builder, in_locations: bool) -> PResult<StateVar> {
    c.ws();
    let pos = c.pos;
    if let Some(t) = thread_prefix(c) {
        let name_pos = c.pos;
        let name = c
            .ident()
            .ok_or_else(|| c.err("expected a register name after 'N:'"))?;
        let canon = canonical_reg(b.arch, name).ok_or_else(|| {
            c.err_at(
                name_pos,
                format!("'{name}' is not a {} register", b.arch.name()),
            )
        })?;
        if t >= b.threads.len() {
            return Err(c.err_at(pos, format!("thread {t} does not exist")));
        }
        let th = &mut b.threads[t];
        if b.arch == Arch::C && th.reg(&canon).is_none() && !in_locations {
            return Err(c.err_at(name_pos, format!("thread {t} has no register '{name}'")));
        }
        let reg = reg_of(th, &canon);
        return Ok(StateVar::Reg { thread: t, reg });
    }
    if c.eat("[") {
        let name = c.ident().ok_or_else(|| c.err("expected a location name"))?;
        c.expect("]", "after a location")?;
        return Ok(StateVar::Loc(b.loc(name)));
    }
    match c.ident() {
        Some(name) => {
            if !in_locations && !b.locations.iter().any(|l| l == name) {
                return Err(c.err_at(pos, format!("unknown location '{name}' in the condition")));
            }
            Ok(StateVar::Loc(b.loc(name)))
        }
        None => Err(c.err_at(
            pos,
            format!("expected 'N:reg', '[loc]' or 'loc', found {}", c.found()),
        )),
    }
}

/// A condition: prop := conj (('\/' | '=>') conj)*, conj := unary
/// ('/\' unary)*, nested at most [`MAX_DEPTH`] deep so that no later walk
/// of the tree overflows. Parentheses, negations and implications nest
/// (`a => b` is `~a \/ b`, wrapping what came before); a chain of `\/` or
/// of `/\` does not: its terms sit side by side in one [`Prop::Or`] or
/// [`Prop::And`], read in a loop, one level however long.
fn parse_prop(c: &mut Cursor<'_>, b: &mut Builder) -> PResult<Prop> {
    prop(c, b, &mut 0)
}

/// `p` with `q` added to its chain of `\/` (`or`) or `/\` terms: pushed
/// onto `p` if it is such a chain, else a new chain of the two.
fn chained(p: Prop, q: Prop, or: bool) -> Prop {
    let chain: fn(Vec<Prop>) -> Prop = if or { Prop::Or } else { Prop::And };
    match (p, or) {
        (Prop::Or(mut ps), true) | (Prop::And(mut ps), false) => {
            ps.push(q);
            chain(ps)
        }
        (p, _) => chain(vec![p, q]),
    }
}

/// One level deeper, or an error at the cursor past [`MAX_DEPTH`].
fn deeper(c: &Cursor<'_>, depth: &mut usize) -> PResult<()> {
    *depth += 1;
    if *depth > MAX_DEPTH {
        return Err(c.err(too_deep()));
    }
    Ok(())
}

fn prop(c: &mut Cursor<'_>, b: &mut Builder, depth: &mut usize) -> PResult<Prop> {
    let base = *depth;
    deeper(c, depth)?;
    let mut p = conj(c, b, depth)?;
    let r = loop {
        if c.eat("\\/") {
            let q = conj(c, b, depth)?;
            p = chained(p, q, true);
        } else if c.eat("=>") {
            deeper(c, depth)?;
            let q = conj(c, b, depth)?;
            p = Prop::Or(vec![Prop::Not(Box::new(p)), q]);
        } else {
            break Ok(p);
        }
    };
    *depth = base;
    r
}

fn conj(c: &mut Cursor<'_>, b: &mut Builder, depth: &mut usize) -> PResult<Prop> {
    let base = *depth;
    deeper(c, depth)?;
    let mut p = unary(c, b, depth)?;
    while c.eat("/\\") {
        let q = unary(c, b, depth)?;
        p = chained(p, q, false);
    }
    *depth = base;
    Ok(p)
}

fn unary(c: &mut Cursor<'_>, b: &mut Builder, depth: &mut usize) -> PResult<Prop> {
    c.ws();
    if c.eat("~") || c.eat_word("not") {
        let base = *depth;
        deeper(c, depth)?;
        let p = Prop::Not(Box::new(unary(c, b, depth)?));
        *depth = base;
        return Ok(p);
    }
    if c.eat("(") {
        let p = prop(c, b, depth)?;
        c.expect(")", "to close '('")?;
        return Ok(p);
    }
    if c.eat_word("true") {
        return Ok(Prop::True);
    }
    if c.eat_word("false") {
        return Ok(Prop::False);
    }
    let var = parse_var(c, b, false)?;
    c.ws();
    let op = if c.eat("!=") {
        CmpOp::Ne
    } else if c.eat("==") || c.eat("=") {
        CmpOp::Eq
    } else {
        return Err(c.err(format!(
            "expected '=' or '!=' in the condition, found {}",
            c.found()
        )));
    };
    // `0:r10=1:r10`: two registers' final values compared (herd7 accepts
    // a thread-qualified register on the right too).
    let save = c.pos;
    if thread_prefix(c).is_some() {
        if op == CmpOp::Ne {
            return Err(c.err_at(
                save,
                "two registers are compared with '=' only (as herd7 does): write ~(a=b) for 'differ'",
            ));
        }
        c.pos = save;
        let other = parse_var(c, b, false)?;
        return Ok(Prop::Same(var, op, other));
    }
    let v = parse_value(c, b)?;
    Ok(Prop::Atom(var, op, v))
}
