//! File operations once their system call has had its CPU: namespace changes, buffered
//! reads and writes through the cache, O_DIRECT, and fsync's stages.

use super::mapping::Mapped;
use super::*;

impl FileLayer {
    /// Operation `slot`'s system call has had its CPU: what it does to the file system and
    /// the cache, and the I/O it must wait for.
    pub(super) fn act<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let now = events.now();
        let o = self.ops[slot as usize];
        if !o.done.ok {
            return self.complete(slot, events, host);
        }
        let set_i = o.io.set as usize;
        let e = o.done.entry;
        let task = Task { cpu: o.io.process % self.cpus.cores(), pid: o.io.process };
        let exists = self.sets[set_i].exists(e);
        match o.io.op {
            FileIoOp::Create => {
                if exists {
                    return self.fail_with(slot, EEXIST, events, host);
                }
                let set = &self.sets[set_i];
                let parent = set.dirs[set.dir_of(e)];
                let mnt = self.mounts[o.mount].as_mut().expect("a mounted file system");
                let made = mnt.fs_mut().create(parent, &SetState::name(e), task).map(|(ino, ch)| {
                    let size = self.sets[set_i].created(e, ino);
                    let op = &mut self.ops[slot as usize];
                    (op.ino, op.file, op.done.size) = (ino, self.ids.id(o.mount, ino), size);
                    ch
                });
                self.settle(slot, o.mount, made, events, host);
            }
            FileIoOp::CreateClose if exists => {
                // open(O_CREAT) of a file that is there: opened, then closed.
                self.complete(slot, events, host);
            }
            FileIoOp::CreateClose | FileIoOp::Mkdir => {
                if exists {
                    return self.fail_with(slot, EEXIST, events, host);
                }
                let set = &self.sets[set_i];
                let parent = set.dirs[set.dir_of(e)];
                let mnt = self.mounts[o.mount].as_mut().expect("a mounted file system");
                let made = if o.io.op == FileIoOp::Mkdir {
                    mnt.fs_mut().mkdir(parent, &SetState::name(e), task)
                } else {
                    mnt.fs_mut().create(parent, &SetState::name(e), task).inspect(|&(ino, _)| mnt.fs_mut().release(ino))
                };
                let made = made.map(|(ino, ch)| {
                    self.sets[set_i].created(e, ino);
                    // Closed at once: other threads' picks may take it.
                    self.sets[set_i].publish(e);
                    let op = &mut self.ops[slot as usize];
                    (op.ino, op.file) = (ino, self.ids.id(o.mount, ino));
                    ch
                });
                self.settle(slot, o.mount, made, events, host);
            }
            _ if !exists && o.io.op.needs_existing() => self.fail_with(slot, ENOENT, events, host),
            FileIoOp::Rmdir => {
                let set = &self.sets[set_i];
                let parent = set.dirs[set.dir_of(e)];
                let mnt = self.mounts[o.mount].as_mut().expect("a mounted file system");
                let removed = mnt.fs_mut().rmdir(parent, &SetState::name(e)).inspect(|_| self.sets[set_i].deleted(e));
                self.settle(slot, o.mount, removed, events, host);
            }
            FileIoOp::Open | FileIoOp::Stat | FileIoOp::ListDir => {
                if o.io.op != FileIoOp::ListDir {
                    let mnt = self.mounts[o.mount].as_ref().expect("a mounted file system");
                    self.ops[slot as usize].done.size = mnt.size_of(o.ino).unwrap_or(0);
                }
                self.complete(slot, events, host);
            }
            FileIoOp::Close => {
                self.sets[set_i].publish(e);
                let mnt = self.mounts[o.mount].as_mut().expect("a mounted file system");
                mnt.fs_mut().release(o.ino);
                self.ras.remove(&o.file);
                self.complete(slot, events, host);
            }
            FileIoOp::Delete => {
                let set = &self.sets[set_i];
                let parent = set.dirs[set.dir_of(e)];
                let dropped = self.cache.delete(o.file);
                self.report.dropped_dirty_pages += dropped.dirty;
                self.ras.remove(&o.file);
                let mnt = self.mounts[o.mount].as_mut().expect("a mounted file system");
                // The dropped pages' promises end (the file's, whether or not the unlink
                // goes through).
                mnt.fs_mut().undelay(o.ino, 0, u32::MAX);
                let removed = mnt.fs_mut().unlink(parent, &SetState::name(e)).inspect(|_| self.sets[set_i].deleted(e));
                self.settle(slot, o.mount, removed, events, host);
            }
            FileIoOp::Read if o.io.direct => self.direct(slot, Op::Read, block, events, host),
            FileIoOp::Write if o.io.direct => self.direct(slot, Op::Write, block, events, host),
            FileIoOp::Read | FileIoOp::Send => self.read(slot, block, events, host),
            FileIoOp::Write => self.write(slot, block, events, host),
            FileIoOp::Fsync { .. } | FileIoOp::Sync => self.fsync(slot, block, events, host),
            FileIoOp::Mkfs => self.mkfs(slot, block, events, host),
            FileIoOp::Compute { .. } => unreachable!("a computation ends when its CPU burst does (FileLayer::handle)"),
        }
        let _ = now;
    }


    /// A namespace change (create, mkdir, rmdir, unlink) is made, its metadata journalled, or
    /// it failed: the entry it claimed is pickable again and the call fails with its errno.
    fn settle<E, U: FileUpper<E>>(&mut self, slot: u32, mount: usize, outcome: Result<Changes, crate::fs::FsError>, events: &mut EventQueue<E>, host: &mut U)
    where
        E: From<FileEvent> + Copy,
    {
        match outcome {
            Ok(ch) => {
                // A new inode is logged whole (ext4_new_inode marks it for fdatasync too); a
                // deleted one's number may come again.
                let o = self.ops[slot as usize];
                let made = matches!(o.io.op, FileIoOp::Create | FileIoOp::CreateClose | FileIoOp::Mkdir);
                if matches!(o.io.op, FileIoOp::Delete | FileIoOp::Rmdir) {
                    self.mounts[mount].as_mut().expect("a mounted file system").inodes.forget(o.ino);
                }
                self.journal(mount, &ch, None, made.then_some((o.ino, true)), events);
                self.complete(slot, events, host);
            }
            Err(err) => {
                self.unclaim(slot);
                self.fail_with(slot, errno(&err), events, host)
            }
        }
    }

    /// Operation `slot`'s create or delete failed: the file it claimed is pickable again.
    fn unclaim(&mut self, slot: u32) {
        let o = self.ops[slot as usize];
        if o.claimed {
            self.sets[o.io.set as usize].unclaim(o.done.entry);
        }
    }

    /// A buffered read: hits come from the cache; misses and read-ahead are read from the
    /// blocks the file system maps them to (holes read as zeros, no I/O).
    pub(super) fn read<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let now = events.now();
        let o = self.ops[slot as usize];
        let mnt = self.mounts[o.mount].as_ref().expect("a mounted file system");
        let size = mnt.size_of(o.ino).unwrap_or(0);
        let eof = size.div_ceil(PAGE);
        let first = (o.io.offset + o.written) / PAGE;
        let last = (o.io.offset + o.io.len).div_ceil(PAGE).min(eof);
        self.ops[slot as usize].done.size = size;
        if first >= last {
            return self.complete(slot, events, host);
        }
        let ra_kb = mnt.read_ahead_kb;
        let ra = self.ras.entry(o.file).or_insert_with(|| RaState::new(ra_kb));
        // The advice is per open file in the kernel; here the state is per file, set by
        // the advice of whoever reads it.
        if let Some(advice) = o.io.fadvise {
            ra.advise(advice, ra_kb);
        }
        let mut plan = std::mem::take(&mut self.plan);
        let sum = self.cache.read(now, o.file, ra, first..last, eof, &mut plan);
        self.report.cache_hits += sum.hits;
        self.report.cache_misses += sum.misses;
        self.report.readahead_pages += sum.readahead;
        self.report.evicted_pages += plan.evicted.len() as u64;
        if sum.wake_flusher {
            self.kick_flusher(events);
        }
        // The pages to read are the cache's (being read) from now; their bios go down once
        // the blocks mapping them are in memory (`mapping.rs`).
        let per = PAGE / self.mounts[o.mount].as_ref().expect("a mounted file system").block_size;
        let mut runs = Vec::with_capacity(plan.runs.len());
        let mut paths = Vec::new();
        for r in plan.runs.clone() {
            let blocks = self.data_blocks_of(&o, r.run.start, r.run.len as u64);
            let id = self.reading.begin(o.file, r.run.start, r.run.end());
            self.map_paths(o.mount, o.ino, r.run.start * per, r.run.end() * per, &mut paths);
            runs.push((id, blocks));
        }
        self.plan = plan;
        let then = Mapped::Read { runs, first, last, blocked_at: sum.blocked_at };
        self.map_then(slot, paths, then, block, events, host);
    }

    /// A buffered read's pages are on their way: it waits for those of its range still
    /// being read (its own, and those read ahead or read by others before it).
    pub(super) fn read_wait<D, E, U>(&mut self, slot: u32, first: u64, last: u64, blocked_at: Option<u64>, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let now = events.now();
        let o = self.ops[slot as usize];
        let upto = blocked_at.unwrap_or(last).max(first + 1).min(last);
        let pending = self.reading.wait(o.file, first, upto, slot);
        if let Some(p) = blocked_at {
            // Reclaim found nothing to free: the read goes on from page `p` after its I/O
            // and a wait for writeback.
            let op = &mut self.ops[slot as usize];
            op.written = (p * PAGE).saturating_sub(o.io.offset).max(o.written);
            op.resume = true;
        }
        if pending == 0 {
            return self.proceed(slot, block, events, host);
        }
        self.await_bios(slot, Stage::Io, pending, now);
    }

    /// The blocks write `o` covers only in part that hold data and are not in the cache:
    /// read before it (`block_write_begin` → `__block_write_begin_int` in fs/buffer.c reads a
    /// buffer that is not uptodate and that the write does not cover whole; ext4's
    /// `ext4_da_write_begin` and the block device's `blkdev_write_begin` go through it). A
    /// block past the end of the file is zeroed instead, an unmapped one (a hole, or
    /// promised by delayed allocation) holds nothing to read.
    fn partial_blocks(&self, o: &OpState) -> Vec<(u64, u64)> {
        let mnt = self.mounts[o.mount].as_ref().expect("a mounted file system");
        let bs = mnt.block_size;
        let size = mnt.size_of(o.ino).unwrap_or(0);
        let (start, end) = (o.io.offset, o.io.offset + o.io.len);
        let mut edges = Vec::with_capacity(2);
        if start % bs != 0 {
            edges.push(start / bs);
        }
        if end % bs != 0 && edges.last() != Some(&(end / bs)) {
            edges.push(end / bs);
        }
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for l in edges {
            let page = l * bs / PAGE;
            if l * bs >= size || self.cache.page_info(o.file, page).is_some() {
                continue;
            }
            if self.unwritten_page(o, page) {
                continue; // an unwritten extent: zeros, no I/O
            }
            if let Some(p) = mnt.map(o.ino, l as u32) {
                match runs.last_mut() {
                    Some(last) if last.0 + last.1 == p => last.1 += 1,
                    _ => runs.push((p, 1)),
                }
            }
        }
        runs
    }

    /// Pages `[start, end)` of write `o`'s file hold data from now, where its set was laid
    /// out unwritten.
    fn note_written(&mut self, o: &OpState, start: u64, end: u64) {
        let set = &mut self.sets[o.io.set as usize];
        if set.spec.unwritten {
            set.written_pages.extend((start / PAGE..end.div_ceil(PAGE)).map(|p| (o.done.entry, p)));
        }
    }

    /// Whether a write up to byte `end` of mount `m` would pass its block device's end
    /// (`blkdev_write_iter` refuses it with ENOSPC; a file grows instead).
    fn past_device_end(&self, m: usize, end: u64) -> bool {
        let mnt = self.mounts[m].as_ref().expect("a mounted file system");
        mnt.fs.is_none() && end > mnt.device_bytes
    }

    /// Operation `slot` was stopped by reclaim: it waits (congestion_wait, HZ/10 in
    /// mm/vmscan.c of both eras) for writeback to free pages, then goes on.
    fn reclaim_wait<E: From<FileEvent> + Copy>(&mut self, slot: u32, events: &mut EventQueue<E>) {
        let now = events.now();
        self.kick_flusher(events);
        self.ops[slot as usize].stage = Stage::Throttled;
        self.report.throttled_ns += RECLAIM_WAIT_NS;
        self.sleep_as(slot, now, Sleep::Io);
        events.schedule(now + RECLAIM_WAIT_NS, E::from(FileEvent::Op(slot)));
    }

    /// Whether page `page` of `o`'s file lies in an unwritten extent: laid out by fallocate
    /// and not written since. It holds zeros and is read without I/O, as the kernel does
    /// (ext4_map_blocks reports such blocks unwritten; the buffered read path zeroes the
    /// page as for a hole, `ext4_mpage_readpages`, and direct I/O fills zeros, iomap's
    /// `iomap_dio_hole_iter` for IOMAP_UNWRITTEN).
    fn unwritten_page(&self, o: &OpState, page: u64) -> bool {
        let set = &self.sets[o.io.set as usize];
        set.spec.unwritten && !set.written_pages.contains(&(o.done.entry, page))
    }

    /// The block runs a read of pages `[first, first + n)` of `o`'s file must fetch: the
    /// mapped blocks of pages that hold data.
    fn data_blocks_of(&self, o: &OpState, first: u64, n: u64) -> Vec<(u64, u64)> {
        if !self.sets[o.io.set as usize].spec.unwritten {
            return self.blocks_of(o.mount, o.ino, first, n);
        }
        let mut out: Vec<(u64, u64)> = Vec::new();
        for page in (first..first + n).filter(|&p| !self.unwritten_page(o, p)) {
            for (p, len) in self.blocks_of(o.mount, o.ino, page, 1) {
                match out.last_mut() {
                    Some(last) if last.0 + last.1 == p => last.1 += len,
                    _ => out.push((p, len)),
                }
            }
        }
        out
    }

    /// The physical block runs holding pages `[first, first + n)` of a file (unmapped
    /// blocks left out).
    pub(super) fn blocks_of(&self, m: usize, ino: Ino, first: u64, n: u64) -> Vec<(u64, u64)> {
        let mnt = self.mounts[m].as_ref().expect("a mounted file system");
        let per = PAGE / mnt.block_size;
        let mut out: Vec<(u64, u64)> = Vec::new();
        for l in first * per..(first + n) * per {
            let Some(p) = mnt.map(ino, l as u32) else { continue };
            match out.last_mut() {
                Some(last) if last.0 + last.1 == p => last.1 += 1,
                _ => out.push((p, 1)),
            }
        }
        out
    }

    /// A buffered write: pages dirtied in the cache (ext3 allocates their blocks now; ext4
    /// promises them, to allocate at writeback), the file's size grown, the writer throttled
    /// as balance_dirty_pages says.
    pub(super) fn write<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let now = events.now();
        let o = self.ops[slot as usize];
        if self.past_device_end(o.mount, o.io.offset + o.io.len) {
            return self.fail_with(slot, ENOSPC, events, host);
        }
        if !o.mapped {
            // The blocks mapping the range first (`mapping.rs`); then the write again.
            self.ops[slot as usize].mapped = true;
            let bs = self.mounts[o.mount].as_ref().expect("a mounted file system").block_size;
            let mut paths = Vec::new();
            self.map_paths(o.mount, o.ino, o.io.offset / bs, (o.io.offset + o.io.len).div_ceil(bs), &mut paths);
            if !paths.is_empty() {
                return self.map_then(slot, paths, Mapped::Write, block, events, host);
            }
        }
        if !o.filled {
            self.ops[slot as usize].filled = true;
            let runs = self.partial_blocks(&o);
            if !runs.is_empty() {
                self.report.partial_block_reads += runs.len() as u64;
                let n = self.send_blocks(o.mount, Op::Read, &runs, Purpose::Op(slot), o.io.process, block, events);
                self.await_bios(slot, Stage::Io, n, now);
                return;
            }
        }
        // A write blocked for want of a reclaimable page goes on where it stopped.
        let start = o.io.offset + o.written;
        let end = o.io.offset + o.io.len;
        let mut evicted = std::mem::take(&mut self.evicted);
        let ws = self.cache.write(now, o.file, start / PAGE..end.div_ceil(PAGE), &mut evicted);
        self.report.dirtied_pages += ws.dirtied;
        self.report.evicted_pages += evicted.len() as u64;
        self.evicted = evicted;
        let upto = ws.blocked_at.map_or(end, |p| (p * PAGE).clamp(start, end));
        self.note_written(&o, start, upto);
        let task = Task { cpu: o.io.process % self.cpus.cores(), pid: o.io.process };
        let mnt = self.mounts[o.mount].as_mut().expect("a mounted file system");
        if let Some(fs) = mnt.fs.as_mut() {
            fs.open_for_write(o.ino);
        }
        let bs = mnt.block_size;
        let size = mnt.size_of(o.ino).unwrap_or(0);
        let mut changes = Changes::default();
        let ok = if upto == start || mnt.fs.is_none() {
            // A block device's blocks are all there: nothing to allocate or log.
            true
        } else if mnt.delalloc {
            // The written pages' blocks below the end of the file (none past it: ext4's
            // write_begin maps only those) are promised unless already allocated or promised;
            // or, with free space short, allocated now (asked once per call, not per page).
            let (l0, l1) = promised_range(start, upto, upto.max(size), bs);
            if mnt.fs().nonda_switch(nonda_watermark(self.cpus.cores())) {
                self.report.nonda_writes += 1;
                match mnt.fs_mut().allocate_each(o.ino, l0, l1, task) {
                    Ok(ch) => {
                        changes = ch;
                        true
                    }
                    Err(_) => false,
                }
            } else {
                mnt.fs_mut().delay(o.ino, l0, l1).is_ok()
            }
        } else {
            // ext3: blocks now, with the metadata they dirty; the data is ordered before it.
            let (l0, l1) = (start / bs, upto.div_ceil(bs));
            match mnt.fs_mut().allocate(o.ino, l0 as u32, (l1 - l0) as u32, task) {
                Ok(ch) => {
                    changes = ch;
                    true
                }
                Err(_) => false,
            }
        };
        if upto > size {
            if let Ok(ch) = mnt.fs_mut().set_size(o.ino, upto) {
                changes.metadata.extend(ch.metadata);
            }
        }
        self.ops[slot as usize].done.size = upto.max(size);
        let extents = changes.data.len() as u64;
        if extents > 0 {
            self.cpus.run(now, o.io.process, self.costs.alloc_ns * extents);
        }
        let datasync = !changes.data.is_empty() || upto > size;
        if upto > start {
            stamp_times(mnt, o.ino, now, &mut changes);
        }
        let ordered = (!changes.data.is_empty()).then_some(o.file);
        self.journal(o.mount, &changes, ordered, Some((o.ino, datasync)), events);
        if !ok {
            return self.fail(slot, events, host);
        }
        if upto < end {
            // Reclaim found no clean page: the writer waits and writes the rest.
            let op = &mut self.ops[slot as usize];
            op.written = upto - o.io.offset;
            op.resume = true;
            return self.reclaim_wait(slot, events);
        }
        let t = self.cache.balance_dirty_pages(now, &mut self.writers[o.io.process as usize], ws.dirtied);
        if t.start_background || ws.wake_flusher || ws.over_background {
            self.kick_flusher(events);
        }
        if t.pause_ns > 0 {
            self.report.throttled_ns += t.pause_ns;
            let op = &mut self.ops[slot as usize];
            op.stage = Stage::Throttled;
            op.over_limit = t.over_limit;
            self.sleep_as(slot, now, Sleep::Io);
            events.schedule(now + t.pause_ns, E::from(FileEvent::Op(slot)));
            return;
        }
        self.complete(slot, events, host);
    }

    /// A pause is over: a read or write stopped by reclaim goes on; a writer over the dirty
    /// limit asks again.
    pub(super) fn unthrottle<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let now = events.now();
        // The pause's timer wakes the thread: a write that goes on runs its CPU as an
        // awake thread, and one paused again sleeps anew.
        self.io_waited(slot, now);
        let o = self.ops[slot as usize];
        if o.resume {
            self.ops[slot as usize].resume = false;
            return match o.io.op {
                FileIoOp::Read | FileIoOp::Send => self.read(slot, block, events, host),
                _ => self.write(slot, block, events, host),
            };
        }
        if o.over_limit {
            let t = self.cache.balance_dirty_pages(now, &mut self.writers[o.io.process as usize], 0);
            if t.start_background {
                self.kick_flusher(events);
            }
            if t.pause_ns > 0 {
                self.report.throttled_ns += t.pause_ns;
                self.ops[slot as usize].over_limit = t.over_limit;
                events.schedule(now + t.pause_ns, E::from(FileEvent::Op(slot)));
                return;
            }
        }
        self.complete(slot, events, host);
    }

    /// O_DIRECT: the blocks mapped (a write allocates what is unmapped) and read or written
    /// straight from the user's buffer.
    pub(super) fn direct<D, E, U>(&mut self, slot: u32, op: Op, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let o = self.ops[slot as usize];
        if op == Op::Write && self.past_device_end(o.mount, o.io.offset + o.io.len) {
            return self.fail_with(slot, ENOSPC, events, host);
        }
        if op == Op::Write {
            self.note_written(&o, o.io.offset, o.io.offset + o.io.len);
        }
        let task = Task { cpu: o.io.process % self.cpus.cores(), pid: o.io.process };
        let mnt = self.mounts[o.mount].as_mut().expect("a mounted file system");
        let bs = mnt.block_size;
        let (l0, l1) = (o.io.offset / bs, (o.io.offset + o.io.len).div_ceil(bs));
        if op == Op::Write && mnt.fs.is_some() {
            match mnt.fs_mut().allocate(o.ino, l0 as u32, (l1 - l0) as u32, task) {
                Ok(mut ch) => {
                    let end = o.io.offset + o.io.len;
                    let grows = end > mnt.size_of(o.ino).unwrap_or(0);
                    if grows {
                        if let Ok(s) = mnt.fs_mut().set_size(o.ino, end) {
                            ch.metadata.extend(s.metadata);
                        }
                    }
                    let datasync = grows || !ch.data.is_empty();
                    stamp_times(mnt, o.ino, events.now(), &mut ch);
                    self.journal(o.mount, &ch, None, Some((o.ino, datasync)), events);
                }
                Err(_) => return self.fail(slot, events, host),
            }
        }
        let mnt = self.mounts[o.mount].as_ref().expect("a mounted file system");
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for l in l0..l1 {
            if op == Op::Read && self.unwritten_page(&o, l * bs / PAGE) {
                continue;
            }
            if let Some(p) = mnt.map(o.ino, l as u32) {
                match runs.last_mut() {
                    Some(last) if last.0 + last.1 == p => last.1 += 1,
                    _ => runs.push((p, 1)),
                }
            }
        }
        let mut paths = Vec::new();
        self.map_paths(o.mount, o.ino, l0, l1, &mut paths);
        self.map_then(slot, paths, Mapped::Direct { op, runs }, block, events, host);
    }

    /// fsync: the file's dirty pages written (ext4 allocating them now), then the journal
    /// committed if the file's metadata is in the running transaction, else a cache flush.
    pub(super) fn fsync<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let now = events.now();
        let o = self.ops[slot as usize];
        let mut runs = std::mem::take(&mut self.runs);
        if o.io.op == FileIoOp::Sync {
            self.cache.writeback(now, WbWork::All, u64::MAX, &mut runs);
        } else {
            self.cache.fsync(o.file, &mut runs);
        }
        let mut pending = 0;
        self.plug();
        for r in runs.clone() {
            pending += self.writeback_run(r, Some(slot), o.io.process, block, events);
        }
        self.unplug(block, events);
        self.runs = runs;
        self.await_bios(slot, Stage::Io, pending, now);
        let mnt = self.mounts[o.mount].as_ref().expect("a mounted file system");
        let commits_2008 = match o.io.op {
            FileIoOp::Fsync { data_only } => mnt.kernel == KernelEra::Y2008 && mnt.inodes.is_dirty(o.ino, data_only),
            _ => false,
        };
        if commits_2008 {
            // 2.6.2x's do_fsync only submits the file's pages (filemap_fdatawrite) before
            // ext3_sync_file's wait for the commit, which writes them as ordered data; its
            // filemap_fdatawait then finds them written. So the thread's wait is the
            // commit's (wait_event: D state), not io_schedule's, from the start. Without a
            // commit to force (an fdatasync of an overwrite) the wait is filemap_fdatawait's,
            // io_schedule. Today's ext4_sync_file waits for the pages first
            // (file_write_and_wait_range: io_schedule, iowait), then for the commit.
            self.sleep_as(slot, now, Sleep::Blocked);
        }
        if pending == 0 {
            self.proceed(slot, block, events, host);
        }
    }

    /// mke2fs, timed. Its `pwrite`s go to the block device's page cache, which writes them
    /// back in block order; `ext2fs_close` then fsyncs the device. Sent here as that
    /// writeback sends them: the blocks mke2fs wrote, merged where they touch, as bios of up
    /// to the queue's largest, all queued at once (the block queue's request limit holds the rest
    /// back, as a writer over the dirty limit is held). The CPU is mke2fs's page copies.
    /// Today's mke2fs discards the device first: not sent (a run starts on the device as
    /// its profile leaves it).
    fn mkfs<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let now = events.now();
        let o = self.ops[slot as usize];
        let mnt = self.mounts[o.mount].as_ref().expect("a mounted file system");
        let (_, io) = FileSystem::mkfs(mnt.fs().config().clone()).expect("the file system was made from this config");
        let runs = mkfs_runs(&io.writes, mnt.block_size);
        let bytes: u64 = runs.iter().map(|r| r.1).sum::<u64>() * mnt.block_size;
        self.cpus.run(now, o.io.process, self.costs.page_copy_ns * bytes.div_ceil(PAGE));
        self.report.mkfs_bytes += bytes;
        let n = self.send_blocks(o.mount, Op::Write, &runs, Purpose::Op(slot), o.io.process, block, events);
        self.await_bios(slot, Stage::Io, n, now);
        if n == 0 {
            self.proceed(slot, block, events, host);
        }
    }

    /// Operation `slot`'s I/O (or the wait it was in) is over: its next stage.
    pub(super) fn proceed<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let o = self.ops[slot as usize];
        if o.stage == Stage::Lookup {
            return self.looked_up(slot, block, events, host);
        }
        if o.stage == Stage::Map {
            return self.mapped(slot, block, events, host);
        }
        if o.resume {
            return self.reclaim_wait(slot, events);
        }
        if o.io.op == FileIoOp::Mkfs {
            // fsync of a block device flushes its cache since Linux 2.6.32 (commit ab0a9735e,
            // "blkdev: flush disk cache on ->fsync"); a 2008 kernel's did not.
            let mnt = self.mounts[o.mount].as_ref().expect("a mounted file system");
            if o.stage == Stage::Io && mnt.kernel == KernelEra::Today {
                let target = mnt.target;
                let op = &mut self.ops[slot as usize];
                op.stage = Stage::Flush;
                op.pending = 1;
                self.send(target, Op::Flush, 0, 0, Purpose::Flush(slot), o.io.process, block, events);
                return;
            }
            return self.complete(slot, events, host);
        }
        if o.io.op == FileIoOp::Send {
            return self.transmit(slot, events, host);
        }
        if o.io.op == FileIoOp::Write && !o.io.direct && o.stage == Stage::Io {
            // The blocks it covers in part are read: the write itself now.
            self.ops[slot as usize].stage = Stage::Cpu;
            self.io_waited(slot, events.now());
            return self.write(slot, block, events, host);
        }
        if !matches!(o.io.op, FileIoOp::Fsync { .. } | FileIoOp::Sync) {
            return self.complete(slot, events, host);
        }
        match o.stage {
            Stage::Io | Stage::WritebackWait => {
                // The flusher's writeback of the file (sync: of any file), begun before, must
                // end too.
                if self.writeback_left(slot) {
                    self.ops[slot as usize].stage = Stage::WritebackWait;
                    if !self.fsync_waiting.contains(&slot) {
                        self.fsync_waiting.push(slot);
                    }
                    return;
                }
                let mnt = self.mounts[o.mount].as_mut().expect("a mounted file system");
                if let Some(seq) = commit_to_wait_for(mnt, &o) {
                    // 2008's forced commit goes through a synchronous handle on the running
                    // transaction, which may first sleep for others to join (`batch.rs`).
                    let forced = mnt.kernel == KernelEra::Y2008
                        && matches!(o.io.op, FileIoOp::Fsync { .. })
                        && mnt.journal.has_running()
                        && seq == mnt.journal.running_sequence();
                    if forced && self.sync_handle(slot, o.mount, events) {
                        return;
                    }
                    let mnt = self.mounts[o.mount].as_mut().expect("a mounted file system");
                    let op = &mut self.ops[slot as usize];
                    op.stage = Stage::Commit;
                    op.wait_seq = seq;
                    self.commit_waiting.push(slot);
                    let committing = mnt.journal.committing;
                    // ext3's and ext4's fsync wait for the commit in log_wait_commit's
                    // wait_event (fs/jbd/journal.c, fs/jbd2/journal.c): D state, not io_schedule.
                    self.sleep_as(slot, events.now(), Sleep::Blocked);
                    if !committing {
                        self.commit(o.mount as u16, block, events);
                    }
                } else if mnt.barriers {
                    // Nothing to commit: the device's cache flushed, waited for as one bio (its
                    // completion counts down `pending`, which the writeback left at 0).
                    let target = mnt.target;
                    let op = &mut self.ops[slot as usize];
                    op.stage = Stage::Flush;
                    op.pending = 1;
                    self.send(target, Op::Flush, 0, 0, Purpose::Flush(slot), o.io.process, block, events);
                } else {
                    self.complete(slot, events, host);
                }
            }
            Stage::Commit | Stage::Flush => self.complete(slot, events, host),
            s => panic!("fsync proceeding from stage {s:?}"),
        }
    }
}

/// The transaction an fsync, fdatasync or sync (`o`, its writeback done) waits for, if one:
/// sync(2) commits whatever is running or committing; fsync and fdatasync as the mount's
/// kernel decides (`inode_sync.rs`). A transaction still running is committed for it.
fn commit_to_wait_for(mnt: &mut Mount, o: &OpState) -> Option<u64> {
    let j = &mnt.journal;
    let running_or_last = || {
        if j.has_running() {
            Some(j.running_sequence())
        } else {
            j.committing.then(|| j.committed() + 1)
        }
    };
    match o.io.op {
        FileIoOp::Fsync { data_only } => match mnt.kernel {
            KernelEra::Today => mnt.inodes.must_commit(o.ino, data_only, j.committed()),
            // ext3_force_commit: the running transaction, whatever it holds.
            KernelEra::Y2008 => {
                if mnt.inodes.take_dirty(o.ino, data_only) {
                    running_or_last()
                } else {
                    None
                }
            }
        },
        _ => running_or_last(),
    }
}

/// A write at `now` sets file `ino`'s modification and change times (`file_update_time`):
/// when they move to a new granule its inode block joins `changes`, unless already there.
fn stamp_times(mnt: &mut Mount, ino: Ino, now: Time, changes: &mut Changes) {
    if mnt.fs.is_none() || !mnt.inodes.stamp(ino, now) {
        return;
    }
    let b = mnt.fs().inode_block(ino);
    if !changes.metadata.contains(&b) {
        changes.metadata.push(b);
    }
}

/// Linux's errno values (asm-generic/errno-base.h, errno.h) for the failures a file system
/// call can report.
pub(super) const ENOENT: u16 = 2;
pub(super) const EEXIST: u16 = 17;
const ENOTDIR: u16 = 20;
const EISDIR: u16 = 21;
const EFBIG: u16 = 27;
const ENOSPC: u16 = 28;
const ENOTEMPTY: u16 = 39;

/// The errno a system call returns for a file system's failure.
fn errno(e: &crate::fs::FsError) -> u16 {
    use crate::fs::FsError as F;
    match e {
        F::NoSpace | F::NoInodes | F::Config(_) => ENOSPC,
        F::NoInode(_) | F::NotFound => ENOENT,
        F::NotDir(_) => ENOTDIR,
        F::IsDir(_) => EISDIR,
        F::Exists => EEXIST,
        F::NotEmpty => ENOTEMPTY,
        F::TooLarge => EFBIG,
    }
}

/// The block runs `(block, count)` mke2fs's writes leave dirty in the block device's page
/// cache, in block order, merged where they touch or overlap (discards left out).
fn mkfs_runs(writes: &[MkfsWrite], block_size: u64) -> Vec<(u64, u64)> {
    let mut spans: Vec<(u64, u64)> = writes
        .iter()
        .filter(|w| w.what != MkfsWhat::Discard && w.bytes > 0)
        .map(|w| (w.offset / block_size, (w.offset + w.bytes).div_ceil(block_size)))
        .collect();
    spans.sort_unstable();
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for (start, end) in spans {
        match runs.last_mut() {
            Some(last) if start <= last.0 + last.1 => last.1 = last.1.max(end - last.0),
            _ => runs.push((start, end - start)),
        }
    }
    runs
}

#[cfg(test)]
mod mkfs_tests {
    use super::mkfs_runs;
    use crate::fs::{MkfsWhat, MkfsWrite};

    fn w(offset: u64, bytes: u64, what: MkfsWhat) -> MkfsWrite {
        MkfsWrite { offset, bytes, what }
    }

    #[test]
    fn writes_are_merged_in_block_order_and_discards_left_out() {
        let writes = [
            w(0, 1 << 30, MkfsWhat::Discard),
            w(8 * 4096, 8 * 4096, MkfsWhat::InodeTable),
            w(0, 4096, MkfsWhat::Superblock),
            w(16 * 4096, 4096, MkfsWhat::InodeTable),
            w(4096, 4096, MkfsWhat::GroupDescriptors),
            w(9 * 4096, 4096, MkfsWhat::InodeBitmap),
            w(100 * 4096, 2 * 4096, MkfsWhat::Journal),
        ];
        assert_eq!(mkfs_runs(&writes, 4096), vec![(0, 2), (8, 9), (100, 2)]);
    }
}

/// `EXT4_FREECLUSTERS_WATERMARK` (fs/ext4/ext4.h) on an SMP kernel, in blocks: four times
/// `percpu_counter_batch` times `nr_cpu_ids`, the batch `max(32, 2 * online CPUs)`
/// (lib/percpu_counter.c); the CPUs possible taken as the host's (assumed: no hot-plug slots).
pub(super) fn nonda_watermark(cpus: u32) -> u64 {
    4 * (2 * cpus as u64).max(32) * cpus as u64
}

/// The blocks a buffered write over bytes `[start, upto)` asks delayed allocation to promise
/// (those of them already allocated or promised are not promised again): every block of
/// the pages it dirties (the page cache dirties whole pages, and writeback allocates whole
/// pages) below the new end of file `new_size` (ext4's `ext4_da_get_block_prep` maps no
/// buffer past `i_size`, `mpage_prepare_extent_to_map` stops there).
pub(super) fn promised_range(start: u64, upto: u64, new_size: u64, bs: u64) -> (u32, u32) {
    let per = PAGE / bs;
    let first = start / PAGE * per;
    let end = (upto.div_ceil(PAGE) * per).min(new_size.div_ceil(bs));
    (first.min(u32::MAX as u64) as u32, end.clamp(first, u32::MAX as u64) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_asks_for_its_pages_blocks_below_the_end_of_file() {
        // 1 KiB blocks: page 0 whole (4 blocks), then page 1 up to 7 KiB (3 blocks)
        assert_eq!(promised_range(0, 4096, 4096, 1024), (0, 4));
        assert_eq!(promised_range(4096, 7168, 7168, 1024), (4, 7));
        // 1 KiB into an empty file: one block; the next 1 KiB: the page's first two
        assert_eq!(promised_range(0, 1024, 1024, 1024), (0, 1));
        assert_eq!(promised_range(1024, 2048, 2048, 1024), (0, 2));
        // 2 KiB blocks: a 5 KiB file's second page holds one block below the end
        assert_eq!(promised_range(0, 5120, 5120, 2048), (0, 3));
        // 4 KiB blocks: a rewrite inside the file asks for its pages' blocks
        assert_eq!(promised_range(8192, 12288, 1 << 20, 4096), (2, 3));
    }

    #[test]
    fn the_watermark_grows_with_the_cpus() {
        assert_eq!(nonda_watermark(1), 128);
        assert_eq!(nonda_watermark(2), 256);
        assert_eq!(nonda_watermark(32), 4 * 64 * 32);
    }
}
