//! The refcount client: the object starts with the one reference `new_`
//! gives, held by thread 0, which takes one more for each other thread
//! (`get`) and hands it over through a flag (release, then the
//! receiver's acquire: the order of the queue or `pthread_create` a
//! reference is passed through), so every `get` runs beside the others'
//! `put`s. Each thread, holding one reference, writes a plain field of
//! its own (`use.t = 1`: its use of the object), then K − 1 times takes
//! and drops another (`get`, `put`: that put must not say "last", the
//! thread still holds one), then drops its own. Exactly one put says
//! "last", and the thread it says so to reads every other holder's
//! `use`: a 0 there is a use the freer does not see, i.e. "last" came
//! while another holder's use could still land after the free (a
//! missing release/acquire pair).

use atomlab_litmus::{Annot, BinOp, Expr, Instr, LocId, Prop, StateVar, Value};

use super::{
    acquire, any, entry, eq, ne, release, value_of, Client, Contract, KindClient, Property,
};
use crate::descriptor::Variant;
use crate::not_built::NotBuilt;

/// The reference count's client in [`super::CLIENTS`].
pub(super) const CLIENT: KindClient = KindClient {
    kind: atomlab_plugin::abi::KIND_REFCOUNT,
    object: "obj",
    new_arg: 0,
    takes_items: false,
    rounds: Some("its own reference's put plus K-1 extra get/put pairs before it"),
    threads: |c, v, obj, size| c.refcount(v, obj, size.threads, size.rounds),
};

/// A holder of the refcount client: its thread's registers in the final
/// state.
#[derive(Debug, Clone)]
struct Holder {
    /// The thread.
    thread: usize,
    /// 1 when its last put said "last".
    last: StateVar,
    /// 1 when one of its inner puts (it still held a reference) said "last".
    early: Vec<StateVar>,
    /// What it read of each other holder's `use` after its put said
    /// "last": (the other thread, the register).
    saw: Vec<(usize, StateVar)>,
}

/// "last" exactly once, never early.
#[derive(Debug)]
struct LastOnce {
    /// The holders.
    holders: Vec<Holder>,
}

impl Contract for LastOnce {
    fn condition(&self) -> Prop {
        let holders = &self.holders;
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

    fn checked(&self, _threads: usize, rounds: usize) -> String {
        format!(
            "{} holders (thread 0 takes a reference for each other thread and hands it over), each using the object, taking and dropping {} more reference(s) (get, put), then dropping its own: exactly one put says last, never one of a holder that still holds a reference, and the last one sees every holder's use",
            self.holders.len(),
            rounds.saturating_sub(1)
        )
    }

    fn wrong(&self, vars: &[StateVar], vals: &[Value]) -> Option<String> {
        let get_ = |v: &StateVar| value_of(vars, vals, v);
        let holders = &self.holders;
        for h in holders {
            if h.early.iter().any(|e| get_(e).is_some_and(|x| x != 0)) {
                return Some(format!(
                    "early \"last\": a put of T{} said last while T{} still held a reference",
                    h.thread, h.thread
                ));
            }
        }
        let lasts: Vec<usize> = holders
            .iter()
            .filter(|h| get_(&h.last) == Some(1))
            .map(|h| h.thread)
            .collect();
        match lasts.as_slice() {
            [] => Some(
                "no put said last: a reference is never dropped (the object leaks)".into(),
            ),
            [t] => {
                let h = holders.iter().find(|h| h.thread == *t)?;
                for (j, s) in &h.saw {
                    if get_(s) != Some(1) {
                        return Some(format!(
                            "early \"last\": T{t}'s put said last, then T{t} read T{j}'s use of the object as {} instead of 1: T{j}'s use, made while it held its reference, is not visible to the thread that frees the object (a put without release, or a last put without acquire)",
                            get_(s).map_or("?".into(), |x| x.to_string())
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
}

impl Client<'_, '_> {
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
        Ok(Property::new(LastOnce { holders }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::tests::{judged, reg};

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
        let p = Property::new(LastOnce { holders });
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
}
