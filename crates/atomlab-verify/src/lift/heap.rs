//! Memory from the C library's allocator, for lifted code: a call
//! through the PLT to `malloc`, `calloc` or `aligned_alloc` gives a
//! region of fresh locations, one per call site, thread and client call
//! (so a node allocated in each `lock` is a new one, as a real allocator
//! may give), and `free` is checked. The meaning follows C17 7.22.3
//! (memory management functions): `calloc`'s memory is zero, `malloc`'s
//! and `aligned_alloc`'s indeterminate (here a poison value,
//! [`POISON`], that no lock protocol expects), and after `free(p)` any use
//! of `p`'s memory is undefined, as is a second `free(p)` (7.22.3.3).
//!
//! A region's address is an integer of its own ([`HEAP_BASE`] plus a
//! stride per region) that code may compare, store in shared memory and
//! load back (an MCS lock's queue). An access through a pointer the
//! analysis cannot follow statically (loaded from memory) becomes an
//! address that selects, by the pointer's value, the field at that offset
//! of every region of the test: the address depends on the pointer's
//! value as the hardware's does (an address dependency), and a pointer
//! to no region gives the address 0, which the checker refuses ("not a
//! location"), never a silent PASS.
//!
//! Thread-local storage is a region too, one per thread ([`TLS`]), its
//! fields starting from the file's `.tdata`/`.tbss` template (the TLS
//! block of "ELF Handling For Thread-Local Storage", Drepper, 2013): the
//! lifters give it for aarch64's TPIDR_EL0 plus a TLS descriptor's offset
//! (AAELF64, "TLS descriptors") and for `__tls_get_addr`'s result on
//! x86-64 and riscv64 (the `tls_index` of the GOT slot it is given).
//!
//! Checked per thread, in a ghost register ([`ERR`]) that the client's
//! condition reads: the use of a region of the thread after the thread
//! freed it, a double free, a `free` of a pointer no allocator returned.
//! A region of another thread freed here, or used there after this
//! thread freed it, is not checked (each thread sees only its own
//! ghost registers).

use atomlab_litmus::{BinOp, Expr, Instr, LocId, Value};

pub use super::state::{Heap, Region, RegionKey};
use super::state::{Locations, Registers, OBJECT};

/// Region `i` is at `HEAP_BASE + i * REGION_STRIDE` (far from the
/// checker's own location addresses, atomlab-model's `LOC_BASE`).
pub const HEAP_BASE: i64 = 0x5000_0000_0000;
/// Bytes between two regions' addresses (a region larger than this is
/// refused).
pub const REGION_STRIDE: i64 = 0x1_0000;
/// What `malloc`'s fresh memory holds in the test (C17: indeterminate).
pub const POISON: i64 = 0x0bad_0bad_0bad_0bad;
/// The site of a thread's TLS block (one per thread, for every call).
pub const TLS: u64 = u64::MAX;

/// The thread's ghost register of heap errors (bits of [`HeapError`]).
pub const ERR: &str = "heap.err";

/// The fields (offset, width) that accesses of known regions used, and
/// for allocator regions (`tls` false) those that accesses through loaded
/// pointers asked for: every region of the second pass gets them all, so
/// that an access through a loaded pointer can select any of them (a
/// field reached only through loaded pointers, as a successor's node
/// field written by its predecessor, included: without it, such an access
/// found no field and was reported as a wild pointer, a false FAIL).
///
/// A loaded pointer's offset is the region's only when the pointer is the
/// allocation's start; it is the instruction's offset plus what the
/// lifter saw added to the register since the load (`add x0, x0, #8;
/// stlr wzr, [x0]`, as AArch64's acquire/release forms need; `addi a0,
/// a0, 8` before a RISC-V AMO), and a pointer into a TLS block is not at
/// the block's start. So such a field is kept only for allocator regions and
/// where it overlaps no field of a known region (the real one is then
/// among those, reached at run time through the pointer's value).
pub fn layout(locs: &Locations, tls: bool) -> Vec<(i64, u8)> {
    let mut out: Vec<(i64, u8)> = Vec::new();
    for r in &locs.heap.regions {
        for (off, _, w) in locs.fields_with(r.obj) {
            if !out.contains(&(off, w)) {
                out.push((off, w));
            }
        }
    }
    if !tls {
        let known = out.clone();
        for &(off, w) in &locs.heap.selected {
            let overlaps = known
                .iter()
                .any(|&(o, v)| off < o + i64::from(v) && o < off + i64::from(w));
            if !overlaps && !out.contains(&(off, w)) {
                out.push((off, w));
            }
        }
    }
    out.sort_unstable();
    out
}

/// The errors [`ERR`]'s bits stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapError {
    /// An access to memory the thread freed.
    UseAfterFree = 1,
    /// `free` of memory already freed.
    DoubleFree = 2,
    /// `free` of a pointer no allocator returned.
    ForeignFree = 4,
    /// An allocation at a site whose region is still allocated (a loop
    /// allocating in one call): one region per site and call cannot
    /// stand for both.
    Reused = 8,
    /// An access through a pointer to no allocated memory (NULL, or a
    /// value that was never an address).
    Wild = 16,
}

impl HeapError {
    /// Every error, in bit order.
    pub const ALL: [HeapError; 5] = [
        HeapError::UseAfterFree,
        HeapError::DoubleFree,
        HeapError::ForeignFree,
        HeapError::Reused,
        HeapError::Wild,
    ];

    /// The error in words.
    pub fn words(self) -> &'static str {
        match self {
            HeapError::UseAfterFree => "a thread used memory after it freed it (use after free)",
            HeapError::DoubleFree => "a thread freed memory twice (double free)",
            HeapError::ForeignFree => {
                "a thread freed a pointer that malloc/calloc/aligned_alloc did not return"
            }
            HeapError::Wild => {
                "a thread accessed memory through a pointer to no allocated memory (NULL or a stale value)"
            }
            HeapError::Reused => {
                "an allocation site ran twice in one call while its memory was still allocated (verify gives one region per call site and call: not modelled)"
            }
        }
    }
}

/// The allocators whose calls give a region.
pub const ALLOCATORS: &[&str] = &["calloc", "malloc", "aligned_alloc"];

impl Locations {
    /// The region that the allocation at `site` gives in the current
    /// thread and call (made on first use).
    pub fn region(&mut self, site: u64, allocator: &str) -> Region {
        let key = RegionKey {
            site,
            thread: self.heap.thread,
            call: self.heap.call,
            allocator: allocator.to_string(),
        };
        if let Some(r) = self.heap.regions.iter().find(|r| r.key == key) {
            return r.clone();
        }
        let i = self.heap.regions.len();
        let obj = self.object(&format!("{allocator}{i}"));
        let r = Region {
            key,
            obj,
            base: HEAP_BASE + i as i64 * REGION_STRIDE,
        };
        self.heap.regions.push(r.clone());
        r
    }

    /// The current thread's TLS block (made on first use), with the
    /// initial values of `file`'s template.
    pub fn tls_region(&mut self, file: &atomlab_audit::PluginFile<'_>) -> Region {
        let call = self.heap.call;
        self.heap.call = 0;
        let r = self.region(TLS, "tls");
        self.heap.call = call;
        if self.heap.tls_size == 0 {
            self.heap.tls_size = file.tls_size();
        }
        r
    }

    /// The region object `obj` is, if it is one.
    pub fn region_of(&self, obj: usize) -> Option<&Region> {
        self.heap.regions.iter().find(|r| r.obj == obj)
    }

    /// The initial values of the fields of `malloc`ed and `aligned_alloc`ed
    /// regions ([`POISON`]) and of TLS blocks (`file`'s template);
    /// `calloc`'s are zero, as every location.
    pub fn heap_init(&self, file: &atomlab_audit::PluginFile<'_>) -> Vec<(LocId, Value)> {
        let mut out = Vec::new();
        for r in &self.heap.regions {
            if r.key.site == TLS {
                for (off, l, w) in self.fields_with(r.obj) {
                    let v = u64::try_from(off)
                        .ok()
                        .and_then(|o| file.tls_initial(o, usize::from(w)))
                        .unwrap_or(0);
                    out.push((l, Value::Int(v as i64)));
                }
            } else if r.key.allocator != "calloc" {
                out.extend(
                    self.fields_of(r.obj)
                        .into_iter()
                        .map(|l| (l, Value::Int(POISON))),
                );
            }
        }
        out
    }
}

/// `err |= bit` when `cond` (0 or 1).
fn flag(regs: &mut Registers, cond: Expr, bit: HeapError) -> Instr {
    let err = regs.get(ERR);
    Instr::Assign {
        dst: err,
        expr: Expr::bin(
            BinOp::Or,
            Expr::Reg(err),
            Expr::bin(BinOp::Mul, cond, Expr::int(bit as i64)),
        ),
    }
}

/// The ghost register: region `r` is allocated (1) or not (0), in its
/// own thread.
fn live(regs: &mut Registers, r: &Region) -> Expr {
    Expr::Reg(regs.get(&format!("heap.live{}", r.obj)))
}

/// An allocation returning `r` into `dst`: its address, and the region
/// marked allocated (flagging [`HeapError::Reused`] if it was).
pub fn allocate(regs: &mut Registers, r: &Region, dst: &str) -> Vec<Instr> {
    let d = regs.get(dst);
    let was = live(regs, r);
    let Expr::Reg(l) = was.clone() else {
        unreachable!("live is a register")
    };
    vec![
        flag(regs, was, HeapError::Reused),
        Instr::Assign {
            dst: l,
            expr: Expr::int(1),
        },
        Instr::Assign {
            dst: d,
            expr: Expr::int(r.base),
        },
    ]
}

/// A use of region `r` (known statically) in the current thread.
pub fn use_static(regs: &mut Registers, r: &Region) -> Vec<Instr> {
    if r.key.site == TLS {
        // A thread's TLS block lives as long as the thread.
        return Vec::new();
    }
    let l = live(regs, r);
    vec![flag(regs, Expr::Not(Box::new(l)), HeapError::UseAfterFree)]
}

/// The location of `width` bytes at `field` in the region the current
/// thread's allocation at `site` gave (its TLS block for [`TLS`]), and the
/// use-after-free check of the access.
pub fn field_here(
    regs: &mut Registers,
    locs: &mut Locations,
    site: u64,
    field: i64,
    width: u8,
) -> Result<(LocId, Vec<Instr>), String> {
    let (thread, call) = (locs.heap.thread, locs.heap.call);
    let r = locs
        .heap
        .regions
        .iter()
        .find(|r| {
            r.key.site == site && r.key.thread == thread && (r.key.call == call || site == TLS)
        })
        .cloned()
        .ok_or("uses memory of an allocation that did not run")?;
    let l = locs.field(r.obj, field, width)?;
    Ok((l, use_static(regs, &r)))
}

/// `free(ptr)`, in the current thread (`thread`).
pub fn free(regs: &mut Registers, locs: &Locations, ptr: Expr) -> Vec<Instr> {
    let mut out = Vec::new();
    let mut any = Expr::int(0);
    for r in locs.heap.regions.iter().filter(|r| r.key.site != TLS) {
        let hit = Expr::bin(BinOp::Eq, ptr.clone(), Expr::int(r.base));
        any = Expr::bin(BinOp::Or, any, hit.clone());
        if r.key.thread != locs.heap.thread {
            continue;
        }
        let l = live(regs, r);
        out.push(flag(
            regs,
            Expr::bin(BinOp::And, hit.clone(), Expr::Not(Box::new(l.clone()))),
            HeapError::DoubleFree,
        ));
        let Expr::Reg(lr) = l else {
            unreachable!("live is a register")
        };
        out.push(Instr::Assign {
            dst: lr,
            expr: Expr::bin(BinOp::And, Expr::Reg(lr), Expr::Not(Box::new(hit))),
        });
    }
    if locs.heap.object_freeable {
        // free_ frees the object the client was given.
        any = Expr::bin(
            BinOp::Or,
            any,
            Expr::bin(BinOp::Eq, ptr.clone(), Expr::int(OBJECT)),
        );
    }
    // free(NULL) does nothing (C17 7.22.3.3).
    let foreign = Expr::bin(
        BinOp::And,
        Expr::bin(BinOp::Ne, ptr, Expr::int(0)),
        Expr::Not(Box::new(any)),
    );
    out.push(flag(regs, foreign, HeapError::ForeignFree));
    out
}

/// An access of `width` bytes at `ptr + offset`, `ptr` a pointer the
/// analysis does not know (loaded from memory): the address that selects
/// the field at `offset` of the region `ptr` points to (0 for none), and
/// the use-after-free checks of the thread's own regions. `field` is the
/// access's offset from the pointer as loaded, when the lifter knows it
/// (`offset` plus what was added to the register since the load), for
/// [`layout`].
pub fn select(
    regs: &mut Registers,
    locs: &mut Locations,
    ptr: Expr,
    offset: i64,
    field: i64,
    width: u8,
) -> Result<(Expr, Vec<Instr>), String> {
    locs.heap.dynamic = true;
    let mut addr = Expr::int(0);
    let mut checks = Vec::new();
    if !locs.heap.complete {
        // The first pass: the regions' fields are not all known yet; this
        // one will be, in every region of the second.
        if !locs.heap.selected.contains(&(field, width)) {
            locs.heap.selected.push((field, width));
        }
        return Ok((addr, checks));
    }
    let at = Expr::bin(BinOp::Add, ptr, Expr::int(offset));
    let regions = locs.heap.regions.clone();
    let mut anywhere = Expr::int(0);
    for r in &regions {
        let mut in_r = Expr::int(0);
        for (off, l, w) in locs.fields_with(r.obj) {
            if w != width {
                continue;
            }
            let hit = Expr::bin(BinOp::Eq, at.clone(), Expr::int(r.base + off));
            in_r = Expr::bin(BinOp::Or, in_r, hit.clone());
            addr = Expr::bin(
                BinOp::Add,
                addr,
                Expr::bin(BinOp::Mul, hit, Expr::Const(Value::Loc(l))),
            );
        }
        let hit = in_r;
        anywhere = Expr::bin(BinOp::Or, anywhere, hit.clone());
        if r.key.thread == locs.heap.thread && r.key.site != TLS {
            let lv = live(regs, r);
            checks.push(flag(
                regs,
                Expr::bin(BinOp::And, hit, Expr::Not(Box::new(lv))),
                HeapError::UseAfterFree,
            ));
        }
    }
    // A pointer to no region reaches a location of its own and is an
    // error: the checker runs each thread with every value a read may
    // return, so such a pointer also comes up in executions the model
    // then rejects, which must not stop the check.
    let wild = match locs.heap.wild {
        Some(l) => l,
        None => {
            let l = locs.plain("wild");
            locs.heap.wild = Some(l);
            l
        }
    };
    let nowhere = Expr::Not(Box::new(anywhere));
    addr = Expr::bin(
        BinOp::Add,
        addr,
        Expr::bin(BinOp::Mul, nowhere.clone(), Expr::Const(Value::Loc(wild))),
    );
    checks.push(flag(regs, nowhere, HeapError::Wild));
    Ok((addr, checks))
}

/// The heap errors the final value `v` of [`ERR`] says, in words.
pub fn errors(v: i64) -> Vec<&'static str> {
    HeapError::ALL
        .iter()
        .filter(|e| v & (**e as i64) != 0)
        .map(|e| e.words())
        .collect()
}
