//! Requests kept two ways, as Linux's sorting elevators keep them: by sector, to sweep the
//! disk, and by arrival with an expiry time, to bound how long any request waits.
//!
//! Removal from the arrival list is lazy: a dispatched request's entry stays until it reaches
//! the front. Tags are reused, so each entry carries its insertion number, and the caller
//! says whether a (tag, insertion) pair is still waiting. [`RequestBook`] is that caller for
//! the sorting schedulers (deadline, anticipatory, cfq, bfq): it books each request's list,
//! extent and insertion number by tag.

use std::collections::{BTreeSet, VecDeque};

use crate::block::request::Request;
use crate::io::Tag;
use crate::engine::Time;

/// Request `tag`'s place in a table kept by tag, grown to hold it (tags are dense from 0).
#[inline(always)]
pub fn tag_slot<T: Clone + Default>(table: &mut Vec<T>, tag: Tag) -> &mut T {
    let i = tag as usize;
    if i >= table.len() {
        table.resize(i + 1, T::default());
    }
    &mut table[i]
}

/// The list of a request booked in none: a flush.
const NO_LIST: u32 = u32::MAX;

/// What a [`RequestBook`] knows of one request.
#[derive(Clone, Copy, Debug, Default)]
pub struct Booked {
    /// The list it waits in: a direction (deadline, anticipatory) or a process's queue (cfq,
    /// bfq).
    pub list: u32,
    pub process: u32,
    pub offset: u64,
    pub end: u64,
    /// Its insertion number: tags are reused, so an arrival entry names both.
    pub seq: u64,
    /// Inserted and not yet dispatched (nor merged away).
    pub queued: bool,
}

/// A scheduler's lists as a [`RequestBook`] numbers them: per direction, or one in each
/// process's queue (where it stays, beside the queue's other state).
pub trait Lists {
    fn list(&mut self, i: u32) -> &mut SortedFifo;
}

impl<const N: usize> Lists for [SortedFifo; N] {
    fn list(&mut self, i: u32) -> &mut SortedFifo {
        &mut self[i as usize]
    }
}

/// The book the sorting schedulers keep of the requests they hold, by tag: which of their
/// [`Lists`] each waits in, where it lies, its insertion number, whether it still waits;
/// the counts; and the flushes, which wait in no list and go first, in order. The
/// operations that move a request in or out of its list take the lists.
#[derive(Debug, Default)]
pub struct RequestBook {
    entries: Vec<Booked>,
    flushes: VecDeque<Tag>,
    /// Insertions numbered so far; merges take a number too (see `requests_merged`).
    inserted: u64,
    queued: usize,
    /// Where the last request taken ended: the head, for schedulers that seek the nearest.
    head: u64,
}

impl RequestBook {
    /// Books `entry` for `tag` under the next insertion number, which it returns.
    #[inline(always)]
    fn book(&mut self, tag: Tag, entry: Booked) -> u64 {
        self.inserted += 1;
        self.queued += 1;
        *tag_slot(&mut self.entries, tag) = Booked { seq: self.inserted, queued: true, ..entry };
        self.inserted
    }

    /// Request `tag` (`rq`) waits in list `list` of `lists` until it is taken; it expires at
    /// `expire`.
    #[inline(always)]
    pub fn insert(&mut self, tag: Tag, rq: &Request, list: u32, expire: Time, lists: &mut impl Lists) {
        let entry = Booked { list, process: rq.process, offset: rq.offset, end: rq.offset + rq.len, ..Booked::default() };
        let seq = self.book(tag, entry);
        lists.list(list).insert(tag, rq.offset, seq, expire);
    }

    /// Flush `tag` waits in no list: it goes before any request, after earlier flushes.
    pub fn insert_flush(&mut self, tag: Tag) {
        self.book(tag, Booked { list: NO_LIST, ..Booked::default() });
        self.flushes.push_back(tag);
    }

    /// The oldest flush waiting, taken for the device.
    #[inline(always)]
    pub fn take_flush(&mut self) -> Option<Tag> {
        let tag = self.flushes.pop_front()?;
        self.entries[tag as usize].queued = false;
        self.queued -= 1;
        Some(tag)
    }

    /// Request `tag` leaves its list for the device; the head moves to its end.
    #[inline(always)]
    pub fn take(&mut self, tag: Tag, lists: &mut impl Lists) -> Booked {
        let e = &mut self.entries[tag as usize];
        e.queued = false;
        lists.list(e.list).remove(tag, e.offset);
        self.queued -= 1;
        self.head = e.end;
        *e
    }

    /// What is booked for `tag` (its last request's, once that left).
    #[inline(always)]
    pub fn entry(&self, tag: Tag) -> Booked {
        self.entries[tag as usize]
    }

    /// Requests inserted and not yet taken, flushes included.
    #[inline(always)]
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Where the last request taken ended.
    #[inline(always)]
    pub fn head(&self) -> u64 {
        self.head
    }

    /// Whether (tag, insertion) is a request still waiting: what a [`SortedFifo`]'s arrival
    /// list asks of the entries it meets.
    #[inline(always)]
    pub fn waiting(&self) -> impl Fn(Tag, u64) -> bool + '_ {
        move |tag, seq| {
            let e = &self.entries[tag as usize];
            e.queued && e.seq == seq
        }
    }

    /// The request a process's queue sends next (cfq_choose_req, bfq_choose_req): from its
    /// list `fifo`, the oldest if expired, looked at once per service (`*fifo_checked`), else
    /// the nearest to the head, or one behind it within `back_seek.0` bytes at `back_seek.1`
    /// times the distance ([`SortedFifo::expired_or_nearest`]). The queue holds a request.
    #[inline(always)]
    pub fn choose(&self, fifo: &mut SortedFifo, fifo_checked: &mut bool, now: Time, back_seek: (u64, u64)) -> Tag {
        let seek = (self.head, back_seek.0, back_seek.1);
        fifo.expired_or_nearest(fifo_checked, now, seek, self.waiting()).expect("a queued request")
    }

    /// Queued request `tag` grew to `rq` by a merged bio; `front`: at its start, which moved
    /// from `old_offset`, so it moves in its sorted list.
    pub fn merged(&mut self, tag: Tag, rq: &Request, front: bool, old_offset: u64, lists: &mut impl Lists) {
        let e = &mut self.entries[tag as usize];
        e.end = rq.offset + rq.len;
        if front {
            lists.list(e.list).moved(tag, old_offset, rq.offset);
            e.offset = rq.offset;
        }
    }

    /// Queued request `gone` merged into queued request `kept` (now `kept_rq`, in the same
    /// list) and leaves. `kept` keeps the earlier expiry ([`SortedFifo::absorb`]); the
    /// merge takes an insertion number, which `kept` carries if it took `gone`'s place.
    pub fn requests_merged(&mut self, kept: Tag, kept_rq: &Request, gone: Tag, lists: &mut impl Lists) {
        let g = self.entries[gone as usize];
        self.entries[gone as usize].queued = false;
        self.queued -= 1;
        self.inserted += 1;
        let k = &mut self.entries[kept as usize];
        k.end = kept_rq.offset + kept_rq.len;
        lists.list(g.list).absorb(kept, &mut k.seq, (gone, g.seq), g.offset, self.inserted);
    }
}

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
        // A lone request is the answer whichever rule picks it (ahead, behind, or lowest):
        // the common case of a process's queue, spared two searches.
        if self.sorted.len() == 1 {
            return self.sorted.first().map(|&(_, t)| t);
        }
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
    #[inline]
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
    use crate::io::Op;

    fn read(process: u32, offset: u64, len: u64) -> Request {
        Request::new(Op::Read, offset, len, process, 0, 0)
    }

    #[test]
    fn a_book_numbers_insertions_flushes_and_merges_alike_in_order() {
        let (mut b, mut lists) = (RequestBook::default(), <[SortedFifo; 2]>::default());
        b.insert(0, &read(1, 0, 4096), 0, 10, &mut lists);
        b.insert_flush(5);
        b.insert(1, &read(1, 4096, 4096), 0, 20, &mut lists);
        assert_eq!((b.entry(0).seq, b.entry(5).seq, b.entry(1).seq), (1, 2, 3));
        assert_eq!(b.queued(), 3);
        // 1 continues 0 and merges into it: the merge takes number 4; 0, the older, keeps 1.
        b.requests_merged(0, &read(1, 0, 8192), 1, &mut lists);
        assert_eq!((b.entry(0).seq, b.entry(0).end, b.queued()), (1, 8192, 2));
        assert!(!b.entry(1).queued);
        b.insert(1, &read(2, 1 << 20, 4096), 1, 30, &mut lists); // tag 1 reused, in the other list
        assert_eq!(b.entry(1).seq, 5);
        assert_eq!(b.take_flush(), Some(5), "the flush goes first");
        assert_eq!(b.take_flush(), None);
        assert_eq!(lists[0].oldest(b.waiting()), Some((0, 10)));
        assert_eq!(lists[1].oldest(b.waiting()), Some((1, 30)));
    }

    #[test]
    fn a_request_taken_moves_the_head_and_leaves_the_arrival_list() {
        let (mut b, mut lists) = (RequestBook::default(), <[SortedFifo; 1]>::default());
        b.insert(0, &read(1, 8192, 4096), 0, 10, &mut lists);
        b.insert(1, &read(1, 0, 4096), 0, 20, &mut lists);
        let e = b.take(0, &mut lists);
        assert_eq!((e.list, e.offset, e.end, e.queued), (0, 8192, 12288, false));
        assert_eq!((b.head(), b.queued()), (12288, 1));
        b.insert(0, &read(1, 1 << 20, 4096), 0, 5, &mut lists); // tag 0 again: its old entry is stale
        assert_eq!(lists[0].oldest(b.waiting()), Some((1, 20)));
        assert_eq!(lists[0].iter().count(), 2);
    }

    #[test]
    fn a_front_merge_moves_the_request_in_sector_order_and_a_merge_keeps_the_earlier_expiry() {
        let (mut b, mut lists) = (RequestBook::default(), <[SortedFifo; 1]>::default());
        b.insert(0, &read(1, 1 << 20, 4096), 0, 10, &mut lists); // the older, high on the disk
        b.insert(1, &read(1, 8192, 4096), 0, 20, &mut lists);
        b.merged(1, &read(1, 4096, 8192), true, 8192, &mut lists);
        assert_eq!(lists[0].iter().next(), Some(&(4096, 1)));
        assert_eq!((b.entry(1).offset, b.entry(1).end), (4096, 12288));
        // 0 joins 1 (as if 1 reached up to it): 1 takes 0's place in arrival, and its expiry.
        b.requests_merged(1, &read(1, 4096, 1 << 20), 0, &mut lists);
        assert_eq!(b.entry(1).seq, 3, "the merge's number");
        assert_eq!(lists[0].oldest(b.waiting()), Some((1, 10)));
        assert_eq!(lists[0].iter().count(), 1);
    }

    #[test]
    fn a_process_queue_chooses_from_the_head_of_the_last_request_taken() {
        let (mut b, mut lists) = (RequestBook::default(), <[SortedFifo; 2]>::default());
        b.insert(0, &read(1, 0, 4096), 1, 100, &mut lists);
        b.insert(1, &read(1, 1 << 30, 4096), 1, 100, &mut lists);
        b.insert(2, &read(2, 1 << 30, 4096), 0, 100, &mut lists);
        b.take(2, &mut lists); // another queue's: the head is now at 1 GiB + 4 KiB
        let mut checked = false;
        assert_eq!(b.choose(&mut lists[1], &mut checked, 0, (1 << 20, 2)), 1, "just behind the head");
        assert_eq!(b.choose(&mut lists[1], &mut false, 100, (1 << 20, 2)), 0, "expired: the oldest");
    }

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
        let mut one = SortedFifo::default();
        for head in [0, 100, 1 << 40] {
            one.insert(3, 1 << 30, 1, 0);
            assert_eq!(one.nearest(head, 0, 2), Some(3), "a lone request, ahead, behind or too far");
            one.remove(3, 1 << 30);
        }
        assert_eq!(one.nearest(0, 0, 2), None);
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
