//! Requests kept two ways, as Linux's sorting elevators keep them: by sector, to sweep the
//! disk, and by arrival with an expiry time, to bound how long any request waits.
//!
//! Removal from the arrival list is lazy: a dispatched request's entry stays until it reaches
//! the front. Tags are reused, so each entry carries its insertion number, and the caller
//! says whether a (tag, insertion) pair is still waiting.

use std::collections::{BTreeSet, VecDeque};

use crate::device::Tag;
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
    /// request `kept` (insertion `kept_seq`) and leaves. If `gone` arrived first, `kept` takes
    /// its place in the arrival list and so its expiry (elv_merge_requests keeps the earlier
    /// one): `gone`'s entry is renamed to `kept` under insertion number `new_seq`, which the
    /// caller records (`kept`'s own entry is stale from then on). Returns whether it did.
    pub fn absorb(&mut self, kept: (Tag, u64), gone: (Tag, u64), gone_offset: u64, new_seq: u64) -> bool {
        self.sorted.remove(&(gone_offset, gone.0));
        for e in self.fifo.iter_mut() {
            if (e.0, e.1) == kept {
                return false; // kept is the older: it keeps its own expiry
            }
            if (e.0, e.1) == gone {
                *e = (kept.0, new_seq, e.2);
                return true;
            }
        }
        false
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

    /// Every waiting request by sector.
    pub fn iter(&self) -> impl Iterator<Item = &(u64, Tag)> {
        self.sorted.iter()
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
        assert!(l.absorb((2, 2), (1, 1), 4096, 3));
        let live = |tag: Tag, seq: u64| (tag, seq) == (2, 3);
        assert_eq!(l.oldest(live), Some((2, 10)));
        assert_eq!(l.iter().count(), 1);
        // The other way round: the older request keeps its own expiry.
        let mut l = SortedFifo::default();
        l.insert(1, 0, 1, 10);
        l.insert(2, 4096, 2, 20);
        assert!(!l.absorb((1, 1), (2, 2), 4096, 3));
        assert_eq!(l.oldest(|tag, seq| (tag, seq) == (1, 1)), Some((1, 10)));
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
