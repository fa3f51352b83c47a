//! In-place media (3D XPoint): no erase or GC, throughput set by dies, channels and link.

mod common;

use common::xpoint;
use ssdlab_core::device::ssd::Precondition;
use ssdlab_core::target::DeviceConfig;
use ssdlab_core::host::HostConfig;
use ssdlab_core::target::TargetSpec;
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{run, SimSpec};

fn spec(rw: RwMode, bs: u64, qd: u64) -> SimSpec {
    let mut job = JobSpec::simple("j", rw, bs, qd, 1 << 30);
    job.io_limit = 256 << 20;
    SimSpec { file_sets: Vec::new(), network: None,
        seed: 1,
        host: HostConfig::ideal(),
        targets: vec![TargetSpec { filesystem: None,
            name: "nvme0n1".into(),
            device: DeviceConfig::InPlace(xpoint()),
            precondition: Precondition::Sequential,
            scheduler: Default::default(),
            queue: Default::default(),
        }],
        jobs: vec![job],
        interval_ns: None,
    until: Default::default(),
    limits: Default::default(),
    }
}

#[test]
fn writes_in_place_at_the_media_rate_without_erases() {
    let r = run(&spec(RwMode::Write, 128 * 1024, 32)).unwrap();
    let j = &r.jobs[0];
    let rate = j.write.bytes as f64 / ((j.end_ns - j.measure_start_ns) as f64 / 1e9);
    let cfg = xpoint();
    let media = cfg.dies() as f64 * 4096.0 / 40e-6; // 28 dies x 4 KiB per 40 us
    let expect = media.min(cfg.interface.bytes_per_s() as f64).min(7.0 * cfg.media.channel_bytes_per_s as f64);
    assert!((rate - expect).abs() / expect < 0.05, "rate {rate} vs {expect}");
    let i = &r.devices[0].internal;
    assert!(i.nand.is_none(), "no FTL, GC or erases to report");
    assert_eq!(i.media_bytes_written, i.host_bytes_written, "no write amplification");
    assert_eq!(i.host_bytes_written, 256 << 20);
}

#[test]
fn random_reads_complete_and_conserve_bytes() {
    let r = run(&spec(RwMode::Randread, 4096, 16)).unwrap();
    let i = &r.devices[0].internal;
    assert_eq!(r.jobs[0].read.bytes, 256 << 20);
    assert_eq!(i.host_bytes_read, 256 << 20);
    assert_eq!(r.devices[0].disk.read_sectors * 512, 256 << 20);
    // QD16 over 28 dies: latency stays near one sense plus transfers, no GC stalls.
    assert!(r.jobs[0].read.clat.max < 200_000, "max clat {}", r.jobs[0].read.clat.max);
}
