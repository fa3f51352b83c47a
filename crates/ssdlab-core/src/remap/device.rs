//! The remapping layer as a block device: host writes land in its buffer and are
//! acknowledged after the copy; full segments of them go to the drive at the log's head;
//! host reads come from the buffer or from wherever the map says each block now is; the
//! cleaner reads a segment's valid blocks and writes them again at the head. The drive sits
//! behind its own block queue, on the block layer's one dispatch path.

use std::collections::{BTreeMap, VecDeque};

use rustc_hash::FxHashMap;

use super::config::RemapConfig;
use super::map::LogMap;
use crate::block::iosched::ArmedTimer;
use crate::block::{DispatchCtx, QueueBio, QueuedDevice};
use crate::device::{BlockDevice, DeviceCtx, Drive};
use crate::engine::Time;
use crate::io::{BioId, DeviceRequest, Op, Tag};
use crate::report::{DeviceKind, DeviceReport, DeviceResult, RemapReport};

/// The layer's own events and its drive's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemapEvent<E> {
    Drive(E),
    /// A timer of the drive's I/O scheduler.
    Timer { key: u16, token: u32 },
    /// Host request `.0` is done (its copy to or from the buffer, or an ignored flush).
    Done(Tag),
    /// The buffer's oldest data has waited `max_age_ns`.
    Age,
}

/// Depth the host's queue in front of the layer allows: a bio-based driver takes bios as they
/// come (as md does).
const QUEUE_DEPTH: u32 = 1 << 20;

/// Log writes under way at once (assumed: one segment on the drive while the next fills,
/// and one more, so the drive always has the next one queued).
const MAX_LOG_WRITES: usize = 2;

/// The process the layer's own I/O (log writes, the cleaner) is issued as.
const LAYER_PROCESS: u32 = u32::MAX - 2;

/// What one of the drive's bios is for.
#[derive(Clone, Debug, Default)]
enum DriveIo {
    #[default]
    Free,
    /// Part of host read `.0`.
    HostRead(Tag),
    /// A log write: its number and the host blocks it carries with their buffer versions
    /// (None for blocks the cleaner moved).
    Log { seq: u64, blocks: Vec<(u32, Option<u64>)> },
    /// The cleaner reading its victim.
    Clean,
    /// A flush passed on for host flush `.0`.
    Flush(Tag),
}

/// A block in the buffer: its version (the latest write of it) and when it was acknowledged.
#[derive(Clone, Copy, Debug)]
struct Buffered {
    version: u64,
    acked: Time,
}

pub struct Remap<D> {
    cfg: RemapConfig,
    block: u64,
    drive_name: String,
    drive: QueuedDevice<D>,
    map: LogMap,
    /// Host blocks waiting in the buffer, and their arrival order (versions that were
    /// overwritten since are skipped when met).
    dirty: FxHashMap<u32, Buffered>,
    order: VecDeque<(u32, u64)>,
    next_version: u64,
    /// Host blocks on their way to the drive in a log write (the buffer still holds them),
    /// with how many writes carry each and when its newest version was acknowledged.
    in_flight: FxHashMap<u32, (u32, Time)>,
    /// When each cache flush ignored since the buffer last emptied was acknowledged.
    ignored_flushes: Vec<Time>,
    /// Buffer blocks in use (dirty and in flight) and the buffer's size in blocks.
    used: u64,
    capacity: u64,
    /// Host writes waiting for room, in order.
    waiting: VecDeque<DeviceRequest>,
    /// Host reads still waiting for the drive: drive reads outstanding per tag.
    reads: FxHashMap<Tag, u32>,
    /// Buffered data up to this version goes out without waiting for a full segment
    /// (an honoured flush, the buffer's age limit).
    forced_upto: u64,
    age_armed: bool,
    /// The cleaner: its reads of the victim still under way, the blocks they read, and those
    /// waiting to be written at the head (host block, where it was read).
    cleaning: Option<u32>,
    cleaned: Vec<(u32, u32)>,
    relocate: Vec<(u32, u32)>,
    /// Log writes under way: their numbers, with the oldest host version each carries
    /// (u64::MAX: only the cleaner's blocks), and the next number.
    log_writes: BTreeMap<u64, u64>,
    next_log: u64,
    /// Honoured host flushes, each waiting for the host versions up to its own.
    flushes: Vec<(Tag, u64)>,
    ios: Vec<DriveIo>,
    free_ios: Vec<u32>,
    done: Vec<Tag>,
    bios: Vec<BioId>,
    report: RemapReport,
}

/// The drive's context: its events and timers travel as the layer's, its completions are
/// collected for the layer to handle.
struct DriveCtx<'a, C> {
    ctx: &'a mut C,
    done: &'a mut Vec<Tag>,
}

impl<E, C: DeviceCtx<RemapEvent<E>>> DeviceCtx<E> for DriveCtx<'_, C> {
    #[inline]
    fn now(&self) -> Time {
        self.ctx.now()
    }
    #[inline]
    fn schedule(&mut self, at: Time, event: E) {
        self.ctx.schedule(at, RemapEvent::Drive(event));
    }
    #[inline]
    fn complete(&mut self, tag: Tag) {
        self.done.push(tag);
    }
}

impl<E, C: DeviceCtx<RemapEvent<E>>> DispatchCtx<E> for DriveCtx<'_, C> {
    fn arm(&mut self, t: ArmedTimer) {
        self.ctx.schedule(t.at, RemapEvent::Timer { key: t.key, token: t.token });
    }
}

impl<D: Drive> Remap<D> {
    /// The layer over `drive` (built from `cfg.member`), its queue ticking at `hz`.
    pub fn new(cfg: &RemapConfig, drive: D, hz: u32) -> Remap<D> {
        let sched = cfg.member.scheduler.build(hz, drive.rotational());
        let depth = drive.queue_depth();
        let map = LogMap::new(cfg.logical_blocks(), cfg.physical_segments(), cfg.segment_blocks());
        Remap {
            block: cfg.block_bytes,
            drive_name: cfg.member.name.clone(),
            drive: QueuedDevice::new(drive, depth, hz, sched, cfg.member.queue),
            map,
            dirty: FxHashMap::default(),
            order: VecDeque::new(),
            next_version: 1,
            in_flight: FxHashMap::default(),
            ignored_flushes: Vec::new(),
            used: 0,
            capacity: cfg.buffer_bytes / cfg.block_bytes,
            waiting: VecDeque::new(),
            reads: FxHashMap::default(),
            forced_upto: 0,
            age_armed: false,
            cleaning: None,
            cleaned: Vec::new(),
            relocate: Vec::new(),
            log_writes: BTreeMap::new(),
            next_log: 0,
            flushes: Vec::new(),
            ios: Vec::new(),
            free_ios: Vec::new(),
            done: Vec::new(),
            bios: Vec::new(),
            report: RemapReport {
                buffer_bytes: cfg.buffer_bytes,
                segment_bytes: cfg.segment_bytes,
                honor_flush: cfg.honor_flush,
                ..Default::default()
            },
            cfg: cfg.clone(),
        }
    }

    /// The host blocks `[offset, offset + len)` touches.
    fn blocks(&self, offset: u64, len: u64) -> std::ops::Range<u32> {
        let first = offset / self.block;
        let end = (offset + len).div_ceil(self.block);
        first as u32..end as u32
    }

    fn copy_ns(&self, len: u64) -> Time {
        (len as f64 * 1e9 / self.cfg.copy_bytes_per_s).round() as Time
    }

    fn new_io(&mut self, io: DriveIo) -> BioId {
        match self.free_ios.pop() {
            Some(i) => {
                self.ios[i as usize] = io;
                i
            }
            None => {
                self.ios.push(io);
                (self.ios.len() - 1) as BioId
            }
        }
    }

    fn issue(&mut self, io: DriveIo, op: Op, offset: u64, len: u64, process: u32, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        let bio = self.new_io(io);
        self.drive.issue(QueueBio::new(bio, op, offset, len, process), &mut DriveCtx { ctx, done: &mut self.done });
    }

    /// Issue drive reads for the runs of consecutive drive blocks in `blocks` (sorted by
    /// where they are); returns how many.
    fn read_runs(&mut self, mut blocks: Vec<u32>, io: DriveIo, process: u32, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) -> u32 {
        blocks.sort_unstable();
        let mut n = 0;
        let mut i = 0;
        while i < blocks.len() {
            let start = blocks[i];
            let mut end = start + 1;
            i += 1;
            while i < blocks.len() && blocks[i] == end {
                end += 1;
                i += 1;
            }
            self.issue(io.clone(), Op::Read, start as u64 * self.block, (end - start) as u64 * self.block, process, ctx);
            n += 1;
        }
        n
    }

    /// Whether a write finds room in the buffer for its blocks not already waiting there (a
    /// write larger than the whole buffer goes in once the buffer is empty).
    fn fits(&self, req: &DeviceRequest) -> bool {
        let needed = self.blocks(req.offset, req.len).filter(|b| !self.dirty.contains_key(b)).count() as u64;
        self.used + needed <= self.capacity || self.used == 0
    }

    /// Take a host write into the buffer; it is acknowledged once copied.
    fn accept_write(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        let acked = ctx.now() + self.copy_ns(req.len);
        for b in self.blocks(req.offset, req.len) {
            let version = self.next_version;
            self.next_version += 1;
            match self.dirty.insert(b, Buffered { version, acked }) {
                Some(_) => self.report.absorbed_bytes += self.block,
                None => self.used += 1,
            }
            self.order.push_back((b, version));
        }
        self.report.host_write_bytes += req.len;
        ctx.schedule(acked, RemapEvent::Done(req.tag));
        if !self.age_armed {
            self.age_armed = true;
            ctx.schedule(ctx.now() + self.cfg.max_age_ns, RemapEvent::Age);
        }
    }

    /// Host writes waiting for room take it, in order.
    fn admit_waiting(&mut self, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        while let Some(req) = self.waiting.front() {
            if !self.fits(req) {
                break;
            }
            let req = self.waiting.pop_front().expect("a waiting write");
            self.accept_write(req, ctx);
        }
    }

    fn read(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        self.report.host_read_bytes += req.len;
        let mut on_drive = Vec::new();
        let blocks = self.blocks(req.offset, req.len);
        let all = blocks.len();
        for b in blocks {
            if self.dirty.contains_key(&b) || self.in_flight.contains_key(&b) {
                continue;
            }
            if let Some(p) = self.map.locate(b) {
                on_drive.push(p);
            }
        }
        // Blocks in the buffer (or trimmed: zeros) are copied from RAM.
        self.report.buffer_read_bytes += (all - on_drive.len()) as u64 * self.block;
        if on_drive.is_empty() {
            ctx.schedule(ctx.now() + self.copy_ns(req.len), RemapEvent::Done(req.tag));
            return;
        }
        self.report.host_reads_from_drive += 1;
        let n = self.read_runs(on_drive, DriveIo::HostRead(req.tag), req.process, ctx);
        self.report.drive_reads += n as u64;
        self.reads.insert(req.tag, n);
    }

    fn trim(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        // Only whole blocks lose their data; the map forgets them (nothing is sent to the
        // drive: its copies become garbage the cleaner skips).
        let first = req.offset.div_ceil(self.block);
        let end = (req.offset + req.len) / self.block;
        for b in first..end.max(first) {
            let b = b as u32;
            if self.dirty.remove(&b).is_some() {
                self.used -= 1;
            }
            self.map.trim(b);
        }
        ctx.schedule(ctx.now(), RemapEvent::Done(req.tag));
        self.admit_waiting(ctx);
    }

    fn flush(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        if !self.cfg.honor_flush {
            // Acknowledged at once: the buffer stays where it is.
            self.report.flushes_ignored += 1;
            if self.used > 0 {
                self.ignored_flushes.push(ctx.now());
            }
            ctx.schedule(ctx.now(), RemapEvent::Done(req.tag));
            return;
        }
        // Every host block acknowledged before the flush must be on the drive first.
        let upto = self.next_version - 1;
        self.forced_upto = upto;
        self.flushes.push((req.tag, upto));
        self.write_log(ctx);
        self.settle_flushes(ctx);
    }

    /// Honoured flushes whose blocks have all reached the drive pass the flush on to it.
    fn settle_flushes(&mut self, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        if self.flushes.is_empty() {
            return;
        }
        let oldest_writing = self.log_writes.values().copied().min().unwrap_or(u64::MAX);
        let oldest_waiting = self.dirty.values().map(|d| d.version).min().unwrap_or(u64::MAX);
        let oldest = oldest_writing.min(oldest_waiting);
        let mut i = 0;
        while i < self.flushes.len() {
            let (tag, upto) = self.flushes[i];
            if oldest > upto {
                self.flushes.swap_remove(i);
                self.issue(DriveIo::Flush(tag), Op::Flush, 0, 0, LAYER_PROCESS, ctx);
            } else {
                i += 1;
            }
        }
    }

    /// The version of the oldest block waiting in the buffer.
    fn oldest_dirty(&mut self) -> Option<u64> {
        while let Some(&(b, v)) = self.order.front() {
            if self.dirty.get(&b).is_some_and(|d| d.version == v) {
                return Some(v);
            }
            self.order.pop_front();
        }
        None
    }

    /// Write at the log's head what should go: the cleaner's blocks first, then host blocks
    /// in arrival order once they fill a segment (or sooner, where forced).
    fn write_log(&mut self, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        let bps = self.map.blocks_per_segment() as usize;
        while self.log_writes.len() < MAX_LOG_WRITES {
            let forced = self.oldest_dirty().is_some_and(|v| v <= self.forced_upto);
            if self.relocate.is_empty() && !forced && self.dirty.len() < bps {
                break;
            }
            if self.relocate.is_empty() && self.dirty.is_empty() {
                break;
            }
            if self.map.head_room() == 0 {
                // One free segment stays for the cleaner's writes, which free more.
                let kept = if self.relocate.is_empty() { 1 } else { 0 };
                if self.map.free_segments() <= kept || !self.map.open_next() {
                    self.clean(ctx);
                    break;
                }
            }
            let room = self.map.head_room() as usize;
            let mut blocks = Vec::with_capacity(room);
            let mut first = None;
            while blocks.len() < room {
                let Some((b, from)) = self.relocate.pop() else { break };
                // Moved since the cleaner read it: nothing to keep. (A newer version waiting
                // in the buffer does not stop the move: the victim must empty to be free.)
                if self.map.locate(b) != Some(from) {
                    continue;
                }
                let p = self.map.place(b);
                first.get_or_insert(p);
                self.report.cleaned_bytes += self.block;
                blocks.push((b, None));
            }
            while blocks.len() < room {
                let Some((b, v)) = self.order.pop_front() else { break };
                if self.dirty.get(&b).is_none_or(|d| d.version != v) {
                    continue; // overwritten since: its newer version comes later
                }
                let acked = self.dirty.remove(&b).expect("a block waiting").acked;
                let f = self.in_flight.entry(b).or_insert((0, acked));
                *f = (f.0 + 1, acked);
                let p = self.map.place(b);
                first.get_or_insert(p);
                blocks.push((b, Some(v)));
            }
            let Some(first) = first else { break };
            let n = blocks.len() as u64;
            let seq = self.next_log;
            self.next_log += 1;
            let oldest = blocks.iter().filter_map(|&(_, v)| v).min().unwrap_or(u64::MAX);
            self.log_writes.insert(seq, oldest);
            self.report.log_writes += 1;
            self.report.log_write_bytes += n * self.block;
            self.issue(DriveIo::Log { seq, blocks }, Op::Write, first as u64 * self.block, n * self.block, LAYER_PROCESS, ctx);
        }
        if self.map.free_segments() <= self.cfg.clean_at_free_segments as usize {
            self.clean(ctx);
        }
    }

    /// Start cleaning the segment with the fewest valid blocks, unless a cleaning is under
    /// way or its blocks wait to be written.
    fn clean(&mut self, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        if self.cleaning.is_some() || !self.relocate.is_empty() {
            return;
        }
        let Some(victim) = self.map.victim(None) else { return };
        let blocks = self.map.valid_blocks(victim);
        let places = blocks.iter().map(|&(_, p)| p).collect();
        self.cleaned = blocks;
        let n = self.read_runs(places, DriveIo::Clean, LAYER_PROCESS, ctx);
        self.cleaning = Some(n);
        self.report.cleaned_segments += 1;
    }

    /// Handle the drive completions collected so far.
    fn drain(&mut self, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        while !self.done.is_empty() {
            let done = std::mem::take(&mut self.done);
            for tag in done {
                let rq = self.drive.complete(tag, ctx.now());
                let mut bios = std::mem::take(&mut self.bios);
                bios.push(rq.host);
                self.drive.merged_bios(&rq, &mut bios);
                for &bio in &bios {
                    self.drive_io_done(bio, ctx);
                }
                bios.clear();
                self.bios = bios;
                self.drive.run(&mut DriveCtx { ctx, done: &mut self.done });
            }
        }
    }

    fn drive_io_done(&mut self, bio: BioId, ctx: &mut impl DeviceCtx<RemapEvent<D::Event>>) {
        let io = std::mem::take(&mut self.ios[bio as usize]);
        self.free_ios.push(bio);
        match io {
            DriveIo::Free => unreachable!("a drive bio of no purpose"),
            DriveIo::HostRead(tag) => {
                let left = self.reads.get_mut(&tag).expect("a host read under way");
                *left -= 1;
                if *left == 0 {
                    self.reads.remove(&tag);
                    ctx.complete(tag);
                }
            }
            DriveIo::Log { seq, blocks } => {
                self.log_writes.remove(&seq);
                for (b, version) in blocks {
                    if version.is_none() {
                        continue;
                    }
                    let (left, _) = self.in_flight.get_mut(&b).expect("a block in flight");
                    *left -= 1;
                    if *left == 0 {
                        self.in_flight.remove(&b);
                    }
                    self.used -= 1;
                }
                if self.used == 0 {
                    self.ignored_flushes.clear(); // nothing they covered can be lost any more
                }
                self.admit_waiting(ctx);
                self.write_log(ctx);
                self.settle_flushes(ctx);
            }
            DriveIo::Clean => {
                let left = self.cleaning.as_mut().expect("a cleaning under way");
                *left -= 1;
                if *left == 0 {
                    self.cleaning = None;
                    self.relocate = std::mem::take(&mut self.cleaned);
                    self.relocate.reverse(); // taken from the end: in drive order
                    self.write_log(ctx);
                }
            }
            DriveIo::Flush(tag) => {
                self.report.flushes_done += 1;
                ctx.complete(tag);
            }
        }
    }

    fn report(&self, at: Time) -> DeviceReport {
        let d = self.drive.queue.disk().snapshot(at);
        let report = RemapReport { buffered_bytes: self.dirty.len() as u64 * self.block, ..self.report.clone() };
        DeviceReport {
            kind: DeviceKind::Remap,
            host_bytes_written: self.report.host_write_bytes,
            host_bytes_read: self.report.host_read_bytes,
            media_bytes_written: d.write_sectors * 512,
            media_bytes_read: d.read_sectors * 512,
            die_busy_ns: 0,
            dies: 0,
            channel_busy_ns: Vec::new(),
            controller_busy_ns: 0,
            controller_cores: 0,
            thermal: None,
            nand: None,
            array: None,
            hdd: None,
            remap: Some(report),
        }
    }

    /// Its drive's result, as of `at`.
    pub fn member_results(&self, at: Time) -> Vec<DeviceResult> {
        vec![DeviceResult {
            name: self.drive_name.clone(),
            capacity_bytes: self.drive.device.capacity(),
            scheduler: self.drive.queue.scheduler(),
            disk: self.drive.queue.disk().snapshot(at),
            internal: self.drive.device.internal_report(at),
            members: Vec::new(),
        }]
    }

    /// Check the map's invariants (tests).
    pub fn check(&self) -> Result<(), String> {
        self.map.check()?;
        let in_flight: u64 = self.in_flight.values().map(|&(n, _)| n as u64).sum();
        if self.used != self.dirty.len() as u64 + in_flight {
            return Err(format!("buffer counts {} blocks, holds {} waiting and {in_flight} in flight", self.used, self.dirty.len()));
        }
        Ok(())
    }
}

impl<D: Drive> BlockDevice for Remap<D> {
    type Event = RemapEvent<D::Event>;

    fn lay_out(&mut self, runs: &[(u64, u64)]) {
        // The layer starts over a drive holding block b at b: what was laid out is there.
        self.drive.device.lay_out(runs);
    }

    fn capacity(&self) -> u64 {
        self.cfg.capacity_bytes()
    }

    fn queue_depth(&self) -> u32 {
        QUEUE_DEPTH
    }

    fn rotational(&self) -> bool {
        self.drive.device.rotational()
    }

    fn submit(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<Self::Event>) {
        match req.op {
            Op::Write => {
                if !self.waiting.is_empty() || !self.fits(&req) {
                    self.report.write_waits += 1;
                    self.waiting.push_back(req);
                } else {
                    self.accept_write(req, ctx);
                }
                self.write_log(ctx);
            }
            Op::Read => self.read(req, ctx),
            Op::Trim => self.trim(req, ctx),
            Op::Flush => self.flush(req, ctx),
        }
        self.drain(ctx);
    }

    fn handle(&mut self, event: Self::Event, ctx: &mut impl DeviceCtx<Self::Event>) {
        match event {
            RemapEvent::Drive(e) => self.drive.handle(e, &mut DriveCtx { ctx, done: &mut self.done }),
            RemapEvent::Timer { key, token } => {
                self.drive.fire_timer(key, token, ctx.now());
                self.drive.run(&mut DriveCtx { ctx, done: &mut self.done });
            }
            RemapEvent::Done(tag) => ctx.complete(tag),
            RemapEvent::Age => {
                self.age_armed = false;
                if !self.dirty.is_empty() {
                    self.forced_upto = self.next_version - 1;
                    self.write_log(ctx);
                    self.age_armed = true;
                    ctx.schedule(ctx.now() + self.cfg.max_age_ns, RemapEvent::Age);
                }
            }
        }
        self.drain(ctx);
    }

    fn internal_report(&self, at: Time) -> DeviceReport {
        self.report(at)
    }

    fn end_run(&mut self, now: Time) {
        self.drive.device.end_run(now);
    }

    fn has_internal_work(&self) -> bool {
        !self.dirty.is_empty()
            || !self.log_writes.is_empty()
            || self.cleaning.is_some()
            || !self.reads.is_empty()
            || !self.flushes.is_empty()
            || self.drive.device.has_internal_work()
    }

    fn begin_run(&mut self) -> Time {
        self.drive.device.begin_run()
    }

    /// The buffer's host blocks (waiting, or in a log write not yet done): acknowledged and
    /// in RAM only. Those acknowledged before an ignored flush were promised durable.
    fn volatile(&self) -> crate::device::Volatile {
        let acked = self.dirty.values().map(|d| d.acked).chain(self.in_flight.values().map(|&(_, t)| t));
        let last_flush = self.ignored_flushes.last().copied();
        let (mut blocks, mut promised, mut oldest) = (0u64, 0u64, Time::MAX);
        for t in acked {
            blocks += 1;
            oldest = oldest.min(t);
            if last_flush.is_some_and(|f| t <= f) {
                promised += 1;
            }
        }
        crate::device::Volatile {
            bytes: blocks * self.block,
            promised_bytes: promised * self.block,
            broken_flushes: self.ignored_flushes.iter().filter(|&&f| f >= oldest).count() as u64,
        }
    }

    /// Its drive's own volatile memory. The layer never flushes it, so what it holds was
    /// promised too wherever the host flushed since (counted in the layer's own figure only
    /// for the buffer's blocks).
    fn member_volatile(&self) -> Vec<(String, crate::device::Volatile)> {
        vec![(self.drive_name.clone(), self.drive.device.volatile())]
    }

    /// The buffer's blocks (promised as in [`Self::volatile`]), and the host blocks whose
    /// current copy the drive lost from its own cache. Those are not counted as promised:
    /// the layer does not know when the drive took them.
    fn lost_ranges(&self) -> Option<Vec<crate::device::LostRange>> {
        use crate::device::LostRange;
        let last_flush = self.ignored_flushes.last().copied();
        let block = self.block;
        let buffered = self.dirty.iter().map(|(&b, d)| (b, d.acked)).chain(self.in_flight.iter().map(|(&b, &(_, t))| (b, t)));
        let mut lost: Vec<LostRange> = buffered
            .map(|(b, t)| LostRange { offset: b as u64 * block, len: block, promised: last_flush.is_some_and(|f| t <= f) })
            .collect();
        for r in self.drive.device.lost_ranges()? {
            let (first, end) = (r.offset / block, (r.offset + r.len).div_ceil(block));
            for p in first..end {
                if let Some(b) = self.map.owner_of(p as u32) {
                    lost.push(LostRange { offset: b as u64 * block, len: block, promised: false });
                }
            }
        }
        Some(crate::device::merge_lost(lost))
    }
}
