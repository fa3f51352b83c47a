//! Requests kept two ways, as Linux's sorting elevators keep them: by sector, to sweep the
//! disk, and by arrival with an expiry time, to bound how long any request waits.
//!
//! Removal from the arrival list is lazy: a dispatched request's entry stays until it reaches
//! the front. Tags are reused, so each entry carries its insertion number, and the caller
//! says whether a (tag, insertion) pair is still waiting.

use std::collections::{BTreeSet, VecDeque};

use crate::io::Tag;
use crate::engine::Time;

#[derive(Debug, Default)]
pub struct SortedFifo {
    sorted: BTreeSet<(u64, Tag)>,
    fifo: VecDeque<(Tag, u64, Time)>,
}

impl SortedFifo {
    /// Request `tag` (insertion number `seq`) at byte `offset`, expiring at `expire`.
    pub fn insert(&mut self, tag: Tag, offset: u64, seq: u64, expire: Time) {
        self.sorted.insert((offset, tag));
        self.fifo.push_back((tag, seq, expire));
    }

    /// Request `tag` at `offset` left (dispatched); its arrival entry goes when met.
    pub fn remove(&mut self, tag: Tag, offset: u64) {
        self.sorted.remove(&(offset, tag));
    }

    /// Request `tag` now starts at `new` (a bio merged at its front).
    pub fn moved(&mut self, tag: Tag, old: u64, new: u64) {
        self.sorted.remove(&(old, tag));
        self.sorted.insert((new, tag));
    }

    /// Waiting request `gone` (insertion `gone_seq`, at `gone_offset`) merged into waiting
    /// request `kept` (insertion `*kept_seq`) and leaves. If `gone` arrived first, `kept` takes
    /// its place in the arrival list and so its expiry (elv_merge_requests keeps the earlier
    /// one): `gone`'s entry is renamed to `kept` under insertion number `new_seq`, written to
    /// `*kept_seq` (`kept`'s own entry is stale from then on).
    pub fn absorb(&mut self, kept: Tag, kept_seq: &mut u64, gone: (Tag, u64), gone_offset: u64, new_seq: u64) {
        self.sorted.remove(&(gone_offset, gone.0));
        for e in self.fifo.iter_mut() {
            if (e.0, e.1) == (kept, *kept_seq) {
                return; // kept is the older: it keeps its own expiry
            }
            if (e.0, e.1) == gone {
                *e = (kept, new_seq, e.2);
                *kept_seq = new_seq;
                return;
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The oldest waiting request and its expiry; `waiting(tag, seq)` tells live entries
    /// from those of requests gone (which are dropped on the way).
    pub fn oldest(&mut self, waiting: impl Fn(Tag, u64) -> bool) -> Option<(Tag, Time)> {
        while let Some(&(tag, seq, expire)) = self.fifo.front() {
            if waiting(tag, seq) {
                return Some((tag, expire));
            }
            self.fifo.pop_front();
        }
        None
    }

    /// The request after `key` (offset, tag) in sector order.
    pub fn after(&self, key: (u64, Tag)) -> Option<Tag> {
        use std::ops::Bound::{Excluded, Unbounded};
        self.sorted.range((Excluded(key), Unbounded)).next().map(|&(_, t)| t)
    }

    /// The nearest request to `head` going forward, or behind it within `max_back` bytes
    /// if its distance times `penalty` is shorter; when all lie further behind, the lowest.
    pub fn nearest(&self, head: u64, max_back: u64, penalty: u64) -> Option<Tag> {
        let ahead = self.sorted.range((head, 0)..).next().copied();
        let behind = self.sorted.range(..(head, 0)).next_back().copied().filter(|&(o, _)| head - o <= max_back);
        match (ahead, behind) {
            (Some(a), Some(b)) => Some(if a.0 - head <= (head - b.0) * penalty { a.1 } else { b.1 }),
            (Some(a), None) => Some(a.1),
            (None, Some(b)) => Some(b.1),
            (None, None) => self.sorted.iter().next().map(|&(_, t)| t),
        }
    }

    /// The request a per-process queue sends next (cfq_choose_req, bfq_choose_req): its
    /// oldest if expired, looked at once per service (`*fifo_checked`), else the nearest to
    /// `head` as :meth:`nearest` finds it.
    pub fn expired_or_nearest(
        &mut self,
        fifo_checked: &mut bool,
        now: Time,
        (head, max_back, penalty): (u64, u64, u64),
        waiting: impl Fn(Tag, u64) -> bool,
    ) -> Option<Tag> {
        if !*fifo_checked {
            *fifo_checked = true;
            if let Some((tag, expire)) = self.oldest(waiting) {
                if now >= expire {
                    return Some(tag);
                }
            }
        }
        self.nearest(head, max_back, penalty)
    }

    /// Every waiting request by sector.
    pub fn iter(&self) -> impl Iterator<Item = &(u64, Tag)> {
        self.sorted.iter()
    }
}

/// Whether the device queues commands, learned as cfq and bfq learn it (hw_tag): the most
/// requests it held at once, judged every `needed` samples taken while the queue was busy.
#[derive(Debug)]
pub struct QueueingSampler {
    needed: u32,
    min_peak: u32,
    samples: u32,
    peak: u32,
    /// The judgement so far; both schedulers assume queueing until shown otherwise.
    pub queues: bool,
}

impl QueueingSampler {
    /// Judged after `needed` busy samples: the device queues if it held `min_peak` or more.
    pub fn new(needed: u32, min_peak: u32) -> QueueingSampler {
        QueueingSampler { needed, min_peak, samples: 0, peak: 0, queues: true }
    }

    /// One sample: `in_driver` requests in the device; `busy` if the sample counts (enough
    /// requests around to show queueing, by the scheduler's own rule).
    pub fn sample(&mut self, in_driver: u32, busy: bool) {
        self.peak = self.peak.max(in_driver);
        if !busy {
            return;
        }
        self.samples += 1;
        if self.samples < self.needed {
            return;
        }
        self.queues = self.peak >= self.min_peak;
        self.samples = 0;
        self.peak = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_prefers_forward_unless_behind_is_much_closer() {
        let mut l = SortedFifo::default();
        for (tag, off) in [(0, 100), (1, 190), (2, 260)] {
            l.insert(tag, off, tag as u64, 0);
        }
        assert_eq!(l.nearest(200, 1000, 2), Some(1), "60 ahead vs 10 behind x 2 = 20: behind wins");
        assert_eq!(l.nearest(200, 1000, 10), Some(2));
        assert_eq!(l.nearest(195, 1000, 2), Some(1), "5 behind x 2 < 65 ahead");
        assert_eq!(l.nearest(300, 50, 2), Some(2), "40 behind, within 50");
        assert_eq!(l.nearest(300, 30, 2), Some(0), "all too far behind: the lowest");
        assert_eq!(l.after((100, 0)), Some(1));
    }

    #[test]
    fn a_merged_request_takes_the_earlier_expiry() {
        let mut l = SortedFifo::default();
        l.insert(1, 4096, 1, 10); // arrives first, higher on the disk
        l.insert(2, 0, 2, 20);
        // 1 merges into 2 (which precedes it on the disk): 2 now expires at 10.
        let mut seq = 2;
        l.absorb(2, &mut seq, (1, 1), 4096, 3);
        assert_eq!(seq, 3, "2 took 1's place in the arrival list");
        let live = |tag: Tag, seq: u64| (tag, seq) == (2, 3);
        assert_eq!(l.oldest(live), Some((2, 10)));
        assert_eq!(l.iter().count(), 1);
        // The other way round: the older request keeps its own expiry.
        let mut l = SortedFifo::default();
        l.insert(1, 0, 1, 10);
        l.insert(2, 4096, 2, 20);
        let mut seq = 1;
        l.absorb(1, &mut seq, (2, 2), 4096, 3);
        assert_eq!(seq, 1, "the older request keeps its place");
        assert_eq!(l.oldest(|tag, seq| (tag, seq) == (1, 1)), Some((1, 10)));
    }

    #[test]
    fn a_queue_sends_its_expired_oldest_once_per_service_else_the_nearest() {
        let mut l = SortedFifo::default();
        l.insert(1, 1 << 30, 1, 10); // far away, expires at 10
        l.insert(2, 8192, 2, 50);
        let live = |tag: Tag, seq: u64| (tag, seq) == (1, 1) || (tag, seq) == (2, 2);
        let mut checked = false;
        assert_eq!(l.expired_or_nearest(&mut checked, 5, (0, 0, 2), live), Some(2), "not expired yet");
        assert!(checked);
        let mut checked = false;
        assert_eq!(l.expired_or_nearest(&mut checked, 10, (0, 0, 2), live), Some(1), "expired: sent first");
        assert_eq!(l.expired_or_nearest(&mut checked, 10, (0, 0, 2), live), Some(2), "checked once per service");
    }

    #[test]
    fn the_device_queues_if_it_held_enough_at_once_over_the_busy_samples() {
        let mut s = QueueingSampler::new(4, 5);
        assert!(s.queues, "assumed until judged");
        for _ in 0..3 {
            s.sample(2, true);
        }
        s.sample(9, false); // an idle sample still counts for the peak
        assert!(s.queues, "three busy samples: not judged yet");
        s.sample(2, true);
        assert!(s.queues, "peak 9 >= 5");
        for _ in 0..4 {
            s.sample(4, true);
        }
        assert!(!s.queues, "peak 4 < 5 over the next four");
        for _ in 0..4 {
            s.sample(5, true);
        }
        assert!(s.queues, "a peak of exactly 5 is queueing");
    }

    #[test]
    fn stale_arrival_entries_are_skipped() {
        let mut l = SortedFifo::default();
        l.insert(7, 0, 1, 10);
        l.remove(7, 0);
        l.insert(7, 4096, 2, 20); // tag 7 reused
        assert_eq!(l.oldest(|tag, seq| tag == 7 && seq == 2), Some((7, 20)));
    }
}
