//! A streaming engine's arbitration at each member: host I/O and rebuild I/O wait in queues
//! of their own, and while both have requests the rebuild gets its configured share of the
//! member's time, however deep the host's queue is. Time is counted in bytes dispatched (the
//! member's transfer time at its rate), so that the share does not depend on how large the
//! engine's rebuild units are against the host's requests: a share of *commands*, as NVMe's
//! weighted round robin gives, would hand a rebuild of 1 MiB units most of the bytes beside
//! 128 KiB host pieces. Within each queue, first come, first served.

use std::collections::VecDeque;

use crate::block::{IoScheduler, Request, SchedCtx};
use crate::device::Tag;

/// The process number an array gives its rebuild I/O at the members.
pub const REBUILD_PROCESS: u32 = u32::MAX;

pub struct RebuildShare {
    share: f64,
    /// Bytes dispatched to each side while both were waiting.
    host_served: u64,
    rebuild_served: u64,
    /// Waiting requests and their lengths.
    host: VecDeque<(Tag, u64)>,
    rebuild: VecDeque<(Tag, u64)>,
}

impl RebuildShare {
    pub fn new(share: f64) -> RebuildShare {
        RebuildShare { share, host_served: 0, rebuild_served: 0, host: VecDeque::new(), rebuild: VecDeque::new() }
    }

    /// The rebuild is behind its share of the bytes served under contention.
    fn rebuild_is_due(&self) -> bool {
        self.rebuild_served as f64 * (1.0 - self.share) <= self.host_served as f64 * self.share
    }
}

impl IoScheduler for RebuildShare {
    fn name(&self) -> &'static str {
        "none"
    }

    fn insert(&mut self, tag: Tag, rq: &Request, _ctx: &mut SchedCtx) {
        if rq.process == REBUILD_PROCESS {
            self.rebuild.push_back((tag, rq.len));
        } else {
            self.host.push_back((tag, rq.len));
        }
    }

    fn dispatch(&mut self, _ctx: &mut SchedCtx) -> Option<Tag> {
        match (self.host.is_empty(), self.rebuild.is_empty()) {
            (true, true) => None,
            (false, true) => self.host.pop_front().map(|(t, _)| t),
            (true, false) => self.rebuild.pop_front().map(|(t, _)| t),
            (false, false) => {
                let (side, served) = if self.rebuild_is_due() {
                    (&mut self.rebuild, &mut self.rebuild_served)
                } else {
                    (&mut self.host, &mut self.host_served)
                };
                let (tag, len) = side.pop_front()?;
                *served += len;
                Some(tag)
            }
        }
    }

    fn completed(&mut self, _tag: Tag, _rq: &Request, _ctx: &mut SchedCtx) {}

    fn timer(&mut self, _key: u16, _token: u32, _ctx: &mut SchedCtx) {}

    fn queued(&self) -> usize {
        self.host.len() + self.rebuild.len()
    }

    /// Never asked: it takes no merges.
    fn requests_merged(&mut self, _kept: Tag, _kept_rq: &Request, gone: Tag) {
        self.host.retain(|&(t, _)| t != gone);
        self.rebuild.retain(|&(t, _)| t != gone);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{BlockQueue, Scheduler};
    use crate::device::Op;

    #[test]
    fn the_rebuild_gets_its_share_of_bytes_behind_a_deep_host_queue() {
        // 4 KiB host reads against 64 KiB rebuild writes: a quarter of the bytes, not of the
        // commands, goes to the rebuild while both wait.
        let mut q = BlockQueue::new(1, 10000, Scheduler::Custom(Box::new(RebuildShare::new(0.25))));
        for h in 0..4000 {
            q.submit(h, Op::Read, h as u64 * 4096, 4096, 0, 0);
        }
        for h in 4000..4100 {
            q.submit(h, Op::Write, (1 << 30) + (h as u64 - 4000) * 65536, 65536, REBUILD_PROCESS, 0);
        }
        let (mut host, mut rebuild) = (0u64, 0u64);
        for _ in 0..2000 {
            let r = q.next_for_device(0).expect("queued");
            if r.op == Op::Write { rebuild += r.len } else { host += r.len }
            q.complete(r.tag, 1);
        }
        let share = rebuild as f64 / (host + rebuild) as f64;
        assert!((share - 0.25).abs() < 0.03, "rebuild share of bytes {share}");
        assert!(rebuild < 100 * 65536, "the host was served too");
    }

    #[test]
    fn alone_either_side_takes_everything() {
        let mut q = BlockQueue::new(1, 1000, Scheduler::Custom(Box::new(RebuildShare::new(0.1))));
        for h in 0..10 {
            q.submit(h, Op::Write, h as u64 * 65536, 65536, REBUILD_PROCESS, 0);
        }
        for _ in 0..10 {
            let r = q.next_for_device(0).expect("queued");
            assert_eq!(r.op, Op::Write);
            q.complete(r.tag, 1);
        }
        assert!(q.next_for_device(0).is_none());
    }
}
