//! The write-remapping layer (seed 000's MFT): every request completes once, host bytes are
//! conserved through the buffer and the log, the map owns each drive block once whatever
//! the order of writes, trims and cleaning, and flushes are ignored or honoured as told.

mod common;

use common::{barracuda, host_with_overhead, proptest_config, run_audited_device, xpoint};
use proptest::prelude::*;
use ssdlab_core::array::MemberSpec;
use ssdlab_core::device::ssd::Precondition;
use ssdlab_core::device::{AnyDrive, BlockDevice, DriveConfig};
use ssdlab_core::remap::{LogMap, Remap, RemapConfig};
use ssdlab_core::report::{RemapReport, SimResult};
use ssdlab_core::workload::{JobSpec, RwMode};

const MIB: u64 = 1 << 20;

fn remap_cfg(device: DriveConfig, buffer: u64, segment: u64, honor_flush: bool) -> RemapConfig {
    let cfg = RemapConfig {
        member: MemberSpec {
            name: "sda".into(),
            device,
            precondition: Precondition::None,
            scheduler: Default::default(),
            queue: Default::default(),
        },
        buffer_bytes: buffer,
        segment_bytes: segment,
        block_bytes: 4096,
        reserve: 0.25,
        honor_flush,
        copy_bytes_per_s: 2e9,
        max_age_ns: 1_000_000_000,
        clean_at_free_segments: 4,
    };
    cfg.validate().expect("a valid layer");
    cfg
}

/// A 64 MiB in-place drive: small enough that a few passes of writes make the log wrap.
fn small_drive() -> DriveConfig {
    let mut d = xpoint();
    d.capacity_bytes = 64 * MIB;
    DriveConfig::InPlace(d)
}

fn layer(cfg: &RemapConfig) -> Remap<AnyDrive> {
    let drive = AnyDrive::build(&cfg.member.device, 1, Precondition::None).expect("a drive");
    Remap::new(cfg, drive, 250)
}

fn job(rw: RwMode, bs: u64, qd: u64, region: u64, bytes: u64) -> JobSpec {
    let mut j = JobSpec::simple("j", rw, bs, qd, region);
    j.io_limit = bytes;
    j
}

fn run(layer: &mut Remap<AnyDrive>, jobs: Vec<JobSpec>) -> (SimResult, RemapReport) {
    let (r, audit) = run_audited_device(layer, "mft0", host_with_overhead(0, 0.0, 250), jobs, 7, None);
    assert!(audit.violations.is_empty(), "{:?}", audit.violations);
    assert_eq!(audit.submits, audit.completions, "every request completes once");
    layer.check().expect("the map and the buffer agree");
    // After the drain: everything the buffer held is on the drive.
    let end = layer.internal_report(r.drained_ns).remap.expect("a remap report");
    (r, end)
}

#[test]
fn random_writes_conserve_bytes_through_buffer_and_log_and_make_it_clean() {
    let cfg = remap_cfg(small_drive(), 2 * MIB, 256 * 1024, false);
    let mut l = layer(&cfg);
    let capacity = cfg.capacity_bytes();
    let (r, end) = run(&mut l, vec![job(RwMode::Randwrite, 4096, 8, capacity, 3 * capacity)]);
    assert_eq!(r.jobs[0].write.bytes, 3 * capacity);
    // Taken as the jobs ended: some host data may still wait in the buffer.
    let at_end = r.devices[0].internal.remap.as_ref().unwrap();
    assert_eq!(at_end.host_write_bytes, 3 * capacity);
    let host_logged = |x: &RemapReport| x.log_write_bytes - x.cleaned_bytes;
    assert_eq!(at_end.absorbed_bytes + host_logged(at_end) + at_end.buffered_bytes, at_end.host_write_bytes);
    // After the drain nothing waits, and the drive was written exactly what the log wrote.
    assert_eq!(end.buffered_bytes, 0);
    assert_eq!(end.absorbed_bytes + host_logged(&end), end.host_write_bytes);
    let drained = l.member_results(r.drained_ns);
    assert_eq!(drained[0].name, "sda");
    assert_eq!(drained[0].disk.write_sectors * 512, end.log_write_bytes);
    // Three passes over a drive with a quarter kept free: the log wrapped and was cleaned.
    assert!(end.cleaned_segments > 0 && end.cleaned_bytes > 0, "{end:?}");
    // Writes reach the drive as whole segments, save those forced out by age.
    assert!(end.log_write_bytes / end.log_writes > 128 * 1024, "{end:?}");
}

#[test]
fn reads_find_each_block_where_the_log_put_it() {
    let cfg = remap_cfg(small_drive(), 2 * MIB, 256 * 1024, false);
    let mut l = layer(&cfg);
    let region = 16 * MIB;
    let mut read = job(RwMode::Randread, 16384, 4, region, 8 * MIB);
    read.name = "r".into();
    read.start_after = vec![0];
    let (r, end) = run(&mut l, vec![job(RwMode::Randwrite, 4096, 4, region, 2 * region), read]);
    assert_eq!(end.host_read_bytes, 8 * MIB);
    assert_eq!(r.jobs[1].read.bytes, 8 * MIB);
    // 16 KiB reads over blocks the random writes scattered: most need several drive reads.
    assert!(end.drive_reads > end.host_reads_from_drive, "{end:?}");
    // Every block read came from the buffer or the drive, once.
    let drive_read = l.member_results(r.drained_ns)[0].disk.read_sectors * 512;
    assert_eq!(drive_read + end.buffer_read_bytes, end.host_read_bytes, "{end:?}");
}

fn sync_writes(honor: bool) -> (SimResult, RemapReport) {
    let cfg = remap_cfg(DriveConfig::Hdd(barracuda()), 8 * MIB, MIB, honor);
    let mut l = layer(&cfg);
    let mut j = job(RwMode::Randwrite, 4096, 1, 1 << 30, 2 * MIB);
    j.fsync_every = 1;
    run(&mut l, vec![j])
}

#[test]
fn flushes_are_acknowledged_at_once_unless_honoured() {
    let (ignored, ig) = sync_writes(false);
    let (honoured, ho) = sync_writes(true);
    let n = ignored.jobs[0].sync.ios;
    assert_eq!(n, honoured.jobs[0].sync.ios);
    assert!(n >= 2 * MIB / 4096 - 1, "an fsync after each write: {n}");
    assert_eq!((ig.flushes_ignored, ig.flushes_done), (n, 0));
    assert_eq!((ho.flushes_ignored, ho.flushes_done), (0, n));
    assert_eq!(ignored.devices[0].disk.flush_ios, n, "the layer saw every flush");
    // Each honoured fsync waits for its block's write and the disk's flush: orders of
    // magnitude slower than a copy into RAM.
    let t = |r: &SimResult| (r.jobs[0].end_ns - r.jobs[0].measure_start_ns) as f64;
    assert!(t(&honoured) > 50.0 * t(&ignored), "{} vs {}", t(&honoured), t(&ignored));
}

#[test]
fn small_random_writes_to_a_disk_go_faster_through_the_log() {
    let bytes = 4 * MIB;
    let disk = AnyDrive::build(&DriveConfig::Hdd(barracuda()), 1, Precondition::None).unwrap();
    let mut plain = disk;
    let (alone, _) = run_audited_device(&mut plain, "sda", host_with_overhead(0, 0.0, 250), vec![job(RwMode::Randwrite, 4096, 4, 1 << 36, bytes)], 7, None);
    let cfg = remap_cfg(DriveConfig::Hdd(barracuda()), 64 * MIB, MIB, false);
    let (logged, _) = run(&mut layer(&cfg), vec![job(RwMode::Randwrite, 4096, 4, 1 << 36, bytes)]);
    let t = |r: &SimResult| (r.jobs[0].end_ns - r.jobs[0].measure_start_ns) as f64;
    assert!(t(&alone) > 20.0 * t(&logged), "{} vs {}", t(&alone), t(&logged));
}

#[derive(Clone, Debug)]
enum MapOp {
    Write(u32),
    Trim(u32),
}

proptest! {
    #![proptest_config(proptest_config(48))]

    /// Writes, trims and greedy cleaning in any order keep every drive block owned once and
    /// every host block's data findable.
    #[test]
    fn the_log_map_owns_each_block_once(ops in prop::collection::vec(
        prop_oneof![8 => (0u32..64).prop_map(MapOp::Write), 1 => (0u32..64).prop_map(MapOp::Trim)], 1..400)
    ) {
        let bps = 4;
        let mut m = LogMap::new(64, 24, bps);
        for op in ops {
            match op {
                MapOp::Trim(b) => m.trim(b),
                MapOp::Write(b) => {
                    if m.head_room() == 0 {
                        // Clean, as the layer does, before the last free segments go; the
                        // cleaner's blocks may leave the head open with room.
                        while m.free_segments() <= 2 {
                            let Some(v) = m.victim(None) else { break };
                            for (moved, _) in m.valid_blocks(v) {
                                if m.head_room() == 0 {
                                    prop_assert!(m.open_next(), "a free segment for the cleaner");
                                }
                                m.place(moved);
                            }
                        }
                        if m.head_room() == 0 {
                            prop_assert!(m.free_segments() > 1, "cleaning leaves a free segment for the host");
                            prop_assert!(m.open_next());
                        }
                    }
                    let p = m.place(b);
                    prop_assert_eq!(m.locate(b), Some(p));
                }
            }
            if let Err(e) = m.check() {
                prop_assert!(false, "{}", e);
            }
        }
    }
}

#[test]
fn a_write_larger_than_the_whole_buffer_goes_in_once_the_buffer_is_empty() {
    let cfg = remap_cfg(small_drive(), MIB, 256 * 1024, false);
    let mut l = layer(&cfg);
    let (r, end) = run(&mut l, vec![job(RwMode::Write, 4 * MIB, 2, 32 * MIB, 16 * MIB)]);
    assert_eq!(r.jobs[0].write.bytes, 16 * MIB);
    assert_eq!(end.host_write_bytes, 16 * MIB);
}
