//! Simulator throughput, one JSON line per scenario:
//!
//!     cargo run --release -p ssdlab-core --example throughput -- [RUNS] [SCENARIO…]
//!
//! Each scenario is prepared (drive built and preconditioned, timed separately) and run RUNS
//! times (default 5); reported are the median, min and max simulated requests per
//! wall-clock second of the simulation alone, the preconditioning time, the mapping memory
//! per logical 4 KiB page, and what the simulated drive did (IOPS, WAF) as a sanity check.
//! `benches/throughput.py` at the repository root runs this and prints a table. With
//! `SSDLAB_BENCH_OBSERVE=1` each run has a progress observer, as runs from Python do.
//!
//! Each line also gives the median rate per CPU second of the simulating thread
//! (`median_cpu_req_per_s`): on a machine shared with other work, wall time counts the time
//! the thread waited for a core and CPU time does not, so A/B comparisons there use it.

#[path = "../benches/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::{scheduler_churn, Scenario};
use serde_json::json;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// CPU time this thread has used.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().map(|a| a.parse().expect("RUNS must be a number")).unwrap_or(5).max(1);
    let only: Vec<String> = args.collect();
    // A filter that is a scenario's whole name picks that one alone (randread_4k_qd32 is
    // also a part of hdd_randread_4k_qd32's name); any other picks the names containing it.
    let exact = |o: &str| Scenario::ALL.iter().any(|s| s.name() == o);
    let wanted = |name: &str| {
        only.is_empty() || only.iter().any(|o| if exact(o) { name == o } else { name.contains(o.as_str()) })
    };

    for sc in Scenario::ALL {
        if !wanted(sc.name()) {
            continue;
        }
        let (mut rates, mut cpu_rates, mut pre_s) = (Vec::new(), Vec::new(), Vec::new());
        let mut last = None;
        for i in 0..runs {
            let (dev, pre) = sc.prepare(i as u64 + 1);
            let map_bytes = dev.map_bytes();
            let logical_pages = dev.capacity() / 4096;
            let cpu = thread_cpu();
            let (r, el) = sc.run(dev, i as u64 + 1);
            cpu_rates.push(sc.requests() as f64 / (thread_cpu() - cpu).as_secs_f64());
            rates.push(sc.requests() as f64 / el.as_secs_f64());
            pre_s.push(pre.as_secs_f64());
            last = Some((r, map_bytes, logical_pages));
        }
        let (r, map_bytes, pages) = last.expect("at least one run");
        // Every job's I/O over the span from the first start to the last end.
        let ios: u64 = r.jobs.iter().map(|j| j.read.ios + j.write.ios).sum();
        let start = r.jobs.iter().map(|j| j.measure_start_ns).min().unwrap_or(0);
        let end = r.jobs.iter().map(|j| j.end_ns).max().unwrap_or(0);
        let sim_s = (end - start) as f64 / 1e9;
        let int = &r.devices[0].internal;
        let member_ios: u64 = r.devices[0].members.iter().map(|m| m.disk.read_ios + m.disk.write_ios).sum();
        let (min, max) = (
            rates.iter().cloned().fold(f64::INFINITY, f64::min),
            rates.iter().cloned().fold(0.0, f64::max),
        );
        let line = json!({
            "scenario": sc.name(),
            "runs": runs,
            "requests_per_run": sc.requests(),
            "median_req_per_s": median(&mut rates),
            "min_req_per_s": min,
            "max_req_per_s": max,
            "median_cpu_req_per_s": median(&mut cpu_rates),
            "precondition": format!("{:?}", sc.precondition()),
            "median_precondition_s": median(&mut pre_s),
            "map_bytes": map_bytes,
            "map_bytes_per_page": map_bytes as f64 / pages as f64,
            "events_per_request": r.events as f64 / sc.requests() as f64,
            "simulated_iops": ios as f64 / sim_s,
            "simulated_waf": int.media_bytes_written as f64 / int.host_bytes_written.max(1) as f64,
            "member_ios_per_request": member_ios as f64 / sc.requests() as f64,
        });
        println!("{line}");
    }

    if wanted("scheduler") {
        let ops = 10_000_000u64;
        let (mut rates, mut cpu_rates) = (Vec::new(), Vec::new());
        let mut check = 0;
        for _ in 0..runs {
            let (t, cpu) = (Instant::now(), thread_cpu());
            check ^= scheduler_churn(1024, ops);
            rates.push(ops as f64 / t.elapsed().as_secs_f64());
            cpu_rates.push(ops as f64 / (thread_cpu() - cpu).as_secs_f64());
        }
        let (min, max) = (
            rates.iter().cloned().fold(f64::INFINITY, f64::min),
            rates.iter().cloned().fold(0.0, f64::max),
        );
        let line = json!({
            "scenario": "scheduler_pop_push_1024_pending",
            "runs": runs,
            "requests_per_run": ops,
            "median_req_per_s": median(&mut rates),
            "min_req_per_s": min,
            "max_req_per_s": max,
            "median_cpu_req_per_s": median(&mut cpu_rates),
            "checksum": check,
        });
        println!("{line}");
    }
}
