//! A die's free blocks, with the least-worn one found in O(log n).
//!
//! The list is a plain `Vec` that grows by `push` and shrinks by `swap_remove`, as it always
//! has: its order is part of the FTL's state (saved, compared, and the tie-break below). Beside
//! it, a min tree over the list's positions keys each entry by (erase count, position), so the
//! root names the entry a linear scan with `min_by_key` picks: the least erased, and of those
//! the first in the list. A block's erase count never changes while it is free (it is erased
//! before it joins the list), so the tree only changes where the list does.

/// Key of an empty position: above every real key.
const EMPTY: u64 = u64::MAX;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FreeBlocks {
    list: Vec<u32>,
    /// Bottom-up min tree: leaf `cap + i` holds `erases << 32 | i` for `list[i]` (EMPTY past
    /// the list's end), node `k` the smaller of nodes `2k` and `2k + 1`; node 1 is the
    /// minimum. The key holds the position, so every key is distinct and the tree's shape
    /// (which is not in list order when `cap` is not a power of two) cannot change the choice.
    tree: Vec<u64>,
}

fn key(erases: u32, pos: usize) -> u64 {
    (erases as u64) << 32 | pos as u64
}

impl FreeBlocks {
    /// `list` (at most `cap` blocks), with the erase count of each block from `erases`.
    pub fn new(cap: u32, list: Vec<u32>, erases: impl Fn(u32) -> u32) -> FreeBlocks {
        let cap = cap.max(1) as usize;
        assert!(list.len() <= cap, "a free list of {} blocks where a die has {cap}", list.len());
        let mut tree = vec![EMPTY; 2 * cap];
        for (i, &b) in list.iter().enumerate() {
            tree[cap + i] = key(erases(b), i);
        }
        for k in (1..cap).rev() {
            tree[k] = tree[2 * k].min(tree[2 * k + 1]);
        }
        FreeBlocks { list, tree }
    }

    fn cap(&self) -> usize {
        self.tree.len() / 2
    }

    /// Set position `pos`'s key and the minima above it.
    fn set(&mut self, pos: usize, value: u64) {
        let mut k = self.cap() + pos;
        self.tree[k] = value;
        while k > 1 {
            k /= 2;
            self.tree[k] = self.tree[2 * k].min(self.tree[2 * k + 1]);
        }
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn as_slice(&self) -> &[u32] {
        &self.list
    }

    /// Add `block`, erased `erases` times, at the end of the list.
    pub fn push(&mut self, block: u32, erases: u32) {
        let pos = self.list.len();
        assert!(pos < self.cap(), "more free blocks than the die has");
        self.list.push(block);
        self.set(pos, key(erases, pos));
    }

    /// Remove and return the least-erased block (the first in the list among equals), moving
    /// the last entry into its place; None when the list is empty.
    pub fn take_least_worn(&mut self) -> Option<u32> {
        let root = *self.tree.get(1)?;
        if root == EMPTY {
            return None;
        }
        let pos = (root & u32::MAX as u64) as usize;
        let last = self.list.len() - 1;
        let block = self.list.swap_remove(pos);
        if pos != last {
            let moved = self.tree[self.cap() + last] >> 32;
            self.set(pos, moved << 32 | pos as u64);
        }
        self.set(last, EMPTY);
        Some(block)
    }

    /// Check the tree against the list and the blocks' erase counts (`erases`).
    pub fn check(&self, erases: impl Fn(u32) -> u32) -> Result<(), String> {
        let cap = self.cap();
        if self.list.len() > cap {
            return Err(format!("{} free blocks in a tree for {cap}", self.list.len()));
        }
        for i in 0..cap {
            let want = self.list.get(i).map_or(EMPTY, |&b| key(erases(b), i));
            if self.tree[cap + i] != want {
                return Err(format!("free-block tree position {i} holds {:#x}, expected {want:#x}", self.tree[cap + i]));
            }
        }
        for k in 1..cap {
            if self.tree[k] != self.tree[2 * k].min(self.tree[2 * k + 1]) {
                return Err(format!("free-block tree node {k} is not the minimum of its children"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `Ftl::open_block` did before the tree: a scan for the first least-erased entry.
    fn scan(list: &mut Vec<u32>, erases: &[u32]) -> Option<u32> {
        let (idx, _) = list.iter().enumerate().min_by_key(|&(_, &b)| erases[b as usize])?;
        Some(list.swap_remove(idx))
    }

    #[derive(Clone, Debug)]
    enum Op {
        Take,
        /// Erase the block at this index of the taken ones (wrapping) `n` more times, then
        /// give it back.
        Erase(usize, u32),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        prop::collection::vec(
            prop_oneof![Just(Op::Take), (any::<usize>(), 0u32..3).prop_map(|(i, n)| Op::Erase(i, n))],
            0..300,
        )
    }

    proptest! {
        /// Over random takes, erases and returns, the tree takes the very block the scan
        /// takes and the list evolves the same, for sizes that are and are not powers of two.
        #[test]
        fn takes_what_a_scan_takes(cap in 1u32..70, start in prop::collection::vec(0u32..4, 70), ops in ops()) {
            let mut erases: Vec<u32> = start[..cap as usize].to_vec();
            let mut list: Vec<u32> = (0..cap).collect();
            let mut free = FreeBlocks::new(cap, list.clone(), |b| erases[b as usize]);
            let mut taken: Vec<u32> = Vec::new();
            for op in ops {
                match op {
                    Op::Take => {
                        let want = scan(&mut list, &erases);
                        prop_assert_eq!(free.take_least_worn(), want);
                        taken.extend(want);
                    }
                    Op::Erase(i, n) if !taken.is_empty() => {
                        let b = taken.swap_remove(i % taken.len());
                        erases[b as usize] += n;
                        list.push(b);
                        free.push(b, erases[b as usize]);
                    }
                    Op::Erase(..) => {}
                }
                prop_assert_eq!(free.as_slice(), &list[..]);
                prop_assert_eq!(free.check(|b| erases[b as usize]), Ok(()));
            }
        }
    }

    #[test]
    fn check_finds_a_stale_key() {
        let erases = [3u32, 1, 2];
        let mut free = FreeBlocks::new(3, vec![0, 1, 2], |b| erases[b as usize]);
        assert_eq!(free.check(|b| erases[b as usize]), Ok(()));
        // Block 1 erased again while listed as free: the tree no longer matches.
        assert!(free.check(|b| erases[b as usize] + (b == 1) as u32).is_err());
        assert_eq!(free.take_least_worn(), Some(1));
        assert_eq!(free.as_slice(), &[0, 2]);
        assert_eq!(free.take_least_worn(), Some(2));
        assert_eq!(free.take_least_worn(), Some(0));
        assert_eq!(free.take_least_worn(), None);
    }
}
