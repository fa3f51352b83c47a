//! FTL conservation: the mapping's books balance after every step, under random placements,
//! overwrites, trims and delayed program completions, on small random geometries; and the
//! same holds for timed runs with heavy overwrite, chunk after chunk.

mod common;

use std::collections::VecDeque;

use common::*;
use proptest::prelude::*;
use ssdlab_core::device::ssd::ftl::Ftl;
use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::host::HostConfig;
use ssdlab_core::workload::{JobSpec, RwMode};

const KIB: u64 = 1024;

/// A small geometry: 1–4 dies, 1–2 planes, few pages per block and few blocks, so that GC
/// runs after a few hundred placements. Capacity is a random share of what `validate`
/// allows (raw minus the per-die GC reserve).
fn arb_small_drive() -> impl Strategy<Value = SsdConfig> {
    (
        1u32..=2,
        1u32..=2,
        1u32..=2,
        prop_oneof![Just(4 * KIB), Just(8 * KIB), Just(16 * KIB)],
        prop_oneof![Just(2u32), Just(4), Just(8)],
        10u32..=24,
        2u32..=4,
        0.3f64..=1.0,
        any::<bool>(),
    )
        .prop_map(|(channels, dpc, planes, iu, ppb, blocks, thr, fill, whole_block_units)| {
            let mut cfg = SsdConfig::generic(1);
            cfg.nand.channels = channels;
            cfg.nand.dies_per_channel = dpc;
            cfg.nand.planes_per_die = planes;
            cfg.nand.pages_per_block = ppb;
            cfg.nand.blocks_per_plane = blocks;
            // Program units as large as a block too (a drive simulated at a small scale).
            if whole_block_units {
                cfg.nand.program_pages = ppb;
            }
            cfg.ftl.iu_bytes = iu;
            cfg.ftl.gc_threshold_blocks = thr;
            let block_bytes = cfg.nand.page_bytes * ppb as u64 * planes as u64;
            let reserve = cfg.dies() as u64 * (thr as u64 + 3) * block_bytes;
            let max = cfg.raw_bytes().saturating_sub(reserve);
            cfg.capacity_bytes = ((max as f64 * fill) as u64 / iu).max(1) * iu;
            cfg.write_buffer_bytes = 0;
            cfg
        })
        .prop_filter("geometry must validate", |c| c.validate().is_ok())
}

#[derive(Clone, Debug)]
enum Step {
    /// Place up to one program unit of host data; LPNs drawn from a hot set with
    /// probability `hot` (heavy overwrite) or uniformly.
    Place { die: u32, count: u32, seeds: [u32; 8], hot: bool },
    Trim { lpn: u32, len: u32 },
    /// Finish this many of the oldest outstanding programs.
    Program { n: u32 },
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (any::<u32>(), 1u32..=64, any::<[u32; 8]>(), any::<bool>())
            .prop_map(|(die, count, seeds, hot)| Step::Place { die, count, seeds, hot }),
        1 => (any::<u32>(), 1u32..=16).prop_map(|(lpn, len)| Step::Trim { lpn, len }),
        2 => (0u32..=8).prop_map(|n| Step::Program { n }),
    ]
}

proptest! {
    #![proptest_config(proptest_config(256))]

    /// Drive `Ftl::place_host_unit` / `trim` / `mark_programmed` directly and check after
    /// every step: `check_invariants` is Ok; the valid IUs equal the LPNs a shadow model says
    /// are mapped (so valid ≤ logical); every mapped LPN is found where it was last put;
    /// counters move consistently with the GC work reported; erase counts never decrease.
    #[test]
    fn ftl_books_balance_after_every_step(
        cfg in arb_small_drive(),
        steps in proptest::collection::vec(arb_step(), 50..600),
    ) {
        let mut ftl = Ftl::new(&cfg);
        let logical = ftl.logical_ius() as u32;
        let per_pu = ftl.ius_per_pu;
        let mut mapped = vec![false; logical as usize];
        let mut expect_slot = vec![u32::MAX; logical as usize];
        let mut pending: VecDeque<u32> = VecDeque::new();
        let (mut erases, mut max_erases, mut gc_ius) = (0u64, 0u32, 0u64);
        let (mut gc_units, mut gc_moved) = (0u64, 0u64);
        let hot_set = (logical / 8).max(1);
        for step in steps {
            match step {
                Step::Place { die, count, seeds, hot } => {
                    // As the drive does before it places buffered data.
                    while let Some((_, gc)) = ftl.collect_starved() {
                        gc_units += gc.program_units;
                        gc_moved += gc.relocated_ius;
                        refresh_expected(&ftl, &mapped, &mut expect_slot);
                    }
                    let accepting: Vec<u32> = (0..ftl.dies).filter(|&d| ftl.accepts_host_data(d)).collect();
                    if accepting.is_empty() {
                        // Every die refuses: finish the outstanding programs (which lets GC
                        // collect the blocks it was waiting for) and move on.
                        while let Some(b) = pending.pop_front() {
                            let gc = ftl.mark_programmed(b, per_pu);
                            gc_units += gc.program_units;
                            gc_moved += gc.relocated_ius;
                            if gc.relocated_ius > 0 {
                                refresh_expected(&ftl, &mapped, &mut expect_slot);
                            }
                        }
                        // Liveness: with nothing left in flight, some die takes host data
                        // again once the drive has collected its starved dies (the drive
                        // does so when no die would take its buffered data).
                        while let Some((_, gc)) = ftl.collect_starved() {
                            gc_units += gc.program_units;
                            gc_moved += gc.relocated_ius;
                            refresh_expected(&ftl, &mapped, &mut expect_slot);
                        }
                        prop_assert!(
                            (0..ftl.dies).any(|d| ftl.accepts_host_data(d)),
                            "no die takes host data with nothing in flight"
                        );
                        continue;
                    }
                    let d = accepting[die as usize % accepting.len()];
                    let n = count.min(per_pu) as usize;
                    let lpns: Vec<u32> = (0..n)
                        .map(|i| {
                            let x = seeds[i % 8].rotate_left(i as u32 * 7) ^ (i as u32).wrapping_mul(0x9E37_79B9);
                            if hot { x % hot_set } else { x % logical }
                        })
                        .collect();
                    let before = ftl.counters.clone();
                    let p = ftl.place_host_unit(d, &lpns);
                    prop_assert_eq!(ftl.die_of_slot(p.first_slot), d, "unit placed on another die");
                    prop_assert_eq!(p.first_slot / ftl.ius_per_block, p.block);
                    prop_assert_eq!(ftl.counters.host_ius - before.host_ius, n as u64);
                    prop_assert_eq!(ftl.counters.padding_ius - before.padding_ius, (per_pu as usize - n) as u64);
                    prop_assert_eq!(ftl.counters.erases - before.erases, p.gc.erases);
                    prop_assert_eq!(ftl.counters.gc_ius - before.gc_ius, p.gc.relocated_ius);
                    // A GC pass charges a program unit when it starts one; a unit left partly
                    // filled is finished by a later pass without a second charge. So only the
                    // running totals bound each other: every unit but each die's open one is full.
                    gc_units += p.gc.program_units;
                    gc_moved += p.gc.relocated_ius;
                    prop_assert!(gc_units * per_pu as u64 >= gc_moved);
                    prop_assert!(gc_moved + ftl.dies as u64 * per_pu as u64 > gc_units * per_pu as u64);
                    prop_assert!(p.gc.page_reads <= p.gc.relocated_ius);
                    for (i, &lpn) in lpns.iter().enumerate() {
                        mapped[lpn as usize] = true;
                        expect_slot[lpn as usize] = p.first_slot + i as u32;
                    }
                    pending.push_back(p.block);
                    // GC may have moved data placed earlier: refresh from the map for moved ones.
                    if p.gc.relocated_ius > 0 {
                        refresh_expected(&ftl, &mapped, &mut expect_slot);
                    }
                }
                Step::Trim { lpn, len } => {
                    let first = lpn % logical;
                    for l in first..(first + len).min(logical) {
                        ftl.trim(l);
                        mapped[l as usize] = false;
                        expect_slot[l as usize] = u32::MAX;
                    }
                }
                Step::Program { n } => {
                    for _ in 0..n {
                        if let Some(b) = pending.pop_front() {
                            let gc = ftl.mark_programmed(b, per_pu);
                            gc_units += gc.program_units;
                            gc_moved += gc.relocated_ius;
                            if gc.relocated_ius > 0 {
                                refresh_expected(&ftl, &mapped, &mut expect_slot);
                            }
                        }
                    }
                }
            }
            if let Err(e) = ftl.check_invariants() {
                prop_assert!(false, "check_invariants: {}", e);
            }
            let live = mapped.iter().filter(|&&m| m).count() as u64;
            prop_assert_eq!(ftl.valid_ius(), live, "valid IUs vs shadow map");
            prop_assert!(ftl.valid_ius() <= ftl.logical_ius());
            for lpn in 0..logical {
                let got = ftl.lookup(lpn);
                prop_assert_eq!(got.is_some(), mapped[lpn as usize], "lpn {} mapped?", lpn);
                if let Some(s) = got {
                    prop_assert_eq!(s, expect_slot[lpn as usize], "lpn {} moved unexpectedly", lpn);
                }
            }
            prop_assert!(ftl.free_blocks() <= ftl.total_blocks());
            prop_assert!(ftl.counters.erases >= erases);
            prop_assert!(ftl.max_block_erases() >= max_erases);
            prop_assert!(ftl.counters.gc_ius >= gc_ius);
            erases = ftl.counters.erases;
            max_erases = ftl.max_block_erases();
            gc_ius = ftl.counters.gc_ius;
        }
    }
}

/// Heavy overwrite through the timed model, run in chunks on one drive: after each chunk the
/// FTL's books balance, valid ≤ logical, and the wear counters never go back. Write-through
/// (no buffer) so that each chunk ends with nothing left in flight inside the drive: a
/// write-back drive keeps programming after the host's last completion, and those events
/// would be dropped between chunks.
#[test]
fn timed_overwrite_chunks_keep_the_books() {
    for (iu, bs, qd) in [(4 * KIB, 4 * KIB, 32u64), (16 * KIB, 4 * KIB, 8), (4 * KIB, 64 * KIB, 4)] {
        let mut cfg = SsdConfig::generic(1);
        cfg.write_buffer_bytes = 0;
        cfg.ftl.iu_bytes = iu;
        let cap = cfg.capacity_bytes;
        let mut ssd = preconditioned(cfg, Precondition::Random { passes: 1.0 }, 5);
        ssd.ftl().check_invariants().unwrap();
        let (mut erases, mut max_erases, mut valid_before) = (0u64, ssd.ftl().max_block_erases(), ssd.ftl().valid_ius());
        assert_eq!(valid_before, ssd.ftl().logical_ius(), "a full fill maps every IU");
        for chunk in 0..4u64 {
            let mut j = JobSpec::simple("ow", RwMode::Randwrite, bs, qd, cap);
            j.random_map = false;
            j.number_ios = Some(4_000);
            j.seed = chunk;
            let (r, a) = run_audited(&mut ssd, HostConfig::ideal(), vec![j], chunk, None);
            assert!(a.violations.is_empty(), "{:?}", a.violations);
            assert_eq!(a.submits, a.completions, "chunk {chunk}: requests left in the drive");
            let ftl = ssd.ftl();
            ftl.check_invariants().unwrap_or_else(|e| panic!("chunk {chunk}: {e}"));
            assert!(ftl.valid_ius() <= ftl.logical_ius());
            // Overwrites never unmap anything: the whole drive stays mapped.
            assert_eq!(ftl.valid_ius(), valid_before);
            valid_before = ftl.valid_ius();
            // The device report's cumulative erase counter and the worst block only grow.
            let rep = &r.devices[0].internal;
            assert!(rep.nand().erase_count >= erases, "erase count went back: {} < {erases}", rep.nand().erase_count);
            assert!(rep.nand().max_block_erases >= max_erases);
            assert!(rep.nand().gc_runs > 0 || chunk == 0, "heavy overwrite must run GC");
            assert_eq!(rep.nand().max_block_erases, ftl.max_block_erases());
            erases = rep.nand().erase_count;
            max_erases = rep.nand().max_block_erases;
        }
    }
}

proptest! {
    #![proptest_config(proptest_config(128))]

    /// Timed heavy overwrite on small random geometries (GC within a few hundred writes):
    /// every request completes, the books balance, and erase counts in the time series never
    /// decrease.
    ///
    /// The geometry keeps the program units that can be in flight at once (queue depth plus
    /// buffered units) well under a die's blocks, so that GC never finds every closed block
    /// still being programmed: that case hangs the drive (`bug_single_die_write_through_fill_deadlocks`).
    #[test]
    fn timed_overwrite_on_small_drives(
        cfg in arb_small_drive().prop_map(|mut c| {
            c.nand.pages_per_block = c.nand.pages_per_block.max(4);
            c.nand.blocks_per_plane += 16;
            c
        }),
        buffer_units in prop_oneof![Just(0u64), Just(4)],
        qd in prop_oneof![Just(1u64), Just(4), Just(8)],
        hot in any::<bool>(),
        trims in any::<bool>(),
        pre in prop_oneof![Just(Precondition::None), Just(Precondition::Sequential), Just(Precondition::Random { passes: 0.5 })],
        seed in any::<u64>(),
    ) {
        let mut cfg = cfg;
        cfg.write_buffer_bytes = buffer_units * cfg.program_unit_bytes();
        let cap = cfg.capacity_bytes;
        let iu = cfg.ftl.iu_bytes;
        let mut ssd = preconditioned(cfg.clone(), pre, seed);
        let mut w = JobSpec::simple("ow", if trims { RwMode::Randtrimwrite } else { RwMode::Randwrite }, iu, qd, if hot { (cap / 8).max(iu) / iu * iu } else { cap });
        w.random_map = false;
        w.number_ios = Some(1_500);
        w.seed = seed;
        let mut r = JobSpec::simple("rd", RwMode::Randread, iu, qd, cap);
        r.number_ios = Some(300);
        r.start_after = vec![0];
        let (res, a) = run_audited(&mut ssd, HostConfig::ideal(), vec![w, r], seed, Some(200_000));
        prop_assert!(a.violations.is_empty(), "{:?}", a.violations);
        prop_assert_eq!(a.submits, a.completions, "requests left in the drive");
        if let Err(e) = ssd.ftl().check_invariants() {
            prop_assert!(false, "check_invariants: {}", e);
        }
        prop_assert!(ssd.ftl().valid_ius() <= ssd.ftl().logical_ius());
        let mut last = (0u64, 0u32);
        for s in &res.samples {
            let now = (s.devices[0].internal.nand().erase_count, s.devices[0].internal.nand().max_block_erases);
            prop_assert!(now.0 >= last.0 && now.1 >= last.1, "erase counters went back at {}: {:?} -> {:?}", s.t_ns, last, now);
            last = now;
        }
    }
}

// ---- known core bugs -------------------------------------------------------------------

/// A tiny single-die geometry: 8 IUs per block, 10 blocks, GC threshold 2.
fn tiny_single_die() -> SsdConfig {
    let mut cfg = SsdConfig::generic(1);
    cfg.nand.channels = 1;
    cfg.nand.dies_per_channel = 1;
    cfg.nand.planes_per_die = 1;
    cfg.nand.pages_per_block = 2;
    cfg.nand.blocks_per_plane = 10;
    cfg.ftl.gc_threshold_blocks = 2;
    cfg.capacity_bytes = 128 * KIB;
    cfg.write_buffer_bytes = 0;
    cfg.validate().expect("tiny drive validates");
    cfg
}

/// Regression: GC that comes due while a die's closed blocks are still being programmed must
/// run once they finish (`mark_programmed` retries it), or the die refuses host data for good.
/// Fill a die without finishing the programs, finish them all: the die takes data again.
#[test]
fn die_accepts_data_again_once_programs_finish() {
    let cfg = tiny_single_die();
    let mut ftl = Ftl::new(&cfg);
    let per_pu = ftl.ius_per_pu;
    // One unique LPN per unit (the rest padding, as write-through 4 KiB writes are placed),
    // none of the programs finished yet: the die runs out of free blocks and GC finds no
    // closed block that is fully programmed.
    let mut blocks = Vec::new();
    let mut lpn = 0u32;
    while ftl.accepts_host_data(0) {
        blocks.push(ftl.place_host_unit(0, &[lpn]).block);
        lpn += 1;
    }
    assert!(lpn < ftl.logical_ius() as u32, "the die refused before the drive was full");
    // Every program finishes. Closed blocks now hold 2 valid IUs of 8: GC can reclaim them.
    for b in blocks {
        let _ = ftl.mark_programmed(b, per_pu);
    }
    ftl.check_invariants().unwrap();
    assert!(ftl.valid_ius() < ftl.logical_ius());
    assert!(ftl.accepts_host_data(0), "die still refuses host data although its programs are done and its blocks are mostly padding");
}

/// Regression: a die whose GC gave up (every closed block fully valid) and that later gets
/// garbage from overwrites placed on another die must collect again when the drive asks
/// (`collect_starved`). Its GC otherwise runs only when host data lands on it or one of its
/// blocks finishes programming, neither of which happens to a die down to its GC reserve; a
/// RAID 5 member drive stalled for good that way once every die had starved in turn.
#[test]
fn a_die_that_gave_up_collects_once_it_has_garbage_again() {
    let mut cfg = tiny_single_die();
    cfg.nand.dies_per_channel = 2;
    // A program unit fills a block (as on a drive simulated at a small scale), so a die's
    // host block is never left open.
    cfg.nand.program_pages = cfg.nand.pages_per_block;
    cfg.capacity_bytes = 320 * KIB;
    cfg.validate().expect("two-die drive validates");
    let mut ftl = Ftl::new(&cfg);
    let per_pu = ftl.ius_per_pu;
    // Die 0 alone takes distinct data, every program finished at once, until it refuses.
    let mut lpn = 0u32;
    while ftl.accepts_host_data(0) {
        let lpns: Vec<u32> = (lpn..lpn + per_pu).collect();
        let p = ftl.place_host_unit(0, &lpns);
        let _ = ftl.mark_programmed(p.block, per_pu);
        lpn += per_pu;
    }
    assert!(!ftl.has_unstuck() && ftl.collect_starved().is_none(), "nothing to collect yet");
    // Die 1 takes new copies of a unit's worth of die 0's data: die 0 has garbage again.
    let lpns: Vec<u32> = (0..per_pu).collect();
    let p = ftl.place_host_unit(1, &lpns);
    let _ = ftl.mark_programmed(p.block, per_pu);
    assert!(!ftl.accepts_host_data(0), "die 0 is down to its GC reserve");
    let (die, gc) = ftl.collect_starved().expect("die 0 collects its garbage");
    assert_eq!(die, 0);
    assert!(gc.erases >= 1, "{gc:?}");
    ftl.check_invariants().unwrap();
    assert!(ftl.accepts_host_data(0), "die 0 takes host data again");
    assert!(ftl.collect_starved().is_none());
}

/// Regression, timed: a write-through QD32 sequential fill of a single-die drive places more
/// program units than the die has blocks before the first program finishes; it must complete.
#[test]
fn single_die_write_through_fill_completes() {
    let cfg = tiny_single_die();
    let cap = cfg.capacity_bytes;
    let mut ssd = fresh(cfg, 1);
    let mut j = JobSpec::simple("fill", RwMode::Write, 4 * KIB, 32, cap);
    j.io_limit = cap;
    let (r, a) = run_audited(&mut ssd, HostConfig::ideal(), vec![j], 1, None);
    assert!(a.violations.is_empty(), "{:?}", a.violations);
    assert_eq!(a.submits, a.completions, "requests left in the drive: {}", a.submits - a.completions);
    assert_eq!(r.jobs[0].write.bytes, cap);
}

/// GC moved data: take the new places of mapped IUs from the map (their contents are checked
/// through the shadow map of which LPNs are live).
fn refresh_expected(ftl: &Ftl, mapped: &[bool], expect_slot: &mut [u32]) {
    for (lpn, &m) in mapped.iter().enumerate() {
        if m {
            expect_slot[lpn] = ftl.lookup(lpn as u32).unwrap_or(u32::MAX);
        }
    }
}

/// Static wear levelling: a hot set rewritten over and over keeps the drive's cold blocks
/// out of the rotation; with levelling on, the spread of erase counts stays near its bound.
#[test]
fn wear_levelling_bounds_the_erase_spread() {
    let spread = |leveling: u32| {
        let mut cfg = SsdConfig::generic(1);
        cfg.nand.channels = 1;
        cfg.nand.dies_per_channel = 1;
        cfg.nand.pages_per_block = 16;
        cfg.nand.blocks_per_plane = 96;
        cfg.capacity_bytes = 96 * 16 * 16 * 1024 * 2 * 80 / 100 / 4096 * 4096;
        cfg.ftl.wear_leveling_spread = leveling;
        cfg.validate().expect("valid");
        let mut ftl = Ftl::new(&cfg);
        let logical = ftl.logical_ius() as u32;
        let per_pu = ftl.ius_per_pu;
        // Fill once (cold data), then rewrite the first 5 % over and over.
        let mut lpn = 0;
        while lpn < logical {
            let n = per_pu.min(logical - lpn);
            let units: Vec<u32> = (lpn..lpn + n).collect();
            let p = ftl.place_host_unit(0, &units);
            let _ = ftl.mark_programmed(p.block, per_pu);
            lpn += n;
        }
        let hot = logical / 20;
        for round in 0..400u32 {
            for start in (0..hot).step_by(per_pu as usize) {
                let units: Vec<u32> = (start..(start + per_pu).min(hot)).map(|l| (l + round) % hot).collect();
                let p = ftl.place_host_unit(0, &units);
                let _ = ftl.mark_programmed(p.block, per_pu);
            }
        }
        ftl.check_invariants().unwrap();
        let erases: Vec<u32> = ftl.block_erases().collect();
        erases.iter().max().unwrap() - erases.iter().min().unwrap()
    };
    let without = spread(0);
    let with = spread(20);
    assert!(without > 100, "the hot set should wear its blocks unevenly: spread {without}");
    assert!(with <= 20 + 10, "levelling keeps the spread near its bound: {with}");
}

/// Reports read the wear statistics from running values kept at each erase (O(1) at any
/// sampling interval, whatever the drive's size): after GC, wear levelling and TRIM they must
/// equal a scan of every block's erase count, the mean bit for bit.
#[test]
fn running_wear_statistics_match_a_scan_of_every_block() {
    let mut cfg = SsdConfig::generic(1);
    cfg.nand.channels = 1;
    cfg.nand.dies_per_channel = 2;
    cfg.nand.planes_per_die = 1;
    cfg.nand.pages_per_block = 8;
    cfg.nand.blocks_per_plane = 32;
    cfg.capacity_bytes = 4 << 20;
    cfg.write_buffer_bytes = 0;
    cfg.ftl.wear_leveling_spread = 4;
    cfg.validate().expect("valid");
    let mut ftl = Ftl::new(&cfg);
    let logical = ftl.logical_ius() as u32;
    let per_pu = ftl.ius_per_pu;
    let check = |ftl: &Ftl, when: &str| {
        let e: Vec<u32> = ftl.block_erases().collect();
        let sum: u64 = e.iter().map(|&x| x as u64).sum();
        let mean = e.iter().map(|&x| x as f64).sum::<f64>() / e.len() as f64;
        assert_eq!(sum, ftl.counters.erases, "{when}: every erase is one block's");
        assert_eq!(ftl.max_block_erases(), *e.iter().max().unwrap(), "{when}: max erases");
        assert_eq!(ftl.mean_block_erases().to_bits(), mean.to_bits(), "{when}: mean erases {} vs {mean}", ftl.mean_block_erases());
        ftl.check_invariants().unwrap_or_else(|e| panic!("{when}: {e}"));
    };
    check(&ftl, "fresh");
    // Fill once (cold data), then rewrite a hot tenth over and over, trimming now and then.
    let place = |ftl: &mut Ftl, units: Vec<u32>, die: u32| {
        let p = ftl.place_host_unit(die, &units);
        let _ = ftl.mark_programmed(p.block, per_pu);
    };
    let mut lpn = 0;
    while lpn < logical {
        let n = per_pu.min(logical - lpn);
        place(&mut ftl, (lpn..lpn + n).collect(), lpn / per_pu % 2);
        lpn += n;
    }
    check(&ftl, "after the fill");
    let hot = logical / 10;
    for round in 0..200u32 {
        for (i, start) in (0..hot).step_by(per_pu as usize).enumerate() {
            let units = (start..(start + per_pu).min(hot)).map(|l| (l * 7 + round) % hot).collect();
            place(&mut ftl, units, (i as u32 + round) % 2);
        }
        if round % 17 == 0 {
            for l in (round % hot..hot).step_by(5) {
                ftl.trim(l);
            }
        }
        check(&ftl, &format!("round {round}"));
    }
    assert!(ftl.counters.wear_level_moves > 0, "wear levelling should have run");
    assert!(ftl.mean_block_erases() > 10.0, "GC should have worn the blocks: mean {}", ftl.mean_block_erases());
}

/// A drive filled in order keeps its maps as predictions only (nothing stored), also when
/// several dies, planes and a 16 KiB IU stripe the fill; random overwrites store entries
/// only on the pages they land on: their IU's, the slot left and the slot taken (three
/// pages at most per IU written, GC's moves the same).
#[test]
fn a_sequential_fill_stores_no_map_pages_and_overwrites_store_few() {
    for iu in [4 * KIB, 16 * KIB] {
        let mut cfg = SsdConfig::generic(1);
        cfg.ftl.iu_bytes = iu;
        assert!(cfg.slc_cache.is_none(), "the generic drive writes native units only");
        let ssd = preconditioned(cfg.clone(), Precondition::Sequential, 3);
        let ftl = ssd.ftl();
        assert_eq!(ftl.valid_ius(), ftl.logical_ius());
        ftl.check_invariants().unwrap();
        assert_eq!(ftl.map_stored_bytes(), 0, "iu {iu}: a sequential fill stores nothing");
        let passes = 0.001;
        let ssd = preconditioned(cfg, Precondition::Random { passes }, 3);
        let ftl = ssd.ftl();
        ftl.check_invariants().unwrap();
        let writes = (passes * ftl.logical_ius() as f64) as u64;
        let stored = ftl.map_stored_bytes();
        assert!(stored > 0 && stored <= 3 * 4096 * writes, "iu {iu}: {stored} B stored for {writes} writes");
    }
}
