//! fio's latencies as the host stamps them (fio's io_u.c, ioengines.c, engines/libaio.c): slat
//! is the submit call (and the wait for its batch's `io_submit`), clat runs from the call's
//! return to the thread's reap, and the rest of the thread's time per I/O is in neither.
//! Splitting the host's time never moves the device: the same I/Os reach it at the same times.

mod common;

use common::*;
use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::host::HostConfig;
use ssdlab_core::report::SimResult;
use ssdlab_core::target::{DeviceConfig, TargetSpec};
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{run, SimSpec};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
/// The 850 PRO's default host (xeon-x5650-ubuntu1404): 12.8 us per I/O, 5 us of it in the
/// submit call, 6.8 us from a completion to its reap; constant here so stamps are exact.
const T: u64 = 12_800;
const SUBMIT: u64 = 5_000;
const REAP: u64 = 6_800;

fn host(submit: Option<u64>, reap: Option<u64>) -> HostConfig {
    HostConfig { submit_ns: submit, reap_ns: reap, ..host_with_overhead(T, 0.0, 250) }
}

fn sim(host: HostConfig, job: JobSpec) -> SimResult {
    let target = TargetSpec {
        filesystem: None,
        name: "sda".into(),
        device: DeviceConfig::NandSsd(SsdConfig::generic(4)),
        precondition: Precondition::None,
        scheduler: Default::default(),
        queue: Default::default(),
    };
    let spec = SimSpec {
        file_sets: Vec::new(),
        network: None,
        seed: 7,
        host,
        targets: vec![target],
        jobs: vec![job],
        interval_ns: None,
        until: Default::default(),
        limits: Default::default(),
    };
    run(&spec).unwrap()
}

fn randread(depth: u64, ios: u64) -> JobSpec {
    let mut j = JobSpec::simple("j", RwMode::Randread, 4 * KIB, depth, 1024 * MIB);
    j.number_ios = Some(ios);
    j
}

/// What the split must leave alone: the I/Os, their bytes, when the run ended, the device.
fn device_side(r: &SimResult) -> String {
    let j = &r.jobs[0];
    format!("{} {} {} {} {}", j.read.ios, j.read.bytes, j.end_ns, r.end_ns, serde_json::to_string(&r.devices).unwrap())
}

#[test]
fn at_qd16_slat_is_the_submit_call_and_the_wait_for_a_busy_thread_is_clat() {
    let r = sim(host(Some(SUBMIT), Some(REAP)), randread(16, 20_000));
    let d = &r.jobs[0].read;
    // The thread limits the job: one I/O per 12.8 us.
    let iops = d.ios as f64 * 1e9 / (r.jobs[0].end_ns - r.jobs[0].start_ns) as f64;
    assert!((iops / (1e9 / T as f64) - 1.0).abs() < 0.01, "{iops}");
    assert_eq!((d.slat.min, d.slat.max), (SUBMIT, SUBMIT), "slat is the submit call, nothing else");
    // Completions wait for the thread that is preparing the other 15 I/Os: that is clat, and
    // an I/O's lat is about the 16 I/Os' worth of thread time, less its own preparation.
    assert!(d.clat.mean > 12.0 * T as f64, "{}", d.clat.mean);
    let expect = 16.0 * T as f64 - (T - SUBMIT - REAP) as f64;
    assert!((d.lat.mean / expect - 1.0).abs() < 0.05, "lat {} vs {expect}", d.lat.mean);
}

#[test]
fn at_qd1_slat_is_the_submit_call_clat_the_device_and_the_reap() {
    let split = sim(host(Some(SUBMIT), Some(REAP)), randread(1, 2_000));
    let whole = sim(host(None, None), randread(1, 2_000));
    assert_eq!(device_side(&split), device_side(&whole), "the split moved the device");
    let (s, w) = (&split.jobs[0].read, &whole.jobs[0].read);
    // Unsplit, the whole host time is the submit call and the device's time is clat.
    assert_eq!((w.slat.min, w.slat.max), (T, T));
    assert_eq!((s.slat.min, s.slat.max), (SUBMIT, SUBMIT));
    assert_eq!((s.clat.min, s.clat.max), (w.clat.min + REAP, w.clat.max + REAP));
    // fio's own work between reaps is in no latency.
    assert_eq!(s.lat.max + (T - SUBMIT - REAP), w.lat.max);
}

#[test]
fn a_batch_is_issued_when_its_io_submit_returns() {
    let mut job = randread(8, 4_000);
    job.iodepth_batch_submit = 8;
    let r = sim(host(Some(SUBMIT), Some(REAP)), job.clone());
    let d = &r.jobs[0].read;
    // The first batch: its first I/O waits for the other seven to be prepared and for the
    // call; its last is issued as its own submit call returns.
    assert_eq!(d.slat.max, 7 * T + SUBMIT);
    assert_eq!(d.slat.min, SUBMIT);
    let whole = sim(host(None, None), job);
    assert_eq!(device_side(&r), device_side(&whole), "the split moved the device");
}

#[test]
fn the_submit_call_and_the_reap_are_parts_of_the_host_time() {
    let err = |submit, reap| host(submit, reap).validate().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err(Some(T + 1), None).contains("host.submit_ns"), "{}", err(Some(T + 1), None));
    assert!(err(Some(SUBMIT), Some(T - SUBMIT + 1)).contains("host.reap_ns"));
    assert_eq!(err(Some(SUBMIT), Some(T - SUBMIT)), "");
}

#[test]
fn a_synchronous_engine_times_its_whole_call_as_clat() {
    let mut job = randread(1, 2_000);
    job.sync_engine = true;
    let sync = sim(host(Some(SUBMIT), Some(REAP)), job);
    let aio = sim(host(Some(SUBMIT), Some(REAP)), randread(1, 2_000));
    assert_eq!(device_side(&sync), device_side(&aio), "the engine's stamps moved the device");
    let (s, a) = (&sync.jobs[0].read, &aio.jobs[0].read);
    // fio stamps a psync read's issue before the call and keeps no slat: lat is the call.
    assert_eq!(s.slat.max, 0);
    assert_eq!((s.clat.min, s.clat.max), (a.lat.min, a.lat.max));
    assert_eq!(s.lat.max, s.clat.max);
}

/// fio's null engine: every I/O is done as its submit call returns and none reaches the device;
/// the thread's time per I/O is all that is left, so the job runs at one I/O per 12.8 us.
#[test]
fn a_null_engine_job_is_the_hosts_time_alone() {
    for depth in [1, 16] {
        let mut job = randread(depth, 5_000);
        job.null_engine = true;
        let r = sim(host(Some(SUBMIT), Some(REAP)), job);
        let d = &r.jobs[0].read;
        assert_eq!((d.ios, d.bytes), (5_000, 5_000 * 4 * KIB), "depth {depth}: every I/O completes once");
        let disk = &r.devices[0].disk;
        assert_eq!((disk.read_ios, disk.write_ios), (0, 0), "depth {depth}: nothing reached the device");
        let iops = d.ios as f64 * 1e9 / (r.jobs[0].end_ns - r.jobs[0].start_ns) as f64;
        assert!((iops / (1e9 / T as f64) - 1.0).abs() < 0.01, "depth {depth}: {iops}");
        // At depth 1 an I/O waits for nothing but its own reap.
        if depth == 1 {
            assert_eq!((d.clat.min, d.clat.max), (REAP, REAP), "{:?}", d.clat);
        }
    }
}

/// fio stamps a log entry when its thread reaps the I/O (stat.c's add_log_sample takes the time
/// then), not when the device completed it: at depth 1 the thread is idle when the device
/// completes, so each entry comes the reap's time after the device's completion, which the
/// same job with no reap time stamps (splitting the host's time does not move the device).
#[test]
fn a_per_io_log_entry_is_stamped_at_the_reap() {
    let mut job = randread(1, 500);
    job.log_window_ns = Some(0);
    let split = sim(host(Some(SUBMIT), Some(REAP)), job.clone());
    let whole = sim(host(Some(SUBMIT), None), job);
    assert_eq!(device_side(&split), device_side(&whole), "the split moved the device");
    let (s, w) = (&split.jobs[0].log, &whole.jobs[0].log);
    assert_eq!((s.len(), w.len()), (500, 500));
    for (a, b) in s.iter().zip(w) {
        // Each entry: (time, direction, ios, bytes, offset, slat, clat, ...).
        assert_eq!((a.0 - b.0, a.6 - b.6), (REAP, REAP), "{a:?} against {b:?}");
    }
}
