//! Per-open-file read-ahead state and its window arithmetic, after the on-demand read-ahead
//! of `mm/readahead.c` (2.6.23 on; the size rules are the same today).
//!
//! A window is `[start, start + size)`; the page at `start + size - async_size` carries the
//! marker, and a read reaching it starts the next window before the reader needs it.

use super::config::PAGE_SIZE;
use crate::io::Fadvise;

/// A file's read-ahead state (`struct file_ra_state`), one per open file: the file layer
/// keeps it with the open file and passes it to every read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaState {
    /// The largest window, pages (`ra_pages`, from `read_ahead_kb`); 0: no read-ahead.
    pub ra_pages: u32,
    pub(crate) start: u64,
    pub(crate) size: u32,
    pub(crate) async_size: u32,
    /// The last page the previous read touched (`prev_pos`); None before the first read.
    pub(crate) prev_index: Option<u64>,
}

/// The current window, for tests and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RaWindow {
    pub start: u64,
    pub size: u32,
    pub async_size: u32,
}

impl RaState {
    /// A new open file's state with windows up to `read_ahead_kb`.
    pub fn new(read_ahead_kb: u32) -> RaState {
        RaState { ra_pages: (read_ahead_kb as u64 * 1024 / PAGE_SIZE) as u32, start: 0, size: 0, async_size: 0, prev_index: None }
    }

    /// The opener's `posix_fadvise` advice, as `generic_fadvise` (`mm/fadvise.c`) sets the
    /// open file's largest window from the device's `read_ahead_kb`: sequential doubles it,
    /// normal restores it. Random turns read-ahead off: 2.6.2x set `ra_pages` to 0; since
    /// 2.6.34 it sets `FMODE_RANDOM`, whose reads (`force_page_cache_ra`) fetch just the
    /// pages asked for and leave no marker, which is what a state of 0 pages does here.
    pub fn advise(&mut self, advice: Fadvise, read_ahead_kb: u32) {
        let device = RaState::new(read_ahead_kb).ra_pages;
        self.ra_pages = match advice {
            Fadvise::Normal => device,
            Fadvise::Sequential => device.saturating_mul(2),
            Fadvise::Random => 0,
        };
    }

    pub fn window(&self) -> RaWindow {
        RaWindow { start: self.start, size: self.size, async_size: self.async_size }
    }

    /// The marker's page of the current window.
    pub(crate) fn marker(&self) -> u64 {
        self.start + (self.size - self.async_size) as u64
    }

    /// A read at `index` is the one the current window expects: at its marker or just past
    /// it (`ondemand_readahead`'s first test; never for page 0, which starts afresh).
    pub(crate) fn expects(&self, index: u64) -> bool {
        self.size > 0 && index != 0 && (index == self.marker() || index == self.start + self.size as u64)
    }

    /// A read at `index` of `req` pages looks sequential: it starts at the file's first page,
    /// on or just after the previous read's last page, or is larger than the window.
    pub(crate) fn sequential(&self, index: u64, req: u64, max: u64) -> bool {
        index == 0 || req > max || self.prev_index.is_some_and(|p| index == p || index == p + 1)
    }
}

/// The first window for a read of `req` pages: the request rounded up to a power of two,
/// times 4 when that is at most max/32, times 2 when at most max/4, else the maximum
/// (`get_init_ra_size`). At 128 KiB (32 pages) a 1-page read starts with 4 pages.
pub(crate) fn init_size(req: u64, max: u64) -> u64 {
    let n = req.max(1).next_power_of_two();
    if n <= max / 32 {
        n * 4
    } else if n <= max / 4 {
        n * 2
    } else {
        max
    }
}

/// The next window after one of `cur` pages: 4 times while under max/16, else twice, at
/// most the maximum (`get_next_ra_size`). At 32 pages: 4 → 8 → 16 → 32 → 32.
pub(crate) fn next_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        (4 * cur).min(max)
    } else {
        (2 * cur).min(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_at_128_kib() {
        let max = RaState::new(128).ra_pages as u64;
        assert_eq!(max, 32);
        assert_eq!(init_size(1, max), 4);
        assert_eq!(init_size(2, max), 4);
        assert_eq!(init_size(3, max), 8);
        assert_eq!(init_size(8, max), 16);
        assert_eq!(init_size(9, max), 32);
        assert_eq!(init_size(64, max), 32);
        let mut s = 4;
        let mut seen = vec![s];
        for _ in 0..4 {
            s = next_size(s, max);
            seen.push(s);
        }
        assert_eq!(seen, vec![4, 8, 16, 32, 32]);
        // A large window ramps by 4 while small against it.
        assert_eq!(next_size(4, 512), 16);
        assert_eq!(next_size(32, 512), 64);
    }

    #[test]
    fn fadvise_sets_the_largest_window_from_the_device() {
        let mut ra = RaState::new(128);
        ra.advise(Fadvise::Sequential, 128);
        assert_eq!(ra.ra_pages, 64, "POSIX_FADV_SEQUENTIAL: twice read_ahead_kb");
        // Said twice, still twice the device's (not four times).
        ra.advise(Fadvise::Sequential, 128);
        assert_eq!(ra.ra_pages, 64);
        ra.advise(Fadvise::Random, 128);
        assert_eq!(ra.ra_pages, 0);
        ra.advise(Fadvise::Normal, 128);
        assert_eq!(ra.ra_pages, 32);
        // 1-page reads under sequential advice ramp to 64 pages (256 KiB).
        let max = 64;
        let mut s = init_size(1, max);
        let mut seen = vec![s];
        while s < max {
            s = next_size(s, max);
            seen.push(s);
        }
        assert_eq!(seen, vec![4, 8, 16, 32, 64]);
    }
}
