//! Member health: failures at their times (members failing together in one group), a spare
//! taking a failed member's role, and the failure that would lose the array's data.

use super::{Array, ArrayEvent, Stage};
use crate::device::{DeviceCtx, Drive};

impl<D: Drive> Array<D> {
    /// The member in role `role` fails, unless that loses the array's data: then the run is
    /// to end with that as its error (see [`Array::data_lost`]), and the member stays.
    pub(super) fn fail_or_lose(&mut self, role: u16, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        if self.data_lost.is_some() {
            return;
        }
        let member_bytes = self.layout.rows * self.layout.chunk;
        let out = |m: u32| m == role as u32 || self.health.in_sync_below(m) < member_bytes;
        let n = self.roles.len();
        if !self.level().loses_data(n, out) {
            self.fail(role);
            return;
        }
        let name = |r: usize| self.members[self.roles[r] as usize].name.as_str();
        // A role out of the array is either failed, or held by a replacement not yet rebuilt:
        // name the member it replaces too, as that is the one the user failed.
        let describe = |r: usize| {
            let replaces = self.rebuild.as_ref().and_then(|rb| {
                rb.roles().zip(rb.reports()).find(|&(t, _)| t == r as u32).map(|(_, rep)| rep.replaces.as_str())
            });
            match replaces {
                Some(old) if self.health.present(r as u32) => format!("{} (rebuilding in place of {old})", name(r)),
                _ => format!("{} (failed)", name(r)),
            }
        };
        let others: Vec<String> = (0..n).filter(|&m| m != role as usize && out(m as u32)).map(describe).collect();
        self.data_lost = Some(format!(
            "{} fails {:.3} s into the run while {} {} out of the array, and {} does not survive that: the array's data is lost",
            name(role as usize),
            (ctx.now() - self.run_start) as f64 / 1e9,
            others.join(", "),
            if others.len() == 1 { "is" } else { "are" },
            self.level().label(),
        ));
    }

    /// The member in role `role` fails: from now on nothing is read from or written to
    /// it. A free spare takes the role over and is rebuilt once every member failing at the
    /// same time has failed (`fail_group`).
    pub(super) fn fail(&mut self, role: u16) {
        let failed = self.roles[role as usize];
        self.health.fail(role as u32);
        self.health_epoch += 1;
        if let Some(v) = self.verify.as_mut() {
            v.data.fail(role as u32, 0xDEAD_BEEF ^ role as u64);
        }
        self.report.failed.push(self.members[failed as usize].name.clone());
        // Like md's resync barrier: the rebuild waits for the requests already under way,
        // planned for the old health, to finish.
        for slot in &mut self.slots {
            let under_way = matches!(slot.stage, Stage::Bitmap | Stage::SyncSleep | Stage::Reading | Stage::Handling | Stage::Writing);
            if under_way && !slot.before_failure {
                slot.before_failure = true;
                self.barrier += 1;
            }
        }
        self.degraded_roles.push_back(role);
    }

    /// The members of failure group `g` fail, then their spares' rebuild starts: members that
    /// fail at the same time are rebuilt in one pass from the start.
    pub(super) fn fail_group(&mut self, g: usize, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        for role in std::mem::take(&mut self.failure_groups[g]) {
            self.fail_or_lose(role, ctx);
        }
        self.start_next_rebuild(ctx);
    }

    /// The run's clock exists: schedule the members' failures.
    pub fn start_run(&mut self, ctx: &mut impl DeviceCtx<ArrayEvent<D::Event>>) {
        let now = ctx.now();
        self.run_start = now;
        let mut failures = std::mem::take(&mut self.failures);
        failures.sort_by_key(|&(_, at)| at);
        for (i, &(role, at)) in failures.iter().enumerate() {
            if i > 0 && failures[i - 1].1 == at {
                self.failure_groups.last_mut().expect("a group").push(role);
                continue;
            }
            self.failure_groups.push(vec![role]);
            if at > 0 {
                self.failures_pending += 1;
                ctx.schedule(now + at, ArrayEvent::Fail((self.failure_groups.len() - 1) as u16));
            }
        }
        if failures.first().is_some_and(|&(_, at)| at == 0) {
            self.fail_group(0, ctx);
        }
        self.drain(ctx);
    }

    /// Why the run cannot go on: a failure that would have lost the array's data (the run
    /// ends with it as its error).
    pub fn data_lost(&self) -> Option<String> {
        self.data_lost.clone()
    }
}
