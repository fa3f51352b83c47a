//! Benchmark scenarios shared by the criterion bench (`benches/throughput.rs`) and the
//! plain-output runner (`examples/throughput.rs`, driven by `benches/throughput.py`).
//!
//! A scenario is a preconditioned drive plus one job. Preparing it (building the drive and
//! preconditioning it) is kept apart from running it, so only the simulation is timed.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use ssdlab_core::device::ssd::{precondition, Precondition, Ssd, SsdConfig};
use ssdlab_core::engine::Scheduler;
use ssdlab_core::host::{Host, HostConfig};
use ssdlab_core::sim::{simulate, SimResult, Target};
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
}

impl Scenario {
    pub const ALL: [Scenario; 2] = [Scenario::RandRead4kQd32, Scenario::RandWrite4kSteady];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::RandRead4kQd32 => "randread_4k_qd32",
            Scenario::RandWrite4kSteady => "randwrite_4k_qd32_gc_steady",
        }
    }

    pub fn capacity_gib(self) -> u64 {
        64
    }

    pub fn precondition(self) -> Precondition {
        match self {
            Scenario::RandRead4kQd32 => Precondition::Sequential,
            // One random pass after the fill is enough to reach the GC steady state (the WAF
            // measured after 1 and after 3 passes agrees within 1 % on the 1 GiB drive).
            Scenario::RandWrite4kSteady => Precondition::Random { passes: 1.0 },
        }
    }

    /// Requests one timed run issues; `SSDLAB_BENCH_SCALE` (a factor) scales it, e.g. to
    /// make the simulation dominate a profile over the preconditioning.
    pub fn requests(self) -> u64 {
        let base = match self {
            Scenario::RandRead4kQd32 => 1_000_000,
            Scenario::RandWrite4kSteady => 500_000,
        };
        let scale: f64 = std::env::var("SSDLAB_BENCH_SCALE").ok().and_then(|v| v.parse().ok()).unwrap_or(1.0);
        ((base as f64 * scale) as u64).max(1)
    }

    pub fn job(self) -> JobSpec {
        let cap = self.capacity_gib() * GIB;
        let rw = match self {
            Scenario::RandRead4kQd32 => RwMode::Randread,
            Scenario::RandWrite4kSteady => RwMode::Randwrite,
        };
        let mut j = JobSpec::simple(self.name(), rw, 4096, 32, cap);
        // Independent uniform offsets (no fio random map), as the preconditioner draws them.
        j.random_map = false;
        j.number_ios = Some(self.requests());
        j.io_limit = u64::MAX;
        j.seed = 42;
        j
    }

    /// Build and precondition the drive; returns it and the time preconditioning took.
    pub fn prepare(self, seed: u64) -> (Ssd, Duration) {
        let cfg = SsdConfig::generic(self.capacity_gib());
        let mut ssd = Ssd::new(cfg, seed).expect("generic drive is valid");
        let t = Instant::now();
        precondition(&mut ssd, self.precondition(), seed);
        (ssd, t.elapsed())
    }

    /// Run the scenario's job on a prepared drive (consumed); returns the result and the
    /// wall-clock time of the simulation alone.
    pub fn run(self, ssd: Ssd, seed: u64) -> (SimResult, Duration) {
        let host = Host::new(HostConfig::ideal(), vec![self.job()], seed, None).expect("host");
        let name = ssd.config().name.clone();
        // A system of one NAND SSD runs the loop for that kind, as `sim::run` does.
        let targets = vec![Target::new(name, ssd)];
        let t = Instant::now();
        let r = simulate(seed, host, targets).expect("simulation");
        let el = t.elapsed();
        assert_eq!(r.completed(), self.requests(), "{}: every request completes", self.name());
        (r, el)
    }
}

/// The scheduler benchmark: a steady population of `pending` events, each pop followed by a
/// push a pseudo-random distance into the future (as a device at queue depth `pending`
/// does). Returns a checksum so the work cannot be optimised away.
pub fn scheduler_churn(pending: usize, ops: u64) -> u64 {
    let mut s: Scheduler<u64> = Scheduler::new();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let next = |x: &mut u64| {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    };
    for i in 0..pending as u64 {
        s.schedule(next(&mut x) % 100_000, i);
    }
    let mut sum = 0u64;
    for _ in 0..ops {
        let (t, e) = s.pop().expect("pending event");
        sum = sum.wrapping_add(e ^ t);
        s.schedule(t + 1 + next(&mut x) % 100_000, e);
    }
    sum
}
