//! The spsc client: one producer pushes 1, 2, …, k (a push that says
//! full is retried), one consumer pops k items (a pop that says empty is
//! retried) through an item of its own (`pop(q, &item)`); the queue is
//! made with `new_(2)` and k = 3, so the third item reuses the first
//! slot (the ring wraps). The consumer must see exactly 1, 2, …, k in
//! order: none lost, duplicated, reordered or torn (a slot read before
//! the producer's write reached it shows as 0, never pushed). The item
//! is an object of the client's ([`crate::lift::Registers::pointers`]):
//! pop's store through its second argument lands in it. A ring's slot
//! indexed by a register (`slot[t & (N - 1)]`) is one of the few fields
//! the masked index can pick, chosen per execution by the index's value
//! ([`crate::lift::index`]); a slot computed any other way is refused,
//! naming the instruction.

use atomlab_litmus::{Annot, Expr, Instr, Prop, StateVar, Value};

use super::{any, entry, ne, value_of, Client, Contract, KindClient, Property, SPSC_CAPACITY};
use crate::descriptor::Variant;
use crate::not_built::NotBuilt;

/// The queue's client in [`super::CLIENTS`]: `new_` is given the
/// capacity it asks for, and `--items` sizes it.
pub(super) const CLIENT: KindClient = KindClient {
    kind: atomlab_plugin::abi::KIND_SPSC,
    object: "queue",
    new_arg: SPSC_CAPACITY as i64,
    takes_items: true,
    rounds: None,
    threads: |c, v, obj, size| c.spsc(v, obj, size.items),
};

/// FIFO: the consumer pops 1, 2, …, k.
#[derive(Debug)]
struct Fifo {
    /// What the consumer popped, in order.
    popped: Vec<StateVar>,
}

impl Contract for Fifo {
    fn condition(&self) -> Prop {
        any(self
            .popped
            .iter()
            .enumerate()
            .map(|(i, v)| ne(v, i as i64 + 1))
            .collect())
    }

    fn checked(&self, _threads: usize, _rounds: usize) -> String {
        format!(
            "FIFO: a producer pushing 1..{k} (retrying while full) and a consumer popping {k} items (retrying while empty) through a queue made with new_({SPSC_CAPACITY}) always see 1..{k} in order (none lost, duplicated, reordered or torn)",
            k = self.popped.len()
        )
    }

    fn wrong(&self, vars: &[StateVar], vals: &[Value]) -> Option<String> {
        let got: Vec<i64> = self
            .popped
            .iter()
            .map(|v| value_of(vars, vals, v).unwrap_or(-1))
            .collect();
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
}

impl Client<'_, '_> {
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
        Ok(Property::new(Fifo { popped }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::tests::{judged, reg};
    use crate::client::{acquire, build_with, SPSC_ITEMS};
    use crate::descriptor::Kind;
    use crate::initial::Initial;
    use crate::lift::{self, Locations, Refusal, Registers};
    use atomlab_audit::{PluginFile, Pointer};
    use atomlab_litmus::BinOp;

    #[test]
    fn spsc_names_what_the_consumer_saw() {
        let popped: Vec<StateVar> = (0..3).map(|r| reg(1, r)).collect();
        let p = Property::new(Fifo {
            popped: popped.clone(),
        });
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
            let order = |release: bool| {
                if release {
                    crate::client::release()
                } else {
                    plain
                }
            };
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
