//! Admission: a request takes its rows (locked for reads, writes or a rebuild unit) and its
//! stripe heads in md's stripe cache, or waits for them; md's submitters sleep behind their
//! own waiting request and a write takes along the writes queued behind it that continue it;
//! what a finished request leaves in the stripe cache.

use std::collections::VecDeque;

use super::{Array, ArrayEvent, RowLock, Stage, NO_UPPER, ROW_WRITTEN};
use crate::array::layout::PAGE;
use crate::array::plan::plan;
use crate::array::stripe_cache::{request_heads, row_heads};
use crate::device::{DeviceCtx, Drive};
use crate::io::Op;

impl<D: Drive> Array<D> {
    /// Slot `s`, arriving now, takes its stripes: those that need stripes queue behind any
    /// request already waiting, first come first served.
    pub(super) fn take_stripes(&mut self, s: u32) -> bool {
        let slot = &self.slots[s as usize];
        let needs_stripes = slot.rows.is_some() || slot.stripe_heads > 0;
        (!needs_stripes || self.waiting.is_empty()) && self.admit(s)
    }

    /// The process submitting slot `s` is asleep behind an earlier request of its own.
    pub(super) fn is_blocked(&self, s: u32) -> bool {
        self.handler.submitter_blocks && !self.blocked.is_empty() && self.blocked.contains_key(&self.process_of(s))
    }

    /// Slot `s` cannot start yet: it waits for its stripes, or (when submitters block)
    /// behind its process's request that does.
    pub(super) fn wait(&mut self, s: u32) {
        self.slots[s as usize].stage = Stage::Waiting;
        if self.handler.submitter_blocks {
            let process = self.process_of(s);
            if let Some(behind) = self.blocked.get_mut(&process) {
                behind.push_back(s);
                return;
            }
            self.blocked.insert(process, VecDeque::new());
        }
        self.waiting.push_back(s);
    }

    /// `process`'s waiting request has started: the process wakes and submits the requests
    /// it holds, until one of them must wait in turn.
    pub(super) fn wake(&mut self, process: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if !self.handler.submitter_blocks {
            return;
        }
        loop {
            let Some(behind) = self.blocked.get_mut(&process) else { return };
            let Some(s) = behind.pop_front() else {
                self.blocked.remove(&process);
                return;
            };
            self.refresh(s);
            let joined = self.waiting.is_empty() && self.join_writes(s);
            if !self.take_stripes(s) {
                debug_assert!(!joined, "a write took along writes it could not start with");
                // Still blocked: this one now waits for its stripes.
                self.waiting.push_back(s);
                self.report.stripe_waits += 1;
                return;
            }
            self.read(s, true, ctx);
        }
    }

    /// md: host write `s`, about to take its stripes, takes along the writes its process
    /// queued behind it that continue it, as far as the stripe heads and rows of them all
    /// are free now. md adds a later write's pages to stripe heads still waiting to be
    /// handled (`add_stripe_bio`: only pages another write already claimed make the
    /// submitter wait), so sequential writes in flight together are handled together, and
    /// rows they cover whole are written without reads. md takes further stripe heads one at
    /// a time as they come free; a slot takes all of its own at once, so a write takes along
    /// only what can start with it, never making itself wait longer. The writes taken along
    /// complete with `s`, as a bio completes when the last of its stripe heads is written.
    /// Returns whether it took any.
    pub(super) fn join_writes(&mut self, s: u32) -> bool {
        let slot = &self.slots[s as usize];
        if !self.handler.submitter_blocks || self.layout.level.parity_count() == 0 || slot.upper == NO_UPPER || slot.op != Some(Op::Write) {
            return false;
        }
        let Some(behind) = self.blocked.get(&slot.process) else { return false };
        if behind.is_empty() || !self.free_now(slot.stripe_heads, slot.rows, RowLock::Write) {
            return false;
        }
        let (offset, mut end) = (slot.offset, slot.offset + slot.len);
        let mut taken = 0;
        for &t in behind {
            let next = &self.slots[t as usize];
            if next.op != Some(Op::Write) || next.offset != end || next.upper == NO_UPPER {
                break;
            }
            let joined_end = end + next.len;
            plan(&self.layout, &self.health, Op::Write, offset, joined_end - offset, |_| 0, false, &mut self.plan);
            if !self.free_now(self.plan.stripe_heads, self.plan.rows, RowLock::Write) {
                break;
            }
            end = joined_end;
            taken += 1;
        }
        if taken == 0 {
            return false;
        }
        let behind = self.blocked.get_mut(&self.slots[s as usize].process).expect("checked");
        let joined: Vec<u32> = behind.drain(..taken).collect();
        for &t in &joined {
            self.slots[t as usize].stage = Stage::Joined;
        }
        let slot = &mut self.slots[s as usize];
        slot.joined.extend(joined);
        slot.len = end - offset;
        self.report.joined_writes += taken as u64;
        self.prepare(s, Op::Write, offset, end - offset);
        true
    }

    /// A write taken along by another (`join_writes`) is done with it: it was planned but
    /// never took rows or stripe heads of its own.
    pub(super) fn finish_joined(&mut self, t: u32, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let slot = &mut self.slots[t as usize];
        debug_assert_eq!(slot.stage, Stage::Joined);
        slot.stage = Stage::Free;
        slot.op = None;
        slot.rows = None;
        slot.stripe_heads = 0;
        slot.reads.clear();
        slot.writes.clear();
        self.host_activity.leave(ctx.now());
        ctx.complete(slot.upper);
        self.free.push(t);
    }

    /// Take slot `s`'s stripe locks and stripe heads if they are free.
    #[inline(always)]
    pub(super) fn admit(&mut self, s: u32) -> bool {
        let slot = &self.slots[s as usize];
        if slot.stripe_heads == 0 && slot.rows.is_none() {
            return true;
        }
        let lock = self.row_lock(s);
        let heads = slot.stripe_heads;
        if !self.free_now(heads, slot.rows, lock) {
            // md gets its stripe heads before it looks at the stripes' other users.
            if self.heads.tried(heads) {
                self.report.stripe_cache_grown += 1;
                if let Some(cache) = self.stripe_cache.as_mut() {
                    // The added head keeps its pages after its work, as the others do.
                    cache.set_capacity(self.heads.capacity() as usize);
                }
            }
            return false;
        }
        self.heads.take(heads);
        if let Some((first, last)) = slot.rows {
            for r in first..=last {
                match lock {
                    RowLock::Rebuild => {
                        self.rebuild_rows.insert(r);
                    }
                    RowLock::Read => *self.locked_rows.entry(r).or_insert(0) += 1,
                    RowLock::Write => {
                        self.locked_rows.insert(r, ROW_WRITTEN);
                    }
                }
            }
        }
        true
    }

    /// Whether `heads` stripe heads and `rows`, locked as `lock`, are free now (md's stripe
    /// heads by `raid5_get_active_stripe`'s rule: see `HeadPool`).
    pub(super) fn free_now(&self, heads: u64, rows: Option<(u64, u64)>, lock: RowLock) -> bool {
        self.heads.fits(heads)
            && rows.is_none_or(|(first, last)| (first..=last).all(|r| self.row_free(r, lock)))
    }

    /// How slot `s` holds its rows: reads (a degraded read reconstructing from the
    /// survivors) exclude only writes, as a rebuild unit does; a write excludes all.
    pub(super) fn row_lock(&self, s: u32) -> RowLock {
        let slot = &self.slots[s as usize];
        if slot.rebuild {
            RowLock::Rebuild
        } else if slot.op == Some(Op::Read) {
            RowLock::Read
        } else {
            RowLock::Write
        }
    }

    pub(super) fn row_free(&self, r: u64, lock: RowLock) -> bool {
        let host = self.locked_rows.get(&r).copied();
        match lock {
            RowLock::Read | RowLock::Rebuild => host != Some(ROW_WRITTEN),
            RowLock::Write => host.is_none() && !self.rebuild_rows.contains(&r),
        }
    }

    /// Slot `s` is done with its host rows.
    pub(super) fn unlock_rows(&mut self, (first, last): (u64, u64)) {
        for r in first..=last {
            let readers = self.locked_rows.get_mut(&r).expect("a locked row");
            if *readers == ROW_WRITTEN || *readers == 1 {
                self.locked_rows.remove(&r);
            } else {
                *readers -= 1;
            }
        }
    }

    /// Start the waiting requests whose stripes are now free, oldest first.
    ///
    /// Stripe heads go first come, first served: once a request whose rows are free waits for
    /// stripe heads, later ones needing stripe heads wait behind it. A request waiting for a
    /// locked row does not hold up the others. When submitters block, a request that starts
    /// wakes its process, whose held-back requests follow.
    pub(super) fn admit_waiting(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let mut i = 0;
        let mut heads_taken = false;
        // Rows a waiting write wants: reads behind it do not take them, or reads that keep
        // overlapping would keep a row shared and the write waiting for ever.
        self.rows_wanted.clear();
        while i < self.waiting.len() {
            let s = self.waiting[i];
            self.refresh(s);
            let needs_heads = self.slots[s as usize].stripe_heads > 0;
            let rows = self.slots[s as usize].rows;
            let write = self.row_lock(s) == RowLock::Write;
            let behind_write = !write
                && rows.is_some_and(|(a, b)| self.rows_wanted.iter().any(|&(c, d)| a <= d && c <= b));
            let held_back = behind_write || (heads_taken && needs_heads);
            let joined = !held_back && self.join_writes(s);
            let rows = self.slots[s as usize].rows;
            if !held_back && self.admit(s) {
                self.waiting.remove(i);
                let process = self.process_of(s);
                if self.slots[s as usize].rebuild && self.handler.sync_wait_sleep_ns > 0 {
                    // md's sync thread got its stripe heads after a wait: it sleeps a jiffy
                    // holding them, then goes on (`raid5_sync_request`).
                    let until = ctx.now() + self.handler.sync_wait_sleep_ns;
                    self.rebuild.as_mut().expect("a rebuild unit without a rebuild").sleep_after_head_wait(until);
                    self.slots[s as usize].stage = Stage::SyncSleep;
                    ctx.schedule(until, ArrayEvent::SyncSlept(s));
                    continue;
                }
                self.read(s, true, ctx);
                self.wake(process, ctx);
                continue;
            }
            debug_assert!(!joined, "a write took along writes it could not start with");
            let slot = &self.slots[s as usize];
            if needs_heads && !self.heads.fits(slot.stripe_heads) {
                heads_taken = true;
            }
            if let (true, Some(r)) = (write, rows) {
                self.rows_wanted.push(r);
            }
            i += 1;
        }
    }

    /// md: the stripe heads of host request `s` whose pages are all current in the stripe
    /// cache as it starts its reads (`handle_stripe` reads only pages not up to date).
    pub(super) fn find_cached_heads(&mut self, s: u32) {
        let slot = &mut self.slots[s as usize];
        slot.cached_heads.clear();
        let Some(cache) = self.stripe_cache.as_ref() else { return };
        let planned_heads = slot.stats[0];
        if slot.rebuild || cache.is_empty() || slot.reads.is_empty() || planned_heads == 0 || !matches!(slot.op, Some(Op::Read | Op::Write)) {
            return;
        }
        request_heads(&self.layout, slot.offset, slot.len, &mut self.heads_scratch);
        slot.cached_heads.extend(self.heads_scratch.iter().copied().filter(|&k| cache.has(k)));
        if !slot.cached_heads.is_empty() {
            // Only heads it would read for count: a whole row it writes reads nothing anyway.
            let reads = &slot.reads;
            slot.cached_heads.retain(|&k| reads.iter().any(|io| io.offset / PAGE <= k && k < (io.offset + io.len).div_ceil(PAGE)));
        }
    }

    /// md: what a finished request leaves in the stripe cache. A rebuild unit leaves its
    /// heads whole; so does a write that read nothing or reconstructed its heads, and any
    /// head a request found whole. A read-modify-write leaves other data of the heads it read
    /// unread, and a discard drops what it touches.
    pub(super) fn update_stripe_cache(&mut self, s: u32, op: Op, rebuild: bool, rows: Option<(u64, u64)>) {
        let Some(cache) = self.stripe_cache.as_mut() else { return };
        let slot = &self.slots[s as usize];
        let keys = &mut self.heads_scratch;
        if rebuild {
            let (first, last) = rows.expect("a rebuild unit locks its rows");
            row_heads(&self.layout, first, last, keys);
            cache.keep(keys);
            return;
        }
        if slot.upper == NO_UPPER || !(op == Op::Write || op == Op::Trim || !slot.cached_heads.is_empty()) {
            return;
        }
        if op == Op::Read {
            cache.keep(&slot.cached_heads);
            return;
        }
        let drop = op == Op::Trim || slot.stats[1] > 0;
        if drop && cache.is_empty() {
            return;
        }
        request_heads(&self.layout, slot.offset, slot.len, keys);
        if drop {
            // Heads found whole stay whole through a read-modify-write of other heads.
            let cached = &slot.cached_heads;
            keys.retain(|k| op == Op::Trim || cached.binary_search(k).is_err());
            cache.drop_heads(keys);
            if op == Op::Write {
                cache.keep(cached);
            }
        } else {
            cache.keep(keys);
        }
    }
}
