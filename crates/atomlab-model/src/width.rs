//! Which of a model's judgements an execution of a given word width goes
//! to: the engines are generic over the word ([`Bits`]), and a model, a
//! trait object, has one method per width ([`Model::judge_narrow`] for
//! `u32`, [`Model::judge`] for `u64`, [`Model::judge_wide`] for `u128`).

use crate::exec::Execution;
use crate::models::{Judgement, Model, Violation};
use crate::rel::Bits;

/// A word the engines build executions with, and the model methods that
/// judge them.
pub(crate) trait Width: Bits {
    fn judge(m: &dyn Model, x: &Execution<'_, Self>, explain: bool) -> Judgement;
    fn judge_flagged(
        m: &dyn Model,
        x: &Execution<'_, Self>,
        explain: bool,
    ) -> (Judgement, Vec<&'static str>);
    fn judge_partial(m: &dyn Model, x: &Execution<'_, Self>) -> Option<Violation>;
}

impl Width for u32 {
    fn judge(m: &dyn Model, x: &Execution<'_, u32>, explain: bool) -> Judgement {
        m.judge_narrow(x, explain)
    }
    fn judge_flagged(
        m: &dyn Model,
        x: &Execution<'_, u32>,
        explain: bool,
    ) -> (Judgement, Vec<&'static str>) {
        m.judge_flagged_narrow(x, explain)
    }
    fn judge_partial(m: &dyn Model, x: &Execution<'_, u32>) -> Option<Violation> {
        m.judge_partial_narrow(x)
    }
}

impl Width for u64 {
    fn judge(m: &dyn Model, x: &Execution<'_, u64>, explain: bool) -> Judgement {
        m.judge(x, explain)
    }
    fn judge_flagged(
        m: &dyn Model,
        x: &Execution<'_, u64>,
        explain: bool,
    ) -> (Judgement, Vec<&'static str>) {
        m.judge_flagged(x, explain)
    }
    fn judge_partial(m: &dyn Model, x: &Execution<'_, u64>) -> Option<Violation> {
        m.judge_partial(x)
    }
}

impl Width for u128 {
    fn judge(m: &dyn Model, x: &Execution<'_, u128>, explain: bool) -> Judgement {
        m.judge_wide(x, explain)
    }
    fn judge_flagged(
        m: &dyn Model,
        x: &Execution<'_, u128>,
        explain: bool,
    ) -> (Judgement, Vec<&'static str>) {
        m.judge_flagged_wide(x, explain)
    }
    fn judge_partial(m: &dyn Model, x: &Execution<'_, u128>) -> Option<Violation> {
        m.judge_partial_wide(x)
    }
}
