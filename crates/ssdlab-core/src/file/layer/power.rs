//! A power cut, seen from the file systems: the runs each target lost are given owners
//! (files' data, metadata at home, the journal's log), the journal is replayed as jbd2's
//! recovery would (`fs/jbd2/recovery.c`: transactions in sequence, stopping at the first
//! whose log is not whole), and what the page cache held dirty is counted. Under
//! `data=writeback`, the files whose replayed metadata maps blocks never written
//! (`unwritten.rs`) are counted too.
//!
//! Simplifications, each on the side of what the log still holds: a lost home block is
//! taken as restored when a replayed transaction carries it, whether or not jbd2 had moved
//! its tail past that transaction; a transaction broken by a lost log block is not
//! replayed even when jbd2's checksums would not notice.

use std::collections::{BTreeMap, BTreeSet};

use super::FileLayer;
use crate::device::LostRange;
use crate::fs::owners::Owner;
use crate::pagecache::PAGE_SIZE;
use crate::report::FsPowerCut;

/// How many inodes a report names as examples.
const EXAMPLES: usize = 8;

impl FileLayer {
    /// What a power cut now does to each file system: `lost[t]` is where target `t` lost
    /// data (None: it cannot say). Returns each mounted target's index with its report.
    pub fn power_cut(&self, lost: &[Option<Vec<LostRange>>]) -> Vec<(u32, FsPowerCut)> {
        let mut out = Vec::new();
        for (m, mnt) in self.mounts.iter().enumerate() {
            let Some(mnt) = mnt else { continue };
            let mut r = FsPowerCut::default();
            for (file, pages) in self.cache.dirty_files() {
                if self.ids.split(file).0 == m {
                    r.dirty_files += 1;
                    r.dirty_bytes += pages * PAGE_SIZE;
                }
            }
            r.uncommitted_blocks = mnt.journal.running_blocks() as u64 + mnt.commit.as_ref().map_or(0, |(c, _, _)| c.blocks.len() as u64);
            if let Some(Some(ranges)) = lost.get(mnt.target as usize) {
                r.located = true;
                self.attribute(m, ranges, &mut r);
            }
            if let (Some(u), Some(fs)) = (&mnt.unwritten, &mnt.fs) {
                r.data_writeback = true;
                let replayed = |seq: u64| r.first_not_replayed.is_none_or(|f| seq < f);
                let e = u.exposed(mnt.journal.committed(), replayed, |ino| fs.exists(ino), EXAMPLES);
                r.stale_files = e.files;
                r.stale_bytes = e.blocks * mnt.block_size;
                r.stale_examples = e.examples;
            }
            out.push((mnt.target, r));
        }
        out
    }

    /// Give file system `m`'s share of `ranges` owners, and replay its journal.
    fn attribute(&self, m: usize, ranges: &[LostRange], r: &mut FsPowerCut) {
        let mnt = self.mounts[m].as_ref().expect("mounted");
        let Some(fs) = &mnt.fs else {
            // A block device's cache: what was lost is its dirty pages, counted above.
            return;
        };
        let bs = mnt.block_size;
        // Lost blocks of the file system, each once, promised if any write of it was.
        let mut blocks: BTreeMap<u64, bool> = BTreeMap::new();
        let total = fs.config().blocks;
        for x in ranges {
            for b in x.offset / bs..(x.offset + x.len).div_ceil(bs).min(total) {
                *blocks.entry(b).or_insert(false) |= x.promised;
            }
        }
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for &b in blocks.keys() {
            match runs.last_mut() {
                Some((s, n)) if *s + *n == b => *n += 1,
                _ => runs.push((b, 1)),
            }
        }
        // Recovery replays the committed transactions the log holds, in order, up to the
        // first with a lost log block.
        let logged = mnt.journal.logged();
        let broken = |runs: &[(u64, u64)]| runs.iter().any(|&(s, n)| blocks.range(s..s + n).next().is_some());
        let mut first_broken: Option<u64> = None;
        for l in logged.iter().filter(|l| l.committed) {
            if broken(&l.runs) {
                r.transactions_broken += 1;
                first_broken.get_or_insert(l.sequence);
            }
        }
        let replayed = |seq: u64| first_broken.is_none_or(|f| seq < f);
        let mut lost_in_log: BTreeSet<u64> = BTreeSet::new();
        for l in logged.iter().filter(|l| l.committed && !replayed(l.sequence)) {
            r.transactions_not_replayed += 1;
            lost_in_log.extend(&l.blocks);
        }
        r.first_not_replayed = first_broken;
        r.not_replayed_blocks = lost_in_log.len() as u64;
        // A home block comes back when a replayed transaction carries it.
        let restored: BTreeSet<u64> = logged.iter().filter(|l| l.committed && replayed(l.sequence)).flat_map(|l| l.blocks.iter().copied()).collect();

        let (mut data_files, mut promised_files) = (BTreeSet::new(), BTreeSet::new());
        let (mut dirs, mut mappings) = (BTreeSet::new(), BTreeSet::new());
        for o in fs.owners(&runs) {
            let promised = blocks.range(o.start..o.start + o.len).filter(|(_, &p)| p).count() as u64;
            let home = |r: &mut FsPowerCut| {
                let kept = (o.start..o.start + o.len).filter(|b| restored.contains(b)).count() as u64;
                r.metadata_blocks += o.len;
                r.metadata_recovered += kept;
                o.len - kept
            };
            match o.owner {
                Owner::Free => r.freed_bytes += o.len * bs,
                Owner::Journal => r.journal_blocks += o.len,
                Owner::Data(ino) if !fs.is_dir(ino) => {
                    data_files.insert(ino);
                    r.data_bytes += o.len * bs;
                    if promised > 0 {
                        promised_files.insert(ino);
                        r.promised_bytes += promised * bs;
                    }
                }
                Owner::Data(ino) => {
                    if home(r) > 0 {
                        dirs.insert(ino);
                    }
                }
                Owner::Mapping(ino) => {
                    if home(r) > 0 {
                        mappings.insert(ino);
                    }
                }
                Owner::InodeTable(_, first) => {
                    let per = fs.config().block_size / fs.config().inode_size;
                    for b in o.start..o.start + o.len {
                        if !restored.contains(&b) {
                            let base = first + (b - o.start) as u32 * per;
                            r.inodes_damaged += (base..base + per).filter(|&i| fs.exists(i)).count() as u64;
                        }
                    }
                    home(r);
                }
                Owner::BlockBitmap(_) | Owner::InodeBitmap(_) => r.bitmaps_damaged += home(r),
                Owner::Super => r.super_damaged += home(r),
            }
        }
        r.data_files = data_files.len() as u64;
        r.promised_files = promised_files.len() as u64;
        r.promised_examples = promised_files.iter().take(EXAMPLES).copied().collect();
        r.directories_damaged = dirs.len() as u64;
        r.mappings_damaged = mappings.len() as u64;
        r.fsck_needed = r.metadata_blocks > r.metadata_recovered;
    }
}
