//! Blocks allocated to a file whose data has not reached the disk yet, under `data=writeback`.
//!
//! In ordered mode a commit writes the data of the blocks its transaction allocated before
//! the commit block (jbd2's ordered list), so recovered metadata never maps a block whose new
//! data is missing. In writeback mode nothing orders the two: ext3 allocates at `write()`
//! and commits within `commit=` seconds, while the data waits for the flusher (30 s), and a
//! crash in between leaves files mapping blocks that still hold whatever was there before,
//! often another file's old data. The file layer keeps each such block here from its
//! allocation until a write of it completes or it is freed; a power cut reads off the ones
//! whose allocating transaction recovery replays. A write still in flight at the cut counts
//! as not written. A block is forgotten when freed, though a crash before the free commits
//! would find it mapped still: the count errs low there.

use std::collections::BTreeMap;

use crate::fs::{Ino, Run};

/// Newly allocated blocks not yet written: block → (owner, the transaction that allocated it).
#[derive(Clone, Debug, Default)]
pub(super) struct Unwritten {
    blocks: BTreeMap<u64, (Ino, u64)>,
}

/// What a crash exposes: files whose recovered metadata maps unwritten blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Exposed {
    pub files: u64,
    pub blocks: u64,
    /// The first few such inodes, in order.
    pub examples: Vec<u32>,
}

impl Unwritten {
    /// `runs` were allocated to `ino` in transaction `sequence`.
    pub fn allocated(&mut self, ino: Ino, runs: &[Run], sequence: u64) {
        for r in runs {
            for b in r.phys..r.phys + r.len as u64 {
                self.blocks.insert(b, (ino, sequence));
            }
        }
    }

    /// Blocks `start..start + len` were given back: nothing maps them any more.
    pub fn freed(&mut self, start: u64, len: u64) {
        self.forget(start, len);
    }

    /// A write of blocks `start..start + len` completed: they hold their file's data.
    pub fn written(&mut self, start: u64, len: u64) {
        self.forget(start, len);
    }

    fn forget(&mut self, start: u64, len: u64) {
        if self.blocks.range(start..start + len).next().is_none() {
            return;
        }
        let keys: Vec<u64> = self.blocks.range(start..start + len).map(|(&b, _)| b).collect();
        for b in keys {
            self.blocks.remove(&b);
        }
    }

    /// Unwritten blocks whose allocation recovery keeps: allocated in a transaction that had
    /// committed by `committed` and that recovery replays (`replayed`), of a file that
    /// `exists`. At most `examples` inodes are named.
    pub fn exposed(&self, committed: u64, replayed: impl Fn(u64) -> bool, exists: impl Fn(Ino) -> bool, examples: usize) -> Exposed {
        let mut files: Vec<Ino> = Vec::new();
        let mut out = Exposed::default();
        for &(ino, seq) in self.blocks.values() {
            if seq <= committed && replayed(seq) && exists(ino) {
                out.blocks += 1;
                files.push(ino);
            }
        }
        files.sort_unstable();
        files.dedup();
        out.files = files.len() as u64;
        out.examples = files.iter().take(examples).copied().collect();
        out
    }

    /// Blocks tracked (for the memory estimate's tests and the invariants).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.blocks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the books are asked to do, on blocks 0..64 of files 1..4.
    #[derive(Clone, Debug)]
    enum Step {
        Allocate { ino: Ino, phys: u64, len: u32 },
        Written { start: u64, len: u64 },
        Freed { start: u64, len: u64 },
        Commit,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (1u32..4, 0u64..64, 1u32..8).prop_map(|(ino, phys, len)| Step::Allocate { ino, phys, len }),
            (0u64..64, 1u64..8).prop_map(|(start, len)| Step::Written { start, len }),
            (0u64..64, 1u64..8).prop_map(|(start, len)| Step::Freed { start, len }),
            Just(Step::Commit),
        ]
    }

    proptest! {
        /// Against a block-by-block table: a block is exposed exactly when its last
        /// allocation was committed and recovered, no write or free came after it, and its
        /// owner still exists; files and examples follow.
        #[test]
        fn the_books_expose_what_a_block_by_block_table_says(steps in prop::collection::vec(step(), 0..60), stop in 0u64..12, gone in 1u32..5) {
            let (mut u, mut table) = (Unwritten::default(), [None::<(Ino, u64)>; 80]);
            let mut seq = 1u64;
            for s in &steps {
                match *s {
                    Step::Allocate { ino, phys, len } => {
                        u.allocated(ino, &[Run { logical: 0, phys, len }], seq);
                        for b in phys..phys + len as u64 {
                            table[b as usize] = Some((ino, seq));
                        }
                    }
                    Step::Written { start, len } | Step::Freed { start, len } => {
                        if matches!(s, Step::Written { .. }) { u.written(start, len) } else { u.freed(start, len) }
                        for b in start..start + len {
                            table[b as usize] = None;
                        }
                    }
                    Step::Commit => seq += 1,
                }
            }
            let committed = seq - 1;
            let replayed = |q: u64| q < stop;
            let exists = |i: Ino| i != gone;
            let e = u.exposed(committed, replayed, exists, 2);
            let mut files: Vec<Ino> = Vec::new();
            let mut blocks = 0;
            for (ino, q) in table.iter().flatten().copied() {
                if q <= committed && replayed(q) && exists(ino) {
                    blocks += 1;
                    files.push(ino);
                }
            }
            files.sort_unstable();
            files.dedup();
            prop_assert_eq!(e.blocks, blocks);
            prop_assert_eq!(e.files, files.len() as u64);
            prop_assert_eq!(e.examples, files.iter().take(2).copied().collect::<Vec<_>>());
            prop_assert_eq!(u.len(), table.iter().flatten().count());
        }
    }

    fn run(phys: u64, len: u32) -> Run {
        Run { logical: 0, phys, len }
    }

    #[test]
    fn a_block_is_exposed_from_its_committed_allocation_until_written_or_freed() {
        let mut u = Unwritten::default();
        u.allocated(12, &[run(100, 4), run(200, 2)], 3);
        u.allocated(13, &[run(300, 1)], 4);
        let (all, every) = (|_: u64| true, |_: Ino| true);
        // Transaction 3 committed, 4 not: only file 12's six blocks are exposed.
        assert_eq!(u.exposed(3, all, every, 8), Exposed { files: 1, blocks: 6, examples: vec![12] });
        assert_eq!(u.exposed(4, all, every, 8), Exposed { files: 2, blocks: 7, examples: vec![12, 13] });
        // Nothing committed yet: the allocation itself is lost, nothing exposed.
        assert_eq!(u.exposed(2, all, every, 8), Exposed::default());
        // Recovery stops before transaction 4.
        assert_eq!(u.exposed(4, |s| s < 4, every, 8).blocks, 6);
        // A deleted file exposes nothing.
        assert_eq!(u.exposed(4, all, |i| i != 12, 8).files, 1);
        u.written(101, 2);
        assert_eq!(u.exposed(4, all, every, 8).blocks, 5);
        u.freed(200, 2);
        u.written(300, 1);
        assert_eq!(u.exposed(4, all, every, 8), Exposed { files: 1, blocks: 2, examples: vec![12] });
        assert_eq!(u.len(), 2);
        // Reallocated to another file in a later transaction: the new owner's.
        u.allocated(14, &[run(100, 1)], 5);
        assert_eq!(u.exposed(5, all, every, 1), Exposed { files: 2, blocks: 2, examples: vec![12] });
    }
}
