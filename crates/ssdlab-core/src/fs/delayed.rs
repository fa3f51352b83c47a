//! Delayed allocation's promises: which blocks of each file are dirty in memory with no disk
//! block yet (ext4's delayed extents in the extent status tree, `ext4_es_insert_delayed_block`)
//! and how many in all (`s_dirtyclusters_counter`). A block is promised once, when first
//! dirtied unmapped (`ext4_da_reserve_space`), and its promise ends once: when it is
//! allocated at writeback, or when its page is dropped (`ext4_da_release_space`, from
//! truncate, unlink or a failed writeback).

use super::Ino;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// Per file, its promised blocks as disjoint runs `start -> end` (end exclusive; runs that
/// touch are merged); and their total.
#[derive(Clone, Debug, Default)]
pub struct Delayed {
    runs: FxHashMap<Ino, BTreeMap<u32, u32>>,
    total: u64,
}

impl Delayed {
    /// Blocks promised, in all files.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether block `l` of `ino` is promised.
    pub fn contains(&self, ino: Ino, l: u32) -> bool {
        self.runs
            .get(&ino)
            .and_then(|m| m.range(..=l).next_back())
            .is_some_and(|(_, &e)| e > l)
    }

    /// Promises `[a, b)` of `ino`; none of it may be promised already.
    pub fn insert(&mut self, ino: Ino, a: u32, b: u32) {
        if a >= b {
            return;
        }
        debug_assert!((a..b).all(|l| !self.contains(ino, l)), "block promised twice");
        let m = self.runs.entry(ino).or_default();
        let (mut s, mut e) = (a, b);
        if let Some((&ls, &le)) = m.range(..a).next_back() {
            if le == a {
                m.remove(&ls);
                s = ls;
            }
        }
        if let Some(re) = m.remove(&b) {
            e = re;
        }
        m.insert(s, e);
        self.total += (b - a) as u64;
    }

    /// Ends the promises of `[a, b)` of `ino`; returns how many there were.
    pub fn remove(&mut self, ino: Ino, a: u32, b: u32) -> u64 {
        let Some(m) = self.runs.get_mut(&ino).filter(|_| a < b) else {
            return 0;
        };
        let first = m.range(..=a).next_back().filter(|(_, &e)| e > a).map(|(&s, _)| s).unwrap_or(a);
        let hit: Vec<(u32, u32)> = m.range(first..b).map(|(&s, &e)| (s, e)).collect();
        let mut n = 0;
        for (s, e) in hit {
            m.remove(&s);
            n += (e.min(b) - s.max(a)) as u64;
            if s < a {
                m.insert(s, a);
            }
            if e > b {
                m.insert(b, e);
            }
        }
        if m.is_empty() {
            self.runs.remove(&ino);
        }
        self.total -= n;
        n
    }

    /// `ino`'s promised runs, `(start, end)`, in order.
    pub fn runs_of(&self, ino: Ino) -> Vec<(u32, u32)> {
        self.runs.get(&ino).map_or_else(Vec::new, |m| m.iter().map(|(&s, &e)| (s, e)).collect())
    }

    /// Files with promised blocks.
    pub fn files(&self) -> Vec<Ino> {
        let mut v: Vec<Ino> = self.runs.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// An estimate of the heap held.
    pub fn heap_bytes(&self) -> usize {
        self.runs.capacity() * (std::mem::size_of::<(Ino, BTreeMap<u32, u32>)>() + 1)
            + self.runs.values().map(|m| m.len() * 2 * std::mem::size_of::<u32>() * 2).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_merge_split_and_count_each_block_once() {
        let mut d = Delayed::default();
        d.insert(12, 0, 4);
        d.insert(12, 8, 10);
        d.insert(12, 4, 8);
        assert_eq!(d.runs_of(12), vec![(0, 10)]);
        assert_eq!(d.total(), 10);
        assert_eq!(d.remove(12, 3, 5), 2);
        assert_eq!(d.runs_of(12), vec![(0, 3), (5, 10)]);
        assert!(d.contains(12, 2) && !d.contains(12, 3) && !d.contains(12, 4) && d.contains(12, 5));
        // a second removal of the same blocks gives nothing back
        assert_eq!(d.remove(12, 3, 5), 0);
        assert_eq!(d.remove(12, 0, u32::MAX), 8);
        assert_eq!(d.total(), 0);
        assert!(d.files().is_empty());
        assert_eq!(d.remove(13, 0, 10), 0);
    }
}
