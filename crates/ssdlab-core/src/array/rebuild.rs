//! A rebuild's progress: which part of the replacement holds current data, which units are
//! under way, and when the next may start (md's speed limits and idle detection).
//!
//! The replacement is written in ascending units. Units may finish out of order; the part in
//! sync is everything below the first unfinished one.

use std::collections::VecDeque;

use serde::Serialize;

use crate::engine::{Time, NS_PER_S};

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

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct RebuildReport {
    /// The member being rebuilt and the one it replaces.
    pub member: String,
    pub replaces: String,
    pub started_ns: Time,
    /// When the replacement was wholly in sync (or the sample limit was reached).
    pub finished_ns: Option<Time>,
    /// Bytes of the replacement in sync, and its size (or the sample limit).
    pub done_bytes: u64,
    pub target_bytes: u64,
    pub member_bytes: u64,
    /// Bytes of the replacement one rebuild unit writes (one member write, before the
    /// member's block layer splits it).
    pub unit_bytes: u64,
    /// Times md slept for running above sync_speed_max, and waited for other I/O.
    pub overspeed_sleeps: u64,
    pub busy_waits: u64,
}

#[derive(Clone, Debug)]
pub struct Rebuild {
    pub role: u32,
    unit: u64,
    depth: usize,
    end: u64,
    next: u64,
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
    report: RebuildReport,
}

impl Rebuild {
    /// Rebuild `member_bytes` of role `role` from `now`, in units of `unit` bytes with at
    /// most `depth` in flight, stopping after `limit` bytes if given.
    pub fn new(
        role: u32,
        names: (String, String),
        member_bytes: u64,
        unit: u64,
        depth: usize,
        limit: Option<u64>,
        throttle: Option<MdThrottle>,
        now: Time,
    ) -> Rebuild {
        let end = limit.map_or(member_bytes, |l| l.min(member_bytes).div_ceil(unit) * unit).min(member_bytes);
        Rebuild {
            role,
            unit,
            depth: depth.max(1),
            end,
            next: 0,
            inflight: VecDeque::new(),
            throttle,
            marks: VecDeque::from([(now, 0)]),
            draining: false,
            sleeping_until: None,
            other_bytes_seen: 0,
            since_check: 0,
            report: RebuildReport {
                member: names.0,
                replaces: names.1,
                started_ns: now,
                finished_ns: None,
                done_bytes: 0,
                target_bytes: end,
                member_bytes,
                unit_bytes: unit,
                overspeed_sleeps: 0,
                busy_waits: 0,
            },
        }
    }

    /// Bytes of the replacement in sync (everything below the first unfinished unit).
    pub fn in_sync(&self) -> u64 {
        self.report.done_bytes
    }

    pub fn finished(&self) -> bool {
        self.report.finished_ns.is_some()
    }

    pub fn report(&self) -> &RebuildReport {
        &self.report
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
                self.report.overspeed_sleeps += 1;
                self.sleeping_until = Some(now + OVERSPEED_SLEEP);
                return Next::SleepUntil(now + OVERSPEED_SLEEP);
            }
            if self.since_check >= self.unit {
                self.since_check = 0;
                let busy = other_bytes - self.other_bytes_seen > BUSY_BYTES;
                self.other_bytes_seen = other_bytes;
                if speed > t.min_bytes_per_s && busy && !self.inflight.is_empty() {
                    self.report.busy_waits += 1;
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

    /// The unit starting at `start` is written; returns whether the part in sync grew.
    pub fn unit_done(&mut self, start: u64, now: Time) -> bool {
        let slot = self.inflight.iter_mut().find(|(s, _)| *s == start).expect("a unit in flight");
        slot.1 = true;
        let mut grew = false;
        while let Some(&(s, true)) = self.inflight.front() {
            self.inflight.pop_front();
            self.report.done_bytes = (s + self.unit).min(self.end);
            grew = true;
        }
        if grew && self.report.done_bytes >= self.end && self.inflight.is_empty() {
            self.report.finished_ns = Some(now);
        }
        grew
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> (String, String) {
        ("sde".into(), "sdb".into())
    }

    #[test]
    fn units_retire_in_order_and_the_synced_part_is_a_prefix() {
        let mut r = Rebuild::new(1, names(), 10 * 4096, 4096, 3, None, None, 0);
        let issued: Vec<_> = (0..4).map(|_| r.next(0, 0)).collect();
        assert_eq!(issued[..3], [Next::Issue(0, 4096), Next::Issue(4096, 4096), Next::Issue(8192, 4096)]);
        assert_eq!(issued[3], Next::Wait, "three in flight at most");
        assert!(!r.unit_done(4096, 10), "the first unit is not done yet");
        assert_eq!(r.in_sync(), 0);
        assert!(r.unit_done(0, 20));
        assert_eq!(r.in_sync(), 8192);
        r.unit_done(8192, 25);
        assert_eq!(r.in_sync(), 3 * 4096);
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
        assert_eq!(r.in_sync(), 10 * 4096);
        assert_eq!(r.report().finished_ns, Some(40));
    }

    #[test]
    fn a_sample_limit_ends_the_rebuild_early_on_a_unit_boundary() {
        let mut r = Rebuild::new(0, names(), 1 << 20, 65536, 4, Some(100_000), None, 0);
        let mut units = 0;
        while let Next::Issue(s, _) = r.next(0, 0) {
            r.unit_done(s, 1);
            units += 1;
        }
        assert_eq!((units, r.in_sync()), (2, 131072));
        assert!(r.finished());
    }

    #[test]
    fn md_yields_to_other_io_above_its_minimum_speed_and_sleeps_above_its_maximum() {
        // md's speed is bytes issued over whole seconds since its oldest mark, plus one.
        let t = MdThrottle { min_bytes_per_s: 1.5e6, max_bytes_per_s: 2.5e6 };
        let mut r = Rebuild::new(0, names(), 1 << 30, 1 << 20, 8, None, Some(t), 0);
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
