//! atomlab-plugin: users' own code in atomlab. One job: load a plugin (a
//! shared library that follows `include/atomlab.h`), check it before any of
//! its code runs in a benchmark, and call its functions.
//!
//! - [`abi`]: the `#[repr(C)]` mirror of `include/atomlab.h`, version
//!   [`abi::ABI_VERSION`], defined in atomlab-plugin-abi (the crate Rust
//!   plugins build against) and re-exported here;
//! - `elf`: the file checks that need no loading (ELF magic, class, byte
//!   order, object type and machine, as the System V gABI's ELF header
//!   defines them), so that "not a shared object" and "built for another
//!   architecture" are said plainly instead of as `dlerror` text;
//! - `library`: `dlopen(3)` (`RTLD_NOW | RTLD_LOCAL`), `dlsym(3)` and
//!   `dlclose(3)` of a library that every variant holds open;
//! - [`mod@file`]: the plugin file before anything reads it whole (a regular
//!   file of bounded size, its ELF layout within it) and its SHA-256 for
//!   records, handed down to child processes;
//! - `load`: the entry point `atomlab_plugin` and the description's
//!   checks (ABI version, names, kinds, function pointers);
//! - [`variant`]: what a variant of any kind is ([`PluginVariant`]), what
//!   each kind's functions must provide ([`variant::KindFns`]), and a
//!   scenario with plugin variants after its own ([`WithPlugins`], for
//!   bench's and stress's scenario registries);
//! - [`lock`], [`spsc`], [`refcount`], [`op`]: each kind behind safe
//!   handles;
//! - `audit`: what the plugin's functions do with atomics
//!   (atomlab-audit's classification of exactly those functions), for
//!   the line beside its figures;
//! - [`isolate`]: a variant's run in a child process (this program
//!   re-executed), so that a crash (SIGSEGV, SIGILL, SIGBUS…) or a hang is
//!   that variant's result and not the end of the command.
//!
//! Plugins written in Rust use the sibling crate `atomlab-plugin-abi`
//! (no dependencies), which owns [`abi`]: the loader and the plugins read
//! one definition.
//!
//! - `probe`: loading a plugin in a child process first, so that a
//!   constructor or entry point that crashes, exits, hangs or prints is
//!   that plugin's error and not atomlab's end; [`probe_answer`]: that
//!   child's side.
#![deny(missing_docs)]
#![warn(unreachable_pub)]

/// The ABI's types and constants, owned by the crate plugin authors in
/// Rust build against (atomlab-plugin-abi), so that both sides read one
/// definition.
pub use atomlab_plugin_abi::abi;
mod audit;
mod elf;
mod error;
pub mod file;
pub mod isolate;
mod library;
mod load;
pub mod lock;
pub mod op;
mod probe;
pub mod probe_answer;
pub mod refcount;
pub mod spsc;
pub mod variant;

pub use error::PluginError;
pub use load::{load_kind, load_locks, Kind, Plugin};
pub use lock::{LockInstance, LockVariant};
pub use op::{OpInstance, OpVariant};
pub use refcount::{RefcountInstance, RefcountVariant};
pub use spsc::SpscVariant;
pub use variant::{variant_names, PluginVariant, WithPlugins};
