//! `atomlab suite`: the main job, a quick tour of this machine with short
//! runs of every capability, printed as one summary per capability. What
//! runs and how is atomlab-suite's; the views are atomlab-report's.

use atomlab_core::{Machine, Report};

use super::CommandOutput;
use crate::cli::SuiteArgs;
use crate::progress::Reporter;
use atomlab_bench::batch::probe_pmu;

pub fn run(args: SuiteArgs) -> anyhow::Result<CommandOutput> {
    let mut machine = Machine::detect();
    eprintln!(
        "atomlab suite: a quick tour of this machine ({} CPUs, {})",
        machine.cpus, machine.cpu_model
    );
    if machine.emulated {
        eprintln!("atomlab: note: running under emulation (qemu-user): timings are not meaningful");
    }
    probe_pmu(&mut machine);
    let mut reporter = Reporter::new();
    let suite = atomlab_suite::run(&machine, &mut |event| match event {
        atomlab_suite::Event::Progress(e) => reporter.event(e),
        atomlab_suite::Event::Ran(ran) => crate::cmd::run::say_forbidden(ran),
    })?;
    let verbose = args.verbose;
    Ok(CommandOutput {
        report: Report::new("suite", machine, suite.records),
        status: suite.status,
        people: Box::new(move |report| {
            if verbose {
                detail(report)
            } else {
                crate::render::show(report)
            }
        }),
    })
}

/// Every table of every capability (atomlab-report's suite view).
fn detail(report: &Report) -> anyhow::Result<()> {
    atomlab_report::kinds::suite::write_detail(&mut std::io::stdout().lock(), report)?;
    Ok(())
}
