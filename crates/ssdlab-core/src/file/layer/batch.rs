//! 2008's fsync batching: a synchronous journal handle waits for others to join its
//! transaction before it asks for the commit.
//!
//! ext3's fsync of a dirty inode forces a commit through a handle marked synchronous
//! (`ext3_force_commit` → `journal_force_commit`: `journal_start`, `h_sync`, `journal_stop`).
//! In the jbd of Linux 2.6.2x, `journal_stop` of such a handle, unless its process was the
//! last to make one, sleeps a jiffy at a time (`schedule_timeout_uninterruptible(1)`) for as
//! long as new handles joined the transaction during the jiffy (`t_handle_count` moved),
//! "to let another thread piggyback onto this transaction" (its comment). Only then does it
//! ask for the commit and wait for it. The handle stays open while it sleeps, so the
//! transaction cannot commit under it: a commit asked for meanwhile (the timer's, another
//! fsync's) locks the transaction, no new handle gets in, and every sleeper leaves at its
//! next look; the commit starts when the last has. Late in 2008 jbd replaced the jiffy loop
//! with one sleep timed against the average commit, and today's ext4 fsync takes no
//! synchronous handle at all: a mount under today's kernel has no batch.

use super::*;

/// One mount's sleeping synchronous handles and who made the last.
#[derive(Clone, Debug)]
pub(super) struct SyncBatch {
    /// The kernel's jiffy (`1 / HZ`).
    jiffy: Time,
    /// `j_last_sync_writer`: the process whose synchronous handle came last.
    last_sync_writer: Option<u32>,
    /// Sleeping operations and the journal's handle count at their last look.
    sleepers: Vec<(u32, u64)>,
    /// A commit was asked for while handles slept: it starts once they have all left.
    locked: bool,
}

impl SyncBatch {
    pub(super) fn new(jiffy: Time) -> SyncBatch {
        SyncBatch { jiffy, last_sync_writer: None, sleepers: Vec::new(), locked: false }
    }

    /// Synchronous handle `slot` of `process`, the journal having seen `handles`: whether it
    /// sleeps (it is then one of the sleepers). It does not when its process made the last
    /// one; nor when the transaction is locked for a commit, which lets no new handle in (the
    /// kernel's waits for the commit to begin and joins the next), so sleepers cannot keep
    /// arriving and hold the commit off for ever.
    fn enter(&mut self, slot: u32, process: u32, handles: u64) -> bool {
        if self.last_sync_writer == Some(process) || self.locked {
            return false;
        }
        self.last_sync_writer = Some(process);
        self.sleepers.push((slot, handles));
        true
    }

    /// Whether handles sleep on the running transaction (its commit must wait for them);
    /// the commit asked for is remembered.
    pub(super) fn holds_commit(&mut self) -> bool {
        if self.sleepers.is_empty() {
            return false;
        }
        self.locked = true;
        true
    }
}

impl FileLayer {
    /// fsync `slot` (2008, a dirty inode) takes its synchronous handle on mount `m`'s
    /// running transaction. Returns true when the handle sleeps (the commit waits for it to
    /// wake), false when its process made the last one and it goes straight to the commit.
    pub(super) fn sync_handle<E: From<FileEvent> + Copy>(&mut self, slot: u32, m: usize, events: &mut EventQueue<E>) -> bool {
        let now = events.now();
        let process = self.ops[slot as usize].io.process;
        let mnt = self.mounts[m].as_mut().expect("a mounted file system");
        // journal_start: the handle joins the transaction, which other sleepers see.
        mnt.journal.join();
        let seen = mnt.journal.handles();
        let Some(batch) = mnt.batch.as_mut() else { return false };
        if !batch.enter(slot, process, seen) {
            return false;
        }
        let jiffy = batch.jiffy;
        self.ops[slot as usize].stage = Stage::Batch;
        // schedule_timeout_uninterruptible: D state, in the load, not in iowait.
        self.sleep_as(slot, now, Sleep::Blocked);
        events.schedule(now + jiffy, E::from(FileEvent::Op(slot)));
        true
    }

    /// Sleeping handle `slot` looks again after its jiffy: it sleeps on while handles joined
    /// meanwhile and no commit is waiting; else it leaves to wait for the commit, which the
    /// last to leave starts.
    pub(super) fn batch_wake<D, E>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    {
        let now = events.now();
        let m = self.ops[slot as usize].mount;
        let mnt = self.mounts[m].as_mut().expect("a mounted file system");
        let handles = mnt.journal.handles();
        let batch = mnt.batch.as_mut().expect("a sleeping handle's mount batches");
        let at = batch.sleepers.iter().position(|&(s, _)| s == slot).expect("a sleeper");
        if batch.sleepers[at].1 != handles && !batch.locked {
            batch.sleepers[at].1 = handles;
            events.schedule(now + batch.jiffy, E::from(FileEvent::Op(slot)));
            return;
        }
        batch.sleepers.swap_remove(at);
        // journal_stop's log_start_commit: the transaction is locked from here.
        batch.locked = true;
        let last = batch.sleepers.is_empty();
        if last {
            batch.locked = false;
        }
        let seq = mnt.journal.running_sequence();
        let op = &mut self.ops[slot as usize];
        op.stage = Stage::Commit;
        op.wait_seq = seq;
        self.commit_waiting.push(slot);
        if last {
            self.commit(m as u16, block, events);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_sleeps_unless_its_process_made_the_last_or_a_commit_waits() {
        let mut b = SyncBatch::new(1_000_000);
        assert!(!b.holds_commit(), "no sleeper: the commit goes ahead");
        assert!(b.enter(1, 10, 5), "the first synchronous handle sleeps");
        assert!(!b.enter(2, 10, 6), "its process made the last one");
        assert!(b.enter(3, 11, 6), "another process's sleeps too");
        assert_eq!(b.sleepers, vec![(1, 5), (3, 6)]);
        assert!(b.holds_commit(), "sleepers hold the commit");
        assert!(b.locked);
        assert!(!b.enter(4, 12, 7), "a locked transaction lets no new handle sleep in it");
        assert_eq!(b.sleepers.len(), 2);
    }
}
