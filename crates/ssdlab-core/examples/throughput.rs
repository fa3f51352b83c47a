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
//!
//! The single-drive SSD scenarios also run their floors (`benches/common/floor.rs`; not with
//! `SSDLAB_BENCH_NO_FLOORS` set, as `benches/instructions.py` sets it) after
//! each timed run, in this process: the read floor, a bare event loop of the simulator's
//! shape, and for a write scenario the write floor, that loop plus the state updates a
//! page-mapped FTL cannot avoid at the WAF the run measured. Each line then gives the floors'
//! median rates per CPU second and the scenario's ratio to them (the median over runs of the
//! run's rate over the floor's, measured side by side): `ratio_to_read_floor`,
//! `ratio_to_write_floor`, and `ratio_to_floor`, against the scenario's own floor (the write
//! floor for writes).

#[path = "../benches/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::floor::{read_floor, write_floor, Shape, WriteState};
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

/// The first device's write amplification: media bytes over host bytes written.
fn waf(r: &ssdlab_core::SimResult) -> f64 {
    let int = &r.devices[0].internal;
    int.media_bytes_written as f64 / int.host_bytes_written.max(1) as f64
}

/// A scenario's floor runs: rates per CPU second and the scenario's ratio to each, run by run.
#[derive(Default)]
struct Floors {
    read: Vec<f64>,
    read_ratio: Vec<f64>,
    write: Vec<f64>,
    write_ratio: Vec<f64>,
    write_waf: Vec<f64>,
    /// The write floor's state, built and warmed up (untimed) at the first run's WAF, then
    /// carried from run to run as a drive's state would be.
    state: Option<WriteState>,
}

impl Floors {
    /// Run the scenario's floors once, after a timed run whose CPU rate was `rate` and WAF
    /// `waf`.
    fn run(&mut self, sc: Scenario, seed: u64, rate: f64, waf: f64) {
        let Some((cfg, depth, writes)) = sc.floor() else { return };
        let n = sc.requests();
        let cpu = thread_cpu();
        let r = read_floor(Shape::read(&cfg, depth), n, seed);
        assert_eq!(r.completed, n, "the read floor completes every request");
        let floor = n as f64 / (thread_cpu() - cpu).as_secs_f64();
        self.read.push(floor);
        self.read_ratio.push(rate / floor);
        if !writes {
            return;
        }
        let shape = Shape::write(&cfg, depth, waf);
        let state = self.state.get_or_insert_with(|| {
            let block_pages = (cfg.nand.pages_per_block as u64 * cfg.nand.page_bytes / cfg.ftl.iu_bytes) as u32;
            let mut s = WriteState::new(shape.logical_pages, waf, block_pages);
            s.warm_up(seed);
            s
        });
        let cpu = thread_cpu();
        let w = write_floor(shape, n, seed, state);
        assert_eq!((w.completed, w.host_writes), (n, n), "the write floor writes every request");
        let floor = n as f64 / (thread_cpu() - cpu).as_secs_f64();
        self.write.push(floor);
        self.write_ratio.push(rate / floor);
        self.write_waf.push(1.0 + w.gc_copies as f64 / w.host_writes as f64);
    }

    /// Add the floors' medians to a scenario's JSON line.
    fn report(mut self, line: &mut serde_json::Value) {
        if self.read.is_empty() {
            return;
        }
        let read = median(&mut self.read);
        let read_ratio = median(&mut self.read_ratio);
        line["read_floor_cpu_req_per_s"] = json!(read);
        line["ratio_to_read_floor"] = json!(read_ratio);
        let (mut floor, mut ratio) = (read, read_ratio);
        if !self.write.is_empty() {
            floor = median(&mut self.write);
            ratio = median(&mut self.write_ratio);
            line["write_floor_cpu_req_per_s"] = json!(floor);
            line["ratio_to_write_floor"] = json!(ratio);
            line["write_floor_waf"] = json!(median(&mut self.write_waf));
        }
        line["floor"] = json!(if self.write.is_empty() { "read" } else { "write" });
        line["floor_cpu_req_per_s"] = json!(floor);
        line["ratio_to_floor"] = json!(ratio);
    }
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
        let mut floors = Floors::default();
        // Counting instructions (benches/instructions.py) wants the scenario's alone.
        let run_floors = std::env::var_os("SSDLAB_BENCH_NO_FLOORS").is_none();
        for i in 0..runs {
            let (dev, pre) = sc.prepare(i as u64 + 1);
            let map_bytes = dev.map_bytes();
            let logical_pages = dev.capacity() / 4096;
            let cpu = thread_cpu();
            let (r, el) = sc.run(dev, i as u64 + 1);
            let cpu_rate = sc.requests() as f64 / (thread_cpu() - cpu).as_secs_f64();
            cpu_rates.push(cpu_rate);
            rates.push(sc.requests() as f64 / el.as_secs_f64());
            pre_s.push(pre.as_secs_f64());
            if run_floors {
                floors.run(sc, i as u64 + 1, cpu_rate, waf(&r));
            }
            last = Some((r, map_bytes, logical_pages));
        }
        let (r, map_bytes, pages) = last.expect("at least one run");
        // Every job's I/O over the span from the first start to the last end.
        let ios: u64 = r.jobs.iter().map(|j| j.read.ios + j.write.ios).sum();
        let start = r.jobs.iter().map(|j| j.measure_start_ns).min().unwrap_or(0);
        let end = r.jobs.iter().map(|j| j.end_ns).max().unwrap_or(0);
        let sim_s = (end - start) as f64 / 1e9;
        let member_ios: u64 = r.devices[0].members.iter().map(|m| m.disk.read_ios + m.disk.write_ios).sum();
        let (min, max) = (
            rates.iter().cloned().fold(f64::INFINITY, f64::min),
            rates.iter().cloned().fold(0.0, f64::max),
        );
        let mut line = json!({
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
            "simulated_waf": waf(&r),
            "member_ios_per_request": member_ios as f64 / sc.requests() as f64,
        });
        floors.report(&mut line);
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
