use atomlab_core::{ExitStatus, Machine};

use crate::cli::SuiteArgs;
use crate::render;

pub fn run(args: SuiteArgs) -> anyhow::Result<ExitStatus> {
    let machine = Machine::detect();
    if args.json {
        render::json(&machine)?;
    } else {
        render::machine_table(&machine)?;
    }
    Ok(ExitStatus::Ok)
}
