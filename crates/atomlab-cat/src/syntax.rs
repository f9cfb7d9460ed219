//! The cat language's syntax: a lexer and a recursive-descent parser into
//! [`Instr`] and [`Expr`] trees carrying file:line:column positions.
//!
//! Follows the grammar of herd7's manual ("herd7: the cat language",
//! herdtools7 `doc/herd.tex`, and `lib/modelParser.mly` for precedence):
//! from loosest to tightest, `|`, `++`, `;`, `\`, `&`, binary `*`
//! (cartesian product), prefix `~`, postfix `^-1` `+` `*` `?`, then
//! application by juxtaposition (`f x`, `f(x, y)`).

use crate::CatError;

/// A position in a cat file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    /// Index of the file in the loader's file table.
    pub file: usize,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub col: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    Str(String),
    Tag(String),
    Zero,
    LParen,
    RParen,
    LBrack,
    RBrack,
    LBrace,
    RBrace,
    Comma,
    Bar,
    BarBar,
    Amp,
    AmpAmp,
    Backslash,
    Semi,
    Star,
    Plus,
    PlusPlus,
    Question,
    Tilde,
    Inv,
    Eq,
    Arrow,
    Eof,
}

impl Tok {
    fn show(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Tag(s) => format!("'{s}"),
            Tok::Zero => "`0`".into(),
            Tok::Eof => "end of file".into(),
            t => format!(
                "`{}`",
                match t {
                    Tok::LParen => "(",
                    Tok::RParen => ")",
                    Tok::LBrack => "[",
                    Tok::RBrack => "]",
                    Tok::LBrace => "{",
                    Tok::RBrace => "}",
                    Tok::Comma => ",",
                    Tok::Bar => "|",
                    Tok::BarBar => "||",
                    Tok::Amp => "&",
                    Tok::AmpAmp => "&&",
                    Tok::Backslash => "\\",
                    Tok::Semi => ";",
                    Tok::Star => "*",
                    Tok::Plus => "+",
                    Tok::PlusPlus => "++",
                    Tok::Question => "?",
                    Tok::Tilde => "~",
                    Tok::Inv => "^-1",
                    Tok::Eq => "=",
                    Tok::Arrow => "->",
                    _ => "?",
                }
            ),
        }
    }
}

const KEYWORDS: &[&str] = &[
    "let",
    "rec",
    "and",
    "in",
    "include",
    "acyclic",
    "irreflexive",
    "empty",
    "as",
    "flag",
    "show",
    "unshow",
    "undefined_unless",
    "procedure",
    "call",
    "end",
    "with",
    "from",
    "if",
    "then",
    "else",
    "match",
    "fun",
    "try",
    "enum",
    "catdep",
    "not",
    "assert",
    "instructions",
    "forall",
    "do",
];

fn is_keyword(s: &str) -> bool {
    KEYWORDS.contains(&s)
}

fn ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'
}

/// Splits `text` into tokens with their positions.
pub(crate) fn lex(file: usize, name: &str, text: &str) -> Result<Vec<(Tok, Pos)>, CatError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let err = |line, col, msg: String| CatError::at(name, line, col, msg);
    macro_rules! bump {
        () => {{
            if chars[i] == '\n' {
                line += 1;
                col = 1;
            } else {
                col += 1;
            }
            i += 1;
        }};
    }
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos { file, line, col };
        if c.is_whitespace() {
            bump!();
            continue;
        }
        // Comments nest: (* ... (* ... *) ... *).
        if c == '(' && chars.get(i + 1) == Some(&'*') {
            let (sl, sc) = (line, col);
            let mut depth = 0usize;
            loop {
                if i >= chars.len() {
                    return Err(err(sl, sc, "unterminated comment".into()));
                }
                if chars[i] == '(' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    bump!();
                    bump!();
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&')') {
                    depth -= 1;
                    bump!();
                    bump!();
                    if depth == 0 {
                        break;
                    }
                } else {
                    bump!();
                }
            }
            continue;
        }
        // herd's lexer also reads `#` and `//` (the kernel's SPDX lines)
        // to the end of the line as a comment.
        if c == '#' || (c == '/' && chars.get(i + 1) == Some(&'/')) {
            while i < chars.len() && chars[i] != '\n' {
                bump!();
            }
            continue;
        }
        if ident_start(c) {
            let mut s = String::new();
            while i < chars.len() && ident_char(chars[i]) {
                s.push(chars[i]);
                bump!();
            }
            out.push((Tok::Ident(s), pos));
            continue;
        }
        if c == '\'' {
            bump!();
            let mut s = String::new();
            while i < chars.len() && ident_char(chars[i]) {
                s.push(chars[i]);
                bump!();
            }
            if s.is_empty() {
                return Err(err(
                    pos.line,
                    pos.col,
                    "a tag needs a name after `'`".into(),
                ));
            }
            out.push((Tok::Tag(s), pos));
            continue;
        }
        if c == '"' {
            bump!();
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None | Some('\n') => {
                        return Err(err(pos.line, pos.col, "unterminated string".into()))
                    }
                    Some('"') => {
                        bump!();
                        break;
                    }
                    Some(&ch) => {
                        s.push(ch);
                        bump!();
                    }
                }
            }
            out.push((Tok::Str(s), pos));
            continue;
        }
        let next = chars.get(i + 1).copied();
        let (tok, len) = match (c, next) {
            ('0', _) => (Tok::Zero, 1),
            ('(', _) => (Tok::LParen, 1),
            (')', _) => (Tok::RParen, 1),
            ('[', _) => (Tok::LBrack, 1),
            (']', _) => (Tok::RBrack, 1),
            ('{', _) => (Tok::LBrace, 1),
            ('}', _) => (Tok::RBrace, 1),
            (',', _) => (Tok::Comma, 1),
            ('|', Some('|')) => (Tok::BarBar, 2),
            ('|', _) => (Tok::Bar, 1),
            ('&', Some('&')) => (Tok::AmpAmp, 2),
            ('&', _) => (Tok::Amp, 1),
            ('\\', _) => (Tok::Backslash, 1),
            (';', _) => (Tok::Semi, 1),
            ('*', _) => (Tok::Star, 1),
            ('+', Some('+')) => (Tok::PlusPlus, 2),
            ('+', _) => (Tok::Plus, 1),
            ('?', _) => (Tok::Question, 1),
            ('~', _) => (Tok::Tilde, 1),
            ('=', _) => (Tok::Eq, 1),
            ('-', Some('>')) => (Tok::Arrow, 2),
            ('^', Some('-')) if chars.get(i + 2) == Some(&'1') => (Tok::Inv, 3),
            _ => {
                return Err(err(
                    pos.line,
                    pos.col,
                    format!("unexpected character {c:?}"),
                ))
            }
        };
        for _ in 0..len {
            bump!();
        }
        out.push((tok, pos));
    }
    out.push((Tok::Eof, Pos { file, line, col }));
    Ok(out)
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    /// `|`
    Union,
    /// `&`
    Inter,
    /// `\`
    Diff,
    /// `;`
    Seq,
    /// `*` between sets
    Cross,
    /// `++`: add an element to a set of values
    Add,
}

/// A postfix or prefix operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    /// `~`
    Compl,
    /// `^-1`
    Inv,
    /// `+`
    Plus,
    /// `*`
    Star,
    /// `?`
    Opt,
    /// `[S]`
    Id,
}

/// A binding pattern: a name or a tuple of names.
#[derive(Debug, Clone, PartialEq)]
pub enum Pat {
    /// `x`
    Name(String),
    /// `(x, y)`
    Tuple(Vec<String>),
}

/// One `name = e` (or `name(pat) = e`, `name pat = e`) of a `let`.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    /// The bound name.
    pub name: String,
    /// Parameters when the binding defines a function.
    pub params: Option<Pat>,
    /// The body.
    pub body: Expr,
    /// Where the name is.
    pub pos: Pos,
}

/// A `match` arm.
#[derive(Debug, Clone, PartialEq)]
pub enum Arm {
    /// `{} -> e`
    Empty(Expr),
    /// `x ++ s -> e`
    Cons(String, String, Expr),
}

/// A variant condition of `if`.
#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    /// `"name"`: a variant given to herd with `-variant`.
    Variant(String),
    /// `not c`
    Not(Box<Cond>),
    /// `c && c`
    And(Box<Cond>, Box<Cond>),
    /// `c || c`
    Or(Box<Cond>, Box<Cond>),
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it starts.
    pub pos: Pos,
}

/// The expression forms.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A name.
    Var(String),
    /// `0`: the empty relation.
    Zero,
    /// `_`: every event.
    Universe,
    /// `'tag`
    Tag(String),
    /// `{e, …}`
    Set(Vec<Expr>),
    /// `(e, …)` with at least two members.
    Tuple(Vec<Expr>),
    /// A binary operator.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// A unary operator.
    Un(UnOp, Box<Expr>),
    /// `f e`
    App(Box<Expr>, Box<Expr>),
    /// `let [rec] … in e`
    Let(bool, Vec<Binding>, Box<Expr>),
    /// `fun pat -> e`
    Fun(Pat, Box<Expr>),
    /// `match e with … end`
    Match(Box<Expr>, Vec<Arm>),
    /// `try e with e`
    Try(Box<Expr>, Box<Expr>),
    /// `if c then e else e`
    If(Cond, Box<Expr>, Box<Expr>),
}

/// The kind of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    /// `acyclic`
    Acyclic,
    /// `irreflexive`
    Irreflexive,
    /// `empty`
    Empty,
}

/// What a failing check does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Forbids the execution.
    Forbid,
    /// `undefined_unless`: the execution has undefined behaviour (herd's Undef).
    Undefined,
    /// `flag`: raised (reported) when the check holds; the execution stays allowed.
    Flag,
    /// `assert`: herd stops when it fails; atomlab accepts only asserts
    /// that hold whatever the execution.
    Assert,
}

/// An instruction of a cat file.
#[derive(Debug, Clone, PartialEq)]
pub struct Instr {
    /// What it is.
    pub kind: InstrKind,
    /// Where it starts.
    pub pos: Pos,
}

/// The instruction forms.
#[derive(Debug, Clone, PartialEq)]
pub enum InstrKind {
    /// `let [rec] b and b …`
    Let(bool, Vec<Binding>),
    /// `include "file"`
    Include(String),
    /// `[flag|undefined_unless] [~]check e [as name]`
    Check {
        /// What fails does.
        level: Level,
        /// The property.
        kind: CheckKind,
        /// `~acyclic` and friends.
        negated: bool,
        /// The checked expression.
        expr: Expr,
        /// The `as` name.
        name: Option<String>,
    },
    /// `show`/`unshow`: only for pictures, ignored.
    Show,
    /// `procedure name(pat) = instrs end`
    Procedure(String, Pat, Vec<Instr>),
    /// `call name(args) [as name]`
    Call(String, Expr),
    /// `enum name = 'a || 'b`
    Enum(String, Vec<String>),
    /// `with x from e`
    With(String, Expr),
    /// `if cond instrs [else instrs] end`
    If(Cond, Vec<Instr>, Vec<Instr>),
    /// `catdep`: the model computes dependencies itself (nothing to do).
    Catdep,
    /// `instructions R[Accesses]` (bell files): the tags of the `enum`s
    /// named that events of a class (`R`, `W`, `F`, `RMW`, …) may carry.
    Instructions(String, Vec<String>),
}

/// How deep expressions may nest before the parser refuses (no stack overflow on hostile input).
const MAX_DEPTH: usize = 200;

pub(crate) struct Parser<'a> {
    toks: Vec<(Tok, Pos)>,
    i: usize,
    name: &'a str,
    depth: usize,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(toks: Vec<(Tok, Pos)>, name: &'a str) -> Self {
        Parser {
            toks,
            i: 0,
            name,
            depth: 0,
        }
    }

    fn peek(&self) -> &Tok {
        &self.toks[self.i.min(self.toks.len() - 1)].0
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].0
    }

    fn pos(&self) -> Pos {
        self.toks[self.i.min(self.toks.len() - 1)].1
    }

    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        // Past the end, `peek` keeps answering Eof; `i` stays countable back.
        self.i += 1;
        t
    }

    fn err<T>(&self, msg: String) -> Result<T, CatError> {
        let p = self.pos();
        Err(CatError::at(self.name, p.line, p.col, msg))
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == kw)
    }

    fn expect_kw(&mut self, kw: &str) -> Result<(), CatError> {
        if self.is_kw(kw) {
            self.next();
            Ok(())
        } else {
            self.err(format!("expected `{kw}`, found {}", self.peek().show()))
        }
    }

    fn expect(&mut self, t: Tok) -> Result<(), CatError> {
        if *self.peek() == t {
            self.next();
            Ok(())
        } else {
            self.err(format!(
                "expected {}, found {}",
                t.show(),
                self.peek().show()
            ))
        }
    }

    fn name(&mut self) -> Result<String, CatError> {
        match self.peek().clone() {
            Tok::Ident(s) if !is_keyword(&s) => {
                self.next();
                Ok(s)
            }
            t => self.err(format!("expected a name, found {}", t.show())),
        }
    }

    /// A whole file: an optional title (names and strings), then instructions.
    pub(crate) fn file(&mut self) -> Result<Vec<Instr>, CatError> {
        while matches!(self.peek(), Tok::Str(_))
            || matches!(self.peek(), Tok::Ident(s) if !is_keyword(s))
        {
            self.next();
        }
        self.instrs(&[])
    }

    fn instrs(&mut self, stop: &[&str]) -> Result<Vec<Instr>, CatError> {
        let mut out = Vec::new();
        loop {
            if *self.peek() == Tok::Eof {
                if stop.is_empty() {
                    return Ok(out);
                }
                return self.err(format!("expected `{}`, found end of file", stop[0]));
            }
            if stop.iter().any(|k| self.is_kw(k)) {
                return Ok(out);
            }
            out.push(self.instr()?);
        }
    }

    fn instr(&mut self) -> Result<Instr, CatError> {
        let pos = self.pos();
        let kw = match self.peek() {
            Tok::Ident(s) if is_keyword(s) => s.clone(),
            Tok::Tilde => "~".into(),
            t => return self.err(format!("expected an instruction, found {}", t.show())),
        };
        let kind = match kw.as_str() {
            "let" => {
                self.next();
                let rec = self.is_kw("rec");
                if rec {
                    self.next();
                }
                let bs = self.bindings()?;
                if self.is_kw("in") {
                    return self.err("`let … in` is an expression, not an instruction".into());
                }
                InstrKind::Let(rec, bs)
            }
            "include" => {
                self.next();
                match self.next() {
                    Tok::Str(s) => InstrKind::Include(s),
                    t => {
                        self.i -= 1;
                        return self
                            .err(format!("expected a file name string, found {}", t.show()));
                    }
                }
            }
            "acyclic" | "irreflexive" | "empty" | "~" => self.check(Level::Forbid)?,
            "flag" => {
                self.next();
                self.check(Level::Flag)?
            }
            "undefined_unless" => {
                self.next();
                self.check(Level::Undefined)?
            }
            "assert" => {
                self.next();
                self.check(Level::Assert)?
            }
            "show" | "unshow" => {
                self.next();
                self.expr()?;
                while *self.peek() == Tok::Comma {
                    self.next();
                    self.expr()?;
                }
                if self.is_kw("as") {
                    self.next();
                    self.name()?;
                }
                InstrKind::Show
            }
            "procedure" => {
                self.next();
                let name = self.name()?;
                let pat = self.pattern()?;
                self.expect(Tok::Eq)?;
                let body = self.instrs(&["end"])?;
                self.expect_kw("end")?;
                InstrKind::Procedure(name, pat, body)
            }
            "call" => {
                self.next();
                let name = self.name()?;
                let arg = self.primary()?;
                if self.is_kw("as") {
                    self.next();
                    self.name()?;
                }
                InstrKind::Call(name, arg)
            }
            "enum" => {
                self.next();
                let name = self.name()?;
                self.expect(Tok::Eq)?;
                let mut tags = Vec::new();
                if *self.peek() == Tok::BarBar {
                    self.next();
                }
                loop {
                    match self.next() {
                        Tok::Tag(t) => tags.push(t),
                        t => {
                            self.i -= 1;
                            return self.err(format!("expected a tag, found {}", t.show()));
                        }
                    }
                    if *self.peek() != Tok::BarBar {
                        break;
                    }
                    self.next();
                }
                InstrKind::Enum(name, tags)
            }
            "with" => {
                self.next();
                let name = self.name()?;
                self.expect_kw("from")?;
                InstrKind::With(name, self.expr()?)
            }
            "if" => {
                self.next();
                let c = self.cond()?;
                let then = self.instrs(&["else", "end"])?;
                let els = if self.is_kw("else") {
                    self.next();
                    self.instrs(&["end"])?
                } else {
                    Vec::new()
                };
                self.expect_kw("end")?;
                InstrKind::If(c, then, els)
            }
            "catdep" => {
                self.next();
                InstrKind::Catdep
            }
            "instructions" => {
                self.next();
                let class = self.name()?;
                self.expect(Tok::LBrack)?;
                let mut enums = Vec::new();
                while *self.peek() != Tok::RBrack {
                    if !enums.is_empty() {
                        self.expect(Tok::Comma)?;
                    }
                    enums.push(self.name()?);
                }
                self.next();
                InstrKind::Instructions(class, enums)
            }
            other => return self.err(format!("`{other}` is not supported here")),
        };
        Ok(Instr { kind, pos })
    }

    fn check(&mut self, level: Level) -> Result<InstrKind, CatError> {
        let negated = *self.peek() == Tok::Tilde;
        if negated {
            self.next();
        }
        let kind = if self.is_kw("acyclic") {
            CheckKind::Acyclic
        } else if self.is_kw("irreflexive") {
            CheckKind::Irreflexive
        } else if self.is_kw("empty") {
            CheckKind::Empty
        } else {
            return self.err(format!(
                "expected `acyclic`, `irreflexive` or `empty`, found {}",
                self.peek().show()
            ));
        };
        self.next();
        let expr = self.expr()?;
        let name = if self.is_kw("as") {
            self.next();
            Some(self.name()?)
        } else {
            None
        };
        Ok(InstrKind::Check {
            level,
            kind,
            negated,
            expr,
            name,
        })
    }

    fn pattern(&mut self) -> Result<Pat, CatError> {
        if *self.peek() == Tok::LParen {
            self.next();
            let mut names = Vec::new();
            if *self.peek() != Tok::RParen {
                names.push(self.name()?);
                while *self.peek() == Tok::Comma {
                    self.next();
                    names.push(self.name()?);
                }
            }
            self.expect(Tok::RParen)?;
            if names.len() == 1 {
                return Ok(Pat::Name(names.remove(0)));
            }
            Ok(Pat::Tuple(names))
        } else {
            Ok(Pat::Name(self.name()?))
        }
    }

    fn bindings(&mut self) -> Result<Vec<Binding>, CatError> {
        let mut out = vec![self.binding()?];
        while self.is_kw("and") {
            self.next();
            out.push(self.binding()?);
        }
        Ok(out)
    }

    fn binding(&mut self) -> Result<Binding, CatError> {
        let pos = self.pos();
        let name = self.name()?;
        let params = if *self.peek() == Tok::Eq {
            None
        } else {
            Some(self.pattern()?)
        };
        self.expect(Tok::Eq)?;
        let body = self.expr()?;
        Ok(Binding {
            name,
            params,
            body,
            pos,
        })
    }

    fn cond(&mut self) -> Result<Cond, CatError> {
        let mut c = self.cond_and()?;
        while *self.peek() == Tok::BarBar {
            self.next();
            c = Cond::Or(Box::new(c), Box::new(self.cond_and()?));
        }
        Ok(c)
    }

    fn cond_and(&mut self) -> Result<Cond, CatError> {
        let mut c = self.cond_atom()?;
        while *self.peek() == Tok::AmpAmp {
            self.next();
            c = Cond::And(Box::new(c), Box::new(self.cond_atom()?));
        }
        Ok(c)
    }

    fn cond_atom(&mut self) -> Result<Cond, CatError> {
        self.enter()?;
        let r = match self.peek().clone() {
            Tok::Ident(s) if s == "not" => {
                self.next();
                Ok(Cond::Not(Box::new(self.cond_atom()?)))
            }
            Tok::Str(s) => {
                self.next();
                Ok(Cond::Variant(s))
            }
            Tok::LParen => {
                self.next();
                let c = self.cond()?;
                self.expect(Tok::RParen)?;
                Ok(c)
            }
            t => self.err(format!(
                "expected a variant condition (\"name\", not, &&, ||), found {}",
                t.show()
            )),
        };
        self.depth -= 1;
        r
    }

    fn enter(&mut self) -> Result<(), CatError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(format!("expression nested deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    pub(crate) fn expr(&mut self) -> Result<Expr, CatError> {
        self.enter()?;
        let r = self.expr_inner();
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self) -> Result<Expr, CatError> {
        let pos = self.pos();
        let mk = |kind| Expr { kind, pos };
        if self.is_kw("let") {
            self.next();
            let rec = self.is_kw("rec");
            if rec {
                self.next();
            }
            let bs = self.bindings()?;
            self.expect_kw("in")?;
            let body = self.expr()?;
            return Ok(mk(ExprKind::Let(rec, bs, Box::new(body))));
        }
        if self.is_kw("fun") {
            self.next();
            let pat = self.pattern()?;
            self.expect(Tok::Arrow)?;
            let body = self.expr()?;
            return Ok(mk(ExprKind::Fun(pat, Box::new(body))));
        }
        if self.is_kw("match") {
            self.next();
            let e = self.expr()?;
            self.expect_kw("with")?;
            let mut arms = Vec::new();
            if *self.peek() == Tok::BarBar {
                self.next();
            }
            loop {
                let arm = if *self.peek() == Tok::LBrace && *self.peek_at(1) == Tok::RBrace {
                    self.next();
                    self.next();
                    self.expect(Tok::Arrow)?;
                    Arm::Empty(self.expr()?)
                } else {
                    let x = self.name()?;
                    self.expect(Tok::PlusPlus)?;
                    let s = self.name()?;
                    self.expect(Tok::Arrow)?;
                    Arm::Cons(x, s, self.expr()?)
                };
                arms.push(arm);
                if *self.peek() != Tok::BarBar {
                    break;
                }
                self.next();
            }
            self.expect_kw("end")?;
            return Ok(mk(ExprKind::Match(Box::new(e), arms)));
        }
        if self.is_kw("try") {
            self.next();
            let e = self.expr()?;
            self.expect_kw("with")?;
            let d = self.expr()?;
            return Ok(mk(ExprKind::Try(Box::new(e), Box::new(d))));
        }
        if self.is_kw("if") {
            self.next();
            let c = self.cond()?;
            self.expect_kw("then")?;
            let a = self.expr()?;
            self.expect_kw("else")?;
            let b = self.expr()?;
            return Ok(mk(ExprKind::If(c, Box::new(a), Box::new(b))));
        }
        self.binary(0)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, CatError> {
        // Loosest first: | ++ ; \ & *
        const LEVELS: [(Tok, BinOp); 6] = [
            (Tok::Bar, BinOp::Union),
            (Tok::PlusPlus, BinOp::Add),
            (Tok::Semi, BinOp::Seq),
            (Tok::Backslash, BinOp::Diff),
            (Tok::Amp, BinOp::Inter),
            (Tok::Star, BinOp::Cross),
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        self.enter()?;
        let (tok, op) = (LEVELS[level].0.clone(), LEVELS[level].1);
        let mut lhs = self.binary(level + 1)?;
        // Each operator of a chain (`po | po | po`) deepens the tree, which
        // later walks recurse over: it counts as a level too.
        let mut chain = 0;
        while *self.peek() == tok {
            let pos = lhs.pos;
            self.next();
            self.enter()?;
            chain += 1;
            // `let`, `fun`, `match`, `try`, `if` may end a chain: `a | try b with c`.
            let rhs = if self.starts_keyword_expr() {
                self.expr()?
            } else {
                self.binary(level + 1)?
            };
            lhs = Expr {
                kind: ExprKind::Bin(op, Box::new(lhs), Box::new(rhs)),
                pos,
            };
            if op == BinOp::Cross {
                break;
            }
        }
        self.depth -= 1 + chain;
        Ok(lhs)
    }

    fn starts_keyword_expr(&self) -> bool {
        ["let", "fun", "match", "try", "if"]
            .iter()
            .any(|k| self.is_kw(k))
    }

    fn starts_operand(&self) -> bool {
        match self.peek() {
            Tok::Ident(s) => !is_keyword(s),
            Tok::LParen | Tok::LBrace | Tok::LBrack | Tok::Zero | Tok::Tag(_) | Tok::Tilde => true,
            _ => false,
        }
    }

    fn unary(&mut self) -> Result<Expr, CatError> {
        self.enter()?;
        let pos = self.pos();
        let r = if *self.peek() == Tok::Tilde {
            self.next();
            let e = self.unary()?;
            Ok(Expr {
                kind: ExprKind::Un(UnOp::Compl, Box::new(e)),
                pos,
            })
        } else {
            self.postfix()
        };
        self.depth -= 1;
        r
    }

    fn postfix(&mut self) -> Result<Expr, CatError> {
        let mut e = self.app()?;
        loop {
            let op = match self.peek() {
                Tok::Inv => UnOp::Inv,
                Tok::Plus => UnOp::Plus,
                Tok::Question => UnOp::Opt,
                // `r*` unless an operand follows (then it is a product).
                Tok::Star if !self.star_is_binary() => UnOp::Star,
                _ => return Ok(e),
            };
            self.next();
            let pos = e.pos;
            e = Expr {
                kind: ExprKind::Un(op, Box::new(e)),
                pos,
            };
        }
    }

    fn star_is_binary(&self) -> bool {
        match self.peek_at(1) {
            Tok::Ident(s) => !is_keyword(s),
            Tok::LParen | Tok::LBrace | Tok::LBrack | Tok::Zero | Tok::Tag(_) | Tok::Tilde => true,
            _ => false,
        }
    }

    fn app(&mut self) -> Result<Expr, CatError> {
        let mut f = self.primary()?;
        while self.starts_operand() && *self.peek() != Tok::Tilde && *self.peek() != Tok::LBrack {
            let arg = self.primary()?;
            let pos = f.pos;
            f = Expr {
                kind: ExprKind::App(Box::new(f), Box::new(arg)),
                pos,
            };
        }
        Ok(f)
    }

    fn primary(&mut self) -> Result<Expr, CatError> {
        self.enter()?;
        let r = self.primary_inner();
        self.depth -= 1;
        r
    }

    fn primary_inner(&mut self) -> Result<Expr, CatError> {
        let pos = self.pos();
        let mk = |kind| Expr { kind, pos };
        match self.next() {
            Tok::Ident(s) if s == "_" => Ok(mk(ExprKind::Universe)),
            Tok::Ident(s) if !is_keyword(&s) => Ok(mk(ExprKind::Var(s))),
            Tok::Zero => Ok(mk(ExprKind::Zero)),
            Tok::Tag(t) => Ok(mk(ExprKind::Tag(t))),
            Tok::LParen => {
                if *self.peek() == Tok::RParen {
                    self.next();
                    return Ok(mk(ExprKind::Tuple(Vec::new())));
                }
                let mut items = vec![self.expr()?];
                while *self.peek() == Tok::Comma {
                    self.next();
                    items.push(self.expr()?);
                }
                self.expect(Tok::RParen)?;
                if items.len() == 1 {
                    let mut e = items.remove(0);
                    e.pos = pos;
                    Ok(e)
                } else {
                    Ok(mk(ExprKind::Tuple(items)))
                }
            }
            Tok::LBrace => {
                let mut items = Vec::new();
                if *self.peek() != Tok::RBrace {
                    items.push(self.expr()?);
                    while *self.peek() == Tok::Comma {
                        self.next();
                        items.push(self.expr()?);
                    }
                }
                self.expect(Tok::RBrace)?;
                Ok(mk(ExprKind::Set(items)))
            }
            Tok::LBrack => {
                let e = self.expr()?;
                self.expect(Tok::RBrack)?;
                Ok(mk(ExprKind::Un(UnOp::Id, Box::new(e))))
            }
            t => {
                self.i -= 1;
                self.err(format!("expected an expression, found {}", t.show()))
            }
        }
    }
}

/// Parses the text of one cat file (`file` is its index in the loader's table, `name` its path for messages).
pub fn parse(file: usize, name: &str, text: &str) -> Result<Vec<Instr>, CatError> {
    let toks = lex(file, name, text)?;
    Parser::new(toks, name).file()
}
