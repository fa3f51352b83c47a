//! Bytes per cached page, measured: a counting allocator (this test binary's own) records
//! every byte the cache holds on the heap while a 4 GiB cache (1,048,576 pages) fills with
//! clean pages and then has 10 % and 20 % of them dirtied (the default background and hard
//! limits). The bar is under 32 bytes per cached page.

use std::time::Instant;

use ssdlab_core::pagecache::{Era, PageCache, PageCacheConfig, RaState, ReadPlan};

mod counting;
use counting::live;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

const PAGES: u64 = 1 << 20;
const FILES: u32 = 16;

/// The one test of this binary (the counter is shared by every thread).
#[test]
fn a_cached_page_costs_under_32_bytes() {
    let base = live();
    let mut pc = PageCache::new(PageCacheConfig::for_era(Era::Today, PAGES)).unwrap();
    let per_file = PAGES / FILES as u64;
    let mut plan = ReadPlan::default();
    let t = Instant::now();
    let mut half = 0.0;
    for f in 0..FILES {
        let mut ra = RaState::new(0);
        for chunk in (0..per_file).step_by(4096) {
            pc.read(0, f, &mut ra, chunk..chunk + 4096, per_file, &mut plan);
        }
        if f == FILES / 2 - 1 {
            plan = ReadPlan::default();
            half = (live() - base) as f64 / pc.cached_pages() as f64;
        }
    }
    let fill = t.elapsed();
    plan = ReadPlan::default();
    drop(plan);
    assert_eq!(pc.cached_pages(), PAGES);
    let clean = (live() - base) as f64 / PAGES as f64;
    let table = pc.table_bytes() as f64 / PAGES as f64;

    // Dirty 10 %, then 20 %, spread over the files in runs of 64 pages.
    let mut ev = Vec::new();
    let mut dirty_cost = Vec::new();
    let t = Instant::now();
    for share in [10u64, 20] {
        let want = PAGES * share / 100;
        let mut f = 0u32;
        let mut start = 0u64;
        while pc.dirty_pages() < want {
            pc.write(1, f, start..start + 64, &mut ev);
            f = (f + 1) % FILES;
            if f == 0 {
                start += 256;
            }
        }
        ev = Vec::new();
        dirty_cost.push((share, (live() - base) as f64 / PAGES as f64));
    }
    let dirtying = t.elapsed();
    // 1M lookups of cached pages.
    let t = Instant::now();
    let mut hits = 0;
    for i in 0..PAGES {
        hits += pc.page_info((i % FILES as u64) as u32, i / FILES as u64).is_some() as u64;
    }
    let lookups = t.elapsed();
    assert_eq!(hits, PAGES);
    pc.audit().unwrap();

    println!("bytes per cached page, 1,048,576-page cache:");
    println!("  half full, clean:      {half:.1}");
    println!("  full, clean:           {clean:.1} (records and index: {table:.1})");
    for (share, b) in &dirty_cost {
        println!("  full, {share} % dirty:      {b:.1}");
    }
    println!("fill {fill:?}, dirtying 20 % {dirtying:?}, 1M lookups {lookups:?}");
    assert!(clean < 32.0, "{clean}");
    for (share, b) in dirty_cost {
        assert!(b < 32.0, "{share} % dirty: {b}");
    }
}
