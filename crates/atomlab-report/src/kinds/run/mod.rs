//! Run records (`atomlab run`): the terminal's view ([`view`]: a summary of
//! the tests, then per test the outcomes seen beside what each model
//! allows) and the page's section (`section.rs`: the same tables, and a
//! chart of the final states seen per test).

use super::Kind;

mod section;
pub mod view;

/// run's entry in [`super::KINDS`].
pub(crate) const KIND: Kind = Kind {
    name: "run",
    terminal: |mut out, report| {
        view::write_view(&mut out, &report.records, report.machine.emulated)
    },
    section: Some(section::section),
};
