//! Exit codes shared by every subcommand (as ripgrep and hyperfine do it):
//! 0 all is well, 1 a verdict failed, 2 the input or the command line was bad.

/// What the process tells its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// The command ran and nothing it judged failed.
    Ok,
    /// A verdict failed: a violation, a regression, a forbidden outcome observed,
    /// a binary that does not comply with `--require`.
    VerdictFailed,
    /// Bad input or usage: nothing trustworthy was produced.
    BadInput,
}

impl ExitStatus {
    /// The numeric process exit code.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Ok => 0,
            ExitStatus::VerdictFailed => 1,
            ExitStatus::BadInput => 2,
        }
    }
}
