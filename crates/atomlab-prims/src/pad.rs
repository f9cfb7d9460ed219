//! Cache-line padding, so that per-thread data never shares a line.
//!
//! Sizes follow crossbeam-utils' `CachePadded`: 128 bytes on x86_64 (Intel's
//! spatial prefetcher pulls cache lines in adjacent pairs, Intel Optimization
//! Manual §3.7.3), 128 on aarch64 (big cores such as Apple's and Neoverse-V
//! have 128-byte lines or pair prefetch), 64 elsewhere.

use std::ops::{Deref, DerefMut};

/// `T` alone on its cache line(s).
#[cfg_attr(any(target_arch = "x86_64", target_arch = "aarch64"), repr(align(128)))]
#[cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    repr(align(64))
)]
#[derive(Debug, Default)]
pub struct CachePadded<T>(pub T);

impl<T> CachePadded<T> {
    /// Pads `value`.
    pub const fn new(value: T) -> Self {
        CachePadded(value)
    }
}

impl<T> Deref for CachePadded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for CachePadded<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_values_do_not_share_a_line() {
        let a = [CachePadded::new(0u8), CachePadded::new(1u8)];
        let d = (&a[1] as *const _ as usize) - (&a[0] as *const _ as usize);
        assert!(d >= 64, "distance {d}");
        assert_eq!(d % std::mem::align_of::<CachePadded<u8>>(), 0);
    }
}
