//! Budget Fair Queueing (blk-mq's `bfq`, Linux 6.x; block/bfq-iosched.c, bfq-wf2q.c).
//!
//! Each process has its own queue, sorted by sector. One queue at a time is in service, with
//! a budget in sectors; it dispatches (its expired oldest request once per service, else the
//! nearest to the head) until the budget would be overdrawn, its budget timeout
//! (`timeout_sync`) passes, or it runs dry. Queues are ordered by B-WF2Q+: each has a
//! virtual start and finish time (finish = start + budget / weight), the system's virtual
//! time advances with the service given, and the next queue is the eligible one (start not
//! after virtual time) with the earliest finish. So each process gets a share of the sectors
//! transferred in proportion to its weight, whatever its request sizes.
//!
//! When the queue in service runs dry and all its requests have completed, BFQ idles for
//! its process's next request (`slice_idle`) only when that is worth it: on a rotational
//! device without command queueing, always; on a rotational one with queueing, or a
//! non-rotational one without, for a sequential process with a short think time; on a
//! non-rotational device with queueing (an NCQ/NVMe SSD), never — unless `strict_guarantees`
//! asks for idling to keep service guarantees exact. Whether the device queues is learned
//! from how many requests it has held at once (hw_tag).
//!
//! Budgets adapt as bfq's do: a queue that used its whole budget gets four times as much
//! next time, one that timed out twice as much (and is charged its whole budget: a slow,
//! seeky process pays for the time it held the disk), one that idled in vain less, and one
//! that ran dry what it used; all between `max_budget` / 32 and `max_budget`.
//!
//! Background writeback (requests without REQ_SYNC: the flusher's) goes to one queue all
//! processes share (`bfq_async_queue_prio`, one per class and priority), which never idles
//! and is charged three times the sectors it moves (`bfq_async_charge_factor`, in the
//! symmetric scenario modelled here), so synchronous I/O gets the larger share. Bios merge
//! only into requests of the queue they would join (`bfq_allow_bio_merge`).
//!
//! Not modelled: I/O priorities, classes and weights (every process is best-effort with
//! bfq's default weight, so all shares are equal), cgroups, `low_latency`'s weight raising
//! of interactive and soft real-time processes, I/O injection while idling, queue merging of
//! cooperating processes, and the peak-rate estimate that tunes `max_budget` when it is 0
//! (it stays at bfq's starting value, 16 Ki sectors).

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::lists::{Lists, QueueingSampler, RequestBook, SortedFifo};
use super::{IoScheduler, SchedCtx};
use crate::block::request::Request;
use crate::io::{Op, Tag};
use crate::engine::timer::Timer;
use crate::engine::{Time, NS_PER_MS};
use crate::error::ConfigError;

/// `/sys/block/*/queue/iosched/` of bfq (times in ns; sysfs shows ms, `slice_idle_us` µs).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BfqTunables {
    /// How long an emptied queue waits for its process's next request (0: never).
    pub slice_idle_ns: Time,
    /// The longest a queue keeps the device for one budget.
    pub timeout_sync_ns: Time,
    /// The largest budget, sectors; 0: bfq's automatic value (its starting 16 Ki sectors).
    pub max_budget: u64,
    pub back_seek_max_kb: u64,
    pub back_seek_penalty: u64,
    pub fifo_expire_sync_ns: Time,
    pub fifo_expire_async_ns: Time,
    /// Idle whenever the queue in service runs dry, for exact service guarantees.
    pub strict_guarantees: bool,
}

impl Default for BfqTunables {
    fn default() -> Self {
        BfqTunables {
            slice_idle_ns: 8 * NS_PER_MS,
            timeout_sync_ns: 125 * NS_PER_MS,
            max_budget: 0,
            back_seek_max_kb: 16 * 1024,
            back_seek_penalty: 2,
            fifo_expire_sync_ns: 125 * NS_PER_MS,
            fifo_expire_async_ns: 250 * NS_PER_MS,
            strict_guarantees: false,
        }
    }
}

impl BfqTunables {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.timeout_sync_ns == 0 {
            return Err(ConfigError::new("iosched.timeout_sync", "must be positive".into()));
        }
        if self.back_seek_penalty == 0 {
            return Err(ConfigError::new("iosched.back_seek_penalty", "must be at least 1".into()));
        }
        if self.max_budget != 0 && self.max_budget < 32 {
            return Err(ConfigError::new("iosched.max_budget", format!("0 (automatic) or at least 32 sectors, got {}", self.max_budget)));
        }
        Ok(())
    }
}

/// bfq's starting maximum budget (bfq_default_max_budget), sectors.
const DEFAULT_MAX_BUDGET: u64 = 16 * 1024;
/// Background writeback is charged this many times the sectors it moves
/// (bfq_async_charge_factor, Linux 4.19 on; 10 before).
const ASYNC_CHARGE_FACTOR: u64 = 3;
/// Every process's weight (ioprio best-effort 4); shares are equal, so only ratios matter.
const WEIGHT: u128 = 100;
/// Virtual times are kept in sectors × this, so that a service over the weight sum stays exact.
const VSCALE: u128 = 1 << 20;
/// A request this many sectors from the last one's end is a seek (BFQQ_SEEK_THR); on a
/// non-rotational device only if it is also small (BFQQ_SECT_THR_NONROT).
const SEEK_THR: u64 = 8 * 100;
const SECT_THR_NONROT: u64 = 32;
/// hw_tag: judged after this many samples, true if the device held more than the threshold.
const HW_QUEUE_SAMPLES: u32 = 32;
const HW_QUEUE_THRESHOLD: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expiry {
    /// Idled for the process's next request in vain.
    TooIdle,
    BudgetTimeout,
    BudgetExhausted,
    NoMoreRequests,
}

#[derive(Debug, Default)]
struct Queue {
    lists: SortedFifo,
    dispatched: u32,
    budget: u64,
    served: u64,
    start: u128,
    finish: u128,
    /// On the service tree (has requests, not in service).
    active: bool,
    fifo_checked: bool,
    /// The last 32 requests, one bit each: a seek or not.
    seek_history: u32,
    last_pos: Option<u64>,
    last_end_request: Option<Time>,
    think_mean: Time,
    think_samples: u32,
    /// A process's synchronous queue; false: the queue of background writeback.
    sync: bool,
}

impl Queue {
    fn seeky(&self) -> bool {
        self.seek_history.count_ones() > 32 / 8
    }

    fn short_think(&self, slice_idle: Time) -> bool {
        self.think_samples == 0 || self.think_mean <= slice_idle
    }
}

/// The book's list `q` is queue `q`'s.
impl Lists for Vec<Queue> {
    fn list(&mut self, q: u32) -> &mut SortedFifo {
        &mut self[q as usize].lists
    }
}

pub struct Bfq {
    t: BfqTunables,
    rotational: bool,
    max_budget: u64,
    queues: Vec<Queue>,
    by_process: FxHashMap<u32, u32>,
    /// The one queue of background writeback, once some has come.
    background: Option<u32>,
    vtime: u128,
    in_service: Option<u32>,
    service_end: Time,
    wait_request: bool,
    idle_timer: Timer,
    /// The requests it holds, flushes (which bypass the queues) included; its head is
    /// where the last request dispatched ended.
    book: RequestBook,
    rq_in_driver: u32,
    hw_tag: QueueingSampler,
}

impl Bfq {
    /// bfq in front of a device that is `rotational` (a hard disk) or not.
    pub fn new(t: BfqTunables, rotational: bool) -> Bfq {
        Bfq {
            rotational,
            max_budget: if t.max_budget == 0 { DEFAULT_MAX_BUDGET } else { t.max_budget },
            t,
            queues: Vec::new(),
            by_process: FxHashMap::default(),
            background: None,
            vtime: 0,
            in_service: None,
            service_end: 0,
            wait_request: false,
            idle_timer: Timer::default(),
            book: RequestBook::default(),
            rq_in_driver: 0,
            // Queueing is assumed until the device shows otherwise (hw_tag = -1); a device
            // queues if it held more than the threshold.
            hw_tag: QueueingSampler::new(HW_QUEUE_SAMPLES, HW_QUEUE_THRESHOLD + 1),
        }
    }

    fn min_budget(&self) -> u64 {
        self.max_budget / 32
    }

    /// The queue a request of `process` joins: the process's own when synchronous, else
    /// the one of background writeback.
    fn queue_of(&mut self, process: u32, sync: bool) -> u32 {
        let known = if sync { self.by_process.get(&process).copied() } else { self.background };
        if let Some(q) = known {
            return q;
        }
        let q = self.queues.len() as u32;
        self.queues.push(Queue { budget: self.max_budget, sync, ..Queue::default() });
        if sync {
            self.by_process.insert(process, q);
        } else {
            self.background = Some(q);
        }
        q
    }

    /// bfq_update_hw_tag: a sample counts when more than the threshold wait or are in the
    /// device together.
    fn update_hw_tag(&mut self) {
        let busy = self.rq_in_driver + self.book.queued() as u32 > HW_QUEUE_THRESHOLD;
        self.hw_tag.sample(self.rq_in_driver, busy);
    }

    /// bfq_better_to_idle: whether idling for queue `q`'s process pays.
    fn better_to_idle(&self, q: u32) -> bool {
        if self.t.slice_idle_ns == 0 {
            return false;
        }
        if self.t.strict_guarantees {
            return true;
        }
        let queue = &self.queues[q as usize];
        if !queue.sync {
            return false;
        }
        let rot_without_queueing = self.rotational && !self.hw_tag.queues;
        let sequential = !queue.seeky() && queue.short_think(self.t.slice_idle_ns);
        // Equal weights, no groups: the scenario is symmetric, so idling is never needed for
        // service guarantees, only for throughput.
        rot_without_queueing || ((self.rotational || !self.hw_tag.queues) && sequential)
    }

    /// Queue `q` (with requests, not in service) joins the service tree.
    fn activate(&mut self, q: u32, continuing: bool) {
        let vtime = self.vtime;
        let queue = &mut self.queues[q as usize];
        queue.start = if continuing { queue.finish } else { vtime.max(queue.finish) };
        queue.finish = queue.start + queue.budget as u128 * VSCALE / WEIGHT;
        queue.active = true;
    }

    /// bfq_bfqq_expire: queue `q` leaves service for `why`; it is charged what it used,
    /// its budget adapted, and it goes back on the tree if it has requests.
    fn expire(&mut self, why: Expiry) {
        let Some(q) = self.in_service.take() else { return };
        self.wait_request = false;
        self.idle_timer.cancel();
        let (min, max) = (self.min_budget(), self.max_budget);
        let busy: u128 = 1 + self.queues.iter().filter(|x| x.active).count() as u128;
        let queue = &mut self.queues[q as usize];
        let charged = if why == Expiry::BudgetTimeout { queue.budget.max(queue.served) } else { queue.served };
        queue.finish = queue.start + charged as u128 * VSCALE / WEIGHT;
        self.vtime += charged as u128 * VSCALE / (WEIGHT * busy);
        queue.budget = match why {
            Expiry::BudgetExhausted => queue.budget.saturating_mul(4),
            Expiry::BudgetTimeout => queue.budget.saturating_mul(2),
            Expiry::TooIdle => queue.budget.saturating_sub(4 * min),
            Expiry::NoMoreRequests => queue.served,
        }
        .clamp(min.max(1), max);
        queue.served = 0;
        if !queue.lists.is_empty() {
            self.activate(q, true);
        }
    }

    /// The next queue in service: the eligible one with the earliest virtual finish.
    fn next_in_service(&mut self, now: Time) -> Option<u32> {
        let min_start = self.queues.iter().filter(|x| x.active).map(|x| x.start).min()?;
        self.vtime = self.vtime.max(min_start);
        let vtime = self.vtime;
        let (q, _) = self
            .queues
            .iter()
            .enumerate()
            .filter(|(_, x)| x.active && x.start <= vtime)
            .min_by_key(|&(i, x)| (x.finish, i))?;
        let q = q as u32;
        let queue = &mut self.queues[q as usize];
        queue.active = false;
        queue.fifo_checked = false;
        queue.served = 0;
        self.in_service = Some(q);
        self.service_end = now + self.t.timeout_sync_ns;
        Some(q)
    }

    /// The request queue `q` sends next ([`RequestBook::choose`]; its oldest is looked at
    /// once per service).
    fn choose(&mut self, q: u32, now: Time) -> Tag {
        let queue = &mut self.queues[q as usize];
        self.book.choose(&mut queue.lists, &mut queue.fifo_checked, now, (self.t.back_seek_max_kb * 1024, self.t.back_seek_penalty))
    }
}

impl IoScheduler for Bfq {
    fn name(&self) -> &'static str {
        "bfq"
    }

    fn insert(&mut self, tag: Tag, rq: &Request, ctx: &mut SchedCtx) {
        let now = ctx.now;
        if rq.op == Op::Flush {
            // Flushes bypass the elevator in blk-mq.
            self.book.insert_flush(tag);
            return;
        }
        let q = self.queue_of(rq.process, rq.sync);
        let expiry = if rq.sync { self.t.fifo_expire_sync_ns } else { self.t.fifo_expire_async_ns };
        self.book.insert(tag, rq, q, now + expiry, &mut self.queues);
        let (slice_idle, rotational) = (self.t.slice_idle_ns, self.rotational);
        let queue = &mut self.queues[q as usize];
        if !rq.sync {
            // Background writeback: nothing to learn for idling, which it never gets.
            if self.in_service != Some(q) && !queue.active {
                self.activate(q, false);
            }
            return;
        }
        if let Some(end) = queue.last_end_request {
            // bfq_update_io_thinktime: a decaying mean, think times capped at 2 × slice_idle.
            let tt = now.saturating_sub(end).min(2 * slice_idle);
            queue.think_samples = (7 * queue.think_samples + 256) / 8;
            queue.think_mean = (7 * queue.think_mean + tt) / 8;
        }
        let sector = rq.offset / 512;
        let seek = queue.last_pos.is_some_and(|last| {
            sector.abs_diff(last) > SEEK_THR && (rotational || rq.len / 512 < SECT_THR_NONROT)
        });
        queue.seek_history = (queue.seek_history << 1) | seek as u32;
        queue.last_pos = Some(sector + rq.len / 512);
        if self.in_service == Some(q) {
            if self.wait_request {
                // The awaited request came: stop idling.
                self.wait_request = false;
                self.idle_timer.cancel();
            }
        } else if !queue.active {
            self.activate(q, false);
        }
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx) -> Option<Tag> {
        let now = ctx.now;
        if let Some(tag) = self.book.take_flush() {
            self.rq_in_driver += 1;
            return Some(tag);
        }
        loop {
            let q = match self.in_service {
                Some(q) => q,
                None => self.next_in_service(now)?,
            };
            if now >= self.service_end && !self.wait_request {
                self.expire(Expiry::BudgetTimeout);
                continue;
            }
            if self.queues[q as usize].lists.is_empty() {
                // Dry: wait for its process (idling, or its requests in the device first).
                if self.wait_request || (self.queues[q as usize].dispatched > 0 && self.better_to_idle(q)) {
                    return None;
                }
                self.expire(Expiry::NoMoreRequests);
                continue;
            }
            let tag = self.choose(q, now);
            let e = self.book.entry(tag);
            let factor = if self.queues[q as usize].sync { 1 } else { ASYNC_CHARGE_FACTOR };
            let charge = (e.end - e.offset) / 512 * factor;
            let queue = &self.queues[q as usize];
            if queue.served > 0 && queue.served + charge > queue.budget {
                self.expire(Expiry::BudgetExhausted);
                continue;
            }
            self.wait_request = false;
            self.idle_timer.cancel();
            self.book.take(tag, &mut self.queues);
            let queue = &mut self.queues[q as usize];
            queue.dispatched += 1;
            queue.served += charge;
            self.rq_in_driver += 1;
            return Some(tag);
        }
    }

    fn completed(&mut self, tag: Tag, rq: &Request, ctx: &mut SchedCtx) {
        let now = ctx.now;
        self.rq_in_driver -= 1;
        self.update_hw_tag();
        if rq.op == Op::Flush {
            return;
        }
        let q = self.book.entry(tag).list;
        let queue = &mut self.queues[q as usize];
        queue.dispatched -= 1;
        queue.last_end_request = Some(now);
        if self.in_service != Some(q) {
            return;
        }
        let queue = &self.queues[q as usize];
        if queue.lists.is_empty() && self.better_to_idle(q) {
            // bfq_arm_slice_timer, once all its requests are back.
            if queue.dispatched == 0 && !self.wait_request {
                self.wait_request = true;
                self.idle_timer.cancel();
                ctx.arm(now + self.t.slice_idle_ns, 0, self.idle_timer.token());
            }
        } else if now >= self.service_end {
            self.expire(Expiry::BudgetTimeout);
        } else if queue.lists.is_empty() {
            self.expire(Expiry::NoMoreRequests);
        }
    }

    fn timer(&mut self, _key: u16, token: u32, _ctx: &mut SchedCtx) {
        if !self.idle_timer.is_current(token) || !self.wait_request {
            return;
        }
        self.wait_request = false;
        if self.in_service.is_some_and(|q| self.queues[q as usize].lists.is_empty()) {
            self.expire(Expiry::TooIdle);
        }
    }

    fn queued(&self) -> usize {
        self.book.queued()
    }

    fn merges(&self) -> bool {
        true
    }

    fn allow_merge(&self, rq: &Request, process: u32, sync: bool, _front: bool) -> bool {
        // bfq_allow_bio_merge: only into the requests of the queue the bio would join, its
        // own process's when synchronous, the shared one of background writeback otherwise.
        rq.sync == sync && (!sync || rq.process == process)
    }

    fn merged(&mut self, tag: Tag, rq: &Request, front: bool, old_offset: u64) {
        self.book.merged(tag, rq, front, old_offset, &mut self.queues);
    }

    fn requests_merged(&mut self, kept: Tag, kept_rq: &Request, gone: Tag) {
        self.book.requests_merged(kept, kept_rq, gone, &mut self.queues);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::iosched::ArmedTimer;

    fn rq(process: u32, offset: u64, len: u64) -> Request {
        Request::new(Op::Read, offset, len, process, 0, 0)
    }

    /// Dispatches everything dispatchable at `now`, completing each at once.
    fn serve(b: &mut Bfq, now: Time, reqs: &FxHashMap<Tag, Request>, armed: &mut Vec<ArmedTimer>) -> Vec<u32> {
        let mut out = vec![];
        while let Some(tag) = b.dispatch(&mut SchedCtx::new(now, armed)) {
            out.push(reqs[&tag].process);
            b.completed(tag, &reqs[&tag], &mut SchedCtx::new(now, armed));
        }
        out
    }

    #[test]
    fn budgets_share_sectors_not_requests() {
        // Process 1 reads 512 KiB at a time, process 2 reads 4 KiB: each gets its budget of
        // sectors per turn, so process 2 gets many more requests through per turn.
        let t = BfqTunables { max_budget: 2048, slice_idle_ns: 0, ..Default::default() };
        let mut b = Bfq::new(t, false);
        let mut armed = vec![];
        let mut reqs = FxHashMap::default();
        for i in 0..16u32 {
            let r1 = rq(1, (1 << 30) + i as u64 * (512 << 10), 512 << 10);
            let r2 = rq(2, i as u64 * 4096, 4096);
            reqs.insert(i, r1);
            reqs.insert(100 + i, r2);
            b.insert(i, &r1, &mut SchedCtx::new(0, &mut armed));
            b.insert(100 + i, &r2, &mut SchedCtx::new(0, &mut armed));
        }
        let order = serve(&mut b, 0, &reqs, &mut armed);
        assert_eq!(order.len(), 32);
        // The first turn: process 1's budget (2,048 sectors = 1 MiB) takes two of its reads.
        assert_eq!(&order[..2], &[1, 1]);
        assert_eq!(order[2], 2);
        // Process 2's 16 small reads fit one budget: one turn serves them all.
        let p2 = order.iter().position(|&p| p == 2).unwrap();
        assert!(order[p2..p2 + 16].iter().all(|&p| p == 2), "{order:?}");
    }

    #[test]
    fn idles_for_a_sequential_reader_on_a_disk_but_not_on_an_ssd() {
        for (rotational, hw_tag, idles) in [(true, false, true), (true, true, true), (false, true, false)] {
            let mut b = Bfq::new(BfqTunables::default(), rotational);
            b.hw_tag.queues = hw_tag;
            let mut armed = vec![];
            let r = rq(1, 0, 4096);
            b.insert(0, &r, &mut SchedCtx::new(0, &mut armed));
            let other = rq(2, 1 << 30, 4096);
            b.insert(1, &other, &mut SchedCtx::new(0, &mut armed));
            let first = b.dispatch(&mut SchedCtx::new(0, &mut armed)).unwrap();
            assert_eq!(first, 0);
            b.completed(0, &r, &mut SchedCtx::new(100, &mut armed));
            let next = b.dispatch(&mut SchedCtx::new(100, &mut armed));
            if idles {
                assert_eq!(next, None, "rotational={rotational} hw_tag={hw_tag}: waits for process 1");
                let t = armed.pop().unwrap();
                assert_eq!(t.at, 100 + 8 * NS_PER_MS);
                b.timer(t.key, t.token, &mut SchedCtx::new(t.at, &mut armed));
                assert_eq!(b.dispatch(&mut SchedCtx::new(t.at, &mut armed)), Some(1), "in vain: the other goes");
            } else {
                assert_eq!(next, Some(1), "an NCQ SSD does not idle");
            }
        }
    }

    #[test]
    fn a_queue_that_holds_the_device_too_long_is_expired_and_charged_its_budget() {
        let t = BfqTunables { slice_idle_ns: 0, ..Default::default() };
        let mut b = Bfq::new(t, true);
        let mut armed = vec![];
        let (r1, r2) = (rq(1, 0, 4096), rq(2, 1 << 30, 4096));
        b.insert(0, &r1, &mut SchedCtx::new(0, &mut armed));
        b.insert(1, &r1, &mut SchedCtx::new(0, &mut armed));
        b.insert(2, &r2, &mut SchedCtx::new(0, &mut armed));
        assert_eq!(b.dispatch(&mut SchedCtx::new(0, &mut armed)), Some(0));
        // Past timeout_sync: process 1 must let process 2 in, though it has requests left.
        let late = 200 * NS_PER_MS;
        assert_eq!(b.dispatch(&mut SchedCtx::new(late, &mut armed)), Some(2));
        // Charged its whole budget, not the 8 sectors it moved: its next turn starts that far on.
        assert_eq!(b.queues[0].start, DEFAULT_MAX_BUDGET as u128 * VSCALE / WEIGHT);
    }

    /// A write of background writeback (no REQ_SYNC) of `process`.
    fn wb(process: u32, offset: u64, len: u64) -> Request {
        Request { op: Op::Write, sync: false, ..rq(process, offset, len) }
    }

    #[test]
    fn background_writeback_shares_one_queue_never_idles_and_pays_three_times() {
        // A disk without queueing, where a process's sequential queue would idle.
        let mut b = Bfq::new(BfqTunables { max_budget: 2048, ..Default::default() }, true);
        b.hw_tag.queues = false;
        let mut armed = vec![];
        let mut reqs = FxHashMap::default();
        // Two processes' writeback, 64 KiB each, in one queue. Each write is charged three
        // times its 128 sectors, so a budget of 2,048 sectors takes five (1,920).
        for i in 0..8u32 {
            let w = wb(1 + i % 2, i as u64 * (64 << 10), 64 << 10);
            reqs.insert(i, w);
            b.insert(i, &w, &mut SchedCtx::new(0, &mut armed));
        }
        let r = rq(3, 1 << 30, 4096);
        reqs.insert(100, r);
        b.insert(100, &r, &mut SchedCtx::new(0, &mut armed));
        let mut order = vec![];
        for _ in 0..6 {
            let tag = b.dispatch(&mut SchedCtx::new(0, &mut armed)).unwrap();
            order.push(tag);
            b.completed(tag, &reqs[&tag], &mut SchedCtx::new(0, &mut armed));
            assert_eq!(armed.is_empty(), tag != 100, "idling for the reader only, never for writeback");
        }
        assert_eq!(order, vec![0, 1, 2, 3, 4, 100], "5 writes of 384 charged sectors fill 2,048; then the reader");
        // Run dry, it gives way at once where a reader's queue would idle.
        let mut b = Bfq::new(BfqTunables::default(), true);
        b.hw_tag.queues = false;
        let (w, r) = (wb(1, 0, 4096), rq(2, 1 << 30, 4096));
        b.insert(0, &w, &mut SchedCtx::new(0, &mut armed));
        b.insert(1, &r, &mut SchedCtx::new(0, &mut armed));
        assert_eq!(b.dispatch(&mut SchedCtx::new(0, &mut armed)), Some(0));
        armed.clear();
        b.completed(0, &w, &mut SchedCtx::new(100, &mut armed));
        assert!(armed.is_empty());
        assert_eq!(b.dispatch(&mut SchedCtx::new(100, &mut armed)), Some(1));
        assert!(b.allow_merge(&wb(1, 0, 4096), 2, false, false));
        assert!(!b.allow_merge(&wb(1, 0, 4096), 1, true, false) && !b.allow_merge(&rq(1, 0, 4096), 1, false, false));
    }
}
