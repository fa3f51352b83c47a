//! Benchmark scenarios shared by the criterion bench (`benches/throughput.rs`) and the
//! plain-output runner (`examples/throughput.rs`, driven by `benches/throughput.py`).
//!
//! A scenario is a preconditioned drive (or an array of them) plus one job. Preparing it
//! (building and preconditioning the drives) is kept apart from running it, so only the
//! simulation is timed.
#![allow(dead_code)]

pub mod floor;

use std::time::{Duration, Instant};

use ssdlab_core::array::{Array, ArrayConfig, EngineConfig, MdConfig, MemberSpec, RaidLevel};
use ssdlab_core::block::{CfqTunables, QueueLimits, SchedulerConfig};
use ssdlab_core::device::hdd::{Hdd, HddConfig};
use ssdlab_core::workload::replay::{ReplaySpec, ReplayTiming};
use ssdlab_core::workload::trace::{TimeUnit, TraceFormat};
use ssdlab_core::device::ssd::{precondition, Precondition, Ssd, SsdConfig};
use ssdlab_core::device::BlockDevice;
use ssdlab_core::device::DriveConfig;
use ssdlab_core::target::build_array;
use ssdlab_core::engine::EventQueue;
use ssdlab_core::host::{Host, HostConfig};
use ssdlab_core::progress::{Flow, Progress, Watch};
use ssdlab_core::sim::{simulate, simulate_with, RunOptions, Target};
use ssdlab_core::target::TargetDevice;
use ssdlab_core::report::SimResult;
use ssdlab_core::workload::{JobSpec, RwMode};

pub const GIB: u64 = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// 4 KiB random reads at QD32 on a sequentially filled 64 GiB drive: every read goes to
    /// flash.
    RandRead4kQd32,
    /// 4 KiB random writes at QD32 on a 64 GiB drive preconditioned with random overwrites,
    /// so garbage collection runs throughout.
    RandWrite4kSteady,
    /// md RAID 5 of 8 fresh 8 GiB drives, 64 KiB chunk: 4 KiB random writes at QD64 (each
    /// two member reads and two member writes).
    Raid5RandWrite4k,
    /// md RAID 0 of 8 sequentially filled 8 GiB drives: 4 KiB random reads at QD256.
    Raid0RandRead4kQd256,
    /// A 1 TB 7200 rpm disk: 4 KiB random reads at QD32, NCQ reordering.
    HddRandRead4kQd32,
    /// 128 processes, one 4 KiB random read each at a time, on the filled 64 GiB drive
    /// behind CFQ.
    Cfq128Procs,
    /// A 1 M-record DiskSim trace replayed closed-loop at QD32 on the filled 64 GiB drive,
    /// parsing included.
    ReplayDiskSim,
}

/// A scenario's device, ready to run.
#[allow(clippy::large_enum_variant)] // one per bench, stepped by every event
pub enum Prepared {
    Drive(Ssd),
    Array(Array<Ssd>),
    Hdd(Hdd),
}

impl Prepared {
    pub fn map_bytes(&self) -> u64 {
        match self {
            Prepared::Drive(s) => s.ftl().map_bytes(),
            Prepared::Array(a) => a.members().map(|s| s.ftl().map_bytes()).sum(),
            Prepared::Hdd(_) => 0,
        }
    }

    pub fn capacity(&self) -> u64 {
        match self {
            Prepared::Drive(s) => s.capacity(),
            Prepared::Array(a) => a.members().map(|s| s.capacity()).sum(),
            Prepared::Hdd(d) => d.capacity(),
        }
    }
}

impl Scenario {
    pub const ALL: [Scenario; 7] = [
        Scenario::RandRead4kQd32,
        Scenario::RandWrite4kSteady,
        Scenario::Raid5RandWrite4k,
        Scenario::Raid0RandRead4kQd256,
        Scenario::HddRandRead4kQd32,
        Scenario::Cfq128Procs,
        Scenario::ReplayDiskSim,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::RandRead4kQd32 => "randread_4k_qd32",
            Scenario::RandWrite4kSteady => "randwrite_4k_qd32_gc_steady",
            Scenario::Raid5RandWrite4k => "raid5x8_randwrite_4k_qd64",
            Scenario::Raid0RandRead4kQd256 => "raid0x8_randread_4k_qd256",
            Scenario::HddRandRead4kQd32 => "hdd_randread_4k_qd32",
            Scenario::Cfq128Procs => "cfq_128_processes_randread_4k",
            Scenario::ReplayDiskSim => "replay_disksim_qd32",
        }
    }

    /// Capacity of one drive.
    pub fn capacity_gib(self) -> u64 {
        match self {
            Scenario::RandRead4kQd32 | Scenario::RandWrite4kSteady | Scenario::Cfq128Procs | Scenario::ReplayDiskSim => 64,
            Scenario::Raid5RandWrite4k | Scenario::Raid0RandRead4kQd256 => 8,
            Scenario::HddRandRead4kQd32 => 1000,
        }
    }

    fn array(self) -> Option<(RaidLevel, usize)> {
        match self {
            Scenario::Raid5RandWrite4k => Some((RaidLevel::Raid5, 8)),
            Scenario::Raid0RandRead4kQd256 => Some((RaidLevel::Raid0, 8)),
            _ => None,
        }
    }

    pub fn precondition(self) -> Precondition {
        match self {
            Scenario::RandRead4kQd32 | Scenario::Raid0RandRead4kQd256 | Scenario::Cfq128Procs | Scenario::ReplayDiskSim => {
                Precondition::Sequential
            }
            Scenario::HddRandRead4kQd32 => Precondition::None,
            // One random pass after the fill is enough to reach the GC steady state (the WAF
            // measured after 1 and after 3 passes agrees within 1 % on the 1 GiB drive).
            Scenario::RandWrite4kSteady => Precondition::Random { passes: 1.0 },
            Scenario::Raid5RandWrite4k => Precondition::None,
        }
    }

    /// The drive and the queue depth the scenario's floors take their shape from
    /// (`floor.rs`), and whether it writes (then its own floor is the write floor). Only the
    /// single-drive SSD scenarios have floors: an array's or a disk's loop has another shape.
    pub fn floor(self) -> Option<(SsdConfig, u32, bool)> {
        let cfg = SsdConfig::generic(self.capacity_gib());
        match self {
            Scenario::RandRead4kQd32 | Scenario::ReplayDiskSim => Some((cfg, 32, false)),
            Scenario::RandWrite4kSteady => Some((cfg, 32, true)),
            // 128 processes, one request each at a time.
            Scenario::Cfq128Procs => Some((cfg, 128, false)),
            Scenario::Raid5RandWrite4k | Scenario::Raid0RandRead4kQd256 | Scenario::HddRandRead4kQd32 => None,
        }
    }

    /// Requests one timed run issues; `SSDLAB_BENCH_SCALE` (a factor) scales it, e.g. to
    /// make the simulation dominate a profile over the preconditioning.
    pub fn requests(self) -> u64 {
        let base = match self {
            Scenario::RandRead4kQd32 | Scenario::Raid0RandRead4kQd256 | Scenario::ReplayDiskSim => 1_000_000,
            // 128 processes × 8,000.
            Scenario::Cfq128Procs => 1_024_000,
            Scenario::RandWrite4kSteady | Scenario::Raid5RandWrite4k => 500_000,
            Scenario::HddRandRead4kQd32 => 500_000,
        };
        let scale: f64 = std::env::var("SSDLAB_BENCH_SCALE").ok().and_then(|v| v.parse().ok()).unwrap_or(1.0);
        ((base as f64 * scale) as u64).max(1)
    }

    pub fn job(self, capacity: u64) -> JobSpec {
        let (rw, depth) = match self {
            Scenario::RandRead4kQd32 | Scenario::HddRandRead4kQd32 | Scenario::ReplayDiskSim => (RwMode::Randread, 32),
            Scenario::RandWrite4kSteady => (RwMode::Randwrite, 32),
            Scenario::Raid5RandWrite4k => (RwMode::Randwrite, 64),
            Scenario::Raid0RandRead4kQd256 => (RwMode::Randread, 256),
            Scenario::Cfq128Procs => (RwMode::Randread, 1),
        };
        let mut j = JobSpec::simple(self.name(), rw, 4096, depth, capacity);
        // Independent uniform offsets (no fio random map), as the preconditioner draws them.
        j.random_map = false;
        j.number_ios = Some(self.requests());
        j.io_limit = u64::MAX;
        j.seed = 42;
        if self == Scenario::ReplayDiskSim {
            j.number_ios = None;
            j.replay = Some(ReplaySpec {
                path: replay_trace(self.requests(), capacity).display().to_string(),
                format: TraceFormat::DiskSim,
                timing: ReplayTiming::Closed,
                device: None,
                wrap: false,
                disksim_time_unit: TimeUnit::Ns,
            });
        }
        j
    }

    /// The scenario's jobs: one, or 128 processes for the CFQ scenario.
    pub fn jobs(self, capacity: u64) -> Vec<JobSpec> {
        let base = self.job(capacity);
        if self != Scenario::Cfq128Procs {
            return vec![base];
        }
        (0..128u32)
            .map(|i| {
                let mut j = base.clone();
                j.clone = i;
                j.seed = 42 + i as u64;
                j.number_ios = Some(self.requests() / 128);
                j
            })
            .collect()
    }

    fn scheduler(self) -> SchedulerConfig {
        match self {
            Scenario::Cfq128Procs => SchedulerConfig::Cfq(CfqTunables::default()),
            _ => SchedulerConfig::None,
        }
    }

    /// Build and precondition the drives; returns the device and the time that took.
    pub fn prepare(self, seed: u64) -> (Prepared, Duration) {
        let t = Instant::now();
        if self == Scenario::HddRandRead4kQd32 {
            return (Prepared::Hdd(Hdd::new(HddConfig::generic(), seed).expect("a valid disk")), t.elapsed());
        }
        let cfg = SsdConfig::generic(self.capacity_gib());
        let Some((level, n)) = self.array() else {
            let mut ssd = Ssd::new(cfg, seed).expect("generic drive is valid");
            precondition(&mut ssd, self.precondition(), seed);
            return (Prepared::Drive(ssd), t.elapsed());
        };
        let members = (0..n)
            .map(|i| MemberSpec {
                name: format!("sd{}", (b'a' + i as u8) as char),
                device: DriveConfig::NandSsd(cfg.clone()),
                precondition: self.precondition(),
                scheduler: Default::default(),
            queue: Default::default(),
            })
            .collect();
        let acfg = ArrayConfig {
            level,
            chunk_bytes: 64 << 10,
            engine: EngineConfig::Md(MdConfig::default()),
            members,
            failures: vec![],
            spares: vec![],
            rebuild_limit_bytes: None,
            verify_data: false,
        };
        let array = build_array(&acfg, seed, 1000, |c, s, pre| {
            let DriveConfig::NandSsd(c) = c else { unreachable!() };
            let mut ssd = Ssd::new(c.clone(), s)?;
            precondition(&mut ssd, pre, s);
            Ok(ssd)
        })
        .expect("a valid array");
        (Prepared::Array(array), t.elapsed())
    }

    /// Run the scenario's job on a prepared device (consumed); returns the result and the
    /// wall-clock time of the simulation alone.
    pub fn run(self, dev: Prepared, seed: u64) -> (SimResult, Duration) {
        let (r, el) = match dev {
            // One kind of device per system runs the loop for that kind, as `sim::run` does.
            Prepared::Drive(ssd) => timed(self, seed, Target::new(ssd.config().name.clone(), ssd)),
            Prepared::Array(a) => timed(self, seed, Target::new("md0", a)),
            Prepared::Hdd(d) => timed(self, seed, Target::new("sda", d)),
        };
        assert_eq!(r.completed(), self.requests(), "{}: every request completes", self.name());
        (r, el)
    }
}

fn timed<D: TargetDevice>(sc: Scenario, seed: u64, mut target: Target<D>) -> (SimResult, Duration) {
    target.scheduler = sc.scheduler();
    target.queue = QueueLimits::default();
    let host = Host::new(HostConfig::ideal(), sc.jobs(target.device.capacity()), seed).expect("host");
    let t = Instant::now();
    // SSDLAB_BENCH_OBSERVE=1: run under an observer told every 100 ms, as the Python binding
    // runs (the cost of the progress checks).
    let r = if std::env::var_os("SSDLAB_BENCH_OBSERVE").is_some_and(|v| v == "1") {
        let mut observer = |_: &Progress| Flow::Continue;
        simulate_with(seed, host, vec![target], RunOptions::default(), &mut Watch::new(&mut observer))
    } else {
        simulate(seed, host, vec![target])
    }
    .expect("simulation");
    (r, t.elapsed())
}

/// A DiskSim trace of `records` 4 KiB random reads and writes over `capacity`, written once
/// to the temporary directory and reused.
fn replay_trace(records: u64, capacity: u64) -> std::path::PathBuf {
    use std::io::Write as _;
    let path = std::env::temp_dir().join(format!("ssdlab-bench-{records}-{capacity}.trace"));
    if path.is_file() {
        return path;
    }
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("a temporary trace"));
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let sectors = capacity / 512 - 8;
    for i in 0..records {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        writeln!(out, "{} 0 {} 8 {}", i * 10_000, (x % sectors) / 8 * 8, (x >> 60) & 1).expect("trace written");
    }
    path
}

/// The scheduler benchmark: a steady population of `pending` events, each pop followed by a
/// push a pseudo-random distance (under 100 µs) into the future (as a device at queue depth
/// `pending` does). Returns a checksum so the work cannot be optimised away.
pub fn scheduler_churn(pending: usize, ops: u64) -> u64 {
    scheduler_churn_within(pending, ops, 100_000)
}

/// [`scheduler_churn`] with pushes under `spread` ns ahead: past the event queue's timing
/// wheel (about 262 µs), as a hard disk's or a garbage collector's events are, they go to
/// its heap.
pub fn scheduler_churn_within(pending: usize, ops: u64, spread: u64) -> u64 {
    let mut s: EventQueue<u64> = EventQueue::new();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let next = |x: &mut u64| {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    };
    for i in 0..pending as u64 {
        s.schedule(next(&mut x) % spread, i);
    }
    let mut sum = 0u64;
    for _ in 0..ops {
        let (t, e) = s.pop().expect("pending event");
        sum = sum.wrapping_add(e ^ t);
        s.schedule(t + 1 + next(&mut x) % spread, e);
    }
    sum
}
