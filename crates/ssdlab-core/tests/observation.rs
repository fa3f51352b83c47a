//! What the core observes of a run for fio's report: each job's own bandwidth and IOPS
//! samples, its I/O log, its thread's CPU time; the bounds on what a run keeps. None of it
//! changes what is simulated.

use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::target::DeviceConfig;
use ssdlab_core::host::{HostConfig, Limits};
use ssdlab_core::sim::Until;
use ssdlab_core::target::TargetSpec;
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{run, SimError, SimSpec};

const MIB: u64 = 1 << 20;
const MS: u64 = 1_000_000;

fn spec(jobs: Vec<JobSpec>) -> SimSpec {
    let target = TargetSpec { filesystem: None,
        name: "sda".into(),
        device: DeviceConfig::NandSsd(SsdConfig::generic(1)),
        precondition: Precondition::None,
        scheduler: Default::default(),
        queue: Default::default(),
    };
    let host = HostConfig { memory: None, name: "h".into(), io_overhead_ns: 3_000, io_overhead_cv: 0.5, submit_ns: None, reap_ns: None, hz: 1000 };
    SimSpec { file_sets: Vec::new(), network: None, seed: 3, host, targets: vec![target], jobs, interval_ns: None, until: Until::JobsDone, limits: Limits::default() }
}

/// A reader held to `iops` for `ms` milliseconds.
fn paced(name: &str, iops: u64, ms: u64) -> JobSpec {
    let mut j = JobSpec::simple(name, RwMode::Randread, 4096, 4, 256 * MIB);
    j.rate_iops = [iops, 0, 0];
    j.runtime_ns = Some(ms * MS);
    j.time_based = true;
    j
}

#[test]
fn each_job_samples_its_own_rate() {
    let mut a = paced("slow", 2_000, 1_000);
    let mut b = paced("fast", 10_000, 1_000);
    a.bw_window_ns = 100 * MS;
    a.iops_window_ns = 100 * MS;
    b.bw_window_ns = 100 * MS;
    b.iops_window_ns = 100 * MS;
    let r = run(&spec(vec![a, b])).unwrap();
    for (j, want) in r.jobs.iter().zip([2_000.0, 10_000.0]) {
        let iops = &j.iops_samples[0];
        assert_eq!(iops.n, 10, "{}: one sample per complete 100 ms window", j.name);
        assert!((iops.mean - want).abs() / want < 0.01, "{}: {} IOPS sampled, paced at {want}", j.name, iops.mean);
        // The samples add up to the job's own I/O (the windows cover its whole runtime).
        let sampled: f64 = iops.mean * iops.n as f64 / 10.0;
        assert!((sampled - j.read.ios as f64).abs() <= 1.0 + j.read.ios as f64 * 0.002, "{sampled} vs {}", j.read.ios);
        let bw = &j.bw_samples[0];
        assert!((bw.mean - want * 4.0).abs() / (want * 4.0) < 0.01, "{}: {} KiB/s", j.name, bw.mean);
        assert_eq!(j.bw_samples[1].n, 0, "no writes, no write samples");
    }
}

#[test]
fn a_per_io_log_has_a_record_per_io_and_windows_sum_to_the_totals() {
    let mut per_io = JobSpec::simple("each", RwMode::Randrw, 4096, 2, 64 * MIB);
    per_io.number_ios = Some(3_000);
    per_io.log_window_ns = Some(0);
    let mut windows = per_io.clone();
    windows.name = "avg".into();
    windows.log_window_ns = Some(MS);
    let r = run(&spec(vec![per_io.clone()])).unwrap();
    let j = &r.jobs[0];
    assert_eq!(j.log.len() as u64, j.read.ios + j.write.ios);
    let clat_sum: u64 = j.log.iter().filter(|x| x.1 == 0).map(|x| x.6).sum();
    assert_eq!(clat_sum as u128, j.read.clat.sum());
    assert!(j.log.windows(2).all(|w| w[0].0 <= w[1].0), "in completion order");
    let rw = run(&spec(vec![windows])).unwrap();
    let w = &rw.jobs[0];
    let ios: u64 = w.log.iter().map(|x| x.2 as u64).sum();
    let bytes: u64 = w.log.iter().map(|x| x.3).sum();
    assert_eq!((ios, bytes), (w.read.ios + w.write.ios, w.read.bytes + w.write.bytes));
    assert!(w.log.len() < j.log.len() / 4, "{} window lines", w.log.len());
    // Observation only: the same run, logged or not.
    let plain = run(&spec(vec![JobSpec { log_window_ns: None, ..per_io }])).unwrap();
    assert_eq!((plain.end_ns, plain.events), (r.end_ns, r.events));
    assert_eq!(plain.jobs[0].read.clat.mean, j.read.clat.mean);
}

#[test]
fn the_thread_cpu_time_is_the_sampled_overheads() {
    let mut job = JobSpec::simple("j", RwMode::Randread, 4096, 1, 64 * MIB);
    job.number_ios = Some(2_000);
    let r = run(&spec(vec![job.clone()])).unwrap();
    let per_io = r.jobs[0].cpu_ns as f64 / r.jobs[0].issued as f64;
    assert!((per_io - 3_000.0).abs() < 150.0, "{per_io} ns per I/O");
    let mut s = spec(vec![job]);
    s.host.io_overhead_ns = 9_000;
    let r3 = run(&s).unwrap();
    assert!(r3.jobs[0].cpu_ns > 2 * r.jobs[0].cpu_ns);
}

#[test]
fn a_run_past_its_sample_limit_is_refused() {
    // Known length: refused before it runs.
    let mut s = spec(vec![paced("j", 1_000, 100)]);
    s.interval_ns = Some(MS);
    s.limits.max_samples = 50;
    let e = run(&s).unwrap_err();
    assert!(matches!(&e, SimError::Limit(m) if m.contains("101 samples") && m.contains("max_samples")), "{e}");
    // Length bounded by size: stopped when it passes the limit.
    let mut job = JobSpec::simple("j", RwMode::Randread, 4096, 1, 64 * MIB);
    job.number_ios = Some(20_000);
    let mut s = spec(vec![job]);
    s.interval_ns = Some(10_000);
    s.limits.max_samples = 100;
    let e = run(&s).unwrap_err();
    assert!(matches!(&e, SimError::Limit(m) if m.contains("passed 100 samples")), "{e}");
    s.limits.max_samples = 1_000_000;
    assert!(run(&s).unwrap().samples.len() > 100);
}

#[test]
fn a_log_past_its_record_limit_is_refused() {
    let mut job = JobSpec::simple("j", RwMode::Randread, 4096, 1, 64 * MIB);
    job.number_ios = Some(5_000);
    job.log_window_ns = Some(0);
    let mut s = spec(vec![job]);
    s.limits.max_log_records = 1_000;
    let e = run(&s).unwrap_err();
    assert!(matches!(&e, SimError::Limit(m) if m.contains("job 'j'") && m.contains("1000 records")), "{e}");
}
