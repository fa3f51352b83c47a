//! Completely Fair Queuing as Linux 2.6.28 had it (block/cfq-iosched.c, December 2008, the
//! kernel of seed 000's measurements).
//!
//! Each process has its own queue, sorted by sector. One queue at a time is active and
//! dispatches, for a time slice (`slice_sync`) that starts when its first request completes,
//! at most `quantum` requests at once while other queues wait. When the active queue runs
//! empty, CFQ waits for its requests in the device and then idles up to `slice_idle` (2 ms
//! for a seeky process) for that process's next request, so that a process that reads,
//! thinks briefly and reads again keeps the disk: the device is left idle meanwhile. A queue
//! whose process is seeky on queuing hardware, or thinks longer than `slice_idle`, gets no
//! idling ("idle window" off). Whether the device queues ("hw_tag") is learned from how many
//! requests it has held at once. Queues are served round robin; a queue's oldest request
//! goes first once per slice if it has waited past `fifo_expire_*`.
//!
//! Background writeback (requests without REQ_SYNC: in 2.6.28 every write of the page cache
//! and of jbd, fsync's included; see `Bio::sync`) goes to one queue that all processes share
//! (`cfq_get_queue` keeps one per priority; all are best-effort 4 here). That queue never
//! idles and gets `slice_async`; it sends nothing while a synchronous request is in the
//! device (`sync_flight`), and a synchronous request arriving while it is active takes the
//! device from it at once (`cfq_should_preempt`). Bios merge only into requests of the
//! queue they would join (`cfq_allow_merge`).
//!
//! Not modelled: I/O priorities and classes (every process is best-effort, priority 4),
//! preemption between synchronous queues (by a close request, or of a queue whose slice is
//! used), think time and seek distance kept per process rather than per queue (a process's
//! background writes do not count towards its synchronous queue's), and the limit of
//! `slice_async_rq` requests per async slice (2.6.28 compares it with one dispatch round's
//! count, which `quantum` keeps below it).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::lists::{Lists, QueueingSampler, RequestBook, SortedFifo};
use super::{IoScheduler, SchedCtx};
use crate::block::request::Request;
use crate::io::Tag;
use crate::engine::timer::Timer;
use crate::engine::{Time, NS_PER_MS, NS_PER_S};
use crate::error::ConfigError;

/// `/sys/block/*/queue/iosched/` of CFQ (times in ns; sysfs shows ms), with 2.6.28's defaults.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CfqTunables {
    /// Requests the active queue may have in the device at once (while others wait).
    pub quantum: u32,
    pub fifo_expire_sync_ns: Time,
    pub fifo_expire_async_ns: Time,
    /// How far behind the head (KiB) a request may be chosen next, at `back_seek_penalty`
    /// times its distance.
    pub back_seek_max_kb: u64,
    pub back_seek_penalty: u64,
    pub slice_sync_ns: Time,
    pub slice_async_ns: Time,
    pub slice_async_rq: u32,
    /// How long an emptied queue waits for its process's next request (0: never).
    pub slice_idle_ns: Time,
}

impl Default for CfqTunables {
    fn default() -> Self {
        CfqTunables {
            quantum: 4,
            fifo_expire_sync_ns: 125 * NS_PER_MS,
            fifo_expire_async_ns: 250 * NS_PER_MS,
            back_seek_max_kb: 16 * 1024,
            back_seek_penalty: 2,
            slice_sync_ns: 100 * NS_PER_MS,
            slice_async_ns: 40 * NS_PER_MS,
            slice_async_rq: 2,
            slice_idle_ns: 8 * NS_PER_MS,
        }
    }
}

impl CfqTunables {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.quantum == 0 {
            return Err(ConfigError::new("iosched.quantum", "must be at least 1".into()));
        }
        if self.slice_sync_ns == 0 {
            return Err(ConfigError::new("iosched.slice_sync", "must be positive".into()));
        }
        if self.back_seek_penalty == 0 {
            return Err(ConfigError::new("iosched.back_seek_penalty", "must be at least 1".into()));
        }
        Ok(())
    }
}

/// Idling for a seeky process is capped at this (CFQ_MIN_TT).
const MIN_TT_NS: Time = 2 * NS_PER_MS;
/// Device depth at which CFQ decides the device queues (CFQ_HW_QUEUE_MIN).
const HW_QUEUE_MIN: u32 = 5;
/// Busy samples per judgement (cfq_update_hw_tag counts to 50).
const HW_QUEUE_SAMPLES: u32 = 50;
/// A process whose mean seek exceeds this many sectors is seeky (CIC_SEEKY).
const SEEKY_SECTORS: u64 = 8 * 1024;

/// A decaying mean as cfq_io_context keeps them: samples and total weighted 7/8 per update,
/// valid once the weight passes 80.
#[derive(Clone, Copy, Debug, Default)]
struct Decayed {
    samples: u64,
    total: u64,
    mean: u64,
}

impl Decayed {
    fn add(&mut self, x: u64) {
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * x) / 8;
        self.mean = (self.total + self.samples / 2) / self.samples;
    }
    fn valid(&self) -> bool {
        self.samples > 80
    }
}

#[derive(Debug, Default)]
struct Queue {
    /// Its waiting requests by sector and by arrival.
    lists: SortedFifo,
    dispatched: u32,
    /// Set at the first completion of the slice.
    slice_end: Option<Time>,
    on_rr: bool,
    fifo_checked: bool,
    idle_window: bool,
    think: Decayed,
    seek: Decayed,
    last_end_request: Option<Time>,
    /// Where its last request ended, in sectors.
    last_pos: Option<u64>,
    /// A process's synchronous queue; false: the queue of background writeback.
    sync: bool,
}

impl Queue {
    fn seeky(&self) -> bool {
        self.seek.mean > SEEKY_SECTORS
    }
}

/// The book's list `q` is queue `q`'s.
impl Lists for Vec<Queue> {
    fn list(&mut self, q: u32) -> &mut SortedFifo {
        &mut self[q as usize].lists
    }
}

pub struct Cfq {
    t: CfqTunables,
    jiffy_ns: Time,
    queues: Vec<Queue>,
    by_process: FxHashMap<u32, u32>,
    /// The one queue of background writeback, once some has come.
    background: Option<u32>,
    /// Requests of synchronous queues in the device (`sync_flight`).
    sync_flight: u32,
    /// Busy queues in service order (round robin).
    rr: VecDeque<u32>,
    active: Option<u32>,
    /// The active queue is idling for its process's next request.
    wait_request: bool,
    idle_timer: Timer,
    /// The requests it holds; its head is where the last request dispatched ended, for
    /// choosing the next.
    book: RequestBook,
    rq_in_driver: u32,
    hw_tag: QueueingSampler,
    report: CfqCounters,
}

/// What CFQ did, for the curious (not reported by Linux).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CfqCounters {
    pub slices: u64,
    pub idle_waits: u64,
    pub idle_timeouts: u64,
    /// Slices of background writeback cut short by a synchronous request.
    pub preemptions: u64,
}

impl Cfq {
    pub fn new(t: CfqTunables, hz: u32) -> Cfq {
        Cfq {
            t,
            jiffy_ns: NS_PER_S / hz.max(1) as u64,
            queues: Vec::new(),
            by_process: FxHashMap::default(),
            background: None,
            sync_flight: 0,
            rr: VecDeque::new(),
            active: None,
            wait_request: false,
            idle_timer: Timer::default(),
            book: RequestBook::default(),
            rq_in_driver: 0,
            // Assume queuing hardware until the device shows otherwise.
            hw_tag: QueueingSampler::new(HW_QUEUE_SAMPLES, HW_QUEUE_MIN),
            report: CfqCounters::default(),
        }
    }

    pub fn counters(&self) -> CfqCounters {
        self.report
    }

    /// A kernel timer armed now for `ns` (msecs_to_jiffies: rounded up to whole jiffies)
    /// fires that many ticks after the current one: `mod_timer(jiffies + sl)`.
    fn jiffies_after(&self, now: Time, ns: Time) -> Time {
        (now / self.jiffy_ns + ns.div_ceil(self.jiffy_ns)) * self.jiffy_ns
    }

    /// The queue a request of `process` joins: the process's own when synchronous, else
    /// the one of background writeback.
    fn queue_of(&mut self, process: u32, sync: bool) -> u32 {
        if !sync {
            if let Some(q) = self.background {
                return q;
            }
            let q = self.queues.len() as u32;
            self.queues.push(Queue { idle_window: false, sync: false, ..Queue::default() });
            self.background = Some(q);
            return q;
        }
        if let Some(&q) = self.by_process.get(&process) {
            return q;
        }
        let q = self.queues.len() as u32;
        let idle = self.t.slice_idle_ns > 0;
        self.queues.push(Queue { idle_window: idle, sync: true, ..Queue::default() });
        self.by_process.insert(process, q);
        q
    }

    /// cfq_preempt_queue: the active slice ends and queue `q` is served next.
    fn preempt(&mut self, q: u32) {
        self.report.preemptions += 1;
        self.expire();
        if let Some(i) = self.rr.iter().position(|&x| x == q) {
            self.rr.remove(i);
        }
        self.rr.push_front(q);
        self.queues[q as usize].on_rr = true;
    }

    /// cfq_update_hw_tag: a sample counts when more than CFQ_HW_QUEUE_MIN requests wait or
    /// are in the device.
    fn update_hw_tag(&mut self) {
        let busy = self.book.queued() as u32 > HW_QUEUE_MIN || self.rq_in_driver > HW_QUEUE_MIN;
        self.hw_tag.sample(self.rq_in_driver, busy);
    }

    fn slice_used(&self, q: u32, now: Time) -> bool {
        matches!(self.queues[q as usize].slice_end, Some(end) if now >= end)
    }

    fn expire(&mut self) {
        if let Some(a) = self.active.take() {
            let q = &mut self.queues[a as usize];
            q.slice_end = None;
            // Back in line behind the other busy queues if it still has work.
            if !q.lists.is_empty() && !q.on_rr {
                q.on_rr = true;
                self.rr.push_back(a);
            }
        }
        self.wait_request = false;
        self.idle_timer.cancel();
    }

    /// cfq_select_queue: the queue to dispatch from now, if any.
    fn select(&mut self, now: Time) -> Option<u32> {
        if let Some(a) = self.active {
            let q = &self.queues[a as usize];
            if !self.slice_used(a, now) {
                if !q.lists.is_empty() {
                    return Some(a);
                }
                // Empty: wait for its requests in flight or its idle window.
                if self.wait_request || (q.dispatched > 0 && q.idle_window) {
                    return None;
                }
            }
            self.expire();
        }
        let next = self.rr.pop_front()?;
        self.queues[next as usize].on_rr = false;
        let q = &mut self.queues[next as usize];
        q.slice_end = None;
        q.fifo_checked = false;
        self.active = Some(next);
        self.report.slices += 1;
        Some(next)
    }

    /// The request queue `q` sends next ([`RequestBook::choose`]; its oldest is looked at
    /// once a slice).
    fn choose(&mut self, q: u32, now: Time) -> Tag {
        let queue = &mut self.queues[q as usize];
        self.book.choose(&mut queue.lists, &mut queue.fifo_checked, now, (self.t.back_seek_max_kb * 1024, self.t.back_seek_penalty))
    }
}

impl IoScheduler for Cfq {
    fn name(&self) -> &'static str {
        "cfq"
    }

    fn insert(&mut self, tag: Tag, rq: &Request, ctx: &mut SchedCtx) {
        let now = ctx.now;
        let q = self.queue_of(rq.process, rq.sync);
        let expiry = if rq.sync { self.t.fifo_expire_sync_ns } else { self.t.fifo_expire_async_ns };
        self.book.insert(tag, rq, q, now + expiry, &mut self.queues);
        if !rq.sync {
            // Background writeback: no think time or seeks to learn, never an idle window.
            let queue = &mut self.queues[q as usize];
            if self.active != Some(q) && !queue.on_rr {
                queue.on_rr = true;
                self.rr.push_back(q);
            }
            return;
        }
        let (slice_idle, hw_tag) = (self.t.slice_idle_ns, self.hw_tag.queues);
        let queue = &mut self.queues[q as usize];
        // cfq_update_io_thinktime / _seektime / _idle_window.
        if let Some(end) = queue.last_end_request {
            queue.think.add(now.saturating_sub(end).min(2 * slice_idle));
        }
        let sector = rq.offset / 512;
        if let Some(last) = queue.last_pos {
            let mut d = sector.abs_diff(last);
            let cap = if queue.seek.samples <= 60 { 2 * 1024 * 1024 } else { 2 * 1024 * 64 };
            if queue.seek.samples > 0 {
                d = d.min(queue.seek.mean * 4 + cap);
            }
            queue.seek.add(d);
        }
        queue.last_pos = Some(sector + rq.len / 512);
        if slice_idle == 0 || (hw_tag && queue.seeky()) {
            queue.idle_window = false;
        } else if queue.think.valid() {
            queue.idle_window = queue.think.mean <= slice_idle;
        }
        if self.active == Some(q) {
            if self.wait_request {
                // The awaited request came: stop idling and dispatch it.
                self.wait_request = false;
                self.idle_timer.cancel();
            }
        } else {
            if !queue.on_rr {
                queue.on_rr = true;
                self.rr.push_back(q);
            }
            // cfq_should_preempt: a synchronous request does not wait behind background
            // writeback.
            if self.active.is_some_and(|a| !self.queues[a as usize].sync) {
                self.preempt(q);
            }
        }
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx) -> Option<Tag> {
        let now = ctx.now;
        let q = self.select(now)?;
        let busy = self.rr.len() + 1;
        let queue = &self.queues[q as usize];
        // 2.6.28: at most `quantum` in the device while other queues wait; alone, no limit.
        if queue.dispatched >= self.t.quantum && busy > 1 {
            return None;
        }
        // Background writeback waits while synchronous requests are in the device.
        if !queue.sync && self.sync_flight > 0 {
            return None;
        }
        let sync = queue.sync;
        self.wait_request = false;
        self.idle_timer.cancel();
        let tag = self.choose(q, now);
        self.book.take(tag, &mut self.queues);
        self.queues[q as usize].dispatched += 1;
        self.rq_in_driver += 1;
        if sync {
            self.sync_flight += 1;
        }
        Some(tag)
    }

    fn completed(&mut self, tag: Tag, _rq: &Request, ctx: &mut SchedCtx) {
        let now = ctx.now;
        let q = self.book.entry(tag).list;
        self.rq_in_driver -= 1;
        let queue = &mut self.queues[q as usize];
        let slice = if queue.sync { self.t.slice_sync_ns } else { self.t.slice_async_ns };
        if queue.sync {
            self.sync_flight -= 1;
        }
        queue.dispatched -= 1;
        queue.last_end_request = Some(now);
        self.update_hw_tag();
        if self.active != Some(q) {
            return;
        }
        let queue = &mut self.queues[q as usize];
        if queue.slice_end.is_none() {
            queue.slice_end = Some(now + slice);
        }
        if self.slice_used(q, now) {
            self.expire();
            return;
        }
        let queue = &self.queues[q as usize];
        // cfq_arm_slice_timer: idle for this process's next request once nothing of any
        // queue is left in the device.
        if queue.sync && queue.lists.is_empty() && queue.idle_window && self.t.slice_idle_ns > 0 && self.rq_in_driver == 0 {
            let sl = if queue.seek.valid() && queue.seeky() {
                self.t.slice_idle_ns.min(MIN_TT_NS)
            } else {
                self.t.slice_idle_ns
            };
            self.wait_request = true;
            self.idle_timer.cancel();
            self.report.idle_waits += 1;
            ctx.arm(self.jiffies_after(now, sl), 0, self.idle_timer.token());
        }
    }

    fn timer(&mut self, _key: u16, token: u32, ctx: &mut SchedCtx) {
        if !self.idle_timer.is_current(token) || !self.wait_request {
            return;
        }
        // cfq_idle_slice_timer: the process did not come back in time.
        self.report.idle_timeouts += 1;
        self.wait_request = false;
        if let Some(a) = self.active {
            // Its request came meanwhile, or no other queue waits: the slice goes on.
            if !self.slice_used(a, ctx.now) && (!self.queues[a as usize].lists.is_empty() || self.rr.is_empty()) {
                return;
            }
        }
        self.expire();
    }

    fn queued(&self) -> usize {
        self.book.queued()
    }

    fn merges(&self) -> bool {
        true
    }

    fn allow_merge(&self, rq: &Request, process: u32, sync: bool, _front: bool) -> bool {
        // cfq_allow_merge: a bio joins only requests of the queue it would go to, its own
        // process's when synchronous, the shared one of background writeback otherwise.
        rq.sync == sync && (!sync || rq.process == process)
    }

    fn merged(&mut self, tag: Tag, rq: &Request, front: bool, old_offset: u64) {
        self.book.merged(tag, rq, front, old_offset, &mut self.queues);
    }

    fn requests_merged(&mut self, kept: Tag, kept_rq: &Request, gone: Tag) {
        // Both are of one queue (allow_merge), which stays busy.
        self.book.requests_merged(kept, kept_rq, gone, &mut self.queues);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::iosched::ArmedTimer;

    use crate::block::iosched::test_read as rq;

    #[test]
    fn one_process_at_a_time_with_idling_between_its_requests() {
        let mut c = Cfq::new(CfqTunables::default(), 1000);
        c.hw_tag.queues = false; // a device without queuing: idling stays on
        let mut armed: Vec<ArmedTimer> = vec![];
        // Two processes, each with one request.
        c.insert(0, &rq(1, 0), &mut SchedCtx::new(0, &mut armed));
        c.insert(1, &rq(2, 1 << 20), &mut SchedCtx::new(0, &mut armed));
        let first = c.dispatch(&mut SchedCtx::new(0, &mut armed)).unwrap();
        assert_eq!(first, 0);
        assert_eq!(c.dispatch(&mut SchedCtx::new(0, &mut armed)), None, "process 2 waits for process 1's slice");
        c.completed(0, &rq(1, 0), &mut SchedCtx::new(100_000, &mut armed));
        assert_eq!(armed.len(), 1, "idling for process 1's next request");
        assert_eq!(armed[0].at, 8 * NS_PER_MS, "jiffies + 8 at HZ = 1000, armed in jiffy 0");
        assert_eq!(c.dispatch(&mut SchedCtx::new(150_000, &mut armed)), None, "the disk idles");
        // Process 1 comes back: served at once, the idle wait ends.
        c.insert(2, &rq(1, 8192), &mut SchedCtx::new(200_000, &mut armed));
        assert_eq!(c.dispatch(&mut SchedCtx::new(200_000, &mut armed)), Some(2));
        c.completed(2, &rq(1, 8192), &mut SchedCtx::new(300_000, &mut armed));
        // This time it does not: the timer fires, the slice ends and process 2 goes.
        let t = armed.last().copied().unwrap();
        c.timer(t.key, t.token, &mut SchedCtx::new(t.at, &mut armed));
        assert_eq!(c.dispatch(&mut SchedCtx::new(t.at, &mut armed)), Some(1));
        assert_eq!(c.counters().idle_timeouts, 1);
    }

    #[test]
    fn seeky_processes_on_queuing_hardware_get_no_idle_window() {
        let mut c = Cfq::new(CfqTunables::default(), 1000);
        let mut armed: Vec<ArmedTimer> = vec![];
        let mut now = 0;
        // Process 1 reads all over the disk; after a few samples it is seeky.
        for i in 0..8u32 {
            let off = (i as u64 * 7_919 % 1_000) << 30;
            c.insert(i, &rq(1, off), &mut SchedCtx::new(now, &mut armed));
            assert_eq!(c.dispatch(&mut SchedCtx::new(now, &mut armed)), Some(i));
            now += 100_000;
            c.completed(i, &rq(1, off), &mut SchedCtx::new(now, &mut armed));
        }
        let q = &c.queues[0];
        assert!(q.seeky() && q.seek.valid() && !q.idle_window);
        // With process 2 waiting, process 1's empty queue is expired at once.
        c.insert(20, &rq(2, 0), &mut SchedCtx::new(now, &mut armed));
        assert_eq!(c.dispatch(&mut SchedCtx::new(now, &mut armed)), Some(20));
    }

    #[test]
    fn the_active_queue_sends_at_most_quantum_while_others_wait() {
        let mut c = Cfq::new(CfqTunables::default(), 1000);
        let mut armed: Vec<ArmedTimer> = vec![];
        for i in 0..10u32 {
            c.insert(i, &rq(1, i as u64 * 4096), &mut SchedCtx::new(0, &mut armed));
        }
        c.insert(10, &rq(2, 1 << 30), &mut SchedCtx::new(0, &mut armed));
        let got: Vec<Tag> = std::iter::from_fn(|| c.dispatch(&mut SchedCtx::new(0, &mut armed))).collect();
        assert_eq!(got, vec![0, 1, 2, 3], "quantum 4 while another queue waits, sorted by sector");
    }

    /// A write of background writeback (no REQ_SYNC) of `process` at `offset`.
    fn wb(process: u32, offset: u64) -> Request {
        Request { op: crate::io::Op::Write, sync: false, ..rq(process, offset) }
    }

    #[test]
    fn background_writeback_of_every_process_shares_one_queue_that_never_idles() {
        let mut c = Cfq::new(CfqTunables::default(), 1000);
        c.hw_tag.queues = false; // idling would stay on for a synchronous queue
        let mut armed: Vec<ArmedTimer> = vec![];
        // Writeback sent by two processes is one queue's: one slice serves both.
        c.insert(0, &wb(1, 0), &mut SchedCtx::new(0, &mut armed));
        c.insert(1, &wb(2, 1 << 20), &mut SchedCtx::new(0, &mut armed));
        c.insert(2, &rq(3, 1 << 30), &mut SchedCtx::new(0, &mut armed));
        assert_eq!(c.dispatch(&mut SchedCtx::new(0, &mut armed)), Some(0));
        assert_eq!(c.dispatch(&mut SchedCtx::new(0, &mut armed)), Some(1), "process 2's writeback rides the same slice");
        // Emptied, it neither idles nor waits for its requests in the device (a process's
        // queue would): the reader goes at once.
        assert_eq!(c.dispatch(&mut SchedCtx::new(0, &mut armed)), Some(2));
        c.completed(0, &wb(1, 0), &mut SchedCtx::new(100_000, &mut armed));
        c.completed(1, &wb(2, 1 << 20), &mut SchedCtx::new(200_000, &mut armed));
        assert!(armed.is_empty() && c.counters().idle_waits == 0, "no idle wait for writeback");
        // Merging follows the queues: writeback with writeback of any process, a
        // synchronous bio only with its own process's synchronous requests.
        assert!(c.allow_merge(&wb(1, 0), 2, false, false));
        assert!(!c.allow_merge(&wb(1, 0), 1, true, false));
        assert!(!c.allow_merge(&rq(1, 0), 1, false, false));
        assert!(c.allow_merge(&rq(1, 0), 1, true, false) && !c.allow_merge(&rq(1, 0), 2, true, false));
    }

    #[test]
    fn writeback_waits_while_synchronous_requests_are_in_the_device() {
        // No idling: process 1's emptied queue expires at once, and only sync_flight holds
        // the writeback back.
        let mut c = Cfq::new(CfqTunables { slice_idle_ns: 0, ..CfqTunables::default() }, 1000);
        let mut armed: Vec<ArmedTimer> = vec![];
        c.insert(0, &rq(1, 0), &mut SchedCtx::new(0, &mut armed));
        assert_eq!(c.dispatch(&mut SchedCtx::new(0, &mut armed)), Some(0));
        c.insert(1, &wb(2, 1 << 20), &mut SchedCtx::new(0, &mut armed));
        assert_eq!(c.dispatch(&mut SchedCtx::new(0, &mut armed)), None, "a read is in the device");
        c.completed(0, &rq(1, 0), &mut SchedCtx::new(100_000, &mut armed));
        assert_eq!(c.dispatch(&mut SchedCtx::new(100_000, &mut armed)), Some(1));
    }

    #[test]
    fn a_synchronous_request_preempts_a_writeback_slice() {
        let mut c = Cfq::new(CfqTunables::default(), 1000);
        let mut armed: Vec<ArmedTimer> = vec![];
        for i in 0..8u32 {
            c.insert(i, &wb(1, i as u64 * (1 << 20)), &mut SchedCtx::new(0, &mut armed));
        }
        assert_eq!(c.dispatch(&mut SchedCtx::new(0, &mut armed)), Some(0));
        c.completed(0, &wb(1, 0), &mut SchedCtx::new(100_000, &mut armed));
        // Seven writes left in a 40 ms slice; a read arrives and goes next.
        c.insert(20, &rq(2, 1 << 30), &mut SchedCtx::new(150_000, &mut armed));
        assert_eq!(c.dispatch(&mut SchedCtx::new(150_000, &mut armed)), Some(20));
        assert_eq!(c.counters().preemptions, 1);
        // A reader arriving during a reader's slice does not preempt it.
        c.insert(21, &rq(3, 1 << 31), &mut SchedCtx::new(160_000, &mut armed));
        assert_eq!(c.dispatch(&mut SchedCtx::new(160_000, &mut armed)), None);
        assert_eq!(c.counters().preemptions, 1);
    }

    #[test]
    fn a_writeback_slice_lasts_slice_async() {
        let mut c = Cfq::new(CfqTunables::default(), 1000);
        let mut armed: Vec<ArmedTimer> = vec![];
        c.insert(0, &wb(1, 0), &mut SchedCtx::new(0, &mut armed));
        c.insert(1, &wb(1, 1 << 20), &mut SchedCtx::new(0, &mut armed));
        assert_eq!(c.dispatch(&mut SchedCtx::new(0, &mut armed)), Some(0));
        c.completed(0, &wb(1, 0), &mut SchedCtx::new(1_000, &mut armed));
        assert_eq!(c.queues[0].slice_end, Some(1_000 + 40 * NS_PER_MS), "slice_async from the first completion");
    }
}
