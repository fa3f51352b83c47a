//! jbd2 at run time: metadata joining the running transaction, and a commit's phases
//! (ordered data, the log, the flush, the commit block).

use super::*;

impl FileLayer {
    /// The metadata an operation dirtied joins its file system's running transaction (and
    /// `ordered`, a file whose data must reach the disk first); a new transaction arms its
    /// commit. `inode`: the file whose inode the change is to, and whether its size or
    /// blocks changed (what fdatasync waits for), for fsync's books.
    pub(super) fn journal<E: From<FileEvent> + Copy>(&mut self, m: usize, ch: &Changes, ordered: Option<u32>, inode: Option<(Ino, bool)>, events: &mut EventQueue<E>) {
        let now = events.now();
        self.hold_metadata(m, &ch.metadata, events);
        let mnt = self.mounts[m].as_mut().expect("a mounted file system");
        // Writeback mode orders no data before the metadata: the new blocks are exposed
        // until written instead.
        let ordered = ordered.filter(|_| mnt.unwritten.is_none());
        let started = mnt.journal.add(now, &ch.metadata, ordered);
        if let Some(u) = mnt.unwritten.as_mut() {
            for &(start, len) in &ch.freed {
                u.freed(start, len);
            }
            if let Some((ino, _)) = inode {
                u.allocated(ino, &ch.data, mnt.journal.running_sequence());
            }
        }
        if let Some((ino, datasync)) = inode.filter(|_| !ch.metadata.is_empty() || ordered.is_some()) {
            mnt.inodes.changed(ino, mnt.journal.running_sequence(), datasync);
        }
        if started && !mnt.commit_armed {
            mnt.commit_armed = true;
            let due = mnt.journal.due().expect("a running transaction");
            events.schedule(due, E::from(FileEvent::Commit(m as u16)));
        }
    }


    /// Commit file system `m`'s running transaction: its ordered data first.
    pub(super) fn commit<D, E>(&mut self, m: u16, block: &mut BlockLayer<D>, events: &mut EventQueue<E>)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    {
        let mnt = self.mounts[m as usize].as_mut().expect("a mounted file system");
        if mnt.commit.is_some() || !mnt.journal.has_running() {
            return;
        }
        // Synchronous handles sleeping in the transaction hold it open (2008's batching):
        // the last to wake starts the commit.
        if mnt.batch.as_mut().is_some_and(|b| b.holds_commit()) {
            return;
        }
        let c = mnt.journal.start_commit();
        self.report.commits += 1;
        // The journal thread (kjournald, jbd2/DEV) sleeps uninterruptibly on the commit's
        // buffers (`wait_on_buffer` → io_schedule in journal_commit_transaction) until the
        // commit ends: it counts in iowait and in the load average, as kernel threads do.
        self.cpus.io_wait(events.now(), self.jbd2(m as usize));
        let ordered = c.ordered.clone();
        let mnt = self.mounts[m as usize].as_mut().expect("a mounted file system");
        mnt.commit = Some((c, 0, CommitPhase::Ordered));
        let mut sent = 0;
        for f in ordered {
            let mut runs = std::mem::take(&mut self.runs);
            self.cache.fsync(f, &mut runs);
            for r in runs.clone() {
                let (_, ino) = self.ids.split(r.file);
                let bl = self.blocks_of(m as usize, ino, r.start, r.len as u64);
                self.report.written_back_pages += r.len as u64;
                let n = self.send_blocks(m as usize, Op::Write, &bl, Purpose::OrderedData(m), self.jbd2(m as usize), block, events);
                if n == 0 {
                    self.cache.complete_writeback(events.now(), r);
                    self.writeback_ended(r.file);
                } else {
                    // The writeback completes with the commit's writes; the cache hears of
                    // it then.
                    self.ordered_runs.push((m, r));
                }
                sent += n;
            }
            self.runs = runs;
        }
        self.mounts[m as usize].as_mut().expect("mounted").commit.as_mut().expect("under way").1 = sent;
        if sent == 0 {
            self.commit_step(m, block, events);
        }
    }

    /// The commit's writes so far are done: its next phase (the log, the flush, the commit
    /// block), or its end.
    pub(super) fn commit_step<D, E>(&mut self, m: u16, block: &mut BlockLayer<D>, events: &mut EventQueue<E>)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    {
        let now = events.now();
        let mnt = self.mounts[m as usize].as_mut().expect("a mounted file system");
        let Some((c, _, phase)) = mnt.commit.take() else { return };
        let barriers = mnt.barriers;
        let target = mnt.target;
        let (next, sent) = match phase {
            CommitPhase::Ordered => {
                for (mm, r) in std::mem::take(&mut self.ordered_runs) {
                    if mm == m {
                        self.cache.complete_writeback(now, r);
                        self.writeback_ended(r.file);
                    } else {
                        self.ordered_runs.push((mm, r));
                    }
                }
                let mnt = self.mounts[m as usize].as_mut().expect("mounted");
                let (body, commit_block) = mnt.journal.log_writes(&c);
                mnt.commit_block = commit_block;
                self.report.journal_blocks += body.iter().map(|r| r.1).sum::<u64>() + 1;
                let mnt = self.mounts[m as usize].as_mut().expect("mounted");
                mnt.commit = Some((c.clone(), 0, CommitPhase::Log));
                let n = self.send_blocks(m as usize, Op::Write, &body, Purpose::Commit(m), self.jbd2(m as usize), block, events);
                (CommitPhase::Log, n)
            }
            CommitPhase::Log if barriers => {
                let mnt = self.mounts[m as usize].as_mut().expect("mounted");
                mnt.commit = Some((c.clone(), 0, CommitPhase::Flush));
                let n = self.send(target, Op::Flush, 0, 0, Purpose::Commit(m), self.jbd2(m as usize), block, events);
                (CommitPhase::Flush, n)
            }
            CommitPhase::Log | CommitPhase::Flush => {
                let mnt = self.mounts[m as usize].as_mut().expect("mounted");
                let commit_block = mnt.commit_block;
                mnt.commit = Some((c.clone(), 0, CommitPhase::CommitBlock));
                let n = self.send_blocks(m as usize, Op::Write, &[commit_block], Purpose::Commit(m), self.jbd2(m as usize), block, events);
                (CommitPhase::CommitBlock, n)
            }
            // jbd2 writes the commit block with REQ_PREFLUSH | REQ_FUA under barriers
            // (`journal_submit_commit_record`, fs/jbd2/commit.c; a 2008 kernel's
            // WRITE_BARRIER asked the same). Without FUA in the device — SATA drives under
            // libata, whose `fua` parameter is off by default — the block layer follows the
            // write with a flush (block/blk-flush.c): the commit is durable when that ends.
            CommitPhase::CommitBlock if barriers => {
                let mnt = self.mounts[m as usize].as_mut().expect("mounted");
                mnt.commit = Some((c.clone(), 0, CommitPhase::PostFlush));
                let n = self.send(target, Op::Flush, 0, 0, Purpose::Commit(m), self.jbd2(m as usize), block, events);
                (CommitPhase::PostFlush, n)
            }
            CommitPhase::CommitBlock | CommitPhase::PostFlush => {
                // Woken by the commit block's (or flush's) completion, on the device's core.
                let waker = self.irq_core(m as usize);
                self.cpus.io_done(now, self.jbd2(m as usize), Waker::Irq(waker));
                let mnt = self.mounts[m as usize].as_mut().expect("mounted");
                mnt.journal.finish_commit(c, now);
                let committed = mnt.journal.committed();
                let short = mnt.journal.log_short();
                self.arm_checkpoint(short, events);
                // fsyncs waiting for this commit end; a transaction begun meanwhile commits
                // when due.
                let mut waiting = std::mem::take(&mut self.commit_waiting);
                waiting.retain(|&s| {
                    let o = &self.ops[s as usize];
                    if o.mount == m as usize && o.wait_seq <= committed {
                        self.conts.push_back(Cont::Op(s));
                        false
                    } else {
                        true
                    }
                });
                self.commit_waiting = waiting;
                // fsyncs waiting for the transaction that ran meanwhile: it commits now (it
                // used to wait for its timer, which may have fired, unheeded, during this
                // commit: the fsyncs then waited for ever).
                if self.commit_waiting.iter().any(|&s| self.ops[s as usize].mount == m as usize) {
                    self.commit(m, block, events);
                    return;
                }
                let mnt = self.mounts[m as usize].as_mut().expect("mounted");
                if let Some(due) = mnt.journal.due() {
                    if !mnt.commit_armed {
                        mnt.commit_armed = true;
                        events.schedule(due.max(now), E::from(FileEvent::Commit(m)));
                    }
                }
                return;
            }
        };
        let mnt = self.mounts[m as usize].as_mut().expect("mounted");
        let (c, _, _) = mnt.commit.take().expect("set above");
        mnt.commit = Some((c, sent, next));
        if sent == 0 {
            self.conts.push_back(Cont::Commit(m));
        }
    }
}
