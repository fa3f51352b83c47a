//! The deadline elevator (Linux's `deadline`, and blk-mq's `mq-deadline`, which keeps its
//! algorithm and defaults): requests sorted by sector per direction and dispatched in
//! batches that sweep upward, reads preferred over writes until writes have been passed over
//! `writes_starved` times, and a request whose expiry time has passed starts the next batch.

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::lists::{RequestBook, SortedFifo};
use super::{IoScheduler, SchedCtx};
use crate::block::request::Request;
use crate::io::{Op, Tag};
use crate::engine::{Time, NS_PER_MS};
use crate::error::ConfigError;

/// `/sys/block/*/queue/iosched/` of deadline (times in ns; sysfs shows ms).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DeadlineTunables {
    pub read_expire_ns: Time,
    pub write_expire_ns: Time,
    /// Requests in one sorted batch before the expiry lists are checked again.
    pub fifo_batch: u32,
    /// Read batches that may pass over waiting writes before writes get one.
    pub writes_starved: u32,
    /// Whether bios may merge at the front of a queued request.
    pub front_merges: bool,
}

impl Default for DeadlineTunables {
    /// The kernel's defaults (block/deadline-iosched.c, block/mq-deadline.c).
    fn default() -> Self {
        DeadlineTunables {
            read_expire_ns: 500 * NS_PER_MS,
            write_expire_ns: 5_000 * NS_PER_MS,
            fifo_batch: 16,
            writes_starved: 2,
            front_merges: true,
        }
    }
}

impl DeadlineTunables {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.fifo_batch == 0 {
            return Err(ConfigError::new("iosched.fifo_batch", "must be at least 1".into()));
        }
        Ok(())
    }
}

pub struct Deadline {
    name: &'static str,
    t: DeadlineTunables,
    /// Per direction (read, write): queued requests by sector and by arrival.
    lists: [SortedFifo; 2],
    /// The requests it holds, flushes (which go first) included.
    book: RequestBook,
    /// Where the current batch's sweep is: the key of the last request it dispatched.
    next_after: Option<(u32, (u64, Tag))>,
    batching: u32,
    starved: u32,
}

impl Deadline {
    pub fn new(t: DeadlineTunables, name: &'static str) -> Deadline {
        Deadline {
            name,
            t,
            lists: Default::default(),
            book: RequestBook::default(),
            next_after: None,
            batching: 0,
            starved: 0,
        }
    }

    /// The oldest queued request of `dir` and whether its expiry has passed.
    fn fifo_head(&mut self, dir: u32, now: Time) -> Option<(Tag, bool)> {
        self.lists[dir as usize].oldest(self.book.waiting()).map(|(tag, expire)| (tag, now >= expire))
    }

    fn take(&mut self, tag: Tag) -> Tag {
        let e = self.book.take(tag, &mut self.lists);
        self.next_after = Some((e.list, (e.offset, tag)));
        self.batching += 1;
        tag
    }
}

impl IoScheduler for Deadline {
    fn name(&self) -> &'static str {
        self.name
    }

    fn insert(&mut self, tag: Tag, rq: &Request, ctx: &mut SchedCtx) {
        if rq.op == Op::Flush {
            self.book.insert_flush(tag);
            return;
        }
        let dir = if rq.op == Op::Read { 0 } else { 1 };
        let expire = if dir == 0 { self.t.read_expire_ns } else { self.t.write_expire_ns };
        self.book.insert(tag, rq, dir, ctx.now + expire, &mut self.lists);
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx) -> Option<Tag> {
        if let Some(tag) = self.book.take_flush() {
            return Some(tag);
        }
        // Go on with the batch: the next request up from the last one dispatched.
        if let Some((dir, key)) = self.next_after {
            if self.batching < self.t.fifo_batch {
                if let Some(tag) = self.lists[dir as usize].after(key) {
                    return Some(self.take(tag));
                }
            }
        }
        // A new batch: reads unless writes have waited through `writes_starved` of them.
        let reads = !self.lists[0].is_empty();
        let writes = !self.lists[1].is_empty();
        let dir = if reads && !(writes && self.starved >= self.t.writes_starved) {
            if writes {
                self.starved += 1;
            }
            0
        } else if writes {
            self.starved = 0;
            1
        } else {
            return None;
        };
        // Start from the oldest request if it has expired or the sweep has nothing further up.
        let (oldest, expired) = self.fifo_head(dir, ctx.now).expect("a queued request of the chosen direction");
        let further = match self.next_after {
            Some((d, key)) if d == dir => self.lists[dir as usize].after(key),
            _ => None,
        };
        let tag = match further {
            Some(t) if !expired => t,
            _ => oldest,
        };
        self.batching = 0;
        Some(self.take(tag))
    }

    fn completed(&mut self, _tag: Tag, _rq: &Request, _ctx: &mut SchedCtx) {}

    fn timer(&mut self, _key: u16, _token: u32, _ctx: &mut SchedCtx) {}

    fn queued(&self) -> usize {
        self.book.queued()
    }

    fn merges(&self) -> bool {
        true
    }

    fn allow_merge(&self, _rq: &Request, _process: u32, _sync: bool, front: bool) -> bool {
        !front || self.t.front_merges
    }

    fn merged(&mut self, tag: Tag, rq: &Request, front: bool, old_offset: u64) {
        self.book.merged(tag, rq, front, old_offset, &mut self.lists);
    }

    fn requests_merged(&mut self, kept: Tag, kept_rq: &Request, gone: Tag) {
        self.book.requests_merged(kept, kept_rq, gone, &mut self.lists);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::iosched::{ArmedTimer, SchedCtx};

    fn rq(op: Op, offset: u64) -> Request {
        Request::new(op, offset, 4096, 0, 0, 0)
    }

    fn sched() -> Deadline {
        Deadline::new(DeadlineTunables { fifo_batch: 4, ..Default::default() }, "deadline")
    }

    fn run(d: &mut Deadline, now: Time) -> Vec<Tag> {
        let mut armed: Vec<ArmedTimer> = vec![];
        let mut out = vec![];
        while let Some(t) = d.dispatch(&mut SchedCtx::new(now, &mut armed)) {
            out.push(t);
        }
        out
    }

    #[test]
    fn batches_sweep_upward_by_sector() {
        let mut d = sched();
        let mut armed = vec![];
        for (tag, off) in [(0, 50), (1, 10), (2, 40), (3, 20)] {
            d.insert(tag, &rq(Op::Read, off * 4096), &mut SchedCtx::new(0, &mut armed));
        }
        // The first batch starts at the oldest (50), sweeps up (nothing above), then the next
        // batch starts at the oldest again.
        assert_eq!(run(&mut d, 1), vec![0, 1, 3, 2]);
    }

    #[test]
    fn an_expired_read_starts_the_next_batch() {
        let mut d = sched(); // batches of 4
        let mut armed = vec![];
        let mut at = |d: &mut Deadline, now: Time, n: usize| -> Vec<Tag> {
            let mut c = SchedCtx::new(now, &mut armed);
            (0..n).map(|_| d.dispatch(&mut c).unwrap()).collect()
        };
        let mut armed2 = vec![];
        d.insert(0, &rq(Op::Read, 1_000 * 4096), &mut SchedCtx::new(0, &mut armed2));
        assert_eq!(at(&mut d, 0, 1), vec![0]);
        d.insert(1, &rq(Op::Read, 0), &mut SchedCtx::new(1, &mut armed2)); // low: behind the sweep
        for tag in 2..10u32 {
            d.insert(tag, &rq(Op::Read, tag as u64 * 1_000 * 4096), &mut SchedCtx::new(2, &mut armed2));
        }
        assert_eq!(at(&mut d, 3, 3), vec![2, 3, 4], "the batch sweeps up past the low request");
        assert_eq!(at(&mut d, 4, 4), vec![5, 6, 7, 8], "a new batch goes on up: nothing has expired");
        let late = 1 + 500 * NS_PER_MS;
        assert_eq!(at(&mut d, late, 2), vec![1, 9], "the expired read starts the next batch");
    }

    #[test]
    fn a_reused_tag_does_not_inherit_an_old_expiry() {
        let mut d = Deadline::new(DeadlineTunables { fifo_batch: 1, ..Default::default() }, "deadline");
        let mut armed = vec![];
        d.insert(0, &rq(Op::Read, 100 * 4096), &mut SchedCtx::new(0, &mut armed));
        assert_eq!(d.dispatch(&mut SchedCtx::new(0, &mut armed)), Some(0));
        d.insert(1, &rq(Op::Read, 0), &mut SchedCtx::new(1, &mut armed));
        d.insert(0, &rq(Op::Read, 200 * 4096), &mut SchedCtx::new(2, &mut armed)); // tag 0 again
        let late = 1 + 500 * NS_PER_MS;
        assert_eq!(d.dispatch(&mut SchedCtx::new(late, &mut armed)), Some(1), "the oldest live request expired");
    }

    #[test]
    fn writes_get_a_batch_after_writes_starved_read_batches() {
        let mut d = Deadline::new(DeadlineTunables { fifo_batch: 1, ..Default::default() }, "deadline");
        let mut armed = vec![];
        for tag in 0..4 {
            d.insert(tag, &rq(Op::Read, tag as u64 * 4096), &mut SchedCtx::new(0, &mut armed));
        }
        d.insert(9, &rq(Op::Write, 1 << 30), &mut SchedCtx::new(0, &mut armed));
        assert_eq!(run(&mut d, 1), vec![0, 1, 9, 2, 3], "two read batches, then the write");
    }
}
