//! The host's block layer: one queued device per target ([`QueuedDevice`]), the bios the
//! layer above sends (their way into a queue: the scheduler's CPU time under the queue's
//! lock, plugs), and completions back up.
//!
//! The layer above (the job runner today) submits through [`Submit`] and hears of its bios
//! through [`Upper`]; it knows nothing of queues or devices. The block layer owns the devices
//! and handles their events: a completion frees its request, tells the layer above of every
//! bio it finished, runs the queue, and lets the processes it woke go on, in that order.

use super::dispatch::{DispatchCtx, QueuedDevice};
use super::iosched::ArmedTimer;
use super::queue::{QueueBio, QueueLimits};
use super::SchedulerConfig;
use crate::device::{BlockDevice, DeviceCtx};
use crate::engine::{EventQueue, Time};
use crate::io::{BioId, FileIo, Op, Tag};
use crate::metrics::diskstats::DiskCounters;

/// The most I/Os one submission sends without a plug: io_submit (AIO_PLUG_THRESHOLD) and
/// io_uring (`need_plug = max_ios > 2`) plug only larger batches.
const PLUG_THRESHOLD: usize = 2;

/// The block layer's own events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockEvent {
    /// A bio reaches the block layer (its submitting thread has done its part).
    Arrive(BioId),
    /// The scheduler's code has run for a bio: it enters the queue.
    Enter(BioId),
    /// An I/O scheduler's timer on device `dev`'s queue.
    SchedTimer { dev: u16, key: u16, token: u32 },
    /// A batch of bios submitted under one plug reaches the block layer (`through`: the
    /// scheduler's code has run for it).
    Unplug { plug: u32, through: bool },
}

/// An event of device `.0` (its index among the block layer's devices).
#[derive(Clone, Copy, Debug)]
pub struct DeviceEvent<DE>(pub u16, pub DE);

/// A bio as the layer above hands it over: its number (the upper layer's, unique among its
/// bios in flight), the device it is for, and what it asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bio {
    pub id: BioId,
    pub target: u32,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    /// The process submitting it (schedulers may queue per process).
    pub process: u32,
    /// REQ_SYNC: its submitter waits for it (reads, direct I/O, an fsync's writeback in
    /// today's kernels); false for writeback sent in the background. CFQ queues the two
    /// apart ([`crate::block::iosched::cfq`]).
    pub sync: bool,
}

impl Bio {
    /// The bio as its device's queue takes it, under the block layer's number `host`.
    #[inline(always)]
    fn in_queue(&self, host: BioId) -> QueueBio {
        QueueBio { host, op: self.op, offset: self.offset, len: self.len, process: self.process, sync: self.sync }
    }
}

/// What the layer above the block layer is told when its bios are done.
pub trait BioDone<E> {
    /// `bio` is done (every device request carrying it has completed) at the clock's now.
    /// Returns whom it wakes, if anyone.
    fn bio_done(&mut self, bio: &Bio, events: &mut EventQueue<E>) -> Option<u32>;
}

/// The layer above the block layer: it hears of its bios, and whom a completion woke then
/// goes on and may submit more (through `lower`, the layer it submits to).
pub trait Upper<L, E>: BioDone<E> {
    /// `waiter`, woken by completions, goes on.
    fn resume(&mut self, waiter: u32, lower: &mut L, events: &mut EventQueue<E>);
}

/// How the job runner (or a layer between it and the block layer) submits: the one interface
/// below it.
pub trait Submit<E> {
    /// `bio` reaches this layer at `at` (now, or later: when its submitting thread is done
    /// with it).
    fn submit(&mut self, bio: Bio, at: Time, events: &mut EventQueue<E>);
    /// `bio` joins the batch being prepared for one plug; returns the batch's size.
    fn plug(&mut self, bio: Bio) -> usize;
    /// The batch leaves its thread at `at`, under one plug.
    fn unplug(&mut self, at: Time, events: &mut EventQueue<E>);
    /// The submitter is done for now: what entered a queue meanwhile goes to the devices.
    fn flush(&mut self, events: &mut EventQueue<E>);
    /// A file operation reaches this layer at `at` (only a file layer takes them).
    fn submit_file(&mut self, io: FileIo, at: Time, events: &mut EventQueue<E>);
}

/// A bio in the block layer, and the device requests still carrying part of it.
#[derive(Clone, Copy, Debug)]
struct BioState {
    bio: Bio,
    parts: u32,
}

/// A free entry of the bio table.
const NO_BIO: BioState = BioState { bio: Bio { id: 0, target: 0, op: Op::Flush, offset: 0, len: 0, process: 0, sync: true }, parts: 0 };

/// The context through which device `dev` schedules its events and its queue's timers, and
/// reports completions.
pub struct DevCtx<'a, E> {
    pub events: &'a mut EventQueue<E>,
    pub done: &'a mut Vec<Tag>,
    pub dev: u16,
}

impl<DE, E: From<DeviceEvent<DE>> + Copy> DeviceCtx<DE> for DevCtx<'_, E> {
    #[inline]
    fn now(&self) -> Time {
        self.events.now()
    }
    #[inline(always)]
    fn schedule(&mut self, at: Time, event: DE) {
        self.events.schedule(at, E::from(DeviceEvent(self.dev, event)));
    }
    #[inline]
    fn complete(&mut self, tag: Tag) {
        self.done.push(tag);
    }
}

impl<DE, E: From<DeviceEvent<DE>> + From<BlockEvent> + Copy> DispatchCtx<DE> for DevCtx<'_, E> {
    fn arm(&mut self, t: ArmedTimer) {
        let ev = BlockEvent::SchedTimer { dev: self.dev, key: t.key, token: t.token };
        self.events.schedule(t.at, E::from(ev));
    }
}

/// One target as the block layer gets it: the device, its queue's scheduler and settings.
pub struct TargetQueue<D> {
    pub device: D,
    pub scheduler: SchedulerConfig,
    pub limits: QueueLimits,
}

pub struct BlockLayer<D> {
    devs: Vec<QueuedDevice<D>>,
    bios: Vec<BioState>,
    /// Whether any queue's scheduler costs host CPU time (else bios enter without a check).
    sched_costs: bool,
    /// CPU time the schedulers' code took for each process's bios, ns.
    sched_cpu_ns: Vec<u64>,
    /// Batches of bios on their way to a queue under a plug, and the free slots among them;
    /// the batch being prepared.
    plugs: Vec<Vec<BioId>>,
    free_plugs: Vec<u32>,
    plug_buf: Vec<QueueBio>,
    preparing: Vec<BioId>,
    /// Devices whose queues took bios since the last flush.
    to_run: Vec<u32>,
    done_buf: Vec<Tag>,
    bios_buf: Vec<BioId>,
    woken_buf: Vec<u32>,
}

impl<D: BlockDevice> BlockLayer<D> {
    /// A queue in front of each target, in order; the kernel ticks at `hz`.
    pub fn new(targets: Vec<TargetQueue<D>>, hz: u32) -> BlockLayer<D> {
        let devs: Vec<QueuedDevice<D>> = targets
            .into_iter()
            .map(|t| {
                let (depth, rotational) = (t.device.queue_depth(), t.device.rotational());
                QueuedDevice::new(t.device, depth, hz, t.scheduler.build(hz, rotational), t.limits)
            })
            .collect();
        let sched_costs = devs.iter().any(|d| d.queue.sched_cpu_ns() > 0);
        BlockLayer {
            devs,
            bios: Vec::new(),
            sched_costs,
            sched_cpu_ns: Vec::new(),
            plugs: Vec::new(),
            free_plugs: Vec::new(),
            plug_buf: Vec::new(),
            preparing: Vec::new(),
            to_run: Vec::new(),
            done_buf: Vec::new(),
            bios_buf: Vec::new(),
            woken_buf: Vec::new(),
        }
    }

    /// Devices behind the layer.
    pub fn len(&self) -> usize {
        self.devs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.devs.is_empty()
    }

    pub fn device(&self, dev: usize) -> &D {
        &self.devs[dev].device
    }

    pub fn devices(&self) -> impl Iterator<Item = &D> {
        self.devs.iter().map(|d| &d.device)
    }

    pub fn devices_mut(&mut self) -> impl Iterator<Item = &mut D> {
        self.devs.iter_mut().map(|d| &mut d.device)
    }

    /// Hand each device `f` with its context (to schedule what it does on its own from the
    /// start of a run). A device must not complete a request there.
    pub fn with_each_device<E>(&mut self, events: &mut EventQueue<E>, mut f: impl FnMut(&mut D, &mut DevCtx<'_, E>)) {
        for (i, d) in self.devs.iter_mut().enumerate() {
            f(&mut d.device, &mut DevCtx { events: &mut *events, done: &mut self.done_buf, dev: i as u16 });
        }
        assert!(self.done_buf.is_empty(), "a device completed a request before any was submitted");
    }

    /// Device `dev`'s /proc/diskstats counters at `now`.
    pub fn disk_counters(&self, dev: usize, now: Time) -> DiskCounters {
        self.devs[dev].queue.disk().snapshot(now)
    }

    /// The I/O scheduler of device `dev`'s queue.
    pub fn scheduler(&self, dev: usize) -> &'static str {
        self.devs[dev].queue.scheduler()
    }

    /// Requests inside the devices, all together.
    pub fn in_devices(&self) -> u32 {
        self.devs.iter().map(|d| d.queue.in_device()).sum()
    }

    /// CPU time the schedulers' code took for `process`'s bios, ns.
    pub fn sched_cpu_ns(&self, process: u32) -> u64 {
        self.sched_cpu_ns.get(process as usize).copied().unwrap_or(0)
    }

    #[inline]
    fn charge_sched_cpu(&mut self, process: u32, ns: u64) {
        let p = process as usize;
        if p >= self.sched_cpu_ns.len() {
            self.sched_cpu_ns.resize(p + 1, 0);
        }
        self.sched_cpu_ns[p] += ns;
    }

    /// `bio` joins the batch being prepared for one plug; returns the batch's size.
    pub fn plug_bio(&mut self, bio: Bio) -> usize {
        self.record(&bio);
        self.preparing.push(bio.id);
        self.preparing.len()
    }

    #[inline]
    fn record(&mut self, bio: &Bio) {
        let i = bio.id as usize;
        if i >= self.bios.len() {
            self.bios.resize(i + 1, NO_BIO);
        }
        // Field by field, as `BlockQueue::new_request` fills a request: the bio was just
        // built on the stack, and one wide copy of it would wait on a failed store forwarding.
        let b = &mut self.bios[i];
        b.bio.id = bio.id;
        b.bio.target = bio.target;
        b.bio.op = bio.op;
        b.bio.offset = bio.offset;
        b.bio.len = bio.len;
        b.bio.process = bio.process;
        b.bio.sync = bio.sync;
        b.parts = 0;
    }

    /// Handle one of the block layer's own events.
    pub fn handle<E, U>(&mut self, ev: BlockEvent, events: &mut EventQueue<E>, upper: &mut U)
    where
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + Copy,
        U: Upper<BlockLayer<D>, E>,
    {
        match ev {
            BlockEvent::Arrive(id) => {
                if let Some(target) = self.arrive(id, events) {
                    self.run(target, events, upper);
                }
            }
            BlockEvent::Enter(id) => {
                let target = self.enter(id, events.now());
                self.run(target, events, upper);
            }
            BlockEvent::SchedTimer { dev, key, token } => {
                let now = events.now();
                let d = &mut self.devs[dev as usize];
                d.fire_timer(key, token, now);
                d.arm_timers(&mut DevCtx { events: &mut *events, done: &mut self.done_buf, dev });
                self.run(dev as u32, events, upper);
            }
            BlockEvent::Unplug { plug, through } => {
                if let Some(target) = self.unplug_now(plug, through, events) {
                    self.run(target, events, upper);
                }
            }
        }
    }

    /// Bio `id` reaches its device's block layer at now: it enters the queue once the
    /// scheduler's code has run for it (at once under `none`; else an event then). Returns
    /// the device if it entered now.
    #[inline]
    fn arrive<E: From<BlockEvent> + Copy>(&mut self, id: BioId, events: &mut EventQueue<E>) -> Option<u32> {
        let bio = self.bios[id as usize].bio;
        self.arrive_bio(&bio, events)
    }

    /// [`BlockLayer::arrive`] for `bio`, recorded in the table and passed along: read back
    /// from the table just after it was written, it would wait on a failed store forwarding.
    #[inline]
    fn arrive_bio<E: From<BlockEvent> + Copy>(&mut self, bio: &Bio, events: &mut EventQueue<E>) -> Option<u32> {
        let now = events.now();
        let id = bio.id;
        if !self.sched_costs {
            return Some(self.enter_bio(bio, now));
        }
        let Bio { target, process, .. } = *bio;
        let queue = &mut self.devs[target as usize].queue;
        let ready = queue.through_scheduler(now);
        let cpu = queue.sched_cpu_ns();
        self.charge_sched_cpu(process, cpu);
        if ready > now {
            events.schedule(ready, E::from(BlockEvent::Enter(id)));
            return None;
        }
        Some(self.enter_bio(bio, now))
    }

    /// Bio `id` enters its device's queue; returns the device.
    #[inline]
    fn enter(&mut self, id: BioId, now: Time) -> u32 {
        let b = self.bios[id as usize].bio;
        self.enter_bio(&b, now)
    }

    /// Bio `b`, recorded under its number, enters its device's queue; returns the device.
    #[inline]
    fn enter_bio(&mut self, b: &Bio, now: Time) -> u32 {
        let parts = self.devs[b.target as usize].enter(b.in_queue(b.id), now);
        self.bios[b.id as usize].parts = parts;
        b.target
    }

    /// Batch `plug` reaches its device's block layer at now. The scheduler's code runs for
    /// each of its bios in turn under the queue's lock; then (`through`) they enter the queue
    /// together. Returns the device if they entered now.
    fn unplug_now<E: From<BlockEvent> + Copy>(&mut self, plug: u32, through: bool, events: &mut EventQueue<E>) -> Option<u32> {
        let now = events.now();
        let (first, n) = (self.bios[self.plugs[plug as usize][0] as usize].bio, self.plugs[plug as usize].len());
        let queue = &mut self.devs[first.target as usize].queue;
        if !through && queue.sched_cpu_ns() > 0 {
            let mut ready = now;
            for _ in 0..n {
                ready = queue.through_scheduler(now);
            }
            let cpu = queue.sched_cpu_ns() * n as u64;
            self.charge_sched_cpu(first.process, cpu);
            if ready > now {
                events.schedule(ready, E::from(BlockEvent::Unplug { plug, through: true }));
                return None;
            }
        }
        let ids = &self.plugs[plug as usize];
        let dev = &mut self.devs[first.target as usize];
        if ids.len() <= PLUG_THRESHOLD {
            // Too few to plug: each goes in as a lone bio.
            for &id in ids {
                let b = self.bios[id as usize].bio;
                let parts = dev.enter(b.in_queue(id), now);
                self.bios[id as usize].parts = parts;
            }
        } else {
            let mut batch = std::mem::take(&mut self.plug_buf);
            batch.clear();
            for &id in ids {
                let b = &mut self.bios[id as usize];
                b.parts = 1;
                batch.push(b.bio.in_queue(id));
            }
            dev.enter_plugged(&batch, now);
            self.plug_buf = batch;
        }
        self.plugs[plug as usize].clear();
        self.free_plugs.push(plug);
        Some(first.target)
    }

    /// Run device `dev`'s queue: send its requests while the device has free slots.
    /// Completions the devices reported meanwhile are handled after it (none come from
    /// submitting: devices complete from their own events).
    fn run<E, U>(&mut self, dev: u32, events: &mut EventQueue<E>, upper: &mut U)
    where
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + Copy,
        U: Upper<BlockLayer<D>, E>,
    {
        self.devs[dev as usize].run(&mut DevCtx { events: &mut *events, done: &mut self.done_buf, dev: dev as u16 });
        self.complete_reported(dev, events, upper);
    }

    /// [`BlockLayer::run`], skipped without a call when the pass would send and arm nothing
    /// (`none` holding no request, as after most completions): it would report no
    /// completion either, since devices complete only from their own events.
    #[inline(always)]
    fn run_if_any<E, U>(&mut self, dev: u32, events: &mut EventQueue<E>, upper: &mut U)
    where
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + Copy,
        U: Upper<BlockLayer<D>, E>,
    {
        if self.devs[dev as usize].dispatches_nothing() && self.done_buf.is_empty() {
            return;
        }
        self.run(dev, events, upper);
    }

    /// Device `dev` handles one of its events; completions it reports are handled after it.
    #[inline(always)]
    pub fn device_event<E, U>(&mut self, dev: u16, ev: D::Event, events: &mut EventQueue<E>, upper: &mut U)
    where
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + Copy,
        U: Upper<BlockLayer<D>, E>,
    {
        self.devs[dev as usize].handle(ev, &mut DevCtx { events: &mut *events, done: &mut self.done_buf, dev });
        self.complete_reported(dev as u32, events, upper);
    }

    /// Handle the completions device `dev` reported into `done_buf` (most events report
    /// none). The buffer is taken while they are handled: handling one runs the queue.
    #[inline(always)]
    fn complete_reported<E, U>(&mut self, dev: u32, events: &mut EventQueue<E>, upper: &mut U)
    where
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + Copy,
        U: Upper<BlockLayer<D>, E>,
    {
        if self.done_buf.is_empty() {
            return;
        }
        let mut done = std::mem::take(&mut self.done_buf);
        for tag in done.drain(..) {
            self.complete(dev, tag, events, upper);
        }
        self.done_buf = done;
    }

    /// Device `dev` completed its request `tag`: the bios it carried are done once all their
    /// parts are. The layer above hears of each, the queue runs, then the processes woken go on.
    fn complete<E, U>(&mut self, dev: u32, tag: Tag, events: &mut EventQueue<E>, upper: &mut U)
    where
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + Copy,
        U: Upper<BlockLayer<D>, E>,
    {
        let now = events.now();
        let d = &mut self.devs[dev as usize];
        let rq = d.complete(tag, now);
        d.arm_timers(&mut DevCtx { events: &mut *events, done: &mut self.done_buf, dev: dev as u16 });
        if !rq.is_merged() {
            // One bio, one request: the common case, without the lists below.
            let woken = self.part_done(rq.host, events, upper);
            self.run_if_any(dev, events, upper);
            if let Some(w) = woken {
                upper.resume(w, self, events);
            }
            return;
        }
        let mut bios = std::mem::take(&mut self.bios_buf);
        bios.push(rq.host);
        self.devs[dev as usize].merged_bios(&rq, &mut bios);
        let mut woken = std::mem::take(&mut self.woken_buf);
        for &b in &bios {
            if let Some(w) = self.part_done(b, events, upper) {
                if !woken.contains(&w) {
                    woken.push(w);
                }
            }
        }
        bios.clear();
        self.bios_buf = bios;
        self.run(dev, events, upper);
        for &w in &woken {
            upper.resume(w, self, events);
        }
        woken.clear();
        self.woken_buf = woken;
    }

    /// A device request carrying part of bio `id` completed; when it was the last part, the
    /// layer above hears of it. Returns whom that wakes.
    #[inline]
    fn part_done<E, U>(&mut self, id: BioId, events: &mut EventQueue<E>, upper: &mut U) -> Option<u32>
    where
        U: Upper<BlockLayer<D>, E>,
    {
        let b = &mut self.bios[id as usize];
        b.parts -= 1;
        if b.parts > 0 {
            return None;
        }
        let bio = b.bio;
        upper.bio_done(&bio, events)
    }
}

impl<D: BlockDevice, E: From<BlockEvent> + From<DeviceEvent<D::Event>> + Copy> Submit<E> for BlockLayer<D> {
    #[inline]
    fn submit(&mut self, bio: Bio, at: Time, events: &mut EventQueue<E>) {
        self.record(&bio);
        if at == events.now() {
            // No thread time to wait for: into the block layer without an event.
            if let Some(target) = self.arrive_bio(&bio, events) {
                self.mark_to_run(target);
            }
        } else {
            events.schedule(at, E::from(BlockEvent::Arrive(bio.id)));
        }
    }

    #[cold]
    fn plug(&mut self, bio: Bio) -> usize {
        self.plug_bio(bio)
    }

    fn unplug(&mut self, at: Time, events: &mut EventQueue<E>) {
        if self.preparing.is_empty() {
            return;
        }
        let plug = match self.free_plugs.pop() {
            Some(p) => p,
            None => {
                self.plugs.push(Vec::new());
                (self.plugs.len() - 1) as u32
            }
        };
        std::mem::swap(&mut self.plugs[plug as usize], &mut self.preparing);
        if at == events.now() {
            if let Some(target) = self.unplug_now(plug, false, events) {
                self.mark_to_run(target);
            }
            return;
        }
        events.schedule(at, E::from(BlockEvent::Unplug { plug, through: false }));
    }

    #[inline]
    fn flush(&mut self, events: &mut EventQueue<E>) {
        if self.to_run.is_empty() {
            return;
        }
        let mut to_run = std::mem::take(&mut self.to_run);
        for &dev in &to_run {
            let d = &mut self.devs[dev as usize];
            d.run(&mut DevCtx { events: &mut *events, done: &mut self.done_buf, dev: dev as u16 });
            debug_assert!(self.done_buf.is_empty(), "a device completed a request inside submit");
        }
        to_run.clear();
        self.to_run = to_run;
    }

    fn submit_file(&mut self, io: FileIo, _at: Time, _events: &mut EventQueue<E>) {
        // The run puts a file layer above the block layer whenever a job works on files.
        unreachable!("file operation {io:?} reached the block layer: no file layer is in the stack")
    }
}

impl<D> BlockLayer<D> {
    #[inline]
    fn mark_to_run(&mut self, dev: u32) {
        if !self.to_run.contains(&dev) {
            self.to_run.push(dev);
        }
    }
}
