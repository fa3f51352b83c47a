//! The host: fio-like jobs that generate I/O on CPU threads, and a Linux-like block layer
//! (software queue, device queue depth, /proc/diskstats accounting) in front of one device.
//!
//! Host software time is modelled explicitly: each submission occupies the job's thread for
//! a sampled per-I/O overhead (syscall, block layer, driver, completion handling). At queue
//! depth 1 that gap between a completion and the next submission is what keeps iostat's
//! %util below 100 %.

mod job;

use std::collections::VecDeque;

use rand_distr::{Distribution as _, Gamma};
use serde::{Deserialize, Serialize};

use crate::device::{BlockDevice, DeviceCtx, DeviceRequest, InternalReport, Op, Tag};
use crate::engine::{Scheduler, Time};
use crate::metrics::diskstats::DiskCounters;
use crate::metrics::{DiskStats, JobStats};
use crate::workload::JobSpec;
use job::{JobRun, JobState};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    pub name: String,
    /// Mean CPU time per I/O on the submitting thread, ns.
    pub io_overhead_ns: u64,
    /// Coefficient of variation of that time (0 = constant; gamma-distributed otherwise).
    pub io_overhead_cv: f64,
    /// Kernel tick rate; iostat's %util has this resolution.
    pub hz: u32,
}

impl HostConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.io_overhead_cv >= 0.0 && self.io_overhead_cv.is_finite()) {
            return Err(format!("host.io_overhead_cv must be >= 0, got {}", self.io_overhead_cv));
        }
        if self.hz == 0 {
            return Err("host.hz must be positive".into());
        }
        Ok(())
    }
}

/// Events the host handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostEvent {
    /// A job's dependencies are done and its start delay has passed.
    JobStart(u32),
    /// Re-check a job that was waiting (rate limit, think time, deadline).
    JobWake(u32),
    /// A submitted request reaches the block layer.
    Arrive(Tag),
    /// Take a time-series sample.
    Sample,
}

/// The engine's event type: the host's or the device's.
#[derive(Clone, Copy, Debug)]
pub enum Event<DE> {
    Host(HostEvent),
    Device(DE),
}

/// Adapter through which a device schedules its events and reports completions.
pub struct DevCtx<'a, DE> {
    pub sched: &'a mut Scheduler<Event<DE>>,
    pub done: &'a mut Vec<Tag>,
}

impl<DE> DeviceCtx<DE> for DevCtx<'_, DE> {
    #[inline]
    fn now(&self) -> Time {
        self.sched.now()
    }
    #[inline]
    fn schedule(&mut self, at: Time, event: DE) {
        self.sched.schedule(at, Event::Device(event));
    }
    #[inline]
    fn complete(&mut self, tag: Tag) {
        self.done.push(tag);
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct HostReq {
    job: u32,
    op: Option<Op>,
    offset: u64,
    len: u64,
    issued_at: Time,
    arrived_at: Time,
}

/// One time-series sample: cumulative counters at `t_ns`.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub t_ns: Time,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub disk: DiskCounters,
    pub internal: InternalReport,
}

pub struct Host {
    cfg: HostConfig,
    overhead: Option<Gamma<f64>>,
    jobs: Vec<JobRun>,
    dependents: Vec<Vec<u32>>,
    reqs: Vec<HostReq>,
    free_tags: Vec<Tag>,
    queue: VecDeque<Tag>,
    device_inflight: u32,
    disk: DiskStats,
    jobs_done: usize,
    done_buf: Vec<Tag>,
    interval: Option<Time>,
    samples: Vec<Sample>,
    /// Completed bytes and I/Os per direction across all jobs (for samples).
    totals: [(u64, u64); 2],
}

impl Host {
    pub fn new(cfg: HostConfig, specs: Vec<JobSpec>, seed: u64, interval: Option<Time>) -> Result<Host, String> {
        cfg.validate()?;
        let overhead = if cfg.io_overhead_cv > 0.0 && cfg.io_overhead_ns > 0 {
            let shape = 1.0 / (cfg.io_overhead_cv * cfg.io_overhead_cv);
            let scale = cfg.io_overhead_ns as f64 / shape;
            Some(Gamma::new(shape, scale).map_err(|e| format!("host overhead: {e}"))?)
        } else {
            None
        };
        let mut dependents = vec![Vec::new(); specs.len()];
        for (i, s) in specs.iter().enumerate() {
            for &d in &s.start_after {
                dependents[d as usize].push(i as u32);
            }
        }
        let jobs = specs
            .into_iter()
            .enumerate()
            .map(|(i, s)| JobRun::new(s, seed, i as u64))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Host {
            disk: DiskStats::new(cfg.hz),
            cfg,
            overhead,
            jobs,
            dependents,
            reqs: Vec::new(),
            free_tags: Vec::new(),
            queue: VecDeque::new(),
            device_inflight: 0,
            jobs_done: 0,
            done_buf: Vec::new(),
            interval,
            samples: Vec::new(),
            totals: [(0, 0); 2],
        })
    }

    /// Schedule the jobs that wait for nobody, and the first sample, from the clock's start.
    pub fn start<DE>(&mut self, sched: &mut Scheduler<Event<DE>>) {
        let origin = sched.now();
        for (i, j) in self.jobs.iter().enumerate() {
            if j.deps_left == 0 {
                sched.schedule(origin + j.spec.start_delay_ns, Event::Host(HostEvent::JobStart(i as u32)));
            }
        }
        if self.interval.is_some() {
            sched.schedule(origin, Event::Host(HostEvent::Sample));
        }
    }

    /// Which jobs have not finished, and their requests in flight (for a stalled run's error).
    pub fn unfinished(&self) -> String {
        let names: Vec<&str> =
            self.jobs.iter().filter(|j| j.state != JobState::Done).map(|j| j.spec.name.as_str()).collect();
        format!("jobs {names:?} are unfinished with {} requests in the device", self.device_inflight)
    }

    pub fn finished(&self) -> bool {
        self.jobs_done == self.jobs.len()
    }

    pub fn handle<D: BlockDevice>(&mut self, ev: HostEvent, dev: &mut D, sched: &mut Scheduler<Event<D::Event>>) {
        match ev {
            HostEvent::JobStart(j) => {
                self.jobs[j as usize].begin(sched.now());
                if let Some(deadline) = self.jobs[j as usize].deadline {
                    sched.schedule(deadline, Event::Host(HostEvent::JobWake(j)));
                }
                self.pump(j, dev, sched);
            }
            HostEvent::JobWake(j) => {
                let job = &mut self.jobs[j as usize];
                if job.wake_at.is_some_and(|t| t <= sched.now()) {
                    job.wake_at = None;
                }
                self.pump(j, dev, sched);
            }
            HostEvent::Arrive(tag) => {
                let now = sched.now();
                self.disk.start(now);
                debug_assert_eq!(self.reqs[tag as usize].arrived_at, now);
                self.queue.push_back(tag);
                self.feed_device(dev, sched);
            }
            HostEvent::Sample => {
                let now = sched.now();
                self.samples.push(Sample {
                    t_ns: now,
                    read_bytes: self.totals[0].0,
                    write_bytes: self.totals[1].0,
                    read_ios: self.totals[0].1,
                    write_ios: self.totals[1].1,
                    disk: self.disk.snapshot(now),
                    internal: dev.internal_report(now),
                });
                if !self.finished() {
                    if let Some(iv) = self.interval {
                        sched.schedule(now + iv, Event::Host(HostEvent::Sample));
                    }
                }
            }
        }
    }

    /// Completions a device reported; handled after the device event that produced them.
    pub fn device_event<D: BlockDevice>(&mut self, ev: D::Event, dev: &mut D, sched: &mut Scheduler<Event<D::Event>>) {
        let mut done = std::mem::take(&mut self.done_buf);
        dev.handle(ev, &mut DevCtx { sched, done: &mut done });
        for tag in done.drain(..) {
            self.complete(tag, dev, sched);
        }
        self.done_buf = done;
    }

    /// Move requests from the software queue into the device while it has free slots.
    fn feed_device<D: BlockDevice>(&mut self, dev: &mut D, sched: &mut Scheduler<Event<D::Event>>) {
        let depth = dev.queue_depth();
        let mut done = std::mem::take(&mut self.done_buf);
        while self.device_inflight < depth {
            let Some(tag) = self.queue.pop_front() else { break };
            let r = self.reqs[tag as usize];
            self.device_inflight += 1;
            let req = DeviceRequest { tag, op: r.op.expect("queued request"), offset: r.offset, len: r.len };
            dev.submit(req, &mut DevCtx { sched: &mut *sched, done: &mut done });
        }
        for tag in done.drain(..) {
            self.complete(tag, dev, sched);
        }
        self.done_buf = done;
    }

    fn complete<D: BlockDevice>(&mut self, tag: Tag, dev: &mut D, sched: &mut Scheduler<Event<D::Event>>) {
        let now = sched.now();
        let r = self.reqs[tag as usize];
        let op = r.op.expect("completed request");
        self.reqs[tag as usize].op = None;
        self.free_tags.push(tag);
        self.device_inflight -= 1;
        self.disk.done(now, op, r.len, now - r.arrived_at);
        if op.index() < 2 {
            self.totals[op.index()].0 += r.len;
            self.totals[op.index()].1 += 1;
        }
        let j = r.job;
        let job = &mut self.jobs[j as usize];
        job.on_complete(now, op, r.len, r.arrived_at - r.issued_at, now - r.arrived_at);
        if let Some(at) = job.take_wake_request() {
            sched.schedule(at, Event::Host(HostEvent::JobWake(j)));
        }
        self.feed_device(dev, sched);
        self.pump(j, dev, sched);
    }

    /// Let job `j` issue as much as its limits allow right now.
    fn pump<D: BlockDevice>(&mut self, j: u32, dev: &mut D, sched: &mut Scheduler<Event<D::Event>>) {
        let now = sched.now();
        let mut entered = false;
        loop {
            let job = &mut self.jobs[j as usize];
            match job.next_action(now) {
                job::Action::Issue(io) => {
                    let tag = match self.free_tags.pop() {
                        Some(t) => t,
                        None => {
                            self.reqs.push(HostReq::default());
                            (self.reqs.len() - 1) as Tag
                        }
                    };
                    let overhead = match &self.overhead {
                        Some(g) => g.sample(job.rng()) as Time,
                        None => self.cfg.io_overhead_ns,
                    };
                    let arrive = job.thread_submit(now, overhead);
                    self.reqs[tag as usize] = HostReq {
                        job: j,
                        op: Some(io.op),
                        offset: io.offset,
                        len: io.len,
                        issued_at: now,
                        arrived_at: arrive,
                    };
                    if arrive == now {
                        // No host time to wait for: enter the block layer without an event.
                        self.disk.start(now);
                        self.queue.push_back(tag);
                        entered = true;
                    } else {
                        sched.schedule(arrive, Event::Host(HostEvent::Arrive(tag)));
                    }
                }
                job::Action::WakeAt(at) => {
                    sched.schedule(at, Event::Host(HostEvent::JobWake(j)));
                    break;
                }
                job::Action::Wait => break,
                job::Action::Finished => {
                    self.finish_job(j, sched);
                    break;
                }
            }
        }
        if entered {
            self.feed_device(dev, sched);
        }
    }

    fn finish_job<DE>(&mut self, j: u32, sched: &mut Scheduler<Event<DE>>) {
        let now = sched.now();
        self.jobs[j as usize].finish(now);
        self.jobs_done += 1;
        for k in std::mem::take(&mut self.dependents[j as usize]) {
            let dep = &mut self.jobs[k as usize];
            dep.deps_left -= 1;
            if dep.deps_left == 0 {
                sched.schedule(now + dep.spec.start_delay_ns, Event::Host(HostEvent::JobStart(k)));
            }
        }
    }

    /// Requests issued but not yet completed, across all jobs (for conservation checks).
    pub fn outstanding(&self) -> u64 {
        self.jobs.iter().map(|j| j.inflight).sum()
    }

    pub fn disk_counters(&self, now: Time) -> DiskCounters {
        self.disk.snapshot(now)
    }

    pub fn into_results(self) -> (Vec<JobStats>, Vec<Sample>) {
        let stats = self
            .jobs
            .into_iter()
            .map(|mut j| {
                j.stats.finish();
                debug_assert!(j.state == JobState::Done);
                j.stats
            })
            .collect();
        (stats, self.samples)
    }
}

impl HostConfig {
    /// A host with no software time, for tests that look only at the device.
    pub fn ideal() -> HostConfig {
        HostConfig { name: "ideal".into(), io_overhead_ns: 0, io_overhead_cv: 0.0, hz: 1000 }
    }
}
