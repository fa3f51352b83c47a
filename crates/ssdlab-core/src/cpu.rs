//! The host's CPUs as a run uses them, and what `sar` and `/proc/loadavg` report of them.
//!
//! Threads (a job's clones, and the kernel's flusher and journal threads) run bursts of CPU
//! work (a system call's kernel path, a copy, the file system's allocation) on a fixed number
//! of cores, first come first served, and block for I/O in between. Each thread belongs to a
//! core's run queue, as a Linux task does:
//!
//! - a new thread goes to the core with the fewest threads (fork balancing sends a new task
//!   to the idlest CPU: kernel/sched/fair.c, `find_idlest_cpu`);
//! - a burst runs on the thread's own core when that core is free; otherwise on the first free
//!   core after it, in order (`select_idle_sibling`: the previous CPU if idle, else a scan for
//!   an idle one from the next CPU on, `for_each_cpu_wrap`); otherwise, every core taken, on
//!   the core that frees first (the idle balance pulls the waiting task there). The burst's
//!   core becomes the thread's. Which core is free decides only where a burst runs, never
//!   when: a burst starts when a core frees, as on any FIFO multi-server.
//!
//! From when each burst was asked for, started and ended, and when threads blocked for I/O,
//! the model integrates exactly, per core and over all of them:
//!
//! - **busy**: core-time running bursts (sar's %user + %system);
//! - **iowait**: a core's idle time while a thread that blocked for I/O on it still waits:
//!   the kernel counts the threads that went to sleep for I/O on each run queue
//!   (`rq->nr_iowait`, kept until the thread wakes) and counts an idle CPU's time as iowait
//!   while its count is not zero (kernel/sched/cputime.c, `account_idle_time`);
//! - **idle**: the rest, so busy + iowait + idle is each core's whole time;
//! - **load average**: every 5 s (`LOAD_FREQ`) the number of active tasks — running, waiting for
//!   a core, or in uninterruptible sleep (for I/O or anything else) — enters three exponentially decaying averages
//!   over 1, 5 and 15 minutes (kernel/sched/loadavg.c, `calc_load`: `load = load·e + active·(1 −
//!   e)` with `e = exp(−5 s / period)`).
//!
//! Where a thread goes when it wakes depends on the kernel:
//!
//! - **2008's** (2.6.18's `try_to_wake_up`, 2.6.2x's `select_task_rq_fair`) pull it to the
//!   waking core (SD_WAKE_AFFINE) when neither core has a task, or when `100·(waker's tasks
//!   + 1) ≤ 112·own core's tasks` (an imbalance_pct of 125 halved). The waking core's tasks
//!   include the waker when a thread wakes it with a plain `wake_up` (the journal thread
//!   letting its fsyncs go), and not when an interrupt does. A thread woken from an interrupt (its I/O
//!   done, its socket's buffer drained) so moves to the core that took the interrupt whenever
//!   that core is idle: threads gather on the interrupts' cores, and so does their iowait
//!   (the comment on today's `wake_affine_idle` says this is why it changed).
//! - **Today's** keep it on its own core when that core is idle (`wake_affine_idle`, since
//!   2017's commit 806486c377e3, "sched/fair: Do not migrate if the prev_cpu is idle"); the
//!   waker is not asked here.
//!
//! Bursts start in the future when every core is taken, so the active count changes at
//! instants after the present; they are kept as change points and integrated as time passes.

use std::collections::{BTreeMap, VecDeque};

use crate::engine::{Time, NS_PER_S};
pub use crate::report::{CoreShare, CpuInterval};

/// What wakes a sleeping thread, which is all 2008's wake rule asks of the waker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waker {
    /// A timer, or nothing (a sleep that changes its kind): the thread stays where it is.
    Timer,
    /// An interrupt taken by core `.0`: nothing of that core's is running for it.
    Irq(u32),
    /// A thread running on core `.0`, which counts among that core's tasks.
    Thread(u32),
}

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

/// One core: its bursts not yet integrated past, its count of threads asleep for I/O, and
/// its integrals from the start.
#[derive(Clone, Debug, Default)]
struct Core {
    /// When its last burst ends (it is free from then on).
    free_at: Time,
    /// Bursts (start, end) reserved on it that end after the last integration, in order.
    bursts: VecDeque<(Time, Time)>,
    /// Threads asleep for I/O on its run queue (`nr_iowait`; a thread counts once per wait).
    io_waiting: u32,
    /// Threads that belong to it.
    threads: u32,
    busy_area: u128,
    iowait_area: u128,
}

impl Core {
    /// Integrate its busy and iowait time over `[from, to)`; its I/O count is constant there.
    fn integrate(&mut self, from: Time, to: Time) -> (u128, u128) {
        let mut busy = 0u128;
        while let Some(&(s, e)) = self.bursts.front() {
            if s >= to {
                break;
            }
            let (a, b) = (s.max(from), e.min(to));
            busy += b.saturating_sub(a) as u128;
            if e <= to {
                self.bursts.pop_front();
            } else {
                break;
            }
        }
        let iowait = if self.io_waiting > 0 { (to - from) as u128 - busy } else { 0 };
        self.busy_area += busy;
        self.iowait_area += iowait;
        (busy, iowait)
    }
}

/// A thread as the CPUs know it: the core it belongs to, and its waits for I/O in progress
/// (counted on the core `waits_on`, where it went to sleep).
#[derive(Clone, Copy, Debug)]
struct Thread {
    core: u32,
    waits: u32,
    waits_on: u32,
}

/// The host's cores and the threads' use of them.
#[derive(Clone, Debug)]
pub struct Cpus {
    cores: Vec<Core>,
    /// Per thread number (a job's process number, then the kernel's threads), once seen.
    threads: Vec<Option<Thread>>,
    /// Tasks active (running, waiting for a core, blocked for I/O).
    active: Steps,
    /// Wakes pull a thread to the waking core (2008's kernels), or leave it where it is.
    wake_affine: bool,
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
    /// LOAD_FREQ later). `wake_affine`: a wake pulls the thread to the waking core as 2008's
    /// kernels did.
    pub fn new(count: u32, start: Time, wake_affine: bool) -> Cpus {
        let core = Core { free_at: start, ..Core::default() };
        Cpus {
            cores: vec![core; count.max(1) as usize],
            threads: Vec::new(),
            active: Steps { at: start, ..Steps::default() },
            wake_affine,
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
        self.cores.len() as u32
    }

    /// Whether a wake moves a thread to the waking core (2008's kernels): a caller need not
    /// work out the waker otherwise.
    pub fn pulls_wakes(&self) -> bool {
        self.wake_affine
    }

    /// Thread `t`, placed on the core with the fewest threads (the first such) when new.
    fn thread(&mut self, t: u32) -> Thread {
        if let Some(Some(th)) = self.threads.get(t as usize) {
            return *th;
        }
        let core = (0..self.cores.len()).min_by_key(|&c| self.cores[c].threads).unwrap_or(0) as u32;
        self.cores[core as usize].threads += 1;
        let th = Thread { core, waits: 0, waits_on: core };
        if self.threads.len() <= t as usize {
            self.threads.resize(t as usize + 1, None);
        }
        self.threads[t as usize] = Some(th);
        th
    }

    /// The core a burst of thread `t` asked for at `now` runs on: its own if free, else the
    /// first free one after it, else the one that frees first.
    fn place(&self, own: usize, now: Time) -> usize {
        let n = self.cores.len();
        (0..n)
            .map(|k| (own + k) % n)
            .find(|&c| self.cores[c].free_at <= now)
            .unwrap_or_else(|| (0..n).min_by_key(|&c| self.cores[c].free_at).unwrap_or(0))
    }

    /// Thread `thread` asks at `now` for a burst of `ns` of CPU (waiting for a core meanwhile
    /// when all are taken). Returns when the burst ends.
    pub fn run(&mut self, now: Time, thread: u32, ns: Time) -> Time {
        self.integrate(now);
        let th = self.thread(thread);
        let c = self.place(th.core as usize, now);
        let start = self.cores[c].free_at.max(now);
        if ns == 0 {
            return start; // nothing runs: the thread only waited for a core, where it is
        }
        let end = start + ns;
        let core = &mut self.cores[c];
        core.free_at = end;
        core.bursts.push_back((start, end));
        self.active.change(now, 1);
        self.active.change(end, -1);
        if c != th.core as usize {
            self.move_thread(thread, th.core as usize, c);
        }
        end
    }

    /// Thread `thread` blocks for I/O at `now` (until [`Cpus::io_done`]), asleep on its
    /// core's run queue.
    pub fn io_wait(&mut self, now: Time, thread: u32) {
        self.integrate(now);
        let mut th = self.thread(thread);
        if th.waits == 0 {
            th.waits_on = th.core;
        }
        th.waits += 1;
        self.threads[thread as usize] = Some(th);
        self.cores[th.waits_on as usize].io_waiting += 1;
        self.active.change(now, 1);
    }

    /// Thread `thread` sleeps uninterruptibly at `now` for something other than I/O (until
    /// [`Cpus::unblocked`]): a task in D state counts in the load average, but only a sleep
    /// through `io_schedule` counts in its run queue's `nr_iowait` (a wait for a journal
    /// commit is `wait_event`, for one: fs/jbd2/journal.c, `jbd2_log_wait_commit`).
    pub fn blocked(&mut self, now: Time, thread: u32) {
        self.integrate(now);
        self.thread(thread);
        self.active.change(now, 1);
    }

    /// Thread `thread`, asleep since an earlier [`Cpus::blocked`], is woken at `now` by
    /// `waker`.
    pub fn unblocked(&mut self, now: Time, thread: u32, waker: Waker) {
        self.integrate(now);
        self.active.change(now, -1);
        self.woken(now, thread, waker);
    }

    /// Thread `thread` is woken at `now` by `waker`: under 2008's rule it moves to the
    /// waking core when that core is no busier than its own, as SD_WAKE_AFFINE's test has it
    /// (see the module's doc).
    pub fn woken(&mut self, now: Time, thread: u32, waker: Waker) {
        let (w, running) = match waker {
            _ if !self.wake_affine => return,
            Waker::Timer => return,
            Waker::Irq(c) => (c, 0),
            Waker::Thread(c) => (c, 1),
        };
        self.integrate(now);
        let w = w as usize % self.cores.len();
        let own = self.thread(thread).core as usize;
        if w == own {
            return;
        }
        // Tasks running or waiting on each core: its bursts that end after now, and a
        // waking thread.
        let (tl, load) = (self.cores[w].bursts.len() + running, self.cores[own].bursts.len());
        if (tl == 0 && load == 0) || 100 * (tl + 1) <= 112 * load {
            self.move_thread(thread, own, w);
        }
    }

    fn move_thread(&mut self, thread: u32, from: usize, to: usize) {
        self.cores[from].threads -= 1;
        self.cores[to].threads += 1;
        if let Some(Some(t)) = self.threads.get_mut(thread as usize) {
            t.core = to as u32;
        }
    }

    /// Thread `thread`, blocked for I/O at an earlier [`Cpus::io_wait`], is woken at `now` by
    /// `waker` (the interrupt of its I/O, or a timer).
    pub fn io_done(&mut self, now: Time, thread: u32, waker: Waker) {
        self.integrate(now);
        let Some(Some(th)) = self.threads.get_mut(thread as usize) else {
            debug_assert!(false, "thread {thread} woke without having waited");
            return;
        };
        debug_assert!(th.waits > 0, "thread {thread} woke without having waited");
        th.waits = th.waits.saturating_sub(1);
        let core = th.waits_on as usize;
        self.cores[core].io_waiting = self.cores[core].io_waiting.saturating_sub(1);
        self.active.change(now, -1);
        self.woken(now, thread, waker);
    }

    /// Integrate up to `t` (not before the last call's time), updating the load average at
    /// every LOAD_FREQ boundary passed.
    pub fn integrate(&mut self, t: Time) {
        if t <= self.integrated_to {
            return;
        }
        // Busy and iowait: each core's I/O count is constant until the next call.
        let from = self.integrated_to;
        for core in &mut self.cores {
            let (busy, iowait) = core.integrate(from, t);
            self.busy_area += busy;
            self.iowait_area += iowait;
        }
        // The active count and the load average, change point by change point.
        let mut at = from;
        while at < t {
            self.active.advance(at);
            let to = self.active.next_change(t).unwrap_or(t).min(self.next_load);
            self.active_area += self.active.now.max(0) as u128 * (to - at) as u128;
            at = to;
            if to == self.next_load {
                // calc_load samples the tasks active at the tick.
                self.active.advance(to);
                let active = self.active.now.max(0) as f64;
                for (l, period) in self.load.iter_mut().zip(LOAD_PERIODS_S) {
                    let e = (-(LOAD_FREQ_NS as f64 / NS_PER_S as f64) / period).exp();
                    *l = *l * e + active * (1.0 - e);
                }
                self.next_load += LOAD_FREQ_NS;
            }
        }
        self.integrated_to = t;
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

    /// Each core's shares of its time from the start up to `now`, as `sar -P ALL` averages them.
    pub fn per_core(&mut self, now: Time) -> Vec<CoreShare> {
        self.integrate(now);
        let span = now.saturating_sub(self.start) as f64;
        let share = |x: u128| if span > 0.0 { x as f64 / span } else { 0.0 };
        self.cores
            .iter()
            .map(|c| {
                let (busy, iowait) = (share(c.busy_area), share(c.iowait_area));
                CoreShare { busy, iowait, idle: (1.0 - busy - iowait).max(0.0) }
            })
            .collect()
    }

    fn since(&self, (start, busy0, iowait0, active0): (Time, u128, u128, u128), now: Time) -> CpuInterval {
        let span = now.saturating_sub(start) as f64;
        let total = span * self.cores.len() as f64;
        let share = |x: u128| if total > 0.0 { x as f64 / total } else { 0.0 };
        let (busy, iowait) = (share(self.busy_area - busy0), share(self.iowait_area - iowait0));
        let active = if span > 0.0 { (self.active_area - active0) as f64 / span } else { 0.0 };
        CpuInterval { start_ns: start, end_ns: now, busy, iowait, idle: (1.0 - busy - iowait).max(0.0), load: self.load, active }
    }

    /// Core-ns busy and in iowait from the start up to the last integration.
    pub fn totals(&self) -> (u128, u128) {
        (self.busy_area, self.iowait_area)
    }

    /// Per core, core-ns busy and in iowait from the start up to the last integration.
    pub fn core_totals(&self) -> Vec<(u128, u128)> {
        self.cores.iter().map(|c| (c.busy_area, c.iowait_area)).collect()
    }

    /// The core thread `thread` belongs to (None: it has not been seen).
    pub fn core_of(&self, thread: u32) -> Option<u32> {
        self.threads.get(thread as usize).copied().flatten().map(|t| t.core)
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
        let mut c = Cpus::new(2, 0, false);
        assert_eq!(c.run(0, 0, 10), 10);
        assert_eq!(c.run(0, 1, 10), 10);
        assert_eq!(c.run(0, 2, 10), 20, "the third waits for a core");
        let i = c.interval(40);
        assert!((i.busy - 30.0 / 80.0).abs() < 1e-12, "{i:?}");
        assert_eq!(i.iowait, 0.0);
    }

    #[test]
    fn iowait_is_the_idle_time_of_cores_where_a_thread_sleeps_for_io() {
        let mut c = Cpus::new(4, 0, false);
        c.io_wait(0, 0); // thread 0 (core 0) waits for I/O the whole time
        c.run(0, 1, 100); // thread 1 (core 1) keeps its core busy for the first half
        let i = c.interval(200);
        // Core 0 idle with a sleeper: 200 of iowait; cores 1-3 have none.
        assert!((i.busy - 100.0 / 800.0).abs() < 1e-12);
        assert!((i.iowait - 200.0 / 800.0).abs() < 1e-12, "{i:?}");
        assert!((i.busy + i.iowait + i.idle - 1.0).abs() < 1e-12);
        c.io_done(200, 0, Waker::Timer);
        assert_eq!(c.interval(300).iowait, 0.0);
    }

    #[test]
    fn sleepers_on_one_core_make_one_core_of_iowait() {
        // Three threads on two cores: fork balancing puts 0 and 2 on core 0, 1 on core 1.
        let mut c = Cpus::new(2, 0, false);
        for t in 0..3 {
            c.run(0, t, 0);
        }
        assert_eq!((c.core_of(0), c.core_of(1), c.core_of(2)), (Some(0), Some(1), Some(0)));
        c.io_wait(0, 0);
        c.io_wait(0, 2);
        let i = c.interval(100);
        // Two threads asleep for I/O, both on core 0: core 1 is plainly idle (the old
        // min(idle cores, sleepers) rule counted both cores as iowait).
        assert!((i.iowait - 0.5).abs() < 1e-12, "{i:?}");
        assert!((i.idle - 0.5).abs() < 1e-12, "{i:?}");
        let cores = c.per_core(100);
        assert_eq!((cores[0].iowait, cores[1].iowait, cores[1].idle), (1.0, 0.0, 1.0));
    }

    #[test]
    fn a_burst_runs_on_its_threads_core_unless_that_core_is_taken() {
        let mut c = Cpus::new(3, 0, false);
        assert_eq!(c.run(0, 0, 50), 50); // thread 0: core 0
        assert_eq!(c.run(0, 1, 10), 10); // thread 1: core 1
        assert_eq!(c.run(20, 1, 10), 30, "its own core is free again");
        assert_eq!(c.core_of(1), Some(1));
        // Thread 0's core is busy until 50: its next burst runs on the first free core
        // after core 0, and the thread moves there.
        assert_eq!(c.run(30, 0, 10), 40);
        assert_eq!(c.core_of(0), Some(1));
        // Every core taken (0 till 50, 1 till 40, then 2 till 130): the burst waits for
        // the core that frees first, core 1.
        assert_eq!(c.run(30, 5, 100), 130);
        assert_eq!(c.run(31, 6, 1), 41);
        assert_eq!(c.core_of(6), Some(1));
        // A thread asleep for I/O makes its own core's idle time iowait, and no other's.
        c.io_wait(200, 1);
        let cores = c.per_core(300);
        assert!((cores[1].iowait - 100.0 / 300.0).abs() < 1e-12, "{cores:?}");
        assert_eq!((cores[0].iowait, cores[2].iowait), (0.0, 0.0));
    }

    #[test]
    fn a_2008_kernel_pulls_a_woken_thread_to_the_idle_core_of_its_interrupt() {
        for affine in [true, false] {
            let mut c = Cpus::new(4, 0, affine);
            c.run(0, 0, 0); // thread 0 on core 0
            c.run(0, 1, 0); // thread 1 on core 1
            c.io_wait(0, 1);
            c.io_done(10, 1, Waker::Irq(3)); // its I/O's interrupt is taken by idle core 3
            assert_eq!(c.core_of(1), Some(if affine { 3 } else { 1 }));
            // Its next sleep for I/O is counted there: core 3's idle time is iowait.
            c.io_wait(10, 1);
            let cores = c.per_core(110);
            let on = if affine { 3 } else { 1 };
            // (Left where it was, it has slept there all along.)
            let want = if affine { 100.0 / 110.0 } else { 1.0 };
            assert!((cores[on].iowait - want).abs() < 1e-12, "{cores:?}");
            c.io_done(110, 1, Waker::Timer); // a timer's wake leaves it where it is
            assert_eq!(c.core_of(1), Some(on as u32));
            // The interrupt's core busy (running thread 2's burst) and its own idle: it stays.
            c.run(110, 2, 100);
            let busy = c.core_of(2).unwrap();
            assert_ne!(busy, on as u32);
            c.io_wait(110, 1);
            c.io_done(150, 1, Waker::Irq(busy));
            assert_eq!(c.core_of(1), Some(on as u32));
        }
    }

    #[test]
    fn a_2008_kernel_leaves_a_thread_woken_by_a_running_thread_on_its_own_idle_core() {
        // The journal thread, running on core 2, lets an fsync go that slept on idle core 1:
        // the waking core has a task (the waker), the thread's own none, so it stays. An
        // interrupt taken by core 2 pulls it.
        let mut c = Cpus::new(4, 0, true);
        c.run(0, 0, 0);
        c.run(0, 1, 0);
        c.blocked(0, 1);
        c.unblocked(10, 1, Waker::Thread(2));
        assert_eq!(c.core_of(1), Some(1));
        c.blocked(10, 1);
        c.unblocked(20, 1, Waker::Irq(2));
        assert_eq!(c.core_of(1), Some(2));
    }

    #[test]
    fn active_is_the_mean_count_of_running_waiting_and_blocked_tasks() {
        let mut c = Cpus::new(1, 0, false);
        c.io_wait(0, 0); // blocked 0..300
        c.run(0, 1, 100); // runs 0..100
        c.run(0, 2, 100); // waits for the core 0..100, runs 100..200
        let i = c.interval(200);
        // 0..100: 3 active; 100..200: 2.
        assert!((i.active - 2.5).abs() < 1e-12, "{i:?}");
        c.io_done(300, 0, Waker::Timer);
        let i = c.interval(400);
        assert!((i.active - 0.5).abs() < 1e-12, "{i:?}");
        assert!((c.whole(400).active - 1.5).abs() < 1e-12);
    }

    #[test]
    fn the_load_average_follows_the_kernels_recurrence() {
        let mut c = Cpus::new(1, 0, false);
        // Three tasks blocked for I/O for a minute: load(1 min) climbs towards 3.
        for t in 0..3 {
            c.io_wait(0, t);
        }
        c.integrate(60 * NS_PER_S);
        let e: f64 = (-5.0f64 / 60.0).exp();
        let want = 3.0 * (1.0 - e.powi(12));
        assert!((c.load()[0] - want).abs() < 1e-9, "{} vs {want}", c.load()[0]);
        // A task waiting for the core counts as active too.
        let mut c = Cpus::new(1, 0, false);
        c.run(0, 0, 20 * NS_PER_S);
        c.run(0, 1, 20 * NS_PER_S); // waits 20 s, runs 20 s
        c.integrate(5 * NS_PER_S);
        assert!((c.load()[0] - 2.0 * (1.0 - e)).abs() < 1e-9);
    }
}
