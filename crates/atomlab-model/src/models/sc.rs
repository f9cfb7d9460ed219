//! Sequential consistency (Lamport 1979), as herd7's `sc.cat`:
//! `acyclic po | ((fr | rf | co); sm) as sc` with `sm` the identity, plus RMW atomicity
//! (`empty rmw & (fre; coe)`, enforced by the engine).

use super::model::{judged_whole_in_every_width, violation, Judgement, Model, Violation};
use crate::exec::Execution;
use crate::rel::Bits;

/// Sequential consistency.
pub struct Sc;

impl Model for Sc {
    fn name(&self) -> &'static str {
        "sc"
    }

    /// `acyclic po | rf | co | fr` only gets worse as rf and co grow.
    fn prunes(&self) -> bool {
        true
    }

    judged_whole_in_every_width!(judge_any);
}

/// The model's judgement of `x`, in either width.
fn judge_any<S: Bits>(x: &Execution<'_, S>, explain: bool) -> Judgement {
    {
        let s = x.s;
        // herd's `sm` (same memory access) is the identity without mixed sizes.
        let com = x.rf | x.co | x.fr;
        let sc = s.po | com;
        if sc.acyclic() {
            return Judgement::Allowed { racy: false };
        }
        let m = s.sets.m | s.sets.f;
        violation(
            "sc",
            explain,
            &[
                ("po", s.po.dom(m).rng(m)),
                ("rf", x.rf),
                ("co", x.co),
                ("fr", x.fr),
            ],
            None,
        )
    }
}
