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

use atomlab_litmus::{Annot, Barrier, BarrierKind, BarrierOpt, Expr, Fence, Instr, MemOrder, Test};

/// A target of the C11 mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// x86-64 (x86-TSO).
    X86,
    /// AArch64, with the acquire-load choice.
    AArch64(AcquireLoad),
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
    let name = match kind {
        BarrierKind::Full => "ISH",
        BarrierKind::Ld => "ISHLD",
        BarrierKind::St => "ISHST",
    };
    Instr::Fence(Fence::Dmb(Barrier::Dmb, BarrierOpt { kind, name }))
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
                    let (r, w) = isa_rmw(read, write, t);
                    let (f, _) = isa_rmw(fail, fail, t);
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

fn isa_rmw(read: &Annot, write: &Annot, t: Target) -> (Annot, Annot) {
    let o = read.order.unwrap_or(MemOrder::SeqCst);
    match t {
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
