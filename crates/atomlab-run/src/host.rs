//! The host's side of running generated code, from the folder of the ISA
//! this atomlab was built for (`<isa>/host.rs`): its cycle or timer count
//! ([`ticks`], [`timer_hz`]), how new code is made fetchable
//! ([`sync_code`], [`before_new_code`]), how a thread's function is
//! entered ([`entry`]), and its CPU features ([`has`]). The harness and
//! the code pages use only these, so they hold no ISA's code themselves.
//! On a host without a backend, stand-ins that `run` never reaches (it
//! refuses every test there: [`crate::Isa::host`]).

#[cfg(target_arch = "aarch64")]
pub(crate) use crate::aarch64::host::*;
#[cfg(target_arch = "riscv64")]
pub(crate) use crate::riscv64::host::*;
#[cfg(target_arch = "x86_64")]
pub(crate) use crate::x86_64::host::*;

#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
pub(crate) use stand_in::*;

/// Stand-ins for a host without a backend.
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
mod stand_in {
    use std::io;

    /// A thread's generated function (never generated here).
    pub(crate) type ThreadFn = extern "C" fn(*mut u64);

    /// No counter: 0.
    pub(crate) fn ticks() -> u64 {
        0
    }

    /// No timer.
    pub(crate) fn timer_hz() -> Option<u64> {
        None
    }

    /// No code is generated here.
    pub(crate) fn sync_code(_p: *const u8, _len: usize) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "atomlab run has no backend for this ISA",
        ))
    }

    /// Never called: nothing is generated here.
    ///
    /// # Safety
    /// As the backends' `entry`.
    pub(crate) unsafe fn entry(code: *const u8) -> ThreadFn {
        // SAFETY: as the caller promises.
        unsafe { std::mem::transmute::<*const u8, ThreadFn>(code) }
    }

    /// Nothing.
    pub(crate) fn before_new_code() {}

    /// No features.
    pub(crate) fn has(_hwcap: &str) -> bool {
        false
    }
}
