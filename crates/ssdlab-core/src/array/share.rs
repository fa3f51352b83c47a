//! A streaming engine's arbitration at each member: host I/O and rebuild I/O wait in queues
//! of their own, and while the host has I/O at the member (waiting or in the drive) the
//! rebuild gets its configured share of the member's time, however deep or shallow the
//! host's queue is, as a RAID controller's "rebuild rate" is a share of its resources while
//! there is host I/O. With no host I/O the rebuild takes everything. (Arbitrating only among
//! requests still waiting would leave the share to the drive whenever both sides fit in its
//! command queue: a 32-deep SATA drive then served the rebuild's 1 MiB units first-come
//! first-served beside 64 KiB host reads, and shares of 0.001 and 0.5 gave the same
//! result.) Time is counted in bytes dispatched (the
//! member's transfer time at its rate), so that the share does not depend on how large the
//! engine's rebuild units are against the host's requests: a share of *commands*, as NVMe's
//! weighted round robin gives, would hand a rebuild of 1 MiB units most of the bytes beside
//! 128 KiB host pieces. Within each queue, first come, first served.
//!
//! A drive serves the commands it holds in its own order, so the share alone cannot keep a
//! host command from waiting behind many of the rebuild's large ones sent while the host
//! had nothing at the member (its I/O at the other members, or a shallow queue). So while
//! the host uses the array but not this member — it has I/O elsewhere in the array, or had
//! some less than `idle_after` ago — the rebuild keeps at most `beside_host` commands in the
//! drive; the drives of an array the host has left idle, it fills.

use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;

use crate::block::{IoScheduler, Request, SchedCtx};
use crate::io::Tag;
use crate::engine::Time;

/// The process number an array gives its rebuild I/O at the members.
pub const REBUILD_PROCESS: u32 = u32::MAX;

/// One side of the arbitration (the host's I/O, or the rebuild's) at a member.
#[derive(Default)]
struct Side {
    /// Waiting requests and their lengths.
    waiting: VecDeque<(Tag, u64)>,
    /// Requests in the drive.
    in_drive: u32,
    /// Bytes dispatched while the other side had I/O at the member.
    served: u64,
}

impl Side {
    /// Requests waiting or in the drive.
    fn active(&self) -> bool {
        self.in_drive > 0 || !self.waiting.is_empty()
    }

    /// Send the oldest waiting request; `contended`: the other side has I/O at the member.
    fn send(&mut self, contended: bool) -> Option<Tag> {
        let (tag, len) = self.waiting.pop_front()?;
        if contended {
            self.served += len;
        }
        self.in_drive += 1;
        Some(tag)
    }
}

pub struct RebuildShare {
    share: f64,
    beside_host: u32,
    host: Side,
    rebuild: Side,
    idle_after: Time,
    /// The host's use of the whole array (kept by the array).
    array_host: Rc<HostActivity>,
}

/// The host's I/O in an array, as its members' arbitration sees it.
#[derive(Default)]
pub struct HostActivity {
    /// Requests in the array now.
    in_array: Cell<u32>,
    /// When the last one left.
    last_left: Cell<Time>,
}

impl HostActivity {
    pub fn arrive(&self) {
        self.in_array.set(self.in_array.get() + 1);
    }

    pub fn leave(&self, now: Time) {
        self.in_array.set(self.in_array.get() - 1);
        self.last_left.set(now);
    }

    /// The host has I/O in the array, or had some less than `idle_after` before `now`.
    fn busy(&self, now: Time, idle_after: Time) -> bool {
        self.in_array.get() > 0 || (self.last_left.get() > 0 && now < self.last_left.get() + idle_after)
    }
}

impl RebuildShare {
    /// `beside_host`: the rebuild's commands in the drive while the host uses the array
    /// (`array_host`: it has I/O there, or had some less than `idle_after` ago) but has none
    /// at this member.
    pub fn new(share: f64, beside_host: u32, idle_after: Time, array_host: Rc<HostActivity>) -> RebuildShare {
        assert!(beside_host >= 1, "the rebuild must be able to send");
        RebuildShare { share, beside_host, host: Side::default(), rebuild: Side::default(), idle_after, array_host }
    }

    fn side(&mut self, rq: &Request) -> &mut Side {
        if rq.process == REBUILD_PROCESS {
            &mut self.rebuild
        } else {
            &mut self.host
        }
    }

    fn send_host(&mut self) -> Option<Tag> {
        let contended = self.rebuild.active();
        self.host.send(contended)
    }

    fn send_rebuild(&mut self) -> Option<Tag> {
        let contended = self.host.active();
        self.rebuild.send(contended)
    }

    /// The rebuild is behind its share of the bytes served under contention.
    fn rebuild_is_due(&self) -> bool {
        self.rebuild.served as f64 * (1.0 - self.share) <= self.host.served as f64 * self.share
    }
}

impl IoScheduler for RebuildShare {
    fn name(&self) -> &'static str {
        "none"
    }

    fn insert(&mut self, tag: Tag, rq: &Request, _ctx: &mut SchedCtx) {
        self.side(rq).waiting.push_back((tag, rq.len));
    }

    fn dispatch(&mut self, ctx: &mut SchedCtx) -> Option<Tag> {
        if self.rebuild.waiting.is_empty() {
            return self.send_host();
        }
        if self.host.active() {
            // The host's I/O is under way here (waiting or in the drive): the rebuild goes only
            // while it is behind its share. A held rebuild request goes at a later dispatch,
            // which the completion of the host's I/O brings at the latest.
            return if self.rebuild_is_due() { self.send_rebuild() } else { self.send_host() };
        }
        if self.array_host.busy(ctx.now, self.idle_after) && self.rebuild.in_drive >= self.beside_host {
            // The host uses the array, not this member now: sent again when one of the
            // rebuild's commands here completes, at the latest.
            return None;
        }
        self.send_rebuild()
    }

    fn completed(&mut self, _tag: Tag, rq: &Request, _ctx: &mut SchedCtx) {
        self.side(rq).in_drive -= 1;
    }

    fn timer(&mut self, _key: u16, _token: u32, _ctx: &mut SchedCtx) {}

    fn queued(&self) -> usize {
        self.host.waiting.len() + self.rebuild.waiting.len()
    }

    /// Never asked: it takes no merges.
    fn requests_merged(&mut self, _kept: Tag, _kept_rq: &Request, gone: Tag) {
        self.host.waiting.retain(|&(t, _)| t != gone);
        self.rebuild.waiting.retain(|&(t, _)| t != gone);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{BlockQueue, QueueBio, Scheduler};
    use crate::io::Op;

    #[test]
    fn the_rebuild_gets_its_share_of_bytes_behind_a_deep_host_queue() {
        // 4 KiB host reads against 64 KiB rebuild writes: a quarter of the bytes, not of the
        // commands, goes to the rebuild while both wait.
        let mut q = BlockQueue::new(1, 10000, Scheduler::Custom(Box::new(RebuildShare::new(0.25, u32::MAX, 0, Rc::default()))));
        for h in 0..4000 {
            q.submit(QueueBio::new(h, Op::Read, h as u64 * 4096, 4096, 0), 0);
        }
        for h in 4000..4100 {
            q.submit(QueueBio::new(h, Op::Write, (1 << 30) + (h as u64 - 4000) * 65536, 65536, REBUILD_PROCESS), 0);
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

    /// A host queue shallow enough to fit in the drive's command queue beside the rebuild's:
    /// the share still governs. 8 host reads of 64 KiB kept in flight (one resubmitted per
    /// completion) against a rebuild with 1 MiB units always waiting, in a 32-deep drive
    /// that completes its oldest command at each step.
    #[test]
    fn the_share_governs_a_host_queue_that_fits_in_the_drive() {
        for share in [0.05, 0.5] {
            let mut q = BlockQueue::new(32, 1000, Scheduler::Custom(Box::new(RebuildShare::new(share, u32::MAX, 0, Rc::default()))));
            let mut next_tag = 0u32;
            let mut submit = |q: &mut BlockQueue, rebuild: bool, now: u64| {
                let (len, process, op) = if rebuild { (1 << 20, REBUILD_PROCESS, Op::Write) } else { (65536, 0, Op::Read) };
                q.submit(QueueBio::new(next_tag, op, next_tag as u64 * len, len, process), now);
                next_tag += 1;
            };
            for _ in 0..8 {
                submit(&mut q, false, 0);
            }
            for _ in 0..64 {
                submit(&mut q, true, 0);
            }
            let mut in_drive = VecDeque::new();
            let (mut host, mut rebuild) = (0u64, 0u64);
            for step in 0..20_000 {
                while let Some(r) = q.next_for_device(step) {
                    in_drive.push_back(r);
                }
                let r = in_drive.pop_front().expect("the drive holds commands");
                q.complete(r.tag, step);
                if r.process == REBUILD_PROCESS {
                    rebuild += r.len;
                } else {
                    host += r.len;
                }
                submit(&mut q, r.process == REBUILD_PROCESS, step);
            }
            let got = rebuild as f64 / (host + rebuild) as f64;
            assert!((got - share).abs() < 0.02 * share.max(0.1), "share {share}: the rebuild got {got} of the bytes");
        }
    }

    /// An idle array's member queue fills with the rebuild's commands; while the host has I/O
    /// at another member, or had some less than `idle_after` ago, the rebuild keeps one here.
    #[test]
    fn beside_the_host_the_rebuild_keeps_one_command_in_the_drive() {
        const MIB: u64 = 1 << 20;
        let array_host = Rc::new(HostActivity::default());
        let mut q = BlockQueue::new(32, 1000, Scheduler::Custom(Box::new(RebuildShare::new(0.5, 1, 100, array_host.clone()))));
        for t in 0..100 {
            q.submit(QueueBio::new(t, Op::Write, t as u64 * MIB, MIB, REBUILD_PROCESS), 0);
        }
        let mut in_drive: Vec<_> = std::iter::from_fn(|| q.next_for_device(0)).collect();
        assert_eq!(in_drive.len(), 32, "no host I/O: the rebuild takes the whole queue");
        // The host's I/O is at another member: still one rebuild command here at a time.
        for r in in_drive.drain(..) {
            q.complete(r.tag, 300);
        }
        array_host.arrive();
        let sent: Vec<_> = std::iter::from_fn(|| q.next_for_device(301)).collect();
        assert_eq!(sent.len(), 1, "rebuild commands sent beside the host's I/O elsewhere");
        // The host leaves: for `idle_after` (100) the array is still in use, then idle.
        array_host.leave(302);
        q.complete(sent[0].tag, 350);
        let next: Vec<_> = std::iter::from_fn(|| q.next_for_device(350)).collect();
        assert_eq!(next.len(), 1, "the host left less than idle_after ago");
        q.complete(next[0].tag, 402);
        let sent = std::iter::from_fn(|| q.next_for_device(402)).count();
        assert!(sent > 1, "the host gone for idle_after, the rebuild fills the queue again");
    }

    #[test]
    fn alone_either_side_takes_everything() {
        let mut q = BlockQueue::new(1, 1000, Scheduler::Custom(Box::new(RebuildShare::new(0.1, 1, 0, Rc::default()))));
        for h in 0..10 {
            q.submit(QueueBio::new(h, Op::Write, h as u64 * 65536, 65536, REBUILD_PROCESS), 0);
        }
        for _ in 0..10 {
            let r = q.next_for_device(0).expect("queued");
            assert_eq!(r.op, Op::Write);
            q.complete(r.tag, 1);
        }
        assert!(q.next_for_device(0).is_none());
    }
}
