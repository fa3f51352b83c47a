//! A run tells an observer how far it is, may be stopped by it, and computes the same result
//! with or without one.

use std::time::Duration;

use ssdlab_core::array::{ArrayConfig, EngineConfig, MdConfig, MemberFailure, MemberSpec, RaidLevel};
use ssdlab_core::device::ssd::{Precondition, SsdConfig};
use ssdlab_core::device::DriveConfig;
use ssdlab_core::target::DeviceConfig;
use ssdlab_core::host::HostConfig;
use ssdlab_core::progress::{Flow, Phase, Progress, Watch};
use ssdlab_core::device::ssd::Ssd;
use ssdlab_core::host::Host;
use ssdlab_core::progress::CHECK_ISSUES;
use ssdlab_core::sim::{run_json_observed, run_watched, simulate_with, RunOptions, Target, Until};
use ssdlab_core::target::TargetSpec;
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{run, run_json, run_observed, SimError, SimSpec};

const MIB: u64 = 1 << 20;

/// A small drive preconditioned with random overwrites, a mixed job, a time series: every
/// random stream of the model in use.
fn spec() -> SimSpec {
    let mut drive = SsdConfig::generic(1);
    drive.controller.busy_cv = 0.5;
    let target = TargetSpec { filesystem: None,
        name: "sda".into(),
        device: DeviceConfig::NandSsd(drive),
        precondition: Precondition::Random { passes: 1.0 },
        scheduler: Default::default(),
        queue: Default::default(),
    };
    let mut job = JobSpec::simple("j", RwMode::Randrw, 4096, 16, 512 * MIB);
    job.number_ios = Some(200_000);
    SimSpec { file_sets: Vec::new(), network: None,
        seed: 7,
        host: HostConfig::ideal(),
        targets: vec![target],
        jobs: vec![job],
        interval_ns: Some(5_000_000),
        until: Until::JobsDone,
        limits: Default::default(),
    }
}

/// Every progress report of a run of `spec`, the observer told at every check point.
fn reports(spec: &SimSpec) -> (Vec<Progress>, ssdlab_core::SimResult) {
    let mut seen = Vec::new();
    let mut keep = |p: &Progress| {
        seen.push(p.clone());
        Flow::Continue
    };
    let r = run_watched(spec, &mut Watch::new(&mut keep).every(Duration::ZERO)).unwrap();
    (seen, r)
}

fn assert_monotone(seen: &[Progress]) {
    for w in seen.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(a.phase <= b.phase, "phase went back: {a:?} then {b:?}");
        if a.phase != b.phase {
            continue;
        }
        match (&a.precondition, &b.precondition) {
            (Some(pa), Some(pb)) if pa.device == pb.device => {
                assert!(pa.fill <= pb.fill && pa.passes_done <= pb.passes_done, "{pa:?} then {pb:?}");
                assert!(a.fraction <= b.fraction);
            }
            (Some(_), Some(_)) => {}
            _ => {
                assert!(a.now_ns <= b.now_ns && a.requests <= b.requests && a.bytes <= b.bytes && a.events <= b.events, "{a:?} then {b:?}");
                assert_eq!(a.start_ns, b.start_ns);
                if a.phase == Phase::Run {
                    assert!(a.fraction <= b.fraction, "{a:?} then {b:?}");
                }
            }
        }
    }
}

#[test]
fn the_observer_hears_a_monotone_progress_through_preconditioning_and_run() {
    let (seen, r) = reports(&spec());
    assert_monotone(&seen);
    let pre: Vec<_> = seen.iter().filter(|p| p.phase == Phase::Precondition).collect();
    let run_: Vec<_> = seen.iter().filter(|p| p.phase == Phase::Run).collect();
    assert!(pre.len() >= 3, "{} precondition reports", pre.len());
    assert!(run_.len() >= 10, "{} run reports", run_.len());
    let first = pre[0].precondition.as_ref().unwrap();
    assert_eq!((first.device.as_str(), first.fill, first.passes_done, first.passes), ("sda", 0.0, 0.0, 1.0));
    let last = pre.last().unwrap().precondition.as_ref().unwrap();
    assert!(last.fill == 1.0 && last.passes_done > 0.5, "{last:?}");
    // The run's reports end with what the result says.
    let end = run_.last().unwrap();
    let ios: u64 = r.jobs.iter().map(|j| j.read.ios + j.write.ios).sum();
    let bytes: u64 = r.jobs.iter().map(|j| j.read.bytes + j.write.bytes).sum();
    assert_eq!((end.requests, end.bytes, end.now_ns), (ios, bytes, r.end_ns));
    assert_eq!(end.planned_bytes, Some(512 * MIB));
    assert!(run_.iter().any(|p| p.requests > 0 && p.requests < ios), "reports during the run");
    assert_eq!(seen.last().unwrap().phase, Phase::Drain);
}

#[test]
fn a_timed_run_knows_its_end_and_reaches_it() {
    let mut s = spec();
    s.targets[0].precondition = Precondition::None;
    s.jobs[0].number_ios = None;
    s.jobs[0].time_based = true;
    s.jobs[0].runtime_ns = Some(200_000_000);
    let (seen, _) = reports(&s);
    assert_monotone(&seen);
    let run_: Vec<_> = seen.iter().filter(|p| p.phase == Phase::Run).collect();
    assert!(run_.iter().all(|p| p.end_ns == Some(200_000_000) && p.planned_bytes.is_none()));
    assert!(run_.iter().any(|p| p.fraction.is_some_and(|f| f > 0.1 && f < 0.9)));
    assert_eq!(run_.last().unwrap().fraction, Some(1.0));
}

#[test]
fn a_rebuild_run_reports_the_rebuild_bytes() {
    let member = |name: &str| MemberSpec {
        name: name.into(),
        device: DriveConfig::NandSsd(SsdConfig::generic(1)),
        precondition: Precondition::Sequential,
        scheduler: Default::default(),
        queue: Default::default(),
    };
    let a = ArrayConfig {
        level: RaidLevel::Raid1,
        chunk_bytes: 64 << 10,
        engine: EngineConfig::Md(MdConfig::default()),
        members: vec![member("sda"), member("sdb")],
        failures: vec![MemberFailure { member: "sdb".into(), at_ns: 0 }],
        spares: vec![member("sdz")],
        rebuild_limit_bytes: None,
        verify_data: false,
    };
    let mut s = spec();
    s.targets[0] = TargetSpec { filesystem: None,
        name: "md0".into(),
        device: DeviceConfig::Array(a),
        precondition: Precondition::None,
        scheduler: Default::default(),
        queue: Default::default(),
    };
    s.jobs.clear();
    s.until = Until::RebuildDone;
    let (seen, _) = reports(&s);
    assert_monotone(&seen);
    let devices: Vec<_> = seen.iter().filter_map(|p| p.precondition.as_ref()).map(|p| p.device.as_str()).collect();
    assert!(devices.contains(&"md0/sda") && devices.contains(&"md0/sdz"), "{devices:?}");
    let run_: Vec<_> = seen.iter().filter(|p| p.phase == Phase::Run).collect();
    assert!(run_.iter().any(|p| p.fraction.is_some_and(|f| f > 0.0 && f < 1.0)));
    let (done, of) = run_.last().unwrap().rebuild_bytes.unwrap();
    assert!(done == of && of > 0);
    assert_eq!(run_.last().unwrap().fraction, Some(1.0));
}

#[test]
fn stop_ends_the_run_with_interrupted_in_either_phase() {
    for phase in [Phase::Precondition, Phase::Run] {
        let mut calls = 0;
        let mut stop = |p: &Progress| {
            if p.phase != phase {
                return Flow::Continue;
            }
            calls += 1;
            if calls == 3 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        };
        let r = run_watched(&spec(), &mut Watch::new(&mut stop).every(Duration::ZERO));
        assert!(matches!(r, Err(SimError::Interrupted)), "{phase:?}: {:?}", r.map(|r| r.end_ns));
        assert_eq!(calls, 3, "{phase:?}: no call after the stop");
    }
    let mut stop_at_once = |_: &Progress| Flow::Stop;
    let text = serde_json::to_string(&spec()).unwrap();
    assert!(matches!(run_json_observed(&text, &mut stop_at_once), Err(SimError::Interrupted)));
    assert!(matches!(run_observed(&spec(), &mut stop_at_once), Err(SimError::Interrupted)));
}

#[test]
fn the_result_is_the_same_with_and_without_an_observer() {
    let text = serde_json::to_string(&spec()).unwrap();
    let plain = run_json(&text).unwrap();
    let mut count = 0u64;
    let mut watch = |_: &Progress| {
        count += 1;
        Flow::Continue
    };
    let watched = run_json_observed(&text, &mut watch).unwrap();
    assert_eq!(plain, watched);
    let (seen, r) = reports(&spec());
    assert!(seen.len() > 10);
    assert_eq!(serde_json::to_string(&r).unwrap(), serde_json::to_string(&run(&spec()).unwrap()).unwrap());
    assert_eq!(serde_json::to_string(&r).unwrap(), plain);
}

/// A job whose queue is deeper than a pause's worth of I/Os: its start is one long event.
fn deep_queue() -> SimSpec {
    let mut s = spec();
    s.targets[0].precondition = Precondition::None;
    s.interval_ns = None;
    s.jobs[0] = JobSpec::simple("deep", RwMode::Randread, 4096, 4 * CHECK_ISSUES, 512 * MIB);
    s.jobs[0].number_ios = Some(4 * CHECK_ISSUES);
    s
}

#[test]
fn a_stop_is_heard_while_a_job_fills_a_deep_queue() {
    let mut seen = Vec::new();
    let mut stop_second = |p: &Progress| {
        seen.push(p.clone());
        if seen.len() == 2 {
            Flow::Stop
        } else {
            Flow::Continue
        }
    };
    let r = run_watched(&deep_queue(), &mut Watch::new(&mut stop_second).every(Duration::ZERO));
    assert!(matches!(r, Err(SimError::Interrupted)), "{:?}", r.map(|r| r.end_ns));
    // Told (and stopped) inside the job's first event, not CHECK_EVENTS events later.
    let p = &seen[1];
    assert_eq!(p.phase, Phase::Run);
    assert!(p.events <= 2 && p.requests == 0, "{p:?}");
}

/// A run of `jobs` on a small drive, its jobs pausing every `pause` I/Os of one event.
fn paused_every(jobs: &[JobSpec], pause: u64) -> String {
    let host_cfg = HostConfig { io_overhead_ns: 3_000, io_overhead_cv: 0.5, ..HostConfig::ideal() };
    let mut host = Host::new(host_cfg, jobs.to_vec(), 3).unwrap();
    host.set_pause_every(pause);
    let target = Target::new("sda", Ssd::new(SsdConfig::generic(1), 3).unwrap());
    let r = simulate_with(3, host, vec![target], RunOptions::default(), &mut Watch::off()).unwrap();
    serde_json::to_string(&r).unwrap()
}

#[test]
fn where_a_job_pauses_changes_nothing() {
    // Drawn per-I/O host times, a batched submit (a plug open across a pause), a plain deep
    // queue and a null engine.
    let mut batched = JobSpec::simple("batched", RwMode::Randrw, 4096, 300, 64 * MIB);
    batched.iodepth_batch_submit = 16;
    batched.number_ios = Some(3_000);
    let mut plain = JobSpec::simple("plain", RwMode::Randwrite, 8192, 500, 64 * MIB);
    plain.number_ios = Some(3_000);
    let mut null = JobSpec::simple("null", RwMode::Randread, 4096, 700, 64 * MIB);
    null.null_engine = true;
    null.number_ios = Some(3_000);
    let jobs = [batched, plain, null];
    let whole = paused_every(&jobs, u64::MAX);
    for pause in [1, 7, 100, CHECK_ISSUES] {
        assert!(paused_every(&jobs, pause) == whole, "pausing every {pause} I/Os changed the result");
    }
}
