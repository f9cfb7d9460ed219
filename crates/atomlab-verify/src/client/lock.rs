//! The lock client: each of T threads does K critical sections, each a
//! plain read-increment-write of a shared `data`:
//! `lock(l); r = data; data = r + 1; unlock(l)`. With mutual exclusion
//! (and the ordering a lock must give: the last holder's writes visible
//! to the next) every increment reads the previous one and `data` ends
//! at T·K; a lost update, from two holders at once or from a stale read,
//! leaves it lower. Thread 0 then calls `free_` after joining the others,
//! as the ABI says: once, on an unlocked lock no thread uses.

use atomlab_litmus::{Annot, BinOp, Expr, Instr, LocId, Prop, StateVar, Value};

use super::{entry, free_entry, ne, value_of, Client, Contract, KindClient, Property};
use crate::descriptor::Variant;
use crate::not_built::NotBuilt;

/// The lock's client in [`super::CLIENTS`].
pub(super) const CLIENT: KindClient = KindClient {
    kind: atomlab_plugin::abi::KIND_LOCK,
    object: "lock",
    new_arg: 0,
    takes_items: false,
    rounds: Some("critical sections"),
    threads: |c, v, obj, size| c.lock(v, obj, size.threads, size.rounds),
};

/// Mutual exclusion: `data` ends at `expected`.
#[derive(Debug)]
struct Mutex {
    /// The shared counter.
    data: LocId,
    /// Threads × critical sections.
    expected: i64,
}

impl Contract for Mutex {
    fn condition(&self) -> Prop {
        ne(&StateVar::Loc(self.data), self.expected)
    }

    fn checked(&self, threads: usize, rounds: usize) -> String {
        format!(
            "mutual exclusion: {threads} threads x {rounds} critical section(s) of a plain read-increment-write always end with data = {}",
            self.expected
        )
    }

    fn wrong(&self, vars: &[StateVar], vals: &[Value]) -> Option<String> {
        let d = value_of(vars, vals, &StateVar::Loc(self.data))?;
        let expected = self.expected;
        (d != expected).then(|| format!(
            "mutual exclusion broken: an execution ends with data = {d} instead of {expected}: an update was lost, so two threads were in the critical section or one read stale data"
        ))
    }

    fn data_expected(&self) -> Option<i64> {
        Some(self.expected)
    }
}

impl Client<'_, '_> {
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
        let done = self.done_flags(threads, free_at.is_some());
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
        Ok(Property::new(Mutex {
            data,
            expected: (threads * rounds) as i64,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::tests::judged;

    #[test]
    fn lock_lost_update() {
        let p = Property::new(Mutex {
            data: 0,
            expected: 2,
        });
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
}
