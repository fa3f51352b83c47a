//! SLC cache: the write cliff sits where the cache is full, folding empties the cache in idle
//! time without losing data, and the dynamic part shrinks as the drive fills.

mod common;

use common::*;
use ssdlab_core::device::ssd::{FoldPolicy, Precondition, SlcCacheConfig, SsdConfig};
use ssdlab_core::host::HostConfig;
use ssdlab_core::workload::{JobSpec, RwMode};

const MIB: u64 = 1 << 20;

/// A 1 GiB TLC drive (one-shot, 3 pages per program) with an SLC cache of 32 + 64 MiB.
fn tlc_with_cache(fold: FoldPolicy) -> SsdConfig {
    let mut cfg = SsdConfig::generic(1);
    cfg.nand.bits_per_cell = 3;
    cfg.nand.program_pages = 3;
    cfg.nand.pages_per_block = 48; // a multiple of 3
    cfg.nand.blocks_per_plane = 36;
    cfg.nand.program_ns = 2_000_000; // 96 KiB x 2 planes per 2 ms per die
    cfg.slc_cache = Some(SlcCacheConfig {
        static_bytes: 32 * MIB,
        dynamic_max_bytes: 64 * MIB,
        read_ns: 30_000,
        program_ns: 200_000,
        erase_ns: 2_000_000,
        fold,
    });
    cfg.validate().expect("valid");
    cfg
}

/// Sequential 128 KiB writes at QD32 over `bytes`, sampled every `interval_ns`.
fn seq_write(bytes: u64) -> JobSpec {
    let mut j = JobSpec::simple("w", RwMode::Write, 128 * 1024, 32, 1 << 30);
    j.io_limit = bytes;
    j
}

#[test]
fn cliff_comes_when_the_cache_is_full() {
    let cfg = tlc_with_cache(FoldPolicy::Idle);
    let mut ssd = fresh(cfg.clone(), 1);
    let (r, _) = run_audited(&mut ssd, HostConfig::ideal(), vec![seq_write(512 * MIB)], 1, Some(2_000_000));
    // Rate per interval from cumulative host bytes in the samples.
    let s = &r.samples;
    let rates: Vec<(u64, f64)> = s
        .windows(2)
        .map(|w| (w[1].devices[0].internal.nand().slc_host_bytes, (w[1].write_bytes - w[0].write_bytes) as f64 / 2e-3))
        .collect();
    let fast = rates[2].1;
    let slow = rates[rates.len() - 3].1;
    // SLC: 32 dies x 32 KiB per 200 us = 5.2 GB/s (the link, ~3.5 GB/s, limits); native:
    // 32 dies x 96 KiB (3 pages x 2 planes) per 2 ms = 1.6 GB/s.
    let slc_bw: f64 = 32.0 * 32.0 * 1024.0 / 200e-6;
    let native_bw: f64 = 32.0 * 96.0 * 1024.0 / 2e-3;
    let link = cfg.interface.bytes_per_s() as f64;
    assert!((fast - slc_bw.min(link)).abs() / slc_bw.min(link) < 0.1, "fast {fast} vs {}", slc_bw.min(link));
    assert!((slow - native_bw.min(link)).abs() / native_bw.min(link) < 0.1, "slow {slow} vs {native_bw}");
    // The cliff: host bytes that went to SLC equal the cache size (static + dynamic).
    let slc_total = r.devices[0].internal.nand().slc_host_bytes as f64;
    assert!((slc_total - 96.0 * MIB as f64).abs() <= 2.0 * MIB as f64, "SLC took {slc_total} bytes");
    ssd.ftl().check_invariants().unwrap();
}

#[test]
fn folding_in_idle_time_empties_the_cache_and_keeps_the_data() {
    let cfg = tlc_with_cache(FoldPolicy::Idle);
    let mut ssd = fresh(cfg, 1);
    let mut w = seq_write(64 * MIB);
    w.iodepth = 4;
    // A reader long after the writer lets the drive sit idle in between.
    let mut idle_then_read = JobSpec::simple("r", RwMode::Read, 128 * 1024, 4, 64 * MIB);
    idle_then_read.start_after = vec![0];
    idle_then_read.start_delay_ns = 2_000_000_000;
    idle_then_read.io_limit = 64 * MIB;
    let (r, audit) = run_audited(&mut ssd, HostConfig::ideal(), vec![w, idle_then_read], 1, None);
    let i = &r.devices[0].internal;
    assert_eq!(i.nand().slc_host_bytes, 64 * MIB);
    assert_eq!(i.nand().folded_bytes, 64 * MIB, "all SLC data folded while idle");
    assert_eq!(i.nand().slc_used_bytes, 0);
    assert_eq!(r.jobs[1].read.bytes, 64 * MIB);
    assert!(audit.busy_ns() > 0);
    ssd.ftl().check_invariants().unwrap();
    assert_eq!(ssd.ftl().valid_ius(), 64 * MIB / 4096);
}

#[test]
fn dynamic_part_shrinks_as_the_drive_fills() {
    let cfg = tlc_with_cache(FoldPolicy::Idle);
    let mut ssd = fresh(cfg, 1);
    let empty = ssd.ftl().slc_budget_ius() * 4096;
    assert_eq!(empty, 96 * MIB);
    // Fill 95 % of the drive: free user space / 3 bits is below the dynamic maximum.
    let (_r, _) = run_audited(&mut ssd, HostConfig::ideal(), vec![seq_write((1 << 30) / 20 * 19)], 1, None);
    let budget = ssd.ftl().slc_budget_ius();
    let free_user = ssd.ftl().logical_ius() - ssd.ftl().valid_ius();
    assert_eq!(budget * 4096, 32 * MIB + free_user / 3 * 4096);
    assert!(budget * 4096 < 96 * MIB);
    ssd.ftl().check_invariants().unwrap();
}

#[test]
fn pressure_folding_costs_host_throughput() {
    // Same drive, folding while writing once full: the sustained rate after the cache is
    // lower than with idle-only folding, because folds share the dies with host programs.
    let rate = |fold| {
        let mut ssd = fresh(tlc_with_cache(fold), 1);
        let (r, _) = run_audited(&mut ssd, HostConfig::ideal(), vec![seq_write(768 * MIB)], 1, None);
        ssd.ftl().check_invariants().unwrap();
        let j = &r.jobs[0];
        j.write.bytes as f64 / (j.end_ns - j.measure_start_ns) as f64
    };
    let idle = rate(FoldPolicy::Idle);
    let pressure = rate(FoldPolicy::Pressure);
    assert!(pressure < idle * 0.97, "pressure {pressure} vs idle {idle}");
}

#[test]
fn fast_sequential_fill_leaves_the_cache_as_a_simulated_fill_does() {
    // Timed: fill the whole drive sequentially with no idle time (nothing is folded).
    let mut timed = fresh(tlc_with_cache(FoldPolicy::Idle), 1);
    let (r, _) = run_audited(&mut timed, HostConfig::ideal(), vec![seq_write(1 << 30)], 1, None);
    let timed_slc = r.devices[0].internal.nand().slc_host_bytes;
    // Fast: the same fill without time.
    let fast = preconditioned(tlc_with_cache(FoldPolicy::Idle), Precondition::Sequential, 1);
    let (t, f) = (timed.ftl(), fast.ftl());
    // The timed drive may still hold data in its write buffer (not yet placed).
    let buffered_ius = tlc_with_cache(FoldPolicy::Idle).write_buffer_bytes / 4096;
    assert!(f.valid_ius() - t.valid_ius() <= buffered_ius, "{} vs {}", t.valid_ius(), f.valid_ius());
    // Both filled the cache first and kept it (no idle time to fold).
    assert!((t.slc_used_ius() as i64 - f.slc_used_ius() as i64).abs() <= 2 * t.ius_per_slc_block as i64 + buffered_ius as i64,
        "SLC in use: timed {} vs fast {}", t.slc_used_ius(), f.slc_used_ius());
    assert!(timed_slc >= 90 * MIB);
    f.check_invariants().unwrap();
}

#[test]
fn a_full_drive_folds_a_cache_that_outgrew_its_spare() {
    // A tight drive (80 MiB of spare beyond the GC reserve) whose dynamic cache, 256 MiB of data in SLC, would take
    // 512 MiB more flash than native: filled without idle time, it ends full with most of
    // the cache still in SLC, so garbage collection must fold SLC blocks to find room (an SLC
    // block is worth collecting even when all its data is valid). Random overwrites of that
    // full drive, untimed and timed, must keep the GC reserve and the FTL's books.
    let mut cfg = tlc_with_cache(FoldPolicy::Idle);
    cfg.nand.blocks_per_plane = 29;
    cfg.slc_cache.as_mut().unwrap().dynamic_max_bytes = 256 * MIB;
    cfg.validate().expect("valid");
    let cap = cfg.capacity_bytes;
    let ssd = preconditioned(cfg.clone(), Precondition::Sequential, 1);
    let (f, budget) = (ssd.ftl(), ssd.ftl().slc_budget_ius());
    assert!(f.slc_used_ius() > 2 * budget, "the fill should leave the cache over budget: {} vs {budget}", f.slc_used_ius());
    let mut ssd = preconditioned(cfg, Precondition::Random { passes: 1.0 }, 1);
    ssd.ftl().check_invariants().unwrap();
    let mut w = JobSpec::simple("w", RwMode::Randwrite, 4096, 32, cap);
    w.io_limit = 256 * MIB;
    let (r, a) = run_audited(&mut ssd, HostConfig::ideal(), vec![w], 1, None);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    ssd.ftl().check_invariants().unwrap();
    let i = &r.devices[0].internal;
    assert_eq!(i.host_bytes_written, 256 * MIB);
    assert!(i.nand().slc_used_bytes <= i.nand().slc_budget_bytes + 32 * 48 * 2 * 16384 / 3, "SLC {} over budget {}", i.nand().slc_used_bytes, i.nand().slc_budget_bytes);
}

#[test]
fn trim_gives_emptied_slc_blocks_back_to_the_cache() {
    // 64 MiB written to a fresh drive land in SLC; trimming them empties those SLC blocks,
    // which are erased at once, so the cache is free again for the next burst.
    let mut ssd = fresh(tlc_with_cache(FoldPolicy::Idle), 1);
    let w = seq_write(64 * MIB);
    let mut t = JobSpec::simple("t", RwMode::Trim, MIB, 1, 1 << 30);
    t.io_limit = 64 * MIB;
    t.start_after = vec![0];
    let (r, a) = run_audited(&mut ssd, HostConfig::ideal(), vec![w, t], 1, None);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    ssd.ftl().check_invariants().unwrap();
    let i = &r.devices[0].internal;
    assert!(i.nand().slc_host_bytes >= 63 * MIB, "the writes went to SLC: {}", i.nand().slc_host_bytes);
    // What is left in SLC: at most the open block of each die (32 x 1/3 of 1.5 MiB).
    assert!(i.nand().slc_used_bytes <= 16 * MIB, "SLC still in use after TRIM: {} MiB", i.nand().slc_used_bytes / MIB);
    assert_eq!(ssd.ftl().valid_ius(), 0);
}
