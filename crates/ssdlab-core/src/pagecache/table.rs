//! Where cached pages live: one 20-byte record per page in a slab, an open-addressing index
//! from (file, page index) to the record, and the two LRU lists (inactive, active) threaded
//! through the records by 32-bit slot numbers.
//!
//! Nothing here is allocated per page: the slab and the index are two vectors that grow in
//! steps of an eighth (the slab) or by doubling (the index) up to what the page budget needs,
//! and a freed record is reused through a free list. At a full budget a page costs 20 bytes
//! of slab and 5 / 0.75 = 6.7 bytes of index (a 4-byte slot number and a control byte per
//! bucket, buckets at most three quarters full).
//!
//! The index is linear probing in Robin Hood order (along a cluster, an entry is at most one
//! bucket further from its home than the entry before it) with backward-shift deletion (no
//! tombstones, so probe lengths do not decay as a cache churns). A bucket's control byte holds
//! a 3-bit tag of the key's hash and the entry's distance from its home bucket (4 bits, 15
//! standing for 15 or more). A lookup reads a record only when both match, and a miss stops
//! at the first entry nearer its home than the probe is (about 2.9 buckets at three quarters
//! full, where plain linear probing walks to the cluster's end, about 8.5). Insertion and
//! removal read an entry's record (a cache miss each on a large cache) only when its byte
//! says 15 or more.

/// No slot: the end of a list, an empty free list.
pub(crate) const NIL: u32 = u32::MAX;

/// The largest page index a record can hold: 2^32 - 1, so files up to 16 TiB of 4 KiB pages
/// (ext4's largest file with 4 KiB blocks; ext3's is 2 TiB).
pub const MAX_PAGE_INDEX: u64 = u32::MAX as u64;

// The record's flags byte.
pub(crate) const STATE_MASK: u8 = 0b11;
pub(crate) const CLEAN: u8 = 0;
pub(crate) const DIRTY: u8 = 1;
pub(crate) const WRITEBACK: u8 = 2;
/// Under writeback and dirtied again since it was handed out (PG_writeback and PG_dirty).
pub(crate) const WB_DIRTY: u8 = 3;
/// On the active list (PG_active).
pub(crate) const ACTIVE: u8 = 1 << 2;
/// Accessed once since it was last on a list's head (PG_referenced).
pub(crate) const REFERENCED: u8 = 1 << 3;
/// Reclaim met it dirty; when its writeback ends it goes to the inactive tail (PG_reclaim).
pub(crate) const RECLAIM: u8 = 1 << 4;
/// The read-ahead marker (PG_readahead): reading it starts the next asynchronous window.
pub(crate) const READAHEAD: u8 = 1 << 5;
/// Inserted by the read in progress (cleared when the read returns).
pub(crate) const FRESH: u8 = 1 << 6;
/// The record holds a page (else it is on the free list).
const USED: u8 = 1 << 7;

/// One cached page: 20 bytes, 4-byte aligned.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct Slot {
    file: u32,
    index: u32,
    pub flags: u8,
    _pad: [u8; 3],
    /// Towards the list's head (more recently added); NIL at the head.
    pub prev: u32,
    /// Towards the list's tail; NIL at the tail. On the free list: the next free record.
    pub next: u32,
}

impl Slot {
    pub fn file(&self) -> u32 {
        self.file
    }
    pub fn index(&self) -> u64 {
        self.index as u64
    }
    pub fn state(&self) -> u8 {
        self.flags & STATE_MASK
    }
    pub fn set_state(&mut self, state: u8) {
        self.flags = (self.flags & !STATE_MASK) | state;
    }
}

/// The two LRU lists.
pub(crate) const INACTIVE: usize = 0;
pub(crate) const ACTIVE_LIST: usize = 1;

#[derive(Clone, Copy)]
pub(crate) struct List {
    pub head: u32,
    pub tail: u32,
    pub len: u64,
}

const EMPTY: u8 = 0x80;

pub(crate) struct PageTable {
    slots: Vec<Slot>,
    free: u32,
    len: u64,
    /// Most records the budget allows.
    max_len: u64,
    ctrl: Vec<u8>,
    index: Vec<u32>,
    pub lists: [List; 2],
}

fn hash(file: u32, index: u64) -> u64 {
    // Two odd multipliers spread the parts; the murmur3 finaliser mixes the high bits the
    // bucket is taken from. (Giving a file's consecutive pages neighbouring buckets was
    // measured slower: the longer clusters cost more than the locality saved.)
    let mut x = index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (file as u64 + 1).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    x ^ (x >> 33)
}

/// Bits of the hash kept in a control byte. A probe reads a record only where the distance
/// matches too, that is for keys with the same home bucket (0.75 of them on average at the
/// fullest), so 3 bits read a wrong record about 1 time in 11. The other 4 bits go to the
/// distance, so that insertion and removal rarely need a record to learn one: in a simulated
/// churning table three quarters full, 6 % of entries sat 7 or more buckets from home under
/// plain linear probing, and in Robin Hood order 2.7 % do and 0.09 % sit 15 or more.
const TAG_BITS: u32 = 3;
const TAG_MASK: u8 = (1 << TAG_BITS) - 1;

/// The tag: the hash's low bits.
fn tag(h: u64) -> u8 {
    (h as u8) & TAG_MASK
}

/// The largest distance from home a control byte tells exactly; at it, the record tells.
const FAR: usize = 15;
// Every control byte of an entry differs from EMPTY.
const _: () = assert!((FAR << TAG_BITS | TAG_MASK as usize) < EMPTY as usize);

/// A control byte: the tag and the distance from home, at most [`FAR`].
fn ctrl_of(tag: u8, dist: usize) -> u8 {
    (dist.min(FAR) as u8) << TAG_BITS | tag
}

fn dist_of(c: u8) -> usize {
    (c >> TAG_BITS) as usize
}

/// The home bucket: the hash's share of the range, by multiplication (from its high bits).
fn bucket(h: u64, cap: usize) -> usize {
    ((h as u128 * cap as u128) >> 64) as usize
}

/// Asks the CPU to bring `x`'s cache line in; a hint only.
#[inline]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching never faults and has no effect on the program's state; the address
    // is a valid reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch(x as *const T as *const i8, _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Buckets for `n` records at most three quarters full.
fn buckets_for(n: u64) -> usize {
    ((n * 4).div_ceil(3) as usize).max(16)
}

impl PageTable {
    pub fn new(max_len: u64) -> PageTable {
        assert!(max_len < NIL as u64, "page budget over 2^32 - 1 pages");
        let cap = buckets_for(64.min(max_len));
        PageTable {
            slots: Vec::new(),
            free: NIL,
            len: 0,
            max_len,
            ctrl: vec![EMPTY; cap],
            index: vec![NIL; cap],
            lists: [List { head: NIL, tail: NIL, len: 0 }; 2],
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    #[cfg(test)]
    pub fn max_len(&self) -> u64 {
        self.max_len
    }

    pub fn slot(&self, s: u32) -> &Slot {
        &self.slots[s as usize]
    }

    pub fn slot_mut(&mut self, s: u32) -> &mut Slot {
        &mut self.slots[s as usize]
    }

    /// Bytes a table of budget `max_len` holds once `pages` pages (at most the budget) have
    /// been in it at once: the slab and the index as they grow to hold them (the slab by an
    /// eighth, the index by doubling, each capped at the budget's size), for the memory
    /// estimate before a run.
    pub fn bytes_holding(max_len: u64, pages: u64) -> u64 {
        let pages = pages.min(max_len);
        let mut slab = 0u64;
        while slab < pages {
            slab += (slab / 8).max(64).min(max_len - slab);
        }
        let full = buckets_for(max_len);
        let mut buckets = buckets_for(64.min(max_len));
        while pages * 4 > buckets as u64 * 3 {
            buckets = (buckets * 2).min(full);
        }
        slab * std::mem::size_of::<Slot>() as u64 + buckets as u64 * 5
    }

    /// Bytes the table holds (slab and index capacity).
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>() + self.ctrl.capacity() + self.index.capacity() * 4
    }

    /// Every used slot, in slab order (for the rare whole-cache scans).
    pub fn used_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().enumerate().filter(|(_, s)| s.flags & USED != 0).map(|(i, _)| i as u32)
    }

    /// The bucket after `i`.
    #[inline]
    fn next(&self, i: usize) -> usize {
        if i + 1 == self.ctrl.len() {
            0
        } else {
            i + 1
        }
    }

    /// The exact distance from home of the entry in bucket `i` (control byte `c`): from the
    /// byte, or from the record's key when the byte says [`FAR`].
    fn distance(&self, i: usize, c: u8) -> usize {
        let d = dist_of(c);
        if d < FAR {
            return d;
        }
        let cap = self.ctrl.len();
        let o = &self.slots[self.index[i] as usize];
        let home = bucket(hash(o.file, o.index()), cap);
        if i >= home {
            i - home
        } else {
            i + cap - home
        }
    }

    /// The bucket holding the key that hashes to `h` and satisfies `is_it` (given the
    /// bucket's slot number), or None. Robin Hood order lets a miss stop at the first entry
    /// nearer its home than the probe is to the key's: the key would have taken its bucket.
    #[inline]
    fn probe(&self, h: u64, mut is_it: impl FnMut(u32) -> bool) -> Option<usize> {
        let mut i = bucket(h, self.ctrl.len());
        let t = tag(h);
        let mut d = 0;
        loop {
            let c = self.ctrl[i];
            if c == EMPTY {
                return None;
            }
            let (cd, want) = (dist_of(c), d.min(FAR));
            if cd < want {
                return None;
            }
            if cd == want && c & TAG_MASK == t && is_it(self.index[i]) {
                return Some(i);
            }
            i = self.next(i);
            d += 1;
        }
    }

    fn position(&self, file: u32, index: u64) -> Option<usize> {
        self.probe(hash(file, index), |s| {
            let r = &self.slots[s as usize];
            r.file == file && r.index() == index
        })
    }

    /// The bucket of record `s`, whose key hashes to `h`: matched by slot number, so no other
    /// record is read on the way.
    fn position_of_slot(&self, s: u32, h: u64) -> usize {
        self.probe(h, |x| x == s).expect("a used slot is indexed")
    }

    pub fn find(&self, file: u32, index: u64) -> Option<u32> {
        self.position(file, index).map(|i| self.index[i])
    }

    /// Hint that `(file, index)` will be looked up soon: fetches its home bucket's control
    /// byte and slot number. On a cache of millions of pages each is a cache miss; asking for
    /// a read's pages together lets the misses overlap instead of following one another.
    #[inline]
    pub fn prefetch(&self, file: u32, index: u64) {
        let i = bucket(hash(file, index), self.ctrl.len());
        prefetch(&self.ctrl[i]);
        prefetch(&self.index[i]);
    }

    /// Hint that record `s` will be read soon (the next page at a list's tail).
    #[inline]
    pub fn prefetch_slot(&self, s: u32) {
        if let Some(r) = self.slots.get(s as usize) {
            prefetch(r);
        }
    }

    /// Indexes record `s`, Robin Hood style: walking from its home, an entry carried along
    /// takes the bucket of any resident nearer its own home, which is carried on in its place.
    fn index_put(&mut self, s: u32) {
        let slot = &self.slots[s as usize];
        let h = hash(slot.file, slot.index());
        let mut i = bucket(h, self.ctrl.len());
        let (mut t, mut carried, mut d) = (tag(h), s, 0);
        loop {
            let c = self.ctrl[i];
            if c == EMPTY {
                self.ctrl[i] = ctrl_of(t, d);
                self.index[i] = carried;
                return;
            }
            // A resident the byte puts at FAR or more is no nearer than a probe short of it.
            if dist_of(c) < d.min(FAR) || (d >= FAR && self.distance(i, c) < d) {
                let e = self.distance(i, c);
                let resident = self.index[i];
                self.ctrl[i] = ctrl_of(t, d);
                self.index[i] = carried;
                (t, carried, d) = (c & TAG_MASK, resident, e);
            }
            i = self.next(i);
            d += 1;
        }
    }

    fn grow_index(&mut self) {
        let cap = self.ctrl.len();
        let full = buckets_for(self.max_len);
        // Doubling: each growth re-indexes every page (a random write each), so fewer, larger
        // steps; the last is capped at what the budget needs, as before.
        let new_cap = (cap * 2).min(full);
        self.index = vec![NIL; new_cap];
        self.ctrl = vec![EMPTY; new_cap];
        // Re-index from the slab in order: sequential reads of the records, not random ones.
        for s in 0..self.slots.len() as u32 {
            if self.slots[s as usize].flags & USED != 0 {
                self.index_put(s);
            }
        }
    }

    /// Adds a page that is not cached, on no list yet; the caller has made room (the table
    /// holds fewer pages than its budget).
    pub fn insert(&mut self, file: u32, index: u64, flags: u8) -> u32 {
        debug_assert!(self.len < self.max_len, "insert into a full table");
        debug_assert!(index <= MAX_PAGE_INDEX);
        debug_assert!(self.find(file, index).is_none());
        if (self.len + 1) * 4 > self.ctrl.len() as u64 * 3 {
            self.grow_index();
        }
        let rec = Slot {
            file,
            index: index as u32,
            flags: flags | USED,
            _pad: [0; 3],
            prev: NIL,
            next: NIL,
        };
        let s = if self.free != NIL {
            let s = self.free;
            self.free = self.slots[s as usize].next;
            self.slots[s as usize] = rec;
            s
        } else {
            if self.slots.len() == self.slots.capacity() {
                let room = self.max_len as usize - self.slots.len();
                self.slots.reserve_exact((self.slots.len() / 8).max(64).min(room));
            }
            self.slots.push(rec);
            (self.slots.len() - 1) as u32
        };
        self.index_put(s);
        self.len += 1;
        s
    }

    /// Forgets a page (already off its list).
    pub fn remove(&mut self, s: u32) {
        let slot = self.slots[s as usize];
        debug_assert!(slot.flags & USED != 0 && slot.prev == NIL && slot.next == NIL);
        let mut hole = self.position_of_slot(s, hash(slot.file, slot.index()));
        // Backward shift: the entries after the hole move back one bucket, nearer home, up to
        // an empty bucket or an entry already at home.
        loop {
            let j = self.next(hole);
            let c = self.ctrl[j];
            if c == EMPTY || dist_of(c) == 0 {
                break;
            }
            let d = self.distance(j, c);
            self.ctrl[hole] = ctrl_of(c & TAG_MASK, d - 1);
            self.index[hole] = self.index[j];
            hole = j;
        }
        self.ctrl[hole] = EMPTY;
        self.index[hole] = NIL;
        let rec = &mut self.slots[s as usize];
        rec.flags = 0;
        rec.next = self.free;
        self.free = s;
        self.len -= 1;
    }

    // ---- lists ---------------------------------------------------------------------------

    pub fn push_head(&mut self, list: usize, s: u32) {
        let head = self.lists[list].head;
        {
            let r = &mut self.slots[s as usize];
            r.prev = NIL;
            r.next = head;
        }
        if head != NIL {
            self.slots[head as usize].prev = s;
        } else {
            self.lists[list].tail = s;
        }
        self.lists[list].head = s;
        self.lists[list].len += 1;
    }

    pub fn push_tail(&mut self, list: usize, s: u32) {
        let tail = self.lists[list].tail;
        {
            let r = &mut self.slots[s as usize];
            r.next = NIL;
            r.prev = tail;
        }
        if tail != NIL {
            self.slots[tail as usize].next = s;
        } else {
            self.lists[list].head = s;
        }
        self.lists[list].tail = s;
        self.lists[list].len += 1;
    }

    pub fn unlink(&mut self, list: usize, s: u32) {
        let Slot { prev, next, .. } = self.slots[s as usize];
        if prev != NIL {
            self.slots[prev as usize].next = next;
        } else {
            self.lists[list].head = next;
        }
        if next != NIL {
            self.slots[next as usize].prev = prev;
        } else {
            self.lists[list].tail = prev;
        }
        let r = &mut self.slots[s as usize];
        r.prev = NIL;
        r.next = NIL;
        self.lists[list].len -= 1;
    }

    /// The list a page is on.
    pub fn list_of(&self, s: u32) -> usize {
        if self.slots[s as usize].flags & ACTIVE != 0 {
            ACTIVE_LIST
        } else {
            INACTIVE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_twenty_bytes() {
        assert_eq!(std::mem::size_of::<Slot>(), 20);
        assert_eq!(std::mem::align_of::<Slot>(), 4);
    }

    /// Every bucket holds its record's tag and its distance from home, and lies in its cluster
    /// after its home bucket (no empty bucket between them), where a probe from home finds it.
    fn check_index(t: &PageTable) {
        let cap = t.ctrl.len();
        let mut indexed = 0;
        for (i, &c) in t.ctrl.iter().enumerate() {
            if c == EMPTY {
                continue;
            }
            indexed += 1;
            let s = t.slot(t.index[i]);
            let h = hash(s.file, s.index());
            let home = bucket(h, cap);
            assert_eq!(c, ctrl_of(tag(h), (i + cap - home) % cap), "bucket {i}");
            let mut j = home;
            while j != i {
                assert_ne!(t.ctrl[j], EMPTY, "bucket {i} is cut off from its home");
                j = (j + 1) % cap;
            }
            // Robin Hood order: the next entry is at most one bucket further from home.
            let n = (i + 1) % cap;
            if t.ctrl[n] != EMPTY {
                assert!(t.distance(n, t.ctrl[n]) <= t.distance(i, c) + 1, "buckets {i} and {n} out of order");
            }
        }
        assert_eq!(indexed, t.len());
    }

    /// The fullest table churned: entries far from home (whose control byte cannot tell the
    /// distance) are met, and inserts and removals around them keep every key findable.
    #[test]
    fn far_entries_stay_findable_through_churn() {
        let n = 60_000u64;
        let mut t = PageTable::new(n);
        let mut live = std::collections::BTreeSet::new();
        let mut x = 99u64;
        let mut far_seen = 0;
        for step in 0..400_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = (((x >> 33) % 7) as u32, (x >> 12) % 200_000);
            if let Some(s) = t.find(key.0, key.1) {
                assert!(live.contains(&key));
                t.remove(s);
                live.remove(&key);
            } else {
                assert!(!live.contains(&key), "{key:?} is live and not found");
                if t.len() == n {
                    // Full: free the page at a pseudo-random place in the slab.
                    let s = t.used_slots().nth((x % 1000) as usize).unwrap();
                    let r = *t.slot(s);
                    live.remove(&(r.file(), r.index()));
                    t.remove(s);
                }
                t.insert(key.0, key.1, 0);
                live.insert(key);
            }
            if step % 50_000 == 0 {
                far_seen += t.ctrl.iter().filter(|&&c| c != EMPTY && dist_of(c) == FAR).count();
            }
        }
        check_index(&t);
        assert!(far_seen > 0, "no entry reached the far distance: the saturated path went untested");
        for &(f, i) in &live {
            assert!(t.find(f, i).is_some());
        }
    }

    #[test]
    fn insert_find_remove_keep_the_index_consistent() {
        let mut t = PageTable::new(5000);
        let mut live = std::collections::BTreeMap::new();
        let mut x = 12345u64;
        for step in 0..40_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let file = (x >> 60) as u32;
            let index = (x >> 20) % 3000;
            match t.find(file, index) {
                Some(s) => {
                    assert_eq!(live.get(&(file, index)), Some(&s));
                    if step % 3 != 0 {
                        t.remove(s);
                        live.remove(&(file, index));
                    }
                }
                None => {
                    assert!(!live.contains_key(&(file, index)));
                    if t.len() < t.max_len() {
                        let s = t.insert(file, index, 0);
                        live.insert((file, index), s);
                    }
                }
            }
            assert_eq!(t.len() as usize, live.len());
            if step % 997 == 0 {
                check_index(&t);
            }
        }
        check_index(&t);
        for (&(f, i), &s) in &live {
            assert_eq!(t.find(f, i), Some(s));
            assert_eq!(t.slot(s).index(), i);
        }
        // The highest page index round-trips.
        let big = MAX_PAGE_INDEX - 7;
        if let Some(s) = t.find(9, big) {
            t.remove(s);
        }
        while t.len() >= t.max_len() {
            let s = t.used_slots().next().unwrap();
            t.remove(s);
        }
        let s = t.insert(9, big, 0);
        assert_eq!(t.slot(s).index(), big);
        assert_eq!(t.find(9, big), Some(s));
    }

    /// A table holds what `bytes_holding` says, filled to its budget (the slab's growth stops
    /// at the budget, the index's last step too) or to part of it.
    #[test]
    fn a_table_holds_what_bytes_holding_says() {
        for (budget, pages) in [(1u64, 1u64), (100, 100), (5000, 5000), (70_001, 70_001), (70_001, 1000), (1 << 20, 300_000), (1 << 20, 0)] {
            let mut t = PageTable::new(budget);
            for i in 0..pages {
                t.insert(3, i, 0);
            }
            assert_eq!(t.heap_bytes() as u64, PageTable::bytes_holding(budget, pages), "{pages} of {budget} pages");
        }
    }

    #[test]
    fn lists_link_both_ways() {
        let mut t = PageTable::new(10);
        let a = t.insert(1, 1, 0);
        let b = t.insert(1, 2, 0);
        let c = t.insert(1, 3, 0);
        t.push_head(INACTIVE, a);
        t.push_head(INACTIVE, b);
        t.push_tail(INACTIVE, c);
        // head b, a, tail c
        assert_eq!(t.lists[INACTIVE].head, b);
        assert_eq!(t.lists[INACTIVE].tail, c);
        t.unlink(INACTIVE, a);
        assert_eq!(t.slot(b).next, c);
        assert_eq!(t.slot(c).prev, b);
        t.unlink(INACTIVE, b);
        t.unlink(INACTIVE, c);
        assert_eq!(t.lists[INACTIVE].len, 0);
        assert_eq!(t.lists[INACTIVE].head, NIL);
        assert_eq!(t.lists[INACTIVE].tail, NIL);
    }
}
