//! What a block device is to the layers above it: requests go in, completions come back.
//! The host block layer talks to any device through [`BlockDevice`]; arrays of devices can
//! implement the same trait on top of member devices.

pub mod drive;
pub mod frontend;
pub mod hdd;
pub mod inplace;
pub mod ssd;
pub mod thermal;

pub use drive::{DeviceConfig, Drive, DriveEvent};

use crate::engine::Time;
use serde::Serialize;

/// A device request's number, as the block layer gave it (an NCQ tag, an NVMe command id);
/// unique among the device's requests in flight. Host requests have their own numbers.
pub type Tag = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    Trim,
    Flush,
}

impl Op {
    /// Index used for per-direction tables: read 0, write 1, trim 2, flush 3.
    pub fn index(self) -> usize {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
            Op::Flush => 3,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceRequest {
    pub tag: Tag,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    /// The process whose I/O it is (an array passes it on to its members' schedulers).
    pub process: u32,
}

/// A request inside a device: what the host asked, and how many of its parts (page reads,
/// program units, media accesses) are still under way.
#[derive(Clone, Copy, Debug, Default)]
pub struct InDevice {
    pub op: Option<Op>,
    pub offset: u64,
    pub len: u64,
    pub outstanding: u32,
}

/// The requests inside a device, indexed by host tag (tags are small and reused).
#[derive(Clone, Debug, Default)]
pub struct RequestTable(Vec<InDevice>);

impl RequestTable {
    /// Record a request the device has just accepted.
    pub fn insert(&mut self, req: &DeviceRequest) {
        let idx = req.tag as usize;
        if idx >= self.0.len() {
            self.0.resize(idx + 1, InDevice::default());
        }
        self.0[idx] = InDevice { op: Some(req.op), offset: req.offset, len: req.len, outstanding: 0 };
    }
}

impl std::ops::Index<usize> for RequestTable {
    type Output = InDevice;
    fn index(&self, tag: usize) -> &InDevice {
        &self.0[tag]
    }
}

impl std::ops::IndexMut<usize> for RequestTable {
    fn index_mut(&mut self, tag: usize) -> &mut InDevice {
        &mut self.0[tag]
    }
}

/// What a device may do to the simulation while handling a request or one of its events.
pub trait DeviceCtx<E> {
    fn now(&self) -> Time;
    /// Schedule one of the device's own events.
    fn schedule(&mut self, at: Time, event: E);
    /// Report request `tag` complete at the current time. Exactly once per request.
    fn complete(&mut self, tag: Tag);
}

/// A context that wraps a device's own events into an enclosing event type (a drive kind's
/// into [`DriveEvent`], a target kind's into the target's), so that devices of several kinds
/// share one event queue.
pub(crate) struct Wrap<'a, C, F, O> {
    ctx: &'a mut C,
    wrap: F,
    _outer: std::marker::PhantomData<O>,
}

impl<'a, C, F, O> Wrap<'a, C, F, O> {
    #[inline]
    pub(crate) fn new(ctx: &'a mut C, wrap: F) -> Self {
        Wrap { ctx, wrap, _outer: std::marker::PhantomData }
    }
}

impl<E, O, C: DeviceCtx<O>, F: Fn(E) -> O> DeviceCtx<E> for Wrap<'_, C, F, O> {
    #[inline]
    fn now(&self) -> Time {
        self.ctx.now()
    }
    #[inline]
    fn schedule(&mut self, at: Time, event: E) {
        self.ctx.schedule(at, (self.wrap)(event));
    }
    #[inline]
    fn complete(&mut self, tag: Tag) {
        self.ctx.complete(tag);
    }
}

/// A device behind the host block layer.
pub trait BlockDevice {
    /// The device's internal events, carried by the engine's queue.
    type Event: Copy;

    /// Bytes addressable by the host.
    fn capacity(&self) -> u64;
    /// Requests the device accepts at once (NCQ 32, an NVMe queue's depth, …).
    fn queue_depth(&self) -> u32;
    /// Whether it is a spinning disk (the block queue's `rotational` flag, which some
    /// schedulers consult).
    fn rotational(&self) -> bool {
        false
    }
    /// Accept a request. Must not complete it synchronously: completion comes from an event.
    fn submit(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<Self::Event>);
    /// Handle one of the device's own events.
    fn handle(&mut self, event: Self::Event, ctx: &mut impl DeviceCtx<Self::Event>);
    /// What the host cannot see: internal utilisation, NAND traffic, wear, as of time `at`.
    fn internal_report(&self, at: Time) -> DeviceReport;
    /// The host is done at `now`: start no new background work from then on. The engine then goes on
    /// handling the device's events while [`BlockDevice::has_internal_work`], so a device
    /// used for another run loses none of the work it had under way.
    fn end_run(&mut self, now: Time);
    /// Work under way that no host request waits for (buffered data on its way to flash, GC
    /// owed).
    fn has_internal_work(&self) -> bool;
    /// The run's clock exists: schedule what the device does on its own from the start
    /// (an array's member failures). Called once per run, after [`BlockDevice::begin_run`].
    fn start_run(&mut self, _ctx: &mut impl DeviceCtx<Self::Event>) {}
    /// Whether the rebuild under way (an array's) is done; None: no rebuild started.
    fn rebuild_done(&self) -> Option<bool> {
        None
    }
    /// The rebuild's bytes in sync and its target (the one under way, else the last one);
    /// None: no rebuild started. For progress reports.
    fn rebuild_progress(&self) -> Option<(u64, u64)> {
        None
    }
    /// Why the run cannot go on: an array's failure that would have lost its data (it ends
    /// the run with this as its error). None for a device that cannot lose data that way.
    fn data_lost(&self) -> Option<String> {
        None
    }
    /// The results of the devices this one is made of (an array's members), as of `at`.
    fn member_results(&self, _at: Time) -> Vec<crate::sim::DeviceResult> {
        Vec::new()
    }
    /// A run begins. The engine keeps no events from an earlier run, so the device forgets
    /// any it was waiting for. Returns the time its clock has reached (when its last work
    /// ends; 0 for a new device): the run starts there, and time stays continuous.
    fn begin_run(&mut self) -> Time;
}

/// The kinds of device a system can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceKind {
    NandSsd,
    InPlace,
    Hdd,
    Array,
}

/// What a device reports that iostat cannot show: the part every device has (traffic, busy
/// time of its media and controller, temperature), plus its kind's own detail. For an
/// array, "media" is its members (bytes it asked of them) and "controller" its stripe
/// handling threads.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeviceReport {
    pub kind: DeviceKind,
    pub host_bytes_written: u64,
    pub host_bytes_read: u64,
    /// Bytes written to and read from the storage medium (NAND or in-place media).
    pub media_bytes_written: u64,
    pub media_bytes_read: u64,
    /// Busy time of the media dies summed, ns (divide by dies × elapsed for utilisation).
    pub die_busy_ns: u64,
    pub dies: u32,
    /// Busy ns per channel.
    pub channel_busy_ns: Vec<u64>,
    pub controller_busy_ns: u64,
    pub controller_cores: u32,
    /// Temperature and throttling, for drives with a thermal model.
    pub thermal: Option<thermal::ThermalReport>,
    /// A NAND SSD's flash translation layer, write buffer and wear.
    pub nand: Option<NandReport>,
    /// An array's stripe handling and member health (its members report on their own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<crate::array::ArrayReport>,
    /// A hard disk's head time by part and its cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hdd: Option<hdd::HddReport>,
}

impl DeviceReport {
    /// The NAND detail; for callers that know the device is a NAND SSD.
    pub fn nand(&self) -> &NandReport {
        self.nand.as_ref().expect("a NAND SSD's report")
    }
}

/// What only a NAND SSD has: GC, write amplification's parts, SLC cache, buffer and wear.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct NandReport {
    pub erase_count: u64,
    pub gc_runs: u64,
    pub gc_relocated_bytes: u64,
    pub rmw_reads: u64,
    pub buffer_read_hits: u64,
    /// IUs of host writes merged into an IU already waiting in the write buffer.
    pub buffer_merges: u64,
    pub write_buffer_bytes_used: u64,
    /// Of that, IUs not yet given a place on flash (not yet in `media_bytes_written`).
    pub write_buffer_unplaced_bytes: u64,
    pub free_blocks: u64,
    pub total_blocks: u64,
    pub max_block_erases: u32,
    /// Raw flash beyond the user capacity, as a fraction of it.
    pub over_provisioning: f64,
    /// Bytes of simulator memory holding the mapping tables.
    pub map_bytes: u64,
    /// SLC cache: capacity in blocks used in SLC mode, what it may grow to now (user bytes),
    /// host bytes that went to SLC, and bytes folded out of it into native blocks.
    pub slc_used_bytes: u64,
    pub slc_budget_bytes: u64,
    pub slc_host_bytes: u64,
    pub folded_bytes: u64,
    /// Wear: average erases per block and blocks moved by static wear levelling.
    pub mean_block_erases: f64,
    pub wear_level_moves: u64,
    /// Flash work the dies owe, summed (GC and folding decided but not yet carried out, and
    /// host programs queued behind it), ns.
    pub gc_owed_ns: u64,
}
