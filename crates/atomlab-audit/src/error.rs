//! Why a file could not be audited. Every variant names the file and says
//! what was wrong with it in words a packager can act on.

/// Why a file (or a member of a package) could not be audited.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The file is empty.
    #[error("{path}: empty file")]
    Empty {
        /// The file.
        path: String,
    },
    /// The file does not start with the ELF magic.
    #[error("{path}: not an ELF file (it starts with {magic})")]
    NotElf {
        /// The file.
        path: String,
        /// Its first bytes, hex.
        magic: String,
    },
    /// The ELF headers or sections are cut short or point outside the file.
    #[error("{path}: truncated or corrupt ELF: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// What the ELF reader found wrong.
        reason: String,
    },
    /// An ELF for an architecture this audit does not read.
    #[error("{path}: unsupported architecture {found} (atomlab audit reads aarch64, x86-64 and riscv64)")]
    UnknownArch {
        /// The file.
        path: String,
        /// The architecture the ELF header names.
        found: String,
    },
    /// An ELF file without executable code.
    #[error("{path}: no executable code (no executable section or segment)")]
    NoCode {
        /// The file.
        path: String,
    },
    /// A Debian package that could not be unpacked.
    #[error("{path}: bad Debian package: {reason}")]
    BadPackage {
        /// The package.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// A directory with no ELF file in it.
    #[error("{path}: directory holds no ELF file")]
    NoElfInDirectory {
        /// The directory.
        path: String,
    },
    /// A Debian package that holds no ELF file (a metapackage, or one of
    /// architecture-independent files): not damaged, nothing to audit.
    #[error("{path}: no ELF file in this package (a metapackage, or architecture-independent files only): nothing to audit")]
    NoElfInPackage {
        /// The package.
        path: String,
    },
    /// A package asked for by name (`--apt`) that apt could not give.
    #[error("{path}: apt-get cannot fetch this package: {reason}")]
    NotFetched {
        /// The package name.
        path: String,
        /// apt's reason.
        reason: String,
    },
}

impl AuditError {
    /// The file, package or directory the error is about.
    pub fn path(&self) -> &str {
        match self {
            AuditError::Io { path, .. }
            | AuditError::Empty { path }
            | AuditError::NotElf { path, .. }
            | AuditError::Corrupt { path, .. }
            | AuditError::UnknownArch { path, .. }
            | AuditError::NoCode { path }
            | AuditError::BadPackage { path, .. }
            | AuditError::NoElfInDirectory { path }
            | AuditError::NoElfInPackage { path }
            | AuditError::NotFetched { path, .. } => path,
        }
    }
}
