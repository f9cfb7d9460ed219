//! The object as the variant's `new_` leaves it: the initial values of
//! its fields, before any client thread starts (include/atomlab.h: "new_
//! returns an unlocked lock", "an object with one reference", "an empty
//! queue").
//!
//! `new_` allocates through the PLT (`calloc`, `malloc`, `aligned_alloc`),
//! which the lifter does not follow, so it is read in two halves, as a
//! C programmer reads it: the allocation call is found where lifting
//! `new_` from its entry stops (the lifter's refusal names that call's
//! address), and the code after the call (Arm ARM C6.2.34 BL: control
//! returns to the next instruction with the fresh memory in X0) is lifted
//! with X0 holding the object and run once, alone, by the checker: the
//! fields it stores are the object's initial values. A `new_` that is
//! only a tail call to `calloc` (`b calloc`) leaves every field zero.
//!
//! What is not followed: the code before the allocation (a capacity
//! check, say). A value computed there and stored after the call (a mask
//! from the capacity argument) would be wrong here, so the code after the
//! call is run twice with every register but X0 poisoned with different
//! values: if the object differs, the variant is refused, naming why.
//! Memory from `malloc` or `aligned_alloc` is not zeroed: a field the
//! client's functions use that `new_` does not store is refused too
//! ([`Initial::check_covers`]), where `calloc`'s would be zero.
//!
//! Only aarch64 files are read this way today; a file of another
//! architecture gets no initial state from `new_`, and the kinds whose
//! contract needs a nonzero field (a refcount starts at one) are refused
//! there, saying so ([`Initial::assumed_zero`]).

use atomlab_audit::{Arch, PluginFile, Pointer};
use atomlab_litmus::{Condition, Prop, Quantifier, StateVar, Test, Thread, Value};
use atomlab_model::{CheckOptions, Engine, LoopRule, ModelOutcome};

use crate::client::{Call, NotBuilt, OBJECT};
use crate::descriptor::Variant;
use crate::lift::{self, Locations, Registers};

/// The allocators whose result `new_` may return: fresh memory the
/// caller owns (zeroed for `calloc` only).
const ALLOCATORS: &[&str] = &["calloc", "malloc", "aligned_alloc"];

/// Two values a register cannot be expected to hold by chance; the code
/// after the allocation runs once with each in every register but X0.
/// (Poison in a base register is harmless: the lifter resolves addresses
/// to fields when it lifts, the register only joins them with a zero.)
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
    /// No `new_` was read (a file whose architecture `new_` is not read
    /// for): every field is taken to start at zero, as `calloc` leaves it.
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
            None => {
                "the object zeroed, as calloc leaves it (new_ is not read for this architecture)"
                    .into()
            }
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

/// Reads how `v`'s `new_` leaves object `obj`; `arg` is the value `new_`
/// is called with (the spsc capacity), documented, not followed.
pub fn read(
    file: &PluginFile<'_>,
    v: &Variant,
    lifter: &'static dyn lift::Lifter,
    lse: bool,
    obj: usize,
    locs: &mut Locations,
) -> Result<Initial, NotBuilt> {
    if file.arch() != Arch::Aarch64 {
        return Ok(Initial::assumed_zero());
    }
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
    // Lifting new_ from its entry stops at the allocation call (a call
    // through the PLT); a new_ that lifts whole allocates nothing.
    let mut scratch_regs = Registers::default();
    let mut scratch_locs = Locations::default();
    let o = scratch_locs.object("new");
    let stop = match lifter.lift(file, at, o, lse, &mut scratch_regs, &mut scratch_locs) {
        Ok(_) => {
            return Err(NotBuilt::Missing(format!(
                "new_ (at {at:#x}) calls no allocator (calloc, malloc, aligned_alloc): verify cannot tell which memory it returns"
            )))
        }
        Err(r) => r,
    };
    let word = file
        .code_at(stop.addr)
        .and_then(|c| c.get(..4))
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let call = word.and_then(|w| branch_target(stop.addr, w));
    let Some((target, linked)) = call else {
        return Err(NotBuilt::Refused(stop));
    };
    let allocator = match file.import_at(target) {
        Some(name) if ALLOCATORS.contains(&name) => name.to_string(),
        _ => return Err(NotBuilt::Refused(stop)),
    };
    if !linked {
        // `b calloc`: new_ returns the allocator's memory as it comes.
        return Ok(Initial {
            allocator: Some(allocator),
            values: Vec::new(),
            set: Vec::new(),
        });
    }
    // The code after the call, X0 the object, run alone (twice, poisoned
    // two ways): what it stores is the initial state.
    let mut states = Vec::new();
    for poison in POISON {
        let mut regs = Registers::default();
        let mut code = Vec::new();
        let mut origins = Vec::new();
        let mut call = Call {
            file,
            lifter,
            lse,
            obj,
            regs: &mut regs,
            locs,
            code: &mut code,
            origins: &mut origins,
            reads_lse_flag: false,
        };
        call.function(stop.addr + 4).map_err(|e| match e {
            NotBuilt::Refused(r) => NotBuilt::Refused(lift::Refusal {
                what: format!("new_, after its {allocator} call: {}", r.what),
                ..r
            }),
            other => other,
        })?;
        let arg = regs.get(lifter.first_argument());
        let init = (0..regs.names.len())
            .filter(|r| *r != arg)
            .map(|r| (r, Value::Int(poison)))
            .collect();
        let (values, returned) = run_alone(lifter, locs, regs.names, init, code, arg)?;
        // The functions are given what new_ returns: it must be the
        // allocation itself (X0 as the allocator left it), whose fields
        // new_ set.
        if returned != Value::Int(OBJECT) {
            return Err(NotBuilt::Missing(format!(
                "new_ returns something other than the memory its {allocator} call returned (an offset into it, or another pointer), which verify does not follow"
            )));
        }
        states.push(values);
    }
    if states[0] != states[1] {
        return Err(NotBuilt::Missing(format!(
            "new_ stores a value it computed before its {allocator} call (from its argument or a saved register), which verify does not follow: store constants after the allocation, or let the functions compute it"
        )));
    }
    let values: Vec<(usize, Value)> = states.remove(0);
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

/// The target of an A64 `BL` (linked) or `B` at `pc` (Arm ARM C6.2.34
/// BL and C6.2.26 B: `x00101` then imm26, the offset in words).
fn branch_target(pc: u64, w: u32) -> Option<(u64, bool)> {
    let linked = match w & 0xfc00_0000 {
        0x9400_0000 => true,
        0x1400_0000 => false,
        _ => return None,
    };
    let imm = ((w & 0x03ff_ffff) << 6) as i32 >> 4;
    Some((pc.wrapping_add(imm as i64 as u64), linked))
}

/// Runs `code` as a test's only thread, under `sc` (one thread: every
/// model agrees); returns the value of every location it stored, and
/// what register `result` ends with, or why not.
fn run_alone(
    lifter: &dyn lift::Lifter,
    locs: &Locations,
    regs: Vec<String>,
    init: Vec<(usize, Value)>,
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
        init: Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::branch_target;

    /// BL and B as objdump shows them in a -fPIC new_ (`bl 5b0
    /// <malloc@plt>` at 0x77c, `b 5c0 <calloc@plt>` at 0x6e0); anything
    /// else is not a call.
    #[test]
    fn bl_and_b_targets() {
        assert_eq!(branch_target(0x77c, 0x97ff_ff8d), Some((0x5b0, true)));
        assert_eq!(branch_target(0x6e0, 0x17ff_ffb8), Some((0x5c0, false)));
        assert_eq!(branch_target(0x100, 0x9400_0004), Some((0x110, true)));
        // RET, and BLR x1 (an indirect call).
        assert_eq!(branch_target(0x100, 0xd65f_03c0), None);
        assert_eq!(branch_target(0x100, 0xd63f_0020), None);
    }
}
