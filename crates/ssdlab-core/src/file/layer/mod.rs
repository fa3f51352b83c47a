//! The file layer at run time: file operations through the page cache and the file systems,
//! the flusher, jbd2's commits and checkpoints, and the bios they send down.
//!
//! It owns the block layer's bio numbers while it is in the stack: the job runner's raw bios
//! get numbers of its own on the way down and their own back on the way up. Whatever a bio's
//! completion lets go (a job, an operation's next stage, a commit's next write, the flusher)
//! waits in `conts` until the block layer hands over control (`Upper::resume`), so that
//! follow-ups that submit bios have the block layer at hand.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::config::{DataMode, FileCosts, FileSystemSpec, FsType, KernelEra, MemoryConfig, MountTarget};
use super::journal::{Commit, Journal};
use super::sets::SetState;
use inode_sync::InodeSyncs;
use super::FileUpper;
use crate::block::{Bio, BioDone, BlockEvent, BlockLayer, DeviceEvent, Submit, Upper};
use crate::cpu::{Cpus, Waker};
use crate::report::FileReport;
use crate::device::BlockDevice;
use crate::engine::{EventQueue, Time, NS_PER_S};
use crate::error::ConfigError;
use crate::fs::{Changes, Era as FsEra, FileSystem, FsKind, Ino, MkfsOptions, MkfsWhat, MkfsWrite, Task, ROOT_INO};
use crate::io::{BioId, FileDone, FileIo, FileIoOp, Op, ROTOR_PICK};
use crate::pagecache::{self, Era as PcEra, PageCache, PageCacheConfig, PageKey, PageState, RaState, ReadPlan, WbWork, WriterState};
use crate::workload::files::FileSetSpec;

mod batch;
mod commit;
mod estimate;
mod inode_sync;
mod lookup;
mod mapping;
mod ops;
mod power;
mod reading;
mod send;
mod stack;
mod unwritten;
mod writeback;

pub use estimate::{memory_estimate, FileMemory};
pub use stack::{Lower, Up};

/// Bytes of a page.
const PAGE: u64 = 4096;
/// The largest bio the layer builds (BIO_MAX_VECS = 256 pages, include/linux/bio.h), cut
/// further to its queue's limits (`max_bio`); the block queue merges contiguous ones up to
/// those limits.
const MAX_BIO_BYTES: u64 = 256 * PAGE;
/// Pages one flusher pass hands out before it waits for their writeback (4 × today's
/// MIN_WRITEBACK_PAGES of 1024; assumed: keeps a disk busy without queueing the whole cache).
const FLUSH_BATCH_PAGES: u64 = 4096;
/// How long a writer that found no reclaimable page waits before it tries again
/// (congestion_wait(BLK_RW_ASYNC, HZ/10) in mm/vmscan.c).
const RECLAIM_WAIT_NS: Time = 100_000_000;

/// The file layer's own events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileEvent {
    /// Operation slot `.0`: its CPU burst, or its throttle pause, is over.
    Op(u32),
    /// The flusher's periodic wake-up.
    Flusher,
    /// File system `.0`'s running transaction is due for commit.
    Commit(u16),
    /// The network's next send is due to be done.
    Net,
}

/// What a bio the layer sent is for.
#[derive(Clone, Copy, Debug)]
enum Purpose {
    Free,
    /// A raw bio of the job runner's, under its own number.
    Host(Bio),
    /// A read or write an operation waits for.
    Op(u32),
    /// Writeback of page-cache run `.1` (of an operation `.0` waiting for it: fsync).
    Writeback(Option<u32>, pagecache::Run),
    /// A run of pages being read (`reading`'s number): reads of them wait for it.
    Read(u32),
    /// A run of metadata pages a lookup reads (`reading`'s number), as `Read`.
    MetaRead(u32),
    /// A commit's write on file system `.0`: the log, the flush, the commit block.
    Commit(u16),
    /// A commit's ordered data on file system `.0` (data, though the commit waits for it).
    OrderedData(u16),
    /// A checkpoint write home.
    Home,
    /// A cache flush an fsync waits for (slot).
    Flush(u32),
}

/// Where an operation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Free,
    /// Its submitting thread reaches the layer at a later time.
    Arriving,
    /// Its system call's CPU burst.
    Cpu,
    /// Waiting for the metadata its lookup reads (`lookup.rs`).
    Lookup,
    /// Waiting for the blocks that map its data (`mapping.rs`).
    Map,
    /// Waiting for its bios (reads, direct I/O, fsync's writeback).
    Io,
    /// Paused by balance_dirty_pages (`.0`: call again after the pause).
    Throttled,
    /// fsync: waiting for the flusher's writeback of its file to end.
    WritebackWait,
    /// fsync (2008): its synchronous handle sleeping for others to join (`batch.rs`).
    Batch,
    /// fsync: waiting for a commit (the sequence in `wait_seq`).
    Commit,
    /// fsync: waiting for a cache flush.
    Flush,
    /// A send: the network stack's CPU burst for its packets.
    NetCpu,
    /// A send: its bytes on their way to the client.
    Net,
}

/// How an operation's thread sleeps, as the CPUs count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sleep {
    Awake,
    /// For I/O (`io_schedule`): in its core's iowait and in the load.
    Io,
    /// Uninterruptibly for something else (a journal commit): in the load only.
    Blocked,
}

/// `o`'s thread stops sleeping at `now`, woken by `waker`.
fn end_sleep(cpus: &mut Cpus, o: &mut OpState, now: Time, waker: Waker) {
    match o.sleep {
        Sleep::Awake => {}
        Sleep::Io => cpus.io_done(now, o.io.process, waker),
        Sleep::Blocked => cpus.unblocked(now, o.io.process, waker),
    }
    o.sleep = Sleep::Awake;
}

#[derive(Clone, Copy, Debug)]
struct OpState {
    io: FileIo,
    stage: Stage,
    pending: u32,
    done: FileDone,
    /// The file it works on, once known: its file system, inode and page-cache id.
    mount: usize,
    ino: Ino,
    file: u32,
    wait_seq: u64,
    /// How its thread sleeps, if it does.
    sleep: Sleep,
    over_limit: bool,
    /// Its file was picked for it to create or delete: no other create or delete takes it.
    claimed: bool,
    /// A buffered read or write stopped by reclaim (no page it could free): bytes of it
    /// done so far, and whether it goes on after its wait.
    written: u64,
    resume: bool,
    /// A buffered write has read the blocks it covers only in part (or found none to read).
    filled: bool,
    /// A buffered write has the blocks mapping its range in memory (read, or found there).
    mapped: bool,
}

/// What follows a completion, once the block layer hands over control.
#[derive(Clone, Copy, Debug)]
enum Cont {
    Job(u32),
    Op(u32),
    Commit(u16),
    Flush,
}

/// A waiter number that is not a job's: the layer's own queue (`conts`) has work.
const DRAIN: u32 = u32::MAX;

/// One target's file system, or the target's block device itself.
struct Mount {
    target: u32,
    /// None: the block device, buffered: one file (`DEVICE_INO`) whose page `p` is the
    /// device's bytes from `p * PAGE`, in the device's own page cache; no metadata, no
    /// journal (its `Journal` stays empty).
    fs: Option<FileSystem>,
    /// The device's bytes (a block device's file size).
    device_bytes: u64,
    journal: Journal,
    block_size: u64,
    delalloc: bool,
    barriers: bool,
    /// `data=writeback`: blocks allocated and not yet written, which a crash exposes (None
    /// in ordered mode, where commits write them first).
    unwritten: Option<unwritten::Unwritten>,
    /// Read-ahead's largest window on its device (KiB).
    read_ahead_kb: u32,
    /// The kernel it runs under (the file system's era, or the host's).
    kernel: KernelEra,
    commit_armed: bool,
    /// The commit under way: the transaction and its writes still out; where its commit
    /// block goes.
    commit: Option<(Commit, u32, CommitPhase)>,
    commit_block: (u64, u64),
    /// Which transaction each inode's fsync waits for (`inode_sync.rs`).
    inodes: InodeSyncs,
    /// 2008's fsync batching (`batch.rs`); None under today's kernel.
    batch: Option<batch::SyncBatch>,
}

/// Whether a bio sent for `p` is REQ_SYNC under `kernel`, as CFQ tells them apart. Reads are,
/// and so are the writes an operation waits for itself (direct I/O, mkfs's). The flusher's
/// writeback never is. An fsync's writeback (WB_SYNC_ALL: `wbc_to_write_flags`), jbd2's
/// commit and ordered data (`JBD2_JOURNAL_REQ_FLAGS`) and its checkpoints (`__flush_batch`)
/// are in today's kernels; in 2008's none were: fs/jbd/commit.c sent them with plain WRITE
/// (`journal_do_submit_data`, `submit_bh(WRITE, bh)`), as `__block_write_full_page` did an
/// fsync's pages, until Linux 2.6.29-30.
fn is_sync(p: Purpose, op: Op, kernel: KernelEra) -> bool {
    if op != Op::Write {
        return true;
    }
    match p {
        Purpose::Writeback(None, _) => false,
        Purpose::Writeback(Some(_), _) | Purpose::Commit(_) | Purpose::OrderedData(_) | Purpose::Home => kernel == KernelEra::Today,
        Purpose::Host(bio) => bio.sync,
        Purpose::Free | Purpose::Op(_) | Purpose::Read(_) | Purpose::MetaRead(_) | Purpose::Flush(_) => true,
    }
}

/// The inode number a block device's one file takes in the page cache (any will do: the
/// mount has no other file).
const DEVICE_INO: Ino = 1;

impl Mount {
    /// The file system, where the operation needs one (a block device's set runs only reads,
    /// writes and fsyncs: `FileJob::validate`).
    fn fs(&self) -> &FileSystem {
        self.fs.as_ref().expect("a file system on the mount")
    }
    fn fs_mut(&mut self) -> &mut FileSystem {
        self.fs.as_mut().expect("a file system on the mount")
    }
    /// A file's size: the block device's is the device's.
    fn size_of(&self, ino: Ino) -> Option<u64> {
        match &self.fs {
            Some(fs) => fs.size_of(ino),
            None => Some(self.device_bytes),
        }
    }
    /// The block holding logical block `l` of `ino`: on a block device, block `l` itself.
    fn map(&self, ino: Ino, l: u32) -> Option<u64> {
        match &self.fs {
            Some(fs) => fs.map(ino, l),
            None => (l as u64 * self.block_size < self.device_bytes).then_some(l as u64),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CommitPhase {
    Ordered,
    Log,
    Flush,
    CommitBlock,
    /// With barriers: the flush that makes the commit block durable.
    PostFlush,
}

pub struct FileLayer {
    mounts: Vec<Option<Mount>>,
    /// Per target, the byte runs of the files laid out written before the run, in the order
    /// written, for the devices to hold ([`FileLayer::take_laid_out`]).
    laid_out: Vec<Vec<(u64, u64)>>,
    /// Per target: the metadata blocks the sets' layout wrote (directories, inode table
    /// blocks, mapping blocks), held on the device after the files' data.
    laid_out_meta: Vec<std::collections::BTreeSet<u64>>,
    /// Per target: the mapping blocks of laid-out files whose sets say them cached at the
    /// start (`FileSetSpec::maps_cached`), held by the mount.
    cached_maps: Vec<Vec<u64>>,
    /// Operations waiting for the blocks that map their data, and what they do then
    /// (`mapping.rs`).
    map_waits: FxHashMap<u32, mapping::MapWait>,
    /// How page-cache ids name files.
    ids: CacheIds,
    sets: Vec<SetState>,
    cache: PageCache,
    cpus: Cpus,
    costs: FileCosts,
    ras: FxHashMap<u32, RaState>,
    writers: Vec<WriterState>,
    ops: Vec<OpState>,
    free_ops: Vec<u32>,
    bios: Vec<Purpose>,
    free_bios: Vec<BioId>,
    conts: VecDeque<Cont>,
    flusher_at: Option<Time>,
    /// Writeback pages of the flusher's in flight.
    flushing: u64,
    fsync_waiting: Vec<u32>,
    /// Operations whose pick found every file of the kind it needs claimed by other
    /// threads: they pick again once an operation on their set ends.
    pick_waiting: Vec<u32>,
    commit_waiting: Vec<u32>,
    /// Ordered data a commit is writing: its runs complete in the cache with the commit's
    /// ordered phase.
    ordered_runs: Vec<(u16, pagecache::Run)>,
    runs: Vec<pagecache::Run>,
    /// Writeback under a block plug (from `plug` to `unplug`), and the target whose bios it
    /// gathers (None until the first).
    plugging: bool,
    plug_target: Option<u32>,
    plan: ReadPlan,
    evicted: Vec<PageKey>,
    /// The first process number past the jobs': the kernel's threads that send I/O (the
    /// flusher, then each file system's jbd2), as the block layer's schedulers see them.
    kthreads: u32,
    /// The host's kernel: which of its writes are REQ_SYNC ([`is_sync`]).
    kernel: KernelEra,
    /// Per target, the largest bio sent to it: MAX_BIO_BYTES, or less where its queue's
    /// limits would split it.
    max_bio: Vec<u64>,
    /// Page runs being read, and who waits for them.
    reading: reading::Reading,
    /// The server's network, for sends (None: the run has none).
    net: Option<Box<send::Network>>,
    pub report: FileReport,
}

/// A file's page-cache id: its file system in the top bits (as few as the mounts need), its
/// inode below (all 32 bits with one file system: ext4 numbers up to 2^32 - 1 inodes).
#[derive(Clone, Copy, Debug)]
struct CacheIds {
    ino_bits: u32,
}

impl CacheIds {
    fn for_mounts(mounts: usize) -> CacheIds {
        let mount_bits = usize::BITS - mounts.saturating_sub(1).leading_zeros();
        CacheIds { ino_bits: 32 - mount_bits }
    }

    /// The most inodes a file system may have.
    fn max_inodes(self) -> u64 {
        1 << self.ino_bits
    }

    fn id(self, mount: usize, ino: Ino) -> u32 {
        debug_assert!((ino as u64) < self.max_inodes());
        (((mount as u64) << self.ino_bits) | ino as u64) as u32
    }

    /// (file system, inode) of a page-cache id.
    fn split(self, file: u32) -> (usize, Ino) {
        let mount = ((file as u64) >> self.ino_bits) as usize;
        (mount, ((file as u64) & (self.max_inodes() - 1)) as Ino)
    }
}

impl FileLayer {
    /// The layer over `targets` (each with its file system, capacity and read-ahead), the
    /// run's file sets, a host of `memory`; `seed` seeds the sets' random picks and sizes.
    pub fn new(
        memory: &MemoryConfig,
        targets: &[MountTarget],
        sets: &[FileSetSpec],
        jobs: usize,
        seed: u64,
        start: Time,
        hz: u32,
    ) -> Result<FileLayer, ConfigError> {
        memory.validate()?;
        let mut mounts = Vec::with_capacity(targets.len());
        for (i, t) in targets.iter().enumerate() {
            let Some(spec) = &t.filesystem else {
                let buffered = sets.iter().any(|s| s.block_device && s.target as usize == i);
                mounts.push(buffered.then(|| {
                    let mut mnt = device_mount(t.capacity, memory.era);
                    mnt.target = i as u32;
                    mnt.read_ahead_kb = t.read_ahead_kb(memory.read_ahead_kb);
                    mnt
                }));
                continue;
            };
            let mut mnt = mount(spec, t.capacity, memory.era, hz).map_err(|m| ConfigError::new(&format!("targets.{i}.filesystem"), m))?;
            mnt.target = i as u32;
            mnt.read_ahead_kb = t.read_ahead_kb(memory.read_ahead_kb);
            mounts.push(Some(mnt));
        }
        let ids = CacheIds::for_mounts(mounts.len());
        for (i, m) in mounts.iter().enumerate() {
            let inodes = m.as_ref().and_then(|m| m.fs.as_ref()).map_or(0, |fs| fs.config().inodes_per_group as u64 * fs.config().groups as u64);
            if inodes > ids.max_inodes() {
                return Err(ConfigError::new(
                    &format!("targets.{i}.filesystem"),
                    format!("{inodes} inodes: at most {} with {} file systems in one run", ids.max_inodes(), mounts.len()),
                ));
            }
        }
        let cache = PageCache::new(cache_config(memory))?;
        let mut layer = FileLayer {
            ids,
            laid_out: vec![Vec::new(); mounts.len()],
            laid_out_meta: vec![Default::default(); mounts.len()],
            cached_maps: vec![Vec::new(); mounts.len()],
            map_waits: FxHashMap::default(),
            mounts,
            sets: Vec::new(),
            cache,
            cpus: Cpus::new(memory.cpus, start, memory.era == KernelEra::Y2008),
            costs: memory.costs,
            ras: FxHashMap::default(),
            writers: vec![WriterState::default(); jobs],
            ops: Vec::new(),
            free_ops: Vec::new(),
            bios: Vec::new(),
            free_bios: Vec::new(),
            conts: VecDeque::new(),
            flusher_at: None,
            flushing: 0,
            fsync_waiting: Vec::new(),
            pick_waiting: Vec::new(),
            commit_waiting: Vec::new(),
            ordered_runs: Vec::new(),
            runs: Vec::new(),
            plugging: false,
            plug_target: None,
            plan: ReadPlan::default(),
            evicted: Vec::new(),
            kthreads: jobs as u32,
            kernel: memory.era,
            max_bio: targets.iter().map(|t| t.max_bio_bytes.clamp(PAGE, MAX_BIO_BYTES)).collect(),
            reading: reading::Reading::default(),
            net: None,
            report: FileReport::default(),
        };
        for (i, s) in sets.iter().enumerate() {
            layer.add_set(s.clone(), seed, i)?;
        }
        layer.mounted(start);
        Ok(layer)
    }

    /// Set `spec` on its target's file system: its directories made, and the share of its
    /// files it says written whole before the run (as fio lays files out and drops them from
    /// the cache before it starts: on disk, not cached).
    fn add_set(&mut self, spec: FileSetSpec, seed: u64, index: usize) -> Result<(), ConfigError> {
        let name = spec.name.clone();
        let key = |k: &str| format!("file_sets.{name}.{k}");
        let m = spec.target as usize;
        let Some(Some(mnt)) = self.mounts.get_mut(m) else {
            return Err(ConfigError::new(&key("target"), format!("device {m} has no file system")));
        };
        if mnt.fs.is_none() != spec.block_device {
            return Err(ConfigError::new(&key("block_device"), format!("device {m} is not mounted as the set says")));
        }
        let Some(fs) = mnt.fs.as_mut() else {
            // The block device: its one file is there, the device's size, before the run.
            let mut set = SetState::new(spec, m, seed, index as u64);
            set.created(0, DEVICE_INO);
            set.publish(0);
            self.sets.push(set);
            return Ok(());
        };
        let no_space = |e: crate::fs::FsError| ConfigError::new(&key("entries"), format!("laying the set out: {e}"));
        let task = Task::default();
        let meta = &mut self.laid_out_meta[m];
        let mut wrote = |ch: Changes| meta.extend(ch.metadata);
        let mut dir = ROOT_INO;
        for part in spec.dir.split('/').filter(|p| !p.is_empty()) {
            dir = match fs.lookup(dir, part.as_bytes()) {
                Some(d) => d,
                None => {
                    let (d, ch) = fs.mkdir(dir, part.as_bytes(), task).map_err(no_space)?;
                    wrote(ch);
                    d
                }
            };
        }
        let mut set = SetState::new(spec, m, seed, index as u64);
        for d in 0..set.dir_count() {
            let ino = if set.spec.dir_width == 0 {
                dir
            } else {
                let name = format!("d{d:05}");
                let (d, ch) = fs.mkdir(dir, name.as_bytes(), task).map_err(no_space)?;
                wrote(ch);
                d
            };
            set.dirs.push(ino);
        }
        let pre = (set.spec.prealloc * set.spec.entries as f64).round() as u64;
        let bs = fs.config().block_size as u64;
        // Written out before the run unless fallocated (an unwritten set holds no data).
        let written = !set.spec.unwritten;
        let laid_out = &mut self.laid_out[m];
        for e in 0..pre {
            let parent = set.dirs[set.dir_of(e)];
            if set.spec.dirs {
                // A set of directories: each made, empty.
                let (ino, ch) = fs.mkdir(parent, &SetState::name(e), task).map_err(no_space)?;
                wrote(ch);
                set.created(e, ino);
                set.publish(e);
                continue;
            }
            let (ino, ch) = fs.create(parent, &SetState::name(e), task).map_err(no_space)?;
            wrote(ch);
            let size = set.created(e, ino);
            set.publish(e);
            let blocks = size.div_ceil(bs);
            if blocks > 0 {
                wrote(fs.allocate(ino, 0, blocks as u32, task).map_err(no_space)?);
                if written {
                    for x in fs.extents_of(ino) {
                        let (offset, len) = (x.phys * bs, x.len as u64 * bs);
                        match laid_out.last_mut() {
                            Some(last) if last.0 + last.1 == offset => last.1 += len,
                            _ => laid_out.push((offset, len)),
                        }
                    }
                }
            }
            wrote(fs.set_size(ino, size).map_err(no_space)?);
            if set.spec.maps_cached {
                self.cached_maps[m].extend(fs.mapping_blocks_of(ino));
            }
            fs.release(ino);
        }
        if set.spec.names_cached {
            set.in_memory[..pre as usize].fill(true);
        }
        self.sets.push(set);
        Ok(())
    }

    /// The byte runs each target must hold before the run, per target: the files laid out
    /// written (as fio writes them before a job starts), in the order written, then the
    /// metadata blocks their making wrote (directories, inodes, bitmaps, mapping blocks), in
    /// block order. Taken once.
    pub fn take_laid_out(&mut self) -> Vec<Vec<(u64, u64)>> {
        let meta = std::mem::take(&mut self.laid_out_meta);
        for (m, blocks) in meta.into_iter().enumerate() {
            let Some(bs) = self.mounts[m].as_ref().map(|mnt| mnt.block_size) else { continue };
            let runs = &mut self.laid_out[m];
            for b in blocks {
                match runs.last_mut() {
                    Some(last) if last.0 + last.1 == b * bs => last.1 += bs,
                    _ => runs.push((b * bs, bs)),
                }
            }
        }
        std::mem::take(&mut self.laid_out)
    }

    /// The flusher's process number (the writeback worker, one per device in today's kernels,
    /// pdflush in 2008's: one thread for all here).
    fn flusher_pid(&self) -> u32 {
        self.kthreads
    }

    /// File system `m`'s jbd2 thread's process number.
    fn jbd2(&self, m: usize) -> u32 {
        self.kthreads + 1 + m as u32
    }

    /// The CPUs (for the run's CPU report).
    pub fn cpus_mut(&mut self) -> &mut Cpus {
        &mut self.cpus
    }

    // ---- bio numbers -------------------------------------------------------------------

    fn alloc_bio(&mut self, p: Purpose) -> BioId {
        match self.free_bios.pop() {
            Some(id) => {
                self.bios[id as usize] = p;
                id
            }
            None => {
                self.bios.push(p);
                (self.bios.len() - 1) as BioId
            }
        }
    }

    /// Send `[offset, offset + len)` of target `target` down as bios for `p`, each at most
    /// the target's `max_bio`; returns how many.
    fn send<D: BlockDevice, E>(&mut self, target: u32, op: Op, offset: u64, len: u64, p: Purpose, process: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>) -> u32
    where
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    {
        let now = events.now();
        let plugged = op != Op::Flush && self.plugging;
        if plugged && self.plug_target != Some(target) {
            // A plug gathers one queue's bios: another target's send the batch first.
            if self.plug_target.is_some() {
                Submit::<E>::unplug(block, now, events);
                Submit::<E>::flush(block, events);
            }
            self.plug_target = Some(target);
        }
        let mut sent = 0;
        let mut at = offset;
        let end = offset + len;
        while at < end || (op == Op::Flush && sent == 0) {
            let n = if op == Op::Flush { 0 } else { (end - at).min(self.max_bio[target as usize]) };
            let id = self.alloc_bio(p);
            let bio = Bio { id, target, op, offset: at, len: n, process, sync: is_sync(p, op, self.kernel) };
            if plugged {
                block.plug_bio(bio);
            } else {
                block.submit(bio, now, events);
            }
            sent += 1;
            at += n;
            if op == Op::Flush {
                break;
            }
        }
        if matches!(p, Purpose::Home | Purpose::Commit(_) | Purpose::MetaRead(_)) {
            self.report.metadata_bios += sent as u64;
        } else {
            self.report.data_bios += sent as u64;
        }
        // What entered a queue goes to the device now (a plug's bios, at its unplug).
        if !plugged {
            Submit::<E>::flush(block, events);
        }
        sent
    }

    /// Writeback from here to `unplug` goes under one block plug, as the kernel's does
    /// (`blk_start_plug` in `wb_writeback` since Linux 4.3, commit 505a666ee3fc, and in
    /// `ext4_writepages` / `write_cache_pages` per file): adjacent runs, of one file or of
    /// files laid out one after another, merge into one request before the queue sees
    /// them. (The 2.6 kernels of 2008 plugged the queue instead while it was idle, up to
    /// 4 requests or 3 ms, and merged the same runs in the elevator.)
    pub(super) fn plug(&mut self) {
        debug_assert!(!self.plugging, "writeback plugs do not nest");
        self.plugging = true;
    }

    /// The plug's bios enter their queue together, now, and go to the device.
    pub(super) fn unplug<D: BlockDevice, E>(&mut self, block: &mut BlockLayer<D>, events: &mut EventQueue<E>)
    where
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    {
        self.plugging = false;
        if self.plug_target.take().is_some() {
            let now = events.now();
            Submit::<E>::unplug(block, now, events);
            Submit::<E>::flush(block, events);
        }
    }

    /// Physical block runs `(block, count)` of mount `m` as bios; returns how many.
    fn send_blocks<D: BlockDevice, E>(&mut self, m: usize, op: Op, runs: &[(u64, u64)], p: Purpose, process: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>) -> u32
    where
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    {
        let (target, bs) = {
            let mnt = self.mounts[m].as_ref().expect("a mounted file system");
            (mnt.target, mnt.block_size)
        };
        runs.iter().map(|&(b, n)| self.send(target, op, b * bs, n * bs, p, process, block, events)).sum()
    }

    // ---- what the job runner sends -----------------------------------------------------

    /// A raw bio of the job runner's, under a number of the layer's own.
    pub fn pass<D: BlockDevice, E>(&mut self, bio: Bio, at: Time, block: &mut BlockLayer<D>, events: &mut EventQueue<E>)
    where
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + Copy,
    {
        let id = self.alloc_bio(Purpose::Host(bio));
        block.submit(Bio { id, ..bio }, at, events);
    }

    /// A raw bio joining the job's plug.
    pub fn pass_plugged<D: BlockDevice>(&mut self, bio: Bio, block: &mut BlockLayer<D>) -> usize {
        let id = self.alloc_bio(Purpose::Host(bio));
        block.plug_bio(Bio { id, ..bio })
    }

    /// A file operation reaches the layer at `at` (its thread is done with it then).
    pub fn submit_file<E>(&mut self, io: FileIo, at: Time, events: &mut EventQueue<E>)
    where
        E: From<FileEvent> + Copy,
    {
        let op = OpState {
            io,
            stage: Stage::Arriving,
            pending: 0,
            done: FileDone { entry: io.entry.unwrap_or(0), size: 0, ok: true, errno: 0, no_file: false },
            mount: 0,
            ino: 0,
            file: 0,
            wait_seq: 0,
            sleep: Sleep::Awake,
            over_limit: false,
            claimed: false,
            written: 0,
            resume: false,
            filled: false,
            mapped: false,
        };
        let slot = match self.free_ops.pop() {
            Some(s) => {
                self.ops[s as usize] = op;
                s
            }
            None => {
                self.ops.push(op);
                (self.ops.len() - 1) as u32
            }
        };
        // A computation is no file-system call.
        if !matches!(io.op, FileIoOp::Compute { .. }) {
            self.report.ops += 1;
        }
        if at > events.now() {
            events.schedule(at, E::from(FileEvent::Op(slot)));
        } else {
            self.start(slot, events);
        }
    }

    /// Operation `slot` begins: the file it works on is found (or picked), and its system
    /// call's CPU burst runs.
    fn start<E: From<FileEvent> + Copy>(&mut self, slot: u32, events: &mut EventQueue<E>) {
        let now = events.now();
        let o = self.ops[slot as usize];
        if let FileIoOp::Compute { ns } = o.io.op {
            let end = self.cpus.run(now, o.io.process, ns);
            self.ops[slot as usize].stage = Stage::Cpu;
            events.schedule(end, E::from(FileEvent::Op(slot)));
            return;
        }
        let set = &mut self.sets[o.io.set as usize];
        let create = matches!(o.io.op, FileIoOp::Create | FileIoOp::CreateClose | FileIoOp::Mkdir);
        // A picked file to create or delete is claimed until the operation is done.
        let claim = create || o.io.op == FileIoOp::Delete;
        let entry = match o.io.entry {
            Some(ROTOR_PICK) => set.rotor_pick(!create, claim),
            Some(e) if e < set.spec.entries => Some(e),
            Some(_) => None,
            None if matches!(o.io.op, FileIoOp::ListDir | FileIoOp::Sync | FileIoOp::Mkfs) => Some(0),
            None => set.pick(!create, claim),
        };
        self.ops[slot as usize].claimed = claim && entry.is_some() && !matches!(o.io.entry, Some(e) if e != ROTOR_PICK);
        let (mount, c) = (set.mount, self.costs);
        let mut cost = c.syscall_ns;
        match entry {
            None => {
                // No file of the kind it needs at all (every file there for a create, none
                // for the rest), as filebench's fileset_pick says before it waits for a busy
                // one. A pick that found them all claimed by other threads waits for one of
                // them to end, as fileset_pick waits on the set's condition variable
                // (fs_idle_files_cv, fs_idle_nonexist_cv), then picks again; a queue
                // runner's fails (it found nothing to take).
                let none_of_kind = if create { set.existing() == set.spec.entries } else { set.existing() == 0 };
                let picked = o.io.entry.is_none_or(|e| e == ROTOR_PICK);
                if picked && !none_of_kind && o.io.wait_pick {
                    self.pick_waiting.push(slot);
                    return;
                }
                let done = &mut self.ops[slot as usize].done;
                (done.ok, done.no_file) = (false, none_of_kind && picked);
            }
            Some(e) => {
                let ino = set.ino[e as usize];
                let op = &mut self.ops[slot as usize];
                op.done.entry = e;
                op.mount = mount;
                op.ino = ino;
                op.file = self.ids.id(mount, ino);
                cost += match o.io.op {
                    FileIoOp::Create | FileIoOp::CreateClose => c.create_ns,
                    // ext4_mkdir is a create (ext4_new_inode, the parent's entry) and the
                    // new directory's first block (ext4_init_new_dir appends it): assumed
                    // create + one allocation, the profile's costs having no mkdir of their own.
                    FileIoOp::Mkdir => c.create_ns + c.alloc_ns,
                    // ext4_rmdir frees the inode, its one block and the parent's entry:
                    // assumed as an unlink.
                    FileIoOp::Delete | FileIoOp::Rmdir => c.unlink_ns,
                    FileIoOp::Open | FileIoOp::Stat => c.lookup_ns,
                    FileIoOp::ListDir => c.readdir_entry_ns * set.existing(),
                    FileIoOp::Read | FileIoOp::Write if !o.io.direct => c.page_copy_ns * pages_of(o.io.offset, o.io.len),
                    _ => 0,
                };
            }
        }
        let end = self.cpus.run(now, o.io.process, cost);
        self.ops[slot as usize].stage = Stage::Cpu;
        events.schedule(end, E::from(FileEvent::Op(slot)));
    }

    // ---- events ------------------------------------------------------------------------

    /// Handle one of the layer's events.
    pub fn handle<D, E, U>(&mut self, ev: FileEvent, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        match ev {
            FileEvent::Op(slot) => match self.ops[slot as usize].stage {
                Stage::Arriving => self.start(slot, events),
                Stage::Cpu if matches!(self.ops[slot as usize].io.op, FileIoOp::Compute { .. }) => self.complete(slot, events, host),
                Stage::Cpu => self.look_up(slot, block, events, host),
                Stage::Throttled => self.unthrottle(slot, block, events, host),
                Stage::Batch => self.batch_wake(slot, block, events),
                Stage::NetCpu => self.start_flow(slot, events, host),
                s => panic!("an operation event in stage {s:?}"),
            },
            FileEvent::Net => self.network_due(events, host),
            FileEvent::Flusher => {
                self.flusher_at = None;
                self.flush(block, events);
            }
            FileEvent::Commit(m) => {
                let mnt = self.mounts[m as usize].as_mut().expect("a mounted file system");
                mnt.commit_armed = false;
                if mnt.journal.due().is_some_and(|d| d <= events.now()) {
                    self.commit(m, block, events);
                } else if let Some(d) = mnt.journal.due() {
                    mnt.commit_armed = true;
                    events.schedule(d, E::from(FileEvent::Commit(m)));
                }
            }
        }
        self.drain(block, events, host);
    }

    /// What follows completions, in order: jobs woken go on, operations and commits take
    /// their next step, the flusher its next batch.
    fn drain<D, E, U>(&mut self, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        while let Some(c) = self.conts.pop_front() {
            match c {
                Cont::Job(j) => host.resume(j, &mut Lower { files: self, block }, events),
                Cont::Op(slot) => self.proceed(slot, block, events, host),
                Cont::Commit(m) => self.commit_step(m, block, events),
                Cont::Flush => self.flush(block, events),
            }
        }
    }

    /// Operation `slot` ends: its job hears of it.
    fn complete<E: From<FileEvent> + Copy, U: FileUpper<E>>(&mut self, slot: u32, events: &mut EventQueue<E>, host: &mut U) {
        self.io_waited(slot, events.now());
        let o = &mut self.ops[slot as usize];
        let (io, done) = (o.io, o.done);
        o.stage = Stage::Free;
        self.free_ops.push(slot);
        self.wake_pickers(io.set, events);
        if !done.ok {
            self.report.failed_ops += 1;
        }
        if let Some(j) = host.file_done(&io, done, events) {
            self.conts.push_back(Cont::Job(j));
        }
    }

    /// An operation on set `set` ended (a claim may have ended with it): the operations
    /// waiting to pick from it pick again.
    fn wake_pickers<E: From<FileEvent> + Copy>(&mut self, set: u32, events: &mut EventQueue<E>) {
        if self.pick_waiting.is_empty() {
            return;
        }
        let now = events.now();
        let ops = &self.ops;
        self.pick_waiting.retain(|&s| {
            let wake = ops[s as usize].io.set == set;
            if wake {
                events.schedule(now, E::from(FileEvent::Op(s)));
            }
            !wake
        });
    }

    fn fail<E: From<FileEvent> + Copy, U: FileUpper<E>>(&mut self, slot: u32, events: &mut EventQueue<E>, host: &mut U) {
        self.ops[slot as usize].done.ok = false;
        self.complete(slot, events, host);
    }

    /// Operation `slot`'s system call failed with `errno` (Linux's number).
    fn fail_with<E: From<FileEvent> + Copy, U: FileUpper<E>>(&mut self, slot: u32, errno: u16, events: &mut EventQueue<E>, host: &mut U) {
        self.ops[slot as usize].done.errno = errno;
        self.fail(slot, events, host);
    }

    /// Operation `slot`'s thread sleeps from now as `how`: `Io`, for I/O (in its core's iowait
    /// and the load), or `Blocked`, uninterruptibly for something else such as a journal commit
    /// (in the load only). A sleep of the other kind ends first, without a wake.
    fn sleep_as(&mut self, slot: u32, now: Time, how: Sleep) {
        let o = &mut self.ops[slot as usize];
        if o.sleep == how {
            return;
        }
        end_sleep(&mut self.cpus, o, now, Waker::Timer);
        match how {
            Sleep::Io => self.cpus.io_wait(now, o.io.process),
            Sleep::Blocked => self.cpus.blocked(now, o.io.process),
            Sleep::Awake => {}
        }
        o.sleep = how;
    }

    /// Operation `slot` waits in `stage` for `pending` bios (or runs) from now.
    fn await_bios(&mut self, slot: u32, stage: Stage, pending: u32, now: Time) {
        let o = &mut self.ops[slot as usize];
        o.stage = stage;
        o.pending = pending;
        self.sleep_as(slot, now, Sleep::Io);
    }

    /// Operation `slot` no longer sleeps (its thread leaves iowait and the load).
    fn io_waited(&mut self, slot: u32, now: Time) {
        let o = self.ops[slot as usize];
        if o.sleep == Sleep::Awake {
            return;
        }
        // What woke it: a timer on its own core (a throttle's pause), the journal thread (a
        // commit it waited for), or its I/O's interrupt.
        let waker = match o.stage {
            Stage::Throttled => Waker::Timer,
            Stage::Commit => self.cpus.core_of(self.jbd2(o.mount)).map_or(Waker::Timer, Waker::Thread),
            _ => Waker::Irq(self.irq_core(o.mount)),
        };
        end_sleep(&mut self.cpus, &mut self.ops[slot as usize], now, waker);
    }

    /// The core that takes target `target`'s interrupts (its completions run there). Assumed:
    /// each device's interrupt line on a core of its own, the targets on cores 0, 1, … in
    /// order, then the NIC's ports ([`FileLayer::nic_irq_core`]), as irqbalance spreads
    /// interrupt lines one to a core (RHEL 5 ran it by default).
    fn irq_core(&self, target: usize) -> u32 {
        target as u32 % self.cpus.cores()
    }

    /// The core that takes the interrupts of the NIC's port `port` (after the targets').
    fn nic_irq_core(&self, port: usize) -> u32 {
        (self.mounts.len() + port) as u32 % self.cpus.cores()
    }

    // ---- completions from the block layer ----------------------------------------------

    /// Bio `bio` of the layer's is done. What it lets go waits in `conts`; returns the waiter
    /// that makes the block layer hand over control (`resume`).
    pub fn bio_done<E, U: FileUpper<E> + BioDone<E>>(&mut self, bio: &Bio, events: &mut EventQueue<E>, host: &mut U) -> Option<u32> {
        let now = events.now();
        let p = self.bios[bio.id as usize];
        self.bios[bio.id as usize] = Purpose::Free;
        self.free_bios.push(bio.id);
        match p {
            Purpose::Free => panic!("bio {} completed twice", bio.id),
            Purpose::Host(orig) => {
                if let Some(j) = host.bio_done(&orig, events) {
                    self.conts.push_back(Cont::Job(j));
                }
            }
            Purpose::Home => {}
            Purpose::Read(run) | Purpose::MetaRead(run) => {
                for slot in self.reading.bio_done(run) {
                    self.op_io_done(slot);
                }
            }
            Purpose::Op(slot) | Purpose::Flush(slot) => {
                if bio.op == Op::Write {
                    self.data_written(self.ops[slot as usize].mount, bio);
                }
                self.op_io_done(slot)
            }
            Purpose::Writeback(waiter, r) => {
                self.data_written(self.ids.split(r.file).0, bio);
                let done = self.cache.complete_writeback(now, r);
                if waiter.is_none() {
                    self.flushing = self.flushing.saturating_sub(done.max(r.len as u64));
                    if self.flushing == 0 {
                        self.conts.push_back(Cont::Flush);
                    }
                }
                if let Some(slot) = waiter {
                    self.op_io_done(slot);
                }
                self.writeback_ended(r.file);
            }
            Purpose::Commit(m) | Purpose::OrderedData(m) => {
                let mnt = self.mounts[m as usize].as_mut().expect("mounted");
                let c = mnt.commit.as_mut().expect("a commit under way");
                c.1 -= 1;
                if c.1 == 0 {
                    self.conts.push_back(Cont::Commit(m));
                }
            }
        }
        (!self.conts.is_empty()).then_some(DRAIN)
    }

    /// A write of file data on mount `m` completed: under `data=writeback` its blocks no
    /// longer expose old contents.
    fn data_written(&mut self, m: usize, bio: &Bio) {
        let Some(mnt) = self.mounts[m].as_mut() else { return };
        if let Some(u) = mnt.unwritten.as_mut() {
            let bs = mnt.block_size;
            u.written(bio.offset / bs, bio.len.div_ceil(bs));
        }
    }

    /// Whether writeback that fsync (or sync) `slot` must wait for is still in flight: its
    /// file's, or (sync) any.
    fn writeback_left(&self, slot: u32) -> bool {
        let o = &self.ops[slot as usize];
        if o.io.op == FileIoOp::Sync {
            self.cache.writeback_pages() > 0
        } else {
            self.cache.file_pages(o.file).2 > 0
        }
    }

    /// A writeback of `file`'s pages ended (the flusher's, an fsync's, or a commit's ordered
    /// data): fsyncs waiting for the file's writeback may go on once none is left.
    fn writeback_ended(&mut self, file: u32) {
        if self.fsync_waiting.is_empty() {
            return;
        }
        let mut w = std::mem::take(&mut self.fsync_waiting);
        w.retain(|&s| {
            let o = &self.ops[s as usize];
            if (o.io.op == FileIoOp::Sync || o.file == file) && !self.writeback_left(s) {
                self.conts.push_back(Cont::Op(s));
                false
            } else {
                true
            }
        });
        self.fsync_waiting = w;
    }

    fn op_io_done(&mut self, slot: u32) {
        let o = &mut self.ops[slot as usize];
        o.pending -= 1;
        if o.pending == 0 {
            self.conts.push_back(Cont::Op(slot));
        }
    }

    /// The block layer hands over control after completions: what they let go runs.
    pub fn resume<D, E, U>(&mut self, waiter: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        debug_assert_eq!(waiter, DRAIN);
        self.drain(block, events, host);
    }

    /// Bytes of dirty pages in the page cache (a power cut loses them).
    pub fn dirty_bytes(&self) -> u64 {
        self.cache.dirty_pages() * pagecache::PAGE_SIZE
    }

    /// The run is over: the report, with each file system's free-extent histogram and its
    /// files' extents.
    pub fn finish(&mut self, now: Time) -> FileReport {
        debug_assert_eq!(self.check_promises(), Ok(()));
        let mut r = std::mem::take(&mut self.report);
        r.cpu = self.cpus.whole(now);
        r.cpu_cores = self.cpus.per_core(now);
        r.dirty_pages_at_end = self.cache.dirty_pages();
        r.free_extents = self
            .mounts
            .iter()
            .flatten()
            .filter_map(|m| m.fs.as_ref())
            .map(|fs| fs.free_extent_histogram().buckets.iter().map(|b| (b.start_bytes, b.extents, b.blocks)).collect())
            .collect();
        r.extents_per_file = self.mounts.iter().flatten().filter_map(|m| m.fs.as_ref()).map(|fs| fs.extents_per_file()).collect();
        r
    }
}

impl FileLayer {
    /// Delayed allocation's books: each promised block is in a dirty page of its file (a
    /// page written back has its blocks allocated, or its promises ended, at that moment;
    /// a dropped page's end with it), and each file system's count is its promised blocks.
    pub(super) fn check_promises(&self) -> Result<(), String> {
        for (m, mnt) in self.mounts.iter().enumerate() {
            let Some(mnt) = mnt else { continue };
            let Some(fs) = &mnt.fs else { continue };
            let per = PAGE / mnt.block_size;
            let mut n = 0;
            for ino in fs.delayed_files() {
                let file = self.ids.id(m, ino);
                for (a, b) in fs.delayed_runs(ino) {
                    n += (b - a) as u64;
                    for l in a..b {
                        let p = l as u64 / per;
                        let dirty = self.cache.page_info(file, p).is_some_and(|i| matches!(i.state, PageState::Dirty | PageState::WritebackDirty));
                        if !dirty {
                            return Err(format!("file system {m}, inode {ino}: block {l} promised, its page {p} not dirty"));
                        }
                    }
                }
            }
            if n != fs.reserved_blocks() {
                return Err(format!("file system {m}: {} blocks promised in all, {n} file by file", fs.reserved_blocks()));
            }
        }
        Ok(())
    }
}

/// The number of pages `[offset, offset + len)` touches.
fn pages_of(offset: u64, len: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    (offset + len).div_ceil(PAGE) - offset / PAGE
}

/// mkfs on a target of `capacity` bytes as `spec` says.
/// The page cache the host's memory gives.
fn cache_config(memory: &MemoryConfig) -> PageCacheConfig {
    let era = match memory.era {
        KernelEra::Y2008 => PcEra::Linux2008,
        KernelEra::Today => PcEra::Today,
    };
    let mut pc = PageCacheConfig::for_era(era, memory.cache_pages());
    if let Some(r) = memory.dirty_ratio {
        pc.dirty = pagecache::DirtyLimit::Ratio(r);
    }
    if let Some(r) = memory.dirty_background_ratio {
        pc.dirty_background = pagecache::DirtyLimit::Ratio(r);
    }
    pc.dirty_expire_centisecs = memory.dirty_expire_centisecs;
    pc.dirty_writeback_centisecs = memory.dirty_writeback_centisecs;
    pc.read_ahead_kb = memory.read_ahead_kb;
    pc
}

/// What mkfs makes of `spec` on a device of `capacity` bytes under a host of `host_era`.
fn fs_config(spec: &FileSystemSpec, capacity: u64, host_era: KernelEra) -> Result<crate::fs::FsConfig, String> {
    let kernel = spec.era.unwrap_or(host_era);
    let era = match kernel {
        KernelEra::Y2008 => FsEra::Y2008,
        KernelEra::Today => FsEra::Today,
    };
    let kind = match spec.fs_type {
        FsType::Ext3 => FsKind::Ext3,
        FsType::Ext4 => FsKind::Ext4,
    };
    let size = spec.size_bytes.unwrap_or(capacity);
    if size > capacity {
        return Err(format!("a file system of {size} bytes does not fit on a device of {capacity} bytes"));
    }
    let mut opts = MkfsOptions::new(kind, era, size);
    opts.block_size = spec.block_size;
    opts.inode_count = spec.inode_count;
    opts.inode_ratio = spec.inode_ratio;
    opts.inode_size = spec.inode_size;
    opts.journal_blocks = spec.journal_blocks;
    opts.lazy_itable_init = spec.lazy_itable_init;
    crate::fs::FsConfig::new(&opts).map_err(|e| e.to_string())
}

fn mount(spec: &FileSystemSpec, capacity: u64, host_era: KernelEra, hz: u32) -> Result<Mount, String> {
    let kernel = spec.era.unwrap_or(host_era);
    let barriers = spec.barriers_in(kernel);
    let (fs, _io) = FileSystem::mkfs(fs_config(spec, capacity, host_era)?).map_err(|e| e.to_string())?;
    let block_size = fs.config().block_size as u64;
    let journal = Journal::new(fs.journal(), block_size as u32, spec.commit_interval_ns);
    // File times: whole seconds on ext3 and on ext4 with 128-byte inodes (the default
    // s_time_gran); ext4 with room for the nanosecond fields takes them from the coarse clock,
    // which moves once a jiffy.
    let granule = match spec.fs_type {
        FsType::Ext4 if fs.config().inode_size > 128 => NS_PER_S / hz.max(1) as Time,
        _ => NS_PER_S,
    };
    Ok(Mount {
        inodes: InodeSyncs::new(granule),
        target: 0,
        delalloc: fs.config().delalloc,
        fs: Some(fs),
        device_bytes: capacity,
        journal,
        block_size,
        barriers,
        unwritten: (spec.data_mode == DataMode::Writeback).then(unwritten::Unwritten::default),
        // The kernel's default (VM_READAHEAD_PAGES); `FileLayer::new` sets the device's.
        read_ahead_kb: 128,
        kernel,
        commit_armed: false,
        commit: None,
        commit_block: (0, 0),
        batch: (kernel == KernelEra::Y2008).then(|| batch::SyncBatch::new(NS_PER_S / hz.max(1) as Time)),
    })
}

/// A block device opened buffered, under a host of `era`: pages of 4 KiB (the block size
/// `set_init_blocksize` gives a device whose size is a multiple of 4 KiB, block/bdev.c), no
/// delayed allocation or journal; its fsync flushes the device's cache in today's kernels
/// (blkdev_fsync's blkdev_issue_flush, since 2.6.32's commit ab0a9735e), not in 2008's.
fn device_mount(capacity: u64, era: KernelEra) -> Mount {
    Mount {
        target: 0,
        fs: None,
        device_bytes: capacity,
        journal: Journal::new(Vec::new(), PAGE as u32, 0),
        block_size: PAGE,
        delalloc: false,
        barriers: era == KernelEra::Today,
        unwritten: None,
        read_ahead_kb: 128,
        kernel: era,
        commit_armed: false,
        commit: None,
        commit_block: (0, 0),
        inodes: InodeSyncs::new(NS_PER_S),
        batch: None,
    }
}

#[cfg(test)]
mod mount_tests {
    use super::*;

    #[test]
    fn mkfs_takes_the_inode_size_it_is_given() {
        let mut spec = FileSystemSpec::new(FsType::Ext4);
        let m = mount(&spec, 1 << 30, KernelEra::Today, 1000).unwrap();
        assert_eq!(m.fs().config().inode_size, 256); // mke2fs.conf's default today
        spec.inode_size = Some(128);
        let m = mount(&spec, 1 << 30, KernelEra::Today, 1000).unwrap();
        assert_eq!(m.fs().config().inode_size, 128);
        spec.inode_size = Some(100);
        assert!(mount(&spec, 1 << 30, KernelEra::Today, 1000).is_err());
    }
}

#[cfg(test)]
mod cache_id_tests {
    use super::CacheIds;

    #[test]
    fn one_file_system_numbers_every_inode_ext4_can_have() {
        // A 5 TB ext3 has 305 million inodes: past 2^27, which the ids once allowed.
        let ids = CacheIds::for_mounts(1);
        assert_eq!(ids.max_inodes(), 1 << 32);
        for ino in [1, 305_000_000, u32::MAX] {
            assert_eq!(ids.split(ids.id(0, ino)), (0, ino));
        }
    }

    #[test]
    fn more_file_systems_take_as_few_bits_as_they_need() {
        assert_eq!(CacheIds::for_mounts(2).max_inodes(), 1 << 31);
        let ids = CacheIds::for_mounts(3);
        assert_eq!(ids.max_inodes(), 1 << 30);
        for (m, ino) in [(0, 7), (1, (1 << 30) - 1), (2, 123_456_789)] {
            assert_eq!(ids.split(ids.id(m, ino)), (m, ino));
        }
    }
}
