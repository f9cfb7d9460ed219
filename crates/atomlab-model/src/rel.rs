//! Sets of events and binary relations over them, as bit matrices, with the
//! operators of herd's cat language (`|`, `&`, `\`, `;`, `^-1`, `+`, `*`,
//! `?`, `[S]`) so that models read like their cat files.
//!
//! An execution has at most [`MAX_EVENTS`] events; a set is one `u64` and a
//! relation 64 rows of `u64`.

use std::ops::{BitAnd, BitOr, Sub};

/// The most events one candidate execution may have.
pub const MAX_EVENTS: usize = 64;

/// A set of events (bit `i` is event `i`).
pub type Set = u64;

/// Iterates the members of a set.
pub fn members(s: Set) -> impl Iterator<Item = usize> {
    let mut s = s;
    std::iter::from_fn(move || {
        if s == 0 {
            None
        } else {
            let i = s.trailing_zeros() as usize;
            s &= s - 1;
            Some(i)
        }
    })
}

/// A binary relation over `n` events.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Rel {
    n: usize,
    rows: [u64; MAX_EVENTS],
}

impl std::fmt::Debug for Rel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.pairs()).finish()
    }
}

impl Rel {
    /// The empty relation over `n` events.
    pub fn empty(n: usize) -> Rel {
        Rel {
            n,
            rows: [0; MAX_EVENTS],
        }
    }

    /// Number of events.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `[S]`: the identity on `s`.
    pub fn id(n: usize, s: Set) -> Rel {
        let mut r = Rel::empty(n);
        for i in members(s) {
            r.rows[i] = 1 << i;
        }
        r
    }

    /// `A * B`: every pair from `a` to `b`.
    pub fn cross(n: usize, a: Set, b: Set) -> Rel {
        let mut r = Rel::empty(n);
        for i in members(a) {
            r.rows[i] = b;
        }
        r
    }

    /// Adds the pair `(i, j)`.
    pub fn add(&mut self, i: usize, j: usize) {
        self.rows[i] |= 1 << j;
    }

    /// Removes the pair `(i, j)`.
    pub fn remove(&mut self, i: usize, j: usize) {
        self.rows[i] &= !(1 << j);
    }

    /// Whether `(i, j)` is in the relation.
    pub fn has(&self, i: usize, j: usize) -> bool {
        self.rows[i] >> j & 1 == 1
    }

    /// The successors of `i`.
    pub fn row(&self, i: usize) -> Set {
        self.rows[i]
    }

    /// The pairs, in order.
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for i in 0..self.n {
            for j in members(self.rows[i]) {
                v.push((i, j));
            }
        }
        v
    }

    /// Adds `(i, j)` for every `j` in `s`.
    pub fn add_row(&mut self, i: usize, s: Set) {
        self.rows[i] |= s;
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
        let reached = self.rows[j] | 1 << j;
        for k in 0..self.n {
            if k == i || self.rows[k] >> i & 1 == 1 {
                self.rows[k] |= reached;
            }
        }
        true
    }

    /// Whether `r1 ; r2` is irreflexive (no `i`, `j` with `(i, j)` in
    /// `r1` and `(j, i)` in `r2`), without building the composition.
    pub fn seq_irreflexive(&self, other: &Rel) -> bool {
        (0..self.n).all(|i| members(self.rows[i]).all(|j| other.rows[j] >> i & 1 == 0))
    }

    /// `r1 ; r2`: composition.
    pub fn seq(&self, other: &Rel) -> Rel {
        let mut r = Rel::empty(self.n);
        for i in 0..self.n {
            let mut acc = 0;
            for j in members(self.rows[i]) {
                acc |= other.rows[j];
            }
            r.rows[i] = acc;
        }
        r
    }

    /// `r^-1`.
    pub fn inv(&self) -> Rel {
        let mut r = Rel::empty(self.n);
        for i in 0..self.n {
            for j in members(self.rows[i]) {
                r.rows[j] |= 1 << i;
            }
        }
        r
    }

    /// `r+`: transitive closure (Warshall, one row per word).
    pub fn plus(&self) -> Rel {
        let mut r = *self;
        for k in 0..self.n {
            let bit = 1u64 << k;
            let rk = r.rows[k];
            if rk == 0 {
                continue;
            }
            for i in 0..self.n {
                if r.rows[i] & bit != 0 {
                    r.rows[i] |= rk;
                }
            }
        }
        r
    }

    /// `r*` over all `n` events.
    pub fn star(&self) -> Rel {
        self.plus().opt()
    }

    /// `r?`: `r` or identity, over all `n` events.
    pub fn opt(&self) -> Rel {
        let mut r = *self;
        for i in 0..self.n {
            r.rows[i] |= 1 << i;
        }
        r
    }

    /// `[S]; r`.
    pub fn dom(&self, s: Set) -> Rel {
        let mut r = *self;
        for i in 0..self.n {
            if s >> i & 1 == 0 {
                r.rows[i] = 0;
            }
        }
        r
    }

    /// `r; [S]`.
    pub fn rng(&self, s: Set) -> Rel {
        let mut r = *self;
        for i in 0..self.n {
            r.rows[i] &= s;
        }
        r
    }

    /// `r \ id`.
    pub fn noid(&self) -> Rel {
        let mut r = *self;
        for i in 0..self.n {
            r.rows[i] &= !(1 << i);
        }
        r
    }

    /// `~r` over all pairs of the `n` events.
    pub fn complement(&self) -> Rel {
        let all = full_set(self.n);
        let mut r = *self;
        for i in 0..self.n {
            r.rows[i] = !r.rows[i] & all;
        }
        r
    }

    /// `domain(r)`.
    pub fn domain(&self) -> Set {
        let mut s = 0;
        for i in 0..self.n {
            if self.rows[i] != 0 {
                s |= 1 << i;
            }
        }
        s
    }

    /// `range(r)`.
    pub fn range(&self) -> Set {
        self.rows[..self.n].iter().fold(0, |a, r| a | r)
    }

    /// `empty r`.
    pub fn is_empty(&self) -> bool {
        self.rows[..self.n].iter().all(|r| *r == 0)
    }

    /// `irreflexive r`.
    pub fn irreflexive(&self) -> bool {
        (0..self.n).all(|i| self.rows[i] >> i & 1 == 0)
    }

    /// The events `i` with `(i, i)` in `r`.
    pub fn reflexive_points(&self) -> Set {
        (0..self.n).fold(0, |s, i| s | (self.rows[i] >> i & 1) << i)
    }

    /// `acyclic r`, by peeling events without predecessors (Kahn).
    pub fn acyclic(&self) -> bool {
        let all = full_set(self.n);
        let mut left = all;
        loop {
            // Events in `left` with no successor inside `left` can go.
            let mut removed = 0;
            for i in members(left) {
                if self.rows[i] & left == 0 {
                    removed |= 1 << i;
                }
            }
            if removed == 0 {
                return left == 0;
            }
            left &= !removed;
        }
    }
}

/// The set of all `n` events.
pub fn full_set(n: usize) -> Set {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

impl BitOr for Rel {
    type Output = Rel;
    fn bitor(mut self, o: Rel) -> Rel {
        for i in 0..self.n {
            self.rows[i] |= o.rows[i];
        }
        self
    }
}

impl BitAnd for Rel {
    type Output = Rel;
    fn bitand(mut self, o: Rel) -> Rel {
        for i in 0..self.n {
            self.rows[i] &= o.rows[i];
        }
        self
    }
}

impl Sub for Rel {
    type Output = Rel;
    fn sub(mut self, o: Rel) -> Rel {
        for i in 0..self.n {
            self.rows[i] &= !o.rows[i];
        }
        self
    }
}

/// A shortest cycle in `r` through some event of `through` (all events when
/// `through` is everything), as the list of its events, by breadth-first
/// search from each candidate start.
pub fn shortest_cycle(r: &Rel, through: Set) -> Option<Vec<usize>> {
    let n = r.n();
    let mut best: Option<Vec<usize>> = None;
    for start in members(through & full_set(n)) {
        let mut prev = [usize::MAX; MAX_EVENTS];
        let mut seen: Set = 0;
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
                    if seen >> v & 1 == 0 {
                        seen |= 1 << v;
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

    #[test]
    fn closure_and_cycles() {
        let mut r = Rel::empty(4);
        r.add(0, 1);
        r.add(1, 2);
        assert!(r.acyclic());
        assert!(r.plus().has(0, 2));
        assert!(!r.plus().has(2, 0));
        r.add(2, 0);
        assert!(!r.acyclic());
        assert!(!r.plus().irreflexive());
        assert_eq!(shortest_cycle(&r, full_set(4)).map(|c| c.len()), Some(3));
        let s = Rel::cross(4, 0b0011, 0b1100);
        assert_eq!(s.inv().pairs(), vec![(2, 0), (2, 1), (3, 0), (3, 1)]);
        assert_eq!(r.seq(&r).pairs(), vec![(0, 2), (1, 0), (2, 1)]);
        assert_eq!(Rel::id(4, 0b101).pairs(), vec![(0, 0), (2, 2)]);
        assert_eq!(r.dom(0b001).pairs(), vec![(0, 1)]);
        assert_eq!(r.rng(0b001).pairs(), vec![(2, 0)]);
    }
}
