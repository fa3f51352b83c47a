//! The flash map (logical IU → slot, slot → logical IU), stored relative to a prediction so
//! that a drive written in order costs almost no memory.
//!
//! An entry is zero while it holds what the map predicts for it: "unmapped", or, for the
//! logical IUs `0..filled`, the slot that a sequential fill of a fresh drive gives it (and,
//! in the reverse map, that slot's IU); any value written is kept as itself plus one. The
//! arrays are allocated zeroed, large ones from the kernel a page at a time when first
//! written (`HugeBuf::zeroed`): an unwritten drive, and a drive filled in order, leave
//! their pages untouched; random writes commit the pages they land on. Reading a zero entry
//! costs a few multiplications for the prediction, reading a written one a subtraction;
//! no memory is accessed beyond the entry itself. The plus one costs a bit of width only
//! where the flash has exactly `2^n - 1` slots (or the drive that many IUs).
//!
//! Beside the logical map sits a bitmap with one bit per group of [`GROUP`] logical IUs, set
//! once any entry of the group is stored (entries stored are never zero again), so that a
//! clear bit says every entry of the group still holds its prediction. A lookup there takes
//! the prediction without reading the map: a random read of a drive filled in order would
//! otherwise miss the caches (and the TLB) on a map far larger than them, for a zero. The
//! reverse map has none: it is read where data was written, whose entries are stored.
//!
//! `filled` only grows, one IU at a time, when the FTL maps IU `filled` to its predicted
//! slot while both entries are unmapped: the predictions of that IU and that slot change
//! together with their values, so nothing stored changes meaning. Whether the FTL really
//! fills in the predicted order never matters for correctness, only for memory.

use crate::engine::divide::Div32;
use crate::engine::memory::{PackedArray, PAGE};

/// Where a sequential fill of a fresh drive puts each IU: program units of `unit` IUs go to
/// the dies round-robin; each die fills its blocks in the order its free list hands out
/// blocks of equal wear (`FreeBlocks::take_least_worn`: the first, then from the last down).
#[derive(Clone, Debug, PartialEq)]
struct SeqLayout {
    unit: Div32,
    dies: Div32,
    units_per_block: Div32,
    ius_per_block: Div32,
    blocks_per_die: Div32,
}

impl SeqLayout {
    /// The slot of IU `lpn`, for `lpn` < the drive's slots.
    #[inline(always)]
    fn slot(&self, lpn: u32) -> u32 {
        let (u, r) = (self.unit.div(lpn), self.unit.rem(lpn));
        let (k, die) = (self.dies.div(u), self.dies.rem(u));
        let (j, off) = (self.units_per_block.div(k), self.units_per_block.rem(k));
        let bpd = self.blocks_per_die.get();
        let b = if j == 0 { 0 } else { bpd - j };
        (die * bpd + b) * self.ius_per_block.get() + off * self.unit.get() + r
    }

    /// The IU a sequential fill puts in `slot` (the inverse of [`SeqLayout::slot`]).
    #[inline(always)]
    fn lpn(&self, slot: u32) -> u32 {
        let (block, off) = (self.ius_per_block.div(slot), self.ius_per_block.rem(slot));
        let (die, b) = (self.blocks_per_die.div(block), self.blocks_per_die.rem(block));
        let j = if b == 0 { 0 } else { self.blocks_per_die.get() - b };
        let k = j * self.units_per_block.get() + self.unit.div(off);
        (k * self.dies.get() + die) * self.unit.get() + self.unit.rem(off)
    }
}

/// Logical IUs per bit of the logical map's bitmap: a whole number of 64-bit words of the
/// map at any width, so that a group's entries are exactly the words it spans.
const GROUP: usize = 1024;

#[derive(Clone, Debug, PartialEq)]
pub(super) struct FlashMap {
    l2p: PackedArray,
    /// One bit per [`GROUP`] logical IUs: set when an entry of the group may be stored; a
    /// clear bit means every entry of the group is zero. Exact outside a restore (see
    /// [`FlashMap::parts_mut`]), so two maps equal in their entries are equal in it.
    l2p_stored: Vec<u64>,
    p2l: PackedArray,
    /// "No slot" / "no logical IU": one below the all-ones value of each width (stored as
    /// all ones).
    pub no_slot: u32,
    pub no_lpn: u32,
    seq: SeqLayout,
    /// IUs `0..filled` are predicted at their sequential-fill slots (see the module doc).
    filled: u32,
    /// `filled` stops here: where the layout holds (0 where it cannot; see `new`).
    fill_limit: u32,
}

impl FlashMap {
    /// Maps of `logical` IUs over `dies` x `blocks_per_die` blocks of `ius_per_block` slots,
    /// written in program units of `unit` IUs; all unmapped.
    pub fn new(logical: u32, dies: u32, blocks_per_die: u32, ius_per_block: u32, unit: u32) -> FlashMap {
        let slots = dies as u64 * blocks_per_die as u64 * ius_per_block as u64;
        // Zero, the values plus one, and "none": the all-ones value, which stands for the
        // one below it (so that it is stored as itself plus one too).
        let slot_bits = PackedArray::bits_for(slots + 1);
        let lpn_bits = PackedArray::bits_for(logical as u64 + 1);
        // Whole units per block, and every IU within the flash: then the layout is a
        // one-to-one map of IUs to slots.
        let fits = ius_per_block.is_multiple_of(unit) && logical as u64 <= slots;
        FlashMap {
            l2p: PackedArray::zeroed(logical as usize, slot_bits),
            l2p_stored: vec![0; (logical as usize).div_ceil(GROUP).div_ceil(64)],
            p2l: PackedArray::zeroed(slots as usize, lpn_bits),
            no_slot: ((1u64 << slot_bits) - 2) as u32,
            no_lpn: ((1u64 << lpn_bits) - 2) as u32,
            seq: SeqLayout {
                unit: Div32::new(unit),
                dies: Div32::new(dies),
                units_per_block: Div32::new((ius_per_block / unit).max(1)),
                ius_per_block: Div32::new(ius_per_block),
                blocks_per_die: Div32::new(blocks_per_die),
            },
            filled: 0,
            fill_limit: if fits { logical } else { 0 },
        }
    }

    pub fn logical(&self) -> usize {
        self.l2p.len()
    }

    #[inline(always)]
    fn predicted_slot(&self, lpn: u32) -> u32 {
        if lpn < self.filled {
            self.seq.slot(lpn)
        } else {
            self.no_slot
        }
    }

    #[inline(always)]
    fn predicted_lpn(&self, slot: u32) -> u32 {
        if self.filled == 0 {
            return self.no_lpn;
        }
        let lpn = self.seq.lpn(slot);
        if lpn < self.filled {
            lpn
        } else {
            self.no_lpn
        }
    }

    /// Whether an entry of `lpn`'s group may be stored (else all of them are zero).
    #[inline(always)]
    fn group_stored(&self, lpn: u32) -> bool {
        let g = lpn as usize / GROUP;
        self.l2p_stored[g / 64] >> (g % 64) & 1 != 0
    }

    /// The slot of `lpn` (`no_slot` if unmapped).
    #[inline]
    pub fn slot(&self, lpn: u32) -> u32 {
        assert!((lpn as usize) < self.l2p.len(), "logical IU {lpn} out of range {}", self.l2p.len());
        if !self.group_stored(lpn) {
            return self.predicted_slot(lpn);
        }
        match self.l2p.get(lpn as usize) {
            0 => self.predicted_slot(lpn),
            e => e - 1,
        }
    }

    /// The IU in `slot` (`no_lpn` if none).
    #[inline]
    pub fn lpn(&self, slot: u32) -> u32 {
        match self.p2l.get(slot as usize) {
            0 => self.predicted_lpn(slot),
            e => e - 1,
        }
    }

    #[inline]
    pub fn set_slot(&mut self, lpn: u32, slot: u32) {
        debug_assert!(slot <= self.no_slot);
        self.l2p.set(lpn as usize, slot + 1);
        let g = lpn as usize / GROUP;
        self.l2p_stored[g / 64] |= 1 << (g % 64);
    }

    #[inline]
    pub fn set_lpn(&mut self, slot: u32, lpn: u32) {
        debug_assert!(lpn <= self.no_lpn);
        self.p2l.set(slot as usize, lpn + 1);
    }

    /// Map `lpn` to `slot` both ways (the caller has unlinked what either held).
    #[inline]
    pub fn link(&mut self, lpn: u32, slot: u32) {
        if lpn == self.filled
            && lpn < self.fill_limit
            && self.l2p.get(lpn as usize) == 0
            && slot == self.seq.slot(lpn)
            && self.p2l.get(slot as usize) == 0
        {
            // Both unmapped (zero: their predictions are "none" while `filled` is `lpn`),
            // and both become what they predict once it is past `lpn`.
            self.filled += 1;
            return;
        }
        self.set_slot(lpn, slot);
        self.set_lpn(slot, lpn);
    }

    /// Whether nothing is mapped yet as far as the stored entries and `filled` tell, and a
    /// fill in order of every IU would store nothing (the layout holds for the whole drive).
    /// Reads `filled` only: the caller knows the drive is fresh.
    pub fn fills_in_order_from_empty(&self) -> bool {
        self.filled == 0 && self.fill_limit == self.logical() as u32
    }

    /// Map IUs `0..n` to their sequential-fill slots at once, as `n` calls of
    /// [`FlashMap::link`] in order on a map with nothing mapped do.
    pub fn fill_in_order(&mut self, n: u32) {
        assert!(self.filled == 0 && n <= self.fill_limit, "a fill in order of {n} IUs on a map already filled to {}", self.filled);
        self.filled = n;
    }

    /// Addresses of the words holding `lpn`'s / `slot`'s entries, for prefetching (None for
    /// an `lpn` whose lookup reads no word: its group has nothing stored).
    #[inline]
    pub fn slot_word(&self, lpn: u32) -> Option<*const u64> {
        if (lpn as usize) < self.l2p.len() && !self.group_stored(lpn) {
            return None;
        }
        self.l2p.word_ptr(lpn as usize)
    }

    #[inline]
    pub fn lpn_word(&self, slot: u32) -> Option<*const u64> {
        self.p2l.word_ptr(slot as usize)
    }

    /// Bytes the two arrays span (resident only where written when they are sparse).
    pub fn bytes(&self) -> usize {
        self.l2p.bytes() + self.p2l.bytes()
    }

    /// Bytes of the arrays' pages that hold an entry written other than by a fill in order: what a
    /// sparse map must keep resident (reads both arrays whole).
    pub fn stored_bytes(&self) -> usize {
        (self.l2p.nonzero_pages() + self.p2l.nonzero_pages()) * PAGE
    }

    pub fn is_sparse(&self) -> bool {
        self.l2p.is_sparse() && self.p2l.is_sparse()
    }

    /// The stored state, to save: `filled` and the two arrays as kept.
    pub fn parts(&self) -> (u32, &PackedArray, &PackedArray) {
        (self.filled, &self.l2p, &self.p2l)
    }

    /// Restore what [`FlashMap::parts`] gave: `filled` (checked against this drive) and
    /// the arrays, to be overwritten by the caller, who then calls [`FlashMap::restored`].
    /// Until then every group of the logical map counts as stored (lookups read the map).
    pub fn parts_mut(&mut self, filled: u32) -> Result<(&mut PackedArray, &mut PackedArray), String> {
        if filled > self.fill_limit {
            return Err(format!("logical map: {filled} IUs filled in order where this drive holds {}", self.fill_limit));
        }
        self.filled = filled;
        self.l2p_stored.fill(u64::MAX);
        Ok((&mut self.l2p, &mut self.p2l))
    }

    /// The arrays were overwritten through [`FlashMap::parts_mut`]: the groups of the
    /// logical map with a word other than zero count as stored, the others not.
    pub fn restored(&mut self) {
        let per_group = GROUP * self.l2p.width() as usize / 64;
        self.l2p_stored.fill(0);
        for (g, words) in self.l2p.words().chunks(per_group).enumerate() {
            if words.iter().any(|&w| w != 0) {
                // Past the last group lies only the array's spare word: no group to mark.
                if let Some(bits) = self.l2p_stored.get_mut(g / 64) {
                    *bits |= 1 << (g % 64);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{FlashMap, GROUP};
    use crate::engine::memory::PackedArray;
    use proptest::prelude::*;

    /// The plain flat maps this one replaces, to compare with.
    struct Flat {
        l2p: PackedArray,
        p2l: PackedArray,
    }

    #[test]
    fn the_layout_is_one_to_one() {
        let m = FlashMap::new(5000, 3, 7, 256, 8);
        let mut seen = vec![false; 3 * 7 * 256];
        for lpn in 0..5000 {
            let s = m.seq.slot(lpn);
            assert!(!seen[s as usize], "slot {s} twice");
            seen[s as usize] = true;
            assert_eq!(m.seq.lpn(s), lpn);
        }
    }

    proptest! {
        /// Under any sequence of mappings and unmappings (runs in order mixed with random
        /// ones, as a fill then overwrites), the map reads exactly as two flat arrays do.
        #[test]
        fn behaves_like_flat_arrays(
            dies in 1u32..5, bpd in 2u32..6, unit in 1u32..5, upb in 1u32..5,
            ops in prop::collection::vec((0u8..5, any::<prop::sample::Index>(), any::<prop::sample::Index>(), 1usize..40), 1..60),
        ) {
            let ipb = unit * upb;
            let slots = dies * bpd * ipb;
            let logical = slots * 3 / 4;
            prop_assume!(logical > 0);
            let mut m = FlashMap::new(logical, dies, bpd, ipb, unit);
            let (no_slot, no_lpn) = (m.no_slot, m.no_lpn);
            let mut flat = Flat {
                l2p: PackedArray::new(logical as usize, 32, no_slot),
                p2l: PackedArray::new(slots as usize, 32, no_lpn),
            };
            let mut next_seq = 0u32;
            for (op, a, b, n) in ops {
                // An FTL's update: unlink what the IU and the slot held, then link them.
                let put = |m: &mut FlashMap, flat: &mut Flat, lpn: u32, slot: u32| {
                    let old = m.slot(lpn);
                    if old != no_slot {
                        m.set_lpn(old, no_lpn);
                        flat.p2l.set(old as usize, no_lpn);
                    }
                    let held = m.lpn(slot);
                    if held != no_lpn {
                        m.set_slot(held, no_slot);
                        flat.l2p.set(held as usize, no_slot);
                    }
                    m.link(lpn, slot);
                    flat.l2p.set(lpn as usize, slot);
                    flat.p2l.set(slot as usize, lpn);
                };
                match op {
                    // A run in order at the predicted slots (a sequential fill's writes).
                    0 | 1 => for _ in 0..n {
                        if next_seq >= logical { break; }
                        let s = m.seq.slot(next_seq);
                        put(&mut m, &mut flat, next_seq, s);
                        next_seq += 1;
                    },
                    2 => put(&mut m, &mut flat, a.index(logical as usize) as u32, b.index(slots as usize) as u32),
                    3 => {
                        let lpn = a.index(logical as usize) as u32;
                        let old = m.slot(lpn);
                        if old != no_slot {
                            m.set_lpn(old, no_lpn);
                            flat.p2l.set(old as usize, no_lpn);
                            m.set_slot(lpn, no_slot);
                            flat.l2p.set(lpn as usize, no_slot);
                        }
                    }
                    _ => {
                        let c = m.clone();
                        prop_assert_eq!(&c, &m);
                    }
                }
                for lpn in 0..logical {
                    prop_assert_eq!(m.slot(lpn), flat.l2p.get(lpn as usize), "lpn {}", lpn);
                }
                for slot in 0..slots {
                    prop_assert_eq!(m.lpn(slot), flat.p2l.get(slot as usize), "slot {}", slot);
                }
            }
        }
    }

    #[test]
    fn a_fill_in_order_stores_nothing_and_random_writes_store_where_they_land() {
        // 4 dies x 64 blocks x 1024 slots: 1 MiB of maps, 256 pages.
        let (dies, bpd, ipb, unit) = (4, 64, 1024, 8);
        let logical = dies * bpd * ipb * 7 / 8;
        let mut m = FlashMap::new(logical, dies, bpd, ipb, unit);
        for lpn in 0..logical {
            let s = m.seq.slot(lpn);
            m.link(lpn, s);
        }
        assert_eq!(m.filled, logical);
        assert_eq!(m.stored_bytes(), 0, "a map filled in order holds only its predictions");
        assert_eq!(m.slot(12345), m.seq.slot(12345));
        // One overwrite elsewhere: its IU's entry, its old slot's and its new slot's.
        let (lpn, new) = (777, dies * bpd * ipb - 1);
        let old = m.slot(lpn);
        m.set_lpn(old, m.no_lpn);
        m.link(lpn, new);
        assert_eq!((m.slot(lpn), m.lpn(new), m.lpn(old)), (new, lpn, m.no_lpn));
        assert_eq!(m.stored_bytes(), 3 * 4096);
    }

    /// A group of the logical map counts as stored exactly when one of its entries is: the
    /// others are read from the prediction, with no word to prefetch. A map restored from its
    /// parts counts the same groups and reads the same.
    #[test]
    fn groups_with_nothing_stored_read_their_predictions_and_a_restore_counts_them_again() {
        // 13-bit and 18-bit slots: group boundaries inside words of the map, and not.
        for (dies, bpd, ipb, unit) in [(3, 7, 256, 8), (4, 33, 1000, 4)] {
            let slots = dies * bpd * ipb;
            let logical = slots * 3 / 4;
            let mut m = FlashMap::new(logical, dies, bpd, ipb, unit);
            let half = logical / 2;
            for lpn in 0..half {
                let s = m.seq.slot(lpn);
                m.link(lpn, s);
            }
            // Overwrites: the last IU of the first group (filled in order), the first of the
            // fourth, and the drive's last, each to a slot at the end of the flash.
            let written = [GROUP as u32 - 1, 3 * GROUP as u32, logical - 1];
            for (k, &lpn) in written.iter().enumerate() {
                let old = m.slot(lpn);
                if old != m.no_slot {
                    m.set_lpn(old, m.no_lpn);
                }
                m.link(lpn, slots - 1 - k as u32);
            }
            let expect = |lpn: u32| match written.iter().position(|&l| l == lpn) {
                Some(k) => slots - 1 - k as u32,
                None if lpn < half => m.seq.slot(lpn),
                None => m.no_slot,
            };
            for lpn in 0..logical {
                let stored = written.iter().any(|&l| l as usize / GROUP == lpn as usize / GROUP);
                assert_eq!((m.group_stored(lpn), m.slot_word(lpn).is_some()), (stored, stored), "IU {lpn}");
                assert_eq!(m.slot(lpn), expect(lpn), "IU {lpn}");
            }
            let (filled, l2p, p2l) = m.parts();
            let (l2p, p2l) = (l2p.clone(), p2l.clone());
            let mut r = FlashMap::new(logical, dies, bpd, ipb, unit);
            let (rl, rp) = r.parts_mut(filled).unwrap();
            rl.words_mut().copy_from_slice(l2p.words());
            rp.words_mut().copy_from_slice(p2l.words());
            assert!((0..logical).all(|lpn| r.group_stored(lpn)), "until it is counted, every group may be stored");
            r.restored();
            assert_eq!(r, m);
            for lpn in 0..logical {
                assert_eq!(r.slot(lpn), expect(lpn), "IU {lpn} restored");
            }
        }
    }
}
