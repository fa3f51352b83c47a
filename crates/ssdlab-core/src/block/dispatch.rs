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
use crate::io::{BioId, DeviceRequest, Tag};

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
    /// Requests that entered by direct issue ([`BlockQueue::submit_direct`]) and go to the
    /// device at the next run, ahead of anything the scheduler holds (which entered after
    /// them): the order and the time (the same event) at which a pass through `none` would
    /// have sent them.
    pending: Vec<DeviceRequest>,
}

impl<D: BlockDevice> QueuedDevice<D> {
    /// `device` behind a queue that holds at most `depth` of its requests at once (its own
    /// depth, or less), ticking at `hz`, run by `sched` with `limits`.
    pub fn new(device: D, depth: u32, hz: u32, sched: Scheduler, limits: QueueLimits) -> QueuedDevice<D> {
        QueuedDevice { queue: BlockQueue::with_limits(depth, hz, sched, limits), device, armed: Vec::new(), pending: Vec::new() }
    }

    /// The same, with its device transformed (to run a system of one kind of drive without
    /// dispatch between kinds).
    pub fn map_device<E>(self, f: impl FnOnce(D) -> E) -> QueuedDevice<E> {
        QueuedDevice { queue: self.queue, device: f(self.device), armed: self.armed, pending: self.pending }
    }

    /// Bio `b` enters the queue at `now`; nothing goes to the device until the queue is
    /// run. Returns how many device requests carry it. Under `none` with room in the device
    /// it skips the scheduler (direct issue) and waits for the run in `pending`.
    #[inline]
    pub fn enter(&mut self, b: QueueBio, now: Time) -> u32 {
        if let Some(req) = self.queue.submit_direct(&b, now) {
            self.pending.push(req);
            return 1;
        }
        self.queue.submit(b, now)
    }

    /// Whether a run would send nothing and arm nothing (and can be skipped).
    #[inline(always)]
    pub fn dispatches_nothing(&self) -> bool {
        self.pending.is_empty() && self.queue.dispatches_nothing()
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
        if !self.pending.is_empty() {
            for req in self.pending.drain(..) {
                self.device.submit(req, ctx);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::SchedulerConfig;
    use crate::device::ssd::{Ssd, SsdConfig, SsdEvent};
    use crate::io::Op;

    /// A context that keeps what the device schedules.
    struct Kept {
        now: Time,
        events: Vec<(Time, SsdEvent)>,
    }

    impl DeviceCtx<SsdEvent> for Kept {
        fn now(&self) -> Time {
            self.now
        }
        fn schedule(&mut self, at: Time, event: SsdEvent) {
            self.events.push((at, event));
        }
        fn complete(&mut self, _tag: Tag) {
            unreachable!("nothing completes here");
        }
    }

    impl DispatchCtx<SsdEvent> for Kept {
        fn arm(&mut self, _timer: ArmedTimer) {
            unreachable!("none arms no timer");
        }
    }

    fn commands(ctx: &Kept) -> Vec<Tag> {
        ctx.events.iter().filter_map(|e| match e.1 {
            SsdEvent::ControllerDone { tag } => Some(tag),
            _ => None,
        }).collect()
    }

    /// Under `none`, bios that find room in the device skip the scheduler but reach the
    /// device only when the queue runs, in the order they entered, ahead of those that found
    /// none and wait in the scheduler; a completion makes room for the next.
    #[test]
    fn direct_issue_waits_for_the_run_and_keeps_the_order_of_entry() {
        let ssd = Ssd::new(SsdConfig::generic(1), 1).unwrap();
        let mut d = QueuedDevice::new(ssd, 2, 250, SchedulerConfig::None.build(250, false), QueueLimits::default());
        let mut ctx = Kept { now: 100, events: Vec::new() };
        assert!(d.dispatches_nothing());
        for h in 0..3 {
            assert_eq!(d.enter(QueueBio::new(h, Op::Read, h as u64 * 8192, 4096, 0), 100), 1);
        }
        assert!(ctx.events.is_empty() && !d.dispatches_nothing(), "nothing reaches the device before the run");
        assert_eq!((d.queue.in_device(), d.queue.disk().snapshot(100).in_flight), (2, 3));
        d.run(&mut ctx);
        let first = commands(&ctx);
        assert_eq!(first.len(), 2, "the device takes two");
        let hosts: Vec<BioId> = first.iter().map(|&t| d.complete(t, 150).host).collect();
        assert_eq!(hosts, [0, 1]);
        assert!(!d.dispatches_nothing(), "the third waits in the scheduler");
        ctx.now = 150;
        d.run(&mut ctx);
        let all = commands(&ctx);
        assert_eq!(all.len(), 3);
        assert_eq!(d.complete(all[2], 200).host, 2);
        assert!(d.dispatches_nothing());
    }
}
