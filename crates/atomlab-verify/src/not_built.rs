//! Why a client cannot be built for a variant: code verify does not follow,
//! or a description that gives nothing to run.

use crate::lift::Refusal;

/// Why a variant cannot be checked.
pub enum NotBuilt {
    /// Its code is outside what verify follows.
    Refused(Refusal),
    /// Its description says nothing verify can run (no such function),
    /// or the client cannot be made for it; says what to do.
    Missing(String),
}
