//! Executable pages for generated code, W^X: the code is written into a
//! private anonymous mapping that is readable and writable, then the
//! mapping is switched to readable and executable with `mprotect(2)`. No
//! page is ever writable and executable at once.
//!
//! Where the instruction fetch is not coherent with data writes (AArch64,
//! RISC-V), the new code is made coherent before any thread runs it, as
//! the host's ISA asks ([`crate::host::sync_code`], its folder's
//! `host.rs` citing the manual it follows); on AArch64 each thread that
//! runs it issues an ISB first ([`crate::host::before_new_code`], called
//! by the harness).

use std::io;

/// A page-aligned mapping holding one function's machine code, executable
/// and not writable.
#[derive(Debug)]
pub(crate) struct CodePage {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is immutable (PROT_READ|PROT_EXEC) once built and is
// only unmapped by Drop, which needs ownership; sharing the pointer between
// threads that execute the code is sound.
unsafe impl Send for CodePage {}
// SAFETY: as above: nothing mutates the mapping through a shared reference.
unsafe impl Sync for CodePage {}

impl CodePage {
    /// Maps `code` read-write, copies it in, and makes the mapping
    /// read-execute.
    pub(crate) fn new(code: &[u8]) -> io::Result<CodePage> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = code.len().max(1).div_ceil(page) * page;
        // SAFETY: a fresh private anonymous mapping; no existing memory is
        // touched. The result is checked against MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let page_ref = CodePage {
            ptr: ptr.cast(),
            len,
        };
        // SAFETY: the mapping is `len` >= code.len() bytes, writable, and
        // owned by `page_ref` alone.
        unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), page_ref.ptr, code.len()) };
        crate::host::sync_code(page_ref.ptr, code.len())?;
        // SAFETY: `ptr`/`len` are exactly the mapping made above.
        let rc = unsafe { libc::mprotect(ptr, len, libc::PROT_READ | libc::PROT_EXEC) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(page_ref)
    }

    /// The first byte of the code.
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.ptr
    }
}

impl Drop for CodePage {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}
