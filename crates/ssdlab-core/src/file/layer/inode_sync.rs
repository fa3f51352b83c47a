//! What an fsync or fdatasync of a file must see committed, from the changes to its inode.
//!
//! Today's ext4 (and ext3 in its later kernels: `ext3_sync_file` reading the same two fields)
//! remembers per inode the transaction of its last change
//! (`i_sync_tid`) and of its last change that fdatasync needs — its size or its blocks
//! (`i_datasync_tid`, `ext4_update_inode_fsync_trans`); `ext4_sync_file` waits for that
//! transaction to commit, forcing it if it is still running, and commits nothing when it is
//! already on disk (`jbd2_complete_transaction`).
//!
//! 2008's kernels (2.6.2x's `ext3_sync_file`) go by the VFS's dirty flags instead: an inode
//! dirtied since its last sync (`I_DIRTY_SYNC` for its times, `I_DIRTY_DATASYNC` for its size)
//! makes fsync force a commit of the running transaction, whatever it holds
//! (`ext3_force_commit`), and `sync_inode` clears the flags; fdatasync skips the commit when
//! only the times changed. Not modelled: the flags cleared by the flusher's inode writeback
//! (inodes dirtied more than 30 s before), and the empty transaction such a commit makes when
//! nothing is running.
//!
//! A write changes the file's modification time (`file_update_time`), which dirties the inode
//! only when the time moves: once a second on ext3 (whole seconds, the default `s_time_gran`)
//! and once a jiffy on ext4 with 256-byte inodes (nanosecond fields, filled from the coarse
//! clock that ticks once a jiffy). Access times are not modelled.

use rustc_hash::FxHashMap;

use crate::engine::Time;
use crate::fs::Ino;

#[derive(Clone, Copy, Debug, Default)]
struct InodeSync {
    /// The time granule of the file's last modification-time change, plus one (0: none yet).
    stamped: u64,
    sync_tid: u64,
    datasync_tid: u64,
    /// 2008's `I_DIRTY_SYNC` / `I_DIRTY_DATASYNC` since the inode's last sync.
    dirty: bool,
    dirty_datasync: bool,
}

/// One file system's inodes, as fsync sees them.
#[derive(Clone, Debug)]
pub(super) struct InodeSyncs {
    inodes: FxHashMap<Ino, InodeSync>,
    /// The file system's time granularity as writes see it, ns.
    granule: Time,
}

impl InodeSyncs {
    pub(super) fn new(granule: Time) -> InodeSyncs {
        InodeSyncs { inodes: FxHashMap::default(), granule: granule.max(1) }
    }

    /// A write to `ino` at `now` sets its modification time: true when that changes the
    /// inode (the time moved to a new granule since the last write), so it is to be logged.
    pub(super) fn stamp(&mut self, ino: Ino, now: Time) -> bool {
        let g = now / self.granule + 1;
        let s = self.inodes.entry(ino).or_default();
        std::mem::replace(&mut s.stamped, g) != g
    }

    /// `ino`'s inode changed in transaction `tid`; `datasync`: its size or blocks did.
    pub(super) fn changed(&mut self, ino: Ino, tid: u64, datasync: bool) {
        let s = self.inodes.entry(ino).or_default();
        s.sync_tid = tid;
        s.dirty = true;
        if datasync {
            s.datasync_tid = tid;
            s.dirty_datasync = true;
        }
    }

    /// `ino` was deleted (its number may be given again).
    pub(super) fn forget(&mut self, ino: Ino) {
        self.inodes.remove(&ino);
    }

    /// Today: the transaction an fsync (`data_only`: fdatasync) of `ino` must see committed,
    /// if one after `committed` is.
    pub(super) fn must_commit(&self, ino: Ino, data_only: bool, committed: u64) -> Option<u64> {
        let s = self.inodes.get(&ino)?;
        let tid = if data_only { s.datasync_tid } else { s.sync_tid };
        (tid > committed).then_some(tid)
    }

    /// 2008: whether an fsync (`data_only`: fdatasync) of `ino` forces a commit; if it does,
    /// the inode is clean from then on (`sync_inode`).
    /// Whether a 2008 fsync (fdatasync: `data_only`) of `ino` would force a commit now
    /// ([`InodeSyncs::take_dirty`] without taking).
    pub(super) fn is_dirty(&self, ino: Ino, data_only: bool) -> bool {
        self.inodes.get(&ino).is_some_and(|s| if data_only { s.dirty_datasync } else { s.dirty || s.dirty_datasync })
    }

    pub(super) fn take_dirty(&mut self, ino: Ino, data_only: bool) -> bool {
        let Some(s) = self.inodes.get_mut(&ino) else { return false };
        let forces = if data_only { s.dirty_datasync } else { s.dirty || s.dirty_datasync };
        if forces {
            s.dirty = false;
            s.dirty_datasync = false;
        }
        forces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_changes_the_inode_once_a_granule() {
        let mut s = InodeSyncs::new(1_000_000_000);
        assert!(s.stamp(12, 100));
        assert!(!s.stamp(12, 999_999_999), "the same second");
        assert!(s.stamp(12, 1_000_000_000));
        assert!(s.stamp(13, 1_000_000_000), "another file");
        s.forget(12);
        assert!(s.stamp(12, 1_000_000_001), "a new file of the same number");
    }

    #[test]
    fn fdatasync_waits_only_for_size_and_block_changes() {
        let mut s = InodeSyncs::new(1);
        assert_eq!(s.must_commit(7, false, 0), None, "never changed");
        s.changed(7, 3, true);
        s.changed(7, 5, false);
        assert_eq!(s.must_commit(7, false, 2), Some(5));
        assert_eq!(s.must_commit(7, true, 2), Some(3));
        assert_eq!(s.must_commit(7, true, 3), None, "its size is on disk");
        assert_eq!(s.must_commit(7, false, 5), None);
    }

    #[test]
    fn in_2008_a_sync_cleans_the_inode_and_fdatasync_ignores_its_times() {
        let mut s = InodeSyncs::new(1);
        s.changed(7, 3, false);
        assert!(!s.take_dirty(7, true), "only its times changed");
        assert!(s.take_dirty(7, false));
        assert!(!s.take_dirty(7, false), "clean since");
        s.changed(7, 4, true);
        assert!(s.take_dirty(7, true));
        assert!(!s.take_dirty(7, false), "fdatasync's sync_inode cleaned it all");
    }
}
