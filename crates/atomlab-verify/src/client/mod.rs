//! The client a variant is checked with: a litmus test ([`Test`]) whose
//! threads call the variant's lifted functions, and whose condition holds
//! exactly when the variant breaks its kind's contract
//! (include/atomlab.h). One client per kind, after the test clients GenMC
//! checks data structures with (its tests/correct/data-structures: a
//! fixed number of threads, a few operations each, an assertion on what
//! they saw):
//!
//! - `lock`: T threads, K critical sections each, a plain
//!   read-increment-write of `data` (a lost update leaves it short);
//! - `spsc`: a producer pushes 1..k through a ring of two, a consumer
//!   pops k items (none lost, duplicated, reordered or torn);
//! - `refcount`: holders take, use and drop references ("last" exactly
//!   once, never early, and seeing every use);
//! - `op`: T threads, K `op`s each, then `read` after joining them.
//!
//! Each kind's client is one file (its threads and its [`Contract`], the
//! property its wrong final states break), listed in `CLIENTS`; a kind
//! of `atomlab_plugin::abi::KINDS` without a client there is refused as
//! not checked yet.
//!
//! Retries and waits in the clients are loops whose failing iteration
//! writes nothing (a full push, an empty pop, a `done` flag still 0):
//! spin-assume ([`atomlab_model::LoopRule`]) drops such an iteration, so
//! they cost no unrolling and lose no execution.
//!
//! Every client starts from the object as its `new_` leaves it
//! (`crate::initial`). The clients pass arguments and take results in
//! the registers of the file's calling convention, as its lifter names
//! them (AAPCS64: X0, X1 and X0; the RISC-V psABI: a0, a1 and a0; System
//! V AMD64: rdi, rsi and rax). Every client serves every lifted
//! architecture, from the object as `new_`, lifted in that architecture,
//! leaves it (`crate::initial`).

use std::sync::Arc;

use atomlab_audit::{PluginFile, Pointer};
use atomlab_litmus::{
    Annot, BinOp, CmpOp, Condition, Expr, Instr, LocId, Prop, Quantifier, Reg, StateVar, Test,
    Thread, Value,
};

use crate::descriptor::{Kind, Variant};
use crate::initial::{self, Initial};
use crate::lift::{self, Locations, Refusal, Registers};

pub use crate::lift::OBJECT;
pub use crate::not_built::NotBuilt;

mod lock;
mod op;
mod refcount;
mod spsc;

/// One kind's client: the name of the object its test is about, what
/// `new_` is given, whether `--items` sizes it, and the threads it
/// builds, returning the property they check.
pub(crate) struct KindClient {
    /// The kind's `enum atomlab_kind` value (`atomlab_plugin::abi::KIND_*`).
    kind: u32,
    /// The object's location name in the test ("lock", "queue", …).
    object: &'static str,
    /// `new_`'s argument (the spsc client's capacity; 0 for the others,
    /// whose `new_` takes none).
    new_arg: i64,
    /// Whether [`Size::items`] sizes it (else threads and rounds do).
    takes_items: bool,
    /// What [`Size::rounds`] counts per thread, for help ("critical
    /// sections"); `None` where rounds do not size it.
    rounds: Option<&'static str>,
    /// Builds its threads on the object (location `obj`).
    threads: fn(&mut Client<'_, '_>, &Variant, usize, Size) -> Result<Property, NotBuilt>,
}

/// The clients, one per kind, each in its own file.
const CLIENTS: [KindClient; 4] = [lock::CLIENT, spsc::CLIENT, refcount::CLIENT, op::CLIENT];

/// The client of `kind`, or why there is none.
fn client_of(kind: Kind) -> Result<&'static KindClient, NotBuilt> {
    CLIENTS
        .iter()
        .find(|c| c.kind == kind.def().value)
        .ok_or_else(|| {
            NotBuilt::Missing(format!(
                "verify has no client for {} variants yet",
                kind.name()
            ))
        })
}

/// Each kind with a client, what `--rounds` counts per thread of it
/// (`None`: rounds do not size it) and whether `--items` sizes it: what
/// the command's help says, written from the clients.
pub fn sizes() -> impl Iterator<Item = (Kind, Option<&'static str>, bool)> {
    CLIENTS
        .iter()
        .filter_map(|c| Some((Kind::from_abi(c.kind)?, c.rounds, c.takes_items)))
}

/// Whether the client of `kind` is sized by [`Size::items`] (spsc's
/// producer and consumer) rather than by threads and rounds: what a
/// record of its verdict names.
pub fn takes_items(kind: Kind) -> bool {
    client_of(kind).is_ok_and(|c| c.takes_items)
}

/// Items the spsc client pushes unless told otherwise: one more than
/// [`SPSC_CAPACITY`], so the last reuses the first slot.
pub const SPSC_ITEMS: usize = 3;

/// The client's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Threads (lock, refcount, op; spsc has its producer and consumer).
    pub threads: usize,
    /// Per thread: critical sections (lock), ops (op), or, for refcount,
    /// its own reference's put plus K-1 extra get/put pairs before it.
    pub rounds: usize,
    /// Items the spsc producer pushes through a queue of
    /// [`SPSC_CAPACITY`] ([`SPSC_ITEMS`] by default; fewer make a test
    /// small enough for herd7).
    pub items: usize,
}
/// The capacity the spsc client asks `new_` for.
pub const SPSC_CAPACITY: usize = 2;

/// A built test and what it took.
pub struct Built {
    /// The test.
    pub test: Test,
    /// Whether an outline-atomics helper read the LSE flag (so the other
    /// value must be checked too).
    pub reads_lse_flag: bool,
    /// What the client checks, and how a wrong final state reads.
    pub property: Property,
    /// How the object started.
    pub initial: Initial,
    /// Per thread, for each instruction of its code, the address of the
    /// machine instruction it was lifted from (`None`: the client's own).
    pub origins: Vec<Vec<Option<u64>>>,
    /// The lifter of the file's architecture (to disassemble `origins`).
    pub lifter: &'static dyn lift::Lifter,
    /// Each thread's heap-error register ([`lift::heap::ERR`]), for the
    /// threads that allocate or free: nonzero is wrong.
    pub heap_errors: Vec<StateVar>,
}

impl Built {
    /// The broken property, in a sentence, if the final state `vals` (of
    /// `vars`) is wrong: a heap error first, then the kind's property.
    pub fn wrong(&self, vars: &[StateVar], vals: &[Value]) -> Option<String> {
        for e in &self.heap_errors {
            let Some(Value::Int(bits)) = vars.iter().position(|x| x == e).map(|i| vals[i]) else {
                continue;
            };
            let StateVar::Reg { thread, .. } = e else {
                continue;
            };
            let said = lift::heap::errors(bits);
            if !said.is_empty() {
                return Some(format!("heap misuse in T{thread}: {}", said.join("; ")));
            }
        }
        self.property.wrong(vars, vals)
    }
}

/// What a kind's client checks: the condition that holds exactly in a
/// wrong final state (the test's `exists`), what a PASS establishes, and
/// the sentence a wrong final state reads as.
pub trait Contract: std::fmt::Debug + Send + Sync {
    /// The proposition that holds exactly in a wrong final state.
    fn condition(&self) -> Prop;
    /// What a PASS establishes, in words.
    fn checked(&self, threads: usize, rounds: usize) -> String;
    /// The broken property, in a sentence, if the final state `vals` (of
    /// `vars`, as the checker reports them) is wrong.
    fn wrong(&self, vars: &[StateVar], vals: &[Value]) -> Option<String>;
    /// The value the client's shared `data` must end with, where the
    /// contract is about one (a lock's): a counterexample then shows the
    /// increments that read stale values.
    fn data_expected(&self) -> Option<i64> {
        None
    }
}

/// The property a built client checks: its kind's [`Contract`].
#[derive(Debug, Clone)]
pub struct Property(Arc<dyn Contract>);

impl Property {
    /// `contract` as a built client's property.
    fn new(contract: impl Contract + 'static) -> Property {
        Property(Arc::new(contract))
    }

    /// See [`Contract::condition`].
    pub fn condition(&self) -> Prop {
        self.0.condition()
    }

    /// See [`Contract::checked`].
    pub fn checked(&self, threads: usize, rounds: usize) -> String {
        self.0.checked(threads, rounds)
    }

    /// See [`Contract::wrong`].
    pub fn wrong(&self, vars: &[StateVar], vals: &[Value]) -> Option<String> {
        self.0.wrong(vars, vals)
    }

    /// See [`Contract::data_expected`].
    pub fn data_expected(&self) -> Option<i64> {
        self.0.data_expected()
    }
}

fn int(v: i64) -> Value {
    Value::Int(v)
}

/// `v != x`.
fn ne(v: &StateVar, x: i64) -> Prop {
    Prop::Atom(v.clone(), CmpOp::Ne, int(x))
}

/// `v == x`.
fn eq(v: &StateVar, x: i64) -> Prop {
    Prop::Atom(v.clone(), CmpOp::Eq, int(x))
}

/// The integer `v` holds in the final state `vals` of `vars`.
fn value_of(vars: &[StateVar], vals: &[Value], v: &StateVar) -> Option<i64> {
    match vars.iter().position(|x| x == v).map(|i| vals[i]) {
        Some(Value::Int(i)) => Some(i),
        _ => None,
    }
}

/// `p1 \/ p2 \/ …` (false when empty, `p` alone when one).
fn any(mut ps: Vec<Prop>) -> Prop {
    match ps.len() {
        0 => Prop::False,
        1 => ps.remove(0),
        _ => Prop::Or(ps),
    }
}

/// The entry address of the variant's function `role`.
fn entry(file: &PluginFile<'_>, v: &Variant, role: &str) -> Result<u64, NotBuilt> {
    match v.function(role) {
        Some(Pointer::Here(a)) if file.code_at(*a).is_some() => Ok(*a),
        Some(Pointer::Here(a)) => Err(NotBuilt::Missing(format!(
            "{role} points to {a:#x}, which is not code in the file"
        ))),
        Some(Pointer::Import(name)) => Err(NotBuilt::Missing(format!(
            "{role} is {name}, a function of another library, which verify cannot read"
        ))),
        Some(Pointer::Null) | None => Err(NotBuilt::Missing(format!("{role} is NULL"))),
    }
}

/// Where the lock's `free_` is, to lift it: `None` when it is libc's
/// `free` itself (it frees the object, which the client does not model
/// beyond that); refused when it is another library's function or NULL
/// (the ABI requires it).
fn free_entry(v: &Variant) -> Result<Option<u64>, NotBuilt> {
    match v.function("free_") {
        Some(Pointer::Import(name)) if name == "free" => Ok(None),
        Some(Pointer::Here(a)) => Ok(Some(*a)),
        Some(Pointer::Import(name)) => Err(NotBuilt::Missing(format!(
            "free_ is {name}, a function of another library, which verify cannot follow"
        ))),
        Some(Pointer::Null) | None => Err(NotBuilt::Missing(
            "free_ is NULL: the ABI requires it (atomlab calls it once, when no thread uses the lock)".into(),
        )),
    }
}

/// The client of `v` (of `kind`) of `size`; `lse` chooses outline
/// atomics' path.
pub fn build(
    file: &PluginFile<'_>,
    v: &Variant,
    kind: Kind,
    size: Size,
    lse: bool,
) -> Result<Built, NotBuilt> {
    let lifter = lift::lifter(file.arch()).ok_or_else(|| {
        NotBuilt::Missing(format!("{} code is not lifted yet", file.arch().name()))
    })?;
    let arg = client_of(kind)?.new_arg;
    build_with(file, v, kind, lifter, size, lse, |locs, obj| {
        initial::read(file, v, lifter, lse, arg, obj, locs)
    })
}

/// [`build`] with `lifter`, the object's start read by `start` (given
/// the test's locations and the object).
#[allow(clippy::too_many_arguments)]
fn build_with(
    file: &PluginFile<'_>,
    v: &Variant,
    kind: Kind,
    lifter: &'static dyn lift::Lifter,
    size: Size,
    lse: bool,
    start: impl Fn(&mut Locations, usize) -> Result<Initial, NotBuilt>,
) -> Result<Built, NotBuilt> {
    // An access through a pointer loaded from memory selects among every
    // region of the test (lift::heap), so the regions must all be known
    // when it is lowered: a first pass finds them, a second builds with
    // them all.
    let first = build_pass(file, v, kind, lifter, size, lse, &start, None)?;
    let Some(seed) = first.1 else {
        return Ok(first.0);
    };
    let (built, again) = build_pass(file, v, kind, lifter, size, lse, &start, Some(&seed))?;
    if again.is_some_and(|k| k.0.len() != seed.0.len()) {
        return Err(NotBuilt::Missing(
            "the allocations differ between two builds of the same client (verify cannot tell which memory a loaded pointer may point to)".into(),
        ));
    }
    Ok(built)
}

/// The regions of a first build, and their fields' layout (of TLS
/// blocks, of allocations: [`lift::heap::layout`]).
type Seed = (Vec<lift::heap::RegionKey>, Vec<(i64, u8)>, Vec<(i64, u8)>);

/// One build of the client; with the regions it made when an access went
/// through a loaded pointer (then the build must be redone with `seed`
/// holding them, unless it already did).
#[allow(clippy::too_many_arguments)]
fn build_pass(
    file: &PluginFile<'_>,
    v: &Variant,
    kind: Kind,
    lifter: &'static dyn lift::Lifter,
    size: Size,
    lse: bool,
    start: &dyn Fn(&mut Locations, usize) -> Result<Initial, NotBuilt>,
    seed: Option<&Seed>,
) -> Result<(Built, Option<Seed>), NotBuilt> {
    let mut c = Client {
        file,
        lifter,
        lse,
        locs: Locations::default(),
        reads_lse_flag: false,
        threads: Vec::new(),
        origins: Vec::new(),
    };
    let client = client_of(kind)?;
    let name = client.object;
    let obj = c.locs.object(name);
    c.locs.stand_ins.push((obj, OBJECT));
    let initial = start(&mut c.locs, obj)?;
    // new_ is read (above) with allocator calls refused, to find its own;
    // the client's functions get fresh memory from theirs.
    c.locs.heap.follow = true;
    if let Some((keys, tls_layout, layout)) = seed {
        for k in keys {
            c.locs.heap.thread = k.thread;
            c.locs.heap.call = k.call;
            let r = c.locs.region(k.site, &k.allocator);
            let layout = if k.site == lift::heap::TLS {
                tls_layout
            } else {
                layout
            };
            for &(off, w) in layout {
                c.locs
                    .field(r.obj, off, w)
                    .map_err(|e| NotBuilt::Missing(format!("allocated memory {e}")))?;
            }
        }
    }
    c.locs.heap.complete = seed.is_some();
    let property = (client.threads)(&mut c, v, obj, size)?;
    initial.check_covers(&c.locs, name)?;
    let redo = (c.locs.heap.dynamic && seed.is_none()).then(|| {
        let keys = c.locs.heap.regions.iter().map(|r| r.key.clone()).collect();
        (
            keys,
            lift::heap::layout(&c.locs, true),
            lift::heap::layout(&c.locs, false),
        )
    });
    let mut init = initial.values.clone();
    init.extend(c.locs.heap_init(file));
    let heap_errors: Vec<StateVar> = c
        .threads
        .iter()
        .filter_map(|t| {
            let reg = t.regs.iter().position(|n| n == lift::heap::ERR)?;
            Some(StateVar::Reg { thread: t.id, reg })
        })
        .collect();
    let mut wrong = vec![property.condition()];
    wrong.extend(
        heap_errors
            .iter()
            .map(|e| Prop::Atom(e.clone(), CmpOp::Ne, int(0))),
    );
    Ok((
        Built {
            test: Test {
                file: String::new(),
                arch: lifter.litmus_arch(),
                name: v.name.clone(),
                locations: c.locs.names,
                init,
                threads: c.threads,
                observed: Vec::new(),
                filter: None,
                condition: Condition {
                    quantifier: Quantifier::Exists,
                    prop: any(wrong),
                },
            },
            reads_lse_flag: c.reads_lse_flag,
            property,
            initial,
            origins: c.origins,
            lifter,
            heap_errors,
        },
        redo,
    ))
}

/// A client being built: the test's locations and finished threads.
struct Client<'c, 'a> {
    file: &'c PluginFile<'a>,
    lifter: &'static dyn lift::Lifter,
    lse: bool,
    locs: Locations,
    reads_lse_flag: bool,
    threads: Vec<Thread>,
    /// Per finished thread: see [`Built::origins`].
    origins: Vec<Vec<Option<u64>>>,
}

/// The lifter's release store and acquire load on AArch64 (STLR, LDAR:
/// herd's `L` and `A`), the orders `pthread_create`/`pthread_join` give.
fn release() -> Annot {
    Annot {
        release: true,
        ..Annot::default()
    }
}
fn acquire() -> Annot {
    Annot {
        acquire: true,
        ..Annot::default()
    }
}

impl<'c, 'a> Client<'c, 'a> {
    /// The `done` flag of each thread but 0 (`done1`, …), which
    /// [`Call::join`] publishes and waits for; none when `wanted` is false
    /// (the client joins no thread).
    fn done_flags(&mut self, threads: usize, wanted: bool) -> Vec<LocId> {
        if !wanted {
            return Vec::new();
        }
        (1..threads)
            .map(|t| self.locs.plain(&format!("done{t}")))
            .collect()
    }

    /// Builds thread `id` with `body`, which appends to a [`Call`].
    fn thread(
        &mut self,
        obj: usize,
        body: impl FnOnce(&mut Call<'_, '_, 'a>) -> Result<(), NotBuilt>,
    ) -> Result<usize, NotBuilt> {
        let id = self.threads.len();
        self.locs.heap.thread = id;
        self.locs.heap.call = 0;
        let mut regs = Registers::default();
        let mut code = Vec::new();
        let mut from = Vec::new();
        let mut call = Call {
            file: self.file,
            lifter: self.lifter,
            lse: self.lse,
            obj,
            regs: &mut regs,
            locs: &mut self.locs,
            code: &mut code,
            origins: &mut from,
            reads_lse_flag: false,
        };
        let read = body(&mut call);
        self.reads_lse_flag |= call.reads_lse_flag;
        read?;
        from.resize(code.len(), None);
        self.origins.push(from);
        self.threads.push(Thread {
            id,
            regs: regs.names,
            init: Vec::new(),
            code,
        });
        Ok(id)
    }
}

/// One thread's code being built: each [`Call::function`] appends a
/// plugin function, lifted, called with the object as its argument.
pub struct Call<'c, 'f, 'a> {
    /// The plugin file.
    pub file: &'c PluginFile<'a>,
    /// Its architecture's lifter.
    pub lifter: &'static dyn lift::Lifter,
    /// Outline atomics' path: the CPU has LSE.
    pub lse: bool,
    /// The object the functions are given.
    pub obj: usize,
    /// The thread's registers.
    pub regs: &'f mut Registers,
    /// The test's locations.
    pub locs: &'f mut Locations,
    /// The thread's code so far.
    pub code: &'f mut Vec<Instr>,
    /// Where each instruction of `code` came from (see [`Built::origins`]);
    /// instructions the client pushes itself need no entry.
    pub origins: &'f mut Vec<Option<u64>>,
    /// Whether a function appended so far read the LSE flag.
    pub reads_lse_flag: bool,
}

impl Call<'_, '_, '_> {
    /// Appends the function at `at`, called with the object; returns
    /// whether it read the LSE flag.
    pub fn function(&mut self, at: u64) -> Result<bool, NotBuilt> {
        // The argument register holds the object; its value is a stand-in
        // (addresses are resolved at lift time), kept nonzero for NULL
        // tests.
        let arg = self.regs.get(self.lifter.first_argument());
        self.code.push(Instr::Assign {
            dst: arg,
            expr: Expr::int(OBJECT),
        });
        // Each call's allocations are its own (lift::heap).
        self.locs.heap.call += 1;
        let lifted = self
            .lifter
            .lift(self.file, at, self.obj, self.lse, self.regs, self.locs)
            .map_err(NotBuilt::Refused)?;
        self.origins.resize(self.code.len(), None);
        self.origins.extend(lifted.origins.iter().map(|&a| Some(a)));
        splice(self.code, lifted.code);
        self.reads_lse_flag |= lifted.reads_lse_flag;
        Ok(lifted.reads_lse_flag)
    }

    /// As [`Call::function`], with `second` in the second argument
    /// register (X1, a1, rsi): push's item, pop's item address.
    fn function_with(&mut self, at: u64, second: Expr) -> Result<bool, NotBuilt> {
        let r = self.regs.get(self.lifter.second_argument());
        self.code.push(Instr::Assign {
            dst: r,
            expr: second,
        });
        self.function(at)
    }

    /// As [`Call::function_with`], `second` being the address of object
    /// `to` (pop's item): the lifter resolves accesses through the second
    /// argument to that object's fields.
    fn function_pointing(&mut self, at: u64, to: usize, second: Expr) -> Result<bool, NotBuilt> {
        self.regs.pointers = vec![(1, to)];
        let lifted = self.function_with(at, second);
        self.regs.pointers.clear();
        lifted
    }

    /// The end of client thread `t` as `pthread_join` orders it: threads
    /// 1.. publish their `done` flag (false: the thread ends here), thread
    /// 0 waits for every flag (true: it goes on, after everything the
    /// others did).
    fn join(&mut self, t: usize, done: &[LocId]) -> bool {
        if t > 0 {
            // ORDERING: release, as a thread's exit before pthread_join:
            // everything the thread did happens before what thread 0 does
            // after the join.
            self.code.push(Instr::Store {
                addr: Expr::Const(Value::Loc(done[t - 1])),
                value: Expr::int(1),
                annot: release(),
            });
            return false;
        }
        let seen = self.regs.get("done.r");
        for d in done {
            // ORDERING: acquire, as pthread_join: pairs with the release
            // above. A wait that reads 0 writes nothing: spin-assume drops
            // it.
            let top = self.code.len();
            self.code.push(Instr::Load {
                dst: Some(seen),
                addr: Expr::Const(Value::Loc(*d)),
                annot: acquire(),
            });
            self.code.push(Instr::Branch {
                cond: Some(Expr::bin(BinOp::Eq, Expr::Reg(seen), Expr::int(0))),
                target: top,
            });
        }
        true
    }

    /// The end of lock client thread `t`: threads 1.. say they are done
    /// (`done`), thread 0 waits for them (as `pthread_join`) and calls
    /// `free_` (at `at`) on the unlocked lock, as the ABI says: once,
    /// when no thread uses it.
    fn free_last(&mut self, t: usize, done: &[LocId], at: u64) -> Result<(), NotBuilt> {
        // Its critical sections happen before free_.
        if !self.join(t, done) {
            return Ok(());
        }
        self.locs.heap.object_freeable = true;
        let lifted = self.function(at).map_err(|e| match e {
            NotBuilt::Refused(r) => NotBuilt::Refused(Refusal {
                what: format!("free_, which the client runs at the end: {}", r.what),
                ..r
            }),
            other => other,
        });
        self.locs.heap.object_freeable = false;
        lifted.map(|_| ())
    }

    /// Jumps back to `top` while the int the last function returned (W0,
    /// the low 32 bits of a0 or rax)
    /// is 0: push full, pop empty.
    fn retry_while_zero(&mut self, top: usize) {
        let x0 = self.regs.get(self.lifter.result());
        self.code.push(Instr::Branch {
            cond: Some(Expr::bin(
                BinOp::Eq,
                Expr::bin(BinOp::And, Expr::Reg(x0), Expr::int(0xffff_ffff)),
                Expr::int(0),
            )),
            target: top,
        });
    }

    /// A register `name` set to 1 when the int the last function returned
    /// (W0) is nonzero, else 0.
    fn result_flag(&mut self, name: &str) -> Reg {
        let x0 = self.regs.get(self.lifter.result());
        let r = self.regs.get(name);
        self.code.push(Instr::Assign {
            dst: r,
            expr: Expr::bin(
                BinOp::Ne,
                Expr::bin(BinOp::And, Expr::Reg(x0), Expr::int(0xffff_ffff)),
                Expr::int(0),
            ),
        });
        r
    }
}

/// Appends `part` (targets relative to its start, `part.len()` its end)
/// to `code`.
fn splice(code: &mut Vec<Instr>, part: Vec<Instr>) {
    let base = code.len();
    for i in part {
        code.push(match i {
            Instr::Branch { cond, target } => Instr::Branch {
                cond,
                target: base + target,
            },
            other => other,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// herd's meaning of `p` in the final state `vals` of `vars`.
    pub(super) fn holds(p: &Prop, vars: &[StateVar], vals: &[Value]) -> bool {
        let val = |v: &StateVar| vals[vars.iter().position(|x| x == v).unwrap()];
        match p {
            Prop::True => true,
            Prop::False => false,
            Prop::Atom(v, CmpOp::Eq, x) => val(v) == *x,
            Prop::Atom(v, CmpOp::Ne, x) => val(v) != *x,
            Prop::Same(a, CmpOp::Eq, b) => val(a) == val(b),
            Prop::Same(a, CmpOp::Ne, b) => val(a) != val(b),
            Prop::Not(q) => !holds(q, vars, vals),
            Prop::And(qs) => qs.iter().all(|q| holds(q, vars, vals)),
            Prop::Or(qs) => qs.iter().any(|q| holds(q, vars, vals)),
        }
    }

    /// The sentence for `vals`, checked against the test's condition: a
    /// state is explained as wrong exactly when the condition holds in it.
    pub(super) fn judged(p: &Property, vars: &[StateVar], vals: &[i64]) -> Option<String> {
        let vals: Vec<Value> = vals.iter().map(|v| Value::Int(*v)).collect();
        let why = p.wrong(vars, &vals);
        assert_eq!(
            holds(&p.condition(), vars, &vals),
            why.is_some(),
            "{vals:?}: condition and explanation disagree ({why:?})"
        );
        why
    }

    pub(super) fn reg(thread: usize, reg: Reg) -> StateVar {
        StateVar::Reg { thread, reg }
    }

    /// Every kind of the ABI has a client, and each client's kind is one.
    #[test]
    fn every_kind_has_one_client() {
        for k in Kind::all() {
            assert!(client_of(k).is_ok(), "{}", k.name());
        }
        assert_eq!(CLIENTS.len(), Kind::all().count());
    }
}
