//! A hardware RAID controller's path: host requests through its command processor and
//! battery-backed write-back cache, reads from the cache, destaging in its own units.

use super::{Array, ArrayEvent, Stage, NO_UPPER};
use crate::array::hwraid::{strip_destage, RmwUnit};
use crate::device::{DeviceCtx, Drive};
use crate::io::{DeviceRequest, Op};

impl<D: Drive> Array<D> {
    /// A hardware controller takes a host request: writes (and flushes) complete once in its
    /// battery-backed cache, reads of cached data come from it, other reads and discards go
    /// to the members behind its command and data path.
    pub(super) fn controller_submit(&mut self, s: u32, req: DeviceRequest, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let now = ctx.now();
        let c = self.controller.as_mut().expect("a controller");
        match req.op {
            Op::Write => {
                if !c.waiting.is_empty() || !c.has_room(req.len) {
                    c.write_waits += 1;
                    c.waiting.push_back((s, req.offset, req.len));
                    self.slots[s as usize].stage = Stage::Waiting;
                    return;
                }
                c.add(req.offset, req.len);
                let at = c.accept(now, req.len);
                self.slots[s as usize].stage = Stage::Handling;
                ctx.schedule(at, ArrayEvent::Accepted(s));
                self.pump_destage(ctx);
            }
            Op::Read if c.holds(req.offset, req.len) => {
                c.read_hits += 1;
                let at = c.accept(now, req.len);
                self.slots[s as usize].stage = Stage::Handling;
                ctx.schedule(at, ArrayEvent::Accepted(s));
            }
            Op::Flush => {
                // The cache is battery-backed: a flush has nothing to wait for.
                let at = c.command(now);
                self.slots[s as usize].stage = Stage::Handling;
                ctx.schedule(at, ArrayEvent::Accepted(s));
            }
            Op::Read | Op::Trim => {
                // The data crosses the controller once the members have read it (`finish`).
                self.slots[s as usize].to_transfer = req.op == Op::Read;
                self.prepare(s, req.op, req.offset, req.len);
                self.launch_after_controller(s, true, ctx);
            }
        }
    }

    /// Destage cached writes while the controller allows more at once.
    pub(super) fn pump_destage(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        loop {
            let Some(c) = self.controller.as_mut() else { return };
            if c.destaging >= c.config().destage_depth {
                return;
            }
            let Some((offset, len)) = c.next_destage() else { return };
            c.destaging += 1;
            let (at, span) = match c.config().rmw_unit {
                RmwUnit::Sector => (offset, len),
                RmwUnit::Strip => strip_destage(&self.layout, offset, len, &mut Vec::new()),
            };
            let s = self.alloc();
            let slot = &mut self.slots[s as usize];
            slot.upper = NO_UPPER;
            slot.op = Some(Op::Write);
            slot.len = span;
            slot.destage = true;
            slot.dirty = (offset, len);
            self.prepare(s, Op::Write, at, span);
            self.launch_after_controller(s, false, ctx);
        }
    }

    /// A destage finished: its cache space is free for the host writes waiting.
    pub(super) fn destage_done(&mut self, len: u64, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let now = ctx.now();
        let c = self.controller.as_mut().expect("a controller");
        c.destaged(len);
        while let Some(&(s, offset, wlen)) = c.waiting.front() {
            if !c.has_room(wlen) {
                break;
            }
            c.waiting.pop_front();
            c.add(offset, wlen);
            let at = c.accept(now, wlen);
            self.slots[s as usize].stage = Stage::Handling;
            ctx.schedule(at, ArrayEvent::Accepted(s));
        }
        self.pump_destage(ctx);
    }

    /// A hardware controller's processor takes time for each member command of planned slot
    /// `s` (and `host` more for the host's own): the slot starts when it has.
    pub(super) fn launch_after_controller(&mut self, s: u32, host: bool, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let slot = &self.slots[s as usize];
        let commands = (slot.reads.len() + slot.writes.len()) as u64;
        let c = self.controller.as_mut().expect("a controller");
        let at = c.commands(ctx.now(), host, commands);
        self.slots[s as usize].stage = Stage::Waiting;
        ctx.schedule(at, ArrayEvent::Launch(s));
    }

    /// A destage in whole strips first reads the clean bytes of its partly dirty strips
    /// (unless its plan reads them anyway, as read-modify-write does). A member without
    /// current data there is not read (a simplification: the controller would rebuild those
    /// bytes from the rest of the row).
    pub(super) fn fill_strips(&mut self, s: u32) {
        let Some(c) = self.controller.as_ref() else { return };
        if c.config().rmw_unit != RmwUnit::Strip {
            return;
        }
        let slot = &mut self.slots[s as usize];
        let (offset, len) = slot.dirty;
        let mut fills = Vec::new();
        strip_destage(&self.layout, offset, len, &mut fills);
        for f in fills {
            let read = slot.reads.iter().any(|r| r.member == f.member && r.offset <= f.offset && f.offset + f.len <= r.offset + r.len);
            if !read && self.health.ok(f.member as u32, f.offset, f.len) {
                slot.reads.push(f);
            }
        }
    }
}
