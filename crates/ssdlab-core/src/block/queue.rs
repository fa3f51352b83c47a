//! One device's block queue: device requests and the bios they carry, the I/O scheduler, the
//! device's queue-depth gate and its /proc/diskstats counters.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::iosched::{ArmedTimer, IoScheduler, SchedCtx, Scheduler};
use super::request::{segments_of, ChainedBio, Request, NO_BIO};
use crate::io::BioId;
use crate::io::{DeviceRequest, Op, Tag};
use crate::engine::Time;
use crate::error::ConfigError;
use crate::metrics::DiskStats;

/// A queue's own sysfs settings (`/sys/block/*/queue/`), with the kernel's defaults.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct QueueLimits {
    /// The largest request merging may build (KiB); BLK_DEF_MAX_SECTORS is 2,560 sectors.
    pub max_sectors_kb: u32,
    /// The most segments (physically contiguous memory runs) a request may carry. Each page
    /// a bio spans counts as one: page-cache pages and the buffers of user programs lie
    /// apart in memory. The driver sets it (read-only in sysfs): 128 is BLK_MAX_SEGMENTS,
    /// the block layer's default, which the loop device and SCSI hosts keep (AHCI allows
    /// 168, NVMe 127 or more). With 4 KiB pages it caps a request at 512 KiB.
    pub max_segments: u32,
    /// 0: merge bios into any queued request that they continue; 1: only into the request
    /// last merged into or queued (the one-hit cache); 2: never.
    pub nomerges: u8,
    /// Requests the queue may hold (waiting and in the device) before a submitter sleeps
    /// with its bio; 0: the kernel's default for the scheduler (see
    /// [`IoScheduler::default_nr_requests`]).
    pub nr_requests: u32,
    /// Host CPU time the scheduler spends on one bio (insert, dispatch and completion
    /// hooks), under the queue's one lock; None: the scheduler's own figure
    /// ([`IoScheduler::default_cpu_ns`]). Not a sysfs setting: ssdlab's.
    pub sched_cpu_ns: Option<Time>,
    /// `read_ahead_kb` as set on the queue (KiB): the file layer's read-ahead on this
    /// device. None: the kernel's default, the host's `read_ahead_kb` raised on an array to
    /// twice its optimal I/O size (`DeviceConfig::optimal_io_bytes`).
    pub read_ahead_kb: Option<u32>,
}

impl Default for QueueLimits {
    fn default() -> Self {
        QueueLimits { max_sectors_kb: 1280, max_segments: 128, nomerges: 0, nr_requests: 0, sched_cpu_ns: None, read_ahead_kb: None }
    }
}

impl QueueLimits {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_sectors_kb < 4 {
            return Err(ConfigError::new("queue.max_sectors_kb", "at least 4 (one page)".into()));
        }
        if self.max_segments == 0 || self.max_segments > u16::MAX as u32 {
            return Err(ConfigError::new("queue.max_segments", format!("1 to 65535 expected, got {}", self.max_segments)));
        }
        if self.nomerges > 2 {
            return Err(ConfigError::new("queue.nomerges", format!("0, 1 or 2 expected, got {}", self.nomerges)));
        }
        if (1..4).contains(&self.nr_requests) {
            return Err(ConfigError::new(
                "queue.nr_requests",
                format!("at least 4 (BLKDEV_MIN_RQ), or 0 for the scheduler's default; got {}", self.nr_requests),
            ));
        }
        Ok(())
    }
}

pub struct BlockQueue {
    depth: u32,
    in_device: u32,
    sched: Scheduler,
    rqs: Vec<Request>,
    free_rqs: Vec<Tag>,
    bios: Vec<ChainedBio>,
    free_bios: Vec<u32>,
    disk: DiskStats,
    armed: Vec<ArmedTimer>,
    limits: QueueLimits,
    /// Whether bios may merge here at all (the scheduler takes merges, `nomerges` < 2).
    merging: bool,
    /// Queued (not yet dispatched) requests by where they end and where they start, per
    /// operation: what a bio may merge into at the back or front.
    ends: FxHashMap<(u64, u8), Tag>,
    starts: FxHashMap<(u64, u8), Tag>,
    /// The request last queued or merged into (the one-hit cache of `nomerges` = 1).
    last_merge: Option<Tag>,
    /// Requests allocated (waiting or in the device), the most there may be, and the bios
    /// whose submitters sleep until one is freed, in order.
    allocated: u32,
    nr_requests: Option<u32>,
    blocked: std::collections::VecDeque<QueueBio>,
    /// The scheduler's CPU time per bio and the lock it runs under (one per queue).
    cpu_ns: Time,
    lock: crate::engine::FifoServer,
    /// Requests being built in a plug (kept to reuse its allocation).
    plug: Vec<PlugRequest>,
}

/// A bio as a queue takes it: alone, under a plug, or waiting for a free request.
#[derive(Clone, Copy, Debug)]
pub struct QueueBio {
    pub host: BioId,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    pub process: u32,
    /// REQ_SYNC: someone waits for it (reads, direct I/O); false for writeback the kernel
    /// sends in the background (see [`Request::sync`]).
    pub sync: bool,
}

impl QueueBio {
    /// A synchronous bio: what the job runner and the arrays send.
    pub fn new(host: BioId, op: Op, offset: u64, len: u64, process: u32) -> QueueBio {
        QueueBio { host, op, offset, len, process, sync: true }
    }

    /// Its segments: the pages it spans ([`QueueLimits::max_segments`]).
    #[inline(always)]
    fn segments(&self) -> u16 {
        segments_of(self.offset, self.len)
    }
}

/// A request built in a plug: its extent and its bios (indices into the batch) in disk order.
#[derive(Debug)]
struct PlugRequest {
    op: Op,
    sync: bool,
    segments: u32,
    offset: u64,
    len: u64,
    bios: std::collections::VecDeque<u32>,
}

impl BlockQueue {
    /// A queue in front of a device taking `depth` requests at once; `hz` is the kernel tick
    /// rate that gives diskstats' io_ticks their resolution.
    pub fn new(depth: u32, hz: u32, sched: Scheduler) -> BlockQueue {
        BlockQueue::with_limits(depth, hz, sched, QueueLimits::default())
    }

    /// [`BlockQueue::new`] with the queue's own settings.
    pub fn with_limits(depth: u32, hz: u32, sched: Scheduler, limits: QueueLimits) -> BlockQueue {
        let merging = sched.merges() && limits.nomerges < 2;
        let nr_requests = match limits.nr_requests {
            0 => sched.default_nr_requests(depth),
            n => Some(n),
        };
        let cpu_ns = limits.sched_cpu_ns.unwrap_or_else(|| sched.default_cpu_ns());
        BlockQueue {
            cpu_ns,
            lock: Default::default(),
            plug: Vec::new(),
            allocated: 0,
            nr_requests,
            blocked: std::collections::VecDeque::new(),
            limits,
            merging,
            ends: FxHashMap::default(),
            starts: FxHashMap::default(),
            last_merge: None,
            depth: depth.max(1),
            in_device: 0,
            sched,
            rqs: Vec::new(),
            free_rqs: Vec::new(),
            bios: Vec::new(),
            free_bios: Vec::new(),
            disk: DiskStats::new(hz),
            armed: Vec::new(),
        }
    }

    /// A free request slot (its contents are the caller's to set).
    #[inline]
    fn alloc_rq(&mut self) -> Tag {
        match self.free_rqs.pop() {
            Some(t) => t,
            None => {
                self.rqs.push(Request {
                    op: Op::Flush,
                    offset: 0,
                    len: 0,
                    process: 0,
                    sync: true,
                    segments: 0,
                    started_at: 0,
                    host: 0,
                    merged: NO_BIO,
                });
                (self.rqs.len() - 1) as Tag
            }
        }
    }

    /// The scheduler's host CPU time per bio.
    pub fn sched_cpu_ns(&self) -> Time {
        self.cpu_ns
    }

    /// When a bio arriving at `now` is through the scheduler's code: it waits for the
    /// queue's lock, then holds it for the scheduler's CPU time (`now` for `none`).
    #[inline]
    pub fn through_scheduler(&mut self, now: Time) -> Time {
        if self.cpu_ns == 0 {
            return now;
        }
        self.lock.reserve(now, self.cpu_ns)
    }

    /// Host request `host` reaches the block layer at `now` and is queued for the device.
    /// Returns how many device requests carry it; the host request is done when all are.
    #[inline]
    pub fn submit(&mut self, b: QueueBio, now: Time) -> Tag {
        if self.merging && matches!(b.op, Op::Read | Op::Write) && self.try_merge(&b, now) {
            if !self.blocked.is_empty() {
                self.admit_blocked(now); // two requests may have become one
            }
            return 1;
        }
        if self.nr_requests.is_some_and(|n| self.allocated >= n) {
            self.blocked.push_back(b);
            return 1;
        }
        self.insert_request(&b, now);
        1
    }

    /// Bio `b` enters the queue at `now` and goes straight to the device, when it can: the queue runs `none` with nothing waiting in it, no request limit of its
    /// own, and the device has a free slot (blk-mq's direct issue). The queue ends as
    /// [`BlockQueue::submit`] and then [`BlockQueue::next_for_device`] would leave it, without
    /// the pass through the scheduler. None: nothing was done; submit it.
    #[inline]
    pub fn submit_direct(&mut self, b: &QueueBio, now: Time) -> Option<DeviceRequest> {
        // `none` never merges (`merging` is false), so no merge is missed here.
        if !self.sched.is_empty_none() || self.in_device >= self.depth || self.nr_requests.is_some() {
            return None;
        }
        debug_assert!(!self.merging && self.blocked.is_empty());
        // Segments matter only to merging, which `none` never does.
        let tag = self.new_request(b, 0, now);
        self.allocated += 1;
        self.disk.start(now);
        self.in_device += 1;
        Some(DeviceRequest { tag, op: b.op, offset: b.offset, len: b.len, process: b.process, sync: b.sync })
    }

    /// Whether a dispatch pass would send nothing and arm nothing (`none` holding no
    /// request), so that it can be skipped. Other schedulers may release a request or arm a
    /// timer on any pass: they are always asked.
    #[inline(always)]
    pub fn dispatches_nothing(&self) -> bool {
        self.sched.is_empty_none() && self.armed.is_empty()
    }

    /// A new request for one bio, into the scheduler.
    #[inline]
    fn insert_request(&mut self, b: &QueueBio, now: Time) {
        let segments = if self.merging { b.segments() } else { 0 };
        let tag = self.new_request(b, segments, now);
        self.enqueue(tag, b.op, b.offset, b.len, now);
    }

    /// A request slot for one bio, filled; its tag.
    #[inline(always)]
    fn new_request(&mut self, b: &QueueBio, segments: u16, now: Time) -> Tag {
        let tag = self.alloc_rq();
        // Filled field by field in place: a whole-struct copy through the stack costs a
        // store-forwarding stall on this path.
        let rq = &mut self.rqs[tag as usize];
        rq.op = b.op;
        rq.offset = b.offset;
        rq.len = b.len;
        rq.process = b.process;
        rq.sync = b.sync;
        rq.segments = segments;
        rq.started_at = now;
        rq.host = b.host;
        rq.merged = NO_BIO;
        tag
    }

    /// Bios a task submitted under one plug (io_submit of a batch): each joins the last
    /// request built in the plug if it continues it at the back or front (blk-mq's
    /// blk_attempt_plug_merge looks at that one only; any scheduler, `none` included, unless
    /// `nomerges` = 2), else merges into a request the scheduler holds as a lone bio would,
    /// else starts a request of its own in the plug. When the plug is flushed (here, at
    /// once: the batch arrives as one), its requests enter the scheduler in order. Each bio
    /// rides exactly one request.
    pub fn submit_plugged(&mut self, bios: &[QueueBio], now: Time) {
        let (max, max_segments) = (self.limits.max_sectors_kb as u64 * 1024, self.limits.max_segments);
        let plug_merges = self.limits.nomerges < 2;
        self.plug.clear();
        for (i, b) in bios.iter().enumerate() {
            let rw = matches!(b.op, Op::Read | Op::Write);
            if let Some(last) = self.plug.last_mut() {
                let segments = last.segments + b.segments() as u32;
                if plug_merges && rw && last.op == b.op && last.sync == b.sync && last.len + b.len <= max && segments <= max_segments {
                    if last.offset + last.len == b.offset {
                        last.len += b.len;
                        last.segments = segments;
                        last.bios.push_back(i as u32);
                        continue;
                    }
                    if b.offset + b.len == last.offset {
                        last.offset = b.offset;
                        last.len += b.len;
                        last.segments = segments;
                        last.bios.push_front(i as u32);
                        continue;
                    }
                }
            }
            if self.merging && rw && self.try_merge(b, now) {
                continue;
            }
            let mut group = std::collections::VecDeque::with_capacity(1);
            group.push_back(i as u32);
            self.plug.push(PlugRequest { op: b.op, sync: b.sync, segments: b.segments() as u32, offset: b.offset, len: b.len, bios: group });
        }
        let plug = std::mem::take(&mut self.plug);
        for p in &plug {
            let first = bios[p.bios[0] as usize];
            if self.nr_requests.is_some_and(|n| self.allocated >= n) {
                // No request free: the submitter sleeps; its bios queue as lone bios.
                for &i in &p.bios {
                    self.blocked.push_back(bios[i as usize]);
                }
                continue;
            }
            let tag = self.alloc_rq();
            // The lowest bio leads; the others follow in disk order.
            let mut chain = NO_BIO;
            for &i in p.bios.iter().skip(1).rev() {
                let b = bios[i as usize];
                chain = self.alloc_bio(ChainedBio { host: b.host, offset: b.offset, len: b.len, next: chain });
            }
            // The bios that joined it are merges (counted once the request exists: bios of
            // a request that found no room above go in alone).
            for _ in 1..p.bios.len() {
                self.disk.merge(p.op);
            }
            self.rqs[tag as usize] = Request {
                op: p.op,
                offset: p.offset,
                len: p.len,
                process: first.process,
                sync: p.sync,
                segments: p.segments as u16,
                started_at: now,
                host: first.host,
                merged: chain,
            };
            self.enqueue(tag, p.op, p.offset, p.len, now);
        }
        self.plug = plug;
    }

    /// Request `tag`, filled in (`op` at `offset` for `len`), enters the scheduler.
    #[inline]
    fn enqueue(&mut self, tag: Tag, op: Op, offset: u64, len: u64, now: Time) {
        self.allocated += 1;
        self.disk.start(now);
        if self.merging && matches!(op, Op::Read | Op::Write) {
            self.ends.insert((offset + len, op as u8), tag);
            self.starts.insert((offset, op as u8), tag);
            self.last_merge = Some(tag);
        }
        self.sched.insert(tag, &self.rqs[tag as usize], &mut SchedCtx::new(now, &mut self.armed));
    }

    /// A request was freed: sleeping submitters take their turn (merging if they can).
    fn admit_blocked(&mut self, now: Time) {
        while self.nr_requests.is_some_and(|n| self.allocated < n) {
            let Some(b) = self.blocked.pop_front() else { return };
            if self.merging && matches!(b.op, Op::Read | Op::Write) && self.try_merge(&b, now) {
                continue;
            }
            self.insert_request(&b, now);
        }
    }

    /// Merge a bio into a queued request it continues (back) or precedes (front), if the
    /// size limit, `nomerges` and the scheduler allow; a request that then meets another
    /// end to start merges with it too (attempt_back_merge / attempt_front_merge). Returns
    /// whether the bio merged.
    fn try_merge(&mut self, b: &QueueBio, now: Time) -> bool {
        let QueueBio { host, op, offset, len, process, sync } = *b;
        let (max, max_segments) = (self.limits.max_sectors_kb as u64 * 1024, self.limits.max_segments);
        let segments = b.segments();
        let one_hit = self.limits.nomerges == 1;
        let fits = |q: &BlockQueue, tag: Tag, front: bool| {
            let rq = &q.rqs[tag as usize];
            rq.op == op
                && rq.len + len <= max
                && rq.segments as u32 + segments as u32 <= max_segments
                && (!one_hit || q.last_merge == Some(tag))
                && q.sched.allow_merge(rq, process, sync, front)
        };
        let key = op as u8;
        if let Some(&tag) = self.ends.get(&(offset, key)) {
            if fits(self, tag, false) && self.back_merge(tag, host, op, offset, len) {
                self.rqs[tag as usize].segments += segments;
                self.ends.remove(&(offset, key));
                self.ends.insert((offset + len, key), tag);
                self.merged(tag, false, self.rqs[tag as usize].offset);
                if let Some(&next) = self.starts.get(&(offset + len, key)) {
                    self.try_merge_requests(tag, next, now);
                }
                return true;
            }
        }
        if let Some(&tag) = self.starts.get(&(offset + len, key)) {
            if fits(self, tag, true) {
                let (old, first, chain, first_len) = {
                    let rq = &self.rqs[tag as usize];
                    (rq.offset, rq.host, rq.merged, rq.first_bio_len(&self.bios))
                };
                // The new bio leads; the old first bio heads the chain behind it.
                let b = self.alloc_bio(ChainedBio { host: first, offset: old, len: first_len, next: chain });
                let rq = &mut self.rqs[tag as usize];
                rq.merged = b;
                rq.host = host;
                rq.offset = offset;
                rq.len += len;
                rq.segments += segments;
                self.starts.remove(&(old, key));
                self.starts.insert((offset, key), tag);
                self.merged(tag, true, old);
                if let Some(&prev) = self.ends.get(&(offset, key)) {
                    self.try_merge_requests(prev, tag, now);
                }
                return true;
            }
        }
        false
    }

    /// Queued request `next` starts where queued request `rq` ends: make them one (`rq`
    /// carries `next`'s bios after its own), if the size limit and the scheduler allow.
    fn try_merge_requests(&mut self, rq: Tag, next: Tag, now: Time) {
        let (a, b) = (self.rqs[rq as usize], self.rqs[next as usize]);
        let max = self.limits.max_sectors_kb as u64 * 1024;
        if rq == next
            || a.op != b.op
            || a.len + b.len > max
            || a.segments as u32 + b.segments as u32 > self.limits.max_segments
            || !self.sched.allow_merge(&a, b.process, b.sync, false)
        {
            return;
        }
        debug_assert_eq!(a.offset + a.len, b.offset);
        let key = a.op as u8;
        // `next`'s first bio, then its chain, go to the end of `rq`'s chain.
        let head = self.alloc_bio(ChainedBio { host: b.host, offset: b.offset, len: b.first_bio_len(&self.bios), next: b.merged });
        let r = &mut self.rqs[rq as usize];
        r.len += b.len;
        r.segments += b.segments;
        // Linux keeps the earlier start time (attempt_merge), as the merged request
        // carries I/O waiting since then.
        r.started_at = r.started_at.min(b.started_at);
        r.append_bios(&mut self.bios, head);
        self.ends.remove(&(b.offset, key));
        self.starts.remove(&(b.offset, key));
        self.ends.insert((b.offset + b.len, key), rq);
        if self.last_merge == Some(next) {
            self.last_merge = Some(rq);
        }
        self.sched.requests_merged(rq, &self.rqs[rq as usize], next);
        self.disk.merged_away(now, b.op, a.started_at, b.started_at);
        self.free_rqs.push(next);
        self.allocated -= 1;
    }

    /// Bookkeeping after a merge into request `tag`.
    fn merged(&mut self, tag: Tag, front: bool, old_offset: u64) {
        self.disk.merge(self.rqs[tag as usize].op);
        self.last_merge = Some(tag);
        self.sched.merged(tag, &self.rqs[tag as usize], front, old_offset);
    }

    fn alloc_bio(&mut self, bio: ChainedBio) -> u32 {
        match self.free_bios.pop() {
            Some(b) => {
                self.bios[b as usize] = bio;
                b
            }
            None => {
                self.bios.push(bio);
                (self.bios.len() - 1) as u32
            }
        }
    }

    /// The next request for the device at `now`, if the device has a free slot and the
    /// scheduler releases one.
    #[inline]
    pub fn next_for_device(&mut self, now: Time) -> Option<DeviceRequest> {
        if self.in_device >= self.depth {
            return None;
        }
        let tag = self.sched.dispatch(&mut SchedCtx::new(now, &mut self.armed))?;
        self.in_device += 1;
        if self.merging {
            self.unmergeable(tag);
        }
        let r = &self.rqs[tag as usize];
        Some(DeviceRequest { tag, op: r.op, offset: r.offset, len: r.len, process: r.process, sync: r.sync })
    }

    /// Request `tag` left the scheduler: nothing merges into it any more.
    fn unmergeable(&mut self, tag: Tag) {
        let r = &self.rqs[tag as usize];
        let (end, start) = ((r.offset + r.len, r.op as u8), (r.offset, r.op as u8));
        if self.ends.get(&end) == Some(&tag) {
            self.ends.remove(&end);
        }
        if self.starts.get(&start) == Some(&tag) {
            self.starts.remove(&start);
        }
        if self.last_merge == Some(tag) {
            self.last_merge = None;
        }
    }

    /// The device completed request `tag` at `now`; returns it. Its first host request is
    /// `host`; those of bios merged into it come from [`BlockQueue::take_merged`].
    #[inline]
    pub fn complete(&mut self, tag: Tag, now: Time) -> Request {
        let rq = self.rqs[tag as usize];
        debug_assert!(self.in_device > 0);
        self.in_device -= 1;
        self.disk.done(now, rq.op, rq.len, now - rq.started_at);
        self.sched.completed(tag, &rq, &mut SchedCtx::new(now, &mut self.armed));
        self.free_rqs.push(tag);
        self.allocated -= 1;
        if !self.blocked.is_empty() {
            self.admit_blocked(now);
        }
        rq
    }

    /// Back-merge host request `host` (`offset`, `len`) into request `tag`, still queued, if
    /// it continues that request with the same operation (what a scheduler does with a bio
    /// that starts where a queued request ends). Returns whether it merged; the host request
    /// is then carried by `tag` and completes with it.
    pub fn back_merge(&mut self, tag: Tag, host: BioId, op: Op, offset: u64, len: u64) -> bool {
        let rq = &self.rqs[tag as usize];
        if rq.op != op || rq.offset + rq.len != offset || !matches!(op, Op::Read | Op::Write | Op::Trim) {
            return false;
        }
        let b = self.alloc_bio(ChainedBio { host, offset, len, next: NO_BIO });
        let rq = &mut self.rqs[tag as usize];
        rq.len += len;
        rq.append_bios(&mut self.bios, b);
        true
    }

    /// The host requests of the bios merged into a completed request, after its first, in
    /// the order they joined; their bios are freed.
    pub fn take_merged(&mut self, rq: &Request, hosts: &mut Vec<BioId>) {
        let mut b = rq.merged;
        while b != NO_BIO {
            let bio = self.bios[b as usize];
            hosts.push(bio.host);
            self.free_bios.push(b);
            b = bio.next;
        }
    }

    /// A scheduler timer fired.
    pub fn timer(&mut self, key: u16, token: u32, now: Time) {
        self.sched.timer(key, token, &mut SchedCtx::new(now, &mut self.armed));
    }

    /// Whether the scheduler armed timers since they were last taken.
    #[inline]
    pub fn has_armed(&self) -> bool {
        !self.armed.is_empty()
    }

    /// Timers the scheduler armed since the last call, for the engine to schedule.
    #[inline]
    pub fn take_armed(&mut self, out: &mut Vec<ArmedTimer>) {
        if !self.armed.is_empty() {
            out.append(&mut self.armed);
        }
    }

    pub fn disk(&self) -> &DiskStats {
        &self.disk
    }

    /// Requests the device accepts at once.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Requests sent to the device and not yet completed.
    pub fn in_device(&self) -> u32 {
        self.in_device
    }

    /// Requests waiting in the scheduler, and bios waiting for a request.
    pub fn queued(&self) -> usize {
        self.sched.queued() + self.blocked.len()
    }

    pub fn scheduler(&self) -> &'static str {
        self.sched.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::iosched::NoneScheduler;
    use crate::engine::timer::Timer;
    use std::collections::VecDeque;

    fn none_queue(depth: u32) -> BlockQueue {
        BlockQueue::new(depth, 1000, Scheduler::None(NoneScheduler::default()))
    }

    #[test]
    fn the_device_gate_holds_requests_and_counts_per_device() {
        let mut q = none_queue(2);
        for h in 0..3 {
            assert_eq!(q.submit(QueueBio::new(10 + h, Op::Read, h as u64 * 4096, 4096, 0), 100), 1);
        }
        let a = q.next_for_device(100).unwrap();
        let b = q.next_for_device(100).unwrap();
        assert!(q.next_for_device(100).is_none(), "the device takes only 2");
        assert_eq!((q.in_device(), q.queued()), (2, 1));
        assert_ne!(a.tag, b.tag);
        let done = q.complete(a.tag, 600);
        assert_eq!((done.host, done.is_merged()), (10, false), "the device request carried host request 10");
        let c = q.next_for_device(600).unwrap();
        assert_eq!(c.offset, 2 * 4096, "first come, first served");
        let d = q.disk().snapshot(600);
        assert_eq!((d.read_ios, d.in_flight, d.read_sectors), (1, 2, 8));
        assert_eq!(d.read_ticks_ms, 0); // 500 ns
    }

    #[test]
    fn merged_bios_ride_one_request_and_complete_with_it_in_order() {
        let mut q = none_queue(4);
        q.submit(QueueBio::new(7, Op::Write, 0, 4096, 1), 0);
        let queued = 0; // the first request's tag on a fresh queue
        assert!(q.back_merge(queued, 8, Op::Write, 4096, 4096));
        assert!(q.back_merge(queued, 9, Op::Write, 8192, 8192));
        assert!(!q.back_merge(queued, 10, Op::Write, 32768, 4096), "not contiguous");
        assert!(!q.back_merge(queued, 11, Op::Read, 16384, 4096), "another operation");
        let r = q.next_for_device(0).unwrap();
        assert_eq!((r.tag, r.offset, r.len), (queued, 0, 16384), "the device sees one request");
        let done = q.complete(r.tag, 100);
        assert!(done.is_merged());
        let mut hosts = vec![done.host];
        q.take_merged(&done, &mut hosts);
        assert_eq!(hosts, vec![7, 8, 9]);
        let d = q.disk().snapshot(100);
        assert_eq!((d.write_ios, d.write_sectors), (1, 32), "iostat counts the merged request once");
        // Freed bios are reused by the next merge.
        q.submit(QueueBio::new(12, Op::Read, 0, 4096, 1), 100);
        assert!(q.back_merge(0, 13, Op::Read, 4096, 4096));
    }

    fn noop_queue(depth: u32, limits: QueueLimits) -> BlockQueue {
        BlockQueue::with_limits(depth, 1000, Scheduler::Noop(Default::default()), limits)
    }

    #[test]
    fn contiguous_bios_merge_back_and_front_into_waiting_requests() {
        let mut q = noop_queue(1, QueueLimits::default());
        q.submit(QueueBio::new(0, Op::Write, 0, 4096, 0), 0);
        let busy = q.next_for_device(0).unwrap(); // the device is busy with the first
        // Eight more, each continuing the last: one request carries them all.
        for h in 1..9u32 {
            assert_eq!(q.submit(QueueBio::new(h, Op::Write, h as u64 * 4096, 4096, 0), 1), 1);
        }
        // One that ends where the waiting request starts joins it at the front; one at the
        // other end of the disk, and a read, do not.
        q.submit(QueueBio::new(20, Op::Write, 1 << 30, 4096, 0), 1);
        assert_eq!(q.queued(), 2);
        q.complete(busy.tag, 10);
        let r = q.next_for_device(10).unwrap();
        assert_eq!((r.offset, r.len), (4096, 8 * 4096));
        let done = q.complete(r.tag, 20);
        let mut hosts = vec![done.host];
        q.take_merged(&done, &mut hosts);
        assert_eq!(hosts, (1..9).collect::<Vec<_>>());
        let d = q.disk().snapshot(20);
        assert_eq!((d.write_ios, d.write_merges, d.write_sectors), (2, 7, 9 * 8), "9 bios in 2 requests, 7 merges");
        // Front merge.
        let mut q = noop_queue(1, QueueLimits::default());
        q.submit(QueueBio::new(0, Op::Read, 0, 4096, 0), 0);
        let busy = q.next_for_device(0).unwrap();
        q.submit(QueueBio::new(1, Op::Read, 8192, 4096, 0), 1);
        q.submit(QueueBio::new(2, Op::Read, 4096, 4096, 0), 1); // ends where request 1 starts
        q.complete(busy.tag, 2);
        let r = q.next_for_device(2).unwrap();
        assert_eq!((r.offset, r.len), (4096, 8192));
        let done = q.complete(r.tag, 3);
        let mut hosts = vec![done.host];
        q.take_merged(&done, &mut hosts);
        assert_eq!(hosts, vec![2, 1], "the front bio leads");
        assert_eq!(q.disk().snapshot(3).read_merges, 1);
    }

    #[test]
    fn direct_issue_leaves_the_queue_as_a_pass_through_none_does() {
        // Two `none` queues fed the same requests: one through submit and a dispatch pass,
        // the other directly where it may. Every request, tag and counter is the same.
        let (mut passed, mut direct) = (none_queue(2), none_queue(2));
        let mut sent = (Vec::new(), Vec::new());
        for (h, at) in [(0u32, 10u64), (1, 20), (2, 30), (3, 40)] {
            passed.submit(QueueBio::new(h, Op::Read, h as u64 * 8192, 4096, 7), at);
            while let Some(r) = passed.next_for_device(at) {
                sent.0.push((r.tag, r.op, r.offset, r.len, r.process, at));
            }
            match direct.submit_direct(&QueueBio::new(h, Op::Read, h as u64 * 8192, 4096, 7), at) {
                Some(r) => sent.1.push((r.tag, r.op, r.offset, r.len, r.process, at)),
                None => {
                    assert!(h >= 2, "the first two find the device free");
                    direct.submit(QueueBio::new(h, Op::Read, h as u64 * 8192, 4096, 7), at);
                }
            }
        }
        assert_eq!(sent.0, sent.1);
        assert_eq!(sent.0.len(), 2, "the device takes two");
        // The device is full: nothing goes directly; a request queued behind others waits
        // its turn too.
        assert!(direct.submit_direct(&QueueBio::new(9, Op::Read, 0, 4096, 7), 45).is_none());
        assert!(!direct.dispatches_nothing(), "two wait in the queue");
        for q in [&mut passed, &mut direct] {
            let done = q.complete(sent.0[0].0, 50);
            assert_eq!(done.host, 0);
        }
        assert!(direct.submit_direct(&QueueBio::new(9, Op::Read, 0, 4096, 7), 50).is_none(), "requests wait before it");
        let (a, b) = (passed.next_for_device(50).unwrap(), direct.next_for_device(50).unwrap());
        assert_eq!((a.tag, a.offset), (b.tag, b.offset));
        assert_eq!(passed.disk().snapshot(60), direct.disk().snapshot(60));
        assert_eq!((passed.in_device(), passed.queued()), (direct.in_device(), direct.queued()));
        // Every other scheduler, and a queue with a request limit of its own, take the pass.
        let mut noop = noop_queue(4, QueueLimits::default());
        assert!(noop.submit_direct(&QueueBio::new(0, Op::Read, 0, 4096, 0), 0).is_none());
        assert!(!noop.dispatches_nothing());
        let limited = QueueLimits { nr_requests: 4, ..Default::default() };
        let mut limited = BlockQueue::with_limits(4, 1000, Scheduler::None(NoneScheduler::default()), limited);
        assert!(limited.submit_direct(&QueueBio::new(0, Op::Read, 0, 4096, 0), 0).is_none());
        // An empty `none` queue has nothing to dispatch.
        let mut empty = none_queue(4);
        assert!(empty.dispatches_nothing());
        let r = empty.submit_direct(&QueueBio::new(0, Op::Write, 0, 4096, 0), 5).unwrap();
        assert!(empty.dispatches_nothing(), "the request went straight to the device");
        empty.complete(r.tag, 9);
        assert_eq!(empty.disk().snapshot(9).write_ios, 1);
    }

    #[test]
    fn merging_stops_at_max_segments_counting_a_segment_a_page() {
        // 128 segments: 4 KiB bios merge into requests of 512 KiB, though max_sectors_kb
        // (1,280) would allow more; each request's page count is its segments.
        let mut q = noop_queue(1, QueueLimits::default());
        q.submit(QueueBio::new(0, Op::Write, 1 << 30, 4096, 0), 0);
        let first = q.next_for_device(0).unwrap();
        for h in 0..200u32 {
            q.submit(QueueBio::new(h + 1, Op::Write, h as u64 * 4096, 4096, 0), 1);
        }
        q.complete(first.tag, 2);
        let sizes: Vec<u64> = drain(&mut q, 2).iter().map(|((_, len), _)| *len).collect();
        assert_eq!(sizes, vec![128 * 4096, 72 * 4096]);
        // Two bios in one page are a segment each; a third does not fit in two.
        let mut q = noop_queue(1, QueueLimits { max_segments: 2, ..Default::default() });
        q.submit(QueueBio::new(0, Op::Write, 1 << 30, 4096, 0), 0);
        q.next_for_device(0).unwrap();
        for h in 0..3u32 {
            q.submit(QueueBio::new(h + 1, Op::Write, h as u64 * 2048, 2048, 0), 1);
        }
        assert_eq!(q.queued(), 2);
        // Under a plug too, and when a bio fills the gap between two requests.
        let mut q = BlockQueue::with_limits(1, 1000, Scheduler::None(NoneScheduler::default()), QueueLimits { max_segments: 4, ..Default::default() });
        let eight: Vec<QueueBio> = (0..8).map(|i| plugged(i, Op::Write, i as u64 * 4096)).collect();
        q.submit_plugged(&eight, 0);
        assert_eq!(q.queued(), 2, "two requests of four pages");
        let mut q = noop_queue(1, QueueLimits { max_segments: 4, ..Default::default() });
        q.submit(QueueBio::new(0, Op::Write, 1 << 30, 4096, 0), 0);
        q.next_for_device(0).unwrap();
        q.submit(QueueBio::new(1, Op::Write, 0, 8192, 0), 1);
        q.submit(QueueBio::new(2, Op::Write, 12288, 8192, 0), 1);
        q.submit(QueueBio::new(3, Op::Write, 8192, 4096, 0), 1);
        assert_eq!(q.queued(), 2, "five pages cannot be one request of four segments");
    }

    #[test]
    fn merging_stops_at_max_sectors_kb_and_as_nomerges_says() {
        let limits = QueueLimits { max_sectors_kb: 16, ..Default::default() };
        let mut q = noop_queue(1, limits);
        q.submit(QueueBio::new(0, Op::Write, 1 << 30, 4096, 0), 0);
        q.next_for_device(0).unwrap();
        for h in 0..8u32 {
            q.submit(QueueBio::new(h + 1, Op::Write, h as u64 * 4096, 4096, 0), 1);
        }
        assert_eq!(q.queued(), 2, "16 KiB requests: 4 bios each");
        // nomerges = 2: none; `none` never merges either.
        let mut q = noop_queue(1, QueueLimits { nomerges: 2, ..Default::default() });
        let mut n = none_queue(1);
        for queue in [&mut q, &mut n] {
            queue.submit(QueueBio::new(0, Op::Write, 1 << 30, 4096, 0), 0);
            queue.next_for_device(0).unwrap();
            for h in 0..4u32 {
                queue.submit(QueueBio::new(h + 1, Op::Write, h as u64 * 4096, 4096, 0), 1);
            }
            assert_eq!(queue.queued(), 4);
        }
        // nomerges = 1: only into the request last queued or merged into.
        let mut q = noop_queue(1, QueueLimits { nomerges: 1, ..Default::default() });
        q.submit(QueueBio::new(0, Op::Write, 1 << 30, 4096, 0), 0);
        q.next_for_device(0).unwrap();
        q.submit(QueueBio::new(1, Op::Write, 0, 4096, 0), 1);
        q.submit(QueueBio::new(2, Op::Write, 1 << 20, 4096, 0), 1);
        q.submit(QueueBio::new(3, Op::Write, 4096, 4096, 0), 1); // continues request 1, but 2 was queued last
        q.submit(QueueBio::new(4, Op::Write, 8192, 4096, 0), 1); // continues 3, the last one queued
        assert_eq!(q.queued(), 3);
        assert_eq!(q.disk().snapshot(1).write_merges, 1);
    }

    /// Drains the queue, returning each device request's extent and the host requests it
    /// carried, in order.
    fn drain(q: &mut BlockQueue, mut t: Time) -> Vec<((u64, u64), Vec<BioId>)> {
        let mut out = vec![];
        while let Some(r) = q.next_for_device(t) {
            t += 10;
            let done = q.complete(r.tag, t);
            let mut hosts = vec![done.host];
            q.take_merged(&done, &mut hosts);
            out.push(((r.offset, r.len), hosts));
        }
        out
    }

    #[test]
    fn a_bio_filling_the_gap_between_two_requests_makes_them_one() {
        let mut q = noop_queue(1, QueueLimits::default());
        q.submit(QueueBio::new(0, Op::Write, 1 << 30, 4096, 0), 0);
        let busy = q.next_for_device(0).unwrap();
        q.submit(QueueBio::new(1, Op::Write, 0, 4096, 0), 1);
        q.submit(QueueBio::new(3, Op::Write, 8192, 4096, 0), 2);
        assert_eq!(q.disk().snapshot(2).in_flight, 3);
        q.submit(QueueBio::new(2, Op::Write, 4096, 4096, 0), 3); // joins 1 at its back, which then meets 3
        assert_eq!(q.queued(), 1);
        let d = q.disk().snapshot(3);
        assert_eq!((d.in_flight, d.write_merges), (2, 2), "one bio merge, one request merge");
        q.complete(busy.tag, 5);
        assert_eq!(drain(&mut q, 5), vec![((0, 12288), vec![1, 2, 3])]);
        let d = q.disk().snapshot(100);
        assert_eq!((d.write_ios, d.write_sectors, d.in_flight), (2, 8 + 24, 0));
        // Little's law: the queue time equals the in-flight area once all is done.
        assert_eq!(d.time_in_queue_ms as u128, d.in_flight_area_ns / 1_000_000);
        // The same through a front merge: with nomerges = 1 the bio may join only the last
        // request queued (3), at its front; 3 then meets 1 and they merge.
        let mut q = noop_queue(1, QueueLimits { nomerges: 1, ..Default::default() });
        q.submit(QueueBio::new(0, Op::Read, 1 << 30, 4096, 0), 0);
        let busy = q.next_for_device(0).unwrap();
        q.submit(QueueBio::new(1, Op::Read, 0, 4096, 0), 1);
        q.submit(QueueBio::new(3, Op::Read, 8192, 4096, 0), 1);
        q.submit(QueueBio::new(2, Op::Read, 4096, 4096, 0), 1);
        q.complete(busy.tag, 5);
        assert_eq!(drain(&mut q, 5), vec![((0, 12288), vec![1, 2, 3])]);
        // Not past max_sectors_kb, and not across processes under CFQ.
        let mut q = noop_queue(1, QueueLimits { max_sectors_kb: 8, ..Default::default() });
        q.submit(QueueBio::new(0, Op::Read, 1 << 30, 4096, 0), 0);
        let busy = q.next_for_device(0).unwrap();
        for h in [1u32, 3, 2] {
            q.submit(QueueBio::new(h, Op::Read, (h as u64 - 1) * 4096, 4096, 0), 1);
        }
        q.complete(busy.tag, 5);
        assert_eq!(drain(&mut q, 5).len(), 2);
        use crate::block::iosched::SchedulerConfig;
        let mut q = BlockQueue::new(1, 1000, SchedulerConfig::Cfq(Default::default()).build(1000, true));
        q.submit(QueueBio::new(0, Op::Read, 1 << 30, 4096, 1), 0);
        let busy = q.next_for_device(0).unwrap();
        q.submit(QueueBio::new(1, Op::Read, 0, 4096, 1), 1);
        q.submit(QueueBio::new(3, Op::Read, 8192, 4096, 2), 1);
        q.submit(QueueBio::new(2, Op::Read, 4096, 4096, 1), 1);
        assert_eq!(q.queued(), 2, "process 2's request stays its own");
        q.complete(busy.tag, 5);
        let mut t = 5;
        let mut served = 0;
        while served < 2 {
            t += 1_000_000;
            q.timer(0, 0, t); // idle timers aside, CFQ serves both in the end
            while let Some(r) = q.next_for_device(t) {
                q.complete(r.tag, t + 1);
                served += 1;
            }
        }
    }

    fn plugged(host: BioId, op: Op, offset: u64) -> QueueBio {
        QueueBio::new(host, op, offset, 4096, 0)
    }

    #[test]
    fn a_plug_merges_contiguous_bios_under_any_scheduler_unless_nomerges_is_2() {
        // Under `none`, which merges nothing else: bios continuing the plug's last request,
        // at its back or front, ride in it; the request lists them in disk order.
        let mut q = none_queue(1);
        let batch = [plugged(1, Op::Write, 4096), plugged(0, Op::Write, 0), plugged(2, Op::Write, 8192), plugged(3, Op::Read, 12288)];
        q.submit_plugged(&batch, 0);
        assert_eq!(q.queued(), 2, "the writes in one request, the read in another");
        let d = q.disk().snapshot(0);
        assert_eq!((d.in_flight, d.write_merges), (2, 2));
        assert_eq!(drain(&mut q, 0), vec![((0, 12288), vec![0, 1, 2]), ((12288, 4096), vec![3])]);
        // Only the last request of the plug is tried: a bio going back to an earlier one
        // does not join it.
        let mut q = none_queue(1);
        q.submit_plugged(&[plugged(0, Op::Write, 0), plugged(1, Op::Write, 1 << 20), plugged(2, Op::Write, 4096)], 0);
        assert_eq!(q.queued(), 3);
        // nomerges = 2: nothing merges; max_sectors_kb bounds a plugged request too.
        let eight: Vec<QueueBio> = (0..8).map(|i| plugged(i, Op::Write, i as u64 * 4096)).collect();
        let mut q = BlockQueue::with_limits(1, 1000, Scheduler::None(NoneScheduler::default()), QueueLimits { nomerges: 2, ..Default::default() });
        q.submit_plugged(&eight, 0);
        assert_eq!(q.queued(), 8);
        let mut q = BlockQueue::with_limits(1, 1000, Scheduler::None(NoneScheduler::default()), QueueLimits { max_sectors_kb: 16, ..Default::default() });
        q.submit_plugged(&eight, 0);
        assert_eq!(drain(&mut q, 0).iter().map(|(e, _)| e.1).collect::<Vec<_>>(), vec![16384, 16384]);
        // A bio that continues a request the scheduler already holds joins that one.
        let mut q = noop_queue(1, QueueLimits::default());
        q.submit(QueueBio::new(9, Op::Write, 1 << 30, 4096, 0), 0);
        q.next_for_device(0).unwrap();
        q.submit(QueueBio::new(10, Op::Write, 0, 4096, 0), 0);
        q.submit_plugged(&[plugged(11, Op::Write, 4096), plugged(12, Op::Write, 8192)], 1);
        assert_eq!(q.queued(), 1);
        assert_eq!(q.disk().snapshot(1).write_merges, 2);
    }

    #[test]
    fn merged_requests_keep_the_earlier_expiry_under_deadline() {
        use crate::block::iosched::SchedulerConfig;
        let t = crate::block::iosched::DeadlineTunables { fifo_batch: 1, ..Default::default() };
        let mut q = BlockQueue::new(1, 1000, SchedulerConfig::Deadline(t).build(1000, true));
        q.submit(QueueBio::new(0, Op::Read, 1 << 30, 4096, 0), 0);
        let busy = q.next_for_device(0).unwrap();
        q.submit(QueueBio::new(1, Op::Read, 8192, 4096, 0), 1); // the oldest, high on the disk
        q.submit(QueueBio::new(2, Op::Read, 100 << 20, 4096, 0), 2);
        q.submit(QueueBio::new(3, Op::Read, 0, 4096, 0), 3);
        q.submit(QueueBio::new(4, Op::Read, 4096, 4096, 0), 4); // 3 + 4 + 1 become one request at 0
        assert_eq!(q.queued(), 2);
        // Past the read expiry of request 1: the merged request, which carries it, goes first
        // although the sweep (after 1 GiB: nothing; then the oldest) would agree, and 2 second.
        let late = 1 + 500 * crate::engine::NS_PER_MS;
        q.complete(busy.tag, late);
        let first = q.next_for_device(late).unwrap();
        assert_eq!((first.offset, first.len), (0, 12288));
        assert_eq!(q.disk().snapshot(late).read_merges, 2);
    }

    #[test]
    fn submitters_sleep_when_nr_requests_are_allocated_and_merge_when_woken() {
        let limits = QueueLimits { nr_requests: 4, ..Default::default() };
        let mut q = noop_queue(1, limits);
        q.submit(QueueBio::new(0, Op::Read, 1 << 30, 4096, 0), 0);
        let busy = q.next_for_device(0).unwrap();
        for h in 1..8u32 {
            q.submit(QueueBio::new(h, Op::Read, h as u64 * (1 << 20), 4096, h), 1); // far apart: no merging
        }
        q.submit(QueueBio::new(8, Op::Read, 7 * (1 << 20) + 4096, 4096, 8), 1); // continues bio 7 (asleep)
        assert_eq!(q.queued(), 8, "3 requests in the scheduler, 5 bios asleep");
        assert_eq!(q.disk().snapshot(1).in_flight, 4, "diskstats count requests, not sleeping bios");
        q.complete(busy.tag, 10);
        assert_eq!(q.disk().snapshot(10).in_flight, 4, "one freed, one woken");
        // Drain: every bio gets served; bio 8 rides with bio 7.
        let mut served = 0;
        let mut t = 10;
        while let Some(r) = q.next_for_device(t) {
            t += 10;
            q.complete(r.tag, t);
            served += 1;
        }
        assert_eq!(served, 7, "8 bios after the first, one merged");
        assert_eq!(q.disk().snapshot(t).read_merges, 1);
        assert_eq!(q.queued(), 0);
    }

    #[test]
    fn cfq_keeps_processes_bios_apart() {
        use crate::block::iosched::SchedulerConfig;
        let mut q = BlockQueue::new(1, 1000, SchedulerConfig::Cfq(Default::default()).build(1000, true));
        q.submit(QueueBio::new(0, Op::Read, 1 << 30, 4096, 1), 0);
        q.next_for_device(0).unwrap();
        q.submit(QueueBio::new(1, Op::Read, 0, 4096, 1), 1);
        q.submit(QueueBio::new(2, Op::Read, 4096, 4096, 2), 1); // another process: its own request
        q.submit(QueueBio::new(3, Op::Read, 4096, 4096, 1), 1); // same process: merges
        assert_eq!(q.queued(), 2);
        assert_eq!(q.disk().snapshot(1).read_merges, 1);
        // Background writeback of any process merges; a synchronous write does not join it.
        let wb = |host, offset, process| QueueBio { sync: false, ..QueueBio::new(host, Op::Write, offset, 4096, process) };
        q.submit(wb(4, 1 << 20, 1), 2);
        q.submit(wb(5, (1 << 20) + 4096, 2), 2);
        q.submit(QueueBio::new(6, Op::Write, (1 << 20) + 8192, 4096, 2), 2);
        assert_eq!(q.queued(), 4);
        assert_eq!(q.disk().snapshot(2).write_merges, 1);
    }

    /// A scheduler that holds requests until it has two, or until 1 µs after the first
    /// arrived; a full batch cancels the pending timer.
    #[derive(Default)]
    struct Batch {
        held: VecDeque<Tag>,
        ready: VecDeque<Tag>,
        timer: Timer,
        fired: u32,
        stale: u32,
    }

    impl IoScheduler for Batch {
        fn name(&self) -> &'static str {
            "batch-test"
        }
        fn insert(&mut self, tag: Tag, _: &Request, ctx: &mut SchedCtx) {
            self.held.push_back(tag);
            if self.held.len() == 1 {
                ctx.arm(ctx.now + 1_000, 0, self.timer.token());
            } else {
                self.timer.cancel();
                self.ready.extend(self.held.drain(..));
            }
        }
        fn dispatch(&mut self, _: &mut SchedCtx) -> Option<Tag> {
            self.ready.pop_front()
        }
        fn completed(&mut self, _: Tag, _: &Request, _: &mut SchedCtx) {}
        fn timer(&mut self, _: u16, token: u32, _: &mut SchedCtx) {
            if !self.timer.is_current(token) {
                self.stale += 1;
                return;
            }
            self.fired += 1;
            self.ready.extend(self.held.drain(..));
        }
        fn queued(&self) -> usize {
            self.held.len() + self.ready.len()
        }
        fn requests_merged(&mut self, _: Tag, _: &Request, _: Tag) {}
    }

    #[test]
    fn scheduler_timers_are_armed_and_cancelled_by_version() {
        let mut q = BlockQueue::new(8, 1000, Scheduler::Custom(Box::new(Batch::default())));
        let mut armed = vec![];
        q.submit(QueueBio::new(1, Op::Write, 0, 4096, 3), 0);
        q.take_armed(&mut armed);
        assert_eq!(armed.len(), 1);
        assert!(q.next_for_device(0).is_none(), "held for a batch");
        q.submit(QueueBio::new(2, Op::Write, 4096, 4096, 3), 10); // completes the batch: the timer is cancelled
        assert_eq!(q.next_for_device(10).map(|r| r.offset), Some(0));
        assert_eq!(q.next_for_device(10).map(|r| r.offset), Some(4096));
        q.submit(QueueBio::new(3, Op::Write, 8192, 4096, 3), 2_000);
        q.take_armed(&mut armed);
        let (stale, live) = (armed[0], armed[1]);
        assert_eq!(live.at, 3_000);
        // The cancelled timer still arrives (events cannot be taken back) and must not
        // release request 3 early.
        q.timer(stale.key, stale.token, 2_000);
        assert!(q.next_for_device(2_000).is_none(), "a cancelled timer released a request");
        q.timer(live.key, live.token, live.at);
        assert_eq!(q.next_for_device(3_000).map(|r| r.offset), Some(8192), "the timer released it");
    }
}
