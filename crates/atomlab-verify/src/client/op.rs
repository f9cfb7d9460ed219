//! The op client: each of T threads calls `op` K times. When the
//! variant has `read`, thread 0 then waits for the others to finish (each
//! publishes a `done` flag with release; thread 0 awaits each with
//! acquire, as `pthread_join` orders them) and calls `read`, which must
//! return T·K. Without `read` nothing says what the state should be: the
//! check is that every execution of the T·K operations runs to its end
//! (no refusal, no bound), which is all a PASS then claims.

use atomlab_audit::Pointer;
use atomlab_litmus::{Expr, Instr, Prop, StateVar, Value};

use super::{entry, ne, value_of, Client, Contract, KindClient, Property};
use crate::descriptor::Variant;
use crate::not_built::NotBuilt;

/// The operation's client in [`super::CLIENTS`].
pub(super) const CLIENT: KindClient = KindClient {
    kind: atomlab_plugin::abi::KIND_OP,
    object: "state",
    new_arg: 0,
    takes_items: false,
    rounds: Some("ops"),
    threads: |c, v, obj, size| c.op(v, obj, size.threads, size.rounds),
};

/// `read()` returns every operation.
#[derive(Debug)]
struct Total {
    /// The register `read`'s result lands in (`None`: no `read`).
    total: Option<StateVar>,
    /// Threads × operations.
    expected: i64,
}

impl Contract for Total {
    fn condition(&self) -> Prop {
        match &self.total {
            Some(t) => ne(t, self.expected),
            None => Prop::False,
        }
    }

    fn checked(&self, threads: usize, rounds: usize) -> String {
        match self.total {
            Some(_) => format!(
                "{threads} threads x {rounds} op(s), then read() after joining them: always {}",
                self.expected
            ),
            None => format!(
                "{threads} threads x {rounds} op(s) run to the end in every execution (the variant has no read(): no total is checked)"
            ),
        }
    }

    fn wrong(&self, vars: &[StateVar], vals: &[Value]) -> Option<String> {
        let v = value_of(vars, vals, self.total.as_ref()?)?;
        let expected = &self.expected;
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

impl Client<'_, '_> {
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
        let done = self.done_flags(threads, read_at.is_some());
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
        Ok(Property::new(Total {
            total,
            expected: (threads * rounds) as i64,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::tests::{judged, reg};

    #[test]
    fn op_total_with_and_without_read() {
        let total = reg(0, 4);
        let p = Property::new(Total {
            total: Some(total.clone()),
            expected: 4,
        });
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
        let none = Property::new(Total {
            total: None,
            expected: 4,
        });
        assert_eq!(none.condition(), Prop::False);
        assert!(none
            .checked(2, 2)
            .contains("has no read(): no total is checked"));
    }
}
