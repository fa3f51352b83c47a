//! Thermal throttling: a drive that heats past its throttle point does `throttle_level` of its
//! flash work until it has cooled below the resume point, loses no data doing so, and gives
//! the same result for the same seed.

mod common;

use common::*;
use ssdlab_core::device::ssd::SsdConfig;
use ssdlab_core::target::DeviceConfig;
use ssdlab_core::device::inplace::InPlaceDrive;
use ssdlab_core::device::thermal::ThermalConfig;
use ssdlab_core::host::{Host, HostConfig};
use ssdlab_core::progress::Watch;
use ssdlab_core::sim::{simulate_with, RunOptions, Target};
use ssdlab_core::target::TargetDevice;
use ssdlab_core::workload::{JobSpec, RwMode};
use ssdlab_core::{run, SimResult, SimSpec};

const MS: u64 = 1_000_000;

/// A small, quick lump (tau = R C = 0.1 s) that settles at 120 °C at full load and at 80 °C
/// throttled to half speed, so it cycles between its throttle (100) and resume (95) points.
fn hot(level: f64) -> ThermalConfig {
    ThermalConfig {
        idle_w: 1.0,
        active_w: 9.0,
        heat_capacity_j_per_k: 0.01,
        thermal_resistance_k_per_w: 10.0,
        ambient_c: 30.0,
        start_c: None,
        throttle_c: 100.0,
        resume_c: 95.0,
        throttle_level: level,
        sample_ns: 5 * MS,
    }
}

fn seq_write_for(runtime_ns: u64) -> JobSpec {
    let mut j = JobSpec::simple("w", RwMode::Write, 128 * 1024, 32, 1 << 30);
    j.time_based = true;
    j.runtime_ns = Some(runtime_ns);
    j
}

/// (write rate, throttled share, temperature) per sample interval.
fn intervals(r: &SimResult) -> Vec<(f64, f64, f64)> {
    r.samples
        .windows(2)
        .map(|w| {
            let dt = (w[1].t_ns - w[0].t_ns) as f64;
            let (a, b) = (w[0].devices[0].internal.thermal.unwrap(), w[1].devices[0].internal.thermal.unwrap());
            (
                (w[1].write_bytes - w[0].write_bytes) as f64 / (dt * 1e-9),
                (b.throttled_ns - a.throttled_ns) as f64 / dt,
                b.temperature_c,
            )
        })
        .collect()
}

#[test]
fn a_hot_drive_writes_at_the_throttle_level_and_recovers_when_cool() {
    let mut cfg = SsdConfig::generic(1);
    cfg.thermal = Some(hot(0.5));
    let mut ssd = fresh(cfg, 3);
    let (r, audit) = run_audited(&mut ssd, HostConfig::ideal(), vec![seq_write_for(1_500 * MS)], 3, Some(10 * MS));
    // Nothing is lost to throttling: every request completed once, all bytes accounted.
    assert_eq!(audit.submits, audit.completions);
    assert_eq!(job_bytes(&r)[1], r.devices[0].internal.host_bytes_written);
    let rows = intervals(&r);
    let full: Vec<f64> = rows.iter().skip(1).filter(|x| x.1 == 0.0).map(|x| x.0).collect();
    let slow: Vec<f64> = rows.iter().filter(|x| x.1 == 1.0).map(|x| x.0).collect();
    assert!(full.len() > 5 && slow.len() > 5, "expected both states: {} full, {} throttled", full.len(), slow.len());
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let ratio = mean(&slow) / mean(&full);
    assert!((ratio - 0.5).abs() < 0.05, "throttled / full rate {ratio:.3}, expected the throttle level 0.5");
    let th = r.devices[0].internal.thermal.unwrap();
    assert!(th.throttle_events >= 3, "full load overheats and throttled load cools: it should cycle ({})", th.throttle_events);
    // Near 100 °C it heats at (120 - 100) / 0.1 s = 200 K/s: a 5 ms sample period plus the
    // work already queued at full speed overshoot by a couple of kelvin, no more.
    assert!(th.max_temperature_c < 103.0, "max {}", th.max_temperature_c);
    assert!(rows.iter().all(|x| x.2 > 30.0 && x.2 < 103.0));
}

#[test]
fn a_well_cooled_drive_never_throttles_and_keeps_full_speed() {
    let mut cool = SsdConfig::generic(1);
    cool.thermal = Some(ThermalConfig { thermal_resistance_k_per_w: 5.0, ..hot(0.5) }); // settles at 75 °C
    let mut plain = SsdConfig::generic(1);
    plain.thermal = None;
    let spec = |device: SsdConfig| {
        SimSpec::one_drive(5, HostConfig::ideal(), DeviceConfig::NandSsd(device), vec![seq_write_for(300 * MS)])
    };
    let (a, b) = (run(&spec(cool)).unwrap(), run(&spec(plain)).unwrap());
    let th = a.devices[0].internal.thermal.unwrap();
    assert_eq!(th.throttle_events, 0);
    assert!((th.temperature_c - 75.0).abs() < 1.0, "settles at ambient + P R: {}", th.temperature_c);
    assert_eq!(a.jobs[0].write.bytes, b.jobs[0].write.bytes, "the model alone changes no timing");
}

#[test]
fn in_place_media_throttles_too_and_same_seed_gives_the_same_run() {
    let mut cfg = xpoint();
    cfg.thermal = Some(hot(0.5));
    let mut spec = SimSpec::one_drive(9, HostConfig::ideal(), DeviceConfig::InPlace(cfg), vec![seq_write_for(600 * MS)]);
    spec.interval_ns = Some(10 * MS);
    let r = run(&spec).unwrap();
    let rows = intervals(&r);
    let th = r.devices[0].internal.thermal.unwrap();
    assert!(th.throttle_events >= 1 && th.throttled_ns > 0);
    let full = rows.iter().skip(1).filter(|x| x.1 == 0.0).map(|x| x.0).fold(0.0, f64::max);
    let slow = rows.iter().filter(|x| x.1 == 1.0).map(|x| x.0).fold(f64::MAX, f64::min);
    assert!(slow < 0.6 * full, "throttled {slow} vs full {full}");
    let again = run(&spec).unwrap();
    assert_eq!(serde_json::to_string(&r).unwrap(), serde_json::to_string(&again).unwrap());
}

/// Two runs back to back on one drive behind the auditing wrapper; samples every 10 ms.
fn two_runs<D: TargetDevice>(dev: &mut D) -> [SimResult; 2] {
    [1, 2].map(|seed| {
        let host = Host::new(HostConfig::ideal(), vec![seq_write_for(200 * MS)], seed).unwrap();
        let mut audit = Audit::default();
        let opts = RunOptions { interval_ns: Some(10 * MS), ..Default::default() };
        let target = Target::new("d", Audited::new(&mut *dev, &mut audit));
        let r = simulate_with(seed, host, vec![target], opts, &mut Watch::off()).expect("run");
        assert!(audit.violations.is_empty(), "{:?}", audit.violations);
        r
    })
}

#[test]
fn the_sensor_keeps_reading_when_a_drive_is_used_for_another_run() {
    // The first run's pending sensor reading is lost with its events; the drive must start
    // reading again in the next run, or its temperature would freeze there.
    let check = |[first, second]: [SimResult; 2]| {
        assert!(second.start_ns >= first.end_ns, "the clock continues");
        let temps: Vec<f64> = second.samples.iter().map(|s| s.devices[0].internal.thermal.unwrap().temperature_c).collect();
        let changes = temps.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(changes >= 10, "the temperature moved {changes} times in the second run: {temps:?}");
    };
    let mut cfg = SsdConfig::generic(1);
    cfg.thermal = Some(hot(0.5));
    check(two_runs(&mut fresh(cfg, 1)));
    let mut cfg = xpoint();
    cfg.thermal = Some(hot(0.5));
    check(two_runs(&mut InPlaceDrive::new(cfg, 1).unwrap()));
}
