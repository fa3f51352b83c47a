//! Invariants of whole runs over randomly generated drives, hosts and job mixes.
//!
//! Every property builds a small drive (`SsdConfig::generic(1)` with random tweaks), runs a
//! random set of fio-like jobs behind an auditing device wrapper (see `common`), and checks a
//! conservation law. Case counts are kept modest so the file runs in a few seconds with
//! `cargo test --release`.

mod common;

use common::*;
use proptest::prelude::*;
use ssdlab_core::device::ssd::{HostInterface, Precondition, SsdConfig};
use ssdlab_core::device::{BlockDevice, DeviceCtx};
use ssdlab_core::target::TargetDevice;
use ssdlab_core::target::DeviceConfig;
use ssdlab_core::report::{DeviceKind, DeviceReport};
use ssdlab_core::io::DeviceRequest;
use ssdlab_core::engine::Time;
use ssdlab_core::host::{Host, HostConfig};
use ssdlab_core::sim::{simulate, Target};
use ssdlab_core::target::TargetSpec;
use ssdlab_core::workload::{BlockSizeDist, DistKind, Distribution, JobSpec, RateProcess, RwMode, Zone};
use ssdlab_core::{run, SimSpec};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

// ---- generators ------------------------------------------------------------------------

fn arb_drive() -> impl Strategy<Value = SsdConfig> {
    (
        // Buffers of one program unit (32 KiB) deadlock (see `bug_write_buffer_deadlock`),
        // so the random drives use write-through or buffers far above the largest write.
        prop_oneof![Just(0u64), Just(MIB), Just(64 * MIB)],
        prop_oneof![Just(4 * KIB), Just(8 * KIB), Just(16 * KIB)],
        prop_oneof![Just(1u32), Just(2), Just(32), Just(1024)],
        1u32..=4,
        prop_oneof![Just(0.0f64), Just(0.7)],
        any::<bool>(),
    )
        .prop_map(|(buffer, iu, qd, cores, busy_cv, sata)| {
            let mut cfg = SsdConfig::generic(1);
            cfg.write_buffer_bytes = buffer;
            cfg.ftl.iu_bytes = iu;
            cfg.queue_depth = qd;
            cfg.controller.cores = cores;
            cfg.controller.busy_cv = busy_cv;
            if sata {
                // Half duplex: reads and writes share one link.
                cfg.interface = HostInterface::Sata { gbit_per_s: 6.0, efficiency: 0.9 };
            }
            cfg
        })
}

fn arb_host() -> impl Strategy<Value = HostConfig> {
    (
        prop_oneof![Just(0u64), 1_000u64..30_000],
        prop_oneof![Just(0.0f64), Just(0.5)],
        prop_oneof![Just(100u32), Just(250), Just(1000)],
    )
        .prop_map(|(overhead, cv, hz)| host_with_overhead(overhead, cv, hz))
}

fn arb_rw() -> impl Strategy<Value = RwMode> {
    prop_oneof![
        Just(RwMode::Read),
        Just(RwMode::Write),
        Just(RwMode::Trim),
        Just(RwMode::Randread),
        Just(RwMode::Randwrite),
        Just(RwMode::Randtrim),
        Just(RwMode::Rw),
        Just(RwMode::Randrw),
        Just(RwMode::Trimwrite),
        Just(RwMode::Randtrimwrite),
    ]
}

/// A block size distribution: fixed, a bssplit of up to three sizes, or a range; all sizes
/// are multiples of 512 so that sector counts are exact.
fn arb_bs() -> impl Strategy<Value = BlockSizeDist> {
    let size = prop_oneof![Just(512u64), Just(4 * KIB), Just(8 * KIB), Just(12 * KIB), Just(64 * KIB), Just(128 * KIB)];
    prop_oneof![
        size.clone().prop_map(BlockSizeDist::fixed),
        proptest::collection::vec((size, 0.0f64..100.0), 1..=3).prop_map(|mut split| {
            split[0].1 += 1.0; // at least one positive weight
            BlockSizeDist { split, range_min: None, range_max: None }
        }),
        (1u64..=4, 1u64..=8).prop_map(|(min, k)| BlockSizeDist {
            split: vec![],
            range_min: Some(min * 4 * KIB),
            range_max: Some(min * k * 4 * KIB),
        }),
    ]
}

fn arb_distribution() -> impl Strategy<Value = Distribution> {
    prop_oneof![
        3 => Just(Distribution::default()),
        1 => Just(Distribution { kind: DistKind::Zipf, param: 1.2, zones: vec![] }),
        1 => Just(Distribution { kind: DistKind::Pareto, param: 0.2, zones: vec![] }),
        1 => Just(Distribution { kind: DistKind::Normal, param: 10.0, zones: vec![] }),
        1 => Just(Distribution {
            kind: DistKind::Zoned,
            param: 0.0,
            zones: vec![Zone { access_pct: 80.0, size_pct: 20.0 }, Zone { access_pct: 20.0, size_pct: 80.0 }],
        }),
    ]
}

/// How a job ends.
#[derive(Clone, Debug)]
enum Stop {
    Bytes(u64),
    Ios(u64),
    /// time_based with this runtime (ns).
    Time(u64),
}

fn arb_stop() -> impl Strategy<Value = Stop> {
    prop_oneof![
        (64u64..4096).prop_map(|k| Stop::Bytes(k * KIB)),
        (1u64..1000).prop_map(Stop::Ios),
        (200u64..2_000).prop_map(|us| Stop::Time(us * 1_000)),
    ]
}

/// One random job; `ramp` decides whether a ramp time may be drawn.
fn arb_job(ramp: bool) -> impl Strategy<Value = JobSpec> {
    let capacity = 1u64 << 30;
    (
        (arb_rw(), arb_bs(), arb_bs(), arb_bs(), prop_oneof![Just(512u64), Just(4 * KIB)]),
        (1u64..=32, 0u64..(capacity / MIB - 64), 1u64..=64, arb_stop()),
        (0.0f64..=100.0, 0i64..4, prop_oneof![Just(0u64), 1_000u64..50_000], 1u64..4),
        (prop_oneof![3 => Just(0u64), 1 => 5_000u64..200_000], prop_oneof![Just(0u64), 1u64..16], any::<bool>()),
        (arb_distribution(), any::<bool>(), any::<u64>(), 0u64..100_000),
        if ramp { prop_oneof![Just(0u64), 10_000u64..300_000].boxed() } else { Just(0u64).boxed() },
    )
        .prop_map(
            move |(
                (rw, bs_r, bs_w, bs_t, align),
                (iodepth, off_mib, size_mib, stop),
                (mix, modifier, think, think_blocks),
                (rate_iops, fsync, poisson),
                (distribution, random_map, seed, delay),
                ramp_ns,
            )| {
                let region = size_mib * MIB;
                let mut j = JobSpec::simple("j", rw, 4 * KIB, iodepth, region);
                j.block_sizes = [bs_r, bs_w, bs_t];
                j.block_align = [align; 3];
                j.region_offset = off_mib * MIB;
                j.rwmix_read = mix;
                // `:N` for random modes means "new offset every N"; for sequential ones a gap.
                j.rw_modifier = if rw.is_random() { modifier } else { modifier * 4096 };
                j.thinktime_ns = think;
                j.thinktime_blocks = think_blocks;
                j.rate_iops = [rate_iops, rate_iops / 2, 0];
                j.rate_process = if poisson { RateProcess::Poisson } else { RateProcess::Linear };
                j.fsync_every = fsync;
                j.distribution = distribution;
                j.random_map = random_map;
                j.seed = seed;
                j.start_delay_ns = delay;
                j.ramp_time_ns = ramp_ns;
                match stop {
                    Stop::Bytes(b) => j.io_limit = b,
                    Stop::Ios(n) => j.number_ios = Some(n),
                    Stop::Time(t) => {
                        j.time_based = true;
                        j.runtime_ns = Some(t);
                    }
                }
                j
            },
        )
}

/// One to three jobs; later jobs may wait for earlier ones (`start_after`).
fn arb_jobs(ramp: bool) -> impl Strategy<Value = Vec<JobSpec>> {
    (proptest::collection::vec(arb_job(ramp), 1..=3), any::<u8>()).prop_map(|(mut jobs, deps)| {
        for (k, job) in jobs.iter_mut().enumerate().skip(1) {
            for d in 0..k {
                if deps >> (k * 2 + d) & 1 == 1 {
                    job.start_after.push(d as u32);
                }
            }
            job.name = format!("j{k}");
        }
        jobs
    })
}

fn arb_precondition() -> impl Strategy<Value = Precondition> {
    prop_oneof![
        Just(Precondition::None),
        Just(Precondition::Sequential),
        Just(Precondition::Random { passes: 0.3 }),
    ]
}

#[derive(Clone, Debug)]
struct Scenario {
    drive: SsdConfig,
    host: HostConfig,
    jobs: Vec<JobSpec>,
    pre: Precondition,
    seed: u64,
}

fn arb_scenario(ramp: bool) -> impl Strategy<Value = Scenario> {
    (arb_drive(), arb_host(), arb_jobs(ramp), arb_precondition(), any::<u64>())
        .prop_map(|(drive, host, jobs, pre, seed)| Scenario { drive, host, jobs, pre, seed })
}

fn run_scenario(s: &Scenario) -> (ssdlab_core::SimResult, Audit) {
    let mut ssd = preconditioned(s.drive.clone(), s.pre, s.seed);
    let out = run_audited(&mut ssd, s.host.clone(), s.jobs.clone(), s.seed, None);
    ssd.ftl().check_invariants().expect("FTL books after the run");
    out
}

fn config(cases: u32) -> ProptestConfig {
    proptest_config(cases)
}

// ---- properties ------------------------------------------------------------------------

proptest! {
    #![proptest_config(config(512))]

    /// Every request the host submits is completed exactly once, asynchronously, under a tag
    /// not reused while in flight; each job completes what it issued and ends after it began.
    #[test]
    fn every_request_completes_exactly_once(s in arb_scenario(true)) {
        let (r, a) = run_scenario(&s);
        prop_assert!(a.violations.is_empty(), "violations: {:?}", a.violations);
        prop_assert_eq!(a.submits, a.completions);
        let issued: u64 = r.jobs.iter().map(|j| j.issued).sum();
        prop_assert_eq!(issued, a.submits, "every issued request reaches the device");
        for j in &r.jobs {
            prop_assert_eq!(j.issued, j.completed, "job {} issued {} completed {}", j.name, j.issued, j.completed);
            prop_assert!(j.start_ns <= j.measure_start_ns.min(j.end_ns));
            prop_assert!(j.end_ns <= r.end_ns);
        }
        let d = &r.devices[0].disk;
        prop_assert_eq!(d.in_flight, 0);
        prop_assert_eq!(d.read_ios + d.write_ios + d.discard_ios + d.flush_ios, a.completions);
        for (op, ios) in [(0, d.read_ios), (1, d.write_ios), (2, d.discard_ios), (3, d.flush_ios)] {
            prop_assert_eq!(a.completed[op].0, ios, "op {}", op);
        }
    }

    /// Bytes are conserved through every layer: the jobs' measured bytes (no ramp, so every
    /// byte is measured) equal the block layer's sectors × 512 and the device's host bytes.
    #[test]
    fn bytes_are_conserved_through_every_layer(s in arb_scenario(false)) {
        let (r, a) = run_scenario(&s);
        prop_assert!(a.violations.is_empty(), "violations: {:?}", a.violations);
        let jb = job_bytes(&r);
        let d = &r.devices[0].disk;
        let i = &r.devices[0].internal;
        prop_assert_eq!(jb[0], d.read_sectors * 512, "read: jobs vs diskstats");
        prop_assert_eq!(jb[1], d.write_sectors * 512, "write: jobs vs diskstats");
        prop_assert_eq!(jb[2], d.discard_sectors * 512, "trim: jobs vs diskstats");
        prop_assert_eq!(jb[0], a.completed[0].1, "read: jobs vs device boundary");
        prop_assert_eq!(jb[1], a.completed[1].1, "write: jobs vs device boundary");
        prop_assert_eq!(jb[2], a.completed[2].1, "trim: jobs vs device boundary");
        prop_assert_eq!(jb[0], i.host_bytes_read, "read: jobs vs device report");
        prop_assert_eq!(jb[1], i.host_bytes_written, "write: jobs vs device report");
        // Host data is still in the write buffer, was merged into an IU waiting there, or was
        // placed on NAND (IU-rounded, padded to program units): together they cover it.
        let merged = i.nand().buffer_merges * s.drive.ftl.iu_bytes;
        prop_assert!(i.media_bytes_written + i.nand().write_buffer_bytes_used + merged >= i.host_bytes_written,
            "nand {} + buffered {} + merged {} < host {}", i.media_bytes_written, i.nand().write_buffer_bytes_used, merged,
            i.host_bytes_written);
    }

    /// Little's law on the block layer's queue: the exact in-flight integral equals the sum of
    /// the requests' times in the block layer (fio's clat, all measured when there is no
    /// ramp); /proc/diskstats' time_in_queue is that sum floored to ms; and the mean queue
    /// length equals throughput × mean latency. fio's clat ends when the job's thread reaps
    /// the completion: later than the block layer's completion when the thread is busy with
    /// the job's other I/Os (host time and iodepth above 1); then the area is at most Σclat.
    #[test]
    fn littles_law_on_the_reported_queue(s in arb_scenario(false)) {
        let (r, a) = run_scenario(&s);
        let d = &r.devices[0].disk;
        let area = d.in_flight_area_ns;
        let clat_sum = job_clat_sum(&r);
        let tol = 1e-9 * clat_sum.max(1.0) + 1.0;
        if s.host.io_overhead_ns > 0 && s.jobs.iter().any(|j| j.iodepth > 1) {
            prop_assert!(area as f64 <= clat_sum + tol, "area {} vs Σclat {}", area, clat_sum);
            prop_assert_eq!(d.time_in_queue_ms as u128, area / 1_000_000);
            prop_assert!(a.latency_sum_ns <= area);
            return Ok(());
        }
        prop_assert!((area as f64 - clat_sum).abs() <= tol, "area {} vs Σclat {}", area, clat_sum);
        prop_assert_eq!(d.time_in_queue_ms as u128, area / 1_000_000);
        // The device-side sum leaves out time in the software queue, so it can only be smaller.
        prop_assert!(a.latency_sum_ns <= area, "device latency {} > block-layer area {}", a.latency_sum_ns, area);
        if s.drive.queue_depth >= 1024 {
            prop_assert_eq!(a.latency_sum_ns, area, "no software queueing with a deep device queue");
        }
        let ios = job_ios(&r);
        if ios > 0 && r.end_ns > r.start_ns {
            let elapsed = (r.end_ns - r.start_ns) as f64;
            let l = area as f64 / elapsed;
            let lambda = ios as f64 / elapsed;
            let w = clat_sum / ios as f64;
            prop_assert!((l - lambda * w).abs() <= 1e-9 * l.max(1e-12) + 1e-12, "L {} vs λW {}", l, lambda * w);
        }
        // Per-direction ticks are the per-direction clat sums floored to ms.
        let per_dir = |f: fn(&ssdlab_core::metrics::JobStats) -> f64| r.jobs.iter().map(f).sum::<f64>();
        let rd = per_dir(|j| j.read.clat.sum() as f64);
        prop_assert!((d.read_ticks_ms as f64 - (rd / 1e6).floor()).abs() <= 1.0, "read ticks {} vs {}", d.read_ticks_ms, rd / 1e6);
        let wr = per_dir(|j| j.write.clat.sum() as f64);
        prop_assert!((d.write_ticks_ms as f64 - (wr / 1e6).floor()).abs() <= 1.0, "write ticks {} vs {}", d.write_ticks_ms, wr / 1e6);
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// A drive used for a second run continues where the first left it: its clock goes on,
    /// the work it had under way (buffered programs, GC owed) was finished in between, and
    /// the second run completes every request as the first did.
    #[test]
    fn a_drive_carries_its_state_into_the_next_run(s in arb_scenario(false)) {
        let mut ssd = preconditioned(s.drive.clone(), s.pre, s.seed);
        let (first, a1) = run_audited(&mut ssd, s.host.clone(), s.jobs.clone(), s.seed, None);
        prop_assert!(!ssd.has_internal_work(), "work left under way after the first run");
        let i = ssd.internal_report(first.drained_ns);
        prop_assert_eq!(i.nand().write_buffer_bytes_used, i.nand().write_buffer_unplaced_bytes, "programs still in flight");
        let (second, a2) = run_audited(&mut ssd, s.host.clone(), s.jobs.clone(), s.seed + 1, None);
        ssd.ftl().check_invariants().expect("FTL books after two runs");
        prop_assert!(second.start_ns >= first.end_ns);
        for a in [&a1, &a2] {
            prop_assert!(a.violations.is_empty(), "violations: {:?}", a.violations);
            prop_assert_eq!(a.submits, a.completions);
        }
        for j in &second.jobs {
            prop_assert_eq!(j.issued, j.completed);
            prop_assert!(second.start_ns <= j.start_ns && j.end_ns <= second.end_ns);
        }
        prop_assert_eq!(second.devices[0].internal.host_bytes_written,
            first.devices[0].internal.host_bytes_written + job_bytes(&second)[1], "device counters carry over");
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// The same drive, host, jobs and seed give byte-identical JSON results (time series
    /// included). Run behind the auditing wrapper so that a hang fails instead of sampling
    /// forever.
    #[test]
    fn same_spec_same_result(s in arb_scenario(true)) {
        let once = || {
            let mut ssd = preconditioned(s.drive.clone(), s.pre, s.seed);
            let (r, _) = run_audited(&mut ssd, s.host.clone(), s.jobs.clone(), s.seed, Some(250_000));
            serde_json::to_string(&r).unwrap()
        };
        let (a, b) = (once(), once());
        prop_assert!(a == b, "two runs of one spec differ");
    }
}

/// A fresh NAND target named `dev0` in the state `pre` leaves it.
fn target(cfg: SsdConfig, pre: Precondition) -> TargetSpec {
    TargetSpec { filesystem: None, name: "dev0".into(), device: DeviceConfig::NandSsd(cfg), precondition: pre, scheduler: Default::default(), queue: Default::default() }
}

/// `ssdlab_core::run` (the public entry point) is deterministic too, for a mixed workload.
#[test]
fn run_is_deterministic() {
    let mut a = JobSpec::simple("a", RwMode::Randrw, 4 * KIB, 16, 256 * MIB);
    a.io_limit = 8 * MIB;
    a.fsync_every = 8;
    let mut b = JobSpec::simple("b", RwMode::Randtrimwrite, 8 * KIB, 4, 64 * MIB);
    b.region_offset = 512 * MIB;
    b.number_ios = Some(500);
    b.start_after = vec![0];
    let spec = SimSpec { file_sets: Vec::new(), network: None,
        seed: 3,
        host: host_with_overhead(8_000, 0.5, 250),
        targets: vec![target(SsdConfig::generic(1), Precondition::Random { passes: 0.5 })],
        jobs: vec![a, b],
        interval_ns: Some(1_000_000),
    until: Default::default(),
    limits: Default::default(),
    };
    let json = || serde_json::to_string(&run(&spec).unwrap()).unwrap();
    assert_eq!(json(), json());
}

/// A random workload with a different seed gives a different result. The master seed drives
/// the host's sampled overheads and preconditioning; each job's offsets come from its own
/// `seed` (the Python layer applies randrepeat/randseed), so both are varied here.
#[test]
fn different_seed_different_result_for_random_workloads() {
    let mut job = JobSpec::simple("r", RwMode::Randrw, 4 * KIB, 8, 256 * MIB);
    job.io_limit = 8 * MIB;
    let spec = |seed: u64, job_seed: u64, cv: f64| {
        let mut j = job.clone();
        j.seed = job_seed;
        SimSpec { file_sets: Vec::new(), network: None,
            seed,
            host: host_with_overhead(10_000, cv, 250),
            targets: vec![target(SsdConfig::generic(1), Precondition::Random { passes: 0.2 })],
            jobs: vec![j],
            interval_ns: None,
        until: Default::default(),
        limits: Default::default(),
        }
    };
    let json = |s: &SimSpec| serde_json::to_string(&run(s).unwrap()).unwrap();
    let base = json(&spec(1, 1, 0.5));
    assert_eq!(base, json(&spec(1, 1, 0.5)));
    assert_ne!(base, json(&spec(2, 1, 0.5)), "master seed (host overhead, precondition) must matter");
    assert_ne!(base, json(&spec(1, 2, 0.5)), "job seed (offsets) must matter");
    // Constant overhead and no random preconditioning: only the job seed is random.
    let mut a = spec(1, 1, 0.0);
    a.targets[0].precondition = Precondition::Sequential;
    let mut b = a.clone();
    b.jobs[0].seed = 9;
    assert_ne!(json(&a), json(&b));
}

/// A sequential workload with no sampled randomness does not depend on the seed at all
/// (apart from the seed echoed in the result).
#[test]
fn sequential_workload_ignores_the_seed() {
    let mut job = JobSpec::simple("s", RwMode::Write, 128 * KIB, 4, 64 * MIB);
    job.io_limit = 16 * MIB;
    let spec = |seed| SimSpec { file_sets: Vec::new(), network: None,
        seed,
        host: host_with_overhead(5_000, 0.0, 250),
        targets: vec![target(SsdConfig::generic(1), Precondition::Sequential)],
        jobs: vec![job.clone()],
        interval_ns: None,
    until: Default::default(),
    limits: Default::default(),
    };
    let mut a = run(&spec(1)).unwrap();
    let b = run(&spec(2)).unwrap();
    a.seed = b.seed;
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}

// ---- iostat %util ----------------------------------------------------------------------

proptest! {
    #![proptest_config(config(128))]

    /// At QD1 with a fixed host overhead, iostat's %util (io_ticks / elapsed) is the share of
    /// time the device held a request, to jiffy resolution.
    ///
    /// Exact part: io_ticks equals the kernel's rule applied to the busy periods the device
    /// saw (the jiffy boundaries that fall inside a period), whatever the workload.
    ///
    /// Approximate part: each period's error is under one jiffy, and when the phase of the
    /// periods against the tick is spread (zero-mean error, variance ≤ jiffy²/4) the sum errs
    /// by O(√periods) jiffies; 4 standard deviations plus one jiffy are allowed. The phase is
    /// spread only if the cycle (service + fixed overhead) varies: a mix of reads and writes,
    /// or controller-time jitter. With every time constant, the cycle is strictly periodic
    /// and can alias against the tick — a measured case: 4 KiB write-through writes with a
    /// 51 µs overhead at HZ=1000 cycle every ~0.8 ms (5 cycles ≈ 4 jiffies) and the tick
    /// almost never lands in an idle gap: %util 99.96 % against a busy share of 93.6 %. Real
    /// iostat does the same, so only the exact part is asserted for such workloads.
    #[test]
    fn iostat_util_matches_device_busy_share(
        overhead_us in 5u64..60,
        hz in prop_oneof![Just(100u32), Just(250), Just(1000)],
        rw in prop_oneof![Just(RwMode::Randread), Just(RwMode::Randwrite), Just(RwMode::Read), Just(RwMode::Randrw)],
        controller_cv in prop_oneof![Just(0.0f64), Just(0.3)],
        buffer in prop_oneof![Just(0u64), Just(64 * MIB)],
        ios in 500u64..3_000,
    ) {
        let mut cfg = SsdConfig::generic(1);
        cfg.write_buffer_bytes = buffer;
        cfg.controller.busy_cv = controller_cv;
        let mut ssd = preconditioned(cfg, Precondition::Sequential, 1);
        let mut job = JobSpec::simple("qd1", rw, 4 * KIB, 1, 1 << 30);
        job.number_ios = Some(ios);
        let host = host_with_overhead(overhead_us * 1_000, 0.0, hz);
        let (r, a) = run_audited(&mut ssd, host, vec![job], 3, None);
        prop_assert!(a.violations.is_empty());
        let d = &r.devices[0].disk;
        let jiffy = 1_000_000_000 / hz as u64;
        let io_ticks_ns = d.io_ticks_ms * 1_000_000;
        prop_assert_eq!(io_ticks_ns, a.busy_jiffies(jiffy) * jiffy, "io_ticks vs kernel rule on device busy periods");
        let elapsed = r.end_ns as f64;
        let util = io_ticks_ns as f64 / elapsed;
        let busy = a.busy_ns() as f64 / elapsed;
        let periods = a.busy.len() as f64;
        prop_assert!(periods as u64 == ios, "QD1: one busy period per request");
        // The host overhead is what keeps the drive idle: busy share < 1.
        prop_assert!(busy < 1.0);
        let phase_spread = rw == RwMode::Randrw || controller_cv > 0.0;
        if phase_spread {
            let bound = (4.0 * periods.sqrt() / 2.0 + 1.0) * jiffy as f64 / elapsed;
            prop_assert!((util - busy).abs() <= bound,
                "util {:.4} vs busy share {:.4} (bound {:.4}, hz {}, {} periods)", util, busy, bound, hz, periods);
        }
    }
}

/// The scenario generator reaches the paths the properties are about: every direction,
/// flushes, read-modify-write, GC, buffer read hits, dependent jobs and ramp.
#[test]
fn scenario_generator_covers_the_interesting_paths() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = arb_scenario(true);
    let mut seen = std::collections::BTreeMap::<&str, u64>::new();
    for _ in 0..96 {
        let s = strategy.new_tree(&mut runner).unwrap().current();
        let (r, a) = run_scenario(&s);
        let i = &r.devices[0].internal;
        for (k, v) in [
            ("reads", a.completed[0].0),
            ("writes", a.completed[1].0),
            ("trims", a.completed[2].0),
            ("flushes", a.completed[3].0),
            ("rmw_reads", i.nand().rmw_reads),
            ("gc_runs", i.nand().gc_runs),
            ("buffer_read_hits", i.nand().buffer_read_hits),
            ("dependent_jobs", s.jobs.iter().filter(|j| !j.start_after.is_empty()).count() as u64),
            ("ramped_jobs", s.jobs.iter().filter(|j| j.ramp_time_ns > 0).count() as u64),
            ("requests", a.submits),
        ] {
            *seen.entry(k).or_default() += v;
        }
    }
    eprintln!("generator coverage over 96 scenarios: {seen:?}");
    for (k, v) in &seen {
        assert!(*v > 0, "no scenario exercised {k}");
    }
}

// ---- regressions ---------------------------------------------------------------------

/// A write-back buffer holding a partial program unit while the next write does not fit must
/// send the partial unit (`admit_writes`), or the write waits for space nothing will free.
#[test]
fn partial_unit_and_full_buffer_do_not_deadlock() {
    let mut cfg = SsdConfig::generic(1);
    cfg.write_buffer_bytes = 32 * KIB; // one program unit: 2 planes x 16 KiB
    let mut ssd = fresh(cfg, 0);
    // 4 KiB writes at 512-byte alignment span two IUs: 7 buffered IUs + 2 > 8.
    let mut job = JobSpec::simple("w", RwMode::Randwrite, 4 * KIB, 1, MIB);
    job.block_align = [512; 3];
    job.io_limit = 64 * KIB;
    job.random_map = false;
    job.seed = 2577138069332545701;
    job.distribution = Distribution { kind: DistKind::Zipf, param: 1.2, zones: vec![] };
    let (r, a) = run_audited(&mut ssd, host_with_overhead(0, 0.0, 100), vec![job], 1, None);
    assert_eq!(a.submits, a.completions, "requests left in the device: {}", a.submits - a.completions);
    assert_eq!(r.jobs[0].issued, r.jobs[0].completed);
}

/// The same with a larger buffer: 1 MiB buffer, aligned 12 KiB writes leave partial units
/// buffered, and a 1 MiB write cannot fit next to them until they are sent.
#[test]
fn write_larger_than_free_buffer_after_partial_unit_completes() {
    let mut cfg = SsdConfig::generic(1);
    cfg.write_buffer_bytes = MIB;
    let mut ssd = fresh(cfg, 0);
    let mut small = JobSpec::simple("small", RwMode::Write, 12 * KIB, 1, 64 * MIB);
    small.number_ios = Some(1);
    let mut big = JobSpec::simple("big", RwMode::Write, MIB, 1, 64 * MIB);
    big.region_offset = 128 * MIB;
    big.number_ios = Some(1);
    big.start_after = vec![0];
    let (r, a) = run_audited(&mut ssd, HostConfig::ideal(), vec![small, big], 1, None);
    assert_eq!(a.submits, a.completions, "requests left in the device: {}", a.submits - a.completions);
    assert_eq!(r.jobs[1].issued, r.jobs[1].completed);
}

/// A device that accepts requests and never completes them: the run must fail loudly (an
/// internal model error), not pass as a short run, nor run for ever when the device has
/// events that recur on their own (as a drive's temperature samples do).
#[test]
fn a_model_that_stalls_is_an_error_not_a_short_run() {
    /// `tick`: the device has an event every 10 ms of its own.
    struct BlackHole {
        tick: bool,
    }
    const TICK: Time = 10_000_000;
    impl BlockDevice for BlackHole {
        type Event = ();
        fn capacity(&self) -> u64 {
            MIB
        }
        fn queue_depth(&self) -> u32 {
            4
        }
        fn submit(&mut self, _: DeviceRequest, _: &mut impl DeviceCtx<()>) {}
        fn handle(&mut self, _: (), ctx: &mut impl DeviceCtx<()>) {
            ctx.schedule(ctx.now() + TICK, ());
        }
        fn internal_report(&self, _: Time) -> DeviceReport {
            DeviceReport {
                kind: DeviceKind::NandSsd,
                host_bytes_written: 0,
                host_bytes_read: 0,
                media_bytes_written: 0,
                media_bytes_read: 0,
                die_busy_ns: 0,
                dies: 1,
                channel_busy_ns: vec![],
                controller_busy_ns: 0,
                controller_cores: 1,
                thermal: None,
                nand: None,
                array: None,
                hdd: None,
                remap: None,
            }
        }
        fn end_run(&mut self, _: Time) {}
        fn has_internal_work(&self) -> bool {
            false
        }
        fn begin_run(&mut self) -> Time {
            0
        }
        fn volatile(&self) -> ssdlab_core::device::Volatile {
            Default::default()
        }
        fn lost_ranges(&self) -> Option<Vec<ssdlab_core::device::LostRange>> {
            Some(Vec::new())
        }
    }
    impl TargetDevice for BlackHole {
        fn start_run(&mut self, ctx: &mut impl DeviceCtx<()>) {
            if self.tick {
                ctx.schedule(ctx.now() + TICK, ());
            }
        }
    }
    for tick in [false, true] {
        let job = JobSpec::simple("r", RwMode::Randread, 4 * KIB, 4, MIB);
        let host = Host::new(HostConfig::ideal(), vec![job], 1).unwrap();
        let err = simulate(1, host, vec![Target::new("hole", BlackHole { tick })])
            .expect_err("a stalled run must not return a result");
        let msg = err.to_string();
        assert!(msg.contains("stalled") && msg.contains("\"r\""), "tick {tick}: {msg}");
    }
}
