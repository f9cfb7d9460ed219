//! Sequential consistency (Lamport 1979), as herd7's `sc.cat`:
//! `acyclic po | ((fr | rf | co); sm) as sc` with `sm` the identity, plus RMW atomicity
//! (`empty rmw & (fre; coe)`, enforced by the engine).

use super::model::{forbidden, violation, Judgement, Model, Violation};
use crate::exec::Execution;

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

    fn judge_partial(&self, x: &Execution<'_>) -> Option<Violation> {
        forbidden(self.judge(x, false))
    }

    fn judge(&self, x: &Execution<'_>, explain: bool) -> Judgement {
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
