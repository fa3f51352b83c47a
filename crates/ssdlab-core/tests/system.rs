//! A run is a system: one host, several target devices, a block queue per device.

mod common;

use common::xpoint;
use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::target::DeviceConfig;
use ssdlab_core::report::DeviceKind;
use ssdlab_core::host::HostConfig;
use ssdlab_core::sim::target_seed;
use ssdlab_core::target::TargetSpec;
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{run, SimError, SimSpec};

const MIB: u64 = 1 << 20;

fn jittery_drive() -> SsdConfig {
    let mut cfg = SsdConfig::generic(1);
    cfg.controller.busy_cv = 0.5; // per-command controller time drawn from the drive's stream
    cfg
}

fn target(name: &str, device: DeviceConfig) -> TargetSpec {
    TargetSpec { filesystem: None, name: name.into(), device, precondition: Precondition::Sequential, scheduler: Default::default(), queue: Default::default() }
}

fn reader(name: &str, target: u32, seed: u64, ios: u64) -> JobSpec {
    let mut j = JobSpec::simple(name, RwMode::Randread, 4096, 8, 256 * MIB);
    j.target = target;
    j.seed = seed;
    j.number_ios = Some(ios);
    j
}

fn two_drive_spec() -> SimSpec {
    SimSpec { file_sets: Vec::new(), network: None,
        seed: 11,
        host: HostConfig::ideal(),
        targets: vec![target("sda", DeviceConfig::NandSsd(jittery_drive())), target("sdb", DeviceConfig::NandSsd(jittery_drive()))],
        // Identical jobs on identical drives: only the drives' own streams can tell them apart.
        jobs: vec![reader("a", 0, 5, 20_000), reader("b", 1, 5, 20_000)],
        interval_ns: Some(1_000_000),
    until: Default::default(),
    limits: Default::default(),
    }
}

#[test]
fn identical_drives_have_their_own_random_streams_and_counters() {
    let r = run(&two_drive_spec()).unwrap();
    assert_eq!(r.devices.len(), 2);
    assert_eq!((r.devices[0].name.as_str(), r.devices[1].name.as_str()), ("sda", "sdb"));
    let (a, b) = (&r.jobs[0], &r.jobs[1]);
    assert_eq!((a.read.ios, b.read.ios), (20_000, 20_000));
    // Same offsets, same drive: the latencies differ only through each controller's jitter.
    assert_ne!(a.read.clat.sum(), b.read.clat.sum(), "two drives share controller jitter");
    assert_ne!(target_seed(11, 0), target_seed(11, 1));
    for (d, j) in r.devices.iter().zip([a, b]) {
        assert_eq!(d.disk.read_ios, j.read.ios, "{}: its own job's I/O and nothing else", d.name);
        assert_eq!(d.disk.read_sectors * 512, j.read.bytes);
        assert_eq!(d.internal.host_bytes_read, j.read.bytes);
        assert_eq!(d.disk.write_ios, 0);
        assert_eq!(d.scheduler, "none");
    }
    // Each sample holds both devices, in the system's order.
    assert!(r.samples.iter().all(|s| s.devices.len() == 2));
    let last = r.samples.last().unwrap();
    assert!(last.devices[0].disk.read_ios <= r.devices[0].disk.read_ios);
}

#[test]
fn a_one_drive_system_is_the_single_drive_run() {
    // The first target keeps the run's seed: moving a second drive in beside it does not
    // change the first drive's run (its jobs, its streams).
    let mut one = two_drive_spec();
    one.targets.truncate(1);
    one.jobs.truncate(1);
    one.interval_ns = None;
    let mut two = two_drive_spec();
    two.interval_ns = None;
    let (r1, r2) = (run(&one).unwrap(), run(&two).unwrap());
    let json = |x: &dyn erased::Ser| x.json();
    assert_eq!(json(&r1.jobs[0]), json(&r2.jobs[0]));
    assert_eq!(json(&r1.devices[0].disk), json(&r2.devices[0].disk));
}

mod erased {
    pub trait Ser {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Ser for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap()
        }
    }
}

#[test]
fn a_nand_ssd_and_an_in_place_drive_run_side_by_side() {
    let mut w = JobSpec::simple("w", RwMode::Randwrite, 4096, 16, 256 * MIB);
    w.number_ios = Some(20_000);
    let mut x = reader("x", 1, 3, 20_000);
    x.rw = RwMode::Randrw;
    let spec = SimSpec { file_sets: Vec::new(), network: None,
        seed: 2,
        host: HostConfig::ideal(),
        targets: vec![target("nvme0n1", DeviceConfig::NandSsd(SsdConfig::generic(1))), target("nvme1n1", DeviceConfig::InPlace(xpoint()))],
        jobs: vec![w, x],
        interval_ns: None,
    until: Default::default(),
    limits: Default::default(),
    };
    let r = run(&spec).unwrap();
    let (nand, xp) = (&r.devices[0], &r.devices[1]);
    assert_eq!((nand.internal.kind, xp.internal.kind), (DeviceKind::NandSsd, DeviceKind::InPlace));
    assert!(nand.internal.nand.is_some() && xp.internal.nand.is_none());
    assert_eq!(nand.disk.write_ios, 20_000);
    assert_eq!(xp.disk.read_ios + xp.disk.write_ios, 20_000);
    assert_eq!(xp.internal.media_bytes_written, xp.internal.host_bytes_written, "written in place");
    assert_eq!(r.jobs[1].read.bytes + r.jobs[1].write.bytes, 20_000 * 4096);
}

#[test]
fn bad_systems_are_named_errors() {
    let mut dup = two_drive_spec();
    dup.targets[1].name = "sda".into();
    let e = run(&dup).unwrap_err();
    assert!(matches!(e, SimError::System(ref c) if c.key == "targets.1.name" && c.message.contains("'sda' is used twice")), "{e}");

    let mut nowhere = two_drive_spec();
    nowhere.jobs[1].target = 7;
    let e = run(&nowhere).unwrap_err();
    assert!(matches!(e, SimError::Job { ref job, ref error } if job == "b" && error.key == "target" && error.message.contains("device 7")), "{e}");

    let mut empty = two_drive_spec();
    empty.targets.clear();
    assert!(run(&empty).is_err());

    // A job must fit the device it targets, not the first one.
    let mut small = two_drive_spec();
    small.jobs[1].region_size = 2 << 30;
    let e = run(&small).unwrap_err();
    assert!(e.to_string().contains("runs past the device end"), "{e}");
}

#[test]
fn a_link_rate_that_rounds_to_nothing_is_a_named_error() {
    let mut cfg = SsdConfig::generic(1);
    cfg.interface = ssdlab_core::device::ssd::HostInterface::Sata { gbit_per_s: 1e-12, efficiency: 1.0 };
    let e = DeviceConfig::NandSsd(cfg).validate().unwrap_err();
    assert_eq!(e.key, "interface.gbit_per_s");
    assert!(e.message.contains("rounds to 0"), "{}", e.message);
}
