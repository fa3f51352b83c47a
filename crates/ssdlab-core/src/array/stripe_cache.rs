//! md's stripe cache as a cache (drivers/md/raid5.c): a stripe head keeps its pages after its
//! work is done, on the inactive list and still hashed, until a new stripe takes it over
//! (oldest first). A request reads nothing for a stripe head still there with every page
//! current: `handle_stripe` reads only pages that are not up to date.
//!
//! Kept here: the stripe heads whose every page is current (after a full-stripe or
//! reconstruct-write, or found whole by a request), at most `stripe_cache_size` of them, the
//! least recently used dropped first. A read-modify-write leaves the other data pages of the
//! heads it read for unread; those heads are dropped, as is every head a discard touches (a
//! simplification: md would keep the pages it had).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::layout::PAGE;
use super::layout::Layout;
use super::plan::MemberIo;

pub struct StripeCache {
    capacity: usize,
    /// Whole stripe heads by key (row × pages per chunk + page), with the stamp of their
    /// last use; `order` holds (key, stamp) in order of use, entries whose stamp is stale
    /// skipped.
    heads: FxHashMap<u64, u64>,
    order: VecDeque<(u64, u64)>,
    stamp: u64,
}

impl StripeCache {
    pub fn new(capacity: usize) -> StripeCache {
        StripeCache { capacity: capacity.max(1), heads: FxHashMap::default(), order: VecDeque::new(), stamp: 0 }
    }

    /// md added heads to the cache: as many more may keep their pages.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity.max(self.capacity);
    }

    /// `key` is a whole stripe head in the cache.
    pub fn has(&self, key: u64) -> bool {
        self.heads.contains_key(&key)
    }

    /// `keys` were just used, every page current: kept, as the most recent.
    pub fn keep(&mut self, keys: &[u64]) {
        for &k in keys {
            self.stamp += 1;
            self.heads.insert(k, self.stamp);
            self.order.push_back((k, self.stamp));
        }
        while self.heads.len() > self.capacity {
            let (k, stamp) = self.order.pop_front().expect("an entry for every head");
            if self.heads.get(&k) == Some(&stamp) {
                self.heads.remove(&k);
            }
        }
        // Stale entries must not pile up behind a few heads used over and over.
        if self.order.len() > 4 * self.capacity + 64 {
            let heads = &self.heads;
            self.order.retain(|(k, s)| heads.get(k) == Some(s));
        }
    }

    /// `keys` no longer hold every page current.
    pub fn drop_heads(&mut self, keys: &[u64]) {
        for k in keys {
            self.heads.remove(k);
        }
    }

    pub fn len(&self) -> usize {
        self.heads.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }
}

/// Leave out of `reads` the pages of the stripe heads in `cached` (ascending keys): md reads
/// only pages that are not up to date. A member's page at offset `o` belongs to head
/// `o / PAGE` (row × pages per chunk + page within the chunk).
pub fn skip_cached_pages(reads: &mut Vec<MemberIo>, cached: &[u64]) {
    let cached_page = |o: u64| cached.binary_search(&(o / PAGE)).is_ok();
    let mut kept = Vec::with_capacity(reads.len());
    for io in reads.iter() {
        let mut run: Option<u64> = None;
        let mut o = io.offset;
        while o < io.offset + io.len {
            match (cached_page(o), run) {
                (true, Some(start)) => {
                    kept.push(MemberIo { offset: start, len: o - start, ..*io });
                    run = None;
                }
                (false, None) => run = Some(o),
                _ => {}
            }
            o += PAGE;
        }
        if let Some(start) = run {
            kept.push(MemberIo { offset: start, len: io.offset + io.len - start, ..*io });
        }
    }
    *reads = kept;
}

/// Stripe heads of the rows `first..=last`, whole, into `out`.
pub fn row_heads(l: &Layout, first: u64, last: u64, out: &mut Vec<u64>) {
    let per = l.chunk / PAGE;
    out.clear();
    out.extend((first * per)..((last + 1) * per));
}

/// Stripe heads of array bytes `[offset, offset + len)` of a RAID 5/6 layout, into `out`: in
/// each row, the page offsets (within a chunk) its data covers on any member.
pub fn request_heads(l: &Layout, offset: u64, len: u64, out: &mut Vec<u64>) {
    let c = l.chunk;
    let per = c / PAGE;
    let row_bytes = l.data_per_row() as u64 * c;
    out.clear();
    let end = offset + len;
    let mut at = offset;
    while at < end {
        let row = at / row_bytes;
        let a = at - row * row_bytes;
        let b = (end - row * row_bytes).min(row_bytes);
        let base = row * per;
        for pages in l.row_pages(a, b) {
            out.extend(base + pages.start..base + pages.end);
        }
        at = row * row_bytes + b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::layout::RaidLevel;

    const K: u64 = 1024;

    #[test]
    fn heads_are_the_page_offsets_a_request_covers_in_each_row() {
        // RAID 5 of 4, 64 KiB chunks: 16 heads a row, 192 KiB of data a row.
        let l = Layout::new(RaidLevel::Raid5, 4, 64 * K, 1 << 30);
        let mut k = Vec::new();
        let mut heads = |offset, len| {
            request_heads(&l, offset, len, &mut k);
            k.clone()
        };
        assert_eq!(heads(0, 4 * K), [0]);
        assert_eq!(heads(64 * K + 8 * K, 8 * K), [2, 3]);
        // Across a chunk boundary, less than a chunk: the head of one and the tail of the next.
        assert_eq!(heads(60 * K, 8 * K), [0, 15]);
        // A whole row and the start of the next.
        assert_eq!(heads(0, 192 * K + 4 * K), (0..17).collect::<Vec<_>>());
        row_heads(&l, 2, 2, &mut k);
        assert_eq!(k, (32..48).collect::<Vec<_>>());
    }

    #[test]
    fn the_least_recently_used_heads_go_first() {
        let mut c = StripeCache::new(3);
        c.keep(&[1, 2, 3]);
        c.keep(&[1]);
        c.keep(&[4]);
        assert!(c.has(1) && c.has(3) && c.has(4) && !c.has(2));
        c.drop_heads(&[3]);
        assert!(!c.has(3) && c.has(1) && c.has(4));
        for i in 0..1000 {
            c.keep(&[1 + i % 2]);
        }
        assert!(c.order.len() <= 4 * 3 + 64 + 1);
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn reads_skip_only_the_pages_of_cached_heads() {
        let io = |member, offset, len| MemberIo { member, op: crate::io::Op::Read, offset, len };
        // Member 0 reads pages 0-3 and member 2 pages 2-5; heads 1 and 3 are cached.
        let mut reads = vec![io(0, 0, 16 * K), io(2, 8 * K, 16 * K)];
        skip_cached_pages(&mut reads, &[1, 3]);
        assert_eq!(reads, [io(0, 0, 4 * K), io(0, 8 * K, 4 * K), io(2, 8 * K, 4 * K), io(2, 16 * K, 8 * K)]);
        let mut all = vec![io(1, 4 * K, 4 * K)];
        skip_cached_pages(&mut all, &[1]);
        assert!(all.is_empty());
    }
}
