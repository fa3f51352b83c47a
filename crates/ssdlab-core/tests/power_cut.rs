//! A power cut ends a run where it falls: nothing drains, and each device says what it held
//! only in volatile memory. Drives that carry flushes out lose no data a flush covered; a
//! layer that ignores flushes (seed 000's MFT) loses data its fsyncs had acknowledged.

mod common;

use common::{barracuda, host_with_overhead};
use ssdlab_core::array::MemberSpec;
use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::device::DriveConfig;
use ssdlab_core::remap::RemapConfig;
use ssdlab_core::report::{PowerCutDevice, SimResult};
use ssdlab_core::sim::Until;
use ssdlab_core::target::DeviceConfig;
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
