//! The Armv8 application-level memory model: the Arm ARM (DDI 0487, B2.3)
//! as herd7's `aarch64.cat` (herdtools7 7.58, with aarch64hwreqs.cat and
//! aarch64deps.cat), restricted to explicit memory accesses (no translation
//! tables, tags or instruction fetches, which the parser refuses):
//!
//! ```text
//! let dob = addr | data | ctrl; [W] | addr; [M]; po; [W]
//!         | addr; [M]; lmrs; [R] | data; [M]; lmrs; [R]
//! let pob = pick-addr-dep; [W] | pick-data-dep | pick-ctrl-dep; [W]
//!         | pick-addr-dep; [M]; po; [W]
//! let aob = rmw | rmw; lmrs; [A | Q]
//! let bob = po; [dmb.full]; po | [R \ NoRet]; po; [dmb.ld]; po | [W]; po; [dmb.st]; po; [W]
//!         | [range([A]; amo; [L])]; po | [L]; po; [A] | [A | Q]; po | po; [L]
//! let IFB-ob = [R]; (ctrl | pick-ctrl-dep | (addr | pick-addr-dep); [M]; po); [ISB]; po
//! let lob = (lmws | dob | pob | aob | bob | IFB-ob)+
//! let local-hw-reqs = (lob | pick-dep; lob; [W])+
//! let haz-ob = [R]; po-loc; [R]; (ca & ext); [W]
//! let ob = (local-hw-reqs | haz-ob | rfe | (ca & ext))+
//! irreflexive ob as external
//! irreflexive [R]; (po-loc | rmw); [W]; rfi; [R] as coRW1
//! irreflexive [W]; po-loc; [W]; (ca & int) as coWW
//! irreflexive [W]; po-loc; [R]; (ca & int) as coWR
//! empty (rmw & (fr; co)) \ (fri; [W]; coi) as atomic
//! ```
//! DSB is ordered as DMB with the same option (the model's DSB-ob adds
//! nothing for explicit accesses).
//!
//! # Partial executions
//! The exploration engine prunes with every axiom but `atomic`
//! ([`Model::judge_partial`]). `lob`, `local-hw-reqs` and their parts are
//! fixed by program order, dependencies, `lmrs` (program order and
//! locations) and the barriers, as in the Arm ARM's definition of
//! Locally-ordered-before (DDI 0487, B2.3.7): none reads rf or co. `ob`
//! unites them with `haz-ob`, `rfe` and `ca & ext` (`ca = fr | co`) and
//! closes; the internal visibility axioms compose fixed relations with
//! `rfi` and `ca & int`. Each of `external`, `coRW1`, `coWW`, `coWR` thus
//! constrains a relation that only grows with rf and co. `atomic`
//! subtracts `fri; [W]; coi`, which grows (a write of the RMW's own
//! thread placed later can excuse a pair), so it judges complete
//! executions only. Nothing is lost: both engines keep only executions
//! without another thread's write between an RMW's source and its write
//! (`empty rmw & (fre; coe)`), and a pair `atomic` forbids among those has
//! an internal write between, which excuses it.

use atomlab_litmus::{Arch, Test};

use super::model::{
    judged_with_in_every_width, judges_isa, violation, Judgement, Model, Violation,
};
use crate::exec::{ArmFixed, Execution, Skeleton};
use crate::mapping::{AcquireLoad, Target};
use crate::rel::{Bits, Rel};

/// Armv8 AArch64.
pub struct AArch64;

impl Model for AArch64 {
    fn cpu(&self) -> Option<&'static str> {
        Some("aarch64")
    }
    fn judges(&self, test: &Test, acquire: AcquireLoad) -> Result<Option<Target>, String> {
        judges_isa(
            self.name(),
            test,
            &[Arch::AArch64],
            Target::AArch64(acquire),
        )
    }
    fn name(&self) -> &'static str {
        "aarch64"
    }

    judged_with_in_every_width!(judge_with);

    /// See the module documentation, "Partial executions".
    fn prunes(&self) -> bool {
        true
    }
}

impl AArch64 {
    /// The model's judgement of `x`; with `partial`, without the `atomic`
    /// axiom, the one that subtracts a growing relation.
    fn judge_with<S: Bits>(&self, x: &Execution<'_, S>, explain: bool, partial: bool) -> Judgement {
        let s = x.s;
        let st = &s.sets;
        let (w, m) = (st.w, st.m);
        let (a, q, l) = (st.arm_a & m, st.arm_q & m, st.arm_l & m);
        let po = s.po;
        // What depends on the skeleton alone is computed once per skeleton
        // (exec::Memo), however many executions of it are judged.
        let fixed = s.memo.arm_fixed(|| ArmFixed::of(s));
        let po_loc = || s.po_loc().dom(m).rng(m);
        let ca = x.fr | x.co;

        // Internal visibility.
        let rfi = x.rfi();
        // (rw_before's domain is R: its composition's diagonal is too.)
        if !fixed.rw_before.seq_irreflexive(&rfi) {
            return violation(
                "internal (coRW1)",
                explain,
                &[("po-loc", po_loc()), ("rmw", s.rmw), ("rfi", rfi)],
                None,
            );
        }
        let ca_int = ca & s.int;
        if !fixed.ww.seq_irreflexive(&ca_int) || !fixed.wr.seq_irreflexive(&ca_int) {
            return violation(
                "internal (coWW/coWR)",
                explain,
                &[("po-loc", po_loc()), ("co", x.co), ("fr", x.fr)],
                None,
            );
        }
        // Atomicity.
        if !partial
            && !((s.rmw & x.fr.seq(&x.co)) - (s.rmw & x.fri().rng(w).seq(&x.coi()))).is_empty()
        {
            return violation(
                "atomic",
                explain,
                &[("rmw", s.rmw), ("fr", x.fr), ("co", x.co)],
                None,
            );
        }

        let haz = fixed.rr.seq(&(ca & s.ext)).rng(w);
        let obs = x.rfe() | (ca & s.ext);
        // `ob` is acyclic: `(local | haz | obs)+` irreflexive.
        if (fixed.local | haz | obs).acyclic() {
            return Judgement::Allowed { racy: false };
        }
        if !explain {
            return violation::<S>("external", false, &[], None);
        }
        // The explanation names each part of lob.
        let parts_of = Local::of(s);
        let dmb_named = |set: S, name: &'static str| -> (&'static str, Rel<S>) {
            (
                name,
                po.rng(set).seq(&po).dom(m).rng(m)
                    & (parts_of.dmb_full | parts_of.dmb_ld | parts_of.dmb_st),
            )
        };
        let parts = [
            ("rfe", x.rfe()),
            ("fre", x.fre()),
            ("coe", x.coe()),
            ("addr", parts_of.dob_addr),
            ("data", parts_of.dob_data),
            ("ctrl", parts_of.dob_ctrl),
            dmb_named(st.dmb_full, "[dmb.full]"),
            dmb_named(st.dmb_ld, "[dmb.ld]"),
            dmb_named(st.dmb_st, "[dmb.st]"),
            ("po;[L]", po.dom(m).rng(l)),
            ("[L];po;[A]", po.dom(l).rng(a)),
            ("[A|Q];po", po.dom(a | q).rng(m)),
            ("[A];amo;[L];po", po.dom(parts_of.amo_al).rng(m)),
            ("rmw", parts_of.aob),
            ("pick", parts_of.pob | parts_of.pick_lob),
            ("isb", parts_of.ifb),
            ("po-loc", parts_of.lmws | haz),
            ("lob", parts_of.lob),
        ];
        violation("external", explain, &parts, None)
    }
}

impl<S: Bits> ArmFixed<S> {
    fn of(s: &Skeleton<S>) -> ArmFixed<S> {
        let st = &s.sets;
        let (r, w, m) = (st.r, st.w, st.m);
        let po_loc = s.po_loc().dom(m).rng(m);
        ArmFixed {
            local: Local::of(s).local,
            rw_before: Rel::id(s.n, r).seq(&(po_loc | s.rmw)).rng(w),
            ww: po_loc.dom(w).rng(w),
            wr: po_loc.dom(w).rng(r),
            rr: po_loc.dom(r).rng(r),
        }
    }
}

/// The parts of `aarch64.cat`'s locally-ordered-before, all fixed by the
/// skeleton: dependency-, pick-, atomic- and barrier-ordered-before.
struct Local<S: Bits> {
    dob_addr: Rel<S>,
    dob_data: Rel<S>,
    dob_ctrl: Rel<S>,
    pob: Rel<S>,
    aob: Rel<S>,
    dmb_full: Rel<S>,
    dmb_ld: Rel<S>,
    dmb_st: Rel<S>,
    amo_al: S,
    ifb: Rel<S>,
    lmws: Rel<S>,
    pick_lob: Rel<S>,
    lob: Rel<S>,
    /// `(lob | pick_lob)+`.
    local: Rel<S>,
}

impl<S: Bits> Local<S> {
    fn of(s: &Skeleton<S>) -> Local<S> {
        let st = &s.sets;
        let (r, w, m) = (st.r, st.w, st.m);
        let (a, q, l) = (st.arm_a & m, st.arm_q & m, st.arm_l & m);
        let po = s.po;
        let po_loc = s.po_loc().dom(m).rng(m);
        // Dependency-ordered-before.
        let (addr, data, ctrl) = (s.addr.rng(m | st.f), s.data.rng(w), s.ctrl);
        let lmrs = s.lmrs;
        let dob_addr = addr.rng(m) | addr.rng(m).seq(&po).rng(w) | addr.rng(m).seq(&lmrs).rng(r);
        let dob_data = data | data.seq(&lmrs).rng(r);
        let dob_ctrl = ctrl.rng(w);
        // Pick-ordered-before.
        let (paddr, pdata, pctrl) = (s.pick_addr.rng(m), s.pick_data.rng(w), s.pick_ctrl);
        let pob = paddr.rng(w) | pdata | pctrl.rng(w) | paddr.seq(&po).rng(w);
        // Atomic-ordered-before.
        let aob = s.rmw | s.rmw.seq(&lmrs).rng(r & (a | q));
        // Barrier-ordered-before.
        let dmb_full = po.rng(st.dmb_full).seq(&po).dom(m).rng(m);
        let dmb_ld = po.rng(st.dmb_ld).seq(&po).dom(r & !st.noret).rng(m);
        let dmb_st = po.rng(st.dmb_st).seq(&po).dom(w).rng(w);
        let amo_al = s.amo.dom(a).rng(l).range();
        let acq_rel =
            po.dom(amo_al).rng(m) | po.dom(l).rng(a) | po.dom(a | q).rng(m) | po.dom(m).rng(l);
        // Instruction-fetch-barrier-ordered-before (ISB after a dependency).
        let to_isb = (ctrl | pctrl | addr.rng(m).seq(&po) | paddr.seq(&po))
            .dom(r)
            .rng(st.isb);
        let ifb = to_isb.seq(&po).rng(m);
        let lmws = po_loc.rng(w);
        let lob = (lmws
            | dob_addr
            | dob_data
            | dob_ctrl
            | pob
            | aob
            | dmb_full
            | dmb_ld
            | dmb_st
            | acq_rel
            | ifb)
            .plus();
        let pick_dep = (s.pick_addr | s.pick_data | s.pick_ctrl).dom(r);
        let pick_lob = pick_dep.seq(&lob).rng(w);
        let local = (lob | pick_lob).plus();
        Local {
            dob_addr,
            dob_data,
            dob_ctrl,
            pob,
            aob,
            dmb_full,
            dmb_ld,
            dmb_st,
            amo_al,
            ifb,
            lmws,
            pick_lob,
            lob,
            local,
        }
    }
}
