//! Writeback: the flusher's passes (background, periodic, checkpoint) and a page-cache
//! run written to the blocks its file maps (allocated then under delayed allocation).

use super::*;

impl FileLayer {
    /// Page-cache run `r` written back: ext4 allocates its blocks now (delayed allocation);
    /// its pages go to the blocks mapped. Returns the bios sent.
    pub(super) fn writeback_run<D, E>(&mut self, r: pagecache::Run, waiter: Option<u32>, process: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>) -> u32
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    {
        let now = events.now();
        let (m, ino) = self.ids.split(r.file);
        let mnt = self.mounts[m].as_mut().expect("a mounted file system");
        let per = PAGE / mnt.block_size;
        // Blocks smaller than a page: the last page's blocks past the end of the file get
        // none (ext4's mpage_prepare_extent_to_map stops at i_size).
        let mut count = r.len as u64 * per;
        if per > 1 {
            count = count.min(mnt.size_of(ino).unwrap_or(0).div_ceil(mnt.block_size).saturating_sub(r.start * per));
        }
        if mnt.delalloc && count > 0 {
            let task = Task { cpu: process % self.cpus.cores(), pid: process };
            if let Ok(ch) = mnt.fs_mut().allocate(ino, (r.start * per) as u32, count as u32, task) {
                let extents = ch.data.len() as u64;
                if extents > 0 {
                    self.cpus.run(now, process, self.costs.alloc_ns * extents);
                }
                // Blocks allocated at writeback (delayed allocation): what fdatasync waits for.
                self.journal(m, &ch, None, Some((ino, true)), events);
            }
            // Blocks still unmapped found no space: their pages are written nowhere and
            // clean, so their promises end (ext4 drops such pages: mpage_release_unused_pages).
            let mnt = self.mounts[m].as_mut().expect("a mounted file system");
            let l0 = (r.start * per) as u32;
            mnt.fs_mut().undelay(ino, l0, l0 + (r.len as u64 * per) as u32);
        }
        let runs = self.blocks_of(m, ino, r.start, r.len as u64);
        self.report.written_back_pages += r.len as u64;
        let n = self.send_blocks(m, Op::Write, &runs, Purpose::Writeback(waiter, r), process, block, events);
        if n == 0 {
            // Nothing mapped (the file was deleted meanwhile): the run is done at once.
            self.cache.complete_writeback(now, r);
            self.writeback_ended(r.file);
        }
        n
    }



    /// Dirty pages passed the background threshold (or reclaim met dirty pages): the
    /// flusher works now rather than at its next periodic wake-up.
    pub(super) fn kick_flusher<E: From<FileEvent> + Copy>(&mut self, events: &mut EventQueue<E>) {
        let now = events.now();
        if self.flusher_at.is_some_and(|t| t <= now) || self.flushing > 0 {
            return;
        }
        self.flusher_at = Some(now);
        events.schedule(now, E::from(FileEvent::Flusher));
    }

    /// The flusher's pass: background writeback while over the threshold, else what has
    /// expired; the journals' committed metadata written home; its next wake-up armed.
    pub(super) fn flush<D, E>(&mut self, block: &mut BlockLayer<D>, events: &mut EventQueue<E>)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    {
        let now = events.now();
        if self.flushing == 0 {
            let (background, _) = self.cache.dirty_thresholds();
            let work = if self.cache.dirty_pages() > background { WbWork::Background } else { WbWork::Periodic };
            let mut runs = std::mem::take(&mut self.runs);
            self.cache.writeback(now, work, FLUSH_BATCH_PAGES, &mut runs);
            self.plug();
            for r in runs.clone() {
                let pages = r.len as u64;
                if self.writeback_run(r, None, self.flusher_pid(), block, events) > 0 {
                    self.flushing += pages;
                }
            }
            self.unplug(block, events);
            self.runs = runs;
            // Checkpoint: committed metadata home. jbd2 leaves it to writeback as dirty
            // buffers of the block device, written once they expire (or in background
            // writeback), unless the log needs the room first.
            let expire = self.cache.expire_interval();
            for m in 0..self.mounts.len() {
                let Some(mnt) = self.mounts[m].as_mut() else { continue };
                let due = mnt.journal.checkpoint_since().is_some_and(|t| t + expire <= now);
                if !(due || work == WbWork::Background || mnt.journal.log_short()) {
                    continue;
                }
                let blocks = mnt.journal.take_checkpoint();
                if blocks.is_empty() {
                    continue;
                }
                self.report.checkpoint_blocks += blocks.len() as u64;
                let mut runs: Vec<(u64, u64)> = Vec::new();
                for b in blocks {
                    match runs.last_mut() {
                        Some(last) if last.0 + last.1 == b => last.1 += 1,
                        _ => runs.push((b, 1)),
                    }
                }
                self.send_blocks(m, Op::Write, &runs, Purpose::Home, self.jbd2(m), block, events);
            }
        }
        // While its writeback is in flight the flusher sleeps: the last completion wakes it.
        // A pass that sent nothing with its periodic wake-up overdue (background work ran in
        // its place) sleeps a whole interval, as wb_workfn does when it finds no work.
        if self.flusher_at.is_none() && self.flushing == 0 {
            let periodic = self.cache.next_periodic().map(|t| if t > now { t } else { now + self.cache.writeback_interval() });
            if let Some(at) = periodic.into_iter().chain(self.checkpoint_due()).min() {
                self.flusher_at = Some(at);
                events.schedule(at, E::from(FileEvent::Flusher));
            }
        }
    }

    /// When the oldest committed metadata waiting to go home expires (never in the past).
    fn checkpoint_due(&self) -> Option<Time> {
        let expire = self.cache.expire_interval();
        self.mounts.iter().flatten().filter_map(|m| m.journal.checkpoint_since()).min().map(|t| t + expire)
    }

    /// A commit left metadata to write home: the flusher, asleep, wakes when it expires,
    /// or now when the log is `short` of room.
    pub(super) fn arm_checkpoint<E: From<FileEvent> + Copy>(&mut self, short: bool, events: &mut EventQueue<E>) {
        if short {
            return self.kick_flusher(events);
        }
        if self.flusher_at.is_some() || self.flushing > 0 {
            return;
        }
        if let Some(at) = self.checkpoint_due() {
            let at = at.max(events.now());
            self.flusher_at = Some(at);
            events.schedule(at, E::from(FileEvent::Flusher));
        }
    }
}
