//! RVWMO, the RISC-V weak memory ordering model: the RISC-V unprivileged
//! ISA manual, chapter "RVWMO Memory Consistency Model" (17.1, "Definition
//! of the RVWMO Memory Model"), as herd7 7.58's `riscv.cat` and
//! `riscv-defs.cat` state it. The spec's preserved program order, rule by
//! rule (a precedes b in program order):
//!
//! ```text
//! (* Overlapping-address orderings *)
//! r1  = [M]; po-loc; [W]                      b is a store to a's address
//! r2  = ([R]; po-loc-no-w; [R]) \ rsw         two loads, no store between, not the same write read
//! r3  = [AMO | X]; rfi; [R]                   b reads a's AMO or SC write
//! (* Explicit synchronisation *)
//! r4  = fence                                 fence pred,succ and fence.tso
//! r5  = [AQ]; po; [M]                         a has an acquire annotation
//! r6  = [M]; po; [RL]                         b has a release annotation
//! r7  = [RCsc]; po; [RCsc]                    both RCsc (annotated AMO or LR/SC)
//! r8  = rmw                                   a paired LR, b its SC; or an AMO's read and write
//! (* Syntactic dependencies *)
//! r9  = [M]; addr; [M]
//! r10 = [M]; data; [W]
//! r11 = [M]; ctrl; [W]
//! (* Pipeline dependencies *)
//! r12 = [M]; (addr | data); [W]; rfi; [R]
//! r13 = [M]; addr; [M]; po; [W]
//!
//! acyclic co | rf | fr | po-loc as Coherence   (load value axiom; checked by the engine)
//! acyclic co | rfe | fr | ppo as Model         (global memory order respects ppo)
//! empty rmw & (fre; coe) as Atomic             (atomicity axiom; checked by the engine)
//! ```
//! with `po-loc-no-w = po-loc \ (po-loc?; [W]; po-loc)`, `rsw = rf^-1; rf`,
//! `RCsc = (AQ | RL) & (AMO | X)`, and each fence ordering `[P]; po; [f];
//! po; [S]` for its predecessor set P and successor set S (`fence.tso`:
//! `[W];f;[W] | [R];f;[M]`). The progress axiom (no store stays invisible
//! forever) constrains infinite executions only and changes no verdict on
//! a finite litmus test.
//!
//! # Partial executions
//! Every relation of `Model` but `r2` is fixed (`r1`, `r4`-`r11`, `r13`:
//! program order, locations, annotations, dependencies) or composed of
//! fixed relations and `rfi` (`r3`, `r12`), and `Model` unites them with
//! co, rfe and fr: it only grows with rf and co. `r2` subtracts `rsw =
//! rf^-1; rf`, which grows. But rf is a function (each read reads one
//! write), so whether two reads read the same write is settled once both
//! have their source; `r2` here relates only reads that have one (in a
//! partial execution, those with an rf edge; in a complete one, all).
//! That is exactly `r2` on complete executions and a subset of every
//! completion's `r2` on partial ones, so the whole model prunes
//! ([`Model::judge_partial`]).

use atomlab_litmus::{Arch, Fence, Test};

use super::model::{
    judged_whole_in_every_width, judges_isa, violation, Judgement, Model, Violation,
};
use crate::exec::{Execution, Skeleton};
use crate::interp::Kind;
use crate::mapping::{AcquireLoad, Target};
use crate::rel::{members, Bits, Rel};

/// RVWMO.
pub struct RiscV;

/// `r4`: what the test's `fence pred,succ` and `fence.tso` events order.
fn fences<S: Bits>(s: &Skeleton<S>) -> Rel<S> {
    let (r, w) = (s.sets.r, s.sets.w);
    let mut out = Rel::empty(s.n);
    for f in members(s.sets.rv_fence) {
        let around = s.po.rng(S::bit(f)).seq(&s.po);
        out = out
            | match s.events[f].kind {
                Kind::Fence(Fence::RiscV { pred, succ }) => {
                    let p = if pred.r { r } else { S::ZERO } | if pred.w { w } else { S::ZERO };
                    let q = if succ.r { r } else { S::ZERO } | if succ.w { w } else { S::ZERO };
                    around.dom(p).rng(q)
                }
                Kind::Fence(Fence::Tso) => around.dom(w).rng(w) | around.dom(r).rng(r | w),
                _ => Rel::empty(s.n),
            };
    }
    out
}

impl Model for RiscV {
    fn cpu(&self) -> Option<&'static str> {
        Some("riscv64")
    }
    fn judges(&self, test: &Test, _: AcquireLoad) -> Result<Option<Target>, String> {
        judges_isa(self.name(), test, &[Arch::RiscV], Target::RiscV)
    }
    fn name(&self) -> &'static str {
        "riscv"
    }

    /// See the module documentation, "Partial executions".
    fn prunes(&self) -> bool {
        true
    }

    judged_whole_in_every_width!(judge_any);
}

/// The model's judgement of `x`, in either width.
fn judge_any<S: Bits>(x: &Execution<'_, S>, explain: bool) -> Judgement {
    {
        let s = x.s;
        let r = s.sets.r;
        // The parts of ppo fixed by the skeleton, computed once per
        // skeleton (exec::Memo); what reads-from adds, here.
        let fixed = s.memo.riscv_ppo(|| {
            let p = Ppo::of(s);
            [p.fixed(), p.r2_base, p.r12_base, Rel::id(s.n, p.amo_excl)]
        });
        let [fixed, r2_base, r12_base, amo_excl] = fixed;
        let rsw = x.rf.inv().seq(&x.rf);
        // Reads whose source is chosen (all of them in a complete
        // execution): between those, rsw is final.
        let sourced = r & x.rf.range();
        let r2 = r2_base.dom(sourced).rng(sourced) - rsw;
        let r3 = amo_excl.seq(&x.rfi()).rng(r);
        let r12 = r12_base.seq(&x.rfi()).rng(r);
        if (x.co | x.rfe() | x.fr | fixed | r2 | r3 | r12).acyclic() {
            return Judgement::Allowed { racy: false };
        }
        if !explain {
            return violation::<S>("Model", false, &[], None);
        }
        let Ppo {
            r1,
            r4,
            r5,
            r6,
            r7,
            r8,
            r9,
            r10,
            r11,
            r13,
            ..
        } = Ppo::of(s);
        let parts = [
            ("rfe", x.rfe()),
            ("fre", x.fre()),
            ("coe", x.coe()),
            ("fri", x.fri()),
            ("coi", x.coi()),
            ("fence", r4),
            ("[AQ];po", r5),
            ("po;[RL]", r6),
            ("[RCsc];po;[RCsc]", r7),
            ("rmw", r8),
            ("addr", r9),
            ("data", r10),
            ("ctrl", r11),
            ("(addr|data);rfi", r12),
            ("addr;po;[W]", r13),
            ("po-loc;[W]", r1),
            ("po-loc R->R", r2),
            ("[AMO|X];rfi", r3),
        ];
        violation("Model", explain, &parts, None)
    }
}

/// RVWMO's preserved program order rules that the skeleton alone fixes
/// (the spec's rules 1 and 4-11 and 13), and the fixed halves of rules 2,
/// 3 and 12, which reads-from completes.
struct Ppo<S: Bits> {
    r1: Rel<S>,
    r4: Rel<S>,
    r5: Rel<S>,
    r6: Rel<S>,
    r7: Rel<S>,
    r8: Rel<S>,
    r9: Rel<S>,
    r10: Rel<S>,
    r11: Rel<S>,
    r13: Rel<S>,
    /// Rule 2 before its reads are known: same-address reads with no
    /// same-address write between them.
    r2_base: Rel<S>,
    /// Rule 12's `(addr | data); [W]`, before `; rfi; [R]`.
    r12_base: Rel<S>,
    /// Rule 3's AMOs and store-conditionals' reads.
    amo_excl: S,
}

impl<S: Bits> Ppo<S> {
    fn of(s: &Skeleton<S>) -> Ppo<S> {
        let st = &s.sets;
        let (w, m) = (st.w, st.m);
        let po = s.po.dom(m).rng(m);
        let po_loc = s.po_loc().dom(m).rng(m);
        // The acquire/release annotations (`.aq`, `.rl`; the sets Arm calls A and L).
        let (aq, rl) = (st.arm_a & m, st.arm_l & m);
        let amo = s.amo.domain() | s.amo.range();
        let rcsc = (aq | rl) & (amo | st.excl);
        let through_w = po_loc.opt().rng(w).seq(&po_loc);
        let addr = s.addr.dom(m).rng(m);
        Ppo {
            r1: po_loc.rng(w),
            r4: fences(s),
            r5: po.dom(aq),
            r6: po.rng(rl),
            r7: po.dom(rcsc).rng(rcsc),
            r8: s.rmw,
            r9: addr,
            r10: s.data.dom(m).rng(w),
            r11: s.ctrl.dom(m).rng(w),
            r13: addr.seq(&po).rng(w),
            r2_base: po_loc - through_w,
            r12_base: (addr | s.data.dom(m)).rng(w),
            amo_excl: amo | st.excl,
        }
    }

    /// The rules the skeleton fixes whole, joined.
    fn fixed(&self) -> Rel<S> {
        self.r1
            | self.r4
            | self.r5
            | self.r6
            | self.r7
            | self.r8
            | self.r9
            | self.r10
            | self.r11
            | self.r13
    }
}
