//! What can go wrong with a results store, each case naming the file or URL
//! and saying what to do about it.

/// An error of the results store. Every message names the store (its path,
/// or its URL without the password) and says what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Neither a flag, `ATOMLAB_STORE`, `ATOMLAB_DB`, `XDG_DATA_HOME` nor
    /// `HOME` says where the store is.
    #[error(
        "cannot tell where to keep the results store: neither XDG_DATA_HOME nor HOME is set; \
         pass --store PATH (a SQLite file) or --store postgres://…, or set ATOMLAB_STORE"
    )]
    NoDefaultLocation,

    /// The store location was given but empty.
    #[error("{origin} is empty: give a SQLite file path or a postgres:// URL")]
    EmptyLocation {
        /// Where it came from (`--store`, `ATOMLAB_STORE`, `ATOMLAB_DB`).
        origin: &'static str,
    },
}
