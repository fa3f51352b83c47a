//! Free space: the on-disk block bitmap, the allocator's view of it (the bitmap plus the
//! blocks held by preallocations, as mballoc's in-memory buddy is), and an index over the
//! latter so that "the first free run of `n` blocks at or after `b`" costs O(log blocks).
//!
//! The index is a segment tree over 64-block words: every node keeps the free run at its
//! start, at its end and the longest inside, so a descent finds the first fit without
//! looking at every block (the role mballoc's buddy bitmaps play in `fs/ext4/mballoc.c`).
//! Per-group counts of free blocks and free fragments follow each change, for mballoc's
//! group criteria (`bb_free`, `bb_fragments`).

/// One node: free run at the start, at the end, the longest, all in blocks.
#[derive(Clone, Copy, Default, Debug)]
struct Node {
    pre: u32,
    suf: u32,
    best: u32,
}

/// A bit set, one bit a block (1 = used).
#[derive(Clone, Debug)]
pub struct Bits {
    words: Vec<u64>,
    len: u64,
}

impl Bits {
    pub fn new(len: u64) -> Self {
        Bits {
            words: vec![0; len.div_ceil(64) as usize],
            len,
        }
    }
    pub fn len(&self) -> u64 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn get(&self, i: u64) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }
    pub fn set(&mut self, i: u64, v: bool) {
        let w = &mut self.words[(i / 64) as usize];
        if v {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }
    /// Sets `[start, start+len)` to `v`.
    pub fn set_range(&mut self, start: u64, len: u64, v: bool) {
        let mut i = start;
        let end = start + len;
        while i < end {
            if i.is_multiple_of(64) && end - i >= 64 {
                self.words[(i / 64) as usize] = if v { !0 } else { 0 };
                i += 64;
            } else {
                self.set(i, v);
                i += 1;
            }
        }
    }
    /// Whether every bit of `[start, start+len)` is `v`.
    pub fn all(&self, start: u64, len: u64, v: bool) -> bool {
        (start..start + len).all(|i| self.get(i) == v)
    }
    /// Number of set bits in `[start, start+len)`.
    pub fn count_ones(&self, start: u64, len: u64) -> u64 {
        let mut n = 0;
        let mut i = start;
        let end = start + len;
        while i < end {
            if i.is_multiple_of(64) && end - i >= 64 {
                n += self.words[(i / 64) as usize].count_ones() as u64;
                i += 64;
            } else {
                n += self.get(i) as u64;
                i += 1;
            }
        }
        n
    }
    /// The first clear bit at or after `from`, before `end`.
    pub fn next_clear(&self, from: u64, end: u64) -> Option<u64> {
        let mut i = from;
        while i < end {
            let w = self.words[(i / 64) as usize] | ((1u64 << (i % 64)) - 1);
            if w != !0 {
                let b = (i / 64) * 64 + (!w).trailing_zeros() as u64;
                return (b < end).then_some(b);
            }
            i = (i / 64 + 1) * 64;
        }
        None
    }
    /// The first set bit at or after `from`, or `end` if none before it.
    pub fn next_set(&self, from: u64, end: u64) -> u64 {
        let mut i = from;
        while i < end {
            let w = self.words[(i / 64) as usize] & !((1u64 << (i % 64)) - 1);
            if w != 0 {
                return ((i / 64) * 64 + w.trailing_zeros() as u64).min(end);
            }
            i = (i / 64 + 1) * 64;
        }
        end
    }
    /// The first set bit at or after `from`.
    pub fn next_set_from(&self, from: u64) -> Option<u64> {
        let e = self.next_set(from, self.len);
        (e < self.len).then_some(e)
    }
    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8
    }
}

/// Free blocks and free fragments of one group, in the allocator's view.
#[derive(Clone, Copy, Debug, Default)]
pub struct GroupFree {
    pub free: u32,
    pub fragments: u32,
}

/// The block bitmap on disk and the allocator's view of it, with the index.
#[derive(Clone, Debug)]
pub struct Space {
    /// On disk: a block is used by metadata or a file (what `e2freefrag` reads).
    disk: Bits,
    /// The allocator's view: used on disk, or held by a preallocation.
    busy: Bits,
    /// Segment tree over `busy`, leaves are its words; `leaves` is a power of two.
    tree: Vec<Node>,
    leaves: usize,
    first_data_block: u64,
    blocks_per_group: u64,
    groups: Vec<GroupFree>,
    disk_free: u64,
}

fn word_node(w: u64, valid: u32) -> Node {
    // `valid` low bits belong to the device; the rest count as used.
    let w = if valid == 64 { w } else { w | (!0u64 << valid) };
    if w == 0 {
        return Node {
            pre: 64,
            suf: 64,
            best: 64,
        };
    }
    let (mut best, mut cur) = (0u32, 0u32);
    for i in 0..64 {
        if (w >> i) & 1 == 0 {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    let (pre, suf) = (w.trailing_zeros(), w.leading_zeros());
    Node { pre, suf, best }
}

/// The parent of `l` and `r`, each covering `span` blocks. The sums are taken in u64: a
/// span reaches 2^31 blocks below the root of a file system past 2^31 blocks (8 TiB at
/// 4 KiB), while every run fits a u32, being at most the file system's blocks (< 2^32).
fn merge(l: Node, r: Node, span: u64) -> Node {
    let (lpre, lsuf, rpre, rsuf) = (l.pre as u64, l.suf as u64, r.pre as u64, r.suf as u64);
    let run = |x: u64| u32::try_from(x).expect("a free run within a file system of < 2^32 blocks");
    Node {
        pre: if lpre == span { run(span + rpre) } else { l.pre },
        suf: if rsuf == span { run(span + lsuf) } else { r.suf },
        best: l.best.max(r.best).max(run(lsuf + rpre)),
    }
}

impl Space {
    /// The heap bytes [`Space::new`] takes for these arguments (the two bitmaps, the index
    /// tree and the groups' counts), without building it: for the memory estimate before a run.
    pub fn heap_estimate(blocks: u64, first_data_block: u64, blocks_per_group: u64) -> u64 {
        let words = blocks.div_ceil(64);
        let leaves = words.next_power_of_two().max(1);
        let groups = (blocks - first_data_block).div_ceil(blocks_per_group);
        2 * words * 8 + 2 * leaves * std::mem::size_of::<Node>() as u64 + groups * std::mem::size_of::<GroupFree>() as u64
    }

    pub fn new(blocks: u64, first_data_block: u64, blocks_per_group: u64) -> Self {
        let words = blocks.div_ceil(64) as usize;
        let leaves = words.next_power_of_two().max(1);
        // Blocks before the first data block (block 0 of a 1 KiB file system: the boot
        // block) belong to no group and are never free.
        let ngroups = (blocks - first_data_block).div_ceil(blocks_per_group);
        let mut s = Space {
            disk: Bits::new(blocks),
            busy: Bits::new(blocks),
            tree: vec![Node::default(); 2 * leaves],
            leaves,
            first_data_block,
            blocks_per_group,
            groups: Vec::with_capacity(ngroups as usize),
            disk_free: blocks,
        };
        for g in 0..ngroups {
            let (start, end) = s.group_range(g as u32);
            s.groups.push(GroupFree {
                free: (end - start) as u32,
                fragments: 1,
            });
        }
        for i in 0..leaves {
            s.refresh_leaf(i);
        }
        for i in (1..leaves).rev() {
            s.tree[i] = merge(s.tree[2 * i], s.tree[2 * i + 1], s.span(i) / 2);
        }
        if first_data_block > 0 {
            s.disk.set_range(0, first_data_block, true);
            s.busy.set_range(0, first_data_block, true);
            s.disk_free -= first_data_block;
            s.refresh(0, first_data_block);
        }
        s
    }

    fn span(&self, node: usize) -> u64 {
        // Blocks covered by `node` (leaves cover 64).
        let depth = usize::BITS - 1 - node.leading_zeros();
        let leaf_depth = self.leaves.trailing_zeros();
        64u64 << (leaf_depth - depth)
    }

    fn refresh_leaf(&mut self, i: usize) {
        let start = i as u64 * 64;
        let valid = self.busy.len.saturating_sub(start).min(64) as u32;
        let w = if valid == 0 { !0 } else { self.busy.words[i] };
        self.tree[self.leaves + i] = if valid == 0 {
            Node::default()
        } else {
            word_node(w, valid)
        };
    }

    /// Recomputes the index over `[start, start+len)` of `busy`.
    fn refresh(&mut self, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        let (mut lo, mut hi) = ((start / 64) as usize, ((start + len - 1) / 64) as usize);
        for i in lo..=hi {
            self.refresh_leaf(i);
        }
        lo += self.leaves;
        hi += self.leaves;
        while lo > 1 {
            lo /= 2;
            hi /= 2;
            for n in lo..=hi {
                self.tree[n] = merge(self.tree[2 * n], self.tree[2 * n + 1], self.span(n) / 2);
            }
        }
    }

    pub fn blocks(&self) -> u64 {
        self.disk.len()
    }
    pub fn group_count(&self) -> u32 {
        self.groups.len() as u32
    }
    /// `[first, end)` blocks of group `g`.
    pub fn group_range(&self, g: u32) -> (u64, u64) {
        let start = self.first_data_block + g as u64 * self.blocks_per_group;
        (start, (start + self.blocks_per_group).min(self.disk.len()))
    }
    pub fn group_of(&self, b: u64) -> u32 {
        ((b - self.first_data_block) / self.blocks_per_group) as u32
    }
    /// The allocator's free blocks and fragments in group `g`.
    pub fn group_free(&self, g: u32) -> GroupFree {
        self.groups[g as usize]
    }
    /// Free blocks on disk in the whole file system.
    pub fn disk_free(&self) -> u64 {
        self.disk_free
    }
    /// Free blocks on disk in group `g`.
    pub fn disk_free_in_group(&self, g: u32) -> u64 {
        let (s, e) = self.group_range(g);
        (e - s) - self.disk.count_ones(s, e - s)
    }
    pub fn is_disk_used(&self, b: u64) -> bool {
        self.disk.get(b)
    }
    pub fn is_busy(&self, b: u64) -> bool {
        self.busy.get(b)
    }
    pub fn disk_bits(&self) -> &Bits {
        &self.disk
    }

    /// Marks `[start, start+len)` busy or not in the allocator's view, keeping group counts.
    /// Every block of the range must currently be the opposite.
    fn set_busy(&mut self, start: u64, len: u64, busy: bool) {
        let mut s = start;
        let end = start + len;
        while s < end {
            let g = self.group_of(s);
            let (gs, ge) = self.group_range(g);
            let e = end.min(ge);
            debug_assert!(
                self.busy.all(s, e - s, !busy),
                "blocks {s}..{e} are not all {}",
                if busy { "free" } else { "busy" }
            );
            let left_free = s > gs && !self.busy.get(s - 1);
            let right_free = e < ge && !self.busy.get(e);
            let gf = &mut self.groups[g as usize];
            if busy {
                gf.free -= (e - s) as u32;
                match (left_free, right_free) {
                    (true, true) => gf.fragments += 1,
                    (false, false) => gf.fragments -= 1,
                    _ => {}
                }
            } else {
                gf.free += (e - s) as u32;
                match (left_free, right_free) {
                    (true, true) => gf.fragments -= 1,
                    (false, false) => gf.fragments += 1,
                    _ => {}
                }
            }
            self.busy.set_range(s, e - s, busy);
            s = e;
        }
        self.refresh(start, len);
    }

    /// Takes a free run for good: used on disk and busy.
    pub fn take(&mut self, start: u64, len: u64) {
        self.set_busy(start, len, true);
        debug_assert!(self.disk.all(start, len, false));
        self.disk.set_range(start, len, true);
        self.disk_free -= len;
    }
    /// Holds a free run for a preallocation: busy, still free on disk.
    pub fn hold(&mut self, start: u64, len: u64) {
        self.set_busy(start, len, true);
    }
    /// Uses held blocks: now used on disk too.
    pub fn use_held(&mut self, start: u64, len: u64) {
        debug_assert!(self.busy.all(start, len, true) && self.disk.all(start, len, false));
        self.disk.set_range(start, len, true);
        self.disk_free -= len;
    }
    /// Gives back held, unused blocks.
    pub fn unhold(&mut self, start: u64, len: u64) {
        debug_assert!(self.disk.all(start, len, false));
        self.set_busy(start, len, false);
    }
    /// Frees blocks used on disk.
    pub fn free(&mut self, start: u64, len: u64) {
        debug_assert!(
            self.disk.all(start, len, true),
            "freeing blocks {start}+{len} that are not all used"
        );
        self.disk.set_range(start, len, false);
        self.disk_free += len;
        self.set_busy(start, len, false);
    }

    /// The first start `s >= from`, `s < limit`, with `[s, s+len)` free in the allocator's view.
    pub fn first_fit(&self, from: u64, len: u32, limit: u64) -> Option<u64> {
        if from >= self.blocks() || len == 0 {
            return None;
        }
        let mut run = 0u32;
        self.descend(1, 0, from, len, &mut run)
            .filter(|&s| s < limit)
    }

    /// Search in `node` (covering blocks from `base`), counting free blocks only from `from`,
    /// with `run` free blocks (all at or after `from`) ending just before the node.
    fn descend(&self, node: usize, base: u64, from: u64, len: u32, run: &mut u32) -> Option<u64> {
        let span = self.span(node);
        if base + span <= from {
            return None;
        }
        let n = self.tree[node];
        if base >= from {
            // The node lies wholly at or after `from`.
            if *run + n.pre >= len {
                return Some(base - *run as u64);
            }
            if n.best < len && (n.pre as u64) < span {
                *run = n.suf;
                return None;
            }
            if n.pre as u64 == span {
                *run += n.pre;
                return None;
            }
        }
        if node >= self.leaves {
            // A leaf word: walk its bits.
            let w = self
                .busy
                .words
                .get(node - self.leaves)
                .copied()
                .unwrap_or(!0);
            let valid = self.busy.len.saturating_sub(base).min(64);
            for i in 0..64u64 {
                let b = base + i;
                if b < from {
                    continue;
                }
                let used = i >= valid || (w >> i) & 1 == 1;
                if used {
                    *run = 0;
                } else {
                    *run += 1;
                    if *run >= len {
                        return Some(b + 1 - *run as u64);
                    }
                }
            }
            return None;
        }
        let half = span / 2;
        self.descend(2 * node, base, from, len, run)
            .or_else(|| self.descend(2 * node + 1, base + half, from, len, run))
    }

    /// The first free block at or after `from` and before `limit`.
    pub fn next_free(&self, from: u64, limit: u64) -> Option<u64> {
        self.first_fit(from, 1, limit)
    }
    /// The end of the free run starting at `b` (first busy block after it), at most `limit`.
    pub fn run_end(&self, b: u64, limit: u64) -> u64 {
        self.busy.next_set(b, limit.min(self.blocks()))
    }
    /// The longest free run inside `[start, end)`.
    pub fn longest_in(&self, start: u64, end: u64) -> u32 {
        let mut best = 0;
        let mut b = start;
        // Runs of at least `best + 1` blocks, found by descent; few steps per call.
        while let Some(s) = self.first_fit(b, best + 1, end) {
            let e = self.run_end(s, end);
            best = best.max((e - s) as u32);
            b = e;
        }
        best
    }

    /// Heap bytes of the bitmaps and the index.
    pub fn heap_bytes(&self) -> usize {
        self.disk.heap_bytes()
            + self.busy.heap_bytes()
            + self.tree.capacity() * std::mem::size_of::<Node>()
            + self.groups.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_first_fit(busy: &[bool], from: u64, len: u32) -> Option<u64> {
        (from as usize..busy.len())
            .find(|&s| {
                s + len as usize <= busy.len() && busy[s..s + len as usize].iter().all(|b| !b)
            })
            .map(|s| s as u64)
    }

    #[test]
    fn word_node_counts_runs() {
        let n = word_node(0b1000_0110, 64);
        assert_eq!((n.pre, n.suf, n.best), (1, 56, 56));
        let n = word_node(!0 ^ (0b111 << 10), 64);
        assert_eq!((n.pre, n.suf, n.best), (0, 0, 3));
        let n = word_node(0, 10);
        assert_eq!((n.pre, n.suf, n.best), (10, 0, 10));
    }

    #[test]
    fn merging_halves_of_more_than_2_pow_31_blocks_keeps_the_runs() {
        // Below the root of a file system past 2^31 blocks (8 TiB at 4 KiB) each half spans
        // 2^31 blocks: a free left half and a right half starting with 100 free blocks make
        // a run of 2^31 + 100 (a u32 span wrapped to 0 at the root, and no fit was found).
        let span = 1u64 << 31;
        let full = Node { pre: span as u32, suf: span as u32, best: span as u32 };
        let right = Node { pre: 100, suf: 7, best: 5000 };
        let m = merge(full, right, span);
        assert_eq!((m.pre, m.suf, m.best), ((span + 100) as u32, 7, (span + 100) as u32));
        let m = merge(right, full, span);
        assert_eq!((m.pre, m.suf, m.best), (100, (span + 7) as u32, (span + 7) as u32));
        // The root of 2^26 leaves spans 2^32 blocks.
        let s = Space { leaves: 1 << 26, ..Space::new(64, 0, 64) };
        assert_eq!(s.span(1), 1 << 32);
        assert_eq!(s.span(1 << 26), 64);
    }

    #[test]
    fn heap_estimate_is_what_new_takes() {
        for (blocks, first, per_group) in [(1000, 1, 256), (8193 * 64, 0, 32768), (262_144, 1, 8192), (64, 0, 32768)] {
            assert_eq!(Space::new(blocks, first, per_group).heap_bytes() as u64, Space::heap_estimate(blocks, first, per_group), "{blocks} blocks");
        }
    }

    #[test]
    fn first_fit_agrees_with_a_scan() {
        let mut s = Space::new(1000, 1, 256);
        let mut shadow = vec![false; 1000];
        shadow[0] = true;
        let mut x: u64 = 12345;
        for step in 0..400 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let start = (x >> 33) % 1000;
            let len = 1 + (x >> 20) % 20;
            let len = len.min(1000 - start);
            let runs: Vec<(u64, u64)> = {
                // Toggle the maximal sub-runs that are uniformly free or used.
                let mut v = vec![];
                let mut i = start;
                while i < start + len {
                    let val = shadow[i as usize];
                    let mut j = i;
                    while j < start + len && shadow[j as usize] == val {
                        j += 1;
                    }
                    v.push((i, j - i));
                    i = j;
                }
                v
            };
            for (a, l) in runs {
                if a == 0 {
                    continue;
                }
                if shadow[a as usize] {
                    s.free(a, l);
                } else {
                    s.take(a, l);
                }
                for k in a..a + l {
                    shadow[k as usize] = !shadow[k as usize];
                }
            }
            for q in 0..20u64 {
                let from = (q * 53 + step) % 1000;
                let len = 1 + (q as u32 * 7) % 30;
                assert_eq!(
                    s.first_fit(from, len, u64::MAX),
                    brute_first_fit(&shadow, from, len),
                    "from {from} len {len}"
                );
            }
            // Group counts agree with the bitmap.
            for g in 0..s.group_count() {
                let (gs, ge) = s.group_range(g);
                let free = (gs..ge).filter(|&b| !shadow[b as usize]).count() as u32;
                let frags = (gs..ge)
                    .filter(|&b| !shadow[b as usize] && (b == gs || shadow[b as usize - 1]))
                    .count() as u32;
                assert_eq!(
                    (s.group_free(g).free, s.group_free(g).fragments),
                    (free, frags),
                    "group {g}"
                );
            }
        }
    }
}
