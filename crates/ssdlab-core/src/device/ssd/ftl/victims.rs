//! A die's garbage-collection candidates, with each choice made among them in O(log n): the
//! block with the fewest valid IUs (greedy GC), the least-erased block (static wear
//! levelling) and, on a drive with an SLC cache, the oldest SLC block (folding).
//!
//! A candidate is a closed, fully programmed block that is not the die's current victim,
//! the blocks the per-pick scans of the whole die used to consider. Each choice is a min tree
//! over the die's block positions: a power of two of leaves in position order, a
//! non-candidate's leaf `EMPTY` (above every key), each inner node the smaller of its
//! children. Descending from the root to the leftmost leaf equal to it finds the first
//! position among the least keys: the block `min_by_key` over the positions in order picks.
//!
//! An invalidated IU only lowers a key, and a lowered key climbs only while it is below its
//! parent, so the write path's update usually stops a level or two up; a block joining or
//! leaving the candidates (once per block written) costs a climb to the root.

/// A key type with a value above every real key, for non-candidates.
pub trait Key: Copy + Ord {
    const EMPTY: Self;
}

impl Key for u32 {
    const EMPTY: u32 = u32::MAX;
}

impl Key for u64 {
    const EMPTY: u64 = u64::MAX;
}

/// Min tree over positions `0..n`; `nodes[1]` is the root, leaf `p` is `nodes[leaves + p]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MinTree<K> {
    nodes: Vec<K>,
}

impl<K: Key> MinTree<K> {
    /// `n` positions with the keys `key(p)`.
    pub fn build(n: u32, key: impl Fn(u32) -> K) -> MinTree<K> {
        let leaves = (n.max(1) as usize).next_power_of_two();
        let mut nodes = vec![K::EMPTY; 2 * leaves];
        for p in 0..n {
            nodes[leaves + p as usize] = key(p);
        }
        for k in (1..leaves).rev() {
            nodes[k] = nodes[2 * k].min(nodes[2 * k + 1]);
        }
        MinTree { nodes }
    }

    fn leaves(&self) -> usize {
        self.nodes.len() / 2
    }

    pub fn get(&self, pos: u32) -> K {
        self.nodes[self.leaves() + pos as usize]
    }

    /// Set `pos`'s key and the minima above it (they stop changing where a minimum holds).
    pub fn set(&mut self, pos: u32, key: K) {
        let mut k = self.leaves() + pos as usize;
        self.nodes[k] = key;
        while k > 1 {
            k /= 2;
            let m = self.nodes[2 * k].min(self.nodes[2 * k + 1]);
            if self.nodes[k] == m {
                break;
            }
            self.nodes[k] = m;
        }
    }

    /// Set `pos`'s key to `key`, no more than its key now: only the minima above it that
    /// exceed `key` change.
    pub fn lower(&mut self, pos: u32, key: K) {
        let mut k = self.leaves() + pos as usize;
        debug_assert!(key <= self.nodes[k]);
        self.nodes[k] = key;
        while k > 1 && self.nodes[k / 2] > key {
            k /= 2;
            self.nodes[k] = key;
        }
    }

    /// The first position holding the least key, and that key; None when every leaf is EMPTY.
    pub fn first_min(&self) -> Option<(u32, K)> {
        let root = *self.nodes.get(1)?;
        if root == K::EMPTY {
            return None;
        }
        let leaves = self.leaves();
        let mut k = 1;
        while k < leaves {
            k = if self.nodes[2 * k] == root { 2 * k } else { 2 * k + 1 };
        }
        Some(((k - leaves) as u32, root))
    }

    /// Check every leaf against `key(p)` (EMPTY past `n`) and every inner node.
    pub fn check(&self, n: u32, key: impl Fn(u32) -> K) -> Result<(), String>
    where
        K: std::fmt::Debug,
    {
        let leaves = self.leaves();
        if leaves < n as usize {
            return Err(format!("a tree of {leaves} leaves for {n} blocks"));
        }
        for p in 0..leaves as u32 {
            let want = if p < n { key(p) } else { K::EMPTY };
            if self.get(p) != want {
                return Err(format!("position {p} holds {:?}, expected {want:?}", self.get(p)));
            }
        }
        for k in 1..leaves {
            if self.nodes[k] != self.nodes[2 * k].min(self.nodes[2 * k + 1]) {
                return Err(format!("node {k} is not the minimum of its children"));
            }
        }
        Ok(())
    }
}

/// What the choices need to know of a candidate block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub valid: u32,
    pub erases: u32,
    /// The block's stamp (when it was opened) if it is an SLC block.
    pub slc_stamp: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Victims {
    blocks: u32,
    valid: MinTree<u32>,
    erases: MinTree<u32>,
    /// Only on a drive with an SLC cache (empty otherwise: no block is ever SLC).
    slc_stamp: MinTree<u64>,
}

impl Victims {
    /// The die's `blocks` positions, `candidate(p)` for each; `slc` whether any block may be
    /// used in SLC mode.
    pub fn build(blocks: u32, slc: bool, candidate: impl Fn(u32) -> Option<Candidate>) -> Victims {
        let all: Vec<Option<Candidate>> = (0..blocks).map(candidate).collect();
        let at = |p: u32| all[p as usize];
        Victims {
            blocks,
            valid: MinTree::build(blocks, |p| at(p).map_or(u32::EMPTY, |c| c.valid)),
            erases: MinTree::build(blocks, |p| at(p).map_or(u32::EMPTY, |c| c.erases)),
            slc_stamp: if slc {
                MinTree::build(blocks, |p| at(p).and_then(|c| c.slc_stamp).unwrap_or(u64::EMPTY))
            } else {
                MinTree::default()
            },
        }
    }

    /// Make position `pos` a candidate with these keys, or no candidate (None).
    pub fn set(&mut self, pos: u32, candidate: Option<Candidate>) {
        let valid = candidate.map_or(u32::EMPTY, |c| c.valid);
        let erases = candidate.map_or(u32::EMPTY, |c| c.erases);
        // u32::MAX is no key: no count gets there (a block holds far fewer IUs, and
        // 4 billion erases are beyond any flash).
        debug_assert!(valid != u32::EMPTY || candidate.is_none());
        debug_assert!(erases != u32::EMPTY || candidate.is_none());
        if self.valid.get(pos) != valid {
            self.valid.set(pos, valid);
        }
        if self.erases.get(pos) != erases {
            self.erases.set(pos, erases);
        }
        let stamp = candidate.and_then(|c| c.slc_stamp);
        if self.slc_stamp.nodes.is_empty() {
            debug_assert!(stamp.is_none(), "an SLC block on a drive without an SLC cache");
        } else {
            let stamp = stamp.unwrap_or(u64::EMPTY);
            if self.slc_stamp.get(pos) != stamp {
                self.slc_stamp.set(pos, stamp);
            }
        }
    }

    /// One IU of `pos` was invalidated (nothing to do unless it is a candidate).
    #[inline]
    pub fn lower_valid(&mut self, pos: u32) {
        let v = self.valid.get(pos);
        if v != u32::EMPTY {
            self.valid.lower(pos, v - 1);
        }
    }

    /// One IU was mapped into `pos` (a GC block that closed before its last IU was mapped).
    #[inline]
    pub fn raise_valid(&mut self, pos: u32) {
        let v = self.valid.get(pos);
        if v != u32::EMPTY {
            self.valid.set(pos, v + 1);
        }
    }

    /// The first candidate with the fewest valid IUs.
    pub fn fewest_valid(&self) -> Option<u32> {
        self.valid.first_min().map(|(p, _)| p)
    }

    /// The first least-erased candidate.
    pub fn least_erased(&self) -> Option<u32> {
        self.erases.first_min().map(|(p, _)| p)
    }

    /// The first SLC candidate with the oldest stamp.
    pub fn oldest_slc(&self) -> Option<u32> {
        self.slc_stamp.first_min().map(|(p, _)| p)
    }

    /// Check the trees against `candidate(p)` for every position.
    pub fn check(&self, candidate: impl Fn(u32) -> Option<Candidate>) -> Result<(), String> {
        let all: Vec<Option<Candidate>> = (0..self.blocks).map(candidate).collect();
        let at = |p: u32| all[p as usize];
        let n = self.blocks;
        self.valid.check(n, |p| at(p).map_or(u32::EMPTY, |c| c.valid)).map_err(|e| format!("valid-count tree: {e}"))?;
        self.erases.check(n, |p| at(p).map_or(u32::EMPTY, |c| c.erases)).map_err(|e| format!("erase-count tree: {e}"))?;
        if self.slc_stamp.nodes.is_empty() {
            if let Some(p) = (0..n).find(|&p| at(p).is_some_and(|c| c.slc_stamp.is_some())) {
                return Err(format!("SLC candidate at {p} but no SLC tree"));
            }
        } else {
            self.slc_stamp
                .check(n, |p| at(p).and_then(|c| c.slc_stamp).unwrap_or(u64::EMPTY))
                .map_err(|e| format!("SLC stamp tree: {e}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The scan the trees replace: the first position with the least key among candidates.
    fn scan<K: Copy + Ord>(keys: &[Option<K>]) -> Option<u32> {
        (0..keys.len() as u32).filter(|&p| keys[p as usize].is_some()).min_by_key(|&p| keys[p as usize])
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// Make position `.0` (wrapping) a candidate with these keys, or none.
        Set(usize, Option<(u32, u32, Option<u64>)>),
        Lower(usize),
        Raise(usize),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let cand = prop::option::of((0u32..6, 0u32..4, prop::option::of(0u64..5)));
        prop::collection::vec(
            prop_oneof![
                (any::<usize>(), cand).prop_map(|(p, c)| Op::Set(p, c)),
                any::<usize>().prop_map(Op::Lower),
                any::<usize>().prop_map(Op::Raise),
            ],
            0..300,
        )
    }

    proptest! {
        /// Over random changes, each tree picks what a scan of the candidates picks (ties in
        /// position order), for sizes that are and are not powers of two.
        #[test]
        fn picks_what_a_scan_picks(n in 1u32..70, ops in ops()) {
            let mut model: Vec<Option<Candidate>> = vec![None; n as usize];
            let mut v = Victims::build(n, true, |_| None);
            for op in ops {
                match op {
                    Op::Set(p, c) => {
                        let c = c.map(|(valid, erases, slc_stamp)| Candidate { valid, erases, slc_stamp });
                        model[p % n as usize] = c;
                        v.set((p % n as usize) as u32, c);
                    }
                    Op::Lower(p) => {
                        let p = p % n as usize;
                        if let Some(c) = model[p].as_mut().filter(|c| c.valid > 0) {
                            c.valid -= 1;
                            v.lower_valid(p as u32);
                        }
                    }
                    Op::Raise(p) => {
                        let p = p % n as usize;
                        if let Some(c) = model[p].as_mut() {
                            c.valid += 1;
                        }
                        v.raise_valid(p as u32);
                    }
                }
                let valid: Vec<_> = model.iter().map(|c| c.map(|c| c.valid)).collect();
                let erases: Vec<_> = model.iter().map(|c| c.map(|c| c.erases)).collect();
                let stamps: Vec<_> = model.iter().map(|c| c.and_then(|c| c.slc_stamp)).collect();
                prop_assert_eq!(v.fewest_valid(), scan(&valid));
                prop_assert_eq!(v.least_erased(), scan(&erases));
                prop_assert_eq!(v.oldest_slc(), scan(&stamps));
                prop_assert_eq!(v.check(|p| model[p as usize]), Ok(()));
            }
        }
    }

    #[test]
    fn ties_go_to_the_first_position() {
        let c = |valid| Some(Candidate { valid, erases: 0, slc_stamp: None });
        // Three leaves in a tree of four: the shape must not change the choice.
        let mut v = Victims::build(3, false, |p| c([2, 1, 1][p as usize]));
        assert_eq!(v.fewest_valid(), Some(1));
        v.set(1, None);
        assert_eq!(v.fewest_valid(), Some(2));
        v.lower_valid(0);
        assert_eq!(v.fewest_valid(), Some(0));
        assert_eq!(v.least_erased(), Some(0));
        assert_eq!(v.oldest_slc(), None);
        assert!(v.check(|p| c([1, 9, 1][p as usize]).filter(|_| p != 1)).is_ok());
        // A key changed behind the tree's back is caught.
        assert!(v.check(|p| c([1, 9, 0][p as usize]).filter(|_| p != 1)).is_err());
    }
}
