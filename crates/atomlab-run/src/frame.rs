//! The instance frame: what a thread's generated code reads and writes
//! besides the test's shared locations. One frame per (thread, instance),
//! in 64-bit words:
//!
//! ```text
//! [0, L)        the address of each location of this instance
//! [L, L+R)      the thread's registers: initial values in, final values out
//! L+R           the loop budget: backward branches decrement it and the
//!               code returns when it reaches zero
//! ```

/// Where things are in one thread's frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameLayout {
    /// The test's locations.
    pub locations: usize,
    /// The thread's registers.
    pub regs: usize,
}

impl FrameLayout {
    /// Words in one frame.
    pub(crate) fn words(&self) -> usize {
        self.locations + self.regs + 1
    }

    /// Word index of location `l`'s address.
    pub(crate) fn loc_word(&self, l: usize) -> usize {
        l
    }

    /// Word index of register `r`.
    pub(crate) fn reg_word(&self, r: usize) -> usize {
        self.locations + r
    }

    /// Word index of the loop budget.
    pub(crate) fn budget_word(&self) -> usize {
        self.locations + self.regs
    }

    /// Byte offset of location `l`'s address.
    pub(crate) fn loc_offset(&self, l: usize) -> i32 {
        (self.loc_word(l) * 8) as i32
    }

    /// Byte offset of register `r`.
    pub(crate) fn reg_offset(&self, r: usize) -> i32 {
        (self.reg_word(r) * 8) as i32
    }

    /// Byte offset of the loop budget.
    pub(crate) fn budget_offset(&self) -> i32 {
        (self.budget_word() * 8) as i32
    }
}
