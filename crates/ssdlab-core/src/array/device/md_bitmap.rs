//! md's write-intent bitmap flow: a write sets its chunks' bits and waits for the next
//! bitmap update, which raid5d writes to every member before it handles more stripes.

use super::{Array, ArrayEvent, Stage, MD_THREAD_PROCESS, NO_UPPER};
use crate::array::bitmap::BITMAP_PAGE;
use crate::array::plan::MemberIo;
use crate::device::{DeviceCtx, Drive};
use crate::io::Op;

impl<D: Drive> Array<D> {
    /// md's write-intent bitmap: host write `s`, admitted, sets the bits of the chunks it
    /// writes and waits for the next bitmap update (raid5's `STRIPE_BIT_DELAY`), unless none
    /// is needed: no bit to write and no update under way. Returns whether it waits.
    pub(super) fn held_for_bitmap(&mut self, s: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) -> bool {
        let slot = &mut self.slots[s as usize];
        if slot.upper == NO_UPPER || slot.op != Some(Op::Write) || slot.writes.is_empty() || slot.bitmap_chunks.is_some() {
            return false;
        }
        let lo = slot.writes.iter().map(|w| w.offset).min().expect("checked");
        let hi = slot.writes.iter().map(|w| w.offset + w.len).max().expect("checked");
        let b = self.bitmap.as_mut().expect("checked");
        let chunks = b.chunks_of(lo, hi);
        slot.bitmap_chunks = Some(chunks);
        b.start_write(chunks, ctx.now());
        if !b.has_dirty() && !b.update_under_way() {
            return false;
        }
        slot.stage = Stage::Bitmap;
        self.bitmap_held.push_back((s, b.next_update()));
        self.report.bitmap_waits += 1;
        if !b.update_under_way() {
            self.start_bitmap_update(ctx);
        }
        true
    }

    /// raid5d writes the bitmap's dirty pages to every member that is not faulty, a
    /// replacement being rebuilt included (md-bitmap.c, `next_active_rdev`), and waits for
    /// them; with one stripe thread, no stripe is handled meanwhile. An update with nothing
    /// to write is over at once.
    pub(super) fn start_bitmap_update(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let pages = self.bitmap.as_mut().expect("an md bitmap").begin_update();
        let targets: Vec<u16> = (0..self.layout.n as u16).filter(|&r| self.health.present(r as u32)).collect();
        if pages.is_empty() || targets.is_empty() {
            self.bitmap_update_done(ctx);
            return;
        }
        let s = self.alloc();
        let slot = &mut self.slots[s as usize];
        slot.upper = NO_UPPER;
        slot.process = MD_THREAD_PROCESS;
        slot.op = Some(Op::Write);
        slot.len = pages.len() as u64 * BITMAP_PAGE * targets.len() as u64;
        slot.offset = self.bitmap_base;
        slot.epoch = self.health_epoch;
        slot.rows = None;
        slot.stripe_heads = 0;
        slot.handling_ns = 0;
        slot.stats = [0; 7];
        slot.bitmap_update = true;
        slot.writes.clear();
        for &page in &pages {
            for &role in &targets {
                let offset = self.bitmap_base + page * BITMAP_PAGE;
                slot.writes.push(MemberIo { member: role, op: Op::Write, offset, len: BITMAP_PAGE });
            }
        }
        self.report.bitmap_write_bytes += slot.len;
        self.raid5d_waits = self.handler.threads.len() == 1;
        let none = self.issue_stage::<true>(s, ctx);
        debug_assert!(!none, "an update with pages writes them");
    }

    /// A bitmap update is on the members: raid5d goes on with the stripes it held, the writes
    /// held for this update go, and those that came meanwhile get the next update.
    pub(super) fn bitmap_update_done(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let b = self.bitmap.as_mut().expect("an md bitmap");
        b.finish_update();
        let finished = b.finished();
        self.raid5d_waits = false;
        for s in std::mem::take(&mut self.handling_held) {
            self.handle_stripes(s, true, ctx);
        }
        while let Some(&(s, update)) = self.bitmap_held.front() {
            if update > finished {
                break;
            }
            self.bitmap_held.pop_front();
            // A member may have failed while it waited.
            self.refresh_holding(s);
            self.read(s, true, ctx);
        }
        if !self.bitmap_held.is_empty() && !self.bitmap.as_ref().expect("checked").update_under_way() {
            self.start_bitmap_update(ctx);
        }
    }
}
