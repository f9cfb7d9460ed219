//! C11 as herd7's `c11_partialSC.cat` (Batty, Owens, Sarkar, Sewell and
//! Weber, "Mathematizing C++ concurrency", POPL 2011, with the partial-SC
//! repair of Batty, Donaldson and Wickerson, "Overhauling SC atomics in C11
//! and OpenCL", POPL 2016). It allows load buffering: nothing forbids
//! `sb | rf` cycles.
//!
//! ```text
//! let rs = mo & rs_prime \ ((mo \ rs_prime); mo)       rs_prime = int | (_ * (R & W))
//! let swra = ext & ([crel]; fsb?; [A & W]; rs?; rf; [R & A]; sbf?; [cacq])
//! let sw = pp_asw | swra
//! let dob = (ext & ([W & crel]; fsb?; [A & W]; rs?; rf; [ccon])); cad?
//! let ithb = (sw | dob | sw; sb | sb; (sw | dob | sw; sb))+      let hb = sb | ithb
//! acyclic hb as Hb           irreflexive (rf^-1)?; mo; rf?; hb as Coh
//! irreflexive rf; hb as Rf   empty (rf; [R \ A]) \ vis as NaRf
//! irreflexive rf | mo; mo; rf^-1 | mo; rf as Rmw
//! acyclic ((SC * SC) & (hb | fsb?; mo; sbf? | rf^-1; [SC]; mo | rf^-1; hbl; [W]
//!          | fsb; fr | fr; sbf | fsb; fr; sbf)) \ id as Spartial
//! undefined_unless empty dr as Dr
//! ```
//! `mo` is coherence restricted to atomic and initial writes, as herd's
//! `c11_cos.cat` generates it.
//!
//! # Partial executions
//! Not every axiom only gets worse as rf and mo grow, so the exploration
//! engine prunes with a part of the model ([`Model::judge_partial`]):
//! - `rs` subtracts `(mo \ rs_prime); mo`, which grows: a write that later
//!   lands between two writes of a release sequence ends it. A partial
//!   execution uses the pairs of `mo & rs_prime` that no write of another
//!   thread (and not an RMW) *can* still come between: those the known `mo`
//!   does not already place outside the pair. That is a subset of every
//!   completion's `rs`, so `sw`, `dob` and `hb` built from it are subsets
//!   of theirs, and `Hb`, `Coh`, `Rf`, `Rmw` and `Spartial` (acyclicity,
//!   irreflexivity of relations built from hb, rf, mo and fr by union,
//!   sequence, closure, inverse and intersection with fixed relations;
//!   `\ id` is fixed) only get worse: they prune.
//! - `NaRf` forbids a non-atomic read's rf edge outside `vis`, which
//!   subtracts growing hb paths twice. Of it only the monotone part prunes:
//!   an rf edge with a write hb-between its ends (`hbl; [W]; hbl`) is never
//!   in `vis`, whatever else is added.
//! - The final non-atomic write check needs the co-last writes and `Dr`
//!   only marks races: neither prunes.

use atomlab_litmus::Test;

use super::model::{
    judged_with_in_every_width, judges_c11, violation, violation_path, Judgement, Model, Step,
    Violation,
};
use crate::exec::Execution;
use crate::mapping::{AcquireLoad, Target};
use crate::rel::{full_set, Bits, Rel};

/// C11 (herd's c11_partialSC).
pub struct C11;

impl Model for C11 {
    fn judges(&self, test: &Test, _: AcquireLoad) -> Result<Option<Target>, String> {
        judges_c11(self.name(), test)
    }
    fn name(&self) -> &'static str {
        "c11"
    }

    judged_with_in_every_width!(judge_with);

    fn allows_thin_air(&self) -> bool {
        true
    }

    /// See the module documentation, "Partial executions".
    fn prunes(&self) -> bool {
        true
    }
}

impl C11 {
    /// The model's judgement of `x`; with `partial`, of the part of it that
    /// forbids only what every completion of `x` breaks (see the module
    /// documentation).
    fn judge_with<S: Bits>(&self, x: &Execution<'_, S>, explain: bool, partial: bool) -> Judgement {
        let s = x.s;
        let n = s.n;
        let st = &s.sets;
        let all = full_set::<S>(n);
        let (r, w, f, a, iw) = (st.r, st.w, st.f, st.atomic, st.iw);
        let sb = s.po;
        let rf = x.rf;
        let amw = (a & w) | iw;
        let mo = x.co.dom(amw).rng(amw);
        let asw = Rel::cross(n, iw, st.m & !iw);
        let cacq = st.acq | (st.sc & (r | f)) | st.acq_rel | (f & st.con);
        let crel = st.rel | (st.sc & (w | f)) | st.acq_rel;
        let ccon = r & st.con;
        let fr = rf.inv().seq(&mo);
        let fsb = sb.dom(f);
        let sbf = sb.rng(f);
        // Release sequences feed synchronisation (swra) and consume ordering
        // (dob); without release writes both are empty.
        let (sw, dob) = if (crel & (w | f)).is_empty() {
            (asw - asw.seq(&sb), Rel::empty(n))
        } else {
            let rs_prime = s.int | Rel::cross(n, all, r & w);
            // The pairs that may be in mo: all of it once mo is total on
            // each location; in a partial execution, every pair of atomic
            // writes of a location the known mo does not order the other
            // way (a superset of every completion's mo, so `rs` below is a
            // subset of every completion's).
            let mo_may = if partial {
                (s.loc.dom(amw).rng(amw) - mo.inv()).noid()
            } else {
                mo
            };
            let rs = (mo & rs_prime) - (mo_may - rs_prime).seq(&mo_may);
            let swra = s.ext
                & Rel::id(n, crel)
                    .seq(&fsb.opt())
                    .rng(a & w)
                    .seq(&rs.opt())
                    .seq(&rf)
                    .rng(r & a)
                    .seq(&sbf.opt())
                    .rng(cacq);
            let pp_asw = asw - asw.seq(&sb);
            let dob = if ccon.is_empty() {
                Rel::empty(n)
            } else {
                let dd = (s.data | s.addr).plus();
                let cad = ((rf & sb) | dd).plus();
                (s.ext
                    & Rel::id(n, w & crel)
                        .seq(&fsb.opt())
                        .rng(a & w)
                        .seq(&rs.opt())
                        .seq(&rf)
                        .rng(ccon))
                .seq(&cad.opt())
            };
            (pp_asw | swra, dob)
        };
        let ithbr = sw | dob | sw.seq(&sb);
        let ithb = (ithbr | sb.seq(&ithbr)).plus();
        let hb = sb | ithb;
        if !hb.acyclic() {
            return violation("Hb", explain, &[("sb", sb), ("sw", sw), ("dob", dob)], None);
        }
        let hbl = hb & s.loc;
        let coh = rf.inv().opt().seq(&mo).seq(&rf.opt()).seq(&hb);
        let hb_parts = [("sb", sb), ("sw", sw), ("dob", dob)];
        if !coh.irreflexive() {
            return violation_path(
                "Coh",
                explain,
                &[
                    Step {
                        name: "rf^-1",
                        rel: rf.inv(),
                        optional: true,
                        parts: &[],
                    },
                    Step {
                        name: "mo",
                        rel: mo,
                        optional: false,
                        parts: &[],
                    },
                    Step {
                        name: "rf",
                        rel: rf,
                        optional: true,
                        parts: &[],
                    },
                    Step {
                        name: "hb",
                        rel: hb,
                        optional: false,
                        parts: &hb_parts,
                    },
                ],
            );
        }
        if !rf.seq(&hb).irreflexive() {
            return violation_path(
                "Rf",
                explain,
                &[
                    Step {
                        name: "rf",
                        rel: rf,
                        optional: false,
                        parts: &[],
                    },
                    Step {
                        name: "hb",
                        rel: hb,
                        optional: false,
                        parts: &hb_parts,
                    },
                ],
            );
        }
        let hidden = hbl.rng(w).seq(&hbl);
        let vis = (hbl & Rel::cross(n, w, r)) - hidden;
        // A partial execution is only judged on rf edges that a write
        // hb-between hides (the monotone part of NaRf).
        let narf = if partial {
            rf.rng(r & !a) & hidden
        } else {
            rf.rng(r & !a) - vis
        };
        if !narf.is_empty() {
            return violation(
                "NaRf",
                explain,
                &[("rf", rf.rng(r & !a)), ("hb", hbl)],
                None,
            );
        }
        // Final non-atomic writes must not be hb-before another write (the
        // co-last writes of a partial execution are not known yet).
        let fw = x.last.iter().fold(S::ZERO, |acc, &e| acc | S::bit(e));
        if !partial && !Rel::id(n, fw & !a).seq(&hbl).rng(w).is_empty() {
            return violation("NaRf", explain, &[("hb", hbl)], None);
        }
        if !(rf | mo.seq(&mo).seq(&rf.inv()) | mo.seq(&rf)).irreflexive() {
            return violation("Rmw", explain, &[("rf", rf), ("mo", mo)], None);
        }
        let sc = st.sc;
        if !sc.is_empty() {
            let sc = st.sc;
            let r1 = hb;
            let r2 = fsb.opt().seq(&mo).seq(&sbf.opt());
            let r3 = rf.inv().rng(sc).seq(&mo);
            let r4 = rf.inv().seq(&hbl).rng(w);
            let r5 = fsb.seq(&fr);
            let r6 = fr.seq(&sbf);
            let r7 = fsb.seq(&fr).seq(&sbf);
            let scp = r1 | r2 | r3 | r4 | r5 | r6 | r7;
            let spartial = (Rel::cross(n, sc, sc) & scp).noid();
            if !spartial.acyclic() {
                let sc2 = |r: Rel<S>| (Rel::cross(n, sc, sc) & r).noid();
                return violation(
                    "Spartial",
                    explain,
                    &[
                        ("hb", sc2(r1)),
                        ("mo", sc2(r2)),
                        ("rf^-1;mo", sc2(r3)),
                        ("rf^-1;hb", sc2(r4)),
                        ("fr", sc2(r5 | r6 | r7)),
                    ],
                    Some(sc),
                );
            }
        }
        let m = st.m;
        // A race needs a non-atomic access; initial writes are hb-before all.
        // Races mark allowed executions; they never forbid one.
        if partial || (m & !a & !st.iw).is_empty() {
            return Judgement::Allowed { racy: false };
        }
        let cnf = (Rel::cross(n, w, all) | Rel::cross(n, all, w)) & s.loc & Rel::cross(n, m, m);
        let dr = s.ext & (cnf - hb - hb.inv() - Rel::cross(n, a, a));
        Judgement::Allowed {
            racy: !dr.is_empty(),
        }
    }
}
