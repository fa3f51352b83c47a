//! A power cut ends a run where it falls: nothing drains, and each device says what it held
//! only in volatile memory. Drives that carry flushes out lose no data a flush covered; a
//! layer that ignores flushes (seed 000's MFT) loses data its fsyncs had acknowledged.

mod common;

use common::{barracuda, file_program, host_with_overhead};
use ssdlab_core::array::{ArrayConfig, EngineConfig, MdConfig, MemberSpec, RaidLevel};
use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::device::DriveConfig;
use ssdlab_core::remap::RemapConfig;
use ssdlab_core::file::{FileSystemSpec, FsType, KernelEra, MemoryConfig};
use ssdlab_core::host::HostConfig;
use ssdlab_core::report::{FsPowerCut, PowerCutDevice, SimResult};
use ssdlab_core::sim::Until;
use ssdlab_core::target::{DeviceConfig, TargetSpec};
use ssdlab_core::workload::files::{FileOp, FileSetSpec, Pick, SizeSpec};
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{run, SimSpec};

const MIB: u64 = 1 << 20;
const CUT_NS: u64 = 500_000_000;

fn writes(fsync_every: u64) -> JobSpec {
    let mut j = JobSpec::simple("w", RwMode::Randwrite, 4096, 4, 1 << 30);
    j.fsync_every = fsync_every;
    j.time_based = true;
    j.runtime_ns = Some(10 * CUT_NS);
    j
}

fn cut(device: DeviceConfig, job: JobSpec) -> SimResult {
    let mut spec = SimSpec::one_drive(3, host_with_overhead(2_000, 0.0, 250), device, vec![job]);
    spec.until = Until::PowerCut { at_ns: CUT_NS };
    run(&spec).expect("a run")
}

fn lost(r: &SimResult) -> &PowerCutDevice {
    &r.power_cut.as_ref().expect("a power-cut report").devices[0]
}

fn ssd(plp: bool) -> DeviceConfig {
    let mut c = SsdConfig::generic(8);
    c.power_loss_protection = plp;
    DeviceConfig::NandSsd(c)
}

fn mft(honor_flush: bool) -> DeviceConfig {
    DeviceConfig::Remap(RemapConfig {
        member: MemberSpec {
            name: "sda".into(),
            device: DriveConfig::Hdd(barracuda()),
            precondition: Precondition::None,
            scheduler: Default::default(),
            queue: Default::default(),
        },
        buffer_bytes: 64 * MIB,
        segment_bytes: MIB,
        block_bytes: 4096,
        reserve: 0.1,
        honor_flush,
        copy_bytes_per_s: 2e9,
        max_age_ns: 5_000_000_000,
        clean_at_free_segments: 4,
    })
}

#[test]
fn the_run_ends_at_the_cut_and_nothing_drains() {
    let r = cut(ssd(false), writes(0));
    assert_eq!(r.end_ns, r.start_ns + CUT_NS);
    assert_eq!(r.drained_ns, r.end_ns, "the devices lost what they held; nothing drains");
    assert_eq!(r.jobs[0].end_ns, r.end_ns);
    assert!(r.jobs[0].write.ios > 0);
    // A run that ends on its own has no power-cut report.
    let mut spec = SimSpec::one_drive(3, host_with_overhead(2_000, 0.0, 250), ssd(false), vec![JobSpec::simple("w", RwMode::Randwrite, 4096, 4, 16 * MIB)]);
    spec.jobs[0].io_limit = 4 * MIB;
    let whole = run(&spec).unwrap();
    assert!(whole.power_cut.is_none());
    assert!(whole.drained_ns < whole.start_ns + CUT_NS, "the drive drains well before the cut below");
    // Jobs done before the cut: the drive finishes its own work, and the cut finds it empty.
    spec.until = Until::PowerCut { at_ns: CUT_NS };
    let idle = run(&spec).unwrap();
    assert_eq!(idle.end_ns, idle.start_ns + CUT_NS);
    assert_eq!(idle.jobs[0].write.bytes, 4 * MIB);
    assert_eq!(idle.jobs[0].end_ns, whole.jobs[0].end_ns, "the job ended when it was done");
    assert_eq!(lost(&idle).volatile_bytes, 0, "{:?}", lost(&idle));
}

#[test]
fn a_drive_without_power_loss_protection_loses_its_write_buffer_but_no_flushed_data() {
    let r = cut(ssd(false), writes(0));
    let l = lost(&r);
    assert!(l.volatile_bytes > 0, "{l:?}");
    let SsdConfig { write_buffer_bytes, .. } = SsdConfig::generic(8);
    // The buffer's contents, and the units being programmed from it.
    assert!(l.volatile_bytes <= 2 * write_buffer_bytes, "{l:?}");
    assert_eq!((l.promised_bytes, l.broken_flushes), (0, 0));
    let p = cut(ssd(true), writes(0));
    assert_eq!(lost(&p).volatile_bytes, 0, "capacitors program the buffer");
    // The capacitors change what a cut loses, nothing the drive does before it.
    assert_eq!(p.jobs[0].write.ios, r.jobs[0].write.ios);
    assert_eq!(p.devices[0].internal, r.devices[0].internal);
}

#[test]
fn a_disk_loses_its_dirty_cache_but_honours_flushes() {
    let r = cut(DeviceConfig::Hdd(barracuda()), writes(0));
    let l = lost(&r);
    let dirty = r.devices[0].internal.hdd.as_ref().unwrap().dirty_bytes;
    assert_eq!(l.volatile_bytes, dirty);
    assert!(dirty > 0);
    let s = cut(DeviceConfig::Hdd(barracuda()), writes(1));
    assert_eq!((lost(&s).promised_bytes, lost(&s).broken_flushes), (0, 0));
}

#[test]
fn a_layer_that_ignores_flushes_loses_data_its_fsyncs_acknowledged() {
    let ignoring = cut(mft(false), writes(1));
    let l = lost(&ignoring);
    assert!(l.promised_bytes > 0 && l.broken_flushes > 0, "{l:?}");
    assert!(l.promised_bytes <= l.volatile_bytes);
    assert_eq!(l.members[0].name, "sda");
    let honouring = cut(mft(true), writes(1));
    let h = lost(&honouring);
    assert_eq!((h.promised_bytes, h.broken_flushes), (0, 0), "{h:?}");
    // Each fsync returned at once: many more writes were acknowledged before the cut.
    assert!(ignoring.jobs[0].write.ios > 20 * honouring.jobs[0].write.ios,
            "{} vs {}", ignoring.jobs[0].write.ios, honouring.jobs[0].write.ios);
}

// ---- what a cut does to a file system ---------------------------------------------------

/// Four writers that create a 16 KiB file, fsync it and close it, over and over (a mail
/// queue's writers), on `fs` of `era` over `device`, cut at 2 s.
fn mail_cut(device: DeviceConfig, fs: FsType, era: KernelEra) -> (SimResult, FsPowerCut) {
    files_cut(device, fs, era, true, 4 * CUT_NS, None)
}

/// The same, with an fsync or without, cut at `at_ns`.
fn files_cut(device: DeviceConfig, fs: FsType, era: KernelEra, fsync: bool, at_ns: u64, journal_blocks: Option<u32>) -> (SimResult, FsPowerCut) {
    let mut write = vec![FileOp::Create { set: 0, pick: Pick::Rotor }, FileOp::WriteWhole { io_bytes: 4096 }, FileOp::Fsync { data_only: false }, FileOp::Close];
    if !fsync {
        write.remove(2);
    }
    let writer = || file_program(write.clone(), None);
    let mut filesystem = FileSystemSpec::new(fs);
    filesystem.size_bytes = Some(4 << 30);
    filesystem.journal_blocks = journal_blocks;
    let target = TargetSpec { name: "sda".into(), device, precondition: Precondition::None, scheduler: Default::default(), queue: Default::default(), filesystem: Some(filesystem) };
    let mut host = HostConfig::ideal();
    host.memory = Some(MemoryConfig::new(era, 2 << 30, 2));
    let set = FileSetSpec { name: "q".into(), target: 0, dir: "/q".into(), entries: 50_000, size: SizeSpec::Fixed { bytes: 16 * 1024 }, dir_width: 0, prealloc: 0.0, dirs: false, block_device: false, unwritten: false, names_cached: false, maps_cached: false };
    let spec = SimSpec { seed: 5, host, targets: vec![target], jobs: (0..4).map(|_| writer()).collect(), interval_ns: None, until: Until::PowerCut { at_ns }, limits: Default::default(), file_sets: vec![set], network: None };
    let r = run(&spec).expect("a run");
    let fsr = r.power_cut.as_ref().expect("a cut").file_systems[0].clone();
    assert_eq!(fsr.target, "sda");
    assert!(r.files.as_ref().unwrap().commits > 0, "transactions committed before the cut");
    (r, fsr)
}

/// Bytes a report gives owners to.
fn attributed(f: &FsPowerCut, block: u64) -> u64 {
    f.data_bytes + f.freed_bytes + (f.metadata_blocks + f.journal_blocks) * block
}

#[test]
fn with_barriers_and_a_drive_that_flushes_no_fsynced_file_or_commit_is_lost() {
    for device in [DeviceConfig::Hdd(barracuda()), ssd(false)] {
        let (r, f) = mail_cut(device, FsType::Ext4, KernelEra::Today);
        let v = lost(&r).volatile_bytes;
        assert!(f.located, "{f:?}");
        assert_eq!((f.promised_bytes, f.promised_files, f.transactions_not_replayed, f.fsck_needed), (0, 0, 0, false), "{f:?}");
        // Whatever the drive held is given an owner: exactly on the SSD (4 KiB units under
        // 4 KiB blocks; a unit both buffered and being programmed is one block), and a whole
        // block for each run of sectors on the disk.
        if r.devices[0].internal.hdd.is_some() {
            assert!(attributed(&f, 4096) >= v, "{f:?} {v}");
        } else {
            assert!(attributed(&f, 4096) <= v && (v == 0) == (attributed(&f, 4096) == 0), "{f:?} {v}");
        }
    }
}

#[test]
fn without_barriers_commits_sit_in_the_disk_cache_and_recovery_drops_them() {
    // ext3 on a 2008 kernel sends no flush: an fsync returns with its commit in the cache.
    let (r, f) = mail_cut(DeviceConfig::Hdd(barracuda()), FsType::Ext3, KernelEra::Y2008);
    assert!(lost(&r).volatile_bytes > 0);
    assert!(f.transactions_broken > 0 && f.transactions_not_replayed >= f.transactions_broken, "{f:?}");
    assert!(f.first_not_replayed.is_some() && f.not_replayed_blocks > 0, "{f:?}");
    assert!(f.journal_blocks > 0, "{f:?}");
    // No flush was ever asked for: nothing was promised by one.
    assert_eq!(f.promised_bytes, 0);
}

#[test]
fn a_layer_that_ignores_flushes_loses_fsynced_files_and_committed_transactions() {
    let (r, f) = mail_cut(mft(false), FsType::Ext4, KernelEra::Today);
    assert!(lost(&r).promised_bytes > 0);
    assert!(f.promised_files > 0 && f.promised_bytes > 0 && f.promised_files <= f.data_files, "{f:?}");
    assert_eq!(f.promised_examples.len() as u64, f.promised_files.min(8));
    assert!(f.transactions_not_replayed > 0, "{f:?}");
    let (_, h) = mail_cut(mft(true), FsType::Ext4, KernelEra::Today);
    assert_eq!((h.promised_files, h.transactions_not_replayed, h.fsck_needed), (0, 0, false), "{h:?}");
}

#[test]
fn a_drive_with_power_loss_protection_loses_nothing_of_the_file_system() {
    let (_, f) = mail_cut(ssd(true), FsType::Ext4, KernelEra::Today);
    assert!(f.located);
    assert_eq!(attributed(&f, 4096), 0, "{f:?}");
    assert_eq!((f.transactions_broken, f.fsck_needed), (0, false));
}

#[test]
fn metadata_written_home_and_lost_is_restored_by_replay_while_the_log_holds_it() {
    // Writers that never fsync: the flusher writes their data and the committed metadata
    // home every 5 s; without barriers the disk's cache holds some of it at the cut.
    let cut = |journal| files_cut(DeviceConfig::Hdd(barracuda()), FsType::Ext3, KernelEra::Y2008, false, 17 * CUT_NS, journal).1;
    let f = cut(None);
    assert!(f.metadata_blocks > 0 && f.metadata_recovered == f.metadata_blocks && !f.fsck_needed, "{f:?}");
    assert!(f.dirty_files > 0 && f.dirty_bytes > 0, "the page cache held what the flusher had not written");
    // A journal of 1024 blocks has written over the transactions that carried them: what
    // the disk lost at home stays lost, and e2fsck has work.
    let small = cut(Some(1024));
    assert!(small.metadata_blocks > small.metadata_recovered && small.fsck_needed, "{small:?}");
    assert!(small.inodes_damaged + small.directories_damaged + small.bitmaps_damaged + small.mappings_damaged + small.super_damaged > 0, "{small:?}");
}

fn md(level: RaidLevel, n: usize) -> DeviceConfig {
    let members = (0..n)
        .map(|i| MemberSpec {
            name: format!("sd{}", (b'a' + i as u8) as char),
            device: DriveConfig::Hdd(barracuda()),
            precondition: Precondition::None,
            scheduler: Default::default(),
            queue: Default::default(),
        })
        .collect();
    DeviceConfig::Array(ArrayConfig {
        level,
        chunk_bytes: 64 * 1024,
        engine: EngineConfig::Md(MdConfig::default()),
        members,
        failures: vec![],
        spares: vec![],
        rebuild_limit_bytes: None,
        verify_data: false,
    })
}

#[test]
fn raid0_places_its_members_losses_in_the_file_system_and_parity_cannot() {
    let (r, f) = mail_cut(md(RaidLevel::Raid0, 2), FsType::Ext3, KernelEra::Y2008);
    let members: u64 = lost(&r).members.iter().map(|m| m.volatile_bytes).sum();
    assert!(members > 0 && f.located, "{f:?}");
    // Every lost sector has an owner, whole blocks at a time.
    assert!(attributed(&f, 4096) >= members, "{f:?} {members}");
    assert!(f.transactions_broken > 0, "{f:?}");
    let (r5, f5) = mail_cut(md(RaidLevel::Raid5, 3), FsType::Ext3, KernelEra::Y2008);
    assert!(lost(&r5).members.iter().any(|m| m.volatile_bytes > 0));
    assert!(!f5.located && attributed(&f5, 4096) == 0, "{f5:?}");
}
