//! Simulator throughput under criterion, reported in simulated requests per second:
//!
//!     cargo bench -p ssdlab-core --bench throughput
//!
//! Groups: every scenario of `common::Scenario` (among them 4 KiB random read QD32 on a
//! sequentially filled 64 GiB drive, 4 KiB random write QD32 at GC steady state, md RAID 5
//! of 8 drives, and md RAID 0 of 8 drives at QD256: issue 9's speed bars), and the bare
//! event queue at 32, 256 and 1024 pending events (and at 256 with events far enough ahead
//! to pass its timing wheel).
//!
//! A simulation consumes its drive and `Ssd` cannot be cloned, so every timed iteration gets
//! a freshly built and preconditioned drive; `iter_custom` keeps that preparation (up to a
//! few seconds for the random precondition) out of the measurement. Sample counts and times
//! are small so the whole bench finishes in a few minutes.

mod common;

use std::hint::black_box;
use std::time::Duration;

use common::{scheduler_churn, scheduler_churn_within, Scenario};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};

fn simulation(c: &mut Criterion) {
    for sc in Scenario::ALL {
        let mut g = c.benchmark_group(sc.name());
        // Criterion sizes samples by the wall time of a whole `iter_custom` call, preparation
        // included (about 0.5 s for the read drive, 3 s for the random-preconditioned one),
        // so these budgets mean one iteration per sample.
        let budget = match sc {
            Scenario::RandRead4kQd32 => 8,
            Scenario::RandWrite4kSteady => 35,
            Scenario::Raid5RandWrite4k => 10,
            Scenario::Raid0RandRead4kQd256 => 15,
            Scenario::HddRandRead4kQd32 | Scenario::Cfq128Procs | Scenario::ReplayDiskSim => 10,
        };
        g.sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(budget))
            .throughput(Throughput::Elements(sc.requests()));
        g.bench_function("simulate", |b| {
            let mut seed = 0;
            b.iter_custom(|iters| {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    seed += 1;
                    let (dev, _precondition_time) = sc.prepare(seed);
                    let (result, elapsed) = sc.run(dev, seed);
                    black_box(result.events);
                    timed += elapsed;
                }
                timed
            })
        });
        g.finish();
    }
}

fn scheduler(c: &mut Criterion) {
    const OPS: u64 = 1_000_000;
    let mut g = c.benchmark_group("scheduler");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(OPS));
    // 32: one drive at QD32; 256: an array at QD256; 1024: a deep system.
    for pending in [32usize, 256, 1024] {
        g.bench_function(format!("pop_push_{pending}_pending"), |b| {
            b.iter(|| black_box(scheduler_churn(black_box(pending), OPS)))
        });
    }
    // Events up to 10 ms ahead (a disk, garbage collection): past the timing wheel.
    g.bench_function("pop_push_256_pending_10ms_ahead", |b| {
        b.iter(|| black_box(scheduler_churn_within(black_box(256), OPS, 10_000_000)))
    });
    g.finish();
}

criterion_group!(benches, simulation, scheduler);
criterion_main!(benches);
