//! RC11: "Repairing Sequential Consistency in C/C++11", Lahav, Vafeiadis,
//! Kang, Hur and Dreyer, PLDI 2017, as herd7's `rc11.cat`:
//!
//! ```text
//! let rb = (rf^-1; mo) \ id
//! let eco = (rf | mo | rb)+
//! let rs = [W]; (sb & loc)?; [W & (RLX|REL|ACQ_REL|ACQ|SC)]; (rf; rmw)*
//! let sw = [REL|ACQ_REL|SC]; ([F]; sb)?; rs; rf; [R & atomic]; (sb; [F])?; [ACQ|ACQ_REL|SC]
//! let hb = (sb | sw)+
//! let scb = sb | sbl; hb; sbl | hbl | mo | rb
//! let pscb = ([SC] | [F&SC]; hb?); scb; ([SC] | hb?; [F&SC])
//! let pscf = [F&SC]; (hb | hb; eco; hb); [F&SC]
//! irreflexive hb; eco? as coherence1      irreflexive rmw; eco as coherencermw
//! empty rmw & (rb; mo) as atomicity        acyclic pscb | pscf as SC
//! acyclic sb | rf as no-thin-air
//! undefined_unless empty dr as Dr         (reported as a data-race flag)
//! ```

use atomlab_litmus::Test;

use super::model::{
    forbidden, judges_c11, violation, violation_path, Judgement, Model, Step, Violation,
};
use crate::exec::Execution;
use crate::mapping::{AcquireLoad, Target};
use crate::rel::{full_set, Bits, Rel};

/// RC11.
pub struct Rc11;

impl Rc11 {
    /// `rs` and `sw` (release sequences and synchronises-with).
    fn sw<S: Bits>(
        &self,
        x: &Execution<'_, S>,
        atomic_w: S,
        rel: S,
        acq: S,
        myrmw: &Rel<S>,
    ) -> Rel<S> {
        let s = x.s;
        let n = s.n;
        let st = &s.sets;
        let (r, w, f) = (st.r, st.w, st.f);
        let sb = s.po;
        let rf = x.rf;
        let rs = Rel::id(n, w)
            .seq(&(sb & s.loc).opt())
            .rng(atomic_w)
            .seq(&rf.seq(myrmw).star());
        let atomic_r = r & (st.rlx | st.rel | st.acq | st.acq_rel | st.sc);
        Rel::id(n, rel)
            .seq(&Rel::id(n, f).seq(&sb).opt())
            .seq(&rs)
            .seq(&rf)
            .rng(atomic_r)
            .seq(&sb.rng(f).opt())
            .rng(acq)
    }
}

impl Model for Rc11 {
    fn judges(&self, test: &Test, _: AcquireLoad) -> Result<Option<Target>, String> {
        judges_c11(self.name(), test)
    }
    fn name(&self) -> &'static str {
        "rc11"
    }

    /// Every axiom constrains a relation built from rf, mo and rb by union,
    /// sequence, closure and intersection or difference with fixed
    /// relations (`rs` follows `rf; rmw` chains rather than subtracting
    /// intervening writes, as C11's does; `sbl = sb \ loc` is fixed), so
    /// each only gets worse as rf and mo grow (Lahav et al., PLDI 2017,
    /// section 3).
    fn prunes(&self) -> bool {
        true
    }

    fn judge_partial(&self, x: &Execution<'_>) -> Option<Violation> {
        forbidden(self.judge_any(x, false))
    }

    fn judge(&self, x: &Execution<'_>, explain: bool) -> Judgement {
        self.judge_any(x, explain)
    }

    fn judge_partial_wide(&self, x: &Execution<'_, u128>) -> Option<Violation> {
        forbidden(self.judge_any(x, false))
    }

    fn judge_wide(&self, x: &Execution<'_, u128>, explain: bool) -> Judgement {
        self.judge_any(x, explain)
    }

    fn judges_narrow(&self) -> bool {
        true
    }

    fn judge_partial_narrow(&self, x: &Execution<'_, u32>) -> Option<Violation> {
        forbidden(self.judge_any(x, false))
    }

    fn judge_narrow(&self, x: &Execution<'_, u32>, explain: bool) -> Judgement {
        self.judge_any(x, explain)
    }
}

impl Rc11 {
    /// The model's judgement of `x`, in either width.
    fn judge_any<S: Bits>(&self, x: &Execution<'_, S>, explain: bool) -> Judgement {
        let s = x.s;
        let n = s.n;
        let st = &s.sets;
        let (w, f) = (st.w, st.f);
        let sb = s.po;
        let mo = x.co;
        let rf = x.rf;
        let myrmw = Rel::id(n, st.upd) | s.rmw;
        let rb = x.fr;
        // Cheap axioms first when no explanation is wanted (the verdict does
        // not depend on the order).
        if !explain && !(sb | rf).acyclic() {
            return violation::<S>("no-thin-air", false, &[], None);
        }
        let atomic_w = w & (st.rlx | st.rel | st.acq_rel | st.acq | st.sc);
        let rel = st.rel | st.acq_rel | st.sc;
        let acq = st.acq | st.acq_rel | st.sc;
        // Without release and acquire events there is no synchronisation.
        let sw = if rel.is_empty() || acq.is_empty() {
            Rel::empty(n)
        } else {
            self.sw(x, atomic_w, rel, acq, &myrmw)
        };
        let hb = (sb | sw).plus();
        // The engine keeps only executions with po-loc | rf | mo | rb acyclic
        // and atomic RMWs, which implies coherencermw and atomicity, and
        // coherence1 when hb is just sb; they are evaluated here when hb has
        // synchronisation edges or an explanation is wanted.
        let full = explain || !sw.is_empty();
        let eco = if full || !(f & st.sc).is_empty() {
            (rf | mo | rb).plus()
        } else {
            Rel::empty(n)
        };

        // Coherence.
        let hb_parts = [("sb", sb), ("sw", sw)];
        let eco_parts = [("rf", rf), ("mo", mo), ("rb", rb)];
        if full && !hb.seq(&eco.opt()).irreflexive() {
            return violation_path(
                "coherence1",
                explain,
                &[
                    Step {
                        name: "hb",
                        rel: hb,
                        optional: false,
                        parts: &hb_parts,
                    },
                    Step {
                        name: "eco",
                        rel: eco,
                        optional: true,
                        parts: &eco_parts,
                    },
                ],
            );
        }
        if explain && !myrmw.seq(&eco).irreflexive() {
            return violation_path(
                "coherencermw",
                explain,
                &[
                    Step {
                        name: "rmw",
                        rel: myrmw,
                        optional: false,
                        parts: &[],
                    },
                    Step {
                        name: "eco",
                        rel: eco,
                        optional: false,
                        parts: &eco_parts,
                    },
                ],
            );
        }
        if explain && !(myrmw & rb.seq(&mo)).is_empty() {
            return violation(
                "atomicity",
                explain,
                &[("rmw", myrmw), ("rb", rb), ("mo", mo)],
                None,
            );
        }
        // SC: partial SC order.
        let sc = st.sc;
        let fsc = f & sc;
        if !sc.is_empty() {
            let sbl = sb - s.loc;
            let hbl = hb & s.loc;
            let scb = sb | sbl.seq(&hb).seq(&sbl) | hbl | mo | rb;
            let left = Rel::id(n, sc) | Rel::id(n, fsc).seq(&hb.opt());
            let right = Rel::id(n, sc) | hb.opt().rng(fsc);
            let pscb = left.seq(&scb).seq(&right);
            let pscf = Rel::id(n, fsc).seq(&(hb | hb.seq(&eco).seq(&hb))).rng(fsc);
            let psc = pscb | pscf;
            if !psc.acyclic() {
                return violation("SC", explain, &[("psc", psc)], Some(sc));
            }
        }
        if !(sb | rf).acyclic() {
            return violation("no-thin-air", explain, &[("sb", sb), ("rf", rf)], None);
        }
        // Data races: conflicting, not both atomic, unordered by hb.
        let m = st.m;
        // A race needs a non-atomic access (initial writes excluded).
        if (m & !st.atomic & !st.iw).is_empty() {
            return Judgement::Allowed { racy: false };
        }
        let not_init = Rel::cross(n, st.iw, full_set(n)) | Rel::cross(n, full_set(n), st.iw);
        let cnf = ((Rel::cross(n, w, m) | Rel::cross(n, m, w)) & s.loc) - not_init;
        let a = st.atomic;
        let dr = (cnf & s.ext) - (hb | hb.inv() | Rel::cross(n, a, a));
        Judgement::Allowed {
            racy: !dr.is_empty(),
        }
    }
}
