//! The client a variant is checked with: a litmus test ([`Test`]) whose
//! threads call the variant's lifted functions, and whose condition holds
//! exactly when the variant breaks its kind's contract
//! (include/atomlab.h). One client per kind, after the test clients GenMC
//! checks data structures with (its tests/correct/data-structures: a
//! fixed number of threads, a few operations each, an assertion on what
//! they saw):
//!
//! - lock: each of T threads does K critical sections, each a plain
//!   read-increment-write of a shared `data`:
//!   `lock(l); r = data; data = r + 1; unlock(l)`. With mutual exclusion (and the ordering a lock must
//!   give: the last holder's writes visible to the next) every increment
//!   reads the previous one and `data` ends at T·K; a lost update, from
//!   two holders at once or from a stale read, leaves it lower.
//! - spsc: one producer pushes 1, 2, …, k (a push that says full is
//!   retried), one consumer pops k items (a pop that says empty is
//!   retried) through an item of its own (`pop(q, &item)`); the queue is
//!   made with `new_(2)` and k = 3, so the third item reuses the first
//!   slot (the ring wraps). The consumer must see exactly 1, 2, …, k in
//!   order: none lost, duplicated, reordered or torn (a slot read before
//!   the producer's write reached it shows as 0, never pushed). The item
//!   is an object of the client's ([`crate::lift::Registers::pointers`]):
//!   pop's store through its second argument lands in it. A ring's slot
//!   indexed by a register (`slot[t & (N - 1)]`) is one of the few fields
//!   the masked index can pick, chosen per execution by the index's value
//!   ([`crate::lift::index`]); a slot computed any other way is refused,
//!   naming the instruction.
//! - refcount: the object starts with the one reference `new_` gives,
//!   held by thread 0, which takes one more for each other thread (`get`)
//!   and hands it over through a flag (release, then the receiver's
//!   acquire: the order of the queue or `pthread_create` a reference is
//!   passed through), so every `get` runs beside the others' `put`s.
//!   Each thread, holding one reference, writes a plain field of its own
//!   (`use.t = 1`: its use of the object), then K − 1 times takes and
//!   drops another (`get`, `put`: that put must not say "last", the
//!   thread still holds one), then drops its own. Exactly one put says
//!   "last", and the thread it says so to reads every other holder's
//!   `use`: a 0 there is a use the freer does not see, i.e. "last" came
//!   while another holder's use could still land after the free (a
//!   missing release/acquire pair).
//! - op: each of T threads calls `op` K times. When the variant has
//!   `read`, thread 0 then waits for the others to finish (each publishes
//!   a `done` flag with release; thread 0 awaits each with acquire, as
//!   `pthread_join` orders them) and calls `read`, which must return T·K.
//!   Without `read` nothing says what the state should be: the check is
//!   that every execution of the T·K operations runs to its end (no
//!   refusal, no bound), which is all a PASS then claims.
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

/// A holder of the refcount client: its thread's registers in the final
/// state.
#[derive(Debug, Clone)]
pub struct Holder {
    /// The thread.
    pub thread: usize,
    /// 1 when its last put said "last".
    pub last: StateVar,
    /// 1 when one of its inner puts (it still held a reference) said "last".
    pub early: Vec<StateVar>,
    /// What it read of each other holder's `use` after its put said
    /// "last": (the other thread, the register).
    pub saw: Vec<(usize, StateVar)>,
}

/// What a client checks: its condition (the test's `exists`) and the
/// sentence a wrong final state reads as.
#[derive(Debug, Clone)]
pub enum Property {
    /// Mutual exclusion: `data` ends at `expected`.
    Lock {
        /// The shared counter.
        data: LocId,
        /// Threads × critical sections.
        expected: i64,
    },
    /// FIFO: the consumer pops 1, 2, …, k.
    Spsc {
        /// What the consumer popped, in order.
        popped: Vec<StateVar>,
    },
    /// "last" exactly once, never early.
    Refcount {
        /// The holders.
        holders: Vec<Holder>,
    },
    /// `read()` returns every operation.
    Op {
        /// The register `read`'s result lands in (`None`: no `read`).
        total: Option<StateVar>,
        /// Threads × operations.
        expected: i64,
    },
}

fn int(v: i64) -> Value {
    Value::Int(v)
}

impl Property {
    /// The proposition that holds exactly in a wrong final state.
    pub fn condition(&self) -> Prop {
        let ne = |v: &StateVar, x: i64| Prop::Atom(v.clone(), CmpOp::Ne, int(x));
        let eq = |v: &StateVar, x: i64| Prop::Atom(v.clone(), CmpOp::Eq, int(x));
        match self {
            Property::Lock { data, expected } => ne(&StateVar::Loc(*data), *expected),
            Property::Spsc { popped } => any(popped
                .iter()
                .enumerate()
                .map(|(i, v)| ne(v, i as i64 + 1))
                .collect()),
            Property::Refcount { holders } => {
                let mut wrong: Vec<Prop> = Vec::new();
                for h in holders {
                    wrong.extend(h.early.iter().map(|e| ne(e, 0)));
                    for (_, s) in &h.saw {
                        wrong.push(Prop::And(vec![eq(&h.last, 1), ne(s, 1)]));
                    }
                }
                // Every assignment of "last" to the holders but those
                // with exactly one.
                let n = holders.len();
                for bits in 0u32..(1 << n) {
                    if bits.count_ones() != 1 {
                        wrong.push(Prop::And(
                            holders
                                .iter()
                                .enumerate()
                                .map(|(i, h)| eq(&h.last, i64::from((bits >> i) & 1)))
                                .collect(),
                        ));
                    }
                }
                any(wrong)
            }
            Property::Op { total, expected } => match total {
                Some(t) => ne(t, *expected),
                None => Prop::False,
            },
        }
    }

    /// What a PASS establishes, in words.
    pub fn checked(&self, threads: usize, rounds: usize) -> String {
        match self {
            Property::Lock { data, expected } => {
                let _ = data;
                format!(
                    "mutual exclusion: {threads} threads x {rounds} critical section(s) of a plain read-increment-write always end with data = {expected}"
                )
            }
            Property::Spsc { popped } => format!(
                "FIFO: a producer pushing 1..{k} (retrying while full) and a consumer popping {k} items (retrying while empty) through a queue made with new_({SPSC_CAPACITY}) always see 1..{k} in order (none lost, duplicated, reordered or torn)",
                k = popped.len()
            ),
            Property::Refcount { holders } => format!(
                "{} holders (thread 0 takes a reference for each other thread and hands it over), each using the object, taking and dropping {} more reference(s) (get, put), then dropping its own: exactly one put says last, never one of a holder that still holds a reference, and the last one sees every holder's use",
                holders.len(),
                rounds.saturating_sub(1)
            ),
            Property::Op { total: Some(_), expected } => format!(
                "{threads} threads x {rounds} op(s), then read() after joining them: always {expected}"
            ),
            Property::Op { total: None, .. } => format!(
                "{threads} threads x {rounds} op(s) run to the end in every execution (the variant has no read(): no total is checked)"
            ),
        }
    }

    /// The broken property, in a sentence, if the final state `vals` (of
    /// `vars`, as the checker reports them) is wrong.
    pub fn wrong(&self, vars: &[StateVar], vals: &[Value]) -> Option<String> {
        let get = |v: &StateVar| -> Option<i64> {
            match vars.iter().position(|x| x == v).map(|i| vals[i]) {
                Some(Value::Int(i)) => Some(i),
                _ => None,
            }
        };
        match self {
            Property::Lock { data, expected } => {
                let d = get(&StateVar::Loc(*data))?;
                (d != *expected).then(|| format!(
                    "mutual exclusion broken: an execution ends with data = {d} instead of {expected}: an update was lost, so two threads were in the critical section or one read stale data"
                ))
            }
            Property::Spsc { popped } => {
                let got: Vec<i64> = popped.iter().map(|v| get(v).unwrap_or(-1)).collect();
                let k = got.len() as i64;
                let want: Vec<i64> = (1..=k).collect();
                if got == want {
                    return None;
                }
                let seen = format!(
                    "the consumer popped {}",
                    got.iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                let why = if let Some(x) = got.iter().find(|x| !(1..=k).contains(*x)) {
                    format!("{x} was never pushed: a slot read before the producer's write of it was visible (torn or stale)")
                } else if let Some(x) = want
                    .iter()
                    .find(|x| got.iter().filter(|g| g == x).count() > 1)
                {
                    format!("item {x} came out twice (duplicated)")
                } else if let Some(x) = want.iter().find(|x| !got.contains(x)) {
                    format!("item {x} never came out (lost)")
                } else {
                    "the items came out of order".into()
                };
                Some(format!(
                    "FIFO broken: {seen} instead of {}: {why}",
                    want.iter()
                        .map(i64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            }
            Property::Refcount { holders } => {
                for h in holders {
                    if h.early.iter().any(|e| get(e).is_some_and(|x| x != 0)) {
                        return Some(format!(
                            "early \"last\": a put of T{} said last while T{} still held a reference",
                            h.thread, h.thread
                        ));
                    }
                }
                let lasts: Vec<usize> = holders
                    .iter()
                    .filter(|h| get(&h.last) == Some(1))
                    .map(|h| h.thread)
                    .collect();
                match lasts.as_slice() {
                    [] => Some(
                        "no put said last: a reference is never dropped (the object leaks)".into(),
                    ),
                    [t] => {
                        let h = holders.iter().find(|h| h.thread == *t)?;
                        for (j, s) in &h.saw {
                            if get(s) != Some(1) {
                                return Some(format!(
                                    "early \"last\": T{t}'s put said last, then T{t} read T{j}'s use of the object as {} instead of 1: T{j}'s use, made while it held its reference, is not visible to the thread that frees the object (a put without release, or a last put without acquire)",
                                    get(s).map_or("?".into(), |x| x.to_string())
                                ));
                            }
                        }
                        None
                    }
                    many => Some(format!(
                        "\"last\" more than once: the puts of {} all said last (the object would be freed twice)",
                        many.iter().map(|t| format!("T{t}")).collect::<Vec<_>>().join(" and ")
                    )),
                }
            }
            Property::Op { total, expected } => {
                let v = get(total.as_ref()?)?;
                (v != *expected).then(|| {
                    if v > *expected {
                        // More than were made: not a lost update.
                        format!(
                            "read() returned {v} instead of {expected} after every op: more than the ops made (read must count the ops since new_: does new_ start the state at zero?)"
                        )
                    } else {
                        format!(
                            "read() returned {v} instead of {expected} after every op: an update was lost (the op is not one atomic read-modify-write)"
                        )
                    }
                })
            }
        }
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
    // new_'s argument: the capacity the spsc client asks for; the other
    // kinds' new_ takes none.
    let arg = if kind == Kind::Spsc {
        SPSC_CAPACITY as i64
    } else {
        0
    };
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
    let name = match kind {
        Kind::Lock => "lock",
        Kind::Spsc => "queue",
        Kind::Refcount => "obj",
        Kind::Op => "state",
    };
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
    let property = match kind {
        Kind::Lock => c.lock(v, obj, size.threads, size.rounds)?,
        Kind::Spsc => c.spsc(v, obj, size.items)?,
        Kind::Refcount => c.refcount(v, obj, size.threads, size.rounds)?,
        Kind::Op => c.op(v, obj, size.threads, size.rounds)?,
    };
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

    fn lock(
        &mut self,
        v: &Variant,
        obj: usize,
        threads: usize,
        rounds: usize,
    ) -> Result<Property, NotBuilt> {
        let lock_at = entry(self.file, v, "lock")?;
        let unlock_at = entry(self.file, v, "unlock")?;
        let free_at = free_entry(v)?;
        let data = self.locs.plain("data");
        let done: Vec<LocId> = match free_at {
            Some(_) => (1..threads)
                .map(|t| self.locs.plain(&format!("done{t}")))
                .collect(),
            None => Vec::new(),
        };
        for t in 0..threads {
            let done = &done;
            self.thread(obj, |call| {
                let r = call.regs.get("data.r");
                for _ in 0..rounds {
                    call.function(lock_at)?;
                    // The critical section: a plain read-increment-write.
                    call.code.push(Instr::Load {
                        dst: Some(r),
                        addr: Expr::Const(Value::Loc(data)),
                        annot: Annot::default(),
                    });
                    call.code.push(Instr::Store {
                        addr: Expr::Const(Value::Loc(data)),
                        value: Expr::bin(BinOp::Add, Expr::Reg(r), Expr::int(1)),
                        annot: Annot::default(),
                    });
                    call.function(unlock_at)?;
                }
                match free_at {
                    Some(at) => call.free_last(t, done, at),
                    None => Ok(()),
                }
            })?;
        }
        Ok(Property::Lock {
            data,
            expected: (threads * rounds) as i64,
        })
    }

    fn spsc(&mut self, v: &Variant, obj: usize, items: usize) -> Result<Property, NotBuilt> {
        let push_at = entry(self.file, v, "push")?;
        let pop_at = entry(self.file, v, "pop")?;
        // The consumer's `uint64_t item` that pop stores through: an
        // object of its own, so the lifter resolves pop's store through
        // its second argument to it.
        let item_obj = self.locs.object("item");
        let item = self.locs.field(item_obj, 0, 8).map_err(NotBuilt::Missing)?;
        self.thread(obj, |call| {
            for i in 1..=items as i64 {
                // Retried while full: a failed push writes nothing, so
                // spin-assume drops the retry.
                let top = call.code.len();
                call.function_with(push_at, Expr::int(i))?;
                call.retry_while_zero(top);
            }
            Ok(())
        })?;
        let mut popped = Vec::new();
        let consumer = self.threads.len();
        self.thread(obj, |call| {
            for j in 0..items {
                let top = call.code.len();
                call.function_pointing(pop_at, item_obj, Expr::Const(Value::Loc(item)))?;
                call.retry_while_zero(top);
                let got = call.regs.get(&format!("popped{}", j + 1));
                call.code.push(Instr::Load {
                    dst: Some(got),
                    addr: Expr::Const(Value::Loc(item)),
                    annot: Annot::default(),
                });
                popped.push(StateVar::Reg {
                    thread: consumer,
                    reg: got,
                });
            }
            Ok(())
        })?;
        Ok(Property::Spsc { popped })
    }

    fn refcount(
        &mut self,
        v: &Variant,
        obj: usize,
        threads: usize,
        rounds: usize,
    ) -> Result<Property, NotBuilt> {
        let get_at = entry(self.file, v, "get")?;
        let put_at = entry(self.file, v, "put")?;
        let uses: Vec<LocId> = (0..threads)
            .map(|t| self.locs.plain(&format!("use{t}")))
            .collect();
        // Thread 0 hands a reference to each other thread through `ref.t`.
        let handed: Vec<LocId> = (1..threads)
            .map(|t| self.locs.plain(&format!("ref{t}")))
            .collect();
        let mut holders = Vec::new();
        for t in 0..threads {
            let mut holder = Holder {
                thread: t,
                last: StateVar::Loc(0),
                early: Vec::new(),
                saw: Vec::new(),
            };
            let (uses, handed) = (&uses, &handed);
            self.thread(obj, |call| {
                if t == 0 {
                    for h in handed {
                        call.function(get_at)?;
                        // ORDERING: release, as the queue or
                        // pthread_create a reference is passed through.
                        call.code.push(Instr::Store {
                            addr: Expr::Const(Value::Loc(*h)),
                            value: Expr::int(1),
                            annot: release(),
                        });
                    }
                } else {
                    // ORDERING: acquire: pairs with the hand-over's
                    // release. A wait that reads 0 writes nothing:
                    // spin-assume drops it.
                    let seen = call.regs.get("ref.r");
                    let top = call.code.len();
                    call.code.push(Instr::Load {
                        dst: Some(seen),
                        addr: Expr::Const(Value::Loc(handed[t - 1])),
                        annot: acquire(),
                    });
                    call.code.push(Instr::Branch {
                        cond: Some(Expr::bin(BinOp::Eq, Expr::Reg(seen), Expr::int(0))),
                        target: top,
                    });
                }
                // Its use of the object while it holds a reference.
                call.code.push(Instr::Store {
                    addr: Expr::Const(Value::Loc(uses[t])),
                    value: Expr::int(1),
                    annot: Annot::default(),
                });
                for k in 1..rounds {
                    call.function(get_at)?;
                    call.function(put_at)?;
                    let e = call.result_flag(&format!("early{k}"));
                    holder.early.push(StateVar::Reg { thread: t, reg: e });
                }
                call.function(put_at)?;
                let last = call.result_flag("last");
                holder.last = StateVar::Reg {
                    thread: t,
                    reg: last,
                };
                // Only the thread told "last" looks at the others' uses.
                let skip = call.code.len();
                call.code.push(Instr::Branch {
                    cond: None,
                    target: 0,
                });
                for (j, u) in uses.iter().enumerate().filter(|(j, _)| *j != t) {
                    let r = call.regs.get(&format!("saw.use{j}"));
                    call.code.push(Instr::Load {
                        dst: Some(r),
                        addr: Expr::Const(Value::Loc(*u)),
                        annot: Annot::default(),
                    });
                    holder.saw.push((j, StateVar::Reg { thread: t, reg: r }));
                }
                let end = call.code.len();
                call.code[skip] = Instr::Branch {
                    cond: Some(Expr::bin(BinOp::Eq, Expr::Reg(last), Expr::int(0))),
                    target: end,
                };
                Ok(())
            })?;
            holders.push(holder);
        }
        Ok(Property::Refcount { holders })
    }

    fn op(
        &mut self,
        v: &Variant,
        obj: usize,
        threads: usize,
        rounds: usize,
    ) -> Result<Property, NotBuilt> {
        let op_at = entry(self.file, v, "op")?;
        let read_at = match v.function("read") {
            Some(Pointer::Null) | None => None,
            Some(_) => Some(entry(self.file, v, "read")?),
        };
        let done: Vec<LocId> = match read_at {
            Some(_) => (1..threads)
                .map(|t| self.locs.plain(&format!("done{t}")))
                .collect(),
            None => Vec::new(),
        };
        let mut total = None;
        for t in 0..threads {
            let done = &done;
            self.thread(obj, |call| {
                for _ in 0..rounds {
                    call.function(op_at)?;
                }
                let Some(read_at) = read_at else {
                    return Ok(());
                };
                // Its ops happen before the read, as pthread_join orders them.
                if !call.join(t, done) {
                    return Ok(());
                }
                call.function(read_at)?;
                let r = call.regs.get("total");
                let x0 = call.regs.get(call.lifter.result());
                call.code.push(Instr::Assign {
                    dst: r,
                    expr: Expr::Reg(x0),
                });
                total = Some(StateVar::Reg { thread: 0, reg: r });
                Ok(())
            })?;
        }
        Ok(Property::Op {
            total,
            expected: (threads * rounds) as i64,
        })
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
    fn holds(p: &Prop, vars: &[StateVar], vals: &[Value]) -> bool {
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
    fn judged(p: &Property, vars: &[StateVar], vals: &[i64]) -> Option<String> {
        let vals: Vec<Value> = vals.iter().map(|v| Value::Int(*v)).collect();
        let why = p.wrong(vars, &vals);
        assert_eq!(
            holds(&p.condition(), vars, &vals),
            why.is_some(),
            "{vals:?}: condition and explanation disagree ({why:?})"
        );
        why
    }

    fn reg(thread: usize, reg: Reg) -> StateVar {
        StateVar::Reg { thread, reg }
    }

    #[test]
    fn lock_lost_update() {
        let p = Property::Lock {
            data: 0,
            expected: 2,
        };
        let vars = [StateVar::Loc(0)];
        assert_eq!(judged(&p, &vars, &[2]), None);
        let why = judged(&p, &vars, &[1]).unwrap();
        assert!(
            why.starts_with(
                "mutual exclusion broken: an execution ends with data = 1 instead of 2"
            ),
            "{why}"
        );
    }

    #[test]
    fn spsc_names_what_the_consumer_saw() {
        let popped: Vec<StateVar> = (0..3).map(|r| reg(1, r)).collect();
        let p = Property::Spsc {
            popped: popped.clone(),
        };
        assert_eq!(judged(&p, &popped, &[1, 2, 3]), None);
        let why = |v: &[i64]| judged(&p, &popped, v).unwrap();
        assert!(
            why(&[1, 0, 3]).contains("popped 1, 0, 3 instead of 1, 2, 3: 0 was never pushed"),
            "{}",
            why(&[1, 0, 3])
        );
        assert!(why(&[1, 1, 3]).contains("item 1 came out twice (duplicated)"));
        assert!(why(&[1, 3, 2]).contains("came out of order"));
        for w in [why(&[1, 0, 3]), why(&[1, 3, 2])] {
            assert!(w.starts_with("FIFO broken: "), "{w}");
        }
    }

    #[test]
    fn refcount_last_once_never_early() {
        // T0: last = r0, early = r1, saw T1's use = r2; T1: r0, r1, r2.
        let holders: Vec<Holder> = (0..2)
            .map(|t| Holder {
                thread: t,
                last: reg(t, 0),
                early: vec![reg(t, 1)],
                saw: vec![(1 - t, reg(t, 2))],
            })
            .collect();
        let vars: Vec<StateVar> = (0..2)
            .flat_map(|t| (0..3).map(move |r| reg(t, r)))
            .collect();
        let p = Property::Refcount { holders };
        // T1 last and saw T0's use: right (T0 never looked: its saw is 0).
        assert_eq!(judged(&p, &vars, &[0, 0, 0, 1, 0, 1]), None);
        let why = |v: &[i64]| judged(&p, &vars, v).unwrap();
        assert!(why(&[0, 0, 0, 1, 0, 0]).starts_with(
            "early \"last\": T1's put said last, then T1 read T0's use of the object as 0"
        ));
        assert!(
            why(&[1, 0, 1, 1, 0, 1]).starts_with("\"last\" more than once: the puts of T0 and T1")
        );
        assert!(why(&[0, 0, 0, 0, 0, 0]).starts_with("no put said last"));
        assert!(why(&[1, 0, 1, 0, 1, 0])
            .starts_with("early \"last\": a put of T1 said last while T1 still held a reference"));
    }

    #[test]
    fn op_total_with_and_without_read() {
        let total = reg(0, 4);
        let p = Property::Op {
            total: Some(total.clone()),
            expected: 4,
        };
        let vars = [total];
        assert_eq!(judged(&p, &vars, &[4]), None);
        assert!(judged(&p, &vars, &[3])
            .unwrap()
            .contains("returned 3 instead of 4 after every op: an update was lost"));
        // More than the ops made is no lost update: the state did not
        // start at zero.
        let more = judged(&p, &vars, &[11]).unwrap();
        assert!(
            more.contains("more than the ops made") && !more.contains("lost"),
            "{more}"
        );
        let none = Property::Op {
            total: None,
            expected: 4,
        };
        assert_eq!(none.condition(), Prop::False);
        assert!(none
            .checked(2, 2)
            .contains("has no read(): no total is checked"));
    }

    /// Lamport's two-slot ring as hand-written checker code, to test the
    /// client alone (the lifted rings of tests/plugins/verify_kinds.c are
    /// tested end to end in tests/verify_kinds.rs): the slot chosen by a
    /// branch on the index's low bit, `[X1]` the item address the client
    /// passes. Publishing `head` (the producer's) or `tail` (the
    /// consumer's) with release or, for the broken ones, plain.
    struct HandLiftedRing {
        release_head: bool,
        release_tail: bool,
    }

    /// `push` and `pop`'s "addresses": any two instructions of the file.
    fn entries(file: &PluginFile<'_>) -> (u64, u64) {
        let main = file.symbol("main").expect("the test binary has main");
        (main, main + 4)
    }

    impl lift::Lifter for HandLiftedRing {
        fn first_argument(&self) -> &'static str {
            "X0"
        }
        fn second_argument(&self) -> &'static str {
            "X1"
        }
        fn result(&self) -> &'static str {
            "X0"
        }
        fn litmus_arch(&self) -> atomlab_litmus::Arch {
            atomlab_litmus::Arch::AArch64
        }
        fn disassemble(&self, _: &PluginFile<'_>, _: u64) -> Option<String> {
            None
        }
        fn lift(
            &self,
            file: &PluginFile<'_>,
            entry: u64,
            obj: usize,
            _lse: bool,
            regs: &mut Registers,
            locs: &mut Locations,
        ) -> Result<lift::Lifted, Refusal> {
            let field = |locs: &mut Locations, off| {
                locs.field(obj, off, 8).map(|l| Expr::Const(Value::Loc(l)))
            };
            let (head, tail) = (field(locs, 0).unwrap(), field(locs, 8).unwrap());
            let slots = [field(locs, 16).unwrap(), field(locs, 24).unwrap()];
            let (x0, x1) = (regs.get("X0"), regs.get("X1"));
            let (mine, theirs, v) = (regs.get("mine"), regs.get("theirs"), regs.get("v"));
            let plain = Annot::default();
            let order = |release: bool| if release { super::release() } else { plain };
            let r = |x| Expr::Reg(x);
            let odd = Expr::bin(
                BinOp::Ne,
                Expr::bin(BinOp::And, r(mine), Expr::int(1)),
                Expr::int(0),
            );
            let br = |cond: Option<Expr>, target| Instr::Branch { cond, target };
            let set = |dst, v| Instr::Assign {
                dst,
                expr: Expr::int(v),
            };
            let code = if entry == entries(file).0 {
                vec![
                    Instr::Load {
                        dst: Some(mine),
                        addr: head.clone(),
                        annot: plain,
                    },
                    Instr::Load {
                        dst: Some(theirs),
                        addr: tail,
                        annot: acquire(),
                    },
                    br(
                        Some(Expr::bin(
                            BinOp::Eq,
                            Expr::bin(BinOp::Sub, r(mine), r(theirs)),
                            Expr::int(2),
                        )),
                        10,
                    ),
                    br(Some(odd), 6),
                    Instr::Store {
                        addr: slots[0].clone(),
                        value: r(x1),
                        annot: plain,
                    },
                    br(None, 7),
                    Instr::Store {
                        addr: slots[1].clone(),
                        value: r(x1),
                        annot: plain,
                    },
                    Instr::Store {
                        addr: head,
                        value: Expr::bin(BinOp::Add, r(mine), Expr::int(1)),
                        annot: order(self.release_head),
                    },
                    set(x0, 1),
                    br(None, 11),
                    set(x0, 0),
                ]
            } else {
                vec![
                    Instr::Load {
                        dst: Some(mine),
                        addr: tail.clone(),
                        annot: plain,
                    },
                    Instr::Load {
                        dst: Some(theirs),
                        addr: head,
                        annot: acquire(),
                    },
                    br(Some(Expr::bin(BinOp::Eq, r(mine), r(theirs))), 11),
                    br(Some(odd), 6),
                    Instr::Load {
                        dst: Some(v),
                        addr: slots[0].clone(),
                        annot: plain,
                    },
                    br(None, 7),
                    Instr::Load {
                        dst: Some(v),
                        addr: slots[1].clone(),
                        annot: plain,
                    },
                    Instr::Store {
                        addr: r(x1),
                        value: r(v),
                        annot: plain,
                    },
                    Instr::Store {
                        addr: tail,
                        value: Expr::bin(BinOp::Add, r(mine), Expr::int(1)),
                        annot: order(self.release_tail),
                    },
                    set(x0, 1),
                    br(None, 12),
                    set(x0, 0),
                ]
            };
            Ok(lift::Lifted {
                origins: vec![entry; code.len()],
                code,
                reads_lse_flag: false,
            })
        }
    }

    static RING: HandLiftedRing = HandLiftedRing {
        release_head: true,
        release_tail: true,
    };
    static RELAXED_HEAD: HandLiftedRing = HandLiftedRing {
        release_head: false,
        release_tail: true,
    };
    static RELAXED_TAIL: HandLiftedRing = HandLiftedRing {
        release_head: true,
        release_tail: false,
    };

    /// The spsc client end to end on a hand-lifted ring: FIFO holds with
    /// release/acquire indices under aarch64; a relaxed publish of head
    /// shows a slot read before its item (popped 0), a relaxed release of
    /// tail lets the third push, which wraps to slot 0, overwrite the
    /// first item before it was read; sc forbids both. The retries
    /// (push full, pop empty) are spin-assume awaits: a handful of
    /// executions, no bound.
    #[test]
    fn spsc_client_on_a_hand_lifted_ring() {
        let exe = std::env::current_exe().unwrap();
        let data = std::fs::read(&exe).unwrap();
        let file = PluginFile::parse("test binary", &data).unwrap();
        let (push, pop) = entries(&file);
        let v = Variant {
            name: "ring".into(),
            kind: Some(Kind::Spsc),
            functions: vec![
                ("new_", Pointer::Null),
                ("push", Pointer::Here(push)),
                ("pop", Pointer::Here(pop)),
            ],
        };
        let opts = crate::Options {
            variants: None,
            models: None,
            threads: 2,
            rounds: 1,
            items: SPSC_ITEMS,
            unroll: 4,
            timeout: std::time::Duration::from_secs(60),
            advise: false,
            progress: None,
        };
        let judge = |ring: &'static HandLiftedRing, model: &str| {
            let b = build_with(&file, &v, Kind::Spsc, ring, opts.size(), false, |_, _| {
                Ok(Initial::assumed_zero())
            })
            .unwrap_or_else(|_| panic!("the spsc client builds"));
            crate::judge(&b, model, &opts)
        };
        for model in ["aarch64", "sc"] {
            let j = judge(&RING, model);
            assert_eq!(j.verdict, crate::Verdict::Pass, "{model}: {}", j.reason);
            assert!(
                j.reason.starts_with("FIFO: a producer pushing 1..3"),
                "{}",
                j.reason
            );
            assert!(j.executions < 64, "{model}: {} executions", j.executions);
        }
        let j = judge(&RELAXED_HEAD, "aarch64");
        assert_eq!(j.verdict, crate::Verdict::Fail, "{}", j.reason);
        assert!(
            j.reason.starts_with("FIFO broken: the consumer popped "),
            "{}",
            j.reason
        );
        assert!(j.reason.contains("0 was never pushed"), "{}", j.reason);
        let j = judge(&RELAXED_TAIL, "aarch64");
        assert_eq!(j.verdict, crate::Verdict::Fail, "{}", j.reason);
        assert!(j.reason.contains("popped 3, 2, 3"), "{}", j.reason);
        for ring in [&RELAXED_HEAD, &RELAXED_TAIL] {
            let j = judge(ring, "sc");
            assert_eq!(j.verdict, crate::Verdict::Pass, "sc: {}", j.reason);
        }
    }
}
