//! The host's CPUs as a run uses them, and what `sar` and `/proc/loadavg` report of them.
//!
//! Threads (a job's clones) run bursts of CPU work (a system call's kernel path, a copy, the
//! file system's allocation) on a fixed number of cores, first come first served, and block
//! for I/O in between. From when each burst was asked for, started and ended, and when
//! threads blocked for I/O, the model integrates exactly:
//!
//! - **busy**: core-time running bursts (sar's %user + %system);
//! - **iowait**: idle core-time while threads wait for I/O, `min(idle cores, threads waiting
//!   for I/O)` at each instant — Linux counts an idle CPU's time as iowait while a task that
//!   blocked for I/O belongs to it (`nr_iowait`), so with tasks spread over the CPUs this is
//!   the count of idle CPUs that have such a task (kernel/sched/cputime.c, `account_idle_time`);
//! - **load average**: every 5 s (`LOAD_FREQ`) the number of active tasks — running, waiting for
//!   a core, or in uninterruptible (I/O) sleep — enters three exponentially decaying averages
//!   over 1, 5 and 15 minutes (kernel/sched/loadavg.c, `calc_load`: `load = load·e + active·(1 −
//!   e)` with `e = exp(−5 s / period)`).
//!
//! Bursts start in the future when every core is taken, so counts change at instants after the
//! present; they are kept as change points and integrated as time passes.

use std::collections::BTreeMap;

use crate::engine::{MultiServer, Time, NS_PER_S};
pub use crate::report::CpuInterval;

/// The load average's sampling period (LOAD_FREQ: 5 s, kernel/sched/loadavg.c).
pub const LOAD_FREQ_NS: Time = 5 * NS_PER_S;
/// Periods of the three load averages, s.
const LOAD_PERIODS_S: [f64; 3] = [60.0, 300.0, 900.0];

/// A count that changes at instants: its change points after the last integration.
#[derive(Clone, Debug, Default)]
struct Steps {
    /// The count as of `at`, and the changes at later instants.
    now: i64,
    at: Time,
    ahead: BTreeMap<Time, i64>,
}

impl Steps {
    fn change(&mut self, at: Time, delta: i64) {
        debug_assert!(at >= self.at, "a change in the integrated past");
        *self.ahead.entry(at).or_insert(0) += delta;
    }

    /// The next instant after the present and no later than `to` where the count changes.
    fn next_change(&self, to: Time) -> Option<Time> {
        if to <= self.at {
            return None;
        }
        self.ahead.range(self.at + 1..=to).next().map(|(&t, _)| t)
    }

    /// Move to `t`, applying the changes at or before it.
    fn advance(&mut self, t: Time) {
        while let Some((&at, &d)) = self.ahead.range(..=t).next() {
            self.now += d;
            self.ahead.remove(&at);
        }
        self.at = t;
    }
}

/// The host's cores and the threads' use of them.
#[derive(Clone, Debug)]
pub struct Cpus {
    cores: MultiServer,
    count: u32,
    /// Cores running a burst; tasks active (running, waiting for a core, blocked for I/O);
    /// tasks blocked for I/O.
    running: Steps,
    active: Steps,
    io_waiting: Steps,
    /// Integrals from the start, core-ns: busy, iowait; and task-ns active.
    busy_area: u128,
    iowait_area: u128,
    active_area: u128,
    integrated_to: Time,
    /// The load averages and when they are next updated.
    load: [f64; 3],
    next_load: Time,
    /// The last interval's start and its integrals there (for `interval`).
    mark: (Time, u128, u128, u128),
    start: Time,
}

impl Cpus {
    /// `count` cores; the clock starts at `start` (the load average's first update is
    /// LOAD_FREQ later).
    pub fn new(count: u32, start: Time) -> Cpus {
        let steps = || Steps { at: start, ..Steps::default() };
        Cpus {
            cores: MultiServer::new(count.max(1) as usize),
            count: count.max(1),
            running: steps(),
            active: steps(),
            io_waiting: steps(),
            busy_area: 0,
            iowait_area: 0,
            active_area: 0,
            integrated_to: start,
            load: [0.0; 3],
            next_load: start + LOAD_FREQ_NS,
            mark: (start, 0, 0, 0),
            start,
        }
    }

    pub fn cores(&self) -> u32 {
        self.count
    }

    /// A thread asks at `now` for a burst of `ns` of CPU: it runs on the first core free
    /// (waiting for one meanwhile). Returns when the burst ends.
    pub fn run(&mut self, now: Time, ns: Time) -> Time {
        self.integrate(now);
        let end = self.cores.reserve(now, ns);
        let start = end - ns;
        if ns > 0 {
            self.running.change(start, 1);
            self.running.change(end, -1);
            self.active.change(now, 1);
            self.active.change(end, -1);
        }
        end
    }

    /// A thread blocks for I/O at `now` (until [`Cpus::io_done`]).
    pub fn io_wait(&mut self, now: Time) {
        self.integrate(now);
        self.io_waiting.change(now, 1);
        self.active.change(now, 1);
    }

    /// A thread that blocked for I/O at an earlier [`Cpus::io_wait`] wakes at `now`.
    pub fn io_done(&mut self, now: Time) {
        self.integrate(now);
        self.io_waiting.change(now, -1);
        self.active.change(now, -1);
    }

    /// Integrate up to `t` (not before the last call's time), updating the load average at
    /// every LOAD_FREQ boundary passed.
    pub fn integrate(&mut self, t: Time) {
        if t <= self.integrated_to {
            return;
        }
        while self.integrated_to < t {
            let from = self.integrated_to;
            // The counts from `from` on include what changes at `from` itself.
            for s in [&mut self.running, &mut self.io_waiting, &mut self.active] {
                s.advance(from);
            }
            // The next instant anything changes: a count, or a load-average tick.
            let to = [self.running.next_change(t), self.io_waiting.next_change(t), self.active.next_change(t)]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(t)
                .min(self.next_load);
            let span = (to - from) as u128;
            let running = self.running.now.max(0) as u128;
            let idle = (self.count as u128).saturating_sub(running);
            self.busy_area += running * span;
            self.iowait_area += idle.min(self.io_waiting.now.max(0) as u128) * span;
            self.active_area += self.active.now.max(0) as u128 * span;
            self.integrated_to = to;
            if to == self.next_load {
                // calc_load samples the tasks active at the tick.
                for s in [&mut self.running, &mut self.io_waiting, &mut self.active] {
                    s.advance(to);
                }
                let active = self.active.now.max(0) as f64;
                for (l, period) in self.load.iter_mut().zip(LOAD_PERIODS_S) {
                    let e = (-(LOAD_FREQ_NS as f64 / NS_PER_S as f64) / period).exp();
                    *l = *l * e + active * (1.0 - e);
                }
                self.next_load += LOAD_FREQ_NS;
            }
        }
    }

    /// What the CPUs did since the last call (or the start), up to `now`.
    pub fn interval(&mut self, now: Time) -> CpuInterval {
        self.integrate(now);
        let mark = self.mark;
        self.mark = (now, self.busy_area, self.iowait_area, self.active_area);
        self.since(mark, now)
    }

    /// What the CPUs did from the start up to `now` (intervals taken meanwhile or not).
    pub fn whole(&mut self, now: Time) -> CpuInterval {
        self.integrate(now);
        self.since((self.start, 0, 0, 0), now)
    }

    fn since(&self, (start, busy0, iowait0, active0): (Time, u128, u128, u128), now: Time) -> CpuInterval {
        let span = now.saturating_sub(start) as f64;
        let total = span * self.count as f64;
        let share = |x: u128| if total > 0.0 { x as f64 / total } else { 0.0 };
        let (busy, iowait) = (share(self.busy_area - busy0), share(self.iowait_area - iowait0));
        let active = if span > 0.0 { (self.active_area - active0) as f64 / span } else { 0.0 };
        CpuInterval { start_ns: start, end_ns: now, busy, iowait, idle: (1.0 - busy - iowait).max(0.0), load: self.load, active }
    }

    /// Core-ns busy and in iowait from the start up to the last integration.
    pub fn totals(&self) -> (u128, u128) {
        (self.busy_area, self.iowait_area)
    }

    /// The load averages as of the last LOAD_FREQ tick passed.
    pub fn load(&self) -> [f64; 3] {
        self.load
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_queue_for_cores_and_busy_time_is_exact() {
        let mut c = Cpus::new(2, 0);
        assert_eq!(c.run(0, 10), 10);
        assert_eq!(c.run(0, 10), 10);
        assert_eq!(c.run(0, 10), 20, "the third waits for a core");
        let i = c.interval(40);
        assert!((i.busy - 30.0 / 80.0).abs() < 1e-12, "{i:?}");
        assert_eq!(i.iowait, 0.0);
    }

    #[test]
    fn iowait_is_idle_cores_with_threads_waiting_for_io() {
        let mut c = Cpus::new(4, 0);
        c.io_wait(0); // one thread waits for I/O the whole time
        c.run(0, 100); // one core busy for the first half
        let i = c.interval(200);
        // 0..100: 3 idle cores, 1 waiting → 1 core of iowait; 100..200: 4 idle, 1 waiting → 1.
        assert!((i.busy - 100.0 / 800.0).abs() < 1e-12);
        assert!((i.iowait - 200.0 / 800.0).abs() < 1e-12, "{i:?}");
        assert!((i.busy + i.iowait + i.idle - 1.0).abs() < 1e-12);
        c.io_done(200);
        assert_eq!(c.interval(300).iowait, 0.0);
    }

    #[test]
    fn active_is_the_mean_count_of_running_waiting_and_blocked_tasks() {
        let mut c = Cpus::new(1, 0);
        c.io_wait(0); // blocked 0..300
        c.run(0, 100); // runs 0..100
        c.run(0, 100); // waits for the core 0..100, runs 100..200
        let i = c.interval(200);
        // 0..100: 3 active; 100..200: 2.
        assert!((i.active - 2.5).abs() < 1e-12, "{i:?}");
        c.io_done(300);
        let i = c.interval(400);
        assert!((i.active - 0.5).abs() < 1e-12, "{i:?}");
        assert!((c.whole(400).active - 1.5).abs() < 1e-12);
    }

    #[test]
    fn the_load_average_follows_the_kernels_recurrence() {
        let mut c = Cpus::new(1, 0);
        // Three tasks blocked for I/O for a minute: load(1 min) climbs towards 3.
        for _ in 0..3 {
            c.io_wait(0);
        }
        c.integrate(60 * NS_PER_S);
        let e: f64 = (-5.0f64 / 60.0).exp();
        let want = 3.0 * (1.0 - e.powi(12));
        assert!((c.load()[0] - want).abs() < 1e-9, "{} vs {want}", c.load()[0]);
        // A task waiting for the core counts as active too.
        let mut c = Cpus::new(1, 0);
        c.run(0, 20 * NS_PER_S);
        c.run(0, 20 * NS_PER_S); // waits 20 s, runs 20 s
        c.integrate(5 * NS_PER_S);
        assert!((c.load()[0] - 2.0 * (1.0 - e)).abs() < 1e-9);
    }
}
