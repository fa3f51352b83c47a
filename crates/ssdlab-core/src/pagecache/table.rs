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
//! The index is linear probing with backward-shift deletion (no tombstones, so probe lengths
//! do not decay as a cache churns). A bucket's control byte holds a 4-bit tag of the key's hash
//! and the entry's distance from its home bucket (3 bits, 7 standing for 7 or more): a lookup
//! reads a record only when both match, and a removal finds the home of each entry it shifts
//! back from the distance, without reading the entry's record (a cache miss each on a large
//! cache) unless the distance is 7 or more.

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

/// The tag: the hash's low 4 bits.
fn tag(h: u64) -> u8 {
    (h & 0xF) as u8
}

/// The largest distance from home a control byte tells exactly; at it, the record tells.
const FAR: usize = 7;

/// A control byte: the tag and the distance from home, at most [`FAR`].
fn ctrl_of(tag: u8, dist: usize) -> u8 {
    (dist.min(FAR) as u8) << 4 | tag
}

fn dist_of(c: u8) -> usize {
    (c >> 4) as usize
}

/// The home bucket: the hash's share of the range, by multiplication (from its high bits).
fn bucket(h: u64, cap: usize) -> usize {
    ((h as u128 * cap as u128) >> 64) as usize
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

    /// Bytes the table holds (slab and index capacity).
    pub fn heap_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>() + self.ctrl.capacity() + self.index.capacity() * 4
    }

    /// Every used slot, in slab order (for the rare whole-cache scans).
    pub fn used_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots.iter().enumerate().filter(|(_, s)| s.flags & USED != 0).map(|(i, _)| i as u32)
    }

    fn position(&self, file: u32, index: u64) -> Option<usize> {
        let h = hash(file, index);
        let cap = self.ctrl.len();
        let mut i = bucket(h, cap);
        let mut want = ctrl_of(tag(h), 0);
        loop {
            let c = self.ctrl[i];
            if c == EMPTY {
                return None;
            }
            if c == want {
                let s = &self.slots[self.index[i] as usize];
                if s.file == file && s.index() == index {
                    return Some(i);
                }
            }
            i += 1;
            if i == cap {
                i = 0;
            }
            if dist_of(want) < FAR {
                want += 1 << 4;
            }
        }
    }

    pub fn find(&self, file: u32, index: u64) -> Option<u32> {
        self.position(file, index).map(|i| self.index[i])
    }

    fn index_put(&mut self, s: u32) {
        let slot = &self.slots[s as usize];
        let h = hash(slot.file, slot.index());
        let cap = self.ctrl.len();
        let mut i = bucket(h, cap);
        let mut dist = 0;
        while self.ctrl[i] != EMPTY {
            i += 1;
            if i == cap {
                i = 0;
            }
            dist += 1;
        }
        self.ctrl[i] = ctrl_of(tag(h), dist);
        self.index[i] = s;
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
        let mut hole = self.position(slot.file, slot.index()).expect("a used slot is indexed");
        // Backward shift: pull later entries of the cluster into the hole unless their home
        // bucket lies after the hole (cyclically), where they would no longer be found.
        let cap = self.ctrl.len();
        let mut j = hole;
        loop {
            j += 1;
            if j == cap {
                j = 0;
            }
            let c = self.ctrl[j];
            if c == EMPTY {
                break;
            }
            let home = if dist_of(c) < FAR {
                let d = dist_of(c);
                if j >= d {
                    j - d
                } else {
                    j + cap - d
                }
            } else {
                let o = &self.slots[self.index[j] as usize];
                bucket(hash(o.file, o.index()), cap)
            };
            let stays = if hole <= j { hole < home && home <= j } else { hole < home || home <= j };
            if !stays {
                let dist = if hole >= home { hole - home } else { hole + cap - home };
                self.ctrl[hole] = ctrl_of(c & 0xF, dist);
                self.index[hole] = self.index[j];
                hole = j;
            }
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
        }
        assert_eq!(indexed, t.len());
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
