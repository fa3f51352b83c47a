//! The I/O-scheduler interface of a block queue, and the schedulers Linux offers.
//!
//! A scheduler is told of every request that enters the queue (`insert`), asked for the next
//! one whenever the device has a free slot (`dispatch`), told of completions, and may arm
//! timers (idling, expiry) through its context; a timer it no longer wants is cancelled with
//! the versioned [`Timer`](crate::engine::timer::Timer) it keeps, so a stale wake-up arrives
//! and is ignored. Each request names its process (the fio job that issued it), so schedulers
//! that keep per-process queues can. The block queue merges bios into the requests a
//! scheduler holds, as far as the scheduler allows, and tells it when one grew.
//!
//! The schedulers: blk-mq's `none`, `mq-deadline`, `kyber` and `bfq` (Linux 6.x), and the legacy
//! single-queue set that 2008's kernels ran — `noop`, `deadline`, `anticipatory` and `cfq`
//! as in Linux 2.6.28. Their tunables carry their sysfs names (times in ns here; the Python layer takes
//! them in the units sysfs uses) and the kernels' defaults.

mod anticipatory;
mod bfq;
mod cfq;
mod deadline;
mod kyber;
mod lists;

pub use anticipatory::{Anticipatory, AnticipatoryTunables};
pub use bfq::{Bfq, BfqTunables};
pub use cfq::{Cfq, CfqTunables};
pub use deadline::{Deadline, DeadlineTunables};
pub use kyber::{Kyber, KyberTunables};

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::request::Request;
use crate::io::Tag;
use crate::engine::Time;

/// A timer a scheduler asked for: when, which of its timers, and the version it was armed at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArmedTimer {
    pub at: Time,
    pub key: u16,
    pub token: u32,
}

/// What a scheduler may do while it is called: read the clock and arm timers.
pub struct SchedCtx<'a> {
    pub now: Time,
    armed: &'a mut Vec<ArmedTimer>,
}

impl<'a> SchedCtx<'a> {
    pub fn new(now: Time, armed: &'a mut Vec<ArmedTimer>) -> Self {
        SchedCtx { now, armed }
    }

    /// Ask for [`IoScheduler::timer`] with `key` and `token` at `at` (not before now).
    pub fn arm(&mut self, at: Time, key: u16, token: u32) {
        self.armed.push(ArmedTimer { at: at.max(self.now), key, token });
    }
}

/// A block queue's I/O scheduler.
pub trait IoScheduler {
    /// The scheduler's name as Linux shows it in `/sys/block/*/queue/scheduler`.
    fn name(&self) -> &'static str;
    /// Request `tag` entered the queue.
    fn insert(&mut self, tag: Tag, rq: &Request, ctx: &mut SchedCtx);
    /// The device has a free slot: the request to send now, if the scheduler releases one.
    fn dispatch(&mut self, ctx: &mut SchedCtx) -> Option<Tag>;
    /// Request `tag`, dispatched earlier, completed.
    fn completed(&mut self, tag: Tag, rq: &Request, ctx: &mut SchedCtx);
    /// A timer armed with `key` fired; `token` is the version it was armed with.
    fn timer(&mut self, key: u16, token: u32, ctx: &mut SchedCtx);
    /// Requests inserted and not yet dispatched.
    fn queued(&self) -> usize;
    /// Whether bios may merge into the requests it holds (off unless a scheduler says so).
    /// blk-mq's `none` hands requests straight to the driver (a submitter waits for a driver
    /// tag as a bio, not as a queued request), so nothing waits in it to merge with.
    fn merges(&self) -> bool {
        false
    }
    /// Whether a bio of `process` may join queued request `rq`, at its front or back (CFQ
    /// keeps one process's synchronous I/O apart from another's; deadline may refuse front
    /// merges).
    fn allow_merge(&self, _rq: &Request, _process: u32, _front: bool) -> bool {
        true
    }
    /// Requests a queue with this scheduler holds by default (`nr_requests`) in front of a
    /// device taking `depth`; None: no limit of its own (blk-mq's `none`: a submitter waits
    /// for a driver tag, which the device-depth gate already models).
    fn default_nr_requests(&self, _depth: u32) -> Option<u32> {
        None
    }
    /// Host CPU time per bio in the scheduler's hooks, under its lock (ns, a ~2.4 GHz core).
    fn default_cpu_ns(&self) -> Time {
        0
    }
    /// Queued request `tag` grew by a merged bio; `front`: at its start, which moved from
    /// `old_offset` (schedulers that sort by position re-sort it).
    fn merged(&mut self, _tag: Tag, _rq: &Request, _front: bool, _old_offset: u64) {}
    /// Queued request `gone` was merged into queued request `kept`, which it continued
    /// (`kept_rq` now ends where `gone` ended), and is gone: forget it. `kept` takes the
    /// earlier of the two expiry times, as Linux's elv_merge_requests has it. Only
    /// schedulers that take merges are asked.
    fn requests_merged(&mut self, kept: Tag, kept_rq: &Request, gone: Tag);
}

/// Which scheduler a block queue runs, and its tunables, as a system description names it.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(tag = "name", rename_all = "kebab-case")]
pub enum SchedulerConfig {
    /// blk-mq's `none`: first come, first served, no merging.
    #[default]
    None,
    /// The legacy `noop`: first come, first served, with merging.
    Noop,
    /// The legacy `deadline` (Linux 2.6): sorted by sector, with read and write expiry.
    Deadline(DeadlineTunables),
    /// blk-mq's `mq-deadline`: the same algorithm and defaults on the multi-queue layer.
    MqDeadline(DeadlineTunables),
    /// blk-mq's `kyber`: per-domain token depths adapted to target latencies.
    Kyber(KyberTunables),
    /// blk-mq's `bfq`: per-process queues served by budgets in B-WF2Q+ order, with idling.
    Bfq(BfqTunables),
    /// Completely Fair Queuing as in Linux 2.6.28: per-process queues, time slices, idling.
    Cfq(CfqTunables),
    /// The anticipatory elevator of Linux 2.6.28: deadline's lists, timed batches, and a
    /// short wait after a read for the same process's next one.
    Anticipatory(AnticipatoryTunables),
}

impl SchedulerConfig {
    /// The scheduler, on a kernel ticking at `hz` (CFQ's slices and idle timers are jiffies),
    /// in front of a device that is `rotational` (a hard disk: bfq idles differently).
    pub fn build(self, hz: u32, rotational: bool) -> Scheduler {
        match self {
            SchedulerConfig::None => Scheduler::None(NoneScheduler::default()),
            SchedulerConfig::Noop => Scheduler::Noop(NoopScheduler::default()),
            SchedulerConfig::Deadline(t) => Scheduler::Deadline(Box::new(Deadline::new(t, "deadline"))),
            SchedulerConfig::MqDeadline(t) => Scheduler::Deadline(Box::new(Deadline::new(t, "mq-deadline"))),
            SchedulerConfig::Kyber(t) => Scheduler::Kyber(Box::new(Kyber::new(t, hz))),
            SchedulerConfig::Bfq(t) => Scheduler::Bfq(Box::new(Bfq::new(t, rotational))),
            SchedulerConfig::Cfq(t) => Scheduler::Cfq(Box::new(Cfq::new(t, hz))),
            SchedulerConfig::Anticipatory(t) => Scheduler::Anticipatory(Box::new(Anticipatory::new(t))),
        }
    }

    /// Errors name the tunable.
    pub fn validate(&self) -> Result<(), crate::ConfigError> {
        match self {
            SchedulerConfig::Deadline(t) | SchedulerConfig::MqDeadline(t) => t.validate(),
            SchedulerConfig::Cfq(t) => t.validate(),
            SchedulerConfig::Kyber(t) => t.validate(),
            SchedulerConfig::Bfq(t) => t.validate(),
            SchedulerConfig::Anticipatory(t) => t.validate(),
            SchedulerConfig::None | SchedulerConfig::Noop => Ok(()),
        }
    }
}

/// A block queue's scheduler: the built-in ones by value (their calls inline on the
/// per-request path), or any other implementation of the interface.
pub enum Scheduler {
    None(NoneScheduler),
    Noop(NoopScheduler),
    Deadline(Box<Deadline>),
    Kyber(Box<Kyber>),
    Bfq(Box<Bfq>),
    Cfq(Box<Cfq>),
    Anticipatory(Box<Anticipatory>),
    Custom(Box<dyn IoScheduler>),
}

macro_rules! each {
    ($s:expr, $x:ident => $e:expr) => {
        match $s {
            Scheduler::None($x) => $e,
            Scheduler::Noop($x) => $e,
            Scheduler::Deadline($x) => $e,
            Scheduler::Kyber($x) => $e,
            Scheduler::Bfq($x) => $e,
            Scheduler::Cfq($x) => $e,
            Scheduler::Anticipatory($x) => $e,
            Scheduler::Custom($x) => $e,
        }
    };
}

impl IoScheduler for Scheduler {
    fn name(&self) -> &'static str {
        each!(self, s => s.name())
    }
    #[inline]
    fn insert(&mut self, tag: Tag, rq: &Request, ctx: &mut SchedCtx) {
        each!(self, s => s.insert(tag, rq, ctx))
    }
    #[inline]
    fn dispatch(&mut self, ctx: &mut SchedCtx) -> Option<Tag> {
        each!(self, s => s.dispatch(ctx))
    }
    #[inline]
    fn completed(&mut self, tag: Tag, rq: &Request, ctx: &mut SchedCtx) {
        each!(self, s => s.completed(tag, rq, ctx))
    }
    fn timer(&mut self, key: u16, token: u32, ctx: &mut SchedCtx) {
        each!(self, s => s.timer(key, token, ctx))
    }
    fn queued(&self) -> usize {
        each!(self, s => s.queued())
    }
    #[inline]
    fn merges(&self) -> bool {
        each!(self, s => s.merges())
    }
    fn allow_merge(&self, rq: &Request, process: u32, front: bool) -> bool {
        each!(self, s => s.allow_merge(rq, process, front))
    }
    fn merged(&mut self, tag: Tag, rq: &Request, front: bool, old_offset: u64) {
        each!(self, s => s.merged(tag, rq, front, old_offset))
    }
    fn requests_merged(&mut self, kept: Tag, kept_rq: &Request, gone: Tag) {
        each!(self, s => s.requests_merged(kept, kept_rq, gone))
    }
    /// Assumed figures, ordered by the work each hook does; the one measured figure is BFQ's
    /// 1.9 µs per request on a Core i7-2760QM (Documentation/block/bfq-iosched.rst), which
    /// bounds them from above: CFQ's service trees and per-process lookups come closest.
    fn default_cpu_ns(&self) -> Time {
        match self {
            // blk-mq's direct issue: the baseline every other figure adds to.
            Scheduler::None(_) | Scheduler::Custom(_) => 0,
            // A list append and pop under the queue lock.
            Scheduler::Noop(_) => 200,
            // A list append and a token (sbitmap) per request, latency bookkeeping at
            // completion: built for fast multi-queue devices.
            Scheduler::Kyber(_) => 300,
            // Two rb-tree operations and a FIFO, under one lock.
            Scheduler::Deadline(_) => 500,
            // Deadline's lists plus per-process statistics.
            Scheduler::Anticipatory(_) => 700,
            // Per-process queue lookup, service tree, rb-tree, idle and hw_tag bookkeeping.
            Scheduler::Cfq(_) => 1_500,
            // The measured figure itself.
            Scheduler::Bfq(_) => 1_900,
        }
    }
    fn default_nr_requests(&self, depth: u32) -> Option<u32> {
        match self {
            Scheduler::None(_) | Scheduler::Custom(_) => None,
            // The legacy block layer: BLKDEV_MAX_RQ.
            Scheduler::Noop(_) | Scheduler::Cfq(_) | Scheduler::Anticipatory(_) => Some(LEGACY_NR_REQUESTS),
            Scheduler::Deadline(d) if d.name() == "deadline" => Some(LEGACY_NR_REQUESTS),
            // blk-mq with an elevator: twice the device's depth, at most 2 × BLKDEV_DEFAULT_RQ.
            Scheduler::Deadline(_) | Scheduler::Kyber(_) | Scheduler::Bfq(_) => Some(2 * depth.min(128)),
        }
    }
}

impl Scheduler {
    /// Whether this is blk-mq's `none` holding no request: a request entering now is the
    /// next one dispatched, and a dispatch pass finds nothing (and `none` arms no timer).
    #[inline(always)]
    pub fn is_empty_none(&self) -> bool {
        matches!(self, Scheduler::None(n) if n.fifo.is_empty())
    }
}

/// Requests per queue on the legacy (single-queue) block layer (BLKDEV_MAX_RQ).
pub const LEGACY_NR_REQUESTS: u32 = 128;

/// blk-mq's `none`: requests go to the device in the order they entered the queue.
#[derive(Debug, Default)]
pub struct NoneScheduler {
    fifo: VecDeque<Tag>,
}

impl IoScheduler for NoneScheduler {
    fn name(&self) -> &'static str {
        "none"
    }

    #[inline]
    fn insert(&mut self, tag: Tag, _rq: &Request, _ctx: &mut SchedCtx) {
        self.fifo.push_back(tag);
    }

    #[inline]
    fn dispatch(&mut self, _ctx: &mut SchedCtx) -> Option<Tag> {
        self.fifo.pop_front()
    }

    #[inline]
    fn completed(&mut self, _tag: Tag, _rq: &Request, _ctx: &mut SchedCtx) {}

    fn timer(&mut self, _key: u16, _token: u32, _ctx: &mut SchedCtx) {}

    fn queued(&self) -> usize {
        self.fifo.len()
    }

    /// Never asked: nothing merges under `none`.
    fn requests_merged(&mut self, _kept: Tag, _kept_rq: &Request, gone: Tag) {
        self.fifo.retain(|&t| t != gone);
    }
}

/// The legacy `noop` elevator: first come, first served; bios merge into queued requests.
#[derive(Debug, Default)]
pub struct NoopScheduler {
    fifo: VecDeque<Tag>,
}

impl IoScheduler for NoopScheduler {
    fn name(&self) -> &'static str {
        "noop"
    }
    fn insert(&mut self, tag: Tag, _rq: &Request, _ctx: &mut SchedCtx) {
        self.fifo.push_back(tag);
    }
    fn dispatch(&mut self, _ctx: &mut SchedCtx) -> Option<Tag> {
        self.fifo.pop_front()
    }
    fn completed(&mut self, _tag: Tag, _rq: &Request, _ctx: &mut SchedCtx) {}
    fn timer(&mut self, _key: u16, _token: u32, _ctx: &mut SchedCtx) {}
    fn queued(&self) -> usize {
        self.fifo.len()
    }
    fn merges(&self) -> bool {
        true
    }
    fn requests_merged(&mut self, _kept: Tag, _kept_rq: &Request, gone: Tag) {
        // A queue served in order: `kept` keeps its own place (noop has no expiry).
        if let Some(i) = self.fifo.iter().position(|&t| t == gone) {
            self.fifo.remove(i);
        }
    }
}

/// A 4 KiB read of `process` at `offset`, for the schedulers' tests.
#[cfg(test)]
pub(crate) fn test_read(process: u32, offset: u64) -> Request {
    Request::new(crate::io::Op::Read, offset, 4096, process, 0, 0)
}
