//! Compiling a cat model: the instructions are run once, at load time, by a
//! partial evaluator. Everything that does not depend on the execution
//! (names, functions and their applications, `include`, `if` on variants,
//! `try`, `match` over sets of values, tags) is decided here; what does
//! depend on it becomes nodes of the [`Plan`]. Sets that atomlab's
//! executions never contain (locks, shareability variants of barriers)
//! are known to be empty here, so expressions over them fold away.
//!
//! `with x from generate_cos(b)` and `with x from generate_orders(s, b)`
//! (herd's `cross.cat`, which enumerates coherence orders) bind `x` to the
//! engine's coherence order (restricted to `s`): atomlab-model enumerates
//! coherence orders itself, so every execution is one of herd's branches;
//! an execution whose order does not extend `b` is forbidden. The set of
//! writes is the `W` that `generate_cos` sees where cross.cat was
//! included: lock.cat adds `LKW` to `W` first, so its order is the
//! engine's coherence restricted to memory writes and lock acquisitions
//! (the engine orders every write, unlocks too).
//!
//! `with x from cross(map f S)` (lock.cat's reads-from of failed trylocks
//! and `spin_is_locked`): see [`Compiler::with_cross`].

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use atomlab_litmus::RvAccesses;

use crate::plan::{Base, Bin, Check, Fixpoint, LockEvents, Op, Plan, Ty, Un};
use crate::syntax::{
    self, Arm, BinOp, CheckKind, Cond, Expr, ExprKind, Instr, InstrKind, Level, Pat, Pos, UnOp,
};
use crate::CatError;

/// A compile-time value.
#[derive(Clone)]
enum V {
    /// An execution-dependent set or relation.
    Node(u32, Ty),
    /// The empty set or relation (`0`, `{}`), whatever the execution.
    Empty,
    /// The complement of an empty set or relation: every event or pair.
    Full,
    Tag,
    Tuple(Vec<V>),
    /// A non-empty set of values (`{a, b}`, `x ++ s`).
    Values(Vec<V>),
    Closure(Rc<Closure>),
    Prim(Prim),
    Proc(Rc<Procedure>),
    /// `map f`, waiting for its set.
    MapWith(Rc<V>),
    /// One event `e` of a set being mapped over: node `{e}` of a union.
    Event(u32),
    /// One pair of a relation being mapped over.
    Pair,
    /// The one-edge relations `{p}` for each pair `p` of a relation.
    Singletons(u32),
    /// `map f S` over the events of `S`, where each `f(e)` is the set of
    /// one-edge relations of a relation of edges into `e`: `union` is the
    /// union of those relations over `e` in `set`.
    EachEvent {
        set: u32,
        union: u32,
    },
}

impl V {
    fn what(&self) -> &'static str {
        match self {
            V::Node(_, Ty::Set) => "a set of events",
            V::Node(_, Ty::Rel) => "a relation",
            V::Empty => "the empty set",
            V::Full => "everything",
            V::Tag => "a tag",
            V::Tuple(_) => "a tuple",
            V::Values(_) => "a set of values",
            V::Closure(_) | V::Prim(_) | V::MapWith(_) => "a function",
            V::Proc(_) => "a procedure",
            V::Event(_) => "an event",
            V::Pair => "a pair of events",
            V::Singletons(_) | V::EachEvent { .. } => "a set of relations",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Prim {
    Domain,
    Range,
    Fencerel,
    Toid,
    Ctrlcfence,
    /// Names herd defines that atomlab cannot evaluate at compile time.
    Unsupported(&'static str),
    /// herd's functions on page-table entries, which return a subset of
    /// their first argument: empty on an empty set.
    SubsetOfFirst(&'static str),
    /// `map f s` (herd's stdlib.cat).
    Map,
    /// `different-values(r)`.
    DifferentValues,
}

struct Closure {
    pat: Pat,
    body: Expr,
    env: Env,
}

struct Procedure {
    pat: Pat,
    body: Vec<Instr>,
    env: Env,
}

type Env = Option<Rc<Scope>>;

struct Scope {
    name: String,
    val: RefCell<V>,
    parent: Env,
}

fn bind(env: &Env, name: &str, v: V) -> Env {
    Some(Rc::new(Scope {
        name: name.to_string(),
        val: RefCell::new(v),
        parent: env.clone(),
    }))
}

fn lookup(env: &Env, name: &str) -> Option<V> {
    let mut e = env.as_ref();
    while let Some(s) = e {
        if s.name == name {
            return Some(s.val.borrow().clone());
        }
        e = s.parent.as_ref();
    }
    None
}

/// How deep function applications may nest (runaway recursion is refused).
const MAX_CALLS: usize = 400;

/// How deep evaluation may nest in all (expressions within calls within
/// expressions), well within a 2 MiB thread stack.
const MAX_DEPTH: usize = 600;

pub(crate) struct Compiler<'a> {
    pub plan: Plan,
    pub files: Vec<PathBuf>,
    cat_path: &'a [PathBuf],
    /// herd's `-variant` names: `if "name"` holds for these.
    variants: &'a [String],
    /// Running a bell file: its `enum`s define tag sets.
    in_bell: bool,
    /// A bell file was given (for the hint on unknown names).
    bell_given: bool,
    /// The `enum`s seen so far, by name (for `instructions`).
    enums: Vec<String>,
    including: Vec<PathBuf>,
    env: Env,
    calls: usize,
    depth: usize,
}

type R<T> = Result<T, CatError>;

impl<'a> Compiler<'a> {
    pub(crate) fn new(cat_path: &'a [PathBuf], variants: &'a [String]) -> Self {
        Compiler {
            plan: Plan::default(),
            files: Vec::new(),
            cat_path,
            variants,
            in_bell: false,
            bell_given: false,
            enums: Vec::new(),
            including: Vec::new(),
            env: None,
            calls: 0,
            depth: 0,
        }
    }

    fn err<T>(&self, pos: Pos, msg: impl Into<String>) -> R<T> {
        let file = self
            .files
            .get(pos.file)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        Err(CatError::at(&file, pos.line, pos.col, msg.into()))
    }

    /// Reads, parses and runs one file (the model, or an included one).
    pub(crate) fn run_file(&mut self, path: &Path, from: Option<Pos>) -> R<()> {
        let canon = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if self.including.contains(&canon) {
            let pos = from.unwrap_or(Pos {
                file: 0,
                line: 1,
                col: 1,
            });
            return self.err(pos, format!("{} includes itself", path.display()));
        }
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                return match from {
                    Some(pos) => self.err(pos, format!("cannot read {}: {e}", path.display())),
                    None => Err(CatError::at(
                        &path.display().to_string(),
                        0,
                        0,
                        format!("cannot read the file: {e}"),
                    )),
                }
            }
        };
        let idx = self.files.len();
        self.files.push(path.to_path_buf());
        let instrs = syntax::parse(idx, &path.display().to_string(), &text)?;
        self.including.push(canon);
        let r = self.instrs(&instrs);
        self.including.pop();
        r
    }

    /// herd's stdlib.cat functions that are plain cat (herd loads its
    /// stdlib before every model; `map` and the others that need herd's
    /// evaluator are built in, see [`Compiler::predefined`]).
    pub(crate) fn run_prelude(&mut self) -> R<()> {
        self.run_text(
            "<atomlab: herd stdlib>",
            "let nodetour (R1, R2, R3) = R1 \\ (R2 ; R3)
             let singlestep (R) = nodetour(R, R, R)
             let imply (A, B) = ~A | B
             let udr r = domain(r) | range(r)",
        )
    }

    /// Runs a bell file (herd's `-bell`): like a cat file, but its `enum`s
    /// also define the sets of events carrying each tag.
    pub(crate) fn run_bell(&mut self, path: &Path) -> R<()> {
        self.in_bell = true;
        self.bell_given = true;
        let r = self.run_file(path, None);
        self.in_bell = false;
        r
    }

    /// Runs a model given as text (for tests and callers without files).
    pub(crate) fn run_text(&mut self, name: &str, text: &str) -> R<()> {
        let idx = self.files.len();
        self.files.push(PathBuf::from(name));
        let instrs = syntax::parse(idx, name, text)?;
        self.instrs(&instrs)
    }

    fn resolve_include(&self, name: &str, pos: Pos) -> R<PathBuf> {
        let here = self
            .files
            .get(pos.file)
            .and_then(|p| p.parent())
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let candidates = std::iter::once(here).chain(self.cat_path.iter().cloned());
        for dir in candidates {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
        let herd_lib = [
            "cross.cat",
            "cos.cat",
            "cos-opt.cat",
            "stdlib.cat",
            "filters.cat",
        ];
        let hint = if herd_lib.contains(&name) {
            " (it is one of herd7's library files, which herd7 finds in its library directory, share/herdtools7/herd: give that directory with --cat-path or $HERDLIB)"
        } else {
            ""
        };
        self.err(
            pos,
            format!(
                "cannot find included file \"{name}\" beside the including file or in a --cat-path directory{hint}"
            ),
        )
    }

    fn instrs(&mut self, instrs: &[Instr]) -> R<()> {
        for i in instrs {
            self.instr(i)?;
        }
        Ok(())
    }

    fn instr(&mut self, ins: &Instr) -> R<()> {
        match &ins.kind {
            InstrKind::Let(false, bs) => {
                let mut vals = Vec::new();
                for b in bs {
                    vals.push(self.binding_value(b, &self.env.clone())?);
                }
                for (b, v) in bs.iter().zip(vals) {
                    self.env = bind(&self.env, &b.name, v);
                }
                Ok(())
            }
            InstrKind::Let(true, bs) => {
                let env = self.let_rec(bs, &self.env.clone())?;
                self.env = env;
                Ok(())
            }
            InstrKind::Include(name) => {
                let p = self.resolve_include(name, ins.pos)?;
                self.run_file(&p, Some(ins.pos))
            }
            InstrKind::Check {
                level,
                kind,
                negated,
                expr,
                name,
            } => {
                let v = self.expr(expr, &self.env.clone())?;
                let name = name.clone().unwrap_or_else(|| {
                    match kind {
                        CheckKind::Acyclic => "acyclic",
                        CheckKind::Irreflexive => "irreflexive",
                        CheckKind::Empty => "empty",
                    }
                    .to_string()
                });
                let v = match v {
                    V::Full => self.materialize(V::Full, Ty::Rel),
                    v => v,
                };
                if *level == Level::Assert {
                    let holds = matches!(v, V::Empty) != *negated;
                    if !holds {
                        return self.err(
                            ins.pos,
                            "`assert` is supported only when it holds whatever the execution",
                        );
                    }
                    return Ok(());
                }
                let node = match v {
                    V::Empty => None,
                    V::Node(id, ty) => {
                        if ty == Ty::Set && *kind != CheckKind::Empty {
                            return self.err(
                                expr.pos,
                                format!("{kind:?} needs a relation, this is a set of events")
                                    .to_lowercase(),
                            );
                        }
                        Some(id)
                    }
                    other => {
                        return self.err(
                            expr.pos,
                            format!(
                                "a check needs a relation or a set of events, this is {}",
                                other.what()
                            ),
                        )
                    }
                };
                self.add_check(*level, *kind, *negated, node, name);
                Ok(())
            }
            InstrKind::Show | InstrKind::Catdep => Ok(()),
            InstrKind::Procedure(name, pat, body) => {
                let p = V::Proc(Rc::new(Procedure {
                    pat: pat.clone(),
                    body: body.clone(),
                    env: self.env.clone(),
                }));
                // A procedure may call itself.
                self.env = bind(&self.env, name, V::Empty);
                if let Some(s) = &self.env {
                    *s.val.borrow_mut() = p;
                }
                Ok(())
            }
            InstrKind::Call(name, arg) => {
                let Some(V::Proc(p)) = lookup(&self.env, name) else {
                    return self.err(ins.pos, format!("`{name}` is not a procedure"));
                };
                let a = self.expr(arg, &self.env.clone())?;
                let env = self.bind_pat(&p.pat, a, &p.env, arg.pos)?;
                self.calls += 1;
                if self.calls > MAX_CALLS {
                    return self.err(ins.pos, "procedure calls nested too deeply");
                }
                let saved = std::mem::replace(&mut self.env, env);
                let r = self.instrs(&p.body);
                self.env = saved;
                self.calls -= 1;
                r
            }
            InstrKind::Enum(name, tags) => {
                let v = V::Values(tags.iter().map(|_| V::Tag).collect());
                self.env = bind(&self.env, name, v);
                self.enums.push(name.clone());
                if self.in_bell {
                    // herd (lib/BellName.ml, tag2set_var): tag 'once gives
                    // the set `Once`, the events annotated with it.
                    for t in tags {
                        let key = t.to_ascii_lowercase();
                        let idx = match self.plan.tags.iter().position(|x| *x == key) {
                            Some(i) => i,
                            None => {
                                self.plan.tags.push(key);
                                self.plan.tags.len() - 1
                            }
                        };
                        let node = self.base(Base::LkTag(idx as u16));
                        let mut set_name = t.clone();
                        if let Some(c) = set_name.get_mut(0..1) {
                            c.make_ascii_uppercase();
                        }
                        self.env = bind(&self.env, &set_name, V::Node(node, Ty::Set));
                    }
                }
                Ok(())
            }
            InstrKind::Instructions(class, enums) => {
                if let Some(e) = enums.iter().find(|e| !self.enums.contains(e)) {
                    return self.err(
                        ins.pos,
                        format!("`instructions {class}[…]`: no `enum {e}` before it"),
                    );
                }
                // herd checks the tags of each event against these
                // declarations; atomlab's Linux parser only produces the
                // annotations linux-kernel.def defines.
                Ok(())
            }
            InstrKind::With(name, e) => {
                let v = self.with_from(e)?;
                self.env = bind(&self.env, name, v);
                Ok(())
            }
            InstrKind::If(c, a, b) => {
                if self.eval_cond(c) {
                    self.instrs(a)
                } else {
                    self.instrs(b)
                }
            }
        }
    }

    fn add_check(
        &mut self,
        level: Level,
        kind: CheckKind,
        negated: bool,
        node: Option<u32>,
        name: String,
    ) {
        // One small string per check of a loaded model, for the process's
        // lifetime: verdicts carry axiom names as &'static str.
        let name: &'static str = Box::leak(name.into_boxed_str());
        self.plan.checks.push(Check {
            level,
            kind,
            negated,
            node,
            name,
            schedule: Vec::new(),
        });
    }

    /// `with x from …`: see the module docs.
    fn with_from(&mut self, e: &Expr) -> R<V> {
        let env = self.env.clone();
        if let ExprKind::App(f, arg) = &e.kind {
            if let ExprKind::Var(fname) = &f.kind {
                if fname == "cross" {
                    return self.with_cross(arg);
                }
                let (set, base) = match (fname.as_str(), &arg.kind) {
                    ("generate_cos", _) => {
                        // herd's cross.cat: generate_cos(pco) =
                        // generate_orders(W, pco), with the `W` in scope
                        // where cross.cat was included (lock.cat adds LKW
                        // to W before it includes cos-opt.cat).
                        let scope = match lookup(&env, "generate_cos") {
                            Some(V::Closure(c)) => c.env.clone(),
                            _ => env.clone(),
                        };
                        let w = match lookup(&scope, "W") {
                            Some(w) => w,
                            None => V::Node(self.base(Base::W), Ty::Set),
                        };
                        (w, self.expr(arg, &env)?)
                    }
                    ("generate_orders", ExprKind::Tuple(items)) if items.len() == 2 => {
                        (self.expr(&items[0], &env)?, self.expr(&items[1], &env)?)
                    }
                    _ => return self.with_value(e),
                };
                let all_writes = matches!(set, V::Node(id, _) if id == self.base(Base::W));
                // herd's writes only: its coherence order; more (lock
                // writes): the engine's, which orders them too.
                let co = if all_writes {
                    V::Node(self.base(Base::Co), Ty::Rel)
                } else {
                    V::Node(self.base(Base::EngineCo), Ty::Rel)
                };
                let cross = self.bin(BinOp::Cross, set.clone(), set, e.pos)?;
                // The engine's coherence order relates writes only.
                let order = if all_writes {
                    co
                } else {
                    self.bin(BinOp::Inter, co, cross.clone(), e.pos)?
                };
                // The order must extend the base order (on the same
                // locations); co0 it always does (the engine puts initial
                // writes first and takes final writes from its last).
                let co0 = self.predefined("co0");
                let is_co0 =
                    matches!((&base, &co0), (V::Node(a, _), Some(V::Node(b, _))) if a == b);
                let loc = V::Node(self.base(Base::Loc), Ty::Rel);
                let b = self.bin(BinOp::Inter, base, cross, e.pos)?;
                let b = self.bin(BinOp::Inter, b, loc, e.pos)?;
                let outside = self.bin(BinOp::Diff, b, order.clone(), e.pos)?;
                if let (V::Node(id, _), false) = (outside, is_co0) {
                    self.add_check(
                        Level::Forbid,
                        CheckKind::Empty,
                        false,
                        Some(id),
                        fname.clone(),
                    );
                }
                return Ok(order);
            }
        }
        self.with_value(e)
    }

    /// `with x from cross(map g S)`, where each `g(e)` is the set of
    /// one-edge relations of candidate reads-from edges into `e`: herd
    /// tries each choice of one edge per event of `S` (lock.cat generates
    /// the reads-from of failed trylocks and of `spin_is_locked` so).
    /// atomlab's engine chose a reads-from edge for every read already, so
    /// `x` is the engine's edges among the candidates, and an execution
    /// whose edge into some `e` is not a candidate is none of herd's
    /// branches: it is forbidden (check `cross`).
    fn with_cross(&mut self, arg: &Expr) -> R<V> {
        let v = self.expr(arg, &self.env.clone())?;
        match v {
            V::Empty => Ok(V::Empty),
            V::EachEvent { set, union } => {
                let rf = self.base(Base::EngineRf);
                let chosen = self.plan.node(Op::Bin(Bin::Inter, rf, union), Ty::Rel);
                let hit = self.plan.node(Op::Un(Un::Range, chosen), Ty::Set);
                let missed = self.plan.node(Op::Bin(Bin::Diff, set, hit), Ty::Set);
                self.add_check(
                    Level::Forbid,
                    CheckKind::Empty,
                    false,
                    Some(missed),
                    "cross".to_string(),
                );
                Ok(V::Node(chosen, Ty::Rel))
            }
            other => self.err(
                arg.pos,
                format!(
                    "`with … from cross(s)` is supported when s is `map f S` over a set of events S, each f(e) being the one-edge relations of candidate edges into e (lock.cat's reads-from generation); this is {}",
                    other.what(),
                ),
            ),
        }
    }

    /// Whether every pair of relation node `id` ends at the event of
    /// union variable `var` (statically: `X * {e}` intersected, differed,
    /// united or composed after).
    fn edges_into(&self, id: u32, var: u32) -> bool {
        match self.plan.ops[id as usize] {
            Op::Bin(Bin::Cross, _, b) => b == var,
            Op::Bin(Bin::Inter, a, b) => self.edges_into(a, var) || self.edges_into(b, var),
            Op::Bin(Bin::Diff, a, _) => self.edges_into(a, var),
            Op::Bin(Bin::Union, a, b) => self.edges_into(a, var) && self.edges_into(b, var),
            Op::Bin(Bin::Seq, _, b) => self.edges_into(b, var),
            Op::Empty(_) => true,
            _ => false,
        }
    }

    /// `map f s`: over a set of values at load time; over the events of an
    /// execution's set or the pairs of a relation, symbolically, for the
    /// forms herd's `cross` takes (see [`Compiler::with_cross`]).
    fn map(&mut self, f: V, s: V, pos: Pos) -> R<V> {
        match s {
            V::Empty => Ok(V::Empty),
            V::Values(vs) => {
                let mut out = Vec::new();
                for v in vs {
                    out.push(self.apply(f.clone(), v, pos)?);
                }
                Ok(V::Values(out))
            }
            V::Node(r, Ty::Rel) => match self.apply(f, V::Pair, pos)? {
                V::Values(vs) if matches!(vs.as_slice(), [V::Pair]) => Ok(V::Singletons(r)),
                other => self.err(
                    pos,
                    format!("`map f r` over the pairs of a relation is supported only for f p = p ++ 0 (one-edge relations); f gives {}", other.what()),
                ),
            },
            V::Node(set, Ty::Set) => {
                let k = self.plan.eaches.len() as u32;
                self.plan.eaches.push(crate::plan::EachUnion::default());
                let var = self.plan.node(Op::EachVar(k), Ty::Set);
                let body = match self.apply(f, V::Event(var), pos)? {
                    V::Empty => self.plan.node(Op::Empty(Ty::Rel), Ty::Rel),
                    V::Singletons(r) if self.edges_into(r, var) => r,
                    other => {
                        return self.err(
                            pos,
                            format!("`map f S` over the events of an execution is supported only when f(e) is `map pair-to-relation r` with r a relation of edges into e (lock.cat's candidate reads-from edges, for `cross`); f gives {}", other.what()),
                        )
                    }
                };
                let u = &mut self.plan.eaches[k as usize];
                u.var = var;
                u.set = set;
                u.body = body;
                self.plan.close_each(k as usize);
                let union = self.plan.node(Op::Each(k), Ty::Rel);
                Ok(V::EachEvent { set, union })
            }
            other => self.err(pos, format!("`map` needs a set, this is {}", other.what())),
        }
    }

    fn with_value(&mut self, e: &Expr) -> R<V> {
        match self.expr(e, &self.env.clone())? {
            V::Values(mut vs) if vs.len() == 1 => Ok(vs.remove(0)),
            _ => self.unsupported_with(e),
        }
    }

    fn unsupported_with<T>(&self, e: &Expr) -> R<T> {
        self.err(
            e.pos,
            "`with … from` is supported for generate_cos(b) and generate_orders(s, b) (coherence orders, which atomlab enumerates itself) and for a set of one value",
        )
    }

    fn binding_value(&mut self, b: &Binding, env: &Env) -> R<V> {
        match &b.params {
            Some(p) => Ok(V::Closure(Rc::new(Closure {
                pat: p.clone(),
                body: b.body.clone(),
                env: env.clone(),
            }))),
            None => self.expr(&b.body, env),
        }
    }

    /// `let rec`: functions see themselves; relations are least fixpoints.
    fn let_rec(&mut self, bs: &[Binding], env: &Env) -> R<Env> {
        let functions = bs
            .iter()
            .all(|b| b.params.is_some() || matches!(b.body.kind, ExprKind::Fun(..)));
        if functions {
            let mut new = env.clone();
            for b in bs {
                new = bind(&new, &b.name, V::Empty);
            }
            // Fill the placeholders with closures over the new scope.
            for b in bs {
                let v = match &b.params {
                    Some(p) => V::Closure(Rc::new(Closure {
                        pat: p.clone(),
                        body: b.body.clone(),
                        env: new.clone(),
                    })),
                    None => self.expr(&b.body, &new)?,
                };
                let mut e = new.as_ref();
                while let Some(s) = e {
                    if s.name == b.name {
                        *s.val.borrow_mut() = v;
                        break;
                    }
                    e = s.parent.as_ref();
                }
            }
            return Ok(new);
        }
        if let Some(b) = bs.iter().find(|b| b.params.is_some()) {
            return self.err(
                b.pos,
                "a `let rec` must define only functions or only relations",
            );
        }
        // Each name is a set or a relation, which shows only once its body
        // is evaluated (linux-kernel.bell's rcu-rscs mixes both): assume
        // relations, and evaluate again with the types found, at most once
        // per binding, from the plan as it was.
        let mut tys = vec![Ty::Rel; bs.len()];
        for _ in 0..=bs.len() {
            let saved = self.plan.clone();
            let mut found: Vec<Option<Ty>> = vec![None; bs.len()];
            let r = self.let_rec_typed(bs, env, &tys, &mut found);
            let changed = found
                .iter()
                .zip(&tys)
                .any(|(f, t)| f.is_some_and(|f| f != *t));
            if !changed {
                return r;
            }
            self.plan = saved;
            for (t, f) in tys.iter_mut().zip(found) {
                if let Some(f) = f {
                    *t = f;
                }
            }
        }
        self.err(
            bs[0].pos,
            "the types of this `let rec` (sets or relations) do not settle",
        )
    }

    /// One evaluation of a `let rec` of sets and relations, with `tys` the
    /// assumed types; `found` gets the type of each body evaluated.
    fn let_rec_typed(
        &mut self,
        bs: &[Binding],
        env: &Env,
        tys: &[Ty],
        found: &mut [Option<Ty>],
    ) -> R<Env> {
        let k = self.plan.fixes.len() as u32;
        self.plan.fixes.push(Fixpoint::default());
        let mut inner_env = env.clone();
        let mut vars = Vec::new();
        for (i, b) in bs.iter().enumerate() {
            let v = self.plan.node(Op::FixVar(k, i as u32), tys[i]);
            vars.push(v);
            inner_env = bind(&inner_env, &b.name, V::Node(v, tys[i]));
        }
        let mut bodies = Vec::new();
        for (i, b) in bs.iter().enumerate() {
            let v = self.expr(&b.body, &inner_env)?;
            let id = match self.materialize(v, tys[i]) {
                V::Empty => self.plan.node(Op::Empty(tys[i]), tys[i]),
                V::Node(id, ty) => {
                    found[i] = Some(ty);
                    id
                }
                other => {
                    return self.err(
                        b.body.pos,
                        format!(
                            "a recursive definition must be a set or a relation, this is {}",
                            other.what()
                        ),
                    )
                }
            };
            bodies.push(id);
        }
        if found
            .iter()
            .zip(tys)
            .any(|(f, t)| f.is_some_and(|f| f != *t))
        {
            return Ok(env.clone());
        }
        self.plan.fixes[k as usize].vars = vars;
        self.plan.fixes[k as usize].bodies = bodies;
        self.plan.close_fix(k as usize);
        let fix = self.plan.node(Op::Fix(k), Ty::Rel);
        let mut out = env.clone();
        for (i, b) in bs.iter().enumerate() {
            let o = self.plan.node(Op::FixOut(fix, i as u32), tys[i]);
            out = bind(&out, &b.name, V::Node(o, tys[i]));
        }
        Ok(out)
    }

    fn base(&mut self, b: Base) -> u32 {
        self.plan.node(Op::Base(b), b.ty())
    }

    fn un(&mut self, op: UnOp, v: V, pos: Pos) -> R<V> {
        Ok(match (op, v) {
            (UnOp::Compl, V::Node(a, ty)) => V::Node(self.plan.node(Op::Un(Un::Compl, a), ty), ty),
            (UnOp::Compl, V::Empty) => V::Full,
            (UnOp::Compl, V::Full) => V::Empty,
            (op, V::Full) => {
                let v = self.materialize(V::Full, if op == UnOp::Id { Ty::Set } else { Ty::Rel });
                return self.un(op, v, pos);
            }
            (UnOp::Inv | UnOp::Plus, V::Empty) => V::Empty,
            (UnOp::Star | UnOp::Opt, V::Empty) => V::Node(self.base(Base::Id), Ty::Rel),
            (UnOp::Id, V::Empty) => V::Empty,
            (UnOp::Id, V::Node(a, Ty::Set)) => {
                V::Node(self.plan.node(Op::Un(Un::IdOf, a), Ty::Rel), Ty::Rel)
            }
            (UnOp::Inv, V::Node(a, Ty::Rel)) => {
                V::Node(self.plan.node(Op::Un(Un::Inv, a), Ty::Rel), Ty::Rel)
            }
            (UnOp::Plus, V::Node(a, Ty::Rel)) => {
                V::Node(self.plan.node(Op::Un(Un::Plus, a), Ty::Rel), Ty::Rel)
            }
            (UnOp::Star, V::Node(a, Ty::Rel)) => {
                V::Node(self.plan.node(Op::Un(Un::Star, a), Ty::Rel), Ty::Rel)
            }
            (UnOp::Opt, V::Node(a, Ty::Rel)) => {
                V::Node(self.plan.node(Op::Un(Un::Opt, a), Ty::Rel), Ty::Rel)
            }
            (op, v) => {
                let what = match op {
                    UnOp::Id => "[…] needs a set of events",
                    UnOp::Inv => "^-1 needs a relation",
                    UnOp::Plus => "+ needs a relation",
                    UnOp::Star => "* (closure) needs a relation",
                    UnOp::Opt => "? needs a relation",
                    UnOp::Compl => "~ needs a set or a relation",
                };
                return self.err(pos, format!("{what}, this is {}", v.what()));
            }
        })
    }

    /// `Full` as a node of type `ty` (other values unchanged).
    fn materialize(&mut self, v: V, ty: Ty) -> V {
        match v {
            V::Full => {
                let id = match ty {
                    Ty::Set => self.base(Base::Universe),
                    Ty::Rel => {
                        let e = self.plan.node(Op::Empty(Ty::Rel), Ty::Rel);
                        self.plan.node(Op::Un(Un::Compl, e), Ty::Rel)
                    }
                };
                V::Node(id, ty)
            }
            v => v,
        }
    }

    fn bin(&mut self, op: BinOp, a: V, b: V, pos: Pos) -> R<V> {
        use V::{Empty, Full, Node};
        let (a, b) = match (op, a, b) {
            (BinOp::Union, Full, _) | (BinOp::Union, _, Full) => return Ok(Full),
            (BinOp::Inter, Full, x) | (BinOp::Inter, x, Full) => return Ok(x),
            (BinOp::Diff, _, Full) => return Ok(Empty),
            (BinOp::Seq | BinOp::Cross, Empty, _) | (BinOp::Seq | BinOp::Cross, _, Empty) => {
                return Ok(Empty)
            }
            (BinOp::Cross, x, y) => (self.materialize(x, Ty::Set), self.materialize(y, Ty::Set)),
            (_, Full, Node(y, t)) => (self.materialize(Full, t), Node(y, t)),
            (_, Node(x, t), Full) => (Node(x, t), self.materialize(Full, t)),
            (_, x, y) => (self.materialize(x, Ty::Rel), self.materialize(y, Ty::Rel)),
        };
        // r ; id = id ; r = r, and r | r = r & r = r.
        let id = self.base(Base::Id);
        match (op, &a, &b) {
            (BinOp::Seq, Node(x, _), Node(_, Ty::Rel)) if *x == id => return Ok(b),
            (BinOp::Seq, Node(_, Ty::Rel), Node(y, _)) if *y == id => return Ok(a),
            (BinOp::Union | BinOp::Inter, Node(x, _), Node(y, _)) if x == y => return Ok(a),
            _ => {}
        }
        let node = |c: &mut Self, o: Bin, x: u32, y: u32, ty: Ty| {
            V::Node(c.plan.node(Op::Bin(o, x, y), ty), ty)
        };
        Ok(match (op, a, b) {
            (BinOp::Add, x, Empty) => V::Values(vec![x]),
            (BinOp::Add, x, V::Values(mut vs)) => {
                vs.insert(0, x);
                V::Values(vs)
            }
            (BinOp::Union, Empty, x) | (BinOp::Union, x, Empty) => x,
            (BinOp::Union, V::Values(mut a), V::Values(b)) => {
                a.extend(b);
                V::Values(a)
            }
            (BinOp::Inter | BinOp::Seq | BinOp::Cross, Empty, _)
            | (BinOp::Inter | BinOp::Seq | BinOp::Cross, _, Empty) => Empty,
            (BinOp::Diff, Empty, _) => Empty,
            (BinOp::Diff, x, Empty) => x,
            (BinOp::Union, Node(x, tx), Node(y, ty)) if tx == ty => {
                node(self, Bin::Union, x, y, tx)
            }
            (BinOp::Inter, Node(x, tx), Node(y, ty)) if tx == ty => {
                node(self, Bin::Inter, x, y, tx)
            }
            (BinOp::Diff, Node(x, tx), Node(y, ty)) if tx == ty => node(self, Bin::Diff, x, y, tx),
            (BinOp::Seq, Node(x, Ty::Rel), Node(y, Ty::Rel)) => node(self, Bin::Seq, x, y, Ty::Rel),
            (BinOp::Cross, Node(x, Ty::Set), Node(y, Ty::Set)) => {
                node(self, Bin::Cross, x, y, Ty::Rel)
            }
            (op, a, b) => {
                let sym = match op {
                    BinOp::Union => "|",
                    BinOp::Inter => "&",
                    BinOp::Diff => "\\",
                    BinOp::Seq => ";",
                    BinOp::Cross => "*",
                    BinOp::Add => "++",
                };
                return self.err(
                    pos,
                    format!("`{sym}` cannot combine {} and {}", a.what(), b.what()),
                );
            }
        })
    }

    fn bind_pat(&self, pat: &Pat, v: V, env: &Env, pos: Pos) -> R<Env> {
        match (pat, v) {
            (Pat::Name(n), v) => Ok(bind(env, n, v)),
            (Pat::Tuple(ns), V::Tuple(vs)) if ns.len() == vs.len() => {
                let mut e = env.clone();
                for (n, v) in ns.iter().zip(vs) {
                    e = bind(&e, n, v);
                }
                Ok(e)
            }
            (Pat::Tuple(ns), v) => self.err(
                pos,
                format!("expected {} arguments, found {}", ns.len(), v.what()),
            ),
        }
    }

    fn apply(&mut self, f: V, arg: V, pos: Pos) -> R<V> {
        match f {
            V::Closure(c) => {
                let env = self.bind_pat(&c.pat, arg, &c.env, pos)?;
                self.calls += 1;
                if self.calls > MAX_CALLS {
                    self.calls -= 1;
                    return self.err(
                        pos,
                        "function applications nested too deeply (runaway recursion?)",
                    );
                }
                let r = self.expr(&c.body, &env);
                self.calls -= 1;
                r
            }
            V::Prim(Prim::Map) => Ok(V::MapWith(Rc::new(arg))),
            V::MapWith(f) => self.map((*f).clone(), arg, pos),
            V::Prim(p) => self.prim(p, arg, pos),
            other => self.err(pos, format!("this is {}, not a function", other.what())),
        }
    }

    fn prim(&mut self, p: Prim, arg: V, pos: Pos) -> R<V> {
        match (p, arg) {
            (Prim::Domain | Prim::Range, V::Empty) => Ok(V::Empty),
            (Prim::DifferentValues, V::Empty) => Ok(V::Empty),
            (Prim::DifferentValues, V::Node(a, Ty::Rel)) => Ok(V::Node(self.plan.node(Op::Un(Un::DifferentValues, a), Ty::Rel), Ty::Rel)),
            (Prim::Map, _) => self.err(pos, "`map` needs a function and then a set"),
            (Prim::Domain, V::Node(a, Ty::Rel)) => Ok(V::Node(self.plan.node(Op::Un(Un::Domain, a), Ty::Set), Ty::Set)),
            (Prim::Range, V::Node(a, Ty::Rel)) => Ok(V::Node(self.plan.node(Op::Un(Un::Range, a), Ty::Set), Ty::Set)),
            (Prim::Toid, s) => self.un(UnOp::Id, s, pos),
            // fencerel(S) = (po & (_ * S)); po
            (Prim::Fencerel, s) => {
                let po = V::Node(self.base(Base::Po), Ty::Rel);
                let all = V::Node(self.base(Base::Universe), Ty::Set);
                let to = self.bin(BinOp::Cross, all, s, pos)?;
                let first = self.bin(BinOp::Inter, po.clone(), to, pos)?;
                self.bin(BinOp::Seq, first, po, pos)
            }
            // ctrlcfence(c, S) = (c & (_ * S)); po
            (Prim::Ctrlcfence, V::Tuple(mut vs)) if vs.len() == 2 => {
                let s = vs.pop().unwrap_or(V::Empty);
                let c = vs.pop().unwrap_or(V::Empty);
                let po = V::Node(self.base(Base::Po), Ty::Rel);
                let all = V::Node(self.base(Base::Universe), Ty::Set);
                let to = self.bin(BinOp::Cross, all, s, pos)?;
                let first = self.bin(BinOp::Inter, c, to, pos)?;
                self.bin(BinOp::Seq, first, po, pos)
            }
            (Prim::Unsupported(name), _) => self.err(
                pos,
                format!("`{name}` is not supported: atomlab evaluates a model per execution and cannot enumerate its events at load time"),
            ),
            (Prim::SubsetOfFirst(_), V::Tuple(vs)) if matches!(vs.first(), Some(V::Empty)) => Ok(V::Empty),
            (Prim::SubsetOfFirst(_), V::Empty) => Ok(V::Empty),
            (Prim::SubsetOfFirst(name), _) => self.err(pos, format!("`{name}` is supported only on sets atomlab's executions never have")),
            (_, v) => self.err(pos, format!("wrong argument: {}", v.what())),
        }
    }

    fn var(&mut self, name: &str, env: &Env, pos: Pos) -> R<V> {
        if let Some(v) = lookup(env, name) {
            return Ok(v);
        }
        if let Some(v) = self.predefined(name) {
            return Ok(v);
        }
        let hint = if self.bell_given {
            ""
        } else {
            "; if the model comes with a bell file (herd's -bell, e.g. linux-kernel.bell), give it with --bell FILE or --conf FILE.cfg"
        };
        self.err(pos, format!("unknown name `{name}` (not defined by the model, and not one that atomlab's executions provide){hint}"))
    }

    /// herd's predefined names, as far as atomlab's executions have them.
    fn predefined(&mut self, name: &str) -> Option<V> {
        let set = |c: &mut Self, b: Base| Some(V::Node(c.base(b), Ty::Set));
        let rel = |c: &mut Self, b: Base| Some(V::Node(c.base(b), Ty::Rel));
        let pos = Pos {
            file: 0,
            line: 0,
            col: 0,
        };
        match name {
            "R" => set(self, Base::R),
            "W" => set(self, Base::W),
            "M" | "Exp" => set(self, Base::M),
            "F" => set(self, Base::F),
            "IW" => set(self, Base::Iw),
            "FW" => set(self, Base::Fw),
            "RMW" => {
                let u = V::Node(self.base(Base::Upd), Ty::Set);
                let l = V::Node(self.base(Base::LkRmw), Ty::Set);
                self.bin(BinOp::Union, u, l, pos).ok()
            }
            // herd's lock events (lock.cat); LS, C11's successful lock, never occurs.
            "LKR" => set(self, Base::Lock(LockEvents::Lkr)),
            "LKW" => set(self, Base::Lock(LockEvents::Lkw)),
            "UL" => set(self, Base::Lock(LockEvents::Ul)),
            "LF" => set(self, Base::Lock(LockEvents::Lf)),
            "RL" => set(self, Base::Lock(LockEvents::Rl)),
            "RU" => set(self, Base::Lock(LockEvents::Ru)),
            "LK" => set(self, Base::Lock(LockEvents::Lk)),
            "map" => Some(V::Prim(Prim::Map)),
            "different-values" => Some(V::Prim(Prim::DifferentValues)),
            "RLX" => set(self, Base::Rlx),
            "CON" => set(self, Base::Con),
            "ACQ" => set(self, Base::Acq),
            "REL" => set(self, Base::Release),
            "ACQ_REL" => set(self, Base::AcqRel),
            "SC" => set(self, Base::Sc),
            "Q" => set(self, Base::ArmQ),
            "L" => set(self, Base::ArmL),
            "NoRet" => set(self, Base::NoRet),
            // herd's X: x86 LOCKed accesses, Arm and RISC-V exclusives.
            "X" => {
                let l = V::Node(self.base(Base::Locked), Ty::Set);
                let x = V::Node(self.base(Base::Excl), Ty::Set);
                self.bin(BinOp::Union, l, x, pos).ok()
            }
            "MFENCE" => set(self, Base::Mfence),
            "DMB.SY" => set(self, Base::DmbFull),
            "DMB.LD" => set(self, Base::DmbLd),
            "DMB.ST" => set(self, Base::DmbSt),
            "ISB" => set(self, Base::Isb),
            // RISC-V (herd's RISCV annotations and fence sets, as
            // riscv-defs.cat uses them).
            "Fence.tso" => set(self, Base::RvTso),
            _ if name.starts_with("Fence.") => {
                let (pred, succ) = name["Fence.".len()..].split_once('.')?;
                let parse = |a: &str| match a {
                    "r" => Some(RvAccesses::R),
                    "w" => Some(RvAccesses::W),
                    "rw" => Some(RvAccesses::RW),
                    _ => None,
                };
                let bits = crate::plan::rv_fence_bits(parse(pred)?, parse(succ)?);
                set(self, Base::RvFence(bits))
            }
            "AMO" => set(self, Base::RvAmo),
            // `.aq`, `.rl` and `.aqrl` are the acquire and release
            // annotations Arm's accesses also carry (A and L).
            "Acq" => {
                let a = V::Node(self.base(Base::ArmA), Ty::Set);
                let l = V::Node(self.base(Base::ArmL), Ty::Set);
                self.bin(BinOp::Diff, a, l, pos).ok()
            }
            "Rel" => {
                let a = V::Node(self.base(Base::ArmA), Ty::Set);
                let l = V::Node(self.base(Base::ArmL), Ty::Set);
                self.bin(BinOp::Diff, l, a, pos).ok()
            }
            "AcqRel" => {
                let a = V::Node(self.base(Base::ArmA), Ty::Set);
                let l = V::Node(self.base(Base::ArmL), Ty::Set);
                self.bin(BinOp::Inter, a, l, pos).ok()
            }
            // riscv-defs.cat's compatibility name; no RISC-V access of
            // atomlab's carries it.
            "Sc" => Some(V::Empty),
            // herd's A: C atomics on C tests, acquire accesses on Arm ones.
            "A" => {
                let a = V::Node(self.base(Base::Atomic), Ty::Set);
                let b = V::Node(self.base(Base::ArmA), Ty::Set);
                self.bin(BinOp::Union, a, b, pos).ok()
            }
            "NA" => {
                let m = V::Node(self.base(Base::M), Ty::Set);
                let a = V::Node(self.base(Base::Atomic), Ty::Set);
                self.bin(BinOp::Diff, m, a, pos).ok()
            }
            // Never present in atomlab's executions (no locks, no shareability
            // domains beyond the full system, no non-explicit accesses).
            "LS" | "LFENCE" | "SFENCE" | "NExp" | "DMB.ISH" | "DMB.ISHLD" | "DMB.ISHST"
            | "DMB.OSH" | "DMB.OSHLD" | "DMB.OSHST" | "DSB.SY" | "DSB.LD" | "DSB.ST"
            | "DSB.ISH" | "DSB.ISHLD" | "DSB.ISHST" | "DSB.OSH" | "DSB.OSHLD" | "DSB.OSHST"
            | "emptyset" => Some(V::Empty),
            "po" => rel(self, Base::Po),
            "rf" => rel(self, Base::Rf),
            "co" => rel(self, Base::Co),
            "fr" => rel(self, Base::Fr),
            "rmw" => rel(self, Base::Rmw),
            "amo" => rel(self, Base::Amo),
            "addr" => rel(self, Base::Addr),
            "data" => rel(self, Base::Data),
            "ctrl" => rel(self, Base::Ctrl),
            "loc" | "same-loc" => rel(self, Base::Loc),
            "int" => rel(self, Base::Int),
            "ext" => rel(self, Base::Ext),
            // Without mixed-size accesses, `sm` (same memory access) is the identity.
            "id" | "sm" => rel(self, Base::Id),
            "same-instance" => rel(self, Base::SameInstance),
            "po-loc" => self.derived(Base::Po, Bin::Inter, Base::Loc),
            "rfe" => self.derived(Base::Rf, Bin::Inter, Base::Ext),
            "rfi" => self.derived(Base::Rf, Bin::Inter, Base::Int),
            "coe" => self.derived(Base::Co, Bin::Inter, Base::Ext),
            "coi" => self.derived(Base::Co, Bin::Inter, Base::Int),
            "fre" => self.derived(Base::Fr, Bin::Inter, Base::Ext),
            "fri" => self.derived(Base::Fr, Bin::Inter, Base::Int),
            "lxsx" => self.derived(Base::Rmw, Bin::Diff, Base::Amo),
            // co0 = loc & ((IW * (W \ IW)) | ((W \ FW) * FW)): what every
            // coherence order contains.
            "co0" => {
                let (iw, w, fw, loc) = (
                    self.base(Base::Iw),
                    self.base(Base::W),
                    self.base(Base::Fw),
                    self.base(Base::Loc),
                );
                let w_iw = self.plan.node(Op::Bin(Bin::Diff, w, iw), Ty::Set);
                let w_fw = self.plan.node(Op::Bin(Bin::Diff, w, fw), Ty::Set);
                let a = self.plan.node(Op::Bin(Bin::Cross, iw, w_iw), Ty::Rel);
                let b = self.plan.node(Op::Bin(Bin::Cross, w_fw, fw), Ty::Rel);
                let u = self.plan.node(Op::Bin(Bin::Union, a, b), Ty::Rel);
                Some(V::Node(
                    self.plan.node(Op::Bin(Bin::Inter, loc, u), Ty::Rel),
                    Ty::Rel,
                ))
            }
            "oa-changes" => Some(V::Prim(Prim::SubsetOfFirst("oa-changes"))),
            "at-least-one-writable" => Some(V::Prim(Prim::SubsetOfFirst("at-least-one-writable"))),
            // Register-level events (herd's instruction semantics), rebuilt
            // from the engine's dependencies: see plan::Regs.
            "rf-reg" | "iico_data" | "iico_ctrl" | "Rreg" | "DATA" | "BCC" | "B" => {
                self.plan.uses_regs = true;
                match name {
                    "rf-reg" => rel(self, Base::RfReg),
                    "iico_data" => rel(self, Base::IicoData),
                    "iico_ctrl" => rel(self, Base::IicoCtrl),
                    "Rreg" => set(self, Base::Rreg),
                    "DATA" => set(self, Base::DataRegs),
                    _ => set(self, Base::Bcc),
                }
            }
            // Without translation faults, addresses agree in their low bits
            // exactly when they are one location.
            "same-low-order-bits" => rel(self, Base::Loc),
            "same-oa" => Some(V::Prim(Prim::SubsetOfFirst("same-oa"))),
            // Page tables, instruction fetch, memory tags, cache and TLB
            // maintenance, exceptions: atomlab's executions have none.
            "FAULT" | "T" | "SPURIOUS" | "TLBI" | "TLBInXS" | "TLBIIS" | "EXC-ENTRY"
            | "EXC-RET" | "TagCheck" | "AF" | "DB" | "MMU" | "Translation" | "AccessFlag"
            | "Instr" | "Restricted-CMODX" | "DC.CVAU" | "IC.IVAU" | "IC.IALLUIS" | "IC.IALLU" => {
                Some(V::Empty)
            }
            "iico_order" | "inv-domain" | "tr-ib" => Some(V::Empty),
            n if n.starts_with("PTE") => Some(V::Empty),
            "domain" => Some(V::Prim(Prim::Domain)),
            "range" => Some(V::Prim(Prim::Range)),
            "fencerel" => Some(V::Prim(Prim::Fencerel)),
            "toid" => Some(V::Prim(Prim::Toid)),
            "ctrlcfence" => Some(V::Prim(Prim::Ctrlcfence)),
            "classes-loc" => Some(V::Prim(Prim::Unsupported("classes-loc"))),
            "partition" => Some(V::Prim(Prim::Unsupported("partition"))),
            "linearisations" => Some(V::Prim(Prim::Unsupported("linearisations"))),
            "classes" => Some(V::Prim(Prim::Unsupported("classes"))),
            "tag2set" => Some(V::Prim(Prim::Unsupported("tag2set"))),
            "tag2events" => Some(V::Prim(Prim::Unsupported("tag2events"))),
            _ => None,
        }
    }

    fn derived(&mut self, a: Base, op: Bin, b: Base) -> Option<V> {
        let (x, y) = (self.base(a), self.base(b));
        Some(V::Node(self.plan.node(Op::Bin(op, x, y), Ty::Rel), Ty::Rel))
    }

    fn expr(&mut self, e: &Expr, env: &Env) -> R<V> {
        // Nesting of evaluation (expressions inside function calls inside
        // expressions) is bounded, so hostile input gets an error, not a
        // stack overflow.
        if self.depth >= MAX_DEPTH {
            return self.err(e.pos, "evaluation nested too deeply (runaway recursion?)");
        }
        self.depth += 1;
        let r = self.expr_inner(e, env);
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, e: &Expr, env: &Env) -> R<V> {
        match &e.kind {
            ExprKind::Var(n) => self.var(n, env, e.pos),
            ExprKind::Zero => Ok(V::Empty),
            ExprKind::Universe => Ok(V::Node(self.base(Base::Universe), Ty::Set)),
            ExprKind::Tag(_) => Ok(V::Tag),
            ExprKind::Set(items) => {
                if items.is_empty() {
                    return Ok(V::Empty);
                }
                let mut vs = Vec::new();
                for i in items {
                    vs.push(self.expr(i, env)?);
                }
                // `{e}` for an event being mapped over: the set of it.
                if let [V::Event(var)] = vs.as_slice() {
                    return Ok(V::Node(*var, Ty::Set));
                }
                if vs.iter().any(|v| matches!(v, V::Event(_) | V::Pair)) {
                    return self.err(
                        e.pos,
                        "a set of several events being mapped over is not supported (only `{e}`)",
                    );
                }
                Ok(V::Values(vs))
            }
            ExprKind::Tuple(items) => {
                let mut vs = Vec::new();
                for i in items {
                    vs.push(self.expr(i, env)?);
                }
                Ok(V::Tuple(vs))
            }
            ExprKind::Bin(op, a, b) => {
                let a = self.expr(a, env)?;
                let b = self.expr(b, env)?;
                self.bin(*op, a, b, e.pos)
            }
            ExprKind::Un(op, a) => {
                let a = self.expr(a, env)?;
                self.un(*op, a, e.pos)
            }
            ExprKind::App(f, a) => {
                let fv = self.expr(f, env)?;
                let av = self.expr(a, env)?;
                self.apply(fv, av, a.pos)
            }
            ExprKind::Let(false, bs, body) => {
                let mut vals = Vec::new();
                for b in bs {
                    vals.push(self.binding_value(b, env)?);
                }
                let mut new = env.clone();
                for (b, v) in bs.iter().zip(vals) {
                    new = bind(&new, &b.name, v);
                }
                self.expr(body, &new)
            }
            ExprKind::Let(true, bs, body) => {
                let new = self.let_rec(bs, env)?;
                self.expr(body, &new)
            }
            ExprKind::Fun(p, body) => Ok(V::Closure(Rc::new(Closure {
                pat: p.clone(),
                body: (**body).clone(),
                env: env.clone(),
            }))),
            ExprKind::Match(s, arms) => {
                let v = self.expr(s, env)?;
                match v {
                    V::Empty => {
                        for a in arms {
                            if let Arm::Empty(body) = a {
                                return self.expr(body, env);
                            }
                        }
                        self.err(e.pos, "no `{}` case for an empty set")
                    }
                    V::Values(mut vs) => {
                        for a in arms {
                            if let Arm::Cons(x, rest, body) = a {
                                let first = vs.remove(0);
                                let rest_v = if vs.is_empty() { V::Empty } else { V::Values(vs) };
                                let env = bind(env, x, first);
                                let env = bind(&env, rest, rest_v);
                                return self.expr(body, &env);
                            }
                        }
                        self.err(e.pos, "no `x ++ s` case for a non-empty set")
                    }
                    other => self.err(
                        s.pos,
                        format!("`match` over {} is not supported (it would enumerate an execution's events at load time)", other.what()),
                    ),
                }
            }
            ExprKind::Try(a, b) => {
                // herd's `try e with d`: d when e cannot be evaluated (typically a name this architecture lacks).
                let saved = self.plan.checks.len();
                match self.expr(a, env) {
                    Ok(v) => Ok(v),
                    Err(_) => {
                        self.plan.checks.truncate(saved);
                        self.expr(b, env)
                    }
                }
            }
            ExprKind::If(c, a, b) => {
                if self.eval_cond(c) {
                    self.expr(a, env)
                } else {
                    self.expr(b, env)
                }
            }
        }
    }
}

impl Compiler<'_> {
    /// herd's variant tests: `"name"` holds when `name` was given with
    /// `--variant` (herd's `-variant`); names compare exactly.
    fn eval_cond(&self, c: &Cond) -> bool {
        match c {
            Cond::Variant(v) => self.variants.iter().any(|x| x == v),
            Cond::Not(c) => !self.eval_cond(c),
            Cond::And(a, b) => self.eval_cond(a) && self.eval_cond(b),
            Cond::Or(a, b) => self.eval_cond(a) || self.eval_cond(b),
        }
    }
}

use crate::syntax::Binding;
