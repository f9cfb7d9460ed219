//! Parse errors that name the file, the line, the column and the construct.

/// A litmus test could not be read. Displays as `file:line:column: message`,
/// the form editors and terminals turn into links.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}:{column}: {message}")]
pub struct ParseError {
    /// The file the test came from (or `<input>`).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What was wrong, naming the construct (`unsupported instruction 'TLBI'`).
    pub message: String,
}
