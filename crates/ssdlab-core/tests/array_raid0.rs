//! RAID 0's fast path: a read inside one chunk goes straight to its member, and nothing
//! timed may differ from planning it.

use ssdlab_core::array::{ArrayConfig, EngineConfig, MdConfig, MemberSpec, RaidLevel};
use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::device::DriveConfig;
use ssdlab_core::target::DeviceConfig;
use ssdlab_core::host::HostConfig;
use ssdlab_core::target::TargetSpec;
use ssdlab_core::report::DeviceResult;
use ssdlab_core::workload::{BlockSizeDist, JobSpec, RwMode};
use ssdlab_core::{run, SimResult, SimSpec};

const K: u64 = 1024;

/// RAID 0 of `n` fresh 24 MiB drives, `chunk` bytes a chunk.
fn small_array(n: usize, chunk: u64, verify_data: bool) -> ArrayConfig {
    let members = (0..n)
        .map(|i| {
            let mut drive = SsdConfig::generic(1);
            drive.capacity_bytes = 24 << 20;
            MemberSpec {
                name: format!("sd{}", (b'a' + i as u8) as char),
                device: DriveConfig::NandSsd(drive),
                precondition: Precondition::None,
                scheduler: Default::default(),
                queue: Default::default(),
            }
        })
        .collect();
    ArrayConfig {
        level: RaidLevel::Raid0,
        chunk_bytes: chunk,
        engine: EngineConfig::Md(MdConfig::default()),
        members,
        failures: vec![],
        spares: vec![],
        rebuild_limit_bytes: None,
        verify_data,
    }
}

fn members(r: &SimResult) -> &[DeviceResult] {
    &r.devices[0].members
}

/// A RAID 0 read inside one chunk skips planning and goes straight to its member; a
/// data-verified array always plans. Everything timed comes out the same both ways: the
/// jobs, the end, the events handled, every member's counters.
#[test]
fn raid0_reads_inside_a_chunk_time_as_planned_ones_do() {
    let run_with = |verify: bool| {
        let a = small_array(4, 16 * K, verify);
        let device = DeviceConfig::Array(a);
        // Reads of 4-48 KiB (inside a chunk or across chunks) among writes that give them
        // flash to read.
        let mut j = JobSpec::simple("j", RwMode::Randrw, 4 * K, 32, device.capacity_bytes());
        j.number_ios = Some(20_000);
        j.io_limit = u64::MAX;
        j.block_sizes = [0, 1, 2].map(|_| BlockSizeDist { split: vec![], range_min: Some(4 * K), range_max: Some(48 * K) });
        let target = TargetSpec { filesystem: None, name: "md0".into(), device, precondition: Precondition::None, scheduler: Default::default(), queue: Default::default() };
        let s = SimSpec { file_sets: Vec::new(), network: None, seed: 3, host: HostConfig::ideal(), targets: vec![target], jobs: vec![j], interval_ns: None, until: Default::default(), limits: Default::default() };
        run(&s).unwrap()
    };
    let (fast, planned) = (run_with(false), run_with(true));
    let rep = planned.devices[0].internal.array.clone().unwrap();
    assert!(rep.verified_bytes > 0 && rep.data_errors == 0, "{:?}", rep.first_data_error);
    assert!(fast.jobs[0].read.ios > 5_000, "reads were made");
    assert_eq!((fast.events, fast.end_ns), (planned.events, planned.end_ns));
    let json = |r: &SimResult| serde_json::to_string(&r.jobs).expect("serialisable");
    assert_eq!(json(&fast), json(&planned));
    for (f, p) in members(&fast).iter().zip(members(&planned)) {
        assert_eq!((&f.name, &f.disk), (&p.name, &p.disk));
    }
}
