//! The Linux-kernel memory model (LKMM): Alglave, Maranget, McKenney,
//! Parri and Stern, "Frightening small children and disconcerting
//! grown-ups: concurrency in the Linux kernel" (ASPLOS 2018), as the
//! kernel's `tools/memory-model` states it today: `linux-kernel.cat` (with
//! variant `lkmmv2`), `linux-kernel.bell` (the access tags, RCU nesting,
//! `Marked`/`Plain`, dependencies carried through plain accesses) and
//! `lock.cat` (spinlocks). This file follows linux-kernel.cat line by line;
//! the names are the cat file's.
//!
//! ```text
//! ppo   = to-r | to-w | (fence & int) | (po-unlock-lock-po & int)
//! hb    = [Marked]; (ppo | rfe | ((prop \ id) & int)); [Marked]   acyclic: happens-before
//! pb    = prop; strong-fence; hb*; [Marked]                        acyclic: propagation
//! rb    = prop; rcu-fence; hb*; pb*; [Marked]                      irreflexive: rcu
//! empty (wr-incoh | rw-incoh | ww-incoh)                           plain-coherence
//! flag ~empty (ww-race | wr-race | rw-race)                        data-race
//! ```
//!
//! Locks (lock.cat) are values here: a lock acquisition is an RMW pair
//! (LKR, LKW) whose read returns 0 and whose write stores 1, `spin_unlock`
//! (UL) stores 0, a failed `spin_trylock` (LF) and `spin_is_locked` reading
//! 1 (RL) read an LKW, `spin_is_locked` reading 0 (RU) reads an UL or the
//! initial write. With coherence and RMW atomicity (checked by the engine)
//! this gives lock.cat's `co` (each UL right after its LKW, at most one
//! unreleased LKW per lock, last) and its `rf` for LKR, LF and RU. The
//! lock-nest and nested-is-locked axioms follow from coherence the same way,
//! except with an unlock that no lock precedes, which lock.cat keeps out of
//! `co` and no lock reads from: then those axioms and lock.cat's rf for
//! LKR are checked explicitly (`lock_axioms`), and the execution is judged
//! without that unlock in `co`, a lock that took its 0 reading from the
//! release before it (`without_unmatched_unlocks`).
//!
//! SRCU follows linux-kernel.def and .bell: `srcu_read_lock(s)` (and
//! `srcu_down_read`) is a marked read of the srcu_struct `*s` (`Srcu-lock`),
//! `srcu_read_unlock(s, idx)` (and `srcu_up_read`) a marked write of `idx`
//! (`Srcu-unlock`), `synchronize_srcu(s)` an event located at `s` that is
//! not an access (`Sync-srcu`). A lock and an unlock match (`srcu-rscs`)
//! when the unlock's value comes from the lock's by data dependencies and
//! reads-from, at the same location; grace periods (`gp`, `rcu-order`)
//! count against critical sections of their own srcu_struct only.
//!
//! Flags, raised by allowed executions and printed by `--format herd` as
//! herd7 does (`Flag NAME`, sorted): `data-race` and `mixed-accesses`
//! (linux-kernel.cat); `unmatched-rcu-lock`, `unmatched-rcu-unlock`,
//! `unmatched-srcu-lock`, `unmatched-srcu-unlock`, `multiple-srcu-matches`,
//! `invalid-sleep`, `srcu-bad-value-match` (linux-kernel.bell);
//! `mixed-lock-accesses`, `lock-final`, `unmatched-unlock` (lock.cat).
//! Never raised: lock.cat's `unpaired-LKW`/`unpaired-LKR` (the parser
//! always pairs a lock's read and write) and the bell's
//! `this-model-requires-variant-higher-than-lkmmv1` (this is `lkmmv2`).

use atomlab_litmus::{Arch, Fence, LkAccess, LkFence, Test};

use super::model::{forbidden, violation, Judgement, Model, Violation};
use crate::exec::Execution;
use crate::interp::Kind;
use crate::mapping::{AcquireLoad, Target};
use crate::rel::{full_set, members, Bits, Rel};

/// The LKMM.
pub struct Lkmm;

/// The event sets of linux-kernel.bell and lock.cat.
struct Sets<S: Bits> {
    m: S,
    r: S,
    w: S,
    marked: S,
    plain: S,
    acquire: S,
    release: S,
    mb: S,
    noreturn: S,
    rmw: S,
    lkr: S,
    lkw: S,
    ul: S,
    /// `srcu_read_lock`/`srcu_down_read` reads (the bell's `Srcu-lock`).
    srcu_lock: S,
    /// `srcu_read_unlock`/`srcu_up_read` writes (`Srcu-unlock`).
    srcu_unlock: S,
    /// `synchronize_srcu` events (`Sync-srcu`), located at their srcu_struct.
    sync_srcu: S,
}

fn fences<S: Bits>(x: &Execution<'_, S>, k: LkFence) -> S {
    let mut s = S::ZERO;
    for (i, e) in x.s.events.iter().enumerate() {
        if e.kind == Kind::Fence(Fence::Linux(k)) {
            s |= S::bit(i);
        }
    }
    s
}

fn sets<S: Bits>(x: &Execution<'_, S>) -> Sets<S> {
    let st = &x.s.sets;
    let (m, r, w) = (st.m, st.r, st.w);
    let tagged = |p: &dyn Fn(LkAccess) -> bool| -> S {
        let mut s = S::ZERO;
        for (i, e) in x.s.events.iter().enumerate() {
            if e.thread.is_some() && !matches!(e.kind, Kind::Fence(_)) && p(e.annot.lk) {
                s |= S::bit(i);
            }
        }
        s
    };
    let mut rmw = S::ZERO;
    for (i, e) in x.s.events.iter().enumerate() {
        if e.annot.lk_rmw {
            rmw |= S::bit(i);
        }
    }
    // FailedRMW = RMW \ (domain(rmw) | range(rmw))
    let failed = rmw & !(x.s.rmw.domain() | x.s.rmw.range());
    let lkr = tagged(&|a| a == LkAccess::LockRead);
    let ul = tagged(&|a| a == LkAccess::Unlock);
    let lk = tagged(&|a| a != LkAccess::None);
    // Marked = (~M) | IW | ONCE | RELEASE | ACQUIRE | MB | RMW | lock events
    let marked = (full_set::<S>(x.s.n) & !m) | st.iw | lk | rmw;
    Sets {
        m,
        r,
        w,
        marked,
        plain: m & !marked,
        // Acquire = ACQUIRE \ W \ FailedRMW, | LKR (lock.cat)
        acquire: (tagged(&|a| a == LkAccess::Acquire) & !w & !failed) | lkr,
        // Release = RELEASE \ R \ FailedRMW, | UL (lock.cat)
        release: (tagged(&|a| a == LkAccess::Release) & !r & !failed) | ul,
        mb: tagged(&|a| a == LkAccess::Mb) & !failed,
        noreturn: tagged(&|a| a == LkAccess::Noreturn) & !w,
        rmw,
        lkr,
        lkw: tagged(&|a| a == LkAccess::LockWrite),
        ul,
        srcu_lock: tagged(&|a| a == LkAccess::SrcuLock) & r,
        srcu_unlock: tagged(&|a| a == LkAccess::SrcuUnlock) & w,
        sync_srcu: fences(x, LkFence::SyncSrcu),
    }
}

/// `[X]; po; [S]; po`
fn fencerel<S: Bits>(x: &Execution<'_, S>, s: S) -> Rel<S> {
    x.s.po.rng(s).seq(&x.s.po)
}

/// Matching pairs of `rcu_read_lock()` and `rcu_read_unlock()` per thread,
/// innermost first (linux-kernel.bell's `rcu-rscs`, which for a well-nested
/// thread pairs each unlock with the nearest unmatched lock before it).
fn rcu_rscs<S: Bits>(x: &Execution<'_, S>) -> Rel<S> {
    let s = x.s;
    let mut out = Rel::empty(s.n);
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for (i, e) in s.events.iter().enumerate() {
        let Some(t) = e.thread else { continue };
        stack.retain(|&(th, _)| th == t);
        match e.kind {
            Kind::Fence(Fence::Linux(LkFence::RcuLock)) => stack.push((t, i)),
            Kind::Fence(Fence::Linux(LkFence::RcuUnlock)) => {
                if let Some((_, l)) = stack.pop() {
                    out.add(l, i);
                }
            }
            _ => {}
        }
    }
    out
}

/// Matching pairs of SRCU read-side lock and unlock (linux-kernel.bell's
/// `srcu-rscs`): the unlock writes, to the same srcu_struct, a value that
/// flows by data dependencies (and reads-from, across threads, which
/// `srcu_down_read`/`srcu_up_read` allow) from what the lock read.
/// `carry-srcu-data = (data; [~Srcu-unlock]; rf)*`, over the bell's own
/// `data`, before it is widened by `carry-dep`.
fn srcu_rscs<S: Bits>(x: &Execution<'_, S>, k: &Sets<S>) -> Rel<S> {
    let s = x.s;
    let carry_srcu_data = s
        .data
        .rng(full_set::<S>(s.n) & !k.srcu_unlock)
        .seq(&x.rf)
        .star();
    Rel::id(s.n, k.srcu_lock)
        .seq(&carry_srcu_data)
        .seq(&s.data)
        .rng(k.srcu_unlock)
        & s.loc
}

/// The flags of linux-kernel.bell, lock.cat and linux-kernel.cat other than
/// `data-race`: they mark a test that uses the primitives in ways the
/// model does not give a meaning to (unmatched critical sections, an SRCU
/// unlock handed a value its lock did not return, a lock accessed like an
/// ordinary variable), without forbidding the execution.
///
/// lock.cat's `unpaired-LKW` and `unpaired-LKR` are never raised here: the
/// parser makes every lock acquisition one read and one write, adjacent in
/// program order, which is what lock.cat's `lk-rmw` pairs.
/// `unmatched_ul`: the unlocks no lock precedes ([`Fixed::unmatched_ul`]).
fn validity_flags<S: Bits>(
    x: &Execution<'_, S>,
    k: &Sets<S>,
    unmatched_ul: S,
) -> Vec<&'static str> {
    let s = x.s;
    let n = s.n;
    let po = s.po;
    let po_loc = s.po_loc();
    let mut flags = Vec::new();
    let mut raise = |cond: bool, name: &'static str| {
        if cond {
            flags.push(name);
        }
    };

    // linux-kernel.bell: nesting of RCU and SRCU read-side critical sections.
    let rscs = rcu_rscs(x);
    raise(
        !(fences(x, LkFence::RcuLock) & !rscs.domain()).is_empty(),
        "unmatched-rcu-lock",
    );
    raise(
        !(fences(x, LkFence::RcuUnlock) & !rscs.range()).is_empty(),
        "unmatched-rcu-unlock",
    );
    let srscs = srcu_rscs(x, k);
    raise(
        !(k.srcu_lock & !srscs.domain()).is_empty(),
        "unmatched-srcu-lock",
    );
    raise(
        !(k.srcu_unlock & !srscs.range()).is_empty(),
        "unmatched-srcu-unlock",
    );
    raise(
        !srscs.inv().seq(&srscs).noid().is_empty(),
        "multiple-srcu-matches",
    );
    // synchronize_srcu() sleeps, which an RCU read-side critical section
    // must not do.
    raise(
        !(rscs & po.rng(k.sync_srcu).seq(&po)).is_empty(),
        "invalid-sleep",
    );
    // different-values(srcu-rscs): the unlock writes another value than
    // its lock read.
    raise(
        srscs
            .pairs()
            .iter()
            .any(|&(l, u)| s.events[l].rval != s.events[u].wval),
        "srcu-bad-value-match",
    );

    // lock.cat. Its ALL-LOCKS: spinlock events (LF includes RL) and SRCU events.
    let is_locked = tagged_set(x, LkAccess::IsLocked);
    let all_locks = k.lkr
        | k.lkw
        | k.ul
        | tagged_set(x, LkAccess::LockFail)
        | is_locked
        | k.srcu_lock
        | k.srcu_unlock
        | k.sync_srcu;
    let ordinary = k.m & !s.sets.iw & !all_locks;
    raise(
        !(Rel::cross(n, ordinary, all_locks) & s.loc).is_empty(),
        "mixed-lock-accesses",
    );
    // FW: the co-last write of each location a final state reports (the
    // initial write of one no thread writes: herd7 flags a spinlock that
    // is only tested with spin_is_locked too).
    let mut fw = S::ZERO;
    for (l, &w) in x.last.iter().enumerate() {
        if s.sets.observed_iw.has(s.init_of[l]) {
            fw |= S::bit(w);
        }
    }
    raise(
        !(Rel::cross(n, fw, all_locks) & s.loc).is_empty(),
        "lock-final",
    );
    raise(!unmatched_ul.is_empty(), "unmatched-unlock");

    // linux-kernel.cat: plain writes and marked accesses to one location in
    // one thread with no barrier between them.
    let barrier_events = fences(x, LkFence::Barrier)
        | fences(x, LkFence::Rmb)
        | fences(x, LkFence::Wmb)
        | fences(x, LkFence::Mb)
        | k.mb
        | fences(x, LkFence::SyncRcu)
        | k.sync_srcu
        | fences(x, LkFence::BeforeAtomic)
        | fences(x, LkFence::AfterAtomic)
        | k.acquire
        | k.release
        | fences(x, LkFence::RcuLock)
        | fences(x, LkFence::RcuUnlock)
        | k.srcu_lock
        | k.srcu_unlock;
    let barrier = fencerel(x, barrier_events) | po.rng(k.release) | po.dom(k.acquire);
    let unbarriered = po_loc - barrier;
    let plain_w = k.plain & k.w;
    raise(
        !(unbarriered.dom(plain_w).rng(k.marked) | unbarriered.dom(k.marked).rng(plain_w))
            .is_empty(),
        "mixed-accesses",
    );
    flags
}

/// lock.cat's `critical`: each lock acquisition's write and the unlock
/// that ends its critical section,
/// `([LKW]; po-loc; [UL]) \ (po-loc; [LKW | UL]; po-loc)`.
fn critical<S: Bits>(x: &Execution<'_, S>, k: &Sets<S>) -> Rel<S> {
    let po_loc = x.s.po_loc();
    po_loc.dom(k.lkw).rng(k.ul) - po_loc.rng(k.lkw | k.ul).seq(&po_loc)
}

/// lock.cat's lock axioms that coherence does not give here once a test
/// has an unlock that no lock precedes (lock.cat flags it, and keeps such
/// an unlock out of `co`): without that unlock in co, a lock still comes
/// right after a release or the initial write (`lock-rf`, the rf lock.cat
/// builds for LKR), a thread never takes a lock it holds
/// (`lock-nest`), and `spin_is_locked` is true inside a critical section
/// of its lock (`nested-is-locked`). The first failing one, if any.
fn lock_axioms<S: Bits>(
    x: &Execution<'_, S>,
    k: &Sets<S>,
    unmatched_ul: S,
) -> Option<&'static str> {
    let po_loc = x.s.po_loc();
    // lock.cat's co has no unmatched UL; there, a lock's read takes the
    // value of the write just before its LKW in co, which must not be
    // another (unreleased) LKW.
    let co_inv = x.co.inv();
    for w in members(k.lkw) {
        let before = co_inv.row(w) & !unmatched_ul;
        let last = members(before).find(|&p| (x.co.row(p) & before).is_empty());
        if last.is_some_and(|p| k.lkw.has(p)) {
            return Some("lock-rf");
        }
    }
    let released = po_loc.rng(k.ul).seq(&po_loc);
    if !(po_loc.dom(k.lkw).rng(k.lkr) - released).is_empty() {
        return Some("lock-nest");
    }
    let mut ru = S::ZERO;
    for (i, e) in x.s.events.iter().enumerate() {
        if e.annot.lk == LkAccess::IsLocked && e.kind == Kind::Read && e.rval == 0 {
            ru |= S::bit(i);
        }
    }
    if !(po_loc.dom(k.lkw).rng(ru) - released).is_empty() {
        return Some("nested-is-locked");
    }
    None
}

/// The execution as lock.cat sees it when some unlock has no lock before
/// it (`None` otherwise): such an unlock is out of `co`, and a lock whose
/// read took its 0 here reads instead from the write before its LKW in
/// lock.cat's co (`[IW | UL]; singlestep(co); lk-rmw^-1`), so that the
/// release it follows orders it (`po-unlock-lock-po`).
fn without_unmatched_unlocks<'s, S: Bits>(
    x: &Execution<'s, S>,
    k: &Sets<S>,
    unmatched_ul: S,
) -> Option<Execution<'s, S>> {
    if unmatched_ul.is_empty() {
        return None;
    }
    let s = x.s;
    let n = s.n;
    let keep = full_set::<S>(n) & !unmatched_ul;
    let co = x.co.dom(keep).rng(keep);
    let mut rf = Rel::empty(n);
    for (w, r) in x.rf.pairs() {
        let mut src = w;
        if unmatched_ul.has(w) && k.lkr.has(r) {
            if let Some(lkw) = members(s.rmw.row(r)).next() {
                let before = x.co.inv().row(lkw) & keep;
                if let Some(p) = members(before).find(|&p| (x.co.row(p) & before).is_empty()) {
                    src = p;
                }
            }
        }
        rf.add(src, r);
    }
    let fr = rf.inv().seq(&co).noid();
    Some(Execution {
        s,
        rf,
        co,
        fr,
        last: x.last.clone(),
    })
}

/// Events of threads tagged `tag` (fences excluded).
fn tagged_set<S: Bits>(x: &Execution<'_, S>, tag: LkAccess) -> S {
    let mut s = S::ZERO;
    for (i, e) in x.s.events.iter().enumerate() {
        if e.thread.is_some() && !matches!(e.kind, Kind::Fence(_)) && e.annot.lk == tag {
            s |= S::bit(i);
        }
    }
    s
}

/// The relations the axioms are stated over, kept for explanations.
struct Derived<S: Bits> {
    ppo: Rel<S>,
    hb: Rel<S>,
    pb: Rel<S>,
    rb: Rel<S>,
    strong_fence: Rel<S>,
    prop: Rel<S>,
}

/// linux-kernel.cat's relations up to happens-before ([`Lkmm::core`]).
struct Core<S: Bits> {
    ppo: Rel<S>,
    prop: Rel<S>,
    hb: Rel<S>,
    fence: Rel<S>,
    strong_fence: Rel<S>,
    nonrw_fence: Rel<S>,
    cumul_fence: Rel<S>,
    addr: Rel<S>,
    rmw_sequence: Rel<S>,
}

/// What linux-kernel.cat's relations take from the skeleton alone (its
/// program order, dependencies, tags and barriers, not rf or co): computed
/// at a skeleton's first judgement and kept in its
/// [`Memo`](crate::exec::Memo), as the exploring engine judges each
/// skeleton's partial executions many times.
struct Fixed<S: Bits> {
    /// The event sets.
    k: Sets<S>,
    /// Unlocks that no lock precedes (lock.cat keeps them out of co).
    unmatched_ul: S,
    acq_po: Rel<S>,
    po_rel: Rel<S>,
    /// `po; [UL]` and `[LKR]; po`, po-unlock-lock-po's fixed ends.
    po_ul: Rel<S>,
    lkr_po: Rel<S>,
    /// `po; [UL]; po; [LKR]; po`, its rf-free half.
    po_ul_po_lkr_po: Rel<S>,
    rmb: Rel<S>,
    wmb: Rel<S>,
    po_opt: Rel<S>,
    /// `mb` but its smp_mb__after_unlock_lock term, which reads rf.
    mb_fixed: Rel<S>,
    after_unlock_lock: S,
    sync_rcu: S,
    gp: Rel<S>,
    /// `data; [~Srcu-unlock]`, carry-dep's fixed half.
    data_nsu: Rel<S>,
}

impl<S: Bits> Fixed<S> {
    fn of(x: &Execution<'_, S>) -> Fixed<S> {
        let s = x.s;
        let po = s.po;
        let k = sets(x);
        let m = k.m;
        let unmatched_ul = k.ul & !critical(x, &k).range();
        let acq_po = po.dom(k.acquire).rng(m);
        let po_rel = po.dom(m).rng(k.release);
        let po_ul = po.rng(k.ul);
        let lkr_po = po.dom(k.lkr);
        let po_ul_po_lkr_po = po_ul.seq(&po.rng(k.lkr)).seq(&po);
        let r4rmb = k.r & !k.noreturn;
        let rmb = fencerel(x, fences(x, LkFence::Rmb)).dom(r4rmb).rng(r4rmb);
        let wmb = fencerel(x, fences(x, LkFence::Wmb)).dom(k.w).rng(k.w);
        let po_opt = po.opt();
        // The bell's Mb tags smp_mb() and the accesses of fully ordered
        // RMWs alike, so fencerel(Mb) also goes through such an RMW.
        let mb_fixed = fencerel(x, fences(x, LkFence::Mb) | k.mb).dom(m).rng(m)
            | po.dom(m).rng(k.mb & k.r)
            | po.dom(k.mb & k.w).rng(m)
            | fencerel(x, fences(x, LkFence::BeforeAtomic))
                .dom(m)
                .rng(k.rmw)
                .seq(&po_opt)
                .rng(m)
            | po_opt
                .dom(m)
                .rng(k.rmw)
                .seq(&fencerel(x, fences(x, LkFence::AfterAtomic)))
                .rng(m)
            | po_opt
                .dom(m)
                .rng(k.lkw)
                .seq(&fencerel(x, fences(x, LkFence::AfterSpinlock)))
                .rng(m)
            | po_opt
                .dom(m)
                .rng(k.srcu_unlock)
                .seq(&fencerel(x, fences(x, LkFence::AfterSrcuReadUnlock)))
                .rng(m);
        let sync_rcu = fences(x, LkFence::SyncRcu);
        let gp = po.rng(sync_rcu | k.sync_srcu).seq(&po_opt);
        let not_srcu_unlock = full_set::<S>(s.n) & !k.srcu_unlock;
        Fixed {
            unmatched_ul,
            acq_po,
            po_rel,
            po_ul,
            lkr_po,
            po_ul_po_lkr_po,
            rmb,
            wmb,
            po_opt,
            mb_fixed,
            after_unlock_lock: fences(x, LkFence::AfterUnlockLock),
            sync_rcu,
            gp,
            data_nsu: s.data.rng(not_srcu_unlock),
            k,
        }
    }

    /// The skeleton's, from its memo.
    fn kept<'x>(x: &'x Execution<'_, S>) -> &'x Fixed<S> {
        x.s.memo.lkmm_fixed(|| Fixed::of(x))
    }
}

impl Lkmm {
    /// linux-kernel.cat's relations over `x` up to happens-before: what
    /// [`Model::judge_partial`] needs (happens-before and propagation) and
    /// what [`Lkmm::derive`] goes on from.
    // The right operands are borrowed (`| &r`), which clippy's op_ref
    // would copy instead: a relation is a few hundred bytes, and the
    // copies cost SEQLOCK-4 72 s against 60-64 s borrowed (issue 37).
    #[allow(clippy::op_ref)]
    fn core<S: Bits>(&self, x: &Execution<'_, S>, f: &Fixed<S>) -> Core<S> {
        let s = x.s;
        let k = &f.k;
        let (m, r, w) = (k.m, k.r, k.w);
        let marked = k.marked;
        let rfe = x.rf & &s.ext;
        let rfi = x.rf & &s.int;

        // Release Acquire: f.acq_po, f.po_rel.
        // po; [UL]; (po | rf); [LKR]; po
        let po_unlock_lock_po = f.po_ul.seq(&x.rf).seq(&f.lkr_po) | &f.po_ul_po_lkr_po;

        // Fences
        let mb = po_unlock_lock_po
            .dom(m)
            .rng(f.after_unlock_lock)
            .seq(&s.po)
            .rng(m)
            | &f.mb_fixed;
        let strong_fence = mb | &f.gp;
        let nonrw_fence = strong_fence | &f.po_rel | &f.acq_po;
        let fence = nonrw_fence | &f.wmb | &f.rmb;

        // Dependencies, carried through plain accesses (linux-kernel.bell):
        // carry-dep = (data; [~Srcu-unlock]; rfi)*
        let carry_dep = f.data_nsu.seq(&rfi).star();
        let addr = carry_dep.seq(&s.addr);
        let ctrl = carry_dep.seq(&s.ctrl);
        let data = carry_dep.seq(&s.data);

        // Preserved program order
        let dep = addr | &data;
        let rwdep = (dep | &ctrl).rng(w);
        let overwrite = x.co | &x.fr;
        let to_w = rwdep | &(overwrite & &s.int) | &addr.rng(k.plain).seq(&f.wmb);
        let to_r = addr.rng(r) | &dep.rng(marked).seq(&rfi);
        let ppo = to_r | &to_w | &(fence & &s.int) | &(po_unlock_lock_po & &s.int);

        // Propagation
        let rmw_sequence = x.rf.seq(&s.rmw).star();
        // A-cumul(r) = rfe?; r
        let a_cumul = rfe.rng(marked).opt().seq(&(strong_fence | &f.po_rel));
        let cumul_fence = (a_cumul | &f.wmb | &po_unlock_lock_po)
            .dom(marked)
            .rng(marked)
            .seq(&rmw_sequence);
        let prop = (overwrite & &s.ext)
            .opt()
            .dom(marked)
            .seq(&cumul_fence.star())
            .rng(marked)
            .seq(&rfe.opt())
            .rng(marked);

        // Happens before
        let hb = (ppo | &rfe | &(prop.noid() & &s.int))
            .dom(marked)
            .rng(marked);
        Core {
            ppo,
            prop,
            hb,
            fence,
            strong_fence,
            nonrw_fence,
            cumul_fence,
            addr,
            rmw_sequence,
        }
    }

    /// The relations of linux-kernel.cat over `x` (for [`Model::judge`]),
    /// the RCU section's included.
    fn derive<S: Bits>(&self, x: &Execution<'_, S>, f: &Fixed<S>) -> (Derived<S>, [Rel<S>; 6]) {
        let s = x.s;
        let n = s.n;
        let po = s.po;
        let k = &f.k;
        let marked = k.marked;
        let (po_opt, sync_rcu) = (f.po_opt, f.sync_rcu);
        let Core {
            ppo,
            prop,
            hb,
            fence,
            strong_fence,
            nonrw_fence,
            cumul_fence,
            addr,
            rmw_sequence,
        } = self.core(x, f);
        let hb_star = hb.star();
        // Propagation
        let pb = prop.seq(&strong_fence).seq(&hb_star).rng(marked);

        let pb_star = pb.star();
        // RCU and SRCU. An SRCU grace period and an SRCU critical section
        // count against each other only for one srcu_struct (`& loc`).
        let rscsi = rcu_rscs(x).inv();
        let srscsi = srcu_rscs(x, k).inv();
        let rcu_gp = Rel::id(n, sync_rcu);
        let srcu_gp = Rel::id(n, k.sync_srcu);
        let loc = s.loc;
        let rcu_link = po_opt.seq(&hb_star).seq(&pb_star).seq(&prop).seq(&po);
        let gl = rcu_gp.seq(&rcu_link);
        let rl = rscsi.seq(&rcu_link);
        let sgl = srcu_gp.seq(&rcu_link);
        let srl = srscsi.seq(&rcu_link);
        let mut rcu_order = rcu_gp
            | srcu_gp
            | gl.seq(&rscsi)
            | (sgl.seq(&srscsi) & loc)
            | rl.seq(&rcu_gp)
            | (srl.seq(&srcu_gp) & loc);
        loop {
            let ol = rcu_order.seq(&rcu_link);
            let next = rcu_order
                | gl.seq(&ol).seq(&rscsi)
                | (sgl.seq(&ol).seq(&srscsi) & loc)
                | rl.seq(&ol).seq(&rcu_gp)
                | (srl.seq(&ol).seq(&srcu_gp) & loc)
                | ol.seq(&rcu_order);
            if next == rcu_order {
                break;
            }
            rcu_order = next;
        }
        let rcu_fence = po.seq(&rcu_order).seq(&po_opt);
        let rb = prop.seq(&rcu_fence).seq(&hb_star).seq(&pb_star).rng(marked);
        // After the RCU section, fence and strong-fence include rcu-fence.
        let fence2 = fence | rcu_fence;
        let strong_fence2 = strong_fence | rcu_fence;

        (
            Derived {
                ppo,
                hb,
                pb,
                rb,
                strong_fence,
                prop,
            },
            [
                fence2,
                strong_fence2,
                nonrw_fence,
                cumul_fence,
                addr,
                rmw_sequence,
            ],
        )
    }

    /// linux-kernel.cat's section "Plain accesses and data races": the
    /// plain-coherence axiom's relation and the data-race flag's.
    fn plain<S: Bits>(
        x: &Execution<'_, S>,
        k: &Sets<S>,
        d: &Derived<S>,
        more: &[Rel<S>; 6],
    ) -> (Rel<S>, Rel<S>) {
        let s = x.s;
        let n = s.n;
        let [fence, strong_fence, nonrw_fence, cumul_fence, addr, rmw_sequence] = *more;
        let marked = k.marked;
        let all = full_set::<S>(n);
        let xbstar = (d.hb | d.pb | d.rb).star();
        let int = s.int;
        let vis = cumul_fence
            .star()
            .seq(&x.rfe().opt())
            .rng(marked)
            .seq(&(strong_fence.rng(marked).seq(&xbstar) | (xbstar & int)));
        let r4rmb = k.r & !k.noreturn;
        let rmb = fencerel(x, fences(x, LkFence::Rmb));
        let w_pre_bounded = Rel::id(n, marked).seq(&(addr | fence).opt());
        let r_pre_bounded = Rel::id(n, marked)
            .seq(&(addr | nonrw_fence | rmb.dom(r4rmb).rng(all & !k.noreturn)).opt());
        let w_post_bounded = fence.opt().rng(marked).seq(&rmw_sequence);
        let r_post_bounded = (nonrw_fence | rmb.dom(all & !k.noreturn).rng(r4rmb))
            .opt()
            .rng(marked);
        let ww_vis = fence
            | strong_fence.seq(&xbstar).seq(&w_pre_bounded)
            | w_post_bounded.seq(&vis).seq(&w_pre_bounded);
        let wr_vis = fence
            | strong_fence.seq(&xbstar).seq(&r_pre_bounded)
            | w_post_bounded.seq(&vis).seq(&r_pre_bounded);
        let rw_xbstar = fence | r_post_bounded.seq(&xbstar).seq(&w_pre_bounded);
        let (m, w, plain) = (k.m, k.w, k.plain);
        let pre_race = s.ext & (Rel::cross(n, plain, m) | Rel::cross(n, m & !s.sets.iw, plain));
        let incoh = (pre_race & x.rf & rw_xbstar.inv())
            | (pre_race & x.fr & wr_vis.inv())
            | (pre_race & x.co & ww_vis.inv());
        let ww_nonrace =
            ww_vis & (Rel::cross(n, marked, w) | rw_xbstar) & (Rel::cross(n, w, marked) | wr_vis);
        let ww_race = (pre_race & x.co) - ww_nonrace;
        let wr_race = ((pre_race & x.co.opt().seq(&x.rf)) - wr_vis) - rw_xbstar.inv();
        let rw_race = (pre_race & x.fr) - rw_xbstar;
        (incoh, ww_race | wr_race | rw_race)
    }

    /// [`Model::judge_partial`] in either width.
    fn judge_partial_any<S: Bits>(&self, x: &Execution<'_, S>) -> Option<Violation> {
        let f = Fixed::kept(x);
        if !f.unmatched_ul.is_empty() {
            return None;
        }
        let c = self.core(x, f);
        if !c.hb.acyclic() {
            return forbidden(violation::<S>("happens-before", false, &[], None));
        }
        let pb = c
            .prop
            .seq(&c.strong_fence)
            .seq(&c.hb.star())
            .rng(f.k.marked);
        if !pb.acyclic() {
            return forbidden(violation::<S>("propagation", false, &[], None));
        }
        None
    }

    fn judge_all<S: Bits>(
        &self,
        x: &Execution<'_, S>,
        explain: bool,
    ) -> (Judgement, Vec<&'static str>) {
        let f = Fixed::kept(x);
        let k = &f.k;
        let forbid = |axiom: &'static str, parts: &[(&str, Rel<S>)]| {
            (violation(axiom, explain, parts, None), Vec::new())
        };
        if let Some(axiom) = lock_axioms(x, k, f.unmatched_ul) {
            return forbid(axiom, &[]);
        }
        let lock_view = without_unmatched_unlocks(x, k, f.unmatched_ul);
        let x = lock_view.as_ref().unwrap_or(x);
        let (d, more) = self.derive(x, f);
        if !d.hb.acyclic() {
            return forbid(
                "happens-before",
                &[
                    ("rfe", x.rfe()),
                    ("ppo", d.ppo),
                    ("prop&int", d.prop.noid() & x.s.int),
                ],
            );
        }
        if !d.pb.acyclic() {
            return forbid(
                "propagation",
                &[
                    ("prop;strong-fence", d.prop.seq(&d.strong_fence)),
                    ("pb", d.pb),
                    ("hb", d.hb),
                ],
            );
        }
        if !d.rb.irreflexive() {
            return forbid("rcu", &[("rb", d.rb)]);
        }
        let (incoh, race) = Self::plain(x, k, &d, &more);
        if !incoh.is_empty() {
            return forbid("plain-coherence", &[]);
        }
        let mut flags = validity_flags(x, k, f.unmatched_ul);
        if !race.is_empty() {
            flags.push("data-race");
        }
        (Judgement::Allowed { racy: false }, flags)
    }
}

impl Model for Lkmm {
    /// herd7 with linux-kernel.cfg judges any C test under the LKMM; one
    /// with plain accesses only is Linux-kernel C as much as C11.
    fn judges(&self, test: &Test, _: AcquireLoad) -> Result<Option<Target>, String> {
        if test.is_linux() || test.arch == Arch::C && test.is_plain_c() {
            Ok(None)
        } else if test.arch == Arch::C {
            Err("lkmm judges Linux-kernel C tests (and C tests with plain accesses only), not C11 atomics".into())
        } else {
            Err("lkmm judges Linux-kernel C tests only".into())
        }
    }
    fn name(&self) -> &'static str {
        "lkmm"
    }

    fn judge(&self, x: &Execution<'_>, explain: bool) -> Judgement {
        self.judge_all(x, explain).0
    }

    fn judge_flagged(&self, x: &Execution<'_>, explain: bool) -> (Judgement, Vec<&'static str>) {
        self.judge_all(x, explain)
    }

    fn judge_wide(&self, x: &Execution<'_, u128>, explain: bool) -> Judgement {
        self.judge_all(x, explain).0
    }

    fn judge_flagged_wide(
        &self,
        x: &Execution<'_, u128>,
        explain: bool,
    ) -> (Judgement, Vec<&'static str>) {
        self.judge_all(x, explain)
    }

    fn raises_flags(&self) -> bool {
        true
    }

    /// happens-before and propagation relate events by rf, co and fr
    /// through union, sequence, closure and intersection with fixed sets
    /// (carry-dep's rfi, overwrite, prop, rmw-sequence): they only grow.
    /// RCU's matching of critical sections, the lock axioms and the
    /// plain-access checks are left to complete executions, and a test
    /// with an unlock that no lock precedes (which lock.cat takes out of
    /// co before judging) is not pruned at all.
    fn prunes(&self) -> bool {
        true
    }

    fn judge_partial(&self, x: &Execution<'_>) -> Option<Violation> {
        self.judge_partial_any(x)
    }

    fn judge_partial_wide(&self, x: &Execution<'_, u128>) -> Option<Violation> {
        self.judge_partial_any(x)
    }

    fn judges_narrow(&self) -> bool {
        true
    }

    fn judge_narrow(&self, x: &Execution<'_, u32>, explain: bool) -> Judgement {
        self.judge_all(x, explain).0
    }

    fn judge_flagged_narrow(
        &self,
        x: &Execution<'_, u32>,
        explain: bool,
    ) -> (Judgement, Vec<&'static str>) {
        self.judge_all(x, explain)
    }

    fn judge_partial_narrow(&self, x: &Execution<'_, u32>) -> Option<Violation> {
        self.judge_partial_any(x)
    }

    /// herd7 with linux-kernel.cfg leaves a copy-only load-buffering
    /// cycle's value unsolved and prints its symbol (issue 37).
    fn symbolic_thin_air(&self) -> bool {
        true
    }
}
