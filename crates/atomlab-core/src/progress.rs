//! What a long command tells the person watching while it runs: one event
//! type that every capability emits and one reporter in the command line
//! draws (a bar on a terminal, nothing in a pipe), as cargo-nextest's
//! runner emits events that its reporter renders. A capability never
//! draws: it says where it is, in [`Event`]s, to the [`Sink`] it is given.

use std::sync::Arc;
use std::time::Duration;

/// Counts a long search keeps as it goes (executions explored, runs
/// enumerated), which whoever watches reads now and then from a thread of
/// its own: the work only counts, in atomics, and says in words what its
/// counts mean.
pub trait Live: Send + Sync {
    /// What the work has done so far, in words (`1234 executions
    /// explored`), read while it runs.
    fn so_far(&self) -> String;
}

impl std::fmt::Debug for dyn Live + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Live")
    }
}

/// Where a batch of steps (cells, variants, packages) has got to.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A batch begins: `total` steps of `what` (`cells`, `variants`)
    /// follow.
    Begin {
        /// How many steps.
        total: usize,
        /// What they count.
        what: &'static str,
    },
    /// A step begins (the previous one is done), saying what it is.
    Step(&'a str),
    /// A step has ended, for steps run in parallel that end out of order.
    Done(&'a str),
    /// `done` steps are done (a count the work itself keeps), `label` is
    /// under way.
    At {
        /// Steps done.
        done: usize,
        /// What is under way.
        label: &'a str,
    },
    /// The batch is done.
    End,
    /// A part of a longer job begins (the suite's `check: …`), in words
    /// for the person watching.
    Part(&'a str),
    /// What is under way now, outside any batch (`reading DIR`, `auditing
    /// 3/40 FILE`): one line on a terminal that the next one replaces.
    Status(&'a str),
    /// Something to say once while the work goes on (`another atomlab is
    /// fetching into …; waiting for it`): a line of its own.
    Note(&'a str),
    /// From now on the steps under way keep `live`'s counts: the watcher
    /// shows them beside the step's name (a bar's message on a terminal)
    /// and, where no bar is drawn, says on a line of its own every `every`
    /// how far a step that has run that long has got, followed by
    /// `context` in parentheses (the steps done, when it is empty).
    Watch {
        /// The counts.
        live: &'a Arc<dyn Live>,
        /// How often a long step is reported where no bar is drawn.
        every: Duration,
        /// What the person watching should know besides the counts
        /// (`each model and CPU is given --timeout 60 s`).
        context: &'a str,
    },
}

/// Where a capability sends its events (from the thread that calls it; a
/// capability with workers hands them on from there or under a lock).
pub type Sink<'s> = &'s mut (dyn FnMut(Event<'_>) + Send);

/// A sink that drops every event (a caller with no one watching).
pub fn silent(_: Event<'_>) {}
