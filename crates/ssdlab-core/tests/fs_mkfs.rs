//! mkfs layouts against mke2fs's own arithmetic: numbers read with `dumpe2fs` and
//! `debugfs stat` from images made by mke2fs 1.47.0 (Debian, on Linux 6.18, 2025) with
//! `-E nodiscard`, and 1.41's rules where 2008 differs.

use ssdlab_core::fs::{
    Era, FileSystem, FsConfig, FsKind, MkfsOptions, MkfsWhat, JOURNAL_INO, LOST_FOUND_INO, ROOT_INO,
};

const MIB: u64 = 1 << 20;

fn make(
    kind: FsKind,
    era: Era,
    size: u64,
    f: impl Fn(&mut MkfsOptions),
) -> (FileSystem, ssdlab_core::fs::MkfsIo) {
    let mut o = MkfsOptions::new(kind, era, size);
    f(&mut o);
    let fs = FileSystem::mkfs(FsConfig::new(&o).unwrap()).unwrap();
    fs.0.check().unwrap();
    fs
}

fn blocks(fs: &FileSystem, ino: u32) -> Vec<(u64, u32)> {
    fs.extents_of(ino).iter().map(|e| (e.phys, e.len)).collect()
}

#[test]
fn ext4_256mib_as_mke2fs_1_47_makes_it() {
    let (fs, io) = make(FsKind::Ext4, Era::Today, 256 * MIB, |_| {});
    let c = fs.config();
    assert_eq!(
        (
            c.size_type,
            c.block_size,
            c.blocks,
            c.groups,
            c.inodes(),
            c.inode_table_blocks,
            c.reserved_gdt_blocks
        ),
        ("small", 1024, 262144, 32, 65536, 512, 256)
    );
    assert_eq!(blocks(&fs, ROOT_INO), vec![(7972, 1)]);
    assert_eq!(blocks(&fs, LOST_FOUND_INO), vec![(7973, 12)]);
    assert_eq!(blocks(&fs, JOURNAL_INO), vec![(114689, 8192)]);
    // dumpe2fs: group 0 has 207 free blocks (7986-8192); group 1 7421 (8964-16384).
    let u = fs.group_usage();
    assert_eq!(
        (u[0].free_blocks, u[1].free_blocks, u[2].free_blocks),
        (207, 7421, 8192)
    );
    // Lazy inode tables: only group 0's first inodes zeroed by mkfs.
    let itable: u64 = io
        .writes
        .iter()
        .filter(|w| w.what == MkfsWhat::InodeTable)
        .map(|w| w.bytes)
        .sum();
    assert_eq!(itable, 3 * 1024);
    assert_eq!(
        io.deferred_zeroing.iter().map(|d| d.1).sum::<u64>(),
        32 * 512 - 3
    );
}

#[test]
fn ext4_256mib_4k_blocks() {
    let (fs, _) = make(FsKind::Ext4, Era::Today, 256 * MIB, |o| {
        o.block_size = Some(4096)
    });
    let c = fs.config();
    assert_eq!(
        (
            c.blocks,
            c.groups,
            c.inodes_per_group,
            c.inode_table_blocks,
            c.reserved_gdt_blocks,
            c.journal_blocks
        ),
        (65536, 2, 32768, 2048, 31, 4096)
    );
    assert_eq!(
        (
            fs.layout()[0].block_bitmap,
            fs.layout()[0].inode_bitmap,
            fs.layout()[1].inode_table
        ),
        (33, 35, 2085)
    );
    assert_eq!(blocks(&fs, ROOT_INO), vec![(4133, 1)]);
    assert_eq!(blocks(&fs, LOST_FOUND_INO), vec![(4134, 4)]);
    assert_eq!(blocks(&fs, JOURNAL_INO), vec![(32801, 4096)]);
}

#[test]
fn ext3_today_puts_the_journal_after_lost_found_with_its_indirect_blocks() {
    let (fs, _) = make(FsKind::Ext3, Era::Today, 256 * MIB, |_| {});
    assert_eq!(
        (
            fs.layout()[0].block_bitmap,
            fs.layout()[0].inode_bitmap,
            fs.layout()[1].inode_table
        ),
        (259, 260, 8453)
    );
    assert_eq!(blocks(&fs, ROOT_INO), vec![(773, 1)]);
    assert_eq!(blocks(&fs, LOST_FOUND_INO), vec![(774, 12)]);
    // debugfs: (0-11):787-798, (IND):799, (12-267):800-1055, (DIND):1056, (IND):1057, ...
    let j = blocks(&fs, JOURNAL_INO);
    assert_eq!(&j[..3], &[(787, 12), (800, 256), (1058, 256)]);
    let mut meta = fs.mapping_blocks_of(JOURNAL_INO);
    meta.sort();
    assert_eq!(&meta[..3], &[799, 1056, 1057]);
    assert_eq!(meta.len(), 8225 - 8192);
}

#[test]
fn ext3_2gib_4k() {
    let (fs, _) = make(FsKind::Ext3, Era::Today, 2048 * MIB, |_| {});
    let c = fs.config();
    assert_eq!(
        (
            c.size_type,
            c.block_size,
            c.groups,
            c.inodes_per_group,
            c.inode_table_blocks,
            c.reserved_gdt_blocks,
            c.journal_blocks
        ),
        ("default", 4096, 16, 8192, 512, 127, 16384)
    );
    assert_eq!(blocks(&fs, ROOT_INO), vec![(643, 1)]);
    assert_eq!(blocks(&fs, JOURNAL_INO)[0], (649, 12));
    assert_eq!(fs.mapping_blocks_of(JOURNAL_INO).len(), 16401 - 16384);
}

#[test]
fn twenty_million_inodes_shrink_the_groups() {
    // mke2fs -N 20000000 on 8 GiB: 611 groups of 3432 blocks, 32736 inodes a group.
    let (fs, _) = make(FsKind::Ext4, Era::Today, 8192 * MIB, |o| {
        o.inode_count = Some(20_000_000)
    });
    let c = fs.config();
    assert_eq!(
        (
            c.blocks,
            c.blocks_per_group,
            c.groups,
            c.inodes_per_group,
            c.inode_table_blocks,
            c.reserved_gdt_blocks,
            c.journal_blocks
        ),
        (2096952, 3432, 611, 32736, 2046, 1024, 16384)
    );
    assert_eq!(
        (
            fs.layout()[0].block_bitmap,
            fs.layout()[0].inode_bitmap,
            fs.layout()[0].inode_table
        ),
        (1035, 1051, 1067)
    );
    // Tables skip the group descriptor backups: dumpe2fs's "Inode table at" of groups 1,
    // 2, 10, 11, 16.
    let it: Vec<u64> = [1, 2, 10, 11, 16]
        .iter()
        .map(|&g| fs.layout()[g].inode_table)
        .collect();
    assert_eq!(it, vec![4467, 6513, 33969, 36015, 54944]);
    assert_eq!(blocks(&fs, ROOT_INO), vec![(3113, 1)]);
    assert_eq!(blocks(&fs, JOURNAL_INO), vec![(1077648, 16384)]);
}

#[test]
fn mkfs_in_2008_zeroes_20_million_inodes_in_small_writes() {
    // e2fsprogs 1.41: inode tables zeroed by ext2fs_zero_blocks in 8-block strides; on the
    // same 8 GiB, 20 million 256-byte inodes are 4.9 GiB written as 32 KiB writes.
    let (fs, io) = make(FsKind::Ext3, Era::Y2008, 8192 * MIB, |o| {
        o.inode_count = Some(20_000_000)
    });
    let c = fs.config();
    assert_eq!(
        (c.inode_size, c.desc_size, c.lazy_itable_init),
        (256, 32, false)
    );
    let it: Vec<_> = io
        .writes
        .iter()
        .filter(|w| w.what == MkfsWhat::InodeTable)
        .collect();
    let total: u64 = it.iter().map(|w| w.bytes).sum();
    assert_eq!(total, c.inodes() * 256);
    assert!(it.iter().all(|w| w.bytes <= 8 * 4096));
    assert!(it.len() as u64 >= total / (8 * 4096));
    // Journal zeroed in 8-block writes too; 1.41's journal for 2 Mi blocks is 32768 blocks.
    assert_eq!(c.journal_blocks, 32768);
    // Today's mkfs would leave them to ext4lazyinit (ext4) or write 4 MiB at a time.
    let (_, io) = make(FsKind::Ext3, Era::Today, 8192 * MIB, |o| {
        o.inode_count = Some(20_000_000)
    });
    assert!(io
        .writes
        .iter()
        .filter(|w| w.what == MkfsWhat::InodeTable)
        .all(|w| w.bytes <= 4 << 20));
}

#[test]
fn journal_sizes_by_era() {
    use ssdlab_core::fs::layout::default_journal_blocks as j;
    for (blocks, old, new) in [
        (1000, None, None),
        (30000, Some(1024), Some(1024)),
        (300_000, Some(8192), Some(8192)),
        (2 << 20, Some(32768), Some(16384)),
        (10 << 20, Some(32768), Some(65536)),
        (100 << 20, Some(32768), Some(262144)),
    ] {
        assert_eq!(
            (j(Era::Y2008, blocks), j(Era::Today, blocks)),
            (old, new),
            "{blocks} blocks"
        );
    }
    // 1.41 gave small file systems 128-byte inodes.
    let c = FsConfig::new(&MkfsOptions::new(FsKind::Ext3, Era::Y2008, 256 * MIB)).unwrap();
    assert_eq!((c.inode_size, c.block_size), (128, 1024));
}
