//! Executable pages for generated code, W^X: the code is written into a
//! private anonymous mapping that is readable and writable, then the
//! mapping is switched to readable and executable with `mprotect(2)`. No
//! page is ever writable and executable at once.
//!
//! On AArch64 the instruction cache is not coherent with data writes: the
//! new code is cleaned from the data cache to the point of unification and
//! invalidated in the instruction cache (Arm ARM DDI 0487, B2.4.4,
//! "Concurrent modification and execution of instructions"; the sequence
//! is the one given there), and each thread that runs it issues an ISB
//! first (the harness does).
//!
//! On RISC-V instruction fetch is not coherent with stores either, and
//! `FENCE.I` (Zifencei) only makes the stores visible to the fetches of
//! the hart that executes it: a thread that later runs the code may sit on
//! another hart, or migrate to one, with stale instructions. Linux's
//! `riscv_flush_icache(start, end, flags)` system call (number 259) with
//! flags 0 makes the range coherent for every hart of the process: it
//! runs `FENCE.I` locally, interrupts the other harts running the process
//! to do the same, and marks the rest to do it before they next run it
//! (arch/riscv/mm/cacheflush.c). It is called after the copy and before
//! the threads are started, so their creation orders it before their
//! first fetch of the code.

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
        #[cfg(target_arch = "aarch64")]
        sync_icache(page_ref.ptr, code.len());
        #[cfg(target_arch = "riscv64")]
        flush_icache_all_harts(page_ref.ptr, code.len())?;
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

/// Cleans `len` bytes at `p` from the data cache to the point of
/// unification and invalidates them in the instruction cache, for every
/// core of the inner-shareable domain (DC CVAU, DSB ISH, IC IVAU, DSB ISH),
/// with the line sizes CTR_EL0 gives (Linux lets EL0 read it).
#[cfg(target_arch = "aarch64")]
fn sync_icache(p: *const u8, len: usize) {
    let ctr: u64;
    // SAFETY: reading CTR_EL0 has no side effects; Linux allows it at EL0
    // (SCTLR_EL1.UCT, or it emulates the read).
    unsafe { core::arch::asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
    let dline = 4usize << ((ctr >> 16) & 15);
    let iline = 4usize << (ctr & 15);
    let (start, end) = (p as usize, p as usize + len);
    let mut a = start & !(dline - 1);
    while a < end {
        // SAFETY: `a` is within (the cache line of) the caller's readable
        // mapping; DC CVAU only writes dirty lines back.
        unsafe { core::arch::asm!("dc cvau, {}", in(reg) a, options(nostack)) };
        a += dline;
    }
    // SAFETY: a barrier, no operands.
    unsafe { core::arch::asm!("dsb ish", options(nostack)) };
    let mut a = start & !(iline - 1);
    while a < end {
        // SAFETY: as above; IC IVAU only invalidates instruction cache lines.
        unsafe { core::arch::asm!("ic ivau, {}", in(reg) a, options(nostack)) };
        a += iline;
    }
    // SAFETY: barriers, no operands.
    unsafe { core::arch::asm!("dsb ish", "isb", options(nostack)) };
}

/// Makes `len` bytes at `p` coherent with the instruction fetch of every
/// hart of this process: `riscv_flush_icache(start, end, 0)` (Linux's
/// system call 259; flags 0, not SYS_RISCV_FLUSH_ICACHE_LOCAL).
#[cfg(target_arch = "riscv64")]
fn flush_icache_all_harts(p: *const u8, len: usize) -> io::Result<()> {
    const SYS_RISCV_FLUSH_ICACHE: libc::c_long = 259;
    let (start, end) = (p as usize, p as usize + len);
    // SAFETY: the system call only synchronises instruction caches for
    // the range, which is this process's own readable mapping.
    let rc = unsafe { libc::syscall(SYS_RISCV_FLUSH_ICACHE, start, end, 0usize) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
