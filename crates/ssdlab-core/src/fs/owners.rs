//! Who owns a block: the question `debugfs`'s `icheck` answers, asked of runs of blocks a
//! power cut lost. Metadata is found from the group layout, files' blocks from their maps;
//! what nothing owns is free (a write to a block freed since).

use super::{FileSystem, Ino, JOURNAL_INO};

/// What a block holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Owner {
    /// Boot block, a superblock copy, group descriptors (reserved ones too).
    Super,
    BlockBitmap(u32),
    InodeBitmap(u32),
    /// Inode-table block of a group, holding inodes from `.1` on.
    InodeTable(u32, Ino),
    /// The journal's log.
    Journal,
    /// A file's or a directory's data block.
    Data(Ino),
    /// An extent-tree or indirect block of the inode.
    Mapping(Ino),
    Free,
}

/// A run of blocks with one owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owned {
    pub start: u64,
    pub len: u64,
    pub owner: Owner,
}

impl FileSystem {
    /// The owners of `runs` (block, count; sorted, not overlapping), split where owners
    /// change, in block order. Costs the groups plus the live inodes' extents times the log
    /// of the runs, whatever the runs' length.
    pub fn owners(&self, runs: &[(u64, u64)]) -> Vec<Owned> {
        debug_assert!(runs.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0), "sorted runs");
        let mut found: Vec<Owned> = Vec::new();
        let mut claim = |start: u64, len: u64, owner: Owner| {
            // The runs that end after `start`, while they begin before the claimed range ends.
            let first = runs.partition_point(|&(s, n)| s + n <= start);
            for &(s, n) in &runs[first..] {
                if s >= start + len {
                    break;
                }
                let (a, b) = (s.max(start), (s + n).min(start + len));
                found.push(Owned { start: a, len: b - a, owner });
            }
        };
        let cfg = &self.cfg;
        claim(0, cfg.first_data_block, Owner::Super);
        let ipb = (cfg.block_size / cfg.inode_size) as u64;
        for g in 0..cfg.groups {
            let l = self.layout[g as usize];
            claim(cfg.group_first_block(g), cfg.super_blocks(g), Owner::Super);
            claim(l.block_bitmap, 1, Owner::BlockBitmap(g));
            claim(l.inode_bitmap, 1, Owner::InodeBitmap(g));
            // Inode-table blocks one by one only where a run touches the table.
            let table = l.inode_table..l.inode_table + cfg.inode_table_blocks as u64;
            let first_ino = g as u64 * cfg.inodes_per_group as u64 + 1;
            let i = runs.partition_point(|&(s, n)| s + n <= table.start);
            for &(s, n) in &runs[i..] {
                if s >= table.end {
                    break;
                }
                for b in s.max(table.start)..(s + n).min(table.end) {
                    claim(b, 1, Owner::InodeTable(g, (first_ino + (b - table.start) * ipb) as Ino));
                }
            }
        }
        for ino in self.inodes.live() {
            let node = self.inodes.get(ino).expect("live");
            let data = if ino == JOURNAL_INO { Owner::Journal } else { Owner::Data(ino) };
            for e in node.map.extents() {
                claim(e.phys, e.len as u64, data);
            }
            for m in node.map.meta() {
                claim(m.phys, 1, Owner::Mapping(ino));
            }
        }
        found.sort_unstable_by_key(|o| o.start);
        // What nothing claimed is free.
        let mut out = Vec::with_capacity(found.len() + runs.len());
        let mut it = found.into_iter().peekable();
        for &(s, n) in runs {
            let mut at = s;
            while let Some(o) = it.next_if(|o| o.start < s + n) {
                if o.start > at {
                    out.push(Owned { start: at, len: o.start - at, owner: Owner::Free });
                }
                out.push(o);
                at = o.start + o.len;
            }
            if at < s + n {
                out.push(Owned { start: at, len: s + n - at, owner: Owner::Free });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::{Era, FsConfig, FsKind, MkfsOptions, Task, ROOT_INO};

    fn fs() -> FileSystem {
        let cfg = FsConfig::new(&MkfsOptions::new(FsKind::Ext4, Era::Today, 64 << 20)).unwrap();
        FileSystem::mkfs(cfg).unwrap().0
    }

    #[test]
    fn every_block_of_the_file_system_has_exactly_the_owner_check_gives_it() {
        let mut f = fs();
        let (a, _) = f.create(ROOT_INO, b"a", Task::default()).unwrap();
        f.allocate_each(a, 0, 40, Task::default()).unwrap();
        let (d, _) = f.mkdir(ROOT_INO, b"d", Task::default()).unwrap();
        let n = f.config().blocks;
        let all = f.owners(&[(0, n)]);
        assert_eq!(all.iter().map(|o| o.len).sum::<u64>(), n, "every block once");
        assert!(all.windows(2).all(|w| w[0].start + w[0].len == w[1].start), "in order, no gaps");
        let blocks_of = |who: Owner| all.iter().filter(|o| o.owner == who).map(|o| o.len).sum::<u64>();
        assert_eq!(blocks_of(Owner::Data(a)), 40);
        assert_eq!(blocks_of(Owner::Data(d)), 1, "a new directory's one block");
        assert_eq!(blocks_of(Owner::Journal), f.journal().iter().map(|e| e.len as u64).sum::<u64>());
        assert_eq!(blocks_of(Owner::Free), f.free_blocks());
        assert_eq!(blocks_of(Owner::BlockBitmap(0)), 1);
        // The inode table block of inode `a` names the first inode it holds.
        let b = f.inode_block(a);
        let o = f.owners(&[(b, 1)]);
        let Owner::InodeTable(0, first) = o[0].owner else { panic!("{o:?}") };
        let per = (f.config().block_size / f.config().inode_size) as Ino;
        assert!(first <= a && a < first + per, "{first} {a}");
    }

    #[test]
    fn runs_are_split_where_owners_change_and_free_blocks_are_free() {
        let mut f = fs();
        let (a, _) = f.create(ROOT_INO, b"a", Task::default()).unwrap();
        f.allocate_each(a, 0, 8, Task::default()).unwrap();
        let e = f.extents_of(a)[0];
        let o = f.owners(&[(e.phys + 6, 5)]);
        assert_eq!(o[0], Owned { start: e.phys + 6, len: 2, owner: Owner::Data(a) });
        assert_eq!(o.iter().map(|o| o.len).sum::<u64>(), 5);
        assert!(o[1..].iter().all(|o| o.owner != Owner::Data(a)));
    }
}
