//! Property tests of the file-system model: random sequences of create, mkdir, write,
//! append, delayed-allocation promises, truncate, unlink, rmdir and close on small ext4 and
//! ext3 file systems, checking after every operation that
//! * every block has one owner (mkfs metadata, the journal, a file's data or mapping blocks,
//!   or free) and the bitmaps and per-group counts agree with the owners (`check`);
//! * a delete gives back exactly the file's data and mapping blocks;
//! * `map` agrees with `extents_of`;
//! * delayed allocation's promises are the test's own record of them: a promise for each
//!   block asked for with no disk block and no promise yet (all or none: ENOSPC when free
//!   blocks less those promised and `s_resv_clusters` cannot cover them), ended once by the
//!   block's allocation, a truncate past it or the file's unlink; none without delayed
//!   allocation;
//! * every dirtied metadata block is a metadata block (inode table, bitmap, descriptor,
//!   directory, extent or indirect block), and of the right group: the block bitmap and
//!   descriptor of each allocated run, the inode bitmap and inode table block of a new
//!   inode.
//!
//! Each property was seen failing once on a planted bug (see the commit message).

use proptest::prelude::*;
use ssdlab_core::fs::{
    AllocPolicy, Changes, Era, FileSystem, FsConfig, FsKind, Ino, MkfsOptions, Task, ROOT_INO,
};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug)]
enum Op {
    Create {
        dir: usize,
        name: u16,
    },
    Mkdir {
        dir: usize,
        name: u16,
    },
    Write {
        file: usize,
        start: u32,
        count: u32,
        cpu: u32,
    },
    Append {
        file: usize,
        count: u32,
    },
    Truncate {
        file: usize,
        blocks: u32,
    },
    Delay {
        file: usize,
        start: u32,
        count: u32,
    },
    Unlink {
        file: usize,
    },
    Rmdir {
        dir: usize,
    },
    Release {
        file: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<usize>(), 0u16..400).prop_map(|(dir, name)| Op::Create { dir, name }),
        1 => (any::<usize>(), 0u16..400).prop_map(|(dir, name)| Op::Mkdir { dir, name }),
        4 => (any::<usize>(), 0u32..300, 1u32..40, 0u32..2).prop_map(|(file, start, count, cpu)| Op::Write { file, start, count, cpu }),
        3 => (any::<usize>(), 1u32..300).prop_map(|(file, count)| Op::Append { file, count }),
        1 => (any::<usize>(), 0u32..200).prop_map(|(file, blocks)| Op::Truncate { file, blocks }),
        3 => (any::<usize>(), 0u32..300, 1u32..400).prop_map(|(file, start, count)| Op::Delay { file, start, count }),
        2 => any::<usize>().prop_map(|file| Op::Unlink { file }),
        1 => any::<usize>().prop_map(|dir| Op::Rmdir { dir }),
        1 => any::<usize>().prop_map(|file| Op::Release { file }),
    ]
}

/// The test's own record of the namespace.
#[derive(Default)]
struct Names {
    files: Vec<(Ino, Vec<u8>, Ino)>, // (parent, name, inode)
    dirs: Vec<(Ino, Vec<u8>, Ino)>,
}

fn configs() -> Vec<FsConfig> {
    let mut out = vec![];
    for (kind, era, alloc, size, bs) in [
        (
            FsKind::Ext4,
            Era::Today,
            AllocPolicy::Mballoc,
            24u64 << 20,
            1024,
        ),
        (
            FsKind::Ext4,
            Era::Today,
            AllocPolicy::Mballoc,
            64 << 20,
            4096,
        ),
        (
            FsKind::Ext3,
            Era::Y2008,
            AllocPolicy::Ext3Reservation,
            24 << 20,
            1024,
        ),
        (
            FsKind::Ext3,
            Era::Today,
            AllocPolicy::Mballoc,
            24 << 20,
            1024,
        ),
    ] {
        let mut o = MkfsOptions::new(kind, era, size);
        o.block_size = Some(bs);
        o.alloc = Some(alloc);
        // Small groups, so that allocations cross them and groups fill.
        out.push(FsConfig::new(&o).unwrap());
    }
    out
}

/// Every block a file owns: data and mapping blocks.
fn owned(fs: &FileSystem, ino: Ino) -> BTreeSet<u64> {
    let mut s: BTreeSet<u64> = fs
        .extents_of(ino)
        .iter()
        .flat_map(|e| e.phys..e.phys + e.len as u64)
        .collect();
    s.extend(fs.mapping_blocks_of(ino));
    s
}

fn freed(ch: &Changes) -> BTreeSet<u64> {
    ch.freed.iter().flat_map(|&(s, n)| s..s + n).collect()
}

/// Whether `b` is a metadata block: of the group tables, or a directory's or mapping block
/// (now, or freed by the operation).
fn is_metadata(fs: &FileSystem, b: u64, live_meta: &BTreeSet<u64>, ch: &Changes) -> bool {
    let c = fs.config();
    if b > c.first_data_block && b < c.first_data_block + 1 + c.desc_blocks as u64 {
        return true;
    }
    let in_tables = fs.layout().iter().any(|l| {
        b == l.block_bitmap
            || b == l.inode_bitmap
            || (b >= l.inode_table && b < l.inode_table + c.inode_table_blocks as u64)
    });
    in_tables || live_meta.contains(&b) || freed(ch).contains(&b)
}

/// Directory blocks and mapping blocks of every live inode.
fn live_metadata(fs: &FileSystem) -> BTreeSet<u64> {
    let mut s = BTreeSet::new();
    for ino in fs.live_inodes() {
        s.extend(fs.mapping_blocks_of(ino));
        if fs.is_dir(ino) {
            s.extend(
                fs.extents_of(ino)
                    .iter()
                    .flat_map(|e| e.phys..e.phys + e.len as u64),
            );
        }
    }
    s
}

fn check_changes(fs: &FileSystem, ch: &Changes) -> Result<(), TestCaseError> {
    let live = live_metadata(fs);
    for &b in &ch.metadata {
        prop_assert!(
            is_metadata(fs, b, &live, ch),
            "dirtied block {} is no metadata block",
            b
        );
    }
    let c = fs.config();
    for r in &ch.data {
        let g = c.group_of_block(r.phys) as usize;
        prop_assert!(
            ch.metadata.contains(&fs.layout()[g].block_bitmap),
            "run at {} without its group's block bitmap",
            r.phys
        );
        prop_assert!(
            ch.metadata.contains(&c.gdt_block_of(g as u32)),
            "run at {} without its group's descriptor block",
            r.phys
        );
    }
    Ok(())
}

fn check_maps(fs: &FileSystem, names: &Names) -> Result<(), TestCaseError> {
    for &(_, _, ino) in &names.files {
        let ex = fs.extents_of(ino);
        let mut next = 0u32;
        for e in &ex {
            prop_assert!(
                e.logical >= next,
                "extents of {} overlap or are unsorted: {:?}",
                ino,
                ex
            );
            // A hole before the extent maps to nothing.
            if e.logical > next {
                prop_assert_eq!(fs.map(ino, e.logical - 1), None);
            }
            for l in e.logical..e.logical_end() {
                prop_assert_eq!(fs.map(ino, l), Some(e.phys + (l - e.logical) as u64));
            }
            next = e.logical_end();
        }
        prop_assert_eq!(fs.map(ino, next), None);
        check_mapping_paths(fs, ino, &ex)?;
    }
    Ok(())
}

/// What a read of each mapped block goes through (`mapping_path`): the file's own mapping
/// blocks, as deep as the block's place in an ext3 tree (at most an index and a leaf on
/// ext4), the same path up to the `next` it names. (Not every mapping block is on a mapped
/// block's path: ext3's truncate keeps an indirect block whose range it cuts in part, holes
/// and all, as `ext3_truncate` does.)
fn check_mapping_paths(fs: &FileSystem, ino: Ino, ex: &[ssdlab_core::fs::Extent]) -> Result<(), TestCaseError> {
    let meta: BTreeSet<u64> = fs.mapping_blocks_of(ino).into_iter().collect();
    let p = fs.config().block_size as u64 / 4;
    let mut held: Option<(Vec<u64>, u32)> = None;
    for e in ex {
        for l in e.logical..e.logical_end() {
            let (path, next) = fs.mapping_path(ino, l);
            prop_assert!(next > l, "next {} for block {}", next, l);
            if let Some((before, until)) = &held {
                if l < *until {
                    prop_assert_eq!(&path, before, "block {} of {} within the last path's reach", l, ino);
                }
            }
            prop_assert!(path.iter().all(|b| meta.contains(b)), "{:?} not all of {:?}", path, meta);
            let x = l as u64;
            let depth = if fs.config().kind == FsKind::Ext4 {
                path.len().min(2)
            } else if x < 12 {
                0
            } else if x < 12 + p {
                1
            } else if x < 12 + p + p * p {
                2
            } else {
                3
            };
            prop_assert_eq!(path.len(), depth, "block {} of {}: {:?}", l, ino, path);
            held = Some((path, next));
        }
    }
    Ok(())
}

fn run(cfg: FsConfig, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let (mut fs, _) = FileSystem::mkfs(cfg).unwrap();
    let mut names = Names::default();
    let bs = fs.config().block_size as u64;
    let delalloc = fs.config().delalloc;
    // The test's record of the promised blocks of each file.
    let mut promised: BTreeMap<Ino, BTreeSet<u32>> = BTreeMap::new();
    for op in ops {
        let dirs: Vec<Ino> = std::iter::once(ROOT_INO)
            .chain(names.dirs.iter().map(|d| d.2))
            .collect();
        let ch = match op {
            Op::Create { dir, name } | Op::Mkdir { dir, name } => {
                let parent = dirs[dir % dirs.len()];
                let mkdir = matches!(op, Op::Mkdir { .. });
                let nm = format!("{}{name:05}", if mkdir { "d" } else { "f" }).into_bytes();
                let r = if mkdir {
                    fs.mkdir(parent, &nm, Task::default())
                } else {
                    fs.create(parent, &nm, Task::default())
                };
                match r {
                    Ok((ino, ch)) => {
                        let g = fs.inode_group(ino) as usize;
                        prop_assert!(ch.metadata.contains(&fs.layout()[g].inode_bitmap));
                        prop_assert!(ch.metadata.contains(&fs.inode_block(ino)));
                        prop_assert_eq!(fs.lookup(parent, &nm), Some(ino));
                        if mkdir {
                            names.dirs.push((parent, nm, ino))
                        } else {
                            names.files.push((parent, nm, ino))
                        }
                        ch
                    }
                    Err(_) => continue,
                }
            }
            Op::Write { file, count, .. } | Op::Append { file, count }
                if !names.files.is_empty() =>
            {
                let ino = names.files[file % names.files.len()].2;
                let size = fs.size_of(ino).unwrap();
                let (start, cpu) = match op {
                    Op::Write { start, cpu, .. } => (start, cpu),
                    _ => (size.div_ceil(bs) as u32, 0),
                };
                let before = owned(&fs, ino);
                let before_meta: BTreeSet<u64> = fs.mapping_blocks_of(ino).into_iter().collect();
                let _ = fs.set_size(ino, size.max((start + count) as u64 * bs));
                let allocated = fs.allocate(ino, start, count, Task { cpu, pid: 7 });
                // Blocks allocated have their promises end (a short allocation: those mapped).
                if let Some(p) = promised.get_mut(&ino) {
                    p.retain(|&l| fs.map(ino, l).is_none());
                }
                match allocated {
                    Ok(ch) => {
                        // Every block of the range is now mapped, unless space ran out.
                        let new: u64 = ch.data.iter().map(|r| r.len as u64).sum();
                        let after = owned(&fs, ino);
                        // Data stays; a mapping block may go when extents merge (then it
                        // is reported freed).
                        let gone: BTreeSet<u64> = before.difference(&after).copied().collect();
                        prop_assert!(gone.is_subset(&freed(&ch)), "blocks {:?} left the file unreported", gone);
                        prop_assert!(gone.iter().all(|b| before_meta.contains(b)), "data blocks {:?} left the file", gone);
                        if fs.free_blocks() > 64 {
                            prop_assert!(
                                (start..start + count).all(|l| fs.map(ino, l).is_some()),
                                "unmapped blocks after allocating {} at {}",
                                count,
                                start
                            );
                        }
                        prop_assert!(new <= count as u64);
                        ch
                    }
                    Err(_) => continue,
                }
            }
            Op::Truncate { file, blocks } if !names.files.is_empty() => {
                let ino = names.files[file % names.files.len()].2;
                let before = owned(&fs, ino);
                let ch = fs.truncate(ino, blocks as u64 * bs).unwrap();
                let after = owned(&fs, ino);
                let gone: BTreeSet<u64> = before.difference(&after).copied().collect();
                prop_assert_eq!(
                    &gone,
                    &freed(&ch),
                    "truncate gave back other blocks than it took away"
                );
                prop_assert!(fs
                    .extents_of(ino)
                    .iter()
                    .all(|e| e.logical_end() as u64 <= blocks as u64));
                if let Some(p) = promised.get_mut(&ino) {
                    p.retain(|&l| l < blocks);
                }
                ch
            }
            Op::Delay { file, start, count } if !names.files.is_empty() => {
                let ino = names.files[file % names.files.len()].2;
                let mine = promised.entry(ino).or_default();
                let new: Vec<u32> = (start..start + count)
                    .filter(|&l| fs.map(ino, l).is_none() && !mine.contains(&l))
                    .collect();
                let room = fs.free_blocks() >= fs.reserved_blocks() + new.len() as u64 + fs.config().resv_clusters;
                match fs.delay(ino, start, start + count) {
                    Ok(n) => {
                        prop_assert!(room, "{} blocks promised beyond the free ones", n);
                        prop_assert_eq!(n, new.len() as u64, "promised other blocks than the unmapped, unpromised ones");
                        if delalloc {
                            mine.extend(new);
                        }
                    }
                    Err(_) => prop_assert!(!room, "ENOSPC with room for {} blocks", new.len()),
                }
                Changes::default()
            }
            Op::Unlink { file } if !names.files.is_empty() => {
                let (parent, nm, ino) = names.files.remove(file % names.files.len());
                promised.remove(&ino);
                let before = owned(&fs, ino);
                let ch = fs.unlink(parent, &nm).unwrap();
                prop_assert_eq!(
                    &before,
                    &freed(&ch),
                    "a delete gave back other blocks than the file's"
                );
                prop_assert!(!fs.exists(ino));
                prop_assert_eq!(fs.lookup(parent, &nm), None);
                ch
            }
            Op::Rmdir { dir } if !names.dirs.is_empty() => {
                let i = dir % names.dirs.len();
                let (parent, nm, ino) = names.dirs[i].clone();
                let before = owned(&fs, ino);
                match fs.rmdir(parent, &nm) {
                    Ok(ch) => {
                        names.dirs.remove(i);
                        prop_assert_eq!(
                            &before,
                            &freed(&ch),
                            "rmdir gave back other blocks than the directory's"
                        );
                        ch
                    }
                    Err(_) => {
                        prop_assert!(
                            !fs.children(ino).is_empty(),
                            "rmdir of an empty directory failed"
                        );
                        continue;
                    }
                }
            }
            Op::Release { file } if !names.files.is_empty() => {
                fs.release(names.files[file % names.files.len()].2);
                Changes::default()
            }
            _ => continue,
        };
        check_changes(&fs, &ch)?;
        if let Err(e) = fs.check() {
            return Err(TestCaseError::fail(format!("after {op:?}: {e}")));
        }
        check_maps(&fs, &names)?;
        let total: u64 = promised.values().map(|p| p.len() as u64).sum();
        prop_assert_eq!(fs.reserved_blocks(), total, "after {:?}: promised blocks in all", op);
        for (&ino, p) in &promised {
            let runs: BTreeSet<u32> = fs.delayed_runs(ino).into_iter().flat_map(|(a, b)| a..b).collect();
            prop_assert_eq!(&runs, p, "after {:?}: inode {}'s promised blocks", op, ino);
        }
    }
    fs.unmount();
    fs.check().map_err(TestCaseError::fail)?;
    prop_assert_eq!(fs.preallocated_blocks(), 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn ext4_1k_keeps_its_books(ops in prop::collection::vec(op(), 1..160)) {
        run(configs()[0].clone(), ops)?;
    }

    #[test]
    fn ext4_4k_keeps_its_books(ops in prop::collection::vec(op(), 1..160)) {
        run(configs()[1].clone(), ops)?;
    }

    #[test]
    fn ext3_2008_keeps_its_books(ops in prop::collection::vec(op(), 1..160)) {
        run(configs()[2].clone(), ops)?;
    }

    #[test]
    fn ext3_on_todays_driver_keeps_its_books(ops in prop::collection::vec(op(), 1..160)) {
        run(configs()[3].clone(), ops)?;
    }
}

/// A file system filled to the last block by many writers, then emptied, is as mkfs left
/// it: every block given back.
#[test]
fn filling_and_emptying_gives_every_block_back() {
    for cfg in configs() {
        let (mut fs, _) = FileSystem::mkfs(cfg).unwrap();
        let free0 = fs.free_blocks();
        let mut files = vec![];
        for i in 0u32.. {
            let name = format!("f{i}");
            let Ok((ino, _)) = fs.create(ROOT_INO, name.as_bytes(), Task::default()) else {
                break;
            };
            let n = 1 + (i * 7919) % 90;
            let _ = fs.set_size(ino, n as u64 * fs.config().block_size as u64);
            let ok = fs.allocate(ino, 0, n, Task { cpu: i % 3, pid: i });
            files.push(name);
            if let Err(e) = ok {
                eprintln!("stopped at file {i}: {e}, {} free", fs.free_blocks());
                break;
            }
        }
        fs.check().unwrap();
        assert!(
            fs.free_blocks() < free0 / 50,
            "filled: {} of {} free",
            fs.free_blocks(),
            free0
        );
        for name in files {
            fs.unlink(ROOT_INO, name.as_bytes()).unwrap();
        }
        fs.unmount();
        fs.check().unwrap();
        // The root directory keeps the blocks it grew to.
        let root_growth = fs
            .extents_of(ROOT_INO)
            .iter()
            .map(|e| e.len as u64)
            .sum::<u64>()
            - 1
            + fs.mapping_blocks_of(ROOT_INO).len() as u64;
        assert_eq!(fs.free_blocks() + root_growth, free0);
    }
}

/// mkdir and rmdir as fio's dircreate and dirdelete use them: many directories made in one
/// parent (each with its block, top-level ones spread by Orlov), then removed: every block
/// and inode back, each block owned once all the way; a directory with an entry refuses
/// rmdir with NotEmpty and changes nothing.
#[test]
fn making_and_removing_directories_gives_every_block_and_inode_back() {
    for cfg in configs() {
        let (mut fs, _) = FileSystem::mkfs(cfg).unwrap();
        let (parent, _) = fs.mkdir(ROOT_INO, b"t0.0", Task::default()).unwrap();
        let (free0, inodes0) = (fs.free_blocks(), fs.free_inodes());
        let n = 300u32;
        let mut owned = BTreeSet::new();
        for i in 0..n {
            let (ino, ch) = fs.mkdir(parent, format!("d{i}").as_bytes(), Task { cpu: i % 2, pid: i }).unwrap();
            assert!(fs.is_dir(ino));
            for e in fs.extents_of(ino) {
                for b in e.phys..e.phys_end() {
                    assert!(owned.insert(b), "block {b} given to two directories");
                }
            }
            assert!(!ch.metadata.is_empty(), "a mkdir dirties its inode, bitmap and the parent's block");
        }
        fs.check().unwrap();
        assert_eq!(fs.free_inodes(), inodes0 - n as u64);
        assert!(fs.free_blocks() <= free0 - n as u64, "each directory has its first block");
        // A directory with an entry cannot be removed, and nothing changes.
        fs.create(fs.lookup(parent, b"d7").unwrap(), b"x", Task::default()).unwrap();
        let (free1, inodes1) = (fs.free_blocks(), fs.free_inodes());
        assert_eq!(fs.rmdir(parent, b"d7"), Err(ssdlab_core::fs::FsError::NotEmpty));
        assert_eq!((fs.free_blocks(), fs.free_inodes()), (free1, inodes1));
        fs.check().unwrap();
        let d7 = fs.lookup(parent, b"d7").unwrap();
        fs.unlink(d7, b"x").unwrap();
        for i in 0..n {
            fs.rmdir(parent, format!("d{i}").as_bytes()).unwrap();
        }
        fs.unmount();
        fs.check().unwrap();
        assert_eq!(fs.free_inodes(), inodes0, "every inode back");
        // The parent keeps the blocks it grew to for 300 entries.
        let parent_growth = fs.extents_of(parent).iter().map(|e| e.len as u64).sum::<u64>() - 1
            + fs.mapping_blocks_of(parent).len() as u64;
        assert_eq!(fs.free_blocks() + parent_growth, free0, "every directory block back");
    }
}

/// 2008's ext3 lets a reservation window start anywhere in a group and reach past its end
/// (`find_next_reservable_window` takes the group's last block as the last a window may
/// start from), so a file written across a group boundary takes the group's tail, shorter
/// than its window, and goes on after the next group's metadata: no tail is left free behind
/// it for later files to trip over.
#[test]
fn an_ext3_window_may_reach_past_its_groups_end() {
    let mut o = MkfsOptions::new(FsKind::Ext3, Era::Y2008, 1 << 30);
    o.block_size = Some(4096);
    o.alloc = Some(AllocPolicy::Ext3Reservation);
    let (mut fs, _) = FileSystem::mkfs(FsConfig::new(&o).unwrap()).unwrap();
    let bpg = fs.config().blocks_per_group;
    let (ino, _) = fs.create(ROOT_INO, b"big", Task::default()).unwrap();
    // Past group 0, in windows of 1027 blocks that do not divide a group.
    let blocks = (bpg + bpg / 4) as u32;
    fs.allocate(ino, 0, blocks, Task::default()).unwrap();
    fs.set_size(ino, blocks as u64 * 4096).unwrap();
    fs.release(ino);
    fs.check().unwrap();
    let usage = fs.group_usage();
    assert_eq!(usage[0].free_blocks, 0, "group 0's tail left free: {:?}", usage[0]);
    let g1 = fs.config().group_first_block(1);
    let last_of_g0 = fs.extents_of(ino).iter().any(|e| e.phys + e.len as u64 == g1);
    assert!(last_of_g0, "no extent ends at group 0's last block: {:?}", fs.extents_of(ino));
    assert_eq!(fs.reservation_window(ino), None, "the window goes back on release");
}

#[test]
fn a_read_of_a_fragmented_ext4_file_goes_through_its_index_block_and_the_leaf_holding_its_extent() {
    // 600 one-block extents (every other block written) on 1 KiB blocks: 84 extents a leaf,
    // so 8 leaves, more than the inode's 4 slots hold, and one index block over them.
    let cfg = configs().remove(0);
    assert_eq!((cfg.kind, cfg.block_size), (FsKind::Ext4, 1024));
    let (mut fs, _) = FileSystem::mkfs(cfg).unwrap();
    let (ino, _) = fs.create(ROOT_INO, b"frag", Task::default()).unwrap();
    for k in 0..600u32 {
        fs.set_size(ino, (2 * k as u64 + 1) * 1024).unwrap();
        fs.allocate(ino, 2 * k, 1, Task::default()).unwrap();
    }
    let meta = fs.mapping_blocks_of(ino);
    assert_eq!(meta.len(), 8 + 1, "{meta:?}");
    let mut leaves = BTreeSet::new();
    for k in 0..600u32 {
        let (path, next) = fs.mapping_path(ino, 2 * k);
        assert_eq!(path.len(), 2, "extent {k}: {path:?}");
        let leaf = k / 84;
        // The next leaf starts at its first extent's block; the last leaf reaches the end.
        let expect = if leaf == 7 { u32::MAX } else { 2 * 84 * (leaf + 1) };
        assert_eq!(next, expect, "extent {k}");
        assert_eq!(path[0], fs.mapping_path(ino, 0).0[0], "one index block");
        leaves.insert(path[1]);
        // A hole after an extent is looked up in that extent's leaf (the last whose first
        // block is not past it, as the index is searched).
        assert_eq!(fs.mapping_path(ino, 2 * k + 1).0, path, "hole after extent {k}");
    }
    assert_eq!(leaves.len(), 8);
}
