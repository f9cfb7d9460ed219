//! Litmus tests in herdtools7's format: the C dialect (C11 atomics, or the
//! Linux kernel's primitives as linux-kernel.def defines them), and the X86, X86_64,
//! AArch64 and RISCV assembly subsets that `atomlab check` judges.
//!
//! A test is a header (`C MP`, doc string, `key=value` lines), an initial
//! state (`{ x=0; 0:X1=x; }`), threads (C functions `P0 (atomic_int* x) {…}`,
//! or an assembly table `P0 | P1 ;`), optional `locations [...]` and
//! `filter`, and a final condition (`exists`, `~exists`, `forall`; herd7's
//! `forall (true)` when there is none; atoms compare a variable with a
//! value or, `0:r1=1:r1`, with another variable). The
//! format is herd7's, as documented in the herdtools7 manual ("herd7: the
//! litmus format") and exercised by its test suites.
//!
//! Thread code is lowered to one small instruction set ([`ast::Instr`]) so
//! the checker (`atomlab-model`) interprets all three architectures alike;
//! what each access was (C11 order, Arm acquire/release, x86 lock) is kept
//! as an [`ast::Annot`].
//!
//! Anything outside the supported subset is a [`ParseError`] that names the
//! file, line, column and the construct, never a silently different test.
//!
//! The crate has one dependency, `thiserror`, for the error type.
//!
//! # Limitations
//! - The Linux-kernel C dialect is linux-kernel.def's primitives (ONCE,
//!   acquire/release, barriers, RCU, spinlocks, xchg/cmpxchg, atomic_t
//!   RMWs) without SRCU; `atomic_add_unless` needs a constant `u`.
//! - Mixed-size accesses, loops in C, and Arm
//!   system instructions (TLBI, DC, IC), pair loads/stores and
//!   LDIAPP/STILP are refused.
//! - Values are 64-bit integers; W-register (AArch64) and 32-bit register
//!   (X86_64) writes are not truncated.
//! - X86_64: a location accessed with two widths (`movl` and `movq`), and
//!   8- or 16-bit accesses, need mixed-size semantics and are refused.
#![warn(unreachable_pub)]
#![deny(missing_docs)]

pub mod ast;
mod builder;
mod dialect;
mod error;
pub mod inputs;
mod parse;
pub mod print;
mod scan;

pub use ast::*;
pub use error::ParseError;
pub use parse::parse;
pub use print::{print, PrintError};

/// The largest litmus file read (16 MiB): real tests are a few KB, and a
/// device or a runaway generator's output is refused instead of filling
/// memory.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Reads and parses a litmus file (at most [`MAX_FILE_BYTES`]).
pub fn parse_file(path: &std::path::Path) -> Result<Test, ParseError> {
    use std::io::Read as _;
    let name = path.display().to_string();
    let fail = |message: String| ParseError {
        file: name.clone(),
        line: 0,
        column: 0,
        message,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| {
            // Sized from the file's length, so a test is read in one call
            // and not in a doubling series of small ones (six reads for a
            // 500-byte test, a tenth of a small test's time).
            // One byte past the most, so that a larger file is seen to be.
            let len = f.metadata().map_or(0, |m| m.len()).min(MAX_FILE_BYTES + 1);
            bytes.reserve_exact(len as usize + 1);
            let mut f = f.take(MAX_FILE_BYTES + 1);
            if len == 0 {
                // A length the system does not know (a pipe, /proc).
                return f.read_to_end(&mut bytes);
            }
            // The length the metadata gives, without one more read to see
            // the end (a system call per test, 2 % of a small one's time):
            // a file written while it is read is a race either way.
            bytes.resize(len as usize, 0);
            let mut got = 0;
            while got < bytes.len() {
                match f.read(&mut bytes[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            bytes.truncate(got);
            Ok(got)
        })
        .map_err(|e| fail(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(fail(format!(
            "larger than {} MiB, the most atomlab reads of a litmus test",
            MAX_FILE_BYTES >> 20
        )));
    }
    // Valid UTF-8 (every test we know) is checked by the fast path and
    // parsed in place; other bytes become U+FFFD, which no parser accepts.
    match std::str::from_utf8(&bytes) {
        Ok(src) => parse(&name, src),
        Err(_) => parse(&name, &String::from_utf8_lossy(&bytes)),
    }
}
