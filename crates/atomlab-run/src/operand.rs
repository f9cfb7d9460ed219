//! The operands the three encoders take in one spelling: the comparison a
//! conditional branch, set or select tests ([`Cond`]), and the size of a
//! memory access ([`Size`]). Each encoder maps them to its own fields: the
//! AArch64 condition codes (Arm ARM DDI 0487, C1.2.4) and `size` field
//! (C4.1), the x86-64 `tttn` nibble of `Jcc`/`SETcc`/`CMOVcc` (Intel SDM
//! vol. 2, appendix B.1.4.7), RV64's BRANCH `funct3` and LOAD/STORE width
//! (RISC-V Unprivileged ISA manual, 2.5-2.6), so a code generator turns a
//! test's comparison into a condition once, here, for every ISA.

use atomlab_litmus::BinOp;

/// A comparison of two 64-bit values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cond {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Signed less.
    Lt,
    /// Signed less or equal.
    Le,
    /// Signed greater.
    Gt,
    /// Signed greater or equal.
    Ge,
    /// Unsigned less (AArch64 `LO`, x86 `B`).
    Ltu,
    /// Unsigned less or same (AArch64 `LS`, x86 `BE`).
    Leu,
    /// Unsigned greater (AArch64 `HI`, x86 `A`).
    Gtu,
    /// Unsigned greater or same (AArch64 `HS`, x86 `AE`).
    Geu,
}

impl Cond {
    /// The condition a litmus comparison `a op b` tests; `None` for an
    /// operation that is not a comparison.
    pub(crate) fn of(op: BinOp) -> Option<Cond> {
        Some(match op {
            BinOp::Eq => Cond::Eq,
            BinOp::Ne => Cond::Ne,
            BinOp::Lt => Cond::Lt,
            BinOp::Le => Cond::Le,
            BinOp::Gt => Cond::Gt,
            BinOp::Ge => Cond::Ge,
            BinOp::Ult => Cond::Ltu,
            BinOp::Ule => Cond::Leu,
            BinOp::Ugt => Cond::Gtu,
            BinOp::Uge => Cond::Geu,
            _ => return None,
        })
    }

    /// The opposite condition: it holds exactly when `self` does not.
    pub(crate) fn invert(self) -> Cond {
        match self {
            Cond::Eq => Cond::Ne,
            Cond::Ne => Cond::Eq,
            Cond::Lt => Cond::Ge,
            Cond::Ge => Cond::Lt,
            Cond::Le => Cond::Gt,
            Cond::Gt => Cond::Le,
            Cond::Ltu => Cond::Geu,
            Cond::Geu => Cond::Ltu,
            Cond::Leu => Cond::Gtu,
            Cond::Gtu => Cond::Leu,
        }
    }

    /// The condition with its operands swapped: `a < b` is `b > a`.
    pub(crate) fn swap(self) -> Cond {
        match self {
            Cond::Eq | Cond::Ne => self,
            Cond::Lt => Cond::Gt,
            Cond::Gt => Cond::Lt,
            Cond::Le => Cond::Ge,
            Cond::Ge => Cond::Le,
            Cond::Ltu => Cond::Gtu,
            Cond::Gtu => Cond::Ltu,
            Cond::Leu => Cond::Geu,
            Cond::Geu => Cond::Leu,
        }
    }
}

/// The size of a memory access. The encoders encode every size (tested
/// against GNU as); the generator's accesses are 64-bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Size {
    /// 8 bits (AArch64 `LDRB`, RV64 `LB`).
    B,
    /// 16 bits (`LDRH`, `LH`).
    H,
    /// 32 bits (an AArch64 W register, RV64 `LW` and `.W`).
    W,
    /// 64 bits (an AArch64 X register, RV64 `LD` and `.D`).
    D,
}

impl Size {
    /// The log2 of its bytes: AArch64's `size` field, RV64's LOAD/STORE
    /// `funct3`.
    pub(crate) fn log2(self) -> u32 {
        match self {
            Size::B => 0,
            Size::H => 1,
            Size::W => 2,
            Size::D => 3,
        }
    }

    /// The size of an access of `bytes` bytes (0, unfixed, is 64-bit).
    #[cfg(test)] // no caller yet: run's accesses are 64-bit
    pub(crate) fn of_bytes(bytes: u8) -> Option<Size> {
        Some(match bytes {
            1 => Size::B,
            2 => Size::H,
            4 => Size::W,
            0 | 8 => Size::D,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Cond; 10] = [
        Cond::Eq,
        Cond::Ne,
        Cond::Lt,
        Cond::Le,
        Cond::Gt,
        Cond::Ge,
        Cond::Ltu,
        Cond::Leu,
        Cond::Gtu,
        Cond::Geu,
    ];

    /// Whether `c` holds for `a` and `b`.
    fn holds(c: Cond, a: i64, b: i64) -> bool {
        let (ua, ub) = (a as u64, b as u64);
        match c {
            Cond::Eq => a == b,
            Cond::Ne => a != b,
            Cond::Lt => a < b,
            Cond::Le => a <= b,
            Cond::Gt => a > b,
            Cond::Ge => a >= b,
            Cond::Ltu => ua < ub,
            Cond::Leu => ua <= ub,
            Cond::Gtu => ua > ub,
            Cond::Geu => ua >= ub,
        }
    }

    #[test]
    fn invert_and_swap_mean_what_they_say() {
        let values = [i64::MIN, -2, -1, 0, 1, 2, i64::MAX];
        for c in ALL {
            for a in values {
                for b in values {
                    assert_eq!(holds(c.invert(), a, b), !holds(c, a, b), "{c:?} {a} {b}");
                    assert_eq!(holds(c.swap(), b, a), holds(c, a, b), "{c:?} {a} {b}");
                }
            }
        }
    }

    #[test]
    fn every_comparison_has_a_condition() {
        let ops = [
            (BinOp::Eq, 1, 1),
            (BinOp::Ne, 1, 2),
            (BinOp::Lt, -1, 0),
            (BinOp::Le, 0, 0),
            (BinOp::Gt, 0, -1),
            (BinOp::Ge, 0, 0),
            (BinOp::Ult, 0, -1),
            (BinOp::Ule, -1, -1),
            (BinOp::Ugt, -1, 0),
            (BinOp::Uge, -1, 0),
        ];
        for (op, a, b) in ops {
            let c = Cond::of(op).expect("a comparison");
            assert!(holds(c, a, b), "{op:?}");
            assert!(!holds(c.invert(), a, b), "{op:?}");
        }
        assert_eq!(Cond::of(BinOp::Add), None);
        assert_eq!(Size::of_bytes(8), Some(Size::D));
        assert_eq!(Size::of_bytes(0), Some(Size::D));
        assert_eq!(Size::of_bytes(3), None);
        assert_eq!(Size::of_bytes(4).map(Size::log2), Some(2));
    }
}
