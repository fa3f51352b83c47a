//! A streaming engine's arbitration at each member: host I/O and rebuild I/O wait in queues
//! of their own, and when both have requests the rebuild gets its configured share of the
//! dispatches (as NVMe's weighted round robin between submission queues gives a queue its
//! weight), however deep the host's queue is. Within each queue, first come, first served.

use std::collections::VecDeque;

use crate::block::{IoScheduler, Request, SchedCtx};
use crate::device::Tag;

/// The process number an array gives its rebuild I/O at the members.
pub const REBUILD_PROCESS: u32 = u32::MAX;

pub struct RebuildShare {
    share: f64,
    credit: f64,
    host: VecDeque<Tag>,
    rebuild: VecDeque<Tag>,
}

impl RebuildShare {
    pub fn new(share: f64) -> RebuildShare {
        RebuildShare { share, credit: 0.0, host: VecDeque::new(), rebuild: VecDeque::new() }
    }
}

impl IoScheduler for RebuildShare {
    fn name(&self) -> &'static str {
        "none"
    }

    fn insert(&mut self, tag: Tag, rq: &Request, _ctx: &mut SchedCtx) {
        if rq.process == REBUILD_PROCESS {
            self.rebuild.push_back(tag);
        } else {
            self.host.push_back(tag);
        }
    }

    fn dispatch(&mut self, _ctx: &mut SchedCtx) -> Option<Tag> {
        match (self.host.is_empty(), self.rebuild.is_empty()) {
            (true, true) => None,
            (false, true) => self.host.pop_front(),
            (true, false) => self.rebuild.pop_front(),
            (false, false) => {
                self.credit += self.share;
                if self.credit >= 1.0 {
                    self.credit -= 1.0;
                    self.rebuild.pop_front()
                } else {
                    self.host.pop_front()
                }
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
        self.host.retain(|&t| t != gone);
        self.rebuild.retain(|&t| t != gone);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{BlockQueue, Scheduler};
    use crate::device::Op;

    #[test]
    fn the_rebuild_gets_its_share_of_dispatches_behind_a_deep_host_queue() {
        let mut q = BlockQueue::new(1, 1000, Scheduler::Custom(Box::new(RebuildShare::new(0.25))));
        for h in 0..100 {
            q.submit(h, Op::Read, h as u64 * 4096, 4096, 0, 0);
        }
        for h in 100..120 {
            q.submit(h, Op::Write, h as u64 * 4096, 4096, REBUILD_PROCESS, 0);
        }
        let mut rebuild = 0;
        for _ in 0..40 {
            let r = q.next_for_device(0).expect("queued");
            rebuild += (r.op == Op::Write) as u32;
            q.complete(r.tag, 1);
        }
        assert_eq!(rebuild, 10, "a quarter of the dispatches while both wait");
    }
}
