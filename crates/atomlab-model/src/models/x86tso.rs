//! x86-TSO (Owens, Sarkar and Sewell, "A better x86 memory model: x86-TSO",
//! TPHOLs 2009), as herd7's `x86tso.cat`:
//!
//! ```text
//! acyclic po-loc | com                       (uniproc, checked by the engine)
//! empty rmw & (fre; coe)                     (atomic, checked by the engine)
//! let ghb = mfence | implied | WW(po) | RM(po) | rfe | fr | co
//! acyclic ghb as tso
//! ```
//! where `implied` orders a locked access with everything around it.

use atomlab_litmus::{Arch, Test};

use super::model::{
    fencerel, judged_whole_in_every_width, judges_isa, violation, Judgement, Model, Violation,
};
use crate::exec::Execution;
use crate::mapping::{AcquireLoad, Target};
use crate::rel::{Bits, Rel};

/// x86-TSO.
pub struct X86Tso;

impl Model for X86Tso {
    fn cpu(&self) -> Option<&'static str> {
        Some("x86_64")
    }
    fn judges(&self, test: &Test, _: AcquireLoad) -> Result<Option<Target>, String> {
        judges_isa(self.name(), test, &[Arch::X86, Arch::X86_64], Target::X86)
    }
    fn name(&self) -> &'static str {
        "x86tso"
    }

    /// `ghb` is fixed program-order parts united with rfe, fr and co, so
    /// `acyclic ghb` only gets worse as rf and co grow.
    fn prunes(&self) -> bool {
        true
    }

    judged_whole_in_every_width!(judge_any);
}

/// The model's judgement of `x`, in either width.
fn judge_any<S: Bits>(x: &Execution<'_, S>, explain: bool) -> Judgement {
    {
        let s = x.s;
        let (r, w, m, a) = (s.sets.r, s.sets.w, s.sets.m, s.sets.locked);
        let po = s.po.dom(m).rng(m);
        let mfence = fencerel(x, s.sets.mfence).dom(m).rng(m);
        let po_ww = po.dom(w).rng(w);
        let po_rm = po.dom(r);
        let po_wr = po.dom(w).rng(r);
        let implied = po_wr.rng(a) | po_wr.dom(a);
        let ghb = mfence | implied | po_ww | po_rm | x.rfe() | x.fr | x.co;
        if ghb.acyclic() {
            return Judgement::Allowed { racy: false };
        }
        let parts: [(&str, Rel<S>); 8] = [
            ("mfence", mfence),
            ("locked", implied),
            ("po", po_ww | po_rm),
            ("rfe", x.rfe()),
            ("fre", x.fre()),
            ("coe", x.coe()),
            ("fri", x.fri()),
            ("coi", x.coi()),
        ];
        violation("tso", explain, &parts, None)
    }
}
