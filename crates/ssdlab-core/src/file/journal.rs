//! jbd2 in ordered mode (in writeback mode the same with no data ordered), as the file
//! layer drives it (a model of `fs/jbd2/commit.c` and
//! `fs/jbd2/transaction.c`, not a port). Operations add the metadata blocks they dirty to the
//! running transaction (each block once), and the files whose data must reach the disk before
//! that metadata does (ordered mode). A commit — every `commit_interval` (5 s, the `commit=`
//! mount option's default, `JBD2_DEFAULT_MAX_COMMIT_AGE`) or when an fsync needs it — takes the
//! running transaction: its ordered data is written first, then a descriptor block per
//! `tags_per_descriptor` metadata blocks, the blocks' copies, and (after a cache flush when
//! barriers are on) the commit block, all at the journal's head, one after the other. The
//! committed blocks are then checkpointed: written to their home places by later writeback.

use std::collections::VecDeque;

use rustc_hash::FxHashSet;

use crate::engine::Time;
use crate::fs::Extent;

/// A transaction being committed: what it writes, and whom it lets go when done.
#[derive(Clone, Debug, Default)]
pub struct Commit {
    pub sequence: u64,
    /// Metadata blocks, sorted.
    pub blocks: Vec<u64>,
    /// Files (page-cache ids) whose dirty data goes first (ordered mode).
    pub ordered: Vec<u32>,
}

/// A transaction's place in the log, kept while the log still holds it (what recovery would
/// find there after a power cut).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Logged {
    pub sequence: u64,
    /// Its log blocks as physical runs, the commit block last.
    pub runs: Vec<(u64, u64)>,
    /// The metadata blocks it carries, sorted.
    pub blocks: Vec<u64>,
    /// Its commit ended (an fsync waiting for it returned).
    pub committed: bool,
}

/// One file system's journal.
#[derive(Clone, Debug)]
pub struct Journal {
    /// Where the journal lives (physical runs of the journal inode, in order) and its length.
    area: Vec<Extent>,
    blocks: u64,
    /// The next log block to write (wrapping past the end to just after the superblock).
    head: u64,
    running: FxHashSet<u64>,
    running_files: FxHashSet<u32>,
    /// When the running transaction began (its commit is due `commit_interval` later).
    started: Option<Time>,
    pub commit_interval: Time,
    /// Sequence of the last transaction started, and of the last committed.
    sequence: u64,
    committed: u64,
    /// Metadata blocks committed and not yet written home; since when some have waited; and
    /// the log blocks written since the checkpoint was last taken.
    pub checkpoint: Vec<u64>,
    checkpoint_since: Option<Time>,
    checkpoint_log: u64,
    /// Tags (metadata blocks) one descriptor block describes: (block size − 12-byte header)
    /// / 16-byte tag with the 64-bit feature, less the UUID after the first (jbd2's
    /// `journal_tag_bytes`); rounded down here to what fits.
    tags_per_descriptor: u64,
    pub committing: bool,
    /// Transactions whose log blocks the log has not written over yet, oldest first, and
    /// how many log blocks they take.
    logged: VecDeque<Logged>,
    logged_blocks: u64,
    /// Handles started since the journal began (jbd's `t_handle_count`, summed over
    /// transactions): an operation that added to the running transaction, or a handle
    /// taken to force a commit.
    handles: u64,
}

impl Journal {
    /// A journal over `area` (its first block is the journal superblock), of `block_size`.
    pub fn new(area: Vec<Extent>, block_size: u32, commit_interval: Time) -> Journal {
        let blocks: u64 = area.iter().map(|e| e.len as u64).sum();
        Journal {
            area,
            blocks,
            head: 1,
            running: FxHashSet::default(),
            running_files: FxHashSet::default(),
            started: None,
            commit_interval,
            sequence: 1,
            committed: 0,
            checkpoint: Vec::new(),
            checkpoint_since: None,
            checkpoint_log: 0,
            tags_per_descriptor: ((block_size as u64 - 12) / 16).saturating_sub(1).max(1),
            committing: false,
            logged: VecDeque::new(),
            logged_blocks: 0,
            handles: 0,
        }
    }

    /// Operation at `now` dirtied `blocks`; `file`'s data is to be ordered before them.
    /// Returns true when this starts a transaction (its commit is due `commit_interval` on).
    pub fn add(&mut self, now: Time, blocks: &[u64], file: Option<u32>) -> bool {
        if blocks.is_empty() && file.is_none() {
            return false;
        }
        self.handles += 1;
        self.running.extend(blocks.iter().copied());
        if let Some(f) = file {
            self.running_files.insert(f);
        }
        if self.started.is_none() {
            self.started = Some(now);
            return true;
        }
        false
    }

    /// A handle that adds nothing joins the running transaction (`journal_force_commit`'s).
    pub fn join(&mut self) {
        self.handles += 1;
    }

    /// Handles started so far (only their changes matter).
    pub fn handles(&self) -> u64 {
        self.handles
    }

    /// Whether the running transaction holds anything.
    pub fn has_running(&self) -> bool {
        !self.running.is_empty() || !self.running_files.is_empty()
    }

    /// The sequence of the running transaction (what an fsync now must see committed).
    pub fn running_sequence(&self) -> u64 {
        self.sequence
    }

    pub fn committed(&self) -> u64 {
        self.committed
    }

    /// When the running transaction's commit is due.
    pub fn due(&self) -> Option<Time> {
        self.started.map(|t| t + self.commit_interval)
    }

    /// Take the running transaction for committing (a new one starts empty).
    pub fn start_commit(&mut self) -> Commit {
        debug_assert!(!self.committing, "one commit at a time, as jbd2's kjournald2");
        let mut blocks: Vec<u64> = self.running.drain().collect();
        blocks.sort_unstable();
        let mut ordered: Vec<u32> = self.running_files.drain().collect();
        ordered.sort_unstable();
        self.started = None;
        self.committing = true;
        let c = Commit { sequence: self.sequence, blocks, ordered };
        self.sequence += 1;
        c
    }

    /// The log writes of commit `c`, as physical block runs: the descriptor blocks and the
    /// metadata copies (first), and the commit block (second, after a flush with barriers).
    pub fn log_writes(&mut self, c: &Commit) -> (Vec<(u64, u64)>, (u64, u64)) {
        let n = c.blocks.len() as u64;
        let descriptors = n.div_ceil(self.tags_per_descriptor).max(1);
        let body = self.take_log(descriptors + n);
        let commit = self.take_log(1);
        let mut runs = body.clone();
        runs.push(commit[0]);
        self.logged.push_back(Logged { sequence: c.sequence, runs, blocks: c.blocks.clone(), committed: false });
        self.logged_blocks += descriptors + n + 1;
        self.checkpoint_log += descriptors + n + 1;
        // The log's first block is its superblock.
        while self.logged_blocks > self.blocks - 1 {
            let old = self.logged.pop_front().expect("blocks logged");
            self.logged_blocks -= old.runs.iter().map(|r| r.1).sum::<u64>();
        }
        (body, commit[0])
    }

    /// Transactions the log still holds, oldest first.
    pub fn logged(&self) -> &VecDeque<Logged> {
        &self.logged
    }

    /// Metadata blocks of the running transaction (not yet committing).
    pub fn running_blocks(&self) -> usize {
        self.running.len()
    }

    /// `n` log blocks from the head, as physical runs (wrapping to block 1).
    fn take_log(&mut self, n: u64) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut left = n;
        while left > 0 {
            if self.head >= self.blocks {
                self.head = 1;
            }
            let take = left.min(self.blocks - self.head);
            for (p, len) in self.physical(self.head, take) {
                match out.last_mut() {
                    Some(last) if last.0 + last.1 == p => last.1 += len,
                    _ => out.push((p, len)),
                }
            }
            self.head += take;
            left -= take;
        }
        out
    }

    /// Log blocks `[l, l + n)` as physical runs.
    fn physical(&self, mut l: u64, mut n: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut base = 0u64;
        for e in &self.area {
            let len = e.len as u64;
            if n > 0 && l < base + len {
                let off = l - base;
                let take = n.min(len - off);
                out.push((e.phys + off, take));
                l += take;
                n -= take;
            }
            base += len;
        }
        out
    }

    /// Commit `c` is on the disk at `now`: its blocks wait for their home writes.
    pub fn finish_commit(&mut self, c: Commit, now: Time) {
        self.committing = false;
        if self.checkpoint.is_empty() && !c.blocks.is_empty() {
            self.checkpoint_since = Some(now);
        }
        self.committed = c.sequence;
        if let Some(l) = self.logged.iter_mut().rev().find(|l| l.sequence == c.sequence) {
            l.committed = true;
        }
        self.checkpoint.extend(c.blocks);
    }

    /// Since when committed blocks have waited to be written home (None: none wait).
    pub fn checkpoint_since(&self) -> Option<Time> {
        self.checkpoint_since
    }

    /// The log is short of room: three quarters of it written since the last checkpoint.
    /// jbd2 then writes the checkpoint before a transaction may start (it keeps a quarter
    /// of the log, `j_max_transaction_buffers`, for the running one; `__jbd2_log_wait_for_space`).
    pub fn log_short(&self) -> bool {
        !self.checkpoint.is_empty() && self.checkpoint_log * 4 >= (self.blocks - 1) * 3
    }

    /// The blocks waiting to be written home, in order, each once (taken).
    pub fn take_checkpoint(&mut self) -> Vec<u64> {
        self.checkpoint_since = None;
        self.checkpoint_log = 0;
        let mut b = std::mem::take(&mut self.checkpoint);
        b.sort_unstable();
        b.dedup();
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal() -> Journal {
        // 1024 blocks in two runs.
        let area = vec![Extent { logical: 0, phys: 10_000, len: 512 }, Extent { logical: 512, phys: 20_000, len: 512 }];
        Journal::new(area, 4096, 5_000_000_000)
    }

    #[test]
    fn a_commit_writes_descriptors_copies_and_a_commit_block_at_the_head() {
        let mut j = journal();
        assert!(j.add(0, &[7, 3, 7], Some(1)));
        assert!(!j.add(10, &[5], None));
        assert_eq!(j.due(), Some(5_000_000_000));
        let c = j.start_commit();
        assert_eq!(c.blocks, vec![3, 5, 7]);
        assert_eq!(c.ordered, vec![1]);
        assert!(!j.has_running());
        let (body, commit) = j.log_writes(&c);
        assert_eq!(body, vec![(10_001, 4)], "one descriptor and three copies after the superblock");
        assert_eq!(commit, (10_005, 1));
        assert_eq!(j.logged()[0], Logged { sequence: 1, runs: vec![(10_001, 4), (10_005, 1)], blocks: vec![3, 5, 7], committed: false });
        j.finish_commit(c, 0);
        assert!(j.logged()[0].committed);
        assert_eq!(j.take_checkpoint(), vec![3, 5, 7]);
    }

    #[test]
    fn the_log_forgets_transactions_it_writes_over() {
        let mut j = journal();
        // Transactions of 100 blocks + a descriptor + a commit block (102): ten fit in 1023.
        for t in 0..12u64 {
            j.add(0, &(0..100).map(|b| t * 1000 + b).collect::<Vec<_>>(), None);
            let c = j.start_commit();
            j.log_writes(&c);
            j.finish_commit(c, 0);
        }
        let seqs: Vec<u64> = j.logged().iter().map(|l| l.sequence).collect();
        assert_eq!(seqs, (3..=12).collect::<Vec<_>>());
        let held: u64 = j.logged().iter().flat_map(|l| &l.runs).map(|r| r.1).sum();
        assert!(held <= 1023 && held == 10 * 102, "{held}");
    }

    #[test]
    fn the_log_crosses_runs_and_wraps() {
        let mut j = journal();
        j.head = 510;
        assert_eq!(j.take_log(4), vec![(10_510, 2), (20_000, 2)]);
        j.head = 1022;
        assert_eq!(j.take_log(3), vec![(20_510, 2), (10_001, 1)]);
    }
}
