//! `atomlab machine`: the fingerprint stamped on every result, with the PMU
//! probed (not assumed) so the answer is the one `bench` would get.

use atomlab_core::{ExitStatus, Machine, Report};

use super::CommandOutput;
use crate::render;

pub fn run() -> CommandOutput {
    let mut machine = Machine::detect();
    atomlab_bench::batch::probe_pmu(&mut machine);
    // What explains a noisy result: how much of the CPUs other work takes.
    if let Some(load) = atomlab_core::machine::Load::sampled(std::time::Duration::from_millis(500))
    {
        machine.load = Some(load);
    }
    CommandOutput {
        report: Report::new("machine", machine, Vec::new()),
        status: ExitStatus::Ok,
        people: Box::new(render::show),
    }
}
