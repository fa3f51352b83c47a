//! md's write-intent bitmap (drivers/md/md-bitmap.c), which mdadm adds by default to an
//! array of members over 100 GiB (mdadm's Create.c; `--bitmap`): one bit for each `chunk`
//! bytes of a member, set on the members before a write to that chunk may reach them.
//!
//! raid5 holds every new write (`STRIPE_BIT_DELAY`) until raid5d's next bitmap update
//! (`md_bitmap_unplug`): raid5d writes the bitmap's dirty pages to every in-sync member and
//! waits for them, then lets the writes held for that update go. Writes that arrive while an
//! update is under way wait for the one after. An update with no dirty page costs nothing.
//! The bitmap daemon clears a bit on the second of its sweeps (every `daemon_sleep`) that
//! finds its chunk idle; a write to a degraded array marks its chunks as needing a resync,
//! and their bits stay set until the array is whole again.

use crate::engine::Time;

/// The bitmap is written in pages of this size.
pub const BITMAP_PAGE: u64 = 4096;
const BITS_PER_PAGE: u64 = BITMAP_PAGE * 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Bit {
    #[default]
    Clear,
    /// Set in memory, not yet written to the members.
    Dirty,
    OnDisk,
}

#[derive(Clone, Copy, Debug, Default)]
struct Chunk {
    /// Writes to the chunk under way.
    writes: u32,
    bit: Bit,
    /// Written while the array was degraded: kept set until it is whole.
    needed: bool,
    /// When its last write finished.
    idle_since: Time,
}

/// What the bitmap did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BitmapStats {
    /// Bits set (a write to a clean chunk).
    pub bits_set: u64,
    /// Updates that wrote pages, and the pages they wrote (each to every in-sync member).
    pub updates: u64,
    pub pages_written: u64,
}

#[derive(Clone, Debug)]
pub struct WriteIntentBitmap {
    chunk: u64,
    daemon_sleep: Time,
    chunks: Vec<Chunk>,
    /// Chunks set since the last update began, and the pages holding them.
    dirty: Vec<u32>,
    dirty_pages: Vec<u64>,
    /// Chunks the update under way writes.
    writing: Vec<u32>,
    /// Updates begun and finished (md's `seq_flush` and `seq_write`).
    begun: u64,
    finished: u64,
    pub stats: BitmapStats,
}

impl WriteIntentBitmap {
    /// A clean bitmap over members of `member_bytes`, one bit per `chunk` bytes.
    pub fn new(member_bytes: u64, chunk: u64, daemon_sleep: Time) -> WriteIntentBitmap {
        let n = member_bytes.div_ceil(chunk).max(1) as usize;
        WriteIntentBitmap {
            chunk,
            daemon_sleep: daemon_sleep.max(1),
            chunks: vec![Chunk::default(); n],
            dirty: Vec::new(),
            dirty_pages: Vec::new(),
            writing: Vec::new(),
            begun: 0,
            finished: 0,
            stats: BitmapStats::default(),
        }
    }

    /// Bytes the bitmap takes on each member (whole pages).
    pub fn bytes_for(member_bytes: u64, chunk: u64) -> u64 {
        member_bytes.div_ceil(chunk).max(1).div_ceil(BITS_PER_PAGE) * BITMAP_PAGE
    }

    /// The chunks holding member bytes `[lo, hi)`.
    pub fn chunks_of(&self, lo: u64, hi: u64) -> (u32, u32) {
        let last = (self.chunks.len() - 1) as u64;
        ((lo / self.chunk).min(last) as u32, ((hi.max(lo + 1) - 1) / self.chunk).min(last) as u32)
    }

    /// The chunk's bit, with the daemon's sweeps up to `now` applied: a set bit of an idle
    /// chunk is cleared at the second sweep after its last write.
    fn is_set(&mut self, c: u32, now: Time) -> bool {
        let ds = self.daemon_sleep;
        let k = &mut self.chunks[c as usize];
        match k.bit {
            Bit::Clear => false,
            Bit::Dirty => true,
            Bit::OnDisk => {
                let cleared = k.writes == 0 && !k.needed && now >= (k.idle_since / ds + 2) * ds;
                if cleared {
                    k.bit = Bit::Clear;
                }
                !cleared
            }
        }
    }

    /// A write to chunks `first..=last` begins (`md_bitmap_startwrite`): clear bits are set,
    /// in memory, for the next update to write.
    pub fn start_write(&mut self, (first, last): (u32, u32), now: Time) {
        for c in first..=last {
            if !self.is_set(c, now) {
                self.chunks[c as usize].bit = Bit::Dirty;
                self.dirty.push(c);
                let page = c as u64 / BITS_PER_PAGE;
                if !self.dirty_pages.contains(&page) {
                    self.dirty_pages.push(page);
                }
                self.stats.bits_set += 1;
            }
            self.chunks[c as usize].writes += 1;
        }
    }

    /// A write to chunks `first..=last` is done (`md_bitmap_endwrite`); `degraded`: the array
    /// lacked a member for it, so the chunks need a resync and keep their bits.
    pub fn end_write(&mut self, (first, last): (u32, u32), now: Time, degraded: bool) {
        for c in first..=last {
            let k = &mut self.chunks[c as usize];
            debug_assert!(k.writes > 0, "a write ended that never started");
            k.writes -= 1;
            k.needed |= degraded;
            if k.writes == 0 {
                k.idle_since = now;
            }
        }
    }

    /// The array is whole again: the daemon may clear bits set while it was degraded.
    pub fn array_whole(&mut self, now: Time) {
        for k in &mut self.chunks {
            if k.needed {
                k.needed = false;
                k.idle_since = now;
            }
        }
    }

    pub fn update_under_way(&self) -> bool {
        self.begun > self.finished
    }

    pub fn has_dirty(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// The update a write arriving now waits for.
    pub fn next_update(&self) -> u64 {
        self.begun + 1
    }

    pub fn finished(&self) -> u64 {
        self.finished
    }

    /// Begin an update: the pages it writes (none: it is over at once, see [`Self::finish_update`]).
    pub fn begin_update(&mut self) -> Vec<u64> {
        debug_assert!(!self.update_under_way());
        self.begun += 1;
        self.writing = std::mem::take(&mut self.dirty);
        let mut pages = std::mem::take(&mut self.dirty_pages);
        pages.sort_unstable();
        if !pages.is_empty() {
            self.stats.updates += 1;
            self.stats.pages_written += pages.len() as u64;
        }
        pages
    }

    /// The update's pages are on the members: its bits count as set on disk.
    pub fn finish_update(&mut self) {
        debug_assert!(self.update_under_way());
        self.finished = self.begun;
        for c in std::mem::take(&mut self.writing) {
            self.chunks[c as usize].bit = Bit::OnDisk;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Time = 1_000_000_000;

    #[test]
    fn the_first_write_to_a_chunk_dirties_its_page_and_later_ones_do_not() {
        let mut b = WriteIntentBitmap::new(1 << 30, 64 << 20, 5 * S);
        let c = b.chunks_of(0, 4096);
        b.start_write(c, 0);
        assert!(b.has_dirty());
        assert_eq!(b.begin_update(), vec![0]);
        b.finish_update();
        b.start_write(c, 1);
        assert!(!b.has_dirty(), "the bit is on disk: no update needed");
        assert_eq!(b.stats.bits_set, 1);
    }

    #[test]
    fn an_idle_chunk_is_cleared_at_the_second_sweep_and_never_while_degraded() {
        let mut b = WriteIntentBitmap::new(1 << 30, 64 << 20, 5 * S);
        let c = b.chunks_of(64 << 20, (64 << 20) + 4096);
        assert_eq!(c, (1, 1));
        b.start_write(c, 0);
        b.begin_update();
        b.finish_update();
        b.end_write(c, 3 * S, false);
        // Sweeps at 5 s (2 -> 1) and 10 s (1 -> 0).
        b.start_write(c, 9 * S);
        assert!(!b.has_dirty());
        b.end_write(c, 9 * S, true);
        b.start_write(c, 100 * S);
        assert!(!b.has_dirty(), "a chunk written while degraded keeps its bit");
        b.end_write(c, 100 * S, false);
        b.array_whole(100 * S);
        b.start_write(c, 110 * S);
        assert!(b.has_dirty(), "idle for two sweeps once whole: cleared, set again");
    }

    #[test]
    fn chunk_ranges_and_space() {
        let b = WriteIntentBitmap::new(10 << 30, 64 << 20, S);
        assert_eq!(b.chunks_of(0, 128 << 20), (0, 1));
        assert_eq!(b.chunks_of(u64::MAX / 2, u64::MAX / 2 + 1), (159, 159));
        assert_eq!(WriteIntentBitmap::bytes_for(10 << 30, 64 << 20), 4096);
        // 61.44 TB at 64 MiB: 915,528 bits, 28 pages.
        assert_eq!(WriteIntentBitmap::bytes_for(61_440_000_000_000, 64 << 20), 28 * 4096);
    }
}
