//! The instruction buffer every encoder writes into: the code so far (bytes
//! for x86-64, 32-bit instruction words for AArch64 and RV64), labels, and
//! the branches still to be pointed at them. One buffer serves the three
//! ISAs; each encoder adds its instructions as an inherent `impl` on its
//! instance (`Buffer<x86_64::encode::Rel32>`, …), and says in a [`Fixup`]
//! what its code is made of and how its branches hold an offset:
//!
//! - x86-64: a 32-bit displacement from the end of the field (`Jcc rel32`,
//!   `JMP rel32`; Intel SDM vol. 2, the JMP and Jcc pages);
//! - AArch64: a word offset in imm26 (`B`) or imm19 (`B.cond`, `CBZ`,
//!   `CBNZ`) (Arm ARM DDI 0487, chapter C4 and the instruction pages
//!   of C6);
//! - RV64: a byte offset scattered over the B-type or J-type immediate
//!   (RISC-V Unprivileged ISA manual, 2.2-2.3, the instruction formats).
//!
//! Offsets are resolved once, in [`Buffer::finish`], when every label's
//! position is known.

/// A branch target, made by [`Buffer::label`] and bound with
/// [`Buffer::bind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Label(usize);

/// What a buffer holds: bytes or instruction words, written out
/// little-endian.
pub(crate) trait Unit: Copy + std::fmt::Debug {
    /// `code` as little-endian bytes.
    fn to_le_bytes(code: &[Self]) -> Vec<u8>;
}

impl Unit for u8 {
    fn to_le_bytes(code: &[u8]) -> Vec<u8> {
        code.to_vec()
    }
}

impl Unit for u32 {
    fn to_le_bytes(code: &[u32]) -> Vec<u8> {
        code.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// How one ISA's branch holds its offset.
pub(crate) trait Fixup: Copy + std::fmt::Debug {
    /// What the ISA's code is made of: bytes or instruction words.
    type Unit: Unit;

    /// Writes into `code` the offset from the branch recorded at `at` to
    /// `target` (both positions in units of the buffer); `None` when the
    /// offset does not fit the field.
    fn patch(self, code: &mut [Self::Unit], at: usize, target: usize) -> Option<()>;
}

/// An instruction buffer with labels for forward and backward branches.
#[derive(Debug)]
pub(crate) struct Buffer<F: Fixup> {
    code: Vec<F::Unit>,
    labels: Vec<Option<usize>>,
    /// (position of the branch or of its offset field, label, kind).
    fixups: Vec<(usize, Label, F)>,
}

impl<F: Fixup> Default for Buffer<F> {
    fn default() -> Self {
        Buffer {
            code: Vec::new(),
            labels: Vec::new(),
            fixups: Vec::new(),
        }
    }
}

impl<F: Fixup> Buffer<F> {
    /// An empty buffer.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A new, unbound label.
    pub(crate) fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    /// Binds `l` to the current position.
    pub(crate) fn bind(&mut self, l: Label) {
        self.labels[l.0] = Some(self.code.len());
    }

    /// The code as little-endian bytes, branches resolved; `None` if a
    /// used label was never bound or a branch is out of range.
    pub(crate) fn finish(mut self) -> Option<Vec<u8>> {
        for &(at, l, kind) in &self.fixups {
            let target = self.labels[l.0]?;
            kind.patch(&mut self.code, at, target)?;
        }
        Some(F::Unit::to_le_bytes(&self.code))
    }

    /// The code emitted so far (branches not yet resolved).
    #[cfg(test)] // the encoders' tests
    pub(crate) fn units(&self) -> &[F::Unit] {
        &self.code
    }

    /// Appends one unit.
    pub(crate) fn emit(&mut self, u: F::Unit) {
        self.code.push(u);
    }

    /// Appends units.
    pub(crate) fn emit_all(&mut self, us: &[F::Unit]) {
        self.code.extend_from_slice(us);
    }

    /// Records that the code from here on holds a branch to `l`, of kind
    /// `kind`, to be patched by [`Buffer::finish`].
    pub(crate) fn branch_here(&mut self, l: Label, kind: F) {
        self.fixups.push((self.code.len(), l, kind));
    }
}

/// The signed distance `to - from` between two positions, or `None` when it
/// does not lie in `-(1 << (bits - 1))..(1 << (bits - 1))`.
pub(crate) fn signed_offset(from: usize, to: usize, scale: i64, bits: u32) -> Option<i64> {
    let rel = (to as i64 - from as i64) * scale;
    let half = 1i64 << (bits - 1);
    (-half..half).contains(&rel).then_some(rel)
}
