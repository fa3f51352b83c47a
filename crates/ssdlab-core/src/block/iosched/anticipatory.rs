//! The anticipatory elevator as Linux 2.6.28 had it (block/as-iosched.c), simplified to
//! what moves throughput and latency.
//!
//! Like deadline it keeps requests sorted by sector and in arrival order per direction, and
//! serves a request whose expiry has passed first. Batches are timed (`read_batch_expire`,
//! `write_batch_expire`) rather than counted, and within a batch the next request is the
//! nearest forward of the head, or one behind it within 512 MiB at twice the distance. What
//! sets it apart: when a process's read completes, the disk is kept idle for up to
//! `antic_expire` in the expectation ("anticipation") that the same process reads again
//! nearby, which a process reading a file sequentially does after a short think. A request
//! breaks the wait if it comes from that process, lies close to the head (a window that
//! widens as the wait goes on), or is nearer than the process's own mean seek; a process
//! that thinks longer than `antic_expire` is not waited for.
//!
//! Departures from the kernel, known: the wait starts only once nothing is in the device
//! (2.6.28 also holds other processes' requests while the awaited read is still in flight,
//! ANTIC_WAIT_REQ), so on a queuing disk it anticipates less; think and seek statistics take
//! writes too; `antic_expire` is kept in ns, not whole jiffies.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::lists::{RequestBook, SortedFifo};
use super::{IoScheduler, SchedCtx};
use crate::block::request::Request;
use crate::io::{Op, Tag};
use crate::engine::timer::Timer;
use crate::engine::{Time, NS_PER_MS};
use crate::error::ConfigError;

/// `/sys/block/*/queue/iosched/` of the anticipatory scheduler (ns here; sysfs shows ms).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AnticipatoryTunables {
    pub read_expire_ns: Time,
    pub write_expire_ns: Time,
    pub read_batch_expire_ns: Time,
    pub write_batch_expire_ns: Time,
    pub antic_expire_ns: Time,
}

impl Default for AnticipatoryTunables {
    /// 2.6.28's defaults at HZ = 1000: HZ/8, HZ/4, HZ/2, HZ/8 and HZ/150 jiffies.
    fn default() -> Self {
        AnticipatoryTunables {
            read_expire_ns: 125 * NS_PER_MS,
            write_expire_ns: 250 * NS_PER_MS,
            read_batch_expire_ns: 500 * NS_PER_MS,
            write_batch_expire_ns: 125 * NS_PER_MS,
            antic_expire_ns: 6 * NS_PER_MS,
        }
    }
}

impl AnticipatoryTunables {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.read_batch_expire_ns == 0 || self.write_batch_expire_ns == 0 {
            return Err(ConfigError::new("iosched.read_batch_expire", "batches must last some time".into()));
        }
        Ok(())
    }
}

/// How far behind the head a request may be taken next (bytes), at twice its distance:
/// the kernel's MAXBACK, 1,048,576 sectors.
const MAX_BACK: u64 = 512 << 20;

/// What the scheduler knows of a process: think time and seek distance, decaying means.
#[derive(Clone, Copy, Debug, Default)]
struct Process {
    think_ns: f64,
    think_samples: u32,
    seek_bytes: f64,
    seek_samples: u32,
    last_end: Option<Time>,
    last_pos: Option<u64>,
}

impl Process {
    fn add(mean: &mut f64, n: &mut u32, x: f64) {
        *mean = if *n == 0 { x } else { (7.0 * *mean + x) / 8.0 };
        *n = n.saturating_add(1);
    }
}

pub struct Anticipatory {
    t: AnticipatoryTunables,
    /// Per direction (read, write): queued requests by sector and by arrival.
    lists: [SortedFifo; 2],
    /// The requests it holds, flushes (which go first) included; its head is where the
    /// last request dispatched ended.
    book: RequestBook,
    processes: FxHashMap<u32, Process>,
    in_device: u32,
    /// The batch under way: its direction and when it ends.
    batch_dir: u32,
    batch_end: Time,
    /// Anticipating the next read of this process since this time.
    waiting_for: Option<(u32, Time)>,
    timer: Timer,
    /// The awaited process's request that ended the wait: it goes next.
    awaited: Option<Tag>,
}

impl Anticipatory {
    pub fn new(t: AnticipatoryTunables) -> Anticipatory {
        Anticipatory {
            t,
            lists: Default::default(),
            book: RequestBook::default(),
            processes: FxHashMap::default(),
            in_device: 0,
            batch_dir: 0,
            batch_end: 0,
            waiting_for: None,
            timer: Timer::default(),
            awaited: None,
        }
    }

    /// The oldest request of `dir` if its expiry has passed.
    fn expired_head(&mut self, dir: u32, now: Time) -> Option<Tag> {
        self.lists[dir as usize].oldest(self.book.waiting()).and_then(|(tag, expire)| (now >= expire).then_some(tag))
    }

    /// as_can_break_anticipation: whether `rq` is worth more than waiting for the process.
    fn breaks_wait(&self, rq_process: u32, offset: u64, now: Time) -> bool {
        let Some((p, since)) = self.waiting_for else { return true };
        if rq_process == p {
            return true;
        }
        // Close to the head: 4 MiB at first, doubling with each ms waited.
        let waited_ms = (now - since) / NS_PER_MS;
        let close = if waited_ms > 20 { u64::MAX } else { (4 << 20) << waited_ms };
        let distance = offset.abs_diff(self.book.head());
        if distance <= close {
            return true;
        }
        let proc_ = self.processes.get(&p).copied().unwrap_or_default();
        proc_.think_samples > 0 && proc_.think_ns > self.t.antic_expire_ns as f64
            || proc_.seek_samples > 0 && proc_.seek_bytes > distance as f64
    }

    fn stop_waiting(&mut self) {
        self.waiting_for = None;
        self.timer.cancel();
    }
}

impl IoScheduler for Anticipatory {
    fn name(&self) -> &'static str {
        "anticipatory"
    }

    fn insert(&mut self, tag: Tag, rq: &Request, ctx: &mut SchedCtx) {
        let now = ctx.now;
        if rq.op == Op::Flush {
            self.book.insert_flush(tag);
            return;
        }
        let dir = if rq.op == Op::Read { 0 } else { 1 };
        let expire = if dir == 0 { self.t.read_expire_ns } else { self.t.write_expire_ns };
        self.book.insert(tag, rq, dir, now + expire, &mut self.lists);
        let p = self.processes.entry(rq.process).or_default();
        if let Some(end) = p.last_end {
            Process::add(&mut p.think_ns, &mut p.think_samples, now.saturating_sub(end) as f64);
        }
        if let Some(last) = p.last_pos {
            Process::add(&mut p.seek_bytes, &mut p.seek_samples, rq.offset.abs_diff(last) as f64);
        }
        p.last_pos = Some(rq.offset + rq.len);
        if let Some((p, _)) = self.waiting_for {
            if self.breaks_wait(rq.process, rq.offset, now) {
                if p == rq.process && dir == 0 {
                    self.awaited = Some(tag);
                }
                self.stop_waiting();
            }
        }
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx) -> Option<Tag> {
        let now = ctx.now;
        if let Some(tag) = self.book.take_flush() {
            self.in_device += 1;
            return Some(tag);
        }
        if self.waiting_for.is_some() {
            return None; // anticipating: the disk waits
        }
        let (reads, writes) = (!self.lists[0].is_empty(), !self.lists[1].is_empty());
        if !reads && !writes {
            return None;
        }
        // A batch ends at its time, or when its direction runs dry.
        let current_empty = self.lists[self.batch_dir as usize].is_empty();
        if now >= self.batch_end || current_empty {
            let dir = if self.batch_dir == 0 {
                if writes && (now >= self.batch_end || !reads) { 1 } else { 0 }
            } else if reads && (now >= self.batch_end || !writes) {
                0
            } else {
                1
            };
            if dir != self.batch_dir || now >= self.batch_end {
                self.batch_dir = dir;
                let len = if dir == 0 { self.t.read_batch_expire_ns } else { self.t.write_batch_expire_ns };
                self.batch_end = now + len;
            }
        }
        let dir = self.batch_dir;
        let awaited = self.awaited.take().filter(|&t| {
            let e = self.book.entry(t);
            e.queued && e.list == dir
        });
        let tag = match (self.expired_head(dir, now), awaited) {
            (Some(t), _) => t,
            (None, Some(t)) => t,
            (None, None) => self.lists[dir as usize].nearest(self.book.head(), MAX_BACK, 2)?,
        };
        self.book.take(tag, &mut self.lists);
        self.in_device += 1;
        Some(tag)
    }

    fn completed(&mut self, _tag: Tag, rq: &Request, ctx: &mut SchedCtx) {
        let now = ctx.now;
        self.in_device -= 1;
        if rq.op == Op::Flush {
            return;
        }
        let p = self.processes.entry(rq.process).or_default();
        p.last_end = Some(now);
        // After a read, wait for the same process's next one if it may come soon and no
        // waiting request already beats it.
        let process = *p;
        if rq.op == Op::Read && self.in_device == 0 && self.t.antic_expire_ns > 0 {
            let thinks_long = process.think_samples > 0 && process.think_ns > self.t.antic_expire_ns as f64;
            if !thinks_long {
                self.waiting_for = Some((rq.process, now));
                let mut waiting = self.lists.iter().flat_map(|l| l.iter());
                let beaten = waiting.any(|&(o, t)| self.breaks_wait(self.book.entry(t).process, o, now));
                if beaten {
                    self.waiting_for = None;
                } else {
                    self.timer.cancel();
                    ctx.arm(now + self.t.antic_expire_ns, 0, self.timer.token());
                }
            }
        }
    }

    fn timer(&mut self, _key: u16, token: u32, _ctx: &mut SchedCtx) {
        if self.timer.is_current(token) {
            self.waiting_for = None;
        }
    }

    fn queued(&self) -> usize {
        self.book.queued()
    }

    fn merges(&self) -> bool {
        true
    }

    fn merged(&mut self, tag: Tag, rq: &Request, front: bool, old_offset: u64) {
        self.book.merged(tag, rq, front, old_offset, &mut self.lists);
    }

    fn requests_merged(&mut self, kept: Tag, kept_rq: &Request, gone: Tag) {
        if self.awaited == Some(gone) {
            self.awaited = Some(kept);
        }
        self.book.requests_merged(kept, kept_rq, gone, &mut self.lists);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::iosched::ArmedTimer;

    use crate::block::iosched::test_read as rq;

    #[test]
    fn waits_for_a_sequential_readers_next_read_instead_of_seeking_away() {
        let mut a = Anticipatory::new(AnticipatoryTunables::default());
        let mut armed: Vec<ArmedTimer> = vec![];
        a.insert(0, &rq(1, 0), &mut SchedCtx::new(0, &mut armed));
        assert_eq!(a.dispatch(&mut SchedCtx::new(0, &mut armed)), Some(0));
        // A far request of another process arrives while process 1's read is in the device.
        a.insert(1, &rq(2, 100 << 30), &mut SchedCtx::new(10, &mut armed));
        assert_eq!(a.dispatch(&mut SchedCtx::new(10, &mut armed)), Some(1), "nothing to wait for yet");
        a.completed(1, &rq(2, 100 << 30), &mut SchedCtx::new(50, &mut armed));
        a.completed(0, &rq(1, 0), &mut SchedCtx::new(100, &mut armed));
        // Process 1's read is done: anticipate its next read; process 2's far read waits.
        a.insert(2, &rq(2, 200 << 30), &mut SchedCtx::new(110, &mut armed));
        assert_eq!(a.dispatch(&mut SchedCtx::new(110, &mut armed)), None, "anticipating");
        a.insert(3, &rq(1, 4096), &mut SchedCtx::new(150, &mut armed));
        assert_eq!(a.dispatch(&mut SchedCtx::new(150, &mut armed)), Some(3), "process 1 came back");
        a.completed(3, &rq(1, 4096), &mut SchedCtx::new(250, &mut armed));
        // It does not come back this time: the wait times out and process 2 is served.
        let t = *armed.last().unwrap();
        assert_eq!(t.at, 250 + 6 * NS_PER_MS);
        a.timer(t.key, t.token, &mut SchedCtx::new(t.at, &mut armed));
        assert_eq!(a.dispatch(&mut SchedCtx::new(t.at, &mut armed)), Some(2));
    }

    #[test]
    fn a_close_request_breaks_the_wait() {
        let mut a = Anticipatory::new(AnticipatoryTunables::default());
        let mut armed: Vec<ArmedTimer> = vec![];
        a.insert(0, &rq(1, 1 << 30), &mut SchedCtx::new(0, &mut armed));
        a.dispatch(&mut SchedCtx::new(0, &mut armed));
        a.completed(0, &rq(1, 1 << 30), &mut SchedCtx::new(100, &mut armed));
        a.insert(1, &rq(2, (1 << 30) + 8192), &mut SchedCtx::new(200, &mut armed));
        assert_eq!(a.dispatch(&mut SchedCtx::new(200, &mut armed)), Some(1), "close to the head");
    }
}
