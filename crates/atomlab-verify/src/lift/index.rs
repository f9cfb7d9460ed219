//! Addresses computed from a register index: a ring's slot
//! `slot[t % N]`, compiled as `base + ((t & (N - 1)) << 3)` (Lamport's
//! ring, L. Lamport, "Specifying Concurrent Program Modules", TOPLAS
//! 1983; the array sits in the object at a constant offset). The analysis
//! cannot know `t` (it is loaded from shared memory), but after the mask
//! it knows the few values the index can take: a [`Span`]. Each value
//! names one field of the object, and the access becomes an address
//! expression the checker evaluates per execution ([`select`]): the
//! location whose offset the index's value picks, as a litmus test with
//! a computed address (`ldr x0, [x1, x2]`) has its address evaluated. The
//! index register stays in the expression, so the address dependency the
//! models define (Arm ARM B2.3.2 "Dependency relations") is kept.

use atomlab_litmus::{BinOp, Expr, LocId, Value};

/// The most values an index may take: a ring with more slots than this
/// is refused (each slot is a location of the test).
pub const MAX_SPAN: i64 = 64;

/// The values `lo + k·step` for `k < count` (count ≥ 1): what an index
/// masked with `and` to a few values, then offset and scaled, can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The least value.
    pub lo: i64,
    /// The distance between two values.
    pub step: i64,
    /// How many values.
    pub count: i64,
}

impl Span {
    /// `x & mask` for an `x` not known: 0..=mask, when that is a few
    /// values (`None` otherwise).
    pub fn masked(mask: i64) -> Option<Span> {
        (0..MAX_SPAN).contains(&mask).then_some(Span {
            lo: 0,
            step: 1,
            count: mask + 1,
        })
    }

    /// The last value (the greatest unless the values wrapped around, as
    /// the machine's 64-bit arithmetic does).
    pub fn hi(self) -> i64 {
        self.lo
            .wrapping_add(self.step.wrapping_mul(self.count.wrapping_sub(1)))
    }

    /// Each value plus `c`.
    pub fn plus(self, c: i64) -> Span {
        Span {
            lo: self.lo.wrapping_add(c),
            ..self
        }
    }

    /// Each value shifted left by `s` bits, when none overflows.
    pub fn shifted(self, s: u32) -> Option<Span> {
        let fits = |v: i64| s < 62 && v >= 0 && v < (1i64 << (62 - s));
        (fits(self.lo) && fits(self.hi()) && self.hi() >= self.lo).then_some(Span {
            lo: self.lo << s,
            step: self.step << s,
            count: self.count,
        })
    }

    /// Whether every value lies in `0..=ones` (so a mask with `ones`, or
    /// a 32-bit view when `ones` is `u32::MAX`, leaves them as they are).
    pub fn within(self, ones: i64) -> bool {
        self.lo >= 0 && self.hi() >= self.lo && self.hi() <= ones
    }

    /// The values, least first.
    pub fn values(self) -> impl Iterator<Item = i64> {
        (0..self.count).map(move |k| self.lo.wrapping_add(k.wrapping_mul(self.step)))
    }
}

/// The address of the location `index` picks: `Σ (index == v) · loc(v)`
/// over the candidates (value, location). Exactly one term is nonzero
/// when the index holds one of the values, which the analysis
/// established; `dep` (a register times zero) is added so the address
/// depends on the base register too.
pub fn select(index: Expr, candidates: &[(i64, LocId)], dep: Expr) -> Expr {
    let mut sum = dep;
    for &(v, l) in candidates {
        let picked = Expr::bin(BinOp::Eq, index.clone(), Expr::int(v));
        sum = Expr::bin(
            BinOp::Add,
            sum,
            Expr::bin(BinOp::Mul, picked, Expr::Const(Value::Loc(l))),
        );
    }
    sum
}

/// The location an address register holding `stand_in + v` (`v` one of
/// `span`'s offsets into object `obj`, the access `imm` bytes further)
/// picks, as [`select`] over the offsets: a ring's slot address computed
/// into a register (`add a5, a5, a0; sd a1, 0(a5)`).
pub fn select_computed(
    locs: &mut super::state::Locations,
    reg: Expr,
    (obj, span, imm): (usize, Span, i64),
    width: u8,
) -> Result<Expr, String> {
    let base = locs.stand_in(obj).ok_or_else(|| {
        format!(
            "computes an address from {} and an index: only the object the function is given is followed so",
            locs.objects[obj]
        )
    })?;
    let mut candidates = Vec::new();
    for v in span.values() {
        let l = locs.field(obj, v.wrapping_add(imm), width)?;
        candidates.push((base.wrapping_add(v), l));
    }
    Ok(select(reg, &candidates, Expr::int(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_masked_index_offset_and_scaled_is_the_ring_slots() {
        // `and x3, x2, #1; add x3, x3, #2; str x1, [x0, x3, lsl #3]`.
        let s = Span::masked(1).unwrap().plus(2).shifted(3).unwrap();
        assert_eq!(s.values().collect::<Vec<_>>(), [16, 24]);
        assert!(Span::masked(MAX_SPAN).is_none());
        assert!(Span::masked(-1).is_none());
        assert!(Span::masked(3).unwrap().within(3));
        assert!(!Span::masked(3).unwrap().plus(-1).within(3));
        assert!(Span::masked(1).unwrap().plus(1 << 60).shifted(3).is_none());
        // The machine's arithmetic wraps; so do the values, and a span
        // that wrapped is within no range.
        let wrapped = Span::masked(1).unwrap().plus(i64::MAX);
        assert_eq!(wrapped.values().collect::<Vec<_>>(), [i64::MAX, i64::MIN]);
        assert!(!wrapped.within(i64::MAX));
        assert!(wrapped.shifted(1).is_none());
    }
}
