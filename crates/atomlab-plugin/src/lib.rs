//! atomlab-plugin: users' own code in atomlab. One job: load a plugin (a
//! shared library that follows `include/atomlab.h`), check it before any of
//! its code runs in a benchmark, and call its functions.
//!
//! - [`abi`]: the `#[repr(C)]` mirror of `include/atomlab.h`, version
//!   [`abi::ABI_VERSION`];
//! - [`elf`]: the file checks that need no loading (ELF magic, class, byte
//!   order, object type and machine, as the System V gABI's ELF header
//!   defines them), so that "not a shared object" and "built for another
//!   architecture" are said plainly instead of as `dlerror` text;
//! - [`load`]: `dlopen(3)` (`RTLD_NOW | RTLD_LOCAL`) and `dlsym(3)` of the
//!   entry point `atomlab_plugin`, the description's checks (ABI version,
//!   names, kinds, function pointers), and the file's SHA-256 for records;
//! - [`lock`]: a plugin's lock behind a safe handle.
//!
//! Limitations: only the `lock` kind runs in this version (the header
//! defines `spsc`, `refcount` and `op` for plugins written now). Loading a
//! library runs its constructors and the entry point in the calling
//! process; isolating the variants' runs in child processes is the
//! caller's job (the `atomlab` binary's).
#![deny(missing_docs)]

pub mod abi;
pub mod elf;
pub mod load;
pub mod lock;

pub use load::{load_locks, Kind, Plugin, PluginError};
pub use lock::{LockInstance, LockVariant};
