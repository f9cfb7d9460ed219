//! Compiling a C11 test to an ISA, so that a C test can also be judged by a
//! hardware model. The tables are the standard mappings: Sewell et al.'s
//! "C/C++11 mappings to processors" page (Cambridge), which x86 compilers
//! follow, and Arm's (GCC/LLVM with LSE atomics), as proved sound for RC11
//! by Lahav et al. (PLDI 2017) and Podkopaev, Lahav and Vafeiadis (POPL 2019,
//! the IMM paper).
//!
//! | C11 operation | x86 | AArch64 |
//! |---|---|---|
//! | load relaxed / non-atomic | `MOV` | `LDR` |
//! | load consume | `MOV` | `LDR` (dependencies kept) |
//! | load acquire | `MOV` | `LDAR` (alternative: `LDAPR`, Armv8.3 RCpc) |
//! | load seq_cst | `MOV` | `LDAR` |
//! | store relaxed / non-atomic | `MOV` | `STR` |
//! | store release | `MOV` | `STLR` |
//! | store seq_cst | `XCHG` (alternative: `MOV; MFENCE`, same verdicts) | `STLR` |
//! | RMW with order o | `LOCK XADD` / `XCHG` / `LOCK CMPXCHG` | LSE `LDADD`/`SWP`/`CAS` with `A` if o ⊒ acquire, `L` if o ⊒ release |
//! | fence acquire / consume | nothing | `DMB ISHLD` |
//! | fence release / acq_rel / seq_cst | nothing / nothing / `MFENCE` | `DMB ISH` |
//! | fence relaxed | nothing | nothing |
//!
//! RISC-V follows the unprivileged spec's Table A.6, "Mappings from C/C++
//! primitives to RISC-V primitives" (appendix A, RVWMO explanatory
//! material), which the spec states is sound for RVWMO:
//!
//! | C11 operation | RISC-V |
//! |---|---|
//! | load relaxed / non-atomic | `l{w\|d}` |
//! | load acquire (and consume) | `l{w\|d}; fence r,rw` |
//! | load seq_cst | `fence rw,rw; l{w\|d}; fence r,rw` |
//! | store relaxed / non-atomic | `s{w\|d}` |
//! | store release / seq_cst | `fence rw,w; s{w\|d}` |
//! | exchange, fetch_add/and/or/xor (fetch_sub as an add) with order o | `amo<op>` with `.aq` (acquire), `.rl` (release), `.aqrl` (acq_rel, seq_cst) |
//! | compare_exchange with order o | `loop: lr{.aq\|.aqrl}; bne; sc{.rl}; bnez loop`: `lr.aq` for acquire and acq_rel, `lr.aqrl` for seq_cst, `sc.rl` for release, acq_rel and seq_cst |
//! | fence acquire / release / acq_rel / seq_cst | `fence r,rw` / `fence rw,w` / `fence.tso` / `fence rw,rw` |
//! | fence relaxed | nothing |
//!
//! `tests/golden.rs` checks this table sound for `c11` on every race-free C
//! test it has (no final state `riscv` allows that `c11` forbids). It is not
//! sound for `rc11`'s no-thin-air axiom: plain `lw`/`sw` allow relaxed load
//! buffering (as the AArch64 column does with `LDR`/`STR`).
//!
//! Control dependencies: an `if` compiles to a conditional branch around
//! its block, and the compiled test is judged as ISA code, where a branch
//! orders every po-later store (Arm's `ctrl`: from the branch along `po`;
//! RISC-V's syntactic control dependency likewise), the code after the
//! `if` included. atomlab assumes this straightforward compilation: the
//! compiler keeps the branch and moves no store across the point where the
//! branches join. A C model judging the C test itself gives no such order
//! after the join (herd7's C semantics, see `interp.rs`), since a compiler
//! may merge a store that both branches do and hoist it above the test; a
//! hardware verdict that relies on that order holds only for code compiled
//! without such a merge.
//!
//! The compare-exchange loop is judged as its last iteration: an `lr`/`sc`
//! pair whose `sc` succeeds when the comparison does, or the `lr` alone when
//! it fails (earlier iterations whose `sc` failed write nothing).

use atomlab_litmus::{
    Annot, Barrier, BarrierKind, BarrierOpt, Expr, Fence, Instr, MemOrder, RvAccesses, Test,
};

/// A target of the C11 mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// x86-64 (x86-TSO).
    X86,
    /// AArch64, with the acquire-load choice.
    AArch64(AcquireLoad),
    /// RISC-V (RVWMO), by the spec's Table A.6.
    RiscV,
}

/// How a C11 acquire load compiles on AArch64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AcquireLoad {
    /// `LDAR` (RCsc), the classic mapping.
    #[default]
    Ldar,
    /// `LDAPR` (RCpc, Armv8.3), what compilers emit with `+rcpc`.
    Ldapr,
}

/// The mapping's name as printed beside a verdict.
pub fn mapping_name(t: Target) -> &'static str {
    match t {
        Target::X86 => "C11->x86 (MOV; SC store = XCHG; RMW = LOCK; SC fence = MFENCE)",
        Target::AArch64(AcquireLoad::Ldar) => "C11->AArch64 (acquire load = LDAR; release/SC store = STLR; LSE RMWs; DMB ISH/ISHLD fences)",
        Target::AArch64(AcquireLoad::Ldapr) => "C11->AArch64 (acquire load = LDAPR; release/SC store = STLR; LSE RMWs; DMB ISH/ISHLD fences)",
        Target::RiscV => "C11->RISC-V (spec Table A.6: fenced loads/stores; AMOs .aq/.rl/.aqrl; CAS = LR/SC; fence r,rw / rw,w / tso / rw,rw)",
    }
}

fn is_acq(o: MemOrder) -> bool {
    matches!(
        o,
        MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst | MemOrder::Consume
    )
}

fn is_rel(o: MemOrder) -> bool {
    matches!(o, MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst)
}

fn dmb(kind: BarrierKind) -> Instr {
    let option = match kind {
        BarrierKind::Full => BarrierOpt::ISH,
        BarrierKind::Ld => BarrierOpt::ISHLD,
        BarrierKind::St => BarrierOpt::ISHST,
    };
    Instr::Fence(Fence::Dmb(Barrier::Dmb, option))
}

/// Rewrites `test`'s C11 accesses as `target` instructions.
pub fn compile(test: &Test, target: Target) -> Test {
    let mut out = test.clone();
    for th in &mut out.threads {
        let nop = atomlab_litmus::ast::Reg::from(th.regs.len());
        th.regs.push("%nop".into());
        let mut code: Vec<Instr> = Vec::new();
        let mut map = Vec::with_capacity(th.code.len() + 1);
        for ins in &th.code {
            map.push(code.len());
            let order = |a: &Annot| a.order.unwrap_or(MemOrder::Na);
            match (ins, target) {
                (Instr::Load { dst, addr, annot }, Target::X86) => code.push(Instr::Load {
                    dst: *dst,
                    addr: addr.clone(),
                    annot: keep(annot),
                }),
                (Instr::Load { dst, addr, annot }, Target::AArch64(acq)) => {
                    let o = order(annot);
                    let mut a = keep(annot);
                    match o {
                        MemOrder::Acquire if acq == AcquireLoad::Ldapr => a.acquire_pc = true,
                        MemOrder::Acquire | MemOrder::SeqCst => a.acquire = true,
                        _ => {}
                    }
                    code.push(Instr::Load {
                        dst: *dst,
                        addr: addr.clone(),
                        annot: a,
                    })
                }
                (Instr::Load { dst, addr, annot }, Target::RiscV) => {
                    let o = order(annot);
                    if o == MemOrder::SeqCst {
                        code.push(rv_fence(RvAccesses::RW, RvAccesses::RW));
                    }
                    code.push(Instr::Load {
                        dst: *dst,
                        addr: addr.clone(),
                        annot: keep(annot),
                    });
                    if matches!(o, MemOrder::Acquire | MemOrder::Consume | MemOrder::SeqCst) {
                        code.push(rv_fence(RvAccesses::R, RvAccesses::RW));
                    }
                }
                (Instr::Store { addr, value, annot }, Target::RiscV) => {
                    if is_rel(order(annot)) {
                        code.push(rv_fence(RvAccesses::RW, RvAccesses::W));
                    }
                    code.push(Instr::Store {
                        addr: addr.clone(),
                        value: value.clone(),
                        annot: keep(annot),
                    });
                }
                (Instr::Store { addr, value, annot }, Target::X86) => {
                    let sc = order(annot) == MemOrder::SeqCst;
                    code.push(Instr::Store {
                        addr: addr.clone(),
                        value: value.clone(),
                        annot: keep(annot),
                    });
                    if sc {
                        code.push(Instr::Fence(Fence::Mfence));
                    }
                }
                (Instr::Store { addr, value, annot }, Target::AArch64(_)) => {
                    let mut a = keep(annot);
                    a.release = is_rel(order(annot));
                    code.push(Instr::Store {
                        addr: addr.clone(),
                        value: value.clone(),
                        annot: a,
                    })
                }
                (
                    Instr::Rmw {
                        dst,
                        addr,
                        op,
                        operand,
                        read,
                        write,
                        ..
                    },
                    t,
                ) => {
                    let (r, w) = isa_rmw(read, write, t);
                    code.push(Instr::Rmw {
                        dst: *dst,
                        addr: addr.clone(),
                        op: *op,
                        operand: operand.clone(),
                        read: r,
                        write: w,
                        single: false,
                    })
                }
                (
                    Instr::Cas {
                        result,
                        addr,
                        expected,
                        desired,
                        read,
                        write,
                        fail,
                        weak,
                        ..
                    },
                    t,
                ) => {
                    let (r, w, f) = if t == Target::RiscV {
                        rv_cas(read, write, fail)
                    } else {
                        let (r, w) = isa_rmw(read, write, t);
                        (r, w, isa_rmw(fail, fail, t).0)
                    };
                    code.push(Instr::Cas {
                        result: *result,
                        addr: addr.clone(),
                        expected: expected.clone(),
                        desired: desired.clone(),
                        read: r,
                        write: w,
                        fail: f,
                        weak: *weak,
                        single: false,
                    })
                }
                (Instr::Fence(Fence::C(o)), Target::X86) => {
                    if *o == MemOrder::SeqCst {
                        code.push(Instr::Fence(Fence::Mfence));
                    } else {
                        code.push(Instr::Assign {
                            dst: nop,
                            expr: Expr::int(0),
                        });
                    }
                }
                (Instr::Fence(Fence::C(o)), Target::RiscV) => match o {
                    MemOrder::Acquire | MemOrder::Consume => {
                        code.push(rv_fence(RvAccesses::R, RvAccesses::RW))
                    }
                    MemOrder::Release => code.push(rv_fence(RvAccesses::RW, RvAccesses::W)),
                    MemOrder::AcqRel => code.push(Instr::Fence(Fence::Tso)),
                    MemOrder::SeqCst => code.push(rv_fence(RvAccesses::RW, RvAccesses::RW)),
                    _ => code.push(Instr::Assign {
                        dst: nop,
                        expr: Expr::int(0),
                    }),
                },
                (Instr::Fence(Fence::C(o)), Target::AArch64(_)) => match o {
                    MemOrder::Acquire | MemOrder::Consume => code.push(dmb(BarrierKind::Ld)),
                    MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst => {
                        code.push(dmb(BarrierKind::Full))
                    }
                    _ => code.push(Instr::Assign {
                        dst: nop,
                        expr: Expr::int(0),
                    }),
                },
                (other, _) => code.push(other.clone()),
            }
        }
        map.push(code.len());
        for ins in &mut code {
            if let Instr::Branch { target, .. } = ins {
                *target = map[(*target).min(map.len() - 1)];
            }
        }
        th.code = code;
    }
    out
}

/// Keeps the C11 order (for labels) on an ISA access.
fn keep(a: &Annot) -> Annot {
    Annot {
        order: a.order,
        ..Annot::default()
    }
}

fn rv_fence(pred: RvAccesses, succ: RvAccesses) -> Instr {
    Instr::Fence(Fence::RiscV { pred, succ })
}

/// The `lr`/`sc` annotations of a compare-exchange (Table A.6): `lr.aq`
/// for acquire and acq_rel, `lr.aqrl` for seq_cst, `sc.rl` when the order
/// releases; the failure order's `lr` alone when the comparison fails.
fn rv_cas(read: &Annot, write: &Annot, fail: &Annot) -> (Annot, Annot, Annot) {
    let lr = |a: &Annot| {
        let o = a.order.unwrap_or(MemOrder::SeqCst);
        Annot {
            acquire: is_acq(o),
            release: o == MemOrder::SeqCst,
            exclusive: true,
            ..keep(a)
        }
    };
    let o = write.order.or(read.order).unwrap_or(MemOrder::SeqCst);
    let sc = Annot {
        release: is_rel(o),
        exclusive: true,
        ..keep(write)
    };
    (lr(read), sc, lr(fail))
}

fn isa_rmw(read: &Annot, write: &Annot, t: Target) -> (Annot, Annot) {
    let o = read.order.unwrap_or(MemOrder::SeqCst);
    match t {
        // `.aq` on the read, `.rl` on the write; acq_rel and seq_cst are
        // `.aqrl`, which makes both events acquire and release (RCsc).
        Target::RiscV => {
            let aqrl = matches!(o, MemOrder::AcqRel | MemOrder::SeqCst);
            (
                Annot {
                    acquire: is_acq(o),
                    release: aqrl,
                    ..keep(read)
                },
                Annot {
                    acquire: aqrl,
                    release: is_rel(write.order.unwrap_or(o)),
                    ..keep(write)
                },
            )
        }
        Target::X86 => (
            Annot {
                locked: true,
                ..keep(read)
            },
            Annot {
                locked: true,
                ..keep(write)
            },
        ),
        Target::AArch64(_) => (
            Annot {
                acquire: is_acq(o),
                ..keep(read)
            },
            Annot {
                release: is_rel(write.order.unwrap_or(o)),
                ..keep(write)
            },
        ),
    }
}
