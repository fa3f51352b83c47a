//! Hard disk first principles: positioning time sets random IOPS, the zone's media rate sets
//! sequential throughput, NCQ reordering raises throughput with queue depth, the write cache
//! hides the media until it fills, and every request completes once.

mod common;

use common::{barracuda, run_audited_device};
use ssdlab_core::device::hdd::{Hdd, HddConfig};
use ssdlab_core::device::ssd::Precondition;
use ssdlab_core::device::BlockDevice;
use ssdlab_core::target::DeviceConfig;
use ssdlab_core::host::HostConfig;
use ssdlab_core::target::TargetSpec;
use ssdlab_core::report::SimResult;
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{run, SimSpec};

fn job(rw: RwMode, bs: u64, qd: u64, ios: u64) -> JobSpec {
    let cap = barracuda().capacity_bytes;
    let mut j = JobSpec::simple("j", rw, bs, qd, cap / bs * bs);
    j.io_limit = ios * bs;
    j
}

fn run_on(cfg: HddConfig, jobs: Vec<JobSpec>) -> SimResult {
    let mut hdd = Hdd::new(cfg, 7).unwrap();
    let (r, audit) = run_audited_device(&mut hdd, "sda", HostConfig::ideal(), jobs, 7, None);
    assert!(audit.violations.is_empty(), "{:?}", audit.violations);
    assert_eq!(audit.completions, audit.submits, "every request completes once");
    r
}

fn iops(r: &SimResult) -> f64 {
    let j = &r.jobs[0];
    (j.read.ios + j.write.ios) as f64 / ((j.end_ns - j.measure_start_ns) as f64 / 1e9)
}

fn rate(r: &SimResult) -> f64 {
    let j = &r.jobs[0];
    (j.read.bytes + j.write.bytes) as f64 / ((j.end_ns - j.measure_start_ns) as f64 / 1e9)
}

#[test]
fn qd1_random_reads_take_a_seek_half_a_revolution_and_a_transfer() {
    let cfg = barracuda();
    let hdd = Hdd::new(cfg.clone(), 1).unwrap();
    let g = hdd.geometry();
    let r = run_on(cfg, vec![job(RwMode::Randread, 4096, 1, 3_000)]);
    let transfer = 8.0 * g.revolution_ns as f64 / 1_575.0; // 8 sectors at the middle zone's count
    let expect = 1e9 / (g.mean_seek_ns() + g.revolution_ns as f64 / 2.0 + transfer);
    let got = iops(&r);
    eprintln!("QD1 4 KiB random read: {got:.1} IOPS, first principles {expect:.1}");
    assert!((got - expect).abs() / expect < 0.10, "{got:.1} IOPS vs {expect:.1}");
    let h = r.devices[0].internal.hdd.as_ref().unwrap();
    // Rotation: uniform over a revolution on average.
    let mean_rot = h.rotation_ns as f64 / h.media_accesses as f64;
    assert!((mean_rot / (g.revolution_ns as f64 / 2.0) - 1.0).abs() < 0.08, "mean rotational wait {mean_rot}");
    assert_eq!(h.media_accesses, 3_000, "random reads all reach the head");
}

#[test]
fn sequential_reads_stream_at_the_zones_media_rate() {
    let cfg = barracuda();
    let hdd = Hdd::new(cfg.clone(), 1).unwrap();
    let g = hdd.geometry().clone();
    for zone in [0, g.zones.len() - 1] {
        let mut j = job(RwMode::Read, 128 << 10, 1, 2_000);
        j.region_offset = g.zones[zone].first_sector * 512;
        j.region_size = 256 << 20;
        j.io_limit = 256 << 20;
        let r = run_on(cfg.clone(), vec![j]);
        let expect = g.zone_rate(zone);
        let got = rate(&r);
        eprintln!("zone {zone}: {got:.4e} B/s, media rate {expect:.4e}");
        assert!((got - expect).abs() / expect < 0.03, "zone {zone}: {got:.3e} B/s vs {expect:.3e}");
        let h = r.devices[0].internal.hdd.as_ref().unwrap();
        assert!(h.read_ahead_hits + h.cache_read_hits > 1_900, "a sequential stream is read ahead: {h:?}");
    }
    // Outer faster than inner, as zoned recording makes it.
    assert!(g.zone_rate(0) > 1.9 * g.zone_rate(g.zones.len() - 1));
}

#[test]
fn ncq_reordering_raises_random_throughput_with_queue_depth() {
    let at = |qd: u64, reorder: bool| {
        let mut cfg = barracuda();
        cfg.ncq.reorder = reorder;
        iops(&run_on(cfg, vec![job(RwMode::Randread, 4096, qd, 2_000)]))
    };
    let (q1, q4, q32) = (at(1, true), at(4, true), at(32, true));
    eprintln!("NCQ random read IOPS: QD1 {q1:.0}, QD4 {q4:.0}, QD32 {q32:.0}");
    assert!(q4 > 1.25 * q1 && q32 > 1.4 * q4, "QD1 {q1:.0}, QD4 {q4:.0}, QD32 {q32:.0}");
    assert!(q32 > 2.0 * q1);
    let fifo = at(32, false);
    assert!((fifo / q1 - 1.0).abs() < 0.08, "without reordering a queue does not help: {fifo:.0} vs {q1:.0}");
}

#[test]
fn the_starvation_bound_caps_the_longest_wait() {
    let worst = |max_wait_ns: u64| {
        let mut cfg = barracuda();
        cfg.ncq.max_wait_ns = max_wait_ns;
        let r = run_on(cfg, vec![job(RwMode::Randread, 4096, 32, 4_000)]);
        let h = r.devices[0].internal.hdd.clone().unwrap();
        (r.jobs[0].read.clat.max, h.starved)
    };
    let (free, starved_free) = worst(60_000_000_000);
    let (bounded, starved) = worst(100_000_000);
    assert_eq!(starved_free, 0);
    assert!(starved > 0);
    // A starved command waits at most the bound plus the accesses of the commands ahead of
    // it (at worst every other command held, each at most a full stroke and a revolution).
    let access = 17_000_000 + 8_400_000 + 100_000;
    assert!(bounded < 100_000_000 + 32 * access, "max clat {bounded} ns");
    assert!(bounded < free / 2, "bounded {bounded} vs free {free}");
    eprintln!("worst wait: {bounded} ns with a 100 ms bound, {free} ns without; {starved} starved");
}

#[test]
fn write_back_hides_the_media_until_flushed_and_every_byte_is_destaged() {
    let mut j = job(RwMode::Randwrite, 4096, 1, 500);
    j.fsync_every = 0;
    let cached = run_on(barracuda(), vec![j.clone()]);
    let mut through = barracuda();
    through.cache.write_back = false;
    let direct = run_on(through, vec![j.clone()]);
    let (c, d) = (cached.jobs[0].write.clat.mean, direct.jobs[0].write.clat.mean);
    assert!(c < 0.2 * d, "cached writes {c} ns vs written through {d} ns");
    // The run ends when the host is done; the report was taken then. Bytes were conserved:
    // everything written is either on the media or still dirty.
    let h = cached.devices[0].internal.hdd.as_ref().unwrap();
    assert_eq!(h.destaged_bytes + h.dirty_bytes, 500 * 4096);
    // With a flush after every write, each waits for the media.
    j.fsync_every = 1;
    let flushed = run_on(barracuda(), vec![j]);
    assert!(flushed.jobs[0].end_ns > direct.jobs[0].end_ns / 2, "flushes wait for destaging");
}

#[test]
fn same_seed_same_results_through_the_system() {
    let spec = || SimSpec { file_sets: Vec::new(), network: None,
        seed: 3,
        host: HostConfig::ideal(),
        targets: vec![TargetSpec { filesystem: None,
            name: "sda".into(),
            device: DeviceConfig::Hdd(barracuda()),
            precondition: Precondition::None,
            scheduler: Default::default(),
            queue: Default::default(),
        }],
        jobs: vec![{
            let mut j = job(RwMode::Randrw, 4096, 8, 1_500);
            j.block_sizes[0] = ssdlab_core::workload::BlockSizeDist::fixed(8192);
            j
        }],
        interval_ns: None,
        until: Default::default(),
        limits: Default::default(),
    };
    let a = serde_json::to_string(&run(&spec()).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&spec()).unwrap()).unwrap();
    assert_eq!(a, b);
    assert!(a.contains("\"kind\":\"hdd\""));
}

#[test]
fn bad_mechanics_name_their_key() {
    let mut cfg = barracuda();
    cfg.mechanics.sector_bytes = 1000;
    assert_eq!(Hdd::new(cfg, 1).err().unwrap().key, "mechanics.sector_bytes");
    let mut cfg = barracuda();
    cfg.mechanics.full_stroke_ns = 8_000_000;
    assert_eq!(DeviceConfig::Hdd(cfg).validate().unwrap_err().key, "mechanics.average_seek_ns");
    let cfg = barracuda();
    assert_eq!(Hdd::new(cfg, 1).unwrap().capacity(), 1_000_204_886_016);
}

#[test]
fn without_reordering_a_write_waiting_for_cache_room_is_not_starved_by_reads() {
    let mut cfg = barracuda();
    cfg.ncq.reorder = false;
    cfg.cache.bytes = 1 << 20;
    let mut reads = job(RwMode::Randread, 4096, 30, 3_000);
    reads.time_based = false;
    let mut writes = job(RwMode::Randwrite, 64 << 10, 1, 64);
    writes.clone = 1;
    let r = run_on(cfg, vec![reads, writes]);
    let w = &r.jobs[1].write;
    assert_eq!(w.ios, 64);
    // Each waits for a destage or two (~15-30 ms each), not for the reads to run out.
    assert!(w.clat.max < 500_000_000, "a cached write waited {} ns", w.clat.max);
    assert!(r.jobs[1].end_ns < r.jobs[0].end_ns / 2, "the writer finished long before the readers");
}

#[test]
fn a_flush_waits_for_the_writes_before_it_not_for_later_ones() {
    // A steady writer keeps a 1 MiB cache full for 3 s; another job flushes after each of
    // its writes. A flush waits for the (at most 1 MiB of) data cached before it, not for
    // the steady writer to stop.
    let mut cfg = barracuda();
    cfg.cache.bytes = 1 << 20;
    let mut steady = job(RwMode::Randwrite, 64 << 10, 8, 1);
    steady.time_based = true;
    steady.runtime_ns = Some(3_000_000_000);
    steady.io_limit = u64::MAX / 4;
    let mut syncing = job(RwMode::Randwrite, 4096, 1, 20);
    syncing.clone = 1;
    syncing.fsync_every = 1;
    let r = run_on(cfg, vec![steady, syncing]);
    let s = &r.jobs[1];
    assert!(s.sync.ios >= 19, "{} flushes", s.sync.ios);
    // 16 extents of 64 KiB destage in well under half a second.
    assert!(s.sync.clat.mean < 500_000_000.0, "a flush took {} ns on average", s.sync.clat.mean);
}
