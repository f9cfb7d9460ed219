//! The one error of this crate: a plugin that cannot be used, and why.

use std::path::{Path, PathBuf};

/// A plugin that cannot be used, and why; the message starts with the file.
#[derive(Debug, thiserror::Error)]
#[error("plugin {}: {what}", path.display())]
pub struct PluginError {
    /// The file as given.
    pub path: PathBuf,
    /// What is wrong, and what to do.
    pub what: String,
}

/// The error `what` of the plugin file `path`.
pub(crate) fn err(path: &Path, what: impl Into<String>) -> PluginError {
    PluginError {
        path: path.to_path_buf(),
        what: what.into(),
    }
}
