//! mkfs geometry: what `mke2fs` derives from a device size and a few options, and where it
//! puts each group's metadata. A model of `misc/mke2fs.c`, `misc/mke2fs.conf`,
//! `lib/ext2fs/initialize.c`, `lib/ext2fs/alloc_tables.c` and `lib/ext2fs/mkjournal.c`
//! of e2fsprogs, in two versions: 1.41 (2008) and 1.47 (today).

use super::space::Bits;
use super::FsError;

/// The on-disk format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FsKind {
    /// Block-mapped files (12 direct, indirect, double, triple), no flex_bg.
    Ext3,
    /// Extent-mapped files, flex_bg.
    Ext4,
}

/// Which e2fsprogs (and kernel of the same time) the defaults come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// e2fsprogs 1.41 and Linux 2.6.2x (2008).
    Y2008,
    /// e2fsprogs 1.47 and Linux 6.x (today).
    Today,
}

/// How blocks are allocated to files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AllocPolicy {
    /// ext3's `fs/ext3/balloc.c`: no delayed allocation, per-file reservation windows.
    Ext3Reservation,
    /// ext4's `fs/ext4/mballoc.c`: delayed allocation, locality groups, preallocation.
    Mballoc,
}

/// What one runs `mke2fs` with.
#[derive(Clone, Debug, PartialEq)]
pub struct MkfsOptions {
    pub kind: FsKind,
    pub era: Era,
    pub size_bytes: u64,
    /// `-b`; else from the size type of `mke2fs.conf`.
    pub block_size: Option<u32>,
    /// `-N`: the number of inodes; else from the inode ratio.
    pub inode_count: Option<u64>,
    /// `-i`: bytes per inode; else from the size type.
    pub inode_ratio: Option<u64>,
    /// `-I`: inode size; else from the size type and era.
    pub inode_size: Option<u32>,
    /// `-J size=`: journal blocks; else `ext2fs_default_journal_size`.
    pub journal_blocks: Option<u32>,
    /// `-E lazy_itable_init=`; else the era's default.
    pub lazy_itable_init: Option<bool>,
    /// The allocator; else ext3's for ext3 in 2008, mballoc otherwise (today's kernel mounts
    /// ext3 with the ext4 driver, so an ext3 file system today is allocated by mballoc).
    pub alloc: Option<AllocPolicy>,
}

impl MkfsOptions {
    pub fn new(kind: FsKind, era: Era, size_bytes: u64) -> Self {
        MkfsOptions {
            kind,
            era,
            size_bytes,
            block_size: None,
            inode_count: None,
            inode_ratio: None,
            inode_size: None,
            journal_blocks: None,
            lazy_itable_init: None,
            alloc: None,
        }
    }
}

/// mballoc's tunables (`/sys/fs/ext4/<dev>/mb_*`), defaults from `fs/ext4/mballoc.c`.
#[derive(Clone, Debug, PartialEq)]
pub struct MballocParams {
    /// `mb_stream_req`: files up to this many blocks share the locality group (16).
    pub stream_req: u32,
    /// `mb_group_prealloc`: the locality group's preallocation in blocks (512).
    pub group_prealloc: u32,
    /// `mb_max_to_scan`: extents measured before taking the best found (200).
    pub max_to_scan: u32,
    /// `mb_min_to_scan`: extents measured before a satisfying best is taken (10).
    pub min_to_scan: u32,
    /// `mb_order2_req`: requests of 2^this or more may use the power-of-two pass (2).
    pub order2_reqs: u32,
    /// `mb_best_avail_max_trim_order`: how far CR_BEST_AVAIL_LEN shortens a goal (3).
    pub best_avail_trim_order: u32,
    /// A locality group's preallocation lists are trimmed to 5 once they pass 8
    /// (`ext4_mb_add_n_trim`, `ext4_mb_discard_lg_preallocations`).
    pub lg_list_max: u32,
    pub lg_list_keep: u32,
}

impl Default for MballocParams {
    fn default() -> Self {
        MballocParams {
            stream_req: 16,
            group_prealloc: 512,
            max_to_scan: 200,
            min_to_scan: 10,
            order2_reqs: 2,
            best_avail_trim_order: 3,
            lg_list_max: 8,
            lg_list_keep: 5,
        }
    }
}

/// Everything the model needs to know about a file system, as `mke2fs` derived it.
#[derive(Clone, Debug, PartialEq)]
pub struct FsConfig {
    pub kind: FsKind,
    pub era: Era,
    pub alloc: AllocPolicy,
    /// Delayed allocation: ext4's default mount option `delalloc`, on with mballoc. Not on
    /// ext3, even under today's ext4 driver with mballoc: it refuses `delalloc` on an ext3
    /// file system ("Mount option(s) incompatible with ext3", Linux 6.18 here) and allocates
    /// a block-mapped file's blocks at write time.
    pub delalloc: bool,
    /// The `mke2fs.conf` size type: floppy, small, default, big, huge.
    pub size_type: &'static str,
    pub block_size: u32,
    pub blocks: u64,
    /// 1 with 1 KiB blocks (block 0 is the boot block), else 0.
    pub first_data_block: u64,
    pub blocks_per_group: u64,
    pub groups: u32,
    pub inodes_per_group: u32,
    pub inode_size: u32,
    pub inode_table_blocks: u32,
    /// 32 bytes, or 64 with the 64bit feature (ext4 today).
    pub desc_size: u32,
    pub desc_blocks: u32,
    pub reserved_gdt_blocks: u32,
    /// Groups per flex group; 1 without flex_bg.
    pub flex_bg_size: u32,
    pub journal_blocks: u32,
    pub lazy_itable_init: bool,
    /// Group descriptors carry checksums (uninit_bg in 2008, metadata_csum today): mkfs
    /// marks groups BLOCK_UNINIT/INODE_UNINIT and skips their bitmaps.
    pub group_csum: bool,
    pub dir_index: bool,
    /// Blocks reserved for root (`-m 5`).
    pub reserved_blocks: u64,
    /// Blocks ext4 keeps back from delayed allocation (`s_resv_clusters`: 2% of the file
    /// system, at most 4096; `ext4_calculate_resv_clusters`, which keeps none without the
    /// extent feature). 0 for ext3's allocator.
    pub resv_clusters: u64,
    /// ext3's default reservation window (`EXT3_DEFAULT_RESERVE_BLOCKS`, 8) and its
    /// largest (`EXT3_MAX_RESERVE_BLOCKS`, 1027).
    pub rsv_window: u32,
    pub rsv_window_max: u32,
    pub mballoc: MballocParams,
}

/// The metadata of one group, as placed by mkfs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupLayout {
    /// A superblock backup (and group descriptor copies) is at the group's start.
    pub has_super: bool,
    pub block_bitmap: u64,
    pub inode_bitmap: u64,
    pub inode_table: u64,
}

/// Sizes, ratios and inode sizes of `mke2fs.conf`'s size types, per era.
struct SizeType {
    name: &'static str,
    block_size: u32,
    inode_ratio: u64,
    inode_size: u32,
}

/// `mke2fs` picks the size type from the size: floppy < 3 MiB, small < 512 MiB, default
/// < 4 TiB, big < 16 TiB, huge above (`parse_fs_type` in `misc/mke2fs.c`; big and huge are
/// not in 1.41). Values from `misc/mke2fs.conf.in`: 1.41 gave small and floppy 128-byte
/// inodes; 1.46.4 made 256 the default everywhere (tytso/e2fsprogs issue #54).
fn size_type(era: Era, size: u64) -> SizeType {
    const MIB: u64 = 1 << 20;
    let small_inode = if era == Era::Y2008 { 128 } else { 256 };
    if size < 3 * MIB {
        SizeType {
            name: "floppy",
            block_size: 1024,
            inode_ratio: 8192,
            inode_size: small_inode,
        }
    } else if size < 512 * MIB {
        SizeType {
            name: "small",
            block_size: 1024,
            inode_ratio: 4096,
            inode_size: small_inode,
        }
    } else if era == Era::Today && size >= 16 << 40 {
        SizeType {
            name: "huge",
            block_size: 4096,
            inode_ratio: 65536,
            inode_size: 256,
        }
    } else if era == Era::Today && size >= 4 << 40 {
        SizeType {
            name: "big",
            block_size: 4096,
            inode_ratio: 32768,
            inode_size: 256,
        }
    } else {
        SizeType {
            name: "default",
            block_size: 4096,
            inode_ratio: 16384,
            inode_size: 256,
        }
    }
}

/// `ext2fs_default_journal_size` (`lib/ext2fs/mkjournal.c`): journal blocks by the file
/// system's block count. 1.41 stopped at 32768 blocks (128 MiB of 4 KiB blocks) from 1 Mi
/// blocks up; today's table goes on to 262144 blocks (1 GiB) from 32 Mi blocks up.
pub fn default_journal_blocks(era: Era, blocks: u64) -> Option<u32> {
    const K: u64 = 1024;
    if blocks < 2048 {
        return None;
    }
    let j = match era {
        Era::Y2008 => match blocks {
            b if b < 32768 => 1024,
            b if b < 256 * K => 4096,
            b if b < 512 * K => 8192,
            b if b < 1024 * K => 16384,
            _ => 32768,
        },
        Era::Today => match blocks {
            b if b < 32768 => 1024,
            b if b < 256 * K => 4096,
            b if b < 512 * K => 8192,
            b if b < 4096 * K => 16384,
            b if b < 8192 * K => 32768,
            b if b < 16384 * K => 65536,
            b if b < 32768 * K => 131072,
            _ => 262144,
        },
    };
    Some(j)
}

/// Whether group `g` holds a superblock backup under sparse_super: 0, 1 and the powers of
/// 3, 5 and 7 (`ext2fs_bg_has_super`).
pub fn has_super(g: u32) -> bool {
    if g <= 1 {
        return true;
    }
    if g.is_multiple_of(2) {
        return false;
    }
    [3u64, 5, 7].iter().any(|&p| {
        let mut x = p;
        while x < g as u64 {
            x *= p;
        }
        x == g as u64
    })
}

impl FsConfig {
    /// The geometry `mke2fs` derives (`ext2fs_initialize`).
    pub fn new(o: &MkfsOptions) -> Result<FsConfig, FsError> {
        let st = size_type(o.era, o.size_bytes);
        let block_size = o.block_size.unwrap_or(st.block_size);
        if ![1024, 2048, 4096].contains(&block_size) {
            return Err(FsError::Config(format!(
                "block size {block_size} is not 1024, 2048 or 4096"
            )));
        }
        let inode_size = o.inode_size.unwrap_or(st.inode_size);
        if !inode_size.is_power_of_two() || inode_size < 128 || inode_size > block_size {
            return Err(FsError::Config(format!("inode size {inode_size}")));
        }
        let ext4 = o.kind == FsKind::Ext4;
        let today = o.era == Era::Today;
        let desc_size = if ext4 && today { 64 } else { 32 };
        let first_data_block = if block_size == 1024 { 1 } else { 0 };
        let mut blocks = o.size_bytes / block_size as u64;
        // Block numbers of 32 bits: ext3's limit, and ext4's without the 64bit feature
        // (mke2fs: "too big to be expressed in 32 bits"). The model keeps them below 2^32
        // for every kind, today's ext4 included.
        if blocks > u32::MAX as u64 {
            return Err(FsError::Config(format!(
                "{} blocks of {block_size} bytes: more than 2^32 - 1, the model's limit (16 TiB at 4 KiB blocks)",
                blocks
            )));
        }
        let ratio = o.inode_ratio.unwrap_or(st.inode_ratio);
        let flex_bg_size = if ext4 { 16 } else { 1 };
        let mut bpg = 8 * block_size as u64;
        let max_ipg = 65536 - block_size / inode_size; // EXT2_MAX_INODES_PER_GROUP
        loop {
            if blocks <= first_data_block + 64 {
                return Err(FsError::Config("device too small".into()));
            }
            let groups = (blocks - first_data_block).div_ceil(bpg) as u32;
            let inodes = o
                .inode_count
                .unwrap_or(blocks * block_size as u64 / ratio)
                .max(16);
            let mut ipg = inodes.div_ceil(groups as u64);
            if ipg > 8 * block_size as u64 {
                if bpg >= 256 {
                    bpg -= 8; // ext2fs_initialize: "try again with slightly different parameters"
                    continue;
                }
                return Err(FsError::Config("too many inodes".into()));
            }
            ipg = ipg.min(max_ipg as u64);
            // Fill the inode table's last block, then keep a multiple of 8.
            let per_block = (block_size / inode_size) as u64;
            let mut itb = (ipg * inode_size as u64).div_ceil(block_size as u64);
            ipg = (itb * per_block) & !7;
            itb = (ipg * inode_size as u64).div_ceil(block_size as u64);
            let desc_per_block = (block_size / desc_size) as u64;
            let desc_blocks = (groups as u64).div_ceil(desc_per_block) as u32;
            // calc_reserved_gdt_blocks: room to grow 1024 times, or to 2^32 blocks.
            let max_blocks = if blocks < 0xffff_ffff / 1024 {
                blocks * 1024
            } else {
                0xffff_ffff
            };
            let rsv_groups = (max_blocks - first_data_block).div_ceil(bpg);
            let reserved_gdt = (rsv_groups
                .div_ceil(desc_per_block)
                .saturating_sub(desc_blocks as u64))
            .min(block_size as u64 / 4) as u32;
            let overhead = 3 + itb + reserved_gdt as u64;
            if overhead > bpg {
                return Err(FsError::Config("too many inodes for the group size".into()));
            }
            // A last group too small for its metadata (plus 50 blocks) is dropped.
            let mut last_overhead = 2 + itb;
            if has_super(groups - 1) {
                last_overhead += 1 + desc_blocks as u64 + reserved_gdt as u64;
            }
            let rem = (blocks - first_data_block) % bpg;
            if groups == 1 && rem > 0 && rem < last_overhead {
                return Err(FsError::Config("device too small".into()));
            }
            if rem > 0 && rem < last_overhead + 50 {
                blocks -= rem;
                continue;
            }
            let journal_blocks = match o.journal_blocks {
                Some(j) => j,
                None => default_journal_blocks(o.era, blocks)
                    .ok_or_else(|| FsError::Config("too small for a journal".into()))?,
            };
            let alloc = o
                .alloc
                .unwrap_or(if o.kind == FsKind::Ext3 && o.era == Era::Y2008 {
                    AllocPolicy::Ext3Reservation
                } else {
                    AllocPolicy::Mballoc
                });
            let mballoc = alloc == AllocPolicy::Mballoc;
            return Ok(FsConfig {
                kind: o.kind,
                era: o.era,
                alloc,
                delalloc: mballoc && o.kind == FsKind::Ext4,
                size_type: st.name,
                block_size,
                blocks,
                first_data_block,
                blocks_per_group: bpg,
                groups,
                inodes_per_group: ipg as u32,
                inode_size,
                inode_table_blocks: itb as u32,
                desc_size,
                desc_blocks,
                reserved_gdt_blocks: reserved_gdt,
                flex_bg_size,
                journal_blocks,
                // 1.41 zeroed inode tables unless told not to; today's mke2fs leaves them
                // to the kernel's ext4lazyinit thread when the kernel has it.
                lazy_itable_init: o.lazy_itable_init.unwrap_or(today && ext4),
                group_csum: ext4,
                dir_index: true,
                reserved_blocks: blocks * 5 / 100,
                // None without extents: they are for extent-tree splits.
                resv_clusters: if mballoc && ext4 {
                    (blocks / 50).min(4096)
                } else {
                    0
                },
                rsv_window: 8,
                rsv_window_max: 1027,
                mballoc: MballocParams::default(),
            });
        }
    }

    pub fn inodes(&self) -> u64 {
        self.groups as u64 * self.inodes_per_group as u64
    }
    pub fn group_first_block(&self, g: u32) -> u64 {
        self.first_data_block + g as u64 * self.blocks_per_group
    }
    /// One past the group's last block.
    pub fn group_end_block(&self, g: u32) -> u64 {
        (self.group_first_block(g) + self.blocks_per_group).min(self.blocks)
    }
    pub fn group_of_block(&self, b: u64) -> u32 {
        ((b - self.first_data_block) / self.blocks_per_group) as u32
    }
    /// Blocks the group's superblock copy, descriptors and reserved descriptors take.
    pub fn super_blocks(&self, g: u32) -> u64 {
        if has_super(g) {
            1 + self.desc_blocks as u64 + self.reserved_gdt_blocks as u64
        } else {
            0
        }
    }
    /// The block holding group `g`'s descriptor in the primary table.
    pub fn gdt_block_of(&self, g: u32) -> u64 {
        let per = (self.block_size / self.desc_size) as u64;
        self.first_data_block + 1 + g as u64 / per
    }
    /// Addresses per indirect block.
    pub fn ptrs_per_block(&self) -> u64 {
        self.block_size as u64 / 4
    }
}

/// Where mkfs puts each group's bitmaps and inode table, and the blocks they and the
/// superblock copies take.
pub fn place_tables(cfg: &FsConfig) -> (Vec<GroupLayout>, Bits) {
    let mut used = Bits::new(cfg.blocks);
    if cfg.first_data_block > 0 {
        used.set_range(0, cfg.first_data_block, true);
    }
    let mut layout: Vec<GroupLayout> = Vec::with_capacity(cfg.groups as usize);
    for g in 0..cfg.groups {
        let n = cfg.super_blocks(g);
        used.set_range(cfg.group_first_block(g), n, true);
        layout.push(GroupLayout {
            has_super: has_super(g),
            block_bitmap: 0,
            inode_bitmap: 0,
            inode_table: 0,
        });
    }
    let flex = cfg.flex_bg_size as u64;
    let ipb = cfg.inode_table_blocks as u64;
    for g in 0..cfg.groups {
        let gfirst = cfg.group_first_block(g);
        let gend = cfg.group_end_block(g);
        if flex <= 1 {
            // Without flex_bg: block bitmap, inode bitmap, inode table, first free in group.
            let bb = first_free_run(&used, gfirst, gend, 1, cfg.first_data_block).unwrap_or(gfirst);
            used.set(bb, true);
            let ib = first_free_run(&used, gfirst, gend, 1, cfg.first_data_block).unwrap_or(gfirst);
            used.set(ib, true);
            let it =
                first_free_run(&used, gfirst, gend, ipb, cfg.first_data_block).unwrap_or(gfirst);
            used.set_range(it, ipb, true);
            layout[g as usize] = GroupLayout {
                has_super: has_super(g),
                block_bitmap: bb,
                inode_bitmap: ib,
                inode_table: it,
            };
            continue;
        }
        // flex_bg (ext2fs_allocate_group_table with flexbg_offset): each kind of table of
        // the flex group's groups packed together from the flex group's start.
        let last_grp = (g | (flex as u32 - 1)).min(cfg.groups - 1);
        let last_blk = cfg.group_end_block(last_grp);
        let rem = (last_grp - g + 1) as u64;
        let mut table_offset = flex;
        let in_flex = g as u64 % flex;
        if in_flex == 0 && last_grp == cfg.groups - 1 {
            // The last flex group keeps its tables contiguous.
            table_offset = last_grp as u64 & (flex - 1);
            table_offset = if table_offset == 0 {
                flex
            } else {
                table_offset + 1
            };
        }
        let prev = if in_flex != 0 {
            Some(layout[g as usize - 1].block_bitmap + 1)
        } else {
            None
        };
        let start = flexbg_offset(cfg, &used, g, prev, rem, 1);
        let bb = first_free_run(&used, start, last_blk, 1, cfg.first_data_block).unwrap_or(start);
        used.set(bb, true);
        let prev = Some(if in_flex != 0 {
            layout[g as usize - 1].inode_bitmap + 1
        } else {
            bb + table_offset
        });
        let start = flexbg_offset(cfg, &used, g, prev, rem, 1);
        let ib = first_free_run(&used, start, last_blk, 1, cfg.first_data_block).unwrap_or(start);
        used.set(ib, true);
        let prev = Some(if in_flex != 0 {
            layout[g as usize - 1].inode_table + ipb
        } else {
            ib + table_offset
        });
        let start = flexbg_offset(cfg, &used, g, prev, rem, ipb);
        let it = first_free_run(&used, start, last_blk, ipb, cfg.first_data_block)
            .or_else(|| first_free_run(&used, gfirst, gend, ipb, cfg.first_data_block))
            .unwrap_or(start);
        used.set_range(it, ipb, true);
        layout[g as usize] = GroupLayout {
            has_super: has_super(g),
            block_bitmap: bb,
            inode_bitmap: ib,
            inode_table: it,
        };
    }
    (layout, used)
}

/// `ext2fs_get_free_blocks2`: the first `b` in `[start, finish)` with `[b, b+num)` free.
fn first_free_run(
    used: &Bits,
    start: u64,
    finish: u64,
    num: u64,
    first_data_block: u64,
) -> Option<u64> {
    let mut b = start.max(first_data_block);
    while b < finish {
        let s = used.next_clear(b, finish)?;
        if s + num > used.len() {
            return None;
        }
        let e = used.next_set(s, s + num);
        if e >= s + num {
            return Some(s);
        }
        b = e;
    }
    None
}

/// `flexbg_offset` in `lib/ext2fs/alloc_tables.c`: keep packing after the previous group's
/// table if room is there, else the first place in the flex group with room for the rest.
fn flexbg_offset(
    cfg: &FsConfig,
    used: &Bits,
    g: u32,
    prev: Option<u64>,
    rem_grp: u64,
    elem: u64,
) -> u64 {
    let flex = cfg.flex_bg_size;
    let flexbg = g / flex;
    let size = (rem_grp * elem).min(cfg.blocks_per_group / 4);
    if let Some(p) = prev.filter(|&p| p > 0 && p < cfg.blocks) {
        if let Some(b) = first_free_run(used, p, p + size, elem, cfg.first_data_block) {
            return b;
        }
    }
    let start = cfg.group_first_block(flexbg * flex);
    let last_grp = (g | (flex - 1)).min(cfg.groups - 1);
    let last_blk = cfg.group_end_block(last_grp);
    first_free_run(used, start, last_blk, size, cfg.first_data_block)
        .or_else(|| first_free_run(used, start, last_blk, elem, cfg.first_data_block))
        .or_else(|| first_free_run(used, 0, last_blk, elem, cfg.first_data_block))
        .unwrap_or(start)
}

/// The group mkfs starts the journal in: the middle of the file system, the emptiest of it
/// and its neighbours (`get_midpoint_journal_block` today, the same arithmetic inline in
/// 1.41's `write_journal_inode`).
pub fn journal_goal_group(cfg: &FsConfig, free_in_group: impl Fn(u32) -> u64) -> u32 {
    let mid = (cfg.blocks - cfg.first_data_block) / 2;
    let mut group = (mid.saturating_sub(cfg.first_data_block) / cfg.blocks_per_group) as u32;
    let log_flex = cfg.flex_bg_size;
    let start;
    if log_flex > 1 && group > log_flex {
        group &= !(log_flex - 1);
        while group < cfg.groups && free_in_group(group) == 0 {
            group += 1;
        }
        if group == cfg.groups {
            group = 0;
        }
        start = group;
    } else {
        start = group.saturating_sub(1);
    }
    let end = if group + 1 < cfg.groups {
        group + 1
    } else {
        group
    };
    let mut best = start;
    for i in start + 1..=end {
        if free_in_group(i) > free_in_group(best) {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_numbers_stop_at_32_bits() {
        // 16 TiB of 4 KiB blocks is 2^32 blocks: one too many.
        let err = FsConfig::new(&MkfsOptions::new(FsKind::Ext3, Era::Y2008, 16 << 40)).unwrap_err();
        assert!(err.to_string().contains("more than 2^32 - 1"), "{err}");
        let c = FsConfig::new(&MkfsOptions::new(FsKind::Ext3, Era::Y2008, (16 << 40) - 4096)).unwrap();
        assert_eq!(c.blocks, u32::MAX as u64);
    }

    #[test]
    fn sparse_super_groups() {
        let g: Vec<u32> = (0..100).filter(|&g| has_super(g)).collect();
        assert_eq!(g, vec![0, 1, 3, 5, 7, 9, 25, 27, 49, 81]);
    }

    #[test]
    fn small_ext4_today_matches_mke2fs_1_47() {
        // `mkfs.ext4` 1.47.0 on a 256 MiB image (dumpe2fs): 1 KiB blocks, 32 groups of
        // 8192, 2048 inodes and 512 table blocks a group, 256 reserved GDT blocks, block
        // bitmaps from 260, inode bitmaps from 276, inode tables from 292; group 15's table
        // at 8452 (after group 1's backup); an 8 MiB journal.
        let c = FsConfig::new(&MkfsOptions::new(FsKind::Ext4, Era::Today, 256 << 20)).unwrap();
        assert_eq!(
            (
                c.block_size,
                c.groups,
                c.inodes_per_group,
                c.inode_table_blocks,
                c.reserved_gdt_blocks,
                c.journal_blocks
            ),
            (1024, 32, 2048, 512, 256, 8192)
        );
        let (l, _) = place_tables(&c);
        assert_eq!(
            (l[0].block_bitmap, l[0].inode_bitmap, l[0].inode_table),
            (260, 276, 292)
        );
        assert_eq!((l[1].block_bitmap, l[1].inode_table), (261, 804));
        assert_eq!(l[15].inode_table, 8452);
        assert_eq!(
            (l[16].block_bitmap, l[16].inode_bitmap, l[16].inode_table),
            (131073, 131089, 131105)
        );
    }
}
