//! The page cache and its policies, as a data structure: which file pages are in RAM, which
//! are dirty or under writeback, what a read must fetch (with read-ahead), what reclaim
//! evicts, what the flusher writes next, and how long a writer is throttled. It issues no
//! I/O and keeps no clock: the file layer passes `now` (ns) into each call, submits the runs
//! it is given, reports their completion, and schedules the wake-ups (the flusher's period).
//!
//! A model of Linux's `mm/filemap.c`, `mm/readahead.c`, `mm/vmscan.c`, `mm/page-writeback.c`
//! and `fs/fs-writeback.c`, not a port; `docs/page-cache.md` says what is kept, what is
//! simplified and from which sources.
//!
//! - Pages are 4 KiB, keyed by (file id, page index); a page is clean, dirty, under writeback,
//!   or under writeback and dirtied again.
//! - The cache holds at most its budget of pages; to add one to a full cache, reclaim frees a
//!   batch from the inactive list's tail. It evicts clean pages only: a dirty page or one
//!   under writeback is moved to the active list marked for reclaim (it goes to the inactive
//!   tail when its writeback ends), and a dirty one asks for writeback. A page accessed twice
//!   on the inactive list is promoted to the active list; the active list's tail is aged onto
//!   the inactive list while the inactive list is "low" ([`InactiveRule`]).
//! - Dirty thresholds are `vm.dirty_*` of the dirtyable pages; [`PageCache::balance_dirty_pages`]
//!   gives a writer's pause (see [`throttle`](self) in `throttle.rs`).
//! - The flusher's selection ([`PageCache::writeback`]) goes through the dirty files in the
//!   order they became dirty, round-robin, taking up to a chunk of each file's dirty pages in
//!   index order from where it last stopped, and returns contiguous runs.
//!
//! A cached page costs 20 bytes of record and 6.7 bytes of index at a full budget, and a
//! dirty page about 16 more in its file's dirty map; nothing is allocated per page. Page
//! indices are 32-bit: files up to 16 TiB (ext4's largest with 4 KiB blocks).

mod config;
mod readahead;
mod table;
mod throttle;

pub use config::{DirtyLimit, Era, InactiveRule, PageCacheConfig, PAGE_SIZE};
pub use readahead::{RaState, RaWindow};
pub use table::MAX_PAGE_INDEX;
pub use throttle::{Throttle, WriterState};

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::{Excluded, Unbounded};
use std::ops::Range;

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::engine::Time;
use crate::error::ConfigError;
use readahead::{init_size, next_size};
use table::{PageTable, Slot, ACTIVE, ACTIVE_LIST, CLEAN, DIRTY, FRESH, INACTIVE, NIL, READAHEAD, RECLAIM, REFERENCED, WB_DIRTY, WRITEBACK};
use throttle::Bandwidth;

const NS_PER_CS: Time = 10_000_000;

/// How far ahead of its lookups a read, a read-ahead window or a completed run asks for its
/// pages' buckets (assumed: 16 pages, 32 lines, about as many misses as a core keeps in
/// flight; further ahead they would only queue).
const PREFETCH_PAGES: u64 = 16;

/// A cached page's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageKey {
    pub file: u32,
    pub index: u64,
}

/// Contiguous pages of one file: `[start, start + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub file: u32,
    pub start: u64,
    pub len: u32,
}

impl Run {
    pub fn end(&self) -> u64 {
        self.start + self.len as u64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    Clean,
    Dirty,
    /// Handed out for writeback, not yet reported written.
    Writeback,
    /// Under writeback and dirtied again since: dirty again when the writeback ends.
    WritebackDirty,
}

/// What the cache knows of one page (for tests and reports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageInfo {
    pub state: PageState,
    pub active: bool,
    pub referenced: bool,
    /// When it was last dirtied (to the centisecond, rounded down) while it is dirty.
    pub dirtied_at: Option<Time>,
}

/// Pages a read must fetch from the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadRun {
    pub run: Run,
    /// Asynchronous read-ahead: started because the read reached a marker, not because of a
    /// miss. The reader still waits for any of its own pages inside it.
    pub marker: bool,
}

/// What a read asks of the file layer; emptied by each read.
#[derive(Clone, Debug, Default)]
pub struct ReadPlan {
    /// Runs to read, in the order they were decided (each page once).
    pub runs: Vec<ReadRun>,
    /// Pages reclaim evicted to make room.
    pub evicted: Vec<PageKey>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadSummary {
    /// Requested pages that were cached.
    pub hits: u64,
    /// Requested pages that were not (they are in the plan's runs).
    pub misses: u64,
    /// Pages read beyond the request (read-ahead).
    pub readahead: u64,
    /// Reclaim could free nothing (every other page dirty, under writeback or being read by
    /// this call): the read stopped at this page. The file layer reads the plan's runs, then
    /// reads again from here (after writeback has completed, if `wake_flusher` is set).
    pub blocked_at: Option<u64>,
    /// Reclaim met dirty pages: the flusher should write ([`WbWork::All`]), as reclaim wakes
    /// it.
    pub wake_flusher: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteSummary {
    /// Pages written (all of the range unless blocked).
    pub pages: u64,
    /// Pages that were not cached and were added.
    pub added: u64,
    /// Pages that became dirty (were clean, new, or under writeback).
    pub dirtied: u64,
    /// As for reads: the write stopped at this page for want of a reclaimable page.
    pub blocked_at: Option<u64>,
    /// Dirty pages are over the background threshold.
    pub over_background: bool,
    /// Reclaim met dirty pages (see [`ReadSummary::wake_flusher`]).
    pub wake_flusher: bool,
}

/// Which pass of the flusher (`wb_writeback`'s kinds of work).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WbWork {
    /// kupdate: files that became dirty more than `dirty_expire` ago, all their dirty pages.
    Periodic,
    /// Until dirty pages are at or under the background threshold (chunks may overshoot).
    Background,
    /// Every dirty page (reclaim's wake-up, sync without waiting).
    All,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WbSummary {
    /// Pages handed out (now under writeback).
    pub pages: u64,
    /// The call stopped at `max_pages` with work left: call again (when the device can take
    /// more).
    pub more: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FsyncSummary {
    /// Pages handed out now.
    pub pages: u64,
    /// The file's pages already under writeback before this call: fsync waits for them too.
    pub in_flight: u64,
    /// Pages dirtied again while under writeback remain: once the writeback in flight has
    /// completed, call fsync again (the kernel waits on them, then writes them).
    pub again: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropSummary {
    pub pages: u64,
    /// Of them dirty: their data is never written.
    pub dirty: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShrinkSummary {
    pub evicted: u64,
    pub wake_flusher: bool,
}

/// Counters since the cache was made. Conservation: `lookups = hits + misses`;
/// `dirtied = written_back + dropped_dirty + dirty pages now`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PageCacheStats {
    pub lookups: u64,
    pub hits: u64,
    pub misses: u64,
    /// Pages added (read misses, read-ahead, writes to uncached pages).
    pub added: u64,
    /// Of the added, read ahead beyond a request.
    pub readahead: u64,
    pub evicted: u64,
    /// Pages that became dirty.
    pub dirtied: u64,
    /// Dirty pages handed out for writeback.
    pub written_back: u64,
    /// Writeback the file layer reported done.
    pub completed: u64,
    /// Pages dropped by truncate or delete.
    pub dropped: u64,
    /// Of them dirty (their data is lost, as the kernel discards it).
    pub dropped_dirty: u64,
    /// Inactive → active promotions.
    pub activated: u64,
    /// Active → inactive by aging.
    pub deactivated: u64,
    /// Dirty or under-writeback pages reclaim met at the inactive tail.
    pub reclaim_dirty: u64,
    /// Inserts refused because reclaim could free nothing.
    pub blocked: u64,
    /// Sum of the throttle pauses given to writers.
    pub throttled_ns: u64,
}

struct FileState {
    cached: u64,
    /// Pages with the dirty bit (dirty, or under writeback and dirty again).
    dirty: u64,
    /// Pages under writeback (including those dirty again).
    writeback: u64,
    /// When the file last went from no dirty page to one (`inode->dirtied_when`).
    dirtied_when: Time,
    /// Where the next cyclic writeback of the file starts (`writeback_index`).
    cursor: u64,
    /// Highest page index cached while this state existed (bounds truncate's probing).
    max_index: u64,
    /// The dirty pages, by index, with when each was dirtied (centiseconds).
    dirty_pages: BTreeMap<u32, u32>,
}

/// The page cache. See the module documentation.
pub struct PageCache {
    cfg: PageCacheConfig,
    thresholds: (u64, u64),
    table: PageTable,
    files: FxHashMap<u32, FileState>,
    /// Files with dirty pages, in the order they became dirty (`b_dirty`).
    dirty_order: BTreeSet<(Time, u32)>,
    /// The flusher's last file, for round-robin.
    rr_last: Option<(Time, u32)>,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_wb_dirty: u64,
    stats: PageCacheStats,
    bw: Bandwidth,
    last_periodic: Time,
    scratch: Vec<u64>,
    /// The records the read in progress added (marked FRESH, which reclaim skips): their flag
    /// is cleared at the read's end without looking each page up again.
    fresh: Vec<u32>,
}

fn centis(now: Time) -> u32 {
    (now / NS_PER_CS).min(u32::MAX as u64) as u32
}

fn isqrt(n: u64) -> u64 {
    let mut r = (n as f64).sqrt() as u64;
    while r * r > n {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    r
}

fn push_run(out: &mut Vec<Run>, file: u32, index: u64) {
    if let Some(r) = out.last_mut() {
        if r.file == file && r.end() == index && r.len < u32::MAX {
            r.len += 1;
            return;
        }
    }
    out.push(Run { file, start: index, len: 1 });
}

impl PageCache {
    pub fn new(cfg: PageCacheConfig) -> Result<PageCache, ConfigError> {
        cfg.validate()?;
        Ok(PageCache {
            thresholds: cfg.dirty_thresholds(),
            table: PageTable::new(cfg.budget_pages),
            files: FxHashMap::default(),
            dirty_order: BTreeSet::new(),
            rr_last: None,
            nr_dirty: 0,
            nr_writeback: 0,
            nr_wb_dirty: 0,
            stats: PageCacheStats::default(),
            bw: Bandwidth::new(cfg.initial_write_bw_pages),
            last_periodic: 0,
            scratch: Vec::new(),
            fresh: Vec::new(),
            cfg,
        })
    }

    /// The most heap a cache of `cfg` holds once `pages` pages have been cached at once: its
    /// table grown to hold them, and an entry in a file's map of dirty pages for each page up
    /// to the hard dirty limit (about 20 bytes each, as `tests/pagecache_memory.rs` measures:
    /// 19.5). For the memory estimate before a run.
    pub fn bytes_holding(cfg: &PageCacheConfig, pages: u64) -> u64 {
        const DIRTY_ENTRY_BYTES: u64 = 20;
        let pages = pages.min(cfg.budget_pages);
        PageTable::bytes_holding(cfg.budget_pages, pages) + cfg.dirty_thresholds().1.min(pages) * DIRTY_ENTRY_BYTES
    }

    pub fn config(&self) -> &PageCacheConfig {
        &self.cfg
    }

    /// A read-ahead state for a newly opened file, with this cache's `read_ahead_kb`.
    pub fn new_ra_state(&self) -> RaState {
        RaState::new(self.cfg.read_ahead_kb)
    }

    pub fn stats(&self) -> &PageCacheStats {
        &self.stats
    }

    pub fn cached_pages(&self) -> u64 {
        self.table.len()
    }

    pub fn budget_pages(&self) -> u64 {
        self.cfg.budget_pages
    }

    /// Pages with the dirty bit (including those under writeback and dirty again).
    pub fn dirty_pages(&self) -> u64 {
        self.nr_dirty
    }

    /// Pages under writeback.
    pub fn writeback_pages(&self) -> u64 {
        self.nr_writeback
    }

    /// (background, hard) dirty thresholds in pages.
    pub fn dirty_thresholds(&self) -> (u64, u64) {
        self.thresholds
    }

    /// The write-bandwidth estimate, pages per second.
    pub fn write_bandwidth(&self) -> f64 {
        self.bw.pages_per_s
    }

    /// (inactive, active) list lengths.
    pub fn lru_lengths(&self) -> (u64, u64) {
        (self.table.lists[INACTIVE].len, self.table.lists[ACTIVE_LIST].len)
    }

    /// Heap bytes of the page records and the index (not the per-file dirty maps).
    pub fn table_bytes(&self) -> usize {
        self.table.heap_bytes()
    }

    pub fn page_info(&self, file: u32, index: u64) -> Option<PageInfo> {
        let s = self.table.find(file, index)?;
        let slot = self.table.slot(s);
        let state = match slot.state() {
            CLEAN => PageState::Clean,
            DIRTY => PageState::Dirty,
            WRITEBACK => PageState::Writeback,
            _ => PageState::WritebackDirty,
        };
        let dirtied_at = self.files.get(&file).and_then(|f| f.dirty_pages.get(&(index as u32))).map(|&cs| cs as Time * NS_PER_CS);
        Some(PageInfo { state, active: slot.flags & ACTIVE != 0, referenced: slot.flags & REFERENCED != 0, dirtied_at })
    }

    /// The files with dirty pages, and how many each has.
    pub fn dirty_files(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.dirty_order.iter().map(|&(_, f)| (f, self.files.get(&f).map_or(0, |s| s.dirty)))
    }

    /// (cached, dirty, under writeback) pages of a file.
    pub fn file_pages(&self, file: u32) -> (u64, u64, u64) {
        self.files.get(&file).map_or((0, 0, 0), |f| (f.cached, f.dirty, f.writeback))
    }

    /// How old dirty data may grow before the flusher writes it (dirty_expire_centisecs).
    pub fn expire_interval(&self) -> Time {
        self.cfg.dirty_expire_centisecs as Time * NS_PER_CS
    }

    /// The flusher's period (dirty_writeback_centisecs).
    pub fn writeback_interval(&self) -> Time {
        self.cfg.dirty_writeback_centisecs as Time * NS_PER_CS
    }

    /// When the flusher's periodic pass is next due (`last pass + dirty_writeback`; may be
    /// past): None while nothing is dirty or periodic writeback is off.
    pub fn next_periodic(&self) -> Option<Time> {
        let interval = self.writeback_interval();
        (interval > 0 && self.nr_dirty > 0).then_some(self.last_periodic + interval)
    }

    // ---- reads -------------------------------------------------------------------------

    /// A buffered read of pages `[pages.start, pages.end)` of `file` (clipped to `eof`, the
    /// file's size in pages), with the open file's read-ahead state. Counts hits and misses,
    /// marks the pages accessed, runs read-ahead (a miss starts a synchronous window, a
    /// marker an asynchronous one; a random read fetches only its own pages), adds the pages
    /// to read as clean (they count as cached from now on), and fills `plan` with the runs to
    /// read and what reclaim evicted.
    pub fn read(&mut self, now: Time, file: u32, ra: &mut RaState, pages: Range<u64>, eof: u64, plan: &mut ReadPlan) -> ReadSummary {
        plan.runs.clear();
        plan.evicted.clear();
        let mut sum = ReadSummary::default();
        let start = pages.start;
        let end = pages.end.min(eof);
        let added_before = self.stats.added;
        let mut wake = false;
        self.fresh.clear();
        for idx in start..end.min(start + PREFETCH_PAGES) {
            self.table.prefetch(file, idx);
        }
        let mut idx = start;
        while idx < end {
            if idx + PREFETCH_PAGES < end {
                self.table.prefetch(file, idx + PREFETCH_PAGES);
            }
            let mut found = self.table.find(file, idx);
            if found.is_none() {
                self.ondemand(now, file, ra, idx, end - idx, eof, false, plan, &mut wake);
                found = self.table.find(file, idx);
            }
            if found.is_none() {
                // The window began past this page, or was cut short: read it alone.
                self.submit(now, file, idx, 1, eof, None, false, plan, &mut wake);
                found = self.table.find(file, idx);
            }
            let Some(s) = found else {
                sum.blocked_at = Some(idx);
                break;
            };
            let flags = self.table.slot(s).flags;
            if flags & FRESH != 0 {
                sum.misses += 1;
            } else {
                sum.hits += 1;
            }
            // The page's record, unless the window the marker starts reclaimed it.
            let mut here = Some(s);
            if flags & READAHEAD != 0 {
                self.table.slot_mut(s).flags &= !READAHEAD;
                self.ondemand(now, file, ra, idx, end - idx, eof, true, plan, &mut wake);
                here = self.table.find(file, idx);
            }
            // The first page is not counted again when the previous read ended in it.
            if !(idx == start && ra.prev_index == Some(idx)) {
                if let Some(s) = here {
                    self.mark_accessed(s);
                }
            }
            idx += 1;
        }
        if idx > start {
            ra.prev_index = Some(idx - 1);
        }
        for &s in &self.fresh {
            self.table.slot_mut(s).flags &= !FRESH;
        }
        let added = self.stats.added - added_before;
        sum.readahead = added.saturating_sub(sum.misses);
        sum.wake_flusher = wake;
        self.stats.lookups += sum.hits + sum.misses;
        self.stats.hits += sum.hits;
        self.stats.misses += sum.misses;
        self.stats.readahead += sum.readahead;
        sum
    }

    /// Read-ahead's largest window for this state: its `ra_pages`, at most half of what is
    /// not on the active list (2.6.23's `max_sane_readahead`: half of inactive + free).
    fn ra_max(&self, ra: &RaState) -> u64 {
        if ra.ra_pages == 0 {
            return 0;
        }
        let room = (self.cfg.budget_pages - self.table.lists[ACTIVE_LIST].len) / 2;
        (ra.ra_pages as u64).min(room.max(1))
    }

    /// `ondemand_readahead`: decides the window for a read at `index` of `req` pages, after a
    /// miss (`hit_marker` false) or on reaching a marker, and submits it.
    fn ondemand(
        &mut self,
        now: Time,
        file: u32,
        ra: &mut RaState,
        index: u64,
        req: u64,
        eof: u64,
        hit_marker: bool,
        plan: &mut ReadPlan,
        wake: &mut bool,
    ) {
        let max = self.ra_max(ra);
        if max == 0 {
            if !hit_marker {
                self.submit(now, file, index, req, eof, None, false, plan, wake);
            }
            return;
        }
        if ra.expects(index) {
            // The expected next read: push the window forward and ramp it up.
            ra.start += ra.size as u64;
            ra.size = next_size(ra.size as u64, max) as u32;
            ra.async_size = ra.size;
        } else if hit_marker {
            // A marker without a matching state (interleaved readers): the cached run ahead
            // stands for the old window.
            let Some(hole) = (index + 1..=index + max).take_while(|&i| i < eof).find(|&i| self.table.find(file, i).is_none()) else {
                return;
            };
            ra.start = hole;
            ra.size = next_size(hole - index, max) as u32;
            ra.async_size = ra.size;
        } else if ra.sequential(index, req, max) {
            let size = init_size(req, max);
            ra.start = index;
            ra.size = size as u32;
            ra.async_size = if size > req { (size - req) as u32 } else { size as u32 };
        } else if let Some(size) = self.context_window(file, index, req, max) {
            ra.start = index;
            ra.size = size as u32;
            ra.async_size = 1;
        } else {
            // A random read: its own pages only, and the state is left alone.
            self.submit(now, file, index, req, eof, None, false, plan, wake);
            return;
        }
        let marker = ra.marker();
        self.submit(now, file, ra.start, ra.size as u64, eof, Some(marker), hit_marker, plan, wake);
    }

    /// Context read-ahead's window for a read at `index` of `req` pages that is neither
    /// sequential nor at a marker: the cached run just before `index` (at most `max` pages
    /// back) is the history a stream would leave; a run no longer than the request is a lone
    /// random read (None). From the file's start the history counts twice. The window is
    /// history + request, at most `max` (`count_history_pages` and `try_context_readahead`
    /// of 2.6.31-6.9; `page_cache_prev_miss` in today's `page_cache_sync_ra`).
    fn context_window(&self, file: u32, index: u64, req: u64, max: u64) -> Option<u64> {
        if !self.cfg.context_readahead || index == 0 {
            return None;
        }
        let lowest = index.saturating_sub(max);
        let history = (lowest..index).rev().take_while(|&i| self.table.find(file, i).is_some()).count() as u64;
        if history <= req {
            return None;
        }
        let history = if history == index { history * 2 } else { history };
        Some((history + req).min(max))
    }

    /// Adds the uncached pages of `[start, start + len)` (clipped to `eof`) as clean, to be
    /// read, marking `marker` if it is one of them. Stops where reclaim can free nothing.
    fn submit(
        &mut self,
        now: Time,
        file: u32,
        start: u64,
        len: u64,
        eof: u64,
        marker: Option<u64>,
        is_async: bool,
        plan: &mut ReadPlan,
        wake: &mut bool,
    ) {
        let end = start.saturating_add(len).min(eof).min(MAX_PAGE_INDEX + 1);
        for idx in start..end.min(start + PREFETCH_PAGES) {
            self.table.prefetch(file, idx);
        }
        for idx in start..end {
            if idx + PREFETCH_PAGES < end {
                self.table.prefetch(file, idx + PREFETCH_PAGES);
            }
            if self.table.find(file, idx).is_some() {
                continue;
            }
            let Some(s) = self.add_page(now, file, idx, CLEAN, false, &mut plan.evicted, wake) else {
                break;
            };
            self.fresh.push(s);
            let slot = self.table.slot_mut(s);
            slot.flags |= FRESH;
            if marker == Some(idx) {
                slot.flags |= READAHEAD;
            }
            match plan.runs.last_mut() {
                Some(r) if r.marker == is_async && r.run.file == file && r.run.end() == idx && r.run.len < u32::MAX => r.run.len += 1,
                _ => plan.runs.push(ReadRun { run: Run { file, start: idx, len: 1 }, marker: is_async }),
            }
        }
    }

    /// Pages of `file` an operation brought into memory without reading them through the
    /// cache (metadata blocks a change wrote in memory, the buffer cache's pages): cached
    /// ones are marked accessed, missing ones added clean (not counted as lookups: no read
    /// asked for them). `evicted` is emptied and gets what reclaim evicted; a page reclaim
    /// can find no room for is left out. Returns the pages added, and whether reclaim met
    /// dirty pages the flusher should write.
    pub fn hold(&mut self, now: Time, file: u32, pages: impl IntoIterator<Item = u64>, evicted: &mut Vec<PageKey>) -> (u64, bool) {
        evicted.clear();
        let (mut added, mut wake) = (0, false);
        for idx in pages {
            match self.table.find(file, idx) {
                Some(s) => self.mark_accessed(s),
                None => {
                    if self.add_page(now, file, idx, CLEAN, true, evicted, &mut wake).is_some() {
                        added += 1;
                    }
                }
            }
        }
        (added, wake)
    }

    // ---- writes ------------------------------------------------------------------------

    /// A buffered write of whole pages `[pages.start, pages.end)` of `file` (the file layer
    /// has already read any partial page it must merge). Cached pages are marked accessed
    /// and dirty; uncached ones are added dirty. A page under writeback becomes "under
    /// writeback and dirty". `evicted` is emptied and gets what reclaim evicted. Then call
    /// [`PageCache::balance_dirty_pages`] with the pages dirtied.
    pub fn write(&mut self, now: Time, file: u32, pages: Range<u64>, evicted: &mut Vec<PageKey>) -> WriteSummary {
        evicted.clear();
        let mut sum = WriteSummary::default();
        let mut wake = false;
        for idx in pages {
            match self.table.find(file, idx) {
                Some(s) => {
                    self.mark_accessed(s);
                    match self.table.slot(s).state() {
                        CLEAN => {
                            self.table.slot_mut(s).set_state(DIRTY);
                            self.account_dirtied(now, file, idx);
                            sum.dirtied += 1;
                        }
                        WRITEBACK => {
                            self.table.slot_mut(s).set_state(WB_DIRTY);
                            self.nr_wb_dirty += 1;
                            self.account_dirtied(now, file, idx);
                            sum.dirtied += 1;
                        }
                        _ => {}
                    }
                }
                None => {
                    if self.add_page(now, file, idx, DIRTY, true, evicted, &mut wake).is_none() {
                        sum.blocked_at = Some(idx);
                        break;
                    }
                    sum.added += 1;
                    sum.dirtied += 1;
                }
            }
            sum.pages += 1;
        }
        sum.over_background = self.nr_dirty > self.thresholds.0;
        sum.wake_flusher = wake;
        sum
    }

    /// The writer who just dirtied `pages` pages: how long it pauses, and whether the flusher
    /// should be writing. See `throttle.rs` for the model.
    pub fn balance_dirty_pages(&mut self, now: Time, writer: &mut WriterState, pages: u64) -> Throttle {
        self.bw.update(now, self.stats.completed, self.nr_writeback, self.cfg.bandwidth_interval_ns, self.cfg.bandwidth_period_ns);
        let t = throttle::balance(
            now,
            writer,
            pages,
            self.nr_dirty,
            self.nr_writeback,
            self.thresholds,
            self.bw.pages_per_s,
            self.cfg.max_pause_ns,
        );
        self.stats.throttled_ns += t.pause_ns;
        t
    }

    // ---- writeback ---------------------------------------------------------------------

    /// The flusher's selection for one kind of work: up to `max_pages` dirty pages, file by
    /// file in the order the files became dirty (round-robin across calls), at most a chunk
    /// (`writeback_chunk_pages`) from a file per turn, each file's pages in index order from
    /// where its last writeback stopped (wrapping once). `out` is emptied and gets contiguous
    /// runs; their pages are now under writeback until [`PageCache::complete_writeback`].
    /// Pages already under writeback are skipped, even if dirty again.
    pub fn writeback(&mut self, now: Time, work: WbWork, max_pages: u64, out: &mut Vec<Run>) -> WbSummary {
        out.clear();
        let interval = self.cfg.dirty_writeback_centisecs as Time * NS_PER_CS;
        if work == WbWork::Periodic && now >= self.last_periodic + interval {
            self.last_periodic = now;
        }
        // Files that became dirty at or before `now - expire` (none before `expire` has passed).
        let cutoff = now.checked_sub(self.cfg.dirty_expire_centisecs as Time * NS_PER_CS);
        let eligible = |key: (Time, u32)| work != WbWork::Periodic || cutoff.is_some_and(|c| key.0 <= c);
        let bg = self.thresholds.0;
        let chunk = self.cfg.writeback_chunk_pages as u64;
        let mut pages = 0u64;
        let mut stale = 0usize;
        loop {
            if pages >= max_pages || self.nr_dirty == self.nr_wb_dirty {
                break;
            }
            if work == WbWork::Background && self.nr_dirty <= bg {
                break;
            }
            let next = match self.rr_last {
                Some(k) => self.dirty_order.range((Excluded(k), Unbounded)).next().or_else(|| self.dirty_order.first()),
                None => self.dirty_order.first(),
            };
            let Some(&key) = next else { break };
            if stale > self.dirty_order.len() {
                break;
            }
            if !eligible(key) {
                // Files are in the order they became dirty: the rest are younger; start over
                // from the oldest, if it has expired.
                if !self.dirty_order.first().is_some_and(|&k| eligible(k)) {
                    break;
                }
                self.rr_last = None;
                stale += 1;
                continue;
            }
            self.rr_last = Some(key);
            let took = self.take_pages(key.1, chunk.min(max_pages - pages), true, out);
            if took == 0 {
                stale += 1;
            } else {
                stale = 0;
                pages += took;
            }
        }
        let writable = self.nr_dirty > self.nr_wb_dirty;
        let more = writable
            && pages >= max_pages
            && match work {
                WbWork::Background => self.nr_dirty > bg,
                WbWork::Periodic => self.dirty_order.first().is_some_and(|&k| eligible(k)),
                WbWork::All => true,
            };
        WbSummary { pages, more }
    }

    /// fsync: every dirty page of `file` not already under writeback, in index order from the
    /// file's start. `out` is emptied and gets the runs. fsync is complete when these runs
    /// and the file's writeback in flight have completed and `again` is false.
    pub fn fsync(&mut self, file: u32, out: &mut Vec<Run>) -> FsyncSummary {
        out.clear();
        let in_flight = self.files.get(&file).map_or(0, |f| f.writeback);
        let pages = self.take_pages(file, u64::MAX, false, out);
        let again = self.files.get(&file).is_some_and(|f| f.dirty > 0);
        FsyncSummary { pages, in_flight, again }
    }

    /// Hands out up to `limit` dirty (not under writeback) pages of `file` for writeback, in
    /// index order from its cursor (`cyclic`) or from 0, appending runs to `out`.
    fn take_pages(&mut self, file: u32, limit: u64, cyclic: bool, out: &mut Vec<Run>) -> u64 {
        let PageCache { files, table, scratch, .. } = self;
        let Some(fs) = files.get(&file) else { return 0 };
        let from = if cyclic { fs.cursor } else { 0 };
        scratch.clear();
        let (ahead, behind) = match u32::try_from(from) {
            Ok(f) => (fs.dirty_pages.range(f..), fs.dirty_pages.range(..f)),
            Err(_) => (fs.dirty_pages.range(0..0), fs.dirty_pages.range(..)),
        };
        for (&idx, _) in ahead.chain(behind) {
            if scratch.len() as u64 >= limit {
                break;
            }
            let s = table.find(file, idx as u64).expect("a dirty page is cached");
            if table.slot(s).state() == DIRTY {
                scratch.push(idx as u64);
            }
        }
        let taken = std::mem::take(&mut self.scratch);
        for &idx in &taken {
            let s = self.table.find(file, idx).expect("a dirty page is cached");
            self.table.slot_mut(s).set_state(WRITEBACK);
            self.account_undirtied(file, idx);
            self.nr_writeback += 1;
            self.files.get_mut(&file).expect("its file").writeback += 1;
            push_run(out, file, idx);
        }
        if let (Some(&last), true) = (taken.last(), cyclic) {
            self.files.get_mut(&file).expect("its file").cursor = last + 1;
        }
        let n = taken.len() as u64;
        self.stats.written_back += n;
        self.scratch = taken;
        n
    }

    /// The file layer's report that a run handed out for writeback is on the device: its
    /// pages are clean (or dirty, if dirtied again meanwhile). A page reclaim had met dirty
    /// goes to the inactive tail, to be evicted soon (`rotate_reclaimable_page`). Pages not
    /// under writeback (dropped since) are ignored. Returns the pages completed.
    pub fn complete_writeback(&mut self, now: Time, run: Run) -> u64 {
        let mut n = 0;
        for idx in run.start..run.end().min(run.start + PREFETCH_PAGES) {
            self.table.prefetch(run.file, idx);
        }
        for idx in run.start..run.end() {
            if idx + PREFETCH_PAGES < run.end() {
                self.table.prefetch(run.file, idx + PREFETCH_PAGES);
            }
            let Some(s) = self.table.find(run.file, idx) else { continue };
            let flags = self.table.slot(s).flags;
            match flags & table::STATE_MASK {
                WRITEBACK => {
                    self.table.slot_mut(s).set_state(CLEAN);
                    if flags & RECLAIM != 0 {
                        let list = self.table.list_of(s);
                        self.table.unlink(list, s);
                        self.table.slot_mut(s).flags &= !(RECLAIM | ACTIVE);
                        self.table.push_tail(INACTIVE, s);
                    }
                }
                WB_DIRTY => {
                    let slot = self.table.slot_mut(s);
                    slot.set_state(DIRTY);
                    slot.flags &= !RECLAIM;
                    self.nr_wb_dirty -= 1;
                }
                _ => continue,
            }
            self.nr_writeback -= 1;
            self.files.get_mut(&run.file).expect("its file").writeback -= 1;
            n += 1;
        }
        self.stats.completed += n;
        self.bw.update(now, self.stats.completed, self.nr_writeback, self.cfg.bandwidth_interval_ns, self.cfg.bandwidth_period_ns);
        n
    }

    // ---- drop and shrink ---------------------------------------------------------------

    /// Truncate: drops the file's pages from `from` on, dirty ones included (their data is
    /// never written, as `truncate_inode_pages` discards it). Writeback in flight for them is
    /// forgotten; its completion is ignored.
    pub fn truncate(&mut self, file: u32, from: u64) -> DropSummary {
        let Some(fs) = self.files.get(&file) else { return DropSummary::default() };
        if from > fs.max_index {
            return DropSummary::default();
        }
        let mut victims = std::mem::take(&mut self.scratch);
        victims.clear();
        if fs.max_index - from < self.table.len() {
            victims.extend((from..=fs.max_index).filter_map(|i| self.table.find(file, i)).map(|s| s as u64));
        } else {
            victims.extend(
                self.table.used_slots().filter(|&s| self.table.slot(s).file() == file && self.table.slot(s).index() >= from).map(|s| s as u64),
            );
        }
        let mut sum = DropSummary::default();
        for &s in &victims {
            sum.pages += 1;
            if self.drop_page(s as u32) {
                sum.dirty += 1;
            }
        }
        self.scratch = victims;
        if let Some(fs) = self.files.get_mut(&file) {
            fs.max_index = from.saturating_sub(1);
        }
        sum
    }

    /// Delete: drops all of the file's pages (see [`PageCache::truncate`]).
    pub fn delete(&mut self, file: u32) -> DropSummary {
        self.truncate(file, 0)
    }

    /// Memory pressure from elsewhere: reclaim `pages` pages now (fewer if not enough are
    /// clean). `evicted` is emptied and gets them.
    pub fn shrink(&mut self, pages: u64, evicted: &mut Vec<PageKey>) -> ShrinkSummary {
        evicted.clear();
        let mut wake = false;
        let n = self.reclaim(pages, evicted, &mut wake);
        ShrinkSummary { evicted: n, wake_flusher: wake }
    }

    // ---- internals ---------------------------------------------------------------------

    /// Adds an uncached page at the inactive head, reclaiming first if the cache is full;
    /// None if reclaim could free nothing.
    fn add_page(&mut self, now: Time, file: u32, index: u64, state: u8, referenced: bool, evicted: &mut Vec<PageKey>, wake: &mut bool) -> Option<u32> {
        assert!(index <= MAX_PAGE_INDEX, "page index {index} over 2^32 - 1 (a 16 TiB file)");
        if self.table.len() >= self.cfg.budget_pages {
            self.reclaim(self.cfg.reclaim_batch_pages as u64, evicted, wake);
            if self.table.len() >= self.cfg.budget_pages {
                self.stats.blocked += 1;
                return None;
            }
        }
        let s = self.table.insert(file, index, state | if referenced { REFERENCED } else { 0 });
        self.table.push_head(INACTIVE, s);
        let fs = self.files.entry(file).or_insert_with(|| FileState {
            cached: 0,
            dirty: 0,
            writeback: 0,
            dirtied_when: 0,
            cursor: 0,
            max_index: 0,
            dirty_pages: BTreeMap::new(),
        });
        fs.cached += 1;
        fs.max_index = fs.max_index.max(index);
        self.stats.added += 1;
        if state == DIRTY {
            self.account_dirtied(now, file, index);
        }
        Some(s)
    }

    /// `mark_page_accessed`: inactive unreferenced → referenced; inactive referenced →
    /// active; active → referenced.
    fn mark_accessed(&mut self, s: u32) {
        let flags = self.table.slot(s).flags;
        if flags & ACTIVE == 0 && flags & REFERENCED != 0 {
            self.table.unlink(INACTIVE, s);
            let slot = self.table.slot_mut(s);
            slot.flags = (slot.flags | ACTIVE) & !REFERENCED;
            self.table.push_head(ACTIVE_LIST, s);
            self.stats.activated += 1;
        } else {
            self.table.slot_mut(s).flags |= REFERENCED;
        }
    }

    /// A page gained the dirty bit.
    fn account_dirtied(&mut self, now: Time, file: u32, index: u64) {
        self.nr_dirty += 1;
        self.stats.dirtied += 1;
        let fs = self.files.get_mut(&file).expect("a cached page's file");
        if fs.dirty == 0 {
            fs.dirtied_when = now;
            self.dirty_order.insert((now, file));
        }
        fs.dirty += 1;
        fs.dirty_pages.insert(index as u32, centis(now));
    }

    /// A page lost the dirty bit (handed out for writeback, or dropped).
    fn account_undirtied(&mut self, file: u32, index: u64) {
        self.nr_dirty -= 1;
        let fs = self.files.get_mut(&file).expect("a cached page's file");
        fs.dirty -= 1;
        fs.dirty_pages.remove(&(index as u32));
        if fs.dirty == 0 {
            self.dirty_order.remove(&(fs.dirtied_when, file));
        }
    }

    /// Removes a page (any state) from its list, the table and its file; true if it was
    /// dirty.
    fn drop_page(&mut self, s: u32) -> bool {
        let slot = *self.table.slot(s);
        let (file, index, state) = (slot.file(), slot.index(), slot.state());
        let dirty = state == DIRTY || state == WB_DIRTY;
        if dirty {
            self.account_undirtied(file, index);
            self.stats.dropped_dirty += 1;
        }
        if state == WRITEBACK || state == WB_DIRTY {
            self.nr_writeback -= 1;
            self.files.get_mut(&file).expect("its file").writeback -= 1;
        }
        if state == WB_DIRTY {
            self.nr_wb_dirty -= 1;
        }
        self.stats.dropped += 1;
        self.unlist_and_forget(s);
        dirty
    }

    fn evict(&mut self, s: u32, evicted: &mut Vec<PageKey>) {
        let slot = self.table.slot(s);
        debug_assert_eq!(slot.state(), CLEAN, "evicting a page that is not clean");
        evicted.push(PageKey { file: slot.file(), index: slot.index() });
        self.stats.evicted += 1;
        self.unlist_and_forget(s);
    }

    fn unlist_and_forget(&mut self, s: u32) {
        let file = self.table.slot(s).file();
        let list = self.table.list_of(s);
        self.table.unlink(list, s);
        self.table.remove(s);
        let fs = self.files.get_mut(&file).expect("its file");
        fs.cached -= 1;
        if fs.cached == 0 {
            debug_assert!(fs.dirty == 0 && fs.writeback == 0);
            self.files.remove(&file);
        }
    }

    /// vmscan's `inactive_is_low` for the file lists.
    fn inactive_is_low(&self) -> bool {
        let (i, a) = self.lru_lengths();
        match self.cfg.inactive_rule {
            InactiveRule::Equal => i < a,
            InactiveRule::SqrtGb => {
                let gb = ((i + a) * PAGE_SIZE) >> 30;
                let ratio = if gb > 0 { isqrt(10 * gb) } else { 1 };
                i * ratio < a
            }
        }
    }

    fn deactivate(&mut self, s: u32) {
        self.table.unlink(ACTIVE_LIST, s);
        self.table.slot_mut(s).flags &= !(ACTIVE | REFERENCED);
        self.table.push_head(INACTIVE, s);
        self.stats.deactivated += 1;
    }

    /// Frees up to `want` pages (or at least a batch when making room): ages the active list
    /// while the inactive one is low, then takes the inactive tail: a clean page is evicted;
    /// a dirty one or one under writeback is moved to the active head marked for reclaim
    /// (`activate_locked` with PG_reclaim), and a dirty one asks for writeback; a page the
    /// read in progress is adding is skipped. Scans each page about twice at most.
    fn reclaim(&mut self, want: u64, evicted: &mut Vec<PageKey>, wake: &mut bool) -> u64 {
        let target = want.min(self.table.len());
        let limit = 2 * self.table.len() + 2;
        let mut freed = 0;
        let mut scanned = 0;
        while freed < target && scanned < limit {
            while self.inactive_is_low() {
                let a = self.table.lists[ACTIVE_LIST].tail;
                if a == NIL {
                    break;
                }
                self.deactivate(a);
            }
            let t = self.table.lists[INACTIVE].tail;
            scanned += 1;
            if t == NIL {
                let a = self.table.lists[ACTIVE_LIST].tail;
                if a == NIL {
                    break;
                }
                self.deactivate(a);
                continue;
            }
            let Slot { flags, prev, .. } = *self.table.slot(t);
            if prev != NIL {
                // The pages next in line: the next one's bucket and the one after's record,
                // asked for a step ahead so that their misses overlap this page's work.
                let p = self.table.slot(prev);
                self.table.prefetch(p.file(), p.index());
                self.table.prefetch_slot(p.prev);
            }
            let state = flags & table::STATE_MASK;
            if flags & FRESH != 0 {
                // Being read by the call in progress (locked, in the kernel): not reclaimable.
                self.table.unlink(INACTIVE, t);
                self.table.push_head(INACTIVE, t);
            } else if state == CLEAN {
                self.evict(t, evicted);
                freed += 1;
            } else {
                self.table.unlink(INACTIVE, t);
                self.table.slot_mut(t).flags |= ACTIVE | RECLAIM;
                self.table.push_head(ACTIVE_LIST, t);
                self.stats.reclaim_dirty += 1;
                if state == DIRTY || state == WB_DIRTY {
                    *wake = true;
                }
            }
        }
        freed
    }

    /// Checks every count against the pages themselves: O(cached pages), for tests.
    pub fn audit(&self) -> Result<(), String> {
        let mut per_file: FxHashMap<u32, (u64, u64, u64)> = FxHashMap::default();
        let (mut dirty, mut wb, mut wbd) = (0, 0, 0);
        for s in self.table.used_slots() {
            let slot = self.table.slot(s);
            let e = per_file.entry(slot.file()).or_default();
            e.0 += 1;
            let st = slot.state();
            if st == DIRTY || st == WB_DIRTY {
                e.1 += 1;
                dirty += 1;
                let fs = self.files.get(&slot.file()).ok_or("a dirty page without a file")?;
                if !fs.dirty_pages.contains_key(&(slot.index() as u32)) {
                    return Err(format!("dirty page {}:{} missing from its file's dirty map", slot.file(), slot.index()));
                }
            }
            if st == WRITEBACK || st == WB_DIRTY {
                e.2 += 1;
                wb += 1;
            }
            if st == WB_DIRTY {
                wbd += 1;
            }
            if (slot.flags & ACTIVE != 0) != (self.table.list_of(s) == ACTIVE_LIST) {
                return Err("list flag mismatch".into());
            }
        }
        if (dirty, wb, wbd) != (self.nr_dirty, self.nr_writeback, self.nr_wb_dirty) {
            return Err(format!(
                "global counts {:?} but pages say {:?}",
                (self.nr_dirty, self.nr_writeback, self.nr_wb_dirty),
                (dirty, wb, wbd)
            ));
        }
        if per_file.len() != self.files.len() {
            return Err(format!("{} file states for {} files with pages", self.files.len(), per_file.len()));
        }
        let mut dirty_files = 0;
        for (f, fs) in &self.files {
            let want = per_file.get(f).copied().unwrap_or_default();
            if (fs.cached, fs.dirty, fs.writeback) != want {
                return Err(format!("file {f}: counts {:?}, pages {want:?}", (fs.cached, fs.dirty, fs.writeback)));
            }
            if fs.dirty_pages.len() as u64 != fs.dirty {
                return Err(format!("file {f}: dirty map {} for {} dirty", fs.dirty_pages.len(), fs.dirty));
            }
            if fs.dirty > 0 {
                dirty_files += 1;
                if !self.dirty_order.contains(&(fs.dirtied_when, *f)) {
                    return Err(format!("dirty file {f} not in the dirty order"));
                }
            }
        }
        if dirty_files != self.dirty_order.len() {
            return Err("the dirty order holds clean files".into());
        }
        for list in [INACTIVE, ACTIVE_LIST] {
            let mut n = 0;
            let mut s = self.table.lists[list].head;
            let mut prev = NIL;
            while s != NIL {
                if self.table.slot(s).prev != prev || self.table.list_of(s) != list {
                    return Err("broken list links".into());
                }
                prev = s;
                s = self.table.slot(s).next;
                n += 1;
            }
            if prev != self.table.lists[list].tail || n != self.table.lists[list].len {
                return Err("list length or tail wrong".into());
            }
        }
        let lists = self.table.lists[INACTIVE].len + self.table.lists[ACTIVE_LIST].len;
        if lists != self.table.len() || self.table.len() > self.cfg.budget_pages {
            return Err(format!("{} on lists, {} cached, budget {}", lists, self.table.len(), self.cfg.budget_pages));
        }
        Ok(())
    }
}
