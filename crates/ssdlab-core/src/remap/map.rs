//! The log's map: where each of the host's blocks lives on the drive, which of the drive's
//! blocks hold current data, and the log's segments (free, written in place before the layer
//! came, written by the log, or open at the log's head).
//!
//! The layer starts over a drive that holds the host's data where the host put it (block
//! `b` at block `b`): those are the segments in `Identity` state, and only blocks moved since
//! take map entries, so a large drive costs memory only for what the log has written.

use std::collections::{BTreeSet, VecDeque};

use rustc_hash::FxHashMap;

/// A host block that holds no data (trimmed): reads return zeros without touching the drive.
const UNMAPPED: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Segment {
    Free,
    /// Blocks where the host wrote them before the layer: block `p` is valid unless the host
    /// block `p` has moved.
    Identity,
    /// Written by the log; block `p` is valid while it has an owner.
    Log,
    /// The log's head, being filled.
    Open,
}

pub struct LogMap {
    blocks_per_segment: u32,
    logical: u32,
    segments: Vec<Segment>,
    valid: Vec<u32>,
    /// Host block → drive block, for blocks not where the host put them (or `UNMAPPED`).
    moved: FxHashMap<u32, u32>,
    /// Drive block → host block, for valid blocks of `Log` and `Open` segments.
    owner: FxHashMap<u32, u32>,
    free: VecDeque<u32>,
    /// `Identity` and `Log` segments by how many valid blocks they hold: the cleaner's choice.
    by_valid: BTreeSet<(u32, u32)>,
    /// The open segment and its next block.
    head: Option<(u32, u32)>,
}

impl LogMap {
    /// A map of `logical` host blocks over `segments` segments of `blocks_per_segment`
    /// blocks; the host's blocks start in place (`logical` a whole number of segments).
    pub fn new(logical: u32, segments: u32, blocks_per_segment: u32) -> LogMap {
        assert!(logical.is_multiple_of(blocks_per_segment) && logical / blocks_per_segment < segments, "validated");
        let in_place = logical / blocks_per_segment;
        let mut states = vec![Segment::Identity; in_place as usize];
        states.resize(segments as usize, Segment::Free);
        let mut valid = vec![blocks_per_segment; in_place as usize];
        valid.resize(segments as usize, 0);
        LogMap {
            blocks_per_segment,
            logical,
            segments: states,
            valid,
            moved: FxHashMap::default(),
            owner: FxHashMap::default(),
            free: (in_place..segments).collect(),
            by_valid: (0..in_place).map(|s| (blocks_per_segment, s)).collect(),
            head: None,
        }
    }

    pub fn blocks_per_segment(&self) -> u32 {
        self.blocks_per_segment
    }

    /// Where host block `b` is on the drive; None: it holds no data.
    #[inline]
    pub fn locate(&self, b: u32) -> Option<u32> {
        match self.moved.get(&b) {
            Some(&UNMAPPED) => None,
            Some(&p) => Some(p),
            None => Some(b),
        }
    }

    pub fn free_segments(&self) -> usize {
        self.free.len()
    }

    /// Blocks left in the open segment (0: none open).
    pub fn head_room(&self) -> u32 {
        self.head.map_or(0, |(_, next)| self.blocks_per_segment - next)
    }

    /// Open the next free segment at the log's head; false if none is free.
    pub fn open_next(&mut self) -> bool {
        debug_assert!(self.head.is_none(), "the open segment is not full");
        let Some(s) = self.free.pop_front() else { return false };
        self.segments[s as usize] = Segment::Open;
        self.head = Some((s, 0));
        true
    }

    /// Write host block `b` at the log's head (which has room); returns the drive block.
    pub fn place(&mut self, b: u32) -> u32 {
        let (s, next) = self.head.expect("an open segment with room");
        let p = s * self.blocks_per_segment + next;
        self.unmap(b);
        self.moved.insert(b, p);
        self.owner.insert(p, b);
        self.valid[s as usize] += 1;
        if next + 1 == self.blocks_per_segment {
            self.segments[s as usize] = Segment::Log;
            self.by_valid.insert((self.valid[s as usize], s));
            self.head = None;
        } else {
            self.head = Some((s, next + 1));
        }
        p
    }

    /// Host block `b` is trimmed: it holds no data, and its drive block none of the host's.
    pub fn trim(&mut self, b: u32) {
        self.unmap(b);
        self.moved.insert(b, UNMAPPED);
    }

    /// The segment the cleaner should take (the fewest valid blocks, not `busy`); None if
    /// every candidate is full (cleaning would free nothing).
    pub fn victim(&self, busy: Option<u32>) -> Option<u32> {
        self.by_valid
            .iter()
            .find(|&&(_, s)| Some(s) != busy)
            .filter(|&&(v, _)| v < self.blocks_per_segment)
            .map(|&(_, s)| s)
    }

    /// The host block whose current data is at drive block `p`, if any.
    pub fn owner_of(&self, p: u32) -> Option<u32> {
        match self.segments.get((p / self.blocks_per_segment) as usize)? {
            Segment::Free => None,
            Segment::Identity => (!self.moved.contains_key(&p)).then_some(p),
            Segment::Log | Segment::Open => self.owner.get(&p).copied(),
        }
    }

    /// Segment `s`'s valid blocks, as (host block, drive block) in drive order.
    pub fn valid_blocks(&self, s: u32) -> Vec<(u32, u32)> {
        let first = s * self.blocks_per_segment;
        let range = first..first + self.blocks_per_segment;
        match self.segments[s as usize] {
            Segment::Free => Vec::new(),
            Segment::Identity => range.filter(|p| !self.moved.contains_key(p)).map(|p| (p, p)).collect(),
            Segment::Log | Segment::Open => range.filter_map(|p| self.owner.get(&p).map(|&b| (b, p))).collect(),
        }
    }

    /// Host block `b` leaves where it was.
    fn unmap(&mut self, b: u32) {
        let old = match self.moved.get(&b) {
            Some(&UNMAPPED) => return,
            Some(&p) => {
                self.owner.remove(&p);
                p
            }
            None => b,
        };
        let s = old / self.blocks_per_segment;
        let v = self.valid[s as usize];
        self.valid[s as usize] = v - 1;
        if matches!(self.segments[s as usize], Segment::Identity | Segment::Log) {
            self.by_valid.remove(&(v, s));
            if v == 1 {
                self.segments[s as usize] = Segment::Free;
                self.free.push_back(s);
            } else {
                self.by_valid.insert((v - 1, s));
            }
        }
    }

    /// Check the map's invariants (tests): every valid drive block belongs to exactly one
    /// host block that maps to it, each segment's count is its valid blocks, one segment is
    /// open (the head's) at most, and the free list holds the free segments once each. Costs
    /// time in the blocks moved and the segments, not the drive's size in blocks.
    pub fn check(&self) -> Result<(), String> {
        let bps = self.blocks_per_segment;
        let mut counted = vec![0u32; self.segments.len()];
        for (s, state) in self.segments.iter().enumerate() {
            if *state == Segment::Identity {
                counted[s] = bps;
            }
        }
        for (&b, &p) in &self.moved {
            // A moved block no longer holds its place in an identity segment.
            if b < self.logical && self.segments[(b / bps) as usize] == Segment::Identity {
                counted[(b / bps) as usize] -= 1;
            }
            if p != UNMAPPED && self.owner.get(&p) != Some(&b) {
                return Err(format!("host block {b} maps to drive block {p}, owned by {:?}", self.owner.get(&p)));
            }
        }
        for (&p, &b) in &self.owner {
            let s = (p / bps) as usize;
            if !matches!(self.segments[s], Segment::Log | Segment::Open) {
                return Err(format!("drive block {p} has an owner in segment {s} ({:?})", self.segments[s]));
            }
            if self.locate(b) != Some(p) {
                return Err(format!("drive block {p} is valid for host block {b}, which is at {:?}", self.locate(b)));
            }
            counted[s] += 1;
        }
        let mut free = vec![0u32; self.segments.len()];
        for &s in &self.free {
            free[s as usize] += 1;
        }
        for (s, state) in self.segments.iter().enumerate() {
            if counted[s] != self.valid[s] {
                return Err(format!("segment {s} ({state:?}) counts {} valid blocks, holds {}", self.valid[s], counted[s]));
            }
            let listed = self.by_valid.contains(&(self.valid[s], s as u32));
            if listed != matches!(state, Segment::Identity | Segment::Log) {
                return Err(format!("segment {s} ({state:?}) is {}in the cleaner's list", if listed { "" } else { "not " }));
            }
            if free[s] != (*state == Segment::Free) as u32 {
                return Err(format!("segment {s} ({state:?}) is {} times in the free list", free[s]));
            }
            if *state == Segment::Open && self.head.map(|(h, _)| h as usize) != Some(s) {
                return Err(format!("segment {s} is open but the head is {:?}", self.head));
            }
        }
        if self.by_valid.len() != self.segments.iter().filter(|s| matches!(s, Segment::Identity | Segment::Log)).count() {
            return Err("the cleaner's list holds stale entries".into());
        }
        let trimmed = self.moved.iter().filter(|&(&b, &p)| p == UNMAPPED && b < self.logical).count() as u64;
        let total_valid: u64 = self.valid.iter().map(|&v| v as u64).sum();
        if self.logical as u64 - trimmed != total_valid {
            return Err(format!("{} host blocks hold data, {total_valid} drive blocks are valid", self.logical as u64 - trimmed));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_start_in_place_and_move_to_the_head() {
        let mut m = LogMap::new(8, 4, 4);
        assert_eq!(m.locate(5), Some(5));
        assert_eq!(m.free_segments(), 2);
        assert!(m.open_next());
        assert_eq!(m.place(5), 8);
        assert_eq!(m.place(1), 9);
        assert_eq!(m.locate(5), Some(8));
        m.check().unwrap();
        // Segments 0 and 1 each lost a block: the cleaner takes the first, or the other.
        assert_eq!(m.victim(None), Some(0));
        assert_eq!(m.victim(Some(0)), Some(1));
        assert_eq!(m.valid_blocks(1), vec![(4, 4), (6, 6), (7, 7)]);
        m.trim(4);
        assert_eq!(m.locate(4), None);
        m.check().unwrap();
    }

    #[test]
    fn a_segment_whose_blocks_all_moved_is_free_again() {
        let mut m = LogMap::new(4, 4, 4);
        assert!(m.open_next());
        for b in 0..4 {
            m.place(b);
        }
        assert_eq!(m.head_room(), 0);
        assert_eq!(m.free_segments(), 3, "the identity segment emptied");
        m.check().unwrap();
    }
}
