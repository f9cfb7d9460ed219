//! The client a variant is checked with: a litmus test ([`Test`]) whose
//! threads call the variant's lifted functions, and whose condition holds
//! exactly when the variant is wrong.
//!
//! Lock: each of T threads does K critical sections, each a plain
//! read-increment-write of a shared `data`: `lock(l); r = data; data = r +
//! 1; unlock(l)`. With mutual exclusion (and the ordering a lock must give:
//! the last holder's writes visible to the next) every increment reads
//! the previous one and `data` ends at T·K; a lost update, from two
//! holders at once or from a stale read, leaves it lower. The condition
//! is `exists ([data] != T·K)`. The object starts zeroed, as `calloc`
//! returns it (the variant's `new_` is not lifted).

use atomlab_audit::{PluginFile, Pointer};
use atomlab_litmus::{
    BinOp, CmpOp, Condition, Expr, Instr, Prop, Quantifier, StateVar, Test, Thread, Value,
};

use crate::descriptor::Variant;
use crate::lift::{self, Locations, Refusal, Registers};

/// A built test and what it took.
pub struct Built {
    /// The test.
    pub test: Test,
    /// Whether an outline-atomics helper read the LSE flag (so the other
    /// value must be checked too).
    pub reads_lse_flag: bool,
    /// The value `data` must end with.
    pub expected: i64,
    /// Per thread, for each instruction of its code, the address of the
    /// machine instruction it was lifted from (`None`: the client's own).
    pub origins: Vec<Vec<Option<u64>>>,
    /// The lifter of the file's architecture (to disassemble `origins`).
    pub lifter: &'static dyn lift::Lifter,
}

/// Why a variant cannot be checked.
pub enum NotBuilt {
    /// Its code is outside what verify follows.
    Refused(Refusal),
    /// Its description says nothing verify can run (no such function).
    Missing(String),
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

/// The lock client for variant `v` (its `lock` and `unlock`), with
/// `threads` threads of `rounds` critical sections each.
pub fn lock_test(
    file: &PluginFile<'_>,
    v: &Variant,
    threads: usize,
    rounds: usize,
    lse: bool,
) -> Result<Built, NotBuilt> {
    let lifter = lift::lifter(file.arch()).ok_or_else(|| {
        NotBuilt::Missing(format!("{} code is not lifted yet", file.arch().name()))
    })?;
    let lock_at = entry(file, v, "lock")?;
    let unlock_at = entry(file, v, "unlock")?;
    let mut locs = Locations::default();
    let data = locs.plain("data");
    let obj = locs.object("lock");
    let mut out_threads = Vec::new();
    let mut origins = Vec::new();
    let mut reads_lse_flag = false;
    for t in 0..threads {
        let mut regs = Registers::default();
        let r = regs.get("data.r");
        let mut code: Vec<Instr> = Vec::new();
        let mut from: Vec<Option<u64>> = Vec::new();
        let mut call = Call {
            file,
            lifter,
            lse,
            obj,
            regs: &mut regs,
            locs: &mut locs,
            code: &mut code,
            origins: &mut from,
        };
        for _ in 0..rounds {
            reads_lse_flag |= call.function(lock_at)?;
            // The critical section: a plain read-increment-write.
            call.code.push(Instr::Load {
                dst: Some(r),
                addr: Expr::Const(Value::Loc(data)),
                annot: Default::default(),
            });
            call.code.push(Instr::Store {
                addr: Expr::Const(Value::Loc(data)),
                value: Expr::bin(BinOp::Add, Expr::Reg(r), Expr::int(1)),
                annot: Default::default(),
            });
            reads_lse_flag |= call.function(unlock_at)?;
        }
        from.resize(code.len(), None);
        origins.push(from);
        out_threads.push(Thread {
            id: t,
            regs: regs.names,
            init: Vec::new(),
            code,
        });
    }
    let expected = (threads * rounds) as i64;
    Ok(Built {
        test: Test {
            file: String::new(),
            arch: lifter.litmus_arch(),
            name: v.name.clone(),
            locations: locs.names,
            init: Vec::new(),
            threads: out_threads,
            observed: Vec::new(),
            filter: None,
            condition: Condition {
                quantifier: Quantifier::Exists,
                prop: Prop::Atom(StateVar::Loc(data), CmpOp::Ne, Value::Int(expected)),
            },
        },
        reads_lse_flag,
        expected,
        origins,
        lifter,
    })
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
            expr: Expr::int(0x1000),
        });
        let lifted = self
            .lifter
            .lift(self.file, at, self.obj, self.lse, self.regs, self.locs)
            .map_err(NotBuilt::Refused)?;
        self.origins.resize(self.code.len(), None);
        self.origins.extend(lifted.origins.iter().map(|&a| Some(a)));
        splice(self.code, lifted.code);
        Ok(lifted.reads_lse_flag)
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
