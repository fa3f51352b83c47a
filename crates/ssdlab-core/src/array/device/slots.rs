//! A request slot's way through the array: planned, admitted, its reads, its stripes
//! handled on a thread, its writes, and finished. Levels without parity skip straight to
//! reading or writing; a RAID 0 read inside one chunk skips planning altogether.

use super::{Array, ArrayEvent, Slot, Stage, NO_UPPER};
use crate::array::layout::RaidLevel;
use crate::array::plan::{plan, plan_rebuild, MemberIo};
use crate::array::share::REBUILD_PROCESS;
use crate::array::stripe_cache::skip_cached_pages;
use crate::device::{DeviceCtx, Drive};
use crate::io::Op;

impl<D: Drive> Array<D> {
    pub(super) fn alloc(&mut self) -> u32 {
        match self.free.pop() {
            Some(s) => {
                self.slots[s as usize].process = 0;
                self.slots[s as usize].background = false;
                s
            }
            None => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Plan request slot `s` and start it, or queue it behind the stripes it needs.
    pub(super) fn start(&mut self, s: u32, op: Op, offset: u64, len: u64, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if self.read_in_one_chunk(s, op, offset, len, ctx) {
            return;
        }
        self.prepare(s, op, offset, len);
        self.launch(s, false, ctx);
    }

    /// A RAID 0 read inside one chunk (most small random reads): one member read, nothing
    /// to lock or handle. The slot goes straight to its read stage, left as planning and
    /// launching it would leave it; returns false for any other request.
    #[inline(always)]
    pub(super) fn read_in_one_chunk(&mut self, s: u32, op: Op, offset: u64, len: u64, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) -> bool {
        let l = &self.layout;
        let (k, within) = l.chunk_of(offset);
        if op != Op::Read || l.level != RaidLevel::Raid0 || len == 0 || within + len > l.chunk || self.verify.is_some() {
            return false;
        }
        let (row, m) = l.stripe_chunk(k);
        let io = MemberIo { member: m as u16, op, offset: row * l.chunk + within, len };
        let slot = &mut self.slots[s as usize];
        debug_assert!(!slot.rebuild && !slot.destage && slot.reads.is_empty() && slot.writes.is_empty());
        slot.offset = offset;
        slot.epoch = self.health_epoch;
        slot.rows = None;
        slot.stripe_heads = 0;
        slot.handling_ns = 0;
        slot.stats = [0; 7];
        slot.stage = Stage::Reading;
        slot.pending = 1;
        self.issue(s, &io, ctx);
        true
    }

    /// Plan request slot `s` (its member I/O, stripes and handling time).
    pub(super) fn prepare(&mut self, s: u32, op: Op, offset: u64, len: u64) {
        let members = &self.members;
        let roles = &self.roles;
        let load = |m: u32| {
            let q = &members[roles[m as usize] as usize].dev.queue;
            q.in_device() + q.queued() as u32
        };
        if self.slots[s as usize].rebuild {
            let roles: Vec<u32> = self.rebuild.as_ref().expect("a rebuild unit without a rebuild").roles().collect();
            let (first, last) = (offset / self.layout.chunk, (offset + len - 1) / self.layout.chunk);
            plan_rebuild(&self.layout, &self.health, &roles, first, last, load, &mut self.plan);
        } else {
            plan(&self.layout, &self.health, op, offset, len, load, self.handler.cached_degraded_reads, &mut self.plan);
        }
        let slot = &mut self.slots[s as usize];
        slot.offset = offset;
        slot.epoch = self.health_epoch;
        self.stage(s);
        if self.slots[s as usize].destage {
            self.fill_strips(s);
        }
    }

    /// Give slot `s` the plan just made.
    pub(super) fn stage(&mut self, s: u32) {
        let p = &self.plan;
        let handling_ns = if p.stripe_heads > 0 || p.parity_bytes > 0 { self.handler.cost(p) } else { 0 };
        let slot = &mut self.slots[s as usize];
        std::mem::swap(&mut slot.reads, &mut self.plan.reads);
        std::mem::swap(&mut slot.writes, &mut self.plan.writes);
        slot.rows = self.plan.rows;
        slot.stripe_heads = self.plan.stripe_heads.min(self.handler.cache_size);
        slot.handling_ns = handling_ns;
        let p = &self.plan;
        slot.stats = [p.stripe_heads, p.rmw, p.rcw, p.full, p.parity_bytes, p.reconstructed_bytes, p.discard_dropped_bytes];
    }

    /// Re-plan waiting slot `s` if members' health changed since it was planned (a member
    /// failed, or a rebuild brought rows in sync).
    pub(super) fn refresh(&mut self, s: u32) {
        let slot = &self.slots[s as usize];
        if slot.epoch != self.health_epoch {
            let (op, offset, len) = (slot.op.expect("a request in work"), slot.offset, slot.len);
            self.prepare(s, op, offset, len);
        }
    }

    /// Admitted slot `s`, held before its reads (for md's bitmap update, or its sync thread's
    /// sleep), is planned again if a member failed meanwhile, keeping the rows and stripe heads
    /// it already holds (it locked those).
    pub(super) fn refresh_holding(&mut self, s: u32) {
        let (rows, heads) = (self.slots[s as usize].rows, self.slots[s as usize].stripe_heads);
        self.refresh(s);
        let slot = &mut self.slots[s as usize];
        (slot.rows, slot.stripe_heads) = (rows, heads);
    }

    /// Start planned slot `s`, or queue it behind the stripes it needs.
    pub(super) fn launch(&mut self, s: u32, in_event: bool, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        self.refresh(s);
        if self.is_blocked(s) {
            self.wait(s);
            return;
        }
        if !self.take_stripes(s) {
            self.wait(s);
            self.report.stripe_waits += 1;
            return;
        }
        self.read(s, in_event, ctx);
    }

    /// Issue slot `s`'s reads. `in_event`: called from an event rather than from `submit`
    /// (a request with nothing at all to do must not complete inside `submit`).
    pub(super) fn read(&mut self, s: u32, in_event: bool, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if self.bitmap.is_some() && self.held_for_bitmap(s, ctx) {
            return;
        }
        let [heads, rmw, rcw, full, parity, rebuilt, dropped] = self.slots[s as usize].stats;
        let r = &mut self.report;
        r.stripe_heads += heads;
        r.rmw_stripe_heads += rmw;
        r.rcw_stripe_heads += rcw;
        r.full_stripe_heads += full;
        r.parity_bytes += parity;
        r.reconstructed_bytes += rebuilt;
        r.discard_dropped_bytes += dropped;
        if self.verify.is_some() {
            self.verify_read_stage(s);
        }
        self.find_cached_heads(s);
        let slot = &mut self.slots[s as usize];
        if !slot.cached_heads.is_empty() {
            self.report.stripe_cache_hits += slot.cached_heads.len() as u64;
            skip_cached_pages(&mut slot.reads, &slot.cached_heads);
        }
        if self.issue_stage::<false>(s, ctx) {
            self.handle_stripes(s, in_event, ctx);
        }
    }

    /// Enter the reading (`WRITES` false) or writing stage and issue its member I/O; returns
    /// whether there was none, so that the stage is already over. (The stage is a constant so
    /// that each use compiles to its own loop.)
    #[inline(always)]
    pub(super) fn issue_stage<const WRITES: bool>(&mut self, s: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) -> bool {
        let slot = &mut self.slots[s as usize];
        slot.stage = if WRITES { Stage::Writing } else { Stage::Reading };
        let n = if WRITES { slot.writes.len() } else { slot.reads.len() };
        slot.pending = n as u32;
        for i in 0..n {
            let slot = &self.slots[s as usize];
            let io = if WRITES { slot.writes[i] } else { slot.reads[i] };
            self.issue(s, &io, ctx);
        }
        let slot = &mut self.slots[s as usize];
        if WRITES {
            slot.writes.clear()
        } else {
            slot.reads.clear()
        }
        slot.pending == 0
    }

    /// The reads are in: handle the stripes on a thread, then write.
    pub(super) fn handle_stripes(&mut self, s: u32, in_event: bool, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let slot = &mut self.slots[s as usize];
        slot.stage = Stage::Handling;
        if slot.handling_ns > 0 && self.raid5d_waits {
            // raid5d is waiting for a bitmap update's writes (`md_bitmap_unplug`).
            self.handling_held.push(s);
            return;
        }
        if slot.handling_ns > 0 || (!in_event && slot.writes.is_empty()) {
            let at = self.handler.threads.reserve(ctx.now(), slot.handling_ns);
            ctx.schedule(at, ArrayEvent::Handled(s));
        } else {
            self.write(s, ctx);
        }
    }

    pub(super) fn write(&mut self, s: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if self.verify.is_some() {
            self.verify_write_stage(s);
        }
        if self.issue_stage::<true>(s, ctx) {
            self.finish(s, ctx);
        }
    }

    /// One member I/O of slot `s` is done: the slot's stage ends with its last.
    #[inline]
    pub(super) fn slot_io_done(&mut self, s: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let slot = &mut self.slots[s as usize];
        slot.pending -= 1;
        if slot.pending == 0 {
            match slot.stage {
                // Nothing to handle and nothing to write (RAID 0/1/10 reads): done.
                Stage::Reading if slot.handling_ns == 0 && slot.writes.is_empty() => self.finish(s, ctx),
                Stage::Reading => self.handle_stripes(s, true, ctx),
                Stage::Writing => self.finish(s, ctx),
                stage => panic!("a member I/O completed for a request in stage {stage:?}"),
            }
        }
    }

    /// Slot `s` is done: release its stripes, report it, start requests that waited.
    pub(super) fn finish(&mut self, s: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let slot = &mut self.slots[s as usize];
        if slot.to_transfer {
            // A read through a hardware controller: its data now crosses the data path.
            slot.to_transfer = false;
            let at = self.controller.as_mut().expect("a controller").transfer(ctx.now(), slot.len);
            ctx.schedule(at, ArrayEvent::Accepted(s));
            return;
        }
        slot.stage = Stage::Free;
        let released = slot.rows.take();
        let rebuild = std::mem::take(&mut slot.rebuild);
        let destage = std::mem::take(&mut slot.destage);
        let barrier_lifted = std::mem::take(&mut slot.before_failure) && {
            self.barrier -= 1;
            self.barrier == 0
        };
        let op = slot.op.take().expect("a request in work has an operation");
        let bitmap_update = std::mem::take(&mut slot.bitmap_update);
        if self.stripe_cache.is_some() {
            self.update_stripe_cache(s, op, rebuild, released);
        }
        let slot = &mut self.slots[s as usize];
        slot.cached_heads.clear();
        if let Some(chunks) = slot.bitmap_chunks.take() {
            let degraded = self.health.is_degraded();
            self.bitmap.as_mut().expect("a write held bitmap chunks").end_write(chunks, ctx.now(), degraded);
        }
        let slot = &mut self.slots[s as usize];
        // Every slot that took stripe heads was admitted; the count is cleared so that a
        // slot reused without a plan (a write taken into a controller's cache) holds none.
        let heads_released = std::mem::take(&mut slot.stripe_heads);
        self.heads.release(heads_released);
        if let Some(rows) = released {
            if !rebuild {
                self.unlock_rows(rows);
            }
        }
        let slot = &mut self.slots[s as usize];
        if slot.upper != NO_UPPER {
            if op.index() < 2 {
                self.host_bytes[op.index()] += slot.len;
            }
            self.host_activity.leave(ctx.now());
            ctx.complete(slot.upper);
            if !slot.joined.is_empty() {
                let mut joined = std::mem::take(&mut slot.joined);
                for &t in &joined {
                    self.finish_joined(t, ctx);
                }
                // Keep the allocation for the slot's next use.
                joined.clear();
                self.slots[s as usize].joined = joined;
            }
        }
        let slot = &mut self.slots[s as usize];
        let len = if destage { slot.dirty.1 } else { slot.len };
        self.free.push(s);
        if rebuild {
            self.rebuild_unit_done(released.expect("a rebuild unit locks its rows"), ctx);
        }
        if destage {
            self.destage_done(len, ctx);
        }
        if bitmap_update {
            self.bitmap_update_done(ctx);
        }
        if barrier_lifted {
            self.pump_rebuild(ctx);
        }
        if (released.is_some() || heads_released > 0) && !self.waiting.is_empty() {
            self.admit_waiting(ctx);
        }
    }

    /// The process whose request slot `s` is (member schedulers and md's blocking go by it).
    #[inline]
    pub(super) fn process_of(&self, s: u32) -> u32 {
        let slot = &self.slots[s as usize];
        if slot.rebuild {
            REBUILD_PROCESS
        } else {
            slot.process
        }
    }
}
