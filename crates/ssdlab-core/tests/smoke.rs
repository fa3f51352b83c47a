use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::host::HostConfig;
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{run, SimSpec};

#[test]
fn smoke() {
    for (rw, qd, pre) in [
        (RwMode::Randread, 32, Precondition::Sequential),
        (RwMode::Randwrite, 32, Precondition::None),
        (RwMode::Randwrite, 32, Precondition::Random { passes: 2.0 }),
        (RwMode::Write, 32, Precondition::None),
    ] {
        let mut job = JobSpec::simple("j", rw, 4096, qd, 1 << 30);
        job.io_limit = 200 << 20;
        let spec = SimSpec {
            seed: 1,
            device: SsdConfig::generic(1),
            host: HostConfig::ideal(),
            jobs: vec![job],
            interval_ns: None,
            precondition: pre,
        };
        let t = std::time::Instant::now();
        let r = run(&spec).unwrap();
        let el = t.elapsed().as_secs_f64();
        let j = &r.jobs[0];
        let ios = j.read.ios + j.write.ios;
        let secs = (j.end_ns - j.measure_start_ns) as f64 / 1e9;
        let i = &r.devices[0].internal;
        println!(
            "{rw:?} qd{qd} {pre:?}: {ios} ios in {secs:.3}s sim = {:.0} IOPS, clat mean {:.1}us, waf {:.2}, util {:.2}; wall {el:.3}s = {:.2}M ios/s, events {}",
            ios as f64 / secs,
            (j.read.clat.mean + j.write.clat.mean),
            i.nand_bytes_written as f64 / i.host_bytes_written.max(1) as f64,
            i.die_busy_ns as f64 / (i.dies as f64 * r.end_ns as f64),
            ios as f64 / el / 1e6,
            r.events
        );
    }
}
