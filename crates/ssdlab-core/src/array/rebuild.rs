//! A rebuild's progress: which part of each replacement holds current data, which units
//! are under way, and when the next may start (md's speed limits and idle detection).
//!
//! A rebuild is one pass over the members in ascending units, writing every replacement
//! that lacks the unit's rows: md recovers all its spares in one pass, and a failure during
//! a pass interrupts it and starts a new one over every replacement, each keeping the part
//! it has in sync, from the lowest point any of them lacks (`md_do_sync` starts recovery at
//! the smallest `recovery_offset`). Units may finish out of order; the part in sync is everything below
//! the first unfinished one.

use std::collections::VecDeque;


use crate::engine::{Time, NS_PER_S};
use crate::report::RebuildReport;

/// md's resync throttle (drivers/md/md.c, `md_do_sync`): after every window of resync I/O,
/// above `sync_speed_max` it sleeps half a second; above `sync_speed_min`, if the array saw
/// other I/O since the last check, it waits until its resync I/O in flight has completed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MdThrottle {
    pub min_bytes_per_s: f64,
    pub max_bytes_per_s: f64,
}

/// md keeps the resync speed over its last marks, one every 3 s, ten of them.
const MARK_STEP: Time = 3 * NS_PER_S;
const MARKS: usize = 10;
/// md's sleep when the resync runs above its maximum speed.
const OVERSPEED_SLEEP: Time = NS_PER_S / 2;
/// Other I/O above this since the last check means the array is busy (md: 64 sectors).
const BUSY_BYTES: u64 = 64 * 512;

/// What to do about the next unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Issue the unit at (member offset, bytes).
    Issue(u64, u64),
    /// Wait until the given time (running too fast).
    SleepUntil(Time),
    /// Wait for a unit to finish (enough in flight, or md yielding to other I/O).
    Wait,
    /// Every unit is issued.
    Done,
}

/// A replacement the pass writes, and how far it was in sync when the pass began.
#[derive(Clone, Debug)]
struct Target {
    role: u32,
    from: u64,
    report: RebuildReport,
}

#[derive(Clone, Debug)]
pub struct Rebuild {
    targets: Vec<Target>,
    unit: u64,
    depth: usize,
    end: u64,
    next: u64,
    /// Everything below this is written on every target (the first unfinished unit's start).
    front: u64,
    /// Units issued and not yet retired: (start, finished).
    inflight: VecDeque<(u64, bool)>,
    throttle: Option<MdThrottle>,
    /// md's marks: (time, bytes issued) every `MARK_STEP`.
    marks: VecDeque<(Time, u64)>,
    /// Waiting for every unit in flight to finish (md yielding to other I/O).
    draining: bool,
    /// md's sync thread is asleep until then for running over its maximum speed: nothing is
    /// issued, however many units finish meanwhile.
    sleeping_until: Option<Time>,
    /// Other I/O at the last check, and since the last window.
    other_bytes_seen: u64,
    since_check: u64,
}

impl Rebuild {
    /// A pass rebuilding `targets` (role, report so far: its `done_bytes` are in sync
    /// already) of `member_bytes` each, from `now`, in units of `unit` bytes with at most
    /// `depth` in flight, stopping after `limit` bytes if given.
    pub fn new(
        targets: Vec<(u32, RebuildReport)>,
        member_bytes: u64,
        unit: u64,
        depth: usize,
        limit: Option<u64>,
        throttle: Option<MdThrottle>,
        now: Time,
    ) -> Rebuild {
        assert!(!targets.is_empty(), "a rebuild pass without a target");
        let end = limit.map_or(member_bytes, |l| l.min(member_bytes).div_ceil(unit) * unit).min(member_bytes);
        let mut targets: Vec<Target> = targets
            .into_iter()
            .map(|(role, mut report)| {
                report.target_bytes = end;
                report.member_bytes = member_bytes;
                report.unit_bytes = unit;
                Target { role, from: report.done_bytes, report }
            })
            .collect();
        // md starts the pass at the lowest recovery offset, on a unit boundary.
        let start = targets.iter().map(|t| t.from).min().expect("checked") / unit * unit;
        let names: Vec<String> = targets.iter().map(|t| t.report.member.clone()).collect();
        for t in &mut targets {
            t.report.rebuilt_with = names.iter().filter(|n| **n != t.report.member).cloned().collect();
        }
        Rebuild {
            targets,
            unit,
            depth: depth.max(1),
            end,
            next: start,
            front: start,
            inflight: VecDeque::new(),
            throttle,
            marks: VecDeque::from([(now, start)]),
            draining: false,
            sleeping_until: None,
            other_bytes_seen: 0,
            since_check: 0,
        }
    }

    /// The roles this pass rebuilds.
    pub fn roles(&self) -> impl Iterator<Item = u32> + '_ {
        self.targets.iter().map(|t| t.role)
    }

    /// Bytes of role `role`'s replacement in sync: what was before the pass, or everything
    /// below the pass's first unfinished unit.
    pub fn in_sync(&self, role: u32) -> u64 {
        self.targets.iter().find(|t| t.role == role).map_or(0, |t| t.report.done_bytes)
    }

    /// Every target is in sync to the end (they finish together).
    pub fn finished(&self) -> bool {
        self.report().finished_ns.is_some()
    }

    /// No unit is under way.
    pub fn idle(&self) -> bool {
        self.inflight.is_empty()
    }

    /// Each target's report, in the order the replacements joined.
    pub fn reports(&self) -> impl Iterator<Item = &RebuildReport> {
        self.targets.iter().map(|t| &t.report)
    }

    /// The latest replacement's report (the one furthest from done).
    pub fn report(&self) -> &RebuildReport {
        &self.targets.last().expect("a target").report
    }

    /// The pass ends; its targets' reports, for a new pass or for the record.
    pub fn into_reports(self) -> impl Iterator<Item = (u32, RebuildReport)> {
        self.targets.into_iter().map(|t| (t.role, t.report))
    }

    /// md's current resync speed: bytes issued since the oldest mark over the whole seconds
    /// since it, plus one (md's `currspeed`).
    fn speed(&self, now: Time) -> f64 {
        let (t0, b0) = *self.marks.front().expect("a mark");
        (self.next - b0) as f64 / ((now.saturating_sub(t0) / NS_PER_S) + 1) as f64
    }

    /// md moves its marks every 3 s and keeps the last ten.
    fn mark(&mut self, now: Time) {
        let last = self.marks.back().expect("a mark").0;
        if now >= last + MARK_STEP {
            self.marks.push_back((now, self.next));
            if self.marks.len() > MARKS {
                self.marks.pop_front();
            }
        }
    }

    /// The next step at `now`; `other_bytes`: the array's I/O other than the rebuild so far.
    pub fn next(&mut self, now: Time, other_bytes: u64) -> Next {
        if self.next >= self.end {
            return Next::Done;
        }
        if let Some(t) = self.sleeping_until {
            if now < t {
                return Next::Wait;
            }
            self.sleeping_until = None;
        }
        if self.draining {
            if !self.inflight.is_empty() {
                return Next::Wait;
            }
            self.draining = false;
        }
        if self.inflight.len() >= self.depth {
            return Next::Wait;
        }
        // md checks its speed once per window of resync I/O: here, once per unit.
        self.mark(now);
        if let Some(t) = self.throttle {
            let speed = self.speed(now);
            if self.since_check >= self.unit && speed > t.max_bytes_per_s {
                // Checked again after the sleep.
                self.targets.iter_mut().for_each(|t| t.report.overspeed_sleeps += 1);
                self.sleeping_until = Some(now + OVERSPEED_SLEEP);
                return Next::SleepUntil(now + OVERSPEED_SLEEP);
            }
            if self.since_check >= self.unit {
                self.since_check = 0;
                let busy = other_bytes - self.other_bytes_seen > BUSY_BYTES;
                self.other_bytes_seen = other_bytes;
                if speed > t.min_bytes_per_s && busy && !self.inflight.is_empty() {
                    self.targets.iter_mut().for_each(|t| t.report.busy_waits += 1);
                    self.draining = true;
                    return Next::Wait;
                }
            }
        }
        let start = self.next;
        let len = self.unit.min(self.end - start);
        self.next += len;
        self.since_check += len;
        self.inflight.push_back((start, false));
        Next::Issue(start, len)
    }

    /// md's sync thread had to wait for stripe heads: it sleeps until `until` and issues
    /// nothing meanwhile (`raid5_sync_request`).
    pub fn sleep_after_head_wait(&mut self, until: Time) {
        self.targets.iter_mut().for_each(|t| t.report.head_wait_sleeps += 1);
        self.sleeping_until = Some(self.sleeping_until.map_or(until, |t| t.max(until)));
    }

    /// Everything below this is written on every target that lacked it.
    pub fn front(&self) -> u64 {
        self.front
    }

    /// The unit starting at `start` is written; returns whether the front moved.
    pub fn unit_done(&mut self, start: u64, now: Time) -> bool {
        let slot = self.inflight.iter_mut().find(|(s, _)| *s == start).expect("a unit in flight");
        slot.1 = true;
        let before = self.front;
        while let Some(&(s, true)) = self.inflight.front() {
            self.inflight.pop_front();
            self.front = (s + self.unit).min(self.end);
        }
        for t in &mut self.targets {
            t.report.done_bytes = t.report.done_bytes.max(self.front);
        }
        if self.front >= self.end && self.inflight.is_empty() && !self.finished() {
            for t in &mut self.targets {
                t.report.finished_ns = Some(now);
            }
        }
        self.front > before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(role: u32) -> Vec<(u32, RebuildReport)> {
        vec![(role, RebuildReport::new("sde".into(), "sdb".into(), 0))]
    }

    #[test]
    fn units_retire_in_order_and_the_synced_part_is_a_prefix() {
        let mut r = Rebuild::new(one(1), 10 * 4096, 4096, 3, None, None, 0);
        let issued: Vec<_> = (0..4).map(|_| r.next(0, 0)).collect();
        assert_eq!(issued[..3], [Next::Issue(0, 4096), Next::Issue(4096, 4096), Next::Issue(8192, 4096)]);
        assert_eq!(issued[3], Next::Wait, "three in flight at most");
        assert!(!r.unit_done(4096, 10), "the first unit is not done yet");
        assert_eq!(r.in_sync(1), 0);
        assert!(r.unit_done(0, 20));
        assert_eq!(r.in_sync(1), 8192);
        r.unit_done(8192, 25);
        assert_eq!(r.in_sync(1), 3 * 4096);
        for _ in 0..20 {
            match r.next(30, 0) {
                Next::Issue(s, _) => {
                    r.unit_done(s, 40);
                }
                Next::Done => break,
                other => panic!("{other:?}"),
            }
        }
        assert!(r.finished());
        assert_eq!(r.in_sync(1), 10 * 4096);
        assert_eq!(r.report().finished_ns, Some(40));
    }

    #[test]
    fn a_pass_starts_at_the_lowest_point_in_sync_and_keeps_each_targets_earlier_progress() {
        // Role 1 was in sync below 3 units when role 2 failed: the new pass walks from 0 and
        // role 1 gains nothing until it passes 3 units; both finish together.
        let mut first = RebuildReport::new("sde".into(), "sdb".into(), 5);
        first.done_bytes = 3 * 4096;
        let second = RebuildReport::new("sdf".into(), "sdc".into(), 50);
        let mut r = Rebuild::new(vec![(1, first), (2, second)], 6 * 4096, 4096, 8, None, None, 50);
        assert_eq!(r.reports().map(|x| x.rebuilt_with.clone()).collect::<Vec<_>>(), [vec!["sdf".to_string()], vec!["sde".to_string()]]);
        assert_eq!(r.next(60, 0), Next::Issue(0, 4096), "from the lowest point in sync");
        assert!(r.unit_done(0, 70), "the front moved");
        assert_eq!((r.in_sync(1), r.in_sync(2)), (3 * 4096, 4096));
        for _ in 0..3 {
            let Next::Issue(s, _) = r.next(80, 0) else { panic!("a unit") };
            r.unit_done(s, 90);
        }
        assert_eq!((r.in_sync(1), r.in_sync(2)), (4 * 4096, 4 * 4096));
        while let Next::Issue(s, _) = r.next(100, 0) {
            r.unit_done(s, 110);
        }
        assert!(r.finished());
        let reports: Vec<_> = r.into_reports().collect();
        assert_eq!(reports.iter().map(|(_, x)| (x.started_ns, x.finished_ns, x.done_bytes)).collect::<Vec<_>>(), [(5, Some(110), 6 * 4096), (50, Some(110), 6 * 4096)]);
    }

    #[test]
    fn a_sample_limit_ends_the_rebuild_early_on_a_unit_boundary() {
        let mut r = Rebuild::new(one(0), 1 << 20, 65536, 4, Some(100_000), None, 0);
        let mut units = 0;
        while let Next::Issue(s, _) = r.next(0, 0) {
            r.unit_done(s, 1);
            units += 1;
        }
        assert_eq!((units, r.in_sync(0)), (2, 131072));
        assert!(r.finished());
    }

    #[test]
    fn md_yields_to_other_io_above_its_minimum_speed_and_sleeps_above_its_maximum() {
        // md's speed is bytes issued over whole seconds since its oldest mark, plus one.
        let t = MdThrottle { min_bytes_per_s: 1.5e6, max_bytes_per_s: 2.5e6 };
        let mut r = Rebuild::new(one(0), 1 << 30, 1 << 20, 8, None, Some(t), 0);
        assert!(matches!(r.next(1_000, 0), Next::Issue(0, _)));
        // 1 MiB/s: below the minimum, md does not throttle even with other I/O about.
        assert!(matches!(r.next(1_000, 1 << 20), Next::Issue(..)));
        // 2 MiB/s, above the minimum: other I/O since the last check makes it wait for its
        // units in flight to finish.
        assert_eq!(r.next(2_000, 2 << 20), Next::Wait);
        assert_eq!(r.report().busy_waits, 1);
        assert_eq!(r.next(3_000, 2 << 20), Next::Wait, "still draining");
        r.unit_done(0, 4_000);
        r.unit_done(1 << 20, 5_000);
        assert!(matches!(r.next(6_000, 2 << 20), Next::Issue(..)), "nothing else arrived");
        // 3 MiB/s is above the maximum: sleep half a second.
        assert_eq!(r.next(7_000, 2 << 20), Next::SleepUntil(7_000 + NS_PER_S / 2));
        assert_eq!(r.report().overspeed_sleeps, 1);
        // Asleep, it issues nothing however often it is asked (units finishing meanwhile),
        // and the sleep counts once; at its end it checks its speed again.
        r.unit_done(2 << 20, 8_000);
        assert_eq!(r.next(9_000, 2 << 20), Next::Wait);
        assert_eq!(r.next(7_000 + NS_PER_S / 2 - 1, 2 << 20), Next::Wait);
        assert_eq!(r.report().overspeed_sleeps, 1);
        assert!(matches!(r.next(7_000 + NS_PER_S / 2, 2 << 20), Next::Issue(..) | Next::SleepUntil(_)));
    }
}
