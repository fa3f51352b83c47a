//! The page cache's policies one at a time: dirty thresholds at both eras' defaults, the
//! throttle's regions, read-ahead window growth, LRU promotion and reclaim, the flusher's
//! periodic pass, fsync and truncate.

use ssdlab_core::pagecache::{
    DirtyLimit, Era, PageCache, PageCacheConfig, PageKey, PageState, RaState, ReadPlan, Run, WbWork, WriterState,
};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn cache(era: Era, budget: u64) -> PageCache {
    PageCache::new(PageCacheConfig::for_era(era, budget)).unwrap()
}

// ---- dirty thresholds --------------------------------------------------------------------

#[test]
fn thresholds_at_the_2008_defaults_are_5_and_10_percent() {
    // 4 GiB of dirtyable memory: 1,048,576 pages.
    let pc = cache(Era::Linux2008, 1 << 20);
    assert_eq!(pc.dirty_thresholds(), (52_428, 104_857));
}

#[test]
fn thresholds_at_todays_defaults_are_10_and_20_percent() {
    let pc = cache(Era::Today, 1 << 20);
    assert_eq!(pc.dirty_thresholds(), (104_857, 209_715));
}

#[test]
fn byte_thresholds_round_up_and_a_background_over_the_limit_is_halved() {
    let mut c = PageCacheConfig::for_era(Era::Today, 1 << 20);
    c.dirty = DirtyLimit::Bytes(256 << 20);
    c.dirty_background = DirtyLimit::Bytes((64 << 20) + 1);
    assert_eq!(PageCache::new(c.clone()).unwrap().dirty_thresholds(), (16_385, 65_536));
    c.dirty_background = DirtyLimit::Bytes(512 << 20);
    assert_eq!(PageCache::new(c.clone()).unwrap().dirty_thresholds(), (32_768, 65_536));
    // The ratio base can be set apart from the budget.
    c.dirty = DirtyLimit::Ratio(20);
    c.dirty_background = DirtyLimit::Ratio(10);
    c.dirtyable_pages = Some(1000);
    assert_eq!(PageCache::new(c.clone()).unwrap().dirty_thresholds(), (100, 200));
    c.dirty = DirtyLimit::Bytes(4096);
    assert!(PageCache::new(c).is_err(), "dirty_bytes under two pages is refused");
}

#[test]
fn background_writeback_is_wanted_past_the_background_threshold_and_stops_under_it() {
    // 1000 pages today: background 100, hard 200.
    let mut pc = cache(Era::Today, 1000);
    let mut ev = Vec::new();
    let s = pc.write(0, 1, 0..100, &mut ev);
    assert!(!s.over_background, "100 dirty pages are not over 100");
    let s = pc.write(0, 1, 100..101, &mut ev);
    assert!(s.over_background);
    pc.write(0, 2, 0..50, &mut ev);
    let mut runs = Vec::new();
    let wb = pc.writeback(S, WbWork::Background, u64::MAX, &mut runs);
    // Chunks of 1024 overshoot: file 1's 101 pages go in one chunk, leaving 50 ≤ 100.
    assert_eq!(wb.pages, 101);
    assert_eq!(runs, vec![Run { file: 1, start: 0, len: 101 }]);
    assert_eq!(pc.dirty_pages(), 50);
    assert_eq!(pc.writeback(S, WbWork::Background, u64::MAX, &mut runs).pages, 0);
}

// ---- throttling --------------------------------------------------------------------------

fn dirty_cache(dirty: u64) -> PageCache {
    // 10,000 pages: background 1000, hard 2000, freerun 1500, setpoint 1750.
    let mut pc = cache(Era::Today, 10_000);
    let mut ev = Vec::new();
    pc.write(0, 1, 0..dirty, &mut ev);
    pc
}

#[test]
fn a_writer_under_the_freerun_ceiling_is_not_paused() {
    let mut pc = dirty_cache(1500);
    let t = pc.balance_dirty_pages(MS, &mut WriterState::default(), 1500);
    assert_eq!(t.pause_ns, 0);
    assert!(t.start_background && !t.over_limit);
}

#[test]
fn at_the_setpoint_a_writer_is_held_to_the_write_bandwidth() {
    let mut pc = dirty_cache(1750);
    let bw = pc.write_bandwidth();
    assert_eq!(bw, 25_600.0, "INIT_BW, 100 MB/s");
    let mut w = WriterState::default();
    // 64 pages at 25,600 pages/s: 2.5 ms.
    let t = pc.balance_dirty_pages(MS, &mut w, 64);
    assert_eq!(t.pause_ns, 2_500_000);
    // The next 64 pages, dirtied 1 ms after that pause ended: 1.5 ms more.
    let t = pc.balance_dirty_pages(MS + 2_500_000 + MS, &mut w, 64);
    assert_eq!(t.pause_ns, 1_500_000);
    // Past the setpoint the rate falls; before it, it rises.
    let mut hi = dirty_cache(1900);
    let mut lo = dirty_cache(1600);
    let th = hi.balance_dirty_pages(MS, &mut WriterState::default(), 64).pause_ns;
    let tl = lo.balance_dirty_pages(MS, &mut WriterState::default(), 64).pause_ns;
    assert!(th > 2_500_000 && tl < 2_500_000, "{th} {tl}");
    // A single pause is at most 200 ms.
    assert_eq!(hi.balance_dirty_pages(MS, &mut WriterState::default(), 100_000).pause_ns, 200 * MS);
}

#[test]
fn over_the_hard_limit_a_writer_waits_for_writeback_to_bring_it_down() {
    let mut pc = dirty_cache(2256);
    let t = pc.balance_dirty_pages(MS, &mut WriterState::default(), 1);
    assert!(t.over_limit && t.start_background);
    // 256 pages over at 25,600 pages/s.
    assert_eq!(t.pause_ns, 10 * MS);
    // Pages under writeback count toward the limit too.
    let mut runs = Vec::new();
    pc.writeback(MS, WbWork::All, 1000, &mut runs);
    assert_eq!((pc.dirty_pages(), pc.writeback_pages()), (1256, 1000));
    assert!(pc.balance_dirty_pages(2 * MS, &mut WriterState::default(), 1).over_limit);
}

#[test]
fn the_bandwidth_estimate_follows_completions() {
    let mut pc = dirty_cache(2000);
    let mut runs = Vec::new();
    pc.writeback(0, WbWork::All, u64::MAX, &mut runs);
    // 2000 pages completed over 5 s: 400 pages/s replaces the initial estimate.
    for r in runs.clone() {
        pc.complete_writeback(5 * S, r);
    }
    assert!((pc.write_bandwidth() - 400.0).abs() < 1e-6, "{}", pc.write_bandwidth());
}

// ---- read-ahead --------------------------------------------------------------------------

fn read(pc: &mut PageCache, ra: &mut RaState, file: u32, pages: std::ops::Range<u64>, plan: &mut ReadPlan) -> Vec<Run> {
    pc.read(0, file, ra, pages, 1 << 20, plan);
    plan.runs.iter().map(|r| r.run).collect()
}

#[test]
fn sequential_reads_ramp_the_window_from_4_to_32_pages() {
    let mut pc = cache(Era::Today, 1 << 16);
    let mut ra = pc.new_ra_state();
    assert_eq!(ra.ra_pages, 32, "read_ahead_kb 128");
    let mut plan = ReadPlan::default();
    let mut sizes = Vec::new();
    let mut reads = Vec::new();
    for p in 0..200 {
        let runs = read(&mut pc, &mut ra, 1, p..p + 1, &mut plan);
        if !runs.is_empty() {
            sizes.push(ra.window().size);
            reads.push(runs);
        }
    }
    assert_eq!(sizes[..6], [4, 8, 16, 32, 32, 32]);
    // The first window is synchronous (page 0 missed), the rest start at the markers.
    assert_eq!(reads[0], vec![Run { file: 1, start: 0, len: 4 }]);
    assert_eq!(reads[1], vec![Run { file: 1, start: 4, len: 8 }]);
    assert_eq!(reads[2], vec![Run { file: 1, start: 12, len: 16 }]);
    assert_eq!(reads[3], vec![Run { file: 1, start: 28, len: 32 }]);
    assert!(plan.runs.iter().all(|r| r.marker));
    let st = pc.stats();
    assert_eq!((st.misses, st.hits), (1, 199), "only page 0 missed");
}

#[test]
fn a_large_first_read_starts_with_a_larger_window() {
    let mut pc = cache(Era::Today, 1 << 16);
    let mut ra = pc.new_ra_state();
    let mut plan = ReadPlan::default();
    // 4 pages: rounded to 4, at most 32/4: twice → 8, of which 4 are ahead.
    let runs = read(&mut pc, &mut ra, 1, 0..4, &mut plan);
    assert_eq!(runs, vec![Run { file: 1, start: 0, len: 8 }]);
    assert_eq!((ra.window().size, ra.window().async_size), (8, 4));
}

#[test]
fn random_reads_get_no_read_ahead() {
    let mut pc = cache(Era::Today, 1 << 16);
    let mut ra = pc.new_ra_state();
    let mut plan = ReadPlan::default();
    // The first read (not at page 0) and far-apart reads after it: each its own page only.
    for p in [5000u64, 91, 70_000, 12_345, 3, 40_000] {
        let runs = read(&mut pc, &mut ra, 1, p..p + 1, &mut plan);
        assert_eq!(runs, vec![Run { file: 1, start: p, len: 1 }], "read at {p}");
        assert_eq!(ra.window().size, 0);
    }
    assert_eq!(pc.stats().readahead, 0);
}

#[test]
fn a_random_read_after_a_cached_run_reads_ahead_as_a_stream_today_not_in_2008() {
    for era in [Era::Today, Era::Linux2008] {
        let mut pc = cache(era, 1 << 16);
        let mut ra = pc.new_ra_state();
        let mut plan = ReadPlan::default();
        // Pages 100..110 cached by reads from the top down (random to the state, and no
        // cached run below any of them when it is read).
        for p in (100..110u64).rev() {
            read(&mut pc, &mut ra, 1, p..p + 1, &mut plan);
        }
        // A read at 110: ten cached pages before it, so a window of 10 + 1 at 110, its last
        // page the marker (async_size 1).
        let runs = read(&mut pc, &mut ra, 1, 110..111, &mut plan);
        if era == Era::Today {
            assert_eq!(runs, vec![Run { file: 1, start: 110, len: 11 }]);
            assert_eq!((ra.window().start, ra.window().size, ra.window().async_size), (110, 11, 1));
            assert!(!plan.runs[0].marker, "a miss's window is synchronous");
            // Its last page is the marker: reading on to it starts the next window, doubled.
            for p in 111..120 {
                assert!(read(&mut pc, &mut ra, 1, p..p + 1, &mut plan).is_empty());
            }
            assert_eq!(read(&mut pc, &mut ra, 1, 120..121, &mut plan), vec![Run { file: 1, start: 121, len: 22 }]);
            assert!(plan.runs[0].marker);
        } else {
            assert_eq!(runs, vec![Run { file: 1, start: 110, len: 1 }], "2.6.2x had no context read-ahead");
        }
        // One cached page before the read is a lone random read (history no longer than it).
        let runs = read(&mut pc, &mut ra, 1, 501..502, &mut plan);
        assert_eq!(runs, vec![Run { file: 1, start: 501, len: 1 }]);
        let mut another = pc.new_ra_state();
        let runs = read(&mut pc, &mut another, 1, 502..503, &mut plan);
        assert_eq!(runs, vec![Run { file: 1, start: 502, len: 1 }], "{era:?}");
    }
}

#[test]
fn context_read_ahead_counts_a_file_cached_from_its_start_twice_and_stops_at_the_maximum() {
    let mut pc = cache(Era::Today, 1 << 16);
    let mut plan = ReadPlan::default();
    // Pages 0..6 cached by a reader of its own; another reader's first read at 6 is random to
    // its state (not page 0, no previous read): history 6, from the start, counts 12: 12 + 1.
    let mut first = pc.new_ra_state();
    for p in (0..6u64).rev() {
        read(&mut pc, &mut first, 2, p..p + 1, &mut plan);
    }
    let mut ra = pc.new_ra_state();
    assert_eq!(read(&mut pc, &mut ra, 2, 6..7, &mut plan), vec![Run { file: 2, start: 6, len: 13 }]);
    // Forty cached pages before a read: history capped at the 32-page maximum, window 32.
    let mut other = pc.new_ra_state();
    for p in (1000..1040u64).rev() {
        read(&mut pc, &mut other, 3, p..p + 1, &mut plan);
    }
    let mut ra = pc.new_ra_state();
    assert_eq!(read(&mut pc, &mut ra, 3, 1040..1041, &mut plan), vec![Run { file: 3, start: 1040, len: 32 }]);
}

#[test]
fn no_read_ahead_when_it_is_off() {
    let mut pc = cache(Era::Today, 1 << 16);
    let mut ra = RaState::new(0);
    let mut plan = ReadPlan::default();
    for p in 0..10 {
        assert_eq!(read(&mut pc, &mut ra, 1, p..p + 1, &mut plan), vec![Run { file: 1, start: p, len: 1 }]);
    }
}

#[test]
fn read_ahead_stops_at_the_end_of_the_file() {
    let mut pc = cache(Era::Today, 1 << 16);
    let mut ra = pc.new_ra_state();
    let mut plan = ReadPlan::default();
    let s = pc.read(0, 1, &mut ra, 0..10, 3, &mut plan);
    assert_eq!(plan.runs[0].run, Run { file: 1, start: 0, len: 3 });
    assert_eq!((s.misses, s.hits), (3, 0));
}

// ---- LRU and reclaim ---------------------------------------------------------------------

#[test]
fn a_second_access_promotes_and_the_active_list_survives_a_scan() {
    let mut pc = cache(Era::Linux2008, 100);
    let mut ra = RaState::new(0);
    let mut plan = ReadPlan::default();
    pc.read(0, 1, &mut ra, 0..30, 1000, &mut plan);
    assert!(!pc.page_info(1, 5).unwrap().active);
    assert!(pc.page_info(1, 5).unwrap().referenced);
    let mut ra2 = RaState::new(0);
    pc.read(0, 1, &mut ra2, 0..30, 1000, &mut plan);
    assert!(pc.page_info(1, 5).unwrap().active);
    assert_eq!(pc.lru_lengths(), (0, 30));
    // A stream of pages read once, three times the cache: the twice-read pages stay.
    let mut evicted = 0;
    for p in 0..300 {
        let mut r = RaState::new(0);
        pc.read(0, 2, &mut r, p..p + 1, 1000, &mut plan);
        evicted += plan.evicted.len();
        assert!(plan.evicted.iter().all(|k| k.file == 2), "evicted a hot page: {:?}", plan.evicted);
        assert!(pc.cached_pages() <= 100);
    }
    assert!(evicted >= 200);
    assert!((0..30).all(|p| pc.page_info(1, p).is_some()));
    // Equal lists: the active list is aged until the inactive list is as long.
    let (i, a) = pc.lru_lengths();
    assert!(i >= a, "{i} {a}");
}

#[test]
fn reclaim_skips_dirty_pages_and_asks_for_writeback() {
    let mut pc = cache(Era::Today, 64);
    let mut ev = Vec::new();
    pc.write(0, 1, 0..40, &mut ev);
    let mut ra = RaState::new(0);
    let mut plan = ReadPlan::default();
    let s = pc.read(0, 2, &mut ra, 0..24, 1000, &mut plan);
    assert!(!s.wake_flusher && plan.evicted.is_empty());
    // Full: the next read must evict; only file 2's clean pages may go.
    let s = pc.read(0, 3, &mut ra, 0..10, 1000, &mut plan);
    assert!(plan.evicted.iter().all(|k| k.file == 2), "{:?}", plan.evicted);
    assert!(s.wake_flusher, "reclaim met the dirty pages at the tail");
    assert_eq!(pc.file_pages(1), (40, 40, 0));
    // All dirty: nothing can be reclaimed, the write stops.
    let mut pc = cache(Era::Today, 16);
    let s = pc.write(0, 1, 0..20, &mut ev);
    assert_eq!((s.pages, s.blocked_at), (16, Some(16)));
    assert!(s.wake_flusher);
    assert_eq!(pc.cached_pages(), 16);
}

#[test]
fn a_page_written_back_after_reclaim_met_it_is_evicted_first() {
    let mut pc = cache(Era::Today, 8);
    let mut ev = Vec::new();
    pc.write(0, 1, 0..1, &mut ev); // the oldest page, dirty
    let mut ra = RaState::new(0);
    let mut plan = ReadPlan::default();
    pc.read(0, 2, &mut ra, 0..7, 100, &mut plan);
    let mut evicted: Vec<PageKey> = Vec::new();
    let s = pc.shrink(1, &mut evicted);
    assert!(s.wake_flusher);
    assert_eq!(evicted, vec![PageKey { file: 2, index: 0 }]);
    assert!(pc.page_info(1, 0).unwrap().active, "moved to the active list");
    let mut runs = Vec::new();
    pc.writeback(0, WbWork::All, u64::MAX, &mut runs);
    pc.complete_writeback(MS, runs[0]);
    assert!(!pc.page_info(1, 0).unwrap().active);
    pc.shrink(1, &mut evicted);
    assert_eq!(evicted, vec![PageKey { file: 1, index: 0 }], "rotated to the inactive tail");
}

// ---- the flusher ------------------------------------------------------------------------

#[test]
fn the_periodic_pass_writes_files_dirtied_more_than_30_s_ago() {
    let mut pc = cache(Era::Today, 10_000);
    let mut ev = Vec::new();
    pc.write(0, 7, 10..20, &mut ev);
    pc.write(10 * S, 3, 0..5, &mut ev);
    pc.write(25 * S, 7, 0..5, &mut ev); // file 7 is dirty since 0: these go too
    assert_eq!(pc.next_periodic(), Some(5 * S));
    let mut runs = Vec::new();
    assert_eq!(pc.writeback(29 * S, WbWork::Periodic, u64::MAX, &mut runs).pages, 0);
    let wb = pc.writeback(31 * S, WbWork::Periodic, u64::MAX, &mut runs);
    assert_eq!(wb.pages, 15);
    assert_eq!(runs, vec![Run { file: 7, start: 0, len: 5 }, Run { file: 7, start: 10, len: 10 }]);
    // The pass at 29 s counted as the periodic wake-up: the next is due 5 s after it.
    assert_eq!(pc.next_periodic(), Some(34 * S));
    let wb = pc.writeback(41 * S, WbWork::Periodic, u64::MAX, &mut runs);
    assert_eq!((wb.pages, runs.clone()), (5, vec![Run { file: 3, start: 0, len: 5 }]));
    assert_eq!(pc.next_periodic(), None);
}

#[test]
fn the_flusher_takes_chunks_round_robin_from_each_files_cursor() {
    let mut c = PageCacheConfig::for_era(Era::Today, 100_000);
    c.writeback_chunk_pages = 4;
    let mut pc = PageCache::new(c).unwrap();
    let mut ev = Vec::new();
    pc.write(0, 2, 0..6, &mut ev);
    pc.write(1, 1, 0..6, &mut ev);
    let mut runs = Vec::new();
    pc.writeback(S, WbWork::All, 6, &mut runs);
    assert_eq!(runs, vec![Run { file: 2, start: 0, len: 4 }, Run { file: 1, start: 0, len: 2 }]);
    for r in runs.clone() {
        pc.complete_writeback(S, r);
    }
    // Page 0 of file 2 is dirtied again (file 2 stays dirty since 0). File 1 was served last,
    // so the next turn is file 2's, from its cursor (4), wrapping to 0; then file 1 resumes
    // at 2, a chunk of 4.
    pc.write(2, 2, 0..1, &mut ev);
    pc.writeback(S, WbWork::All, u64::MAX, &mut runs);
    assert_eq!(
        runs,
        vec![Run { file: 2, start: 4, len: 2 }, Run { file: 2, start: 0, len: 1 }, Run { file: 1, start: 2, len: 4 }]
    );
}

#[test]
fn fsync_writes_a_files_dirty_pages_in_index_order_and_waits_for_redirtied_ones() {
    let mut pc = cache(Era::Today, 1000);
    let mut ev = Vec::new();
    pc.write(0, 1, 50..60, &mut ev);
    pc.write(0, 1, 0..10, &mut ev);
    pc.write(0, 2, 0..10, &mut ev);
    let mut runs = Vec::new();
    pc.writeback(0, WbWork::All, 5, &mut runs); // file 1, pages 0..5
    assert_eq!(runs, vec![Run { file: 1, start: 0, len: 5 }]);
    pc.write(MS, 1, 2..3, &mut ev); // dirty again while under writeback
    assert_eq!(pc.page_info(1, 2).unwrap().state, PageState::WritebackDirty);
    let f = pc.fsync(1, &mut runs);
    assert_eq!(runs, vec![Run { file: 1, start: 5, len: 5 }, Run { file: 1, start: 50, len: 10 }]);
    assert_eq!((f.pages, f.in_flight, f.again), (15, 5, true));
    pc.complete_writeback(2 * MS, Run { file: 1, start: 0, len: 5 });
    assert_eq!(pc.page_info(1, 2).unwrap().state, PageState::Dirty);
    let f = pc.fsync(1, &mut runs);
    assert_eq!(runs, vec![Run { file: 1, start: 2, len: 1 }]);
    assert!(!f.again);
    assert_eq!(pc.file_pages(2), (10, 10, 0), "fsync leaves other files alone");
}

#[test]
fn truncate_and_delete_drop_dirty_pages_unwritten() {
    let mut pc = cache(Era::Today, 1000);
    let mut ev = Vec::new();
    pc.write(0, 1, 0..20, &mut ev);
    let mut runs = Vec::new();
    pc.writeback(0, WbWork::All, 5, &mut runs);
    let d = pc.truncate(1, 3);
    assert_eq!((d.pages, d.dirty), (17, 15));
    assert_eq!(pc.file_pages(1), (3, 0, 3));
    // The dropped pages' writeback completes: ignored.
    assert_eq!(pc.complete_writeback(MS, runs[0]), 3);
    let d = pc.delete(1);
    assert_eq!((d.pages, d.dirty), (3, 0));
    let st = pc.stats();
    assert_eq!((st.dirtied, st.written_back, st.dropped_dirty), (20, 5, 15));
    assert_eq!(pc.cached_pages(), 0);
    pc.audit().unwrap();
}
