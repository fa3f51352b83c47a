//! Directories: which blocks hold which entries, so that every insert and unlink names the
//! block it changes. Entries are `ext4_dir_entry_2` (8 bytes and the name, rounded up to 4);
//! a linear directory puts an entry in its first block with room and grows by a block when
//! none has any; once its first block is full (with `dir_index`) it becomes an htree
//! (`make_indexed_dir`, `fs/ext4/namei.c`): block 0 the root, leaves holding hash ranges; a
//! full leaf splits (`do_split`), about half its bytes moving to a new block.
//!
//! Modelled, not ported: the hash is the name's 64-bit FNV-1a (its top 31 bits play
//! half-MD4's 32-bit hash with the low bit clear), not ext4's seeded half-MD4; a block's
//! room is its free byte count (the kernel needs one gap that large; deleted entries join
//! their neighbours, so the difference is small); with more leaves than the root can index,
//! index nodes are counted and placed as a second level, node `i` indexing leaves `i*n..`,
//! rather than split as the kernel splits them. A name is kept only as its 64-bit hash:
//! two names of one directory with the same hash are taken as one (`AlreadyExists`).

use super::inode::Ino;

/// The 64-bit FNV-1a hash of a name: its identity in the model.
pub fn name_key(name: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The htree hash of a name key (31 bits, low bit clear as in `ext4fs_dirhash`).
pub fn htree_hash(key: u64) -> u32 {
    ((key >> 32) as u32) & !1
}

/// `EXT4_DIR_REC_LEN`: 8 bytes and the name, rounded up to 4.
pub fn rec_len(name_len: usize) -> u16 {
    ((8 + name_len + 3) & !3) as u16
}

/// The name is in the directory already.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameExists;

/// One entry: 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub key: u64,
    pub ino: Ino,
    pub rec: u16,
}

/// A block of entries: a leaf of the htree, or a block of a linear directory.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// Logical block in the directory.
    pub block: u32,
    /// Lowest hash this leaf holds (htree).
    pub hash_lo: u32,
    /// Bytes taken by entries.
    pub used: u16,
    pub entries: Vec<DirEntry>,
}

/// What an insert or removal changed: the directory's logical blocks written, and how many
/// blocks it grew by (appended at its end).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirChange {
    pub dirty: Vec<u32>,
    pub grew: u32,
}

/// Sizes of a directory block's parts.
#[derive(Clone, Copy, Debug)]
pub struct DirGeometry {
    pub block_size: u32,
    /// `ext4_dir_entry_tail` (12 bytes) with metadata_csum; `dx_tail` (8) in index blocks.
    pub csum: bool,
    pub dir_index: bool,
}

impl DirGeometry {
    fn leaf_room(&self) -> u16 {
        (self.block_size - if self.csum { 12 } else { 0 }) as u16
    }
    /// Entries the htree root holds: the block less `.`, `..` (12 each), the root info (8).
    fn root_limit(&self) -> usize {
        ((self.block_size - 32 - if self.csum { 8 } else { 0 }) / 8) as usize
    }
    fn node_limit(&self) -> usize {
        ((self.block_size - 8 - if self.csum { 8 } else { 0 }) / 8) as usize
    }
}

/// A directory's entries by block.
#[derive(Clone, Debug)]
pub struct Dir {
    /// Linear: by block. Indexed: by `hash_lo`, the root (block 0) not among them.
    pub leaves: Vec<Leaf>,
    pub indexed: bool,
    /// Logical blocks of the second-level index nodes.
    pub nodes: Vec<u32>,
    pub blocks: u32,
    /// The group its last child inode went to (`i_last_alloc_group`).
    pub last_alloc_group: Option<u32>,
}

impl Dir {
    /// A new directory: one block with `.` and `..`.
    pub fn new() -> Self {
        Dir {
            leaves: vec![Leaf {
                block: 0,
                hash_lo: 0,
                used: 24,
                entries: vec![],
            }],
            indexed: false,
            nodes: vec![],
            blocks: 1,
            last_alloc_group: None,
        }
    }

    pub fn len(&self) -> usize {
        self.leaves.iter().map(|l| l.entries.len()).sum()
    }
    pub fn is_empty(&self) -> bool {
        self.leaves.iter().all(|l| l.entries.is_empty())
    }
    pub fn entries(&self) -> impl Iterator<Item = &DirEntry> {
        self.leaves.iter().flat_map(|l| l.entries.iter())
    }

    fn leaf_for(&self, key: u64) -> usize {
        if !self.indexed {
            return 0;
        }
        let h = htree_hash(key);
        self.leaves
            .partition_point(|l| l.hash_lo <= h)
            .saturating_sub(1)
    }

    /// Where `key` is: leaf index and entry index.
    fn find(&self, key: u64) -> Option<(usize, usize)> {
        if self.indexed {
            let li = self.leaf_for(key);
            // Equal hashes may continue into the next leaves.
            for i in li..self.leaves.len() {
                if i > li && self.leaves[i].hash_lo > htree_hash(key) {
                    break;
                }
                if let Some(e) = self.leaves[i].entries.iter().position(|e| e.key == key) {
                    return Some((i, e));
                }
            }
            return None;
        }
        self.leaves
            .iter()
            .enumerate()
            .find_map(|(i, l)| l.entries.iter().position(|e| e.key == key).map(|e| (i, e)))
    }

    pub fn lookup(&self, key: u64) -> Option<Ino> {
        self.find(key).map(|(l, e)| self.leaves[l].entries[e].ino)
    }

    /// The index block that points at leaf `li` (the root, or its node).
    fn index_block_of(&self, li: usize, g: &DirGeometry) -> u32 {
        if self.nodes.is_empty() {
            0
        } else {
            self.nodes[(li / g.node_limit()).min(self.nodes.len() - 1)]
        }
    }

    /// The logical blocks a lookup of `key` reads, in order (`ext4_find_entry`): in an
    /// indexed directory the root, the index node over the leaf, and the leaf the hash
    /// leads to (`ext4_dx_find_entry`; a name that is absent ends there too); in a linear
    /// one every block up to the one holding it, all of them for an absent name.
    pub fn lookup_blocks(&self, key: u64, g: &DirGeometry) -> Vec<u32> {
        if self.indexed {
            let li = self.leaf_for(key);
            let mut out = vec![0];
            let node = self.index_block_of(li, g);
            if node != 0 {
                out.push(node);
            }
            out.push(self.leaves[li].block);
            return out;
        }
        let upto = self.find(key).map_or(self.leaves.len(), |(li, _)| li + 1);
        self.leaves[..upto].iter().map(|l| l.block).collect()
    }

    /// Whether an entry of `name_len` fits without the directory growing.
    pub fn has_room(&self, key: u64, name_len: usize, g: &DirGeometry) -> bool {
        let (rec, room) = (rec_len(name_len), g.leaf_room());
        if self.indexed {
            self.leaves[self.leaf_for(key)].used + rec <= room
        } else {
            self.leaves.iter().any(|l| l.used + rec <= room)
        }
    }

    /// Adds an entry. Fails if the name is there already.
    pub fn insert(
        &mut self,
        key: u64,
        ino: Ino,
        name_len: usize,
        g: &DirGeometry,
    ) -> Result<DirChange, NameExists> {
        if self.find(key).is_some() {
            return Err(NameExists);
        }
        let rec = rec_len(name_len);
        let room = g.leaf_room();
        let entry = DirEntry { key, ino, rec };
        let mut ch = DirChange::default();
        let mut converted = false;
        if !self.indexed {
            if let Some(l) = self.leaves.iter_mut().find(|l| l.used + rec <= room) {
                l.used += rec;
                l.entries.push(entry);
                ch.dirty.push(l.block);
                return Ok(ch);
            }
            if !g.dir_index || self.blocks > 1 {
                // A linear directory grows by a block.
                let block = self.blocks;
                self.blocks += 1;
                ch.grew = 1;
                self.leaves.push(Leaf {
                    block,
                    hash_lo: 0,
                    used: rec,
                    entries: vec![entry],
                });
                ch.dirty.push(block);
                return Ok(ch);
            }
            // make_indexed_dir: block 0 becomes the root; its entries move to block 1,
            // which splits into block 2.
            let mut entries = std::mem::take(&mut self.leaves[0].entries);
            entries.sort_by_key(|e| (htree_hash(e.key), e.key));
            let used: u16 = entries.iter().map(|e| e.rec).sum();
            self.leaves = vec![Leaf {
                block: 1,
                hash_lo: 0,
                used,
                entries,
            }];
            self.indexed = true;
            self.blocks = 2;
            ch.grew = 1;
            ch.dirty.extend([0, 1]);
            converted = true;
        }
        let mut li = self.leaf_for(key);
        if converted || self.leaves[li].used + rec > room {
            // do_split: move the top of the leaf, by hash, until half its bytes.
            let new_block = self.blocks;
            self.blocks += 1;
            ch.grew += 1;
            let leaf = &mut self.leaves[li];
            leaf.entries.sort_by_key(|e| (htree_hash(e.key), e.key));
            let mut moved_bytes = 0u32;
            let mut split = leaf.entries.len();
            while split > 1
                && moved_bytes + leaf.entries[split - 1].rec as u32 / 2 <= room as u32 / 2
            {
                split -= 1;
                moved_bytes += leaf.entries[split].rec as u32;
            }
            let upper: Vec<DirEntry> = leaf.entries.split_off(split);
            leaf.used -= moved_bytes as u16;
            let mut hash_lo = htree_hash(upper[0].key);
            if hash_lo == htree_hash(leaf.entries.last().map_or(0, |e| e.key)) {
                hash_lo |= 1; // continuation: the same hash on both sides
            }
            let old_block = leaf.block;
            self.leaves.insert(
                li + 1,
                Leaf {
                    block: new_block,
                    hash_lo,
                    used: moved_bytes as u16,
                    entries: upper,
                },
            );
            ch.dirty.extend([old_block, new_block]);
            // The index gains an entry: a second level when the root is full, a new node
            // when the nodes are.
            let leaves = self.leaves.len();
            let nodes_needed = if leaves <= g.root_limit() {
                0
            } else {
                leaves.div_ceil(g.node_limit())
            };
            while self.nodes.len() < nodes_needed {
                let b = self.blocks;
                self.blocks += 1;
                ch.grew += 1;
                self.nodes.push(b);
                ch.dirty.push(b);
            }
            ch.dirty.push(self.index_block_of(li, g));
            ch.dirty.push(0);
            if htree_hash(key) >= self.leaves[li + 1].hash_lo & !1 {
                li += 1;
            }
        }
        let leaf = &mut self.leaves[li];
        leaf.used += rec;
        leaf.entries.push(entry);
        ch.dirty.push(leaf.block);
        ch.dirty.sort_unstable();
        ch.dirty.dedup();
        Ok(ch)
    }

    /// Removes an entry: its inode and the logical block that changed.
    pub fn remove(&mut self, key: u64) -> Option<(Ino, u32)> {
        let (li, ei) = self.find(key)?;
        let leaf = &mut self.leaves[li];
        let e = leaf.entries.swap_remove(ei);
        leaf.used -= e.rec;
        Some((e.ino, leaf.block))
    }

    pub fn heap_bytes(&self) -> usize {
        self.leaves.capacity() * std::mem::size_of::<Leaf>()
            + self
                .leaves
                .iter()
                .map(|l| l.entries.capacity() * std::mem::size_of::<DirEntry>())
                .sum::<usize>()
            + self.nodes.capacity() * 4
    }
}

impl Default for Dir {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_grows_into_an_htree() {
        let g = DirGeometry {
            block_size: 1024,
            csum: true,
            dir_index: true,
        };
        let mut d = Dir::new();
        // 1012 bytes of room, 24 taken by . and ..: 49 entries of 20 bytes fit in block 0.
        for i in 0..49u32 {
            let ch = d
                .insert(name_key(format!("file{i:07}").as_bytes()), 100 + i, 11, &g)
                .unwrap();
            assert_eq!(
                ch,
                DirChange {
                    dirty: vec![0],
                    grew: 0
                }
            );
        }
        let ch = d.insert(name_key(b"file0000049"), 149, 11, &g).unwrap();
        assert!(d.indexed);
        assert_eq!(ch.grew, 2, "block 0 became the root; leaves 1 and 2");
        assert_eq!(ch.dirty, vec![0, 1, 2]);
        for i in 50..5000u32 {
            d.insert(name_key(format!("file{i:07}").as_bytes()), 100 + i, 11, &g)
                .unwrap();
        }
        assert_eq!(d.len(), 5000);
        assert!(d.insert(name_key(b"file0000123"), 1, 11, &g).is_err());
        for i in 0..5000u32 {
            assert_eq!(
                d.lookup(name_key(format!("file{i:07}").as_bytes())),
                Some(100 + i)
            );
        }
        // Leaves are about half to fully used, and cover ascending hash ranges.
        assert!(d.leaves.windows(2).all(|w| w[0].hash_lo < w[1].hash_lo));
        let room = 1012;
        assert!(
            d.leaves
                .iter()
                .all(|l| l.used <= room && l.used >= room / 2 - 20),
            "{:?}",
            d.leaves.iter().map(|l| l.used).collect::<Vec<_>>()
        );
        assert!(
            !d.nodes.is_empty(),
            "{} leaves need a second level",
            d.leaves.len()
        );
        let (ino, block) = d.remove(name_key(b"file0000007")).unwrap();
        assert_eq!(ino, 107);
        assert!(block >= 1 && block < d.blocks);
        assert_eq!(d.lookup(name_key(b"file0000007")), None);
    }
}
