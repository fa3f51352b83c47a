//! The on-disk model of ext3 and ext4: where mkfs puts things, which inode and which blocks
//! a file gets, what a delete gives back, and which metadata blocks each operation dirties.
//! A pure data structure: no time, no events, no I/O (the file layer above turns its
//! answers into block I/O and journal commits). `docs/fs.md` says what is modelled, from
//! which sources, and how close it comes to the kernel.
//!
//! ```text
//! mod.rs       FileSystem: mkfs, create/mkdir/allocate/truncate/unlink/rmdir, queries
//! aging.rs     the seed's aging procedure (fill, thin, fill, thin)
//! layout.rs    mkfs geometry (FsConfig, group tables, journal placement)
//! space.rs     block bitmap, the allocator's view of it and its O(log n) index
//! alloc.rs     mballoc (ext4) and reservation windows (ext3)
//! delayed.rs   delayed allocation's promised blocks (ext4)
//! inode.rs     inodes, block maps, inode groups (Orlov)
//! dir.rs       directory entries, blocks and htree leaves
//! freefrag.rs  the free-extent histogram as e2freefrag prints it
//! filefrag.rs  extents per file as filefrag counts them
//! owners.rs    who owns a block (debugfs's icheck), for a power cut's losses
//! ```

pub mod aging;
pub mod alloc;
pub mod delayed;
pub mod dir;
pub mod filefrag;
pub mod freefrag;
pub mod inode;
pub mod layout;
pub mod owners;
pub mod space;

use self::alloc::{Allocator, DataReq};
use self::delayed::Delayed;
use self::dir::{name_key, Dir, DirGeometry};
use self::filefrag::filefrag_extents;
use self::freefrag::{free_frag, FreeFrag};
use self::inode::{BlockMap, GroupView, InodeTable, MetaBlock, Mode};
pub use self::inode::{Extent, Ino};
pub use self::layout::{AllocPolicy, Era, FsConfig, FsKind, GroupLayout, MkfsOptions};
use self::space::Space;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use thiserror::Error;

/// The root directory's inode.
pub const ROOT_INO: Ino = 2;
/// The journal's inode.
pub const JOURNAL_INO: Ino = 8;
/// The resize inode (owns the reserved GDT blocks).
pub const RESIZE_INO: Ino = 7;
/// lost+found, the first inode after the reserved ones.
pub const LOST_FOUND_INO: Ino = 11;

/// Why an operation failed.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum FsError {
    #[error("mkfs: {0}")]
    Config(String),
    #[error("no space left on device")]
    NoSpace,
    #[error("no free inodes")]
    NoInodes,
    #[error("inode {0} is not in use")]
    NoInode(Ino),
    #[error("inode {0} is not a directory")]
    NotDir(Ino),
    #[error("inode {0} is a directory")]
    IsDir(Ino),
    #[error("the name exists")]
    Exists,
    #[error("no such name")]
    NotFound,
    #[error("directory not empty")]
    NotEmpty,
    #[error("file too large for the model")]
    TooLarge,
}

/// Who is writing: the CPU picks mballoc's locality group, the pid ext3's starting colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Task {
    pub cpu: u32,
    pub pid: u32,
}

/// Data blocks newly mapped: `len` blocks from `logical` at `phys`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Run {
    pub logical: u32,
    pub phys: u64,
    pub len: u32,
}

/// What an operation changed on disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Metadata blocks to journal, sorted, each once: inode table blocks, block and inode
    /// bitmaps, group descriptor blocks, directory blocks, extent and indirect blocks.
    pub metadata: Vec<u64>,
    /// Data blocks newly allocated (the file layer writes the data there).
    pub data: Vec<Run>,
    /// Physical runs given back (data, mapping and directory blocks).
    pub freed: Vec<(u64, u64)>,
}

impl Changes {
    fn dirty(&mut self, b: u64) {
        self.metadata.push(b);
    }
    fn merge(&mut self, o: Changes) {
        self.metadata.extend(o.metadata);
        self.data.extend(o.data);
        self.freed.extend(o.freed);
    }
    fn done(mut self) -> Changes {
        self.metadata.sort_unstable();
        self.metadata.dedup();
        self
    }
}

/// What mkfs writes, in the order it writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MkfsWhat {
    /// Today's mke2fs discards the whole device first (when it can).
    Discard,
    /// Inode tables zeroed (1.41: in 8-block strides; today: up to 4 MiB).
    InodeTable,
    Superblock,
    GroupDescriptors,
    ReservedGdt,
    BlockBitmap,
    InodeBitmap,
    /// Root, lost+found and the resize inode's block.
    Directory,
    /// The journal zeroed, and its superblock.
    Journal,
}

/// One write (or discard) of mkfs, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MkfsWrite {
    pub offset: u64,
    pub bytes: u64,
    pub what: MkfsWhat,
}

/// mkfs's I/O: what it writes, and the inode tables left for the kernel's `ext4lazyinit`
/// thread to zero after mount (lazy_itable_init).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MkfsIo {
    pub writes: Vec<MkfsWrite>,
    pub deferred_zeroing: Vec<(u64, u64)>,
}

/// Blocks and inodes of one group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GroupUsage {
    pub first_block: u64,
    pub blocks: u64,
    pub free_blocks: u64,
    pub used_blocks: u64,
    pub free_inodes: u32,
    pub dirs: u32,
}

/// Which part of a block-mapped file's tree a mapping block is.
const KEY_IND: u64 = 1 << 56;
const KEY_DIND: u64 = 2 << 56;
const KEY_DIND_CHILD: u64 = 3 << 56;
const KEY_TIND: u64 = 4 << 56;
const KEY_TIND_MID: u64 = 5 << 56;
const KEY_TIND_LEAF: u64 = 6 << 56;
/// Extent tree blocks: leaves and index blocks.
const KEY_LEAF: u64 = 7 << 56;
const KEY_XIDX: u64 = 8 << 56;

/// The mapping blocks (from the top) that hold logical block `l` of a block-mapped file.
fn ind_path(l: u64, p: u64) -> Result<Vec<u64>, FsError> {
    if l < 12 {
        return Ok(vec![]);
    }
    let l = l - 12;
    if l < p {
        return Ok(vec![KEY_IND]);
    }
    let l = l - p;
    if l < p * p {
        return Ok(vec![KEY_DIND, KEY_DIND_CHILD | (l / p)]);
    }
    let l = l - p * p;
    if l < p * p * p {
        return Ok(vec![
            KEY_TIND,
            KEY_TIND_MID | (l / (p * p)),
            KEY_TIND_LEAF | (l / p),
        ]);
    }
    Err(FsError::TooLarge)
}

/// The first logical block after `l` that lives in another pointer array.
fn ind_boundary(l: u64, p: u64) -> u64 {
    if l < 12 {
        12
    } else if l < 12 + p {
        12 + p
    } else {
        12 + p + ((l - 12 - p) / p + 1) * p
    }
}

/// The model of one ext3 or ext4 file system.
#[derive(Clone, Debug)]
pub struct FileSystem {
    cfg: FsConfig,
    layout: Vec<GroupLayout>,
    space: Space,
    inodes: InodeTable,
    dirs: FxHashMap<Ino, Dir>,
    alloc: Allocator,
    open: FxHashSet<Ino>,
    /// Blocks promised to dirty, not yet allocated pages (delayed allocation).
    delayed: Delayed,
    dir_geometry: DirGeometry,
}

impl FileSystem {
    /// Makes the file system as `mke2fs` does, returning it and what mkfs wrote.
    pub fn mkfs(cfg: FsConfig) -> Result<(FileSystem, MkfsIo), FsError> {
        let (layout, used) = layout::place_tables(&cfg);
        let mut space = Space::new(cfg.blocks, cfg.first_data_block, cfg.blocks_per_group);
        let mut b = cfg.first_data_block;
        while let Some(s) = used.next_set_from(b) {
            let e = used.next_clear(s, used.len()).unwrap_or(used.len());
            space.take(s, e - s);
            b = e;
        }
        let dir_geometry = DirGeometry {
            block_size: cfg.block_size,
            csum: cfg.kind == FsKind::Ext4 && cfg.era == Era::Today,
            dir_index: cfg.dir_index,
        };
        let mut fs = FileSystem {
            inodes: InodeTable::new(&cfg),
            cfg,
            layout,
            space,
            dirs: FxHashMap::default(),
            alloc: Allocator::default(),
            open: FxHashSet::default(),
            delayed: Delayed::default(),
            dir_geometry,
        };
        for ino in 1..LOST_FOUND_INO {
            fs.inodes.take(
                ino,
                if ino == ROOT_INO {
                    Mode::Dir
                } else {
                    Mode::Reserved
                },
            );
        }
        let mut io = MkfsIo::default();
        let bs = fs.cfg.block_size as u64;
        if fs.cfg.era == Era::Today {
            io.writes.push(MkfsWrite {
                offset: 0,
                bytes: fs.cfg.blocks * bs,
                what: MkfsWhat::Discard,
            });
        }
        // Inode tables: zeroed now, or (lazy) only the part in use, the rest by the kernel.
        for g in 0..fs.cfg.groups {
            let it = fs.layout[g as usize].inode_table;
            let n = fs.cfg.inode_table_blocks as u64;
            let zero_now = if fs.cfg.lazy_itable_init && fs.cfg.group_csum {
                let used_inodes = if g == 0 { LOST_FOUND_INO as u64 } else { 0 };
                (used_inodes * fs.cfg.inode_size as u64).div_ceil(bs)
            } else {
                n
            };
            fs.zero_blocks(&mut io, it, zero_now, MkfsWhat::InodeTable);
            if zero_now < n {
                io.deferred_zeroing.push((it + zero_now, n - zero_now));
            }
        }
        // Root and lost+found (16 KiB, at most 12 blocks), then the resize inode's block.
        let root_block = fs.mkfs_block(fs.cfg.first_data_block);
        fs.set_blocks(ROOT_INO, &[root_block]);
        fs.dirs.insert(ROOT_INO, Dir::new());
        fs.inodes.take(LOST_FOUND_INO, Mode::Dir);
        let lpf_blocks = (16 * 1024 / bs).clamp(2, 12);
        let mut lpf = vec![];
        for _ in 0..lpf_blocks {
            let goal = lpf.last().map_or(root_block, |&x: &u64| x);
            lpf.push(fs.mkfs_block(goal));
        }
        fs.set_blocks(LOST_FOUND_INO, &lpf);
        let mut lf = Dir::new();
        lf.blocks = lpf_blocks as u32;
        for i in 1..lpf_blocks as u32 {
            lf.leaves.push(dir::Leaf {
                block: i,
                hash_lo: 0,
                used: 0,
                entries: vec![],
            });
        }
        fs.dirs.insert(LOST_FOUND_INO, lf);
        let dgeo = fs.dir_geometry;
        fs.dirs
            .get_mut(&ROOT_INO)
            .unwrap()
            .insert(name_key(b"lost+found"), LOST_FOUND_INO, 10, &dgeo)
            .expect("a new root");
        let resize_goal = fs.cfg.first_data_block
            + fs.cfg.desc_blocks as u64
            + fs.cfg.reserved_gdt_blocks as u64
            + 2
            + fs.cfg.inode_table_blocks as u64;
        let resize_dind = fs.mkfs_block(resize_goal);
        fs.set_blocks(RESIZE_INO, &[]);
        fs.inodes
            .get_mut(RESIZE_INO)
            .unwrap()
            .map
            .add_meta(MetaBlock {
                key: KEY_DIND,
                phys: resize_dind,
            });
        for (blk, n) in [(root_block, 1), (lpf[0], lpf_blocks)] {
            io.writes.push(MkfsWrite {
                offset: blk * bs,
                bytes: n * bs,
                what: MkfsWhat::Directory,
            });
        }
        io.writes.push(MkfsWrite {
            offset: resize_dind * bs,
            bytes: bs,
            what: MkfsWhat::Directory,
        });
        // The journal, from the middle of the file system.
        fs.make_journal(&mut io);
        // ext2fs_close: superblock and descriptors (primary and backups), reserved GDT
        // blocks, then the bitmaps of the groups that are not left uninitialised.
        for g in 0..fs.cfg.groups {
            if !fs.layout[g as usize].has_super {
                continue;
            }
            let first = fs.cfg.group_first_block(g);
            let sb_offset = if g == 0 { 1024 } else { first * bs };
            io.writes.push(MkfsWrite {
                offset: sb_offset,
                bytes: 1024,
                what: MkfsWhat::Superblock,
            });
            let gdt = if g == 0 {
                fs.cfg.first_data_block + 1
            } else {
                first + 1
            };
            io.writes.push(MkfsWrite {
                offset: gdt * bs,
                bytes: fs.cfg.desc_blocks as u64 * bs,
                what: MkfsWhat::GroupDescriptors,
            });
            if fs.cfg.reserved_gdt_blocks > 0 {
                io.writes.push(MkfsWrite {
                    offset: (gdt + fs.cfg.desc_blocks as u64) * bs,
                    bytes: fs.cfg.reserved_gdt_blocks as u64 * bs,
                    what: MkfsWhat::ReservedGdt,
                });
            }
        }
        for g in 0..fs.cfg.groups {
            let l = fs.layout[g as usize];
            let (first, end) = (fs.cfg.group_first_block(g), fs.cfg.group_end_block(g));
            let sb_only = fs.cfg.super_blocks(g);
            let used = (end - first) - fs.space.disk_free_in_group(g);
            let block_uninit = fs.cfg.group_csum && g + 1 < fs.cfg.groups && used == sb_only;
            if !block_uninit {
                io.writes.push(MkfsWrite {
                    offset: l.block_bitmap * bs,
                    bytes: bs,
                    what: MkfsWhat::BlockBitmap,
                });
            }
            let inode_uninit =
                fs.cfg.group_csum && fs.inodes.group(g).free == fs.cfg.inodes_per_group;
            if !inode_uninit {
                io.writes.push(MkfsWrite {
                    offset: l.inode_bitmap * bs,
                    bytes: bs,
                    what: MkfsWhat::InodeBitmap,
                });
            }
        }
        Ok((fs, io))
    }

    /// mke2fs's block allocator (`ext2fs_new_block2`): the first free block at or after
    /// `goal`, wrapping.
    fn mkfs_block(&mut self, goal: u64) -> u64 {
        let b = self
            .space
            .next_free(goal, self.cfg.blocks)
            .or_else(|| {
                self.space
                    .next_free(self.cfg.first_data_block, self.cfg.blocks)
            })
            .expect("room for mkfs's blocks");
        self.space.take(b, 1);
        b
    }

    /// Maps `blocks` (in order) as the first blocks of `ino`.
    fn set_blocks(&mut self, ino: Ino, blocks: &[u64]) {
        let bs = self.cfg.block_size as u64;
        let max = self.max_extent();
        let node = self.inodes.get_mut(ino).expect("a live inode");
        for (i, &b) in blocks.iter().enumerate() {
            node.map.insert(
                Extent {
                    logical: i as u32,
                    len: 1,
                    phys: b,
                },
                max,
            );
        }
        node.size = blocks.len() as u64 * bs;
    }

    /// `ext2fs_zero_blocks`: writes of 8 blocks aligned to 8 (1.41), or up to 4 MiB (today).
    fn zero_blocks(&self, io: &mut MkfsIo, start: u64, n: u64, what: MkfsWhat) {
        let bs = self.cfg.block_size as u64;
        let stride = if self.cfg.era == Era::Y2008 {
            8
        } else {
            (4 << 20) / bs
        };
        let mut b = start;
        let end = start + n;
        while b < end {
            let count = (stride - b % stride).min(end - b);
            io.writes.push(MkfsWrite {
                offset: b * bs,
                bytes: count * bs,
                what,
            });
            b += count;
        }
    }

    /// The journal inode: `journal_blocks` from the goal group's start, in runs (extents
    /// of at most 32768 blocks, or ext3's block map with its indirect blocks among the
    /// data), then zeroed and its superblock written.
    fn make_journal(&mut self, io: &mut MkfsIo) {
        let space = &self.space;
        // Today's mke2fs puts a block-mapped (ext3) journal at the start (after lost+found,
        // as dumpe2fs shows of mke2fs 1.47.0); 1.41, and today's for extents, the middle.
        let mut goal = if self.cfg.kind == FsKind::Ext3 && self.cfg.era == Era::Today {
            self.cfg.first_data_block
        } else {
            self.cfg
                .group_first_block(layout::journal_goal_group(&self.cfg, |g| {
                    space.disk_free_in_group(g)
                }))
        };
        let n = self.cfg.journal_blocks as u64;
        let p = self.cfg.ptrs_per_block();
        let mut runs: Vec<(u64, u64)> = vec![];
        let mut l = 0u64;
        let max = self.max_extent();
        while l < n {
            if self.cfg.kind == FsKind::Ext3 {
                let path = ind_path(l, p).expect("a journal within triple indirection");
                let have: Vec<u64> = self
                    .inodes
                    .get(JOURNAL_INO)
                    .unwrap()
                    .map
                    .meta()
                    .iter()
                    .map(|m| m.key)
                    .collect();
                for key in path {
                    if !have.contains(&key) {
                        let b = self.mkfs_block(goal);
                        self.inodes
                            .get_mut(JOURNAL_INO)
                            .unwrap()
                            .map
                            .add_meta(MetaBlock { key, phys: b });
                        push_run(&mut runs, b, 1);
                        goal = b + 1;
                    }
                }
            }
            let b = self.mkfs_block(goal);
            self.inodes.get_mut(JOURNAL_INO).unwrap().map.insert(
                Extent {
                    logical: l as u32,
                    len: 1,
                    phys: b,
                },
                max,
            );
            push_run(&mut runs, b, 1);
            goal = b + 1;
            l += 1;
        }
        if self.cfg.kind == FsKind::Ext4 {
            // More than 4 extents need a leaf block, allocated after the data here.
            let extents = self.inodes.get(JOURNAL_INO).unwrap().map.extents().len();
            if extents > 4 {
                let b = self.mkfs_block(goal);
                self.inodes
                    .get_mut(JOURNAL_INO)
                    .unwrap()
                    .map
                    .add_meta(MetaBlock {
                        key: KEY_LEAF,
                        phys: b,
                    });
                push_run(&mut runs, b, 1);
            }
        }
        self.inodes.get_mut(JOURNAL_INO).unwrap().size = n * self.cfg.block_size as u64;
        for (s, len) in runs {
            self.zero_blocks(io, s, len, MkfsWhat::Journal);
        }
        let first = self.inodes.get(JOURNAL_INO).unwrap().map.map(0).unwrap();
        io.writes.push(MkfsWrite {
            offset: first * self.cfg.block_size as u64,
            bytes: self.cfg.block_size as u64,
            what: MkfsWhat::Journal,
        });
    }

    fn max_extent(&self) -> u32 {
        if self.cfg.kind == FsKind::Ext4 {
            32768
        } else {
            u32::MAX
        }
    }

    // ------------------------------------------------------------ queries

    pub fn config(&self) -> &FsConfig {
        &self.cfg
    }
    pub fn layout(&self) -> &[GroupLayout] {
        &self.layout
    }
    /// Whether `ino` is in use.
    pub fn exists(&self, ino: Ino) -> bool {
        self.inodes.is_used(ino)
    }
    pub fn is_dir(&self, ino: Ino) -> bool {
        self.dirs.contains_key(&ino)
    }
    /// `i_size` in bytes.
    pub fn size_of(&self, ino: Ino) -> Option<u64> {
        self.inodes.get(ino).map(|i| i.size)
    }
    /// The physical block holding logical block `l` of `ino` (None: a hole, or not yet
    /// allocated).
    pub fn map(&self, ino: Ino, l: u32) -> Option<u64> {
        self.inodes.get(ino)?.map.map(l)
    }
    /// The file's physical runs (what `filefrag` counts as extents).
    pub fn extents_of(&self, ino: Ino) -> Vec<Extent> {
        let Some(i) = self.inodes.get(ino) else {
            return vec![];
        };
        // filefrag merges runs that are contiguous both ways; ext4 keeps extents of at most
        // 32768 blocks, which FIEMAP reports as they are.
        let mut out: Vec<Extent> = vec![];
        for &e in i.map.extents() {
            match out.last_mut() {
                Some(l)
                    if self.cfg.kind == FsKind::Ext3
                        && l.logical_end() == e.logical
                        && l.phys_end() == e.phys =>
                {
                    l.len += e.len
                }
                _ => out.push(e),
            }
        }
        out
    }
    /// The file's mapping blocks (extent-tree or indirect blocks).
    pub fn mapping_blocks_of(&self, ino: Ino) -> Vec<u64> {
        self.inodes
            .get(ino)
            .map(|i| i.map.meta().iter().map(|m| m.phys).collect())
            .unwrap_or_default()
    }
    /// The journal's physical runs.
    pub fn journal(&self) -> Vec<Extent> {
        self.extents_of(JOURNAL_INO)
    }
    /// The inode a name in `dir` names.
    pub fn lookup(&self, dir: Ino, name: &[u8]) -> Option<Ino> {
        self.dirs.get(&dir)?.lookup(name_key(name))
    }
    /// The names' inodes of a directory, in its block order.
    pub fn children(&self, dir: Ino) -> Vec<Ino> {
        self.dirs
            .get(&dir)
            .map(|d| d.entries().map(|e| e.ino).collect())
            .unwrap_or_default()
    }
    /// The group of an inode.
    pub fn inode_group(&self, ino: Ino) -> u32 {
        self.inodes.group_of(ino)
    }
    /// The mapping blocks a look-up of logical block `l` of `ino` goes through, from the top
    /// of the tree (ext3's indirect chain as `ext3_get_branch` walks it; ext4's extent index
    /// block and leaf as `ext4_find_extent` does), and the first logical block past `l` whose
    /// path may differ. Empty for blocks the inode maps itself (ext3's 12 direct pointers,
    /// ext4's 4 extents in the inode).
    pub fn mapping_path(&self, ino: Ino, l: u32) -> (Vec<u64>, u32) {
        let Some(node) = self.inodes.get(ino) else { return (Vec::new(), u32::MAX) };
        let meta = node.map.meta();
        if meta.is_empty() {
            return (Vec::new(), u32::MAX);
        }
        let phys = |key: u64| meta.iter().find(|m| m.key == key).map(|m| m.phys);
        match self.cfg.kind {
            FsKind::Ext3 => {
                let p = self.cfg.ptrs_per_block();
                let next = ind_boundary(l as u64, p).min(u32::MAX as u64) as u32;
                let path = ind_path(l as u64, p).unwrap_or_default();
                (path.into_iter().filter_map(phys).collect(), next)
            }
            FsKind::Ext4 => {
                // Leaf i holds extents [i * per, (i + 1) * per); index block j leaves the same way.
                let per = ((self.cfg.block_size - 12) / 12) as usize;
                let extents = node.map.extents();
                if extents.len() <= 4 {
                    return (Vec::new(), u32::MAX);
                }
                // The extent holding `l`, or for a hole the one before it: a leaf covers from
                // its first extent's block to the next leaf's (the index's search).
                let i = extents.partition_point(|e| e.logical <= l).saturating_sub(1);
                let leaf = i / per;
                let next = extents.get((leaf + 1) * per).map_or(u32::MAX, |e| e.logical);
                let leaves = extents.len().div_ceil(per);
                let mut path = Vec::with_capacity(2);
                if leaves > 4 {
                    path.extend(phys(KEY_XIDX | (leaf / per) as u64));
                }
                path.extend(phys(KEY_LEAF | leaf as u64));
                (path, next)
            }
        }
    }
    /// Where mapping block `key` (an indirect block or an extent-tree leaf) of `ino` is, if
    /// it has one.
    fn mapping_block(&self, ino: Ino, key: u64) -> Option<u64> {
        self.inodes.get(ino).unwrap().map.meta().iter().find(|m| m.key == key).map(|m| m.phys)
    }
    /// The inode table block holding `ino`.
    pub fn inode_block(&self, ino: Ino) -> u64 {
        let g = self.inodes.group_of(ino);
        let i = self.inodes.index_in_group(ino) as u64;
        self.layout[g as usize].inode_table
            + i * self.cfg.inode_size as u64 / self.cfg.block_size as u64
    }
    /// The run of inode-table blocks `(first, count)` a read of `ino`'s inode from disk
    /// takes. ext3's driver reads the one block (`__ext3_get_inode_loc`); ext4's reads
    /// ahead the aligned window of `inode_readahead_blks` blocks round it (32,
    /// `EXT4_DEF_INODE_READAHEAD_BLKS`), clipped to the table's end or, with group
    /// checksums, to its last block holding a used inode (`itable_unused`), in one go.
    pub fn inode_read_run(&self, ino: Ino) -> (u64, u64) {
        const INODE_READAHEAD_BLKS: u64 = 32;
        let b = self.inode_block(ino);
        if self.cfg.alloc != AllocPolicy::Mballoc {
            return (b, 1);
        }
        let g = self.inodes.group_of(ino);
        let table = self.layout[g as usize].inode_table;
        let start = table + (b - table) / INODE_READAHEAD_BLKS * INODE_READAHEAD_BLKS;
        let mut end = (start + INODE_READAHEAD_BLKS).min(table + self.cfg.inode_table_blocks as u64);
        if self.cfg.group_csum {
            let per_block = (self.cfg.block_size / self.cfg.inode_size) as u64;
            let first_ino = g as u64 * self.cfg.inodes_per_group as u64 + 1;
            let used = |blk: u64| (0..per_block).any(|i| self.inodes.is_used((first_ino + (blk - table) * per_block + i) as Ino));
            while end > b + 1 && !used(end - 1) {
                end -= 1;
            }
        }
        (start, end - start)
    }
    /// The blocks a lookup of `name` in directory `dir` reads, in order ([`Dir::lookup_blocks`]),
    /// each after the mapping blocks that find it (a large directory's indirect or extent blocks).
    pub fn lookup_blocks(&self, dir: Ino, name: &[u8]) -> Vec<u64> {
        let Some(d) = self.dirs.get(&dir) else { return Vec::new() };
        self.dir_blocks_mapped(dir, d.lookup_blocks(name_key(name), &self.dir_geometry))
    }
    /// Every block of directory `dir` (what readdir reads), in logical order, each after the
    /// mapping blocks that find it.
    pub fn dir_blocks(&self, dir: Ino) -> Vec<u64> {
        let n = self.dirs.get(&dir).map_or(0, |d| d.blocks);
        self.dir_blocks_mapped(dir, 0..n)
    }
    /// Blocks `logical` of directory `dir`, each after the mapping blocks not yet listed
    /// on its path.
    fn dir_blocks_mapped(&self, dir: Ino, logical: impl IntoIterator<Item = u32>) -> Vec<u64> {
        let mut out: Vec<u64> = Vec::new();
        // The path found last holds for logical blocks [from, next).
        let (mut from, mut next) = (u32::MAX, 0);
        for l in logical {
            if l < from || l >= next {
                let path;
                (path, next) = self.mapping_path(dir, l);
                from = l;
                for b in path {
                    if !out.contains(&b) {
                        out.push(b);
                    }
                }
            }
            out.extend(self.map(dir, l));
        }
        out
    }
    /// The free-extent histogram as `e2freefrag` prints it (from the on-disk bitmap; blocks
    /// held by preallocations in memory count as free, as they are on disk).
    pub fn free_extent_histogram(&self) -> FreeFrag {
        free_frag(
            self.space.disk_bits(),
            self.cfg.first_data_block,
            self.cfg.block_size,
        )
    }
    /// Regular files by their number of extents as `filefrag` counts them: (extents,
    /// files), fewest extents first. Blocks not yet allocated (delayed allocation) are not
    /// extents, as FIEMAP does not report them.
    pub fn extents_per_file(&self) -> Vec<(u64, u64)> {
        let mut n: std::collections::BTreeMap<u64, u64> = Default::default();
        for ino in self.inodes.live() {
            let Some(i) = self.inodes.get(ino).filter(|i| i.mode == Mode::File) else {
                continue;
            };
            *n.entry(filefrag_extents(i.map.extents())).or_default() += 1;
        }
        n.into_iter().collect()
    }
    /// Free and used blocks and free inodes, per group.
    pub fn group_usage(&self) -> Vec<GroupUsage> {
        (0..self.cfg.groups)
            .map(|g| {
                let (s, e) = (self.cfg.group_first_block(g), self.cfg.group_end_block(g));
                let free = self.space.disk_free_in_group(g);
                let gi = self.inodes.group(g);
                GroupUsage {
                    first_block: s,
                    blocks: e - s,
                    free_blocks: free,
                    used_blocks: e - s - free,
                    free_inodes: gi.free,
                    dirs: gi.dirs,
                }
            })
            .collect()
    }
    /// Free blocks on disk.
    pub fn free_blocks(&self) -> u64 {
        self.space.disk_free()
    }
    /// Free inodes.
    pub fn free_inodes(&self) -> u64 {
        self.inodes.free_total()
    }
    /// Blocks held by in-memory preallocations.
    pub fn preallocated_blocks(&self) -> u64 {
        self.alloc.held_blocks()
    }
    /// ext3's reservation window of a file, `[start, end]`.
    pub fn reservation_window(&self, ino: Ino) -> Option<(u64, u64)> {
        self.alloc.window_of(ino)
    }
    /// Every inode in use.
    pub fn live_inodes(&self) -> Vec<Ino> {
        self.inodes.live().collect()
    }
    /// The heap bytes a file system made by [`FileSystem::mkfs`] with `cfg` holds before any
    /// file is written: the block bitmaps and their index ([`Space::heap_estimate`]), the
    /// inode bitmap, and per group its counts, inode slots and table places. Live files add
    /// their own (about 93 bytes each: `tests/fs_memory.rs`). Computed without building it,
    /// for the memory estimate before a run.
    pub fn heap_estimate(cfg: &FsConfig) -> u64 {
        let groups = cfg.groups as u64;
        let per_group = (std::mem::size_of::<inode::GroupInodes>() + std::mem::size_of::<Vec<inode::Inode>>() + std::mem::size_of::<GroupLayout>()) as u64;
        Space::heap_estimate(cfg.blocks, cfg.first_data_block, cfg.blocks_per_group) + cfg.inodes().div_ceil(64) * 8 + groups * per_group
    }

    /// Heap bytes the model holds (bitmaps, index, inodes, directories, allocator).
    pub fn heap_bytes(&self) -> usize {
        self.space.heap_bytes()
            + self.inodes.heap_bytes()
            + self.dirs.capacity() * (std::mem::size_of::<(Ino, Dir)>() + 1)
            + self.dirs.values().map(|d| d.heap_bytes()).sum::<usize>()
            + self.delayed.heap_bytes()
    }

    /// Block bitmap and descriptor block of the group of `b`.
    fn dirty_alloc(&self, ch: &mut Changes, start: u64, len: u64) {
        let mut g = self.cfg.group_of_block(start);
        let last = self.cfg.group_of_block(start + len - 1);
        while g <= last {
            ch.dirty(self.layout[g as usize].block_bitmap);
            ch.dirty(self.cfg.gdt_block_of(g));
            g += 1;
        }
    }

    // ------------------------------------------------------------ namespace

    fn dir_mut(&mut self, dir: Ino) -> Result<&mut Dir, FsError> {
        if !self.inodes.is_used(dir) {
            return Err(FsError::NoInode(dir));
        }
        self.dirs.get_mut(&dir).ok_or(FsError::NotDir(dir))
    }

    fn free_blocks_fn(&self) -> impl Fn(u32) -> u64 + '_ {
        |g| self.space.disk_free_in_group(g)
    }

    /// Creates a regular file `name` in `dir`. It is open for writing until `release`.
    pub fn create(&mut self, dir: Ino, name: &[u8], task: Task) -> Result<(Ino, Changes), FsError> {
        self.new_inode(dir, name, Mode::File, task)
    }

    /// Creates a directory `name` in `dir`, with its first block.
    pub fn mkdir(&mut self, dir: Ino, name: &[u8], task: Task) -> Result<(Ino, Changes), FsError> {
        self.new_inode(dir, name, Mode::Dir, task)
    }

    fn new_inode(
        &mut self,
        parent: Ino,
        name: &[u8],
        mode: Mode,
        task: Task,
    ) -> Result<(Ino, Changes), FsError> {
        let key = name_key(name);
        if self.dir_mut(parent)?.lookup(key).is_some() {
            return Err(FsError::Exists);
        }
        let pgroup = self.inodes.group_of(parent);
        let last = self.dirs[&parent].last_alloc_group;
        let group = {
            let fb = self.free_blocks_fn();
            let view = GroupView {
                cfg: &self.cfg,
                inodes: &self.inodes,
                free_blocks: &fb,
            };
            match mode {
                Mode::Dir => view.orlov(
                    last.unwrap_or(pgroup),
                    parent == ROOT_INO,
                    dir::htree_hash(key),
                ),
                _ => view.other(pgroup, parent),
            }
        }
        .ok_or(FsError::NoInodes)?;
        let ino = self.inodes.first_free_in(group).ok_or(FsError::NoInodes)?;
        let mut ch = Changes::default();
        // A directory needs its first block before anything is changed.
        let dir_block = if mode == Mode::Dir {
            self.inodes.take(ino, Mode::Dir);
            let goal = self.inode_goal(ino, task);
            match self.meta_block(ino, goal, task) {
                Some(b) => Some(b),
                None => {
                    self.inodes.release(ino);
                    return Err(FsError::NoSpace);
                }
            }
        } else {
            self.inodes.take(ino, mode);
            None
        };
        ch.dirty(self.layout[group as usize].inode_bitmap);
        ch.dirty(self.cfg.gdt_block_of(group));
        ch.dirty(self.inode_block(ino));
        if let Some(b) = dir_block {
            self.set_blocks(ino, &[b]);
            self.dirs.insert(ino, Dir::new());
            self.dirty_alloc(&mut ch, b, 1);
            ch.dirty(b);
            ch.dirty(self.inode_block(parent)); // the parent's link count
        } else {
            self.open.insert(ino);
        }
        let ins = self.dir_insert(parent, key, ino, name.len(), task);
        match ins {
            Ok(c) => ch.merge(c),
            Err(e) => {
                // Undo: the directory could not grow.
                if let Some(b) = dir_block {
                    self.dirs.remove(&ino);
                    self.inodes.get_mut(ino).unwrap().map = BlockMap::default();
                    self.space.free(b, 1);
                }
                self.open.remove(&ino);
                self.inodes.release(ino);
                return Err(e);
            }
        }
        self.dirs.get_mut(&parent).unwrap().last_alloc_group = Some(group);
        Ok((ino, ch.done()))
    }

    /// Adds an entry to a directory, growing it if needed.
    fn dir_insert(
        &mut self,
        dir: Ino,
        key: u64,
        ino: Ino,
        name_len: usize,
        task: Task,
    ) -> Result<Changes, FsError> {
        let geo = self.dir_geometry;
        let mut d = self.dirs.remove(&dir).ok_or(FsError::NotDir(dir))?;
        let old_blocks = d.blocks;
        // Kept to undo a growth that finds no space (growth is one insert in tens).
        let snapshot = if d.has_room(key, name_len, &geo) {
            None
        } else {
            Some(d.clone())
        };
        let ch = match d.insert(key, ino, name_len, &geo) {
            Ok(c) => c,
            Err(dir::NameExists) => {
                self.dirs.insert(dir, d);
                return Err(FsError::Exists);
            }
        };
        let mut out = Changes::default();
        // New blocks at the directory's end.
        for l in old_blocks..old_blocks + ch.grew {
            let mut goal = self.data_goal(dir, l, task);
            if self.cfg.kind == FsKind::Ext3 {
                match self.ensure_ind_path(dir, l, goal, task, &mut out) {
                    Ok(g) => goal = g,
                    Err(e) => {
                        self.dirs
                            .insert(dir, snapshot.expect("a growing directory keeps a copy"));
                        return Err(e);
                    }
                }
            }
            match self.meta_block(dir, goal, task) {
                Some(b) => {
                    let c = self.map_blocks(dir, l, b, 1, task);
                    match c {
                        Ok(c) => out.merge(c),
                        Err(e) => {
                            self.space.free(b, 1);
                            self.dirs
                                .insert(dir, snapshot.expect("a growing directory keeps a copy"));
                            return Err(e);
                        }
                    }
                    self.dirty_alloc(&mut out, b, 1);
                }
                None => {
                    // Give back what this insert took and keep the directory as it was.
                    let freed = self.inodes.get_mut(dir).unwrap().map.cut_from(old_blocks);
                    for (s, n) in freed {
                        self.space.free(s, n);
                    }
                    self.dirs
                        .insert(dir, snapshot.expect("a growing directory keeps a copy"));
                    return Err(FsError::NoSpace);
                }
            }
        }
        let bs = self.cfg.block_size as u64;
        let node = self.inodes.get_mut(dir).unwrap();
        node.size = d.blocks as u64 * bs;
        for l in ch.dirty {
            out.dirty(node.map.map(l).expect("directory blocks are mapped"));
        }
        out.dirty(self.inode_block(dir));
        self.dirs.insert(dir, d);
        Ok(out)
    }

    /// Removes the regular file `name` from `dir`: its entry, blocks and inode.
    pub fn unlink(&mut self, dir: Ino, name: &[u8]) -> Result<Changes, FsError> {
        let key = name_key(name);
        let target = self.dir_mut(dir)?.lookup(key).ok_or(FsError::NotFound)?;
        if self.dirs.contains_key(&target) {
            return Err(FsError::IsDir(target));
        }
        let (_, block) = self.dirs.get_mut(&dir).unwrap().remove(key).unwrap();
        let mut ch = Changes::default();
        ch.dirty(self.map(dir, block).expect("a mapped directory block"));
        ch.dirty(self.inode_block(dir));
        ch.merge(self.delete_inode(target)?);
        Ok(ch.done())
    }

    /// Removes the empty directory `name` from `dir`.
    pub fn rmdir(&mut self, dir: Ino, name: &[u8]) -> Result<Changes, FsError> {
        let key = name_key(name);
        let target = self.dir_mut(dir)?.lookup(key).ok_or(FsError::NotFound)?;
        match self.dirs.get(&target) {
            None => return Err(FsError::NotDir(target)),
            Some(d) if !d.is_empty() => return Err(FsError::NotEmpty),
            _ => {}
        }
        let (_, block) = self.dirs.get_mut(&dir).unwrap().remove(key).unwrap();
        let mut ch = Changes::default();
        ch.dirty(self.map(dir, block).expect("a mapped directory block"));
        ch.dirty(self.inode_block(dir));
        self.dirs.remove(&target);
        ch.merge(self.delete_inode(target)?);
        Ok(ch.done())
    }

    fn delete_inode(&mut self, ino: Ino) -> Result<Changes, FsError> {
        let mut ch = self.truncate_blocks(ino, 0)?;
        self.alloc.forget(&mut self.space, ino);
        self.open.remove(&ino);
        let g = self.inodes.group_of(ino);
        ch.dirty(self.inode_block(ino));
        ch.dirty(self.layout[g as usize].inode_bitmap);
        ch.dirty(self.cfg.gdt_block_of(g));
        self.inodes.release(ino);
        Ok(ch)
    }

    // ------------------------------------------------------------ data

    /// Whether `blocks` more can be taken: free blocks less those promised and
    /// `s_resv_clusters` must cover them (`ext4_has_free_clusters`, for root).
    pub fn has_room(&self, blocks: u64) -> Result<(), FsError> {
        if self.space.disk_free() < self.delayed.total() + blocks + self.cfg.resv_clusters {
            return Err(FsError::NoSpace);
        }
        Ok(())
    }

    /// Delayed allocation's promise for a buffered write over blocks `[from, to)` of a
    /// regular file (`ext4_da_map_blocks`, `ext4_da_reserve_space`): each block with no disk
    /// block and no promise yet is promised, to be allocated at writeback. An overwrite of
    /// allocated or already promised blocks promises nothing. All or none: ENOSPC when
    /// `has_room` cannot cover them. Without delayed allocation it only checks. Returns how
    /// many were promised.
    pub fn delay(&mut self, ino: Ino, from: u32, to: u32) -> Result<u64, FsError> {
        let node = self.inodes.get(ino).ok_or(FsError::NoInode(ino))?;
        let mut new: Vec<(u32, u32)> = Vec::new();
        for l in from..to {
            if node.map.map(l).is_some() || self.delayed.contains(ino, l) {
                continue;
            }
            match new.last_mut() {
                Some(r) if r.1 == l => r.1 += 1,
                _ => new.push((l, l + 1)),
            }
        }
        let n: u64 = new.iter().map(|&(a, b)| (b - a) as u64).sum();
        self.has_room(n)?;
        if self.cfg.delalloc {
            for (a, b) in new {
                self.delayed.insert(ino, a, b);
            }
        }
        Ok(n)
    }
    /// `ext4_nonda_switch` (fs/ext4/inode.c), asked by each buffered write under delayed
    /// allocation: whether free blocks are under 150 % of those promised, or under them plus
    /// `watermark` (`EXT4_FREECLUSTERS_WATERMARK`), so that the write allocates its blocks
    /// now, as without delayed allocation (`ext4_write_begin`). Its other half, starting
    /// writeback of the whole file system once promised blocks pass half the free ones
    /// (`try_to_writeback_inodes_sb`), is left out: the file layer's flusher, with no
    /// per-file cost, would write everything before the writer's next call, where the
    /// kernel's lets promised blocks pass two thirds of the free ones (docs/files.md).
    pub fn nonda_switch(&self, watermark: u64) -> bool {
        let (free, dirty) = (self.space.disk_free(), self.delayed.total());
        2 * free < 3 * dirty || free < dirty + watermark
    }

    /// A write's blocks allocated at write time, one allocation call per block neither
    /// allocated nor promised, as `ext4_write_begin`'s `get_block` maps each buffer (the fall-back from
    /// delayed allocation): ENOSPC unless `has_room` covers them (`ext4_claim_free_clusters`).
    /// When space runs out part way, what was allocated stays (a short write).
    pub fn allocate_each(&mut self, ino: Ino, from: u32, to: u32, task: Task) -> Result<Changes, FsError> {
        // Blocks already promised stay so (their buffers are mapped as delayed).
        let unmapped: Vec<u32> = (from..to).filter(|&l| self.map(ino, l).is_none() && !self.delayed.contains(ino, l)).collect();
        self.has_room(unmapped.len() as u64)?;
        let mut ch = Changes::default();
        for l in unmapped {
            match self.allocate(ino, l, 1, task) {
                Ok(c) => ch.merge(c),
                Err(_) if !ch.data.is_empty() => break,
                Err(e) => return Err(e),
            }
        }
        Ok(ch.done())
    }

    /// Ends the promises of blocks `[from, to)` of a file whose pages were dropped, or
    /// written back with no block found for them (`ext4_da_release_space`). Returns how
    /// many there were.
    pub fn undelay(&mut self, ino: Ino, from: u32, to: u32) -> u64 {
        self.delayed.remove(ino, from, to)
    }
    /// Blocks promised and not yet allocated.
    pub fn reserved_blocks(&self) -> u64 {
        self.delayed.total()
    }
    /// A file's promised blocks, as runs `(start, end)`.
    pub fn delayed_runs(&self, ino: Ino) -> Vec<(u32, u32)> {
        self.delayed.runs_of(ino)
    }
    /// The files with promised blocks.
    pub fn delayed_files(&self) -> Vec<Ino> {
        self.delayed.files()
    }

    /// Sets `i_size` (the file layer's write past the end); dirties the inode.
    pub fn set_size(&mut self, ino: Ino, bytes: u64) -> Result<Changes, FsError> {
        self.inodes.get_mut(ino).ok_or(FsError::NoInode(ino))?.size = bytes;
        let mut ch = Changes::default();
        ch.dirty(self.inode_block(ino));
        Ok(ch.done())
    }

    /// The last writer closed the file: its ext3 window or ext4 inode preallocation goes
    /// back (`ext3_release_file`, `ext4_release_file`).
    pub fn release(&mut self, ino: Ino) {
        self.open.remove(&ino);
        self.alloc.discard_inode(&mut self.space, ino);
    }
    /// Marks a file open for writing again.
    pub fn open_for_write(&mut self, ino: Ino) {
        if self.inodes.get(ino).is_some_and(|i| i.mode == Mode::File) {
            self.open.insert(ino);
        }
    }

    /// Unmount: every preallocation goes back (they live only in memory).
    pub fn unmount(&mut self) {
        self.alloc.discard_all(&mut self.space);
        self.open.clear();
    }

    /// Allocates every unmapped block of `[logical, logical+count)` of a regular file: at
    /// write time (ext3) or at writeback (ext4's delayed allocation, the whole run written
    /// back at once). A promised block's promise ends as it is allocated. When space runs
    /// out part way, what was allocated stays and is returned (fewer blocks in `data` than
    /// asked: a short write); `NoSpace` only when nothing could be allocated.
    pub fn allocate(
        &mut self,
        ino: Ino,
        logical: u32,
        count: u32,
        task: Task,
    ) -> Result<Changes, FsError> {
        match self.inodes.get(ino) {
            None => return Err(FsError::NoInode(ino)),
            Some(i) if i.mode != Mode::File => return Err(FsError::IsDir(ino)),
            _ => {}
        }
        let mut ch = Changes::default();
        let end = logical as u64 + count as u64;
        if end > u32::MAX as u64 {
            return Err(FsError::TooLarge);
        }
        let mut l = logical;
        while (l as u64) < end {
            if self.map(ino, l).is_some() {
                l += 1;
                continue;
            }
            // The unmapped run from `l`, up to the next mapped block.
            let (_, right) = self.inodes.get(ino).unwrap().map.neighbours(l);
            let mut run_end = end.min(right.map_or(u64::MAX, |r| r.logical as u64));
            if self.cfg.kind == FsKind::Ext3 {
                run_end = run_end.min(ind_boundary(l as u64, self.cfg.ptrs_per_block()));
            } else {
                run_end = run_end.min(l as u64 + 32768);
            }
            let want = (run_end - l as u64) as u32;
            let got = self.allocate_run(ino, l, want, task, &mut ch);
            let n = match got {
                Ok(n) => n,
                // A short allocation: what was allocated stays, and is reported.
                Err(_) if !ch.data.is_empty() => break,
                Err(e) => return Err(e),
            };
            self.delayed.remove(ino, l, l + n);
            l += n;
        }
        Ok(ch.done())
    }

    /// One allocation call: at most `want` blocks at `l`; returns how many were mapped.
    fn allocate_run(
        &mut self,
        ino: Ino,
        l: u32,
        want: u32,
        task: Task,
        ch: &mut Changes,
    ) -> Result<u32, FsError> {
        let goal = self.data_goal(ino, l, task);
        let (phys, n) = match self.cfg.alloc {
            AllocPolicy::Mballoc => {
                // Block-mapped files (ext3 on today's driver) get their indirect blocks
                // first, one at a time, the data after them.
                let goal = if self.cfg.kind == FsKind::Ext3 {
                    self.ensure_ind_path(ino, l, goal, task, ch)?
                } else {
                    goal
                };
                let node = self.inodes.get(ino).unwrap();
                let (left, right) = node.map.neighbours(l);
                let left = left.filter(|e| e.logical_end() <= l);
                let bs = self.cfg.block_size as u64;
                let req = DataReq {
                    ino,
                    logical: l,
                    len: want,
                    goal,
                    isize_blocks: node.size.div_ceil(bs).min(u32::MAX as u64) as u32,
                    left,
                    right,
                    cpu: task.cpu,
                    open: self.open.contains(&ino),
                };
                self.alloc
                    .mb_data(&self.cfg, &mut self.space, &req)
                    .ok_or(FsError::NoSpace)?
            }
            AllocPolicy::Ext3Reservation => {
                let goal = if self.cfg.kind == FsKind::Ext3 {
                    self.ensure_ind_path(ino, l, goal, task, ch)?
                } else {
                    goal
                };
                self.alloc
                    .ext3_blocks(&self.cfg, &mut self.space, ino, goal, want, true)
                    .ok_or(FsError::NoSpace)?
            }
        };
        self.dirty_alloc(ch, phys, n as u64);
        ch.data.push(Run {
            logical: l,
            phys,
            len: n,
        });
        let c = self.map_blocks(ino, l, phys, n, task)?;
        ch.merge(c);
        Ok(n)
    }

    /// For a block-mapped file, allocates the indirect blocks logical `l` needs; returns
    /// the goal for its data (after the last new indirect block).
    fn ensure_ind_path(
        &mut self,
        ino: Ino,
        l: u32,
        goal: u64,
        task: Task,
        ch: &mut Changes,
    ) -> Result<u64, FsError> {
        let path = ind_path(l as u64, self.cfg.ptrs_per_block())?;
        let mut goal = goal;
        let mut parent_block = self.inode_block(ino);
        for key in path {
            let have = self.mapping_block(ino, key);
            let b = match have {
                Some(b) => b,
                None => {
                    let b = self.meta_block(ino, goal, task).ok_or(FsError::NoSpace)?;
                    self.inodes
                        .get_mut(ino)
                        .unwrap()
                        .map
                        .add_meta(MetaBlock { key, phys: b });
                    self.dirty_alloc(ch, b, 1);
                    ch.dirty(b);
                    ch.dirty(parent_block);
                    b
                }
            };
            goal = b + 1;
            parent_block = b;
        }
        Ok(goal)
    }

    /// One block for metadata or a directory.
    fn meta_block(&mut self, ino: Ino, goal: u64, _task: Task) -> Option<u64> {
        match self.cfg.alloc {
            AllocPolicy::Mballoc => self
                .alloc
                .mb_meta(&self.cfg, &mut self.space, goal, 1)
                .map(|x| x.0),
            AllocPolicy::Ext3Reservation => self
                .alloc
                .ext3_blocks(&self.cfg, &mut self.space, ino, goal, 1, false)
                .map(|x| x.0),
        }
    }

    /// Records `n` blocks at `phys` as logical `l..` of `ino`, and the mapping blocks that
    /// change: the inode, an extent leaf, an indirect block.
    fn map_blocks(
        &mut self,
        ino: Ino,
        l: u32,
        phys: u64,
        n: u32,
        task: Task,
    ) -> Result<Changes, FsError> {
        let mut ch = Changes::default();
        let max = self.max_extent();
        let node = self.inodes.get_mut(ino).unwrap();
        let idx = node.map.insert(
            Extent {
                logical: l,
                len: n,
                phys,
            },
            max,
        );
        match self.cfg.kind {
            FsKind::Ext3 => {
                let p = self.cfg.ptrs_per_block();
                // Every pointer array the run touches.
                let mut x = l as u64;
                while x < l as u64 + n as u64 {
                    let path = ind_path(x, p)?;
                    match path.last() {
                        None => ch.dirty(self.inode_block(ino)),
                        Some(&k) => {
                            let m = self.mapping_block(ino, k);
                            ch.dirty(m.expect("indirect blocks are allocated before data"));
                        }
                    }
                    x = ind_boundary(x, p);
                }
            }
            FsKind::Ext4 => {
                ch.merge(self.fit_extent_tree(ino, Some(idx), phys, task)?);
            }
        }
        Ok(ch)
    }

    /// Keeps the extent tree's blocks in step with the number of extents: 4 in the inode,
    /// then leaves of `(block_size - 12) / 12`, indexed from the inode (4) or from index
    /// blocks. Allocates or frees the difference; dirties the blocks that hold `changed`.
    fn fit_extent_tree(
        &mut self,
        ino: Ino,
        changed: Option<usize>,
        goal: u64,
        task: Task,
    ) -> Result<Changes, FsError> {
        let mut ch = Changes::default();
        let per = ((self.cfg.block_size - 12) / 12) as usize;
        let extents = self.inodes.get(ino).unwrap().map.extents().len();
        let leaves = if extents <= 4 {
            0
        } else {
            extents.div_ceil(per)
        };
        let idx_blocks = if leaves <= 4 { 0 } else { leaves.div_ceil(per) };
        let have_leaves = self
            .inodes
            .get(ino)
            .unwrap()
            .map
            .meta()
            .iter()
            .filter(|m| m.key & (0xff << 56) == KEY_LEAF)
            .count();
        let have_idx = self
            .inodes
            .get(ino)
            .unwrap()
            .map
            .meta()
            .iter()
            .filter(|m| m.key & (0xff << 56) == KEY_XIDX)
            .count();
        for (kind, have, need) in [
            (KEY_LEAF, have_leaves, leaves),
            (KEY_XIDX, have_idx, idx_blocks),
        ] {
            for i in have..need {
                let b = self.meta_block(ino, goal, task).ok_or(FsError::NoSpace)?;
                self.inodes.get_mut(ino).unwrap().map.add_meta(MetaBlock {
                    key: kind | i as u64,
                    phys: b,
                });
                self.dirty_alloc(&mut ch, b, 1);
                ch.dirty(b);
                ch.dirty(self.inode_block(ino));
            }
            if need < have {
                let freed = self.inodes.get_mut(ino).unwrap().map.drop_meta(|m| {
                    m.key & (0xff << 56) != kind || ((m.key & 0xffff_ffff) as usize) < need
                });
                for b in freed {
                    self.space.free(b, 1);
                    self.dirty_alloc(&mut ch, b, 1);
                    ch.freed.push((b, 1));
                    ch.dirty(self.inode_block(ino));
                }
            }
        }
        match changed {
            Some(i) if leaves > 0 => {
                let leaf = (i.min(extents.saturating_sub(1)) / per) as u64;
                let m = self.mapping_block(ino, KEY_LEAF | leaf);
                if let Some(b) = m {
                    ch.dirty(b);
                }
            }
            _ => ch.dirty(self.inode_block(ino)),
        }
        Ok(ch)
    }

    /// Shrinks a file to `bytes`: frees the blocks past the new end and the mapping blocks
    /// no longer needed, and the inode's preallocation (`ext4_truncate`).
    pub fn truncate(&mut self, ino: Ino, bytes: u64) -> Result<Changes, FsError> {
        if self.dirs.contains_key(&ino) {
            return Err(FsError::IsDir(ino));
        }
        let mut ch = self.truncate_blocks(ino, bytes)?;
        self.alloc.discard_inode(&mut self.space, ino);
        self.inodes.get_mut(ino).unwrap().size = bytes;
        ch.dirty(self.inode_block(ino));
        Ok(ch.done())
    }

    fn truncate_blocks(&mut self, ino: Ino, bytes: u64) -> Result<Changes, FsError> {
        let bs = self.cfg.block_size as u64;
        let from = bytes.div_ceil(bs).min(u32::MAX as u64) as u32;
        let mut ch = Changes::default();
        let node = self.inodes.get_mut(ino).ok_or(FsError::NoInode(ino))?;
        let freed = node.map.cut_from(from);
        // Blocks past the end were promised for pages now gone.
        self.delayed.remove(ino, from, u32::MAX);
        for &(s, n) in &freed {
            self.space.free(s, n);
            self.dirty_alloc(&mut ch, s, n);
        }
        ch.freed.extend(freed);
        match self.cfg.kind {
            FsKind::Ext3 => {
                // Indirect blocks whose whole range is past the end go; the one holding the
                // new last block changes.
                let p = self.cfg.ptrs_per_block();
                let keep: FxHashSet<u64> = if from == 0 {
                    FxHashSet::default()
                } else {
                    ind_path(from as u64 - 1, p)?.into_iter().collect()
                };
                let first_key = |key: u64| -> u64 {
                    let (kind, i) = (key & (0xff << 56), key & 0x00ff_ffff_ffff_ffff);
                    match kind {
                        KEY_IND => 12,
                        KEY_DIND => 12 + p,
                        KEY_DIND_CHILD => 12 + p + i * p,
                        KEY_TIND => 12 + p + p * p,
                        KEY_TIND_MID => 12 + p + p * p + i * p * p,
                        _ => 12 + p + p * p + i * p,
                    }
                };
                let node = self.inodes.get_mut(ino).unwrap();
                let gone = node
                    .map
                    .drop_meta(|m| keep.contains(&m.key) || first_key(m.key) < from as u64);
                for b in gone {
                    self.space.free(b, 1);
                    self.dirty_alloc(&mut ch, b, 1);
                    ch.freed.push((b, 1));
                }
                if let Some(&k) = keep.iter().max_by_key(|k| first_key(**k)) {
                    if let Some(m) = self
                        .inodes
                        .get(ino)
                        .unwrap()
                        .map
                        .meta()
                        .iter()
                        .find(|m| m.key == k)
                    {
                        ch.dirty(m.phys);
                    }
                }
            }
            FsKind::Ext4 => {
                let n = self.inodes.get(ino).unwrap().map.extents().len();
                let c = self.fit_extent_tree(ino, n.checked_sub(1), 0, Task::default())?;
                ch.merge(c);
            }
        }
        ch.dirty(self.inode_block(ino));
        Ok(ch)
    }

    // ------------------------------------------------------------ goals

    /// Where a file's allocation at logical `l` should start (`ext4_ext_find_goal`,
    /// `ext3_find_goal`): after the run to its left, proportionally; else the inode's goal.
    fn data_goal(&self, ino: Ino, l: u32, task: Task) -> u64 {
        let node = self.inodes.get(ino).unwrap();
        let (left, right) = node.map.neighbours(l);
        match (left, right) {
            (Some(e), _) if e.logical <= l => e.phys + (l - e.logical) as u64,
            (_, Some(e)) if self.cfg.kind == FsKind::Ext4 => {
                e.phys.saturating_sub((e.logical - l) as u64)
            }
            _ => self.inode_goal(ino, task),
        }
    }

    /// `ext4_inode_to_goal_block` / `ext3_find_near`: the start of the inode's group (with
    /// flex_bg: its flex group's first group, the second for regular files), plus the
    /// process's colour when blocks are allocated at write time.
    fn inode_goal(&self, ino: Ino, task: Task) -> u64 {
        let mut g = self.inodes.group_of(ino);
        let flex = self.cfg.flex_bg_size;
        if flex >= 4 {
            g &= !(flex - 1);
            if self.inodes.get(ino).is_some_and(|i| i.mode == Mode::File) {
                g += 1;
            }
        }
        let g = g.min(self.cfg.groups - 1);
        let start = self.cfg.group_first_block(g);
        if self.cfg.delalloc {
            return start;
        }
        let last = self.cfg.blocks - 1;
        let colour = if start + self.cfg.blocks_per_group <= last {
            (task.pid as u64 % 16) * (self.cfg.blocks_per_group / 16)
        } else {
            (task.pid as u64 % 16) * ((last - start) / 16)
        };
        start + colour
    }

    // ------------------------------------------------------------ checking

    /// Checks the model's books as fsck would: every block owned once (mkfs metadata, the
    /// journal, a file's data or mapping blocks, free), the bitmaps agreeing with the
    /// owners, free + used = total per group, directory entries naming live inodes.
    pub fn check(&self) -> Result<(), String> {
        // Promises: only regular files' blocks with no disk block, only with delayed allocation.
        for ino in self.delayed.files() {
            if !self.cfg.delalloc || self.inodes.get(ino).is_none_or(|i| i.mode != Mode::File) {
                return Err(format!("inode {ino}: blocks promised without delayed allocation or a file"));
            }
            for (a, b) in self.delayed.runs_of(ino) {
                if let Some(l) = (a..b).find(|&l| self.map(ino, l).is_some()) {
                    return Err(format!("inode {ino}: block {l} promised and allocated"));
                }
            }
        }
        let n = self.cfg.blocks;
        let mut owner: Vec<u32> = vec![0; n as usize];
        let mut claim = |b: u64, who: u32, what: &str| -> Result<(), String> {
            if b >= n {
                return Err(format!("{what}: block {b} past the end"));
            }
            if owner[b as usize] != 0 {
                return Err(format!(
                    "{what}: block {b} owned by {} and {who}",
                    owner[b as usize]
                ));
            }
            owner[b as usize] = who;
            Ok(())
        };
        const META: u32 = u32::MAX;
        for b in 0..self.cfg.first_data_block {
            claim(b, META, "boot block")?;
        }
        for g in 0..self.cfg.groups {
            let l = self.layout[g as usize];
            let first = self.cfg.group_first_block(g);
            for b in first..first + self.cfg.super_blocks(g) {
                claim(b, META, "superblock copy")?;
            }
            claim(l.block_bitmap, META, "block bitmap")?;
            claim(l.inode_bitmap, META, "inode bitmap")?;
            for b in l.inode_table..l.inode_table + self.cfg.inode_table_blocks as u64 {
                claim(b, META, "inode table")?;
            }
        }
        for ino in self.inodes.live() {
            let node = self.inodes.get(ino).unwrap();
            for e in node.map.extents() {
                for b in e.phys..e.phys_end() {
                    claim(b, ino, "data")?;
                }
            }
            for m in node.map.meta() {
                claim(m.phys, ino, "mapping block")?;
            }
            if node.mode == Mode::Dir {
                let d = self
                    .dirs
                    .get(&ino)
                    .ok_or(format!("directory {ino} has no entries"))?;
                if node.map.blocks() != d.blocks as u64 {
                    return Err(format!(
                        "directory {ino}: {} blocks mapped, {} in use",
                        node.map.blocks(),
                        d.blocks
                    ));
                }
                for e in d.entries() {
                    if !self.inodes.is_used(e.ino) {
                        return Err(format!("directory {ino} names free inode {}", e.ino));
                    }
                }
            }
        }
        for b in 0..n {
            let used = self.space.is_disk_used(b);
            if used != (owner[b as usize] != 0) {
                return Err(format!(
                    "block {b}: bitmap says {}, owner {}",
                    if used { "used" } else { "free" },
                    owner[b as usize]
                ));
            }
        }
        let mut free_total = 0;
        for u in self.group_usage() {
            if u.free_blocks + u.used_blocks != u.blocks {
                return Err(format!("group at {}: free + used != total", u.first_block));
            }
            free_total += u.free_blocks;
        }
        let owned = owner.iter().filter(|&&o| o != 0).count() as u64;
        if free_total != self.space.disk_free() || owned + free_total != n {
            return Err(format!(
                "free blocks: {free_total} by group, {} in all, {owned} owned of {n}",
                self.space.disk_free()
            ));
        }
        Ok(())
    }
}

fn push_run(runs: &mut Vec<(u64, u64)>, b: u64, n: u64) {
    match runs.last_mut() {
        Some((s, l)) if *s + *l == b => *l += n,
        _ => runs.push((b, n)),
    }
}
