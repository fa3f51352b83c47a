//! Trace replay: every record is issued once, at its time (recorded, scaled) or as fast as the
//! queue allows (closed); a bad record stops the run with its file, line and field.

mod common;

use std::io::Write as _;

use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::target::DeviceConfig;
use ssdlab_core::engine::NS_PER_MS;
use ssdlab_core::host::HostConfig;
use ssdlab_core::target::TargetSpec;
use ssdlab_core::report::SimResult;
use ssdlab_core::workload::replay::{ReplaySpec, ReplayTiming};
use ssdlab_core::workload::trace::{TimeUnit, TraceFormat};
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{run, SimError, SimSpec};

/// A DiskSim trace (ns times): `n` records 1 ms apart, alternating devices 0 and 1, reads
/// on even records.
fn trace(n: u64, extra: &str) -> tempfile_path::TempPath {
    let mut text = String::new();
    for i in 0..n {
        let (dev, lba, read) = (i % 2, (i * 7_919) % 100_000 * 8, (i % 2 == 0) as u8);
        text += &format!("{} {dev} {lba} 8 {read}\n", 5_000_000 + i * NS_PER_MS);
    }
    text += extra;
    tempfile_path::write(&text)
}

mod tempfile_path {
    use super::*;
    pub struct TempPath(pub std::path::PathBuf);
    impl Drop for TempPath {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    pub fn write(text: &str) -> TempPath {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!("ssdlab-replay-{}-{}.trace", std::process::id(), N.fetch_add(1, Ordering::Relaxed)));
        std::fs::File::create(&p).unwrap().write_all(text.as_bytes()).unwrap();
        TempPath(p)
    }
}

fn spec(path: &std::path::Path, timing: ReplayTiming, iodepth: u64, device: Option<u32>, wrap: bool) -> SimSpec {
    let cfg = SsdConfig::generic(1);
    let cap = cfg.capacity_bytes;
    let mut j = JobSpec::simple("replay", RwMode::Randread, 4096, iodepth, cap);
    j.io_limit = u64::MAX / 4;
    j.replay = Some(ReplaySpec {
        path: path.display().to_string(),
        format: TraceFormat::DiskSim,
        timing,
        device,
        wrap,
        disksim_time_unit: TimeUnit::Ns,
    });
    SimSpec { file_sets: Vec::new(), network: None,
        seed: 1,
        host: HostConfig::ideal(),
        targets: vec![TargetSpec { filesystem: None,
            name: "sda".into(),
            device: DeviceConfig::NandSsd(cfg),
            precondition: Precondition::Sequential,
            scheduler: Default::default(),
            queue: Default::default(),
        }],
        jobs: vec![j],
        interval_ns: None,
        until: Default::default(),
        limits: Default::default(),
    }
}

fn ios(r: &SimResult) -> (u64, u64) {
    (r.jobs[0].read.ios, r.jobs[0].write.ios)
}

#[test]
fn recorded_timing_issues_every_record_once_at_its_time() {
    let t = trace(400, "");
    let r = run(&spec(&t.0, ReplayTiming::Recorded, 256, None, false)).unwrap();
    assert_eq!(ios(&r), (200, 200), "every record once, reads and writes as recorded");
    let j = &r.jobs[0];
    // The last record is 399 ms after the first; a fast drive finishes it within a ms.
    let span = j.end_ns - j.start_ns;
    assert!((399 * NS_PER_MS..400 * NS_PER_MS).contains(&span), "span {span} ns");
    assert_eq!(r.devices[0].disk.read_sectors, 200 * 8);
}

#[test]
fn scaled_and_closed_timing() {
    let t = trace(400, "");
    let fast = run(&spec(&t.0, ReplayTiming::Scaled { speed: 4.0 }, 256, None, false)).unwrap();
    let span = fast.jobs[0].end_ns - fast.jobs[0].start_ns;
    assert!((99 * NS_PER_MS..101 * NS_PER_MS).contains(&span), "4x faster: {span} ns");
    let closed = run(&spec(&t.0, ReplayTiming::Closed, 4, None, false)).unwrap();
    assert_eq!(ios(&closed), (200, 200));
    let span = closed.jobs[0].end_ns - closed.jobs[0].start_ns;
    assert!(span < 50 * NS_PER_MS, "as fast as 4 outstanding allow: {span} ns");
    assert_eq!(closed.jobs[0].iodepth_level[3..].iter().sum::<u64>(), 0, "never more than 4 outstanding");
    assert!(closed.jobs[0].iodepth_level[2] > 300);
}

#[test]
fn one_device_of_the_trace() {
    let t = trace(400, "");
    let r = run(&spec(&t.0, ReplayTiming::Closed, 8, Some(1), false)).unwrap();
    assert_eq!(ios(&r), (0, 200), "device 1's records are the writes");
}

#[test]
fn a_bad_record_names_its_file_line_and_field() {
    let t = trace(10, "99000000 0 8 eight 1\n");
    let err = run(&spec(&t.0, ReplayTiming::Closed, 8, None, false)).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, SimError::Trace { ref error, .. } if error.line == 11 && error.field == "size"));
    assert!(msg.contains(&format!("{}:11: size", t.0.display())), "{msg}");
}

#[test]
fn records_past_the_device_end_are_an_error_unless_wrapped() {
    let t = trace(10, "99000000 0 999999999999 8 1\n");
    let msg = run(&spec(&t.0, ReplayTiming::Closed, 8, None, false)).unwrap_err().to_string();
    assert!(msg.contains(":11: offset:") && msg.contains("past the end"), "{msg}");
    let r = run(&spec(&t.0, ReplayTiming::Closed, 8, None, true)).unwrap();
    assert_eq!(ios(&r), (6, 5));
}

#[test]
fn same_trace_same_result() {
    let t = trace(300, "");
    let a = serde_json::to_string(&run(&spec(&t.0, ReplayTiming::Recorded, 64, None, false)).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&spec(&t.0, ReplayTiming::Recorded, 64, None, false)).unwrap()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn a_time_past_the_simulated_clock_is_an_input_error_naming_its_line() {
    // 2^63 ns and more cannot be scheduled: recorded at 10^19 ns or u64::MAX, or scaled past it.
    let cases: [(&str, ReplayTiming); 4] = [
        ("10000000000000000000", ReplayTiming::Recorded),
        ("18446744073709551615", ReplayTiming::Recorded),
        ("18446744073709551615", ReplayTiming::Scaled { speed: 2.0 }),
        ("5000000000000000000", ReplayTiming::Scaled { speed: 0.5 }),
    ];
    for (time, timing) in cases {
        let t = tempfile_path::write(&format!("0 0 0 8 1\n100 0 8 8 1\n{time} 0 16 8 1\n"));
        let err = run(&spec(&t.0, timing, 8, None, false)).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, SimError::Trace { ref error, .. } if error.line == 3 && error.field == "timestamp"),
            "{time} {timing:?}: {msg}"
        );
        assert!(msg.contains("past the end of the simulated clock"), "{msg}");
    }
    // Just inside the clock: replayed.
    let t = tempfile_path::write("0 0 0 8 1\n9000000000000000000 0 16 8 1\n");
    assert_eq!(ios(&run(&spec(&t.0, ReplayTiming::Recorded, 8, None, false)).unwrap()), (2, 0));
}
