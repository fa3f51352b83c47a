//! Inodes: a compact record per live inode, its block map (the file's physical runs and its
//! extent-tree or indirect blocks), the inode bitmap, and the choice of an inode's group as
//! `fs/ext4/ialloc.c` makes it (`find_group_orlov`, `find_group_other`) and 2008's
//! `fs/ext3/ialloc.c` did (the same Orlov for directories without flex groups;
//! `find_group_other` with its quadratic probe for files).

use super::layout::FsConfig;
use super::space::Bits;

/// An inode number (1-based, as on disk).
pub type Ino = u32;

/// One physical run of a file: `len` blocks from logical `logical` at physical `phys`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Extent {
    pub logical: u32,
    pub len: u32,
    pub phys: u64,
}

impl Extent {
    pub fn logical_end(&self) -> u32 {
        self.logical + self.len
    }
    pub fn phys_end(&self) -> u64 {
        self.phys + self.len as u64
    }
}

/// A mapping block of a file: an ext4 extent-tree block or an ext3 indirect block. `key`
/// names its place in the tree (see `alloc::ind_path` and `extent_leaf_key`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetaBlock {
    pub key: u64,
    pub phys: u64,
}

/// What an inode is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Free,
    File,
    Dir,
    /// Reserved inodes (1–10: bad blocks, root's neighbours, resize, journal).
    Reserved,
}

/// The block map: one run inline (most small files), else on the heap with the mapping
/// blocks. Runs are sorted by logical block and never overlap.
#[derive(Clone, Debug)]
pub enum BlockMap {
    Inline(Extent),
    Heap(Box<MapHeap>),
}

#[derive(Clone, Debug, Default)]
pub struct MapHeap {
    pub extents: Vec<Extent>,
    pub meta: Vec<MetaBlock>,
}

impl Default for BlockMap {
    fn default() -> Self {
        BlockMap::Inline(Extent::default())
    }
}

impl BlockMap {
    pub fn extents(&self) -> &[Extent] {
        match self {
            BlockMap::Inline(e) if e.len == 0 => &[],
            BlockMap::Inline(e) => std::slice::from_ref(e),
            BlockMap::Heap(h) => &h.extents,
        }
    }
    pub fn meta(&self) -> &[MetaBlock] {
        match self {
            BlockMap::Inline(_) => &[],
            BlockMap::Heap(h) => &h.meta,
        }
    }
    fn heap(&mut self) -> &mut MapHeap {
        if let BlockMap::Inline(e) = *self {
            let extents = if e.len == 0 { vec![] } else { vec![e] };
            *self = BlockMap::Heap(Box::new(MapHeap {
                extents,
                meta: vec![],
            }));
        }
        match self {
            BlockMap::Heap(h) => h,
            BlockMap::Inline(_) => unreachable!(),
        }
    }
    /// Back inline when one run and no mapping blocks are left.
    fn compact(&mut self) {
        if let BlockMap::Heap(h) = self {
            if h.meta.is_empty() && h.extents.len() <= 1 {
                *self = BlockMap::Inline(h.extents.first().copied().unwrap_or_default());
            }
        }
    }
    pub fn blocks(&self) -> u64 {
        self.extents().iter().map(|e| e.len as u64).sum()
    }
    /// The physical block of `l`, if mapped.
    pub fn map(&self, l: u32) -> Option<u64> {
        let ex = self.extents();
        let i = ex.partition_point(|e| e.logical_end() <= l);
        ex.get(i)
            .filter(|e| e.logical <= l)
            .map(|e| e.phys + (l - e.logical) as u64)
    }
    /// The run at or before logical `l` (mballoc's left neighbour) and after it (right).
    pub fn neighbours(&self, l: u32) -> (Option<Extent>, Option<Extent>) {
        let ex = self.extents();
        let i = ex.partition_point(|e| e.logical_end() <= l);
        let left = if i > 0 { Some(ex[i - 1]) } else { None };
        (left, ex.get(i).copied())
    }
    /// Adds a run over unmapped blocks, merging with contiguous neighbours while the merged
    /// run stays within `max_len` blocks. Returns the index of the run that holds it.
    pub fn insert(&mut self, e: Extent, max_len: u32) -> usize {
        debug_assert!(e.len > 0);
        if let BlockMap::Inline(x) = self {
            if x.len == 0 {
                *x = e;
                return 0;
            }
            if x.logical_end() == e.logical && x.phys_end() == e.phys && x.len + e.len <= max_len {
                x.len += e.len;
                return 0;
            }
        }
        let h = self.heap();
        let i = h.extents.partition_point(|x| x.logical < e.logical);
        if i > 0 {
            let l = &mut h.extents[i - 1];
            debug_assert!(l.logical_end() <= e.logical);
            if l.logical_end() == e.logical && l.phys_end() == e.phys && l.len + e.len <= max_len {
                l.len += e.len;
                // Also join the right neighbour if now contiguous.
                if i < h.extents.len() {
                    let (a, b) = (h.extents[i - 1], h.extents[i]);
                    if a.logical_end() == b.logical
                        && a.phys_end() == b.phys
                        && a.len + b.len <= max_len
                    {
                        h.extents[i - 1].len += b.len;
                        h.extents.remove(i);
                    }
                }
                self.compact();
                return i - 1;
            }
        }
        if i < h.extents.len() {
            let r = &mut h.extents[i];
            debug_assert!(e.logical_end() <= r.logical);
            if e.logical_end() == r.logical && e.phys_end() == r.phys && e.len + r.len <= max_len {
                r.logical = e.logical;
                r.phys = e.phys;
                r.len += e.len;
                self.compact();
                return i;
            }
        }
        h.extents.insert(i, e);
        self.compact();
        i
    }
    /// Removes every run from logical `from` on; returns the freed physical runs.
    pub fn cut_from(&mut self, from: u32) -> Vec<(u64, u64)> {
        let mut freed = vec![];
        match self {
            BlockMap::Inline(e) => {
                if e.len > 0 && e.logical_end() > from {
                    let keep = from.saturating_sub(e.logical);
                    freed.push((e.phys + keep as u64, (e.len - keep) as u64));
                    if keep == 0 {
                        *e = Extent::default();
                    } else {
                        e.len = keep;
                    }
                }
            }
            BlockMap::Heap(h) => {
                let i = h.extents.partition_point(|e| e.logical_end() <= from);
                let removed: Vec<Extent> = h.extents.drain(i..).collect();
                for e in removed {
                    let keep = from.saturating_sub(e.logical);
                    freed.push((e.phys + keep as u64, (e.len - keep) as u64));
                    if keep > 0 {
                        // Only the first removed run can straddle `from`.
                        h.extents.push(Extent { len: keep, ..e });
                    }
                }
            }
        }
        self.compact();
        freed
    }
    pub fn add_meta(&mut self, m: MetaBlock) {
        self.heap().meta.push(m);
    }
    /// Removes the mapping blocks `keep` rejects; returns their physical blocks.
    pub fn drop_meta(&mut self, keep: impl Fn(&MetaBlock) -> bool) -> Vec<u64> {
        let mut out = vec![];
        if let BlockMap::Heap(h) = self {
            h.meta.retain(|m| {
                let k = keep(m);
                if !k {
                    out.push(m.phys);
                }
                k
            });
        }
        self.compact();
        out
    }
    pub fn heap_bytes(&self) -> usize {
        match self {
            BlockMap::Inline(_) => 0,
            BlockMap::Heap(h) => {
                std::mem::size_of::<MapHeap>() + h.extents.capacity() * 16 + h.meta.capacity() * 16
            }
        }
    }
}

/// One live inode: 40 bytes.
#[derive(Clone, Debug)]
pub struct Inode {
    /// `i_size` in bytes.
    pub size: u64,
    pub map: BlockMap,
    pub mode: Mode,
}

impl Inode {
    fn free() -> Self {
        Inode {
            size: 0,
            map: BlockMap::default(),
            mode: Mode::Free,
        }
    }
}

/// Per-group inode counts, as the group descriptors keep them.
#[derive(Clone, Copy, Debug, Default)]
pub struct GroupInodes {
    pub free: u32,
    pub dirs: u32,
}

/// All inodes: the bitmap, the descriptors' counts, and the live inodes, stored per group
/// in a vector as long as the group's highest inode in use (inodes are taken lowest first,
/// so the vectors stay dense).
#[derive(Clone, Debug)]
pub struct InodeTable {
    ipg: u32,
    bitmap: Bits,
    groups: Vec<GroupInodes>,
    slots: Vec<Vec<Inode>>,
}

impl InodeTable {
    pub fn new(cfg: &FsConfig) -> Self {
        InodeTable {
            ipg: cfg.inodes_per_group,
            bitmap: Bits::new(cfg.inodes()),
            groups: vec![
                GroupInodes {
                    free: cfg.inodes_per_group,
                    dirs: 0
                };
                cfg.groups as usize
            ],
            slots: vec![Vec::new(); cfg.groups as usize],
        }
    }
    pub fn group_of(&self, ino: Ino) -> u32 {
        (ino - 1) / self.ipg
    }
    pub fn index_in_group(&self, ino: Ino) -> u32 {
        (ino - 1) % self.ipg
    }
    pub fn group(&self, g: u32) -> GroupInodes {
        self.groups[g as usize]
    }
    pub fn free_total(&self) -> u64 {
        self.groups.iter().map(|g| g.free as u64).sum()
    }
    pub fn dirs_total(&self) -> u64 {
        self.groups.iter().map(|g| g.dirs as u64).sum()
    }
    pub fn is_used(&self, ino: Ino) -> bool {
        ino >= 1 && (ino as u64) <= self.bitmap.len() && self.bitmap.get(ino as u64 - 1)
    }
    pub fn get(&self, ino: Ino) -> Option<&Inode> {
        if !self.is_used(ino) {
            return None;
        }
        self.slots[self.group_of(ino) as usize].get(self.index_in_group(ino) as usize)
    }
    pub fn get_mut(&mut self, ino: Ino) -> Option<&mut Inode> {
        if !self.is_used(ino) {
            return None;
        }
        let (g, i) = (self.group_of(ino), self.index_in_group(ino));
        self.slots[g as usize].get_mut(i as usize)
    }
    /// Takes inode `ino` (must be free).
    pub fn take(&mut self, ino: Ino, mode: Mode) {
        debug_assert!(!self.is_used(ino));
        let (g, i) = (
            self.group_of(ino) as usize,
            self.index_in_group(ino) as usize,
        );
        self.bitmap.set(ino as u64 - 1, true);
        self.groups[g].free -= 1;
        if mode == Mode::Dir {
            self.groups[g].dirs += 1;
        }
        let v = &mut self.slots[g];
        if v.len() <= i {
            v.resize_with(i + 1, Inode::free);
        }
        v[i] = Inode {
            size: 0,
            map: BlockMap::default(),
            mode,
        };
    }
    /// Frees inode `ino`, returning its record.
    pub fn release(&mut self, ino: Ino) -> Inode {
        let (g, i) = (
            self.group_of(ino) as usize,
            self.index_in_group(ino) as usize,
        );
        debug_assert!(self.is_used(ino));
        self.bitmap.set(ino as u64 - 1, false);
        self.groups[g].free += 1;
        let v = &mut self.slots[g];
        let old = std::mem::replace(&mut v[i], Inode::free());
        if old.mode == Mode::Dir {
            self.groups[g].dirs -= 1;
        }
        while v.last().is_some_and(|x| x.mode == Mode::Free) {
            v.pop();
        }
        old
    }
    /// The lowest free inode of group `g` (`find_inode_bit`).
    pub fn first_free_in(&self, g: u32) -> Option<Ino> {
        let start = g as u64 * self.ipg as u64;
        self.bitmap
            .next_clear(start, start + self.ipg as u64)
            .map(|b| b as Ino + 1)
    }
    /// Every live inode number, in order.
    pub fn live(&self) -> impl Iterator<Item = Ino> + '_ {
        self.slots.iter().enumerate().flat_map(move |(g, v)| {
            v.iter()
                .enumerate()
                .filter(|(_, x)| x.mode != Mode::Free)
                .map(move |(i, _)| (g as u32 * self.ipg + i as u32 + 1) as Ino)
        })
    }
    pub fn heap_bytes(&self) -> usize {
        self.bitmap.heap_bytes()
            + self.groups.capacity() * 8
            + self
                .slots
                .iter()
                .map(|v| {
                    v.capacity() * std::mem::size_of::<Inode>()
                        + v.iter().map(|x| x.map.heap_bytes()).sum::<usize>()
                })
                .sum::<usize>()
    }
}

/// What the group choice needs to know of the file system.
pub struct GroupView<'a> {
    pub cfg: &'a FsConfig,
    pub inodes: &'a InodeTable,
    /// Free blocks of a group, as its descriptor says.
    pub free_blocks: &'a dyn Fn(u32) -> u64,
}

/// Orlov statistics of a flex group (`get_orlov_stats`).
struct Stats {
    free_inodes: u64,
    free_blocks: u64,
    dirs: u64,
}

impl GroupView<'_> {
    fn stats(&self, fg: u32, flex: u32) -> Stats {
        let mut s = Stats {
            free_inodes: 0,
            free_blocks: 0,
            dirs: 0,
        };
        for g in fg * flex..((fg + 1) * flex).min(self.cfg.groups) {
            let gi = self.inodes.group(g);
            s.free_inodes += gi.free as u64;
            s.free_blocks += (self.free_blocks)(g);
            s.dirs += gi.dirs as u64;
        }
        s
    }
    fn first_group_with_inodes(&self, fg: u32, flex: u32) -> Option<u32> {
        (fg * flex..((fg + 1) * flex).min(self.cfg.groups)).find(|&g| self.inodes.group(g).free > 0)
    }

    /// `find_group_orlov`: a directory's group. Top-level directories (`top`) go to the flex
    /// group, from a start given by `name_hash` (the kernel hashes the name with the file
    /// system's seed), with the fewest directories among those with at least average free
    /// inodes and blocks; others near `parent_group` while it has room.
    pub fn orlov(&self, parent_group: u32, top: bool, name_hash: u32) -> Option<u32> {
        let flex = self.cfg.flex_bg_size.max(1);
        let real = self.cfg.groups;
        let ngroups = real.div_ceil(flex);
        let freei = self.inodes.free_total();
        let freeb: u64 = (0..real).map(|g| (self.free_blocks)(g)).sum();
        let avefreei = freei / ngroups as u64;
        let avefreeb = freeb / ngroups as u64;
        let ndirs = self.inodes.dirs_total();
        let found = |fg: u32| -> Option<u32> {
            if flex == 1 {
                Some(fg)
            } else {
                self.first_group_with_inodes(fg, flex)
            }
        };
        if top {
            let start = name_hash % ngroups;
            let mut best: Option<(u32, u64)> = None;
            for i in 0..ngroups {
                let g = (start + i) % ngroups;
                let s = self.stats(g, flex);
                if s.free_inodes == 0 || s.free_inodes < avefreei || s.free_blocks < avefreeb {
                    continue;
                }
                if best.is_none_or(|(_, d)| s.dirs < d) {
                    best = Some((g, s.dirs));
                }
            }
            if let Some(g) = best.and_then(|(g, _)| found(g)) {
                return Some(g);
            }
        } else {
            let ipg = self.cfg.inodes_per_group as u64 * flex as u64;
            let max_dirs = ndirs / ngroups as u64 + ipg / 16;
            let min_inodes = avefreei.saturating_sub(ipg / 4).max(1);
            let min_blocks = avefreeb.saturating_sub(self.cfg.blocks_per_group * flex as u64 / 4);
            let pg = parent_group / flex;
            for i in 0..ngroups {
                let g = (pg + i) % ngroups;
                let s = self.stats(g, flex);
                if s.dirs >= max_dirs || s.free_inodes < min_inodes || s.free_blocks < min_blocks {
                    continue;
                }
                if let Some(g) = found(g) {
                    return Some(g);
                }
                break;
            }
        }
        // Fallback: the first group from the parent's with at least average free inodes,
        // then any with one.
        let ave = freei / real as u64;
        for bar in [ave.max(1), 1] {
            for i in 0..real {
                let g = (parent_group + i) % real;
                if self.inodes.group(g).free as u64 >= bar {
                    return Some(g);
                }
            }
        }
        None
    }

    /// `find_group_other`: a file's group. With flex_bg (ext4): the first group of the
    /// parent's flex group with a free inode, else Orlov from the next flex group. Without
    /// (ext3): the parent's group if it has free inodes and blocks, else a quadratic probe
    /// from a start hashed by the parent's inode number, else any group with a free inode.
    pub fn other(&self, parent_group: u32, parent_ino: Ino) -> Option<u32> {
        let flex = self.cfg.flex_bg_size.max(1);
        let n = self.cfg.groups;
        if flex > 1 {
            let fg = parent_group / flex;
            if let Some(g) = self.first_group_with_inodes(fg, flex) {
                return Some(g);
            }
            let next = ((fg + 1) * flex) % n;
            return self.orlov(next, false, 0);
        }
        let ok = |g: u32| self.inodes.group(g).free > 0 && (self.free_blocks)(g) > 0;
        if ok(parent_group) {
            return Some(parent_group);
        }
        let mut g = (parent_group + parent_ino) % n;
        let mut i = 1;
        while i < n {
            g = (g + i) % n;
            if ok(g) {
                return Some(g);
            }
            i <<= 1;
        }
        let mut g = parent_group;
        for _ in 0..n {
            g = (g + 1) % n;
            if self.inodes.group(g).free > 0 {
                return Some(g);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_map_merges_and_cuts() {
        let mut m = BlockMap::default();
        assert_eq!(std::mem::size_of::<Inode>(), 40);
        m.insert(
            Extent {
                logical: 0,
                len: 4,
                phys: 100,
            },
            32768,
        );
        m.insert(
            Extent {
                logical: 4,
                len: 4,
                phys: 104,
            },
            32768,
        );
        assert!(matches!(m, BlockMap::Inline(_)));
        assert_eq!(
            m.extents(),
            &[Extent {
                logical: 0,
                len: 8,
                phys: 100
            }]
        );
        m.insert(
            Extent {
                logical: 10,
                len: 2,
                phys: 50,
            },
            32768,
        );
        m.insert(
            Extent {
                logical: 8,
                len: 2,
                phys: 200,
            },
            32768,
        );
        assert_eq!(m.extents().len(), 3);
        assert_eq!(m.map(9), Some(201));
        assert_eq!(m.map(12), None);
        let freed = m.cut_from(6);
        assert_eq!(freed, vec![(106, 2), (200, 2), (50, 2)]);
        assert_eq!(
            m.extents(),
            &[Extent {
                logical: 0,
                len: 6,
                phys: 100
            }]
        );
        assert!(matches!(m, BlockMap::Inline(_)));
    }
}
