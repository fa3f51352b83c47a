//! The throughput runner's floors (`benches/common/floor.rs`): they complete the requests
//! they are given in four events each, and the write floor's map stays consistent while it
//! runs at the WAF it was sized for.

#[path = "../benches/common/floor.rs"]
mod floor;

use floor::{read_floor, write_floor, Shape, WriteState};
use ssdlab_core::device::ssd::SsdConfig;

/// A 1 GiB generic drive: 262,144 logical pages.
fn shape(write_waf: Option<f64>) -> (SsdConfig, Shape) {
    let cfg = SsdConfig::generic(1);
    let s = match write_waf {
        None => Shape::read(&cfg, 32),
        Some(w) => Shape::write(&cfg, 32, w),
    };
    (cfg, s)
}

#[test]
fn read_floor_completes_every_request_in_four_events() {
    let (_, s) = shape(None);
    assert_eq!((s.dies, s.channels, s.logical_pages), (32, 8, 262_144));
    let r = read_floor(s, 100_000, 1);
    assert_eq!(r.completed, 100_000);
    assert_eq!(r.events, 400_000);
    assert_eq!((r.host_writes, r.gc_copies), (0, 0));
    // 32 dies each busy 60 µs per read bound the rate at about 533 k reads per simulated
    // second; QD 32 spread over 32 dies at random keeps it well under that.
    let per_s = r.completed as f64 / (r.end_ns as f64 / 1e9);
    assert!(per_s > 100_000.0 && per_s < 533_334.0, "{per_s} reads per simulated second");
    // Fewer requests than the depth: only those are issued.
    assert_eq!(read_floor(s, 5, 1).events, 20);
    assert_eq!(read_floor(s, 5, 1), read_floor(s, 5, 1), "a seed repeats");
}

#[test]
fn write_floor_keeps_its_map_consistent_at_the_wanted_waf() {
    let (cfg, s) = shape(Some(3.0));
    let block_pages = (cfg.nand.pages_per_block as u64 * cfg.nand.page_bytes / cfg.ftl.iu_bytes) as u32;
    let mut state = WriteState::new(s.logical_pages, 3.0, block_pages);
    state.check().expect("filled sequentially");
    state.warm_up(7);
    state.check().expect("after warm-up");
    let r = write_floor(s, 200_000, 7, &mut state);
    assert_eq!((r.completed, r.events, r.host_writes), (200_000, 800_000, 200_000));
    state.check().expect("after the timed run");
    let waf = 1.0 + r.gc_copies as f64 / r.host_writes as f64;
    assert!((waf - 3.0).abs() < 0.15, "the ring sized for WAF 3 ran at {waf}");
}

#[test]
fn ring_size_follows_the_waf() {
    let l = 1_000_000;
    // L·W·ln(W/(W−1)): 1.216 L at WAF 3, 1.116 L at WAF 5; capped at 4 L near WAF 1.
    assert_eq!(WriteState::ring_pages(l, 3.0), 1_216_396);
    assert_eq!(WriteState::ring_pages(l, 5.0), 1_115_718);
    assert_eq!(WriteState::ring_pages(l, 1.0), 4 * l);
}
