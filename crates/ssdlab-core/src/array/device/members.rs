//! The members: each a drive behind its own block queue, fed through the block layer's one
//! dispatch path ([`QueuedDevice`]); their events travel as the array's, their completions
//! come back to the request slots that asked for them.

use super::{Array, ArrayEvent};
use crate::array::plan::MemberIo;
use crate::block::{DispatchCtx, QueueBio, QueuedDevice};
use crate::block::iosched::ArmedTimer;
use crate::device::{DeviceCtx, Drive};
use crate::engine::Time;
use crate::io::{BioId, Tag};
use crate::report::DeviceResult;

/// A member (or spare) drive behind its block queue, with its name as iostat shows it.
pub(super) struct Member<D> {
    pub(super) name: String,
    pub(super) dev: QueuedDevice<D>,
}

/// A member's context: its events and its queue's timers travel as the array's events, its
/// completions are collected for the array to handle.
pub(super) struct MemberCtx<'a, C> {
    pub(super) ctx: &'a mut C,
    pub(super) member: u16,
    pub(super) done: &'a mut Vec<(u16, Tag)>,
}

impl<E, C: DeviceCtx<ArrayEvent<E>>> DeviceCtx<E> for MemberCtx<'_, C> {
    #[inline]
    fn now(&self) -> Time {
        self.ctx.now()
    }
    #[inline(always)]
    fn schedule(&mut self, at: Time, event: E) {
        self.ctx.schedule(at, ArrayEvent::Member(self.member, event));
    }
    #[inline(always)]
    fn complete(&mut self, tag: Tag) {
        self.done.push((self.member, tag));
    }
}

impl<E, C: DeviceCtx<ArrayEvent<E>>> DispatchCtx<E> for MemberCtx<'_, C> {
    fn arm(&mut self, t: ArmedTimer) {
        self.ctx.schedule(t.at, ArrayEvent::Timer { member: self.member, key: t.key, token: t.token });
    }
}

impl<D: Drive> Array<D> {
    /// Queue one member I/O for slot `s` (its bio carries the slot's number) and let the
    /// member take what it can.
    #[inline(always)]
    pub(super) fn issue(&mut self, s: u32, io: &MemberIo, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let m = self.roles[io.member as usize];
        let process = self.process_of(s);
        let sync = !self.slots[s as usize].background;
        let bio: BioId = s;
        let member = &mut self.members[m as usize];
        let b = QueueBio { host: bio, op: io.op, offset: io.offset, len: io.len, process, sync };
        member.dev.issue(b, &mut MemberCtx { ctx, member: m, done: &mut self.done });
    }

    /// Run member `m`'s queue: its requests go while it has room.
    #[inline]
    pub(super) fn feed(&mut self, m: u16, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        self.members[m as usize].dev.run(&mut MemberCtx { ctx, member: m, done: &mut self.done });
    }

    /// Member `m` handles one of its events.
    #[inline(always)]
    pub(super) fn member_event(&mut self, m: u16, e: D::Event, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        self.members[m as usize].dev.handle(e, &mut MemberCtx { ctx, member: m, done: &mut self.done });
    }

    /// A timer of member `m`'s scheduler fires: the scheduler acts on it and the queue runs.
    pub(super) fn member_timer(&mut self, m: u16, key: u16, token: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        self.members[m as usize].dev.fire_timer(key, token, ctx.now());
        self.feed(m, ctx);
    }

    /// Handle the member completions collected so far (most events complete nothing).
    #[inline(always)]
    pub(super) fn drain(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if !self.done.is_empty() {
            self.drain_done(ctx);
        }
    }

    #[inline(never)]
    fn drain_done(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let mut i = 0;
        while i < self.done.len() {
            let (m, tag) = self.done[i];
            i += 1;
            self.member_done(m, tag, ctx);
        }
        self.done.clear();
    }

    /// Member `m` completed its request `tag`: each slot whose bio it carried has one member
    /// I/O less to wait for; then the member's queue runs.
    fn member_done(&mut self, m: u16, tag: Tag, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let rq = self.members[m as usize].dev.complete(tag, ctx.now());
        if !rq.is_merged() {
            // One bio, one slot: the common case, without the list below.
            self.slot_io_done(rq.host, ctx);
            self.feed(m, ctx);
            return;
        }
        let mut bios = std::mem::take(&mut self.bios_buf);
        bios.push(rq.host);
        self.members[m as usize].dev.merged_bios(&rq, &mut bios);
        for &s in &bios {
            self.slot_io_done(s, ctx);
        }
        bios.clear();
        self.bios_buf = bios;
        self.feed(m, ctx);
    }

    /// Its members' (and spares') results, as of `at`.
    pub fn member_results(&self, at: Time) -> Vec<DeviceResult> {
        self.members
            .iter()
            .map(|m| DeviceResult {
                name: m.name.clone(),
                capacity_bytes: m.dev.device.capacity(),
                scheduler: m.dev.queue.scheduler(),
                disk: m.dev.queue.disk().snapshot(at),
                internal: m.dev.device.internal_report(at),
                members: Vec::new(),
            })
            .collect()
    }
}
