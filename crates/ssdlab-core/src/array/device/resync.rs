//! Driving a rebuild: replacements put in the failed roles, rebuild units issued as the
//! engine's rebuild allows (md's speed limits and idle check), rows in sync as the rebuilt
//! front passes them, passes restarted by later failures.

use super::{Array, ArrayEvent, NO_UPPER};
use crate::array::rebuild::{Next, Rebuild};
use crate::device::{DeviceCtx, Drive};
use crate::io::Op;
use crate::report::RebuildReport;

impl<D: Drive> Array<D> {
    /// Put free spares in the degraded roles' places and rebuild them all in one pass, as md
    /// recovers every spare at once. A pass under way is interrupted instead (md's
    /// `MD_RECOVERY_INTR` on a failure): once its units under way and the requests the
    /// failure caught are done, a new pass starts over its replacements and the new ones, each
    /// keeping the part already in sync.
    pub(super) fn start_next_rebuild(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if self.rebuild_stopped || self.spares.is_empty() || self.degraded_roles.is_empty() {
            return;
        }
        if self.rebuild.as_ref().is_some_and(|rb| !rb.idle() || self.barrier > 0) {
            self.rebuild_interrupted = true;
            return;
        }
        self.rebuild_interrupted = false;
        // Nothing of the old pass is under way, so its front has passed every row it locked.
        debug_assert!(self.rebuild_rows.is_empty(), "rows still locked by a pass with no unit under way");
        let mut targets: Vec<(u32, RebuildReport)> = match self.rebuild.take() {
            Some(rb) => rb.into_reports().map(|(role, r)| (role, RebuildReport { restarts: r.restarts + 1, ..r })).collect(),
            None => Vec::new(),
        };
        while !self.spares.is_empty() {
            let Some(role) = self.degraded_roles.pop_front() else { break };
            let failed = self.roles[role as usize];
            let spare = self.spares.pop_front().expect("checked");
            self.roles[role as usize] = spare;
            // The replacement takes writes from now on, ahead of its rebuild too.
            self.health.attach(role as u32);
            let (name, replaces) = (self.members[spare as usize].name.clone(), self.members[failed as usize].name.clone());
            targets.push((role as u32, RebuildReport::new(name, replaces, ctx.now())));
        }
        self.health_epoch += 1;
        let member_bytes = self.layout.rows * self.layout.chunk;
        self.rebuild = Some(Rebuild::new(
            targets,
            member_bytes,
            self.handler.rebuild_unit,
            self.handler.rebuild_depth,
            self.rebuild_limit,
            self.handler.throttle,
            ctx.now(),
        ));
        self.pump_rebuild(ctx);
    }

    /// Start rebuild units while the rebuild allows.
    pub(super) fn pump_rebuild(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        loop {
            let Some(rb) = self.rebuild.as_mut() else { return };
            if self.rebuild_stopped || self.barrier > 0 {
                return;
            }
            if self.rebuild_interrupted {
                if rb.idle() {
                    self.start_next_rebuild(ctx);
                }
                return;
            }
            match rb.next(ctx.now(), self.host_submitted) {
                Next::Issue(start, len) => {
                    let s = self.alloc();
                    let slot = &mut self.slots[s as usize];
                    slot.upper = NO_UPPER;
                    slot.op = Some(Op::Write);
                    slot.len = len;
                    slot.rebuild = true;
                    self.prepare(s, Op::Write, start, len);
                    // In turn with host requests waiting for stripes.
                    if self.is_blocked(s) || !self.take_stripes(s) {
                        self.wait(s);
                        continue;
                    }
                    self.read(s, true, ctx);
                }
                Next::SleepUntil(t) => {
                    ctx.schedule(t, ArrayEvent::RebuildWake);
                    return;
                }
                Next::Wait | Next::Done => return,
            }
        }
    }

    /// A rebuild unit's writes are done.
    pub(super) fn rebuild_unit_done(&mut self, rows: (u64, u64), ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let now = ctx.now();
        let rb = self.rebuild.as_mut().expect("a rebuild unit without a rebuild");
        let c = self.layout.chunk;
        let before = rb.front();
        if rb.unit_done(rows.0 * c, now) {
            // Rows below the front are current on every replacement: unlock them.
            for r in before / c..rb.front() / c {
                self.rebuild_rows.remove(&r);
            }
            let member_bytes = self.layout.rows * c;
            for role in rb.roles() {
                let synced = rb.in_sync(role);
                if synced > self.health.in_sync_below(role) {
                    self.health.set_in_sync_below(role, if synced >= member_bytes { u64::MAX } else { synced });
                }
            }
            self.health_epoch += 1;
            if !self.health.is_degraded() {
                if let Some(b) = self.bitmap.as_mut() {
                    b.array_whole(now);
                }
            }
            if !self.waiting.is_empty() {
                self.admit_waiting(ctx);
            }
        }
        if self.rebuild.as_ref().is_some_and(|r| r.finished()) {
            for (_, report) in self.rebuild.take().expect("checked").into_reports() {
                if let Some(earlier) = self.report.rebuild.replace(report) {
                    self.report.earlier_rebuilds.push(earlier);
                }
            }
            self.start_next_rebuild(ctx);
        } else {
            self.pump_rebuild(ctx);
        }
    }

    /// Whether the rebuild under way is done; None: no rebuild started.
    pub fn rebuild_done(&self) -> Option<bool> {
        // A lost role waiting for its rebuild, or a failure still to come, with a spare for it.
        let more = (!self.degraded_roles.is_empty() || self.failures_pending > 0)
            && !self.spares.is_empty()
            && !self.rebuild_stopped;
        match (&self.rebuild, &self.report.rebuild) {
            (Some(_), _) => Some(false),
            (None, Some(_)) => Some(!more),
            (None, None) if more => Some(false),
            (None, None) => None,
        }
    }

    /// The rebuild's bytes in sync and its target (the one under way, else the last one);
    /// None: no rebuild started.
    pub fn rebuild_progress(&self) -> Option<(u64, u64)> {
        let r = self.rebuild.as_ref().map(|r| r.report()).or(self.report.rebuild.as_ref())?;
        Some((r.done_bytes, r.target_bytes))
    }
}
