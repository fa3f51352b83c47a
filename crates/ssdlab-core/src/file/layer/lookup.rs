//! The metadata a name's lookup reads from disk when it is not in memory: the directory
//! blocks on the way to the name and the inode table block holding its inode.
//!
//! Metadata blocks live in the page cache as pages of the device's own mapping (the buffer
//! cache: `sb_bread` reads into the block device's page cache), here the file `META_INO` of
//! each file system. A lookup that misses reads them synchronously and its call waits
//! (`ext4_find_entry` → `ext4_bread`, `__ext4_get_inode_loc` → `wait_on_buffer`). A name
//! looked up or made in the run stays in the dentry and inode caches (`SetState::in_memory`),
//! so later calls on it read nothing, as on a kernel with room for its dentries; a name
//! met for the first time reads what its lookup needs of what the cache does not hold.
//! Blocks a change writes (`Changes::metadata`) are in memory from then on.
//!
//! A large directory's own mapping blocks (indirect or extent blocks) are read with the
//! directory blocks they find; a file's are read by what reads its data (`mapping.rs`).
//!
//! Not modelled: bitmap and group-descriptor reads at a group's first allocation (a few per
//! run).

use super::*;

/// The inode number the file system's metadata pages take in the page cache: 0 is no inode
/// of ext2/3/4's, whose numbers start at 1.
pub(super) const META_INO: Ino = 0;

impl FileLayer {
    /// Operation `slot`'s system call has had its CPU: its lookup reads what it needs that
    /// is not in memory and the operation waits for it, or it goes on at once.
    pub(super) fn look_up<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let o = self.ops[slot as usize];
        let runs = if o.done.ok { self.lookup_reads(&o) } else { Vec::new() };
        if runs.is_empty() {
            return self.found(slot, block, events, host);
        }
        let now = events.now();
        let per = PAGE / self.mounts[o.mount].as_ref().expect("a mounted file system").block_size;
        let mut pending = 0;
        for (b, n) in runs {
            pending += self.read_metadata(slot, o.mount, b / per..(b + n).div_ceil(per), block, events);
        }
        if pending == 0 {
            return self.found(slot, block, events, host);
        }
        self.await_bios(slot, Stage::Lookup, pending, now);
    }

    /// Metadata pages `pages` of mount `m` through the cache, for operation `slot`: those it
    /// lacks are read (one request a run, counted as metadata), and the operation waits for
    /// every one of them still on its way, its own reads and others'. Returns how many runs
    /// it waits for. A page reclaim found no room for is not waited for (the call goes on as
    /// if it had read it; memory that full of dirty pages has the writers throttled).
    pub(super) fn read_metadata<D, E>(&mut self, slot: u32, m: usize, pages: std::ops::Range<u64>, block: &mut BlockLayer<D>, events: &mut EventQueue<E>) -> u32
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    {
        let now = events.now();
        let process = self.ops[slot as usize].io.process;
        let (per, eof) = {
            let mnt = self.mounts[m].as_ref().expect("a mounted file system");
            (PAGE / mnt.block_size, mnt.device_bytes / PAGE)
        };
        let meta = self.ids.id(m, META_INO);
        // No read-ahead: `sb_bread` reads the block asked for (a state of 0 pages keeps none).
        let mut ra = RaState::new(0);
        let mut plan = std::mem::take(&mut self.plan);
        let sum = self.cache.read(now, meta, &mut ra, pages.clone(), eof, &mut plan);
        self.report.cache_hits += sum.hits;
        self.report.cache_misses += sum.misses;
        self.report.evicted_pages += plan.evicted.len() as u64;
        if sum.wake_flusher {
            self.kick_flusher(events);
        }
        for r in plan.runs.clone() {
            self.report.metadata_read_pages += r.run.len as u64;
            let id = self.reading.begin(meta, r.run.start, r.run.end());
            let blocks = [(r.run.start * per, r.run.len as u64 * per)];
            let sent = self.send_blocks(m, Op::Read, &blocks, Purpose::MetaRead(id), process, block, events);
            self.reading.sent(id, sent);
        }
        self.plan = plan;
        let upto = sum.blocked_at.unwrap_or(pages.end);
        if upto > pages.start {
            self.reading.wait(meta, pages.start, upto, slot)
        } else {
            0
        }
    }

    /// Operation `slot`'s lookup has read what it waited for: the call goes on.
    pub(super) fn looked_up<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        self.ops[slot as usize].stage = Stage::Cpu;
        self.io_waited(slot, events.now());
        self.found(slot, block, events, host);
    }

    /// Operation `slot`'s lookup is done: its name is in memory from now on (until now,
    /// another call on it looked it up too and waited for the same reads), and the call acts.
    fn found<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let o = self.ops[slot as usize];
        if o.done.ok && looks_up(o.io.op) {
            self.sets[o.io.set as usize].in_memory[o.done.entry as usize] = true;
        }
        self.act(slot, block, events, host);
    }

    /// The block runs `(block, count)` operation `o` must have in memory before it acts.
    /// Operations on an open file, a sync and mkfs look nothing up; a block device has no
    /// metadata.
    fn lookup_reads(&self, o: &OpState) -> Vec<(u64, u64)> {
        let set_i = o.io.set as usize;
        let mnt = self.mounts[o.mount].as_ref().expect("a mounted file system");
        let Some(fs) = mnt.fs.as_ref() else { return Vec::new() };
        let set = &self.sets[set_i];
        let e = o.done.entry;
        let mut blocks: Vec<u64> = Vec::new();
        match o.io.op {
            // readdir reads every block of the set's directories, each call (through the
            // cache: `ext4_readdir`, `ext4_dx_readdir` fill from the blocks, not the dentries).
            FileIoOp::ListDir => {
                for &d in &set.dirs {
                    blocks.extend(fs.dir_blocks(d));
                }
            }
            op if looks_up(op) && !set.in_memory[e as usize] => {
                let parent = set.dirs[set.dir_of(e)];
                blocks.extend(fs.lookup_blocks(parent, &SetState::name(e)));
                let mut runs = runs_of(blocks);
                // A name that exists has its inode read (a new one's block is written in
                // memory by its create: `Changes::metadata`): its block alone when cached,
                // else with what the driver reads ahead round it.
                if set.exists(e) {
                    let ino = set.ino[e as usize];
                    let at = fs.inode_block(ino);
                    let cached = self.cache.page_info(self.ids.id(o.mount, META_INO), at * mnt.block_size / PAGE).is_some();
                    runs.push(if cached { (at, 1) } else { fs.inode_read_run(ino) });
                }
                return runs;
            }
            _ => {}
        }
        runs_of(blocks)
    }

    /// The file systems were mounted before the run: each mount read its root inode's
    /// inode-table block, with what the driver reads round it; the mapping blocks of files
    /// laid out just before the run are still cached.
    pub(super) fn mounted(&mut self, now: Time) {
        for m in 0..self.mounts.len() {
            let Some((bs, fs)) = self.mounts[m].as_ref().and_then(|mnt| Some((mnt.block_size, mnt.fs.as_ref()?))) else { continue };
            let (first, n) = fs.inode_read_run(ROOT_INO);
            let per = PAGE / bs;
            let meta = self.ids.id(m, META_INO);
            let mut evicted = Vec::new();
            self.cache.hold(now, meta, first / per..(first + n).div_ceil(per), &mut evicted);
            let mut maps: Vec<u64> = std::mem::take(&mut self.cached_maps[m]).into_iter().map(|b| b / per).collect();
            maps.sort_unstable();
            maps.dedup();
            self.cache.hold(now, meta, maps, &mut evicted);
        }
    }

    /// Metadata blocks `blocks` of mount `m` were changed in memory: their pages are cached.
    pub(super) fn hold_metadata<E: From<FileEvent> + Copy>(&mut self, m: usize, blocks: &[u64], events: &mut EventQueue<E>) {
        let Some(mnt) = self.mounts[m].as_ref() else { return };
        if blocks.is_empty() || mnt.fs.is_none() {
            return;
        }
        let per = PAGE / mnt.block_size;
        let meta = self.ids.id(m, META_INO);
        let mut evicted = std::mem::take(&mut self.evicted);
        let mut pages: Vec<u64> = blocks.iter().map(|b| b / per).collect();
        pages.dedup();
        let (_, wake) = self.cache.hold(events.now(), meta, pages, &mut evicted);
        self.report.evicted_pages += evicted.len() as u64;
        self.evicted = evicted;
        if wake {
            self.kick_flusher(events);
        }
    }
}

/// Whether `op` looks its name up in its directory (the others work on an open file, or on
/// none).
fn looks_up(op: FileIoOp) -> bool {
    matches!(
        op,
        FileIoOp::Open | FileIoOp::Stat | FileIoOp::Delete | FileIoOp::Rmdir | FileIoOp::Create | FileIoOp::CreateClose | FileIoOp::Mkdir
    )
}

/// Blocks as runs of consecutive ones, in their order.
fn runs_of(blocks: Vec<u64>) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for b in blocks {
        match runs.last_mut() {
            Some(r) if r.0 + r.1 == b => r.1 += 1,
            _ => runs.push((b, 1)),
        }
    }
    runs
}
