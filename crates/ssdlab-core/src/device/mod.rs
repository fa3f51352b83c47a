//! What a block device is to the layers above it: requests go in, completions come back.
//! The block layer's dispatch talks to any device through [`BlockDevice`]; an array
//! implements the same trait on top of member devices, each of which is a [`Drive`].

pub mod drive;
pub mod frontend;
pub mod hdd;
pub mod inplace;
pub mod ssd;
pub mod thermal;

pub use drive::{AnyDrive, DriveConfig, DriveEvent};

use crate::engine::Time;
use crate::io::{DeviceRequest, Op, Tag};
use crate::report::DeviceReport;

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
        // Field by field: `req` was just written to the stack field by field, and one wide
        // copy of it would wait on a failed store forwarding.
        let r = &mut self.0[idx];
        r.op = Some(req.op);
        r.offset = req.offset;
        r.len = req.len;
        r.outstanding = 0;
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

/// What a device holds only in volatile memory: host data it acknowledged that a power cut
/// now would lose (a write-back cache without power-loss protection, a host-side buffer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Volatile {
    /// Acknowledged bytes held only in volatile memory.
    pub bytes: u64,
    /// Of them, bytes a completed cache flush had covered: promised durable, and lost
    /// anyway (0 for a device that carries flushes out).
    pub promised_bytes: u64,
    /// Cache flushes acknowledged that covered data now lost.
    pub broken_flushes: u64,
}

/// A run of a device's address space whose acknowledged data a power cut now would lose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LostRange {
    /// Bytes from the device's start, and how many.
    pub offset: u64,
    pub len: u64,
    /// A completed cache flush had covered it: promised durable, and lost anyway.
    pub promised: bool,
}

/// `ranges` sorted by offset, with overlapping and touching runs of the same promise joined.
/// Where runs of different promises overlap, the one that starts first (promised, at the
/// same offset) keeps the overlap: each byte is listed once.
pub fn merge_lost(mut ranges: Vec<LostRange>) -> Vec<LostRange> {
    ranges.sort_unstable_by_key(|r| (r.offset, std::cmp::Reverse(r.promised)));
    let mut out: Vec<LostRange> = Vec::with_capacity(ranges.len());
    for r in ranges {
        let Some(last) = out.last_mut() else {
            out.push(r);
            continue;
        };
        let last_end = last.offset + last.len;
        if r.offset > last_end || (r.offset == last_end && r.promised != last.promised) {
            out.push(r);
        } else if r.promised == last.promised {
            last.len = last.len.max(r.offset + r.len - last.offset);
        } else if r.offset + r.len > last_end {
            // Overlapping runs of different promises: the part past the last run keeps its own.
            out.push(LostRange { offset: last_end, len: r.offset + r.len - last_end, promised: r.promised });
        }
    }
    out
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
    /// A run begins. The engine keeps no events from an earlier run, so the device forgets
    /// any it was waiting for. Returns the time its clock has reached (when its last work
    /// ends; 0 for a new device): the run starts there, and time stays continuous.
    fn begin_run(&mut self) -> Time;
    /// What a power cut now would lose (its own volatile memory; an array's or a layer's
    /// members answer for theirs in [`BlockDevice::member_volatile`]).
    fn volatile(&self) -> Volatile;
    /// The same, for the devices it is made of, by name.
    fn member_volatile(&self) -> Vec<(String, Volatile)> {
        Vec::new()
    }
    /// Where the data a power cut now would lose lies in this device's address space
    /// ([`merge_lost`]'s order), its members' losses included; None when the device cannot
    /// say (an array whose members hold volatile data).
    fn lost_ranges(&self) -> Option<Vec<LostRange>>;
    /// Byte runs `[offset, offset + len)` written before the run, in this order, without
    /// simulated time: what a benchmark writes before it measures (fio writes a job's files
    /// out first; a scenario's files laid out). A device that keeps no state of what it holds
    /// ignores them; an SSD maps them as a sequential write of them would.
    fn lay_out(&mut self, runs: &[(u64, u64)]) {
        let _ = runs;
    }
}

/// A physical drive (not an array): what an array's members are. Arrays do not implement it,
/// so an array of arrays cannot be built by accident.
pub trait Drive: BlockDevice {
    /// A flash drive's FTL (its mapping, blocks and wear), to carry its state between runs.
    fn ftl(&self) -> Option<&ssd::ftl::Ftl> {
        None
    }
    fn ftl_mut(&mut self) -> Option<&mut ssd::ftl::Ftl> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{merge_lost, LostRange};

    fn r(offset: u64, len: u64, promised: bool) -> LostRange {
        LostRange { offset, len, promised }
    }

    #[test]
    fn lost_runs_are_sorted_joined_and_each_byte_listed_once() {
        let merged = merge_lost(vec![r(8, 4, false), r(0, 4, false), r(4, 4, false), r(20, 4, true), r(22, 6, false), r(10, 4, false)]);
        assert_eq!(merged, vec![r(0, 14, false), r(20, 4, true), r(24, 4, false)]);
        // Touching runs of different promises stay apart; a run inside another adds nothing.
        assert_eq!(merge_lost(vec![r(0, 4, true), r(4, 4, false), r(1, 2, false)]), vec![r(0, 4, true), r(4, 4, false)]);
        let bytes = |v: &[LostRange]| v.iter().map(|x| x.len).sum::<u64>();
        assert_eq!(bytes(&merged), 28 - 6, "bytes 14..20 were never lost");
    }
}
