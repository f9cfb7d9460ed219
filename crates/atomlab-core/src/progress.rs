//! What a long command tells the person watching while it runs: one event
//! type that every capability emits and one reporter in the command line
//! draws (a bar on a terminal, nothing in a pipe), as cargo-nextest's
//! runner emits events that its reporter renders. A capability never
//! draws: it says where it is, in [`Event`]s, to the [`Sink`] it is given.

/// Where a batch of steps (cells, variants, packages) has got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

/// Where a capability sends its events.
pub type Sink<'s> = &'s mut dyn FnMut(Event<'_>);

/// A sink that drops every event (a caller with no one watching).
pub fn silent(_: Event<'_>) {}
