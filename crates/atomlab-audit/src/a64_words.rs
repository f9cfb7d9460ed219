//! A cheap look at one A64 instruction word, so that the scan (`aarch64.rs`)
//! calls yaxpeax-arm's full decoder only on the few words it must
//! (issue 27's archive speed target: the decoder was most of the time).
//!
//! A64 instructions are fixed 32-bit words whose encoding class is fixed
//! bits (Arm ARM DDI 0487, C4.1 "A64 instruction set encoding", the
//! top-level table on `op0` = bits 28:25, then each group's table):
//!
//! - Loads and Stores (`op0` = x1x0): the plain STR, LDR, STP and LDP
//!   most code is made of, in the allocated encodings of five classes:
//!   "Load/store register pair" (no-allocate, post-, offset and
//!   pre-indexed), "Load/store register (unscaled immediate / immediate
//!   post-indexed / immediate pre-indexed)", "Load/store register
//!   (register offset)", "Load/store register (unsigned immediate)" and
//!   "Load register (literal)" ([`PLAIN_LOAD_STORE`]). None of them is an
//!   exclusive, an LSE atomic, a load-acquire or store-release, or an RCpc
//!   access: those are the classes "Load/store exclusive register",
//!   "Load/store ordered", "Compare and swap (pair)", "Atomic memory
//!   operations" (op3 = 1xxxxx, op4 = 00) and "LDAPR/STLR (unscaled
//!   immediate)", which stay with the decoder, as do sign-extending loads,
//!   prefetches, unprivileged and SIMD structure accesses.
//! - Branches, Exception Generating and System instructions (`op0` =
//!   101x): "Unconditional branch (immediate)" (B, BL), "Compare and branch
//!   (immediate)" (CBZ, CBNZ), "Test and branch (immediate)" (TBZ, TBNZ),
//!   "Conditional branch (immediate)" (B.cond with o1 = o0 = 0), the exact
//!   BR, BLR and RET of "Unconditional branch (register)", and "Hints"
//!   (NOP, BTI, PACIASP…: CRn = 0010, which is not a barrier's 0011)
//!   ([`BRANCHES`]).
//! - Data Processing -- Immediate (`op0` = 100x): "PC-rel. addressing"'s
//!   ADRP (op = 1).
//!
//! Why skipping these cannot change an audit: the scan wants from a word
//! its class (`classify`, which none of the skipped classes has), whether
//! it is B or BL (a call: the target is `imm26`, computed here), ADRP (its
//! register), an LDRB continuing a helper prelude (only after an ADRP: the
//! scan then decodes plain loads and stores in full), a conditional branch
//! (only while a store-exclusive waits for its retry branch or a prelude
//! waits for its CBZ: the scan then decodes it in full), and whether the
//! decoder refuses it (counted as undecodable; every word of the classes
//! above decodes). The test at the end checks each of those claims against
//! the full decoder on the fixtures' words and a sample of every class,
//! and `every_word_of_every_class` (ignored: about a billion decodes; run
//! it with `cargo test --release -p atomlab-audit -- --ignored`) on every
//! 32-bit word.

/// What the scan must do with one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WordKind {
    /// Data processing (register, immediate other than ADRP) and SIMD&FP:
    /// never decoded, as before this module (the `op0` test).
    Ignored,
    /// Decodes, and is nothing the scan classifies or tracks (BR, BLR,
    /// RET, hints).
    Plain,
    /// A plain load or store: decodes, never classified; it matters only
    /// as the LDRB of a helper prelude, right after an ADRP.
    PlainLoadStore,
    /// CBZ, CBNZ, TBZ, TBNZ or B.cond: decodes; it matters only to a
    /// store-exclusive awaiting its retry branch or to a helper prelude.
    CondBranch,
    /// B or BL to `word`'s PC-relative target ([`branch_target`]).
    Branch,
    /// ADRP into register `word & 31`.
    Adrp,
    /// Anything else the scan wants: the full decoder.
    Decode,
}

/// The plain loads and stores, as (mask, value): in the Loads and Stores
/// group (`op0` = x1x0), the allocated encodings of five classes (Arm ARM
/// C4.1, each class's table; `size` = bits 31:30, `V` = bit 26, `opc` =
/// bits 23:22 or, for pairs, bits 31:30).
pub(crate) const PLAIN_LOAD_STORE: [(u32, u32); 9] = [
    // Load/store register pair (no-allocate, post-, offset, pre-indexed):
    // STP/LDP of W or S (opc 00), of X or Q (opc 10), of D (opc 01, V 1).
    // Not opc 11 (unallocated), nor opc 01 with V 0 (STGP, LDPSW).
    (0xfa00_0000, 0x2800_0000),
    (0xfa00_0000, 0xa800_0000),
    (0xfe00_0000, 0x6c00_0000),
    // Load/store register (unscaled immediate, immediate post-indexed,
    // immediate pre-indexed: op4 00, 01, 11; not unprivileged, 10), STR and
    // LDR of every size (opc 0x; not the sign-extending loads and
    // prefetches of opc 1x).
    (0x3ba0_0c00, 0x3800_0000),
    (0x3ba0_0c00, 0x3800_0400),
    (0x3ba0_0c00, 0x3800_0c00),
    // Load/store register (register offset), opc 0x, with an allocated
    // extend (option x1x: UXTW, LSL, SXTW, SXTX).
    (0x3ba0_4c00, 0x3820_4800),
    // Load/store register (unsigned immediate), opc 0x.
    (0x3b80_0000, 0x3900_0000),
    // Load register (literal): LDR of W, X, S or D (opc 0x).
    (0xbb00_0000, 0x1800_0000),
];

/// The words of the Branches, Exception Generating and System group
/// (`op0` = 101x) the scan can read from their bits, as (mask, value, kind).
pub(crate) const BRANCHES: [(u32, u32, WordKind); 8] = [
    // Unconditional branch (immediate): B, BL.
    (0x7c00_0000, 0x1400_0000, WordKind::Branch),
    // Compare and branch (immediate): CBZ, CBNZ.
    (0x7e00_0000, 0x3400_0000, WordKind::CondBranch),
    // Test and branch (immediate): TBZ, TBNZ.
    (0x7e00_0000, 0x3600_0000, WordKind::CondBranch),
    // Conditional branch (immediate), o1 = o0 = 0: B.cond.
    (0xff00_0010, 0x5400_0000, WordKind::CondBranch),
    // Unconditional branch (register): BR, BLR, RET, exactly.
    (0xffff_fc1f, 0xd61f_0000, WordKind::Plain),
    (0xffff_fc1f, 0xd63f_0000, WordKind::Plain),
    (0xffff_fc1f, 0xd65f_0000, WordKind::Plain),
    // Hints (HINT #imm: NOP, YIELD, BTI, PACIASP…): CRn 0010, where the
    // barriers are CRn 0011.
    (0xffff_f01f, 0xd503_201f, WordKind::Plain),
];

/// The kind of `word` (Arm ARM C4.1; the encodings are in the tables above).
#[inline]
pub(crate) fn kind(word: u32) -> WordKind {
    let op0 = (word >> 25) & 0xf;
    if op0 & 0b0101 == 0b0100 {
        // Loads and Stores.
        return if PLAIN_LOAD_STORE.iter().any(|&(m, v)| word & m == v) {
            WordKind::PlainLoadStore
        } else {
            WordKind::Decode
        };
    }
    if op0 & 0b1110 == 0b1010 {
        // Branches, Exception Generating and System instructions.
        return BRANCHES
            .iter()
            .find(|&&(m, v, _)| word & m == v)
            .map_or(WordKind::Decode, |&(_, _, k)| k);
    }
    // Data Processing -- Immediate: PC-rel. addressing with op 1.
    if op0 & 0b1110 == 0b1000 && word & 0x9f00_0000 == 0x9000_0000 {
        return WordKind::Adrp;
    }
    WordKind::Ignored
}

/// The target of the B or BL `word` at `addr`: `imm26` words away, signed
/// (Arm ARM C6.2 B, BL).
#[inline]
pub(crate) fn branch_target(addr: u64, word: u32) -> u64 {
    // Shift imm26 to the top, then back arithmetically: sign-extended ×4.
    let offset = (((word << 6) as i32) >> 4) as i64;
    addr.wrapping_add(offset as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aarch64::test_support::{classified, decoded};
    use yaxpeax_arm::armv8::a64::{Opcode, Operand};

    /// Every class this module lets the scan skip, as (mask, value) and
    /// the kind it gives.
    fn classes() -> Vec<(u32, u32, WordKind)> {
        PLAIN_LOAD_STORE
            .iter()
            .map(|&(m, v)| (m, v, WordKind::PlainLoadStore))
            .chain(BRANCHES)
            .chain([(0x9f00_0000, 0x9000_0000, WordKind::Adrp)])
            .collect()
    }

    /// What the full decoder says of `word`, against what [`kind`] let the
    /// scan assume. `Err` names the difference.
    fn agrees(word: u32) -> Result<(), String> {
        let k = kind(word);
        if matches!(k, WordKind::Ignored | WordKind::Decode) {
            return Ok(());
        }
        let Some(inst) = decoded(word) else {
            return Err(format!("{word:#010x} ({k:?}) does not decode"));
        };
        if let Some(class) = classified(&inst) {
            return Err(format!("{word:#010x} ({k:?}) is {class:?}"));
        }
        use Opcode::*;
        let tracked = matches!(
            inst.opcode,
            ADRP | LDRB | CBZ | CBNZ | Bcc(_) | TBZ | TBNZ | BL | B
        );
        let ok = match k {
            WordKind::Plain => !tracked,
            WordKind::PlainLoadStore => !tracked || inst.opcode == LDRB,
            WordKind::CondBranch => matches!(inst.opcode, CBZ | CBNZ | Bcc(_) | TBZ | TBNZ),
            WordKind::Branch => {
                matches!(inst.opcode, BL | B)
                    && [0u64, 0x40_0000, u64::MAX - 3].iter().all(|&addr| {
                        matches!(inst.operands[0], Operand::PCOffset(off)
                            if addr.wrapping_add(off as u64) == branch_target(addr, word))
                    })
            }
            WordKind::Adrp => {
                inst.opcode == ADRP
                    && matches!(inst.operands[0], Operand::Register(_, r) if u32::from(r) == word & 31)
            }
            WordKind::Ignored | WordKind::Decode => true,
        };
        if ok {
            Ok(())
        } else {
            Err(format!("{word:#010x} ({k:?}) decodes as {:?}", inst.opcode))
        }
    }

    /// A small xorshift generator: the sample is the same every run.
    fn words(seed: u64, n: usize) -> impl Iterator<Item = u32> {
        let mut x = seed;
        (0..n).map(move |_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 16) as u32
        })
    }

    #[test]
    fn the_classes_give_their_kind() {
        for (i, (mask, value, want)) in classes().into_iter().enumerate() {
            for w in words(i as u64 + 1, 1000) {
                let w = (w & !mask) | value;
                assert_eq!(kind(w), want, "{w:#010x}");
            }
        }
        // add, mov (orr), cmp (subs), fadd: data processing, never decoded.
        for w in [0x0b100011u32, 0x2a0003f0, 0xeb10001f, 0x1e222820] {
            assert_eq!(kind(w), WordKind::Ignored, "{w:#010x}");
        }
        // The barriers, exclusives and LSE stay with the decoder.
        for w in [
            0xd5033bbfu32,
            0xd50339bf,
            0xd5033fdf,
            0x885ffc40,
            0xb8200020,
            0x88e0fc41,
        ] {
            assert_eq!(kind(w), WordKind::Decode, "{w:#010x}");
        }
    }

    /// The fixtures' words (from `aarch64-linux-gnu-objdump` on them) and
    /// 40,000 words of each class: the decoder agrees with every shortcut.
    #[test]
    fn a_sample_of_every_class_agrees_with_the_decoder() {
        let fixtures = [
            0xb8200020u32, // ldadd
            0x885ffc40,    // ldaxr
            0xd5033bbf,    // dmb ish
            0x90000110,    // adrp x16
            0x39420210,    // ldrb w16, [x16, #0x80]
            0x34000070,    // cbz w16
            0x94000090,    // bl
            0xd65f03c0,    // ret
            0x35ffff91,    // cbnz w17, back
            0x54000061,    // b.ne
            0x17ffffff,    // b back
            0xa9bf7bfd,    // stp x29, x30, [sp, #-16]!
            0xa8c17bfd,    // ldp x29, x30, [sp], #16
            0xf9400000,    // ldr x0, [x0]
            0xb8616800,    // ldr w0, [x0, x1]
            0x58000040,    // ldr x0, literal
            0xd503201f,    // nop
            0xd503233f,    // paciasp
            0xd63f0020,    // blr x1
        ];
        let mut bad: Vec<String> = fixtures.iter().filter_map(|&w| agrees(w).err()).collect();
        for (i, (mask, value, _)) in classes().into_iter().enumerate() {
            for w in words(0x9e37_79b9 + i as u64, 40_000) {
                bad.extend(agrees((w & !mask) | value).err());
            }
        }
        assert!(
            bad.is_empty(),
            "{} disagreements: {:?}",
            bad.len(),
            &bad[..bad.len().min(20)]
        );
    }

    /// Every 32-bit word: about 10^9 decodes (about a minute on two
    /// cores in a release build).
    #[test]
    #[ignore = "every 32-bit word; run with --release -- --ignored"]
    fn every_word_of_every_class() {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
        let bad: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let mut bad = Vec::new();
                        let mut w = t;
                        while w <= u64::from(u32::MAX) {
                            if let Err(e) = agrees(w as u32) {
                                if bad.len() < 20 {
                                    bad.push(e);
                                }
                            }
                            w += threads;
                        }
                        bad
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        assert!(bad.is_empty(), "{bad:?}");
    }
}
