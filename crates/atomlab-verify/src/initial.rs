//! The object as the variant's `new_` leaves it: the initial values of
//! its fields, before any client thread starts (include/atomlab.h: "new_
//! returns an unlocked lock", "an object with one reference", "an empty
//! queue").
//!
//! `new_` is lifted whole, in any of the lifted instruction sets, with its
//! call to the allocator (`calloc`, `malloc`, `aligned_alloc` through the
//! PLT) followed as the client's functions' are ([`crate::lift::heap`]):
//! the allocation is a region of a scratch test, and `new_` runs once,
//! alone, by the checker, with the client's argument (the spsc capacity)
//! in its first argument register. The region's fields as `new_` leaves
//! them are the object's initial values, and what `new_` returns must be
//! the region itself (C17 7.22.3: the allocator's memory; `calloc`'s is
//! zero, `malloc`'s indeterminate).
//!
//! Every other register starts poisoned, twice with different values: a
//! `new_` whose object depends on a register it never set differs between
//! the runs and is refused, naming why. Memory from `malloc` or
//! `aligned_alloc` is not zeroed: a field the client's functions use that
//! `new_` does not store is refused too ([`Initial::check_covers`]),
//! where `calloc`'s would be zero. A `new_` that allocates more than once,
//! stores a pointer into its own allocation, or returns another pointer is
//! refused, saying which.

use atomlab_audit::{PluginFile, Pointer};
use atomlab_litmus::{Condition, Prop, Quantifier, StateVar, Test, Thread, Value};
use atomlab_model::{CheckOptions, Engine, LoopRule, ModelOutcome};

use crate::descriptor::Variant;
use crate::lift::{self, Locations, Registers};
use crate::not_built::NotBuilt;

/// Two values a register cannot be expected to hold by chance; `new_`
/// runs once with each in every register but its argument.
const POISON: [i64; 2] = [0x5eed_0000_0bad_0001, 0x0ddf_00d0_0bad_0002];

/// How the object starts.
#[derive(Debug, Clone)]
pub struct Initial {
    /// The allocator `new_` calls (`None`: not read, see
    /// [`Initial::assumed_zero`]).
    pub allocator: Option<String>,
    /// Field values `new_` stores (every other field is zero when the
    /// allocator is `calloc`).
    pub values: Vec<(usize, Value)>,
    /// The object's fields, by location name, that `new_` set.
    pub set: Vec<String>,
}

impl Initial {
    /// No `new_` was read (a hand-made client of the unit tests): every
    /// field is taken to start at zero, as `calloc` leaves it.
    pub fn assumed_zero() -> Initial {
        Initial {
            allocator: None,
            values: Vec::new(),
            set: Vec::new(),
        }
    }

    /// Whether the object's memory is zero where `new_` does not store.
    fn zeroed(&self) -> bool {
        self.allocator.as_deref().is_none_or(|a| a == "calloc")
    }

    /// One line for the PASS reason: how the object started.
    pub fn words(&self) -> String {
        match &self.allocator {
            None => "the object zeroed, as calloc leaves it (new_ not read)".into(),
            Some(a) if self.values.is_empty() => {
                format!("the object as new_ leaves it ({a}, no field set)")
            }
            Some(a) => format!(
                "the object as new_ leaves it ({a}, then {})",
                self.set.join(", ")
            ),
        }
    }

    /// After the client is built: every field of object `name` that the
    /// client's functions touch has a known initial value (a `malloc`ed
    /// field `new_` does not store holds whatever was there before).
    pub fn check_covers(&self, locs: &Locations, name: &str) -> Result<(), NotBuilt> {
        if self.zeroed() {
            return Ok(());
        }
        for (l, n) in locs.names.iter().enumerate() {
            let field = n == name || n.starts_with(&format!("{name}+"));
            if field && !self.values.iter().any(|(f, _)| *f == l) {
                return Err(NotBuilt::Missing(format!(
                    "the functions use {n}, which new_ leaves as {} returns it (uninitialised); initialise it in new_ (or allocate with calloc)",
                    self.allocator.as_deref().unwrap_or("malloc")
                )));
            }
        }
        Ok(())
    }
}

/// Reads how `v`'s `new_` leaves object `obj`, called with `arg` (the
/// spsc capacity; 0 for the kinds whose `new_` takes none).
#[allow(clippy::too_many_arguments)]
pub(crate) fn read(
    file: &PluginFile<'_>,
    v: &Variant,
    lifter: &'static dyn lift::Lifter,
    lse: bool,
    arg: i64,
    obj: usize,
    locs: &mut Locations,
) -> Result<Initial, NotBuilt> {
    let at = match v.function("new_") {
        Some(Pointer::Here(a)) if file.code_at(*a).is_some() => *a,
        Some(Pointer::Import(name)) => {
            return Err(NotBuilt::Missing(format!(
                "new_ is {name}, a function of another library: verify cannot tell how the object starts"
            )))
        }
        _ => {
            return Err(NotBuilt::Missing(
                "new_ is NULL or not code in the file: the ABI requires it (it makes the object the client uses)".into(),
            ))
        }
    };
    let mut states = Vec::new();
    let mut allocator = String::new();
    for poison in POISON {
        // A scratch test: new_'s allocation is its own region there.
        let mut scratch = Locations::default();
        let argument_of = scratch.object("new_'s argument");
        scratch.heap.follow = true;
        let mut regs = Registers::default();
        let a = regs.get(lifter.first_argument());
        let lifted = lifter
            .lift(file, at, argument_of, lse, &mut regs, &mut scratch)
            .map_err(|r| {
                NotBuilt::Refused(lift::Refusal {
                    what: format!("new_: {}", r.what),
                    ..r
                })
            })?;
        let region = match &scratch.heap.regions[..] {
            [] => {
                return Err(NotBuilt::Missing(format!(
                    "new_ (at {at:#x}) calls no allocator (calloc, malloc, aligned_alloc): verify cannot tell which memory it returns"
                )))
            }
            [r] => r.clone(),
            more => {
                return Err(NotBuilt::Missing(format!(
                    "new_ allocates {} times: verify follows an object that is one allocation",
                    more.len()
                )))
            }
        };
        allocator = region.key.allocator.clone();
        let init: Vec<(usize, Value)> = (0..regs.names.len())
            .map(|r| (r, Value::Int(if r == a { arg } else { poison })))
            .collect();
        let result = regs.get(lifter.result());
        let laid = scratch.fields_with(region.obj);
        let memory = scratch.heap_init(file);
        let (values, returned) = run_alone(
            lifter,
            &scratch,
            regs.names,
            init,
            memory,
            lifted.code,
            result,
        )?;
        // The functions are given what new_ returns: it must be the
        // allocation itself, whose fields new_ set.
        if returned != Value::Int(region.base) {
            return Err(NotBuilt::Missing(format!(
                "new_ returns something other than the memory its {allocator} call returned (an offset into it, or another pointer), which verify does not follow"
            )));
        }
        let mut state = Vec::new();
        for (off, l, w) in laid {
            let Some(&(_, value)) = values.iter().find(|(x, _)| *x == l) else {
                continue;
            };
            if let Value::Int(x) = value {
                if (region.base..region.base + lift::heap::REGION_STRIDE).contains(&x) {
                    return Err(NotBuilt::Missing(format!(
                        "new_ stores a pointer into its own allocation (at offset {off}), which verify does not follow"
                    )));
                }
            }
            state.push((off, w, value));
        }
        states.push(state);
    }
    if states[0] != states[1] {
        return Err(NotBuilt::Missing(
            "new_ stores a value it did not compute (from a register it never set), which differs from run to run: verify cannot tell how the object starts".into(),
        ));
    }
    let mut values = Vec::new();
    for (off, w, value) in states.remove(0) {
        let l = locs
            .field(obj, off, w)
            .map_err(|e| NotBuilt::Missing(format!("new_ {e}")))?;
        values.push((l, value));
    }
    let set = values
        .iter()
        .map(|(l, v)| match v {
            Value::Int(i) => format!("{} = {i}", locs.names[*l]),
            Value::Loc(x) => format!("{} = &{}", locs.names[*l], locs.names[*x]),
            Value::Sym(n) => format!("{} = S{n}", locs.names[*l]),
        })
        .collect();
    Ok(Initial {
        allocator: Some(allocator),
        values,
        set,
    })
}

/// Runs `code` as a test's only thread, under `sc` (one thread: every
/// model agrees); returns the value of every location it stored, and
/// what register `result` ends with, or why not.
fn run_alone(
    lifter: &dyn lift::Lifter,
    locs: &Locations,
    regs: Vec<String>,
    init: Vec<(usize, Value)>,
    memory: Vec<(usize, Value)>,
    code: Vec<atomlab_litmus::Instr>,
    result: usize,
) -> Result<(Vec<(usize, Value)>, Value), NotBuilt> {
    let returned = StateVar::Reg {
        thread: 0,
        reg: result,
    };
    let test = Test {
        file: String::new(),
        arch: lifter.litmus_arch(),
        name: "new_".into(),
        locations: locs.names.clone(),
        init: memory,
        threads: vec![Thread {
            id: 0,
            regs,
            init,
            code,
        }],
        observed: (0..locs.names.len())
            .map(StateVar::Loc)
            .chain([returned.clone()])
            .collect(),
        filter: None,
        condition: Condition {
            quantifier: Quantifier::Exists,
            prop: Prop::True,
        },
    };
    let opts = CheckOptions {
        engine: Engine::Explore,
        loops: Some(LoopRule { unroll: 8 }),
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_secs(10)),
        ..CheckOptions::default()
    };
    let why = |s: String| {
        NotBuilt::Missing(format!(
            "new_ (the code after its allocation) cannot be run alone: {s}"
        ))
    };
    match atomlab_model::check_test(&test, &["sc"], &opts).remove(0) {
        ModelOutcome::Done(r) if r.states.len() == 1 => {
            let vals = &r.states[0].0;
            let stored = r
                .vars
                .iter()
                .zip(vals)
                .filter_map(|(v, x)| match (v, x) {
                    (StateVar::Loc(l), Value::Int(0)) if !written(&test, *l) => None,
                    (StateVar::Loc(l), x) => Some((*l, *x)),
                    _ => None,
                })
                .collect();
            let ret = r
                .vars
                .iter()
                .position(|v| *v == returned)
                .map_or(Value::Int(0), |i| vals[i]);
            Ok((stored, ret))
        }
        ModelOutcome::Done(r) => Err(why(format!(
            "{} final states where one was expected",
            r.states.len()
        ))),
        ModelOutcome::Failed { error, .. } => Err(why(error.to_string())),
        ModelOutcome::Timeout { .. } => Err(why("it did not end within 10 s".into())),
        ModelOutcome::NotApplicable { reason, .. } => Err(why(reason)),
    }
}

/// Whether `test`'s code writes location `l` (with a constant address).
fn written(test: &Test, l: usize) -> bool {
    use atomlab_litmus::{Expr, Instr};
    fn names(e: &Expr, l: usize) -> bool {
        match e {
            Expr::Const(Value::Loc(x)) => *x == l,
            Expr::Bin(_, a, b) => names(a, l) || names(b, l),
            Expr::Not(a) => names(a, l),
            _ => false,
        }
    }
    test.threads.iter().flat_map(|t| &t.code).any(|i| match i {
        Instr::Store { addr, .. }
        | Instr::StoreExclusive { addr, .. }
        | Instr::Rmw { addr, .. }
        | Instr::Cas { addr, .. } => names(addr, l),
        _ => false,
    })
}
