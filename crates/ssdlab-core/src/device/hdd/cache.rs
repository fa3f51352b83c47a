//! A hard disk's on-board cache: read segments with read-ahead, and a write-back cache.
//!
//! Reads: the cache is cut into a fixed number of segments, each holding one contiguous run
//! of sectors; a media read fills the least recently used one. After a media read the head
//! goes on reading the following sectors into that segment (read-ahead) for as long as it
//! has nothing else to do, up to the read-ahead limit; a later read inside what has been read
//! by then is a cache hit, and one that starts inside it and ends inside the limit waits for
//! the head to get there (a streaming hit). A streaming hit moves the limit on, as drives do
//! when they see a sequential stream, so a sequential reader streams at the media rate.
//! Read-ahead stops the moment the head is sent elsewhere.
//!
//! Writes (write-back on): a write is done once its data is in the cache; the cache holds
//! dirty extents in arrival order until the head writes them out (destages). A write that
//! finds the cache full waits for room. Dirty data is not counted against the read
//! segments (drives share one buffer; the split is not published).

use std::collections::VecDeque;

use crate::engine::Time;

#[derive(Clone, Copy, Debug, Default)]
struct Segment {
    /// Sectors [start, end) held.
    start: u64,
    end: u64,
    last_used: u64,
}

/// The read-ahead under way: the head has been reading from `from_lba` since `from_time`.
#[derive(Clone, Copy, Debug)]
struct ReadAhead {
    seg: usize,
    from_time: Time,
    from_lba: u64,
    limit: u64,
    sectors_per_ns: f64,
    /// The furthest sector a read waiting for the read-ahead needs: the head reads at least
    /// that far before it goes elsewhere.
    promised: u64,
}

/// How a read is served.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReadHit {
    /// Every sector is in the cache now.
    Cached,
    /// The read-ahead will have every sector at this time.
    Streaming(Time),
    /// The head must read it.
    Miss,
}

/// A run of dirty sectors waiting to be written to the media.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub lba: u64,
    pub sectors: u64,
    /// The last write admitted into it (a flush waits for every write admitted before it).
    pub seq: u64,
}

pub struct DiskCache {
    segments: Vec<Segment>,
    segment_sectors: u64,
    read_ahead_sectors: u64,
    clock: u64,
    read_ahead: Option<ReadAhead>,
    capacity_sectors: u64,
    write_back: bool,
    write_sectors: u64,
    dirty: VecDeque<Extent>,
    dirty_sectors: u64,
    admitted: u64,
    /// Extents taken for destaging and not yet on the media.
    destaging: Vec<Extent>,
}

impl DiskCache {
    /// `bytes` of cache in `segments` read segments; `read_ahead` bytes past each media read;
    /// write-back on or off. Sizes in sectors of the disk (`capacity_sectors` bounds reads).
    pub fn new(cache_sectors: u64, segments: u32, read_ahead_sectors: u64, write_back: bool, capacity_sectors: u64) -> Self {
        let n = segments.max(1) as usize;
        DiskCache {
            segments: vec![Segment::default(); n],
            segment_sectors: (cache_sectors / n as u64).max(1),
            read_ahead_sectors,
            clock: 0,
            read_ahead: None,
            capacity_sectors,
            write_back,
            write_sectors: cache_sectors,
            dirty: VecDeque::new(),
            dirty_sectors: 0,
            admitted: 0,
            destaging: Vec::new(),
        }
    }

    /// How far the read-ahead has read by `now` (its segment's current end).
    #[inline]
    fn progress(ra: &ReadAhead, now: Time) -> u64 {
        let read = (now.saturating_sub(ra.from_time) as f64 * ra.sectors_per_ns) as u64;
        (ra.from_lba + read).min(ra.limit)
    }

    /// How a read of `sectors` at `lba` arriving at `now` can be served.
    pub fn lookup(&mut self, lba: u64, sectors: u64, now: Time) -> ReadHit {
        let end = lba + sectors;
        self.clock += 1;
        if let Some(ra) = &mut self.read_ahead {
            let seg = &mut self.segments[ra.seg];
            let got = Self::progress(ra, now);
            // Inside what the head has read, or ahead of it within the limit (it gets there).
            if seg.start <= lba && end <= ra.limit {
                seg.last_used = self.clock;
                // A sequential stream: keep reading ahead past what it asked for. The limit
                // only moves on: a read behind the stream's front must not pull it back
                // below what earlier reads were promised.
                ra.limit = ra.limit.max((end + self.read_ahead_sectors).min(self.capacity_sectors));
                if end <= got {
                    return ReadHit::Cached;
                }
                let wait = ((end - got) as f64 / ra.sectors_per_ns).ceil() as Time;
                ra.promised = ra.promised.max(end);
                return ReadHit::Streaming(now + wait);
            }
        }
        let active = self.read_ahead.map(|ra| ra.seg);
        for (i, seg) in self.segments.iter_mut().enumerate() {
            if Some(i) != active && seg.start <= lba && end <= seg.end {
                seg.last_used = self.clock;
                return ReadHit::Cached;
            }
        }
        if self.dirty.iter().any(|x| x.lba <= lba && end <= x.lba + x.sectors) {
            return ReadHit::Cached;
        }
        ReadHit::Miss
    }

    /// The head read `sectors` at `lba`, finishing at `now`; it reads ahead from there at
    /// `sectors_per_ns` until sent elsewhere.
    pub fn media_read(&mut self, lba: u64, sectors: u64, now: Time, sectors_per_ns: f64) {
        self.clock += 1;
        let i = (0..self.segments.len()).min_by_key(|&i| self.segments[i].last_used).expect("a segment");
        let end = lba + sectors;
        self.segments[i] = Segment { start: lba, end, last_used: self.clock };
        self.read_ahead = (self.read_ahead_sectors > 0 && end < self.capacity_sectors).then(|| ReadAhead {
            seg: i,
            from_time: now,
            from_lba: end,
            limit: (end + self.read_ahead_sectors).min(self.capacity_sectors),
            sectors_per_ns,
            promised: end,
        });
    }

    /// The head is wanted elsewhere at `now`: read-ahead ends once it has read what waiting
    /// reads were promised. Returns the last sector read (where the head is), if any, and
    /// when the head is free.
    pub fn stop_read_ahead(&mut self, now: Time) -> (Option<u64>, Time) {
        let Some(ra) = self.read_ahead.take() else { return (None, now) };
        let mut got = Self::progress(&ra, now);
        let mut free = now;
        if ra.promised > got {
            free = ra.from_time + ((ra.promised - ra.from_lba) as f64 / ra.sectors_per_ns).ceil() as Time;
            // Promises lie within the limit, so the head is not there yet (float rounding aside).
            debug_assert!(free + 1 >= now, "read-ahead promised {} past its limit {}", ra.promised, ra.limit);
            free = free.max(now);
            got = ra.promised;
        }
        let seg = &mut self.segments[ra.seg];
        seg.end = got;
        // A segment holds at most its share of the cache: the oldest sectors go.
        seg.start = seg.start.max(got.saturating_sub(self.segment_sectors));
        ((got > ra.from_lba).then_some(got - 1), free)
    }

    pub fn write_back(&self) -> bool {
        self.write_back
    }

    /// Take a write into the cache if it has room; false: it must wait (or, write-back off,
    /// go to the media).
    pub fn admit_write(&mut self, lba: u64, sectors: u64) -> bool {
        if !self.write_back || (self.dirty_sectors + sectors > self.write_sectors && self.dirty_sectors > 0) {
            return false;
        }
        self.dirty_sectors += sectors;
        self.admitted += 1;
        let seq = self.admitted;
        match self.dirty.back_mut() {
            // A write continuing the last one joins it: one destage writes both.
            Some(last) if last.lba + last.sectors == lba => {
                last.sectors += sectors;
                last.seq = seq;
            }
            _ => self.dirty.push_back(Extent { lba, sectors, seq }),
        }
        true
    }

    /// Dirty extents, oldest first (candidates for the next destage).
    pub fn dirty(&self) -> &VecDeque<Extent> {
        &self.dirty
    }

    /// Take dirty extent `i` for destaging; its room is free once written ([`Self::destaged`]).
    pub fn take_dirty(&mut self, i: usize) -> Extent {
        let x = self.dirty.remove(i).expect("a dirty extent");
        self.destaging.push(x);
        x
    }

    /// An extent taken for destaging is on the media: its room is free.
    pub fn destaged(&mut self, x: Extent) {
        self.dirty_sectors -= x.sectors;
        if let Some(i) = self.destaging.iter().position(|d| d.seq == x.seq) {
            self.destaging.swap_remove(i);
        }
    }

    /// Writes admitted so far (a flush arriving now covers these).
    pub fn admitted(&self) -> u64 {
        self.admitted
    }

    /// Whether every write admitted up to number `upto` is on the media. Extents are kept
    /// in admission order and a joined extent takes its newest write's number, so it
    /// suffices to look at the front and at those being destaged.
    pub fn clean_up_to(&self, upto: u64) -> bool {
        self.dirty.front().is_none_or(|x| x.seq > upto) && self.destaging.iter().all(|d| d.seq > upto)
    }

    pub fn dirty_sectors(&self) -> u64 {
        self.dirty_sectors
    }

    /// Every dirty extent, those being destaged too (what a power cut loses).
    pub fn unwritten(&self) -> impl Iterator<Item = &Extent> {
        self.dirty.iter().chain(&self.destaging)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache() -> DiskCache {
        // 1,024 sectors in 4 segments, 64 sectors of read-ahead, write-back, 10,000 sectors.
        DiskCache::new(1_024, 4, 64, true, 10_000)
    }

    #[test]
    fn read_ahead_serves_what_it_has_read_and_streams_the_rest() {
        let mut c = cache();
        assert_eq!(c.lookup(100, 8, 0), ReadHit::Miss);
        c.media_read(100, 8, 1_000, 0.01); // one sector per 100 ns from t = 1,000
        assert_eq!(c.lookup(100, 8, 1_000), ReadHit::Cached, "what the head read");
        assert_eq!(c.lookup(108, 8, 1_800), ReadHit::Cached, "8 sectors read ahead by 1,800");
        assert_eq!(c.lookup(116, 8, 1_800), ReadHit::Streaming(2_600), "waits for the head");
        // The stream moved the limit on to 124 + 64.
        assert_eq!(c.lookup(180, 8, 1_800), ReadHit::Streaming(1_800 + 72 * 100));
        assert_eq!(c.lookup(5_000, 8, 1_800), ReadHit::Miss);
        // Sent elsewhere at 3,000: 20 sectors read ahead, kept; nothing more comes.
        // The streaming reads were promised up to sector 188: the head reads that far first.
        assert_eq!(c.stop_read_ahead(3_000), (Some(187), 1_000 + 80 * 100));
        assert_eq!(c.lookup(180, 8, 9_000), ReadHit::Cached);
        assert_eq!(c.lookup(184, 8, 9_000), ReadHit::Miss);
    }

    #[test]
    fn the_least_recently_used_segment_is_replaced() {
        let mut c = DiskCache::new(1_024, 2, 0, true, 10_000);
        c.media_read(0, 8, 0, 0.01);
        c.media_read(100, 8, 0, 0.01);
        assert_eq!(c.lookup(0, 8, 0), ReadHit::Cached); // segment 0 used last
        c.media_read(200, 8, 0, 0.01); // replaces segment 1 (100..108)
        assert_eq!(c.lookup(0, 8, 0), ReadHit::Cached);
        assert_eq!(c.lookup(100, 8, 0), ReadHit::Miss);
        assert_eq!(c.lookup(200, 8, 0), ReadHit::Cached);
    }

    #[test]
    fn writes_fill_the_cache_join_contiguous_runs_and_wait_when_full() {
        let mut c = cache();
        assert!(c.admit_write(0, 512));
        assert!(c.admit_write(512, 256));
        assert_eq!(c.dirty().len(), 1, "a continuing write joins the last extent");
        assert!(c.admit_write(2_000, 256));
        assert!(!c.admit_write(3_000, 8), "full");
        assert_eq!(c.lookup(2_000, 8, 0), ReadHit::Cached, "dirty data reads from the cache");
        let x = c.take_dirty(0);
        assert_eq!(x, Extent { lba: 0, sectors: 768, seq: 2 });
        assert!(!c.clean_up_to(2), "being destaged");
        assert!(!c.admit_write(3_000, 8), "room comes when the extent is on the media");
        c.destaged(x);
        assert!(c.clean_up_to(2), "writes 1 and 2 are on the media; 3 is not needed");
        assert!(!c.clean_up_to(3));
        assert!(c.admit_write(3_000, 8));
        assert_eq!(c.dirty_sectors(), 264);
        let mut off = DiskCache::new(1_024, 4, 64, false, 10_000);
        assert!(!off.admit_write(0, 8), "write-back off: writes go to the media");
    }

    #[test]
    fn a_write_larger_than_the_cache_is_taken_when_the_cache_is_empty() {
        let mut c = cache();
        assert!(c.admit_write(0, 4_096), "else it would wait for ever");
        assert!(!c.admit_write(5_000, 8));
    }
}
