//! Load records (`atomlab load`): the terminal's view ([`view`]: rates,
//! latency percentiles, errors and CPU per run) and the page's section
//! (`section.rs`: the latency percentiles and the requests in each second,
//! a line per run, above the same table).

use super::Kind;

mod section;
mod view;

/// load's entry in [`super::KINDS`].
pub(crate) const KIND: Kind = Kind {
    name: "load",
    terminal: |mut out, report| view::write_terminal(&mut out, &report.records),
    section: Some(section::section),
};
