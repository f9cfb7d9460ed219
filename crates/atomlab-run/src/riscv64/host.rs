//! What running generated code needs of a RISC-V (RV64, Linux) host: the
//! `time` CSR (RDTIME, Zicntr) at the platform's timebase frequency, the
//! LP64 psABI's entry, and Linux's `riscv_flush_icache` for new code.
//!
//! Instruction fetch is not coherent with stores, and `FENCE.I`
//! (Zifencei) only makes the stores visible to the fetches of the hart
//! that executes it: a thread that later runs the code may sit on another
//! hart, or migrate to one, with stale instructions. Linux's
//! `riscv_flush_icache(start, end, flags)` system call (number 259) with
//! flags 0 makes the range coherent for every hart of the process: it
//! runs `FENCE.I` locally, interrupts the other harts running the process
//! to do the same, and marks the rest to do it before they next run it
//! (arch/riscv/mm/cacheflush.c). It is called after the copy and before
//! the threads are started, so their creation orders it before their
//! first fetch of the code.

use std::io;

/// A thread's generated function: one pointer (a0) to its frame.
pub(crate) type ThreadFn = extern "C" fn(*mut u64);

/// The `time` CSR.
#[inline(always)]
pub(crate) fn ticks() -> u64 {
    let t: u64;
    // SAFETY: RDTIME reads the `time` CSR, which Linux lets user mode read
    // (Zicntr); no side effects.
    unsafe { core::arch::asm!("rdtime {}", out(reg) t, options(nomem, nostack)) };
    t
}

/// The `time` CSR's frequency, which user mode cannot read from a
/// register: Linux gives it in the device tree; 10 MHz (QEMU's virt
/// board) when that is absent. Read once.
pub(crate) fn timer_hz() -> Option<u64> {
    static HZ: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    Some(*HZ.get_or_init(|| {
        std::fs::read("/proc/device-tree/cpus/timebase-frequency")
            .ok()
            .and_then(|b| <[u8; 4]>::try_from(b.as_slice()).ok())
            .map(|b| u64::from(u32::from_be_bytes(b)))
            .unwrap_or(10_000_000)
    }))
}

/// Makes `len` bytes at `p` coherent with the instruction fetch of every
/// hart of this process: `riscv_flush_icache(start, end, 0)` (flags 0,
/// not SYS_RISCV_FLUSH_ICACHE_LOCAL).
pub(crate) fn sync_code(p: *const u8, len: usize) -> io::Result<()> {
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

/// Before running code another thread wrote: nothing more
/// ([`sync_code`] reached every hart).
#[inline(always)]
pub(crate) fn before_new_code() {}

/// A full fence: FENCE RW,RW (what Rust's `fence(SeqCst)` is too; written
/// out beside x86-64's MFENCE).
#[inline(always)]
pub(crate) fn full_fence() {
    // SAFETY: FENCE has no register operands; the asm's default memory
    // clobber keeps the compiler from moving accesses across it.
    unsafe { core::arch::asm!("fence rw,rw", options(nostack, preserves_flags)) };
}

/// Whether this CPU has the Linux hwcap `hwcap`: none of the AArch64
/// features `run` asks about exists here.
pub(crate) fn has(_hwcap: &str) -> bool {
    false
}
