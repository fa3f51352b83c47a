//! The I/O-scheduler interface of a block queue, and its simplest scheduler, `none`.
//!
//! A scheduler is told of every request that enters the queue (`insert`), asked for the next
//! one whenever the device has a free slot (`dispatch`), told of completions, and may arm
//! timers (idling, expiry) through its context; a timer it no longer wants is cancelled with
//! the versioned [`Timer`](crate::engine::timer::Timer) it keeps, so a stale wake-up arrives
//! and is ignored. Each request names its process (the fio job that issued it), so schedulers
//! that keep per-process queues can.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::queue::Request;
use crate::device::Tag;
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
}

/// Which scheduler a block queue runs, as a system description names it.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerConfig {
    /// blk-mq's `none`: first come, first served.
    #[default]
    None,
}

impl SchedulerConfig {
    pub fn build(self) -> Scheduler {
        match self {
            SchedulerConfig::None => Scheduler::None(NoneScheduler::default()),
        }
    }
}

/// A block queue's scheduler: the built-in ones by value (their calls inline on the
/// per-request path), or any other implementation of the interface.
pub enum Scheduler {
    None(NoneScheduler),
    Custom(Box<dyn IoScheduler>),
}

macro_rules! each {
    ($s:expr, $x:ident => $e:expr) => {
        match $s {
            Scheduler::None($x) => $e,
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
}

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
}
