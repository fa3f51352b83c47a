//! Fingerprints of whole runs, to show that a change to the engine (the event queue, the
//! block layer's fast paths) leaves every result bit for bit as it was:
//!
//!     cargo run --release -p ssdlab-core --example digest [-- --json DIR]
//!
//! Each line names a system and gives the number of events handled, the simulated end and
//! drain times and a 64-bit FNV-1a hash of the whole result as JSON (every job's and
//! device's statistics, histograms and time-series samples). Build it before and after a
//! change and diff the two outputs; with `--json DIR` the full results are written there
//! too, to diff what differs. `map_bytes` (the memory a drive's maps take, which a change of
//! data layout changes while the simulation stays the same) is left out of the hash.
//!
//! The systems cover the event loop's paths: one NAND drive with host overhead, samples and
//! a random precondition (GC at work); a hard disk behind mq-deadline; md RAID 5 with
//! mq-deadline on its members, a member failing and a spare rebuilt; RAID 0 at QD256; a
//! mixed system (NAND drive behind kyber, disk behind bfq); CFQ with many processes; and
//! batched submissions merged by noop.

use ssdlab_core::array::{ArrayConfig, EngineConfig, MdConfig, MemberFailure, MemberSpec, RaidLevel};
use ssdlab_core::block::{BfqTunables, CfqTunables, DeadlineTunables, KyberTunables, QueueLimits, SchedulerConfig};
use ssdlab_core::device::hdd::HddConfig;
use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::target::DeviceConfig;
use ssdlab_core::engine::{NS_PER_MS, NS_PER_US};
use ssdlab_core::device::DriveConfig;
use ssdlab_core::host::HostConfig;
use ssdlab_core::sim::{SimSpec, Until};
use ssdlab_core::target::TargetSpec;
use ssdlab_core::workload::{JobSpec, RwMode};

const GIB: u64 = 1 << 30;

fn target(name: &str, device: DeviceConfig, precondition: Precondition, scheduler: SchedulerConfig) -> TargetSpec {
    TargetSpec { filesystem: None, name: name.into(), device, precondition, scheduler, queue: QueueLimits::default() }
}

fn member(name: &str, device: DriveConfig, precondition: Precondition, scheduler: SchedulerConfig) -> MemberSpec {
    MemberSpec { name: name.into(), device, precondition, scheduler, queue: QueueLimits::default() }
}

fn host() -> HostConfig {
    // Gamma-distributed per-I/O host time: host events and the host's random stream.
    HostConfig { memory: None, name: "digest".into(), io_overhead_ns: 3 * NS_PER_US, io_overhead_cv: 0.5, submit_ns: None, reap_ns: None, hz: 250 }
}

#[allow(clippy::too_many_arguments)]
fn job(name: &str, target: u32, rw: RwMode, bs: u64, qd: u64, region: u64, ios: u64, seed: u64) -> JobSpec {
    let mut j = JobSpec::simple(name, rw, bs, qd, region);
    j.target = target;
    j.number_ios = Some(ios);
    j.io_limit = u64::MAX;
    j.seed = seed;
    j
}

fn array(level: RaidLevel, n: usize, gib: u64, pre: Precondition, member_sched: SchedulerConfig) -> ArrayConfig {
    ArrayConfig {
        level,
        chunk_bytes: 64 << 10,
        engine: EngineConfig::Md(MdConfig::default()),
        members: (0..n)
            .map(|i| {
                let name = format!("sd{}", (b'a' + i as u8) as char);
                member(&name, DriveConfig::NandSsd(SsdConfig::generic(gib)), pre, member_sched)
            })
            .collect(),
        failures: vec![],
        spares: vec![],
        rebuild_limit_bytes: None,
        verify_data: false,
    }
}

fn systems() -> Vec<(&'static str, SimSpec)> {
    let spec = |targets: Vec<TargetSpec>, jobs: Vec<JobSpec>, interval_ns: Option<u64>, until: Until| SimSpec { file_sets: Vec::new(), network: None,
        seed: 7,
        host: host(),
        targets,
        jobs,
        interval_ns,
        until,
        limits: Default::default(),
    };
    let deadline = SchedulerConfig::MqDeadline(DeadlineTunables::default());
    let mut out = Vec::new();

    let ssd = DeviceConfig::NandSsd(SsdConfig::generic(2));
    let mut mixed = job("randrw", 0, RwMode::Randrw, 4096, 32, 2 * GIB, 200_000, 1);
    mixed.rwmix_read = 70.0;
    out.push((
        "ssd_randrw_qd32_gc",
        spec(vec![target("nvme0n1", ssd, Precondition::Random { passes: 1.0 }, SchedulerConfig::None)], vec![mixed], Some(5 * NS_PER_MS), Until::JobsDone),
    ));

    let hdd = DeviceConfig::Hdd(HddConfig::generic());
    let reads = job("randread", 0, RwMode::Randread, 4096, 16, 100 * GIB, 3_000, 2);
    let mut seq = job("seqwrite", 0, RwMode::Write, 64 << 10, 4, 10 * GIB, 3_000, 3);
    seq.clone = 1;
    seq.region_offset = 200 * GIB;
    out.push((
        "hdd_mq_deadline",
        spec(vec![target("sda", hdd.clone(), Precondition::None, deadline)], vec![reads, seq], None, Until::JobsDone),
    ));

    let mut r5 = array(RaidLevel::Raid5, 5, 1, Precondition::Sequential, deadline);
    r5.spares = vec![member("sdz", DriveConfig::NandSsd(SsdConfig::generic(1)), Precondition::None, deadline)];
    r5.failures = vec![MemberFailure { member: "sdb".into(), at_ns: 2 * NS_PER_MS }];
    r5.rebuild_limit_bytes = Some(64 << 20);
    let cap = 4 * GIB;
    let mut w = job("randwrite", 0, RwMode::Randrw, 4096, 64, cap, 60_000, 4);
    w.rwmix_read = 30.0;
    out.push((
        "md_raid5_mq_deadline_rebuild",
        spec(vec![target("md0", DeviceConfig::Array(r5), Precondition::None, SchedulerConfig::None)], vec![w], Some(2 * NS_PER_MS), Until::JobsDone),
    ));

    let r0 = array(RaidLevel::Raid0, 8, 1, Precondition::Sequential, SchedulerConfig::None);
    out.push((
        "md_raid0_qd256",
        spec(
            vec![target("md0", DeviceConfig::Array(r0), Precondition::None, SchedulerConfig::None)],
            vec![job("randread", 0, RwMode::Randread, 4096, 256, 8 * GIB, 300_000, 5)],
            None,
            Until::JobsDone,
        ),
    ));

    let r0_dl = array(RaidLevel::Raid0, 4, 1, Precondition::Sequential, deadline);
    out.push((
        "md_raid0_deadline_everywhere",
        spec(
            vec![target("md0", DeviceConfig::Array(r0_dl), Precondition::None, deadline)],
            vec![job("randrw", 0, RwMode::Randrw, 16 << 10, 128, 4 * GIB, 100_000, 6)],
            None,
            Until::JobsDone,
        ),
    ));

    let ssd = DeviceConfig::NandSsd(SsdConfig::generic(2));
    let mut on_hdd = job("hdd_reads", 1, RwMode::Randread, 4096, 8, 50 * GIB, 2_000, 8);
    on_hdd.clone = 1;
    out.push((
        "ssd_kyber_and_hdd_bfq",
        spec(
            vec![
                target("nvme0n1", ssd, Precondition::Sequential, SchedulerConfig::Kyber(KyberTunables::default())),
                target("sda", hdd, Precondition::None, SchedulerConfig::Bfq(BfqTunables::default())),
            ],
            vec![job("ssd_writes", 0, RwMode::Randwrite, 4096, 16, 2 * GIB, 100_000, 7), on_hdd],
            Some(10 * NS_PER_MS),
            Until::JobsDone,
        ),
    ));

    let ssd = DeviceConfig::NandSsd(SsdConfig::generic(2));
    let procs = (0..32u32)
        .map(|i| {
            let mut j = job("cfq", 0, RwMode::Randread, 4096, 1, 2 * GIB, 2_000, 100 + i as u64);
            j.clone = i;
            j
        })
        .collect();
    out.push((
        "ssd_cfq_32_processes",
        spec(vec![target("sda", ssd, Precondition::Sequential, SchedulerConfig::Cfq(CfqTunables::default()))], procs, None, Until::JobsDone),
    ));

    let ssd = DeviceConfig::NandSsd(SsdConfig::generic(2));
    let mut batched = job("seqwrite_batched", 0, RwMode::Write, 4096, 32, 2 * GIB, 200_000, 9);
    batched.iodepth_batch_submit = 8;
    out.push((
        "ssd_noop_merged_batches",
        spec(vec![target("sda", ssd, Precondition::None, SchedulerConfig::Noop)], vec![batched], None, Until::JobsDone),
    ));
    out
}

/// `v` without any field named `key`, however deep.
fn drop_key(v: &mut serde_json::Value, key: &str) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove(key);
            m.values_mut().for_each(|x| drop_key(x, key));
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| drop_key(x, key)),
        _ => {}
    }
}

/// 64-bit FNV-1a.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = match args.as_slice() {
        [] => None,
        [flag, dir] if flag == "--json" => Some(std::path::PathBuf::from(dir)),
        _ => {
            eprintln!("usage: digest [--json DIR]");
            std::process::exit(2);
        }
    };
    for (name, spec) in systems() {
        let r = ssdlab_core::run(&spec).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut value = serde_json::to_value(&r).expect("a result serialises");
        drop_key(&mut value, "map_bytes");
        let json = value.to_string();
        if let Some(d) = &dir {
            std::fs::create_dir_all(d).expect("output directory");
            std::fs::write(d.join(format!("{name}.json")), &json).expect("result written");
        }
        println!(
            "{name:32} events {:>10} end_ns {:>14} drained_ns {:>14} fnv1a {:016x}",
            r.events,
            r.end_ns,
            r.drained_ns,
            fnv1a(json.as_bytes())
        );
    }
}
