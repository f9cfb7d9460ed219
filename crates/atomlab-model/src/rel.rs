//! Sets of events and binary relations over them, as bit matrices, with the
//! operators of herd's cat language (`|`, `&`, `\`, `;`, `^-1`, `+`, `*`,
//! `?`, `[S]`) so that models read like their cat files.
//!
//! A set is one machine word of [`Bits`] (bit `i` is event `i`) and a
//! relation one word per event. The word is `u64` unless an execution has
//! more than [`MAX_EVENTS`] events: then the engines and the models that
//! take them judge it with `u128` words ([`MAX_WIDE_EVENTS`]), the same
//! code compiled for the wider word, at about twice the cost per
//! relation operation. An execution of at most [`MAX_NARROW_EVENTS`]
//! events, as most litmus tests' are, is judged with `u32` words where
//! every model of the check takes them ([`crate::Model::judges_narrow`]):
//! a relation is then 128 bytes instead of 512, and the models' relation
//! algebra, which moves relations by value, copies a quarter as much (on
//! the kernel's small tests, copying relations was a third of a test's
//! instructions). Everything defaults to `u64`, so code that never meets
//! another width names `Rel` and `Set` as before.

use std::fmt::Debug;
use std::hash::Hash;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, Not, Shl, Shr, Sub};

/// The most events one candidate execution may have in `u64` words.
pub const MAX_EVENTS: usize = 64;

/// The most events of an execution judged with `u32` words.
pub const MAX_NARROW_EVENTS: usize = 32;

/// The most events one candidate execution may have at all (`u128`
/// words).
pub const MAX_WIDE_EVENTS: usize = 128;

/// A machine word used as a set of events: `u32` (up to 32 events), `u64`
/// (up to 64) or `u128` (up to 128).
pub trait Bits:
    Copy
    + Eq
    + Ord
    + Hash
    + Default
    + Debug
    + Send
    + Sync
    + 'static
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + BitAndAssign
    + BitOrAssign
    + Shl<usize, Output = Self>
    + Shr<usize, Output = Self>
    + Sub<Output = Self>
{
    /// How many events a set of this word holds.
    const EVENTS: usize;
    /// The empty set.
    const ZERO: Self;
    /// The set of event 0.
    const ONE: Self;
    /// A relation's rows: one word per event.
    type Rows: Copy + Eq + Send + Sync + AsRef<[Self]> + AsMut<[Self]>;
    /// Rows all empty.
    fn empty_rows() -> Self::Rows;
    /// The lowest member (the word's trailing zeros).
    fn lowest(self) -> usize;
    /// How many members.
    fn len(self) -> usize;
    /// The set whose members are the bits of `x` (which has none past
    /// [`Bits::EVENTS`]: the engines pick a word wide enough for every
    /// event of the execution).
    fn from_u64(x: u64) -> Self;
    /// The set of event `i` alone.
    #[inline]
    fn bit(i: usize) -> Self {
        Self::ONE << i
    }
    /// Whether event `i` is a member.
    #[inline]
    fn has(self, i: usize) -> bool {
        (self >> i) & Self::ONE != Self::ZERO
    }
    /// Whether the set is empty.
    #[inline]
    fn is_empty(self) -> bool {
        self == Self::ZERO
    }
    /// The set of the first `n` events.
    #[inline]
    fn first(n: usize) -> Self {
        if n >= Self::EVENTS {
            !Self::ZERO
        } else {
            (Self::ONE << n) - Self::ONE
        }
    }
}

macro_rules! bits {
    ($word:ty, $events:expr) => {
        impl Bits for $word {
            const EVENTS: usize = $events;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            type Rows = [$word; $events];
            #[inline]
            fn empty_rows() -> Self::Rows {
                [0; $events]
            }
            #[inline]
            fn lowest(self) -> usize {
                self.trailing_zeros() as usize
            }
            #[inline]
            fn len(self) -> usize {
                self.count_ones() as usize
            }
            #[inline]
            fn from_u64(x: u64) -> Self {
                debug_assert!(
                    $events >= 64 || x >> ($events % 64) == 0,
                    "{x:#x} has events past {}",
                    $events
                );
                // Widening for u64 and u128; for u32, x has no bits past 32.
                x as $word
            }
        }
    };
}
bits!(u32, MAX_NARROW_EVENTS);
bits!(u64, MAX_EVENTS);
bits!(u128, MAX_WIDE_EVENTS);

/// A set of events (bit `i` is event `i`) of an execution of at most
/// [`MAX_EVENTS`] events.
pub type Set = u64;

/// Iterates the members of a set.
pub fn members<S: Bits>(s: S) -> impl Iterator<Item = usize> {
    let mut s = s;
    std::iter::from_fn(move || {
        if s.is_empty() {
            None
        } else {
            let i = s.lowest();
            s = s & (s - S::ONE);
            Some(i)
        }
    })
}

/// A binary relation over `n` events, one row of `S` per event. The
/// operations that change rows in place (`dom`, `rng`, `opt`, `plus`, …)
/// take the relation by value: it is `Copy`, so a caller keeps its own,
/// and a chain (`po.dom(m).rng(w)`) can update one value instead of
/// copying its rows at each step.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Rel<S: Bits = u64> {
    n: usize,
    rows: S::Rows,
}

impl<S: Bits> std::fmt::Debug for Rel<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.pairs()).finish()
    }
}

impl<S: Bits> Rel<S> {
    #[inline]
    fn r(&self) -> &[S] {
        self.rows.as_ref()
    }

    #[inline]
    fn w(&mut self) -> &mut [S] {
        self.rows.as_mut()
    }

    /// The empty relation over `n` events.
    #[inline]
    pub fn empty(n: usize) -> Rel<S> {
        Rel {
            n,
            rows: S::empty_rows(),
        }
    }

    /// Number of events.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `[S]`: the identity on `s`.
    pub fn id(n: usize, s: S) -> Rel<S> {
        let mut r = Rel::empty(n);
        for i in members(s) {
            r.w()[i] = S::bit(i);
        }
        r
    }

    /// `A * B`: every pair from `a` to `b`.
    pub fn cross(n: usize, a: S, b: S) -> Rel<S> {
        let mut r = Rel::empty(n);
        for i in members(a) {
            r.w()[i] = b;
        }
        r
    }

    /// Adds the pair `(i, j)`.
    #[inline]
    pub fn add(&mut self, i: usize, j: usize) {
        self.w()[i] |= S::bit(j);
    }

    /// Removes the pair `(i, j)`.
    pub fn remove(&mut self, i: usize, j: usize) {
        self.w()[i] &= !S::bit(j);
    }

    /// Whether `(i, j)` is in the relation.
    #[inline]
    pub fn has(&self, i: usize, j: usize) -> bool {
        self.r()[i].has(j)
    }

    /// The successors of `i`.
    #[inline]
    pub fn row(&self, i: usize) -> S {
        self.r()[i]
    }

    /// The pairs, in order.
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for i in 0..self.n {
            for j in members(self.r()[i]) {
                v.push((i, j));
            }
        }
        v
    }

    /// Adds `(i, j)` for every `j` in `s`.
    #[inline]
    pub fn add_row(&mut self, i: usize, s: S) {
        self.w()[i] |= s;
    }

    /// Adds `(i, j)` to a transitively closed relation and closes it again
    /// (every event that reaches `i`, and `i`, now reaches `j` and what `j`
    /// reaches): O(n) where [`Rel::plus`] is O(n²). `false`, and the
    /// relation unchanged, when the pair closes a cycle (`j` reaches `i`,
    /// or `i == j`).
    pub fn add_closed(&mut self, i: usize, j: usize) -> bool {
        if i == j || self.has(j, i) {
            return false;
        }
        if self.has(i, j) {
            return true;
        }
        let reached = self.r()[j] | S::bit(j);
        let n = self.n;
        for (k, row) in self.w()[..n].iter_mut().enumerate() {
            if k == i || row.has(i) {
                *row |= reached;
            }
        }
        true
    }

    /// Whether `r1 ; r2` is irreflexive (no `i`, `j` with `(i, j)` in
    /// `r1` and `(j, i)` in `r2`), without building the composition.
    pub fn seq_irreflexive(&self, other: &Rel<S>) -> bool {
        let (a, b) = (self.r(), other.r());
        (0..self.n).all(|i| members(a[i]).all(|j| !b[j].has(i)))
    }

    /// `r1 ; r2`: composition.
    #[inline]
    pub fn seq(&self, other: &Rel<S>) -> Rel<S> {
        let mut r = Rel::empty(self.n);
        let (a, b) = (self.r(), other.r());
        let out = r.w();
        for i in 0..self.n {
            let mut acc = S::ZERO;
            for j in members(a[i]) {
                acc |= b[j];
            }
            out[i] = acc;
        }
        r
    }

    /// `r^-1`.
    #[inline]
    pub fn inv(&self) -> Rel<S> {
        let mut r = Rel::empty(self.n);
        let out = r.w();
        for (i, row) in self.r()[..self.n].iter().enumerate() {
            for j in members(*row) {
                out[j] |= S::bit(i);
            }
        }
        r
    }

    /// `r+`: transitive closure (Warshall, one row per word).
    #[inline]
    pub fn plus(self) -> Rel<S> {
        let mut r = self;
        let n = self.n;
        let rows = r.w();
        for k in 0..n {
            let rk = rows[k];
            if rk.is_empty() {
                continue;
            }
            let bit = S::bit(k);
            for row in rows[..n].iter_mut() {
                if !(*row & bit).is_empty() {
                    *row |= rk;
                }
            }
        }
        r
    }

    /// `r*` over all `n` events.
    #[inline]
    pub fn star(self) -> Rel<S> {
        self.plus().opt()
    }

    /// `r?`: `r` or identity, over all `n` events.
    #[inline]
    pub fn opt(self) -> Rel<S> {
        let mut r = self;
        let n = self.n;
        for (i, row) in r.w()[..n].iter_mut().enumerate() {
            *row |= S::bit(i);
        }
        r
    }

    /// `[S]; r`.
    #[inline]
    pub fn dom(self, s: S) -> Rel<S> {
        let mut r = self;
        let n = self.n;
        for (i, row) in r.w()[..n].iter_mut().enumerate() {
            if !s.has(i) {
                *row = S::ZERO;
            }
        }
        r
    }

    /// `r; [S]`.
    #[inline]
    pub fn rng(self, s: S) -> Rel<S> {
        let mut r = self;
        let n = self.n;
        for row in r.w()[..n].iter_mut() {
            *row &= s;
        }
        r
    }

    /// `r \ id`.
    #[inline]
    pub fn noid(self) -> Rel<S> {
        let mut r = self;
        let n = self.n;
        for (i, row) in r.w()[..n].iter_mut().enumerate() {
            *row &= !S::bit(i);
        }
        r
    }

    /// `~r` over all pairs of the `n` events.
    pub fn complement(&self) -> Rel<S> {
        let all = full_set::<S>(self.n);
        let mut r = *self;
        let n = self.n;
        for row in r.w()[..n].iter_mut() {
            *row = !*row & all;
        }
        r
    }

    /// `domain(r)`.
    pub fn domain(&self) -> S {
        let mut s = S::ZERO;
        for (i, row) in self.r()[..self.n].iter().enumerate() {
            if !row.is_empty() {
                s |= S::bit(i);
            }
        }
        s
    }

    /// `range(r)`.
    pub fn range(&self) -> S {
        self.r()[..self.n].iter().fold(S::ZERO, |a, r| a | *r)
    }

    /// `empty r`.
    pub fn is_empty(&self) -> bool {
        self.r()[..self.n].iter().all(|r| r.is_empty())
    }

    /// `irreflexive r`.
    pub fn irreflexive(&self) -> bool {
        let a = self.r();
        (0..self.n).all(|i| !a[i].has(i))
    }

    /// The events `i` with `(i, i)` in `r`.
    pub fn reflexive_points(&self) -> S {
        let a = self.r();
        (0..self.n).fold(S::ZERO, |s, i| if a[i].has(i) { s | S::bit(i) } else { s })
    }

    /// `acyclic r`, by peeling events without predecessors (Kahn).
    pub fn acyclic(&self) -> bool {
        let all = full_set::<S>(self.n);
        let a = self.r();
        let mut left = all;
        loop {
            // Events in `left` with no successor inside `left` can go.
            let mut removed = S::ZERO;
            for i in members(left) {
                if (a[i] & left).is_empty() {
                    removed |= S::bit(i);
                }
            }
            if removed.is_empty() {
                return left.is_empty();
            }
            left &= !removed;
        }
    }
}

/// The set of all `n` events.
pub fn full_set<S: Bits>(n: usize) -> S {
    S::first(n)
}

impl<S: Bits> BitOr for Rel<S> {
    type Output = Rel<S>;
    #[inline]
    fn bitor(mut self, o: Rel<S>) -> Rel<S> {
        let n = self.n;
        for (a, b) in self.w()[..n].iter_mut().zip(&o.r()[..n]) {
            *a |= *b;
        }
        self
    }
}

/// `r | &o`: as `r | o`, without copying `o`'s rows first.
impl<S: Bits> BitOr<&Rel<S>> for Rel<S> {
    type Output = Rel<S>;
    #[inline]
    fn bitor(mut self, o: &Rel<S>) -> Rel<S> {
        let n = self.n;
        for (a, b) in self.w()[..n].iter_mut().zip(&o.r()[..n]) {
            *a |= *b;
        }
        self
    }
}

/// `r & &o`: as `r & o`, without copying `o`'s rows first.
impl<S: Bits> BitAnd<&Rel<S>> for Rel<S> {
    type Output = Rel<S>;
    #[inline]
    fn bitand(mut self, o: &Rel<S>) -> Rel<S> {
        let n = self.n;
        for (a, b) in self.w()[..n].iter_mut().zip(&o.r()[..n]) {
            *a &= *b;
        }
        self
    }
}

impl<S: Bits> BitAnd for Rel<S> {
    type Output = Rel<S>;
    #[inline]
    fn bitand(mut self, o: Rel<S>) -> Rel<S> {
        let n = self.n;
        for (a, b) in self.w()[..n].iter_mut().zip(&o.r()[..n]) {
            *a &= *b;
        }
        self
    }
}

impl<S: Bits> Sub for Rel<S> {
    type Output = Rel<S>;
    #[inline]
    fn sub(mut self, o: Rel<S>) -> Rel<S> {
        let n = self.n;
        for (a, b) in self.w()[..n].iter_mut().zip(&o.r()[..n]) {
            *a &= !*b;
        }
        self
    }
}

/// A shortest cycle in `r` through some event of `through` (all events when
/// `through` is everything), as the list of its events, by breadth-first
/// search from each candidate start.
pub fn shortest_cycle<S: Bits>(r: &Rel<S>, through: S) -> Option<Vec<usize>> {
    let n = r.n();
    let mut best: Option<Vec<usize>> = None;
    for start in members(through & full_set::<S>(n)) {
        let mut prev = [usize::MAX; MAX_WIDE_EVENTS];
        let mut seen = S::ZERO;
        let mut frontier = vec![start];
        let mut found = None;
        'bfs: while !frontier.is_empty() {
            let mut next = Vec::new();
            for &u in &frontier {
                for v in members(r.row(u)) {
                    if v == start {
                        found = Some(u);
                        break 'bfs;
                    }
                    if !seen.has(v) {
                        seen |= S::bit(v);
                        prev[v] = u;
                        next.push(v);
                    }
                }
            }
            frontier = next;
        }
        if let Some(last) = found {
            let mut path = vec![last];
            let mut u = last;
            while u != start {
                u = prev[u];
                path.push(u);
            }
            path.reverse();
            if best.as_ref().is_none_or(|b| path.len() < b.len()) {
                best = Some(path);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set<S: Bits>(events: &[usize]) -> S {
        events.iter().fold(S::ZERO, |s, &i| s | S::bit(i))
    }

    fn closure_and_cycles<S: Bits>() {
        let mut r = Rel::<S>::empty(4);
        r.add(0, 1);
        r.add(1, 2);
        assert!(r.acyclic());
        assert!(r.plus().has(0, 2));
        assert!(!r.plus().has(2, 0));
        r.add(2, 0);
        assert!(!r.acyclic());
        assert!(!r.plus().irreflexive());
        assert_eq!(
            shortest_cycle(&r, full_set::<S>(4)).map(|c| c.len()),
            Some(3)
        );
        let s = Rel::cross(4, set::<S>(&[0, 1]), set(&[2, 3]));
        assert_eq!(s.inv().pairs(), vec![(2, 0), (2, 1), (3, 0), (3, 1)]);
        assert_eq!(r.seq(&r).pairs(), vec![(0, 2), (1, 0), (2, 1)]);
        assert_eq!(Rel::id(4, set::<S>(&[0, 2])).pairs(), vec![(0, 0), (2, 2)]);
        assert_eq!(r.dom(set(&[0])).pairs(), vec![(0, 1)]);
        assert_eq!(r.rng(set(&[0])).pairs(), vec![(2, 0)]);
    }

    #[test]
    fn closure_and_cycles_in_every_width() {
        closure_and_cycles::<u32>();
        closure_and_cycles::<u64>();
        closure_and_cycles::<u128>();
    }

    #[test]
    fn a_wide_relation_reaches_past_event_64() {
        let n = 100;
        let mut r = Rel::<u128>::empty(n);
        for i in 0..n - 1 {
            r.add(i, i + 1);
        }
        assert!(r.acyclic());
        assert!(r.plus().has(0, 99));
        assert_eq!(r.domain(), full_set::<u128>(99));
        assert_eq!(full_set::<u128>(n).len(), 100);
        assert_eq!(members(r.range()).last(), Some(99));
        r.add(99, 70);
        assert!(!r.acyclic());
        assert_eq!(shortest_cycle(&r, full_set(n)).map(|c| c.len()), Some(30));
        assert_eq!(full_set::<u64>(64), u64::MAX);
        assert_eq!(full_set::<u128>(128), u128::MAX);
    }
}
