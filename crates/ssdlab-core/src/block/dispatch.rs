//! blk-mq's dispatch for one device: a device behind its block queue. Bios enter the queue,
//! the queue is run (requests go to the device while it has free slots, the scheduler's
//! timers are armed), the device's events are handled and its completions taken back from
//! the queue. The host's block layer ([`super::layer::BlockLayer`]) keeps one per target and
//! an array keeps one per member: one dispatch path for both.

use super::iosched::{ArmedTimer, Scheduler};
use super::queue::{BlockQueue, QueueBio, QueueLimits};
use super::request::Request;
use crate::device::{BlockDevice, DeviceCtx};
use crate::engine::Time;
use crate::io::{BioId, Tag};

/// What a queued device needs of the layer that owns it, beyond what its device needs
/// ([`DeviceCtx`]: the clock, its own events, completions): a way to set the queue
/// scheduler's timers, as the owner's events.
pub trait DispatchCtx<E>: DeviceCtx<E> {
    fn arm(&mut self, timer: ArmedTimer);
}

/// A device behind its block queue.
pub struct QueuedDevice<D> {
    pub queue: BlockQueue,
    pub device: D,
    armed: Vec<ArmedTimer>,
}

impl<D: BlockDevice> QueuedDevice<D> {
    /// `device` behind a queue that holds at most `depth` of its requests at once (its own
    /// depth, or less), ticking at `hz`, run by `sched` with `limits`.
    pub fn new(device: D, depth: u32, hz: u32, sched: Scheduler, limits: QueueLimits) -> QueuedDevice<D> {
        QueuedDevice { queue: BlockQueue::with_limits(depth, hz, sched, limits), device, armed: Vec::new() }
    }

    /// The same, with its device transformed (to run a system of one kind of drive without
    /// dispatch between kinds).
    pub fn map_device<E>(self, f: impl FnOnce(D) -> E) -> QueuedDevice<E> {
        QueuedDevice { queue: self.queue, device: f(self.device), armed: self.armed }
    }

    /// Bio `b` enters the queue at `now`; nothing goes to the device until the queue is
    /// run. Returns how many device requests carry it.
    #[inline]
    pub fn enter(&mut self, b: QueueBio, now: Time) -> u32 {
        self.queue.submit(b, now)
    }

    /// Bios submitted under one plug enter the queue together at `now`.
    pub fn enter_plugged(&mut self, bios: &[QueueBio], now: Time) {
        self.queue.submit_plugged(bios, now);
    }

    /// A bio goes straight to the device when the queue allows it (blk-mq's direct issue:
    /// `none`, nothing waiting, a free slot), else enters the queue, which is then run. It
    /// rides one device request.
    #[inline]
    pub fn issue(&mut self, b: QueueBio, ctx: &mut impl DispatchCtx<D::Event>) {
        let now = ctx.now();
        if let Some(req) = self.queue.submit_direct(&b, now) {
            self.device.submit(req, ctx);
            return;
        }
        let parts = self.queue.submit(b, now);
        debug_assert_eq!(parts, 1, "queues do not split bios");
        self.run(ctx);
    }

    /// Run the queue: send requests while the device has free slots and the scheduler
    /// releases them, then set the timers the scheduler armed. A pass that could send
    /// nothing and arm nothing is not made.
    #[inline]
    pub fn run(&mut self, ctx: &mut impl DispatchCtx<D::Event>) {
        if self.queue.dispatches_nothing() {
            return;
        }
        let now = ctx.now();
        while let Some(req) = self.queue.next_for_device(now) {
            self.device.submit(req, ctx);
            if self.queue.dispatches_nothing() {
                break; // the pass that would find nothing is not made
            }
        }
        self.arm_timers(ctx);
    }

    /// Set the timers the scheduler has armed since they were last set (most calls find
    /// none: `none` never arms one).
    #[inline]
    pub fn arm_timers<E>(&mut self, ctx: &mut impl DispatchCtx<E>) {
        if self.queue.has_armed() {
            self.arm_taken(ctx);
        }
    }

    #[cold]
    #[inline(never)]
    fn arm_taken<E>(&mut self, ctx: &mut impl DispatchCtx<E>) {
        self.queue.take_armed(&mut self.armed);
        for t in self.armed.drain(..) {
            ctx.arm(t);
        }
    }

    /// The device handles one of its events.
    #[inline(always)]
    pub fn handle(&mut self, event: D::Event, ctx: &mut impl DispatchCtx<D::Event>) {
        self.device.handle(event, ctx);
    }

    /// One of the scheduler's timers fires at `now`: the scheduler acts on it. The owner
    /// then runs the queue (the timers it armed meanwhile are set with the run's, or before it
    /// by [`QueuedDevice::arm_timers`]).
    pub fn fire_timer(&mut self, key: u16, token: u32, now: Time) {
        self.queue.timer(key, token, now);
    }

    /// The device completed request `tag` at `now`; returns it. Its first bio is `host`;
    /// the bios merged into it are added to `bios` by [`QueuedDevice::merged_bios`]. Timers
    /// the scheduler armed on the completion are set by the next run (or
    /// [`QueuedDevice::arm_timers`]).
    #[inline]
    pub fn complete(&mut self, tag: Tag, now: Time) -> Request {
        self.queue.complete(tag, now)
    }

    /// The bios merged into `rq` after its first, in order.
    pub fn merged_bios(&mut self, rq: &Request, bios: &mut Vec<BioId>) {
        self.queue.take_merged(rq, bios);
    }
}
